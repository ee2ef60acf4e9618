// The BaM cache algorithms, written once for GPU threads and CPU threads.
//
// Everything here is a function of a cache_ctx (slots, tags, clock) and an
// array_meta (per-line state words and line->slot map). Backends enter only
// through an `Io` object with
//
//   int read (const cache_ctx&, const array_meta&, uint64_t line, void* dst);
//   int write(const cache_ctx&, const array_meta&, uint64_t line, const void* src);
//
// (0 or a backend/NVMe status), so the CPU stress tests drive exactly the
// code the GPU runs.
//
// Races the design closes:
//  * One fetcher per line: invalid->busy is a CAS on the line word.
//  * A lookup racing an eviction: the reader pins (fetch_add) and only trusts
//    slot_of[line] when the value it pinned showed `valid`. An evictor must
//    CAS valid-with-zero-refs -> busy, so a pin that lands first makes the
//    eviction fail, and a pin that lands after sees `busy` and waits.
//  * Two allocators choosing the same slot: a slot is taken by CASing its tag
//    to `locked`; only the winner may evict its old line or fill it.
//  * Slot tag vs. line map: a tag is trusted only after the victim's line
//    word was moved to busy by that same CAS, and the line can leave the slot
//    only through an eviction that holds the tag locked; the tag is re-set
//    after the new line's slot_of is written, before it is published.
#ifndef BAM_DETAIL_CACHE_CORE_CUH
#define BAM_DETAIL_CACHE_CORE_CUH

#include <bam/detail/atomic.cuh>
#include <bam/detail/cache_types.cuh>
#include <bam/detail/config.cuh>
#include <bam/detail/line_state.cuh>

#if !defined(__CUDA_ARCH__)
#  include <cstdio>
#  include <cstdlib>
#  include <cstring>
#  include <ctime>
#endif

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// Monotonic nanoseconds, used only for stall detection.
BAM_HD inline uint64_t now_ns() noexcept
{
#if BAM_IS_DEVICE
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
#endif
}

// Counter row for the calling thread: its SM's row on the GPU, so counters
// spread over many addresses; row 0 on the CPU.
BAM_HD inline uint32_t stats_row_index(const cache_ctx& c) noexcept
{
#if BAM_IS_DEVICE
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm < c.n_stat_rows ? sm : sm % c.n_stat_rows; // the modulo (a long sequence) only when needed: hits count too
#else
  (void)c;
  return 0;
#endif
}

BAM_HD inline void stat_add(const cache_ctx& c, stat f, unsigned long long v) noexcept
{
  if (c.stats == nullptr)
    return;
  unsigned long long* p = &c.stats[stats_row_index(c)].accesses + uint32_t(f);
#if BAM_IS_DEVICE
  atomicAdd(p, v); // result unused: compiles to a fire-and-forget RED
#else
  atomic_fetch_add(p, v, order::relaxed);
#endif
}

// Remember a device-side failure; the first one is described in full.
BAM_HD inline void record_fault(const cache_ctx& c, fault_kind k, int status, uint32_t array_id, uint64_t line) noexcept
{
  if (atomic_fetch_add(&c.err->count, 1u, order::relaxed) == 0) {
    c.err->kind = uint32_t(k);
    c.err->status = status;
    c.err->array_id = array_id;
    c.err->line = line;
  }
  if (k == fault_kind::read || k == fault_kind::write)
    stat_add(c, stat::io_errors, 1);
  if (c.fatal != nullptr) { // mapped host word 3: runtime::check_sync() sees a failure without a device round trip
    c.fatal[3] = 1;
#if BAM_IS_DEVICE
    __threadfence_system();
#endif
  }
}

// A failure the kernel cannot continue from (no slot can ever be found, or
// a line stays busy forever). The code goes to mapped host memory first
// because trapping destroys the context and with it device memory.
BAM_HD inline void fatal(const cache_ctx& c, fault_kind k, uint32_t array_id, uint64_t line) noexcept
{
  record_fault(c, k, 0, array_id, line);
#if BAM_IS_DEVICE
  if (c.fatal != nullptr) {
    c.fatal[1] = array_id;
    c.fatal[2] = uint32_t(line);
    c.fatal[0] = uint32_t(k);
    __threadfence_system();
  }
  __trap();
#else
  std::fprintf(stderr, "bam: fatal cache fault %u (array %u line %llu)\n", unsigned(k), array_id,
               static_cast<unsigned long long>(line));
  std::abort();
#endif
}

// Tracks how long a thread has waited without progress.
struct stall_clock {
  uint64_t start = 0;
  unsigned ns = 32;

  // Back off; returns false once the wait has outlived the timeout.
  BAM_HD bool wait(const cache_ctx& c) noexcept
  {
    backoff(ns);
    if (ns < 1024)
      return true;
    uint64_t t = now_ns();
    if (start == 0)
      start = t;
    return t - start < c.stall_timeout_ns;
  }
};

enum class probe : uint32_t { hit, fetch, wait };

// A line chosen for eviction, owned (busy) by the evicting thread.
struct victim {
  uint64_t line = 0;
  uint32_t array_id = 0;
  bool present = false;
  bool dirty = false;
};

// Turn an observed line word into the next step. On `hit` the slot is
// known; on `fetch` this thread owns the line (busy) and must fill it.
BAM_HD inline probe classify(const array_meta& m, uint64_t line, bool write, uint32_t seen, uint32_t& slot) noexcept
{
  uint32_t* w = m.state + line;
  for (;;) {
    if (line_word::is_valid(seen)) {
      slot = line_map::slot(atomic_load(m.slot_of + line, order::relaxed)); // ordered by the acquire that saw `valid`
      if (write)
        line_word::mark_dirty(w, seen);
      return probe::hit;
    }
    if (line_word::is_busy(seen))
      return probe::wait;
    if (line_word::claim(w, seen))
      return probe::fetch;
  }
}

// Pin n references on a line and classify it (the leader's one atomic).
BAM_HD inline probe begin_acquire(const array_meta& m, uint64_t line, uint32_t n, bool write, uint32_t& slot) noexcept
{
  BAM_ASSERT(line < m.n_lines, "bam::detail::begin_acquire: line out of range");
  uint32_t seen = line_word::pin(m.state + line, n);
  return classify(m, line, write, seen, slot);
}

// Wait (already pinned) while another thread fetches or evicts the line.
BAM_HD inline probe wait_acquire(const cache_ctx& c, const array_meta& m, uint64_t line, bool write,
                                 uint32_t& slot) noexcept
{
  stall_clock sc;
  for (;;) {
    uint32_t seen = atomic_load(m.state + line, order::acquire);
    if (!line_word::is_busy(seen))
      return classify(m, line, write, seen, slot);
    if (!sc.wait(c))
      fatal(c, fault_kind::stalled, m.id, line);
  }
}

// The slot now belongs to a new fill: bump its fill number before anything
// overwrites its data. Optimistic readers (warp_cache.cuh, hit_read) read
// the slot's data, fence (acquire), and compare the fill number with the
// one their line map entry recorded; the release fence here orders the bump
// before every byte the fill writes, so a reader that saw any of those bytes
// sees the new number and retries on the pinned path.
BAM_HD inline void begin_fill(const cache_ctx& c, uint32_t s) noexcept
{
  if (c.slot_seq == nullptr)
    return;
  atomic_fetch_add(c.slot_seq + s, 1u, order::relaxed);
  atomic_fence(order::release);
}

// Replacement (replacement::freq, cache_types.cuh): whether the hand passes
// over slot s, lowering its priority by one, so a line survives one turn of
// the hand per unit of priority (CLOCK with counters, "GCLOCK"). Priorities
// change by relaxed CAS (miss path only: the optimistic hit path never
// touches them), so cache_ctx::n_protected counts exactly the slots above
// zero: the thread whose CAS takes a slot from 1 to 0 takes it off the count.
BAM_HD inline bool pass_over(const cache_ctx& c, uint32_t s) noexcept
{
  uint32_t p = atomic_load(c.slot_prio + s, order::relaxed);
  if (p == 0)
    return false;
  const uint32_t was = p;
  if (atomic_cas(c.slot_prio + s, p, was - 1, order::relaxed) && was == 1)
    atomic_fetch_sub(c.n_protected, 1u, order::relaxed);
  return true; // lowered by us or by a racing hand: either way not a victim now
}

// The priority a line installed in the cache starts with (replacement::freq):
// max_slot_prio for the protected subset, else how often it was fetched
// before; 0 when the protected share is used up.
BAM_HD inline uint32_t install_prio(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t fetched_before) noexcept
{
  const uint64_t h = (line ^ (uint64_t(m.id) << 40)) * 0x9E3779B97F4A7C15ull;
  uint32_t p = (h >> (64 - protect_shift)) == 0 ? max_slot_prio
                                                 : (fetched_before < max_slot_prio ? fetched_before : max_slot_prio);
  if (p == 0)
    return 0;
  if (atomic_load(c.n_protected, order::relaxed) >= c.protect_budget)
    return 0;
  atomic_fetch_add(c.n_protected, 1u, order::relaxed); // may overshoot the budget by the racing installs: a hint
  return p;
}

// A slot just taken (tag locked, old line evicted) starts its fill at
// priority 0. It can be above 0 when taken by force, or when the taker's
// priority load raced with the install that last filled it (the tag CAS's
// acquire makes that install's priority store visible now). Hands racing
// on it fail their CAS on 0.
BAM_HD inline void clear_prio(const cache_ctx& c, uint32_t s) noexcept
{
  if (c.slot_prio != nullptr && atomic_load(c.slot_prio + s, order::relaxed) != 0 &&
      atomic_fetch_and(c.slot_prio + s, 0u, order::relaxed) != 0)
    atomic_fetch_sub(c.n_protected, 1u, order::relaxed);
}

// Try to take slot s for a new line: lock its tag, then evict its line if it
// has one and nobody pins it.
//
// `force`: take the slot whatever its priority (the caller already went
// once round the clock without finding one at zero: the unprotected slots
// are all pinned or in flight); a slot taken that way leaves the protected
// count. Without it the hand could have to go max_slot_prio times round a
// cache whose every unprotected line is pinned.
BAM_HD inline bool try_take_slot(const cache_ctx& c, uint32_t s, victim& v, bool force = false) noexcept
{
  if (c.slot_prio != nullptr && !force && pass_over(c, s))
    return false;
  uint64_t* tp = c.slot_tag + s;
  uint64_t t = atomic_load(tp, order::relaxed);
  if (t == slot_tag::locked || !atomic_cas(tp, t, slot_tag::locked, order::acquire))
    return false;
  v.present = t != slot_tag::empty;
  if (!v.present) {
    clear_prio(c, s);
    begin_fill(c, s);
    return true;
  }
  v.array_id = slot_tag::array_of(t);
  v.line = slot_tag::line_of(t);
  const array_meta& vm = c.arrays[v.array_id];
  if (line_word::begin_evict(vm.state + v.line, v.dirty)) {
    clear_prio(c, s);
    begin_fill(c, s);
    return true;
  }
  atomic_store(tp, t, order::release); // in use: give the slot back untouched
  return false;
}

// One sweep of the clock (two with priorities, the second taking protected
// slots too) for a free or evictable slot;
// no_slot when every slot is pinned or in flight. The element paths then
// read around the cache (forward progress: no cache size can stall them).
BAM_HD inline uint32_t try_allocate_slot(const cache_ctx& c, victim& v) noexcept
{
  const uint64_t sweeps = c.slot_prio != nullptr ? 2 : 1; // the second one ignores priorities
  for (uint64_t tries = 0; tries < sweeps * c.n_slots; ++tries) {
    uint64_t hand = atomic_fetch_add(c.clock, 1ull, order::relaxed);
    uint32_t s = uint32_t(hand) % c.n_slots;
    if (try_take_slot(c, s, v, tries >= c.n_slots))
      return s;
  }
  return no_slot;
}

// A claimed line (busy, ours) that will not be fetched after all: back to
// invalid, keeping the pins of threads that wait on it.
BAM_HD inline void unclaim(const array_meta& m, uint64_t line) noexcept
{
  line_word::end_evict(m.state + line);
}

// Clock replacement over slots with one global hand (thesis §5.3.2), with
// per-slot priorities under replacement::freq (try_take_slot). The
// returned slot's tag is `locked` and belongs to the caller.
BAM_HD inline uint32_t allocate_slot(const cache_ctx& c, victim& v, uint32_t array_id, uint64_t line) noexcept
{
  stall_clock sc;
  for (uint64_t tries = 1;; ++tries) {
    uint64_t hand = atomic_fetch_add(c.clock, 1ull, order::relaxed);
    uint32_t s = uint32_t(hand) % c.n_slots; // 32-bit: a 64-bit modulo is a long subroutine
    if (try_take_slot(c, s, v, tries > c.n_slots)) // after one turn, protected slots too
      return s;
    // A whole sweep without a free slot: everything is pinned or in flight.
    if (tries % c.n_slots == 0 && !sc.wait(c))
      fatal(c, fault_kind::exhausted, array_id, line);
  }
}

// One line moved for array `id` (per-array counters; statistics on).
BAM_HD inline void count_array_io(const cache_ctx& c, uint32_t id, bool read) noexcept
{
  if (c.io_of == nullptr)
    return;
  unsigned long long* p = read ? &c.io_of[id].reads : &c.io_of[id].writes;
#if BAM_IS_DEVICE
  atomicAdd(p, 1ull); // result unused: a fire-and-forget RED, once per line moved
#else
  atomic_fetch_add(p, 1ull, order::relaxed);
#endif
}

// A pinned access found the line cached in slot s: with replacement::freq
// a protected slot's priority goes up by one (at most max_slot_prio; a slot
// at 0 stays there, so the protected count stays exact). One relaxed load,
// and a CAS only for a protected slot below the maximum; a raise lost to a
// racing hand is dropped.
BAM_HD inline void note_hit(const cache_ctx& c, uint32_t s) noexcept
{
  if (c.slot_prio == nullptr)
    return;
  uint32_t p = atomic_load(c.slot_prio + s, order::relaxed);
  if (p != 0 && p < max_slot_prio)
    (void)atomic_cas(c.slot_prio + s, p, p + 1, order::relaxed);
}

// The evicted line is gone from the cache: clear its mapping, then let the
// threads waiting on it in (they will find it invalid and refetch).
BAM_HD inline void finish_evict(const cache_ctx& c, const victim& v) noexcept
{
  const array_meta& vm = c.arrays[v.array_id];
  atomic_store(vm.slot_of + v.line, line_map::none, order::relaxed);
  line_word::end_evict(vm.state + v.line);
  stat_add(c, stat::evictions, 1);
  if (v.dirty)
    count_array_io(c, v.array_id, false);
}

// The fetched line is in slot s: map it, tag the slot, publish the line.
// The map store is a release: an optimistic reader that acquires the entry
// sees the slot's data as this fill left it.
//
// Replacement: the line's fetch count (array_meta::fetches, touched only by
// the line's fetcher, who holds it busy: the claim's acquire and the
// publish's release order successive fetchers) sets the slot's starting
// priority. A line fetched for the first time starts at 0; one that was
// evicted and is needed again starts higher (replacement::freq).
BAM_HD inline void install(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t s, bool write) noexcept
{
  if (c.slot_prio != nullptr) { // the slot's priority is 0 (try_take_slot), and this fill owns it
    uint32_t before = 0;
    if (m.fetches != nullptr) {
      before = m.fetches[line];
      if (before < 255)
        m.fetches[line] = uint8_t(before + 1);
    }
    const uint32_t p = install_prio(c, m, line, before);
    if (p != 0)
      atomic_store(c.slot_prio + s, p, order::relaxed);
  }
  count_array_io(c, m.id, true);
  const uint32_t fill = c.slot_seq != nullptr ? atomic_load(c.slot_seq + s, order::relaxed) : 0u;
  atomic_store(m.slot_of + line, line_map::make(s, fill), order::release);
  atomic_store(c.slot_tag + s, slot_tag::make(m.id, line), order::release);
  line_word::publish(m.state + line, write);
}

BAM_HD inline void zero_fill(void* dst, uint64_t bytes) noexcept
{
#if BAM_IS_DEVICE
  for (uint64_t i = 0; i < bytes / 16; ++i)
    static_cast<uint4*>(dst)[i] = make_uint4(0, 0, 0, 0);
#else
  std::memset(dst, 0, bytes);
#endif
}

// Write back a dirty victim (before its slot is overwritten) and retire it.
template <class Io>
BAM_HD void evict_victim(const cache_ctx& c, const victim& v, uint32_t s, Io& io)
{
  if (v.dirty) {
    const array_meta& vm = c.arrays[v.array_id];
    int st = io.write(c, vm, v.line, c.slot_data(s));
    if (st != 0)
      record_fault(c, fault_kind::write, st, v.array_id, v.line);
    stat_add(c, stat::writebacks, 1);
    stat_add(c, stat::io_writes, 1);
    stat_add(c, stat::io_write_bytes, c.line_bytes());
  }
  finish_evict(c, v);
}

// Read a line into slot s. A failed read is recorded (the host's check()
// throws) and the slot is zero-filled, so the kernel runs to completion on
// data the host already knows to be bad instead of hanging.
template <class Io>
BAM_HD void read_line(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t s, Io& io)
{
  int st = io.read(c, m, line, c.slot_data(s));
  if (st != 0) {
    record_fault(c, fault_kind::read, st, m.id, line);
    zero_fill(c.slot_data(s), c.line_bytes());
  }
  stat_add(c, stat::io_reads, 1);
  stat_add(c, stat::io_read_bytes, c.line_bytes());
}

// The fetcher's whole job when one thread does the I/O.
template <class Io>
BAM_HD uint32_t fill_line(const cache_ctx& c, const array_meta& m, uint64_t line, bool write, Io& io)
{
  victim v;
  uint32_t s = allocate_slot(c, v, m.id, line);
  if (v.present)
    evict_victim(c, v, s, io);
  read_line(c, m, line, s, io);
  install(c, m, line, s, write);
  return s;
}

// Pin n references on `line`, fetching it if needed; returns its slot.
// Single-thread version (CPU tests, device fallback paths).
template <class Io>
BAM_HD uint32_t acquire(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t n, bool write, Io& io)
{
  uint32_t slot = no_slot;
  probe p = begin_acquire(m, line, n, write, slot);
  if (p == probe::hit)
    note_hit(c, slot);
  for (;;) {
    if (p == probe::hit)
      return slot;
    if (p == probe::fetch)
      return fill_line(c, m, line, write, io);
    p = wait_acquire(c, m, line, write, slot);
  }
}

// Like acquire(), but a thread that finds the line busy (fetched or
// evicted by someone else) drops its pins while it waits, so waiting never
// keeps a slot from being reused. Used by warps that still have lines of
// their own to fill.
template <class Io>
BAM_HD uint32_t acquire_patiently(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t n, bool write,
                                  Io& io)
{
  stall_clock sc;
  for (;;) {
    uint32_t slot = no_slot;
    const probe p = begin_acquire(m, line, n, write, slot);
    if (p == probe::hit)
      return slot;
    if (p == probe::fetch) {
      stat_add(c, stat::misses, 1); // the line was evicted while we waited
      return fill_line(c, m, line, write, io);
    }
    line_word::unpin(m.state + line, n);
    while (line_word::is_busy(atomic_load(m.state + line, order::relaxed)))
      if (!sc.wait(c))
        fatal(c, fault_kind::stalled, m.id, line);
  }
}

BAM_HD inline void release(const array_meta& m, uint64_t line, uint32_t n) noexcept
{
  line_word::unpin(m.state + line, n);
}

enum class flush_result : uint32_t { clean, written, pinned };

// Write back the line held in slot s if it is dirty. Used by flush; safe
// against concurrent users because the line is moved to busy (refcount
// zero) for the duration of the write. A dirty line that is pinned is
// skipped and reported as `pinned` (an error only when nothing should run).
template <class Io>
BAM_HD flush_result flush_slot(const cache_ctx& c, uint32_t s, Io& io)
{
  uint64_t t = atomic_load(c.slot_tag + s, order::acquire);
  if (t == slot_tag::empty || t == slot_tag::locked)
    return flush_result::clean;
  const array_meta& m = c.arrays[slot_tag::array_of(t)];
  uint64_t line = slot_tag::line_of(t);
  uint32_t* w = m.state + line;
  if (!line_word::begin_clean(w)) {
    uint32_t seen = atomic_load(w, order::relaxed);
    return line_word::is_dirty(seen) && line_word::refs(seen) != 0 ? flush_result::pinned : flush_result::clean;
  }
  // We own the line; its data is wherever its map says (the tag we read may
  // be stale, the map is not while the line is busy).
  uint32_t held = line_map::slot(atomic_load(m.slot_of + line, order::relaxed));
  int st = io.write(c, m, line, c.slot_data(held));
  if (st != 0)
    record_fault(c, fault_kind::write, st, m.id, line);
  stat_add(c, stat::writebacks, 1);
  stat_add(c, stat::io_writes, 1);
  stat_add(c, stat::io_write_bytes, c.line_bytes());
  count_array_io(c, m.id, false);
  line_word::end_clean(w);
  return flush_result::written;
}

// Forget the line in slot s without writing it back (array freed, or cache
// dropped after a flush). Only valid while no kernel uses the cache.
BAM_HD inline void drop_slot(const cache_ctx& c, uint32_t s, uint32_t only_array = 0xffffffffu) noexcept
{
  uint64_t t = atomic_load(c.slot_tag + s, order::acquire);
  if (t == slot_tag::empty || t == slot_tag::locked)
    return;
  uint32_t id = slot_tag::array_of(t);
  if (only_array != 0xffffffffu && id != only_array)
    return;
  const array_meta& m = c.arrays[id];
  uint64_t line = slot_tag::line_of(t);
  if (line_word::refs(atomic_load(m.state + line, order::relaxed)) != 0)
    record_fault(c, fault_kind::pinned_dirty, 0, id, line);
  atomic_store(m.state + line, 0u, order::relaxed);
  atomic_store(m.slot_of + line, line_map::none, order::relaxed);
  if (c.slot_prio != nullptr && atomic_load(c.slot_prio + s, order::relaxed) != 0) {
    atomic_store(c.slot_prio + s, 0u, order::relaxed);
    atomic_fetch_sub(c.n_protected, 1u, order::relaxed);
  }
  atomic_store(c.slot_tag + s, slot_tag::empty, order::release);
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_DETAIL_CACHE_CORE_CUH
