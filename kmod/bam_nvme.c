// SPDX-License-Identifier: GPL-2.0
/*
 * bam_nvme: hand NVMe controllers to user space for GPU-initiated I/O.
 *
 * The module binds only PCI functions that an administrator hands it
 * (driver_override or new_id); it has no static id table, so loading it
 * never takes a disk away from the nvme driver. For each controller it
 * creates /dev/bam_nvmeN, which lets a privileged process
 *   - mmap BAR0 (registers and doorbells, uncached),
 *   - pin and DMA-map its own memory (host pages, or GPU memory through
 *     NVIDIA's peer-to-peer API when built against it) and learn the bus
 *     address of every page,
 * so that the user-space queue code can drive the controller directly.
 * Mappings belong to the open file and are torn down on close, on process
 * death and on unbind; the controller is disabled first so that it cannot
 * write into pages that are being handed back to the allocator.
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
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/xarray.h>

#ifdef BAM_HAVE_NV_P2P
#include <nv-p2p.h>
#endif

#include "include/bam_kmod_abi.h"

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 15, 0)
#error "bam_nvme needs Linux 5.15 or newer (sg_alloc_table_from_pages_segment)"
#endif

#define BAM_NAME "bam_nvme"
#define BAM_MINORS 256
#define BAM_MAX_MAPPINGS 65536
#define BAM_GPU_PAGE_SIZE (64UL << 10)

/* Controller registers the module itself touches (to stop DMA). */
#define BAM_REG_CAP 0x00
#define BAM_REG_CC 0x14
#define BAM_REG_CSTS 0x1c
#define BAM_CC_EN 0x1
#define BAM_CSTS_RDY 0x1
#define BAM_BAR0_MIN 0x2000 /* registers + admin doorbells */

static unsigned int max_map_mb = 1024;
module_param(max_map_mb, uint, 0444);
MODULE_PARM_DESC(max_map_mb,
		 "Largest single DMA mapping in MiB (default 1024)");

/**
 * struct bam_ctrl - one bound NVMe function
 * @pdev:      the PCI function
 * @bar:       kernel mapping of BAR0, used only to disable the controller
 * @bar_phys:  bus-physical start of BAR0 (for user mmap)
 * @bar_len:   length of BAR0
 * @instance:  N of /dev/bam_nvmeN, or -1
 * @dev:       the class device; its release frees this struct
 * @cdev:      the character device, child of @dev
 * @lock:      protects @files and @dead against open/release/remove
 * @files:     open files (struct bam_file.node)
 * @bar_sem:   held for read while a BAR fault inserts a PTE
 * @dead:      set once remove has started; read under @lock, @bar_sem or a
 *             file's lock (remove takes all three after setting it)
 * @nr_maps:   live mappings over all files (sysfs "mappings")
 * @nr_pinned: host pages pinned over all files (sysfs "pinned_pages")
 */
struct bam_ctrl {
	struct pci_dev *pdev;
	void __iomem *bar;
	resource_size_t bar_phys;
	resource_size_t bar_len;
	int instance;
	struct device dev;
	struct cdev cdev;
	struct mutex lock;
	struct list_head files;
	struct rw_semaphore bar_sem;
	bool dead;
	atomic_long_t nr_maps;
	atomic_long_t nr_pinned;
};

/**
 * struct bam_file - state of one open of /dev/bam_nvmeN
 * @ctrl:  the controller (a reference on ctrl->dev is held)
 * @node:  entry in ctrl->files
 * @lock:  serialises map/unmap and teardown of @maps
 * @maps:  handle -> struct bam_map
 * @mapping: the open file's address space, for revoking BAR mappings
 */
struct bam_file {
	struct bam_ctrl *ctrl;
	struct address_space *mapping;
	struct list_head node;
	struct mutex lock;
	struct xarray maps;
};

enum bam_map_kind { BAM_MAP_HOST, BAM_MAP_GPU };

/**
 * struct bam_map - one pinned, DMA-mapped range
 * @kind:     host pages or GPU memory
 * @npages:   pages pinned (host) or entries in the GPU page table
 * @pages:    pinned host pages
 * @sgt:      their scatterlist, DMA-mapped for the controller
 * @ctrl:     owner, for logging from NVIDIA's free callback
 * @gpu_va:   GPU virtual address passed to nvidia_p2p_get_pages()
 * @gpu_pt:   NVIDIA page table
 * @gpu_dma:  NVIDIA DMA mapping for ctrl->pdev
 * @gpu_live: 1 while the NVIDIA objects are ours to release; whoever
 *            clears it (unmap or NVIDIA's free callback) releases them
 * @gpu_done: completed when the free callback has finished with this map
 */
struct bam_map {
	enum bam_map_kind kind;
	unsigned long npages;
	struct page **pages;
	struct sg_table sgt;
#ifdef BAM_HAVE_NV_P2P
	struct bam_ctrl *ctrl;
	u64 gpu_va;
	struct nvidia_p2p_page_table *gpu_pt;
	struct nvidia_p2p_dma_mapping *gpu_dma;
	atomic_t gpu_live;
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

	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_INFO) != sizeof(struct bam_kmod_info));
	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_MAP_HOST) !=
		     sizeof(struct bam_kmod_map));
	BUILD_BUG_ON(_IOC_SIZE(BAM_IOC_UNMAP) != sizeof(struct bam_kmod_unmap));
	BUILD_BUG_ON(sizeof(struct bam_kmod_map) > BAM_KMOD_MAX_ARG_SIZE);
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

/* ---- controller quiesce ---------------------------------------------- */

/*
 * Clear CC.EN and wait for CSTS.RDY to drop so the controller stops all
 * DMA before pinned memory goes back to its owner. If it does not stop in
 * CAP.TO, cut bus mastering instead; open turns it back on.
 * Called with ctrl->lock held and ctrl->dead clear (ctrl->bar is valid).
 */
static void bam_ctrl_quiesce(struct bam_ctrl *ctrl)
{
	u64 cap = lo_hi_readq(ctrl->bar + BAM_REG_CAP);
	u32 cc = readl(ctrl->bar + BAM_REG_CC);
	unsigned long timeout;

	if (!(cc & BAM_CC_EN) &&
	    !(readl(ctrl->bar + BAM_REG_CSTS) & BAM_CSTS_RDY))
		return;

	writel(cc & ~BAM_CC_EN, ctrl->bar + BAM_REG_CC);
	timeout = jiffies + msecs_to_jiffies((((cap >> 24) & 0xff) + 1) * 500);
	for (;;) {
		u32 csts = readl(ctrl->bar + BAM_REG_CSTS);

		if (csts == ~0U || !(csts & BAM_CSTS_RDY))
			return;
		if (time_after(jiffies, timeout))
			break;
		usleep_range(1000, 2000);
	}
	dev_warn(&ctrl->pdev->dev,
		 "controller did not stop; disabling bus mastering\n");
	pci_clear_master(ctrl->pdev);
}

/* ---- host mappings --------------------------------------------------- */

/*
 * Would the controller's view of these pages differ from the CPU's without
 * dma_sync_*() calls? Behind a translating IOMMU only untrusted (external)
 * devices get bounce buffers; dma_need_sync() cannot tell, since it answers
 * for the IOMMU ops as a whole. With direct mapping it is exact (swiotlb,
 * non-coherent DMA).
 */
static bool bam_sgt_needs_sync(struct pci_dev *pdev, struct sg_table *sgt)
{
	struct iommu_domain *dom = iommu_get_domain_for_dev(&pdev->dev);
	struct scatterlist *sg;
	unsigned int i;

	if (dom && dom->type != IOMMU_DOMAIN_IDENTITY)
		return pdev->untrusted;
	for_each_sgtable_dma_sg(sgt, sg, i)
		if (dma_need_sync(&pdev->dev, sg_dma_address(sg)))
			return true;
	return false;
}

static int bam_map_host(struct bam_ctrl *ctrl, struct bam_map *map,
			const struct bam_kmod_map *arg)
{
	struct device *dmadev = &ctrl->pdev->dev;
	unsigned long npages = arg->length >> PAGE_SHIFT;
	unsigned int max_seg;
	long pinned;
	int ret;

	map->kind = BAM_MAP_HOST;
	map->pages = kvmalloc_array(npages, sizeof(*map->pages), GFP_KERNEL);
	if (!map->pages)
		return -ENOMEM;

	/*
	 * FOLL_LONGTERM: the pages stay pinned for as long as user space
	 * likes, so move them out of CMA/movable zones first. The _fast
	 * variant takes mmap_lock itself and has kept its signature since
	 * 5.6; pin_user_pages() lost its vmas argument in 6.5.
	 */
	pinned = pin_user_pages_fast(arg->vaddr, npages,
				     FOLL_WRITE | FOLL_LONGTERM, map->pages);
	if (pinned < 0) {
		ret = pinned;
		goto out_free_pages;
	}
	map->npages = pinned;
	if (pinned != npages) {
		ret = -EFAULT;
		goto out_unpin;
	}

	max_seg = min_t(size_t, dma_get_max_seg_size(dmadev),
			dma_max_mapping_size(dmadev));
	max_seg = max_t(unsigned int, round_down(max_seg, PAGE_SIZE),
			PAGE_SIZE);
	ret = sg_alloc_table_from_pages_segment(&map->sgt, map->pages, npages,
						0, arg->length, max_seg,
						GFP_KERNEL);
	if (ret)
		goto out_unpin;

	ret = dma_map_sgtable(dmadev, &map->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto out_free_sgt;

	/*
	 * User space and the controller share these pages with no sync calls
	 * in between, so bounce buffers or non-coherent DMA would silently
	 * lose data. Refuse instead.
	 */
	if (bam_sgt_needs_sync(ctrl->pdev, &map->sgt)) {
		dev_warn_once(dmadev,
			      "DMA needs bounce buffers or cache maintenance; not supported\n");
		ret = -EOPNOTSUPP;
		goto out_dma_unmap;
	}

	atomic_long_add(npages, &ctrl->nr_pinned);
	return 0;

out_dma_unmap:
	dma_unmap_sgtable(dmadev, &map->sgt, DMA_BIDIRECTIONAL, 0);
out_free_sgt:
	sg_free_table(&map->sgt);
out_unpin:
	unpin_user_pages(map->pages, map->npages);
out_free_pages:
	kvfree(map->pages);
	return ret;
}

static void bam_unmap_host(struct bam_ctrl *ctrl, struct bam_map *map)
{
	dma_unmap_sgtable(&ctrl->pdev->dev, &map->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&map->sgt);
	/* The controller may have written any page: keep the data. */
	unpin_user_pages_dirty_lock(map->pages, map->npages, true);
	kvfree(map->pages);
	atomic_long_sub(map->npages, &ctrl->nr_pinned);
}

static int bam_host_addrs(struct bam_map *map, u64 *addrs)
{
	struct sg_dma_page_iter it;
	unsigned long i = 0;

	for_each_sgtable_dma_page(&map->sgt, &it, 0) {
		if (WARN_ON_ONCE(i >= map->npages))
			return -EIO;
		addrs[i++] = sg_page_iter_dma_address(&it);
	}
	return i == map->npages ? 0 : -EIO;
}

/* ---- GPU mappings ---------------------------------------------------- */

#ifdef BAM_HAVE_NV_P2P
/*
 * NVIDIA calls this when the GPU memory goes away under us (cudaFree or
 * process exit before our unmap). The controller may still point at it:
 * nothing we can do but drop the translation and log it.
 */
static void bam_gpu_free_cb(void *data)
{
	struct bam_map *map = data;

	if (atomic_xchg(&map->gpu_live, 0)) {
		dev_warn(&map->ctrl->pdev->dev,
			 "GPU memory at 0x%llx freed while mapped for DMA\n",
			 map->gpu_va);
		if (map->gpu_dma)
			nvidia_p2p_free_dma_mapping(map->gpu_dma);
		nvidia_p2p_free_page_table(map->gpu_pt);
	}
	complete(&map->gpu_done);
}

static void bam_unmap_gpu(struct bam_ctrl *ctrl, struct bam_map *map)
{
	if (atomic_xchg(&map->gpu_live, 0)) {
		nvidia_p2p_dma_unmap_pages(ctrl->pdev, map->gpu_pt,
					   map->gpu_dma);
		nvidia_p2p_put_pages(0, 0, map->gpu_va, map->gpu_pt);
	} else {
		/* The free callback owns the teardown; let it finish. */
		wait_for_completion(&map->gpu_done);
	}
}

static int bam_map_gpu(struct bam_ctrl *ctrl, struct bam_map *map,
		       const struct bam_kmod_map *arg)
{
	int ret;

	map->kind = BAM_MAP_GPU;
	map->ctrl = ctrl;
	map->gpu_va = arg->vaddr;
	init_completion(&map->gpu_done);
	atomic_set(&map->gpu_live, 1);

	ret = nvidia_p2p_get_pages(0, 0, arg->vaddr, arg->length, &map->gpu_pt,
				   bam_gpu_free_cb, map);
	if (ret)
		return ret;
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(map->gpu_pt) ||
	    map->gpu_pt->page_size != NVIDIA_P2P_PAGE_SIZE_64KB) {
		ret = -EOPNOTSUPP;
		goto out_put_pages;
	}

	ret = nvidia_p2p_dma_map_pages(ctrl->pdev, map->gpu_pt, &map->gpu_dma);
	if (ret)
		goto out_put_pages;
	if (!NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(map->gpu_dma) ||
	    map->gpu_dma->entries != arg->length / BAM_GPU_PAGE_SIZE) {
		ret = -EIO;
		goto out_unmap_gpu;
	}
	map->npages = map->gpu_dma->entries;
	return 0;

out_unmap_gpu:
	/* Unmap and put, unless the free callback got there first. */
	bam_unmap_gpu(ctrl, map);
	return ret;
out_put_pages:
	if (atomic_xchg(&map->gpu_live, 0))
		nvidia_p2p_put_pages(0, 0, arg->vaddr, map->gpu_pt);
	else
		wait_for_completion(&map->gpu_done);
	return ret;
}

static int bam_gpu_addrs(struct bam_map *map, u64 *addrs)
{
	unsigned long i;

	for (i = 0; i < map->npages; i++)
		addrs[i] = map->gpu_dma->dma_addresses[i];
	return 0;
}
#else
static int bam_map_gpu(struct bam_ctrl *ctrl, struct bam_map *map,
		       const struct bam_kmod_map *arg)
{
	return -EOPNOTSUPP;
}

static void bam_unmap_gpu(struct bam_ctrl *ctrl, struct bam_map *map)
{
}

static int bam_gpu_addrs(struct bam_map *map, u64 *addrs)
{
	return -EOPNOTSUPP;
}
#endif

static void bam_map_teardown(struct bam_ctrl *ctrl, struct bam_map *map)
{
	if (map->kind == BAM_MAP_HOST)
		bam_unmap_host(ctrl, map);
	else
		bam_unmap_gpu(ctrl, map);
	atomic_long_dec(&ctrl->nr_maps);
}

/* Tear down every mapping of @bf. Caller holds bf->lock. */
static void bam_file_unmap_all(struct bam_file *bf)
{
	struct bam_map *map;
	unsigned long handle;

	xa_for_each(&bf->maps, handle, map) {
		xa_erase(&bf->maps, handle);
		bam_map_teardown(bf->ctrl, map);
		kfree(map);
	}
}

/* ---- ioctls ---------------------------------------------------------- */

/*
 * Copy an extensible argument struct in: @min is the size of version 1.
 * Shorter or absurd sizes and unknown versions are -EINVAL; a longer
 * struct whose extra bytes are not zero is -E2BIG.
 */
static int bam_copy_arg(void *karg, size_t ksize, size_t min,
			void __user *uarg)
{
	u32 hdr[2];

	if (copy_from_user(hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr[0] < min || hdr[0] > BAM_KMOD_MAX_ARG_SIZE)
		return -EINVAL;
	if (hdr[1] != BAM_KMOD_ABI_VERSION)
		return -EINVAL;
	return copy_struct_from_user(karg, ksize, uarg, hdr[0]);
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
	struct bam_ctrl *ctrl = bf->ctrl;
	struct bam_kmod_info info;
	u32 usize;
	int ret;

	ret = bam_copy_arg(&info, sizeof(info), sizeof(info), uarg);
	if (ret)
		return ret;
	usize = info.size;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.version = BAM_KMOD_ABI_VERSION;
	if (IS_ENABLED(BAM_HAVE_NV_P2P))
		info.flags |= BAM_KMOD_INFO_GPU;
	info.pci_domain = pci_domain_nr(ctrl->pdev->bus);
	info.pci_bus = ctrl->pdev->bus->number;
	info.pci_devfn = ctrl->pdev->devfn;
	info.vendor_id = ctrl->pdev->vendor;
	info.device_id = ctrl->pdev->device;
	info.instance = ctrl->instance;
	info.bar0_size = ctrl->bar_len;
	info.max_map_bytes = (u64)max_map_mb << 20;
	info.page_size = PAGE_SIZE;
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
	u64 *addrs;
	u32 usize, id;
	int ret;

	ret = bam_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg);
	if (ret)
		return ret;
	usize = arg.size;
	ret = bam_check_map_arg(&arg, gpu, &nentries);
	if (ret)
		return ret;
	if (!access_ok(u64_to_user_ptr(arg.addrs), nentries * sizeof(u64)))
		return -EFAULT;

	addrs = kvmalloc_array(nentries, sizeof(*addrs), GFP_KERNEL);
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
	if (gpu)
		ret = bam_map_gpu(ctrl, map, &arg);
	else
		ret = bam_map_host(ctrl, map, &arg);
	if (ret)
		goto out_unlock;
	atomic_long_inc(&ctrl->nr_maps);

	ret = gpu ? bam_gpu_addrs(map, addrs) : bam_host_addrs(map, addrs);
	if (ret)
		goto out_teardown;
	ret = xa_alloc(&bf->maps, &id, map, XA_LIMIT(1, BAM_MAX_MAPPINGS),
		       GFP_KERNEL);
	if (ret) {
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto out_teardown;
	}

	arg.handle = id;
	arg.page_size = gpu ? BAM_GPU_PAGE_SIZE : PAGE_SIZE;
	arg.npages = nentries;
	if (copy_to_user(u64_to_user_ptr(arg.addrs), addrs,
			 nentries * sizeof(u64)) ||
	    bam_copy_arg_out(uarg, &arg, sizeof(arg), usize)) {
		ret = -EFAULT;
		goto out_erase;
	}
	mutex_unlock(&bf->lock);
	kvfree(addrs);
	return 0;

out_erase:
	xa_erase(&bf->maps, id);
out_teardown:
	bam_map_teardown(ctrl, map);
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
	int ret;

	ret = bam_copy_arg(&arg, sizeof(arg), sizeof(arg), uarg);
	if (ret)
		return ret;
	if (!arg.handle || arg.handle > BAM_MAX_MAPPINGS)
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
	map = xa_erase(&bf->maps, arg.handle);
	if (map)
		bam_map_teardown(bf->ctrl, map);
	mutex_unlock(&bf->lock);
	kfree(map);
	return map ? 0 : -ENOENT;
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
	default:
		return -ENOTTY;
	}
}

/* ---- BAR0 mmap ------------------------------------------------------- */

static vm_fault_t bam_bar_fault(struct vm_fault *vmf)
{
	struct bam_ctrl *ctrl = vmf->vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&ctrl->bar_sem);
	if (!ctrl->dead && vmf->pgoff < PAGE_ALIGN(ctrl->bar_len) >> PAGE_SHIFT)
		ret = vmf_insert_pfn(vmf->vma, vmf->address,
				     PHYS_PFN(ctrl->bar_phys) + vmf->pgoff);
	up_read(&ctrl->bar_sem);
	return ret;
}

static const struct vm_operations_struct bam_bar_vm_ops = {
	.fault = bam_bar_fault,
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

	if (vma->vm_pgoff || len > PAGE_ALIGN(bf->ctrl->bar_len))
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (READ_ONCE(bf->ctrl->dead))
		return -ENODEV;

	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	bam_vma_set_flags(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
			       VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_private_data = bf->ctrl;
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

	bf = kzalloc(sizeof(*bf), GFP_KERNEL);
	if (!bf)
		return -ENOMEM;
	bf->ctrl = ctrl;
	bf->mapping = filp->f_mapping;
	mutex_init(&bf->lock);
	xa_init_flags(&bf->maps, XA_FLAGS_ALLOC1);

	mutex_lock(&ctrl->lock);
	if (ctrl->dead) {
		ret = -ENODEV;
		goto out_unlock;
	}
	pci_set_master(ctrl->pdev);
	list_add(&bf->node, &ctrl->files);
	get_device(&ctrl->dev);
	mutex_unlock(&ctrl->lock);

	filp->private_data = bf;
	return nonseekable_open(inode, filp);

out_unlock:
	mutex_unlock(&ctrl->lock);
	kfree(bf);
	return ret;
}

static int bam_release(struct inode *inode, struct file *filp)
{
	struct bam_file *bf = filp->private_data;
	struct bam_ctrl *ctrl = bf->ctrl;

	mutex_lock(&ctrl->lock);
	if (!ctrl->dead) {
		list_del(&bf->node);
		mutex_lock(&bf->lock);
		/* Owner gone with mappings live: stop the controller first. */
		if (!xa_empty(&bf->maps)) {
			bam_ctrl_quiesce(ctrl);
			bam_file_unmap_all(bf);
		}
		mutex_unlock(&bf->lock);
	}
	mutex_unlock(&ctrl->lock);

	xa_destroy(&bf->maps);
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

static struct attribute *bam_attrs[] = {
	&dev_attr_mappings.attr,
	&dev_attr_pinned_pages.attr,
	NULL,
};
ATTRIBUTE_GROUPS(bam);

/* ---- probe / remove -------------------------------------------------- */

static void bam_ctrl_release(struct device *dev)
{
	struct bam_ctrl *ctrl = container_of(dev, struct bam_ctrl, dev);

	if (ctrl->instance >= 0)
		ida_free(&bam_ida, ctrl->instance);
	kfree(ctrl);
}

/*
 * Revoke everything user space holds on a controller that is going away:
 * BAR mappings (later accesses get SIGBUS) and DMA mappings (after the
 * controller is stopped). Open files stay open and answer -ENODEV.
 */
static void bam_ctrl_kill_users(struct bam_ctrl *ctrl)
{
	struct bam_file *bf, *tmp;

	down_write(&ctrl->bar_sem);
	WRITE_ONCE(ctrl->dead, true);
	up_write(&ctrl->bar_sem);

	mutex_lock(&ctrl->lock);
	list_for_each_entry(bf, &ctrl->files, node)
		unmap_mapping_range(bf->mapping, 0, 0, 1);

	bam_ctrl_quiesce(ctrl);
	list_for_each_entry_safe(bf, tmp, &ctrl->files, node) {
		mutex_lock(&bf->lock);
		bam_file_unmap_all(bf);
		mutex_unlock(&bf->lock);
		list_del_init(&bf->node);
	}
	mutex_unlock(&ctrl->lock);
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
	ctrl->pdev = pdev;
	ctrl->instance = -1;
	mutex_init(&ctrl->lock);
	init_rwsem(&ctrl->bar_sem);
	INIT_LIST_HEAD(&ctrl->files);
	device_initialize(&ctrl->dev);
	ctrl->dev.release = bam_ctrl_release;

	ret = ida_alloc_max(&bam_ida, BAM_MINORS - 1, GFP_KERNEL);
	if (ret < 0)
		goto out_put_ctrl;
	ctrl->instance = ret;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto out_put_ctrl;
	pci_set_master(pdev);
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

	ctrl->dev.class = bam_class;
	ctrl->dev.parent = &pdev->dev;
	ctrl->dev.devt = MKDEV(MAJOR(bam_devt), ctrl->instance);
	ctrl->dev.groups = bam_groups;
	ret = dev_set_name(&ctrl->dev, BAM_NAME "%d", ctrl->instance);
	if (ret)
		goto out_iounmap;
	cdev_init(&ctrl->cdev, &bam_fops);
	ctrl->cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&ctrl->cdev, &ctrl->dev);
	if (ret)
		goto out_iounmap;

	pci_set_drvdata(pdev, ctrl);
	dev_info(&pdev->dev, "bound as /dev/%s (BAR0 %pa, %llu bytes)\n",
		 dev_name(&ctrl->dev), &ctrl->bar_phys, (u64)ctrl->bar_len);
	return 0;

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
};

static int __init bam_init(void)
{
	int ret;

	bam_abi_checks();

	/* Keep entry counts in 32 bits (bam_kmod_map.npages). */
	if (!max_map_mb || max_map_mb > (U32_MAX >> (20 - PAGE_SHIFT))) {
		pr_warn("max_map_mb=%u out of range; using 1024\n", max_map_mb);
		max_map_mb = 1024;
	}

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
