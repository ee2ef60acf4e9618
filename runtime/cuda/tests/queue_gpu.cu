// GPU proof of the NVMe queue protocol over the emu controller: thousands of
// GPU threads issue random reads (and a write/read-back pass) through
// bam::nvme::queue_set, every byte is verified, and IOPS are reported for
// several controller thread counts and with latency + an IOPS cap.
//
//   make -f nvme.mk queue-gpu && build/nvme/queue_gpu [file] [GiB]
//
// The file (default /tmp/bam_emu_bench.dat, 1 GiB) is written first, so it
// is in the page cache; word at byte offset o holds mix(o).
#include <bam/nvme/emu.h>
#include <bam/nvme/queue.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace bam::nvme;

#define CK(x)                                                                                  \
	do {                                                                                   \
		cudaError_t e_ = (x);                                                          \
		if (e_ != cudaSuccess) {                                                       \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
			exit(1);                                                               \
		}                                                                              \
	} while (0)

__host__ __device__ inline uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

struct counters {
	unsigned long long ok, errors, wrong, timeouts;
	unsigned int first_status;
	int stop;
};

__global__ void read_kernel(const queue_set* qs, uint64_t lines, uint32_t line, int reads, uint64_t seed,
			    uint8_t* bufs, counters* c)
{
	uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t* buf = (uint64_t*)(bufs + tid * line);
	uint64_t rng = mix(seed ^ (tid * 0x100000001B3ull));
	for (int r = 0; r < reads; r++) {
		if (*(volatile int*)&c->stop) break;
		uint64_t off = (mix(rng++) % lines) * line;
		int st = qs->read(off, line, buf);
		if (st) {
			atomicCAS(&c->first_status, 0u, (unsigned)st);
			if (st == (int)BAM_NVME_STATUS_TIMEOUT) atomicAdd(&c->timeouts, 1ull);
			if (atomicAdd(&c->errors, 1ull) > 1000) c->stop = 1;
			continue;
		}
		bool good = true;
		for (uint32_t i = 0; i < line / 8; i++)
			if (buf[i] != mix(off + 8ull * i)) {
				good = false;
				break;
			}
		atomicAdd(good ? &c->ok : &c->wrong, 1ull);
	}
}

// Each thread writes its own line (~mix pattern), reads it back, restores it.
__global__ void write_kernel(const queue_set* qs, uint32_t line, uint64_t first_line, uint8_t* bufs, counters* c)
{
	uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t* buf = (uint64_t*)(bufs + tid * line);
	uint64_t off = (first_line + tid) * line;
	for (uint32_t i = 0; i < line / 8; i++) buf[i] = ~mix(off + 8ull * i);
	int st = qs->write(off, line, buf);
	for (uint32_t i = 0; i < line / 8 && !st; i++) buf[i] = 0;
	if (!st) st = qs->read(off, line, buf);
	bool good = !st;
	for (uint32_t i = 0; i < line / 8 && good; i++) good = buf[i] == ~mix(off + 8ull * i);
	for (uint32_t i = 0; i < line / 8; i++) buf[i] = mix(off + 8ull * i);
	if (!st) st = qs->write(off, line, buf);
	if (st) {
		atomicCAS(&c->first_status, 0u, (unsigned)st);
		atomicAdd(&c->errors, 1ull);
	} else {
		atomicAdd(good ? &c->ok : &c->wrong, 1ull);
	}
}

static double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void make_file(const std::string& path, uint64_t bytes)
{
	int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
		perror(path.c_str());
		exit(1);
	}
	unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
	std::vector<std::thread> ts;
	uint64_t chunk = 1 << 20;
	for (unsigned t = 0; t < nt; t++)
		ts.emplace_back([=] {
			std::vector<uint64_t> b(chunk / 8);
			for (uint64_t off = t * chunk; off < bytes; off += nt * chunk) {
				for (size_t i = 0; i < b.size(); i++) b[i] = mix(off + 8 * i);
				if (pwrite(fd, b.data(), chunk, (off_t)off) != (ssize_t)chunk) abort();
			}
		});
	for (auto& t : ts) t.join();
	close(fd);
}

struct result {
	double iops, secs;
	unsigned long long reads, ok, errors, wrong, timeouts;
	emu_stats es;
	queue_counters qc;
	queue_profile qp;
	int queues, depth;
};

static result run(const std::string& path, uint64_t file_bytes, const emu_options& o, int gpu_threads,
		  double target_s, uint8_t* bufs, counters* dc)
{
	emu_controller ctl(path, o);
	if (!ctl.on_gpu()) {
		fprintf(stderr, "controller did not use GPU memory\n");
		exit(1);
	}
	const uint32_t line = 4096;
	uint64_t lines = file_bytes / line;
	int block = 128, grid = gpu_threads / block;
	auto launch = [&](int reads, uint64_t seed) {
		CK(cudaMemset(dc, 0, sizeof(counters)));
		double t0 = now_s();
		read_kernel<<<grid, block>>>(ctl.device_queues(), lines, line, reads, seed, bufs, dc);
		CK(cudaGetLastError());
		CK(cudaDeviceSynchronize());
		return now_s() - t0;
	};
	// calibrate, then run for about target_s
	double t = launch(4, 1);
	double rate = 4.0 * gpu_threads / t;
	int reads = std::max(4, std::min(4000, (int)(rate * target_s / gpu_threads)));
	emu_stats before = ctl.stats();
	t = launch(reads, 2);
	counters hc;
	CK(cudaMemcpy(&hc, dc, sizeof hc, cudaMemcpyDeviceToHost));
	result r;
	r.secs = t;
	r.reads = (unsigned long long)reads * gpu_threads;
	r.ok = hc.ok;
	r.errors = hc.errors;
	r.wrong = hc.wrong;
	r.timeouts = hc.timeouts;
	r.iops = (double)(hc.ok + hc.errors + hc.wrong) / t;
	r.es = ctl.stats();
	r.es.commands -= before.commands;
	r.qc = ctl.queue_totals();
	r.qp = ctl.queue_profile_totals();
	r.queues = ctl.queues();
	r.depth = ctl.queue_depth();
	if (hc.errors) fprintf(stderr, "  first error status 0x%x: %s\n", hc.first_status, status_str(hc.first_status));
	return r;
}

static void print(const char* what, const emu_options& o, int gpu_threads, const result& r, double cap)
{
	printf("| %-22s | %2d | %3dx%-4d | %5d | %8llu | %5.2f | %8.0f | %5.2f | %4s | %llu/%llu/%llu | %5.1f | %5.2f | %6.0f | %6.0f |",
	       what, o.threads, r.queues, r.depth, gpu_threads, r.reads, r.secs, r.iops, r.iops * 4096 / 1e9,
	       cap > 0 ? (std::to_string((int)(100 * r.iops / cap + 0.5)) + "%").c_str() : "-", r.errors, r.wrong,
	       r.timeouts, r.qc.doorbells ? (double)r.qc.submitted / r.qc.doorbells : 0.0, r.es.busy, r.es.avg_latency_us,
	       r.es.max_latency_us);
	if (r.qp.ops) {
		double n = (double)r.qp.ops;
		printf(" slot %.0f ring %.0f wait %.0f copy %.1f us; %.1f CQEs/drain, %.2f us/CQE |", r.qp.slot_ns / n / 1e3,
		       r.qp.ring_ns / n / 1e3, r.qp.wait_ns / n / 1e3, r.qp.copy_ns / n / 1e3,
		       r.qp.drains ? (double)r.qp.drained / r.qp.drains : 0.0,
		       r.qp.drained ? r.qp.drain_ns / 1e3 / r.qp.drained : 0.0);
	} else {
		printf(" - |");
	}
	printf("\n");
	fflush(stdout);
}

int main(int argc, char** argv)
{
	std::string path = argc > 1 ? argv[1] : "/tmp/bam_emu_bench.dat";
	uint64_t gib = argc > 2 ? strtoull(argv[2], nullptr, 10) : 1;
	uint64_t bytes = gib << 30;
	CK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync)); // leave the cores to the controller
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	printf("device: %s, %d SMs; host: %u CPUs\n", prop.name, prop.multiProcessorCount,
	       std::thread::hardware_concurrency());
	double t0 = now_s();
	make_file(path, bytes);
	printf("file: %s, %llu GiB written in %.1f s (in page cache)\n", path.c_str(), (unsigned long long)gib,
	       now_s() - t0);

	const int max_threads = 65536;
	uint8_t* bufs;
	counters* dc;
	CK(cudaMalloc(&bufs, (size_t)max_threads * 4096));
	CK(cudaMalloc(&dc, sizeof(counters)));

	emu_options base;
	base.max_io_bytes = 4096;
	base.queue_depth = 1024;
	base.timeout_ms = 2000;
	int bad = 0;

	{ // writes from the GPU, read back
		emu_options o = base;
		o.threads = 4;
		emu_controller ctl(path, o);
		CK(cudaMemset(dc, 0, sizeof(counters)));
		int n = 16384;
		write_kernel<<<n / 128, 128>>>(ctl.device_queues(), 4096, 1000, bufs, dc);
		CK(cudaDeviceSynchronize());
		counters hc;
		CK(cudaMemcpy(&hc, dc, sizeof hc, cudaMemcpyDeviceToHost));
		queue_counters qc = ctl.queue_totals();
		printf("write/read-back: %d threads, ok %llu, errors %llu, wrong %llu, duplicates %u, timeouts %u\n", n,
		       hc.ok, hc.errors, hc.wrong, qc.duplicates, qc.timeouts);
		bad += hc.ok != (unsigned long long)n;
	}

	printf("\n| run | ctl thr | queues x depth | GPU thr | reads | s | IOPS | GB/s | of cap | err/wrong/timeout | cmds/SQ doorbell | ctl busy | ctl avg lat us | ctl max lat us | GPU phases per read |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	const uint32_t P = QUEUE_FLAG_PROFILE, LF = QUEUE_FLAG_LIGHT_FENCE, WC = QUEUE_FLAG_WARP_COPY;
	auto go = [&](const char* label, emu_options o, int gt, double secs, double cap) {
		result r = run(path, bytes, o, gt, secs, bufs, dc);
		print(label, o, gt, r, cap);
		if (!(o.queue_flags & QUEUE_FLAG_NO_COPY)) bad += r.wrong != 0 || r.errors != 0 || r.qc.duplicates != 0;
		return r;
	};
	struct variant {
		const char* name;
		uint32_t flags;
	} variants[] = {{"sc fences, thread copy", P}, {"light fences", P | LF}, {"light + warp copy", P | LF | WC},
			{"light, no copy (ceil)", P | LF | QUEUE_FLAG_NO_COPY}, {"warp copy, sc fences", P | WC},
			{"light+warp+cq batch", P | LF | WC | QUEUE_FLAG_CQ_BATCH},
			{"light, no copy, cq batch", P | LF | QUEUE_FLAG_NO_COPY | QUEUE_FLAG_CQ_BATCH}};
	for (auto& v : variants) {
		emu_options o = base;
		o.threads = 12;
		o.queue_flags = v.flags;
		go(v.name, o, 32768, 0.7, 0);
	}
	for (int th : {1, 2, 4, 8, 12}) {
		emu_options o = base;
		o.threads = th;
		go("default", o, 32768, 0.7, 0);
	}
	{
		emu_options o = base;
		o.threads = 12;
		go("default", o, 65536, 0.7, 0);
		o.queues = 128;
		o.queue_depth = 256;
		go("default", o, 32768, 0.7, 0);
		go("default", o, 65536, 0.7, 0);
		o.queue_flags |= P;
		go("default +profile", o, 65536, 0.7, 0);
	}
	for (int q : {0, 128}) {
		emu_options o = base;
		o.threads = 12;
		o.latency_us = 10;
		o.iops = 1.5e6;
		if (q) {
			o.queues = q;
			o.queue_depth = 256;
		}
		go("10us, cap 1.5M", o, 65536, 1.0, 1.5e6);
	}
	{ // faults on the GPU: errors surface, data never wrong
		emu_options o = base;
		o.threads = 8;
		o.fault = fault_kind::error;
		o.fault_rate = 0.01;
		result r = run(path, bytes, o, 32768, 0.5, bufs, dc);
		printf("\nerror faults (rate 0.01): %llu reads, %llu errors (injected %llu), %llu wrong\n", r.reads,
		       r.errors, (unsigned long long)r.es.errors_injected, r.wrong);
		bad += r.wrong != 0 || r.errors == 0;
		o.fault = fault_kind::reorder;
		o.fault_rate = 0.05;
		r = run(path, bytes, o, 32768, 0.5, bufs, dc);
		printf("reorder faults (rate 0.05): %llu reads, %llu ok, %llu errors, %llu wrong, reorders %llu, "
		       "duplicates %u\n",
		       r.reads, r.ok, r.errors, r.wrong, (unsigned long long)r.es.reorders_injected, r.qc.duplicates);
		bad += r.wrong != 0 || r.errors != 0;
	}
	CK(cudaFree(bufs));
	CK(cudaFree(dc));
	unlink(path.c_str());
	printf("\n%s\n", bad ? "FAIL" : "PASS");
	return bad ? 1 : 0;
}
