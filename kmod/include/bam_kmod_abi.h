/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ioctl ABI of the bam_nvme kernel module (/dev/bam_nvmeN).
 *
 * Shared verbatim by the module and by user space (kmod/lib). Every
 * argument struct starts with { size, version }: user space sets size to
 * sizeof() of the struct it was built with and version to
 * BAM_KMOD_ABI_VERSION. A newer module accepts an older, shorter struct
 * (missing fields read as zero); an older module accepts a newer, longer
 * struct only if the fields it does not know are zero (E2BIG otherwise).
 * All fields are fixed-width and naturally aligned, so 32-bit user space
 * sees the same layout.
 */
#ifndef BAM_KMOD_ABI_H
#define BAM_KMOD_ABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * 2: the module owns the admin queue (BAM_IOC_ENABLE, BAM_IOC_ADMIN); the
 * controller registers (first page of BAR0) are read-only to openers
 * without CAP_SYS_ADMIN; handles carry a generation.
 */
#define BAM_KMOD_ABI_VERSION 2

/* Largest struct size the module accepts (guards against garbage sizes). */
#define BAM_KMOD_MAX_ARG_SIZE 4096

/* struct bam_kmod_info.flags */
#define BAM_KMOD_INFO_GPU (1u << 0) /* built with NVIDIA P2P support */

/**
 * struct bam_kmod_info - describe the controller behind this node
 * @size:          in: sizeof(struct bam_kmod_info)
 * @version:       in: BAM_KMOD_ABI_VERSION
 * @flags:         out: BAM_KMOD_INFO_*
 * @pci_domain:    out: PCI segment of the function
 * @pci_bus:       out: bus number
 * @pci_devfn:     out: device << 3 | function
 * @vendor_id:     out: PCI vendor id
 * @device_id:     out: PCI device id
 * @instance:      out: N of /dev/bam_nvmeN
 * @bar0_size:     out: bytes of BAR0 that mmap(offset 0) may map
 * @max_map_bytes: out: largest length one MAP ioctl accepts
 * @page_size:     out: granularity of host mappings (CPU page size)
 * @rsvd:          zero
 */
struct bam_kmod_info {
	__u32 size;
	__u32 version;
	__u32 flags;
	__u32 pci_domain;
	__u8 pci_bus;
	__u8 pci_devfn;
	__u16 vendor_id;
	__u16 device_id;
	__u16 instance;
	__u64 bar0_size;
	__u64 max_map_bytes;
	__u32 page_size;
	__u32 rsvd;
};

/* struct bam_kmod_map.flags: none defined yet; must be zero. */

/**
 * struct bam_kmod_map - pin and DMA-map a virtual range for the controller
 * @size:      in: sizeof(struct bam_kmod_map)
 * @version:   in: BAM_KMOD_ABI_VERSION
 * @flags:     in: zero
 * @rsvd:      zero
 * @vaddr:     in: start; host: CPU page aligned; GPU: 64 KiB aligned
 * @length:    in: bytes, a non-zero multiple of the same alignment
 * @addrs:     in: user pointer to an array of __u64 that receives one bus
 *             address per @page_size bytes of the range
 * @naddrs:    in: number of entries @addrs can hold
 * @handle:    out: names the mapping for BAM_IOC_UNMAP; never 0, and never
 *             the same value for two mappings of one open file
 * @page_size: out: bytes covered by each entry of @addrs
 * @npages:    out: entries written to @addrs
 */
struct bam_kmod_map {
	__u32 size;
	__u32 version;
	__u32 flags;
	__u32 rsvd;
	__u64 vaddr;
	__u64 length;
	__u64 addrs;
	__u64 naddrs;
	__u64 handle;
	__u32 page_size;
	__u32 npages;
};

/**
 * struct bam_kmod_unmap - undo one BAM_IOC_MAP_*
 * @size:    in: sizeof(struct bam_kmod_unmap)
 * @version: in: BAM_KMOD_ABI_VERSION
 * @handle:  in: bam_kmod_map.handle
 */
struct bam_kmod_unmap {
	__u32 size;
	__u32 version;
	__u64 handle;
};

/**
 * struct bam_kmod_enable - reset the controller and enable it with the
 * module's admin queue (BAM_IOC_ENABLE)
 * @size:    in: sizeof(struct bam_kmod_enable)
 * @version: in: BAM_KMOD_ABI_VERSION
 * @flags:   in: zero
 * @rsvd:    zero
 */
struct bam_kmod_enable {
	__u32 size;
	__u32 version;
	__u32 flags;
	__u32 rsvd;
};

/**
 * struct bam_kmod_admin - run one admin command on the module's admin queue
 * @size:       in: sizeof(struct bam_kmod_admin)
 * @version:    in: BAM_KMOD_ABI_VERSION
 * @timeout_ms: in: how long to wait for the completion; 0 means 5000,
 *              at most 60000
 * @rsvd:       zero
 * @cmd:        in: the 64-byte submission queue entry (little endian); the
 *              module sets the command identifier. Data pointers are bus
 *              addresses from BAM_IOC_MAP_*.
 * @result:     out: completion dword 0
 * @result1:    out: completion dword 1
 * @status:     out: status field of the completion (without the phase
 *              bit); 0 is success
 * @rsvd2:      zero
 *
 * Identify, create/delete I/O queues and get/set features "number of
 * queues" are open to the file's owner; any other command needs
 * CAP_SYS_ADMIN (EPERM otherwise), as with Linux's nvme driver.
 */
struct bam_kmod_admin {
	__u32 size;
	__u32 version;
	__u32 timeout_ms;
	__u32 rsvd;
	__u32 cmd[16];
	__u32 result;
	__u32 result1;
	__u16 status;
	__u16 rsvd2[3];
};

#define BAM_KMOD_IOC_MAGIC 0xBA

#define BAM_IOC_INFO _IOWR(BAM_KMOD_IOC_MAGIC, 0x00, struct bam_kmod_info)
#define BAM_IOC_MAP_HOST _IOWR(BAM_KMOD_IOC_MAGIC, 0x01, struct bam_kmod_map)
#define BAM_IOC_MAP_GPU _IOWR(BAM_KMOD_IOC_MAGIC, 0x02, struct bam_kmod_map)
#define BAM_IOC_UNMAP _IOWR(BAM_KMOD_IOC_MAGIC, 0x03, struct bam_kmod_unmap)
#define BAM_IOC_ENABLE _IOWR(BAM_KMOD_IOC_MAGIC, 0x04, struct bam_kmod_enable)
#define BAM_IOC_ADMIN _IOWR(BAM_KMOD_IOC_MAGIC, 0x05, struct bam_kmod_admin)

#endif /* BAM_KMOD_ABI_H */
