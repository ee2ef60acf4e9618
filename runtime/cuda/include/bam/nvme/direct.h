// Set-up of the queue code (queue.cuh) for real NVMe controllers: the
// `nvme` backend, and the QEMU test that drives a controller with CPU
// threads (kmod/test/bam_queue_test.cpp).
//
// Who provides what:
//   kmod/lib (host library): brings the controller up, maps BAR0 (the
//     doorbells), DMA-maps the memory the controller reaches through the
//     kmod ioctls (one bus address per page: 4 KiB host pages, 64 KiB GPU
//     pages) and creates each I/O CQ/SQ pair with admin commands whose PRP
//     points at the rings' bus addresses.
//   this header: turns that into a queue_set. The PRP source of every
//     command is the bus-address table of the mapped buffers (dma_region).
//
// Two placements, one protocol:
//   GPU (make_direct_queue_set, src/emu_direct.cpp): queue bookkeeping and
//     the queue_set in GPU memory; the addresses in direct_setup are the
//     ones GPU threads use (cudaHostGetDevicePointer for host memory and
//     for the BAR registered with cudaHostRegisterIoMemory).
//   host (host_queue_set below): everything in host memory, CPU threads
//     drive the queues. Header-only; needs no CUDA.
//
// Two data modes per queue:
//   QUEUE_MODE_DIRECT: PRPs point at the caller's buffers (cache lines),
//     which must lie in `data`; with NVIDIA P2P these are in GPU memory.
//   QUEUE_MODE_BOUNCE: data staged in per-slot buffers (`bounce`, depth *
//     max_io_bytes per queue, queues back to back) in pinned host memory
//     the controller can reach; the queue code copies to the caller. What
//     the nvme backend uses when the module has no GPU support.
//
// What has run: the host placement against QEMU's emulated NVMe controller
// (make -C kmod test), both modes. The GPU placement compiles and shares
// every line of the protocol, but has not driven a real SSD.
#ifndef BAM_NVME_DIRECT_H
#define BAM_NVME_DIRECT_H

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <bam/error.h>

#include "queue.cuh"

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace nvme {

// One I/O queue pair, already created on the controller.
struct direct_queue_desc {
	uint16_t qid = 0;           // NVMe queue id (1..)
	uint32_t depth = 0;         // entries; power of two, <= CAP.MQES + 1
	bam_nvme_sqe* sq = nullptr; // depth * 64 bytes, DMA-mapped, bus-contiguous
	bam_nvme_cqe* cq = nullptr; // depth * 16 bytes, DMA-mapped, bus-contiguous
	uint32_t* sq_db = nullptr;  // SQ tail doorbell in BAR0 (as the driving threads see it)
	uint32_t* cq_db = nullptr;  // CQ head doorbell in BAR0
	uint32_t mode = QUEUE_MODE_DIRECT; // QUEUE_MODE_*
};

struct direct_setup {
	uint32_t nsid = 1;
	uint32_t block_bytes = 512;     // LBA size of the namespace
	uint32_t max_io_bytes = 65536;  // <= MDTS and <= 2 MiB; sets the per-slot PRP list and bounce size
	double timeout_ms = 5000;
	uint32_t spread = 4;            // device: queues per SM the warps spread over
	uint32_t flags = 0;             // QUEUE_FLAG_*
	dma_region data;                // DIRECT: caller buffers (cache lines), VA range + bus table
	// PRP lists: direct_prp_bytes() bytes, 4 KiB aligned, queues back to
	// back, with its translation.
	uint64_t* prp_lists = nullptr;
	dma_region prp_map;
	// BOUNCE queues: direct_bounce_bytes() bytes (pinned host memory),
	// with its translation. Unused when every queue is DIRECT.
	uint8_t* bounce = nullptr;
	dma_region bounce_map;
	std::vector<direct_queue_desc> queues;
};

// Bytes of PRP list memory direct_setup::prp_lists must provide.
inline uint64_t direct_prp_bytes(const direct_setup& s)
{
	uint64_t b = 0;
	for (const auto& q : s.queues) b += (uint64_t)q.depth * prp_list_entries(s.max_io_bytes) * 8;
	return b;
}

// Bytes of bounce memory direct_setup::bounce must provide (every queue
// gets its share, so queues can switch mode without re-layout).
inline uint64_t direct_bounce_bytes(const direct_setup& s)
{
	uint64_t b = 0;
	for (const auto& q : s.queues) b += (uint64_t)q.depth * s.max_io_bytes;
	return b;
}

// Per-slot bookkeeping words (uint32_t) the queues need.
inline size_t direct_words(const direct_setup& s)
{
	size_t w = 0;
	for (const auto& q : s.queues) w += (size_t)q.depth * 4;
	return w;
}

// Throws bam::error naming what is wrong with the set-up.
inline void direct_check(const direct_setup& s)
{
	auto fail = [](const std::string& m) { throw bam::error("nvme queues: " + m); };
	if (s.queues.empty() || s.queues.size() > 65535) fail("need 1..65535 queues");
	if (s.block_bytes < 512 || (s.block_bytes & (s.block_bytes - 1)))
		fail("block_bytes must be a power of two >= 512");
	if (s.max_io_bytes % 4096 || s.max_io_bytes < s.block_bytes || s.max_io_bytes > (1u << 21))
		fail("max_io_bytes must be a multiple of 4096, >= block_bytes and <= 2 MiB");
	if (!s.prp_lists || ((uintptr_t)s.prp_lists & 4095)) fail("prp_lists is required, 4 KiB aligned");
	if (!s.prp_map.bus || !s.prp_map.contains((uint64_t)(uintptr_t)s.prp_lists, direct_prp_bytes(s)))
		fail("prp_map must translate all of prp_lists (kmod DMA-map ioctl)");
	bool bounce = false, direct = false;
	for (const auto& d : s.queues) {
		std::string q = "queue " + std::to_string(d.qid) + ": ";
		if (d.depth < 2 || d.depth > 65536 || (d.depth & (d.depth - 1)))
			fail(q + "depth must be a power of two in 2..65536");
		if (!d.sq || !d.cq || !d.sq_db || !d.cq_db) fail(q + "missing ring or doorbell");
		if (d.mode == QUEUE_MODE_BOUNCE)
			bounce = true;
		else if (d.mode == QUEUE_MODE_DIRECT)
			direct = true;
		else
			fail(q + "unknown mode " + std::to_string(d.mode));
	}
	if (direct && !s.data.bus) fail("DIRECT queues need `data` with a bus address table");
	if (bounce && (!s.bounce || !s.bounce_map.bus ||
		       !s.bounce_map.contains((uint64_t)(uintptr_t)s.bounce, direct_bounce_bytes(s))))
		fail("BOUNCE queues need `bounce` memory and its translation");
}

// Fills the queue images (img[0..queues)) and the initial values of their
// bookkeeping words (init[0..direct_words)). `words` is where those words
// will live (GPU or host memory); img points into it. Call direct_check
// first.
inline void direct_fill(const direct_setup& s, uint32_t* words, queue* img, uint32_t* init)
{
	const uint32_t per_slot = prp_list_entries(s.max_io_bytes);
	const uint64_t timeout_ns = (uint64_t)(s.timeout_ms * 1e6);
	auto log2u = [](uint64_t v) {
		uint32_t r = 0;
		while ((1ull << r) < v) r++;
		return r;
	};
	size_t wo = 0, prp_off = 0, bounce_off = 0;
	for (size_t i = 0; i < s.queues.size(); i++) {
		const direct_queue_desc& d = s.queues[i];
		queue& q = img[i];
		memset((void*)&q, 0, sizeof q);
		q.sq = d.sq;
		q.cq = d.cq;
		q.sq_db = d.sq_db;
		q.cq_db = d.cq_db;
		q.depth = d.depth;
		q.mask = d.depth - 1;
		q.depth_shift = log2u(d.depth);
		q.qid = d.qid;
		q.nsid = s.nsid;
		q.lba_shift = log2u(s.block_bytes);
		q.mode = d.mode;
		q.max_bytes = s.max_io_bytes;
		q.flags = s.flags;
		q.timeout_ns = timeout_ns;
		q.slot_timeout_ns = timeout_ns * 4;
		q.prp_lists = s.prp_lists + prp_off;
		q.prp_map = s.prp_map;
		q.data_map = s.data;
		if (s.bounce) q.bounce = s.bounce + bounce_off;
		q.bounce_map = s.bounce_map;
		prp_off += (size_t)d.depth * per_slot;
		bounce_off += (size_t)d.depth * s.max_io_bytes;
		q.seq = words + wo;
		q.ready = q.seq + d.depth;
		q.done = q.seq + 2 * d.depth;
		q.tick = q.seq + 3 * d.depth;
		for (uint32_t k = 0; k < d.depth; k++) {
			init[wo + k] = k;                      // seq: ticket k takes slot k first
			init[wo + d.depth + k] = k - d.depth;  // ready: nothing written
			init[wo + 2 * d.depth + k] = 0;        // done
			init[wo + 3 * d.depth + k] = k - d.depth; // tick
		}
		wo += (size_t)d.depth * 4;
	}
}

// Queues in host memory, driven by CPU threads. Owns the bookkeeping; the
// rings, buffers and doorbells stay the caller's.
class host_queue_set {
public:
	explicit host_queue_set(const direct_setup& s)
	{
		direct_check(s);
		words_.resize(direct_words(s));
		q_.reset(new queue[s.queues.size()]);
		direct_fill(s, words_.data(), q_.get(), words_.data());
		set_.queues = q_.get();
		set_.nqueues = (uint32_t)s.queues.size();
		set_.spread = 1;
	}
	host_queue_set(const host_queue_set&) = delete;
	host_queue_set& operator=(const host_queue_set&) = delete;

	const queue_set& set() const { return set_; }
	queue& at(size_t i) { return q_[i]; }
	uint32_t size() const { return set_.nqueues; }

private:
	std::vector<uint32_t> words_;
	std::unique_ptr<queue[]> q_;
	queue_set set_{};
};

// Builds the queue_set in GPU memory (src/emu_direct.cpp; libbam built
// with CUDA). Throws bam::error on bad input or a CUDA failure. Free with
// free_direct_queue_set.
queue_set* make_direct_queue_set(const direct_setup& s);
void free_direct_queue_set(queue_set* qs);

} // namespace nvme
BAM_NAMESPACE_END // namespace bam

#endif // BAM_NVME_DIRECT_H
