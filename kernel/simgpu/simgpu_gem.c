// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu — GEM shmem buffers and their memory statistics.
 *
 * Objects get their backing pages at creation (so they are resident from
 * the start), pinned, and keep them until freed, when the pin goes first
 * (the shmem helpers count pins, and drm_gem_shmem_free() WARNs on one
 * left over since 6.16). The file that created an object is charged for
 * its pinned pages until the object is freed, up to max_pinned_mb per
 * file, so no render-node user can pin the machine's memory away. There
 * is no shrinker, so a purgeable object is never actually purged. Memory
 * statistics are taken
 * at read time by walking the file's handles, so an object another file
 * imported is "shared" for both files without any cross-file bookkeeping.
 */
#include <linux/dma-resv.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_vma_manager.h>

#include <uapi/drm/simgpu_drm.h>

#include "simgpu.h"

/**
 * simgpu_bo_mem_event() - report a memory event of a file to drmacct
 * @sfile: the file
 * @bo: the object
 * @op: what happened
 */
void simgpu_bo_mem_event(struct simgpu_file *sfile, struct simgpu_bo *bo,
			 enum drmacct_mem_op op)
{
	if (sfile && sfile->acct)
		drmacct_mem_event(sfile->acct, SIMGPU_REGION_SYSTEM, op,
				  bo->base.base.size);
}

static int simgpu_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	/* Called with the new handle already counted. */
	enum drmacct_mem_op op = obj->handle_count > 1 || obj->dma_buf ?
				 DRMACCT_MEM_OPEN : DRMACCT_MEM_CREATE;

	simgpu_bo_mem_event(file->driver_priv, to_simgpu_bo(obj), op);
	return 0;
}

static void simgpu_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	simgpu_bo_mem_event(file->driver_priv, to_simgpu_bo(obj),
			    DRMACCT_MEM_CLOSE);
}

/* Unpin, give the owner its pin budget back, free. */
static void simgpu_gem_free(struct drm_gem_object *obj)
{
	struct simgpu_bo *bo = to_simgpu_bo(obj);
	struct simgpu_file *owner = bo->owner;
	size_t size = obj->size;

	if (bo->pinned)
		drm_gem_shmem_unpin(&bo->base);
	drm_gem_shmem_object_free(obj);		/* frees @bo */
	if (owner) {
		atomic64_sub(size, &owner->pinned);
		simgpu_file_put(owner);
	}
}

static const struct drm_gem_object_funcs simgpu_gem_funcs = {
	.free = simgpu_gem_free,
	.open = simgpu_gem_open,
	.close = simgpu_gem_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/**
 * simgpu_gem_create_object() - drm_driver.gem_create_object
 * @drm: the device
 * @size: object size
 *
 * Return: the embedded GEM object of a new struct simgpu_bo, or
 * ERR_PTR(-ENOMEM).
 */
struct drm_gem_object *simgpu_gem_create_object(struct drm_device *drm,
						size_t size)
{
	struct simgpu_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	atomic_set(&bo->active, 0);
	bo->base.base.funcs = &simgpu_gem_funcs;
	return &bo->base.base;
}

/**
 * simgpu_ioctl_gem_create() - DRM_IOCTL_SIMGPU_GEM_CREATE
 * @drm: the device
 * @data: struct drm_simgpu_gem_create
 * @file: the file that gets the handle
 *
 * The object is charged to @file's pin budget (max_pinned_mb) until it
 * is freed, whoever holds it by then.
 *
 * Return: 0; -EINVAL for flags, size 0 or size > SIMGPU_MAX_BO_SIZE;
 * -ENOSPC when the object would take the file past its pin budget;
 * -ENOMEM.
 */
int simgpu_ioctl_gem_create(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_simgpu_gem_create *args = data;
	struct simgpu_file *sfile = file->driver_priv;
	struct drm_gem_shmem_object *shmem;
	struct simgpu_bo *bo;
	u64 size;
	u32 handle;
	int ret;

	if (args->flags || !args->size || args->size > SIMGPU_MAX_BO_SIZE)
		return -EINVAL;
	size = PAGE_ALIGN(args->size);
	if (atomic64_add_return(size, &sfile->pinned) > simgpu_max_pinned) {
		atomic64_sub(size, &sfile->pinned);
		return -ENOSPC;
	}

	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem)) {
		atomic64_sub(size, &sfile->pinned);
		return PTR_ERR(shmem);
	}
	/* From here on the object's free gives the budget back. */
	bo = to_simgpu_bo(&shmem->base);
	kref_get(&sfile->ref);
	bo->owner = sfile;
	/* Resident from the start, until freed (simgpu_gem_free() unpins). */
	ret = drm_gem_shmem_pin(shmem);
	if (!ret) {
		bo->pinned = true;
		ret = drm_gem_handle_create(file, &shmem->base, &handle);
	}
	/* On success the handle holds the reference; else this frees it. */
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;

	args->handle = handle;
	return 0;
}

/**
 * simgpu_ioctl_gem_madvise() - DRM_IOCTL_SIMGPU_GEM_MADVISE
 * @drm: the device
 * @data: struct drm_simgpu_gem_madvise
 * @file: the file owning the handle
 *
 * Return: 0; -EINVAL for pad or an unknown advice; -ENOENT for a bad
 * handle.
 */
int simgpu_ioctl_gem_madvise(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct drm_simgpu_gem_madvise *args = data;
	struct drm_gem_object *obj;
	int retained;

	if (args->pad)
		return -EINVAL;
	if (args->madv != SIMGPU_MADV_WILLNEED &&
	    args->madv != SIMGPU_MADV_DONTNEED)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	/* shmem: madv 0 = in use, > 0 = purgeable, < 0 = purged. */
	retained = drmacct_compat_shmem_madvise(to_drm_gem_shmem_obj(obj),
					       args->madv);
	simgpu_bo_mem_event(file->driver_priv, to_simgpu_bo(obj),
			    args->madv == SIMGPU_MADV_DONTNEED ?
			    DRMACCT_MEM_PURGEABLE : DRMACCT_MEM_WILLNEED);
	drm_gem_object_put(obj);
	args->retained = retained;
	return 0;
}

/**
 * simgpu_ioctl_gem_info() - DRM_IOCTL_SIMGPU_GEM_INFO
 * @drm: the device
 * @data: struct drm_simgpu_gem_info
 * @file: the file owning the handle
 *
 * Return: 0; -EINVAL for pad; -ENOENT for a bad handle; -ENOMEM.
 */
int simgpu_ioctl_gem_info(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_simgpu_gem_info *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret) {
		args->size = obj->size;
		args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	}
	drm_gem_object_put(obj);
	return ret;
}

/**
 * simgpu_ioctl_gem_wait() - DRM_IOCTL_SIMGPU_GEM_WAIT
 * @drm: the device
 * @data: struct drm_simgpu_gem_wait
 * @file: the file owning the handle
 *
 * Return: 0 once the jobs that write the object (and with
 * SIMGPU_GEM_WAIT_WRITE those that read it) have finished; -EBUSY when
 * polling and they have not; -ETIME at the deadline; -ERESTARTSYS on a
 * signal (the deadline is absolute, so a restart waits no longer);
 * -EINVAL for unknown flags or reserved; -ENOENT for a bad handle;
 * -ENODEV after the device was unplugged.
 */
int simgpu_ioctl_gem_wait(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_simgpu_gem_wait *args = data;
	enum dma_resv_usage usage;
	struct drm_gem_object *obj;
	long left;
	u64 now;
	int ret = 0, idx;

	if (args->flags & ~SIMGPU_GEM_WAIT_WRITE || args->reserved)
		return -EINVAL;
	/* The wait itself outside drm_dev_enter(): an unplug never waits for it. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	obj = drm_gem_object_lookup(file, args->handle);
	drm_dev_exit(idx);
	if (!obj)
		return -ENOENT;
	usage = args->flags & SIMGPU_GEM_WAIT_WRITE ? DMA_RESV_USAGE_READ :
						      DMA_RESV_USAGE_WRITE;
	now = ktime_get_ns();
	if (!args->timeout_ns) {
		if (!dma_resv_test_signaled(obj->resv, usage))
			ret = -EBUSY;
	} else if (args->timeout_ns <= now) {
		if (!dma_resv_test_signaled(obj->resv, usage))
			ret = -ETIME;
	} else {
		/* Rounded up to whole jiffies: never before the deadline. */
		left = dma_resv_wait_timeout(obj->resv, usage, true,
					     nsecs_to_jiffies(args->timeout_ns - now) + 1);
		if (left == 0)
			ret = -ETIME;
		else if (left < 0)
			ret = left;
	}
	drm_gem_object_put(obj);
	return ret;
}

/**
 * simgpu_gem_mem_stats() - memory statistics of a file, right now
 * @file: the file
 * @st: filled for the single region
 *
 * shared: the object has another handle (in this or another file) or was
 * imported from elsewhere; resident: it has backing pages; purgeable:
 * resident and marked DONTNEED; active: an unfinished job uses it.
 */
void simgpu_gem_mem_stats(struct drm_file *file, struct drmacct_mem_stats *st)
{
	struct drm_gem_object *obj;
	int id;

	memset(st, 0, sizeof(*st));
	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct simgpu_bo *bo = to_simgpu_bo(obj);
		u64 size = obj->size;

		st->total += size;
		if (READ_ONCE(obj->handle_count) > 1 || obj->import_attach)
			st->shared += size;
		if (READ_ONCE(bo->base.pages)) {
			st->resident += size;
			if (READ_ONCE(bo->base.madv) > 0)
				st->purgeable += size;
		}
		if (atomic_read(&bo->active))
			st->active += size;
	}
	spin_unlock(&file->table_lock);
}
