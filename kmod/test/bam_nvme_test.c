// SPDX-License-Identifier: MIT
/*
 * In-guest test program for bam_nvme.ko and kmod/lib (run by test/init).
 *
 *   bam_nvme_test io    DEV    data path: patterns, sizes, PRP lists, threads
 *   bam_nvme_test abi   DEV    bad ioctl and mmap arguments, pin accounting
 *   bam_nvme_test perm  DEV    non-root and capability-less opens refused
 *   bam_nvme_test death DEV    owner killed with queues live: pins released, ctrl off
 *   bam_nvme_test hold  DEV DIR  hold the device across an unbind (see init)
 *   bam_nvme_test smoke DEV NAME  bring-up and one write/read, check NAME
 *   bam_nvme_test bigmap DEV   64 GiB map of absent memory (max_map_mb=65536)
 *   bam_nvme_test security DEV DMA isolation, one owner, pin accounting,
 *                              admin filter, stale handles, racing MAP
 *   bam_nvme_test timeout DEV  controller disabled under the library
 *   bam_nvme_test reload KO PCI N  rmmod/insmod/bind/use N times
 *
 * Every check prints one line "BAMTEST: PASS name" or
 * "BAMTEST: FAIL name: reason"; the exit status is 1 if any failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bam_kmod_abi.h"
#include "bam_nvme_host.h"

static int failures;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 3, 4)))
static int check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	const char *pfx = getenv("BAMTEST_PREFIX");

	pfx = pfx ? pfx : "";
	pthread_mutex_lock(&out_lock);
	if (ok) {
		printf("BAMTEST: PASS %s%s\n", pfx, name);
	} else {
		failures++;
		printf("BAMTEST: FAIL %s%s: ", pfx, name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return ok;
}

static void die(const char *what, int err)
{
	printf("BAMTEST: FAIL %s: %s [%s]\n", what, bam_nvme_strerror(err), bam_nvme_errmsg());
	fflush(stdout);
	exit(1);
}

/* ---- helpers --------------------------------------------------------- */

static const char *sysfs_dir(const char *devpath)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "/sys/class/bam_nvme/%s", strrchr(devpath, '/') + 1);
	return buf;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static long dev_attr(const char *devpath, const char *attr)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/%s", sysfs_dir(devpath), attr);
	return read_long(p);
}

/* FOLL_PIN pages acquired minus released, system wide. */
static long pins_outstanding(void)
{
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");
	long acq = -1, rel = -1, v;
	char key[64];

	/* vmstat counters are per-CPU and folded lazily; fold them now. */
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2) {
		if (!strcmp(key, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(key, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Each 8-byte word names its LBA, position and a seed. */
static void fill(void *p, uint64_t lba, uint32_t nlb, uint32_t lbasz, uint64_t seed)
{
	uint64_t *w = p;
	size_t i, n = (size_t)nlb * lbasz / 8;

	for (i = 0; i < n; i++)
		w[i] = ((lba + i * 8 / lbasz) << 24 | (i % (lbasz / 8))) ^ seed;
}

static long verify(const void *p, uint64_t lba, uint32_t nlb, uint32_t lbasz, uint64_t seed)
{
	const uint64_t *w = p;
	size_t i, n = (size_t)nlb * lbasz / 8;

	for (i = 0; i < n; i++)
		if (w[i] != (((lba + i * 8 / lbasz) << 24 | (i % (lbasz / 8))) ^ seed))
			return (long)i;
	return -1;
}

static struct bam_nvme_dev *open_lib(const char *path, uint32_t queues)
{
	struct bam_nvme_opts o = { .io_queues = queues, .io_timeout_ms = 10000 };
	struct bam_nvme_dev *dev;
	int ret = bam_nvme_open(path, &o, &dev);

	if (ret)
		die("bam_nvme_open", ret);
	return dev;
}

/* ---- io -------------------------------------------------------------- */

struct io_ctx {
	struct bam_nvme_dev *dev;
	uint32_t lbasz;
	uint64_t nlbas;
};

/* Write @nlb blocks at @lba from wb+woff, read them into rb+roff, compare. */
static int rw_verify(struct io_ctx *io, struct bam_nvme_qp *qp, struct bam_nvme_dma *wb,
		     struct bam_nvme_dma *rb, uint64_t lba, uint32_t nlb, size_t woff,
		     size_t roff, uint64_t seed, char *why, size_t whylen)
{
	size_t len = (size_t)nlb * io->lbasz;
	long bad;
	int ret;

	fill((char *)wb->vaddr + woff, lba, nlb, io->lbasz, seed);
	memset((char *)rb->vaddr + roff, 0xee, len);
	ret = bam_nvme_write(qp, lba, nlb, wb, woff);
	if (ret) {
		snprintf(why, whylen, "write: %s", bam_nvme_errmsg());
		return 0;
	}
	ret = bam_nvme_read(qp, lba, nlb, rb, roff);
	if (ret) {
		snprintf(why, whylen, "read: %s", bam_nvme_errmsg());
		return 0;
	}
	bad = verify((char *)rb->vaddr + roff, lba, nlb, io->lbasz, seed);
	if (bad >= 0) {
		snprintf(why, whylen, "lba %llu nlb %u woff %zu roff %zu: word %ld differs",
			 (unsigned long long)lba, nlb, woff, roff, bad);
		return 0;
	}
	return 1;
}

static void io_sizes(struct io_ctx *io, struct bam_nvme_qp *qp)
{
	static const uint32_t bytes[] = { 512, 1024, 3584, 4096, 4608, 8192, 8704, 12288,
					  16384, 65536, 131072, 258048, 262144 };
	static const size_t offs[] = { 0, 512, 3584, 1028 };
	const struct bam_nvme_ctrl_info *info = bam_nvme_info(io->dev);
	struct bam_nvme_dma wb, rb;
	size_t bufsz = info->max_transfer + 8192;
	unsigned int si, oi, li, n = 0, bad = 0;
	uint64_t seed = 0x1234;
	char why[256] = "";
	int ret;

	ret = bam_nvme_dma_alloc(io->dev, bufsz, &wb);
	if (!ret)
		ret = bam_nvme_dma_alloc(io->dev, bufsz, &rb);
	if (!check(!ret, "io.dma_alloc", "%s", bam_nvme_errmsg()))
		return;

	for (si = 0; si <= sizeof(bytes) / sizeof(bytes[0]); si++) {
		uint32_t len = si < sizeof(bytes) / sizeof(bytes[0]) ? bytes[si] : info->max_transfer;
		uint32_t nlb = len / io->lbasz;

		if (!nlb || len > info->max_transfer)
			continue;
		for (oi = 0; oi < sizeof(offs) / sizeof(offs[0]); oi++) {
			uint64_t lbas[4] = { 0, 4095, 0, io->nlbas - nlb };

			lbas[2] = rng_next(&seed) % (io->nlbas - nlb);
			for (li = 0; li < 4; li++) {
				n++;
				if (!rw_verify(io, qp, &wb, &rb, lbas[li], nlb, offs[oi],
					       offs[(oi + 1) % 4], rng_next(&seed), why,
					       sizeof(why)))
					bad++;
			}
		}
	}
	check(!bad, "io.sizes_offsets_prp", "%u of %u transfers bad; last: %s", bad, n, why);

	/* Neighbours stay intact: write A, then B right after, read both. */
	{
		uint32_t nlb = 16;
		int ok = 1;

		fill(wb.vaddr, 1000, nlb, io->lbasz, 7);
		ok &= !bam_nvme_write(qp, 1000, nlb, &wb, 0);
		fill(wb.vaddr, 1000 + nlb, nlb, io->lbasz, 8);
		ok &= !bam_nvme_write(qp, 1000 + nlb, nlb, &wb, 0);
		ok &= !bam_nvme_read(qp, 1000, 2 * nlb, &rb, 0);
		ok = ok && verify(rb.vaddr, 1000, nlb, io->lbasz, 7) < 0 &&
		     verify((char *)rb.vaddr + nlb * io->lbasz, 1000 + nlb, nlb, io->lbasz, 8) < 0;
		check(ok, "io.adjacent_writes", "%s", bam_nvme_errmsg());
	}

	/* The caller's own memory, mapped in place. */
	{
		size_t sz = 64 << 10;
		void *mem = aligned_alloc(4096, sz);
		struct bam_nvme_dma own;
		int ok = 0;

		memset(mem, 0, sz);
		ret = bam_nvme_dma_map_host(io->dev, mem, sz, &own);
		if (!ret) {
			fill(wb.vaddr, 5000, 16, io->lbasz, 99);
			ok = !bam_nvme_write(qp, 5000, 16, &wb, 0) &&
			     !bam_nvme_read(qp, 5000, 16, &own, 4096) &&
			     verify((char *)mem + 4096, 5000, 16, io->lbasz, 99) < 0;
			bam_nvme_dma_free(io->dev, &own);
		}
		check(ok, "io.map_caller_memory", "ret %d %s", ret, bam_nvme_errmsg());
		ret = bam_nvme_dma_map_host(io->dev, (char *)mem + 8, 4096, &own);
		check(ret == -EINVAL, "io.map_caller_memory_unaligned", "ret %d", ret);
		free(mem);
	}

	/* Errors from the controller come back as readable NVMe statuses. */
	ret = bam_nvme_read(qp, io->nlbas, 1, &rb, 0);
	check(ret > 0 && BAM_NVME_SC(ret) == BAM_NVME_SC_LBA_RANGE &&
		      !strcmp(bam_nvme_strerror(ret), "LBA out of range"),
	      "io.status_lba_range", "got %d (%s)", ret, bam_nvme_strerror(ret));
	{
		struct bam_nvme_sqe cmd = { .opcode = 0xfe };

		ret = bam_nvme_admin(io->dev, &cmd, NULL);
		check(ret > 0 && BAM_NVME_SC(ret) == BAM_NVME_SC_INVALID_OPCODE,
		      "io.status_invalid_opcode", "got %d (%s)", ret, bam_nvme_strerror(ret));
	}
	ret = bam_nvme_write(qp, 0, info->max_transfer / io->lbasz + 1, &wb, 0);
	check(ret == -EINVAL, "io.too_large_rejected", "got %d", ret);
	ret = bam_nvme_flush(qp);
	check(!ret, "io.flush", "%s", bam_nvme_errmsg());
	{
		struct bam_nvme_cqe cqe;

		/* Nothing in flight: a bounded wait, and the queue stays usable. */
		ret = bam_nvme_qp_poll(qp, &cqe, 50);
		check(ret == -ETIMEDOUT && !bam_nvme_read(qp, 0, 1, &rb, 0), "io.poll_times_out",
		      "poll returned %d; %s", ret, bam_nvme_errmsg());
	}
	{
		struct bam_nvme_qp *extra[64];
		int n = 0;

		/* Asking for more queue pairs than granted fails cleanly. */
		while (n < 64 && !(ret = bam_nvme_qp_create(io->dev, 2, &extra[n])))
			n++;
		check(ret == -EBUSY && n == (int)info->io_queues - 1, "io.queue_ids_exhausted",
		      "created %d more (granted %u), ret %d", n, info->io_queues, ret);
		while (n--)
			bam_nvme_qp_destroy(extra[n]);
	}

	/* Fill the queue without reaping: the next submit is -EAGAIN. */
	{
		uint32_t i, slots = bam_nvme_qp_slots(qp), done = 0;
		struct bam_nvme_cqe cqe;
		uint16_t cid;
		int ok = 1;

		for (i = 0; i < slots; i++)
			ok &= !bam_nvme_qp_submit_rw(qp, BAM_NVME_CMD_READ, i * 8, 8, &rb,
						      (i % 16) * 4096, &cid);
		ret = bam_nvme_qp_submit_rw(qp, BAM_NVME_CMD_READ, 0, 1, &rb, 0, &cid);
		while (done < slots && !bam_nvme_qp_poll(qp, &cqe, 10000))
			done += !BAM_NVME_STATUS(cqe.status);
		check(ok && ret == -EAGAIN && done == slots, "io.queue_full_eagain",
		      "ok %d ret %d done %u/%u", ok, ret, done, slots);
	}

	bam_nvme_dma_free(io->dev, &rb);
	bam_nvme_dma_free(io->dev, &wb);
}

struct worker {
	struct io_ctx *io;
	int idx;
	uint64_t base, span;
	int ok;
	char why[256];
};

/* Keep up to 16 commands in flight on a private queue pair: write random
 * extents of a private region, then read them back and verify. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct io_ctx *io = w->io;
	const uint32_t nbuf = 16, maxnlb = 64;
	struct { uint64_t lba; uint32_t nlb; } ext[16];
	struct bam_nvme_dma wb, rb;
	struct bam_nvme_qp *qp;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (w->idx + 1);
	size_t slot = (size_t)maxnlb * io->lbasz;
	int round, i, ret;

	w->ok = 0;
	ret = bam_nvme_qp_create(io->dev, 32, &qp);
	if (ret) {
		snprintf(w->why, sizeof(w->why), "qp_create: %s", bam_nvme_errmsg());
		return NULL;
	}
	if (bam_nvme_dma_alloc(io->dev, slot * nbuf, &wb) ||
	    bam_nvme_dma_alloc(io->dev, slot * nbuf, &rb)) {
		snprintf(w->why, sizeof(w->why), "dma_alloc: %s", bam_nvme_errmsg());
		return NULL;
	}
	for (round = 0; round < 12; round++) {
		uint64_t rseed = rng_next(&seed);

		for (int pass = 0; pass < 2; pass++) {
			uint8_t op = pass ? BAM_NVME_CMD_READ : BAM_NVME_CMD_WRITE;
			struct bam_nvme_dma *b = pass ? &rb : &wb;
			struct bam_nvme_cqe cqe;
			uint16_t cid;

			for (i = 0; i < (int)nbuf; i++) {
				if (!pass) {
					ext[i].nlb = 1 + rng_next(&seed) % maxnlb;
					/* disjoint extents: slot i of the region */
					ext[i].lba = w->base + (uint64_t)i * maxnlb +
						     rng_next(&seed) % (maxnlb - ext[i].nlb + 1);
					fill((char *)wb.vaddr + i * slot, ext[i].lba, ext[i].nlb,
					     io->lbasz, rseed);
				} else {
					memset((char *)rb.vaddr + i * slot, 0, slot);
				}
				ret = bam_nvme_qp_submit_rw(qp, op, ext[i].lba, ext[i].nlb, b,
							    i * slot, &cid);
				if (ret) {
					snprintf(w->why, sizeof(w->why), "submit: %s",
						 bam_nvme_errmsg());
					return NULL;
				}
			}
			for (i = 0; i < (int)nbuf; i++) {
				ret = bam_nvme_qp_poll(qp, &cqe, 10000);
				if (ret || BAM_NVME_STATUS(cqe.status)) {
					snprintf(w->why, sizeof(w->why), "poll: %d status %#x %s",
						 ret, BAM_NVME_STATUS(cqe.status), bam_nvme_errmsg());
					return NULL;
				}
			}
		}
		for (i = 0; i < (int)nbuf; i++) {
			long bad = verify((char *)rb.vaddr + i * slot, ext[i].lba, ext[i].nlb,
					  io->lbasz, rseed);

			if (bad >= 0) {
				snprintf(w->why, sizeof(w->why), "round %d extent %d lba %llu: word %ld",
					 round, i, (unsigned long long)ext[i].lba, bad);
				return NULL;
			}
		}
	}
	bam_nvme_dma_free(io->dev, &wb);
	bam_nvme_dma_free(io->dev, &rb);
	ret = bam_nvme_qp_destroy(qp);
	if (ret) {
		snprintf(w->why, sizeof(w->why), "qp_destroy: %s", bam_nvme_errmsg());
		return NULL;
	}
	w->ok = 1;
	return NULL;
}

static int cmd_io(const char *path)
{
	struct bam_nvme_dev *dev = open_lib(path, 8);
	const struct bam_nvme_ctrl_info *info = bam_nvme_info(dev);
	struct io_ctx io = { dev, info->lba_size, info->nlbas };
	struct worker w[4];
	pthread_t th[4];
	struct bam_nvme_qp *qp;
	int i, ret, ok = 1;

	printf("BAMTEST: INFO model '%s' serial '%s' lba %u x %llu, %u queues, max xfer %u\n",
	       info->model, info->serial, info->lba_size, (unsigned long long)info->nlbas,
	       info->io_queues, info->max_transfer);
	check(info->lba_size >= 512 && info->nlbas > 16384 && info->io_queues >= 5,
	      "io.identify", "lba %u nlbas %llu queues %u", info->lba_size,
	      (unsigned long long)info->nlbas, info->io_queues);

	ret = bam_nvme_qp_create(dev, 0, &qp);
	if (!check(!ret, "io.qp_create", "%s", bam_nvme_errmsg()))
		return 1;
	io_sizes(&io, qp);

	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .io = &io, .idx = i, .base = 16384 + (uint64_t)i * 2048 };
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		if (!w[i].ok) {
			ok = 0;
			check(0, "io.parallel_queues", "worker %d: %s", i, w[i].why);
		}
	}
	if (ok)
		check(1, "io.parallel_queues", "-");

	ret = bam_nvme_qp_destroy(qp);
	check(!ret, "io.qp_destroy", "%s", bam_nvme_errmsg());
	bam_nvme_close(dev);
	check(dev_attr(path, "pinned_pages") == 0 && dev_attr(path, "mappings") == 0,
	      "io.no_pins_after_close", "pinned %ld mappings %ld",
	      dev_attr(path, "pinned_pages"), dev_attr(path, "mappings"));
	return failures != 0;
}

/* ---- timeout --------------------------------------------------------- */

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Pull CC.EN from under the library: every wait must end in a timeout. */
static int cmd_timeout(const char *path)
{
	struct bam_nvme_opts o = { .io_queues = 2, .admin_timeout_ms = 300, .io_timeout_ms = 300 };
	volatile uint32_t *bar;
	struct bam_nvme_dev *dev;
	struct bam_nvme_dma buf;
	struct bam_nvme_qp *qp;
	uint64_t t0;
	int ret;

	ret = bam_nvme_open(path, &o, &dev);
	if (ret)
		die("timeout: open", ret);
	if (bam_nvme_qp_create(dev, 8, &qp) || bam_nvme_dma_alloc(dev, 8192, &buf))
		die("timeout: setup", -EIO);
	bar = bam_nvme_bar(dev);
	bar[BAM_NVME_REG_CC / 4] &= ~BAM_NVME_CC_EN;
	while (bar[BAM_NVME_REG_CSTS / 4] & BAM_NVME_CSTS_RDY)
		usleep(1000);

	t0 = ms_now();
	ret = bam_nvme_read(qp, 0, 8, &buf, 0);
	check(ret == -ETIMEDOUT && ms_now() - t0 < 5000, "timeout.io", "ret %d after %llu ms",
	      ret, (unsigned long long)(ms_now() - t0));
	ret = bam_nvme_read(qp, 0, 8, &buf, 0);
	check(ret == -EIO, "timeout.queue_retired", "ret %d (%s)", ret, bam_nvme_errmsg());
	t0 = ms_now();
	ret = bam_nvme_qp_destroy(qp);
	check(ret == -ETIMEDOUT, "timeout.admin", "ret %d (%s)", ret, bam_nvme_errmsg());
	ret = bam_nvme_qp_create(dev, 8, &qp);
	check(ret == -EIO, "timeout.admin_retired", "ret %d (%s)", ret, bam_nvme_errmsg());
	bam_nvme_dma_free(dev, &buf);
	bam_nvme_close(dev);
	check(ms_now() - t0 < 5000, "timeout.close_bounded", "%llu ms",
	      (unsigned long long)(ms_now() - t0));
	return failures != 0;
}

static void map_init(struct bam_kmod_map *m, void *va, size_t len, uint64_t *addrs, size_t n);
static int do_unmap(int fd, uint64_t handle);

/* ---- map/unmap churn from several threads ----------------------------- */

struct churn {
	int fd;
	char *buf;     /* 64 pages */
	size_t ps;
	int stop_ms;   /* run this long, or until ENODEV when 0 */
	long maps;
	int bad_errno; /* first unexpected errno */
	int saw_enodev;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint64_t addrs[64], end = c->stop_ms ? ms_now() + c->stop_ms : 0, seed = (uintptr_t)c;
	struct bam_kmod_map m;

	for (;;) {
		size_t off = rng_next(&seed) % 32, n = 1 + rng_next(&seed) % 32;

		if (end && ms_now() > end)
			break;
		map_init(&m, c->buf + off * c->ps, n * c->ps, addrs, 64);
		if (ioctl(c->fd, BAM_IOC_MAP_HOST, &m)) {
			if (errno == ENODEV) {
				c->saw_enodev = 1;
				break;
			}
			c->bad_errno = errno;
			break;
		}
		c->maps++;
		if (do_unmap(c->fd, m.handle) && errno != ENODEV) {
			c->bad_errno = errno;
			break;
		}
	}
	return NULL;
}

/* Start @n churn threads on @fd over @buf. */
static void churn_start(struct churn *c, pthread_t *th, int n, int fd, char *buf, int stop_ms)
{
	int i;

	for (i = 0; i < n; i++) {
		c[i] = (struct churn){ .fd = fd, .buf = buf, .ps = (size_t)sysconf(_SC_PAGESIZE),
				       .stop_ms = stop_ms };
		pthread_create(&th[i], NULL, churn_main, &c[i]);
	}
}

/* ---- abi ------------------------------------------------------------- */

static void map_init(struct bam_kmod_map *m, void *va, size_t len, uint64_t *addrs, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->version = BAM_KMOD_ABI_VERSION;
	m->vaddr = (uintptr_t)va;
	m->length = len;
	m->addrs = (uintptr_t)addrs;
	m->naddrs = n;
}

static int expect_errno(int fd, unsigned long cmd, void *arg, int want, const char *name)
{
	int ret = ioctl(fd, cmd, arg);
	int err = ret < 0 ? errno : 0;

	return check(ret < 0 && err == want, name, "ioctl returned %d errno %d (%s), want %s",
		     ret, err, strerror(err), strerror(want));
}

static int do_unmap(int fd, uint64_t handle)
{
	struct bam_kmod_unmap u = { sizeof(u), BAM_KMOD_ABI_VERSION, handle };

	return ioctl(fd, BAM_IOC_UNMAP, &u) ? -errno : 0;
}

static int cmd_abi(const char *path)
{
	const size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	struct bam_kmod_info info;
	struct bam_kmod_map m;
	unsigned char big[sizeof(info) + 64];
	uint64_t addrs[4096];
	long pins0 = pins_outstanding();
	char *buf, *ro, *hole;
	void *bar;
	int fd, i, ret;

	fd = open(path, O_RDWR);
	if (!check(fd >= 0, "abi.open", "%s: %s", path, strerror(errno)))
		return 1;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = BAM_KMOD_ABI_VERSION;
	ret = ioctl(fd, BAM_IOC_INFO, &info);
	check(!ret && info.size == sizeof(info) && info.page_size == ps &&
		      info.bar0_size >= 0x2000 && info.vendor_id == 0x1b36 &&
		      info.max_map_bytes >= (64u << 20),
	      "abi.info", "ret %d size %u page %u bar %llu vendor %#x", ret, info.size,
	      info.page_size, (unsigned long long)info.bar0_size, info.vendor_id);

	{
		struct bam_kmod_info bad = info;

		bad.size = 0;
		expect_errno(fd, BAM_IOC_INFO, &bad, EINVAL, "abi.size_zero");
		bad.size = 4;
		expect_errno(fd, BAM_IOC_INFO, &bad, EINVAL, "abi.size_short");
		bad.size = 1u << 20;
		expect_errno(fd, BAM_IOC_INFO, &bad, EINVAL, "abi.size_huge");
		bad.size = sizeof(bad);
		bad.version = 0;
		expect_errno(fd, BAM_IOC_INFO, &bad, EINVAL, "abi.version_zero");
		bad.version = BAM_KMOD_ABI_VERSION + 1;
		expect_errno(fd, BAM_IOC_INFO, &bad, EINVAL, "abi.version_future");
	}

	/* Longer struct from a newer user space: fine if the tail is zero. */
	{
		struct bam_kmod_info hdr = { .size = sizeof(big),
					     .version = BAM_KMOD_ABI_VERSION };

		memset(big, 0, sizeof(big));
		memcpy(big, &hdr, sizeof(hdr));
		ret = ioctl(fd, BAM_IOC_INFO, big);
		memcpy(&hdr, big, sizeof(hdr));
		check(!ret && hdr.size == sizeof(hdr) && hdr.bar0_size == info.bar0_size,
		      "abi.size_longer_zero_tail", "ret %d errno %d size %u", ret, errno,
		      hdr.size);
		memset(big, 0, sizeof(big));
		hdr.size = sizeof(big);
		memcpy(big, &hdr, sizeof(hdr));
		big[sizeof(big) - 1] = 1;
		expect_errno(fd, BAM_IOC_INFO, big, E2BIG, "abi.size_longer_nonzero_tail");
	}

	check(lseek(fd, 0, SEEK_SET) < 0 && errno == ESPIPE, "abi.not_seekable", "errno %d", errno);
	expect_errno(fd, BAM_IOC_INFO, NULL, EFAULT, "abi.null_arg");
	expect_errno(fd, _IO(BAM_KMOD_IOC_MAGIC, 0x7f), &info, ENOTTY, "abi.unknown_cmd");
	expect_errno(fd, _IOWR(BAM_KMOD_IOC_MAGIC, 0x01, char[60]), &m, ENOTTY,
		     "abi.cmd_wrong_size");
	expect_errno(fd, _IOWR('N', 0x41, int), &m, ENOTTY, "abi.foreign_cmd");

	buf = mmap(NULL, 64 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, 4 * ps, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole + ps, 3 * ps); /* hole: one mapped page, then nothing */
	memset(buf, 1, 64 * ps);
	hole[0] = 1;

	map_init(&m, buf, 8 * ps, addrs, 8);
	ret = ioctl(fd, BAM_IOC_MAP_HOST, &m);
	if (check(!ret && m.handle && m.npages == 8 && m.page_size == ps,
		  "abi.map_ok", "ret %d errno %d handle %llu npages %u", ret, errno,
		  (unsigned long long)m.handle, m.npages)) {
		int sane = 1;

		for (i = 0; i < 8; i++)
			sane &= addrs[i] && !(addrs[i] % ps);
		printf("BAMTEST: INFO first bus address %#llx\n", (unsigned long long)addrs[0]);
		check(sane && dev_attr(path, "pinned_pages") == 8 &&
			      dev_attr(path, "mappings") == 1,
		      "abi.map_addrs_and_accounting", "pinned %ld maps %ld",
		      dev_attr(path, "pinned_pages"), dev_attr(path, "mappings"));
		check(!do_unmap(fd, m.handle), "abi.unmap_ok", "%s", strerror(errno));
		check(do_unmap(fd, m.handle) == -ENOENT, "abi.unmap_twice", "-");
	}
	check(do_unmap(fd, 0) == -ENOENT, "abi.unmap_handle_zero", "-");
	check(do_unmap(fd, 12345) == -ENOENT, "abi.unmap_unknown", "-");
	check(do_unmap(fd, ~0ull) == -ENOENT, "abi.unmap_huge_handle", "-");
	{
		struct bam_kmod_unmap u = { sizeof(u), 99, 1 };

		expect_errno(fd, BAM_IOC_UNMAP, &u, EINVAL, "abi.unmap_bad_version");
	}

	map_init(&m, buf + 1, ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_unaligned_addr");
	map_init(&m, buf, ps + 1, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_unaligned_len");
	map_init(&m, buf, 0, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_zero_len");
	map_init(&m, buf, 1ull << 40, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, E2BIG, "abi.map_huge_len");
	map_init(&m, buf, info.max_map_bytes + ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, E2BIG, "abi.map_over_limit");
	map_init(&m, (void *)(uintptr_t)(~0ull & ~(uint64_t)(ps - 1)), 2 * ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_wraps");
	map_init(&m, (void *)(uintptr_t)0xffff800000000000ull, ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_kernel_addr");
	map_init(&m, hole + ps, 2 * ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EFAULT, "abi.map_unmapped");
	map_init(&m, hole, 4 * ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EFAULT, "abi.map_partly_unmapped");
	map_init(&m, ro, 2 * ps, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EFAULT, "abi.map_readonly_memory");
	map_init(&m, buf, 8 * ps, addrs, 7);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EOVERFLOW, "abi.map_addrs_too_small");
	map_init(&m, buf, 8 * ps, NULL, 8);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EFAULT, "abi.map_addrs_null");
	map_init(&m, buf, 2 * ps, (uint64_t *)ro, 2);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EFAULT, "abi.map_addrs_readonly");
	map_init(&m, buf, ps, addrs, 4);
	m.flags = 1;
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_flags");
	map_init(&m, buf, ps, addrs, 4);
	m.rsvd = 1;
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_rsvd");
	map_init(&m, buf, ps, addrs, 4);
	m.size = 16;
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, EINVAL, "abi.map_short_size");
	map_init(&m, buf, 1 << 16, addrs, 4);
	expect_errno(fd, BAM_IOC_MAP_GPU, &m,
		     info.flags & BAM_KMOD_INFO_GPU ? EINVAL : EOPNOTSUPP, "abi.map_gpu");
	check(dev_attr(path, "pinned_pages") == 0 && dev_attr(path, "mappings") == 0 &&
		      pins_outstanding() == pins0,
	      "abi.no_leak_after_errors", "pinned %ld maps %ld pins %ld (was %ld)",
	      dev_attr(path, "pinned_pages"), dev_attr(path, "mappings"),
	      pins_outstanding(), pins0);

	/* Four threads mapping and unmapping overlapping ranges at once. */
	{
		struct churn c[4];
		pthread_t th[4];
		long total = 0;
		int bad = 0;

		churn_start(c, th, 4, fd, buf, 500);
		for (i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			total += c[i].maps;
			bad |= c[i].bad_errno;
		}
		check(!bad && total > 0 && dev_attr(path, "pinned_pages") == 0 &&
			      dev_attr(path, "mappings") == 0 && pins_outstanding() == pins0,
		      "abi.concurrent_map_unmap", "%ld maps, errno %d, pinned %ld maps %ld", total,
		      bad, dev_attr(path, "pinned_pages"), dev_attr(path, "mappings"));
	}

	/* Big mapping; then many mappings left for close() to clean up. */
	{
		size_t n = (32u << 20) / ps;
		char *b = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		uint64_t *a = calloc(n, sizeof(*a));

		map_init(&m, b, n * ps, a, n);
		ret = ioctl(fd, BAM_IOC_MAP_HOST, &m);
		check(!ret && m.npages == n && dev_attr(path, "pinned_pages") == (long)n,
		      "abi.map_32mib", "ret %d errno %d", ret, errno);
		for (i = 0; i < 200; i++) {
			map_init(&m, buf + (i % 64) * ps, ps, addrs, 1);
			if (ioctl(fd, BAM_IOC_MAP_HOST, &m))
				break;
		}
		check(i == 200 && dev_attr(path, "mappings") == 201, "abi.map_many",
		      "i %d maps %ld", i, dev_attr(path, "mappings"));
		free(a);
	}

	/* mmap of BAR0: shared, offset 0, no bigger than the BAR. */
	bar = mmap(NULL, info.bar0_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(bar != MAP_FAILED && ((volatile uint32_t *)bar)[2] >= 0x10000, "abi.mmap_bar",
	      "%s", bar == MAP_FAILED ? strerror(errno) : "VS register reads 0");
	if (bar != MAP_FAILED)
		munmap(bar, info.bar0_size);
	if (bar != MAP_FAILED) {
		bar = mmap(NULL, info.bar0_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		map_init(&m, bar, 2 * ps, addrs, 4);
		expect_errno(fd, BAM_IOC_MAP_HOST, &m, EFAULT, "abi.map_of_bar_refused");
		munmap(bar, info.bar0_size);
	}
	check(mmap(NULL, info.bar0_size + ps, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED &&
		      errno == EINVAL, "abi.mmap_too_big", "errno %d", errno);
	check(mmap(NULL, ps, PROT_READ, MAP_SHARED, fd, ps) == MAP_FAILED && errno == EINVAL,
	      "abi.mmap_offset", "errno %d", errno);
	check(mmap(NULL, ps, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED && errno == EINVAL,
	      "abi.mmap_private", "errno %d", errno);

	close(fd);
	check(dev_attr(path, "pinned_pages") == 0 && dev_attr(path, "mappings") == 0 &&
		      pins_outstanding() == pins0,
	      "abi.close_releases_all", "pinned %ld maps %ld pins %ld (was %ld)",
	      dev_attr(path, "pinned_pages"), dev_attr(path, "mappings"),
	      pins_outstanding(), pins0);
	return failures != 0;
}

/* ---- perm ------------------------------------------------------------ */

/* Run @fn in a child; return its exit status. */
static int in_child(int (*fn)(const char *), const char *arg)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int open_errno(const char *path)
{
	int fd = open(path, O_RDWR);

	if (fd >= 0)
		return 0;
	return errno;
}

static int as_user_open(const char *path)
{
	if (setgid(1000) || setuid(1000))
		return 255;
	return open_errno(path);
}

static int without_rawio_open(const char *path)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 254;
	d[CAP_TO_INDEX(CAP_SYS_RAWIO)].effective &= ~CAP_TO_MASK(CAP_SYS_RAWIO);
	if (syscall(SYS_capset, &h, d))
		return 253;
	return open_errno(path);
}

static int cmd_perm(const char *path)
{
	const char *alias = "/tmp/bam_nvme_0666";
	struct stat st;
	int ret;

	ret = stat(path, &st);
	check(!ret && S_ISCHR(st.st_mode) && (st.st_mode & 07777) == 0600 && st.st_uid == 0,
	      "perm.node_mode_0600", "mode %o uid %u", st.st_mode & 07777, st.st_uid);

	ret = in_child(as_user_open, path);
	check(ret == EACCES, "perm.uid1000_refused", "child open errno %d", ret);

	/* Even with the node opened up, the capability check refuses. */
	unlink(alias);
	if (mknod(alias, S_IFCHR | 0666, st.st_rdev) || chmod(alias, 0666)) {
		check(0, "perm.uid1000_on_0666_node", "mknod: %s", strerror(errno));
	} else {
		ret = in_child(as_user_open, alias);
		check(ret == EPERM, "perm.uid1000_on_0666_node", "child open errno %d", ret);
		unlink(alias);
	}
	ret = in_child(without_rawio_open, path);
	check(ret == EPERM, "perm.root_without_cap_sys_rawio", "child open errno %d", ret);
	ret = open_errno(path);
	check(ret == 0, "perm.root_allowed", "errno %d", ret);
	return failures != 0;
}

/* ---- death ----------------------------------------------------------- */

static int die_with_queues(const char *path)
{
	struct bam_nvme_dev *dev = open_lib(path, 4);
	struct bam_nvme_dma buf, extra;
	struct bam_nvme_qp *qp;
	uint16_t cid;
	int i;

	if (bam_nvme_qp_create(dev, 32, &qp) || bam_nvme_dma_alloc(dev, 1 << 20, &buf) ||
	    bam_nvme_dma_alloc(dev, 4 << 20, &extra))
		return 2;
	for (i = 0; i < 16; i++)
		bam_nvme_qp_submit_rw(qp, i % 2 ? BAM_NVME_CMD_READ : BAM_NVME_CMD_WRITE,
				      (uint64_t)i * 128, 128, &buf, 0, &cid);
	/*
	 * Reap before dying: QEMU 7.2's emulated controller crashes (a
	 * use-after-free in nvme_rw_complete_cb) when it is reset with reads
	 * still in flight, which is what the module's quiesce does. The
	 * controller is still enabled with live queues when the process dies.
	 */
	for (i = 0; i < 16; i++) {
		struct bam_nvme_cqe cqe;

		if (bam_nvme_qp_poll(qp, &cqe, 10000))
			return 4;
	}
	kill(getpid(), SIGKILL);
	return 3;
}

static int cmd_death(const char *path)
{
	long pins0 = pins_outstanding();
	volatile uint32_t *bar;
	int st, fd;
	pid_t pid = fork();

	if (pid == 0)
		_exit(die_with_queues(path));
	waitpid(pid, &st, 0);
	check(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "death.child_killed",
	      "status %#x", st);
	check(dev_attr(path, "pinned_pages") == 0 && dev_attr(path, "mappings") == 0 &&
		      pins_outstanding() == pins0,
	      "death.pins_released", "pinned %ld maps %ld pins %ld (was %ld)",
	      dev_attr(path, "pinned_pages"), dev_attr(path, "mappings"),
	      pins_outstanding(), pins0);

	fd = open(path, O_RDWR);
	bar = fd < 0 ? MAP_FAILED : mmap(NULL, 0x2000, PROT_READ, MAP_SHARED, fd, 0);
	check(bar != MAP_FAILED && !(bar[BAM_NVME_REG_CC / 4] & BAM_NVME_CC_EN) &&
		      !(bar[BAM_NVME_REG_CSTS / 4] & BAM_NVME_CSTS_RDY),
	      "death.controller_disabled", "CC %#x CSTS %#x",
	      bar == MAP_FAILED ? 0 : bar[BAM_NVME_REG_CC / 4],
	      bar == MAP_FAILED ? 0 : bar[BAM_NVME_REG_CSTS / 4]);
	if (bar != MAP_FAILED)
		munmap((void *)bar, 0x2000);
	if (fd >= 0)
		close(fd);
	return failures != 0;
}

/* ---- hold (unbind while open) ----------------------------------------- */

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jmp, 1);
}

static int wait_file(const char *p, int secs)
{
	int i;

	for (i = 0; i < secs * 100; i++) {
		if (!access(p, F_OK))
			return 1;
		usleep(10000);
	}
	return 0;
}

static int cmd_hold(const char *path, const char *dir)
{
	struct bam_nvme_dev *dev = open_lib(path, 2);
	volatile uint32_t *bar = bam_nvme_bar(dev);
	struct bam_nvme_dma buf;
	struct bam_kmod_map m;
	uint64_t addrs[16];
	char ready[256], go[256];
	volatile uint32_t v = 0;
	int fd = bam_nvme_fd(dev), got_bus = 0, churn_ok = 1;
	struct churn c[2];
	pthread_t th[2];
	char *cbuf;

	snprintf(ready, sizeof(ready), "%s/ready", dir);
	snprintf(go, sizeof(go), "%s/go", dir);
	if (bam_nvme_dma_alloc(dev, 16 * 4096, &buf))
		die("hold: dma_alloc", -ENOMEM);
	v = bar[BAM_NVME_REG_VS / 4];
	/* Keep mapping and unmapping while the device is unbound under us. */
	cbuf = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	churn_start(c, th, 2, fd, cbuf, 0);
	close(open(ready, O_CREAT | O_WRONLY, 0600));
	if (!check(wait_file(go, 30), "hold.unbind_signalled", "no %s", go))
		return 1;
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		churn_ok &= c[i].saw_enodev && !c[i].bad_errno;
	}
	check(churn_ok, "hold.racing_ioctls_end_enodev", "enodev %d/%d errno %d/%d",
	      c[0].saw_enodev, c[1].saw_enodev, c[0].bad_errno, c[1].bad_errno);

	signal(SIGBUS, on_sigbus);
	if (sigsetjmp(bus_jmp, 1) == 0)
		v = bar[BAM_NVME_REG_VS / 4];
	else
		got_bus = 1;
	check(got_bus, "hold.bar_revoked_sigbus", "BAR still readable after unbind (%#x)", v);
	map_init(&m, buf.vaddr, 4096, addrs, 16);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, ENODEV, "hold.ioctl_enodev");
	check(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == ENODEV,
	      "hold.mmap_enodev", "errno %d", errno);
	/* Everything was torn down at unbind; closing must still be clean. */
	free(buf.bus);
	close(fd);
	return failures != 0;
}

/* ---- security: isolation, ownership, accounting (issue 20) ------------ */

/* Physical address of the page at @va in process @pid (root only). */
static uint64_t phys_of(pid_t pid, const void *va)
{
	char p[64];
	uint64_t e = 0;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/pagemap", (int)pid);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &e, 8, (off_t)((uintptr_t)va / 4096) * 8) != 8)
		e = 0;
	close(fd);
	if (!(e >> 63) || !(e & ((1ull << 55) - 1)))
		return 0;
	return (e & ((1ull << 55) - 1)) * 4096 + (uintptr_t)va % 4096;
}

/* Have the controller read one 4 KiB block into bus address @bus (which
 * the caller knows is not mapped any more). Returns the NVMe status (0
 * if the controller reported success), or -1 if nothing completed. */
static int read_to_bus(struct bam_nvme_qp *qp, uint32_t lbasz, uint64_t lba, uint64_t bus)
{
	struct bam_nvme_dma fake = { .size = 4096, .page_size = 4096, .bus = &bus, .npages = 1 };
	struct bam_nvme_cqe cqe;
	uint16_t cid;

	if (bam_nvme_qp_submit_rw(qp, BAM_NVME_CMD_READ, lba, 4096 / lbasz, &fake, 0, &cid))
		return -1;
	if (bam_nvme_qp_poll(qp, &cqe, 10000))
		return -1;
	return BAM_NVME_STATUS(cqe.status);
}

static int all_bytes(const void *p, int c, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (uint8_t)c)
			return 0;
	return 1;
}

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t n = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = atol(line + n + 1);
	fclose(f);
	return v;
}

static int map_one(int fd, void *va, size_t len, uint64_t *addrs, uint64_t *handle)
{
	struct bam_kmod_map m;

	map_init(&m, va, len, addrs, len / 4096);
	if (ioctl(fd, BAM_IOC_MAP_HOST, &m))
		return -errno;
	*handle = m.handle;
	return 0;
}

/* The controller reads into pages right after UNMAP returned, into pages
 * unmapped and munmapped (and reused), and into another process's page by
 * its physical address: nothing may land. */
static void sec_dma(const char *path)
{
	struct bam_nvme_dev *dev = open_lib(path, 2);
	const struct bam_nvme_ctrl_info *info = bam_nvme_info(dev);
	uint32_t lbasz = info->lba_size;
	const uint64_t lba = 2048;
	struct bam_nvme_dma wb, rb;
	struct bam_nvme_qp *qp;
	int fd = bam_nvme_fd(dev), round, landed = 0, errors = 0, st, ok;
	uint64_t handle, addrs[16];
	int pfd[2], gfd[2];
	pid_t pid;

	if (bam_nvme_qp_create(dev, 8, &qp) || bam_nvme_dma_alloc(dev, 4096, &wb) ||
	    bam_nvme_dma_alloc(dev, 4096, &rb))
		die("sec: setup", -EIO);
	memset(wb.vaddr, 0xc3, 4096);
	ok = !bam_nvme_write(qp, lba, 4096 / lbasz, &wb, 0) &&
	     !bam_nvme_read(qp, lba, 4096 / lbasz, &rb, 0) && all_bytes(rb.vaddr, 0xc3, 4096);
	check(ok, "sec.dma_setup", "%s", bam_nvme_errmsg());

	/* 1. Right after UNMAP: the page is still the process's. */
	for (round = 0; round < 20; round++) {
		char *v = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		memset(v, 0x5a, 4096);
		if (map_one(fd, v, 4096, addrs, &handle) || do_unmap(fd, handle)) {
			errors++;
		} else {
			st = read_to_bus(qp, lbasz, lba, addrs[0]);
			if (st < 0)
				errors++;
			if (!all_bytes(v, 0x5a, 4096))
				landed++;
		}
		munmap(v, 4096);
	}
	check(!landed && !errors, "sec.no_dma_after_unmap",
	      "%d of 20 reads landed in unmapped pages, %d setup errors", landed, errors);

	/* 2. After munmap: the pages go back and are reused by new memory. */
	landed = errors = 0;
	for (round = 0; round < 10; round++) {
		char *v = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		char *reuse;
		int i;

		memset(v, 0x11, 16 * 4096);
		if (map_one(fd, v, 16 * 4096, addrs, &handle) || do_unmap(fd, handle)) {
			errors++;
			munmap(v, 16 * 4096);
			continue;
		}
		munmap(v, 16 * 4096);
		reuse = mmap(NULL, 256 * 4096, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		memset(reuse, 0x22, 256 * 4096);
		for (i = 0; i < 16; i++)
			if (read_to_bus(qp, lbasz, lba, addrs[i]) < 0)
				errors++;
		if (!all_bytes(reuse, 0x22, 256 * 4096))
			landed++;
		munmap(reuse, 256 * 4096);
	}
	check(!landed && !errors, "sec.no_dma_after_munmap_reuse",
	      "%d of 10 rounds saw a write in reused memory, %d errors", landed, errors);

	/* 3. A process that never opened the device: its page by physical
	 * address (what the controller would reach without translation). */
	if (pipe(pfd) == 0 && pipe(gfd) == 0) {
		pid = fork();
		if (pid == 0) {
			char *v = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
			uint64_t va = (uintptr_t)v;
			char c;

			memset(v, 0x33, 4096);
			close(pfd[0]);
			close(gfd[1]);
			if (write(pfd[1], &va, 8) != 8)
				_exit(3);
			/* wait until the parent is done: EOF on gfd */
			while (read(gfd[0], &c, 1) > 0)
				;
			_exit(all_bytes(v, 0x33, 4096) ? 0 : 1);
		}
		{
			uint64_t va = 0, phys = 0;

			close(pfd[1]);
			close(gfd[0]);
			if (read(pfd[0], &va, 8) == 8)
				phys = phys_of(pid, (void *)(uintptr_t)va);
			close(pfd[0]);
			st = phys ? read_to_bus(qp, lbasz, lba, phys) : -2;
			close(gfd[1]);
			waitpid(pid, &ok, 0);
			check(phys && st >= -1 && WIFEXITED(ok) && WEXITSTATUS(ok) == 0,
			      "sec.no_dma_to_other_process", "phys %#llx status %d child %#x",
			      (unsigned long long)phys, st, ok);
		}
	}

	/* The queue still works for mapped memory. */
	memset(rb.vaddr, 0, 4096);
	ok = !bam_nvme_read(qp, lba, 4096 / lbasz, &rb, 0) && all_bytes(rb.vaddr, 0xc3, 4096);
	check(ok, "sec.queue_works_after_blocked_dma", "%s", bam_nvme_errmsg());
	bam_nvme_dma_free(dev, &rb);
	bam_nvme_dma_free(dev, &wb);
	bam_nvme_qp_destroy(qp);
	bam_nvme_close(dev);
}

/*
 * The admin SQ lives in the module's domain at the first IOVA it allocates
 * (the top of its 39-bit space: 0x7fffffe000, CQ a page above). Read a
 * block full of Format NVM commands there and ring the admin SQ doorbell:
 * had the controller been able to write the SQ, it would now format the
 * namespace, bypassing the CAP_SYS_ADMIN filter. The data must survive.
 */
static void sec_admin_sq(const char *path)
{
	const uint64_t sq_iova = 0x7fffffe000ull, keep = 4096, planted = 8192;
	struct bam_nvme_dev *dev = open_lib(path, 2);
	uint32_t lbasz = bam_nvme_info(dev)->lba_size;
	struct bam_nvme_dma buf;
	struct bam_nvme_qp *qp;
	volatile uint32_t *bar = bam_nvme_bar(dev);
	uint32_t *sqe;
	int i, st, ok;

	if (bam_nvme_qp_create(dev, 8, &qp) || bam_nvme_dma_alloc(dev, 4096, &buf))
		die("sec: admin sq setup", -EIO);
	memset(buf.vaddr, 0xa5, 4096);
	ok = !bam_nvme_write(qp, keep, 4096 / lbasz, &buf, 0);
	for (i = 0, sqe = buf.vaddr; i < 64; i++, sqe += 16) {
		memset(sqe, 0, 64);
		sqe[0] = 0x80 | 0x4242u << 16; /* Format NVM */
		sqe[1] = 1;                    /* namespace 1 */
	}
	ok = ok && !bam_nvme_write(qp, planted, 4096 / lbasz, &buf, 0);
	st = ok ? read_to_bus(qp, lbasz, planted, sq_iova) : -3;
	/* the doorbell page is the owner's: ring SQ 0 as if 31 were queued */
	bar[0x1000 / 4] = 31;
	usleep(300000);
	bam_nvme_dma_free(dev, &buf);
	bam_nvme_qp_destroy(qp);
	bam_nvme_close(dev);

	dev = open_lib(path, 2);
	if (bam_nvme_qp_create(dev, 8, &qp) || bam_nvme_dma_alloc(dev, 4096, &buf))
		die("sec: admin sq reopen", -EIO);
	memset(buf.vaddr, 0, 4096);
	ok = ok && !bam_nvme_read(qp, keep, 4096 / lbasz, &buf, 0) && all_bytes(buf.vaddr, 0xa5, 4096);
	check(ok, "sec.admin_sq_not_device_writable", "read into the admin SQ: status %d; data %s",
	      st, all_bytes(buf.vaddr, 0xa5, 4096) ? "kept" : "gone (formatted?)");
	bam_nvme_dma_free(dev, &buf);
	bam_nvme_qp_destroy(qp);
	bam_nvme_close(dev);
}

/* One owner: a second open is EBUSY while the first is open. */
static void sec_open(const char *path)
{
	int fd = open(path, O_RDWR), fd2, err, fd3;

	fd2 = open(path, O_RDWR);
	err = fd2 < 0 ? errno : 0;
	check(fd >= 0 && fd2 < 0 && err == EBUSY, "sec.second_open_ebusy",
	      "first %d second %d errno %d", fd, fd2, err);
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0)
		close(fd);
	fd3 = open(path, O_RDWR);
	check(fd3 >= 0, "sec.open_after_close", "errno %d", errno);
	if (fd3 >= 0)
		close(fd3);
}

static int drop_caps(uint64_t mask)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int i;

	if (syscall(SYS_capget, &h, d))
		return -1;
	for (i = 0; i < 2; i++) {
		d[i].effective &= ~(uint32_t)(mask >> (32 * i));
		d[i].permitted &= ~(uint32_t)(mask >> (32 * i));
	}
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

static int admin_errno(int fd, uint32_t cdw0, uint32_t cdw10, uint64_t prp1, uint16_t *status)
{
	struct bam_kmod_admin a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.version = BAM_KMOD_ABI_VERSION;
	a.timeout_ms = 5000;
	a.cmd[0] = cdw0;
	a.cmd[1] = 1; /* nsid */
	a.cmd[6] = (uint32_t)prp1;
	a.cmd[7] = (uint32_t)(prp1 >> 32);
	a.cmd[10] = cdw10;
	if (ioctl(fd, BAM_IOC_ADMIN, &a))
		return errno;
	if (status)
		*status = a.status;
	return 0;
}

/* Without CAP_SYS_ADMIN (but with CAP_SYS_RAWIO): the admin commands a
 * queue set-up needs work, others are EPERM, registers are read-only. */
static int unprivileged_admin_child(const char *path)
{
	struct bam_kmod_enable en = { sizeof(en), BAM_KMOD_ABI_VERSION, 0, 0 };
	volatile uint32_t *bar;
	uint64_t addrs[1], handle;
	uint16_t st = 0xffff;
	char *idbuf;
	volatile int bad = 0;
	int fd;

	if (drop_caps(1ull << CAP_SYS_ADMIN))
		return 100;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 101;
	if (ioctl(fd, BAM_IOC_ENABLE, &en))
		return 102;
	idbuf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (map_one(fd, idbuf, 4096, addrs, &handle))
		return 103;
	/* identify controller: allowed */
	if (admin_errno(fd, 0x06, 1, addrs[0], &st) || st || !idbuf[4])
		bad |= 1;
	/* set features number of queues: allowed */
	if (admin_errno(fd, 0x09, 0x07, 0, &st))
		bad |= 2;
	/* format NVM, sanitize, firmware commit, vendor, set features (write
	 * cache), get log page: EPERM */
	if (admin_errno(fd, 0x80, 0, 0, NULL) != EPERM || admin_errno(fd, 0x84, 0, 0, NULL) != EPERM ||
	    admin_errno(fd, 0x10, 0, 0, NULL) != EPERM || admin_errno(fd, 0xc0, 0, 0, NULL) != EPERM ||
	    admin_errno(fd, 0x09, 0x06, 0, NULL) != EPERM ||
	    admin_errno(fd, 0x09, 0x80000007, 0, NULL) != EPERM ||
	    admin_errno(fd, 0x02, 0, addrs[0], NULL) != EPERM)
		bad |= 4;
	/* fused or SGL admin commands: EINVAL for everyone */
	if (admin_errno(fd, 0x06 | 1 << 8, 1, addrs[0], NULL) != EINVAL)
		bad |= 8;
	bar = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED)
		return 104;
	if (bar[BAM_NVME_REG_VS / 4] < 0x10000)
		bad |= 16;
	/* a doorbell write is fine (CQ head of queue 0 at its current value
	 * would confuse the module's queue: write an unused I/O queue's) */
	signal(SIGBUS, on_sigbus);
	if (sigsetjmp(bus_jmp, 1) == 0) {
		bar[BAM_NVME_REG_CC / 4] = 0; /* must not reach the register */
		bad |= 32;
	}
	if (!(bar[BAM_NVME_REG_CC / 4] & BAM_NVME_CC_EN))
		bad |= 64;
	return bad;
}

/* Pins are charged to RLIMIT_MEMLOCK (VmPin), once per page. */
static int memlock_child(const char *path)
{
	struct rlimit rl = { 1 << 20, 1 << 20 };
	uint64_t *addrs = calloc(512, 8), h1, h2, h3;
	char *buf = mmap(NULL, 512 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	int fd, bad = 0, ret;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 100;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 101;
	if (map_one(fd, buf, 256 * 4096, addrs, &h1) || status_kb("VmPin") != 1024)
		bad |= 1;
	/* the same pages again: counted once */
	if (map_one(fd, buf, 256 * 4096, addrs, &h2) || status_kb("VmPin") != 1024)
		bad |= 2;
	/* one page more than the limit */
	ret = map_one(fd, buf + 256 * 4096, 4096, addrs, &h3);
	if (ret != -ENOMEM || status_kb("VmPin") != 1024)
		bad |= 4;
	if (do_unmap(fd, h1) || status_kb("VmPin") != 1024 || do_unmap(fd, h2) ||
	    status_kb("VmPin") != 0)
		bad |= 8;
	close(fd);
	rl.rlim_cur = rl.rlim_max = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 102;
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 103;
	ret = map_one(fd, buf, 4096, addrs, &h1);
	if (ret != -ENOMEM || status_kb("VmPin") != 0)
		bad |= 16;
	close(fd);
	return bad;
}

struct racer {
	struct bam_kmod_map *m;
	volatile int stop;
};

static void *size_racer(void *arg)
{
	struct racer *r = arg;
	static const uint32_t sizes[] = { sizeof(struct bam_kmod_map), 8, 4096, 16,
					  sizeof(struct bam_kmod_map) + 8 };
	unsigned int i = 0;

	while (!r->stop)
		__atomic_store_n(&r->m->size, sizes[i++ % 5], __ATOMIC_RELAXED);
	return NULL;
}

/* MAP with another thread changing its size field: every success returns
 * a handle, nothing stays pinned. */
static void sec_race(int fd, const char *path)
{
	static union { struct bam_kmod_map m; char pad[4096]; } u;
	char *buf = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint64_t addrs[4];
	struct racer r = { &u.m, 0 };
	int i, ok = 0, nohandle = 0, leftover = 0, other = 0;
	pthread_t th;

	pthread_create(&th, NULL, size_racer, &r);
	for (i = 0; i < 3000; i++) {
		memset(&u, 0, sizeof(u));
		map_init(&u.m, buf, 4 * 4096, addrs, 4);
		if (ioctl(fd, BAM_IOC_MAP_HOST, &u.m) == 0) {
			ok++;
			if (!u.m.handle)
				nohandle++;
			else if (do_unmap(fd, u.m.handle))
				leftover++;
		} else if (errno != EINVAL && errno != E2BIG) {
			other++;
		}
	}
	r.stop = 1;
	pthread_join(th, NULL);
	check(ok > 0 && !nohandle && !leftover && !other && dev_attr(path, "mappings") == 0 &&
		      dev_attr(path, "pinned_pages") == 0,
	      "sec.racing_map_size", "%d ok, %d without handle, %d unmap errors, %d odd errnos, %ld maps left",
	      ok, nohandle, leftover, other, dev_attr(path, "mappings"));
	munmap(buf, 4 * 4096);
}

/* A handle once unmapped names nothing, even when its index is reused. */
static void sec_stale(int fd, const char *path)
{
	char *buf = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	uint64_t addrs[1], ha = 0, hb = 0, forged;
	int ok;

	ok = !map_one(fd, buf, 4096, addrs, &ha) && !do_unmap(fd, ha) &&
	     !map_one(fd, buf + 4096, 4096, addrs, &hb);
	forged = (hb & 0xffffffffull) | (((hb >> 32) + 1) << 32);
	check(ok && ha != hb && do_unmap(fd, ha) == -ENOENT && do_unmap(fd, forged) == -ENOENT &&
		      do_unmap(fd, ha & 0xffffffffull) == -ENOENT &&
		      dev_attr(path, "mappings") == 1 && !do_unmap(fd, hb),
	      "sec.stale_handle_refused", "ha %#llx hb %#llx maps %ld", (unsigned long long)ha,
	      (unsigned long long)hb, dev_attr(path, "mappings"));
	munmap(buf, 2 * 4096);
}

/* One page aliased at many addresses (BAMTEST_ALIASES, default 1024; the
 * identity boot uses 65000, as in the attack): refused cleanly,
 * every time. */
static void sec_alias(int fd, const char *path, long pins0)
{
	const char *env = getenv("BAMTEST_ALIASES");
	const int n = env && atoi(env) > 0 && atoi(env) <= 65000 ? atoi(env) : 1024;
	uint64_t *addrs = calloc(n, 8), h[17];
	int mfd = (int)syscall(SYS_memfd_create, "bamalias", 0), i, refused = 0, j;
	char *base;

	if (mfd < 0 || ftruncate(mfd, 4096)) {
		check(0, "sec.alias_refused", "memfd: %s", strerror(errno));
		return;
	}
	base = mmap(NULL, (size_t)n * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < n; i++)
		mmap(base + (size_t)i * 4096, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		     mfd, 0);
	base[0] = 1;
	for (i = 0; i < 33; i++) {
		uint64_t hh;

		refused += map_one(fd, base, (size_t)n * 4096, addrs, &hh) == -EEXIST;
	}
	printf("BAMTEST: INFO one page at %d addresses, mapped 33 times\n", n);
	check(refused == 33 && dev_attr(path, "pinned_pages") == 0 && pins_outstanding() == pins0,
	      "sec.alias_refused", "%d of 33 refused, pinned %ld, pins %ld (was %ld)", refused,
	      dev_attr(path, "pinned_pages"), pins_outstanding(), pins0);
	/* 16 mappings of one page are fine, the 17th is not */
	for (i = 0; i < 16; i++)
		if (map_one(fd, base, 4096, addrs, &h[i]))
			break;
	j = map_one(fd, base, 4096, addrs, &h[16]);
	check(i == 16 && j == -EEXIST, "sec.page_map_limit", "%d mapped, 17th: %d", i, j);
	while (i--)
		do_unmap(fd, h[i]);
	munmap(base, (size_t)n * 4096);
	close(mfd);
	free(addrs);
}

/* MAP from another process (the fd inherited) is refused. */
static void sec_other_mm(int fd)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		char *v = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		uint64_t a[1], h;

		_exit(map_one(fd, v, 4096, a, &h) == -EPERM ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sec.map_from_other_process_refused",
	      "status %#x", st);
}

/* The PCI command register of the function behind @fd. */
static int pci_command(const struct bam_kmod_info *info)
{
	char p[128];
	uint16_t cmd = 0;
	int fd;

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/config", info->pci_domain,
		 info->pci_bus, info->pci_devfn >> 3, info->pci_devfn & 7);
	fd = open(p, O_RDONLY);
	if (fd < 0 || pread(fd, &cmd, 2, 4) != 2)
		cmd = 0xffff;
	if (fd >= 0)
		close(fd);
	return cmd;
}

/* MSI-X table offset in BAR0, or -1 (from config space). */
static long msix_table_in_bar0(const struct bam_kmod_info *info)
{
	char p[128];
	uint8_t cfg[256];
	int fd, pos, guard = 48;

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/config", info->pci_domain,
		 info->pci_bus, info->pci_devfn >> 3, info->pci_devfn & 7);
	fd = open(p, O_RDONLY);
	if (fd < 0 || pread(fd, cfg, 256, 0) != 256) {
		if (fd >= 0)
			close(fd);
		return -2;
	}
	close(fd);
	for (pos = cfg[0x34] & ~3; pos && guard--; pos = cfg[pos + 1] & ~3) {
		if (cfg[pos] == 0x11) {
			uint32_t t;

			memcpy(&t, cfg + pos + 4, 4);
			return (t & 7) ? -1 : (long)(t & ~7u);
		}
	}
	return -1;
}

static int exit_with_live_mappings(const char *path)
{
	struct bam_nvme_dev *dev = open_lib(path, 2);
	struct bam_nvme_dma buf, extra;
	struct bam_nvme_qp *qp;

	if (bam_nvme_qp_create(dev, 8, &qp) || bam_nvme_dma_alloc(dev, 64 << 10, &buf) ||
	    bam_nvme_dma_alloc(dev, 1 << 20, &extra) || bam_nvme_read(qp, 0, 8, &buf, 0))
		return 2;
	/* no close, no unmap, no queue deletion: plain exit */
	exit(0);
}

static int cmd_security(const char *path)
{
	long pins0 = pins_outstanding();
	struct bam_kmod_info info;
	volatile uint32_t *bar;
	int fd, st, cmd;
	long tbl;
	pid_t pid;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = BAM_KMOD_ABI_VERSION;
	sec_open(path);
	sec_dma(path);
	sec_admin_sq(path);

	fd = open(path, O_RDWR);
	if (!check(fd >= 0 && !ioctl(fd, BAM_IOC_INFO, &info), "sec.open", "%s", strerror(errno)))
		return 1;
	{
		char p[300], mode[32] = "";
		FILE *f;

		snprintf(p, sizeof(p), "%s/iommu", sysfs_dir(path));
		f = fopen(p, "r");
		if (f) {
			if (!fgets(mode, sizeof(mode), f))
				mode[0] = 0;
			fclose(f);
		}
		check(!strcmp(mode, "own-domain\n"), "sec.own_iommu_domain", "sysfs iommu: '%s'", mode);
	}
	sec_race(fd, path);
	sec_stale(fd, path);
	sec_alias(fd, path, pins0);
	sec_other_mm(fd);
	tbl = msix_table_in_bar0(&info);
	printf("BAMTEST: INFO MSI-X table at %ld in BAR0, bar0_size %llu\n", tbl,
	       (unsigned long long)info.bar0_size);
	check(tbl == -1 || (tbl >= 0 && info.bar0_size <= (uint64_t)tbl), "sec.msix_table_not_mappable",
	      "table at %ld, mappable %llu", tbl, (unsigned long long)info.bar0_size);
	close(fd);

	pid = fork();
	if (pid == 0)
		_exit(unprivileged_admin_child(path));
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sec.admin_needs_cap_sys_admin",
	      "child status %#x (bits: 1 identify, 2 set queues, 4 privileged allowed, 8 fused, "
	      "16 VS read, 32 CC write allowed, 64 CC changed)", st);

	pid = fork();
	if (pid == 0)
		_exit(memlock_child(path));
	waitpid(pid, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sec.pins_charged_to_memlock",
	      "child status %#x (bits: 1 VmPin, 2 counted once, 4 over limit, 8 unmap, 16 limit 0)", st);

	pid = fork();
	if (pid == 0)
		_exit(exit_with_live_mappings(path));
	waitpid(pid, &st, 0);
	fd = open(path, O_RDWR);
	bar = fd < 0 ? MAP_FAILED : mmap(NULL, 0x2000, PROT_READ, MAP_SHARED, fd, 0);
	cmd = pci_command(&info);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0 && bar != MAP_FAILED &&
		      !(bar[BAM_NVME_REG_CC / 4] & BAM_NVME_CC_EN) &&
		      !(bar[BAM_NVME_REG_CSTS / 4] & BAM_NVME_CSTS_RDY) && !(cmd & 4) &&
		      dev_attr(path, "pinned_pages") == 0 && pins_outstanding() == pins0,
	      "sec.exit_with_live_mappings", "status %#x CC %#x CSTS %#x PCI command %#x pinned %ld",
	      st, bar == MAP_FAILED ? 0 : bar[BAM_NVME_REG_CC / 4],
	      bar == MAP_FAILED ? 0 : bar[BAM_NVME_REG_CSTS / 4], cmd, dev_attr(path, "pinned_pages"));
	if (bar != MAP_FAILED)
		munmap((void *)bar, 0x2000);
	if (fd >= 0)
		close(fd);
	return failures != 0;
}

/* ---- bigmap --------------------------------------------------------- */

/* With max_map_mb=65536 (its bound): one map of 64 GiB that is not there
 * ends in a clean errno (the per-map arrays stay under INT_MAX). */
static int cmd_bigmap(const char *path)
{
	const size_t len = 64ull << 30, n = len / 4096;
	struct bam_kmod_info info;
	struct bam_kmod_map m;
	char *res;
	uint64_t *addrs;
	int fd, ret, err;

	fd = open(path, O_RDWR);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = BAM_KMOD_ABI_VERSION;
	if (!check(fd >= 0 && !ioctl(fd, BAM_IOC_INFO, &info) && info.max_map_bytes == len,
		   "module.max_map_mb_65536", "fd %d max_map_bytes %llu", fd,
		   (unsigned long long)info.max_map_bytes))
		return 1;
	res = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	addrs = mmap(NULL, n * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		     -1, 0);
	map_init(&m, res, len, addrs, n);
	ret = ioctl(fd, BAM_IOC_MAP_HOST, &m);
	err = errno;
	check(res != MAP_FAILED && addrs != MAP_FAILED && ret < 0 && (err == EFAULT || err == ENOMEM) &&
		      dev_attr(path, "pinned_pages") == 0,
	      "module.max_map_of_absent_memory", "ret %d errno %d (%s)", ret, err, strerror(err));
	map_init(&m, res, len + 4096, addrs, n + 1);
	expect_errno(fd, BAM_IOC_MAP_HOST, &m, E2BIG, "module.max_map_plus_one_page");
	close(fd);
	return failures != 0;
}

/* ---- smoke ----------------------------------------------------------- */

/* Bring-up and one write/read; prints a PASS or FAIL line for @name
 * unless @name is NULL (the reload loop reports for itself). */
static int cmd_smoke(const char *path, const char *name)
{
	struct bam_nvme_dev *dev = open_lib(path, 1);
	struct io_ctx io = { dev, bam_nvme_info(dev)->lba_size, bam_nvme_info(dev)->nlbas };
	struct bam_nvme_dma wb, rb;
	struct bam_nvme_qp *qp;
	char why[256] = "";
	int ok;

	if (bam_nvme_qp_create(dev, 8, &qp) || bam_nvme_dma_alloc(dev, 8192, &wb) ||
	    bam_nvme_dma_alloc(dev, 8192, &rb))
		die(name ? name : "smoke setup", -EIO);
	ok = rw_verify(&io, qp, &wb, &rb, (uint64_t)getpid() % 1000, 8, 0, 0, getpid(),
		       why, sizeof(why));
	bam_nvme_close(dev);
	if (name)
		check(ok, name, "%s", why);
	else if (!ok)
		printf("BAMTEST: INFO smoke: %s\n", why);
	return !ok;
}

/* ---- reload ---------------------------------------------------------- */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int is_bound(const char *pci)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/driver", pci);
	return !access(p, F_OK);
}

/* Unload, reload, rebind and use the device @n times, in one process so
 * that the loop costs little under TCG. */
static int cmd_reload(const char *ko, const char *pci, int n)
{
	char ovr[256], why[256] = "";
	int i, fd, ret = 0, t;

	snprintf(ovr, sizeof(ovr), "/sys/bus/pci/devices/%s/driver_override", pci);
	for (i = 1; i <= n && !ret; i++) {
		ret = -1;
		if (syscall(SYS_delete_module, "bam_nvme", O_NONBLOCK)) {
			snprintf(why, sizeof(why), "#%d delete_module: %s", i, strerror(errno));
			break;
		}
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || syscall(SYS_finit_module, fd, "", 0)) {
			snprintf(why, sizeof(why), "#%d finit_module: %s", i, strerror(errno));
			break;
		}
		close(fd);
		if (is_bound(pci)) {
			snprintf(why, sizeof(why), "#%d bound without being asked", i);
			break;
		}
		if (write_file(ovr, "bam_nvme") || write_file("/sys/bus/pci/drivers_probe", pci)) {
			snprintf(why, sizeof(why), "#%d bind: %s", i, strerror(errno));
			break;
		}
		for (t = 0; t < 500 && access("/dev/bam_nvme0", F_OK); t++)
			usleep(10000);
		if (cmd_smoke("/dev/bam_nvme0", NULL)) {
			snprintf(why, sizeof(why), "#%d I/O after rebind failed", i);
			break;
		}
		if (write_file("/sys/bus/pci/drivers/bam_nvme/unbind", pci) || write_file(ovr, "\n")) {
			snprintf(why, sizeof(why), "#%d unbind: %s", i, strerror(errno));
			break;
		}
		ret = 0;
	}
	return !check(!ret, "module.reload_rebind_io", "%d cycles wanted; %s", n, why);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "io"))
		return cmd_io(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "abi"))
		return cmd_abi(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "perm"))
		return cmd_perm(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "death"))
		return cmd_death(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "hold"))
		return cmd_hold(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "smoke"))
		return cmd_smoke(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "bigmap"))
		return cmd_bigmap(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "security"))
		return cmd_security(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "timeout"))
		return cmd_timeout(argv[2]);
	if (argc >= 5 && !strcmp(argv[1], "reload"))
		return cmd_reload(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: %s io|abi|perm|death|timeout|security DEV | smoke DEV NAME | hold DEV DIR | reload KO PCI N\n",
		argv[0]);
	return 2;
}
