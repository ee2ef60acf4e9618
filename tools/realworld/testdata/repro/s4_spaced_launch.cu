// S4: a launch spelled `<< < ... >> >` (nvcc accepts it). The parser does not
// see the launch, the kernel parameter is ported, the argument stays raw.
#include <cuda_runtime.h>

__global__ void lookup(const float* table, const int* keys, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[keys[i]];
}

int main()
{
  const int n = 1 << 20;
  float *table, *out;
  int* keys;
  cudaMalloc(&table, sizeof(float) * n);
  cudaMalloc(&keys, sizeof(int) * n);
  cudaMalloc(&out, sizeof(float) * n);
  lookup << < n / 256, 256 >> > (table, keys, out, n);
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  return 0;
}
