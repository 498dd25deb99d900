/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private structures of drmacct.ko.
 */
#ifndef _DRMACCT_INTERNAL_H_
#define _DRMACCT_INTERNAL_H_

#include <linux/kref.h>
#include <linux/rwsem.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "drmacct.h"

struct drmacct_engine {
	char name[DRMACCT_NAME_MAX + 1];
	unsigned int flags;
	unsigned int capacity;
	u64 max_freq_hz;
	u64 (*total_cycles)(void *priv, unsigned int engine);
};

/*
 * A device lives while the driver or any client holds it. The driver's
 * callbacks and @priv are used only under @cb_lock (read) and only while
 * @detached is false: drmacct_device_destroy() sets it under the lock
 * (write), after which files still open print no key that needs the
 * driver.
 */
struct drmacct_device {
	struct kref ref;
	struct rw_semaphore cb_lock;
	bool detached;
	u32 id;
	unsigned int flags;
	unsigned int mem_keys;
	unsigned int num_engines;
	unsigned int num_regions;
	void *priv;
	char driver_name[DRMACCT_NAME_MAX + 1];
	char pdev[32];			/* empty unless PCI */
	char (*regions)[DRMACCT_NAME_MAX + 1];
	struct drmacct_engine engines[];
};

/*
 * Per-client state. Writers (job begin/end/reset, name changes) hold @lock
 * with interrupts disabled and bump @seq; readers never take the lock and
 * retry on a concurrent write. The lock is raw, so writers may run in hard
 * interrupt context on PREEMPT_RT too; its sections are a few stores. The
 * per-engine arrays are separate so the close tracepoint can copy them
 * directly.
 *
 * In-flight time of engine e at time now is
 *	running[e] * now - sum_start[e]
 * because every running job started at one of the summed timestamps, and
 * all of them are <= now (they are taken inside the write section).
 */
struct drmacct_client {
	struct kref ref;
	struct drmacct_device *adev;
	u64 id;
	raw_spinlock_t lock;		/* serialises writers */
	seqcount_raw_spinlock_t seq;	/* lets readers see consistent values */
	u32 name_len;
	char name[DRMACCT_CLIENT_NAME_MAX + 1];
	u64 *busy_ns;			/* finished busy time per engine */
	u64 *cycles;			/* busy cycles of finished jobs */
	u64 *sum_start;			/* sum of start times of running jobs */
	u32 *running;			/* number of running jobs */
};

bool drmacct_device_total_cycles(struct drmacct_device *adev, unsigned int engine,
				 u64 *cycles);
void drmacct_client_snapshot(struct drmacct_client *client,
			     unsigned int engine,
			     struct drmacct_engine_usage *usage);

#endif /* _DRMACCT_INTERNAL_H_ */
