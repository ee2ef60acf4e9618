// T1 (OPT000 "no variable holds the thread id"): thread ids as real code
// writes them. Each kernel is a thread-per-vertex CSR walk that --opt auto
// should recognise (odt) or refuse with the reason.
#include <cuda_runtime.h>
#include "types.h"

// 2-D grid
__global__ void walk_2d(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned v = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < n && label[v] == 0)
    for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) label[col[e]] = 0;
}

// block size as a macro from a header
__global__ void walk_macro(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned v = BLOCK_SIZE * blockIdx.x + threadIdx.x;
  if (v < n && label[v] == 0)
    for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) label[col[e]] = 0;
}

// through local copies
__global__ void walk_locals(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned bx = blockIdx.x, tx = threadIdx.x;
  const unsigned v = bx * blockDim.x + tx;
  if (v < n && label[v] == 0)
    for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) label[col[e]] = 0;
}

// __umul24
__global__ void walk_umul24(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned v = __umul24(blockIdx.x, blockDim.x) + threadIdx.x;
  if (v < n && label[v] == 0)
    for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) label[col[e]] = 0;
}

// warp per vertex with the shift from the header
__global__ void walk_warp(const unsigned* rowptr, const unsigned* col, unsigned* label, unsigned n)
{
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned w = tid >> WARP_SHIFT, lane = tid & (WARP_SIZE - 1);
  if (w < n && label[w] == 0)
    for (unsigned e = rowptr[w] + lane; e < rowptr[w + 1]; e += WARP_SIZE) label[col[e]] = 0;
}

int main()
{
  const unsigned n = 1 << 16, m = 1 << 20;
  unsigned *rowptr, *col, *label;
  cudaMalloc(&rowptr, sizeof(unsigned) * (n + 1));
  cudaMalloc(&col, sizeof(unsigned) * m);
  cudaMalloc(&label, sizeof(unsigned) * n);
  const unsigned blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
  walk_2d<<<dim3(blocks, 1), BLOCK_SIZE>>>(rowptr, col, label, n);
  walk_macro<<<blocks, BLOCK_SIZE>>>(rowptr, col, label, n);
  walk_locals<<<blocks, BLOCK_SIZE>>>(rowptr, col, label, n);
  walk_umul24<<<blocks, BLOCK_SIZE>>>(rowptr, col, label, n);
  walk_warp<<<blocks * WARP_SIZE, BLOCK_SIZE>>>(rowptr, col, label, n);
  cudaFree(rowptr);
  cudaFree(col);
  cudaFree(label);
  return 0;
}
