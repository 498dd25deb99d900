// SPDX-License-Identifier: MIT
/*
 * bpf_parse.c - the loader's decisions and parsers that need no BPF: which
 * program set the running kernel wants (from tracefs and BTF files), record
 * layout checks against tracefs format files, CLIENT_EXIT record decoding
 * and the probe's fdinfo parsing (see bpf_priv.h). Everything here reads
 * files under roots it is given, so host tests run it on hand-made trees
 * without root or a kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_priv.h"
#include "../../bpf/drmacct_bpf.h"

static const char *const default_events[] = {
	"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events", NULL
};

static bool path_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

/* @rel ("system" or "system/event") exists under one of the events roots. */
static bool events_have(const struct dac_bpf_env *env, const char *rel)
{
	const char *one[2] = { env && env->events_root ? env->events_root : NULL, NULL };
	const char *const *roots = one[0] ? one : default_events;
	char p[4096];

	for (; *roots; roots++) {
		if (snprintf(p, sizeof(p), "%s/%s", *roots, rel) >= (int)sizeof(p))
			continue;
		if (path_exists(p))
			return true;
	}
	return false;
}

static const char *btf_dir(const struct dac_bpf_env *env)
{
	return env && env->btf_dir ? env->btf_dir : "/sys/kernel/btf";
}

static bool module_btf(const struct dac_bpf_env *env, const char *mod)
{
	char p[4096];

	if (snprintf(p, sizeof(p), "%s/%s", btf_dir(env), mod) >= (int)sizeof(p))
		return false;
	return path_exists(p);
}

/*
 * The scheduler set gpu_sched's BTF describes: its tp_btf attach points are
 * the typedefs btf_trace_<event>. 0 when the BTF cannot be read or has
 * neither.
 */
static int btf_sched_set(const struct dac_bpf_env *env)
{
	char base_p[4096], mod_p[4096];
	libbpf_print_fn_t quiet;
	struct btf *base, *mod;
	int set = 0;

	if (snprintf(base_p, sizeof(base_p), "%s/vmlinux", btf_dir(env)) >= (int)sizeof(base_p) ||
	    snprintf(mod_p, sizeof(mod_p), "%s/gpu_sched", btf_dir(env)) >= (int)sizeof(mod_p))
		return 0;
	/* Unreadable BTF is an answer here (fall back to tracefs), not news. */
	quiet = libbpf_set_print(NULL);
	base = btf__parse(base_p, NULL);
	if (!base) {
		libbpf_set_print(quiet);
		return 0;
	}
	mod = btf__parse_split(mod_p, base);
	if (mod) {
		if (btf__find_by_name_kind(mod, "btf_trace_drm_sched_job_run", BTF_KIND_TYPEDEF) > 0)
			set = DAC_SCHED_SET_617;
		else if (btf__find_by_name_kind(mod, "btf_trace_drm_run_job", BTF_KIND_TYPEDEF) > 0)
			set = DAC_SCHED_SET_61;
		btf__free(mod);
	}
	btf__free(base);
	libbpf_set_print(quiet);
	return set;
}

/* Does struct @sname in @btf have a member @member? */
static bool btf_struct_has(const struct btf *btf, const char *sname, const char *member)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_member *m;
	const struct btf_type *t;

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (unsigned short i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return true;
	return false;
}

/*
 * Does the kernel's BTF (vmlinux, or gpu_sched's module BTF on top of it)
 * describe every member of @want ("struct.member" pairs, NULL-ended)? The
 * plain tracepoint programs find a job's scheduler through CO-RE reads of
 * those members; without them they fall back to the ring's name.
 */
static bool btf_has_all(const struct dac_bpf_env *env, const char *const (*want)[2])
{
	char base_p[4096], mod_p[4096];
	libbpf_print_fn_t quiet;
	struct btf *base, *mod;
	bool yes = false;

	if (snprintf(base_p, sizeof(base_p), "%s/vmlinux", btf_dir(env)) >= (int)sizeof(base_p) ||
	    snprintf(mod_p, sizeof(mod_p), "%s/gpu_sched", btf_dir(env)) >= (int)sizeof(mod_p))
		return false;
	quiet = libbpf_set_print(NULL);
	base = btf__parse(base_p, NULL);
	if (base) {
		mod = btf__parse_split(mod_p, base);
		yes = true;
		for (; yes && (*want)[0]; want++)
			yes = btf_struct_has(mod ? mod : base, (*want)[0], (*want)[1]);
		btf__free(mod);
		btf__free(base);
	}
	libbpf_set_print(quiet);
	return yes;
}

/* The plain 6.1 programs: the record's entity, entity->rq->sched. */
static const char *const entity_sched_path[][2] = {
	{ "drm_sched_entity", "rq" }, { "drm_sched_rq", "sched" }, { NULL, NULL }
};

/*
 * The plain 6.17 programs: drm_sched_job_run fires in the scheduler's
 * run-job work item, which the current workqueue worker names
 * (task->worker_private is its struct kthread, whose data is the struct
 * worker, whose current_work is &sched->work_run_job).
 */
static const char *const worker_sched_path[][2] = {
	{ "task_struct", "worker_private" }, { "kthread", "data" },
	{ "worker", "current_work" }, { "drm_gpu_scheduler", "work_run_job" },
	{ "drm_gpu_scheduler", "name" }, { NULL, NULL }
};

enum dac_bpf_ring_identity dac_bpf_ring_identity_of(const struct dac_bpf_env *env, int sched,
						    int set)
{
	if (sched < 0)
		return DAC_BPF_RING_NONE;
	if (sched == 1)
		return DAC_BPF_RING_SCHED;
	if (set == DAC_SCHED_SET_617)
		return btf_has_all(env, worker_sched_path) ? DAC_BPF_RING_SCHED :
							     DAC_BPF_RING_DEV_NAME;
	return btf_has_all(env, entity_sched_path) ? DAC_BPF_RING_SCHED : DAC_BPF_RING_NAME;
}

/* The tp_btf programs: the scheduler fence's client id (6.17; Debian's 6.12). */
static const char *const fence_client_path[][2] = {
	{ "drm_sched_fence", "drm_client_id" }, { NULL, NULL }
};

bool dac_bpf_client_ids_of(const struct dac_bpf_env *env, int sched, int set)
{
	if (sched < 0)
		return false;
	if (sched == 0)
		return set == DAC_SCHED_SET_617;
	return btf_has_all(env, fence_client_path);
}

const char *dac_bpf_ring_identity_name(enum dac_bpf_ring_identity id)
{
	switch (id) {
	case DAC_BPF_RING_SCHED:
		return "scheduler";
	case DAC_BPF_RING_NAME:
		return "ring name";
	case DAC_BPF_RING_DEV_NAME:
		return "device and ring name";
	case DAC_BPF_RING_NONE:
		break;
	}
	return "none";
}

/* The scheduler set tracefs shows: 0 when it shows neither. */
static int tracefs_sched_set(const struct dac_bpf_env *env)
{
	if (events_have(env, "gpu_scheduler/drm_sched_job_run"))
		return DAC_SCHED_SET_617;
	if (events_have(env, "gpu_scheduler/drm_run_job"))
		return DAC_SCHED_SET_61;
	return 0;
}

/* One source: 1 tp_btf, 0 tracepoint, -ENOENT unavailable. */
static int pick_variant(enum dac_bpf_attach mode, bool btf, bool tp)
{
	switch (mode) {
	case DAC_BPF_ATTACH_BTF:
		return btf ? 1 : -ENOENT;
	case DAC_BPF_ATTACH_TRACEPOINT:
		/* Without tracefs mounted, a loaded module's BTF still says it is there. */
		return tp || btf ? 0 : -ENOENT;
	default:
		return btf ? 1 : tp ? 0 : -ENOENT;
	}
}

int dac_bpf_plan(const struct dac_bpf_env *env, const struct dac_bpf_load_opts *o,
		 struct dac_bpf_plan *p)
{
	enum dac_bpf_attach mode = o ? o->attach : DAC_BPF_ATTACH_AUTO;

	memset(p, 0, sizeof(*p));
	p->drmacct = -ENOENT;
	p->sched = -ENOENT;
	if (!o || !o->no_drmacct)
		p->drmacct = pick_variant(mode, module_btf(env, "drmacct"),
					  events_have(env, "drmacct"));
	if (!o || !o->no_sched) {
		bool btf = module_btf(env, "gpu_sched");

		p->sched = pick_variant(mode, btf, events_have(env, "gpu_scheduler"));
		if (p->sched == 1)
			p->sched_set = btf_sched_set(env);
		if (p->sched >= 0 && !p->sched_set)
			p->sched_set = tracefs_sched_set(env);
		/*
		 * Neither BTF nor tracefs names an event (tracefs not mounted,
		 * BTF unreadable): the 6.1 names, whose attach failure then
		 * says what is missing.
		 */
		if (p->sched >= 0 && !p->sched_set)
			p->sched_set = DAC_SCHED_SET_61;
	}
	p->ring_identity = dac_bpf_ring_identity_of(env, p->sched, p->sched_set);
	p->client_ids = dac_bpf_client_ids_of(env, p->sched, p->sched_set);
	return p->drmacct < 0 && p->sched < 0 ? -ENODEV : 0;
}

/* ---- record layouts ----------------------------------------------------- */

const struct dac_tp_field dac_bpf_drmacct_fields[] = {
	{ "drmacct/drmacct_client_open", "client_id", 8, NULL },
	{ "drmacct/drmacct_client_open", "device_id", 16, NULL },
	{ "drmacct/drmacct_client_open", "driver", 20, "__data_loc" },
	{ "drmacct/drmacct_client_close", "client_id", 8, NULL },
	{ "drmacct/drmacct_client_close", "device_id", 16, NULL },
	{ "drmacct/drmacct_client_close", "num_engines", 20, NULL },
	{ "drmacct/drmacct_client_close", "busy_ns", 24, "__data_loc" },
	{ "drmacct/drmacct_client_close", "cycles", 28, "__data_loc" },
	{ "drmacct/drmacct_job_begin", "client_id", 8, NULL },
	{ "drmacct/drmacct_job_begin", "ts_ns", 16, NULL },
	{ "drmacct/drmacct_job_begin", "engine", 24, NULL },
	{ "drmacct/drmacct_job_begin", "device_id", 32, NULL },
	{ "drmacct/drmacct_job_end", "client_id", 8, NULL },
	{ "drmacct/drmacct_job_end", "ts_ns", 16, NULL },
	{ "drmacct/drmacct_job_end", "busy_ns", 24, NULL },
	{ "drmacct/drmacct_job_end", "cycles", 32, NULL },
	{ "drmacct/drmacct_job_end", "engine", 40, NULL },
	{ "drmacct/drmacct_job_end", "device_id", 48, NULL },
	{ "drmacct/drmacct_mem_change", "client_id", 8, NULL },
	{ "drmacct/drmacct_mem_change", "size", 16, NULL },
	{ "drmacct/drmacct_mem_change", "region", 24, NULL },
	{ "drmacct/drmacct_mem_change", "op", 28, NULL },
	{ "drmacct/drmacct_device_name", "client_id", 8, NULL },
	{ "drmacct/drmacct_device_name", "device_id", 16, NULL },
	{ "drmacct/drmacct_device_name", "rdev", 20, NULL },
	{ "drmacct/drmacct_device_name", "kind", 24, NULL },
	{ "drmacct/drmacct_device_name", "index", 28, NULL },
	{ "drmacct/drmacct_device_name", "capacity", 32, NULL },
	{ "drmacct/drmacct_device_name", "name", 36, "__data_loc" },
	{ NULL, NULL, 0, NULL }
};

const struct dac_tp_field dac_bpf_sched61_fields[] = {
	{ "gpu_scheduler/drm_sched_job", "fence", 16, "*" },
	{ "gpu_scheduler/drm_run_job", "entity", 8, "*" },
	{ "gpu_scheduler/drm_run_job", "fence", 16, "*" },
	{ "gpu_scheduler/drm_run_job", "name", 24, "__data_loc" },
	{ "gpu_scheduler/drm_sched_process_job", "fence", 8, "*" },
	{ NULL, NULL, 0, NULL }
};

/* struct tp617_* in bpf/drmacct/sched.bpf.c */
const struct dac_tp_field dac_bpf_sched617_fields[] = {
	{ "gpu_scheduler/drm_sched_job_queue", "fence_context", 24, NULL },
	{ "gpu_scheduler/drm_sched_job_queue", "fence_seqno", 32, NULL },
	{ "gpu_scheduler/drm_sched_job_queue", "client_id", 40, NULL },
	{ "gpu_scheduler/drm_sched_job_run", "name", 8, "__data_loc" },
	{ "gpu_scheduler/drm_sched_job_run", "dev", 20, "__data_loc" },
	{ "gpu_scheduler/drm_sched_job_run", "fence_context", 24, NULL },
	{ "gpu_scheduler/drm_sched_job_run", "fence_seqno", 32, NULL },
	{ "gpu_scheduler/drm_sched_job_run", "client_id", 40, NULL },
	{ "gpu_scheduler/drm_sched_job_done", "fence_context", 8, NULL },
	{ "gpu_scheduler/drm_sched_job_done", "fence_seqno", 16, NULL },
	{ NULL, NULL, 0, NULL }
};

long dac_bpf_format_offset(const char *text, const char *field, const char *type)
{
	size_t flen = strlen(field);
	const char *l = text;

	while (l && *l) {
		const char *nl = strchr(l, '\n');
		const char *semi = strchr(l, ';'), *off, *t;
		char *end;
		long v;

		if (strncmp(l, "\tfield:", 7) || !semi || (nl && semi > nl) ||
		    (size_t)(semi - l) < 7 + flen + 1 || strncmp(semi - flen, field, flen) ||
		    (semi[-(long)flen - 1] != ' ' && semi[-(long)flen - 1] != ']')) {
			l = nl ? nl + 1 : NULL;
			continue;
		}
		off = strstr(semi, "offset:");
		if (!off || (nl && off > nl))
			return -1;
		if (type) {
			t = strstr(l, type);
			if (!t || t > semi)
				return -2;
		}
		errno = 0;
		v = strtol(off + 7, &end, 10);
		if (end == off + 7 || errno || v < 0 || *end != ';')
			return -1;
		return v;
	}
	return -1;
}

int dac_bpf_check_layout(const struct dac_bpf_env *env, const struct dac_tp_field *f,
			 unsigned int *shift)
{
	const char *one[2] = { env && env->events_root ? env->events_root : NULL, NULL };
	const char *const *roots = one[0] ? one : default_events;
	long first = -1;

	for (; f->event; f++) {
		char path[4096], *text = NULL;
		size_t len = 0, cap = 0;
		int fd = -1;
		long at;

		for (const char *const *r = roots; *r && fd < 0; r++) {
			if (snprintf(path, sizeof(path), "%s/%s/format", *r, f->event) >=
			    (int)sizeof(path))
				continue;
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0)
			return -ENOENT;
		/* Format files have no size (tracefs): read to EOF, any length. */
		for (;;) {
			ssize_t n;

			if (cap - len < 2) {
				char *tmp = realloc(text, cap ? cap * 2 : 4096);

				if (!tmp) {
					free(text);
					close(fd);
					return -ENOMEM;
				}
				text = tmp;
				cap = cap ? cap * 2 : 4096;
			}
			n = read(fd, text + len, cap - len - 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				int err = -errno;

				free(text);
				close(fd);
				return err;
			}
			if (n == 0)
				break;
			len += n;
		}
		close(fd);
		if (!len) {
			free(text);
			return -EIO;
		}
		text[len] = '\0';
		at = dac_bpf_format_offset(text, f->field, f->type);
		free(text);
		/*
		 * A kernel whose common header is larger (PREEMPT_RT adds
		 * preempt-lazy and migrate-disable counts) moves every field
		 * by the same amount; anything else is another layout.
		 */
		if (at < (long)f->offset || at - (long)f->offset > DAC_TP_MAX_SHIFT ||
		    (first >= 0 && at - (long)f->offset != first) ||
		    (!shift && at != (long)f->offset))
			return -EPROTO;
		first = at - (long)f->offset;
	}
	if (shift)
		*shift = first > 0 ? (unsigned int)first : 0;
	return 0;
}

/* ---- records -------------------------------------------------------------- */

int dac_bpf_decode_exit(const void *data, size_t size, const struct dac_rec_exit **hdr,
			const struct dac_rec_engine **eng, const struct dac_rec_region **reg)
{
	const struct dac_rec_exit *r = data;
	size_t need;

	if (!data || size < sizeof(*r))
		return -EBADMSG;
	if (r->type != DAC_REC_CLIENT_EXIT || r->size > size || r->size < sizeof(*r) ||
	    r->num_engines > DAC_EXIT_MAX_ENGINES || r->num_regions > DAC_EXIT_MAX_REGIONS)
		return -EBADMSG;
	need = sizeof(*r) + (size_t)r->num_engines * sizeof(**eng) +
	       (size_t)r->num_regions * sizeof(**reg);
	if (need > r->size)
		return -EBADMSG;
	*hdr = r;
	*eng = (const void *)(r + 1);
	*reg = (const void *)(*eng + r->num_engines);
	return 0;
}

int dac_bpf_decode_proc_exit(const void *data, size_t size,
			     const struct dac_rec_proc_exit **hdr, const struct dac_rec_ring **ring)
{
	const struct dac_rec_proc_exit *r = data;

	if (!data || size < sizeof(*r))
		return -EBADMSG;
	if (r->type != DAC_REC_PROC_EXIT || r->size > size || r->size < sizeof(*r) ||
	    r->num_rings > DAC_PROC_MAX_RINGS ||
	    sizeof(*r) + (size_t)r->num_rings * sizeof(**ring) > r->size)
		return -EBADMSG;
	*hdr = r;
	*ring = (const void *)(r + 1);
	return 0;
}
