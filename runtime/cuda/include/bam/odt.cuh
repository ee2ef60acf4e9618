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
//
// Work items (odt_plan). A warp runs the code of its tile's vertices one
// after another (that code is warp-wide). On power-law graphs some tiles
// hold thousands of candidate vertices with tiny lists: in CC's R-MAT input
// (2 Mi vertices, degree 16) the last tiles have up to 5,600 candidates and
// 860 vertex bodies, and the warp that gets one runs for 2-3 ms after the
// storage has gone quiet, at the end of every sweep. A plan cuts each
// tile's candidates fvl[t] .. tile_last(t) into items of at most
// item_vertices consecutive candidates, and the launch runs one warp per
// item. Items partition the candidates, so every (vertex, tile) pair still
// runs exactly once; only which warp runs it changes.
#ifndef BAM_ODT_CUH
#define BAM_ODT_CUH

#include <bam/detail/config.cuh>

#if defined(__CUDACC__)
#  include <bam/detail/uvm.cuh>
#  include <bam/error.h>
#  include <cub/device/device_scan.cuh>
#  include <cuda_runtime_api.h>
#  include <climits>
#  include <string>
#endif

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
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

// The last candidate vertex of tile t (fvl[t+1] owns the first edge past
// the tile, so it may start inside it; the last tile runs to the end).
template <class V>
[[nodiscard]] BAM_HD unsigned long long tile_last(const V* fvl, size_t n_tiles, size_t t) noexcept
{
  return t + 1 < n_tiles ? (unsigned long long)fvl[t + 1] : (unsigned long long)fvl[n_tiles] - 1;
}

// Candidate vertices per work item unless the caller says otherwise: a
// few scan steps, and at most 128 vertex bodies of a few microseconds each.
constexpr unsigned long long default_item_vertices = 128;

// Work items of tile t: its candidates in chunks of item_vertices.
template <class V>
[[nodiscard]] BAM_HD unsigned long long tile_items(const V* fvl, size_t n_tiles, size_t t,
                                                   unsigned long long item_vertices) noexcept
{
  return (tile_last(fvl, n_tiles, t) - (unsigned long long)fvl[t]) / item_vertices + 1;
}

// item_tile[i] = t for the items of tile t, given first_item (the exclusive
// prefix sum of tile_items, with the total at first_item[n_tiles]).
BAM_HD inline void item_fill_step(const unsigned long long* first_item, size_t t, unsigned long long* item_tile) noexcept
{
  for (unsigned long long i = first_item[t]; i < first_item[t + 1]; ++i)
    item_tile[i] = t;
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
template <class V>
__global__ void item_count_kernel(const V* fvl, size_t n_tiles, unsigned long long item_vertices, unsigned long long* counts)
{
  for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t <= n_tiles; t += size_t(gridDim.x) * blockDim.x)
    counts[t] = t < n_tiles ? tile_items(fvl, n_tiles, t, item_vertices) : 0;
}

template <class I>
__global__ void item_fill_kernel(const I* first_item, size_t n_tiles, I* item_tile)
{
  for (size_t t = blockIdx.x * size_t(blockDim.x) + threadIdx.x; t < n_tiles; t += size_t(gridDim.x) * blockDim.x)
    item_fill_step(first_item, t, item_tile);
}

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

// What an ODT launch needs on the GPU: the first vertex list and its work
// items. Passed to the kernel by value. item_tile == nullptr means one item
// per tile, the whole tile (no tile needed splitting, or a bare list).
struct odt_plan {
  const unsigned long long* fvl = nullptr;        // n_tiles + 1 entries (odt.cuh)
  const unsigned long long* first_item = nullptr; // n_tiles + 1: first item of each tile; [n_tiles] = items
  const unsigned long long* item_tile = nullptr;  // items entries: the tile of each item
  unsigned long long tiles = 0;
  unsigned long long items = 0;
  unsigned long long item_vertices = ~0ull;       // candidates per item

  // A plan of whole tiles over a bare first vertex list.
  static BAM_HD odt_plan whole_tiles(const unsigned long long* fvl, unsigned long long tiles) noexcept
  {
    odt_plan p;
    p.fvl = fvl;
    p.tiles = tiles;
    p.items = tiles;
    return p;
  }
};

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

namespace detail {
// Offsets in managed memory (cudaMallocManaged, filled on the host) would
// otherwise reach the GPU by page faults during the build: 3.4 ms for CC's
// 16 MiB on an H100, against well under a millisecond for one bulk
// migration. A hint only: the data and its meaning do not change, and
// failures are ignored (the faults still bring the pages).
inline void prefetch_if_managed(const void* p, size_t bytes)
{
  cudaPointerAttributes a{};
  int dev = 0, concurrent = 0;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess || a.type != cudaMemoryTypeManaged || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev) != cudaSuccess || !concurrent) {
    (void)cudaGetLastError();
    return;
  }
  const cudaError_t e = mem_prefetch_to_device(p, bytes, dev);
  if (e != cudaSuccess)
    (void)cudaGetLastError();
}
} // namespace detail

namespace detail {
// The plan's work items over its (built) list: counts per tile, their
// exclusive prefix sum into plan.first_item's storage, the total, and the
// item -> tile map when some tile is split (allocated into *item_tile).
// `ok` frees and throws on a CUDA error.
template <class Ok>
void plan_items(odt_plan& plan, unsigned long long* counts, unsigned long long* first_item, void* scan_scratch,
                size_t scan_bytes, unsigned long long** item_tile, Ok ok)
{
  using ull = unsigned long long;
  const size_t entries = plan.tiles + 1;
  const unsigned threads = 256, blocks = unsigned(entries / threads + 1 < 65535 ? entries / threads + 1 : 65535);
  odt::item_count_kernel<<<blocks, threads>>>(plan.fvl, plan.tiles, plan.item_vertices, counts);
  ok(cudaGetLastError(), "counting work items");
  ok(cub::DeviceScan::ExclusiveSum(scan_scratch, scan_bytes, static_cast<const ull*>(counts), first_item, int(entries)),
     "summing work items");
  ok(cudaMemcpy(&plan.items, first_item + plan.tiles, sizeof plan.items, cudaMemcpyDeviceToHost), "reading the item count");
  if (plan.items == plan.tiles)
    return; // no tile is split: item i is tile i
  ok(cudaMalloc(reinterpret_cast<void**>(item_tile), plan.items * sizeof(ull)), "cudaMalloc");
  odt::item_fill_kernel<<<blocks, threads>>>(static_cast<const ull*>(first_item), size_t(plan.tiles), *item_tile);
  ok(cudaGetLastError(), "filling work items");
  plan.first_item = first_item;
  plan.item_tile = *item_tile;
}
} // namespace detail

// Builds the first vertex list and the work items of a CSR edge array (see
// odt_plan; item_vertices 0: one item per whole tile) in GPU memory it
// allocates, and waits for the build. d_rowptr: n_vertices + 1 offsets in
// GPU-accessible memory. Release the memory with free_odt_plan. Throws
// bam::error on bad arguments or CUDA failures.
template <class Off>
odt_plan build_odt_plan(const Off* d_rowptr, size_t n_vertices, size_t n_edges, size_t edges_per_tile,
                        unsigned long long item_vertices = odt::default_item_vertices)
{
  using ull = unsigned long long;
  if (edges_per_tile == 0)
    throw error("build_odt_plan: edges_per_tile must be > 0 (use a.elems_per_line())");
  const size_t tiles = odt::tile_count(n_edges, edges_per_tile), entries = tiles + 1;
  if (entries > size_t(INT_MAX))
    throw error("build_odt_plan: " + std::to_string(tiles) + " tiles is more than one prefix sum can take; use longer lines");
  char* block = nullptr;
  ull* item_tile = nullptr;
  auto ok = [&](cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      cudaFree(block);
      cudaFree(item_tile);
      throw error(std::string("build_odt_plan: ") + what + ": " + cudaGetErrorString(e));
    }
  };
  size_t scan_bytes = 0;
  ok(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<const ull*>(nullptr), static_cast<ull*>(nullptr),
                                   int(entries)),
     "sizing the prefix sum");
  // One allocation: the list, per-tile counts (first the winner scratch of
  // the list's build), the first item of each tile, the prefix sum's scratch.
  const size_t block_bytes = 3 * entries * sizeof(ull) + scan_bytes + 256;
  if (cudaMalloc(reinterpret_cast<void**>(&block), block_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    throw error("build_odt_plan: no GPU memory for the plan of " + std::to_string(tiles) + " tiles (" +
                std::to_string(block_bytes) + " bytes): leave that much free (a lower BAM_GPU_BUDGET keeps fewer "
                "arrays in GPU memory)");
  }
  ull* fvl = reinterpret_cast<ull*>(block);
  ull* counts = fvl + entries;
  ull* first_item = counts + entries;
  void* scan_scratch = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(first_item + entries) + 255) & ~uintptr_t(255));
  odt_plan plan = odt_plan::whole_tiles(fvl, tiles);
  if (item_vertices != 0)
    plan.item_vertices = item_vertices;
  if (tiles == 0)
    return plan;
  detail::prefetch_if_managed(d_rowptr, (n_vertices + 1) * sizeof(Off));
  try {
    build_first_vertex_list(d_rowptr, n_vertices, n_edges, edges_per_tile, fvl, 0, counts);
  } catch (...) {
    cudaFree(block);
    throw;
  }
  detail::plan_items(plan, counts, first_item, scan_scratch, scan_bytes, &item_tile, ok);
  ok(cudaStreamSynchronize(0), "building the ODT plan");
  return plan;
}

// Releases what build_odt_plan allocated.
inline void free_odt_plan(const odt_plan& p)
{
  cudaFree(const_cast<unsigned long long*>(p.item_tile));
  cudaFree(const_cast<unsigned long long*>(p.fvl));
}
#endif

BAM_NAMESPACE_END // namespace bam

#endif // BAM_ODT_CUH
