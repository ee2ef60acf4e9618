// R1 (PORT032 "allocated twice"): the edge array is allocated in each branch
// of a switch over the memory mode; the two host-visible modes are filled on
// the host. --auto chooses `edges` and refuses it.
#include <cstring>
#include <cuda_runtime.h>

__global__ void degree_sum(const unsigned long long* rowptr, const unsigned* edges, unsigned* out, unsigned n)
{
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  unsigned s = 0;
  for (unsigned long long e = rowptr[v]; e < rowptr[v + 1]; e++) s += edges[e];
  out[v] = s;
}

int run(int mode, const unsigned long long* h_rowptr, const unsigned* h_edges, unsigned n, unsigned long long m)
{
  unsigned long long* rowptr;
  unsigned *edges, *out;
  cudaMalloc(&rowptr, sizeof(unsigned long long) * (n + 1));
  cudaMemcpy(rowptr, h_rowptr, sizeof(unsigned long long) * (n + 1), cudaMemcpyHostToDevice);
  switch (mode) {
  case 0:
    cudaMalloc(&edges, sizeof(unsigned) * m);
    cudaMemcpy(edges, h_edges, sizeof(unsigned) * m, cudaMemcpyHostToDevice);
    break;
  case 1:
    cudaMallocManaged(&edges, sizeof(unsigned) * m);
    memcpy(edges, h_edges, sizeof(unsigned) * m);
    break;
  default:
    cudaHostAlloc(&edges, sizeof(unsigned) * m, cudaHostAllocMapped);
    memcpy(edges, h_edges, sizeof(unsigned) * m);
    break;
  }
  cudaMalloc(&out, sizeof(unsigned) * n);
  degree_sum<<<(n + 255) / 256, 256>>>(rowptr, edges, out, n);
  if (mode == 2) cudaFreeHost(edges);
  else cudaFree(edges);
  cudaFree(rowptr);
  cudaFree(out);
  return 0;
}
