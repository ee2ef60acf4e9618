// bfs_multi: a BFS split over three files the way projects are: the kernel
// in frontier.cu, its prototype in frontier.cuh, allocation, copies and the
// launch loop here.  Build: nvcc main.cu frontier.cu (no -rdc needed: the
// kernel is only launched from the host).
//
// Storage arrays: rowptr (n+1, u64), colidx (m, u32), depth (n, u32).
//
// usage: bfs_multi [n] [seed] [deg] [--no-verify] [--reference-only]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <queue>
#include <cuda_runtime.h>
#include "frontier.cuh"

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e__ = (x);                                                     \
    if (e__ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,          \
              cudaGetErrorString(e__));                                        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define THREADS 256

// Random graph with a power-law flavour: vertex v gets about
// deg * 4 / (1 + v % 8) out-edges, targets uniform.  Vertex 0 is the source.
static void make_graph(VertexT n, unsigned deg, uint64_t seed,
                       std::vector<EdgeT>& rowptr, std::vector<VertexT>& col)
{
  uint64_t s = seed | 1;
  auto next = [&s]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 17;
  };
  rowptr.assign(n + 1, 0);
  col.clear();
  for (VertexT v = 0; v < n; v++) {
    const unsigned d = (unsigned)(next() % (deg * 8 / (1 + v % 8) + 1));
    for (unsigned k = 0; k < d; k++) col.push_back((VertexT)(next() % n));
    rowptr[v + 1] = col.size();
  }
}

static std::vector<uint32_t> bfs_reference(const std::vector<EdgeT>& rowptr,
                                           const std::vector<VertexT>& col)
{
  std::vector<uint32_t> depth(rowptr.size() - 1, BFS_UNVISITED);
  std::queue<VertexT> q;
  depth[0] = 0;
  q.push(0);
  while (!q.empty()) {
    const VertexT v = q.front();
    q.pop();
    for (EdgeT e = rowptr[v]; e < rowptr[v + 1]; e++)
      if (depth[col[e]] == BFS_UNVISITED) {
        depth[col[e]] = depth[v] + 1;
        q.push(col[e]);
      }
  }
  return depth;
}

static unsigned long long checksum(const std::vector<uint32_t>& depth)
{
  unsigned long long sum = 0;
  for (size_t v = 0; v < depth.size(); v++)
    if (depth[v] != BFS_UNVISITED) sum += (unsigned long long)(depth[v] + 3) * (v % 997 + 1);
  return sum;
}

int main(int argc, char** argv)
{
  VertexT n = 60013;
  uint64_t seed = 3;
  unsigned deg = 6;
  bool verify = true, reference_only = false;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
    if (!strcmp(argv[i], "--reference-only")) { reference_only = true; continue; }
    switch (npos++) {
      case 0: n = (VertexT)strtoul(argv[i], nullptr, 10); break;
      case 1: seed = strtoull(argv[i], nullptr, 10); break;
      case 2: deg = (unsigned)strtoul(argv[i], nullptr, 10); break;
      default:
        fprintf(stderr, "usage: %s [n] [seed] [deg] [--no-verify] [--reference-only]\n", argv[0]);
        return 2;
    }
  }

  std::vector<EdgeT> h_rowptr;
  std::vector<VertexT> h_col;
  make_graph(n, deg, seed, h_rowptr, h_col);
  const EdgeT m = h_rowptr[n];
  fprintf(stderr, "graph: n=%u m=%llu\n", n, (unsigned long long)m);
  if (reference_only) {
    printf("checksum: %llu\n", checksum(bfs_reference(h_rowptr, h_col)));
    return 0;
  }

  std::vector<uint32_t> h_depth(n, BFS_UNVISITED);
  h_depth[0] = 0;

  EdgeT* rowptr;
  VertexT* colidx;
  uint32_t* depth;
  int* d_changed;
  CUDA_CHECK(cudaMalloc(&rowptr, sizeof(EdgeT) * (n + 1)));
  CUDA_CHECK(cudaMalloc(&colidx, sizeof(VertexT) * m));
  CUDA_CHECK(cudaMalloc(&depth, sizeof(uint32_t) * n));
  CUDA_CHECK(cudaMalloc(&d_changed, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(rowptr, h_rowptr.data(), sizeof(EdgeT) * (n + 1), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(colidx, h_col.data(), sizeof(VertexT) * m, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(depth, h_depth.data(), sizeof(uint32_t) * n, cudaMemcpyHostToDevice));

  const unsigned blocks = (n + THREADS - 1) / THREADS;
  uint32_t cur = 0;
  int changed = 1;
  while (changed) {
    changed = 0;
    CUDA_CHECK(cudaMemcpy(d_changed, &changed, sizeof(int), cudaMemcpyHostToDevice));
    bfs_frontier<<<blocks, THREADS>>>(rowptr, colidx, depth, n, cur, d_changed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
    cur++;
  }
  fprintf(stderr, "bfs: %u levels\n", cur);
  CUDA_CHECK(cudaMemcpy(h_depth.data(), depth, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost));

  int rc = 0;
  if (verify) {
    const std::vector<uint32_t> ref = bfs_reference(h_rowptr, h_col);
    size_t bad = 0;
    for (VertexT v = 0; v < n; v++)
      if (ref[v] != h_depth[v] && bad++ < 5)
        fprintf(stderr, "vertex %u: gpu %u cpu %u\n", v, h_depth[v], ref[v]);
    fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
    rc = bad ? 1 : 0;
  }
  printf("checksum: %llu\n", checksum(h_depth));

  CUDA_CHECK(cudaFree(rowptr));
  CUDA_CHECK(cudaFree(colidx));
  CUDA_CHECK(cudaFree(depth));
  CUDA_CHECK(cudaFree(d_changed));
  return rc;
}
