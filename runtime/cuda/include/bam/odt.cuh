// firstVertexList construction for On-demand Implicit Tiling (thesis §6.3.5).
//
// For a CSR graph (rowptr of n_vertices+1 offsets into an edge list of
// n_edges), tile t holds edges [t*E, (t+1)*E), E = edges_per_tile, and
// fvl[t] is the vertex that owns edge t*E (rowptr[v] <= t*E < rowptr[v+1]).
//
// Pass 1 (winner list): every vertex with at least one edge atomicMin's its
// id into winner[tile of its first edge]; winner[t] is then the smallest
// vertex whose neighbour list starts inside tile t, or "none".
// Pass 2 (fill), one thread per tile with a winner w (plus one past the last
// tile): if w starts exactly at the tile boundary it owns the tile's first
// edge; otherwise the owner is the vertex owning the edge just before w's
// first edge (a binary search over rowptr, which also steps over vertices
// with no edges, where the thesis uses w-1). The same owner covers every
// preceding tile without a winner (the middle of a long neighbour list),
// which the thread fills backwards ("backtracking").
//
// The list has one more entry, fvl[n_tiles] = n_vertices, so a warp can
// bound the vertices of its tile (fvl[t] .. fvl[t+1]) without knowing the
// vertex count, and test 32 of them at once.
//
// The two steps are BAM_HD functions so a CPU test can run them and compare
// with a brute-force owner search.
#ifndef BAM_ODT_CUH
#define BAM_ODT_CUH

#include <bam/detail/config.cuh>

#if defined(__CUDACC__)
#  include <bam/error.h>
#  include <cuda_runtime_api.h>
#  include <string>
#endif

namespace bam {
namespace odt {

constexpr unsigned long long no_winner = ~0ull;

[[nodiscard]] BAM_HD constexpr size_t tile_count(size_t n_edges, size_t edges_per_tile) noexcept
{
  return (n_edges + edges_per_tile - 1) / edges_per_tile;
}

// Entries of a first vertex list: one per tile plus the n_vertices sentinel.
[[nodiscard]] BAM_HD constexpr size_t fvl_entries(size_t n_edges, size_t edges_per_tile) noexcept
{
  return tile_count(n_edges, edges_per_tile) + 1;
}

// The vertex owning edge e: the last v with rowptr[v] <= e.
template <class Off>
[[nodiscard]] BAM_HD size_t owner_of(const Off* rowptr, size_t n_vertices, size_t e) noexcept
{
  size_t lo = 0, hi = n_vertices; // answer in [lo, hi)
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (size_t(rowptr[mid]) <= e)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// Pass 1 for vertex v. `min_fn(ptr, v)` is the atomic minimum to use.
template <class Off, class MinFn>
BAM_HD void winner_step(const Off* rowptr, size_t v, size_t edges_per_tile, unsigned long long* winner, MinFn min_fn)
{
  const size_t s = size_t(rowptr[v]);
  if (size_t(rowptr[v + 1]) > s)
    min_fn(&winner[s / edges_per_tile], (unsigned long long)v);
}

// Pass 2 for tile t in [0, n_tiles] (t == n_tiles backtracks the tail).
template <class Off, class V>
BAM_HD void fill_step(const Off* rowptr, size_t n_vertices, size_t n_edges, size_t edges_per_tile,
                      const unsigned long long* winner, size_t t, V* fvl)
{
  const size_t n_tiles = tile_count(n_edges, edges_per_tile);
  if (t == n_tiles) {
    fvl[t] = V(n_vertices); // the sentinel
    if (n_edges == 0)
      return;
  }
  if (t < n_tiles && winner[t] == no_winner)
    return;
  const size_t start = t < n_tiles ? size_t(rowptr[winner[t]]) : n_edges;
  if (start == 0) { // tile 0, first vertex starts at edge 0
    fvl[t] = V(winner[t]);
    return;
  }
  const size_t before = owner_of(rowptr, n_vertices, start - 1); // owns the edge before `start`
  if (t < n_tiles)
    fvl[t] = start == t * edges_per_tile ? V(winner[t]) : V(before);
  for (size_t u = t; u-- > 0 && winner[u] == no_winner;)
    fvl[u] = V(before);
}

#if defined(__CUDACC__)
template <class Off>
__global__ void winner_kernel(const Off* rowptr, size_t n_vertices, size_t edges_per_tile, unsigned long long* winner)
{
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < n_vertices; v += size_t(gridDim.x) * blockDim.x)
    winner_step(rowptr, v, edges_per_tile, winner, [](unsigned long long* p, unsigned long long x) { atomicMin(p, x); });
}

template <class Off, class V>
__global__ void fill_kernel(const Off* rowptr, size_t n_vertices, size_t n_edges, size_t edges_per_tile,
                            const unsigned long long* winner, V* fvl)
{
  const size_t n = tile_count(n_edges, edges_per_tile) + 1;
  for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t < n; t += size_t(gridDim.x) * blockDim.x)
    fill_step(rowptr, n_vertices, n_edges, edges_per_tile, winner, t, fvl);
}
#endif

} // namespace odt

#if defined(__CUDACC__)
// fvl must hold fvl_entries(n_edges, edges_per_tile) entries. `scratch`,
// if given, is GPU memory for tile_count(n_edges, edges_per_tile) winners;
// otherwise the call allocates it stream-ordered (the first such allocation
// of a process creates the memory pool: about 10 ms on an H100, which is
// why the runtime's own cache of lists passes scratch). Asynchronous on
// `s`; throws bam::error on bad arguments or CUDA failures.
template <class Off, class V>
void build_first_vertex_list(const Off* d_rowptr, size_t n_vertices, size_t n_edges, size_t edges_per_tile, V* d_fvl,
                             cudaStream_t s = 0, unsigned long long* scratch = nullptr)
{
  if (edges_per_tile == 0)
    throw error("build_first_vertex_list: edges_per_tile must be > 0 (use a.elems_per_line())");
  if (n_edges == 0 || n_vertices == 0)
    return;
  const size_t n_tiles = odt::tile_count(n_edges, edges_per_tile);
  unsigned long long* winner = nullptr;
  auto ok = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess)
      throw error(std::string("build_first_vertex_list: ") + what + ": " + cudaGetErrorString(e));
  };
  if (scratch != nullptr)
    winner = scratch;
  else
    ok(cudaMallocAsync(reinterpret_cast<void**>(&winner), n_tiles * sizeof(unsigned long long), s), "cudaMallocAsync");
  ok(cudaMemsetAsync(winner, 0xff, n_tiles * sizeof(unsigned long long), s), "cudaMemsetAsync");
  const unsigned threads = 256;
  auto blocks = [&](size_t n) { return unsigned((n + threads - 1) / threads < 65535 ? (n + threads - 1) / threads : 65535); };
  odt::winner_kernel<<<blocks(n_vertices), threads, 0, s>>>(d_rowptr, n_vertices, edges_per_tile, winner);
  odt::fill_kernel<<<blocks(n_tiles + 1), threads, 0, s>>>(d_rowptr, n_vertices, n_edges, edges_per_tile, winner, d_fvl);
  ok(cudaGetLastError(), "kernel launch");
  if (scratch == nullptr)
    ok(cudaFreeAsync(winner, s), "cudaFreeAsync");
}
#endif

} // namespace bam

#endif // BAM_ODT_CUH
