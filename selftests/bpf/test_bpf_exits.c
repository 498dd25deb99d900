// SPDX-License-Identifier: GPL-2.0
/*
 * PROC_EXIT records that cannot be lost (bpf/drmacct/proc.bpf.c, issue 24):
 *   1. a process SIGKILLed with 50 jobs still queued behind another
 *      process's: the kill drops them without any scheduler event. It gets
 *      exactly one record, written by the sweep (INCOMPLETE, 50 pending),
 *      whose sums are the jobs that ran -- simgpu's WAIT stamps -- and the
 *      50 in-flight entries of the dropped jobs are released, no more;
 *      so do six such processes killed at once, more than one pass of
 *      the sweep writes; and with every pass of the sweep taking every
 *      idle job to its claim (test_sweep_late), the parent's jobs that ran
 *      meanwhile are still charged, each once;
 *   2. 1,000 processes, each ending right after one short hrtimer-driven
 *      job (its completion races the exit): every one gets exactly one
 *      record, complete, with its one job.
 *
 *   3. in-flight entries whose delete is refused (as when the bucket is
 *      locked by a program this one interrupted: drmacct.bpf's
 *      refuse_job_deletes makes every delete fail so): each job is still
 *      charged exactly once -- its completion claims the entry, the delete
 *      is only the clean-up -- the refusals are counted, and the process
 *      gets one complete record.
 *
 * DRMACCT_EXITS (VM_ENV_VARS) sets the number of processes of test 2
 * (default 1000).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "drmacct.skel.h"
#include "dtest.h"
#include "sgtest.h"

#define RAN_JOBS	3	/* jobs the killed process runs and waits for */
#define QUEUED_JOBS	50	/* jobs it has queued when it is killed */
#define BLOCKERS	4	/* SIMGPU_HW_QUEUE_DEPTH: the parent's jobs fill it */

/* What a child ran, as the driver says (WAIT). */
struct exit_truth {
	int32_t pid;
	uint32_t jobs;
	uint64_t busy_ns;		/* sum of end - start */
	uint64_t run[RAN_JOBS];
	uint64_t end[RAN_JOBS];
};

/* A child as forked: which process a record is for. */
struct exit_fork {
	pid_t pid;
	uint64_t lo, hi;	/* CLOCK_MONOTONIC around fork(): its start is between */
};

/* Records of the children, matched by tgid and start. */
struct exit_catch {
	const struct exit_fork *fork;
	size_t n;
	unsigned int *records;		/* per child */
	struct dac_bpf_proc_exit *last;	/* per child: its last record (no rings) */
	uint64_t lost;
	size_t bad_sum;			/* rings that do not add up to the total */
};

static int catch_exit(void *ctx, const struct dac_bpf_event *ev)
{
	struct exit_catch *c = ctx;
	uint64_t busy = 0, jobs = 0;

	if (ev->type == DAC_BPF_LOST)
		c->lost += ev->lost.count;
	if (ev->type != DAC_BPF_PROC_EXIT)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		if ((uint32_t)c->fork[i].pid != ev->proc.tgid ||
		    ev->proc.start_ns < c->fork[i].lo || ev->proc.start_ns > c->fork[i].hi)
			continue;
		for (uint32_t r = 0; r < ev->proc.num_rings; r++) {
			busy += ev->proc.rings[r].busy_ns;
			jobs += ev->proc.rings[r].jobs;
		}
		if (busy != ev->proc.busy_ns || jobs != ev->proc.jobs)
			c->bad_sum++;
		c->records[i]++;
		c->last[i] = ev->proc;
		c->last[i].rings = NULL;
		return 0;
	}
	return 0;
}

/*
 * Before the children: the render node's path (@node, 64 bytes), the
 * device's capacity-1 engine (@dev, freed by the caller), the names the
 * records will carry, and no record left from before in @b.
 */
static const struct sg_engine *exits_setup(struct dac_bpf *b, struct sg_dev *dev, char *node,
					   struct exit_catch *c)
{
	int fd;

	DT_ASSERT_EQ(sg_find_node(node, 64), 0);
	fd = sg_open();
	sg_query(fd, dev);
	close(fd);
	dac_bpf_learn_names(b);
	while (dac_bpf_poll(b, 50, catch_exit, c) > 0)
		;
	DT_ASSERT_TRUE(sg_engine_simple(dev) != NULL);
	return sg_engine_simple(dev);
}

/*
 * The killed child: RAN_JOBS jobs of @ns run and waited for (truth to @wfd),
 * then, when the parent says so on @rfd (its blockers fill the engine's
 * queue), QUEUED_JOBS more submitted; it says so on @wfd and closes its
 * file, which waits until its queued jobs are handed to the engine: the
 * kill comes in that wait, the harder case of the two: a kill in pause()
 * drops them as well (test_queues checks that), as the exit's close does
 * not wait in a process killed by SIGKILL.
 */
static void killed_child(const char *node, unsigned int engine, uint64_t ns, int rfd, int wfd)
{
	struct exit_truth t = { .pid = getpid() };
	int fd = open(node, O_RDWR | O_CLOEXEC);
	char go;

	if (fd < 0)
		_exit(2);
	for (unsigned int j = 0; j < RAN_JOBS; j++) {
		struct drm_simgpu_wait w;

		sg_wait(fd, sg_submit_busy(fd, engine, SIMGPU_INSTANCE_ANY, ns), &w);
		t.busy_ns += w.end_ns - w.start_ns;
		t.run[t.jobs] = w.run_ns;
		t.end[t.jobs++] = w.end_ns;
	}
	if (write(wfd, &t, sizeof(t)) != sizeof(t) || read(rfd, &go, 1) != 1)
		_exit(3);
	for (unsigned int j = 0; j < QUEUED_JOBS; j++)
		sg_submit_busy(fd, engine, SIMGPU_INSTANCE_ANY, ns);
	if (write(wfd, &go, 1) != 1)
		_exit(4);
	close(fd);
	_exit(5);
}

/* Is @pid inside close(2) (its /proc syscall line)? */
static bool in_close(pid_t pid)
{
	char path[64], *s;
	bool ret;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	s = sg_read_file(path, NULL);
	if (!s)
		return false;
	ret = strtol(s, NULL, 10) == SYS_close;
	free(s);
	return ret;
}

/* Kill @pid once it is inside close(2), its queued jobs waiting (killed_child()). */
static void kill_in_close(pid_t pid)
{
	uint64_t t0 = sg_now_ns();
	int status;

	while (!in_close(pid) && sg_now_ns() - t0 < 10000 * NSEC_PER_MSEC)
		usleep(1000);
	DT_ASSERT_TRUE(in_close(pid));
	DT_ASSERT_EQ(kill(pid, SIGKILL), 0);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/*
 * One wait for the sweep's records: a short-lived child (on PREEMPT_RT,
 * without bpf_timer, the sweep runs at a fork or an exit, as any system
 * makes them), then a poll into @c.
 */
static void sweep_tick(struct dac_bpf *b, struct exit_catch *c)
{
	pid_t p = fork();
	int status;

	DT_ASSERT_GE(p, 0);
	if (!p)
		_exit(0);
	DT_ASSERT_EQ(waitpid(p, &status, 0), p);
	DT_ASSERT_GE(dac_bpf_poll(b, 200, catch_exit, c), 0);
}

/*
 * The blockers after the first run out, then one more sweep period of
 * polling: a second record of a process would come now.
 */
static void settle(struct dac_bpf *b, struct exit_catch *c, int fd, const uint64_t *blocker)
{
	uint64_t t0;

	for (int i = 1; i < BLOCKERS; i++) {
		struct drm_simgpu_wait w;

		sg_wait(fd, blocker[i], &w);
	}
	t0 = sg_now_ns();
	while (sg_now_ns() - t0 < 3000 * NSEC_PER_MSEC)
		DT_ASSERT_GE(dac_bpf_poll(b, 200, catch_exit, c), 0);
}

/*
 * Test 1 with load options @o (the sweep's test_sweep_late or none): the
 * child's record, and the parent's blockers, which ran for seconds while
 * the sweep went over them, each charged once.
 */
static void killed_with_queued_jobs(struct dac_bpf_load_opts *o)
{
	struct dac_bpf *b = sg_bpf_load(o);
	uint64_t own_busy, own_jobs;
	struct dac_bpf_proc_exit last = { 0 };
	struct dac_bpf_stats st0, st;
	struct exit_fork f = { 0 };
	struct exit_truth t;
	struct exit_catch c = { .fork = &f, .n = 1, .last = &last };
	unsigned int records = 0;
	const struct sg_engine *e;
	uint64_t blocker[BLOCKERS], union_ns, t0;
	struct sg_dev dev;
	int to_child[2], from_child[2], fd;
	char node[64], go = 'g';

	c.records = &records;
	e = exits_setup(b, &dev, node, &c);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	fd = sg_open_raw();
	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(pipe(to_child), 0);
	DT_ASSERT_EQ(pipe(from_child), 0);
	f.lo = sg_now_ns();
	f.pid = fork();
	f.hi = sg_now_ns();
	DT_ASSERT_GE(f.pid, 0);
	if (f.pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		killed_child(node, e->index, 2 * NSEC_PER_MSEC, to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	DT_ASSERT_EQ(read(from_child[0], &t, sizeof(t)), (ssize_t)sizeof(t));
	DT_ASSERT_EQ(t.jobs, (uint32_t)RAN_JOBS);
	/*
	 * The engine has one instance, which drm_sched gives at most
	 * BLOCKERS jobs at a time: these 2 s jobs take them all, so none of
	 * the child's queued jobs can run before the kill.
	 */
	for (int i = 0; i < BLOCKERS; i++)
		blocker[i] = sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY,
					    2000 * NSEC_PER_MSEC);
	/*
	 * A close of a descriptor waits until the file's queued jobs are all
	 * handed to the engine (simgpu's flush): the blockers hold it before
	 * the child queues anything (on 6.1 the scheduler otherwise took two
	 * of the child's jobs between them).
	 */
	DT_ASSERT_EQ(close(dup(fd)), 0);
	DT_ASSERT_EQ(write(to_child[1], &go, 1), 1);
	DT_ASSERT_EQ(read(from_child[0], &go, 1), 1);
	kill_in_close(f.pid);
	{
		struct drm_simgpu_wait w;

		/* The first blocker was still running: nothing of the child ran. */
		sg_wait(fd, blocker[0], &w);
		DT_EXPECT_GT(w.end_ns, f.hi);
	}
	/*
	 * The sweep writes the record within its period (1 s) after 2 s with
	 * nothing moving; 30 s is far beyond that under TCG. On PREEMPT_RT
	 * (no bpf_timer) it runs at a fork or an exit: a short-lived child
	 * every poll makes them, as any system does.
	 */
	t0 = sg_now_ns();
	while (!records && sg_now_ns() - t0 < 30000 * NSEC_PER_MSEC)
		sweep_tick(b, &c);
	settle(b, &c, fd, blocker);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	union_ns = sg_union_ns(t.run, t.end, t.jobs);
	dt_info("killed child: %u records, flags %#x, pending %u; jobs %" PRIu64 "/%u, drmacct %"
		PRIu64 "/%" PRIu64 " ns, scheduler %" PRIu64 " ns (union %" PRIu64 "); sweep wrote %"
		PRIu64 ", stale in-flight released %" PRIu64, records, last.flags, last.pending,
		last.jobs, t.jobs, last.acct_busy_ns, t.busy_ns, last.busy_ns, union_ns,
		st.sweep_written - st0.sweep_written, st.stale_released - st0.stale_released);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	DT_ASSERT_EQ(records, 1u);
	DT_EXPECT_EQ(c.bad_sum, (size_t)0);
	DT_EXPECT_TRUE(last.flags & DAC_BPF_EXIT_INCOMPLETE);
	DT_EXPECT_FALSE(last.flags & DAC_BPF_EXIT_REUSED);
	DT_EXPECT_EQ(last.pending, (uint32_t)QUEUED_JOBS);
	/* The jobs that ran, exactly; drmacct's sums are the driver's own. */
	DT_EXPECT_EQ(last.jobs, (uint64_t)RAN_JOBS);
	DT_EXPECT_EQ(last.acct_jobs, (uint64_t)RAN_JOBS);
	DT_EXPECT_EQ(last.acct_busy_ns, t.busy_ns);
	/*
	 * Scheduler time: the union of the jobs' [run_ns, end_ns], charged up
	 * to the fence callback: 1% below, and above 1% + 2 ms per job for the
	 * callback's lateness after end_ns. Each of these jobs runs on an idle
	 * ring, so every one carries its own lateness (test_bpf_procs' 0.2 ms
	 * is an average over thousands); measured under TCG on the shared
	 * 2-core host: +4.4 ms over the 3 jobs on 6.12, +2.9 ms on 7.3 (the
	 * bound of test_bpf_nested). The job counts above are exact: a
	 * dropped job charged would show there first.
	 */
	DT_EXPECT_GE(last.busy_ns, union_ns - union_ns / 100);
	DT_EXPECT_LE(last.busy_ns, union_ns + union_ns / 100 +
				   (uint64_t)(RAN_JOBS * 2000000.0 * dt_timeout_scale()));
	DT_EXPECT_EQ(st.sweep_written - st0.sweep_written, (uint64_t)1);
	/* The dropped jobs' in-flight entries, and nothing else. */
	DT_EXPECT_EQ(st.stale_released - st0.stale_released, (uint64_t)QUEUED_JOBS);
	/* The parent's blockers, every one completed (settle()) and charged. */
	sg_bpf_sched_sums(b, (uint32_t)getpid(), &own_busy, &own_jobs);
	dt_info("parent: %" PRIu64 " jobs, %" PRIu64 " ns charged", own_jobs, own_busy);
	DT_EXPECT_EQ(own_jobs, (uint64_t)BLOCKERS);
	close(fd);
	close(to_child[1]);
	close(from_child[0]);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

DT_TEST_TIMEOUT(killed_with_queued_jobs_one_incomplete_record, 300)
{
	struct dac_bpf_load_opts o = { 0 };

	killed_with_queued_jobs(&o);
}

/*
 * The same with every sweep pass taking every job idle for its period to
 * its claim, run or not, its process alive or not (test_sweep_late): what
 * a run between the sweep's look at a job and its claim comes to. The
 * parent's blockers ran from their queue on and stay in flight for
 * seconds, over several passes: the claim of a job that ran fails
 * (enum dac_job_state), so each still gets its completion, and only the
 * child's 50 dropped jobs are released.
 */
DT_TEST_TIMEOUT(killed_with_queued_jobs_sweep_late, 300)
{
	struct dac_bpf_load_opts o = { .test_sweep_late = true };

	killed_with_queued_jobs(&o);
}

/*
 * More killed processes at once than one sweep pass writes (DAC_SWEEP_BATCH,
 * 4, in bpf/drmacct/proc.bpf.c): the pass notes four, writes them, and the next
 * comes right after for the rest. Every one gets its one record,
 * INCOMPLETE with its QUEUED_JOBS pending and its RAN_JOBS jobs; all their
 * dropped jobs' in-flight entries go. Longer blockers than above: the
 * kills of all children must come before the first blocker ends (a queued
 * job that ran would be counted).
 */
#define KILLED		6
#define LONG_BLOCK_MS	4000

DT_TEST_TIMEOUT(more_killed_than_one_sweep_pass_writes, 300)
{
	struct dac_bpf_load_opts o = { 0 };
	struct dac_bpf *b;
	struct dac_bpf_proc_exit last[KILLED];
	struct exit_truth t[KILLED];
	struct exit_fork f[KILLED];
	unsigned int records[KILLED] = { 0 }, total = 0;
	struct exit_catch c = { .fork = f, .n = KILLED, .records = records, .last = last };
	struct dac_bpf_stats st0, st;
	const struct sg_engine *e;
	uint64_t blocker[BLOCKERS], t0, hi = 0;
	struct sg_dev dev;
	int to_child[KILLED][2], from_child[KILLED][2], fd;
	char node[64], go = 'g';

	b = sg_bpf_load(&o);

	memset(last, 0, sizeof(last));
	memset(f, 0, sizeof(f));
	e = exits_setup(b, &dev, node, &c);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	fd = sg_open_raw();
	DT_ASSERT_GE(fd, 0);
	for (int i = 0; i < KILLED; i++) {
		DT_ASSERT_EQ(pipe(to_child[i]), 0);
		DT_ASSERT_EQ(pipe(from_child[i]), 0);
		f[i].lo = sg_now_ns();
		f[i].pid = fork();
		f[i].hi = sg_now_ns();
		DT_ASSERT_GE(f[i].pid, 0);
		if (f[i].pid == 0) {
			close(to_child[i][1]);
			close(from_child[i][0]);
			killed_child(node, e->index, 2 * NSEC_PER_MSEC, to_child[i][0],
				     from_child[i][1]);
		}
		close(to_child[i][0]);
		close(from_child[i][1]);
		DT_ASSERT_EQ(read(from_child[i][0], &t[i], sizeof(t[i])), (ssize_t)sizeof(t[i]));
		DT_ASSERT_EQ(t[i].jobs, (uint32_t)RAN_JOBS);
	}
	for (int i = 0; i < BLOCKERS; i++)
		blocker[i] = sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY,
					    LONG_BLOCK_MS * NSEC_PER_MSEC);
	DT_ASSERT_EQ(close(dup(fd)), 0);
	/*
	 * All queue their jobs before the first kill: on 6.1's set a job's
	 * in-flight key is its fence's address, and a fence a kill freed,
	 * reused by a later child's job, releases the killed one's entry and
	 * count (its record then has fewer pending, or none).
	 */
	for (int i = 0; i < KILLED; i++) {
		DT_ASSERT_EQ(write(to_child[i][1], &go, 1), 1);
		DT_ASSERT_EQ(read(from_child[i][0], &go, 1), 1);
	}
	for (int i = 0; i < KILLED; i++)
		kill_in_close(f[i].pid);
	hi = sg_now_ns();
	{
		struct drm_simgpu_wait w;

		/* The first blocker was still running: no queued job of theirs ran. */
		sg_wait(fd, blocker[0], &w);
		DT_EXPECT_GT(w.end_ns, hi);
	}
	/* as above: 30 s, far beyond the sweep's 3 s; forks for PREEMPT_RT */
	t0 = sg_now_ns();
	while (total < KILLED && sg_now_ns() - t0 < 30000 * NSEC_PER_MSEC) {
		sweep_tick(b, &c);
		total = 0;
		for (int i = 0; i < KILLED; i++)
			total += records[i] > 0;
	}
	settle(b, &c, fd, blocker);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	dt_info("%d killed children: %u with a record; sweep wrote %" PRIu64
		", stale in-flight released %" PRIu64, KILLED, total,
		st.sweep_written - st0.sweep_written, st.stale_released - st0.stale_released);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	DT_EXPECT_EQ(c.bad_sum, (size_t)0);
	for (int i = 0; i < KILLED; i++) {
		DT_EXPECT_EQ(records[i], 1u);
		DT_EXPECT_TRUE(last[i].flags & DAC_BPF_EXIT_INCOMPLETE);
		DT_EXPECT_EQ(last[i].pending, (uint32_t)QUEUED_JOBS);
		DT_EXPECT_EQ(last[i].jobs, (uint64_t)RAN_JOBS);
		DT_EXPECT_EQ(last[i].acct_jobs, (uint64_t)RAN_JOBS);
		DT_EXPECT_EQ(last[i].acct_busy_ns, t[i].busy_ns);
		close(to_child[i][1]);
		close(from_child[i][0]);
	}
	DT_EXPECT_EQ(st.sweep_written - st0.sweep_written, (uint64_t)KILLED);
	DT_EXPECT_EQ(st.stale_released - st0.stale_released, (uint64_t)(KILLED * QUEUED_JOBS));
	close(fd);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

#define BATCH 8		/* processes alive at a time */

DT_TEST_TIMEOUT(completions_racing_exits_one_record_each, 1800)
{
	struct dac_bpf_load_opts o = { 0 };
	struct dac_bpf *b = sg_bpf_load(&o);
	const char *nenv = getenv("DRMACCT_EXITS");
	unsigned long n = nenv ? strtoul(nenv, NULL, 10) : 1000;
	struct exit_catch c = { 0 };
	struct dac_bpf_stats st0, st;
	struct exit_fork *f;
	const struct sg_engine *e;
	size_t bad = 0, incomplete = 0, seen = 0;
	struct sg_dev dev;
	char node[64];
	uint64_t t0;

	DT_ASSERT_GT(n, 0ul);
	e = exits_setup(b, &dev, node, &c);
	f = calloc(n, sizeof(*f));
	c.records = calloc(n, sizeof(*c.records));
	c.last = calloc(n, sizeof(*c.last));
	DT_ASSERT_TRUE(f && c.records && c.last);
	c.fork = f;
	c.n = n;
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	for (unsigned long i = 0; i < n; i += BATCH) {
		unsigned long nb = n - i < BATCH ? n - i : BATCH;

		for (unsigned long k = 0; k < nb; k++) {
			struct exit_fork *x = &f[i + k];

			x->lo = sg_now_ns();
			x->pid = fork();
			x->hi = sg_now_ns();
			DT_ASSERT_GE(x->pid, 0);
			if (x->pid == 0) {
				int fd = open(node, O_RDWR | O_CLOEXEC);

				/*
				 * 20 to 160 us: the hrtimer's completion and the
				 * exit come at about the same time; no WAIT.
				 */
				if (fd < 0)
					_exit(2);
				sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY,
					       20000 * (1 + (i + k) % 8));
				_exit(0);
			}
		}
		for (unsigned long k = 0; k < nb; k++) {
			int status;

			DT_ASSERT_EQ(waitpid(f[i + k].pid, &status, 0), f[i + k].pid);
			DT_ASSERT_EQ(status, 0);
		}
		DT_ASSERT_GE(dac_bpf_poll(b, 0, catch_exit, &c), 0);
	}
	/* Every record comes at the last completion: all within seconds. */
	t0 = sg_now_ns();
	while (sg_now_ns() - t0 < 5000 * NSEC_PER_MSEC)
		DT_ASSERT_GE(dac_bpf_poll(b, 200, catch_exit, &c), 0);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	for (unsigned long i = 0; i < n; i++) {
		seen += c.records[i];
		if (c.records[i] == 1 && c.last[i].jobs == 1 && c.last[i].acct_jobs == 1 &&
		    !(c.last[i].flags & (DAC_BPF_EXIT_INCOMPLETE | DAC_BPF_EXIT_REUSED)))
			continue;
		if (c.records[i] && (c.last[i].flags & DAC_BPF_EXIT_INCOMPLETE))
			incomplete++;
		if (bad++ < 10)
			dt_info("child %lu (pid %d): %u records; last: %" PRIu64 " jobs, %" PRIu64
				" drmacct jobs, flags %#x, pending %u", i, (int)f[i].pid,
				c.records[i], c.last[i].jobs, c.last[i].acct_jobs, c.last[i].flags,
				c.last[i].pending);
	}
	dt_info("%lu processes: %zu records, %zu off (%zu incomplete), %" PRIu64 " lost; sweep"
		" wrote %" PRIu64 ", orphan completions %" PRIu64 ", nested exits %" PRIu64,
		n, seen, bad, incomplete, c.lost, st.sweep_written - st0.sweep_written,
		st.sched_orphans - st0.sched_orphans, st.nested_exit - st0.nested_exit);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	DT_EXPECT_EQ(c.bad_sum, (size_t)0);
	DT_EXPECT_EQ(bad, (size_t)0);
	DT_EXPECT_EQ(seen, (size_t)n);
	DT_EXPECT_EQ(st.sweep_written, st0.sweep_written);
	free(f);
	free(c.records);
	free(c.last);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

/* The deletes refused: the in-flight maps' busy and nomem counts. */
static uint64_t refused_deletes(struct dac_bpf *b)
{
	struct dac_bpf_map_stat *ms;
	uint64_t n = 0;
	size_t nm;

	DT_ASSERT_EQ(dac_bpf_read_maps(b, &ms, &nm), 0);
	for (size_t i = 0; i < nm; i++)
		if (!strncmp(ms[i].name, "inflight", 8))
			n += ms[i].busy + ms[i].nomem;
	free(ms);
	return n;
}

#define REFUSED_JOBS	5

DT_TEST_TIMEOUT(refused_deletes_charge_each_job_once, 300)
{
	struct dac_bpf_load_opts o = { 0 };
	struct dac_bpf *b = sg_bpf_load(&o);
	struct dac_bpf_proc_exit last = { 0 };
	struct dac_bpf_stats st0, st;
	struct exit_fork f = { 0 };
	struct exit_catch c = { .fork = &f, .n = 1, .last = &last };
	struct exit_truth t;
	unsigned int records = 0;
	const struct sg_engine *e;
	uint64_t refused0, t0;
	struct sg_dev dev;
	int from_child[2], status;
	char node[64];

	DT_ASSERT_TRUE(b->skel != NULL);
	c.records = &records;
	e = exits_setup(b, &dev, node, &c);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	refused0 = refused_deletes(b);
	b->skel->bss->refuse_job_deletes = 1;
	DT_ASSERT_EQ(pipe(from_child), 0);
	f.lo = sg_now_ns();
	f.pid = fork();
	f.hi = sg_now_ns();
	DT_ASSERT_GE(f.pid, 0);
	if (f.pid == 0) {
		int fd = open(node, O_RDWR | O_CLOEXEC);

		memset(&t, 0, sizeof(t));
		t.pid = getpid();
		if (fd < 0)
			_exit(2);
		for (unsigned int j = 0; j < REFUSED_JOBS; j++) {
			struct drm_simgpu_wait w;

			sg_wait(fd, sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY,
						   2 * NSEC_PER_MSEC), &w);
			t.busy_ns += w.end_ns - w.start_ns;
			t.jobs++;
		}
		if (write(from_child[1], &t, sizeof(t)) != sizeof(t))
			_exit(3);
		_exit(0);
	}
	close(from_child[1]);
	DT_ASSERT_EQ(read(from_child[0], &t, sizeof(t)), (ssize_t)sizeof(t));
	DT_ASSERT_EQ(waitpid(f.pid, &status, 0), f.pid);
	DT_ASSERT_EQ(status, 0);
	b->skel->bss->refuse_job_deletes = 0;
	t0 = sg_now_ns();
	while (!records && sg_now_ns() - t0 < 30000 * NSEC_PER_MSEC)
		sweep_tick(b, &c);
	/* a second record would come within a sweep period */
	t0 = sg_now_ns();
	while (sg_now_ns() - t0 < 2000 * NSEC_PER_MSEC)
		DT_ASSERT_GE(dac_bpf_poll(b, 200, catch_exit, &c), 0);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	dt_info("%u jobs, deletes refused %" PRIu64 ": %u records, flags %#x; jobs %" PRIu64
		", drmacct %" PRIu64 "/%" PRIu64 " ns, scheduler %" PRIu64 " ns; nested done %"
		PRIu64, t.jobs, refused_deletes(b) - refused0, records, last.flags, last.jobs,
		last.acct_busy_ns, t.busy_ns, last.busy_ns,
		st.nested_sched_done - st0.nested_sched_done);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	DT_ASSERT_EQ(records, 1u);
	DT_EXPECT_EQ(c.bad_sum, (size_t)0);
	DT_EXPECT_FALSE(last.flags & (DAC_BPF_EXIT_INCOMPLETE | DAC_BPF_EXIT_REUSED));
	/* once each: a twin that took a refused entry again would double them */
	DT_EXPECT_EQ(last.jobs, (uint64_t)REFUSED_JOBS);
	DT_EXPECT_EQ(last.acct_jobs, (uint64_t)REFUSED_JOBS);
	DT_EXPECT_EQ(last.acct_busy_ns, t.busy_ns);
	/*
	 * Scheduler time: the jobs ran one after another, each from before
	 * its start to after its end, so at least their drmacct time (1%
	 * below for the clock reads) and at most that plus 2 ms of callback
	 * lateness each (see killed_with_queued_jobs_one_incomplete_record).
	 */
	DT_EXPECT_GE(last.busy_ns, t.busy_ns - t.busy_ns / 100);
	DT_EXPECT_LE(last.busy_ns, t.busy_ns + t.busy_ns / 100 +
				   (uint64_t)(REFUSED_JOBS * 2000000.0 * dt_timeout_scale()));
	/* one refused delete per job: the twins found the entry claimed */
	DT_EXPECT_EQ(refused_deletes(b) - refused0, (uint64_t)REFUSED_JOBS);
	DT_EXPECT_EQ(st.nested_sched_done, st0.nested_sched_done);
	/*
	 * The entries the refused deletes left go at the next sweep, which
	 * the next fork or exit arms (jobs_left): forks until they are gone,
	 * 30 s at most. A sweep that never deleted them (or a flag never
	 * set) leaves the count at 0; one that deleted an entry twice, or a
	 * live job's, counts more than were left.
	 */
	t0 = sg_now_ns();
	while (st.left_removed - st0.left_removed < REFUSED_JOBS &&
	       sg_now_ns() - t0 < 30000 * NSEC_PER_MSEC) {
		sweep_tick(b, &c);
		DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	}
	dt_info("left entries deleted by the sweep: %" PRIu64 " after %.1f s",
		st.left_removed - st0.left_removed, (double)(sg_now_ns() - t0) / 1e9);
	DT_EXPECT_EQ(st.left_removed - st0.left_removed, (uint64_t)REFUSED_JOBS);
	close(from_child[0]);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

DT_MAIN
