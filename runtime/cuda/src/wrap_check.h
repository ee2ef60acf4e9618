// Which memory runtime::array_wrap accepts, decided from what
// cudaPointerGetAttributes says about the pointer (wrap.cu passes the
// fields in). Plain C++ (no CUDA): tests/wrap_check_test.cpp runs it on
// the CPU.
//
// A wrapped array reads and writes the program's own memory in place, so
// the pointer must be one the GPU can address: device memory of the
// current device, managed memory, or pinned host memory with a device
// mapping (cudaHostAlloc, cudaMallocHost, cudaHostRegister with a device
// pointer). Pageable host memory (malloc, new, the stack) is refused.
#ifndef BAM_SRC_WRAP_CHECK_H
#define BAM_SRC_WRAP_CHECK_H

#include <bam/version.h>

#include <cstdint>
#include <string>

BAM_NAMESPACE_BEGIN
namespace detail {

// The memory kinds cudaMemoryType names (the values differ between CUDA
// versions' headers only in name, so the caller maps them).
enum class wrap_memory { unregistered, host, device, managed };

struct wrap_pointer {
  wrap_memory kind = wrap_memory::unregistered;
  const void* device_pointer = nullptr; // where kernels reach it (cudaPointerAttributes::devicePointer)
  const void* host_pointer = nullptr;   // where the CPU reaches it, if it can (hostPointer)
  int device = 0;                       // the device it belongs to (device memory)
};

struct wrap_result {
  void* direct = nullptr; // the pointer kernels use; nullptr: refused
  void* host = nullptr;   // host-side address for range copies done on the CPU (host memory only)
  std::string why;        // why it was refused
};

// what: "array_wrap(\"name\")" or similar, for the message.
inline wrap_result check_wrap(const wrap_pointer& p, int current_device, const std::string& what)
{
  wrap_result r;
  switch (p.kind) {
  case wrap_memory::unregistered:
    r.why = what + ": the pointer is pageable host memory (malloc, new or the stack), which the GPU cannot address; "
                   "allocate it with cudaMallocManaged or cudaHostAlloc, register it with cudaHostRegister, or copy "
                   "it with array_from_host";
    return r;
  case wrap_memory::host:
    if (p.device_pointer == nullptr) {
      r.why = what + ": the pinned host memory has no device mapping; allocate it with cudaHostAllocMapped or "
                     "pass the pointer cudaHostGetDevicePointer gives";
      return r;
    }
    r.direct = const_cast<void*>(p.device_pointer);
    r.host = const_cast<void*>(p.host_pointer);
    return r;
  case wrap_memory::device:
    if (p.device != current_device) {
      r.why = what + ": the pointer is device memory of GPU " + std::to_string(p.device) + ", not of the current GPU " +
              std::to_string(current_device) + "; make the array on the device that owns the memory";
      return r;
    }
    r.direct = const_cast<void*>(p.device_pointer);
    if (r.direct == nullptr)
      r.why = what + ": CUDA gave no device address for the pointer";
    return r;
  case wrap_memory::managed:
    r.direct = const_cast<void*>(p.device_pointer);
    if (r.direct == nullptr)
      r.why = what + ": CUDA gave no device address for the managed pointer";
    return r;
  }
  r.why = what + ": unknown memory type";
  return r;
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_WRAP_CHECK_H
