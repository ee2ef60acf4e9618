// R8 (PORT032 "not a statement of its own"): the status of each runtime call
// is kept in a variable (err = cudaMalloc(...)), as many samples do.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void lookup(const float* table, const int* keys, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[keys[i]];
}

int main()
{
  const int n = 1 << 20;
  float *table = NULL, *out = NULL;
  int* keys = NULL;
  cudaError_t err = cudaMalloc((void**)&table, sizeof(float) * n);
  if (err != cudaSuccess) return 1;
  err = cudaMalloc((void**)&keys, sizeof(int) * n);
  if (err != cudaSuccess) return 1;
  err = cudaMalloc((void**)&out, sizeof(float) * n);
  if (err != cudaSuccess) return 1;
  lookup<<<n / 256, 256>>>(table, keys, out, n);
  err = cudaGetLastError();
  printf("%s\n", cudaGetErrorString(err));
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  return 0;
}
