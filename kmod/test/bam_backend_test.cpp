// SPDX-License-Identifier: MIT
//
// In-guest test of the runtime's `nvme` backend (runtime/cuda/src/
// backend_nvme.cpp) against QEMU's NVMe controller:
//
//   bam_backend_test DEV
//
// The guest has no GPU, so the CUDA calls of the backend are answered with
// host memory (cuda_host_stub.cpp) and CPU threads play the GPU threads.
// Everything else is the backend as a GPU program gets it: bring-up through
// kmod/lib, a module without NVIDIA P2P (so rings, PRP lists and line
// buffers in pinned host memory, QUEUE_MODE_BOUNCE), the queue set built by
// make_direct_queue_set with doorbells from the BAR "registered" for the
// GPU, regions handed out and zeroed, host-side transfers through the CPU
// queue pair. Lines of 16 KiB, so the line buffers need PRP lists.
#include <atomic>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "backing.h"
#include "bamtest.h"

#include <bam/config.h>
#include <bam/error.h>
#include <bam/nvme/queue.cuh>

namespace {

using bamtest::check;
using bamtest::failures;
using bamtest::pinned_pages;
using bamtest::fill;
using bamtest::first_diff;

constexpr uint32_t LINE = 16384;
constexpr int THREADS = 8;


// As uid 1000 the node (0600 root) cannot be opened: the error says why.
void unprivileged_open(const char* path)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		bool ok = false;
		std::string msg = "no error";
		if (setgid(1000) == 0 && setuid(1000) == 0) {
			bam::config cfg;
			cfg.kind = bam::backend::nvme;
			cfg.nvme_device = path;
			try {
				auto st = bam::detail::make_nvme_store(cfg, 4096);
			} catch (const bam::error& e) {
				msg = e.what();
				ok = msg.find("CAP_SYS_RAWIO") != std::string::npos &&
				     msg.find("Who may open it") != std::string::npos;
			}
		} else {
			msg = "setuid failed";
		}
		check(ok, "unprivileged_open_explained", "%s", msg.c_str());
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		failures++;
}

int run(const char* path)
{
	unprivileged_open(path);
	bam::config cfg;
	cfg.kind = bam::backend::nvme;
	cfg.nvme_device = path;
	cfg.line_bytes = LINE;
	cfg.queues = 4;
	cfg.queue_depth = 256;
	std::unique_ptr<bam::detail::backing_store> st;
	try {
		st = bam::detail::make_nvme_store(cfg, LINE);
	} catch (const bam::error& e) {
		check(false, "open", "%s", e.what());
		return 1;
	}
	check(true, "open", "-");

	// The "cache": 64 KiB aligned, whole 64 KiB pages, as runtime.cu makes it.
	const size_t slot_bytes = 1 << 20;
	void* slots = aligned_alloc(65536, slot_bytes);
	try {
		st->attach_cache(slots, slot_bytes);
	} catch (const bam::error& e) {
		check(false, "queues_built", "%s", e.what());
		return 1;
	}
	{
		char* text = nullptr;
		size_t len = 0;
		FILE* m = open_memstream(&text, &len);
		st->print(m);
		fclose(m);
		bool ok = strstr(text, "pinned host memory") && strstr(text, "without NVIDIA P2P") &&
			  strstr(text, "4 GPU queues");
		check(ok, "host_memory_placement", "print() said: %s", text);
		for (char* l = strtok(text, "\n"); l; l = strtok(nullptr, "\n")) printf("BAMTEST: INFO backend:%s\n", l);
		free(text);
	}

	// A: written from the host but for its last 1000 bytes (must read 0).
	// C: written, freed; B then takes C's range and must read all zeros.
	const size_t a_bytes = 1 << 20, a_data = a_bytes - 1000, b_bytes = 512 << 10;
	std::vector<uint8_t> a_want(a_bytes, 0), b_want(b_bytes, 0), junk(b_bytes, 0xff);
	fill(a_want.data(), 0, a_data & ~size_t(7), 0xa11ce);
	bam::detail::backing_region A, B, C;
	try {
		A = st->allocate(a_bytes);
		st->write_from_host(A, a_want.data(), a_data);
		C = st->allocate(b_bytes);
		st->write_from_host(C, junk.data(), b_bytes);
		st->release(C);
		B = st->allocate(b_bytes);
	} catch (const bam::error& e) {
		check(false, "regions", "%s", e.what());
		return 1;
	}
	check(B.offset == C.offset && A.offset == 0 && C.offset == a_bytes, "regions_reused",
	      "A at %" PRIu64 ", C at %" PRIu64 ", B at %" PRIu64, A.offset, C.offset, B.offset);
	bam::nvme::queue_set* qs = st->queues(); // zeroes B before "kernels" see it
	if (!check(qs && qs->nqueues == 4, "queue_set", "qs %p", (void*)qs)) return 1;

	// "GPU threads": every line of A read through the queues; half of B's
	// lines written through them and read back.
	std::atomic<int> bad{0};
	std::string why;
	std::mutex why_lock;
	auto fail = [&](const std::string& w) {
		std::lock_guard<std::mutex> g(why_lock);
		if (!bad++) why = w;
	};
	std::vector<std::thread> th;
	for (int t = 0; t < THREADS; t++) {
		th.emplace_back([&, t] {
			std::vector<uint8_t> buf(LINE + 4);
			uint8_t* p = buf.data() + 4; // dword-aligned, not 16-byte aligned
			for (uint64_t l = t; l < a_bytes / LINE; l += THREADS) {
				int s = qs->read(A.offset + l * LINE, LINE, p);
				long d = s ? -2 : first_diff(p, a_want.data() + l * LINE, LINE);
				if (d != -1) fail("A line " + std::to_string(l) + ": status " + std::to_string(s) +
						  " byte " + std::to_string(d));
			}
			for (uint64_t l = t; l < b_bytes / LINE; l += 2 * THREADS) {
				std::vector<uint8_t> w(LINE);
				fill(w.data(), B.offset + l * LINE, LINE, 0xb0b + l);
				memcpy(b_want.data() + l * LINE, w.data(), LINE); // disjoint lines per thread
				int s = qs->write(B.offset + l * LINE, LINE, w.data());
				if (!s) s = qs->read(B.offset + l * LINE, LINE, p);
				long d = s ? -2 : first_diff(p, w.data(), LINE);
				if (d != -1) fail("B line " + std::to_string(l) + ": status " + std::to_string(s) +
						  " byte " + std::to_string(d));
			}
		});
	}
	for (auto& x : th) x.join();
	check(bad == 0, "threads_through_backend_queues", "%d lines bad; first: %s", bad.load(), why.c_str());

	// The host path sees what the queues wrote, zeros where nothing was.
	{
		std::vector<uint8_t> got(b_bytes, 0xee), got_a(a_bytes, 0xee);
		try {
			st->read_to_host(B, got.data(), b_bytes);
			st->read_to_host(A, got_a.data(), a_bytes);
		} catch (const bam::error& e) {
			check(false, "read_to_host", "%s", e.what());
		}
		long d = first_diff(got.data(), b_want.data(), b_bytes);
		check(d < 0, "reused_region_zeroed_and_written", "B byte %ld differs (got %#x want %#x)", d,
		      d >= 0 ? got[d] : 0, d >= 0 ? b_want[d] : 0);
		d = first_diff(got_a.data(), a_want.data(), a_bytes);
		check(d < 0, "host_write_tail_zeroed", "A byte %ld differs", d);
	}

	// A read past the namespace through the backend's queues: named status.
	{
		uint8_t* p = (uint8_t*)aligned_alloc(4096, LINE);
		int s = qs->read(uint64_t(1) << 40, LINE, p);
		check(BAM_NVME_SC(s) == BAM_NVME_SC_LBA_RANGE && !strcmp(bam::nvme::status_str(s), "LBA out of range"),
		      "read_past_end_status", "status %#x (%s)", s, bam::nvme::status_str(s));
		free(p);
	}

	try {
		st->allocate(uint64_t(1) << 40);
		check(false, "namespace_full_error", "no error");
	} catch (const bam::error& e) {
		check(strstr(e.what(), "namespace") && strstr(e.what(), "Free arrays"), "namespace_full_error", "%s",
		      e.what());
	}

	st.reset();
	free(slots);
	check(pinned_pages(path) == 0, "no_pins_after_close", "pinned_pages %ld", pinned_pages(path));
	return failures != 0;
}

} // namespace

int main(int argc, char** argv)
{
	bamtest::group = "backend";
	if (argc < 2) {
		fprintf(stderr, "usage: %s /dev/bam_nvmeN\n", argv[0]);
		return 2;
	}
	return run(argv[1]);
}
