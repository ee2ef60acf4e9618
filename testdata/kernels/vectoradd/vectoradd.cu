// vectoradd: c = a + b over large vectors.
//
// Two kernels: one thread per element, and a grid-stride loop with a fixed
// grid.  The three vectors are the "big" arrays (n elements each).
//
// usage: vectoradd [n] [seed] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <chrono>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t err_ = (call);                                            \
        if (err_ != cudaSuccess) {                                            \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,  \
                    __LINE__, cudaGetErrorString(err_));                      \
            exit(EXIT_FAILURE);                                               \
        }                                                                     \
    } while (0)

#define BLOCK 256

template <typename T>
__global__ void vector_add(const T* __restrict__ a, const T* __restrict__ b,
                           T* __restrict__ c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

template <typename T>
__global__ void vector_add_gridstride(const T* __restrict__ a,
                                      const T* __restrict__ b,
                                      T* __restrict__ c, size_t n)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        c[i] = a[i] + b[i];
    }
}

static inline uint32_t xorshift32(uint32_t& s)
{
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

int main(int argc, char** argv)
{
    size_t n = 1 << 20;
    uint32_t seed = 12345;
    bool verify = true;
    int pos = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--no-verify")) verify = false;
        else if (pos == 0) { n = strtoull(argv[i], nullptr, 10); ++pos; }
        else if (pos == 1) { seed = (uint32_t)strtoul(argv[i], nullptr, 10); ++pos; }
    }
    if (seed == 0) seed = 1;

    std::vector<float> h_a(n), h_b(n), h_c(n), h_d(n);
    uint32_t s = seed;
    for (size_t i = 0; i < n; ++i) {
        h_a[i] = (float)(xorshift32(s) & 0xffffff) / 1024.0f;
        h_b[i] = (float)(xorshift32(s) & 0xffff) / 64.0f - 512.0f;
    }

    float *d_a, *d_b, *d_c;
    const size_t bytes = n * sizeof(float);
    CUDA_CHECK(cudaMalloc(&d_a, bytes));
    CUDA_CHECK(cudaMalloc(&d_b, bytes));
    CUDA_CHECK(cudaMalloc(&d_c, bytes));
    CUDA_CHECK(cudaMemcpy(d_a, h_a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, h_b.data(), bytes, cudaMemcpyHostToDevice));

    dim3 block(BLOCK);
    dim3 grid((unsigned)((n + BLOCK - 1) / BLOCK));

    auto t0 = std::chrono::high_resolution_clock::now();
    vector_add<float><<<grid, block>>>(d_a, d_b, d_c, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::high_resolution_clock::now();
    CUDA_CHECK(cudaMemcpy(h_c.data(), d_c, bytes, cudaMemcpyDeviceToHost));

    // Second pass with the grid-stride kernel, on a grid sized to the device.
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaMemset(d_c, 0, bytes));
    auto t2 = std::chrono::high_resolution_clock::now();
    vector_add_gridstride<float><<<sms * 8, BLOCK>>>(d_a, d_b, d_c, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    auto t3 = std::chrono::high_resolution_clock::now();
    CUDA_CHECK(cudaMemcpy(h_d.data(), d_c, bytes, cudaMemcpyDeviceToHost));

    double ms1 = std::chrono::duration<double, std::milli>(t1 - t0).count();
    double ms2 = std::chrono::duration<double, std::milli>(t3 - t2).count();
    fprintf(stderr, "n=%zu  vector_add %.3f ms  gridstride %.3f ms\n", n, ms1, ms2);

    int rc = 0;
    if (verify) {
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
            float ref = h_a[i] + h_b[i];
            if (h_c[i] != ref || h_d[i] != ref) {
                if (bad < 5)
                    fprintf(stderr, "mismatch at %zu: %g %g (ref %g)\n", i,
                            h_c[i], h_d[i], ref);
                ++bad;
            }
        }
        if (bad) {
            fprintf(stderr, "verify FAILED: %zu mismatches\n", bad);
            rc = 1;
        } else {
            fprintf(stderr, "verify ok\n");
        }
    }

    // Fixed-order sum on the host: independent of how the GPU scheduled work.
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += (double)h_c[i];
    printf("checksum: %.6f\n", sum);

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    return rc;
}
