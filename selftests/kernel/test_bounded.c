// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu keeps nothing per job for ever: an unprivileged client that
 * submits without end must not grow kernel memory without bound.
 *
 * - Results of finished jobs are kept for the last SIMGPU_MAX_DONE_RESULTS
 *   of a file only (counted at each SUBMIT, so those that finished since
 *   the last one come on top): older ones are forgotten (WAIT says ENOENT),
 *   newer ones and every unfinished one stay collectable.
 * - Many SUBMIT+WAIT rounds on one file leave the live object counts in
 *   debugfs simgpu/objects (results, jobs) flat: bounded by the limit, not
 *   by the rounds. DRMACCT_BOUNDED_ROUNDS sets the rounds (default 20000;
 *   the 1,000,000 takes about an hour under TCG).
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

#define OBJECTS "/sys/kernel/debug/simgpu/objects"

/* Live results and jobs of every simgpu device right now. */
static void objects(long *results, long *jobs)
{
	char *buf = sg_read_file(OBJECTS, NULL);

	DT_ASSERT_TRUE(buf != NULL);
	DT_ASSERT_EQ(sscanf(buf, "results %ld\njobs %ld", results, jobs), 2);
	free(buf);
}

DT_TEST_TIMEOUT(old_results_are_forgotten_new_ones_kept, 300)
{
	const unsigned int extra = 100, n = SIMGPU_MAX_DONE_RESULTS + extra;
	const struct sg_engine *e;
	struct drm_simgpu_wait w;
	uint64_t first = 0, last = 0, job = 0;
	struct sg_dev dev;
	int fd;

	if (!sg_is_root())
		DT_SKIP("needs root for debugfs");
	fd = sg_open();
	sg_query(fd, &dev);
	e = sg_engine_simple(&dev);
	DT_ASSERT_TRUE(e != NULL);
	for (unsigned int i = 0; i < n; i++) {
		job = sg_submit_busy(fd, e->index, 0, 1000);
		if (!first)
			first = job;
		last = job;
	}
	sg_wait(fd, last, &w);		/* in order: every job has finished */
	/* The next SUBMIT counts them: the oldest go, the newest stay. */
	sg_wait(fd, sg_submit_busy(fd, e->index, 0, 1000), &w);
	last++;
	DT_EXPECT_ERRNO(sg_wait_raw(fd, first, 0, &w), ENOENT);
	DT_EXPECT_ERRNO(sg_wait_raw(fd, first + extra - 2, 0, &w), ENOENT);
	/* That SUBMIT kept the 4096 before it; its own job came on top. */
	DT_EXPECT_ERRNO(sg_wait_raw(fd, last - SIMGPU_MAX_DONE_RESULTS - 1, 0, &w), ENOENT);
	DT_EXPECT_EQ(sg_wait_raw(fd, last - SIMGPU_MAX_DONE_RESULTS, 0, &w), 0);
	DT_EXPECT_EQ(w.status, (uint32_t)SIMGPU_JOB_DONE);
	DT_EXPECT_EQ(sg_wait_raw(fd, last, 0, &w), 0);
	sg_dev_free(&dev);
	close(fd);
}

DT_TEST_TIMEOUT(submit_wait_rounds_keep_objects_flat, 3600)
{
	const char *env = getenv("DRMACCT_BOUNDED_ROUNDS");
	unsigned long rounds = env ? strtoul(env, NULL, 10) : 20000;
	long r0, j0, r1, j1, rmax = 0;
	const struct sg_engine *e;
	struct drm_simgpu_wait w;
	struct sg_dev dev;
	uint64_t t0;
	int fd;

	if (!sg_is_root())
		DT_SKIP("needs root for debugfs");
	DT_ASSERT_GT(rounds, 0ul);
	objects(&r0, &j0);
	fd = sg_open();
	sg_query(fd, &dev);
	e = sg_engine_simple(&dev);
	DT_ASSERT_TRUE(e != NULL);
	t0 = sg_now_ns();
	for (unsigned long i = 0; i < rounds; i++) {
		sg_wait(fd, sg_submit_busy(fd, e->index, 0, 1000), &w);
		if (!(i % 4096)) {
			long r, j;

			objects(&r, &j);
			rmax = r > rmax ? r : rmax;
		}
	}
	objects(&r1, &j1);
	dt_info("%lu SUBMIT+WAIT in %.1f s: live results %ld before, %ld after (at most %ld "
		"seen), jobs %ld before, %ld after", rounds, (double)(sg_now_ns() - t0) / 1e9,
		r0, r1, rmax, j0, j1);
	/*
	 * This file's results: the limit and the one that finished after the
	 * last SUBMIT counted, whatever the rounds.
	 */
	DT_EXPECT_LE(r1 - r0, (long)SIMGPU_MAX_DONE_RESULTS + 1);
	DT_EXPECT_LE(rmax - r0, (long)SIMGPU_MAX_DONE_RESULTS + 1);
	if (rounds > SIMGPU_MAX_DONE_RESULTS)
		DT_EXPECT_GE(r1 - r0, (long)SIMGPU_MAX_DONE_RESULTS);
	sg_dev_free(&dev);
	close(fd);
	/* Closing the file frees them all; jobs were freed as they ended. */
	for (int i = 0; i < 100; i++) {
		objects(&r1, &j1);
		if (r1 == r0 && j1 == j0)
			break;
		sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
	DT_EXPECT_EQ(r1, r0);
	DT_EXPECT_EQ(j1, j0);
}

DT_MAIN
