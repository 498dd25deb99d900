// SPDX-License-Identifier: GPL-2.0
/*
 * Hangs, resets and resubmission: a job submitted with SIMGPU_SUBMIT_HANG
 * never completes; the scheduler's timeout (job_timeout_ms, 1000 ms by
 * default) resets the engine instance. The rule (drmacct_job_reset()): every
 * nanosecond a job held the engine is charged to its client, the hung part
 * too; the jobs queued behind it run once (resubmitted by drm_sched before
 * 6.17; on 6.17+ simgpu returns NO_HANG after the reset and they carry on
 * without, see drmacct_compat_sched_recover()).
 *
 * Ground truth is WAIT: each job's start and end are the very timestamps the
 * helper accounted with, so fdinfo's busy time over the jobs is exactly the
 * sum of their (end - start), the hung one's ended by the reset. A job that
 * is merely longer than the timeout is no hang: nothing is reset and it
 * completes normally. The runner fails the run on any WARNING, so "no WARN
 * on resubmission" is checked by every boot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

DT_FIXTURE(rs) {
	int fd;
	struct sg_dev dev;
	const struct sg_engine *e;
};

DT_SETUP(rs)
{
	self->fd = sg_open();
	sg_query(self->fd, &self->dev);
	self->e = sg_engine_simple(&self->dev);
	DT_ASSERT_TRUE(self->e != NULL);
}

DT_TEARDOWN(rs)
{
	sg_dev_free(&self->dev);
	close(self->fd);
}

/* WAIT for a job whatever its status (sg_wait() wants it done). */
static void wait_job(int fd, uint64_t job, struct drm_simgpu_wait *w)
{
	if (sg_wait_raw(fd, job, 60 * NSEC_PER_SEC, w))
		DT_FAIL("WAIT job %" PRIu64 ": %s", job, strerror(errno));
	DT_ASSERT_LE(w->start_ns, w->end_ns);
}

static uint64_t submit(int fd, unsigned int engine, uint64_t ns, uint32_t flags)
{
	struct drm_simgpu_submit s;

	memset(&s, 0, sizeof(s));
	s.engine = engine;
	s.instance = 0;
	s.op = SIMGPU_OP_BUSY;
	s.busy_ns = ns;
	s.flags = flags;
	return sg_submit(fd, &s);
}

/*
 * A, then a hung B, then C and D queued behind it, all on one instance:
 * B ends with TIMEDOUT after the timeout, C and D run after the reset, once
 * each, and fdinfo's busy time over all four is exactly Σ (end - start).
 */
DT_TEST_F_TIMEOUT(rs, hung_job_is_reset_and_charged, 60)
{
	const unsigned int e = self->e->index;
	uint64_t jobs[4], b0, b1, truth = 0, cyc = 0, c0, c1;
	static const char *const names[] = { "A", "B (hangs)", "C", "D" };
	struct drm_simgpu_wait w[4];
	struct sg_fdinfo fi;

	sg_fdinfo_read(self->fd, &fi);
	b0 = sg_fdinfo_engine_ns(&fi, self->e->q.name);
	c0 = sg_fdinfo_cycles(&fi, self->e->q.name);
	sg_fdinfo_free(&fi);

	jobs[0] = submit(self->fd, e, 50 * NSEC_PER_MSEC, 0);
	jobs[1] = submit(self->fd, e, 10 * NSEC_PER_MSEC, SIMGPU_SUBMIT_HANG);
	jobs[2] = submit(self->fd, e, 40 * NSEC_PER_MSEC, 0);
	jobs[3] = submit(self->fd, e, 30 * NSEC_PER_MSEC, 0);
	for (int i = 0; i < 4; i++) {
		wait_job(self->fd, jobs[i], &w[i]);
		dt_info("%-10s status %u start %llu end %llu (%.1f ms)", names[i],
			w[i].status, (unsigned long long)w[i].start_ns,
			(unsigned long long)w[i].end_ns,
			(double)(w[i].end_ns - w[i].start_ns) / 1e6);
		truth += w[i].end_ns - w[i].start_ns;
		cyc += w[i].cycles;
	}
	DT_EXPECT_EQ(w[0].status, (uint32_t)SIMGPU_JOB_DONE);
	DT_EXPECT_EQ(w[1].status, (uint32_t)SIMGPU_JOB_TIMEDOUT);
	DT_EXPECT_EQ(w[2].status, (uint32_t)SIMGPU_JOB_DONE);
	DT_EXPECT_EQ(w[3].status, (uint32_t)SIMGPU_JOB_DONE);
	/* B held the engine until the timeout; its time counts. */
	DT_EXPECT_GE(w[1].end_ns - w[1].start_ns, 900 * NSEC_PER_MSEC);
	DT_EXPECT_GE(w[1].start_ns, w[0].end_ns);
	/* C and D ran after the reset, in order, once each and in full. */
	DT_EXPECT_GE(w[2].start_ns, w[1].end_ns);
	DT_EXPECT_GE(w[3].start_ns, w[2].end_ns);
	DT_EXPECT_GE(w[2].end_ns - w[2].start_ns, 40 * NSEC_PER_MSEC);
	DT_EXPECT_GE(w[3].end_ns - w[3].start_ns, 30 * NSEC_PER_MSEC);

	sg_fdinfo_read(self->fd, &fi);
	b1 = sg_fdinfo_engine_ns(&fi, self->e->q.name);
	c1 = sg_fdinfo_cycles(&fi, self->e->q.name);
	sg_fdinfo_free(&fi);
	dt_info("fdinfo busy %" PRIu64 " ns, Σ WAIT (end - start) %" PRIu64 " ns", b1 - b0, truth);
	DT_EXPECT_EQ(b1 - b0, truth);
	DT_EXPECT_EQ(c1 - c0, cyc);
}

/* A job longer than the timeout is no hang: it completes, nothing reset. */
DT_TEST_F_TIMEOUT(rs, long_job_is_not_a_hang, 60)
{
	struct drm_simgpu_wait w[2];
	uint64_t a, b;

	a = submit(self->fd, self->e->index, 1800 * NSEC_PER_MSEC, 0);
	b = submit(self->fd, self->e->index, 20 * NSEC_PER_MSEC, 0);
	sg_wait(self->fd, a, &w[0]);
	sg_wait(self->fd, b, &w[1]);
	DT_EXPECT_EQ(w[0].status, (uint32_t)SIMGPU_JOB_DONE);
	DT_EXPECT_EQ(w[1].status, (uint32_t)SIMGPU_JOB_DONE);
	DT_EXPECT_GE(w[0].end_ns - w[0].start_ns, 1800 * NSEC_PER_MSEC);
	DT_EXPECT_GE(w[1].start_ns, w[0].end_ns);
}

/* A hang on one instance does not touch another client's jobs elsewhere. */
DT_TEST_F_TIMEOUT(rs, hang_is_contained, 60)
{
	const struct sg_engine *other = NULL;
	struct drm_simgpu_wait w, wh;
	uint64_t hung, t0;
	int fd2 = sg_open();

	for (unsigned int i = 0; i < self->dev.num_engines; i++)
		if (self->dev.eng[i].index != self->e->index)
			other = &self->dev.eng[i];
	DT_ASSERT_TRUE(other != NULL);
	hung = submit(self->fd, self->e->index, 1000, SIMGPU_SUBMIT_HANG);
	t0 = sg_now_ns();
	/* Meanwhile another file's jobs on another engine run at full speed. */
	for (int i = 0; i < 5; i++) {
		sg_wait(fd2, submit(fd2, other->index, 20 * NSEC_PER_MSEC, 0), &w);
		DT_EXPECT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
	}
	DT_EXPECT_LT(sg_now_ns() - t0, 800 * NSEC_PER_MSEC);
	wait_job(self->fd, hung, &wh);
	DT_EXPECT_EQ(wh.status, (uint32_t)SIMGPU_JOB_TIMEDOUT);
	/* and the hung instance works again after its reset */
	sg_wait(self->fd, submit(self->fd, self->e->index, 10 * NSEC_PER_MSEC, 0), &w);
	DT_EXPECT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
	close(fd2);
}

/* HANG is for OP_BUSY only; an unknown flag is refused. */
DT_TEST_F(rs, hang_flag_checked)
{
	struct drm_simgpu_submit s;
	uint32_t h = sg_bo_create(self->fd, 4096);

	memset(&s, 0, sizeof(s));
	s.engine = self->e->index;
	s.op = SIMGPU_OP_FILL;
	s.dst_handle = h;
	s.size = 4096;
	s.flags = SIMGPU_SUBMIT_HANG;
	DT_EXPECT_ERRNO(ioctl(self->fd, DRM_IOCTL_SIMGPU_SUBMIT, &s), EINVAL);
	memset(&s, 0, sizeof(s));
	s.engine = self->e->index;
	s.op = SIMGPU_OP_BUSY;
	s.busy_ns = 1000;
	s.flags = 1u << 9;
	DT_EXPECT_ERRNO(ioctl(self->fd, DRM_IOCTL_SIMGPU_SUBMIT, &s), EINVAL);
}

DT_MAIN
