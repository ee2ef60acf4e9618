// Line traffic of a BFS through the BaM cache, on the CPU (issue 18, item 4).
//
// Builds a CSR graph (R-MAT with Graph 500's parameters, or uniform), runs
// level-synchronous BFS from a few sources, and replays the edge array's
// line accesses of every BFS against the cache's own replacement code
// (bam/detail/cache_core.cuh: begin_acquire, fill_line, note_hit, release:
// what the GPU's miss path runs, here on one CPU thread) with a cache of a
// quarter of the edge array. Reports, per line size and policy, the lines
// and bytes fetched from the backend per BFS and their ratio to the edge
// array's size; the same trace under Belady's optimal replacement (OPT,
// which knows the future) bounds what any policy can reach.
//
// The access order is the one the GPU kernels approximate: each level walks
// its frontier in vertex order (warp per vertex, or ODT's tiles in order),
// each vertex its neighbour list from first to last edge. Two access modes:
//   tile  one access per edge line per run of consecutive accesses (ODT's
//         tile view pins a tile's line once), frontier tests 32 vertices at
//         a time
//   warp  one access per 32 consecutive edges (a warp's a[i] reads)
// Hits do not touch replacement priorities (the GPU's hit paths do not),
// only fills set them.
//
//   bfs_trace [--scale S] [--degree D] [--graph rmat|uniform] [--sources K]
//             [--lines 128,256,512,4096] [--cache-frac 0.25] [--seed N] [--no-opt]
//             [--no-permute]   (R-MAT vertex ids as generated: hubs at low ids)
//             [--arrays all]   (labels and offsets in the cache too)
//             [--window W]     (W frontier vertices in flight, their 32-edge steps interleaved; edges only)
//             [--resident-warps R]  (size freq's protected budget for a GPU running R warps, as the runtime does)
//
// CSV on stdout, one row per (line size, policy, mode). No GPU needed.
#include <bam/detail/cache_core.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace bam::detail;

namespace {

struct options {
  int scale = 20;
  int degree = 16; // edge factor: undirected edges per vertex before symmetrizing
  std::string graph = "rmat";
  int sources = 4;
  std::vector<uint32_t> lines = {128, 256, 512, 1024, 4096};
  double cache_frac = 0.25;
  bool opt = true;
  bool permute = true;
  bool all_arrays = false;
  uint32_t window = 1; // frontier vertices in flight (edges only)
  uint64_t resident_warps = 0; // what the runtime sizes freq's protected budget by (the GPU's; 0: none)
  uint64_t seed = 1;
};

[[noreturn]] void usage(const char* why)
{
  std::fprintf(stderr, "bfs_trace: %s\nusage: bfs_trace [--scale S] [--degree D] [--graph rmat|uniform] [--sources K] "
                       "[--lines 128,512,4096] [--cache-frac F] [--seed N] [--no-opt] [--no-permute] [--arrays edges|all] [--window W] [--resident-warps R]\n",
               why);
  std::exit(2);
}

struct csr {
  uint32_t n = 0;
  std::vector<uint64_t> rowptr; // n + 1
  std::vector<uint32_t> col;    // edge targets (the GPU's edge array holds 8-byte entries: edge_bytes below)
};

constexpr uint64_t edge_bytes = 8;

// Graph 500 R-MAT (a=0.57, b=c=0.19), symmetrized, without self loops and
// duplicates, vertex ids permuted at random (as Graph 500 does). uniform:
// endpoints uniformly at random.
csr make_graph(const options& o)
{
  const uint32_t n = 1u << o.scale;
  const uint64_t m = uint64_t(n) * uint64_t(o.degree);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> u01(0, 1);
  std::vector<uint64_t> edges; // (src << 32) | dst, both directions
  edges.reserve(2 * m);
  for (uint64_t e = 0; e < m; ++e) {
    uint32_t a = 0, b = 0;
    if (o.graph == "uniform") {
      a = uint32_t(rng() % n);
      b = uint32_t(rng() % n);
    } else {
      for (int bit = 0; bit < o.scale; ++bit) {
        const double r = u01(rng);
        const uint32_t ia = r > 0.57 + 0.19 ? 1u : 0u;       // c or d: lower half
        const uint32_t ib = (r > 0.57 && r <= 0.57 + 0.19) || r > 0.57 + 0.19 + 0.19 ? 1u : 0u; // b or d
        a |= ia << bit;
        b |= ib << bit;
      }
    }
    if (a == b)
      continue;
    edges.push_back((uint64_t(a) << 32) | b);
    edges.push_back((uint64_t(b) << 32) | a);
  }
  if (o.graph != "uniform" && o.permute) {
    std::vector<uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (auto& e : edges)
      e = (uint64_t(perm[e >> 32]) << 32) | perm[uint32_t(e)];
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  csr g;
  g.n = n;
  g.rowptr.assign(size_t(n) + 1, 0);
  g.col.resize(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    g.rowptr[(edges[i] >> 32) + 1]++;
    g.col[i] = uint32_t(edges[i]);
  }
  for (uint32_t v = 0; v < n; ++v)
    g.rowptr[v + 1] += g.rowptr[v];
  return g;
}

// Levels of a BFS from src: frontier vertices per level, in vertex order.
std::vector<std::vector<uint32_t>> bfs_levels(const csr& g, uint32_t src)
{
  std::vector<int32_t> level(g.n, -1);
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> cur{src};
  level[src] = 0;
  while (!cur.empty()) {
    std::sort(cur.begin(), cur.end());
    out.push_back(cur);
    std::vector<uint32_t> next;
    for (uint32_t v : cur)
      for (uint64_t e = g.rowptr[v]; e < g.rowptr[v + 1]; ++e)
        if (level[g.col[e]] < 0) {
          level[g.col[e]] = int32_t(out.size());
          next.push_back(g.col[e]);
        }
    cur.swap(next);
  }
  return out;
}

// One access of the trace: array (0 edges, 1 labels, 2 offsets), whether it
// writes, and the line.
struct acc {
  uint64_t line;
  uint8_t array;
  bool write;
};

constexpr int n_arrays = 3;
constexpr uint64_t elem_bytes[n_arrays] = {8, 4, 8}; // edges, labels (int), offsets
const char* const array_names[n_arrays] = {"edges", "labels", "offsets"};

// The accesses of one BFS with lines of line_bytes, as the ported
// warp-per-vertex BFS makes them (bench/rewrites' bfs_warp): every level,
// each vertex's warp reads label[v]; a frontier vertex reads its two offsets
// and its edges 32 at a time, and each neighbour's label, writing it when
// unvisited. all_arrays = false keeps only the edge reads (the edge array
// alone in the cache). tile mode (ODT): the edge lines are pinned once per
// run of accesses (a tile view), frontier tests read labels 32 vertices at
// a time. Consecutive repeats of one line by one warp are one access.
std::vector<acc> trace_of(const csr& g, const std::vector<std::vector<uint32_t>>& levels, uint32_t line_bytes,
                          bool tile_mode, bool all_arrays)
{
  std::vector<acc> t;
  auto line_of = [&](int a, uint64_t i) { return i * elem_bytes[a] / line_bytes; };
  auto push = [&](int a, uint64_t i, bool w) {
    const uint64_t l = line_of(a, i);
    if (!t.empty() && t.back().array == a && t.back().line == l && t.back().write == w)
      return;
    t.push_back({l, uint8_t(a), w});
  };
  std::vector<int32_t> label(g.n, -1);
  for (uint32_t v : levels[0])
    label[v] = 0;
  for (size_t lv = 0; lv < levels.size(); ++lv) {
    const auto& frontier = levels[lv];
    size_t next = 0; // frontier is sorted: walk all vertices, test membership by the label
    for (uint32_t v = 0; v < g.n; ++v) {
      if (all_arrays && (!tile_mode || v % 32 == 0))
        push(1, v, false);
      if (next >= frontier.size() || frontier[next] != v)
        continue;
      ++next;
      const uint64_t lo = g.rowptr[v], hi = g.rowptr[v + 1];
      if (all_arrays) {
        push(2, v, false);
        push(2, v + 1, false);
      }
      for (uint64_t e = lo; e < hi; e += 32) {
        const uint64_t last = std::min(hi, e + 32) - 1;
        for (uint64_t l = line_of(0, e); l <= line_of(0, last); ++l)
          if (tile_mode) {
            if (t.empty() || t.back().array != 0 || t.back().line != l)
              t.push_back({l, 0, false});
          } else {
            t.push_back({l, 0, false});
          }
        if (!all_arrays)
          continue;
        for (uint64_t k = e; k <= last; ++k) {
          const uint32_t u = g.col[k];
          push(1, u, false);
          if (label[u] < 0) {
            label[u] = int32_t(lv + 1);
            push(1, u, true);
          }
        }
      }
    }
  }
  return t;
}

// The edge-array accesses of one BFS with `window` frontier vertices in
// flight at once (what thousands of resident warps do): each level's
// frontier, in vertex order, in chunks of `window` vertices whose 32-edge
// steps interleave round-robin.
std::vector<acc> trace_window(const csr& g, const std::vector<std::vector<uint32_t>>& levels, uint32_t line_bytes,
                              uint32_t window)
{
  std::vector<acc> t;
  std::vector<uint64_t> cur, end;
  for (const auto& frontier : levels)
    for (size_t c = 0; c < frontier.size(); c += window) {
      cur.clear();
      end.clear();
      for (size_t i = c; i < frontier.size() && i < c + window; ++i) {
        cur.push_back(g.rowptr[frontier[i]]);
        end.push_back(g.rowptr[frontier[i] + 1]);
      }
      for (bool any = true; any;) {
        any = false;
        for (size_t i = 0; i < cur.size(); ++i) {
          if (cur[i] >= end[i])
            continue;
          any = true;
          const uint64_t last = std::min(end[i], cur[i] + 32) - 1;
          for (uint64_t l = cur[i] * edge_bytes / line_bytes; l <= last * edge_bytes / line_bytes; ++l)
            t.push_back({l, 0, false});
          cur[i] += 32;
        }
      }
    }
  return t;
}

// The cache of cache_core.cuh in host memory, with the three arrays.
struct sim_cache {
  std::vector<uint64_t> tags;
  std::vector<uint32_t> seq, prio;
  std::vector<uint32_t> state[n_arrays];
  std::vector<uint64_t> slot_of[n_arrays];
  std::vector<uint8_t> fetches[n_arrays];
  unsigned long long clock = 0;
  uint32_t n_protected = 0;
  std::vector<stats_row> stats = std::vector<stats_row>(1);
  std::vector<array_io> io = std::vector<array_io>(n_arrays);
  error_block err{};
  array_meta meta[n_arrays]{};
  cache_ctx ctx{};

  sim_cache(uint32_t n_slots, const uint64_t* n_lines, uint32_t line_shift, replacement policy, uint64_t resident_warps)
      : tags(n_slots, slot_tag::empty), seq(n_slots, 0), prio(n_slots, 0)
  {
    for (int a = 0; a < n_arrays; ++a) {
      state[a].assign(n_lines[a], 0);
      slot_of[a].assign(n_lines[a], line_map::none);
      fetches[a].assign(n_lines[a], 0);
      array_meta& m = meta[a];
      m.state = state[a].data();
      m.slot_of = slot_of[a].data();
      m.seq = seq.data();
      m.n_lines = n_lines[a];
      m.id = uint32_t(a);
      m.live = 1;
      m.fetches = policy == replacement::freq ? fetches[a].data() : nullptr;
    }
    ctx.slots = nullptr; // the Io below moves no data
    ctx.slot_tag = tags.data();
    ctx.slot_seq = seq.data();
    ctx.clock = &clock;
    ctx.arrays = meta;
    ctx.stats = stats.data();
    ctx.err = &err;
    ctx.stall_timeout_ns = 10ull * 1000 * 1000 * 1000;
    ctx.n_slots = n_slots;
    ctx.line_shift = line_shift;
    ctx.n_stat_rows = 1;
    ctx.access = device_access::gpu_memory;
    ctx.slot_prio = policy == replacement::freq ? prio.data() : nullptr;
    ctx.n_protected = &n_protected;
    ctx.protect_budget = protect_budget_for(n_slots, resident_warps);
    ctx.io_of = io.data();
  }
};

struct null_io {
  int read(const cache_ctx&, const array_meta&, uint64_t, void*) { return 0; }
  int write(const cache_ctx&, const array_meta&, uint64_t, const void*) { return 0; }
};

// One BFS's trace through the cache. Hits leave priorities alone, as on
// the GPU (its hit paths do not call note_hit): only fills set them.
void replay(sim_cache& s, const std::vector<acc>& trace)
{
  null_io io;
  for (const acc& a : trace) {
    const array_meta& m = s.meta[a.array];
    uint32_t slot = no_slot;
    probe p = begin_acquire(m, a.line, 1, a.write, slot);
    if (p == probe::fetch)
      fill_line(s.ctx, m, a.line, a.write, io);
    else if (p == probe::wait) {
      std::fprintf(stderr, "bfs_trace: line %llu busy in a one-thread replay\n", (unsigned long long)a.line);
      std::exit(1);
    }
    release(m, a.line, 1);
  }
}

// Belady's OPT on the same trace (evict the line used furthest in the
// future; write-backs not counted): lines fetched per array.
void opt_fetches(const std::vector<acc>& trace, const uint64_t* n_lines, uint32_t n_slots, double* fetched)
{
  uint64_t base[n_arrays + 1] = {0};
  for (int a = 0; a < n_arrays; ++a)
    base[a + 1] = base[a] + n_lines[a];
  std::vector<uint64_t> next(trace.size());
  std::vector<uint64_t> last(base[n_arrays], ~0ull);
  for (size_t i = trace.size(); i-- > 0;) {
    const uint64_t k = base[trace[i].array] + trace[i].line;
    next[i] = last[k];
    last[k] = i;
  }
  std::vector<uint64_t> when(base[n_arrays], 0); // next use of a cached line + 1; 0: not cached
  std::priority_queue<std::pair<uint64_t, uint64_t>> heap; // (next use, line), lazily deleted
  uint64_t cached = 0;
  for (size_t i = 0; i < trace.size(); ++i) {
    const uint64_t k = base[trace[i].array] + trace[i].line;
    if (when[k] == 0) {
      fetched[trace[i].array] += 1;
      if (cached == n_slots) {
        for (;;) {
          auto top = heap.top();
          heap.pop();
          if (when[top.second] == top.first + 1) {
            when[top.second] = 0;
            break;
          }
        }
      } else {
        ++cached;
      }
    }
    when[k] = next[i] + 1;
    heap.push({next[i], k});
  }
}

std::vector<uint32_t> parse_lines(const char* s)
{
  std::vector<uint32_t> out;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v < 16 || v > 65536 || (v & (v - 1)) != 0)
      usage("--lines: powers of two from 16 to 65536, comma-separated");
    out.push_back(uint32_t(v));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

} // namespace

int main(int argc, char** argv)
{
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc)
        usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--scale")
      o.scale = std::atoi(val());
    else if (a == "--degree")
      o.degree = std::atoi(val());
    else if (a == "--graph")
      o.graph = val();
    else if (a == "--sources")
      o.sources = std::atoi(val());
    else if (a == "--lines")
      o.lines = parse_lines(val());
    else if (a == "--cache-frac")
      o.cache_frac = std::atof(val());
    else if (a == "--seed")
      o.seed = std::strtoull(val(), nullptr, 10);
    else if (a == "--no-opt")
      o.opt = false;
    else if (a == "--no-permute")
      o.permute = false;
    else if (a == "--resident-warps")
      o.resident_warps = std::strtoull(val(), nullptr, 10);
    else if (a == "--window")
      o.window = uint32_t(std::max(1, std::atoi(val())));
    else if (a == "--arrays") {
      const std::string v = val();
      if (v != "edges" && v != "all")
        usage("--arrays: edges or all");
      o.all_arrays = v == "all";
    }
    else
      usage(("unknown argument " + a).c_str());
  }
  if (o.window > 1 && o.all_arrays)
    usage("--window models the edge array only");
  if (o.scale < 8 || o.scale > 26 || o.degree < 1 || o.sources < 1 || !(o.cache_frac > 0 && o.cache_frac <= 1) ||
      (o.graph != "rmat" && o.graph != "uniform"))
    usage("bad option value");

  const auto t0 = std::chrono::steady_clock::now();
  const csr g = make_graph(o);
  const uint64_t n_edges = g.col.size(), array_bytes = n_edges * edge_bytes;
  std::mt19937_64 rng(o.seed + 7);
  std::vector<std::vector<std::vector<uint32_t>>> runs;
  while (int(runs.size()) < o.sources) { // sources with edges whose BFS reaches most of the graph
    const uint32_t s = uint32_t(rng() % g.n);
    if (g.rowptr[s + 1] == g.rowptr[s])
      continue;
    runs.push_back(bfs_levels(g, s));
  }
  std::fprintf(stderr, "bfs_trace: %s scale %d degree %d: %u vertices, %llu edges (%.1f MiB of 8-byte edges), %d BFS, "
                       "graph built in %.1f s\n",
               o.graph.c_str(), o.scale, o.degree, g.n, (unsigned long long)n_edges, double(array_bytes) / (1 << 20),
               o.sources, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  std::printf("graph,permuted,scale,degree,edges,edge_array_bytes,arrays,line_bytes,cache_bytes,mode,policy,levels,"
              "edge_lines_per_bfs,edge_bytes_per_bfs,edge_ratio,edge_ratio_no_reuse,all_lines_per_bfs,all_bytes_per_bfs,"
              "all_ratio,hand_steps_per_fetch\n");
  for (uint32_t lb : o.lines) {
    uint32_t shift = 0;
    while ((1u << shift) < lb)
      ++shift;
    const uint64_t n_lines[n_arrays] = {(array_bytes + lb - 1) / lb, (uint64_t(g.n) * 4 + lb - 1) / lb,
                                        ((uint64_t(g.n) + 1) * 8 + lb - 1) / lb};
    const uint32_t n_slots = uint32_t(std::max<double>(1, double(array_bytes) * o.cache_frac / lb));
    for (const char* mode : {"warp"}) { // the ODT order ("tile": tiles in order) fetches the same edge lines
      const bool tile = std::strcmp(mode, "tile") == 0;
      std::vector<std::vector<acc>> traces;
      double levels = 0, no_reuse = 0;
      for (const auto& lv : runs) {
        traces.push_back(o.window > 1 ? trace_window(g, lv, lb, o.window) : trace_of(g, lv, lb, tile, o.all_arrays));
        levels += double(lv.size());
        // Edge lines needed per level, summed: none kept from one level to the next.
        std::vector<uint32_t> seen_level(n_lines[0], ~0u);
        uint32_t lvl = 0;
        for (const auto& frontier : lv) {
          for (uint32_t v : frontier) {
            const uint64_t lo = g.rowptr[v], hi = g.rowptr[v + 1];
            for (uint64_t l = lo * edge_bytes / lb; hi > lo && l <= (hi - 1) * edge_bytes / lb; ++l)
              if (seen_level[l] != lvl) {
                seen_level[l] = lvl;
                no_reuse += 1;
              }
          }
          ++lvl;
        }
      }
      const double k = double(runs.size());
      struct row {
        std::string name;
        double lines[n_arrays];
        double hand_steps; // clock hand steps per line fetched (the miss path's replacement work)
      };
      std::vector<row> rows;
      for (replacement pol : {replacement::fifo, replacement::freq}) {
        sim_cache s(n_slots, n_lines, shift, pol, o.resident_warps); // one cache across the BFS runs, as in one program
        for (const auto& t : traces)
          replay(s, t);
        row r{replacement_name(pol), {}, 0};
        double fetched = 0;
        for (int a = 0; a < n_arrays; ++a) {
          r.lines[a] = double(s.io[a].reads) / k;
          fetched += double(s.io[a].reads);
        }
        r.hand_steps = fetched > 0 ? double(s.clock) / fetched : 0;
        rows.push_back(r);
      }
      if (o.opt) {
        row r{"opt", {}, 0};
        for (const auto& t : traces)
          opt_fetches(t, n_lines, n_slots, r.lines); // each BFS from a cold cache: a lower bound per BFS
        for (double& x : r.lines)
          x /= k;
        rows.push_back(r);
      }
      for (const row& r : rows) {
        const double all = r.lines[0] + r.lines[1] + r.lines[2];
        std::printf("%s,%d,%d,%d,%llu,%llu,%s,%u,%llu,%s,%s,%.1f,%.0f,%.0f,%.3f,%.3f,%.0f,%.0f,%.3f,%.2f\n", o.graph.c_str(),
                    int(o.permute && o.graph != "uniform"), o.scale, o.degree, (unsigned long long)n_edges,
                    (unsigned long long)array_bytes, o.all_arrays ? "all" : "edges", lb,
                    (unsigned long long)(uint64_t(n_slots) * lb), mode, r.name.c_str(), levels / k, r.lines[0],
                    r.lines[0] * lb, r.lines[0] * lb / double(array_bytes), no_reuse / k * lb / double(array_bytes),
                    all, all * lb, all * lb / double(array_bytes), r.hand_steps);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
