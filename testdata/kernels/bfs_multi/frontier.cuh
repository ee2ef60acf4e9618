// frontier.cuh: what main.cu needs to launch the BFS kernel of frontier.cu.
#ifndef BFS_MULTI_FRONTIER_CUH
#define BFS_MULTI_FRONTIER_CUH

#include <cstdint>

typedef uint64_t EdgeT;
typedef uint32_t VertexT;

#define BFS_UNVISITED 0xffffffffu

// One thread per vertex: every vertex at depth `cur` labels its unvisited
// neighbours cur + 1 and sets *changed.
__global__ void bfs_frontier(const EdgeT* rowptr, const VertexT* colidx,
                             uint32_t* depth, VertexT n, uint32_t cur,
                             int* changed);

#endif
