// GPU-side NVMe queue protocol: many threads submit to one SQ/CQ pair
// without a lock on the common path.
//
// Compiles for the GPU (nvcc, sm_70 or newer) and for the host (nvcc host
// pass or a plain C++17 compiler), so the same code is stress-tested with
// CPU threads against the software controller (emu_controller.h).
//
// One queue pair of depth D (a power of two, 2..65536). Slot s of the SQ,
// command id s, per-slot bounce buffer s and per-slot PRP list s belong to
// one command at a time.
//
//   submit (ticket t = sq_ticket++, slot s = t mod D)
//     1. wait until seq[s] == t: the command of ticket t-D has been retired
//        (its waiter took the result), so slot, cid, bounce buffer are free;
//     2. wait until the controller has fetched ticket t+1-D (sq_head_mono),
//        so the SQ never holds D entries (NVMe: full is tail+1 == head);
//     3. write the SQE (and PRP list, and for writes the data), fence,
//        publish ready[s] = t;
//     4. doorbell batching: while sq_db_tail <= t, whoever wins the try-lock
//        sq_lock walks ready[] from sq_db_tail over every contiguous ready
//        entry and writes the SQ tail doorbell once for all of them. Most
//        threads find their entry already announced and never take the lock.
//   complete
//     5. poll done[s] (GPU memory). While it is empty, try-lock cq_lock and
//        drain the CQ: every entry whose phase tag matches the pass over the
//        ring is turned into done[cid] = DONE|status, the SQ head it reports
//        advances sq_head_mono, and the CQ head doorbell is written once
//        for the whole run. The expected phase is 1 on even passes over the
//        ring and 0 on odd ones (derived from the monotonic cq_head).
//     6. copy bounce -> destination (emu reads), clear done[s], retire the
//        slot with seq[s] = t + D.
//   timeout
//     A waiter that sees no completion within timeout_ns marks done[s]
//     ABANDONED (CAS from 0) and returns BAM_NVME_STATUS_TIMEOUT. The
//     command may still complete: whoever drains its CQE then retires the
//     slot. A thread waiting for a slot or for its doorbell gives up only
//     when the queue makes no progress at all for slot_timeout_ns; it then
//     marks the queue failed and every later call on it returns
//     BAM_NVME_STATUS_QUEUE_FAILED at once (its ticket can't be given back).
//
// Data: emu (QUEUE_MODE_BOUNCE) stages data in a per-slot buffer in pinned
// host memory; nvme (QUEUE_MODE_DIRECT) points the PRPs at the caller's GPU
// buffer. Tuning flags (queue::flags, QUEUE_FLAG_*): release-store doorbells
// instead of system fences, warp-cooperative copies out of the bounce
// buffers (5x on an H200, docs/emu-performance.md), batched CQ reads.
//
// For the caller: in DIRECT mode the SSD writes dst behind the GPU caches'
// back; read it after read() returns with loads that do not hit stale L1
// lines (the acquire in read() orders them; don't prefetch dst earlier).
//
// Counters are 32-bit and monotonic; they wrap, and every comparison is a
// signed 32-bit difference, valid because D <= 65536.
#ifndef BAM_NVME_QUEUE_CUH
#define BAM_NVME_QUEUE_CUH

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "spec.h"

#if defined(__has_include)
#  if __has_include(<bam/detail/config.cuh>)
#    include <bam/detail/config.cuh>
#  endif
#  if __has_include(<bam/detail/cold_call.cuh>)
#    include <bam/detail/cold_call.cuh>
#    define BAM_NVME_HAVE_COLD_CALL 1
#  endif
#endif
#ifndef BAM_HD
#  if defined(__CUDACC__)
#    define BAM_HD __host__ __device__
#  else
#    define BAM_HD
#  endif
#endif
#define BAM_NVME_HD BAM_HD inline
// BAM_NVME_COLD(f): call the queue's rarely used helpers (polling the CQ,
// ringing the doorbell, PRP lists, bounce copies) out of line through an
// indirect call on the GPU, so their registers are not added to the
// caller's (bam/detail/cold_call.cuh); a plain call elsewhere.
#if defined(__CUDA_ARCH__) && defined(BAM_NVME_HAVE_COLD_CALL)
#  define BAM_NVME_COLD(f) ::bam::detail::cold_ptr<&f>()
#else
#  define BAM_NVME_COLD(f) f
#endif
#if defined(__CUDACC__)
#  define BAM_NVME_NOINLINE __noinline__
#else
#  define BAM_NVME_NOINLINE
#endif
#if defined(__CUDACC__)
#  define BAM_NVME_UNROLL _Pragma("unroll")
#  define BAM_NVME_NO_UNROLL _Pragma("unroll 1")
#else
#  define BAM_NVME_UNROLL
#  define BAM_NVME_NO_UNROLL
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#  error "bam/nvme/queue.cuh needs sm_70 or newer (PTX acquire/release and __nanosleep)"
#endif

#if !defined(__CUDA_ARCH__)
#  include <atomic>
#  include <chrono>
#  include <sched.h>
#endif

// Statuses the queue layer reports itself, in the NVMe status layout (SCT 7,
// vendor specific), so callers treat every non-zero value as a failure.
#define BAM_NVME_STATUS_TIMEOUT 0x07ffu      /* no completion within timeout */
#define BAM_NVME_STATUS_QUEUE_FAILED 0x07feu /* queue marked failed (stuck slot) */
#define BAM_NVME_STATUS_BAD_ARGS 0x07fdu     /* misaligned / oversized request */
#ifndef BAM_NVME_SC_PRP_OFFSET_INVALID
#  define BAM_NVME_SC_PRP_OFFSET_INVALID 0x13 /* generic status: PRP offset invalid */
#endif

#include <bam/version.h>

BAM_NAMESPACE_BEGIN
namespace nvme {

inline const char* status_str(int status)
{
	switch (status & 0x7ff) { // SCT and SC; DNR and More do not change the name
	case BAM_NVME_STATUS_TIMEOUT: return "timed out waiting for the completion";
	case BAM_NVME_STATUS_QUEUE_FAILED: return "queue failed earlier (stuck command)";
	case BAM_NVME_STATUS_BAD_ARGS: return "bad request (size, alignment or buffer)";
	case BAM_NVME_SC_PRP_OFFSET_INVALID: return "PRP offset invalid";
	case 0x280: return "write fault (media error)";
	case 0x281: return "unrecovered read error (media error)";
	default: return bam_nvme_status_str((uint16_t)(status & 0x7ff));
	}
}

// Storage errors are retried as Linux's nvme driver does: a failed command
// whose status has Do Not Retry clear is submitted again, at most
// max_retries times (nvme_core.max_retries defaults to 5); DNR set, or the
// queue layer's own statuses (SCT 7: timeout, failed queue, bad request),
// are final. The caller sees the last status.
constexpr uint32_t max_retries = 5;

BAM_NVME_HD bool status_retryable(int status)
{
	return status != 0 && !BAM_NVME_DNR(status) && BAM_NVME_SCT(status) != 7;
}

namespace detail {

// ---- memory-model primitives -------------------------------------------
// "gpu" words live in GPU memory and are touched only by GPU threads (or,
// in host tests, by CPU threads); "sys" words are shared with the
// controller (doorbells, CQ entries) and need system scope on the GPU.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t ld_acq_gpu(const uint32_t* p)
{
	uint32_t v;
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}
__device__ __forceinline__ uint32_t ld_acq_sys(const uint32_t* p)
{
	uint32_t v;
	asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}
__device__ __forceinline__ uint32_t ld_rlx_sys(const uint32_t* p)
{
	uint32_t v;
	asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}
__device__ __forceinline__ uint32_t ld_rlx_gpu(const uint32_t* p)
{
	uint32_t v;
	asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}
__device__ __forceinline__ void st_rel_gpu(uint32_t* p, uint32_t v)
{
	asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_rlx_gpu(uint32_t* p, uint32_t v)
{
	asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// Doorbell write: to BAR0 (nvme) or pinned host memory (emu); ordered
// after earlier writes by the caller's fence_sys().
__device__ __forceinline__ void st_rlx_sys(uint32_t* p, uint32_t v)
{
	asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_rel_sys(uint32_t* p, uint32_t v)
{
	asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t fetch_add_gpu(uint32_t* p, uint32_t v)
{
	return atomicAdd(p, v);
}
__device__ __forceinline__ void add64(uint64_t* p, uint64_t v)
{
	atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ uint32_t cas_acq_gpu(uint32_t* p, uint32_t cmp, uint32_t v)
{
	uint32_t old;
	asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;"
		     : "=r"(old)
		     : "l"(p), "r"(cmp), "r"(v)
		     : "memory");
	return old;
}
__device__ __forceinline__ uint32_t cas_acqrel_gpu(uint32_t* p, uint32_t cmp, uint32_t v)
{
	uint32_t old;
	asm volatile("atom.acq_rel.gpu.global.cas.b32 %0, [%1], %2, %3;"
		     : "=r"(old)
		     : "l"(p), "r"(cmp), "r"(v)
		     : "memory");
	return old;
}
__device__ __forceinline__ void fence_sys() { __threadfence_system(); }
__device__ __forceinline__ void fence_acq_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
// Batched CQ reads: relaxed, made acquire by the fence that follows.
__device__ __forceinline__ uint32_t ld_batch_sys(const uint32_t* p) { return ld_rlx_sys(p); }
__device__ __forceinline__ uint64_t now_ns()
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
__device__ __forceinline__ void backoff(uint32_t& n)
{
	// 256 ns doubling to 8 us: thousands of waiters must not saturate L2.
	uint32_t ns = n < 5 ? 256u << n : 8192u;
	++n;
	__nanosleep(ns);
}
__device__ __forceinline__ uint32_t smid()
{
	uint32_t v;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
	return v;
}
#else
inline uint32_t ld_acq_gpu(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline uint32_t ld_acq_sys(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline uint32_t ld_rlx_sys(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline uint32_t ld_rlx_gpu(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline void st_rel_gpu(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline void st_rlx_gpu(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
inline void st_rlx_sys(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline void st_rel_sys(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline uint32_t fetch_add_gpu(uint32_t* p, uint32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline void add64(uint64_t* p, uint64_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
inline uint32_t cas_acq_gpu(uint32_t* p, uint32_t cmp, uint32_t v)
{
	__atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
	return cmp;
}
inline uint32_t cas_acqrel_gpu(uint32_t* p, uint32_t cmp, uint32_t v)
{
	__atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return cmp;
}
inline void fence_sys() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void fence_acq_sys() { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
// Host: acquire loads (free on x86), which ThreadSanitizer understands;
// it does not model stand-alone fences.
inline uint32_t ld_batch_sys(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline uint64_t now_ns()
{
	return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
		       std::chrono::steady_clock::now().time_since_epoch())
		.count();
}
// CPU threads stand in for GPU threads in the tests, often far more of them
// than cores: yield early so the controller threads get to run.
inline void backoff(uint32_t& n)
{
	if (n++ < 16) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else {
		sched_yield();
	}
}
// Round-robin queue choice per host thread.
inline uint32_t host_thread_index()
{
	static std::atomic<uint32_t> next{0};
	static thread_local uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
	return mine;
}
#endif

inline BAM_HD int32_t diff(uint32_t a, uint32_t b) { return (int32_t)(a - b); }

// Copy `bytes` (a multiple of 16 when both pointers are 16-byte aligned).
// from_shared: the source is memory the controller writes (bounce buffer in
// pinned host memory), read around the non-coherent L1.
BAM_NVME_HD void copy_data(void* dst, const void* src, uint32_t bytes, bool from_shared)
{
#if defined(__CUDA_ARCH__)
	if ((((uintptr_t)dst | (uintptr_t)src | bytes) & 15u) == 0) {
		uint4* d = (uint4*)dst;
		const uint4* s = (const uint4*)src;
		uint32_t n = bytes / 16, i = 0;
		// Four independent 16-byte loads in flight per round trip, not
		// unrolled further: on the GPU this copy is called out of line
		// (BAM_NVME_COLD) and its registers set the count of every kernel
		// that reads a storage array.
BAM_NVME_NO_UNROLL
		for (; i + 4 <= n; i += 4) {
			uint4 v[4];
BAM_NVME_UNROLL
			for (int k = 0; k < 4; k++) v[k] = from_shared ? __ldcv(s + i + k) : s[i + k];
BAM_NVME_UNROLL
			for (int k = 0; k < 4; k++) d[i + k] = v[k];
		}
BAM_NVME_NO_UNROLL
		for (; i < n; i++) d[i] = from_shared ? __ldcv(s + i) : s[i];
	} else {
		volatile const uint8_t* s = (volatile const uint8_t*)src;
		uint8_t* d = (uint8_t*)dst;
BAM_NVME_NO_UNROLL
		for (uint32_t i = 0; i < bytes; i++) d[i] = s[i];
	}
#else
	(void)from_shared;
	memcpy(dst, src, bytes);
#endif
}

BAM_NVME_HD void store_sqe(bam_nvme_sqe* dst, const bam_nvme_sqe& sqe)
{
#if defined(__CUDA_ARCH__)
	const uint4* s = (const uint4*)&sqe;
	uint4* d = (uint4*)dst;
BAM_NVME_NO_UNROLL // 16 bytes at a time: registers (see copy_data)
	for (int k = 0; k < 4; k++) d[k] = s[k];
#else
	memcpy((void*)dst, &sqe, sizeof sqe);
#endif
}

} // namespace detail

// Virtual -> bus address translation for memory the controller DMAs to or
// from. bus == nullptr means identity (the emu controller's "bus" addresses
// are host virtual addresses of pinned memory).
struct dma_region {
	uint64_t va;            // first byte
	uint64_t bytes;         // length
	uint32_t page_shift;    // translation granule (16 for GPU 64 KiB pages)
	uint32_t pad_;
	const uint64_t* bus;    // bus address of every granule, GPU-visible; or null

	BAM_NVME_HD bool contains(uint64_t a, uint64_t n) const { return a >= va && a - va <= bytes && n <= bytes - (a - va); }
	BAM_NVME_HD uint64_t translate(uint64_t a) const
	{
		if (!bus) return a;
		uint64_t off = a - va;
		return bus[off >> page_shift] + (off & ((1ull << page_shift) - 1));
	}
};

enum : uint32_t {
	QUEUE_MODE_BOUNCE = 0, // emu: data staged in per-slot pinned host buffers
	QUEUE_MODE_DIRECT = 1  // nvme: PRPs point straight at the caller's GPU memory
};

// Protocol counters kept by the GPU side (read back by tests and stats).
struct queue_counters {
	uint32_t submitted;      // commands placed in the SQ
	uint32_t doorbells;      // SQ tail doorbell writes (batching: << submitted)
	uint32_t cq_doorbells;   // CQ head doorbell writes
	uint32_t duplicates;     // CQEs for a cid with no command in flight
	uint32_t bad_cids;       // CQEs with cid >= depth
	uint32_t timeouts;       // waiters that gave up
	uint32_t late;           // completions of abandoned commands
	uint32_t failed;         // 1 once the queue is marked failed
	uint32_t retries;        // commands submitted again after a retryable status (status_retryable)
};

// Time spent per phase, summed over commands (QUEUE_FLAG_PROFILE only).
struct queue_profile {
	uint64_t ops;
	uint64_t slot_ns;  // ticket -> slot free and SQ room
	uint64_t ring_ns;  // SQE written -> announced by a doorbell
	uint64_t wait_ns;  // announced -> completion seen
	uint64_t copy_ns;  // bounce -> destination
	uint64_t drains;   // CQ drains that found entries
	uint64_t drained;  // CQ entries consumed
	uint64_t drain_ns; // time holding the CQ lock with entries
};

enum : uint32_t {
	// Order the SQE before the doorbell with release stores (gpu scope to
	// publish the slot, system scope on the doorbells) instead of a full
	// system fence per command. Both are correct under the PTX model.
	QUEUE_FLAG_LIGHT_FENCE = 1u << 0,
	// Reads in BOUNCE mode: every lane of the warp still polling helps copy
	// each finished lane's bounce buffer, so the reads of host memory are
	// coalesced (512 B per warp instruction instead of 16 B).
	QUEUE_FLAG_WARP_COPY = 1u << 1,
	// Benchmark only: leave the data in the bounce buffer (protocol ceiling).
	QUEUE_FLAG_NO_COPY = 1u << 2,
	QUEUE_FLAG_PROFILE = 1u << 3,
	// Drain the CQ eight entries per round trip: relaxed loads of the next
	// entries' phase words in parallel, then one system acquire fence.
	QUEUE_FLAG_CQ_BATCH = 1u << 4
};

struct queue;

// PRP list entries reserved per slot for transfers of up to max_bytes
// (<= 2 MiB): a power of two >= max_bytes/4096 + 1. With the list area
// 4 KiB aligned, the part of a slot's list that a command uses (at most
// max_bytes/4096 entries, one page) never crosses a memory page boundary,
// where a controller would take the page's last entry for a pointer to the
// next list page.
BAM_NVME_HD uint32_t prp_list_entries(uint32_t max_bytes)
{
	uint32_t need = max_bytes / 4096 + 1, n = 2;
	while (n < need) n <<= 1;
	return n;
}

// A completed read whose slot the caller still holds (queue::io with hold).
struct queue_hold {
	queue* q = nullptr;
	const uint8_t* src = nullptr; // bounce buffer with the data (BOUNCE mode)
	uint32_t ticket = 0;
	bool active = false;          // retire() must run
};

// One SQ/CQ pair and its bookkeeping. Lives in GPU memory (host memory in
// CPU tests); rings and doorbells live where the controller can reach them.
struct queue {
	// -- set-up, read only afterwards --
	bam_nvme_sqe* sq;
	bam_nvme_cqe* cq;
	uint32_t* sq_db;         // SQ tail doorbell
	uint32_t* cq_db;         // CQ head doorbell
	uint32_t depth, mask, depth_shift;
	uint32_t qid, nsid, lba_shift;
	uint32_t mode;           // QUEUE_MODE_*
	uint32_t max_bytes;      // largest transfer (bounce stride / PRP list size)
	uint32_t flags;          // QUEUE_FLAG_*
	uint64_t timeout_ns;     // completion wait bound
	uint64_t slot_timeout_ns; // bound on waiting for a slot / the doorbell
	uint8_t* bounce;         // BOUNCE: depth * max_bytes, pinned host memory
	dma_region bounce_map;   // translation for the bounce area
	uint64_t* prp_lists;     // per slot: prp_list_entries(max_bytes) (GPU-visible)
	dma_region prp_map;      // translation for the PRP list area
	dma_region data_map;     // DIRECT: translation for caller buffers
	// -- per-slot words, depth entries each (GPU memory) --
	uint32_t* seq;   // ticket that may take the slot next
	uint32_t* ready; // ticket whose SQE is written
	uint32_t* done;  // DONE|status, ABANDONED or 0
	uint32_t* tick;  // ticket of the command in the slot
	// -- hot words, one 128-byte line each --
	alignas(128) uint32_t sq_ticket;
	alignas(128) uint32_t sq_db_tail; // entries announced to the controller
	uint32_t sq_lock;
	alignas(128) uint32_t cq_head;    // entries consumed from the CQ (monotonic)
	uint32_t cq_lock;
	uint32_t sq_head_mono;            // entries the controller has fetched
	alignas(128) queue_counters ctr;
	alignas(128) queue_profile prof;

	static constexpr uint32_t DONE = 0x80000000u;
	static constexpr uint32_t ABANDONED = 0x40000000u;

	// Submit one read or write and wait for it. Returns 0 or an NVMe
	// status without the phase bit (or a BAM_NVME_STATUS_* value).
	//
	// With hold != nullptr (reads only), a completed read leaves its data
	// where the device put it and keeps the slot: hold->src is the bounce
	// buffer to copy from (BOUNCE mode; nullptr in DIRECT mode, where buf
	// has the data already), and the caller must call retire(*hold) once it
	// has copied. A group of lanes copies 4 KiB far faster than the one
	// thread that waited (coalesced PCIe reads instead of 256 small ones).
	// hold->active is false when there is nothing to retire (the command
	// timed out or was never submitted).
	BAM_NVME_HD int io(uint8_t opcode, uint64_t byte_offset, uint32_t bytes, void* buf, queue_hold* hold = nullptr)
	{
		if (hold) *hold = queue_hold{};
		using namespace detail;
		uint32_t lba_mask = (1u << lba_shift) - 1;
		if (bytes == 0 || bytes > max_bytes || (bytes & lba_mask) || (byte_offset & lba_mask) ||
		    ((uintptr_t)buf & 3))
			return BAM_NVME_STATUS_BAD_ARGS;
		if (ld_rlx_gpu(&ctr.failed)) return BAM_NVME_STATUS_QUEUE_FAILED;
		// The two halves run out of line on the GPU (BAM_NVME_COLD), so
		// neither's registers add to the other's or to the cache's.
		io_op op;
		const int st = BAM_NVME_COLD(submit_of)(this, opcode, byte_offset, bytes, buf, &op);
		if (st != 0) return st;
		return BAM_NVME_COLD(finish_of)(this, opcode, bytes, buf, hold, &op);
	}

	// A submitted command, between io's two halves.
	struct io_op {
		uint64_t t0, t1, t2; // profiling timestamps
		uint8_t* slot_buf;   // BOUNCE: the slot's bounce buffer
		uint32_t t, s;       // ticket and slot
	};

	// io, steps 1-4: take a slot, write the command, ring the doorbell.
	// Returns 0 or a status (nothing to wait for).
	static BAM_HD BAM_NVME_NOINLINE int submit_of(queue* q, uint8_t opcode, uint64_t byte_offset, uint32_t bytes,
						      void* buf, io_op* op)
	{
		return q->submit(opcode, byte_offset, bytes, buf, *op);
	}
	BAM_NVME_HD int submit(uint8_t opcode, uint64_t byte_offset, uint32_t bytes, void* buf, io_op& op)
	{
		using namespace detail;
		const bool profiling = flags & QUEUE_FLAG_PROFILE;
		uint64_t t0 = profiling ? now_ns() : 0, t1 = 0, t2 = 0;

		uint32_t t = fetch_add_gpu(&sq_ticket, 1);
		uint32_t s = t & mask;
		progress_watch pw(*this);
		uint32_t n = 0;
		// 1 + 2: slot free and room in the SQ.
		while (ld_acq_gpu(&seq[s]) != t || diff(ld_acq_gpu(&sq_head_mono), t + 2 - depth) < 0) {
			BAM_NVME_COLD(drain_cq_of)(this);
			if (pw.stalled(*this)) return fail();
			backoff(n);
		}
		st_rlx_gpu(&tick[s], t);
		if (profiling) t1 = now_ns();

		// 3: the command (built and stored out of line: the SQE is 64 bytes).
		uint8_t* slot_buf = mode == QUEUE_MODE_BOUNCE ? bounce + (uint64_t)s * max_bytes : nullptr;
		if (mode == QUEUE_MODE_BOUNCE && opcode == BAM_NVME_CMD_WRITE)
			BAM_NVME_COLD(copy_data_of)(slot_buf, buf, bytes, false);
		if (!BAM_NVME_COLD(write_sqe_of)(this, opcode, s, byte_offset, bytes,
						   mode == QUEUE_MODE_BOUNCE ? (void*)slot_buf : buf)) {
			BAM_NVME_COLD(release_unsubmitted_of)(this, t, s);
			return BAM_NVME_STATUS_BAD_ARGS;
		}
		// SQE, PRP list and write data before the doorbell: either a full
		// system fence here, or release stores on ready[] and the doorbell.
		if (!(flags & QUEUE_FLAG_LIGHT_FENCE)) fence_sys();
		st_rel_gpu(&ready[s], t);
		if (!BAM_NVME_COLD(ring_of)(this, t)) return fail();
		if (profiling) t2 = now_ns();

		op = io_op{t0, t1, t2, slot_buf, t, s};
		return 0;
	}

	// io, steps 5-6: wait for the completion and copy the data out (or
	// hand the slot to `hold`).
	static BAM_HD BAM_NVME_NOINLINE int finish_of(queue* q, uint8_t opcode, uint32_t bytes, void* buf,
						      queue_hold* hold, const io_op* op)
	{
		return q->finish(opcode, bytes, buf, hold, *op);
	}
	BAM_NVME_HD int finish(uint8_t opcode, uint32_t bytes, void* buf, queue_hold* hold, const io_op& op)
	{
		using namespace detail;
		const bool profiling = flags & QUEUE_FLAG_PROFILE;
		const uint32_t t = op.t, s = op.s;
		uint8_t* const slot_buf = op.slot_buf;
		uint64_t t3 = 0;
		uint32_t n = 0;
		// 5 + 6: wait for the completion, copy the data out.
		const bool copy_out = mode == QUEUE_MODE_BOUNCE && opcode == BAM_NVME_CMD_READ &&
				      !(flags & QUEUE_FLAG_NO_COPY) && hold == nullptr;
		bool copied = false;
		uint64_t deadline = now_ns() + timeout_ns;
		uint32_t d;
		for (;;) {
			d = ld_acq_gpu(&done[s]);
			if (!(d & DONE)) {
				BAM_NVME_COLD(drain_cq_of)(this);
				d = ld_acq_gpu(&done[s]);
			}
			bool fin = d & DONE;
			if (!fin && now_ns() > deadline) {
				d = cas_acqrel_gpu(&done[s], 0, ABANDONED);
				if (d == 0) {
					fetch_add_gpu(&ctr.timeouts, 1);
					return BAM_NVME_STATUS_TIMEOUT;
				}
				fin = true; // completed in the meantime
			}
#if defined(__CUDA_ARCH__)
			if (flags & QUEUE_FLAG_WARP_COPY) {
				bool want = fin && copy_out && (d & 0x7fffu) == 0;
				if (BAM_NVME_COLD(warp_copy_of)(this, want, buf, slot_buf, bytes)) copied = want;
			}
#endif
			if (fin) break;
			backoff(n);
		}
		if (profiling) t3 = now_ns();
		int status = (int)(d & 0x7fffu);
		if (status == 0 && copy_out && !copied) BAM_NVME_COLD(copy_data_of)(buf, slot_buf, bytes, true);
		if (hold) {
			*hold = queue_hold{this, slot_buf, t, true};
			return status;
		}
		retire_slot(s, t);
		if (profiling) BAM_NVME_COLD(profile_of)(this, &op, t3);
		return status;
	}

	// io's rarely taken or bulky steps, out of line (BAM_NVME_COLD): static
	// functions, so the indirect call needs a plain function address.
	static BAM_HD BAM_NVME_NOINLINE void drain_cq_of(queue* q) { q->drain_cq(); }
	static BAM_HD BAM_NVME_NOINLINE bool ring_of(queue* q, uint32_t t) { return q->ring(t); }
	// The SQE for slot s (data at va: the bounce buffer or the caller's),
	// PRP list included, stored into the SQ; false if va is outside the
	// region the controller can reach.
	static BAM_HD BAM_NVME_NOINLINE bool write_sqe_of(queue* q, uint8_t opcode, uint32_t s, uint64_t byte_offset,
							  uint32_t bytes, void* data)
	{
		const uint64_t data_va = (uint64_t)(uintptr_t)data;
		const dma_region* map = q->mode == QUEUE_MODE_BOUNCE ? &q->bounce_map : &q->data_map;
		if (!map->contains(data_va, bytes)) return false;
		// 16-byte aligned: store_sqe reads it as uint4. Out of line (an
		// indirect call) it lives on the stack, where the struct's own
		// 8-byte alignment gave "misaligned address" on the GPU (emu).
		alignas(16) bam_nvme_sqe sqe;
		memset(&sqe, 0, sizeof sqe);
		sqe.opcode = opcode;
		sqe.cid = (uint16_t)s;
		sqe.nsid = q->nsid;
		uint64_t slba = byte_offset >> q->lba_shift;
		sqe.cdw10 = (uint32_t)slba;
		sqe.cdw11 = (uint32_t)(slba >> 32);
		sqe.cdw12 = (bytes >> q->lba_shift) - 1;
		BAM_NVME_COLD(build_prp_of)(q, &sqe, s, data_va, bytes, map);
		detail::store_sqe(&q->sq[s], sqe);
		return true;
	}
	static BAM_HD BAM_NVME_NOINLINE void build_prp_of(queue* q, bam_nvme_sqe* sqe, uint32_t s, uint64_t va,
							  uint32_t bytes, const dma_region* map)
	{
		q->build_prp(*sqe, s, va, bytes, *map);
	}
	static BAM_HD BAM_NVME_NOINLINE void profile_of(queue* q, const io_op* op, uint64_t t3)
	{
		using namespace detail;
		uint64_t t4 = now_ns();
		add64(&q->prof.ops, 1);
		add64(&q->prof.slot_ns, op->t1 - op->t0);
		add64(&q->prof.ring_ns, op->t2 - op->t1);
		add64(&q->prof.wait_ns, t3 - op->t2);
		add64(&q->prof.copy_ns, t4 - t3);
	}
	static BAM_HD BAM_NVME_NOINLINE void release_unsubmitted_of(queue* q, uint32_t t, uint32_t s)
	{
		q->release_unsubmitted(t, s);
	}
	static BAM_HD BAM_NVME_NOINLINE void copy_data_of(void* dst, const void* src, uint32_t bytes, bool from_shared)
	{
		detail::copy_data(dst, src, bytes, from_shared);
	}
#if defined(__CUDA_ARCH__)
	static __device__ __noinline__ bool warp_copy_of(queue* q, bool want, void* dst, const void* src, uint32_t bytes)
	{
		return q->warp_copy(want, dst, src, bytes);
	}
#endif

	// End of a held read (see io): the slot goes to the ticket depth later.
	BAM_NVME_HD void retire(const queue_hold& h)
	{
		if (h.active) retire_slot(h.ticket & mask, h.ticket);
	}

	BAM_NVME_HD void retire_slot(uint32_t s, uint32_t t)
	{
		using namespace detail;
		st_rlx_gpu(&done[s], 0);
		st_rel_gpu(&seq[s], t + depth);
	}

#if defined(__CUDA_ARCH__)
	// Lanes of the warp that are polling right now copy, together, the
	// bounce buffer of every lane whose read just completed. Returns true
	// if a cooperative round ran (this lane's own copy included if want).
	__device__ bool warp_copy(bool want, void* dst, const void* src, uint32_t bytes)
	{
		unsigned act = __activemask();
		// Only our lanes: bits of other lanes that reached this vote with
		// another mask can be set too (seen on an H200).
		unsigned rdy = __ballot_sync(act, want) & act;
		if (!rdy) return false;
		if ((((uintptr_t)dst | (uintptr_t)src | bytes) & 15u) != 0) {
			// unaligned: each lane copies its own
			if (want) detail::copy_data(dst, src, bytes, true);
			__syncwarp(act);
			return true;
		}
		__syncwarp(act); // the finished lanes' acquire of done[] before our loads
		unsigned lane;
		asm("mov.u32 %0, %%laneid;" : "=r"(lane));
		uint32_t nl = __popc(act), rank = __popc(act & ((1u << lane) - 1u));
		while (rdy) {
			int L = __ffs(rdy) - 1;
			rdy &= rdy - 1;
			uint4* d = (uint4*)__shfl_sync(act, (unsigned long long)(uintptr_t)dst, L);
			const uint4* sp = (const uint4*)__shfl_sync(act, (unsigned long long)(uintptr_t)src, L);
			uint32_t nv = __shfl_sync(act, bytes, L) / 16;
			uint32_t i = rank;
BAM_NVME_NO_UNROLL
			for (; i + nl < nv; i += 2 * nl) { // two loads in flight (registers: see copy_data)
				uint4 v0 = __ldcv(sp + i), v1 = __ldcv(sp + i + nl);
				d[i] = v0;
				d[i + nl] = v1;
			}
BAM_NVME_NO_UNROLL
			for (; i < nv; i += nl) d[i] = __ldcv(sp + i);
		}
		__syncwarp(act); // copies visible to the owning lanes
		return true;
	}
#endif

	// A wait for a slot or for the doorbell depends on other commands
	// completing; it gives up only when the queue makes no progress at all
	// (no CQ entry consumed, no doorbell written) for slot_timeout_ns.
	struct progress_watch {
		uint32_t cq, db;
		uint64_t since;
		BAM_NVME_HD explicit progress_watch(queue& q)
			: cq(detail::ld_rlx_gpu(&q.cq_head)), db(detail::ld_rlx_gpu(&q.sq_db_tail)), since(detail::now_ns())
		{
		}
		BAM_NVME_HD bool stalled(queue& q)
		{
			uint32_t c = detail::ld_rlx_gpu(&q.cq_head), d = detail::ld_rlx_gpu(&q.sq_db_tail);
			uint64_t now = detail::now_ns();
			if (c != cq || d != db) {
				cq = c;
				db = d;
				since = now;
				return false;
			}
			return now - since > q.slot_timeout_ns;
		}
	};

	// Doorbell batching (step 4). Returns false if the entry could not be
	// announced in time (an earlier ticket never wrote its SQE).
	BAM_NVME_HD bool ring(uint32_t t)
	{
		using namespace detail;
		progress_watch pw(*this);
		uint32_t n = 0;
		while (diff(ld_acq_gpu(&sq_db_tail), t + 1) < 0) {
			if (cas_acq_gpu(&sq_lock, 0, 1) == 0) {
				uint32_t start = ld_rlx_gpu(&sq_db_tail), pos = start;
				while (pos - start < depth && ld_acq_gpu(&ready[pos & mask]) == pos) pos++;
				if (pos != start) {
					if (flags & QUEUE_FLAG_LIGHT_FENCE) {
						st_rel_sys(sq_db, pos & mask);
					} else {
						fence_sys();
						st_rlx_sys(sq_db, pos & mask);
					}
					fetch_add_gpu(&ctr.doorbells, 1);
					fetch_add_gpu(&ctr.submitted, pos - start);
					st_rel_gpu(&sq_db_tail, pos);
				}
				st_rel_gpu(&sq_lock, 0);
				if (diff(pos, t + 1) >= 0) break;
			}
			if (pw.stalled(*this)) return false;
			backoff(n);
		}
		return true;
	}

	// Step 5: consume every posted CQE (try-lock; returns at once if
	// another thread is draining).
	BAM_NVME_HD void drain_cq()
	{
		using namespace detail;
		if (ld_rlx_gpu(&cq_lock) != 0 || cas_acq_gpu(&cq_lock, 0, 1) != 0) return;
		uint32_t start = ld_rlx_gpu(&cq_head), h = start;
		uint64_t t0 = 0;
		if (flags & QUEUE_FLAG_CQ_BATCH) {
			const uint32_t B = 8;
			while (h - start + B <= depth) {
				uint32_t w[B];
BAM_NVME_UNROLL
				for (uint32_t k = 0; k < B; k++) w[k] = ld_batch_sys((const uint32_t*)&cq[(h + k) & mask].cid);
				uint32_t n = 0;
BAM_NVME_UNROLL
				for (uint32_t k = 0; k < B; k++) {
					uint32_t expect = (((h + k) >> depth_shift) & 1u) ^ 1u;
					if (n == k && ((w[k] >> 16) & 1u) == expect) n++;
				}
				if (n == 0) break;
				fence_acq_sys(); // acquire: data behind these entries is visible
				if (h == start && (flags & QUEUE_FLAG_PROFILE)) t0 = now_ns();
				for (uint32_t k = 0; k < n; k++) complete(w[k] & 0xffffu, (w[k] >> 17) & 0x7fffu);
				h += n;
				if (n < B) break;
			}
		}
		while (h - start < depth) {
			bam_nvme_cqe* e = &cq[h & mask];
			// dword 3 (cid | status | phase) is written last by the controller.
			uint32_t dw3 = ld_acq_sys((const uint32_t*)&e->cid);
			uint32_t expect = ((h >> depth_shift) & 1u) ^ 1u;
			if (((dw3 >> 16) & 1u) != expect) break;
			if (h == start && (flags & QUEUE_FLAG_PROFILE)) t0 = now_ns();
			complete(dw3 & 0xffffu, (dw3 >> 17) & 0x7fffu);
			h++;
		}
		if (h != start) {
			// SQ head: non-decreasing in CQ order, so the last entry's is
			// the newest; one read per drain instead of one per entry.
			uint32_t dw2 = ld_rlx_sys((const uint32_t*)&cq[(h - 1) & mask].sq_head);
			uint32_t sqh = dw2 & 0xffffu;
			uint32_t shm = ld_rlx_gpu(&sq_head_mono);
			if (sqh < depth) shm += (sqh - shm) & mask;
			st_rel_gpu(&sq_head_mono, shm);
			st_rlx_gpu(&cq_head, h);
			// entries read before the controller may reuse them
			if (flags & QUEUE_FLAG_LIGHT_FENCE) {
				st_rel_sys(cq_db, h & mask);
			} else {
				fence_sys();
				st_rlx_sys(cq_db, h & mask);
			}
			fetch_add_gpu(&ctr.cq_doorbells, 1);
			if (flags & QUEUE_FLAG_PROFILE) {
				add64(&prof.drains, 1);
				add64(&prof.drained, h - start);
				add64(&prof.drain_ns, now_ns() - t0);
			}
		}
		st_rel_gpu(&cq_lock, 0);
	}

	BAM_NVME_HD void complete(uint32_t cid, uint32_t status)
	{
		using namespace detail;
		if (cid >= depth) {
			fetch_add_gpu(&ctr.bad_cids, 1);
			return;
		}
		// In flight iff the slot's ticket holder has not retired it.
		uint32_t t = ld_rlx_gpu(&tick[cid]);
		if (ld_rlx_gpu(&seq[cid]) != t) {
			fetch_add_gpu(&ctr.duplicates, 1);
			return;
		}
		uint32_t old = cas_acqrel_gpu(&done[cid], 0, DONE | status);
		if (old == 0) return;
		if (old == ABANDONED) { // waiter gave up: retire for it
			fetch_add_gpu(&ctr.late, 1);
			st_rlx_gpu(&done[cid], 0);
			st_rel_gpu(&seq[cid], t + depth);
			return;
		}
		fetch_add_gpu(&ctr.duplicates, 1);
	}

	// PRP1/PRP2 (and the slot's PRP list) for a buffer, memory page 4 KiB.
	BAM_NVME_HD void build_prp(bam_nvme_sqe& sqe, uint32_t s, uint64_t va, uint32_t bytes, const dma_region& map)
	{
		const uint64_t pg = 4096;
		sqe.prp1 = map.translate(va);
		uint64_t first = pg - (va & (pg - 1));
		if (bytes <= first) return;
		uint64_t next = va + first;
		uint64_t rest = bytes - first;
		if (rest <= pg) {
			sqe.prp2 = map.translate(next);
			return;
		}
		uint64_t* list = prp_lists + (uint64_t)s * prp_list_entries(max_bytes);
		uint32_t k = 0;
		for (uint64_t off = 0; off < rest; off += pg) list[k++] = map.translate(next + off);
		sqe.prp2 = prp_map.translate((uint64_t)(uintptr_t)list);
	}

	// A slot taken but never submitted (bad buffer): submit nothing, but the
	// ticket must still pass through the ring, so publish a FLUSH in it.
	BAM_NVME_HD void release_unsubmitted(uint32_t t, uint32_t s)
	{
		using namespace detail;
		alignas(16) bam_nvme_sqe sqe; // read as uint4 by store_sqe
		memset(&sqe, 0, sizeof sqe);
		sqe.opcode = BAM_NVME_CMD_FLUSH;
		sqe.cid = (uint16_t)s;
		sqe.nsid = nsid;
		store_sqe(&sq[s], sqe);
		fence_sys();
		st_rel_gpu(&ready[s], t);
		if (!ring(t)) {
			fail();
			return;
		}
		uint32_t n = 0;
		uint64_t deadline = now_ns() + timeout_ns;
		while (!(ld_acq_gpu(&done[s]) & DONE)) {
			drain_cq();
			if (now_ns() > deadline && cas_acqrel_gpu(&done[s], 0, ABANDONED) == 0) return;
			backoff(n);
		}
		st_rlx_gpu(&done[s], 0);
		st_rel_gpu(&seq[s], t + depth);
	}

	BAM_NVME_HD int fail()
	{
		detail::st_rel_gpu(&ctr.failed, 1);
		return BAM_NVME_STATUS_QUEUE_FAILED;
	}
};

// The queues a backend hands to the cache. Trivially copyable; the pointer
// device_queues() returns points at one in GPU memory.
struct queue_set {
	queue* queues;
	uint32_t nqueues;
	uint32_t spread; // device: warps of one SM spread over this many queues

	BAM_NVME_HD queue& pick() const
	{
#if defined(__CUDA_ARCH__)
		uint32_t warp = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / 32;
		uint32_t q = detail::smid() * spread + warp % spread;
		return queues[q % nqueues];
#else
		return queues[detail::host_thread_index() % nqueues];
#endif
	}
	// Each call submits again while the status is retryable (status_retryable,
	// at most max_retries times) and returns the last status.
	BAM_NVME_HD int read(uint64_t byte_offset, uint32_t bytes, void* dst_device) const
	{
		for (uint32_t a = 0;; a++) {
			queue& q = pick();
			int st = q.io(BAM_NVME_CMD_READ, byte_offset, bytes, dst_device);
			if (!status_retryable(st) || a == max_retries) return st;
			detail::fetch_add_gpu(&q.ctr.retries, 1);
		}
	}
	BAM_NVME_HD int write(uint64_t byte_offset, uint32_t bytes, const void* src_device) const
	{
		for (uint32_t a = 0;; a++) {
			queue& q = pick();
			int st = q.io(BAM_NVME_CMD_WRITE, byte_offset, bytes, const_cast<void*>(src_device));
			if (!status_retryable(st) || a == max_retries) return st;
			detail::fetch_add_gpu(&q.ctr.retries, 1);
		}
	}
	// A read whose data the caller copies itself (from hold.src when it is
	// not null), then retire(hold). A failed attempt that will be retried
	// gives its slot back first.
	BAM_NVME_HD int read_held(uint64_t byte_offset, uint32_t bytes, void* dst_device, queue_hold& hold) const
	{
		for (uint32_t a = 0;; a++) {
			queue& q = pick();
			int st = q.io(BAM_NVME_CMD_READ, byte_offset, bytes, dst_device, &hold);
			if (!status_retryable(st) || a == max_retries) return st;
			retire(hold);
			detail::fetch_add_gpu(&q.ctr.retries, 1);
		}
	}
	BAM_NVME_HD void retire(queue_hold& hold) const
	{
		if (hold.active) hold.q->retire(hold);
		hold.active = false;
	}
	// Whether read_held leaves the data in a buffer of the queue's own
	// (BOUNCE mode), so a reader needs no destination of its own: the
	// cache's storage bypass reads a line that way when no slot is free.
	// In DIRECT mode the device writes into the caller's buffer, which
	// must lie in the cache's DMA region.
	BAM_NVME_HD bool holds_data() const { return nqueues > 0 && queues[0].mode == QUEUE_MODE_BOUNCE; }
};

} // namespace nvme
BAM_NAMESPACE_END // namespace bam

#endif // BAM_NVME_QUEUE_CUH
