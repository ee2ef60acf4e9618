// S1: a kernel-only file (no host code). --auto ports `table`; the output
// must include the runtime header to compile on its own.
__global__ void lookup(const float* table, const int* keys, float* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[keys[i]];
}
