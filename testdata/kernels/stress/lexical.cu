// Parser stress: lexical oddities and unusual formatting.  Raw strings,
// digraphs, literals, comments in odd places, launches split over lines.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>

static const char* const kRaw1 = R"(a "quoted" )" R"( <<<not a launch>>> // not a comment )";
static const char* const kRaw2 = R"xyz(contains )" and )xy" and
a newline, /* no comment */ and a backslash \)xyz";
static const char kChars[] = { '"', '\'', '\\', '/', '*', '<', '>', '\x7f', '\0' };
static const char* const kConcat = "one " "two "
                                   u8"three" /* comment */ " four";

// A line comment continued onto the next line with a backslash: \
   this line is still a comment, even though it looks like code: int x = ;

constexpr unsigned long long kBig = 1'000'000'007ull;
constexpr double kHex = 0x1.8p3;          // 12.0
constexpr float kTiny = 1e-3f, kDot = .5f, kTrail = 2.f;
constexpr unsigned kBits = 0b1011'0001u;
constexpr long kOct = 0755L;

constexpr unsigned long long operator""_KiB(unsigned long long v) { return v * 1024ull; }

// Digraphs: <% %> are braces, <: :> are brackets, %: is #.
%:define DIGRAPH_ADD(a, b) ((a) + (b))
__global__ void digraph_kernel(int* out, int n)
<%
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) <% out<:i:> = DIGRAPH_ADD(out<:i:>, 1); %>
%>

__global__ /* between qualifier and type */ void /* and here */
    __launch_bounds__( /* even here */ 128 )
    odd_kernel /* name */ ( const float
                            * __restrict__ /* restrict */ in ,
                            float *
                            __restrict__
                            out
                            ,
                            int n )  // trailing
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x;
         i < n;
         i += gridDim.x * blockDim.x) { out[i] = in[i] < 0.f ? -in[i] : in[i] > 1.f ? 1.f : in[i]; }
}

template <int N> __global__ void tkernel(int* p) { if (threadIdx.x < N) p[threadIdx.x] = N >> 1; }

extern __shared__ float dyn_smem[];
__constant__ float c_coeffs[16];
__device__ __managed__ int g_managed_counter;
__device__ unsigned long long g_device_counter = 0;

__global__ void smem_kernel(const float* in, float* out, int n)
{
    float* s = dyn_smem;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] * c_coeffs[threadIdx.x % 16] : 0.f;
    __syncthreads();
    if (i < n) out[i] = s[blockDim.x - 1 - threadIdx.x];
    if (i == 0) { atomicAdd(&g_managed_counter, 1); atomicAdd(&g_device_counter, 1ull); }
}

int main(int argc, char**argv){int n=argc>1?atoi(argv[1]):1024;float*a,*b;int*ip;
cudaMalloc(&a,n*sizeof(float));cudaMalloc(&b,n*sizeof(float));cudaMalloc(&ip,n*sizeof(int));
    const int blocks = (n + 127) / 128, threads = 128;
    cudaStream_t stream; cudaStreamCreate(&stream);
    float coeffs[16]; for (int k = 0; k < 16; ++k) coeffs[k] = kTiny * k + kDot;
    cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof coeffs);

    odd_kernel<<<blocks,threads>>>(a,b,n);
    odd_kernel <<< blocks , threads >>> ( a , b , n ) ;
    odd_kernel<<<
        /* grid */ blocks > 0 ? blocks : 1,
        /* block */ threads,
        /* smem */ 0,
        /* stream */ stream
    >>>(
        a,   // in
        b,   // out
        n < 0 ? 0 : n
    );
    smem_kernel<<<blocks, threads, threads * sizeof(float), stream>>>(a, b, n);
    tkernel<(4 > 2) ? 8 : 2><<<1, 32>>>(ip);
    tkernel<(64 >> 2)><<<dim3(1, 1, 1), dim3(32)>>>(ip);
    digraph_kernel<<<(n+255)/256,256>>>(ip,n);
    void* args[] = { &a, &b, &n };
    cudaLaunchKernel((const void*)odd_kernel, dim3(blocks), dim3(threads), args, 0, stream);
    cudaStreamSynchronize(stream);

    std::printf("%s|%s|%zu|%s|%llu %g %g %u %ld %llu\n", kRaw1, kRaw2, sizeof kChars, kConcat,
                kBig, kHex, (double)kTrail, kBits, kOct, 4_KiB);
    cudaStreamDestroy(stream); cudaFree(a); cudaFree(b); cudaFree(ip);
    return 0;}
