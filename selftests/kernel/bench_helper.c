// SPDX-License-Identifier: GPL-2.0
/*
 * bench_helper — per-job cost of the drmacct helper, measured in the kernel
 * by drmacct_bench.ko (debugfs drmacct_bench/run): the helper's
 * init+begin+end+fini per job vs a bare atomic add/sub pair vs an empty
 * loop, all from one run. Prints the three numbers and the ratios
 * helper/atomic and helper/empty.
 *
 * usage: bench_helper [ITERATIONS]   (default 200000; exit 0 ok, 1 error)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sgtest.h"

#define RUN "/sys/kernel/debug/drmacct_bench/run"

int main(int argc, char **argv)
{
	unsigned long long iters = 200000, n;
	double helper, atomic, empty;
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
	if (sscanf(res, "iterations=%llu helper_ns=%lf atomic_ns=%lf empty_ns=%lf", &n, &helper,
		   &atomic, &empty) != 4 || n != iters) {
		fprintf(stderr, "bench_helper: unexpected result '%s'\n", res);
		free(res);
		return 1;
	}
	free(res);
	printf("bench_helper: iterations=%llu\n", n);
	printf("bench_helper: helper_ns=%.1f atomic_ns=%.1f empty_ns=%.1f (per job)\n",
	       helper, atomic, empty);
	if (atomic > 0)
		printf("bench_helper: helper/atomic=%.2f\n", helper / atomic);
	else
		printf("bench_helper: helper/atomic=n/a (atomic below timer resolution)\n");
	if (empty > 0)
		printf("bench_helper: helper/empty=%.2f\n", helper / empty);
	else
		printf("bench_helper: helper/empty=n/a (empty loop below timer resolution)\n");
	sg_sh("rmmod drmacct_bench 2>/dev/null");
	return 0;
}
