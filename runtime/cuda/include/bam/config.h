// bam::config: every knob of a runtime, from code or from BAM_* variables.
#ifndef BAM_CONFIG_H
#define BAM_CONFIG_H

#include <bam/backend.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

// The backend's registry name: "hbm", "host", "emu", "nvme" (what
// BAM_BACKEND accepts); "?" for a value that is not an enumerator.
const char* backend_name(backend b) noexcept;

struct config {
  backend kind = backend::hbm;
  size_t cache_bytes = size_t(1) << 30; // BAM_CACHE_BYTES; rounded down to whole lines
  size_t line_bytes = 0;                // BAM_LINE_BYTES; 0 = the backend's default (line_size()); a power of
                                        // two from the backend's smallest (128 B hbm/host, 512 B emu/nvme) to 64 KiB
  std::string cache_policy = "freq";    // BAM_CACHE_POLICY: freq (frequency-aware clock) | fifo (plain clock hand)
  int queues = 0;                       // BAM_QUEUES; 0 = backend default
  int queue_depth = 1024;               // BAM_QUEUE_DEPTH
  bool stats = true;                    // BAM_STATS=0|1
  double emu_latency_us = 0;            // BAM_EMU_LATENCY_US
  double emu_iops = 0;                  // BAM_EMU_IOPS; 0 = unlimited
  int emu_threads = 4;                  // BAM_EMU_THREADS
  std::string emu_dir = "/tmp";         // BAM_EMU_DIR: where the backing file is created
  std::string emu_fault = "none";       // BAM_EMU_FAULT: none|error|transient|delay|reorder
  double emu_fault_rate = 0.01;         // BAM_EMU_FAULT_RATE (extension): fraction of commands hit
  std::string emu_trace;                // BAM_EMU_TRACE (extension): CSV of commands per 100 us, written at exit
  std::string nvme_device;              // BAM_NVME_DEVICE
  double stall_timeout_s = 10;          // BAM_STALL_TIMEOUT_S (extension): device-side give-up bound, in
                                        // [min_stall_timeout_s, max_stall_timeout_s]
  uint64_t odt_item_vertices = 128;     // BAM_ODT_ITEM_VERTICES (extension): candidates per ODT work item; 0 = whole tiles

  static constexpr double min_stall_timeout_s = 0.001;
  static constexpr double max_stall_timeout_s = 1e6; // 11.6 days; the device counts nanoseconds in 64 bits

  // Defaults overridden by every BAM_* variable that is set. Bad values
  // throw bam::error naming the variable and what it accepts.
  static config from_env();
  // Throws bam::error if a field is out of range.
  void validate() const;
  // The line size this configuration runs with: line_bytes, or when it is 0
  // the backend's default (host memory is bandwidth-bound: 512 B lines move
  // little that a traversal does not use; an SSD is request-bound: 4 KiB).
  [[nodiscard]] size_t line_size() const noexcept;
  // The backend's default and smallest line size (0 for a value that is not a backend).
  [[nodiscard]] static size_t default_line_bytes(backend b) noexcept;
  [[nodiscard]] static size_t min_line_bytes(backend b) noexcept;
  static constexpr size_t max_line_bytes = 65536;
};

// "256M" -> 268435456. Accepts a plain number or k/K, m/M, g/G, t/T suffixes
// (binary multiples) with an optional trailing B/iB. Throws bam::error that
// names `what` on anything else.
size_t parse_size(const std::string& text, const char* what);

BAM_NAMESPACE_END // namespace bam

#endif // BAM_CONFIG_H
