// Work-assignment drivers used by bamgen's access-pattern rewrites
// (thesis ch. 6). A rewritten kernel wraps its original body in a lambda
// that takes a *virtual* thread or warp id and hands it to one of these
// drivers, which decide which physical thread runs which virtual id.
//
// Every driver runs each virtual id of the original launch exactly once,
// so a rewritten kernel computes what the original computed for any launch
// configuration. Launch shapes a driver cannot remap (2-D/3-D launches,
// blocks that are not whole warps) fall back to the identity assignment.
#ifndef BAM_WORK_ASSIGNMENT_CUH
#define BAM_WORK_ASSIGNMENT_CUH

#include <cstdio>

namespace bam {

namespace detail {

// Whether the launch is one-dimensional with blocks of whole lane groups:
// only then do physical lanes line up with virtual lanes.
__device__ __forceinline__ bool remappable_launch(unsigned lanes) {
  return blockDim.y == 1 && blockDim.z == 1 && gridDim.y == 1 && gridDim.z == 1 && blockDim.x % lanes == 0;
}

__device__ __forceinline__ unsigned long long global_thread_id() {
  return static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ unsigned long long total_threads() {
  return static_cast<unsigned long long>(gridDim.x) * blockDim.x;
}

}  // namespace detail

// Cache-line-aware work assignment (thesis §6.2): each group of Lanes lanes
// takes one cache line (elems_per_line consecutive virtual thread ids) and
// strides through it; consecutive groups take consecutive lines, and
// groups stride over lines so any grid size covers every virtual id.
// body(v) runs for every v in [0, gridDim.x * blockDim.x).
template <unsigned Lanes = 32, class Body>
__device__ void for_each_thread_by_line(unsigned long long elems_per_line, Body&& body) {
  static_assert(Lanes == 32 || Lanes == 16 || Lanes == 8 || Lanes == 4, "for_each_thread_by_line: Lanes must be 32, 16, 8 or 4");
  const unsigned long long total = detail::total_threads();
  const unsigned long long groups = total / Lanes;
  if (!detail::remappable_launch(Lanes) || groups == 0 || elems_per_line == 0) {
    body(detail::global_thread_id());
    return;
  }
  const unsigned long long group = detail::global_thread_id() / Lanes;
  const unsigned sub = threadIdx.x % Lanes;
  for (unsigned long long line = group; line * elems_per_line < total; line += groups) {
    const unsigned long long first = line * elems_per_line;
    for (unsigned long long k = sub; k < elems_per_line && first + k < total; k += Lanes) {
      body(first + k);
    }
  }
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
  const unsigned long long warps = detail::total_threads() / 32;
  if (!detail::remappable_launch(32) || stride == 0) {
    body(detail::global_thread_id() / 32);
    return;
  }
  const unsigned long long pivot = (warps + stride - 1) / stride;
  for (unsigned long long w = detail::global_thread_id() / 32; w < pivot * stride; w += warps) {
    const unsigned long long v = w / pivot + (w % pivot) * stride;
    if (v < warps) {
      body(v);
    }
  }
}

// Cache-line-aware warp coarsening (thesis §6.3.3): each physical warp runs
// K consecutive virtual warps, so one warp walks K consecutive vertices'
// neighbour lists, which sit next to each other on storage.
template <unsigned K, class Body>
__device__ void for_each_warp_coarsened(Body&& body) {
  static_assert(K >= 1, "for_each_warp_coarsened: K must be at least 1");
  const unsigned long long warps = detail::total_threads() / 32;
  if (!detail::remappable_launch(32)) {
    body(detail::global_thread_id() / 32);
    return;
  }
  const unsigned long long groups = (warps + K - 1) / K;
  for (unsigned long long g = detail::global_thread_id() / 32; g < groups; g += warps) {
    for (unsigned j = 0; j < K; ++j) {
      const unsigned long long v = g * K + j;
      if (v < warps) {
        body(v);
      }
    }
  }
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
  return static_cast<unsigned>(detail::global_thread_id() & 31u);
}

// First edge index >= lo that a warp-strided loop `for (e = first; ...; e += step)`
// visits: ODT clamps each neighbour walk to the tile [lo, hi).
__device__ __forceinline__ unsigned long long odt_first_strided(unsigned long long first, unsigned long long lo,
                                                                unsigned long long step) {
  return first >= lo ? first : first + (lo - first + step - 1) / step * step;
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
  const unsigned long long groups = detail::total_threads() / 32;
  if (detail::total_threads() % 32 != 0 || groups == 0 || edges_per_tile == 0) {
    if (detail::global_thread_id() == 0) {
      printf("bam::odt_for_each_tile: the launch must have a multiple of 32 threads (got %llu)\n", detail::total_threads());
    }
    __trap();
  }
  const unsigned long long tiles = (n_edges + edges_per_tile - 1) / edges_per_tile;
  for (unsigned long long t = detail::global_thread_id() / 32; t < tiles; t += groups) {
    const unsigned long long lo = t * edges_per_tile;
    const unsigned long long hi = lo + edges_per_tile < n_edges ? lo + edges_per_tile : n_edges;
    for (unsigned long long v = fvl[t];; ++v) {
      if (static_cast<unsigned long long>(rowptr[v]) >= hi) {
        break;  // rowptr[n] == n_edges >= hi, so this stops at the last vertex
      }
      if (static_cast<unsigned long long>(rowptr[v + 1]) > lo) {
        body(v, lo, hi);
      }
    }
  }
}

}  // namespace bam

#endif  // BAM_WORK_ASSIGNMENT_CUH
