// Local header of the t*/p* reproducers: constants, a type and a template
// that the file being ported does not declare itself.
#pragma once
#define BLOCK_SIZE 256
#define WARP_SHIFT 5
#define WARP_SIZE 32
typedef unsigned IndexT;
template <typename T> struct Pair { T a, b; };
template <int B, typename T> __global__ void fill(T* x, T v, int n)
{
  int i = blockIdx.x * B + threadIdx.x;
  if (i < n) x[i] = v;
}
