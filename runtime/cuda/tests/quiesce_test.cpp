// The nvme backend's teardown order (src/nvme_quiesce.h) against a model of
// an NVMe controller's registers: disabling waits for CSTS.RDY = 0 within
// CAP.TO, reports a vanished device and a controller that will not stop,
// and memory is only declared free when the controller stopped.
#include "../src/nvme_quiesce.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

int failures = 0;

void expect(bool ok, const char* what)
{
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  failures += ok ? 0 : 1;
}

// BAR0 of a controller: CAP, CC, CSTS. A model thread clears CSTS.RDY
// `ready_off_ms` after CC.EN goes to 0 (never when negative).
struct model {
  alignas(8) volatile uint32_t regs[0x40] = {};
  std::atomic<bool> stop{false};
  std::thread thr;

  model(uint32_t cap_to, int ready_off_ms)
  {
    regs[BAM_NVME_REG_CAP / 4] = 0x3ff | (cap_to << 24); // MQES 1023, TO
    regs[BAM_NVME_REG_CC / 4] = BAM_NVME_CC_EN | BAM_NVME_CC_IOSQES | BAM_NVME_CC_IOCQES;
    regs[BAM_NVME_REG_CSTS / 4] = BAM_NVME_CSTS_RDY;
    thr = std::thread([this, ready_off_ms] {
      while (!stop.load()) {
        if (!(regs[BAM_NVME_REG_CC / 4] & BAM_NVME_CC_EN) && ready_off_ms >= 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(ready_off_ms));
          regs[BAM_NVME_REG_CSTS / 4] = 0;
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
  }
  ~model()
  {
    stop = true;
    thr.join();
  }
  bool enabled() const { return regs[BAM_NVME_REG_CC / 4] & BAM_NVME_CC_EN; }
};

double ms_since(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main()
{
  using namespace bam::detail;
  {
    model m(2, 20); // stops 20 ms after EN = 0
    const int err = disable_controller(m.regs);
    expect(err == 0 && !m.enabled() && (m.regs[BAM_NVME_REG_CSTS / 4] & BAM_NVME_CSTS_RDY) == 0,
           "disable: CC.EN cleared, returns once CSTS.RDY = 0");
    expect((m.regs[BAM_NVME_REG_CC / 4] & BAM_NVME_CC_IOSQES) == BAM_NVME_CC_IOSQES, "disable: other CC fields kept");
  }
  {
    model m(1, -1); // never stops; CAP.TO = 1: 500 ms
    const auto t0 = std::chrono::steady_clock::now();
    const int err = disable_controller(m.regs);
    const double ms = ms_since(t0);
    expect(err == -ETIMEDOUT, "disable: a controller that keeps RDY = 1 times out");
    expect(ms >= 500 && ms < 5000, "disable: waits CAP.TO (500 ms units), not forever");
  }
  {
    model m(1, -1);
    const auto t0 = std::chrono::steady_clock::now();
    expect(disable_controller(m.regs, 30) == -ETIMEDOUT && ms_since(t0) < 400, "disable: max_wait_ms overrides CAP.TO");
  }
  {
    model m(1, -1);
    for (auto& r : m.regs)
      r = 0xffffffffu; // surprise removal / revoked BAR
    expect(disable_controller(m.regs, 30) == -ENODEV, "disable: registers reading all ones are -ENODEV");
  }

  // The order: deletion first, disable only when it failed, leak only when both failed.
  int disables = 0, reports = 0, reported = 1;
  auto disable_ok = [&] { ++disables; return 0; };
  auto disable_bad = [&] { ++disables; return -ETIMEDOUT; };
  auto report = [&](int e) { ++reports; reported = e; };
  expect(quiesce([] { return true; }, disable_ok, report) == dma_state::stopped && disables == 0 && reports == 0,
         "quiesce: queues deleted -> free, controller left enabled");
  expect(quiesce([] { return false; }, disable_ok, report) == dma_state::stopped && disables == 1 && reports == 1 &&
             reported == 0,
         "quiesce: a failed deletion disables the controller, then frees");
  expect(quiesce([] { return false; }, disable_bad, report) == dma_state::maybe_live && disables == 2 &&
             reports == 2 && reported == -ETIMEDOUT,
         "quiesce: deletion and disable failed -> memory must be leaked");
  {
    model m(1, 5); // the real disable against the model, through quiesce
    expect(quiesce([] { return false; }, [&] { return disable_controller(m.regs); }, [](int) {}) ==
                   dma_state::stopped &&
               !m.enabled(),
           "quiesce + disable_controller: controller stopped before memory is freed");
  }

  if (failures == 0)
    std::printf("quiesce_test: all passed\n");
  return failures != 0;
}
