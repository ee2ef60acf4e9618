// bam_bench: cache hit/miss bandwidth, IOPS and latency per backend, with
// baselines measured in the same run. JSON on stdout, progress on stderr.
//
//   bam_bench [--quick] [--hit-only] [--data-mib N]
//
// Bars (ratios to the same run's baselines):
//   claware_hit / plain_hbm_read >= 0.5
//   host claware_miss / pinned_h2d >= 0.7
//   emu random 4 KiB reads >= 1.5M/s
#include <bam/bam.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <numeric>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

#define CUDA_OK(x)                                                                          \
  do {                                                                                      \
    cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

cudaDeviceProp g_prop;
bool g_quick = false;
bool g_hit_only = false; // --hit-only: the hbm hit runs and baselines, nothing else
size_t g_data_bytes = size_t(1) << 30;

// Median time (ms) of `reps` runs of fn, each bracketed by events.
double time_ms(const std::function<void()>& fn, int reps = 5, const std::function<void()>& before = nullptr)
{
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    if (before)
      before();
    cudaEventRecord(a);
    fn();
    cudaEventRecord(b);
    CUDA_OK(cudaEventSynchronize(b));
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// ------------------------------------------------------------- JSON output
std::string g_json;
void jkv(const std::string& k, double v, bool comma = true)
{
  char b[128];
  std::snprintf(b, sizeof b, "\"%s\": %.6g%s", k.c_str(), v, comma ? ", " : "");
  g_json += b;
}
void jstr(const std::string& k, const std::string& v) { g_json += "\"" + k + "\": \"" + v + "\", "; }

// ---------------------------------------------------------------- kernels
__global__ void k_plain_u64(const uint64_t* p, size_t n, unsigned long long* sink)
{
  uint64_t s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    s += p[i];
  if (s == 0x1234567)
    *sink = s;
}

__global__ void k_plain_u128(const uint4* p, size_t n, unsigned long long* sink)
{
  uint64_t s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = p[i];
    s += v.x ^ v.w;
  }
  if (s == 0x1234567)
    *sink = s;
}

// Kernels on bam arrays carry the miss path (~110-125 registers uncapped);
// capping at 64 keeps 32 warps per SM resident, and only the rare miss
// path spills.
#ifndef BAM_BENCH_BOUNDS
#  define BAM_BENCH_BOUNDS __launch_bounds__(256, 4)
#endif

// Naive linear: thread i reads element i (grid-stride).
__global__ void BAM_BENCH_BOUNDS k_linear(bam::array<const uint64_t> a, unsigned long long* sink)
{
  uint64_t s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < a.size(); i += size_t(gridDim.x) * blockDim.x)
    s += a[i];
  if (s == 0x1234567)
    *sink = s;
}

// Folds an element into the checksum; 16-byte elements fold both halves.
__device__ __forceinline__ uint64_t fold(uint64_t v) { return v; }
__device__ __forceinline__ uint64_t fold(const ulonglong2& v) { return v.x ^ v.y; }

// Cache-line-aware: one warp per line (consecutive warps, consecutive
// lines), elements through array_ref (thesis listing 6.2). T = uint64_t is
// the thesis' shape; T = ulonglong2 reads the same lines with 16-byte loads,
// as the 16-byte HBM baseline does. ViaPtr reads the line through
// array_ref::line_ptr (plain loads the compiler keeps in flight together)
// instead of r[i] (a line check before every load).
template <class T, bool ViaPtr>
__global__ void BAM_BENCH_BOUNDS k_claware(bam::array<const T> a, unsigned long long* sink)
{
  const size_t warp = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x % 32, epl = a.elems_per_line();
  const size_t warps = size_t(gridDim.x) * blockDim.x / 32, lines = a.size() / epl;
  bam::array_ref<const T> r(a);
  uint64_t s = 0;
  for (size_t l = warp; l < lines; l += warps) {
    const size_t base = l * epl;
    if constexpr (ViaPtr) {
      const T* p = r.line_ptr(base);
#pragma unroll 8
      for (uint32_t j = lane; j < epl; j += 32)
        s += fold(p[j]);
    } else {
#pragma unroll 4
      for (uint32_t j = lane; j < epl; j += 32)
        s += fold(r[base + j]);
    }
  }
  if (s == 0x1234567)
    *sink = s;
}

__device__ __forceinline__ uint64_t hash64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// Random: each thread reads `per` uniformly random elements.
__global__ void BAM_BENCH_BOUNDS k_random(bam::array<const uint64_t> a, int per, unsigned long long* sink)
{
  const size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  uint64_t s = 0;
  for (int k = 0; k < per; ++k)
    s += a[hash64(t * 64 + k) % a.size()];
  if (s == 0x1234567)
    *sink = s;
}

// Random distinct lines: thread t reads one element of line perm(t + k*T),
// a permutation by an odd stride, so each line is fetched once (cold cache).
__global__ void BAM_BENCH_BOUNDS k_random_lines(bam::array<const uint64_t> a, size_t lines, size_t stride, unsigned long long* sink)
{
  const size_t T = size_t(gridDim.x) * blockDim.x, epl = a.elems_per_line();
  uint64_t s = 0;
  for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t < lines; t += T)
    s += a[((t * stride) % lines) * epl + (t % epl)];
  if (s == 0x1234567)
    *sink = s;
}

// One lane, dependent accesses: cycles per access.
__global__ void k_latency(bam::array<const uint64_t> a, size_t first, size_t step, int iters, unsigned long long* out)
{
  if (threadIdx.x != 0)
    return;
  uint64_t s = 0;
  long long total = 0;
  size_t i = first;
  for (int k = 0; k < iters; ++k) {
    long long t0 = clock64();
    const uint64_t v = a.read(i);
    s += v;
    total += clock64() - t0;
    i += step;
  }
  out[0] = (unsigned long long)total;
  out[1] = s;
}

// -------------------------------------------------------------- helpers
std::vector<uint64_t> host_pattern(size_t n)
{
  std::vector<uint64_t> h(n);
  for (size_t i = 0; i < n; ++i)
    h[i] = i * 0x9E3779B97F4A7C15ull;
  return h;
}

bam::config cfg(bam::backend b, size_t cache_bytes)
{
  bam::config c = bam::config::from_env();
  c.kind = b;
  c.cache_bytes = cache_bytes;
  c.stats = std::getenv("BAM_STATS") ? c.stats : true;
  if (!std::getenv("BAM_EMU_THREADS"))
    c.emu_threads = 8;
  if (c.line_bytes == 0)
    c.line_bytes = 4096; // the tables (docs/runtime-performance.md) are in 4 KiB lines on every backend
  return c;
}

unsigned full_grid() { return unsigned(g_prop.multiProcessorCount) * (2048 / 256); }

// ------------------------------------------------------------- baselines
struct baselines {
  double hbm_u64 = 0, hbm_u128 = 0, d2d = 0, h2d = 0, pread = 0;
  double hbm_best() const { return std::max(hbm_u64, hbm_u128); }
};

baselines measure_baselines(const std::vector<uint64_t>& h, unsigned long long* sink)
{
  baselines b;
  const size_t bytes = h.size() * 8;
  uint64_t *d0, *d1;
  CUDA_OK(cudaMalloc(&d0, bytes));
  CUDA_OK(cudaMalloc(&d1, bytes));
  CUDA_OK(cudaMemcpy(d0, h.data(), bytes, cudaMemcpyHostToDevice));
  b.hbm_u64 = bytes / 1e6 / time_ms([&] { k_plain_u64<<<full_grid(), 256>>>(d0, h.size(), sink); });
  b.hbm_u128 = bytes / 1e6 / time_ms([&] { k_plain_u128<<<full_grid(), 256>>>(reinterpret_cast<uint4*>(d0), bytes / 16, sink); });
  b.d2d = bytes / 1e6 / time_ms([&] { cudaMemcpy(d1, d0, bytes, cudaMemcpyDeviceToDevice); });
  void* pinned;
  CUDA_OK(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault));
  std::memcpy(pinned, h.data(), bytes);
  b.h2d = bytes / 1e6 / time_ms([&] { cudaMemcpy(d1, pinned, bytes, cudaMemcpyHostToDevice); });
  // pread of the same data from a file (page cache: an upper bound for a CPU path).
  std::string path = "/tmp/bam_bench_data.bin";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0 && write(fd, h.data(), bytes) == ssize_t(bytes)) {
    fsync(fd);
    auto t0 = std::chrono::steady_clock::now();
    for (size_t off = 0; off < bytes; off += size_t(1) << 20)
      if (pread(fd, static_cast<char*>(pinned) + off, std::min(bytes - off, size_t(1) << 20), off_t(off)) < 0)
        break;
    b.pread = bytes / 1e9 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (fd >= 0) {
    close(fd);
    unlink(path.c_str());
  }
  cudaFreeHost(pinned);
  cudaFree(d0);
  cudaFree(d1);
  return b;
}

// ---------------------------------------------------------------- runs
struct result {
  std::string name, backend;
  double threads, gbps, iops;
};
std::vector<result> g_results;

void record(const std::string& name, const std::string& backend, double threads, double bytes, double lines, double ms)
{
  result r{name, backend, threads, bytes / 1e6 / ms, lines / (ms / 1e3)};
  g_results.push_back(r);
  std::fprintf(stderr, "  %-22s %-5s threads %8.0f  %9.2f GB/s  %11.0f lines/s\n", name.c_str(), backend.c_str(),
               threads, r.gbps, r.iops);
}

// Hit bandwidth: everything cached (cache >= data), timed passes only hit.
void hit_bandwidth(bam::runtime& rt, bam::array<const uint64_t> a, unsigned long long* sink)
{
  const size_t bytes = a.size() * 8;
  const unsigned g = full_grid();
  k_claware<uint64_t, false><<<g, 256>>>(a, sink); // warm: fetch every line
  CUDA_OK(cudaDeviceSynchronize());
  rt.reset_stats();
  record("hit_linear", "hbm", g * 256.0, bytes, 0, time_ms([&] { k_linear<<<g, 256>>>(a, sink); }));
  record("hit_claware", "hbm", g * 256.0, bytes, 0, time_ms([&] { k_claware<uint64_t, false><<<g, 256>>>(a, sink); }));
  // The same cached lines seen as 16-byte elements (same array, same line
  // states: a second handle, not a second array).
  const bam::array<const ulonglong2> a16 = bam::array_cast<const ulonglong2>(a);
  record("hit_claware_16B", "hbm", g * 256.0, bytes, 0, time_ms([&] { k_claware<ulonglong2, false><<<g, 256>>>(a16, sink); }));
  record("hit_claware_ptr", "hbm", g * 256.0, bytes, 0, time_ms([&] { k_claware<uint64_t, true><<<g, 256>>>(a, sink); }));
  record("hit_claware_ptr_16B", "hbm", g * 256.0, bytes, 0,
         time_ms([&] { k_claware<ulonglong2, true><<<g, 256>>>(a16, sink); }));
  const int per = 16;
  const unsigned rg = g_quick ? g : g * 2;
  record("hit_random", "hbm", rg * 256.0, double(rg) * 256 * per * 8, 0,
         time_ms([&] { k_random<<<rg, 256>>>(a, per, sink); }));
  bam::stats s = rt.stats();
  if (s.misses != 0)
    std::fprintf(stderr, "  warning: %llu misses during hit runs\n", (unsigned long long)s.misses);
}

// Miss bandwidth, cold cache each repetition, claware vs threads.
void miss_sweep(bam::runtime& rt, bam::array<const uint64_t> a, const char* be, unsigned long long* sink)
{
  const size_t bytes = a.size() * 8, lines = a.size() / a.elems_per_line();
  for (unsigned warps_per_sm : {2u, 8u, 32u, 64u}) {
    const unsigned blocks = unsigned(g_prop.multiProcessorCount) * warps_per_sm / 8; // 256-thread blocks
    double ms = time_ms([&] { k_claware<uint64_t, false><<<blocks, 256>>>(a, sink); }, 3, [&] { rt.drop_cache(); });
    record("miss_claware", be, blocks * 256.0, bytes, double(lines), ms);
  }
}

// Random distinct-line reads (one I/O each), cold cache, vs threads.
void iops_sweep(bam::runtime& rt, bam::array<const uint64_t> a, const char* be, unsigned long long* sink)
{
  const size_t lines = a.size() / a.elems_per_line();
  size_t stride = 1000003 % lines;
  while (std::gcd(stride, lines) != 1)
    stride += 2;
  for (unsigned threads : {1024u, 4096u, 16384u, 65536u, 262144u}) {
    double ms = time_ms([&] { k_random_lines<<<threads / 256, 256>>>(a, lines, stride, sink); }, 3,
                        [&] { rt.drop_cache(); });
    record("miss_random_4k", be, threads, double(lines) * a.line_bytes(), double(lines), ms);
  }
}

void latency(bam::runtime& rt, bam::array<const uint64_t> a, const char* be, unsigned long long* out)
{
  const int iters = 100;
  unsigned long long h[2];
  int khz = 0; // cudaDeviceProp::clockRate is gone in CUDA 13; the attribute works in every version
  CUDA_OK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const double ghz = khz / 1e6;
  rt.drop_cache();
  k_latency<<<1, 32>>>(a, 0, a.elems_per_line(), iters, out); // distinct lines: misses
  CUDA_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  const double miss = double(h[0]) / iters;
  k_latency<<<1, 32>>>(a, 0, 0, iters, out); // one cached line: hits
  CUDA_OK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  const double hit = double(h[0]) / iters;
  std::fprintf(stderr, "  latency %-5s hit %.0f cycles (%.2f us), miss %.0f cycles (%.2f us)\n", be, hit, hit / ghz / 1e3,
               miss, miss / ghz / 1e3);
  g_json += "{\"backend\": \"" + std::string(be) + "\", ";
  jkv("hit_cycles", hit);
  jkv("hit_us", hit / ghz / 1e3);
  jkv("miss_cycles", miss);
  jkv("miss_us", miss / ghz / 1e3, false);
  g_json += "}, ";
}

bool run_backend(bam::backend b, const std::vector<uint64_t>& h, unsigned long long* sink, unsigned long long* lat_out,
                 size_t data_bytes)
{
  const char* be = bam::backend_name(b);
  std::fprintf(stderr, "backend %s: %zu MiB data\n", be, data_bytes >> 20);
  try {
    bam::runtime rt(cfg(b, data_bytes + (size_t(64) << 20)));
    bam::array<const uint64_t> a = rt.array_from_host(h.data(), data_bytes / 8);
    if (b == bam::backend::hbm)
      hit_bandwidth(rt, a, sink);
    if (g_hit_only)
      return true;
    miss_sweep(rt, a, be, sink);
    if (b != bam::backend::hbm)
      iops_sweep(rt, a, be, sink);
    latency(rt, a, be, lat_out);
    rt.reset_stats();
    rt.print_stats(stderr);
    return true;
  } catch (const bam::error& e) {
    std::fprintf(stderr, "  backend %s skipped: %s\n", be, e.what());
    return false;
  }
}

double best(const std::string& name, const std::string& be)
{
  double v = 0;
  for (auto& r : g_results)
    if (r.name == name && r.backend == be)
      v = std::max(v, name.find("random_4k") != std::string::npos ? r.iops : r.gbps);
  return v;
}

} // namespace

int main(int argc, char** argv)
{
  // These exercise the cache: hbm arrays go through it unless told otherwise
  // (placement: BAM_GPU_BUDGET bytes of hbm data are read in place).
  setenv("BAM_GPU_BUDGET", "0", 0);
  setenv("BAM_HOST_PLACEMENT", "cache", 0);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      g_quick = true;
    else if (!std::strcmp(argv[i], "--hit-only"))
      g_hit_only = true;
    else if (!std::strcmp(argv[i], "--data-mib") && i + 1 < argc)
      g_data_bytes = size_t(std::atoll(argv[++i])) << 20;
  }
  if (g_quick)
    g_data_bytes = std::min(g_data_bytes, size_t(256) << 20);
  CUDA_OK(cudaGetDeviceProperties(&g_prop, 0));
  std::fprintf(stderr, "bam_bench on %s, %d SMs, %zu MiB data\n", g_prop.name, g_prop.multiProcessorCount,
               g_data_bytes >> 20);
  unsigned long long* sink;
  CUDA_OK(cudaMalloc(&sink, 64));
  const auto h = host_pattern(g_data_bytes / 8);
  const baselines base = measure_baselines(h, sink);
  std::fprintf(stderr, "baselines: HBM read %.0f GB/s (u64) %.0f GB/s (16 B), D2D memcpy %.0f GB/s, pinned H2D %.1f GB/s, "
               "pread %.1f GB/s\n", base.hbm_u64, base.hbm_u128, base.d2d, base.h2d, base.pread);

  g_json = "{";
  jstr("gpu", g_prop.name);
  jkv("sms", g_prop.multiProcessorCount);
  jkv("data_bytes", double(g_data_bytes));
  jkv("line_bytes", 4096);
  g_json += "\"baselines\": {";
  jkv("hbm_read_u64_GBps", base.hbm_u64);
  jkv("hbm_read_16B_GBps", base.hbm_u128);
  jkv("d2d_memcpy_GBps", base.d2d);
  jkv("h2d_pinned_GBps", base.h2d);
  jkv("pread_GBps", base.pread, false);
  g_json += "}, \"latency\": [";
  for (bam::backend b : {bam::backend::hbm, bam::backend::host, bam::backend::emu}) {
    if (g_hit_only && b != bam::backend::hbm)
      continue;
    // emu serves from a file: keep its data smaller so runs stay short.
    size_t bytes = b == bam::backend::emu ? std::min(g_data_bytes, size_t(256) << 20) : g_data_bytes;
    run_backend(b, h, sink, sink + 2, bytes);
  }
  if (g_json.size() > 2 && g_json.substr(g_json.size() - 2) == ", ")
    g_json.resize(g_json.size() - 2);
  g_json += "], \"results\": [";
  for (size_t i = 0; i < g_results.size(); ++i) {
    auto& r = g_results[i];
    g_json += "{\"name\": \"" + r.name + "\", \"backend\": \"" + r.backend + "\", ";
    jkv("threads", r.threads);
    jkv("GBps", r.gbps);
    jkv("lines_per_s", r.iops, false);
    g_json += i + 1 < g_results.size() ? "}, " : "}";
  }
  const double hit = std::max({best("hit_claware", "hbm"), best("hit_claware_16B", "hbm"),
                               best("hit_claware_ptr", "hbm"), best("hit_claware_ptr_16B", "hbm")}), host_miss = best("miss_claware", "host"),
               emu_iops = best("miss_random_4k", "emu");
  g_json += "], \"bars\": {";
  jkv("claware_hit_over_hbm_read", hit / base.hbm_best());
  jkv("claware_hit_over_hbm_read_pass", hit / base.hbm_best() >= 0.5);
  jkv("host_claware_miss_over_h2d", host_miss / base.h2d);
  jkv("host_claware_miss_over_h2d_pass", host_miss / base.h2d >= 0.7);
  jkv("emu_random_4k_iops", emu_iops);
  jkv("emu_random_4k_iops_pass", emu_iops >= 1.5e6, false);
  g_json += "}}";
  std::printf("%s\n", g_json.c_str());
  std::fprintf(stderr, "bars: claware hit / HBM read = %.2f (>= 0.5), host miss / H2D = %.2f (>= 0.7), emu %.2fM IOPS (>= 1.5M)\n",
               hit / base.hbm_best(), host_miss / base.h2d, emu_iops / 1e6);
  return 0;
}
