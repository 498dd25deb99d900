// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * proc.bpf.c - process forks and exits: `drmacct stat` cookies, PROC_EXIT
 * records, and the sweep that writes those whose jobs never complete.
 */
#include "drmacct.h"

/* ---- the sweep: records of processes whose jobs will never complete --- */

/*
 * An exited process whose jobs are still pending waits for them: each job
 * that ran gets its completion. A job a kill dropped from its queue gets
 * no event at all (drm_sched_entity_kill_jobs_work() signals it with
 * -ESRCH and no scheduler tracepoint), nor does one whose completion the
 * programs missed. The sweep, a bpf_timer started by an exit that had to
 * wait, writes the record of every exited process with nothing moving
 * (no queue, run or completion of its jobs) for DAC_SWEEP_IDLE_NS with
 * none in flight (DAC_SWEEP_LOST_NS with some), flagged
 * DAC_EXIT_F_INCOMPLETE with the jobs still pending and what was charged;
 * it fires again while any exited process still waits. It then drops the
 * in-flight entries of processes whose record has been written: jobs
 * that never ran and never will. The timer callback runs in softirq
 * context; proc_emit()'s compare-and-swap makes it one record however the
 * sweep and a late completion meet.
 */
#define DAC_SWEEP_PERIOD_NS	1000000000ull	/* 1 s */
#define DAC_SWEEP_IDLE_NS	2000000000ull	/* 2 s: a close's flush runs the queue */
/*
 * A job that ran gets its completion (a hung one at its timeout, drm_sched's
 * job timeout is seconds): a process with one in flight is written only
 * when nothing moved for a minute -- a completion the programs missed.
 */
#define DAC_SWEEP_LOST_NS	60000000000ull
#define DAC_CLOCK_MONOTONIC	1

/*
 * PREEMPT_RT kernels refuse bpf_timer ("bpf_timer cannot be used for
 * PREEMPT_RT"): there the loader clears use_timer (/sys/kernel/realtime),
 * the verifier never visits the timer calls, and the sweep runs at the
 * next fork or exit once a period has passed (sweep_poke()) instead.
 */
const volatile bool use_timer = true;
__u32 sweep_waiting;		/* no timer: an exited process waits */
__u64 sweep_next_ns;		/* no timer: no sweep before this */
__u32 sweep_unknown;		/* never written: 0 (sweep_pass()) */

struct sweep_val {
	struct bpf_timer timer;
	__u32 armed;		/* 1: started and not yet fired */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sweep_val);
} sweeper SEC(".maps");

/*
 * A pass writes at most DAC_SWEEP_BATCH records; when more are due, the
 * next pass comes DAC_SWEEP_AGAIN_NS later rather than a period.
 */
#define DAC_SWEEP_BATCH		4
#define DAC_SWEEP_AGAIN_NS	1000000ull	/* 1 ms */
#define DAC_SWEEP_WAITING	1	/* sweep_pass(): an exited process waits */
#define DAC_SWEEP_MORE		2	/* sweep_pass(): more were due than written */

struct sweep_ctx {
	__u64 now;
	__u32 waiting;			/* 0, DAC_SWEEP_WAITING or DAC_SWEEP_MORE */
	__u32 n;			/* due[] used */
	__u32 job_map;			/* enum dac_map_id of the in-flight map walked */
	__u32 due[DAC_SWEEP_BATCH];	/* tgids of the processes to write now */
};

/* Is process entry @p exited, its record not written yet? */
static __always_inline bool sweep_exited(struct dac_proc_val *p)
{
	return __sync_fetch_and_add(&p->exited, 0) && p->start_ns != DAC_START_GONE;
}

/* Has nothing moved in exited process entry @p for long enough at @now? */
static __always_inline bool sweep_due(struct dac_proc_val *p, __u64 now)
{
	__u64 last = p->last_ns;

	last += __sync_fetch_and_add(&p->inflight, 0) ? DAC_SWEEP_LOST_NS : DAC_SWEEP_IDLE_NS;
	return now >= last;
}

/*
 * Process entry @p (key @tgid): noted to be written now if it exited and
 * nothing moves. sweep_pass() writes it after the walk: a proc_emit()
 * (which may walk a map itself) inside this callback cost the 7.3 verifier
 * 264,023 verified instructions, one at the top level 9,367.
 */
static long sweep_proc(void *map, __u32 *tgid, struct dac_proc_val *p, struct sweep_ctx *c)
{
	__u32 n = c->n;

	if (!sweep_exited(p))
		return 0;
	if (!sweep_due(p, c->now)) {
		c->waiting |= DAC_SWEEP_WAITING;
		return 0;
	}
	if (n >= DAC_SWEEP_BATCH) {
		c->waiting |= DAC_SWEEP_MORE;
		return 1;	/* the rest next pass */
	}
	c->due[n] = *tgid;
	c->n = n + 1;
	return 0;
}

/*
 * Selftests only (dac_bpf_load_opts.test_sweep_late): the sweep takes every
 * idle job to its claim, as if it had tested the job before its run and
 * its process after the record -- a run between the sweep's test and its
 * claim, on every pass, which no test can otherwise arrange. false in
 * every other load: the verifier drops the branch.
 */
const volatile bool test_sweep_late = false;

/*
 * In-flight entry @v: dropped when its process's record has been written
 * (no entry of that process any more) and it never ran -- a job a kill
 * dropped. A job of a live process, or one that ran, stays. An entry a
 * failed delete left (its job charged) goes too.
 */
static long sweep_job(void *map, const void *key, struct inflight_val *v, struct sweep_ctx *c)
{
	struct dac_fence_key id = v->key;
	__u32 tgid = v->tgid;
	struct dac_proc_val *p;

	if (job_left(map, c->job_map, key, v))
		return 0;
	if (v->tgid == DAC_TGID_KERNEL || c->now < v->queued_ns + DAC_SWEEP_IDLE_NS)
		return 0;
	if (!test_sweep_late) {
		if (v->run_ns)
			return 0;
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (p && proc_same(p, v->start_ns))
			return 0;
	}
	/* never ran (a run since the tests above left it RUNNING or RAN) */
	if (!job_hold(v, &id, DAC_JOB_FOLLOWED, DAC_JOB_TAKEN))
		return 0;
	stat_inc(DAC_STAT_STALE_RELEASED);
	job_drop(map, c->job_map, key, v);
	return 0;
}

/*
 * Write the record of process @tgid if it is still due at @now (a late
 * completion or a new process with the tgid may have come since the walk).
 * A global function: the verifier checks it once, on its own, not once
 * per call with each caller's state (four calls of a static one cost the
 * 6.18 verifier 114,245 instructions in all).
 */
__noinline int sweep_write(__u32 tgid, __u64 now)
{
	struct dac_proc_val *p = bpf_map_lookup_elem(&procs, &tgid);

	if (!p || !sweep_exited(p) || !sweep_due(p, now))
		return 0;
	stat_inc(DAC_STAT_SWEEP_WRITTEN);
	proc_emit(tgid, p, 0);
	return 1;
}

/*
 * One pass: the records due, then the in-flight entries. Returns 0,
 * DAC_SWEEP_WAITING or DAC_SWEEP_MORE (both bits: more).
 */
static __noinline __u32 sweep_pass(void)
{
	struct sweep_ctx c = { .now = bpf_ktime_get_ns() };

	/*
	 * Zero, from a global the verifier cannot know (a load from a map
	 * it does not freeze), not the constant: verifiers before 6.7 check
	 * a bpf_for_each_map_elem() callback as if it ran once, so with a
	 * known 0 in c.n they proved `n >= DAC_SWEEP_BATCH` in sweep_proc()
	 * and `i >= c.n` below for i > 0 never or always taken and wired
	 * those branches dead. 6.1 then wrote due[4] and due[5] over the
	 * saved frame pointer when six were due (the timer callback faulted
	 * at its return), and wrote one record per pass without a timer.
	 */
	c.n = *(volatile __u32 *)&sweep_unknown;
	c.waiting = *(volatile __u32 *)&sweep_unknown;

	bpf_for_each_map_elem(&procs, sweep_proc, &c, 0);
	for (int i = 0; i < DAC_SWEEP_BATCH; i++) {
		if (i >= c.n)
			break;
		sweep_write(c.due[i], c.now);
	}
	c.job_map = DAC_MAP_INFLIGHT;
	bpf_for_each_map_elem(&inflight, sweep_job, &c, 0);
	c.job_map = DAC_MAP_INFLIGHT617;
	bpf_for_each_map_elem(&inflight617, sweep_job, &c, 0);
	return c.waiting;
}

static int sweep_fire(void *map, __u32 *key, struct sweep_val *sv)
{
	__u32 w;

	__sync_fetch_and_and(&sv->armed, 0);
	w = sweep_pass();
	if (w && !__sync_val_compare_and_swap(&sv->armed, 0, 1))
		bpf_timer_start(&sv->timer, (w & DAC_SWEEP_MORE) ? DAC_SWEEP_AGAIN_NS :
				DAC_SWEEP_PERIOD_NS, 0);
	return 0;
}

/* Without a timer: a fork or an exit runs the sweep when one is due. */
static __always_inline void sweep_poke(void)
{
	__u64 next, now;
	__u32 w;

	if (use_timer || !*(volatile __u32 *)&sweep_waiting)
		return;
	next = *(volatile __u64 *)&sweep_next_ns;
	now = bpf_ktime_get_ns();
	if (now < next ||
	    __sync_val_compare_and_swap(&sweep_next_ns, next, now + DAC_SWEEP_PERIOD_NS) != next)
		return;
	__sync_fetch_and_and(&sweep_waiting, 0);
	w = sweep_pass();
	if (w)
		__sync_fetch_and_or(&sweep_waiting, 1);
	if (w & DAC_SWEEP_MORE)
		sweep_next_ns = now;	/* the next fork or exit goes on */
}

/*
 * The timer is set up once, by sweep_init(), which the loader runs right
 * after the load (BPF_PROG_TEST_RUN): the verifier checks the callback
 * (sweep_fire(), the whole sweep with its three map walks) only in the
 * program that names it. Were the exit programs to call
 * bpf_timer_set_callback() themselves, each of the four would carry that
 * verification too, and 7.x verifiers walk callbacks until their states
 * converge: pb_exit cost 273,780 verified instructions on 7.3 that way
 * (27,741 on 6.12). A syscall program: one the loader runs itself, on
 * every kernel the loader takes (6.1 has them), and no event of its own.
 * Returns 0 or the helper's error; a no-op without a timer (PREEMPT_RT).
 */
SEC("syscall")
int sweep_init(void *ctx)
{
	__u32 zero = 0;
	struct sweep_val *sv;
	long err;

	if (!use_timer)
		return 0;
	sv = bpf_map_lookup_elem(&sweeper, &zero);
	if (!sv)
		return -DAC_ENOENT;
	err = bpf_timer_init(&sv->timer, &sweeper, DAC_CLOCK_MONOTONIC);
	if (err)
		return err;
	return bpf_timer_set_callback(&sv->timer, sweep_fire);
}

/*
 * An exited process waits for its jobs: the sweep runs within a period.
 * bpf_timer_start() refuses a timer sweep_init() has not set up (-EINVAL):
 * then nothing is armed, and the sweep does not run.
 */
static __always_inline void sweep_arm(void)
{
	__u32 zero = 0;
	struct sweep_val *sv;

	if (!use_timer) {
		if (!__sync_fetch_and_or(&sweep_waiting, 1))
			sweep_next_ns = bpf_ktime_get_ns() + DAC_SWEEP_PERIOD_NS;
		return;
	}
	sv = bpf_map_lookup_elem(&sweeper, &zero);
	if (!sv || __sync_val_compare_and_swap(&sv->armed, 0, 1))
		return;		/* already on its way */
	if (bpf_timer_start(&sv->timer, DAC_SWEEP_PERIOD_NS, 0))
		__sync_fetch_and_and(&sv->armed, 0);
}

/*
 * In-flight entries a refused delete left (jobs_left): a sweep deletes
 * them. Called by the fork and exit programs, which may arm it.
 */
static __always_inline void sweep_left(void)
{
	if (*(volatile __u32 *)&jobs_left && __sync_fetch_and_and(&jobs_left, 0))
		sweep_arm();
}

/* ---- process tracking ---------------------------------------------------- */

/*
 * A new process inherits its parent's `drmacct stat` cookie. Returns
 * whether there was one to copy and the child did not have it yet.
 */
static __always_inline bool fork_inherit(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u64 *cookie, *have, c;

	if (ptgid == ctgid)
		return false;	/* a new thread, not a new process */
	cookie = bpf_map_lookup_elem(&tracked, &ptgid);
	if (!cookie)
		return false;
	c = *cookie;
	have = bpf_map_lookup_elem(&tracked, &ctgid);
	if (have && *have == c)
		return false;
	bpf_map_update_elem(&tracked, &ctgid, &c, BPF_ANY);
	return true;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pb_fork, struct task_struct *parent, struct task_struct *child)
{
	if (parent && child)
		fork_inherit(parent, child);
	sweep_poke();
	sweep_left();
	return 0;
}

/*
 * Has exiting process @task work left for pb_exit: a tracked entry, or
 * a procs entry not yet marked exited (or an earlier process's, never
 * written)? What pb_exit leaves behind once it ran, so its _nested
 * twin tells from it whether the first program saw this exit.
 */
static __always_inline bool exit_pending(struct task_struct *task, __u32 tgid)
{
	struct dac_proc_val *p;
	__u64 start;

	if (bpf_map_lookup_elem(&tracked, &tgid))
		return true;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return false;
	start = proc_start(task);
	if (proc_same(p, start))
		return !__sync_fetch_and_add(&p->exited, 0);
	return p->start_ns < start;	/* never DAC_START_GONE */
}

/*
 * A process is gone (its last thread exits; its files, DRM clients among
 * them, close right after): it is marked exited, and its PROC_EXIT record
 * is written now, or by the completion of its last scheduler job still in
 * flight (proc_job_gone()). Every exiting process loses its tracked entry;
 * processes that never had a GPU job cost one failed lookup.
 */
static __always_inline void on_exit(struct task_struct *task, __u32 tgid)
{
	struct dac_proc_val *p;
	__u64 start;

	bpf_map_delete_elem(&tracked, &tgid);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return;
	start = proc_start(task);
	if (!proc_same(p, start)) {
		/* an earlier process's entry, never written: it goes now */
		if (p->start_ns < start)
			proc_write(tgid, p->start_ns, DAC_EXIT_F_REUSED);
		return;
	}
	p->last_ns = bpf_ktime_get_ns();	/* the exit is its last event so far */
	if (__sync_val_compare_and_swap(&p->exited, 0, 1))
		return;
	if (!proc_pending(p))
		proc_write(tgid, p->start_ns, 0);
	else
		sweep_arm();
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pb_exit, struct task_struct *task)
{
	sweep_poke();
	sweep_left();
	if (!task || BPF_CORE_READ(task, signal, live.counter))
		return 0;	/* other threads live on */
	on_exit(task, BPF_CORE_READ(task, tgid));
	return 0;
}

/*
 * The forks and exits pb_fork and pb_exit missed: these events come
 * from task context, where 7.x kernels run tp_btf programs preemptible (see
 * sb_queue_n1). What the first program leaves behind tells
 * whether it saw the event: the child's cookie, the exit's entries.
 */
static __always_inline void exit_unseen(struct task_struct *task)
{
	__u32 tgid;

	if (!task || BPF_CORE_READ(task, signal, live.counter))
		return;
	tgid = BPF_CORE_READ(task, tgid);
	if (!exit_pending(task, tgid))
		return;
	stat_inc(DAC_STAT_NESTED_EXIT);
	on_exit(task, tgid);
}

/*
 * Three twins each, as for the 6.17 scheduler events: exits come in
 * bursts (a job's processes end together), pb_exit walks a process's
 * rings and is long, and a twin held by a preempted exiting task loses
 * the next exit on its CPU as well (test_bpf_scheds on 7.3: pb_exit
 * and pb_exit_n1 both skipped once, one PROC_EXIT record lost).
 * What the first program to act leaves behind stops the others.
 */
#define TRACK_TWINS(n)									\
SEC("tp_btf/sched_process_fork")							\
int BPF_PROG(pb_fork_n##n, struct task_struct *parent, struct task_struct *child)	\
{											\
	if (parent && child && fork_inherit(parent, child))				\
		stat_inc(DAC_STAT_NESTED_FORK);						\
	return 0;									\
}											\
SEC("tp_btf/sched_process_exit")							\
int BPF_PROG(pb_exit_n##n, struct task_struct *task)					\
{											\
	exit_unseen(task);								\
	return 0;									\
}

TRACK_TWINS(1)
TRACK_TWINS(2)
TRACK_TWINS(3)
