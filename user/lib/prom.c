// SPDX-License-Identifier: MIT
/*
 * prom.c - Prometheus text exposition of DRM client usage (see prom.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "json.h"
#include "prom.h"
#include "tracker.h"

struct jobs_ent {
	dev_t rdev;
	uint64_t id;		/* client id, or pid << 32 | fd without one */
	bool has_id;
	char *engine;
	uint64_t jobs;
};

struct dac_prom {
	struct dac_discover *d;
	struct dac_tracker *t;
	enum dac_profile profile;
	struct dac_discover_stats st;
	struct jobs_ent *jobs;
	size_t njobs, cap_jobs;
	uint64_t parse_errors;	/* DRM fds of the last walk with spec error findings */
	uint64_t scrape_ns;	/* how long the last walk took */
	uint64_t scrape_errors;	/* scrapes that failed since dac_prom_new() */
	char *version;		/* for drmacct_build_info; NULL: not printed */
};

struct dac_prom *dac_prom_new(const struct dac_discover_opts *o, enum dac_profile profile)
{
	struct dac_prom *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->profile = profile;
	p->d = dac_discover_new(o);
	if (!p->d) {
		int e = errno;

		free(p);
		errno = e;
		return NULL;
	}
	p->t = dac_tracker_new();
	if (!p->t) {
		dac_discover_free(p->d);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void clear_jobs(struct dac_prom *p)
{
	for (size_t i = 0; i < p->njobs; i++)
		free(p->jobs[i].engine);
	p->njobs = 0;
}

void dac_prom_free(struct dac_prom *p)
{
	if (!p)
		return;
	clear_jobs(p);
	free(p->jobs);
	dac_tracker_free(p->t);
	dac_discover_free(p->d);
	free(p->version);
	free(p);
}

int dac_prom_set_version(struct dac_prom *p, const char *version)
{
	char *v = version ? strdup(version) : NULL;

	if (version && !v)
		return -ENOMEM;
	free(p->version);
	p->version = v;
	return 0;
}

/* "<prefix>-jobs-<engine>: N [job|jobs]" (v3d and others): remember it. */
static int note_jobs(struct dac_prom *p, const struct dac_fd_info *fdi,
		     const struct dac_fdinfo *fi)
{
	for (size_t i = 0; i < fi->nkv; i++) {
		const struct dac_kv *kv = &fi->kv[i];
		const char *e;
		struct jobs_ent *j;

		if (kv->type != DAC_KEY_DRIVER_SPECIFIC || !kv->has_value)
			continue;
		e = strstr(kv->key, "-jobs-");
		if (!e || !e[6])
			continue;
		if (p->njobs == p->cap_jobs) {
			size_t n = p->cap_jobs ? 2 * p->cap_jobs : 16;
			struct jobs_ent *nj = realloc(p->jobs, n * sizeof(*nj));

			if (!nj)
				return -ENOMEM;
			p->jobs = nj;
			p->cap_jobs = n;
		}
		j = &p->jobs[p->njobs];
		j->engine = strdup(e + 6);
		if (!j->engine)
			return -ENOMEM;
		j->rdev = fdi->rdev;
		j->has_id = fi->has_client_id;
		j->id = fi->has_client_id ? fi->client_id
					  : ((uint64_t)fdi->pid << 32 | (uint32_t)fdi->fd);
		j->jobs = kv->value;
		p->njobs++;
	}
	return 0;
}

static int scrape_cb(const struct dac_fd_info *fdi, void *arg)
{
	struct dac_prom *p = arg;
	struct dac_fdinfo fi;
	int ret;

	ret = dac_fdinfo_parse(fdi->text, fdi->len, p->profile, &fi);
	if (ret)
		return ret;
	if (dac_fdinfo_stats(&fi) != DAC_STATS_NONE && dac_fdinfo_errors(&fi))
		p->parse_errors++;
	ret = dac_tracker_add_fd(p->t, fdi->pid, fdi->fd, fdi->comm, fdi->rdev, &fi,
				 fdi->read_ns);
	if (!ret && dac_fdinfo_stats(&fi) != DAC_STATS_NONE)
		ret = note_jobs(p, fdi, &fi);
	dac_fdinfo_free(&fi);
	return ret;
}

/* ---- formatting ---- */

void dac_prom_label_value(FILE *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u), i = 0;

	while (i < n) {
		size_t seq;

		if (u[i] == '\\') {
			fputs("\\\\", out);
		} else if (u[i] == '"') {
			fputs("\\\"", out);
		} else if (u[i] == '\n') {
			fputs("\\n", out);
		} else if (u[i] < 0x80) {
			fputc(u[i], out);
		} else if ((seq = dac_utf8_seq(u + i, n - i))) {
			fwrite(u + i, 1, seq, out);
			i += seq;
			continue;
		} else {
			fputs("\xef\xbf\xbd", out);	/* U+FFFD for a broken byte */
		}
		i++;
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * name{driver="",device="",client_id="" -- the key of a client. A client
 * without drm-client-id is told apart by holder="PID:FD" of its lowest holder.
 */
static void client_labels(FILE *f, const char *name, const struct dac_tk_client *c)
{
	char dn[32];

	dac_dev_name(major(c->rdev), minor(c->rdev), dn, sizeof(dn));
	fprintf(f, "%s{driver=\"", name);
	dac_prom_label_value(f, c->driver);
	fprintf(f, "\",device=\"%s\",client_id=\"", dn);
	if (c->has_client_id)
		fprintf(f, "%" PRIu64, c->client_id);
	fputc('"', f);
	if (!c->has_client_id && c->nholders)
		fprintf(f, ",holder=\"%d:%d\"", (int)c->holders[0].pid, c->holders[0].fd);
}

/* drmacct_client_info: the key, then who holds the client, value 1. */
static void client_info(FILE *f, const struct dac_tk_client *c)
{
	client_labels(f, "drmacct_client_info", c);
	if (c->nholders)
		fprintf(f, ",pid=\"%d\"", (int)c->holders[0].pid);
	fputs(",comm=\"", f);
	if (c->nholders)
		dac_prom_label_value(f, c->holders[0].comm);
	fputs("\",holders=\"", f);
	for (size_t h = 0; h < c->nholders; h++)
		fprintf(f, "%s%d:%d", h ? "," : "", (int)c->holders[h].pid, c->holders[h].fd);
	fputc('"', f);
	/* Known from the BPF client table only (--source=bpf). */
	if (c->cgroup) {
		fputs(",cgroup=\"", f);
		dac_prom_label_value(f, c->cgroup);
		fputc('"', f);
	}
	fputs("} 1\n", f);
}

/* Is client @i the first of its device in the tracker? Counts it in *@cnt. */
static bool first_of_device(const struct dac_tracker *t, size_t i, size_t *cnt)
{
	const struct dac_tk_client *c = dac_tracker_client(t, i);
	size_t n = dac_tracker_nclients(t);
	bool first = true;

	*cnt = 0;
	for (size_t j = 0; j < n; j++) {
		if (dac_tracker_client(t, j)->rdev == c->rdev) {
			(*cnt)++;
			if (j < i)
				first = false;
		}
	}
	return first;
}

static void ns_seconds(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64 "\n", ns / UINT64_C(1000000000),
		ns % UINT64_C(1000000000));
}

static const struct jobs_ent *find_jobs(const struct dac_prom *p, const struct dac_tk_client *c,
					const char *engine)
{
	uint64_t id = c->client_id;

	if (!c->has_client_id)
		id = c->nholders ? ((uint64_t)c->holders[0].pid << 32 |
				    (uint32_t)c->holders[0].fd) : 0;
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i].rdev == c->rdev && p->jobs[i].has_id == c->has_client_id &&
		    p->jobs[i].id == id && !strcmp(p->jobs[i].engine, engine))
			return &p->jobs[i];
	return NULL;
}

enum eng_metric { M_BUSY, M_CYCLES, M_TOTAL, M_JOBS, M_CAP, M_FREQ, M__N };

static const struct {
	const char *name, *type, *help;
} eng_metrics[M__N] = {
	[M_BUSY] = { "drmacct_client_engine_busy_seconds_total", "counter",
		     "Time the engine spent on the client's work (drm-engine-<e>)." },
	[M_CYCLES] = { "drmacct_client_engine_cycles_total", "counter",
		       "Engine cycles spent on the client's work (drm-cycles-<e>)." },
	[M_TOTAL] = { "drmacct_client_engine_total_cycles_total", "counter",
		      "Cycles the engine's clock ran while the client existed "
		      "(drm-total-cycles-<e>)." },
	[M_JOBS] = { "drmacct_client_engine_jobs_total", "counter",
		     "Jobs of the client the engine completed (driver-specific <drv>-jobs-<e>)." },
	[M_CAP] = { "drmacct_client_engine_capacity", "gauge",
		    "Engine instances that can run the client's jobs at once "
		    "(drm-engine-capacity-<e>, 1 when not printed)." },
	[M_FREQ] = { "drmacct_client_engine_max_frequency_hertz", "gauge",
		     "Maximum engine frequency (drm-maxfreq-<e>)." },
};

static bool eng_has(const struct dac_prom *p, const struct dac_tk_client *c,
		    const struct dac_tk_engine *e, enum eng_metric m, uint64_t *v)
{
	const struct jobs_ent *j;

	if (!e->present)
		return false;
	switch (m) {
	case M_BUSY:
		*v = e->busy.value;
		return e->has_busy;
	case M_CYCLES:
		*v = e->cycles.value;
		return e->has_cycles;
	case M_TOTAL:
		*v = e->total_cycles.value;
		return e->has_total_cycles;
	case M_JOBS:
		j = find_jobs(p, c, e->name);
		*v = j ? j->jobs : 0;
		return j != NULL;
	case M_CAP:
		*v = e->capacity;
		return true;
	case M_FREQ:
		*v = e->maxfreq_hz;
		return e->has_maxfreq;
	default:
		return false;
	}
}

static const char *const kinds[] = { "total", "shared", "resident", "purgeable", "active" };

static bool reg_has(const struct dac_tk_region *r, size_t k, uint64_t *v)
{
	switch (k) {
	case 0:
		*v = r->total;
		return r->has_total;
	case 1:
		*v = r->shared;
		return r->has_shared;
	case 2:
		*v = r->resident;
		return r->has_resident;
	case 3:
		*v = r->purgeable;
		return r->has_purgeable;
	default:
		*v = r->active;
		return r->has_active;
	}
}

static void write_self(const struct dac_prom *p, FILE *f);

/* One sample per device with clients: drmacct_clients, or drmacct_device_info. */
static void write_devices(FILE *f, const struct dac_tracker *t, bool info)
{
	size_t n = dac_tracker_nclients(t), cnt;
	char dn[32];

	for (size_t i = 0; i < n; i++) {
		const struct dac_tk_client *c = dac_tracker_client(t, i);

		if (!first_of_device(t, i, &cnt))
			continue;
		dac_dev_name(major(c->rdev), minor(c->rdev), dn, sizeof(dn));
		fprintf(f, "%s{driver=\"", info ? "drmacct_device_info" : "drmacct_clients");
		dac_prom_label_value(f, c->driver);
		fprintf(f, "\",device=\"%s\"", dn);
		if (info) {
			fputs(",pdev=\"", f);
			dac_prom_label_value(f, c->pdev);
			fputs("\"} 1\n", f);
		} else {
			fprintf(f, "} %zu\n", cnt);
		}
	}
}

static void write_all(const struct dac_prom *p, FILE *f)
{
	const struct dac_tracker *t = p->t;
	size_t n = dac_tracker_nclients(t), i, k, m;
	bool any;
	uint64_t v;

	for (m = 0; m < M__N; m++) {
		any = false;
		for (i = 0; i < n; i++) {
			const struct dac_tk_client *c = dac_tracker_client(t, i);

			for (k = 0; k < c->nengines; k++) {
				const struct dac_tk_engine *e = &c->engines[k];

				if (!eng_has(p, c, e, m, &v))
					continue;
				if (!any)
					family(f, eng_metrics[m].name, eng_metrics[m].type,
					       eng_metrics[m].help);
				any = true;
				client_labels(f, eng_metrics[m].name, c);
				fputs(",engine=\"", f);
				dac_prom_label_value(f, e->name);
				fputs("\"} ", f);
				if (m == M_BUSY)
					ns_seconds(f, v);
				else
					fprintf(f, "%" PRIu64 "\n", v);
			}
		}
	}
	any = false;
	for (i = 0; i < n; i++) {
		const struct dac_tk_client *c = dac_tracker_client(t, i);

		for (k = 0; k < c->nregions; k++) {
			for (m = 0; m < 5; m++) {
				if (!reg_has(&c->regions[k], m, &v))
					continue;
				if (!any)
					family(f, "drmacct_client_memory_bytes", "gauge",
					       "Memory of the client by region and kind "
					       "(drm-<kind>-<region>; resident includes the "
					       "legacy drm-memory-<region>).");
				any = true;
				client_labels(f, "drmacct_client_memory_bytes", c);
				fputs(",region=\"", f);
				dac_prom_label_value(f, c->regions[k].name);
				fprintf(f, "\",kind=\"%s\"} %" PRIu64 "\n", kinds[m], v);
			}
		}
	}
	if (n) {
		family(f, "drmacct_client_info", "gauge",
		       "Always 1: the process name, lowest pid and every pid:fd holding the "
		       "client (join on driver, device, client_id).");
		for (i = 0; i < n; i++)
			client_info(f, dac_tracker_client(t, i));
	}
	/* Clients per (driver, device), and what the device is. */
	family(f, "drmacct_clients", "gauge", "DRM clients open on the device.");
	write_devices(f, t, false);
	if (n)
		family(f, "drmacct_device_info", "gauge",
		       "Always 1: the device's parent device (drm-pdev, \"\" when not printed).");
	write_devices(f, t, true);
	family(f, "drmacct_discovery_unreadable", "gauge",
	       "What the last /proc walk could not read: processes and DRM fds denied "
	       "(run as root to see every client), or gone during the walk.");
	fprintf(f, "drmacct_discovery_unreadable{what=\"denied_processes\"} %" PRIu64 "\n",
		p->st.denied_procs);
	fprintf(f, "drmacct_discovery_unreadable{what=\"denied_fds\"} %" PRIu64 "\n",
		p->st.denied_fds);
	fprintf(f, "drmacct_discovery_unreadable{what=\"unexamined_fds\"} %" PRIu64 "\n",
		p->st.denied_stat_fds);
	fprintf(f, "drmacct_discovery_unreadable{what=\"exited_processes\"} %" PRIu64 "\n",
		p->st.gone_procs);
	fprintf(f, "drmacct_discovery_unreadable{what=\"closed_fds\"} %" PRIu64 "\n",
		p->st.gone_fds);
	family(f, "drmacct_drm_fds_without_usage_stats", "gauge",
	       "DRM fds of the last /proc walk whose driver prints no usage stats "
	       "(no drm- key in their fdinfo): open, but nothing to export.");
	fprintf(f, "drmacct_drm_fds_without_usage_stats %" PRIu64 "\n", dac_tracker_nostats(t));
	write_self(p, f);
}

/* The exporter's own health: failures by cause, timing, errors, build. */
static void write_self(const struct dac_prom *p, FILE *f)
{
	const struct dac_discover_stats *st = &p->st;

	family(f, "drmacct_discovery_failures", "gauge",
	       "Processes and fds the last /proc walk could not use, by reason: "
	       "permission (denied; run as root), vanished (exited or closed during "
	       "the walk), parse (DRM fdinfo with spec errors, exported as far as it "
	       "could be read), other.");
	fprintf(f, "drmacct_discovery_failures{reason=\"permission\"} %" PRIu64 "\n",
		st->denied_procs + st->denied_fds + st->denied_stat_fds);
	fprintf(f, "drmacct_discovery_failures{reason=\"vanished\"} %" PRIu64 "\n",
		st->gone_procs + st->gone_fds);
	fprintf(f, "drmacct_discovery_failures{reason=\"parse\"} %" PRIu64 "\n",
		p->parse_errors);
	fprintf(f, "drmacct_discovery_failures{reason=\"other\"} %" PRIu64 "\n", st->errors);
	family(f, "drmacct_scrape_duration_seconds", "gauge",
	       "How long this scrape's /proc walk and parsing took.");
	fputs("drmacct_scrape_duration_seconds ", f);
	ns_seconds(f, p->scrape_ns);
	family(f, "drmacct_scrape_errors_total", "counter",
	       "Scrapes that failed (answered 500) since the exporter started.");
	fprintf(f, "drmacct_scrape_errors_total %" PRIu64 "\n", p->scrape_errors);
	if (p->version) {
		family(f, "drmacct_build_info", "gauge",
		       "Always 1; the version of drmacct serving these metrics.");
		fputs("drmacct_build_info{version=\"", f);
		dac_prom_label_value(f, p->version);
		fputs("\"} 1\n", f);
	}
}

static int collect(struct dac_prom *p)
{
	uint64_t t0 = dac_now_ns();
	int ret, ret2;

	clear_jobs(p);
	p->parse_errors = 0;
	ret = dac_tracker_begin(p->t, t0);
	if (ret)
		return ret;
	ret = dac_discover_run(p->d, scrape_cb, p, &p->st);
	ret2 = dac_tracker_end(p->t);
	p->scrape_ns = dac_now_ns() - t0;
	if (ret == -ESRCH)	/* --pid and the process is gone: no clients */
		ret = 0;
	return ret ? ret : ret2;
}

int dac_prom_scrape(struct dac_prom *p, FILE *out)
{
	int ret = collect(p);

	if (ret) {
		p->scrape_errors++;
		return ret;
	}
	write_all(p, out);
	if (ferror(out) || fflush(out))
		return -EIO;
	return 0;
}
