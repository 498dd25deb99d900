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

/* One engine of a client's series: counters (the largest value seen) and gauges. */
struct ps_engine {
	char *name;
	uint64_t busy, cycles, total_cycles, jobs, capacity, maxfreq;
	bool has_busy, has_cycles, has_total, has_jobs, has_maxfreq;
};

/*
 * The series of one client. Kept while the client is open and, after it
 * is gone, until it has been missing from drop_after scrapes in a row;
 * then its counters go to its device's retired totals and it is freed.
 */
struct ps_client {
	dev_t rdev;
	bool has_id;
	uint64_t id;			/* client id, or pid << 32 | fd without one */
	char *driver;
	unsigned int missed;		/* scrapes in a row that did not see it */
	struct ps_engine *eng;
	size_t neng;
	pid_t pid;			/* drmacct_client_info: lowest holder ... */
	char *comm, *holders, *cgroup;	/* ... its comm, every pid:fd, its cgroup */
	const struct dac_tk_client *live;	/* this scrape's client, NULL when gone */
	bool matched;
};

/* Counters of the clients of a device that were dropped, per engine. */
struct ps_retired {
	char *engine;
	uint64_t busy, cycles, jobs;
	bool has_busy, has_cycles, has_jobs;
};

struct ps_device {
	dev_t rdev;
	char *driver, *pdev;
	uint64_t gone;			/* clients dropped since the exporter started */
	size_t nlive;			/* clients open in this scrape */
	struct ps_retired *ret;
	size_t nret;
};

struct dac_prom {
	struct dac_discover *d;
	struct dac_tracker *t;
	enum dac_profile profile;
	char *proc_root;
	struct dac_discover_stats st;
	struct jobs_ent *jobs;
	size_t njobs, cap_jobs;
	struct ps_client *cl;		/* sorted by (rdev, has_id, id) */
	size_t ncl;
	struct ps_device *dev;		/* in the order first seen */
	size_t ndev;
	unsigned int drop_after;
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
	p->drop_after = DAC_PROM_DROP_AFTER;
	p->proc_root = strdup(o->proc_root ? o->proc_root : "/proc");
	if (!p->proc_root) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->d = dac_discover_new(o);
	if (!p->d) {
		int e = errno;

		free(p->proc_root);
		free(p);
		errno = e;
		return NULL;
	}
	p->t = dac_tracker_new();
	if (!p->t) {
		dac_discover_free(p->d);
		free(p->proc_root);
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/*
 * Grow the array @arr of @n elements of @size bytes by one zeroed element:
 * the new array (its element @n is the new one), or NULL with @arr unchanged.
 */
static void *append_zeroed(void *arr, size_t n, size_t size)
{
	char *na = realloc(arr, (n + 1) * size);

	if (na)
		memset(na + n * size, 0, size);
	return na;
}

static void clear_jobs(struct dac_prom *p)
{
	for (size_t i = 0; i < p->njobs; i++)
		free(p->jobs[i].engine);
	p->njobs = 0;
}

static void ps_client_free(struct ps_client *c)
{
	for (size_t k = 0; k < c->neng; k++)
		free(c->eng[k].name);
	free(c->eng);
	free(c->driver);
	free(c->comm);
	free(c->holders);
	free(c->cgroup);
}

void dac_prom_free(struct dac_prom *p)
{
	if (!p)
		return;
	clear_jobs(p);
	free(p->jobs);
	for (size_t i = 0; i < p->ncl; i++)
		ps_client_free(&p->cl[i]);
	free(p->cl);
	for (size_t i = 0; i < p->ndev; i++) {
		for (size_t k = 0; k < p->dev[i].nret; k++)
			free(p->dev[i].ret[k].engine);
		free(p->dev[i].ret);
		free(p->dev[i].driver);
		free(p->dev[i].pdev);
	}
	free(p->dev);
	dac_tracker_free(p->t);
	dac_discover_free(p->d);
	free(p->proc_root);
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

int dac_prom_set_drop_after(struct dac_prom *p, unsigned int scrapes)
{
	if (scrapes < 1)
		return -EINVAL;
	p->drop_after = scrapes;
	return 0;
}

size_t dac_prom_nseries_clients(const struct dac_prom *p)
{
	return p->ncl;
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

/* ---- the series across scrapes ---- */

static uint64_t client_key(const struct dac_tk_client *c)
{
	if (c->has_client_id)
		return c->client_id;
	return c->nholders ? ((uint64_t)c->holders[0].pid << 32 | (uint32_t)c->holders[0].fd) : 0;
}

static int key_cmp(dev_t ra, bool ha, uint64_t ia, dev_t rb, bool hb, uint64_t ib)
{
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ha != hb)
		return ha ? 1 : -1;
	return ia < ib ? -1 : ia > ib;
}

static int ps_cmp(const void *a, const void *b)
{
	const struct ps_client *x = a, *y = b;

	return key_cmp(x->rdev, x->has_id, x->id, y->rdev, y->has_id, y->id);
}

static struct ps_client *ps_find(struct dac_prom *p, size_t n, dev_t rdev, bool has_id,
				 uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(p->cl[mid].rdev, p->cl[mid].has_id, p->cl[mid].id, rdev, has_id, id);

		if (!c)
			return &p->cl[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct ps_device *dev_of(struct dac_prom *p, dev_t rdev)
{
	for (size_t i = 0; i < p->ndev; i++)
		if (p->dev[i].rdev == rdev)
			return &p->dev[i];
	return NULL;
}

/* Replace *@dst by a copy of @src (NULL stays NULL). 0 or -ENOMEM. */
static int set_str(char **dst, const char *src)
{
	char *n;

	if (*dst && src && !strcmp(*dst, src))
		return 0;
	n = src ? strdup(src) : NULL;
	if (src && !n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static const struct jobs_ent *find_jobs(const struct dac_prom *p, const struct ps_client *c,
					const char *engine)
{
	for (size_t i = 0; i < p->njobs; i++)
		if (p->jobs[i].rdev == c->rdev && p->jobs[i].has_id == c->has_id &&
		    p->jobs[i].id == c->id && !strcmp(p->jobs[i].engine, engine))
			return &p->jobs[i];
	return NULL;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * The cgroup v2 path of process @pid ("0::PATH" in PROC/PID/cgroup), NULL
 * when it has none or it cannot be read. Sets *@err on -ENOMEM only.
 */
static char *read_cgroup(const struct dac_prom *p, pid_t pid, int *err)
{
	char *path = NULL, *line = NULL, *out = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	if (asprintf(&path, "%s/%d/cgroup", p->proc_root, (int)pid) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	f = fopen(path, "re");
	free(path);
	if (!f)
		return NULL;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::", 3))
			continue;
		if (line[n - 1] == '\n')
			line[n - 1] = 0;
		out = strdup(line + 3);
		if (!out)
			*err = -ENOMEM;
		break;
	}
	free(line);
	fclose(f);
	return out;
}

/* Take this scrape's view of client @c into its series @s. */
static int ps_update(struct dac_prom *p, struct ps_client *s, const struct dac_tk_client *c)
{
	char *holders = NULL, *cg = NULL;
	size_t len = 0;
	FILE *m;
	int err = 0;

	s->live = c;
	s->missed = 0;
	s->matched = true;
	if (set_str(&s->driver, c->driver))
		return -ENOMEM;
	for (size_t k = 0; k < c->nengines; k++) {
		const struct dac_tk_engine *e = &c->engines[k];
		const struct jobs_ent *j;
		struct ps_engine *pe = NULL;

		if (!e->present)
			continue;
		for (size_t i = 0; i < s->neng && !pe; i++)
			if (!strcmp(s->eng[i].name, e->name))
				pe = &s->eng[i];
		if (!pe) {
			struct ps_engine *ne = append_zeroed(s->eng, s->neng, sizeof(*ne));

			if (!ne)
				return -ENOMEM;
			s->eng = ne;
			pe = &ne[s->neng];
			pe->name = strdup(e->name);
			if (!pe->name)
				return -ENOMEM;
			s->neng++;	/* only with its name */
		}
		/* counters never go back, also across a gap in the client's life */
		if (e->has_busy) {
			pe->busy = max_u64(pe->busy, e->busy.value);
			pe->has_busy = true;
		}
		if (e->has_cycles) {
			pe->cycles = max_u64(pe->cycles, e->cycles.value);
			pe->has_cycles = true;
		}
		if (e->has_total_cycles) {
			pe->total_cycles = max_u64(pe->total_cycles, e->total_cycles.value);
			pe->has_total = true;
		}
		j = find_jobs(p, s, e->name);
		if (j) {
			pe->jobs = max_u64(pe->jobs, j->jobs);
			pe->has_jobs = true;
		}
		pe->capacity = e->capacity;
		pe->maxfreq = e->maxfreq_hz;
		pe->has_maxfreq = e->has_maxfreq;
	}
	m = open_memstream(&holders, &len);
	if (!m)
		return -ENOMEM;
	for (size_t h = 0; h < c->nholders; h++)
		fprintf(m, "%s%d:%d", h ? "," : "", (int)c->holders[h].pid, c->holders[h].fd);
	if (fclose(m))
		return -ENOMEM;
	free(s->holders);
	s->holders = holders;
	s->pid = c->nholders ? c->holders[0].pid : 0;
	if (set_str(&s->comm, c->nholders ? c->holders[0].comm : ""))
		return -ENOMEM;
	/* The BPF client table knows the opener's cgroup; else the holder's. */
	if (c->cgroup)
		return set_str(&s->cgroup, c->cgroup);
	if (c->nholders)
		cg = read_cgroup(p, c->holders[0].pid, &err);
	free(s->cgroup);
	s->cgroup = cg;
	return err;
}

static int retire(struct dac_prom *p, struct ps_client *s)
{
	struct ps_device *d = dev_of(p, s->rdev);

	for (size_t k = 0; k < s->neng; k++) {
		const struct ps_engine *e = &s->eng[k];
		struct ps_retired *r = NULL;

		for (size_t i = 0; i < d->nret && !r; i++)
			if (!strcmp(d->ret[i].engine, e->name))
				r = &d->ret[i];
		if (!r) {
			struct ps_retired *nr = append_zeroed(d->ret, d->nret, sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			d->ret = nr;
			r = &nr[d->nret];
			r->engine = strdup(e->name);
			if (!r->engine)
				return -ENOMEM;
			d->nret++;	/* only with its name */
		}
		r->busy += e->busy;
		r->cycles += e->cycles;
		r->jobs += e->jobs;
		r->has_busy |= e->has_busy;
		r->has_cycles |= e->has_cycles;
		r->has_jobs |= e->has_jobs;
	}
	d->gone++;
	return 0;
}

/*
 * After a walk: the series of every client the tracker has now, those of
 * clients gone for fewer than drop_after scrapes, and the device totals.
 */
static int update_series(struct dac_prom *p)
{
	size_t n = dac_tracker_nclients(p->t), old = p->ncl, keep;
	struct ps_client *ncl;
	int ret = 0;

	ncl = realloc(p->cl, (old + n + 1) * sizeof(*ncl));
	if (!ncl)
		return -ENOMEM;
	p->cl = ncl;
	for (size_t i = 0; i < old; i++) {
		p->cl[i].matched = false;
		p->cl[i].live = NULL;
	}
	for (size_t i = 0; i < p->ndev; i++)
		p->dev[i].nlive = 0;
	for (size_t i = 0; i < n; i++) {
		const struct dac_tk_client *c = dac_tracker_client(p->t, i);
		uint64_t id = client_key(c);
		struct ps_client *s = ps_find(p, old, c->rdev, c->has_client_id, id);
		struct ps_device *d = dev_of(p, c->rdev);

		if (!d) {
			struct ps_device *nd = append_zeroed(p->dev, p->ndev, sizeof(*nd));

			if (!nd)
				return -ENOMEM;
			p->dev = nd;
			d = &nd[p->ndev++];
			d->rdev = c->rdev;
		}
		d->nlive++;
		if (set_str(&d->driver, c->driver) || set_str(&d->pdev, c->pdev))
			return -ENOMEM;
		if (!s) {
			s = &p->cl[p->ncl++];
			memset(s, 0, sizeof(*s));
			s->rdev = c->rdev;
			s->has_id = c->has_client_id;
			s->id = id;
		}
		ret = ps_update(p, s, c);
		if (ret)
			break;
	}
	/*
	 * Gone: kept for drop_after - 1 more scrapes, then retired. (After a
	 * failed update nothing is counted as gone: the scrape failed.)
	 */
	keep = 0;
	for (size_t i = 0; i < p->ncl; i++) {
		struct ps_client *s = &p->cl[i];

		if (!ret && !s->matched && ++s->missed >= p->drop_after) {
			ret = retire(p, s);
			if (!ret) {
				ps_client_free(s);
				continue;
			}
		}
		p->cl[keep++] = *s;
	}
	p->ncl = keep;
	qsort(p->cl, p->ncl, sizeof(*p->cl), ps_cmp);
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

/* name{driver="",device="" -- the key of a device. */
static void device_labels(FILE *f, const char *name, dev_t rdev, const char *driver)
{
	char dn[32];

	dac_dev_name(major(rdev), minor(rdev), dn, sizeof(dn));
	fprintf(f, "%s{driver=\"", name);
	dac_prom_label_value(f, driver);
	fprintf(f, "\",device=\"%s\"", dn);
}

/*
 * name{driver="",device="",client_id="" -- the key of a client. A client
 * without drm-client-id is told apart by holder="PID:FD" of its lowest holder.
 */
static void client_labels(FILE *f, const char *name, const struct ps_client *c)
{
	device_labels(f, name, c->rdev, c->driver);
	fputs(",client_id=\"", f);
	if (c->has_id)
		fprintf(f, "%" PRIu64, c->id);
	fputc('"', f);
	if (!c->has_id)
		fprintf(f, ",holder=\"%d:%d\"", (int)(c->id >> 32), (int)(uint32_t)c->id);
}

/* drmacct_client_info: the key, then who holds the client, value 1. */
static void client_info(FILE *f, const struct ps_client *c)
{
	client_labels(f, "drmacct_client_info", c);
	if (c->pid)
		fprintf(f, ",pid=\"%d\"", (int)c->pid);
	fputs(",comm=\"", f);
	dac_prom_label_value(f, c->comm);
	fputs("\",holders=\"", f);
	dac_prom_label_value(f, c->holders);
	fputc('"', f);
	if (c->cgroup) {
		fputs(",cgroup=\"", f);
		dac_prom_label_value(f, c->cgroup);
		fputc('"', f);
	}
	fputs("} 1\n", f);
}

static void ns_seconds(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64 "\n", ns / UINT64_C(1000000000),
		ns % UINT64_C(1000000000));
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

static bool eng_has(const struct ps_engine *e, enum eng_metric m, uint64_t *v)
{
	switch (m) {
	case M_BUSY:
		*v = e->busy;
		return e->has_busy;
	case M_CYCLES:
		*v = e->cycles;
		return e->has_cycles;
	case M_TOTAL:
		*v = e->total_cycles;
		return e->has_total;
	case M_JOBS:
		*v = e->jobs;
		return e->has_jobs;
	case M_CAP:
		*v = e->capacity;
		return true;
	case M_FREQ:
		*v = e->maxfreq;
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

/* One device's engine totals: its retired clients' plus its series'. */
struct dev_sum {
	const char *engine;
	uint64_t v[3];			/* busy, cycles, jobs */
	bool has[3];
};

static int device_sums(const struct dac_prom *p, const struct ps_device *d,
		       struct dev_sum **out, size_t *n)
{
	struct dev_sum *v = NULL;
	size_t nv = 0;

	for (size_t i = 0; i < d->nret + p->ncl; i++) {
		const struct ps_retired *r = i < d->nret ? &d->ret[i] : NULL;
		const struct ps_client *c = r ? NULL : &p->cl[i - d->nret];

		if (c && c->rdev != d->rdev)
			continue;
		for (size_t k = 0; k < (r ? 1 : c->neng); k++) {
			const char *name = r ? r->engine : c->eng[k].name;
			const uint64_t val[3] = {
				r ? r->busy : c->eng[k].busy, r ? r->cycles : c->eng[k].cycles,
				r ? r->jobs : c->eng[k].jobs,
			};
			const bool has[3] = {
				r ? r->has_busy : c->eng[k].has_busy,
				r ? r->has_cycles : c->eng[k].has_cycles,
				r ? r->has_jobs : c->eng[k].has_jobs,
			};
			struct dev_sum *s = NULL;

			for (size_t j = 0; j < nv && !s; j++)
				if (!strcmp(v[j].engine, name))
					s = &v[j];
			if (!s) {
				struct dev_sum *nw = append_zeroed(v, nv, sizeof(*nw));

				if (!nw) {
					free(v);
					return -ENOMEM;
				}
				v = nw;
				s = &v[nv++];
				s->engine = name;
			}
			for (int m = 0; m < 3; m++) {
				s->v[m] += val[m];
				s->has[m] |= has[m];
			}
		}
	}
	*out = v;
	*n = nv;
	return 0;
}

static const struct {
	const char *name, *help;
} dev_metrics[3] = {
	{ "drmacct_device_engine_busy_seconds_total",
	  "Time the engine spent on the work of every client seen on the device, "
	  "those gone included (drm-engine-<e>)." },
	{ "drmacct_device_engine_cycles_total",
	  "Engine cycles spent on the work of every client seen on the device, "
	  "those gone included (drm-cycles-<e>)." },
	{ "drmacct_device_engine_jobs_total",
	  "Jobs of every client seen on the device, those gone included "
	  "(driver-specific <drv>-jobs-<e>)." },
};

static int write_devices(const struct dac_prom *p, FILE *f)
{
	struct dev_sum **sums = calloc(p->ndev + 1, sizeof(*sums));
	size_t *nsums = calloc(p->ndev + 1, sizeof(*nsums));
	int ret = 0;

	if (!sums || !nsums) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->ndev && !ret; i++)
		ret = device_sums(p, &p->dev[i], &sums[i], &nsums[i]);
	for (int m = 0; m < 3 && !ret; m++) {
		bool any = false;

		for (size_t i = 0; i < p->ndev; i++) {
			for (size_t k = 0; k < nsums[i]; k++) {
				if (!sums[i][k].has[m])
					continue;
				if (!any)
					family(f, dev_metrics[m].name, "counter", dev_metrics[m].help);
				any = true;
				device_labels(f, dev_metrics[m].name, p->dev[i].rdev, p->dev[i].driver);
				fputs(",engine=\"", f);
				dac_prom_label_value(f, sums[i][k].engine);
				fputs("\"} ", f);
				if (m == 0)
					ns_seconds(f, sums[i][k].v[m]);
				else
					fprintf(f, "%" PRIu64 "\n", sums[i][k].v[m]);
			}
		}
	}
	if (ret)
		goto out;
	/* Memory: the clients open now, per region and kind. */
	{
		bool any = false;

		for (size_t i = 0; i < p->ndev; i++) {
			const struct dac_tk_agg *a = dac_tracker_totals(p->t);

			for (size_t r = 0; r < a->nregions; r++) {
				const struct dac_tk_agg_region *g = &a->regions[r];
				const uint64_t v[5] = { g->total, g->shared, g->resident, g->purgeable,
							g->active };

				if (g->rdev != p->dev[i].rdev)
					continue;
				for (size_t k = 0; k < 5; k++) {
					bool has = false;

					/* a kind no client of the device prints is not a series */
					for (size_t c = 0; c < p->ncl && !has; c++) {
						const struct dac_tk_client *tc = p->cl[c].live;
						const struct dac_tk_region *tr;
						uint64_t dummy;

						if (!tc || tc->rdev != g->rdev)
							continue;
						tr = dac_tk_client_region(tc, g->name);
						has = tr && reg_has(tr, k, &dummy);
					}
					if (!has)
						continue;
					if (!any)
						family(f, "drmacct_device_memory_bytes", "gauge",
						       "Memory of the device's open clients by region and "
						       "kind, summed over clients (a buffer shared by two "
						       "clients counts twice; see kind=\"shared\").");
					any = true;
					device_labels(f, "drmacct_device_memory_bytes", g->rdev,
						      p->dev[i].driver);
					fputs(",region=\"", f);
					dac_prom_label_value(f, g->name);
					fprintf(f, "\",kind=\"%s\"} %" PRIu64 "\n", kinds[k], v[k]);
				}
			}
		}
	}
	if (p->ndev)
		family(f, "drmacct_device_clients_closed_total", "counter",
		       "Clients of the device that closed (their series were dropped; their "
		       "counters stay in the drmacct_device_engine_ totals).");
	for (size_t i = 0; i < p->ndev; i++) {
		device_labels(f, "drmacct_device_clients_closed_total", p->dev[i].rdev,
			      p->dev[i].driver);
		fprintf(f, "} %" PRIu64 "\n", p->dev[i].gone);
	}
	family(f, "drmacct_clients", "gauge", "DRM clients open on the device.");
	for (size_t i = 0; i < p->ndev; i++) {
		device_labels(f, "drmacct_clients", p->dev[i].rdev, p->dev[i].driver);
		fprintf(f, "} %zu\n", p->dev[i].nlive);
	}
	if (p->ndev)
		family(f, "drmacct_device_info", "gauge",
		       "Always 1: the device's parent device (drm-pdev, \"\" when not printed).");
	for (size_t i = 0; i < p->ndev; i++) {
		device_labels(f, "drmacct_device_info", p->dev[i].rdev, p->dev[i].driver);
		fputs(",pdev=\"", f);
		dac_prom_label_value(f, p->dev[i].pdev);
		fputs("\"} 1\n", f);
	}
out:
	if (sums)
		for (size_t i = 0; i < p->ndev; i++)
			free(sums[i]);
	free(sums);
	free(nsums);
	return ret;
}

static int write_all(const struct dac_prom *p, FILE *f)
{
	size_t i, k, m;
	bool any;
	uint64_t v;
	int ret;

	for (m = 0; m < M__N; m++) {
		any = false;
		for (i = 0; i < p->ncl; i++) {
			const struct ps_client *c = &p->cl[i];

			for (k = 0; k < c->neng; k++) {
				if (!eng_has(&c->eng[k], m, &v))
					continue;
				if (!any)
					family(f, eng_metrics[m].name, eng_metrics[m].type,
					       eng_metrics[m].help);
				any = true;
				client_labels(f, eng_metrics[m].name, c);
				fputs(",engine=\"", f);
				dac_prom_label_value(f, c->eng[k].name);
				fputs("\"} ", f);
				if (m == M_BUSY)
					ns_seconds(f, v);
				else
					fprintf(f, "%" PRIu64 "\n", v);
			}
		}
	}
	any = false;
	for (i = 0; i < p->ncl; i++) {
		const struct ps_client *pc = &p->cl[i];
		const struct dac_tk_client *c = pc->live;

		/* memory is a gauge of what the client holds: none once it is gone */
		for (k = 0; c && k < c->nregions; k++) {
			for (m = 0; m < 5; m++) {
				if (!reg_has(&c->regions[k], m, &v))
					continue;
				if (!any)
					family(f, "drmacct_client_memory_bytes", "gauge",
					       "Memory of the client by region and kind "
					       "(drm-<kind>-<region>; resident includes the "
					       "legacy drm-memory-<region>).");
				any = true;
				client_labels(f, "drmacct_client_memory_bytes", pc);
				fputs(",region=\"", f);
				dac_prom_label_value(f, c->regions[k].name);
				fprintf(f, "\",kind=\"%s\"} %" PRIu64 "\n", kinds[m], v);
			}
		}
	}
	if (p->ncl) {
		family(f, "drmacct_client_info", "gauge",
		       "Always 1: the process name, lowest pid, every pid:fd holding the "
		       "client and its cgroup (join on driver, device, client_id).");
		for (i = 0; i < p->ncl; i++)
			client_info(f, &p->cl[i]);
	}
	ret = write_devices(p, f);
	if (ret)
		return ret;
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
	fprintf(f, "drmacct_drm_fds_without_usage_stats %" PRIu64 "\n",
		dac_tracker_nostats(p->t));
	write_self(p, f);
	return 0;
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
	ret = ret ? ret : ret2;
	return ret ? ret : update_series(p);
}

int dac_prom_scrape(struct dac_prom *p, FILE *out)
{
	int ret = collect(p);

	if (ret) {
		p->scrape_errors++;
		return ret;
	}
	ret = write_all(p, out);
	if (ret)
		return ret;
	if (ferror(out) || fflush(out))
		return -EIO;
	return 0;
}

/* ---- state across runs (export --textfile --state FILE) ---- */

/* "=" and the text with \ tab and newline escaped; "-" for NULL. */
static void put_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("\t-", f);
		return;
	}
	fputs("\t=", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

int dac_prom_save(const struct dac_prom *p, FILE *f)
{
	fprintf(f, "drmacct-export-state 1\n");
	for (size_t i = 0; i < p->ndev; i++) {
		const struct ps_device *d = &p->dev[i];

		fprintf(f, "device\t%" PRIu64 "\t%" PRIu64, (uint64_t)d->rdev, d->gone);
		put_str(f, d->driver);
		put_str(f, d->pdev);
		fputc('\n', f);
		for (size_t k = 0; k < d->nret; k++) {
			const struct ps_retired *r = &d->ret[k];

			fprintf(f, "retired\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%d%d%d",
				r->busy, r->cycles, r->jobs, r->has_busy, r->has_cycles, r->has_jobs);
			put_str(f, r->engine);
			fputc('\n', f);
		}
	}
	for (size_t i = 0; i < p->ncl; i++) {
		const struct ps_client *c = &p->cl[i];

		fprintf(f, "client\t%" PRIu64 "\t%d\t%" PRIu64 "\t%u\t%d", (uint64_t)c->rdev,
			c->has_id, c->id, c->missed, (int)c->pid);
		put_str(f, c->driver);
		put_str(f, c->comm);
		put_str(f, c->holders);
		put_str(f, c->cgroup);
		fputc('\n', f);
		for (size_t k = 0; k < c->neng; k++) {
			const struct ps_engine *e = &c->eng[k];

			fprintf(f, "engine\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
				"\t%" PRIu64 "\t%" PRIu64 "\t%d%d%d%d%d", e->busy, e->cycles,
				e->total_cycles, e->jobs, e->capacity, e->maxfreq, e->has_busy,
				e->has_cycles, e->has_total, e->has_jobs, e->has_maxfreq);
			put_str(f, e->name);
			fputc('\n', f);
		}
	}
	return ferror(f) || fflush(f) ? -EIO : 0;
}

/* The next tab-separated field of *@s, NULL when there is none. */
static char *field(char **s)
{
	return *s ? strsep(s, "\t") : NULL;
}

static bool get_u64(char **s, uint64_t *v)
{
	char *t = field(s), *end;

	if (!t || !*t || *t == '-' || *t == '+')
		return false;
	errno = 0;
	*v = strtoull(t, &end, 10);
	return !errno && !*end;
}

/* @n flags "0"/"1" into @out. */
static bool get_flags(char **s, bool *out[], size_t n)
{
	char *t = field(s);

	if (!t || strlen(t) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (t[i] != '0' && t[i] != '1')
			return false;
		*out[i] = t[i] == '1';
	}
	return true;
}

/* A put_str() field back: *@out malloc'd or NULL. false when malformed. */
static bool get_str(char **s, char **out, int *err)
{
	char *t = field(s), *o;

	*out = NULL;
	if (!t || (t[0] != '-' && t[0] != '=') || (t[0] == '-' && t[1]))
		return false;
	if (t[0] == '-')
		return true;
	o = *out = malloc(strlen(t));
	if (!o) {
		*err = -ENOMEM;
		return false;
	}
	for (t++; *t; t++) {
		if (*t != '\\') {
			*o++ = *t;
			continue;
		}
		t++;
		if (*t == '\\')
			*o++ = '\\';
		else if (*t == 't')
			*o++ = '\t';
		else if (*t == 'n')
			*o++ = '\n';
		else
			return false;
	}
	*o = 0;
	return true;
}

static void prom_clear_state(struct dac_prom *p)
{
	for (size_t i = 0; i < p->ncl; i++)
		ps_client_free(&p->cl[i]);
	p->ncl = 0;
	for (size_t i = 0; i < p->ndev; i++) {
		for (size_t k = 0; k < p->dev[i].nret; k++)
			free(p->dev[i].ret[k].engine);
		free(p->dev[i].ret);
		free(p->dev[i].driver);
		free(p->dev[i].pdev);
	}
	p->ndev = 0;
}

static int load_line(struct dac_prom *p, char *line, struct ps_client **cur, struct ps_device **dcur)
{
	char *s = line, *kind = field(&s);
	int err = 0;
	uint64_t v[6];

	if (!kind)
		return -EINVAL;
	if (!strcmp(kind, "device")) {
		struct ps_device *nd = append_zeroed(p->dev, p->ndev, sizeof(*nd)), *d;

		if (!nd)
			return -ENOMEM;
		p->dev = nd;
		d = &nd[p->ndev];
		if (!get_u64(&s, &v[0]) || !get_u64(&s, &d->gone))
			return -EINVAL;
		d->rdev = (dev_t)v[0];
		p->ndev++;	/* from here on freed with the rest */
		if (dev_of(p, d->rdev) != d || !get_str(&s, &d->driver, &err) ||
		    !get_str(&s, &d->pdev, &err) || s)
			return err ? err : -EINVAL;
		*dcur = d;
		*cur = NULL;
		return 0;
	}
	if (!strcmp(kind, "retired")) {
		struct ps_device *d = *dcur;
		struct ps_retired *nr, *r;

		if (!d)
			return -EINVAL;
		nr = append_zeroed(d->ret, d->nret, sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		d->ret = nr;
		r = &nr[d->nret++];
		if (!get_u64(&s, &r->busy) || !get_u64(&s, &r->cycles) || !get_u64(&s, &r->jobs) ||
		    !get_flags(&s, (bool *[]){ &r->has_busy, &r->has_cycles, &r->has_jobs }, 3) ||
		    !get_str(&s, &r->engine, &err) || !r->engine || s)
			return err ? err : -EINVAL;
		return 0;
	}
	if (!strcmp(kind, "client")) {
		struct ps_client *nc = append_zeroed(p->cl, p->ncl, sizeof(*nc)), *c;

		if (!nc)
			return -ENOMEM;
		p->cl = nc;
		c = &nc[p->ncl++];
		if (!get_u64(&s, &v[0]) || !get_u64(&s, &v[1]) || v[1] > 1 || !get_u64(&s, &c->id) ||
		    !get_u64(&s, &v[2]) || v[2] > UINT32_MAX || !get_u64(&s, &v[3]) ||
		    v[3] > INT32_MAX)
			return -EINVAL;
		c->rdev = (dev_t)v[0];
		c->has_id = v[1];
		c->missed = (unsigned int)v[2];
		c->pid = (pid_t)v[3];
		if (!get_str(&s, &c->driver, &err) || !c->driver || !get_str(&s, &c->comm, &err) ||
		    !get_str(&s, &c->holders, &err) || !get_str(&s, &c->cgroup, &err) || s)
			return err ? err : -EINVAL;
		/* sorted, each once, of a device the state has */
		if (!dev_of(p, c->rdev) || (p->ncl > 1 && ps_cmp(&p->cl[p->ncl - 2], c) >= 0))
			return -EINVAL;
		*cur = c;
		return 0;
	}
	if (!strcmp(kind, "engine")) {
		struct ps_client *c = *cur;
		struct ps_engine *ne, *e;

		if (!c)
			return -EINVAL;
		ne = append_zeroed(c->eng, c->neng, sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		c->eng = ne;
		e = &ne[c->neng++];
		if (!get_u64(&s, &e->busy) || !get_u64(&s, &e->cycles) ||
		    !get_u64(&s, &e->total_cycles) || !get_u64(&s, &e->jobs) ||
		    !get_u64(&s, &e->capacity) || !get_u64(&s, &e->maxfreq) ||
		    !get_flags(&s, (bool *[]){ &e->has_busy, &e->has_cycles, &e->has_total,
					       &e->has_jobs, &e->has_maxfreq }, 5) ||
		    !get_str(&s, &e->name, &err) || !e->name || s)
			return err ? err : -EINVAL;
		return 0;
	}
	return -EINVAL;
}

int dac_prom_load(struct dac_prom *p, FILE *f, size_t *bad_line)
{
	struct ps_client *cur = NULL;
	struct ps_device *dcur = NULL;
	char *line = NULL;
	size_t cap = 0, no = 0;
	ssize_t n;
	int ret = 0;

	prom_clear_state(p);
	*bad_line = 0;
	while (!ret && (n = getline(&line, &cap, f)) > 0) {
		no++;
		if (line[n - 1] != '\n') {
			ret = -EINVAL;	/* cut short */
			break;
		}
		line[n - 1] = 0;
		if (no == 1)
			ret = strcmp(line, "drmacct-export-state 1") ? -EINVAL : 0;
		else
			ret = load_line(p, line, &cur, &dcur);
	}
	if (!ret && ferror(f))
		ret = -EIO;
	if (!ret && !no)
		ret = -EINVAL;	/* empty */
	free(line);
	if (ret) {
		*bad_line = no;
		prom_clear_state(p);
	}
	return ret;
}
