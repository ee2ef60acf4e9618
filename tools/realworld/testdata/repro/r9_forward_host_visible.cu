// R4 (forwarding functions, safety): a host function that takes the buffers
// passed to it as bam::array must get them from every caller: here first()
// reads a cudaMalloc'd buffer and a cudaMallocManaged one, which keeps its
// pointer (host-visible memory is wrapped around launches), so neither may
// be ported (before the fix: a was, and first(m) did not compile).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
__global__ void k(int* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = i; }
static void run(int* a, int n) { k<<<1, n>>>(a, n); }
static int first(const int* a) { int x = 0; cudaMemcpy(&x, a, sizeof(int), cudaMemcpyDeviceToHost); return x; }
int main() {
  int *a, *m;
  cudaMalloc(&a, 64 * sizeof(int));
  cudaMallocManaged(&m, 64 * sizeof(int));
  run(a, 64);
  printf("%d %d\n", first(a), first(m));
  cudaFree(a); cudaFree(m);
  return 0;
}
