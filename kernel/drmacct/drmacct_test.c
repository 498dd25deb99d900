// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct_test — the debugfs runner of drmacct_test_cases.ko, on every
 * kernel (Debian's have no KUnit; where the kernel has it, drmacct_kunit.ko
 * runs the same cases as a KUnit suite). The VM test
 * selftests/kernel/test_helper_api drives it:
 *
 * debugfs: /sys/kernel/debug/drmacct_test/run
 *   write a case name, read back "ok\n" or "FAIL: <what>\n" lines
 *   (-ENODATA before any run; -ENOENT for a name that is no case). Case
 *   "capacity_warn" WARNs on purpose (the VM runner's own test boots a
 *   guest for it); the others never do.
 * Module parameter run_at_load=<case> runs a case at load time.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "drmacct_test_cases.h"

static char *run_at_load;
module_param(run_at_load, charp, 0444);
MODULE_PARM_DESC(run_at_load, "Run this case when the module loads (default none)");

static struct dentry *test_dir;
static DEFINE_MUTEX(test_lock);		/* protects test_out, test_used */
static char test_out[1024];
static size_t test_used;

/* A failure becomes a "FAIL: " line of test_out, as long as it has room. */
static void test_out_fail(struct drmacct_test_ctx *ctx, struct va_format *vaf)
{
	if (test_used >= sizeof(test_out) - 1)
		return;
	test_used += scnprintf(test_out + test_used, sizeof(test_out) - test_used,
			       "FAIL: %pV\n", vaf);
}

static void test_out_info(struct drmacct_test_ctx *ctx, struct va_format *vaf)
{
	pr_info("drmacct_test: %s: %pV\n", ctx->tc->name, vaf);
}

static const struct drmacct_test_ops test_out_ops = {
	.fail = test_out_fail,
	.info = test_out_info,
};

/* Runs case @name; -ENOENT when there is none. */
static int test_run(const char *name)
{
	const struct drmacct_test_case *tc = drmacct_test_case_find(name);
	struct drmacct_test_ctx ctx = { .ops = &test_out_ops };

	if (!tc)
		return -ENOENT;
	mutex_lock(&test_lock);
	test_used = 0;
	test_out[0] = '\0';
	if (!drmacct_test_case_run(tc, &ctx))
		scnprintf(test_out, sizeof(test_out), "ok\n");
	mutex_unlock(&test_lock);
	return 0;
}

static ssize_t test_run_write(struct file *f, const char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	char name[64];
	int ret;

	if (!len || len >= sizeof(name))
		return -EINVAL;
	if (copy_from_user(name, ubuf, len))
		return -EFAULT;
	name[len] = '\0';
	ret = test_run(strim(name));
	return ret ? ret : len;
}

static ssize_t test_run_read(struct file *f, char __user *ubuf, size_t len, loff_t *ppos)
{
	char buf[sizeof(test_out)];

	mutex_lock(&test_lock);
	memcpy(buf, test_out, sizeof(buf));
	mutex_unlock(&test_lock);
	if (!buf[0])
		return -ENODATA;
	return simple_read_from_buffer(ubuf, len, ppos, buf, strlen(buf));
}

static const struct file_operations test_run_fops = {
	.owner = THIS_MODULE,
	.read = test_run_read,
	.write = test_run_write,
	.llseek = default_llseek,
};

static int __init drmacct_test_init(void)
{
	if (run_at_load && test_run(run_at_load))
		return -ENOENT;
	test_dir = debugfs_create_dir("drmacct_test", NULL);
	debugfs_create_file("run", 0600, test_dir, NULL, &test_run_fops);
	return 0;
}

static void __exit drmacct_test_exit(void)
{
	debugfs_remove_recursive(test_dir);
}

module_init(drmacct_test_init);
module_exit(drmacct_test_exit);

MODULE_DESCRIPTION("drmacct_test: debugfs runner of the drmacct helper's in-kernel checks");
MODULE_LICENSE("GPL");
