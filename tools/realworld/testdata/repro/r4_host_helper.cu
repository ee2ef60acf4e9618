// R4 (PORT030 / PORT032): device buffers handed to host functions: the
// kernel is launched in a helper whose parameters are the buffers (the
// allocation is in the caller), and a checker takes a buffer too.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

__global__ void lookup(const float* table, const int* keys, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[keys[i]];
}

static void run_lookup(const float* table, const int* keys, float* out, int n)
{
  lookup<<<(n + 255) / 256, 256>>>(table, keys, out, n);
}

static bool all_zero(const float* d_out, int n)
{
  std::vector<float> h(n);
  cudaMemcpy(h.data(), d_out, sizeof(float) * n, cudaMemcpyDeviceToHost);
  for (float x : h)
    if (x != 0) return false;
  return true;
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
  run_lookup(table, keys, out, n);
  printf("%d\n", all_zero(out, n));
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  return 0;
}
