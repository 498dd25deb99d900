/* SPDX-License-Identifier: GPL-2.0 */
/*
 * drmacct_compat.h — every kernel-version difference drmacct and simgpu
 * care about, in one place.
 *
 * Target: Debian bookworm 6.1 (6.1.0-56-amd64), which carries backports
 * (drm_sched_init() takes struct drm_sched_init_args). Features that were
 * backported are detected by Kbuild from the installed headers and passed
 * as -DDRMACCT_HAVE_* flags; everything else is keyed on the version.
 *
 * What changes upstream (documented in Documentation/drmacct-helper.rst):
 * - 6.5: drm_show_fdinfo() in the DRM core prints drm-driver, drm-pdev and
 *   drm-client-id itself and calls drm_driver.show_fdinfo(printer, file);
 *   struct drm_file gains client_id. The helper then must not print those
 *   three keys again (DRMACCT_CORE_PRINTS_IDS).
 * - 6.7: drm_sched_job_init() takes a credits argument.
 * - 6.15: drm_sched_init() takes struct drm_sched_init_args upstream.
 * - 6.17: drm_sched_job_init() takes the DRM client id; scheduler
 *   tracepoints are renamed (drm_sched_job_queue/run/done) and carry it.
 */
#ifndef _DRMACCT_COMPAT_H_
#define _DRMACCT_COMPAT_H_

#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
/* The DRM core prints drm-driver, drm-pdev and drm-client-id. */
#define DRMACCT_CORE_PRINTS_IDS		1
#else
#define DRMACCT_CORE_PRINTS_IDS		0
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0) && \
	!defined(DRMACCT_HAVE_SCHED_INIT_ARGS)
#define DRMACCT_HAVE_SCHED_INIT_ARGS	1
#endif

#ifdef _DRM_GPU_SCHEDULER_H_
/**
 * drmacct_compat_sched_init() - drm_sched_init() across kernel versions
 * @sched: scheduler to initialise
 * @ops: backend operations
 * @hw_limit: jobs the hardware queue may hold at once
 * @timeout: job timeout in jiffies (MAX_SCHEDULE_TIMEOUT: none)
 * @name: scheduler name, must outlive the scheduler
 * @dev: device for diagnostics
 *
 * Return: 0 or a negative errno.
 */
static inline int
drmacct_compat_sched_init(struct drm_gpu_scheduler *sched,
			  const struct drm_sched_backend_ops *ops,
			  u32 hw_limit, long timeout, const char *name,
			  struct device *dev)
{
#ifdef DRMACCT_HAVE_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = ops,
		.credit_limit = hw_limit,
		.hang_limit = 0,
		.timeout = timeout,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#else
	return drm_sched_init(sched, ops, hw_limit, 0, timeout, NULL, NULL,
			      name, dev);
#endif
}

/**
 * drmacct_compat_sched_job_init() - drm_sched_job_init() across versions
 * @job: job to initialise
 * @entity: entity the job is pushed to
 * @owner: owner cookie (the DRM file)
 * @client_id: DRM client id (used from 6.17 on)
 *
 * Return: 0 or a negative errno.
 */
static inline int
drmacct_compat_sched_job_init(struct drm_sched_job *job,
			      struct drm_sched_entity *entity, void *owner,
			      u64 client_id)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
	return drm_sched_job_init(job, entity, 1, owner, client_id);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	return drm_sched_job_init(job, entity, 1, owner);
#else
	return drm_sched_job_init(job, entity, owner);
#endif
}
#endif /* _DRM_GPU_SCHEDULER_H_ */

#endif /* _DRMACCT_COMPAT_H_ */
