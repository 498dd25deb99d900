// SPDX-License-Identifier: MIT
/*
 * stat.c - `drmacct stat [-e ENGINES] -- CMD [ARGS]`: the GPU usage of a
 * command and every process it forks, like `perf stat`.
 *
 * With the BPF collection running (`drmacct bpf start`), the command's
 * process is tagged with a cookie before it execs; the BPF programs tag its
 * children on fork and sum the finished jobs of every client they open, so
 * clients that closed long before the command exited are counted exactly.
 * Without it, /proc is polled and the report says what that misses.
 *
 * Engines that print cycles but no busy time (xe) have no busy time to sum:
 * polling gives them the cycles between the first and the last poll over
 * the engine clock's total cycles in that span (or the maximum frequency
 * times the wall time), which is the same fraction busy/elapsed is.
 *
 * The report goes to stderr (stdout belongs to the command); the exit status
 * is the command's (128 + signal when a signal ended it), 127 when it was not
 * found and 126 when it could not be run, as in a shell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "cli.h"
#include "json.h"
#include "output.h"
#include "source.h"
#include "tracker.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct stat [OPTIONS] [--] CMD [ARGS...]\n\n"
		"Run CMD and report the GPU usage of it and all its children: per\n"
		"engine busy time, utilisation (busy / elapsed; from cycles for engines\n"
		"that print no busy time), cycles and jobs, peak memory per region, and\n"
		"per-ring busy time from gpu_scheduler. Clients that closed before CMD\n"
		"exited are included. Exact with the BPF collection running (`drmacct\n"
		"bpf start`, drivers on drm_sched); otherwise /proc is polled every\n"
		"--interval, which misses clients that open and close between two polls.\n"
		"The report goes to standard error (standard output belongs to CMD) or\n"
		"to -o FILE.\n\n"
		"Options:\n"
		"  -e, --engines=LIST     only these engines (comma-separated names)\n"
		"  -i, --interval=DUR     polling interval (default 100ms; 1ms..1h;\n"
		"                         500ms, 2s, 1m; a bare number is seconds)\n"
		"  -j, --json             the report as JSON (schema drmacct-stat/1)\n"
		"  -o, --output=FILE      write the report to FILE ('-' = stdout)\n"
		"      --no-bpf           poll /proc even when BPF runs\n"
		"  -d, --dir=DIR          BPF pin directory (default /sys/fs/bpf/drmacct)\n"
		"      --proc-root=DIR    poll DIR instead of /proc (tests; no BPF)\n"
		"  -h, --help             this text\n\n"
		"Exit status: CMD's (128 + N when signal N ended it); 127 CMD not found,\n"
		"126 CMD not runnable; 1 stat itself failed; 2 usage error.\n"
		"See drmacct(1).\n");
}

/* Where the report goes and in which form (-o, --json). */
static struct {
	FILE *f;
	bool json;
	char **argv;		/* CMD and its arguments */
	const char *source;	/* "bpf" or "proc" */
	uint64_t polls;		/* polling only */
	size_t clients;		/* polling only */
	int status;		/* CMD's exit status */
} out;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- engine filter ------------------------------------------------------ */

struct filter {
	char **names;
	size_t n;
};

static int filter_parse(struct filter *f, char *list)
{
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **tmp;

		if (!*t)
			continue;
		tmp = realloc(f->names, (f->n + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		f->names = tmp;
		f->names[f->n++] = t;
	}
	return f->n ? 0 : -EINVAL;
}

static bool filter_ok(const struct filter *f, const char *name)
{
	if (!f->n)
		return true;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->names[i], name))
			return true;
	return false;
}

/* ---- the report ------------------------------------------------------------ */

struct row {
	uint32_t device;
	char name[DAC_BPF_NAME_LEN];
	uint64_t busy_ns, cycles, jobs;
	bool has_busy, has_cycles, has_jobs;
	/* polling, engines without busy time: cycles over the engine clock */
	uint64_t d_cycles;		/* between the first and last poll */
	uint64_t tot0, tot1;		/* total cycles at those polls */
	uint64_t t0, t1;		/* their times (maxfreq engines) */
	uint64_t maxfreq_hz;
	bool has_total;
	bool polled;			/* t0/t1, tot0/tot1 valid */
};

struct mrow {
	uint32_t device;
	char name[DAC_BPF_NAME_LEN];
	uint64_t peak;
};

struct report {
	struct row *rows;
	size_t nrows;
	struct mrow *mem;
	size_t nmem;
	struct dac_bpf_sched *rings;	/* BPF only */
	size_t nrings;
};

/*
 * The engine's utilisation and where it comes from: busy time over the
 * elapsed time, else (polling, no busy time printed) the cycles over the
 * total cycles or the maximum frequency in the span the polls saw. NaN
 * when neither is known.
 */
static double row_util(const struct row *x, uint64_t elapsed_ns, enum dac_util_source *src)
{
	*src = DAC_UTIL_NONE;
	if (x->has_busy) {
		*src = DAC_UTIL_TIME;
		return elapsed_ns ? (double)x->busy_ns / (double)elapsed_ns : NAN;
	}
	if (!x->has_cycles || !x->polled)
		return NAN;
	if (x->has_total) {
		*src = DAC_UTIL_CYCLES_TOTAL;
		return dac_util_cycles_total(x->d_cycles, x->tot1 - x->tot0, 1);
	}
	if (x->maxfreq_hz) {
		*src = DAC_UTIL_CYCLES_MAXFREQ;
		return dac_util_cycles_maxfreq(x->d_cycles, x->maxfreq_hz, x->t1 - x->t0, 1);
	}
	return NAN;
}

static bool filter_seen(const struct report *r, const char *name)
{
	for (size_t j = 0; j < r->nrows; j++)
		if (!strcmp(r->rows[j].name, name))
			return true;
	return false;
}

static void json_report(const struct report *r, const struct filter *f, uint64_t elapsed_ns)
{
	struct dac_json j;

	dac_json_init(&j, out.f, false);
	dac_json_obj_begin(&j, NULL);
	dac_json_str(&j, "schema", "drmacct-stat/1");
	dac_json_arr_begin(&j, "command");
	for (char **a = out.argv; *a; a++)
		dac_json_str(&j, NULL, *a);
	dac_json_arr_end(&j);
	dac_json_str(&j, "source", out.source);
	if (!strcmp(out.source, "proc")) {
		dac_json_u64(&j, "polls", out.polls);
		dac_json_u64(&j, "clients_seen", out.clients);
	}
	dac_json_u64(&j, "elapsed_ns", elapsed_ns);
	dac_json_i64(&j, "exit_status", out.status);
	dac_json_arr_begin(&j, "engines");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *x = &r->rows[i];
		enum dac_util_source src;
		double u = row_util(x, elapsed_ns, &src);

		if (!filter_ok(f, x->name))
			continue;
		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "device", x->device);
		dac_json_str(&j, "name", x->name);
		dac_json_u64_opt(&j, "busy_ns", x->has_busy, x->busy_ns);
		dac_json_double(&j, "utilization", u);
		if (src == DAC_UTIL_NONE)
			dac_json_null(&j, "utilization_source");
		else
			dac_json_str(&j, "utilization_source", dac_util_source_name(src));
		dac_json_u64_opt(&j, "jobs", x->has_jobs, x->jobs);
		dac_json_u64_opt(&j, "cycles", x->has_cycles, x->cycles);
		dac_json_obj_end(&j);
	}
	for (size_t i = 0; i < f->n; i++) {
		if (filter_seen(r, f->names[i]))
			continue;
		dac_json_obj_begin(&j, NULL);
		dac_json_null(&j, "device");
		dac_json_str(&j, "name", f->names[i]);
		dac_json_u64(&j, "busy_ns", 0);
		dac_json_double(&j, "utilization", 0);
		dac_json_str(&j, "utilization_source", "time");
		dac_json_null(&j, "jobs");
		dac_json_null(&j, "cycles");
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "memory");
	for (size_t i = 0; i < r->nmem; i++) {
		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "device", r->mem[i].device);
		dac_json_str(&j, "region", r->mem[i].name);
		dac_json_u64(&j, "peak", r->mem[i].peak);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "rings");
	for (size_t i = 0; i < r->nrings; i++) {
		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "tgid", r->rings[i].tgid);
		dac_json_str(&j, "comm", r->rings[i].comm);
		dac_json_str(&j, "ring", r->rings[i].ring);
		dac_json_u64(&j, "busy_ns", r->rings[i].busy_ns);
		dac_json_u64(&j, "jobs", r->rings[i].jobs);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_obj_end(&j);
	if (dac_json_finish(&j))
		cli_error("stat", "writing the report failed");
}

static void print_report(const struct report *r, const struct filter *f, const char *cmd,
			 const char *source, uint64_t elapsed_ns)
{
	double el = elapsed_ns / 1e9;
	FILE *o = out.f;

	if (out.json) {
		json_report(r, f, elapsed_ns);
		return;
	}
	char b[32], nb[CLI_PRINTABLE_MAX], cb[CLI_PRINTABLE_MAX];
	bool cycles_util = false;

	fprintf(o, "\n GPU usage of '%s' and its children (source: %s):\n\n", cmd, source);
	fprintf(o, "  %-6s %-14s %16s %8s %8s %16s\n", "DEVICE", "ENGINE", "BUSY_NS", "UTIL",
		"JOBS", "CYCLES");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *x = &r->rows[i];
		char jobs[24] = "-", cyc[24] = "-", busy[24] = "-", util[24] = "-";
		enum dac_util_source src;
		double u = row_util(x, elapsed_ns, &src);

		if (!filter_ok(f, x->name))
			continue;
		if (x->has_jobs)
			snprintf(jobs, sizeof(jobs), "%" PRIu64, x->jobs);
		if (x->has_cycles)
			snprintf(cyc, sizeof(cyc), "%" PRIu64, x->cycles);
		if (x->has_busy)
			snprintf(busy, sizeof(busy), "%" PRIu64, x->busy_ns);
		if (!isnan(u))
			snprintf(util, sizeof(util), "%.2f%%%s", 100.0 * u,
				 src == DAC_UTIL_TIME ? "" : "*");
		cycles_util |= src == DAC_UTIL_CYCLES_TOTAL || src == DAC_UTIL_CYCLES_MAXFREQ;
		fprintf(o, "  %-6u %-14s %16s %8s %8s %16s\n", x->device,
			cli_printable(x->name, nb, sizeof(nb)), busy, util, jobs, cyc);
	}
	for (size_t i = 0; i < f->n; i++) {
		if (!filter_seen(r, f->names[i]))
			fprintf(o, "  %-6s %-14s %16d %7.2f%% %8d %16d\n", "-", f->names[i], 0,
				0.0, 0, 0);
	}
	if (cycles_util)
		fprintf(o, "  * no busy time printed (xe): cycles over the engine's total "
			   "cycles (or maxfreq) between the first and last poll\n");
	if (r->nmem) {
		fprintf(o, "\n  %-6s %-14s %16s\n", "DEVICE", "REGION", "PEAK");
		for (size_t i = 0; i < r->nmem; i++)
			fprintf(o, "  %-6u %-14s %16s\n", r->mem[i].device,
				cli_printable(r->mem[i].name, nb, sizeof(nb)),
				cli_fmt_bytes(r->mem[i].peak, b, sizeof(b)));
	}
	if (r->nrings) {
		fprintf(o, "\n  gpu_scheduler rings (any drm_sched driver):\n");
		fprintf(o, "  %-8s %-16s %-14s %16s %8s\n", "TGID", "COMM", "RING", "BUSY_NS",
			"JOBS");
		for (size_t i = 0; i < r->nrings; i++)
			fprintf(o, "  %-8u %-16s %-14s %16" PRIu64 " %8" PRIu64 "\n",
				r->rings[i].tgid, cli_printable(r->rings[i].comm, cb, sizeof(cb)),
				cli_printable(r->rings[i].ring, nb, sizeof(nb)),
				r->rings[i].busy_ns, r->rings[i].jobs);
	}
	fprintf(o, "\n  %12.6f seconds time elapsed\n\n", el);
	if (fflush(o))
		cli_error("stat", "writing the report failed");
}

/* ---- running the command --------------------------------------------------- */

/*
 * Fork CMD stopped at a gate: it execs only after the parent wrote to
 * @gate (so that it can be tagged first). Returns the pid or -1.
 */
static pid_t spawn(char **argv, int *gate)
{
	int p[2], err[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int e;

		close(p[1]);
		close(err[0]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(cli_exec_status(e));
		_exit(cli_exec_status(e));
	}
	close(p[0]);
	close(err[1]);
	*gate = p[1];
	gate[1] = err[0];
	return pid;
}

/* Let it run; returns exec's errno (0 when CMD started). */
static int release(int gate[2])
{
	int e = 0;

	if (write(gate[0], "g", 1) != 1)
		e = EPIPE;
	close(gate[0]);
	if (read(gate[1], &e, sizeof(e)) != sizeof(e))
		e = 0;
	close(gate[1]);
	return e;
}

/* ---- BPF mode -------------------------------------------------------------- */

static int stat_bpf(struct dac_bpf *b, char **argv, const struct filter *f, const char *cmd,
		    int *cmd_status)
{
	struct dac_bpf_cookie_engine *e = NULL;
	struct dac_bpf_cookie_region *m = NULL;
	struct dac_bpf_sched *s = NULL;
	struct report r = { 0 };
	size_t ne = 0, nm = 0, ns = 0;
	uint64_t cookie, t0, t1;
	int gate[2], status, err;
	pid_t pid;

	pid = spawn(argv, gate);
	if (pid < 0) {
		cli_error("stat", "cannot start '%s': %s", argv[0], strerror(errno));
		return CLI_EXIT_FAIL;
	}
	cookie = ((uint64_t)getpid() << 32) ^ (uint64_t)pid ^ (mono_ns() << 1) ^ 1;
	err = dac_bpf_track(b, (uint32_t)pid, cookie);
	if (err) {
		cli_error("stat", "cannot tag the command for BPF: %s", strerror(-err));
		kill(pid, SIGKILL);
		close(gate[0]);
		close(gate[1]);
		waitpid(pid, NULL, 0);
		return CLI_EXIT_FAIL;
	}
	t0 = mono_ns();
	err = release(gate);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = 127 << 8;
			break;
		}
	}
	t1 = mono_ns();
	*cmd_status = cli_wait_status(status);
	if (err) {
		cli_error("stat", "cannot run '%s': %s", argv[0], strerror(err));
		dac_bpf_untrack(b, cookie);
		return cli_exec_status(err);
	}
	err = dac_bpf_read_cookie(b, cookie, &e, &ne, &m, &nm);
	if (!err)
		err = dac_bpf_read_sched(b, &s, &ns);
	if (err) {
		cli_error("stat", "cannot read the BPF maps: %s", strerror(-err));
		goto out;
	}
	r.rows = calloc(ne ? ne : 1, sizeof(*r.rows));
	r.mem = calloc(nm ? nm : 1, sizeof(*r.mem));
	r.rings = calloc(ns ? ns : 1, sizeof(*r.rings));
	if (!r.rows || !r.mem || !r.rings) {
		err = -ENOMEM;
		cli_error("stat", "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ne; i++) {
		struct row *x = &r.rows[r.nrows++];

		x->device = e[i].device_id;
		snprintf(x->name, sizeof(x->name), "%s", e[i].name);
		x->busy_ns = e[i].busy_ns;
		x->cycles = e[i].cycles;
		x->jobs = e[i].jobs;
		x->has_busy = x->has_cycles = x->has_jobs = true;
	}
	for (size_t i = 0; i < nm; i++) {
		struct mrow *x = &r.mem[r.nmem++];

		x->device = m[i].device_id;
		snprintf(x->name, sizeof(x->name), "%s", m[i].name);
		x->peak = m[i].peak;
	}
	for (size_t i = 0; i < ns; i++)
		if (s[i].cookie == cookie)
			r.rings[r.nrings++] = s[i];
	out.source = "bpf";
	out.status = *cmd_status;
	print_report(&r, f, cmd, "BPF, exact", t1 - t0);
out:
	dac_bpf_untrack(b, cookie);
	free(e);
	free(m);
	free(s);
	free(r.rows);
	free(r.mem);
	free(r.rings);
	return err ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- polling mode ---------------------------------------------------------- */

struct seen_client {
	uint64_t client_id;
	char driver[DAC_BPF_NAME_LEN];
	unsigned int minor;
	struct row *eng;
	size_t neng;
	struct mrow *reg;
	size_t nreg;
};

struct poll_state {
	const char *proc;	/* /proc or --proc-root */
	pid_t root;
	struct seen_client *c;
	size_t n;
	uint64_t now;		/* time of this poll */
	bool oom;
};

/* Is @pid @root or one of its descendants (per PROC/<pid>/stat)? */
static bool descends_from(const char *proc, pid_t pid, pid_t root)
{
	for (int hops = 0; hops < 256 && pid > 1; hops++) {
		char p[PATH_MAX], buf[512], *rp;
		FILE *fp;
		int ppid;

		if (pid == root)
			return true;
		snprintf(p, sizeof(p), "%s/%d/stat", proc, (int)pid);
		fp = fopen(p, "re");
		if (!fp)
			return false;
		if (!fgets(buf, sizeof(buf), fp)) {
			fclose(fp);
			return false;
		}
		fclose(fp);
		rp = strrchr(buf, ')');	/* comm may hold spaces and parens */
		if (!rp || sscanf(rp + 1, " %*c %d", &ppid) != 1)
			return false;
		pid = ppid;
	}
	return false;
}

static int poll_cb(const struct dac_fd_info *fdi, void *arg)
{
	struct poll_state *st = arg;
	struct dac_fdinfo fi;
	struct seen_client *c = NULL;

	if (!descends_from(st->proc, fdi->pid, st->root))
		return 0;
	if (dac_fdinfo_parse(fdi->text, fdi->len, DAC_PROFILE_CURRENT, &fi))
		return 0;
	if (!fi.has_client_id) {
		dac_fdinfo_free(&fi);
		return 0;
	}
	for (size_t i = 0; i < st->n; i++)
		if (st->c[i].client_id == fi.client_id && st->c[i].minor == fdi->minor)
			c = &st->c[i];
	if (!c) {
		struct seen_client *tmp = realloc(st->c, (st->n + 1) * sizeof(*tmp));

		if (!tmp)
			goto oom;
		st->c = tmp;
		c = &st->c[st->n++];
		memset(c, 0, sizeof(*c));
		c->client_id = fi.client_id;
		c->minor = fdi->minor;
	}
	/* Latest values win (counters only grow; the catch-up rule is the tracker's). */
	if (fi.nengines > c->neng) {
		struct row *tmp = realloc(c->eng, fi.nengines * sizeof(*tmp));

		if (!tmp)
			goto oom;
		c->eng = tmp;
		memset(c->eng + c->neng, 0, (fi.nengines - c->neng) * sizeof(*tmp));
		c->neng = fi.nengines;
	}
	for (size_t i = 0; i < fi.nengines; i++) {
		const struct dac_engine *en = &fi.engines[i];
		struct row *x = &c->eng[i];

		x->device = fdi->minor;
		snprintf(x->name, sizeof(x->name), "%s", en->name);
		if (en->has_busy) {
			x->has_busy = true;
			if (en->busy_ns > x->busy_ns)
				x->busy_ns = en->busy_ns;
		}
		if (en->has_cycles && en->cycles >= x->cycles) {
			/* the first poll's values start the span of cycles */
			if (!x->polled) {
				x->polled = true;
				x->d_cycles = 0;
				x->tot0 = en->total_cycles;
				x->t0 = st->now;
			} else {
				x->d_cycles += en->cycles - x->cycles;
			}
			x->cycles = en->cycles;
			x->has_cycles = true;
			x->has_total = en->has_total_cycles;
			if (en->total_cycles >= x->tot1)
				x->tot1 = en->total_cycles;
			if (x->tot1 < x->tot0)
				x->tot1 = x->tot0;
			x->t1 = st->now;
			x->maxfreq_hz = en->has_maxfreq ? en->maxfreq_hz : 0;
		}
	}
	if (fi.nregions > c->nreg) {
		struct mrow *tmp = realloc(c->reg, fi.nregions * sizeof(*tmp));

		if (!tmp)
			goto oom;
		c->reg = tmp;
		memset(c->reg + c->nreg, 0, (fi.nregions - c->nreg) * sizeof(*tmp));
		c->nreg = fi.nregions;
	}
	for (size_t i = 0; i < fi.nregions; i++) {
		struct mrow *x = &c->reg[i];

		x->device = fdi->minor;
		snprintf(x->name, sizeof(x->name), "%s", fi.regions[i].name);
		if (fi.regions[i].has_total && fi.regions[i].total > x->peak)
			x->peak = fi.regions[i].total;
	}
	dac_fdinfo_free(&fi);
	return 0;
oom:
	dac_fdinfo_free(&fi);
	st->oom = true;
	return -ENOMEM;
}

static int stat_poll(char **argv, const struct filter *f, const char *cmd, uint64_t interval,
		     const char *proc_root, const char *why, int *cmd_status)
{
	struct dac_discover_opts o = { .fd = -1, .proc_root = proc_root };
	struct poll_state st = { .proc = proc_root ? proc_root : "/proc" };
	struct report r = { 0 };
	struct dac_discover *d;
	uint64_t t0, t1, polls = 0;
	int gate[2], status = 0, err, ret = CLI_EXIT_OK;
	pid_t pid;

	if (why)
		fprintf(stderr, "drmacct stat: %s: polling %s every %.3f s (misses clients that "
			"close between polls)\n", why, st.proc, interval / 1e9);
	d = cli_open_discover("stat", &o);
	if (!d)
		return CLI_EXIT_FAIL;
	pid = spawn(argv, gate);
	if (pid < 0) {
		cli_error("stat", "cannot start '%s': %s", argv[0], strerror(errno));
		dac_discover_free(d);
		return CLI_EXIT_FAIL;
	}
	st.root = pid;
	t0 = mono_ns();
	err = release(gate);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		struct timespec ts = { .tv_sec = interval / 1000000000ull,
				       .tv_nsec = interval % 1000000000ull };

		if (w == pid || (w < 0 && errno != EINTR))
			break;
		st.now = mono_ns();
		dac_discover_run(d, poll_cb, &st, NULL);
		polls++;
		nanosleep(&ts, NULL);
	}
	t1 = mono_ns();
	*cmd_status = cli_wait_status(status);
	dac_discover_free(d);
	if (err) {
		cli_error("stat", "cannot run '%s': %s", argv[0], strerror(err));
		ret = cli_exec_status(err);
		err = 0;
		goto out;
	}
	if (st.oom) {
		cli_error("stat", "out of memory");
		err = ENOMEM;
		goto out;
	}
	/* Sum over clients, per (device, engine name) and (device, region). */
	for (size_t i = 0; i < st.n; i++) {
		for (size_t j = 0; j < st.c[i].neng; j++) {
			const struct row *x = &st.c[i].eng[j];
			size_t k;

			for (k = 0; k < r.nrows; k++)
				if (r.rows[k].device == x->device && !strcmp(r.rows[k].name, x->name))
					break;
			if (k == r.nrows) {
				struct row *tmp = realloc(r.rows, (r.nrows + 1) * sizeof(*tmp));

				if (!tmp) {
					err = ENOMEM;
					goto out;
				}
				r.rows = tmp;
				r.rows[r.nrows++] = (struct row){ .device = x->device };
				snprintf(r.rows[k].name, sizeof(r.rows[k].name), "%s", x->name);
			}
			r.rows[k].busy_ns += x->busy_ns;
			r.rows[k].cycles += x->cycles;
			r.rows[k].has_cycles |= x->has_cycles;
			r.rows[k].has_busy |= x->has_busy;
			if (x->polled) {
				struct row *y = &r.rows[k];

				/* one engine clock: the span any client of it saw */
				y->d_cycles += x->d_cycles;
				if (!y->polled || x->tot0 < y->tot0)
					y->tot0 = x->tot0;
				if (!y->polled || x->t0 < y->t0)
					y->t0 = x->t0;
				if (x->tot1 > y->tot1)
					y->tot1 = x->tot1;
				if (x->t1 > y->t1)
					y->t1 = x->t1;
				y->has_total |= x->has_total;
				if (x->maxfreq_hz)
					y->maxfreq_hz = x->maxfreq_hz;
				y->polled = true;
			}
		}
		for (size_t j = 0; j < st.c[i].nreg; j++) {
			const struct mrow *x = &st.c[i].reg[j];
			size_t k;

			for (k = 0; k < r.nmem; k++)
				if (r.mem[k].device == x->device && !strcmp(r.mem[k].name, x->name))
					break;
			if (k == r.nmem) {
				struct mrow *tmp = realloc(r.mem, (r.nmem + 1) * sizeof(*tmp));

				if (!tmp) {
					err = ENOMEM;
					goto out;
				}
				r.mem = tmp;
				r.mem[r.nmem++] = *x;
				r.mem[k].peak = 0;
			}
			/* Peaks of different clients need not coincide: an upper bound. */
			r.mem[k].peak += x->peak;
		}
	}
	{
		char src[96];

		snprintf(src, sizeof(src), "/proc polling, %" PRIu64 " polls, %zu clients seen",
			 polls, st.n);
		out.source = "proc";
		out.polls = polls;
		out.clients = st.n;
		out.status = *cmd_status;
		print_report(&r, f, cmd, src, t1 - t0);
	}
out:
	for (size_t i = 0; i < st.n; i++) {
		free(st.c[i].eng);
		free(st.c[i].reg);
	}
	free(st.c);
	free(r.rows);
	free(r.mem);
	return err ? CLI_EXIT_FAIL : ret;
}

static int cmd_stat(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "engines", required_argument, NULL, 'e' },
		{ "interval", required_argument, NULL, 'i' },
		{ "no-bpf", no_argument, NULL, 'N' },
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *output = NULL, *proc_root = NULL;
	struct filter f = { 0 };
	const char *dir = DAC_BPF_PIN_DIR;
	uint64_t interval = 100000000ull;
	bool no_bpf = false;
	struct dac_bpf *b = NULL;
	char cmd[256] = "", why[256];
	int c, ret, cmd_status = 0, err;

	/* "+": stop at the first non-option, the command. */
	while ((c = getopt_long(argc, argv, "+:e:i:Nd:jo:R:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (filter_parse(&f, optarg)) {
				free(f.names);
				return cli_usage_error("stat", "-e: expected engine names, e.g. render,copy");
			}
			break;
		case 'i':
			if (cli_opt_interval("stat", optarg, false, &interval)) {
				free(f.names);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'j':
			out.json = true;
			break;
		case 'o':
			if (!*optarg) {
				free(f.names);
				return cli_usage_error("stat", "--output needs a file name");
			}
			output = optarg;
			break;
		case 'N':
			no_bpf = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'R':
			if (cli_opt_proc_root("stat", optarg, &proc_root)) {
				free(f.names);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			free(f.names);
			return CLI_EXIT_OK;
		default:
			free(f.names);
			return cli_getopt_error("stat", argv, c);
		}
	}
	if (optind >= argc) {
		free(f.names);
		return cli_usage_error("stat", "missing the command to run (drmacct stat -- CMD)");
	}
	out.f = stderr;
	out.argv = argv + optind;
	if (output) {
		out.f = cli_open_output("stat", output, false, &ret);
		if (!out.f) {
			free(f.names);
			return ret;
		}
	}
	for (int i = optind; i < argc; i++) {
		size_t l = strlen(cmd);

		snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i > optind ? " " : "", argv[i]);
	}
	/* The command gets the terminal's signals; we report after it ends. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	/* asked for polling (--no-bpf, --proc-root): no note about BPF */
	if (no_bpf || proc_root) {
		ret = stat_poll(argv + optind, &f, cmd, interval, proc_root, NULL, &cmd_status);
	} else if ((err = dac_bpf_open_pinned(dir, &b))) {
		snprintf(why, sizeof(why), "BPF %s", dac_bpf_strerror(err));
		ret = stat_poll(argv + optind, &f, cmd, interval, NULL, why, &cmd_status);
	} else {
		ret = stat_bpf(b, argv + optind, &f, cmd, &cmd_status);
		dac_bpf_close(b);
	}
	free(f.names);
	if (out.f != stderr && out.f != stdout && fclose(out.f)) {
		cli_error("stat", "writing %s failed", output);
		ret = ret ? ret : CLI_EXIT_FAIL;
	}
	return ret ? ret : cmd_status;
}

DRMACCT_COMMAND(stat, cmd_stat, "GPU usage of a command and its children (like perf stat)");
