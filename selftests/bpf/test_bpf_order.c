// SPDX-License-Identifier: GPL-2.0
/*
 * A job's end traced before its begin (bpf/drmacct/helper.bpf.c, struct
 * dac_usage_val in bpf/drmacct_bpf.h).
 *
 * The helper fires drmacct_job_begin after its write section, so a
 * driver that ends the job on another CPU, or from an interrupt that comes
 * between the write and the tracepoint, can have the end traced first. The
 * programs keep running jobs as signed sums that a begin and an end move
 * in opposite directions, so the order does not matter. Were it taken
 * for "the begin was not seen" (what the programs did before: an end with
 * no job counted running leaves the count alone), the begin that comes
 * after would leave the job running until its client closes: running 1,
 * and busy time growing by the in-flight part for ever.
 *
 * The order is made, not waited for: drmacct.ko's trace_end_first
 * parameter holds every begin event back and fires it right after the end
 * of that run, with its own arguments (kernel/drmacct/drmacct_core.c). So
 * here every job's end reaches the programs before its begin, for jobs one
 * at a time and for several running at once on a multi-instance engine.
 * What must hold, for the tp_btf and the plain tracepoint programs:
 *   - while a job runs, its begin not yet traced, the programs count
 *     nothing running (the held event is real, not a no-op);
 *   - afterwards the raw usage entry has running == 0 and start_sum == 0
 *     exactly, and the reader reports 0 running;
 *   - busy time, cycles and jobs equal simgpu's own stamps exactly, and
 *     busy time equals the client's fdinfo (drm-engine-<name>);
 *   - no end was taken for a job begun before the programs ran
 *     (job_end_unseen unchanged).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "../../bpf/drmacct_bpf.h"
#include "dtest.h"
#include "sgtest.h"

#define ONE_BY_ONE	20	/* jobs waited for one at a time */
#define TOGETHER	24	/* jobs queued at once on the multi-instance engine */
#define LONG_NS		(200 * 1000 * 1000ull)	/* the job watched while it runs */

static void end_first(bool on)
{
	DT_ASSERT_EQ(sg_end_first(on), 0);
}

/* The raw entry of (@client, @engine): running and start_sum as stored. */
static void raw_usage(struct dac_bpf *b, uint64_t client, uint32_t engine,
		      struct dac_usage_val *v)
{
	struct dac_usage_key k = { .client_id = client, .engine = engine };

	DT_ASSERT_EQ(bpf_map_lookup_elem(b->fd[M_USAGE], &k, v), 0);
}

/* The knob goes back off however a test ends (the teardown runs after a failure). */
DT_FIXTURE(order) {
	int unused;
};

DT_SETUP(order)
{
	sg_need_end_first();
}

DT_TEARDOWN(order)
{
	sg_end_first(false);
}

static void run(enum dac_bpf_attach attach)
{
	struct dac_bpf_load_opts o = { .attach = attach, .no_sched = true };
	const struct sg_engine *one, *multi;
	struct dac_bpf_stats st0, st;
	struct dac_bpf_info info;
	struct sg_truth t1 = { 0 }, tm = { 0 };
	struct drm_simgpu_wait w;
	struct dac_bpf_usage u;
	struct dac_usage_val v;
	struct sg_fdinfo fi;
	struct dac_bpf *b;
	struct sg_dev dev;
	uint64_t ids[TOGETHER], client, now, job;
	int fd;

	b = sg_bpf_load(&o);
	DT_ASSERT_EQ(dac_bpf_info(b, &info), 0);
	DT_ASSERT_EQ(info.drmacct_btf, attach == DAC_BPF_ATTACH_BTF);
	fd = sg_open();
	sg_query(fd, &dev);
	one = sg_engine_simple(&dev);
	multi = sg_engine_multi(&dev);
	DT_ASSERT_TRUE(one && multi && multi->q.capacity > 1);
	client = sg_client_id(fd);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st0), 0);
	end_first(true);

	/* One long job: while it runs, its begin is held back. */
	job = sg_submit_busy(fd, one->index, SIMGPU_INSTANCE_ANY, LONG_NS);
	sg_sleep_ns(LONG_NS / 4);
	{
		int err = dac_bpf_lookup_usage(b, client, one->index, &now, &u);

		/* no entry yet (tp_btf makes it at the first event) or none running */
		DT_EXPECT_TRUE(err == -ENOENT || (!err && u.running == 0));
	}
	sg_wait(fd, job, &w);
	sg_truth_add(&t1, &w);
	for (int i = 1; i < ONE_BY_ONE; i++) {
		job = sg_submit_busy(fd, one->index, SIMGPU_INSTANCE_ANY,
				     (100 + 37 * i) * 1000ull);
		sg_wait(fd, job, &w);
		sg_truth_add(&t1, &w);
	}
	/* Several at once, ending in their own order on the instances. */
	for (int i = 0; i < TOGETHER; i++)
		ids[i] = sg_submit_busy(fd, multi->index, SIMGPU_INSTANCE_ANY,
					(300 + 211 * (i % 7)) * 1000ull);
	for (int i = 0; i < TOGETHER; i++) {
		sg_wait(fd, ids[i], &w);
		sg_truth_add(&tm, &w);
	}
	end_first(false);

	sg_fdinfo_read(fd, &fi);
	for (int e = 0; e < 2; e++) {
		const struct sg_engine *eng = e ? multi : one;
		const struct sg_truth *t = e ? &tm : &t1;

		raw_usage(b, client, eng->index, &v);
		DT_ASSERT_EQ(dac_bpf_lookup_usage(b, client, eng->index, &now, &u), 0);
		dt_info("%s: bpf %" PRIu64 " ns %" PRIu64 " jobs, running %" PRId64
			" start_sum %" PRId64 "; truth %" PRIu64 " ns %" PRIu64 " jobs",
			eng->q.name, u.busy_ns, u.jobs, (int64_t)v.running,
			(int64_t)v.start_sum, t->acct_ns, t->jobs);
		DT_EXPECT_EQ(v.running, (int64_t)0);
		DT_EXPECT_EQ(v.start_sum, (int64_t)0);
		DT_EXPECT_EQ(u.running, 0u);
		DT_EXPECT_EQ(u.busy_ns, t->acct_ns);
		DT_EXPECT_EQ(u.cycles, t->cycles);
		DT_EXPECT_EQ(u.jobs, t->jobs);
		DT_EXPECT_EQ(u.busy_ns, sg_fdinfo_engine_ns(&fi, eng->q.name));
	}
	sg_fdinfo_free(&fi);
	DT_ASSERT_EQ(dac_bpf_read_stats(b, &st), 0);
	/* what would tell a lost event from a miscount, printed every run */
	dt_info("inserts refused full/busy/nomem %" PRIu64 "/%" PRIu64 "/%" PRIu64
		", nested begin/end %" PRIu64 "/%" PRIu64 ", unseen ends %" PRIu64,
		st.full, st.busy, st.nomem, st.nested_job_begin, st.nested_job_end,
		st.job_end_unseen - st0.job_end_unseen);
	/* nothing here can fill a map: an insert refused is an event dropped */
	DT_EXPECT_EQ(st.full + st.busy + st.nomem, st0.full + st0.busy + st0.nomem);
	DT_EXPECT_EQ(st.job_end_unseen, st0.job_end_unseen);
	sg_dev_free(&dev);
	close(fd);
	dac_bpf_close(b);
}

DT_TEST_F_TIMEOUT(order, end_before_begin_tp_btf, 300)
{
	run(DAC_BPF_ATTACH_BTF);
}

DT_TEST_F_TIMEOUT(order, end_before_begin_tracepoint, 300)
{
	run(DAC_BPF_ATTACH_TRACEPOINT);
}

DT_MAIN
