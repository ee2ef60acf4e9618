// Parser/analysis stress: the ways a kernel's array parameter can escape
// plain `p[i]` indexing.  Each kernel is one case, named in its comment.
// A port tool must either rewrite the case correctly or report it and leave
// the array alone.  Compile-check only.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#include <cuda/atomic>

typedef unsigned long long EdgeT;
#define BLOCK 256

// Helpers that take the array (or a pointer into it).
__device__ float sum_row(const float* row, int dim)
{
    float s = 0.f;
    for (int j = 0; j < dim; ++j) s += row[j];
    return s;
}
template <typename T>
__device__ __forceinline__ T load_at(const T* base, EdgeT i) { return base[i]; }
__device__ void bump(unsigned* counter, unsigned i) { atomicAdd(&counter[i], 1u); }

struct Slot { const float* ptr; int len; };

// case: dereference of pointer arithmetic, read and write.
__global__ void deref_arith(const float* __restrict__ in, float* __restrict__ out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) *(out + i) = *(in + i) * 2.0f;
}

// case: atomics on an element address, &p[i] and p + i forms.
__global__ void atomics(const unsigned* __restrict__ keys, unsigned* hist,
                        unsigned* mins, unsigned long long* total, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned k = keys[i];
    atomicAdd(&hist[k & 255], 1u);
    atomicMin(mins + (k & 15), k);
    atomicCAS(reinterpret_cast<unsigned*>(&hist[256]), 0u, k);
    atomicAdd(total, (unsigned long long)k);
    bump(hist, k & 255);
}

// case: the array (and an offset pointer) passed to __device__ helpers.
__global__ void helpers(const float* __restrict__ features, const EdgeT* __restrict__ ids,
                        float* __restrict__ out, int dim, size_t batch)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= batch) return;
    EdgeT id = load_at(ids, i);
    out[i] = sum_row(features + id * dim, dim) + load_at<float>(features, id * dim);
}

// case: local alias of a row pointer, then indexed.
__global__ void row_alias(const float* __restrict__ table, const int* __restrict__ idx,
                          float* __restrict__ out, int dim, int rows)
{
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* src = table + (size_t)idx[r] * dim;
    float* dst = &out[(size_t)r * dim];
    for (int j = threadIdx.x; j < dim; j += blockDim.x) dst[j] = src[j];
}

// case: vectorised access through a reinterpret_cast.
__global__ void vector_loads(const float* __restrict__ a, float* __restrict__ b, size_t n4)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4*>(a)[i];
        v.x += v.w;
        reinterpret_cast<float4*>(b)[i] = v;
    }
}

// case: read-only cache intrinsics and inline PTX on the address.
__global__ void ldg_and_ptx(const int* __restrict__ p, int* __restrict__ q, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = __ldg(&p[i]);
    int b;
    asm volatile("ld.global.nc.s32 %0, [%1];" : "=r"(b) : "l"(p + i));
    q[i] = a + b;
}

// case: pointer walking (p++), pointer select, null test.
__global__ void walk(const EdgeT* __restrict__ rowptr, const unsigned* __restrict__ col,
                     const unsigned* __restrict__ alt, unsigned* __restrict__ out,
                     unsigned n, bool use_alt)
{
    unsigned v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const unsigned* list = (use_alt && alt ? alt : col) + rowptr[v];
    const unsigned* end = col + rowptr[v + 1];
    unsigned acc = 0;
    for (const unsigned* it = list; it != end && !use_alt; ++it) acc += *it;
    out[v] = acc;
}

// case: pointer stored in a struct / array, memcpy from the array.
__global__ void stored(const float* __restrict__ data, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 4 > n) return;
    Slot s{data + i, 4};
    const float* ptrs[2] = {data, out};
    float tmp[4];
    memcpy(tmp, s.ptr, sizeof tmp);
    out[i] = tmp[0] + tmp[3] + ptrs[0][i];
}

// case: libcu++ atomic_ref bound to an element.
__global__ void atomic_ref_case(int* counters, const int* __restrict__ keys, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuda::atomic_ref<int, cuda::thread_scope_device> ref(counters[keys[i] & 63]);
    ref.fetch_add(1, cuda::memory_order_relaxed);
}

// case: staged through shared memory, then a data-dependent second read.
__global__ void staged(const unsigned* __restrict__ idx, const double* __restrict__ vals,
                       double* __restrict__ out, int n)
{
    __shared__ unsigned s_idx[BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s_idx[threadIdx.x] = i < n ? idx[i] : 0u;
    __syncthreads();
    if (i < n) out[i] = vals[s_idx[(threadIdx.x + 1) % BLOCK]];
}

int main()
{
    const size_t n = 1 << 16;
    float *fa, *fb;
    unsigned *keys, *hist, *mins, *col;
    unsigned long long* total;
    EdgeT* ids;
    int *ia, *ib;
    double *dv, *dout;
    cudaMalloc(&fa, n * sizeof(float));
    cudaMalloc(&fb, n * sizeof(float));
    cudaMalloc(&keys, n * sizeof(unsigned));
    cudaMalloc(&hist, 257 * sizeof(unsigned));
    cudaMalloc(&mins, 16 * sizeof(unsigned));
    cudaMalloc(&col, n * sizeof(unsigned));
    cudaMalloc(&total, sizeof(unsigned long long));
    cudaMalloc(&ids, (n + 1) * sizeof(EdgeT));
    cudaMalloc(&ia, n * sizeof(int));
    cudaMalloc(&ib, n * sizeof(int));
    cudaMalloc(&dv, n * sizeof(double));
    cudaMalloc(&dout, n * sizeof(double));
    cudaMemset(ids, 0, (n + 1) * sizeof(EdgeT));

    const unsigned grid = (unsigned)((n + BLOCK - 1) / BLOCK);
    deref_arith<<<grid, BLOCK>>>(fa, fb, n);
    atomics<<<grid, BLOCK>>>(keys, hist, mins, total, n);
    helpers<<<grid, BLOCK>>>(fa, ids, fb, 16, n / 16);
    row_alias<<<(int)(n / 64), 64>>>(fa, ia, fb, 64, (int)(n / 64));
    vector_loads<<<grid, BLOCK>>>(fa, fb, n / 4);
    ldg_and_ptx<<<grid, BLOCK>>>(ia, ib, (int)n);
    walk<<<grid, BLOCK>>>(ids, col, nullptr, keys, (unsigned)n, false);
    stored<<<grid, BLOCK>>>(fa, fb, (int)n);
    atomic_ref_case<<<grid, BLOCK>>>(ib, ia, (int)n);
    staged<<<grid, BLOCK>>>(col, dv, dout, (int)n);
    std::printf("%d\n", (int)cudaDeviceSynchronize());

    cudaFree(fa); cudaFree(fb); cudaFree(keys); cudaFree(hist); cudaFree(mins);
    cudaFree(col); cudaFree(total); cudaFree(ids); cudaFree(ia); cudaFree(ib);
    cudaFree(dv); cudaFree(dout);
    return 0;
}
