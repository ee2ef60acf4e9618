// The per-line state word of the BaM cache (thesis §5.3.2).
//
// Every line of every array owns one 32-bit word:
//
//     31     30    29    28 ............................ 0
//   [valid][busy][dirty][          reference count          ]
//
// so that pinning a line and learning its state is ONE fused atomic
// (fetch_add of the reference count returns the state bits with it).
//
// States and who may move between them:
//
//   invalid (0)        --claim (CAS, the line's single fetcher)-->  busy
//   busy               --publish (fetcher, after the data landed)--> valid | valid+dirty
//   valid[+dirty]      --begin_evict (CAS, only at refcount 0)-->    busy
//   busy (evicting)    --end_evict (evictor, after write-back)-->    invalid
//   valid+dirty        --begin_clean (CAS, refcount 0, flush)-->     busy
//   busy (cleaning)    --end_clean-->                                valid
//
// valid and busy are never set together: "busy" always means exactly one
// thread owns the line's data and its slot mapping. The reference count is
// independent of the state bits; a thread may hold a pin on a busy or invalid
// line while it waits (the pin keeps nobody out, only evictors check it, and
// they only look at valid lines).
#ifndef BAM_DETAIL_LINE_STATE_CUH
#define BAM_DETAIL_LINE_STATE_CUH

#include <bam/detail/atomic.cuh>
#include <bam/detail/config.cuh>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

struct line_word {
  static constexpr uint32_t valid = 1u << 31;
  static constexpr uint32_t busy = 1u << 30;
  static constexpr uint32_t dirty = 1u << 29;
  static constexpr uint32_t ref_mask = dirty - 1u;
  static constexpr uint32_t state_mask = valid | busy | dirty;

  [[nodiscard]] BAM_HD static constexpr uint32_t refs(uint32_t w) noexcept { return w & ref_mask; }
  [[nodiscard]] BAM_HD static constexpr bool is_valid(uint32_t w) noexcept { return (w & valid) != 0; }
  [[nodiscard]] BAM_HD static constexpr bool is_busy(uint32_t w) noexcept { return (w & busy) != 0; }
  [[nodiscard]] BAM_HD static constexpr bool is_dirty(uint32_t w) noexcept { return (w & dirty) != 0; }
  [[nodiscard]] BAM_HD static constexpr bool is_invalid(uint32_t w) noexcept { return (w & (valid | busy)) == 0; }

  // Pin n references and return the word as it was. Acquire: a thread that
  // sees `valid` must also see the line's data and slot mapping.
  BAM_HD static uint32_t pin(uint32_t* w, uint32_t n) noexcept
  {
    uint32_t old = atomic_fetch_add(w, n, order::acquire);
    BAM_ASSERT(refs(old) + n <= ref_mask, "line_word::pin: reference count overflow");
    return old;
  }

  // Drop n references. Release: our reads/writes of the line's data happen
  // before any evictor's CAS that sees the count reach zero.
  BAM_HD static void unpin(uint32_t* w, uint32_t n) noexcept
  {
    uint32_t old = atomic_fetch_sub(w, n, order::release);
    (void)old;
    BAM_ASSERT(refs(old) >= n, "line_word::unpin: reference count underflow");
  }

  // Try to become the one fetcher of an invalid line. `seen` is the last
  // value we observed; on failure it holds the current value. A CAS (not the
  // thesis' fetch_or) so that a line that turned valid in between is never
  // marked busy by mistake.
  BAM_HD static bool claim(uint32_t* w, uint32_t& seen) noexcept
  {
    while (is_invalid(seen)) {
      if (atomic_cas(w, seen, seen | busy, order::acquire))
        return true;
    }
    return false;
  }

  // The fetcher hands the line over: busy -> valid (+dirty when the fetching
  // access writes). Release publishes the data and the slot mapping.
  BAM_HD static void publish(uint32_t* w, bool make_dirty) noexcept
  {
    uint32_t old = atomic_fetch_xor(w, busy | valid | (make_dirty ? dirty : 0u), order::release);
    (void)old;
    BAM_ASSERT(is_busy(old) && !is_valid(old) && !is_dirty(old), "line_word::publish: line was not busy");
  }

  // A pinned writer marks the line dirty; skipped when it already is.
  BAM_HD static void mark_dirty(uint32_t* w, uint32_t seen) noexcept
  {
    if (!is_dirty(seen))
      atomic_fetch_or(w, dirty, order::relaxed);
  }

  // Evictor: valid[+dirty] with no references -> busy. Fails if anyone holds
  // a pin or the state moved; the CAS compares the whole word, so a pin that
  // lands between our load and the CAS makes it fail.
  BAM_HD static bool begin_evict(uint32_t* w, bool& was_dirty) noexcept
  {
    uint32_t seen = atomic_load(w, order::relaxed);
    if (!is_valid(seen) || refs(seen) != 0)
      return false;
    if (!atomic_cas(w, seen, busy, order::acquire))
      return false;
    was_dirty = is_dirty(seen);
    return true;
  }

  // Evictor done (data written back, mapping cleared): busy -> invalid,
  // keeping the pins of threads that started waiting meanwhile.
  BAM_HD static void end_evict(uint32_t* w) noexcept
  {
    uint32_t old = atomic_fetch_and(w, ref_mask, order::release);
    (void)old;
    BAM_ASSERT(is_busy(old), "line_word::end_evict: line was not busy");
  }

  // Flush: valid+dirty with no references -> busy, so the write-back reads
  // a stable line. Returns false when the line is clean or in use.
  BAM_HD static bool begin_clean(uint32_t* w) noexcept
  {
    uint32_t seen = atomic_load(w, order::relaxed);
    if (!is_valid(seen) || !is_dirty(seen) || refs(seen) != 0)
      return false;
    return atomic_cas(w, seen, busy, order::acquire);
  }

  // Flush done: busy -> valid (clean).
  BAM_HD static void end_clean(uint32_t* w) noexcept
  {
    uint32_t old = atomic_fetch_xor(w, busy | valid, order::release);
    (void)old;
    BAM_ASSERT(is_busy(old), "line_word::end_clean: line was not busy");
  }
};

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_DETAIL_LINE_STATE_CUH
