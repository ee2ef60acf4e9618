// S2: the last #include is inside #ifdef PROFILE. The runtime include must
// not go there (without -DPROFILE the output would not compile).
#include <cstdio>
#include <cuda_runtime.h>
#ifdef PROFILE
#include <ctime>
#endif

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
  cudaMemset(table, 0, sizeof(float) * n);
  cudaMemset(keys, 0, sizeof(int) * n);
  lookup<<<n / 256, 256>>>(table, keys, out, n);
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  return 0;
}
