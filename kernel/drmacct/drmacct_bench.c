// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct_bench — cost of the helper's per-job accounting.
 *
 * debugfs: /sys/kernel/debug/drmacct_bench/run
 *   write N (1 .. 100000000): runs, N iterations each, one after another:
 *     pair:     drmacct_job_begin + the end of that run (what a driver pays
 *               per job on its completion path; drmacct_job_reset ends the
 *               run through the same write section as drmacct_job_end but
 *               leaves the job startable, so one job serves every round)
 *     job:      drmacct_job_init + begin + end + fini (everything per job)
 *     floor:    two clock reads and two atomic adds, the least any correct
 *               accounting of a job's start and end does
 *     seqcount: a v3d-style pair of seqcount write sections with
 *               interrupts off, each around a clock read and a store (a
 *               single writer's stats, no lock)
 *     atomic:   a bare atomic64 add/sub pair
 *     empty:    the loop with an empty (but not optimised away) body
 *   read: "iterations=N pair_ns=.. job_ns=.. floor_ns=.. seqcount_ns=..
 *   atomic_ns=.. empty_ns=..\n", per iteration, with one decimal.
 *   Reading before any run gives -ENODATA.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seqlock.h>
#include <linux/uaccess.h>

#include "drmacct.h"

#define BENCH_MAX_ITERATIONS	100000000ull
#define BENCH_RESCHED_MASK	4095

static struct dentry *bench_dir;
static struct drmacct_device *bench_adev;
static DEFINE_MUTEX(bench_lock);	/* one run at a time; protects bench_result */
static char bench_result[256];
static u64 bench_sink;

static u64 bench_pair(struct drmacct_client *client, u64 n)
{
	struct drmacct_job job;
	u64 i, t0;

	if (drmacct_job_init(&job, client, 0))
		return 0;
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		drmacct_job_begin(&job);
		drmacct_job_reset(&job, 1);
		if (!(i & BENCH_RESCHED_MASK))
			cond_resched();
	}
	t0 = ktime_get_ns() - t0;
	drmacct_job_fini(&job);
	return t0;
}

static u64 bench_job(struct drmacct_client *client, u64 n)
{
	struct drmacct_job job;
	u64 i, t0;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		drmacct_job_init(&job, client, 0);
		drmacct_job_begin(&job);
		drmacct_job_end(&job, 1);
		drmacct_job_fini(&job);
		if (!(i & BENCH_RESCHED_MASK))
			cond_resched();
	}
	return ktime_get_ns() - t0;
}

static u64 bench_floor(u64 n)
{
	atomic64_t sum_start = ATOMIC64_INIT(0), busy = ATOMIC64_INIT(0);
	u64 i, t0, start;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		start = ktime_get_ns();
		atomic64_add(start, &sum_start);
		atomic64_add(ktime_get_ns() - start, &busy);
		if (!(i & BENCH_RESCHED_MASK))
			cond_resched();
	}
	return ktime_get_ns() - t0;
}

static u64 bench_seqcount(u64 n)
{
	seqcount_t seq = SEQCNT_ZERO(seq);
	u64 i, t0, start = 0, busy = 0;
	unsigned long flags;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		local_irq_save(flags);
		write_seqcount_begin(&seq);
		start = ktime_get_ns();
		write_seqcount_end(&seq);
		local_irq_restore(flags);

		local_irq_save(flags);
		write_seqcount_begin(&seq);
		busy += ktime_get_ns() - start;
		write_seqcount_end(&seq);
		local_irq_restore(flags);
		if (!(i & BENCH_RESCHED_MASK))
			cond_resched();
	}
	t0 = ktime_get_ns() - t0;
	/* Keep the sum alive so the compiler cannot drop the stores. */
	WRITE_ONCE(bench_sink, busy);
	return t0;
}

static u64 bench_atomic(u64 n)
{
	atomic64_t v = ATOMIC64_INIT(0);
	u64 i, t0;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		atomic64_add(i, &v);
		atomic64_sub(i, &v);
		if (!(i & BENCH_RESCHED_MASK))
			cond_resched();
	}
	return ktime_get_ns() - t0;
}

static u64 bench_empty(u64 n)
{
	u64 i, t0;

	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		barrier();
		if (!(i & BENCH_RESCHED_MASK))
			cond_resched();
	}
	return ktime_get_ns() - t0;
}

/* Per-iteration time in tenths of a nanosecond. */
static u64 bench_per_iter_x10(u64 total_ns, u64 n)
{
	return div64_u64(total_ns * 10 + (n >> 1), n);
}

static ssize_t bench_run_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	static const char * const names[] = {
		"pair", "job", "floor", "seqcount", "atomic", "empty",
	};
	struct drmacct_client *client;
	u64 n, r[ARRAY_SIZE(names)];
	size_t used;
	unsigned int i;
	int ret;

	ret = kstrtou64_from_user(ubuf, len, 0, &n);
	if (ret)
		return ret;
	if (n == 0 || n > BENCH_MAX_ITERATIONS)
		return -EINVAL;

	client = drmacct_client_open(bench_adev, NULL);
	if (IS_ERR(client))
		return PTR_ERR(client);

	mutex_lock(&bench_lock);
	r[0] = bench_pair(client, n);
	r[1] = bench_job(client, n);
	r[2] = bench_floor(n);
	r[3] = bench_seqcount(n);
	r[4] = bench_atomic(n);
	r[5] = bench_empty(n);
	used = scnprintf(bench_result, sizeof(bench_result), "iterations=%llu", n);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		u64 x10 = bench_per_iter_x10(r[i], n);
		u32 tenths;
		u64 whole = div_u64_rem(x10, 10, &tenths);

		/* div_u64_rem(): a plain u64 division needs libgcc on 32-bit. */
		used += scnprintf(bench_result + used, sizeof(bench_result) - used,
				  " %s_ns=%llu.%u", names[i], whole, tenths);
	}
	scnprintf(bench_result + used, sizeof(bench_result) - used, "\n");
	mutex_unlock(&bench_lock);

	drmacct_client_close(client);
	return len;
}

static ssize_t bench_run_read(struct file *f, char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	char buf[sizeof(bench_result)];

	mutex_lock(&bench_lock);
	memcpy(buf, bench_result, sizeof(buf));
	mutex_unlock(&bench_lock);
	if (!buf[0])
		return -ENODATA;
	return simple_read_from_buffer(ubuf, len, ppos, buf, strlen(buf));
}

static const struct file_operations bench_run_fops = {
	.owner = THIS_MODULE,
	.read = bench_run_read,
	.write = bench_run_write,
	.llseek = default_llseek,
};

static int __init drmacct_bench_init(void)
{
	static const struct drmacct_engine_desc engine = {
		.name = "bench",
		.flags = DRMACCT_ENGINE_TIME | DRMACCT_ENGINE_CYCLES,
		.capacity = 1,
		.max_freq_hz = 1000000000,
	};
	const struct drmacct_device_desc desc = {
		.driver_name = "drmacct_bench",
		.engines = &engine,
		.num_engines = 1,
	};

	bench_adev = drmacct_device_create(&desc);
	if (IS_ERR(bench_adev))
		return PTR_ERR(bench_adev);

	bench_dir = debugfs_create_dir("drmacct_bench", NULL);
	debugfs_create_file("run", 0600, bench_dir, NULL, &bench_run_fops);
	return 0;
}

static void __exit drmacct_bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	drmacct_device_destroy(bench_adev);
}

module_init(drmacct_bench_init);
module_exit(drmacct_bench_exit);

MODULE_DESCRIPTION("drmacct: cost of per-job accounting (benchmark)");
MODULE_LICENSE("GPL");
