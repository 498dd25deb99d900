// SPDX-License-Identifier: MIT
/*
 * view.c - plain-text tables of the tracker state (list, top's batch mode).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "cli.h"
#include "order.h"
#include "output.h"
#include "procinfo.h"
#include "tracker.h"
#include "view.h"

static void fmt_util(double u, char *buf, size_t len)
{
	if (isnan(u))
		snprintf(buf, len, "%6s", "-");
	else
		snprintf(buf, len, "%5.1f%%", u * 100.0);
}

static void fmt_pids(const struct dac_tk_client *c, char *buf, size_t len)
{
	size_t i, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < c->nholders && pos < len; i++) {
		int w;

		if (i && c->holders[i].pid == c->holders[i - 1].pid)
			continue;
		w = snprintf(buf + pos, len - pos, "%s%d", pos ? "," : "", (int)c->holders[i].pid);
		if (w < 0)
			break;
		pos += (size_t)w;
	}
}

static void print_engine(FILE *f, const struct dac_tk_engine *e)
{
	char u[16], uc[16], nb[CLI_PRINTABLE_MAX];

	fmt_util(e->util, u, sizeof(u));
	fprintf(f, "    %s", cli_pad(e->name, 16, nb, sizeof(nb)));
	if (e->has_busy)
		fprintf(f, " busy %7llu.%09llu s", (unsigned long long)(e->busy.value / 1000000000ull),
			(unsigned long long)(e->busy.value % 1000000000ull));
	if (e->has_cycles)
		fprintf(f, " cycles %llu", (unsigned long long)e->cycles.value);
	fprintf(f, "  util %s", u);
	if (e->util_src != DAC_UTIL_TIME && e->util_src != DAC_UTIL_NONE)
		fprintf(f, " (%s)", dac_util_source_name(e->util_src));
	else if (!isnan(e->util_cycles)) {
		fmt_util(e->util_cycles, uc, sizeof(uc));
		fprintf(f, "  freq-scaled %s", uc);
	}
	if (e->capacity > 1)
		fprintf(f, "  capacity %llu", (unsigned long long)e->capacity);
	if (e->busy.held || e->cycles.held)
		fprintf(f, "  (held)");
	fputc('\n', f);
}

static void print_region(FILE *f, const struct dac_tk_region *r)
{
	char b[32], nb[CLI_PRINTABLE_MAX];

	fprintf(f, "    %s", cli_pad(r->name, 16, nb, sizeof(nb)));
	if (r->has_total)
		fprintf(f, " total %s", cli_fmt_bytes(r->total, b, sizeof(b)));
	if (r->has_resident)
		fprintf(f, " resident %s%s", cli_fmt_bytes(r->resident, b, sizeof(b)),
			r->resident_from_legacy ? " (drm-memory)" : "");
	if (r->has_shared)
		fprintf(f, " shared %s", cli_fmt_bytes(r->shared, b, sizeof(b)));
	if (r->has_purgeable)
		fprintf(f, " purgeable %s", cli_fmt_bytes(r->purgeable, b, sizeof(b)));
	if (r->has_active)
		fprintf(f, " active %s", cli_fmt_bytes(r->active, b, sizeof(b)));
	fputc('\n', f);
}

/* What clients printed, summed: a kind nobody printed is left out. */
static void print_agg(FILE *f, const struct dac_tk_agg *a)
{
	char dev[32], u[16], b[32], nb[CLI_PRINTABLE_MAX];
	size_t i;

	for (i = 0; i < a->nengines; i++) {
		const struct dac_tk_agg_engine *e = &a->engines[i];

		fmt_util(e->util, u, sizeof(u));
		fprintf(f, "    %-10s %s", dac_dev_name(major(e->rdev), minor(e->rdev), dev,
						      sizeof(dev)),
			cli_pad(e->name, 16, nb, sizeof(nb)));
		if (e->has_busy)
			fprintf(f, " busy %7llu.%09llu s",
				(unsigned long long)(e->busy_ns / 1000000000ull),
				(unsigned long long)(e->busy_ns % 1000000000ull));
		if (e->has_cycles)
			fprintf(f, " cycles %llu", (unsigned long long)e->cycles);
		fprintf(f, "  util %s\n", u);
	}
	for (i = 0; i < a->nregions; i++) {
		const struct dac_tk_agg_region *r = &a->regions[i];

		fprintf(f, "    %-10s %s", dac_dev_name(major(r->rdev), minor(r->rdev), dev,
						      sizeof(dev)),
			cli_pad(r->name, 16, nb, sizeof(nb)));
		if (r->has_total)
			fprintf(f, " total %s", cli_fmt_bytes(r->total, b, sizeof(b)));
		if (r->has_resident)
			fprintf(f, " resident %s", cli_fmt_bytes(r->resident, b, sizeof(b)));
		if (!r->has_total && !r->has_resident)
			fprintf(f, " total - resident -");
		fputc('\n', f);
	}
}

/*
 * With @procinfo: "command ..." and "cgroup ..." lines of process @pid;
 * @known is the cgroup the BPF table says (it wins). Without: only @known.
 */
static void print_procinfo(FILE *f, bool procinfo, const char *proc_root, pid_t pid,
			   const char *known)
{
	char nb[CLI_PRINTABLE_MAX], *cmd = NULL, *cg = NULL;

	if (procinfo && pid > 0) {
		cmd = cli_proc_cmdline(proc_root, pid);
		if (!known)
			known = cg = cli_proc_cgroup(proc_root, pid);
	}
	if (cmd)
		fprintf(f, "    command %s\n", cli_printable(cmd, nb, sizeof(nb)));
	if (known)
		fprintf(f, "    cgroup %s\n", cli_printable(known, nb, sizeof(nb)));
	free(cmd);
	free(cg);
}

static int print_table(FILE *f, const struct dac_tracker *t, enum cli_sort key, bool reverse,
		       bool per_process, bool procinfo, const char *proc_root)
{
	char pids[256], dev[32], mem[32], id[32];
	char cb[CLI_PRINTABLE_MAX], db[CLI_PRINTABLE_MAX], nb[CLI_PRINTABLE_MAX];
	size_t *order, i, k;

	if (per_process) {
		order = cli_sorted_procs(t, key, reverse);
		if (!order)
			return -1;
		fprintf(f, "%-8s %-16s %-8s %s\n", "PID", "COMM", "CLIENTS", "MEMORY");
		for (i = 0; i < dac_tracker_nprocs(t); i++) {
			const struct dac_tk_process *p = dac_tracker_proc(t, order[i]);

			fprintf(f, "%-8d %s %-8zu %s\n", (int)p->pid,
				cli_pad(p->comm, 16, cb, sizeof(cb)), p->nclients,
				cli_fmt_agg_mem(&p->agg, mem, sizeof(mem)));
			print_procinfo(f, procinfo, proc_root, p->pid, NULL);
			print_agg(f, &p->agg);
		}
		free(order);
	} else {
		order = cli_sorted_clients(t, key, reverse);
		if (!order)
			return -1;
		fprintf(f, "%-12s %-16s %-10s %-11s %-8s %-8s %s\n", "PID", "COMM", "DRIVER",
			"DEVICE", "CLIENT", "MEMORY", "NAME");
		for (i = 0; i < dac_tracker_nclients(t); i++) {
			const struct dac_tk_client *c = dac_tracker_client(t, order[i]);

			fmt_pids(c, pids, sizeof(pids));
			if (c->has_client_id)
				snprintf(id, sizeof(id), "%llu", (unsigned long long)c->client_id);
			else
				snprintf(id, sizeof(id), "-");
			fprintf(f, "%-12s %s %s %-11s %-8s %-8s %s\n", pids,
				cli_pad(c->nholders ? c->holders[0].comm : "", 16, cb, sizeof(cb)),
				cli_pad(c->driver ? c->driver : "-", 10, db, sizeof(db)),
				dac_dev_name(c->major, c->minor, dev, sizeof(dev)), id,
				cli_fmt_client_mem(c, mem, sizeof(mem)),
				cli_printable(c->client_name, nb, sizeof(nb)));
			print_procinfo(f, procinfo, proc_root, c->nholders ? c->holders[0].pid : 0,
				       c->cgroup);
			if (!c->nengines && !c->nregions)
				fprintf(f, "    core keys only: the driver prints no engine or "
					"memory key\n");
			for (k = 0; k < c->nengines; k++)
				if (c->engines[k].present)
					print_engine(f, &c->engines[k]);
			for (k = 0; k < c->nregions; k++)
				print_region(f, &c->regions[k]);
		}
		free(order);
	}
	fprintf(f, "%zu client%s in %zu process%s", dac_tracker_nclients(t),
		dac_tracker_nclients(t) == 1 ? "" : "s", dac_tracker_nprocs(t),
		dac_tracker_nprocs(t) == 1 ? "" : "es");
	if (dac_tracker_nostats(t))
		fprintf(f, "; %llu DRM fd%s without usage stats",
			(unsigned long long)dac_tracker_nostats(t),
			dac_tracker_nostats(t) == 1 ? "" : "s");
	fputc('\n', f);
	return 0;
}

/* The table, cells padded to their columns, and no blanks at a line's end. */
int cli_print_table(FILE *f, const struct dac_tracker *t, enum cli_sort key, bool reverse,
		    bool per_process, bool procinfo, const char *proc_root)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	int ret;

	if (!m)
		return -1;
	ret = print_table(m, t, key, reverse, per_process, procinfo, proc_root);
	if (fclose(m) || ret) {
		free(buf);
		return -1;
	}
	cli_put_trimmed(f, buf, n);
	free(buf);
	return 0;
}
