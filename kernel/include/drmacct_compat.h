/* SPDX-License-Identifier: GPL-2.0 */
/*
 * drmacct_compat.h — every kernel difference drmacct and simgpu care about,
 * in one place.
 *
 * Targets: Debian's 6.1 and 6.12 LTS kernels, Linux 7.3 (Debian's source),
 * and upstream's shape in between. Nothing here looks at the version
 * number: Debian backports features (6.1 has struct drm_sched_init_args,
 * 6.12 the five-argument drm_sched_job_init() with a client id), so
 * kernel/compat-probe.sh reads the headers of the kernel being built for
 * and passes what it finds as -DDRMACCT_HAVE_* / -DDRMACCT_*_NARGS flags.
 * A probe that recognises no known form passes its name in
 * DRMACCT_PROBE_FAILED, which stops the build here, naming it.
 *
 * What differs (Documentation/drmacct-helper.rst has the driver's view):
 * - DRM core fdinfo (upstream 6.5): drm_show_fdinfo() prints drm-driver,
 *   drm-client-id and drm-pdev, then calls drm_driver.show_fdinfo(printer,
 *   file); struct drm_file has the client_id it prints. Before, the driver
 *   prints everything from file_operations.show_fdinfo.
 * - drm-client-name (6.13): the DRM core keeps drm_file.client_name, set
 *   by DRM_IOCTL_SET_CLIENT_NAME, and prints it; the helper then never
 *   prints one of its own.
 * - drm_driver.date (gone in 6.14).
 * - Tracing (6.10): __assign_str(field) takes the source from __string().
 * - drm_driver.gem_prime_mmap (gone in 6.6).
 * - platform_driver.remove returns void (6.11; .remove_new before).
 * - shmem helpers lock with the object's dma_resv (6.5) instead of their
 *   own pages_lock: drm_gem_shmem_madvise() then wants the caller to hold
 *   it; from 6.16 that one is drm_gem_shmem_madvise_locked(), and the
 *   unsuffixed one is exported for KUnit only.
 * - drm_sched_init(): positional (9 or 11 arguments) or struct
 *   drm_sched_init_args (upstream 6.15), which needs num_rqs where it has it.
 * - drm_sched_job_init(): 3 arguments, + credits (6.7), + the DRM client id
 *   (6.17; Debian 6.12 as a backport).
 * - drm_sched_start(): + bool full_recovery (before 6.11), none (6.11,
 *   6.12), + int errno (6.13).
 * - hrtimer_setup() replaces hrtimer_init() + setting .function (6.13).
 * - timedout_job() returns DRM_GPU_SCHED_STAT_NOMINAL before 6.17; since,
 *   RESET or NO_HANG, and on NO_HANG the scheduler puts the job back on its
 *   pending list itself, so recovery needs no drm_sched_stop() /
 *   drm_sched_resubmit_jobs() (deprecated) / drm_sched_start() any more.
 * - KUnit: whether the kernel has it at all is its config's choice
 *   (CONFIG_KUNIT, kernel/compat.mk builds drmacct_kunit.ko only then);
 *   KUNIT_CASE_SLOW() (6.6) marks a case of a second or more.
 */
#ifndef _DRMACCT_COMPAT_H_
#define _DRMACCT_COMPAT_H_

/*
 * A probe of kernel/compat-probe.sh found no form it knows (a kernel newer
 * than drmacct, or a header it misreads): stop rather than guess, before
 * any kernel header, so this is the first error the build shows.
 */
#ifdef DRMACCT_PROBE_FAILED
#define DRMACCT_COMPAT_STR2(x)	#x
#define DRMACCT_COMPAT_STR(x)	DRMACCT_COMPAT_STR2(x)
_Static_assert(0, "drmacct: kernel/compat-probe.sh recognised no known form of: "
	       DRMACCT_COMPAT_STR(DRMACCT_PROBE_FAILED)
	       " (run it on this kernel's build dir for the details)");
#endif

#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/seq_file.h>
#include <linux/types.h>

#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_print.h>
#include <drm/gpu_scheduler.h>

/* ---- DRM core fdinfo and client ids -------------------------------------- */

#ifdef DRMACCT_HAVE_DRM_SHOW_FDINFO
/* The DRM core prints drm-driver, drm-pdev and drm-client-id. */
#define DRMACCT_CORE_PRINTS_IDS		1
#else
#define DRMACCT_CORE_PRINTS_IDS		0
#endif

#if defined(DRMACCT_HAVE_DRM_SHOW_FDINFO) && !defined(DRMACCT_HAVE_DRM_FILE_CLIENT_ID)
#error "drmacct: drm_show_fdinfo() without drm_file.client_id is not a known kernel"
#endif

#ifdef DRMACCT_HAVE_DRM_FILE_CLIENT_NAME
/* The DRM core owns drm-client-name (DRM_IOCTL_SET_CLIENT_NAME). */
#define DRMACCT_CORE_OWNS_CLIENT_NAME	1
#else
#define DRMACCT_CORE_OWNS_CLIENT_NAME	0
#endif

/**
 * drmacct_compat_file_client_id() - the DRM core's client id of a file
 * @file: the DRM file
 * @id: set to the id when the core has one
 *
 * Return: true when the core assigns client ids (and prints them as
 * drm-client-id), false when the helper must assign its own.
 */
static inline bool drmacct_compat_file_client_id(const struct drm_file *file,
						 u64 *id)
{
#ifdef DRMACCT_HAVE_DRM_FILE_CLIENT_ID
	*id = file->client_id;
	return true;
#else
	return false;
#endif
}

/*
 * A driver prints its usage stats from one function,
 *	void fn(struct drm_printer *p, struct drm_file *file);
 * and hooks it up with three macros, each used without a following comma:
 *	DRMACCT_DEFINE_SHOW_FDINFO(fn)		after fn, at file scope
 *	DRMACCT_FOPS_SHOW_FDINFO(fn)		in its struct file_operations
 *	DRMACCT_DRIVER_SHOW_FDINFO(fn)		in its struct drm_driver
 * Where the core owns fdinfo, the file operation is drm_show_fdinfo() and fn
 * is drm_driver.show_fdinfo; before, a file operation wraps fn in a seq_file
 * printer and the helper also prints the keys the core would.
 */
#ifdef DRMACCT_HAVE_DRM_SHOW_FDINFO
#define DRMACCT_DEFINE_SHOW_FDINFO(fn)
#define DRMACCT_FOPS_SHOW_FDINFO(fn)	.show_fdinfo = drm_show_fdinfo,
#define DRMACCT_DRIVER_SHOW_FDINFO(fn)	.show_fdinfo = (fn),
#else
#define DRMACCT_DEFINE_SHOW_FDINFO(fn)					\
static void fn##_fops(struct seq_file *m, struct file *f)		\
{									\
	struct drm_printer p = drm_seq_file_printer(m);			\
									\
	fn(&p, f->private_data);					\
}
#define DRMACCT_FOPS_SHOW_FDINFO(fn)	.show_fdinfo = fn##_fops,
#define DRMACCT_DRIVER_SHOW_FDINFO(fn)
#endif

/* ---- timers ---------------------------------------------------------------- */

/**
 * drmacct_compat_hrtimer_setup() - initialise an hrtimer with its function
 * @timer: the timer
 * @fn: its callback
 * @clock: the clock it runs on
 * @mode: its mode
 */
static inline void drmacct_compat_hrtimer_setup(struct hrtimer *timer,
						enum hrtimer_restart (*fn)(struct hrtimer *),
						clockid_t clock, enum hrtimer_mode mode)
{
#ifdef DRMACCT_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

/* ---- tracing -------------------------------------------------------------- */

#ifdef DRMACCT_HAVE_ASSIGN_STR_ONE_ARG
#define DRMACCT_ASSIGN_STR(field, src)	__assign_str(field)
#else
#define DRMACCT_ASSIGN_STR(field, src)	__assign_str(field, src)
#endif

/* ---- drm_driver and platform_driver members -------------------------------- */

#ifdef DRMACCT_HAVE_GEM_PRIME_MMAP
#define DRMACCT_DRIVER_GEM_PRIME_MMAP	.gem_prime_mmap = drm_gem_prime_mmap,
#else
#define DRMACCT_DRIVER_GEM_PRIME_MMAP
#endif

/* drm_driver member .date = (d), where it still exists (before 6.14) */
#ifdef DRMACCT_HAVE_DRIVER_DATE
#define DRMACCT_DRIVER_DATE(d)		.date = (d),
#else
#define DRMACCT_DRIVER_DATE(d)
#endif

/* platform_driver member for a remove callback that returns void */
#ifndef DRMACCT_HAVE_PLATFORM_REMOVE_INT
#define DRMACCT_PLATFORM_REMOVE(fn)	.remove = (fn),
#elif defined(DRMACCT_HAVE_PLATFORM_REMOVE_NEW)
#define DRMACCT_PLATFORM_REMOVE(fn)	.remove_new = (fn),
#else
#error "drmacct: platform_driver has an int remove() and no remove_new()"
#endif

/* ---- shmem helpers ---------------------------------------------------------- */

/**
 * drmacct_compat_shmem_madvise() - drm_gem_shmem_madvise() with the
 *	locking the kernel's shmem helpers expect
 * @shmem: the object
 * @madv: new advice (0 needed, > 0 purgeable)
 *
 * Context: process context, may sleep.
 * Return: true while the object's backing store exists (not purged).
 */
static inline bool drmacct_compat_shmem_madvise(struct drm_gem_shmem_object *shmem,
						int madv)
{
#ifdef DRMACCT_HAVE_SHMEM_PAGES_LOCK
	return drm_gem_shmem_madvise(shmem, madv);
#else
	int ret;

	dma_resv_lock(shmem->base.resv, NULL);
#ifdef DRMACCT_HAVE_SHMEM_MADVISE_LOCKED
	ret = drm_gem_shmem_madvise_locked(shmem, madv);
#else
	ret = drm_gem_shmem_madvise(shmem, madv);
#endif
	dma_resv_unlock(shmem->base.resv);
	return ret;
#endif
}

/* ---- drm_sched ---------------------------------------------------------------- */

/* Do schedulers run on a submission workqueue the driver passes? */
#if defined(DRMACCT_HAVE_SCHED_INIT_ARGS_SUBMIT_WQ) || \
	(!defined(DRMACCT_HAVE_SCHED_INIT_ARGS) && DRMACCT_SCHED_INIT_NARGS == 11)
#define DRMACCT_SCHED_SHARES_SUBMIT_WQ	1
#else
#define DRMACCT_SCHED_SHARES_SUBMIT_WQ	0
#endif

/**
 * drmacct_compat_sched_init() - drm_sched_init() across kernels
 * @sched: scheduler to initialise
 * @ops: backend operations
 * @hw_limit: jobs the hardware queue may hold at once
 * @timeout: job timeout in jiffies (MAX_SCHEDULE_TIMEOUT: none)
 * @name: scheduler name, must outlive the scheduler
 * @dev: device for diagnostics
 * @submit_wq: the driver's workqueue for submission and job freeing, shared
 *	by all its schedulers, where the scheduler runs on workqueues (6.8+):
 *	no scheduler then allocates one of its own. Before, every scheduler
 *	runs its own kthread and @submit_wq is not used
 *	(%DRMACCT_SCHED_SHARES_SUBMIT_WQ says which).
 *
 * One run queue per priority where the scheduler lets the driver choose.
 *
 * Return: 0 or a negative errno.
 */
static inline int
drmacct_compat_sched_init(struct drm_gpu_scheduler *sched,
			  const struct drm_sched_backend_ops *ops,
			  u32 hw_limit, long timeout, const char *name,
			  struct device *dev, struct workqueue_struct *submit_wq)
{
#if defined(DRMACCT_HAVE_SCHED_INIT_ARGS)
	const struct drm_sched_init_args args = {
		.ops = ops,
#ifdef DRMACCT_HAVE_SCHED_INIT_ARGS_SUBMIT_WQ
		.submit_wq = submit_wq,
#endif
#ifdef DRMACCT_HAVE_SCHED_INIT_ARGS_NUM_RQS
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#endif
		.credit_limit = hw_limit,
		.hang_limit = 0,
		.timeout = timeout,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#elif DRMACCT_SCHED_INIT_NARGS == 9
	return drm_sched_init(sched, ops, hw_limit, 0, timeout, NULL, NULL,
			      name, dev);
#elif DRMACCT_SCHED_INIT_NARGS == 11
	return drm_sched_init(sched, ops, submit_wq, DRM_SCHED_PRIORITY_COUNT,
			      hw_limit, 0, timeout, NULL, NULL, name, dev);
#else
#error "drmacct: cannot tell drm_sched_init()'s form from the headers"
#endif
}

/**
 * drmacct_compat_sched_start() - restart a scheduler after a reset
 * @sched: the scheduler, stopped with drm_sched_stop()
 *
 * Jobs resubmitted since the stop (their hardware fences back in place)
 * carry on; those without one end as cancelled.
 */
static inline void drmacct_compat_sched_start(struct drm_gpu_scheduler *sched)
{
#if defined(DRMACCT_SCHED_START_SCHED_ONLY)
	drm_sched_start(sched);
#elif defined(DRMACCT_SCHED_START_FULL_RECOVERY)
	drm_sched_start(sched, true);
#elif defined(DRMACCT_SCHED_START_ERRNO)
	drm_sched_start(sched, 0);
#else
#error "drmacct: cannot tell drm_sched_start()'s form from the headers"
#endif
}

/**
 * drmacct_compat_sched_recover() - end a timedout_job() callback after the
 *	driver reset the hardware of the job that timed out
 * @bad: the job drm_sched handed to timedout_job()
 * @reset: resets the hardware (or only the ring) that @bad runs on; a job
 *	that hung ends there, through its hardware fence (signalled with an
 *	error), while the jobs queued behind it carry on
 * @arg: @reset's argument
 *
 * drm_sched takes @bad off its pending list before timedout_job(). Where
 * the scheduler knows DRM_GPU_SCHED_STAT_NO_HANG (6.17+), it puts the job
 * back itself on that status, and the job's hardware fence callback is
 * still in place: the reset alone ends the hung job and the scheduler frees
 * it in order (xe and amdgpu return NO_HANG after their own resets for the
 * same reason). Before, only drm_sched_stop() puts @bad back, and it takes
 * every pending job's fence callback off: drm_sched_resubmit_jobs() hands
 * each job to run_job() again for its fence (the driver's run_job() must
 * return the fence of a job it already runs), and drm_sched_start() waits
 * on those fences again.
 *
 * Also for a job that is merely slow: @reset then finds nothing hung.
 *
 * Return: what timedout_job() returns.
 */
static inline enum drm_gpu_sched_stat
drmacct_compat_sched_recover(struct drm_sched_job *bad, void (*reset)(void *arg),
			     void *arg)
{
#ifdef DRMACCT_HAVE_SCHED_STAT_NO_HANG
	reset(arg);
	return DRM_GPU_SCHED_STAT_NO_HANG;
#else
	struct drm_gpu_scheduler *sched = bad->sched;

	drm_sched_stop(sched, bad);
	reset(arg);
	drm_sched_resubmit_jobs(sched);
	drmacct_compat_sched_start(sched);
	return DRM_GPU_SCHED_STAT_NOMINAL;
#endif
}

/**
 * drmacct_compat_sched_job_init() - drm_sched_job_init() across kernels
 * @job: job to initialise
 * @entity: entity the job is pushed to
 * @owner: owner cookie (the DRM file)
 * @client_id: DRM client id, recorded in the job's scheduler fence where
 *	the scheduler keeps one
 *
 * Every job takes one credit of the hardware queue.
 *
 * Return: 0 or a negative errno.
 */
static inline int
drmacct_compat_sched_job_init(struct drm_sched_job *job,
			      struct drm_sched_entity *entity, void *owner,
			      u64 client_id)
{
#if DRMACCT_SCHED_JOB_INIT_NARGS == 5
	return drm_sched_job_init(job, entity, 1, owner, client_id);
#elif DRMACCT_SCHED_JOB_INIT_NARGS == 4
	return drm_sched_job_init(job, entity, 1, owner);
#elif DRMACCT_SCHED_JOB_INIT_NARGS == 3
	return drm_sched_job_init(job, entity, owner);
#else
#error "drmacct: cannot tell drm_sched_job_init()'s form from the headers"
#endif
}

/* ---- KUnit ---------------------------------------------------------------------- */

/*
 * A KUnit case that takes a second or more, marked slow where KUnit knows
 * speeds (it then allows it three times the timeout and does not ask for
 * the mark in the log). Expands to kunit/test.h's macros: only for files
 * that include it.
 */
#ifdef DRMACCT_HAVE_KUNIT_CASE_SLOW
#define DRMACCT_KUNIT_CASE_SLOW(fn)	KUNIT_CASE_SLOW(fn)
#else
#define DRMACCT_KUNIT_CASE_SLOW(fn)	KUNIT_CASE(fn)
#endif

#endif /* _DRMACCT_COMPAT_H_ */
