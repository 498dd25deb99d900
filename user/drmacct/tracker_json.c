// SPDX-License-Identifier: MIT
/*
 * tracker_json.c - the drmacct-list JSON document (tracker_json.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include "json.h"
#include "order.h"
#include "procinfo.h"
#include "tracker_json.h"

static void json_device(struct dac_json *j, dev_t rdev)
{
	struct dac_dev_id id;
	char name[32];
	bool known = !dac_dev_identify(major(rdev), minor(rdev), &id);

	dac_json_obj_begin(j, "device");
	dac_json_u64(j, "major", major(rdev));
	dac_json_u64(j, "minor", minor(rdev));
	dac_json_str(j, "name", dac_dev_name(major(rdev), minor(rdev), name, sizeof(name)));
	if (known && id.bus[0])
		dac_json_str(j, "bus", id.bus);
	else
		dac_json_null(j, "bus");
	if (known && id.has_pci) {
		dac_json_obj_begin(j, "pci");
		dac_json_str(j, "slot", id.slot);
		dac_json_u64(j, "vendor_id", id.vendor_id);
		dac_json_u64(j, "device_id", id.device_id);
		dac_json_u64(j, "subvendor_id", id.subvendor_id);
		dac_json_u64(j, "subdevice_id", id.subdevice_id);
		dac_json_obj_end(j);
	} else {
		dac_json_null(j, "pci");
	}
	dac_json_obj_end(j);
}

/* "cmdline" and "cgroup" of @pid, null when /proc does not say. */
static void json_procinfo(struct dac_json *j, const struct cli_json_opts *o, pid_t pid)
{
	char *cmd, *cg;

	if (!o->procinfo)
		return;
	cmd = cli_proc_cmdline(o->proc_root, pid);
	cg = cli_proc_cgroup(o->proc_root, pid);
	if (cmd)
		dac_json_str(j, "cmdline", cmd);
	else
		dac_json_null(j, "cmdline");
	if (cg)
		dac_json_str(j, "cgroup", cg);
	else
		dac_json_null(j, "cgroup");
	free(cmd);
	free(cg);
}

static void json_engines(struct dac_json *j, const struct dac_tk_client *c)
{
	size_t i;

	dac_json_arr_begin(j, "engines");
	for (i = 0; i < c->nengines; i++) {
		const struct dac_tk_engine *e = &c->engines[i];

		if (!e->present)
			continue;
		dac_json_obj_begin(j, NULL);
		dac_json_str(j, "name", e->name);
		dac_json_u64(j, "capacity", e->capacity);
		if (e->has_busy) {
			dac_json_u64(j, "busy_ns", e->busy.value);
			dac_json_u64(j, "busy_ns_raw", e->busy.raw);
			dac_json_u64(j, "delta_busy_ns", e->d_busy_ns);
		}
		if (e->has_cycles) {
			dac_json_u64(j, "cycles", e->cycles.value);
			dac_json_u64(j, "delta_cycles", e->d_cycles);
		}
		if (e->has_maxfreq)
			dac_json_u64(j, "maxfreq_hz", e->maxfreq_hz);
		if (e->has_total_cycles) {
			dac_json_u64(j, "total_cycles", e->total_cycles.value);
			dac_json_u64(j, "delta_total_cycles", e->d_total_cycles);
		}
		dac_json_double(j, "utilization", e->util);
		dac_json_str(j, "utilization_source", dac_util_source_name(e->util_src));
		dac_json_double(j, "utilization_time", e->util_time);
		dac_json_double(j, "utilization_cycles", e->util_cycles);
		dac_json_bool(j, "held", e->busy.held || e->cycles.held || e->total_cycles.held);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
}

static void json_regions(struct dac_json *j, const struct dac_tk_client *c)
{
	size_t i;

	dac_json_arr_begin(j, "memory");
	for (i = 0; i < c->nregions; i++) {
		const struct dac_tk_region *r = &c->regions[i];

		dac_json_obj_begin(j, NULL);
		dac_json_str(j, "region", r->name);
		if (r->has_total)
			dac_json_u64(j, "total", r->total);
		if (r->has_shared)
			dac_json_u64(j, "shared", r->shared);
		if (r->has_resident)
			dac_json_u64(j, "resident", r->resident);
		if (r->has_purgeable)
			dac_json_u64(j, "purgeable", r->purgeable);
		if (r->has_active)
			dac_json_u64(j, "active", r->active);
		dac_json_bool(j, "legacy", r->resident_from_legacy);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
}

static void json_agg(struct dac_json *j, const struct dac_tk_agg *a)
{
	size_t i;

	dac_json_arr_begin(j, "engines");
	for (i = 0; i < a->nengines; i++) {
		const struct dac_tk_agg_engine *e = &a->engines[i];

		dac_json_obj_begin(j, NULL);
		json_device(j, e->rdev);
		dac_json_str(j, "name", e->name);
		dac_json_u64(j, "clients", e->nclients);
		dac_json_u64_opt(j, "busy_ns", e->has_busy, e->busy_ns);
		dac_json_u64_opt(j, "delta_busy_ns", e->has_busy, e->d_busy_ns);
		dac_json_u64_opt(j, "cycles", e->has_cycles, e->cycles);
		dac_json_u64_opt(j, "delta_cycles", e->has_cycles, e->d_cycles);
		dac_json_double(j, "utilization", e->util);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
	dac_json_arr_begin(j, "memory");
	for (i = 0; i < a->nregions; i++) {
		const struct dac_tk_agg_region *r = &a->regions[i];

		dac_json_obj_begin(j, NULL);
		json_device(j, r->rdev);
		dac_json_str(j, "region", r->name);
		/* null: no client printed that kind (not 0 bytes) */
		dac_json_u64_opt(j, "total", r->has_total, r->total);
		dac_json_u64_opt(j, "shared", r->has_shared, r->shared);
		dac_json_u64_opt(j, "resident", r->has_resident, r->resident);
		dac_json_u64_opt(j, "purgeable", r->has_purgeable, r->purgeable);
		dac_json_u64_opt(j, "active", r->has_active, r->active);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
}

int cli_json_tracker(FILE *f, const struct dac_tracker *t,
		     const struct dac_discover_stats *st, const struct cli_json_opts *o)
{
	size_t nc = dac_tracker_nclients(t), np = dac_tracker_nprocs(t);
	size_t *corder = cli_sorted_clients(t, o->sort, o->reverse);
	size_t *porder = cli_sorted_procs(t, o->sort, o->reverse);
	size_t *pos = malloc((nc ? nc : 1) * sizeof(*pos));	/* tracker index -> output */
	struct dac_json j;
	size_t i, k;

	if (!corder || !porder || !pos) {
		free(corder);
		free(porder);
		free(pos);
		return -ENOMEM;
	}
	for (i = 0; i < nc; i++)
		pos[corder[i]] = i;
	dac_json_init(&j, f, o->pretty);
	dac_json_obj_begin(&j, NULL);
	dac_json_str(&j, "schema", "drmacct-list/1");
	if (o->update)
		dac_json_u64(&j, "update", o->update);
	dac_json_str(&j, "sort", cli_sort_name(o->sort));
	dac_json_bool(&j, "reverse", o->reverse);
	if (dac_tracker_interval_ns(t))
		dac_json_u64(&j, "interval_ns", dac_tracker_interval_ns(t));
	else
		dac_json_null(&j, "interval_ns");
	dac_json_obj_begin(&j, "discovery");
	dac_json_u64(&j, "processes", st->procs);
	dac_json_u64(&j, "fds", st->fds);
	dac_json_u64(&j, "drm_fds", st->drm_fds);
	dac_json_u64(&j, "denied_processes", st->denied_procs);
	dac_json_u64(&j, "denied_fds", st->denied_fds);
	dac_json_u64(&j, "unexamined_fds", st->denied_stat_fds);
	dac_json_u64(&j, "exited_processes", st->gone_procs);
	dac_json_u64(&j, "closed_fds", st->gone_fds);
	dac_json_u64(&j, "errors", st->errors);
	dac_json_obj_end(&j);

	dac_json_arr_begin(&j, "clients");
	for (i = 0; i < nc; i++) {
		const struct dac_tk_client *c = dac_tracker_client(t, corder[i]);

		dac_json_obj_begin(&j, NULL);
		dac_json_u64(&j, "index", i);
		json_device(&j, c->rdev);
		dac_json_str(&j, "driver", c->driver);
		dac_json_str(&j, "pdev", c->pdev);
		if (c->has_client_id)
			dac_json_u64(&j, "client_id", c->client_id);
		else
			dac_json_null(&j, "client_id");
		dac_json_str(&j, "client_name", c->client_name);
		dac_json_str(&j, "stats", c->nengines || c->nregions ? "full" : "core");
		if (c->cgroup)
			dac_json_str(&j, "cgroup", c->cgroup);
		dac_json_u64(&j, "spec_errors", c->spec_errors);
		if (c->interval_ns)
			dac_json_u64(&j, "interval_ns", c->interval_ns);
		else
			dac_json_null(&j, "interval_ns");
		dac_json_arr_begin(&j, "holders");
		for (k = 0; k < c->nholders; k++) {
			dac_json_obj_begin(&j, NULL);
			dac_json_i64(&j, "pid", c->holders[k].pid);
			dac_json_str(&j, "comm", c->holders[k].comm);
			dac_json_i64(&j, "fd", c->holders[k].fd);
			json_procinfo(&j, o, c->holders[k].pid);
			dac_json_obj_end(&j);
		}
		dac_json_arr_end(&j);
		json_engines(&j, c);
		json_regions(&j, c);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);

	dac_json_arr_begin(&j, "processes");
	for (i = 0; i < np; i++) {
		const struct dac_tk_process *p = dac_tracker_proc(t, porder[i]);

		dac_json_obj_begin(&j, NULL);
		dac_json_i64(&j, "pid", p->pid);
		dac_json_str(&j, "comm", p->comm);
		json_procinfo(&j, o, p->pid);
		dac_json_arr_begin(&j, "clients");
		for (k = 0; k < p->nclients; k++)
			dac_json_u64(&j, NULL, p->clients[k] < nc ? pos[p->clients[k]] : p->clients[k]);
		dac_json_arr_end(&j);
		json_agg(&j, &p->agg);
		dac_json_obj_end(&j);
	}
	dac_json_arr_end(&j);

	dac_json_obj_begin(&j, "totals");
	dac_json_u64(&j, "clients", dac_tracker_nclients(t));
	dac_json_u64(&j, "processes", dac_tracker_nprocs(t));
	dac_json_u64(&j, "drm_fds_without_stats", dac_tracker_nostats(t));
	json_agg(&j, dac_tracker_totals(t));
	dac_json_obj_end(&j);
	dac_json_obj_end(&j);
	free(corder);
	free(porder);
	free(pos);
	return dac_json_finish(&j);
}
