/* Parser stress: the preprocessor.  Macros used as qualifiers, as whole
 * statements and as loop headers; #if/#else regions that change a kernel's
 * signature; line continuations; _Pragma; token pasting that makes kernel
 * names.  Compile-check only. */
#ifndef BAMGEN_TESTDATA_STRESS_PREPROCESSOR_CU
#define BAMGEN_TESTDATA_STRESS_PREPROCESSOR_CU

#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define KERNEL extern "C" __global__
#define DEVICE __device__ __forceinline__
#define HOST_DEVICE __host__ __device__
#define RESTRICT __restrict__
#define LAUNCH_BOUNDS(t, b) __launch_bounds__(t, b)
#define GLOBAL_ID() (blockIdx.x * blockDim.x + threadIdx.x)
#define UNROLL _Pragma("unroll")
#define STR2(x) #x
#define STR(x) STR2(x)

#define CHECK(call)                                                          \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            std::fprintf(stderr, "%s failed at " __FILE__ ":" STR(__LINE__) \
                         ": %s\n", #call, cudaGetErrorString(e_));           \
            return 1;                                                        \
        }                                                                    \
    } while (0)

#define SWAP(T, a, b) { T tmp_ = (a); (a) = (b); (b) = tmp_; }
#define FOR_EACH_EDGE(e, v, rowptr) \
    for (EdgeT e = (rowptr)[v], e##_end = (rowptr)[(v) + 1]; e < e##_end; ++e)
#define IF_LANE0 if ((threadIdx.x & 31) == 0)

#ifndef USE_WIDE_EDGES
#  define USE_WIDE_EDGES 1
#endif

#if USE_WIDE_EDGES
typedef unsigned long long EdgeT;
#  define EDGE_FMT "%llu"
#elif defined(SMALL_GRAPH) && SMALL_GRAPH > 1
typedef unsigned short EdgeT;
#  define EDGE_FMT "%hu"
#else
typedef unsigned int EdgeT;
#  define EDGE_FMT "%u"
#endif

typedef unsigned int VertexT;

HOST_DEVICE inline VertexT clamp_vertex(VertexT v, VertexT n) { return v < n ? v : n - 1; }

DEVICE unsigned lane_id()
{
#ifdef __CUDA_ARCH__
    unsigned r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
#else
    return 0;
#endif
}

// The signature depends on a macro: one region has an extra parameter.
KERNEL void LAUNCH_BOUNDS(256, 2)
degree_kernel(const EdgeT* RESTRICT rowptr,
#if defined(WITH_WEIGHTS)
              const float* RESTRICT weights,
#endif
              unsigned* RESTRICT degree, VertexT n)
{
    const VertexT v = GLOBAL_ID();
    if (v >= n) return;
    unsigned d = 0;
    FOR_EACH_EDGE(e, v, rowptr) {
#if defined(WITH_WEIGHTS)
        if (weights[e] > 0.0f)
#endif
        ++d;
    }
    degree[v] = d;
}

// Braces split across #if branches: both branches open the block.
__global__ void split_brace_kernel(int* RESTRICT out, int n)
{
    int i = GLOBAL_ID();
#if __CUDACC_VER_MAJOR__ >= 11
    if (i < n) {
        out[i] = 11;
#else
    if (i < n && out) {
        out[i] = 10;
#endif
    }
    IF_LANE0 { out[0] += (int)lane_id(); }
}

#define DEFINE_BINARY_KERNEL(name, op)                                        \
    __global__ void name##_kernel(const float* RESTRICT a,                    \
                                  const float* RESTRICT b,                    \
                                  float* RESTRICT c, int n)                   \
    {                                                                         \
        int i = GLOBAL_ID();                                                  \
        if (i < n) c[i] = a[i] op b[i];                                       \
    }

DEFINE_BINARY_KERNEL(add, +)
DEFINE_BINARY_KERNEL(mul, *)
#undef DEFINE_BINARY_KERNEL

__global__ void sort2_kernel(int* RESTRICT p, int n)
{
    int i = 2 * GLOBAL_ID();
    if (i + 1 < n && p[i] > p[i + 1]) SWAP(int, p[i], p[i + 1])
    UNROLL
    for (int k = 0; k < 4; ++k) { if (i + k < n) p[i + k] += k; }
}

#if 0
this region is not C++ at all: { ( [ "a } string" ']' @ $ `
__global__ void never_compiled(
#endif

#ifdef __CUDACC__
#  define LAUNCH(k, g, b, ...) k<<<(g), (b)>>>(__VA_ARGS__)
#else
#  define LAUNCH(k, g, b, ...) k(__VA_ARGS__)
#endif

int main(int argc, char** argv)
{
    const VertexT n = argc > 1 ? (VertexT)std::atoi(argv[1]) : 1000u;
    EdgeT* rowptr;
    unsigned* degree;
    float *a, *b, *c;
    int* ints;
    CHECK(cudaMalloc(&rowptr, (n + 1) * sizeof(EdgeT)));
    CHECK(cudaMalloc(&degree, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    CHECK(cudaMalloc(&ints, n * sizeof(int)));
    CHECK(cudaMemset(rowptr, 0, (n + 1) * sizeof(EdgeT)));
#if defined(WITH_WEIGHTS)
    degree_kernel<<<(n + 255) / 256, 256>>>(rowptr, nullptr, degree, n);
#else
    degree_kernel<<<(n + 255) / 256, 256>>>(rowptr, degree, n);
#endif
    LAUNCH(add_kernel, (n + 255) / 256, 256, a, b, c, (int)n);
    LAUNCH(mul_kernel, (n + 255) / 256, 256, c, b, a, (int)n);
    split_brace_kernel<<<1, 32>>>(ints, (int)n);
    sort2_kernel<<<(n + 511) / 512, 256>>>(ints, (int)n);
    CHECK(cudaDeviceSynchronize());
    std::printf("edges are " EDGE_FMT "-sized: %d\n", (EdgeT)sizeof(EdgeT), (int)clamp_vertex(5, n));
    CHECK(cudaFree(rowptr));
    CHECK(cudaFree(degree));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(ints));
    return 0;
}

#endif  // BAMGEN_TESTDATA_STRESS_PREPROCESSOR_CU
