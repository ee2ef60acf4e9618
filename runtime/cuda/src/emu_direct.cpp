// queue_set builder for the `nvme` backend (bam/nvme/direct.h): the same
// queue bookkeeping as the emu controller builds, placed in GPU memory;
// PRPs come from the DMA-map tables (DIRECT: the caller's buffers; BOUNCE:
// per-slot buffers in pinned host memory).
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

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
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

// Allocation header kept after the queue array so free can find the
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
	direct_check(s);
	const size_t words = direct_words(s);
	uint32_t* dwords = nullptr;
	queue* dq = nullptr;
	queue_set* dset = nullptr;
	auto cleanup = [&] {
		cudaFree(dwords);
		cudaFree(dq);
		cudaFree(dset);
	};
	try {
		ck(cudaMalloc((void**)&dwords, words * 4), "cudaMalloc");
		ck(cudaMalloc((void**)&dq, sizeof(queue) * s.queues.size() + sizeof(direct_alloc)), "cudaMalloc");
		ck(cudaMalloc((void**)&dset, sizeof(queue_set)), "cudaMalloc");
		std::vector<uint32_t> w(words);
		std::unique_ptr<queue[]> img(new queue[s.queues.size()]);
		direct_fill(s, dwords, img.get(), w.data());
		ck(cudaMemcpy(dwords, w.data(), words * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
		ck(cudaMemcpy(dq, img.get(), sizeof(queue) * s.queues.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
		direct_alloc a{dq, dwords};
		ck(cudaMemcpy((char*)dq + sizeof(queue) * s.queues.size(), &a, sizeof a, cudaMemcpyHostToDevice),
		   "cudaMemcpy");
		queue_set set;
		set.queues = dq;
		set.nqueues = (uint32_t)s.queues.size();
		set.spread = s.spread ? s.spread : 1;
		ck(cudaMemcpy(dset, &set, sizeof set, cudaMemcpyHostToDevice), "cudaMemcpy");
	} catch (...) {
		cleanup();
		throw;
	}
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
BAM_NAMESPACE_END // namespace bam
