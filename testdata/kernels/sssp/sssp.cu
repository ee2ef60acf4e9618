// sssp: single-source shortest paths, Bellman-Ford with an active-vertex
// worklist, one thread per vertex.  Distances are lowered with atomicMin, so
// the fixed point (exact shortest distances, integer weights) is independent
// of the order in which the relaxations happen.
//
// Storage arrays: row_ptr (n+1, 64-bit), col_idx (m), weights (m), dist (n).
//
// usage: sssp [n] [seed] [deg] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <climits>
#include <vector>
#include <queue>
#include <utility>
#include <functional>
#include <chrono>
#include <cuda_runtime.h>

static void check_cuda(cudaError_t err, const char* file, int line)
{
    if (err == cudaSuccess) return;
    std::fprintf(stderr, "%s(%d): CUDA error %d: %s\n", file, line, (int)err,
                 cudaGetErrorString(err));
    std::exit(EXIT_FAILURE);
}
#define CHECK(x) check_cuda((x), __FILE__, __LINE__)

typedef unsigned long long EdgeT;
typedef unsigned int VertexT;
typedef unsigned int WeightT;

#define BLOCK 256
static constexpr WeightT kInf = UINT_MAX;

template <typename E, typename V, typename W>
__global__ void sssp_relax(const E* __restrict__ row_ptr,
                           const V* __restrict__ col_idx,
                           const W* __restrict__ weights,
                           W* dist,
                           const int* __restrict__ active_in,
                           int* __restrict__ active_out,
                           V n, int* changed)
{
    const V v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || !active_in[v]) return;

    const W dv = dist[v];
    for (E e = row_ptr[v], end = row_ptr[v + 1]; e < end; ++e) {
        const V u = col_idx[e];
        const W nd = dv + weights[e];
        if (nd < dist[u]) {
            // atomicMin returns the old value: only the thread that really
            // lowered it schedules u.
            if (atomicMin(&dist[u], nd) > nd) {
                active_out[u] = 1;
                *changed = 1;
            }
        }
    }
}

template <typename V, typename W>
__global__ void sssp_init(W* dist, int* active, V n, V source)
{
    const V v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        dist[v] = (v == source) ? W(0) : W(kInf);
        active[v] = (v == source);
    }
}

// ------------------------------------------------------------------- input

struct Xoshiro {   // xoshiro256** seeded through splitmix64
    uint64_t s[4];
    explicit Xoshiro(uint64_t seed) {
        for (auto& w : s) {
            uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            w = z ^ (z >> 31);
        }
    }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t operator()() {
        const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
        s[2] ^= t; s[3] = rotl(s[3], 45);
        return r;
    }
};

struct Csr {
    std::vector<EdgeT> row;
    std::vector<VertexT> col;
    std::vector<WeightT> w;
};

// Directed R-MAT-ish graph with weights 1..64; hub n/2+1 -> every 8th vertex.
static Csr make_weighted(VertexT n, unsigned deg, uint64_t seed)
{
    Csr g;
    int scale = 1;
    while ((1ull << scale) < n) ++scale;
    const VertexT hub = n / 2 + 1;
    g.row.assign(n + 1, 0);
    std::vector<EdgeT> at;
    for (int pass = 0; pass < 2; ++pass) {
        Xoshiro rng(seed);
        auto put = [&](VertexT a, VertexT b, WeightT wt) {
            if (pass == 0) { ++g.row[a + 1]; return; }
            g.col[at[a]] = b;
            g.w[at[a]++] = wt;
        };
        for (uint64_t i = 0; i < (uint64_t)n * deg; ++i) {
            VertexT u = 0, v = 0;
            uint64_t r = 0;
            for (int l = 0; l < scale; ++l) {
                if (l % 8 == 0) r = rng();
                unsigned p = r & 0xff;
                r >>= 8;
                u = u << 1 | (p >= 195);
                v = v << 1 | ((p >= 146 && p < 195) || p >= 244);
            }
            const WeightT wt = 1 + (WeightT)(rng() % 64);
            u %= n;
            v %= n;
            if (u != v) put(u, v, wt);
        }
        for (VertexT v = 0; v < n; v += 8)
            if (v != hub) put(hub, v, 32 + v % 33);
        if (pass == 0) {
            for (VertexT v = 0; v < n; ++v) g.row[v + 1] += g.row[v];
            g.col.resize(g.row[n]);
            g.w.resize(g.row[n]);
            at.assign(g.row.begin(), g.row.end() - 1);
        }
    }
    return g;
}

static std::vector<WeightT> dijkstra(const Csr& g, VertexT src)
{
    const VertexT n = (VertexT)g.row.size() - 1;
    std::vector<WeightT> d(n, kInf);
    typedef std::pair<WeightT, VertexT> Item;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
    d[src] = 0;
    pq.push({0, src});
    while (!pq.empty()) {
        auto [dv, v] = pq.top();
        pq.pop();
        if (dv != d[v]) continue;
        for (EdgeT e = g.row[v]; e < g.row[v + 1]; ++e) {
            const WeightT nd = dv + g.w[e];
            if (nd < d[g.col[e]]) {
                d[g.col[e]] = nd;
                pq.push({nd, g.col[e]});
            }
        }
    }
    return d;
}

int main(int argc, char** argv)
{
    VertexT n = 30011;
    uint64_t seed = 5;
    unsigned deg = 8;
    bool verify = true;
    int argn = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--no-verify")) { verify = false; continue; }
        const unsigned long long x = std::strtoull(argv[i], nullptr, 10);
        if (argn == 0) n = (VertexT)x;
        else if (argn == 1) seed = x;
        else deg = (unsigned)x;
        ++argn;
    }

    const Csr g = make_weighted(n, deg, seed);
    const EdgeT m = g.row[n];
    const VertexT source = n / 2 + 1;
    std::fprintf(stderr, "n=%u m=%llu source=%u\n", n, m, source);

    EdgeT* row_ptr;
    VertexT* col_idx;
    WeightT* weights;
    WeightT* dist;
    int *active_a, *active_b, *changed_d;
    CHECK(cudaMalloc(&row_ptr, sizeof(EdgeT) * (n + 1)));
    CHECK(cudaMalloc(&col_idx, sizeof(VertexT) * m));
    CHECK(cudaMalloc(&weights, sizeof(WeightT) * m));
    CHECK(cudaMalloc(&dist, sizeof(WeightT) * n));
    CHECK(cudaMalloc(&active_a, sizeof(int) * n));
    CHECK(cudaMalloc(&active_b, sizeof(int) * n));
    CHECK(cudaMalloc(&changed_d, sizeof(int)));
    CHECK(cudaMemcpy(row_ptr, g.row.data(), sizeof(EdgeT) * (n + 1), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(col_idx, g.col.data(), sizeof(VertexT) * m, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(weights, g.w.data(), sizeof(WeightT) * m, cudaMemcpyHostToDevice));

    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    const unsigned grid = (n + BLOCK - 1) / BLOCK;

    const auto t0 = std::chrono::steady_clock::now();
    sssp_init<VertexT, WeightT><<<grid, BLOCK, 0, stream>>>(dist, active_a, n, source);
    CHECK(cudaGetLastError());
    int rounds = 0, changed = 1;
    while (changed) {
        CHECK(cudaMemsetAsync(active_b, 0, sizeof(int) * n, stream));
        CHECK(cudaMemsetAsync(changed_d, 0, sizeof(int), stream));
        sssp_relax<EdgeT, VertexT, WeightT><<<grid, BLOCK, 0, stream>>>(
            row_ptr, col_idx, weights, dist, active_a, active_b, n, changed_d);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(&changed, changed_d, sizeof(int), cudaMemcpyDeviceToHost, stream));
        CHECK(cudaStreamSynchronize(stream));
        std::swap(active_a, active_b);
        ++rounds;
    }
    const auto t1 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "rounds=%d time=%.3f ms\n", rounds,
                 std::chrono::duration<double, std::milli>(t1 - t0).count());

    std::vector<WeightT> h_dist(n);
    CHECK(cudaMemcpy(h_dist.data(), dist, sizeof(WeightT) * n, cudaMemcpyDeviceToHost));

    int rc = 0;
    if (verify) {
        const std::vector<WeightT> ref = dijkstra(g, source);
        size_t bad = 0;
        for (VertexT v = 0; v < n; ++v)
            if (ref[v] != h_dist[v] && bad++ < 5)
                std::fprintf(stderr, "v=%u gpu=%u cpu=%u\n", v, h_dist[v], ref[v]);
        std::fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
        rc = bad ? 1 : 0;
    }

    unsigned long long checksum = 0;
    for (VertexT v = 0; v < n; ++v)
        if (h_dist[v] != kInf) checksum += (unsigned long long)h_dist[v] * (v % 89 + 1);
    std::printf("checksum: %llu\n", checksum);

    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(row_ptr));
    CHECK(cudaFree(col_idx));
    CHECK(cudaFree(weights));
    CHECK(cudaFree(dist));
    CHECK(cudaFree(active_a));
    CHECK(cudaFree(active_b));
    CHECK(cudaFree(changed_d));
    return rc;
}
