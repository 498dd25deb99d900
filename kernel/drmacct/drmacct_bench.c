// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct_bench — cost of the helper's per-job accounting.
 *
 * debugfs: /sys/kernel/debug/drmacct_bench/run
 *   write N (1 .. 100000000): runs three loops of N iterations each:
 *     helper: drmacct_job_init + drmacct_job_begin + drmacct_job_end +
 *             drmacct_job_fini (everything a driver pays per job)
 *     atomic: a bare atomic64 add/sub pair
 *     empty:  the loop with an empty (but not optimised away) body
 *   read: "iterations=N helper_ns=X atomic_ns=Y empty_ns=Z\n", per
 *   iteration, with one decimal. Reading before any run gives -ENODATA.
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
#include <linux/uaccess.h>

#include "drmacct.h"

#define BENCH_MAX_ITERATIONS	100000000ull
#define BENCH_RESCHED_MASK	4095

static struct dentry *bench_dir;
static struct drmacct_device *bench_adev;
static DEFINE_MUTEX(bench_lock);	/* one run at a time; protects bench_result */
static char bench_result[160];

static u64 bench_helper(struct drmacct_client *client, u64 n)
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
	return div64_u64(total_ns * 10 + n / 2, n);
}

static ssize_t bench_run_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct drmacct_client *client;
	u64 n, helper, atomic, empty;
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
	helper = bench_per_iter_x10(bench_helper(client, n), n);
	atomic = bench_per_iter_x10(bench_atomic(n), n);
	empty = bench_per_iter_x10(bench_empty(n), n);
	snprintf(bench_result, sizeof(bench_result),
		 "iterations=%llu helper_ns=%llu.%llu atomic_ns=%llu.%llu empty_ns=%llu.%llu\n",
		 n, helper / 10, helper % 10, atomic / 10, atomic % 10,
		 empty / 10, empty % 10);
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
