// S7: the host file; includes the kernel file.
#include <cuda_runtime.h>
#include "kernel.cu"

int main()
{
  const int n = 1000, m = 8000;
  int *rowptr, *col, *level;
  cudaMalloc(&rowptr, sizeof(int) * (n + 1));
  cudaMalloc(&col, sizeof(int) * m);
  cudaMalloc(&level, sizeof(int) * n);
  cudaMemset(rowptr, 0, sizeof(int) * (n + 1));
  cudaMemset(level, 0xff, sizeof(int) * n);
  expand<<<(n + 255) / 256, 256>>>(rowptr, col, level, n, 0);
  cudaFree(rowptr);
  cudaFree(col);
  cudaFree(level);
  return 0;
}
