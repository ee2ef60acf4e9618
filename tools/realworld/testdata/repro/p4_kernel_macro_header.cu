// P4: the kernel qualifier hidden in a macro from a local header; the kernel
// is reported as a host function.
#include "qualifiers.h"

MY_KERNEL void scale(float* x, float a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
