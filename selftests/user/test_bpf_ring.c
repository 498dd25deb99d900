// SPDX-License-Identifier: MIT
/*
 * The lock-free updates and the ring busy-time rule of the BPF programs
 * (bpf/dac_atomic.h, the very code bpf/drmacct/ includes), run on the host:
 *   - a ring's charges sum to the union of its jobs' [run, done] intervals,
 *     never more than wall time, for hand-made and random event orders;
 *   - a ring that completes in order charges each job done - max(run,
 *     previous done);
 *   - overlapping completions: A [0,10], B [2,5] give 10 (the old rule gave 8);
 *   - idleness is the kernel's count of jobs on the hardware (replayed here
 *     as drm_sched keeps it), so a job lost without its done event leaves
 *     no busy ring behind;
 *   - the cmpxchg loops lose nothing with four threads at once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "dtest.h"

static unsigned long cas_giveups;
#define DAC_CAS_GIVEUP()	__sync_fetch_and_add(&cas_giveups, 1)

#include "../../bpf/drmacct_bpf.h"
#include "../../bpf/dac_atomic.h"

/* One job on the ring: runs at @run, completes at @done. */
struct job {
	uint64_t run, done;
	uint64_t charged;
};

struct event {
	uint64_t t;
	int job;
	bool done;
};

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* At one instant, a completion before a run (as on a real ring). */
	return (int)y->done - (int)x->done;
}

/* Feed the jobs' events in time order through the rule; returns the sum. */
static uint64_t replay(struct job *j, int n, struct dac_ring_val *r)
{
	struct event *ev = calloc(2 * n, sizeof(*ev));
	uint64_t sum = 0;
	int hw = 0;

	DT_ASSERT_TRUE(ev != NULL);
	for (int i = 0; i < n; i++) {
		ev[2 * i] = (struct event){ j[i].run, i, false };
		ev[2 * i + 1] = (struct event){ j[i].done, i, true };
	}
	qsort(ev, 2 * n, sizeof(*ev), event_cmp);
	for (int i = 0; i < 2 * n; i++) {
		/*
		 * The kernel's count of jobs on the hardware, as drm_sched keeps
		 * it: up before the run event, down before the done event.
		 */
		if (!ev[i].done) {
			hw++;
			dac_ring_run(r, ev[i].t, hw == 1);
			continue;
		}
		hw--;
		j[ev[i].job].charged = dac_ring_done(r, ev[i].t);
		sum += j[ev[i].job].charged;
	}
	free(ev);
	return sum;
}

/* Length of the union of the jobs' intervals. */
static uint64_t union_len(const struct job *j, int n)
{
	struct job *s = malloc(n * sizeof(*s));
	uint64_t len = 0, end = 0;

	DT_ASSERT_TRUE(s != NULL);
	memcpy(s, j, n * sizeof(*s));
	/* insertion sort by run: n is small */
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && s[k].run < s[k - 1].run; k--) {
			struct job t = s[k];

			s[k] = s[k - 1];
			s[k - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		uint64_t a = s[i].run > end ? s[i].run : end;

		if (s[i].done > a)
			len += s[i].done - a;
		if (s[i].done > end)
			end = s[i].done;
	}
	free(s);
	return len;
}

DT_TEST(overlapping_completion_charges_the_union)
{
	struct dac_ring_val r = { 0 };
	struct job j[2] = { { 0, 10, 0 }, { 2, 5, 0 } };	/* A [0,10], B [2,5] */

	DT_EXPECT_EQ(replay(j, 2, &r), 10);
	DT_EXPECT_EQ(j[1].charged, 5);	/* B completes first: [0,5] */
	DT_EXPECT_EQ(j[0].charged, 5);	/* A: [5,10] */
	DT_EXPECT_EQ(r.busy_ns, 10);
	DT_EXPECT_EQ(r.jobs, 2);
}

DT_TEST(in_order_ring_charges_each_job_its_own_time)
{
	/* Pipelined (B runs before A is done), then idle, then one alone. */
	struct job j[3] = { { 100, 110, 0 }, { 102, 115, 0 }, { 130, 138, 0 } };
	struct dac_ring_val r = { 0 };

	DT_EXPECT_EQ(replay(j, 3, &r), 10 + 5 + 8);
	DT_EXPECT_EQ(j[0].charged, 10);
	DT_EXPECT_EQ(j[1].charged, 5);	/* from A's completion */
	DT_EXPECT_EQ(j[2].charged, 8);	/* the idle gap 115..130 is not charged */
}

/*
 * A job the programs lose (it ran, then the kernel took it off the
 * hardware without a done event -- a reset's drm_sched_stop(), or its
 * entry lost): the kernel's count drops it, so the next job on the idle
 * ring is charged its own time. A count kept by the programs would still
 * hold the lost job, and charge the next one the idle gap since (here
 * 30 instead of 10).
 */
DT_TEST(lost_job_leaves_the_ring_idle)
{
	struct dac_ring_val r = { 0 };

	dac_ring_run(&r, 0, true);		/* A runs: count 1 */
	/* A dropped at 5 without an event: count 0 */
	dac_ring_run(&r, 20, true);		/* B runs: count 1 again, idle before */
	DT_EXPECT_EQ(dac_ring_done(&r, 30), 10);
	DT_EXPECT_EQ(r.busy_ns, 10);
	DT_EXPECT_EQ(r.jobs, 1);
}

DT_TEST(random_orders_never_exceed_wall_time)
{
	unsigned int seed = 12345;

	for (int round = 0; round < 2000; round++) {
		struct job j[8];
		struct dac_ring_val r = { 0 };
		int n = 1 + rand_r(&seed) % 8;
		uint64_t first = UINT64_MAX, last = 0, sum, prev_done = 0;
		bool in_order = true;

		for (int i = 0; i < n; i++) {
			j[i].run = 1000 + rand_r(&seed) % 200;
			j[i].done = j[i].run + 1 + rand_r(&seed) % 60;
			j[i].charged = 0;
			first = j[i].run < first ? j[i].run : first;
			last = j[i].done > last ? j[i].done : last;
		}
		sum = replay(j, n, &r);
		DT_ASSERT_EQ(sum, union_len(j, n));
		DT_ASSERT_LE(sum, last - first);
		/* Completed in the order they ran: each job its own share. */
		for (int i = 0; i < n; i++)
			for (int k = 0; k < n; k++)
				if (i != k && ((j[i].run < j[k].run && j[i].done > j[k].done) ||
					       j[i].done == j[k].done))
					in_order = false;	/* (one instant: either may take it) */
		if (!in_order)
			continue;
		/* sort by done and check done - max(run, previous done) */
		for (int i = 1; i < n; i++)
			for (int k = i; k > 0 && j[k].done < j[k - 1].done; k--) {
				struct job t = j[k];

				j[k] = j[k - 1];
				j[k - 1] = t;
			}
		for (int i = 0; i < n; i++) {
			uint64_t start = j[i].run > prev_done ? j[i].run : prev_done;

			DT_ASSERT_EQ(j[i].charged, j[i].done > start ? j[i].done - start : 0);
			prev_done = j[i].done > prev_done ? j[i].done : prev_done;
		}
	}
	DT_EXPECT_EQ(cas_giveups, 0ul);
}

/* ---- the cmpxchg loops under contention --------------------------------- */

#define THREADS	4
#define ROUNDS	200000

struct shared {
	__u64 running;		/* decremented, never below 0 */
	__u64 total;		/* added to and subtracted from, floored */
	__u64 peak;
	__u64 taken[THREADS];
};

struct worker {
	struct shared *s;
	int id;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < ROUNDS; i++) {
		if (atomic_dec_nonzero(&w->s->running))
			w->s->taken[w->id]++;
		atomic_max(&w->s->peak, atomic_add_sub_floor(&w->s->total, 3, 0));
		atomic_add_sub_floor(&w->s->total, 0, 3);
	}
	return NULL;
}

DT_TEST(cmpxchg_loops_lose_nothing_under_contention)
{
	static struct shared s;
	struct worker w[THREADS];
	pthread_t t[THREADS];
	uint64_t taken = 0;
	const uint64_t start = (uint64_t)THREADS * ROUNDS / 2;

	s.running = start;	/* half of all attempts can take one */
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ &s, i };
		DT_ASSERT_EQ(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		DT_ASSERT_EQ(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < THREADS; i++)
		taken += s.taken[i];
	DT_EXPECT_EQ(taken, start);	/* each one taken once, none twice */
	DT_EXPECT_EQ(s.running, 0);
	DT_EXPECT_EQ(s.total, 0);	/* every add undone by its subtract */
	DT_EXPECT_GE(s.peak, 3);
	DT_EXPECT_LE(s.peak, 3 * THREADS);
	dt_info("%lu cmpxchg loops gave up", cas_giveups);
}

DT_MAIN
