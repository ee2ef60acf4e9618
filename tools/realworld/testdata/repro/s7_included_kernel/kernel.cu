// S7: a kernel file that the host file #includes (benchmark-suite style).
// Ported alone it changes the parameter types main.cu launches with.
__global__ void expand(const int* rowptr, const int* col, int* level, int n, int cur)
{
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n && level[v] == cur)
    for (int e = rowptr[v]; e < rowptr[v + 1]; e++)
      if (level[col[e]] < 0) level[col[e]] = cur + 1;
}
