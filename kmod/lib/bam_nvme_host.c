// SPDX-License-Identifier: MIT
/*
 * User-space NVMe host library over /dev/bam_nvmeN; see bam_nvme_host.h.
 *
 * The module owns the admin queue: it resets and enables the controller
 * (BAM_IOC_ENABLE, 4 KiB NVMe pages, CC.MPS = 0) and runs admin commands
 * (BAM_IOC_ADMIN); on the last close it shuts the controller down and
 * disables it before it unmaps and unpins anything. This library therefore
 * never frees memory the controller may still use before the file is
 * closed: queue memory whose deletion failed stays mapped until then.
 * Host pages may be larger than 4 KiB; bus addresses are looked up per
 * byte offset, so that does not matter.
 */
#define _GNU_SOURCE
#include "bam_nvme_host.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bam_kmod_abi.h"

#define NVME_PAGE 4096u
#define PRP_PER_PAGE (NVME_PAGE / 8u)
/* One PRP list page per command: PRP1 plus 512 list entries. */
#define MAX_XFER_PRP (PRP_PER_PAGE * NVME_PAGE)
#define DEFAULT_DEPTH 64u
#define DEFAULT_TIMEOUT_MS 5000u

#define MAX_ADMIN_TIMEOUT_MS 60000u

/* Identify data offsets (NVMe 1.4, figures 247 and 249). */
#define IDC_VID 0
#define IDC_SN 4
#define IDC_MN 24
#define IDC_FR 64
#define IDC_MDTS 77
#define IDN_NSZE 0
#define IDN_NLBAF 25
#define IDN_FLBAS 26
#define IDN_LBAF 128

struct bam_nvme_dev {
	int fd;
	volatile uint8_t *bar;
	size_t bar_size;
	struct bam_kmod_info kinfo;
	uint64_t cap;
	struct bam_nvme_ctrl_info info;
	uint32_t admin_timeout_ms;
	uint32_t io_timeout_ms;

	pthread_mutex_t lock; /* qid bitmap, qp and orphan lists */
	struct bam_nvme_dma admin_mem; /* identify buffer */
	uint8_t *qid_used; /* [io_queues + 1] */
	struct bam_nvme_qp *qps;
	struct orphan *orphans;
};

/* Memory of a queue whose deletion failed: the controller may still write
 * it, so it stays mapped until close() has stopped the controller. */
struct orphan {
	struct orphan *next;
	struct bam_nvme_dma mem;
};

struct bam_nvme_qp {
	struct bam_nvme_dev *dev;
	struct bam_nvme_qp *next;
	uint16_t qid;
	uint32_t depth;
	struct bam_nvme_dma mem; /* SQ | CQ | one PRP list page per cid */
	size_t cq_off, prp_off;
	struct bam_nvme_sqe *sq;
	struct bam_nvme_cqe *cq;
	volatile uint32_t *sq_db, *cq_db;
	uint32_t sq_tail, cq_head, inflight, next_cid;
	uint8_t phase;
	int broken;
	uint8_t *busy; /* [depth], by cid */
};

/* ---- errors ---------------------------------------------------------- */

static __thread char errbuf[256];

__attribute__((format(printf, 2, 3)))
static int fail(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(errbuf))
		snprintf(errbuf + n, sizeof(errbuf) - n, ": %s", bam_nvme_strerror(err));
	return err;
}

const char *bam_nvme_strerror(int err)
{
	if (err < 0)
		return strerror(-err);
	if (err > 0)
		return bam_nvme_status_str((uint16_t)err);
	return "success";
}

const char *bam_nvme_errmsg(void)
{
	return errbuf;
}

/* ---- time and MMIO --------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t rd32(const struct bam_nvme_dev *dev, uint32_t reg)
{
	return *(volatile uint32_t *)(dev->bar + reg);
}

/* 64-bit registers as two 32-bit reads, low first (NVMe allows it). */
static uint64_t rd64(const struct bam_nvme_dev *dev, uint32_t reg)
{
	uint64_t lo = rd32(dev, reg);

	return lo | (uint64_t)rd32(dev, reg + 4) << 32;
}

/* Queue entries must be in memory before the doorbell write reaches the
 * controller; CQ head updates must follow our reads of the entries. */
static void ring(volatile uint32_t *db, uint32_t val)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*db = val;
}

volatile uint32_t *bam_nvme_sq_doorbell(const struct bam_nvme_dev *dev, uint16_t qid)
{
	uint32_t dstrd = BAM_NVME_CAP_DSTRD(dev->cap);

	return (volatile uint32_t *)(dev->bar + BAM_NVME_SQ_TDBL(qid, dstrd));
}

volatile uint32_t *bam_nvme_cq_doorbell(const struct bam_nvme_dev *dev, uint16_t qid)
{
	uint32_t dstrd = BAM_NVME_CAP_DSTRD(dev->cap);

	return (volatile uint32_t *)(dev->bar + BAM_NVME_CQ_HDBL(qid, dstrd));
}

/* Poll a completion slot for the expected phase, spinning briefly and then
 * yielding; a slow emulated controller should not starve. */
static int wait_cqe(const struct bam_nvme_cqe *slot, uint8_t phase, uint32_t timeout_ms)
{
	uint64_t deadline = 0;
	unsigned int spins = 0;

	for (;;) {
		uint16_t st = __atomic_load_n(&slot->status, __ATOMIC_ACQUIRE);

		if (BAM_NVME_CQE_PHASE(st) == phase)
			return 0;
		if (++spins < 2048)
			continue;
		spins = 0;
		if (!deadline)
			deadline = now_ms() + timeout_ms;
		else if (now_ms() > deadline)
			return -ETIMEDOUT;
		sched_yield();
	}
}

/* ---- DMA memory ------------------------------------------------------ */

static int dma_map(struct bam_nvme_dev *dev, unsigned long cmd, void *va, size_t size,
		   uint32_t align, struct bam_nvme_dma *buf)
{
	struct bam_kmod_map arg;
	size_t n = size / align;

	buf->bus = calloc(n, sizeof(*buf->bus));
	if (!buf->bus)
		return fail(-ENOMEM, "DMA map of %zu bytes", size);
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.version = BAM_KMOD_ABI_VERSION;
	arg.vaddr = (uintptr_t)va;
	arg.length = size;
	arg.addrs = (uintptr_t)buf->bus;
	arg.naddrs = n;
	if (ioctl(dev->fd, cmd, &arg) < 0) {
		int err = -errno;

		free(buf->bus);
		buf->bus = NULL;
		return fail(err, "DMA map of %zu bytes at %p", size, va);
	}
	buf->vaddr = va;
	buf->size = size;
	buf->handle = arg.handle;
	buf->page_size = arg.page_size;
	buf->npages = arg.npages;
	return 0;
}

int bam_nvme_dma_alloc(struct bam_nvme_dev *dev, size_t size, struct bam_nvme_dma *buf)
{
	size_t ps = dev->kinfo.page_size;
	void *va;
	int ret;

	memset(buf, 0, sizeof(*buf));
	if (!size || size > dev->kinfo.max_map_bytes)
		return fail(-EINVAL, "DMA buffer of %zu bytes (limit %llu)", size,
			    (unsigned long long)dev->kinfo.max_map_bytes);
	size = (size + ps - 1) / ps * ps;
	va = mmap(NULL, size, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (va == MAP_FAILED)
		return fail(-errno, "mmap of %zu bytes", size);
	/* A child must not share these pages copy-on-write. */
	madvise(va, size, MADV_DONTFORK);
	ret = dma_map(dev, BAM_IOC_MAP_HOST, va, size, (uint32_t)ps, buf);
	if (ret)
		munmap(va, size);
	return ret;
}

int bam_nvme_dma_map_host(struct bam_nvme_dev *dev, void *vaddr, size_t size,
			  struct bam_nvme_dma *buf)
{
	size_t ps = dev->kinfo.page_size;

	memset(buf, 0, sizeof(*buf));
	if ((uintptr_t)vaddr % ps || !size || size % ps)
		return fail(-EINVAL, "host mapping %p+%zu (%zu-byte alignment)", vaddr, size, ps);
	buf->borrowed = 1;
	return dma_map(dev, BAM_IOC_MAP_HOST, vaddr, size, (uint32_t)ps, buf);
}

int bam_nvme_dma_map_gpu(struct bam_nvme_dev *dev, void *gpu_va, size_t size,
			 struct bam_nvme_dma *buf)
{
	const uint32_t gps = 64u << 10;

	memset(buf, 0, sizeof(*buf));
	if (!(dev->kinfo.flags & BAM_KMOD_INFO_GPU))
		return fail(-EOPNOTSUPP, "GPU mapping (module built without NVIDIA P2P)");
	if ((uintptr_t)gpu_va % gps || !size || size % gps)
		return fail(-EINVAL, "GPU mapping %p+%zu (64 KiB alignment)", gpu_va, size);
	buf->gpu = 1;
	return dma_map(dev, BAM_IOC_MAP_GPU, gpu_va, size, gps, buf);
}

void bam_nvme_dma_free(struct bam_nvme_dev *dev, struct bam_nvme_dma *buf)
{
	struct bam_kmod_unmap arg;

	if (!buf->bus)
		return;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.version = BAM_KMOD_ABI_VERSION;
	arg.handle = buf->handle;
	ioctl(dev->fd, BAM_IOC_UNMAP, &arg);
	if (!buf->gpu && !buf->borrowed)
		munmap(buf->vaddr, buf->size);
	free(buf->bus);
	memset(buf, 0, sizeof(*buf));
}

/* Give back the memory of @buf without unmapping it from the controller:
 * only after the file was closed (the module has unmapped everything). */
static void release_mem(struct bam_nvme_dma *buf)
{
	if (!buf->bus)
		return;
	if (!buf->gpu && !buf->borrowed)
		munmap(buf->vaddr, buf->size);
	free(buf->bus);
	memset(buf, 0, sizeof(*buf));
}

/* Is [off, off+len) of @buf one run of bus addresses? */
static int dma_contiguous(const struct bam_nvme_dma *buf, size_t off, size_t len)
{
	uint64_t start = bam_nvme_dma_addr(buf, off);
	size_t o;

	for (o = (off / buf->page_size + 1) * buf->page_size; o < off + len; o += buf->page_size)
		if (bam_nvme_dma_addr(buf, o) != start + (o - off))
			return 0;
	return 1;
}

/* ---- admin queue ----------------------------------------------------- */

/* The module runs admin commands on its own admin queue; it refuses
 * commands a queue set-up does not need unless the caller has
 * CAP_SYS_ADMIN (EPERM). */
int bam_nvme_admin(struct bam_nvme_dev *dev, struct bam_nvme_sqe *cmd, uint32_t *result)
{
	struct bam_kmod_admin arg;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.version = BAM_KMOD_ABI_VERSION;
	arg.timeout_ms = dev->admin_timeout_ms;
	memcpy(arg.cmd, cmd, sizeof(arg.cmd));
	if (ioctl(dev->fd, BAM_IOC_ADMIN, &arg) < 0) {
		int err = -errno;

		if (err == -ETIMEDOUT)
			return fail(err, "admin opcode %#x: no completion in %u ms (CSTS %#x)",
				    cmd->opcode, dev->admin_timeout_ms,
				    rd32(dev, BAM_NVME_REG_CSTS));
		if (err == -EIO)
			return fail(err, "admin opcode %#x: admin queue unusable after a timeout",
				    cmd->opcode);
		return fail(err, "admin opcode %#x", cmd->opcode);
	}
	if (result)
		*result = arg.result;
	if (arg.status)
		return fail(arg.status, "admin opcode %#x (status %#x)", cmd->opcode, arg.status);
	return 0;
}

/* ---- controller bring-up --------------------------------------------- */

static int ctrl_enable(struct bam_nvme_dev *dev)
{
	struct bam_kmod_enable arg;

	if (BAM_NVME_CAP_MPSMIN(dev->cap) != 0)
		return fail(-EOPNOTSUPP, "controller minimum page size %u bytes (need 4096)",
			    4096u << BAM_NVME_CAP_MPSMIN(dev->cap));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.version = BAM_KMOD_ABI_VERSION;
	if (ioctl(dev->fd, BAM_IOC_ENABLE, &arg) < 0) {
		int err = -errno;

		return fail(err, "enabling the controller (CSTS %#x)",
			    rd32(dev, BAM_NVME_REG_CSTS));
	}
	return 0;
}

static void copy_str(char *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
	while (n && (dst[n - 1] == ' ' || dst[n - 1] == '\0'))
		dst[--n] = '\0';
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int identify(struct bam_nvme_dev *dev, uint32_t cns, uint32_t nsid, const uint8_t **data)
{
	struct bam_nvme_sqe cmd = { 0 };

	cmd.opcode = BAM_NVME_ADMIN_IDENTIFY;
	cmd.nsid = nsid;
	cmd.prp1 = bam_nvme_dma_addr(&dev->admin_mem, 0);
	cmd.cdw10 = cns;
	*data = (const uint8_t *)dev->admin_mem.vaddr;
	memset((void *)*data, 0, NVME_PAGE);
	return bam_nvme_admin(dev, &cmd, NULL);
}

static int identify_all(struct bam_nvme_dev *dev)
{
	struct bam_nvme_ctrl_info *info = &dev->info;
	const uint8_t *id;
	uint32_t lbaf, fmt;
	int ret;

	ret = identify(dev, BAM_NVME_IDENTIFY_CTRL, 0, &id);
	if (ret)
		return ret;
	info->vendor_id = (uint16_t)(id[IDC_VID] | id[IDC_VID + 1] << 8);
	copy_str(info->serial, id + IDC_SN, 20);
	copy_str(info->model, id + IDC_MN, 40);
	copy_str(info->firmware, id + IDC_FR, 8);
	info->max_transfer = MAX_XFER_PRP;
	if (id[IDC_MDTS] && id[IDC_MDTS] < 20 &&
	    (NVME_PAGE << id[IDC_MDTS]) < info->max_transfer)
		info->max_transfer = NVME_PAGE << id[IDC_MDTS];

	ret = identify(dev, BAM_NVME_IDENTIFY_NS, info->nsid, &id);
	if (ret)
		return ret;
	info->nlbas = le64(id + IDN_NSZE);
	if (!info->nlbas)
		return fail(-ENXIO, "namespace %u is not active", info->nsid);
	fmt = (id[IDN_FLBAS] & 0xfu) | ((id[IDN_FLBAS] >> 5) & 3u) << 4;
	if (fmt > id[IDN_NLBAF])
		return fail(-EPROTO, "namespace %u: format index %u beyond NLBAF %u",
			    info->nsid, fmt, id[IDN_NLBAF]);
	lbaf = le32(id + IDN_LBAF + 4 * fmt);
	if (lbaf & 0xffffu)
		return fail(-EOPNOTSUPP, "namespace %u: formats with metadata are not supported",
			    info->nsid);
	if (((lbaf >> 16) & 0xff) < 9 || ((lbaf >> 16) & 0xff) > 12)
		return fail(-EOPNOTSUPP, "namespace %u: LBA size 2^%u unsupported",
			    info->nsid, (lbaf >> 16) & 0xff);
	info->lba_size = 1u << ((lbaf >> 16) & 0xff);
	return 0;
}

static int set_queue_count(struct bam_nvme_dev *dev, uint32_t want)
{
	struct bam_nvme_sqe cmd = { 0 };
	uint32_t res, nsq, ncq;
	int ret;

	cmd.opcode = BAM_NVME_ADMIN_SET_FEATURES;
	cmd.cdw10 = BAM_NVME_FEAT_NUM_QUEUES;
	cmd.cdw11 = (want - 1) | (want - 1) << 16;
	ret = bam_nvme_admin(dev, &cmd, &res);
	if (ret)
		return ret;
	nsq = (res & 0xffffu) + 1;
	ncq = (res >> 16) + 1;
	dev->info.io_queues = nsq < ncq ? nsq : ncq;
	if (dev->info.io_queues > want)
		dev->info.io_queues = want;
	dev->qid_used = calloc(dev->info.io_queues + 1, 1);
	return dev->qid_used ? 0 : fail(-ENOMEM, "queue id table");
}

int bam_nvme_open(const char *path, const struct bam_nvme_opts *opts,
		  struct bam_nvme_dev **out)
{
	struct bam_nvme_opts o = opts ? *opts : (struct bam_nvme_opts){ 0 };
	struct bam_nvme_dev *dev;
	void *bar;
	int ret;

	*out = NULL;
	if (o.admin_timeout_ms > MAX_ADMIN_TIMEOUT_MS)
		o.admin_timeout_ms = MAX_ADMIN_TIMEOUT_MS;
	if (o.io_queues > 65535)
		return fail(-EINVAL, "io_queues %u (max 65535)", o.io_queues);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return fail(-ENOMEM, "open %s", path);
	pthread_mutex_init(&dev->lock, NULL);
	dev->info.nsid = o.nsid ? o.nsid : 1;
	dev->admin_timeout_ms = o.admin_timeout_ms ? o.admin_timeout_ms : DEFAULT_TIMEOUT_MS;
	dev->io_timeout_ms = o.io_timeout_ms ? o.io_timeout_ms : DEFAULT_TIMEOUT_MS;

	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		ret = fail(-errno, "open %s", path);
		goto out_free_dev;
	}
	dev->kinfo.size = sizeof(dev->kinfo);
	dev->kinfo.version = BAM_KMOD_ABI_VERSION;
	if (ioctl(dev->fd, BAM_IOC_INFO, &dev->kinfo) < 0) {
		ret = fail(-errno, "%s: BAM_IOC_INFO (module ABI %u)", path, BAM_KMOD_ABI_VERSION);
		goto out_close_fd;
	}
	dev->bar_size = dev->kinfo.bar0_size;
	bar = mmap(NULL, dev->bar_size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, 0);
	if (bar == MAP_FAILED) {
		ret = fail(-errno, "%s: mmap BAR0 (%zu bytes)", path, dev->bar_size);
		goto out_close_fd;
	}
	dev->bar = bar;
	dev->cap = rd64(dev, BAM_NVME_REG_CAP);
	dev->info.version = rd32(dev, BAM_NVME_REG_VS);
	dev->info.doorbell_stride = 4u << BAM_NVME_CAP_DSTRD(dev->cap);
	dev->info.max_queue_depth = BAM_NVME_CAP_MQES(dev->cap) + 1;

	ret = bam_nvme_dma_alloc(dev, NVME_PAGE, &dev->admin_mem);
	if (ret)
		goto out_unmap_bar;
	ret = ctrl_enable(dev);
	if (ret)
		goto out_close_fd;
	ret = identify_all(dev);
	if (ret)
		goto out_close_fd;
	ret = set_queue_count(dev, o.io_queues ? o.io_queues : 64);
	if (ret)
		goto out_close_fd;
	*out = dev;
	return 0;

out_unmap_bar:
	munmap((void *)dev->bar, dev->bar_size);
	dev->bar = NULL;
out_close_fd:
	/* The module stops the controller before it unpins anything. */
	close(dev->fd);
	release_mem(&dev->admin_mem);
	if (dev->bar)
		munmap((void *)dev->bar, dev->bar_size);
out_free_dev:
	pthread_mutex_destroy(&dev->lock);
	free(dev);
	return ret;
}

void bam_nvme_close(struct bam_nvme_dev *dev)
{
	if (!dev)
		return;
	while (dev->qps)
		bam_nvme_qp_destroy(dev->qps);
	munmap((void *)dev->bar, dev->bar_size);
	/*
	 * Closing the file shuts the controller down, disables it and clears
	 * bus mastering before the module unmaps and unpins; only then is the
	 * memory it may have used given back.
	 */
	close(dev->fd);
	release_mem(&dev->admin_mem);
	while (dev->orphans) {
		struct orphan *o = dev->orphans;

		dev->orphans = o->next;
		release_mem(&o->mem);
		free(o);
	}
	free(dev->qid_used);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

const struct bam_nvme_ctrl_info *bam_nvme_info(const struct bam_nvme_dev *dev)
{
	return &dev->info;
}

int bam_nvme_fd(const struct bam_nvme_dev *dev)
{
	return dev->fd;
}

volatile void *bam_nvme_bar(const struct bam_nvme_dev *dev)
{
	return dev->bar;
}

size_t bam_nvme_bar_size(const struct bam_nvme_dev *dev)
{
	return dev->bar_size;
}

/* ---- I/O queues ------------------------------------------------------ */

int bam_nvme_qid_alloc(struct bam_nvme_dev *dev)
{
	uint32_t q;

	pthread_mutex_lock(&dev->lock);
	for (q = 1; q <= dev->info.io_queues; q++) {
		if (!dev->qid_used[q]) {
			dev->qid_used[q] = 1;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	if (q > dev->info.io_queues)
		return fail(-EBUSY, "all %u I/O queues in use", dev->info.io_queues);
	return (int)q;
}

void bam_nvme_qid_free(struct bam_nvme_dev *dev, uint16_t qid)
{
	pthread_mutex_lock(&dev->lock);
	if (qid && qid <= dev->info.io_queues)
		dev->qid_used[qid] = 0;
	pthread_mutex_unlock(&dev->lock);
}

int bam_nvme_create_io_queues(struct bam_nvme_dev *dev, uint16_t qid, uint32_t depth,
			      uint64_t sq_bus, uint64_t cq_bus)
{
	struct bam_nvme_sqe cmd = { 0 };
	int ret;

	if (depth < 2 || depth > dev->info.max_queue_depth || sq_bus % NVME_PAGE ||
	    cq_bus % NVME_PAGE)
		return fail(-EINVAL, "I/O queue %u: depth %u (2..%u) or unaligned memory",
			    qid, depth, dev->info.max_queue_depth);

	cmd.opcode = BAM_NVME_ADMIN_CREATE_CQ;
	cmd.prp1 = cq_bus;
	cmd.cdw10 = (depth - 1) << 16 | qid;
	cmd.cdw11 = 1; /* physically contiguous, interrupts off */
	ret = bam_nvme_admin(dev, &cmd, NULL);
	if (ret)
		return ret;

	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = BAM_NVME_ADMIN_CREATE_SQ;
	cmd.prp1 = sq_bus;
	cmd.cdw10 = (depth - 1) << 16 | qid;
	cmd.cdw11 = (uint32_t)qid << 16 | 1; /* completes to CQ qid, contiguous */
	ret = bam_nvme_admin(dev, &cmd, NULL);
	if (ret) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = BAM_NVME_ADMIN_DELETE_CQ;
		cmd.cdw10 = qid;
		bam_nvme_admin(dev, &cmd, NULL);
	}
	return ret;
}

int bam_nvme_delete_io_queues(struct bam_nvme_dev *dev, uint16_t qid)
{
	struct bam_nvme_sqe cmd = { 0 };
	int ret, ret2;

	cmd.opcode = BAM_NVME_ADMIN_DELETE_SQ;
	cmd.cdw10 = qid;
	ret = bam_nvme_admin(dev, &cmd, NULL);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = BAM_NVME_ADMIN_DELETE_CQ;
	cmd.cdw10 = qid;
	ret2 = bam_nvme_admin(dev, &cmd, NULL);
	return ret ? ret : ret2;
}

static size_t round_page(size_t n)
{
	return (n + NVME_PAGE - 1) / NVME_PAGE * NVME_PAGE;
}

int bam_nvme_qp_create(struct bam_nvme_dev *dev, uint32_t depth, struct bam_nvme_qp **out)
{
	struct bam_nvme_qp *qp;
	size_t sq_bytes, cq_bytes;
	int ret;

	*out = NULL;
	depth = depth ? depth : DEFAULT_DEPTH;
	if (depth > dev->info.max_queue_depth)
		depth = dev->info.max_queue_depth;
	if (depth < 2)
		return fail(-EINVAL, "queue depth %u", depth);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return fail(-ENOMEM, "queue pair");
	qp->busy = calloc(depth, 1);
	if (!qp->busy) {
		ret = fail(-ENOMEM, "queue pair");
		goto out_free_qp;
	}
	qp->dev = dev;
	qp->depth = depth;
	qp->phase = 1;

	sq_bytes = round_page((size_t)depth * sizeof(struct bam_nvme_sqe));
	cq_bytes = round_page((size_t)depth * sizeof(struct bam_nvme_cqe));
	qp->cq_off = sq_bytes;
	qp->prp_off = sq_bytes + cq_bytes;
	ret = bam_nvme_dma_alloc(dev, qp->prp_off + (size_t)depth * NVME_PAGE, &qp->mem);
	if (ret)
		goto out_free_busy;
	if (!dma_contiguous(&qp->mem, 0, sq_bytes) ||
	    !dma_contiguous(&qp->mem, qp->cq_off, cq_bytes)) {
		ret = fail(-EINVAL, "queue depth %u needs bus-contiguous memory; use <= %u",
			   depth, NVME_PAGE / (unsigned int)sizeof(struct bam_nvme_sqe));
		goto out_free_mem;
	}
	qp->sq = qp->mem.vaddr;
	qp->cq = (struct bam_nvme_cqe *)((uint8_t *)qp->mem.vaddr + qp->cq_off);

	ret = bam_nvme_qid_alloc(dev);
	if (ret < 0)
		goto out_free_mem;
	qp->qid = (uint16_t)ret;
	ret = bam_nvme_create_io_queues(dev, qp->qid, depth, bam_nvme_dma_addr(&qp->mem, 0),
					bam_nvme_dma_addr(&qp->mem, qp->cq_off));
	if (ret)
		goto out_free_qid;
	qp->sq_db = bam_nvme_sq_doorbell(dev, qp->qid);
	qp->cq_db = bam_nvme_cq_doorbell(dev, qp->qid);

	pthread_mutex_lock(&dev->lock);
	qp->next = dev->qps;
	dev->qps = qp;
	pthread_mutex_unlock(&dev->lock);
	*out = qp;
	return 0;

out_free_qid:
	bam_nvme_qid_free(dev, qp->qid);
out_free_mem:
	bam_nvme_dma_free(dev, &qp->mem);
out_free_busy:
	free(qp->busy);
out_free_qp:
	free(qp);
	return ret;
}

int bam_nvme_qp_destroy(struct bam_nvme_qp *qp)
{
	struct bam_nvme_dev *dev;
	struct bam_nvme_qp **pp;
	int ret;

	if (!qp)
		return 0;
	dev = qp->dev;
	pthread_mutex_lock(&dev->lock);
	for (pp = &dev->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);

	ret = bam_nvme_delete_io_queues(dev, qp->qid);
	if (!ret) {
		bam_nvme_dma_free(dev, &qp->mem);
		bam_nvme_qid_free(dev, qp->qid);
	} else {
		/* The controller may still use the queues and this memory: keep
		 * both (and the queue id) until close() has stopped it. */
		struct orphan *o = malloc(sizeof(*o));

		if (o) {
			o->mem = qp->mem;
			pthread_mutex_lock(&dev->lock);
			o->next = dev->orphans;
			dev->orphans = o;
			pthread_mutex_unlock(&dev->lock);
		}
	}
	free(qp->busy);
	free(qp);
	return ret;
}

uint16_t bam_nvme_qp_id(const struct bam_nvme_qp *qp)
{
	return qp->qid;
}

uint32_t bam_nvme_qp_slots(const struct bam_nvme_qp *qp)
{
	return qp->depth - 1;
}

/* Fill PRP1/PRP2 for @len bytes of @buf at @off, using the PRP list page
 * of @cid when the transfer touches more than two memory pages. */
static void build_prps(struct bam_nvme_qp *qp, uint16_t cid, const struct bam_nvme_dma *buf,
		       size_t off, size_t len, struct bam_nvme_sqe *sqe)
{
	size_t first = NVME_PAGE - off % NVME_PAGE;
	size_t next, n, i;
	uint64_t *list;

	sqe->prp1 = bam_nvme_dma_addr(buf, off);
	sqe->prp2 = 0;
	if (len <= first)
		return;
	next = off + first;
	if (len - first <= NVME_PAGE) {
		sqe->prp2 = bam_nvme_dma_addr(buf, next);
		return;
	}
	n = (len - first + NVME_PAGE - 1) / NVME_PAGE;
	list = (uint64_t *)((uint8_t *)qp->mem.vaddr + qp->prp_off + (size_t)cid * NVME_PAGE);
	for (i = 0; i < n; i++)
		list[i] = bam_nvme_dma_addr(buf, next + i * NVME_PAGE);
	sqe->prp2 = bam_nvme_dma_addr(&qp->mem, qp->prp_off + (size_t)cid * NVME_PAGE);
}

int bam_nvme_qp_submit_rw(struct bam_nvme_qp *qp, uint8_t opcode, uint64_t lba,
			  uint32_t nlb, const struct bam_nvme_dma *buf, size_t off,
			  uint16_t *cid)
{
	const struct bam_nvme_ctrl_info *info = &qp->dev->info;
	struct bam_nvme_sqe sqe = { 0 };
	size_t len = (size_t)nlb * info->lba_size;
	uint32_t c;

	if (qp->broken)
		return fail(-EIO, "queue %u unusable after a timeout", qp->qid);
	if (opcode != BAM_NVME_CMD_READ && opcode != BAM_NVME_CMD_WRITE)
		return fail(-EINVAL, "opcode %#x is not read or write", opcode);
	if (!nlb || len > info->max_transfer || off % 4 || off > buf->size ||
	    len > buf->size - off)
		return fail(-EINVAL, "%u blocks at buffer offset %zu (max %u bytes, buffer %zu)",
			    nlb, off, info->max_transfer, buf->size);
	if (qp->inflight == qp->depth - 1)
		return -EAGAIN;

	for (c = qp->next_cid; qp->busy[c]; c = (c + 1) % qp->depth)
		;
	qp->next_cid = (c + 1) % qp->depth;
	qp->busy[c] = 1;
	qp->inflight++;

	sqe.opcode = opcode;
	sqe.cid = (uint16_t)c;
	sqe.nsid = info->nsid;
	build_prps(qp, (uint16_t)c, buf, off, len, &sqe);
	sqe.cdw10 = (uint32_t)lba;
	sqe.cdw11 = (uint32_t)(lba >> 32);
	sqe.cdw12 = nlb - 1;
	qp->sq[qp->sq_tail] = sqe;
	qp->sq_tail = (qp->sq_tail + 1) % qp->depth;
	ring(qp->sq_db, qp->sq_tail);
	*cid = (uint16_t)c;
	return 0;
}

int bam_nvme_qp_poll(struct bam_nvme_qp *qp, struct bam_nvme_cqe *cqe, int timeout_ms)
{
	struct bam_nvme_cqe *slot = &qp->cq[qp->cq_head];

	if (qp->broken)
		return fail(-EIO, "queue %u unusable after a timeout", qp->qid);
	if (wait_cqe(slot, qp->phase, (uint32_t)timeout_ms)) {
		/* A late completion would land on a reused slot: retire the queue. */
		if (qp->inflight)
			qp->broken = 1;
		return fail(-ETIMEDOUT, "queue %u: no completion in %d ms (%u in flight)",
			    qp->qid, timeout_ms, qp->inflight);
	}
	*cqe = *slot;
	if (++qp->cq_head == qp->depth) {
		qp->cq_head = 0;
		qp->phase ^= 1;
	}
	ring(qp->cq_db, qp->cq_head);
	if (cqe->cid >= qp->depth || !qp->busy[cqe->cid]) {
		qp->broken = 1;
		return fail(-EIO, "queue %u: completion for unknown cid %u", qp->qid, cqe->cid);
	}
	qp->busy[cqe->cid] = 0;
	qp->inflight--;
	return 0;
}

static int qp_sync(struct bam_nvme_qp *qp, struct bam_nvme_sqe *sqe, const char *what)
{
	struct bam_nvme_cqe cqe;
	uint16_t status;
	uint32_t c;
	int ret;

	if (qp->broken)
		return fail(-EIO, "queue %u unusable after a timeout", qp->qid);
	if (qp->inflight)
		return fail(-EBUSY, "%s on queue %u with %u commands in flight", what, qp->qid,
			    qp->inflight);
	c = qp->next_cid;
	qp->next_cid = (c + 1) % qp->depth;
	qp->busy[c] = 1;
	qp->inflight++;
	sqe->cid = (uint16_t)c;
	qp->sq[qp->sq_tail] = *sqe;
	qp->sq_tail = (qp->sq_tail + 1) % qp->depth;
	ring(qp->sq_db, qp->sq_tail);

	ret = bam_nvme_qp_poll(qp, &cqe, (int)qp->dev->io_timeout_ms);
	if (ret)
		return ret;
	status = BAM_NVME_STATUS(cqe.status);
	if (status)
		return fail(status, "%s on queue %u (status %#x)", what, qp->qid, status);
	return 0;
}

static int rw_sync(struct bam_nvme_qp *qp, uint8_t opcode, uint64_t lba, uint32_t nlb,
		   const struct bam_nvme_dma *buf, size_t off)
{
	struct bam_nvme_cqe cqe;
	uint16_t cid, status;
	int ret;

	if (qp->broken)
		return fail(-EIO, "queue %u unusable after a timeout", qp->qid);
	if (qp->inflight)
		return fail(-EBUSY, "blocking I/O on queue %u with %u commands in flight",
			    qp->qid, qp->inflight);
	ret = bam_nvme_qp_submit_rw(qp, opcode, lba, nlb, buf, off, &cid);
	if (ret)
		return ret;
	ret = bam_nvme_qp_poll(qp, &cqe, (int)qp->dev->io_timeout_ms);
	if (ret)
		return ret;
	status = BAM_NVME_STATUS(cqe.status);
	if (status)
		return fail(status, "%s of %u blocks at LBA %llu (status %#x)",
			    opcode == BAM_NVME_CMD_READ ? "read" : "write", nlb,
			    (unsigned long long)lba, status);
	return 0;
}

int bam_nvme_read(struct bam_nvme_qp *qp, uint64_t lba, uint32_t nlb,
		  const struct bam_nvme_dma *buf, size_t off)
{
	return rw_sync(qp, BAM_NVME_CMD_READ, lba, nlb, buf, off);
}

int bam_nvme_write(struct bam_nvme_qp *qp, uint64_t lba, uint32_t nlb,
		   const struct bam_nvme_dma *buf, size_t off)
{
	return rw_sync(qp, BAM_NVME_CMD_WRITE, lba, nlb, buf, off);
}

int bam_nvme_flush(struct bam_nvme_qp *qp)
{
	struct bam_nvme_sqe sqe = { 0 };

	sqe.opcode = BAM_NVME_CMD_FLUSH;
	sqe.nsid = qp->dev->info.nsid;
	return qp_sync(qp, &sqe, "flush");
}
