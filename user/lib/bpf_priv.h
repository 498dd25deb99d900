/* SPDX-License-Identifier: MIT */
/*
 * bpf_priv.h - internals shared by libdrmacct's BPF files (not installed).
 */
#ifndef DRMACCT_BPF_PRIV_H
#define DRMACCT_BPF_PRIV_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/types.h>

#include "bpf.h"

/*
 * The files and what each depends on (one way):
 *   bpf_handle.c   the handle, libbpf's log, error texts        -
 *   bpf_read.c     counters, names, records, map readers       handle
 *   bpf_tracker.c  the client tracker fed from the maps        read
 *   bpf_seed.c     clients open before the collection started  read
 *   bpf.c          load and attach                             handle, read, seed
 *   bpf_pinned.c   pin, unpin, open pinned                     handle, read
 *   bpf_parse.c, bpf_verify.c: load-time decisions, the verifier run.
 */

struct bpf_object;
struct drmacct_bpf;
struct ring_buffer;

enum dac_map_idx {
	M_META, M_CLIENTS, M_USAGE, M_MEM, M_TOTALS, M_RECORDS, M_STATS, M_NAMES,
	M_TRACKED, M_SCHED, M_COOKIE_USAGE, M_COOKIE_MEM, M_SCHED_CLIENTS, M_PROCS,
	M_CGROUP_SCHED, M__COUNT
};

struct dac_bpf {
	struct drmacct_bpf *skel;	/* loaded by us; NULL when opened pinned */
	int fd[M__COUNT];
	struct dac_bpf_info info;
	struct ring_buffer *rb;
	uint64_t drops_reported;
	/* poll state */
	dac_bpf_event_fn cb;
	void *cb_ctx;
	int cb_ret;
	int delivered;
	struct dac_bpf_engine_usage *eng;
	size_t eng_cap;
	struct dac_bpf_region_mem *reg;
	size_t reg_cap;
	struct dac_bpf_proc_ring *rings;
	size_t rings_cap;
	char *pin_dir;			/* when opened pinned */
	char *cgroup_filter;		/* dac_bpf_set_cgroup_filter() */
	uint64_t *cg_ids;		/* cgroup paths found so far */
	char **cg_paths;
	size_t ncg;
	/* devices whose names we tried to learn */
	uint32_t *learned;
	size_t nlearned;
	/* clients seeded inside dac_bpf_load(), or its -errno; reported once */
	int load_seeded;
};

/* Append @n bytes of @text to the load log, keeping its newest part. */
void dac_bpf_load_log_add(const char *text, size_t n);

/* A handle with every map fd -1 (bpf_handle.c); NULL without memory. */
struct dac_bpf *dac_bpf_alloc(void);

/* stats[@which] of the collection, 0 when unreadable. */
uint64_t dac_bpf_stat_get(struct dac_bpf *b, uint32_t which);

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns() and the events. */
uint64_t dac_bpf_mono_ns(void);

/* "@a/@b[/@c]" into @buf; -ENAMETOOLONG when it does not fit. */
int dac_bpf_join(char *buf, size_t len, const char *a, const char *b, const char *c);
/*
 * A PREEMPT_RT kernel (/sys/kernel/realtime reads 1)? Its verifier refuses
 * bpf_timer: the programs' use_timer must be false there.
 */
bool dac_bpf_kernel_is_rt(void);
/*
 * Whether the sweep may run on a bpf_timer here: not on PREEMPT_RT, which
 * refuses bpf_timer; there the sweep runs at the next fork or exit after a
 * period.
 */
bool dac_bpf_sweep_timer_ok(void);

static inline bool dac_path_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

/*
 * Raw entry of the names map (kind is enum dac_name_kind): 0, or -ENOENT
 * when userspace has not learned it.
 */
int dac_bpf_name_raw(struct dac_bpf *b, uint32_t device_id, unsigned int kind, uint32_t index,
		     char *buf, size_t len);

struct dac_client_val;

/* Insert a client table entry unless one exists (-EEXIST then). */
int dac_bpf_client_insert(struct dac_bpf *b, uint64_t client_id,
			  const struct dac_client_val *cv);

/*
 * Set client @client_id's memory in region @region to @total bytes (peak
 * at least @total): the loader's seeding of a client that was open before
 * collection started, from its fdinfo's drm-total-<r>.
 */
int dac_bpf_mem_seed(struct dac_bpf *b, uint64_t client_id, uint32_t region, uint64_t total);

/* The cgroup path dac_bpf_set_cgroup_filter() set, NULL for none. */
const char *dac_bpf_cgroup_filter(const struct dac_bpf *b);

/* Clients the seeding inside dac_bpf_load() added, not yet reported. */
int dac_bpf_take_load_seeded(struct dac_bpf *b);

/*
 * Devices whose node is known from name learning: parallel malloc'd arrays
 * of drmacct device ids and device numbers.
 */
int dac_bpf_known_devices(struct dac_bpf *b, uint32_t **ids, dev_t **rdevs, size_t *n);

/*
 * dac_bpf_prog_state - how program @name of a collection loaded by
 * dac_bpf_load() stands: 0 autoload off (not loaded), 1 autoload on but no
 * fd, 2 loaded; -ENOENT no such program in the object, -EINVAL for a
 * pinned handle. @sec (may be NULL) gets its ELF section name.
 */
int dac_bpf_prog_state(struct dac_bpf *b, const char *name, const char **sec);

/* libbpf's messages: warnings into the load log (see dac_bpf_load_log()). */
void dac_bpf_log_to_buffer(void);
void dac_bpf_load_log_reset(void);

/* ---- load-time decisions (bpf_parse.c; no BPF needed) ------------------ */

/*
 * Where the loader looks at the running kernel. NULL members (or a NULL
 * env) mean the real places: /sys/kernel/tracing/events, then
 * /sys/kernel/debug/tracing/events; /sys/kernel/btf.
 */
struct dac_bpf_env {
	const char *events_root;	/* a tracefs "events" directory */
	const char *btf_dir;		/* holds vmlinux and <module> BTF files */
};

/* The gpu_scheduler program sets: 6.1 event names, 6.17 renamed events. */
enum dac_sched_set {
	DAC_SCHED_SET_61 = 1,		/* drm_sched_job, drm_run_job, drm_sched_process_job */
	DAC_SCHED_SET_617 = 2,		/* drm_sched_job_queue, _run, _done */
};

/*
 * dac_bpf_sched_target - the event a tp_btf program whose section names
 * gpu_scheduler event @event (a 6.17 name) attaches to with set @set: the
 * 6.1 name of the same event for DAC_SCHED_SET_61, else @event itself.
 * dac_bpf_sched_retarget() sets it on every such program of @obj
 * (drmacct's, or make bench's empty programs on the same sections).
 */
const char *dac_bpf_sched_target(const char *event, int set);
void dac_bpf_sched_retarget(struct bpf_object *obj, int set);

struct dac_bpf_plan {
	int drmacct;			/* 1 tp_btf, 0 plain tracepoint, -ENOENT none */
	int sched;			/* the same for gpu_scheduler */
	int sched_set;			/* enum dac_sched_set when sched >= 0, else 0 */
	enum dac_bpf_ring_identity ring_identity;
	bool client_ids;		/* dac_bpf_client_ids_of() */
};

/*
 * dac_bpf_plan - decide what to load. A source is tp_btf when its module's
 * BTF file exists (AUTO, BTF), else a plain tracepoint when its tracefs
 * system directory exists. The scheduler set comes from gpu_sched's BTF
 * (typedef btf_trace_drm_sched_job_run vs btf_trace_drm_run_job) for tp_btf,
 * else (and when that BTF is unreadable) from the event directories in
 * tracefs; the 6.17 names win when both exist. Returns 0, or -ENODEV when
 * no source is available.
 */
int dac_bpf_plan(const struct dac_bpf_env *env, const struct dac_bpf_load_opts *o,
		 struct dac_bpf_plan *p);

/*
 * dac_bpf_ring_identity_of - what the scheduler programs of variant @sched
 * (1 tp_btf, 0 plain, < 0 none) and set @set know a ring by: tp_btf reads
 * the scheduler pointer; the plain 6.1 programs read entity->rq->sched
 * where the kernel's BTF describes those types, else hash the ring's name;
 * the plain 6.17 programs hash device and ring name.
 */
enum dac_bpf_ring_identity dac_bpf_ring_identity_of(const struct dac_bpf_env *env, int sched,
						    int set);

/*
 * dac_bpf_client_ids_of - whether the scheduler programs of variant @sched
 * and set @set see DRM client ids: the plain 6.17 records carry them; the
 * tp_btf programs read drm_sched_fence.drm_client_id where gpu_sched's BTF
 * has it (whatever the events' names).
 */
bool dac_bpf_client_ids_of(const struct dac_bpf_env *env, int sched, int set);

/* One offset the plain tracepoint programs read from a trace record. */
struct dac_tp_field {
	const char *event;		/* "system/event" */
	const char *field;
	unsigned int offset;
	const char *type;		/* the declaration must contain it; NULL: any */
};

/* The tables the loader checks, each ending with a NULL event. */
extern const struct dac_tp_field dac_bpf_drmacct_fields[];
extern const struct dac_tp_field dac_bpf_sched61_fields[];
extern const struct dac_tp_field dac_bpf_sched617_fields[];

/*
 * dac_bpf_format_offset - offset of @field in the text of a tracefs format
 * file, -1 when the field is absent or its offset unreadable, -2 when its
 * declaration does not contain @type (NULL: any type).
 */
long dac_bpf_format_offset(const char *text, const char *field, const char *type);

/* The largest common-header growth the plain tracepoint programs follow. */
#define DAC_TP_MAX_SHIFT	64

/*
 * dac_bpf_check_layout - check every entry of @f against the format files
 * under @env's events root(s). Every field must sit at its offset in @f
 * plus one common shift (a larger common header, as on PREEMPT_RT), stored
 * in *@shift; with @shift NULL the shift must be 0. Returns 0, -ENOENT (no
 * format file), -EIO (empty), -EPROTO (another layout), -ENOMEM.
 */
int dac_bpf_check_layout(const struct dac_bpf_env *env, const struct dac_tp_field *f,
			 unsigned int *shift);

struct dac_rec_exit;
struct dac_rec_engine;
struct dac_rec_region;

/*
 * dac_bpf_decode_exit - validate one ring-buffer sample of @size bytes as a
 * CLIENT_EXIT record and point at its parts (inside @data). -EBADMSG when
 * it is not one or its counts do not fit its sizes; nothing is trusted.
 */
int dac_bpf_decode_exit(const void *data, size_t size, const struct dac_rec_exit **hdr,
			const struct dac_rec_engine **eng, const struct dac_rec_region **reg);

struct dac_rec_proc_exit;
struct dac_rec_ring;

/* The same for a PROC_EXIT record and its ring entries. */
int dac_bpf_decode_proc_exit(const void *data, size_t size,
			     const struct dac_rec_proc_exit **hdr, const struct dac_rec_ring **ring);


/*
 * dac_bpf_map_walk() - call @fn(key, value, @arg) for every entry of the
 * map @fd (keys of @ksize, values of @vsize bytes), by batch lookups where
 * the kernel has them: an entry present for the whole walk is seen exactly
 * once, whatever is added or deleted meanwhile. A non-zero return of @fn
 * ends the walk with it. Return: 0, @fn's value, or a negative errno.
 */
typedef int (*dac_bpf_walk_fn)(const void *key, const void *val, void *arg);
int dac_bpf_map_walk(int fd, size_t ksize, size_t vsize, dac_bpf_walk_fn fn, void *arg);
/* Test hook: entries asked for per batch (0: the default, 256). */
void dac_bpf_test_walk_chunk(size_t n);

#endif /* DRMACCT_BPF_PRIV_H */
