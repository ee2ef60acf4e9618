// Calls into the slow path that do not raise the caller's register count.
//
// A kernel's register count is fixed for its whole call tree. For a direct
// call to a __noinline__ function in the same compilation unit, ptxas
// allocates registers across the call (interprocedurally): the caller keeps
// the values it needs after the call in registers the callee does not use,
// so the counts ADD along a call chain (kernel's live values + the miss
// path's own + the fill's + the queue's ...). Measured with nvcc 11.8 for
// sm_90 on `out[i] = a[i]`: 114 registers, although the kernel's own code
// needs 22 and no single miss-path function more than ~90.
//
// An indirect call goes through the fixed calling convention instead: the
// callee saves the callee-saved registers it uses (in the slow path, on its
// own stack) and the kernel's count is the MAXIMUM over the functions, not
// the sum. BAM_COLD(f)(args) calls f through cold_ptr<&f>(), which returns f's address loaded from a __device__
// variable through a volatile read, which ptxas cannot fold into a direct
// call. One extra load (an L1/L2 hit) per slow-path call; the hit path
// itself makes no call at all.
//
// The CPU warp emulation (plain C++) calls directly.
#ifndef BAM_DETAIL_COLD_CALL_CUH
#define BAM_DETAIL_COLD_CALL_CUH

#include <bam/detail/config.cuh>

#include <cstring>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

#if defined(__CUDACC__)
template <auto Fn>
__device__ __forceinline__ decltype(Fn) cold_ptr()
{
  static __device__ decltype(Fn) fn = Fn;
  return *static_cast<const volatile decltype(Fn)*>(&fn);
}
#  define BAM_COLD(f) ::bam::detail::cold_ptr<&f>()
#  define BAM_NO_UNROLL _Pragma("unroll 1")
#else
#  define BAM_COLD(f) f
#  define BAM_NO_UNROLL
#endif

// v, unknown to the compiler from this point on: what is computed from it
// is neither hoisted out of a loop nor shared with another access.
template <class T>
BAM_HD BAM_FORCEINLINE T opaque(T v)
{
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(T) == 8 || sizeof(T) == 4, "opaque: 4 or 8 bytes");
  if constexpr (sizeof(T) == 8) {
    unsigned long long w;
    memcpy(&w, &v, 8);
    asm volatile("" : "+l"(w));
    memcpy(&v, &w, 8);
  } else {
    unsigned int w;
    memcpy(&w, &v, 4);
    asm volatile("" : "+r"(w));
    memcpy(&v, &w, 4);
  }
#endif
  return v;
}

// p through an opaque offset of 0: what is computed from it (a field's
// address) is not hoisted out of a loop either, and it is still derived
// from p, so loads through it keep p's address space (LDG, not a generic LD,
// for a kernel parameter's pointer).
template <class T>
BAM_HD BAM_FORCEINLINE T* opaque_ptr(T* p)
{
  return p + opaque(std::ptrdiff_t(0));
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_DETAIL_COLD_CALL_CUH
