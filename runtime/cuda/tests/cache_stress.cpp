// CPU stress test of the cache state machine (bam/detail/cache_core.cuh).
//
// The same acquire / release / evict / flush code the GPU runs, driven by
// std::threads over host memory, with small caches so that evictions race
// with lookups all the time. Checked:
//   * reference counts never underflow (asserts in line_word) and never look
//     absurd (an underflow would show as ~2^29);
//   * one fetcher per line: read/write-back of a line never overlap;
//   * no slot holds two lines: while a line is pinned its slot's tag names
//     it and the slot's data carries the line's stamp; at the end every
//     valid line has its own slot;
//   * no lost writes: every increment made under a pin is in the backing
//     store after the final flush.
//
// Build: g++ -std=c++17 -O2 -pthread -Iinclude tests/cache_stress.cpp
#include <bam/detail/cache_core.cuh>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace bam::detail;

int failures = 0;

#define CHECK(cond, ...)                                                                                     \
  do {                                                                                                       \
    if (!(cond)) {                                                                                           \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                          \
      std::fprintf(stderr, __VA_ARGS__);                                                                     \
      std::fprintf(stderr, "\n");                                                                            \
      std::abort();                                                                                          \
    }                                                                                                        \
  } while (0)

constexpr uint32_t line_shift = 6; // 64-byte lines: 8 words, word 0 = stamp
constexpr uint32_t words = (1u << line_shift) / 8;

uint64_t stamp(uint32_t id, uint64_t line) { return 0x5a5a000000000000ull | (uint64_t(id) << 32) | line; }

// A cache and its arrays in host memory.
struct fixture {
  uint32_t n_arrays, n_lines, n_slots;
  std::vector<unsigned char> slots;
  std::vector<uint64_t> tags;
  unsigned long long clock = 0;
  std::vector<array_meta> arrays;
  std::vector<std::vector<uint32_t>> state;
  std::vector<std::vector<uint64_t>> slot_of;
  std::vector<uint32_t> seq;
  std::vector<std::vector<uint64_t>> backing;           // n_lines * words per array
  std::vector<std::unique_ptr<std::atomic<int>[]>> io_owner; // per line: who is doing I/O on it
  std::vector<std::unique_ptr<std::atomic<uint64_t>[]>> expected; // increments per word
  std::vector<stats_row> stats = std::vector<stats_row>(1);
  error_block err{};
  cache_ctx ctx{};
  // replacement::freq: slot priorities, the protected count, per-line fetch
  // counts; per-array I/O counters; and, checked against them, the reads
  // each line really got (written under the line's exclusive I/O).
  bool freq;
  std::vector<uint32_t> prio;
  uint32_t n_protected = 0;
  std::vector<std::vector<uint8_t>> fetches;
  std::vector<array_io> io_counts;
  std::vector<std::vector<uint64_t>> line_reads;

  fixture(uint32_t arrays_, uint32_t lines, uint32_t slots_, bool freq_ = false)
      : n_arrays(arrays_), n_lines(lines), n_slots(slots_), slots(size_t(slots_) << line_shift),
        tags(slots_, slot_tag::empty), seq(slots_, 0u), freq(freq_), prio(slots_, 0u), io_counts(arrays_)
  {
    for (uint32_t a = 0; a < n_arrays; ++a) {
      state.emplace_back(n_lines, 0u);
      slot_of.emplace_back(n_lines, line_map::none);
      backing.emplace_back(size_t(n_lines) * words, 0);
      io_owner.emplace_back(new std::atomic<int>[n_lines]());
      expected.emplace_back(new std::atomic<uint64_t>[size_t(n_lines) * words]());
      for (uint64_t l = 0; l < n_lines; ++l)
        backing[a][l * words] = stamp(a, l);
      fetches.emplace_back(n_lines, uint8_t(0));
      line_reads.emplace_back(n_lines, 0);
    }
    for (uint32_t a = 0; a < n_arrays; ++a) {
      array_meta m{};
      m.state = state[a].data();
      m.slot_of = slot_of[a].data();
      m.seq = seq.data();
      m.n_lines = n_lines;
      m.id = a;
      m.live = 1;
      m.fetches = freq ? fetches[a].data() : nullptr;
      arrays.push_back(m);
    }
    ctx.slots = slots.data();
    ctx.slot_tag = tags.data();
    ctx.slot_seq = seq.data();
    ctx.clock = &clock;
    ctx.arrays = arrays.data();
    ctx.stats = stats.data();
    ctx.err = &err;
    ctx.stall_timeout_ns = 20ull * 1000 * 1000 * 1000;
    ctx.n_slots = n_slots;
    ctx.line_shift = line_shift;
    ctx.n_stat_rows = 1;
    ctx.access = device_access::gpu_memory;
    ctx.io_of = io_counts.data();
    if (freq) {
      ctx.slot_prio = prio.data();
      ctx.n_protected = &n_protected;
      ctx.protect_budget = protect_budget_for(n_slots, 0);
    }
  }
};

// The Io the cache calls; asserts that a line's I/O is never concurrent.
struct checking_io {
  fixture* f;

  void enter(uint32_t id, uint64_t line)
  {
    int was = f->io_owner[id][line].exchange(1);
    CHECK(was == 0, "two threads doing I/O on array %u line %llu at once", id, (unsigned long long)line);
  }
  void leave(uint32_t id, uint64_t line) { f->io_owner[id][line].store(0); }

  int read(const cache_ctx&, const array_meta& m, uint64_t line, void* dst)
  {
    enter(m.id, line);
    std::memcpy(dst, &f->backing[m.id][line * words], size_t(1) << line_shift);
    f->line_reads[m.id][line]++;
    leave(m.id, line);
    return 0;
  }
  int write(const cache_ctx&, const array_meta& m, uint64_t line, const void* src)
  {
    enter(m.id, line);
    std::memcpy(&f->backing[m.id][line * words], src, size_t(1) << line_shift);
    leave(m.id, line);
    return 0;
  }
};

uint64_t* slot_words(fixture& f, uint32_t s) { return reinterpret_cast<uint64_t*>(f.ctx.slot_data(s)); }

// While pinned, the slot must hold exactly this line.
void check_pinned(fixture& f, uint32_t id, uint64_t line, uint32_t s)
{
  CHECK(s < f.n_slots, "acquire returned slot %u", s);
  uint64_t tag = atomic_load(&f.tags[s], order::acquire);
  // `locked` is legitimate: an allocator may hold the tag for a moment
  // before finding the line pinned and putting the tag back.
  CHECK(tag == slot_tag::make(id, line) || tag == slot_tag::locked, "slot %u tagged %llx while pinned for array %u line %llu", s,
        (unsigned long long)tag, id, (unsigned long long)line);
  uint64_t st = atomic_load(&slot_words(f, s)[0], order::relaxed);
  CHECK(st == stamp(id, line), "slot %u holds stamp %llx, want array %u line %llu", s, (unsigned long long)st, id,
        (unsigned long long)line);
  uint32_t w = atomic_load(&f.state[id][line], order::relaxed);
  CHECK(line_word::is_valid(w) && line_word::refs(w) >= 1 && line_word::refs(w) < 4096,
        "pinned line word %08x is not valid with a sane refcount", w);
}

struct worker_opts {
  uint64_t ops;
  bool nested;      // sometimes hold two pins at once
  bool flusher;     // this thread also flushes random slots
};

void worker(fixture& f, unsigned seed, worker_opts o)
{
  std::mt19937_64 rng(seed);
  checking_io io{&f};
  for (uint64_t i = 0; i < o.ops; ++i) {
    const uint32_t id = uint32_t(rng() % f.n_arrays);
    const uint64_t line = rng() % f.n_lines;
    const unsigned op = unsigned(rng() % 16);
    const array_meta& m = f.arrays[id];
    if (o.flusher && op == 0) {
      flush_slot(f.ctx, uint32_t(rng() % f.n_slots), io);
      continue;
    }
    const bool write = op < 8;
    const uint32_t n = 1 + uint32_t(rng() % 3); // like a warp group pinning for several lanes
    uint32_t s = acquire(f.ctx, m, line, n, write, io);
    check_pinned(f, id, line, s);
    if (write) {
      const uint32_t w = 1 + uint32_t(rng() % (words - 1));
      atomic_fetch_add(&slot_words(f, s)[w], uint64_t(1), order::relaxed);
      f.expected[id][line * words + w].fetch_add(1, std::memory_order_relaxed);
    }
    if (o.nested && op == 15) { // a second line while holding the first
      const uint64_t line2 = rng() % f.n_lines;
      if (line2 != line) {
        uint32_t s2 = acquire(f.ctx, m, line2, 1, false, io);
        check_pinned(f, id, line2, s2);
        release(m, line2, 1);
      }
    }
    check_pinned(f, id, line, s);
    release(m, line, n);
  }
}

// Quiescent checks, then flush everything and compare with the expected counts.
void verify(fixture& f)
{
  checking_io io{&f};
  std::vector<int> slot_users(f.n_slots, 0);
  for (uint32_t a = 0; a < f.n_arrays; ++a)
    for (uint64_t l = 0; l < f.n_lines; ++l) {
      uint32_t w = f.state[a][l];
      CHECK(line_word::refs(w) == 0, "array %u line %llu still has %u references", a, (unsigned long long)l,
            line_word::refs(w));
      CHECK(!line_word::is_busy(w), "array %u line %llu left busy", a, (unsigned long long)l);
      if (line_word::is_valid(w)) {
        uint32_t s = line_map::slot(f.slot_of[a][l]);
        CHECK(line_map::fill(f.slot_of[a][l]) == f.seq[s], "line map's fill number is not its slot's");
        CHECK(s < f.n_slots && ++slot_users[s] == 1, "slot %u holds two lines", s);
        CHECK(f.tags[s] == slot_tag::make(a, l), "slot %u tag disagrees with line map", s);
      } else {
        CHECK(f.slot_of[a][l] == line_map::none, "invalid line %llu still mapped", (unsigned long long)l);
      }
    }
  for (uint32_t s = 0; s < f.n_slots; ++s)
    flush_slot(f.ctx, s, io);
  for (uint32_t a = 0; a < f.n_arrays; ++a)
    for (uint64_t l = 0; l < f.n_lines; ++l) {
      CHECK(!line_word::is_dirty(f.state[a][l]), "line dirty after flush");
      for (uint32_t w = 1; w < words; ++w) {
        uint64_t want = f.expected[a][l * words + w].load();
        CHECK(f.backing[a][l * words + w] == want, "lost write: array %u line %llu word %u has %llu, want %llu", a,
              (unsigned long long)l, w, (unsigned long long)f.backing[a][l * words + w], (unsigned long long)want);
      }
    }
  CHECK(f.err.count == 0, "unexpected fault kind %u", f.err.kind);
  unsigned long long reads = 0, writes = 0;
  for (uint32_t a = 0; a < f.n_arrays; ++a) {
    reads += f.io_counts[a].reads;
    writes += f.io_counts[a].writes;
    uint64_t lines_read = 0;
    for (uint64_t l = 0; l < f.n_lines; ++l) {
      lines_read += f.line_reads[a][l];
      if (f.freq)
        CHECK(f.fetches[a][l] == std::min<uint64_t>(255, f.line_reads[a][l]),
              "array %u line %llu: fetch count %u, but it was read %llu times", a, (unsigned long long)l,
              f.fetches[a][l], (unsigned long long)f.line_reads[a][l]);
    }
    CHECK(f.io_counts[a].reads == lines_read, "array %u: %llu reads counted, %llu made", a, f.io_counts[a].reads,
          (unsigned long long)lines_read);
  }
  CHECK(reads == f.stats[0].io_reads && writes == f.stats[0].io_writes,
        "per-array counters (%llu reads, %llu writes) disagree with the totals (%llu, %llu)", reads, writes,
        f.stats[0].io_reads, f.stats[0].io_writes);
  if (f.freq) {
    uint32_t prot = 0;
    for (uint32_t s = 0; s < f.n_slots; ++s)
      prot += f.prio[s] != 0 ? 1u : 0u;
    CHECK(prot == f.n_protected, "%u slots have a priority, the protected count says %u", prot, f.n_protected);
    CHECK(prot <= f.ctx.protect_budget + 8, "%u protected slots of %u: over the budget", prot, f.n_slots);
  }
}

void run(const char* name, uint32_t arrays, uint32_t lines, uint32_t slots, unsigned threads, worker_opts o,
         bool freq = false)
{
  auto t0 = std::chrono::steady_clock::now();
  fixture f(arrays, lines, slots, freq);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    worker_opts wo = o;
    wo.flusher = o.flusher && t == 0;
    pool.emplace_back(worker, std::ref(f), 1234u + t, wo);
  }
  for (auto& t : pool)
    t.join();
  verify(f);
  const stats_row& st = f.stats[0];
  std::printf("ok   %-28s %u threads, %u slots, %llu fetches, %llu evictions, %llu write-backs (%.2f s)\n", name,
              threads, slots, (unsigned long long)st.io_reads,
              (unsigned long long)st.evictions, (unsigned long long)st.writebacks,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// Single-threaded walk through every transition of the line word.
void transitions()
{
  uint32_t w = 0;
  uint32_t seen = line_word::pin(&w, 2);
  CHECK(line_word::is_invalid(seen), "fresh line not invalid");
  CHECK(line_word::claim(&w, seen), "claim of an invalid line failed");
  uint32_t again = line_word::refs(w) | 0;
  CHECK(!line_word::claim(&w, again = w), "second claim succeeded");
  line_word::publish(&w, true);
  CHECK(line_word::is_valid(w) && line_word::is_dirty(w) && line_word::refs(w) == 2, "publish");
  bool dirty = false;
  CHECK(!line_word::begin_evict(&w, dirty), "evicted a pinned line");
  line_word::unpin(&w, 2);
  CHECK(!line_word::begin_clean(&w) || (line_word::end_clean(&w), true), "clean");
  CHECK(line_word::is_valid(w) && !line_word::is_dirty(w), "clean left dirty bit");
  CHECK(line_word::begin_evict(&w, dirty) && !dirty, "evict of a clean unpinned line");
  line_word::pin(&w, 1); // a waiter arrives during the eviction
  line_word::end_evict(&w);
  CHECK(line_word::is_invalid(w) && line_word::refs(w) == 1, "end_evict must keep the waiter's pin");
  std::printf("ok   line word transitions\n");
}

// One thread sweeps 64 lines through a 16-slot cache ten times (a loop
// larger than the cache, like a BFS level through its edge array). fifo
// keeps nothing from one sweep to the next; freq keeps its protected lines
// (and those that come back), so later sweeps hit, and never protects more
// than a quarter of the slots.
void replacement_order()
{
  uint64_t hits[2] = {0, 0};
  for (bool freq : {false, true}) {
    fixture f(1, 64, 16, freq);
    checking_io io{&f};
    for (int sweep = 0; sweep < 10; ++sweep) {
      const uint64_t before = f.stats[0].misses;
      for (uint64_t l = 0; l < 64; ++l) {
        uint32_t slot = no_slot;
        const probe p = begin_acquire(f.arrays[0], l, 1, false, slot);
        if (p == probe::fetch) {
          stat_add(f.ctx, stat::misses, 1);
          fill_line(f.ctx, f.arrays[0], l, false, io);
        }
        CHECK(p != probe::wait, "line busy in a one-thread run");
        release(f.arrays[0], l, 1);
        CHECK(f.n_protected <= f.ctx.protect_budget, "%u protected slots of 16", f.n_protected);
      }
      if (sweep >= 2)
        hits[freq] += 64 - (f.stats[0].misses - before);
    }
    verify(f);
  }
  CHECK(hits[0] == 0, "fifo hit %llu times in a loop larger than the cache", (unsigned long long)hits[0]);
  // The budget leaves room for the running warps' lines, and none when they fill the cache.
  CHECK(protect_budget_for(16, 0) == 4 && protect_budget_for(16, 4) == 2 && protect_budget_for(16, 8) == 0 &&
            protect_budget_for(4096, 8448) == 0 && protect_budget_for(65536, 8448) == 12160,
        "protect_budget_for");
  CHECK(hits[1] >= 8 * 3, "freq kept too little of the loop: %llu hits in 8 sweeps", (unsigned long long)hits[1]);
  std::printf("ok   replacement: loop of 64 lines, 16 slots: fifo %llu hits, freq %llu hits (sweeps 3-10)\n",
              (unsigned long long)hits[0], (unsigned long long)hits[1]);
}

} // namespace

int main()
{
  transitions();
  const unsigned hw = std::max(2u, std::thread::hardware_concurrency());
  const unsigned threads = std::min(8u, hw * 4); // oversubscribe: preemption inside critical windows
  run("tiny cache, heavy eviction", 2, 64, 4, threads, {300000, false, false});
  run("nested pins", 2, 64, 2 * threads + 2, threads, {300000, true, false});
  run("concurrent flush", 3, 32, 8, threads, {300000, false, true});
  run("one line, many threads", 1, 1, 1, threads, {200000, false, false});
  run("two slots, many lines", 1, 4096, 2, threads, {200000, false, true});
  run("larger cache", 4, 1024, 256, threads, {300000, true, true});
  // The frequency-aware policy (slot priorities, protected count, fetch counts).
  run("freq: tiny cache", 2, 64, 4, threads, {100000, false, false}, true);
  run("freq: nested pins, flush", 3, 256, 2 * threads + 16, threads, {100000, true, true}, true);
  run("freq: larger cache", 4, 1024, 256, threads, {100000, true, true}, true);
  replacement_order();
  std::printf("cache_stress: all passed\n");
  return failures;
}
