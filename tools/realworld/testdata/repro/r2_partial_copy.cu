// R2 (PORT032): one-element copies into a device array. `&label[src]` is
// refused; `label + src` and `cudaMemset(label + off, ...)` are rewritten by
// copy-out / modify / re-create today.
#include <cuda_runtime.h>

__global__ void step(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && label[v] == 0)
    for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) label[col[e]] = 0;
}

int main()
{
  const unsigned n = 1 << 16, m = 1 << 19, src = 5, zero = 0;
  unsigned *rowptr, *col, *label;
  cudaMalloc(&rowptr, sizeof(unsigned) * (n + 1));
  cudaMalloc(&col, sizeof(unsigned) * m);
  cudaMalloc(&label, sizeof(unsigned) * n);
  cudaMemset(label, 0xff, sizeof(unsigned) * n);
  cudaMemcpy(&label[src], &zero, sizeof(unsigned), cudaMemcpyHostToDevice);
  step<<<n / 256, 256>>>(rowptr, col, label, n);
  cudaFree(rowptr);
  cudaFree(col);
  cudaFree(label);
  return 0;
}
