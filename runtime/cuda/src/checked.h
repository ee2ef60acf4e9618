// Overflow-checked size arithmetic for the host side of the runtime: every
// count a user passes (elements, offsets) is turned into bytes here, and a
// product or sum that does not fit 64 bits is an error naming the call,
// never a wrapped small number.
//
// Internal to libbam; plain C++ (tests/config_test.cpp runs it on the CPU).
#ifndef BAM_SRC_CHECKED_H
#define BAM_SRC_CHECKED_H

#include <bam/error.h>

#include <cstdint>
#include <string>

BAM_NAMESPACE_BEGIN
namespace detail {

// n * size, or bam::error "<what>: n elements of size bytes overflow 64 bits".
inline uint64_t checked_bytes(uint64_t n, uint64_t size, const char* what)
{
  if (size != 0 && n > UINT64_MAX / size)
    throw error(std::string(what) + ": " + std::to_string(n) + " elements of " + std::to_string(size) +
                " bytes do not fit in 64 bits");
  return n * size;
}

// a + b, or bam::error "<what>: a + b overflows 64 bits".
inline uint64_t checked_add(uint64_t a, uint64_t b, const char* what)
{
  if (a > UINT64_MAX - b)
    throw error(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                " does not fit in 64 bits");
  return a + b;
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_CHECKED_H
