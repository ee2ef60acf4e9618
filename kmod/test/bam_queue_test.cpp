// SPDX-License-Identifier: MIT
//
// In-guest test of the runtime's NVMe queue code (runtime/cuda/include/
// bam/nvme/queue.cuh, compiled for the host) against a real NVMe
// controller model, QEMU's, through bam_nvme.ko and kmod/lib.
//
//   bam_queue_test DEV            data through the queues, errors
//   bam_queue_test timeout DEV    the controller disabled under the queues
//
// kmod/lib brings the controller up and creates I/O queue pairs whose
// rings sit in host memory DMA-mapped by the module; bam/nvme/direct.h
// builds the queue_set from them, exactly as the `nvme` backend does for
// the GPU, with the bus-address tables of the mapped buffers as the PRP
// source. Then CPU threads stand in for GPU threads: many of them share
// each queue, reading and writing lines of 512 B .. 64 KiB (PRP1 only,
// PRP2, PRP lists) at dword-aligned buffer offsets, on DIRECT queues (the
// controller DMAs into the callers' buffers) and BOUNCE queues (per-slot
// staging buffers, what the backend uses without GPU peer-to-peer). Every
// byte read is compared with what was written, data written by the queues
// is read back by other queues and by the library's own synchronous path,
// and the bytes around each DIRECT buffer must stay untouched.
//
// Failure cases: reads past the end of the namespace come back as the
// controller's "LBA out of range" status on every queue, promptly; a buffer
// outside the DMA map and a misaligned size are refused without a hang and
// the queues keep working.
//
// Prints "BAMTEST: PASS|FAIL queue.NAME" lines like bam_nvme_test; exit
// status 1 if any check failed.
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bam_nvme_host.h"
#include "bamtest.h"

#include <bam/nvme/direct.h>

namespace {

using bam::nvme::queue;
using bam::nvme::queue_counters;

using bamtest::check;
using bamtest::failures;
using bamtest::fill;
using bamtest::info;

// What direct.h needs to know of a kmod/lib DMA buffer: its range and
// per-page bus addresses.
bam::nvme::dma_region dma_region_of(const struct bam_nvme_dma& m)
{
	bam::nvme::dma_region r{};
	r.va = (uint64_t)(uintptr_t)m.vaddr;
	r.bytes = m.size;
	r.page_shift = (uint32_t)__builtin_ctz(m.page_size);
	r.bus = m.bus;
	return r;
}

[[noreturn]] void die(const char* what, int err)
{
	printf("BAMTEST: FAIL queue.%s: %s [%s]\n", what, bam_nvme_strerror(err), bam_nvme_errmsg());
	fflush(stdout);
	exit(1);
}

double secs_since(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t rng(uint64_t& s)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

constexpr uint8_t CANARY = 0xa5;
constexpr uint32_t MAX_IO = 64 << 10;          // max_io_bytes of the queues
constexpr uint32_t GUARD = 4096;               // canary bytes each side of a DIRECT buffer
constexpr uint32_t THREAD_BUF = MAX_IO + 8192 + 2 * GUARD; // per-thread data area
constexpr int THREADS = 16;
constexpr uint64_t KNOWN_BYTES = 8ull << 20;   // written first through kmod/lib
constexpr uint64_t KNOWN_SEED = 0x5eed0001;
constexpr uint64_t WRITE_BASE = 16ull << 20;   // then per-thread regions for queue writes
constexpr uint32_t SLOT_BYTES = MAX_IO;
constexpr int SLOTS = 4;                        // per thread
constexpr uint64_t REGION = (uint64_t)SLOTS * SLOT_BYTES;

struct qdef {
	uint32_t depth;
	uint32_t mode;
};
// Few deep queues and shallow ones (slot reuse, ring wrap, phase flips
// many times over), both data modes; four threads per queue.
const qdef QUEUES[] = {
	{64, bam::nvme::QUEUE_MODE_DIRECT},
	{16, bam::nvme::QUEUE_MODE_DIRECT},
	{64, bam::nvme::QUEUE_MODE_BOUNCE},
	{8, bam::nvme::QUEUE_MODE_BOUNCE},
};
constexpr int NQ = sizeof(QUEUES) / sizeof(QUEUES[0]);

struct ctx {
	struct bam_nvme_dev* dev = nullptr;
	const struct bam_nvme_ctrl_info* ci = nullptr;
	uint32_t lba = 512;
	uint64_t dev_bytes = 0;
	struct bam_nvme_dma rings[NQ];
	uint16_t qids[NQ];
	struct bam_nvme_dma data, prp, bounce;
	std::unique_ptr<bam::nvme::host_queue_set> qs;
	std::vector<uint8_t> shadow; // expected contents of the write regions
	std::atomic<uint64_t> ops[NQ];
	std::atomic<uint64_t> bytes{0};
};

struct worker {
	ctx* c;
	int idx;
	bool ok = true;
	int qi = -1;
	char why[300] = "";
	uint64_t n = 0;

	uint8_t* area() const { return (uint8_t*)c->data.vaddr + (size_t)idx * THREAD_BUF; }

	bool bad(const char* fmt, ...) __attribute__((format(printf, 2, 3)))
	{
		if (ok) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(why, sizeof why, fmt, ap);
			va_end(ap);
		}
		ok = false;
		return false;
	}

	// One queue op through queue_set::pick() (this thread's queue), with
	// the bytes around the buffer checked for stray DMA.
	bool io(uint8_t op, uint64_t off, uint32_t len, uint32_t boff, const void* src, const void* want)
	{
		uint8_t* a = area();
		uint8_t* buf = a + GUARD + boff;
		memset(a, CANARY, THREAD_BUF);
		if (op == BAM_NVME_CMD_WRITE) memcpy(buf, src, len);
		queue& q = c->qs->set().pick();
		qi = (int)(&q - &c->qs->at(0));
		int st = q.io(op, off, len, buf);
		c->ops[qi]++;
		c->bytes += len;
		n++;
		if (st)
			return bad("%s of %u bytes at %" PRIu64 " (buffer +%u) on qid %u: status %#x (%s)",
				   op == BAM_NVME_CMD_READ ? "read" : "write", len, off, boff, q.qid, st,
				   bam::nvme::status_str(st));
		if (op == BAM_NVME_CMD_READ) {
			long d = bamtest::first_diff(buf, want, len);
			if (d >= 0)
				return bad("read of %u bytes at %" PRIu64 " (buffer +%u) on qid %u: byte %ld differs "
					   "(got %#x want %#x)",
					   len, off, boff, q.qid, d, buf[d], ((const uint8_t*)want)[d]);
		}
		for (uint32_t i = 0; i < THREAD_BUF; i++) {
			if (a + i == buf) {
				i += len - 1;
				continue;
			}
			if (a[i] != CANARY)
				return bad("%s of %u bytes at %" PRIu64 " (buffer +%u) on qid %u: byte %d outside the "
					   "buffer changed",
					   op == BAM_NVME_CMD_READ ? "read" : "write", len, off, boff, q.qid,
					   (int)(i - GUARD - boff));
		}
		return true;
	}
};

const uint32_t SIZES[] = {512, 1024, 4096, 4608, 8192, 12288, 16384, 32768, 65536};
const uint32_t BOFFS[] = {0, 512, 1028, 3584, 4096};

// Reads of the known region at random lines, sizes and buffer offsets.
void phase_read(worker& w, int n)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * (w.idx + 1);
	std::vector<uint8_t> want(MAX_IO);
	for (int i = 0; i < n && w.ok; i++) {
		uint32_t len = SIZES[rng(s) % (sizeof SIZES / sizeof SIZES[0])];
		uint32_t boff = BOFFS[rng(s) % (sizeof BOFFS / sizeof BOFFS[0])];
		uint64_t off = rng(s) % ((KNOWN_BYTES - len) / w.c->lba + 1) * w.c->lba;
		fill(want.data(), off, len, KNOWN_SEED);
		w.io(BAM_NVME_CMD_READ, off, len, boff, nullptr, want.data());
	}
}

// Writes of lines into this thread's region, read back at once.
void phase_write(worker& w, int rounds)
{
	uint64_t s = 0xabcdef12345ull * (w.idx + 7);
	uint64_t base = WRITE_BASE + (uint64_t)w.idx * REGION;
	uint8_t* shadow = w.c->shadow.data() + (size_t)w.idx * REGION;
	for (int r = 0; r < rounds && w.ok; r++) {
		for (int k = 0; k < SLOTS && w.ok; k++) {
			uint32_t len = SIZES[rng(s) % (sizeof SIZES / sizeof SIZES[0])];
			uint32_t boff = BOFFS[rng(s) % (sizeof BOFFS / sizeof BOFFS[0])];
			uint64_t in = rng(s) % ((SLOT_BYTES - len) / w.c->lba + 1) * w.c->lba;
			uint64_t off = base + (uint64_t)k * SLOT_BYTES + in;
			uint8_t* sh = shadow + (uint64_t)k * SLOT_BYTES + in;
			fill(sh, off, len, rng(s));
			if (!w.io(BAM_NVME_CMD_WRITE, off, len, boff, sh, nullptr)) break;
			w.io(BAM_NVME_CMD_READ, off, len, (boff + 512) % 4608, nullptr, sh);
		}
	}
}

// Another thread's region (so through another queue), whole slots.
void phase_cross(worker& w)
{
	int other = (w.idx + 1) % THREADS;
	uint64_t base = WRITE_BASE + (uint64_t)other * REGION;
	const uint8_t* shadow = w.c->shadow.data() + (size_t)other * REGION;
	for (int k = 0; k < SLOTS && w.ok; k++)
		w.io(BAM_NVME_CMD_READ, base + (uint64_t)k * SLOT_BYTES, SLOT_BYTES, 1028, nullptr,
		     shadow + (uint64_t)k * SLOT_BYTES);
}

template <class F>
bool run_threads(ctx& c, const char* name, F f)
{
	std::vector<worker> ws(THREADS);
	std::vector<std::thread> th;
	auto t0 = std::chrono::steady_clock::now();
	uint64_t b0 = c.bytes;
	for (int i = 0; i < THREADS; i++) {
		ws[i].c = &c;
		ws[i].idx = i;
		th.emplace_back([&ws, i, &f] { f(ws[i]); });
	}
	uint64_t n = 0;
	int bad = 0;
	const char* why = "";
	for (int i = 0; i < THREADS; i++) {
		th[i].join();
		n += ws[i].n;
		if (!ws[i].ok) {
			bad++;
			why = ws[i].why;
		}
	}
	double dt = secs_since(t0);
	info("%s: %d threads, %" PRIu64 " commands, %.1f MB in %.2f s", name, THREADS, n, (c.bytes - b0) / 1e6,
	     dt);
	// why points into ws, alive until here
	return check(bad == 0, name, "%d of %d threads failed; one: %s", bad, THREADS, why);
}

// Write the known region through the library's own synchronous path.
bool write_known(ctx& c, struct bam_nvme_qp* qp)
{
	struct bam_nvme_dma b;
	uint32_t chunk = c.ci->max_transfer < (1u << 20) ? c.ci->max_transfer : (1u << 20);
	int ret = bam_nvme_dma_alloc(c.dev, chunk, &b);
	if (ret) return check(false, "known_data_written", "%s", bam_nvme_errmsg());
	for (uint64_t off = 0; off < KNOWN_BYTES && !ret; off += chunk) {
		fill(b.vaddr, off, chunk, KNOWN_SEED);
		ret = bam_nvme_write(qp, off / c.lba, chunk / c.lba, &b, 0);
	}
	bam_nvme_dma_free(c.dev, &b);
	return check(!ret, "known_data_written", "%s", bam_nvme_errmsg());
}

// The write regions as the library reads them must equal the shadow.
bool verify_with_lib(ctx& c, struct bam_nvme_qp* qp)
{
	struct bam_nvme_dma b;
	uint64_t total = (uint64_t)THREADS * REGION;
	uint32_t chunk = (uint32_t)REGION;
	int ret = bam_nvme_dma_alloc(c.dev, chunk, &b);
	long d = -1;
	uint64_t off = 0;
	for (; off < total && !ret && d < 0; off += chunk) {
		ret = bam_nvme_read(qp, (WRITE_BASE + off) / c.lba, chunk / c.lba, &b, 0);
		if (!ret) d = bamtest::first_diff(b.vaddr, c.shadow.data() + off, chunk);
	}
	bam_nvme_dma_free(c.dev, &b);
	return check(!ret && d < 0, "writes_seen_by_library", "ret %d (%s), byte %ld of chunk at %" PRIu64 " differs",
		     ret, bam_nvme_errmsg(), d, off);
}

queue_counters totals(ctx& c)
{
	queue_counters t{};
	for (uint32_t i = 0; i < c.qs->size(); i++) {
		const queue_counters& q = c.qs->at(i).ctr;
		t.submitted += q.submitted;
		t.doorbells += q.doorbells;
		t.cq_doorbells += q.cq_doorbells;
		t.duplicates += q.duplicates;
		t.bad_cids += q.bad_cids;
		t.timeouts += q.timeouts;
		t.late += q.late;
		t.failed += q.failed;
	}
	return t;
}

void failure_cases(ctx& c)
{
	uint8_t* buf = (uint8_t*)c.data.vaddr + GUARD;
	std::vector<uint8_t> want(8192);
	bool all = true;
	char why[300] = "";
	double worst = 0;

	// Past the end, and straddling it: the controller's status, by name.
	for (int i = 0; i < NQ; i++) {
		queue& q = c.qs->at(i);
		struct {
			uint64_t off;
			uint32_t len;
		} cases[] = {{c.dev_bytes, c.lba}, {c.dev_bytes - 2ull * c.lba, 8 * c.lba},
			     {c.dev_bytes + (1ull << 30), 4096}};
		for (auto& k : cases) {
			auto t0 = std::chrono::steady_clock::now();
			int st = q.io(BAM_NVME_CMD_READ, k.off, k.len, buf);
			double dt = secs_since(t0);
			worst = dt > worst ? dt : worst;
			if (BAM_NVME_SCT(st) != 0 || BAM_NVME_SC(st) != BAM_NVME_SC_LBA_RANGE ||
			    strcmp(bam::nvme::status_str(st), "LBA out of range")) {
				all = false;
				snprintf(why, sizeof why, "qid %u read at %" PRIu64 "+%u: status %#x (%s)", q.qid, k.off,
					 k.len, st, bam::nvme::status_str(st));
			}
		}
	}
	check(all && worst < 2.0, "read_past_end_lba_range", "%s; slowest %.2f s", why, worst);

	// A buffer the controller cannot reach (DIRECT) and a bad size: refused,
	// nothing hangs. The first passes its ticket through the ring as a FLUSH.
	{
		queue& q = c.qs->at(0);
		std::vector<uint8_t> stray(4096 + 64);
		uint8_t* p = stray.data() + (64 - ((uintptr_t)stray.data() & 63));
		auto t0 = std::chrono::steady_clock::now();
		int st1 = q.io(BAM_NVME_CMD_READ, 0, 4096, p);
		int st2 = q.io(BAM_NVME_CMD_READ, 0, 100, buf);
		int st3 = q.io(BAM_NVME_CMD_READ, 0, 4096, buf + 2);
		double dt = secs_since(t0);
		check(st1 == BAM_NVME_STATUS_BAD_ARGS && st2 == BAM_NVME_STATUS_BAD_ARGS &&
			      st3 == BAM_NVME_STATUS_BAD_ARGS && dt < 2.0,
		      "bad_args_refused", "statuses %#x %#x %#x in %.2f s", st1, st2, st3, dt);
	}

	// Every queue still works after its errors.
	all = true;
	for (int i = 0; i < NQ; i++) {
		queue& q = c.qs->at(i);
		for (int k = 0; k < 3; k++) {
			uint64_t off = (uint64_t)(i * 3 + k) * 8192;
			fill(want.data(), off, 8192, KNOWN_SEED);
			memset(buf, 0, 8192);
			int st = q.io(BAM_NVME_CMD_READ, off, 8192, buf);
			if (st || bamtest::first_diff(buf, want.data(), 8192) >= 0) {
				all = false;
				snprintf(why, sizeof why, "qid %u: status %#x", q.qid, st);
			}
		}
	}
	check(all, "queues_work_after_errors", "%s", why);
}

int run(const char* path)
{
	ctx c;
	struct bam_nvme_opts o = {};
	o.io_queues = 8;
	o.io_timeout_ms = 10000;
	int ret = bam_nvme_open(path, &o, &c.dev);
	if (ret) die("open", ret);
	c.ci = bam_nvme_info(c.dev);
	c.lba = c.ci->lba_size;
	c.dev_bytes = c.ci->nlbas * c.lba;
	for (auto& a : c.ops) a = 0;
	info("model '%s', %u-byte blocks x %" PRIu64 ", max transfer %u, %u I/O queues, MQES+1 %u", c.ci->model, c.lba,
	     (uint64_t)c.ci->nlbas, c.ci->max_transfer, c.ci->io_queues, c.ci->max_queue_depth);
	if (!check(c.ci->max_transfer >= MAX_IO && c.dev_bytes >= WRITE_BASE + THREADS * REGION &&
			   c.ci->io_queues >= NQ + 1,
		   "controller_fits", "max transfer %u, %" PRIu64 " bytes, %u queues", c.ci->max_transfer,
		   c.dev_bytes, c.ci->io_queues))
		return 1;

	struct bam_nvme_qp* qp;
	ret = bam_nvme_qp_create(c.dev, 0, &qp);
	if (ret) die("lib_qp_create", ret);
	if (!write_known(c, qp)) return 1;

	// Rings: SQ then CQ, each in its own page(s), bus-contiguous.
	bam::nvme::direct_setup s;
	s.nsid = c.ci->nsid;
	s.block_bytes = c.lba;
	s.max_io_bytes = MAX_IO;
	s.timeout_ms = 10000;
	s.flags = bam::nvme::QUEUE_FLAG_LIGHT_FENCE | bam::nvme::QUEUE_FLAG_CQ_BATCH;
	if (const char* f = getenv("QUEUE_TEST_FLAGS")) s.flags = (uint32_t)strtoul(f, nullptr, 0);
	bool ok = true;
	for (int i = 0; i < NQ; i++) {
		uint32_t d = QUEUES[i].depth;
		size_t sqb = ((size_t)d * 64 + 4095) & ~(size_t)4095, cqb = ((size_t)d * 16 + 4095) & ~(size_t)4095;
		ret = bam_nvme_dma_alloc(c.dev, sqb + cqb, &c.rings[i]);
		if (ret) die("ring_alloc", ret);
		int qid = bam_nvme_qid_alloc(c.dev);
		if (qid < 0) die("qid_alloc", qid);
		c.qids[i] = (uint16_t)qid;
		ret = bam_nvme_create_io_queues(c.dev, (uint16_t)qid, d, bam_nvme_dma_addr(&c.rings[i], 0),
						bam_nvme_dma_addr(&c.rings[i], sqb));
		if (ret) {
			ok = check(false, "create_io_queues", "qid %d depth %u: %s", qid, d, bam_nvme_errmsg());
			return 1;
		}
		bam::nvme::direct_queue_desc q;
		q.qid = (uint16_t)qid;
		q.depth = d;
		q.sq = (bam_nvme_sqe*)c.rings[i].vaddr;
		q.cq = (bam_nvme_cqe*)((uint8_t*)c.rings[i].vaddr + sqb);
		q.sq_db = (uint32_t*)bam_nvme_sq_doorbell(c.dev, (uint16_t)qid);
		q.cq_db = (uint32_t*)bam_nvme_cq_doorbell(c.dev, (uint16_t)qid);
		q.mode = QUEUES[i].mode;
		s.queues.push_back(q);
	}
	check(ok, "create_io_queues", "-");

	if ((ret = bam_nvme_dma_alloc(c.dev, (size_t)THREADS * THREAD_BUF, &c.data)) ||
	    (ret = bam_nvme_dma_alloc(c.dev, bam::nvme::direct_prp_bytes(s), &c.prp)) ||
	    (ret = bam_nvme_dma_alloc(c.dev, bam::nvme::direct_bounce_bytes(s), &c.bounce)))
		die("buffer_alloc", ret);
	s.data = dma_region_of(c.data);
	s.prp_lists = (uint64_t*)c.prp.vaddr;
	s.prp_map = dma_region_of(c.prp);
	s.bounce = (uint8_t*)c.bounce.vaddr;
	s.bounce_map = dma_region_of(c.bounce);
	try {
		c.qs.reset(new bam::nvme::host_queue_set(s));
	} catch (const std::exception& e) {
		check(false, "queue_set", "%s", e.what());
		return 1;
	}
	c.shadow.assign((size_t)THREADS * REGION, 0);
	info("%d queues (depths 64/16 DIRECT, 64/8 BOUNCE), %d threads, flags %#x", NQ, THREADS, s.flags);

	// The write regions start zeroed (shadow), whatever the disk held.
	{
		struct bam_nvme_dma z;
		ret = bam_nvme_dma_alloc(c.dev, REGION, &z);
		for (int t = 0; t < THREADS && !ret; t++)
			ret = bam_nvme_write(qp, (WRITE_BASE + (uint64_t)t * REGION) / c.lba, (uint32_t)(REGION / c.lba), &z,
					     0);
		bam_nvme_dma_free(c.dev, &z);
		if (ret) die("zero_regions", ret);
	}

	run_threads(c, "threads_read_known_data", [](worker& w) { phase_read(w, 40); });
	run_threads(c, "threads_write_read_back", [](worker& w) { phase_write(w, 3); });
	run_threads(c, "threads_read_other_queues_writes", [](worker& w) { phase_cross(w); });
	verify_with_lib(c, qp);
	{
		queue_counters t = totals(c);
		uint64_t ops = 0;
		for (auto& a : c.ops) ops += a;
		bool used = true;
		for (auto& a : c.ops) used &= a > 0;
		info("%" PRIu64 " commands on %d queues: %u SQ doorbells, %u CQ doorbells", ops, NQ, t.doorbells,
		     t.cq_doorbells);
		check(used && t.submitted == ops && t.duplicates == 0 && t.bad_cids == 0 && t.timeouts == 0 &&
			      t.late == 0 && t.failed == 0 && t.doorbells <= t.submitted,
		      "protocol_counters",
		      "ops %" PRIu64 " submitted %u dup %u badcid %u timeouts %u late %u failed %u (every queue used: %d)",
		      ops, t.submitted, t.duplicates, t.bad_cids, t.timeouts, t.late, t.failed, used);
	}
	failure_cases(c);

	// Tear down: queues deleted on the controller, mappings released.
	ok = true;
	for (int i = 0; i < NQ; i++) {
		ret = bam_nvme_delete_io_queues(c.dev, c.qids[i]);
		if (ret) ok = check(false, "delete_io_queues", "qid %u: %s", c.qids[i], bam_nvme_errmsg());
		bam_nvme_qid_free(c.dev, c.qids[i]);
		bam_nvme_dma_free(c.dev, &c.rings[i]);
	}
	if (ok) check(true, "delete_io_queues", "-");
	c.qs.reset();
	bam_nvme_dma_free(c.dev, &c.data);
	bam_nvme_dma_free(c.dev, &c.prp);
	bam_nvme_dma_free(c.dev, &c.bounce);
	bam_nvme_qp_destroy(qp);
	bam_nvme_close(c.dev);

	const long pinned = bamtest::pinned_pages(path);
	check(pinned == 0, "no_pins_after_close", "pinned_pages %ld", pinned);
	return failures != 0;
}

// The controller disabled under the queues: waiters give up after the
// queue's timeout with BAM_NVME_STATUS_TIMEOUT, threads waiting for slots
// that never come back mark the queue failed, later calls fail at once,
// and closing stays bounded.
int run_timeout(const char* path)
{
	struct bam_nvme_opts o = {};
	o.io_queues = 2;
	o.admin_timeout_ms = 300;
	o.io_timeout_ms = 300;
	struct bam_nvme_dev* dev;
	int ret = bam_nvme_open(path, &o, &dev);
	if (ret) die("timeout_open", ret);
	const struct bam_nvme_ctrl_info* ci = bam_nvme_info(dev);
	struct bam_nvme_dma ring, data, prp;
	const uint32_t depth = 8;
	if ((ret = bam_nvme_dma_alloc(dev, 8192, &ring)) || (ret = bam_nvme_dma_alloc(dev, 1 << 20, &data)) ||
	    (ret = bam_nvme_dma_alloc(dev, 4096, &prp)))
		die("timeout_alloc", ret);
	int qid = bam_nvme_qid_alloc(dev);
	if (qid < 0) die("timeout_qid", qid);
	ret = bam_nvme_create_io_queues(dev, (uint16_t)qid, depth, bam_nvme_dma_addr(&ring, 0),
					bam_nvme_dma_addr(&ring, 4096));
	if (ret) die("timeout_create", ret);
	bam::nvme::direct_setup s;
	s.nsid = ci->nsid;
	s.block_bytes = ci->lba_size;
	s.max_io_bytes = MAX_IO;
	s.timeout_ms = 300;
	s.data = dma_region_of(data);
	s.prp_lists = (uint64_t*)prp.vaddr;
	s.prp_map = dma_region_of(prp);
	bam::nvme::direct_queue_desc d;
	d.qid = (uint16_t)qid;
	d.depth = depth;
	d.sq = (bam_nvme_sqe*)ring.vaddr;
	d.cq = (bam_nvme_cqe*)((uint8_t*)ring.vaddr + 4096);
	d.sq_db = (uint32_t*)bam_nvme_sq_doorbell(dev, (uint16_t)qid);
	d.cq_db = (uint32_t*)bam_nvme_cq_doorbell(dev, (uint16_t)qid);
	s.queues.push_back(d);
	bam::nvme::host_queue_set qs(s);
	queue& q = qs.at(0);
	uint8_t* buf = (uint8_t*)data.vaddr;
	check(q.io(BAM_NVME_CMD_READ, 0, 4096, buf) == 0, "timeout_setup_read", "-");

	volatile uint32_t* bar = (volatile uint32_t*)bam_nvme_bar(dev);
	bar[BAM_NVME_REG_CC / 4] &= ~BAM_NVME_CC_EN;
	while (bar[BAM_NVME_REG_CSTS / 4] & BAM_NVME_CSTS_RDY) usleep(1000);

	auto t0 = std::chrono::steady_clock::now();
	int st = q.io(BAM_NVME_CMD_READ, 0, 4096, buf);
	double dt = secs_since(t0);
	check(st == BAM_NVME_STATUS_TIMEOUT && dt < 3 && q.ctr.timeouts == 1 &&
		      !strcmp(bam::nvme::status_str(st), "timed out waiting for the completion"),
	      "timeout_status", "status %#x (%s) after %.2f s, %u timeouts", st, bam::nvme::status_str(st), dt,
	      q.ctr.timeouts);

	// Twice the depth of threads: slots of abandoned commands never come back.
	std::atomic<int> other{0};
	std::vector<std::thread> th;
	t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < 2 * (int)depth; i++)
		th.emplace_back([&, i] {
			int r = q.io(BAM_NVME_CMD_READ, 0, 4096, buf + (size_t)(i + 1) * 8192);
			if (r != BAM_NVME_STATUS_TIMEOUT && r != BAM_NVME_STATUS_QUEUE_FAILED) other++;
		});
	for (auto& t : th) t.join();
	dt = secs_since(t0);
	check(other == 0 && q.ctr.failed == 1 && dt < 10, "timeout_threads_bounded",
	      "%d other statuses, failed %u, %.2f s", other.load(), q.ctr.failed, dt);
	t0 = std::chrono::steady_clock::now();
	st = q.io(BAM_NVME_CMD_READ, 0, 4096, buf);
	dt = secs_since(t0);
	check(st == BAM_NVME_STATUS_QUEUE_FAILED && dt < 0.1, "timeout_failed_queue_fails_fast",
	      "status %#x after %.3f s", st, dt);

	t0 = std::chrono::steady_clock::now();
	bam_nvme_delete_io_queues(dev, (uint16_t)qid); // times out: the controller is off
	bam_nvme_qid_free(dev, (uint16_t)qid);
	bam_nvme_dma_free(dev, &ring);
	bam_nvme_dma_free(dev, &data);
	bam_nvme_dma_free(dev, &prp);
	bam_nvme_close(dev);
	dt = secs_since(t0);
	check(dt < 5, "timeout_close_bounded", "%.2f s", dt);
	return failures != 0;
}

} // namespace

int main(int argc, char** argv)
{
	bamtest::group = "queue";
	if (argc == 3 && !strcmp(argv[1], "timeout")) return run_timeout(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: %s [timeout] /dev/bam_nvmeN\n", argv[0]);
		return 2;
	}
	return run(argv[1]);
}
