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
#include "json.h"
#include "output.h"

#define OPT_DIR  "  -d, --dir=DIR          pin directory (default " DAC_BPF_PIN_DIR ")\n"
#define OPT_HELP "  -h, --help             this text\n"
#define OPT_START \
	"      --attach=MODE      start: auto (default), btf (tp_btf) or tracepoint\n" \
	"      --ringbuf=BYTES    start: size of the exit-record ring, a power of 2\n" \
	"                         from 4096 to 1 GiB (default 1 MiB)\n" \
	"      --sched-entries=N  start: entries of each gpu_scheduler map, 1 to\n" \
	"                         4194304 (default $DRMACCT_BPF_SCHED_ENTRIES, else\n" \
	"                         16384); full, the jobs concerned are counted lost\n" \
	"      --no-sched         start: leave gpu_scheduler's tracepoints alone\n" \
	"      --no-drmacct       start: leave drmacct's tracepoints alone\n" \
	"      --debug            start: print all of libbpf's messages as they come\n"

/* Options each subcommand takes, as bits of enum bpf_opt. */
enum bpf_opt {
	BO_START = 1 << 0,	/* --attach, --ringbuf, --sched-entries, --no-sched, ... */
	BO_JSON = 1 << 1,
};

struct bpf_sub {
	const char *name;
	unsigned int opts;
	const char *help;
};

static const struct bpf_sub subs[] = {
	{ "start", BO_START,
	  "Usage: drmacct bpf start [OPTIONS]\n\n"
	  "Load the BPF programs on drmacct's and gpu_scheduler's tracepoints and\n"
	  "pin them under DIR, so collection goes on after the command exits.\n"
	  "Clients already open go into the table (their usage counted from now).\n"
	  "A program the kernel refuses is named with the end of the verifier's\n"
	  "log. Needs root.\n\n"
	  "Options:\n" OPT_START OPT_DIR OPT_HELP "\n"
	  "Exit status: 0 started, 1 already running or the programs could not be\n"
	  "loaded or pinned, 2 usage error.\n" },
	{ "stop", 0,
	  "Usage: drmacct bpf stop [OPTIONS]\n\n"
	  "Detach the programs and remove the collection pinned under DIR.\n"
	  "Needs root.\n\n"
	  "Options:\n" OPT_DIR OPT_HELP "\n"
	  "Exit status: 0 stopped, 1 not running or not removable, 2 usage error.\n" },
	{ "status", BO_JSON,
	  "Usage: drmacct bpf status [OPTIONS]\n\n"
	  "Say whether the collection runs and how: the program sets and their\n"
	  "attach points, the ring buffer, live clients, exit records, every map\n"
	  "with its entries and memlock, each program's runs. Needs root.\n\n"
	  "Options:\n"
	  "  -j, --json             JSON (schema drmacct-bpf-status/1); when nothing\n"
	  "                         is pinned, {\"running\": false} with exit status 1\n"
	  OPT_DIR OPT_HELP "\n"
	  "Exit status: 0 running, 1 not running or not readable, 2 usage error.\n" },
	{ "dump", BO_JSON,
	  "Usage: drmacct bpf dump [OPTIONS]\n\n"
	  "Print the pinned maps: the client table, per-client engine usage and\n"
	  "memory, per-device totals since start, and gpu_scheduler busy time\n"
	  "per process and ring. Needs root.\n\n"
	  "Options:\n"
	  "  -j, --json             JSON (schema drmacct-bpf-dump/1)\n"
	  OPT_DIR OPT_HELP "\n"
	  "Exit status: 0 printed, 1 not running or not readable, 2 usage error.\n" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct bpf start|stop|status|dump [OPTIONS]\n\n"
		"Live GPU usage accounting with BPF. `start` loads the programs on\n"
		"drmacct's and gpu_scheduler's tracepoints and pins them under DIR\n"
		"(root only), so collection goes on after the command exits; `stop`\n"
		"removes them; `status` says what runs; `dump` prints the client table,\n"
		"per-engine usage, scheduler rings and stats. `drmacct bpf SUBCOMMAND\n"
		"--help` describes one. Needs root.\n\n"
		"Options:\n" OPT_START
		"  -j, --json             status, dump: JSON (schemas drmacct-bpf-status/1,\n"
		"                         drmacct-bpf-dump/1)\n"
		OPT_DIR OPT_HELP "\n"
		"Exit status: 0 success, 1 failure (status: not running), 2 usage error.\n");
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
	if (info->sched)
		printf("  rings known by:            %s\n",
		       dac_bpf_ring_identity_name(info->ring_identity));
	if (info->sched)
		printf("  DRM client ids:            %s\n", info->sched_client_ids ?
		       (info->sched_617 && !info->sched_btf ? "from the events" :
			"from the scheduler fences") : "not seen (this kernel's events and fences have none)");
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
	/*
	 * Clients open since before now: into the table, so list/top see
	 * them (their fdinfo reads also name their devices).
	 */
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

/* The attach point of a program set, for JSON: null when not attached. */
static void json_attach(struct dac_json *j, const char *key, bool on, bool btf)
{
	if (on)
		dac_json_str(j, key, btf ? "tp_btf" : "tracepoint");
	else
		dac_json_null(j, key);
}

/* A fixed-size char array of the BPF maps: up to its first NUL. */
static void json_name(struct dac_json *j, const char *key, const char *s, size_t max)
{
	dac_json_strn(j, key, s, strnlen(s, max));
}

/* An id where 0 means unknown: null then. */
static void json_id(struct dac_json *j, const char *key, uint64_t v)
{
	if (v)
		dac_json_u64(j, key, v);
	else
		dac_json_null(j, key);
}

static int status_json(const char *dir, const struct dac_bpf_info *info,
		       const struct dac_bpf_stats *st, size_t nclients,
		       const struct dac_bpf_map_stat *ms, ssize_t nm,
		       const struct dac_bpf_prog_stats *ps, ssize_t np)
{
	struct dac_json j;
	uint64_t memlock = 0;

	dac_json_init(&j, stdout, true);
	dac_json_obj_begin(&j, NULL);
	dac_json_str(&j, "schema", "drmacct-bpf-status/1");
	dac_json_bool(&j, "running", info != NULL);
	dac_json_str(&j, "dir", dir);
	if (!info)
		goto end;
	json_attach(&j, "drmacct", info->drmacct, info->drmacct_btf);
	json_attach(&j, "sched", info->sched, info->sched_btf);
	if (info->sched)
		dac_json_str(&j, "sched_set", info->sched_617 ? "6.17" : "6.1");
	else
		dac_json_null(&j, "sched_set");
	if (info->sched)
		dac_json_str(&j, "ring_identity", dac_bpf_ring_identity_name(info->ring_identity));
	else
		dac_json_null(&j, "ring_identity");
	if (info->sched)
		dac_json_bool(&j, "sched_client_ids", info->sched_client_ids);
	else
		dac_json_null(&j, "sched_client_ids");
	dac_json_bool(&j, "proc_exit", info->proc_exit);
	dac_json_u64(&j, "ringbuf_bytes", info->ringbuf_bytes);
	dac_json_u64(&j, "live_clients", nclients);
	dac_json_obj_begin(&j, "stats");
	dac_json_u64(&j, "exit_records", st->exit_records);
	dac_json_u64(&j, "proc_records", st->proc_records);
	dac_json_u64(&j, "exit_drops", st->exit_drops);
	dac_json_u64(&j, "job_end_unseen", st->job_end_unseen);
	dac_json_u64(&j, "sched_orphans", st->sched_orphans);
	dac_json_u64(&j, "read_faults", st->read_faults);
	dac_json_u64(&j, "cas_giveups", st->cas_giveups);
	dac_json_u64(&j, "nested_job_begin", st->nested_job_begin);
	dac_json_u64(&j, "nested_job_end", st->nested_job_end);
	dac_json_u64(&j, "nested_sched_done", st->nested_sched_done);
	dac_json_u64(&j, "nested_client_open", st->nested_client_open);
	dac_json_u64(&j, "nested_client_close", st->nested_client_close);
	dac_json_u64(&j, "nested_mem_change", st->nested_mem_change);
	dac_json_u64(&j, "nested_sched_queue", st->nested_sched_queue);
	dac_json_u64(&j, "nested_sched_run", st->nested_sched_run);
	dac_json_u64(&j, "nested_fork", st->nested_fork);
	dac_json_u64(&j, "nested_exit", st->nested_exit);
	dac_json_u64(&j, "scratch_full", st->scratch_full);
	dac_json_u64(&j, "proc_late", st->proc_late);
	dac_json_u64(&j, "sweep_written", st->sweep_written);
	dac_json_u64(&j, "stale_released", st->stale_released);
	dac_json_u64(&j, "sched_lost", st->sched_lost);
	dac_json_u64(&j, "rings_new", st->rings_new);
	dac_json_u64(&j, "rings_reclaimed", st->rings_reclaimed);
	dac_json_u64(&j, "ring_reclaim_runs", st->ring_reclaim_runs);
	dac_json_u64(&j, "left_removed", st->left_removed);
	dac_json_u64(&j, "clients_reclaimed", st->clients_reclaimed);
	dac_json_u64(&j, "full", st->full);
	dac_json_u64(&j, "busy", st->busy);
	dac_json_u64(&j, "nomem", st->nomem);
	dac_json_obj_end(&j);
	if (nm < 0) {
		dac_json_null(&j, "maps");
		dac_json_null(&j, "memlock_bytes");
	} else {
		dac_json_arr_begin(&j, "maps");
		for (ssize_t i = 0; i < nm; i++) {
			dac_json_obj_begin(&j, NULL);
			json_name(&j, "name", ms[i].name, sizeof(ms[i].name));
			json_name(&j, "type", ms[i].type, sizeof(ms[i].type));
			if (ms[i].entries < 0)
				dac_json_null(&j, "entries");
			else
				dac_json_i64(&j, "entries", ms[i].entries);
			dac_json_u64(&j, "max_entries", ms[i].max_entries);
			dac_json_u64(&j, "memlock", ms[i].memlock);
			dac_json_u64(&j, "full", ms[i].full);
			dac_json_u64(&j, "busy", ms[i].busy);
			dac_json_u64(&j, "nomem", ms[i].nomem);
			dac_json_obj_end(&j);
			memlock += ms[i].memlock;
		}
		dac_json_arr_end(&j);
		dac_json_u64(&j, "memlock_bytes", memlock);
	}
	if (np < 0) {
		dac_json_null(&j, "programs");
	} else {
		dac_json_arr_begin(&j, "programs");
		for (ssize_t i = 0; i < np; i++) {
			dac_json_obj_begin(&j, NULL);
			json_name(&j, "name", ps[i].name, sizeof(ps[i].name));
			dac_json_u64(&j, "run_cnt", ps[i].run_cnt);
			dac_json_u64(&j, "run_time_ns", ps[i].run_time_ns);
			dac_json_u64(&j, "recursion_misses", ps[i].recursion_misses);
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
	}
end:
	dac_json_obj_end(&j);
	return cli_output_done("bpf", dac_json_finish(&j)) ? CLI_EXIT_FAIL :
	       info ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

static void status_text(const char *dir, const struct dac_bpf_info *info,
			const struct dac_bpf_stats *st, size_t n,
			const struct dac_bpf_map_stat *ms, ssize_t nm,
			const struct dac_bpf_prog_stats *ps, ssize_t np)
{
	uint64_t memlock = 0;

	printf("drmacct bpf: running, pinned at %s\n", dir);
	print_sources(info);
	printf("  ring buffer:               %" PRIu32 " bytes\n", info->ringbuf_bytes);
	printf("  live clients:              %zu\n", n);
	printf("  exit records:              %" PRIu64 " clients, %" PRIu64 " processes (%"
	       PRIu64 " dropped)\n", st->exit_records, st->proc_records, st->exit_drops);
	if (st->job_end_unseen || st->sched_orphans)
		printf("  started before attach:     %" PRIu64 " job ends, %" PRIu64
		       " scheduler jobs\n", st->job_end_unseen, st->sched_orphans);
	if (st->read_faults)
		printf("  kernel read faults:        %" PRIu64 "\n", st->read_faults);
	if (st->cas_giveups)
		printf("  atomic updates given up:   %" PRIu64 "\n", st->cas_giveups);
	if (st->nested_job_begin || st->nested_job_end || st->nested_sched_done)
		printf("  taken by _nested programs: %" PRIu64 " job begins, %" PRIu64
		       " job ends, %" PRIu64 " scheduler completions\n", st->nested_job_begin,
		       st->nested_job_end, st->nested_sched_done);
	if (st->nested_client_open || st->nested_client_close || st->nested_mem_change ||
	    st->nested_sched_queue || st->nested_sched_run || st->nested_fork || st->nested_exit)
		printf("  ... and: %" PRIu64 " client opens, %" PRIu64 " closes, %" PRIu64
		       " memory changes, %" PRIu64 " scheduler queues, %" PRIu64 " runs, %" PRIu64
		       " forks, %" PRIu64 " exits\n", st->nested_client_open,
		       st->nested_client_close, st->nested_mem_change, st->nested_sched_queue,
		       st->nested_sched_run, st->nested_fork, st->nested_exit);
	if (st->scratch_full)
		printf("  records dropped, no scratch slot free: %" PRIu64 "\n", st->scratch_full);
	if (st->proc_late)
		printf("  charges after tgid reuse:  %" PRIu64 " (dropped)\n", st->proc_late);
	if (st->sweep_written || st->stale_released)
		printf("  jobs that never completed: %" PRIu64 " entries released, %" PRIu64
		       " process records written by the sweep (INCOMPLETE)\n", st->stale_released,
		       st->sweep_written);
	if (st->sched_lost)
		printf("  scheduler jobs lost:       %" PRIu64 " (a map had no room: see FULL)\n",
		       st->sched_lost);
	if (st->rings_new || st->rings_reclaimed)
		printf("  scheduler rings:           %" PRIu64 " created, %" PRIu64
		       " idle ones reclaimed (map full)\n", st->rings_new, st->rings_reclaimed);
	if (st->left_removed)
		printf("  refused deletes redone:    %" PRIu64 " in-flight entries (by the sweep)\n",
		       st->left_removed);
	if (st->ring_reclaim_runs)
		printf("  runs on a ring in reclaim: %" PRIu64 " (charged their own time)\n",
		       st->ring_reclaim_runs);
	if (st->clients_reclaimed)
		printf("  client sums reclaimed:     %" PRIu64
		       " (of exited processes, map full)\n", st->clients_reclaimed);
	/*
	 * full: inserts refused, map full; busy: refused, bucket locked
	 * (recursion); nomem: refused, any other error (no memory)
	 */
	if (nm >= 0) {
		printf("  maps:  %-14s %-14s %9s %9s %10s %6s %6s %6s\n", "NAME", "TYPE",
		       "ENTRIES", "MAX", "MEMLOCK", "FULL", "BUSY", "NOMEM");
		for (ssize_t i = 0; i < nm; i++) {
			char ent[24];

			if (ms[i].entries < 0)
				snprintf(ent, sizeof(ent), "-");
			else
				snprintf(ent, sizeof(ent), "%" PRId64, ms[i].entries);
			printf("         %-14s %-14s %9s %9" PRIu32 " %10" PRIu64 " %6" PRIu64
			       " %6" PRIu64 " %6" PRIu64 "\n", ms[i].name, ms[i].type, ent,
			       ms[i].max_entries, ms[i].memlock, ms[i].full, ms[i].busy,
			       ms[i].nomem);
			memlock += ms[i].memlock;
		}
		printf("  memlock used:              %" PRIu64 " bytes (%.1f MiB) in %zd maps\n",
		       memlock, memlock / 1048576.0, nm);
	}
	/* Costs exist only while kernel.bpf_stats_enabled is on. */
	if (np >= 0) {
		printf("  programs:\n");
		for (ssize_t i = 0; i < np; i++) {
			if (ps[i].run_cnt)
				printf("    %-24s %12" PRIu64 " runs %8.1f ns/run", ps[i].name,
				       ps[i].run_cnt, (double)ps[i].run_time_ns / ps[i].run_cnt);
			else
				printf("    %-24s (no runs counted; sysctl "
				       "kernel.bpf_stats_enabled=1 to measure)", ps[i].name);
			printf(" %" PRIu64 " recursion misses\n", ps[i].recursion_misses);
		}
	}
}

static int do_status(const char *dir, bool json)
{
	struct dac_bpf_stats st;
	struct dac_bpf_info info;
	struct dac_bpf_client *c = NULL;
	struct dac_bpf_map_stat *ms = NULL;
	struct dac_bpf_prog_stats *ps = NULL;
	struct dac_bpf *b;
	size_t n = 0, nm = 0, np = 0;
	ssize_t snm, snp;
	int ret, err = dac_bpf_open_pinned(dir, &b);

	if (err == -ENOENT) {
		if (json)
			return status_json(dir, NULL, NULL, 0, NULL, -1, NULL, -1);
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
	/* The map and program tables are extras: left out (null) when unreadable. */
	snm = dac_bpf_read_maps(b, &ms, &nm) ? -1 : (ssize_t)nm;
	snp = dac_bpf_read_prog_stats(b, &ps, &np) ? -1 : (ssize_t)np;
	if (json) {
		ret = status_json(dir, &info, &st, n, ms, snm, ps, snp);
	} else {
		status_text(dir, &info, &st, n, ms, snm, ps, snp);
		ret = CLI_EXIT_OK;
	}
	free(ms);
	free(ps);
	free(c);
	dac_bpf_close(b);
	return ret;
}

/* Everything `bpf dump` prints, read from the maps in one go. */
struct dump_data {
	struct dac_bpf_client *c;
	struct dac_bpf_usage *u;
	struct dac_bpf_sched *s;
	struct dac_bpf_sched_client *sc;
	struct dac_bpf_cgroup *g;
	struct dac_bpf_total *t;
	struct dac_bpf_mem *m;
	size_t nc, nu, ns, nsc, ng, nt, nm;
	uint64_t now;
};

static void dump_text(struct dac_bpf *b, const struct dump_data *d)
{
	const struct dac_bpf_client *c = d->c;
	const struct dac_bpf_usage *u = d->u;
	const struct dac_bpf_sched *s = d->s;
	const struct dac_bpf_total *t = d->t;
	const struct dac_bpf_mem *m = d->m;
	char b1[CLI_PRINTABLE_MAX], b2[CLI_PRINTABLE_MAX];

	printf("clients (%zu):\n%8s %8s %8s %-16s %-12s %6s\n", d->nc, "ID", "PID", "TGID", "COMM",
	       "DRIVER", "DEVICE");
	for (size_t i = 0; i < d->nc; i++)
		printf("%8" PRIu64 " %8u %8u %-16s %-12s %6u\n", c[i].client_id, c[i].pid,
		       c[i].tgid, cli_printable(c[i].comm, b1, sizeof(b1)),
		       cli_printable(c[i].driver, b2, sizeof(b2)), c[i].device_id);
	printf("\nusage (%zu):\n%8s %-12s %16s %16s %10s %7s\n", d->nu, "ID", "ENGINE", "BUSY_NS",
	       "CYCLES", "JOBS", "RUNNING");
	for (size_t i = 0; i < d->nu; i++)
		printf("%8" PRIu64 " %-12s %16" PRIu64 " %16" PRIu64 " %10" PRIu64 " %7u\n",
		       u[i].client_id, cli_printable(u[i].name, b1, sizeof(b1)), u[i].busy_ns,
		       u[i].cycles, u[i].jobs, u[i].running);
	printf("\nmemory (%zu):\n%8s %-12s %14s %14s\n", d->nm, "ID", "REGION", "TOTAL", "PEAK");
	for (size_t i = 0; i < d->nm; i++)
		printf("%8" PRIu64 " %-12s %14" PRIu64 " %14" PRIu64 "\n", m[i].client_id,
		       cli_printable(m[i].name, b1, sizeof(b1)), m[i].total, m[i].peak);
	printf("\ntotals since start (%zu):\n%6s %-12s %16s %16s %10s\n", d->nt, "DEVICE",
	       "ENGINE", "BUSY_NS", "CYCLES", "JOBS");
	for (size_t i = 0; i < d->nt; i++)
		printf("%6u %-12s %16" PRIu64 " %16" PRIu64 " %10" PRIu64 "\n", t[i].device_id,
		       cli_printable(t[i].name, b1, sizeof(b1)), t[i].busy_ns, t[i].cycles,
		       t[i].jobs);
	printf("\ngpu_scheduler (%zu):\n%8s %-16s %-16s %16s %10s %10s\n", d->ns, "TGID", "COMM",
	       "RING", "BUSY_NS", "JOBS", "CGROUP_ID");
	for (size_t i = 0; i < d->ns; i++)
		printf("%8u %-16s %-16s %16" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", s[i].tgid,
		       cli_printable(s[i].comm, b1, sizeof(b1)),
		       cli_printable(s[i].ring, b2, sizeof(b2)), s[i].busy_ns, s[i].jobs,
		       s[i].cgroup_id);
	printf("\ngpu_scheduler per cgroup (%zu):\n%10s %16s %10s  %s\n", d->ng, "CGROUP_ID",
	       "BUSY_NS", "JOBS", "CGROUP");
	for (size_t i = 0; i < d->ng; i++)
		printf("%10" PRIu64 " %16" PRIu64 " %10" PRIu64 "  %s\n", d->g[i].cgroup_id,
		       d->g[i].busy_ns, d->g[i].jobs,
		       cli_printable(dac_bpf_cgroup_path(b, d->g[i].cgroup_id, b1, sizeof(b1)), b2,
				     sizeof(b2)));
	if (!d->nsc)
		return;
	printf("\ngpu_scheduler per client (%zu):\n%8s %8s %-16s %16s %10s\n", d->nsc, "ID",
	       "TGID", "RING", "BUSY_NS", "JOBS");
	for (size_t i = 0; i < d->nsc; i++)
		printf("%8" PRIu64 " %8u %-16s %16" PRIu64 " %10" PRIu64 "\n", d->sc[i].client_id,
		       d->sc[i].tgid, cli_printable(d->sc[i].ring, b1, sizeof(b1)),
		       d->sc[i].busy_ns, d->sc[i].jobs);
}

static int dump_json(struct dac_bpf *b, const char *dir, const struct dump_data *d)
{
	char path[CLI_PRINTABLE_MAX];
	struct dac_json j;

	dac_json_init(&j, stdout, true);
	dac_json_obj_begin(&j, NULL);
	dac_json_str(&j, "schema", "drmacct-bpf-dump/1");
	dac_json_str(&j, "dir", dir);
	dac_json_u64(&j, "now_ns", d->now);
	dac_json_arr_begin(&j, "clients");
	for (size_t i = 0; i < d->nc; i++) {
		const struct dac_bpf_client *c = &d->c[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "client_id", c->client_id);
		dac_json_u64(&j, "pid", c->pid);
		dac_json_u64(&j, "tgid", c->tgid);
		json_name(&j, "comm", c->comm, sizeof(c->comm));
		json_name(&j, "driver", c->driver, sizeof(c->driver));
		dac_json_u64(&j, "device", c->device_id);
		if (c->name[0])
			json_name(&j, "name", c->name, sizeof(c->name));
		else
			dac_json_null(&j, "name");
		json_id(&j, "cgroup_id", c->cgroup_id);
		dac_json_u64(&j, "open_ns", c->open_ns);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "usage");
	for (size_t i = 0; i < d->nu; i++) {
		const struct dac_bpf_usage *u = &d->u[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "client_id", u->client_id);
		dac_json_u64(&j, "device", u->device_id);
		dac_json_u64(&j, "engine", u->engine);
		json_name(&j, "name", u->name, sizeof(u->name));
		dac_json_u64(&j, "busy_ns", u->busy_ns);
		dac_json_u64(&j, "cycles", u->cycles);
		dac_json_u64(&j, "jobs", u->jobs);
		dac_json_u64(&j, "running", u->running);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "memory");
	for (size_t i = 0; i < d->nm; i++) {
		const struct dac_bpf_mem *m = &d->m[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "client_id", m->client_id);
		dac_json_u64(&j, "region", m->region);
		json_name(&j, "name", m->name, sizeof(m->name));
		dac_json_u64(&j, "total", m->total);
		dac_json_u64(&j, "peak", m->peak);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "totals");
	for (size_t i = 0; i < d->nt; i++) {
		const struct dac_bpf_total *t = &d->t[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "device", t->device_id);
		dac_json_u64(&j, "engine", t->engine);
		json_name(&j, "name", t->name, sizeof(t->name));
		dac_json_u64(&j, "busy_ns", t->busy_ns);
		dac_json_u64(&j, "cycles", t->cycles);
		dac_json_u64(&j, "jobs", t->jobs);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "sched");
	for (size_t i = 0; i < d->ns; i++) {
		const struct dac_bpf_sched *s = &d->s[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "tgid", s->tgid);
		dac_json_u64(&j, "start_ns", s->start_ns);
		json_name(&j, "comm", s->comm, sizeof(s->comm));
		dac_json_u64(&j, "ring_id", s->ring_id);
		json_name(&j, "ring", s->ring, sizeof(s->ring));
		dac_json_u64(&j, "busy_ns", s->busy_ns);
		dac_json_u64(&j, "jobs", s->jobs);
		json_id(&j, "cgroup_id", s->cgroup_id);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "sched_cgroups");
	for (size_t i = 0; i < d->ng; i++) {
		const struct dac_bpf_cgroup *g = &d->g[i];

		dac_json_obj_begin(&j, NULL);
		json_id(&j, "cgroup_id", g->cgroup_id);
		dac_json_str(&j, "cgroup", dac_bpf_cgroup_path(b, g->cgroup_id, path, sizeof(path)));
		dac_json_u64(&j, "busy_ns", g->busy_ns);
		dac_json_u64(&j, "jobs", g->jobs);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "sched_clients");
	for (size_t i = 0; i < d->nsc; i++) {
		const struct dac_bpf_sched_client *c = &d->sc[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "client_id", c->client_id);
		dac_json_u64(&j, "tgid", c->tgid);
		dac_json_u64(&j, "ring_id", c->ring_id);
		json_name(&j, "ring", c->ring, sizeof(c->ring));
		dac_json_u64(&j, "busy_ns", c->busy_ns);
		dac_json_u64(&j, "jobs", c->jobs);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_obj_end(&j);
	return cli_output_done("bpf", dac_json_finish(&j)) ? -EIO : 0;
}

static int do_dump(const char *dir, bool json)
{
	struct dump_data d = { 0 };
	struct dac_bpf *b;
	int err = dac_bpf_open_pinned(dir, &b);

	if (err)
		return open_err("bpf", dir, err);
	if ((err = dac_bpf_read_clients(b, &d.c, &d.nc)) ||
	    (err = dac_bpf_read_usage(b, &d.now, &d.u, &d.nu)) ||
	    (err = dac_bpf_read_mem(b, &d.m, &d.nm)) ||
	    (err = dac_bpf_read_totals(b, &d.t, &d.nt)) ||
	    (err = dac_bpf_read_sched(b, &d.s, &d.ns)) ||
	    (err = dac_bpf_read_sched_clients(b, &d.sc, &d.nsc)) ||
	    (err = dac_bpf_read_cgroups(b, &d.g, &d.ng))) {
		cli_error("bpf", "cannot read the maps: %s", strerror(-err));
		goto out;
	}
	if (json)
		err = dump_json(b, dir, &d);
	else
		dump_text(b, &d);
out:
	free(d.c);
	free(d.u);
	free(d.m);
	free(d.t);
	free(d.s);
	free(d.sc);
	free(d.g);
	dac_bpf_close(b);
	return err ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static const struct bpf_sub *find_sub(const char *name)
{
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(subs[i].name, name))
			return &subs[i];
	return NULL;
}

static int cmd_bpf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "attach", required_argument, NULL, 'a' },
		{ "ringbuf", required_argument, NULL, 'r' },
		{ "sched-entries", required_argument, NULL, 'E' },
		{ "no-sched", no_argument, NULL, 'S' },
		{ "no-drmacct", no_argument, NULL, 'D' },
		{ "dir", required_argument, NULL, 'd' },
		{ "debug", no_argument, NULL, 'G' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct dac_bpf_load_opts o = {};
	const char *dir = DAC_BPF_PIN_DIR, *start_opt = NULL;
	const struct bpf_sub *sub;
	bool json = false, help = false, debug = false;
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, ":d:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			start_opt = "--attach";
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
			start_opt = "--ringbuf";
			if (cli_parse_u64(optarg, &v) || v < 4096 || v > (1u << 30) || (v & (v - 1)))
				return cli_usage_error("bpf",
						       "--ringbuf: '%s' is not a power of 2 from 4096 to 1 GiB",
						       optarg);
			o.ringbuf_bytes = (uint32_t)v;
			break;
		case 'E':
			start_opt = "--sched-entries";
			if (cli_parse_u64(optarg, &v) || !v || v > DAC_BPF_SCHED_ENTRIES_MAX)
				return cli_usage_error("bpf",
						       "--sched-entries: '%s' is not a number from 1 to %u",
						       optarg, DAC_BPF_SCHED_ENTRIES_MAX);
			o.sched_entries = (uint32_t)v;
			break;
		case 'S':
			start_opt = "--no-sched";
			o.no_sched = true;
			break;
		case 'D':
			start_opt = "--no-drmacct";
			o.no_drmacct = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'G':
			start_opt = "--debug";
			debug = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			help = true;
			break;
		default:
			return cli_getopt_error("bpf", argv, c);
		}
	}
	if (optind >= argc) {
		if (help) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		return cli_usage_error("bpf", "missing subcommand (start, stop, status or dump)");
	}
	sub = find_sub(argv[optind]);
	if (!sub)
		return cli_usage_error("bpf", "unknown subcommand '%s' (start, stop, status or dump)",
				       argv[optind]);
	if (help) {
		fputs(sub->help, stdout);
		return CLI_EXIT_OK;
	}
	if (optind + 1 < argc)
		return cli_usage_error("bpf", "unexpected argument '%s'", argv[optind + 1]);
	if (start_opt && !(sub->opts & BO_START))
		return cli_usage_error("bpf", "%s is an option of `bpf start`, not `bpf %s`",
				       start_opt, sub->name);
	if (json && !(sub->opts & BO_JSON))
		return cli_usage_error("bpf", "--json is for `bpf status` and `bpf dump`; "
				       "`bpf %s` prints one line", sub->name);
#ifdef DRMACCT_NO_BPF
	/* make BPF=0: the collection is not in this binary (bpf_none.c). */
	cli_error("bpf", "this drmacct was built without BPF support (BPF=0): no `bpf %s`",
		  sub->name);
	return CLI_EXIT_FAIL;
#endif
	if (debug)
		dac_bpf_set_verbose(true);
	if (!strcmp(sub->name, "start"))
		return do_start(dir, &o);
	if (!strcmp(sub->name, "stop"))
		return do_stop(dir);
	if (!strcmp(sub->name, "status"))
		return do_status(dir, json);
	return do_dump(dir, json);
}

DRMACCT_COMMAND(bpf, cmd_bpf, "live accounting with BPF: start, stop, status, dump");
