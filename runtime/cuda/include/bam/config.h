// bam::config: every knob of a runtime, from code or from BAM_* variables.
#ifndef BAM_CONFIG_H
#define BAM_CONFIG_H

#include <cstddef>
#include <cstdint>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

enum class backend { hbm, host, emu, nvme };

// "hbm" | "host" | "emu" | "nvme"
const char* backend_name(backend b) noexcept;

struct config {
  backend kind = backend::hbm;
  size_t cache_bytes = size_t(1) << 30; // BAM_CACHE_BYTES; rounded down to whole lines
  size_t line_bytes = 4096;             // BAM_LINE_BYTES; power of two, 512 B .. 64 KiB
  int queues = 0;                       // BAM_QUEUES; 0 = backend default
  int queue_depth = 1024;               // BAM_QUEUE_DEPTH
  bool stats = true;                    // BAM_STATS=0|1
  double emu_latency_us = 0;            // BAM_EMU_LATENCY_US
  double emu_iops = 0;                  // BAM_EMU_IOPS; 0 = unlimited
  int emu_threads = 4;                  // BAM_EMU_THREADS
  std::string emu_dir = "/tmp";         // BAM_EMU_DIR: where the backing file is created
  std::string emu_fault = "none";       // BAM_EMU_FAULT: none|error|delay|reorder
  double emu_fault_rate = 0.01;         // BAM_EMU_FAULT_RATE (extension): fraction of commands hit
  std::string emu_trace;                // BAM_EMU_TRACE (extension): CSV of commands per 100 us, written at exit
  std::string nvme_device;              // BAM_NVME_DEVICE
  double stall_timeout_s = 10;          // BAM_STALL_TIMEOUT_S (extension): device-side give-up bound
  uint64_t odt_item_vertices = 128;     // BAM_ODT_ITEM_VERTICES (extension): candidates per ODT work item; 0 = whole tiles

  // Defaults overridden by every BAM_* variable that is set. Bad values
  // throw bam::error naming the variable and what it accepts.
  static config from_env();
  // Throws bam::error if a field is out of range.
  void validate() const;
};

// "256M" -> 268435456. Accepts a plain number or k/K, m/M, g/G, t/T suffixes
// (binary multiples) with an optional trailing B/iB. Throws bam::error that
// names `what` on anything else.
size_t parse_size(const std::string& text, const char* what);

BAM_NAMESPACE_END // namespace bam

#endif // BAM_CONFIG_H
