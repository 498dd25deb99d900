// SPDX-License-Identifier: MIT
/*
 * counters.c - KD_KHR_perfcounter-shaped GPU counters (see counters.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "discover.h"
#include "tracker.h"

enum pc_kind {
	K_UTIL_MAX,	/* GPU X utilization */
	K_UTIL_ENG,	/* GPU X <e> utilization */
	K_BUSY_ENG,	/* GPU X <e> busy time */
	K_MEM_DEV,	/* GPU X memory usage */
	K_CLIENTS_DEV,	/* GPU X clients amount */
	K_MEM_ALL,	/* GPU memory usage */
};

#define UTIL_MAX 10000	/* 0.01 % units */

struct pc_dev {
	dev_t rdev;
	char **eng;
	uint64_t *cap;		/* largest capacity printed */
	uint64_t *acc;		/* busy ns accumulated since the start */
	size_t neng;
	uint64_t mem;		/* at the last reading */
	uint64_t clients;
};

struct pc_counter {
	struct dac_pc_info info;
	enum pc_kind kind;
	size_t dev, eng;
	bool active;
	uint64_t base_t;	/* time its window began */
	uint64_t *base;		/* acc of the device's engines at that time */
	int64_t value;		/* frozen at stop */
};

struct dac_pc {
	struct dac_discover *d;
	struct dac_tracker *t;
	struct dac_pc_opts o;
	struct pc_dev *devs;
	size_t ndevs;
	struct pc_counter *c;
	size_t nc;
	uint64_t mem_all;
	uint64_t last_t;	/* time of the last reading */
	bool sampling, stopped, started;
	int err;
};

static int fail(struct dac_pc *pc, int err)
{
	pc->err = err;
	errno = err;
	return -1;
}

static int dev_idx(const struct dac_pc *pc, dev_t rdev)
{
	for (size_t i = 0; i < pc->ndevs; i++)
		if (pc->devs[i].rdev == rdev)
			return (int)i;
	return -1;
}

static long eng_idx(const struct pc_dev *d, const char *name)
{
	for (size_t i = 0; i < d->neng; i++)
		if (!strcmp(d->eng[i], name))
			return (long)i;
	return -1;
}

static int cmp_rdev(const void *a, const void *b)
{
	const struct pc_dev *x = a, *y = b;

	return (x->rdev > y->rdev) - (x->rdev < y->rdev);
}

/* One reading: walk, then fold the clients into the devices. */
static int reading(struct dac_pc *pc, bool baseline)
{
	struct dac_discover_stats st;
	uint64_t now = dac_now_ns();
	size_t i, k;
	int ret;

	ret = dac_tracker_sample_proc(pc->t, pc->d, pc->o.profile, now, &st);
	if (ret == -ESRCH)	/* --pid and it exited: nothing of it is left */
		ret = 0;
	if (ret)
		return fail(pc, -ret);
	if (!pc->o.allow_partial && (st.denied_procs || st.denied_fds || st.denied_stat_fds))
		return fail(pc, EACCES);
	for (i = 0; i < pc->ndevs; i++) {
		pc->devs[i].mem = 0;
		pc->devs[i].clients = 0;
	}
	pc->mem_all = 0;
	for (i = 0; i < dac_tracker_nclients(pc->t); i++) {
		const struct dac_tk_client *c = dac_tracker_client(pc->t, i);
		int di = dev_idx(pc, c->rdev);
		uint64_t mem = 0;

		for (k = 0; k < c->nregions; k++)
			mem += c->regions[k].has_resident ? c->regions[k].resident
							  : c->regions[k].total;
		pc->mem_all += mem;
		if (di < 0)
			continue;	/* a device that appeared after the open */
		pc->devs[di].mem += mem;
		pc->devs[di].clients++;
		if (!pc->sampling || baseline)
			continue;	/* the start reading only sets the baseline */
		for (k = 0; k < c->nengines; k++) {
			const struct dac_tk_engine *e = &c->engines[k];
			long ei = eng_idx(&pc->devs[di], e->name);

			if (ei < 0 || !e->present || !e->has_busy)
				continue;
			/*
			 * A client first seen after the start opened after the
			 * previous reading: all of its busy time is in the window.
			 */
			if (e->busy.prev_valid)
				pc->devs[di].acc[ei] += e->d_busy_ns;
			else
				pc->devs[di].acc[ei] += e->busy.value;
		}
	}
	pc->last_t = now;
	return 0;
}

static int64_t util_of(const struct dac_pc *pc, const struct pc_dev *d, size_t e,
		       uint64_t base_acc, uint64_t base_t)
{
	uint64_t dt = pc->last_t > base_t ? pc->last_t - base_t : 0;
	double u;

	if (!dt)
		return 0;
	u = (double)(d->acc[e] - base_acc) * UTIL_MAX / ((double)dt * (double)d->cap[e]);
	return u > UTIL_MAX ? UTIL_MAX : (int64_t)(u + 0.5);
}

static int64_t value_of(const struct dac_pc *pc, const struct pc_counter *c)
{
	const struct pc_dev *d = c->kind == K_MEM_ALL ? NULL : &pc->devs[c->dev];
	int64_t v = 0;

	if (!pc->started)
		return 0;
	switch (c->kind) {
	case K_UTIL_MAX:
		for (size_t e = 0; e < d->neng; e++) {
			int64_t u = util_of(pc, d, e, c->base[e], c->base_t);

			if (u > v)
				v = u;
		}
		return v;
	case K_UTIL_ENG:
		return util_of(pc, d, c->eng, c->base[0], c->base_t);
	case K_BUSY_ENG:
		return (int64_t)(d->acc[c->eng] - c->base[0]);
	case K_MEM_DEV:
		return (int64_t)d->mem;
	case K_CLIENTS_DEV:
		return (int64_t)d->clients;
	case K_MEM_ALL:
		return (int64_t)pc->mem_all;
	}
	return DAC_PC_UNKNOWN;
}

/* The counter's window begins now (start, or activation while sampling). */
static void rebase(struct dac_pc *pc, struct pc_counter *c)
{
	c->base_t = pc->last_t;
	if (c->kind == K_UTIL_MAX)
		memcpy(c->base, pc->devs[c->dev].acc, pc->devs[c->dev].neng * sizeof(*c->base));
	else if (c->kind == K_UTIL_ENG || c->kind == K_BUSY_ENG)
		c->base[0] = pc->devs[c->dev].acc[c->eng];
}

/* ---- building the counter set ---- */

static int add_counter(struct dac_pc *pc, enum pc_kind kind, size_t dev, size_t eng,
		       size_t *cap)
{
	struct pc_counter *c;
	char name[256], desc[512];
	const char *en = kind == K_UTIL_ENG || kind == K_BUSY_ENG ? pc->devs[dev].eng[eng] : "";

	if (pc->nc == *cap) {
		size_t n = *cap ? *cap * 2 : 16;
		struct pc_counter *nc = realloc(pc->c, n * sizeof(*nc));

		if (!nc)
			return -ENOMEM;
		pc->c = nc;
		*cap = n;
	}
	c = &pc->c[pc->nc];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	c->dev = dev;
	c->eng = eng;
	c->info.vendor = "drmacct";
	c->info.min = 0;
	c->info.max = DAC_PC_INFINITE;
	c->info.default_scale = DAC_PC_UNKNOWN;
	switch (kind) {
	case K_UTIL_MAX:
		snprintf(name, sizeof(name), "GPU %zu utilization", dev);
		snprintf(desc, sizeof(desc), "Utilization of the busiest engine of GPU %zu since "
			 "sampling started, in units of 0.01 %% (0..10000)", dev);
		c->info.max = UTIL_MAX;
		c->info.default_scale = 0.01f;
		break;
	case K_UTIL_ENG:
		snprintf(name, sizeof(name), "GPU %zu %s utilization", dev, en);
		snprintf(desc, sizeof(desc), "Busy time of engine '%s' of GPU %zu over elapsed "
			 "time and engine capacity since sampling started, in units of 0.01 %% "
			 "(0..10000)", en, dev);
		c->info.max = UTIL_MAX;
		c->info.default_scale = 0.01f;
		break;
	case K_BUSY_ENG:
		snprintf(name, sizeof(name), "GPU %zu %s busy time", dev, en);
		snprintf(desc, sizeof(desc), "Nanoseconds engine '%s' of GPU %zu spent on the "
			 "work of every client since sampling started (drm-engine-%s)", en, dev,
			 en);
		break;
	case K_MEM_DEV:
		snprintf(name, sizeof(name), "GPU %zu memory usage", dev);
		snprintf(desc, sizeof(desc), "Bytes of memory the clients of GPU %zu hold now, "
			 "every region (resident, or total where resident is not printed)", dev);
		break;
	case K_CLIENTS_DEV:
		snprintf(name, sizeof(name), "GPU %zu clients amount", dev);
		snprintf(desc, sizeof(desc), "DRM clients open on GPU %zu now", dev);
		break;
	case K_MEM_ALL:
		snprintf(name, sizeof(name), "GPU memory usage");
		snprintf(desc, sizeof(desc), "Bytes of memory the clients of every GPU hold now");
		break;
	}
	c->info.name = strdup(name);
	c->info.description = strdup(desc);
	if (kind == K_UTIL_MAX)
		c->base = calloc(pc->devs[dev].neng ? pc->devs[dev].neng : 1, sizeof(*c->base));
	else
		c->base = calloc(1, sizeof(*c->base));
	pc->nc++;	/* freed by dac_pc_close() even when half made */
	if (!c->info.name || !c->info.description || !c->base)
		return -ENOMEM;
	return 0;
}

static int build(struct dac_pc *pc)
{
	size_t i, k, cap = 0;
	int ret;

	for (i = 0; i < dac_tracker_nclients(pc->t); i++) {
		const struct dac_tk_client *c = dac_tracker_client(pc->t, i);
		int di = dev_idx(pc, c->rdev);
		struct pc_dev *d;

		if (di < 0) {
			d = realloc(pc->devs, (pc->ndevs + 1) * sizeof(*d));
			if (!d)
				return -ENOMEM;
			pc->devs = d;
			d = &pc->devs[pc->ndevs++];
			memset(d, 0, sizeof(*d));
			d->rdev = c->rdev;
		} else {
			d = &pc->devs[di];
		}
		for (k = 0; k < c->nengines; k++) {
			const struct dac_tk_engine *e = &c->engines[k];
			long ei = eng_idx(d, e->name);
			char **ne;
			uint64_t *ncap, *nacc;

			if (ei >= 0) {
				if (e->capacity > d->cap[ei])
					d->cap[ei] = e->capacity;
				continue;
			}
			ne = realloc(d->eng, (d->neng + 1) * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			d->eng = ne;
			ncap = realloc(d->cap, (d->neng + 1) * sizeof(*ncap));
			if (!ncap)
				return -ENOMEM;
			d->cap = ncap;
			nacc = realloc(d->acc, (d->neng + 1) * sizeof(*nacc));
			if (!nacc)
				return -ENOMEM;
			d->acc = nacc;
			d->eng[d->neng] = strdup(e->name);
			if (!d->eng[d->neng])
				return -ENOMEM;
			d->cap[d->neng] = e->capacity ? e->capacity : 1;
			d->acc[d->neng] = 0;
			d->neng++;
		}
	}
	qsort(pc->devs, pc->ndevs, sizeof(*pc->devs), cmp_rdev);
	for (i = 0; i < pc->ndevs; i++) {
		ret = add_counter(pc, K_UTIL_MAX, i, 0, &cap);
		for (k = 0; !ret && k < pc->devs[i].neng; k++)
			ret = add_counter(pc, K_UTIL_ENG, i, k, &cap);
		for (k = 0; !ret && k < pc->devs[i].neng; k++)
			ret = add_counter(pc, K_BUSY_ENG, i, k, &cap);
		if (!ret)
			ret = add_counter(pc, K_MEM_DEV, i, 0, &cap);
		if (!ret)
			ret = add_counter(pc, K_CLIENTS_DEV, i, 0, &cap);
		if (ret)
			return ret;
	}
	return add_counter(pc, K_MEM_ALL, 0, 0, &cap);
}

struct dac_pc *dac_pc_open(const struct dac_pc_opts *opts)
{
	struct dac_discover_opts dopts = { .fd = -1 };
	struct dac_pc *pc;
	int ret;

	if (!opts) {
		errno = EINVAL;
		return NULL;
	}
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->o = *opts;
	dopts.proc_root = opts->proc_root;
	dopts.pid = opts->pid;
	pc->d = dac_discover_new(&dopts);
	pc->t = pc->d ? dac_tracker_new() : NULL;
	if (!pc->t) {
		ret = errno ? errno : ENOMEM;
		dac_pc_close(pc);
		errno = ret;
		return NULL;
	}
	{
		struct dac_discover_stats st;

		ret = dac_tracker_sample_proc(pc->t, pc->d, opts->profile, dac_now_ns(), &st);
		if (ret == -ESRCH)	/* that process is gone: no counters but the total */
			ret = 0;
		if (!ret && !opts->allow_partial && (st.denied_procs || st.denied_fds || st.denied_stat_fds))
			pc->err = EACCES;	/* every call reports it */
	}
	if (!ret)
		ret = build(pc);
	if (ret) {
		dac_pc_close(pc);
		errno = -ret;
		return NULL;
	}
	return pc;
}

void dac_pc_close(struct dac_pc *pc)
{
	size_t i, k;

	if (!pc)
		return;
	for (i = 0; i < pc->nc; i++) {
		free((char *)pc->c[i].info.name);
		free((char *)pc->c[i].info.description);
		free(pc->c[i].base);
	}
	free(pc->c);
	for (i = 0; i < pc->ndevs; i++) {
		for (k = 0; k < pc->devs[i].neng; k++)
			free(pc->devs[i].eng[k]);
		free(pc->devs[i].eng);
		free(pc->devs[i].cap);
		free(pc->devs[i].acc);
	}
	free(pc->devs);
	dac_tracker_free(pc->t);
	dac_discover_free(pc->d);
	free(pc);
}

int dac_pc_get_error(const struct dac_pc *pc)
{
	return pc ? pc->err : EINVAL;
}

/* EACCES from the open-time walk sticks until a later walk reads everything. */
static bool denied(struct dac_pc *pc)
{
	if (pc->err == EACCES) {
		errno = EACCES;
		return true;
	}
	pc->err = 0;
	return false;
}

int dac_pc_get_number(struct dac_pc *pc)
{
	if (denied(pc))
		return -1;
	return (int)pc->nc;
}

const struct dac_pc_info *dac_pc_get_info(struct dac_pc *pc, int index)
{
	if (denied(pc))
		return NULL;
	if (index < 0 || (size_t)index >= pc->nc) {
		fail(pc, EINVAL);
		return NULL;
	}
	return &pc->c[index].info;
}

static int set_active(struct dac_pc *pc, const int *idx, int n, bool on)
{
	int i;

	if (denied(pc))
		return -1;
	if (n < 0 || (n && !idx))
		return fail(pc, EINVAL);
	for (i = 0; i < n; i++)
		if (idx[i] < 0 || (size_t)idx[i] >= pc->nc)
			return fail(pc, EINVAL);
	for (i = 0; i < n; i++) {
		struct pc_counter *c = &pc->c[idx[i]];

		if (on && !c->active) {
			rebase(pc, c);
			c->value = 0;
		}
		c->active = on;
	}
	return 0;
}

int dac_pc_activate(struct dac_pc *pc, const int *indexes, int numindexes)
{
	return set_active(pc, indexes, numindexes, true);
}

int dac_pc_deactivate(struct dac_pc *pc, const int *indexes, int numindexes)
{
	return set_active(pc, indexes, numindexes, false);
}

int dac_pc_start(struct dac_pc *pc)
{
	size_t i;

	pc->err = 0;
	for (i = 0; i < pc->ndevs; i++)
		memset(pc->devs[i].acc, 0, pc->devs[i].neng * sizeof(*pc->devs[i].acc));
	pc->sampling = true;
	pc->stopped = false;
	if (reading(pc, true)) {
		pc->sampling = false;
		return -1;
	}
	pc->started = true;
	for (i = 0; i < pc->nc; i++) {
		rebase(pc, &pc->c[i]);
		pc->c[i].value = 0;
	}
	return 0;
}

int dac_pc_stop(struct dac_pc *pc)
{
	size_t i;

	if (pc->err == EACCES && !pc->sampling)
		return fail(pc, EACCES);
	pc->err = 0;
	if (pc->sampling && reading(pc, false))
		return -1;
	for (i = 0; i < pc->nc; i++)
		pc->c[i].value = pc->c[i].active ? value_of(pc, &pc->c[i]) : DAC_PC_UNKNOWN;
	pc->sampling = false;
	pc->stopped = true;
	return 0;
}

int dac_pc_get_values(struct dac_pc *pc, const int *idx, int n, int64_t *values)
{
	int i;

	if (!pc->sampling && denied(pc))
		return -1;
	pc->err = 0;
	if (n < 0 || (n && (!idx || !values)))
		return fail(pc, EINVAL);
	for (i = 0; i < n; i++)
		if (idx[i] < 0 || (size_t)idx[i] >= pc->nc)
			return fail(pc, EINVAL);
	if (pc->sampling && reading(pc, false))
		return -1;
	for (i = 0; i < n; i++) {
		const struct pc_counter *c = &pc->c[idx[i]];

		if (!c->active)
			values[i] = DAC_PC_UNKNOWN;
		else if (pc->stopped)
			values[i] = c->value;
		else
			values[i] = value_of(pc, c);
	}
	return 0;
}
