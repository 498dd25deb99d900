// SPDX-License-Identifier: GPL-2.0
/*
 * Processes and containers in the BPF accounting (bpf/drmacct/):
 *   1. many short-lived processes, each submitting jobs: every one gets a
 *      PROC_EXIT record whose rings sum to its total and whose total and
 *      job count match the ground truth (WAIT), and the per-process maps
 *      (procs, sched_usage, clients, tracked) end where they started:
 *      bounded however many processes come and go;
 *   2. two cgroups (cgroup2, mounted here) running different loads: the
 *      busy time per cgroup id of the PROC_EXIT records matches each
 *      cgroup's ground truth within 1% (drmacct's sums against the engine
 *      time, the scheduler's against the union of its jobs' [run, end]);
 *      a process that moves from one cgroup to another: cgroup_sched has
 *      each job under the cgroup it was queued from;
 *   3. `drmacct list --source=bpf` shows each client's cgroup and
 *      --cgroup=PATH keeps the clients of PATH and below.
 *
 * DRMACCT_PROCS (VM_ENV_VARS) sets the number of processes of test 1
 * (default 120).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../../bpf/drmacct_bpf.h"
#include "bpf.h"
#include "bpf_priv.h"
#include "dtest.h"
#include "sgtest.h"

/* What a child did, as the driver says (WAIT). */
#define MAX_JOBS 8

struct proc_truth {
	int32_t pid;
	uint32_t jobs;
	uint64_t busy_ns;		/* engine time: sum of end - start */
	uint64_t run[MAX_JOBS];		/* drm_sched's run_job() of each job */
	uint64_t end[MAX_JOBS];
	struct drm_simgpu_wait w[MAX_JOBS];	/* each job's WAIT result */
};

/*
 * In a child: open @node (not sg_open(): its probe opens every node), run
 * @njobs jobs of @ns each on engine @engine back to back, write the truth
 * to @wfd and exit.
 */
static void child_work(const char *node, unsigned int engine, unsigned int njobs, uint64_t ns,
		       int wfd)
{
	struct proc_truth t = { .pid = getpid() };
	int fd = open(node, O_RDWR | O_CLOEXEC);
	uint64_t ids[MAX_JOBS];

	if (fd < 0 || njobs > MAX_JOBS)
		_exit(2);
	for (unsigned int j = 0; j < njobs; j++)
		ids[j] = sg_submit_busy(fd, engine, SIMGPU_INSTANCE_ANY, ns);
	for (unsigned int j = 0; j < njobs; j++) {
		struct drm_simgpu_wait w;

		sg_wait(fd, ids[j], &w);
		t.busy_ns += w.end_ns - w.start_ns;
		t.w[t.jobs] = w;
		t.run[t.jobs] = w.run_ns;
		t.end[t.jobs++] = w.end_ns;
	}
	close(fd);
	_exit(write(wfd, &t, sizeof(t)) == sizeof(t) ? 0 : 1);
}

/*
 * The device's simple engine (into @dev, freed by the caller) and the path
 * of its render node, learned before the BPF programs see any client here.
 */
static const struct sg_engine *simple_engine(struct sg_dev *dev, char *node, size_t len)
{
	const struct sg_engine *e;
	int fd = sg_open();

	sg_query(fd, dev);
	close(fd);
	e = sg_engine_simple(dev);
	DT_ASSERT_TRUE(e != NULL);
	DT_ASSERT_EQ(sg_find_node(node, len), 0);
	return e;
}

/* A record as received, to say what went wrong with a child's records. */
struct rec_seen {
	uint64_t seq, exit_ns, jobs, busy_ns, acct_jobs;
	uint32_t flags;
	unsigned long started;	/* children started when it was received */
};

/* A child as its parent forked it: which process a record is for. */
struct proc_fork {
	pid_t pid;		/* 0: not forked yet */
	uint64_t lo, hi;	/* CLOCK_MONOTONIC before and after fork() */
};

struct proc_catch {
	struct proc_truth *truth;
	struct proc_fork *fork;
	size_t n;
	size_t seen;		/* records of our children */
	size_t unmatched;	/* records with a child's tgid but no child's start */
	size_t reused;		/* records flagged REUSED (written at tgid reuse) */
	size_t bad_sum;		/* records whose rings do not add up */
	uint64_t lost;
	uint64_t *bpf_busy;	/* per child, from its record */
	uint64_t *bpf_jobs;
	uint64_t *acct_busy;	/* ... its drmacct sums */
	uint64_t *acct_jobs;
	unsigned int *records;	/* per child: must be exactly 1 */
	struct rec_seen *rec;	/* per child: its first two records, for the log */
	unsigned long started;	/* children started when a record comes */
};

static int catch_proc(void *ctx, const struct dac_bpf_event *ev)
{
	struct proc_catch *c = ctx;
	uint64_t busy = 0, jobs = 0;
	bool ours = false;

	if (ev->type == DAC_BPF_LOST)
		c->lost += ev->lost.count;
	if (ev->type != DAC_BPF_PROC_EXIT)
		return 0;
	/*
	 * The child with the record's tgid that started when the record
	 * says: past pid_max (32768 here) tgids come back, and the process
	 * start (task start_time, CLOCK_MONOTONIC in copy_process()) lies
	 * between its parent's clock reads around fork().
	 */
	for (size_t i = c->n; i-- > 0;) {
		if (!c->fork[i].pid || (uint32_t)c->fork[i].pid != ev->proc.tgid)
			continue;
		if (ev->proc.start_ns < c->fork[i].lo || ev->proc.start_ns > c->fork[i].hi) {
			ours = true;	/* a child's tgid, another child's start */
			continue;
		}
		if (ev->proc.flags & DAC_BPF_EXIT_REUSED)
			c->reused++;
		for (uint32_t r = 0; r < ev->proc.num_rings; r++) {
			busy += ev->proc.rings[r].busy_ns;
			jobs += ev->proc.rings[r].jobs;
		}
		if (busy != ev->proc.busy_ns || jobs != ev->proc.jobs ||
		    (ev->proc.flags & DAC_BPF_EXIT_TRUNCATED))
			c->bad_sum++;
		if (c->records[i] < 2) {
			struct rec_seen *r = &c->rec[2 * i + c->records[i]];

			r->seq = ev->proc.seq;
			r->exit_ns = ev->proc.exit_ns;
			r->jobs = ev->proc.jobs;
			r->busy_ns = ev->proc.busy_ns;
			r->acct_jobs = ev->proc.acct_jobs;
			r->flags = ev->proc.flags;
			r->started = c->started;
		}
		c->bpf_busy[i] = ev->proc.busy_ns;
		c->bpf_jobs[i] = ev->proc.jobs;
		c->acct_busy[i] = ev->proc.acct_busy_ns;
		c->acct_jobs[i] = ev->proc.acct_jobs;
		c->records[i]++;
		c->seen++;
		return 0;
	}
	if (ours) {
		c->unmatched++;
		dt_info("record seq %" PRIu64 " for tgid %u started %" PRIu64 " ns, flags %#x: no"
			" child with that tgid started then", ev->proc.seq, ev->proc.tgid,
			ev->proc.start_ns, ev->proc.flags);
	}
	return 0;
}

/* Entries of map @name now (-1 when not readable). */
static int64_t map_entries(struct dac_bpf *b, const char *name)
{
	struct dac_bpf_map_stat *m = NULL;
	int64_t e = -2;
	size_t n = 0;

	DT_ASSERT_EQ(dac_bpf_read_maps(b, &m, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].name, name))
			e = m[i].entries;
	free(m);
	DT_ASSERT_NE(e, -2);
	return e;
}

static unsigned long nprocs(void)
{
	const char *env = getenv("DRMACCT_PROCS");

	return env ? strtoul(env, NULL, 10) : 120;
}

#define BATCH 4		/* processes alive at a time */

DT_TEST_TIMEOUT(short_lived_processes_exit_records_and_bounded_maps, 3600)
{
	struct dac_bpf_load_opts o = { 0 };
	struct dac_bpf *b = sg_bpf_load(&o);
	unsigned long n = nprocs();
	struct proc_catch c = { 0 };
	int64_t procs0, sched0, clients0, tracked0;
	uint64_t truth_total = 0, bpf_total = 0, *run, *end, t_start, sched_lo, sched_hi;
	struct drm_simgpu_wait *ws;
	size_t nj = 0;
	struct dac_bpf_stats st0, st;
	const struct sg_engine *e;
	struct sg_dev dev;
	char node[64];

	DT_ASSERT_GT(n, 0ul);
	t_start = sg_now_ns();
	e = simple_engine(&dev, node, sizeof(node));
	dac_bpf_learn_names(b);
	while (dac_bpf_poll(b, 50, catch_proc, &c) > 0)
		;
	c.truth = calloc(n, sizeof(*c.truth));
	c.fork = calloc(n, sizeof(*c.fork));
	c.bpf_busy = calloc(n, sizeof(uint64_t));
	c.bpf_jobs = calloc(n, sizeof(uint64_t));
	c.records = calloc(n, sizeof(unsigned int));
	c.acct_busy = calloc(n, sizeof(uint64_t));
	c.acct_jobs = calloc(n, sizeof(uint64_t));
	c.rec = calloc(2 * n, sizeof(*c.rec));
	DT_ASSERT_TRUE(c.truth && c.fork && c.bpf_busy && c.bpf_jobs && c.records && c.acct_busy &&
		       c.acct_jobs && c.rec);
	c.n = n;
	run = calloc(n * MAX_JOBS, sizeof(uint64_t));
	end = calloc(n * MAX_JOBS, sizeof(uint64_t));
	ws = calloc(n * MAX_JOBS, sizeof(*ws));
	DT_ASSERT_TRUE(run && end && ws);
	procs0 = map_entries(b, "procs");
	sched0 = map_entries(b, "sched_usage");
	clients0 = map_entries(b, "clients");
	tracked0 = map_entries(b, "tracked");
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);

	for (unsigned long i = 0; i < n; i += BATCH) {
		int pfd[2];
		pid_t pid[BATCH];
		unsigned long k, nb = n - i < BATCH ? n - i : BATCH;

		DT_ASSERT_EQ(pipe(pfd), 0);
		c.started = i + nb;
		for (k = 0; k < nb; k++) {
			c.fork[i + k].lo = sg_now_ns();
			pid[k] = fork();
			c.fork[i + k].hi = sg_now_ns();
			c.fork[i + k].pid = pid[k];
			DT_ASSERT_GE(pid[k], 0);
			if (pid[k] == 0) {
				close(pfd[0]);
				/* 1..3 jobs of 1..4 ms */
				child_work(node, e->index, 1 + (i + k) % 3,
					   (1 + (i + k) % 4) * NSEC_PER_MSEC, pfd[1]);
			}
		}
		close(pfd[1]);
		for (k = 0; k < nb; k++) {
			struct proc_truth t;
			int status;

			DT_ASSERT_EQ(read(pfd[0], &t, sizeof(t)), (ssize_t)sizeof(t));
			for (unsigned long m = 0; m < nb; m++)
				if (pid[m] == t.pid)
					c.truth[i + m] = t;
			DT_ASSERT_EQ(waitpid(pid[k], &status, 0), pid[k]);
			DT_ASSERT_EQ(status, 0);
		}
		close(pfd[0]);
		/* Keep the ring buffer drained, as a reader would. */
		DT_ASSERT_GE(dac_bpf_poll(b, 0, catch_proc, &c), 0);
		/* a long run (DRMACCT_PROCS) says how far it got */
		if ((i + nb) % 10000 < BATCH && i + nb >= 10000)
			dt_info("%lu processes done, %zu records so far, %.0f s", i + nb, c.seen,
				(sg_now_ns() - t_start) / 1e9);
	}
	for (int t = 0; t < 50 && c.seen < n; t++)
		DT_ASSERT_GE(dac_bpf_poll(b, 100, catch_proc, &c), 0);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	dt_info("%lu processes: %zu PROC_EXIT records, %" PRIu64 " lost, %" PRIu64
		" process records counted", n, c.seen, c.lost, st.proc_records - st0.proc_records);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	DT_EXPECT_EQ(c.seen, (size_t)n);
	DT_EXPECT_EQ(c.bad_sum, (size_t)0);
	/* Every record names its process by start time, and none came late. */
	dt_info("records with a child's tgid but no child's start: %zu; written at tgid reuse: %zu;"
		" charges after reuse: %" PRIu64, c.unmatched, c.reused,
		st.proc_late - st0.proc_late);
	DT_EXPECT_EQ(c.unmatched, (size_t)0);
	DT_EXPECT_EQ(c.reused, (size_t)0);
	DT_EXPECT_EQ(st.proc_late, st0.proc_late);
	/* Whatever went wrong, the log says what the kernel and the programs saw. */
	{
		struct dac_bpf_prog_stats *ps = NULL;
		size_t nps = 0;

		dt_info("stats: sched orphans %" PRIu64 ", job ends unseen %" PRIu64
			", taken by _nested: %" PRIu64 " job begins, %" PRIu64 " job ends, %" PRIu64
			" completions; refused full %" PRIu64 " busy %" PRIu64,
			st.sched_orphans - st0.sched_orphans, st.job_end_unseen - st0.job_end_unseen,
			st.nested_job_begin - st0.nested_job_begin,
			st.nested_job_end - st0.nested_job_end,
			st.nested_sched_done - st0.nested_sched_done, st.full - st0.full,
			st.busy - st0.busy);
		if (!dac_bpf_read_prog_stats(b, &ps, &nps))
			for (size_t i = 0; i < nps; i++)
				if (ps[i].recursion_misses)
					dt_info("%s: %" PRIu64 " recursion misses", ps[i].name,
						ps[i].recursion_misses);
		free(ps);
	}
	for (unsigned long i = 0; i < n; i++) {
		if (c.records[i] == 1 && c.bpf_jobs[i] == c.truth[i].jobs &&
		    c.acct_jobs[i] == c.truth[i].jobs)
			continue;
		dt_info("child %lu (pid %d): %u jobs, engine %" PRIu64 " ns, last end %" PRIu64
			"; %u records", i, (int)c.truth[i].pid, c.truth[i].jobs, c.truth[i].busy_ns,
			c.truth[i].jobs ? c.truth[i].end[c.truth[i].jobs - 1] : 0, c.records[i]);
		for (unsigned int r = 0; r < c.records[i] && r < 2; r++) {
			const struct rec_seen *x = &c.rec[2 * i + r];

			dt_info("  record seq %" PRIu64 " exit_ns %" PRIu64 " flags %#x: %" PRIu64
				" jobs %" PRIu64 " ns, acct %" PRIu64 " jobs; received after %lu"
				" children started", x->seq, x->exit_ns, x->flags, x->jobs,
				x->busy_ns, x->acct_jobs, x->started);
		}
	}
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t = c.truth[i].busy_ns;

		DT_EXPECT_EQ(c.records[i], 1u);
		/* drmacct's events: exact. */
		DT_EXPECT_EQ(c.acct_busy[i], t);
		DT_EXPECT_EQ(c.acct_jobs[i], (uint64_t)c.truth[i].jobs);
		/* gpu_scheduler: every job (the record waits for the last one). */
		DT_EXPECT_EQ(c.bpf_jobs[i], (uint64_t)c.truth[i].jobs);
		for (uint32_t j = 0; j < c.truth[i].jobs; j++) {
			ws[nj] = c.truth[i].w[j];
			run[nj] = c.truth[i].run[j];
			end[nj++] = c.truth[i].end[j];
		}
		bpf_total += c.bpf_busy[i];
	}
	/*
	 * The processes share one ring: what it charges is the union of all
	 * their jobs' [run_job, completion] (split among them by completion
	 * order, see Documentation/bpf.rst), within sg_sched_bounds() of the
	 * jobs' measured stamps: no allowance.
	 */
	truth_total = sg_union_ns(run, end, nj);
	sg_sched_bounds(ws, nj, &sched_lo, &sched_hi);
	dt_info("gpu_scheduler: bpf %" PRIu64 " ns over %zu jobs, ring's ground truth %" PRIu64
		" ns (%+.3f%%), bounds %" PRIu64 "..%" PRIu64 " ns", bpf_total, nj, truth_total,
		100.0 * ((double)bpf_total - (double)truth_total) / (double)truth_total,
		sched_lo, sched_hi);
	DT_EXPECT_GE(bpf_total, sched_lo);
	DT_EXPECT_LE(bpf_total, sched_hi);
	/* Bounded: every process left the per-process maps. */
	dt_info("entries before/after: procs %" PRId64 "/%" PRId64 ", sched_usage %" PRId64 "/%"
		PRId64 ", clients %" PRId64 "/%" PRId64 ", tracked %" PRId64 "/%" PRId64, procs0,
		map_entries(b, "procs"), sched0, map_entries(b, "sched_usage"), clients0,
		map_entries(b, "clients"), tracked0, map_entries(b, "tracked"));
	DT_EXPECT_EQ(map_entries(b, "procs"), procs0);
	DT_EXPECT_EQ(map_entries(b, "sched_usage"), sched0);
	DT_EXPECT_EQ(map_entries(b, "clients"), clients0);
	DT_EXPECT_EQ(map_entries(b, "tracked"), tracked0);
	DT_EXPECT_EQ(st.full, st0.full);
	DT_EXPECT_EQ(st.busy, st0.busy);
	free(c.truth);
	free(c.fork);
	free(c.bpf_busy);
	free(c.bpf_jobs);
	free(c.records);
	free(c.acct_busy);
	free(c.acct_jobs);
	free(c.rec);
	free(run);
	free(end);
	free(ws);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

/* ---- 1b. a tgid that comes back ------------------------------------------ */

/*
 * Fork a child with tgid @pid (clone3() with set_tid: root in the VM) that
 * runs one job of @ns on @engine through @node; its CLOCK_MONOTONIC fork
 * window into @f, what it ran into @t. Returns its pid, or -errno.
 */
static pid_t fork_with_pid(pid_t pid, const char *node, unsigned int engine, uint64_t ns,
			   struct proc_fork *f, struct proc_truth *t)
{
	struct clone_args ca = { .exit_signal = SIGCHLD, .set_tid_size = 1 };
	int pfd[2];
	pid_t r;

	ca.set_tid = (uint64_t)(uintptr_t)&pid;
	DT_ASSERT_EQ(pipe(pfd), 0);
	f->lo = sg_now_ns();
	r = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	f->hi = sg_now_ns();
	if (r == 0) {
		close(pfd[0]);
		child_work(node, engine, 1, ns, pfd[1]);
	}
	f->pid = r < 0 ? -errno : r;
	close(pfd[1]);
	if (r > 0)
		DT_ASSERT_EQ(read(pfd[0], t, sizeof(*t)), (ssize_t)sizeof(*t));
	close(pfd[0]);
	return f->pid;
}

/* What plant_and_fork() puts under the child's tgid before it forks. */
struct plant {
	int procs_fd;				/* -1: nothing in procs */
	const struct dac_proc_val *proc;
	int sched_fd;				/* -1: nothing in sched_usage */
	struct dac_sched_key skey;		/* its tgid is the child's */
	const struct dac_sched_val *sched;
};

static void plant_put(struct plant *pl, pid_t p, bool undo)
{
	uint32_t key = (uint32_t)p;

	pl->skey.tgid = key;
	if (pl->procs_fd >= 0)
		DT_ASSERT_EQ(undo ? bpf_map_delete_elem(pl->procs_fd, &key) :
			     bpf_map_update_elem(pl->procs_fd, &key, pl->proc, BPF_NOEXIST), 0);
	if (pl->sched_fd >= 0)
		DT_ASSERT_EQ(undo ? bpf_map_delete_elem(pl->sched_fd, &pl->skey) :
			     bpf_map_update_elem(pl->sched_fd, &pl->skey, pl->sched, BPF_NOEXIST), 0);
}

/*
 * Plant @pl under a free tgid above the ones in use and fork the child of
 * fork_with_pid() with that tgid. A pid that is still taken (a process
 * group, a new thread meanwhile: clone3 says EEXIST) moves on to the next.
 * Returns the pid; -EPERM when set_tid is refused.
 */
static pid_t plant_and_fork(struct plant *pl, const char *node, unsigned int engine, uint64_t ns,
			    struct proc_fork *f, struct proc_truth *t)
{
	for (pid_t p = 20000 + getpid() % 1000; p < 32000; p++) {
		pid_t r;

		if (!kill(p, 0) || errno != ESRCH)
			continue;
		plant_put(pl, p, false);
		r = fork_with_pid(p, node, engine, ns, f, t);
		if (r != -EEXIST)
			return r;
		plant_put(pl, p, true);
	}
	DT_FAIL("no free pid");
}

struct reuse_catch {
	pid_t tgid;
	unsigned int records, reused;
	struct dac_bpf_proc_exit own, stale;	/* rings not kept: */
	struct dac_bpf_proc_ring own_ring;	/* own's first */
	struct proc_fork f;
};

static int catch_reuse(void *ctx, const struct dac_bpf_event *ev)
{
	struct reuse_catch *c = ctx;

	if (ev->type != DAC_BPF_PROC_EXIT || ev->proc.tgid != (uint32_t)c->tgid)
		return 0;
	c->records++;
	if (ev->proc.flags & DAC_BPF_EXIT_REUSED) {
		c->reused++;
		c->stale = ev->proc;
		c->stale.rings = NULL;
	} else {
		c->own = ev->proc;
		if (ev->proc.num_rings)
			c->own_ring = ev->proc.rings[0];
		c->own.rings = NULL;
	}
	return 0;
}

/*
 * A procs entry whose process's exit was never seen (the programs attached
 * after it, or an event lost) must not add to a later process with its
 * tgid: the later process's first job writes it out as its own record,
 * flagged REUSED and named by its start time; and a charge for a process
 * older than the entry's is dropped and counted (proc_late), never added.
 * Nor may a sched_usage entry of an earlier process (one of its charges
 * that came after its record) add to the later one's ring. The stale
 * entries are planted in procs and sched_usage; the later process is
 * forked with the very tgid (clone3 set_tid).
 */
DT_TEST_TIMEOUT(stale_entry_written_when_its_tgid_comes_back, 120)
{
	struct dac_bpf_load_opts o = { 0 };
	struct dac_bpf *b = sg_bpf_load(&o);
	struct dac_proc_val stale = { .busy_ns = 12345, .jobs = 1, .acct_busy_ns = 777,
				      .acct_jobs = 1, .start_ns = 1, .comm = "stale" };
	struct dac_sched_val sv = { .busy_ns = 999, .jobs = 5, .comm = "stale" }, got;
	struct plant pl = { .procs_fd = -1, .sched_fd = -1 };
	const uint64_t job_ns = 2 * NSEC_PER_MSEC;
	struct dac_bpf_stats st0, st;
	struct reuse_catch c = { 0 };
	struct proc_truth t;
	const struct sg_engine *e;
	int64_t procs0;
	struct sg_dev dev;
	char node[64];
	uint32_t key;
	int fd, status;

	e = simple_engine(&dev, node, sizeof(node));
	dac_bpf_learn_names(b);
	/*
	 * The maps of this handle, not the first ones of that name the
	 * kernel lists: a collection an earlier test closed may not be freed
	 * yet (on PREEMPT_RT it often is not), and what is planted in its
	 * maps no program sees.
	 */
	fd = dup(b->fd[M_PROCS]);
	DT_ASSERT_GE(fd, 0);
	procs0 = map_entries(b, "procs");
	pl.procs_fd = fd;
	pl.proc = &stale;

	/* 1. an earlier process's entry: written out, the new one exact */
	c.tgid = plant_and_fork(&pl, node, e->index, job_ns, &c.f, &t);
	if (c.tgid == -EPERM)
		DT_SKIP("clone3 set_tid refused here");
	DT_ASSERT_GT(c.tgid, 0);
	DT_ASSERT_EQ(waitpid(c.tgid, &status, 0), c.tgid);
	DT_ASSERT_EQ(status, 0);
	for (int t = 0; t < 50 && c.records < 2; t++)
		DT_ASSERT_GE(dac_bpf_poll(b, 100, catch_reuse, &c), 0);
	if (c.records != 2) {
		struct dac_proc_val left;

		/* what is left under the tgid tells which event went wrong */
		key = (uint32_t)c.tgid;
		if (!bpf_map_lookup_elem(fd, &key, &left))
			dt_info("procs[%d] left: start %" PRIu64 ", busy %" PRIu64 "/%" PRIu64
				" jobs, acct %" PRIu64 "/%" PRIu64 ", queued %" PRIu64 ", inflight %"
				PRIu64 ", exited %u, flags %#x, comm %.16s", c.tgid,
				(uint64_t)left.start_ns, (uint64_t)left.busy_ns, (uint64_t)left.jobs,
				(uint64_t)left.acct_busy_ns, (uint64_t)left.acct_jobs,
				(uint64_t)left.queued, (uint64_t)left.inflight, left.exited,
				left.flags, left.comm);
		DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
		dt_info("stats: proc records %" PRIu64 ", drops %" PRIu64 ", late %" PRIu64
			", sweep wrote %" PRIu64 ", nested exits %" PRIu64 ", forks %" PRIu64,
			st.proc_records, st.exit_drops, st.proc_late, st.sweep_written,
			st.nested_exit, st.nested_fork);
	}
	dt_info("tgid %d: %u records, %u flagged REUSED; own: start %" PRIu64 " (fork %" PRIu64
		"..%" PRIu64 "), %" PRIu64 " jobs, acct %" PRIu64 " jobs", c.tgid, c.records, c.reused,
		c.own.start_ns, c.f.lo, c.f.hi, c.own.jobs, c.own.acct_jobs);
	DT_EXPECT_EQ(c.records, 2u);
	DT_EXPECT_EQ(c.reused, 1u);
	/* the stale record is the planted entry, unchanged */
	DT_EXPECT_EQ(c.stale.start_ns, (uint64_t)1);
	DT_EXPECT_EQ(c.stale.busy_ns, (uint64_t)12345);
	DT_EXPECT_EQ(c.stale.jobs, (uint64_t)1);
	DT_EXPECT_EQ(c.stale.acct_busy_ns, (uint64_t)777);
	DT_EXPECT_STREQ(c.stale.comm, "stale");
	/* the new process's own: its start, its one job only */
	DT_EXPECT_GE(c.own.start_ns, c.f.lo);
	DT_EXPECT_LE(c.own.start_ns, c.f.hi);
	DT_EXPECT_EQ(c.own.jobs, (uint64_t)1);
	DT_EXPECT_EQ(c.own.acct_jobs, (uint64_t)1);
	DT_EXPECT_EQ(c.own.acct_busy_ns, t.busy_ns);
	DT_EXPECT_EQ(map_entries(b, "procs"), procs0);
	DT_ASSERT_EQ(c.own.num_rings, 1u);
	pl.skey.ring_id = c.own_ring.ring_id;	/* the engine's ring, for 3. */

	/* 2. an entry of a later process: this one's charges are dropped */
	memset(&c, 0, sizeof(c));
	stale.start_ns = UINT64_MAX - 1;	/* started after anything here */
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	c.tgid = plant_and_fork(&pl, node, e->index, job_ns, &c.f, &t);
	DT_ASSERT_GT(c.tgid, 0);
	key = (uint32_t)c.tgid;
	DT_ASSERT_EQ(waitpid(c.tgid, &status, 0), c.tgid);
	DT_ASSERT_EQ(status, 0);
	/* its completion comes after WAIT: until the third charge, or 5 s */
	for (int i = 0; i < 50 * dt_timeout_scale(); i++) {
		DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
		if (st.proc_late - st0.proc_late >= 3)
			break;
		sg_sleep_ns(100 * NSEC_PER_MSEC);
	}
	DT_ASSERT_GE(dac_bpf_poll(b, 200, catch_reuse, &c), 0);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	dt_info("tgid %d under a later process's entry: %u records, proc_late +%" PRIu64, c.tgid,
		c.records, st.proc_late - st0.proc_late);
	/* its queue, its completion, its drmacct job end: each dropped */
	DT_EXPECT_EQ(st.proc_late - st0.proc_late, (uint64_t)3);
	DT_EXPECT_EQ(c.records, 0u);
	{
		struct dac_proc_val v;

		DT_ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &v), 0);
		DT_EXPECT_EQ(v.busy_ns, (uint64_t)12345);	/* nothing added */
		DT_EXPECT_EQ(v.acct_jobs, (uint64_t)1);
		DT_EXPECT_EQ(v.inflight, (uint64_t)0);
		DT_EXPECT_EQ(bpf_map_delete_elem(fd, &key), 0);
	}

	/*
	 * 3. a sched_usage entry of an earlier process with this tgid and no
	 * procs entry (its charge came after its record was written): it
	 * stays that process's, the new one's ring entry is its own.
	 */
	memset(&c, 0, sizeof(c));
	pl.procs_fd = -1;
	pl.sched_fd = dup(b->fd[M_SCHED]);
	DT_ASSERT_GE(pl.sched_fd, 0);
	pl.skey.start_ns = 1;
	pl.sched = &sv;
	c.tgid = plant_and_fork(&pl, node, e->index, job_ns, &c.f, &t);
	DT_ASSERT_GT(c.tgid, 0);
	DT_ASSERT_EQ(waitpid(c.tgid, &status, 0), c.tgid);
	DT_ASSERT_EQ(status, 0);
	for (int t = 0; t < 50 && c.records < 1; t++)
		DT_ASSERT_GE(dac_bpf_poll(b, 100, catch_reuse, &c), 0);
	dt_info("tgid %d beside an earlier process's ring entry: %u records, ring %u: %" PRIu64
		" jobs, %" PRIu64 " ns of %" PRIu64, c.tgid, c.records, c.own_ring.ring_id,
		c.own_ring.jobs, c.own_ring.busy_ns, c.own.busy_ns);
	DT_EXPECT_EQ(c.records, 1u);
	DT_EXPECT_EQ(c.reused, 0u);
	DT_EXPECT_EQ(c.own.jobs, (uint64_t)1);
	DT_EXPECT_EQ(c.own_ring.ring_id, pl.skey.ring_id);
	DT_EXPECT_EQ(c.own_ring.jobs, (uint64_t)1);
	DT_EXPECT_EQ(c.own_ring.busy_ns, c.own.busy_ns);
	/* the earlier process's entry: untouched, still there */
	DT_ASSERT_EQ(bpf_map_lookup_elem(pl.sched_fd, &pl.skey, &got), 0);
	DT_EXPECT_EQ(got.busy_ns, (uint64_t)999);
	DT_EXPECT_EQ(got.jobs, (uint64_t)5);
	DT_EXPECT_EQ(bpf_map_delete_elem(pl.sched_fd, &pl.skey), 0);
	/* and the child's own went with its record */
	pl.skey.start_ns = c.own.start_ns;
	DT_EXPECT_NE(bpf_map_lookup_elem(pl.sched_fd, &pl.skey, &got), 0);
	close(pl.sched_fd);
	close(fd);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

/* ---- 2. per-cgroup busy time ---------------------------------------------- */

#define CG_ROOT "/sys/fs/cgroup"

/* cgroup v2 id of directory @path: its inode number. */
static uint64_t cgroup_id(const char *path)
{
	struct stat st;

	DT_ASSERT_EQ(stat(path, &st), 0);
	return st.st_ino;
}

/*
 * cgroup2 on CG_ROOT (mounted here when it is not: returns true) and the
 * two cgroups @cg.
 */
static bool cgroups_make(const char *const cg[2])
{
	bool mounted = false;

	if (access(CG_ROOT "/cgroup.procs", F_OK)) {
		if (mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL))
			DT_SKIP("cannot mount cgroup2 on " CG_ROOT ": %s", strerror(errno));
		mounted = true;
	}
	for (int g = 0; g < 2; g++)
		if (mkdir(cg[g], 0755) && errno != EEXIST)
			DT_FAIL("mkdir %s: %s", cg[g], strerror(errno));
	return mounted;
}

/* Move this process into cgroup @path. */
static int join_cgroup(const char *path)
{
	char p[300], pid[32];

	snprintf(p, sizeof(p), "%s/cgroup.procs", path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return sg_write_file(p, pid);
}

struct cg_catch {
	uint64_t id[2];
	uint64_t busy[2];	/* gpu_scheduler path */
	uint64_t acct[2];	/* drmacct path */
	unsigned int records[2];
};

static int catch_cgroup(void *ctx, const struct dac_bpf_event *ev)
{
	struct cg_catch *c = ctx;

	if (ev->type != DAC_BPF_PROC_EXIT)
		return 0;
	for (int g = 0; g < 2; g++)
		if (ev->proc.cgroup_id == c->id[g]) {
			c->busy[g] += ev->proc.busy_ns;
			c->acct[g] += ev->proc.acct_busy_ns;
			c->records[g]++;
		}
	return 0;
}

DT_TEST_TIMEOUT(per_cgroup_busy_matches_ground_truth, 300)
{
	struct dac_bpf_load_opts o = { 0 };
	static const char *const cg[2] = { CG_ROOT "/dac_a", CG_ROOT "/dac_b" };
	/* cgroup a: 2 processes x 3 jobs of 60 ms; b: 1 process x 4 jobs of 100 ms */
	static const unsigned int nproc[2] = { 2, 1 }, njobs[2] = { 3, 4 };
	static const uint64_t ms[2] = { 60, 100 };
	struct cg_catch c = { 0 };
	uint64_t truth[2] = { 0 }, truth_sched[2] = { 0 }, lo[2] = { 0 }, hi[2] = { 0 };
	const struct sg_engine *e;
	struct sg_dev dev;
	struct dac_bpf *b;
	bool mounted = false;
	char node[64];

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_need_btf();
	mounted = cgroups_make(cg);
	for (int g = 0; g < 2; g++)
		c.id[g] = cgroup_id(cg[g]);
	e = simple_engine(&dev, node, sizeof(node));
	b = sg_bpf_load(&o);
	for (int g = 0; g < 2; g++) {
		for (unsigned int p = 0; p < nproc[g]; p++) {
			struct proc_truth t;
			int pfd[2], status;
			pid_t pid;

			DT_ASSERT_EQ(pipe(pfd), 0);
			pid = fork();
			DT_ASSERT_GE(pid, 0);
			if (pid == 0) {
				close(pfd[0]);
				if (join_cgroup(cg[g]))
					_exit(3);
				child_work(node, e->index, njobs[g], ms[g] * NSEC_PER_MSEC, pfd[1]);
			}
			close(pfd[1]);
			DT_ASSERT_EQ(read(pfd[0], &t, sizeof(t)), (ssize_t)sizeof(t));
			close(pfd[0]);
			DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
			DT_ASSERT_EQ(status, 0);
			truth[g] += t.busy_ns;
			/* One process at a time: the ring is its own. */
			truth_sched[g] += sg_union_ns(t.run, t.end, t.jobs);
			{
				uint64_t l, h;

				sg_sched_bounds(t.w, t.jobs, &l, &h);
				lo[g] += l;
				hi[g] += h;
			}
		}
	}
	for (int t = 0; t < 30 && c.records[0] + c.records[1] < nproc[0] + nproc[1]; t++)
		DT_ASSERT_GE(dac_bpf_poll(b, 100, catch_cgroup, &c), 0);
	for (int g = 0; g < 2; g++) {
		dt_info("cgroup %s (id %" PRIu64 "): %u process records; drmacct %" PRIu64
			" ns, ground truth %" PRIu64 " ns; gpu_scheduler %" PRIu64 " ns, ground "
			"truth %" PRIu64 " ns (%+.3f%%)", cg[g], c.id[g], c.records[g], c.acct[g],
			truth[g], c.busy[g], truth_sched[g],
			100.0 * ((double)c.busy[g] - (double)truth_sched[g]) / (double)truth_sched[g]);
		DT_EXPECT_EQ(c.records[g], nproc[g]);
		/* drmacct's events add up the stamps WAIT returned: exact */
		DT_EXPECT_EQ(c.acct[g], truth[g]);
		/* The rings: within the jobs' measured bounds, no allowance. */
		dt_info("cgroup %s: gpu_scheduler bounds %" PRIu64 "..%" PRIu64 " ns", cg[g],
			lo[g], hi[g]);
		DT_EXPECT_GE(c.busy[g], lo[g]);
		DT_EXPECT_LE(c.busy[g], hi[g]);
		rmdir(cg[g]);
	}
	if (mounted)
		umount(CG_ROOT);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

/*
 * Each job is charged to the cgroup it was queued from: a process runs
 * MOVE_JOBS_A jobs in cgroup a, moves itself to b and runs MOVE_JOBS_B
 * more. cgroup_sched has a's jobs under a and b's under b (with the
 * process's first cgroup for all, a would have all five), each within its
 * own jobs' measured bounds: a's last job ends before b's first is queued,
 * so no charge spans the move.
 */
#define MOVE_JOBS_A	3
#define MOVE_JOBS_B	2

struct move_truth {
	uint32_t jobs[2];
	struct drm_simgpu_wait w[2][MAX_JOBS];
};

static void child_move(const char *node, unsigned int engine, const char *const cg[2], int wfd)
{
	static const unsigned int n[2] = { MOVE_JOBS_A, MOVE_JOBS_B };
	static const uint64_t ms[2] = { 50, 80 };
	struct move_truth t = { 0 };
	uint64_t ids[MAX_JOBS];
	int fd;

	if (join_cgroup(cg[0]))
		_exit(3);
	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		_exit(2);
	for (int g = 0; g < 2; g++) {
		if (g && join_cgroup(cg[1]))
			_exit(3);
		for (unsigned int j = 0; j < n[g]; j++)
			ids[j] = sg_submit_busy(fd, engine, SIMGPU_INSTANCE_ANY,
						ms[g] * NSEC_PER_MSEC);
		for (unsigned int j = 0; j < n[g]; j++)
			sg_wait(fd, ids[j], &t.w[g][t.jobs[g]++]);
	}
	close(fd);
	_exit(write(wfd, &t, sizeof(t)) == sizeof(t) ? 0 : 1);
}

DT_TEST_TIMEOUT(jobs_charged_to_the_cgroup_they_were_queued_from, 120)
{
	struct dac_bpf_load_opts o = { 0 };
	static const char *const cg[2] = { CG_ROOT "/dac_mv_a", CG_ROOT "/dac_mv_b" };
	struct dac_bpf_cgroup *rows = NULL;
	const struct sg_engine *e;
	struct move_truth t;
	struct sg_dev dev;
	struct dac_bpf *b;
	uint64_t id[2];
	bool mounted;
	char node[64];
	int pfd[2], status;
	size_t n = 0;
	pid_t pid;

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_need_btf();
	mounted = cgroups_make(cg);
	for (int g = 0; g < 2; g++)
		id[g] = cgroup_id(cg[g]);
	e = simple_engine(&dev, node, sizeof(node));
	b = sg_bpf_load(&o);
	DT_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		child_move(node, e->index, cg, pfd[1]);
	}
	close(pfd[1]);
	DT_ASSERT_EQ(read(pfd[0], &t, sizeof(t)), (ssize_t)sizeof(t));
	close(pfd[0]);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_ASSERT_EQ(status, 0);
	/* Every job was waited for: each completion was charged before WAIT returned. */
	DT_ASSERT_EQ(dac_bpf_read_cgroups(b, &rows, &n), 0);
	for (int g = 0; g < 2; g++) {
		const struct dac_bpf_cgroup *r = NULL;
		uint64_t lo, hi;

		for (size_t i = 0; i < n; i++)
			if (rows[i].cgroup_id == id[g])
				r = &rows[i];
		sg_sched_bounds(t.w[g], t.jobs[g], &lo, &hi);
		dt_info("cgroup %s (id %" PRIu64 "): %" PRIu64 " jobs, %" PRIu64 " ns; its %u "
			"jobs' bounds %" PRIu64 "..%" PRIu64 " ns", cg[g], id[g],
			r ? r->jobs : 0, r ? r->busy_ns : 0, t.jobs[g], lo, hi);
		DT_ASSERT_TRUE(r != NULL);
		DT_EXPECT_EQ(r->jobs, (uint64_t)t.jobs[g]);
		/* From drm_run_job to the completion: within the measured bounds, no allowance. */
		DT_EXPECT_GE(r->busy_ns, lo);
		DT_EXPECT_LE(r->busy_ns, hi);
	}
	free(rows);
	for (int g = 0; g < 2; g++)
		rmdir(cg[g]);
	if (mounted)
		umount(CG_ROOT);
	sg_dev_free(&dev);
	dac_bpf_close(b);
}

/* ---- 3. list --source=bpf --cgroup ---------------------------------------- */

#define DRMACCT "/usr/bin/drmacct"

/*
 * A child in cgroup @cg holding a client open until the pipe @hold is
 * closed; its client id comes back on the pipe @ids.
 */
static pid_t holder(const char *cg, const char *node, const int hold[2], const int ids[2])
{
	pid_t pid = fork();

	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int idfd = ids[1];
		uint64_t id;
		char c;
		int fd;

		/* Only the parent's write end may keep the hold pipe open. */
		close(hold[1]);
		close(ids[0]);

		if (join_cgroup(cg))
			_exit(3);
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(4);
		id = sg_client_id(fd);
		if (write(idfd, &id, sizeof(id)) != sizeof(id))
			_exit(5);
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	return pid;
}

DT_TEST_TIMEOUT(list_from_bpf_shows_and_filters_cgroups, 120)
{
	static const char *const cg[2] = { CG_ROOT "/dac_a", CG_ROOT "/dac_b" };
	uint64_t id[2];
	pid_t pid[2];
	int hold[2], ids[2];
	bool mounted = false;
	char node[64], key[64], *out;

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_need_btf();
	mounted = cgroups_make(cg);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	sg_sh(DRMACCT " bpf stop >/dev/null 2>&1");
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf start >/dev/null 2>&1"), 0);
	DT_ASSERT_EQ(pipe(hold), 0);
	DT_ASSERT_EQ(pipe(ids), 0);
	for (int g = 0; g < 2; g++) {
		pid[g] = holder(cg[g], node, hold, ids);
		DT_ASSERT_EQ(read(ids[0], &id[g], sizeof(id[g])), (ssize_t)sizeof(id[g]));
	}
	close(hold[0]);

	/* Every client, each with its cgroup. */
	DT_EXPECT_EQ(sg_sh(DRMACCT " list --source=bpf -i 0 --json >/tmp/cg.json 2>/dev/null"), 0);
	out = sg_read_file("/tmp/cg.json", NULL);
	DT_ASSERT_TRUE(out != NULL);
	DT_EXPECT_TRUE(strstr(out, "\"cgroup\": \"/dac_a\"") || strstr(out, "\"cgroup\":\"/dac_a\""));
	DT_EXPECT_TRUE(strstr(out, "\"cgroup\": \"/dac_b\"") || strstr(out, "\"cgroup\":\"/dac_b\""));
	free(out);
	/* Only dac_a's; the table names it. */
	DT_EXPECT_EQ(sg_sh(DRMACCT " list --source=bpf -i 0 --cgroup=/dac_a >/tmp/cg.txt 2>/dev/null"), 0);
	out = sg_read_file("/tmp/cg.txt", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("list --cgroup=/dac_a:\n%s", out);
	snprintf(key, sizeof(key), " %llu ", (unsigned long long)id[0]);
	DT_EXPECT_TRUE(strstr(out, key) != NULL);
	snprintf(key, sizeof(key), " %llu ", (unsigned long long)id[1]);
	DT_EXPECT_TRUE(strstr(out, key) == NULL);
	DT_EXPECT_TRUE(strstr(out, "cgroup /dac_a") != NULL);
	DT_EXPECT_TRUE(strstr(out, "1 client in 1 process") != NULL);
	free(out);
	/* "/dac" is not a prefix of "/dac_a": nothing. */
	DT_EXPECT_EQ(sg_sh(DRMACCT " list --source=bpf -i 0 --cgroup=/dac >/tmp/cg.txt 2>/dev/null"), 0);
	out = sg_read_file("/tmp/cg.txt", NULL);
	DT_ASSERT_TRUE(out != NULL);
	DT_EXPECT_TRUE(strstr(out, "0 clients in 0 processes") != NULL);
	free(out);
	/* /proc cannot filter by cgroup, and says so. */
	DT_EXPECT_EQ(sg_sh(DRMACCT " list --source=proc --cgroup=/dac_a >/dev/null 2>/tmp/cg.err"), 1);
	out = sg_read_file("/tmp/cg.err", NULL);
	DT_ASSERT_TRUE(out != NULL);
	DT_EXPECT_TRUE(strstr(out, "--cgroup needs the BPF client table") != NULL);
	free(out);

	close(hold[1]);
	for (int g = 0; g < 2; g++) {
		int status;

		DT_EXPECT_EQ(waitpid(pid[g], &status, 0), pid[g]);
		DT_EXPECT_EQ(status, 0);
		rmdir(cg[g]);
	}
	close(ids[0]);
	close(ids[1]);
	sg_sh(DRMACCT " bpf stop >/dev/null 2>&1");
	if (mounted)
		umount(CG_ROOT);
}

DT_MAIN
