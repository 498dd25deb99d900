// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF build chain works in the guest: a CO-RE skeleton linked statically,
 * tp_btf attached to gpu_sched's tracepoints (Debian's module BTF) and to
 * drmacct's own (module BTF added by pahole at build time). The counts and
 * the busy time it sees must match the jobs this test submits.
 *
 * The scheduler programs of the set this kernel's tracefs shows are loaded
 * (6.1 names, or the 6.17 renames), and the TAP line says which. On the
 * 6.17 set the queue program also reads the job's DRM client id through
 * the typed tracepoint argument: every job must carry this file's
 * drm-client-id.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attach_probe.skel.h"
#include "dtest.h"
#include "sgtest.h"

enum { Q, RUN, DONE, ABEGIN, AEND, NR };	/* order of the BPF program's enum */

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stdout, fmt, ap);
}

static uint64_t count(struct attach_probe_bpf *skel, uint32_t which)
{
	uint64_t v = 0;

	DT_ASSERT_EQ(bpf_map__lookup_elem(skel->maps.counts, &which, sizeof(which),
					  &v, sizeof(v), 0), 0);
	return v;
}

DT_TEST_TIMEOUT(tp_btf_counts_match_submitted_jobs, 120)
{
	const unsigned int njobs = 12;
	const uint64_t job_ns = 5 * NSEC_PER_MSEC;
	struct attach_probe_bpf *skel;
	struct sg_dev dev;
	struct {
		uint64_t jobs, busy_ns, cycles;
	} b = { 0 };
	uint64_t truth_ns = 0, truth_cycles = 0, id, queued = 0;
	int fd, err, ev;

	if (access("/sys/kernel/btf/drmacct", R_OK))
		DT_SKIP("drmacct has no module BTF in this guest");
	libbpf_set_print(libbpf_quiet);
	fd = sg_open();
	sg_query(fd, &dev);
	id = sg_client_id(fd);
	DT_ASSERT_NE(id, (uint64_t)0);

	ev = sg_sched_events();
	if (!ev)
		DT_SKIP("no gpu_scheduler events in tracefs (gpu_sched not loaded)");
	dt_label("%s set", ev == 617 ? "6.17" : "6.1");
	skel = attach_probe_bpf__open();
	DT_ASSERT_TRUE(skel != NULL);
	skel->rodata->filter_tgid = getpid();
	bpf_program__set_autoload(skel->progs.on_sched_job, ev == 61);
	bpf_program__set_autoload(skel->progs.on_run_job, ev == 61);
	bpf_program__set_autoload(skel->progs.on_process_job, ev == 61);
	bpf_program__set_autoload(skel->progs.on_job_queue, ev == 617);
	bpf_program__set_autoload(skel->progs.on_job_run, ev == 617);
	bpf_program__set_autoload(skel->progs.on_job_done, ev == 617);
	err = attach_probe_bpf__load(skel);
	DT_ASSERT_EQ(err, 0);
	err = attach_probe_bpf__attach(skel);
	DT_ASSERT_EQ(err, 0);

	const struct sg_engine *e = sg_engine_simple(&dev);

	DT_ASSERT_TRUE(e != NULL);
	for (unsigned int i = 0; i < njobs; i++) {
		struct drm_simgpu_wait w;
		uint64_t job = sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY, job_ns);

		sg_wait(fd, job, &w);
		truth_ns += w.end_ns - w.start_ns;
		truth_cycles += w.cycles;
	}
	/* Every job has completed (WAIT returned), so every event has fired. */
	DT_EXPECT_EQ(count(skel, Q), (uint64_t)njobs);
	DT_EXPECT_EQ(count(skel, RUN), (uint64_t)njobs);
	DT_EXPECT_EQ(count(skel, DONE), (uint64_t)njobs);
	DT_EXPECT_EQ(count(skel, ABEGIN), (uint64_t)njobs);
	DT_EXPECT_EQ(count(skel, AEND), (uint64_t)njobs);
	DT_ASSERT_EQ(bpf_map__lookup_elem(skel->maps.per_client, &id, sizeof(id),
					  &b, sizeof(b), 0), 0);
	DT_EXPECT_EQ(b.jobs, (uint64_t)njobs);
	/* drmacct's job-end busy time is the driver's own start..end. */
	DT_EXPECT_EQ(b.busy_ns, truth_ns);
	DT_EXPECT_EQ(b.cycles, truth_cycles);
	/* 6.17: the client id the scheduler fence carries is this file's. */
	err = bpf_map__lookup_elem(skel->maps.queued_by_client, &id, sizeof(id), &queued,
				   sizeof(queued), 0);
	if (ev == 617) {
		DT_EXPECT_EQ(err, 0);
		DT_EXPECT_EQ(queued, (uint64_t)njobs);
		dt_info("6.17 set: %" PRIu64 " jobs queued under drm-client-id %" PRIu64, queued, id);
	} else {
		DT_EXPECT_NE(err, 0);
	}
	attach_probe_bpf__destroy(skel);
	sg_dev_free(&dev);
	close(fd);
}

DT_MAIN
