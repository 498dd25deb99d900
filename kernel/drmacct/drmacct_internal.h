/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private structures of drmacct.ko.
 */
#ifndef _DRMACCT_INTERNAL_H_
#define _DRMACCT_INTERNAL_H_

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
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
	char dev_name[32];		/* dev_name() of desc->dev, or empty */
	char (*regions)[DRMACCT_NAME_MAX + 1];
	struct drmacct_engine engines[];
};

/*
 * Per-client state.
 *
 * Usage, per engine e, with no lock. While k jobs run that started at
 * s_1..s_k,
 *	q[e] = (busy time of finished jobs) - (s_1 + ... + s_k)
 * so the busy time at any instant t, the running part of in-flight jobs
 * included, is q[e] + running[e] * t: a begin at t subtracts t from q and
 * adds one to running, an end at t adds t to q and takes one from running
 * (the job's own start cancels out). Each is an atomic update, and so is
 * the cycles add, so writers on any CPU, in any context (hard interrupts,
 * PREEMPT_RT included), never wait for each other.
 *
 * A reader must see q, running and cycles of one moment: @wseq counts the
 * writers in progress in its low DRMACCT_WSEQ_BITS bits and the finished
 * writes above them. A writer adds 1 before its updates and
 * DRMACCT_WSEQ_DONE - 1 after them (full barriers on both sides); a reader
 * takes a snapshot only between two reads of @wseq that are equal and show
 * no writer in progress, so no write began or ended while it read. Writers
 * keep interrupts off between the two adds, so a reader never waits for a
 * preempted writer, nor (in an interrupt) for the writer it interrupted.
 * The reader's clock is read inside, after the values and fully ordered
 * before the second read of @wseq: every start time in q is from a write
 * that ended before, every later write reads a later clock, so busy time
 * never goes backwards.
 *
 * The name has a raw spinlock and a seqcount of its own (rare writes).
 * The per-engine arrays are separate so the close tracepoint can take them
 * as arrays (with no job left running, q[e] is the busy time).
 */
#define DRMACCT_WSEQ_BITS	20
#define DRMACCT_WSEQ_ACTIVE	(BIT_ULL(DRMACCT_WSEQ_BITS) - 1)
#define DRMACCT_WSEQ_DONE	BIT_ULL(DRMACCT_WSEQ_BITS)

struct drmacct_client {
	struct kref ref;
	struct rcu_head rcu;		/* frees it (drmacct_client_release()) */
	struct drmacct_device *adev;
	u64 id;
	dev_t rdev;			/* the device's node, 0 without a file */
	atomic64_t wseq;		/* writers in progress, finished writes */
	atomic64_t *q;			/* busy time - starts of running jobs */
	atomic64_t *cycles;		/* busy cycles of finished jobs */
	atomic_t *running;		/* number of running jobs */
	raw_spinlock_t name_lock;	/* serialises name writers */
	seqcount_raw_spinlock_t name_seq;
	u32 name_len;
	char name[DRMACCT_CLIENT_NAME_MAX + 1];
};

bool drmacct_device_total_cycles(struct drmacct_device *adev, unsigned int engine,
				 u64 *cycles);
void drmacct_trace_device_names(const struct drmacct_client *client);
void drmacct_client_snapshot(struct drmacct_client *client,
			     unsigned int engine,
			     struct drmacct_engine_usage *usage);

#endif /* _DRMACCT_INTERNAL_H_ */
