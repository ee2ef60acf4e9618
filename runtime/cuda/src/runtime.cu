// bam::runtime: cache allocation, array table, maintenance kernels (flush,
// drop), statistics and error reporting.
#include <bam/runtime.cuh>

#include "backends.h"
#include "backing.h"
#include "checked.h"
#include "placement_plan.h"
#include "wrap_check.h"
#include "fatal.h"

#include <bam/detail/cache_core.cuh>
#include <bam/detail/device_io.cuh>
#include <bam/detail/uvm.cuh>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>
#include <utility>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {
namespace {

constexpr uint32_t max_arrays = 1u << 16; // array table entries (ids are reused after free)

__global__ void flush_kernel(const cache_ctx* c)
{
  device_io io;
  for (uint64_t s = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; s < c->n_slots; s += uint64_t(gridDim.x) * blockDim.x)
    if (flush_slot(*c, uint32_t(s), io) == flush_result::pinned) {
      // Nothing runs during a host flush, so a pinned dirty line is a leaked
      // reference (an array_ref kept past its kernel, or a trapped kernel).
      const uint64_t t = c->slot_tag[s];
      record_fault(*c, fault_kind::pinned_dirty, 0, slot_tag::array_of(t), slot_tag::line_of(t));
    }
}

__global__ void drop_kernel(const cache_ctx* c, uint32_t only_array)
{
  for (uint64_t s = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; s < c->n_slots; s += uint64_t(gridDim.x) * blockDim.x)
    drop_slot(*c, uint32_t(s), only_array);
}

// The first launch of a kernel that needs a stack of unknown size (every
// kernel that can reach the miss path: detail/cold_call.cuh) after the
// stack limit was raised makes the driver reserve local memory for
// BAM_STACK_BYTES on every resident thread, some hundreds of MiB, lazily, at
// that launch. The runtime launches this one when it raises the limit
// (ensure_stack, before the first array read through the cache is made),
// so the reservation happens before arrays that come later are placed and
// outside the program's timed kernels.
__device__ void stack_warm_callee(int* p)
{
  if (p != nullptr)
    *p = 1;
}

__global__ void stack_warm_kernel(int* p)
{
  BAM_COLD(stack_warm_callee)(p);
}

const char* fault_name(uint32_t k)
{
  switch (fault_kind(k)) {
  case fault_kind::read: return "read";
  case fault_kind::write: return "write-back";
  case fault_kind::exhausted: return "slot allocation";
  case fault_kind::stalled: return "wait";
  case fault_kind::pinned_dirty: return "flush";
  default: return "?";
  }
}

std::string status_text(int status)
{
#if BAM_HAVE_NVME_QUEUES
  std::string s = nvme::status_str(status);
  if (BAM_NVME_SCT(status) != 7) // the device's status, not the queue layer's own
    s += BAM_NVME_DNR(status) ? ", a permanent error (the device set Do Not Retry)"
                              : ", still failing after " + std::to_string(nvme::max_retries) + " retries";
  return s;
#else
  return "backend status " + std::to_string(status);
#endif
}

} // namespace
} // namespace detail

struct cuda_free {
  void operator()(void* p) const noexcept { cudaFree(p); }
};
struct cuda_free_host {
  void operator()(void* p) const noexcept { cudaFreeHost(p); }
};
template <class T>
using dev_ptr = std::unique_ptr<T, cuda_free>;
template <class T>
using host_ptr = std::unique_ptr<T, cuda_free_host>;

// cudaMalloc + cudaMemset(fill) into an owning pointer.
template <class T>
dev_ptr<T> dev_alloc(size_t count, int fill, const char* what)
{
  void* p = nullptr;
  detail::cuda_check(cudaMalloc(&p, count * sizeof(T)), what);
  dev_ptr<T> owned(static_cast<T*>(p));
  detail::cuda_check(cudaMemset(p, fill, count * sizeof(T)), what);
  return owned;
}

// Where the runtime advised UVM to keep a wrapped managed array
// (runtime::impl::home_managed).
enum class managed_home : unsigned char {
  none,    // not advised: no concurrent managed access, the program advised it itself, or advice failed
  gpu,     // preferred location the GPU, prefetched there, charged to the budget (or free memory on emu/nvme)
  host,    // preferred location the CPU, mapped for the GPU: read over PCIe, no page moves
};

// One array's host-side record.
struct array_rec {
  detail::array_meta meta{};
  detail::backing_region region;
  std::string name; // what error messages call it: the name the port gave, else "#id"
  unsigned char* gpu = nullptr; // resident copy in GPU memory on a backend that keeps data elsewhere
  // array_wrap: the program's own memory, reached in place through
  // meta.direct; no region, no budget, nothing owned. wrap_host is its
  // CPU-side address for host memory (range copies then run on the CPU).
  bool wrapped = false;
  bool wrap_managed = false; // wrapped cudaMallocManaged memory: the GPU reaches it through UVM
  managed_home home = managed_home::none;
  uint64_t wrap_bytes = 0;     // the wrapped range (what the advice covers)
  uint64_t budget_charge = 0;  // budget bytes a GPU-homed managed array holds until it is freed
  int wrap_device = 0;         // the device the advice names
  unsigned char* wrap_host = nullptr;
  bool live = false;
};

// How a wrapped array is read, for the statistics and failure messages.
std::string wrap_description(const array_rec& r)
{
  if (!r.wrap_managed)
    return "wrapped (the program's memory)";
  switch (r.home) {
  case managed_home::gpu: return "wrapped managed, kept in GPU memory";
  case managed_home::host: return "wrapped managed, read from host memory";
  case managed_home::none: break;
  }
  return "wrapped managed (UVM page faults)";
}

struct runtime::impl {
  config cfg;
  uint32_t line_shift = 12;
  uint32_t n_slots = 0;
  int n_sms = 1;

  // Owned CUDA allocations: freed by their deleters on every path out,
  // including a constructor that throws half-way.
  dev_ptr<detail::cache_ctx> d_ctx;
  dev_ptr<unsigned char> d_slots;
  unsigned char* slots_aligned = nullptr; // inside d_slots, 64 KiB aligned
  // Declared after d_slots so that it goes first: the nvme backend may
  // have the slots DMA-mapped for the SSD.
  std::unique_ptr<detail::backing_store> store;
  dev_ptr<uint64_t> d_tags;
  dev_ptr<uint32_t> d_seq; // per-slot fill numbers (the hit path's eviction check)
  dev_ptr<unsigned long long> d_clock;
  dev_ptr<detail::stats_row> d_stats;
  dev_ptr<detail::error_block> d_err;
  host_ptr<uint32_t> h_fatal; // mapped host memory, 4 words
  dev_ptr<detail::array_meta> d_arrays;
  dev_ptr<uint32_t> d_prio;            // per-slot replacement priorities (BAM_CACHE_POLICY=freq)
  dev_ptr<uint32_t> d_protected;       // how many of them are above zero
  dev_ptr<detail::array_io> d_array_io; // per-array lines read/written (statistics on)
  detail::cache_ctx h_ctx{};
  std::vector<array_rec> arrays;
  std::vector<uint32_t> free_ids;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  // Placement (perf: see choose_placement). Read from BAM_GPU_BUDGET and
  // BAM_HOST_PLACEMENT when the runtime is made.
  enum class host_policy { automatic, direct, cache };
  detail::placement_plan budget; // BAM_GPU_BUDGET: which arrays are resident, ranked by size
  host_policy host_place = host_policy::automatic;
  placement choose_placement(uint64_t bytes);
  placement placement_off_gpu(uint64_t bytes) const;
  bool budget_from_env = false;  // BAM_GPU_BUDGET was set (else the backend's default)
  uint64_t program_margin = 0;   // GPU memory the host default keeps for the program's own allocations
  uint64_t free_for_unannounced() const;
  managed_home home_managed(const void* p, uint64_t bytes, int device, uint64_t& charged);
  void unhome_managed(array_rec& r);
  // The miss path's stack (BAM_STACK_BYTES), raised when the first array is
  // read through the cache (ensure_stack); stack_room is what the driver is
  // expected to reserve for it, kept free of unannounced arrays until then.
  size_t stack_want = 2048;
  bool stack_ready = false;
  uint64_t stack_room = 0;
  uint64_t stack_bytes_reserved = 0; // measured when it was raised
  // GPU memory the budget leaves to the program's own allocations (its
  // cudaMalloc'd buffers, ODT plans): what was free when the runtime was
  // made less the budget, at most the host default's margin. Kept free
  // when the stack's reservation shrinks the budget (ensure_stack).
  uint64_t budget_headroom = 0;
  void ensure_stack();
  // Arrays the budget placed in GPU memory whose copy could not be
  // allocated there (they are read where the backend keeps them).
  uint32_t resident_fallbacks = 0;

  explicit impl(const config& c);
  ~impl();
  void upload_ctx();
  std::string array_name(uint32_t id) const;
  // What the fatal word says stopped a kernel (empty when nothing did).
  std::string fatal_cause() const;
  std::string fatal_reason(uint32_t kind) const;
  std::string placement_summary() const;
  bool fatal_reported = false; // check_at threw it: ~impl does not say it again
  array_rec& rec(uint32_t id);
  uint32_t new_id();
  // Blocks of 256 threads for a grid-stride kernel over all slots.
  [[nodiscard]] unsigned slot_blocks() const noexcept
  {
    return std::max(1u, std::min<unsigned>((n_slots + 255) / 256, unsigned(n_sms) * 8));
  }
};

namespace {

uint32_t log2u(uint64_t v)
{
  uint32_t s = 0;
  while ((uint64_t(1) << s) < v)
    ++s;
  return s;
}

// The chosen backend's host side, from the registry (cfg is validated, so
// cfg.kind is registered).
std::unique_ptr<detail::backing_store> make_store(const config& cfg)
{
  std::unique_ptr<detail::backing_store> store;
  detail::registry::each([&](auto e) {
    if (e.kind == cfg.kind)
      store = e.setup(cfg);
  });
  return store;
}

// Slots start on a 64 KiB boundary and span whole 64 KiB pages, so that the
// nvme backend can map them for the SSD through NVIDIA P2P.
constexpr size_t slot_align = size_t(64) << 10;

// A size for a message: whole MiB, or KiB below one MiB (a 64 KiB cache
// was "a 0 MiB cache").
std::string size_text(size_t bytes)
{
  return bytes >= (size_t(1) << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

} // namespace

runtime::impl::impl(const config& c) : cfg(c)
{
  cfg.validate();
  cfg.line_bytes = cfg.line_size(); // 0: the backend's default; from here on the size in use
  line_shift = log2u(cfg.line_bytes);
  n_slots = uint32_t(cfg.cache_bytes >> line_shift);
  int dev = 0;
  detail::cuda_check(cudaGetDevice(&dev), "bam::runtime: cudaGetDevice");
  detail::cuda_check(cudaDeviceGetAttribute(&n_sms, cudaDevAttrMultiProcessorCount, dev),
                     "bam::runtime: reading the SM count");
  store = make_store(cfg);

  const size_t slot_bytes = size_t(n_slots) << line_shift;
  const size_t slot_span = (slot_bytes + slot_align - 1) / slot_align * slot_align;
  void* slots_raw = nullptr;
  if (const cudaError_t e = cudaMalloc(&slots_raw, slot_span + slot_align); e != cudaSuccess) {
    size_t free_b = 0, total_b = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_b, &total_b);
    // Free memory is read after the failure: another process may have
    // held it at the time and freed it since (seen with GPU tests that
    // fill the GPU on purpose, running next to ported programs).
    throw error("bam::runtime: cannot allocate a " + size_text(slot_bytes) + " cache (" + cudaGetErrorString(e) +
                "; " + size_text(free_b) + " free on the GPU now); lower BAM_CACHE_BYTES, or free GPU memory "
                "other processes hold");
  }
  d_slots.reset(static_cast<unsigned char*>(slots_raw));
  slots_aligned = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(slots_raw) + slot_align - 1) &
                                                   ~uintptr_t(slot_align - 1));
  store->attach_cache(slots_aligned, slot_span);
  d_tags = dev_alloc<uint64_t>(n_slots, 0xff, "bam::runtime: allocating slot tags"); // all `empty`
  d_seq = dev_alloc<uint32_t>(n_slots, 0, "bam::runtime: allocating slot fill numbers");
  d_clock = dev_alloc<unsigned long long>(1, 0, "bam::runtime: allocating the clock hand");
  d_stats = dev_alloc<detail::stats_row>(size_t(n_sms), 0, "bam::runtime: allocating statistics");
  d_err = dev_alloc<detail::error_block>(1, 0, "bam::runtime: allocating the error block");
  d_arrays = dev_alloc<detail::array_meta>(detail::max_arrays, 0, "bam::runtime: allocating the array table");
  d_ctx = dev_alloc<detail::cache_ctx>(1, 0, "bam::runtime: allocating the cache context");
  if (cfg.cache_policy == "freq") {
    d_prio = dev_alloc<uint32_t>(n_slots, 0, "bam::runtime: allocating slot priorities");
    d_protected = dev_alloc<uint32_t>(1, 0, "bam::runtime: allocating the protected-slot count");
  }
  if (cfg.stats)
    d_array_io = dev_alloc<detail::array_io>(detail::max_arrays, 0, "bam::runtime: allocating per-array counters");
  void* fatal_raw = nullptr;
  detail::cuda_check(cudaHostAlloc(&fatal_raw, 4 * sizeof(uint32_t), cudaHostAllocMapped),
                     "bam::runtime: cudaHostAlloc of the fatal-error word");
  h_fatal.reset(static_cast<uint32_t*>(fatal_raw));
  std::memset(fatal_raw, 0, 4 * sizeof(uint32_t));
  void* d_fatal = nullptr;
  detail::cuda_check(cudaHostGetDevicePointer(&d_fatal, fatal_raw, 0), "bam::runtime: cudaHostGetDevicePointer");

  h_ctx.slots = slots_aligned;
  h_ctx.slot_tag = d_tags.get();
  h_ctx.slot_seq = d_seq.get();
  h_ctx.clock = d_clock.get();
  h_ctx.arrays = d_arrays.get();
  h_ctx.stats = cfg.stats ? d_stats.get() : nullptr;
  h_ctx.err = d_err.get();
  h_ctx.fatal = static_cast<uint32_t*>(d_fatal);
  h_ctx.queues = store->queues();
  h_ctx.stall_timeout_ns = uint64_t(cfg.stall_timeout_s * 1e9);
  h_ctx.n_slots = n_slots;
  h_ctx.line_shift = line_shift;
  h_ctx.n_stat_rows = uint32_t(n_sms);
  h_ctx.access = detail::registry::access_of(cfg.kind);
  h_ctx.slot_prio = d_prio.get();
  h_ctx.n_protected = d_protected.get();
  // Threads the GPU holds at once per SM: the replacement policy's protected
  // share and the stack's reservation are both sized by it.
  int per_sm = 2048;
  if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev) != cudaSuccess)
    per_sm = 2048;
  { // freq's protected share leaves room for the lines the GPU's running warps use
    h_ctx.protect_budget = detail::protect_budget_for(n_slots, uint64_t(n_sms) * uint64_t(per_sm / 32));
  }
  h_ctx.io_of = d_array_io.get();
  upload_ctx();

  // The miss path is reached through indirect calls (detail/cold_call.cuh),
  // so ptxas cannot size the stack and the driver's default (1 KiB per
  // thread, reserved for every context) is all a kernel gets. By the frames
  // ptxas reports, the deepest path (a storage fill that first writes a
  // dirty line back, from inside an ODT lambda) needs about 0.9 KiB: too
  // little margin. (The "misaligned address" first suspected to be an
  // overflow was an unaligned SQE, fixed in nvme/queue.cuh; the ports that
  // showed it ran at 1 KiB after the fix.) The stack is raised to
  // BAM_STACK_BYTES (default 2 KiB) -- but only once an array is read
  // through the cache (ensure_stack): the driver then reserves the extra
  // local memory on every resident thread, ~264 MiB on an H200, which a
  // program whose arrays are all resident or zero-copy never needs (its
  // kernels' direct versions never reach the miss path). Until then the
  // placement keeps that much out of the budget for arrays nobody announced.
  // It is also the floor: cc's ODT port at 1 KiB made an illegal memory
  // access on an H200 (session 14), so a lower value is refused rather
  // than left to overflow the stack.
  constexpr size_t stack_floor = 2048;
  stack_want = stack_floor;
  const char* stack_env = std::getenv("BAM_STACK_BYTES");
  if (stack_env != nullptr && *stack_env != '\0') {
    stack_want = parse_size(stack_env, "BAM_STACK_BYTES");
    if (stack_want < stack_floor)
      throw error("BAM_STACK_BYTES=" + std::string(stack_env) + ": the cache's miss path needs at least " +
                  std::to_string(stack_floor) + " bytes per thread (ODT ports overflowed 1024); leave it unset or raise it");
  }
  {
    size_t cur = 0;
    detail::cuda_check(cudaDeviceGetLimit(&cur, cudaLimitStackSize), "bam::runtime: reading the stack size limit");
    stack_room = detail::stack_reservation_estimate(cur, stack_want, uint64_t(n_sms) * uint64_t(per_sm));
  }

  // Placement knobs. The budget defaults to the GPU memory still free once
  // the cache is allocated: data that fits is read in place.
  size_t free_b = 0, total_b = 0;
  detail::cuda_check(cudaMemGetInfo(&free_b, &total_b), "bam::runtime: cudaMemGetInfo");
  // hbm, host: what is free. On hbm the data already is in GPU memory; on
  // host an array that fits is copied there when it is made, as UVM would
  // migrate it, and only what does not fit is read from host memory
  // (zero-copy or through the cache). Storage backends (emu, nvme) read
  // through the cache unless BAM_GPU_BUDGET grants GPU memory: their data
  // is meant to outgrow it, and the cache is what their benchmarks measure.
  size_t gpu_budget = cfg.kind == backend::hbm || cfg.kind == backend::host ? free_b : 0;
  // A resident copy of host data takes GPU memory the program may still
  // want for its own allocations (on hbm the data is there already): keep
  // 1/16 of what is free, at least 256 MiB, out of the default.
  program_margin = std::min(free_b, std::max(size_t(256) << 20, free_b / 16));
  if (cfg.kind == backend::host)
    gpu_budget -= program_margin;
  if (const char* v = std::getenv("BAM_GPU_BUDGET"); v != nullptr && *v != '\0') {
    gpu_budget = parse_size(v, "BAM_GPU_BUDGET");
    budget_from_env = true;
  }
  budget = detail::placement_plan(gpu_budget);
  // hbm's resident arrays take no memory (they are the backing data itself).
  if (cfg.kind != backend::hbm && free_b > gpu_budget)
    budget_headroom = std::min<uint64_t>(free_b - gpu_budget, program_margin);
  if (const char* v = std::getenv("BAM_HOST_PLACEMENT"); v != nullptr && *v != '\0') {
    const std::string p = v;
    if (p == "auto")
      host_place = host_policy::automatic;
    else if (p == "direct")
      host_place = host_policy::direct;
    else if (p == "cache")
      host_place = host_policy::cache;
    else
      throw error("bam: BAM_HOST_PLACEMENT=" + p + ": expected auto, direct or cache");
  }
}

// Where an array's elements are read (perf; docs/runtime-performance.md,
// "Placement"):
//  * hbm backend: the data already is in GPU memory, so an array that fits
//    the budget (BAM_GPU_BUDGET, default: free memory after the cache) is
//    read and written in place with plain loads; BAM_GPU_BUDGET=0 sends
//    every array through the cache (the cache's own tests and benchmarks).
//  * host backend: mapped pinned memory. BAM_HOST_PLACEMENT=direct reads it
//    zero-copy (each warp moves only the 32-byte sectors it touches), cache
//    copies whole lines into the cache. auto (default): zero-copy unless
//    the array fits in half the cache, where lines stay cached long enough
//    to be reused from GPU memory.
//  * emu, nvme: the cache.
//  * any backend: arrays are resident while they fit BAM_GPU_BUDGET (default:
//    free memory on hbm and host, 0 on emu, nvme), ranked by size when the program
//    announced them (plan_arrays; src/placement_plan.h), so only the
//    largest leave GPU memory. Off hbm a resident array is copied into GPU
//    memory when it is made.
placement runtime::impl::choose_placement(uint64_t bytes)
{
  if (budget.take(bytes, free_for_unannounced()))
    return placement::resident;
  const placement pl = placement_off_gpu(bytes);
  if (pl == placement::cache)
    ensure_stack();
  return pl;
}

// GPU memory an array nobody announced may take: what is free, less what a
// later cached array's stack (ensure_stack) needs while it is not raised;
// announced arrays were planned knowing.
uint64_t runtime::impl::free_for_unannounced() const
{
  if (stack_ready)
    return UINT64_MAX;
  size_t free_now = 0, total = 0;
  if (cudaMemGetInfo(&free_now, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return UINT64_MAX;
  }
  return free_now > stack_room ? free_now - stack_room : 0;
}

namespace {
// True when the program advised the range itself (a preferred location
// over all of it): the runtime then leaves it as it is.
bool advised_by_program(const void* p, size_t bytes)
{
  int where = cudaInvalidDeviceId;
  if (cudaMemRangeGetAttribute(&where, sizeof where, cudaMemRangeAttributePreferredLocation, p, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return where != cudaInvalidDeviceId;
}
} // namespace

// Wrapped managed memory reaches the GPU through UVM. Left alone on a nearly
// full GPU its pages migrate back and forth on faults, under warps that hold
// cache lines meanwhile (session 14: cc's odt port on emu had a line busy
// for 10 s and was stopped; the same run passed when the program's labels
// were cudaMallocHost memory). So the runtime says where it lives, as it
// does for its own arrays:
//  * GPU memory (preferred location the GPU, prefetched now) when the budget
//    has room for it beside the announced arrays; it holds that room until
//    it is freed. On emu and nvme, whose default budget of 0 is about the
//    dataset, not the program's own memory, it is enough that it fits in
//    free memory less the margin the host default keeps for the program.
//  * Else host memory, mapped for the GPU (preferred location the CPU,
//    accessed by the GPU): reads cross PCIe like zero-copy, no page moves.
// Advice only: contents and meaning do not change, and it is taken back
// when the array is freed. A range the program advised itself, or a GPU
// without concurrent managed access, is left as it is.
managed_home runtime::impl::home_managed(const void* p, uint64_t bytes, int device, uint64_t& charged)
{
  charged = 0;
  int concurrent = 0;
  if (cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device) != cudaSuccess || concurrent == 0) {
    (void)cudaGetLastError();
    return managed_home::none;
  }
  if (advised_by_program(p, bytes))
    return managed_home::none;
  // Never more than is free now (less a stack reservation still to come),
  // whatever BAM_GPU_BUDGET says: managed memory advised into GPU memory
  // beyond that would be oversubscribed.
  size_t free_now = 0, total = 0;
  if (cudaMemGetInfo(&free_now, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    free_now = 0;
  }
  const uint64_t pending_stack = stack_ready ? 0 : stack_room;
  const uint64_t fits = free_now > pending_stack ? free_now - pending_stack : 0;
  bool on_gpu = budget.take_unannounced(bytes, fits);
  if (on_gpu)
    charged = bytes;
  else if (!budget_from_env && (cfg.kind == backend::emu || cfg.kind == backend::nvme))
    on_gpu = fits > program_margin && bytes <= fits - program_margin;
  if (on_gpu ? detail::mem_advise(p, bytes, cudaMemAdviseSetPreferredLocation, device) == cudaSuccess &&
                   detail::mem_prefetch_to_device(p, bytes, device) == cudaSuccess
             : detail::mem_advise(p, bytes, cudaMemAdviseSetPreferredLocation, cudaCpuDeviceId) == cudaSuccess &&
                   detail::mem_advise(p, bytes, cudaMemAdviseSetAccessedBy, device) == cudaSuccess)
    return on_gpu ? managed_home::gpu : managed_home::host;
  // Refused (a range CUDA does not accept): the memory stays as the program made it.
  (void)cudaGetLastError();
  (void)detail::mem_advise(p, bytes, cudaMemAdviseUnsetPreferredLocation, device);
  (void)detail::mem_advise(p, bytes, cudaMemAdviseUnsetAccessedBy, device);
  (void)cudaGetLastError();
  budget.release(charged);
  charged = 0;
  return managed_home::none;
}

// Takes back what home_managed advised and the budget it held.
void runtime::impl::unhome_managed(array_rec& r)
{
  if (r.home == managed_home::none)
    return;
  (void)detail::mem_advise(r.meta.direct, r.wrap_bytes, cudaMemAdviseUnsetPreferredLocation, r.wrap_device);
  if (r.home == managed_home::host)
    (void)detail::mem_advise(r.meta.direct, r.wrap_bytes, cudaMemAdviseUnsetAccessedBy, r.wrap_device);
  (void)cudaGetLastError(); // the program may have freed the memory already: nothing to take back
  budget.release(r.budget_charge);
  r.budget_charge = 0;
  r.home = managed_home::none;
}

// Raises the per-thread stack to stack_want for the miss path and makes the
// driver reserve it now (a launch of a kernel with an indirect call), before
// the array that needs it exists and outside the program's timed kernels.
// The budget gives up what the reservation took.
void runtime::impl::ensure_stack()
{
  if (stack_ready)
    return;
  size_t before = 0, after = 0, total = 0, cur = 0;
  detail::cuda_check(cudaMemGetInfo(&before, &total), "bam::runtime: cudaMemGetInfo");
  detail::cuda_check(cudaDeviceGetLimit(&cur, cudaLimitStackSize), "bam::runtime: reading the stack size limit");
  if (cur < stack_want && cudaDeviceSetLimit(cudaLimitStackSize, stack_want) != cudaSuccess) {
    cudaGetLastError();
    throw error("bam::runtime: cannot raise the per-thread stack to " + std::to_string(stack_want) +
                " bytes (BAM_STACK_BYTES) for the cache's miss path; the GPU lacks the memory for it: set "
                "BAM_GPU_BUDGET lower or free GPU memory (BAM_STACK_BYTES cannot go below 2048)");
  }
  detail::stack_warm_kernel<<<1, 32>>>(nullptr);
  if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess)
    throw error("bam::runtime: cannot reserve local memory for a " + std::to_string(std::max(cur, stack_want)) +
                "-byte stack per thread (BAM_STACK_BYTES) for the cache's miss path; the GPU lacks the memory for "
                "it: set BAM_GPU_BUDGET lower or free GPU memory (BAM_STACK_BYTES cannot go below 2048)");
  detail::cuda_check(cudaMemGetInfo(&after, &total), "bam::runtime: cudaMemGetInfo");
  stack_bytes_reserved = before > after ? before - after : 0;
  // The budget cannot promise more than is now free besides what resident
  // arrays hold, less the headroom it left the program: the default gives
  // up the reservation, a BAM_GPU_BUDGET that still fits stays as it is.
  // (Without the headroom a budget of free - cache - 192 MiB, the matrix's
  // nofit runs, lost its 192 MiB to the reservation and the program's ODT
  // plan found no GPU memory: "odt_plan_of: cudaMalloc: out of memory".)
  budget.cap(budget.used() + (after > budget_headroom ? after - budget_headroom : 0));
  stack_ready = true;
}

// Where an array that does not stay in GPU memory is read (the host rule
// above, else the cache).
placement runtime::impl::placement_off_gpu(uint64_t bytes) const
{
  if (cfg.kind == backend::host) {
    if (host_place == host_policy::direct)
      return placement::host_direct;
    if (host_place == host_policy::automatic && bytes > (size_t(n_slots) << line_shift) / 2)
      return placement::host_direct;
  }
  return placement::cache;
}

runtime::impl::~impl()
{
  // Errors are ignored: at exit the CUDA runtime may already be gone. The
  // cache's own allocations go with their owning pointers.
  cudaDeviceSynchronize();
  // A kernel the cache stopped (__trap) is seen by the program's own error
  // check first, which then exits with only "unspecified launch failure":
  // the cause is said here, at the exit, if check_at did not say it.
  if (!fatal_reported)
    if (const std::string cause = fatal_cause(); !cause.empty())
      std::fprintf(stderr, "%s (the kernel failure reported above)\n", cause.c_str());
  for (auto& r : arrays)
    if (r.live) {
      if (!r.wrapped)
        store->release(r.region);
      cudaFree(r.meta.state);
      cudaFree(r.meta.slot_of);
      cudaFree(r.meta.fetches);
      cudaFree(r.gpu);
    }
  if (store && !store->shutdown()) {
    std::fprintf(stderr, "bam: the %s backend could not stop its device; the %zu MiB cache stays allocated until "
                         "exit instead of being freed under it\n",
                 backend_name(cfg.kind), (size_t(n_slots) << line_shift) >> 20);
    (void)d_slots.release(); // leaked on purpose: the device may still write there
  }
  store.reset();
}

void runtime::impl::upload_ctx()
{
  h_ctx.queues = store->queues();
  detail::cuda_check(cudaMemcpy(d_ctx.get(), &h_ctx, sizeof h_ctx, cudaMemcpyHostToDevice), "bam::runtime: uploading the cache context");
}

array_rec& runtime::impl::rec(uint32_t id)
{
  if (id >= arrays.size() || !arrays[id].live)
    throw error("bam::runtime: array #" + std::to_string(id) + " is not live (freed, or made by another runtime)");
  return arrays[id];
}

uint32_t runtime::impl::new_id()
{
  if (!free_ids.empty()) {
    uint32_t id = free_ids.back();
    free_ids.pop_back();
    return id;
  }
  if (arrays.size() >= detail::max_arrays)
    throw error("bam::runtime: more than " + std::to_string(detail::max_arrays) + " live arrays; free some");
  arrays.emplace_back();
  return uint32_t(arrays.size() - 1);
}

runtime::runtime() : runtime(config::from_env()) {}
runtime::runtime(const config& cfg) : p_(std::make_unique<impl>(cfg)) {}
runtime::~runtime() = default;

detail::array_meta runtime::create(size_t n, size_t elem_bytes, source src, const void* ptr, const std::string& path,
                                   size_t offset, const char* name)
{
  const uint64_t bytes = detail::checked_bytes(n, elem_bytes, "bam::runtime: making an array");
  if (bytes == 0)
    throw error("bam::runtime: cannot make an empty array");
  if (src == source::file)
    (void)detail::checked_add(offset, bytes, "array_from_file: offset + size");
  if ((src == source::host || src == source::device) && ptr == nullptr)
    throw error("bam::runtime: array_from_host/array_from_device got a null pointer");
  check(); // waits for the kernels; a trapped one is reported with its cause (no free slot, stalled line)
  const uint64_t lb = p_->cfg.line_bytes;
  const uint64_t n_lines = bytes / lb + (bytes % lb != 0); // no bytes + lb - 1: it can wrap
  if (n_lines > detail::slot_tag::line_mask + 1)
    throw error("bam::runtime: an array of " + std::to_string(bytes) + " bytes has " + std::to_string(n_lines) +
                " lines; at most 2^40 fit the cache's tags. Use a larger BAM_LINE_BYTES or split the array");
  const uint32_t id = p_->new_id();
  array_rec r;
  r.region = p_->store->allocate(n_lines * lb);
  try {
    switch (src) {
    case source::host: p_->store->write_from_host(r.region, ptr, bytes); break;
    case source::device: p_->store->write_from_device(r.region, ptr, bytes); break;
    case source::file: p_->store->write_from_file(r.region, path, offset, bytes); break;
    case source::zeros: break; // regions start zeroed
    }
    auto state = dev_alloc<uint32_t>(n_lines, 0, "bam::runtime: allocating line states");      // all invalid
    auto slot_of = dev_alloc<uint64_t>(n_lines, 0xff, "bam::runtime: allocating the line map"); // all line_map::none
    dev_ptr<uint8_t> fetches;
    if (p_->d_prio) // the frequency-aware policy's per-line fetch counts
      fetches = dev_alloc<uint8_t>(n_lines, 0, "bam::runtime: allocating line fetch counts");
    r.meta.state = state.release();
    r.meta.slot_of = slot_of.release();
    r.meta.fetches = fetches.release();
    if (p_->d_array_io)
      detail::cuda_check(cudaMemset(p_->d_array_io.get() + id, 0, sizeof(detail::array_io)),
                         "bam::runtime: clearing per-array counters");
  } catch (...) {
    p_->store->release(r.region);
    cudaFree(r.meta.state);
    cudaFree(r.meta.slot_of);
    cudaFree(r.meta.fetches);
    p_->free_ids.push_back(id);
    throw;
  }
  r.meta.data = r.region.device;
  r.meta.base = r.region.offset;
  r.meta.seq = p_->d_seq.get();
  placement pl = p_->choose_placement(n_lines * lb);
  const bool copy_in = pl == placement::resident && (p_->cfg.kind != backend::hbm || r.region.device == nullptr);
  // The budget (BAM_GPU_BUDGET, or free memory) is an estimate: local
  // memory, other allocations or another process may have taken the memory
  // since. A resident copy that cannot be allocated is not an error: the
  // array is read where the backend keeps it, as if it had not fit.
  dev_ptr<unsigned char> gpu;
  if (copy_in) {
    void* p = nullptr;
    if (cudaMalloc(&p, n_lines * lb) == cudaSuccess) {
      gpu.reset(static_cast<unsigned char*>(p));
    } else {
      (void)cudaGetLastError(); // out of memory is not sticky; clear it
      p_->budget.release(n_lines * lb);
      pl = p_->placement_off_gpu(n_lines * lb);
      ++p_->resident_fallbacks;
    }
  }
  r.meta.placement = uint32_t(pl);
  r.meta.direct = pl == placement::cache ? nullptr : r.region.device;
  if (gpu) {
    // The backend keeps the data outside GPU memory: a copy there, read in place.
    try {
      detail::cuda_check(cudaMemset(gpu.get(), 0, n_lines * lb), "bam::runtime: clearing a resident array");
      std::vector<unsigned char> tmp;
      switch (src) {
      case source::host:
        detail::cuda_check(cudaMemcpy(gpu.get(), ptr, bytes, cudaMemcpyHostToDevice), "bam::runtime: filling a resident array");
        break;
      case source::device:
        detail::cuda_check(cudaMemcpy(gpu.get(), ptr, bytes, cudaMemcpyDeviceToDevice), "bam::runtime: filling a resident array");
        break;
      case source::file:
        tmp.resize(bytes);
        p_->store->read_to_host(r.region, tmp.data(), bytes);
        detail::cuda_check(cudaMemcpy(gpu.get(), tmp.data(), bytes, cudaMemcpyHostToDevice), "bam::runtime: filling a resident array");
        break;
      case source::zeros: break; // cleared above
      }
      r.gpu = gpu.release();
    } catch (...) {
      p_->budget.release(n_lines * lb);
      p_->store->release(r.region);
      cudaFree(r.meta.state);
      cudaFree(r.meta.slot_of);
      p_->free_ids.push_back(id);
      throw;
    }
    r.meta.direct = r.gpu;
  }
  r.meta.n_lines = n_lines;
  r.meta.id = id;
  r.meta.live = 1;
  r.live = true;
  // Named by the program (the port passes its variable), else by number and shape.
  r.name = name != nullptr && *name != '\0'
               ? "\"" + std::string(name) + "\" (#" + std::to_string(id) + ")"
               : "#" + std::to_string(id) + " (" + std::to_string(n) + " elements of " + std::to_string(elem_bytes) + " bytes)";
  p_->arrays[id] = r;
  detail::cuda_check(cudaMemcpy(p_->d_arrays.get() + id, &r.meta, sizeof r.meta, cudaMemcpyHostToDevice),
                     "bam::runtime: uploading the array table");
  p_->upload_ctx(); // storage backends may have new queues
  return r.meta;
}

detail::array_meta runtime::create_wrapped(size_t n, size_t elem_bytes, void* ptr, const char* name)
{
  const uint64_t bytes = detail::checked_bytes(n, elem_bytes, "bam::runtime::array_wrap");
  const std::string what = std::string("bam::runtime::array_wrap") + (name != nullptr && *name != '\0' ? "(\"" + std::string(name) + "\")" : "");
  if (bytes == 0)
    throw error(what + ": cannot make an empty array");
  if (ptr == nullptr)
    throw error(what + ": got a null pointer");
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  detail::wrap_pointer wp;
  if (e != cudaSuccess) {
    (void)cudaGetLastError(); // CUDA before 11 reports unregistered memory as an error: pageable
  } else {
    switch (attr.type) {
    case cudaMemoryTypeHost: wp.kind = detail::wrap_memory::host; break;
    case cudaMemoryTypeDevice: wp.kind = detail::wrap_memory::device; break;
    case cudaMemoryTypeManaged: wp.kind = detail::wrap_memory::managed; break;
    default: wp.kind = detail::wrap_memory::unregistered; break;
    }
    wp.device_pointer = attr.devicePointer;
    wp.host_pointer = attr.hostPointer;
    wp.device = attr.device;
  }
  int cur = 0;
  detail::cuda_check(cudaGetDevice(&cur), "bam::runtime::array_wrap");
  const detail::wrap_result w = detail::check_wrap(wp, cur, what);
  if (w.direct == nullptr)
    throw error(w.why);
  check(); // waits for the kernels; a trapped one is reported with its cause
  const uint64_t lb = p_->cfg.line_bytes;
  const uint64_t n_lines = bytes / lb + (bytes % lb != 0);
  const uint32_t id = p_->new_id();
  array_rec r;
  try {
    // Never read (a direct array skips the line states), but kept non-null
    // like every other array's.
    auto state = dev_alloc<uint32_t>(1, 0, "bam::runtime::array_wrap");
    auto slot_of = dev_alloc<uint64_t>(1, 0xff, "bam::runtime::array_wrap");
    r.meta.state = state.release();
    r.meta.slot_of = slot_of.release();
  } catch (...) {
    cudaFree(r.meta.state);
    p_->free_ids.push_back(id);
    throw;
  }
  r.wrapped = true;
  r.wrap_managed = wp.kind == detail::wrap_memory::managed;
  r.wrap_bytes = bytes;
  r.wrap_device = cur;
  r.wrap_host = static_cast<unsigned char*>(w.host);
  r.meta.data = static_cast<unsigned char*>(w.direct);
  r.meta.base = 0;
  r.meta.seq = p_->d_seq.get();
  r.meta.placement = uint32_t(placement::resident);
  r.meta.direct = static_cast<unsigned char*>(w.direct);
  r.meta.n_lines = n_lines;
  r.meta.id = id;
  r.meta.live = 1;
  r.live = true;
  r.name = name != nullptr && *name != '\0'
               ? "\"" + std::string(name) + "\" (#" + std::to_string(id) + ", wrapped)"
               : "#" + std::to_string(id) + " (" + std::to_string(n) + " elements of " + std::to_string(elem_bytes) + " bytes, wrapped)";
  p_->arrays[id] = r;
  detail::cuda_check(cudaMemcpy(p_->d_arrays.get() + id, &r.meta, sizeof r.meta, cudaMemcpyHostToDevice),
                     "bam::runtime: uploading the array table");
  if (r.wrap_managed) { // the array exists: release_array takes the advice back
    array_rec& live = p_->arrays[id];
    live.home = p_->home_managed(w.direct, bytes, cur, live.budget_charge);
  }
  return r.meta;
}

void runtime::plan_sizes(std::initializer_list<size_t> bytes)
{
  const uint64_t lb = p_->cfg.line_bytes;
  std::vector<uint64_t> lines;
  for (size_t b : bytes)
    if (b != 0 && b <= UINT64_MAX - lb)
      lines.push_back((b + lb - 1) / lb * lb);
  p_->budget.announce(lines);
  // Announced arrays that leave GPU memory for the cache need the miss
  // path's stack: reserve it now and plan again with what is left.
  if (!p_->stack_ready)
    for (uint64_t b : p_->budget.leaving())
      if (p_->placement_off_gpu(b) == placement::cache) {
        p_->ensure_stack();
        p_->budget.announce(std::move(lines));
        break;
      }
}

void runtime::end_plan() noexcept
{
  if (p_->budget.pending() != 0)
    p_->budget.announce({});
}

void runtime::flush()
{
  check(); // waits for the kernels; a trapped one is reported with its cause (no free slot, stalled line)
  detail::flush_kernel<<<p_->slot_blocks(), 256>>>(p_->d_ctx.get());
  check();
}

bool runtime::failure_seen() const noexcept
{
  const volatile uint32_t* w = p_->h_fatal.get();
  return w[3] != 0 || w[0] != 0;
}

void runtime::check() { check_at(nullptr, 0); }

std::string runtime::impl::fatal_cause() const
{
  const uint32_t k = h_fatal.get()[0];
  if (k == 0)
    return {};
  std::string s = fatal_reason(k) + ". " + placement_summary();
  // Session 14: cc's odt port on emu stopped this way on a nearly full GPU
  // while its labels were managed memory left to UVM's page faults; pinned
  // host memory passed. Host-homed managed memory does not migrate.
  std::string managed;
  for (const auto& r : arrays)
    if (r.live && r.wrap_managed && r.home != managed_home::host)
      managed += (managed.empty() ? "" : ", ") + array_name(r.meta.id);
  if (!managed.empty())
    s += " Wrapped managed memory (" + managed +
         ") can migrate on page faults, which on a nearly full GPU can hold lines this long; "
         "allocate it with cudaMallocHost, lower BAM_GPU_BUDGET so that it is read from host memory, or leave the "
         "GPU more free memory.";
  return s;
}

// Where each live array is read and how large the cache is: what decides
// whether lines can be found (a failure message's context).
std::string runtime::impl::placement_summary() const
{
  std::string s = "The cache: " + std::to_string(n_slots) + " lines of " + std::to_string(cfg.line_bytes) +
                  " bytes; arrays:";
  for (const auto& r : arrays)
    if (r.live)
      s += " " + array_name(r.meta.id) + " " + std::to_string((r.meta.n_lines * cfg.line_bytes) >> 20) + " MiB " +
           (r.wrapped ? wrap_description(r) : placement_name(placement(r.meta.placement))) + ",";
  s.back() = '.';
  return s;
}

std::string runtime::impl::fatal_reason(uint32_t k) const
{
  if (detail::fault_kind(k) == detail::fault_kind::exhausted)
    return "bam: a kernel was stopped by the cache: no free slot for " + detail::format_number(cfg.stall_timeout_s) +
           " s; every one of the " + std::to_string(n_slots) +
           " cache lines stayed pinned or in flight. Element reads read around a full cache (except on the nvme "
           "backend reading straight into GPU memory); lines stay pinned between accesses through bam::array_ref "
           "(one line per thread) and ODT tiles, and writes on a storage backend wait for a slot. Raise "
           "BAM_CACHE_BYTES above resident threads x refs per thread x line size, or drop the refs";
  return "bam: a kernel was stopped by the cache: a line stayed busy for " + detail::format_number(cfg.stall_timeout_s) +
         " s (array " + array_name(h_fatal.get()[1]) + ", line " + std::to_string(h_fatal.get()[2]) +
         "): the backend stopped answering, or the line's fetcher found no free slot because every line was pinned "
         "(each bam::array_ref holds one line per thread); raise BAM_CACHE_BYTES above resident threads x refs per "
         "thread x line size, or drop the refs";
}

// The array a device-side failure names: the name the port gave it, or its
// number (an array freed since is named by number).
std::string runtime::impl::array_name(uint32_t id) const
{
  if (id < arrays.size() && arrays[id].live)
    return arrays[id].name;
  return "#" + std::to_string(id);
}

void runtime::check_at(const char* file, int line)
{
  const std::string where =
      file != nullptr ? std::string(" (found at the synchronization at ") + file + ":" + std::to_string(line) + ")" : "";
  cudaError_t e = cudaDeviceSynchronize();
  p_->h_fatal.get()[3] = 0; // re-armed: what the error block holds is reported below
  if (std::string cause = p_->fatal_cause(); !cause.empty()) {
    p_->fatal_reported = true;
    throw error(cause + " [CUDA: " + cudaGetErrorString(e) + "]" + where);
  }
  if (e != cudaSuccess)
    throw error(std::string("bam: a kernel using bam arrays failed: ") + cudaGetErrorString(e) + where);
  detail::error_block eb{};
  detail::cuda_check(cudaMemcpy(&eb, p_->d_err.get(), sizeof eb, cudaMemcpyDeviceToHost), "bam::runtime::check: reading the error block");
  if (eb.count == 0)
    return;
  detail::cuda_check(cudaMemset(p_->d_err.get(), 0, sizeof eb), "bam::runtime::check: cudaMemset"); // report each failure once
  const uint64_t lb = p_->cfg.line_bytes;
  std::string msg = std::string("bam: device-side ") + detail::fault_name(eb.kind) + " of line " +
                    std::to_string(eb.line) + " of array " + p_->array_name(eb.array_id) + " (bytes " +
                    std::to_string(eb.line * lb) + ".." + std::to_string((eb.line + 1) * lb) + ") failed";
  if (detail::fault_kind(eb.kind) == detail::fault_kind::pinned_dirty)
    msg += ": the line was still pinned (an array_ref outlived its kernel?)";
  else
    msg += ": " + detail::status_text(eb.status) + " (status 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%04x", unsigned(eb.status));
      return std::string(b);
    }() + ")";
  msg += "; " + std::to_string(eb.count) + " failure(s) in all. Data the kernel read from failed lines is zeros; " +
         "written data of failed write-backs is lost. Backend: " + backend_name(p_->cfg.kind) +
         (p_->cfg.kind == backend::emu && p_->cfg.emu_fault != "none"
              ? " (faults injected: BAM_EMU_FAULT=" + p_->cfg.emu_fault + ")"
              : "") +
         where;
  throw error(msg);
}

void runtime::copy_out(uint32_t id, void* dst, size_t n, size_t array_n, size_t elem_bytes)
{
  if (n > array_n)
    throw error("bam::runtime::copy_to_host: asked for " + std::to_string(n) + " elements of an array of " +
                std::to_string(array_n));
  const uint64_t bytes = detail::checked_bytes(n, elem_bytes, "bam::runtime::copy_to_host");
  flush();
  if (p_->rec(id).wrapped) // the program's own memory: any kind, so let UVA tell
    detail::cuda_check(cudaMemcpy(dst, p_->rec(id).meta.direct, bytes, cudaMemcpyDefault), "bam::runtime::copy_to_host");
  else if (unsigned char* gpu = p_->rec(id).gpu)
    detail::cuda_check(cudaMemcpy(dst, gpu, bytes, cudaMemcpyDeviceToHost), "bam::runtime::copy_to_host");
  else
    p_->store->read_to_host(p_->rec(id).region, dst, bytes);
  check();
}

void runtime::range_io(uint32_t id, size_t offset, size_t bytes, size_t array_bytes, const void* src, void* dst, int value)
{
  const char* what = src ? "write_bytes" : dst ? "read_bytes" : "fill_bytes";
  if (offset > array_bytes || bytes > array_bytes - offset)
    throw error(std::string("bam::runtime::") + what + ": bytes " + std::to_string(offset) + ".." +
                std::to_string(offset + bytes) + " are outside the array of " + std::to_string(array_bytes) + " bytes");
  if (bytes == 0)
    return;
  flush(); // dirty lines reach the backing store
  if (dst == nullptr) {
    // Writing: the cache must not keep the old contents of these lines.
    detail::drop_kernel<<<p_->slot_blocks(), 256>>>(p_->d_ctx.get(), id);
    check();
  }
  array_rec& r = p_->rec(id);
  if (r.wrapped && r.wrap_host == nullptr) { // wrapped device or managed memory: CUDA reaches it
    unsigned char* at = static_cast<unsigned char*>(r.meta.direct) + offset;
    if (src)
      detail::cuda_check(cudaMemcpy(at, src, bytes, cudaMemcpyDefault), "bam::runtime::write_bytes");
    else if (dst)
      detail::cuda_check(cudaMemcpy(dst, at, bytes, cudaMemcpyDefault), "bam::runtime::read_bytes");
    else
      detail::cuda_check(cudaMemset(at, value, bytes), "bam::runtime::fill_bytes");
    return;
  }
  if ((r.wrapped || r.gpu == nullptr) && (r.wrapped ? r.wrap_host : r.region.host) != nullptr) {
    // host backend: the lines live in pinned host memory; or wrapped pinned host memory
    unsigned char* at = (r.wrapped ? r.wrap_host : r.region.host) + offset;
    if (src)
      std::memcpy(at, src, bytes);
    else if (dst)
      std::memcpy(dst, at, bytes);
    else
      std::memset(at, value, bytes);
    return;
  }
  if (r.gpu != nullptr || r.region.device != nullptr) { // device memory (or, for hbm, pointer access)
    unsigned char* at = (r.gpu != nullptr ? r.gpu : r.region.device) + offset;
    if (src)
      detail::cuda_check(cudaMemcpy(at, src, bytes, cudaMemcpyHostToDevice), "bam::runtime::write_bytes");
    else if (dst)
      detail::cuda_check(cudaMemcpy(dst, at, bytes, cudaMemcpyDeviceToHost), "bam::runtime::read_bytes");
    else
      detail::cuda_check(cudaMemset(at, value, bytes), "bam::runtime::fill_bytes");
    return;
  }
  // Storage backends: read, patch and write the region back (same array).
  std::vector<unsigned char> buf(array_bytes);
  p_->store->read_to_host(r.region, buf.data(), array_bytes);
  if (dst) {
    std::memcpy(dst, buf.data() + offset, bytes);
    return;
  }
  if (src)
    std::memcpy(buf.data() + offset, src, bytes);
  else
    std::memset(buf.data() + offset, value, bytes);
  p_->store->write_from_host(r.region, buf.data(), array_bytes);
  check();
}

// Where CUDA reaches an array's bytes in place, the memory range_io reads
// and writes (wrapped device or managed memory, the host backend's pinned
// lines or wrapped host memory, a resident copy, hbm's device memory);
// nullptr for storage backends.
static unsigned char* reachable_bytes(const array_rec& r)
{
  if (r.wrapped && r.wrap_host == nullptr)
    return static_cast<unsigned char*>(r.meta.direct);
  if ((r.wrapped || r.gpu == nullptr) && (r.wrapped ? r.wrap_host : r.region.host) != nullptr)
    return r.wrapped ? r.wrap_host : r.region.host;
  if (r.gpu != nullptr || r.region.device != nullptr)
    return r.gpu != nullptr ? r.gpu : r.region.device;
  return nullptr;
}

void runtime::copy_range(uint32_t dst_id, size_t dst_offset, size_t dst_bytes, uint32_t src_id, size_t src_offset,
                         size_t src_bytes, size_t bytes)
{
  const std::pair<size_t, size_t> ranges[] = {{src_offset, src_bytes}, {dst_offset, dst_bytes}};
  for (auto [offset, size] : ranges)
    if (offset > size || bytes > size - offset)
      throw error("bam::runtime::copy_bytes: bytes " + std::to_string(offset) + ".." + std::to_string(offset + bytes) +
                  " are outside an array of " + std::to_string(size) + " bytes");
  if (bytes == 0)
    return;
  unsigned char* to = reachable_bytes(p_->rec(dst_id));
  const unsigned char* from = reachable_bytes(p_->rec(src_id));
  const bool overlap = dst_id == src_id && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes;
  if (to == nullptr || from == nullptr || overlap) {
    // A storage backend, or an overlapping copy within one array (memmove
    // semantics): through host memory.
    std::vector<unsigned char> tmp(bytes);
    range_io(src_id, src_offset, bytes, src_bytes, nullptr, tmp.data(), 0);
    range_io(dst_id, dst_offset, bytes, dst_bytes, tmp.data(), nullptr, 0);
    return;
  }
  flush(); // the source's dirty lines reach its memory
  // The cache must not keep the destination's old contents.
  detail::drop_kernel<<<p_->slot_blocks(), 256>>>(p_->d_ctx.get(), dst_id);
  check();
  detail::cuda_check(cudaMemcpy(to + dst_offset, from + src_offset, bytes, cudaMemcpyDefault),
                     "bam::runtime::copy_bytes");
}

void runtime::release_array(uint32_t id)
{
  array_rec& r = p_->rec(id);
  check(); // waits for the kernels; a trapped one is reported with its cause (no free slot, stalled line)
  detail::drop_kernel<<<p_->slot_blocks(), 256>>>(p_->d_ctx.get(), id);
  detail::cuda_check(cudaDeviceSynchronize(), "bam::runtime::free: dropping the array's lines");
  if (!r.wrapped) // a wrapped array's memory is the program's
    p_->store->release(r.region);
  cudaFree(r.meta.state);
  cudaFree(r.meta.slot_of);
  cudaFree(r.meta.fetches);
  r.meta.fetches = nullptr;
  cudaFree(r.gpu);
  r.gpu = nullptr;
  if (placement(r.meta.placement) == placement::resident && !r.wrapped)
    p_->budget.release(r.meta.n_lines * p_->cfg.line_bytes);
  p_->unhome_managed(r);
  r.live = false;
  r.meta.live = 0;
  cudaMemcpy(p_->d_arrays.get() + id, &r.meta, sizeof r.meta, cudaMemcpyHostToDevice);
  p_->free_ids.push_back(id);
}

void runtime::drop_cache()
{
  flush();
  detail::drop_kernel<<<p_->slot_blocks(), 256>>>(p_->d_ctx.get(), 0xffffffffu);
  check();
  // A cold cache forgets the replacement history too (fetch counts, priorities).
  for (const auto& r : p_->arrays)
    if (r.live && r.meta.fetches != nullptr)
      detail::cuda_check(cudaMemset(r.meta.fetches, 0, r.meta.n_lines), "bam::runtime::drop_cache: fetch counts");
  if (p_->d_prio) { // drop_slot zeroed the priorities of the slots it emptied; none is left
    detail::cuda_check(cudaMemset(p_->d_prio.get(), 0, sizeof(uint32_t) * p_->n_slots), "bam::runtime::drop_cache: priorities");
    detail::cuda_check(cudaMemset(p_->d_protected.get(), 0, sizeof(uint32_t)), "bam::runtime::drop_cache: priorities");
  }
}

bam::array_stats runtime::array_stats_of(uint32_t id)
{
  const array_rec& r = p_->rec(id);
  check();
  bam::array_stats a;
  a.id = r.meta.id;
  if (p_->d_array_io) {
    detail::array_io io{};
    detail::cuda_check(cudaMemcpy(&io, p_->d_array_io.get() + id, sizeof io, cudaMemcpyDeviceToHost),
                       "bam::runtime::stats_of: reading counters");
    a.io_reads = io.reads;
    a.io_writes = io.writes;
    a.io_read_bytes = io.reads * p_->cfg.line_bytes;
    a.io_write_bytes = io.writes * p_->cfg.line_bytes;
  }
  return a;
}

bam::stats runtime::stats()
{
  check(); // waits for the kernels; a trapped one is reported with its cause (no free slot, stalled line)
  std::vector<detail::stats_row> rows(size_t(p_->n_sms));
  detail::cuda_check(cudaMemcpy(rows.data(), p_->d_stats.get(), sizeof(detail::stats_row) * rows.size(), cudaMemcpyDeviceToHost),
                     "bam::runtime::stats: reading counters");
  bam::stats s;
  for (const auto& r : rows) {
    const detail::hit_fold f = detail::fold_hit_elems(r); // the hit path counts its reads by element size
    s.accesses += f.accesses;
    s.bytes += f.bytes;
    s.hit_accesses += f.hit_accesses;
    s.hits += r.hits;
    s.misses += r.misses;
    s.evictions += r.evictions;
    s.writebacks += r.writebacks;
    s.io_reads += r.io_reads;
    s.io_writes += r.io_writes;
    s.io_read_bytes += r.io_read_bytes;
    s.io_write_bytes += r.io_write_bytes;
    s.io_errors += r.io_errors;
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - p_->t0).count();
  return s;
}

void runtime::reset_stats()
{
  detail::cuda_check(cudaDeviceSynchronize(), "bam::runtime::reset_stats");
  detail::cuda_check(cudaMemset(p_->d_stats.get(), 0, sizeof(detail::stats_row) * size_t(p_->n_sms)), "bam::runtime::reset_stats");
  if (p_->d_array_io)
    detail::cuda_check(cudaMemset(p_->d_array_io.get(), 0, sizeof(detail::array_io) * detail::max_arrays),
                       "bam::runtime::reset_stats");
  p_->t0 = std::chrono::steady_clock::now();
}

void runtime::print_stats(FILE* out)
{
  const bam::stats s = stats();
  std::fprintf(out, "bam: backend %s, cache %u lines x %zu B (%.1f MiB), replacement %s%s\n", backend_name(p_->cfg.kind),
               p_->n_slots, p_->cfg.line_bytes, double(size_t(p_->n_slots) * p_->cfg.line_bytes) / (1 << 20),
               p_->cfg.cache_policy.c_str(), p_->cfg.stats ? "" : " [BAM_STATS=0: counters off]");
  std::fprintf(out,
               "  accesses %llu (%.1f MB), %llu (%.2f%%) read pin-free; pinned line probes: %llu hits, %llu misses, "
               "hit rate %.2f%%\n",
               (unsigned long long)s.accesses, double(s.bytes) / 1e6, (unsigned long long)s.hit_accesses,
               100.0 * s.hit_access_share(), (unsigned long long)s.hits, (unsigned long long)s.misses,
               100.0 * s.hit_rate());
  std::fprintf(out, "  evictions %llu, write-backs %llu\n", (unsigned long long)s.evictions, (unsigned long long)s.writebacks);
  std::fprintf(out, "  I/O: %llu reads, %llu writes, %.1f MB read, %.1f MB written, %llu errors\n",
               (unsigned long long)s.io_reads, (unsigned long long)s.io_writes, double(s.io_read_bytes) / 1e6,
               double(s.io_write_bytes) / 1e6, (unsigned long long)s.io_errors);
  std::fprintf(out, "  over %.3f s: %.0f IOPS, %.2f GB/s\n", s.seconds, s.iops(), s.io_gbps());
  for (const auto& r : p_->arrays) { // placement per array (hits on direct arrays are not counted above)
    if (!r.live)
      continue;
    const bam::array_stats a = array_stats_of(r.meta.id);
    const double mib = double(r.meta.n_lines * p_->cfg.line_bytes) / (1 << 20);
    std::fprintf(out, "  array #%u: %.1f MiB, placement %s, %llu lines read (%.1f MB, %.2fx the array), %llu written\n",
                 r.meta.id, mib, r.wrapped ? wrap_description(r).c_str() : placement_name(placement(r.meta.placement)),
                 (unsigned long long)a.io_reads, double(a.io_read_bytes) / 1e6,
                 mib > 0 ? double(a.io_read_bytes) / (mib * (1 << 20)) : 0.0, (unsigned long long)a.io_writes);
  }
  if (p_->resident_fallbacks > 0)
    std::fprintf(out, "  %u array(s) within BAM_GPU_BUDGET found no GPU memory for their copy; read from the backend instead\n",
                 p_->resident_fallbacks);
  if (p_->stack_ready)
    std::fprintf(out, "  stack raised to %zu bytes per thread for the miss path: %.1f MiB of GPU memory\n", p_->stack_want,
                 double(p_->stack_bytes_reserved) / (1 << 20));
  else
    std::fprintf(out, "  stack left at the driver's default (no array is read through the cache)\n");
  p_->store->print(out);
}

const config& runtime::cfg() const noexcept { return p_->cfg; }
size_t runtime::cache_lines() const noexcept { return p_->n_slots; }
size_t runtime::live_arrays() const noexcept
{
  size_t n = 0;
  for (const auto& r : p_->arrays)
    n += r.live ? 1 : 0;
  return n;
}
const detail::cache_ctx* runtime::device_ctx() const noexcept { return p_->d_ctx.get(); }
unsigned char* runtime::slots() const noexcept { return p_->slots_aligned; }
uint32_t runtime::line_shift() const noexcept { return p_->line_shift; }

runtime& default_runtime()
{
  static std::once_flag once;
  static std::unique_ptr<runtime> rt;
  std::call_once(once, [] {
    detail::exit_on_uncaught_error(); // a failed check() in generated code: message and exit 1, not an abort
    rt = std::make_unique<runtime>();
  });
  return *rt;
}

BAM_NAMESPACE_END // namespace bam
