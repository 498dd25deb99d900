/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dac_atomic.h - the lock-free updates of bpf/drmacct/, and the busy
 * time rule of a scheduler ring, as plain C on __sync builtins: the BPF
 * object includes it (built with -mcpu=v3: every target kernel has the BPF
 * atomic instructions, 5.12+, and their fetching forms are fully ordered on
 * every architecture), and so does a host test (selftests/user/
 * test_bpf_ring.c), which runs the very same rule on event sequences.
 *
 * The includer defines DAC_CAS_GIVEUP(), called when a cmpxchg loop lost
 * DAC_CAS_TRIES times in a row (each loss means another CPU made progress).
 */
#ifndef DAC_ATOMIC_H
#define DAC_ATOMIC_H

#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif

/* Tries of a cmpxchg loop: each failure means another CPU made progress. */
#define DAC_CAS_TRIES	64

/*
 * *@p -= 1 unless it is 0, atomically. Returns true when it decremented:
 * two CPUs ending the last two jobs at once take one each; neither can
 * take a job that is not there.
 */
static __always_inline bool atomic_dec_nonzero(__u64 *p)
{
	for (int i = 0; i < DAC_CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)p;

		if (!old)
			return false;
		if (__sync_val_compare_and_swap(p, old, old - 1) == old)
			return true;
	}
	DAC_CAS_GIVEUP();
	return false;
}

/* *@p = max(*@p, @v) atomically; returns the value it replaced (or kept). */
static __always_inline __u64 atomic_max(__u64 *p, __u64 v)
{
	for (int i = 0; i < DAC_CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)p;

		if (old >= v || __sync_val_compare_and_swap(p, old, v) == old)
			return old;
	}
	DAC_CAS_GIVEUP();
	return v;
}

/*
 * *@p += @add, or -= @sub floored at 0, atomically; returns the new value
 * (for a peak).
 */
static __always_inline __u64 atomic_add_sub_floor(__u64 *p, __u64 add, __u64 sub)
{
	for (int i = 0; i < DAC_CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)p, new;

		new = old + add;
		new = new > sub ? new - sub : 0;
		if (__sync_val_compare_and_swap(p, old, new) == old)
			return new;
	}
	DAC_CAS_GIVEUP();
	return 0;
}

/*
 * The busy time of a ring (struct dac_ring_val) is the union of its jobs'
 * [run, done] intervals. dac_ring_run(): a job runs at @now; @idle: the
 * kernel's own count of jobs on the ring's hardware (drm_gpu_scheduler's
 * hw_rq_count, credit_count from 6.7), read in the run event, holds this
 * job alone -- the ring was idle, and charging starts here.
 * dac_ring_done(): a job that ran completes at @now; returns its charge,
 * @now - charged_ns, and moves charged_ns to @now. Since charged_ns the
 * ring has been busy all along: a job was on the hardware throughout. So
 * the charges sum to the union (never more than wall time); for a ring
 * that completes in order each job gets done - max(run, previous done),
 * its own time on the ring; when a later job completes first (A [0,10],
 * B [2,5]) B gets [0,5] and A [5,10]. The count is the kernel's, not one
 * kept here: a job the programs lose (no event for it, or no room to
 * follow it) cannot leave the ring looking busy for ever.
 */
static __always_inline void dac_ring_run(struct dac_ring_val *r, __u64 now, bool idle)
{
	r->last_ns = now;
	if (idle)
		atomic_max(&r->charged_ns, now);
}

static __always_inline __u64 dac_ring_done(struct dac_ring_val *r, __u64 now)
{
	__u64 old = atomic_max(&r->charged_ns, now), busy = now > old ? now - old : 0;

	r->last_ns = now;
	__sync_fetch_and_add(&r->jobs, 1);
	__sync_fetch_and_add(&r->busy_ns, busy);
	return busy;
}

#endif /* DAC_ATOMIC_H */
