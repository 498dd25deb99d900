// SPDX-License-Identifier: GPL-2.0
/*
 * The gpu_scheduler maps of the BPF accounting (bpf/drmacct/sched.bpf.c) past
 * their capacity: nothing is evicted, every refused insert is counted and
 * the jobs concerned counted lost, and once the pressure is gone the rings
 * that have an entry charge exactly again.
 *
 * The collection is loaded with every scheduler map cut to ni - 1 entries
 * (ni: simgpu's engine instances, one drm_gpu_scheduler each), so:
 *   - phase 1: PRESSURE_JOBS long jobs on every instance, all submitted
 *     before waiting: more live jobs than in-flight entries (refused,
 *     counted in the map's "full" -- on 6.1 too, whose map functions
 *     return int (map_err() in bpf/drmacct/drmacct.h) -- and as lost) and
 *     more rings than ring
 *     entries (the scheduler that ran last to be named gets none: each of
 *     its runs is refused, its followed jobs are lost at completion);
 *   - phase 2: one job at a time, with idle gaps between, on every
 *     instance: each ring that has an entry is charged, per job, within
 *     simgpu's stamps (sg_sched_bounds(), no allowance). A ring left
 *     counting a lost job as active -- the LRU design's failure -- would be
 *     charged the idle gaps as well and exceed the bound by milliseconds.
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

/* This process's sched_usage entry on ring @name: busy and jobs (0 when none). */
/*
 * The in-flight map of the programs loaded: the tp_btf set and the plain
 * 6.17 programs join jobs by {fence context, seqno}, the plain 6.1 ones by
 * fence address.
 */
static const char *join_map(const struct dac_bpf_info *info)
{
	return info->sched_btf || info->sched_617 ? "inflight617" : "inflight";
}

static bool ring_sums(struct dac_bpf *b, const char *name, uint64_t *busy, uint64_t *jobs)
{
	struct dac_bpf_sched *s = NULL;
	bool found = false;
	size_t n = 0;

	*busy = *jobs = 0;
	DT_ASSERT_EQ(dac_bpf_read_sched(b, &s, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (s[i].tgid != (uint32_t)getpid() || strcmp(s[i].ring, name))
			continue;
		*busy += s[i].busy_ns;
		*jobs += s[i].jobs;
		found = true;
	}
	free(s);
	return found;
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
 * the scheduler jobs lost, and the refused inserts, full + nomem, of map
 * @name and of "rings" (-1 when a line is missing).
 */
static void cli_status(struct dac_bpf *b, const char *name, int64_t *lost, int64_t *refused,
		       int64_t *ring_refused)
{
	char *out, *line, *save = NULL, n[32], t[32], e[32];
	unsigned long long mx, mem, full, busy, nomem, l;

	*lost = *refused = *ring_refused = -1;
	dac_bpf_unpin(PIN_DIR);	/* a run killed before its unpin */
	DT_ASSERT_EQ(dac_bpf_pin(b, PIN_DIR), 0);
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf status -d " PIN_DIR " >/tmp/pressure.out 2>&1"), 0);
	out = sg_read_file("/tmp/pressure.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("bpf status:\n%s", out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "  scheduler jobs lost: %llu", &l) == 1)
			*lost = (int64_t)l;
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
	uint64_t ids[MAX_INST][PRESSURE_JOBS], charged = 0, busy, jobs, nomiss;
	uint64_t refused, ring_refused;
	struct dac_bpf_stats st0, st1, st2;
	struct dac_bpf_info info;
	struct inst in[MAX_INST];
	unsigned int ni = 0, named = 0, unnamed = 0, total;
	struct sg_dev dev;
	struct dac_bpf *b;
	int fd;

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
	DT_ASSERT_GE(ni, 2u);
	o.sched_entries = ni - 1;
	b = sg_bpf_load(&o);
	DT_ASSERT_EQ(dac_bpf_info(b, &info), 0);
	DT_ASSERT_TRUE(info.sched);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	inflight = map_stat(b, join_map(&info));
	DT_EXPECT_EQ(inflight.max_entries, ni - 1);
	DT_EXPECT_STREQ(inflight.type, "hash");

	/* Phase 1: ni x PRESSURE_JOBS live jobs, ni schedulers, ni - 1 entries. */
	for (unsigned int j = 0; j < PRESSURE_JOBS; j++)
		for (unsigned int i = 0; i < ni; i++)
			ids[i][j] = sg_submit_busy(fd, in[i].engine, in[i].instance, PRESSURE_NS);
	for (unsigned int i = 0; i < ni; i++)
		for (unsigned int j = 0; j < PRESSURE_JOBS; j++) {
			struct drm_simgpu_wait w;

			sg_wait(fd, ids[i][j], &w);
		}
	total = ni * PRESSURE_JOBS;
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st1), 0);
	inflight = map_stat(b, join_map(&info));
	rings = map_stat(b, "rings");
	for (unsigned int i = 0; i < ni; i++)
		if (ring_sums(b, in[i].name, &busy, &jobs))
			charged += jobs;
	nomiss = recursion_misses(b);
	dt_info("phase 1: %u jobs on %u rings, %u entries each: charged %" PRIu64 ", lost %"
		PRIu64 "; refused inflight %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", rings %" PRIu64
		"/%" PRIu64 "/%" PRIu64 " (full/busy/nomem; %" PRId64 " entries), orphans %"
		PRIu64 "; recursion misses %" PRIu64, total, ni, ni - 1, charged,
		st1.sched_lost - st0.sched_lost, inflight.full, inflight.busy, inflight.nomem,
		rings.full, rings.busy, rings.nomem, rings.entries,
		st1.sched_orphans - st0.sched_orphans, nomiss);
	/* ni schedulers ran jobs, ni - 1 ring entries: all taken. */
	DT_EXPECT_EQ(rings.entries, (int64_t)(ni - 1));
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
	 * The ring-less scheduler is refused a ring at each of its runs, all
	 * PRESSURE_JOBS of them (a run the kernel skipped would be one fewer;
	 * there were none when nomiss is 0).
	 */
	DT_EXPECT_EQ(rings.nomem, (uint64_t)0);
	ring_refused = rings.full;
	if (!nomiss)
		DT_EXPECT_EQ(ring_refused, (uint64_t)PRESSURE_JOBS);
	DT_EXPECT_GE(ring_refused, (uint64_t)1);
	DT_EXPECT_LE(ring_refused, (uint64_t)PRESSURE_JOBS);
	DT_EXPECT_EQ(rings.busy, (uint64_t)0);
	/* Nothing stays behind: every entry that was made is gone again. */
	if (inflight.entries >= 0)
		DT_EXPECT_EQ(inflight.entries, (int64_t)0);

	/* Phase 2: one job at a time, idle gaps between, every instance. */
	/*
	 * A ring with an entry is charged now (it may have had none of its
	 * phase 1 jobs charged: all refused in-flight entries); exactly one,
	 * the ring-less scheduler's, is not.
	 */
	for (unsigned int i = 0; i < ni; i++) {
		struct drm_simgpu_wait w[LATER_JOBS];
		uint64_t busy0, jobs0, lo, hi;

		ring_sums(b, in[i].name, &busy0, &jobs0);
		for (unsigned int j = 0; j < LATER_JOBS; j++) {
			sg_wait(fd, sg_submit_busy(fd, in[i].engine, in[i].instance, LATER_NS), &w[j]);
			sg_sleep_ns(GAP_NS);
		}
		sg_sched_bounds(w, LATER_JOBS, &lo, &hi);
		if (!ring_sums(b, in[i].name, &busy, &jobs)) {
			dt_info("phase 2, ring %s: none (no ring entry)", in[i].name);
			unnamed++;
			continue;
		}
		named++;
		dt_info("phase 2, ring %s: charged %" PRIu64 " ns for %" PRIu64 " jobs, bounds %"
			PRIu64 "..%" PRIu64 " ns", in[i].name, busy - busy0, jobs - jobs0, lo, hi);
		DT_EXPECT_EQ(jobs - jobs0, (uint64_t)LATER_JOBS);
		DT_EXPECT_GE(busy - busy0, lo);
		DT_EXPECT_LE(busy - busy0, hi);
	}
	DT_EXPECT_EQ(named, ni - 1);
	DT_EXPECT_EQ(unnamed, 1u);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st2), 0);
	/* No pressure left: no refusal but the ring-less scheduler's LATER_JOBS runs. */
	later = map_stat(b, join_map(&info));
	DT_EXPECT_EQ(later.full + later.nomem, refused);
	rings = map_stat(b, "rings");
	DT_EXPECT_EQ(st2.sched_lost - st1.sched_lost, (uint64_t)LATER_JOBS);
	DT_EXPECT_EQ(st2.sched_orphans, st1.sched_orphans);
	if (!recursion_misses(b))
		DT_EXPECT_EQ(rings.full + rings.nomem, (uint64_t)PRESSURE_JOBS + LATER_JOBS);
	{
		/* `drmacct bpf status` tells the same: its lines against the counts */
		int64_t lost, in_refused, ring_lines;

		cli_status(b, join_map(&info), &lost, &in_refused,
			   &ring_lines);
		DT_EXPECT_EQ(lost, (int64_t)(st2.sched_lost - st0.sched_lost));
		DT_EXPECT_EQ(in_refused, (int64_t)refused);
		DT_EXPECT_EQ(ring_lines, (int64_t)(rings.full + rings.nomem));
	}
	close(fd);
	dac_bpf_close(b);
}

DT_MAIN
