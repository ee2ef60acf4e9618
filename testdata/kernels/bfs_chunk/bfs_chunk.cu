// bfs_chunk: level-synchronous BFS where each warp owns a chunk of CHUNK
// consecutive vertices (warp coarsening).  For every vertex of its chunk that
// is on the current level, the warp's lanes stride through the neighbour list.
//
// Storage arrays: row_offsets (n+1, 64-bit), col_indices (m), depth (n).
//
// usage: bfs_chunk [n] [seed] [deg] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>
#include <deque>
#include <chrono>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                     \
    do {                                                                     \
        const cudaError_t status_ = call;                                    \
        if (status_ != cudaSuccess) {                                        \
            std::fprintf(stderr, "[%s:%d] %s -> %s\n", __FILE__, __LINE__,   \
                         #call, cudaGetErrorString(status_));                \
            std::exit(EXIT_FAILURE);                                         \
        }                                                                    \
    } while (false)

typedef unsigned long long EdgeT;
typedef unsigned int VertexT;

#define BLOCK 256
constexpr int kWarpSize = 32;
constexpr unsigned kUnreached = ~0u;

template <int CHUNK, typename E, typename V>
__global__ void bfs_chunk_kernel(const E* __restrict__ row_offsets,
                                 const V* __restrict__ col_indices,
                                 unsigned* __restrict__ depth,
                                 V num_vertices, unsigned level,
                                 unsigned* __restrict__ frontier_nonempty)
{
    const unsigned long long gtid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long warp_id = gtid / kWarpSize;
    const unsigned lane = threadIdx.x & (kWarpSize - 1);

    const unsigned long long first = warp_id * CHUNK;
    if (first >= num_vertices) return;
    const unsigned long long last =
        first + CHUNK < num_vertices ? first + CHUNK : num_vertices;

    bool found = false;
    for (unsigned long long v = first; v < last; ++v) {
        if (depth[v] != level) continue;                  // warp-uniform
        const E begin = row_offsets[v];
        const E end = row_offsets[v + 1];
        for (E e = begin + lane; e < end; e += kWarpSize) {
            const V u = col_indices[e];
            if (depth[u] == kUnreached) {
                depth[u] = level + 1;
                found = true;
            }
        }
    }
    if (__any_sync(0xffffffff, found) && lane == 0)
        *frontier_nonempty = 1;
}

// ---------------------------------------------------------------------------
// Deterministic R-MAT-ish generator; hub vertex (n/2+1) points at every 8th
// vertex so there is one giant neighbour list.
namespace {

struct Rng {
    unsigned long long s;
    explicit Rng(unsigned long long seed) : s(seed) {}
    unsigned long long operator()() {
        unsigned long long z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

VertexT build_csr(VertexT n, unsigned deg, unsigned long long seed,
                  std::vector<EdgeT>& row, std::vector<VertexT>& col)
{
    int scale = 1;
    while ((1ull << scale) < n) ++scale;
    const VertexT hub = n / 2 + 1;
    row.assign(n + 1, 0);
    std::vector<EdgeT> cursor;
    for (int pass = 0; pass < 2; ++pass) {
        Rng rng(seed);
        auto add = [&](VertexT a, VertexT b) {
            if (pass == 0) ++row[a + 1];
            else col[cursor[a]++] = b;
        };
        for (unsigned long long i = 0, m = (unsigned long long)n * deg; i < m; ++i) {
            VertexT u = 0, v = 0;
            unsigned long long r = 0;
            for (int l = 0; l < scale; ++l) {
                if (l % 8 == 0) r = rng();
                const unsigned p = r & 0xff;
                r >>= 8;
                u = (u << 1) | (p >= 195);
                v = (v << 1) | ((p >= 146 && p < 195) || p >= 244);
            }
            u %= n;
            v %= n;
            if (u != v) add(u, v);
        }
        for (VertexT v = 0; v < n; v += 8)
            if (v != hub) add(hub, v);
        if (pass == 0) {
            for (VertexT v = 0; v < n; ++v) row[v + 1] += row[v];
            col.resize(row[n]);
            cursor.assign(row.begin(), row.end() - 1);
        }
    }
    return hub;
}

std::vector<unsigned> bfs_host(const std::vector<EdgeT>& row,
                               const std::vector<VertexT>& col, VertexT src)
{
    std::vector<unsigned> d(row.size() - 1, kUnreached);
    std::deque<VertexT> q{src};
    d[src] = 0;
    while (!q.empty()) {
        const VertexT v = q.front();
        q.pop_front();
        for (EdgeT e = row[v]; e < row[v + 1]; ++e)
            if (d[col[e]] == kUnreached) {
                d[col[e]] = d[v] + 1;
                q.push_back(col[e]);
            }
    }
    return d;
}

}  // namespace

int main(int argc, char** argv)
{
    VertexT n = 65533;
    unsigned long long seed = 2024;
    unsigned deg = 12;
    bool verify = true;
    std::vector<std::string> pos;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--no-verify") verify = false;
        else pos.push_back(a);
    }
    if (pos.size() > 0) n = (VertexT)std::stoul(pos[0]);
    if (pos.size() > 1) seed = std::stoull(pos[1]);
    if (pos.size() > 2) deg = (unsigned)std::stoul(pos[2]);

    std::vector<EdgeT> row;
    std::vector<VertexT> col;
    const VertexT src = build_csr(n, deg, seed, row, col);
    const EdgeT m = row[n];
    std::fprintf(stderr, "n=%u m=%llu src=%u\n", n, m, src);

    EdgeT* d_row = nullptr;
    VertexT* d_col = nullptr;
    unsigned* d_depth = nullptr;
    unsigned* d_flag = nullptr;
    CUDA_CHECK(cudaMalloc(&d_row, (n + 1) * sizeof(EdgeT)));
    CUDA_CHECK(cudaMalloc(&d_col, m * sizeof(VertexT)));
    CUDA_CHECK(cudaMalloc(&d_depth, n * sizeof(unsigned)));
    CUDA_CHECK(cudaMalloc(&d_flag, sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d_row, row.data(), (n + 1) * sizeof(EdgeT), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_col, col.data(), m * sizeof(VertexT), cudaMemcpyHostToDevice));

    std::vector<unsigned> depth(n, kUnreached);
    depth[src] = 0;
    CUDA_CHECK(cudaMemcpy(d_depth, depth.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));

    constexpr int kChunk = 8;
    const unsigned long long warps = (n + kChunk - 1) / kChunk;
    const dim3 block(BLOCK);
    const dim3 grid((unsigned)((warps * kWarpSize + BLOCK - 1) / BLOCK));

    const auto t0 = std::chrono::steady_clock::now();
    unsigned level = 0;
    for (;; ++level) {
        CUDA_CHECK(cudaMemset(d_flag, 0, sizeof(unsigned)));
        bfs_chunk_kernel<kChunk, EdgeT, VertexT><<<grid, block>>>(d_row, d_col, d_depth, n, level, d_flag);
        CUDA_CHECK(cudaGetLastError());
        unsigned flag = 0;
        CUDA_CHECK(cudaMemcpy(&flag, d_flag, sizeof(flag), cudaMemcpyDeviceToHost));
        if (!flag) break;
    }
    const auto t1 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "levels=%u time=%.3f ms\n", level + 1,
                 std::chrono::duration<double, std::milli>(t1 - t0).count());

    CUDA_CHECK(cudaMemcpy(depth.data(), d_depth, n * sizeof(unsigned), cudaMemcpyDeviceToHost));

    int rc = EXIT_SUCCESS;
    if (verify) {
        const std::vector<unsigned> ref = bfs_host(row, col, src);
        VertexT bad = 0;
        for (VertexT v = 0; v < n; ++v)
            if (ref[v] != depth[v] && bad++ < 5)
                std::fprintf(stderr, "v=%u gpu=%u cpu=%u\n", v, depth[v], ref[v]);
        std::fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
        if (bad) rc = EXIT_FAILURE;
    }

    unsigned long long checksum = 0;
    for (VertexT v = 0; v < n; ++v)
        if (depth[v] != kUnreached)
            checksum += (unsigned long long)(depth[v] + 1) * (v % 1021 + 1);
    std::printf("checksum: %llu\n", checksum);

    CUDA_CHECK(cudaFree(d_row));
    CUDA_CHECK(cudaFree(d_col));
    CUDA_CHECK(cudaFree(d_depth));
    CUDA_CHECK(cudaFree(d_flag));
    return rc;
}
