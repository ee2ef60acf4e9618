// Host support for kernels that `bamgen port --opt odt` rewrote: their
// launches pass bam::odt_plan_of(rowptr, n, edges), which builds the first
// vertex list of the edge array's tiles and the launch's work items
// (odt.cuh) on the first launch and returns the cached plan on every later
// one (BFS and CC launch the same kernel once per level or sweep, over the
// same graph).
//
// The cache is keyed by the offsets pointer and the edge array's geometry,
// so the offsets must not change while the edge array is in use — the
// same assumption the kernel itself makes about a CSR graph.
#ifndef BAM_ODT_PORT_CUH
#define BAM_ODT_PORT_CUH

#include <bam/array.cuh>
#include <bam/error.h>
#include <bam/odt.cuh>
#include <bam/runtime.cuh>
#include <bam/work_assignment.cuh>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// One plan (first vertex list and work items) per (offsets, vertex count,
// edge count, tile size).
class odt_plan_cache {
 public:
  // (offsets pointer or array id, vertices, edges, edges per tile)
  using key = std::tuple<const void*, size_t, size_t, size_t>;

  static odt_plan_cache& instance() {
    static odt_plan_cache c;
    return c;
  }

  template <class Off>
  const odt_plan& get(const Off* d_rowptr, size_t n_vertices, size_t n_edges, size_t edges_per_tile) {
    std::lock_guard<std::mutex> lock(mu_);
    return get_locked(key{d_rowptr, n_vertices, n_edges, edges_per_tile}, d_rowptr, n_vertices, n_edges, edges_per_tile);
  }

  // Offsets that were ported too: their |V|+1 entries are staged once in
  // mapped pinned host memory, which the build's kernels read in one pass
  // (the walk itself reads them through the cache). Not in GPU memory: a
  // program whose data does not fit has none to spare for a copy of its
  // offsets (cc at the matrix's nofit size: 52 MiB, and cudaMalloc failed),
  // and one pass over mapped memory costs what the copy there would.
  template <class Off, class T>
  const odt_plan& get(const array<Off>& rowptr, size_t n_vertices, const array<T>& edges) {
    using O = std::remove_const_t<Off>;
    std::lock_guard<std::mutex> lock(mu_);
    const key k{reinterpret_cast<const void*>(uintptr_t(rowptr.id()) | (uintptr_t(1) << 63)), n_vertices, edges.size(),
                edges.elems_per_line()};
    auto it = plans_.find(k);
    if (it != plans_.end()) {
      return it->second;
    }
    O* staged = nullptr;
    check(cudaHostAlloc(reinterpret_cast<void**>(&staged), (n_vertices + 1) * sizeof(O), cudaHostAllocMapped),
          "cudaHostAlloc (the offsets, staged for the plan)");
    std::unique_ptr<O, cudaError_t (*)(void*)> owner(staged, cudaFreeHost);
    default_runtime().copy_to_host(rowptr, staged, n_vertices + 1);
    O* device_view = nullptr;
    check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view), staged, 0), "cudaHostGetDevicePointer");
    return get_locked(k, device_view, n_vertices, edges.size(), edges.elems_per_line());
  }

  odt_plan_cache(const odt_plan_cache&) = delete;
  odt_plan_cache& operator=(const odt_plan_cache&) = delete;

 private:
  template <class Off>
  const odt_plan& get_locked(const key& k, const Off* d_rowptr, size_t n_vertices, size_t n_edges,
                             size_t edges_per_tile) {
    auto it = plans_.find(k);
    if (it != plans_.end()) {
      return it->second;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const odt_plan& plan = plans_.emplace(k, build_odt_plan(d_rowptr, n_vertices, n_edges, edges_per_tile,
                                                                 default_runtime().cfg().odt_item_vertices))
                                .first->second;
    if (default_runtime().cfg().stats) {  // a one-time cost of the first launch: say what it was
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "bam: ODT plan of %llu tiles, %llu work items (%zu vertices) built in %.2f ms\n", plan.tiles,
                   plan.items, n_vertices, ms);
    }
    return plan;
  }

  odt_plan_cache() = default;
  // Device memory is released with the CUDA context at exit; freeing it
  // from a static destructor could run after the context is gone.
  ~odt_plan_cache() = default;

  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      throw error(std::string("bam::odt_plan_of: ") + what + ": " + cudaGetErrorString(e));
    }
  }

  std::mutex mu_;
  std::map<key, odt_plan> plans_;  // std::map: references stay valid as it grows
};

}  // namespace detail

// The ODT plan for `edges` (a CSR edge array of n_vertices + 1 offsets at
// d_rowptr, in GPU-accessible memory): built on the first call, cached for
// every later launch over the same graph. bamgen's ports pass it to the
// kernel and size the grid by it (odt_grid).
template <class Off, class T>
const odt_plan& odt_plan_of(const Off* d_rowptr, size_t n_vertices, const array<T>& edges) {
  if (d_rowptr == nullptr) {
    throw error("bam::odt_plan_of: the offsets pointer is null; pass the device copy of the CSR offsets");
  }
  return detail::odt_plan_cache::instance().get(d_rowptr, n_vertices, edges.size(), edges.elems_per_line());
}

// The same when the offsets were ported to a bam::array as well.
template <class Off, class T>
const odt_plan& odt_plan_of(const array<Off>& rowptr, size_t n_vertices, const array<T>& edges) {
  if (rowptr.size() < n_vertices + 1) {
    throw error("bam::odt_plan_of: the offsets array has " + std::to_string(rowptr.size()) + " entries, " +
                std::to_string(n_vertices + 1) + " needed for " + std::to_string(n_vertices) + " vertices");
  }
  return detail::odt_plan_cache::instance().get(rowptr, n_vertices, edges);
}

// Just the first vertex list of that plan (one warp per whole tile).
template <class Off, class T>
const unsigned long long* first_vertex_list(const Off* d_rowptr, size_t n_vertices, const array<T>& edges) {
  return odt_plan_of(d_rowptr, n_vertices, edges).fvl;
}

template <class Off, class T>
const unsigned long long* first_vertex_list(const array<Off>& rowptr, size_t n_vertices, const array<T>& edges) {
  return odt_plan_of(rowptr, n_vertices, edges).fvl;
}

namespace detail {
// A grid of one warp per work unit (tile or item) in blocks of `block`.
// Each warp keeps its tile's line pinned while its vertices' code runs, and
// that code may read other arrays through the same cache: if the running
// warps pinned every line, none could fetch what it needs and the kernel
// would stall (a 2 MiB cache of 512 lines under BFS with offsets and levels
// ported too: 794 tiles at once). So when other arrays share the cache,
// the grid has at most three quarters of the cache's lines in warps, the
// rest left for those arrays; the loop over units is grid-strided, so any
// grid is correct. The bound is not applied when it is at least what the
// GPU can run at once (the hardware bounds the pins then): a smaller,
// persistent grid changes the order in which tiles run, and CC's label
// propagation then needs a fourth sweep. When the edge array is the only
// array in the cache, a warp waiting for its tile holds no pin, so a cache
// of one line per running warp (the thesis's SMs x warps x line) is enough.
inline dim3 odt_warps_grid(unsigned long long units, dim3 block, const runtime& rt) {
  const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
  if (threads == 0 || threads % 32 != 0) {
    throw error("bam::odt_grid: ODT kernels need blocks of whole warps; the launch asks for " + std::to_string(threads) +
                " threads per block");
  }
  unsigned long long warps = units;
  if (rt.live_arrays() > 1) {
    const unsigned long long lines = rt.cache_lines(), bound = lines - lines / 4;
    int dev = 0, sms = 0, per_sm = 0;
    const bool known = cudaGetDevice(&dev) == cudaSuccess &&
                       cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
                       cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev) == cudaSuccess;
    const unsigned long long running = known ? static_cast<unsigned long long>(sms) * per_sm / 32 : 0;
    if (!known) {
      (void)cudaGetLastError();
    }
    if (bound < units && (!known || bound < running)) {
      warps = bound;
    }
  }
  const unsigned long long blocks = (warps * 32 + threads - 1) / threads;
  return dim3(static_cast<unsigned>(blocks == 0 ? 1 : (blocks > 0x7fffffffull ? 0x7fffffffull : blocks)));
}
}  // namespace detail

// A grid for an ODT kernel launched with `block`: a warp per work item of
// the plan, within the bound above for the cache of `rt` (the runtime that
// made the edge array).
inline dim3 odt_grid(const odt_plan& plan, dim3 block, const runtime& rt = default_runtime()) {
  return detail::odt_warps_grid(plan.items, block, rt);
}

// A warp per tile of `edges` (for kernels given a bare first vertex list).
template <class T>
dim3 odt_grid(const array<T>& edges, dim3 block, const runtime& rt = default_runtime()) {
  return detail::odt_warps_grid(odt::tile_count(edges.size(), edges.elems_per_line()), block, rt);
}

// The block an ODT launch runs with: `block`, unless the ported kernel
// cannot run that many threads per block (a port adds registers: BFS's
// level kernel went past 128 per thread, so its 512-thread blocks failed
// with "too many resources requested for launch"); then the largest
// multiple of 32 threads it can run. An ODT kernel's result does not depend
// on its block size (the tile loop is grid-strided over warps, and odt
// refuses kernels that use threadIdx, shared memory or barriers), so this
// changes speed only.
template <class... Args>
dim3 odt_block(void (*kernel)(Args...), dim3 block) {
  if (block.y != 1 || block.z != 1) {
    return block;  // the kernel traps with a message naming the launch
  }
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    (void)cudaGetLastError();  // the launch itself will report it
    return block;
  }
  const unsigned fit = static_cast<unsigned>(attr.maxThreadsPerBlock) / 32u * 32u;
  return block.x <= fit || fit == 0 ? block : dim3(fit);
}

BAM_NAMESPACE_END // namespace bam

#endif  // BAM_ODT_PORT_CUH
