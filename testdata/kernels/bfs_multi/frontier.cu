// frontier.cu: the kernel of bfs_multi (prototype in frontier.cuh; launched
// from main.cu). No host code here.
#include "frontier.cuh"

__global__ void bfs_frontier(const EdgeT* rowptr, const VertexT* colidx,
                             uint32_t* depth, VertexT n, uint32_t cur,
                             int* changed)
{
  const VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || depth[v] != cur) return;
  for (EdgeT e = rowptr[v]; e < rowptr[v + 1]; e++) {
    const VertexT u = colidx[e];
    if (depth[u] == BFS_UNVISITED) {
      depth[u] = cur + 1;
      *changed = 1;
    }
  }
}
