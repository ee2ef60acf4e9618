// Atomic read-modify-write on one element of a pinned cache line, for every
// element type bam::array accepts (4- and 8-byte integers and floats).
// Native CUDA atomics where they exist; a CAS loop on the bits otherwise.
#ifndef BAM_DETAIL_ELEMENT_ATOMICS_CUH
#define BAM_DETAIL_ELEMENT_ATOMICS_CUH

#include <bam/detail/config.cuh>

#include <cstring>
#include <type_traits>

#if BAM_HAS_DEVICE_CODE

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>;

template <class T>
__device__ __forceinline__ bits_t<T> to_bits(T v)
{
  bits_t<T> b;
  memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
__device__ __forceinline__ T from_bits(bits_t<T> b)
{
  T v;
  memcpy(&v, &b, sizeof(T));
  return v;
}

// *p = f(*p) atomically; returns the old value.
template <class T, class F>
__device__ T atomic_update(T* p, F f)
{
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "bam::array atomics: element must be 4 or 8 bytes");
  auto* w = reinterpret_cast<bits_t<T>*>(p);
  bits_t<T> old = *reinterpret_cast<volatile bits_t<T>*>(w);
  for (;;) {
    bits_t<T> seen = atomicCAS(w, old, to_bits(f(from_bits<T>(old))));
    if (seen == old)
      return from_bits<T>(old);
    old = seen;
  }
}

template <class T>
constexpr bool native_int = std::is_same<T, int>::value || std::is_same<T, unsigned int>::value ||
                            std::is_same<T, unsigned long long>::value;

// 8-byte integers that are not `unsigned long long` (int64_t, uint64_t as
// `unsigned long`, `long long`) use the unsigned long long atomics on the
// same bits: two's complement add/and/or/xor/exch/cas are bit-identical.
template <class T>
constexpr bool u64_alias = std::is_integral<T>::value && sizeof(T) == 8 && !std::is_same<T, unsigned long long>::value;

template <class T>
__device__ T elem_atomic_add(T* p, T v)
{
  if constexpr (native_int<T> || std::is_same<T, float>::value || std::is_same<T, double>::value)
    return atomicAdd(p, v);
  else if constexpr (u64_alias<T>)
    return T(atomicAdd(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v));
  else
    return atomic_update(p, [v](T x) { return T(x + v); });
}

template <class T>
__device__ T elem_atomic_sub(T* p, T v)
{
  if constexpr (std::is_same<T, int>::value || std::is_same<T, unsigned int>::value)
    return atomicSub(p, v);
  else if constexpr (std::is_integral<T>::value && sizeof(T) == 8)
    return T(atomicAdd(reinterpret_cast<unsigned long long*>(p), 0ull - (unsigned long long)v));
  else
    return elem_atomic_add(p, T(-v));
}

template <class T>
__device__ T elem_atomic_min(T* p, T v)
{
  if constexpr (native_int<T> || std::is_same<T, long long>::value)
    return atomicMin(p, v);
  else if constexpr (std::is_integral<T>::value && sizeof(T) == 8 && std::is_signed<T>::value)
    return T(atomicMin(reinterpret_cast<long long*>(p), (long long)v));
  else if constexpr (std::is_integral<T>::value && sizeof(T) == 8)
    return T(atomicMin(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v));
  else
    return atomic_update(p, [v](T x) { return v < x ? v : x; });
}

template <class T>
__device__ T elem_atomic_max(T* p, T v)
{
  if constexpr (native_int<T> || std::is_same<T, long long>::value)
    return atomicMax(p, v);
  else if constexpr (std::is_integral<T>::value && sizeof(T) == 8 && std::is_signed<T>::value)
    return T(atomicMax(reinterpret_cast<long long*>(p), (long long)v));
  else if constexpr (std::is_integral<T>::value && sizeof(T) == 8)
    return T(atomicMax(reinterpret_cast<unsigned long long*>(p), (unsigned long long)v));
  else
    return atomic_update(p, [v](T x) { return x < v ? v : x; });
}

template <class T>
__device__ T elem_atomic_cas(T* p, T cmp, T v)
{
  auto* w = reinterpret_cast<bits_t<T>*>(p);
  return from_bits<T>(atomicCAS(w, to_bits(cmp), to_bits(v)));
}

template <class T>
__device__ T elem_atomic_exch(T* p, T v)
{
  auto* w = reinterpret_cast<bits_t<T>*>(p);
  return from_bits<T>(atomicExch(w, to_bits(v)));
}

template <class T>
__device__ T elem_atomic_or(T* p, T v)
{
  static_assert(std::is_integral<T>::value, "bam::array::atomic_or: integer elements only");
  return from_bits<T>(atomicOr(reinterpret_cast<bits_t<T>*>(p), to_bits(v)));
}
template <class T>
__device__ T elem_atomic_and(T* p, T v)
{
  static_assert(std::is_integral<T>::value, "bam::array::atomic_and: integer elements only");
  return from_bits<T>(atomicAnd(reinterpret_cast<bits_t<T>*>(p), to_bits(v)));
}
template <class T>
__device__ T elem_atomic_xor(T* p, T v)
{
  static_assert(std::is_integral<T>::value, "bam::array::atomic_xor: integer elements only");
  return from_bits<T>(atomicXor(reinterpret_cast<bits_t<T>*>(p), to_bits(v)));
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_HAS_DEVICE_CODE
#endif // BAM_DETAIL_ELEMENT_ATOMICS_CUH
