// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler time per DRM client (sched_clients), from the client id the
 * 6.17+ gpu_scheduler events carry, against the two other accounts of the
 * same jobs: fdinfo's drm-client-id rows of simgpu, and simgpu's own
 * stamps of every job (WAIT: run_ns when drm_sched handed it to the
 * driver, start_ns and end_ns on the engine).
 *
 * Three clients: A and B, two files of this process, and C, a file of a
 * child process. Phase 1 runs their jobs one at a time (submit, wait), so
 * no two jobs share a ring at once and each (client, ring) row has a
 * ground truth of its own: the union of its jobs' [run_ns, end_ns]. Phase
 * 2 queues A's and C's jobs on one ring at the same moment: the ring's
 * time is split between them by completion order, so only their sum has a
 * truth (the union of all those jobs), and each one's job count.
 *
 * Checked, exactly:
 *   - the client ids of the rows are the drm-client-id values fdinfo
 *     prints for these three files, no more, no fewer;
 *   - per (client, ring) the job count, the ring's name (engine and
 *     instance, as WAIT reports the instance) and the process that queued;
 *   - per ring, the busy time summed over client rows equals the busy time
 *     summed over the same jobs' process rows (sched_usage): one charge,
 *     two keys;
 *   - fdinfo's drm-engine-<e> of each file equals the sum of its jobs'
 *     end_ns - start_ns.
 * Checked with a bound:
 *   - per (client, ring) busy time against the union of [run_ns, end_ns]
 *     (phase 1), and the phase 2 sum against the union of its jobs;
 *   - per (client, engine), fdinfo's engine time is at most the rows'.
 * The bounds (see within()): the events bracket simgpu's stamps --
 * drm_sched_job_run fires before run_job() takes run_ns, drm_sched_job_done
 * after end_ns -- so the rows are never below the truth but for the two
 * clocks' rounding (bpf_ktime_get_ns() is ktime_get_mono_fast_ns(), simgpu
 * stamps with ktime_get_ns(): the same clock, a few ns apart at a
 * timekeeping update; 1 us per job admitted), and at most the union of
 * the jobs' measured [queued_ns, sg_sched_end_ns()] (sg_sched_bounds(): the
 * event cannot come before SUBMIT nor after the finished fence signalled),
 * no allowance.
 *
 * Run with tp_btf (OP_BUSY jobs) and plain tracepoints (OP_FILL jobs: a
 * plain program loses a completion that an hrtimer interrupt delivers
 * while another plain program runs on that CPU, see bpf.rst). Skipped
 * where the loaded scheduler set is the 6.1 one: those events carry no
 * client id, and sched_clients stays empty.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf.h"
#include "dtest.h"
#include "sgtest.h"

#define MAX_JOBS	16	/* per client */
#define MAX_ROWS	32
#define NCLIENTS	3	/* A, B (this process), C (the child) */
#define FILL_BYTES	(1024 * 1024)
/* What the clocks may put the rows below the truth, per job (see top). */
#define CLOCK_NS	1000ull

struct job_rec {
	uint32_t engine, instance;
	uint64_t run, start, end;
	uint32_t phase;
	struct drm_simgpu_wait w;	/* all of WAIT's stamps */
};

/* One client's jobs and fdinfo, as its process saw them. */
struct client_rec {
	int32_t pid;
	uint64_t id;			/* drm-client-id of its fdinfo */
	uint32_t njobs;
	struct job_rec j[MAX_JOBS];
	uint64_t fdinfo_ns[8];		/* drm-engine-<e> by engine index, end of phase 1 */
};

struct ctx {
	struct sg_dev dev;
	const struct sg_engine *simple, *multi;
	bool fill;
};

/* Run one job on @fd (OP_BUSY of @ms or OP_FILL into @bo), wait, record it. */
static void one_job(const struct ctx *x, int fd, uint32_t bo, const struct sg_engine *e,
		    unsigned int ms, struct client_rec *c, uint32_t phase, uint64_t *id_out)
{
	struct drm_simgpu_submit s = {
		.engine = e->index, .instance = SIMGPU_INSTANCE_ANY, .op = SIMGPU_OP_FILL,
		.dst_handle = bo, .size = FILL_BYTES, .value = ms,
	};
	uint64_t job = x->fill ? sg_submit(fd, &s) :
				 sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY, ms * NSEC_PER_MSEC);

	if (id_out) {
		*id_out = job;	/* queued; the caller waits */
		return;
	}
	{
		struct drm_simgpu_wait w;

		sg_wait(fd, job, &w);
		DT_ASSERT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
		DT_ASSERT_LT(c->njobs, (uint32_t)MAX_JOBS);
		c->j[c->njobs++] = (struct job_rec){ e->index, w.instance, w.run_ns, w.start_ns,
						     w.end_ns, phase, w };
	}
}

/* Queue @n jobs on @e at once, then wait for them all (phase 2). */
static void queued_jobs(const struct ctx *x, int fd, uint32_t bo, const struct sg_engine *e,
			unsigned int n, struct client_rec *c)
{
	uint64_t ids[4];

	DT_ASSERT_LE(n, 4u);
	for (unsigned int i = 0; i < n; i++)
		one_job(x, fd, bo, e, 15 + 5 * i, c, 2, &ids[i]);
	for (unsigned int i = 0; i < n; i++) {
		struct drm_simgpu_wait w;

		sg_wait(fd, ids[i], &w);
		DT_ASSERT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
		DT_ASSERT_LT(c->njobs, (uint32_t)MAX_JOBS);
		c->j[c->njobs++] = (struct job_rec){ e->index, w.instance, w.run_ns, w.start_ns,
						     w.end_ns, 2, w };
	}
}

static void read_fdinfo(const struct ctx *x, int fd, struct client_rec *c)
{
	struct sg_fdinfo fi;

	sg_fdinfo_read(fd, &fi);
	c->id = sg_fdinfo_u64(&fi, "drm-client-id", "");
	for (unsigned int e = 0; e < x->dev.num_engines && e < 8; e++)
		c->fdinfo_ns[x->dev.eng[e].index] = sg_fdinfo_engine_ns(&fi, x->dev.eng[e].q.name);
	sg_fdinfo_free(&fi);
}

static uint32_t new_bo(const struct ctx *x, int fd)
{
	return x->fill ? sg_bo_create(fd, FILL_BYTES) : 0;
}

/*
 * The child, client C: its id to @wfd, then on each byte from @gofd a
 * phase (1: three jobs one at a time; 2: three queued at once), its record
 * after each; exits at EOF.
 */
static void child(const struct ctx *x, int wfd, int gofd)
{
	struct client_rec c = { .pid = getpid() };
	int fd = sg_open();
	uint32_t bo = new_bo(x, fd);
	char go;

	read_fdinfo(x, fd, &c);
	if (write(wfd, &c, sizeof(c)) != sizeof(c))
		_exit(1);
	while (read(gofd, &go, 1) == 1) {
		if (go == 1) {
			one_job(x, fd, bo, x->simple, 20, &c, 1, NULL);
			one_job(x, fd, bo, x->multi, 30, &c, 1, NULL);
			one_job(x, fd, bo, x->simple, 25, &c, 1, NULL);
			read_fdinfo(x, fd, &c);
		} else {
			queued_jobs(x, fd, bo, x->simple, 3, &c);
		}
		if (write(wfd, &c, sizeof(c)) != sizeof(c))
			_exit(1);
	}
	_exit(0);
}

/* A row of the truth: one (client, ring). */
struct truth_row {
	uint64_t id;
	int32_t pid;
	char ring[64];
	uint32_t engine;
	uint64_t run[MAX_JOBS], end[MAX_JOBS], engine_ns;
	struct drm_simgpu_wait w[MAX_JOBS];
	uint32_t jobs;
};

/* Phase @phase's jobs of the clients, per (client, ring). */
static size_t truth_rows(const struct ctx *x, const struct client_rec *c, size_t nc,
			 uint32_t phase, struct truth_row *t)
{
	size_t n = 0;

	memset(t, 0, sizeof(*t) * MAX_ROWS);
	for (size_t i = 0; i < nc; i++)
		for (uint32_t k = 0; k < c[i].njobs; k++) {
			const struct job_rec *j = &c[i].j[k];
			const struct sg_engine *e = NULL;
			char ring[64];
			size_t r;

			if (j->phase != phase)
				continue;
			for (unsigned int q = 0; q < x->dev.num_engines; q++)
				if (x->dev.eng[q].index == j->engine)
					e = &x->dev.eng[q];
			DT_ASSERT_TRUE(e != NULL);
			snprintf(ring, sizeof(ring), "%s%u", e->q.name, j->instance);
			for (r = 0; r < n; r++)
				if (t[r].id == c[i].id && !strcmp(t[r].ring, ring))
					break;
			if (r == n) {
				DT_ASSERT_LT(n, (size_t)MAX_ROWS);
				t[n].id = c[i].id;
				t[n].pid = c[i].pid;
				t[n].engine = j->engine;
				snprintf(t[n].ring, sizeof(t[n].ring), "%s", ring);
				n++;
			}
			t[r].w[t[r].jobs] = j->w;
			t[r].run[t[r].jobs] = j->run;
			t[r].end[t[r].jobs++] = j->end;
			t[r].engine_ns += j->end - j->start;
		}
	return n;
}

/*
 * @got against the union of the [run_ns, end_ns] of the @jobs jobs @w,
 * with the bounds of the top comment.
 */
static void within(const char *what, uint64_t got, const struct drm_simgpu_wait *w,
		   const uint64_t *run, const uint64_t *end, uint32_t jobs)
{
	uint64_t truth = sg_union_ns(run, end, jobs), lo, hi;
	double err = truth ? 100.0 * ((double)got - (double)truth) / (double)truth : 0;

	sg_sched_bounds(w, jobs, &lo, &hi);
	dt_info("%s: bpf %" PRIu64 " ns, truth %" PRIu64 " ns (%+.3f%%), bounds %" PRIu64 "..%"
		PRIu64 " ns, %u jobs", what, got, truth, err, lo, hi, jobs);
	DT_EXPECT_GE(got + jobs * CLOCK_NS, truth);
	DT_EXPECT_LE(got, hi);
}

static bool is_ours(uint64_t id, const struct client_rec *c)
{
	for (int i = 0; i < NCLIENTS; i++)
		if (c[i].id == id)
			return true;
	return false;
}

/* sched_clients now, and the jobs of its rows of clients @c. */
static uint64_t read_rows(struct dac_bpf *b, const struct client_rec *c,
			  struct dac_bpf_sched_client **rows, size_t *n)
{
	uint64_t jobs = 0;

	DT_ASSERT_EQ(dac_bpf_read_sched_clients(b, rows, n), 0);
	for (size_t i = 0; i < *n; i++)
		if (is_ours((*rows)[i].client_id, c))
			jobs += (*rows)[i].jobs;
	return jobs;
}

/*
 * sched_clients once the completions of @want jobs of @c are in: a waiter
 * can return before drm_sched_job_done fires (simgpu wakes it first), so
 * wait for them, up to 10 s (scaled); the checks then need the count exact.
 * Returns the jobs of @c's rows it settled on.
 */
static uint64_t settled_rows(struct dac_bpf *b, const struct client_rec *c, uint64_t want,
			     struct dac_bpf_sched_client **rows, size_t *n)
{
	uint64_t deadline = sg_now_ns() + (uint64_t)(10 * dt_timeout_scale()) * NSEC_PER_SEC;

	for (;;) {
		uint64_t got = read_rows(b, c, rows, n);

		if (got >= want || sg_now_ns() > deadline) {
			DT_EXPECT_EQ(got, want);
			return got;
		}
		free(*rows);
		sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
}

static const struct dac_bpf_sched_client *find_row(const struct dac_bpf_sched_client *rows,
						   size_t n, uint64_t id, const char *ring)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].client_id == id && !strcmp(rows[i].ring, ring))
			return &rows[i];
	return NULL;
}

/*
 * The device's engines into @x, and the programs loaded with @o (@info
 * says what they are); the test skips where they see no client ids.
 */
static struct dac_bpf *load_with_ids(struct ctx *x, const struct dac_bpf_load_opts *o,
				     struct dac_bpf_info *info)
{
	int fd = sg_open();
	struct dac_bpf *b;

	sg_query(fd, &x->dev);
	close(fd);
	x->simple = sg_engine_simple(&x->dev);
	x->multi = sg_engine_multi(&x->dev);
	DT_ASSERT_TRUE(x->simple && x->multi);
	b = sg_bpf_load(o);
	DT_ASSERT_EQ(dac_bpf_info(b, info), 0);
	DT_ASSERT_TRUE(info->sched);
	if (!info->sched_client_ids)
		DT_SKIP("the scheduler programs see no DRM client id here (%s)",
			info->sched_btf ? "no drm_sched_fence.drm_client_id" :
			"the 6.1 records have none");
	return b;
}

static void run(struct ctx *x, enum dac_bpf_attach attach)
{
	struct dac_bpf_load_opts o = { .attach = attach, .no_drmacct = true };
	struct client_rec c[NCLIENTS] = { { 0 } };
	struct truth_row t[MAX_ROWS];
	struct dac_bpf_sched_client *rows = NULL, *rows2 = NULL;
	struct dac_bpf_sched *su = NULL;
	struct dac_bpf_info info;
	struct dac_bpf *b;
	size_t nrows = 0, nrows2 = 0, nsu = 0, nt;
	int fd[2], pfd[2], gfd[2];
	uint32_t bo[2];
	uint64_t phase1_jobs = 0, all_jobs = 0;
	pid_t pid;
	char go;

	b = load_with_ids(x, &o, &info);
	dt_info("gpu_scheduler programs: %s, %s set; ring identity: %s; %s jobs",
		info.sched_btf ? "tp_btf" : "plain tracepoints", info.sched_617 ? "6.17" : "6.1",
		dac_bpf_ring_identity_name(info.ring_identity), x->fill ? "FILL" : "BUSY");

	DT_ASSERT_EQ(pipe(pfd), 0);
	DT_ASSERT_EQ(pipe(gfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		close(gfd[1]);
		child(x, pfd[1], gfd[0]);
	}
	close(pfd[1]);
	close(gfd[0]);
	DT_ASSERT_EQ(read(pfd[0], &c[2], sizeof(c[2])), (ssize_t)sizeof(c[2]));
	for (int i = 0; i < 2; i++) {
		fd[i] = sg_open();
		bo[i] = new_bo(x, fd[i]);
		c[i].pid = getpid();
		read_fdinfo(x, fd[i], &c[i]);
	}
	for (int i = 0; i < NCLIENTS; i++)
		dt_info("client %c: drm-client-id %" PRIu64 ", pid %d", 'A' + i, c[i].id,
			(int)c[i].pid);
	DT_EXPECT_NE(c[0].id, c[1].id);
	DT_EXPECT_NE(c[1].id, c[2].id);
	DT_EXPECT_NE(c[0].id, c[2].id);

	/* Phase 1: one job at a time, A, B, then C. */
	one_job(x, fd[0], bo[0], x->simple, 20, &c[0], 1, NULL);
	one_job(x, fd[0], bo[0], x->simple, 35, &c[0], 1, NULL);
	one_job(x, fd[0], bo[0], x->multi, 25, &c[0], 1, NULL);
	one_job(x, fd[1], bo[1], x->multi, 40, &c[1], 1, NULL);
	one_job(x, fd[1], bo[1], x->multi, 20, &c[1], 1, NULL);
	one_job(x, fd[1], bo[1], x->simple, 30, &c[1], 1, NULL);
	read_fdinfo(x, fd[0], &c[0]);
	read_fdinfo(x, fd[1], &c[1]);
	go = 1;
	DT_ASSERT_EQ(write(gfd[1], &go, 1), 1);
	DT_ASSERT_EQ(read(pfd[0], &c[2], sizeof(c[2])), (ssize_t)sizeof(c[2]));
	for (int i = 0; i < NCLIENTS; i++)
		phase1_jobs += c[i].njobs;
	settled_rows(b, c, phase1_jobs, &rows, &nrows);

	/*
	 * The rows are exactly the truth's: as many, each found by (client
	 * id, ring), and none of another client (the maps are new: nobody
	 * else ran a job since the load).
	 */
	nt = truth_rows(x, c, NCLIENTS, 1, t);
	{
		size_t ours = 0;

		for (size_t i = 0; i < nrows; i++)
			ours += is_ours(rows[i].client_id, c);
		dt_info("phase 1: %zu client rows of these clients, %zu in the truth, %zu rows in all",
			ours, nt, nrows);
		DT_EXPECT_EQ(ours, nt);
		DT_EXPECT_EQ(nrows, ours);
	}
	for (size_t r = 0; r < nt; r++) {
		const struct dac_bpf_sched_client *row = find_row(rows, nrows, t[r].id, t[r].ring);
		char what[96];

		snprintf(what, sizeof(what), "client %" PRIu64 " on %s", t[r].id, t[r].ring);
		SG_CHECK(row != NULL, "%s: no sched_clients row", what);
		if (!row)
			continue;
		DT_EXPECT_EQ(row->jobs, (uint64_t)t[r].jobs);
		DT_EXPECT_EQ(row->tgid, (uint32_t)t[r].pid);
		within(what, row->busy_ns, t[r].w, t[r].run, t[r].end, t[r].jobs);
	}
	/* fdinfo per (client, engine): its engine time, at most the rows'. */
	for (int i = 0; i < NCLIENTS; i++)
		for (unsigned int q = 0; q < x->dev.num_engines; q++) {
			uint32_t e = x->dev.eng[q].index, jobs = 0;
			uint64_t truth = 0, sched = 0;

			for (size_t r = 0; r < nt; r++)
				if (t[r].id == c[i].id && t[r].engine == e) {
					truth += t[r].engine_ns;
					jobs += t[r].jobs;
				}
			for (size_t k = 0; k < nrows; k++)
				if (rows[k].client_id == c[i].id &&
				    !strncmp(rows[k].ring, x->dev.eng[q].q.name,
					     strlen(x->dev.eng[q].q.name)))
					sched += rows[k].busy_ns;
			dt_info("client %" PRIu64 " %s: fdinfo %" PRIu64 " ns, WAIT end-start %" PRIu64
				" ns, sched_clients %" PRIu64 " ns", c[i].id, x->dev.eng[q].q.name,
				c[i].fdinfo_ns[e], truth, sched);
			DT_EXPECT_EQ(c[i].fdinfo_ns[e], truth);
			DT_EXPECT_LE(c[i].fdinfo_ns[e], sched + jobs * CLOCK_NS);
		}

	/* Phase 2: A and C queue on the simple engine's ring at once. */
	go = 2;
	DT_ASSERT_EQ(write(gfd[1], &go, 1), 1);
	queued_jobs(x, fd[0], bo[0], x->simple, 3, &c[0]);
	DT_ASSERT_EQ(read(pfd[0], &c[2], sizeof(c[2])), (ssize_t)sizeof(c[2]));
	for (int i = 0; i < NCLIENTS; i++)
		all_jobs += c[i].njobs;
	settled_rows(b, c, all_jobs, &rows2, &nrows2);
	nt = truth_rows(x, c, NCLIENTS, 2, t);
	{
		uint64_t run[2 * MAX_JOBS], end[2 * MAX_JOBS], got = 0;
		struct drm_simgpu_wait ws[2 * MAX_JOBS];
		uint32_t n = 0;

		for (size_t r = 0; r < nt; r++) {
			const struct dac_bpf_sched_client *a = find_row(rows, nrows, t[r].id, t[r].ring);
			const struct dac_bpf_sched_client *z = find_row(rows2, nrows2, t[r].id,
									t[r].ring);

			SG_CHECK(z != NULL, "client %" PRIu64 " on %s: no row after phase 2",
				 t[r].id, t[r].ring);
			if (!z)
				continue;
			DT_EXPECT_EQ(z->jobs - (a ? a->jobs : 0), (uint64_t)t[r].jobs);
			got += z->busy_ns - (a ? a->busy_ns : 0);
			for (uint32_t k = 0; k < t[r].jobs; k++) {
				ws[n] = t[r].w[k];
				run[n] = t[r].run[k];
				end[n++] = t[r].end[k];
			}
		}
		within("phase 2, A + C on one ring", got, ws, run, end, n);
	}

	/*
	 * One charge, two keys: per ring, the client rows of these clients add
	 * up to the process rows of their processes (the child is alive).
	 */
	DT_ASSERT_EQ(dac_bpf_read_sched(b, &su, &nsu), 0);
	for (size_t k = 0; k < nrows2; k++) {
		uint64_t by_client = 0, by_proc = 0, jc = 0, jp = 0;
		bool first = true;

		if (!is_ours(rows2[k].client_id, c))
			continue;
		for (size_t m = 0; m < k; m++)
			if (is_ours(rows2[m].client_id, c) && rows2[m].ring_id == rows2[k].ring_id)
				first = false;
		if (!first)
			continue;
		for (size_t m = 0; m < nrows2; m++)
			if (is_ours(rows2[m].client_id, c) && rows2[m].ring_id == rows2[k].ring_id) {
				by_client += rows2[m].busy_ns;
				jc += rows2[m].jobs;
			}
		for (size_t m = 0; m < nsu; m++)
			if (su[m].ring_id == rows2[k].ring_id &&
			    (su[m].tgid == (uint32_t)c[0].pid || su[m].tgid == (uint32_t)c[2].pid)) {
				by_proc += su[m].busy_ns;
				jp += su[m].jobs;
			}
		dt_info("ring %s (id %u): clients %" PRIu64 " ns / %" PRIu64 " jobs, processes %"
			PRIu64 " ns / %" PRIu64 " jobs", rows2[k].ring, rows2[k].ring_id, by_client,
			jc, by_proc, jp);
		DT_EXPECT_EQ(by_client, by_proc);
		DT_EXPECT_EQ(jc, jp);
	}
	free(su);
	close(gfd[1]);
	sg_reap(&pid, 1);
	close(pfd[0]);
	free(rows);
	free(rows2);
	close(fd[0]);
	close(fd[1]);
	dac_bpf_close(b);
	sg_dev_free(&x->dev);
}

/*
 * A client whose file outlives its opener. Opener A runs one job and
 * forks B, which inherits the file, and exits; B runs jobs on the same
 * client. Then SHARED_FILLERS processes, one after the other, each run a
 * job on a client of their own and exit, into a sched_clients cut to
 * SHARED_ENTRIES: every new entry past the first SHARED_ENTRIES takes the
 * place of the unused longest whose last charging process has gone -- a
 * filler's, never the shared client's, whose last charge is B's and B
 * lives (keyed by its first process, A's, it was the first to go). B runs
 * one more job at the end. Exact: the shared client's row has all its
 * jobs (A's and B's, one ring), and the reclaims are as many as the
 * entries made past the map's size.
 */
#define SHARED_ENTRIES	8
#define SHARED_FILLERS	(SHARED_ENTRIES + 2)

/* B: on each byte from @gofd one job on @fd, then a byte back to @wfd; exits at EOF. */
static void shared_b(const struct ctx *x, int fd, int gofd, int wfd)
{
	struct client_rec c = { .pid = getpid() };
	uint32_t bo = new_bo(x, fd);
	char go;

	while (read(gofd, &go, 1) == 1) {
		c.njobs = 0;
		one_job(x, fd, bo, x->simple, 2, &c, 1, NULL);
		if (write(wfd, &go, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* A: one job, B forked with the file, the client's id to @wfd, exit. */
static void shared_a(const struct ctx *x, int gofd, int wfd)
{
	struct client_rec c = { .pid = getpid() };
	int fd = sg_open();
	uint32_t bo = new_bo(x, fd);
	pid_t b;

	one_job(x, fd, bo, x->simple, 2, &c, 1, NULL);
	read_fdinfo(x, fd, &c);
	b = fork();
	if (b < 0)
		_exit(1);
	if (b == 0)
		shared_b(x, fd, gofd, wfd);
	if (write(wfd, &c.id, sizeof(c.id)) != sizeof(c.id))
		_exit(1);
	_exit(0);
}

/* A process that runs one job on a client of its own and exits. */
static void filler(const struct ctx *x)
{
	pid_t pid = fork();
	int status;

	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct client_rec c = { .pid = getpid() };
		int fd = sg_open();

		one_job(x, fd, new_bo(x, fd), x->simple, 2, &c, 1, NULL);
		_exit(0);
	}
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* One more job of B (a byte down @go, its answer up @done). */
static void shared_job(int go, int done)
{
	char c = 1;

	DT_ASSERT_EQ(write(go, &c, 1), 1);
	DT_ASSERT_EQ(read(done, &c, 1), 1);
}

/* The shared client's rows: their jobs once @want are in (settled_rows()). */
static uint64_t shared_jobs(struct dac_bpf *b, uint64_t id, uint64_t want)
{
	struct client_rec c[NCLIENTS] = { { .id = id } };
	struct dac_bpf_sched_client *rows = NULL;
	size_t n = 0;
	uint64_t jobs = settled_rows(b, c, want, &rows, &n);

	free(rows);
	return jobs;
}

static void shared_run(struct ctx *x, enum dac_bpf_attach attach)
{
	struct dac_bpf_load_opts o = { .attach = attach, .no_drmacct = true,
				       .sched_entries = SHARED_ENTRIES };
	struct dac_bpf_stats st0, st;
	struct dac_bpf_info info;
	struct dac_bpf *b;
	int go[2], done[2], status;
	uint64_t id = 0, made;
	pid_t a;

	b = load_with_ids(x, &o, &info);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	/* B is A's child: this process reaps it (and sees it end). */
	DT_ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	DT_ASSERT_EQ(pipe(go), 0);
	DT_ASSERT_EQ(pipe(done), 0);
	a = fork();
	DT_ASSERT_GE(a, 0);
	if (a == 0) {
		close(go[1]);
		close(done[0]);
		shared_a(x, go[0], done[1]);
	}
	close(go[0]);
	close(done[1]);
	DT_ASSERT_EQ(read(done[0], &id, sizeof(id)), (ssize_t)sizeof(id));
	DT_ASSERT_EQ(waitpid(a, &status, 0), a);
	DT_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	shared_job(go[1], done[0]);
	shared_job(go[1], done[0]);
	DT_EXPECT_EQ(shared_jobs(b, id, 3), 3u);
	for (int i = 0; i < SHARED_FILLERS; i++)
		filler(x);
	shared_job(go[1], done[0]);
	DT_EXPECT_EQ(shared_jobs(b, id, 4), 4u);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	/* entries made: the shared client's and one per filler */
	made = 1 + SHARED_FILLERS;
	dt_info("shared client %" PRIu64 ": %u entries, %" PRIu64 " made, %" PRIu64
		" reclaimed", id, SHARED_ENTRIES, made,
		st.clients_reclaimed - st0.clients_reclaimed);
	DT_EXPECT_EQ(st.clients_reclaimed - st0.clients_reclaimed, made - SHARED_ENTRIES);
	close(go[1]);		/* B's EOF: it exits, and this process reaps it */
	DT_ASSERT_GT(wait(&status), 0);
	DT_EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	DT_ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
	close(done[0]);
	dac_bpf_close(b);
}

DT_TEST_TIMEOUT(client_rows_match_fdinfo_and_truth_tp_btf, 180)
{
	struct ctx x = { .fill = false };

	if (access("/sys/kernel/btf/gpu_sched", F_OK))
		DT_SKIP("gpu_sched has no module BTF: no tp_btf programs");
	run(&x, DAC_BPF_ATTACH_BTF);
}

DT_TEST_TIMEOUT(client_rows_match_fdinfo_and_truth_tracepoint, 180)
{
	struct ctx x = { .fill = true };

	run(&x, DAC_BPF_ATTACH_TRACEPOINT);
}

DT_TEST_TIMEOUT(shared_client_kept_past_its_opener, 180)
{
	struct ctx x = { .fill = false };

	shared_run(&x, DAC_BPF_ATTACH_AUTO);
}

DT_MAIN
