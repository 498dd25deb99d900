// SPDX-License-Identifier: GPL-2.0
/*
 * Implicit sync through the objects' reservations (dma_resv), the way GL
 * drivers rely on it: a job waits for the jobs before it that wrote what it
 * reads, or that used what it writes, on any engine, without an explicit
 * wait; the CPU waits with GEM_WAIT before it reads through mmap.
 *
 * Each round delays a FILL of A on one engine behind a busy job there, then
 * COPYs A to B on another, idle engine, then GEM_WAITs on B and reads it:
 * without implicit sync the COPY would run at once and copy A's old bytes,
 * and the read would see B's. 1000 rounds, each with a new byte.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define SZ	(64 * 1024)

static uint64_t submit_mem(int fd, unsigned int engine, unsigned int op, uint32_t dst,
			   uint32_t src, uint8_t value)
{
	struct drm_simgpu_submit s;

	memset(&s, 0, sizeof(s));
	s.engine = engine;
	s.instance = 0;
	s.op = op;
	s.dst_handle = dst;
	s.src_handle = src;
	s.size = SZ;
	s.value = op == SIMGPU_OP_FILL ? value : 0;
	return sg_submit(fd, &s);
}

static int gem_wait(int fd, uint32_t h, uint32_t flags, uint64_t deadline)
{
	struct drm_simgpu_gem_wait gw = {
		.handle = h, .flags = flags, .timeout_ns = deadline,
	};

	return ioctl(fd, DRM_IOCTL_SIMGPU_GEM_WAIT, &gw);
}

static const unsigned char *map(int fd, uint32_t h)
{
	struct drm_simgpu_gem_info gi = { .handle = h };
	void *p;

	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_GEM_INFO, &gi), 0);
	p = mmap(NULL, SZ, PROT_READ, MAP_SHARED, fd, (off_t)gi.mmap_offset);
	DT_ASSERT_TRUE(p != MAP_FAILED);
	return p;
}

DT_TEST_TIMEOUT(fill_then_copy_across_engines_is_ordered, 300)
{
	const unsigned int rounds = 1000;
	unsigned int e1, e2, bad_rounds = 0, ordered = 0;
	const unsigned char *pb;
	struct sg_dev dev;
	uint32_t a, b;
	int fd = sg_open();

	sg_query(fd, &dev);
	DT_ASSERT_GE(dev.num_engines, 2u);
	e1 = 0;
	e2 = 1;
	a = sg_bo_create(fd, SZ);
	b = sg_bo_create(fd, SZ);
	pb = map(fd, b);
	for (unsigned int r = 0; r < rounds; r++) {
		uint8_t v = (uint8_t)(r * 7 + 1);
		struct drm_simgpu_wait wf, wc;
		uint64_t fill, copy;
		size_t i;

		/* The FILL waits behind 2 ms of busy work on its engine. */
		sg_submit_busy(fd, e1, 0, 2 * NSEC_PER_MSEC);
		fill = submit_mem(fd, e1, SIMGPU_OP_FILL, a, 0, v);
		copy = submit_mem(fd, e2, SIMGPU_OP_COPY, b, a, 0);
		DT_ASSERT_EQ(gem_wait(fd, b, 0, sg_now_ns() + 10 * NSEC_PER_SEC), 0);
		for (i = 0; i < SZ && pb[i] == v; i++)
			;
		if (i < SZ)
			bad_rounds++;
		sg_wait(fd, fill, &wf);
		sg_wait(fd, copy, &wc);
		ordered += wc.start_ns >= wf.end_ns;
	}
	dt_info("%u rounds: %u read wrong bytes, the COPY started after the FILL ended in %u",
		rounds, bad_rounds, ordered);
	DT_EXPECT_EQ(bad_rounds, 0u);
	DT_EXPECT_EQ(ordered, rounds);
	munmap((void *)pb, SZ);
	sg_dev_free(&dev);
	close(fd);
}

/*
 * GEM_WAIT: polling says EBUSY while a job writes the object (for a read)
 * and while one reads it (for a write); a deadline in the past is ETIME;
 * both succeed once the jobs are done.
 */
DT_TEST(gem_wait_follows_the_jobs)
{
	struct drm_simgpu_wait w;
	uint32_t a, b;
	uint64_t busy, copy;
	int fd = sg_open();

	a = sg_bo_create(fd, SZ);
	b = sg_bo_create(fd, SZ);
	busy = sg_submit_busy(fd, 0, 0, 300 * NSEC_PER_MSEC);
	/* Behind the busy job: reads a, writes b. */
	copy = submit_mem(fd, 0, SIMGPU_OP_COPY, b, a, 0);
	DT_EXPECT_ERRNO(gem_wait(fd, b, 0, 0), EBUSY);
	DT_EXPECT_ERRNO(gem_wait(fd, b, 0, 1), ETIME);
	/* a is only read: a CPU read need not wait, a CPU write must */
	DT_EXPECT_EQ(gem_wait(fd, a, 0, 0), 0);
	DT_EXPECT_ERRNO(gem_wait(fd, a, SIMGPU_GEM_WAIT_WRITE, 0), EBUSY);
	DT_EXPECT_EQ(gem_wait(fd, b, SIMGPU_GEM_WAIT_WRITE, sg_now_ns() + 10 * NSEC_PER_SEC), 0);
	sg_wait(fd, copy, &w);
	sg_wait(fd, busy, &w);
	DT_EXPECT_EQ(gem_wait(fd, a, SIMGPU_GEM_WAIT_WRITE, 0), 0);
	DT_EXPECT_EQ(gem_wait(fd, b, 0, 0), 0);
	close(fd);
}

DT_MAIN
