// The device side of the storage backends (emu, nvme): bam::nvme::queue_set.
//
// The queue protocol lives in <bam/nvme/queue.cuh> (owned by the queue
// layer). When it is absent, or BAM_NO_NVME_QUEUES is defined, a stub with
// the same interface reports every request as failed, so the cache still
// compiles and storage arrays fail loudly instead of returning junk.
// BAM_QUEUE_SET_PROVIDED: the includer defines bam::nvme::queue_set itself
// (the CPU warp-emulation tests serve lines from host memory that way).
#ifndef BAM_DETAIL_STORAGE_CUH
#define BAM_DETAIL_STORAGE_CUH

#include <bam/detail/config.cuh>

#if defined(BAM_QUEUE_SET_PROVIDED)
#  define BAM_HAVE_NVME_QUEUES 0
#elif !defined(BAM_NO_NVME_QUEUES) && defined(__has_include)
#  if __has_include(<bam/nvme/queue.cuh>)
#    include <bam/nvme/queue.cuh>
#    define BAM_HAVE_NVME_QUEUES 1
#  endif
#endif

#if !defined(BAM_HAVE_NVME_QUEUES) && !defined(BAM_QUEUE_SET_PROVIDED)
#  define BAM_HAVE_NVME_QUEUES 0
#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace nvme {
// Stand-in with the agreed interface; every request fails with status 1.
struct queue_hold {
  const uint8_t* src = nullptr;
  bool active = false;
};
struct queue_set {
  BAM_HD int read(uint64_t, uint32_t, void*) const { return 1; }
  BAM_HD int write(uint64_t, uint32_t, const void*) const { return 1; }
  BAM_HD int read_held(uint64_t, uint32_t, void*, queue_hold& h) const
  {
    h = queue_hold{};
    return 1;
  }
  BAM_HD void retire(queue_hold&) const {}
  BAM_HD bool holds_data() const { return false; }
};
} // namespace nvme
BAM_NAMESPACE_END // namespace bam
#endif

#if BAM_HAS_DEVICE_CODE
#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {
// The cache's entry points into the queue layer. Inline: the queue's io
// is a few checks around its two out-of-line halves (submit, finish; see
// BAM_NVME_COLD in nvme/queue.cuh), and every indirect level costs stack
// (the callee-saved registers it saves), which adds up along the miss
// path's calls against the default 1 KiB per-thread stack.
__device__ __forceinline__ int storage_read(const nvme::queue_set* q, uint64_t byte_offset, uint32_t bytes,
                                                void* dst)
{
  return q->read(byte_offset, bytes, dst);
}
__device__ __forceinline__ int storage_write(const nvme::queue_set* q, uint64_t byte_offset, uint32_t bytes,
                                                 const void* src)
{
  return q->write(byte_offset, bytes, src);
}
__device__ __forceinline__ int storage_read_held(const nvme::queue_set* q, uint64_t byte_offset, uint32_t bytes,
                                                     void* dst, nvme::queue_hold& hold)
{
  return q->read_held(byte_offset, bytes, dst, hold);
}
// Reads that leave the line in the queue's own buffer (BOUNCE mode: emu,
// and nvme with host-memory data): the bypass of storage reads
// (warp_cache.cuh, fill_try_bypass_storage) needs them.
__device__ __forceinline__ bool storage_holds_data(const nvme::queue_set* q) { return q->holds_data(); }
__device__ __forceinline__ void storage_retire(const nvme::queue_set* q, nvme::queue_hold& hold) { q->retire(hold); }
} // namespace detail
BAM_NAMESPACE_END // namespace bam
#endif

#endif // BAM_DETAIL_STORAGE_CUH
