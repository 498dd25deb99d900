// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct_test_cases — in-kernel checks of the helper's API that no driver
 * exercises through its ioctls: descriptor validation, the keys engine
 * flags and memory keys choose, job reset, writers on every CPU and in hard
 * interrupts against a reader, detaching at destroy, device ids, and (on
 * request only) the capacity warning.
 *
 * One set of cases, two runners (drmacct_test_cases.h): drmacct_test.ko
 * runs a case written to debugfs drmacct_test/run on every kernel (the VM
 * test selftests/kernel/test_helper_api drives it; Debian's kernels have
 * no KUnit), drmacct_kunit.ko runs every case but capacity_warn as the
 * KUnit suite drmacct_test where the kernel has KUnit (test_kunit reads
 * its results). A case reports failures through its context only; one
 * case runs at a time, whichever runner asked.
 */
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_print.h>

#include "drmacct.h"
#include "drmacct_compat.h"
#include "drmacct_test_cases.h"

/* One case at a time: the race case's timer and the callback counter are shared. */
static DEFINE_MUTEX(case_lock);

static __printf(2, 3) void test_fail(struct drmacct_test_ctx *ctx, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	ctx->failures++;
	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	ctx->ops->fail(ctx, &vaf);
	va_end(ap);
}

static __printf(2, 3) void test_info(struct drmacct_test_ctx *ctx, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	ctx->ops->info(ctx, &vaf);
	va_end(ap);
}

#define CHECK(ctx, cond, fmt, ...)					\
	do {								\
		if (!(cond))						\
			test_fail(ctx, "%s:%d: %s: " fmt, __func__,	\
				  __LINE__, #cond, ##__VA_ARGS__);	\
	} while (0)

/* fdinfo text of @client, printed into @buf through a coredump printer. */
static void test_fdinfo(struct drmacct_client *client, const struct drmacct_mem_stats *mem,
			char *buf, size_t len)
{
	struct drm_print_iterator iter = {
		.data = buf, .start = 0, .remain = len - 1,
	};
	struct drm_printer p = drm_coredump_printer(&iter);

	memset(buf, 0, len);
	drmacct_show_fdinfo(client, &p, mem);
}

/* Does @text have a line starting with @key followed by ':'? */
static bool has_key(const char *text, const char *key)
{
	size_t n = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (!strncmp(line, key, n) && line[n] == ':')
			return true;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return false;
}

static const char * const one_region[] = { "vram" };

/* A device of one time-only engine "gfx" of capacity 1 and no memory regions. */
static const struct drmacct_engine_desc gfx_engine = {
	.name = "gfx", .flags = DRMACCT_ENGINE_TIME, .capacity = 1,
};

static const struct drmacct_device_desc gfx_device = {
	.driver_name = "t", .engines = &gfx_engine, .num_engines = 1,
};

static atomic_t cycles_calls = ATOMIC_INIT(0);

static u64 test_total_cycles(void *priv, unsigned int engine)
{
	atomic_inc(&cycles_calls);
	return *(u64 *)priv + engine;
}

static void case_create_rejects_bad_descriptors(struct drmacct_test_ctx *ctx)
{
	struct drmacct_device *adev;

#define REJECT(what, stmt)						\
	do {								\
		struct drmacct_engine_desc e0 = gfx_engine;		\
		struct drmacct_device_desc d0 = gfx_device;		\
									\
		d0.engines = &e0;					\
		stmt;							\
		adev = drmacct_device_create(&d0);			\
		CHECK(ctx, PTR_ERR_OR_ZERO(adev) == -EINVAL, "%s: %d",	\
		      what, PTR_ERR_OR_ZERO(adev));			\
		if (!IS_ERR(adev))					\
			drmacct_device_destroy(adev);			\
	} while (0)

	REJECT("no engine flags", e0.flags = 0);
	REJECT("unknown engine flag", e0.flags |= BIT(7));
	REJECT("maxfreq without cycles", e0.max_freq_hz = 1000);
	REJECT("capacity 0", e0.capacity = 0);
	REJECT("empty engine name", e0.name = "");
	REJECT("engine name with ':'", e0.name = "a:b");
	REJECT("total-cycles without cycles", e0.total_cycles = test_total_cycles);
	REJECT("maxfreq and total-cycles",
	       (e0.flags |= DRMACCT_ENGINE_CYCLES, e0.max_freq_hz = 1,
		e0.total_cycles = test_total_cycles));
	REJECT("unknown memory key", (d0.regions = one_region, d0.num_regions = 1,
				      d0.mem_keys = BIT(9)));
	REJECT("legacy memory without resident",
	       (d0.regions = one_region, d0.num_regions = 1,
		d0.flags = DRMACCT_DEVICE_LEGACY_MEMORY));
	REJECT("unknown device flag", d0.flags = BIT(5));
#undef REJECT

	adev = drmacct_device_create(&gfx_device);
	CHECK(ctx, !IS_ERR(adev), "the good descriptor: %ld", PTR_ERR(adev));
	if (!IS_ERR(adev))
		drmacct_device_destroy(adev);
}

static void case_engine_flags_choose_keys(struct drmacct_test_ctx *ctx)
{
	static const struct drmacct_engine_desc engines[] = {
		{ .name = "time", .flags = DRMACCT_ENGINE_TIME, .capacity = 2 },
		{ .name = "cyc", .flags = DRMACCT_ENGINE_CYCLES, .capacity = 1,
		  .max_freq_hz = 5000 },
		{ .name = "both", .flags = DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES,
		  .capacity = 1 },
	};
	const struct drmacct_device_desc d = {
		.driver_name = "t", .engines = engines, .num_engines = 3,
	};
	struct drmacct_device *adev = drmacct_device_create(&d);
	struct drmacct_client *c;
	char *buf;

	CHECK(ctx, !IS_ERR(adev), "%ld", PTR_ERR(adev));
	if (IS_ERR(adev))
		return;
	c = drmacct_client_open(adev, NULL);
	buf = kmalloc(2048, GFP_KERNEL);
	CHECK(ctx, !IS_ERR(c) && buf, "client or buffer");
	if (!IS_ERR(c) && buf) {
		test_fdinfo(c, NULL, buf, 2048);
		CHECK(ctx, has_key(buf, "drm-engine-time"), "%s", buf);
		CHECK(ctx, has_key(buf, "drm-engine-capacity-time"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-cycles-time"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-engine-cyc"), "%s", buf);
		CHECK(ctx, has_key(buf, "drm-cycles-cyc"), "%s", buf);
		CHECK(ctx, has_key(buf, "drm-maxfreq-cyc"), "%s", buf);
		CHECK(ctx, has_key(buf, "drm-engine-both"), "%s", buf);
		CHECK(ctx, has_key(buf, "drm-cycles-both"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-maxfreq-both"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-total-vram"), "%s", buf);
	}
	kfree(buf);
	if (!IS_ERR(c))
		drmacct_client_close(c);
	drmacct_device_destroy(adev);
}

static void case_mem_keys_choose_keys(struct drmacct_test_ctx *ctx)
{
	struct drmacct_device_desc d = {
		.driver_name = "t", .engines = &gfx_engine, .num_engines = 1,
		.regions = one_region, .num_regions = 1,
		.mem_keys = DRMACCT_MEM_KEY_SHARED | DRMACCT_MEM_KEY_ACTIVE,
	};
	const struct drmacct_mem_stats mem = {
		.total = 3 << 20, .shared = 4096, .resident = 2 << 20,
		.purgeable = 8192, .active = 1536,
	};
	struct drmacct_device *adev;
	struct drmacct_client *c;
	char *buf = kmalloc(2048, GFP_KERNEL);

	CHECK(ctx, buf, "buffer");
	if (!buf)
		return;
	adev = drmacct_device_create(&d);
	CHECK(ctx, !IS_ERR(adev), "%ld", PTR_ERR(adev));
	if (IS_ERR(adev))
		goto out;
	c = drmacct_client_open(adev, NULL);
	CHECK(ctx, !IS_ERR(c), "%ld", PTR_ERR(c));
	if (!IS_ERR(c)) {
		test_fdinfo(c, &mem, buf, 2048);
		CHECK(ctx, strstr(buf, "drm-total-vram:\t3 MiB\n"), "%s", buf);
		CHECK(ctx, strstr(buf, "drm-shared-vram:\t4 KiB\n"), "%s", buf);
		CHECK(ctx, strstr(buf, "drm-active-vram:\t1536\n"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-resident-vram"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-purgeable-vram"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-memory-vram"), "%s", buf);
		drmacct_client_close(c);
	}
	drmacct_device_destroy(adev);

	/* Total only; and the legacy key with resident. */
	d.mem_keys = 0;
	adev = drmacct_device_create(&d);
	c = IS_ERR(adev) ? ERR_CAST(adev) : drmacct_client_open(adev, NULL);
	CHECK(ctx, !IS_ERR(c), "%ld", PTR_ERR(c));
	if (!IS_ERR(c)) {
		test_fdinfo(c, &mem, buf, 2048);
		CHECK(ctx, has_key(buf, "drm-total-vram"), "%s", buf);
		CHECK(ctx, !has_key(buf, "drm-shared-vram") && !has_key(buf, "drm-active-vram"),
		      "%s", buf);
		drmacct_client_close(c);
	}
	if (!IS_ERR(adev))
		drmacct_device_destroy(adev);
	d.mem_keys = DRMACCT_MEM_KEY_RESIDENT;
	d.flags = DRMACCT_DEVICE_LEGACY_MEMORY;
	adev = drmacct_device_create(&d);
	c = IS_ERR(adev) ? ERR_CAST(adev) : drmacct_client_open(adev, NULL);
	CHECK(ctx, !IS_ERR(c), "%ld", PTR_ERR(c));
	if (!IS_ERR(c)) {
		test_fdinfo(c, &mem, buf, 2048);
		CHECK(ctx, strstr(buf, "drm-resident-vram:\t2 MiB\n"), "%s", buf);
		CHECK(ctx, strstr(buf, "drm-memory-vram:\t2 MiB\n"), "%s", buf);
		drmacct_client_close(c);
	}
	if (!IS_ERR(adev))
		drmacct_device_destroy(adev);
out:
	kfree(buf);
}

/*
 * A job reset ends the run with the time up to the reset and the cycles
 * given, and the job can begin again; its second run adds to the first.
 * Reset of a job that is not running charges nothing.
 */
static void case_reset_charges_and_restarts(struct drmacct_test_ctx *ctx)
{
	static const struct drmacct_engine_desc e = {
		.name = "gfx", .flags = DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES,
		.capacity = 1,
	};
	const struct drmacct_device_desc d = {
		.driver_name = "t", .engines = &e, .num_engines = 1,
	};
	struct drmacct_device *adev = drmacct_device_create(&d);
	struct drmacct_engine_usage u;
	struct drmacct_client *c;
	struct drmacct_job job;
	u64 b1, r1, b2, e2;

	CHECK(ctx, !IS_ERR(adev), "%ld", PTR_ERR(adev));
	if (IS_ERR(adev))
		return;
	c = drmacct_client_open(adev, NULL);
	CHECK(ctx, !IS_ERR(c), "%ld", PTR_ERR(c));
	if (IS_ERR(c))
		goto out_dev;
	CHECK(ctx, !drmacct_job_init(&job, c, 0), "init");
	CHECK(ctx, drmacct_job_reset(&job, 99) == 0, "reset before begin charged");
	b1 = drmacct_job_begin(&job);
	usleep_range(2000, 3000);
	r1 = drmacct_job_reset(&job, 5);
	CHECK(ctx, r1 > b1, "reset %llu begin %llu", r1, b1);
	drmacct_client_usage(c, 0, &u);
	CHECK(ctx, u.busy_ns == r1 - b1 && u.cycles == 5 && u.running == 0,
	      "after reset busy %llu (want %llu) cycles %llu running %u",
	      u.busy_ns, r1 - b1, u.cycles, u.running);
	CHECK(ctx, drmacct_job_reset(&job, 99) == 0, "second reset charged");
	b2 = drmacct_job_begin(&job);
	CHECK(ctx, b2 >= r1, "begin after reset %llu < %llu", b2, r1);
	usleep_range(1000, 2000);
	e2 = drmacct_job_end(&job, 7);
	drmacct_client_usage(c, 0, &u);
	CHECK(ctx, u.busy_ns == (r1 - b1) + (e2 - b2) && u.cycles == 12 && u.running == 0,
	      "after the rerun busy %llu (want %llu) cycles %llu running %u",
	      u.busy_ns, (r1 - b1) + (e2 - b2), u.cycles, u.running);
	CHECK(ctx, drmacct_job_reset(&job, 99) == 0, "reset after end charged");
	drmacct_client_usage(c, 0, &u);
	CHECK(ctx, u.cycles == 12, "cycles %llu after a reset of an ended job", u.cycles);
	drmacct_job_fini(&job);
	drmacct_client_close(c);
out_dev:
	drmacct_device_destroy(adev);
}

/*
 * After drmacct_device_destroy() a client that is still open prints no
 * drm-total-cycles and the driver's callback is not called again: the
 * driver may free what @priv points at.
 */
static void case_destroy_detaches_callbacks(struct drmacct_test_ctx *ctx)
{
	static const struct drmacct_engine_desc e = {
		.name = "cmp", .flags = DRMACCT_ENGINE_CYCLES, .capacity = 1,
		.total_cycles = test_total_cycles,
	};
	u64 *base = kmalloc(sizeof(*base), GFP_KERNEL);
	struct drmacct_device_desc d = {
		.driver_name = "t", .engines = &e, .num_engines = 1, .priv = base,
	};
	struct drmacct_device *adev;
	struct drmacct_client *c;
	char buf[512];
	int calls;

	CHECK(ctx, base, "alloc");
	if (!base)
		return;
	*base = 123456;
	adev = drmacct_device_create(&d);
	CHECK(ctx, !IS_ERR(adev), "%ld", PTR_ERR(adev));
	if (IS_ERR(adev)) {
		kfree(base);
		return;
	}
	c = drmacct_client_open(adev, NULL);
	CHECK(ctx, !IS_ERR(c), "%ld", PTR_ERR(c));
	if (IS_ERR(c)) {
		drmacct_device_destroy(adev);
		kfree(base);
		return;
	}
	atomic_set(&cycles_calls, 0);
	test_fdinfo(c, NULL, buf, sizeof(buf));
	CHECK(ctx, strstr(buf, "drm-total-cycles-cmp:\t123456\n"), "%s", buf);
	CHECK(ctx, atomic_read(&cycles_calls) == 1, "%d calls", atomic_read(&cycles_calls));
	drmacct_device_destroy(adev);
	kfree(base);		/* the driver's data is gone */
	calls = atomic_read(&cycles_calls);
	test_fdinfo(c, NULL, buf, sizeof(buf));
	CHECK(ctx, !has_key(buf, "drm-total-cycles-cmp"), "%s", buf);
	CHECK(ctx, has_key(buf, "drm-cycles-cmp"), "%s", buf);
	CHECK(ctx, atomic_read(&cycles_calls) == calls, "callback called after destroy");
	drmacct_client_close(c);
}

/* Device ids grow: never one an earlier device had. */
static void case_device_ids_grow(struct drmacct_test_ctx *ctx)
{
	struct drmacct_device *a = drmacct_device_create(&gfx_device);
	struct drmacct_device *b = drmacct_device_create(&gfx_device);
	u32 ia = 0, ib = 0;

	CHECK(ctx, !IS_ERR(a) && !IS_ERR(b), "create");
	if (!IS_ERR(a))
		ia = drmacct_device_id(a);
	if (!IS_ERR(b))
		ib = drmacct_device_id(b);
	CHECK(ctx, ia && ib > ia, "ids %u then %u", ia, ib);
	drmacct_device_destroy(a);
	drmacct_device_destroy(b);
}

/* Two jobs of one client running on an engine of capacity 1: WARNs once. */
static void case_capacity_warn(struct drmacct_test_ctx *ctx)
{
	struct drmacct_device *adev = drmacct_device_create(&gfx_device);
	struct drmacct_engine_usage u;
	struct drmacct_job j1, j2;
	struct drmacct_client *c;

	if (IS_ERR(adev)) {
		test_fail(ctx, "create: %ld", PTR_ERR(adev));
		return;
	}
	c = drmacct_client_open(adev, NULL);
	if (!IS_ERR(c)) {
		drmacct_job_init(&j1, c, 0);
		drmacct_job_init(&j2, c, 0);
		drmacct_job_begin(&j1);
		drmacct_job_begin(&j2);
		drmacct_client_usage(c, 0, &u);
		CHECK(ctx, u.running == 2, "running %u", u.running);
		drmacct_job_end(&j2, 0);
		drmacct_job_end(&j1, 0);
		drmacct_job_fini(&j2);
		drmacct_job_fini(&j1);
		drmacct_client_close(c);
	}
	drmacct_device_destroy(adev);
}

/*
 * Writers on every CPU and in hard interrupts, a reader in between: two
 * kthreads and an hrtimer begin and end jobs of one client on an engine of
 * capacity 3 (one running job each at most) for about a second while this
 * thread reads. Every read must be consistent: busy time never goes back,
 * never runs ahead of capacity x wall time, the running count never
 * exceeds the writers. At the end the busy time equals, to the
 * nanosecond, the sum of the (end - start) the writers were told.
 */
struct race_writer {
	struct drmacct_client *client;
	struct drmacct_job job;
	u64 busy;
	unsigned long rounds;
};

static bool race_stop;

static void race_round(struct race_writer *w)
{
	u64 start = drmacct_job_begin(&w->job);

	w->busy += drmacct_job_reset(&w->job, 1) - start;
	w->rounds++;
}

static int race_thread(void *arg)
{
	struct race_writer *w = arg;

	while (!READ_ONCE(race_stop) && !kthread_should_stop()) {
		race_round(w);
		if (!(w->rounds & 255))
			cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * The writers both race cases share: one client of a device with one
 * engine of capacity 3; writers 0 and 1 are kthreads, writer 2 runs from
 * the case's timer.
 */
struct race {
	struct drmacct_device *adev;
	struct drmacct_client *client;
	struct race_writer w[3];
	struct task_struct *threads[2];
	u64 t0;				/* before any writer started */
};

/* Device, client and the three writers' jobs; false (reported) on error. */
static bool race_init(struct drmacct_test_ctx *ctx, struct race *r)
{
	static const struct drmacct_engine_desc e = {
		.name = "gfx", .flags = DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES,
		.capacity = 3,
	};
	const struct drmacct_device_desc d = {
		.driver_name = "t", .engines = &e, .num_engines = 1,
	};
	unsigned int i;

	r->adev = drmacct_device_create(&d);
	if (IS_ERR(r->adev)) {
		test_fail(ctx, "device: %ld", PTR_ERR(r->adev));
		r->adev = NULL;
		return false;
	}
	r->client = drmacct_client_open(r->adev, NULL);
	if (IS_ERR(r->client)) {
		test_fail(ctx, "client: %ld", PTR_ERR(r->client));
		r->client = NULL;
		return false;
	}
	for (i = 0; i < 3; i++) {
		r->w[i].client = r->client;
		CHECK(ctx, !drmacct_job_init(&r->w[i].job, r->client, 0), "init");
	}
	return true;
}

static void race_start_threads(struct drmacct_test_ctx *ctx, struct race *r)
{
	unsigned int i;

	WRITE_ONCE(race_stop, false);
	r->t0 = ktime_get_ns();
	for (i = 0; i < 2; i++) {
		r->threads[i] = kthread_run(race_thread, &r->w[i], "drmacct_race%u", i);
		if (IS_ERR(r->threads[i])) {
			test_fail(ctx, "kthread: %ld", PTR_ERR(r->threads[i]));
			r->threads[i] = NULL;
		}
	}
}

/* Stops the writers (the caller cancels its timer) and checks the totals. */
static void race_stop_and_check(struct drmacct_test_ctx *ctx, struct race *r,
				struct hrtimer *timer)
{
	struct drmacct_engine_usage u;
	u64 sum = 0, rounds = 0;
	unsigned int i;

	WRITE_ONCE(race_stop, true);
	hrtimer_cancel(timer);
	for (i = 0; i < 2; i++)
		if (r->threads[i])
			kthread_stop(r->threads[i]);
	for (i = 0; i < 3; i++) {
		sum += r->w[i].busy;
		rounds += r->w[i].rounds;
	}
	drmacct_client_usage(r->client, 0, &u);
	CHECK(ctx, u.running == 0 && u.busy_ns == sum && u.cycles == rounds,
	      "at the end busy %llu (writers %llu) cycles %llu (rounds %llu) running %u",
	      u.busy_ns, sum, u.cycles, rounds, u.running);
}

static void race_fini(struct race *r)
{
	unsigned int i;

	if (r->client) {
		for (i = 0; i < 3; i++)
			drmacct_job_fini(&r->w[i].job);
		drmacct_client_close(r->client);
	}
	drmacct_device_destroy(r->adev);
}

static struct hrtimer race_timer;
static struct race_writer *race_irq_writer;

static enum hrtimer_restart race_timer_fn(struct hrtimer *t)
{
	if (READ_ONCE(race_stop))
		return HRTIMER_NORESTART;
	race_round(race_irq_writer);
	hrtimer_forward_now(t, ns_to_ktime(50 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void case_writers_race_readers(struct drmacct_test_ctx *ctx)
{
	struct race *r = kzalloc(sizeof(*r), GFP_KERNEL);
	struct drmacct_engine_usage u;
	u64 last = 0, reads = 0;

	if (!r) {
		test_fail(ctx, "alloc");
		return;
	}
	if (!race_init(ctx, r))
		goto out;
	race_irq_writer = &r->w[2];
	race_start_threads(ctx, r);
	drmacct_compat_hrtimer_setup(&race_timer, race_timer_fn, CLOCK_MONOTONIC,
				     HRTIMER_MODE_REL);
	hrtimer_start(&race_timer, ns_to_ktime(50 * NSEC_PER_USEC), HRTIMER_MODE_REL);
	/*
	 * One second, longer (up to ten) until the readers and every writer
	 * have had their turns: two writer threads on two busy vCPUs left
	 * this loop 67 reads in its second on a loaded TCG host.
	 */
	while (ktime_get_ns() - r->t0 < NSEC_PER_SEC ||
	       ((reads <= 100 || !READ_ONCE(r->w[0].rounds) || !READ_ONCE(r->w[1].rounds) ||
		 !READ_ONCE(r->w[2].rounds)) && ktime_get_ns() - r->t0 < 10 * NSEC_PER_SEC)) {
		drmacct_client_usage(r->client, 0, &u);
		reads++;
		if (u.busy_ns < last || u.running > 3 ||
		    u.busy_ns > 3 * (ktime_get_ns() - r->t0)) {
			test_fail(ctx, "read %llu: busy %llu after %llu, running %u, %llu ns in",
				  reads, u.busy_ns, last, u.running, ktime_get_ns() - r->t0);
			break;
		}
		last = u.busy_ns;
		if (!(reads & 63))
			cond_resched();
	}
	race_stop_and_check(ctx, r, &race_timer);
	CHECK(ctx, r->w[0].rounds && r->w[1].rounds && r->w[2].rounds && reads > 100,
	      "rounds %lu %lu %lu (irq), reads %llu", r->w[0].rounds, r->w[1].rounds,
	      r->w[2].rounds, reads);
	test_info(ctx, "%lu + %lu + %lu (irq) rounds, %llu reads",
		  r->w[0].rounds, r->w[1].rounds, r->w[2].rounds, reads);
out:
	race_fini(r);
	kfree(r);
}

/*
 * Hard interrupt context, PREEMPT_RT included (a timer of mode *_HARD runs
 * there on RT too, where ordinary hrtimers run in a thread): the helper
 * promises that job begin/end/fini, usage reads and the last put of a
 * client work there. The race's two kthreads write while a hard timer,
 * every 50 us, reads the client's usage (it may interrupt a writer on its
 * own CPU: a writer must not leave it spinning), runs a job of its own
 * (writer 2), and ends the life of one prepared client: begin, end and
 * fini of a job whose client's file reference is already gone, so the last
 * put, the close tracepoint and the free happen from the timer. The reads
 * in the timer must never go backwards, and every prepared client must
 * have been released there.
 */
#define HARD_CLIENTS	64

static struct hard_irq_state {
	struct hrtimer timer;
	struct race *race;
	struct drmacct_job last_jobs[HARD_CLIENTS];
	atomic_t next_last;			/* next of last_jobs to end */
	atomic_t last_done;
	atomic_t backwards;			/* reads in the timer that went back */
	u64 last_read;
	unsigned long reads;
} *hard;

static enum hrtimer_restart hard_timer_fn(struct hrtimer *t)
{
	struct drmacct_engine_usage u;
	int i, n;

	if (READ_ONCE(race_stop))
		return HRTIMER_NORESTART;
	drmacct_client_usage(hard->race->client, 0, &u);
	if (u.busy_ns < hard->last_read)
		atomic_inc(&hard->backwards);
	hard->last_read = u.busy_ns;
	hard->reads++;
	race_round(&hard->race->w[2]);
	/*
	 * Up to 8 clients a round: a loaded TCG guest fired this timer only
	 * 25 times in 10 s while the writer threads held both vCPUs.
	 */
	for (n = 0; n < 8 && (i = atomic_read(&hard->next_last)) < HARD_CLIENTS; n++) {
		struct drmacct_job *job = &hard->last_jobs[i];

		drmacct_job_begin(job);
		drmacct_job_end(job, 7);
		drmacct_job_fini(job);		/* the client's last reference */
		atomic_set(&hard->next_last, i + 1);
		atomic_inc(&hard->last_done);
	}
	hrtimer_forward_now(t, ns_to_ktime(50 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void case_hard_irq_context(struct drmacct_test_ctx *ctx)
{
	struct race *r = kzalloc(sizeof(*r), GFP_KERNEL);
	unsigned int i, opened = 0;

	hard = kzalloc(sizeof(*hard), GFP_KERNEL);
	if (!r || !hard) {
		test_fail(ctx, "alloc");
		goto out;
	}
	hard->race = r;
	if (!race_init(ctx, r))
		goto out;
	/* Clients whose only reference left is one job's, ended in the timer. */
	for (opened = 0; opened < HARD_CLIENTS; opened++) {
		struct drmacct_client *c = drmacct_client_open(r->adev, NULL);

		if (IS_ERR(c)) {
			test_fail(ctx, "client %u: %ld", opened, PTR_ERR(c));
			break;
		}
		CHECK(ctx, !drmacct_job_init(&hard->last_jobs[opened], c, 0), "init");
		drmacct_client_close(c);
	}
	atomic_set(&hard->next_last, opened < HARD_CLIENTS ? HARD_CLIENTS : 0);
	race_start_threads(ctx, r);
	drmacct_compat_hrtimer_setup(&hard->timer, hard_timer_fn, CLOCK_MONOTONIC,
				     HRTIMER_MODE_REL_HARD);
	hrtimer_start(&hard->timer, ns_to_ktime(50 * NSEC_PER_USEC), HRTIMER_MODE_REL_HARD);
	/* One second, longer (up to ten) until every client went in the timer. */
	while (ktime_get_ns() - r->t0 < NSEC_PER_SEC ||
	       (atomic_read(&hard->last_done) < HARD_CLIENTS &&
		ktime_get_ns() - r->t0 < 10 * NSEC_PER_SEC))
		msleep(20);
	race_stop_and_check(ctx, r, &hard->timer);
	CHECK(ctx, !atomic_read(&hard->backwards), "%d of %lu reads in the timer went back",
	      atomic_read(&hard->backwards), hard->reads);
	CHECK(ctx, atomic_read(&hard->last_done) == HARD_CLIENTS,
	      "%d of %d clients released in the timer", atomic_read(&hard->last_done),
	      HARD_CLIENTS);
	CHECK(ctx, r->w[2].rounds && hard->reads, "timer: %lu rounds, %lu reads",
	      r->w[2].rounds, hard->reads);
	test_info(ctx, "%lu + %lu + %lu (hard irq) rounds, %lu reads in the timer, %d clients released there",
		  r->w[0].rounds, r->w[1].rounds, r->w[2].rounds, hard->reads,
		  atomic_read(&hard->last_done));
out:
	if (hard) {
		/* Clients the timer never got to (a failed case) go here. */
		for (i = atomic_read(&hard->next_last); i < opened; i++)
			drmacct_job_fini(&hard->last_jobs[i]);
	}
	if (r)
		race_fini(r);
	kfree(hard);
	hard = NULL;
	kfree(r);
}

static const struct drmacct_test_case test_cases[] = {
	{ "writers_race_readers", case_writers_race_readers },
	{ "hard_irq_context", case_hard_irq_context },
	{ "create_rejects_bad_descriptors", case_create_rejects_bad_descriptors },
	{ "engine_flags_choose_keys", case_engine_flags_choose_keys },
	{ "mem_keys_choose_keys", case_mem_keys_choose_keys },
	{ "reset_charges_and_restarts", case_reset_charges_and_restarts },
	{ "destroy_detaches_callbacks", case_destroy_detaches_callbacks },
	{ "device_ids_grow", case_device_ids_grow },
	{ "capacity_warn", case_capacity_warn, DRMACCT_TEST_WARNS },
};

/**
 * drmacct_test_case_find() - look a case up by name
 * @name: the case's name
 *
 * Return: the case, or NULL when there is none of that name.
 */
const struct drmacct_test_case *drmacct_test_case_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(test_cases); i++)
		if (!strcmp(name, test_cases[i].name))
			return &test_cases[i];
	return NULL;
}
EXPORT_SYMBOL_GPL(drmacct_test_case_find);

/**
 * drmacct_test_case_get() - the cases one by one
 * @i: index, from 0
 *
 * Return: case @i, or NULL past the last one.
 */
const struct drmacct_test_case *drmacct_test_case_get(unsigned int i)
{
	return i < ARRAY_SIZE(test_cases) ? &test_cases[i] : NULL;
}
EXPORT_SYMBOL_GPL(drmacct_test_case_get);

/**
 * drmacct_test_case_run() - run one case
 * @tc: the case, from drmacct_test_case_find() or drmacct_test_case_get()
 * @ctx: the runner's context; @ctx->ops and @ctx->priv set by the runner,
 *	@ctx->tc and @ctx->failures set here
 *
 * Waits while another case runs (from either runner): the cases share a
 * timer and a callback counter.
 *
 * Context: process context, may sleep.
 * Return: the number of failures the case reported (0: it passed).
 */
unsigned int drmacct_test_case_run(const struct drmacct_test_case *tc,
				   struct drmacct_test_ctx *ctx)
{
	mutex_lock(&case_lock);
	ctx->tc = tc;
	ctx->failures = 0;
	tc->run(ctx);
	mutex_unlock(&case_lock);
	return ctx->failures;
}
EXPORT_SYMBOL_GPL(drmacct_test_case_run);

MODULE_DESCRIPTION("drmacct_test_cases: in-kernel checks of the drmacct helper's API, for the debugfs and KUnit runners");
MODULE_LICENSE("GPL");
