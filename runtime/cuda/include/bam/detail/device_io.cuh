// Moving lines between the cache and the backends, on the GPU.
//
// Pointer backends (hbm, host) are plain memory copies; the warp version is
// what the coalesced access path uses so a miss on pinned host memory keeps
// many 16-byte PCIe reads in flight instead of one thread's worth. Storage
// backends (emu, nvme) go through nvme::queue_set, one blocking request per
// line from the fetching thread.
#ifndef BAM_DETAIL_DEVICE_IO_CUH
#define BAM_DETAIL_DEVICE_IO_CUH

#include <bam/detail/cache_types.cuh>
#include <bam/detail/cold_call.cuh>
#include <bam/detail/config.cuh>
#include <bam/detail/storage.cuh>

#if BAM_HAS_DEVICE_CODE

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// One thread copies a line (16-byte vectors; lines are >= 512 B and slots
// and backing stores are 256-byte aligned).
__device__ inline void copy_line_thread(void* dst, const void* src, uint64_t bytes)
{
  uint4* d = static_cast<uint4*>(dst);
  const uint4* s = static_cast<const uint4*>(src);
  const uint64_t n = bytes / sizeof(uint4);
BAM_NO_UNROLL // four loads in flight are enough for a miss path; unrolled, it set kernels' register counts
  for (uint64_t i = 0; i < n; i += 4) {
    uint4 a = s[i], b = s[i + 1], c = s[i + 2], e = s[i + 3]; // four loads in flight before the stores
    d[i] = a;
    d[i + 1] = b;
    d[i + 2] = c;
    d[i + 3] = e;
  }
}

// `lanes` threads of a warp (this one is number `rank`) copy a line
// together: each iteration moves lanes*16 bytes per load instruction and
// keeps four of them in flight. A full warp (the common case) strides by
// a constant 512 bytes, so the four loads share one address register pair
// (immediate offsets): the miss path's copies are what set its register
// count.
__device__ inline void copy_line_warp(void* dst, const void* src, uint64_t bytes, uint32_t rank, uint32_t lanes)
{
  const uint32_t n = uint32_t(bytes / sizeof(uint4)); // lines are far below 2^35 bytes
  uint4* d = static_cast<uint4*>(dst) + rank;
  const uint4* s = static_cast<const uint4*>(src) + rank;
  if (lanes == 32) {
BAM_NO_UNROLL
    for (uint32_t i = rank; i < n; i += 128, d += 128, s += 128) {
      const uint4 a = s[0];
      const uint4 b = i + 32 < n ? s[32] : a;
      const uint4 c = i + 64 < n ? s[64] : a;
      const uint4 e = i + 96 < n ? s[96] : a;
      d[0] = a;
      if (i + 32 < n)
        d[32] = b;
      if (i + 64 < n)
        d[64] = c;
      if (i + 96 < n)
        d[96] = e;
    }
    return;
  }
BAM_NO_UNROLL
  for (uint32_t i = rank; i < n; i += 2 * lanes, d += 2 * lanes, s += 2 * lanes) { // two loads in flight
    const uint4 a = s[0];
    const uint4 b = i + lanes < n ? s[lanes] : a;
    d[0] = a;
    if (i + lanes < n)
      d[lanes] = b;
  }
}

// Address of a line in a pointer backend.
__device__ inline unsigned char* backing_line(const cache_ctx& c, const array_meta& m, uint64_t line)
{
  return m.data + (line << c.line_shift);
}

// The cache's Io for GPU threads (see cache_core.cuh): one thread per line.
struct device_io {
  __device__ __noinline__ int read(const cache_ctx& c, const array_meta& m, uint64_t line, void* dst) const
  {
    if (is_pointer_access(c.access)) {
      copy_line_thread(dst, backing_line(c, m, line), c.line_bytes());
      return 0;
    }
    return storage_read(c.queues, m.base + (line << c.line_shift), uint32_t(c.line_bytes()), dst);
  }
  __device__ __noinline__ int write(const cache_ctx& c, const array_meta& m, uint64_t line, const void* src) const
  {
    if (is_pointer_access(c.access)) {
      copy_line_thread(backing_line(c, m, line), src, c.line_bytes());
      __threadfence(); // the line's next fetcher must see the written-back bytes
      return 0;
    }
    return storage_write(c.queues, m.base + (line << c.line_shift), uint32_t(c.line_bytes()), src);
  }
};

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_HAS_DEVICE_CODE
#endif // BAM_DETAIL_DEVICE_IO_CUH
