// Managed-memory (UVM) hints, spelled once for every CUDA version.
//
// CUDA 13 names a memory location (cudaMemLocation) where CUDA 12 and
// earlier took a device number, with cudaCpuDeviceId for the host. The
// runtime advises and prefetches the managed ranges it wraps, ODT prefetches
// managed offsets before a plan build, and the GPU tests play a program
// that advises its own memory: all three call these.
#ifndef BAM_DETAIL_UVM_CUH
#define BAM_DETAIL_UVM_CUH

#include <cuda_runtime.h>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// cudaMemAdvise for `device` (cudaCpuDeviceId: host memory).
inline cudaError_t mem_advise(const void* p, size_t bytes, cudaMemoryAdvise advice, int device)
{
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where.id = device == cudaCpuDeviceId ? 0 : device;
  return cudaMemAdvise(p, bytes, advice, where);
#else
  return cudaMemAdvise(p, bytes, advice, device);
#endif
}

// cudaMemPrefetchAsync of a managed range to GPU `device`, on the default
// stream.
inline cudaError_t mem_prefetch_to_device(const void* p, size_t bytes, int device)
{
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = cudaMemLocationTypeDevice;
  where.id = device;
  return cudaMemPrefetchAsync(p, bytes, where, 0, 0);
#else
  return cudaMemPrefetchAsync(p, bytes, device, 0);
#endif
}

} // namespace detail
BAM_NAMESPACE_END

#endif
