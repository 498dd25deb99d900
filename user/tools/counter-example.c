// SPDX-License-Identifier: MIT
/*
 * counter-example.c - how to use libdrmacct's KD_KHR_perfcounter-style
 * counter API (include/drmacct/counters.h): list the counters, activate the ones
 * asked for (all by default), sample, print raw and scaled values.
 *
 *   counter-example [-i SEC] [-n COUNT] [--proc-root DIR] [--pid PID]
 *                   [--partial] [NAME...]
 *
 * Exit status: 0, 1 on an API error (printed with its error code), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "counters.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: counter-example [-i SEC] [-n COUNT] [--proc-root DIR] [--pid PID]\n"
		   "                       [--partial] [COUNTER NAME...]\n");
}

static int api_error(const char *what, const struct dac_pc *pc)
{
	int e = pc ? dac_pc_get_error(pc) : errno;

	fprintf(stderr, "counter-example: %s: %s (%s)\n", what, strerror(e),
		e == EACCES ? "KD_EACCES" : e == EINVAL ? "KD_EINVAL" : "other");
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "pid", required_argument, NULL, 'P' },
		{ "partial", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_pc_opts o = { 0 };
	double interval = 1.0;
	long count = 1;
	struct dac_pc *pc;
	int c, n, na = 0, rc = 1;
	int *idx = NULL;
	int64_t *val = NULL;
	char *end;

	while ((c = getopt_long(argc, argv, "i:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			interval = strtod(optarg, &end);
			if (*end || !(interval > 0 && interval <= 3600)) {
				usage(stderr);
				return 2;
			}
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || count < 1) {
				usage(stderr);
				return 2;
			}
			break;
		case 'R':
			o.proc_root = optarg;
			break;
		case 'P':
			o.pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || o.pid <= 0) {
				usage(stderr);
				return 2;
			}
			break;
		case 'A':
			o.allow_partial = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}

	pc = dac_pc_open(&o);
	if (!pc)
		return api_error("open", NULL);
	/* kdGetNumberOfCountersKHR */
	n = dac_pc_get_number(pc);
	if (n < 0) {
		rc = api_error("get number of counters", pc);
		goto out;
	}
	idx = calloc((size_t)n + 1, sizeof(*idx));
	val = calloc((size_t)n + 1, sizeof(*val));
	if (!idx || !val) {
		fprintf(stderr, "counter-example: out of memory\n");
		goto out;
	}
	printf("%d counters\n", n);
	for (int i = 0; i < n; i++) {
		/* kdGetCounterInformationKHR */
		const struct dac_pc_info *in = dac_pc_get_info(pc, i);
		bool want = optind >= argc;

		if (!in) {
			rc = api_error("get counter information", pc);
			goto out;
		}
		for (int a = optind; a < argc; a++)
			want |= !strcmp(argv[a], in->name);
		char max[32];

		if (in->max == DAC_PC_INFINITE)
			snprintf(max, sizeof(max), "infinite");
		else
			snprintf(max, sizeof(max), "%lld", (long long)in->max);
		printf("  [%d] %-36s %s, min %lld, max %s, scale %g%s\n", i, in->name,
		       in->vendor, (long long)in->min, max, (double)in->default_scale,
		       want ? "" : " (not active)");
		if (want)
			idx[na++] = i;
	}
	/* kdActivateCountersKHR, kdStartSamplingKHR */
	if (dac_pc_activate(pc, idx, na)) {
		rc = api_error("activate", pc);
		goto out;
	}
	if (dac_pc_start(pc)) {
		rc = api_error("start sampling", pc);
		goto out;
	}
	for (long s = 0; s < count; s++) {
		double frac = interval - (double)(time_t)interval;
		struct timespec ts = { .tv_sec = (time_t)interval, .tv_nsec = (long)(frac * 1e9) };

		nanosleep(&ts, NULL);
		/* kdGetCounterValuesKHR */
		if (dac_pc_get_values(pc, idx, na, val)) {
			rc = api_error("get counter values", pc);
			goto out;
		}
		printf("sample %ld:\n", s + 1);
		for (int i = 0; i < na; i++) {
			const struct dac_pc_info *in = dac_pc_get_info(pc, idx[i]);

			if (in->default_scale > 0)
				printf("  %-36s %lld (%.2f of 100)\n", in->name, (long long)val[i],
				       (double)val[i] * in->default_scale);
			else
				printf("  %-36s %lld\n", in->name, (long long)val[i]);
		}
	}
	/* kdStopSamplingKHR */
	if (dac_pc_stop(pc)) {
		rc = api_error("stop sampling", pc);
		goto out;
	}
	rc = 0;
out:
	free(idx);
	free(val);
	dac_pc_close(pc);
	return rc;
}
