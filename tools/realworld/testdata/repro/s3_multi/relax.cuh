// S3: prototype of the kernel in relax.cu, launched from main.cu.
#pragma once
__global__ void relax(const unsigned* rowptr, const unsigned* col, int* dist, unsigned n);
