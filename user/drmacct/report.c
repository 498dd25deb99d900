// SPDX-License-Identifier: MIT
/*
 * report.c - `drmacct report FILE`: summarise a record stream per client and
 * per process (text or JSON), or convert it to Chrome/Perfetto trace-event
 * JSON with a counter track per client and engine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "output.h"
#include "record.h"
#include "tracker.h"

static const char *const CMD = "report";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct report [OPTIONS] FILE\n\n"
		"Summarise a stream written by 'drmacct record' (FILE '-' = stdin): per client\n"
		"(device, client id, processes, busy time and average utilisation per engine\n"
		"over the recording, final totals of clients that exited, peak memory) and\n"
		"per process. Damaged streams are read as far as possible; every problem is\n"
		"reported with its byte offset and the exit status is then 1.\n\n"
		"Options:\n"
		"  -j, --json             JSON summary (schema drmacct-report/1)\n"
		"  -t, --trace-events=OUT write Chrome/Perfetto trace-event JSON to OUT\n"
		"                         ('-' = stdout): one track per client and engine\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 success, 1 the file cannot be read or has a problem or\n"
		"an output cannot be written, 2 usage error, 141 the reader of the output\n"
		"went away.\n");
}

/*
 * One engine of one client. Busy time and cycles count from the client's
 * first sample, or from 0 for a client opened during the recording; the
 * utilisation from cycles (for an engine that prints no drm-engine- key,
 * xe's) is taken between the first and last samples, where cycles and
 * total cycles are both known.
 */
struct eng_acc {
	uint32_t idx;
	uint32_t flags;			/* DREC_E_* seen in any record */
	uint64_t capacity;		/* the client's (CAPACITY record); 0: the device's */
	uint64_t first_busy, last_busy, first_cycles, last_cycles, jobs;
	uint64_t s_cycles, s_total, s_t;	/* at the first sample */
	uint64_t last_total;
	uint64_t first_t, last_t;	/* times of first/last value */
	bool seen;			/* first_* valid (from a SAMPLE) */
	bool exit_only;			/* only known from CLIENT_EXIT */
};

struct reg_acc {
	uint32_t idx;
	uint64_t peak_total, peak_resident, last_total, last_resident;
	bool has_total, has_resident;	/* the driver printed it in some sample */
};

struct pid_ent {
	uint32_t pid;
	char comm[DREC_COMM_LEN + 1];
};

struct cl {
	uint32_t dev;
	uint64_t id;
	bool has_id;
	uint64_t first_ns, last_ns, exit_ns;
	uint64_t samples;
	bool exited;
	struct pid_ent *pids;
	size_t npids;
	struct eng_acc *eng;
	size_t neng;
	struct reg_acc *reg;
	size_t nreg;
	unsigned int track;		/* trace-event pid */
};

/* A process: every client it held, busy time summed by (device, engine). */
struct proc_eng {
	uint32_t dev;
	const char *name;	/* the device description's */
	uint64_t busy_ns, cycles;
	bool has_busy, has_cycles;
};

struct proc_acc {
	uint32_t pid;
	char comm[DREC_COMM_LEN + 1];
	size_t nclients;
	struct proc_eng *eng;
	size_t neng;
};

struct rep {
	struct cl *c;
	size_t n, cap;
	struct proc_acc *procs;
	size_t nprocs;
	uint64_t lost, overflows, records;
	uint64_t first_ns, last_ns;
	struct dac_json *tj;		/* trace-event writer, or NULL */
	const struct drec_reader *r;
	int err;
};

static void *xgrow(void *p, size_t *cap, size_t need, size_t sz, int *err)
{
	size_t n;
	void *np;

	if (need <= *cap)
		return p;
	n = *cap ? *cap * 2 : 4;
	while (n < need)
		n *= 2;
	np = realloc(p, n * sz);
	if (!np) {
		*err = -ENOMEM;
		return NULL;
	}
	memset((char *)np + *cap * sz, 0, (n - *cap) * sz);
	*cap = n;
	return np;
}

static struct cl *get_client(struct rep *rp, const struct drec_client *c)
{
	bool has_id = c->flags & DREC_C_CLIENT_ID;
	/* Without a driver client id, the process is the best key there is. */
	uint64_t id = has_id ? c->client_id : c->pid;
	struct cl *x;
	size_t i;
	void *np;

	for (i = 0; i < rp->n; i++)
		if (rp->c[i].dev == c->dev && rp->c[i].id == id && rp->c[i].has_id == has_id)
			return &rp->c[i];
	np = xgrow(rp->c, &rp->cap, rp->n + 1, sizeof(*rp->c), &rp->err);
	if (!np)
		return NULL;
	rp->c = np;
	x = &rp->c[rp->n];
	memset(x, 0, sizeof(*x));
	x->dev = c->dev;
	x->id = id;
	x->has_id = has_id;
	x->first_ns = c->time_ns;
	x->track = (unsigned int)++rp->n;
	return x;
}

static void add_pid(struct rep *rp, struct cl *x, const struct drec_client *c)
{
	size_t i, cap = x->npids;

	for (i = 0; i < x->npids; i++)
		if (x->pids[i].pid == c->pid)
			return;
	x->pids = realloc(x->pids, (cap + 1) * sizeof(*x->pids));
	if (!x->pids) {
		x->npids = 0;
		rp->err = -ENOMEM;
		return;
	}
	x->pids[x->npids].pid = c->pid;
	memcpy(x->pids[x->npids].comm, c->comm, sizeof(c->comm));
	x->npids++;
}

/* Every process of a HOLDERS record holds the client. */
static void on_holders(struct rep *rp, const struct drec_record *rec)
{
	struct drec_client c = rec->client;
	struct drec_holder h;
	struct cl *x = get_client(rp, &c);

	for (size_t i = 0; x && drec_holder(rec, i, &h); i++) {
		c.pid = h.pid;
		memcpy(c.comm, h.comm, sizeof(c.comm));
		add_pid(rp, x, &c);
	}
}

static struct eng_acc *get_eng(struct rep *rp, struct cl *x, uint32_t idx);

/* The capacities the client prints, for its utilisation (version 1.2). */
static void on_capacity(struct rep *rp, const struct drec_record *rec)
{
	struct cl *x = get_client(rp, &rec->client);
	struct drec_capacity v;
	struct eng_acc *e;

	for (size_t i = 0; x && drec_capacity(rec, i, &v); i++)
		if ((e = get_eng(rp, x, v.engine)))
			e->capacity = v.capacity;
}

static struct eng_acc *get_eng(struct rep *rp, struct cl *x, uint32_t idx)
{
	size_t i;
	struct eng_acc *n;

	for (i = 0; i < x->neng; i++)
		if (x->eng[i].idx == idx)
			return &x->eng[i];
	n = realloc(x->eng, (x->neng + 1) * sizeof(*n));
	if (!n) {
		rp->err = -ENOMEM;
		return NULL;
	}
	x->eng = n;
	memset(&n[x->neng], 0, sizeof(*n));
	n[x->neng].idx = idx;
	return &n[x->neng++];
}

static struct reg_acc *get_reg(struct rep *rp, struct cl *x, uint32_t idx)
{
	size_t i;
	struct reg_acc *n;

	for (i = 0; i < x->nreg; i++)
		if (x->reg[i].idx == idx)
			return &x->reg[i];
	n = realloc(x->reg, (x->nreg + 1) * sizeof(*n));
	if (!n) {
		rp->err = -ENOMEM;
		return NULL;
	}
	x->reg = n;
	memset(&n[x->nreg], 0, sizeof(*n));
	n[x->nreg].idx = idx;
	return &n[x->nreg++];
}

/* Trace-event time: integer microseconds since the start of the recording. */
static int64_t ts_us(const struct rep *rp, uint64_t t)
{
	uint64_t base = rp->r->info.start_mono_ns;

	return t >= base ? (int64_t)((t - base) / 1000) : -(int64_t)((base - t) / 1000);
}

static const char *eng_name(const struct rep *rp, uint32_t dev, uint32_t idx)
{
	const struct drec_device *d = drec_device(rp->r, dev);

	return d && idx < d->nengines ? d->engines[idx].name : "?";
}

/* The engine's capacity as the client prints it, else as the device says. */
static uint64_t eng_cap(const struct rep *rp, const struct cl *x, const struct eng_acc *e)
{
	const struct drec_device *d = drec_device(rp->r, x->dev);

	if (e->capacity)
		return e->capacity;
	return d && e->idx < d->nengines && d->engines[e->idx].capacity ?
	       d->engines[e->idx].capacity : 1;
}

static uint64_t eng_maxfreq(const struct rep *rp, const struct cl *x, const struct eng_acc *e)
{
	const struct drec_device *d = drec_device(rp->r, x->dev);

	return d && e->idx < d->nengines ? d->engines[e->idx].maxfreq_hz : 0;
}

/* An engine the client printed a counter for (not only a capacity). */
static bool eng_counts(const struct eng_acc *e)
{
	return e->flags & (DREC_E_BUSY | DREC_E_CYCLES | DREC_E_JOBS);
}

/*
 * Utilisation of @e between its value at @t0 (@busy0, @cyc0, @tot0) and
 * @v at @t1: from busy time when the engine prints it, else from cycles
 * over total cycles, else from cycles at the maximum frequency; NaN when
 * none can be computed. *@src says which (may be NULL).
 */
static double interval_util(const struct rep *rp, const struct cl *x, const struct eng_acc *e,
			    uint64_t t0, uint64_t busy0, uint64_t cyc0, uint64_t tot0,
			    uint64_t t1, uint64_t busy1, uint64_t cyc1, uint64_t tot1,
			    enum dac_util_source *src)
{
	uint64_t cap = eng_cap(rp, x, e), mf = eng_maxfreq(rp, x, e);
	enum dac_util_source s = DAC_UTIL_NONE;
	double u = NAN;

	if (t1 <= t0)
		;
	else if (e->flags & DREC_E_BUSY) {
		u = dac_util_time(busy1 >= busy0 ? busy1 - busy0 : 0, t1 - t0, cap);
		s = DAC_UTIL_TIME;
	} else if ((e->flags & DREC_E_CYCLES) && (e->flags & DREC_E_TOTAL_CYCLES)) {
		u = dac_util_cycles_total(cyc1 >= cyc0 ? cyc1 - cyc0 : 0,
					  tot1 >= tot0 ? tot1 - tot0 : 0, cap);
		s = DAC_UTIL_CYCLES_TOTAL;
	} else if ((e->flags & DREC_E_CYCLES) && mf) {
		u = dac_util_cycles_maxfreq(cyc1 >= cyc0 ? cyc1 - cyc0 : 0, mf, t1 - t0, cap);
		s = DAC_UTIL_CYCLES_MAXFREQ;
	}
	if (src)
		*src = isnan(u) ? DAC_UTIL_NONE : s;
	return u;
}

static const char *reg_name(const struct rep *rp, uint32_t dev, uint32_t idx)
{
	const struct drec_device *d = drec_device(rp->r, dev);

	return d && idx < d->nregions ? d->regions[idx] : "?";
}

static void trace_counter(struct rep *rp, const struct cl *x, const char *name, int64_t ts,
			  const char *arg, double v, bool integer)
{
	struct dac_json *j = rp->tj;

	dac_json_obj_begin(j, NULL);
	dac_json_str(j, "name", name);
	dac_json_str(j, "ph", "C");
	dac_json_i64(j, "ts", ts);
	dac_json_u64(j, "pid", x->track);
	dac_json_obj_begin(j, "args");
	if (integer)
		dac_json_u64(j, arg, (uint64_t)v);
	else
		dac_json_double(j, arg, v);
	dac_json_obj_end(j);
	dac_json_obj_end(j);
}

static void on_client(struct rep *rp, const struct drec_record *rec)
{
	const struct drec_client *c = &rec->client;
	bool is_exit = rec->type == DREC_CLIENT_EXIT;
	struct cl *x = get_client(rp, c);
	size_t i;

	if (!x)
		return;
	add_pid(rp, x, c);
	if (c->time_ns < x->first_ns)
		x->first_ns = c->time_ns;
	if (c->time_ns > x->last_ns)
		x->last_ns = c->time_ns;
	if (is_exit) {
		x->exited = true;
		x->exit_ns = c->time_ns;
	} else {
		x->samples++;
	}
	for (i = 0; i < c->nengines; i++) {
		struct drec_engine_val v;
		struct eng_acc *e;

		if (!drec_client_engine(rec, i, &v) || !(e = get_eng(rp, x, v.engine)))
			continue;
		if (v.flags & DREC_E_JOBS) {
			e->jobs = v.jobs;
			e->flags |= DREC_E_JOBS;
		}
		if (!(v.flags & (DREC_E_BUSY | DREC_E_CYCLES)))
			continue;
		if (!e->seen && !e->exit_only) {
			/* Opened during the recording: it all counts, from 0. */
			bool from0 = !is_exit && (c->flags & DREC_C_NEW) && x->samples == 1;

			e->seen = !is_exit;
			e->exit_only = is_exit;
			e->first_busy = from0 ? 0 : v.busy_ns;
			e->first_cycles = from0 ? 0 : v.cycles;
			e->first_t = c->time_ns;
			e->s_cycles = v.cycles;
			e->s_total = v.total_cycles;
			e->s_t = c->time_ns;
			/* ... and it opened after the sample before this one. */
			if (from0)
				e->first_t -= c->time_ns - rp->r->info.start_mono_ns >
					      rp->r->info.interval_ns ? rp->r->info.interval_ns
								      : c->time_ns -
									rp->r->info.start_mono_ns;
		} else if (rp->tj && !is_exit && c->time_ns > e->last_t) {
			double util;

			e->flags |= v.flags & (DREC_E_BUSY | DREC_E_CYCLES | DREC_E_TOTAL_CYCLES);
			util = interval_util(rp, x, e, e->last_t, e->last_busy, e->last_cycles,
					     e->last_total, c->time_ns, v.busy_ns, v.cycles,
					     v.total_cycles, NULL);
			/* The utilisation of [last, now] is drawn from `last`. */
			if (!isnan(util))
				trace_counter(rp, x, eng_name(rp, c->dev, v.engine),
					      ts_us(rp, e->last_t), "util %", util * 100.0, false);
		}
		e->flags |= v.flags;
		if (v.busy_ns >= e->last_busy || c->time_ns >= e->last_t) {
			e->last_busy = v.busy_ns;
			e->last_cycles = v.cycles;
			e->last_total = v.total_cycles;
			e->last_t = c->time_ns;
		}
	}
	for (i = 0; i < c->nregions; i++) {
		struct drec_region_val v;
		struct reg_acc *g;

		if (!drec_client_region(rec, i, &v) || !(g = get_reg(rp, x, v.region)))
			continue;
		/* Only what the driver printed: amdgpu's legacy keys are resident only. */
		if (v.flags & DREC_R_TOTAL) {
			g->has_total = true;
			g->last_total = v.total;
			if (v.total > g->peak_total)
				g->peak_total = v.total;
		}
		if (v.flags & DREC_R_RESIDENT) {
			g->has_resident = true;
			g->last_resident = v.resident;
			if (v.resident > g->peak_resident)
				g->peak_resident = v.resident;
		}
		if (rp->tj && (v.flags & (DREC_R_TOTAL | DREC_R_RESIDENT))) {
			char name[128];

			snprintf(name, sizeof(name), "memory %s", reg_name(rp, c->dev, v.region));
			trace_counter(rp, x, name, ts_us(rp, c->time_ns), "bytes",
				      (double)(v.flags & DREC_R_TOTAL ? v.total : v.resident),
				      true);
		}
	}
	if (rp->tj && is_exit) {
		dac_json_obj_begin(rp->tj, NULL);
		dac_json_str(rp->tj, "name", "client exit");
		dac_json_str(rp->tj, "ph", "i");
		dac_json_str(rp->tj, "s", "p");
		dac_json_i64(rp->tj, "ts", ts_us(rp, c->time_ns));
		dac_json_u64(rp->tj, "pid", x->track);
		dac_json_obj_end(rp->tj);
	}
}

static uint64_t eng_delta(const struct eng_acc *e);
static uint64_t cyc_delta(const struct eng_acc *e);

/*
 * Processes in order of first appearance. A client held by several
 * processes (dup'd or inherited fd) counts in each of them, as in
 * `drmacct list --processes`.
 */
static int build_procs(struct rep *rp)
{
	size_t i, p, k, j;

	for (i = 0; i < rp->n; i++) {
		const struct cl *x = &rp->c[i];

		for (p = 0; p < x->npids; p++) {
			struct proc_acc *pa = NULL;

			for (j = 0; j < rp->nprocs && !pa; j++)
				if (rp->procs[j].pid == x->pids[p].pid)
					pa = &rp->procs[j];
			if (!pa) {
				pa = realloc(rp->procs, (rp->nprocs + 1) * sizeof(*pa));
				if (!pa)
					return -ENOMEM;
				rp->procs = pa;
				pa = &rp->procs[rp->nprocs++];
				memset(pa, 0, sizeof(*pa));
				pa->pid = x->pids[p].pid;
				memcpy(pa->comm, x->pids[p].comm, sizeof(pa->comm));
			}
			pa->nclients++;
			for (k = 0; k < x->neng; k++) {
				const char *name = eng_name(rp, x->dev, x->eng[k].idx);
				struct proc_eng *pe = NULL;

				if (!(x->eng[k].flags & (DREC_E_BUSY | DREC_E_CYCLES)))
					continue;
				for (j = 0; j < pa->neng && !pe; j++)
					if (pa->eng[j].dev == x->dev &&
					    !strcmp(pa->eng[j].name, name))
						pe = &pa->eng[j];
				if (!pe) {
					pe = realloc(pa->eng, (pa->neng + 1) * sizeof(*pe));
					if (!pe)
						return -ENOMEM;
					pa->eng = pe;
					pe = &pa->eng[pa->neng++];
					memset(pe, 0, sizeof(*pe));
					pe->dev = x->dev;
					pe->name = name;
				}
				if (x->eng[k].flags & DREC_E_BUSY) {
					pe->has_busy = true;
					pe->busy_ns += eng_delta(&x->eng[k]);
				}
				if (x->eng[k].flags & DREC_E_CYCLES) {
					pe->has_cycles = true;
					pe->cycles += cyc_delta(&x->eng[k]);
				}
			}
		}
	}
	return 0;
}

static void dev_label(const struct drec_reader *r, uint32_t dev, char *buf, size_t len)
{
	const struct drec_device *d = drec_device(r, dev);

	if (!d)
		snprintf(buf, len, "dev%u", dev);
	else if (!d->major)
		snprintf(buf, len, "drmacct-dev%u", d->minor);
	else
		dac_dev_name(d->major, d->minor, buf, len);
}

static uint64_t eng_delta(const struct eng_acc *e)
{
	if (e->exit_only)
		return e->last_busy;	/* all of its life: it was never sampled */
	return e->last_busy >= e->first_busy ? e->last_busy - e->first_busy : 0;
}

static uint64_t cyc_delta(const struct eng_acc *e)
{
	if (e->exit_only)
		return e->last_cycles;
	return e->last_cycles >= e->first_cycles ? e->last_cycles - e->first_cycles : 0;
}

/*
 * Average utilisation over the recording: busy time from the first value
 * (from 0 for a client opened during it, over the time since it opened);
 * without busy time, cycles between the first and last samples.
 */
static double eng_util(const struct rep *rp, const struct cl *x, const struct eng_acc *e,
		       enum dac_util_source *src)
{
	if (src)
		*src = DAC_UTIL_NONE;
	if (e->exit_only)
		return NAN;
	if (e->flags & DREC_E_BUSY)
		return interval_util(rp, x, e, e->first_t, e->first_busy, 0, 0, e->last_t,
				     e->last_busy, 0, 0, src);
	return interval_util(rp, x, e, e->s_t, 0, e->s_cycles, e->s_total, e->last_t, 0,
			     e->last_cycles, e->last_total, src);
}

static void print_text(FILE *f, struct rep *rp)
{
	const struct drec_reader *r = rp->r;
	size_t i, k, p;
	char dn[32], b1[32], b2[32], nb[CLI_PRINTABLE_MAX];

	fprintf(f, "Recording: version %u.%u, %" PRIu64 " records, %.3f s, interval %.0f ms, "
		"BPF %s\n", r->info.version_major, r->info.version_minor, rp->records,
		rp->last_ns > rp->first_ns ? (double)(rp->last_ns - rp->first_ns) / 1e9 : 0.0,
		(double)r->info.interval_ns / 1e6, r->info.flags & DREC_F_BPF ? "yes" : "no");
	if (rp->lost || rp->overflows)
		fprintf(f, "Lost: %" PRIu64 " events dropped (%" PRIu64 " overflows)\n", rp->lost,
			rp->overflows);
	if (r->nunknown)
		fprintf(f, "Skipped: %" PRIu64 " records of unknown type\n", r->nunknown);
	fprintf(f, "\nClients: %zu\n", rp->n);
	for (i = 0; i < rp->n; i++) {
		const struct cl *x = &rp->c[i];
		const struct drec_device *d = drec_device(r, x->dev);

		dev_label(r, x->dev, dn, sizeof(dn));
		fprintf(f, "  client %s%" PRIu64 " on %s (%s):", x->has_id ? "" : "pid:", x->id, dn,
			d && d->driver[0] ? cli_printable(d->driver, nb, sizeof(nb)) : "?");
		for (p = 0; p < x->npids; p++)
			fprintf(f, " %s[%u]", cli_printable(x->pids[p].comm, nb, sizeof(nb)),
				x->pids[p].pid);
		fprintf(f, ", %" PRIu64 " samples over %.3f s%s\n", x->samples,
			(double)(x->last_ns - x->first_ns) / 1e9, x->exited ? ", exited" : "");
		for (k = 0; k < x->neng; k++) {
			const struct eng_acc *e = &x->eng[k];
			enum dac_util_source src;
			double u = eng_util(rp, x, e, &src);
			uint64_t cap = eng_cap(rp, x, e);

			if (!eng_counts(e))
				continue;
			fprintf(f, "    %-16s ", cli_printable(eng_name(rp, x->dev, e->idx), nb,
							      sizeof(nb)));
			if (e->flags & DREC_E_BUSY)
				fprintf(f, "busy %12.6f s", (double)eng_delta(e) / 1e9);
			else
				fprintf(f, "busy %12s  ", "-");
			if (!isnan(u))
				fprintf(f, "  avg %6.2f%%", u * 100.0);
			else if (e->exit_only)
				fprintf(f, "  (whole life, at exit)");
			if (src == DAC_UTIL_CYCLES_TOTAL || src == DAC_UTIL_CYCLES_MAXFREQ)
				fprintf(f, " (%s)", dac_util_source_name(src));
			if (cap > 1)
				fprintf(f, "  capacity %" PRIu64, cap);
			if (e->flags & DREC_E_CYCLES)
				fprintf(f, "  cycles %" PRIu64, cyc_delta(e));
			if (e->flags & DREC_E_JOBS)
				fprintf(f, "  jobs %" PRIu64, e->jobs);
			fputc('\n', f);
		}
		for (k = 0; k < x->nreg; k++) {
			const struct reg_acc *g = &x->reg[k];
			const char *rn = cli_printable(reg_name(rp, x->dev, g->idx), nb, sizeof(nb));

			if (g->has_total)
				fprintf(f, "    memory %-9s peak %s, last %s\n", rn,
					cli_fmt_bytes(g->peak_total, b1, sizeof(b1)),
					cli_fmt_bytes(g->last_total, b2, sizeof(b2)));
			else if (g->has_resident)
				fprintf(f, "    memory %-9s peak %s, last %s (resident)\n", rn,
					cli_fmt_bytes(g->peak_resident, b1, sizeof(b1)),
					cli_fmt_bytes(g->last_resident, b2, sizeof(b2)));
			else
				fprintf(f, "    memory %-9s total and resident not printed\n", rn);
		}
	}
	/* Per process: busy time of the clients it held, by device and engine. */
	fprintf(f, "\nProcesses: %zu\n", rp->nprocs);
	for (i = 0; i < rp->nprocs; i++) {
		const struct proc_acc *pa = &rp->procs[i];

		fprintf(f, "  %s[%u]: %zu client%s\n", cli_printable(pa->comm, nb, sizeof(nb)),
			pa->pid, pa->nclients,
			pa->nclients == 1 ? "" : "s");
		for (k = 0; k < pa->neng; k++) {
			dev_label(r, pa->eng[k].dev, dn, sizeof(dn));
			fprintf(f, "    %-10s %-16s ", dn, cli_printable(pa->eng[k].name, nb, sizeof(nb)));
			if (pa->eng[k].has_busy)
				fprintf(f, "busy %12.6f s", (double)pa->eng[k].busy_ns / 1e9);
			else
				fprintf(f, "busy %12s  ", "-");
			if (pa->eng[k].has_cycles)
				fprintf(f, "  cycles %" PRIu64, pa->eng[k].cycles);
			fputc('\n', f);
		}
	}
}

static int print_json(FILE *f, struct rep *rp)
{
	const struct drec_reader *r = rp->r;
	struct dac_json j;
	size_t i, k;
	char dn[32];

	dac_json_init(&j, f, true);
	dac_json_obj_begin(&j, NULL);
	dac_json_str(&j, "schema", "drmacct-report/1");
	dac_json_u64(&j, "version_major", r->info.version_major);
	dac_json_u64(&j, "version_minor", r->info.version_minor);
	dac_json_bool(&j, "bpf", r->info.flags & DREC_F_BPF);
	dac_json_u64(&j, "start_realtime_ns", r->info.start_realtime_ns);
	dac_json_u64(&j, "interval_ns", r->info.interval_ns);
	dac_json_u64(&j, "duration_ns",
		     rp->last_ns > rp->first_ns ? rp->last_ns - rp->first_ns : 0);
	dac_json_u64(&j, "records", rp->records);
	dac_json_u64(&j, "unknown_records", r->nunknown);
	dac_json_u64(&j, "lost", rp->lost);
	dac_json_u64(&j, "overflows", rp->overflows);
	dac_json_arr_begin(&j, "problems");
	for (i = 0; i < r->nproblems; i++) {
		dac_json_obj_begin(&j, NULL);
		dac_json_str(&j, "kind", drec_problem_name(r->problems[i].kind));
		dac_json_u64(&j, "offset", r->problems[i].offset);
		dac_json_str(&j, "message", r->problems[i].msg);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "clients");
	for (i = 0; i < rp->n; i++) {
		const struct cl *x = &rp->c[i];
		const struct drec_device *d = drec_device(r, x->dev);

		dac_json_obj_begin(&j, NULL);
		dev_label(r, x->dev, dn, sizeof(dn));
		dac_json_str(&j, "device", dn);
		dac_json_str(&j, "driver", d ? d->driver : "");
		dac_json_u64_opt(&j, "client_id", x->has_id, x->id);
		dac_json_arr_begin(&j, "processes");
		for (k = 0; k < x->npids; k++) {
			dac_json_obj_begin(&j, NULL);
			dac_json_u64(&j, "pid", x->pids[k].pid);
			dac_json_str(&j, "comm", x->pids[k].comm);
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
		dac_json_u64(&j, "samples", x->samples);
		dac_json_u64(&j, "first_ns", x->first_ns);
		dac_json_u64(&j, "last_ns", x->last_ns);
		dac_json_bool(&j, "exited", x->exited);
		dac_json_arr_begin(&j, "engines");
		for (k = 0; k < x->neng; k++) {
			const struct eng_acc *e = &x->eng[k];
			enum dac_util_source src;
			double u = eng_util(rp, x, e, &src);

			if (!eng_counts(e))
				continue;
			dac_json_obj_begin(&j, NULL);
			dac_json_str(&j, "name", eng_name(rp, x->dev, e->idx));
			if (e->flags & DREC_E_BUSY) {
				dac_json_u64(&j, "busy_ns", eng_delta(e));
				dac_json_u64(&j, "busy_ns_final", e->last_busy);
			} else {
				dac_json_null(&j, "busy_ns");
				dac_json_null(&j, "busy_ns_final");
			}
			dac_json_bool(&j, "whole_life", e->exit_only);
			dac_json_double(&j, "utilization", u);
			if (src == DAC_UTIL_NONE)
				dac_json_null(&j, "utilization_source");
			else
				dac_json_str(&j, "utilization_source", dac_util_source_name(src));
			dac_json_u64(&j, "capacity", eng_cap(rp, x, e));
			if (e->flags & DREC_E_CYCLES) {
				dac_json_u64(&j, "cycles", cyc_delta(e));
				dac_json_u64(&j, "cycles_final", e->last_cycles);
			}
			if ((e->flags & DREC_E_TOTAL_CYCLES) && !e->exit_only)
				dac_json_u64(&j, "total_cycles", e->last_total >= e->s_total ?
						 e->last_total - e->s_total : 0);
			if (e->flags & DREC_E_JOBS)
				dac_json_u64(&j, "jobs", e->jobs);
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
		dac_json_arr_begin(&j, "memory");
		for (k = 0; k < x->nreg; k++) {
			dac_json_obj_begin(&j, NULL);
			dac_json_str(&j, "region", reg_name(rp, x->dev, x->reg[k].idx));
			if (x->reg[k].has_total) {
				dac_json_u64(&j, "peak_total", x->reg[k].peak_total);
				dac_json_u64(&j, "last_total", x->reg[k].last_total);
			} else {
				dac_json_null(&j, "peak_total");
				dac_json_null(&j, "last_total");
			}
			if (x->reg[k].has_resident) {
				dac_json_u64(&j, "peak_resident", x->reg[k].peak_resident);
				dac_json_u64(&j, "last_resident", x->reg[k].last_resident);
			} else {
				dac_json_null(&j, "peak_resident");
				dac_json_null(&j, "last_resident");
			}
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_arr_begin(&j, "processes");
	for (i = 0; i < rp->nprocs; i++) {
		const struct proc_acc *pa = &rp->procs[i];

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "pid", pa->pid);
		dac_json_str(&j, "comm", pa->comm);
		dac_json_u64(&j, "clients", pa->nclients);
		dac_json_arr_begin(&j, "engines");
		for (k = 0; k < pa->neng; k++) {
			dac_json_obj_begin(&j, NULL);
			dev_label(r, pa->eng[k].dev, dn, sizeof(dn));
			dac_json_str(&j, "device", dn);
			dac_json_str(&j, "name", pa->eng[k].name);
			dac_json_u64_opt(&j, "busy_ns", pa->eng[k].has_busy, pa->eng[k].busy_ns);
			if (pa->eng[k].has_cycles)
				dac_json_u64(&j, "cycles", pa->eng[k].cycles);
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);
	dac_json_obj_end(&j);
	return dac_json_finish(&j);
}

static void trace_meta(struct rep *rp)
{
	struct dac_json *j = rp->tj;
	char label[160], dn[32];
	size_t i;

	for (i = 0; i < rp->n; i++) {
		const struct cl *x = &rp->c[i];

		dev_label(rp->r, x->dev, dn, sizeof(dn));
		snprintf(label, sizeof(label), "client %s%" PRIu64 " %s %s[%u]",
			 x->has_id ? "" : "pid:", x->id, dn, x->npids ? x->pids[0].comm : "",
			 x->npids ? x->pids[0].pid : 0);
		dac_json_obj_begin(j, NULL);
		dac_json_str(j, "name", "process_name");
		dac_json_str(j, "ph", "M");
		dac_json_u64(j, "pid", x->track);
		dac_json_obj_begin(j, "args");
		dac_json_str(j, "name", label);
		dac_json_obj_end(j);
		dac_json_obj_end(j);
	}
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "trace-events", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *trace = NULL, *path;
	struct drec_reader r;
	struct drec_record rec;
	struct dac_json tj;
	struct rep rp;
	unsigned char *buf = NULL;
	size_t len, i;
	bool json = false;
	FILE *tf = NULL;
	int c, ret, rc = CLI_EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jt:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			trace = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_getopt_error(CMD, argv, c);
		}
	}
	if (optind >= argc)
		return cli_usage_error(CMD, "which file? (drmacct report FILE)");
	if (optind + 1 < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind + 1]);
	path = argv[optind];
	if (trace && json && !strcmp(trace, "-"))
		return cli_usage_error(CMD, "--json and --trace-events=- both want stdout");

	ret = drec_read_file(path, &buf, &len);
	if (ret) {
		cli_error(CMD, "cannot read %s: %s", path, strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	memset(&rp, 0, sizeof(rp));
	ret = drec_reader_init(&r, buf, len);
	if (ret) {
		for (i = 0; i < r.nproblems; i++)
			cli_error(CMD, "%s: offset %" PRIu64 ": %s: %s", path, r.problems[i].offset,
				  drec_problem_name(r.problems[i].kind), r.problems[i].msg);
		if (ret == -ENOMEM)
			cli_error(CMD, "out of memory");
		goto out;
	}
	rp.r = &r;
	if (trace) {
		tf = strcmp(trace, "-") ? fopen(trace, "we") : stdout;
		if (!tf) {
			cli_error(CMD, "cannot create %s: %s", trace, strerror(errno));
			goto out;
		}
		dac_json_init(&tj, tf, false);
		dac_json_obj_begin(&tj, NULL);
		dac_json_str(&tj, "displayTimeUnit", "ms");
		dac_json_arr_begin(&tj, "traceEvents");
		rp.tj = &tj;
	}
	while ((ret = drec_next(&r, &rec)) == 1) {
		uint64_t t = 0;

		rp.records++;
		if (!rec.known)
			continue;
		switch (rec.type) {
		case DREC_SAMPLE:
		case DREC_CLIENT_EXIT:
			on_client(&rp, &rec);
			t = rec.client.time_ns;
			break;
		case DREC_HOLDERS:
			on_holders(&rp, &rec);
			t = rec.client.time_ns;
			break;
		case DREC_CAPACITY:
			on_capacity(&rp, &rec);
			t = rec.client.time_ns;
			break;
		case DREC_LOST:
			rp.lost += rec.count;
			t = rec.time_ns;
			if (rp.tj) {
				dac_json_obj_begin(&tj, NULL);
				dac_json_str(&tj, "name", "lost");
				dac_json_str(&tj, "ph", "i");
				dac_json_str(&tj, "s", "g");
				dac_json_i64(&tj, "ts", ts_us(&rp, rec.time_ns));
				dac_json_obj_begin(&tj, "args");
				dac_json_u64(&tj, "count", rec.count);
				dac_json_obj_end(&tj);
				dac_json_obj_end(&tj);
			}
			break;
		case DREC_OVERFLOW:
			rp.overflows++;
			t = rec.time_ns;
			break;
		default:
			break;
		}
		if (t && (!rp.first_ns || t < rp.first_ns))
			rp.first_ns = t;
		if (t > rp.last_ns)
			rp.last_ns = t;
		if (rp.err)
			break;
	}
	if (ret >= 0 && !rp.err)
		rp.err = build_procs(&rp);
	if (ret < 0 || rp.err) {
		cli_error(CMD, "out of memory");
		goto out;
	}
	if (rp.tj) {
		trace_meta(&rp);
		dac_json_arr_end(&tj);
		dac_json_obj_end(&tj);
		ret = dac_json_finish(&tj);
		if (!ret && fflush(tf))
			ret = -EIO;
		if (ret) {
			cli_error(CMD, "writing %s failed", trace);
			goto out;
		}
	}
	if (json)
		ret = print_json(stdout, &rp);
	else if (!trace || strcmp(trace, "-"))
		print_text(stdout, &rp);
	if (cli_output_done(CMD, ret))
		goto out;
	for (i = 0; i < r.nproblems; i++)
		cli_error(CMD, "%s: offset %" PRIu64 ": %s: %s", path, r.problems[i].offset,
			  drec_problem_name(r.problems[i].kind), r.problems[i].msg);
	rc = r.nproblems ? CLI_EXIT_FAIL : CLI_EXIT_OK;
out:
	if (tf && tf != stdout)
		fclose(tf);
	for (i = 0; i < rp.n; i++) {
		free(rp.c[i].pids);
		free(rp.c[i].eng);
		free(rp.c[i].reg);
	}
	free(rp.c);
	for (i = 0; i < rp.nprocs; i++)
		free(rp.procs[i].eng);
	free(rp.procs);
	drec_reader_free(&r);
	free(buf);
	return rc;
}

DRMACCT_COMMAND(report, cmd_report, "summarise a record file (text, JSON, Perfetto trace)");
