// The pointer backends: hbm (device memory) and host (pinned, mapped host
// memory read by GPU threads over PCIe), and file loading shared by all.
#include "backing.h"

#include <bam/error.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

void cuda_check(cudaError_t status, const char* what)
{
  if (status != cudaSuccess)
    throw error(std::string(what) + " failed: " + cudaGetErrorString(status));
}

namespace {

// Closes a file descriptor on every path out.
struct fd_guard {
  int fd;
  ~fd_guard()
  {
    if (fd >= 0)
      ::close(fd);
  }
};

// Read exactly n bytes at offset or throw.
void pread_all(int fd, const std::string& path, void* dst, uint64_t n, uint64_t offset)
{
  auto* p = static_cast<unsigned char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, n, off_t(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      throw error("array_from_file: reading '" + path + "' at byte " + std::to_string(offset) + " failed: " +
                  (got == 0 ? std::string("unexpected end of file") : std::string(std::strerror(errno))));
    p += got;
    n -= uint64_t(got);
    offset += uint64_t(got);
  }
}

} // namespace

// Generic path: stream the file through a host buffer into write_from_host.
void backing_store::write_from_file(const backing_region& r, const std::string& path, uint64_t offset, uint64_t n)
{
  fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0)
    throw error("array_from_file: cannot open '" + path + "': " + std::strerror(errno));
  off_t size = ::lseek(f.fd, 0, SEEK_END);
  if (size < 0 || uint64_t(size) < offset + n)
    throw error("array_from_file: '" + path + "' has " + std::to_string(size) + " bytes, but offset " +
                std::to_string(offset) + " + " + std::to_string(n) + " bytes were asked for");
  std::vector<unsigned char> buf(n);
  pread_all(f.fd, path, buf.data(), n, offset);
  write_from_host(r, buf.data(), n);
}

namespace {

class hbm_store final : public backing_store {
public:
  backing_region allocate(uint64_t bytes) override
  {
    backing_region r;
    r.bytes = bytes;
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&r.device), bytes), "hbm backend: cudaMalloc of the array");
    cuda_check(cudaMemset(r.device, 0, bytes), "hbm backend: cudaMemset");
    return r;
  }
  void write_from_host(const backing_region& r, const void* src, uint64_t n) override
  {
    cuda_check(cudaMemcpy(r.device, src, n, cudaMemcpyHostToDevice), "hbm backend: cudaMemcpy host->device");
  }
  void write_from_device(const backing_region& r, const void* src, uint64_t n) override
  {
    cuda_check(cudaMemcpy(r.device, src, n, cudaMemcpyDeviceToDevice), "hbm backend: cudaMemcpy device->device");
  }
  void read_to_host(const backing_region& r, void* dst, uint64_t n) override
  {
    cuda_check(cudaMemcpy(dst, r.device, n, cudaMemcpyDeviceToHost), "hbm backend: cudaMemcpy device->host");
  }
  void release(const backing_region& r) override { cudaFree(r.device); }
};

class host_store final : public backing_store {
public:
  backing_region allocate(uint64_t bytes) override
  {
    backing_region r;
    r.bytes = bytes;
    void* h = nullptr;
    cuda_check(cudaHostAlloc(&h, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
               "host backend: cudaHostAlloc (pinned, mapped) of the array");
    std::memset(h, 0, bytes);
    void* d = nullptr;
    cuda_check(cudaHostGetDevicePointer(&d, h, 0), "host backend: cudaHostGetDevicePointer");
    r.host = static_cast<unsigned char*>(h);
    r.device = static_cast<unsigned char*>(d);
    return r;
  }
  void write_from_host(const backing_region& r, const void* src, uint64_t n) override { std::memcpy(r.host, src, n); }
  void write_from_device(const backing_region& r, const void* src, uint64_t n) override
  {
    cuda_check(cudaMemcpy(r.host, src, n, cudaMemcpyDeviceToHost), "host backend: cudaMemcpy device->host");
  }
  void write_from_file(const backing_region& r, const std::string& path, uint64_t offset, uint64_t n) override
  {
    fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0)
      throw error("array_from_file: cannot open '" + path + "': " + std::strerror(errno));
    off_t size = ::lseek(f.fd, 0, SEEK_END);
    if (size < 0 || uint64_t(size) < offset + n)
      throw error("array_from_file: '" + path + "' has " + std::to_string(size) + " bytes, but offset " +
                  std::to_string(offset) + " + " + std::to_string(n) + " bytes were asked for");
    pread_all(f.fd, path, r.host, n, offset); // straight into pinned memory, no staging copy
  }
  void read_to_host(const backing_region& r, void* dst, uint64_t n) override { std::memcpy(dst, r.host, n); }
  void release(const backing_region& r) override { cudaFreeHost(r.host); }
};

} // namespace

std::unique_ptr<backing_store> make_hbm_store() { return std::make_unique<hbm_store>(); }
std::unique_ptr<backing_store> make_host_store() { return std::make_unique<host_store>(); }

} // namespace detail
BAM_NAMESPACE_END // namespace bam
