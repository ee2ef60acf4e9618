// hitpath: the per-element access path of bam::array against the plain
// kernels users already have, in one run (issue 18, items 1, 2, 5).
//
//   hitpath [--quick]        JSON on stdout, progress on stderr; exit 1 if a
//                            checksum disagrees or a forward-progress run fails
//
// Rows (each bam row's checksum must equal its baseline's):
//   plain_read          grid-stride sum of a cudaMalloc'd uint64 array
//   plain_gather        16 hashed random elements per thread, same array
//   hit_linear          the same sum through a[i], hbm backend, every line cached
//   hit_random          the same gather through a[i]
//   (both also with BAM_STATS=0: *_nostats)
//   hit_linear_lb, hit_random_lb   the same with __launch_bounds__(1024, 2)
//                       (<= 32 registers: what occupancy is worth)
//   hit_linear_lb40, hit_random_lb40   __launch_bounds__(256, 6) (<= 40)
//   resident_direct     a[i] on an array placed resident (hbm, in the budget)
//   zero_copy_read      plain sum over cudaHostAlloc(mapped) memory
//   host_direct_read    a[i] on a host-backend array placed host-direct
//   zero_copy_gather, host_direct_gather   the random version of both
//   host_cache_read     a[i] on the host backend through the cache (cold)
//   progress_16_lines   CSR sum + element atomics through a 16-line cache
//                       (hbm and host backends), checked against the CPU
#include <bam/bam.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace {

#define CUDA_OK(x)                                                                                  \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));       \
      std::exit(2);                                                                                 \
    }                                                                                               \
  } while (0)

int g_failures = 0;
std::string g_json;
cudaDeviceProp g_prop;

void jnum(const std::string& k, double v)
{
  char b[160];
  std::snprintf(b, sizeof b, "%s\"%s\": %.6g", g_json.empty() ? "" : ", ", k.c_str(), v);
  g_json += b;
}
void jstr(const std::string& k, const std::string& v)
{
  std::string e;
  for (char ch : v)
    e += ch == '"' || ch == '\\' ? '\'' : ch == '\n' ? ' ' : ch;
  g_json += (g_json.empty() ? "\"" : ", \"") + k + "\": \"" + e + "\"";
}

double median_ms(const std::function<void()>& fn, int reps)
{
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    CUDA_OK(cudaEventRecord(a));
    fn();
    CUDA_OK(cudaEventRecord(b));
    CUDA_OK(cudaEventSynchronize(b));
    CUDA_OK(cudaGetLastError());
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Block-wide sum into *out (one atomic per block).
__device__ void block_sum(uint64_t s, unsigned long long* out)
{
  __shared__ unsigned long long part[32];
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0)
    part[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long t = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w)
      t += part[w];
    atomicAdd(out, t);
  }
}

__device__ __forceinline__ uint64_t hash64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

constexpr int kGather = 16; // random elements per thread

// The same kernels on a plain pointer and on a bam array: A is
// `const uint64_t*` or `bam::array<const uint64_t>`.
template <class A>
__device__ __forceinline__ void read_body(const A& a, size_t n, unsigned long long* out)
{
  uint64_t s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    s += a[i];
  block_sum(s, out);
}

template <class A>
__device__ __forceinline__ void gather_body(const A& a, size_t n, unsigned long long* out)
{
  const size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  uint64_t s = 0;
  for (int k = 0; k < kGather; ++k)
    s += a[hash64(t * 64 + k) % n];
  block_sum(s, out);
}

template <class A>
__global__ void k_read(A a, size_t n, unsigned long long* out)
{
  read_body(a, n, out);
}

template <class A>
__global__ void k_gather(A a, size_t n, unsigned long long* out)
{
  gather_body(a, n, out);
}

// The same kernels with __launch_bounds__(1024, 2): at most 32 registers
// (the miss path, out of line, is compiled to fit too), so 64 warps per SM
// instead of the 32 that 64 registers allow. Rows *_lb: how much of the
// hit path's gap is occupancy (any block size up to 1024 still launches).
template <class A>
__global__ void __launch_bounds__(1024, 2) k_read_lb(A a, size_t n, unsigned long long* out)
{
  read_body(a, n, out);
}

template <class A>
__global__ void __launch_bounds__(1024, 2) k_gather_lb(A a, size_t n, unsigned long long* out)
{
  gather_body(a, n, out);
}

// And with __launch_bounds__(256, 6): at most 40 registers, 48 warps per
// SM for these 256-thread blocks (rows *_lb40): what a miss path whose
// every function fits in 40 registers would give the default kernels.
template <class A>
__global__ void __launch_bounds__(256, 6) k_read_lb40(A a, size_t n, unsigned long long* out)
{
  read_body(a, n, out);
}

template <class A>
__global__ void __launch_bounds__(256, 6) k_gather_lb40(A a, size_t n, unsigned long long* out)
{
  gather_body(a, n, out);
}

// Corpus-like (SpMV / one BFS expansion): y[r] = sum over r's edges of
// x[col[e]], and cnt[col[e] % C] += 1 with element atomics.
__global__ void k_csr(bam::array<const uint32_t> row, bam::array<const uint32_t> col, bam::array<const uint32_t> x,
                      bam::array<uint32_t> y, bam::array<uint32_t> cnt, uint32_t rows, uint32_t c)
{
  for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
    uint32_t s = 0;
    const uint32_t b = row[r], e = row[r + 1];
    for (uint32_t k = b; k < e; ++k) {
      const uint32_t v = col[k];
      s += x[v];
      cnt.atomic_add(v % c, 1u);
    }
    y[r] = s;
  }
}

unsigned full_grid() { return unsigned(g_prop.multiProcessorCount) * 8; }

bam::config make_cfg(bam::backend b, size_t cache_bytes, bool stats)
{
  bam::config c = bam::config::from_env();
  c.kind = b;
  c.cache_bytes = cache_bytes;
  c.line_bytes = 4096;
  c.stats = stats;
  return c;
}

struct sum_buf {
  unsigned long long* d = nullptr;
  sum_buf() { CUDA_OK(cudaMalloc(&d, sizeof *d)); }
  ~sum_buf() { cudaFree(d); }
  void zero() { CUDA_OK(cudaMemset(d, 0, sizeof *d)); }
  unsigned long long get()
  {
    unsigned long long v = 0;
    CUDA_OK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    return v;
  }
};

// Time `launch` (median of reps), then run it once more and return the checksum.
struct row_result {
  double ms;
  unsigned long long sum;
};
row_result run_row(const char* name, sum_buf& s, int reps, const std::function<void()>& launch)
{
  launch(); // warm: fills the cache for the hit rows
  CUDA_OK(cudaDeviceSynchronize());
  const double ms = median_ms(launch, reps);
  s.zero();
  launch();
  CUDA_OK(cudaDeviceSynchronize());
  row_result r{ms, s.get()};
  std::fprintf(stderr, "%-22s %9.3f ms  sum %016llx\n", name, ms, r.sum);
  return r;
}

void expect_sum(const char* name, unsigned long long got, unsigned long long want)
{
  if (got != want) {
    std::fprintf(stderr, "FAIL %s: checksum %016llx, want %016llx\n", name, got, want);
    ++g_failures;
  }
}

template <class K>
int regs_of(K kernel)
{
  cudaFuncAttributes a{};
  CUDA_OK(cudaFuncGetAttributes(&a, kernel));
  return a.numRegs;
}

void set_env(const char* k, const char* v) { setenv(k, v, 1); }

// 16-line cache: every access either hits, fetches or reads around the
// cache; the results must be exact.
bool progress_run(bam::backend b, const char* label)
{
  const uint32_t rows = 1u << 16, deg = 8, c = 1024;
  std::vector<uint32_t> row(rows + 1), col(size_t(rows) * deg), x(rows);
  uint64_t h = 12345;
  for (uint32_t r = 0; r <= rows; ++r)
    row[r] = r * deg;
  for (auto& v : col) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    v = uint32_t(h >> 33) % rows;
  }
  for (uint32_t r = 0; r < rows; ++r)
    x[r] = r * 2654435761u;
  std::vector<uint32_t> want_y(rows, 0), want_cnt(c, 0);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = row[r]; k < row[r + 1]; ++k) {
      want_y[r] += x[col[k]];
      want_cnt[col[k] % c] += 1;
    }
  set_env("BAM_GPU_BUDGET", "0");
  set_env("BAM_HOST_PLACEMENT", "cache");
  bool ok = true;
  double ms = 0;
  try {
    bam::runtime rt(make_cfg(b, 16 * 4096, true));
    auto drow = rt.array_from_host(row.data(), row.size());
    auto dcol = rt.array_from_host(col.data(), col.size());
    auto dx = rt.array_from_host(x.data(), x.size());
    auto dy = rt.array_zeros<uint32_t>(rows);
    auto dcnt = rt.array_zeros<uint32_t>(c);
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    CUDA_OK(cudaEventRecord(e0));
    k_csr<<<full_grid(), 256>>>(drow, dcol, dx, dy, dcnt, rows, c);
    CUDA_OK(cudaEventRecord(e1));
    CUDA_OK(cudaEventSynchronize(e1));
    float f = 0;
    CUDA_OK(cudaEventElapsedTime(&f, e0, e1));
    ms = f;
    std::vector<uint32_t> got_y(rows), got_cnt(c);
    rt.copy_to_host(dy, got_y.data(), rows);
    rt.copy_to_host(dcnt, got_cnt.data(), c);
    const bam::stats s = rt.stats();
    ok = got_y == want_y && got_cnt == want_cnt;
    std::fprintf(stderr, "progress_16_lines %-5s %s (%.2f ms, %llu misses, %llu evictions)\n", label,
                 ok ? "ok" : "WRONG RESULTS", ms, (unsigned long long)s.misses, (unsigned long long)s.evictions);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL progress_16_lines %s: %s\n", label, e.what());
    ok = false;
  }
  jnum(std::string("progress_16_lines_") + label + "_ok", ok ? 1 : 0);
  jnum(std::string("progress_16_lines_") + label + "_ms", ms);
  if (!ok)
    ++g_failures;
  return ok;
}

} // namespace

int run(int argc, char** argv);

int main(int argc, char** argv)
{
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    jstr("error", e.what());
    jnum("failures", g_failures + 1);
    std::printf("{%s}\n", g_json.c_str());
    return 1;
  }
}

int run(int argc, char** argv)
{
  bool quick = false;
  for (int i = 1; i < argc; ++i)
    quick = quick || !std::strcmp(argv[i], "--quick");
  CUDA_OK(cudaGetDeviceProperties(&g_prop, 0));
  CUDA_OK(cudaSetDeviceFlags(cudaDeviceMapHost));
  jstr("device", g_prop.name);
  const size_t n = (quick ? (size_t(256) << 20) : (size_t(1) << 30)) / 8; // uint64 elements in GPU memory
  const size_t hn = (quick ? (size_t(64) << 20) : (size_t(256) << 20)) / 8; // in host memory
  const int reps = 5;
  jnum("hbm_bytes", double(n * 8));
  jnum("host_bytes", double(hn * 8));

  std::vector<uint64_t> h(std::max(n, hn));
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = i * 0x9E3779B97F4A7C15ull;

  sum_buf s;
  const unsigned grid = full_grid();
  jnum("regs_plain_read", regs_of(k_read<const uint64_t*>));
  jnum("regs_bam_read", regs_of(k_read<bam::array<const uint64_t>>));
  jnum("regs_bam_gather", regs_of(k_gather<bam::array<const uint64_t>>));
  jnum("regs_csr", regs_of(k_csr));
  jnum("regs_bam_read_lb", regs_of(k_read_lb<bam::array<const uint64_t>>));
  jnum("regs_bam_gather_lb", regs_of(k_gather_lb<bam::array<const uint64_t>>));
  jnum("regs_bam_read_lb40", regs_of(k_read_lb40<bam::array<const uint64_t>>));

  // ---- baselines in GPU memory
  uint64_t* d = nullptr;
  CUDA_OK(cudaMalloc(&d, n * 8));
  CUDA_OK(cudaMemcpy(d, h.data(), n * 8, cudaMemcpyHostToDevice));
  const row_result plain = run_row("plain_read", s, reps, [&] { k_read<<<grid, 256>>>((const uint64_t*)d, n, s.d); });
  const row_result gather =
      run_row("plain_gather", s, reps, [&] { k_gather<<<grid, 256>>>((const uint64_t*)d, n, s.d); });
  CUDA_OK(cudaFree(d));
  const double gather_bytes = double(grid) * 256 * kGather * 8;
  jnum("plain_read_GBps", n * 8 / 1e6 / plain.ms);
  jnum("plain_gather_GBps", gather_bytes / 1e6 / gather.ms);

  // ---- hits through the cache (hbm backend, budget 0: every array cached)
  for (int stats = 1; stats >= 0; --stats) {
    set_env("BAM_GPU_BUDGET", "0");
    bam::runtime rt(make_cfg(bam::backend::hbm, n * 8 + (size_t(64) << 20), stats != 0));
    bam::array<const uint64_t> a = rt.array_from_host(h.data(), n);
    if (a.placement() != bam::placement::cache) {
      std::fprintf(stderr, "FAIL: BAM_GPU_BUDGET=0 did not place the array in the cache\n");
      ++g_failures;
    }
    const std::string sfx = stats ? "" : "_nostats";
    const row_result lin = run_row(("hit_linear" + sfx).c_str(), s, reps, [&] { k_read<<<grid, 256>>>(a, n, s.d); });
    const row_result rnd = run_row(("hit_random" + sfx).c_str(), s, reps, [&] { k_gather<<<grid, 256>>>(a, n, s.d); });
    expect_sum(("hit_linear" + sfx).c_str(), lin.sum, plain.sum);
    expect_sum(("hit_random" + sfx).c_str(), rnd.sum, gather.sum);
    jnum("hit_linear" + sfx + "_GBps", n * 8 / 1e6 / lin.ms);
    jnum("hit_random" + sfx + "_GBps", gather_bytes / 1e6 / rnd.ms);
    jnum("ratio_hit_linear" + sfx + "_vs_plain_read", plain.ms / lin.ms);
    jnum("ratio_hit_random" + sfx + "_vs_plain_gather", gather.ms / rnd.ms);
    const row_result lin_lb =
        run_row(("hit_linear_lb" + sfx).c_str(), s, reps, [&] { k_read_lb<<<grid, 256>>>(a, n, s.d); });
    const row_result rnd_lb =
        run_row(("hit_random_lb" + sfx).c_str(), s, reps, [&] { k_gather_lb<<<grid, 256>>>(a, n, s.d); });
    expect_sum(("hit_linear_lb" + sfx).c_str(), lin_lb.sum, plain.sum);
    expect_sum(("hit_random_lb" + sfx).c_str(), rnd_lb.sum, gather.sum);
    jnum("ratio_hit_linear_lb" + sfx + "_vs_plain_read", plain.ms / lin_lb.ms);
    jnum("ratio_hit_random_lb" + sfx + "_vs_plain_gather", gather.ms / rnd_lb.ms);
    const row_result lin_lb40 =
        run_row(("hit_linear_lb40" + sfx).c_str(), s, reps, [&] { k_read_lb40<<<grid, 256>>>(a, n, s.d); });
    const row_result rnd_lb40 =
        run_row(("hit_random_lb40" + sfx).c_str(), s, reps, [&] { k_gather_lb40<<<grid, 256>>>(a, n, s.d); });
    expect_sum(("hit_linear_lb40" + sfx).c_str(), lin_lb40.sum, plain.sum);
    expect_sum(("hit_random_lb40" + sfx).c_str(), rnd_lb40.sum, gather.sum);
    jnum("ratio_hit_linear_lb40" + sfx + "_vs_plain_read", plain.ms / lin_lb40.ms);
    jnum("ratio_hit_random_lb40" + sfx + "_vs_plain_gather", gather.ms / rnd_lb40.ms);
    if (stats) {
      // The counters must be exact whatever path served the reads: each
      // row launched its kernel 1 + reps + 1 times (run_row).
      const bam::stats st = rt.stats();
      const double want = double(reps + 2) * (3.0 * double(n) + 3.0 * double(grid) * 256 * kGather);
      jnum("hit_rows_misses", double(st.misses));
      jnum("hit_rows_accesses", double(st.accesses));
      jnum("hit_rows_hit_accesses", double(st.hit_accesses));
#if defined(BAM_HIT_STATS_PER_FIELD) || defined(BAM_HIT_ORDER_BY_FENCE)
      const bool counted_pin_free = true; // these builds count hits as before (no hit_accesses)
#else
      const bool counted_pin_free = st.hit_accesses > 0;
#endif
      if (double(st.accesses) != want || st.bytes != st.accesses * 8 || st.hit_accesses > st.accesses ||
          !counted_pin_free) {
        std::fprintf(stderr, "FAIL: counters: %llu accesses (want %.0f), %llu bytes, %llu read pin-free\n",
                     (unsigned long long)st.accesses, want, (unsigned long long)st.bytes,
                     (unsigned long long)st.hit_accesses);
        ++g_failures;
      }
      rt.print_stats(stderr);
    }
    rt.check();
  }

  // ---- resident placement (hbm backend, default budget)
  {
    unsetenv("BAM_GPU_BUDGET");
    bam::runtime rt(make_cfg(bam::backend::hbm, size_t(64) << 20, true));
    bam::array<const uint64_t> a = rt.array_from_host(h.data(), n);
    jstr("resident_placement", bam::placement_name(a.placement()));
    if (a.placement() != bam::placement::resident) {
      std::fprintf(stderr, "FAIL: an array within the GPU budget was not placed resident\n");
      ++g_failures;
    }
    const row_result r = run_row("resident_direct", s, reps, [&] { k_read<<<grid, 256>>>(a, n, s.d); });
    expect_sum("resident_direct", r.sum, plain.sum);
    jnum("resident_direct_GBps", n * 8 / 1e6 / r.ms);
    jnum("ratio_resident_direct_vs_plain_read", plain.ms / r.ms);
    rt.print_stats(stderr);
  }

  // ---- host memory: zero-copy baseline vs host-direct placement vs cache
  {
    void* hp = nullptr;
    CUDA_OK(cudaHostAlloc(&hp, hn * 8, cudaHostAllocMapped));
    std::memcpy(hp, h.data(), hn * 8);
    uint64_t* dp = nullptr;
    CUDA_OK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dp), hp, 0));
    const row_result zc = run_row("zero_copy_read", s, reps, [&] { k_read<<<grid, 256>>>((const uint64_t*)dp, hn, s.d); });
    const row_result zcg =
        run_row("zero_copy_gather", s, reps, [&] { k_gather<<<grid, 256>>>((const uint64_t*)dp, hn, s.d); });
    CUDA_OK(cudaFreeHost(hp));
    jnum("zero_copy_read_GBps", hn * 8 / 1e6 / zc.ms);
    jnum("zero_copy_gather_GBps", gather_bytes / 1e6 / zcg.ms);

    set_env("BAM_HOST_PLACEMENT", "direct");
    {
      bam::runtime rt(make_cfg(bam::backend::host, size_t(64) << 20, true));
      bam::array<const uint64_t> a = rt.array_from_host(h.data(), hn);
      jstr("host_placement", bam::placement_name(a.placement()));
      if (a.placement() != bam::placement::host_direct) {
        std::fprintf(stderr, "FAIL: BAM_HOST_PLACEMENT=direct did not place the array host-direct\n");
        ++g_failures;
      }
      const row_result r = run_row("host_direct_read", s, reps, [&] { k_read<<<grid, 256>>>(a, hn, s.d); });
      const row_result g = run_row("host_direct_gather", s, reps, [&] { k_gather<<<grid, 256>>>(a, hn, s.d); });
      expect_sum("host_direct_read", r.sum, zc.sum);
      expect_sum("host_direct_gather", g.sum, zcg.sum);
      jnum("host_direct_read_GBps", hn * 8 / 1e6 / r.ms);
      jnum("host_direct_gather_GBps", gather_bytes / 1e6 / g.ms);
      jnum("ratio_host_direct_read_vs_zero_copy", zc.ms / r.ms);
      jnum("ratio_host_direct_gather_vs_zero_copy", zcg.ms / g.ms);
    }
    set_env("BAM_HOST_PLACEMENT", "cache");
    {
      // Cache smaller than the data: a linear pass fetches every line (what
      // auto placement avoids for arrays larger than half the cache).
      bam::runtime rt(make_cfg(bam::backend::host, hn * 8 / 4, true));
      bam::array<const uint64_t> a = rt.array_from_host(h.data(), hn);
      const row_result r = run_row("host_cache_read", s, 3, [&] { k_read<<<grid, 256>>>(a, hn, s.d); });
      expect_sum("host_cache_read", r.sum, zc.sum);
      jnum("host_cache_read_GBps", hn * 8 / 1e6 / r.ms);
      jnum("ratio_host_cache_read_vs_zero_copy", zc.ms / r.ms);
    }
    unsetenv("BAM_HOST_PLACEMENT");
  }

  // ---- forward progress: a 16-line cache
  progress_run(bam::backend::hbm, "hbm");
  progress_run(bam::backend::host, "host");

  jnum("failures", g_failures);
  std::printf("{%s}\n", g_json.c_str());
  return g_failures == 0 ? 0 : 1;
}
