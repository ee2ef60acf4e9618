// graph_macros.h: launch and warp constants of bfs_modes, kept in a local
// header the way graph benchmarks keep theirs (the kernel's warp id is
// `tid >> WARP_SHIFT`, its lane `tid & WARP_MASK`).
#ifndef BFS_MODES_GRAPH_MACROS_H
#define BFS_MODES_GRAPH_MACROS_H

#define WARP_SHIFT 5
#define WARP_SIZE (1 << WARP_SHIFT)
#define WARP_MASK (WARP_SIZE - 1)

// Threads per block, and the widest grid row: launches wider than
// GRID_ROW blocks wrap into blockIdx.y.
#define BLOCK_SIZE 256
#define GRID_ROW 4096

#define UNVISITED 0xffffffffu

// Where the edge array lives (-m MODE).
#define MEM_DEVICE 0   // cudaMalloc + cudaMemcpy
#define MEM_MANAGED 1  // cudaMallocManaged, filled on the host
#define MEM_HOST 2     // cudaHostAlloc (mapped), filled on the host, read over PCIe
#define MEM_HOST_VIEW 3 // a mapped host buffer filled by a host loop, passed through
                        // its device pointer (cudaHostGetDevicePointer)

#endif
