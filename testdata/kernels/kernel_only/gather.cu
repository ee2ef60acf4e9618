// gather.cu: kernels only, no host code -- the shape of a project's kernel
// file that a separate driver (driver.cu) declares and launches.  Porting
// this file alone must still give a file that compiles by itself.
//
//   gather_rows: out[i*dim + c] = table[ids[i]*dim + c] (warp-free, one
//                thread per output element; ids data-dependent)
//   segment_max: one thread per segment [offsets[s], offsets[s+1]) of vals
#include <cstdint>

__global__ void gather_rows(const float* table, const int64_t* ids, float* out,
                            int64_t count, int dim)
{
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count * dim) return;
  const int64_t row = i / dim;
  const int c = (int)(i % dim);
  out[i] = table[ids[row] * dim + c];
}

__global__ void segment_max(const uint64_t* offsets, const uint32_t* vals,
                            uint32_t* result, uint32_t segments)
{
  const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= segments) return;
  uint32_t best = 0;
  for (uint64_t j = offsets[s]; j < offsets[s + 1]; j++)
    best = vals[j] > best ? vals[j] : best;
  result[s] = best;
}
