/*
 * reduction -- segmented reduction.
 *
 * values[] is split into nseg segments by offsets[] (nseg + 1 entries,
 * 64-bit).  Each block reduces one segment (block-stride loop, shared-memory
 * tree), a second kernel does one segment per warp with shuffles.  Values are
 * integers, accumulators 64-bit, so the result does not depend on the order of
 * the additions.
 *
 *   reduction [nvalues] [seed] [--no-verify]
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <chrono>
#include <cuda_runtime.h>

#define checkCuda(expr) checkCudaImpl((expr), #expr, __FILE__, __LINE__)
static void checkCudaImpl(cudaError_t e, const char* what, const char* file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, cudaGetErrorString(e));
        exit(1);
    }
}

typedef unsigned long long OffsetT;
typedef unsigned long long AccT;

#define BLOCK 256
#define WARP 32

// One block per segment.
template <typename T, typename Acc, int BlockSize>
__global__ void __launch_bounds__(BlockSize)
segmented_sum_block(const T* __restrict__ values, const OffsetT* __restrict__ offsets,
                    Acc* __restrict__ sums, unsigned nseg)
{
    __shared__ Acc partial[BlockSize];
    const unsigned seg = blockIdx.x;
    if (seg >= nseg) return;

    const OffsetT begin = offsets[seg];
    const OffsetT end   = offsets[seg + 1];
    Acc acc = 0;
    for (OffsetT i = begin + threadIdx.x; i < end; i += BlockSize)
        acc += (Acc)values[i];
    partial[threadIdx.x] = acc;
    __syncthreads();

#pragma unroll
    for (int s = BlockSize / 2; s > 0; s >>= 1) {
        if (threadIdx.x < (unsigned)s)
            partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sums[seg] = partial[0];
}

// One warp per segment.
template <typename T, typename Acc>
__global__ void segmented_sum_warp(const T* __restrict__ values,
                                   const OffsetT* __restrict__ offsets,
                                   Acc* __restrict__ sums, unsigned nseg)
{
    const unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned warp = gtid / WARP;
    const unsigned lane = threadIdx.x % WARP;
    if (warp >= nseg) return;

    Acc acc = 0;
    for (OffsetT i = offsets[warp] + lane; i < offsets[warp + 1]; i += WARP)
        acc += values[i];
    for (int d = WARP / 2; d > 0; d /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, d);
    if (lane == 0)
        sums[warp] = acc;
}

int main(int argc, char** argv)
{
    uint64_t n = 1ull << 20;
    uint64_t seed = 7;
    bool verify = true;
    int pos = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--no-verify") == 0) { verify = false; continue; }
        if (pos++ == 0) n = strtoull(argv[i], NULL, 0);
        else            seed = strtoull(argv[i], NULL, 0);
    }

    // Build segments of skewed lengths: mostly short, some empty, a few huge.
    std::vector<OffsetT> offsets;
    offsets.push_back(0);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    auto next = [&s]() {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        return s * 2685821657736338717ull;
    };
    while (offsets.back() < n) {
        uint64_t r = next();
        uint64_t len;
        if (r % 97 == 0)      len = (r >> 8) % 50000;   // rare long segment
        else if (r % 7 == 0)  len = 0;                  // empty segment
        else                  len = (r >> 8) % 300;
        offsets.push_back(offsets.back() + len < n ? offsets.back() + len : n);
    }
    const unsigned nseg = (unsigned)(offsets.size() - 1);

    std::vector<uint32_t> values(n);
    for (uint64_t i = 0; i < n; ++i)
        values[i] = (uint32_t)(next() >> 40);   // 24-bit values

    uint32_t* d_values = nullptr;
    OffsetT*  d_offsets = nullptr;
    AccT*     d_sums = nullptr;
    AccT*     d_sums_warp = nullptr;
    checkCuda(cudaMalloc((void**)&d_values, n * sizeof(uint32_t)));
    checkCuda(cudaMalloc((void**)&d_offsets, (nseg + 1) * sizeof(OffsetT)));
    checkCuda(cudaMalloc((void**)&d_sums, nseg * sizeof(AccT)));
    checkCuda(cudaMalloc((void**)&d_sums_warp, nseg * sizeof(AccT)));
    checkCuda(cudaMemcpy(d_values, values.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    checkCuda(cudaMemcpy(d_offsets, offsets.data(), (nseg + 1) * sizeof(OffsetT), cudaMemcpyHostToDevice));

    auto t0 = std::chrono::steady_clock::now();
    segmented_sum_block<uint32_t, AccT, BLOCK><<<nseg, BLOCK>>>(d_values, d_offsets, d_sums, nseg);
    checkCuda(cudaGetLastError());
    const unsigned warpsPerBlock = BLOCK / WARP;
    dim3 grid((nseg + warpsPerBlock - 1) / warpsPerBlock);
    segmented_sum_warp<uint32_t, AccT><<<grid, BLOCK>>>(d_values, d_offsets, d_sums_warp, nseg);
    checkCuda(cudaGetLastError());
    checkCuda(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    fprintf(stderr, "n=%llu segments=%u time=%.3f ms\n", (unsigned long long)n, nseg,
            std::chrono::duration<double, std::milli>(t1 - t0).count());

    std::vector<AccT> sums(nseg), sums_warp(nseg);
    checkCuda(cudaMemcpy(sums.data(), d_sums, nseg * sizeof(AccT), cudaMemcpyDeviceToHost));
    checkCuda(cudaMemcpy(sums_warp.data(), d_sums_warp, nseg * sizeof(AccT), cudaMemcpyDeviceToHost));

    int status = 0;
    if (verify) {
        unsigned bad = 0;
        for (unsigned g = 0; g < nseg; ++g) {
            AccT ref = 0;
            for (OffsetT i = offsets[g]; i < offsets[g + 1]; ++i) ref += values[i];
            if (ref != sums[g] || ref != sums_warp[g]) {
                if (bad++ < 5)
                    fprintf(stderr, "segment %u: block %llu warp %llu ref %llu\n", g,
                            sums[g], sums_warp[g], ref);
            }
        }
        fputs(bad ? "verify FAILED\n" : "verify ok\n", stderr);
        status = bad ? 1 : 0;
    }

    AccT checksum = 0;
    for (unsigned g = 0; g < nseg; ++g)
        checksum += sums[g] * (AccT)(g % 13 + 1);
    printf("checksum: %llu\n", checksum);

    cudaFree(d_values);
    cudaFree(d_offsets);
    cudaFree(d_sums);
    cudaFree(d_sums_warp);
    return status;
}
