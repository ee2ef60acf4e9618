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
// pointer backends, from the queue's bounce buffer for emu) and uses it; a group whose line another thread is fetching waits
// holding no pin. Only the group's own lanes synchronize with each other,
// never a group with another: lanes of one warp that entered from different
// points of a divergent kernel may be active together, and on an H200 a
// vote taken over the whole active mask let one group's fill run with
// another group's claim (pagerank's port at -O3). A group never waits for a
// free slot while it holds a pin, so plain accesses cannot starve the cache
// whatever its size (tests/warp_emu_test.cpp checks tiny caches).
#ifndef BAM_DETAIL_WARP_CACHE_CUH
#define BAM_DETAIL_WARP_CACHE_CUH

#include <bam/detail/cache_core.cuh>
#include <bam/detail/cache_types.cuh>
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

// Pointer backends: the group's leader f (it claimed the line) takes a
// slot, the group's lanes copy the line in (after writing a dirty victim
// out), and f publishes it. Returns the line's data to every lane.
//
// Out of line, like the other miss-path functions: one copy per program
// instead of one per access site keeps kernels small and builds fast; a miss
// costs microseconds, the call nanoseconds.
template <bool Write>
__device__ __noinline__ unsigned char* group_fill(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                  const warp_group& g, uint32_t& slot)
{
  const uint32_t mask = g.peers, f = g.leader;
  const uint32_t lane = lane_id();
  const uint32_t rank = __popc(mask & ((1u << lane) - 1u));
  const uint32_t lanes = __popc(mask);
  victim v;
  fill_plan plan{nullptr, nullptr, nullptr};
  if (lane == f) {
    slot = allocate_slot(c, v, m.id, line);
    plan.dst = c.slot_data(slot);
    plan.src = backing_line(c, m, line);
    if (v.present && v.dirty)
      plan.wb = backing_line(c, c.arrays[v.array_id], v.line);
  }
  plan = shfl_plan(mask, plan, f);
  __syncwarp(mask); // orders f's eviction CAS (acquire) before the lanes read the victim
  if (plan.wb != nullptr) {
    copy_line_warp(plan.wb, plan.dst, c.line_bytes(), rank, lanes);
    __syncwarp(mask); // the write-back has read the slot before anyone overwrites it
  }
  copy_line_warp(plan.dst, plan.src, c.line_bytes(), rank, lanes);
  __syncwarp(mask);
  if (lane == f) {
    __threadfence(); // the warp's copies (both directions) before the line states change
    if (v.present) {
      if (v.dirty) {
        stat_add(c, stat::writebacks, 1);
        stat_add(c, stat::io_writes, 1);
        stat_add(c, stat::io_write_bytes, c.line_bytes());
      }
      finish_evict(c, v);
    }
    stat_add(c, stat::io_reads, 1);
    stat_add(c, stat::io_read_bytes, c.line_bytes());
    install(c, m, line, slot, Write);
  }
  __syncwarp(mask); // published before any lane uses it: an array_ref writer marks it dirty at once
  return plan.dst;
}

// Storage backends: the group's leader f (it claimed the line) takes a
// slot, writes a dirty victim back and waits for its read; then the group's
// lanes copy the line out of the queue's bounce buffer together (coalesced
// PCIe reads; one thread copying 4 KiB alone issues 256 small reads, and
// thousands of such copies saturate PCIe on request count, which capped
// one-leader-per-warp fetches at ~0.6 M lines/s), and f publishes it.
// DIRECT mode (nvme) reads straight into the slot: nothing to copy.
template <bool Write>
__device__ __noinline__ unsigned char* group_fill_storage(const cache_ctx& c, const array_meta& m, uint64_t line,
                                                          const warp_group& g, uint32_t& slot)
{
  const uint32_t mask = g.peers, f = g.leader;
  const uint32_t lane = lane_id();
  int status = 0;
  nvme::queue_hold hold;
  unsigned char* dst = nullptr;
  if (lane == f) {
    device_io io;
    victim v;
    slot = allocate_slot(c, v, m.id, line);
    if (v.present)
      evict_victim(c, v, slot, io);
    dst = c.slot_data(slot);
    status = c.queues->read_held(m.base + (line << c.line_shift), uint32_t(c.line_bytes()), dst, hold);
  }
  dst = shfl_ptr(mask, dst, f);
  const uint8_t* src = shfl_ptr(mask, status == 0 ? hold.src : static_cast<const uint8_t*>(nullptr), f);
  __syncwarp(mask); // f's acquire of the completion before the lanes read the bounce buffer
  if (src != nullptr) {
    const uint32_t rank = __popc(mask & ((1u << lane) - 1u)), lanes = __popc(mask);
    const uint4* sv = reinterpret_cast<const uint4*>(src);
    uint4* dv = reinterpret_cast<uint4*>(dst);
    const uint64_t n = c.line_bytes() / sizeof(uint4);
    uint64_t i = rank;
    for (; i + 3 * lanes < n; i += 4 * lanes) { // four loads in flight per lane; __ldcv: the buffer is reused
      const uint4 a = __ldcv(sv + i), b = __ldcv(sv + i + lanes), x = __ldcv(sv + i + 2 * lanes),
                  y = __ldcv(sv + i + 3 * lanes);
      dv[i] = a;
      dv[i + lanes] = b;
      dv[i + 2 * lanes] = x;
      dv[i + 3 * lanes] = y;
    }
    for (; i < n; i += lanes)
      dv[i] = __ldcv(sv + i);
  }
  __syncwarp(mask); // the copy is done before the slot is retired and the line published
  if (lane == f) {
    c.queues->retire(hold);
    if (status != 0) {
      record_fault(c, fault_kind::read, status, m.id, line);
      zero_fill(dst, c.line_bytes());
    }
    stat_add(c, stat::io_reads, 1);
    stat_add(c, stat::io_read_bytes, c.line_bytes());
    __threadfence(); // the lanes' copies before the line state changes
    install(c, m, line, slot, Write);
  }
  __syncwarp(mask);
  return dst;
}

// A leader waiting for a line another warp is fetching, without holding
// pins meanwhile.
template <bool Write>
__device__ __noinline__ uint32_t leader_acquire(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t n)
{
  device_io io;
  return acquire_patiently(c, m, line, n, Write, io);
}

// The leader of each group pins its line for all peers with one atomic and
// classifies it; every peer learns the result. A group whose line is busy
// elsewhere drops its pins again at once (it waits later, holding nothing).
template <bool Write>
__device__ probe warp_probe(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t elem_bytes, warp_group& g,
                            uint32_t& slot)
{
  g.mask = __activemask();
  g.peers = __match_any_sync(g.mask, reinterpret_cast<unsigned long long>(m.state + line));
  g.leader = __ffs(g.peers) - 1;
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

// Drop the group's references once every peer is done with the line.
__device__ __forceinline__ void warp_release(const array_meta& m, uint64_t line, const warp_group& g)
{
  __syncwarp(g.peers);
  if (lane_id() == g.leader)
    release(m, line, __popc(g.peers));
}

// Resolve this lane's group to a pinned, valid line and call use(data)
// once, with the line pinned for the group.
template <bool Write, class Use>
__device__ void warp_resolve(const cache_ctx& c, const array_meta& m, uint64_t line, const warp_group& g, probe p,
                             uint32_t slot, Use use)
{
  const bool lead = lane_id() == g.leader;
  if (p == probe::hit) {
    use(group_data(c, g, slot));
  } else if (p == probe::fetch) {
    if (is_pointer_backend(c.backend))
      use(group_fill<Write>(c, m, line, g, slot));
    else
      use(group_fill_storage<Write>(c, m, line, g, slot));
  } else {
    if (lead)
      slot = leader_acquire<Write>(c, m, line, __popc(g.peers));
    use(group_data(c, g, slot));
  }
}

// Pin `line` for every calling lane and return its data; each lane then
// owns one reference (array_ref drops them with warp_release_each).
template <bool Write>
__device__ unsigned char* warp_acquire(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t elem_bytes,
                                       warp_group& g)
{
  uint32_t slot = no_slot;
  const probe p = warp_probe<Write>(c, m, line, elem_bytes, g, slot);
  unsigned char* base = nullptr;
  warp_resolve<Write>(c, m, line, g, p, slot, [&](unsigned char* data) { base = data; });
  return base;
}

// One element access, coalesced: f(pointer to the line's data) runs while
// the line is pinned, then the group's pins are dropped (one atomic).
template <bool Write, class F>
__device__ auto warp_access(const cache_ctx& c, const array_meta& m, uint64_t line, uint32_t elem_bytes, F f)
{
  warp_group g;
  uint32_t slot = no_slot;
  const probe p = warp_probe<Write>(c, m, line, elem_bytes, g, slot);
  decltype(f(static_cast<unsigned char*>(nullptr))) r{};
  warp_resolve<Write>(c, m, line, g, p, slot, [&](unsigned char* data) {
    r = f(data);
    warp_release(m, line, g);
  });
  return r;
}

// Release for lanes that each hold their own reference (array_ref): lanes
// releasing the same line together drop their references with one atomic.
__device__ __forceinline__ void warp_release_each(const array_meta& m, uint64_t line)
{
  const uint32_t mask = __activemask();
  const uint32_t peers = __match_any_sync(mask, reinterpret_cast<unsigned long long>(m.state + line));
  __syncwarp(peers);
  if (lane_id() == uint32_t(__ffs(peers) - 1))
    release(m, line, __popc(peers));
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_HAS_DEVICE_CODE
#endif // BAM_DETAIL_WARP_CACHE_CUH
