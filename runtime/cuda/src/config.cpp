// Runtime configuration: defaults, BAM_* environment variables, validation.
#include "backends.h"
#include "env.h"

#include <bam/config.h>
#include <bam/error.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

const char* backend_name(backend b) noexcept
{
  const char* name = "?";
  detail::registry::each([&](auto e) {
    if (e.kind == b)
      name = e.name;
  });
  return name;
}

namespace detail {

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

std::string format_number(double v)
{
  char b[32];
  std::snprintf(b, sizeof b, "%.15g", v);
  return b;
}

double parse_double(const char* text, const char* what, double lo, double hi)
{
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
    throw error(std::string(what) + ": '" + text + "' is not a number in [" + format_number(lo) + ", " +
                format_number(hi) + "]");
  return v;
}

} // namespace detail

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

// "hbm, host, emu or nvme", from the registry.
std::string backend_names()
{
  std::string out;
  size_t i = 0;
  detail::registry::each([&](auto e) {
    out += i == 0 ? "" : (i + 1 == detail::registry::size ? " or " : ", ");
    out += e.name;
    ++i;
  });
  return out;
}

backend parse_backend(const char* text)
{
  const std::string s = text;
  bool found = false;
  backend b = backend::hbm;
  detail::registry::each([&](auto e) {
    if (s == e.name) {
      b = e.kind;
      found = true;
    }
  });
  if (!found)
    throw error("BAM_BACKEND: '" + s + "' is not a backend; use " + backend_names());
  return b;
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
  using detail::getenv_nonempty;
  using detail::parse_double;
  using detail::parse_int;
  config c;
  if (const char* v = getenv_nonempty("BAM_BACKEND")) c.kind = parse_backend(v);
  if (const char* v = getenv_nonempty("BAM_CACHE_BYTES")) c.cache_bytes = parse_size(v, "BAM_CACHE_BYTES");
  if (const char* v = getenv_nonempty("BAM_LINE_BYTES")) c.line_bytes = parse_size(v, "BAM_LINE_BYTES");
  if (const char* v = getenv_nonempty("BAM_QUEUES")) c.queues = int(parse_int(v, "BAM_QUEUES", 0, 65536));
  if (const char* v = getenv_nonempty("BAM_QUEUE_DEPTH")) c.queue_depth = int(parse_int(v, "BAM_QUEUE_DEPTH", 2, 65536));
  if (const char* v = getenv_nonempty("BAM_CACHE_POLICY")) c.cache_policy = v;
  if (const char* v = getenv_nonempty("BAM_STATS")) c.stats = parse_int(v, "BAM_STATS", 0, 1) != 0;
  if (const char* v = getenv_nonempty("BAM_STALL_TIMEOUT_S"))
    c.stall_timeout_s = parse_double(v, "BAM_STALL_TIMEOUT_S", min_stall_timeout_s, max_stall_timeout_s);
  if (const char* v = getenv_nonempty("BAM_ODT_ITEM_VERTICES"))
    c.odt_item_vertices = uint64_t(parse_int(v, "BAM_ODT_ITEM_VERTICES", 0, 1ll << 40));
  detail::registry::each([&](auto e) { e.parse_env(c); }); // each backend's own variables
  c.validate();
  return c;
}

size_t config::default_line_bytes(backend b) noexcept
{
  return detail::is_registered(b) ? detail::registry::default_line_bytes(b) : 0;
}

size_t config::min_line_bytes(backend b) noexcept
{
  return detail::is_registered(b) ? detail::registry::min_line_bytes(b) : 0;
}

size_t config::line_size() const noexcept
{
  return line_bytes != 0 ? line_bytes : default_line_bytes(kind);
}

void config::validate() const
{
  if (!detail::is_registered(kind))
    throw error("bam::config: backend " + std::to_string(uint32_t(kind)) + " is not a backend; use " +
                backend_names());
  const size_t lb = line_size(), lo = min_line_bytes(kind);
  if (!is_pow2(lb) || lb < lo || lb > max_line_bytes)
    throw error("BAM_LINE_BYTES: " + std::to_string(lb) + " is not a power of two between " + std::to_string(lo) +
                " and 65536 (64k) for the " + backend_name(kind) + " backend; e.g. " +
                std::to_string(default_line_bytes(kind)) + " (its default), or unset it");
  if (!(cache_policy == "freq" || cache_policy == "fifo"))
    throw error("BAM_CACHE_POLICY: '" + cache_policy +
                "' is not a replacement policy; use freq (frequency-aware clock, the default) or fifo");
  if (cache_bytes < lb)
    throw error("BAM_CACHE_BYTES: " + std::to_string(cache_bytes) + " is smaller than one line (" +
                std::to_string(lb) + " bytes); use e.g. 256M");
  if (cache_bytes / lb > 0xfffffffeull)
    throw error("BAM_CACHE_BYTES: more than 2^32-2 lines; use larger BAM_LINE_BYTES or a smaller cache");
  if (queue_depth < 2 || queue_depth > 65536 || !is_pow2(size_t(queue_depth)))
    throw error("BAM_QUEUE_DEPTH: " + std::to_string(queue_depth) + " is not a power of two in [2, 65536]");
  if (!(stall_timeout_s >= min_stall_timeout_s && stall_timeout_s <= max_stall_timeout_s))
    throw error("BAM_STALL_TIMEOUT_S: " + detail::format_number(stall_timeout_s) + " is not in [" +
                detail::format_number(min_stall_timeout_s) + ", " + detail::format_number(max_stall_timeout_s) +
                "] seconds");
  detail::registry::each([&](auto e) { e.validate(*this); });
}

BAM_NAMESPACE_END // namespace bam
