// Placement by size (src/placement_plan.h) on the CPU: announced arrays are
// ranked smallest first against the budget, so only the largest leave GPU
// memory whatever order they are made in; unannounced arrays are first
// come, first served with what the announced residents leave.
#include "../src/placement_plan.h"
#include "expect.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

using bam::detail::placement_plan;
constexpr uint64_t MiB = 1 << 20;

// The case: a large edge array made first, then two small ones. First
// come, first served would keep the edges and push the small arrays out.
void largest_leaves_whatever_the_order()
{
  for (int order = 0; order < 3; ++order) {
    std::vector<uint64_t> made = {4096 * MiB, 256 * MiB, 128 * MiB};
    std::rotate(made.begin(), made.begin() + order, made.end());
    placement_plan p(1024 * MiB);
    p.announce({4096 * MiB, 256 * MiB, 128 * MiB});
    for (uint64_t b : made) {
      const bool res = p.take(b);
      EXPECT(res == (b != 4096 * MiB), "order %d: %llu MiB resident=%d", order, (unsigned long long)(b / MiB), res);
    }
    EXPECT(p.used() == 384 * MiB && p.reserved() == 0 && p.pending() == 0, "order %d: used %llu reserved %llu",
           order, (unsigned long long)p.used(), (unsigned long long)p.reserved());
  }
  // Without the announcement the first (largest) one takes the budget.
  placement_plan q(8192 * MiB);
  EXPECT(q.take(4096 * MiB) && q.take(256 * MiB), "first come, first served with room for all");
  placement_plan r(4200 * MiB);
  EXPECT(r.take(4096 * MiB) && !r.take(256 * MiB), "unannounced: first come keeps its place");
}

void smallest_first_packs_most()
{
  placement_plan p(10 * MiB);
  p.announce({8 * MiB, 4 * MiB, 64 * MiB, 4 * MiB});
  EXPECT(p.take(4 * MiB) && p.take(4 * MiB), "two 4 MiB arrays resident");
  EXPECT(!p.take(8 * MiB), "8 MiB does not fit beside them (4 + 4 + 8 > 10)");
  EXPECT(!p.take(64 * MiB), "64 MiB leaves");
}

void unannounced_respect_reservations()
{
  placement_plan p(100 * MiB);
  p.announce({60 * MiB, 30 * MiB});
  EXPECT(p.reserved() == 90 * MiB, "reserved %llu", (unsigned long long)p.reserved());
  EXPECT(!p.take(20 * MiB), "an unannounced 20 MiB array would eat the announced residents' room");
  EXPECT(p.take(10 * MiB), "10 MiB fits beside them");
  EXPECT(p.take(60 * MiB) && p.take(30 * MiB), "announced residents keep their room");
  EXPECT(p.used() == 100 * MiB, "used %llu", (unsigned long long)p.used());
  p.release(60 * MiB);
  EXPECT(p.take(50 * MiB), "freed room is reused");
}

void already_resident_count()
{
  placement_plan p(100 * MiB);
  EXPECT(p.take(70 * MiB), "first array resident");
  p.announce({20 * MiB, 40 * MiB});
  EXPECT(p.take(40 * MiB) == false && p.take(20 * MiB), "only 30 MiB left: the 20 MiB array stays, 40 leaves");
}

// runtime::end_plan (the first checked launch): sizes announced but never
// made give their room back.
void dropped_plan_frees_room()
{
  placement_plan p(100 * MiB);
  p.announce({80 * MiB, 500 * MiB});
  EXPECT(!p.take(30 * MiB), "30 MiB does not fit beside the 80 MiB reservation");
  p.announce({});
  EXPECT(p.reserved() == 0 && p.pending() == 0, "dropped plan still reserves %llu", (unsigned long long)p.reserved());
  EXPECT(p.take(30 * MiB), "30 MiB fits once the plan is dropped");
}

void zero_budget()
{
  placement_plan p(0);
  p.announce({1 * MiB});
  EXPECT(!p.take(1 * MiB) && !p.take(4096), "a zero budget keeps nothing resident");
}
// The miss path's stack (runtime::impl::ensure_stack): an unannounced array
// must fit the room the stack leaves until it is reserved; once reserved,
// the budget is capped at what is left and a new plan is made against it.
void stack_room_and_cap()
{
  placement_plan p(600 * MiB);
  EXPECT(!p.take(400 * MiB, 336 * MiB), "400 MiB does not fit the 336 MiB the stack leaves");
  EXPECT(p.take(300 * MiB, 336 * MiB), "300 MiB does");
  p.announce({250 * MiB, 200 * MiB});
  EXPECT(p.leaving().size() == 1 && p.leaving()[0] == 250 * MiB, "the 250 MiB array leaves (300 used, 200 fits)");
  p.cap(p.used() + 36 * MiB); // the stack took 264 MiB of the 300 free
  EXPECT(p.budget() == 336 * MiB, "budget after the stack: %llu", (unsigned long long)p.budget());
  p.announce({250 * MiB, 200 * MiB});
  EXPECT(p.leaving().size() == 2, "after the stack neither fits beside the 300 MiB resident");
  p.cap(1000 * MiB);
  EXPECT(p.budget() == 336 * MiB, "a cap above the budget leaves it as it is");
  placement_plan q(3 * MiB); // an explicit small budget on a GPU with room
  q.cap(100000 * MiB);
  EXPECT(q.budget() == 3 * MiB && q.take(1 * MiB, 80000 * MiB), "a small BAM_GPU_BUDGET is kept");
}

// Wrapped managed memory is the program's own: it may use what announced
// arrays were not promised, and an announced array of the same size keeps
// its place (take() would have consumed the announcement).
void wrapped_memory_takes_no_announcement()
{
  placement_plan p(100 * MiB);
  p.announce({60 * MiB, 30 * MiB});
  EXPECT(!p.take_unannounced(30 * MiB), "a 30 MiB wrap must not take the announced 30 MiB array's room");
  EXPECT(p.pending() == 2 && p.reserved() == 90 * MiB, "announcements untouched: pending %zu reserved %llu",
         p.pending(), (unsigned long long)p.reserved());
  EXPECT(p.take_unannounced(10 * MiB), "10 MiB beside the announced residents");
  EXPECT(p.take(60 * MiB) && p.take(30 * MiB), "announced residents keep their room");
  EXPECT(!p.take_unannounced(1 * MiB), "the budget is spent");
  p.release(10 * MiB);
  EXPECT(p.take_unannounced(8 * MiB, 9 * MiB) && !p.take_unannounced(2 * MiB, 1 * MiB), "room limits it");
  placement_plan zero(0);
  EXPECT(!zero.take_unannounced(1), "a zero budget takes nothing");
}

void stack_estimate()
{
  using bam::detail::stack_reservation_estimate;
  // H200: 132 SMs x 2048 threads, 1 KiB -> 2 KiB: 264 MiB, +1/16.
  const uint64_t e = stack_reservation_estimate(1024, 2048, 132ull * 2048);
  EXPECT(e == 264 * MiB + 264 * MiB / 16, "estimate %llu", (unsigned long long)e);
  EXPECT(stack_reservation_estimate(2048, 2048, 1000) == 0, "no raise, no reservation");
  EXPECT(stack_reservation_estimate(4096, 2048, 1000) == 0, "a larger limit set by the program stays");
}
} // namespace

int main()
{
  largest_leaves_whatever_the_order();
  smallest_first_packs_most();
  unannounced_respect_reservations();
  already_resident_count();
  dropped_plan_frees_room();
  zero_budget();
  stack_room_and_cap();
  wrapped_memory_takes_no_announcement();
  stack_estimate();
  if (test_failures != 0) {
    std::printf("placement_test: %d failure(s)\n", test_failures);
    return 1;
  }
  std::printf("placement_test: ok\n");
  return 0;
}
