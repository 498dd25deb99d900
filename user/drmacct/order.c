// SPDX-License-Identifier: MIT
/*
 * order.c - summaries and display order of clients and processes (order.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "order.h"
#include "output.h"

double cli_client_util(const struct dac_tk_client *c)
{
	double m = -1.0;
	size_t i;

	for (i = 0; i < c->nengines; i++)
		if (!isnan(c->engines[i].util) && c->engines[i].util > m)
			m = c->engines[i].util;
	return m;
}

uint64_t cli_client_mem(const struct dac_tk_client *c)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < c->nregions; i++)
		sum += c->regions[i].has_total ? c->regions[i].total : c->regions[i].resident;
	return sum;
}

uint64_t cli_agg_mem(const struct dac_tk_agg *a)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < a->nregions; i++)
		sum += a->regions[i].has_total ? a->regions[i].total : a->regions[i].resident;
	return sum;
}

bool cli_client_has_mem(const struct dac_tk_client *c)
{
	for (size_t i = 0; i < c->nregions; i++)
		if (c->regions[i].has_total || c->regions[i].has_resident)
			return true;
	return false;
}

bool cli_agg_has_mem(const struct dac_tk_agg *a)
{
	for (size_t i = 0; i < a->nregions; i++)
		if (a->regions[i].has_total || a->regions[i].has_resident)
			return true;
	return false;
}

const char *cli_fmt_client_mem(const struct dac_tk_client *c, char *buf, size_t len)
{
	if (!cli_client_has_mem(c)) {
		snprintf(buf, len, "-");
		return buf;
	}
	return cli_fmt_bytes(cli_client_mem(c), buf, len);
}

const char *cli_fmt_agg_mem(const struct dac_tk_agg *a, char *buf, size_t len)
{
	if (!cli_agg_has_mem(a)) {
		snprintf(buf, len, "-");
		return buf;
	}
	return cli_fmt_bytes(cli_agg_mem(a), buf, len);
}

double cli_agg_util(const struct dac_tk_agg *a)
{
	double m = -1.0;
	size_t i;

	for (i = 0; i < a->nengines; i++)
		if (!isnan(a->engines[i].util) && a->engines[i].util > m)
			m = a->engines[i].util;
	return m;
}

struct sort_ctx {
	const struct dac_tracker *t;
	enum cli_sort key;
	bool reverse;
	bool procs;
};

static _Thread_local struct sort_ctx sctx;

static int cmp3(double a, double b)
{
	return (a > b) - (a < b);
}

static int cmp_clients(const void *pa, const void *pb)
{
	const struct dac_tk_client *a = dac_tracker_client(sctx.t, *(const size_t *)pa);
	const struct dac_tk_client *b = dac_tracker_client(sctx.t, *(const size_t *)pb);
	int r = 0;

	switch (sctx.key) {
	case CLI_SORT_UTIL:
		r = -cmp3(cli_client_util(a), cli_client_util(b));
		break;
	case CLI_SORT_MEM:
		r = -cmp3((double)cli_client_mem(a), (double)cli_client_mem(b));
		break;
	case CLI_SORT_PID:
		r = cmp3(a->nholders ? a->holders[0].pid : 0, b->nholders ? b->holders[0].pid : 0);
		break;
	default:
		break;
	}
	if (!r)
		r = cmp3((double)a->client_id, (double)b->client_id);
	if (!r)
		r = cmp3((double)a->rdev, (double)b->rdev);
	if (!r)
		r = cmp3(*(const size_t *)pa, *(const size_t *)pb);
	return sctx.reverse ? -r : r;
}

static int cmp_procs(const void *pa, const void *pb)
{
	const struct dac_tk_process *a = dac_tracker_proc(sctx.t, *(const size_t *)pa);
	const struct dac_tk_process *b = dac_tracker_proc(sctx.t, *(const size_t *)pb);
	int r = 0;

	if (sctx.key == CLI_SORT_UTIL)
		r = -cmp3(cli_agg_util(&a->agg), cli_agg_util(&b->agg));
	else if (sctx.key == CLI_SORT_MEM)
		r = -cmp3((double)cli_agg_mem(&a->agg), (double)cli_agg_mem(&b->agg));
	if (!r)
		r = cmp3(a->pid, b->pid);
	return sctx.reverse ? -r : r;
}

static size_t *sorted(const struct dac_tracker *t, size_t n, enum cli_sort key, bool reverse,
		      int (*cmp)(const void *, const void *))
{
	size_t *v = malloc((n ? n : 1) * sizeof(*v)), i;

	if (!v)
		return NULL;
	for (i = 0; i < n; i++)
		v[i] = i;
	sctx.t = t;
	sctx.key = key;
	sctx.reverse = reverse;
	qsort(v, n, sizeof(*v), cmp);
	return v;
}

size_t *cli_sorted_clients(const struct dac_tracker *t, enum cli_sort key, bool reverse)
{
	return sorted(t, dac_tracker_nclients(t), key, reverse, cmp_clients);
}

size_t *cli_sorted_procs(const struct dac_tracker *t, enum cli_sort key, bool reverse)
{
	return sorted(t, dac_tracker_nprocs(t), key, reverse, cmp_procs);
}
