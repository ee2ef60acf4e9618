// CPU proof of the work-assignment drivers behind bamgen's rewrites: the
// same driver code the GPU runs is played here for every thread of many
// launch shapes, and every virtual id (claware, transpose, coarsen) and
// every edge (odt, with first vertex lists from odt.cuh's reference passes)
// must be visited exactly once, by the right vertex. Prints "N passed, N failed".
#include <bam/odt.cuh>
#include <bam/work_assignment.cuh>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using bam::detail::launch_1d;
using ull = unsigned long long;

static int passed = 0, failed = 0;

static void expect_once(const std::string& what, const std::vector<unsigned>& count) {
  size_t bad = 0;
  for (unsigned c : count) bad += c != 1;
  if (bad) {
    failed++;
    printf("FAIL %s: %zu of %zu ids not visited exactly once\n", what.c_str(), bad, count.size());
  } else {
    passed++;
  }
}

// Runs per_thread(launch) for every thread of <<<grid, block>>> (block.y = ydim).
template <class F>
static void play(unsigned grid, unsigned block, bool one_dim, F per_thread) {
  const ull total = ull(grid) * block;
  for (ull t = 0; t < total; ++t) per_thread(launch_1d{t, total, block, one_dim});
}

static void thread_drivers() {
  for (unsigned grid : {1u, 3u, 57u, 300u})
    for (unsigned block : {32u, 96u, 256u, 100u, 1024u}) {
      const ull total = ull(grid) * block, warps = total / 32;
      std::string shape = "<<<" + std::to_string(grid) + "," + std::to_string(block) + ">>>";
      for (ull epl : {8ull, 128ull, 1024ull, 4096ull}) {
        std::vector<unsigned> c32(total), c8(total);
        play(grid, block, true, [&](launch_1d l) { bam::detail::thread_by_line<32>(l, epl, [&](ull v) { c32.at(v)++; }); });
        play(grid, block, true, [&](launch_1d l) { bam::detail::thread_by_line<8>(l, epl, [&](ull v) { c8.at(v)++; }); });
        expect_once("claware/32 " + shape + " epl " + std::to_string(epl), c32);
        expect_once("claware/8 " + shape + " epl " + std::to_string(epl), c8);
      }
      for (ull count : {0ull, 1ull, 1000ull, 4097ull, 3 * total + 5}) {  // grid-stride loops over [0, count)
        for (ull epl : {8ull, 16ull, 128ull, 1000ull}) {
          std::vector<unsigned> i32(count), i16(count), i2d(count);
          auto loop = [&](std::vector<unsigned>& c, auto first, auto next) {
            return [&, first, next](launch_1d l) {
              for (ull i = first(l); i < count; i = next(l, i)) c.at(i)++;
            };
          };
          play(grid, block, true, loop(i32, [&](launch_1d l) { return bam::detail::by_line_first<32>(l, epl); },
                                       [&](launch_1d l, ull i) { return bam::detail::by_line_next<32>(l, i, epl); }));
          play(grid, block, true, loop(i16, [&](launch_1d l) { return bam::detail::by_line_first<16>(l, epl); },
                                       [&](launch_1d l, ull i) { return bam::detail::by_line_next<16>(l, i, epl); }));
          play(grid, block, false, loop(i2d, [&](launch_1d l) { return bam::detail::by_line_first<32>(l, epl); },
                                        [&](launch_1d l, ull i) { return bam::detail::by_line_next<32>(l, i, epl); }));
          const std::string what = " " + shape + " count " + std::to_string(count) + " epl " + std::to_string(epl);
          expect_once("claware loop/32" + what, i32);
          expect_once("claware loop/16" + what, i16);
          expect_once("claware loop 2-D fallback" + what, i2d);
        }
      }
      std::vector<unsigned> c2d(total);  // 2-D launches fall back to the identity
      play(grid, block, false, [&](launch_1d l) { bam::detail::thread_by_line<32>(l, 1024, [&](ull v) { c2d.at(v)++; }); });
      expect_once("claware 2-D fallback " + shape, c2d);
      if (block % 32 != 0) continue;
      for (ull stride : {1ull, 4ull, 128ull, 512ull, 100000ull}) {
        std::vector<unsigned> c(warps);
        play(grid, block, true, [&](launch_1d l) {
          bam::detail::warp_transposed(l, stride, [&](ull w) { if (l.gtid % 32 == 0) c.at(w)++; });
        });
        expect_once("transpose=" + std::to_string(stride) + " " + shape, c);
      }
      std::vector<unsigned> k8(warps), k3(warps);
      play(grid, block, true, [&](launch_1d l) { bam::detail::warp_coarsened<8>(l, [&](ull w) { if (l.gtid % 32 == 0) k8.at(w)++; }); });
      play(grid, block, true, [&](launch_1d l) { bam::detail::warp_coarsened<3>(l, [&](ull w) { if (l.gtid % 32 == 0) k3.at(w)++; }); });
      expect_once("coarsen=8 " + shape, k8);
      expect_once("coarsen=3 " + shape, k3);
    }
}

// A power-law-ish CSR: empty lists, short lists, one giant vertex, n not a multiple of 32.
static std::vector<ull> make_rowptr(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<ull> rp(n + 1, 0);
  for (size_t v = 0; v < n; ++v) {
    unsigned r = rng() % 100;
    ull deg = r < 20 ? 0 : r < 90 ? rng() % 8 : rng() % 300;
    if (v == n / 3) deg = 20000;
    rp[v + 1] = rp[v] + deg;
  }
  return rp;
}

// The first vertex list from odt.cuh's two passes, run on the CPU.
static std::vector<ull> first_vertex_list(const std::vector<ull>& rp, size_t n, ull tile) {
  const ull m = rp[n], tiles = bam::odt::tile_count(m, tile);
  std::vector<ull> winner(tiles, bam::odt::no_winner), fvl(tiles + 1, 0);
  for (size_t v = 0; v < n; ++v)
    bam::odt::winner_step(rp.data(), v, tile, winner.data(), [](ull* p, ull x) { if (x < *p) *p = x; });
  for (size_t t = 0; t <= tiles; ++t) bam::odt::fill_step(rp.data(), n, m, tile, winner.data(), t, fvl.data());
  return fvl;
}

static void odt_driver() {
  for (size_t n : {1ul, 33ul, 1000ul, 20011ul})
    for (ull tile : {1ull, 32ull, 1024ull, 4096ull}) {
      auto rp = make_rowptr(n, unsigned(n * 7 + tile));
      const ull m = rp[n];
      if (m == 0) continue;
      auto fvl = first_vertex_list(rp, n, tile);
      for (unsigned grid : {1u, 7u, 40u}) {
        std::vector<unsigned> count(m);
        std::vector<ull> owner(m);
        bool ok = true;
        play(grid, 128, true, [&](launch_1d l) {
          ok &= bam::detail::odt_tiles(l, fvl.data(), rp, m, tile, [&](ull v, ull lo, ull hi) {
            const ull s = rp[v], e = rp[v + 1];
            // The warp-per-vertex walk as bamgen rewrites it (aligned start, lanes stride by 32).
            for (ull i = bam::odt_first_strided((s & ~31ull) + (l.gtid & 31), lo, 32); i < e && i < hi; i += 32)
              if (i >= s) count[i]++, owner[i] = v;
          });
        });
        std::string what = "odt n=" + std::to_string(n) + " m=" + std::to_string(m) + " tile=" + std::to_string(tile) +
                           " grid=" + std::to_string(grid);
        expect_once(what, count);
        size_t wrong = 0;
        for (size_t v = 0; v < n; ++v)
          for (ull i = rp[v]; i < rp[v + 1]; ++i) wrong += owner[i] != v;
        if (!ok || wrong) {
          failed++;
          printf("FAIL %s: launch refused=%d, %zu edges walked for the wrong vertex\n", what.c_str(), !ok, wrong);
        }
      }
    }
}

// The tile-view hooks (bam::odt_tile): every body call of a tile runs
// between enter(t) and leave(), with the walk inside tile t, and every
// tile is entered exactly once per warp-sized group.
struct recording_view {
  long long tile = -1;
  std::vector<unsigned>* entered;
  void enter(ull t) {
    tile = static_cast<long long>(t);
    (*entered)[t]++;
  }
  void leave() { tile = -1; }
};

static void odt_tile_hooks() {
  const size_t n = 20011;
  const ull tile = 1024;
  auto rp = make_rowptr(n, 99);
  const ull m = rp[n];
  auto fvl = first_vertex_list(rp, n, tile);
  const ull tiles = bam::odt::tile_count(m, tile);
  std::vector<unsigned> entered(tiles);
  size_t outside = 0;
  play(40, 128, true, [&](launch_1d l) {
    recording_view view{-1, &entered};
    bam::detail::odt_tiles(l, fvl.data(), rp, m, tile, [&](ull, ull lo, ull) {
      outside += view.tile < 0 || ull(view.tile) != lo / tile;
    }, view);
    outside += view.tile != -1;  // left after the last tile
  });
  // Each of a warp's 32 threads plays the hooks, so a tile is entered 32 times.
  size_t wrong = 0;
  for (unsigned c : entered) wrong += c != 32;
  if (outside || wrong) {
    failed++;
    printf("FAIL odt tile hooks: %zu body calls outside their tile, %zu tiles not entered once per warp\n", outside, wrong);
  } else {
    passed++;
  }
}

int main() {
  thread_drivers();
  odt_driver();
  odt_tile_hooks();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
