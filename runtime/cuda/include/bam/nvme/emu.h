// The `emu` backend's software NVMe controller: CPU threads that serve a
// file through real NVMe I/O queues (SQ/CQ rings, doorbells, phase tags,
// PRPs) so the GPU queue code in queue.cuh runs unchanged on machines with
// no NVMe SSD bound to our driver.
//
// Memory: rings, doorbells, PRP lists and per-slot bounce buffers are in
// pinned host memory mapped into the GPU (the controller reads/writes them,
// the GPU thread copies bounce <-> its buffer); queue bookkeeping and the
// queue_set are in GPU memory. Built without CUDA (BAM_EMU_CUDA undefined or
// 0), or when no GPU is present, everything is plain host memory and CPU
// threads can drive the queues (the CPU tests do).
//
// Host-only header; include it from .cpp or .cu files.
#ifndef BAM_NVME_EMU_H
#define BAM_NVME_EMU_H

#include <cstdint>
#include <memory>
#include <string>

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace nvme {

struct queue_set;
struct queue_counters;
struct queue_profile;

enum class fault_kind { none, error, delay, reorder };

// "none", "error", "delay", "reorder" -> fault_kind; throws on anything else.
fault_kind parse_fault_kind(const std::string& s);
const char* fault_kind_name(fault_kind k);

struct emu_options {
	double latency_us = 0;      // completion not before fetch + latency
	double iops = 0;            // 0 = no cap; else token bucket over all threads
	int threads = 4;            // controller threads
	int queues = 0;             // 0 = auto (4 per thread, at least 16)
	int queue_depth = 1024;     // entries per SQ/CQ, power of two, 2..65536
	fault_kind fault = fault_kind::none;
	double fault_rate = 0.01;   // fraction of commands hit by the fault
	uint32_t block_bytes = 512; // LBA size, power of two >= 512
	// Extensions beyond the first agreed interface (defaults keep it):
	uint32_t max_io_bytes = 4096;  // largest transfer (>= line size); pinned bounce = queues*depth*this
	double timeout_ms = 5000;      // GPU-side wait bound before TIMEOUT status
	double fault_delay_us = 2000;  // extra latency of a `delay` fault
	uint64_t capacity_bytes = 0;   // 0 = file size rounded up to block_bytes
	bool host_memory = false;      // force plain host memory (CPU-driven tests)
	// When set, the controller counts fetched and completed commands per 100 us
	// and writes them to this path as CSV when it shuts down (BAM_EMU_TRACE).
	std::string trace_path;
	// QUEUE_FLAG_* of queue.cuh: light fences | warp copy | CQ batch. The
	// warp copy is what makes bounce buffers fast (docs/emu-performance.md).
	uint32_t queue_flags = 0x1u | 0x2u | 0x10u;
};

struct emu_stats {
	uint64_t commands = 0;         // completions posted
	uint64_t reads = 0, writes = 0, flushes = 0;
	uint64_t bytes = 0;            // data moved
	uint64_t errors_injected = 0;  // `error` faults
	uint64_t delays_injected = 0;  // `delay` faults
	uint64_t reorders_injected = 0; // `reorder` faults
	uint64_t invalid = 0;          // commands failed by validation
	uint64_t protocol_errors = 0;  // bad doorbell values
	uint64_t cq_full_waits = 0;    // completions that waited for CQ space
	double max_latency_us = 0;     // fetch -> CQE posted, worst seen
	double avg_latency_us = 0;     // fetch -> CQE posted, mean
	double busy = 0;               // fraction of controller thread time spent working
	double elapsed_s = 0;          // since construction
};

class emu_controller {
public:
	emu_controller(const std::string& path, const emu_options& opt = emu_options());
	~emu_controller(); // stops the threads; no kernel may still use the queues
	emu_controller(const emu_controller&) = delete;
	emu_controller& operator=(const emu_controller&) = delete;

	queue_set* device_queues() const; // GPU memory (host memory in host mode)
	emu_stats stats() const;
	// Sum of the GPU-side protocol counters of every queue (copied back).
	queue_counters queue_totals() const;
	// Phase timings summed over all queues (queue_flags & QUEUE_FLAG_PROFILE).
	queue_profile queue_profile_totals() const;
	int queues() const;
	int queue_depth() const;
	uint64_t capacity_bytes() const;
	bool on_gpu() const; // false: host memory mode
	const emu_options& options() const;

	struct impl;

private:
	std::unique_ptr<impl> p_;
};

} // namespace nvme
BAM_NAMESPACE_END // namespace bam

#endif // BAM_NVME_EMU_H
