/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simgpu — a simulated DRM render device built on drm_sched and drmacct.
 */
#ifndef _SIMGPU_H_
#define _SIMGPU_H_

#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/gpu_scheduler.h>

#include "drmacct.h"
#include "drmacct_compat.h"

#define SIMGPU_NUM_ENGINES	4
#define SIMGPU_MAX_INSTANCES	2
#define SIMGPU_HW_QUEUE_DEPTH	4	/* jobs drm_sched hands to one instance */
#define SIMGPU_GOV_PERIOD_NS	1000000ull	/* frequency governor step */
#define SIMGPU_REGION_SYSTEM	0	/* the only memory region */

enum simgpu_engine_id {
	SIMGPU_ENGINE_RENDER,
	SIMGPU_ENGINE_COPY,
	SIMGPU_ENGINE_VIDEO,
	SIMGPU_ENGINE_COMPUTE,
};

/* Static description of an engine class. Frequencies in MHz. */
struct simgpu_engine_info {
	const char *name;
	unsigned int capacity;
	u32 min_mhz;
	u32 max_mhz;
	u32 up_mhz;		/* per governor period while busy */
	u32 down_mhz;		/* per governor period while idle */
	bool total_cycles;	/* prints drm-total-cycles instead of maxfreq */
};

extern const struct simgpu_engine_info simgpu_engines[SIMGPU_NUM_ENGINES];

/*
 * The clock of one engine instance: piecewise constant frequency that the
 * governor moves by one step at every SIMGPU_GOV_PERIOD_NS boundary (up
 * while busy, down while idle). Evaluated lazily; cycles + mrem / 1000 is
 * the exact integral (MHz x ns = milli-cycles). Whole cycles and a
 * remainder, not one milli-cycle counter: that would wrap a u64 after 142
 * days at 1500 MHz and make drm-total-cycles jump backwards.
 */
struct simgpu_clock {
	u64 t_last;
	u64 cycles;
	u32 mrem;			/* milli-cycles, < 1000 */
	u32 mhz;
	bool busy;
};

struct simgpu_job;

/* One emulated engine instance: a FIFO hardware queue and its clock. */
struct simgpu_inst {
	struct simgpu_device *sdev;
	const struct simgpu_engine_info *info;
	unsigned int engine;
	unsigned int index;
	char name[24];			/* scheduler ring name, e.g. "copy1" */
	struct drm_gpu_scheduler sched;	/* unused with per-client queues */
	bool sched_ready;
	struct mutex reset_lock;	/* one reset at a time (several schedulers) */

	spinlock_t lock;		/* queue, current, clock */
	struct list_head queue;		/* jobs handed over by drm_sched, FIFO */
	struct simgpu_job *current_job;	/* head of @queue while it executes */
	bool signalling;		/* a finished job's fence is being signalled */
	struct simgpu_clock clk;
	struct hrtimer timer;		/* completes OP_BUSY jobs */
	struct work_struct work;	/* executes OP_FILL/OP_COPY jobs */

	spinlock_t fence_lock;		/* for the hardware fences */
	u64 fence_context;
	u64 fence_seqno;
	atomic_t load;			/* jobs submitted here, not yet retired */
};

struct simgpu_device {
	struct drm_device drm;
	struct drmacct_device *acct;	/* NULL when accounting=0 */
	bool legacy_memory;
	bool per_client_queues;		/* queues=per_client */
	struct workqueue_struct *wq;	/* FILL/COPY work, freeing a file's queues */
	/*
	 * Submission and job freeing of every scheduler of the device, the
	 * device's and the files' own (where drm_sched takes a driver's
	 * workqueue: DRMACCT_SCHED_SHARES_SUBMIT_WQ): opening files creates
	 * no workqueue or kernel thread.
	 */
	struct workqueue_struct *sched_wq;
	atomic_t client_queues;		/* files with their own schedulers */
	struct simgpu_inst inst[SIMGPU_NUM_ENGINES][SIMGPU_MAX_INSTANCES];
	struct drm_gpu_scheduler *sched_list[SIMGPU_NUM_ENGINES][SIMGPU_MAX_INSTANCES];
	struct mutex files_lock;	/* @files */
	struct list_head files;		/* open files (struct simgpu_file.dev_node) */
	spinlock_t jobs_lock;		/* @jobs, every file's jobs, wake-ups */
	unsigned int jobs;		/* jobs not yet freed */
	wait_queue_head_t jobs_wq;	/* @jobs or a file's jobs dropped to 0 */
	wait_queue_head_t done_wq;	/* some job result completed */
	wait_queue_head_t flush_wq;	/* a file's queued jobs ran, or it is torn down */
};

static inline struct simgpu_device *to_simgpu(struct drm_device *drm)
{
	return container_of(drm, struct simgpu_device, drm);
}

/*
 * What WAIT returns. The file's results table holds one reference until
 * the result is pruned (more than SIMGPU_MAX_DONE_RESULTS finished after
 * it) or the file goes; the job holds one until it is freed, a waiter one
 * while it waits.
 */
struct simgpu_result {
	struct kref ref;
	struct list_head done_node;	/* in simgpu_file.done, once done */
	u32 id;
	u64 queued_ns;
	u64 run_ns;			/* first run_job() call */
	u64 start_ns;			/* the helper's stamps (accounting on) */
	u64 end_ns;
	u64 hw_start_ns;		/* the engine's own clock reads */
	u64 hw_end_ns;
	u64 start_gap_ns;		/* engine read after the helper's begin - hw_start_ns */
	u64 end_gap_ns;			/* engine read after the helper's end - hw_end_ns */
	u64 signalled_ns;		/* the hardware fence's signal returned */
	u64 cycles;
	u32 status;
	u32 instance;
	bool done;			/* set with release semantics, last */
	/*
	 * Set before @done by a job that ran, cleared (release) once its
	 * hardware fence's signal returned and @signalled_ns is written:
	 * WAIT reports a result only when both say so.
	 */
	bool signal_pending;
	/*
	 * The scheduler's finished fence signalled (drm_sched's done event
	 * just before): read in a callback on that fence, which WAIT waits
	 * for as well (@finished_pending cleared with release after it).
	 */
	u64 finished_ns;
	struct dma_fence_cb finished_cb;
	wait_queue_head_t *done_wq;	/* woken when finished_ns is there */
	bool finished_pending;
};

void simgpu_result_put(struct simgpu_result *result);

/* Live results and jobs of all devices (debugfs simgpu/objects). */
extern atomic_t simgpu_live_results;
extern atomic_t simgpu_live_jobs;
extern atomic64_t simgpu_jobs_ran;
extern atomic64_t simgpu_jobs_dropped;

/* Per open file. Jobs hold references, so it outlives the file. */
/* Per-file state of the fault injection (simgpu_fault.c). */
struct simgpu_fault_file {
	struct list_head node;	/* in the open files, oldest first */
	u64 id;			/* the drm-client-id it prints */
	atomic_t reads;		/* fdinfo reads so far */
	u64 idle_ns;		/* idle-busy: fake busy time while it ran nothing */
	bool ran;		/* idle-busy: it printed real busy time */
	u64 last_busy[SIMGPU_NUM_ENGINES]; /* counter-step-back: printed before */
};

/*
 * queues=per_client: the file's own scheduler per engine instance (one
 * drm_gpu_scheduler per user queue, as xe, panthor and pvr have). They all
 * feed the device's shared instances, and are named like them.
 */
struct simgpu_queues {
	struct drm_gpu_scheduler sched[SIMGPU_NUM_ENGINES][SIMGPU_MAX_INSTANCES];
	struct drm_gpu_scheduler *list[SIMGPU_NUM_ENGINES][SIMGPU_MAX_INSTANCES];
};

struct simgpu_file {
	struct kref ref;
	struct simgpu_device *sdev;
	struct list_head dev_node;	/* in simgpu_device.files while open */
	/*
	 * The teardown of the file's entities (its close, or a device unplug,
	 * whichever comes first claims it under files_lock): fast, it never
	 * waits for the hardware; whoever comes second waits for @torn_down.
	 */
	bool entities_gone;		/* files_lock */
	bool unplug_seen;		/* files_lock: the unplug took care of it */
	struct completion torn_down;
	atomic_t queued;		/* jobs pushed, not yet run or dropped */
	struct simgpu_queues *queues;	/* NULL: the device's schedulers */
	/*
	 * Per-client queues go once the file is torn down and its last job
	 * freed (a free_job() cannot stop its own scheduler: @queues_work
	 * does, on sdev->wq).
	 */
	bool queues_release;		/* sdev->jobs_lock */
	struct work_struct queues_work;
	unsigned int jobs;		/* jobs not yet freed (sdev->jobs_lock) */
	struct drmacct_client *acct;	/* NULL when accounting=0 */
	struct mutex submit_lock;	/* job arm + push order */
	struct mutex results_lock;	/* @results: lookups, inserts, pruning */
	struct xarray results;		/* job id -> struct simgpu_result */
	u32 next_id;			/* of the cyclic job id allocation */
	spinlock_t done_lock;		/* @done, @ndone (retire runs in IRQs) */
	struct list_head done;		/* finished results, oldest first */
	unsigned int ndone;
	struct simgpu_fault_file fault;	/* only with the fault parameter */
	atomic_t inflight;		/* jobs whose result is not done */
	atomic64_t pinned;		/* bytes of its objects' pinned pages */
	struct drm_sched_entity entity[SIMGPU_NUM_ENGINES][SIMGPU_MAX_INSTANCES];
};

void simgpu_file_put(struct simgpu_file *sfile);

struct simgpu_bo {
	struct drm_gem_shmem_object base;
	atomic_t active;		/* unfinished jobs using this object */
	bool pinned;			/* its pages pinned since GEM_CREATE */
	struct simgpu_file *owner;	/* reference; charged for the pin */
};

static inline struct simgpu_bo *to_simgpu_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct simgpu_bo, base.base);
}

struct simgpu_job {
	struct drm_sched_job base;
	struct simgpu_device *sdev;
	struct simgpu_file *sfile;	/* reference */
	struct simgpu_result *result;	/* owned by sfile->results */
	struct drmacct_job acct;
	struct drmacct_client *client;	/* @acct's reference, or NULL */
	bool has_acct;
	bool hang;			/* SIMGPU_SUBMIT_HANG: never completes */
	bool ran;			/* run_job() was called */
	bool retired;			/* result done, objects idle */
	struct dma_fence *hw_fence;
	struct list_head node;		/* in simgpu_inst.queue */
	u32 engine;
	u32 op;
	u64 busy_ns;
	u64 src_offset;
	u64 dst_offset;
	u64 size;
	u8 value;
	struct simgpu_bo *src;		/* references */
	struct simgpu_bo *dst;
	struct simgpu_inst *inst;	/* the instance the job was submitted to */
	u64 cycles_start;		/* instance clock at start */
};

/* simgpu_drv.c */
extern long simgpu_job_timeout;		/* drm_sched job timeout, jiffies */
extern u64 simgpu_max_pinned;		/* bytes a file may have pinned */
extern unsigned int simgpu_max_client_queues;	/* files with own schedulers */
int simgpu_flush(struct file *f, fl_owner_t id);
#define SIMGPU_FOPS_COMMON						\
	.owner = THIS_MODULE,						\
	DRM_GEM_FOPS,							\
	.flush = simgpu_flush
extern bool simgpu_per_client_queues;	/* queues=per_client */

/* simgpu_engine.c */
int simgpu_engines_init(struct simgpu_device *sdev);
bool simgpu_engine_reset(struct simgpu_inst *inst);
void simgpu_engines_fini(struct simgpu_device *sdev);
struct dma_fence *simgpu_engine_run(struct simgpu_inst *inst,
				    struct simgpu_job *job);
u64 simgpu_engine_total_cycles(struct simgpu_device *sdev,
			       unsigned int engine);
u64 simgpu_engine_cur_mhz(struct simgpu_inst *inst);

/* simgpu_job.c */
extern const struct drm_sched_backend_ops simgpu_sched_ops;
void simgpu_job_retire(struct simgpu_job *job, u32 status);
int simgpu_ioctl_submit(struct drm_device *drm, void *data,
			struct drm_file *file);
int simgpu_ioctl_wait(struct drm_device *drm, void *data,
		      struct drm_file *file);
int simgpu_file_entities_init(struct simgpu_file *sfile);
void simgpu_file_entities_fini(struct simgpu_file *sfile);
int simgpu_file_queues_init(struct simgpu_file *sfile);
void simgpu_file_queues_free(struct simgpu_file *sfile);
void simgpu_file_queues_release(struct simgpu_file *sfile);
void simgpu_file_queues_work(struct work_struct *work);

/* simgpu_gem.c */
struct drm_gem_object *simgpu_gem_create_object(struct drm_device *drm,
						size_t size);
int simgpu_ioctl_gem_create(struct drm_device *drm, void *data,
			    struct drm_file *file);
int simgpu_ioctl_gem_madvise(struct drm_device *drm, void *data,
			     struct drm_file *file);
int simgpu_ioctl_gem_info(struct drm_device *drm, void *data,
			  struct drm_file *file);
int simgpu_ioctl_gem_wait(struct drm_device *drm, void *data,
			  struct drm_file *file);
void simgpu_gem_mem_stats(struct drm_file *file, struct drmacct_mem_stats *st);
void simgpu_bo_mem_event(struct simgpu_file *sfile, struct simgpu_bo *bo,
			 enum drmacct_mem_op op);

/* simgpu_drv.c */
void simgpu_show_fdinfo(struct drm_printer *p, struct drm_file *file);

/* simgpu_fault.c */
extern const struct file_operations simgpu_fault_fops;
bool simgpu_fault_active(void);
void simgpu_fault_open(struct simgpu_file *sfile);
void simgpu_fault_close(struct simgpu_file *sfile);

#endif /* _SIMGPU_H_ */
