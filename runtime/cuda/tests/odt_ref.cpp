// CPU reference test of the firstVertexList construction (bam/odt.cuh):
// the two passes run on the host (pass 1 from several threads with a real
// atomic minimum) and are compared with a brute-force owner search, on
// graphs with empty vertices, hub vertices spanning many tiles, and tiles
// that start exactly on a neighbour-list boundary.
#include <bam/odt.cuh>

#include <atomic>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void atomic_min(unsigned long long* p, unsigned long long v)
{
  auto* a = reinterpret_cast<std::atomic<unsigned long long>*>(p);
  unsigned long long cur = a->load();
  while (v < cur && !a->compare_exchange_weak(cur, v)) {
  }
}

std::vector<uint32_t> build(const std::vector<uint64_t>& rowptr, size_t ept)
{
  const size_t nv = rowptr.size() - 1, ne = rowptr.back();
  const size_t nt = bam::odt::tile_count(ne, ept);
  std::vector<unsigned long long> winner(nt, bam::odt::no_winner);
  std::vector<std::thread> pool;
  const unsigned threads = 4;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t v = t; v < nv; v += threads)
        bam::odt::winner_step(rowptr.data(), v, ept, winner.data(), atomic_min);
    });
  for (auto& th : pool)
    th.join();
  std::vector<uint32_t> fvl(nt + 1, 0xdeadbeef);
  for (size_t t = 0; t <= nt; ++t)
    bam::odt::fill_step(rowptr.data(), nv, ne, ept, winner.data(), t, fvl.data());
  return fvl;
}

void check(const char* name, const std::vector<uint64_t>& rowptr, size_t ept)
{
  const size_t ne = rowptr.back();
  std::vector<uint32_t> fvl = build(rowptr, ept);
  const size_t nt = fvl.size() - 1;
  if (fvl[nt] != rowptr.size() - 1) {
    std::fprintf(stderr, "FAIL %s: sentinel fvl[%zu] = %u, want the vertex count %zu\n", name, nt, fvl[nt], rowptr.size() - 1);
    ++failures;
    return;
  }
  for (size_t t = 0; t < nt; ++t) {
    const size_t e = t * ept;
    size_t owner = 0;
    while (!(rowptr[owner] <= e && e < rowptr[owner + 1]))
      ++owner;
    if (fvl[t] != owner) {
      std::fprintf(stderr, "FAIL %s: tile %zu (edge %zu of %zu): fvl %u, owner %zu\n", name, t, e, ne, fvl[t], owner);
      ++failures;
      return;
    }
  }
  std::printf("ok   %-34s %zu vertices, %zu edges, %zu tiles\n", name, rowptr.size() - 1, ne, nt);
}

std::vector<uint64_t> from_degrees(const std::vector<uint64_t>& deg)
{
  std::vector<uint64_t> r(deg.size() + 1, 0);
  for (size_t i = 0; i < deg.size(); ++i)
    r[i + 1] = r[i] + deg[i];
  return r;
}

} // namespace

int main()
{
  check("uniform degree 4, tile 8", from_degrees(std::vector<uint64_t>(100, 4)), 8);
  check("degree = tile (all aligned)", from_degrees(std::vector<uint64_t>(50, 16)), 16);
  check("one hub spanning 40 tiles", from_degrees({3, 1, 400, 2, 0, 0, 5, 7}), 10);
  check("empty vertices everywhere", from_degrees({0, 0, 3, 0, 0, 9, 0, 1, 0, 0, 0, 20, 0}), 4);
  check("hub at the end", from_degrees({1, 1, 1, 1000}), 64);
  check("single vertex", from_degrees({77}), 8);
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<uint64_t> deg(1 + rng() % 3000);
    for (auto& d : deg) {
      const unsigned r = unsigned(rng() % 100);
      d = r < 20 ? 0 : r < 95 ? rng() % 16 : rng() % 2000; // empties, small, hubs
    }
    if (from_degrees(deg).back() == 0)
      deg[0] = 1;
    const size_t ept = size_t(1) << (rng() % 10);
    check("random power-law-ish graph", from_degrees(deg), ept);
  }
  if (failures == 0)
    std::printf("odt_ref: all passed\n");
  return failures != 0;
}
