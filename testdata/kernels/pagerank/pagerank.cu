// pagerank: pull-based PageRank with a fixed number of iterations.
//
//   contrib[u] = rank[u] / out_degree[u]
//   rank'[v]   = (1 - d) / n + d * sum_{u -> v} contrib[u]
//
// One thread per vertex walks the in-neighbour list of its vertex in CSR
// order, so each vertex's sum is formed in a fixed order and the result is
// the same on every run.  The in-edge list lives in mapped pinned host memory
// (zero-copy, as in EMOGI's baseline); everything else is in device memory.
//
// Storage arrays: in_offsets (n+1, 64-bit), in_sources (m), out_degree (n),
//                 rank / next_rank / contrib (n).
//
// usage: pagerank [n] [seed] [deg] [iters] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cmath>
#include <vector>
#include <chrono>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t err = call;                                                 \
        if (err != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__,               \
                    cudaGetErrorName(err), cudaGetErrorString(err));            \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

typedef uint64_t EdgeT;
typedef uint32_t VertexT;
#define BLOCK 256
#define DAMPING 0.85f

template <typename T>
__global__ void compute_contrib(const T* __restrict__ rank,
                                const VertexT* __restrict__ out_degree,
                                T* __restrict__ contrib, VertexT n)
{
    VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        VertexT d = out_degree[v];
        contrib[v] = d ? rank[v] / (T)d : T(0);
    }
}

template <typename T>
__global__ void pagerank_pull(const EdgeT* __restrict__ in_offsets,
                              const VertexT* __restrict__ in_sources,
                              const T* __restrict__ contrib,
                              T* __restrict__ next_rank, VertexT n, T base)
{
    VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    T sum = 0;
    for (EdgeT e = in_offsets[v]; e < in_offsets[v + 1]; ++e)
        sum += contrib[in_sources[e]];
    next_rank[v] = base + T(DAMPING) * sum;
}

template <typename T>
__global__ void fill(T* __restrict__ p, T value, VertexT n)
{
    for (VertexT i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = value;
}

// ----------------------------------------------------------------------------

static uint64_t mix64(uint64_t& s)
{
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Generate a directed R-MAT-ish graph and store it transposed (in-edges),
// plus the out-degree of every vertex.  Hub n/2+1 -> every 8th vertex.
static void make_transposed(VertexT n, unsigned deg, uint64_t seed,
                            std::vector<EdgeT>& in_off, std::vector<VertexT>& out_deg,
                            std::vector<VertexT>& sources)
{
    int scale = 1;
    while ((1ull << scale) < n) ++scale;
    const VertexT hub = n / 2 + 1;
    in_off.assign(n + 1, 0);
    out_deg.assign(n, 0);
    std::vector<EdgeT> cur;
    for (int pass = 0; pass < 2; ++pass) {
        uint64_t s = seed;
        auto edge = [&](VertexT u, VertexT v) {   // u -> v
            if (pass == 0) { ++in_off[v + 1]; ++out_deg[u]; }
            else sources[cur[v]++] = u;
        };
        for (uint64_t i = 0; i < (uint64_t)n * deg; ++i) {
            VertexT u = 0, v = 0;
            uint64_t r = 0;
            for (int l = 0; l < scale; ++l) {
                if ((l & 7) == 0) r = mix64(s);
                const unsigned p = r & 0xff;
                r >>= 8;
                u = (u << 1) | (p >= 195);
                v = (v << 1) | ((p >= 146 && p < 195) || p >= 244);
            }
            u %= n;
            v %= n;
            if (u != v) edge(u, v);
        }
        for (VertexT v = 0; v < n; v += 8)
            if (v != hub) edge(hub, v);
        if (pass == 0) {
            for (VertexT v = 0; v < n; ++v) in_off[v + 1] += in_off[v];
            sources.resize(in_off[n]);
            cur.assign(in_off.begin(), in_off.end() - 1);
        }
    }
}

int main(int argc, char** argv)
{
    VertexT n = 70001;
    uint64_t seed = 3;
    unsigned deg = 10;
    int iters = 20;
    bool verify = true;
    int npos = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
        switch (npos++) {
        case 0: n = (VertexT)strtoul(argv[i], NULL, 10); break;
        case 1: seed = strtoull(argv[i], NULL, 10); break;
        case 2: deg = (unsigned)atoi(argv[i]); break;
        case 3: iters = atoi(argv[i]); break;
        default: break;
        }
    }

    std::vector<EdgeT> h_in_off;
    std::vector<VertexT> h_out_deg;
    std::vector<VertexT> h_sources;
    make_transposed(n, deg, seed, h_in_off, h_out_deg, h_sources);
    const EdgeT m = h_in_off[n];

    // The in-edge list stays in host memory, mapped into the GPU's address
    // space (unified addressing: the host pointer is valid in kernels).
    VertexT* in_sources = nullptr;
    CUDA_CHECK(cudaHostAlloc((void**)&in_sources, (m ? m : 1) * sizeof(VertexT), cudaHostAllocMapped));
    memcpy(in_sources, h_sources.data(), m * sizeof(VertexT));
    fprintf(stderr, "n=%u m=%llu iters=%d\n", n, (unsigned long long)m, iters);

    EdgeT* in_offsets;
    VertexT* out_degree;
    float *rank, *next_rank, *contrib;
    CUDA_CHECK(cudaMalloc(&in_offsets, (n + 1) * sizeof(EdgeT)));
    CUDA_CHECK(cudaMalloc(&out_degree, n * sizeof(VertexT)));
    CUDA_CHECK(cudaMalloc(&rank, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&next_rank, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&contrib, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(in_offsets, h_in_off.data(), (n + 1) * sizeof(EdgeT), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(out_degree, h_out_deg.data(), n * sizeof(VertexT), cudaMemcpyHostToDevice));

    const unsigned blocks = (n + BLOCK - 1) / BLOCK;
    const float base = (1.0f - DAMPING) / (float)n;
    fill<float><<<blocks, BLOCK>>>(rank, 1.0f / (float)n, n);
    CUDA_CHECK(cudaGetLastError());

    auto t0 = std::chrono::high_resolution_clock::now();
    for (int it = 0; it < iters; ++it) {
        compute_contrib<float><<<blocks, BLOCK>>>(rank, out_degree, contrib, n);
        pagerank_pull<float><<<blocks, BLOCK>>>(in_offsets, in_sources, contrib, next_rank, n, base);
        CUDA_CHECK(cudaGetLastError());
        float* tmp = rank;
        rank = next_rank;
        next_rank = tmp;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    auto t1 = std::chrono::high_resolution_clock::now();
    fprintf(stderr, "time=%.3f ms (%.3f ms/iter)\n",
            std::chrono::duration<double, std::milli>(t1 - t0).count(),
            std::chrono::duration<double, std::milli>(t1 - t0).count() / (iters ? iters : 1));

    std::vector<float> h_rank(n);
    CUDA_CHECK(cudaMemcpy(h_rank.data(), rank, n * sizeof(float), cudaMemcpyDeviceToHost));

    int rc = 0;
    if (verify) {
        // Same formulation on the host, in double; compare with a tolerance
        // (the GPU works in float).
        std::vector<double> r(n, 1.0 / n), c(n), nr(n);
        for (int it = 0; it < iters; ++it) {
            for (VertexT u = 0; u < n; ++u) c[u] = h_out_deg[u] ? r[u] / h_out_deg[u] : 0.0;
            for (VertexT v = 0; v < n; ++v) {
                double s = 0;
                for (EdgeT e = h_in_off[v]; e < h_in_off[v + 1]; ++e) s += c[in_sources[e]];
                nr[v] = (1.0 - 0.85) / n + 0.85 * s;
            }
            r.swap(nr);
        }
        size_t bad = 0;
        for (VertexT v = 0; v < n; ++v) {
            const double err = std::fabs(r[v] - (double)h_rank[v]);
            if (err > 1e-3 * r[v] + 1e-9 && bad++ < 5)
                fprintf(stderr, "v=%u gpu=%.9g cpu=%.9g\n", v, h_rank[v], r[v]);
        }
        fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
        rc = bad ? 1 : 0;
    }

    // Fixed-order host sum of the per-vertex results (scaled so the mean is 1).
    double checksum = 0;
    for (VertexT v = 0; v < n; ++v) checksum += (double)h_rank[v] * n * (v % 7 + 1);
    printf("checksum: %.6f\n", checksum);

    CUDA_CHECK(cudaFree(in_offsets));
    CUDA_CHECK(cudaFree(out_degree));
    CUDA_CHECK(cudaFree(rank));
    CUDA_CHECK(cudaFree(next_rank));
    CUDA_CHECK(cudaFree(contrib));
    CUDA_CHECK(cudaFreeHost(in_sources));
    return rc;
}
