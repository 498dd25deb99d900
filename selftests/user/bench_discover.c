// SPDX-License-Identifier: MIT
/*
 * bench_discover.c - cost of the /proc discovery walk per fd.
 *
 * Forks NPROC processes that each hold NFD extra fds (dups of /dev/null and
 * memfds), then times, interleaved over several rounds:
 *   floor:    the least any /proc walker can do - getdents64 on /proc, and
 *             per process openat(PID/fd) + getdents64 + fstatat per fd;
 *   discover: dac_discover_run() over the same /proc.
 * Prints ns per fd of each (median of the rounds) and their ratio; the aim is
 * discover within 1.5x of the floor. There are no DRM fds on a host without
 * a GPU; the cost measured is the walk itself.
 *
 * Usage: bench_discover [NPROC [NFD [ROUNDS]]]   (defaults 1000 20 7)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "discover.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char dbuf[1 << 16], fbuf[1 << 15];

/* The floor: returns the number of fd entries stat()ed. */
static uint64_t floor_walk(void)
{
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t fds = 0;
	ssize_t n, off;

	if (proc < 0)
		return 0;
	while ((n = getdents64(proc, dbuf, sizeof(dbuf))) > 0) {
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(dbuf + off);
			char path[300];
			ssize_t m, o2;
			int dfd;

			off += de->d_reclen;
			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "%s/fd", de->d_name);
			dfd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd < 0)
				continue;
			while ((m = getdents64(dfd, fbuf, sizeof(fbuf))) > 0) {
				for (o2 = 0; o2 < m;) {
					struct dirent64 *fe = (struct dirent64 *)(fbuf + o2);
					struct stat st;

					o2 += fe->d_reclen;
					if (fe->d_name[0] == '.')
						continue;
					if (!fstatat(dfd, fe->d_name, &st, 0))
						fds++;
				}
			}
			close(dfd);
		}
	}
	close(proc);
	return fds;
}

static int count_cb(const struct dac_fd_info *fdi, void *arg)
{
	(void)fdi;
	(*(uint64_t *)arg)++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static long arg(int argc, char **argv, int i, long def, long max)
{
	char *end;
	long v;

	if (argc <= i)
		return def;
	v = strtol(argv[i], &end, 10);
	if (*end || v < 1 || v > max) {
		fprintf(stderr, "bench_discover: bad argument '%s' (1..%ld)\n", argv[i], max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long nproc = arg(argc, argv, 1, 1000, 100000);
	long nfd = arg(argc, argv, 2, 20, 10000);
	long rounds = arg(argc, argv, 3, 7, 1000);
	uint64_t *tf, *td, fds_floor = 0, fds_disc = 0, drm = 0;
	struct dac_discover_stats st;
	struct dac_discover *d;
	struct rlimit rl;
	pid_t *kids;
	int ready[2], hold[2], rc = 1;
	long i, started = 0;
	double f, g;
	char c;

	kids = calloc((size_t)nproc, sizeof(*kids));
	tf = calloc((size_t)rounds, sizeof(*tf));
	td = calloc((size_t)rounds, sizeof(*td));
	if (!kids || !tf || !td || pipe2(ready, O_CLOEXEC) || pipe2(hold, O_CLOEXEC)) {
		perror("bench_discover: setup");
		return 1;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)nfd + 16) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	for (i = 0; i < nproc; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("bench_discover: fork");
			goto out;
		}
		if (pid == 0) {
			int base = open("/dev/null", O_RDONLY | O_CLOEXEC);

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(ready[0]);
			close(hold[1]);
			for (long k = 0; k < nfd; k++) {
				int fd = k % 4 == 3 ? memfd_create("bench", MFD_CLOEXEC) : dup(base);

				if (fd < 0)
					_exit(1);
			}
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			/* Hold the fds until the parent closes the pipe or dies. */
			while (read(hold[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		kids[started++] = pid;
	}
	close(ready[1]);
	ready[1] = -1;
	for (i = 0; i < nproc; i++) {
		if (read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "bench_discover: a child failed to set up\n");
			goto out;
		}
	}

	d = dac_discover_new(NULL);
	if (!d) {
		perror("bench_discover: dac_discover_new");
		goto out;
	}
	/* warm the dentry caches once for both */
	floor_walk();
	dac_discover_run(d, count_cb, &drm, &st);
	for (i = 0; i < rounds; i++) {
		uint64_t t0 = now_ns(), n;

		n = floor_walk();
		tf[i] = now_ns() - t0;
		fds_floor = n;
		t0 = now_ns();
		drm = 0;
		if (dac_discover_run(d, count_cb, &drm, &st)) {
			fprintf(stderr, "bench_discover: walk failed\n");
			dac_discover_free(d);
			goto out;
		}
		td[i] = now_ns() - t0;
		fds_disc = st.fds;
	}
	dac_discover_free(d);
	qsort(tf, (size_t)rounds, sizeof(*tf), cmp_u64);
	qsort(td, (size_t)rounds, sizeof(*td), cmp_u64);
	f = (double)tf[rounds / 2] / (double)(fds_floor ? fds_floor : 1);
	g = (double)td[rounds / 2] / (double)(fds_disc ? fds_disc : 1);
	printf("bench_discover: %ld processes x %ld fds held; /proc has %llu fds in %llu "
	       "processes; %ld rounds (median)\n", nproc, nfd, (unsigned long long)fds_disc,
	       (unsigned long long)st.procs, rounds);
	printf("  floor (getdents64 + fstatat): %8.1f ns/fd  (%.2f ms per walk)\n", f,
	       (double)tf[rounds / 2] / 1e6);
	printf("  dac_discover_run():           %8.1f ns/fd  (%.2f ms per walk, %llu DRM fds)\n",
	       g, (double)td[rounds / 2] / 1e6, (unsigned long long)drm);
	printf("  ratio: %.3f (aim <= 1.5): %s\n", g / f, g / f <= 1.5 ? "within aim" : "OVER AIM");
	rc = 0;
out:
	close(hold[1]);		/* releases every child */
	for (i = 0; i < started; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	free(tf);
	free(td);
	return rc;
}
