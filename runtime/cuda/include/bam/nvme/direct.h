// Set-up of the GPU queue code (queue.cuh) for real NVMe SSDs: the `nvme`
// backend. The SSD DMAs straight to and from GPU memory; the GPU threads
// write SQEs into GPU-resident SQs, poll GPU-resident CQs and ring the
// doorbells in the SSD's BAR0, mapped for the GPU.
//
// Who provides what:
//   kmod/lib (host library): maps BAR0 (cudaHostRegister(...,
//     cudaHostRegisterIoMemory) + cudaHostGetDevicePointer gives the GPU
//     doorbell addresses), DMA-maps GPU buffers through the kmod ioctl
//     (bus address per 64 KiB GPU page), and creates each I/O CQ/SQ pair
//     with admin commands whose PRP points at the rings' bus addresses.
//   this header: turns that into a queue_set in GPU memory.
//
// Untested on hardware here (no SSD bound to the driver in CI or on the
// benchmark machine): only the emu path has run; this path compiles and
// shares every line of the protocol with it except the PRP source.
#ifndef BAM_NVME_DIRECT_H
#define BAM_NVME_DIRECT_H

#include <cstdint>
#include <vector>

#include "queue.cuh"

namespace bam {
namespace nvme {

// One I/O queue pair, already created on the controller.
struct direct_queue_desc {
	uint16_t qid = 0;           // NVMe queue id (1..)
	uint32_t depth = 0;         // entries; power of two, <= CAP.MQES + 1
	bam_nvme_sqe* sq = nullptr; // GPU memory, depth * 64 bytes, DMA-mapped
	bam_nvme_cqe* cq = nullptr; // GPU memory, depth * 16 bytes, DMA-mapped
	uint32_t* sq_db = nullptr;  // GPU pointer to the SQ tail doorbell in BAR0
	uint32_t* cq_db = nullptr;  // GPU pointer to the CQ head doorbell in BAR0
};

struct direct_setup {
	uint32_t nsid = 1;
	uint32_t block_bytes = 512;     // LBA size of the namespace
	uint32_t max_io_bytes = 65536;  // <= MDTS; sets the per-slot PRP list size
	double timeout_ms = 5000;
	uint32_t spread = 4;            // queues per SM the warps spread over
	dma_region data;                // caller buffers (cache lines): VA range + bus table (GPU memory)
	// PRP lists: GPU memory of depth * (max_io_bytes/4096 + 1) * 8 bytes per
	// queue, queues back to back, with its translation.
	uint64_t* prp_lists = nullptr;
	dma_region prp_map;
	std::vector<direct_queue_desc> queues;
};

// Bytes of PRP list memory direct_setup::prp_lists must provide.
inline uint64_t direct_prp_bytes(const direct_setup& s)
{
	uint64_t b = 0;
	for (const auto& q : s.queues) b += (uint64_t)q.depth * (s.max_io_bytes / 4096 + 1) * 8;
	return b;
}

// Builds the queue_set (GPU memory). Throws bam::error on bad input or a
// CUDA failure. Free with free_direct_queue_set.
queue_set* make_direct_queue_set(const direct_setup& s);
void free_direct_queue_set(queue_set* qs);

} // namespace nvme
} // namespace bam

#endif // BAM_NVME_DIRECT_H
