// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu — a simulated DRM render device for drmacct.
 *
 * A platform device with a render node, four engine classes on drm_sched,
 * GEM shmem buffers, and per-client usage statistics through drmacct.
 * With pci=1 it also drives QEMU's "edu" PCI device, so that the PCI-only
 * parts of the usage stats (drm-pdev) are exercised on a real PCI device.
 * See Documentation/simgpu.rst.
 */
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>

#include <uapi/drm/simgpu_drm.h>

#include "simgpu.h"

#define DRIVER_NAME	"simgpu"

static bool accounting = true;
module_param(accounting, bool, 0444);
MODULE_PARM_DESC(accounting,
		 "Use the drmacct helper (default 1); 0 prints no usage stats at all");

static bool legacy_memory;
module_param(legacy_memory, bool, 0444);
MODULE_PARM_DESC(legacy_memory,
		 "Also print the legacy drm-memory-<region> key (default 0)");

static bool pci;
module_param(pci, bool, 0444);
MODULE_PARM_DESC(pci,
		 "Also drive QEMU's edu PCI device (1234:11e8) as a simgpu (default 0)");

static unsigned int job_timeout_ms = 1000;
module_param(job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "Scheduler job timeout in ms (default 1000; 0 none): a job submitted with SIMGPU_SUBMIT_HANG is reset after it");

long simgpu_job_timeout = MAX_SCHEDULE_TIMEOUT;

static unsigned int max_pinned_mb = 512;
module_param(max_pinned_mb, uint, 0444);
MODULE_PARM_DESC(max_pinned_mb,
		 "MiB of buffer pages one open file may keep pinned (default 512): a GEM_CREATE past it fails with ENOSPC");
u64 simgpu_max_pinned;

unsigned int simgpu_max_client_queues = 64;
module_param_named(max_client_queues, simgpu_max_client_queues, uint, 0444);
MODULE_PARM_DESC(max_client_queues,
		 "With queues=per_client, files of one device that may have their own schedulers at once (default 64): another open fails with ENOSPC");

/* queues=shared|per_client: who owns the drm_gpu_schedulers. */
static const char * const simgpu_queues_names[] = { "shared", "per_client" };
bool simgpu_per_client_queues;

static int simgpu_queues_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(simgpu_queues_names, val);

	if (i < 0)
		return -EINVAL;
	simgpu_per_client_queues = i == 1;
	return 0;
}

static int simgpu_queues_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", simgpu_queues_names[simgpu_per_client_queues]);
}

static const struct kernel_param_ops simgpu_queues_ops = {
	.set = simgpu_queues_set,
	.get = simgpu_queues_get,
};
module_param_cb(queues, &simgpu_queues_ops, NULL, 0444);
MODULE_PARM_DESC(queues,
		 "shared (default): one drm_gpu_scheduler per engine instance; per_client: each open file gets its own per instance, created at open and torn down at close");

/*
 * stats=full|core: core prints only the keys the DRM core prints for a
 * driver that hooks drm_show_fdinfo() without stats of its own.
 */
static const char * const simgpu_stats_names[] = { "full", "core" };
static bool simgpu_stats_core;

static int simgpu_stats_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(simgpu_stats_names, val);

	if (i < 0)
		return -EINVAL;
	simgpu_stats_core = i == 1;
	return 0;
}

static int simgpu_stats_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", simgpu_stats_names[simgpu_stats_core]);
}

static const struct kernel_param_ops simgpu_stats_ops = {
	.set = simgpu_stats_set,
	.get = simgpu_stats_get,
};
module_param_cb(stats, &simgpu_stats_ops, NULL, 0444);
MODULE_PARM_DESC(stats,
		 "full (default): the drmacct helper's usage stats; core: the core keys only (drm-driver, drm-client-id, drm-pdev on PCI), what the DRM core prints on 6.5+ for a driver without stats of its own (simgpu prints them itself before 6.5); needs accounting=1");

static struct platform_device *simgpu_pdev;

/*
 * Objects alive across all devices, and jobs freed since the module
 * loaded after running or dropped before they ran, for debugfs
 * simgpu/objects.
 */
atomic_t simgpu_live_results = ATOMIC_INIT(0);
atomic_t simgpu_live_jobs = ATOMIC_INIT(0);
atomic64_t simgpu_jobs_ran = ATOMIC64_INIT(0);
atomic64_t simgpu_jobs_dropped = ATOMIC64_INIT(0);
static struct dentry *simgpu_debugfs;

static int simgpu_objects_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "results %d\njobs %d\nran %lld\ndropped %lld\n",
		   atomic_read(&simgpu_live_results), atomic_read(&simgpu_live_jobs),
		   (long long)atomic64_read(&simgpu_jobs_ran),
		   (long long)atomic64_read(&simgpu_jobs_dropped));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(simgpu_objects);

static void simgpu_file_release(struct kref *ref)
{
	struct simgpu_file *sfile = container_of(ref, struct simgpu_file, ref);
	struct simgpu_result *result;
	unsigned long id;

	/* No job is left: every result is only the table's now. */
	xa_for_each(&sfile->results, id, result)
		simgpu_result_put(result);
	xa_destroy(&sfile->results);
	mutex_destroy(&sfile->results_lock);
	mutex_destroy(&sfile->submit_lock);
	kfree(sfile);
}

/**
 * simgpu_file_put() - drop a reference to a file's private state
 * @sfile: the state; jobs and the open file each hold one
 */
void simgpu_file_put(struct simgpu_file *sfile)
{
	kref_put(&sfile->ref, simgpu_file_release);
}

/* simgpu_open(), inside drm_dev_enter(). */
static int simgpu_open_entered(struct simgpu_device *sdev, struct drm_file *file)
{
	struct simgpu_file *sfile;
	int ret;

	sfile = kzalloc(sizeof(*sfile), GFP_KERNEL);
	if (!sfile)
		return -ENOMEM;
	kref_init(&sfile->ref);
	sfile->sdev = sdev;
	mutex_init(&sfile->submit_lock);
	mutex_init(&sfile->results_lock);
	xa_init_flags(&sfile->results, XA_FLAGS_ALLOC1);
	spin_lock_init(&sfile->done_lock);
	INIT_LIST_HEAD(&sfile->done);
	atomic_set(&sfile->inflight, 0);
	atomic_set(&sfile->queued, 0);
	atomic64_set(&sfile->pinned, 0);
	init_completion(&sfile->torn_down);
	INIT_WORK(&sfile->queues_work, simgpu_file_queues_work);

	if (sdev->acct) {
		sfile->acct = drmacct_client_open(sdev->acct, file);
		if (IS_ERR(sfile->acct)) {
			ret = PTR_ERR(sfile->acct);
			goto err_free;
		}
	}
	ret = simgpu_file_queues_init(sfile);
	if (ret)
		goto err_acct;
	ret = simgpu_file_entities_init(sfile);
	if (ret)
		goto err_queues;

	mutex_lock(&sdev->files_lock);
	list_add_tail(&sfile->dev_node, &sdev->files);
	mutex_unlock(&sdev->files_lock);
	if (simgpu_fault_active())
		simgpu_fault_open(sfile);
	file->driver_priv = sfile;
	return 0;

err_queues:
	simgpu_file_queues_free(sfile);
err_acct:
	drmacct_client_close(sfile->acct);
err_free:
	mutex_destroy(&sfile->results_lock);
	mutex_destroy(&sfile->submit_lock);
	kfree(sfile);
	return ret;
}

/*
 * Inside drm_dev_enter(): an open racing an unplug either finishes before
 * the unplug looks at the open files (drm_dev_unplug() waits for it), so
 * the unplug tears its entities down too, or fails with ENODEV; it never
 * sets up entities on schedulers that are going away.
 */
static int simgpu_open(struct drm_device *drm, struct drm_file *file)
{
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = simgpu_open_entered(to_simgpu(drm), file);
	drm_dev_exit(idx);
	return ret;
}

/*
 * Claims the teardown of @sfile's entities for the caller, unless a close
 * or an unplug did so first. Wakes a close waiting in simgpu_flush().
 */
static bool simgpu_file_claim(struct simgpu_device *sdev, struct simgpu_file *sfile,
			      bool unplug)
{
	bool claim;

	mutex_lock(&sdev->files_lock);
	claim = !sfile->entities_gone;
	sfile->entities_gone = true;
	if (unplug)
		sfile->unplug_seen = true;
	mutex_unlock(&sdev->files_lock);
	wake_up_all(&sdev->flush_wq);
	return claim;
}

/*
 * The teardown itself, by whoever claimed it: the entities go (queued jobs
 * dropped), the file's own schedulers follow its last job. Never waits for
 * the hardware, and holds no lock another close, open or unplug needs.
 */
static void simgpu_file_teardown(struct simgpu_file *sfile)
{
	simgpu_file_entities_fini(sfile);
	simgpu_file_queues_release(sfile);
	complete_all(&sfile->torn_down);
}

/*
 * Whether the closing task was killed: a fatal signal pending (a close
 * inside a killed process's syscall), or an exit by SIGKILL -- by the time
 * exit closes the files, the thread that took the signal has dequeued it,
 * and only its exit code tells.
 */
static bool simgpu_current_killed(void)
{
	return fatal_signal_pending(current) ||
	       ((current->flags & PF_EXITING) && (current->exit_code & 0x7f) == SIGKILL);
}

/**
 * simgpu_flush() - file_operations.flush: a close(2) of a simgpu fd
 * @f: the file
 * @id: the closing owner (unused)
 *
 * A process that closes its file cleanly gets the jobs it queued run, as
 * with any GPU driver: the close waits until the scheduler has handed them
 * all to the engines (it does not wait for them to finish). The wait holds
 * no lock, a fatal signal ends it (a killed process -- a fatal signal
 * pending, or exiting by SIGKILL -- does not wait at all: its queued jobs
 * are dropped when the file is released), and so
 * does an unplug, which tears the file's entities down. Like amdgpu's
 * flush, it runs for every close of a descriptor of the file.
 *
 * Return: 0 (a close is never refused).
 */
int simgpu_flush(struct file *f, fl_owner_t id)
{
	struct drm_file *file = f->private_data;
	struct simgpu_file *sfile = file ? file->driver_priv : NULL;
	struct simgpu_device *sdev;

	if (!sfile || simgpu_current_killed())
		return 0;
	sdev = sfile->sdev;
	wait_event_killable(sdev->flush_wq, !atomic_read(&sfile->queued) ||
			    READ_ONCE(sfile->entities_gone));
	return 0;
}

/*
 * The file's last reference went (in whatever task dropped it: the
 * closing process, or a reader of its fdinfo). Only the fast teardown:
 * nothing here waits for a job, and files_lock is held only to claim the
 * teardown and to leave the device's list.
 */
static void simgpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct simgpu_file *sfile = file->driver_priv;
	struct simgpu_device *sdev = to_simgpu(drm);

	if (simgpu_file_claim(sdev, sfile, false))
		simgpu_file_teardown(sfile);
	else
		wait_for_completion(&sfile->torn_down);	/* an unplug's, short */
	mutex_lock(&sdev->files_lock);
	list_del(&sfile->dev_node);
	mutex_unlock(&sdev->files_lock);
	if (simgpu_fault_active())
		simgpu_fault_close(sfile);
	/* Running jobs hold their own client and file references. */
	drmacct_client_close(sfile->acct);
	sfile->acct = NULL;
	file->driver_priv = NULL;
	simgpu_file_put(sfile);
}

static int simgpu_ioctl_query_device(struct drm_device *drm, void *data,
				     struct drm_file *file)
{
	struct simgpu_device *sdev = to_simgpu(drm);
	struct simgpu_file *sfile = file->driver_priv;
	struct drm_simgpu_query_device *args = data;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(args->reserved); i++)
		if (args->reserved[i])
			return -EINVAL;

	args->num_engines = SIMGPU_NUM_ENGINES;
	args->flags = 0;
	if (sdev->acct) {
		args->flags |= SIMGPU_DEVICE_ACCOUNTING;
		if (sdev->legacy_memory)
			args->flags |= SIMGPU_DEVICE_LEGACY_MEMORY;
	}
	args->client_id = sfile->acct ? drmacct_client_id(sfile->acct) : 0;
	args->now_ns = ktime_get_ns();
	return 0;
}

static int simgpu_ioctl_query_engine(struct drm_device *drm, void *data,
				     struct drm_file *file)
{
	struct simgpu_device *sdev = to_simgpu(drm);
	struct drm_simgpu_query_engine *args = data;
	const struct simgpu_engine_info *ei;
	unsigned int i;

	if (args->pad)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(args->reserved); i++)
		if (args->reserved[i])
			return -EINVAL;
	if (args->engine >= SIMGPU_NUM_ENGINES)
		return -EINVAL;

	ei = &simgpu_engines[args->engine];
	args->capacity = ei->capacity;
	args->flags = ei->total_cycles ? SIMGPU_ENGINE_TOTAL_CYCLES : 0;
	args->max_freq_hz = (u64)ei->max_mhz * 1000000;
	args->min_freq_hz = (u64)ei->min_mhz * 1000000;
	args->cur_freq_hz = simgpu_engine_cur_mhz(&sdev->inst[args->engine][0]) *
			    1000000;
	args->total_cycles = simgpu_engine_total_cycles(sdev, args->engine);
	memset(args->name, 0, sizeof(args->name));
	strscpy(args->name, ei->name, sizeof(args->name));
	return 0;
}

static int simgpu_ioctl_set_client_name(struct drm_device *drm, void *data,
					struct drm_file *file)
{
	struct simgpu_file *sfile = file->driver_priv;
	struct drm_simgpu_set_client_name *args = data;
	char name[SIMGPU_CLIENT_NAME_MAX];
	u32 i;

	if (args->pad || args->len > SIMGPU_CLIENT_NAME_MAX)
		return -EINVAL;
	if (args->len &&
	    copy_from_user(name, u64_to_user_ptr(args->name), args->len))
		return -EFAULT;
	for (i = 0; i < args->len; i++)
		if (!isgraph(name[i]))
			return -EINVAL;
	/* Where the DRM core names files, DRM_IOCTL_SET_CLIENT_NAME does. */
	if (DRMACCT_CORE_OWNS_CLIENT_NAME)
		return -EOPNOTSUPP;
	if (!sfile->acct)
		return 0;	/* valid, but nobody prints it */
	return drmacct_client_set_name(sfile->acct, name, args->len);
}

/* Only with accounting: without, simgpu has no fdinfo support at all. */
void simgpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct simgpu_file *sfile = file->driver_priv;
	struct drmacct_mem_stats mem;

	if (!sfile || !sfile->acct)
		return;
	simgpu_gem_mem_stats(file, &mem);
	drmacct_show_fdinfo(sfile->acct, p, &mem);
}
DRMACCT_DEFINE_SHOW_FDINFO(simgpu_show_fdinfo)

/*
 * Every ioctl runs inside drm_dev_enter(): after a hot-unplug they all fail
 * with -ENODEV, and the device's teardown waits for those in progress. The
 * ones that may sleep for a long time (WAIT, GEM_WAIT, SUBMIT at its
 * in-flight limit) do their waiting outside it, so an unplug never waits
 * for them; what they wait for ends with the teardown.
 */
#define SIMGPU_GUARDED(fn)						\
static int fn##_guarded(struct drm_device *drm, void *data,		\
			struct drm_file *file)				\
{									\
	int idx, ret;							\
									\
	if (!drm_dev_enter(drm, &idx))					\
		return -ENODEV;						\
	ret = fn(drm, data, file);					\
	drm_dev_exit(idx);						\
	return ret;							\
}

SIMGPU_GUARDED(simgpu_ioctl_query_device)
SIMGPU_GUARDED(simgpu_ioctl_query_engine)
SIMGPU_GUARDED(simgpu_ioctl_set_client_name)
SIMGPU_GUARDED(simgpu_ioctl_gem_create)
SIMGPU_GUARDED(simgpu_ioctl_gem_madvise)
SIMGPU_GUARDED(simgpu_ioctl_gem_info)

static const struct drm_ioctl_desc simgpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(SIMGPU_QUERY_DEVICE, simgpu_ioctl_query_device_guarded,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_QUERY_ENGINE, simgpu_ioctl_query_engine_guarded,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_SET_CLIENT_NAME, simgpu_ioctl_set_client_name_guarded,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_GEM_CREATE, simgpu_ioctl_gem_create_guarded,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_GEM_MADVISE, simgpu_ioctl_gem_madvise_guarded,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_SUBMIT, simgpu_ioctl_submit, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_WAIT, simgpu_ioctl_wait, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_GEM_INFO, simgpu_ioctl_gem_info_guarded,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(SIMGPU_GEM_WAIT, simgpu_ioctl_gem_wait,
			  DRM_RENDER_ALLOW),
};

static const struct file_operations simgpu_fops = {
	SIMGPU_FOPS_COMMON,
	DRMACCT_FOPS_SHOW_FDINFO(simgpu_show_fdinfo)
};

/* accounting=0: a driver without usage stats prints no fdinfo at all. */
static const struct file_operations simgpu_fops_plain = {
	SIMGPU_FOPS_COMMON,
};

/*
 * stats=core: the DRM core's keys and none of the driver's. Where the core
 * owns fdinfo that is drm_show_fdinfo() with no drm_driver.show_fdinfo;
 * before, simgpu prints what the core would, with the helper's client id.
 */
#ifdef DRMACCT_HAVE_DRM_SHOW_FDINFO
static const struct file_operations simgpu_fops_core = {
	.owner = THIS_MODULE,
	DRM_GEM_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};
#else
static void simgpu_show_fdinfo_core(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct simgpu_file *sfile = file->driver_priv;
	struct drm_device *drm = file->minor->dev;

	if (!sfile || !sfile->acct)
		return;
	seq_printf(m, "drm-driver:\t%s\n", drm->driver->name);
	seq_printf(m, "drm-client-id:\t%llu\n", drmacct_client_id(sfile->acct));
	if (dev_is_pci(drm->dev))
		seq_printf(m, "drm-pdev:\t%s\n", pci_name(to_pci_dev(drm->dev)));
}

static const struct file_operations simgpu_fops_core = {
	.owner = THIS_MODULE,
	DRM_GEM_FOPS,
	.show_fdinfo = simgpu_show_fdinfo_core,
};
#endif

/*
 * No .gem_prime_import_sg_table: only objects of this device can be
 * imported (drm_gem_prime_import() takes the self-import shortcut for
 * those and refuses foreign buffers with -EINVAL).
 */
#define SIMGPU_DRM_DRIVER_COMMON					\
	.driver_features = DRIVER_GEM | DRIVER_RENDER,			\
	.open = simgpu_open,						\
	.postclose = simgpu_postclose,					\
	.gem_create_object = simgpu_gem_create_object,			\
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,		\
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,		\
	DRMACCT_DRIVER_GEM_PRIME_MMAP					\
	.ioctls = simgpu_ioctls,					\
	.num_ioctls = ARRAY_SIZE(simgpu_ioctls),			\
	.name = DRIVER_NAME,						\
	.desc = "simulated GPU for drmacct",				\
	DRMACCT_DRIVER_DATE("20250101")					\
	.major = 1,							\
	.minor = 0

static const struct drm_driver simgpu_drm_driver = {
	SIMGPU_DRM_DRIVER_COMMON,
	.fops = &simgpu_fops,
	DRMACCT_DRIVER_SHOW_FDINFO(simgpu_show_fdinfo)
};

/* fault=<name>: fdinfo through simgpu_fault.c, which breaks one rule. */
static const struct drm_driver simgpu_drm_driver_fault = {
	SIMGPU_DRM_DRIVER_COMMON,
	.fops = &simgpu_fault_fops,
};

static const struct drm_driver simgpu_drm_driver_plain = {
	SIMGPU_DRM_DRIVER_COMMON,
	.fops = &simgpu_fops_plain,
};

static const struct drm_driver simgpu_drm_driver_core = {
	SIMGPU_DRM_DRIVER_COMMON,
	.fops = &simgpu_fops_core,
};

static u64 simgpu_acct_total_cycles(void *priv, unsigned int engine)
{
	return simgpu_engine_total_cycles(priv, engine);
}

static int simgpu_acct_init(struct simgpu_device *sdev)
{
	static const char * const regions[] = { "system" };
	struct drmacct_engine_desc engines[SIMGPU_NUM_ENGINES];
	struct drmacct_device_desc desc = {
		.driver_name = DRIVER_NAME,
		.dev = sdev->drm.dev,
		.engines = engines,
		.num_engines = SIMGPU_NUM_ENGINES,
		.regions = regions,
		.num_regions = ARRAY_SIZE(regions),
		.mem_keys = DRMACCT_MEM_KEYS_ALL,
		.flags = sdev->legacy_memory ? DRMACCT_DEVICE_LEGACY_MEMORY : 0,
		.priv = sdev,
	};
	unsigned int e;

	for (e = 0; e < SIMGPU_NUM_ENGINES; e++) {
		const struct simgpu_engine_info *ei = &simgpu_engines[e];

		engines[e] = (struct drmacct_engine_desc) {
			.name = ei->name,
			.flags = DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES,
			.capacity = ei->capacity,
			.max_freq_hz = ei->total_cycles ? 0 :
				       (u64)ei->max_mhz * 1000000,
			.total_cycles = ei->total_cycles ?
					simgpu_acct_total_cycles : NULL,
		};
	}
	sdev->acct = drmacct_device_create(&desc);
	if (IS_ERR(sdev->acct)) {
		int ret = PTR_ERR(sdev->acct);

		sdev->acct = NULL;
		return ret;
	}
	return 0;
}

/*
 * Creates and registers a simgpu on @parent (platform or PCI device) and
 * makes it @parent's driver data.
 */
static int simgpu_device_create(struct device *parent)
{
	struct simgpu_device *sdev;
	int ret;

	if (simgpu_stats_core && !accounting)
		return -EINVAL;	/* the client id comes from the helper before 6.5 */
	ret = dma_coerce_mask_and_coherent(parent, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	sdev = devm_drm_dev_alloc(parent, !accounting ? &simgpu_drm_driver_plain :
				  simgpu_fault_active() ? &simgpu_drm_driver_fault :
				  simgpu_stats_core ? &simgpu_drm_driver_core :
				  &simgpu_drm_driver, struct simgpu_device, drm);
	if (IS_ERR(sdev))
		return PTR_ERR(sdev);
	sdev->legacy_memory = legacy_memory;
	sdev->per_client_queues = simgpu_per_client_queues;
	mutex_init(&sdev->files_lock);
	INIT_LIST_HEAD(&sdev->files);
	spin_lock_init(&sdev->jobs_lock);
	sdev->jobs = 0;
	init_waitqueue_head(&sdev->jobs_wq);
	init_waitqueue_head(&sdev->done_wq);
	init_waitqueue_head(&sdev->flush_wq);
	atomic_set(&sdev->client_queues, 0);

	/* They signal fences, so memory reclaim may wait for them. */
	sdev->wq = alloc_workqueue("simgpu", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!sdev->wq)
		return -ENOMEM;
	sdev->sched_wq = alloc_workqueue("simgpu-sched", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!sdev->sched_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = simgpu_engines_init(sdev);
	if (ret)
		goto err_sched_wq;
	if (accounting) {
		ret = simgpu_acct_init(sdev);
		if (ret)
			goto err_engines;
	}
	ret = drm_dev_register(&sdev->drm, 0);
	if (ret)
		goto err_acct;
	dev_set_drvdata(parent, sdev);
	return 0;

err_acct:
	drmacct_device_destroy(sdev->acct);
err_engines:
	simgpu_engines_fini(sdev);
err_sched_wq:
	destroy_workqueue(sdev->sched_wq);
err_wq:
	destroy_workqueue(sdev->wq);
	return ret;
}

/*
 * Unregisters the simgpu of @parent; the DRM device itself is freed with
 * @parent's devres.
 */
static void simgpu_device_destroy(struct device *parent)
{
	struct simgpu_device *sdev = dev_get_drvdata(parent);
	struct simgpu_file *sfile;
	unsigned int e, i;

	/*
	 * Unplug: no new ioctl or open gets in, and every one in progress has
	 * left (the long waits are outside drm_dev_enter()). Files may stay
	 * open.
	 */
	drm_dev_unplug(&sdev->drm);
	/*
	 * Every open file's entities go, their queued jobs with them; a close
	 * that claimed a file's teardown first is waited for (it is short).
	 * files_lock is only held to pick the next file, never across a wait.
	 */
	for (;;) {
		bool found = false;

		mutex_lock(&sdev->files_lock);
		list_for_each_entry(sfile, &sdev->files, dev_node) {
			if (!sfile->unplug_seen) {
				kref_get(&sfile->ref);
				found = true;
				break;
			}
		}
		mutex_unlock(&sdev->files_lock);
		if (!found)
			break;
		if (simgpu_file_claim(sdev, sfile, true))
			simgpu_file_teardown(sfile);
		else
			wait_for_completion(&sfile->torn_down);
		simgpu_file_put(sfile);
	}
	/* A hung job would only end at the timeout, or never: reset it now. */
	for (e = 0; e < SIMGPU_NUM_ENGINES; e++)
		for (i = 0; i < simgpu_engines[e].capacity; i++)
			simgpu_engine_reset(&sdev->inst[e][i]);
	/* The jobs already on the engines finish: wait for them. */
	spin_lock_irq(&sdev->jobs_lock);
	wait_event_lock_irq(sdev->jobs_wq, !sdev->jobs, sdev->jobs_lock);
	spin_unlock_irq(&sdev->jobs_lock);
	/* The files' own schedulers went after their last jobs (sdev->wq). */
	flush_workqueue(sdev->wq);
	simgpu_engines_fini(sdev);
	destroy_workqueue(sdev->sched_wq);
	destroy_workqueue(sdev->wq);
	drmacct_device_destroy(sdev->acct);
	sdev->acct = NULL;
}

static int simgpu_probe(struct platform_device *pdev)
{
	return simgpu_device_create(&pdev->dev);
}

static void simgpu_remove(struct platform_device *pdev)
{
	simgpu_device_destroy(&pdev->dev);
}

static struct platform_driver simgpu_platform_driver = {
	.probe = simgpu_probe,
	DRMACCT_PLATFORM_REMOVE(simgpu_remove)
	.driver = {
		.name = DRIVER_NAME,
	},
};

/*
 * QEMU's "edu" educational device. simgpu uses none of its registers: it
 * only needs a PCI parent. No MODULE_DEVICE_TABLE, so that the device never
 * loads simgpu by itself; pci=1 asks for it.
 */
static const struct pci_device_id simgpu_pci_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8) },
	{ }
};

static int simgpu_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret = pcim_enable_device(pdev);

	return ret ? ret : simgpu_device_create(&pdev->dev);
}

static void simgpu_pci_remove(struct pci_dev *pdev)
{
	simgpu_device_destroy(&pdev->dev);
}

static struct pci_driver simgpu_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = simgpu_pci_ids,
	.probe = simgpu_pci_probe,
	.remove = simgpu_pci_remove,
};

static int __init simgpu_init(void)
{
	int ret;

	if (job_timeout_ms)
		simgpu_job_timeout = msecs_to_jiffies(job_timeout_ms);
	simgpu_max_pinned = (u64)max_pinned_mb << 20;
	simgpu_debugfs = debugfs_create_dir("simgpu", NULL);
	debugfs_create_file("objects", 0444, simgpu_debugfs, NULL, &simgpu_objects_fops);
	ret = platform_driver_register(&simgpu_platform_driver);
	if (ret)
		goto err_debugfs;
	simgpu_pdev = platform_device_register_simple(DRIVER_NAME, -1, NULL, 0);
	if (IS_ERR(simgpu_pdev)) {
		ret = PTR_ERR(simgpu_pdev);
		goto err_driver;
	}
	if (!platform_get_drvdata(simgpu_pdev)) {
		/* probe failed; the reason is in the kernel log */
		ret = -ENODEV;
		goto err_device;
	}
	if (pci) {
		/* No edu device is not an error: nothing binds. */
		ret = pci_register_driver(&simgpu_pci_driver);
		if (ret)
			goto err_device;
	}
	return 0;

err_device:
	platform_device_unregister(simgpu_pdev);
err_driver:
	platform_driver_unregister(&simgpu_platform_driver);
err_debugfs:
	debugfs_remove_recursive(simgpu_debugfs);
	return ret;
}

static void __exit simgpu_exit(void)
{
	if (pci)
		pci_unregister_driver(&simgpu_pci_driver);
	platform_device_unregister(simgpu_pdev);
	platform_driver_unregister(&simgpu_platform_driver);
	debugfs_remove_recursive(simgpu_debugfs);
}

module_init(simgpu_init);
module_exit(simgpu_exit);

MODULE_DESCRIPTION("simgpu: simulated DRM render device for drmacct");
MODULE_LICENSE("GPL");
