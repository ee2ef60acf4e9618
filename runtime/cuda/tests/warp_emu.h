// A CPU emulation of the CUDA warp intrinsics the bam device layer uses, so
// the warp-coalesced access paths (detail/warp_cache.cuh, array.cuh) run in
// CI with std::threads as lanes. Include before any bam header, with
// BAM_WARP_EMULATION defined.
//
// Every *_sync intrinsic is a rendezvous of the lanes in its mask: each lane
// deposits its value and waits until every lane of the mask has; groups with
// different masks rendezvous independently, as divergent groups do under
// independent thread scheduling. __activemask() returns the lanes of the
// warp that were launched, so tests keep lanes converged at access sites.
#ifndef BAM_TESTS_WARP_EMU_H
#define BAM_TESTS_WARP_EMU_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))

struct uint4 {
  unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

namespace warp_emu {

struct warp {
  struct round {
    uint32_t arrived = 0;
    uint64_t gen = 0;
    uint64_t vals[32] = {};
    uint64_t result[32] = {};
  };
  std::mutex m;
  std::condition_variable cv;
  std::map<uint32_t, round> rounds; // one rendezvous per mask
  uint32_t launched = 0;
};

inline thread_local warp* tl_warp = nullptr;
inline thread_local uint32_t tl_lane = 0;

// Every lane of `mask` contributes v; returns all contributions.
inline const uint64_t* rendezvous(uint32_t mask, uint64_t v, uint64_t (&out)[32])
{
  warp& w = *tl_warp;
  std::unique_lock<std::mutex> lk(w.m);
  warp::round& r = w.rounds[mask];
  const uint64_t my_gen = r.gen;
  r.vals[tl_lane] = v;
  r.arrived |= 1u << tl_lane;
  if (r.arrived == mask) {
    std::memcpy(r.result, r.vals, sizeof r.vals);
    r.arrived = 0;
    ++r.gen;
    w.cv.notify_all();
  } else {
    w.cv.wait(lk, [&] { return r.gen != my_gen; });
  }
  // The next round on this mask cannot complete before we arrive for it,
  // so `result` is still this round's.
  std::memcpy(out, r.result, sizeof out);
  return out;
}

// Run `lanes_per_warp` lanes in each of `warps` warps; fn(global thread id).
inline void launch(unsigned warps, unsigned lanes_per_warp, const std::function<void(unsigned)>& fn)
{
  std::vector<std::unique_ptr<warp>> ws;
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < warps; ++w) {
    ws.emplace_back(new warp);
    ws.back()->launched = lanes_per_warp == 32 ? 0xffffffffu : (1u << lanes_per_warp) - 1;
  }
  for (unsigned w = 0; w < warps; ++w)
    for (unsigned l = 0; l < lanes_per_warp; ++l)
      threads.emplace_back([&, w, l] {
        tl_warp = ws[w].get();
        tl_lane = l;
        fn(w * 32 + l);
      });
  for (auto& t : threads)
    t.join();
}

} // namespace warp_emu

inline uint32_t bam_emu_lane_id() { return warp_emu::tl_lane; }
inline unsigned __activemask() { return warp_emu::tl_warp->launched; }
inline void __syncwarp(unsigned mask = 0xffffffffu)
{
  uint64_t out[32];
  warp_emu::rendezvous(mask, 0, out);
}
// Bits outside `mask` are not defined by __ballot_sync: on real GPUs
// (observed on an H200) lanes of another group that reached the same
// instruction at the same moment with a different mask show up in the
// result. The emulation sets every bit outside the mask, so code that
// forgets to AND the result with its mask fails here too.
inline unsigned __ballot_sync(unsigned mask, int pred)
{
  uint64_t out[32];
  warp_emu::rendezvous(mask, pred != 0, out);
  unsigned b = ~mask;
  for (unsigned l = 0; l < 32; ++l)
    if ((mask >> l & 1) && out[l])
      b |= 1u << l;
  return b;
}
inline unsigned __match_any_sync(unsigned mask, unsigned long long key)
{
  uint64_t out[32];
  warp_emu::rendezvous(mask, key, out);
  unsigned b = 0;
  for (unsigned l = 0; l < 32; ++l)
    if ((mask >> l & 1) && out[l] == key)
      b |= 1u << l;
  return b;
}
inline unsigned long long __shfl_sync(unsigned mask, unsigned long long v, int src)
{
  uint64_t out[32];
  warp_emu::rendezvous(mask, v, out);
  return out[src];
}
inline unsigned __shfl_sync(unsigned mask, unsigned v, int src) { return unsigned(__shfl_sync(mask, (unsigned long long)v, src)); }
// Loads that bypass the GPU's caches are plain loads on the CPU.
template <class T>
inline T __ldcv(const T* p) { return *p; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __ffs(unsigned v) { return __builtin_ffs(int(v)); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

template <class T>
T atomicAdd(T* p, T v)
{
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  } else {
    T old = *p, nv;
    do {
      nv = T(old + v);
    } while (!__atomic_compare_exchange(p, &old, &nv, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
  }
}
template <class T>
T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
template <class T>
T atomicCAS(T* p, T cmp, T v)
{
  __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return cmp;
}
template <class T>
T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
template <class T>
T atomicMin(T* p, T v)
{
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <class T>
T atomicMax(T* p, T v)
{
  T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return old;
}
template <class T>
T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <class T>
T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <class T>
T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }

#endif // BAM_TESTS_WARP_EMU_H
