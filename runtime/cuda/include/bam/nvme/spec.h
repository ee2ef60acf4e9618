/* NVMe protocol definitions shared by every piece of bamgen that speaks
 * NVMe: the GPU queue code (runtime/cuda), the software controller behind
 * the `emu` backend, and the user-space host library (src/bam_nvme_host.c).
 *
 * Plain C99 so the kernel-side tests, the C host library, C++17 and CUDA all
 * include the same layouts. Field names follow the NVMe 1.4 base
 * specification; every struct's size is checked at compile time.
 */
#ifndef BAM_NVME_SPEC_H
#define BAM_NVME_SPEC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Controller registers (offsets into BAR0). */
enum {
	BAM_NVME_REG_CAP = 0x00,   /* 64-bit capabilities */
	BAM_NVME_REG_VS = 0x08,    /* version */
	BAM_NVME_REG_INTMS = 0x0c,
	BAM_NVME_REG_INTMC = 0x10,
	BAM_NVME_REG_CC = 0x14,    /* controller configuration */
	BAM_NVME_REG_CSTS = 0x1c,  /* controller status */
	BAM_NVME_REG_AQA = 0x24,   /* admin queue attributes */
	BAM_NVME_REG_ASQ = 0x28,   /* 64-bit admin SQ base */
	BAM_NVME_REG_ACQ = 0x30,   /* 64-bit admin CQ base */
	BAM_NVME_REG_DBS = 0x1000  /* first doorbell */
};

/* CAP fields. */
#define BAM_NVME_CAP_MQES(cap) ((uint32_t)((cap)&0xffff))          /* max queue entries - 1 */
#define BAM_NVME_CAP_TO(cap) ((uint32_t)(((cap) >> 24) & 0xff))    /* ready timeout, 500 ms units */
#define BAM_NVME_CAP_DSTRD(cap) ((uint32_t)(((cap) >> 32) & 0xf))  /* doorbell stride 4 << DSTRD */
#define BAM_NVME_CAP_MPSMIN(cap) ((uint32_t)(((cap) >> 48) & 0xf)) /* min page 2^(12+MPSMIN) */

/* CC fields. */
#define BAM_NVME_CC_EN (1u << 0)
#define BAM_NVME_CC_CSS_NVM (0u << 4)
#define BAM_NVME_CC_MPS(shift) ((uint32_t)((shift)-12) << 7)
#define BAM_NVME_CC_IOSQES (6u << 16) /* 64-byte SQ entries */
#define BAM_NVME_CC_IOCQES (4u << 20) /* 16-byte CQ entries */
#define BAM_NVME_CSTS_RDY (1u << 0)
#define BAM_NVME_CSTS_CFS (1u << 1)

/* Doorbell offset of queue `qid`; tail for SQ, head for CQ. */
#define BAM_NVME_SQ_TDBL(qid, dstrd) (BAM_NVME_REG_DBS + (2u * (qid)) * (4u << (dstrd)))
#define BAM_NVME_CQ_HDBL(qid, dstrd) (BAM_NVME_REG_DBS + (2u * (qid) + 1u) * (4u << (dstrd)))

/* Opcodes. */
enum {
	BAM_NVME_ADMIN_DELETE_SQ = 0x00,
	BAM_NVME_ADMIN_CREATE_SQ = 0x01,
	BAM_NVME_ADMIN_DELETE_CQ = 0x04,
	BAM_NVME_ADMIN_CREATE_CQ = 0x05,
	BAM_NVME_ADMIN_IDENTIFY = 0x06,
	BAM_NVME_ADMIN_SET_FEATURES = 0x09,
	BAM_NVME_ADMIN_GET_FEATURES = 0x0a,
	BAM_NVME_CMD_FLUSH = 0x00,
	BAM_NVME_CMD_WRITE = 0x01,
	BAM_NVME_CMD_READ = 0x02
};

/* Identify CNS values. */
enum { BAM_NVME_IDENTIFY_NS = 0x00, BAM_NVME_IDENTIFY_CTRL = 0x01 };

/* Feature ids. */
enum { BAM_NVME_FEAT_NUM_QUEUES = 0x07 };

/* Submission queue entry (64 bytes). */
struct bam_nvme_sqe {
	uint8_t opcode;
	uint8_t flags; /* FUSE bits 1:0, PSDT bits 7:6 (0 = PRP) */
	uint16_t cid;  /* command identifier, echoed in the completion */
	uint32_t nsid;
	uint32_t cdw2, cdw3;
	uint64_t mptr;
	uint64_t prp1;
	uint64_t prp2;
	uint32_t cdw10; /* read/write: starting LBA low */
	uint32_t cdw11; /* read/write: starting LBA high */
	uint32_t cdw12; /* read/write: number of LBAs - 1 in bits 15:0 */
	uint32_t cdw13, cdw14, cdw15;
};

/* Completion queue entry (16 bytes). */
struct bam_nvme_cqe {
	uint32_t result; /* command specific (dword 0) */
	uint32_t rsvd;
	uint16_t sq_head; /* SQ head pointer as the controller has consumed it */
	uint16_t sq_id;
	uint16_t cid;
	uint16_t status; /* bit 0: phase tag; bits 15:1: status field */
};

/* Status field helpers (status word without the phase bit). */
#define BAM_NVME_CQE_PHASE(st) ((st)&1u)
#define BAM_NVME_STATUS(st) ((uint16_t)((st) >> 1))
#define BAM_NVME_SC(status) ((status)&0xff)         /* status code */
#define BAM_NVME_SCT(status) (((status) >> 8) & 0x7) /* status code type */
#define BAM_NVME_DNR(status) (((status) >> 14) & 0x1)

/* Generic status codes (SCT 0) the project reports by name. */
enum {
	BAM_NVME_SC_SUCCESS = 0x00,
	BAM_NVME_SC_INVALID_OPCODE = 0x01,
	BAM_NVME_SC_INVALID_FIELD = 0x02,
	BAM_NVME_SC_CID_CONFLICT = 0x03,
	BAM_NVME_SC_DATA_XFER_ERROR = 0x04,
	BAM_NVME_SC_INTERNAL = 0x06,
	BAM_NVME_SC_ABORT_REQ = 0x07,
	BAM_NVME_SC_INVALID_NS = 0x0b,
	BAM_NVME_SC_LBA_RANGE = 0x80,
	BAM_NVME_SC_CAP_EXCEEDED = 0x81,
	BAM_NVME_SC_NS_NOT_READY = 0x82
};

#ifdef __cplusplus
}
static_assert(sizeof(bam_nvme_sqe) == 64, "bam_nvme_sqe must be 64 bytes");
static_assert(sizeof(bam_nvme_cqe) == 16, "bam_nvme_cqe must be 16 bytes");
#else
_Static_assert(sizeof(struct bam_nvme_sqe) == 64, "bam_nvme_sqe must be 64 bytes");
_Static_assert(sizeof(struct bam_nvme_cqe) == 16, "bam_nvme_cqe must be 16 bytes");
#endif

/* A readable name for an NVMe status (without the phase bit). */
static inline const char *bam_nvme_status_str(uint16_t status)
{
	if (BAM_NVME_SCT(status) != 0)
		return BAM_NVME_SCT(status) == 1 ? "command specific error" : "media or path error";
	switch (BAM_NVME_SC(status)) {
	case BAM_NVME_SC_SUCCESS: return "success";
	case BAM_NVME_SC_INVALID_OPCODE: return "invalid command opcode";
	case BAM_NVME_SC_INVALID_FIELD: return "invalid field in command";
	case BAM_NVME_SC_CID_CONFLICT: return "command id conflict";
	case BAM_NVME_SC_DATA_XFER_ERROR: return "data transfer error";
	case BAM_NVME_SC_INTERNAL: return "internal error";
	case BAM_NVME_SC_ABORT_REQ: return "command abort requested";
	case 0x13: return "PRP offset invalid";
	case BAM_NVME_SC_INVALID_NS: return "invalid namespace or format";
	case BAM_NVME_SC_LBA_RANGE: return "LBA out of range";
	case BAM_NVME_SC_CAP_EXCEEDED: return "capacity exceeded";
	case BAM_NVME_SC_NS_NOT_READY: return "namespace not ready";
	default: return "unknown generic status";
	}
}

#endif /* BAM_NVME_SPEC_H */
