// bam_gpu_tests: the runtime on a real GPU, every backend.
//
//   bam_gpu_tests                 everything
//   bam_gpu_tests --small         small sizes (compute-sanitizer runs)
//   bam_gpu_tests NAME...         only tests whose name contains NAME
//
// Exit status is non-zero if any test fails.
#include <bam/bam.cuh>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <cerrno>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

bool g_small = false;
int g_failed = 0, g_passed = 0, g_skipped = 0;
std::vector<std::string> g_filter;

#define CUDA_OK(x)                                                                                       \
  do {                                                                                                   \
    cudaError_t e_ = (x);                                                                                \
    if (e_ != cudaSuccess)                                                                               \
      throw std::runtime_error(std::string(#x) + ": " + cudaGetErrorString(e_));                         \
  } while (0)

#define EXPECT(cond, ...)                                                                                \
  do {                                                                                                   \
    if (!(cond)) {                                                                                       \
      char b_[512];                                                                                      \
      std::snprintf(b_, sizeof b_, __VA_ARGS__);                                                         \
      throw std::runtime_error(std::string("EXPECT(" #cond ") failed: ") + b_);                          \
    }                                                                                                    \
  } while (0)

struct skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

__host__ __device__ inline uint64_t mix(uint64_t i) { return (i + 1) * 0x9E3779B97F4A7C15ull ^ (i >> 7); }

template <class T>
struct dbuf { // device buffer
  T* p = nullptr;
  size_t n = 0;
  explicit dbuf(size_t n_) : n(n_) { CUDA_OK(cudaMalloc(&p, n * sizeof(T))); CUDA_OK(cudaMemset(p, 0, n * sizeof(T))); }
  ~dbuf() { cudaFree(p); }
  std::vector<T> host() const
  {
    std::vector<T> h(n);
    CUDA_OK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

unsigned blocks_for(size_t n, unsigned threads = 256)
{
  size_t b = (n + threads - 1) / threads;
  return unsigned(b < 4096 ? (b ? b : 1) : 4096);
}

bam::config cfg_for(bam::backend b, size_t cache_bytes, size_t line_bytes = 4096)
{
  bam::config c;
  c.kind = b;
  c.cache_bytes = cache_bytes;
  c.line_bytes = line_bytes;
  c.emu_threads = 4;
  c.stall_timeout_s = 30; // longer than the emu queue's own 20 s slot bound, so a stuck queue reports itself
  if (const char* t = std::getenv("BAM_EMU_TRACE"))
    c.emu_trace = t;  // to look at one test's storage traffic over time
  return c;
}

// Runtimes for backends that are not built turn into skips.
std::unique_ptr<bam::runtime> make_rt(const bam::config& c)
{
  try {
    return std::make_unique<bam::runtime>(c);
  } catch (const bam::error& e) {
    if (std::strstr(e.what(), "not built") || std::strstr(e.what(), "not available"))
      throw skip(e.what());
    throw;
  }
}

void run(const std::string& name, const std::function<void()>& fn)
{
  auto t0 = std::chrono::steady_clock::now();
  try {
    fn();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("PASS %-40s %7.3f s\n", name.c_str(), s);
    ++g_passed;
  } catch (const skip& e) {
    std::printf("SKIP %-40s %s\n", name.c_str(), e.what());
    ++g_skipped;
  } catch (const std::exception& e) {
    std::printf("FAIL %-40s %s\n", name.c_str(), e.what());
    ++g_failed;
    cudaGetLastError();
  }
  std::fflush(stdout);
}

// ---------------------------------------------------------------- kernels

template <class T>
__global__ void k_copy_linear(bam::array<const T> a, T* out, size_t n)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = a[i];
}

template <class T>
__global__ void k_gather(bam::array<const T> a, const uint64_t* idx, T* out, size_t n)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = a.read(idx[i]);
}

// Cache-line-aware: one warp per line, array_ref reuse; out[line] = sum.
__global__ void k_line_sums(bam::array<const uint64_t> a, uint64_t* out)
{
  const size_t warp = (blockIdx.x * size_t(blockDim.x) + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const size_t lines = (a.size() + a.elems_per_line() - 1) / a.elems_per_line();
  const size_t warps = size_t(gridDim.x) * blockDim.x / 32;
  bam::array_ref<const uint64_t> r(a);
  for (size_t l = warp; l < lines; l += warps) {
    uint64_t s = 0;
    for (size_t i = l * a.elems_per_line() + lane; i < (l + 1) * a.elems_per_line() && i < a.size(); i += 32)
      s += r[i];
    for (int o = 16; o > 0; o /= 2)
      s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0)
      out[l] = s;
  }
}

__global__ void k_writers(bam::array<uint32_t> a, bam::array<unsigned long long> counts, size_t n, uint32_t ncounts)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    a[i] = uint32_t(i * 7 + 1);
    a[i] += 2;                          // compound on the proxy
    a[i]++;
    counts.atomic_add(i % ncounts, 1ull); // many writers per element
  }
}

// Writes through array_ref with a scattered order (every line written by
// several warps at different times).
__global__ void k_ref_writer(bam::array<uint32_t> a, size_t n, size_t stride)
{
  bam::array_ref<uint32_t> r(a);
  for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t < n; t += size_t(gridDim.x) * blockDim.x) {
    size_t i = (t * stride) % n; // stride coprime with n: a permutation
    r[i] = uint32_t(mix(i));
  }
}

__global__ void k_verify(bam::array<const uint32_t> a, size_t n, uint64_t seed, unsigned long long* bad)
{
  uint64_t x = seed + blockIdx.x * 1315423911ull + threadIdx.x;
  for (int k = 0; k < 64; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    size_t i = (x >> 17) % n;
    if (a[i] != uint32_t(mix(i)))
      atomicAdd(bad, 1ull);
  }
}

__global__ void k_random_incr(bam::array<unsigned int> a, size_t n, uint64_t seed, int per_thread)
{
  uint64_t x = seed + (blockIdx.x * size_t(blockDim.x) + threadIdx.x) * 0x9E3779B97F4A7C15ull;
  for (int k = 0; k < per_thread; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    a.atomic_add((x >> 20) % n, 1u);
  }
}

template <class T>
__global__ void k_atomics(bam::array<T> a, int iters)
{
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < iters; ++k) {
    a.atomic_add(0, T(1));
    a.atomic_max(1, T(t));
    a.atomic_min(2, T(t + 1));
    a.atomic_sub(3, T(1));
  }
  if (t == 7)
    a.atomic_exch(4, T(42));
  a.atomic_cas(5, T(0), T(t + 100)); // exactly one winner
}

__global__ void k_int_bits(bam::array<int64_t> a)
{
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  a.atomic_or(0, int64_t(1) << (t % 64));
  a.atomic_and(1, ~(int64_t(1) << (t % 64)));
  a.atomic_xor(2, int64_t(1));
}

// ------------------------------------------------------------------ tests

std::vector<uint64_t> pattern(size_t n)
{
  std::vector<uint64_t> h(n);
  for (size_t i = 0; i < n; ++i)
    h[i] = mix(i);
  return h;
}

void test_linear(bam::backend b)
{
  const size_t n = g_small ? 50000 : (size_t(4) << 20) + 77; // partial last line
  auto rt = make_rt(cfg_for(b, size_t(64) << 20));
  auto h = pattern(n);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), n);
  dbuf<uint64_t> out(n);
  k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(a, out.p, n);
  rt->check();
  auto got = out.host();
  for (size_t i = 0; i < n; ++i)
    EXPECT(got[i] == h[i], "element %zu: got %llx want %llx", i, (unsigned long long)got[i], (unsigned long long)h[i]);
  bam::stats s = rt->stats();
  EXPECT(s.accesses == n, "accesses %llu, want %zu", (unsigned long long)s.accesses, n);
  EXPECT(s.misses == (n * 8 + 4095) / 4096, "misses %llu", (unsigned long long)s.misses);
}

void test_random(bam::backend b)
{
  const size_t n = g_small ? 60000 : (size_t(8) << 20), m = g_small ? 20000 : (size_t(2) << 20);
  auto rt = make_rt(cfg_for(b, size_t(16) << 20)); // smaller than the data: evictions
  auto h = pattern(n);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), n);
  std::vector<uint64_t> idx(m);
  std::mt19937_64 rng(1);
  for (auto& x : idx)
    x = rng() % n;
  dbuf<uint64_t> didx(m), out(m);
  CUDA_OK(cudaMemcpy(didx.p, idx.data(), m * 8, cudaMemcpyHostToDevice));
  k_gather<uint64_t><<<blocks_for(m), 256>>>(a, didx.p, out.p, m);
  rt->check();
  auto got = out.host();
  for (size_t i = 0; i < m; ++i)
    EXPECT(got[i] == h[idx[i]], "gather %zu (index %llu) wrong", i, (unsigned long long)idx[i]);
}

void test_line_sums(bam::backend b)
{
  const size_t n = g_small ? 40000 : (size_t(4) << 20);
  auto rt = make_rt(cfg_for(b, size_t(64) << 20));
  auto h = pattern(n);
  bam::array<const uint64_t> a = rt->array_from_host(h.data(), n); // array<T> -> array<const T>
  const size_t epl = a.elems_per_line(), lines = (n + epl - 1) / epl;
  EXPECT(epl == 512 && a.line_of(1023) == 1, "geometry: %zu elems/line", epl);
  dbuf<uint64_t> out(lines);
  k_line_sums<<<g_small ? 4 : 264, 256>>>(a, out.p);
  rt->check();
  auto got = out.host();
  for (size_t l = 0; l < lines; ++l) {
    uint64_t s = 0;
    for (size_t i = l * epl; i < std::min(n, (l + 1) * epl); ++i)
      s += h[i];
    EXPECT(got[l] == s, "line %zu sum", l);
  }
}

void test_writers(bam::backend b)
{
  const size_t n = g_small ? 30000 : (size_t(4) << 20);
  const uint32_t nc = 1000;
  auto rt = make_rt(cfg_for(b, size_t(4) << 20)); // 4 MiB cache, 16 MiB array: write-backs on eviction
  bam::array<uint32_t> a = rt->array_zeros<uint32_t>(n);
  bam::array<unsigned long long> c = rt->array_zeros<unsigned long long>(nc);
  k_writers<<<blocks_for(n), 256>>>(a, c, n, nc);
  rt->check();
  std::vector<uint32_t> ha(n);
  std::vector<unsigned long long> hc(nc);
  rt->copy_to_host(a, ha.data(), n);
  rt->copy_to_host(c, hc.data(), nc);
  for (size_t i = 0; i < n; ++i)
    EXPECT(ha[i] == uint32_t(i * 7 + 4), "a[%zu] = %u", i, ha[i]);
  for (uint32_t j = 0; j < nc; ++j)
    EXPECT(hc[j] == n / nc + (j < n % nc), "count[%u] = %llu", j, hc[j]);
}

// Cache 1/64 of the data, small lines: every access races with evictions.
void test_eviction(bam::backend b)
{
  const size_t bytes = g_small ? (size_t(1) << 20) : (size_t(32) << 20);
  const size_t n = bytes / 4;
  auto rt = make_rt(cfg_for(b, bytes / 64, 512));
  bam::array<uint32_t> a = rt->array_zeros<uint32_t>(n);
  bam::array<unsigned int> cnt = rt->array_zeros<unsigned int>(n / 16);
  // array_ref keeps one line pinned per thread, and these threads write
  // scattered lines: run at most half as many threads as the cache has lines.
  const unsigned writers = unsigned(std::max<size_t>(1, rt->cache_lines() / 2));
  const unsigned wb = std::min(writers, 256u);
  k_ref_writer<<<writers / wb, wb>>>(a, n, 1000003);
  // The random readers and incrementers: one warp per 64 cache lines. Each
  // warp pins one line at a time, so they never want more than half the
  // cache at once. With 2112 resident warps on a 1024-line cache instead,
  // fetchers spent their time looking for free slots (the run took a
  // minute at a tenth of the storage's rate) and one could wait past the
  // 30 s stall bound. Eviction still happens on nearly every access: the
  // arrays are 64 and 4 times the cache.
  const unsigned warps = unsigned(std::max<size_t>(1, rt->cache_lines() / 64));
  dbuf<unsigned long long> bad(1);
  k_verify<<<warps, 32>>>(a, n, 99, bad.p);
  const int per = 64;
  k_random_incr<<<warps, 32>>>(cnt, n / 16, 5, per);
  rt->check();
  EXPECT(bad.host()[0] == 0, "%llu reads saw wrong data", bad.host()[0]);
  std::vector<uint32_t> ha(n);
  rt->copy_to_host(a, ha.data(), n);
  for (size_t i = 0; i < n; ++i)
    EXPECT(ha[i] == uint32_t(mix(i)), "a[%zu] lost its write", i);
  std::vector<unsigned int> hc(n / 16);
  rt->copy_to_host(cnt, hc.data(), n / 16);
  unsigned long long total = 0;
  for (auto v : hc)
    total += v;
  EXPECT(total == (unsigned long long)warps * 32 * per, "increments: %llu", total);
  bam::stats s = rt->stats();
  EXPECT(s.evictions > 0 && s.writebacks > 0, "no evictions (%llu) or write-backs (%llu)",
         (unsigned long long)s.evictions, (unsigned long long)s.writebacks);
}

// The hit path's element loads per element size (1, 2, 8 bytes: loads of
// that width; 16 bytes: a vector load, and with BAM_HIT_ORDER_BY_ACQUIRE a
// plain load and fence) while other warps' misses evict and refill the
// slots under them: a cache of 1/16 of the
// array, 512-byte lines, one warp per 64 cache lines reading random
// elements (as test_eviction: never more than half the cache pinned).
// Every value is checked.
struct elem16 {
  uint64_t lo, hi;
};
template <class T>
__host__ __device__ inline T value_at(size_t i)
{
  if constexpr (sizeof(T) == 16)
    return T{mix(i), ~mix(i) + i};
  else
    return T(mix(i) >> 3);
}
template <class T>
__host__ __device__ inline bool same(const T& x, const T& y)
{
  if constexpr (sizeof(T) == 16)
    return x.lo == y.lo && x.hi == y.hi;
  else
    return x == y;
}

template <class T>
__global__ void k_verify_hits(bam::array<const T> a, size_t n, uint64_t seed, unsigned long long* bad)
{
  uint64_t x = seed + blockIdx.x * 1315423911ull + threadIdx.x;
  size_t last = 0;
  for (int k = 0; k < 256; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    // every 4th access reads the neighbour of the last one: same line, mostly a hit
    const size_t i = (k & 3) ? size_t(x >> 17) % n : (last ^ 1) % n;
    last = i;
    if (!same(a[i], value_at<T>(i)))
      atomicAdd(bad, 1ull);
  }
}

template <class T>
void test_hit_sizes_one()
{
  const size_t bytes = g_small ? (size_t(1) << 20) : (size_t(8) << 20);
  const size_t n = bytes / sizeof(T);
  std::vector<T> h(n);
  for (size_t i = 0; i < n; ++i)
    h[i] = value_at<T>(i);
  auto rt = make_rt(cfg_for(bam::backend::hbm, bytes / 16, 512));
  bam::array<const T> a = rt->array_from_host(h.data(), n);
  const unsigned warps = unsigned(std::max<size_t>(1, rt->cache_lines() / 64));
  dbuf<unsigned long long> bad(1);
  k_verify_hits<T><<<warps, 32>>>(a, n, 17 + sizeof(T), bad.p);
  CUDA_OK(cudaDeviceSynchronize());
  rt->check();
  EXPECT(bad.host()[0] == 0, "%zu-byte elements: %llu reads saw wrong data", sizeof(T), bad.host()[0]);
  const bam::stats s = rt->stats();
  // hit_accesses: reads the pin-free hit path served (stats_row::hit_elems)
  EXPECT(s.evictions > 0 && s.hit_accesses > 0 && s.hit_accesses <= s.accesses && s.bytes == s.accesses * sizeof(T),
         "%zu-byte elements: evictions %llu, pin-free reads %llu of %llu accesses, %llu bytes", sizeof(T),
         (unsigned long long)s.evictions, (unsigned long long)s.hit_accesses, (unsigned long long)s.accesses,
         (unsigned long long)s.bytes);
}

void test_hit_sizes()
{
  test_hit_sizes_one<uint8_t>();
  test_hit_sizes_one<uint16_t>();
  test_hit_sizes_one<uint64_t>();
  test_hit_sizes_one<elem16>();
}

void test_file_and_device(bam::backend b)
{
  const size_t n = g_small ? 10000 : 1000000, skip_elems = 3;
  auto h = pattern(n + skip_elems);
  char path[] = "/tmp/bam_test_XXXXXX";
  int fd = mkstemp(path);
  EXPECT(fd >= 0, "mkstemp");
  EXPECT(write(fd, h.data(), h.size() * 8) == ssize_t(h.size() * 8), "write");
  close(fd);
  auto rt = make_rt(cfg_for(b, size_t(16) << 20));
  bam::array<uint64_t> f = rt->array_from_file<uint64_t>(path, skip_elems * 8, n);
  unlink(path);
  dbuf<uint64_t> src(n), out(n);
  CUDA_OK(cudaMemcpy(src.p, h.data(), n * 8, cudaMemcpyHostToDevice));
  bam::array<uint64_t> d = rt->array_from_device(src.p, n);
  k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(f, out.p, n);
  rt->check();
  auto got = out.host();
  for (size_t i = 0; i < n; ++i)
    EXPECT(got[i] == h[i + skip_elems], "file element %zu", i);
  k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(d, out.p, n);
  rt->check();
  got = out.host();
  for (size_t i = 0; i < n; ++i)
    EXPECT(got[i] == h[i], "device element %zu", i);
  rt->free(f);
  bam::array<uint64_t> again = rt->array_zeros<uint64_t>(n); // reuses the freed id
  std::vector<uint64_t> z(n, 1);
  rt->copy_to_host(again, z.data(), n);
  for (size_t i = 0; i < n; ++i)
    EXPECT(z[i] == 0, "zeros after free/reuse");
}

template <class T>
void atomics_for(const char* tn)
{
  auto rt = make_rt(cfg_for(bam::backend::hbm, size_t(4) << 20));
  const int iters = 4, blocks = 8, threads = 128, total = blocks * threads;
  std::vector<T> init = {T(0), T(0), T(1 << 20), T(total * iters), T(0), T(0), T(0), T(0)};
  bam::array<T> a = rt->array_from_host(init.data(), 8);
  k_atomics<T><<<blocks, threads>>>(a, iters);
  std::vector<T> h(8);
  rt->copy_to_host(a, h.data(), 8);
  EXPECT(h[0] == T(total * iters), "%s add: %g", tn, double(h[0]));
  EXPECT(h[1] == T(total - 1), "%s max: %g", tn, double(h[1]));
  EXPECT(h[2] == T(1), "%s min: %g", tn, double(h[2]));
  EXPECT(h[3] == T(0), "%s sub: %g", tn, double(h[3]));
  EXPECT(h[4] == T(42), "%s exch", tn);
  EXPECT(h[5] >= T(100) && h[5] < T(100 + total), "%s cas", tn);
}

void test_atomics()
{
  atomics_for<int>("int");
  atomics_for<unsigned int>("unsigned");
  atomics_for<unsigned long long>("ull");
  atomics_for<int64_t>("int64_t");
  atomics_for<float>("float");
  atomics_for<double>("double");
  auto rt = make_rt(cfg_for(bam::backend::hbm, size_t(4) << 20));
  std::vector<int64_t> init = {0, -1, 0};
  bam::array<int64_t> a = rt->array_from_host(init.data(), 3);
  k_int_bits<<<2, 64>>>(a);
  std::vector<int64_t> h(3);
  rt->copy_to_host(a, h.data(), 3);
  EXPECT(h[0] == -1 && h[1] == 0 && h[2] == 0, "or/and/xor: %llx %llx %llx", (long long)h[0], (long long)h[1],
         (long long)h[2]);
}

// Storage faults: `error` (permanent, Do Not Retry) must reach the host as
// bam::error; `transient` (retried by the queue code), `delay` and
// `reorder` must not change results.
void test_emu_fault(const char* fault)
{
  bam::config c = cfg_for(bam::backend::emu, size_t(2) << 20);
  c.emu_fault = fault;
  c.emu_fault_rate = 0.05;
  auto rt = make_rt(c);
  const size_t n = g_small ? 20000 : (size_t(2) << 20);
  auto h = pattern(n);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), n);
  dbuf<uint64_t> out(n);
  k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(a, out.p, n);
  if (std::strcmp(fault, "error") == 0) {
    try {
      rt->check();
    } catch (const bam::error& e) {
      EXPECT(std::strstr(e.what(), "device-side read") != nullptr && std::strstr(e.what(), "permanent error") != nullptr,
             "unexpected message: %s", e.what());
      std::printf("     (error surfaced: %.160s...)\n", e.what());
      return;
    }
    EXPECT(false, "injected errors did not surface");
  }
  rt->check();
  auto got = out.host();
  for (size_t i = 0; i < n; ++i)
    EXPECT(got[i] == h[i], "element %zu wrong under fault '%s'", i, fault);
}

// What the port inserts after a host synchronization: check_sync throws at
// once, naming the array the port named, the place and the NVMe status;
// with no fault it returns without a device call.
void test_emu_fault_check_sync()
{
  for (const char* fault : {"none", "error"}) {
    bam::config c = cfg_for(bam::backend::emu, size_t(2) << 20);
    c.emu_fault = fault;
    c.emu_fault_rate = 0.05;
    auto rt = make_rt(c);
    const size_t n = g_small ? 20000 : (size_t(2) << 20);
    auto h = pattern(n);
    bam::array<uint64_t> a = rt->array_from_host(h.data(), n, "edges_d");
    dbuf<uint64_t> out(n);
    k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(a, out.p, n);
    rt->check_launch("k_copy_linear", dim3(256));
    cudaDeviceSynchronize();
    const bool failing = std::strcmp(fault, "error") == 0;
    try {
      rt->check_sync("prog.cu", 42);
      EXPECT(!failing, "check_sync after a kernel with injected permanent errors did not throw");
    } catch (const bam::error& e) {
      EXPECT(failing, "check_sync threw without a fault: %s", e.what());
      EXPECT(std::strstr(e.what(), "device-side read of line") != nullptr &&
                 std::strstr(e.what(), "of array \"edges_d\" (#") != nullptr &&
                 std::strstr(e.what(), "permanent error") != nullptr &&
                 std::strstr(e.what(), "found at the synchronization at prog.cu:42") != nullptr,
             "unexpected message: %s", e.what());
      std::printf("     (check_sync: %.200s...)\n", e.what());
      rt->check_sync("prog.cu", 43); // reported once: the next check is quiet
    }
  }
}

// A runtime made with BAM_GPU_BUDGET=budget (placement reads it when the
// runtime is made); the variable is restored afterwards.
std::unique_ptr<bam::runtime> make_rt_with_budget(const bam::config& c, const char* budget)
{
  const char* old = std::getenv("BAM_GPU_BUDGET");
  const std::string saved = old ? old : "";
  setenv("BAM_GPU_BUDGET", budget, 1);
  auto rt = make_rt(c);
  if (old)
    setenv("BAM_GPU_BUDGET", saved.c_str(), 1);
  else
    unsetenv("BAM_GPU_BUDGET");
  return rt;
}

// Placement by size: with the sizes announced, the largest array leaves GPU
// memory whatever order the arrays are made in; off hbm, a resident array is
// a copy in GPU memory (kernels, copy_to_host and write_bytes see the data).
void test_placement_by_size(bam::backend b)
{
  auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "3M");
  const size_t big = (size_t(4) << 20) / 8, small = (size_t(1) << 20) / 8; // elements of uint64_t
  rt->plan_arrays(small * 8, big * 8, small * 8);
  auto hb = pattern(big), hs = pattern(small);
  bam::array<uint64_t> a = rt->array_from_host(hb.data(), big, "big");  // made first, largest
  bam::array<uint64_t> c = rt->array_from_host(hs.data(), small, "small1");
  bam::array<uint64_t> d = rt->array_zeros<uint64_t>(small, "small2");
  EXPECT(a.placement() != bam::placement::resident, "the largest array stayed resident");
  EXPECT(c.placement() == bam::placement::resident && d.placement() == bam::placement::resident,
         "the small arrays left GPU memory: %d %d", int(c.placement()), int(d.placement()));
  dbuf<uint64_t> out(small);
  k_copy_linear<uint64_t><<<blocks_for(small), 256>>>(c, out.p, small);
  rt->check_launch("k_copy_linear", dim3(256));
  auto got = out.host();
  for (size_t i = 0; i < small; ++i)
    EXPECT(got[i] == hs[i], "resident element %zu wrong", i);
  uint64_t v = 77;
  rt->write_bytes(d, 5, &v, sizeof v);
  std::vector<uint64_t> back(small);
  rt->copy_to_host(d, back.data(), small);
  EXPECT(back[5] == 77 && back[4] == 0 && back[6] == 0, "write_bytes/copy_to_host on a resident array");
  rt->free(c);
  rt->free(d);
  rt->free(a);
}

// Kernel versions (what `bamgen port` emits): one body, run over
// bam::direct_array views when every array is direct and over the
// bam::arrays otherwise. Both give the same result: reads, plain writes,
// compound assignment, read()/write(), and atomics. The kernel records which
// version ran, so the test knows each backend took the path it should.
__global__ void k_versions(bam::array<const uint64_t> x, bam::array<uint64_t> y, bam::array<unsigned long long> sum,
                           size_t n, int* direct_ran)
{
  bam::by_placement(
      [&](auto x, auto y, auto sum) {
        const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
        if (i == 0)
          *direct_ran = std::is_same<decltype(y), bam::direct_array<uint64_t>>::value &&
                                std::is_same<decltype(x), bam::direct_array<const uint64_t, true>>::value
                            ? 1
                            : 0;
        if (i >= n)
          return;
        y[i] += x[i];
        y.write(i, y.read(i) * 2);
        sum.atomic_add(i % 7, (unsigned long long)x[i]);
      },
      bam::read_only(x), y, sum); // x: a const T* __restrict__ parameter's array
}

__global__ void k_scale(bam::array<uint64_t> a, size_t n)
{
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    a[i] = a[i] * 3 + 1;
}

// copy_bytes (what `bamgen port` makes of cudaMemcpy D2D between two ported
// buffers, and of cfd's copy<T> wrapper): the source's latest contents,
// still in dirty cache lines, reach the destination; the destination's
// lines the cache held before the copy are not read again; a copy within
// one array that overlaps itself moves like memmove; a range past an end
// throws. Cached (a 1 MiB cache, 2.4 MB arrays: evictions) and resident.
void test_copy_bytes(bam::backend b, bool resident)
{
  const size_t n = 300000;
  auto rt = make_rt_with_budget(cfg_for(b, size_t(1) << 20), resident ? "1G" : "0");
  auto h = pattern(n);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), n, "a");
  bam::array<uint64_t> c = rt->array_zeros<uint64_t>(n, "c");
  dbuf<uint64_t> out(n);
  k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(c, out.p, n); // c's zero lines in the cache
  k_scale<<<blocks_for(n), 256>>>(a, n);                         // a's new values in dirty lines
  rt->check();
  const size_t first = 50, at = 100, count = 250000;
  rt->copy_bytes(c, at, a, first, count * sizeof(uint64_t));
  k_copy_linear<uint64_t><<<blocks_for(n), 256>>>(c, out.p, n);
  rt->check();
  auto got = out.host();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t want = i >= at && i < at + count ? h[i - at + first] * 3 + 1 : 0;
    EXPECT(got[i] == want, "c[%zu] after copy_bytes: got %llx want %llx", i, (unsigned long long)got[i],
           (unsigned long long)want);
  }
  rt->copy_bytes(a, 10, a, 0, 1000 * sizeof(uint64_t)); // overlapping: memmove
  std::vector<uint64_t> back(n);
  rt->copy_to_host(a, back.data(), n);
  for (size_t i = 0; i < 1010; ++i) {
    const uint64_t want = (i < 10 ? h[i] : h[i - 10]) * 3 + 1;
    EXPECT(back[i] == want, "a[%zu] after an overlapping copy_bytes: got %llx want %llx", i,
           (unsigned long long)back[i], (unsigned long long)want);
  }
  bool threw = false;
  try {
    rt->copy_bytes(c, n - 10, a, 0, 11 * sizeof(uint64_t));
  } catch (const bam::error&) {
    threw = true;
  }
  EXPECT(threw, "copy_bytes past the destination's end did not throw");
  EXPECT((a.placement() == bam::placement::resident) == resident, "a's placement is %d", int(a.placement()));
  rt->free(a);
  rt->free(c);
}

void test_versions(bam::backend b, bool resident)
{
  auto rt = make_rt_with_budget(cfg_for(b, size_t(1) << 20), resident ? "1G" : "0"); // smaller than the data: evictions on the cached path
  const size_t n = (size_t(4) << 20) / 8;
  auto hx = pattern(n);
  std::vector<uint64_t> hy(n);
  for (size_t i = 0; i < n; ++i)
    hy[i] = i * 3;
  bam::array<uint64_t> x = rt->array_from_host(hx.data(), n, "x");
  bam::array<uint64_t> y = rt->array_from_host(hy.data(), n, "y");
  bam::array<unsigned long long> sum = rt->array_zeros<unsigned long long>(7, "sum");
  dbuf<int> ran(1);
  k_versions<<<blocks_for(n), 256>>>(x, y, sum, n, ran.p);
  rt->check_launch("k_versions", dim3(256));
  EXPECT(ran.host()[0] == (resident ? 1 : 0), "the %s version ran", resident ? "cached" : "direct");
  std::vector<uint64_t> gy(n);
  rt->copy_to_host(y, gy.data(), n);
  std::vector<unsigned long long> gs(7), want(7, 0);
  rt->copy_to_host(sum, gs.data(), 7);
  for (size_t i = 0; i < n; ++i) {
    EXPECT(gy[i] == (hy[i] + hx[i]) * 2, "y[%zu] = %llu", i, (unsigned long long)gy[i]);
    want[i % 7] += hx[i];
  }
  for (int k = 0; k < 7; ++k)
    EXPECT(gs[k] == want[k], "sum[%d] = %llu, want %llu", k, gs[k], want[k]);
  rt->free(x);
  rt->free(y);
  rt->free(sum);
}

// The budget is an estimate: when the memory it promised is gone (here a
// blocker takes all but 768 MiB after the runtime is made; kernels need
// some of that for their stack), an array the
// budget keeps in GPU memory is read where the backend keeps it instead of
// failing, and its data is right.
void test_resident_fallback(bam::backend b)
{
  auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "1024G");
  const size_t n = (size_t(1) << 30) / 8; // 1 GiB of uint64_t: more than the blocker leaves
  auto h = pattern(n);
  size_t free_b = 0, total_b = 0;
  EXPECT(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess, "cudaMemGetInfo");
  void* blocker = nullptr;
  const size_t leave = size_t(768) << 20;
  EXPECT(free_b > leave && cudaMalloc(&blocker, free_b - leave) == cudaSuccess, "blocker of %zu MiB", (free_b - leave) >> 20);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), n, "big");
  EXPECT(a.placement() != bam::placement::resident, "a 1 GiB array stayed resident with 768 MiB free");
  EXPECT(cudaGetLastError() == cudaSuccess, "the failed allocation left a CUDA error behind");
  dbuf<uint64_t> out(size_t(1) << 16);
  k_copy_linear<uint64_t><<<blocks_for(size_t(1) << 16), 256>>>(a, out.p, size_t(1) << 16);
  rt->check_launch("k_copy_linear", dim3(256));
  auto got = out.host();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT(got[i] == h[i], "element %zu wrong after the fallback", i);
  rt->free(a);
  cudaFree(blocker);
}

// The miss path's stack (BAM_STACK_BYTES) is raised, and reserved by the
// driver, only once an array is read through the cache: a program whose
// arrays all stay in GPU memory keeps the driver's default and the memory
// the reservation would take (~264 MiB on an H200). An announced plan with
// an array bound for the cache raises it before any array is made.
size_t stack_limit()
{
  size_t v = 0;
  EXPECT(cudaDeviceGetLimit(&v, cudaLimitStackSize) == cudaSuccess, "cudaDeviceGetLimit");
  return v;
}

void read_back_check(bam::runtime& rt, const bam::array<uint64_t>& a, const std::vector<uint64_t>& h, const char* what)
{
  dbuf<uint64_t> out(h.size());
  k_copy_linear<uint64_t><<<blocks_for(h.size()), 256>>>(a, out.p, h.size());
  rt.check_launch("k_copy_linear", dim3(256));
  auto got = out.host();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT(got[i] == h[i], "%s: element %zu wrong", what, i);
}

void test_stack_lazy(bam::backend b)
{
  const size_t lim0 = stack_limit();
  if (lim0 >= 2048)
    throw skip("the stack limit already is " + std::to_string(lim0) + " bytes in a new process");
  const size_t n = (size_t(1) << 20) / 8;
  auto h = pattern(n);
  {
    auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "64M");
    bam::array<uint64_t> a = rt->array_from_host(h.data(), n, "resident");
    EXPECT(a.placement() == bam::placement::resident, "a 1 MiB array left a 64 MiB budget");
    read_back_check(*rt, a, h, "resident");
    EXPECT(stack_limit() == lim0, "the stack went from %zu to %zu bytes with no array in the cache", lim0, stack_limit());
    rt->free(a);
  }
  {
    auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "2M");
    rt->plan_arrays(size_t(1) << 20, size_t(8) << 20);
    EXPECT(stack_limit() >= 2048, "a plan with an 8 MiB array bound for the cache left the stack at %zu bytes",
           stack_limit());
    bam::array<uint64_t> a = rt->array_from_host(h.data(), n, "small");
    auto hb = pattern(8 * n);
    bam::array<uint64_t> c = rt->array_from_host(hb.data(), 8 * n, "big");
    EXPECT(a.placement() == bam::placement::resident && c.placement() == bam::placement::cache,
           "placements %d %d (want resident, cache)", int(a.placement()), int(c.placement()));
    read_back_check(*rt, c, hb, "cached");
    rt->free(a);
    rt->free(c);
  }
}

// The headroom a budget leaves the program survives the stack's
// reservation. The matrix's nofit runs hold all but 640 MiB with a blocker
// and set BAM_GPU_BUDGET = free - cache - 192 MiB; the reservation (~266
// MiB on an H200) then came out of the program's 192 MiB, resident arrays
// took the rest, and the ODT plan's cudaMalloc failed. Here: 768 MiB left,
// four announced 96 MiB arrays and a 1 GiB one bound for the cache; once
// they are made, at least the budget's headroom (less 32 MiB of slack for
// the runtime's own small allocations) must still be free.
void test_stack_headroom(bam::backend b)
{
  if (stack_limit() >= 2048)
    throw skip("the stack limit already is " + std::to_string(stack_limit()) + " bytes in a new process");
  size_t free0 = 0, total = 0;
  EXPECT(cudaMemGetInfo(&free0, &total) == cudaSuccess, "cudaMemGetInfo");
  void* blocker = nullptr;
  const size_t leave = size_t(768) << 20, cache = size_t(2) << 20, headroom = size_t(192) << 20;
  EXPECT(free0 > leave && cudaMalloc(&blocker, free0 - leave) == cudaSuccess, "blocker of %zu MiB", (free0 - leave) >> 20);
  size_t free1 = 0;
  EXPECT(cudaMemGetInfo(&free1, &total) == cudaSuccess, "cudaMemGetInfo");
  const std::string budget = std::to_string(free1 - cache - headroom);
  {
    auto rt = make_rt_with_budget(cfg_for(b, cache), budget.c_str());
    const size_t n = (size_t(96) << 20) / 8;
    rt->plan_arrays(n * 8, n * 8, n * 8, n * 8, size_t(1) << 30);
    EXPECT(stack_limit() >= 2048, "a plan with a 1 GiB array bound for the cache left the stack at %zu bytes",
           stack_limit());
    auto h = pattern(n);
    std::vector<bam::array<uint64_t>> made;
    for (int k = 0; k < 4; ++k)
      made.push_back(rt->array_from_host(h.data(), n, "part"));
    size_t free2 = 0;
    EXPECT(cudaMemGetInfo(&free2, &total) == cudaSuccess, "cudaMemGetInfo");
    EXPECT(free2 + (size_t(32) << 20) >= headroom,
           "%zu MiB free once the arrays are made; the budget (free - cache - %zu MiB) left the program %zu MiB",
           free2 >> 20, headroom >> 20, headroom >> 20);
    read_back_check(*rt, made.back(), h, "after the reservation");
    for (auto& a : made)
      rt->free(a);
  }
  cudaFree(blocker);
}

// remake_zeros / remake_from_host (what the port makes of a whole-buffer
// cudaMemset / cudaMemcpy after the first): the contents are replaced
// whether the array is resident (overwritten in place: same handle) or
// cached (made again: its old lines must not be served).
void test_remake(bam::backend b, bool resident)
{
  auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), resident ? "64M" : "0");
  const size_t n = (size_t(4) << 20) / 8;
  auto h = pattern(n);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), n, "a");
  EXPECT((a.placement() == bam::placement::resident) == resident, "placement %d", int(a.placement()));
  read_back_check(*rt, a, h, "before the remake"); // fills the cache when cached
  rt->remake_zeros(a, n);
  read_back_check(*rt, a, std::vector<uint64_t>(n, 0), "after remake_zeros");
  std::vector<uint64_t> h2(n);
  for (size_t i = 0; i < n; ++i)
    h2[i] = h[i] ^ 0x5555;
  rt->remake_from_host(a, h2.data(), n);
  read_back_check(*rt, a, h2, "after remake_from_host");
  rt->remake_zeros(a, n / 2); // another size: made again
  EXPECT(a.size() == n / 2, "size %zu after a remake to n/2", a.size());
  read_back_check(*rt, a, std::vector<uint64_t>(n / 2, 0), "after a remake to another size");
  rt->free(a);
}

// array_wrap: managed, mapped pinned and device memory are read and written
// in place (the program and kernels see one copy, nothing is copied back),
// free() releases only the handle, and pageable memory is refused.
__global__ void k_add_one(bam::array<uint64_t> a, size_t n)
{
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n)
    a[i] = a[i] + 1;
}

void test_wrap(bam::backend b)
{
  auto rt = make_rt(cfg_for(b, size_t(2) << 20));
  const size_t n = 100003;
  const size_t live0 = rt->live_arrays();
  uint64_t *managed = nullptr, *pinned = nullptr, *dev = nullptr;
  EXPECT(cudaMallocManaged(&managed, n * 8) == cudaSuccess, "cudaMallocManaged");
  EXPECT(cudaHostAlloc(&pinned, n * 8, cudaHostAllocMapped) == cudaSuccess, "cudaHostAlloc");
  EXPECT(cudaMalloc(&dev, n * 8) == cudaSuccess, "cudaMalloc");
  auto h = pattern(n);
  for (size_t i = 0; i < n; ++i)
    managed[i] = pinned[i] = h[i];
  cudaMemcpy(dev, h.data(), n * 8, cudaMemcpyHostToDevice);
  uint64_t* devview = nullptr;
  cudaHostGetDevicePointer((void**)&devview, pinned, 0);
  for (uint64_t* p : {managed, devview, dev}) {
    bam::array<uint64_t> a = rt->array_wrap(p, n, "wrapped");
    EXPECT(a.placement() == bam::placement::resident, "a wrapped array is read in place");
    for (int round = 0; round < 2; ++round) { // the host reads between launches, as ported loops do
      k_add_one<<<blocks_for(n), 256>>>(a, n);
      rt->check_launch("k_add_one", dim3(256));
      cudaDeviceSynchronize();
      if (p == dev) {
        std::vector<uint64_t> got(n);
        cudaMemcpy(got.data(), dev, n * 8, cudaMemcpyDeviceToHost);
        EXPECT(got[7] == h[7] + round + 1, "device memory not written in place");
      } else {
        const uint64_t* hp = p == devview ? pinned : managed;
        EXPECT(hp[n - 1] == h[n - 1] + round + 1 && hp[0] == h[0] + round + 1, "host-visible memory not written in place");
      }
    }
    uint64_t v = 5, back = 0;
    rt->write_bytes(a, 3, &v, sizeof v);
    rt->read_bytes(a, 3, &back, sizeof back);
    EXPECT(back == 5, "write_bytes/read_bytes on a wrapped array: %llu", (unsigned long long)back);
    std::vector<uint64_t> all(n);
    rt->copy_to_host(a, all.data(), n);
    EXPECT(all[3] == 5 && all[4] == h[4] + 2, "copy_to_host of a wrapped array");
    rt->free(a);
  }
  EXPECT(rt->live_arrays() == live0, "free() left handles");
  EXPECT(managed[4] == h[4] + 2 && pinned[4] == h[4] + 2, "free() released the program's memory");
  std::vector<uint64_t> pageable(16);
  bool threw = false;
  try {
    (void)rt->array_wrap(pageable.data(), pageable.size(), "pageable");
  } catch (const bam::error& e) {
    threw = std::string(e.what()).find("pageable") != std::string::npos;
  }
  EXPECT(threw, "array_wrap accepted pageable memory");
  cudaFree(managed);
  cudaFreeHost(pinned);
  cudaFree(dev);
}

// Where UVM keeps a wrapped managed range, as CUDA reports it: the
// preferred location (cudaInvalidDeviceId: none) and whether `device` is
// among the processors it is mapped for.
struct uvm_advice {
  int preferred = cudaInvalidDeviceId;
  bool accessed_by = false;
};
uvm_advice advice_of(const void* p, size_t bytes, int device)
{
  uvm_advice a;
  EXPECT(cudaMemRangeGetAttribute(&a.preferred, sizeof a.preferred, cudaMemRangeAttributePreferredLocation, p, bytes) ==
             cudaSuccess,
         "cudaMemRangeGetAttribute(preferred location)");
  int by[8];
  EXPECT(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, p, bytes) == cudaSuccess,
         "cudaMemRangeGetAttribute(accessed by)");
  for (int d : by)
    a.accessed_by = a.accessed_by || d == device;
  return a;
}

// Wrapped managed memory gets a home (session 14: left to UVM's page faults
// on a nearly full GPU, cc's odt port stalled): GPU memory, prefetched and
// charged to the budget, when the budget has room; host memory mapped for
// the GPU when it has not; the advice is taken back at free(), and a range
// the program advised itself is left alone. The data is read and written in
// place whichever home it gets.
void test_wrap_managed_home(bam::backend b)
{
  int dev = 0, concurrent = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev);
  if (!concurrent) {
    std::printf("     (no concurrent managed access: nothing is advised)\n");
    return;
  }
  const size_t n = (size_t(4) << 20) / 8; // 4 MiB
  const size_t bytes = n * 8;
  auto h = pattern(n);
  uint64_t* m = nullptr;
  EXPECT(cudaMallocManaged(&m, bytes) == cudaSuccess, "cudaMallocManaged");
  std::memcpy(m, h.data(), bytes);
  auto add_twice_and_check = [&](bam::runtime& rt, bam::array<uint64_t>& a, uint64_t base, const char* what) {
    for (int round = 1; round <= 2; ++round) { // the host reads between launches, as ported loops do
      k_add_one<<<blocks_for(n), 256>>>(a, n);
      rt.check_launch("k_add_one", dim3(256));
      cudaDeviceSynchronize();
      EXPECT(m[0] == h[0] + base + round && m[n - 1] == h[n - 1] + base + round, "%s: round %d not written in place",
             what, round);
    }
  };
  { // the budget has room: GPU memory, charged until free()
    auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "6M");
    bam::array<uint64_t> a = rt->array_wrap(m, n, "labels");
    cudaDeviceSynchronize();
    uvm_advice got = advice_of(m, bytes, dev);
    EXPECT(got.preferred == dev && !got.accessed_by, "budget with room: preferred %d (want %d), accessed by %d",
           got.preferred, dev, int(got.accessed_by));
    auto other = pattern(n);
    bam::array<uint64_t> c = rt->array_from_host(other.data(), n, "other");
    EXPECT(c.placement() != bam::placement::resident, "4 + 4 MiB resident in a 6 MiB budget: the wrap was not charged");
    rt->free(c);
    add_twice_and_check(*rt, a, 0, "GPU home");
    rt->free(a);
    got = advice_of(m, bytes, dev);
    EXPECT(got.preferred == cudaInvalidDeviceId, "free() left the preferred location %d", got.preferred);
    bam::array<uint64_t> d = rt->array_from_host(other.data(), n, "after");
    EXPECT(d.placement() == bam::placement::resident, "free() did not give the wrap's 4 MiB back to the budget");
    rt->free(d);
  }
  { // no room: host memory, mapped for the GPU
    auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "1M");
    bam::array<uint64_t> a = rt->array_wrap(m, n, "labels");
    uvm_advice got = advice_of(m, bytes, dev);
    EXPECT(got.preferred == cudaCpuDeviceId && got.accessed_by, "budget without room: preferred %d, accessed by %d",
           got.preferred, int(got.accessed_by));
    add_twice_and_check(*rt, a, 2, "host home");
    rt->free(a);
    got = advice_of(m, bytes, dev);
    EXPECT(got.preferred == cudaInvalidDeviceId && !got.accessed_by, "free() left advice: preferred %d, accessed by %d",
           got.preferred, int(got.accessed_by));
  }
  { // the program's own advice stays
    EXPECT(bam::detail::mem_advise(m, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId) == cudaSuccess,
           "cudaMemAdvise");
    auto rt = make_rt_with_budget(cfg_for(b, size_t(2) << 20), "64M");
    bam::array<uint64_t> a = rt->array_wrap(m, n, "labels");
    EXPECT(advice_of(m, bytes, dev).preferred == cudaCpuDeviceId, "the program's preferred location was changed");
    add_twice_and_check(*rt, a, 4, "program's advice");
    rt->free(a);
    EXPECT(advice_of(m, bytes, dev).preferred == cudaCpuDeviceId, "free() took back advice the runtime did not give");
  }
  cudaFree(m);
}

void test_odt()
{
  std::mt19937_64 rng(3);
  const size_t nv = g_small ? 2000 : 200000;
  std::vector<uint64_t> rowptr(nv + 1, 0);
  for (size_t v = 0; v < nv; ++v) {
    unsigned r = unsigned(rng() % 100);
    rowptr[v + 1] = rowptr[v] + (r < 15 ? 0 : r < 97 ? rng() % 20 : rng() % 5000);
  }
  const size_t ne = rowptr[nv], ept = 512, nt = bam::odt::tile_count(ne, ept);
  dbuf<uint64_t> drp(nv + 1);
  dbuf<uint32_t> fvl(bam::odt::fvl_entries(ne, ept));
  CUDA_OK(cudaMemcpy(drp.p, rowptr.data(), (nv + 1) * 8, cudaMemcpyHostToDevice));
  bam::build_first_vertex_list(drp.p, nv, ne, ept, fvl.p);
  CUDA_OK(cudaDeviceSynchronize());
  auto got = fvl.host();
  size_t v = 0;
  for (size_t t = 0; t < nt; ++t) {
    while (!(rowptr[v] <= t * ept && t * ept < rowptr[v + 1]))
      ++v;
    EXPECT(got[t] == v, "fvl[%zu] = %u, owner %zu", t, got[t], v);
  }
  EXPECT(got[nt] == nv, "sentinel fvl[%zu] = %u, want %zu", nt, got[nt], nv);
}

// What an edge adds to its vertex's sum: its value, or (weight_of) the
// value of another cached array at it, as BFS's levels or CC's labels.
struct edge_itself {
  __device__ unsigned long long operator()(uint32_t u) const { return u; }
};
struct weight_of {
  bam::array<const uint32_t> w;
  __device__ unsigned long long operator()(uint32_t u) const { return w[u % w.size()]; }
};

// ODT through the tile view, warp-per-vertex as bamgen writes it: every
// edge's contribution is added to its vertex's sum exactly once.
template <class Value = edge_itself>
__global__ void k_odt_tile_sums(const bam::odt_plan plan, const uint64_t* rowptr, bam::array<const uint32_t> edges,
                                unsigned long long* sums, Value value = Value{})
{
  bam::odt_tile view(edges);
  bam::odt_for_each_tile(plan, rowptr, view, [&](unsigned long long v, unsigned long long lo, unsigned long long hi) {
    const uint64_t s = rowptr[v], e = rowptr[v + 1];
    unsigned long long local = 0;
    for (uint64_t i = bam::odt_first_strided((s & ~31ull) + bam::lane_id(), lo, 32); i < e && i < hi; i += 32)
      if (i >= s)
        local += value(view[i]);
    if (local)
      atomicAdd(&sums[v], local);
  });
}

// Power-law-ish degrees with empty lists and a few lists spanning many
// tiles; a cache of 1/16 of the edges with small lines, so tiles are evicted
// and refetched while other warps hold theirs pinned.
void test_odt_tile(bam::backend b)
{
  std::mt19937_64 rng(11);
  const size_t nv = g_small ? 3001 : 300007;
  std::vector<uint64_t> rowptr(nv + 1, 0);
  for (size_t v = 0; v < nv; ++v) {
    unsigned r = unsigned(rng() % 1000);
    rowptr[v + 1] = rowptr[v] + (r < 150 ? 0 : r < 995 ? rng() % 24 : rng() % 20000);
  }
  const size_t ne = rowptr[nv];
  std::vector<uint32_t> edges(ne);
  for (size_t i = 0; i < ne; ++i)
    edges[i] = uint32_t(mix(i));
  auto rt = make_rt(cfg_for(b, std::max<size_t>(ne * 4 / 16, 64 * 512), 512));
  bam::array<uint32_t> a = rt->array_from_host(edges.data(), ne);
  dbuf<uint64_t> drp(nv + 1);
  CUDA_OK(cudaMemcpy(drp.p, rowptr.data(), (nv + 1) * 8, cudaMemcpyHostToDevice));
  const size_t nt = bam::odt::tile_count(ne, a.elems_per_line());
  dbuf<unsigned long long> fvl(bam::odt::fvl_entries(ne, a.elems_per_line()));
  bam::build_first_vertex_list(drp.p, nv, ne, a.elems_per_line(), fvl.p);
  // Offsets in managed memory, as CC's program has them (the plan prefetches them).
  uint64_t* managed = nullptr;
  CUDA_OK(cudaMallocManaged(&managed, (nv + 1) * 8));
  std::copy(rowptr.begin(), rowptr.end(), managed);
  struct variant {
    const char* name;
    bam::odt_plan plan;
    bool owned;
  } variants[] = {
      {"whole tiles", bam::odt_plan::whole_tiles(fvl.p, nt), false},
      {"items of 16 vertices", bam::build_odt_plan(drp.p, nv, ne, a.elems_per_line(), 16), true},
      {"default items, managed offsets", bam::build_odt_plan(managed, nv, ne, a.elems_per_line()), true},
  };
  EXPECT(variants[1].plan.items > nt && variants[1].plan.item_tile != nullptr,
         "items of 16 vertices: %llu items for %zu tiles (some tile should be split)", variants[1].plan.items, nt);
  for (const variant& x : variants) {
    dbuf<unsigned long long> sums(nv);
    k_odt_tile_sums<<<bam::odt_grid(x.plan, dim3(128), *rt), 128>>>(x.plan, drp.p, a, sums.p);
    rt->check();
    auto got = sums.host();
    for (size_t v = 0; v < nv; ++v) {
      unsigned long long want = 0;
      for (uint64_t i = rowptr[v]; i < rowptr[v + 1]; ++i)
        want += edges[i];
      EXPECT(got[v] == want, "%s: vertex %zu: sum %llu, want %llu", x.name, v, got[v], want);
    }
    if (x.owned)
      bam::free_odt_plan(x.plan);
  }
  CUDA_OK(cudaFree(managed));
}

// ODT in a 16-line cache whose vertex code reads a second cached array
// (weight_of): every warp holding a tile pins a line, and the grid of
// whole 256-thread blocks has 16 warps, as many as the cache has lines.
// Without the driver's bound on tile holders (odt_tile::holding_warps) the
// weight reads found no free slot, which the pointer backends read around
// but the storage backends (emu) waited out until the stall check stopped
// the kernel.
void test_odt_tile_tiny_cache(bam::backend b)
{
  std::mt19937_64 rng(5);
  const size_t nv = g_small ? 2003 : 20011;
  std::vector<uint64_t> rowptr(nv + 1, 0);
  for (size_t v = 0; v < nv; ++v)
    rowptr[v + 1] = rowptr[v] + (rng() % 8 == 0 ? rng() % 300 : rng() % 12);
  const size_t ne = rowptr[nv];
  std::vector<uint32_t> edges(ne), weights(nv * 4);
  for (size_t i = 0; i < ne; ++i)
    edges[i] = uint32_t(mix(i));
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = uint32_t(mix(i + 77) & 0xffff);
  auto rt = make_rt(cfg_for(b, 16 * 512, 512)); // 16 lines
  bam::array<uint32_t> a = rt->array_from_host(edges.data(), ne);
  bam::array<uint32_t> w = rt->array_from_host(weights.data(), weights.size());
  dbuf<uint64_t> drp(nv + 1);
  CUDA_OK(cudaMemcpy(drp.p, rowptr.data(), (nv + 1) * 8, cudaMemcpyHostToDevice));
  const bam::odt_plan plan = bam::build_odt_plan(drp.p, nv, ne, a.elems_per_line());
  const dim3 grid = bam::odt_grid(plan, dim3(256), *rt);
  EXPECT(grid.x * 8 >= rt->cache_lines(), "the grid has %u warps for a cache of %zu lines: the test needs as many",
         grid.x * 8, size_t(rt->cache_lines()));
  dbuf<unsigned long long> sums(nv);
  k_odt_tile_sums<<<grid, 256>>>(plan, drp.p, a, sums.p, weight_of{w});
  rt->check();
  auto got = sums.host();
  for (size_t v = 0; v < nv; ++v) {
    unsigned long long want = 0;
    for (uint64_t i = rowptr[v]; i < rowptr[v + 1]; ++i)
      want += weights[edges[i] % weights.size()];
    EXPECT(got[v] == want, "vertex %zu: sum %llu, want %llu", v, got[v], want);
  }
  bam::free_odt_plan(plan);
}

void test_env_errors()
{
  setenv("BAM_CACHE_BYTES", "abc", 1);
  try {
    bam::runtime rt;
    unsetenv("BAM_CACHE_BYTES");
    EXPECT(false, "BAM_CACHE_BYTES=abc accepted");
  } catch (const bam::error& e) {
    unsetenv("BAM_CACHE_BYTES");
    EXPECT(std::string(e.what()) ==
               "BAM_CACHE_BYTES: 'abc' is not a size; use a number with optional k/M/G suffix, e.g. 256M",
           "message: %s", e.what());
  }
}

// BAM_STACK_BYTES below the miss path's floor is refused when the runtime
// is made (cc's ODT port overflowed a 1 KiB stack: an illegal memory
// access), instead of a kernel overflowing it later.
void test_stack_floor()
{
  setenv("BAM_STACK_BYTES", "1024", 1);
  try {
    bam::runtime rt;
    unsetenv("BAM_STACK_BYTES");
    EXPECT(false, "BAM_STACK_BYTES=1024 accepted");
  } catch (const bam::error& e) {
    unsetenv("BAM_STACK_BYTES");
    EXPECT(std::string(e.what()).find("BAM_STACK_BYTES=1024: the cache's miss path needs at least 2048 bytes") == 0,
           "message: %s", e.what());
  }
}

void test_stats_print()
{
  auto rt = make_rt(cfg_for(bam::backend::hbm, size_t(8) << 20));
  auto h = pattern(100000);
  bam::array<uint64_t> a = rt->array_from_host(h.data(), h.size());
  dbuf<uint64_t> out(h.size());
  k_copy_linear<uint64_t><<<blocks_for(h.size()), 256>>>(a, out.p, h.size());
  rt->print_stats(stdout);
}


// Every test runs in its own child process: a test that traps (a cache
// fault stops the kernel with __trap) destroys the CUDA context, and every
// test after it in the same process would fail for that reason alone.
// --in-process keeps them in one process (debuggers, sanitizers that do
// not follow children).
struct test_case {
  std::string name;
  std::function<void()> fn;
};

std::vector<test_case> all_tests()
{
  std::vector<test_case> t;
  const bam::backend backends[] = {bam::backend::hbm, bam::backend::host, bam::backend::emu};
  for (bam::backend b : backends) {
    const std::string s = std::string("/") + bam::backend_name(b);
    t.push_back({"linear" + s, [b] { test_linear(b); }});
    t.push_back({"random" + s, [b] { test_random(b); }});
    t.push_back({"line_sums_array_ref" + s, [b] { test_line_sums(b); }});
    t.push_back({"writers_flush" + s, [b] { test_writers(b); }});
    t.push_back({"eviction_1_64" + s, [b] { test_eviction(b); }});
    t.push_back({"file_device_free" + s, [b] { test_file_and_device(b); }});
    t.push_back({"odt_tile" + s, [b] { test_odt_tile(b); }});
    t.push_back({"odt_tile_16_lines" + s, [b] { test_odt_tile_tiny_cache(b); }});
  }
  t.push_back({"hit_path_sizes_eviction", test_hit_sizes});
  t.push_back({"atomics", test_atomics});
  for (const char* f : {"none", "delay", "reorder", "transient", "error"})
    t.push_back({std::string("emu_fault/") + f, [f] { test_emu_fault(f); }});
  t.push_back({"emu_fault/check_sync", test_emu_fault_check_sync});
  for (auto b : {bam::backend::hbm, bam::backend::host, bam::backend::emu})
    t.push_back({std::string("placement_by_size/") + bam::backend_name(b), [b] { test_placement_by_size(b); }});
  for (auto b : {bam::backend::hbm, bam::backend::host, bam::backend::emu})
    t.push_back({std::string("wrap/") + bam::backend_name(b), [b] { test_wrap(b); }});
  for (auto b : {bam::backend::host, bam::backend::emu})
    t.push_back({std::string("wrap_managed_home/") + bam::backend_name(b), [b] { test_wrap_managed_home(b); }});
  for (auto b : {bam::backend::hbm, bam::backend::host, bam::backend::emu})
    for (bool resident : {true, false})
      t.push_back({std::string("versions/") + bam::backend_name(b) + (resident ? "/direct" : "/cached"),
                   [b, resident] { test_versions(b, resident); }});
  for (auto b : {bam::backend::hbm, bam::backend::host, bam::backend::emu})
    for (bool resident : {true, false})
      t.push_back({std::string("copy_bytes/") + bam::backend_name(b) + (resident ? "/resident" : "/cached"),
                   [b, resident] { test_copy_bytes(b, resident); }});
  for (auto b : {bam::backend::host, bam::backend::emu}) // hbm data already is in GPU memory: nothing is copied
    t.push_back({std::string("resident_fallback/") + bam::backend_name(b), [b] { test_resident_fallback(b); }});
  for (auto b : {bam::backend::hbm, bam::backend::emu}) // host arrays this size would be read zero-copy
    t.push_back({std::string("stack_lazy/") + bam::backend_name(b), [b] { test_stack_lazy(b); }});
  for (auto b : {bam::backend::host, bam::backend::emu})
    t.push_back({std::string("stack_headroom/") + bam::backend_name(b), [b] { test_stack_headroom(b); }});
  for (auto b : {bam::backend::host, bam::backend::emu})
    for (bool resident : {true, false})
      t.push_back({std::string("remake/") + bam::backend_name(b) + (resident ? "/resident" : "/cached"),
                   [b, resident] { test_remake(b, resident); }});
  t.push_back({"odt_fvl", test_odt});
  t.push_back({"env_errors", test_env_errors});
  t.push_back({"stack_floor", test_stack_floor});
  t.push_back({"stats_print", test_stats_print});
  return t;
}

// Runs one test in a child; the child prints its own PASS/FAIL/SKIP line.
void run_forked(const test_case& t)
{
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::printf("FAIL %-40s fork: %s\n", t.name.c_str(), std::strerror(errno));
    ++g_failed;
    return;
  }
  if (pid == 0) {
    g_passed = g_failed = g_skipped = 0;  // the child's exit status is about its own test only
    run(t.name, t.fn);
    std::fflush(stdout);
    _exit(g_failed ? 1 : g_skipped ? 3 : 0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
    ++g_passed;
  else if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
    ++g_skipped;
  else {
    if (WIFSIGNALED(st))
      std::printf("FAIL %-40s killed by signal %d (%s)\n", t.name.c_str(), WTERMSIG(st), strsignal(WTERMSIG(st)));
    ++g_failed;
  }
}

bool selected(const std::string& name)
{
  if (g_filter.empty())
    return true;
  for (auto& f : g_filter)
    if (name.find(f) != std::string::npos)
      return true;
  return false;
}

} // namespace

int main(int argc, char** argv)
{
  // These exercise the cache: hbm arrays go through it unless told otherwise
  // (placement: BAM_GPU_BUDGET bytes of hbm data are read in place).
  setenv("BAM_GPU_BUDGET", "0", 0);
  setenv("BAM_HOST_PLACEMENT", "cache", 0);
  bool in_process = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0)
      g_small = true;
    else if (std::strcmp(argv[i], "--in-process") == 0)
      in_process = true;
    else
      g_filter.push_back(argv[i]);
  }
  // The parent never touches CUDA before forking (a CUDA context does not
  // survive fork); the banner comes from a child.
  const pid_t pid = in_process ? 0 : fork();
  if (pid == 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
      std::fprintf(stderr, "bam_gpu_tests: no GPU\n");
      if (!in_process)
        _exit(2);
      return 2;
    }
    std::printf("bam_gpu_tests on %s (sm_%d%d, %d SMs)%s%s\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, g_small ? " [small]" : "", in_process ? " [in-process]" : "");
    std::fflush(stdout);
    if (!in_process)
      _exit(0);
  } else {
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return 2;
  }
  for (const test_case& t : all_tests()) {
    if (!selected(t.name))
      continue;
    if (in_process)
      run(t.name, t.fn);
    else
      run_forked(t);
  }
  std::printf("bam_gpu_tests: %d passed, %d failed, %d skipped\n", g_passed, g_failed, g_skipped);
  return g_failed != 0;
}
