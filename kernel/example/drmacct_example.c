// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct_example — the smallest DRM driver that adopts the drmacct helper,
 * as Documentation/drmacct-helper.rst walks through it. The guide quotes
 * this file between its "guide:" markers; it builds and runs on every
 * target kernel (selftests/kernel/test_example.c), so the guide's code is
 * real code.
 *
 * One engine ("gfx", capacity 1, time and cycles at a fixed clock), one
 * memory region ("vram", really shmem), a render node with two ioctls:
 * EXAMPLE_BO (create a buffer) and EXAMPLE_RUN (run a job of N ns on the
 * engine and wait for it; with EXAMPLE_RUN_HANG the job never ends and a
 * 50 ms watchdog resets the engine). The "hardware" is a hard hrtimer (hard
 * interrupt context also on PREEMPT_RT, as a GPU's interrupt is): arming it
 * is the doorbell, the job begins just before, and ends in its callback.
 * Every ioctl and the open run inside drm_dev_enter(), and remove unplugs
 * the device first, so a hot-unplug with files open is safe.
 */
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>

#include "drmacct.h"
#include "drmacct_compat.h"
#include <drmacct_example.h>

#define EXAMPLE_FREQ_HZ		500000000ull	/* the engine's fixed clock */
#define EXAMPLE_WATCHDOG_NS	(50 * NSEC_PER_MSEC)

struct example_device {
	struct drm_device drm;
	struct drmacct_device *acct;
	struct mutex engine_lock;	/* one job on the engine at a time */
	struct hrtimer timer;		/* the engine's "hardware" */
	struct example_job *running;	/* under engine_lock */
};

struct example_file {
	struct drmacct_client *acct;
};

struct example_job {
	struct drmacct_job acct;	/* guide: embed one per job */
	struct completion done;
	u64 start_ns, end_ns;
	bool hung;
};

static inline struct example_device *to_example(struct drm_device *drm)
{
	return container_of(drm, struct example_device, drm);
}

/* guide: device */
static int example_acct_init(struct example_device *edev)
{
	static const struct drmacct_engine_desc engines[] = {
		{ .name = "gfx", .capacity = 1, .max_freq_hz = EXAMPLE_FREQ_HZ,
		  .flags = DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES },
	};
	static const char * const regions[] = { "vram" };
	const struct drmacct_device_desc desc = {
		.driver_name = "drmacct_example",
		.dev = edev->drm.dev,
		.engines = engines, .num_engines = ARRAY_SIZE(engines),
		.regions = regions, .num_regions = ARRAY_SIZE(regions),
		.mem_keys = DRMACCT_MEM_KEY_SHARED | DRMACCT_MEM_KEY_RESIDENT,
	};

	edev->acct = drmacct_device_create(&desc);
	return PTR_ERR_OR_ZERO(edev->acct);
}
/* guide: end */

/* guide: files */
static int example_open(struct drm_device *drm, struct drm_file *file)
{
	struct example_file *efile;
	int idx, ret = 0;

	/* Not once the device is unplugged: its helper device is gone then. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	efile = kzalloc(sizeof(*efile), GFP_KERNEL);
	if (!efile) {
		ret = -ENOMEM;
		goto out;
	}
	efile->acct = drmacct_client_open(to_example(drm)->acct, file);
	if (IS_ERR(efile->acct)) {
		ret = PTR_ERR(efile->acct);
		kfree(efile);
		goto out;
	}
	file->driver_priv = efile;
out:
	drm_dev_exit(idx);
	return ret;
}

static void example_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct example_file *efile = file->driver_priv;

	drmacct_client_close(efile->acct);	/* running jobs keep it alive */
	kfree(efile);
}
/* guide: end */

/* guide: jobs */
/* The engine finished the job: in hard interrupt context, also on RT. */
static enum hrtimer_restart example_irq(struct hrtimer *timer)
{
	struct example_device *edev = container_of(timer, struct example_device, timer);
	struct example_job *job = edev->running;
	u64 cycles = mul_u64_u32_div(ktime_get_ns() - job->start_ns,
				     EXAMPLE_FREQ_HZ / 1000, 1000000);

	job->end_ns = drmacct_job_end(&job->acct, cycles);
	complete(&job->done);
	return HRTIMER_NORESTART;
}

static int example_run(struct example_device *edev, struct example_file *efile,
		       struct drm_example_run *args)
{
	struct example_job job = { .hung = args->flags & EXAMPLE_RUN_HANG };
	int ret;

	ret = drmacct_job_init(&job.acct, efile->acct, 0);
	if (ret)
		return ret;
	init_completion(&job.done);
	mutex_lock(&edev->engine_lock);
	edev->running = &job;
	/*
	 * The hardware starts the job now: begin now, not at submission, and
	 * before the doorbell (arming the timer here): once rung, the job may
	 * complete on another CPU at once, and its end must find it begun.
	 */
	job.start_ns = drmacct_job_begin(&job.acct);
	if (!job.hung)
		hrtimer_start(&edev->timer, ns_to_ktime(job.start_ns + args->ns),
			      HRTIMER_MODE_ABS_HARD);
	/* + 1 jiffy: the watchdog never fires before its time. */
	if (!wait_for_completion_timeout(&job.done,
					 nsecs_to_jiffies(args->ns + EXAMPLE_WATCHDOG_NS) + 1)) {
		/* Hung: reset the engine; the time it held the engine counts. */
		hrtimer_cancel(&edev->timer);
		if (try_wait_for_completion(&job.done))
			goto done;
		job.end_ns = drmacct_job_reset(&job.acct, 0);
		ret = -ETIMEDOUT;
	}
done:
	edev->running = NULL;
	mutex_unlock(&edev->engine_lock);
	drmacct_job_fini(&job.acct);
	args->start_ns = job.start_ns;
	args->end_ns = job.end_ns;
	return ret;
}
/* guide: end */

/*
 * Inside drm_dev_enter(): an unplug waits for a RUN in progress, which
 * ends within its 1 s limit plus the watchdog. A driver whose ioctls can
 * wait without bound waits outside it, or the unplug would wait with them.
 */
static int example_ioctl_run(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_example_run *args = data;
	int idx, ret;

	if (args->flags & ~EXAMPLE_RUN_HANG || !args->ns || args->ns > NSEC_PER_SEC)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = example_run(to_example(drm), file->driver_priv, args);
	drm_dev_exit(idx);
	return ret;
}

static int example_ioctl_bo(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_example_bo *args = data;
	struct drm_gem_shmem_object *shmem;
	struct sg_table *sgt;
	int ret;

	int idx;

	if (!args->size || args->size > SZ_64M || args->pad)
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	shmem = drm_gem_shmem_create(drm, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem)) {
		drm_dev_exit(idx);
		return PTR_ERR(shmem);
	}
	/*
	 * Resident at once, mapped for the device as a GPU's MMU would need
	 * it; drm_gem_shmem_free() releases the pages with the table. (No pin
	 * for life: the shmem helpers WARN on a pin left at free.)
	 */
	sgt = drm_gem_shmem_get_pages_sgt(shmem);
	ret = PTR_ERR_OR_ZERO(sgt);
	if (!ret)
		ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	drm_gem_object_put(&shmem->base);
	drm_dev_exit(idx);
	return ret;
}

/* guide: fdinfo */
static void example_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct example_file *efile = file->driver_priv;
	struct drmacct_mem_stats mem = {};
	struct drm_gem_object *obj;
	int id;

	/* The handle table's own lock keeps it stable while we walk it. */
	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		mem.total += obj->size;
		if (READ_ONCE(obj->handle_count) > 1 || obj->import_attach)
			mem.shared += obj->size;
		if (READ_ONCE(to_drm_gem_shmem_obj(obj)->pages))
			mem.resident += obj->size;
	}
	spin_unlock(&file->table_lock);
	drmacct_show_fdinfo(efile->acct, p, &mem);
}
DRMACCT_DEFINE_SHOW_FDINFO(example_show_fdinfo)

static const struct file_operations example_fops = {
	.owner = THIS_MODULE,
	DRM_GEM_FOPS,
	DRMACCT_FOPS_SHOW_FDINFO(example_show_fdinfo)
};
/* guide: end */

static const struct drm_ioctl_desc example_ioctls[] = {
	DRM_IOCTL_DEF_DRV(EXAMPLE_BO, example_ioctl_bo, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(EXAMPLE_RUN, example_ioctl_run, DRM_RENDER_ALLOW),
};

static const struct drm_driver example_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER,
	.open = example_open,
	.postclose = example_postclose,
	.ioctls = example_ioctls,
	.num_ioctls = ARRAY_SIZE(example_ioctls),
	.fops = &example_fops,
	DRMACCT_DRIVER_SHOW_FDINFO(example_show_fdinfo)
	.name = "drmacct_example",
	.desc = "drmacct helper example",
	DRMACCT_DRIVER_DATE("20250101")
	.major = 1,
};

static struct platform_device *example_pdev;

static int example_probe(struct platform_device *pdev)
{
	struct example_device *edev;
	int ret;

	edev = devm_drm_dev_alloc(&pdev->dev, &example_driver, struct example_device, drm);
	if (IS_ERR(edev))
		return PTR_ERR(edev);
	mutex_init(&edev->engine_lock);
	drmacct_compat_hrtimer_setup(&edev->timer, example_irq, CLOCK_MONOTONIC,
				     HRTIMER_MODE_ABS_HARD);
	ret = example_acct_init(edev);
	if (ret)
		return ret;
	ret = drm_dev_register(&edev->drm, 0);
	if (ret) {
		drmacct_device_destroy(edev->acct);
		return ret;
	}
	platform_set_drvdata(pdev, edev);
	return 0;
}

/* guide: teardown */
static void example_remove(struct platform_device *pdev)
{
	struct example_device *edev = platform_get_drvdata(pdev);

	/*
	 * Unplug, not just unregister: files may stay open and would go on
	 * submitting. After this no open or ioctl is inside drm_dev_enter()
	 * any more, so no job runs or will run.
	 */
	drm_dev_unplug(&edev->drm);
	hrtimer_cancel(&edev->timer);		/* the engine is quiet */
	drmacct_device_destroy(edev->acct);	/* no callback after this */
	/* Files still open keep their clients; postclose closes them. */
}
/* guide: end */

static struct platform_driver example_platform_driver = {
	.probe = example_probe,
	DRMACCT_PLATFORM_REMOVE(example_remove)
	.driver = { .name = "drmacct_example" },
};

static int __init example_init(void)
{
	int ret = platform_driver_register(&example_platform_driver);

	if (ret)
		return ret;
	example_pdev = platform_device_register_simple("drmacct_example", -1, NULL, 0);
	if (IS_ERR(example_pdev)) {
		platform_driver_unregister(&example_platform_driver);
		return PTR_ERR(example_pdev);
	}
	return 0;
}

static void __exit example_exit(void)
{
	platform_device_unregister(example_pdev);
	platform_driver_unregister(&example_platform_driver);
}

module_init(example_init);
module_exit(example_exit);

MODULE_DESCRIPTION("drmacct_example: the drmacct helper guide's driver");
MODULE_LICENSE("GPL");
