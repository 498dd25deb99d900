// SPDX-License-Identifier: GPL-2.0
/*
 * bench_helper — per-job cost of the drmacct helper, measured in the kernel
 * by drmacct_bench.ko (debugfs drmacct_bench/run), all from one run: the
 * begin+end pair a driver's completion path pays, the whole per-job cost
 * (init+begin+end+fini), the floor of any correct accounting (two clock
 * reads and two atomic adds), a v3d-style seqcount write pair, a bare
 * atomic add/sub pair and an empty loop. Prints the numbers and the ratios
 * pair/floor (the figure to keep low), seqcount/floor and job/pair.
 *
 * usage: bench_helper [ITERATIONS]   (default 200000; exit 0 ok, 1 error)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sgtest.h"

#define RUN "/sys/kernel/debug/drmacct_bench/run"

/* The "KEY=value" of @res, in ns per iteration; false when absent. */
static bool value_of(const char *res, const char *key, double *v)
{
	char pat[40];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(res, pat);
	return p && sscanf(p + strlen(pat), "%lf", v) == 1;
}

static void ratio(const char *what, double a, double b)
{
	if (b > 0)
		printf("bench_helper: %s=%.2f\n", what, a / b);
	else
		printf("bench_helper: %s=n/a (below timer resolution)\n", what);
}

int main(int argc, char **argv)
{
	static const char *const keys[] = {
		"pair_ns", "job_ns", "floor_ns", "seqcount_ns", "atomic_ns", "empty_ns",
	};
	double v[sizeof(keys) / sizeof(keys[0])];
	unsigned long long iters = 200000, n;
	char num[32], *res;
	int ret;

	if (argc > 2 || (argc == 2 && (sscanf(argv[1], "%llu", &iters) != 1 || !iters))) {
		fprintf(stderr, "usage: %s [ITERATIONS>0]\n", argv[0]);
		return 2;
	}
	if (access(RUN, W_OK) && sg_sh("modprobe drmacct_bench")) {
		fprintf(stderr, "bench_helper: modprobe drmacct_bench failed\n");
		return 1;
	}
	snprintf(num, sizeof(num), "%llu", iters);
	ret = sg_write_file(RUN, num);
	if (ret) {
		fprintf(stderr, "bench_helper: writing %s to %s: %s\n", num, RUN, strerror(-ret));
		return 1;
	}
	res = sg_read_file(RUN, NULL);
	if (!res) {
		fprintf(stderr, "bench_helper: reading %s: %s\n", RUN, strerror(errno));
		return 1;
	}
	if (sscanf(res, "iterations=%llu", &n) != 1 || n != iters) {
		fprintf(stderr, "bench_helper: unexpected result '%s'\n", res);
		free(res);
		return 1;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!value_of(res, keys[i], &v[i])) {
			fprintf(stderr, "bench_helper: no %s in '%s'\n", keys[i], res);
			free(res);
			return 1;
		}
	}
	free(res);
	printf("bench_helper: iterations=%llu\n", n);
	printf("bench_helper: pair_ns=%.1f job_ns=%.1f floor_ns=%.1f seqcount_ns=%.1f "
	       "atomic_ns=%.1f empty_ns=%.1f (per job)\n", v[0], v[1], v[2], v[3], v[4], v[5]);
	ratio("pair/floor", v[0], v[2]);
	ratio("seqcount/floor", v[3], v[2]);
	ratio("job/pair", v[1], v[0]);
	sg_sh("rmmod drmacct_bench 2>/dev/null");
	return 0;
}
