// Software NVMe target behind the `emu` backend (see bam/nvme/emu.h).
//
// Each controller thread owns the queues q with q % threads == its index.
// It polls their SQ tail doorbells, fetches and validates SQEs, moves the
// data between the file (mmap) and the PRP-addressed bounce buffers at
// fetch time, and queues the completion in a per-thread deadline heap:
// completion time = max(fetch + latency, IOPS token time) (+ fault delay).
// Many commands wait in the heap at once, so latency overlaps and
// throughput = outstanding / latency, as on a real SSD. Due completions are
// posted to the CQ (dwords 0-2 first, then dword 3 with cid, status and the
// phase tag, release-ordered) unless the CQ is full, in which case they wait
// in the queue's backlog until the host moves the CQ head doorbell.
#include <bam/nvme/emu.h>
#include <bam/nvme/queue.cuh>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <queue>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
	throw bam::error("emu controller: " + msg);
}

uint64_t clock_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

uint32_t log2u(uint64_t v)
{
	uint32_t s = 0;
	while ((1ull << s) < v) s++;
	return s;
}

// Status values (without phase bit) the controller produces.
constexpr uint16_t ST_OK = 0;
constexpr uint16_t ST_INVALID_OPCODE = BAM_NVME_SC_INVALID_OPCODE;
constexpr uint16_t ST_INVALID_FIELD = BAM_NVME_SC_INVALID_FIELD;
constexpr uint16_t ST_XFER = BAM_NVME_SC_DATA_XFER_ERROR;
constexpr uint16_t ST_PRP_OFFSET = BAM_NVME_SC_PRP_OFFSET_INVALID;
constexpr uint16_t ST_INVALID_NS = BAM_NVME_SC_INVALID_NS;
constexpr uint16_t ST_LBA_RANGE = BAM_NVME_SC_LBA_RANGE;
constexpr uint16_t ST_WRITE_FAULT = (2u << 8) | 0x80;  // media error: write fault
constexpr uint16_t ST_READ_ERROR = (2u << 8) | 0x81;   // media error: unrecovered read

// ---- memory: pinned+mapped host / GPU, or plain host ----------------------
struct memory {
	bool gpu = false;

	void* shared(size_t bytes)
	{
		void* p = nullptr;
#if BAM_EMU_CUDA
		if (gpu) {
			cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
			if (e != cudaSuccess)
				fail("cudaHostAlloc(" + std::to_string(bytes) + " bytes) failed: " + cudaGetErrorString(e) +
				     " (lower queues, queue_depth or max_io_bytes)");
			void* d = nullptr;
			if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess || d != p)
				fail("pinned memory is not mapped at the same address on the GPU (UVA needed)");
			memset(p, 0, bytes);
			return p;
		}
#endif
		if (posix_memalign(&p, 4096, bytes) != 0) fail("out of host memory (" + std::to_string(bytes) + " bytes)");
		memset(p, 0, bytes);
		return p;
	}
	void free_shared(void* p)
	{
		if (!p) return;
#if BAM_EMU_CUDA
		if (gpu) {
			cudaFreeHost(p);
			return;
		}
#endif
		free(p);
	}
	void* device(size_t bytes)
	{
		void* p = nullptr;
#if BAM_EMU_CUDA
		if (gpu) {
			cudaError_t e = cudaMalloc(&p, bytes);
			if (e != cudaSuccess) fail(std::string("cudaMalloc failed: ") + cudaGetErrorString(e));
			return p;
		}
#endif
		if (posix_memalign(&p, 128, bytes) != 0) fail("out of host memory");
		return p;
	}
	void free_device(void* p)
	{
		if (!p) return;
#if BAM_EMU_CUDA
		if (gpu) {
			cudaFree(p);
			return;
		}
#endif
		free(p);
	}
	void to_device(void* dst, const void* src, size_t n)
	{
#if BAM_EMU_CUDA
		if (gpu) {
			cudaError_t e = cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
			if (e != cudaSuccess) fail(std::string("cudaMemcpy failed: ") + cudaGetErrorString(e));
			return;
		}
#endif
		memcpy(dst, src, n);
	}
	void from_device(void* dst, const void* src, size_t n)
	{
#if BAM_EMU_CUDA
		if (gpu) {
			cudaError_t e = cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
			if (e != cudaSuccess) fail(std::string("cudaMemcpy failed: ") + cudaGetErrorString(e));
			return;
		}
#endif
		memcpy(dst, src, n);
	}
};

bool gpu_present()
{
#if BAM_EMU_CUDA
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return false;
	}
	return n > 0;
#else
	return false;
#endif
}

struct pending {
	uint64_t deadline;
	uint64_t fetched;
	uint64_t order;
	uint32_t q;
	uint16_t cid;
	uint16_t status;
};
struct later {
	bool operator()(const pending& a, const pending& b) const
	{
		return a.deadline != b.deadline ? a.deadline > b.deadline : a.order > b.order;
	}
};

// Controller-side view of one queue pair; touched only by its owner thread.
struct hw_queue {
	bam_nvme_sqe* sq;
	bam_nvme_cqe* cq;
	uint32_t* sq_db;
	uint32_t* cq_db;
	uint32_t qid;
	uint32_t head = 0;    // SQ head (next entry to fetch)
	uint32_t cq_tail = 0; // next CQ entry to post
	uint32_t phase = 1;   // phase tag of the current pass over the CQ
	uint32_t bad_db = ~0u;
	std::deque<pending> backlog; // due completions waiting for CQ space
};

struct alignas(64) thread_stats {
	std::atomic<uint64_t> commands{0}, reads{0}, writes{0}, flushes{0}, bytes{0};
	std::atomic<uint64_t> errors{0}, delays{0}, reorders{0}, invalid{0}, protocol{0}, cq_full{0};
	std::atomic<uint64_t> max_lat_ns{0}, sum_lat_ns{0}, busy_ns{0}, run_ns{0};
};

uint64_t xorshift(uint64_t& s)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

} // namespace

fault_kind parse_fault_kind(const std::string& s)
{
	if (s == "none" || s.empty()) return fault_kind::none;
	if (s == "error") return fault_kind::error;
	if (s == "delay") return fault_kind::delay;
	if (s == "reorder") return fault_kind::reorder;
	fail("unknown fault kind '" + s + "' (accepted: none, error, delay, reorder)");
}

const char* fault_kind_name(fault_kind k)
{
	switch (k) {
	case fault_kind::none: return "none";
	case fault_kind::error: return "error";
	case fault_kind::delay: return "delay";
	case fault_kind::reorder: return "reorder";
	}
	return "?";
}

struct emu_controller::impl {
	emu_options opt;
	memory mem;
	uint32_t nq = 0, depth = 0, mask = 0, per_slot_prp = 0;
	uint32_t lba_shift = 9;
	uint64_t ns_blocks = 0, file_bytes = 0;

	int fd = -1;
	uint8_t* map = nullptr;
	size_t map_bytes = 0;
	bool writable = true;

	// pinned / shared areas
	uint8_t* dbs = nullptr;
	bam_nvme_sqe* sqs = nullptr;
	bam_nvme_cqe* cqs = nullptr;
	uint64_t* prps = nullptr;
	uint8_t* bounce = nullptr;
	size_t prp_bytes = 0, bounce_bytes = 0;
	// GPU-side bookkeeping
	queue* dqueues = nullptr;
	uint32_t* words = nullptr;
	queue_set* dset = nullptr;

	std::vector<hw_queue> hq;
	std::vector<std::thread> threads;
	std::vector<std::unique_ptr<thread_stats>> tstats;
	std::atomic<bool> stop{false};

	// IOPS token bucket (GCRA): time in picoseconds the next token is due.
	std::atomic<int64_t> next_token_ps{0};
	int64_t interval_ps = 0, burst_ps = 0;
	uint64_t latency_ns = 0, delay_ns = 0, reorder_ns = 0;
	uint64_t start_ns = 0;

	// Optional time series (emu_options::trace_path): commands fetched and
	// completed per trace_bucket_ns, to see whether a run keeps the storage
	// busy or leaves gaps (ramps, tails, launch boundaries).
	static constexpr uint64_t trace_bucket_ns = 100000;
	static constexpr size_t trace_buckets = 1200000; // 120 s
	std::unique_ptr<std::atomic<uint32_t>[]> trace_fetched, trace_done;
	void trace(std::unique_ptr<std::atomic<uint32_t>[]>& series, uint64_t now)
	{
		if (!series) return;
		const uint64_t b = (now - start_ns) / trace_bucket_ns;
		if (b < trace_buckets) series[b].fetch_add(1, std::memory_order_relaxed);
	}
	void write_trace() const;

	impl(const std::string& path, const emu_options& o);
	~impl();
	void release();
	void open_file(const std::string& path);
	void setup_queues();
	void run(int tid);
	void fetch(hw_queue& q, uint32_t qi, const bam_nvme_sqe& c, uint64_t now, uint64_t& rng, uint64_t& order,
		   thread_stats& st, std::priority_queue<pending, std::vector<pending>, later>& heap);
	uint16_t execute(const bam_nvme_sqe& c, bool inject_error, thread_stats& st);
	uint16_t gather(const bam_nvme_sqe& c, uint32_t bytes, std::vector<std::pair<uint8_t*, uint32_t>>& segs);
	bool post(hw_queue& q, const pending& p, thread_stats& st);
	uint64_t token_time_ns(uint64_t now);
};

emu_controller::impl::impl(const std::string& path, const emu_options& o) : opt(o)
{
	if (opt.threads < 1 || opt.threads > 256) fail("threads must be 1..256, got " + std::to_string(opt.threads));
	if (opt.queue_depth < 2 || opt.queue_depth > 65536 || !is_pow2((uint64_t)opt.queue_depth))
		fail("queue_depth must be a power of two in 2..65536, got " + std::to_string(opt.queue_depth));
	if (opt.queues < 0 || opt.queues > 65535) fail("queues must be 0 (auto) or 1..65535");
	if (opt.block_bytes < 512 || !is_pow2(opt.block_bytes) || opt.block_bytes > 65536)
		fail("block_bytes must be a power of two in 512..65536, got " + std::to_string(opt.block_bytes));
	if (opt.max_io_bytes < opt.block_bytes || opt.max_io_bytes > (1u << 21) || opt.max_io_bytes % 4096)
		fail("max_io_bytes must be a multiple of 4096, >= block_bytes and <= 2 MiB, got " +
		     std::to_string(opt.max_io_bytes));
	if (opt.latency_us < 0 || opt.iops < 0 || opt.fault_rate < 0 || opt.fault_rate > 1 || opt.timeout_ms <= 0 ||
	    opt.fault_delay_us < 0)
		fail("latency_us, iops, fault_delay_us must be >= 0, fault_rate in [0,1], timeout_ms > 0");
	nq = opt.queues ? (uint32_t)opt.queues : (uint32_t)std::max(16, 4 * opt.threads);
	depth = (uint32_t)opt.queue_depth;
	mask = depth - 1;
	lba_shift = log2u(opt.block_bytes);
	per_slot_prp = prp_list_entries(opt.max_io_bytes);
	latency_ns = (uint64_t)(opt.latency_us * 1000.0);
	delay_ns = (uint64_t)(opt.fault_delay_us * 1000.0);
	reorder_ns = std::max<uint64_t>(50000, 4 * latency_ns);
	if (opt.iops > 0) {
		interval_ps = (int64_t)std::llround(1e12 / opt.iops);
		burst_ps = interval_ps * 16;
	}
	mem.gpu = !opt.host_memory && gpu_present();
	if (!opt.trace_path.empty()) {
		trace_fetched.reset(new std::atomic<uint32_t>[trace_buckets]());
		trace_done.reset(new std::atomic<uint32_t>[trace_buckets]());
	}
	start_ns = clock_ns();
	try {
		open_file(path);
		setup_queues();
	} catch (...) {
		release();
		throw;
	}
	for (int i = 0; i < opt.threads; i++) tstats.emplace_back(new thread_stats);
	for (int i = 0; i < opt.threads; i++) threads.emplace_back([this, i] { run(i); });
}

void emu_controller::impl::open_file(const std::string& path)
{
	fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EROFS)) {
		fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
		writable = false;
	}
	if (fd < 0) fail("cannot open '" + path + "': " + strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) fail("'" + path + "' is not a regular file");
	file_bytes = (uint64_t)sb.st_size;
	uint64_t cap = opt.capacity_bytes ? opt.capacity_bytes : file_bytes;
	ns_blocks = (cap + opt.block_bytes - 1) >> lba_shift;
	if (ns_blocks == 0) fail("'" + path + "' is empty");
	if (file_bytes) {
		map_bytes = file_bytes;
		int flags = MAP_SHARED;
		if (file_bytes <= (4ull << 30)) flags |= MAP_POPULATE; // page cache -> page tables up front
		void* m = mmap(nullptr, map_bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, flags, fd, 0);
		if (m == MAP_FAILED) fail("mmap of '" + path + "' failed: " + strerror(errno));
		map = (uint8_t*)m;
		madvise(map, map_bytes, MADV_RANDOM);
	}
}

void emu_controller::impl::setup_queues()
{
	size_t slots = (size_t)nq * depth;
	dbs = (uint8_t*)mem.shared((size_t)nq * 64);
	sqs = (bam_nvme_sqe*)mem.shared(slots * sizeof(bam_nvme_sqe));
	cqs = (bam_nvme_cqe*)mem.shared(slots * sizeof(bam_nvme_cqe));
	prp_bytes = slots * per_slot_prp * 8;
	prps = (uint64_t*)mem.shared(prp_bytes);
	bounce_bytes = slots * opt.max_io_bytes;
	bounce = (uint8_t*)mem.shared(bounce_bytes);

	dqueues = (queue*)mem.device(sizeof(queue) * nq);
	words = (uint32_t*)mem.device(slots * 4 * sizeof(uint32_t));
	dset = (queue_set*)mem.device(sizeof(queue_set));

	std::vector<uint32_t> w(slots * 4);
	std::vector<queue> img(nq);
	uint64_t timeout_ns = (uint64_t)(opt.timeout_ms * 1e6);
	for (uint32_t i = 0; i < nq; i++) {
		queue& q = img[i];
		memset((void*)&q, 0, sizeof q);
		size_t base = (size_t)i * depth;
		q.sq = sqs + base;
		q.cq = cqs + base;
		q.sq_db = (uint32_t*)(dbs + (size_t)i * 64);
		q.cq_db = q.sq_db + 1;
		q.depth = depth;
		q.mask = mask;
		q.depth_shift = log2u(depth);
		q.qid = i + 1;
		q.nsid = 1;
		q.lba_shift = lba_shift;
		q.mode = QUEUE_MODE_BOUNCE;
		q.max_bytes = opt.max_io_bytes;
		q.flags = opt.queue_flags;
		q.timeout_ns = timeout_ns;
		q.slot_timeout_ns = timeout_ns * 4 + delay_ns + reorder_ns;
		q.bounce = bounce + base * opt.max_io_bytes;
		q.bounce_map = dma_region{(uint64_t)(uintptr_t)bounce, bounce_bytes, 12, 0, nullptr};
		q.prp_lists = prps + base * per_slot_prp;
		q.prp_map = dma_region{(uint64_t)(uintptr_t)prps, prp_bytes, 12, 0, nullptr};
		uint32_t* seq = words + base * 4;
		q.seq = seq;
		q.ready = seq + depth;
		q.done = seq + 2 * depth;
		q.tick = seq + 3 * depth;
		uint32_t* hs = w.data() + base * 4;
		for (uint32_t s = 0; s < depth; s++) {
			hs[s] = s;                      // seq: ticket s may take slot s
			hs[depth + s] = s - depth;      // ready: nothing published
			hs[2 * depth + s] = 0;          // done
			hs[3 * depth + s] = s - depth;  // tick: nothing in flight
		}
		hw_queue h;
		h.sq = q.sq;
		h.cq = q.cq;
		h.sq_db = q.sq_db;
		h.cq_db = q.cq_db;
		h.qid = q.qid;
		hq.push_back(std::move(h));
	}
	mem.to_device(words, w.data(), w.size() * sizeof(uint32_t));
	mem.to_device(dqueues, img.data(), sizeof(queue) * nq);
	queue_set set;
	set.queues = dqueues;
	set.nqueues = nq;
	set.spread = 4;
	mem.to_device(dset, &set, sizeof set);
}

emu_controller::impl::~impl()
{
	stop.store(true);
	for (auto& t : threads)
		if (t.joinable()) t.join();
	threads.clear();
	release();
	write_trace();
}

// Rows from the first to the last bucket with any command: time (ms since
// the controller started), fetched, completed, and the implied IOPS.
void emu_controller::impl::write_trace() const
{
	if (!trace_fetched) return;
	size_t first = trace_buckets, last = 0;
	for (size_t b = 0; b < trace_buckets; b++) {
		if (trace_fetched[b].load(std::memory_order_relaxed) || trace_done[b].load(std::memory_order_relaxed)) {
			first = std::min(first, b);
			last = b;
		}
	}
	FILE* f = fopen(opt.trace_path.c_str(), "w");
	if (!f) {
		fprintf(stderr, "bam emu: cannot write the trace to %s: %s (BAM_EMU_TRACE)\n", opt.trace_path.c_str(),
			strerror(errno));
		return;
	}
	fprintf(f, "ms,fetched,completed,completed_iops\n");
	for (size_t b = first; b <= last && first < trace_buckets; b++) {
		const uint32_t done = trace_done[b].load(std::memory_order_relaxed);
		fprintf(f, "%.1f,%u,%u,%.0f\n", (double)(b * trace_bucket_ns) / 1e6, trace_fetched[b].load(std::memory_order_relaxed),
			done, done * (1e9 / (double)trace_bucket_ns));
	}
	if (fclose(f) != 0)
		fprintf(stderr, "bam emu: writing the trace to %s failed: %s\n", opt.trace_path.c_str(), strerror(errno));
}

void emu_controller::impl::release()
{
	mem.free_device(dset);
	mem.free_device(words);
	mem.free_device(dqueues);
	mem.free_shared(bounce);
	mem.free_shared(prps);
	mem.free_shared(cqs);
	mem.free_shared(sqs);
	mem.free_shared(dbs);
	dset = nullptr;
	words = nullptr;
	dqueues = nullptr;
	bounce = nullptr;
	prps = nullptr;
	cqs = nullptr;
	sqs = nullptr;
	dbs = nullptr;
	if (map) munmap(map, map_bytes);
	map = nullptr;
	if (fd >= 0) ::close(fd);
	fd = -1;
}

uint64_t emu_controller::impl::token_time_ns(uint64_t now)
{
	if (interval_ps == 0) return 0;
	int64_t now_ps = (int64_t)(now - start_ns) * 1000;
	int64_t old = next_token_ps.load(std::memory_order_relaxed), base;
	do {
		base = std::max(old, now_ps - burst_ps);
	} while (!next_token_ps.compare_exchange_weak(old, base + interval_ps, std::memory_order_relaxed));
	return start_ns + (uint64_t)(base / 1000);
}

// PRP walk (memory page 4 KiB). Every data page must lie in the bounce area
// and every list in the PRP list area, as an IOMMU would enforce.
uint16_t emu_controller::impl::gather(const bam_nvme_sqe& c, uint32_t bytes,
				      std::vector<std::pair<uint8_t*, uint32_t>>& segs)
{
	const uint64_t pg = 4096;
	uint64_t lo = (uint64_t)(uintptr_t)bounce, hi = lo + bounce_bytes;
	auto ok = [&](uint64_t a, uint64_t n) { return a >= lo && a < hi && n <= hi - a; };
	if (c.prp1 & 3) return ST_PRP_OFFSET;
	uint64_t first = std::min<uint64_t>(bytes, pg - (c.prp1 & (pg - 1)));
	if (!ok(c.prp1, first)) return ST_XFER;
	segs.emplace_back((uint8_t*)(uintptr_t)c.prp1, (uint32_t)first);
	uint64_t rest = bytes - first;
	if (rest == 0) return ST_OK;
	if (rest <= pg) {
		if (c.prp2 & (pg - 1)) return ST_PRP_OFFSET;
		if (!ok(c.prp2, rest)) return ST_XFER;
		segs.emplace_back((uint8_t*)(uintptr_t)c.prp2, (uint32_t)rest);
		return ST_OK;
	}
	uint64_t n = (rest + pg - 1) / pg;
	uint64_t llo = (uint64_t)(uintptr_t)prps, lhi = llo + prp_bytes;
	// Lists are not chained: a slot's list is contiguous in the PRP area.
	if (c.prp2 & 7) return ST_PRP_OFFSET;
	if (c.prp2 < llo || c.prp2 >= lhi || n * 8 > lhi - c.prp2) return ST_XFER;
	const uint64_t* list = (const uint64_t*)(uintptr_t)c.prp2;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t a = list[k];
		uint64_t len = std::min(pg, rest);
		if (a & (pg - 1)) return ST_PRP_OFFSET;
		if (!ok(a, len)) return ST_XFER;
		segs.emplace_back((uint8_t*)(uintptr_t)a, (uint32_t)len);
		rest -= len;
	}
	return ST_OK;
}

uint16_t emu_controller::impl::execute(const bam_nvme_sqe& c, bool inject_error, thread_stats& st)
{
	if (c.flags != 0) return ST_INVALID_FIELD; // fused commands and SGLs unsupported
	if (c.opcode == BAM_NVME_CMD_FLUSH) {
		if (c.nsid != 1 && c.nsid != 0xffffffffu) return ST_INVALID_NS;
		st.flushes.fetch_add(1, std::memory_order_relaxed);
		return ST_OK;
	}
	if (c.opcode != BAM_NVME_CMD_READ && c.opcode != BAM_NVME_CMD_WRITE) return ST_INVALID_OPCODE;
	if (c.nsid != 1) return ST_INVALID_NS;
	uint64_t slba = (uint64_t)c.cdw10 | ((uint64_t)c.cdw11 << 32);
	uint64_t nlb = (uint64_t)(c.cdw12 & 0xffffu) + 1;
	if (slba >= ns_blocks || nlb > ns_blocks - slba) return ST_LBA_RANGE;
	uint64_t bytes64 = nlb << lba_shift;
	if (bytes64 > opt.max_io_bytes) return ST_INVALID_FIELD; // beyond MDTS
	uint32_t bytes = (uint32_t)bytes64;
	thread_local std::vector<std::pair<uint8_t*, uint32_t>> segs;
	segs.clear();
	if (uint16_t st = gather(c, bytes, segs)) return st;
	bool rd = c.opcode == BAM_NVME_CMD_READ;
	if (inject_error) {
		// Poison what a careless caller might use anyway.
		if (rd)
			for (auto& s : segs) memset(s.first, 0xEE, s.second);
		return rd ? ST_READ_ERROR : ST_WRITE_FAULT;
	}
	if (!rd && !writable) return ST_WRITE_FAULT;
	uint64_t off = slba << lba_shift;
	for (auto& s : segs) {
		uint64_t in_file = off < file_bytes ? std::min<uint64_t>(s.second, file_bytes - off) : 0;
		if (rd) {
			if (in_file) memcpy(s.first, map + off, in_file);
			if (in_file < s.second) memset(s.first + in_file, 0, s.second - in_file);
		} else if (in_file) {
			memcpy(map + off, s.first, in_file); // bytes past the end of the file are dropped
		}
		off += s.second;
	}
	(rd ? st.reads : st.writes).fetch_add(1, std::memory_order_relaxed);
	st.bytes.fetch_add(bytes, std::memory_order_relaxed);
	return ST_OK;
}

void emu_controller::impl::fetch(hw_queue& q, uint32_t qi, const bam_nvme_sqe& c, uint64_t now, uint64_t& rng,
				 uint64_t& order, thread_stats& st,
				 std::priority_queue<pending, std::vector<pending>, later>& heap)
{
	bool io = c.opcode == BAM_NVME_CMD_READ || c.opcode == BAM_NVME_CMD_WRITE;
	bool hit = false;
	if (io && opt.fault != fault_kind::none && opt.fault_rate > 0) {
		double u = (double)(xorshift(rng) >> 11) * (1.0 / 9007199254740992.0);
		hit = u < opt.fault_rate;
	}
	uint16_t status = execute(c, hit && opt.fault == fault_kind::error, st);
	if (status != ST_OK && !(hit && opt.fault == fault_kind::error))
		st.invalid.fetch_add(1, std::memory_order_relaxed);
	if (io) trace(trace_fetched, now);
	uint64_t deadline = now + latency_ns;
	if (io) deadline = std::max(deadline, token_time_ns(now));
	if (hit) {
		switch (opt.fault) {
		case fault_kind::error: st.errors.fetch_add(1, std::memory_order_relaxed); break;
		case fault_kind::delay:
			deadline += delay_ns;
			st.delays.fetch_add(1, std::memory_order_relaxed);
			break;
		case fault_kind::reorder:
			deadline += reorder_ns; // completes after commands fetched later
			st.reorders.fetch_add(1, std::memory_order_relaxed);
			break;
		default: break;
		}
	}
	(void)q;
	heap.push(pending{deadline, now, order++, qi, c.cid, status});
}

bool emu_controller::impl::post(hw_queue& q, const pending& p, thread_stats& st)
{
	uint32_t next = (q.cq_tail + 1) & mask;
	if (next == __atomic_load_n(q.cq_db, __ATOMIC_ACQUIRE)) return false; // CQ full
	bam_nvme_cqe* e = &q.cq[q.cq_tail];
	uint32_t* w = (uint32_t*)e;
	__atomic_store_n(&w[0], 0u, __ATOMIC_RELAXED);
	__atomic_store_n(&w[1], 0u, __ATOMIC_RELAXED);
	__atomic_store_n(&w[2], q.head | (q.qid << 16), __ATOMIC_RELAXED);
	uint32_t dw3 = (uint32_t)p.cid | ((uint32_t)((p.status << 1) | q.phase) << 16);
	__atomic_store_n(&w[3], dw3, __ATOMIC_RELEASE);
	q.cq_tail = next;
	if (next == 0) q.phase ^= 1;
	st.commands.fetch_add(1, std::memory_order_relaxed);
	const uint64_t posted = clock_ns();
	trace(trace_done, posted);
	uint64_t lat = posted - p.fetched;
	if (lat > st.max_lat_ns.load(std::memory_order_relaxed)) st.max_lat_ns.store(lat, std::memory_order_relaxed);
	st.sum_lat_ns.fetch_add(lat, std::memory_order_relaxed);
	return true;
}

void emu_controller::impl::run(int tid)
{
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	thread_stats& st = *tstats[tid];
	std::vector<uint32_t> mine;
	for (uint32_t i = (uint32_t)tid; i < nq; i += (uint32_t)opt.threads) mine.push_back(i);
	std::priority_queue<pending, std::vector<pending>, later> heap;
	uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(tid + 1);
	uint64_t order = 0;
	uint32_t idle = 0;
	size_t backlogged = 0;
	uint64_t busy_acc = 0, t_start = clock_ns(), t_pub = t_start;
	while (!stop.load(std::memory_order_relaxed)) {
		bool busy = false;
		uint64_t now = clock_ns(), t_iter = now;
		for (uint32_t qi : mine) {
			hw_queue& q = hq[qi];
			uint32_t tail = __atomic_load_n(q.sq_db, __ATOMIC_ACQUIRE);
			if (tail >= depth) { // invalid doorbell write: ignore it
				if (tail != q.bad_db) st.protocol.fetch_add(1, std::memory_order_relaxed);
				q.bad_db = tail;
				continue;
			}
			for (int budget = 256; q.head != tail && budget > 0; budget--) {
				bam_nvme_sqe c;
				memcpy(&c, (const void*)&q.sq[q.head], sizeof c);
				q.head = (q.head + 1) & mask;
				fetch(q, qi, c, now, rng, order, st, heap);
				busy = true;
			}
		}
		if (backlogged) {
			backlogged = 0;
			for (uint32_t qi : mine) {
				hw_queue& q = hq[qi];
				while (!q.backlog.empty() && post(q, q.backlog.front(), st)) q.backlog.pop_front();
				backlogged += q.backlog.size();
			}
		}
		now = clock_ns();
		while (!heap.empty() && heap.top().deadline <= now) {
			const pending& p = heap.top();
			hw_queue& q = hq[p.q];
			if (!q.backlog.empty() || !post(q, p, st)) {
				q.backlog.push_back(p);
				backlogged++;
				st.cq_full.fetch_add(1, std::memory_order_relaxed);
			}
			heap.pop();
			busy = true;
		}
		if (busy) {
			idle = 0;
			uint64_t e = clock_ns();
			busy_acc += e - t_iter;
			if (e - t_pub > 10000000) { // publish every 10 ms
				st.busy_ns.store(busy_acc, std::memory_order_relaxed);
				st.run_ns.store(e - t_start, std::memory_order_relaxed);
				t_pub = e;
			}
			continue;
		}
		// Idle: spin while work is near, then yield, then nap.
		++idle;
		if (idle < 64 || (!heap.empty() && heap.top().deadline < now + 20000)) {
			cpu_relax();
		} else if (idle < 4096 || !heap.empty() || backlogged) {
			sched_yield();
		} else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, nullptr);
		}
	}
	st.busy_ns.store(busy_acc, std::memory_order_relaxed);
	st.run_ns.store(clock_ns() - t_start, std::memory_order_relaxed);
}

emu_controller::emu_controller(const std::string& path, const emu_options& opt) : p_(new impl(path, opt)) {}
emu_controller::~emu_controller() = default;

queue_set* emu_controller::device_queues() const { return p_->dset; }
int emu_controller::queues() const { return (int)p_->nq; }
int emu_controller::queue_depth() const { return (int)p_->depth; }
uint64_t emu_controller::capacity_bytes() const { return p_->ns_blocks << p_->lba_shift; }
bool emu_controller::on_gpu() const { return p_->mem.gpu; }
const emu_options& emu_controller::options() const { return p_->opt; }

emu_stats emu_controller::stats() const
{
	emu_stats s;
	uint64_t max_ns = 0, sum_ns = 0, busy_ns = 0, run_ns = 0;
	for (auto& t : p_->tstats) {
		sum_ns += t->sum_lat_ns.load();
		busy_ns += t->busy_ns.load();
		run_ns += t->run_ns.load();
		s.commands += t->commands.load();
		s.reads += t->reads.load();
		s.writes += t->writes.load();
		s.flushes += t->flushes.load();
		s.bytes += t->bytes.load();
		s.errors_injected += t->errors.load();
		s.delays_injected += t->delays.load();
		s.reorders_injected += t->reorders.load();
		s.invalid += t->invalid.load();
		s.protocol_errors += t->protocol.load();
		s.cq_full_waits += t->cq_full.load();
		max_ns = std::max(max_ns, t->max_lat_ns.load());
	}
	s.max_latency_us = (double)max_ns / 1000.0;
	s.avg_latency_us = s.commands ? (double)sum_ns / 1000.0 / (double)s.commands : 0;
	s.busy = run_ns ? (double)busy_ns / (double)run_ns : 0;
	s.elapsed_s = (double)(clock_ns() - p_->start_ns) / 1e9;
	return s;
}

// A host copy of every queue's counters and profile (they live in memory
// the GPU writes).
static std::vector<queue> queue_images(emu_controller::impl& p)
{
	std::vector<queue> img(p.nq);
	p.mem.from_device(img.data(), p.dqueues, sizeof(queue) * p.nq);
	return img;
}

queue_profile emu_controller::queue_profile_totals() const
{
	const std::vector<queue> img = queue_images(*p_);
	queue_profile t;
	memset(&t, 0, sizeof t);
	for (auto& q : img) {
		t.ops += q.prof.ops;
		t.slot_ns += q.prof.slot_ns;
		t.ring_ns += q.prof.ring_ns;
		t.wait_ns += q.prof.wait_ns;
		t.copy_ns += q.prof.copy_ns;
		t.drains += q.prof.drains;
		t.drained += q.prof.drained;
		t.drain_ns += q.prof.drain_ns;
	}
	return t;
}

queue_counters emu_controller::queue_totals() const
{
	const std::vector<queue> img = queue_images(*p_);
	queue_counters t;
	memset(&t, 0, sizeof t);
	for (auto& q : img) {
		t.submitted += q.ctr.submitted;
		t.doorbells += q.ctr.doorbells;
		t.cq_doorbells += q.ctr.cq_doorbells;
		t.duplicates += q.ctr.duplicates;
		t.bad_cids += q.ctr.bad_cids;
		t.timeouts += q.ctr.timeouts;
		t.late += q.ctr.late;
		t.failed += q.ctr.failed;
	}
	return t;
}

} // namespace nvme
BAM_NAMESPACE_END // namespace bam
