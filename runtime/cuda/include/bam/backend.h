// bam::backend: where an array's lines live when they are not cached, and
// how device code reaches them (detail::device_access).
//
// The one enum of backends. Each enumerator has exactly one entry in the
// backend registry (runtime/cuda/src/backends.h: name, BAM_* variables,
// host setup, device access kind), in enum order; the registry
// static_asserts both. docs/adding-a-backend.md walks through adding one.
//
// Host and device header: plain C++17, no std::string.
#ifndef BAM_BACKEND_H
#define BAM_BACKEND_H

#include <bam/detail/config.cuh>
#include <bam/version.h>

#include <cstdint>

BAM_NAMESPACE_BEGIN

enum class backend : uint32_t {
  hbm = 0,  // GPU memory (tests; the "fits in HBM" control)
  host = 1, // pinned, mapped host memory, copied by GPU threads
  emu = 2,  // software NVMe controller on the CPU serving a file
  nvme = 3, // SSDs bound to kmod/bam_nvme.ko
};

// Enumerators of bam::backend (the registry checks it has this many
// entries, in enum order).
constexpr uint32_t backend_count = 4;

namespace detail {

// How device code reaches the lines of a backend (cache_ctx::access). The
// registry gives each backend exactly one; device code branches on this,
// never on bam::backend.
//
//   gpu_memory   array_meta::data is a device pointer to GPU memory holding
//                the whole array (line i at data + i * line bytes). Lines
//                are copied with plain loads and stores; elements may also
//                be loaded in place (a resident array needs no cache).
//   host_memory  array_meta::data is the device-visible address of pinned,
//                mapped host memory holding the whole array. Same loads and
//                stores as gpu_memory, over PCIe: elements may be read in
//                place (zero-copy) or through the cache.
//   queue        array_meta::data is null; line i is `line bytes` at byte
//                offset array_meta::base + i * line bytes of a storage
//                device, moved only by requests through cache_ctx::queues
//                (nvme::queue_set). Every access goes through the cache.
enum class device_access : uint32_t {
  gpu_memory = 0,
  host_memory = 1,
  queue = 2,
};

// gpu_memory and host_memory: lines are addressable memory.
[[nodiscard]] BAM_HD constexpr bool is_pointer_access(device_access a) noexcept
{
  return a == device_access::gpu_memory || a == device_access::host_memory;
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_BACKEND_H
