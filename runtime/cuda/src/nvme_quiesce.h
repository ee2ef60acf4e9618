// Stopping an NVMe controller's DMA before the memory it reaches is freed.
//
// The nvme backend gives the controller rings, PRP lists, line buffers and
// (with P2P) the cache itself. Freeing any of them while the controller may
// still write there hands its writes to whoever gets the memory next. So the
// teardown is: delete the I/O queues (the controller aborts or completes
// their commands, then stops using their memory); if any deletion fails,
// disable the whole controller (CC.EN = 0 and CSTS.RDY = 0: it has stopped
// all DMA, as Linux's nvme driver does before freeing); if that fails too,
// leak the memory rather than free it (the module stops the controller
// when the device file closes at exit).
//
// Header-only and free of CUDA and of the host library so that the CPU tests
// (tests/quiesce_test.cpp) run it against a model of the registers.
#ifndef BAM_SRC_NVME_QUIESCE_H
#define BAM_SRC_NVME_QUIESCE_H

#include <bam/nvme/spec.h>
#include <bam/version.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>

BAM_NAMESPACE_BEGIN
namespace detail {

// CC.EN = 0, then wait for CSTS.RDY = 0 for up to CAP.TO (500 ms units;
// `max_wait_ms`, when non-zero, replaces it). `bar` is the controller's
// BAR0. 0 when the controller reports it is disabled; -ENODEV when the
// registers read all ones (the device is gone or the mapping revoked: it is
// unknown whether it stopped); -ETIMEDOUT when RDY stayed 1.
inline int disable_controller(volatile void* bar, uint32_t max_wait_ms = 0)
{
  auto* regs = static_cast<volatile uint32_t*>(bar);
  auto rd = [&](uint32_t off) { return regs[off / 4]; };
  const uint32_t cap_hi = rd(BAM_NVME_REG_CAP + 4), cap_lo = rd(BAM_NVME_REG_CAP);
  const uint32_t cc = rd(BAM_NVME_REG_CC);
  if (cc == 0xffffffffu || (cap_lo == 0xffffffffu && cap_hi == 0xffffffffu))
    return -ENODEV;
  const uint64_t cap = (uint64_t(cap_hi) << 32) | cap_lo;
  const uint32_t to = BAM_NVME_CAP_TO(cap);
  const uint32_t wait_ms = max_wait_ms ? max_wait_ms : (to ? to : 1) * 500u;
  if (cc & BAM_NVME_CC_EN)
    regs[BAM_NVME_REG_CC / 4] = cc & ~BAM_NVME_CC_EN;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    const uint32_t csts = rd(BAM_NVME_REG_CSTS);
    if (csts == 0xffffffffu)
      return -ENODEV;
    if (!(csts & BAM_NVME_CSTS_RDY))
      return 0;
    if (std::chrono::steady_clock::now() > deadline)
      return -ETIMEDOUT;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Whether memory the controller was given may be freed.
enum class dma_state {
  stopped,    // queues deleted, or the controller disabled: free it
  maybe_live, // neither worked: leak it
};

// The teardown order above. `delete_queues()` deletes every I/O queue pair
// and returns true if all deletions succeeded; `disable()` returns 0 or a
// negative errno (disable_controller). `on_disable(err)` is told when the
// controller had to be disabled, and how that went.
template <class DeleteQueues, class Disable, class Report>
dma_state quiesce(DeleteQueues delete_queues, Disable disable, Report on_disable)
{
  if (delete_queues())
    return dma_state::stopped;
  const int err = disable();
  on_disable(err);
  return err == 0 ? dma_state::stopped : dma_state::maybe_live;
}

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_NVME_QUIESCE_H
