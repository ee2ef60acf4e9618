// SPDX-License-Identifier: GPL-2.0
/*
 * bam_nvme: hand NVMe controllers to user space for GPU-initiated I/O.
 *
 * The module binds only PCI functions that an administrator hands it
 * (driver_override or new_id); it has no static id table, so loading it
 * never takes a disk away from the nvme driver. For each controller it
 * creates /dev/bam_nvmeN, which lets one privileged process at a time
 *   - mmap BAR0 (doorbells; the controller registers read-only unless the
 *     opener has CAP_SYS_ADMIN; never the MSI-X table),
 *   - reset and enable the controller with an admin queue the module owns,
 *     and run the admin commands a queue set-up needs (others need
 *     CAP_SYS_ADMIN, as with the nvme driver),
 *   - pin and map its own memory (host pages, or GPU memory through
 *     NVIDIA's peer-to-peer API when built against it) for the controller
 *     and learn the bus address of every page,
 * so that the user-space queue code can drive the I/O queues directly.
 *
 * DMA isolation follows vfio: the function's whole IOMMU group is claimed
 * (driver_managed_dma), attached to a domain of the module's own, and every
 * mapping is an iommu_map() of pinned pages into it. iommu_unmap() flushes
 * the IOTLB before it returns, and only then are the pages unpinned, so no
 * DMA reaches a page after BAM_IOC_UNMAP returns or after close, whatever
 * the kernel's default domain type (strict, lazy/DMA-FQ or identity). The
 * controller reaches nothing else. Without an IOMMU the module refuses to
 * bind unless allow_unsafe_noiommu is set (which taints the kernel).
 *
 * Pins are charged to the opener's RLIMIT_MEMLOCK (mm->pinned_vm, VmPin)
 * and to a global cap. On every last close and on unbind the controller is
 * shut down and disabled and bus mastering is cleared before any page is
 * unmapped or unpinned.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cdev.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/iommu.h>
#include <linux/iova.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/xarray.h>

#ifdef BAM_HAVE_NV_P2P
#include <nv-p2p.h>
#endif

#include "include/bam_kmod_abi.h"

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "bam_nvme needs Linux 6.1 or newer (IOMMU group DMA ownership)"
#endif

#define BAM_NAME "bam_nvme"
#define BAM_MINORS 256
#define BAM_MAX_MAPPINGS 65536		/* per open file */
#define BAM_MAX_PAGE_REFS 16		/* mappings of one page per open file */
#define BAM_PIN_CHUNK 512		/* pages pinned before refs are counted */
#define BAM_MAX_MAP_MB 65536U		/* bound of max_map_mb (64 GiB) */
#define BAM_GPU_PAGE_SIZE (64UL << 10)
#define BAM_IOVA_START (SZ_1M >> PAGE_SHIFT)
#define BAM_IOVA_BITS 39		/* every VT-d and AMD-Vi walks 39 bits */
/* Per-map arrays (up to 128 MiB at max_map_mb=65536): charged to the
 * caller's memcg, and a failure is ENOMEM, not an allocation splat. */
#define BAM_GFP_BIG (GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

/* Controller registers and fields the module itself uses. */
#define BAM_REG_CAP 0x00
#define BAM_REG_INTMS 0x0c
#define BAM_REG_CC 0x14
#define BAM_REG_CSTS 0x1c
#define BAM_REG_AQA 0x24
#define BAM_REG_ASQ 0x28
#define BAM_REG_ACQ 0x30
#define BAM_REG_DBS 0x1000
#define BAM_CAP_TO(cap) (((cap) >> 24) & 0xff)
#define BAM_CAP_DSTRD(cap) (((cap) >> 32) & 0xf)
#define BAM_CAP_CSS_NVM(cap) (((cap) >> 37) & 1)
#define BAM_CAP_MPSMIN(cap) (((cap) >> 48) & 0xf)
#define BAM_CC_EN 0x1
#define BAM_CC_SHN_NORMAL (1U << 14)
#define BAM_CC_SHN_MASK (3U << 14)
#define BAM_CC_IOSQES (6U << 16)
#define BAM_CC_IOCQES (4U << 20)
#define BAM_CSTS_RDY 0x1
#define BAM_CSTS_CFS 0x2
#define BAM_CSTS_SHST_MASK (3U << 2)
#define BAM_CSTS_SHST_CMPLT (2U << 2)
#define BAM_BAR0_MIN 0x2000 /* registers + admin doorbells */
#define BAM_ADMIN_DEPTH 32
#define BAM_ADMIN_TIMEOUT_MS 5000
#define BAM_ADMIN_MAX_TIMEOUT_MS 60000
#define BAM_SHUTDOWN_MS 5000

/* Admin opcodes open to the owner without CAP_SYS_ADMIN. */
#define BAM_ADM_DELETE_SQ 0x00
#define BAM_ADM_CREATE_SQ 0x01
#define BAM_ADM_DELETE_CQ 0x04
#define BAM_ADM_CREATE_CQ 0x05
#define BAM_ADM_IDENTIFY 0x06
#define BAM_ADM_SET_FEATURES 0x09
#define BAM_ADM_GET_FEATURES 0x0a
#define BAM_FEAT_NUM_QUEUES 0x07
#define BAM_SQE_FUSE_PSDT 0xc300 /* CDW0 bits an admin command must not set */

static unsigned int max_map_mb = 1024;
static unsigned int max_pinned_mb;
static bool allow_unsafe_noiommu;

static int bam_param_set_mb(const char *val, const struct kernel_param *kp,
			    unsigned int lo, unsigned int hi)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < lo || v > hi)
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static int bam_set_max_map_mb(const char *val, const struct kernel_param *kp)
{
	return bam_param_set_mb(val, kp, 1, BAM_MAX_MAP_MB);
}

static int bam_set_max_pinned_mb(const char *val, const struct kernel_param *kp)
{
	return bam_param_set_mb(val, kp, 0, INT_MAX);
}

static const struct kernel_param_ops bam_max_map_mb_ops = {
	.set = bam_set_max_map_mb,
	.get = param_get_uint,
};

static const struct kernel_param_ops bam_max_pinned_mb_ops = {
	.set = bam_set_max_pinned_mb,
	.get = param_get_uint,
};

module_param_cb(max_map_mb, &bam_max_map_mb_ops, &max_map_mb, 0444);
MODULE_PARM_DESC(max_map_mb,
		 "Largest single DMA mapping in MiB (1..65536, default 1024)");
module_param_cb(max_pinned_mb, &bam_max_pinned_mb_ops, &max_pinned_mb, 0444);
MODULE_PARM_DESC(max_pinned_mb,
		 "Host memory all openers together may pin, MiB (default 0: half of RAM)");
module_param(allow_unsafe_noiommu, bool, 0444);
MODULE_PARM_DESC(allow_unsafe_noiommu,
		 "Bind functions that no IOMMU translates: the controller can then DMA anywhere; taints the kernel (default N)");

static unsigned long bam_pinned_max;	/* pages, from max_pinned_mb */
static atomic_long_t bam_pinned_total;	/* pages charged over all files */

/**
 * struct bam_ctrl - one bound NVMe function
 * @pdev:       the PCI function (a reference is held)
 * @bar:        kernel mapping of BAR0: admin doorbells and CC/CSTS
 * @bar_phys:   bus-physical start of BAR0 (for user mmap)
 * @bar_len:    length of BAR0
 * @map_len:    bytes of BAR0 user space may map (below the MSI-X table)
 * @hole_lo:    first page of BAR0 holding MSI-X table or PBA
 * @hole_hi:    page after the last such page (== @hole_lo: none)
 * @instance:   N of /dev/bam_nvmeN, or -1
 * @dev:        the class device; its release frees this struct
 * @cdev:       the character device, child of @dev
 * @lock:       protects @owner and @dead against open/release/remove
 * @owner:      the open file, if any (one at a time)
 * @bar_sem:    held for read while a BAR fault inserts a PTE
 * @dead:       set once remove has started; read under @lock, @bar_sem,
 *              @admin_lock or a file's lock (remove takes all after
 *              setting it)
 * @info:       what BAM_IOC_INFO reports, fixed at probe
 * @group:      the IOMMU group, claimed for the module; NULL without IOMMU
 * @domain:     the module's own domain the group is attached to
 * @iovad:      IOVA allocator of @domain
 * @iova_limit: last usable IOVA page frame
 * @prot:       IOMMU_* flags for host pages
 * @admin_lock: serialises the admin queue and every CC write
 * @admin_mem:  admin SQ (first page) and CQ (second page)
 * @admin_dma:  their bus address
 * @sq_tail:    admin SQ tail
 * @cq_head:    admin CQ head
 * @phase:      expected admin CQ phase
 * @cid:        last admin command identifier used
 * @enabled:    CC.EN set by BAM_IOC_ENABLE and not cleared since
 * @admin_broken: a command timed out; the queue is not reused
 * @dstrd:      doorbell stride (bytes)
 * @nr_maps:    live mappings (sysfs "mappings")
 * @nr_pinned:  host pages held pinned (sysfs "pinned_pages")
 */
struct bam_ctrl {
	struct pci_dev *pdev;
	void __iomem *bar;
	resource_size_t bar_phys;
	resource_size_t bar_len;
	resource_size_t map_len;
	unsigned long hole_lo;
	unsigned long hole_hi;
	int instance;
	struct device dev;
	struct cdev cdev;
	struct mutex lock;
	struct bam_file *owner;
	struct rw_semaphore bar_sem;
	bool dead;
	struct bam_kmod_info info;
	struct iommu_group *group;
	struct iommu_domain *domain;
	struct iova_domain iovad;
	unsigned long iova_limit;
	int prot;
	struct mutex admin_lock;
	void *admin_mem;
	dma_addr_t admin_dma;
	u16 sq_tail;
	u16 cq_head;
	u8 phase;
	u16 cid;
	bool enabled;
	bool admin_broken;
	u32 dstrd;
	atomic_long_t nr_maps;
	atomic_long_t nr_pinned;
};

/**
 * struct bam_file - the open of /dev/bam_nvmeN
 * @ctrl:     the controller (a reference on ctrl->dev is held)
 * @mapping:  the open file's address space, for revoking BAR mappings
 * @mm:       the opener's memory: only it may map, and it is charged
 * @regs_rw:  the opener had CAP_SYS_ADMIN: controller registers writable
 * @lock:     serialises map/unmap and teardown of @maps and @pfns
 * @maps:     handle index -> struct bam_map
 * @next_id:  cursor of the cyclic handle index allocation
 * @gen:      generation of the last handle handed out
 * @pfns:     host page frame -> number of mappings of it (xa value)
 * @charged:  distinct host pages charged to @mm
 */
struct bam_file {
	struct bam_ctrl *ctrl;
	struct address_space *mapping;
	struct mm_struct *mm;
	bool regs_rw;
	struct mutex lock;
	struct xarray maps;
	u32 next_id;
	u32 gen;
	struct xarray pfns;
	unsigned long charged;
};

enum bam_map_kind { BAM_MAP_HOST, BAM_MAP_GPU };

#ifdef BAM_HAVE_NV_P2P
enum bam_gpu_state {
	BAM_GPU_LIVE,		/* ours to unmap and put */
	BAM_GPU_UNMAPPING,	/* unmap owns it; the callback does nothing */
	BAM_GPU_REVOKED,	/* the free callback took it */
};
#endif

/**
 * struct bam_map - one pinned range mapped for the controller
 * @handle:    generation << 32 | index in bf->maps
 * @kind:      host pages or GPU memory
 * @npages:    pages pinned (host) or GPU pages mapped
 * @pages:     pinned host pages
 * @iova:      start of the range in ctrl->domain (contiguous)
 * @sgt:       scatterlist, DMA-mapped, without an IOMMU only
 * @ctrl:      owner, for NVIDIA's free callback
 * @gpu_va:    GPU virtual address passed to nvidia_p2p_get_pages()
 * @gpu_pt:    NVIDIA page table
 * @gpu_dma:   NVIDIA DMA mapping for ctrl->pdev (no IOMMU only)
 * @gpu_lock:  protects @gpu_state
 * @gpu_state: who tears the NVIDIA objects down
 * @gpu_done:  completed when the free callback has finished with this map
 */
struct bam_map {
	u64 handle;
	enum bam_map_kind kind;
	unsigned long npages;
	struct page **pages;
	dma_addr_t iova;
	struct sg_table sgt;
#ifdef BAM_HAVE_NV_P2P
	struct bam_ctrl *ctrl;
	u64 gpu_va;
	struct nvidia_p2p_page_table *gpu_pt;
	struct nvidia_p2p_dma_mapping *gpu_dma;
	spinlock_t gpu_lock;
	enum bam_gpu_state gpu_state;
	struct completion gpu_done;
#endif
};

static DEFINE_IDA(bam_ida);
static dev_t bam_devt;
static struct class *bam_class;

/* ---- ABI checks ------------------------------------------------------ */

static void bam_abi_checks(void)
{
	BUILD_BUG_ON(sizeof(struct bam_kmod_info) != 48);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, size) != 0);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, version) != 4);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, flags) != 8);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, pci_domain) != 12);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, pci_bus) != 16);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, pci_devfn) != 17);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, vendor_id) != 18);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, device_id) != 20);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, instance) != 22);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, bar0_size) != 24);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, max_map_bytes) != 32);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, page_size) != 40);
	BUILD_BUG_ON(offsetof(struct bam_kmod_info, rsvd) != 44);

	BUILD_BUG_ON(sizeof(struct bam_kmod_map) != 64);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, size) != 0);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, version) != 4);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, flags) != 8);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, rsvd) != 12);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, vaddr) != 16);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, length) != 24);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, addrs) != 32);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, naddrs) != 40);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, handle) != 48);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, page_size) != 56);
	BUILD_BUG_ON(offsetof(struct bam_kmod_map, npages) != 60);

	BUILD_BUG_ON(sizeof(struct bam_kmod_unmap) != 16);
	BUILD_BUG_ON(offsetof(struct bam_kmod_unmap, size) != 0);
	BUILD_BUG_ON(offsetof(struct bam_kmod_unmap, version) != 4);
	BUILD_BUG_ON(offsetof(struct bam_kmod_unmap, handle) != 8);

	BUILD_BUG_ON(sizeof(struct bam_kmod_enable) != 16);
	BUILD_BUG_ON(offsetof(struct bam_kmod_enable, flags) != 8);
	BUILD_BUG_ON(offsetof(struct bam_kmod_enable, rsvd) != 12);

	BUILD_BUG_ON(sizeof(struct bam_kmod_admin) != 96);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, timeout_ms) != 8);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, rsvd) != 12);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, cmd) != 16);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, result) != 80);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, result1) != 84);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, status) != 88);
	BUILD_BUG_ON(offsetof(struct bam_kmod_admin, rsvd2) != 90);

	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_INFO) != sizeof(struct bam_kmod_info));
	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_MAP_HOST) !=
		     sizeof(struct bam_kmod_map));
	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_UNMAP) != sizeof(struct bam_kmod_unmap));
	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_ENABLE) !=
		     sizeof(struct bam_kmod_enable));
	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_ADMIN) != sizeof(struct bam_kmod_admin));
	BUILD_BUG_ON(sizeof(struct bam_kmod_admin) > BAM_KMOD_MAX_ARG_SIZE);
}

/* ---- compat shims ---------------------------------------------------- */

static void bam_vma_set_flags(struct vm_area_struct *vma, unsigned long flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static char *bam_devnode(const struct device *dev, umode_t *mode)
#else
static char *bam_devnode(struct device *dev, umode_t *mode)
#endif
{
	/* Raw DMA to any address: root only unless an admin says otherwise. */
	if (mode)
		*mode = 0600;
	return NULL;
}

static struct class *bam_class_create(void)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return class_create(BAM_NAME);
#else
	return class_create(THIS_MODULE, BAM_NAME);
#endif
}

static int bam_iommu_map(struct iommu_domain *domain, unsigned long iova,
			 phys_addr_t paddr, size_t size, int prot)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	return iommu_map(domain, iova, paddr, size, prot, GFP_KERNEL);
#else
	return iommu_map(domain, iova, paddr, size, prot);
#endif
}

static struct iommu_domain *bam_iommu_domain_alloc(struct pci_dev *pdev)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	struct iommu_domain *domain = iommu_paging_domain_alloc(&pdev->dev);

	return IS_ERR(domain) ? NULL : domain;
#else
	return iommu_domain_alloc(pdev->dev.bus);
#endif
}

/* ---- controller registers and admin queue ----------------------------- */

/* Wait up to @ms for (CSTS & @mask) == @want; false on timeout or if the
 * function no longer answers. */
static bool bam_wait_csts(struct bam_ctrl *ctrl, u32 mask, u32 want,
			  unsigned int ms)
{
	unsigned long timeout = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		u32 csts = readl(ctrl->bar + BAM_REG_CSTS);

		if (csts == ~0U)
			return false;
		if ((csts & mask) == want)
			return true;
		if (time_after(jiffies, timeout))
			return false;
		usleep_range(1000, 2000);
	}
}

static unsigned int bam_cap_timeout_ms(struct bam_ctrl *ctrl)
{
	u64 cap = lo_hi_readq(ctrl->bar + BAM_REG_CAP);

	return (BAM_CAP_TO(cap) + 1) * 500;
}

/*
 * Stop all DMA of the controller before memory it may target goes away:
 * a normal shutdown when @shutdown and it is running (a real SSD flushes
 * its cache), then CC.EN = 0 and wait for CSTS.RDY = 0, bounded by CAP.TO.
 * If it does not stop, cut bus mastering. The caller clears bus mastering
 * afterwards anyway when the file goes; ENABLE sets it again.
 * Called with ctrl->admin_lock held and ctrl->dead clear.
 */
static void bam_ctrl_disable(struct bam_ctrl *ctrl, bool shutdown)
{
	u32 cc = readl(ctrl->bar + BAM_REG_CC);
	u32 csts = readl(ctrl->bar + BAM_REG_CSTS);

	ctrl->enabled = false;
	if (cc == ~0U || csts == ~0U)
		return;
	if (shutdown && (cc & BAM_CC_EN) && (csts & BAM_CSTS_RDY) &&
	    !(csts & BAM_CSTS_CFS)) {
		writel((cc & ~BAM_CC_SHN_MASK) | BAM_CC_SHN_NORMAL,
		       ctrl->bar + BAM_REG_CC);
		if (!bam_wait_csts(ctrl, BAM_CSTS_SHST_MASK, BAM_CSTS_SHST_CMPLT,
				   BAM_SHUTDOWN_MS))
			dev_warn(&ctrl->pdev->dev, "shutdown did not complete\n");
	}
	if (!(cc & BAM_CC_EN) && !(csts & BAM_CSTS_RDY))
		return;
	writel(cc & ~(BAM_CC_EN | BAM_CC_SHN_MASK), ctrl->bar + BAM_REG_CC);
	if (bam_wait_csts(ctrl, BAM_CSTS_RDY, 0, bam_cap_timeout_ms(ctrl)))
		return;
	dev_warn(&ctrl->pdev->dev,
		 "controller did not stop; disabling bus mastering\n");
	pci_clear_master(ctrl->pdev);
}

/* Reset the controller and enable it with the module's admin queue.
 * Called with ctrl->admin_lock held and ctrl->dead clear. */
static int bam_ctrl_enable(struct bam_ctrl *ctrl)
{
	u64 cap = lo_hi_readq(ctrl->bar + BAM_REG_CAP);
	u64 asq = ctrl->admin_dma, acq = ctrl->admin_dma + PAGE_SIZE;

	if (cap == ~0ULL)
		return -ENODEV;
	if (BAM_CAP_MPSMIN(cap) || !BAM_CAP_CSS_NVM(cap))
		return -EOPNOTSUPP;

	bam_ctrl_disable(ctrl, false);
	if (readl(ctrl->bar + BAM_REG_CSTS) & BAM_CSTS_RDY)
		return -ETIMEDOUT;
	memset(ctrl->admin_mem, 0, 2 * PAGE_SIZE);
	ctrl->sq_tail = 0;
	ctrl->cq_head = 0;
	ctrl->phase = 1;
	ctrl->admin_broken = false;
	ctrl->dstrd = 4U << BAM_CAP_DSTRD(cap);

	writel((BAM_ADMIN_DEPTH - 1) << 16 | (BAM_ADMIN_DEPTH - 1),
	       ctrl->bar + BAM_REG_AQA);
	lo_hi_writeq(asq, ctrl->bar + BAM_REG_ASQ);
	lo_hi_writeq(acq, ctrl->bar + BAM_REG_ACQ);
	/* Everything is polled: mask all pin-based/MSI vectors. */
	writel(~0U, ctrl->bar + BAM_REG_INTMS);
	writel(BAM_CC_IOCQES | BAM_CC_IOSQES | BAM_CC_EN, ctrl->bar + BAM_REG_CC);
	if (!bam_wait_csts(ctrl, BAM_CSTS_RDY | BAM_CSTS_CFS, BAM_CSTS_RDY,
			   bam_cap_timeout_ms(ctrl))) {
		bam_ctrl_disable(ctrl, false);
		return (readl(ctrl->bar + BAM_REG_CSTS) & BAM_CSTS_CFS) ?
			-EIO : -ETIMEDOUT;
	}
	ctrl->enabled = true;
	return 0;
}

/* Commands a queue set-up needs; everything else needs CAP_SYS_ADMIN. */
static bool bam_admin_unprivileged(const u32 *cmd)
{
	switch (cmd[0] & 0xff) {
	case BAM_ADM_DELETE_SQ:
	case BAM_ADM_CREATE_SQ:
	case BAM_ADM_DELETE_CQ:
	case BAM_ADM_CREATE_CQ:
	case BAM_ADM_IDENTIFY:
		return true;
	case BAM_ADM_SET_FEATURES:
		return cmd[10] == BAM_FEAT_NUM_QUEUES; /* not saved (SV = 0) */
	case BAM_ADM_GET_FEATURES:
		return (cmd[10] & 0xff) == BAM_FEAT_NUM_QUEUES;
	default:
		return false;
	}
}

/*
 * Run one admin command and poll for its completion. Completions for other
 * identifiers (user space may ring the admin doorbells it can reach) are
 * consumed and dropped; used SQ slots are cleared so that a replay runs no
 * earlier command. Called with ctrl->admin_lock held.
 */
static int bam_admin_run(struct bam_ctrl *ctrl, const u32 *cmd,
			 unsigned int timeout_ms, u32 *res, u16 *status)
{
	__le32 *sq = ctrl->admin_mem;
	__le32 *cq = ctrl->admin_mem + PAGE_SIZE;
	__le32 *slot = sq + ctrl->sq_tail * 16;
	unsigned long timeout = jiffies + msecs_to_jiffies(timeout_ms);
	int i, ret;
	u16 cid;

	if (!ctrl->enabled || ctrl->admin_broken)
		return -EIO;
	cid = ++ctrl->cid;
	if (!cid)
		cid = ++ctrl->cid;
	slot[0] = cpu_to_le32((cmd[0] & 0xffff) | (u32)cid << 16);
	for (i = 1; i < 16; i++)
		slot[i] = cpu_to_le32(cmd[i]);
	ctrl->sq_tail = (ctrl->sq_tail + 1) % BAM_ADMIN_DEPTH;
	/* writel orders the entry's stores before the doorbell */
	writel(ctrl->sq_tail, ctrl->bar + BAM_REG_DBS);

	for (;;) {
		__le32 *cqe = cq + ctrl->cq_head * 4;
		u32 dw3 = le32_to_cpu(READ_ONCE(cqe[3]));

		if (((dw3 >> 16) & 1) == ctrl->phase) {
			dma_rmb();
			if (++ctrl->cq_head == BAM_ADMIN_DEPTH) {
				ctrl->cq_head = 0;
				ctrl->phase ^= 1;
			}
			writel(ctrl->cq_head,
			       ctrl->bar + BAM_REG_DBS + ctrl->dstrd);
			if ((dw3 & 0xffff) != cid)
				continue;
			res[0] = le32_to_cpu(cqe[0]);
			res[1] = le32_to_cpu(cqe[1]);
			*status = dw3 >> 17;
			ret = 0;
			break;
		}
		if (READ_ONCE(ctrl->dead) || fatal_signal_pending(current) ||
		    time_after(jiffies, timeout)) {
			/* A late completion would land in a reused slot. */
			ctrl->admin_broken = true;
			ret = READ_ONCE(ctrl->dead) ? -ENODEV : -ETIMEDOUT;
			break;
		}
		usleep_range(20, 100);
	}
	memset(slot, 0, 64);
	return ret;
}

/* ---- DMA address space ------------------------------------------------ */

static int bam_iova_alloc(struct bam_ctrl *ctrl, unsigned long npages,
			  dma_addr_t *iova)
{
	struct iova *range;

	range = alloc_iova(&ctrl->iovad, npages, ctrl->iova_limit, false);
	if (!range)
		return -ENOMEM;
	*iova = (dma_addr_t)range->pfn_lo << PAGE_SHIFT;
	return 0;
}

static void bam_iova_free(struct bam_ctrl *ctrl, dma_addr_t iova)
{
	free_iova(&ctrl->iovad, iova >> PAGE_SHIFT);
}

/* Map @n pinned pages at @iova in the module's domain, one iommu_map()
 * per physically contiguous run. */
static int bam_iommu_map_pages(struct bam_ctrl *ctrl, struct page **pages,
			       unsigned long n, dma_addr_t iova)
{
	unsigned long i = 0, j;
	int ret;

	while (i < n) {
		for (j = i + 1; j < n; j++)
			if (page_to_pfn(pages[j]) != page_to_pfn(pages[i]) + (j - i))
				break;
		ret = bam_iommu_map(ctrl->domain, iova + (i << PAGE_SHIFT),
				    page_to_phys(pages[i]), (j - i) << PAGE_SHIFT,
				    ctrl->prot);
		if (ret) {
			if (i)
				iommu_unmap(ctrl->domain, iova, i << PAGE_SHIFT);
			return ret;
		}
		i = j;
	}
	return 0;
}

/*
 * Take the group away from the kernel's DMA API (vfio's way): claim DMA
 * ownership of the whole group, attach a domain of our own, reserve the
 * group's reserved regions (MSI window, RMRRs) in its IOVA space.
 */
static int bam_dma_setup(struct bam_ctrl *ctrl)
{
	struct pci_dev *pdev = ctrl->pdev;
	struct iommu_resv_region *r, *tmp;
	LIST_HEAD(resv);
	u64 end;
	int ret;

	ctrl->group = iommu_group_get(&pdev->dev);
	if (!ctrl->group) {
		if (!allow_unsafe_noiommu) {
			dev_err(&pdev->dev,
				"no IOMMU translates this function; not binding (allow_unsafe_noiommu=1 overrides)\n");
			return -ENODEV;
		}
		dev_warn(&pdev->dev,
			 "no IOMMU: user space can make the controller DMA anywhere; tainting kernel\n");
		add_taint(TAINT_USER, LOCKDEP_STILL_OK);
		return 0;
	}

	ret = iommu_group_claim_dma_owner(ctrl->group, ctrl);
	if (ret) {
		dev_err(&pdev->dev,
			"IOMMU group %d has other devices in use by drivers (%d)\n",
			iommu_group_id(ctrl->group), ret);
		goto out_put_group;
	}
	ctrl->domain = bam_iommu_domain_alloc(pdev);
	if (!ctrl->domain) {
		ret = -ENOMEM;
		goto out_release_owner;
	}
	ret = iommu_attach_group(ctrl->domain, ctrl->group);
	if (ret)
		goto out_free_domain;

	ctrl->prot = IOMMU_READ | IOMMU_WRITE;
	if (device_iommu_capable(&pdev->dev, IOMMU_CAP_CACHE_COHERENCY))
		ctrl->prot |= IOMMU_CACHE;
	ret = iova_cache_get();
	if (ret)
		goto out_detach;
	init_iova_domain(&ctrl->iovad, PAGE_SIZE, BAM_IOVA_START);
	end = min_t(u64, ctrl->domain->geometry.aperture_end,
		    DMA_BIT_MASK(BAM_IOVA_BITS));
	ctrl->iova_limit = end >> PAGE_SHIFT;
	ret = iommu_get_group_resv_regions(ctrl->group, &resv);
	if (!ret) {
		list_for_each_entry(r, &resv, list) {
			if (!r->length)
				continue;
			if (!reserve_iova(&ctrl->iovad, r->start >> PAGE_SHIFT,
					  (r->start + r->length - 1) >> PAGE_SHIFT)) {
				ret = -ENOMEM;
				break;
			}
		}
	}
	list_for_each_entry_safe(r, tmp, &resv, list)
		kfree(r);
	if (ret)
		goto out_put_iova;
	return 0;

out_put_iova:
	put_iova_domain(&ctrl->iovad);
	iova_cache_put();
out_detach:
	iommu_detach_group(ctrl->domain, ctrl->group);
out_free_domain:
	iommu_domain_free(ctrl->domain);
	ctrl->domain = NULL;
out_release_owner:
	iommu_group_release_dma_owner(ctrl->group);
out_put_group:
	iommu_group_put(ctrl->group);
	ctrl->group = NULL;
	return ret;
}

static void bam_dma_teardown(struct bam_ctrl *ctrl)
{
	if (!ctrl->group)
		return;
	put_iova_domain(&ctrl->iovad);
	iova_cache_put();
	iommu_detach_group(ctrl->domain, ctrl->group);
	iommu_domain_free(ctrl->domain);
	iommu_group_release_dma_owner(ctrl->group);
	iommu_group_put(ctrl->group);
}

/* The admin SQ and CQ: two zeroed pages the controller reads and writes. */
static int bam_admin_mem_alloc(struct bam_ctrl *ctrl)
{
	struct device *dmadev = &ctrl->pdev->dev;
	struct page *page;
	int ret;

	if (!ctrl->domain) {
		ctrl->admin_mem = dma_alloc_coherent(dmadev, 2 * PAGE_SIZE,
						     &ctrl->admin_dma,
						     GFP_KERNEL);
		return ctrl->admin_mem ? 0 : -ENOMEM;
	}

	page = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
	if (!page)
		return -ENOMEM;
	ret = bam_iova_alloc(ctrl, 2, &ctrl->admin_dma);
	if (ret)
		goto out_free_pages;
	/*
	 * The controller only reads the SQ: mapped read-only, an I/O read
	 * aimed at its IOVA cannot plant admin commands the filter of
	 * BAM_IOC_ADMIN never saw.
	 */
	ret = bam_iommu_map(ctrl->domain, ctrl->admin_dma, page_to_phys(page),
			    PAGE_SIZE, ctrl->prot & ~IOMMU_WRITE);
	if (ret)
		goto out_free_iova;
	ret = bam_iommu_map(ctrl->domain, ctrl->admin_dma + PAGE_SIZE,
			    page_to_phys(page + 1), PAGE_SIZE, ctrl->prot);
	if (ret)
		goto out_unmap_sq;
	ctrl->admin_mem = page_address(page);
	return 0;

out_unmap_sq:
	iommu_unmap(ctrl->domain, ctrl->admin_dma, PAGE_SIZE);
out_free_iova:
	bam_iova_free(ctrl, ctrl->admin_dma);
out_free_pages:
	__free_pages(page, 1);
	return ret;
}

/* Only once the controller is stopped. */
static void bam_admin_mem_free(struct bam_ctrl *ctrl)
{
	if (!ctrl->domain) {
		dma_free_coherent(&ctrl->pdev->dev, 2 * PAGE_SIZE,
				  ctrl->admin_mem, ctrl->admin_dma);
		return;
	}
	iommu_unmap(ctrl->domain, ctrl->admin_dma, 2 * PAGE_SIZE);
	bam_iova_free(ctrl, ctrl->admin_dma);
	__free_pages(virt_to_page(ctrl->admin_mem), 1);
}

/* ---- pin accounting --------------------------------------------------- */

static void bam_uncharge(struct bam_file *bf, unsigned long npages)
{
	if (!npages)
		return;
	atomic64_sub(npages, &bf->mm->pinned_vm);
	atomic_long_sub(npages, &bam_pinned_total);
	bf->charged -= npages;
}

/* Charge @npages to the opener's RLIMIT_MEMLOCK (VmPin) and the global
 * cap. The caller is the opener (current->mm == bf->mm). */
static int bam_charge(struct bam_file *bf, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (!npages)
		return 0;
	if (atomic_long_add_return(npages, &bam_pinned_total) > bam_pinned_max) {
		atomic_long_sub(npages, &bam_pinned_total);
		return -ENOMEM;
	}
	if (atomic64_add_return(npages, &bf->mm->pinned_vm) > limit) {
		atomic64_sub(npages, &bf->mm->pinned_vm);
		atomic_long_sub(npages, &bam_pinned_total);
		return -ENOMEM;
	}
	bf->charged += npages;
	return 0;
}

/* Drop one mapping of each of @pages; returns how many pages no mapping
 * of this file holds any more. */
static unsigned long bam_pfns_put(struct bam_file *bf, struct page **pages,
				  unsigned long n)
{
	unsigned long i, freed = 0;

	for (i = 0; i < n; i++) {
		unsigned long pfn = page_to_pfn(pages[i]);
		void *old = xa_load(&bf->pfns, pfn);
		unsigned long refs = old ? xa_to_value(old) : 0;

		if (WARN_ON_ONCE(!refs))
			continue;
		if (refs == 1) {
			xa_erase(&bf->pfns, pfn);
			freed++;
		} else {
			xa_store(&bf->pfns, pfn, xa_mk_value(refs - 1),
				 GFP_KERNEL);
		}
	}
	return freed;
}

/*
 * Count one more mapping of each of @pages (@done of them already counted
 * by earlier chunks of the same map). A page mapped BAM_MAX_PAGE_REFS times
 * already is refused (-EEXIST): aliasing one page at many addresses would
 * otherwise overflow its pin count. Returns the number of pages new to
 * this file in *fresh.
 */
static int bam_pfns_get(struct bam_file *bf, struct page **pages,
			unsigned long n, unsigned long *fresh)
{
	unsigned long i;
	int ret = 0;

	for (i = 0; i < n; i++) {
		unsigned long pfn = page_to_pfn(pages[i]);
		void *old = xa_load(&bf->pfns, pfn);
		unsigned long refs = old ? xa_to_value(old) : 0;

		if (refs >= BAM_MAX_PAGE_REFS) {
			ret = -EEXIST;
			break;
		}
		ret = xa_err(xa_store(&bf->pfns, pfn, xa_mk_value(refs + 1),
				      GFP_KERNEL));
		if (ret)
			break;
		*fresh += !refs;
	}
	if (ret)
		*fresh -= bam_pfns_put(bf, pages, i);
	return ret;
}

/* ---- host mappings --------------------------------------------------- */

/*
 * Without an IOMMU: would the controller's view of these pages differ from
 * the CPU's without dma_sync_*() calls (swiotlb, non-coherent DMA)?
 */
static bool bam_sgt_needs_sync(struct pci_dev *pdev, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i)
		if (dma_need_sync(&pdev->dev, sg_dma_address(sg)))
			return true;
	return false;
}

static int bam_map_host_dma_api(struct bam_ctrl *ctrl, struct bam_map *map)
{
	struct device *dmadev = &ctrl->pdev->dev;
	unsigned int max_seg;
	int ret;

	max_seg = min_t(size_t, dma_get_max_seg_size(dmadev),
			dma_max_mapping_size(dmadev));
	max_seg = max_t(unsigned int, round_down(max_seg, PAGE_SIZE),
			PAGE_SIZE);
	ret = sg_alloc_table_from_pages_segment(&map->sgt, map->pages,
						map->npages, 0,
						map->npages << PAGE_SHIFT,
						max_seg, GFP_KERNEL);
	if (ret)
		return ret;
	ret = dma_map_sgtable(dmadev, &map->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto out_free_sgt;
	/* User space and the controller share the pages with no sync calls. */
	if (bam_sgt_needs_sync(ctrl->pdev, &map->sgt)) {
		dev_warn_once(dmadev,
			      "DMA needs bounce buffers or cache maintenance; not supported\n");
		ret = -EOPNOTSUPP;
		goto out_dma_unmap;
	}
	return 0;

out_dma_unmap:
	dma_unmap_sgtable(dmadev, &map->sgt, DMA_BIDIRECTIONAL, 0);
out_free_sgt:
	sg_free_table(&map->sgt);
	return ret;
}

static void bam_unmap_host_dma(struct bam_ctrl *ctrl, struct bam_map *map)
{
	if (ctrl->domain) {
		/* Synchronous IOTLB flush: no DMA reaches the pages after this. */
		iommu_unmap(ctrl->domain, map->iova, map->npages << PAGE_SHIFT);
		bam_iova_free(ctrl, map->iova);
	} else {
		dma_unmap_sgtable(&ctrl->pdev->dev, &map->sgt,
				  DMA_BIDIRECTIONAL, 0);
		sg_free_table(&map->sgt);
	}
}

/* Pin in chunks, counting each chunk's pages before pinning more. */
static int bam_pin_host(struct bam_file *bf, struct bam_map *map, u64 vaddr,
			unsigned long npages)
{
	unsigned long fresh = 0;
	int ret;

	while (map->npages < npages) {
		unsigned long n = min_t(unsigned long, npages - map->npages,
					BAM_PIN_CHUNK);
		struct page **pages = map->pages + map->npages;
		long pinned;

		/* FOLL_LONGTERM: out of CMA/movable zones first. */
		pinned = pin_user_pages_fast(vaddr + (map->npages << PAGE_SHIFT),
					     n, FOLL_WRITE | FOLL_LONGTERM,
					     pages);
		if (pinned <= 0) {
			ret = pinned ? pinned : -EFAULT;
			goto out_put;
		}
		ret = bam_pfns_get(bf, pages, pinned, &fresh);
		if (ret) {
			unpin_user_pages(pages, pinned);
			goto out_put;
		}
		map->npages += pinned;
		if (pinned != n) {
			ret = -EFAULT;
			goto out_put;
		}
	}
	ret = bam_charge(bf, fresh);
	if (!ret)
		return 0;
out_put:
	bam_pfns_put(bf, map->pages, map->npages);
	unpin_user_pages(map->pages, map->npages);
	map->npages = 0;
	return ret;
}

static int bam_map_host(struct bam_file *bf, struct bam_map *map,
			const struct bam_kmod_map *arg)
{
	struct bam_ctrl *ctrl = bf->ctrl;
	unsigned long npages = arg->length >> PAGE_SHIFT;
	int ret;

	map->kind = BAM_MAP_HOST;
	map->pages = kvmalloc_array(npages, sizeof(*map->pages), BAM_GFP_BIG);
	if (!map->pages)
		return -ENOMEM;

	ret = bam_pin_host(bf, map, arg->vaddr, npages);
	if (ret)
		goto out_free_pages;

	if (ctrl->domain) {
		ret = bam_iova_alloc(ctrl, npages, &map->iova);
		if (ret)
			goto out_unpin;
		ret = bam_iommu_map_pages(ctrl, map->pages, npages, map->iova);
		if (ret) {
			bam_iova_free(ctrl, map->iova);
			goto out_unpin;
		}
	} else {
		ret = bam_map_host_dma_api(ctrl, map);
		if (ret)
			goto out_unpin;
	}
	atomic_long_add(npages, &ctrl->nr_pinned);
	return 0;

out_unpin:
	bam_uncharge(bf, bam_pfns_put(bf, map->pages, map->npages));
	unpin_user_pages(map->pages, map->npages);
out_free_pages:
	kvfree(map->pages);
	return ret;
}

/* Unmap from the controller (IOTLB flushed), then give the pages back. */
static void bam_unmap_host(struct bam_file *bf, struct bam_map *map)
{
	struct bam_ctrl *ctrl = bf->ctrl;

	bam_unmap_host_dma(ctrl, map);
	bam_uncharge(bf, bam_pfns_put(bf, map->pages, map->npages));
	/* The controller may have written any page: keep the data. */
	unpin_user_pages_dirty_lock(map->pages, map->npages, true);
	kvfree(map->pages);
	atomic_long_sub(map->npages, &ctrl->nr_pinned);
}

static int bam_host_addrs(struct bam_ctrl *ctrl, struct bam_map *map,
			  u64 *addrs)
{
	struct sg_dma_page_iter it;
	unsigned long i = 0;

	if (ctrl->domain) {
		for (i = 0; i < map->npages; i++)
			addrs[i] = map->iova + (i << PAGE_SHIFT);
		return 0;
	}
	for_each_sgtable_dma_page(&map->sgt, &it, 0) {
		if (WARN_ON_ONCE(i >= map->npages))
			return -EIO;
		addrs[i++] = sg_page_iter_dma_address(&it);
	}
	return i == map->npages ? 0 : -EIO;
}

/* ---- GPU mappings ---------------------------------------------------- */

#ifdef BAM_HAVE_NV_P2P
/* Remove the controller's access to the GPU pages (IOTLB flushed). */
static void bam_gpu_unmap_dma(struct bam_ctrl *ctrl, struct bam_map *map)
{
	if (ctrl->domain) {
		iommu_unmap(ctrl->domain, map->iova,
			    map->npages * BAM_GPU_PAGE_SIZE);
		bam_iova_free(ctrl, map->iova);
	} else if (map->gpu_dma) {
		nvidia_p2p_dma_unmap_pages(ctrl->pdev, map->gpu_pt,
					   map->gpu_dma);
	}
}

/*
 * NVIDIA calls this when the GPU memory goes away under us (cudaFree or
 * the GPU process exiting before our unmap). The controller may still
 * target it: disable the controller, then remove its translation, then
 * free NVIDIA's page table. Unmap does nothing of this if it got there
 * first; NVIDIA serialises this callback with nvidia_p2p_put_pages().
 */
static void bam_gpu_free_cb(void *data)
{
	struct bam_map *map = data;
	struct bam_ctrl *ctrl = map->ctrl;

	spin_lock(&map->gpu_lock);
	if (map->gpu_state != BAM_GPU_LIVE) {
		spin_unlock(&map->gpu_lock);
		return;
	}
	map->gpu_state = BAM_GPU_REVOKED;
	spin_unlock(&map->gpu_lock);

	mutex_lock(&ctrl->admin_lock);
	if (!READ_ONCE(ctrl->dead)) {
		dev_warn(&ctrl->pdev->dev,
			 "GPU memory at 0x%llx freed while mapped; disabling controller\n",
			 map->gpu_va);
		bam_ctrl_disable(ctrl, false);
	}
	mutex_unlock(&ctrl->admin_lock);
	bam_gpu_unmap_dma(ctrl, map);
	if (map->gpu_dma)
		nvidia_p2p_free_dma_mapping(map->gpu_dma);
	nvidia_p2p_free_page_table(map->gpu_pt);
	/* Last access to the map: unmap frees it once this is done. */
	complete(&map->gpu_done);
}

static void bam_unmap_gpu(struct bam_file *bf, struct bam_map *map)
{
	struct bam_ctrl *ctrl = bf->ctrl;
	bool live;

	spin_lock(&map->gpu_lock);
	live = map->gpu_state == BAM_GPU_LIVE;
	if (live)
		map->gpu_state = BAM_GPU_UNMAPPING;
	spin_unlock(&map->gpu_lock);

	if (!live) {
		/* The free callback owns the teardown; let it finish. */
		wait_for_completion(&map->gpu_done);
		return;
	}
	bam_gpu_unmap_dma(ctrl, map);
	nvidia_p2p_put_pages(0, 0, map->gpu_va, map->gpu_pt);
}

static int bam_map_gpu(struct bam_file *bf, struct bam_map *map,
		       const struct bam_kmod_map *arg)
{
	struct bam_ctrl *ctrl = bf->ctrl;
	unsigned long i, n = arg->length / BAM_GPU_PAGE_SIZE;
	int ret;

	map->kind = BAM_MAP_GPU;
	map->ctrl = ctrl;
	map->gpu_va = arg->vaddr;
	spin_lock_init(&map->gpu_lock);
	map->gpu_state = BAM_GPU_LIVE;
	init_completion(&map->gpu_done);

	ret = nvidia_p2p_get_pages(0, 0, arg->vaddr, arg->length, &map->gpu_pt,
				   bam_gpu_free_cb, map);
	if (ret)
		return ret;
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(map->gpu_pt) ||
	    map->gpu_pt->page_size != NVIDIA_P2P_PAGE_SIZE_64KB ||
	    map->gpu_pt->entries != n) {
		ret = -EOPNOTSUPP;
		goto out_put_pages;
	}
	map->npages = n;

	if (ctrl->domain) {
		/* GPU BAR pages into our domain, as MMIO. */
		ret = bam_iova_alloc(ctrl, n * (BAM_GPU_PAGE_SIZE >> PAGE_SHIFT),
				     &map->iova);
		if (ret)
			goto out_put_pages;
		for (i = 0; i < n; i++) {
			ret = bam_iommu_map(ctrl->domain,
					    map->iova + i * BAM_GPU_PAGE_SIZE,
					    map->gpu_pt->pages[i]->physical_address,
					    BAM_GPU_PAGE_SIZE,
					    IOMMU_READ | IOMMU_WRITE | IOMMU_MMIO);
			if (ret)
				break;
		}
		if (ret) {
			if (i)
				iommu_unmap(ctrl->domain, map->iova,
					    i * BAM_GPU_PAGE_SIZE);
			bam_iova_free(ctrl, map->iova);
			goto out_put_pages;
		}
		return 0;
	}

	ret = nvidia_p2p_dma_map_pages(ctrl->pdev, map->gpu_pt, &map->gpu_dma);
	if (ret)
		goto out_put_pages;
	if (!NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(map->gpu_dma) ||
	    map->gpu_dma->entries != n) {
		ret = -EIO;
		goto out_unmap;
	}
	return 0;

out_unmap:
	/* Unmap and put, unless the free callback got there first. */
	bam_unmap_gpu(bf, map);
	return ret;
out_put_pages:
	map->npages = 0;
	spin_lock(&map->gpu_lock);
	if (map->gpu_state == BAM_GPU_LIVE) {
		map->gpu_state = BAM_GPU_UNMAPPING;
		spin_unlock(&map->gpu_lock);
		nvidia_p2p_put_pages(0, 0, arg->vaddr, map->gpu_pt);
	} else {
		spin_unlock(&map->gpu_lock);
		wait_for_completion(&map->gpu_done);
	}
	return ret;
}

static int bam_gpu_addrs(struct bam_ctrl *ctrl, struct bam_map *map,
			 u64 *addrs)
{
	unsigned long i;

	for (i = 0; i < map->npages; i++)
		addrs[i] = ctrl->domain ? map->iova + i * BAM_GPU_PAGE_SIZE :
					  map->gpu_dma->dma_addresses[i];
	return 0;
}
#else
static int bam_map_gpu(struct bam_file *bf, struct bam_map *map,
		       const struct bam_kmod_map *arg)
{
	return -EOPNOTSUPP;
}

static void bam_unmap_gpu(struct bam_file *bf, struct bam_map *map)
{
}

static int bam_gpu_addrs(struct bam_ctrl *ctrl, struct bam_map *map,
			 u64 *addrs)
{
	return -EOPNOTSUPP;
}
#endif

static void bam_map_teardown(struct bam_file *bf, struct bam_map *map)
{
	if (map->kind == BAM_MAP_HOST)
		bam_unmap_host(bf, map);
	else
		bam_unmap_gpu(bf, map);
	atomic_long_dec(&bf->ctrl->nr_maps);
}

/* Tear down every mapping of @bf. Caller holds bf->lock and has stopped
 * the controller. */
static void bam_file_unmap_all(struct bam_file *bf)
{
	struct bam_map *map;
	unsigned long id;

	xa_for_each(&bf->maps, id, map) {
		xa_erase(&bf->maps, id);
		bam_map_teardown(bf, map);
		kfree(map);
	}
}

/* ---- ioctls ---------------------------------------------------------- */

/*
 * Copy an extensible argument struct in: @min is the size of version 1.
 * Shorter or absurd sizes and unknown versions are -EINVAL; a longer
 * struct whose extra bytes are not zero is -E2BIG. The size is read once:
 * *usize is what was validated, also for copying out, whatever another
 * thread writes into the user's struct meanwhile.
 */
static int bam_copy_arg(void *karg, size_t ksize, size_t min,
			void __user *uarg, u32 *usize)
{
	u32 hdr[2];
	int ret;

	if (copy_from_user(hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr[0] < min || hdr[0] > BAM_KMOD_MAX_ARG_SIZE)
		return -EINVAL;
	if (hdr[1] != BAM_KMOD_ABI_VERSION)
		return -EINVAL;
	ret = copy_struct_from_user(karg, ksize, uarg, hdr[0]);
	if (ret)
		return ret;
	memcpy(karg, hdr, sizeof(hdr));
	*usize = hdr[0];
	return 0;
}

static int bam_copy_arg_out(void __user *uarg, const void *karg, size_t ksize,
			    u32 usize)
{
	if (copy_to_user(uarg, karg, min_t(size_t, ksize, usize)))
		return -EFAULT;
	return 0;
}

static long bam_ioctl_info(struct bam_file *bf, void __user *uarg)
{
	struct bam_kmod_info info;
	u32 usize;
	int ret;

	ret = bam_copy_arg(&info, sizeof(info), sizeof(info), uarg, &usize);
	if (ret)
		return ret;
	/* Fixed at probe: no need for the PCI device, which may be gone. */
	info = bf->ctrl->info;
	info.max_map_bytes = (u64)max_map_mb << 20;
	return bam_copy_arg_out(uarg, &info, sizeof(info), usize);
}

static int bam_check_map_arg(const struct bam_kmod_map *arg, bool gpu,
			     unsigned long *nentries)
{
	unsigned long align = gpu ? BAM_GPU_PAGE_SIZE : PAGE_SIZE;
	u64 end;

	if (arg->flags || arg->rsvd)
		return -EINVAL;
	if (!arg->length || !IS_ALIGNED(arg->vaddr, align) ||
	    !IS_ALIGNED(arg->length, align))
		return -EINVAL;
	if (arg->length > (u64)max_map_mb << 20)
		return -E2BIG;
	if (check_add_overflow(arg->vaddr, arg->length, &end) ||
	    end > TASK_SIZE)
		return -EINVAL;
	*nentries = arg->length / align;
	if (arg->naddrs < *nentries)
		return -EOVERFLOW;
	return 0;
}

static long bam_ioctl_map(struct bam_file *bf, void __user *uarg, bool gpu)
{
	struct bam_ctrl *ctrl = bf->ctrl;
	struct bam_kmod_map arg;
	unsigned long nentries;
	struct bam_map *map;
	u32 usize, id;
	u64 *addrs;
	int ret;

	ret = bam_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg, &usize);
	if (ret)
		return ret;
	ret = bam_check_map_arg(&arg, gpu, &nentries);
	if (ret)
		return ret;
	if (!access_ok(u64_to_user_ptr(arg.addrs), nentries * sizeof(u64)))
		return -EFAULT;
	/* Pins are charged to the opener; only its memory is mapped. */
	if (current->mm != bf->mm)
		return -EPERM;

	addrs = kvmalloc_array(nentries, sizeof(*addrs), BAM_GFP_BIG);
	if (!addrs)
		return -ENOMEM;
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map) {
		ret = -ENOMEM;
		goto out_free_addrs;
	}

	mutex_lock(&bf->lock);
	if (READ_ONCE(ctrl->dead)) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = xa_alloc_cyclic(&bf->maps, &id, NULL,
			      XA_LIMIT(1, BAM_MAX_MAPPINGS), &bf->next_id,
			      GFP_KERNEL);
	if (ret < 0) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto out_unlock;
	}
	if (gpu)
		ret = bam_map_gpu(bf, map, &arg);
	else
		ret = bam_map_host(bf, map, &arg);
	if (ret)
		goto out_erase;
	atomic_long_inc(&ctrl->nr_maps);

	ret = gpu ? bam_gpu_addrs(ctrl, map, addrs) :
		    bam_host_addrs(ctrl, map, addrs);
	if (ret)
		goto out_teardown;

	/* A new generation per mapping: a stale handle names nothing. */
	if (!++bf->gen)
		++bf->gen;
	map->handle = (u64)bf->gen << 32 | id;
	arg.handle = map->handle;
	arg.page_size = gpu ? BAM_GPU_PAGE_SIZE : PAGE_SIZE;
	arg.npages = nentries;
	if (copy_to_user(u64_to_user_ptr(arg.addrs), addrs,
			 nentries * sizeof(u64)) ||
	    bam_copy_arg_out(uarg, &arg, sizeof(arg), usize)) {
		ret = -EFAULT;
		goto out_teardown;
	}
	xa_store(&bf->maps, id, map, GFP_KERNEL); /* slot exists: no alloc */
	mutex_unlock(&bf->lock);
	kvfree(addrs);
	return 0;

out_teardown:
	bam_map_teardown(bf, map);
out_erase:
	xa_erase(&bf->maps, id);
out_unlock:
	mutex_unlock(&bf->lock);
	kfree(map);
out_free_addrs:
	kvfree(addrs);
	return ret;
}

static long bam_ioctl_unmap(struct bam_file *bf, void __user *uarg)
{
	struct bam_kmod_unmap arg;
	struct bam_map *map;
	u32 usize;
	int ret;

	ret = bam_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg, &usize);
	if (ret)
		return ret;
	if (!(u32)arg.handle || (u32)arg.handle > BAM_MAX_MAPPINGS)
		return -ENOENT;

	mutex_lock(&bf->lock);
	/*
	 * Remove may have revoked every mapping while we waited for the lock:
	 * then the handle is gone because the device is, and the caller must
	 * see -ENODEV like every other ioctl after unbind, not -ENOENT.
	 */
	if (READ_ONCE(bf->ctrl->dead)) {
		mutex_unlock(&bf->lock);
		return -ENODEV;
	}
	map = xa_load(&bf->maps, (u32)arg.handle);
	if (map && map->handle == arg.handle) {
		xa_erase(&bf->maps, (u32)arg.handle);
		bam_map_teardown(bf, map);
	} else {
		map = NULL;
	}
	mutex_unlock(&bf->lock);
	kfree(map);
	return map ? 0 : -ENOENT;
}

static long bam_ioctl_enable(struct bam_file *bf, void __user *uarg)
{
	struct bam_ctrl *ctrl = bf->ctrl;
	struct bam_kmod_enable arg;
	u32 usize;
	int ret;

	ret = bam_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg, &usize);
	if (ret)
		return ret;
	if (arg.flags || arg.rsvd)
		return -EINVAL;

	mutex_lock(&ctrl->admin_lock);
	if (READ_ONCE(ctrl->dead)) {
		ret = -ENODEV;
	} else {
		pci_set_master(ctrl->pdev);
		ret = bam_ctrl_enable(ctrl);
	}
	mutex_unlock(&ctrl->admin_lock);
	return ret;
}

static long bam_ioctl_admin(struct bam_file *bf, void __user *uarg)
{
	struct bam_ctrl *ctrl = bf->ctrl;
	struct bam_kmod_admin arg;
	unsigned int timeout;
	u32 usize, res[2];
	u16 status = 0;
	int ret;

	ret = bam_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg, &usize);
	if (ret)
		return ret;
	if (arg.rsvd || arg.timeout_ms > BAM_ADMIN_MAX_TIMEOUT_MS ||
	    (arg.cmd[0] & BAM_SQE_FUSE_PSDT))
		return -EINVAL;
	if (!bam_admin_unprivileged(arg.cmd) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	timeout = arg.timeout_ms ? arg.timeout_ms : BAM_ADMIN_TIMEOUT_MS;

	mutex_lock(&ctrl->admin_lock);
	if (READ_ONCE(ctrl->dead))
		ret = -ENODEV;
	else
		ret = bam_admin_run(ctrl, arg.cmd, timeout, res, &status);
	mutex_unlock(&ctrl->admin_lock);
	if (ret)
		return ret;

	arg.result = res[0];
	arg.result1 = res[1];
	arg.status = status;
	return bam_copy_arg_out(uarg, &arg, sizeof(arg), usize);
}

static long bam_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct bam_file *bf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	if (READ_ONCE(bf->ctrl->dead))
		return -ENODEV;

	switch (cmd) {
	case BAM_IOC_INFO:
		return bam_ioctl_info(bf, uarg);
	case BAM_IOC_MAP_HOST:
		return bam_ioctl_map(bf, uarg, false);
	case BAM_IOC_MAP_GPU:
		if (!IS_ENABLED(BAM_HAVE_NV_P2P))
			return -EOPNOTSUPP;
		return bam_ioctl_map(bf, uarg, true);
	case BAM_IOC_UNMAP:
		return bam_ioctl_unmap(bf, uarg);
	case BAM_IOC_ENABLE:
		return bam_ioctl_enable(bf, uarg);
	case BAM_IOC_ADMIN:
		return bam_ioctl_admin(bf, uarg);
	default:
		return -ENOTTY;
	}
}

/* ---- BAR0 mmap ------------------------------------------------------- */

static bool bam_bar_page_ok(struct bam_ctrl *ctrl, unsigned long pgoff)
{
	return !ctrl->dead &&
	       pgoff < PAGE_ALIGN(ctrl->map_len) >> PAGE_SHIFT &&
	       (pgoff < ctrl->hole_lo || pgoff >= ctrl->hole_hi);
}

/* PTEs start read-only (write notification); see bam_bar_mkwrite. */
static vm_fault_t bam_bar_fault(struct vm_fault *vmf)
{
	struct bam_file *bf = vmf->vma->vm_private_data;
	struct bam_ctrl *ctrl = bf->ctrl;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&ctrl->bar_sem);
	if (bam_bar_page_ok(ctrl, vmf->pgoff))
		ret = vmf_insert_pfn(vmf->vma, vmf->address,
				     PHYS_PFN(ctrl->bar_phys) + vmf->pgoff);
	up_read(&ctrl->bar_sem);
	return ret;
}

/* The first page holds CC, AQA, ASQ, ACQ: writable only to an opener
 * with CAP_SYS_ADMIN, or the admin queue could be moved to user memory. */
static vm_fault_t bam_bar_mkwrite(struct vm_fault *vmf)
{
	struct bam_file *bf = vmf->vma->vm_private_data;
	struct bam_ctrl *ctrl = bf->ctrl;
	vm_fault_t ret = 0;

	down_read(&ctrl->bar_sem);
	if (!bam_bar_page_ok(ctrl, vmf->pgoff) ||
	    (vmf->pgoff == 0 && !bf->regs_rw))
		ret = VM_FAULT_SIGBUS;
	up_read(&ctrl->bar_sem);
	return ret;
}

static const struct vm_operations_struct bam_bar_vm_ops = {
	.fault = bam_bar_fault,
	.pfn_mkwrite = bam_bar_mkwrite,
};

/*
 * PTEs are inserted on fault rather than here so that remove can revoke
 * them with unmap_mapping_range(): a VMA is only faulted once it is linked
 * into the file's mapping, where remove will find it.
 */
static int bam_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct bam_file *bf = filp->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff || len > PAGE_ALIGN(bf->ctrl->map_len))
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (READ_ONCE(bf->ctrl->dead))
		return -ENODEV;

	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	bam_vma_set_flags(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
			       VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_private_data = bf;
	vma->vm_ops = &bam_bar_vm_ops;
	return 0;
}

/* ---- open / release -------------------------------------------------- */

static int bam_open(struct inode *inode, struct file *filp)
{
	struct bam_ctrl *ctrl =
		container_of(inode->i_cdev, struct bam_ctrl, cdev);
	struct bam_file *bf;
	int ret;

	/* The node's mode is the first gate; this one survives a chmod. */
	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	if (!current->mm)
		return -EINVAL;

	bf = kzalloc(sizeof(*bf), GFP_KERNEL);
	if (!bf)
		return -ENOMEM;
	bf->ctrl = ctrl;
	bf->mapping = filp->f_mapping;
	bf->regs_rw = capable(CAP_SYS_ADMIN);
	mutex_init(&bf->lock);
	xa_init_flags(&bf->maps, XA_FLAGS_ALLOC1);
	xa_init(&bf->pfns);

	mutex_lock(&ctrl->lock);
	if (ctrl->dead) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (ctrl->owner) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ctrl->owner = bf;
	bf->mm = current->mm;
	mmgrab(bf->mm);
	get_device(&ctrl->dev);
	mutex_unlock(&ctrl->lock);

	filp->private_data = bf;
	return nonseekable_open(inode, filp);

out_unlock:
	mutex_unlock(&ctrl->lock);
	kfree(bf);
	return ret;
}

/*
 * Stop the controller and everything it could still DMA to: shut it down
 * and disable it, clear bus mastering, and only then unmap (flushing the
 * IOTLB) and unpin. Called with ctrl->lock held and ctrl->dead set or the
 * caller being the last user of the file.
 */
static void bam_ctrl_stop_file(struct bam_ctrl *ctrl, struct bam_file *bf)
{
	mutex_lock(&ctrl->admin_lock);
	bam_ctrl_disable(ctrl, true);
	mutex_unlock(&ctrl->admin_lock);
	pci_clear_master(ctrl->pdev);

	mutex_lock(&bf->lock);
	bam_file_unmap_all(bf);
	mutex_unlock(&bf->lock);
}

static int bam_release(struct inode *inode, struct file *filp)
{
	struct bam_file *bf = filp->private_data;
	struct bam_ctrl *ctrl = bf->ctrl;

	mutex_lock(&ctrl->lock);
	if (!ctrl->dead)
		bam_ctrl_stop_file(ctrl, bf);
	if (ctrl->owner == bf)
		ctrl->owner = NULL;
	mutex_unlock(&ctrl->lock);

	WARN_ON_ONCE(bf->charged);
	mmdrop(bf->mm);
	xa_destroy(&bf->maps);
	xa_destroy(&bf->pfns);
	kfree(bf);
	put_device(&ctrl->dev);
	return 0;
}

static const struct file_operations bam_fops = {
	.owner = THIS_MODULE,
	.open = bam_open,
	.release = bam_release,
	.unlocked_ioctl = bam_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = bam_mmap,
};

/* ---- sysfs ----------------------------------------------------------- */

static ssize_t mappings_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct bam_ctrl *ctrl = container_of(dev, struct bam_ctrl, dev);

	return sysfs_emit(buf, "%ld\n", atomic_long_read(&ctrl->nr_maps));
}
static DEVICE_ATTR_RO(mappings);

static ssize_t pinned_pages_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct bam_ctrl *ctrl = container_of(dev, struct bam_ctrl, dev);

	return sysfs_emit(buf, "%ld\n", atomic_long_read(&ctrl->nr_pinned));
}
static DEVICE_ATTR_RO(pinned_pages);

static ssize_t iommu_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct bam_ctrl *ctrl = container_of(dev, struct bam_ctrl, dev);

	return sysfs_emit(buf, "%s\n", ctrl->domain ? "own-domain" : "none");
}
static DEVICE_ATTR_RO(iommu);

static struct attribute *bam_attrs[] = {
	&dev_attr_mappings.attr,
	&dev_attr_pinned_pages.attr,
	&dev_attr_iommu.attr,
	NULL,
};
ATTRIBUTE_GROUPS(bam);

/* ---- probe / remove -------------------------------------------------- */

static void bam_ctrl_release(struct device *dev)
{
	struct bam_ctrl *ctrl = container_of(dev, struct bam_ctrl, dev);

	if (ctrl->instance >= 0)
		ida_free(&bam_ida, ctrl->instance);
	pci_dev_put(ctrl->pdev);
	kfree(ctrl);
}

/*
 * Revoke everything user space holds on a controller that is going away:
 * BAR mappings (later accesses get SIGBUS) and DMA mappings (after the
 * controller is stopped). The open file stays open and answers -ENODEV.
 */
static void bam_ctrl_kill_users(struct bam_ctrl *ctrl)
{
	struct bam_file *bf;

	down_write(&ctrl->bar_sem);
	WRITE_ONCE(ctrl->dead, true);
	up_write(&ctrl->bar_sem);

	mutex_lock(&ctrl->lock);
	bf = ctrl->owner;
	if (bf) {
		unmap_mapping_range(bf->mapping, 0, 0, 1);
		bam_ctrl_stop_file(ctrl, bf);
	} else {
		mutex_lock(&ctrl->admin_lock);
		bam_ctrl_disable(ctrl, true);
		mutex_unlock(&ctrl->admin_lock);
		pci_clear_master(ctrl->pdev);
	}
	mutex_unlock(&ctrl->lock);
}

/* MSI-X table and PBA pages in BAR0 are never mapped to user space (as
 * vfio): the mappable length ends below them where possible. */
static void bam_find_msix(struct bam_ctrl *ctrl)
{
	struct pci_dev *pdev = ctrl->pdev;
	resource_size_t lo = ctrl->bar_len, hi = 0, start, end;
	u32 table, pba;
	u16 flags, nvec;

	ctrl->map_len = ctrl->bar_len;
	ctrl->hole_lo = 0;
	ctrl->hole_hi = 0;
	if (!pdev->msix_cap)
		return;
	pci_read_config_word(pdev, pdev->msix_cap + PCI_MSIX_FLAGS, &flags);
	nvec = (flags & PCI_MSIX_FLAGS_QSIZE) + 1;
	pci_read_config_dword(pdev, pdev->msix_cap + PCI_MSIX_TABLE, &table);
	pci_read_config_dword(pdev, pdev->msix_cap + PCI_MSIX_PBA, &pba);
	if ((table & PCI_MSIX_TABLE_BIR) == 0) {
		start = table & PCI_MSIX_TABLE_OFFSET;
		end = start + nvec * PCI_MSIX_ENTRY_SIZE;
		lo = min(lo, start);
		hi = max(hi, end);
	}
	if ((pba & PCI_MSIX_PBA_BIR) == 0) {
		start = pba & PCI_MSIX_PBA_OFFSET;
		end = start + DIV_ROUND_UP(nvec, 64) * 8;
		lo = min(lo, start);
		hi = max(hi, end);
	}
	if (!hi)
		return;
	ctrl->hole_lo = lo >> PAGE_SHIFT;
	ctrl->hole_hi = PAGE_ALIGN(hi) >> PAGE_SHIFT;
	if (round_down(lo, PAGE_SIZE) >= BAM_BAR0_MIN)
		ctrl->map_len = round_down(lo, PAGE_SIZE);
}

static void bam_fill_info(struct bam_ctrl *ctrl)
{
	struct bam_kmod_info *info = &ctrl->info;
	struct pci_dev *pdev = ctrl->pdev;

	info->size = sizeof(*info);
	info->version = BAM_KMOD_ABI_VERSION;
	if (IS_ENABLED(BAM_HAVE_NV_P2P))
		info->flags |= BAM_KMOD_INFO_GPU;
	info->pci_domain = pci_domain_nr(pdev->bus);
	info->pci_bus = pdev->bus->number;
	info->pci_devfn = pdev->devfn;
	info->vendor_id = pdev->vendor;
	info->device_id = pdev->device;
	info->instance = ctrl->instance;
	info->bar0_size = ctrl->map_len;
	info->page_size = PAGE_SIZE;
}

static int bam_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct bam_ctrl *ctrl;
	int ret;

	/* new_id can match anything; only NVMe over PCIe is ours. */
	if (pdev->class != PCI_CLASS_STORAGE_EXPRESS) {
		dev_err(&pdev->dev, "class %06x is not NVMe (010802)\n",
			pdev->class);
		return -ENODEV;
	}

	ctrl = kzalloc(sizeof(*ctrl), GFP_KERNEL);
	if (!ctrl)
		return -ENOMEM;
	ctrl->pdev = pci_dev_get(pdev);
	ctrl->instance = -1;
	mutex_init(&ctrl->lock);
	mutex_init(&ctrl->admin_lock);
	init_rwsem(&ctrl->bar_sem);
	device_initialize(&ctrl->dev);
	ctrl->dev.release = bam_ctrl_release;

	ret = ida_alloc_max(&bam_ida, BAM_MINORS - 1, GFP_KERNEL);
	if (ret < 0)
		goto out_put_ctrl;
	ctrl->instance = ret;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto out_put_ctrl;
	/* Bus mastering only while an owner has enabled the controller. */
	pci_clear_master(pdev);
	/* Polled queues only: keep the function off the INTx line. */
	pci_intx(pdev, 0);

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret) {
		dev_err(&pdev->dev, "no usable 64-bit DMA mask: %d\n", ret);
		goto out_disable_device;
	}

	ret = pci_request_region(pdev, 0, BAM_NAME);
	if (ret)
		goto out_disable_device;
	ctrl->bar_phys = pci_resource_start(pdev, 0);
	ctrl->bar_len = pci_resource_len(pdev, 0);
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM) ||
	    ctrl->bar_len < BAM_BAR0_MIN) {
		dev_err(&pdev->dev,
			"BAR0 is not a memory BAR of at least %#x bytes\n",
			BAM_BAR0_MIN);
		ret = -ENODEV;
		goto out_release_region;
	}
	ctrl->bar = pci_iomap(pdev, 0, 0);
	if (!ctrl->bar) {
		ret = -ENOMEM;
		goto out_release_region;
	}
	bam_find_msix(ctrl);
	bam_fill_info(ctrl);

	ret = bam_dma_setup(ctrl);
	if (ret)
		goto out_iounmap;
	ret = bam_admin_mem_alloc(ctrl);
	if (ret)
		goto out_dma_teardown;

	ctrl->dev.class = bam_class;
	ctrl->dev.parent = &pdev->dev;
	ctrl->dev.devt = MKDEV(MAJOR(bam_devt), ctrl->instance);
	ctrl->dev.groups = bam_groups;
	ret = dev_set_name(&ctrl->dev, BAM_NAME "%d", ctrl->instance);
	if (ret)
		goto out_admin_mem_free;
	cdev_init(&ctrl->cdev, &bam_fops);
	ctrl->cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&ctrl->cdev, &ctrl->dev);
	if (ret)
		goto out_admin_mem_free;

	pci_set_drvdata(pdev, ctrl);
	dev_info(&pdev->dev,
		 "bound as /dev/%s (BAR0 %pa, %llu bytes mappable; %s)\n",
		 dev_name(&ctrl->dev), &ctrl->bar_phys, (u64)ctrl->map_len,
		 ctrl->domain ? "own IOMMU domain" : "no IOMMU, unsafe");
	return 0;

out_admin_mem_free:
	bam_admin_mem_free(ctrl);
out_dma_teardown:
	bam_dma_teardown(ctrl);
out_iounmap:
	pci_iounmap(pdev, ctrl->bar);
out_release_region:
	pci_release_region(pdev, 0);
out_disable_device:
	pci_intx(pdev, 1);
	pci_clear_master(pdev);
	pci_disable_device(pdev);
out_put_ctrl:
	put_device(&ctrl->dev);
	return ret;
}

static void bam_remove(struct pci_dev *pdev)
{
	struct bam_ctrl *ctrl = pci_get_drvdata(pdev);

	cdev_device_del(&ctrl->cdev, &ctrl->dev);
	bam_ctrl_kill_users(ctrl);
	bam_admin_mem_free(ctrl);
	bam_dma_teardown(ctrl);
	pci_iounmap(pdev, ctrl->bar);
	pci_release_region(pdev, 0);
	pci_intx(pdev, 1);
	pci_clear_master(pdev);
	pci_disable_device(pdev);
	put_device(&ctrl->dev);
	dev_info(&pdev->dev, "unbound\n");
}

static struct pci_driver bam_driver = {
	.name = BAM_NAME,
	.id_table = NULL, /* driver_override or new_id only */
	.probe = bam_probe,
	.remove = bam_remove,
	/* The module maps DMA through its own IOMMU domain. */
	.driver_managed_dma = true,
};

static int __init bam_init(void)
{
	unsigned long ram_mb = totalram_pages() >> (20 - PAGE_SHIFT);
	int ret;

	bam_abi_checks();

	bam_pinned_max = max_pinned_mb && max_pinned_mb < ram_mb ?
		max_pinned_mb : ram_mb / 2;
	bam_pinned_max <<= 20 - PAGE_SHIFT;

	ret = alloc_chrdev_region(&bam_devt, 0, BAM_MINORS, BAM_NAME);
	if (ret)
		return ret;

	bam_class = bam_class_create();
	if (IS_ERR(bam_class)) {
		ret = PTR_ERR(bam_class);
		goto out_unregister_chrdev;
	}
	bam_class->devnode = bam_devnode;

	ret = pci_register_driver(&bam_driver);
	if (ret)
		goto out_destroy_class;
	return 0;

out_destroy_class:
	class_destroy(bam_class);
out_unregister_chrdev:
	unregister_chrdev_region(bam_devt, BAM_MINORS);
	return ret;
}

static void __exit bam_exit(void)
{
	pci_unregister_driver(&bam_driver);
	class_destroy(bam_class);
	unregister_chrdev_region(bam_devt, BAM_MINORS);
	ida_destroy(&bam_ida);
}

module_init(bam_init);
module_exit(bam_exit);

MODULE_DESCRIPTION("NVMe controllers for user-space (GPU-initiated) I/O");
MODULE_LICENSE("GPL");
