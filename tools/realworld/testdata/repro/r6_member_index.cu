// R6 (PORT018, false refusal): label[edges[i].dst] = 1 writes label, not a
// member of edges.
#include <cuda_runtime.h>

struct Edge {
  unsigned src, dst;
};

__global__ void mark(const Edge* edges, unsigned* label, unsigned m)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m && label[edges[i].src] == 1) label[edges[i].dst] = 1;
}

int main()
{
  const unsigned n = 1 << 16, m = 1 << 20;
  Edge* edges;
  unsigned* label;
  cudaMalloc(&edges, sizeof(Edge) * m);
  cudaMalloc(&label, sizeof(unsigned) * n);
  cudaMemset(label, 0, sizeof(unsigned) * n);
  mark<<<m / 256, 256>>>(edges, label, m);
  cudaFree(edges);
  cudaFree(label);
  return 0;
}
