// bam::config: parsing of BAM_* variables and the errors bad values give.
#include "../src/fatal.h"

#include <bam/config.h>
#include <bam/error.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

int failures = 0;

void expect(bool ok, const char* what)
{
  if (!ok) {
    std::fprintf(stderr, "FAIL %s\n", what);
    ++failures;
  }
}

// from_env() with one variable set must throw exactly `want`.
void expect_error(const char* var, const char* value, const std::string& want)
{
  setenv(var, value, 1);
  try {
    (void)bam::config::from_env();
    std::fprintf(stderr, "FAIL %s=%s: no error\n", var, value);
    ++failures;
  } catch (const bam::error& e) {
    if (want != e.what()) {
      std::fprintf(stderr, "FAIL %s=%s:\n  got  %s\n  want %s\n", var, value, e.what(), want.c_str());
      ++failures;
    }
  }
  unsetenv(var);
}

} // namespace

int main()
{
  expect(bam::parse_size("256M", "X") == (size_t(256) << 20), "256M");
  expect(bam::parse_size("4k", "X") == 4096, "4k");
  expect(bam::parse_size("4KiB", "X") == 4096, "4KiB");
  expect(bam::parse_size("1G", "X") == (size_t(1) << 30), "1G");
  expect(bam::parse_size("123", "X") == 123, "123");

  expect_error("BAM_CACHE_BYTES", "abc",
               "BAM_CACHE_BYTES: 'abc' is not a size; use a number with optional k/M/G suffix, e.g. 256M");
  expect_error("BAM_CACHE_BYTES", "12Q",
               "BAM_CACHE_BYTES: '12Q' is not a size; use a number with optional k/M/G suffix, e.g. 256M");
  expect_error("BAM_BACKEND", "ssd", "BAM_BACKEND: 'ssd' is not a backend; use hbm, host, emu or nvme");
  expect_error("BAM_LINE_BYTES", "3000",
               "BAM_LINE_BYTES: 3000 is not a power of two between 128 and 65536 (64k) for the hbm backend; e.g. 4096 "
               "(its default), or unset it");
  expect_error("BAM_LINE_BYTES", "64",
               "BAM_LINE_BYTES: 64 is not a power of two between 128 and 65536 (64k) for the hbm backend; e.g. 4096 "
               "(its default), or unset it");
  expect_error("BAM_LINE_BYTES", "128k",
               "BAM_LINE_BYTES: 131072 is not a power of two between 128 and 65536 (64k) for the hbm backend; e.g. 4096 "
               "(its default), or unset it");
  expect_error("BAM_CACHE_POLICY", "lru",
               "BAM_CACHE_POLICY: 'lru' is not a replacement policy; use freq (frequency-aware clock, the default) or fifo");
  // Line sizes per backend: host memory is read in short lines, storage in 4 KiB ones (issue 18).
  {
    const struct {
      const char* backend;
      size_t line;
    } defaults[] = {{"hbm", 4096}, {"host", 512}, {"emu", 4096}, {"nvme", 4096}};
    setenv("BAM_NVME_DEVICE", "/dev/bam_nvme0", 1);
    for (const auto& d : defaults) {
      setenv("BAM_BACKEND", d.backend, 1);
      const bam::config c = bam::config::from_env();
      expect(c.line_bytes == 0 && c.line_size() == d.line, d.backend);
      setenv("BAM_LINE_BYTES", "8k", 1);
      expect(bam::config::from_env().line_size() == 8192, "BAM_LINE_BYTES overrides the backend's default");
      unsetenv("BAM_LINE_BYTES");
    }
    setenv("BAM_BACKEND", "host", 1);
    setenv("BAM_LINE_BYTES", "128", 1);
    expect(bam::config::from_env().line_size() == 128, "host accepts 128-byte lines");
    unsetenv("BAM_LINE_BYTES");
    setenv("BAM_BACKEND", "emu", 1);
    expect_error("BAM_LINE_BYTES", "256",
                 "BAM_LINE_BYTES: 256 is not a power of two between 512 and 65536 (64k) for the emu backend; e.g. 4096 "
                 "(its default), or unset it");
    setenv("BAM_BACKEND", "nvme", 1);
    expect_error("BAM_LINE_BYTES", "128",
                 "BAM_LINE_BYTES: 128 is not a power of two between 512 and 65536 (64k) for the nvme backend; e.g. 4096 "
                 "(its default), or unset it");
    unsetenv("BAM_NVME_DEVICE");
    unsetenv("BAM_BACKEND");
    bam::config c; // from code: the same rules
    c.kind = bam::backend::host;
    c.cache_bytes = 300;
    try {
      c.validate();
      expect(false, "a 300-byte cache of 512-byte host lines: no error");
    } catch (const bam::error& e) {
      expect(std::string(e.what()) == "BAM_CACHE_BYTES: 300 is smaller than one line (512 bytes); use e.g. 256M", e.what());
    }
    expect(bam::config().cache_policy == "freq", "BAM_CACHE_POLICY default");
    setenv("BAM_CACHE_POLICY", "fifo", 1);
    expect(bam::config::from_env().cache_policy == "fifo", "BAM_CACHE_POLICY=fifo");
    unsetenv("BAM_CACHE_POLICY");
  }
  expect_error("BAM_STATS", "yes", "BAM_STATS: 'yes' is not an integer in [0, 1]");
  expect_error("BAM_EMU_FAULT", "boom",
               "BAM_EMU_FAULT: 'boom' is not a fault kind; use none, error, transient, delay or reorder");
  expect_error("BAM_QUEUE_DEPTH", "1000", "BAM_QUEUE_DEPTH: 1000 is not a power of two in [2, 65536]");

  expect_error("BAM_NVME_DEVICE", "bam_nvme0",
               "BAM_NVME_DEVICE: 'bam_nvme0' is not an absolute path; use e.g. /dev/bam_nvme0");
  setenv("BAM_NVME_DEVICE", "", 1); // empty counts as unset
  expect_error("BAM_BACKEND", "nvme",
               "BAM_BACKEND=nvme needs BAM_NVME_DEVICE=/dev/bam_nvmeN, the node kmod/bam_nvme.ko creates for a "
               "controller bound to it (kmod/README.md); or use BAM_BACKEND=emu to run the same queue code "
               "against a file");
  setenv("BAM_NVME_DEVICE", "/dev/bam_nvme3", 1);
  setenv("BAM_BACKEND", "nvme", 1);
  expect(bam::config::from_env().nvme_device == "/dev/bam_nvme3", "BAM_NVME_DEVICE value");
  unsetenv("BAM_NVME_DEVICE");

  setenv("BAM_BACKEND", "host", 1);
  expect_error("BAM_ODT_ITEM_VERTICES", "-1", "BAM_ODT_ITEM_VERTICES: '-1' is not an integer in [0, 1099511627776]");
  expect_error("BAM_ODT_ITEM_VERTICES", "many", "BAM_ODT_ITEM_VERTICES: 'many' is not an integer in [0, 1099511627776]");
  setenv("BAM_ODT_ITEM_VERTICES", "0", 1);
  expect(bam::config::from_env().odt_item_vertices == 0, "BAM_ODT_ITEM_VERTICES=0 (whole tiles)");
  unsetenv("BAM_ODT_ITEM_VERTICES");
  expect(bam::config::from_env().odt_item_vertices == 128, "BAM_ODT_ITEM_VERTICES default");

  setenv("BAM_CACHE_BYTES", "64M", 1);
  setenv("BAM_LINE_BYTES", "8k", 1);
  setenv("BAM_STATS", "0", 1);
  bam::config c = bam::config::from_env();
  expect(c.kind == bam::backend::host && c.cache_bytes == (size_t(64) << 20) && c.line_bytes == 8192 && !c.stats,
         "from_env values");
  unsetenv("BAM_CACHE_BYTES");
  unsetenv("BAM_LINE_BYTES");
  unsetenv("BAM_STATS");
  unsetenv("BAM_BACKEND");

  // Backend names come from the registry, in enum order.
  expect(std::strcmp(bam::backend_name(bam::backend::hbm), "hbm") == 0 &&
             std::strcmp(bam::backend_name(bam::backend::host), "host") == 0 &&
             std::strcmp(bam::backend_name(bam::backend::emu), "emu") == 0 &&
             std::strcmp(bam::backend_name(bam::backend::nvme), "nvme") == 0,
         "backend_name of every enumerator");
  expect(std::strcmp(bam::backend_name(bam::backend(bam::backend_count)), "?") == 0, "backend_name out of range");
  for (uint32_t i = 0; i < bam::backend_count; ++i) { // every registered name parses back to its enumerator
    const char* name = bam::backend_name(bam::backend(i));
    setenv("BAM_BACKEND", name, 1);
    if (i == uint32_t(bam::backend::nvme))
      setenv("BAM_NVME_DEVICE", "/dev/bam_nvme0", 1);
    expect(bam::config::from_env().kind == bam::backend(i), name);
    unsetenv("BAM_NVME_DEVICE");
  }
  unsetenv("BAM_BACKEND");
  {
    bam::config c;
    c.kind = bam::backend(7); // a bad cast from an integer
    try {
      c.validate();
      expect(false, "validate() of backend 7: no error");
    } catch (const bam::error& e) {
      expect(std::string(e.what()) == "bam::config: backend 7 is not a backend; use hbm, host, emu or nvme",
             e.what());
    }
  }

  // BAM_STALL_TIMEOUT_S: 2e10 s is 2e19 ns, past 64 bits (it used to wrap to
  // a 0 ns timeout); bounded instead, from the environment and from code.
  expect_error("BAM_STALL_TIMEOUT_S", "2e10", "BAM_STALL_TIMEOUT_S: '2e10' is not a number in [0.001, 1000000]");
  expect_error("BAM_STALL_TIMEOUT_S", "0", "BAM_STALL_TIMEOUT_S: '0' is not a number in [0.001, 1000000]");
  expect_error("BAM_STALL_TIMEOUT_S", "nan", "BAM_STALL_TIMEOUT_S: 'nan' is not a number in [0.001, 1000000]");
  expect_error("BAM_STALL_TIMEOUT_S", "inf", "BAM_STALL_TIMEOUT_S: 'inf' is not a number in [0.001, 1000000]");
  setenv("BAM_STALL_TIMEOUT_S", "1e6", 1);
  expect(bam::config::from_env().stall_timeout_s == 1e6, "BAM_STALL_TIMEOUT_S=1e6 (the bound) accepted");
  unsetenv("BAM_STALL_TIMEOUT_S");
  {
    bam::config c;
    c.stall_timeout_s = 2e10;
    try {
      c.validate();
      expect(false, "validate() with stall_timeout_s = 2e10: no error");
    } catch (const bam::error& e) {
      expect(std::string(e.what()) == "BAM_STALL_TIMEOUT_S: 20000000000 is not in [0.001, 1000000] seconds",
             e.what());
    }
    c.stall_timeout_s = std::nan("");
    bool threw = false;
    try {
      c.validate();
    } catch (const bam::error&) {
      threw = true;
    }
    expect(threw, "validate() with stall_timeout_s = NaN");
  }

  // The emu backend's variables, parsed by its registry entry.
  expect_error("BAM_EMU_LATENCY_US", "1e300", "BAM_EMU_LATENCY_US: '1e300' is not a number in [0, 1000000000]");
  expect_error("BAM_EMU_IOPS", "-5", "BAM_EMU_IOPS: '-5' is not a number in [0, 1000000000000]");
  expect_error("BAM_EMU_IOPS", "0.5", "BAM_EMU_IOPS: 0.5 is not 0 (no cap) or in [1, 1000000000000]");
  expect_error("BAM_EMU_THREADS", "1024", "BAM_EMU_THREADS: '1024' is not an integer in [1, 256]");
  expect_error("BAM_EMU_FAULT_RATE", "1.5", "BAM_EMU_FAULT_RATE: '1.5' is not a number in [0, 1]");
  setenv("BAM_EMU_LATENCY_US", "12.5", 1);
  setenv("BAM_EMU_FAULT", "delay", 1);
  {
    const bam::config c = bam::config::from_env();
    expect(c.emu_latency_us == 12.5 && c.emu_fault == "delay", "emu variables parsed");
  }
  unsetenv("BAM_EMU_LATENCY_US");
  unsetenv("BAM_EMU_FAULT");

  // An uncaught bam::error after exit_on_uncaught_error(): its message on
  // stderr and exit status 1 (not terminate's abort, status 134); other
  // exceptions still abort.
  {
    int pipefd[2];
    if (pipe(pipefd) == 0) {
      pid_t pid = fork();
      if (pid == 0) {
        dup2(pipefd[1], 2);
        bam::detail::exit_on_uncaught_error();
        throw bam::error("bam: device-side read of line 7 of array #0 failed");
      }
      close(pipefd[1]);
      char buf[256] = {};
      ssize_t got = read(pipefd[0], buf, sizeof buf - 1);
      close(pipefd[0]);
      int status = 0;
      waitpid(pid, &status, 0);
      expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "uncaught bam::error: exit status 1");
      expect(got > 0 && std::string(buf) == "bam: device-side read of line 7 of array #0 failed\n",
             "uncaught bam::error: its message alone on stderr");
    }
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open("/dev/null", O_WRONLY);
      dup2(fd, 2);
      bam::detail::exit_on_uncaught_error();
      throw std::runtime_error("not ours");
    }
    int status = 0;
    waitpid(pid, &status, 0);
    expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "uncaught other exception: still aborts");
  }

  if (failures == 0)
    std::printf("config_test: all passed\n");
  return failures != 0;
}
