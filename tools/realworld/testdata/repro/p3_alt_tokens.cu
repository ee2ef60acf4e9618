// P3: alternative tokens and/or/not in device code.
__global__ void flags(const int* a, const int* b, int* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n and not (a[i] == 0 or b[i] == 0)) out[i] = 1;
}
