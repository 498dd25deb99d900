// SPDX-License-Identifier: MIT
/*
 * bpf.c - `drmacct bpf start|stop|status|dump`: the pinned BPF collection.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf.h"
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct bpf start [--attach auto|btf|tracepoint] [--ringbuf BYTES]\n"
		"                         [--no-sched] [--no-drmacct] [--debug] [--dir DIR]\n"
		"       drmacct bpf stop [--dir DIR]\n"
		"       drmacct bpf status [--dir DIR]\n"
		"       drmacct bpf dump [--dir DIR]\n\n"
		"Live GPU usage accounting with BPF. `start` loads the programs on\n"
		"drmacct's and gpu_scheduler's tracepoints and pins them under DIR\n"
		"(default " DAC_BPF_PIN_DIR ", root only), so collection goes on after\n"
		"the command exits; `stop` removes them; `status` says what runs; `dump`\n"
		"prints the client table, per-engine usage, scheduler rings and stats.\n"
		"A program the kernel refuses is named with the end of the verifier's\n"
		"log; --debug prints all of libbpf's messages as they come.\n"
		"Needs root.\n");
}

/* Which program set runs, on which kind of attach point. */
static void print_sources(const struct dac_bpf_info *info)
{
	printf("  drmacct tracepoints:       %s\n",
	       info->drmacct ? (info->drmacct_btf ? "tp_btf" : "tracepoint") : "not attached");
	printf("  gpu_scheduler tracepoints: %s\n",
	       info->sched ? (info->sched_btf ? "tp_btf" : "tracepoint") : "not attached");
	if (info->sched)
		printf("  scheduler program set:     %s\n", info->sched_617 ?
		       "6.17+ (drm_sched_job_queue/_run/_done)" :
		       "6.1 (drm_sched_job, drm_run_job, drm_sched_process_job)");
	printf("  process exits:             %s\n",
	       info->proc_exit ? "sched_process_exit (PROC_EXIT records)" : "not attached");
}

/* Error of opening the pinned collection, with what to do about it. */
static int open_err(const char *cmd, const char *dir, int err)
{
	cli_error(cmd, "cannot open the BPF collection at %s: %s", dir, dac_bpf_strerror(err));
	return CLI_EXIT_FAIL;
}

/* The last @max lines of libbpf's log of a failed load, indented. */
static void print_log_tail(const char *log, int max)
{
	const char *p = dac_bpf_log_tail(log, max);

	if (!*p)
		return;
	fprintf(stderr, "drmacct bpf: the end of libbpf's log:\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(stderr, "  | %.*s\n", len, p);
		p += len + (nl != NULL);
	}
}

static int do_start(const char *dir, const struct dac_bpf_load_opts *o)
{
	struct dac_bpf_info info;
	struct dac_bpf *b;
	int err, seeded;

	if (!access(dir, F_OK)) {
		cli_error("bpf", "already running (pinned at %s); `drmacct bpf stop` first", dir);
		return CLI_EXIT_FAIL;
	}
	err = dac_bpf_load(o, &b);
	if (err) {
		cli_error("bpf", "cannot load the BPF programs: %s (errno %d, %s)",
			  dac_bpf_load_strerror(err), -err, strerror(-err));
		print_log_tail(dac_bpf_load_log(), 20);
		return CLI_EXIT_FAIL;
	}
	err = dac_bpf_pin(b, dir);
	if (err) {
		cli_error("bpf", "cannot pin under %s: %s%s", dir, strerror(-err),
			  err == -ENOENT ? " (is the BPF filesystem mounted on /sys/fs/bpf?)" : "");
		dac_bpf_close(b);
		return CLI_EXIT_FAIL;
	}
	dac_bpf_learn_names(b);
	/* Clients open since before now: into the table, so list/top see them. */
	seeded = dac_bpf_seed_clients(b);
	dac_bpf_info(b, &info);
	if (info.note[0])
		fprintf(stderr, "drmacct bpf: note: %s\n", info.note);
	printf("drmacct bpf: started, pinned at %s\n", dir);
	if (seeded > 0)
		printf("  clients already open:      %d (usage counted from now)\n", seeded);
	else if (seeded < 0)
		fprintf(stderr, "drmacct bpf: note: could not add the clients already open: %s\n",
			strerror(-seeded));
	print_sources(&info);
	dac_bpf_close(b);
	return CLI_EXIT_OK;
}

static int do_stop(const char *dir)
{
	int err = dac_bpf_unpin(dir);

	if (err == -ENOENT) {
		cli_error("bpf", "not running (nothing pinned at %s)", dir);
		return CLI_EXIT_FAIL;
	}
	if (err) {
		cli_error("bpf", "cannot remove %s: %s", dir, dac_bpf_strerror(err));
		return CLI_EXIT_FAIL;
	}
	printf("drmacct bpf: stopped\n");
	return CLI_EXIT_OK;
}

static int do_status(const char *dir)
{
	struct dac_bpf_stats st;
	struct dac_bpf_info info;
	struct dac_bpf_client *c = NULL;
	struct dac_bpf *b;
	size_t n = 0;
	int err = dac_bpf_open_pinned(dir, &b);

	if (err == -ENOENT) {
		printf("drmacct bpf: not running\n");
		return CLI_EXIT_FAIL;
	}
	if (err)
		return open_err("bpf", dir, err);
	dac_bpf_info(b, &info);
	err = dac_bpf_read_stats(b, &st);
	if (!err)
		err = dac_bpf_read_clients(b, &c, &n);
	if (err) {
		cli_error("bpf", "cannot read the maps: %s", strerror(-err));
		dac_bpf_close(b);
		return CLI_EXIT_FAIL;
	}
	printf("drmacct bpf: running, pinned at %s\n", dir);
	print_sources(&info);
	printf("  ring buffer:               %" PRIu32 " bytes\n", info.ringbuf_bytes);
	printf("  live clients:              %zu\n", n);
	printf("  exit records:              %" PRIu64 " clients, %" PRIu64 " processes (%"
	       PRIu64 " dropped)\n", st.exit_records, st.proc_records, st.exit_drops);
	if (st.job_end_unseen || st.sched_orphans)
		printf("  started before attach:     %" PRIu64 " job ends, %" PRIu64
		       " scheduler jobs\n", st.job_end_unseen, st.sched_orphans);
	if (st.read_faults)
		printf("  kernel read faults:        %" PRIu64 "\n", st.read_faults);
	if (st.cas_giveups)
		printf("  atomic updates given up:   %" PRIu64 "\n", st.cas_giveups);
	{
		struct dac_bpf_map_stat *ms = NULL;
		uint64_t memlock = 0;
		size_t nm = 0;

		/* full: inserts refused; busy: refused, bucket locked (recursion) */
		if (!dac_bpf_read_maps(b, &ms, &nm)) {
			printf("  maps:  %-14s %-14s %9s %9s %10s %6s %6s\n", "NAME", "TYPE",
			       "ENTRIES", "MAX", "MEMLOCK", "FULL", "BUSY");
			for (size_t i = 0; i < nm; i++) {
				char ent[24];

				if (ms[i].entries < 0)
					snprintf(ent, sizeof(ent), "-");
				else
					snprintf(ent, sizeof(ent), "%" PRId64, ms[i].entries);
				printf("         %-14s %-14s %9s %9" PRIu32 " %10" PRIu64 " %6" PRIu64
				       " %6" PRIu64 "\n", ms[i].name, ms[i].type, ent,
				       ms[i].max_entries, ms[i].memlock, ms[i].full, ms[i].busy);
				memlock += ms[i].memlock;
			}
			printf("  memlock used:              %" PRIu64 " bytes (%.1f MiB) in %zu maps\n",
			       memlock, memlock / 1048576.0, nm);
		}
		free(ms);
	}
	{
		struct dac_bpf_prog_stats *ps = NULL;
		size_t np = 0;

		/* Costs exist only while kernel.bpf_stats_enabled is on. */
		if (!dac_bpf_read_prog_stats(b, &ps, &np)) {
			printf("  programs:\n");
			for (size_t i = 0; i < np; i++) {
				if (ps[i].run_cnt)
					printf("    %-18s %12" PRIu64 " runs %8.1f ns/run", ps[i].name,
					       ps[i].run_cnt,
					       (double)ps[i].run_time_ns / ps[i].run_cnt);
				else
					printf("    %-18s (no runs counted; sysctl "
					       "kernel.bpf_stats_enabled=1 to measure)", ps[i].name);
				printf(" %" PRIu64 " recursion misses\n", ps[i].recursion_misses);
			}
		}
		free(ps);
	}
	free(c);
	dac_bpf_close(b);
	return CLI_EXIT_OK;
}

static int do_dump(const char *dir)
{
	struct dac_bpf_client *c = NULL;
	struct dac_bpf_usage *u = NULL;
	struct dac_bpf_sched *s = NULL;
	struct dac_bpf_total *t = NULL;
	struct dac_bpf_mem *m = NULL;
	size_t nc = 0, nu = 0, ns = 0, nt = 0, nm = 0;
	char b1[CLI_PRINTABLE_MAX], b2[CLI_PRINTABLE_MAX];
	uint64_t now;
	struct dac_bpf *b;
	int err = dac_bpf_open_pinned(dir, &b);

	if (err)
		return open_err("bpf", dir, err);
	if ((err = dac_bpf_read_clients(b, &c, &nc)) ||
	    (err = dac_bpf_read_usage(b, &now, &u, &nu)) ||
	    (err = dac_bpf_read_mem(b, &m, &nm)) ||
	    (err = dac_bpf_read_totals(b, &t, &nt)) ||
	    (err = dac_bpf_read_sched(b, &s, &ns))) {
		cli_error("bpf", "cannot read the maps: %s", strerror(-err));
		goto out;
	}
	printf("clients (%zu):\n%8s %8s %8s %-16s %-12s %6s\n", nc, "ID", "PID", "TGID", "COMM",
	       "DRIVER", "DEVICE");
	for (size_t i = 0; i < nc; i++)
		printf("%8" PRIu64 " %8u %8u %-16s %-12s %6u\n", c[i].client_id, c[i].pid,
		       c[i].tgid, cli_printable(c[i].comm, b1, sizeof(b1)),
		       cli_printable(c[i].driver, b2, sizeof(b2)), c[i].device_id);
	printf("\nusage (%zu):\n%8s %-12s %16s %16s %10s %7s\n", nu, "ID", "ENGINE", "BUSY_NS",
	       "CYCLES", "JOBS", "RUNNING");
	for (size_t i = 0; i < nu; i++)
		printf("%8" PRIu64 " %-12s %16" PRIu64 " %16" PRIu64 " %10" PRIu64 " %7u\n",
		       u[i].client_id, cli_printable(u[i].name, b1, sizeof(b1)), u[i].busy_ns, u[i].cycles, u[i].jobs,
		       u[i].running);
	printf("\nmemory (%zu):\n%8s %-12s %14s %14s\n", nm, "ID", "REGION", "TOTAL", "PEAK");
	for (size_t i = 0; i < nm; i++)
		printf("%8" PRIu64 " %-12s %14" PRIu64 " %14" PRIu64 "\n", m[i].client_id,
		       cli_printable(m[i].name, b1, sizeof(b1)), m[i].total, m[i].peak);
	printf("\ntotals since start (%zu):\n%6s %-12s %16s %16s %10s\n", nt, "DEVICE", "ENGINE",
	       "BUSY_NS", "CYCLES", "JOBS");
	for (size_t i = 0; i < nt; i++)
		printf("%6u %-12s %16" PRIu64 " %16" PRIu64 " %10" PRIu64 "\n", t[i].device_id,
		       cli_printable(t[i].name, b1, sizeof(b1)), t[i].busy_ns, t[i].cycles, t[i].jobs);
	printf("\ngpu_scheduler (%zu):\n%8s %-16s %-16s %16s %10s %10s\n", ns, "TGID", "COMM",
	       "RING", "BUSY_NS", "JOBS", "CGROUP_ID");
	for (size_t i = 0; i < ns; i++)
		printf("%8u %-16s %-16s %16" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", s[i].tgid,
		       cli_printable(s[i].comm, b1, sizeof(b1)),
		       cli_printable(s[i].ring, b2, sizeof(b2)), s[i].busy_ns, s[i].jobs,
		       s[i].cgroup_id);
out:
	free(c);
	free(u);
	free(m);
	free(t);
	free(s);
	dac_bpf_close(b);
	return err ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- data source of list and top ----------------------------------------- */

int cli_opt_source(const char *cmd, const char *arg, enum cli_source *out)
{
	if (!strcmp(arg, "auto"))
		*out = CLI_SOURCE_AUTO;
	else if (!strcmp(arg, "bpf"))
		*out = CLI_SOURCE_BPF;
	else if (!strcmp(arg, "proc"))
		*out = CLI_SOURCE_PROC;
	else
		return cli_usage_error(cmd, "--source: '%s' is not auto, bpf or proc", arg);
	return 0;
}

int cli_source_open(const char *cmd, enum cli_source src, bool proc_only, struct dac_bpf **b)
{
	struct dac_bpf_info info;
	int err;

	*b = NULL;
	if (src == CLI_SOURCE_PROC)
		return 0;
	if (proc_only) {
		if (src == CLI_SOURCE_AUTO)
			return 0;
		cli_error(cmd, "--source=bpf cannot be combined with --pid or --proc-root");
		return -1;
	}
	err = dac_bpf_open_pinned(NULL, b);
	if (!err) {
		dac_bpf_info(*b, &info);
		if (info.drmacct)
			return 0;
		dac_bpf_close(*b);
		*b = NULL;
		err = -ENODEV;
	}
	if (src == CLI_SOURCE_AUTO)
		return 0;	/* /proc it is; list and top name it (cli_source_name()) */
	cli_error(cmd, "--source=bpf: %s", err == -ENODEV ?
		  "the BPF collection is not attached to drmacct's tracepoints" :
		  dac_bpf_strerror(err));
	return -1;
}

int cli_source_sample(struct dac_bpf *b, struct dac_tracker *t, struct dac_discover *d,
		      enum dac_profile profile, struct dac_discover_stats *st)
{
	if (!b)
		return dac_tracker_sample_proc(t, d, profile, dac_now_ns(), st);
	if (st)
		memset(st, 0, sizeof(*st));
	return dac_bpf_tracker_sample(b, t, NULL);
}

int cli_source_cgroup(const char *cmd, struct dac_bpf *b, const char *path)
{
	if (!path)
		return 0;
	if (!b) {
		cli_error(cmd, "--cgroup needs the BPF client table (`drmacct bpf start`, "
			  "--source=bpf): /proc does not say which cgroup opened a client");
		return -1;
	}
	if (path[0] != '/') {
		cli_error(cmd, "--cgroup: '%s' is not a cgroup v2 path (starts with /)", path);
		return -1;
	}
	if (dac_bpf_set_cgroup_filter(b, path)) {
		cli_error(cmd, "out of memory");
		return -1;
	}
	return 0;
}

const char *cli_source_name(const struct dac_bpf *b)
{
	return b ? "BPF client table (no /proc walk)" : "/proc fdinfo";
}

static int cmd_bpf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "attach", required_argument, NULL, 'a' },
		{ "ringbuf", required_argument, NULL, 'r' },
		{ "no-sched", no_argument, NULL, 'S' },
		{ "no-drmacct", no_argument, NULL, 'D' },
		{ "dir", required_argument, NULL, 'd' },
		{ "debug", no_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct dac_bpf_load_opts o = {};
	const char *dir = DAC_BPF_PIN_DIR, *sub;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, ":d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!strcmp(optarg, "auto"))
				o.attach = DAC_BPF_ATTACH_AUTO;
			else if (!strcmp(optarg, "btf"))
				o.attach = DAC_BPF_ATTACH_BTF;
			else if (!strcmp(optarg, "tracepoint"))
				o.attach = DAC_BPF_ATTACH_TRACEPOINT;
			else
				return cli_usage_error("bpf", "--attach: '%s' is not auto, btf or tracepoint",
						       optarg);
			break;
		case 'r':
			if (cli_parse_u64(optarg, &v) || v < 4096 || v > (1u << 30) || (v & (v - 1)))
				return cli_usage_error("bpf",
						       "--ringbuf: '%s' is not a power of 2 from 4096 to 1 GiB",
						       optarg);
			o.ringbuf_bytes = (uint32_t)v;
			break;
		case 'S':
			o.no_sched = true;
			break;
		case 'D':
			o.no_drmacct = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'G':
			dac_bpf_set_verbose(true);
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_getopt_error("bpf", argv, c);
		}
	}
	if (optind >= argc)
		return cli_usage_error("bpf", "missing subcommand (start, stop, status or dump)");
	sub = argv[optind];
	if (optind + 1 < argc)
		return cli_usage_error("bpf", "unexpected argument '%s'", argv[optind + 1]);
	if (!strcmp(sub, "start"))
		return do_start(dir, &o);
	if (!strcmp(sub, "stop"))
		return do_stop(dir);
	if (!strcmp(sub, "status"))
		return do_status(dir);
	if (!strcmp(sub, "dump"))
		return do_dump(dir);
	return cli_usage_error("bpf", "unknown subcommand '%s' (start, stop, status or dump)", sub);
}

DRMACCT_COMMAND(bpf, cmd_bpf, "live accounting with BPF: start, stop, status, dump");
