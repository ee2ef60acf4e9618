// R3 (PORT032, false refusal): the allocation's size is written
// `n * sizeof *out`; the allocation itself is then "a use bamgen does not
// rewrite".
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
  cudaMalloc(&table, n * sizeof *table);
  cudaMalloc(&keys, n * sizeof *keys);
  cudaMalloc(&out, n * sizeof *out);
  lookup<<<n / 256, 256>>>(table, keys, out, n);
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  return 0;
}
