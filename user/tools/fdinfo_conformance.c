// SPDX-License-Identifier: MIT
/*
 * fdinfo_conformance - the checks of `drmacct conformance` as a
 * kselftest-style program for kernel CI: TAP 13 on stdout, one test point
 * per check, exit 0 when every check passed (skips and notes allowed), 1
 * when one failed, 4 (KSFT_SKIP) when there is no device to test or its
 * driver prints no usage stats.
 *
 *   fdinfo_conformance [--device=PATH] [--workload=CMD] [--duration=D] [--interval=D]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "duration.h"

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

static int usage(FILE *f, int ret)
{
	fprintf(f, "usage: fdinfo_conformance [--device=PATH] [--workload=CMD] [--duration=D]\n"
		   "                          [--interval=D]\n"
		   "TAP output; exit 0 pass, 1 fail, 4 skip (no device or no usage stats),\n"
		   "2 usage error. Durations: 500ms, 2s, 1m; a bare number is seconds.\n");
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'D' },
		{ "workload", required_argument, NULL, 'W' },
		{ "duration", required_argument, NULL, 'T' },
		{ "interval", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_conf_opts o = { 0 };
	struct dac_conf_run_info info;
	struct dac_conf *c;
	char why[512] = "";
	int ch, ret;

	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		uint64_t *d = NULL;

		switch (ch) {
		case 'D':
			o.device = optarg;
			break;
		case 'W':
			o.workload = optarg;
			break;
		case 'T':
			d = &o.duration_ns;
			break;
		case 'I':
			d = &o.interval_ns;
			break;
		case 'h':
			return usage(stdout, 0);
		default:
			return usage(stderr, 2);
		}
		if (d && (dac_parse_duration(optarg, d) || !*d)) {
			fprintf(stderr, "fdinfo_conformance: '%s' is not a duration (e.g. 500ms, 2s)\n",
				optarg);
			return 2;
		}
	}
	if (optind < argc)
		return usage(stderr, 2);
	c = dac_conf_new();
	if (!c) {
		printf("TAP version 13\n1..0 # SKIP out of memory\n");
		return KSFT_FAIL;
	}
	ret = dac_conf_run(c, &o, &info, why, sizeof(why));
	if (ret) {
		bool skip = dac_conf_run_skip(ret);

		printf("TAP version 13\n");
		if (info.chosen[0])
			printf("# device %s\n", info.chosen);
		if (skip)
			printf("1..0 # SKIP %s\n", why);
		else
			printf("Bail out! %s\n", why);
		dac_conf_free(c);
		return skip ? KSFT_SKIP : KSFT_FAIL;
	}
	if (info.chosen[0])
		printf("# device %s\n", info.chosen);
	printf("# device %s (usage stats: %s): %zu reads of %zu files, %zu of the workload, %zu on other devices\n",
	       info.device, dac_stats_name(info.stats), dac_conf_nreads(c), dac_conf_nfiles(c),
	       info.workload_files, info.other_dev_files);
	dac_conf_print_tap(c, stdout);
	ret = dac_conf_failures(c) ? KSFT_FAIL : KSFT_PASS;
	printf("# %s\n", ret ? "FAIL" : "PASS");
	dac_conf_free(c);
	return ret;
}
