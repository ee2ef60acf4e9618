// bfs.cu: level-synchronous BFS, one thread per vertex. The kernels and
// the host code that allocates, fills and launches them are in this file,
// so that `bamgen port` sees every use of the arrays it ports.
#include "graph.h"

__global__ void bfs_init(unsigned* level, VertexT n, VertexT source)
{
  VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) level[v] = (v == source) ? 0u : UNVISITED;
}

__global__ void bfs_expand(const EdgeT* __restrict__ rowptr,
                           const VertexT* __restrict__ colidx,
                           unsigned* level, VertexT n, unsigned cur,
                           int* changed)
{
  VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  for (EdgeT e = rowptr[v]; e < rowptr[v + 1]; e++) {
    VertexT u = colidx[e];
    if (level[u] == UNVISITED) {
      level[u] = cur + 1;
      *changed = 1;
    }
  }
}

std::vector<unsigned> gpu_bfs(const Csr& g, VertexT source)
{
  const VertexT n = g.vertices();
  const EdgeT m = g.rowptr[n];
  EdgeT* rowptr;
  VertexT* colidx;
  unsigned* level;
  int* d_changed;
  CUDA_CHECK(cudaMalloc(&rowptr, sizeof(EdgeT) * (n + 1)));
  CUDA_CHECK(cudaMalloc(&colidx, sizeof(VertexT) * m));
  CUDA_CHECK(cudaMalloc(&level, sizeof(unsigned) * n));
  CUDA_CHECK(cudaMalloc(&d_changed, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(rowptr, g.rowptr.data(), sizeof(EdgeT) * (n + 1), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(colidx, g.col.data(), sizeof(VertexT) * m, cudaMemcpyHostToDevice));

  const unsigned blocks = (n + BLOCK - 1) / BLOCK;
  bfs_init<<<blocks, BLOCK>>>(level, n, source);
  CUDA_CHECK(cudaGetLastError());
  unsigned cur = 0;
  int changed = 1;
  while (changed) {
    changed = 0;
    CUDA_CHECK(cudaMemcpy(d_changed, &changed, sizeof(int), cudaMemcpyHostToDevice));
    bfs_expand<<<blocks, BLOCK>>>(rowptr, colidx, level, n, cur, d_changed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
    cur++;
  }

  std::vector<unsigned> out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), level, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(rowptr));
  CUDA_CHECK(cudaFree(colidx));
  CUDA_CHECK(cudaFree(level));
  CUDA_CHECK(cudaFree(d_changed));
  return out;
}
