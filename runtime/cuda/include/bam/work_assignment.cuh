// Work-assignment drivers used by bamgen's access-pattern rewrites
// (thesis ch. 6). A rewritten kernel wraps its original body in a lambda
// that takes a *virtual* thread or warp id and hands it to one of these
// drivers, which decide which physical thread runs which virtual id.
//
// Every driver runs each virtual id of the original launch exactly once,
// so a rewritten kernel computes what the original computed for any launch
// configuration. Launch shapes a driver cannot remap (2-D/3-D launches,
// blocks that are not whole warps) fall back to the identity assignment.
//
// The drivers are written against a `launch` value (the calling thread's
// global id and the launch's size) so the very same code runs in CPU tests
// that play every thread of a launch (runtime/cuda/tests/work_assignment_test.cpp).
#ifndef BAM_WORK_ASSIGNMENT_CUH
#define BAM_WORK_ASSIGNMENT_CUH

#include <bam/detail/cold_call.cuh>
#include <bam/detail/config.cuh>
#include <bam/odt.cuh>
#if BAM_HAS_DEVICE_CODE
#  include <bam/array.cuh>
#endif

#include <cstdio>
#include <type_traits>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

namespace detail {

// What a driver needs to know about the calling thread and its launch.
struct launch_1d {
  unsigned long long gtid;   // global thread id: blockIdx.x * blockDim.x + threadIdx.x
  unsigned long long total;  // gridDim.x * blockDim.x
  unsigned block_x;          // blockDim.x
  bool one_dimensional;      // blockDim.y == blockDim.z == gridDim.y == gridDim.z == 1
};

// Whether lanes of the launch line up with lane groups of `lanes` threads.
BAM_HD inline bool remappable(const launch_1d& l, unsigned lanes) {
  return l.one_dimensional && l.block_x % lanes == 0;
}

template <unsigned Lanes, class Body>
BAM_HD void thread_by_line(const launch_1d& l, unsigned long long elems_per_line, Body&& body) {
  const unsigned long long groups = l.total / Lanes;
  if (!remappable(l, Lanes) || groups == 0 || elems_per_line == 0) {
    body(l.gtid);
    return;
  }
  const unsigned long long group = l.gtid / Lanes;
  const unsigned long long sub = l.gtid % Lanes;
  for (unsigned long long line = group; line * elems_per_line < l.total; line += groups) {
    const unsigned long long first = line * elems_per_line;
#if defined(__CUDA_ARCH__)
#  pragma unroll 1
#endif
    for (unsigned long long k = sub; k < elems_per_line && first + k < l.total; k += Lanes) {
      body(first + k);
    }
  }
}

// A grid-stride loop `for (i = tid; i < n; i += stride)` (stride = the
// launch's thread count) walked line by line instead: the thread's first
// index and the one after i, so that groups of Lanes lanes take lines of
// elems_per_line consecutive indices, consecutive groups consecutive
// lines, and a group moves `groups` lines on when it leaves one. Every
// index below any n is visited exactly once, as by the original loop.
// Shapes it cannot remap (and lines shorter than a group) keep the
// original order.
template <unsigned Lanes>
BAM_HD bool by_line_remappable(const launch_1d& l, unsigned long long elems_per_line) {
  return remappable(l, Lanes) && l.total >= Lanes && elems_per_line >= Lanes;
}

template <unsigned Lanes>
BAM_HD unsigned long long by_line_first(const launch_1d& l, unsigned long long elems_per_line) {
  if (!by_line_remappable<Lanes>(l, elems_per_line)) {
    return l.gtid;
  }
  return (l.gtid / Lanes) * elems_per_line + l.gtid % Lanes;
}

template <unsigned Lanes>
BAM_HD unsigned long long by_line_next(const launch_1d& l, unsigned long long i, unsigned long long elems_per_line) {
  if (!by_line_remappable<Lanes>(l, elems_per_line)) {
    return i + l.total;
  }
  const unsigned long long k = i % elems_per_line;  // the index's place in its line
  if (k + Lanes < elems_per_line) {
    return i + Lanes;
  }
  return i - k + (l.total / Lanes) * elems_per_line + l.gtid % Lanes;
}

template <class Body>
BAM_HD void warp_transposed(const launch_1d& l, unsigned long long stride, Body&& body) {
  const unsigned long long warps = l.total / 32;
  if (!remappable(l, 32) || stride == 0) {
    body(l.gtid / 32);
    return;
  }
  const unsigned long long pivot = (warps + stride - 1) / stride;
  for (unsigned long long w = l.gtid / 32; w < pivot * stride; w += warps) {
    const unsigned long long v = w / pivot + (w % pivot) * stride;
    if (v < warps) {
      body(v);
    }
  }
}

template <unsigned K, class Body>
BAM_HD void warp_coarsened(const launch_1d& l, Body&& body) {
  const unsigned long long warps = l.total / 32;
  if (!remappable(l, 32)) {
    body(l.gtid / 32);
    return;
  }
  const unsigned long long groups = (warps + K - 1) / K;
  for (unsigned long long g = l.gtid / 32; g < groups; g += warps) {
    for (unsigned j = 0; j < K; ++j) {
      const unsigned long long v = g * K + j;
      if (v < warps) {
        body(v);
      }
    }
  }
}

// What odt_tiles tells a tile view (bam::odt_tile) around each tile: the
// warp enters tile t, runs the tile's vertices, and leaves it (all lanes
// together, outside any vertex's code). The default does nothing.
struct no_tile_view {
  BAM_HD void enter(unsigned long long) {}
  BAM_HD void leave() {}
};

// Returns false when the launch cannot run ODT (the caller reports it).
template <class RowPtr, class Body, class View = no_tile_view>
BAM_HD bool odt_tiles(const launch_1d& l, const unsigned long long* fvl, const RowPtr& rowptr, unsigned long long n_edges,
                      unsigned long long edges_per_tile, Body&& body, View&& view = View{}) {
  const unsigned long long groups = l.total / 32;
  if (l.total % 32 != 0 || groups == 0 || edges_per_tile == 0) {
    return false;
  }
  // t < the tile count exactly when t's first edge is an edge. The tile's
  // bounds are computed where they are used, from an opaque copy of t
  // (detail::opaque): held across the loop they sat in registers across
  // every slow-path call the inlined vertex code makes.
  for (unsigned long long t = l.gtid / 32; t * edges_per_tile < n_edges; t += groups) {
    view.enter(t);
    for (unsigned long long v = fvl[t];; ++v) {
      const unsigned long long lo = opaque(t) * edges_per_tile;
      const unsigned long long hi = lo + edges_per_tile < n_edges ? lo + edges_per_tile : n_edges;
      if (static_cast<unsigned long long>(rowptr[v]) >= hi) {
        break;  // rowptr[n] == n_edges >= hi, so this stops at the last vertex
      }
      if (static_cast<unsigned long long>(rowptr[v + 1]) > lo) {
        body(v, lo, hi);
      }
    }
    view.leave();
  }
  return true;
}

#if BAM_HAS_DEVICE_CODE
// The default vertex test of odt_tiles_warp: every vertex may be active.
struct every_vertex {
  BAM_HD bool operator()(unsigned long long) const { return true; }
};

// The edge array of an ODT kernel's direct version (bam::by_placement runs
// the body over direct_array views when every array is in GPU memory or
// zero-copy host memory): odt_tile over a direct_array deduces
// odt_tile<direct_edges<T, R>>, whose reads are plain loads with nothing
// to pin, so that version of the kernel makes no slow-path call at all.
template <class T, bool ReadOnlyPath>
struct direct_edges;
} // namespace detail

template <class T, bool ReadOnlyPath>
class odt_tile<detail::direct_edges<T, ReadOnlyPath>> {
public:
  using value_type = typename array<T>::value_type;

  BAM_HD explicit odt_tile(const direct_array<T, ReadOnlyPath>& a) noexcept
      : p_(a.data()), n_(a.size()), epl_(a.elems_per_line())
  {}
  odt_tile(const odt_tile&) = delete;
  odt_tile& operator=(const odt_tile&) = delete;

  [[nodiscard]] BAM_HD size_t size() const noexcept { return n_; }
  [[nodiscard]] BAM_HD uint32_t elems_per_line() const noexcept { return epl_; }

  // Edge e: a plain load (through a restrict-qualified pointer on the
  // read-only path, as direct_array reads it).
  __device__ value_type operator[](size_t e) const
  {
    BAM_ASSERT(e < n_, "bam::odt_tile: edge outside the array");
    if constexpr (ReadOnlyPath) {
      const value_type* __restrict__ p = p_;
      return p[e];
    } else {
      return p_[e];
    }
  }

  // Driver hooks: nothing is pinned, so every warp may take work items.
  __device__ unsigned long long holding_warps(unsigned long long warps) const { return warps; }
  __device__ void enter(unsigned long long) {}
  __device__ void leave() {}

private:
  const value_type* p_;
  size_t n_;
  uint32_t epl_;
};

template <class T, bool R>
odt_tile(const direct_array<T, R>&) -> odt_tile<detail::direct_edges<T, R>>;

namespace detail {

// Whether the driver may inline the vertex code (see odt_tiles_warp).
template <class View>
struct odt_inline_body : std::false_type {};
template <class T, bool R>
struct odt_inline_body<odt_tile<direct_edges<T, R>>> : std::true_type {};

// The out-of-line halves of odt_tiles_warp over a cached edge array (called
// through BAM_COLD, cold_call.cuh, so that each sets the kernel's register
// count on its own instead of adding to the driver's).
//
// One vertex's code: what it keeps live (its array handles' hit paths,
// loop bounds) no longer sits on top of the driver's state.
// A tile's edge range, handed to the out-of-line halves by address: the
// driver keeps it in its stack frame, so nothing of it stays live in
// registers across their calls (a kernel under __launch_bounds__ spilled
// the bounds instead).
struct odt_bounds {
  unsigned long long lo, hi;
};

template <class Body>
__device__ __noinline__ void odt_vertex(Body* body, unsigned long long v, const odt_bounds* b) {
  (*body)(v, b->lo, b->hi);
}

// The vertex test of one lane (`v <= last`: a candidate of the item):
// bit 0, v starts at or past hi (so do the vertices after it); bit 1, v's
// list overlaps [lo, hi) and active(v). Reads rowptr (often a cached array)
// and whatever active reads.
template <class RowPtr, class Active>
__device__ __noinline__ unsigned odt_candidate(const RowPtr* rowptr, Active* active, unsigned long long v,
                                               unsigned long long last, const odt_bounds* b) {
  if (v > last) {
    return 1u;
  }
  if (static_cast<unsigned long long>((*rowptr)[v]) >= b->hi) {
    return 1u;
  }
  return static_cast<unsigned long long>((*rowptr)[v + 1]) > b->lo && (*active)(v) ? 2u : 0u;
}

// odt_tiles for hardware warps (blocks of whole warps), over the work items
// of an odt_plan: the same vertices of each tile in the same order and the
// same body calls, but the warp tests 32 candidate vertices of its item at
// once instead of one after another, and a tile with many candidates is
// shared by several warps (one per item). fvl[t] .. tile_last(t) bounds a
// tile's candidates (fvl[n_tiles] is the vertex count). A tile can hold
// thousands of vertices with empty or tiny lists (power-law graphs):
// walking them one by one, in one warp, left that warp busy long after
// every other tile was done. (Also run by tests/warp_emu_test.cpp.)
// `active(v)` is a test the body makes before it does anything (bamgen
// passes the vertex guard it found, e.g. BFS's `label[v] == level`): the
// warp skips the vertices it rejects without entering them.
//
// Registers (issue 18's budget of 64): over a cached edge array the
// vertex code and the vertex test run out of line (odt_vertex,
// odt_candidate): inlined, every value the driver keeps across the loop
// (the plan, the item's tile and bounds, the chunk, the vote masks) added
// to the registers of the vertex code's hit paths, 112-138 registers for a
// warp-per-vertex BFS level. Out of line, the kernel needs the larger of
// the two, not their sum, for one call per active vertex and one per 32
// candidates (the vertex code reads through the cache there anyway). Over
// a direct edge array (odt_inline_body) nothing is called and everything
// stays inline.
template <class RowPtr, class Body, class View, class Active = every_vertex>
__device__ void odt_tiles_warp(const launch_1d& l, const odt_plan& plan, const RowPtr& rowptr,
                               unsigned long long n_edges, unsigned long long edges_per_tile, Body&& body, View& view,
                               Active&& active = Active{}) {
  constexpr bool inline_body = odt_inline_body<std::remove_cv_t<View>>::value;
  using body_type = std::remove_reference_t<Body>;
  using active_type = std::remove_reference_t<Active>;
  const unsigned lane = static_cast<unsigned>(l.gtid & 31u);
  // Warps past the view's bound on tile holders take no item; the others
  // stride by the bound, so every item still has exactly one warp. (32
  // bits over a cached edge array, see odt_tile::holding_warps.)
  const auto groups = view.holding_warps(l.total / 32);
  for (unsigned long long i = l.gtid / 32 < groups ? l.gtid / 32 : plan.items; i < plan.items; i += groups) {
    const unsigned long long t = plan.item_tile != nullptr ? plan.item_tile[i] : i;
    const unsigned long long lo = t * edges_per_tile;
    const unsigned long long hi = lo + edges_per_tile < n_edges ? lo + edges_per_tile : n_edges;
    odt_bounds bounds{lo, hi}; // the out-of-line calls read it by address
    // Vertices after tile_last(t) (the owner of edge hi) start at or past hi.
    unsigned long long first = plan.fvl[t], last = odt::tile_last(plan.fvl, plan.tiles, t);
    if (plan.item_tile != nullptr) {  // this item's share of the tile's candidates
      first += (i - plan.first_item[t]) * plan.item_vertices;
      last = last - first < plan.item_vertices ? last : first + plan.item_vertices - 1;
    }
    view.enter(t);
    for (unsigned long long base = first; base <= last; base += 32) {
      const unsigned long long v = base + lane;
      bool past = true, overlaps = false;
      if constexpr (inline_body) {
        if (v <= last) {
          past = static_cast<unsigned long long>(rowptr[v]) >= hi;
          overlaps = !past && static_cast<unsigned long long>(rowptr[v + 1]) > lo && active(v);
        }
      } else {
        const unsigned r = BAM_COLD((odt_candidate<RowPtr, active_type>))(&rowptr, &active, v, last, &bounds);
        past = (r & 1u) != 0;
        overlaps = (r & 2u) != 0;
      }
      const unsigned past_mask = __ballot_sync(0xffffffffu, past);
      unsigned todo = __ballot_sync(0xffffffffu, overlaps);
      while (todo != 0) {
        const unsigned k = static_cast<unsigned>(__ffs(todo) - 1);
        todo &= todo - 1;
        if constexpr (inline_body) {
          body(base + k, lo, hi);
        } else {
          BAM_COLD((odt_vertex<body_type>))(&body, base + k, &bounds);
        }
      }
      if (past_mask != 0) {
        break;  // rowptr is monotone: the vertices after this chunk are past the tile too
      }
    }
    view.leave();
  }
}

#endif

#if defined(__CUDACC__)
__device__ __forceinline__ launch_1d this_launch() {
  return launch_1d{static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x,
                   static_cast<unsigned long long>(gridDim.x) * blockDim.x, blockDim.x,
                   blockDim.y == 1 && blockDim.z == 1 && gridDim.y == 1 && gridDim.z == 1};
}
#endif

}  // namespace detail

// First edge index >= lo that a warp-strided loop `for (e = first; ...; e += step)`
// visits: ODT clamps each neighbour walk to the tile [lo, hi).
BAM_HD inline unsigned long long odt_first_strided(unsigned long long first, unsigned long long lo, unsigned long long step) {
  return first >= lo ? first : first + (lo - first + step - 1) / step * step;
}

#if defined(__CUDACC__)

// Cache-line-aware work assignment (thesis §6.2): each group of Lanes lanes
// takes one cache line (elems_per_line consecutive virtual thread ids) and
// strides through it; consecutive groups take consecutive lines, and
// groups stride over lines so any grid size covers every virtual id.
// body(v) runs for every v in [0, gridDim.x * blockDim.x).
template <unsigned Lanes = 32, class Body>
__device__ void for_each_thread_by_line(unsigned long long elems_per_line, Body&& body) {
  static_assert(Lanes == 32 || Lanes == 16 || Lanes == 8 || Lanes == 4, "for_each_thread_by_line: Lanes must be 32, 16, 8 or 4");
  detail::thread_by_line<Lanes>(detail::this_launch(), elems_per_line, body);
}

// claware for grid-stride loops (bamgen writes these into the loop's
// header): `for (i = by_line_first<L>(epl); i < n; i = by_line_next<L>(i,
// epl, stride))` visits the indices the original `for (i = tid; i < n; i +=
// stride)` visited, each once, a line of each array per group at a time.
// (Dealing out the launch's threads instead would leave each thread's loop
// in place: a group would touch one element of n / threads lines before
// returning for the next element of the first.) `stride` must be the
// launch's thread count, gridDim.x * blockDim.x, as in the original loop.
template <unsigned Lanes = 32>
__device__ __forceinline__ unsigned long long by_line_first(unsigned long long elems_per_line) {
  static_assert(Lanes == 32 || Lanes == 16 || Lanes == 8 || Lanes == 4, "by_line_first: Lanes must be 32, 16, 8 or 4");
  return detail::by_line_first<Lanes>(detail::this_launch(), elems_per_line);
}

template <unsigned Lanes = 32>
__device__ __forceinline__ unsigned long long by_line_next(unsigned long long i, unsigned long long elems_per_line,
                                                          unsigned long long stride) {
  const detail::launch_1d l = detail::this_launch();
  BAM_ASSERT(stride == l.total, "bam::by_line_next: the loop's stride is not the launch's thread count");
  (void)stride;
  return detail::by_line_next<Lanes>(l, i, elems_per_line);
}

// Transposed work assignment (thesis §6.3.2): virtual warp ids are handed
// out so that consecutive physical warps work on virtual warps `stride`
// apart: v = w / pivot + (w % pivot) * stride with pivot = ceil(M / stride).
// That map is a bijection on [0, pivot * stride); ids >= M are skipped, so
// each virtual warp in [0, M) runs exactly once. body(v) runs warp-uniformly
// (every lane of a warp in the same iteration), so warp intrinsics inside
// the body keep working.
template <class Body>
__device__ void for_each_warp_transposed(unsigned long long stride, Body&& body) {
  detail::warp_transposed(detail::this_launch(), stride, body);
}

// Cache-line-aware warp coarsening (thesis §6.3.3): each physical warp runs
// K consecutive virtual warps, so one warp walks K consecutive vertices'
// neighbour lists, which sit next to each other on storage.
template <unsigned K, class Body>
__device__ void for_each_warp_coarsened(Body&& body) {
  static_assert(K >= 1, "for_each_warp_coarsened: K must be at least 1");
  detail::warp_coarsened<K>(detail::this_launch(), body);
}

// The smallest number of elements per cache line among arrays: a work unit
// of that many consecutive elements never spans more than one line of any
// of them (up to alignment), so claware can size its units by it.
template <class A>
__device__ __forceinline__ unsigned long long min_elems_per_line(const A& a) {
  return static_cast<unsigned long long>(a.elems_per_line());
}

template <class A, class B, class... Rest>
__device__ __forceinline__ unsigned long long min_elems_per_line(const A& a, const B& b, const Rest&... rest) {
  const unsigned long long x = min_elems_per_line(a);
  const unsigned long long y = min_elems_per_line(b, rest...);
  return x < y ? x : y;
}

// The lane of the calling thread inside its group of 32 consecutive global
// thread ids: what warp-per-vertex kernels compute as `tid % 32`.
__device__ __forceinline__ unsigned lane_id() {
  return static_cast<unsigned>(detail::this_launch().gtid & 31u);
}

// First edge index of a thread-per-vertex walk (`for (e = first; ...; ++e)`)
// once ODT spreads it over the lanes of a warp.
__device__ __forceinline__ unsigned long long odt_first_lane(unsigned long long first, unsigned long long lo) {
  return (first >= lo ? first : lo) + lane_id();
}

// On-demand Implicit Tiling (thesis §6.3.4): each group of 32 threads takes
// one tile (edges_per_tile consecutive edges, one cache line of the edge
// array) and walks every vertex whose neighbour list overlaps it, starting
// at fvl[tile] (the first vertex list). body(v, lo, hi) runs the vertex's
// original per-vertex code with its neighbour walk clamped to [lo, hi).
// Tiles partition the edges, so every edge is visited exactly once.
template <class RowPtr, class Body>
__device__ void odt_for_each_tile(const unsigned long long* fvl, const RowPtr& rowptr, unsigned long long n_edges,
                                  unsigned long long edges_per_tile, Body&& body) {
  const detail::launch_1d l = detail::this_launch();
  if (!detail::odt_tiles(l, fvl, rowptr, n_edges, edges_per_tile, body)) {
    if (l.gtid == 0) {
      printf("bam::odt_for_each_tile: the launch must have a multiple of 32 threads (got %llu)\n", l.total);
    }
    __trap();
  }
}

// The same with a plan (what bamgen's ports receive): this walk takes whole
// tiles, one vertex at a time, so it needs only the plan's list.
template <class RowPtr, class Body>
__device__ void odt_for_each_tile(const odt_plan& plan, const RowPtr& rowptr, unsigned long long n_edges,
                                  unsigned long long edges_per_tile, Body&& body) {
  odt_for_each_tile(plan.fvl, rowptr, n_edges, edges_per_tile, body);
}

// The same, with a tile view (bam::odt_tile over the edge array), over the
// work items of a plan (bam::odt_plan_of, build_odt_plan): the body reads
// the tile's edges through the view, so the warp pins the tile's line once
// (on the first read) instead of probing the cache for every vertex, and
// the reads themselves are plain loads. `active(v)`, if given, must be
// false only for vertices whose body would do nothing (a guard the body
// tests first); those are skipped 32 at a time.
template <class RowPtr, class View, class Body, class Active = detail::every_vertex>
__device__ void odt_for_each_tile(const odt_plan& plan, const RowPtr& rowptr, View& view, Body&& body,
                                  Active&& active = Active{}) {
  const detail::launch_1d l = detail::this_launch();
  // The view's pins and the vertex votes are per hardware warp, so the
  // items must be too: one-dimensional blocks of whole warps.
  if (!detail::remappable(l, 32) || view.elems_per_line() == 0) {
    if (l.gtid == 0) {
      printf("bam::odt_for_each_tile: the launch must have one-dimensional blocks of whole warps (got %ux%ux%u threads per block)\n",
             blockDim.x, blockDim.y, blockDim.z);
    }
    __trap();
  }
  if (plan.tiles != odt::tile_count(view.size(), view.elems_per_line())) {
    if (l.gtid == 0) {
      printf("bam::odt_for_each_tile: the plan has %llu tiles, the edge array %llu; build the plan for this edge array\n",
             plan.tiles, static_cast<unsigned long long>(odt::tile_count(view.size(), view.elems_per_line())));
    }
    __trap();
  }
  detail::odt_tiles_warp(l, plan, rowptr, view.size(), view.elems_per_line(), body, view, active);
}

// The same over a bare first vertex list: one warp per whole tile.
template <class RowPtr, class View, class Body, class Active = detail::every_vertex>
__device__ void odt_for_each_tile(const unsigned long long* fvl, const RowPtr& rowptr, View& view, Body&& body,
                                  Active&& active = Active{}) {
  odt_for_each_tile(odt_plan::whole_tiles(fvl, odt::tile_count(view.size(), view.elems_per_line())), rowptr, view, body,
                    active);
}

#endif  // __CUDACC__

BAM_NAMESPACE_END // namespace bam

#endif  // BAM_WORK_ASSIGNMENT_CUH
