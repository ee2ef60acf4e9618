// host_idioms: the host code people write around kernels, in one program
// (issue 17, "The host idioms people write"):
//
//  1. partial copies into a device array: cudaMemcpy(&label[src], ...) and
//     cudaMemcpy(label + other, ...); a partial set cudaMemset(hits + off, ...)
//  2. an array of device pointers (double *cols[NCOLS]) allocated in a loop
//     and passed element by element (cols[c]) to a data-dependent gather
//  3. device pointers held in a struct (DeviceCsr g; g.rowptr, g.col)
//  4. a device-to-device copy between two device arrays
//  5. launches with 1024-thread blocks that are never error-checked
//  6. a brace temporary (Range{...}) as a call argument in main
//  7. the last #include inside #ifdef HOST_IDIOMS_TIMING ... #endif
//  8. a kernel that writes label[edges[i].dst] (a member of edges is read,
//     label is written)
//  9. a launch inside a host function the buffers are passed to
//     (mark_round), and a free guarded by a null test
// Every result is checked against a host reference.  Constructs today's
// parser does not understand (`k << < g, b >> > (...)`, `cudaExtent{...}` as
// an argument) are kept out of the corpus, whose files must parse cleanly
// (parse/corpus_test.go); tools/realworld/testdata/repro has them.
//
// usage: host_idioms [n] [seed] [--no-verify] [--reference-only]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#ifdef HOST_IDIOMS_TIMING
#include <chrono>
#endif

#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e__ = (x);                                                     \
    if (e__ != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__,          \
              cudaGetErrorString(e__));                                        \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define NCOLS 4

struct Edge {
  uint32_t src;
  uint32_t dst;
};

struct DeviceCsr {
  uint64_t* rowptr;
  uint32_t* col;
  uint32_t n;
};

struct Range {
  uint32_t begin;
  uint32_t end;
};

// ---------------------------------------------------------------- kernels

// one thread per edge: mark the destination of every edge whose source is
// marked (label[src] == 1); repeated until nothing changes, this marks
// everything reachable from the first marks
__global__ void mark_targets(const Edge* edges, uint32_t* label, int* changed,
                             uint64_t m)
{
  const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m && label[edges[i].src] == 1 && label[edges[i].dst] != 1) {
    label[edges[i].dst] = 1;
    *changed = 1;
  }
}

// out[i] = col[idx[i]] * weight (a column of a table, gathered)
__global__ void gather_column(const double* col, const uint32_t* idx, double* out,
                              double weight, uint32_t count)
{
  const uint32_t i = blockIdx.x * 256 + threadIdx.x;
  if (i < count) out[i] = col[idx[i]] * weight;
}

// degree of every vertex of a CSR graph, and how many neighbours are marked
__global__ void count_marked(const uint64_t* rowptr, const uint32_t* col,
                             const uint32_t* label, uint32_t* hits, uint32_t n)
{
  const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  uint32_t h = 0;
  for (uint64_t e = rowptr[v]; e < rowptr[v + 1]; e++) h += label[col[e]] == 1;
  hits[v] += h;
}

__global__ void scale(double* x, double a, uint32_t n)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

// ---------------------------------------------------------------- host

struct Host {
  std::vector<Edge> edges;
  std::vector<uint64_t> rowptr;
  std::vector<uint32_t> col;
  std::vector<double> cols[NCOLS];
  std::vector<uint32_t> idx;
};

static Host make_inputs(uint32_t n, uint64_t seed)
{
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 3;
  auto next = [&s]() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  };
  Host h;
  h.rowptr.assign(n + 1, 0);
  for (uint32_t v = 0; v < n; v++) {
    const unsigned d = (unsigned)(next() % 9);
    for (unsigned k = 0; k < d; k++) {
      const uint32_t u = (uint32_t)(next() % n);
      h.col.push_back(u);
      h.edges.push_back(Edge{v, u});
    }
    h.rowptr[v + 1] = h.col.size();
  }
  for (int c = 0; c < NCOLS; c++) {
    h.cols[c].resize(n);
    for (auto& x : h.cols[c]) x = (double)(next() % 4001) - 2000.0;
  }
  h.idx.resize(n);
  for (auto& i : h.idx) i = (uint32_t)(next() % n);
  return h;
}

// Host reference of everything main computes; returns the checksum.
static long long reference(const Host& h, uint32_t n, uint32_t src, uint32_t other,
                           std::vector<uint32_t>& label, std::vector<uint32_t>& hits,
                           std::vector<double>& gathered)
{
  label.assign(n, 0);
  label[src] = 1;
  label[other] = 1;
  std::vector<uint32_t> stack{src, other};
  while (!stack.empty()) {  // everything reachable from src and other
    const uint32_t v = stack.back();
    stack.pop_back();
    for (uint64_t e = h.rowptr[v]; e < h.rowptr[v + 1]; e++)
      if (label[h.col[e]] != 1) {
        label[h.col[e]] = 1;
        stack.push_back(h.col[e]);
      }
  }
  hits.assign(n, 7);
  for (uint32_t v = n / 4; v < n; v++) hits[v] = 0;
  for (uint32_t v = 0; v < n; v++)
    for (uint64_t e = h.rowptr[v]; e < h.rowptr[v + 1]; e++) hits[v] += label[h.col[e]] == 1;
  gathered.assign((size_t)NCOLS * n, 0);
  for (int c = 0; c < NCOLS; c++)
    for (uint32_t i = 0; i < n; i++) gathered[(size_t)c * n + i] = h.cols[c][h.idx[i]] * (c + 1) * 0.5;
  long long sum = 0;
  for (uint32_t v = 0; v < n; v++) sum += (long long)label[v] * (v % 101 + 1) + (long long)hits[v] * (v % 7 + 1);
  for (size_t i = 0; i < gathered.size(); i++) sum += (long long)(gathered[i] * 2.0) * (long long)(i % 11 + 1);
  return sum;
}

// 9. the buffers reach the launch through a host function
static void mark_round(const Edge* edges, uint32_t* label, int* changed, uint64_t m, unsigned blocks)
{
  mark_targets<<<blocks, 1024>>>(edges, label, changed, m);
}

static void check_range(Range r, uint32_t n)
{
  if (r.begin > r.end || r.end > n) {
    fprintf(stderr, "bad range [%u, %u) of %u\n", r.begin, r.end, n);
    std::exit(2);
  }
}

int main(int argc, char** argv)
{
  uint32_t n = 30011;
  uint64_t seed = 9;
  bool verify = true, reference_only = false;
  int npos = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-verify")) { verify = false; continue; }
    if (!strcmp(argv[i], "--reference-only")) { reference_only = true; continue; }
    switch (npos++) {
      case 0: n = (uint32_t)strtoul(argv[i], nullptr, 10); break;
      case 1: seed = strtoull(argv[i], nullptr, 10); break;
      default:
        fprintf(stderr, "usage: %s [n] [seed] [--no-verify] [--reference-only]\n", argv[0]);
        return 2;
    }
  }
  const Host h = make_inputs(n, seed);
  const uint64_t m = h.edges.size();
  const uint32_t src = n / 3, other = n / 5 + 1;
  check_range(Range{n / 4, n}, n);
  std::vector<uint32_t> ref_label, ref_hits;
  std::vector<double> ref_gathered;
  const long long ref_sum = reference(h, n, src, other, ref_label, ref_hits, ref_gathered);
  if (reference_only) {
    printf("checksum: %lld\n", ref_sum);
    return 0;
  }
#ifdef HOST_IDIOMS_TIMING
  auto t0 = std::chrono::steady_clock::now();
#endif

  // 1. partial copies and sets
  Edge* edges;
  uint32_t* label;
  uint32_t* hits;
  CUDA_CHECK(cudaMalloc(&edges, sizeof(Edge) * m));
  CUDA_CHECK(cudaMalloc(&label, sizeof(uint32_t) * n));
  CUDA_CHECK(cudaMalloc(&hits, sizeof(uint32_t) * n));
  CUDA_CHECK(cudaMemcpy(edges, h.edges.data(), sizeof(Edge) * m, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(label, 0, sizeof(uint32_t) * n));
  const uint32_t one = 1;
  CUDA_CHECK(cudaMemcpy(&label[src], &one, sizeof(uint32_t), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(label + other, &one, sizeof(uint32_t), cudaMemcpyHostToDevice));
  std::vector<uint32_t> sevens(n, 7);
  CUDA_CHECK(cudaMemcpy(hits, sevens.data(), sizeof(uint32_t) * n, cudaMemcpyHostToDevice));
  const uint32_t off = n / 4;
  CUDA_CHECK(cudaMemset(hits + off, 0, sizeof(uint32_t) * (n - off)));

  // 5. 1024-thread blocks, never error-checked (a launch that fails leaves
  // changed at 0 and ends the loop early)
  int* d_changed;
  CUDA_CHECK(cudaMalloc(&d_changed, sizeof(int)));
  const unsigned edge_blocks = (unsigned)((m + 1023) / 1024);
  int changed = 1;
  while (changed) {
    changed = 0;
    CUDA_CHECK(cudaMemcpy(d_changed, &changed, sizeof(int), cudaMemcpyHostToDevice));
    mark_round(edges, label, d_changed, m, edge_blocks);
    CUDA_CHECK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
  }

  // 3. device pointers in a struct
  DeviceCsr g;
  g.n = n;
  CUDA_CHECK(cudaMalloc(&g.rowptr, sizeof(uint64_t) * (n + 1)));
  CUDA_CHECK(cudaMalloc(&g.col, sizeof(uint32_t) * h.col.size()));
  CUDA_CHECK(cudaMemcpy(g.rowptr, h.rowptr.data(), sizeof(uint64_t) * (n + 1), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(g.col, h.col.data(), sizeof(uint32_t) * h.col.size(), cudaMemcpyHostToDevice));
  count_marked<<<(n + 1023) / 1024, 1024>>>(g.rowptr, g.col, label, hits, g.n);

  // 2. an array of device pointers, and 4. a device-to-device copy
  double* cols[NCOLS];
  double* gathered[NCOLS];
  uint32_t* idx;
  CUDA_CHECK(cudaMalloc(&idx, sizeof(uint32_t) * n));
  CUDA_CHECK(cudaMemcpy(idx, h.idx.data(), sizeof(uint32_t) * n, cudaMemcpyHostToDevice));
  for (int c = 0; c < NCOLS; c++) {
    CUDA_CHECK(cudaMalloc(&cols[c], sizeof(double) * n));
    CUDA_CHECK(cudaMalloc(&gathered[c], sizeof(double) * n));
    CUDA_CHECK(cudaMemcpy(cols[c], h.cols[c].data(), sizeof(double) * n, cudaMemcpyHostToDevice));
  }
  double* staging;
  CUDA_CHECK(cudaMalloc(&staging, sizeof(double) * n));
  for (int c = 0; c < NCOLS; c++) {
    gather_column<<<(n + 255) / 256, 256>>>(cols[c], idx, staging, 1.0, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(gathered[c], staging, sizeof(double) * n, cudaMemcpyDeviceToDevice));
    scale<<<(n + 1023) / 1024, 1024>>>(gathered[c], (c + 1) * 0.5, n);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
#ifdef HOST_IDIOMS_TIMING
  fprintf(stderr, "gpu: %.3f ms\n",
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
#endif

  std::vector<uint32_t> h_label(n), h_hits(n);
  std::vector<double> h_gathered((size_t)NCOLS * n);
  CUDA_CHECK(cudaMemcpy(h_label.data(), label, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h_hits.data(), hits, sizeof(uint32_t) * n, cudaMemcpyDeviceToHost));
  for (int c = 0; c < NCOLS; c++)
    CUDA_CHECK(cudaMemcpy(h_gathered.data() + (size_t)c * n, gathered[c], sizeof(double) * n, cudaMemcpyDeviceToHost));

  long long sum = 0;
  for (uint32_t v = 0; v < n; v++) sum += (long long)h_label[v] * (v % 101 + 1) + (long long)h_hits[v] * (v % 7 + 1);
  for (size_t i = 0; i < h_gathered.size(); i++) sum += (long long)(h_gathered[i] * 2.0) * (long long)(i % 11 + 1);

  int rc = 0;
  if (verify) {
    size_t bad = 0;
    for (uint32_t v = 0; v < n; v++) {
      if (h_label[v] != ref_label[v] && bad++ < 5) fprintf(stderr, "label[%u]: gpu %u cpu %u\n", v, h_label[v], ref_label[v]);
      if (h_hits[v] != ref_hits[v] && bad++ < 5) fprintf(stderr, "hits[%u]: gpu %u cpu %u\n", v, h_hits[v], ref_hits[v]);
    }
    for (size_t i = 0; i < h_gathered.size(); i++)
      if (h_gathered[i] != ref_gathered[i] && bad++ < 5) fprintf(stderr, "gathered[%zu]: gpu %g cpu %g\n", i, h_gathered[i], ref_gathered[i]);
    fprintf(stderr, "verify %s\n", bad ? "FAILED" : "ok");
    rc = bad ? 1 : 0;
  }
  printf("checksum: %lld\n", sum);

  for (int c = 0; c < NCOLS; c++) {
    CUDA_CHECK(cudaFree(cols[c]));
    CUDA_CHECK(cudaFree(gathered[c]));
  }
  CUDA_CHECK(cudaFree(staging));
  CUDA_CHECK(cudaFree(idx));
  CUDA_CHECK(cudaFree(g.rowptr));
  CUDA_CHECK(cudaFree(g.col));
  CUDA_CHECK(cudaFree(edges));
  CUDA_CHECK(cudaFree(label));
  if (hits != nullptr) {
    CUDA_CHECK(cudaFree(hits));
    hits = nullptr;
  }
  CUDA_CHECK(cudaFree(d_changed));
  return rc;
}
