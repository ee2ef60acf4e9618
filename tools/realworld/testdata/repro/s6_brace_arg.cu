// S6: `T{...}` with T from a header as a call argument breaks the parse of
// main; port still exits 0 and inserts the statistics print after
// `return 0;`, where it never runs.
#include <cuda_runtime.h>

static size_t volume(cudaExtent e) { return e.width * e.height * e.depth; }

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
  cudaMalloc(&out, sizeof(float) * volume(cudaExtent{(size_t)n, 1, 1}));
  lookup<<<n / 256, 256>>>(table, keys, out, n);
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  return 0;
}
