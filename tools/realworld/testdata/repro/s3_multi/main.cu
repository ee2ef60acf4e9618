// S3: allocation and launch of the kernel in relax.cu.
#include <cuda_runtime.h>
#include "relax.cuh"

int main()
{
  const unsigned n = 1000, m = 8000;
  unsigned *rowptr, *col;
  int* dist;
  cudaMalloc(&rowptr, sizeof(unsigned) * (n + 1));
  cudaMalloc(&col, sizeof(unsigned) * m);
  cudaMalloc(&dist, sizeof(int) * n);
  cudaMemset(rowptr, 0, sizeof(unsigned) * (n + 1));
  cudaMemset(dist, 0x7f, sizeof(int) * n);
  relax<<<(n + 255) / 256, 256>>>(rowptr, col, dist, n);
  cudaFree(rowptr);
  cudaFree(col);
  cudaFree(dist);
  return 0;
}
