// EMOGI-style BFS with error checks, templates and host code.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <chrono>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define WARP_SIZE 32
#define MYINFINITY 0xFFFFFFFF
#define BLOCK_SIZE 1024
#define DEVICE_FN __device__ __forceinline__
#define CUDA_CHECK(call)                                                   \
    do {                                                                   \
        cudaError_t err__ = (call);                                        \
        if (err__ != cudaSuccess) {                                        \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                    \
                    cudaGetErrorString(err__), __FILE__, __LINE__);        \
            exit(EXIT_FAILURE);                                            \
        }                                                                  \
    } while (0)

typedef unsigned long long EdgeT;
using VertexT = unsigned int;

#ifdef __CUDA_ARCH__
#define ARCH_OK 1
#else
#define ARCH_OK 0
#endif

#if 0
this is not code at all ' "
#endif

struct Graph {
    uint64_t vertex_count;
    uint64_t edge_count;
    EdgeT *vertexList;
    VertexT *edgeList;
};

__constant__ int c_params[4];

DEVICE_FN unsigned lane_id() { return threadIdx.x & (WARP_SIZE - 1); }

__global__ void kernel_coalesce(bool *label, const uint32_t level, uint32_t *visited,
                                const uint64_t vertex_count, const uint64_t *vertexList,
                                const EdgeT *__restrict__ edgeList) {
    const uint64_t tid = blockDim.x * BLOCK_SIZE * blockIdx.y + blockDim.x * blockIdx.x + threadIdx.x;
    const uint64_t warpIdx = tid >> 5;
    const uint64_t laneIdx = tid & ((1 << 5) - 1);

    if (warpIdx < vertex_count && label[warpIdx] == level) {
        const uint64_t start = vertexList[warpIdx];
        const uint64_t shift_start = start & 0xFFFFFFFFFFFFFFF0;
        const uint64_t end = vertexList[warpIdx + 1];

        for (uint64_t i = shift_start + laneIdx; i < end; i += WARP_SIZE) {
            if (i >= start) {
                const EdgeT next = edgeList[i];
                if (visited[next] == MYINFINITY) {
                    visited[next] = level + 1;
                    *label = true;
                }
            }
        }
    }
}

template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce_kernel(const T *__restrict__ in, T *out, size_t n) {
    extern __shared__ float s[];
    __shared__ T partial[BLOCK / WARP_SIZE];
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);
    T sum = T(0);
    #pragma unroll 4
    for (size_t i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += (size_t)gridDim.x * BLOCK) {
        sum += in[i];
    }
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (tile.thread_rank() == 0) partial[threadIdx.x / 32] = sum;
    block.sync();
    if (threadIdx.x == 0) {
        T total = static_cast<T>(0);
        for (int w = 0; w < BLOCK / 32; ++w) total += partial[w];
        atomicAdd(&out[0], total);
    }
    unsigned mask = __ballot_sync(0xffffffff, sum > T(0));
    int leader = __ffs(mask) - 1;
    float v = reinterpret_cast<const float4 *>(in)[0].x;
    s[threadIdx.x] = v > 0.5f ? 1.0f : -1.e-3f;
    asm volatile("membar.gl;" ::: "memory");
    switch (leader) {
    case 0:
        break;
    case 1: {
        int k = leader << 2;
        (void)k;
    } break;
    default:
        return;
    }
}

__device__ float warp_sum(float v) {
    for (int o = WARP_SIZE / 2; o > 0; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
    return v;
}

void load_graph(const char *path, Graph &g, std::vector<uint64_t> &offsets) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    size_t r = fread(&g.vertex_count, sizeof(uint64_t), 1, f);
    (void)r;
    offsets.resize(g.vertex_count + 1);
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s graph\n", argv[0]);
        return 1;
    }
    Graph g;
    std::vector<uint64_t> offsets;
    load_graph(argv[1], g, offsets);
    const int n = 1 << 20;
    std::vector<float> h(n);
    for (auto &x : h) x = 1.0f;
    float *d_in = nullptr, *d_out;
    bool *d_label;
    uint32_t *d_visited;
    CUDA_CHECK(cudaMalloc((void **)&d_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_label, sizeof(bool)));
    CUDA_CHECK(cudaMalloc(&d_visited, g.vertex_count * sizeof(uint32_t)));
    CUDA_CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    dim3 grid((n + 255) / 256);
    dim3 block(256, 1, 1);
    auto start = std::chrono::high_resolution_clock::now();
    reduce_kernel<float, 256><<<grid, 256, 256 * sizeof(float), stream>>>(d_in, d_out, n);
    uint32_t level = 0;
    bool changed = true;
    while (changed) {
        changed = false;
        CUDA_CHECK(cudaMemcpy(d_label, &changed, sizeof(bool), cudaMemcpyHostToDevice));
        kernel_coalesce<<<grid, block>>>(d_label, level, d_visited, g.vertex_count, nullptr, nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(&changed, d_label, sizeof(bool), cudaMemcpyDeviceToHost));
        level++;
    }
    auto end = std::chrono::high_resolution_clock::now();
    double ms = std::chrono::duration<double, std::milli>(end - start).count();
    printf("levels %u time %.3f ms\n", level, ms);
    std::vector<std::pair<int, int>> pairs{{1, 2}, {3, 4}};
    std::sort(pairs.begin(), pairs.end(), [&](const std::pair<int, int> &a, const auto &b) { return a.first < b.first; });
    int *hp = new int[n];
    delete[] hp;
    cudaFree(d_in);
    return 0;
}
