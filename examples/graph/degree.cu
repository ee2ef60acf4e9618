// degree.cu: in-degree of every vertex, one thread per edge.
#include "graph.h"

__global__ void count_in_degrees(const VertexT* colidx, EdgeT m, unsigned* degree)
{
  EdgeT e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < m) atomicAdd(&degree[colidx[e]], 1u);
}

std::vector<unsigned> gpu_in_degrees(const Csr& g)
{
  const VertexT n = g.vertices();
  const EdgeT m = g.rowptr[n];
  VertexT* colidx;
  unsigned* degree;
  CUDA_CHECK(cudaMalloc(&colidx, sizeof(VertexT) * m));
  CUDA_CHECK(cudaMalloc(&degree, sizeof(unsigned) * n));
  CUDA_CHECK(cudaMemcpy(colidx, g.col.data(), sizeof(VertexT) * m, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(degree, 0, sizeof(unsigned) * n));
  count_in_degrees<<<(m + BLOCK - 1) / BLOCK, BLOCK>>>(colidx, m, degree);
  CUDA_CHECK(cudaGetLastError());
  std::vector<unsigned> out(n);
  CUDA_CHECK(cudaMemcpy(out.data(), degree, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(colidx));
  CUDA_CHECK(cudaFree(degree));
  return out;
}
