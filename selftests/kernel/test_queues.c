// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu with queues=per_client: every open file has its own
 * drm_gpu_scheduler per engine instance, created at open and torn down at
 * close. What the teardown must get right:
 *   1. a close with jobs still queued: they all run (the close waits
 *      until every one was handed to the engine, not until it ends: a
 *      close never waits for the hardware), their times are charged to
 *      the file (fdinfo == Σ WAIT), and once they end nothing is left
 *      (debugfs simgpu/objects: the file's schedulers went after its last
 *      job);
 *   2. a process killed with jobs queued (SIGKILL while it sleeps, so
 *      the close is its exit's): its exit does not wait for them, its
 *      file's teardown drops them (only those the engine could have
 *      started run) and leaves nothing;
 *   3. a hung job of one file ahead of another file's job on the same
 *      instance: one reset ends the hung job (TIMEDOUT), the other file's
 *      job then completes normally;
 *   4. the parameter is read-only and rejects unknown values.
 * The runner checks the kernel log (no WARN from drm_sched_fini()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

/* Wait up to 10 s for no live job; returns the last count. */
static long jobs_drained(void)
{
	long n = -1;

	for (int i = 0; i < 1000 && (n = sg_simgpu_live("jobs ")) != 0; i++)
		usleep(10000);
	return n;
}

/*
 * Wait up to 10 s for no live result: a closed file's results go with
 * the file, after its last job and its schedulers (a work item).
 */
static long results_drained(void)
{
	long n = -1;

	for (int i = 0; i < 1000 && (n = sg_simgpu_live("results ")) != 0; i++)
		usleep(10000);
	return n;
}

DT_FIXTURE(q) {
	bool loaded;
	struct sg_dev dev;
	const struct sg_engine *e;
};

DT_SETUP(q)
{
	int fd;

	if (!sg_is_root())
		DT_SKIP("needs root to reload simgpu");
	DT_ASSERT_EQ(sg_simgpu_reload("queues=per_client"), 0);
	self->loaded = true;
	fd = sg_open();
	sg_query(fd, &self->dev);
	close(fd);
	self->e = sg_engine_simple(&self->dev);
	DT_ASSERT_TRUE(self->e != NULL);
}

DT_TEARDOWN(q)
{
	sg_dev_free(&self->dev);
	if (self->loaded && sg_simgpu_reload(""))
		dt_info("could not reload simgpu with its defaults");
}

DT_TEST_F_TIMEOUT(q, close_runs_queued_jobs, 60)
{
	uint64_t ids[12], sum = 0, busy;
	struct sg_fdinfo fi;
	int fd = sg_open();

	/* 12 jobs of 5 ms: 4 on the instance, 8 in the file's scheduler. */
	for (int i = 0; i < 12; i++)
		ids[i] = sg_submit_busy(fd, self->e->index, 0, 5 * NSEC_PER_MSEC);
	for (int i = 0; i < 12; i++) {
		struct drm_simgpu_wait w;

		sg_wait(fd, ids[i], &w);
		DT_EXPECT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
		sum += w.end_ns - w.start_ns;
	}
	sg_fdinfo_read(fd, &fi);
	busy = sg_fdinfo_engine_ns(&fi, self->e->q.name);
	sg_fdinfo_free(&fi);
	DT_EXPECT_EQ(busy, sum);

	/*
	 * Now close with 12 more queued, of 20 ms: 4 fit on the engine, the
	 * other 8 wait in the file's scheduler. A child keeps the file open
	 * (its close is not the last) to collect their results afterwards.
	 */
	struct close_report {
		uint32_t status[12];
		uint64_t run_ns[12];
	} rep;
	uint64_t t0, t1;
	int pfd[2], go[2], st;
	pid_t pid;
	char c = 0;

	for (int i = 0; i < 12; i++)
		ids[i] = sg_submit_busy(fd, self->e->index, 0, 20 * NSEC_PER_MSEC);
	DT_ASSERT_EQ(pipe(pfd), 0);
	DT_ASSERT_EQ(pipe(go), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		memset(&rep, 0, sizeof(rep));
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < 12; i++) {
			struct drm_simgpu_wait w;

			if (sg_wait_raw(fd, ids[i], 10 * NSEC_PER_SEC, &w))
				_exit(2);
			rep.status[i] = w.status;
			rep.run_ns[i] = w.run_ns;
		}
		_exit(write(pfd[1], &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 3);
	}
	/*
	 * Every close of a descriptor waits for the queue (a flush), also
	 * this one, which is not the file's last (the child's is).
	 */
	t0 = sg_now_ns();
	close(fd);
	t1 = sg_now_ns();
	DT_ASSERT_EQ(write(go[1], &c, 1), 1);
	DT_ASSERT_EQ(read(pfd[0], &rep, sizeof(rep)), (ssize_t)sizeof(rep));
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	dt_info("close took %.1f ms; last job handed to the engine %.1f ms after it began",
		(t1 - t0) / 1e6, ((double)rep.run_ns[11] - (double)t0) / 1e6);
	for (int i = 0; i < 12; i++) {
		DT_EXPECT_EQ(rep.status[i], (uint32_t)SIMGPU_JOB_DONE);
		/* every queued job was on its way to the engine when close returned */
		DT_EXPECT_LE(rep.run_ns[i], t1);
	}
	/*
	 * ... and the close did wait: the 12th can only be handed over once
	 * 8 others ended (160 ms after the first started). Wrong only if
	 * submitting the 12 took more than those 160 ms.
	 */
	DT_EXPECT_GT(rep.run_ns[11], t0);
	/* The child's exit was the real close: nothing is left once they end. */
	DT_EXPECT_EQ(jobs_drained(), 0);
	DT_EXPECT_EQ(results_drained(), 0);
	close(pfd[0]);
	close(pfd[1]);
	close(go[0]);
	close(go[1]);
}

DT_TEST_F_TIMEOUT(q, killed_process_drops_queued_jobs, 60)
{
	const uint64_t job_ns = 250 * NSEC_PER_MSEC;
	const long njobs = 40;
	long ran0 = sg_simgpu_live("ran "), dropped0 = sg_simgpu_live("dropped ");
	long ran, dropped, could;
	uint64_t t0, t1;
	int pfd[2], st;
	pid_t pid;
	char c;

	DT_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (!pid) {
		int fd = sg_open_raw();

		close(pfd[0]);
		if (fd < 0)
			_exit(2);
		for (long i = 0; i < njobs; i++)
			sg_submit_busy(fd, self->e->index, 0, job_ns);
		if (write(pfd[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	t0 = sg_now_ns();	/* before the child's first job could start */
	close(pfd[1]);
	DT_ASSERT_EQ(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	DT_ASSERT_EQ(kill(pid, SIGKILL), 0);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	t1 = sg_now_ns();	/* the file's teardown is behind us */
	DT_EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	DT_EXPECT_EQ(jobs_drained(), 0);
	DT_EXPECT_EQ(results_drained(), 0);
	ran = sg_simgpu_live("ran ") - ran0;
	dropped = sg_simgpu_live("dropped ") - dropped0;
	/*
	 * Until the teardown, the engine holds at most SIMGPU_HW_QUEUE_DEPTH
	 * (4) of the jobs and starts a new one only when one ended (one per
	 * 250 ms): no more can have run than that. An exit that waited for
	 * the queue to be handed over would run all 40 and drop none.
	 */
	could = 4 + (long)((t1 - t0) / job_ns) + 1;
	dt_info("killed with %ld queued: %ld ran, %ld dropped, %.3f s from the submits to the reap",
		njobs, ran, dropped, (double)(t1 - t0) / 1e9);
	DT_EXPECT_EQ(ran + dropped, njobs);
	DT_EXPECT_LE(ran, could);
	DT_EXPECT_GT(dropped, 0);
}

DT_TEST_F_TIMEOUT(q, hang_of_one_file_ends_for_the_next, 60)
{
	struct drm_simgpu_submit s = {
		.engine = self->e->index, .instance = 0, .op = SIMGPU_OP_BUSY,
		.busy_ns = 1000, .flags = SIMGPU_SUBMIT_HANG,
	};
	struct drm_simgpu_wait wa, wb;
	int a = sg_open(), b = sg_open();
	uint64_t ja, jb;

	ja = sg_submit(a, &s);
	/*
	 * Each file's scheduler hands its jobs over on its own: B's job goes
	 * in only once A's hung job runs (A's fdinfo shows busy time).
	 */
	for (int i = 0; i < 10000; i++) {
		struct sg_fdinfo fi;
		uint64_t busy;

		sg_fdinfo_read(a, &fi);
		busy = sg_fdinfo_engine_ns(&fi, self->e->q.name);
		sg_fdinfo_free(&fi);
		if (busy)
			break;
		usleep(1000);
	}
	jb = sg_submit_busy(b, self->e->index, 0, 2 * NSEC_PER_MSEC);
	sg_wait(b, jb, &wb);
	/* Not sg_wait(): it wants SIMGPU_JOB_DONE. */
	DT_ASSERT_EQ(sg_wait_raw(a, ja, 10 * NSEC_PER_SEC, &wa), 0);
	dt_info("hung job: status %u, [%" PRIu64 ", %" PRIu64 "]; next file's: status %u, [%"
		PRIu64 ", %" PRIu64 "]", wa.status, (uint64_t)wa.start_ns, (uint64_t)wa.end_ns,
		wb.status, (uint64_t)wb.start_ns, (uint64_t)wb.end_ns);
	DT_EXPECT_EQ(wa.status, (uint32_t)SIMGPU_JOB_TIMEDOUT);
	DT_EXPECT_EQ(wb.status, (uint32_t)SIMGPU_JOB_DONE);
	/* The other file's job ran after the reset, on the same instance. */
	DT_EXPECT_GE(wb.start_ns, wa.end_ns);
	DT_EXPECT_GE(wb.end_ns - wb.start_ns, 2 * NSEC_PER_MSEC);
	close(a);
	close(b);
	DT_EXPECT_EQ(jobs_drained(), 0);
}

DT_TEST_F(q, parameter_checked)
{
	char *v = sg_read_file("/sys/module/simgpu/parameters/queues", NULL);
	struct stat st;

	DT_ASSERT_TRUE(v != NULL);
	DT_EXPECT_EQ(strcmp(v, "per_client\n"), 0);
	free(v);
	DT_ASSERT_EQ(stat("/sys/module/simgpu/parameters/queues", &st), 0);
	DT_EXPECT_EQ(st.st_mode & 0777, 0444u);
	DT_EXPECT_NE(sg_simgpu_reload("queues=nonsense 2>/dev/null"), 0);
	DT_EXPECT_EQ(sg_simgpu_reload("queues=shared"), 0);
	v = sg_read_file("/sys/module/simgpu/parameters/queues", NULL);
	DT_ASSERT_TRUE(v != NULL);
	DT_EXPECT_EQ(strcmp(v, "shared\n"), 0);
	free(v);
}

DT_MAIN
