// R5 (PORT030): an array of device pointers filled in a loop and passed as
// cols[c], and device pointers held in a struct passed as g.col.
#include <cuda_runtime.h>

struct Csr {
  unsigned* rowptr;
  unsigned* col;
};

__global__ void gather(const double* col, const unsigned* idx, double* out, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = col[idx[i]];
}

__global__ void count(const unsigned* rowptr, const unsigned* col, unsigned* out, unsigned n)
{
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  unsigned c = 0;
  for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) c += col[e] & 1;
  out[v] = c;
}

int main()
{
  const unsigned n = 1 << 16;
  double* cols[4];
  double* out;
  unsigned *idx, *cnt;
  for (int c = 0; c < 4; c++) cudaMalloc(&cols[c], sizeof(double) * n);
  cudaMalloc(&out, sizeof(double) * n);
  cudaMalloc(&idx, sizeof(unsigned) * n);
  cudaMalloc(&cnt, sizeof(unsigned) * n);
  for (int c = 0; c < 4; c++) gather<<<n / 256, 256>>>(cols[c], idx, out, n);
  Csr g;
  cudaMalloc(&g.rowptr, sizeof(unsigned) * (n + 1));
  cudaMalloc(&g.col, sizeof(unsigned) * 8 * n);
  count<<<n / 256, 256>>>(g.rowptr, g.col, cnt, n);
  for (int c = 0; c < 4; c++) cudaFree(cols[c]);
  cudaFree(out);
  cudaFree(idx);
  cudaFree(cnt);
  cudaFree(g.rowptr);
  cudaFree(g.col);
  return 0;
}
