// SPDX-License-Identifier: GPL-2.0
/*
 * bench_fdinfo — cost of reading a simgpu file's fdinfo (the DRM usage keys
 * printed by drmacct) vs a pipe's fdinfo (the VFS lines only), in the same
 * run, interleaved in blocks so both see the same machine state. The simgpu
 * file has used every engine and holds buffers, so every key is printed.
 * One read = open + read to EOF + close of /proc/self/fdinfo/<fd>, as a
 * monitoring tool does it.
 *
 * usage: bench_fdinfo [READS]   (default 5000 per kind; exit 0 ok, 1 error)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sgtest.h"

static int read_once(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;
	int total = 0;

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, len)) > 0)
		total += (int)r;
	close(fd);
	return r < 0 ? -1 : total;
}

/* Runs every engine once and creates a few buffers, so all keys are non-zero. */
static int prepare(int fd)
{
	struct drm_simgpu_query_device q;

	memset(&q, 0, sizeof(q));
	if (ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &q))
		return -1;
	for (unsigned int e = 0; e < q.num_engines; e++) {
		struct drm_simgpu_submit s;
		struct drm_simgpu_wait w;

		memset(&s, 0, sizeof(s));
		s.engine = e;
		s.instance = SIMGPU_INSTANCE_ANY;
		s.op = SIMGPU_OP_BUSY;
		s.busy_ns = 1000000;
		if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, &s) ||
		    sg_wait_raw(fd, s.job_id, 10 * NSEC_PER_SEC, &w))
			return -1;
	}
	for (int i = 0; i < 4; i++) {
		struct drm_simgpu_gem_create c;

		memset(&c, 0, sizeof(c));
		c.size = 65536;
		if (ioctl(fd, DRM_IOCTL_SIMGPU_GEM_CREATE, &c))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long reads = 5000;
	char gpath[64], ppath[64], buf[8192];
	uint64_t tg = 0, tp = 0;
	int gfd, p[2], glen = 0, plen = 0;
	const unsigned long block = 500;

	if (argc > 2 || (argc == 2 && (sscanf(argv[1], "%lu", &reads) != 1 || !reads))) {
		fprintf(stderr, "usage: %s [READS>0]\n", argv[0]);
		return 2;
	}
	gfd = sg_open_raw();
	if (gfd < 0) {
		fprintf(stderr, "bench_fdinfo: no simgpu device: %s\n", strerror(errno));
		return 1;
	}
	if (prepare(gfd)) {
		fprintf(stderr, "bench_fdinfo: preparing the client failed: %s\n", strerror(errno));
		return 1;
	}
	if (pipe(p)) {
		fprintf(stderr, "bench_fdinfo: pipe: %s\n", strerror(errno));
		return 1;
	}
	snprintf(gpath, sizeof(gpath), "/proc/self/fdinfo/%d", gfd);
	snprintf(ppath, sizeof(ppath), "/proc/self/fdinfo/%d", p[0]);

	/* warm up both paths */
	for (int i = 0; i < 100; i++) {
		glen = read_once(gpath, buf, sizeof(buf));
		plen = read_once(ppath, buf, sizeof(buf));
	}
	if (glen <= 0 || plen <= 0) {
		fprintf(stderr, "bench_fdinfo: reading fdinfo failed: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned long done = 0; done < reads; done += block) {
		unsigned long n = reads - done < block ? reads - done : block;
		uint64_t t0 = sg_now_ns();

		for (unsigned long i = 0; i < n; i++)
			if (read_once(gpath, buf, sizeof(buf)) <= 0)
				return 1;
		uint64_t t1 = sg_now_ns();

		for (unsigned long i = 0; i < n; i++)
			if (read_once(ppath, buf, sizeof(buf)) <= 0)
				return 1;
		tp += sg_now_ns() - t1;
		tg += t1 - t0;
	}
	printf("bench_fdinfo: reads=%lu per kind, simgpu fdinfo %d bytes, pipe fdinfo %d bytes\n",
	       reads, glen, plen);
	printf("bench_fdinfo: simgpu_ns=%.0f pipe_ns=%.0f (per open+read+close)\n",
	       (double)tg / (double)reads, (double)tp / (double)reads);
	printf("bench_fdinfo: simgpu/pipe=%.2f\n", (double)tg / (double)tp);
	close(p[0]);
	close(p[1]);
	close(gfd);
	return 0;
}
