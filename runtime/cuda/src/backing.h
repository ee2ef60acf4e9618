// Host side of the backends: where an array's lines live when not cached.
// Internal to libbam.
#ifndef BAM_SRC_BACKING_H
#define BAM_SRC_BACKING_H

#include <bam/config.h>
#include <bam/detail/cache_types.cuh>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

// One array's backing store. Sizes are whole lines.
struct backing_region {
  unsigned char* host = nullptr;   // host backend: pinned host address
  unsigned char* device = nullptr; // pointer backends: device-visible address
  uint64_t offset = 0;             // storage backends: byte offset
  uint64_t bytes = 0;
};

class backing_store {
public:
  virtual ~backing_store() = default;
  virtual backing_region allocate(uint64_t bytes) = 0;
  // Initial contents: `n` bytes from host memory (the rest of the region is zero).
  virtual void write_from_host(const backing_region& r, const void* src, uint64_t n) = 0;
  virtual void write_from_device(const backing_region& r, const void* src, uint64_t n) = 0;
  // `n` bytes of `path` at `offset`.
  virtual void write_from_file(const backing_region& r, const std::string& path, uint64_t offset, uint64_t n);
  virtual void read_to_host(const backing_region& r, void* dst, uint64_t n) = 0;
  virtual void release(const backing_region& r) = 0;
  // Storage backends: the device queues (may change after allocate()).
  virtual nvme::queue_set* queues() { return nullptr; }
  // The cache's line slots (GPU memory, 64 KiB aligned, a multiple of
  // 64 KiB), told once before the first queues() call: the nvme backend
  // maps them for the SSD when it can.
  virtual void attach_cache(void* /*slots*/, uint64_t /*bytes*/) {}
  virtual void print(FILE*) {}
};

std::unique_ptr<backing_store> make_hbm_store();
std::unique_ptr<backing_store> make_host_store();
std::unique_ptr<backing_store> make_emu_store(const config& cfg, uint64_t line_bytes);
std::unique_ptr<backing_store> make_nvme_store(const config& cfg, uint64_t line_bytes);

// Throws bam::error naming `what` when a CUDA call failed.
void cuda_check(cudaError_t status, const char* what);

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_BACKING_H
