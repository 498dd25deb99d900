// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct — per-client GPU usage accounting helper: devices, clients, jobs.
 */
#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "drmacct_compat.h"
#include "drmacct_internal.h"

#define CREATE_TRACE_POINTS
#include "drmacct_trace.h"

/*
 * Every drmacct event fires with preemption disabled, on every kernel.
 * 6.1 and 6.12 run tracepoint callbacks that way anyway; 7.3 calls them
 * under SRCU with only migration disabled, and a task preempted inside a
 * BPF program attached to the event (tp_btf) holds that program on its
 * CPU: the kernel skips it for the next event there, counts a recursion
 * miss, and the event is lost to it. With preemption off only an
 * interrupt can nest, which the BPF side handles (its "_nested" twins).
 * The cost is the programs' run time without preemption, as on the older
 * kernels.
 */
#define drmacct_trace(event, ...)		\
	do {					\
		preempt_disable();		\
		trace_##event(__VA_ARGS__);	\
		preempt_enable();		\
	} while (0)

/*
 * For the selftests only (selftests/bpf/test_bpf_order): every job's
 * drmacct_job_begin event is held back and fired right after the event
 * that ends that run, with its own arguments, so a tracer sees each end
 * before its begin -- what can happen to any driver when the end is traced
 * on another CPU, or from an interrupt, before the begin's tracepoint ran.
 * The accounting itself is unchanged. Read at each begin.
 */
static bool trace_end_first;
module_param(trace_end_first, bool, 0600);
MODULE_PARM_DESC(trace_end_first,
		 "Trace each job's begin after its end (for tests; default off)");

enum {
	JOB_IDLE = 0,
	JOB_RUNNING = 1,
	JOB_ENDED = 2,
};

/*
 * Client ids. Where the DRM core assigns them (drm_file.client_id, 6.5+),
 * a client of a DRM file has the core's id, so fdinfo (printed by the core),
 * tracepoints, ioctls and BPF maps all name it alike. Before that, and for
 * clients without a file, the helper assigns its own: global and never
 * reused, not even across an unload and reload of this module within one
 * boot, so a tracker or BPF map keyed by client id can never take a new
 * client for an old one. Where the core also assigns ids, the helper's own
 * carry DRMACCT_OWN_ID_BIT so the two sequences never meet.
 *
 * The rule that makes the helper's ids unique without any state surviving
 * the module: an id is never larger than CLOCK_BOOTTIME in microseconds at
 * the moment it is handed out (drmacct_alloc_id() waits for the clock
 * when the counter runs ahead of it). At module init the counter is seeded
 * with that clock, so every id of this load is > seed >= clock at the end of
 * any earlier load >= every id an earlier load handed out. CLOCK_BOOTTIME
 * never goes backwards within a boot (it also counts suspend), so this holds
 * however often the module is reloaded. The cost is a ceiling of one new
 * client per microsecond system-wide, far above what opening a DRM file
 * allows; microseconds keep ids below 2^53 (exact in JSON doubles) for
 * centuries of uptime.
 */
#define DRMACCT_OWN_ID_BIT	BIT_ULL(62)

/*
 * Device ids (u32, in the tracepoints and BPF maps) follow the same rule
 * with a coarser clock: CLOCK_BOOTTIME in units of 2^26 ns (67.1 ms), so a
 * u32 lasts 9 years of uptime. A device is created rarely and may sleep:
 * one that comes within 67 ms of the last one waits for the clock.
 */
#define DRMACCT_DEVICE_ID_SHIFT	26

static atomic64_t drmacct_last_client_id = ATOMIC64_INIT(0);
static atomic64_t drmacct_last_device_id = ATOMIC64_INIT(0);

static u64 drmacct_client_id_clock(void)
{
	return div_u64(ktime_get_boottime_ns(), NSEC_PER_USEC);
}

static u64 drmacct_device_id_clock(void)
{
	return ktime_get_boottime_ns() >> DRMACCT_DEVICE_ID_SHIFT;
}

/*
 * The next id after *@last_id that is not above @clock(): waits (spinning,
 * or sleeping when @may_sleep) while the counter is ahead of the clock.
 */
static u64 drmacct_alloc_id(atomic64_t *last_id, u64 (*clock)(void), bool may_sleep)
{
	s64 last = atomic64_read(last_id);

	for (;;) {
		u64 id = (u64)last + 1;

		if (id > clock()) {
			if (may_sleep)
				fsleep(1000);
			else
				cpu_relax();
			last = atomic64_read(last_id);
			continue;
		}
		if (atomic64_try_cmpxchg(last_id, &last, id))
			return id;
	}
}

static u64 drmacct_new_client_id(struct drm_file *file)
{
	u64 id;

	if (file && drmacct_compat_file_client_id(file, &id))
		return id;
	id = drmacct_alloc_id(&drmacct_last_client_id, drmacct_client_id_clock, false);
	return DRMACCT_CORE_PRINTS_IDS ? id | DRMACCT_OWN_ID_BIT : id;
}

/* A key component: printable, no whitespace, no ':' and not empty. */
static bool drmacct_name_ok(const char *name, size_t max)
{
	size_t len, i;

	if (!name)
		return false;
	len = strnlen(name, max + 1);
	if (len == 0 || len > max)
		return false;
	for (i = 0; i < len; i++) {
		if (!isgraph(name[i]) || name[i] == ':')
			return false;
	}
	return true;
}

/**
 * drmacct_device_create() - register a device with the helper
 * @desc: engines, memory regions and identity of the device
 *
 * Copies @desc. Engine and region names must be non-empty, at most
 * %DRMACCT_NAME_MAX characters, printable, without whitespace or ':', and
 * unique; every engine has capacity >= 1, measures time and/or cycles, and
 * has a maximum frequency or a total-cycles callback (not both) only when
 * it measures cycles. Memory keys and flags must be known ones; legacy
 * drm-memory-<r> needs the resident key.
 *
 * The device gets an id for the tracepoints that no other device had in
 * this boot, also across reloads of this module (waiting up to 67 ms for
 * the clock when devices come quickly one after another).
 *
 * Context: process context, may sleep.
 * Return: the device, ERR_PTR(-EINVAL) on a bad descriptor or
 * ERR_PTR(-ENOMEM).
 */
struct drmacct_device *drmacct_device_create(const struct drmacct_device_desc *desc)
{
	struct drmacct_device *adev;
	unsigned int i, j;

	if (!desc || !drmacct_name_ok(desc->driver_name, DRMACCT_NAME_MAX))
		return ERR_PTR(-EINVAL);
	if (desc->flags & ~DRMACCT_DEVICE_LEGACY_MEMORY ||
	    desc->mem_keys & ~DRMACCT_MEM_KEYS_ALL)
		return ERR_PTR(-EINVAL);
	if ((desc->flags & DRMACCT_DEVICE_LEGACY_MEMORY) &&
	    !(desc->mem_keys & DRMACCT_MEM_KEY_RESIDENT))
		return ERR_PTR(-EINVAL);
	if ((desc->num_engines && !desc->engines) ||
	    (desc->num_regions && !desc->regions))
		return ERR_PTR(-EINVAL);
	for (i = 0; i < desc->num_engines; i++) {
		const struct drmacct_engine_desc *e = &desc->engines[i];

		if (!drmacct_name_ok(e->name, DRMACCT_NAME_MAX) || !e->capacity)
			return ERR_PTR(-EINVAL);
		if (!e->flags ||
		    e->flags & ~(DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES))
			return ERR_PTR(-EINVAL);
		if (e->total_cycles && e->max_freq_hz)
			return ERR_PTR(-EINVAL);
		if (!(e->flags & DRMACCT_ENGINE_CYCLES) &&
		    (e->total_cycles || e->max_freq_hz))
			return ERR_PTR(-EINVAL);
		for (j = 0; j < i; j++)
			if (!strcmp(desc->engines[j].name, e->name))
				return ERR_PTR(-EINVAL);
	}
	for (i = 0; i < desc->num_regions; i++) {
		if (!drmacct_name_ok(desc->regions[i], DRMACCT_NAME_MAX))
			return ERR_PTR(-EINVAL);
		for (j = 0; j < i; j++)
			if (!strcmp(desc->regions[j], desc->regions[i]))
				return ERR_PTR(-EINVAL);
	}

	adev = kzalloc(struct_size(adev, engines, desc->num_engines),
		       GFP_KERNEL);
	if (!adev)
		return ERR_PTR(-ENOMEM);
	if (desc->num_regions) {
		adev->regions = kcalloc(desc->num_regions,
					sizeof(*adev->regions), GFP_KERNEL);
		if (!adev->regions) {
			kfree(adev);
			return ERR_PTR(-ENOMEM);
		}
	}

	kref_init(&adev->ref);
	init_rwsem(&adev->cb_lock);
	adev->id = drmacct_alloc_id(&drmacct_last_device_id, drmacct_device_id_clock, true);
	adev->flags = desc->flags;
	adev->mem_keys = desc->mem_keys;
	adev->num_engines = desc->num_engines;
	adev->num_regions = desc->num_regions;
	adev->priv = desc->priv;
	strscpy(adev->driver_name, desc->driver_name, sizeof(adev->driver_name));
	if (desc->dev && dev_is_pci(desc->dev))
		strscpy(adev->pdev, pci_name(to_pci_dev(desc->dev)),
			sizeof(adev->pdev));
	strscpy(adev->dev_name, desc->dev ? dev_name(desc->dev) : "",
		sizeof(adev->dev_name));
	for (i = 0; i < desc->num_engines; i++) {
		struct drmacct_engine *e = &adev->engines[i];

		strscpy(e->name, desc->engines[i].name, sizeof(e->name));
		e->flags = desc->engines[i].flags;
		e->capacity = desc->engines[i].capacity;
		e->max_freq_hz = desc->engines[i].max_freq_hz;
		e->total_cycles = desc->engines[i].total_cycles;
	}
	for (i = 0; i < desc->num_regions; i++)
		strscpy(adev->regions[i], desc->regions[i],
			sizeof(adev->regions[i]));
	return adev;
}
EXPORT_SYMBOL_GPL(drmacct_device_create);

static void drmacct_device_release(struct kref *ref)
{
	struct drmacct_device *adev = container_of(ref, struct drmacct_device, ref);

	kfree(adev->regions);
	kfree(adev);
}

static void drmacct_device_put(struct drmacct_device *adev)
{
	kref_put(&adev->ref, drmacct_device_release);
}

/**
 * drmacct_device_destroy() - the driver is done with a device
 * @adev: device from drmacct_device_create(), may be NULL or an ERR_PTR
 *
 * Detaches the driver: once this returns, no callback of the descriptor is
 * called and its @priv is not used again, even by files of the device that
 * are still open (after a hot-unplug, say); their fdinfo then leaves out
 * drm-total-cycles-<e>. Clients that are still alive keep the helper's own
 * data alive. The driver may free @priv and unload after this.
 *
 * Context: process context, may sleep (waits for callbacks in progress).
 */
void drmacct_device_destroy(struct drmacct_device *adev)
{
	if (IS_ERR_OR_NULL(adev))
		return;
	down_write(&adev->cb_lock);
	adev->detached = true;
	adev->priv = NULL;
	up_write(&adev->cb_lock);
	drmacct_device_put(adev);
}
EXPORT_SYMBOL_GPL(drmacct_device_destroy);

/**
 * drmacct_device_id() - the device's id in drmacct's tracepoints
 * @adev: the device
 *
 * Context: any context.
 * Return: the id, never one another device had in this boot.
 */
u32 drmacct_device_id(const struct drmacct_device *adev)
{
	return adev->id;
}
EXPORT_SYMBOL_GPL(drmacct_device_id);

/**
 * drmacct_device_total_cycles() - an engine's drm-total-cycles, if the
 *	driver can still say
 * @adev: the device
 * @engine: engine index, with a total-cycles callback
 * @cycles: set to the callback's answer
 *
 * Context: process context.
 * Return: true, or false once the driver has detached.
 */
bool drmacct_device_total_cycles(struct drmacct_device *adev, unsigned int engine,
				 u64 *cycles)
{
	bool ok;

	down_read(&adev->cb_lock);
	ok = !adev->detached;
	if (ok)
		*cycles = adev->engines[engine].total_cycles(adev->priv, engine);
	up_read(&adev->cb_lock);
	return ok;
}

/*
 * The node a tracer finds the device's clients on: its render node, or
 * the file's own node where the device has none (an accel device, a
 * display-only one).
 */
static dev_t drmacct_file_rdev(const struct drm_file *file)
{
	const struct drm_minor *minor = file ? file->minor : NULL;

	if (!minor)
		return 0;
	if (minor->dev && minor->dev->render)
		minor = minor->dev->render;
	return minor->kdev ? minor->kdev->devt : 0;
}

/**
 * drmacct_trace_device_names() - trace the names of a client's device
 * @client: the client
 *
 * Emits one drmacct_device_name event per engine, then one per region, in
 * index order, with the client's id and the node its device has (0 for a client with
 * no DRM file). Nothing is done while the event is off.
 *
 * Context: any context but NMI.
 */
void drmacct_trace_device_names(const struct drmacct_client *client)
{
	const struct drmacct_device *adev = client->adev;
	unsigned int i;

	if (!trace_drmacct_device_name_enabled())
		return;
	for (i = 0; i < adev->num_engines; i++)
		drmacct_trace(drmacct_device_name, client->id, adev->id,
			      client->rdev, DRMACCT_NAME_ENGINE, i,
			      adev->engines[i].name, adev->engines[i].capacity);
	for (i = 0; i < adev->num_regions; i++)
		drmacct_trace(drmacct_device_name, client->id, adev->id,
			      client->rdev, DRMACCT_NAME_REGION, i,
			      adev->regions[i], 0);
}

/**
 * drmacct_client_open() - create the accounting state of a new DRM file
 * @adev: the device
 * @file: the DRM file the client stands for (from drm_driver.open); NULL
 *	only for a client no DRM file shows, such as an in-kernel test's
 *
 * The client's id is the DRM core's drm_file.client_id where the core has
 * one (it prints drm-client-id itself), else a new global id the helper
 * assigns: larger than every id it handed out before in this boot, also by
 * earlier loads of this module. Either way it is never reused within a
 * boot. Emits the drmacct_client_open tracepoint, then drmacct_device_name
 * for each engine and region of @adev.
 *
 * Context: process context, may sleep.
 * Return: the client, or ERR_PTR(-ENOMEM).
 */
struct drmacct_client *drmacct_client_open(struct drmacct_device *adev,
					   struct drm_file *file)
{
	struct drmacct_client *client;
	unsigned int n = adev->num_engines;
	size_t size;

	/* The close tracepoint reads the atomic64_t arrays as u64 arrays. */
	BUILD_BUG_ON(sizeof(atomic64_t) != sizeof(u64));
	/* One allocation: the client, then 2 atomic64 arrays, then an atomic array. */
	size = size_add(sizeof(*client),
			size_add(array3_size(n, 2, sizeof(atomic64_t)),
				 array_size(n, sizeof(atomic_t))));
	client = kzalloc(size, GFP_KERNEL);
	if (!client)
		return ERR_PTR(-ENOMEM);

	client->q = (atomic64_t *)(client + 1);
	client->cycles = client->q + n;
	client->running = (atomic_t *)(client->cycles + n);

	kref_init(&client->ref);
	kref_get(&adev->ref);
	client->adev = adev;
	atomic64_set(&client->wseq, 0);
	raw_spin_lock_init(&client->name_lock);
	seqcount_raw_spinlock_init(&client->name_seq, &client->name_lock);
	client->id = drmacct_new_client_id(file);
	client->rdev = drmacct_file_rdev(file);

	drmacct_trace(drmacct_client_open, client->id, adev->id, adev->driver_name,
		      adev->dev_name);
	drmacct_trace_device_names(client);
	return client;
}
EXPORT_SYMBOL_GPL(drmacct_client_open);

/* After a grace period: nothing can be in hard interrupt context here. */
static void drmacct_client_free(struct rcu_head *rcu)
{
	struct drmacct_client *client = container_of(rcu, struct drmacct_client, rcu);
	struct drmacct_device *adev = client->adev;

	kfree(client);
	drmacct_device_put(adev);
}

/*
 * The last reference may go in any context: the job completion that drops
 * it may run in a hard interrupt, where PREEMPT_RT forbids kfree(). The
 * tracepoint fires here, the memory goes after an RCU grace period
 * (call_rcu() is callable from any context but NMI).
 */
static void drmacct_client_release(struct kref *ref)
{
	struct drmacct_client *client = container_of(ref, struct drmacct_client, ref);
	struct drmacct_device *adev = client->adev;

	/*
	 * No job holds a reference any more: the totals are final, and with
	 * nothing running q is the busy time.
	 */
	drmacct_trace(drmacct_client_close, client->id, adev->id, adev->num_engines,
		      (const u64 *)client->q, (const u64 *)client->cycles);
	call_rcu(&client->rcu, drmacct_client_free);
}

/**
 * drmacct_client_close() - the DRM file of a client was closed
 * @client: client from drmacct_client_open(), may be NULL or an ERR_PTR
 *
 * Drops the file's reference. Jobs that still run keep the statistics
 * alive; the drmacct_client_close tracepoint fires with the final totals
 * when the last of them has ended, and the memory goes an RCU grace period
 * later.
 *
 * Context: any context but NMI (hard interrupts on PREEMPT_RT too).
 */
void drmacct_client_close(struct drmacct_client *client)
{
	if (!IS_ERR_OR_NULL(client))
		kref_put(&client->ref, drmacct_client_release);
}
EXPORT_SYMBOL_GPL(drmacct_client_close);

/**
 * drmacct_client_id() - the drm-client-id of a client
 * @client: the client
 *
 * Context: any context.
 * Return: the id: the DRM file's drm-client-id, never reused within a boot.
 */
u64 drmacct_client_id(const struct drmacct_client *client)
{
	return client->id;
}
EXPORT_SYMBOL_GPL(drmacct_client_id);

/**
 * drmacct_client_set_name() - set or clear drm-client-name
 * @client: the client
 * @name: name bytes (need not be NUL-terminated), kernel memory
 * @len: length of @name; 0 clears the name
 *
 * The name must be at most %DRMACCT_CLIENT_NAME_MAX printable ASCII
 * characters without whitespace. On error the old name is kept.
 *
 * Where the DRM core owns drm-client-name (6.13+: drm_file.client_name,
 * set by userspace with DRM_IOCTL_SET_CLIENT_NAME and printed by
 * drm_show_fdinfo()), the helper keeps and prints no name of its own, so
 * the key never appears twice: this returns -EOPNOTSUPP for any valid name
 * and the driver needs no name ioctl of its own.
 *
 * Context: any context but NMI.
 * Return: 0, -EINVAL for a bad name, or -EOPNOTSUPP where the DRM core
 * owns the name.
 */
int drmacct_client_set_name(struct drmacct_client *client, const char *name,
			    size_t len)
{
	unsigned long flags;
	size_t i;

	if (len > DRMACCT_CLIENT_NAME_MAX || (len && !name))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (!isgraph(name[i]))
			return -EINVAL;
	}
	if (DRMACCT_CORE_OWNS_CLIENT_NAME)
		return -EOPNOTSUPP;

	raw_spin_lock_irqsave(&client->name_lock, flags);
	write_seqcount_begin(&client->name_seq);
	memcpy(client->name, name, len);
	client->name[len] = '\0';
	client->name_len = len;
	write_seqcount_end(&client->name_seq);
	raw_spin_unlock_irqrestore(&client->name_lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(drmacct_client_set_name);

/**
 * drmacct_job_init() - prepare the accounting of a job
 * @job: the job's accounting state (embedded in the driver's job)
 * @client: client the job is charged to
 * @engine: engine index
 *
 * Takes a reference on @client that drmacct_job_fini() drops, so the
 * client's statistics stay alive while the job outlives its file.
 *
 * Context: any context but NMI.
 * Return: 0, or -EINVAL when @engine is out of range.
 */
int drmacct_job_init(struct drmacct_job *job, struct drmacct_client *client,
		     unsigned int engine)
{
	if (engine >= client->adev->num_engines)
		return -EINVAL;
	kref_get(&client->ref);
	job->client = client;
	job->engine = engine;
	job->start_ns = 0;
	job->state = JOB_IDLE;
	job->begin_held = 0;
	return 0;
}
EXPORT_SYMBOL_GPL(drmacct_job_init);

/*
 * A write of usage begins: see struct drmacct_client. Interrupts stay off
 * until it ends, so no reader can interrupt a writer on its own CPU and
 * wait for it for ever, and a writer is never preempted (the section is a
 * clock read and four atomics, also on PREEMPT_RT).
 */
static inline unsigned long drmacct_write_begin(struct drmacct_client *client)
{
	unsigned long flags;

	local_irq_save(flags);
	atomic64_inc(&client->wseq);
	/* A reader that sees any update below sees the writer counted. */
	smp_mb__after_atomic();
	return flags;
}

/* ... and ends. */
static inline void drmacct_write_end(struct drmacct_client *client,
				     unsigned long flags)
{
	/* Every update above is seen before the write counts as finished. */
	smp_mb__before_atomic();
	atomic64_add(DRMACCT_WSEQ_DONE - 1, &client->wseq);
	local_irq_restore(flags);
}

/**
 * drmacct_job_begin() - the job started executing on the engine
 * @job: job prepared with drmacct_job_init(), not running (also after
 *	drmacct_job_reset(), when the driver runs it again)
 *
 * The start time is taken by the helper, inside its write section, so a
 * concurrent reader can never see a start time later than its own clock.
 * Drivers report the returned value as the job's start time. Call it when
 * the hardware starts the job, not when it is queued to the hardware: more
 * of one client's jobs running on an engine than its capacity would count
 * queued time as busy, and WARNs once.
 *
 * Context: any context but NMI (hard interrupts on PREEMPT_RT too).
 * Return: the start time, CLOCK_MONOTONIC (ktime_get_ns()) nanoseconds.
 */
u64 drmacct_job_begin(struct drmacct_job *job)
{
	struct drmacct_client *client = job->client;
	const struct drmacct_engine *eng;
	unsigned int e = job->engine;
	unsigned long flags;
	u32 running;
	u64 now;

	if (WARN_ON_ONCE(job->state != JOB_IDLE))
		return ktime_get_ns();

	flags = drmacct_write_begin(client);
	now = ktime_get_ns();
	atomic64_sub(now, &client->q[e]);
	running = atomic_inc_return(&client->running[e]);
	drmacct_write_end(client, flags);

	job->start_ns = now;
	job->state = JOB_RUNNING;
	eng = &client->adev->engines[e];
	WARN_ONCE(running > eng->capacity,
		  "drmacct: %u jobs of client %llu running on %s:%s of capacity %u (begin a job when the hardware starts it)\n",
		  running, client->id, client->adev->driver_name, eng->name,
		  eng->capacity);
	job->begin_held = READ_ONCE(trace_end_first);
	if (!job->begin_held)
		drmacct_trace(drmacct_job_begin, client->id, e, now, running,
			      client->adev->id);
	return now;
}
EXPORT_SYMBOL_GPL(drmacct_job_begin);

/* Ends the running @job: charges its time up to now and @cycles. */
static u64 drmacct_job_stop(struct drmacct_job *job, u64 cycles, u32 new_state)
{
	struct drmacct_client *client = job->client;
	unsigned int e = job->engine;
	unsigned long flags;
	u32 running;
	u64 now;

	flags = drmacct_write_begin(client);
	now = ktime_get_ns();
	atomic64_add(now, &client->q[e]);
	atomic64_add(cycles, &client->cycles[e]);
	running = atomic_dec_return(&client->running[e]);
	drmacct_write_end(client, flags);

	job->state = new_state;
	drmacct_trace(drmacct_job_end, client->id, e, now, now - job->start_ns, cycles,
		      running, client->adev->id);
	if (job->begin_held) {
		/* the count of running jobs the begin saw: this one as well */
		job->begin_held = 0;
		drmacct_trace(drmacct_job_begin, client->id, e, job->start_ns, running + 1,
			      client->adev->id);
	}
	return now;
}

/**
 * drmacct_job_end() - the job finished executing
 * @job: a job after drmacct_job_begin()
 * @cycles: engine clock cycles the job consumed (driver ground truth)
 *
 * Moves the job's running time into the client's finished busy time and
 * adds @cycles, atomically for readers. The end time is taken inside the
 * write section, which keeps what readers see monotonic.
 *
 * Context: any context but NMI (hard interrupts on PREEMPT_RT too).
 * Return: the end time, CLOCK_MONOTONIC nanoseconds.
 */
u64 drmacct_job_end(struct drmacct_job *job, u64 cycles)
{
	if (WARN_ON_ONCE(job->state != JOB_RUNNING))
		return ktime_get_ns();
	return drmacct_job_stop(job, cycles, JOB_ENDED);
}
EXPORT_SYMBOL_GPL(drmacct_job_end);

/**
 * drmacct_job_reset() - the engine was reset under a job
 * @job: a job prepared with drmacct_job_init(), in any state
 * @cycles: engine cycles the job consumed up to the reset, as far as the
 *	driver knows (0 when it cannot tell)
 *
 * For a GPU reset and the resubmission that follows (drm_sched's timeout
 * handling calls run_job() again for the jobs that had not finished). The
 * rule: every nanosecond a job held the engine is charged to its client,
 * the hung part too. A running job is ended here, as drmacct_job_end()
 * would end it (its time up to now and @cycles are charged, and the
 * drmacct_job_end tracepoint fires for that run), and goes back to not
 * started, so that drmacct_job_begin() may start it again when the driver
 * resubmits it; the new run is charged from that begin. A job that was not
 * running is left as it is (it held the engine for no time), and so is one
 * that had ended.
 *
 * Context: any context but NMI (hard interrupts on PREEMPT_RT too); never
 * concurrently with the job's begin or end.
 * Return: the time the reset ended the run at, CLOCK_MONOTONIC
 * nanoseconds, or 0 when the job was not running.
 */
u64 drmacct_job_reset(struct drmacct_job *job, u64 cycles)
{
	if (job->state != JOB_RUNNING)
		return 0;
	return drmacct_job_stop(job, cycles, JOB_IDLE);
}
EXPORT_SYMBOL_GPL(drmacct_job_reset);

/**
 * drmacct_job_fini() - release the accounting state of a job
 * @job: job prepared with drmacct_job_init(), in any state
 *
 * A job that is still running is ended with 0 cycles first. Drops the
 * client reference taken by drmacct_job_init(); this may release the
 * client and emit drmacct_client_close.
 *
 * Context: any context but NMI (hard interrupts on PREEMPT_RT too: a
 * client released here is freed after an RCU grace period), but never
 * concurrently with drmacct_job_begin() or
 * drmacct_job_end() of the same @job (the job's state is not locked): free
 * a job only after its completion path is done with it, as drm_sched's
 * free_job() is.
 */
void drmacct_job_fini(struct drmacct_job *job)
{
	if (!job->client)
		return;
	if (job->state == JOB_RUNNING)
		drmacct_job_end(job, 0);
	drmacct_client_close(job->client);
	job->client = NULL;
}
EXPORT_SYMBOL_GPL(drmacct_job_fini);

/**
 * drmacct_mem_event() - report a change of a client's memory
 * @client: the client
 * @region: region index
 * @op: what happened
 * @size: bytes of the object concerned
 *
 * Emits the drmacct_mem_change tracepoint. The fdinfo memory keys are not
 * derived from these events (the driver reports them at read time, see
 * drmacct_show_fdinfo()), so a driver may report only what it sees from
 * the client's own point of view.
 *
 * Context: any context but NMI.
 */
void drmacct_mem_event(struct drmacct_client *client, unsigned int region,
		       enum drmacct_mem_op op, u64 size)
{
	if (region >= client->adev->num_regions)
		return;
	drmacct_trace(drmacct_mem_change, client->id, region, op, size, client->adev->id);
}
EXPORT_SYMBOL_GPL(drmacct_mem_event);

void drmacct_client_snapshot(struct drmacct_client *client,
			     unsigned int e, struct drmacct_engine_usage *usage)
{
	u64 cycles, now, seq;
	u32 running;
	s64 q;

	for (;;) {
		seq = atomic64_read(&client->wseq);
		if (seq & DRMACCT_WSEQ_ACTIVE) {
			cpu_relax();
			continue;
		}
		/* The values after the first sequence read (write_begin). */
		smp_rmb();
		q = atomic64_read(&client->q[e]);
		cycles = atomic64_read(&client->cycles[e]);
		running = atomic_read(&client->running[e]);
		now = ktime_get_ns();
		/*
		 * ... and before the second (write_end). A full barrier: the
		 * clock read must be done before the second sequence read, so
		 * that a writer this read does not see (it begins later) reads
		 * the clock later too, and charges no start before @now (an
		 * end charged before @now would make busy time step back).
		 */
		smp_mb();
		if (atomic64_read(&client->wseq) == seq)
			break;
		cpu_relax();
	}

	usage->busy_ns = q + (s64)running * now;
	usage->cycles = cycles;
	usage->running = running;
}

/**
 * drmacct_client_usage() - consistent usage of one engine of a client
 * @client: the client
 * @engine: engine index
 * @usage: filled with busy time (including the running part of in-flight
 *	jobs up to now), cycles and the number of running jobs
 *
 * Lockless; retries while a writer is active. Writers keep interrupts off
 * for their few instructions, so a reader waits only for writers on other
 * CPUs, never for one it interrupted. Successive calls never go backwards.
 *
 * Context: any context but NMI (hard interrupts on PREEMPT_RT too).
 * Return: 0, or -EINVAL when @engine is out of range.
 */
int drmacct_client_usage(struct drmacct_client *client, unsigned int engine,
			 struct drmacct_engine_usage *usage)
{
	if (engine >= client->adev->num_engines)
		return -EINVAL;
	drmacct_client_snapshot(client, engine, usage);
	return 0;
}
EXPORT_SYMBOL_GPL(drmacct_client_usage);

static int __init drmacct_init(void)
{
	/* Ids of this load start above the clocks (see the rule above). */
	atomic64_set(&drmacct_last_client_id, drmacct_client_id_clock());
	atomic64_set(&drmacct_last_device_id, drmacct_device_id_clock());
	return 0;
}
module_init(drmacct_init);

static void __exit drmacct_exit(void)
{
	/* Clients released just before the unload are freed by now. */
	rcu_barrier();
}
module_exit(drmacct_exit);

MODULE_DESCRIPTION("drmacct: DRM per-client usage accounting helper");
MODULE_LICENSE("GPL");
