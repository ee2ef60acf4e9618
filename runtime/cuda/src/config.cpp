// Runtime configuration: defaults, BAM_* environment variables, validation.
#include <bam/config.h>
#include <bam/error.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

const char* backend_name(backend b) noexcept
{
  switch (b) {
  case backend::hbm: return "hbm";
  case backend::host: return "host";
  case backend::emu: return "emu";
  case backend::nvme: return "nvme";
  }
  return "?";
}

namespace {

bool is_pow2(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Suffix multiplier for parse_size, 0 if the suffix is not one we accept.
size_t suffix_scale(std::string s)
{
  for (auto& c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  if (s.empty() || s == "b")
    return 1;
  const char u = s[0];
  const std::string rest = s.substr(1);
  if (!(rest.empty() || rest == "b" || rest == "ib"))
    return 0;
  switch (u) {
  case 'k': return size_t(1) << 10;
  case 'm': return size_t(1) << 20;
  case 'g': return size_t(1) << 30;
  case 't': return size_t(1) << 40;
  default: return 0;
  }
}

const char* getenv_nonempty(const char* name)
{
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

long parse_int(const char* text, const char* what, long lo, long hi)
{
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
    throw error(std::string(what) + ": '" + text + "' is not an integer in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return v;
}

double parse_double(const char* text, const char* what, double lo)
{
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v) || v < lo)
    throw error(std::string(what) + ": '" + text + "' is not a number >= " + std::to_string(lo));
  return v;
}

backend parse_backend(const char* text)
{
  const std::string s = text;
  if (s == "hbm") return backend::hbm;
  if (s == "host") return backend::host;
  if (s == "emu") return backend::emu;
  if (s == "nvme") return backend::nvme;
  throw error("BAM_BACKEND: '" + s + "' is not a backend; use hbm, host, emu or nvme");
}

std::string parse_fault(const char* text)
{
  const std::string s = text;
  if (s == "none" || s == "error" || s == "delay" || s == "reorder")
    return s;
  throw error("BAM_EMU_FAULT: '" + s + "' is not a fault kind; use none, error, delay or reorder");
}

} // namespace

size_t parse_size(const std::string& text, const char* what)
{
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    ++i;
  const size_t scale = i > 0 ? suffix_scale(text.substr(i)) : 0;
  if (i == 0 || i > 19 || scale == 0)
    throw error(std::string(what) + ": '" + text +
                "' is not a size; use a number with optional k/M/G suffix, e.g. 256M");
  const unsigned long long v = std::strtoull(text.substr(0, i).c_str(), nullptr, 10);
  if (v > ~size_t(0) / scale)
    throw error(std::string(what) + ": '" + text + "' is too large");
  return size_t(v) * scale;
}

config config::from_env()
{
  config c;
  if (const char* v = getenv_nonempty("BAM_BACKEND")) c.kind = parse_backend(v);
  if (const char* v = getenv_nonempty("BAM_CACHE_BYTES")) c.cache_bytes = parse_size(v, "BAM_CACHE_BYTES");
  if (const char* v = getenv_nonempty("BAM_LINE_BYTES")) c.line_bytes = parse_size(v, "BAM_LINE_BYTES");
  if (const char* v = getenv_nonempty("BAM_QUEUES")) c.queues = int(parse_int(v, "BAM_QUEUES", 0, 65536));
  if (const char* v = getenv_nonempty("BAM_QUEUE_DEPTH")) c.queue_depth = int(parse_int(v, "BAM_QUEUE_DEPTH", 2, 65536));
  if (const char* v = getenv_nonempty("BAM_STATS")) c.stats = parse_int(v, "BAM_STATS", 0, 1) != 0;
  if (const char* v = getenv_nonempty("BAM_EMU_LATENCY_US")) c.emu_latency_us = parse_double(v, "BAM_EMU_LATENCY_US", 0);
  if (const char* v = getenv_nonempty("BAM_EMU_IOPS")) c.emu_iops = parse_double(v, "BAM_EMU_IOPS", 0);
  if (const char* v = getenv_nonempty("BAM_EMU_THREADS")) c.emu_threads = int(parse_int(v, "BAM_EMU_THREADS", 1, 1024));
  if (const char* v = getenv_nonempty("BAM_EMU_DIR")) c.emu_dir = v;
  if (const char* v = getenv_nonempty("BAM_EMU_FAULT")) c.emu_fault = parse_fault(v);
  if (const char* v = getenv_nonempty("BAM_EMU_TRACE")) c.emu_trace = v;
  if (const char* v = getenv_nonempty("BAM_EMU_FAULT_RATE")) c.emu_fault_rate = parse_double(v, "BAM_EMU_FAULT_RATE", 0);
  if (const char* v = getenv_nonempty("BAM_NVME_DEVICE")) c.nvme_device = v;
  if (const char* v = getenv_nonempty("BAM_STALL_TIMEOUT_S")) c.stall_timeout_s = parse_double(v, "BAM_STALL_TIMEOUT_S", 0.001);
  if (const char* v = getenv_nonempty("BAM_ODT_ITEM_VERTICES"))
    c.odt_item_vertices = uint64_t(parse_int(v, "BAM_ODT_ITEM_VERTICES", 0, 1ll << 40));
  c.validate();
  return c;
}

void config::validate() const
{
  if (!is_pow2(line_bytes) || line_bytes < 512 || line_bytes > 65536)
    throw error("BAM_LINE_BYTES: " + std::to_string(line_bytes) +
                " is not a power of two between 512 and 65536 (64k); e.g. 4k");
  if (cache_bytes < line_bytes)
    throw error("BAM_CACHE_BYTES: " + std::to_string(cache_bytes) + " is smaller than one line (" +
                std::to_string(line_bytes) + " bytes); use e.g. 256M");
  if (cache_bytes / line_bytes > 0xfffffffeull)
    throw error("BAM_CACHE_BYTES: more than 2^32-2 lines; use larger BAM_LINE_BYTES or a smaller cache");
  if (queue_depth < 2 || queue_depth > 65536 || !is_pow2(size_t(queue_depth)))
    throw error("BAM_QUEUE_DEPTH: " + std::to_string(queue_depth) + " is not a power of two in [2, 65536]");
  if (emu_fault_rate > 1)
    throw error("BAM_EMU_FAULT_RATE: must be a fraction in [0, 1]");
  if (kind == backend::nvme && nvme_device.empty())
    throw error("BAM_BACKEND=nvme needs BAM_NVME_DEVICE=/dev/bam_nvmeN, the node kmod/bam_nvme.ko creates for a "
                "controller bound to it (kmod/README.md); or use BAM_BACKEND=emu to run the same queue code "
                "against a file");
  if (!nvme_device.empty() && nvme_device[0] != '/')
    throw error("BAM_NVME_DEVICE: '" + nvme_device + "' is not an absolute path; use e.g. /dev/bam_nvme0");
}

BAM_NAMESPACE_END // namespace bam
