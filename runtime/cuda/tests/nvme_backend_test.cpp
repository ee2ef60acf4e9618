// The nvme backend's errors when the hardware is missing or misnamed: no
// GPU, SSD or kmod needed (the checks run before any CUDA call).
#include "../src/backing.h"

#include <bam/config.h>
#include <bam/error.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

namespace {

int failures = 0;

// make_nvme_store with BAM_NVME_DEVICE=dev must throw bam::error whose
// message contains every one of `parts`.
void expect_error(const std::string& dev, std::initializer_list<const char*> parts)
{
  bam::config c;
  c.kind = bam::backend::nvme;
  c.nvme_device = dev;
  try {
    auto s = bam::detail::make_nvme_store(c, 4096);
    std::fprintf(stderr, "FAIL %s: no error\n", dev.c_str());
    ++failures;
  } catch (const bam::error& e) {
    const std::string msg = e.what();
    for (const char* p : parts)
      if (msg.find(p) == std::string::npos) {
        std::fprintf(stderr, "FAIL %s: message lacks '%s':\n  %s\n", dev.c_str(), p, msg.c_str());
        ++failures;
      }
    std::printf("ok   %s: %s\n", dev.c_str(), msg.c_str());
  }
}

} // namespace

int main()
{
#if defined(BAM_NVME_TEST_NO_KMOD)
  expect_error("/dev/bam_nvme0", {"nvme backend not built", "KMOD_DIR"});
#else
  expect_error("/nonexistent/bam_nvme9",
               {"nvme backend: BAM_NVME_DEVICE=/nonexistent/bam_nvme9: no such device node", "insmod kmod/bam_nvme.ko",
                "kmod/README.md", "BAM_BACKEND=emu"});
  char tmpl[] = "/tmp/bam_nvme_test_XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd >= 0) {
    close(fd);
    expect_error(tmpl, {"is not a character device", "/dev/bam_nvme0"});
    unlink(tmpl);
  }
  // A character device that is not ours: the module's INFO ioctl is refused.
  if (access("/dev/null", R_OK | W_OK) == 0)
    expect_error("/dev/null", {"opening BAM_NVME_DEVICE=/dev/null failed", "not a bam_nvme node", "/dev/nvmeN",
                                 "kmod/README.md"});
#endif
  if (failures == 0)
    std::printf("nvme_backend_test: all passed\n");
  return failures != 0;
}
