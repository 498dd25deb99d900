// SPDX-License-Identifier: GPL-2.0
/*
 * Thousands of schedulers in the BPF accounting (bpf/drmacct/sched.bpf.c).
 *
 * simgpu is reloaded with queues=per_client: every open file gets its own
 * drm_gpu_scheduler per engine instance (five), all named like the
 * instance they feed ("render0", "copy1", ...), the way xe, panthor and
 * pvr have one scheduler per user queue. PROCS processes open and close
 * files until SCHEDS schedulers have existed (they come and go, only a few
 * are alive at once); per file each scheduler gets DRMACCT_SCHED_JOBS jobs
 * (default 1), and all processes run on the same engine instances at once,
 * so the jobs of different processes overlap in time on equally named
 * rings. The BPF collection must then give
 *   - no orphan completion (stats' sched_orphans unchanged),
 *   - one ring per scheduler that ran a job, never more (rings made, in
 *     stats, at most the number of schedulers), and no insert refused,
 *   - per process (its PROC_EXIT record) the ground truth: the sum over its
 *     schedulers of the union of their jobs' [run_ns, end_ns] (WAIT).
 * Rings merged by name would union overlapping jobs of different processes
 * and charge each process only a share by completion order: the totals
 * would be far below the truth, and only 5 rings would be made.
 *
 * And once more with every scheduler map cut to what one wave needs, in
 * waves: more schedulers over time than the ring map holds, so idle
 * rings are reclaimed (counted), exactly as many as were made beyond the
 * map's size, with nothing refused or lost and the same per-process truth.
 *
 * And a run that meets its ring being reclaimed, forced by a load option
 * that stalls every reclaim after its claim (run_meets_its_ring_in_reclaim).
 *
 * Run once with the default attach (tp_btf where gpu_sched has BTF: the
 * scheduler pointer) and once with plain tracepoints (the record has the
 * entity; the programs read entity->rq->sched).
 *
 * The plain run uses OP_FILL jobs, which complete in a worker, instead of
 * OP_BUSY jobs, which complete in simgpu's hrtimer (hard IRQ): the kernel
 * runs no plain tracepoint program while another kprobe or tracepoint
 * program runs on the same CPU (trace_call_bpf()'s bpf_prog_active), so a
 * completion in an IRQ that interrupts drm_sched_job's or drm_run_job's
 * program is lost -- measured on 6.1: 11 of 500 jobs of one process, and
 * the ring then counts as busy for good. See Documentation/bpf.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../bpf/drmacct_bpf.h"
#include "bpf.h"
#include "dtest.h"
#include "sgtest.h"

#define SCHEDS		2000	/* schedulers over the run */
#define PROCS		4	/* processes at once */
#define MAX_INST	8	/* engine instances a file has schedulers on */
#define MAX_JOBS	4	/* jobs per scheduler */
#define JOB_NS		(1 * NSEC_PER_MSEC)	/* OP_BUSY jobs */
#define FILL_BYTES	(512 * 1024)		/* OP_FILL jobs */

/* One engine instance, i.e. one scheduler of each file. */
struct inst {
	unsigned int engine;
	unsigned int instance;
};

/* What one process did, per the driver (WAIT). */
struct proc_truth {
	int32_t pid;
	uint32_t files;
	uint64_t jobs;
	uint64_t busy_ns;	/* Σ over its schedulers of the union of [run, end] */
	uint64_t lo_ns;		/* Σ of sg_sched_bounds()' lo, hi */
	uint64_t hi_ns;
};

static unsigned int jobs_per_sched(void)
{
	const char *env = getenv("DRMACCT_SCHED_JOBS");
	unsigned long n = env ? strtoul(env, NULL, 10) : 1;

	return n < 1 ? 1 : n > MAX_JOBS ? MAX_JOBS : (unsigned int)n;
}

/*
 * One job on instance @in of file @fd: OP_FILL of buffer @bo (@value) when
 * @fill, else OP_BUSY for JOB_NS. Its id.
 */
static uint64_t submit_one(int fd, const struct inst *in, bool fill, uint32_t bo,
			   uint64_t value)
{
	struct drm_simgpu_submit s = {
		.engine = in->engine, .instance = in->instance,
		.op = SIMGPU_OP_FILL, .dst_handle = bo,
		.size = FILL_BYTES, .value = value,
	};

	return fill ? sg_submit(fd, &s) : sg_submit_busy(fd, in->engine, in->instance, JOB_NS);
}

/*
 * In a child: @files times open @node, run @nj jobs on each of the @ni
 * instances (all submitted before the first wait, so they overlap with
 * the other processes'), close; write the truth to @wfd, wait until @gofd
 * closes (the parent reads the live maps meanwhile) and exit.
 */
static void child_work(const char *node, const struct inst *in, unsigned int ni,
		       unsigned int files, unsigned int nj, bool fill, int wfd, int gofd)
{
	char go;
	struct proc_truth t = { .pid = getpid() };
	uint64_t ids[MAX_INST][MAX_JOBS];

	for (unsigned int f = 0; f < files; f++) {
		int fd = open(node, O_RDWR | O_CLOEXEC);

		uint32_t bo = 0;

		if (fd < 0)
			_exit(2);
		if (fill)
			bo = sg_bo_create(fd, FILL_BYTES);
		for (unsigned int j = 0; j < nj; j++) {
			for (unsigned int i = 0; i < ni; i++)
				ids[i][j] = submit_one(fd, &in[i], fill, bo, i + j);
		}
		for (unsigned int i = 0; i < ni; i++) {
			uint64_t run[MAX_JOBS], end[MAX_JOBS], lo, hi;
			struct drm_simgpu_wait w[MAX_JOBS];

			for (unsigned int j = 0; j < nj; j++) {
				sg_wait(fd, ids[i][j], &w[j]);
				if (w[j].status != SIMGPU_JOB_DONE)
					_exit(3);
				run[j] = w[j].run_ns;
				end[j] = w[j].end_ns;
			}
			t.busy_ns += sg_union_ns(run, end, nj);
			sg_sched_bounds(w, nj, &lo, &hi);
			t.lo_ns += lo;
			t.hi_ns += hi;
			t.jobs += nj;
		}
		close(fd);
		t.files++;
	}
	if (write(wfd, &t, sizeof(t)) != sizeof(t))
		_exit(1);
	_exit(read(gofd, &go, 1) == 0 ? 0 : 1);
}

/*
 * @what of process @p against its ground truth. Per ring it is charged
 * from drm_run_job (just before run_job() takes run_ns) to the fence
 * callback (inside the signal, after hw_end_ns): within [lo_ns, hi_ns] of
 * sg_sched_bounds(), no allowance (rings merged by name would be far
 * below: their overlapping jobs are unioned). Returns the error against
 * the union of [run_ns, end_ns] in percent.
 */
static double check_proc(const char *what, int p, const struct proc_truth *t, uint64_t got,
			 uint64_t jobs)
{
	double err = 100.0 * ((double)got - (double)t->busy_ns) / (double)t->busy_ns;

	dt_info("process %d, %s: bpf %" PRIu64 " ns, ground truth %" PRIu64 " ns (%+.3f%%), "
		"bounds %" PRIu64 "..%" PRIu64 " ns, %" PRIu64 " jobs", p, what, got, t->busy_ns,
		err, t->lo_ns, t->hi_ns, jobs);
	DT_EXPECT_EQ(jobs, t->jobs);
	DT_EXPECT_GE(got, t->lo_ns);
	DT_EXPECT_LE(got, t->hi_ns);
	return err < 0 ? -err : err;
}

/* Entries and max_entries of map @name. */
static int64_t map_entries(struct dac_bpf *b, const char *name, uint32_t *max)
{
	struct dac_bpf_map_stat *m = NULL;
	int64_t e = -2;
	size_t n = 0;

	DT_ASSERT_EQ(dac_bpf_read_maps(b, &m, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(m[i].name, name))
			continue;
		e = m[i].entries;
		if (max)
			*max = m[i].max_entries;
	}
	free(m);
	DT_ASSERT_NE(e, -2);
	return e;
}

/* Inserts map @name refused so far (full, busy, nomem). */
static uint64_t map_refused(struct dac_bpf *b, const char *name)
{
	struct dac_bpf_map_stat *m = NULL;
	uint64_t r = 0;
	size_t n = 0;

	DT_ASSERT_EQ(dac_bpf_read_maps(b, &m, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].name, name))
			r = m[i].full + m[i].busy + m[i].nomem;
	free(m);
	return r;
}

DT_FIXTURE(pc) {
	struct sg_dev dev;
	bool loaded;
};

DT_SETUP(pc)
{
	char *q;

	if (!sg_is_root())
		DT_SKIP("needs root to reload simgpu");
	sg_need_btf();
	DT_ASSERT_EQ(sg_simgpu_reload("queues=per_client"), 0);
	self->loaded = true;
	q = sg_read_file("/sys/module/simgpu/parameters/queues", NULL);
	DT_ASSERT_TRUE(q != NULL);
	DT_EXPECT_EQ(strcmp(q, "per_client\n"), 0);
	free(q);
}

DT_TEARDOWN(pc)
{
	sg_dev_free(&self->dev);
	if (self->loaded && sg_simgpu_reload(""))
		dt_info("could not reload simgpu with its defaults");
}

/* Every engine instance of the device (into @in); their number. */
static unsigned int instances(struct sg_dev *dev, struct inst *in)
{
	unsigned int n = 0;
	int fd = sg_open();

	sg_query(fd, dev);
	close(fd);
	for (unsigned int e = 0; e < dev->num_engines; e++)
		for (unsigned int i = 0; i < dev->eng[e].q.capacity; i++) {
			DT_ASSERT_LT(n, (unsigned int)MAX_INST);
			in[n].engine = dev->eng[e].index;
			in[n++].instance = i;
		}
	return n;
}

/*
 * One wave: PROCS processes, @files files each, their jobs checked live
 * (sched_usage) and in their PROC_EXIT records; they all exit before it
 * returns. Adds to *@sum_truth, *@sum_bpf; returns the worst error (%).
 */
static double wave(struct dac_bpf *b, const char *node, const struct inst *in, unsigned int ni,
		   unsigned int files, unsigned int nj, bool fill, uint64_t *sum_truth,
		   uint64_t *sum_bpf)
{
	struct proc_truth truth[PROCS] = { 0 };
	struct dac_bpf_proc_exit rec[PROCS] = { { 0 } };
	unsigned int records[PROCS] = { 0 };
	pid_t pid[PROCS];
	struct sg_proc_records c = { .pid = pid, .n = PROCS, .rec = rec, .records = records };
	double worst = 0;
	int pfd[2], gfd[2];

	DT_ASSERT_EQ(pipe(pfd), 0);
	DT_ASSERT_EQ(pipe(gfd), 0);
	for (int p = 0; p < PROCS; p++) {
		pid[p] = fork();
		DT_ASSERT_GE(pid[p], 0);
		if (pid[p] == 0) {
			close(pfd[0]);
			close(gfd[1]);
			child_work(node, in, ni, files, nj, fill, pfd[1], gfd[0]);
		}
	}
	close(pfd[1]);
	close(gfd[0]);
	for (int p = 0; p < PROCS; p++) {
		struct proc_truth t;

		DT_ASSERT_EQ(read(pfd[0], &t, sizeof(t)), (ssize_t)sizeof(t));
		for (int k = 0; k < PROCS; k++)
			if (pid[k] == t.pid)
				truth[k] = t;
	}
	close(pfd[0]);
	/*
	 * All done, none exited: sched_usage holds each one's rings. No map
	 * is read before this: a bpf() map call holds the CPU's
	 * bpf_prog_active, and where it can be preempted (7.3) the plain
	 * tracepoint programs there skip events meanwhile (bpf.rst).
	 */
	for (int p = 0; p < PROCS; p++) {
		uint64_t busy, jobs;
		double err;

		sg_bpf_sched_sums(b, (uint32_t)truth[p].pid, &busy, &jobs);
		err = check_proc("sched_usage", p, &truth[p], busy, jobs);
		worst = err > worst ? err : worst;
	}
	close(gfd[1]);
	sg_reap(pid, PROCS);
	sg_bpf_poll_procs(b, &c, 50);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	for (int p = 0; p < PROCS; p++) {
		double err;

		DT_EXPECT_EQ(truth[p].files, files);
		DT_EXPECT_EQ(c.records[p], 1u);
		err = check_proc("PROC_EXIT", p, &truth[p], rec[p].busy_ns, rec[p].jobs);
		worst = err > worst ? err : worst;
		*sum_truth += truth[p].busy_ns;
		*sum_bpf += rec[p].busy_ns;
	}
	return worst;
}

/*
 * @scheds schedulers over @waves waves of PROCS processes, with every
 * scheduler map cut to @entries (0: the default). With fewer ring entries
 * than schedulers, idle rings are reclaimed as new schedulers come (each
 * wave's processes exit before the next starts, so sched_usage and procs
 * never need more than a wave's entries): no ring insert is refused, no
 * job is lost, and every process's totals are still within its bounds.
 */
static void run(struct dt_fx_pc *self, enum dac_bpf_attach attach, bool fill, unsigned int scheds,
		unsigned int waves, uint32_t entries)
{
	struct dac_bpf_load_opts o = { .attach = attach, .no_drmacct = true,
				       .sched_entries = entries };
	unsigned int ni, files, nj = jobs_per_sched(), all;
	int64_t sched0;
	uint64_t t0 = sg_now_ns(), sum_truth = 0, sum_bpf = 0, made, reclaimed;
	double worst = 0;
	struct dac_bpf_stats st0, st;
	struct dac_bpf_info info;
	struct dac_bpf *b;
	struct inst in[MAX_INST];
	uint32_t max_rings = 0;
	char node[64];

	ni = instances(&self->dev, in);
	DT_ASSERT_GT(ni, 0u);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	files = (scheds + ni * PROCS * waves - 1) / (ni * PROCS * waves);
	all = PROCS * files * ni * waves;
	b = sg_bpf_load(&o);
	DT_ASSERT_EQ(dac_bpf_info(b, &info), 0);
	DT_ASSERT_TRUE(info.sched);
	dt_info("gpu_scheduler programs: %s, %s set; ring identity: %s",
		info.sched_btf ? "tp_btf" : "plain tracepoints",
		info.sched_617 ? "6.17" : "6.1", dac_bpf_ring_identity_name(info.ring_identity));
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	/* rings is write-only (kernel addresses): its size, not its entries */
	map_entries(b, "rings", &max_rings);
	sched0 = map_entries(b, "sched_usage", NULL);
	if (entries)
		DT_EXPECT_EQ(max_rings, entries);

	for (unsigned int w = 0; w < waves; w++) {
		double err = wave(b, node, in, ni, files, nj, fill, &sum_truth, &sum_bpf);

		worst = err > worst ? err : worst;
	}
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	made = st.rings_new - st0.rings_new;
	reclaimed = st.rings_reclaimed - st0.rings_reclaimed;

	dt_info("%u waves x %d processes x %u files x %u schedulers = %u schedulers, %u %s jobs "
		"each: %.1f s", waves, PROCS, files, ni, all, nj, fill ? "FILL" : "BUSY",
		(double)(sg_now_ns() - t0) / 1e9);
	{
		struct dac_bpf_prog_stats *ps = NULL;
		size_t nps = 0;

		DT_ASSERT_EQ(dac_bpf_read_prog_stats(b, &ps, &nps), 0);
		for (size_t i = 0; i < nps; i++)
			if (ps[i].recursion_misses)
				dt_info("%s: %" PRIu64 " runs skipped by the kernel (recursion)",
					ps[i].name, ps[i].recursion_misses);
		free(ps);
	}
	dt_info("rings: %" PRIu64 " made, %" PRIu64 " reclaimed (max_entries %u), %" PRIu64
		" runs met their ring in reclaim; orphans %" PRIu64 "; lost %" PRIu64
		"; refused full %" PRIu64 " busy %" PRIu64 " nomem %" PRIu64
		"; PROC_EXIT records %" PRIu64, made, reclaimed, max_rings,
		st.ring_reclaim_runs - st0.ring_reclaim_runs,
		st.sched_orphans - st0.sched_orphans, st.sched_lost - st0.sched_lost,
		st.full - st0.full, st.busy - st0.busy, st.nomem - st0.nomem,
		st.proc_records - st0.proc_records);
	DT_EXPECT_EQ(st.sched_orphans, st0.sched_orphans);
	DT_EXPECT_EQ(st.sched_lost, st0.sched_lost);
	/*
	 * No insert refused (a fresh collection: from 0), sched_clients (the
	 * per DRM client and ring sums, where jobs carry client ids) too:
	 * an entry per file and ring, so with the maps cut to one wave it
	 * fills up and each new client's entry takes the place of one whose
	 * process has exited (before the reclaim: 1,976 refusals of 2,000 on
	 * 7.3).
	 */
	DT_EXPECT_EQ(map_refused(b, "sched_clients"), (uint64_t)0);
	if (info.sched_client_ids) {
		uint32_t max_clients = 0;
		int64_t nc = map_entries(b, "sched_clients", &max_clients);
		uint64_t creclaimed = st.clients_reclaimed - st0.clients_reclaimed;

		/*
		 * Every scheduler is one file's (a client's): one entry per
		 * scheduler, all ever made; those beyond the map's size each
		 * took a reclaimed one's place, and no more went.
		 */
		dt_info("sched_clients: %" PRId64 " entries of %u at the end, %" PRIu64
			" reclaimed", nc, max_clients, creclaimed);
		if (entries) {
			DT_EXPECT_EQ(nc, (int64_t)max_clients);
			DT_EXPECT_EQ(creclaimed, (uint64_t)all - max_clients);
		} else {
			DT_EXPECT_EQ(creclaimed, (uint64_t)0);
		}
	}
	DT_EXPECT_EQ(map_refused(b, "rings"), (uint64_t)0);
	DT_EXPECT_EQ(map_refused(b, info.sched_617 ? "inflight617" : "inflight"), (uint64_t)0);
	DT_EXPECT_EQ(map_refused(b, "sched_usage"), (uint64_t)0);
	DT_EXPECT_EQ(map_refused(b, "procs"), (uint64_t)0);
	if (!entries) {
		DT_EXPECT_EQ(st.full, st0.full);
		DT_EXPECT_EQ(st.busy, st0.busy);
		DT_EXPECT_EQ(st.nomem, st0.nomem);
	}
	/*
	 * A ring per scheduler, never more. A scheduler at the address of
	 * one torn down before continues its ring (their jobs never overlap
	 * in time), so fewer; but the PROCS x ni schedulers alive at once are
	 * distinct rings (by name they would be ni).
	 */
	DT_EXPECT_LE(made, (uint64_t)all);
	DT_EXPECT_GE(made, (uint64_t)PROCS * ni);
	/* never more rings at once than entries: the rest were reclaimed */
	DT_EXPECT_LE(made - reclaimed, (uint64_t)max_rings);
	if (made <= max_rings)
		DT_EXPECT_EQ(reclaimed, (uint64_t)0);	/* room enough: none */
	else
		DT_EXPECT_EQ(reclaimed, made - max_rings);	/* only when full */
	if (entries)
		DT_EXPECT_GT(reclaimed, (uint64_t)0);	/* what the cut is for */
	/*
	 * Every process used more rings than its record has slots: its
	 * sched_usage entries all went at its exit all the same.
	 */
	dt_info("entries at the end: procs %" PRId64 ", sched_usage %" PRId64 " (%" PRId64
		" before)", map_entries(b, "procs", NULL), map_entries(b, "sched_usage", NULL),
		sched0);
	DT_EXPECT_EQ(map_entries(b, "sched_usage", NULL), sched0);
	dt_info("all processes: bpf %" PRIu64 " ns, ground truth %" PRIu64
		" ns; worst per-process error %.3f%%", sum_bpf, sum_truth, worst);
	dac_bpf_close(b);
}

DT_TEST_F_TIMEOUT(pc, schedulers_2000_default_attach, 600)
{
	run(self, DAC_BPF_ATTACH_AUTO, false, SCHEDS, 1, 0);
}

DT_TEST_F_TIMEOUT(pc, schedulers_2000_plain_tracepoints, 600)
{
	run(self, DAC_BPF_ATTACH_TRACEPOINT, true, SCHEDS, 1, 0);
}

/*
 * More schedulers over time than the ring map holds: RECLAIM_WAVES waves
 * of PROCS processes with one file each, SCHEDS schedulers in all, and
 * every scheduler map cut to what one wave needs at most (PROCS x ni x nj
 * jobs in flight and (process, ring) entries, PROCS processes). A new
 * scheduler often reuses a torn-down one's address, and so its ring (2,000
 * schedulers made about 100 rings in one run), but not always: over the
 * waves far more distinct schedulers come than that.
 */
#define RECLAIM_WAVES	100

DT_TEST_F_TIMEOUT(pc, schedulers_2000_rings_reclaimed, 900)
{
	struct inst in[MAX_INST];
	unsigned int ni = instances(&self->dev, in);

	sg_dev_free(&self->dev);
	run(self, DAC_BPF_ATTACH_AUTO, false, SCHEDS, RECLAIM_WAVES,
	    PROCS * ni * jobs_per_sched() + PROCS);
}

/*
 * A run that meets its ring being reclaimed -- the reclaimer between its
 * claim and its delete -- is charged its own time under that ring's id,
 * holding no reference. No workload holds a reclaimer there, so the load
 * option test_stall_reclaim makes every reclaim stop after its claim. The
 * ring map is cut to one file's schedulers: file A's jobs (one per
 * instance, one at a time) make its ni rings, which then lie idle; file
 * B's first job needs a ring: DAC_RECLAIM_TRIES reclaims each claim one of
 * A's and none deletes it, so B's job runs on no ring (one refused insert,
 * one job lost). A's second round then finds DAC_RECLAIM_TRIES of its
 * rings claimed: those jobs are charged run to done, counted in
 * ring_reclaim_runs, the others as usual -- every job within simgpu's
 * bounds for it (each ran on an idle ring: the charge of either kind is
 * its own [run event, done event]), and each under its own ring's id: A's
 * ni sched_usage entries have two jobs each. With @attach and, for plain
 * tracepoints, OP_FILL jobs (see the head of this file).
 */
static void stall_run(struct dt_fx_pc *self, enum dac_bpf_attach attach, bool fill)
{
	struct dac_bpf_load_opts o = { .attach = attach, .no_drmacct = true,
				       .test_stall_reclaim = true };
	struct dac_bpf_sched *se = NULL;
	struct dac_bpf_stats st0, st;
	struct drm_simgpu_wait w;
	struct inst in[MAX_INST];
	uint64_t lo = 0, hi = 0, busy, jobs, l, h;
	unsigned int ni = instances(&self->dev, in), mine = 0;
	uint32_t bo[2] = { 0, 0 };
	struct dac_bpf *b;
	size_t n = 0;
	int fd[2];

	DT_ASSERT_GE(ni, (unsigned int)DAC_RECLAIM_TRIES + 1);
	o.sched_entries = ni;
	b = sg_bpf_load(&o);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	for (int f = 0; f < 2; f++) {
		fd[f] = sg_open();
		if (fill)
			bo[f] = sg_bo_create(fd[f], FILL_BYTES);
	}
	/* round 0: A on every instance; round 1: B on the first, then A again */
	for (unsigned int round = 0; round < 2; round++) {
		for (unsigned int k = round ? 0 : 1; k <= ni; k++) {
			unsigned int f = k ? 0 : 1, i = k ? k - 1 : 0;

			sg_wait(fd[f], submit_one(fd[f], &in[i], fill, bo[f], k), &w);
			DT_ASSERT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
			if (!f) {
				sg_sched_bounds(&w, 1, &l, &h);
				lo += l;
				hi += h;
			}
		}
	}
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	sg_bpf_sched_sums(b, (uint32_t)getpid(), &busy, &jobs);
	dt_info("rings made %" PRIu64 ", reclaimed %" PRIu64 ", runs on a ring in reclaim %"
		PRIu64 ", lost %" PRIu64 "; A's %u jobs: bpf %" PRIu64 " ns, bounds %" PRIu64
		"..%" PRIu64 " ns", st.rings_new - st0.rings_new,
		st.rings_reclaimed - st0.rings_reclaimed,
		st.ring_reclaim_runs - st0.ring_reclaim_runs, st.sched_lost - st0.sched_lost,
		2 * ni, busy, lo, hi);
	DT_EXPECT_EQ(st.rings_new - st0.rings_new, (uint64_t)ni);
	DT_EXPECT_EQ(st.rings_reclaimed - st0.rings_reclaimed, (uint64_t)0);
	DT_EXPECT_EQ(map_refused(b, "rings"), (uint64_t)1);
	DT_EXPECT_EQ(st.sched_lost - st0.sched_lost, (uint64_t)1);
	DT_EXPECT_EQ(st.ring_reclaim_runs - st0.ring_reclaim_runs, (uint64_t)DAC_RECLAIM_TRIES);
	DT_EXPECT_EQ(jobs, (uint64_t)2 * ni);
	DT_EXPECT_GE(busy, lo);
	DT_EXPECT_LE(busy, hi);
	DT_ASSERT_EQ(dac_bpf_read_sched(b, &se, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (se[i].tgid != (uint32_t)getpid())
			continue;
		mine++;
		DT_EXPECT_EQ(se[i].jobs, (uint64_t)2);	/* one per round, same ring id */
	}
	free(se);
	DT_EXPECT_EQ(mine, ni);
	for (int f = 0; f < 2; f++)
		close(fd[f]);
	dac_bpf_close(b);
}

DT_TEST_F_TIMEOUT(pc, run_meets_its_ring_in_reclaim, 300)
{
	stall_run(self, DAC_BPF_ATTACH_AUTO, false);
}

DT_TEST_F_TIMEOUT(pc, run_meets_its_ring_in_reclaim_plain, 300)
{
	stall_run(self, DAC_BPF_ATTACH_TRACEPOINT, true);
}

DT_MAIN
