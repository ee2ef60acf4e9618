// R7 (PORT032): raw device pointers given to thrust algorithms and a
// device-to-device copy.
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <cuda_runtime.h>

__global__ void lookup(const int* table, const int* keys, int* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[keys[i]];
}

int main()
{
  const int n = 1 << 20;
  int *table, *keys, *out, *copy;
  cudaMalloc(&table, sizeof(int) * n);
  cudaMalloc(&keys, sizeof(int) * n);
  cudaMalloc(&out, sizeof(int) * n);
  cudaMalloc(&copy, sizeof(int) * n);
  lookup<<<n / 256, 256>>>(table, keys, out, n);
  cudaMemcpy(copy, out, sizeof(int) * n, cudaMemcpyDeviceToDevice);
  int total = thrust::reduce(thrust::device, out, out + n, 0);
  cudaFree(table);
  cudaFree(keys);
  cudaFree(out);
  cudaFree(copy);
  return total == 0 ? 0 : 1;
}
