/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * simgpu — a simulated DRM render device for drmacct.
 *
 * Userspace ABI. All structures are 64-bit aligned and padded explicitly;
 * every pad and reserved field must be zero on input (-EINVAL otherwise),
 * and every flags field rejects unknown bits with -EINVAL.
 */
#ifndef _UAPI_SIMGPU_DRM_H_
#define _UAPI_SIMGPU_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_SIMGPU_QUERY_DEVICE		0x00
#define DRM_SIMGPU_QUERY_ENGINE		0x01
#define DRM_SIMGPU_SET_CLIENT_NAME	0x02
#define DRM_SIMGPU_GEM_CREATE		0x03
#define DRM_SIMGPU_GEM_MADVISE		0x04
#define DRM_SIMGPU_SUBMIT		0x05
#define DRM_SIMGPU_WAIT			0x06
#define DRM_SIMGPU_GEM_INFO		0x07
#define DRM_SIMGPU_GEM_WAIT		0x08

#define SIMGPU_NAME_LEN			32	/* engine name, NUL-terminated */
#define SIMGPU_CLIENT_NAME_MAX		64	/* client name, without NUL */

/* drm_simgpu_query_device.flags */
#define SIMGPU_DEVICE_ACCOUNTING	(1u << 0)	/* drmacct helper in use */
#define SIMGPU_DEVICE_LEGACY_MEMORY	(1u << 1)	/* prints drm-memory-<r> */

struct drm_simgpu_query_device {
	__u32 num_engines;	/* out */
	__u32 flags;		/* out: SIMGPU_DEVICE_* */
	__u64 client_id;	/* out: drm-client-id of this file (0 without helper) */
	__u64 now_ns;		/* out: device clock (CLOCK_MONOTONIC ns) */
	__u64 reserved[4];	/* in: must be 0 */
};

/* drm_simgpu_query_engine.flags */
#define SIMGPU_ENGINE_TOTAL_CYCLES	(1u << 0)	/* total-cycles instead of maxfreq */

struct drm_simgpu_query_engine {
	__u32 engine;		/* in: index < num_engines */
	__u32 capacity;		/* out: number of identical instances */
	__u32 flags;		/* out: SIMGPU_ENGINE_* */
	__u32 pad;		/* in: must be 0 */
	__u64 max_freq_hz;	/* out */
	__u64 min_freq_hz;	/* out */
	__u64 cur_freq_hz;	/* out: instance 0's current frequency */
	__u64 total_cycles;	/* out: engine clock cycles since device init */
	char name[SIMGPU_NAME_LEN];	/* out: the <e> in drm-engine-<e> */
	__u64 reserved[4];	/* in: must be 0 */
};

/*
 * SET_CLIENT_NAME: drm-client-name of this file. Where the DRM core owns
 * the name (Linux 6.13+, DRM_IOCTL_SET_CLIENT_NAME), a valid request fails
 * with EOPNOTSUPP (invalid ones fail as documented below): use the core's.
 */
struct drm_simgpu_set_client_name {
	__u64 name;		/* in: user pointer to the name bytes (no NUL needed) */
	__u32 len;		/* in: 0 clears; <= SIMGPU_CLIENT_NAME_MAX; no whitespace */
	__u32 pad;		/* in: must be 0 */
};

#define SIMGPU_MAX_BO_SIZE	(256ull << 20)	/* larger sizes: -EINVAL */

struct drm_simgpu_gem_create {
	__u64 size;		/* in: bytes, 1 .. SIMGPU_MAX_BO_SIZE, rounded up to PAGE_SIZE */
	__u32 flags;		/* in: must be 0 */
	__u32 handle;		/* out */
};

#define SIMGPU_MADV_WILLNEED	0
#define SIMGPU_MADV_DONTNEED	1	/* purgeable */

struct drm_simgpu_gem_madvise {
	__u32 handle;		/* in */
	__u32 madv;		/* in: SIMGPU_MADV_* */
	__u32 retained;		/* out: 1 when the backing store still exists */
	__u32 pad;		/* in: must be 0 */
};

struct drm_simgpu_gem_info {
	__u32 handle;		/* in */
	__u32 pad;		/* in: must be 0 */
	__u64 size;		/* out: bytes */
	__u64 mmap_offset;	/* out: for mmap() on the DRM fd */
};

/* drm_simgpu_gem_wait.flags */
#define SIMGPU_GEM_WAIT_WRITE	(1u << 0)	/* for a CPU write: wait for readers too */

/*
 * Waits until the GPU is done with an object, before the CPU reads it
 * through mmap (the jobs that write it have finished) or, with
 * SIMGPU_GEM_WAIT_WRITE, writes it (the jobs that read it too). Jobs sync
 * with each other by themselves (implicit sync through the objects'
 * reservations); this is the CPU's side.
 */
struct drm_simgpu_gem_wait {
	__u32 handle;		/* in */
	__u32 flags;		/* in: SIMGPU_GEM_WAIT_* */
	__u64 timeout_ns;	/* in: CLOCK_MONOTONIC deadline; 0 polls (-EBUSY) */
	__u64 reserved;		/* in: must be 0 */
};

/* drm_simgpu_submit.op */
#define SIMGPU_OP_BUSY		0	/* keep the engine busy for busy_ns */
#define SIMGPU_OP_FILL		1	/* fill dst[dst_offset, +size) with value's low byte */
#define SIMGPU_OP_COPY		2	/* copy src[src_offset, +size) to dst[dst_offset, +size) */

#define SIMGPU_INSTANCE_ANY	0xffffffffu

#define SIMGPU_MAX_BUSY_NS	(60ull * 1000000000ull)	/* 60 s per job */
/* Unfinished jobs per file; SUBMIT beyond them waits (interruptibly). */
#define SIMGPU_MAX_INFLIGHT	1024

/*
 * drm_simgpu_submit.flags
 * SIMGPU_SUBMIT_HANG: OP_BUSY only; the engine never completes the job. The
 * scheduler's timeout (module parameter job_timeout_ms) resets the engine:
 * the job ends with SIMGPU_JOB_TIMEDOUT, its time up to the reset counts as
 * busy, and the jobs queued behind it run as usual.
 */
#define SIMGPU_SUBMIT_HANG	(1u << 0)

struct drm_simgpu_submit {
	__u32 engine;		/* in: engine index */
	__u32 instance;		/* in: < capacity, or SIMGPU_INSTANCE_ANY */
	__u32 op;		/* in: SIMGPU_OP_* */
	__u32 flags;		/* in: SIMGPU_SUBMIT_* */
	__u64 busy_ns;		/* in: OP_BUSY: 1 ns .. SIMGPU_MAX_BUSY_NS */
	__u32 src_handle;	/* in: OP_COPY source; must be 0 otherwise */
	__u32 dst_handle;	/* in: OP_FILL/OP_COPY destination; must be 0 for OP_BUSY */
	__u64 src_offset;	/* in */
	__u64 dst_offset;	/* in */
	__u64 size;		/* in: bytes for FILL/COPY; must be 0 for OP_BUSY */
	__u64 value;		/* in: OP_FILL byte in the low 8 bits */
	__u64 job_id;		/* out: per-file job id, starts at 1 */
	__u64 reserved[2];	/* in: must be 0 */
};

/* drm_simgpu_wait.status */
#define SIMGPU_JOB_DONE		0
#define SIMGPU_JOB_ERROR	1	/* dropped before it ran (its file was killed) */
#define SIMGPU_JOB_TIMEDOUT	2	/* hung; ended by an engine reset */

/*
 * Waits for a job of this file and returns the driver's own measurement of it
 * (the ground truth tests compare fdinfo against). A finished job's result
 * can be collected (any number of times) until SIMGPU_MAX_DONE_RESULTS jobs
 * of the file have finished after it, or the file is closed; after that
 * WAIT says -ENOENT. Unfinished jobs' results are always kept.
 */
#define SIMGPU_MAX_DONE_RESULTS	4096

/* drm_simgpu_wait.flags */
#define SIMGPU_WAIT_ABSOLUTE	(1u << 0)	/* timeout_ns is a CLOCK_MONOTONIC deadline */

struct drm_simgpu_wait {
	__u64 job_id;		/* in */
	__u64 timeout_ns;	/* in: relative ns, or a deadline with SIMGPU_WAIT_ABSOLUTE;
				 * 0 polls (-EBUSY when not done); U64_MAX waits for ever.
				 * Relative: on -EINTR the time left is written back. */
	__u32 flags;		/* in: SIMGPU_WAIT_* */
	__u32 pad;		/* in: must be 0 */
	__u32 status;		/* out: SIMGPU_JOB_* */
	__u32 instance;		/* out: instance the job ran on */
	__u64 queued_ns;	/* out: CLOCK_MONOTONIC ns at submit */
	__u64 start_ns;		/* out: when the engine started it */
	__u64 end_ns;		/* out: when it completed */
	__u64 cycles;		/* out: engine cycles the job consumed */
	__u64 run_ns;		/* out: when drm_sched first handed the job to
				 * the driver (run_job); ignored on input */
	/*
	 * The engine's own clock reads, independent of the accounting
	 * helper's (start_ns and end_ns above are the helper's stamps when
	 * accounting is on). Each helper call is bracketed by two engine
	 * reads: start_ns lies in [hw_start_ns, hw_start_ns + start_gap_ns]
	 * and end_ns in [hw_end_ns, hw_end_ns + end_gap_ns] (gaps 0 without
	 * the helper, where start_ns == hw_start_ns and end_ns == hw_end_ns).
	 * Older userspace passes a shorter struct and gets none of this;
	 * all of it is ignored on input.
	 */
	__u64 hw_start_ns;	/* out: the engine began the job */
	__u64 hw_end_ns;	/* out: its completion fired (OP_BUSY: the
				 * timer due at hw_start_ns + start_gap_ns +
				 * busy_ns) */
	__u64 start_gap_ns;	/* out: engine read after the helper's begin
				 * minus hw_start_ns */
	__u64 end_gap_ns;	/* out: engine read after the helper's end
				 * minus hw_end_ns */
	__u64 signalled_ns;	/* out: the hardware fence's signal returned,
				 * its callbacks (drm_sched's) run; 0 for a
				 * job that never ran */
	__u64 finished_ns;	/* out: the scheduler's finished fence
				 * signalled, its done event just before:
				 * usually inside the hardware fence's signal
				 * (< signalled_ns), but later when the job
				 * completed before drm_sched added its
				 * callback (its run worker then ends it) */
};

#define DRM_IOCTL_SIMGPU_QUERY_DEVICE	DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_QUERY_DEVICE, struct drm_simgpu_query_device)
#define DRM_IOCTL_SIMGPU_QUERY_ENGINE	DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_QUERY_ENGINE, struct drm_simgpu_query_engine)
#define DRM_IOCTL_SIMGPU_SET_CLIENT_NAME DRM_IOW(DRM_COMMAND_BASE + DRM_SIMGPU_SET_CLIENT_NAME, struct drm_simgpu_set_client_name)
#define DRM_IOCTL_SIMGPU_GEM_CREATE	DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_GEM_CREATE, struct drm_simgpu_gem_create)
#define DRM_IOCTL_SIMGPU_GEM_MADVISE	DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_GEM_MADVISE, struct drm_simgpu_gem_madvise)
#define DRM_IOCTL_SIMGPU_SUBMIT		DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_SUBMIT, struct drm_simgpu_submit)
#define DRM_IOCTL_SIMGPU_WAIT		DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_WAIT, struct drm_simgpu_wait)
#define DRM_IOCTL_SIMGPU_GEM_INFO	DRM_IOWR(DRM_COMMAND_BASE + DRM_SIMGPU_GEM_INFO, struct drm_simgpu_gem_info)
#define DRM_IOCTL_SIMGPU_GEM_WAIT	DRM_IOW(DRM_COMMAND_BASE + DRM_SIMGPU_GEM_WAIT, struct drm_simgpu_gem_wait)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_SIMGPU_DRM_H_ */
