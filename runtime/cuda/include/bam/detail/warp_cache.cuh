// Warp-coalesced cache access (thesis §5.3.3, "warp coalescing").
//
// Lanes that want the same line find each other with __match_any_sync on the
// address of the line's state word (unique across arrays and runtimes), and
// the lowest lane of each group (the leader) does the cache work for all of
// them: one fused atomic pins the line with a reference per lane, the slot
// address goes to the peers with __shfl_sync, and after the lanes are done
// one atomic per group drops the references again.
//
// Groups are independent (warp_resolve): a group that hits uses its line at
// once; a group whose leader claimed the line fills it (the leader requests
// it, the group's lanes copy it together: from the backing memory for
// pointer backends, from the queue's bounce buffer for emu) and uses it,
// or, when no slot is free, uses the line where it is (the bypass); a
// group whose line another thread is fetching waits holding no pin. Only
// the group's own lanes synchronize with each other, never a group with
// another: lanes of one warp that entered from different points of a
// divergent kernel may be active together, and on an H200 a vote taken
// over the whole active mask let one group's fill run with another group's
// claim (pagerank's port at -O3). A group never waits for a free slot while
// it holds a pin, so plain accesses cannot starve the cache whatever its
// size (tests/warp_emu_test.cpp checks tiny caches).
#ifndef BAM_DETAIL_WARP_CACHE_CUH
#define BAM_DETAIL_WARP_CACHE_CUH

#include <bam/detail/cache_core.cuh>
#include <bam/detail/cache_types.cuh>
#include <bam/detail/cold_call.cuh>
#include <bam/detail/config.cuh>
#include <bam/detail/device_io.cuh>

#if BAM_HAS_DEVICE_CODE

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

__device__ __forceinline__ uint32_t lane_id()
{
#if defined(BAM_WARP_EMULATION)
  return bam_emu_lane_id();
#else
  uint32_t l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
#endif
}

// Who took part in one coalesced access.
struct warp_group {
  uint32_t mask;   // lanes that made the call
  uint32_t peers;  // lanes that share this lane's line
  uint32_t leader; // lowest lane of `peers`
  bool bypass;     // no slot could be had: the group uses the backing store while it holds the line's claim
  nvme::queue_hold hold; // storage bypass, leader: the queue slot whose buffer holds the line
};

template <class U>
__device__ __forceinline__ U* shfl_ptr(uint32_t mask, U* p, uint32_t src)
{
  return reinterpret_cast<U*>(__shfl_sync(mask, reinterpret_cast<unsigned long long>(p), src));
}

// What the warp copies for one fetched line (pointer backends).
struct fill_plan {
  unsigned char* dst;       // the slot
  const unsigned char* src; // the line in the backing store
  unsigned char* wb;        // where a dirty victim goes first, or nullptr
};

__device__ __forceinline__ fill_plan shfl_plan(uint32_t mask, const fill_plan& p, uint32_t src_lane)
{
  return fill_plan{shfl_ptr(mask, p.dst, src_lane), shfl_ptr(mask, p.src, src_lane), shfl_ptr(mask, p.wb, src_lane)};
}

// The leader's part of a fill, kept in memory so the out-of-line steps
// below need few registers each.
struct fill_job {
  fill_plan plan{nullptr, nullptr, nullptr};
  victim v;
  uint32_t slot = no_slot;
  int status = 0;           // storage read status
  nvme::queue_hold hold{};  // storage: the queue slot holding the data
  bool bypass = false;      // storage: no slot; the group reads hold's buffer (fill_try_bypass_storage)
};

// Pointer backends, leader: take a slot (or, with may_bypass and none
// free, none) and say what the group copies.
__device__ __noinline__ inline void fill_claim_pointer(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                       bool may_bypass, fill_job& j)
{
  j.slot = may_bypass ? try_allocate_slot(c, j.v) : allocate_slot(c, j.v, m.id, line);
  j.plan.src = backing_line(c, m, line);
  j.plan.dst = j.slot == no_slot ? nullptr : c.slot_data(j.slot);
  j.plan.wb = nullptr;
  if (j.slot != no_slot && j.v.present && j.v.dirty)
    j.plan.wb = backing_line(c, c.arrays[j.v.array_id], j.v.line);
}

// Pointer backends, leader, after the group's copies: retire the victim
// and publish the line.
__device__ __noinline__ inline void fill_publish_pointer(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                         const fill_job& j, bool write)
{
  __threadfence(); // the warp's copies (both directions) before the line states change
  if (j.v.present) {
    if (j.v.dirty) {
      stat_add(c, stat::writebacks, 1);
      stat_add(c, stat::io_writes, 1);
      stat_add(c, stat::io_write_bytes, c.line_bytes());
    }
    finish_evict(c, j.v);
  }
  stat_add(c, stat::io_reads, 1);
  stat_add(c, stat::io_read_bytes, c.line_bytes());
  install(c, m, line, j.slot, write);
}

// The lanes of `mask` copy a line together (out of line).
__device__ __noinline__ inline void copy_line_group(void* dst, const void* src, uint64_t bytes, uint32_t mask)
{
  const uint32_t lane = lane_id();
  copy_line_warp(dst, src, bytes, __popc(mask & ((1u << lane) - 1u)), __popc(mask));
}

// Pointer backends: the group's leader f (it claimed the line) takes a
// slot, the group's lanes copy the line in (after writing a dirty victim
// out), and f publishes it. Returns the line's data to every lane.
//
// Out of line, like the other miss-path functions, and each step called
// through BAM_COLD (bam/detail/cold_call.cuh), so no step's registers add
// to another's or to the accessing kernel's.
//
// Forward progress: with `may_bypass` (element accesses, which drop their
// pins before returning), a leader that finds no free slot in one sweep of
// the clock does not wait for one: the group keeps the line's claim (busy,
// so no one else fetches or caches it meanwhile) and works on the line in
// the backing store itself; warp_release gives the claim back (busy ->
// invalid). No cache size can stall element accesses that way. array_ref
// and odt_tile keep lines across calls and always take a slot.
template <bool Write>
__device__ __noinline__ unsigned char* group_fill(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                  warp_group& g, uint32_t& slot, bool may_bypass)
{
  const uint32_t mask = g.peers, f = g.leader;
  fill_job j;
  if (lane_id() == f) {
    BAM_COLD(fill_claim_pointer)(c, m, line, may_bypass, j);
    slot = j.slot;
  }
  const fill_plan plan = shfl_plan(mask, j.plan, f);
  if (plan.dst == nullptr) { // bypass: the line stays claimed by this group until warp_release
    g.bypass = true;
    __syncwarp(mask);
    return const_cast<unsigned char*>(plan.src);
  }
  __syncwarp(mask); // orders f's eviction CAS (acquire) before the lanes read the victim
  if (plan.wb != nullptr) {
    BAM_COLD(copy_line_group)(plan.wb, plan.dst, c.line_bytes(), mask);
    __syncwarp(mask); // the write-back has read the slot before anyone overwrites it
  }
  BAM_COLD(copy_line_group)(plan.dst, plan.src, c.line_bytes(), mask);
  __syncwarp(mask);
  if (lane_id() == f)
    BAM_COLD(fill_publish_pointer)(c, m, line, j, Write);
  __syncwarp(mask); // published before any lane uses it: an array_ref writer marks it dirty at once
  return plan.dst;
}

// Storage backends, leader: read `line` into a queue slot (hold) for dst
// (BOUNCE mode: the data stays in the queue's buffer, hold.src; DIRECT
// mode: the device writes into dst). Out of line and shared by the fill
// and the bypass: the queue's inlined steps would otherwise add their
// registers to each caller's.
__device__ __noinline__ inline int read_line_held(const cache_ctx& c, const array_meta& m, uint64_t line, void* dst,
                                                  nvme::queue_hold& hold)
{
  return storage_read_held(c.queues, m.base + (line << c.line_shift), uint32_t(c.line_bytes()), dst, hold);
}

// Storage backends, leader, element reads only: one sweep of the clock for
// a free slot (j.slot; fill_claim_storage goes on with it), and with none,
// the bypass: the line is read into the queue's own buffer (j.hold,
// j.bypass) and the group reads its elements there while it keeps the
// line's claim and the queue slot (warp_release gives both back). The
// queue's depth, not the cache's free lines, then bounds the reads in
// flight. A read that fails in the device (an NVMe error status: the queue
// slot is still ours) is recorded like a failed fill and the group reads
// zeros from the slot's buffer, as it would from a zero-filled line:
// waiting for a cache slot instead could wait forever when every line is
// pinned. A read the queue never completed (timeout, failed queue) leaves
// j.bypass false: the waiting fill tries again and records the fault.
__device__ __noinline__ inline void fill_try_bypass_storage(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                            fill_job& j)
{
  if (!storage_holds_data(c.queues))
    return;
  j.slot = try_allocate_slot(c, j.v);
  if (j.slot != no_slot)
    return;
  // BOUNCE mode does not write to the destination; it must only be aligned.
  j.status = BAM_COLD(read_line_held)(c, m, line, c.slots, j.hold);
  if (j.status != 0 && !(j.hold.active && j.hold.src != nullptr)) {
    storage_retire(c.queues, j.hold);
    return;
  }
  if (j.status != 0) {
    record_fault(c, fault_kind::read, j.status, m.id, line);
    zero_fill(const_cast<uint8_t*>(j.hold.src), c.line_bytes());
  }
  j.bypass = true;
  j.plan.src = j.hold.src;
  stat_add(c, stat::io_reads, 1);
  stat_add(c, stat::io_read_bytes, c.line_bytes());
  count_array_io(c, m.id, true);
}

// Storage backends, leader: take a slot (unless fill_try_bypass_storage
// took one), write a dirty victim back, and read the line (the data stays
// in the queue's bounce buffer, j.hold).
__device__ __noinline__ inline void fill_claim_storage(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                       fill_job& j)
{
  device_io io;
  if (j.slot == no_slot)
    j.slot = allocate_slot(c, j.v, m.id, line);
  if (j.v.present)
    evict_victim(c, j.v, j.slot, io);
  j.plan.dst = c.slot_data(j.slot);
  j.status = BAM_COLD(read_line_held)(c, m, line, j.plan.dst, j.hold);
  j.plan.src = j.status == 0 ? j.hold.src : nullptr;
}

// Storage backends, leader, after the group's copy: give the queue slot
// back, zero-fill a failed line, publish.
__device__ __noinline__ inline void fill_publish_storage(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                         fill_job& j, bool write)
{
  c.queues->retire(j.hold);
  if (j.status != 0) {
    record_fault(c, fault_kind::read, j.status, m.id, line);
    zero_fill(j.plan.dst, c.line_bytes());
  }
  stat_add(c, stat::io_reads, 1);
  stat_add(c, stat::io_read_bytes, c.line_bytes());
  __threadfence(); // the lanes' copies before the line state changes
  install(c, m, line, j.slot, write);
}

// The lanes of `mask` copy a line out of a queue's bounce buffer: four
// loads in flight per lane, __ldcv because the buffer is reused.
__device__ __noinline__ inline void copy_bounce_group(void* dst, const void* src, uint64_t bytes, uint32_t mask)
{
  const uint32_t lane = lane_id();
  const uint32_t rank = __popc(mask & ((1u << lane) - 1u)), lanes = __popc(mask);
  const uint32_t n = uint32_t(bytes / sizeof(uint4));
  const uint4* sv = static_cast<const uint4*>(src) + rank;
  uint4* dv = static_cast<uint4*>(dst) + rank;
  if (lanes == 32) { // constant stride: one address pair for four loads in flight
BAM_NO_UNROLL
    for (uint32_t i = rank; i < n; i += 128, dv += 128, sv += 128) {
      const uint4 a = __ldcv(sv);
      const uint4 b = i + 32 < n ? __ldcv(sv + 32) : a;
      const uint4 x = i + 64 < n ? __ldcv(sv + 64) : a;
      const uint4 y = i + 96 < n ? __ldcv(sv + 96) : a;
      dv[0] = a;
      if (i + 32 < n)
        dv[32] = b;
      if (i + 64 < n)
        dv[64] = x;
      if (i + 96 < n)
        dv[96] = y;
    }
    return;
  }
BAM_NO_UNROLL
  for (uint32_t i = rank; i < n; i += 2 * lanes, dv += 2 * lanes, sv += 2 * lanes) {
    const uint4 a = __ldcv(sv);
    const uint4 b = i + lanes < n ? __ldcv(sv + lanes) : a;
    dv[0] = a;
    if (i + lanes < n)
      dv[lanes] = b;
  }
}

// Storage backends: the group's leader f (it claimed the line) takes a
// slot, writes a dirty victim back and waits for its read; then the group's
// lanes copy the line out of the queue's bounce buffer together (coalesced
// PCIe reads; one thread copying 4 KiB alone issues 256 small reads, and
// thousands of such copies saturate PCIe on request count, which capped
// one-leader-per-warp fetches at ~0.6 M lines/s), and f publishes it.
// DIRECT mode (nvme) reads straight into the slot: nothing to copy.
//
// Forward progress: reads (`may_bypass`, not Write) that find no free slot
// use the line in the queue's buffer (fill_try_bypass_storage), as the pointer
// backends use the backing store. Writes, updates and atomics wait for a
// slot: a bypassed write would need a second queue slot to write the line
// back while holding the first, and queue slots held that way could run
// out. They hold no pin while they wait, and tiles leave a quarter of the
// cache free (odt_tile::holding_warps), so they wait for fills, not for
// pins that cannot drop.
template <bool Write>
__device__ __noinline__ unsigned char* group_fill_storage(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                          warp_group& g, uint32_t& slot, bool may_bypass)
{
  const uint32_t mask = g.peers, f = g.leader;
  fill_job j;
  if (lane_id() == f) {
    if (may_bypass && !Write)
      BAM_COLD(fill_try_bypass_storage)(c, m, line, j);
    if (!j.bypass)
      BAM_COLD(fill_claim_storage)(c, m, line, j);
    slot = j.slot;
  }
  unsigned char* dst = shfl_ptr(mask, j.plan.dst, f);
  const unsigned char* src = shfl_ptr(mask, j.plan.src, f);
  if (dst == nullptr) { // bypass: the lanes read the queue's buffer; warp_release retires it and unclaims the line
    g.bypass = true;
    if (lane_id() == f)
      g.hold = j.hold;
    __syncwarp(mask); // f's acquire of the completion before the lanes read the buffer
    return const_cast<unsigned char*>(src);
  }
  __syncwarp(mask); // f's acquire of the completion before the lanes read the bounce buffer
  if (src != nullptr)
    BAM_COLD(copy_bounce_group)(dst, src, c.line_bytes(), mask);
  __syncwarp(mask); // the copy is done before the slot is retired and the line published
  if (lane_id() == f)
    BAM_COLD(fill_publish_storage)(c, m, line, j, Write);
  __syncwarp(mask);
  return dst;
}

// A leader waiting for a line another warp is fetching, without holding
// pins meanwhile. Returns with the group's n pins taken: `hit` (slot set)
// or `fetch` (the line was evicted meanwhile and this leader claimed it:
// its group fills it, through group_fill and its bypass).
template <bool Write>
__device__ __noinline__ probe leader_wait(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t n,
                                          uint32_t& slot)
{
  stall_clock sc;
  for (;;) {
    const probe p = begin_acquire(m, line, n, Write, slot);
    if (p != probe::wait) {
      if (p == probe::fetch)
        stat_add(c, stat::misses, 1); // the line was evicted while we waited
      return p;
    }
    line_word::unpin(m.state + line, n);
    while (line_word::is_busy(atomic_load(m.state + line, order::relaxed)))
      if (!sc.wait(c))
        fatal(c, fault_kind::stalled, m.id, line);
  }
}

// The leader of each group pins its line for all peers with one atomic and
// classifies it; every peer learns the result. A group whose line is busy
// elsewhere drops its pins again at once (it waits later, holding nothing).
template <bool Write>
__device__ probe warp_probe(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t elem_bytes, warp_group& g,
                            uint32_t& slot, uint32_t mask)
{
  g.mask = mask;
  g.peers = __match_any_sync(g.mask, reinterpret_cast<unsigned long long>(m.state + line));
  g.leader = __ffs(g.peers) - 1;
  g.bypass = false;
  g.hold = nvme::queue_hold{};
  probe p = probe::hit;
  if (lane_id() == g.leader) {
    const uint32_t n = __popc(g.peers);
    p = begin_acquire(m, line, n, Write, slot);
    if (p == probe::wait)
      release(m, line, n);
    stat_add(c, stat::accesses, n);
    stat_add(c, stat::bytes, uint64_t(n) * elem_bytes);
    stat_add(c, p == probe::fetch ? stat::misses : stat::hits, 1);
  }
  return probe(__shfl_sync(g.peers, uint32_t(p), g.leader));
}

// This group's slot data, after the leader's acquire (the __syncwarp orders
// it before every peer's data accesses).
__device__ __forceinline__ unsigned char* group_data(const cache_ctx& c, const warp_group& g, uint32_t slot)
{
  slot = __shfl_sync(g.peers, slot, g.leader);
  __syncwarp(g.peers);
  return c.slot_data(slot);
}

// The end of a bypass, leader: the lanes' writes to the backing store
// (pointer backends) are fenced first, so the line's next fetcher copies
// them; a storage read's queue slot is given back; then the claim.
__device__ __noinline__ inline void end_bypass(const cache_ctx& c, const array_meta& m, uint64_t line, warp_group& g)
{
  __threadfence();
  if (g.hold.active)
    storage_retire(c.queues, g.hold);
  unclaim(m, line);
}

// Drop the group's references once every peer is done with the line (and
// end a bypass).
__device__ __forceinline__ void warp_release(const cache_ctx& c, const array_meta& m, uint64_t line, warp_group& g)
{
  __syncwarp(g.peers);
  if (lane_id() == g.leader) {
    if (g.bypass)
      BAM_COLD(end_bypass)(c, m, line, g);
    release(m, line, __popc(g.peers));
  }
}

// Resolve this lane's group to a pinned, valid line and call use(data)
// once, with the line pinned for the group.
// Resolve this lane's group to a pinned, valid line (or, with may_bypass
// and no free slot, to the line in the backing store, g.bypass) and return
// its data.
template <bool Write>
__device__ unsigned char* warp_resolve(const cache_ctx& c, const array_meta& m, uint64_t line, warp_group& g, probe p,
                                       uint32_t slot, bool may_bypass)
{
  if (p == probe::wait) {
    if (lane_id() == g.leader)
      p = BAM_COLD(leader_wait<Write>)(c, m, line, __popc(g.peers), slot);
    p = probe(__shfl_sync(g.peers, uint32_t(p), g.leader));
  }
  if (p == probe::hit)
    return group_data(c, g, slot);
  if (is_pointer_access(c.access))
    return BAM_COLD(group_fill<Write>)(c, m, line, g, slot, may_bypass);
  return BAM_COLD(group_fill_storage<Write>)(c, m, line, g, slot, may_bypass);
}

// Pin `line` for every calling lane and return its data; each lane then
// owns one reference (array_ref drops them with warp_release_each).
// `mask`: the lanes making the call (all of them call it together).
template <bool Write>
__device__ unsigned char* warp_acquire(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t elem_bytes,
                                       warp_group& g, bool may_bypass, uint32_t mask)
{
  uint32_t slot = no_slot;
  const probe p = warp_probe<Write>(c, m, line, elem_bytes, g, slot, mask);
  return warp_resolve<Write>(c, m, line, g, p, slot, may_bypass);
}

// The whole pinning step of an element access, out of line: one copy per
// program, and its registers do not count against the caller's hit path.
template <bool Write>
__device__ __noinline__ unsigned char* warp_pin(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                uint32_t elem_bytes, warp_group& g, uint32_t mask)
{
  return warp_acquire<Write>(c, m, line, elem_bytes, g, true, mask);
}

// Pin for lanes that keep the line across calls (array_ref, odt_tile):
// out of line too, never bypassing.
template <bool Write>
__device__ __noinline__ unsigned char* warp_hold(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                 uint32_t elem_bytes)
{
  warp_group g;
  return warp_acquire<Write>(c, m, line, elem_bytes, g, false, __activemask());
}

// One element access, coalesced: f(pointer to the line's data) runs while
// the line is pinned, then the group's pins are dropped (one atomic).
template <bool Write, class F>
__device__ __forceinline__ auto warp_access(const cache_ctx& c, const array_meta& m, uint64_t line,
                                            uint32_t elem_bytes, F f, uint32_t mask)
{
  warp_group g;
  unsigned char* data = BAM_COLD(warp_pin<Write>)(c, m, line, elem_bytes, g, mask);
  auto r = f(data);
  warp_release(c, m, line, g);
  return r;
}

// ---------------------------------------------------------------- hit path
//
// Reads of elements need no pin when the line is cached: hit_read reads
// the element optimistically and checks afterwards that the slot still
// held the line while it read (a seqlock read).
//
//   1. e = slot_of[line]            e = (slot s, fill number q)
//   2. v = slot s's element         issued after e arrived (its address is s's)
//   3. f = slot_seq[s]              issued after v arrived; hit iff f == q
//
// Why a hit returns the line's value, given that step 2 reads data at
// least as new as the fill that recorded e, and step 3 sees any fill
// whose stores step 2 saw (how each build orders the steps: below):
//  * q was recorded by install() (release store of e) after the fill that
//    bumped slot_seq[s] to q had copied the line into s, so step 2 reads
//    data at least as new as that fill.
//  * Any later change of s's data is made by a new fill, and every fill
//    first bumps slot_seq[s] and then fences (release) before its first
//    store into the slot (cache_core.cuh, begin_fill). If step 2 read any
//    byte such a fill wrote, step 3 sees the bump, so f != q and the read
//    is retried on the pinned path.
//  * Evicting a line does not touch its data (only a following fill does),
//    so reading a line that is being evicted returns its last value.
//  * No ABA: fill numbers only grow (32 bits: a read would have to stay in
//    flight across 2^32 fills of one slot).
// Writers of the same line through the cache (pinned, non-const arrays)
// race with a hit read exactly as they race with a pinned read.
//
// How the steps are ordered (one of these per build):
//
//  default on GPUs (sm_70 and later): by address dependency, no acquire.
//    Step 2's address is computed from step 1's value and step 3's from
//    step 2's value (ANDed with array_meta::zero, a 0 ptxas cannot fold),
//    so each load is issued only after the previous one returned. Steps 2
//    and 3 are L2 loads (ld.global.cg / ld.relaxed.gpu: they bypass L1),
//    and L2 is where a fill's stores become visible: the fill's fences
//    (begin_fill's release fence, install's release store of e) make its
//    earlier stores reach L2 before its later ones. So step 2, issued
//    after e was read, cannot read data older than the fill e names, and
//    step 3, issued after step 2 returned a byte of a later fill, cannot
//    read a fill number older than that fill's bump. THIS RELIES ON
//    HARDWARE BEHAVIOUR the PTX memory model does not promise: the model
//    has no dependency ordering (only acquire/release and fences order
//    loads), and it calls step 2 a data race. What it relies on is that
//    NVIDIA GPUs do not issue a load before the value its address depends
//    on has arrived (no value prediction) and that an L2 load returns the
//    value L2 holds when the load arrives there. Step 1 is a weak load,
//    which L1 may answer with an entry older than the current one (the
//    line was evicted since, or moved): a stale (s, q) still validates
//    only while slot s holds fill q, which installed this line (fill
//    numbers name one fill of one slot), so the element read is the
//    line's value as of its eviction; a stale "not cached" takes the
//    pinned path. So a[i] is as stale as a weak load p[i] of plain memory
//    may be (the entry line covers more elements than a data line does):
//    a program that orders a write to an element before its read with its
//    own acquire (a fence or acquire load) invalidates L1 with it, a
//    thread's own writes go through the pinned path, whose acquire pin
//    invalidates its SM's L1 before its next read, and kernel launches
//    start with a clean L1. -DBAM_HIT_ENTRY_L2 makes step 1 an L2 load
//    (ld.relaxed.gpu) as well.
//    Measured against the acquire build in the same run: bench/hitpath
//    (check.sh) and docs/runtime-performance.md.
//
//  -DBAM_HIT_ORDER_BY_ACQUIRE (the default before; follows the PTX memory
//    model): steps 1 and 2 are acquire loads (elements of 1-8 bytes;
//    larger ones: a plain load and an acquire fence). Step 2 is formally
//    a load racing with the fill's plain stores (the seqlock pattern;
//    making the data load itself an acquire is the reader side Boehm
//    gives for seqlocks in C++). On sm_90 an acquire load is LDG.STRONG.GPU
//    plus CCTL.IVALL (invalidate the SM's L1), twice per access: measured
//    on an H200 that caps per-element linear hits at ~0.26 of a plain read
//    whatever the occupancy (docs/runtime-performance.md).
//
//  -DBAM_HIT_ORDER_BY_FENCE (older still, for comparison in bench/hitpath),
//    the CPU warp emulation, and GPUs before sm_70: acquire load of the
//    entry, plain element load, acquire fence, relaxed fill-number load.
//    The CPU emulation reads the element through an unsanitized load so
//    ThreadSanitizer does not flag the seqlock race.
//
// The loads are PTX on global addresses: cuda::atomic_ref's loads went
// through generic addresses (LD, not LDG) and stored each address to the
// stack first (an STL per load).
template <class V>
#if defined(BAM_WARP_EMULATION)
__attribute__((noinline, no_sanitize("thread")))
#else
__device__ __forceinline__
#endif
V racy_load(const V* p)
{
  return *p;
}

// PTX loads with .acquire/.relaxed need sm_70; older GPUs take the fence
// path (BAM_HIT_PTX_LOADS 0).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
#  define BAM_HIT_PTX_LOADS 1
#else
#  define BAM_HIT_PTX_LOADS 0
#endif

#if BAM_HIT_PTX_LOADS
__device__ __forceinline__ uint64_t ld_acquire_global(const uint64_t* p)
{
  uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint64_t ld_relaxed_global(const uint64_t* p)
{
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// A weak load (L1-cacheable): the map entry of the default ordering.
__device__ __forceinline__ uint64_t ld_weak_global(const uint64_t* p)
{
  uint64_t v;
  asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint32_t ld_relaxed_global(const uint32_t* p)
{
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Step 2 on the GPU: the element as an acquire load (sizes 1, 2, 4, 8;
// PTX has no vector acquire loads, so larger elements take the fence).
template <class V>
__device__ __forceinline__ V ld_acquire_elem(const V* p)
{
  V v;
  if constexpr (sizeof(V) == 8) {
    unsigned long long w;
    asm volatile("ld.acquire.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    memcpy(&v, &w, 8);
  } else if constexpr (sizeof(V) == 4) {
    unsigned int w;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(w) : "l"(p) : "memory");
    memcpy(&v, &w, 4);
  } else if constexpr (sizeof(V) == 2) {
    unsigned short w;
    asm volatile("ld.acquire.gpu.global.b16 %0, [%1];" : "=h"(w) : "l"(p) : "memory");
    memcpy(&v, &w, 2);
  } else {
    static_assert(sizeof(V) == 1, "ld_acquire_elem: 1, 2, 4 or 8 bytes");
    unsigned short w;
    asm volatile("ld.acquire.gpu.global.u8 %0, [%1];" : "=h"(w) : "l"(p) : "memory");
    const unsigned char b = static_cast<unsigned char>(w);
    memcpy(&v, &b, 1);
  }
  return v;
}
#endif

// Selecting the ordering (see above). The default is the acquire ordering,
// which the PTX memory model justifies: measured on an H200 (session 12,
// bench/hitpath/check.sh, 64 registers, both with one counter reduction)
// the dependency ordering gained 3% on linear hits (0.273 against 0.265
// of a plain read) and 10% on random ones (0.853 against 0.776), neither
// bar-changing, for relying on hardware behaviour the model does not
// promise. -DBAM_HIT_ORDER_BY_DEPENDENCY opts in (it pays at lower
// register counts: 0.49 at 32 registers against 0.25).
#if BAM_HIT_PTX_LOADS && defined(BAM_HIT_ORDER_BY_DEPENDENCY) && !defined(BAM_HIT_ORDER_BY_FENCE)
#  define BAM_HIT_DEPENDENCY_ORDER 1
#else
#  define BAM_HIT_DEPENDENCY_ORDER 0
#endif

// (`zero` is array_meta::zero: 0 at run time, unknown to ptxas, which
// folds an AND with a literal 0 even inside inline PTX.)
template <class V>
__device__ __forceinline__ uint32_t dependency_zero(const V& v, uint32_t zero)
{
  uint32_t w = 0;
  memcpy(&w, &v, sizeof(w) < sizeof(V) ? sizeof(w) : sizeof(V));
  return w & zero;
}

#if BAM_HIT_DEPENDENCY_ORDER
// The element load of the dependency ordering: L2 (ld.global.cg), so no L1
// line older than the map entry can answer it.
template <class V>
__device__ __forceinline__ V load_l2(const V* p)
{
  V v;
  if constexpr (sizeof(V) == 16) {
    const uint4 w = __ldcg(reinterpret_cast<const uint4*>(p));
    memcpy(&v, &w, 16);
  } else if constexpr (sizeof(V) == 8) {
    const unsigned long long w = __ldcg(reinterpret_cast<const unsigned long long*>(p));
    memcpy(&v, &w, 8);
  } else if constexpr (sizeof(V) == 4) {
    const unsigned int w = __ldcg(reinterpret_cast<const unsigned int*>(p));
    memcpy(&v, &w, 4);
  } else if constexpr (sizeof(V) == 2) {
    const unsigned short w = __ldcg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&v, &w, 2);
  } else {
    const unsigned char w = __ldcg(reinterpret_cast<const unsigned char*>(p));
    memcpy(&v, &w, 1);
  }
  return v;
}
#endif

template <class V>
__device__ __forceinline__ bool hit_read(const array_meta& m, const unsigned char* slots, uint32_t line_shift,
                                         uint64_t line, uint64_t sub, V& out)
{
#if BAM_HIT_DEPENDENCY_ORDER
  // map entry (weak: L1 may answer) -> element (L2; its address depends
  // on the entry) -> fill number (strong, L2; its address depends on the
  // element). Why this is enough, and what it relies on: above.
#  if defined(BAM_HIT_ENTRY_L2)
  const uint64_t e = ld_relaxed_global(m.slot_of + line);
#  else
  const uint64_t e = ld_weak_global(m.slot_of + line);
#  endif
  const uint32_t s = line_map::slot(e);
  if (s == no_slot)
    return false;
  out = load_l2(reinterpret_cast<const V*>(slots + (uint64_t(s) << line_shift)) + sub);
  return ld_relaxed_global(m.seq + s + dependency_zero(out, m.zero)) == line_map::fill(e);
#elif BAM_HIT_PTX_LOADS && !defined(BAM_HIT_ORDER_BY_FENCE) // BAM_HIT_ORDER_BY_ACQUIRE
  const uint64_t e = ld_acquire_global(m.slot_of + line);
  const uint32_t s = line_map::slot(e);
  if (s == no_slot)
    return false;
  const V* p = reinterpret_cast<const V*>(slots + (uint64_t(s) << line_shift)) + sub;
  if constexpr (sizeof(V) <= 8) {
    out = ld_acquire_elem(p);
  } else {
    out = racy_load(p);
    atomic_fence(order::acquire);
  }
  return ld_relaxed_global(m.seq + s) == line_map::fill(e);
#else
  // CPU emulation, GPUs before sm_70, and BAM_HIT_ORDER_BY_FENCE (the path
  // before the acquire loads, counters included: bench/hitpath builds it
  // to compare old and new in one run).
  const uint64_t e = atomic_load(m.slot_of + line, order::acquire);
  const uint32_t s = line_map::slot(e);
  if (s == no_slot)
    return false;
  out = racy_load(reinterpret_cast<const V*>(slots + (uint64_t(s) << line_shift)) + sub);
  atomic_fence(order::acquire);
  return atomic_load(m.seq + s, order::relaxed) == line_map::fill(e);
#endif
}

// Counters for reads served by hit_read (`mask`: the lanes that hit): one
// lane per warp access adds them, with ONE reduction: the number of lanes
// goes to the row's hit_elems bucket of the element size (1, 2, 4 or 8
// bytes), which the host adds to accesses and (times the size) to bytes
// when it sums the rows (stats_row, fold_hit_elems). Larger elements add
// accesses and bytes directly and their lanes to hit_elems[4] (three
// reductions). Hits of the pin-free path are element accesses, not line
// probes: stats_row::hits and misses are the pinned path's probes.
// (Three reductions per warp access before: accesses, bytes, hits; on an
// H200 the counters cost a fifth of the linear hit rate at 32 registers.
// -DBAM_HIT_STATS_PER_FIELD brings them back for bench/hitpath; hits then
// also count one probe per warp access of the hit path, as they did.)
//
// `rows`/`n_rows`: the cache's counter rows (cache_ctx::stats, nullptr
// when off), loaded by the caller before the hit path's loads, so the
// load overlaps the map entry's.
template <uint32_t ElemBytes>
__device__ __forceinline__ void hit_stats(stats_row* rows, uint32_t n_rows, uint32_t mask)
{
  if (rows == nullptr)
    return;
  if (lane_id() == uint32_t(__ffs(mask) - 1)) {
    const unsigned long long n = __popc(mask);
#if BAM_IS_DEVICE
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    stats_row& r = rows[sm < n_rows ? sm : sm % n_rows];
#  if defined(BAM_HIT_ORDER_BY_FENCE) // the hit path as it was before the acquire loads (bench/hitpath)
    atomicAdd(&r.accesses, n);
    atomicAdd(&r.bytes, n * ElemBytes);
    atomicAdd(&r.hits, 1ull);
#  else
    // Reductions on global addresses: atomicAdd on these (generic)
    // pointers compiled to ATOM plus a shared-window test and a CAS loop
    // for the shared case.
#    if defined(BAM_HIT_STATS_PER_FIELD) // measurement only (bench/hitpath): the three reductions of before
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.accesses), "l"(n) : "memory");
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.bytes), "l"(n * ElemBytes) : "memory");
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.hits), "l"(1ull) : "memory");
#    else
    if constexpr (ElemBytes <= 8) {
      asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.hit_elems[hit_elem_bucket(ElemBytes)]), "l"(n) : "memory");
    } else {
      asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.accesses), "l"(n) : "memory");
      asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.bytes), "l"(n * ElemBytes) : "memory");
      asm volatile("red.global.add.u64 [%0], %1;" ::"l"(&r.hit_elems[hit_elem_bucket(ElemBytes)]), "l"(n) : "memory");
    }
#    endif
#  endif
#else
    (void)n_rows;
    if constexpr (ElemBytes <= 8) {
      atomic_fetch_add(&rows[0].hit_elems[hit_elem_bucket(ElemBytes)], n, order::relaxed);
    } else {
      atomic_fetch_add(&rows[0].accesses, n, order::relaxed);
      atomic_fetch_add(&rows[0].bytes, n * ElemBytes, order::relaxed);
      atomic_fetch_add(&rows[0].hit_elems[hit_elem_bucket(ElemBytes)], n, order::relaxed);
    }
#endif
  }
}

// `mask` argument of read_slow meaning "the lanes making this call": the
// callee names them with its own __activemask(). A mask cannot be 0 (the
// calling lane is in it), so 0 is free for this.
inline constexpr uint32_t calling_lanes = 0;

// The read of an element whose hit_read failed (miss, line in flight, or
// evicted under the read): the pinned, coalesced path, out of line. `mask`:
// the lanes that failed (they call it together), or calling_lanes.
//
// The array's metadata comes from the runtime's table (c.arrays[id], the
// same values as the handle's copy): passing the handle's copy by
// reference made every kernel copy its array handles to local memory.
template <class V>
__device__ __noinline__ V read_slow(const cache_ctx& c, uint32_t id, uint64_t line, uint64_t sub, uint32_t mask)
{
  if (mask == calling_lanes)
    mask = __activemask();
  const array_meta& m = c.arrays[id];
  return warp_access<false>(
      c, m, line, uint32_t(sizeof(V)), [sub](unsigned char* base) { return reinterpret_cast<const V*>(base)[sub]; },
      mask);
}

// A whole element read: the hit path inline, the rest out of line. The
// pinned path's warp vote runs only among the lanes that missed (not at
// all when every lane hit), so its mask must name exactly them.
//
// On the GPU read_slow names them itself: __activemask() at its entry is
// the lanes executing the call, and they are all lanes that missed. The
// caller cannot take that mask: a ballot over the entry's active mask is
// exact, but ptxas compiles a vote.sync whose mask is a run-time value with
// a divergent fallback that is a CALL, and every hit-path value live across
// it had to sit in a callee-saved register (ported kernels needed 66-72
// registers on sm_80 for it, issue 18); and an __activemask() in the
// caller's miss branch is not promised to be that branch's lanes (the
// compiler may move it: the two branches' identical calls can become one
// before the branch). Inside the out-of-line callee nothing can move it.
// The counters of the lanes that hit take __activemask() in the hit
// branch: a count, never a warp vote.
//
// The CPU warp emulation keeps the ballot: its __activemask() is every
// launched lane, not the lanes of a call.
template <class V>
__device__ __forceinline__ V element_read(const cache_ctx* c, const array_meta& m, const unsigned char* slots,
                                          uint32_t line_shift, uint64_t line, uint64_t sub)
{
  stats_row* const rows = c->stats; // before the acquire (hit_stats)
  const uint32_t n_rows = c->n_stat_rows;
  V v;
  const bool hit = hit_read(m, slots, line_shift, line, sub, v);
#if defined(BAM_WARP_EMULATION)
  const uint32_t active = __activemask();
  const uint32_t missed = __ballot_sync(active, !hit) & active;
  if (hit) {
    hit_stats<uint32_t(sizeof(V))>(rows, n_rows, active & ~missed);
    return v;
  }
  return BAM_COLD(read_slow<V>)(*c, m.id, line, sub, missed);
#else
  if (hit) {
    hit_stats<uint32_t(sizeof(V))>(rows, n_rows, __activemask());
    return v;
  }
  return BAM_COLD(read_slow<V>)(*c, m.id, line, sub, calling_lanes);
#endif
}

// A whole pinned element access out of line: pin (coalesced), f on the
// element, release. Writes, updates and atomics of cached arrays always
// take this path (they have no pin-free fast path), so the pinning, the
// warp vote and the release need not be inlined into the kernel: there
// they kept the access's state live across the pin call and added their
// registers to the kernel's (the kernel's count is set by what is live
// across its slow-path calls, bam/detail/cold_call.cuh). F is the access's
// small functor (the value, or the operands of an atomic), passed by value.
template <bool Write, class V, class F>
__device__ __noinline__ auto access_slow(const cache_ctx& c, uint32_t id, uint64_t line, uint64_t sub, F f, uint32_t mask)
{
  return warp_access<Write>(
      c, c.arrays[id], line, uint32_t(sizeof(V)), [&](unsigned char* base) { return f(reinterpret_cast<V*>(base) + sub); },
      mask);
}

// Release for lanes that each hold their own reference (array_ref,
// odt_tile): lanes releasing the same line together drop their references
// with one atomic. Out of line: it runs once per line held, not per access.
__device__ __noinline__ inline void release_each_slow(uint32_t* state, uint64_t line, uint32_t mask)
{
  const uint32_t peers = __match_any_sync(mask, reinterpret_cast<unsigned long long>(state + line));
  __syncwarp(peers);
  if (lane_id() == uint32_t(__ffs(peers) - 1))
    line_word::unpin(state + line, __popc(peers));
}
__device__ __forceinline__ void warp_release_each(uint32_t* state, uint64_t line)
{
  BAM_COLD(release_each_slow)(state, line, __activemask());
}
__device__ __forceinline__ void warp_release_each(const array_meta& m, uint64_t line)
{
  warp_release_each(m.state, line);
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_HAS_DEVICE_CODE
#endif // BAM_DETAIL_WARP_CACHE_CUH
