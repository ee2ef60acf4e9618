// queue_set builder for the `nvme` backend (bam/nvme/direct.h): the same
// queue bookkeeping as the emu controller builds, but DIRECT mode: PRPs
// point at the caller's GPU buffers through the DMA-map table.
#include <bam/nvme/direct.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef BAM_EMU_CUDA
#  define BAM_EMU_CUDA 0
#endif
#if BAM_EMU_CUDA
#  include <cuda_runtime_api.h>
#endif
#include <bam/error.h>

namespace bam {
namespace nvme {

namespace {

[[noreturn]] void fail(const std::string& msg)
{
	throw bam::error("nvme queues: " + msg);
}

#if BAM_EMU_CUDA
void ck(cudaError_t e, const char* what)
{
	if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorString(e));
}
#endif

#if BAM_EMU_CUDA
uint32_t log2u(uint64_t v)
{
	uint32_t s = 0;
	while ((1ull << s) < v) s++;
	return s;
}
#endif

// Allocation header kept in front of the queue array so free can find the
// per-slot words.
struct direct_alloc {
	queue* queues;
	uint32_t* words;
};

} // namespace

queue_set* make_direct_queue_set(const direct_setup& s)
{
#if !BAM_EMU_CUDA
	(void)s;
	fail("built without CUDA (compile src/emu_direct.cpp with -DBAM_EMU_CUDA=1)");
#else
	if (s.queues.empty() || s.queues.size() > 65535) fail("need 1..65535 queues");
	if (s.block_bytes < 512 || (s.block_bytes & (s.block_bytes - 1))) fail("block_bytes must be a power of two >= 512");
	if (s.max_io_bytes % 4096 || s.max_io_bytes < s.block_bytes) fail("max_io_bytes must be a multiple of 4096");
	if (!s.prp_lists) fail("prp_lists is required");
	if (!s.data.bus || !s.prp_map.bus) fail("data and prp_map need bus address tables (kmod DMA-map ioctl)");
	uint32_t per_slot = s.max_io_bytes / 4096 + 1;
	size_t words = 0;
	for (const auto& d : s.queues) {
		if (d.depth < 2 || d.depth > 65536 || (d.depth & (d.depth - 1)))
			fail("queue " + std::to_string(d.qid) + ": depth must be a power of two in 2..65536");
		if (!d.sq || !d.cq || !d.sq_db || !d.cq_db) fail("queue " + std::to_string(d.qid) + ": missing ring or doorbell");
		words += (size_t)d.depth * 4;
	}
	uint32_t* dwords = nullptr;
	queue* dq = nullptr;
	queue_set* dset = nullptr;
	ck(cudaMalloc((void**)&dwords, words * 4), "cudaMalloc");
	ck(cudaMalloc((void**)&dq, sizeof(queue) * s.queues.size() + sizeof(direct_alloc)), "cudaMalloc");
	ck(cudaMalloc((void**)&dset, sizeof(queue_set)), "cudaMalloc");
	std::vector<uint32_t> w(words);
	std::vector<queue> img(s.queues.size());
	uint64_t timeout_ns = (uint64_t)(s.timeout_ms * 1e6);
	size_t wo = 0, prp_off = 0;
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
		q.mode = QUEUE_MODE_DIRECT;
		q.max_bytes = s.max_io_bytes;
		q.timeout_ns = timeout_ns;
		q.slot_timeout_ns = timeout_ns * 4;
		q.prp_lists = s.prp_lists + prp_off;
		q.prp_map = s.prp_map;
		q.data_map = s.data;
		prp_off += (size_t)d.depth * per_slot;
		q.seq = dwords + wo;
		q.ready = q.seq + d.depth;
		q.done = q.seq + 2 * d.depth;
		q.tick = q.seq + 3 * d.depth;
		for (uint32_t k = 0; k < d.depth; k++) {
			w[wo + k] = k;
			w[wo + d.depth + k] = k - d.depth;
			w[wo + 2 * d.depth + k] = 0;
			w[wo + 3 * d.depth + k] = k - d.depth;
		}
		wo += (size_t)d.depth * 4;
	}
	ck(cudaMemcpy(dwords, w.data(), words * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
	ck(cudaMemcpy(dq, img.data(), sizeof(queue) * img.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
	direct_alloc a{dq, dwords};
	ck(cudaMemcpy((char*)dq + sizeof(queue) * img.size(), &a, sizeof a, cudaMemcpyHostToDevice), "cudaMemcpy");
	queue_set set;
	set.queues = dq;
	set.nqueues = (uint32_t)img.size();
	set.spread = s.spread ? s.spread : 1;
	ck(cudaMemcpy(dset, &set, sizeof set, cudaMemcpyHostToDevice), "cudaMemcpy");
	return dset;
#endif
}

void free_direct_queue_set(queue_set* qs)
{
#if BAM_EMU_CUDA
	if (!qs) return;
	queue_set set;
	if (cudaMemcpy(&set, qs, sizeof set, cudaMemcpyDeviceToHost) == cudaSuccess) {
		direct_alloc a;
		if (cudaMemcpy(&a, (char*)set.queues + sizeof(queue) * set.nqueues, sizeof a, cudaMemcpyDeviceToHost) ==
		    cudaSuccess) {
			cudaFree(a.words);
			cudaFree(a.queues);
		}
	}
	cudaFree(qs);
#else
	(void)qs;
#endif
}

} // namespace nvme
} // namespace bam
