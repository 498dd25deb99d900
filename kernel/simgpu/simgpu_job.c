// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu — jobs: SUBMIT and WAIT ioctls, drm_sched backend, entities.
 */
#include <linux/dma-resv.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include <uapi/drm/simgpu_drm.h>

#include "simgpu.h"

static inline struct simgpu_job *to_simgpu_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct simgpu_job, base);
}

/*
 * Marks the job's objects active (at SUBMIT) or idle again (at retire).
 * The memory events go to the job's own client reference: the file's
 * sfile->acct is dropped and cleared when the file closes, while a job of a
 * closed file may still be running (and would read it without any lock).
 */
static void simgpu_job_objects_active(struct simgpu_job *job, bool active)
{
	struct simgpu_bo *bos[2] = {
		job->src, job->dst != job->src ? job->dst : NULL,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bos); i++) {
		if (!bos[i])
			continue;
		if (active)
			atomic_inc(&bos[i]->active);
		else
			atomic_dec(&bos[i]->active);
		if (job->client)
			drmacct_mem_event(job->client, SIMGPU_REGION_SYSTEM,
					  active ? DRMACCT_MEM_ACTIVE :
					  DRMACCT_MEM_IDLE,
					  bos[i]->base.base.size);
	}
}

/**
 * simgpu_job_retire() - publish a job's result and mark its objects idle
 * @job: the job
 * @status: SIMGPU_JOB_DONE, or SIMGPU_JOB_ERROR for a job that never ran
 *
 * Runs exactly once per job, before the job's hardware fence signals (or
 * from free_job() for a job the scheduler dropped).
 */
void simgpu_job_retire(struct simgpu_job *job, u32 status)
{
	struct simgpu_file *sfile = job->sfile;
	struct simgpu_result *result = job->result;
	unsigned long flags;

	if (job->retired)
		return;
	job->retired = true;

	simgpu_job_objects_active(job, false);
	result->status = status;
	/* Publish every result field before done; pairs with WAIT's acquire. */
	smp_store_release(&result->done, true);
	spin_lock_irqsave(&sfile->done_lock, flags);
	list_add_tail(&result->done_node, &sfile->done);
	sfile->ndone++;
	spin_unlock_irqrestore(&sfile->done_lock, flags);
	atomic_dec(&sfile->inflight);
	atomic_dec(&job->inst->load);
	wake_up_all(&job->sdev->done_wq);
}

static void simgpu_result_release(struct kref *ref)
{
	kfree(container_of(ref, struct simgpu_result, ref));
	atomic_dec(&simgpu_live_results);
}

/**
 * simgpu_result_put() - drop a reference to a job's result
 * @result: the result, or NULL
 */
void simgpu_result_put(struct simgpu_result *result)
{
	if (result)
		kref_put(&result->ref, simgpu_result_release);
}

/*
 * Forget the oldest finished results beyond SIMGPU_MAX_DONE_RESULTS, so a
 * client that never waits cannot grow the kernel's memory without bound.
 * Called with results_lock held, from SUBMIT.
 */
static void simgpu_results_prune(struct simgpu_file *sfile)
{
	lockdep_assert_held(&sfile->results_lock);

	for (;;) {
		struct simgpu_result *oldest = NULL;

		spin_lock_irq(&sfile->done_lock);
		if (sfile->ndone > SIMGPU_MAX_DONE_RESULTS) {
			oldest = list_first_entry(&sfile->done, struct simgpu_result,
						  done_node);
			list_del(&oldest->done_node);
			sfile->ndone--;
		}
		spin_unlock_irq(&sfile->done_lock);
		if (!oldest)
			return;
		xa_erase(&sfile->results, oldest->id);
		simgpu_result_put(oldest);
	}
}

/*
 * Counts a job that is not freed yet, on the device and its file:
 * simgpu_remove() waits for the device's; the file's schedulers (per-client
 * queues) go when the file's drops to 0 after its teardown.
 */
static void simgpu_jobs_get(struct simgpu_device *sdev, struct simgpu_file *sfile)
{
	spin_lock_irq(&sdev->jobs_lock);
	sdev->jobs++;
	sfile->jobs++;
	spin_unlock_irq(&sdev->jobs_lock);
}

/*
 * The decrement and the wake-up happen under jobs_lock, which
 * simgpu_remove() takes again after its wait: it cannot go on to free the
 * device while the last free_job() (possibly in a kworker of the entity
 * teardown) still touches jobs_wq. With atomic_dec_and_test() the remover
 * could see 0 and free the device between the decrement and the wake_up.
 */
static void simgpu_jobs_put(struct simgpu_device *sdev, struct simgpu_file *sfile)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&sdev->jobs_lock, flags);
	idle = !--sfile->jobs;
	/*
	 * The last job of a torn-down file with schedulers of its own: they
	 * can go now, though not from here (this may be their free_job()).
	 * Queued under jobs_lock, so an unplug that sees no job left and then
	 * drains sdev->wq finds the work queued.
	 */
	if (idle && sfile->queues_release) {
		kref_get(&sfile->ref);
		queue_work(sdev->wq, &sfile->queues_work);
	}
	if (!--sdev->jobs || idle)
		wake_up_all(&sdev->jobs_wq);
	spin_unlock_irqrestore(&sdev->jobs_lock, flags);
}

/* A queued job was handed to the hardware, or dropped without running. */
static void simgpu_job_dequeued(struct simgpu_job *job)
{
	if (atomic_dec_and_test(&job->sfile->queued))
		wake_up_all(&job->sdev->flush_wq);
}

static struct dma_fence *simgpu_sched_run_job(struct drm_sched_job *sched_job)
{
	struct simgpu_job *job = to_simgpu_job(sched_job);

	/* A resubmission after a reset keeps the first hand-off time. */
	if (!job->result->run_ns) {
		job->result->run_ns = ktime_get_ns();
		simgpu_job_dequeued(job);
	}
	/* The device's instance, whichever scheduler (its own or the file's). */
	return simgpu_engine_run(job->inst, job);
}

/* drmacct_compat_sched_recover()'s reset: ends the instance's job if it hung. */
static void simgpu_sched_reset(void *arg)
{
	struct simgpu_inst *inst = arg;

	if (simgpu_engine_reset(inst))
		drm_info(&inst->sdev->drm, "%s: job hung, engine reset\n", inst->name);
}

/*
 * The scheduler's timeout fired for @sched_job's instance. A job submitted
 * with SIMGPU_SUBMIT_HANG never completes by itself: reset the instance,
 * which ends that job (timed out, its time up to now charged) and carries
 * on with the jobs queued behind it. A job that is merely long, or waits
 * behind a long one, is no hang: nothing is reset. How the scheduler then
 * takes the job back differs between kernels (drmacct_compat_sched_recover():
 * NO_HANG on 6.17+, the stop/resubmit/start steps before).
 *
 * With per-client queues the scheduler is the file's and the instance is
 * shared: the job that timed out may wait behind another file's hung job,
 * which this reset ends (that file's scheduler sees its fence signal with
 * the error, as after its own timeout).
 */
static enum drm_gpu_sched_stat
simgpu_sched_timedout_job(struct drm_sched_job *sched_job)
{
	return drmacct_compat_sched_recover(sched_job, simgpu_sched_reset,
					    to_simgpu_job(sched_job)->inst);
}

static void simgpu_sched_free_job(struct drm_sched_job *sched_job)
{
	struct simgpu_job *job = to_simgpu_job(sched_job);
	struct simgpu_device *sdev = job->sdev;
	struct simgpu_file *sfile = job->sfile;

	drm_sched_job_cleanup(sched_job);
	if (job->ran) {
		dma_fence_put(job->hw_fence);
		atomic64_inc(&simgpu_jobs_ran);
	} else {
		/* Dropped by the scheduler (its file was closed) before it ran. */
		atomic64_inc(&simgpu_jobs_dropped);
		simgpu_job_retire(job, SIMGPU_JOB_ERROR);
		simgpu_job_dequeued(job);
		kfree(job->hw_fence);
	}
	if (job->src)
		drm_gem_object_put(&job->src->base.base);
	if (job->dst)
		drm_gem_object_put(&job->dst->base.base);
	if (job->has_acct)
		drmacct_job_fini(&job->acct);
	simgpu_result_put(job->result);
	kfree(job);
	atomic_dec(&simgpu_live_jobs);
	/* Before the file's reference goes: the count lives in the file. */
	simgpu_jobs_put(sdev, sfile);
	simgpu_file_put(sfile);
}

const struct drm_sched_backend_ops simgpu_sched_ops = {
	.run_job = simgpu_sched_run_job,
	.timedout_job = simgpu_sched_timedout_job,
	.free_job = simgpu_sched_free_job,
};

/*
 * The entities of a file, enumerated 0 .. n - 1: one per engine instance.
 * A job for SIMGPU_INSTANCE_ANY goes to the entity of the instance with
 * the least work (see simgpu_pick_instance()).
 */
static struct drm_sched_entity *
simgpu_file_entity(struct simgpu_file *sfile, unsigned int k,
		   struct drm_gpu_scheduler ***list)
{
	struct simgpu_device *sdev = sfile->sdev;
	unsigned int e;

	for (e = 0; e < SIMGPU_NUM_ENGINES; e++) {
		unsigned int cap = simgpu_engines[e].capacity;

		if (k < cap) {
			*list = sfile->queues ? &sfile->queues->list[e][k] :
				&sdev->sched_list[e][k];
			return &sfile->entity[e][k];
		}
		k -= cap;
	}
	return NULL;
}

/**
 * simgpu_file_entities_init() - one entity per engine instance
 * @sfile: the new file
 *
 * Return: 0 or a negative errno; on error no entity is left.
 */
int simgpu_file_entities_init(struct simgpu_file *sfile)
{
	struct drm_gpu_scheduler **list;
	struct drm_sched_entity *entity;
	unsigned int k;
	int ret;

	for (k = 0; (entity = simgpu_file_entity(sfile, k, &list)); k++) {
		ret = drm_sched_entity_init(entity, DRM_SCHED_PRIORITY_NORMAL,
					    list, 1, NULL);
		if (ret) {
			while (k--)
				drm_sched_entity_fini(simgpu_file_entity(sfile, k, &list));
			return ret;
		}
	}
	return 0;
}

/**
 * simgpu_file_entities_fini() - tear down a file's entities
 * @sfile: the file
 *
 * The jobs still queued in them are dropped (their results are errors
 * nobody can collect any more); jobs the scheduler already handed to an
 * engine finish normally and keep their statistics alive. Fast: it never
 * waits for the hardware. A process that closes its file cleanly had its
 * queued jobs run before, in simgpu_flush(), as with any GPU driver.
 */
void simgpu_file_entities_fini(struct simgpu_file *sfile)
{
	struct drm_gpu_scheduler **list;
	struct drm_sched_entity *entity;
	unsigned int k;

	for (k = 0; (entity = simgpu_file_entity(sfile, k, &list)); k++)
		drm_sched_entity_fini(entity);
}

/*
 * The instance of engine @e for a SIMGPU_INSTANCE_ANY job: the one with
 * the fewest unfinished jobs, so one client's burst spreads over all
 * instances (drm_sched's own balancing only moves an idle entity).
 */
static unsigned int simgpu_pick_instance(struct simgpu_device *sdev, unsigned int e)
{
	unsigned int i, best = 0, cap = simgpu_engines[e].capacity;
	int load, best_load = INT_MAX;

	for (i = 0; i < cap; i++) {
		load = atomic_read(&sdev->inst[e][i].load);
		if (load < best_load) {
			best_load = load;
			best = i;
		}
	}
	return best;
}

/* Is [off, off + len) inside an object of @size bytes? len > 0. */
static bool simgpu_range_ok(u64 off, u64 len, u64 size)
{
	return off < size && len <= size - off;
}

static int simgpu_submit_check(const struct drm_simgpu_submit *args)
{
	if (args->flags & ~SIMGPU_SUBMIT_HANG || args->reserved[0] || args->reserved[1])
		return -EINVAL;
	if (args->flags & SIMGPU_SUBMIT_HANG && args->op != SIMGPU_OP_BUSY)
		return -EINVAL;
	if (args->engine >= SIMGPU_NUM_ENGINES)
		return -EINVAL;
	if (args->instance != SIMGPU_INSTANCE_ANY &&
	    args->instance >= simgpu_engines[args->engine].capacity)
		return -EINVAL;

	switch (args->op) {
	case SIMGPU_OP_BUSY:
		if (!args->busy_ns || args->busy_ns > SIMGPU_MAX_BUSY_NS)
			return -EINVAL;
		if (args->src_handle || args->dst_handle || args->src_offset ||
		    args->dst_offset || args->size || args->value)
			return -EINVAL;
		return 0;
	case SIMGPU_OP_FILL:
		if (args->busy_ns || args->src_handle || args->src_offset ||
		    !args->size || args->value > 0xff)
			return -EINVAL;
		return 0;
	case SIMGPU_OP_COPY:
		if (args->busy_ns || args->value || !args->size)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

static struct simgpu_bo *simgpu_bo_lookup(struct drm_file *file, u32 handle)
{
	struct drm_gem_object *obj;

	obj = handle ? drm_gem_object_lookup(file, handle) : NULL;
	return obj ? to_simgpu_bo(obj) : NULL;
}

/* Look up and range-check the objects of a FILL/COPY job. */
static int simgpu_submit_objects(struct drm_file *file,
				 const struct drm_simgpu_submit *args,
				 struct simgpu_job *job)
{
	u64 dsize, ssize;

	if (args->op == SIMGPU_OP_BUSY)
		return 0;

	job->dst = simgpu_bo_lookup(file, args->dst_handle);
	if (!job->dst)
		return -ENOENT;
	if (args->op == SIMGPU_OP_COPY) {
		job->src = simgpu_bo_lookup(file, args->src_handle);
		if (!job->src)
			return -ENOENT;
	}

	dsize = job->dst->base.base.size;
	if (!simgpu_range_ok(args->dst_offset, args->size, dsize))
		return -EINVAL;
	if (job->src) {
		ssize = job->src->base.base.size;
		if (!simgpu_range_ok(args->src_offset, args->size, ssize))
			return -EINVAL;
		/* Overlapping copies within one object are not supported. */
		if (job->src == job->dst &&
		    args->src_offset < args->dst_offset + args->size &&
		    args->dst_offset < args->src_offset + args->size)
			return -EINVAL;
	}
	/* Without backing pages (purged) there is nothing to work on. */
	if (!READ_ONCE(job->dst->base.pages) ||
	    (job->src && !READ_ONCE(job->src->base.pages)))
		return -EINVAL;
	return 0;
}

/* The GEM objects of a FILL/COPY job, each once: dst, then src. */
static unsigned int simgpu_job_objs(struct simgpu_job *job, struct drm_gem_object **objs)
{
	unsigned int n = 0;

	if (job->dst)
		objs[n++] = &job->dst->base.base;
	if (job->src && job->src != job->dst)
		objs[n++] = &job->src->base.base;
	return n;
}

/*
 * Implicit sync, the way Mesa's GL drivers expect it: a job waits for the
 * fences in its objects' reservations (a writer of dst waits for every
 * earlier reader and writer, a reader of src for earlier writers), so a
 * COPY on one engine of what a FILL on another writes sees the FILL's
 * bytes without an explicit wait. Locks the objects' reservations (they
 * stay locked until simgpu_job_publish() put the job's fence in them) and
 * reserves a fence slot in each.
 */
static int simgpu_job_sync(struct simgpu_job *job, struct ww_acquire_ctx *ww)
{
	struct drm_gem_object *objs[2];
	unsigned int i, n = simgpu_job_objs(job, objs);
	int ret;

	if (!n)
		return 0;
	ret = drm_gem_lock_reservations(objs, n, ww);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		ret = dma_resv_reserve_fences(objs[i]->resv, 1);
		if (ret)
			goto err;
		ret = drm_sched_job_add_implicit_dependencies(&job->base, objs[i],
							      objs[i] == &job->dst->base.base);
		if (ret)
			goto err;
	}
	return 0;
err:
	drm_gem_unlock_reservations(objs, n, ww);
	return ret;
}

/*
 * After arm: the job's finished fence goes into its objects' reservations
 * (a write of dst, a read of src), which are then unlocked.
 */
static void simgpu_job_publish(struct simgpu_job *job, struct ww_acquire_ctx *ww)
{
	struct dma_fence *done = &job->base.s_fence->finished;
	struct drm_gem_object *objs[2];
	unsigned int i, n = simgpu_job_objs(job, objs);

	if (!n)
		return;
	for (i = 0; i < n; i++)
		dma_resv_add_fence(objs[i]->resv, done,
				   objs[i] == &job->dst->base.base ?
				   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	drm_gem_unlock_reservations(objs, n, ww);
}

/*
 * The DRM client id the scheduler records for a job (6.17+ puts it in its
 * tracepoints): the helper's, which is the core's where the core has one;
 * without accounting the core's, and 0 only where neither exists (6.1).
 */
static u64 simgpu_file_client_id(struct drm_file *file)
{
	struct simgpu_file *sfile = file->driver_priv;
	u64 id = 0;

	if (sfile->acct)
		return drmacct_client_id(sfile->acct);
	drmacct_compat_file_client_id(file, &id);
	return id;
}

/*
 * The scheduler ends a job (its done event, then its finished fence) inside
 * the hardware fence's signal only when drm_sched_run_job_work() added its
 * callback before the job completed; when the job completes first, the
 * worker ends it itself, later -- after simgpu_inst_finish() read
 * signalled_ns (a worker preempted on PREEMPT_RT, or a vCPU its host does
 * not run, for a millisecond). finished_ns is read when the finished fence
 * signals, so the scheduler's end of a job is measured whichever way.
 */
static void simgpu_result_finished(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct simgpu_result *result = container_of(cb, struct simgpu_result, finished_cb);

	result->finished_ns = ktime_get_ns();
	/* Pairs with WAIT's acquire: finished_ns before the flag. */
	smp_store_release(&result->finished_pending, false);
	wake_up_all(result->done_wq);
	simgpu_result_put(result);
}

/* Read finished_ns when @finished signals; the callback holds a reference. */
static void simgpu_result_watch(struct simgpu_result *result, struct dma_fence *finished,
				wait_queue_head_t *wq)
{
	result->done_wq = wq;
	result->finished_pending = true;
	kref_get(&result->ref);
	if (dma_fence_add_callback(finished, &result->finished_cb, simgpu_result_finished)) {
		/* Signalled already (not before its push, but -ENOENT is an answer). */
		result->finished_ns = ktime_get_ns();
		result->finished_pending = false;
		simgpu_result_put(result);
	}
}

static void simgpu_job_free_unsubmitted(struct simgpu_job *job)
{
	if (job->src)
		drm_gem_object_put(&job->src->base.base);
	if (job->dst)
		drm_gem_object_put(&job->dst->base.base);
	kfree(job->hw_fence);
	kfree(job);
}

/**
 * simgpu_ioctl_submit() - DRM_IOCTL_SIMGPU_SUBMIT
 * @drm: the device
 * @data: struct drm_simgpu_submit
 * @file: the submitting file
 *
 * Validates everything before anything is allocated or published; on
 * error no job, result or reference is left behind. Waits (interruptibly)
 * while the file has SIMGPU_MAX_INFLIGHT unfinished jobs.
 *
 * Return: 0 or a negative errno (-ENODEV after the device was unplugged).
 */
int simgpu_ioctl_submit(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct simgpu_device *sdev = to_simgpu(drm);
	struct simgpu_file *sfile = file->driver_priv;
	struct drm_simgpu_submit *args = data;
	struct drm_sched_entity *entity;
	struct simgpu_result *result;
	struct ww_acquire_ctx ww;
	unsigned int instance;
	struct simgpu_job *job;
	int ret, idx;
	u32 id;

	ret = simgpu_submit_check(args);
	if (ret)
		return ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (!job->hw_fence) {
		kfree(job);
		return -ENOMEM;
	}
	ret = simgpu_submit_objects(file, args, job);
	if (ret)
		goto err_job;

	result = kzalloc(sizeof(*result), GFP_KERNEL);
	if (!result) {
		ret = -ENOMEM;
		goto err_job;
	}
	atomic_inc(&simgpu_live_results);
	kref_init(&result->ref);		/* the results table's */
	INIT_LIST_HEAD(&result->done_node);

	job->sdev = sdev;
	job->engine = args->engine;
	job->op = args->op;
	job->busy_ns = args->busy_ns;
	job->src_offset = args->src_offset;
	job->dst_offset = args->dst_offset;
	job->size = args->size;
	job->value = args->value;
	job->result = result;
	INIT_LIST_HEAD(&job->node);

	job->hang = args->flags & SIMGPU_SUBMIT_HANG;

	/*
	 * inflight only grows under submit_lock, so the check under the lock
	 * holds until the increment below: concurrent submitters cannot all
	 * pass one free slot.
	 */
	for (;;) {
		ret = wait_event_interruptible(sdev->done_wq,
					       atomic_read(&sfile->inflight) <
					       SIMGPU_MAX_INFLIGHT);
		if (ret)
			goto err_result;
		mutex_lock(&sfile->submit_lock);
		if (atomic_read(&sfile->inflight) < SIMGPU_MAX_INFLIGHT)
			break;
		mutex_unlock(&sfile->submit_lock);
	}
	/* Past the wait: an unplug from here on waits for this SUBMIT. */
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto err_unlock;
	}
	mutex_lock(&sfile->results_lock);
	simgpu_results_prune(sfile);
	/* Cyclic: a forgotten id is not handed out again (until 2^32 jobs). */
	ret = xa_alloc_cyclic(&sfile->results, &id, result, xa_limit_32b,
			      &sfile->next_id, GFP_KERNEL);
	mutex_unlock(&sfile->results_lock);
	if (ret < 0)
		goto err_exit;
	ret = 0;
	result->id = id;
	/* Under submit_lock: the instance picked and the push are one step. */
	instance = args->instance != SIMGPU_INSTANCE_ANY ? args->instance :
		   simgpu_pick_instance(sdev, args->engine);
	entity = &sfile->entity[args->engine][instance];
	job->inst = &sdev->inst[args->engine][instance];
	ret = drmacct_compat_sched_job_init(&job->base, entity, file,
					    simgpu_file_client_id(file));
	if (ret)
		goto err_erase;
	ret = simgpu_job_sync(job, &ww);
	if (ret) {
		drm_sched_job_cleanup(&job->base);
		goto err_erase;
	}

	/* Nothing can fail from here on. */
	if (sfile->acct) {
		WARN_ON(drmacct_job_init(&job->acct, sfile->acct, args->engine));
		job->has_acct = true;
		job->client = sfile->acct;
	}
	kref_get(&sfile->ref);
	job->sfile = sfile;
	kref_get(&result->ref);			/* the job's */
	atomic_inc(&simgpu_live_jobs);
	atomic_inc(&sfile->inflight);
	atomic_inc(&sfile->queued);
	atomic_inc(&job->inst->load);
	simgpu_jobs_get(sdev, sfile);
	simgpu_job_objects_active(job, true);
	result->queued_ns = ktime_get_ns();
	drm_sched_job_arm(&job->base);
	simgpu_result_watch(result, &job->base.s_fence->finished, &sdev->done_wq);
	simgpu_job_publish(job, &ww);
	drm_sched_entity_push_job(&job->base);
	drm_dev_exit(idx);
	mutex_unlock(&sfile->submit_lock);

	args->job_id = id;
	return 0;

err_erase:
	mutex_lock(&sfile->results_lock);
	xa_erase(&sfile->results, id);
	mutex_unlock(&sfile->results_lock);
err_exit:
	drm_dev_exit(idx);
err_unlock:
	mutex_unlock(&sfile->submit_lock);
err_result:
	simgpu_result_put(result);
err_job:
	simgpu_job_free_unsubmitted(job);
	return ret;
}

static bool simgpu_result_done(const struct simgpu_result *result)
{
	/*
	 * Pairs with the release in simgpu_job_retire() (fields and
	 * signal_pending before done), then with simgpu_inst_finish()'s
	 * (signalled_ns before signal_pending clears).
	 */
	return smp_load_acquire(&result->done) &&
	       !smp_load_acquire(&result->signal_pending) &&
	       !smp_load_acquire(&result->finished_pending);
}

/**
 * simgpu_ioctl_wait() - DRM_IOCTL_SIMGPU_WAIT
 * @drm: the device
 * @data: struct drm_simgpu_wait
 * @file: the file that submitted the job
 *
 * The timeout is a CLOCK_MONOTONIC deadline with SIMGPU_WAIT_ABSOLUTE, so
 * a WAIT that a signal interrupts and the kernel restarts does not wait
 * longer than asked; a relative timeout is written back reduced by the
 * time already waited, for the same reason.
 *
 * Return: 0 with the job's result; -EINVAL for unknown flags or non-zero
 * pad/reserved, -ENODEV after the device was unplugged, -ENOENT for an id
 * this file never returned or whose result
 * was forgotten (SIMGPU_MAX_DONE_RESULTS finished after it), -EBUSY when
 * polling (timeout 0) an unfinished job, -ETIME when the timeout expired,
 * -ERESTARTSYS on a signal.
 */
int simgpu_ioctl_wait(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct simgpu_device *sdev = to_simgpu(drm);
	struct simgpu_file *sfile = file->driver_priv;
	struct drm_simgpu_wait *args = data;
	struct simgpu_result *result;
	u64 now, deadline;
	int ret = 0, idx;

	if (args->flags & ~SIMGPU_WAIT_ABSOLUTE || args->pad)
		return -EINVAL;
	if (!args->job_id || args->job_id > U32_MAX)
		return -ENOENT;
	/* Only the lookup inside drm_dev_enter(): an unplug never waits for a waiter. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	mutex_lock(&sfile->results_lock);
	result = xa_load(&sfile->results, args->job_id);
	if (result)
		kref_get(&result->ref);
	mutex_unlock(&sfile->results_lock);
	drm_dev_exit(idx);
	if (!result)
		return -ENOENT;

	if (!simgpu_result_done(result)) {
		now = ktime_get_ns();
		if (args->flags & SIMGPU_WAIT_ABSOLUTE)
			deadline = args->timeout_ns;
		else
			deadline = args->timeout_ns > U64_MAX - now ? U64_MAX :
				   now + args->timeout_ns;
		if (!args->timeout_ns) {
			ret = -EBUSY;
		} else if (deadline <= now) {
			ret = -ETIME;
		} else if (deadline >= KTIME_MAX) {
			/* No timer at all: wait until done. */
			ret = wait_event_interruptible(sdev->done_wq,
						       simgpu_result_done(result));
		} else {
			/*
			 * An hrtimer on CLOCK_MONOTONIC never fires before the
			 * deadline (jiffies would round it down by a tick).
			 */
			ret = wait_event_interruptible_hrtimeout(sdev->done_wq,
								 simgpu_result_done(result),
								 ns_to_ktime(deadline - now));
		}
		if (ret == -ERESTARTSYS && !(args->flags & SIMGPU_WAIT_ABSOLUTE) &&
		    deadline < KTIME_MAX) {
			now = ktime_get_ns();
			args->timeout_ns = deadline > now ? deadline - now : 1;
		}
	}
	if (!ret) {
		args->status = result->status;
		args->instance = result->instance;
		args->queued_ns = result->queued_ns;
		args->run_ns = result->run_ns;
		args->start_ns = result->start_ns;
		args->end_ns = result->end_ns;
		args->cycles = result->cycles;
		args->hw_start_ns = result->hw_start_ns;
		args->hw_end_ns = result->hw_end_ns;
		args->start_gap_ns = result->start_gap_ns;
		args->end_gap_ns = result->end_gap_ns;
		args->signalled_ns = result->signalled_ns;
		args->finished_ns = result->finished_ns;
	}
	simgpu_result_put(result);
	return ret;	/* 0, -EBUSY, -ETIME or -ERESTARTSYS */
}
