// SPDX-License-Identifier: MIT
/*
 * util.c - helpers shared by the drmacct subcommands: exit statuses of
 * children, opening the /proc walk, formatting, sorting and the list JSON
 * document. Option parsing is in opts.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf.h"
#include "cli.h"
#include "json.h"
#include "procinfo.h"

int cli_exec_status(int err)
{
	return err == ENOENT ? 127 : 126;
}

int cli_wait_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return CLI_EXIT_FAIL;
}

struct dac_discover *cli_open_discover(const char *cmd, const struct dac_discover_opts *o)
{
	struct dac_discover *d = dac_discover_new(o);

	if (!d)
		cli_error(cmd, "cannot open %s: %s", o->proc_root ? o->proc_root : "/proc",
			  strerror(errno));
	return d;
}

int cli_open_tracker(const char *cmd, const struct dac_discover_opts *o,
		     struct dac_discover **d, struct dac_tracker **t)
{
	*t = NULL;
	*d = cli_open_discover(cmd, o);
	if (!*d)
		return -1;
	*t = dac_tracker_new();
	if (!*t) {
		cli_error(cmd, "out of memory");
		dac_discover_free(*d);
		*d = NULL;
		return -1;
	}
	return 0;
}

int cli_open_sampler(const char *cmd, enum cli_source src, const struct dac_discover_opts *o,
		     struct dac_bpf **b, struct dac_discover **d, struct dac_tracker **t)
{
	*d = NULL;
	*t = NULL;
	if (cli_source_open(cmd, src, o->pid || o->proc_root, b))
		return -1;
	if (cli_open_tracker(cmd, o, d, t)) {
		dac_bpf_close(*b);
		*b = NULL;
		return -1;
	}
	return 0;
}

void cli_close_sampler(struct dac_bpf *b, struct dac_discover *d, struct dac_tracker *t)
{
	dac_tracker_free(t);
	dac_discover_free(d);
	dac_bpf_close(b);
}

/*
 * Bytes of a safe character at @s (@n left), or 0 for a byte to replace:
 * C0 controls, DEL, C1 controls (U+0080..U+009F, which some terminals obey
 * as CSI & co.) and anything that is not well-formed UTF-8.
 */
static size_t safe_char(const unsigned char *s, size_t n)
{
	size_t seq;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	seq = dac_utf8_seq(s, n);
	if (seq == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return seq;
}

const char *cli_printable(const char *s, char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i, o, k;

	if (!s)
		return "";
	n = strlen(s);
	for (i = 0; i < n; i += k)
		if (!(k = safe_char(u + i, n - i)))
			break;
	if (i == n)
		return s;
	if (!len)
		return "";
	for (i = 0, o = 0; i < n && o + 1 < len; i += k ? k : 1) {
		k = safe_char(u + i, n - i);
		if (!k) {
			buf[o++] = '?';
		} else if (o + k < len) {
			memcpy(buf + o, s + i, k);
			o += k;
		} else {
			break;
		}
	}
	buf[o] = '\0';
	return buf;
}

const char *cli_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double v = (double)b;
	int u = -1;

	if (b < 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)b);
		return buf;
	}
	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

static const char *const sort_names[CLI_SORT__COUNT] = { "util", "mem", "pid", "id" };

int cli_parse_sort(const char *s, enum cli_sort *out)
{
	int i;

	for (i = 0; i < CLI_SORT__COUNT; i++)
		if (!strcmp(s, sort_names[i])) {
			*out = (enum cli_sort)i;
			return 0;
		}
	return -EINVAL;
}

const char *cli_sort_name(enum cli_sort s)
{
	return (unsigned int)s < CLI_SORT__COUNT ? sort_names[s] : "?";
}

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
		sum += a->regions[i].total ? a->regions[i].total : a->regions[i].resident;
	return sum;
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

void cli_note_discovery(const char *cmd, const struct dac_discover_stats *st)
{
	char buf[512];

	dac_discover_describe(st, buf, sizeof(buf));
	if (!buf[0])
		return;
	/* The root hint only when it would help. */
	fprintf(stderr, "drmacct %s: note: %s%s\n", cmd, buf,
		geteuid() && (st->denied_procs || st->denied_fds || st->denied_stat_fds) ?
		"; run as root to see every client" : "");
}

/* ---- JSON ---- */

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

static void json_util(struct dac_json *j, const char *key, double v)
{
	if (isnan(v))
		dac_json_null(j, key);
	else
		dac_json_double(j, key, v);
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
		json_util(j, "utilization", e->util);
		dac_json_str(j, "utilization_source", dac_util_source_name(e->util_src));
		json_util(j, "utilization_time", e->util_time);
		json_util(j, "utilization_cycles", e->util_cycles);
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
		dac_json_u64(j, "busy_ns", e->busy_ns);
		dac_json_u64(j, "delta_busy_ns", e->d_busy_ns);
		json_util(j, "utilization", e->util);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
	dac_json_arr_begin(j, "memory");
	for (i = 0; i < a->nregions; i++) {
		const struct dac_tk_agg_region *r = &a->regions[i];

		dac_json_obj_begin(j, NULL);
		json_device(j, r->rdev);
		dac_json_str(j, "region", r->name);
		dac_json_u64(j, "total", r->total);
		dac_json_u64(j, "shared", r->shared);
		dac_json_u64(j, "resident", r->resident);
		dac_json_u64(j, "purgeable", r->purgeable);
		dac_json_u64(j, "active", r->active);
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
	json_agg(&j, dac_tracker_totals(t));
	dac_json_obj_end(&j);
	dac_json_obj_end(&j);
	free(corder);
	free(porder);
	free(pos);
	return dac_json_finish(&j);
}
