// Bytes and requests per BFS through the BaM cache, old vs new line size
// and replacement (issue 18, item 4), on a GPU.
//
// Builds an R-MAT graph (Graph 500 parameters, symmetrized, vertex ids
// permuted; duplicate edges kept) with 8-byte edges, then for each
// configuration below makes a bam::runtime, puts the edge array in it
// (a cache of a quarter of the edge array unless --cache-bytes), and runs
// BFS from --sources sources, each several levels of a warp-per-vertex
// kernel: "naive" is what `bamgen port --array bfs:col` writes (col[e]
// per lane), "odt" what `--opt odt` writes (bam::odt_tile over the plan's
// work items). Offsets and labels stay in GPU memory, as in the issue's
// benchmark. Every BFS's labels are checked against a CPU BFS.
//
// Per configuration (one JSON object per line on stdout):
//   ms_per_bfs          mean time of a BFS (the first BFS of a configuration,
//                       from a cold cache, is not counted)
//   lines_per_bfs       edge-array lines read from the backend per BFS
//                       (runtime::stats_of): the request count on emu/nvme
//   bytes_ratio         bytes read per BFS / edge array bytes (the issue's
//                       bar for the host backend: <= 1.5 at a quarter cache)
//   ok                  every BFS's levels equal the CPU's
// plus two baselines in the same run: the kernel on the edges in GPU memory
// ("gpu_memory") and in mapped pinned host memory ("zero_copy").
//
//   bfs_lines [--scale 22] [--degree 16] [--sources 4] [--cache-frac 0.25]
//             [--only NAME[,NAME..]] [--emu-latency-us 10] [--emu-iops 1e6]
//
// Build: bench/lines/run.sh (or nvcc -O3 -std=c++17 -arch=sm_90
//        -I runtime/cuda/include bench/lines/bfs_lines.cu -L runtime/cuda/build -lbam -lcuda -lpthread).
#include <bam/bam.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                           \
  do {                                                                                                  \
    cudaError_t e_ = (x);                                                                               \
    if (e_ != cudaSuccess) {                                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));          \
      std::exit(1);                                                                                     \
    }                                                                                                   \
  } while (0)

using edge_t = unsigned long long;
constexpr unsigned unvisited = 0xffffffffu;

// ------------------------------------------------------------------ kernels

// Warp per vertex. Col is `const edge_t*` for the original (edges in GPU or
// mapped host memory) and `bam::array<const edge_t>` for the naive port:
// one body, so the two differ only in how col[e] is read.
template <class Col>
__global__ void bfs_warp(const edge_t* rowptr, Col col, unsigned* label, unsigned level, unsigned long long n,
                         int* changed)
{
  const unsigned long long tid = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  const unsigned long long warps = gridDim.x * 1ull * blockDim.x / 32;
  const unsigned lane = threadIdx.x & 31u;
  for (unsigned long long w = tid / 32; w < n; w += warps) {
    if (label[w] != level)
      continue;
    for (edge_t e = rowptr[w] + lane; e < rowptr[w + 1]; e += 32) {
      const edge_t v = col[e];
      if (label[v] == unvisited) {
        label[v] = level + 1;
        *changed = 1;
      }
    }
  }
}
constexpr auto bfs_plain = bfs_warp<const edge_t*>;
constexpr auto bfs_naive = bfs_warp<bam::array<const edge_t>>;

// The ODT port (the shape `bamgen port --opt odt` writes for bfs_warp).
__global__ void bfs_odt(const edge_t* rowptr, bam::array<const edge_t> col, unsigned* label, unsigned level,
                        unsigned long long n, int* changed, const bam::odt_plan plan)
{
  bam::odt_tile tile(col);
  auto body = [&](unsigned long long v, unsigned long long lo, unsigned long long hi) {
    const unsigned lane = bam::lane_id();
    if (v >= n || label[v] != level)
      return;
    const edge_t start = rowptr[v], end = rowptr[v + 1];
    for (edge_t e = bam::odt_first_strided((start & ~31ull) + lane, lo, 32); e < end && e < hi; e += 32) {
      if (e >= start) {
        const edge_t u = tile[e];
        if (label[u] == unvisited) {
          label[u] = level + 1;
          *changed = 1;
        }
      }
    }
  };
  auto active = [&](unsigned long long v) -> bool { return v < n && label[v] == level; };
  bam::odt_for_each_tile(plan, rowptr, tile, body, active);
}

// ------------------------------------------------------------------ graph

struct graph {
  unsigned n = 0;
  std::vector<edge_t> rowptr, col;
};

// R-MAT with a=0.57, b=c=0.19, both directions, self loops dropped,
// duplicates kept, ids permuted; CSR by counting sort (fast at 2^24).
graph make_rmat(int scale, int degree, uint64_t seed)
{
  const unsigned n = 1u << scale;
  const uint64_t m = uint64_t(n) * uint64_t(degree);
  std::mt19937_64 rng(seed);
  std::vector<unsigned> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<unsigned> src, dst;
  src.reserve(2 * m);
  dst.reserve(2 * m);
  for (uint64_t e = 0; e < m; ++e) {
    unsigned a = 0, b = 0;
    for (int bit = 0; bit < scale; ++bit) {
      const double r = double(rng() >> 11) * (1.0 / 9007199254740992.0);
      const unsigned ia = r > 0.76 ? 1u : 0u;                  // c or d
      const unsigned ib = (r > 0.57 && r <= 0.76) || r > 0.95 ? 1u : 0u; // b or d
      a |= ia << bit;
      b |= ib << bit;
    }
    if (a == b)
      continue;
    a = perm[a];
    b = perm[b];
    src.push_back(a);
    dst.push_back(b);
    src.push_back(b);
    dst.push_back(a);
  }
  graph g;
  g.n = n;
  g.rowptr.assign(size_t(n) + 1, 0);
  for (unsigned s : src)
    g.rowptr[s + 1]++;
  for (unsigned v = 0; v < n; ++v)
    g.rowptr[v + 1] += g.rowptr[v];
  g.col.resize(src.size());
  std::vector<edge_t> pos(g.rowptr.begin(), g.rowptr.end() - 1);
  for (size_t i = 0; i < src.size(); ++i)
    g.col[pos[src[i]]++] = dst[i];
  return g;
}

std::vector<unsigned> cpu_bfs(const graph& g, unsigned s)
{
  std::vector<unsigned> level(g.n, unvisited);
  std::vector<unsigned> cur{s}, next;
  level[s] = 0;
  for (unsigned l = 0; !cur.empty(); ++l) {
    next.clear();
    for (unsigned v : cur)
      for (edge_t e = g.rowptr[v]; e < g.rowptr[v + 1]; ++e)
        if (level[g.col[e]] == unvisited) {
          level[g.col[e]] = l + 1;
          next.push_back(unsigned(g.col[e]));
        }
    cur.swap(next);
  }
  return level;
}

// ------------------------------------------------------------------ runs

struct run_cfg {
  const char* name;
  const char* kernel;    // plain_gpu, plain_zero_copy, naive, odt
  bam::backend backend;
  size_t line_bytes;     // 0: the backend's default
  const char* policy;    // fifo | freq
  const char* placement; // BAM_HOST_PLACEMENT for host: cache | direct
};

struct options {
  int scale = 22, degree = 16, sources = 4;
  double cache_frac = 0.25, emu_latency_us = 10, emu_iops = 1e6;
  size_t cache_bytes = 0;
  std::string only;
};

struct device_graph {
  edge_t* rowptr = nullptr;
  unsigned* label = nullptr;
  int* changed = nullptr;
};

// One BFS; returns its milliseconds. `launch(level)` runs one level.
template <class Launch>
double bfs_once(const device_graph& d, unsigned n, unsigned src, Launch launch, std::vector<unsigned>& out)
{
  CK(cudaMemset(d.label, 0xff, size_t(n) * sizeof(unsigned)));
  const unsigned zero = 0;
  CK(cudaMemcpy(d.label + src, &zero, sizeof zero, cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  int changed = 1;
  for (unsigned level = 0; changed; ++level) {
    changed = 0;
    CK(cudaMemcpy(d.changed, &changed, sizeof changed, cudaMemcpyHostToDevice));
    launch(level);
    CK(cudaGetLastError());
    CK(cudaMemcpy(&changed, d.changed, sizeof changed, cudaMemcpyDeviceToHost));
  }
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  out.resize(n);
  CK(cudaMemcpy(out.data(), d.label, size_t(n) * sizeof(unsigned), cudaMemcpyDeviceToHost));
  return ms;
}

unsigned grid_for(const void* kernel, unsigned block)
{
  int dev = 0, sms = 0, per_sm = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(block), 0));
  return unsigned(std::max(1, sms * std::max(1, per_sm)));
}



int main(int argc, char** argv)
{
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bfs_lines: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--scale")
      o.scale = std::atoi(val());
    else if (a == "--degree")
      o.degree = std::atoi(val());
    else if (a == "--sources")
      o.sources = std::atoi(val());
    else if (a == "--cache-frac")
      o.cache_frac = std::atof(val());
    else if (a == "--cache-bytes")
      o.cache_bytes = bam::parse_size(val(), "--cache-bytes");
    else if (a == "--only")
      o.only = std::string(",") + val() + ",";
    else if (a == "--emu-latency-us")
      o.emu_latency_us = std::atof(val());
    else if (a == "--emu-iops")
      o.emu_iops = std::atof(val());
    else {
      std::fprintf(stderr, "usage: bfs_lines [--scale S] [--degree D] [--sources K] [--cache-frac F] [--cache-bytes B] "
                           "[--only NAME,..] [--emu-latency-us U] [--emu-iops N]\n");
      return 2;
    }
  }
  if (o.scale < 10 || o.scale > 26 || o.sources < 2 || !(o.cache_frac > 0 && o.cache_frac <= 1)) {
    std::fprintf(stderr, "bfs_lines: bad option (scale 10..26, sources >= 2, cache-frac in (0, 1])\n");
    return 2;
  }

  const auto t0 = std::chrono::steady_clock::now();
  const graph g = make_rmat(o.scale, o.degree, 1);
  const size_t edge_bytes = g.col.size() * sizeof(edge_t);
  std::mt19937_64 rng(3);
  std::vector<unsigned> sources;
  while (int(sources.size()) < o.sources) {
    const unsigned s = unsigned(rng() % g.n);
    if (g.rowptr[s + 1] > g.rowptr[s])
      sources.push_back(s);
  }
  std::vector<std::vector<unsigned>> want;
  for (unsigned s : sources)
    want.push_back(cpu_bfs(g, s));
  const size_t cache_bytes = o.cache_bytes ? o.cache_bytes : size_t(double(edge_bytes) * o.cache_frac);
  std::fprintf(stderr, "bfs_lines: R-MAT scale %d degree %d: %u vertices, %zu edges (%.1f MiB of 8-byte edges), cache "
                       "%.1f MiB, %d sources; graph and CPU BFS in %.1f s\n",
               o.scale, o.degree, g.n, g.col.size(), double(edge_bytes) / (1 << 20), double(cache_bytes) / (1 << 20),
               o.sources, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  device_graph d;
  CK(cudaMalloc(&d.rowptr, g.rowptr.size() * sizeof(edge_t)));
  CK(cudaMemcpy(d.rowptr, g.rowptr.data(), g.rowptr.size() * sizeof(edge_t), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&d.label, size_t(g.n) * sizeof(unsigned)));
  CK(cudaMalloc(&d.changed, sizeof(int)));
  const unsigned block = 256;

  // old = the runtime before issue 18's item 4 (4 KiB lines, plain clock
  // hand); new = the defaults now (host 512 B lines, emu 4 KiB; freq).
  const run_cfg runs[] = {
      {"gpu_memory", "plain_gpu", bam::backend::hbm, 0, "freq", "cache"},
      {"zero_copy", "plain_zero_copy", bam::backend::hbm, 0, "freq", "cache"},
      {"host_old_naive", "naive", bam::backend::host, 4096, "fifo", "cache"},
      {"host_new_naive", "naive", bam::backend::host, 0, "freq", "cache"},
      {"host_512_fifo_naive", "naive", bam::backend::host, 512, "fifo", "cache"},
      {"host_4096_freq_naive", "naive", bam::backend::host, 4096, "freq", "cache"},
      {"host_256_freq_naive", "naive", bam::backend::host, 256, "freq", "cache"},
      {"host_old_odt", "odt", bam::backend::host, 4096, "fifo", "cache"},
      {"host_new_odt", "odt", bam::backend::host, 0, "freq", "cache"},
      {"host_direct_naive", "naive", bam::backend::host, 0, "freq", "direct"},
      {"emu_old_odt", "odt", bam::backend::emu, 4096, "fifo", "cache"},
      {"emu_new_odt", "odt", bam::backend::emu, 0, "freq", "cache"},
      {"emu_old_naive", "naive", bam::backend::emu, 4096, "fifo", "cache"},
      {"emu_new_naive", "naive", bam::backend::emu, 0, "freq", "cache"},
  };
  int failures = 0;
  std::vector<unsigned> got;
  for (const run_cfg& r : runs) {
    if (!o.only.empty() && o.only.find(std::string(",") + r.name + ",") == std::string::npos)
      continue;
    double ms_sum = 0, lines_sum = 0;
    int counted = 0;
    bool ok = true;
    const std::string kernel = r.kernel;
    size_t line = 0;
    std::string policy = "-";
    if (kernel == "plain_gpu" || kernel == "plain_zero_copy") {
      edge_t* col = nullptr;
      edge_t* host = nullptr;
      if (kernel == "plain_gpu") {
        CK(cudaMalloc(&col, edge_bytes));
        CK(cudaMemcpy(col, g.col.data(), edge_bytes, cudaMemcpyHostToDevice));
      } else {
        CK(cudaHostAlloc(&host, edge_bytes, cudaHostAllocMapped));
        std::memcpy(host, g.col.data(), edge_bytes);
        CK(cudaHostGetDevicePointer(&col, host, 0));
      }
      const unsigned grid = grid_for(reinterpret_cast<const void*>(bfs_plain), block);
      for (size_t k = 0; k < sources.size(); ++k) {
        const double ms = bfs_once(d, g.n, sources[k], [&](unsigned level) {
          bfs_plain<<<grid, block>>>(d.rowptr, col, d.label, level, g.n, d.changed);
        }, got);
        ok = ok && got == want[k];
        if (k > 0) {
          ms_sum += ms;
          ++counted;
        }
      }
      if (host != nullptr)
        CK(cudaFreeHost(host));
      else
        CK(cudaFree(col));
    } else {
      bam::config c;
      c.kind = r.backend;
      c.cache_bytes = cache_bytes;
      c.line_bytes = r.line_bytes;
      c.cache_policy = r.policy;
      c.stats = true;
      c.emu_latency_us = o.emu_latency_us;
      c.emu_iops = o.emu_iops;
      c.emu_threads = 8;
      setenv("BAM_HOST_PLACEMENT", r.placement, 1);
      setenv("BAM_GPU_BUDGET", "0", 1);
      bam::runtime rt(c);
      line = rt.cfg().line_bytes;
      policy = r.policy;
      bam::array<const edge_t> col = rt.array_from_host<edge_t>(g.col.data(), g.col.size());
      bam::odt_plan plan;
      const bool odt = kernel == "odt";
      if (odt)
        plan = bam::build_odt_plan(d.rowptr, g.n, g.col.size(), col.elems_per_line(), rt.cfg().odt_item_vertices);
      const unsigned grid = odt ? 0 : grid_for(reinterpret_cast<const void*>(bfs_naive), block);
      const dim3 ogrid = odt ? bam::odt_grid(plan, dim3(block), rt) : dim3(1);
      const dim3 oblock = odt ? bam::odt_block(bfs_odt, dim3(block)) : dim3(block);
      for (size_t k = 0; k < sources.size(); ++k) {
        const uint64_t before = rt.stats_of(col).io_reads;
        const double ms = bfs_once(d, g.n, sources[k], [&](unsigned level) {
          if (odt)
            bfs_odt<<<ogrid, oblock>>>(d.rowptr, col, d.label, level, g.n, d.changed, plan);
          else
            bfs_naive<<<grid, block>>>(d.rowptr, col, d.label, level, g.n, d.changed);
        }, got);
        rt.check();
        const uint64_t lines = rt.stats_of(col).io_reads - before;
        ok = ok && got == want[k];
        if (k > 0) {
          ms_sum += ms;
          lines_sum += double(lines);
          ++counted;
        }
      }
      if (odt)
        bam::free_odt_plan(plan);
      std::fprintf(stderr, "== %s\n", r.name);
      rt.print_stats(stderr);
    }
    failures += ok ? 0 : 1;
    const double lines = counted ? lines_sum / counted : 0;
    std::printf("{\"name\": \"%s\", \"kernel\": \"%s\", \"backend\": \"%s\", \"line_bytes\": %zu, \"policy\": \"%s\", "
                "\"placement\": \"%s\", \"scale\": %d, \"edges\": %zu, \"edge_bytes\": %zu, \"cache_bytes\": %zu, "
                "\"ms_per_bfs\": %.3f, \"lines_per_bfs\": %.0f, \"bytes_ratio\": %.3f, \"ok\": %s}\n",
                r.name, r.kernel, kernel.rfind("plain", 0) == 0 ? "-" : bam::backend_name(r.backend), line,
                policy.c_str(), kernel.rfind("plain", 0) == 0 ? "-" : r.placement, o.scale, g.col.size(), edge_bytes,
                cache_bytes, counted ? ms_sum / counted : 0.0, lines, double(lines) * double(line) / double(edge_bytes),
                ok ? "true" : "false");
    std::fflush(stdout);
  }
  CK(cudaFree(d.rowptr));
  CK(cudaFree(d.label));
  CK(cudaFree(d.changed));
  if (failures)
    std::fprintf(stderr, "bfs_lines: %d configuration(s) computed wrong BFS levels\n", failures);
  return failures ? 1 : 0;
}
