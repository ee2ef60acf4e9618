// CPU stress tests of the NVMe queue protocol (bam/nvme/queue.cuh) against
// the software controller (emu_controller), with std::threads standing in
// for GPU threads. No GPU needed.
//
//   make -f nvme.mk test-queue-cpu            # all tests
//   build/queue_test random_reads wraparound  # some, by name
#include <bam/nvme/emu.h>
#include <bam/nvme/queue.cuh>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace bam::nvme;

namespace {

int g_failures = 0;

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		if (!(cond)) {                                                    \
			std::fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			std::fprintf(stderr, __VA_ARGS__);                        \
			std::fprintf(stderr, "\n");                               \
			g_failures++;                                             \
			return;                                                   \
		}                                                                 \
	} while (0)

double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

// Content of the test file: the 8-byte word at offset o is mix(o).
void expected(uint64_t off, uint32_t bytes, std::vector<uint64_t>& out)
{
	out.resize(bytes / 8);
	for (uint32_t i = 0; i < bytes / 8; i++) out[i] = mix(off + 8ull * i);
}

struct temp_file {
	std::string path;
	explicit temp_file(uint64_t bytes)
	{
		const char* dir = getenv("TMPDIR");
		path = std::string(dir && *dir ? dir : "/tmp") + "/bam_queue_test_XXXXXX";
		int fd = mkstemp(&path[0]);
		if (fd < 0) {
			perror("mkstemp");
			exit(2);
		}
		std::vector<uint64_t> buf(1 << 16);
		for (uint64_t off = 0; off < bytes; off += buf.size() * 8) {
			for (size_t i = 0; i < buf.size(); i++) buf[i] = mix(off + 8 * i);
			size_t n = std::min<uint64_t>(bytes - off, buf.size() * 8);
			if (pwrite(fd, buf.data(), n, (off_t)off) != (ssize_t)n) {
				perror("pwrite");
				exit(2);
			}
		}
		close(fd);
	}
	~temp_file() { unlink(path.c_str()); }
};

uint32_t g_flags = emu_options().queue_flags; // queue flags under test (QUEUE_TEST_FLAGS)

emu_options base_opts()
{
	emu_options o;
	o.queue_flags = g_flags;
	o.host_memory = true;
	o.threads = 2;
	o.queues = 4;
	o.queue_depth = 64;
	o.max_io_bytes = 65536;
	o.timeout_ms = 20000;
	return o;
}

// Runs fn(thread index) on n threads.
void parallel(int n, const std::function<void(int)>& fn)
{
	std::vector<std::thread> ts;
	for (int i = 0; i < n; i++) ts.emplace_back(fn, i);
	for (auto& t : ts) t.join();
}

// Random reads of 512 B .. 64 KiB lines, verified against the file.
void test_random_reads()
{
	const uint64_t size = 16ull << 20;
	temp_file f(size);
	emu_controller c(f.path, base_opts());
	const queue_set* qs = c.device_queues();
	const int nt = 12, per = 1500;
	std::atomic<int> bad{0}, errs{0};
	parallel(nt, [&](int id) {
		uint64_t rng = 12345 + id;
		std::vector<uint64_t> buf(65536 / 8), want;
		for (int i = 0; i < per; i++) {
			uint32_t line = 512u << (mix(rng++) % 8); // 512 .. 64 KiB
			uint64_t off = (mix(rng++) % (size / line)) * line;
			int st = qs->read(off, line, buf.data());
			if (st) {
				errs++;
				continue;
			}
			expected(off, line, want);
			if (memcmp(buf.data(), want.data(), line)) bad++;
		}
	});
	CHECK(errs == 0, "%d reads failed", errs.load());
	CHECK(bad == 0, "%d reads returned wrong data", bad.load());
	emu_stats s = c.stats();
	queue_counters q = c.queue_totals();
	CHECK(s.commands == (uint64_t)nt * per, "controller completed %llu of %d", (unsigned long long)s.commands, nt * per);
	CHECK(q.submitted == (uint32_t)nt * per, "submitted %u", q.submitted);
	CHECK(q.duplicates == 0 && q.bad_cids == 0 && q.timeouts == 0, "dup %u bad %u timeouts %u", q.duplicates,
	      q.bad_cids, q.timeouts);
	std::printf("  %d reads, %u SQ doorbells (%.1f cmds/doorbell), %u CQ doorbells\n", nt * per, q.doorbells,
		    (double)q.submitted / q.doorbells, q.cq_doorbells);
}

// Each thread owns a disjoint range: write lines, read them back, and the
// file holds them after the controller is gone.
void test_write_read()
{
	const uint64_t size = 8ull << 20;
	temp_file f(size);
	const int nt = 8;
	const uint32_t line = 4096;
	const uint64_t span = size / nt;
	{
		emu_controller c(f.path, base_opts());
		const queue_set* qs = c.device_queues();
		std::atomic<int> bad{0}, errs{0};
		parallel(nt, [&](int id) {
			std::vector<uint64_t> buf(line / 8), back(line / 8);
			for (uint64_t off = id * span; off < (id + 1) * span; off += line) {
				for (size_t i = 0; i < buf.size(); i++) buf[i] = ~mix(off + 8 * i);
				if (qs->write(off, line, buf.data())) errs++;
			}
			for (uint64_t off = id * span; off < (id + 1) * span; off += line) {
				if (qs->read(off, line, back.data())) errs++;
				for (size_t i = 0; i < back.size(); i++)
					if (back[i] != ~mix(off + 8 * i)) {
						bad++;
						break;
					}
			}
		});
		CHECK(errs == 0 && bad == 0, "errors %d, wrong lines %d", errs.load(), bad.load());
		CHECK(c.stats().writes == size / line, "writes %llu", (unsigned long long)c.stats().writes);
	}
	int fd = open(f.path.c_str(), O_RDONLY);
	std::vector<uint64_t> buf(1 << 13);
	int bad = 0;
	for (uint64_t off = 0; off < size; off += buf.size() * 8) {
		CHECK(pread(fd, buf.data(), buf.size() * 8, (off_t)off) == (ssize_t)(buf.size() * 8), "pread");
		for (size_t i = 0; i < buf.size(); i++) bad += buf[i] != ~mix(off + 8 * i);
	}
	close(fd);
	CHECK(bad == 0, "%d words wrong in the file", bad);
}

// Depth 4 and thousands of commands: the rings wrap hundreds of times.
void test_wraparound()
{
	const uint64_t size = 4ull << 20;
	temp_file f(size);
	for (int depth : {2, 4, 8}) {
		emu_options o = base_opts();
		o.queue_depth = depth;
		o.queues = 2;
		emu_controller c(f.path, o);
		const queue_set* qs = c.device_queues();
		const int nt = 8, per = 1000;
		std::atomic<int> bad{0}, errs{0};
		parallel(nt, [&](int id) {
			std::vector<uint64_t> buf(512), want;
			uint64_t rng = id * 7919;
			for (int i = 0; i < per; i++) {
				uint64_t off = (mix(rng++) % (size / 4096)) * 4096;
				if (qs->read(off, 4096, buf.data())) {
					errs++;
					continue;
				}
				expected(off, 4096, want);
				if (memcmp(buf.data(), want.data(), 4096)) bad++;
			}
		});
		queue_counters q = c.queue_totals();
		emu_stats s = c.stats();
		CHECK(errs == 0 && bad == 0, "depth %d: errors %d wrong %d", depth, errs.load(), bad.load());
		CHECK(s.commands == (uint64_t)nt * per && q.submitted == (uint32_t)nt * per,
		      "depth %d: completed %llu submitted %u of %d", depth, (unsigned long long)s.commands, q.submitted,
		      nt * per);
		CHECK(q.duplicates == 0 && q.bad_cids == 0 && q.timeouts == 0 && q.failed == 0,
		      "depth %d: dup %u bad %u timeouts %u failed %u", depth, q.duplicates, q.bad_cids, q.timeouts,
		      q.failed);
		std::printf("  depth %d: %d commands, %llu CQ-full waits\n", depth, nt * per,
			    (unsigned long long)s.cq_full_waits);
	}
}

// Reads under a fault: every call returns either an error or the right data.
struct fault_result {
	int ok = 0, errors = 0, wrong = 0, timeouts = 0;
};
fault_result fault_reads(emu_controller& c, uint64_t size, int nt, int per)
{
	const queue_set* qs = c.device_queues();
	std::atomic<int> ok{0}, errors{0}, wrong{0}, timeouts{0};
	parallel(nt, [&](int id) {
		std::vector<uint64_t> buf(512), want;
		uint64_t rng = 777 + id;
		for (int i = 0; i < per; i++) {
			uint64_t off = (mix(rng++) % (size / 4096)) * 4096;
			memset(buf.data(), 0x5A, 4096);
			int st = qs->read(off, 4096, buf.data());
			if (st == (int)BAM_NVME_STATUS_TIMEOUT) {
				timeouts++;
				continue;
			}
			if (st) {
				errors++;
				continue;
			}
			expected(off, 4096, want);
			if (memcmp(buf.data(), want.data(), 4096)) wrong++;
			else ok++;
		}
	});
	fault_result r;
	r.ok = ok;
	r.errors = errors;
	r.wrong = wrong;
	r.timeouts = timeouts;
	return r;
}

void test_fault_error()
{
	const uint64_t size = 4ull << 20;
	temp_file f(size);
	emu_options o = base_opts();
	o.fault = fault_kind::error;
	o.fault_rate = 0.05;
	emu_controller c(f.path, o);
	fault_result r = fault_reads(c, size, 8, 1000);
	emu_stats s = c.stats();
	CHECK(r.wrong == 0, "%d reads returned wrong data with status 0", r.wrong);
	CHECK(r.errors > 0 && (uint64_t)r.errors == s.errors_injected, "callers saw %d errors, injected %llu", r.errors,
	      (unsigned long long)s.errors_injected);
	CHECK(r.ok + r.errors == 8000, "ok %d + errors %d", r.ok, r.errors);
	CHECK(c.queue_totals().retries == 0, "permanent (DNR) errors were retried %u times", c.queue_totals().retries);
	// Writes fail visibly too and leave the file as it was.
	const queue_set* qs = c.device_queues();
	std::vector<uint64_t> buf(512, 0xABABABABABABABABull), back(512);
	int werr = 0;
	for (int i = 0; i < 400; i++) {
		int st = qs->write(4096ull * i, 4096, buf.data());
		if (st) {
			werr++;
			CHECK(BAM_NVME_SCT(st) == 2 && BAM_NVME_DNR(st), "write error status 0x%x", st);
			// read until the read itself succeeds; the line must be untouched
			int rs;
			while ((rs = qs->read(4096ull * i, 4096, back.data())) != 0) {}
			std::vector<uint64_t> want;
			expected(4096ull * i, 4096, want);
			CHECK(!memcmp(back.data(), want.data(), 4096), "failed write changed line %d", i);
		}
	}
	CHECK(werr > 0, "no write errors in 400 writes at rate 0.05");
	std::printf("  read errors %d (injected %llu), write errors %d\n", r.errors,
		    (unsigned long long)s.errors_injected, werr);
}

// Transient errors (DNR clear) are retried by the queue code: every read
// and write succeeds with the right data, each injected error costing one
// retry; a command that keeps failing gives up after max_retries.
void test_fault_transient()
{
	const uint64_t size = 4ull << 20;
	temp_file f(size);
	{
		emu_options o = base_opts();
		o.fault = fault_kind::transient;
		o.fault_rate = 0.02; // 6 failures in a row: 6e-11 per read
		emu_controller c(f.path, o);
		fault_result r = fault_reads(c, size, 8, 1000);
		emu_stats s = c.stats();
		const queue_counters qc = c.queue_totals();
		CHECK(r.ok == 8000 && r.errors == 0 && r.wrong == 0, "ok %d, errors %d, wrong %d", r.ok, r.errors, r.wrong);
		CHECK(s.errors_injected > 0 && qc.retries == s.errors_injected, "injected %llu, retried %u",
		      (unsigned long long)s.errors_injected, qc.retries);
		const queue_set* qs = c.device_queues();
		std::vector<uint64_t> buf(512), back(512);
		for (int i = 0; i < 400; i++) {
			for (auto& w : buf) w = 0x1234000000000000ull + i;
			CHECK(qs->write(4096ull * i, 4096, buf.data()) == 0, "write %d failed", i);
			CHECK(qs->read(4096ull * i, 4096, back.data()) == 0 && back == buf, "line %d not written", i);
		}
		std::printf("  %llu transient errors injected, %u retries, 0 errors seen\n",
			    (unsigned long long)c.stats().errors_injected, c.queue_totals().retries);
	}
	{
		emu_options o = base_opts();
		o.fault = fault_kind::transient;
		o.fault_rate = 1.0; // every attempt fails
		emu_controller c(f.path, o);
		const queue_set* qs = c.device_queues();
		std::vector<uint64_t> buf(512);
		int st = qs->read(0, 4096, buf.data());
		CHECK(BAM_NVME_SCT(st) == 2 && !BAM_NVME_DNR(st), "status 0x%x after retries", st);
		CHECK(c.stats().errors_injected == 1 + max_retries && c.queue_totals().retries == max_retries,
		      "a failing read was tried %llu times (retries %u)", (unsigned long long)c.stats().errors_injected,
		      c.queue_totals().retries);
		queue_hold h;
		st = qs->read_held(0, 4096, buf.data(), h);
		CHECK(st != 0 && h.active, "read_held: status 0x%x, hold %d", st, (int)h.active);
		qs->retire(h);
		CHECK(c.stats().errors_injected == 2 * (1 + max_retries), "read_held tried %llu times in all",
		      (unsigned long long)c.stats().errors_injected);
	}
}

void test_fault_delay()
{
	const uint64_t size = 4ull << 20;
	temp_file f(size);
	{ // delays within the timeout: slower, never wrong
		emu_options o = base_opts();
		o.fault = fault_kind::delay;
		o.fault_rate = 0.02;
		o.fault_delay_us = 3000;
		emu_controller c(f.path, o);
		fault_result r = fault_reads(c, size, 8, 500);
		emu_stats s = c.stats();
		CHECK(r.ok == 4000 && r.wrong == 0 && r.errors == 0 && r.timeouts == 0, "ok %d wrong %d err %d to %d", r.ok,
		      r.wrong, r.errors, r.timeouts);
		CHECK(s.delays_injected > 0 && s.max_latency_us >= 3000, "delays %llu max latency %.0f us",
		      (unsigned long long)s.delays_injected, s.max_latency_us);
	}
	{ // delays beyond the timeout surface as TIMEOUT; slots recover
		emu_options o = base_opts();
		o.fault = fault_kind::delay;
		o.fault_rate = 0.02;
		o.fault_delay_us = 50000;
		o.timeout_ms = 10;
		emu_controller c(f.path, o);
		fault_result r = fault_reads(c, size, 8, 300);
		// let the late completions arrive and be drained
		std::this_thread::sleep_for(std::chrono::milliseconds(120));
		fault_result r2 = fault_reads(c, size, 4, 100);
		queue_counters q = c.queue_totals();
		CHECK(r.wrong == 0 && r2.wrong == 0, "wrong data %d %d", r.wrong, r2.wrong);
		CHECK(r.timeouts > 0, "no timeouts with 50 ms delays and a 10 ms timeout");
		CHECK(q.failed == 0 && q.duplicates == 0, "failed %u duplicates %u", q.failed, q.duplicates);
		CHECK(q.late > 0, "abandoned commands were never retired");
		std::printf("  timeouts %d (+%d), late completions retired %u\n", r.timeouts, r2.timeouts, q.late);
	}
}

void test_fault_reorder()
{
	const uint64_t size = 4ull << 20;
	temp_file f(size);
	emu_options o = base_opts();
	o.fault = fault_kind::reorder;
	o.fault_rate = 0.1;
	emu_controller c(f.path, o);
	fault_result r = fault_reads(c, size, 8, 1000);
	emu_stats s = c.stats();
	queue_counters q = c.queue_totals();
	CHECK(r.ok == 8000 && r.wrong == 0, "ok %d wrong %d err %d", r.ok, r.wrong, r.errors);
	CHECK(s.reorders_injected > 0 && q.duplicates == 0, "reorders %llu dup %u",
	      (unsigned long long)s.reorders_injected, q.duplicates);
}

// Validation errors come back as NVMe statuses, not wrong data.
void test_invalid()
{
	const uint64_t size = 1ull << 20;
	temp_file f(size);
	emu_controller c(f.path, base_opts());
	const queue_set* qs = c.device_queues();
	std::vector<uint64_t> buf(8192);
	// Invalid commands complete with Do Not Retry set: no retries.
	CHECK(qs->read(size, 4096, buf.data()) == (BAM_NVME_SC_LBA_RANGE | 0x4000), "read past the end");
	CHECK(qs->read(size - 2048, 4096, buf.data()) == (BAM_NVME_SC_LBA_RANGE | 0x4000), "read across the end");
	CHECK(qs->read(100, 4096, buf.data()) == (int)BAM_NVME_STATUS_BAD_ARGS, "unaligned offset");
	CHECK(qs->read(0, 128 << 10, buf.data()) == (int)BAM_NVME_STATUS_BAD_ARGS, "over max_io_bytes");
	queue& q = qs->queues[0];
	CHECK(q.io(0x7f, 0, 4096, buf.data()) == (BAM_NVME_SC_INVALID_OPCODE | 0x4000), "bad opcode");
	CHECK(qs->read(size - 4096, 4096, buf.data()) == 0, "last line");
	CHECK(c.stats().invalid == 3, "invalid %llu", (unsigned long long)c.stats().invalid);
	CHECK(c.queue_totals().retries == 0, "invalid commands were retried %u times", c.queue_totals().retries);
}

// Latency overlaps across outstanding commands.
void test_latency()
{
	const uint64_t size = 4ull << 20;
	temp_file f(size);
	emu_options o = base_opts();
	o.latency_us = 2000;
	emu_controller c(f.path, o);
	const queue_set* qs = c.device_queues();
	std::vector<uint64_t> buf(512);
	double t0 = now_s();
	for (int i = 0; i < 20; i++) qs->read(4096ull * i, 4096, buf.data());
	double serial = now_s() - t0;
	CHECK(serial >= 0.040, "20 serial reads at 2 ms took %.1f ms", serial * 1e3);
	const int nt = 32, per = 20;
	t0 = now_s();
	parallel(nt, [&](int id) {
		std::vector<uint64_t> b(512);
		for (int i = 0; i < per; i++) qs->read(4096ull * (id * per + i), 4096, b.data());
	});
	double par = now_s() - t0;
	// 32x the commands in ~ the same time: latency overlapped.
	CHECK(par < serial * 6, "32 threads took %.1f ms vs %.1f ms serial", par * 1e3, serial * 1e3);
	std::printf("  20 serial reads %.1f ms; 32x20 concurrent %.1f ms (%.0f IOPS at 2 ms)\n", serial * 1e3,
		    par * 1e3, nt * per / par);
}

// The IOPS cap is met within 10% when enough commands are outstanding.
// Never above the cap; below it only if the CPU is starved (CI machines
// are shared), so a low reading is retried.
double measure_iops(const queue_set* qs, uint64_t size, double cap_window_s)
{
	std::atomic<bool> go{true};
	std::atomic<uint64_t> done{0};
	std::vector<std::thread> ts;
	for (int id = 0; id < 8; id++)
		ts.emplace_back([&, id] {
			std::vector<uint64_t> b(512);
			uint64_t rng = id;
			while (go.load()) {
				qs->read((mix(rng++) % (size / 4096)) * 4096, 4096, b.data());
				done++;
			}
		});
	std::this_thread::sleep_for(std::chrono::milliseconds(100)); // warm up
	uint64_t d0 = done.load();
	double t0 = now_s();
	std::this_thread::sleep_for(std::chrono::duration<double>(cap_window_s));
	uint64_t d1 = done.load();
	double t1 = now_s();
	go = false;
	for (auto& t : ts) t.join();
	return (double)(d1 - d0) / (t1 - t0);
}

void test_iops_cap()
{
	const uint64_t size = 8ull << 20;
	const double cap = 5000;
	temp_file f(size);
	emu_options o = base_opts();
	o.iops = cap;
	o.latency_us = 100;
	emu_controller c(f.path, o);
	double iops = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		iops = measure_iops(c.device_queues(), size, 1.0);
		std::printf("  cap %.0f IOPS: achieved %.0f IOPS (%.1f%%)\n", cap, iops, 100 * iops / cap);
		CHECK(iops < cap * 1.1, "achieved %.0f IOPS above the cap of %.0f", iops, cap);
		if (iops > cap * 0.9) break;
	}
	// How close to the cap a loaded 2-core CI machine gets is a measurement,
	// not a property (docs/emu-performance.md reports it); what the limiter
	// must guarantee is never exceeding the cap (above) and not starving.
	CHECK(iops > cap * 0.25, "achieved only %.0f IOPS against a cap of %.0f", iops, cap);
}

// Controllers come and go while idle and right after traffic.
void test_shutdown()
{
	temp_file f(1 << 20);
	for (int i = 0; i < 10; i++) {
		emu_options o = base_opts();
		o.threads = 1 + i % 3;
		emu_controller c(f.path, o);
		if (i % 2) {
			std::vector<uint64_t> b(512);
			parallel(4, [&](int id) {
				std::vector<uint64_t> bb(512);
				for (int k = 0; k < 50; k++) c.device_queues()->read(4096ull * ((id * 50 + k) % 256), 4096, bb.data());
			});
		}
	}
	bool threw = false;
	try {
		emu_controller c("/nonexistent/bam-file", base_opts());
	} catch (const std::exception& e) {
		threw = strstr(e.what(), "/nonexistent/bam-file") != nullptr;
	}
	CHECK(threw, "a missing file must throw naming the path");
	threw = false;
	try {
		emu_options o = base_opts();
		o.queue_depth = 100;
		emu_controller c(f.path, o);
	} catch (const std::exception& e) {
		threw = strstr(e.what(), "queue_depth") != nullptr;
	}
	CHECK(threw, "a bad depth must throw naming the option");
}

// The controller alone, driven through raw SQEs and doorbells: CQ full
// (completions held back until the host moves the CQ head), phase tags over
// several passes, sq_head, validation statuses, bad doorbell values.
void test_controller_raw()
{
	const uint64_t size = 1ull << 20;
	temp_file f(size);
	emu_options o = base_opts();
	o.queues = 1;
	o.queue_depth = 4;
	o.threads = 1;
	o.max_io_bytes = 4096;
	emu_controller c(f.path, o);
	queue& q = c.device_queues()->queues[0];
	uint32_t sq_tail = 0, cq_head = 0, phase = 1;
	auto submit = [&](uint8_t op, uint32_t nsid, uint64_t lba, uint64_t prp1) {
		bam_nvme_sqe e;
		memset(&e, 0, sizeof e);
		e.opcode = op;
		e.cid = (uint16_t)sq_tail;
		e.nsid = nsid;
		e.cdw10 = (uint32_t)lba;
		e.cdw12 = 4096 / 512 - 1;
		e.prp1 = prp1;
		memcpy((void*)&q.sq[sq_tail], &e, sizeof e);
		sq_tail = (sq_tail + 1) & 3;
		__atomic_store_n(q.sq_db, sq_tail, __ATOMIC_RELEASE);
	};
	auto slot_buf = [&](uint32_t s) { return (uint64_t)(uintptr_t)(q.bounce + (uint64_t)s * q.max_bytes); };
	// Returns the next CQE or nothing within 200 ms.
	auto next = [&](bam_nvme_cqe& out) {
		double t0 = now_s();
		while (now_s() - t0 < 0.2) {
			uint32_t dw3 = __atomic_load_n((const uint32_t*)&q.cq[cq_head].cid, __ATOMIC_ACQUIRE);
			if (((dw3 >> 16) & 1u) == phase) {
				memcpy(&out, (const void*)&q.cq[cq_head], sizeof out);
				cq_head = (cq_head + 1) & 3;
				if (cq_head == 0) phase ^= 1;
				return true;
			}
			std::this_thread::yield();
		}
		return false;
	};
	auto ring_cq = [&] { __atomic_store_n(q.cq_db, cq_head, __ATOMIC_RELEASE); };
	std::vector<uint64_t> want;
	bam_nvme_cqe e;
	// Three reads fill the 4-entry CQ to its capacity (3); a fourth waits.
	for (uint32_t i = 0; i < 3; i++) submit(BAM_NVME_CMD_READ, 1, i * 8, slot_buf(i));
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	submit(BAM_NVME_CMD_READ, 1, 3 * 8, slot_buf(3));
	std::this_thread::sleep_for(std::chrono::milliseconds(30));
	for (uint32_t i = 0; i < 3; i++) {
		CHECK(next(e), "completion %u missing", i);
		CHECK(e.cid == i && BAM_NVME_STATUS(e.status) == 0 && e.sq_id == q.qid, "cqe %u: cid %u status 0x%x", i,
		      e.cid, e.status);
		expected(4096ull * i, 4096, want);
		CHECK(!memcmp(q.bounce + (uint64_t)i * q.max_bytes, want.data(), 4096), "data of read %u", i);
	}
	CHECK(!next(e), "a 4th CQE was posted into a full CQ");
	CHECK(c.stats().cq_full_waits >= 1, "no CQ-full wait counted");
	ring_cq(); // head 3: room again
	CHECK(next(e) && e.cid == 3 && e.sq_head == 0, "held-back completion: cid %u sq_head %u", e.cid, e.sq_head);
	ring_cq();
	// Validation statuses, across the phase flip of the next pass; every
	// failure carries Do Not Retry (a retry cannot fix an invalid command).
	struct {
		uint8_t op;
		uint32_t nsid;
		uint64_t lba, prp1;
		uint16_t status;
	} cases[] = {
		{0x7f, 1, 0, slot_buf(0), BAM_NVME_SC_INVALID_OPCODE},
		{BAM_NVME_CMD_READ, 2, 0, slot_buf(1), BAM_NVME_SC_INVALID_NS},
		{BAM_NVME_CMD_READ, 1, size / 512, slot_buf(2), BAM_NVME_SC_LBA_RANGE},
		{BAM_NVME_CMD_READ, 1, 0, (uint64_t)(uintptr_t)want.data(), BAM_NVME_SC_DATA_XFER_ERROR},
		{BAM_NVME_CMD_READ, 1, 0, slot_buf(0) + 2, BAM_NVME_SC_PRP_OFFSET_INVALID},
		{BAM_NVME_CMD_FLUSH, 1, 0, 0, 0},
		{BAM_NVME_CMD_WRITE, 1, 16, slot_buf(2), 0},
	};
	for (auto& k : cases) {
		uint32_t cid = sq_tail;
		submit(k.op, k.nsid, k.lba, k.prp1);
		CHECK(next(e), "no completion for opcode 0x%x", k.op);
		const uint16_t want_st = k.status ? uint16_t(k.status | 0x4000u) : 0;
		CHECK(e.cid == cid && BAM_NVME_STATUS(e.status) == want_st, "opcode 0x%x: cid %u status 0x%x, want 0x%x",
		      k.op, e.cid, BAM_NVME_STATUS(e.status), want_st);
		ring_cq();
	}
	// A doorbell value beyond the queue is ignored and counted.
	__atomic_store_n(q.sq_db, 99u, __ATOMIC_RELEASE);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	CHECK(c.stats().protocol_errors == 1, "protocol errors %llu", (unsigned long long)c.stats().protocol_errors);
	__atomic_store_n(q.sq_db, sq_tail, __ATOMIC_RELEASE);
}

struct test_case {
	const char* name;
	void (*fn)();
};
const test_case tests[] = {
	{"random_reads", test_random_reads}, {"write_read", test_write_read},     {"wraparound", test_wraparound},
	{"fault_error", test_fault_error},   {"fault_transient", test_fault_transient}, {"fault_delay", test_fault_delay},   {"fault_reorder", test_fault_reorder},
	{"invalid", test_invalid},           {"latency", test_latency},           {"iops_cap", test_iops_cap},
	{"shutdown", test_shutdown},         {"controller_raw", test_controller_raw},
};

} // namespace

int main(int argc, char** argv)
{
	if (const char* f = getenv("QUEUE_TEST_FLAGS")) g_flags = (uint32_t)strtoul(f, nullptr, 0);
	int ran = 0;
	for (const test_case& t : tests) {
		bool want = argc == 1;
		for (int i = 1; i < argc; i++) want |= !strcmp(argv[i], t.name);
		if (!want) continue;
		int before = g_failures;
		double t0 = now_s();
		std::printf("RUN  %s\n", t.name);
		std::fflush(stdout);
		t.fn();
		std::printf("%s %s (%.2f s)\n", g_failures == before ? "OK  " : "FAIL", t.name, now_s() - t0);
		std::fflush(stdout);
		ran++;
	}
	if (!ran) {
		std::fprintf(stderr, "no test matched\n");
		return 2;
	}
	std::printf(g_failures ? "FAILED (%d checks)\n" : "PASS\n", g_failures);
	return g_failures ? 1 : 0;
}
