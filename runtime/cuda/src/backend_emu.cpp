// The emu backend's host side: one sparse backing file per runtime, served
// to the GPU by the queue layer's software NVMe controller.
//
// Arrays get consecutive byte ranges of the file. The controller maps the
// file when it is built, so when an array does not fit we grow the file
// (doubling, sparse) and build a new controller; the runtime re-reads
// queues() after every allocation. Array creation synchronizes the device
// first, so no kernel uses the old queues while they are replaced.
#include "backends.h"
#include "backing.h"

#include <bam/error.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#if !defined(BAM_NO_EMU) && defined(__has_include)
#  if __has_include(<bam/nvme/emu.h>)
#    include <bam/nvme/emu.h>
#    define BAM_HAVE_EMU 1
#  endif
#endif

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

#if defined(BAM_HAVE_EMU)
namespace {

void io_all(bool write, int fd, const std::string& path, void* buf, uint64_t n, uint64_t off)
{
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    ssize_t k = write ? ::pwrite(fd, p, n, off_t(off)) : ::pread(fd, p, n, off_t(off));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      throw error(std::string("emu backend: ") + (write ? "writing" : "reading") + " " + path + " at byte " +
                  std::to_string(off) + " failed: " + (k == 0 ? "end of file" : std::strerror(errno)));
    p += k;
    n -= uint64_t(k);
    off += uint64_t(k);
  }
}

class emu_store final : public backing_store {
public:
  emu_store(const config& cfg, uint64_t line_bytes) : cfg_(cfg), line_bytes_(line_bytes)
  {
    fd_ = open_unnamed(cfg.emu_dir);
    path_ = "the emu backing file in " + cfg.emu_dir;
    opt_.latency_us = cfg.emu_latency_us;
    opt_.iops = cfg.emu_iops;
    opt_.trace_path = cfg.emu_trace;
    opt_.threads = cfg.emu_threads;
    opt_.queues = cfg.queues;
    opt_.queue_depth = cfg.queue_depth;
    opt_.fault = nvme::parse_fault_kind(cfg.emu_fault);
    opt_.fault_rate = cfg.emu_fault_rate;
    if (opt_.max_io_bytes < line_bytes)
      opt_.max_io_bytes = uint32_t(line_bytes);
  }

  ~emu_store() override
  {
    ctl_.reset();
    ::close(fd_);
  }

  backing_region allocate(uint64_t bytes) override
  {
    if (bytes > max_bytes || used_ > max_bytes - bytes)
      throw error("emu backend: " + std::to_string(used_) + " bytes are taken by arrays and " + std::to_string(bytes) +
                  " more were asked for; the backing file holds at most " + std::to_string(max_bytes) +
                  " bytes (2^62). Free arrays or make smaller ones");
    backing_region r;
    r.offset = used_;
    r.bytes = bytes;
    if (used_ + bytes > cap_ || !ctl_)
      grow(used_ + bytes);
    used_ += bytes;
    return r;
  }

  // Largest backing file: off_t is signed, and grow() doubles the capacity.
  static constexpr uint64_t max_bytes = uint64_t(1) << 62;

  // A file with no name in `dir` (O_TMPFILE): nothing to guess, nothing
  // left behind after a crash, never reopened by path (the controller gets
  // the descriptor). Filesystems without O_TMPFILE get a mkostemp name that
  // is unlinked at once.
  static int open_unnamed(const std::string& dir)
  {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
      return fd;
    if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
      std::string tmpl = dir + "/bam-emu-XXXXXX";
      fd = ::mkostemp(&tmpl[0], O_CLOEXEC);
      if (fd >= 0) {
        ::unlink(tmpl.c_str());
        return fd;
      }
    }
    throw error("emu backend: cannot create a backing file in BAM_EMU_DIR=" + dir + ": " + std::strerror(errno) +
                "; set BAM_EMU_DIR to a writable directory");
  }
  void write_from_host(const backing_region& r, const void* src, uint64_t n) override
  {
    io_all(true, fd_, path_, const_cast<void*>(src), n, r.offset);
  }
  void write_from_device(const backing_region& r, const void* src, uint64_t n) override
  {
    std::vector<unsigned char> buf(n);
    cuda_check(cudaMemcpy(buf.data(), src, n, cudaMemcpyDeviceToHost), "emu backend: cudaMemcpy device->host");
    write_from_host(r, buf.data(), n);
  }
  void read_to_host(const backing_region& r, void* dst, uint64_t n) override
  {
    io_all(false, fd_, path_, dst, n, r.offset);
  }
  void release(const backing_region& r) override
  {
    // The bytes stay allocated (bump allocator); zero them so the range
    // reads as a fresh file would if anyone looks.
    std::vector<unsigned char> zeros(std::min<uint64_t>(r.bytes, 1 << 20));
    for (uint64_t done = 0; done < r.bytes; done += zeros.size())
      io_all(true, fd_, path_, zeros.data(), std::min<uint64_t>(zeros.size(), r.bytes - done), r.offset + done);
  }
  nvme::queue_set* queues() override { return ctl_ ? ctl_->device_queues() : nullptr; }
  void print(FILE* out) override
  {
    if (!ctl_)
      return;
    nvme::emu_stats s = ctl_->stats();
    std::fprintf(out,
                 "  emu: %llu commands (%llu reads, %llu writes), %.1f MB, %llu injected errors, %llu delays, "
                 "%llu reorders, max latency %.1f us\n",
                 (unsigned long long)s.commands, (unsigned long long)s.reads, (unsigned long long)s.writes,
                 double(s.bytes) / 1e6, (unsigned long long)s.errors_injected,
                 (unsigned long long)s.delays_injected, (unsigned long long)s.reorders_injected, s.max_latency_us);
  }

private:
  void grow(uint64_t need)
  {
    uint64_t cap = std::max<uint64_t>({need, std::min(2 * cap_, max_bytes), uint64_t(64) << 20});
    cap = (cap + (1u << 20) - 1) & ~uint64_t((1u << 20) - 1);
    cudaDeviceSynchronize(); // no kernel may be using the old controller's queues
    ctl_.reset();
    if (::ftruncate(fd_, off_t(cap)) != 0)
      throw error("emu backend: growing " + path_ + " to " + std::to_string(cap) + " bytes failed: " +
                  std::strerror(errno));
    cap_ = cap;
    ctl_ = std::make_unique<nvme::emu_controller>(fd_, opt_);
  }

  config cfg_;
  uint64_t line_bytes_;
  std::string path_;
  int fd_ = -1;
  uint64_t cap_ = 0;
  uint64_t used_ = 0;
  nvme::emu_options opt_;
  std::unique_ptr<nvme::emu_controller> ctl_;
};

} // namespace

std::unique_ptr<backing_store> emu_backend::setup(const config& cfg)
{
  return std::make_unique<emu_store>(cfg, cfg.line_size());
}
#else
std::unique_ptr<backing_store> emu_backend::setup(const config&)
{
  throw error("emu backend not built: <bam/nvme/emu.h> was not found when libbam was compiled; "
              "use BAM_BACKEND=hbm or host");
}
#endif

} // namespace detail
BAM_NAMESPACE_END // namespace bam
