// Atomic operations on plain words, usable from host and device code.
//
// The cache keeps its metadata in plain uint32_t/uint64_t arrays (so they can
// live in cudaMalloc'd memory and be memset) and operates on them through
// references. On nvcc, and on host compilers that can see libcu++, this is
// cuda::atomic_ref at device scope: on the GPU it lowers to atom.<order>.gpu,
// on the CPU to the compiler's __atomic builtins. Without libcu++ (a CI box
// with no CUDA toolkit) we call the builtins directly with the same orders.
#ifndef BAM_DETAIL_ATOMIC_CUH
#define BAM_DETAIL_ATOMIC_CUH

#include <bam/detail/config.cuh>

#if defined(__CUDACC__) || (defined(__has_include) && __has_include(<cuda/atomic>) && !defined(BAM_NO_LIBCUXX))
#  include <cuda/atomic>
#  define BAM_USE_LIBCUXX 1
#else
#  define BAM_USE_LIBCUXX 0
#endif

#if !defined(__CUDA_ARCH__)
#  include <sched.h>
#endif

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

enum class order { relaxed, acquire, release, acq_rel };

#if BAM_USE_LIBCUXX
[[nodiscard]] BAM_HD constexpr cuda::std::memory_order to_std(order o) noexcept
{
  return o == order::relaxed   ? cuda::std::memory_order_relaxed
         : o == order::acquire ? cuda::std::memory_order_acquire
         : o == order::release ? cuda::std::memory_order_release
                               : cuda::std::memory_order_acq_rel;
}

// Loads may not use release orders; map them the way std does for RMWs.
[[nodiscard]] BAM_HD constexpr cuda::std::memory_order load_order(order o) noexcept
{
  return o == order::relaxed ? cuda::std::memory_order_relaxed : cuda::std::memory_order_acquire;
}

[[nodiscard]] BAM_HD constexpr cuda::std::memory_order store_order(order o) noexcept
{
  return o == order::relaxed ? cuda::std::memory_order_relaxed : cuda::std::memory_order_release;
}

template <class T>
using aref = cuda::atomic_ref<T, cuda::thread_scope_device>;

template <class T>
BAM_HD BAM_FORCEINLINE T atomic_load(T* p, order o = order::acquire) noexcept
{
  return aref<T>(*p).load(load_order(o));
}
template <class T>
BAM_HD BAM_FORCEINLINE void atomic_store(T* p, T v, order o = order::release) noexcept
{
  aref<T>(*p).store(v, store_order(o));
}
template <class T>
BAM_HD BAM_FORCEINLINE T atomic_fetch_add(T* p, T v, order o = order::acq_rel) noexcept
{
  return aref<T>(*p).fetch_add(v, to_std(o));
}
template <class T>
BAM_HD BAM_FORCEINLINE T atomic_fetch_sub(T* p, T v, order o = order::acq_rel) noexcept
{
  return aref<T>(*p).fetch_sub(v, to_std(o));
}
template <class T>
BAM_HD BAM_FORCEINLINE T atomic_fetch_or(T* p, T v, order o = order::acq_rel) noexcept
{
  return aref<T>(*p).fetch_or(v, to_std(o));
}
template <class T>
BAM_HD BAM_FORCEINLINE T atomic_fetch_and(T* p, T v, order o = order::acq_rel) noexcept
{
  return aref<T>(*p).fetch_and(v, to_std(o));
}
template <class T>
BAM_HD BAM_FORCEINLINE T atomic_fetch_xor(T* p, T v, order o = order::acq_rel) noexcept
{
  return aref<T>(*p).fetch_xor(v, to_std(o));
}
// Strong CAS; on failure `expected` receives the current value.
template <class T>
BAM_HD BAM_FORCEINLINE bool atomic_cas(T* p, T& expected, T desired, order o = order::acq_rel) noexcept
{
  return aref<T>(*p).compare_exchange_strong(expected, desired, to_std(o), load_order(o));
}
#else
[[nodiscard]] constexpr int to_gcc(order o) noexcept
{
  return o == order::relaxed   ? __ATOMIC_RELAXED
         : o == order::acquire ? __ATOMIC_ACQUIRE
         : o == order::release ? __ATOMIC_RELEASE
                               : __ATOMIC_ACQ_REL;
}
template <class T>
inline T atomic_load(T* p, order o = order::acquire) noexcept
{
  return __atomic_load_n(p, o == order::relaxed ? __ATOMIC_RELAXED : __ATOMIC_ACQUIRE);
}
template <class T>
inline void atomic_store(T* p, T v, order o = order::release) noexcept
{
  __atomic_store_n(p, v, o == order::relaxed ? __ATOMIC_RELAXED : __ATOMIC_RELEASE);
}
template <class T>
inline T atomic_fetch_add(T* p, T v, order o = order::acq_rel) noexcept { return __atomic_fetch_add(p, v, to_gcc(o)); }
template <class T>
inline T atomic_fetch_sub(T* p, T v, order o = order::acq_rel) noexcept { return __atomic_fetch_sub(p, v, to_gcc(o)); }
template <class T>
inline T atomic_fetch_or(T* p, T v, order o = order::acq_rel) noexcept { return __atomic_fetch_or(p, v, to_gcc(o)); }
template <class T>
inline T atomic_fetch_and(T* p, T v, order o = order::acq_rel) noexcept { return __atomic_fetch_and(p, v, to_gcc(o)); }
template <class T>
inline T atomic_fetch_xor(T* p, T v, order o = order::acq_rel) noexcept { return __atomic_fetch_xor(p, v, to_gcc(o)); }
template <class T>
inline bool atomic_cas(T* p, T& expected, T desired, order o = order::acq_rel) noexcept
{
  return __atomic_compare_exchange_n(p, &expected, desired, false, to_gcc(o),
                                     o == order::relaxed ? __ATOMIC_RELAXED : __ATOMIC_ACQUIRE);
}
#endif

// Spin-wait politely: the GPU version yields issue slots to other warps,
// the CPU version lets the other stress-test threads run.
BAM_HD inline void backoff(unsigned& ns) noexcept
{
#if BAM_IS_DEVICE
#  if __CUDA_ARCH__ >= 700
  __nanosleep(ns);
#  endif
#else
#  if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#  endif
  if (ns >= 256)
    ::sched_yield();
#endif
  ns = ns < 1024 ? ns * 2 : 1024;
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_DETAIL_ATOMIC_CUH
