// SPDX-License-Identifier: MIT
/*
 * bpf.c - load, pin, open and read drmacct's BPF collection (see bpf.h).
 *
 * Pinned layout under the pin directory (mode 0700):
 *   maps/<name>    clients usage mem totals records stats muted names
 *                  tracked rings sched_usage cookie_usage cookie_mem
 *   links/<prog>   one per attached program (btf_* = tp_btf, tp_* = plain
 *                  tracepoint, track_fork)
 * The scheduler join maps (ring_ids, inflight) hold kernel addresses as
 * keys; they are write-only for the bpf() syscall and never pinned.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "../../bpf/drmacct_bpf.h"
#include "drmacct.skel.h"

enum dac_map_idx {
	M_META, M_CLIENTS, M_USAGE, M_MEM, M_TOTALS, M_RECORDS, M_STATS, M_MUTED, M_NAMES,
	M_TRACKED, M_RINGS, M_SCHED, M_COOKIE_USAGE, M_COOKIE_MEM, M_SCHED_CLIENTS, M_PROCS,
	M__COUNT
};

/* The pinned maps; meta first: it says whether the rest can be trusted. */
static const char *const map_names[M__COUNT] = {
	[M_META] = "meta",
	[M_CLIENTS] = "clients", [M_USAGE] = "usage", [M_MEM] = "mem",
	[M_TOTALS] = "totals", [M_RECORDS] = "records", [M_STATS] = "stats",
	[M_MUTED] = "muted", [M_NAMES] = "names", [M_TRACKED] = "tracked",
	[M_RINGS] = "rings", [M_SCHED] = "sched_usage",
	[M_COOKIE_USAGE] = "cookie_usage", [M_COOKIE_MEM] = "cookie_mem",
	[M_SCHED_CLIENTS] = "sched_clients", [M_PROCS] = "procs",
};

/* Names of enum dac_map_id (the maps with full/busy counters). */
static const char *const counted_maps[DAC_MAP__COUNT] = {
	[DAC_MAP_CLIENTS] = "clients", [DAC_MAP_USAGE] = "usage", [DAC_MAP_MEM] = "mem",
	[DAC_MAP_TOTALS] = "totals", [DAC_MAP_COOKIE_USAGE] = "cookie_usage",
	[DAC_MAP_COOKIE_MEM] = "cookie_mem", [DAC_MAP_TRACKED] = "tracked",
	[DAC_MAP_RINGS] = "rings", [DAC_MAP_RING_IDS] = "ring_ids",
	[DAC_MAP_INFLIGHT] = "inflight", [DAC_MAP_SCHED_USAGE] = "sched_usage",
	[DAC_MAP_INFLIGHT617] = "inflight617", [DAC_MAP_SCHED_CLIENTS] = "sched_clients",
	[DAC_MAP_PROCS] = "procs",
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

/*
 * What libbpf says. Its warnings (a failed program load among them, with
 * the verifier's log) are kept, the last DAC_LOAD_LOG_MAX bytes, for
 * dac_bpf_load_log(): the library itself prints nothing. With verbose on
 * (dac_bpf_set_verbose(), or DRMACCT_BPF_DEBUG in the environment)
 * everything, info and debug included, goes to stderr as it comes instead.
 */
#define DAC_LOAD_LOG_MAX	16384

static char load_log[DAC_LOAD_LOG_MAX + 1];
static size_t load_log_len;
static int verbose = -1;

void dac_bpf_set_verbose(bool on)
{
	verbose = on;
}

static bool is_verbose(void)
{
	if (verbose < 0)
		verbose = getenv("DRMACCT_BPF_DEBUG") != NULL;
	return verbose;
}

const char *dac_bpf_load_log(void)
{
	return load_log;
}

const char *dac_bpf_log_tail(const char *log, int lines)
{
	const char *p = log + strlen(log);
	int n = 0;

	if (p > log && p[-1] == '\n')
		p--;
	while (p > log && n < lines) {
		p--;
		if (*p == '\n')
			n++;
	}
	return *p == '\n' ? p + 1 : p;
}

void dac_bpf_load_log_reset(void)
{
	load_log_len = 0;
	load_log[0] = '\0';
}

/* Append @text, keeping the newest DAC_LOAD_LOG_MAX bytes from a line start. */
static void load_log_add(const char *text, size_t n)
{
	if (n > DAC_LOAD_LOG_MAX) {
		text += n - DAC_LOAD_LOG_MAX;
		n = DAC_LOAD_LOG_MAX;
	}
	if (load_log_len + n > DAC_LOAD_LOG_MAX) {
		size_t drop = load_log_len + n - DAC_LOAD_LOG_MAX;
		const char *nl = memchr(load_log + drop, '\n', load_log_len - drop);

		if (nl)
			drop = (size_t)(nl + 1 - load_log);
		drop = drop < load_log_len ? drop : load_log_len;
		memmove(load_log, load_log + drop, load_log_len - drop);
		load_log_len -= drop;
	}
	memcpy(load_log + load_log_len, text, n);
	load_log_len += n;
	load_log[load_log_len] = '\0';
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	va_list aq;
	int n;

	if (is_verbose())
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN)
		return 0;
	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	if (n < 0)
		return n;
	if ((size_t)n < sizeof(buf)) {
		load_log_add(buf, (size_t)n);
	} else {
		char *big = malloc((size_t)n + 1);

		if (!big)
			return -ENOMEM;
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		load_log_add(big, (size_t)n);
		free(big);
	}
	return n;
}

static struct dac_bpf *dac_bpf_alloc(void)
{
	struct dac_bpf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	for (int i = 0; i < M__COUNT; i++)
		b->fd[i] = -1;
	return b;
}

void dac_bpf_close(struct dac_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	if (b->skel) {
		drmacct_bpf__destroy(b->skel);	/* owns the map fds */
	} else {
		for (int i = 0; i < M__COUNT; i++)
			if (b->fd[i] >= 0)
				close(b->fd[i]);
	}
	free(b->eng);
	free(b->reg);
	free(b->rings);
	free(b->learned);
	free(b->pin_dir);
	free(b->cgroup_filter);
	for (size_t i = 0; i < b->ncg; i++)
		free(b->cg_paths[i]);
	free(b->cg_ids);
	free(b->cg_paths);
	free(b);
}

const char *dac_bpf_strerror(int err)
{
	switch (err) {
	case -ENOENT:
		return "BPF collection not running (start it with `drmacct bpf start`)";
	case -EACCES:
	case -EPERM:
		if (geteuid())
			return "permission denied: the pinned BPF maps are root-only (run as root)";
		return "permission denied by the kernel, although root "
		       "(kernel lockdown or a security module?)";
	case -EEXIST:
		return "a BPF collection is already pinned there";
	case -ESTALE:
		return "an older drmacct collection is pinned (another map layout): "
		       "run `drmacct bpf stop`, then start it again";
	case -ENODEV:
		return "no tracepoints to attach to (drmacct and gpu_sched modules not loaded)";
	case -EPROTO:
		return "a tracepoint's record layout is not the one the programs read "
		       "(plain tracepoints on another kernel version); try --attach btf";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *dac_bpf_load_strerror(int err)
{
	switch (err) {
	case -EPERM:
		if (geteuid())
			return "loading BPF programs needs root (or CAP_BPF with CAP_PERFMON)";
		return "the kernel does not allow BPF programs here, although root "
		       "(kernel lockdown or a security module?)";
	case -EACCES:
		if (geteuid())
			return "loading BPF programs needs root (or CAP_BPF with CAP_PERFMON)";
		return "the kernel's BPF verifier refused a program";
	case -E2BIG:
		return "a program is too large or too complex for this kernel's verifier";
	case -ENOENT:
	case -ESRCH:
		return "a tracepoint or kernel type the programs need is missing on this kernel";
	case -ENODEV:
	case -EPROTO:
		return dac_bpf_strerror(err);
	default:
		return strerror(err < 0 ? -err : err);
	}
}

/* ---- load ----------------------------------------------------------------- */

static bool path_exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static void set_autoload(struct bpf_program *const *p, size_t n, bool on)
{
	for (size_t i = 0; i < n; i++)
		bpf_program__set_autoload(p[i], on);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Enable exactly the programs @p asks for; every other one stays unloaded. */
static void set_groups(struct drmacct_bpf *s, const struct dac_bpf_plan *p)
{
	struct bpf_program *btf[] = {
		s->progs.btf_client_open, s->progs.btf_client_close, s->progs.btf_job_begin,
		s->progs.btf_job_end, s->progs.btf_mem_change,
	};
	struct bpf_program *tp[] = {
		s->progs.tp_client_open, s->progs.tp_client_close, s->progs.tp_job_begin,
		s->progs.tp_job_end, s->progs.tp_mem_change,
	};
	struct bpf_program *sbtf[] = {
		s->progs.btf_sched_job, s->progs.btf_run_job, s->progs.btf_process_job,
	};
	struct bpf_program *stp[] = {
		s->progs.tp_sched_job, s->progs.tp_run_job, s->progs.tp_process_job,
	};
	struct bpf_program *s617btf[] = {
		s->progs.btf617_job_queue, s->progs.btf617_job_run, s->progs.btf617_job_done,
	};
	struct bpf_program *s617tp[] = {
		s->progs.tp617_job_queue, s->progs.tp617_job_run, s->progs.tp617_job_done,
	};
	bool s61 = p->sched_set == DAC_SCHED_SET_61, s617 = p->sched_set == DAC_SCHED_SET_617;

	set_autoload(btf, N(btf), p->drmacct == 1);
	set_autoload(tp, N(tp), p->drmacct == 0);
	set_autoload(sbtf, N(sbtf), p->sched == 1 && s61);
	set_autoload(stp, N(stp), p->sched == 0 && s61);
	set_autoload(s617btf, N(s617btf), p->sched == 1 && s617);
	set_autoload(s617tp, N(s617tp), p->sched == 0 && s617);
}

/*
 * Attach every loaded program of the skeleton that has no link yet; with
 * @first only the ones that place clients (client open/close) and follow
 * their memory, which must run before the loader seeds the open clients.
 */
static int attach_progs(struct drmacct_bpf *s, bool first)
{
	struct bpf_program **progs = (struct bpf_program **)&s->progs;
	struct bpf_link **links = (struct bpf_link **)&s->links;
	size_t nprog = sizeof(s->progs) / sizeof(progs[0]);
	const struct bpf_program *early[] = {
		s->progs.btf_client_open, s->progs.btf_client_close, s->progs.btf_mem_change,
		s->progs.tp_client_open, s->progs.tp_client_close, s->progs.tp_mem_change,
	};

	for (size_t i = 0; i < nprog; i++) {
		bool is_early = false;

		if (links[i] || !bpf_program__autoload(progs[i]))
			continue;
		for (size_t j = 0; j < N(early); j++)
			is_early |= early[j] == progs[i];
		if (first && !is_early)
			continue;
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i]) {
			int err = -errno;

			return err < 0 ? err : -EINVAL;
		}
	}
	return 0;
}

static void take_fds(struct dac_bpf *b)
{
	struct drmacct_bpf *s = b->skel;
	struct bpf_map *m[M__COUNT] = {
		[M_META] = s->maps.meta, [M_PROCS] = s->maps.procs,
		[M_CLIENTS] = s->maps.clients, [M_USAGE] = s->maps.usage, [M_MEM] = s->maps.mem,
		[M_TOTALS] = s->maps.totals, [M_RECORDS] = s->maps.records,
		[M_STATS] = s->maps.stats, [M_MUTED] = s->maps.muted, [M_NAMES] = s->maps.names,
		[M_TRACKED] = s->maps.tracked, [M_RINGS] = s->maps.rings,
		[M_SCHED] = s->maps.sched_usage, [M_COOKIE_USAGE] = s->maps.cookie_usage,
		[M_COOKIE_MEM] = s->maps.cookie_mem, [M_SCHED_CLIENTS] = s->maps.sched_clients,
	};

	for (int i = 0; i < M__COUNT; i++)
		b->fd[i] = bpf_map__fd(m[i]);
}

/*
 * Maps of a source or scheduler set that is not loaded get one entry: the
 * kernel still wants them (the object references them), but they cost
 * nothing. (Hash maps of the drmacct source are not preallocated anyway.)
 */
static void size_maps(struct drmacct_bpf *s, const struct dac_bpf_plan *p)
{
	struct bpf_map *acct[] = {
		s->maps.clients, s->maps.usage, s->maps.mem, s->maps.totals, s->maps.muted,
		s->maps.names, s->maps.cookie_usage, s->maps.cookie_mem, s->maps.exit_scratch,
	};
	struct bpf_map *sched[] = {
		s->maps.rings, s->maps.ring_ids, s->maps.sched_usage, s->maps.procs,
	};
	bool s61 = p->sched >= 0 && p->sched_set == DAC_SCHED_SET_61;
	bool s617 = p->sched >= 0 && p->sched_set == DAC_SCHED_SET_617;

	for (size_t i = 0; p->drmacct < 0 && i < N(acct); i++)
		bpf_map__set_max_entries(acct[i], 1);
	for (size_t i = 0; p->sched < 0 && i < N(sched); i++)
		bpf_map__set_max_entries(sched[i], 1);
	if (!s61)
		bpf_map__set_max_entries(s->maps.inflight, 1);
	if (!s617) {
		bpf_map__set_max_entries(s->maps.inflight617, 1);
		bpf_map__set_max_entries(s->maps.sched_clients, 1);
	}
}

/* Load and attach the programs @plan asks for; *@out only on success. */
static int try_load(const struct dac_bpf_load_opts *o, const struct dac_bpf_plan *plan,
		    struct dac_bpf **out)
{
	unsigned int shift_drmacct = 0, shift_sched = 0;
	struct dac_bpf *b;
	int err;

	/*
	 * Plain tracepoints: the record layouts must be the ones we read, up
	 * to a common shift the programs add (a larger common header).
	 */
	if (plan->drmacct == 0 &&
	    (err = dac_bpf_check_layout(NULL, dac_bpf_drmacct_fields, &shift_drmacct)))
		return err;
	if (plan->sched == 0 &&
	    (err = dac_bpf_check_layout(NULL, plan->sched_set == DAC_SCHED_SET_617 ?
					dac_bpf_sched617_fields : dac_bpf_sched61_fields,
					&shift_sched)))
		return err;

	b = dac_bpf_alloc();
	if (!b)
		return -ENOMEM;
	b->skel = drmacct_bpf__open();
	if (!b->skel) {
		err = -errno;
		goto fail;
	}
	set_groups(b->skel, plan);
	b->skel->rodata->tp_shift_drmacct = shift_drmacct;
	b->skel->rodata->tp_shift_sched = shift_sched;
	if (o->test_break_btf) {
		/* A log buffer below the kernel's minimum: BPF_PROG_LOAD says EINVAL. */
		static char tiny_log[8];
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, b->skel->obj) {
			/* The sources' programs (drmacct_*, drm_*), not track_fork. */
			if (!bpf_program__autoload(prog) ||
			    strncmp(bpf_program__section_name(prog), "tp_btf/drm", 10))
				continue;
			bpf_program__set_log_buf(prog, tiny_log, sizeof(tiny_log));
			bpf_program__set_log_level(prog, 1);
		}
	}
	if (o->ringbuf_bytes)
		bpf_map__set_max_entries(b->skel->maps.records, o->ringbuf_bytes);
	if (o->max_clients)
		bpf_map__set_max_entries(b->skel->maps.clients, o->max_clients);
	size_maps(b->skel, plan);
	err = drmacct_bpf__load(b->skel);
	if (err)
		goto fail;
	take_fds(b);
	{
		struct dac_meta m = { .magic = DAC_LAYOUT_MAGIC, .version = DAC_LAYOUT_VERSION };
		uint32_t zero = 0;

		if (bpf_map_update_elem(b->fd[M_META], &zero, &m, BPF_ANY)) {
			err = -errno;
			goto fail;
		}
	}
	b->info.drmacct = plan->drmacct >= 0;
	b->info.drmacct_btf = plan->drmacct == 1;
	b->info.sched = plan->sched >= 0;
	b->info.sched_btf = plan->sched == 1;
	b->info.sched_617 = plan->sched >= 0 && plan->sched_set == DAC_SCHED_SET_617;
	b->info.ring_identity = plan->ring_identity;
	b->info.proc_exit = true;
	b->info.ringbuf_bytes = bpf_map__max_entries(b->skel->maps.records);
	/*
	 * Clients already open go into the table before the job programs
	 * run: a job of theirs counted before they were placed would be
	 * filed under device 0 (unknown) for good, in usage and in totals.
	 * Name learning needs the client-open program (it finds the device
	 * of its probe client in the table).
	 */
	if (b->info.drmacct) {
		err = attach_progs(b->skel, true);
		if (err)
			goto fail;
		dac_bpf_learn_names(b);
		b->load_seeded = dac_bpf_seed_clients(b);
	}
	err = attach_progs(b->skel, false);
	if (err)
		goto fail;
	*out = b;
	return 0;
fail:
	dac_bpf_close(b);
	return err < 0 ? err : -EINVAL;
}

/*
 * The tp_btf programs of a source that did not load: its plain tracepoint
 * programs instead, where the kernel has them. Tried one source at a time
 * (the scheduler's first: its types come from another module's BTF), then
 * both. Returns 0 with *@out and a note in its info, or the error of the
 * last attempt.
 */
static int load_fallback(const struct dac_bpf_load_opts *o, const struct dac_bpf_plan *plan,
			 int first_err, struct dac_bpf **out)
{
	struct dac_bpf_load_opts ot = *o;
	struct dac_bpf_plan tp, p;
	static const struct {
		bool sched, drmacct;
		const char *what;
	} tries[] = {
		{ true, false, "gpu_scheduler" },
		{ false, true, "drmacct" },
		{ true, true, "drmacct and gpu_scheduler" },
	};
	int err = first_err;

	ot.attach = DAC_BPF_ATTACH_TRACEPOINT;
	if (dac_bpf_plan(NULL, &ot, &tp))
		return first_err;
	for (size_t i = 0; i < N(tries); i++) {
		bool sw_sched = tries[i].sched && plan->sched == 1 && tp.sched == 0;
		bool sw_acct = tries[i].drmacct && plan->drmacct == 1 && tp.drmacct == 0;

		if ((tries[i].sched && !sw_sched) || (tries[i].drmacct && !sw_acct))
			continue;
		p = *plan;
		if (sw_sched) {
			p.sched = 0;
			p.sched_set = tp.sched_set;
			p.ring_identity = tp.ring_identity;
		}
		if (sw_acct)
			p.drmacct = 0;
		err = try_load(o, &p, out);
		if (!err) {
			snprintf((*out)->info.note, sizeof((*out)->info.note),
				 "the tp_btf programs on %s did not load (%s, errno %d); "
				 "plain tracepoints instead", tries[i].what,
				 dac_bpf_load_strerror(first_err), -first_err);
			return 0;
		}
	}
	return err;
}

void dac_bpf_log_to_buffer(void)
{
	libbpf_set_print(libbpf_print);
}

int dac_bpf_load(const struct dac_bpf_load_opts *opts, struct dac_bpf **out)
{
	struct dac_bpf_load_opts o = {};
	struct dac_bpf_plan plan;
	long page = sysconf(_SC_PAGESIZE);
	char *first_log;
	int err;

	if (opts)
		o = *opts;
	*out = NULL;
	if (o.ringbuf_bytes && (o.ringbuf_bytes < page ||
				(o.ringbuf_bytes & (o.ringbuf_bytes - 1))))
		return -EINVAL;
	err = dac_bpf_plan(NULL, &o, &plan);
	if (err)
		return err;

	dac_bpf_log_to_buffer();
	dac_bpf_load_log_reset();
	err = try_load(&o, &plan, out);
	if (!err || err == -EPERM || err == -ENOMEM || o.attach != DAC_BPF_ATTACH_AUTO ||
	    (plan.drmacct != 1 && plan.sched != 1))
		return err;
	/*
	 * tp_btf refused: plain tracepoints may still do. What the first
	 * attempt logged is the cause to report if they do not.
	 */
	first_log = strdup(load_log);
	dac_bpf_load_log_reset();
	if (!load_fallback(&o, &plan, err, out)) {
		free(first_log);
		return 0;
	}
	dac_bpf_load_log_reset();
	if (first_log)
		load_log_add(first_log, strlen(first_log));
	free(first_log);
	return err;
}

int dac_bpf_prog_state(struct dac_bpf *b, const char *name, const char **sec)
{
	struct bpf_program *prog;

	if (!b->skel)
		return -EINVAL;
	prog = bpf_object__find_program_by_name(b->skel->obj, name);
	if (!prog)
		return -ENOENT;
	if (sec)
		*sec = bpf_program__section_name(prog);
	if (!bpf_program__autoload(prog))
		return 0;
	return bpf_program__fd(prog) >= 0 ? 2 : 1;
}

static uint64_t stat_get(struct dac_bpf *b, uint32_t which)
{
	uint64_t v = 0;

	bpf_map_lookup_elem(b->fd[M_STATS], &which, &v);
	return v;
}

/* ---- pin / unpin / open ---------------------------------------------------- */

static int join(char *buf, size_t len, const char *a, const char *b, const char *c)
{
	int n = snprintf(buf, len, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int mkdir_private(const char *p)
{
	if (mkdir(p, 0700))
		return -errno;
	if (chmod(p, 0700))
		return -errno;
	return 0;
}

int dac_bpf_pin(struct dac_bpf *b, const char *dir)
{
	struct bpf_program *prog;
	char p[PATH_MAX];
	int err;

	if (!b->skel)
		return -EINVAL;
	if (!dir)
		dir = DAC_BPF_PIN_DIR;
	err = mkdir_private(dir);
	if (err)
		return err;
	if ((err = join(p, sizeof(p), dir, "maps", NULL)) || (err = mkdir_private(p)))
		goto fail;
	if ((err = join(p, sizeof(p), dir, "links", NULL)) || (err = mkdir_private(p)))
		goto fail;
	for (int i = 0; i < M__COUNT; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(b->skel->obj, map_names[i]);

		if (!m) {
			err = -ENOENT;
			goto fail;
		}
		if ((err = join(p, sizeof(p), dir, "maps", map_names[i])) ||
		    (err = bpf_map__pin(m, p)))
			goto fail;
	}
	bpf_object__for_each_program(prog, b->skel->obj) {
		struct bpf_link **links = (struct bpf_link **)&b->skel->links;
		struct bpf_program **progs = (struct bpf_program **)&b->skel->progs;
		size_t nprog = sizeof(b->skel->progs) / sizeof(progs[0]);

		for (size_t i = 0; i < nprog; i++) {
			if (progs[i] != prog || !links[i])
				continue;
			if ((err = join(p, sizeof(p), dir, "links", bpf_program__name(prog))) ||
			    (err = bpf_link__pin(links[i], p)))
				goto fail;
		}
	}
	return 0;
fail:
	dac_bpf_unpin(dir);
	return err;
}

static int unlink_all(const char *d)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *dir = opendir(d);
	int err = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", d, de->d_name) >= (int)sizeof(p))
			continue;
		if (unlink(p) && !err)
			err = -errno;
	}
	closedir(dir);
	if (rmdir(d) && !err)
		err = -errno;
	return err;
}

int dac_bpf_unpin(const char *dir)
{
	char p[PATH_MAX];
	int err, e2;

	if (!dir)
		dir = DAC_BPF_PIN_DIR;
	if (access(dir, F_OK))
		return -errno;
	/* Links first: collection stops before its maps go away. */
	join(p, sizeof(p), dir, "links", NULL);
	err = unlink_all(p);
	join(p, sizeof(p), dir, "maps", NULL);
	e2 = unlink_all(p);
	if (rmdir(dir) && !err && !e2)
		return -errno;
	return err ? err : e2;
}

/*
 * Whether the pinned maps are the ones this library reads: the meta stamp,
 * then type, key and value size of every map against this build's object
 * (opened, not loaded). -ESTALE when not: reading another layout could
 * overrun the reader's buffers.
 */
static int check_pinned_layout(struct dac_bpf *b)
{
	struct dac_meta m = { 0 };
	struct drmacct_bpf *s;
	uint32_t zero = 0;
	int err = 0;

	if (bpf_map_lookup_elem(b->fd[M_META], &zero, &m))
		return -errno;
	if (m.magic != DAC_LAYOUT_MAGIC || m.version != DAC_LAYOUT_VERSION)
		return -ESTALE;
	s = drmacct_bpf__open();
	if (!s)
		return -errno;
	for (int i = 0; i < M__COUNT && !err; i++) {
		struct bpf_map *want = bpf_object__find_map_by_name(s->obj, map_names[i]);
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		if (!want) {
			err = -ESTALE;
			break;
		}
		if (bpf_obj_get_info_by_fd(b->fd[i], &mi, &len)) {
			err = -errno;
			break;
		}
		if (mi.type != bpf_map__type(want) || mi.key_size != bpf_map__key_size(want) ||
		    mi.value_size != bpf_map__value_size(want))
			err = -ESTALE;
	}
	drmacct_bpf__destroy(s);
	return err;
}

int dac_bpf_open_pinned(const char *dir, struct dac_bpf **out)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	char p[PATH_MAX];
	struct dac_bpf *b;
	int err;

	*out = NULL;
	if (!dir)
		dir = DAC_BPF_PIN_DIR;
	if (access(dir, F_OK))
		return errno == ENOENT ? -ENOENT : -errno;
	b = dac_bpf_alloc();
	if (!b)
		return -ENOMEM;
	for (int i = 0; i < M__COUNT; i++) {
		if ((err = join(p, sizeof(p), dir, "maps", map_names[i])))
			goto fail;
		b->fd[i] = bpf_obj_get(p);
		if (b->fd[i] < 0) {
			err = -errno;
			/* No meta (older) or a map missing: another layout. */
			if (err == -ENOENT)
				err = -ESTALE;
			goto fail;
		}
	}
	err = check_pinned_layout(b);
	if (err)
		goto fail;
	join(p, sizeof(p), dir, "links/btf_job_end", NULL);
	b->info.drmacct_btf = path_exists(p);
	join(p, sizeof(p), dir, "links/tp_job_end", NULL);
	b->info.drmacct = b->info.drmacct_btf || path_exists(p);
	join(p, sizeof(p), dir, "links/btf617_job_done", NULL);
	b->info.sched_btf = path_exists(p);
	join(p, sizeof(p), dir, "links/tp617_job_done", NULL);
	b->info.sched_617 = b->info.sched_btf || path_exists(p);
	join(p, sizeof(p), dir, "links/btf_process_job", NULL);
	b->info.sched_btf = b->info.sched_btf || path_exists(p);
	join(p, sizeof(p), dir, "links/tp_process_job", NULL);
	b->info.sched = b->info.sched_btf || b->info.sched_617 || path_exists(p);
	b->info.ring_identity = dac_bpf_ring_identity_of(NULL, b->info.sched ? b->info.sched_btf : -1,
							 b->info.sched_617 ? DAC_SCHED_SET_617 :
							 DAC_SCHED_SET_61);
	join(p, sizeof(p), dir, "links/track_exit", NULL);
	b->info.proc_exit = path_exists(p);
	if (!bpf_obj_get_info_by_fd(b->fd[M_RECORDS], &mi, &len))
		b->info.ringbuf_bytes = mi.max_entries;
	b->pin_dir = strdup(dir);
	if (!b->pin_dir) {
		err = -ENOMEM;
		goto fail;
	}
	/* Drops before this handle existed are not its reader's losses. */
	b->drops_reported = stat_get(b, DAC_STAT_EXIT_DROPS);
	*out = b;
	return 0;
fail:
	dac_bpf_close(b);
	return err;
}

int dac_bpf_info(struct dac_bpf *b, struct dac_bpf_info *info)
{
	*info = b->info;
	return 0;
}

/* ---- stats ----------------------------------------------------------------- */

int dac_bpf_read_stats(struct dac_bpf *b, struct dac_bpf_stats *st)
{
	uint64_t v[DAC_STAT__COUNT];

	for (uint32_t i = 0; i < DAC_STAT__COUNT; i++) {
		v[i] = 0;
		if (bpf_map_lookup_elem(b->fd[M_STATS], &i, &v[i]))
			return -errno;
	}
	memset(st, 0, sizeof(*st));
	st->exit_records = v[DAC_STAT_EXIT_RECORDS];
	st->proc_records = v[DAC_STAT_PROC_RECORDS];
	st->exit_drops = v[DAC_STAT_EXIT_DROPS];
	st->job_end_unseen = v[DAC_STAT_JOB_END_UNSEEN];
	st->sched_orphans = v[DAC_STAT_SCHED_ORPHAN_DONE];
	st->read_faults = v[DAC_STAT_READ_FAULT];
	st->cas_giveups = v[DAC_STAT_CAS_GIVEUP];
	for (int i = 0; i < DAC_MAP__COUNT; i++) {
		st->full += v[DAC_STAT_FULL + i];
		st->busy += v[DAC_STAT_BUSY + i];
	}
	return 0;
}

static void copy_str(char *dst, size_t dlen, const char *src, size_t slen)
{
	size_t n = strnlen(src, slen);

	if (n >= dlen)
		n = dlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- names ----------------------------------------------------------------- */

static void fallback_name(bool region, uint32_t index, char *buf, size_t len)
{
	snprintf(buf, len, "%s%u", region ? "region" : "engine", index);
}

/* Parse our own fdinfo of @fd: client id, engine and region names in order. */
static int learn_from_fd(struct dac_bpf *b, int fd)
{
	struct dac_probe_names pn;
	struct dac_client_val cv;
	uint32_t muted = 1;
	char path[64];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	err = dac_bpf_parse_probe(f, &pn);
	fclose(f);
	if (err)
		return err;
	/* Our probe client must not show up as a CLIENT_EXIT record. */
	if (pn.client_id)
		bpf_map_update_elem(b->fd[M_MUTED], &pn.client_id, &muted, BPF_ANY);
	if (pn.client_id && !bpf_map_lookup_elem(b->fd[M_CLIENTS], &pn.client_id, &cv)) {
		for (size_t i = 0; i < pn.ne + pn.nr; i++) {
			struct dac_name_key k = {
				.device_id = cv.device_id,
				.kind = i < pn.ne ? DAC_NAME_ENGINE : DAC_NAME_REGION,
				.index = i < pn.ne ? i : i - pn.ne,
			};

			if (bpf_map_update_elem(b->fd[M_NAMES], &k,
						i < pn.ne ? pn.eng[i] : pn.reg[i - pn.ne], BPF_ANY)) {
				err = -errno;
				break;
			}
			if (i < pn.ne) {
				char v[DAC_NAME_LEN] = "";

				k.kind = DAC_NAME_CAPACITY;
				snprintf(v, sizeof(v), "%llu", (unsigned long long)pn.caps[i]);
				if (bpf_map_update_elem(b->fd[M_NAMES], &k, v, BPF_ANY)) {
					err = -errno;
					break;
				}
			}
		}
		if (!err) {
			struct dac_name_key k = { .device_id = cv.device_id, .kind = DAC_NAME_RDEV };
			char v[DAC_NAME_LEN] = "";
			struct stat st;

			if (!fstat(fd, &st)) {
				snprintf(v, sizeof(v), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
				if (bpf_map_update_elem(b->fd[M_NAMES], &k, v, BPF_ANY))
					err = -errno;
			}
		}
	} else if (pn.client_id) {
		/* Not seen opening (collection not attached to drmacct): no names. */
		bpf_map_delete_elem(b->fd[M_MUTED], &pn.client_id);
		err = -ENOENT;
	}
	dac_probe_names_free(&pn);
	return err;
}

int dac_bpf_learn_names(struct dac_bpf *b)
{
	static const char *const dirs[] = { "/dev/dri", "/dev/accel" };
	int learned = 0;

	if (!b->info.drmacct && b->skel)
		return 0;
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			char p[300];
			int fd;

			if (strncmp(de->d_name, "renderD", 7) && strncmp(de->d_name, "accel", 5))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dirs[d], de->d_name);
			fd = open(p, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (!learn_from_fd(b, fd))
				learned++;
			close(fd);
		}
		closedir(dir);
	}
	return learned;
}

static bool tried_device(struct dac_bpf *b, uint32_t dev)
{
	for (size_t i = 0; i < b->nlearned; i++)
		if (b->learned[i] == dev)
			return true;
	return false;
}

int dac_bpf_name_raw(struct dac_bpf *b, uint32_t device_id, unsigned int kind, uint32_t index,
		     char *buf, size_t len)
{
	struct dac_name_key k = { .device_id = device_id, .kind = kind, .index = index };
	char name[DAC_NAME_LEN];

	if (index > UINT16_MAX)
		return -ERANGE;
	if (bpf_map_lookup_elem(b->fd[M_NAMES], &k, name))
		return -errno;
	name[DAC_NAME_LEN - 1] = '\0';
	snprintf(buf, len, "%s", name);
	return 0;
}

const char *dac_bpf_name(struct dac_bpf *b, uint32_t device_id, bool region, uint32_t index,
			 char *buf, size_t len)
{
	struct dac_name_key k = {
		.device_id = device_id,
		.kind = region ? DAC_NAME_REGION : DAC_NAME_ENGINE,
		.index = index,
	};
	char name[DAC_NAME_LEN];

	if (index > UINT16_MAX || !device_id)
		goto fallback;
	if (!bpf_map_lookup_elem(b->fd[M_NAMES], &k, name))
		goto found;
	if (!tried_device(b, device_id)) {
		uint32_t *tmp = realloc(b->learned, (b->nlearned + 1) * sizeof(*tmp));

		if (tmp) {
			b->learned = tmp;
			b->learned[b->nlearned++] = device_id;
			dac_bpf_learn_names(b);
			if (!bpf_map_lookup_elem(b->fd[M_NAMES], &k, name))
				goto found;
		}
	}
fallback:
	fallback_name(region, index, buf, len);
	return buf;
found:
	name[DAC_NAME_LEN - 1] = '\0';
	snprintf(buf, len, "%s", name);
	return buf;
}

/* ---- records --------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t want, size_t elem)
{
	void *tmp;

	if (want <= *cap)
		return 0;
	tmp = realloc(*p, want * elem);
	if (!tmp)
		return -ENOMEM;
	*p = tmp;
	*cap = want;
	return 0;
}

/* Hand @ev to the poll callback; its non-zero return stops the poll. */
static int deliver(struct dac_bpf *b, const struct dac_bpf_event *ev)
{
	int ret = b->cb(b->cb_ctx, ev);

	b->delivered++;
	if (ret) {
		b->cb_ret = ret;
		return -ECANCELED;	/* stops ring_buffer__poll; the record is consumed */
	}
	return 0;
}

/* Name of ring @id into @buf ("ring<N>" when the ring is not known). */
static void ring_name(struct dac_bpf *b, uint32_t id, char *buf, size_t len)
{
	struct dac_ring_val r;

	if (!bpf_map_lookup_elem(b->fd[M_RINGS], &id, &r))
		copy_str(buf, len, r.name, sizeof(r.name));
	else
		snprintf(buf, len, "ring%u", id);
}

static int on_proc_record(struct dac_bpf *b, const void *data, size_t size)
{
	const struct dac_rec_proc_exit *r;
	const struct dac_rec_ring *rr;
	struct dac_bpf_event ev = { .type = DAC_BPF_PROC_EXIT };
	struct dac_bpf_proc_exit *x = &ev.proc;

	if (dac_bpf_decode_proc_exit(data, size, &r, &rr))
		return 0;	/* not ours: skip */
	if (grow((void **)&b->rings, &b->rings_cap, r->num_rings + 1, sizeof(*b->rings))) {
		b->cb_ret = -ENOMEM;
		return -ENOMEM;
	}
	x->tgid = r->tgid;
	x->flags = r->flags & DAC_EXIT_F_TRUNCATED ? DAC_BPF_EXIT_TRUNCATED : 0;
	x->seq = r->seq;
	x->exit_ns = r->exit_ns;
	x->busy_ns = r->busy_ns;
	x->jobs = r->jobs;
	x->acct_busy_ns = r->acct_busy_ns;
	x->acct_jobs = r->acct_jobs;
	x->cookie = r->cookie;
	x->cgroup_id = r->cgroup_id;
	copy_str(x->comm, sizeof(x->comm), r->comm, sizeof(r->comm));
	x->num_rings = r->num_rings;
	x->rings = b->rings;
	for (uint32_t i = 0; i < r->num_rings; i++) {
		b->rings[i].ring_id = rr[i].ring_id;
		ring_name(b, rr[i].ring_id, b->rings[i].ring, sizeof(b->rings[i].ring));
		b->rings[i].busy_ns = rr[i].busy_ns;
		b->rings[i].jobs = rr[i].jobs;
	}
	return deliver(b, &ev);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct dac_bpf *b = ctx;
	const struct dac_rec_exit *r;
	struct dac_bpf_event ev = { .type = DAC_BPF_CLIENT_EXIT };
	struct dac_bpf_client_exit *x = &ev.exit;
	const struct dac_rec_engine *re;
	const struct dac_rec_region *rr;

	if (size >= sizeof(uint32_t) && *(const uint32_t *)data == DAC_REC_PROC_EXIT)
		return on_proc_record(b, data, size);
	if (dac_bpf_decode_exit(data, size, &r, &re, &rr))
		return 0;	/* not ours: skip, never trust its sizes */
	if (grow((void **)&b->eng, &b->eng_cap, r->num_engines + 1, sizeof(*b->eng)) ||
	    grow((void **)&b->reg, &b->reg_cap, r->num_regions + 1, sizeof(*b->reg))) {
		b->cb_ret = -ENOMEM;
		return -ENOMEM;
	}
	x->client_id = r->client_id;
	x->seq = r->seq;
	x->cookie = r->cookie;
	x->open_ns = r->open_ns;
	x->close_ns = r->close_ns;
	x->device_id = r->device_id;
	x->pid = r->pid;
	x->tgid = r->tgid;
	x->flags = (r->flags & DAC_EXIT_F_TRUNCATED ? DAC_BPF_EXIT_TRUNCATED : 0) |
		   (r->flags & DAC_EXIT_F_NO_OPEN ? DAC_BPF_EXIT_NO_OPEN : 0);
	copy_str(x->comm, sizeof(x->comm), r->comm, sizeof(r->comm));
	copy_str(x->driver, sizeof(x->driver), r->driver, sizeof(r->driver));
	x->num_engines = r->num_engines;
	x->num_regions = r->num_regions;
	x->engines = b->eng;
	x->regions = b->reg;
	for (uint32_t i = 0; i < r->num_engines; i++) {
		dac_bpf_name(b, r->device_id, false, i, b->eng[i].name, sizeof(b->eng[i].name));
		b->eng[i].busy_ns = re[i].busy_ns;
		b->eng[i].cycles = re[i].cycles;
		b->eng[i].jobs = re[i].jobs;
	}
	for (uint32_t i = 0; i < r->num_regions; i++) {
		dac_bpf_name(b, r->device_id, true, i, b->reg[i].name, sizeof(b->reg[i].name));
		b->reg[i].peak = rr[i].peak;
		b->reg[i].total = rr[i].total;
	}
	return deliver(b, &ev);
}

int dac_bpf_poll(struct dac_bpf *b, int timeout_ms, dac_bpf_event_fn cb, void *ctx)
{
	uint64_t drops;
	int err;

	if (!b->rb) {
		b->rb = ring_buffer__new(b->fd[M_RECORDS], on_record, b, NULL);
		if (!b->rb)
			return -errno;
	}
	b->cb = cb;
	b->cb_ctx = ctx;
	b->cb_ret = 0;
	b->delivered = 0;
	err = ring_buffer__poll(b->rb, timeout_ms);
	if (err < 0 && b->cb_ret)
		return b->cb_ret;
	if (err < 0)
		return err;
	/* Drain what arrived meanwhile, then account the drops. */
	err = ring_buffer__consume(b->rb);
	if (err < 0)
		return b->cb_ret ? b->cb_ret : err;
	drops = stat_get(b, DAC_STAT_EXIT_DROPS);
	if (drops > b->drops_reported) {
		struct dac_bpf_event ev = { .type = DAC_BPF_LOST };
		int ret;

		ev.lost.count = drops - b->drops_reported;
		b->drops_reported = drops;
		ret = cb(ctx, &ev);
		b->delivered++;
		if (ret)
			return ret;
	}
	return b->delivered;
}

/* ---- map readers ------------------------------------------------------------ */

/*
 * Walk every key of @fd, calling @fn(key, value, arg). Entries deleted
 * during the walk are skipped; the walk restarts only if its cursor key
 * vanished (the kernel then returns the first key again), bounded.
 */
typedef int (*walk_fn)(const void *key, const void *val, void *arg);

static int map_walk(int fd, size_t ksize, size_t vsize, walk_fn fn, void *arg)
{
	unsigned char *key = calloc(2, ksize), *next = key + ksize, *val = malloc(vsize);
	bool first = true;
	int err = 0;

	if (!key || !val) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (bpf_map_get_next_key(fd, first ? NULL : key, next)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		first = false;
		memcpy(key, next, ksize);
		if (bpf_map_lookup_elem(fd, key, val)) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			break;
		}
		err = fn(key, val, arg);
		if (err)
			break;
	}
out:
	free(key);
	free(val);
	return err;
}

struct vec {
	void *p;
	size_t n, cap, elem;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *tmp = realloc(v->p, cap * v->elem);

		if (!tmp)
			return NULL;
		v->p = tmp;
		v->cap = cap;
	}
	return memset((char *)v->p + v->n++ * v->elem, 0, v->elem);
}

static int finish(struct vec *v, int err, void *out, size_t *n)
{
	if (err) {
		free(v->p);
		*(void **)out = NULL;
		*n = 0;
		return err;
	}
	*(void **)out = v->p;
	*n = v->n;
	return 0;
}

static int client_cb(const void *key, const void *val, void *arg)
{
	const struct dac_client_val *c = val;
	struct dac_bpf_client *o = vec_push(arg);

	if (!o)
		return -ENOMEM;
	o->client_id = *(const uint64_t *)key;
	o->open_ns = c->open_ns;
	o->cookie = c->cookie;
	o->device_id = c->device_id;
	o->pid = c->pid;
	o->tgid = c->tgid;
	o->cgroup_id = c->cgroup_id;
	copy_str(o->comm, sizeof(o->comm), c->comm, sizeof(c->comm));
	copy_str(o->driver, sizeof(o->driver), c->driver, sizeof(c->driver));
	copy_str(o->name, sizeof(o->name), c->name, sizeof(c->name));
	return 0;
}

int dac_bpf_read_clients(struct dac_bpf *b, struct dac_bpf_client **out, size_t *n)
{
	struct vec v = { .elem = sizeof(**out) };

	return finish(&v, map_walk(b->fd[M_CLIENTS], sizeof(uint64_t),
				   sizeof(struct dac_client_val), client_cb, &v), out, n);
}

/*
 * One usage entry as of one moment: two copies that agree, taken while no
 * program was writing it (struct dac_usage_val). A copy by the bpf()
 * syscall is not atomic, so a single one can pair start_sum from before a
 * job's begin with running from after it. -ENOENT when the entry is gone;
 * -EAGAIN when writers kept it busy for every try (practically never: a
 * write takes well under a microsecond).
 */
#define USAGE_READ_TRIES	1000

static int usage_lookup(int fd, const struct dac_usage_key *k, struct dac_usage_val *v)
{
	struct dac_usage_val again;

	for (int i = 0; i < USAGE_READ_TRIES; i++) {
		if (bpf_map_lookup_elem(fd, k, v) || bpf_map_lookup_elem(fd, k, &again))
			return -errno;
		if (v->wr_begun == v->wr_done && !memcmp(v, &again, sizeof(again)))
			return 0;
		sched_yield();
	}
	return -EAGAIN;
}

/* Busy time of @v at @now: finished jobs plus the running ones so far. */
static uint64_t usage_busy_at(const struct dac_usage_val *v, uint64_t now)
{
	/* A job that began after @now was taken has no in-flight part yet. */
	if (v->running && v->running * now > v->start_sum)
		return v->busy_ns + (v->running * now - v->start_sum);
	return v->busy_ns;
}

static int usage_key_cb(const void *key, const void *val, void *arg)
{
	struct dac_usage_key *o = vec_push(arg);

	(void)val;
	if (!o)
		return -ENOMEM;
	memcpy(o, key, sizeof(*o));
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void usage_fill(struct dac_bpf *b, const struct dac_usage_key *k,
		       const struct dac_usage_val *v, uint64_t now, struct dac_bpf_usage *o)
{
	memset(o, 0, sizeof(*o));
	o->client_id = k->client_id;
	o->device_id = v->device_id;
	o->engine = k->engine;
	dac_bpf_name(b, v->device_id, false, k->engine, o->name, sizeof(o->name));
	o->busy_ns = usage_busy_at(v, now);
	o->cycles = v->cycles;
	o->jobs = v->jobs;
	o->running = (uint32_t)v->running;
}

int dac_bpf_read_usage(struct dac_bpf *b, uint64_t *now_ns, struct dac_bpf_usage **out,
		       size_t *n)
{
	struct vec keys = { .elem = sizeof(struct dac_usage_key) };
	struct dac_usage_val *vals;
	struct dac_bpf_usage *u;
	size_t nu = 0;
	uint64_t now;
	int err;

	*out = NULL;
	*n = 0;
	err = map_walk(b->fd[M_USAGE], sizeof(struct dac_usage_key),
		       sizeof(struct dac_usage_val), usage_key_cb, &keys);
	if (err) {
		free(keys.p);
		return err;
	}
	u = calloc(keys.n ? keys.n : 1, sizeof(*u));
	if (!u) {
		free(keys.p);
		return -ENOMEM;
	}
	/*
	 * Each entry is taken at its own moment and its in-flight part
	 * computed at the one @now taken after all of them: a job counts as
	 * running at most until @now, never longer than it can have run.
	 */
	vals = calloc(keys.n ? keys.n : 1, sizeof(*vals));
	if (!vals) {
		free(keys.p);
		free(u);
		return -ENOMEM;
	}
	for (size_t i = 0; i < keys.n; i++) {
		err = usage_lookup(b->fd[M_USAGE], (struct dac_usage_key *)keys.p + i, &vals[nu]);
		if (err == -ENOENT)
			continue;	/* the client closed meanwhile */
		if (err)
			break;
		((struct dac_usage_key *)keys.p)[nu] = ((struct dac_usage_key *)keys.p)[i];
		nu++;
	}
	now = mono_ns();
	if (err && err != -ENOENT) {
		free(keys.p);
		free(vals);
		free(u);
		return err;
	}
	for (size_t i = 0; i < nu; i++)
		usage_fill(b, (struct dac_usage_key *)keys.p + i, &vals[i], now, &u[i]);
	*n = nu;
	*out = u;
	*now_ns = now;
	free(keys.p);
	free(vals);
	return 0;
}

int dac_bpf_lookup_usage(struct dac_bpf *b, uint64_t client_id, uint32_t engine,
			 uint64_t *now_ns, struct dac_bpf_usage *out)
{
	struct dac_usage_key k = { .client_id = client_id, .engine = engine };
	struct dac_usage_val v;
	uint64_t now;
	int err = usage_lookup(b->fd[M_USAGE], &k, &v);

	if (err)
		return err;
	now = mono_ns();
	usage_fill(b, &k, &v, now, out);
	*now_ns = now;
	return 0;
}

struct mem_arg {
	struct vec v;
	struct dac_bpf *b;
};

static int mem_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_mem_key *k = key;
	const struct dac_mem_val *m = val;
	struct dac_bpf_mem *o = vec_push(&a->v);
	struct dac_client_val cv;
	uint32_t dev = 0;

	if (!o)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(a->b->fd[M_CLIENTS], &k->client_id, &cv))
		dev = cv.device_id;
	o->client_id = k->client_id;
	o->region = k->region;
	dac_bpf_name(a->b, dev, true, k->region, o->name, sizeof(o->name));
	o->total = m->total;
	o->peak = m->peak;
	return 0;
}

int dac_bpf_read_mem(struct dac_bpf *b, struct dac_bpf_mem **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, map_walk(b->fd[M_MEM], sizeof(struct dac_mem_key),
				     sizeof(struct dac_mem_val), mem_cb, &a), out, n);
}

static int total_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_total_key *k = key;
	const struct dac_total_val *t = val;
	struct dac_bpf_total *o = vec_push(&a->v);

	if (!o)
		return -ENOMEM;
	o->device_id = k->device_id;
	o->engine = k->engine;
	dac_bpf_name(a->b, k->device_id, false, k->engine, o->name, sizeof(o->name));
	o->busy_ns = t->busy_ns;
	o->cycles = t->cycles;
	o->jobs = t->jobs;
	return 0;
}

int dac_bpf_read_totals(struct dac_bpf *b, struct dac_bpf_total **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, map_walk(b->fd[M_TOTALS], sizeof(struct dac_total_key),
				     sizeof(struct dac_total_val), total_cb, &a), out, n);
}

static int sched_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_sched_key *k = key;
	const struct dac_sched_val *s = val;
	struct dac_bpf_sched *o = vec_push(&a->v);

	if (!o)
		return -ENOMEM;
	o->tgid = k->tgid;
	o->ring_id = k->ring_id;
	o->cookie = s->cookie;
	o->cgroup_id = s->cgroup_id;
	copy_str(o->comm, sizeof(o->comm), s->comm, sizeof(s->comm));
	ring_name(a->b, k->ring_id, o->ring, sizeof(o->ring));
	o->busy_ns = s->busy_ns;
	o->jobs = s->jobs;
	return 0;
}

int dac_bpf_read_sched(struct dac_bpf *b, struct dac_bpf_sched **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, map_walk(b->fd[M_SCHED], sizeof(struct dac_sched_key),
				     sizeof(struct dac_sched_val), sched_cb, &a), out, n);
}

static int prog_stats_fd(int fd, const char *name, struct vec *v)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct dac_bpf_prog_stats *o;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	o = vec_push(v);
	if (!o)
		return -ENOMEM;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->run_cnt = info.run_cnt;
	o->run_time_ns = info.run_time_ns;
	o->recursion_misses = info.recursion_misses;
	return 0;
}

/*
 * Call @fn(prog fd, name, @arg) for every program of the collection that
 * runs: loaded by us (autoload on), or attached through a pinned link.
 */
static int for_each_prog(struct dac_bpf *b, int (*fn)(int fd, const char *name, void *arg),
			 void *arg)
{
	char p[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *dir;

	if (b->skel) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, b->skel->obj) {
			if (bpf_program__fd(prog) < 0)
				continue;	/* not loaded (the other variant) */
			err = fn(bpf_program__fd(prog), bpf_program__name(prog), arg);
			if (err)
				return err;
		}
		return 0;
	}
	join(p, sizeof(p), b->pin_dir, "links", NULL);
	dir = opendir(p);
	if (!dir)
		return -errno;
	while (!err && (de = readdir(dir))) {
		struct bpf_link_info li = {};
		__u32 len = sizeof(li);
		int lfd, pfd;

		if (de->d_name[0] == '.')
			continue;
		if (join(p, sizeof(p), b->pin_dir, "links", de->d_name))
			continue;
		lfd = bpf_obj_get(p);
		if (lfd < 0) {
			err = -errno;
			break;
		}
		if (bpf_obj_get_info_by_fd(lfd, &li, &len)) {
			err = -errno;
			close(lfd);
			break;
		}
		close(lfd);
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0) {
			err = -errno;
			break;
		}
		err = fn(pfd, de->d_name, arg);
		close(pfd);
	}
	closedir(dir);
	return err;
}

static int prog_stats_cb(int fd, const char *name, void *arg)
{
	return prog_stats_fd(fd, name, arg);
}

int dac_bpf_read_prog_stats(struct dac_bpf *b, struct dac_bpf_prog_stats **out, size_t *n)
{
	struct vec v = { .elem = sizeof(**out) };

	return finish(&v, for_each_prog(b, prog_stats_cb, &v), out, n);
}

/* ---- maps: what each holds and costs ------------------------------------ */

/* The ids of the maps program @fd uses, appended to @ids (no duplicates). */
static int prog_map_ids_cb(int fd, const char *name, void *arg)
{
	struct vec *ids = arg;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nr;
	uint32_t *m;
	int err = 0;

	(void)name;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	nr = info.nr_map_ids;
	if (!nr)
		return 0;
	m = calloc(nr, sizeof(*m));
	if (!m)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = nr;
	info.map_ids = (uintptr_t)m;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	for (__u32 i = 0; !err && i < nr && i < info.nr_map_ids; i++) {
		bool have = false;
		uint32_t *o;

		for (size_t k = 0; k < ids->n; k++)
			have |= ((uint32_t *)ids->p)[k] == m[i];
		if (have)
			continue;
		o = vec_push(ids);
		if (!o)
			err = -ENOMEM;
		else
			*o = m[i];
	}
	free(m);
	return err;
}

/* "memlock:" of a map's fdinfo: what the kernel charges for it. */
static uint64_t fd_memlock(int fd)
{
	unsigned long long v = 0;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Entries of a hash map by walking its keys; -1 when it cannot be read. */
static int64_t count_entries(int fd, const struct bpf_map_info *mi)
{
	unsigned char *key, *next;
	int64_t n = 0;

	switch (mi->type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return mi->max_entries;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		break;
	default:
		return -1;
	}
	key = calloc(2, mi->key_size ? mi->key_size : 1);
	if (!key)
		return -1;
	next = key + mi->key_size;
	for (bool first = true; !bpf_map_get_next_key(fd, first ? NULL : key, next); first = false) {
		memcpy(key, next, mi->key_size);
		n++;
	}
	if (errno != ENOENT)
		n = -1;		/* write-only: the kernel will not say */
	free(key);
	return n;
}

int dac_bpf_read_maps(struct dac_bpf *b, struct dac_bpf_map_stat **out, size_t *n)
{
	struct vec ids = { .elem = sizeof(uint32_t) }, v = { .elem = sizeof(**out) };
	uint64_t st[DAC_STAT__COUNT] = { 0 };
	int err = for_each_prog(b, prog_map_ids_cb, &ids);

	for (uint32_t i = 0; i < DAC_STAT__COUNT; i++)
		bpf_map_lookup_elem(b->fd[M_STATS], &i, &st[i]);
	for (size_t i = 0; !err && i < ids.n; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		struct dac_bpf_map_stat *o;
		const char *t;
		int fd = bpf_map_get_fd_by_id(((uint32_t *)ids.p)[i]);

		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile */
			err = -errno;
			break;
		}
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			err = -errno;
			close(fd);
			break;
		}
		o = vec_push(&v);
		if (!o) {
			err = -ENOMEM;
			close(fd);
			break;
		}
		copy_str(o->name, sizeof(o->name), mi.name, sizeof(mi.name));
		t = libbpf_bpf_map_type_str(mi.type);
		snprintf(o->type, sizeof(o->type), "%s", t ? t : "?");
		o->max_entries = mi.max_entries;
		o->entries = count_entries(fd, &mi);
		o->memlock = fd_memlock(fd);
		for (int k = 0; k < DAC_MAP__COUNT; k++) {
			if (strcmp(o->name, counted_maps[k]))
				continue;
			o->full = st[DAC_STAT_FULL + k];
			o->busy = st[DAC_STAT_BUSY + k];
		}
		close(fd);
	}
	free(ids.p);
	return finish(&v, err, out, n);
}

int dac_bpf_client_insert(struct dac_bpf *b, uint64_t client_id,
			  const struct dac_client_val *cv)
{
	return bpf_map_update_elem(b->fd[M_CLIENTS], &client_id, cv, BPF_NOEXIST) ? -errno : 0;
}

int dac_bpf_mem_seed(struct dac_bpf *b, uint64_t client_id, uint32_t region, uint64_t total)
{
	struct dac_mem_key k = { .client_id = client_id, .region = region };
	struct dac_mem_val v = { 0 };

	/*
	 * The fdinfo total includes every change made before it was read,
	 * those the programs counted since attaching too, so it replaces
	 * the entry rather than adding to it; only a change between that
	 * read and this update is lost.
	 */
	if (bpf_map_lookup_elem(b->fd[M_MEM], &k, &v) && errno != ENOENT)
		return -errno;
	v.total = total;
	if (v.peak < total)
		v.peak = total;
	return bpf_map_update_elem(b->fd[M_MEM], &k, &v, BPF_ANY) ? -errno : 0;
}

int dac_bpf_take_load_seeded(struct dac_bpf *b)
{
	int n = b->load_seeded;

	b->load_seeded = 0;
	return n;
}

struct known_arg {
	struct vec ids, rdevs;
};

static int known_cb(const void *key, const void *val, void *arg)
{
	const struct dac_name_key *k = key;
	struct known_arg *a = arg;
	char v[DAC_NAME_LEN];
	unsigned int ma, mi;
	uint32_t *id;
	dev_t *rd;

	if (k->kind != DAC_NAME_RDEV)
		return 0;
	memcpy(v, val, sizeof(v));
	v[sizeof(v) - 1] = '\0';
	if (sscanf(v, "%u:%u", &ma, &mi) != 2)
		return 0;
	id = vec_push(&a->ids);
	rd = vec_push(&a->rdevs);
	if (!id || !rd)
		return -ENOMEM;
	*id = k->device_id;
	*rd = makedev(ma, mi);
	return 0;
}

int dac_bpf_known_devices(struct dac_bpf *b, uint32_t **ids, dev_t **rdevs, size_t *n)
{
	struct known_arg a = { .ids = { .elem = sizeof(uint32_t) },
			       .rdevs = { .elem = sizeof(dev_t) } };
	int err = map_walk(b->fd[M_NAMES], sizeof(struct dac_name_key), DAC_NAME_LEN, known_cb, &a);

	if (err) {
		free(a.ids.p);
		free(a.rdevs.p);
		*ids = NULL;
		*rdevs = NULL;
		*n = 0;
		return err;
	}
	*ids = a.ids.p;
	*rdevs = a.rdevs.p;
	*n = a.ids.n;
	return 0;
}

/* ---- tracking --------------------------------------------------------------- */

int dac_bpf_track(struct dac_bpf *b, uint32_t tgid, uint64_t cookie)
{
	if (!cookie || !tgid)
		return -EINVAL;
	return bpf_map_update_elem(b->fd[M_TRACKED], &tgid, &cookie, BPF_ANY) ? -errno : 0;
}

struct untrack_arg {
	uint64_t cookie;
	struct vec v;
};

static int untrack_cb(const void *key, const void *val, void *arg)
{
	struct untrack_arg *a = arg;
	uint32_t *o;

	if (*(const uint64_t *)val != a->cookie)
		return 0;
	o = vec_push(&a->v);
	if (!o)
		return -ENOMEM;
	*o = *(const uint32_t *)key;
	return 0;
}

static int cookie_keys_cb(const void *key, const void *val, void *arg)
{
	struct untrack_arg *a = arg;
	const struct dac_cookie_key *k = key;
	struct dac_cookie_key *o;

	(void)val;
	if (k->cookie != a->cookie)
		return 0;
	o = vec_push(&a->v);
	if (!o)
		return -ENOMEM;
	*o = *k;
	return 0;
}

static int sched_cookie_cb(const void *key, const void *val, void *arg)
{
	struct untrack_arg *a = arg;
	const struct dac_sched_val *sv = val;
	struct dac_sched_key *o;

	if (sv->cookie != a->cookie)
		return 0;
	o = vec_push(&a->v);
	if (!o)
		return -ENOMEM;
	memcpy(o, key, sizeof(*o));
	return 0;
}

/* Delete every key of @fd that @fn collects for @cookie. */
static int delete_matching(int fd, size_t ksize, size_t vsize, walk_fn fn, uint64_t cookie)
{
	struct untrack_arg a = { .cookie = cookie, .v = { .elem = ksize } };
	int err = map_walk(fd, ksize, vsize, fn, &a);

	for (size_t i = 0; !err && i < a.v.n; i++)
		if (bpf_map_delete_elem(fd, (char *)a.v.p + i * ksize) && errno != ENOENT)
			err = -errno;
	free(a.v.p);
	return err;
}

int dac_bpf_untrack(struct dac_bpf *b, uint64_t cookie)
{
	int err = delete_matching(b->fd[M_TRACKED], sizeof(uint32_t), sizeof(uint64_t),
				  untrack_cb, cookie);
	int e2 = delete_matching(b->fd[M_COOKIE_USAGE], sizeof(struct dac_cookie_key),
				 sizeof(struct dac_cookie_val), cookie_keys_cb, cookie);
	int e3 = delete_matching(b->fd[M_COOKIE_MEM], sizeof(struct dac_cookie_key),
				 sizeof(struct dac_cookie_val), cookie_keys_cb, cookie);
	/* The scheduler entries its exited processes left for the reader. */
	int e4 = delete_matching(b->fd[M_SCHED], sizeof(struct dac_sched_key),
				 sizeof(struct dac_sched_val), sched_cookie_cb, cookie);

	return err ? err : e2 ? e2 : e3 ? e3 : e4;
}

struct cookie_arg {
	struct dac_bpf *b;
	uint64_t cookie;
	struct vec v;
	bool region;
};

static int cookie_read_cb(const void *key, const void *val, void *arg)
{
	struct cookie_arg *a = arg;
	const struct dac_cookie_key *k = key;
	const struct dac_cookie_val *cv = val;

	if (k->cookie != a->cookie)
		return 0;
	if (a->region) {
		struct dac_bpf_cookie_region *o = vec_push(&a->v);

		if (!o)
			return -ENOMEM;
		o->device_id = k->device_id;
		o->region = k->index;
		dac_bpf_name(a->b, k->device_id, true, k->index, o->name, sizeof(o->name));
		o->total = cv->total;
		o->peak = cv->peak;
	} else {
		struct dac_bpf_cookie_engine *o = vec_push(&a->v);

		if (!o)
			return -ENOMEM;
		o->device_id = k->device_id;
		o->engine = k->index;
		dac_bpf_name(a->b, k->device_id, false, k->index, o->name, sizeof(o->name));
		o->busy_ns = cv->busy_ns;
		o->cycles = cv->cycles;
		o->jobs = cv->jobs;
	}
	return 0;
}

int dac_bpf_read_cookie(struct dac_bpf *b, uint64_t cookie,
			struct dac_bpf_cookie_engine **eng, size_t *neng,
			struct dac_bpf_cookie_region **reg, size_t *nreg)
{
	struct cookie_arg e = { .b = b, .cookie = cookie, .v = { .elem = sizeof(**eng) } };
	struct cookie_arg r = { .b = b, .cookie = cookie, .v = { .elem = sizeof(**reg) },
				.region = true };
	int err;

	err = finish(&e.v, map_walk(b->fd[M_COOKIE_USAGE], sizeof(struct dac_cookie_key),
				    sizeof(struct dac_cookie_val), cookie_read_cb, &e), eng, neng);
	if (err)
		return err;
	err = finish(&r.v, map_walk(b->fd[M_COOKIE_MEM], sizeof(struct dac_cookie_key),
				    sizeof(struct dac_cookie_val), cookie_read_cb, &r), reg, nreg);
	if (err) {
		free(*eng);
		*eng = NULL;
		*neng = 0;
	}
	return err;
}

/* ---- cgroups ------------------------------------------------------------------ */

int dac_bpf_set_cgroup_filter(struct dac_bpf *b, const char *path)
{
	char *dup = NULL;

	if (path && !(dup = strdup(path)))
		return -ENOMEM;
	free(b->cgroup_filter);
	b->cgroup_filter = dup;
	return 0;
}

const char *dac_bpf_cgroup_filter(const struct dac_bpf *b)
{
	return b->cgroup_filter;
}

/* Where cgroup2 is mounted (mountinfo), else the usual place. */
static void cgroup2_root(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	snprintf(buf, len, "/sys/fs/cgroup");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint opts ... - fstype source opts */
		char mnt[512], *dash = strstr(line, " - cgroup2 ");

		if (dash && sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
}

/*
 * Find the directory with inode @id under @dir (a path buffer of PATH_MAX
 * holding @len bytes; on success it holds the match), @depth levels deep
 * at most. Does not cross into other file systems.
 */
static bool cgroup_find(char *dir, size_t len, dev_t fs, uint64_t id, int depth)
{
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (depth < 0 || !(d = opendir(dir)))
		return false;
	while (!found && (de = readdir(d))) {
		struct stat st;
		int n;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		n = snprintf(dir + len, PATH_MAX - len, "/%s", de->d_name);
		if (n < 0 || (size_t)n >= PATH_MAX - len)
			continue;
		if (lstat(dir, &st) || st.st_dev != fs || !S_ISDIR(st.st_mode))
			continue;
		found = (uint64_t)st.st_ino == id ||
			cgroup_find(dir, len + n, fs, id, depth - 1);
	}
	closedir(d);
	if (!found)
		dir[len] = '\0';
	return found;
}

const char *dac_bpf_cgroup_path(struct dac_bpf *b, uint64_t id, char *buf, size_t len)
{
	char dir[PATH_MAX];
	size_t rlen;
	struct stat st;

	for (size_t i = 0; i < b->ncg; i++) {
		if (b->cg_ids[i] == id) {
			snprintf(buf, len, "%s", b->cg_paths[i]);
			return buf;
		}
	}
	cgroup2_root(dir, sizeof(dir));
	rlen = strlen(dir);
	if (id && !stat(dir, &st)) {
		const char *found = NULL;

		if ((uint64_t)st.st_ino == id)
			found = "/";
		else if (cgroup_find(dir, rlen, st.st_dev, id, 32))
			found = dir + rlen;
		if (found) {
			uint64_t *ids = realloc(b->cg_ids, (b->ncg + 1) * sizeof(*ids));
			char **paths = ids ? realloc(b->cg_paths, (b->ncg + 1) * sizeof(*paths)) : NULL;

			/* Remembered: a cgroup id is never reused while it exists. */
			if (ids)
				b->cg_ids = ids;
			if (paths) {
				b->cg_paths = paths;
				paths[b->ncg] = strdup(found);
				if (paths[b->ncg])
					ids[b->ncg++] = id;
			}
			snprintf(buf, len, "%s", found);
			return buf;
		}
	}
	/* cgroup2 not mounted: the root's id is still known (kernfs root, 1). */
	if (id == 1)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "cgroup:%llu", (unsigned long long)id);
	return buf;
}
