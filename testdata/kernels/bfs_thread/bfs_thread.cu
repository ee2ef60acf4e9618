// bfs_thread: level-synchronous BFS, one thread per vertex, CSR graph.
//
// Every iteration launches one thread per vertex; a thread whose vertex is in
// the current level walks its whole neighbour list and labels unvisited
// neighbours with level+1.  Racing writers all store the same value, so the
// result (BFS depth of every vertex) is deterministic.
//
// Storage arrays: rowptr (n+1), colidx (m), level (n).
//
// usage: bfs_thread [n] [seed] [avg_degree] [--no-verify]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <queue>
#include <chrono>
#include <cuda_runtime.h>

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e__ = (x);                                                     \
    if (e__ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,          \
              cudaGetErrorString(e__));                                        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

typedef unsigned int EdgeT;   // 32-bit offsets: fine up to 4G edges
typedef unsigned int VertexT;
#define BLOCK 256
#define UNVISITED 0xffffffffu

// ---------------------------------------------------------------- kernels

__global__ void bfs_init(unsigned* level, VertexT n, VertexT source)
{
  VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) level[v] = (v == source) ? 0u : UNVISITED;
}

__global__ void bfs_expand(const EdgeT* __restrict__ rowptr,
                           const VertexT* __restrict__ colidx,
                           unsigned* level, VertexT n, unsigned cur,
                           int* changed)
{
  VertexT v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  const EdgeT begin = rowptr[v];
  const EdgeT end = rowptr[v + 1];
  for (EdgeT e = begin; e < end; e++) {
    VertexT u = colidx[e];
    if (level[u] == UNVISITED) {
      level[u] = cur + 1;
      *changed = 1;
    }
  }
}

// ---------------------------------------------------------------- input

struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// R-MAT (a=.57 b=.19 c=.19) directed graph plus one hub vertex linked to every
// 8th vertex.  Two passes over the same random stream: count, then fill.
static VertexT make_graph(VertexT n, unsigned deg, uint64_t seed,
                          std::vector<EdgeT>& rowptr, std::vector<VertexT>& col)
{
  int scale = 1;
  while ((1ull << scale) < n) scale++;
  const uint64_t m = (uint64_t)n * deg;
  const VertexT hub = n / 2 + 1;
  rowptr.assign(n + 1, 0);
  std::vector<EdgeT> fill;
  for (int pass = 0; pass < 2; pass++) {
    SplitMix rng{seed};
    auto emit = [&](VertexT a, VertexT b) {
      if (pass == 0) rowptr[a + 1]++;
      else col[fill[a]++] = b;
    };
    for (uint64_t i = 0; i < m; i++) {
      VertexT u = 0, v = 0;
      uint64_t bits = 0;
      for (int l = 0; l < scale; l++) {
        if (l % 8 == 0) bits = rng.next();
        unsigned p = bits & 0xff;
        bits >>= 8;
        u <<= 1; v <<= 1;
        if (p < 146) {}
        else if (p < 195) v |= 1;
        else if (p < 244) u |= 1;
        else { u |= 1; v |= 1; }
      }
      u %= n; v %= n;
      if (u != v) emit(u, v);
    }
    for (VertexT v = 0; v < n; v += 8)
      if (v != hub) emit(hub, v);
    if (pass == 0) {
      for (VertexT v = 0; v < n; v++) rowptr[v + 1] += rowptr[v];
      col.resize(rowptr[n]);
      fill.assign(rowptr.begin(), rowptr.end() - 1);
    }
  }
  return hub;
}

static void bfs_reference(const std::vector<EdgeT>& rowptr,
                          const std::vector<VertexT>& col, VertexT source,
                          std::vector<unsigned>& level)
{
  level.assign(rowptr.size() - 1, UNVISITED);
  std::queue<VertexT> q;
  level[source] = 0;
  q.push(source);
  while (!q.empty()) {
    VertexT v = q.front();
    q.pop();
    for (EdgeT e = rowptr[v]; e < rowptr[v + 1]; e++) {
      VertexT u = col[e];
      if (level[u] == UNVISITED) {
        level[u] = level[v] + 1;
        q.push(u);
      }
    }
  }
}

// ---------------------------------------------------------------- main

int main(int argc, char** argv)
{
  VertexT n = 50021;
  uint64_t seed = 1;
  unsigned deg = 8;
  bool verify = true;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
    switch (npos++) {
      case 0: n = (VertexT)strtoul(argv[i], nullptr, 10); break;
      case 1: seed = strtoull(argv[i], nullptr, 10); break;
      case 2: deg = (unsigned)strtoul(argv[i], nullptr, 10); break;
      default: fprintf(stderr, "usage: %s [n] [seed] [deg] [--no-verify]\n", argv[0]); return 2;
    }
  }

  std::vector<EdgeT> h_rowptr;
  std::vector<VertexT> h_col;
  const VertexT source = make_graph(n, deg, seed, h_rowptr, h_col);
  const EdgeT m = h_rowptr[n];
  fprintf(stderr, "graph: n=%u m=%u source=%u\n", n, m, source);

  EdgeT* rowptr;
  VertexT* colidx;
  unsigned* level;
  int* d_changed;
  CUDA_CHECK(cudaMalloc(&rowptr, sizeof(EdgeT) * (n + 1)));
  CUDA_CHECK(cudaMalloc(&colidx, sizeof(VertexT) * m));
  CUDA_CHECK(cudaMalloc(&level, sizeof(unsigned) * n));
  CUDA_CHECK(cudaMalloc(&d_changed, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(rowptr, h_rowptr.data(), sizeof(EdgeT) * (n + 1), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(colidx, h_col.data(), sizeof(VertexT) * m, cudaMemcpyHostToDevice));

  const unsigned blocks = (n + BLOCK - 1) / BLOCK;
  bfs_init<<<blocks, BLOCK>>>(level, n, source);
  CUDA_CHECK(cudaGetLastError());

  auto start = std::chrono::high_resolution_clock::now();
  unsigned cur = 0;
  int changed = 1;
  while (changed) {
    changed = 0;
    CUDA_CHECK(cudaMemcpy(d_changed, &changed, sizeof(int), cudaMemcpyHostToDevice));
    bfs_expand<<<blocks, BLOCK>>>(rowptr, colidx, level, n, cur, d_changed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
    cur++;
  }
  auto stop = std::chrono::high_resolution_clock::now();
  fprintf(stderr, "bfs: %u levels, %.3f ms\n", cur,
          std::chrono::duration<double, std::milli>(stop - start).count());

  std::vector<unsigned> h_level(n);
  CUDA_CHECK(cudaMemcpy(h_level.data(), level, sizeof(unsigned) * n, cudaMemcpyDeviceToHost));

  int rc = 0;
  if (verify) {
    std::vector<unsigned> ref;
    bfs_reference(h_rowptr, h_col, source, ref);
    size_t bad = 0;
    for (VertexT v = 0; v < n; v++)
      if (ref[v] != h_level[v] && bad++ < 5)
        fprintf(stderr, "vertex %u: gpu %u cpu %u\n", v, h_level[v], ref[v]);
    fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
    rc = bad ? 1 : 0;
  }

  unsigned long long sum = 0, reached = 0;
  for (VertexT v = 0; v < n; v++) {
    if (h_level[v] == UNVISITED) continue;
    reached++;
    sum += (unsigned long long)(h_level[v] + 1) * (v % 1021 + 1);
  }
  fprintf(stderr, "reached %llu of %u vertices\n", reached, n);
  printf("checksum: %llu\n", sum);

  CUDA_CHECK(cudaFree(rowptr));
  CUDA_CHECK(cudaFree(colidx));
  CUDA_CHECK(cudaFree(level));
  CUDA_CHECK(cudaFree(d_changed));
  return rc;
}
