// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu — fault injection into the usage stats, for `drmacct conformance`.
 *
 * With fault=<name>, simgpu prints its fdinfo through this file, which
 * breaks exactly one rule of the DRM client usage stats spec, so that a
 * test can show the conformance check of that rule catches it (and no other
 * check does). The text comes from the normal path (simgpu_show_fdinfo(),
 * and where the DRM core prints drm-driver/drm-client-id/drm-pdev, the same
 * lines printed here) and is rewritten line by line. The drmacct helper
 * knows nothing of this. See Documentation/conformance.rst.
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "simgpu.h"

enum simgpu_fault_id {
	SIMGPU_FAULT_NONE,
	SIMGPU_FAULT_BAD_FORMAT,
	SIMGPU_FAULT_DRIVER_CHANGES,
	SIMGPU_FAULT_UNSTABLE_CLIENT_ID,
	SIMGPU_FAULT_SHARED_CLIENT_ID,
	SIMGPU_FAULT_REUSED_CLIENT_ID,
	SIMGPU_FAULT_WRONG_PDEV,
	SIMGPU_FAULT_UNPREFIXED_KEY,
	SIMGPU_FAULT_COUNTER_STEP_BACK,
	SIMGPU_FAULT_IDLE_BUSY,
	SIMGPU_FAULT_BUSY_OVER_CAPACITY,
	SIMGPU_FAULT_CYCLES_OVER_TOTAL,
	SIMGPU_FAULT_CHANGING_MAXFREQ,
	SIMGPU_FAULT_CHANGING_CAPACITY,
	SIMGPU_FAULT_VANISHING_KEY,
	SIMGPU_FAULT_GIB_UNIT,
	SIMGPU_FAULT_RESIDENT_OVER_TOTAL,
	SIMGPU_FAULT_NO_BUSY,
	SIMGPU_FAULT_CYCLES_DISAGREE,
	SIMGPU_FAULT_COUNT
};

static const char *const simgpu_fault_names[SIMGPU_FAULT_COUNT] = {
	[SIMGPU_FAULT_NONE] = "none",
	[SIMGPU_FAULT_BAD_FORMAT] = "bad-format",
	[SIMGPU_FAULT_DRIVER_CHANGES] = "driver-changes",
	[SIMGPU_FAULT_UNSTABLE_CLIENT_ID] = "unstable-client-id",
	[SIMGPU_FAULT_SHARED_CLIENT_ID] = "shared-client-id",
	[SIMGPU_FAULT_REUSED_CLIENT_ID] = "reused-client-id",
	[SIMGPU_FAULT_WRONG_PDEV] = "wrong-pdev",
	[SIMGPU_FAULT_UNPREFIXED_KEY] = "unprefixed-key",
	[SIMGPU_FAULT_COUNTER_STEP_BACK] = "counter-step-back",
	[SIMGPU_FAULT_IDLE_BUSY] = "idle-busy",
	[SIMGPU_FAULT_BUSY_OVER_CAPACITY] = "busy-over-capacity",
	[SIMGPU_FAULT_CYCLES_OVER_TOTAL] = "cycles-over-total",
	[SIMGPU_FAULT_CHANGING_MAXFREQ] = "changing-maxfreq",
	[SIMGPU_FAULT_CHANGING_CAPACITY] = "changing-capacity",
	[SIMGPU_FAULT_VANISHING_KEY] = "vanishing-key",
	[SIMGPU_FAULT_GIB_UNIT] = "gib-unit",
	[SIMGPU_FAULT_RESIDENT_OVER_TOTAL] = "resident-over-total",
	[SIMGPU_FAULT_NO_BUSY] = "no-busy",
	[SIMGPU_FAULT_CYCLES_DISAGREE] = "cycles-disagree",
};

static enum simgpu_fault_id simgpu_fault_mode;

static int simgpu_fault_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(simgpu_fault_names, val);

	if (i < 0)
		return -EINVAL;
	simgpu_fault_mode = i;
	return 0;
}

static int simgpu_fault_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", simgpu_fault_names[simgpu_fault_mode]);
}

static const struct kernel_param_ops simgpu_fault_ops = {
	.set = simgpu_fault_set,
	.get = simgpu_fault_get,
};
module_param_cb(fault, &simgpu_fault_ops, NULL, 0444);
MODULE_PARM_DESC(fault,
		 "Break one usage stats rule on purpose (drmacct conformance tests): none (default), bad-format, driver-changes, unstable-client-id, shared-client-id, reused-client-id, wrong-pdev, unprefixed-key, counter-step-back, idle-busy, busy-over-capacity, cycles-over-total, changing-maxfreq, changing-capacity, vanishing-key, gib-unit, resident-over-total, no-busy, cycles-disagree");

/* Open files (oldest first) and the id of the last file closed. */
static DEFINE_MUTEX(simgpu_fault_lock);
static LIST_HEAD(simgpu_fault_files);
static u64 simgpu_fault_closed_id;
static bool simgpu_fault_have_closed;

/**
 * simgpu_fault_active() - whether fdinfo goes through the fault injection
 *
 * Return: true when the fault parameter names a fault.
 */
bool simgpu_fault_active(void)
{
	return simgpu_fault_mode != SIMGPU_FAULT_NONE;
}

/**
 * simgpu_fault_open() - a file was opened: pick the client id it prints
 * @sfile: the new file, its drmacct client already open
 */
void simgpu_fault_open(struct simgpu_file *sfile)
{
	struct simgpu_fault_file *ff = &sfile->fault;

	ff->id = sfile->acct ? drmacct_client_id(sfile->acct) : 0;
	atomic_set(&ff->reads, 0);
	mutex_lock(&simgpu_fault_lock);
	if (simgpu_fault_mode == SIMGPU_FAULT_SHARED_CLIENT_ID &&
	    !list_empty(&simgpu_fault_files))
		ff->id = list_first_entry(&simgpu_fault_files, struct simgpu_fault_file,
					  node)->id;
	if (simgpu_fault_mode == SIMGPU_FAULT_REUSED_CLIENT_ID && simgpu_fault_have_closed) {
		ff->id = simgpu_fault_closed_id;
		simgpu_fault_have_closed = false;
	}
	list_add_tail(&ff->node, &simgpu_fault_files);
	mutex_unlock(&simgpu_fault_lock);
}

/**
 * simgpu_fault_close() - a file opened with simgpu_fault_open() goes
 * @sfile: the file
 */
void simgpu_fault_close(struct simgpu_file *sfile)
{
	struct simgpu_fault_file *ff = &sfile->fault;

	mutex_lock(&simgpu_fault_lock);
	list_del(&ff->node);
	simgpu_fault_closed_id = sfile->acct ? drmacct_client_id(sfile->acct) : ff->id;
	simgpu_fault_have_closed = true;
	mutex_unlock(&simgpu_fault_lock);
}

static bool simgpu_fault_prefix(const char *key, const char *prefix)
{
	return !strncmp(key, prefix, strlen(prefix));
}

static bool simgpu_fault_is_memory(const char *key)
{
	if (simgpu_fault_prefix(key, "drm-total-cycles-"))
		return false;
	return simgpu_fault_prefix(key, "drm-total-") ||
	       simgpu_fault_prefix(key, "drm-shared-") ||
	       simgpu_fault_prefix(key, "drm-resident-") ||
	       simgpu_fault_prefix(key, "drm-purgeable-") ||
	       simgpu_fault_prefix(key, "drm-active-") ||
	       simgpu_fault_prefix(key, "drm-memory-");
}

static bool simgpu_fault_is_busy(const char *key)
{
	return simgpu_fault_prefix(key, "drm-engine-") &&
	       !simgpu_fault_prefix(key, "drm-engine-capacity-");
}

/* "<uint>[ unit]" to bytes for memory values the helper prints. */
static u64 simgpu_fault_bytes(u64 v, const char *unit)
{
	if (!strcmp(unit, "KiB"))
		return v << 10;
	if (!strcmp(unit, "MiB"))
		return v << 20;
	return v;
}

/*
 * Rewrites one "key:\tvalue" line (@line, NUL-terminated, no newline) of
 * read number @n (1-based) into @m according to the fault. @busy_idx counts
 * the drm-engine-<e> lines of the read so far.
 */
static void simgpu_fault_line(struct seq_file *m, struct simgpu_fault_file *ff, char *line,
			      unsigned int n, u64 idle_ns, unsigned int *busy_idx)
{
	bool odd = n & 1;
	char *colon = strchr(line, ':'), *val, *unit;
	unsigned long long v;

	if (!colon) {
		seq_printf(m, "%s\n", line);
		return;
	}
	*colon = '\0';
	val = skip_spaces(colon + 1);
	unit = strchr(val, ' ');
	if (unit)
		*unit++ = '\0';
	else
		unit = "";
	if (kstrtoull(val, 10, &v)) {
		/* a string value */
		if (!strcmp(line, "drm-driver") && simgpu_fault_mode == SIMGPU_FAULT_DRIVER_CHANGES &&
		    odd)
			seq_printf(m, "%s:\t%s2\n", line, val);
		else if (!strcmp(line, "drm-pdev") && simgpu_fault_mode == SIMGPU_FAULT_WRONG_PDEV)
			seq_printf(m, "%s:\t0000:ff:1f.7\n", line);
		else
			seq_printf(m, "%s:\t%s%s%s\n", line, val, *unit ? " " : "", unit);
		return;
	}

	switch (simgpu_fault_mode) {
	case SIMGPU_FAULT_UNSTABLE_CLIENT_ID:
		if (!strcmp(line, "drm-client-id"))
			v = ff->id + (odd ? BIT_ULL(32) : 0);
		break;
	case SIMGPU_FAULT_SHARED_CLIENT_ID:
	case SIMGPU_FAULT_REUSED_CLIENT_ID:
		if (!strcmp(line, "drm-client-id"))
			v = ff->id;
		break;
	case SIMGPU_FAULT_COUNTER_STEP_BACK:
		/* every third read: 1 us below what the read before printed */
		if (simgpu_fault_is_busy(line) && *busy_idx < SIMGPU_NUM_ENGINES) {
			u64 *last = &ff->last_busy[(*busy_idx)++];

			if (n % 3 == 0 && *last > NSEC_PER_USEC)
				v = *last - NSEC_PER_USEC;
			else
				*last = v;
		}
		break;
	case SIMGPU_FAULT_IDLE_BUSY:
		if (simgpu_fault_is_busy(line))
			v += idle_ns;
		break;
	case SIMGPU_FAULT_BUSY_OVER_CAPACITY:
		if (simgpu_fault_is_busy(line) && v)
			v += (u64)n * NSEC_PER_SEC;
		break;
	case SIMGPU_FAULT_CYCLES_OVER_TOTAL:
		if (simgpu_fault_prefix(line, "drm-cycles-") && v)
			v += (u64)n * 1000000000000ull;
		break;
	case SIMGPU_FAULT_CHANGING_MAXFREQ:
		if (simgpu_fault_prefix(line, "drm-maxfreq-") && odd)
			v += 1000000;
		break;
	case SIMGPU_FAULT_CHANGING_CAPACITY:
		if (simgpu_fault_prefix(line, "drm-engine-capacity-") && odd)
			v += 1;
		break;
	case SIMGPU_FAULT_VANISHING_KEY:
		if (simgpu_fault_prefix(line, "drm-purgeable-") && odd)
			return;
		break;
	case SIMGPU_FAULT_GIB_UNIT:
		if (simgpu_fault_is_memory(line) && !v) {
			seq_printf(m, "%s:\t0 GiB\n", line);
			return;
		}
		break;
	case SIMGPU_FAULT_RESIDENT_OVER_TOTAL:
		if (simgpu_fault_prefix(line, "drm-resident-")) {
			seq_printf(m, "%s:\t%llu\n", line, simgpu_fault_bytes(v, unit) + 4096);
			return;
		}
		break;
	case SIMGPU_FAULT_NO_BUSY:
		if (simgpu_fault_is_busy(line) || simgpu_fault_prefix(line, "drm-cycles-"))
			v = 0;
		break;
	case SIMGPU_FAULT_CYCLES_DISAGREE:
		if (simgpu_fault_prefix(line, "drm-cycles-"))
			v /= 2;
		break;
	default:
		break;
	}
	seq_printf(m, "%s:\t%llu%s%s\n", line, v, *unit ? " " : "", unit);
}

/* Is every drm-engine-<e> busy value of @text 0? */
static bool simgpu_fault_all_idle(const char *text)
{
	const char *p = text;

	while ((p = strstr(p, "drm-engine-"))) {
		const char *colon = strchr(p, ':');
		unsigned long long v;
		char num[24];
		size_t len;

		if (!colon)
			break;
		if (!simgpu_fault_prefix(p, "drm-engine-capacity-")) {
			colon = skip_spaces(colon + 1);
			len = strcspn(colon, " \n");
			if (len >= sizeof(num))
				return false;
			memcpy(num, colon, len);
			num[len] = '\0';
			if (kstrtoull(num, 10, &v) || v)
				return false;
		}
		p = colon;
	}
	return true;
}

/* fdinfo of a simgpu file while a fault is injected. */
static void simgpu_fault_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct simgpu_file *sfile = file->driver_priv;
	struct seq_file tmp = { };
	struct drm_printer p;
	struct simgpu_fault_file *ff;
	unsigned int n, busy_idx = 0;
	u64 idle_ns = 0;
	char *line, *next;
	bool has_pdev;

	if (!sfile)
		return;
	ff = &sfile->fault;
	tmp.size = 4 * PAGE_SIZE;
	tmp.buf = kvzalloc(tmp.size + 1, GFP_KERNEL);
	if (!tmp.buf)
		return;
	p = drm_seq_file_printer(&tmp);
	if (DRMACCT_CORE_PRINTS_IDS) {
		/* What drm_show_fdinfo() would print before the driver's keys. */
		drm_printf(&p, "drm-driver:\t%s\n", file->minor->dev->driver->name);
		drm_printf(&p, "drm-client-id:\t%llu\n",
			   sfile->acct ? drmacct_client_id(sfile->acct) : 0ull);
		if (dev_is_pci(file->minor->dev->dev))
			drm_printf(&p, "drm-pdev:\t%s\n", pci_name(to_pci_dev(file->minor->dev->dev)));
	}
	simgpu_show_fdinfo(&p, file);
	if (tmp.count >= tmp.size) {
		seq_puts(m, "simgpu-fault-overflow:\t1\n");
		goto out;
	}
	tmp.buf[tmp.count] = '\0';
	n = atomic_inc_return(&ff->reads);
	if (simgpu_fault_mode == SIMGPU_FAULT_IDLE_BUSY) {
		mutex_lock(&simgpu_fault_lock);
		if (!ff->ran && simgpu_fault_all_idle(tmp.buf))
			ff->idle_ns += 1000;
		else
			ff->ran = true;
		idle_ns = ff->idle_ns;
		mutex_unlock(&simgpu_fault_lock);
	}
	has_pdev = strstr(tmp.buf, "drm-pdev:");
	for (line = tmp.buf; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		simgpu_fault_line(m, ff, line, n, idle_ns, &busy_idx);
	}
	if (simgpu_fault_mode == SIMGPU_FAULT_WRONG_PDEV && !has_pdev)
		seq_puts(m, "drm-pdev:\t0000:ff:1f.7\n");
	if (simgpu_fault_mode == SIMGPU_FAULT_BAD_FORMAT)
		seq_puts(m, "drm-simgpu-broken-line\n");
	if (simgpu_fault_mode == SIMGPU_FAULT_UNPREFIXED_KEY)
		seq_printf(m, "gpu-reads:\t%u\n", n);
out:
	kvfree(tmp.buf);
}

/* The file operations of simgpu while a fault is injected. */
const struct file_operations simgpu_fault_fops = {
	SIMGPU_FOPS_COMMON,
	.show_fdinfo = simgpu_fault_show_fdinfo,
};
