// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu — emulated engines: FIFO hardware queues, clocks with a frequency
 * governor, hardware fences.
 *
 * drm_sched hands a job to an instance with run_job(); the instance
 * queues it and executes its queue strictly in order, one job at a time:
 * OP_BUSY jobs end when an hrtimer fires busy_ns after their start,
 * OP_FILL/OP_COPY jobs do the memory work in a worker. The engine reads
 * the clock itself when it starts a job and when the job's completion
 * fires (hw_start_ns, hw_end_ns: the timer is armed from its own reads),
 * and brackets each drmacct call with a second read, so WAIT reports the
 * helper's stamps (start_ns, end_ns) beside an independent truth and the
 * measured gap between the two. The cycles are the integral of the
 * instance clock over [hw_start_ns, hw_end_ns].
 */
#include <linux/dma-fence.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <uapi/drm/simgpu_drm.h>

#include "simgpu.h"

const struct simgpu_engine_info simgpu_engines[SIMGPU_NUM_ENGINES] = {
	[SIMGPU_ENGINE_RENDER] = {
		.name = "render", .capacity = 1,
		.min_mhz = 200, .max_mhz = 1000, .up_mhz = 100, .down_mhz = 50,
	},
	[SIMGPU_ENGINE_COPY] = {
		.name = "copy", .capacity = 2,
		.min_mhz = 100, .max_mhz = 600, .up_mhz = 50, .down_mhz = 25,
	},
	[SIMGPU_ENGINE_VIDEO] = {
		.name = "video", .capacity = 1,
		.min_mhz = 150, .max_mhz = 450, .up_mhz = 30, .down_mhz = 30,
	},
	[SIMGPU_ENGINE_COMPUTE] = {
		.name = "compute", .capacity = 1,
		.min_mhz = 300, .max_mhz = 1500, .up_mhz = 120, .down_mhz = 60,
		.total_cycles = true,
	},
};

/* Adds @mhz x @dt ns; q * mhz cannot overflow for any dt below 390 years. */
static void simgpu_clock_add(struct simgpu_clock *c, u32 mhz, u64 dt)
{
	u32 r;
	u64 q = div_u64_rem(dt, 1000, &r);
	u64 m = (u64)mhz * r + c->mrem;	/* < 1000 * (mhz + 1) */

	c->cycles += (u64)mhz * q + div_u64_rem(m, 1000, &c->mrem);
}

/*
 * Advance the clock to @t. Governor boundaries are multiples of
 * SIMGPU_GOV_PERIOD_NS of CLOCK_MONOTONIC; at each one the frequency moves
 * one step towards max (busy) or min (idle). Once it saturates it stays
 * constant, so the loop runs at most (max - min) / step times.
 */
static void simgpu_clock_advance(struct simgpu_clock *c,
				 const struct simgpu_engine_info *ei, u64 t)
{
	while (c->t_last < t) {
		u64 next = (div64_u64(c->t_last, SIMGPU_GOV_PERIOD_NS) + 1) *
			   SIMGPU_GOV_PERIOD_NS;
		bool saturated;

		if (next >= t) {
			simgpu_clock_add(c, c->mhz, t - c->t_last);
			c->t_last = t;
			break;
		}
		simgpu_clock_add(c, c->mhz, next - c->t_last);
		c->t_last = next;
		if (c->busy)
			c->mhz = min(c->mhz + ei->up_mhz, ei->max_mhz);
		else
			c->mhz = max(c->mhz - min(c->mhz, ei->down_mhz),
				     ei->min_mhz);
		saturated = c->busy ? c->mhz == ei->max_mhz :
				      c->mhz == ei->min_mhz;
		if (saturated) {
			simgpu_clock_add(c, c->mhz, t - c->t_last);
			c->t_last = t;
			break;
		}
	}
}

static const char *simgpu_fence_driver_name(struct dma_fence *fence)
{
	return "simgpu";
}

static const char *simgpu_fence_timeline_name(struct dma_fence *fence)
{
	return "simgpu-engine";
}

static const struct dma_fence_ops simgpu_fence_ops = {
	.get_driver_name = simgpu_fence_driver_name,
	.get_timeline_name = simgpu_fence_timeline_name,
};

/* Start the head of the queue, or mark the instance idle. */
static void simgpu_inst_start_locked(struct simgpu_inst *inst)
{
	struct simgpu_job *job;
	u64 start, hw_start, run_from;

	lockdep_assert_held(&inst->lock);

	job = list_first_entry_or_null(&inst->queue, struct simgpu_job, node);
	inst->current_job = job;
	if (!job) {
		simgpu_clock_advance(&inst->clk, inst->info, ktime_get_ns());
		inst->clk.busy = false;
		return;
	}

	/* The hardware begins the job now; the helper's stamp comes after. */
	hw_start = ktime_get_ns();
	start = hw_start;
	run_from = hw_start;
	if (job->has_acct) {
		start = drmacct_job_begin(&job->acct);
		run_from = ktime_get_ns();
		job->result->start_gap_ns = run_from - hw_start;
	}
	simgpu_clock_advance(&inst->clk, inst->info, hw_start);
	inst->clk.busy = true;
	job->cycles_start = inst->clk.cycles;
	job->result->start_ns = start;
	job->result->hw_start_ns = hw_start;
	job->result->instance = inst->index;

	if (job->hang)
		return;		/* the engine hangs: only a reset ends this job */
	/*
	 * OP_BUSY from the engine's read after the helper's begin: the job
	 * lasts at least busy_ns by either set of stamps.
	 */
	if (job->op == SIMGPU_OP_BUSY)
		hrtimer_start(&inst->timer, ns_to_ktime(run_from + job->busy_ns),
			      HRTIMER_MODE_ABS);
	else
		queue_work(inst->sdev->wq, &inst->work);
}

/*
 * The current job leaves the engine: finished (@hung false), or ended by
 * an engine reset because it hung. Account it, publish it, signal its
 * fence (with -ETIMEDOUT for a hung job), stamp when the signal (and the
 * callbacks it ran: drm_sched's) returned, then start the next one. WAIT
 * reports the result only after that stamp; the reference taken here
 * keeps the result while the freed job no longer does.
 * Starting the next only after the signal keeps the fences of the
 * instance's context signalling in seqno order (a next job that ended at
 * once could otherwise signal first); run() does not start a job while
 * @signalling is set. The fence reference is ours: once the scheduler has
 * seen the fence signalled it may drop the job's reference.
 */
static void simgpu_inst_finish(struct simgpu_inst *inst, bool hung)
{
	struct simgpu_result *result;
	struct simgpu_job *job;
	struct dma_fence *fence;
	unsigned long flags;
	u64 t, cycles, end;
	bool cookie;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&inst->lock, flags);
	job = inst->current_job;
	if (WARN_ON_ONCE(!job)) {
		spin_unlock_irqrestore(&inst->lock, flags);
		dma_fence_end_signalling(cookie);
		return;
	}
	t = ktime_get_ns();
	simgpu_clock_advance(&inst->clk, inst->info, t);
	cycles = inst->clk.cycles - job->cycles_start;
	result = job->result;
	end = t;
	if (job->has_acct) {
		if (hung)
			end = drmacct_job_reset(&job->acct, cycles);
		else
			end = drmacct_job_end(&job->acct, cycles);
		result->end_gap_ns = ktime_get_ns() - t;
	}
	result->end_ns = end;
	result->hw_end_ns = t;
	result->cycles = cycles;
	result->signal_pending = true;	/* published by the retire's release */
	kref_get(&result->ref);
	list_del_init(&job->node);
	inst->current_job = NULL;
	inst->signalling = true;
	fence = dma_fence_get(job->hw_fence);
	spin_unlock_irqrestore(&inst->lock, flags);

	/* After the signal the scheduler may free the job at any time. */
	simgpu_job_retire(job, hung ? SIMGPU_JOB_TIMEDOUT : SIMGPU_JOB_DONE);
	if (hung)
		dma_fence_set_error(fence, -ETIMEDOUT);
	dma_fence_signal(fence);
	result->signalled_ns = ktime_get_ns();
	/* Pairs with WAIT's acquire: signalled_ns before the flag. */
	smp_store_release(&result->signal_pending, false);
	wake_up_all(&inst->sdev->done_wq);
	simgpu_result_put(result);

	spin_lock_irqsave(&inst->lock, flags);
	inst->signalling = false;
	simgpu_inst_start_locked(inst);
	spin_unlock_irqrestore(&inst->lock, flags);
	dma_fence_put(fence);
	dma_fence_end_signalling(cookie);
}

static void simgpu_inst_complete(struct simgpu_inst *inst)
{
	simgpu_inst_finish(inst, false);
}

/**
 * simgpu_engine_reset() - reset an instance whose current job hung
 * @inst: the instance
 *
 * The hung job (submitted with SIMGPU_SUBMIT_HANG) ends: drmacct charges
 * its time up to now, its result says SIMGPU_JOB_TIMEDOUT and its hardware
 * fence signals -ETIMEDOUT. The jobs queued behind it stay queued and the
 * instance goes on with the next. Nothing happens when the current job is
 * not hung (a long job is no hang).
 *
 * With per-client queues several schedulers feed one instance, and their
 * timeout handlers (and an unplug) may reset it at once: reset_lock makes
 * the check and the reset one step, so a second caller finds the next job
 * (not hung) and leaves it alone.
 *
 * Context: process context, may sleep.
 * Return: true when a hung job was reset.
 */
bool simgpu_engine_reset(struct simgpu_inst *inst)
{
	unsigned long flags;
	bool hung;

	mutex_lock(&inst->reset_lock);
	spin_lock_irqsave(&inst->lock, flags);
	hung = inst->current_job && inst->current_job->hang;
	spin_unlock_irqrestore(&inst->lock, flags);
	if (hung)
		simgpu_inst_finish(inst, true);
	mutex_unlock(&inst->reset_lock);
	return hung;
}

static enum hrtimer_restart simgpu_inst_timer(struct hrtimer *timer)
{
	simgpu_inst_complete(container_of(timer, struct simgpu_inst, timer));
	return HRTIMER_NORESTART;
}

/* Fill [off, off + len) of @bo, one page at a time. */
static void simgpu_bo_fill(struct simgpu_bo *bo, u64 off, u64 len, u8 value)
{
	while (len) {
		struct page *page = bo->base.pages[off >> PAGE_SHIFT];
		size_t in = offset_in_page(off);
		size_t n = min_t(u64, len, PAGE_SIZE - in);
		void *va = kmap_local_page(page);

		memset(va + in, value, n);
		kunmap_local(va);
		off += n;
		len -= n;
		cond_resched();
	}
}

static void simgpu_bo_copy(struct simgpu_bo *dst, u64 doff,
			   struct simgpu_bo *src, u64 soff, u64 len)
{
	while (len) {
		size_t din = offset_in_page(doff), sin = offset_in_page(soff);
		size_t n = min_t(u64, len, PAGE_SIZE - max(din, sin));
		void *d = kmap_local_page(dst->base.pages[doff >> PAGE_SHIFT]);
		void *s = kmap_local_page(src->base.pages[soff >> PAGE_SHIFT]);

		memcpy(d + din, s + sin, n);
		kunmap_local(s);
		kunmap_local(d);
		doff += n;
		soff += n;
		len -= n;
		cond_resched();
	}
}

/*
 * The memory work of the current FILL/COPY job. It runs on a
 * WQ_MEM_RECLAIM queue inside a fence-signalling section: it must neither
 * allocate nor wait for anything that reclaim could wait on.
 */
static void simgpu_inst_work(struct work_struct *work)
{
	struct simgpu_inst *inst = container_of(work, struct simgpu_inst, work);
	struct simgpu_job *job;
	bool cookie;

	spin_lock_irq(&inst->lock);
	job = inst->current_job;
	spin_unlock_irq(&inst->lock);
	if (WARN_ON_ONCE(!job || job->op == SIMGPU_OP_BUSY))
		return;

	cookie = dma_fence_begin_signalling();
	if (job->op == SIMGPU_OP_FILL)
		simgpu_bo_fill(job->dst, job->dst_offset, job->size, job->value);
	else
		simgpu_bo_copy(job->dst, job->dst_offset, job->src,
			       job->src_offset, job->size);
	dma_fence_end_signalling(cookie);
	simgpu_inst_complete(inst);
}

/**
 * simgpu_engine_run() - hand a job to an instance (drm_sched run_job)
 * @inst: the instance of the scheduler that picked the job
 * @job: the job
 *
 * A job drm_sched hands over again after a reset (resubmission) is
 * already on the instance, queued or finished: it keeps its place and its
 * fence.
 *
 * Return: a new reference to the job's hardware fence.
 */
struct dma_fence *simgpu_engine_run(struct simgpu_inst *inst,
				    struct simgpu_job *job)
{
	unsigned long flags;

	spin_lock_irqsave(&inst->lock, flags);
	if (!job->ran) {
		dma_fence_init(job->hw_fence, &simgpu_fence_ops, &inst->fence_lock,
			       inst->fence_context, ++inst->fence_seqno);
		job->ran = true;
		list_add_tail(&job->node, &inst->queue);
		if (!inst->current_job && !inst->signalling)
			simgpu_inst_start_locked(inst);
	}
	spin_unlock_irqrestore(&inst->lock, flags);
	return dma_fence_get(job->hw_fence);
}

/* Brings the clock of @inst up to now; returns its cycles, sets *@mhz. */
static u64 simgpu_inst_sample(struct simgpu_inst *inst, u32 *mhz)
{
	unsigned long flags;
	u64 cycles;

	spin_lock_irqsave(&inst->lock, flags);
	simgpu_clock_advance(&inst->clk, inst->info, ktime_get_ns());
	cycles = inst->clk.cycles;
	*mhz = inst->clk.mhz;
	spin_unlock_irqrestore(&inst->lock, flags);
	return cycles;
}

/**
 * simgpu_engine_total_cycles() - clock cycles of all instances of an
 *	engine since the device was created
 * @sdev: the device
 * @engine: engine index
 *
 * Return: the sum of the instance clocks' integrals.
 */
u64 simgpu_engine_total_cycles(struct simgpu_device *sdev, unsigned int engine)
{
	u64 cycles = 0;
	unsigned int i;
	u32 mhz;

	for (i = 0; i < simgpu_engines[engine].capacity; i++)
		cycles += simgpu_inst_sample(&sdev->inst[engine][i], &mhz);
	return cycles;
}

/**
 * simgpu_engine_cur_mhz() - current frequency of an instance
 * @inst: the instance
 *
 * Return: MHz after the governor caught up to now.
 */
u64 simgpu_engine_cur_mhz(struct simgpu_inst *inst)
{
	u32 mhz;

	simgpu_inst_sample(inst, &mhz);
	return mhz;
}

/**
 * simgpu_engines_init() - create the instances and their schedulers
 * @sdev: the device
 *
 * Return: 0 or a negative errno; on error nothing is left initialised.
 */
int simgpu_engines_init(struct simgpu_device *sdev)
{
	u64 now = ktime_get_ns();
	unsigned int e, i;
	int ret;

	for (e = 0; e < SIMGPU_NUM_ENGINES; e++) {
		const struct simgpu_engine_info *ei = &simgpu_engines[e];

		for (i = 0; i < ei->capacity; i++) {
			struct simgpu_inst *inst = &sdev->inst[e][i];

			inst->sdev = sdev;
			inst->info = ei;
			inst->engine = e;
			inst->index = i;
			snprintf(inst->name, sizeof(inst->name), "%s%u",
				 ei->name, i);
			spin_lock_init(&inst->lock);
			spin_lock_init(&inst->fence_lock);
			mutex_init(&inst->reset_lock);
			INIT_LIST_HEAD(&inst->queue);
			drmacct_compat_hrtimer_setup(&inst->timer, simgpu_inst_timer,
						     CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
			INIT_WORK(&inst->work, simgpu_inst_work);
			inst->clk.t_last = now;
			inst->clk.mhz = ei->min_mhz;
			inst->fence_context = dma_fence_context_alloc(1);
			if (sdev->per_client_queues)
				continue;	/* each file brings its own */

			ret = drmacct_compat_sched_init(&inst->sched,
							&simgpu_sched_ops,
							SIMGPU_HW_QUEUE_DEPTH,
							simgpu_job_timeout,
							inst->name,
							sdev->drm.dev,
							sdev->sched_wq);
			if (ret) {
				simgpu_engines_fini(sdev);
				return ret;
			}
			inst->sched_ready = true;
			sdev->sched_list[e][i] = &inst->sched;
		}
	}
	return 0;
}

/**
 * simgpu_engines_fini() - stop the schedulers and the emulated engines
 * @sdev: the device; every job must already be freed
 */
void simgpu_engines_fini(struct simgpu_device *sdev)
{
	unsigned int e, i;

	for (e = 0; e < SIMGPU_NUM_ENGINES; e++) {
		for (i = 0; i < simgpu_engines[e].capacity; i++) {
			struct simgpu_inst *inst = &sdev->inst[e][i];

			if (!inst->sdev)
				continue;	/* not initialised (an init error) */
			/* The engine first: nothing may signal into a stopped scheduler. */
			cancel_work_sync(&inst->work);
			hrtimer_cancel(&inst->timer);
			if (inst->sched_ready)
				drm_sched_fini(&inst->sched);
			inst->sched_ready = false;
			mutex_destroy(&inst->reset_lock);
			inst->sdev = NULL;
		}
	}
}

/* Engine instances in a fixed order: (e, i) of instance @k, false past the end. */
static bool simgpu_inst_nth(unsigned int k, unsigned int *e, unsigned int *i)
{
	for (*e = 0; *e < SIMGPU_NUM_ENGINES; (*e)++) {
		if (k < simgpu_engines[*e].capacity) {
			*i = k;
			return true;
		}
		k -= simgpu_engines[*e].capacity;
	}
	return false;
}

/**
 * simgpu_file_queues_init() - a file's own schedulers (queues=per_client)
 * @sfile: the new file, before its entities
 *
 * One drm_gpu_scheduler per engine instance, named like the instance it
 * feeds (so ring names repeat across files, as "panthor-queue" does), with
 * the device's queue depth and job timeout, all on the device's one
 * submission workqueue where drm_sched takes one (no workqueue or kernel
 * thread per file; before 6.8 each scheduler runs a kthread of its own).
 * At most max_client_queues files of a device have their own schedulers
 * at once. Without per-client queues nothing happens.
 *
 * Return: 0, -ENOSPC when max_client_queues files already have theirs, or
 * another negative errno; on error no scheduler is left.
 */
int simgpu_file_queues_init(struct simgpu_file *sfile)
{
	struct simgpu_device *sdev = sfile->sdev;
	struct simgpu_queues *q;
	unsigned int k, e, i;
	int ret;

	if (!sdev->per_client_queues)
		return 0;
	if (atomic_inc_return(&sdev->client_queues) > simgpu_max_client_queues) {
		atomic_dec(&sdev->client_queues);
		return -ENOSPC;
	}
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q) {
		atomic_dec(&sdev->client_queues);
		return -ENOMEM;
	}
	for (k = 0; simgpu_inst_nth(k, &e, &i); k++) {
		ret = drmacct_compat_sched_init(&q->sched[e][i], &simgpu_sched_ops,
						SIMGPU_HW_QUEUE_DEPTH,
						simgpu_job_timeout,
						sdev->inst[e][i].name,
						sdev->drm.dev, sdev->sched_wq);
		if (ret) {
			while (k-- && simgpu_inst_nth(k, &e, &i))
				drm_sched_fini(&q->sched[e][i]);
			kfree(q);
			atomic_dec(&sdev->client_queues);
			return ret;
		}
		q->list[e][i] = &q->sched[e][i];
	}
	sfile->queues = q;
	return 0;
}

/**
 * simgpu_file_queues_free() - stop and free a file's own schedulers
 * @sfile: the file; its entities are torn down and none of its jobs is
 *	left (or it never had queues)
 *
 * drm_sched_fini() finds the schedulers idle; it waits for a free_job()
 * still returning in the submission workqueue (or the scheduler's kthread).
 *
 * Context: process context, may sleep; never from the file's own
 * schedulers' work.
 */
void simgpu_file_queues_free(struct simgpu_file *sfile)
{
	struct simgpu_queues *q = sfile->queues;
	unsigned int k, e, i;

	if (!q)
		return;
	for (k = 0; simgpu_inst_nth(k, &e, &i); k++)
		drm_sched_fini(&q->sched[e][i]);
	sfile->queues = NULL;
	kfree(q);
	atomic_dec(&sfile->sdev->client_queues);
}

/**
 * simgpu_file_queues_release() - let a torn-down file's schedulers go
 * @sfile: the file, its entities just torn down
 *
 * Now when no job of the file is left; else the free_job() of its last job
 * queues @sfile->queues_work (simgpu_jobs_put()). Never waits for the
 * hardware: a file's close and a device unplug stay fast however long its
 * jobs on the engines still run (a hung one ends at the timeout, with
 * job_timeout_ms=0 at the unplug's reset).
 *
 * Context: process context, may sleep.
 */
void simgpu_file_queues_release(struct simgpu_file *sfile)
{
	struct simgpu_device *sdev = sfile->sdev;
	bool now;

	if (!sfile->queues)
		return;
	spin_lock_irq(&sdev->jobs_lock);
	sfile->queues_release = true;
	now = !sfile->jobs;
	spin_unlock_irq(&sdev->jobs_lock);
	if (now)
		simgpu_file_queues_free(sfile);
}

/**
 * simgpu_file_queues_work() - @sfile->queues_work: the queues of a file
 *	whose last job was freed
 * @work: the work, in a file whose reference it holds
 */
void simgpu_file_queues_work(struct work_struct *work)
{
	struct simgpu_file *sfile = container_of(work, struct simgpu_file, queues_work);

	simgpu_file_queues_free(sfile);
	simgpu_file_put(sfile);
}
