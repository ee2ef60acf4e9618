// The backend registry: one entry per bam::backend, in enum order.
//
// An entry is a struct with
//   kind       its bam::backend enumerator (include/bam/backend.h)
//   name       what BAM_BACKEND accepts and print_stats shows
//   access     how device code reaches its lines (detail::device_access):
//              the one place a backend meets the device side
//   default_line_bytes, min_line_bytes
//              the cache line size when BAM_LINE_BYTES is not set, and the
//              smallest it accepts (issue 18: memory backends are
//              bandwidth-bound and want short lines, storage is
//              request-bound and wants 4 KiB; a storage line is at least one
//              512-byte block)
//   parse_env  reads its own BAM_* variables into bam::config
//   validate   checks its config fields (called for every backend; checks
//              that only matter when it is the chosen one test c.kind)
//   setup      builds its host side, a backing_store (defined in the
//              backend's own source file, src/backend_<name>.cpp or
//              backing.cpp)
// and `registry` lists the entries. config.cpp (names, variables,
// validation) and runtime.cu (setup, access) only iterate over it, so
// adding a backend is: an enumerator, an entry here, and its source file
// (docs/adding-a-backend.md).
//
// Internal to libbam. Needs no CUDA headers: config_test builds config.cpp
// with it and no GPU toolkit (setup is declared here, defined with CUDA).
#ifndef BAM_SRC_BACKENDS_H
#define BAM_SRC_BACKENDS_H

#include "env.h"

#include <bam/backend.h>
#include <bam/config.h>
#include <bam/error.h>

#include <cstddef>
#include <memory>
#include <string>

BAM_NAMESPACE_BEGIN
namespace detail {

class backing_store;

// ---- entries -----------------------------------------------------------

struct hbm_backend {
  static constexpr backend kind = backend::hbm;
  static constexpr const char* name = "hbm";
  static constexpr size_t default_line_bytes = 4096;
  static constexpr size_t min_line_bytes = 128;
  static constexpr device_access access = device_access::gpu_memory;
  static void parse_env(config&) {}
  static void validate(const config&) {}
  static std::unique_ptr<backing_store> setup(const config& c); // backing.cpp
};

struct host_backend {
  static constexpr backend kind = backend::host;
  static constexpr const char* name = "host";
  static constexpr size_t default_line_bytes = 512;
  static constexpr size_t min_line_bytes = 128;
  static constexpr device_access access = device_access::host_memory;
  static void parse_env(config&) {}
  static void validate(const config&) {}
  static std::unique_ptr<backing_store> setup(const config& c); // backing.cpp
};

struct emu_backend {
  static constexpr backend kind = backend::emu;
  static constexpr const char* name = "emu";
  static constexpr size_t default_line_bytes = 4096;
  static constexpr size_t min_line_bytes = 512;
  static constexpr device_access access = device_access::queue;

  static void parse_env(config& c)
  {
    if (const char* v = getenv_nonempty("BAM_EMU_LATENCY_US"))
      c.emu_latency_us = parse_double(v, "BAM_EMU_LATENCY_US", 0, max_latency_us);
    if (const char* v = getenv_nonempty("BAM_EMU_IOPS"))
      c.emu_iops = parse_double(v, "BAM_EMU_IOPS", 0, max_iops);
    if (const char* v = getenv_nonempty("BAM_EMU_THREADS"))
      c.emu_threads = int(parse_int(v, "BAM_EMU_THREADS", 1, 256));
    if (const char* v = getenv_nonempty("BAM_EMU_DIR"))
      c.emu_dir = v;
    if (const char* v = getenv_nonempty("BAM_EMU_FAULT"))
      c.emu_fault = v;
    if (const char* v = getenv_nonempty("BAM_EMU_TRACE"))
      c.emu_trace = v;
    if (const char* v = getenv_nonempty("BAM_EMU_FAULT_RATE"))
      c.emu_fault_rate = parse_double(v, "BAM_EMU_FAULT_RATE", 0, 1);
  }

  static void validate(const config& c)
  {
    const std::string& f = c.emu_fault;
    if (!(f == "none" || f == "error" || f == "transient" || f == "delay" || f == "reorder"))
      throw error("BAM_EMU_FAULT: '" + f + "' is not a fault kind; use none, error, transient, delay or reorder");
    if (!(c.emu_fault_rate >= 0 && c.emu_fault_rate <= 1))
      throw error("BAM_EMU_FAULT_RATE: must be a fraction in [0, 1]");
    if (!(c.emu_latency_us >= 0 && c.emu_latency_us <= max_latency_us))
      throw error("BAM_EMU_LATENCY_US: " + format_number(c.emu_latency_us) + " is not in [0, " +
                  format_number(max_latency_us) + "] microseconds");
    if (!(c.emu_iops >= 0 && c.emu_iops <= max_iops) || (c.emu_iops > 0 && c.emu_iops < 1))
      throw error("BAM_EMU_IOPS: " + format_number(c.emu_iops) + " is not 0 (no cap) or in [1, " +
                  format_number(max_iops) + "]");
    if (c.emu_threads < 1 || c.emu_threads > 256)
      throw error("BAM_EMU_THREADS: " + std::to_string(c.emu_threads) + " is not in [1, 256]");
    if (c.kind == kind && c.emu_dir.empty())
      throw error("BAM_EMU_DIR: empty; name a writable directory for the backing file, e.g. /tmp");
  }

  static std::unique_ptr<backing_store> setup(const config& c); // backend_emu.cpp

  static constexpr double max_latency_us = 1e9; // 1000 s: the controller keeps it in 64-bit ns
  static constexpr double max_iops = 1e12;
};

struct nvme_backend {
  static constexpr backend kind = backend::nvme;
  static constexpr const char* name = "nvme";
  static constexpr size_t default_line_bytes = 4096;
  static constexpr size_t min_line_bytes = 512;
  static constexpr device_access access = device_access::queue;

  static void parse_env(config& c)
  {
    if (const char* v = getenv_nonempty("BAM_NVME_DEVICE"))
      c.nvme_device = v;
  }

  static void validate(const config& c)
  {
    if (c.kind == kind && c.nvme_device.empty())
      throw error("BAM_BACKEND=nvme needs BAM_NVME_DEVICE=/dev/bam_nvmeN, the node kmod/bam_nvme.ko creates for a "
                  "controller bound to it (kmod/README.md); or use BAM_BACKEND=emu to run the same queue code "
                  "against a file");
    if (!c.nvme_device.empty() && c.nvme_device[0] != '/')
      throw error("BAM_NVME_DEVICE: '" + c.nvme_device + "' is not an absolute path; use e.g. /dev/bam_nvme0");
  }

  static std::unique_ptr<backing_store> setup(const config& c); // backend_nvme.cpp
};

// ---- the list ----------------------------------------------------------

template <class... Entry>
struct backend_list {
  static constexpr size_t size = sizeof...(Entry);

  // f(entry) for every entry, in enum order.
  template <class F>
  static void each(F&& f)
  {
    (f(Entry{}), ...);
  }

  // Entry i is enumerator i, for every i.
  static constexpr bool in_enum_order()
  {
    const backend kinds[] = {Entry::kind...};
    for (size_t i = 0; i < size; ++i)
      if (uint32_t(kinds[i]) != i)
        return false;
    return true;
  }

  // Line sizes of `b` (registered: is_registered(b)).
  static constexpr size_t default_line_bytes(backend b)
  {
    const size_t v[] = {Entry::default_line_bytes...};
    return v[uint32_t(b)];
  }
  static constexpr size_t min_line_bytes(backend b)
  {
    const size_t v[] = {Entry::min_line_bytes...};
    return v[uint32_t(b)];
  }

  // The device access kind of `b` (the host and device enums meet here).
  static constexpr device_access access_of(backend b)
  {
    const device_access acc[] = {Entry::access...};
    return acc[uint32_t(b)];
  }
};

using registry = backend_list<hbm_backend, host_backend, emu_backend, nvme_backend>;

static_assert(registry::size == backend_count,
              "every bam::backend enumerator needs one registry entry (and backend_count in bam/backend.h counts them)");
static_assert(registry::in_enum_order(), "registry entries must be listed in bam::backend enum order");

// False for a value outside the enum (a cast from a bad integer).
inline bool is_registered(backend b) { return uint32_t(b) < registry::size; }

} // namespace detail
BAM_NAMESPACE_END // namespace bam

#endif // BAM_SRC_BACKENDS_H
