// Which arrays stay in GPU memory (placement::resident) under
// BAM_GPU_BUDGET, ranked by size so that only the largest leave it.
//
// An array's placement is fixed when it is made (its handle carries it into
// kernels), so ranking needs the sizes of the arrays still to come: the
// program announces them with runtime::plan_arrays(bytes...) (`bamgen port`
// emits it before the first array it makes). The plan ranks the announced
// sizes, smallest first, against the budget left, and each array made
// later with an announced size takes that size's decision; an array
// nobody announced is resident when it fits what the budget has left after
// the announced residents still to come (first come, first served).
//
// Plain C++ (no CUDA): tests/placement_test.cpp runs it on the CPU.
#ifndef BAM_SRC_PLACEMENT_PLAN_H
#define BAM_SRC_PLACEMENT_PLAN_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// What the driver will reserve when the per-thread stack limit goes from
// `cur` to `want` bytes: the difference on every thread the GPU can hold
// at once (measured on an H200: 266 MiB for 1 -> 2 KiB, 264 MiB by this
// count), plus 1/16 for the driver's rounding.
inline uint64_t stack_reservation_estimate(uint64_t cur, uint64_t want, uint64_t resident_threads) noexcept
{
  if (want <= cur)
    return 0;
  const uint64_t b = (want - cur) * resident_threads;
  return b + b / 16;
}

class placement_plan {
public:
  placement_plan() = default;
  explicit placement_plan(uint64_t budget) : budget_(budget) {}

  [[nodiscard]] uint64_t budget() const noexcept { return budget_; }
  [[nodiscard]] uint64_t used() const noexcept { return used_; }         // by live resident arrays
  [[nodiscard]] uint64_t reserved() const noexcept { return reserved_; } // by announced residents to come

  // Announce arrays to be made (bytes each, already rounded to whole lines).
  // Replaces what an earlier announcement left untaken.
  void announce(std::vector<uint64_t> sizes)
  {
    resident_.clear();
    other_.clear();
    reserved_ = 0;
    std::sort(sizes.begin(), sizes.end());
    uint64_t avail = free_bytes();
    for (uint64_t s : sizes) {
      if (s <= avail) {
        resident_.push_back(s);
        avail -= s;
        reserved_ += s;
      } else {
        other_.push_back(s);
      }
    }
  }

  // The budget can promise at most `bytes` in all (the miss path's stack
  // took GPU memory): later plans and arrays get no more than that.
  void cap(uint64_t bytes) noexcept { budget_ = std::min(budget_, bytes); }

  // Announced sizes that are to leave GPU memory, not made yet.
  [[nodiscard]] const std::vector<uint64_t>& leaving() const noexcept { return other_; }

  // An array of `bytes` is being made: true when it is to be resident (the
  // bytes are then counted as used until release()). An array nobody
  // announced must also be no larger than `room`.
  bool take(uint64_t bytes, uint64_t room = UINT64_MAX)
  {
    if (remove_one(resident_, bytes)) {
      reserved_ -= bytes;
      used_ += bytes;
      return true;
    }
    if (remove_one(other_, bytes))
      return false;
    if (bytes <= free_bytes() - std::min(free_bytes(), reserved_) && bytes <= room) {
      used_ += bytes;
      return true;
    }
    return false;
  }

  // Like take() for memory no announcement knows of (a wrapped managed
  // array): it may use only what announced arrays were not promised, and
  // never consumes an announced size that happens to be equal.
  bool take_unannounced(uint64_t bytes, uint64_t room = UINT64_MAX)
  {
    if (bytes <= free_bytes() - std::min(free_bytes(), reserved_) && bytes <= room) {
      used_ += bytes;
      return true;
    }
    return false;
  }

  void release(uint64_t bytes) noexcept { used_ -= std::min(used_, bytes); }

  // Announced sizes not made yet.
  [[nodiscard]] size_t pending() const noexcept { return resident_.size() + other_.size(); }

private:
  [[nodiscard]] uint64_t free_bytes() const noexcept { return budget_ - std::min(budget_, used_); }
  static bool remove_one(std::vector<uint64_t>& v, uint64_t x)
  {
    auto it = std::find(v.begin(), v.end(), x);
    if (it == v.end())
      return false;
    v.erase(it);
    return true;
  }

  uint64_t budget_ = 0;
  uint64_t used_ = 0;
  uint64_t reserved_ = 0;
  std::vector<uint64_t> resident_; // announced, to be resident
  std::vector<uint64_t> other_;    // announced, to leave GPU memory
};

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_PLACEMENT_PLAN_H
