// bfs_modes: warp-per-vertex BFS whose edge array is allocated per memory
// mode, in the shape of public out-of-memory graph benchmarks.
//
// - The edge array (the one that outgrows GPU memory) is allocated in each
//   branch of a switch over the memory mode: cudaMalloc, cudaMallocManaged or
//   cudaHostAlloc (mapped), or a mapped host buffer seen through its device
//   pointer (cudaHostGetDevicePointer); the host-visible modes are filled on
//   the host (memcpy, or an element loop).
// - The kernel's thread id is formed from a 2-D grid,
//   (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x,
//   and its warp and lane ids through WARP_SHIFT / WARP_MASK from the local
//   header graph_macros.h.
// - One warp walks one vertex's neighbour list, lanes striding by WARP_SIZE.
// - The source label is set with a one-element copy (&label[src]).
// - With -r RUNS the BFS runs RUNS times; before each run after the first the
//   labels are reset and, in the managed mode, the edge array is moved to a
//   fresh cudaMallocManaged buffer (memcpy, cudaFree, pointer assignment) so
//   the run starts with a cold page cache, as graph benchmarks time it.
// Results are checked against a CPU BFS.
//
// Storage arrays: rowptr (n+1, u64), edges (m, u32), label (n, u32).
//
// usage: bfs_modes [n] [seed] [-d deg] [-m mode] [-r runs] [--no-verify] [--reference-only]
//   mode: 0 device (default), 1 managed, 2 host (mapped), 3 host (mapped, device pointer)
//   --reference-only: print the checksum of the CPU BFS and exit (no GPU)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <queue>
#include <chrono>
#include <cuda_runtime.h>
#include "graph_macros.h"

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e__ = (x);                                                     \
    if (e__ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,          \
              cudaGetErrorString(e__));                                        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// ---------------------------------------------------------------- kernel

__global__ void bfs_warp_kernel(const uint64_t* rowptr, const uint32_t* edges,
                                uint32_t* label, uint32_t level,
                                uint64_t vertex_count, bool* changed)
{
  const uint64_t tid = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t warp_id = tid >> WARP_SHIFT;
  const uint64_t lane = tid & WARP_MASK;

  if (warp_id < vertex_count && label[warp_id] == level) {
    const uint64_t start = rowptr[warp_id];
    const uint64_t end = rowptr[warp_id + 1];
    for (uint64_t i = start + lane; i < end; i += WARP_SIZE) {
      const uint32_t next = edges[i];
      if (label[next] == UNVISITED) {
        label[next] = level + 1;
        *changed = true;
      }
    }
  }
}

// ---------------------------------------------------------------- input

struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s * 0x2545F4914F6CDD1Dull;
  }
};

// Skewed random graph: each vertex draws deg targets, half of them from the
// first 1/64 of the ids (hot vertices), plus a hub with an edge to every 16th
// vertex.  Returns the hub, the BFS source.
static uint32_t make_graph(uint32_t n, unsigned deg, uint64_t seed,
                           std::vector<uint64_t>& rowptr,
                           std::vector<uint32_t>& edges)
{
  Rng rng{seed * 0x9E3779B97F4A7C15ull + 1};
  const uint32_t hub = n / 3 + 7;
  const uint32_t hot = n / 64 + 1;
  rowptr.assign(n + 1, 0);
  edges.clear();
  for (uint32_t v = 0; v < n; v++) {
    // a third of the vertices have no out-edges
    if (rng.next() % 3 == 0 && v != hub) { rowptr[v + 1] = edges.size(); continue; }
    const unsigned d = (unsigned)(rng.next() % (2 * deg + 1));
    for (unsigned k = 0; k < d; k++) {
      const uint64_t r = rng.next();
      const uint32_t u = (r & 1) ? (uint32_t)((r >> 1) % hot) : (uint32_t)((r >> 1) % n);
      if (u != v) edges.push_back(u);
    }
    if (v == hub)
      for (uint32_t u = 0; u < n; u += 16) edges.push_back(u);
    rowptr[v + 1] = edges.size();
  }
  return hub;
}

static void bfs_reference(const std::vector<uint64_t>& rowptr,
                          const std::vector<uint32_t>& edges, uint32_t source,
                          std::vector<uint32_t>& label)
{
  label.assign(rowptr.size() - 1, UNVISITED);
  std::queue<uint32_t> q;
  label[source] = 0;
  q.push(source);
  while (!q.empty()) {
    const uint32_t v = q.front();
    q.pop();
    for (uint64_t e = rowptr[v]; e < rowptr[v + 1]; e++)
      if (label[edges[e]] == UNVISITED) {
        label[edges[e]] = label[v] + 1;
        q.push(edges[e]);
      }
  }
}

static unsigned long long checksum(const std::vector<uint32_t>& label)
{
  unsigned long long sum = 0;
  for (size_t v = 0; v < label.size(); v++)
    if (label[v] != UNVISITED) sum += (unsigned long long)(label[v] + 1) * (v % 1009 + 1);
  return sum;
}

// ---------------------------------------------------------------- main

int main(int argc, char** argv)
{
  uint32_t n = 100003;
  uint64_t seed = 7;
  unsigned deg = 8;
  int mode = MEM_DEVICE;
  int runs = 1;
  bool verify = true, reference_only = false;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
    if (!strcmp(argv[i], "--reference-only")) { reference_only = true; continue; }
    if (!strcmp(argv[i], "-d") && i + 1 < argc) { deg = (unsigned)atoi(argv[++i]); continue; }
    if (!strcmp(argv[i], "-m") && i + 1 < argc) { mode = atoi(argv[++i]); continue; }
    if (!strcmp(argv[i], "-r") && i + 1 < argc) { runs = atoi(argv[++i]); continue; }
    switch (npos++) {
      case 0: n = (uint32_t)strtoul(argv[i], nullptr, 10); break;
      case 1: seed = strtoull(argv[i], nullptr, 10); break;
      default:
        fprintf(stderr, "usage: %s [n] [seed] [-d deg] [-m mode] [-r runs] [--no-verify] [--reference-only]\n", argv[0]);
        return 2;
    }
  }
  if (mode < MEM_DEVICE || mode > MEM_HOST_VIEW) {
    fprintf(stderr, "bfs_modes: unknown memory mode %d (0 device, 1 managed, 2 host, 3 host view)\n", mode);
    return 2;
  }

  std::vector<uint64_t> h_rowptr;
  std::vector<uint32_t> h_edges;
  const uint32_t src = make_graph(n, deg, seed, h_rowptr, h_edges);
  const uint64_t m = h_rowptr[n];
  fprintf(stderr, "graph: n=%u m=%llu source=%u mode=%d\n", n, (unsigned long long)m, src, mode);
  if (reference_only) {
    std::vector<uint32_t> ref;
    bfs_reference(h_rowptr, h_edges, src, ref);
    printf("checksum: %llu\n", checksum(ref));
    return 0;
  }

  const uint64_t vertex_bytes = sizeof(uint64_t) * (n + 1);
  const uint64_t edge_bytes = sizeof(uint32_t) * m;
  uint64_t* rowptr_d;
  uint32_t* edges_d;
  uint32_t* edges_h = nullptr; // MEM_HOST_VIEW: the host side of edges_d
  uint32_t* label_d;
  bool* changed_d;

  CUDA_CHECK(cudaMalloc((void**)&rowptr_d, vertex_bytes));
  CUDA_CHECK(cudaMemcpy(rowptr_d, h_rowptr.data(), vertex_bytes, cudaMemcpyHostToDevice));

  switch (mode) {
  case MEM_DEVICE:
    CUDA_CHECK(cudaMalloc((void**)&edges_d, edge_bytes));
    CUDA_CHECK(cudaMemcpy(edges_d, h_edges.data(), edge_bytes, cudaMemcpyHostToDevice));
    break;
  case MEM_MANAGED:
    CUDA_CHECK(cudaMallocManaged((void**)&edges_d, edge_bytes));
    memcpy(edges_d, h_edges.data(), edge_bytes);
    break;
  case MEM_HOST:
    CUDA_CHECK(cudaHostAlloc((void**)&edges_d, edge_bytes, cudaHostAllocMapped));
    memcpy(edges_d, h_edges.data(), edge_bytes);
    break;
  case MEM_HOST_VIEW:
    CUDA_CHECK(cudaHostAlloc((void**)&edges_h, edge_bytes, cudaHostAllocMapped));
    for (uint64_t e = 0; e < m; e++)
      edges_h[e] = h_edges[e];
    CUDA_CHECK(cudaHostGetDevicePointer((void**)&edges_d, edges_h, 0));
    break;
  }

  CUDA_CHECK(cudaMalloc((void**)&label_d, sizeof(uint32_t) * n));
  CUDA_CHECK(cudaMalloc((void**)&changed_d, sizeof(bool)));
  CUDA_CHECK(cudaMemset(label_d, 0xFF, sizeof(uint32_t) * n));
  const uint32_t zero = 0;
  CUDA_CHECK(cudaMemcpy(&label_d[src], &zero, sizeof(uint32_t), cudaMemcpyHostToDevice));

  // One warp per vertex; rows of GRID_ROW blocks.
  const uint64_t blocks = ((uint64_t)n * WARP_SIZE + BLOCK_SIZE - 1) / BLOCK_SIZE;
  const unsigned gx = blocks < GRID_ROW ? (unsigned)blocks : GRID_ROW;
  const dim3 grid(gx, (unsigned)((blocks + gx - 1) / gx));
  const dim3 block(BLOCK_SIZE);

  for (int run = 0; run < runs; run++) {
    if (run > 0) {
      if (mode == MEM_MANAGED) {
        // a cold page cache for this run: move the edges to a fresh buffer
        uint32_t* edges_tmp;
        CUDA_CHECK(cudaMallocManaged((void**)&edges_tmp, edge_bytes));
        memcpy(edges_tmp, edges_d, edge_bytes);
        CUDA_CHECK(cudaFree(edges_d));
        edges_d = edges_tmp;
      }
      CUDA_CHECK(cudaMemset(label_d, 0xFF, sizeof(uint32_t) * n));
      CUDA_CHECK(cudaMemcpy(&label_d[src], &zero, sizeof(uint32_t), cudaMemcpyHostToDevice));
    }
    auto t0 = std::chrono::high_resolution_clock::now();
    uint32_t level = 0;
    bool changed = true;
    while (changed) {
      changed = false;
      CUDA_CHECK(cudaMemset(changed_d, 0, sizeof(bool)));
      bfs_warp_kernel<<<grid, block>>>(rowptr_d, edges_d, label_d, level, n, changed_d);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaMemcpy(&changed, changed_d, sizeof(bool), cudaMemcpyDeviceToHost));
      level++;
    }
    auto t1 = std::chrono::high_resolution_clock::now();
    fprintf(stderr, "bfs run %d: %u levels, %.3f ms (grid %ux%u)\n", run, level,
            std::chrono::duration<double, std::milli>(t1 - t0).count(), grid.x, grid.y);
  }

  std::vector<uint32_t> h_label(n);
  CUDA_CHECK(cudaMemcpy(h_label.data(), label_d, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost));

  int rc = 0;
  if (verify) {
    std::vector<uint32_t> ref;
    bfs_reference(h_rowptr, h_edges, src, ref);
    size_t bad = 0;
    for (uint32_t v = 0; v < n; v++)
      if (ref[v] != h_label[v] && bad++ < 5)
        fprintf(stderr, "vertex %u: gpu %u cpu %u\n", v, h_label[v], ref[v]);
    fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
    rc = bad ? 1 : 0;
  }
  printf("checksum: %llu\n", checksum(h_label));

  CUDA_CHECK(cudaFree(rowptr_d));
  switch (mode) {
  case MEM_DEVICE:
  case MEM_MANAGED:
    CUDA_CHECK(cudaFree(edges_d));
    break;
  case MEM_HOST:
    CUDA_CHECK(cudaFreeHost(edges_d));
    break;
  case MEM_HOST_VIEW:
    CUDA_CHECK(cudaFreeHost(edges_h));
    break;
  }
  CUDA_CHECK(cudaFree(label_d));
  CUDA_CHECK(cudaFree(changed_d));
  return rc;
}
