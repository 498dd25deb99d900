// SPDX-License-Identifier: GPL-2.0
/*
 * The gpu_scheduler maps of the BPF accounting (bpf/drmacct/sched.bpf.c) past
 * their capacity: no accounting state is evicted, every refused insert is
 * counted and the jobs concerned counted lost, idle rings are reclaimed
 * for new schedulers, and once the pressure is gone every ring charges
 * exactly again.
 *
 * The collection is loaded with every scheduler map cut to ni - 1 entries
 * (ni: simgpu's engine instances, one drm_gpu_scheduler each), so:
 *   - phase 1: PRESSURE_JOBS long jobs on every instance, all submitted
 *     before waiting: more live jobs than in-flight entries (refused,
 *     counted in the map's "full" -- on 6.1 too, whose map functions
 *     return int (map_err() in bpf/drmacct/drmacct.h) -- and as lost) and
 *     more schedulers than ring entries (a followed job's run on a new
 *     one gets a ring only by reclaiming one that no followed job names;
 *     while every ring is in use it is refused, counted, and the job lost
 *     at completion);
 *   - phase 2: one job at a time, with idle gaps between, on every
 *     instance: every scheduler gets a ring (those without one reclaim an
 *     idle one: at least one does, counted) and each is charged, per job,
 *     within simgpu's stamps (sg_sched_bounds(), no allowance). Phase 1's
 *     lost jobs leave nothing behind: idleness is the kernel's own count of
 *     jobs on the hardware, so no ring still counts one of them as running
 *     -- which would charge the idle gaps as well and exceed the bound by
 *     milliseconds.
 * The counts are checked against what was submitted: jobs charged plus
 * jobs lost is every job, exactly.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf.h"
#include "dtest.h"
#include "sgtest.h"

#define MAX_INST	8
#define PRESSURE_JOBS	8			/* per instance, phase 1 */
#define PRESSURE_NS	(20 * NSEC_PER_MSEC)	/* phase 1 jobs */
#define LATER_JOBS	3			/* per instance, phase 2 */
#define LATER_NS	(2 * NSEC_PER_MSEC)	/* phase 2 jobs */
#define GAP_NS		(5 * NSEC_PER_MSEC)	/* idle between phase 2 jobs */
#define DRMACCT		"/usr/bin/drmacct"
#define PIN_DIR		"/sys/fs/bpf/drmacct-pressure"

struct inst {
	unsigned int engine, instance;
	char name[DAC_BPF_NAME_LEN];	/* its scheduler's: "<engine><instance>" */
};

/*
 * The in-flight map of the programs loaded: the tp_btf set and the plain
 * 6.17 programs join jobs by {fence context, seqno}, the plain 6.1 ones by
 * fence address.
 */
static const char *join_map(const struct dac_bpf_info *info)
{
	return info->sched_btf || info->sched_617 ? "inflight617" : "inflight";
}

/*
 * The PROC_EXIT record of child @pid, which exits on its own: fails the
 * test unless exactly one comes.
 */
static struct dac_bpf_proc_exit child_record(struct dac_bpf *b, pid_t pid)
{
	struct dac_bpf_proc_exit rec = { 0 };
	unsigned int records = 0;
	struct sg_proc_records c = { .pid = &pid, .n = 1, .rec = &rec, .records = &records };

	sg_reap(&pid, 1);
	sg_bpf_poll_procs(b, &c, 50);
	DT_EXPECT_EQ(c.lost, (uint64_t)0);
	DT_EXPECT_EQ(records, 1u);
	return rec;
}

/* Map @name's entry in the map table; fails the test when it is not there. */
static struct dac_bpf_map_stat map_stat(struct dac_bpf *b, const char *name)
{
	struct dac_bpf_map_stat *m = NULL, r = { .entries = -2 };
	size_t n = 0;

	DT_ASSERT_EQ(dac_bpf_read_maps(b, &m, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].name, name))
			r = m[i];
	free(m);
	DT_ASSERT_NE(r.entries, -2);
	return r;
}

/*
 * What `drmacct bpf status` says of @b (pinned under PIN_DIR for it, once):
 * the scheduler jobs lost, the refused inserts, full + nomem, of map @name
 * and of "rings", and the rings made and reclaimed (-1 when a line is
 * missing).
 */
static void cli_status(struct dac_bpf *b, const char *name, int64_t *lost, int64_t *refused,
		       int64_t *ring_refused, int64_t *rings_made, int64_t *rings_reclaimed)
{
	char *out, *line, *save = NULL, n[32], t[32], e[32];
	unsigned long long mx, mem, full, busy, nomem, l, rm, rr;

	*lost = *refused = *ring_refused = *rings_made = *rings_reclaimed = -1;
	dac_bpf_unpin(PIN_DIR);	/* a run killed before its unpin */
	DT_ASSERT_EQ(dac_bpf_pin(b, PIN_DIR), 0);
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf status -d " PIN_DIR " >/tmp/pressure.out 2>&1"), 0);
	out = sg_read_file("/tmp/pressure.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("bpf status:\n%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "  scheduler jobs lost: %llu", &l) == 1)
			*lost = (int64_t)l;
		if (sscanf(line, "  scheduler rings: %llu created, %llu", &rm, &rr) == 2) {
			*rings_made = (int64_t)rm;
			*rings_reclaimed = (int64_t)rr;
		}
		if (sscanf(line, " %31s %31s %31s %llu %llu %llu %llu %llu", n, t, e, &mx, &mem,
			   &full, &busy, &nomem) == 8) {
			if (!strcmp(n, name))
				*refused = (int64_t)(full + nomem);
			else if (!strcmp(n, "rings"))
				*ring_refused = (int64_t)(full + nomem);
		}
	}
	free(out);
	DT_EXPECT_EQ(dac_bpf_unpin(PIN_DIR), 0);
}

/* Runs the kernel skipped in any program (recursion): 0 on a clean run. */
static uint64_t recursion_misses(struct dac_bpf *b)
{
	struct dac_bpf_prog_stats *ps = NULL;
	uint64_t sum = 0;
	size_t n = 0;

	DT_ASSERT_EQ(dac_bpf_read_prog_stats(b, &ps, &n), 0);
	for (size_t i = 0; i < n; i++)
		sum += ps[i].recursion_misses;
	free(ps);
	return sum;
}

DT_TEST_TIMEOUT(maps_past_capacity, 300)
{
	struct dac_bpf_load_opts o = { .no_drmacct = true };
	struct dac_bpf_map_stat rings, inflight, later;
	uint64_t ids[MAX_INST][PRESSURE_JOBS], charged, nomiss;
	struct dac_bpf_proc_exit rec;
	pid_t pid;
	uint64_t refused, ring_refused, made, reclaimed;
	struct dac_bpf_stats st0, st1, st2;
	struct dac_bpf_info info;
	struct inst in[MAX_INST];
	unsigned int ni = 0, named = 0, unnamed = 0, total;
	struct sg_dev dev;
	struct dac_bpf *b;
	int fd, pfd[2];

	if (!sg_is_root())
		DT_SKIP("needs root to load BPF programs");
	sg_need_btf();
	fd = sg_open();
	sg_query(fd, &dev);
	for (unsigned int e = 0; e < dev.num_engines; e++)
		for (unsigned int i = 0; i < dev.eng[e].q.capacity; i++) {
			DT_ASSERT_LT(ni, (unsigned int)MAX_INST);
			in[ni].engine = dev.eng[e].index;
			in[ni].instance = i;
			snprintf(in[ni].name, sizeof(in[ni].name), "%.20s%u", dev.eng[e].q.name, i);
			ni++;
		}
	sg_dev_free(&dev);
	close(fd);
	DT_ASSERT_GE(ni, 2u);
	o.sched_entries = ni - 1;
	b = sg_bpf_load(&o);
	DT_ASSERT_EQ(dac_bpf_info(b, &info), 0);
	DT_ASSERT_TRUE(info.sched);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	inflight = map_stat(b, join_map(&info));
	DT_EXPECT_EQ(inflight.max_entries, ni - 1);
	DT_EXPECT_STREQ(inflight.type, "hash");

	/*
	 * Phase 1: ni x PRESSURE_JOBS live jobs, ni schedulers, ni - 1 entries.
	 * Each phase runs in a child of its own: its exit takes its entries
	 * (sched_usage, procs: ni - 1 of them too) with it, and its PROC_EXIT
	 * record says what it was charged.
	 */
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		fd = sg_open();
		for (unsigned int j = 0; j < PRESSURE_JOBS; j++)
			for (unsigned int i = 0; i < ni; i++)
				ids[i][j] = sg_submit_busy(fd, in[i].engine, in[i].instance,
							   PRESSURE_NS);
		for (unsigned int i = 0; i < ni; i++)
			for (unsigned int j = 0; j < PRESSURE_JOBS; j++) {
				struct drm_simgpu_wait w;

				sg_wait(fd, ids[i][j], &w);
			}
		_exit(0);
	}
	rec = child_record(b, pid);
	charged = rec.jobs;
	total = ni * PRESSURE_JOBS;
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st1), 0);
	inflight = map_stat(b, join_map(&info));
	rings = map_stat(b, "rings");
	made = st1.rings_new - st0.rings_new;
	reclaimed = st1.rings_reclaimed - st0.rings_reclaimed;
	nomiss = recursion_misses(b);
	dt_info("phase 1: %u jobs on %u rings, %u entries each: charged %" PRIu64 ", lost %"
		PRIu64 "; refused inflight %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", rings %" PRIu64
		"/%" PRIu64 "/%" PRIu64 " (full/busy/nomem; %" PRIu64 " made, %" PRIu64
		" reclaimed), orphans %" PRIu64 "; recursion misses %" PRIu64, total, ni, ni - 1,
		charged, st1.sched_lost - st0.sched_lost, inflight.full, inflight.busy,
		inflight.nomem, rings.full, rings.busy, rings.nomem, made, reclaimed,
		st1.sched_orphans - st0.sched_orphans, nomiss);
	/* ni schedulers ran jobs, ni - 1 ring entries: all taken. */
	DT_EXPECT_EQ(made - reclaimed, (uint64_t)(ni - 1));
	/*
	 * More live jobs than entries: some were refused, and only for want
	 * of room. A full preallocated hash says -E2BIG, on every kernel;
	 * read as a 64-bit value on 6.1 it was counted as nomem.
	 */
	refused = inflight.full;
	DT_EXPECT_GT(refused, (uint64_t)0);
	DT_EXPECT_EQ(inflight.busy, (uint64_t)0);
	DT_EXPECT_EQ(inflight.nomem, (uint64_t)0);
	/* Every job is charged or counted lost, never both, never neither. */
	DT_EXPECT_EQ(charged + (st1.sched_lost - st0.sched_lost), (uint64_t)total);
	/* A refused job's completion finds no entry: an orphan, one each. */
	DT_EXPECT_EQ(st1.sched_orphans - st0.sched_orphans, refused);
	/*
	 * A ring is made only for a job that is followed (its in-flight
	 * entry taken) when it runs: the ni - 1 jobs followed first fill the
	 * ring map; a job followed later (queued after an entry came free)
	 * on the last scheduler reclaims an idle ring or is refused (every
	 * ring named by a followed job), so each ring made or refused is a
	 * followed job's: charged, or lost for want of a ring. Whether phase
	 * 1 gets to the last scheduler at all depends on when the first jobs
	 * complete; phase 2 always does. (Until 3eaee5c the run of a job
	 * that was not followed made a ring too, and phase 1 always found the
	 * map full.)
	 */
	DT_EXPECT_EQ(rings.nomem, (uint64_t)0);
	ring_refused = rings.full;
	DT_EXPECT_LE(made, charged + ring_refused);
	DT_EXPECT_LE(ring_refused, st1.sched_lost - st0.sched_lost);
	DT_EXPECT_EQ(rings.busy, (uint64_t)0);
	/* Nothing stays behind: every entry that was made is gone again. */
	if (inflight.entries >= 0)
		DT_EXPECT_EQ(inflight.entries, (int64_t)0);

	/* Phase 2: one job at a time, idle gaps between, every instance. */
	/*
	 * Every ring is charged now (it may have had none of its phase 1 jobs
	 * charged: all refused in-flight entries); one without an entry gets
	 * one by reclaiming an idle ring.
	 */
	for (unsigned int i = 0; i < ni; i++) {
		struct drm_simgpu_wait w[LATER_JOBS];
		uint64_t lo, hi;

		DT_ASSERT_EQ(pipe(pfd), 0);
		pid = fork();
		DT_ASSERT_GE(pid, 0);
		if (pid == 0) {
			close(pfd[0]);
			fd = sg_open();
			for (unsigned int j = 0; j < LATER_JOBS; j++) {
				sg_wait(fd, sg_submit_busy(fd, in[i].engine, in[i].instance,
							   LATER_NS), &w[j]);
				sg_sleep_ns(GAP_NS);
			}
			_exit(write(pfd[1], w, sizeof(w)) == (ssize_t)sizeof(w) ? 0 : 1);
		}
		close(pfd[1]);
		DT_ASSERT_EQ(read(pfd[0], w, sizeof(w)), (ssize_t)sizeof(w));
		close(pfd[0]);
		rec = child_record(b, pid);
		sg_sched_bounds(w, LATER_JOBS, &lo, &hi);
		if (!rec.jobs) {
			dt_info("phase 2, ring %s: none (no ring entry)", in[i].name);
			unnamed++;
			continue;
		}
		named++;
		dt_info("phase 2, ring %s: charged %" PRIu64 " ns for %" PRIu64 " jobs, bounds %"
			PRIu64 "..%" PRIu64 " ns", in[i].name, rec.busy_ns, rec.jobs, lo, hi);
		DT_EXPECT_EQ(rec.jobs, (uint64_t)LATER_JOBS);
		DT_EXPECT_GE(rec.busy_ns, lo);
		DT_EXPECT_LE(rec.busy_ns, hi);
	}
	DT_EXPECT_EQ(named, ni);
	DT_EXPECT_EQ(unnamed, 0u);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st2), 0);
	/* No pressure left: no refusal, no job lost; at least one reclaim. */
	later = map_stat(b, join_map(&info));
	DT_EXPECT_EQ(later.full + later.nomem, refused);
	rings = map_stat(b, "rings");
	DT_EXPECT_EQ(st2.sched_lost, st1.sched_lost);
	DT_EXPECT_EQ(st2.sched_orphans, st1.sched_orphans);
	DT_EXPECT_EQ(rings.full + rings.nomem, ring_refused);
	DT_EXPECT_GE(st2.rings_reclaimed - st1.rings_reclaimed, (uint64_t)1);
	/* still never more rings at once than entries */
	DT_EXPECT_EQ((st2.rings_new - st0.rings_new) - (st2.rings_reclaimed - st0.rings_reclaimed),
		     (uint64_t)(ni - 1));
	{
		/* `drmacct bpf status` tells the same: its lines against the counts */
		int64_t lost, in_refused, ring_lines, rmade, rrecl;

		cli_status(b, join_map(&info), &lost, &in_refused, &ring_lines, &rmade, &rrecl);
		DT_EXPECT_EQ(lost, (int64_t)(st2.sched_lost - st0.sched_lost));
		DT_EXPECT_EQ(in_refused, (int64_t)refused);
		DT_EXPECT_EQ(ring_lines, (int64_t)(rings.full + rings.nomem));
		DT_EXPECT_EQ(rmade, (int64_t)st2.rings_new);
		DT_EXPECT_EQ(rrecl, (int64_t)st2.rings_reclaimed);
	}
	dac_bpf_close(b);
}

DT_MAIN
