// SPDX-License-Identifier: MIT
/*
 * tracker.c - DRM client tracker. See tracker.h.
 */
#define _GNU_SOURCE
#include "tracker.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

struct dac_tracker {
	struct dac_tk_client *clients;
	size_t nclients, cap_clients;
	size_t *hash;		/* open addressing; SIZE_MAX = empty */
	size_t hash_cap;	/* power of two */
	struct dac_tk_process *procs;
	size_t nprocs;
	struct dac_tk_agg totals;
	unsigned int gen;
	bool in_sample;
	uint64_t now_ns, prev_ns, interval_ns;
	uint64_t samples;
	uint64_t nostats, nostats_sample;	/* DRM fds without usage stats */
};

/* ---- allocation with a test hook ---- */

static _Thread_local long fail_nth = -1;

void dac_tracker_test_fail_alloc(long nth)
{
	fail_nth = nth;
}

static bool should_fail(void)
{
	if (fail_nth < 0)
		return false;
	return fail_nth-- == 0;
}

static void *tk_realloc(void *p, size_t n, size_t size)
{
	if (should_fail())
		return NULL;
	if (size && n > SIZE_MAX / size)
		return NULL;
	return realloc(p, n && size ? n * size : 1);
}

static char *tk_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = tk_realloc(NULL, n, 1);

	if (p)
		memcpy(p, s, n);
	return p;
}

/* Grow *@arr (elements of @size) to hold at least @want; 0 or -ENOMEM. */
static int reserve(void **arr, size_t *cap, size_t want, size_t size)
{
	size_t ncap;
	void *np;

	if (*cap >= want)
		return 0;
	ncap = *cap ? *cap : 4;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	np = tk_realloc(*arr, ncap, size);
	if (!np)
		return -ENOMEM;
	*arr = np;
	*cap = ncap;
	return 0;
}

/* ---- counters and math ---- */

uint64_t dac_counter_update(struct dac_counter *c, uint64_t raw)
{
	c->raw = raw;
	if (!c->valid) {
		c->valid = true;
		c->value = raw;
		c->prev = raw;
		c->held = false;
	} else if (raw >= c->value) {
		c->value = raw;
		c->held = false;
	} else {
		c->held = true;
		c->regressions++;
	}
	return c->value;
}

double dac_util_time(uint64_t d_busy_ns, uint64_t interval_ns, uint64_t capacity)
{
	if (!interval_ns || !capacity)
		return NAN;
	return (double)d_busy_ns / ((double)interval_ns * (double)capacity);
}

double dac_util_cycles_maxfreq(uint64_t d_cycles, uint64_t maxfreq_hz, uint64_t interval_ns,
			       uint64_t capacity)
{
	if (!maxfreq_hz || !interval_ns || !capacity)
		return NAN;
	return (double)d_cycles /
	       ((double)maxfreq_hz * ((double)interval_ns / 1e9) * (double)capacity);
}

double dac_util_cycles_total(uint64_t d_cycles, uint64_t d_total_cycles, uint64_t capacity)
{
	if (!d_total_cycles || !capacity)
		return NAN;
	return (double)d_cycles / ((double)d_total_cycles * (double)capacity);
}

const char *dac_util_source_name(enum dac_util_source s)
{
	switch (s) {
	case DAC_UTIL_TIME: return "time";
	case DAC_UTIL_CYCLES_MAXFREQ: return "cycles/maxfreq";
	case DAC_UTIL_CYCLES_TOTAL: return "cycles/total-cycles";
	default: return "none";
	}
}

uint64_t dac_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- lifetime ---- */

struct dac_tracker *dac_tracker_new(void)
{
	struct dac_tracker *t = tk_realloc(NULL, 1, sizeof(*t));

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	return t;
}

static void client_free(struct dac_tk_client *c)
{
	size_t i;

	free(c->driver);
	free(c->pdev);
	free(c->client_name);
	free(c->cgroup);
	for (i = 0; i < c->nholders; i++)
		free(c->holders[i].comm);
	free(c->holders);
	for (i = 0; i < c->nengines; i++)
		free(c->engines[i].name);
	free(c->engines);
	for (i = 0; i < c->nregions; i++)
		free(c->regions[i].name);
	free(c->regions);
	memset(c, 0, sizeof(*c));
}

static void agg_free(struct dac_tk_agg *a)
{
	free(a->engines);
	free(a->regions);
	memset(a, 0, sizeof(*a));
}

static void procs_free(struct dac_tracker *t)
{
	size_t i;

	for (i = 0; i < t->nprocs; i++) {
		free(t->procs[i].comm);
		free(t->procs[i].clients);
		agg_free(&t->procs[i].agg);
	}
	free(t->procs);
	t->procs = NULL;
	t->nprocs = 0;
}

void dac_tracker_free(struct dac_tracker *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nclients; i++)
		client_free(&t->clients[i]);
	free(t->clients);
	free(t->hash);
	procs_free(t);
	agg_free(&t->totals);
	free(t);
}

/* ---- client lookup ---- */

struct ckey {
	dev_t rdev;
	bool anon;		/* no drm-client-id: keyed by pid/fd */
	uint64_t id;		/* client id, or pid << 32 | fd */
};

static struct ckey client_key(const struct dac_tk_client *c)
{
	struct ckey k = { .rdev = c->rdev, .anon = !c->has_client_id };

	k.id = c->key_id;
	return k;
}

static size_t key_hash(const struct ckey *k)
{
	uint64_t h = (uint64_t)k->rdev * 0x9e3779b97f4a7c15ull;

	h ^= k->id + 0x7f4a7c159e3779b9ull + (h << 6) + (h >> 2);
	h ^= k->anon;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h;
}

static bool key_eq(const struct ckey *a, const struct ckey *b)
{
	return a->rdev == b->rdev && a->anon == b->anon && a->id == b->id;
}

static size_t hash_find(const struct dac_tracker *t, const struct ckey *k)
{
	size_t mask, i;

	if (!t->hash_cap)
		return SIZE_MAX;
	mask = t->hash_cap - 1;
	for (i = key_hash(k) & mask; t->hash[i] != SIZE_MAX; i = (i + 1) & mask) {
		struct ckey ck = client_key(&t->clients[t->hash[i]]);

		if (key_eq(&ck, k))
			return t->hash[i];
	}
	return SIZE_MAX;
}

static void hash_put(struct dac_tracker *t, size_t idx)
{
	struct ckey k = client_key(&t->clients[idx]);
	size_t mask = t->hash_cap - 1, i;

	for (i = key_hash(&k) & mask; t->hash[i] != SIZE_MAX; i = (i + 1) & mask)
		;
	t->hash[i] = idx;
}

/* Make room so that @n clients fit at load <= 1/2; rehashes. */
static int hash_reserve(struct dac_tracker *t, size_t n)
{
	size_t ncap = t->hash_cap ? t->hash_cap : 16, i;
	size_t *nh;

	while (ncap / 2 < n) {
		if (ncap > SIZE_MAX / 4)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap == t->hash_cap)
		return 0;
	nh = tk_realloc(NULL, ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	free(t->hash);
	t->hash = nh;
	t->hash_cap = ncap;
	for (i = 0; i < ncap; i++)
		nh[i] = SIZE_MAX;
	for (i = 0; i < t->nclients; i++)
		hash_put(t, i);
	return 0;
}

static void hash_rebuild(struct dac_tracker *t)
{
	size_t i;

	for (i = 0; i < t->hash_cap; i++)
		t->hash[i] = SIZE_MAX;
	for (i = 0; i < t->nclients; i++)
		hash_put(t, i);
}

/* ---- sampling ---- */

int dac_tracker_begin(struct dac_tracker *t, uint64_t now_ns)
{
	size_t i, j;

	if (!t || (t->samples && now_ns < t->now_ns))
		return -EINVAL;
	t->gen++;
	t->in_sample = true;
	t->nostats_sample = 0;
	t->prev_ns = t->now_ns;
	t->now_ns = now_ns;
	for (i = 0; i < t->nclients; i++) {
		struct dac_tk_client *c = &t->clients[i];

		for (j = 0; j < c->nholders; j++) {
			free(c->holders[j].comm);
			c->holders[j].comm = NULL;
		}
		c->nholders = 0;
		c->prev_seen_ns = c->seen_ns;
		c->seen_ns = 0;
		for (j = 0; j < c->nengines; j++) {
			struct dac_tk_engine *e = &c->engines[j];

			e->busy.prev = e->busy.value;
			e->busy.prev_valid = e->busy.valid;
			e->cycles.prev = e->cycles.value;
			e->cycles.prev_valid = e->cycles.valid;
			e->total_cycles.prev = e->total_cycles.value;
			e->total_cycles.prev_valid = e->total_cycles.valid;
			e->present = false;
		}
	}
	return 0;
}

static struct dac_tk_engine *find_engine(struct dac_tk_client *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nengines; i++)
		if (!strcmp(c->engines[i].name, name))
			return &c->engines[i];
	return NULL;
}

static struct dac_tk_region *find_region(struct dac_tk_client *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nregions; i++)
		if (!strcmp(c->regions[i].name, name))
			return &c->regions[i];
	return NULL;
}

const struct dac_tk_engine *dac_tk_client_engine(const struct dac_tk_client *c, const char *name)
{
	return find_engine((struct dac_tk_client *)c, name);
}

const struct dac_tk_region *dac_tk_client_region(const struct dac_tk_client *c, const char *name)
{
	return find_region((struct dac_tk_client *)c, name);
}

static bool str_changed(const char *old, const char *new)
{
	if (!old || !new)
		return old != new;
	return strcmp(old, new) != 0;
}

/*
 * Everything add() must allocate, done up front so that a failure leaves the
 * tracker as it was.
 */
struct pending {
	char **names;		/* engine names then region names, NULL = exists */
	char *driver, *pdev, *client_name, *comm;
	size_t n;
};

static void pending_free(struct pending *p)
{
	size_t i;

	for (i = 0; p->names && i < p->n; i++)
		free(p->names[i]);
	free(p->names);
	free(p->driver);
	free(p->pdev);
	free(p->client_name);
	free(p->comm);
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = tk_strdup(s);
	return *out ? 0 : -ENOMEM;
}

static void fill_engine(struct dac_tk_engine *e, const struct dac_engine *fe)
{
	e->present = true;
	e->capacity = fe->has_capacity && fe->capacity ? fe->capacity : 1;
	if (fe->has_busy) {
		dac_counter_update(&e->busy, fe->busy_ns);
		e->has_busy = true;
	}
	if (fe->has_cycles) {
		dac_counter_update(&e->cycles, fe->cycles);
		e->has_cycles = true;
	}
	if (fe->has_total_cycles) {
		dac_counter_update(&e->total_cycles, fe->total_cycles);
		e->has_total_cycles = true;
	}
	e->has_maxfreq = fe->has_maxfreq;
	e->maxfreq_hz = fe->has_maxfreq ? fe->maxfreq_hz : 0;
}

static void fill_region(struct dac_tk_region *r, const struct dac_region *fr)
{
	r->total = fr->total;
	r->shared = fr->shared;
	r->resident = fr->resident;
	r->purgeable = fr->purgeable;
	r->active = fr->active;
	r->has_total = fr->has_total;
	r->has_shared = fr->has_shared;
	r->has_resident = fr->has_resident;
	r->has_purgeable = fr->has_purgeable;
	r->has_active = fr->has_active;
	r->resident_from_legacy = fr->resident_from_legacy;
}

int dac_tracker_add(struct dac_tracker *t, pid_t pid, int fd, const char *comm, dev_t rdev,
		    const struct dac_fdinfo *fi)
{
	return dac_tracker_add_at(t, pid, fd, comm, rdev, fi, t ? t->now_ns : 0);
}

int dac_tracker_set_cgroup(struct dac_tracker *t, dev_t rdev, uint64_t client_id,
			   const char *path)
{
	struct dac_tk_client probe = { .rdev = rdev, .has_client_id = true,
				       .client_id = client_id, .key_id = client_id };
	struct ckey key = client_key(&probe);
	size_t idx = hash_find(t, &key);
	struct dac_tk_client *c;
	char *dup = NULL;

	if (idx == SIZE_MAX)
		return -ENOENT;
	c = &t->clients[idx];
	if (!str_changed(c->cgroup, path))
		return 0;
	if (path && !(dup = strdup(path)))
		return -ENOMEM;
	free(c->cgroup);
	c->cgroup = dup;
	return 0;
}

int dac_tracker_add_at(struct dac_tracker *t, pid_t pid, int fd, const char *comm, dev_t rdev,
		       const struct dac_fdinfo *fi, uint64_t read_ns)
{
	struct dac_tk_client probe = { 0 }, *c;
	struct pending p = { 0 };
	struct ckey key;
	size_t idx, i, k;
	bool is_new;
	int ret;

	if (!t || !t->in_sample || !fi)
		return -EINVAL;

	probe.rdev = rdev;
	probe.has_client_id = fi->has_client_id;
	probe.client_id = fi->client_id;
	probe.key_id = fi->has_client_id ? fi->client_id
					 : ((uint64_t)(uint32_t)pid << 32) | (uint32_t)fd;
	key = client_key(&probe);
	idx = hash_find(t, &key);
	is_new = idx == SIZE_MAX;

	/* Reserve and copy everything first. */
	if (is_new) {
		ret = reserve((void **)&t->clients, &t->cap_clients, t->nclients + 1,
			      sizeof(*t->clients));
		if (!ret)
			ret = hash_reserve(t, t->nclients + 1);
		if (ret)
			return ret;
		c = &probe;
	} else {
		c = &t->clients[idx];
	}
	p.n = fi->nengines + fi->nregions;
	p.names = tk_realloc(NULL, p.n ? p.n : 1, sizeof(*p.names));
	if (!p.names)
		return -ENOMEM;
	memset(p.names, 0, (p.n ? p.n : 1) * sizeof(*p.names));
	ret = 0;
	for (i = 0; i < fi->nengines && !ret; i++)
		if (!find_engine(c, fi->engines[i].name) &&
		    !(p.names[i] = tk_strdup(fi->engines[i].name)))
			ret = -ENOMEM;
	for (i = 0; i < fi->nregions && !ret; i++)
		if (!find_region(c, fi->regions[i].name) &&
		    !(p.names[fi->nengines + i] = tk_strdup(fi->regions[i].name)))
			ret = -ENOMEM;
	if (!ret && str_changed(c->driver, fi->driver))
		ret = dup_opt(fi->driver, &p.driver);
	if (!ret && str_changed(c->pdev, fi->pdev))
		ret = dup_opt(fi->pdev, &p.pdev);
	if (!ret && str_changed(c->client_name, fi->client_name))
		ret = dup_opt(fi->client_name, &p.client_name);
	if (!ret)
		ret = dup_opt(comm ? comm : "", &p.comm);
	if (!ret)
		ret = reserve((void **)&c->holders, &c->cap_holders, c->nholders + 1,
			      sizeof(*c->holders));
	if (!ret)
		ret = reserve((void **)&c->engines, &c->cap_engines,
			      c->nengines + fi->nengines, sizeof(*c->engines));
	if (!ret)
		ret = reserve((void **)&c->regions, &c->cap_regions,
			      c->nregions + fi->nregions, sizeof(*c->regions));
	if (ret) {
		pending_free(&p);
		if (is_new)
			client_free(&probe);
		return ret;
	}

	/* Commit: nothing below fails. */
	if (is_new) {
		probe.major = major(rdev);
		probe.minor = minor(rdev);
		probe.first_ns = t->now_ns;
		idx = t->nclients++;
		t->clients[idx] = probe;
		c = &t->clients[idx];
		hash_put(t, idx);
	}
	if (c->gen != t->gen || !c->seen_ns)
		c->seen_ns = read_ns;	/* first read of this client in the sample */
	c->gen = t->gen;
	c->holders[c->nholders].pid = pid;
	c->holders[c->nholders].fd = fd;
	c->holders[c->nholders].comm = p.comm;
	c->nholders++;
	p.comm = NULL;
	if (str_changed(c->driver, fi->driver)) {
		free(c->driver);
		c->driver = p.driver;
		p.driver = NULL;
	}
	if (str_changed(c->pdev, fi->pdev)) {
		free(c->pdev);
		c->pdev = p.pdev;
		p.pdev = NULL;
	}
	if (str_changed(c->client_name, fi->client_name)) {
		free(c->client_name);
		c->client_name = p.client_name;
		p.client_name = NULL;
	}
	c->spec_errors = dac_fdinfo_errors(fi);
	for (i = 0; i < fi->nengines; i++) {
		struct dac_tk_engine *e = find_engine(c, fi->engines[i].name);

		if (!e) {
			e = &c->engines[c->nengines++];
			memset(e, 0, sizeof(*e));
			e->name = p.names[i];
			p.names[i] = NULL;
		}
		fill_engine(e, &fi->engines[i]);
	}
	for (i = 0; i < fi->nregions; i++) {
		struct dac_tk_region *r = find_region(c, fi->regions[i].name);

		k = fi->nengines + i;
		if (!r) {
			r = &c->regions[c->nregions++];
			memset(r, 0, sizeof(*r));
			r->name = p.names[k];
			p.names[k] = NULL;
		}
		fill_region(r, &fi->regions[i]);
	}
	pending_free(&p);
	return 0;
}

static int cmp_holder(const void *a, const void *b)
{
	const struct dac_tk_holder *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static void compute_util(struct dac_tracker *t, struct dac_tk_client *c)
{
	bool fresh = c->first_ns == t->now_ns || !t->interval_ns;
	size_t i;

	c->interval_ns = fresh ? 0 : t->interval_ns;
	/* Its own read times, when they are known and sane. */
	if (!fresh && c->prev_seen_ns && c->seen_ns > c->prev_seen_ns)
		c->interval_ns = c->seen_ns - c->prev_seen_ns;
	for (i = 0; i < c->nengines; i++) {
		struct dac_tk_engine *e = &c->engines[i];
		/* A counter first seen in this sample has no previous value. */
		bool busy_ok = e->has_busy && e->busy.prev_valid;
		bool cyc_ok = e->has_cycles && e->cycles.prev_valid;
		bool tot_ok = e->has_total_cycles && e->total_cycles.prev_valid;

		e->d_busy_ns = e->busy.value - e->busy.prev;
		e->d_cycles = e->cycles.value - e->cycles.prev;
		e->d_total_cycles = e->total_cycles.value - e->total_cycles.prev;
		e->util_time = NAN;
		e->util_cycles = NAN;
		e->util = NAN;
		e->util_src = DAC_UTIL_NONE;
		if (fresh || !e->present)
			continue;
		if (busy_ok)
			e->util_time = dac_util_time(e->d_busy_ns, c->interval_ns, e->capacity);
		/* total-cycles wins over maxfreq when a driver prints both. */
		if (e->has_total_cycles) {
			if (cyc_ok && tot_ok)
				e->util_cycles = dac_util_cycles_total(e->d_cycles,
								       e->d_total_cycles,
								       e->capacity);
			if (!isnan(e->util_cycles))
				e->util_src = DAC_UTIL_CYCLES_TOTAL;
		} else if (cyc_ok && e->has_maxfreq) {
			e->util_cycles = dac_util_cycles_maxfreq(e->d_cycles, e->maxfreq_hz,
								 c->interval_ns, e->capacity);
			if (!isnan(e->util_cycles))
				e->util_src = DAC_UTIL_CYCLES_MAXFREQ;
		}
		if (!isnan(e->util_time)) {
			e->util = e->util_time;
			e->util_src = DAC_UTIL_TIME;
		} else {
			e->util = e->util_cycles;
		}
	}
}

static int agg_add(struct dac_tk_agg *a, const struct dac_tk_client *c)
{
	size_t i;

	for (i = 0; i < c->nengines; i++) {
		const struct dac_tk_engine *e = &c->engines[i];
		struct dac_tk_agg_engine *ae;

		if (!e->present)
			continue;
		ae = (struct dac_tk_agg_engine *)dac_tk_agg_engine(a, c->rdev, e->name);
		if (!ae) {
			if (reserve((void **)&a->engines, &a->cap_engines, a->nengines + 1,
				    sizeof(*a->engines)))
				return -ENOMEM;
			ae = &a->engines[a->nengines++];
			memset(ae, 0, sizeof(*ae));
			ae->rdev = c->rdev;
			ae->name = e->name;
			ae->util = NAN;
		}
		ae->nclients++;
		ae->busy_ns += e->busy.value;
		ae->d_busy_ns += e->d_busy_ns;
		ae->cycles += e->cycles.value;
		ae->d_cycles += e->d_cycles;
		ae->has_busy |= e->has_busy;
		ae->has_cycles |= e->has_cycles;
		if (!isnan(e->util))
			ae->util = (isnan(ae->util) ? 0.0 : ae->util) + e->util;
	}
	for (i = 0; i < c->nregions; i++) {
		const struct dac_tk_region *r = &c->regions[i];
		struct dac_tk_agg_region *ar;

		ar = (struct dac_tk_agg_region *)dac_tk_agg_region(a, c->rdev, r->name);
		if (!ar) {
			if (reserve((void **)&a->regions, &a->cap_regions, a->nregions + 1,
				    sizeof(*a->regions)))
				return -ENOMEM;
			ar = &a->regions[a->nregions++];
			memset(ar, 0, sizeof(*ar));
			ar->rdev = c->rdev;
			ar->name = r->name;
		}
		ar->total += r->total;
		ar->shared += r->shared;
		ar->resident += r->resident;
		ar->purgeable += r->purgeable;
		ar->active += r->active;
		ar->has_total |= r->has_total;
		ar->has_shared |= r->has_shared;
		ar->has_resident |= r->has_resident;
		ar->has_purgeable |= r->has_purgeable;
		ar->has_active |= r->has_active;
	}
	return 0;
}

struct pid_client {
	pid_t pid;
	size_t client;
	size_t holder;
};

static int cmp_pid_client(const void *a, const void *b)
{
	const struct pid_client *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->client > y->client) - (x->client < y->client);
}

static int build_views(struct dac_tracker *t)
{
	struct pid_client *pc = NULL;
	size_t n = 0, cap = 0, i, j, np;
	int ret = 0;

	procs_free(t);
	t->totals.nengines = 0;
	t->totals.nregions = 0;
	for (i = 0; i < t->nclients; i++) {
		ret = agg_add(&t->totals, &t->clients[i]);
		if (ret)
			return ret;
		for (j = 0; j < t->clients[i].nholders; j++) {
			if (reserve((void **)&pc, &cap, n + 1, sizeof(*pc))) {
				free(pc);
				return -ENOMEM;
			}
			pc[n].pid = t->clients[i].holders[j].pid;
			pc[n].client = i;
			pc[n].holder = j;
			n++;
		}
	}
	if (!n)
		return 0;
	qsort(pc, n, sizeof(*pc), cmp_pid_client);
	for (np = 0, i = 0; i < n; i++)
		if (!i || pc[i].pid != pc[i - 1].pid)
			np++;
	t->procs = tk_realloc(NULL, np, sizeof(*t->procs));
	if (!t->procs) {
		free(pc);
		return -ENOMEM;
	}
	memset(t->procs, 0, np * sizeof(*t->procs));
	t->nprocs = np;
	for (i = 0, np = 0; i < n; np++) {
		struct dac_tk_process *p = &t->procs[np];
		size_t end = i;

		while (end < n && pc[end].pid == pc[i].pid)
			end++;
		p->pid = pc[i].pid;
		p->comm = tk_strdup(t->clients[pc[i].client].holders[pc[i].holder].comm);
		p->clients = tk_realloc(NULL, end - i, sizeof(*p->clients));
		if (!p->comm || !p->clients) {
			ret = -ENOMEM;
			break;
		}
		for (j = i; j < end; j++) {
			if (j > i && pc[j].client == pc[j - 1].client)
				continue;	/* same client on two fds */
			p->clients[p->nclients++] = pc[j].client;
			ret = agg_add(&p->agg, &t->clients[pc[j].client]);
			if (ret)
				break;
		}
		if (ret)
			break;
		i = end;
	}
	free(pc);
	if (ret)
		procs_free(t);
	return ret;
}

int dac_tracker_end(struct dac_tracker *t)
{
	size_t i, n;

	if (!t || !t->in_sample)
		return -EINVAL;
	t->in_sample = false;
	t->nostats = t->nostats_sample;
	t->interval_ns = t->samples ? t->now_ns - t->prev_ns : 0;
	t->samples++;

	/* Forget clients that are gone. */
	for (i = 0, n = 0; i < t->nclients; i++) {
		if (t->clients[i].gen != t->gen) {
			client_free(&t->clients[i]);
			continue;
		}
		if (n != i)
			t->clients[n] = t->clients[i];
		n++;
	}
	if (n != t->nclients) {
		t->nclients = n;
		hash_rebuild(t);
	}
	for (i = 0; i < t->nclients; i++) {
		struct dac_tk_client *c = &t->clients[i];

		qsort(c->holders, c->nholders, sizeof(*c->holders), cmp_holder);
		compute_util(t, c);
	}
	return build_views(t);
}

/* ---- /proc sampling ---- */

struct sample_ctx {
	struct dac_tracker *t;
	enum dac_profile profile;
};

static int sample_cb(const struct dac_fd_info *fdi, void *arg)
{
	struct sample_ctx *sc = arg;
	struct dac_fdinfo fi;
	int ret;

	ret = dac_fdinfo_parse(fdi->text, fdi->len, sc->profile, &fi);
	if (ret)
		return ret;
	ret = dac_tracker_add_fd(sc->t, fdi->pid, fdi->fd, fdi->comm, fdi->rdev, &fi,
				 fdi->read_ns);
	dac_fdinfo_free(&fi);
	return ret;
}

int dac_tracker_add_fd(struct dac_tracker *t, pid_t pid, int fd, const char *comm, dev_t rdev,
		       const struct dac_fdinfo *fi, uint64_t read_ns)
{
	if (!t || !t->in_sample || !fi)
		return -EINVAL;
	if (dac_fdinfo_stats(fi) == DAC_STATS_NONE) {
		t->nostats_sample++;
		return 0;
	}
	return dac_tracker_add_at(t, pid, fd, comm, rdev, fi, read_ns);
}

uint64_t dac_tracker_nostats(const struct dac_tracker *t)
{
	return t->nostats;
}

int dac_tracker_sample_proc(struct dac_tracker *t, struct dac_discover *d,
			    enum dac_profile profile, uint64_t now_ns,
			    struct dac_discover_stats *st)
{
	struct sample_ctx sc = { .t = t, .profile = profile };
	int ret, ret2;

	ret = dac_tracker_begin(t, now_ns);
	if (ret)
		return ret;
	ret = dac_discover_run(d, sample_cb, &sc, st);
	ret2 = dac_tracker_end(t);
	return ret ? ret : ret2;
}

/* ---- views ---- */

size_t dac_tracker_nclients(const struct dac_tracker *t)
{
	return t->nclients;
}

const struct dac_tk_client *dac_tracker_client(const struct dac_tracker *t, size_t i)
{
	return i < t->nclients ? &t->clients[i] : NULL;
}

size_t dac_tracker_nprocs(const struct dac_tracker *t)
{
	return t->nprocs;
}

const struct dac_tk_process *dac_tracker_proc(const struct dac_tracker *t, size_t i)
{
	return i < t->nprocs ? &t->procs[i] : NULL;
}

const struct dac_tk_agg *dac_tracker_totals(const struct dac_tracker *t)
{
	return &t->totals;
}

uint64_t dac_tracker_interval_ns(const struct dac_tracker *t)
{
	return t->interval_ns;
}

uint64_t dac_tracker_samples(const struct dac_tracker *t)
{
	return t->samples;
}

const struct dac_tk_agg_engine *dac_tk_agg_engine(const struct dac_tk_agg *a, dev_t rdev,
						 const char *name)
{
	size_t i;

	for (i = 0; i < a->nengines; i++)
		if (a->engines[i].rdev == rdev && !strcmp(a->engines[i].name, name))
			return &a->engines[i];
	return NULL;
}

const struct dac_tk_agg_region *dac_tk_agg_region(const struct dac_tk_agg *a, dev_t rdev,
						 const char *name)
{
	size_t i;

	for (i = 0; i < a->nregions; i++)
		if (a->regions[i].rdev == rdev && !strcmp(a->regions[i].name, name))
			return &a->regions[i];
	return NULL;
}
