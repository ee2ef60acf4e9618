// Cache and I/O statistics as the host sees them (summed over SM rows).
#ifndef BAM_STATS_H
#define BAM_STATS_H

#include <cstdint>
#include <cstdio>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN

struct stats {
  uint64_t accesses = 0;       // element accesses by GPU threads (cached arrays)
  uint64_t bytes = 0;          // bytes of those elements
  uint64_t hit_accesses = 0;   // of those, element reads served by the pin-free hit path (no probe, no pin)
  uint64_t hits = 0;           // pinned-path line probes (one per warp group) served from the cache or an in-flight fetch
  uint64_t misses = 0;         // line probes that fetched the line
  uint64_t evictions = 0;
  uint64_t writebacks = 0;     // dirty lines written back (eviction and flush)
  uint64_t io_reads = 0;       // backend line reads
  uint64_t io_writes = 0;      // backend line writes
  uint64_t io_read_bytes = 0;
  uint64_t io_write_bytes = 0;
  uint64_t io_errors = 0;
  double seconds = 0;          // wall time the counters cover (since creation or reset_stats)

  // Of the pinned path's line probes, the share that found the line.
  // Reads the hit path served are element accesses (hit_accesses), not
  // probes, and are not in it; hit_access_share() is their share.
  [[nodiscard]] double hit_rate() const noexcept
  {
    uint64_t probes = hits + misses;
    return probes ? double(hits) / double(probes) : 0.0;
  }
  [[nodiscard]] double hit_access_share() const noexcept
  {
    return accesses ? double(hit_accesses) / double(accesses) : 0.0;
  }
  [[nodiscard]] uint64_t io_ops() const noexcept { return io_reads + io_writes; }
  [[nodiscard]] double iops() const noexcept { return seconds > 0 ? double(io_ops()) / seconds : 0.0; }
  [[nodiscard]] double io_gbps() const noexcept
  {
    return seconds > 0 ? double(io_read_bytes + io_write_bytes) / seconds / 1e9 : 0.0;
  }
};

// One array's traffic with the backend (runtime::stats_of): lines read into
// the cache and dirty lines written back, and their bytes (lines x line
// size). Zero for arrays not read through the cache (placement resident or
// host-direct). Counted while BAM_STATS=1; reset by reset_stats().
struct array_stats {
  uint32_t id = 0;
  uint64_t io_reads = 0;
  uint64_t io_writes = 0;
  uint64_t io_read_bytes = 0;
  uint64_t io_write_bytes = 0;
};

BAM_NAMESPACE_END // namespace bam

#endif // BAM_STATS_H
