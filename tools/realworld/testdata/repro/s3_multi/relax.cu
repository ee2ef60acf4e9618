// S3: the kernel. Ported alone, its parameters become bam::array while
// relax.cuh and the launch in main.cu keep raw pointers.
#include "relax.cuh"

__global__ void relax(const unsigned* rowptr, const unsigned* col, int* dist, unsigned n)
{
  unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  for (unsigned e = rowptr[v]; e < rowptr[v + 1]; e++) atomicMin(&dist[col[e]], dist[v] + 1);
}
