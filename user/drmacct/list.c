// SPDX-License-Identifier: MIT
/*
 * list.c - `drmacct list`: the DRM clients of the system, once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "output.h"
#include "source.h"
#include "tracker_json.h"
#include "view.h"

static const char *const CMD = "list";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct list [OPTIONS]\n\n"
		"List DRM/accel clients: processes holding them, driver, device, client id,\n"
		"per-engine busy time and utilisation, memory per region. Clients shared by\n"
		"dup'd or inherited fds are shown once, with every process holding them.\n"
		"Utilisation is measured over --interval (two samples).\n\n"
		"Options:\n"
		"  -j, --json             JSON in --sort order (drmacct-list/1, see drmacct(1))\n"
		"  -p, --processes        one entry per process instead of per client\n"
		"  -i, --interval=DUR     sampling interval (default 500ms; 1ms..1h;\n"
		"                         500ms, 2s, 1m; a bare number is seconds;\n"
		"                         0 = one sample, no utilisation)\n"
		"  -s, --sort=KEY         util (default), mem, pid or id\n"
		"  -r, --reverse          reverse the order\n"
		"      --pid=PID          only this process\n"
		"      --spec=PROFILE     parse as 'current' (default) or '2022'\n"
		"      --proc-root=DIR    read DIR instead of /proc (testing)\n"
		"      --source=SRC       auto (default: the BPF client table when\n"
		"                         `drmacct bpf start` runs, else /proc), bpf or proc\n"
		"      --cgroup=PATH      only clients opened in cgroup v2 PATH or below\n"
		"                         (BPF client table only; shows each one's cgroup)\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 success, 1 --pid names no process or sampling failed,\n"
		"2 usage error.\n");
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "processes", no_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "pid", required_argument, NULL, 'P' },
		{ "spec", required_argument, NULL, 'S' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "source", required_argument, NULL, 'O' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_discover_opts dopts = { .proc_root = NULL, .pid = 0, .fd = -1 };
	enum dac_profile profile = DAC_PROFILE_CURRENT;
	enum cli_sort sort = CLI_SORT_UTIL;
	bool json = false, procs = false, reverse = false;
	uint64_t interval = 500000000ull;
	struct dac_discover_stats st;
	struct dac_tracker *t = NULL;
	struct dac_discover *d = NULL;
	enum cli_source source = CLI_SOURCE_AUTO;
	struct dac_bpf *bpf = NULL;
	const char *cgroup = NULL;
	const struct cli_common_opts co = {
		.pid = &dopts.pid, .profile = &profile, .proc_root = &dopts.proc_root,
		.source = &source, .usage = usage,
	};
	int c, opt, ret, rc = CLI_EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jpi:s:rh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			procs = true;
			break;
		case 'i':
			if (cli_opt_interval(CMD, optarg, true, &interval))
				return CLI_EXIT_USAGE;
			break;
		case 's':
			if (cli_opt_sort(CMD, optarg, &sort))
				return CLI_EXIT_USAGE;
			break;
		case 'r':
			reverse = true;
			break;
		case 'C':
			cgroup = optarg;
			break;
		default:
			opt = cli_common_opt(CMD, &co, argv, c);
			if (opt != CLI_OPT_NEXT)
				return opt;
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (cli_check_source_conflict(CMD, source, &dopts))
		return CLI_EXIT_USAGE;

	if (cli_open_sampler(CMD, source, &dopts, &bpf, &d, &t))
		return CLI_EXIT_FAIL;
	if (cli_source_cgroup(CMD, bpf, cgroup))
		goto out;
	ret = cli_source_sample(bpf, t, d, profile, &st);
	if (!ret && interval) {
		sleep_ns(interval);
		ret = cli_source_sample(bpf, t, d, profile, &st);
	}
	if (ret == -ESRCH) {
		cli_error(CMD, "no process %d", (int)dopts.pid);
		goto out;
	}
	if (ret) {
		cli_error(CMD, "sampling failed: %s", strerror(-ret));
		goto out;
	}
	if (json)
		ret = cli_json_tracker(stdout, t, &st, &(struct cli_json_opts){
			.sort = sort, .reverse = reverse, .pretty = true });
	else
		ret = cli_print_table(stdout, t, sort, reverse, procs, false, NULL);
	if (cli_output_done(CMD, ret))
		goto out;
	if (!json)
		cli_note_discovery(CMD, &st);
	fprintf(stderr, "drmacct %s: source: %s\n", CMD, cli_source_name(bpf));
	rc = CLI_EXIT_OK;
out:
	cli_close_sampler(bpf, d, t);
	return rc;
}

DRMACCT_COMMAND(list, cmd_list, "list DRM clients with usage and memory (table or JSON)");
