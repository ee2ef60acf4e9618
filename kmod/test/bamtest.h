// SPDX-License-Identifier: MIT
//
// What the C++ in-guest tests (bam_queue_test, bam_backend_test) share:
// "BAMTEST: PASS|FAIL GROUP.NAME" lines like bam_nvme_test's, INFO lines, a
// failure count for the exit status, the data pattern they write and
// compare, and the module's count of pinned pages.
#ifndef BAM_KMOD_TEST_BAMTEST_H
#define BAM_KMOD_TEST_BAMTEST_H

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace bamtest {

inline int failures;
inline std::mutex out_lock;      // one line at a time from many threads
inline const char* group = "";   // the test program's: "queue", "backend"

// The rest of a line, printf-style, and its newline.
inline void end_line(const char* fmt, va_list ap)
{
	vprintf(fmt, ap);
	printf("\n");
}

// Prints the check's PASS or FAIL line (with BAMTEST_PREFIX, which run.sh
// sets per pass) and counts failures; returns ok.
__attribute__((format(printf, 3, 4))) inline bool check(bool ok, const char* name, const char* fmt, ...)
{
	const char* pfx = getenv("BAMTEST_PREFIX");
	std::lock_guard<std::mutex> g(out_lock);
	if (ok) {
		printf("BAMTEST: PASS %s%s.%s\n", pfx ? pfx : "", group, name);
	} else {
		failures++;
		printf("BAMTEST: FAIL %s%s.%s: ", pfx ? pfx : "", group, name);
		va_list ap;
		va_start(ap, fmt);
		end_line(fmt, ap);
		va_end(ap);
	}
	fflush(stdout);
	return ok;
}

// An information line: "BAMTEST: INFO GROUP: ...".
__attribute__((format(printf, 1, 2))) inline void info(const char* fmt, ...)
{
	std::lock_guard<std::mutex> g(out_lock);
	printf("BAMTEST: INFO %s: ", group);
	va_list ap;
	va_start(ap, fmt);
	end_line(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

// The module's count of pages it holds pinned for the controller behind
// the device node `path` (/dev/bam_nvmeN), or -1 if it cannot be read.
inline long pinned_pages(const char* path)
{
	char p[300];
	const char* slash = strrchr(path, '/');
	snprintf(p, sizeof p, "/sys/class/bam_nvme/%s/pinned_pages", slash ? slash + 1 : path);
	FILE* f = fopen(p, "r");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1) v = -1;
		fclose(f);
	}
	return v;
}

// The 8-byte word at device byte offset `off` (a multiple of 8) of data
// written with `seed`.
inline uint64_t word(uint64_t off, uint64_t seed)
{
	return (off * 0x9e3779b97f4a7c15ull) ^ seed ^ (off >> 9 << 40);
}

// `bytes` (a multiple of 8) of the pattern for device offset dev_off.
inline void fill(void* p, uint64_t dev_off, size_t bytes, uint64_t seed)
{
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t w = word(dev_off + i, seed);
		memcpy((uint8_t*)p + i, &w, 8);
	}
}

// Index of the first byte of p that differs from `want`, or -1.
inline long first_diff(const void* p, const void* want, size_t bytes)
{
	if (!memcmp(p, want, bytes)) return -1;
	for (size_t i = 0; i < bytes; i++)
		if (((const uint8_t*)p)[i] != ((const uint8_t*)want)[i]) return (long)i;
	return -1;
}

} // namespace bamtest

#endif // BAM_KMOD_TEST_BAMTEST_H
