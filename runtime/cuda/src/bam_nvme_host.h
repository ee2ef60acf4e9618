/* SPDX-License-Identifier: MIT */
/*
 * User-space NVMe host library over /dev/bam_nvmeN.
 *
 * Brings a controller up from user space (reset, admin queue, identify,
 * queue count), creates I/O queue pairs in DMA-mapped memory and moves data
 * with PRP-described reads and writes, polling completions. The GPU queue
 * code uses the lower layer (BAR pointer, DMA maps of GPU memory, raw queue
 * creation at given bus addresses); the queue-pair API is for the CPU.
 *
 * Errors: 0 is success; a negative errno is a system or protocol failure
 * (-ETIMEDOUT when the controller does not answer in time, -ENODEV when it
 * is gone); a positive value is the NVMe status field of a failed command
 * (the completion's status word without the phase bit). bam_nvme_strerror()
 * names both; bam_nvme_errmsg() holds a sentence with the context of the
 * calling thread's last failure.
 *
 * Threads: one device may be shared; admin commands are serialised inside.
 * A queue pair belongs to one thread at a time.
 */
#ifndef BAM_KMOD_LIB_BAM_NVME_HOST_H
#define BAM_KMOD_LIB_BAM_NVME_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <bam/nvme/spec.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bam_nvme_dev;
struct bam_nvme_qp;

/* Zero fields take the default in brackets. */
struct bam_nvme_opts {
	uint32_t nsid;             /* namespace to use [1] */
	uint32_t io_queues;        /* I/O queue pairs to ask for [64] */
	uint32_t admin_timeout_ms; /* per admin command [5000] */
	uint32_t io_timeout_ms;    /* per I/O in the blocking calls [5000] */
};

struct bam_nvme_ctrl_info {
	uint16_t vendor_id;
	char serial[21];
	char model[41];
	char firmware[9];
	uint32_t version;         /* VS register */
	uint32_t nsid;
	uint32_t lba_size;        /* bytes per logical block */
	uint64_t nlbas;           /* namespace size in logical blocks */
	uint32_t max_transfer;    /* bytes one read/write may move */
	uint32_t io_queues;       /* I/O queue pairs granted */
	uint32_t max_queue_depth; /* entries per I/O queue (CAP.MQES + 1) */
	uint32_t doorbell_stride; /* bytes between doorbells */
};

/* Memory the controller can reach: host pages pinned by the module, or GPU
 * memory mapped through NVIDIA P2P. bus[i] covers page_size bytes. */
struct bam_nvme_dma {
	void *vaddr;
	size_t size;
	uint64_t handle;
	uint32_t page_size;
	int gpu;      /* GPU memory (BAM_IOC_MAP_GPU) */
	int borrowed; /* caller's memory: dma_free unmaps but does not munmap */
	uint64_t *bus;
	size_t npages;
};

/* Bus address of byte @off of @buf (@off < buf->size). */
static inline uint64_t bam_nvme_dma_addr(const struct bam_nvme_dma *buf, size_t off)
{
	return buf->bus[off / buf->page_size] + off % buf->page_size;
}

const char *bam_nvme_strerror(int err);
const char *bam_nvme_errmsg(void);

/* Open @path, map BAR0, reset and enable the controller, identify it and
 * the namespace, and negotiate the number of I/O queues. */
int bam_nvme_open(const char *path, const struct bam_nvme_opts *opts,
		  struct bam_nvme_dev **out);
/* Destroy remaining queue pairs, shut the controller down, release all. */
void bam_nvme_close(struct bam_nvme_dev *dev);

const struct bam_nvme_ctrl_info *bam_nvme_info(const struct bam_nvme_dev *dev);
int bam_nvme_fd(const struct bam_nvme_dev *dev);
volatile void *bam_nvme_bar(const struct bam_nvme_dev *dev);
size_t bam_nvme_bar_size(const struct bam_nvme_dev *dev);
/* Address of the SQ tail (or CQ head) doorbell of @qid in the BAR. */
volatile uint32_t *bam_nvme_sq_doorbell(const struct bam_nvme_dev *dev, uint16_t qid);
volatile uint32_t *bam_nvme_cq_doorbell(const struct bam_nvme_dev *dev, uint16_t qid);

/* Zeroed, page-aligned host memory, pinned and mapped for the controller. */
int bam_nvme_dma_alloc(struct bam_nvme_dev *dev, size_t size, struct bam_nvme_dma *buf);
/* Pin and map the caller's memory (page aligned, writable, e.g. before
 * cudaHostRegister()); it stays the caller's to free after dma_free. */
int bam_nvme_dma_map_host(struct bam_nvme_dev *dev, void *vaddr, size_t size,
			  struct bam_nvme_dma *buf);
/* Map @size bytes of GPU memory at @gpu_va (64 KiB aligned): -EOPNOTSUPP
 * unless the module was built with NVIDIA P2P support. */
int bam_nvme_dma_map_gpu(struct bam_nvme_dev *dev, void *gpu_va, size_t size,
			 struct bam_nvme_dma *buf);
void bam_nvme_dma_free(struct bam_nvme_dev *dev, struct bam_nvme_dma *buf);

/* Run one admin command (cid is filled in); *result gets dword 0. */
int bam_nvme_admin(struct bam_nvme_dev *dev, struct bam_nvme_sqe *cmd, uint32_t *result);

/* Reserve / release an I/O queue id (1..io_queues). */
int bam_nvme_qid_alloc(struct bam_nvme_dev *dev);
void bam_nvme_qid_free(struct bam_nvme_dev *dev, uint16_t qid);
/* Create the CQ and SQ @qid of @depth entries at the given bus addresses
 * (physically contiguous, polled, no interrupts); delete both. */
int bam_nvme_create_io_queues(struct bam_nvme_dev *dev, uint16_t qid, uint32_t depth,
			      uint64_t sq_bus, uint64_t cq_bus);
int bam_nvme_delete_io_queues(struct bam_nvme_dev *dev, uint16_t qid);

/* A CPU-driven I/O queue pair in host memory. @depth 0 picks 64. */
int bam_nvme_qp_create(struct bam_nvme_dev *dev, uint32_t depth, struct bam_nvme_qp **out);
int bam_nvme_qp_destroy(struct bam_nvme_qp *qp);
uint16_t bam_nvme_qp_id(const struct bam_nvme_qp *qp);
/* Commands that can be outstanding at once (depth - 1). */
uint32_t bam_nvme_qp_slots(const struct bam_nvme_qp *qp);

/* Queue a read or write of @nlb blocks at @lba from/to @buf at byte @off
 * (dword aligned) and ring the doorbell. -EAGAIN when the queue is full.
 * *cid identifies the command in its completion. */
int bam_nvme_qp_submit_rw(struct bam_nvme_qp *qp, uint8_t opcode, uint64_t lba,
			  uint32_t nlb, const struct bam_nvme_dma *buf, size_t off,
			  uint16_t *cid);
/* Wait up to @timeout_ms for the next completion; fills *cqe. Returns 0,
 * -ETIMEDOUT, or -EIO if the queue is broken by an earlier timeout. */
int bam_nvme_qp_poll(struct bam_nvme_qp *qp, struct bam_nvme_cqe *cqe, int timeout_ms);

/* Blocking single commands on an idle queue pair. */
int bam_nvme_read(struct bam_nvme_qp *qp, uint64_t lba, uint32_t nlb,
		  const struct bam_nvme_dma *buf, size_t off);
int bam_nvme_write(struct bam_nvme_qp *qp, uint64_t lba, uint32_t nlb,
		   const struct bam_nvme_dma *buf, size_t off);
int bam_nvme_flush(struct bam_nvme_qp *qp);

#ifdef __cplusplus
}
#endif

#endif /* BAM_KMOD_LIB_BAM_NVME_HOST_H */
