// SPDX-License-Identifier: MIT
/*
 * check.c - `drmacct check`: fdinfo against BPF for every live client and
 * engine over the same interval.
 *
 * Two samples, --interval apart. In each, every DRM fd's fdinfo is read and,
 * right after it, the BPF entry of each of its engines; the busy time each
 * source accrued between the samples is compared. The two reads of a pair
 * are not simultaneous: a running job adds (gap between them) per running
 * job, which the allowance includes on top of the 1% (--tolerance).
 *
 * Engines that print cycles but no busy time (xe: drm-cycles- and
 * drm-total-cycles- only) cannot be compared with BPF's busy time: they are
 * counted and named as such, never paired. When the BPF collection cannot
 * be opened, one sample says whether there was anything it could have been
 * compared with: nothing (or cycles only) is exit 4, as it would be with
 * BPF; a client with busy time makes it the error it is.
 *
 * Exit status: 0 all agree, 1 some disagree (a table says which) or BPF is
 * not running, 2 usage error, 4 nothing to compare (no live client open in
 * both samples: not a pass, as nothing was checked, and not a disagreement;
 * 4 is what kselftest uses for "skipped").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf.h"
#include "cli.h"
#include "json.h"
#include "output.h"
#include "source.h"

#define CHECK_EXIT_NOTHING	CLI_EXIT_NOTHING

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct check [OPTIONS]\n\n"
		"Compare the busy time fdinfo and the BPF collection report for every\n"
		"live client and engine over the same interval. A table of the pairs\n"
		"is printed when any pair differs by more than the tolerance of the\n"
		"fdinfo value (always with -v). Needs root and `drmacct bpf start`.\n"
		"Engines that print cycles but no busy time (xe) are counted, not compared.\n\n"
		"Options:\n"
		"  -i, --interval=DUR     time between the samples (default 1s; 1ms..1h;\n"
		"                         500ms, 2s, 1m; a bare number is seconds)\n"
		"      --tolerance=PCT    allowed difference, 0..100 percent (default 1)\n"
		"  -v, --verbose          print the table of every pair, also when all agree\n"
		"  -j, --json             JSON (schema drmacct-check/1) with every pair\n"
		"  -d, --dir=DIR          BPF pin directory (default /sys/fs/bpf/drmacct)\n"
		"      --proc-root=DIR    read DIR instead of /proc (tests)\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 all pairs agree, 1 some pair disagrees or BPF cannot be\n"
		"read, 2 usage error, 4 nothing to compare (no live client with busy time\n"
		"open in both samples). See drmacct(1).\n");
}

struct pair {
	uint64_t client_id;
	pid_t pid;
	unsigned int minor;
	uint32_t engine;
	char name[DAC_BPF_NAME_LEN];
	char comm[16];
	uint64_t f[2], b[2];		/* fdinfo and BPF busy, per sample */
	uint64_t slack[2];		/* read gap x running jobs */
	bool seen[2], no_bpf[2];
};

/* A client-engine that prints cycles but no busy time: not comparable. */
struct cyc_only {
	uint64_t client_id;
	unsigned int minor;
	char name[DAC_BPF_NAME_LEN];
};

struct check_state {
	struct dac_bpf *b;		/* NULL: only look (BPF could not be opened) */
	struct pair *p;
	size_t n;
	struct cyc_only *co;
	size_t nco;
	size_t busy_seen;		/* client-engines with busy time, any sample */
	int sample;
	int err;
};

static int note_cycles_only(struct check_state *st, uint64_t id, unsigned int minor,
			    const char *name)
{
	struct cyc_only *t;

	for (size_t i = 0; i < st->nco; i++)
		if (st->co[i].client_id == id && st->co[i].minor == minor &&
		    !strcmp(st->co[i].name, name))
			return 0;
	t = realloc(st->co, (st->nco + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	st->co = t;
	t = &st->co[st->nco++];
	t->client_id = id;
	t->minor = minor;
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 0;
}

static struct pair *find_pair(struct check_state *st, uint64_t id, unsigned int minor,
			      uint32_t engine)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->p[i].client_id == id && st->p[i].minor == minor &&
		    st->p[i].engine == engine)
			return &st->p[i];
	return NULL;
}

static int sample_cb(const struct dac_fd_info *fdi, void *arg)
{
	struct check_state *st = arg;
	struct dac_fdinfo fi;

	if (dac_fdinfo_parse(fdi->text, fdi->len, DAC_PROFILE_CURRENT, &fi))
		return 0;
	if (!fi.has_client_id) {
		dac_fdinfo_free(&fi);
		return 0;
	}
	/* drmacct prints engines in index order: position = engine index. */
	for (size_t e = 0; e < fi.nengines; e++) {
		struct pair *p = find_pair(st, fi.client_id, fdi->minor, (uint32_t)e);
		struct dac_bpf_usage u;
		uint64_t now;
		int s = st->sample, err;

		if (!fi.engines[e].has_busy) {
			if (fi.engines[e].has_cycles &&
			    note_cycles_only(st, fi.client_id, fdi->minor, fi.engines[e].name)) {
				st->err = -ENOMEM;
				dac_fdinfo_free(&fi);
				return -ENOMEM;
			}
			continue;
		}
		st->busy_seen++;
		if (!st->b)
			continue;	/* looking only: no BPF to pair with */
		if (!p) {
			struct pair *tmp;

			if (s == 1)
				continue;	/* new since the first sample: no interval */
			tmp = realloc(st->p, (st->n + 1) * sizeof(*tmp));
			if (!tmp) {
				st->err = -ENOMEM;
				dac_fdinfo_free(&fi);
				return -ENOMEM;
			}
			st->p = tmp;
			p = &st->p[st->n++];
			memset(p, 0, sizeof(*p));
			p->client_id = fi.client_id;
			p->minor = fdi->minor;
			p->engine = (uint32_t)e;
			p->pid = fdi->pid;
			snprintf(p->name, sizeof(p->name), "%s", fi.engines[e].name);
			snprintf(p->comm, sizeof(p->comm), "%s", fdi->comm);
		}
		if (p->seen[s])
			continue;	/* the same client through a dup'd fd */
		p->seen[s] = true;
		p->f[s] = fi.engines[e].busy_ns;
		err = dac_bpf_lookup_usage(st->b, fi.client_id, (uint32_t)e, &now, &u);
		if (err == -ENOENT) {
			p->no_bpf[s] = true;	/* no job since BPF started */
			continue;
		}
		if (err) {
			st->err = err;
			dac_fdinfo_free(&fi);
			return err;
		}
		p->b[s] = u.busy_ns;
		/*
		 * From before the fdinfo's read(): the counters were taken
		 * somewhere inside it, so this bounds the gap (a stalled read
		 * on a loaded machine took 13 ms once).
		 */
		p->slack[s] = (now > fdi->read_start_ns ? now - fdi->read_start_ns : 0) * u.running;
	}
	dac_fdinfo_free(&fi);
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct dac_discover_opts o = { .fd = -1 };
	const struct cli_common_opts co = { .proc_root = &o.proc_root, .usage = usage };
	struct dac_json j;
	bool json = false;
	struct check_state st = { 0 };
	struct dac_discover_stats ds;
	struct dac_discover *d;
	const char *dir = DAC_BPF_PIN_DIR;
	uint64_t interval = 1000000000ull;
	double tol = 1.0;
	bool verbose = false;
	size_t compared = 0, bad = 0;
	char cb[CLI_PRINTABLE_MAX], nb[CLI_PRINTABLE_MAX];
	int c, err, bpf_err;

	while ((c = getopt_long(argc, argv, ":i:vd:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (cli_opt_interval("check", optarg, false, &interval))
				return CLI_EXIT_USAGE;
			break;
		case 'j':
			json = true;
			break;
		case 't': {
			char *end;

			errno = 0;
			tol = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(tol >= 0 && tol <= 100))
				return cli_usage_error("check", "--tolerance: '%s' is not 0..100",
						       optarg);
			break;
		}
		case 'v':
			verbose = true;
			break;
		case 'd':
			dir = optarg;
			break;
		default:
			c = cli_common_opt("check", &co, argv, c);
			if (c != CLI_OPT_NEXT)
				return c;
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error("check", "unexpected argument '%s'", argv[optind]);
	bpf_err = dac_bpf_open_pinned(dir, &st.b);
	if (bpf_err)
		st.b = NULL;
	d = cli_open_discover("check", &o);
	if (!d) {
		dac_bpf_close(st.b);
		return CLI_EXIT_FAIL;
	}
	/* Without BPF, one look says whether it was needed. */
	for (st.sample = 0; st.sample < (st.b ? 2 : 1); st.sample++) {
		if (st.sample == 1) {
			struct timespec ts = { .tv_sec = interval / 1000000000ull,
					       .tv_nsec = interval % 1000000000ull };

			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
		err = dac_discover_run(d, sample_cb, &st, &ds);
		if (err || st.err) {
			cli_error("check", "sample failed: %s", strerror(-(st.err ? st.err : err)));
			goto out;
		}
	}
	cli_note_discovery("check", &ds);
	if (!st.b && (st.busy_seen || !st.nco)) {
		cli_error("check", "cannot open the BPF collection at %s: %s", dir,
			  dac_bpf_strerror(bpf_err));
		err = bpf_err;
		goto out;
	}
	for (size_t i = 0; i < st.n; i++) {
		struct pair *p = &st.p[i];

		if (!p->seen[0] || !p->seen[1])
			continue;
		compared++;
	}
	if (json) {
		dac_json_init(&j, stdout, true);
		dac_json_obj_begin(&j, NULL);
		dac_json_str(&j, "schema", "drmacct-check/1");
		dac_json_u64(&j, "interval_ns", interval);
		dac_json_double(&j, "tolerance_percent", tol);
		dac_json_arr_begin(&j, "pairs");
	}
	if (!compared && !json) {
		if (st.nco && !st.busy_seen)
			printf("drmacct check: nothing to compare: %zu client-engine%s print%s cycles "
			       "but no busy time (drm-cycles- without drm-engine-, as xe does); "
			       "BPF measures busy time\n", st.nco, st.nco == 1 ? "" : "s",
			       st.nco == 1 ? "s" : "");
		else
			printf("drmacct check: nothing to compare: no live DRM client with engine "
			       "busy time was open in both samples (%.3f s apart)\n",
			       interval / 1e9);
		goto out;
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && !json)
			printf("%8s %8s %-16s %-12s %16s %16s %9s\n", "CLIENT", "PID", "COMM",
			       "ENGINE", "FDINFO_NS", "BPF_NS", "DIFF");
		for (size_t i = 0; i < st.n; i++) {
			struct pair *p = &st.p[i];
			uint64_t df, db, diff, allow;
			double pct;
			bool ok;

			if (!p->seen[0] || !p->seen[1])
				continue;
			df = p->f[1] - p->f[0];
			/* No BPF entry at all is right only when nothing ran. */
			db = p->no_bpf[1] ? 0 : p->b[1] - (p->no_bpf[0] ? 0 : p->b[0]);
			diff = df > db ? df - db : db - df;
			allow = (uint64_t)(df * tol / 100.0) + p->slack[0] + p->slack[1];
			ok = diff <= allow;
			pct = df ? 100.0 * diff / df : (diff ? 100.0 : 0.0);
			if (pass == 0) {
				bad += !ok;
				continue;
			}
			if (json) {
				dac_json_obj_begin(&j, NULL);
				dac_json_u64(&j, "client_id", p->client_id);
				dac_json_i64(&j, "pid", p->pid);
				dac_json_str(&j, "comm", p->comm);
				dac_json_str(&j, "engine", p->name);
				dac_json_u64(&j, "fdinfo_ns", df);
				dac_json_u64(&j, "bpf_ns", db);
				dac_json_u64(&j, "allowed_ns", allow);
				dac_json_double(&j, "diff_percent", pct);
				dac_json_bool(&j, "agree", ok);
				dac_json_obj_end(&j);
				continue;
			}
			if (!verbose && ok)
				continue;
			printf("%8" PRIu64 " %8d %-16s %-12s %16" PRIu64 " %16" PRIu64 " %8.3f%%%s\n",
			       p->client_id, (int)p->pid, cli_printable(p->comm, cb, sizeof(cb)),
			       cli_printable(p->name, nb, sizeof(nb)), df, db, pct, ok ? "" : "  <-");
		}
		if (pass == 0 && !bad && !verbose && !json)
			break;
	}
	if (json) {
		dac_json_arr_end(&j);
		dac_json_u64(&j, "compared", compared);
		dac_json_u64(&j, "disagree", bad);
		dac_json_arr_begin(&j, "cycles_only");
		for (size_t i = 0; i < st.nco; i++) {
			dac_json_obj_begin(&j, NULL);
			dac_json_u64(&j, "client_id", st.co[i].client_id);
			dac_json_u64(&j, "minor", st.co[i].minor);
			dac_json_str(&j, "engine", st.co[i].name);
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
		dac_json_str(&j, "result", !compared ? "nothing" : bad ? "disagree" : "agree");
		dac_json_obj_end(&j);
		if (cli_output_done("check", dac_json_finish(&j)))
			err = -EIO;
		goto out;
	}
	printf("drmacct check: %zu client-engine pairs over %.3f s: %s\n", compared,
	       interval / 1e9, bad ? "DISAGREE" : "fdinfo and BPF agree");
	if (st.nco)
		printf("  %zu client-engine%s with cycles but no busy time not compared\n",
		       st.nco, st.nco == 1 ? "" : "s");
	if (bad)
		printf("  %zu pairs differ by more than %.2f%% (+ read-gap allowance)\n", bad, tol);
out:
	dac_discover_free(d);
	free(st.p);
	free(st.co);
	dac_bpf_close(st.b);
	if (err || st.err)
		return CLI_EXIT_FAIL;
	if (!compared)
		return CHECK_EXIT_NOTHING;
	return bad ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

DRMACCT_COMMAND(check, cmd_check, "fdinfo vs BPF agreement for every live client and engine");
