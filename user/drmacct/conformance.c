// SPDX-License-Identifier: MIT
/*
 * conformance.c - `drmacct conformance`: a driver-agnostic test of a
 * driver's usage stats (see Documentation/conformance.rst). The checks are
 * in user/lib/conformance.c, the collection in conformance_live.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "conformance.h"
#include "json.h"
#include "output.h"

static const char *const CMD = "conformance";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct conformance [OPTIONS]\n\n"
		"Test a driver's DRM usage stats against the spec: opens clients on the\n"
		"device itself (open, dup, fork, reopen, close) and reads their fdinfo\n"
		"while they stay idle; with --workload runs CMD (sh -c) and watches the\n"
		"clients it opens. Every check names the spec rule it enforces and, when\n"
		"it fails, the evidence.\n\n"
		"Options:\n"
		"      --device=PATH      render or accel node (default: the first\n"
		"                         /dev/dri/renderD*, else /dev/accel/accel*,\n"
		"                         whose driver prints usage stats)\n"
		"      --workload=CMD     command to run and watch\n"
		"      --duration=DUR     idle reads last DUR (default 1s; 1ms..24h);\n"
		"                         with --workload, stop the workload after DUR\n"
		"                         (default: wait for it)\n"
		"  -i, --interval=DUR     time between reads (default 50ms; 1ms..1h;\n"
		"                         500ms, 2s, 1m; a bare number is seconds)\n"
		"  -j, --json             machine-readable output\n"
		"      --tap              TAP 13, one test point per check\n"
		"  -v, --verbose          every check's rule and evidence\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 every check passed (skips and notes allowed), 1 a check\n"
		"failed or the test could not run, 2 usage error, 4 nothing to test (no\n"
		"device, or its driver prints no usage stats). --json and --tap print a\n"
		"document in every case. See drmacct(1).\n");
}

static const char *stats_what(int stats)
{
	return stats == DAC_STATS_FULL ? "usage stats" :
	       stats == DAC_STATS_CORE ? "core keys only: no engine or memory key" :
					 "no usage stats";
}

/* What every document starts with: which device, what it prints, the result. */
static void json_head(struct dac_json *j, const struct dac_conf_run_info *info,
		      const char *result)
{
	dac_json_str(j, "schema", "drmacct-conformance/1");
	dac_json_str(j, "result", result);
	if (info->device[0])
		dac_json_str(j, "device", info->device);
	else
		dac_json_null(j, "device");
	if (info->chosen[0])
		dac_json_str(j, "chosen", info->chosen);
	if (info->stats >= 0)
		dac_json_str(j, "usage_stats", dac_stats_name(info->stats));
	else
		dac_json_null(j, "usage_stats");
}

/*
 * The run could not test anything: @skip (nothing to test: no device, no
 * usage stats, no permission) exits 4 as kselftest's skip, anything else 1.
 * Under --json and --tap a document says so, so CI can tell the two apart
 * from a failed check without parsing stderr.
 */
static int conf_not_run(const struct dac_conf_run_info *info, bool skip, const char *why,
			bool json, bool tap)
{
	int ret = 0;

	if (json) {
		struct dac_json j;

		dac_json_init(&j, stdout, true);
		dac_json_obj_begin(&j, NULL);
		json_head(&j, info, skip ? "skip" : "error");
		dac_json_str(&j, "reason", why);
		dac_json_arr_begin(&j, "checks");
		dac_json_arr_end(&j);
		dac_json_u64(&j, "failed", 0);
		dac_json_obj_end(&j);
		ret = dac_json_finish(&j);
	} else if (tap) {
		printf("TAP version 13\n");
		if (info->chosen[0])
			printf("# device %s\n", info->chosen);
		if (skip)
			printf("1..0 # SKIP %s\n", why);
		else
			printf("Bail out! %s\n", why);
	} else {
		if (info->chosen[0])
			printf("device %s\n", info->chosen);
		if (skip)
			printf("skip: %s\n", why);
	}
	if (!skip)
		cli_error(CMD, "%s", why);
	ret = cli_output_done(CMD, ret);
	if (ret)
		return CLI_EXIT_FAIL;
	return skip ? CLI_EXIT_NOTHING : CLI_EXIT_FAIL;
}

enum { OPT_DEVICE = 256, OPT_WORKLOAD, OPT_DURATION, OPT_TAP };

static int cmd_conformance(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "workload", required_argument, NULL, OPT_WORKLOAD },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "tap", no_argument, NULL, OPT_TAP },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cli_common_opts co = { .usage = usage };
	struct dac_conf_opts o = { 0 };
	struct dac_conf_run_info info;
	bool json = false, tap = false, verbose = false;
	struct dac_conf *c;
	char why[512] = "";
	int ch, opt, ret;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":i:jvh", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_DEVICE:
			if (!*optarg)
				return cli_usage_error(CMD, "--device: empty path");
			o.device = optarg;
			break;
		case OPT_WORKLOAD:
			if (!*optarg)
				return cli_usage_error(CMD, "--workload: empty command");
			o.workload = optarg;
			break;
		case OPT_DURATION:
			if (cli_opt_duration(CMD, "duration", optarg, 1000000ull,
					     24 * 3600 * 1000000000ull, false, &o.duration_ns))
				return CLI_EXIT_USAGE;
			break;
		case 'i':
			if (cli_opt_interval(CMD, optarg, false, &o.interval_ns))
				return CLI_EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case OPT_TAP:
			tap = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			opt = cli_common_opt(CMD, &co, argv, ch);
			if (opt != CLI_OPT_NEXT)
				return opt;
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected operand '%s'", argv[optind]);
	if (json && tap)
		return cli_usage_error(CMD, "--json and --tap exclude each other");

	c = dac_conf_new();
	if (!c) {
		cli_error(CMD, "out of memory");
		return CLI_EXIT_FAIL;
	}
	o.log = json || tap ? NULL : stderr;
	ret = dac_conf_run(c, &o, &info, why, sizeof(why));
	if (ret) {
		bool skip = dac_conf_run_skip(ret);

		ch = conf_not_run(&info, skip, why, json, tap);
		dac_conf_free(c);
		return ch;
	}
	if (!json && !tap && info.chosen[0])
		printf("device %s\n", info.chosen);
	if (json) {
		struct dac_json j;

		dac_json_init(&j, stdout, true);
		dac_json_obj_begin(&j, NULL);
		json_head(&j, &info, dac_conf_failures(c) ? "fail" : "pass");
		dac_json_u64(&j, "reads", dac_conf_nreads(c));
		dac_json_u64(&j, "files", dac_conf_nfiles(c));
		dac_json_u64(&j, "workload_files", info.workload_files);
		dac_json_u64(&j, "other_files", info.other_files);
		dac_json_u64(&j, "other_dev_files", info.other_dev_files);
		if (info.workload_ran)
			dac_json_i64(&j, "workload_status", cli_wait_status(info.workload_status));
		dac_conf_json(c, &j);
		dac_json_obj_end(&j);
		ret = dac_json_finish(&j);
	} else if (tap) {
		if (info.chosen[0])
			printf("# device %s\n", info.chosen);
		ret = dac_conf_print_tap(c, stdout);
	} else {
		printf("device %s (%s): %zu reads of %zu files (%zu of the workload, %zu of other processes, %zu on other devices)\n",
		       info.device, stats_what(info.stats), dac_conf_nreads(c), dac_conf_nfiles(c),
		       info.workload_files, info.other_files, info.other_dev_files);
		ret = dac_conf_print_text(c, stdout, verbose);
	}
	if (info.kcmp_missing)
		cli_error(CMD, "note: kcmp() unavailable: fds of other processes were matched by client id");
	if (info.workload_ran && cli_wait_status(info.workload_status))
		cli_error(CMD, "note: the workload exited with status %d",
			  cli_wait_status(info.workload_status));
	ret = cli_output_done(CMD, ret);
	ch = dac_conf_failures(c) || ret ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	dac_conf_free(c);
	return ch;
}

DRMACCT_COMMAND(conformance, cmd_conformance,
		"test a driver's usage stats against the spec (kernel CI, bring-up)");
