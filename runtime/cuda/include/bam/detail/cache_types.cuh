// Plain-data descriptions of a BaM cache and its arrays, shared by the host
// library (which allocates them), the device code (which runs on them) and
// the CPU stress tests (which put them in ordinary host memory).
#ifndef BAM_DETAIL_CACHE_TYPES_CUH
#define BAM_DETAIL_CACHE_TYPES_CUH

#include <bam/backend.h>
#include <bam/detail/config.cuh>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace nvme {
struct queue_set;
} // namespace nvme

// How an array's elements are reached (decided per array at run time).
enum class placement : uint32_t {
  cache = 0,       // through the BaM cache (lines fetched from the backend)
  resident = 1,    // data in GPU memory, plain loads and stores
  host_direct = 2, // mapped pinned host memory read zero-copy, plain loads and stores
};

[[nodiscard]] constexpr const char* placement_name(placement p) noexcept
{
  return p == placement::resident ? "resident" : p == placement::host_direct ? "host-direct" : "cache";
}

namespace detail {

// One entry per live array in the runtime's array table. Evictors find a
// victim line's metadata through the table because a slot's tag names the
// owner by (array id, line), not by pointer.
struct array_meta {
  uint32_t* state;       // one line_word per line
  uint64_t* slot_of;     // line -> line_map entry (slot and the slot's fill number), line_map::none when not cached
  unsigned char* data;   // line 0 when is_pointer_access(cache_ctx::access), else nullptr
  uint64_t base;         // byte offset of line 0 when the access is device_access::queue
  uint64_t n_lines;
  uint32_t id;
  uint32_t live;
  // Placement (runtime.cu decides, per array): non-null means every element
  // access goes straight to this memory (GPU-resident data, or mapped
  // pinned host memory read zero-copy); the cache is never used for it.
  unsigned char* direct;
  uint32_t* seq;      // the cache's per-slot fill numbers (cache_ctx::slot_seq), here so hits need no ctx load
  uint32_t placement; // bam::placement, as a number (what runtime.cu decided; reported by BAM_STATS)
  uint32_t zero;      // always 0; hit_read ANDs with it to make a dependency the compiler cannot fold
  // Replacement history (cache_core.cuh, replacement::freq): per line, how
  // many times it was fetched (saturating at 255). Read and written only by
  // the line's fetcher while it holds the line busy; nullptr: no history.
  uint8_t* fetches;
};

// A line map entry: the slot holding the line and that slot's fill number
// when the line was installed. The optimistic read path (warp_cache.cuh,
// hit_read) trusts data read from the slot only if the slot's fill number
// is still the same afterwards. 32-bit fill numbers wrap after 2^32 fills
// of one slot; a read would have to stay in flight across all of them.
struct line_map {
  static constexpr uint64_t none = ~0ull;
  [[nodiscard]] BAM_HD static constexpr uint64_t make(uint32_t slot, uint32_t fill) noexcept
  {
    return (uint64_t(fill) << 32) | slot;
  }
  [[nodiscard]] BAM_HD static constexpr uint32_t slot(uint64_t e) noexcept { return uint32_t(e); }
  [[nodiscard]] BAM_HD static constexpr uint32_t fill(uint64_t e) noexcept { return uint32_t(e >> 32); }
};

// Slot tags: which line a slot holds. 24 bits of array id, 40 bits of line
// (1 Ti lines: 4 PiB at the default 4 KiB line). Two reserved values.
struct slot_tag {
  static constexpr uint64_t empty = ~0ull;
  static constexpr uint64_t locked = ~0ull - 1;
  static constexpr int line_bits = 40;
  static constexpr uint64_t line_mask = (1ull << line_bits) - 1;
  static constexpr uint32_t max_arrays = 1u << 24;

  [[nodiscard]] BAM_HD static constexpr uint64_t make(uint32_t array_id, uint64_t line) noexcept
  {
    return (uint64_t(array_id) << line_bits) | line;
  }
  [[nodiscard]] BAM_HD static constexpr uint32_t array_of(uint64_t tag) noexcept { return uint32_t(tag >> line_bits); }
  [[nodiscard]] BAM_HD static constexpr uint64_t line_of(uint64_t tag) noexcept { return tag & line_mask; }
};

constexpr uint32_t no_slot = 0xffffffffu;

// Which slot the clock hand gives up (cache_core.cuh, try_take_slot).
//  fifo: the first slot the hand reaches that nobody pins (the runtime's
//        policy before issue 18; BAM_CACHE_POLICY=fifo). Under a traversal
//        that sweeps more lines per level than the cache holds (BFS) it
//        keeps nothing from one level to the next.
//  freq: clock with per-slot priorities (GCLOCK) and a protected share.
//        The hand passes over a slot whose priority p > 0 and lowers it by
//        one; it takes slots at priority 0. A line is installed with
//          - max_slot_prio when it belongs to the protected subset (a fixed
//            1/2^protect_shift of each array's lines, by a hash of the
//            line): a sweep larger than the cache then keeps those lines
//            from one level to the next instead of none (what Belady's
//            optimum does with a loop larger than the cache: hold a fixed
//            part of it; cf. bimodal insertion, Qureshi et al., ISCA 2007);
//          - else the number of times the line was fetched before (capped):
//            lines that keep coming back (a hot small array next to a
//            streamed one, CSR lines shared by vertices of several levels)
//            stay longer;
//          - else 0: fetched once, evicted at the hand's next visit.
//        Protected slots (p > 0) are at most a quarter of the slots the
//        running warps' lines leave (cache_ctx::n_protected,
//        protect_budget_for), so the hand always finds a victim within
//        a few steps and a stale protected set ages out (max_slot_prio
//        turns of the hand). Hits leave priorities alone on the GPU (the
//        hit paths have no extra loads, stores or atomics); cache_core's
//        one-thread acquire() raises a protected slot's (note_hit).
enum class replacement : uint32_t { fifo = 0, freq = 1 };
#ifndef BAM_MAX_SLOT_PRIO
#  define BAM_MAX_SLOT_PRIO 63
#endif
#ifndef BAM_PROTECT_SHIFT
#  define BAM_PROTECT_SHIFT 2
#endif
#ifndef BAM_PROTECT_BUDGET_SHIFT
#  define BAM_PROTECT_BUDGET_SHIFT 2
#endif
// (macros so that bench/bfs_trace.cpp can try other values)
constexpr uint32_t max_slot_prio = BAM_MAX_SLOT_PRIO;
constexpr uint32_t protect_shift = BAM_PROTECT_SHIFT;              // 1/4 of the lines protected on insertion
constexpr uint32_t protect_budget_shift = BAM_PROTECT_BUDGET_SHIFT; // a quarter of the slots the running warps leave

// How many slots freq may protect in a cache of n_slots lines on a GPU that
// runs up to `resident_warps` warps at once: a quarter of what is left after
// two lines per resident warp (the lines the running warps are using now).
// Measured on an H200 with a cache of 4096 lines and ~8400 resident warps
// (BFS, naive port, 4 KiB lines): protecting half the slots there made the
// warps' lines evict each other, 13.5x the edge array per BFS instead of
// fifo's 4.7x. A cache that does not hold the running warps' lines gets no
// protection: freq then behaves as fifo.
[[nodiscard]] constexpr uint32_t protect_budget_for(uint32_t n_slots, uint64_t resident_warps) noexcept
{
  return n_slots > 2 * resident_warps ? uint32_t((n_slots - 2 * resident_warps) >> protect_budget_shift) : 0u;
}

[[nodiscard]] constexpr const char* replacement_name(replacement r) noexcept
{
  return r == replacement::fifo ? "fifo" : "freq";
}

// Per-array I/O counters (cache_ctx::io_of[id]): lines read from and
// written to the backend for that array; bytes are lines x line size.
struct array_io {
  unsigned long long reads;
  unsigned long long writes;
};
// Statistics, one 128-byte row per SM so counters do not serialize on one
// address. Field order is the order print_stats sums them in.
struct stats_row {
  unsigned long long accesses;       // element accesses (lanes), except hits of 1-8-byte elements (hit_elems)
  unsigned long long bytes;          // element bytes accessed, the same exception
  unsigned long long hits;           // pinned-path line probes that found the line present or in flight
  unsigned long long misses;         // line probes that fetched
  unsigned long long evictions;
  unsigned long long writebacks;     // dirty lines written (eviction + flush)
  unsigned long long io_reads;
  unsigned long long io_writes;
  unsigned long long io_read_bytes;
  unsigned long long io_write_bytes;
  unsigned long long io_errors;
  // Element reads served by the pin-free hit path (warp_cache.cuh,
  // hit_stats): [k] for k < 4 the lanes that read 2^k-byte elements (not
  // in accesses/bytes: fold_hit_elems adds them, so a hit costs one
  // reduction per warp access); [4] those of larger elements (already in
  // accesses/bytes).
  unsigned long long hit_elems[5];
};
static_assert(sizeof(stats_row) == 128, "stats_row must fill one 128-byte line");

// hit_elems bucket of an element size (sizes are powers of two).
[[nodiscard]] BAM_HD constexpr uint32_t hit_elem_bucket(uint32_t elem_bytes) noexcept
{
  return elem_bytes == 1 ? 0u : elem_bytes == 2 ? 1u : elem_bytes == 4 ? 2u : elem_bytes == 8 ? 3u : 4u;
}

// A row's totals with its hit_elems folded in: element accesses, their
// bytes, and how many of them the pin-free hit path served.
struct hit_fold {
  unsigned long long accesses, bytes, hit_accesses;
};
[[nodiscard]] BAM_HD constexpr hit_fold fold_hit_elems(const stats_row& r) noexcept
{
  hit_fold f{r.accesses, r.bytes, r.hit_elems[4]};
  for (uint32_t k = 0; k < 4; ++k) {
    f.accesses += r.hit_elems[k];
    f.bytes += r.hit_elems[k] << k;
    f.hit_accesses += r.hit_elems[k];
  }
  return f;
}

enum class stat : uint32_t {
  accesses, bytes, hits, misses, evictions, writebacks, io_reads, io_writes, io_read_bytes, io_write_bytes, io_errors
};

// Device-side failures, reported to the host by check()/flush()/copy_to_host.
enum class fault_kind : uint32_t { none = 0, read = 1, write = 2, exhausted = 3, stalled = 4, pinned_dirty = 5 };

struct error_block {
  uint32_t count;        // failures seen; the first one is described below
  uint32_t kind;         // fault_kind
  int32_t status;        // NVMe status or backend code
  uint32_t array_id;
  uint64_t line;
};

// Everything device code needs about one runtime's cache. Lives in device
// memory; array handles carry a pointer to it.
struct cache_ctx {
  unsigned char* slots;         // n_slots * line_bytes of cached data
  uint64_t* slot_tag;           // slot -> slot_tag
  uint32_t* slot_seq;           // slot -> fill number, +1 each time the slot is taken for a new line
  unsigned long long* clock;    // global clock hand
  array_meta* arrays;           // table indexed by array id
  stats_row* stats;             // n_stat_rows rows, nullptr when disabled
  error_block* err;             // device memory, atomically updated
  volatile uint32_t* fatal;     // mapped host words: [0..2] a trapped kernel's cause (survives the context), [3] a failure was recorded
  nvme::queue_set* queues;      // device_access::queue only
  uint64_t stall_timeout_ns;    // give up (and report) after this long without progress
  uint32_t n_slots;
  uint32_t line_shift;          // log2(line bytes)
  uint32_t n_stat_rows;
  device_access access;         // how lines reach the cache (bam/backend.h), from the backend registry
  uint32_t* slot_prio;          // slot -> replacement priority: replacement::freq; nullptr: replacement::fifo
  uint32_t* n_protected;        // slots with priority > 0 (replacement::freq)
  uint32_t protect_budget;      // at most this many (protect_budget_for; 0: freq keeps nothing protected)
  array_io* io_of;              // per-array I/O counters, indexed by array id; nullptr when statistics are off

  [[nodiscard]] BAM_HD constexpr uint64_t line_bytes() const noexcept { return 1ull << line_shift; }
  [[nodiscard]] BAM_HD unsigned char* slot_data(uint32_t s) const noexcept
  {
    return slots + (uint64_t(s) << line_shift);
  }
};

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_DETAIL_CACHE_TYPES_CUH
