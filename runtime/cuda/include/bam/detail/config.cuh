// Compiler and platform glue shared by every bam header.
//
// One host/device macro (BAM_HD) so the cache state machine can be compiled
// by nvcc for the GPU and by a plain C++17 compiler for the CPU stress tests.
#ifndef BAM_DETAIL_CONFIG_CUH
#define BAM_DETAIL_CONFIG_CUH

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#  define BAM_HD __host__ __device__
#  define BAM_DEVICE __device__
#  define BAM_FORCEINLINE __forceinline__
#elif defined(BAM_WARP_EMULATION)
#  define BAM_HD
#  define BAM_DEVICE
#  define BAM_FORCEINLINE inline
#else
#  define BAM_HD
#  define BAM_DEVICE
#  define BAM_FORCEINLINE inline __attribute__((always_inline))
#endif

// BAM_HAS_DEVICE_CODE: compile the device-side layers (warp coalescing,
// array accessors). True under nvcc, and in the CPU warp emulation tests
// (BAM_WARP_EMULATION), which supply the warp intrinsics themselves.
#if defined(__CUDACC__) || defined(BAM_WARP_EMULATION)
#  define BAM_HAS_DEVICE_CODE 1
#else
#  define BAM_HAS_DEVICE_CODE 0
#endif

// True while compiling code that runs on the GPU.
#if defined(__CUDA_ARCH__)
#  define BAM_IS_DEVICE 1
#else
#  define BAM_IS_DEVICE 0
#endif

#define BAM_VERSION_MAJOR 0
#define BAM_VERSION_MINOR 1
#define BAM_VERSION_PATCH 0

// BAM_ASSERT(cond, "function: what went wrong"). The message names the
// function so a failing assert in a big kernel points at the right layer.
// Host code: active unless NDEBUG or BAM_DISABLE_ASSERTS. Device code: off
// unless BAM_DEVICE_ASSERTS is defined (the runtime's own GPU tests define
// it). A kernel that can reach a device assert makes the driver set up the
// assert/printf buffer at its first launch: measured on an H200 (CUDA 13),
// the first launch of a ported kernel took 4.5-9.4 ms with device asserts
// and 1.1 ms without (the rest is lazy module loading), against 0.05 ms for
// the original kernel. Device-side failures that matter in production
// (storage errors, stalls) are reported through the error block instead.
#if defined(NDEBUG) || defined(BAM_DISABLE_ASSERTS) || (defined(__CUDA_ARCH__) && !defined(BAM_DEVICE_ASSERTS))
#  define BAM_ASSERT(cond, msg) ((void)0)
#else
#  include <cassert>
#  define BAM_ASSERT(cond, msg) assert((cond) && msg)
#endif

#endif // BAM_DETAIL_CONFIG_CUH
