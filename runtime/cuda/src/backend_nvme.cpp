// The nvme backend's host side: arrays live on one NVMe namespace of a
// controller bound to kmod/bam_nvme.ko (BAM_NVME_DEVICE=/dev/bam_nvmeN).
// bam_nvme_host.c brings the controller up; GPU threads then drive I/O queue pairs
// created here with the same queue code as the emu backend (queue.cuh),
// set up through bam/nvme/direct.h.
//
// Placement:
//   - module built with NVIDIA P2P (BAM_IOC_MAP_GPU works): SQ/CQ rings, PRP
//     lists and the cache lines themselves in GPU memory; the SSD DMAs
//     straight into the cache (QUEUE_MODE_DIRECT);
//   - otherwise: rings, PRP lists and per-slot line buffers in pinned host
//     memory (page-aligned, DMA-mapped by the module, registered with CUDA
//     and mapped into the GPU); the GPU copies lines between those buffers
//     and the cache (QUEUE_MODE_BOUNCE).
//   Either way the doorbells are BAR0, registered with
//   cudaHostRegisterIoMemory and reached through cudaHostGetDevicePointer.
//
// Host-side transfers (array creation, copy-out) go through one CPU queue
// pair of bam_nvme_host.c. Regions are handed out first-fit over the namespace and
// zeroed before a kernel can see them, as every backend's regions start.
//
// What has run: the host-memory queue set with CPU threads against QEMU's
// controller (kmod/test/bam_queue_test.cpp). This file with a GPU and a real
// SSD has not run anywhere; it compiles in CI.
#include "backends.h"
#include "backing.h"

#include <bam/error.h>

#if !defined(BAM_NO_NVME) && defined(__has_include)
#  if __has_include(<bam_kmod_abi.h>)
#    include "bam_nvme_host.h"
#    include <bam_kmod_abi.h>
#    include <bam/nvme/direct.h>
#    include "nvme_quiesce.h"
#    define BAM_HAVE_KMOD 1
#  endif
#endif

#if defined(BAM_HAVE_KMOD)
#  include <algorithm>
#  include <cerrno>
#  include <cstring>
#  include <vector>

#  include <sys/mman.h>
#  include <sys/stat.h>
#endif

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace detail {

#if defined(BAM_HAVE_KMOD)
namespace {

constexpr uint64_t gpu_page = 64 << 10; // NVIDIA P2P granule

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

std::string see_readme(const std::string& section)
{
  return " (kmod/README.md, '" + section + "')";
}

// BAM_NVME_DEVICE checked before the library touches it, so that each
// common mistake gets its own fix.
void check_node(const std::string& path)
{
  struct ::stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      throw error("nvme backend: BAM_NVME_DEVICE=" + path +
                  ": no such device node. Load the module and bind a controller that nothing else uses to "
                  "it: insmod kmod/bam_nvme.ko, then driver_override + drivers_probe" +
                  see_readme("Load, bind, unbind") +
                  "; without an SSD, BAM_BACKEND=emu runs the same queue code against a file");
    throw error("nvme backend: BAM_NVME_DEVICE=" + path + ": " + std::strerror(errno));
  }
  if (!S_ISCHR(st.st_mode))
    throw error("nvme backend: BAM_NVME_DEVICE=" + path +
                " is not a character device; name the node of a controller bound to bam_nvme, e.g. "
                "/dev/bam_nvme0 (ls -l /dev/bam_nvme*)");
}

std::string open_error(const std::string& path, int err)
{
  std::string msg = "nvme backend: opening BAM_NVME_DEVICE=" + path + " failed: " + bam_nvme_errmsg();
  switch (-err) {
  case EACCES:
  case EPERM:
    return msg + ". The node is root-only and opening it also needs CAP_SYS_RAWIO; run as root, or give the "
                 "program the capability and the account the node" + see_readme("Who may open it");
  case ENOTTY:
  case EINVAL:
    return msg + ". It is not a bam_nvme node: name the /dev/bam_nvmeN of a controller handed to bam_nvme, not "
                 "the kernel nvme driver's /dev/nvmeN" + see_readme("Load, bind, unbind") +
           "; if it is one, load a bam_nvme.ko built from this tree (ABI " + std::to_string(BAM_KMOD_ABI_VERSION) +
           ")";
  case ENODEV:
    return msg + ". The controller was unbound; bind it again" + see_readme("Load, bind, unbind");
  case ETIMEDOUT:
    return msg + ". The controller did not become ready or answer admin commands in time; check dmesg, "
                 "and that no other process drives it";
  default:
    return msg;
  }
}

// Page-aligned host memory that the controller (kmod DMA map, in chunks of
// at most max_map bytes) and the GPU (cudaHostRegister, mapped) both reach.
struct host_dma {
  void* host = nullptr;
  void* dev = nullptr; // GPU address of host
  size_t bytes = 0;
  bool registered = false;
  std::vector<bam_nvme_dma> maps;
  std::vector<uint64_t> bus; // one per 4 KiB page, all chunks
};

// GPU memory mapped for the controller through NVIDIA P2P.
struct gpu_dma {
  void* raw = nullptr; // cudaMalloc result
  void* dev = nullptr; // 64 KiB aligned start
  size_t bytes = 0;
  bool mapped = false;
  bam_nvme_dma map{};
};

bool bus_contiguous(const std::vector<uint64_t>& bus, uint64_t page, uint64_t off, uint64_t len)
{
  uint64_t start = bus[off / page] + off % page;
  for (uint64_t o = (off / page + 1) * page; o < off + len; o += page)
    if (bus[o / page] != start + (o - off))
      return false;
  return true;
}

class nvme_store final : public backing_store {
public:
  nvme_store(const config& cfg, uint64_t line_bytes) : cfg_(cfg), line_bytes_(line_bytes), path_(cfg.nvme_device)
  {
    check_node(path_);
    want_queues_ = cfg.queues > 0 ? uint32_t(cfg.queues) : 32;
    struct bam_nvme_opts o = {};
    o.io_queues = std::min<uint32_t>(want_queues_ + 1, 65535); // + the CPU queue pair
    int err = bam_nvme_open(path_.c_str(), &o, &dev_);
    if (err)
      throw error(open_error(path_, err));
    try {
      info_ = *bam_nvme_info(dev_);
      if (info_.lba_size > line_bytes_)
        throw error("nvme backend: BAM_LINE_BYTES=" + std::to_string(line_bytes_) + " is smaller than the " +
                    std::to_string(info_.lba_size) + "-byte blocks of namespace " + std::to_string(info_.nsid) +
                    " of " + path_ + "; use BAM_LINE_BYTES=" + std::to_string(info_.lba_size) + " or more");
      if (line_bytes_ > info_.max_transfer)
        throw error("nvme backend: BAM_LINE_BYTES=" + std::to_string(line_bytes_) + " is larger than the " +
                    std::to_string(info_.max_transfer) + " bytes one command of " + path_ +
                    " may move (MDTS); use BAM_LINE_BYTES=" + std::to_string(info_.max_transfer) + " or less");
      if (info_.io_queues < 2)
        throw error("nvme backend: " + path_ + " granted " + std::to_string(info_.io_queues) +
                    " I/O queue pair(s); it needs 2 or more (one for the CPU, the rest for the GPU)");
      capacity_ = info_.nlbas * info_.lba_size;
      err = bam_nvme_qp_create(dev_, 64, &cpu_qp_);
      if (err)
        throw error(std::string("nvme backend: creating the CPU queue pair failed: ") + bam_nvme_errmsg());
      stage_bytes_ = std::min<uint32_t>(info_.max_transfer, 1u << 20) / info_.lba_size * info_.lba_size;
      err = bam_nvme_dma_alloc(dev_, stage_bytes_, &stage_);
      if (err)
        throw error(std::string("nvme backend: staging buffer: ") + bam_nvme_errmsg());
    } catch (...) {
      teardown();
      throw;
    }
  }

  ~nvme_store() override { teardown(); }

  bool shutdown() override
  {
    teardown();
    return !dma_live_;
  }

  // The cache lines: GPU memory the SSD writes into directly when the
  // module can map it (P2P); the queues are built here either way.
  void attach_cache(void* slots, uint64_t bytes) override
  {
    try {
      build_queues(slots, bytes);
    } catch (...) {
      drop_queues();
      throw;
    }
  }

  backing_region allocate(uint64_t bytes) override
  {
    backing_region r;
    r.bytes = bytes;
    auto it = std::find_if(free_.begin(), free_.end(), [&](const backing_region& f) { return f.bytes >= bytes; });
    if (it != free_.end()) {
      r.offset = it->offset;
      it->offset += bytes;
      it->bytes -= bytes;
      if (it->bytes == 0)
        free_.erase(it);
    } else {
      if (bytes > capacity_ - used_) // used_ <= capacity_; never used_ + bytes: it can wrap
        throw error("nvme backend: namespace " + std::to_string(info_.nsid) + " of " + path_ + " has " +
                    std::to_string(capacity_) + " bytes; " + std::to_string(used_) + " are taken by arrays and " +
                    std::to_string(bytes) + " more were asked for. Free arrays or use a larger namespace");
      r.offset = used_;
      used_ += bytes;
    }
    pending_.push_back(r);
    return r;
  }

  void write_from_host(const backing_region& r, const void* src, uint64_t n) override
  {
    transfer(true, r.offset, const_cast<void*>(src), n);
    uint64_t done = round_up(n, info_.lba_size); // the last block went out zero-padded
    if (done < r.bytes)
      zero(r.offset + done, r.bytes - done);
    settled(r);
  }

  void write_from_device(const backing_region& r, const void* src, uint64_t n) override
  {
    std::vector<unsigned char> buf(n);
    cuda_check(cudaMemcpy(buf.data(), src, n, cudaMemcpyDeviceToHost), "nvme backend: cudaMemcpy device->host");
    write_from_host(r, buf.data(), n);
  }

  void read_to_host(const backing_region& r, void* dst, uint64_t n) override
  {
    settle();
    transfer(false, r.offset, dst, n);
  }

  void release(const backing_region& r) override
  {
    settled(r);
    free_.push_back(r);
    std::sort(free_.begin(), free_.end(),
              [](const backing_region& a, const backing_region& b) { return a.offset < b.offset; });
    std::vector<backing_region> merged;
    for (const auto& f : free_) {
      if (!merged.empty() && merged.back().offset + merged.back().bytes == f.offset)
        merged.back().bytes += f.bytes;
      else
        merged.push_back(f);
    }
    if (!merged.empty() && merged.back().offset + merged.back().bytes == used_) {
      used_ = merged.back().offset;
      merged.pop_back();
    }
    free_ = std::move(merged);
  }

  // Called after every allocation, before kernels can see the new region:
  // regions not written from the host are zeroed now.
  nvme::queue_set* queues() override
  {
    settle();
    return qs_;
  }

  void print(FILE* out) override
  {
    std::fprintf(out, "  nvme: %s '%s' (serial %s), namespace %u: %llu MB, %u-byte blocks; %u GPU queues x %u "
                      "entries, %s\n",
                 path_.c_str(), info_.model, info_.serial, info_.nsid,
                 (unsigned long long)(capacity_ / 1000000), info_.lba_size, nq_, depth_,
                 gpu_mode_ ? "rings and cache lines in GPU memory (P2P)"
                           : "rings and line buffers in pinned host memory");
    for (const auto& n : notes_)
      std::fprintf(out, "  nvme: %s\n", n.c_str());
  }

private:
  // ---- host-side transfers through the CPU queue pair ----------------
  void transfer(bool write, uint64_t off, void* buf, uint64_t n)
  {
    auto* p = static_cast<unsigned char*>(buf);
    const uint32_t lba = info_.lba_size;
    for (uint64_t done = 0; done < n;) {
      uint64_t len = std::min<uint64_t>(stage_bytes_, n - done);
      uint32_t nlb = uint32_t(round_up(len, lba) / lba);
      int err;
      if (write) {
        std::memcpy(stage_.vaddr, p + done, len);
        std::memset(static_cast<unsigned char*>(stage_.vaddr) + len, 0, size_t(nlb) * lba - len);
        err = bam_nvme_write(cpu_qp_, (off + done) / lba, nlb, &stage_, 0);
      } else {
        err = bam_nvme_read(cpu_qp_, (off + done) / lba, nlb, &stage_, 0);
        if (!err)
          std::memcpy(p + done, stage_.vaddr, len);
      }
      if (err)
        throw error(std::string("nvme backend: ") + (write ? "writing" : "reading") + " " + path_ + " at byte " +
                    std::to_string(off + done) + " failed: " + bam_nvme_errmsg());
      done += len;
    }
  }

  void zero(uint64_t off, uint64_t n)
  {
    const uint32_t lba = info_.lba_size;
    std::memset(stage_.vaddr, 0, stage_bytes_);
    for (uint64_t done = 0; done < n;) {
      uint64_t len = std::min<uint64_t>(stage_bytes_, n - done);
      int err = bam_nvme_write(cpu_qp_, (off + done) / lba, uint32_t(len / lba), &stage_, 0);
      if (err)
        throw error("nvme backend: zeroing " + path_ + " at byte " + std::to_string(off + done) + " failed: " +
                    bam_nvme_errmsg());
      done += len;
    }
  }

  void settled(const backing_region& r)
  {
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](const backing_region& p) { return p.offset == r.offset; }),
                   pending_.end());
  }

  void settle()
  {
    while (!pending_.empty()) {
      backing_region r = pending_.back();
      zero(r.offset, r.bytes);
      pending_.pop_back();
    }
  }

  // ---- memory the controller reaches ----------------------------------
  void host_alloc(host_dma& m, size_t bytes, const char* what)
  {
    m.bytes = round_up(bytes, 4096);
    void* p = ::mmap(nullptr, m.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
      throw error(std::string("nvme backend: mmap of ") + std::to_string(m.bytes) + " bytes for " + what +
                  " failed: " + std::strerror(errno));
    m.host = p;
    ::madvise(p, m.bytes, MADV_DONTFORK);
    // The module maps at most max_map_mb per call (default 1 GiB): chunks.
    const size_t chunk = size_t(256) << 20;
    for (size_t off = 0; off < m.bytes; off += chunk) {
      bam_nvme_dma d;
      size_t len = std::min(chunk, m.bytes - off);
      int err = bam_nvme_dma_map_host(dev_, static_cast<char*>(p) + off, len, &d);
      if (err)
        throw error(std::string("nvme backend: DMA-mapping ") + std::to_string(len) + " bytes for " + what + ": " +
                    bam_nvme_errmsg() + (err == -E2BIG ? "; load the module with a larger max_map_mb" : ""));
      m.maps.push_back(d);
      for (size_t o = 0; o < len; o += 4096)
        m.bus.push_back(bam_nvme_dma_addr(&d, o));
    }
    cuda_check(cudaHostRegister(p, m.bytes, cudaHostRegisterMapped | cudaHostRegisterPortable),
               "nvme backend: cudaHostRegister of pinned queue memory");
    m.registered = true;
    cuda_check(cudaHostGetDevicePointer(&m.dev, p, 0), "nvme backend: cudaHostGetDevicePointer");
  }

  void host_free(host_dma& m)
  {
    if (m.registered)
      cudaHostUnregister(m.host);
    for (auto& d : m.maps)
      bam_nvme_dma_free(dev_, &d);
    if (m.host)
      ::munmap(m.host, m.bytes);
    m = host_dma{};
  }

  // -EOPNOTSUPP when the module has no NVIDIA P2P support.
  int gpu_alloc(gpu_dma& m, size_t bytes, const char* what)
  {
    m.bytes = round_up(bytes, gpu_page);
    cuda_check(cudaMalloc(&m.raw, m.bytes + gpu_page), (std::string("nvme backend: cudaMalloc for ") + what).c_str());
    m.dev = reinterpret_cast<void*>(round_up(reinterpret_cast<uintptr_t>(m.raw), gpu_page));
    cuda_check(cudaMemset(m.raw, 0, m.bytes + gpu_page), "nvme backend: cudaMemset");
    int err = bam_nvme_dma_map_gpu(dev_, m.dev, m.bytes, &m.map);
    m.mapped = err == 0;
    return err;
  }

  void gpu_free(gpu_dma& m)
  {
    if (m.mapped)
      bam_nvme_dma_free(dev_, &m.map); // before the memory goes back to CUDA
    if (m.raw)
      cudaFree(m.raw);
    m = gpu_dma{};
  }

  // A bus-address table the GPU reads (dma_region::bus).
  const uint64_t* gpu_table(const uint64_t* bus, size_t n)
  {
    void* d = nullptr;
    cuda_check(cudaMalloc(&d, n * sizeof(uint64_t)), "nvme backend: cudaMalloc of a bus-address table");
    tables_.push_back(d);
    cuda_check(cudaMemcpy(d, bus, n * sizeof(uint64_t), cudaMemcpyHostToDevice), "nvme backend: cudaMemcpy");
    return static_cast<const uint64_t*>(d);
  }

  nvme::dma_region region(const void* va, uint64_t bytes, uint32_t shift, const uint64_t* bus, size_t n)
  {
    nvme::dma_region r{};
    r.va = reinterpret_cast<uint64_t>(va);
    r.bytes = bytes;
    r.page_shift = shift;
    r.bus = gpu_table(bus, n);
    return r;
  }

  // ---- the GPU queue set ------------------------------------------------
  void build_queues(void* slots, uint64_t slot_bytes)
  {
    nq_ = std::min<uint32_t>(want_queues_, info_.io_queues - 1);
    if (nq_ < want_queues_)
      notes_.push_back("asked for " + std::to_string(want_queues_) + " queues, the controller granted " +
                       std::to_string(nq_) + " (+1 for the CPU)");
    depth_ = uint32_t(cfg_.queue_depth);
    if (depth_ > info_.max_queue_depth) {
      uint32_t d = 2;
      while (d * 2 <= info_.max_queue_depth)
        d *= 2;
      notes_.push_back("BAM_QUEUE_DEPTH " + std::to_string(depth_) + " is more than the controller's " +
                       std::to_string(info_.max_queue_depth) + " (CAP.MQES+1); using " + std::to_string(d));
      depth_ = d;
    }

    // Line buffers (host memory placement): queues x depth x line, pinned.
    const uint64_t max_io = round_up(line_bytes_, 4096), budget = uint64_t(512) << 20;
    std::string bounce_note;
    if (uint64_t(nq_) * depth_ * max_io > budget && depth_ > 64) {
      uint32_t d = depth_;
      while (d > 64 && uint64_t(nq_) * d * max_io > budget)
        d /= 2;
      bounce_note = ("BAM_QUEUE_DEPTH " + std::to_string(depth_) + " would pin " +
                     std::to_string(uint64_t(nq_) * depth_ * max_io >> 20) +
                     " MiB of line buffers in host memory; using depth " + std::to_string(d) +
                     " (lower BAM_QUEUES or BAM_LINE_BYTES to keep more)");
      bounce_depth_ = d;
    } else {
      bounce_depth_ = depth_;
    }

    nvme::direct_setup s;
    s.nsid = info_.nsid;
    s.block_bytes = info_.lba_size;
    s.max_io_bytes = uint32_t(max_io);
    s.flags = nvme::QUEUE_FLAG_LIGHT_FENCE | nvme::QUEUE_FLAG_WARP_COPY | nvme::QUEUE_FLAG_CQ_BATCH;

    // P2P when the module has it: the cache lines themselves are mapped.
    gpu_mode_ = false;
    int gpu_err = -EINVAL;
    if (reinterpret_cast<uintptr_t>(slots) % gpu_page == 0 && slot_bytes % gpu_page == 0) {
      gpu_err = bam_nvme_dma_map_gpu(dev_, slots, slot_bytes, &data_.map);
      data_.mapped = gpu_err == 0;
      data_.dev = slots;
      data_.bytes = slot_bytes; // data_.raw stays null: the runtime owns the slots
    }
    gpu_mode_ = gpu_err == 0;
    if (!gpu_mode_) {
      depth_ = bounce_depth_;
      if (!bounce_note.empty())
        notes_.push_back(bounce_note);
    }
    if (gpu_err == -EOPNOTSUPP)
      notes_.push_back("kmod built without NVIDIA P2P: lines are staged in pinned host memory");
    else if (gpu_err == -EINVAL && !data_.dev)
      notes_.push_back("the cache lines are not 64 KiB aligned for P2P: lines are staged in pinned host memory");
    else if (gpu_err)
      notes_.push_back(std::string("GPU memory could not be mapped for the SSD (") + bam_nvme_errmsg() +
                       "): lines are staged in pinned host memory");

    void* bar_dev = register_bar();
    auto db = [&](volatile uint32_t* host) {
      return reinterpret_cast<uint32_t*>(static_cast<char*>(bar_dev) +
                                         (reinterpret_cast<volatile char*>(host) -
                                          static_cast<volatile char*>(bam_nvme_bar(dev_))));
    };

    // Rings: per queue, SQ then CQ, each starting on a page of its own and
    // contiguous in bus address space (the queues are created physically
    // contiguous). Host pages usually are not without an IOMMU: then the
    // depth drops to what fits in one page.
    const uint64_t pg = gpu_mode_ ? gpu_page : 4096;
    size_t sq_span = 0, per_q = 0;
    std::vector<uint64_t> ring_bus;
    char* ring_dev = nullptr;
    for (;;) {
      const size_t sqb = size_t(depth_) * 64, cqb = size_t(depth_) * 16;
      sq_span = round_up(sqb, pg);
      per_q = sq_span + round_up(cqb, pg);
      if (gpu_mode_) {
        int err = gpu_alloc(gring_, per_q * nq_, "queue rings");
        if (err)
          throw error(std::string("nvme backend: mapping the queue rings in GPU memory failed: ") +
                      bam_nvme_errmsg());
        ring_bus.assign(gring_.map.bus, gring_.map.bus + gring_.map.npages);
        ring_dev = static_cast<char*>(gring_.dev);
      } else {
        host_alloc(hring_, per_q * nq_, "queue rings");
        ring_bus = hring_.bus;
        ring_dev = static_cast<char*>(hring_.dev);
      }
      bool contiguous = true;
      for (uint32_t i = 0; i < nq_; i++)
        contiguous = contiguous && bus_contiguous(ring_bus, pg, i * per_q, sqb) &&
                     bus_contiguous(ring_bus, pg, i * per_q + sq_span, cqb);
      if (contiguous)
        break;
      const uint32_t fit = uint32_t(pg / 64);
      if (gpu_mode_ || depth_ <= fit)
        throw error("nvme backend: the rings of " + std::to_string(depth_) +
                    "-entry queues span pages that are not contiguous in bus address space; use "
                    "BAM_QUEUE_DEPTH=" + std::to_string(fit) + " or less");
      notes_.push_back("rings of " + std::to_string(depth_) +
                       " entries are not contiguous in bus address space in host memory (no IOMMU?): queues "
                       "have " + std::to_string(fit) + " entries instead");
      host_free(hring_);
      depth_ = fit;
    }

    for (uint32_t i = 0; i < nq_; i++) {
      int qid = bam_nvme_qid_alloc(dev_);
      if (qid < 0)
        throw error(std::string("nvme backend: ") + bam_nvme_errmsg());
      uint64_t sq_bus = ring_bus[i * per_q / pg] + (i * per_q) % pg;
      uint64_t cq_bus = ring_bus[(i * per_q + sq_span) / pg] + (i * per_q + sq_span) % pg;
      int err = bam_nvme_create_io_queues(dev_, uint16_t(qid), depth_, sq_bus, cq_bus);
      if (err) {
        bam_nvme_qid_free(dev_, uint16_t(qid));
        throw error(std::string("nvme backend: creating I/O queue pair ") + std::to_string(qid) + " failed: " +
                    bam_nvme_errmsg());
      }
      qids_.push_back(uint16_t(qid));
      nvme::direct_queue_desc d;
      d.qid = uint16_t(qid);
      d.depth = depth_;
      d.sq = reinterpret_cast<bam_nvme_sqe*>(ring_dev + i * per_q);
      d.cq = reinterpret_cast<bam_nvme_cqe*>(ring_dev + i * per_q + sq_span);
      d.sq_db = db(bam_nvme_sq_doorbell(dev_, uint16_t(qid)));
      d.cq_db = db(bam_nvme_cq_doorbell(dev_, uint16_t(qid)));
      d.mode = gpu_mode_ ? nvme::QUEUE_MODE_DIRECT : nvme::QUEUE_MODE_BOUNCE;
      s.queues.push_back(d);
    }

    const size_t prp_bytes = nvme::direct_prp_bytes(s);
    if (gpu_mode_) {
      if (gpu_alloc(gprp_, prp_bytes, "PRP lists"))
        throw error(std::string("nvme backend: mapping PRP lists in GPU memory failed: ") + bam_nvme_errmsg());
      s.prp_lists = static_cast<uint64_t*>(gprp_.dev);
      s.prp_map = region(gprp_.dev, gprp_.bytes, 16, gprp_.map.bus, gprp_.map.npages);
      s.data = region(data_.dev, data_.bytes, 16, data_.map.bus, data_.map.npages);
    } else {
      host_alloc(hprp_, prp_bytes, "PRP lists");
      s.prp_lists = static_cast<uint64_t*>(hprp_.dev);
      s.prp_map = region(hprp_.dev, hprp_.bytes, 12, hprp_.bus.data(), hprp_.bus.size());
      host_alloc(hbounce_, nvme::direct_bounce_bytes(s), "line buffers");
      s.bounce = static_cast<uint8_t*>(hbounce_.dev);
      s.bounce_map = region(hbounce_.dev, hbounce_.bytes, 12, hbounce_.bus.data(), hbounce_.bus.size());
    }
    qs_ = nvme::make_direct_queue_set(s);
  }

  void* register_bar()
  {
    void* bar = const_cast<void*>(bam_nvme_bar(dev_));
    cuda_check(cudaHostRegister(bar, bam_nvme_bar_size(dev_), cudaHostRegisterIoMemory | cudaHostRegisterMapped),
               "nvme backend: cudaHostRegister(cudaHostRegisterIoMemory) of the controller's BAR0 (needs a GPU "
               "and driver that allow peer-to-peer MMIO)");
    bar_registered_ = true;
    void* d = nullptr;
    cuda_check(cudaHostGetDevicePointer(&d, bar, 0), "nvme backend: cudaHostGetDevicePointer of BAR0");
    return d;
  }

  // Takes the GPU queues down and frees what the controller reached, unless
  // it may still be writing there (nvme_quiesce.h): then everything stays
  // mapped and allocated (dma_live_), and the runtime leaks the cache too.
  void drop_queues()
  {
    cudaDeviceSynchronize(); // no kernel may still use the queues; a trapped one may leave commands in flight
    if (qs_)
      nvme::free_direct_queue_set(qs_); // GPU-side bookkeeping only: the controller never reaches it
    qs_ = nullptr;
    if (dma_live_)
      return;
    const dma_state st = quiesce(
        [&] {
          bool all = true;
          for (uint16_t q : qids_) {
            if (bam_nvme_delete_io_queues(dev_, q) != 0) {
              if (all)
                std::fprintf(stderr, "bam: nvme backend: deleting I/O queue pair %u of %s failed: %s\n", unsigned(q),
                             path_.c_str(), bam_nvme_errmsg());
              all = false;
            }
          }
          return all;
        },
        [&] { return disable_controller(bam_nvme_bar(dev_)); },
        [&](int err) {
          if (err == 0)
            std::fprintf(stderr, "bam: nvme backend: disabled the controller of %s so that it stops DMA before its "
                                 "memory is freed\n", path_.c_str());
          else
            std::fprintf(stderr, "bam: nvme backend: the controller of %s could not be disabled (%s) after a failed "
                                 "queue deletion; its rings, buffers and the cache stay allocated until exit, when "
                                 "the module stops it\n", path_.c_str(), std::strerror(-err));
        });
    if (st == dma_state::maybe_live) {
      dma_live_ = true;
      if (bar_registered_)
        cudaHostUnregister(const_cast<void*>(bam_nvme_bar(dev_)));
      bar_registered_ = false;
      return; // leak: rings, PRP lists, line buffers and their DMA maps stay
    }
    for (uint16_t q : qids_)
      bam_nvme_qid_free(dev_, q);
    qids_.clear();
    if (bar_registered_)
      cudaHostUnregister(const_cast<void*>(bam_nvme_bar(dev_)));
    bar_registered_ = false;
    for (void* t : tables_)
      cudaFree(t);
    tables_.clear();
    host_free(hring_);
    host_free(hprp_);
    host_free(hbounce_);
    gpu_free(gring_);
    gpu_free(gprp_);
    gpu_free(data_); // unmaps the cache lines; the runtime frees them
  }

  void teardown()
  {
    if (!dev_)
      return;
    drop_queues();
    if (dma_live_) {
      // The controller may still write to host memory of this process: keep
      // the device open (and with it every pin) instead of bam_nvme_close,
      // which frees the admin queue and the CPU queue pair's memory.
      dev_ = nullptr;
      return;
    }
    if (stage_.bus)
      bam_nvme_dma_free(dev_, &stage_);
    bam_nvme_close(dev_); // destroys the CPU queue pair, shuts the controller down
    dev_ = nullptr;
  }

  config cfg_;
  uint64_t line_bytes_;
  std::string path_;
  struct bam_nvme_dev* dev_ = nullptr;
  struct bam_nvme_ctrl_info info_ {};
  struct bam_nvme_qp* cpu_qp_ = nullptr;
  struct bam_nvme_dma stage_ {};
  uint32_t stage_bytes_ = 0;
  uint64_t capacity_ = 0, used_ = 0;
  std::vector<backing_region> free_, pending_;
  uint32_t want_queues_ = 0, nq_ = 0, depth_ = 0, bounce_depth_ = 0;
  bool gpu_mode_ = false, bar_registered_ = false;
  bool dma_live_ = false; // the controller could not be stopped: its memory is leaked, not freed
  std::vector<uint16_t> qids_;
  std::vector<void*> tables_;
  host_dma hring_, hprp_, hbounce_;
  gpu_dma gring_, gprp_, data_;
  std::vector<std::string> notes_;
  nvme::queue_set* qs_ = nullptr;
};

} // namespace

std::unique_ptr<backing_store> make_nvme_store(const config& cfg, uint64_t line_bytes)
{
  return std::make_unique<nvme_store>(cfg, line_bytes);
}
#else
std::unique_ptr<backing_store> make_nvme_store(const config& cfg, uint64_t)
{
  throw error("nvme backend not built: libbam was compiled without kmod/include/bam_kmod_abi.h (the module's "
              "ioctl ABI), so "
              "BAM_NVME_DEVICE=" + cfg.nvme_device +
              " cannot be used. Build the runtime from the bamgen tree (make -C runtime/cuda lib, which finds "
              "../../kmod), or pass KMOD_DIR=/path/to/bamgen/kmod; or use BAM_BACKEND=emu");
}
#endif

std::unique_ptr<backing_store> nvme_backend::setup(const config& cfg)
{
  return make_nvme_store(cfg, cfg.line_size());
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam
