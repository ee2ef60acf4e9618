// P1: constructs nvcc accepts that the parser reports as errors today (one
// per function; analyze exits 1). Types and templates come from types.h.
#include <cstdint>
#include <cstdio>
#include <typeinfo>
#include <vector>
#include "types.h"

int nreps = 3;
int memsize = 1 << 20;

// (A * (B * c)) with globals A, B: taken for a declarator
void report(float t) { printf("%f\n", (nreps * (memsize * 2e-6)) / t); }

// typeid in an expression
template <typename Real> bool is_double() { return typeid(Real) == typeid(double); }

// block-scope extern __device__ function declaration
__device__ void check(int* p)
{
  extern __device__ void trap_here(void);
  if (p == nullptr) trap_here();
}
__device__ void trap_here(void) {}

// sizeof of a template-id whose template is declared in a header
template <typename T> size_t pair_bytes() { return sizeof(Pair<T>); }

// functional casts chained: (T)(intptr_t)x with T from a header
void* as_handle(int* tex) { return (void*)(intptr_t)tex[0]; }
IndexT* as_index(int* tex) { return (IndexT*)(intptr_t)tex[0]; }

// std::vector<T *> a(n), b(n); with T from a header
void make_lists(int n)
{
  std::vector<IndexT*> a(n), b(n);
  a[0] = b[0];
}

// a template kernel from a header used as a value
template <typename T> void fill_all(T* x, T v, int n)
{
  auto k = fill<BLOCK_SIZE, T>;
  k<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(x, v, n);
}
template void fill_all<float>(float*, float, int);
