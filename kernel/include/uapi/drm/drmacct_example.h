/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * drmacct_example — the helper guide's example driver (kernel/example).
 * Userspace ABI: a buffer ioctl and a synchronous job ioctl.
 */
#ifndef _UAPI_DRMACCT_EXAMPLE_H_
#define _UAPI_DRMACCT_EXAMPLE_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_EXAMPLE_BO		0x00
#define DRM_EXAMPLE_RUN		0x01

struct drm_example_bo {
	__u64 size;		/* in: bytes, 1 .. 64 MiB */
	__u32 handle;		/* out */
	__u32 pad;		/* in: must be 0 */
};

/* drm_example_run.flags */
#define EXAMPLE_RUN_HANG	(1u << 0)	/* the job never ends: reset after 50 ms */

/* Runs a job of @ns on the engine and waits for it; -ETIMEDOUT when it hung. */
struct drm_example_run {
	__u64 ns;		/* in: 1 ns .. 1 s */
	__u32 flags;		/* in: EXAMPLE_RUN_* */
	__u32 pad;
	__u64 start_ns;		/* out: the helper's start (CLOCK_MONOTONIC) */
	__u64 end_ns;		/* out: its end, or the reset */
};

#define DRM_IOCTL_EXAMPLE_BO	DRM_IOWR(DRM_COMMAND_BASE + DRM_EXAMPLE_BO, struct drm_example_bo)
#define DRM_IOCTL_EXAMPLE_RUN	DRM_IOWR(DRM_COMMAND_BASE + DRM_EXAMPLE_RUN, struct drm_example_run)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRMACCT_EXAMPLE_H_ */
