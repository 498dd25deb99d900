// SPDX-License-Identifier: MIT
/*
 * bpf.c - load and attach drmacct's BPF collection (see bpf.h): the plan
 * for this kernel, the skeleton's programs and maps, the layout stamp, and
 * the seeding of clients already open (bpf_seed.c, with the names of
 * bpf_read.c). Pinning and opening a pinned collection: bpf_pinned.c;
 * reading it: bpf_read.c.
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

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- load ----------------------------------------------------------------- */

static void set_autoload(struct bpf_program *const *p, size_t n, bool on)
{
	for (size_t i = 0; i < n; i++)
		bpf_program__set_autoload(p[i], on);
}

/* Enable exactly the programs @p asks for; every other one stays unloaded. */
static void set_groups(struct drmacct_bpf *s, const struct dac_bpf_plan *p)
{
	struct bpf_program *btf[] = {
		s->progs.hb_open, s->progs.hb_close, s->progs.hb_begin,
		s->progs.hb_end, s->progs.hb_mem, s->progs.hb_begin_n,
		s->progs.hb_end_n, s->progs.hb_open_n,
		s->progs.hb_close_n, s->progs.hb_mem_n, s->progs.hb_name,
		s->progs.hb_name_n,
	};
	struct bpf_program *tp[] = {
		s->progs.ht_open, s->progs.ht_close, s->progs.ht_begin,
		s->progs.ht_end, s->progs.ht_mem, s->progs.ht_name,
	};
	/* tp_btf, every kernel; the twins of queue and run where the events are preemptible */
	struct bpf_program *sbtf[] = {
		s->progs.sb_queue, s->progs.sb_run, s->progs.sb_done,
		s->progs.sb_done_n1,
	};
	struct bpf_program *sbtf_twins[] = {
		s->progs.sb_queue_n1, s->progs.sb_run_n1, s->progs.sb_queue_n2,
		s->progs.sb_run_n2, s->progs.sb_done_n2, s->progs.sb_queue_n3,
		s->progs.sb_run_n3, s->progs.sb_done_n3,
	};
	struct bpf_program *stp[] = {
		s->progs.st_queue, s->progs.st_run, s->progs.st_done,
	};
	struct bpf_program *s617tp[] = {
		s->progs.st17_queue, s->progs.st17_run, s->progs.st17_done,
	};
	bool s61 = p->sched_set == DAC_SCHED_SET_61, s617 = p->sched_set == DAC_SCHED_SET_617;

	set_autoload(btf, N(btf), p->drmacct == 1);
	set_autoload(tp, N(tp), p->drmacct == 0);
	set_autoload(sbtf, N(sbtf), p->sched == 1);
	/*
	 * The kernels with the 6.1 names (up to 6.16) run tracepoints with
	 * preemption off: only a completion can nest (in an interrupt), and
	 * one twin takes it. 7.x runs them preemptible (see sched.bpf.c).
	 */
	set_autoload(sbtf_twins, N(sbtf_twins), p->sched == 1 && s617);
	set_autoload(stp, N(stp), p->sched == 0 && s61);
	set_autoload(s617tp, N(s617tp), p->sched == 0 && s617);
	if (p->sched == 1)
		dac_bpf_sched_retarget(s->obj, p->sched_set);
}

const char *dac_bpf_sched_target(const char *event, int set)
{
	static const char *const names[][2] = {
		{ "drm_sched_job_queue", "drm_sched_job" },
		{ "drm_sched_job_run", "drm_run_job" },
		{ "drm_sched_job_done", "drm_sched_process_job" },
	};

	for (size_t i = 0; set == DAC_SCHED_SET_61 && i < N(names); i++)
		if (!strcmp(event, names[i][0]))
			return names[i][1];
	return event;
}

void dac_bpf_sched_retarget(struct bpf_object *obj, int set)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog), *to;

		if (strncmp(sec, "tp_btf/", 7))
			continue;
		to = dac_bpf_sched_target(sec + 7, set);
		if (to != sec + 7)
			bpf_program__set_attach_target(prog, 0, to);
	}
}

static bool prog_in(const struct bpf_program *p, const struct bpf_program *const *set, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (set[j] == p)
			return true;
	return false;
}

/*
 * Attach every loaded program of the skeleton that has no link yet; with
 * @first only the ones that place clients (client open/close), follow
 * their memory and learn their devices' names, which must run before the
 * loader seeds the open clients.
 * The "_nested" programs go after the others of their call: a tracepoint
 * runs its programs in the order they were attached, and each must run
 * after the program whose missed events it takes (so that it finds nothing
 * left to do otherwise).
 */
static int attach_progs(struct drmacct_bpf *s, bool first)
{
	struct bpf_program **progs = (struct bpf_program **)&s->progs;
	struct bpf_link **links = (struct bpf_link **)&s->links;
	size_t nprog = sizeof(s->progs) / sizeof(progs[0]);
	const struct bpf_program *early[] = {
		s->progs.hb_open, s->progs.hb_close, s->progs.hb_mem,
		s->progs.ht_open, s->progs.ht_close, s->progs.ht_mem,
		s->progs.hb_open_n, s->progs.hb_close_n,
		s->progs.hb_mem_n, s->progs.hb_name, s->progs.ht_name,
		s->progs.hb_name_n,
	};
	const struct bpf_program *late[] = {
		s->progs.hb_begin_n, s->progs.hb_end_n, s->progs.hb_name_n,
		s->progs.sb_done_n1, s->progs.hb_open_n,
		s->progs.hb_close_n, s->progs.hb_mem_n,
		s->progs.sb_queue_n1, s->progs.sb_run_n1,
		s->progs.sb_queue_n2, s->progs.sb_run_n2,
		s->progs.sb_done_n2, s->progs.sb_queue_n3,
		s->progs.sb_run_n3, s->progs.sb_done_n3,
		s->progs.pb_fork_n1,
		s->progs.pb_exit_n1, s->progs.pb_fork_n2,
		s->progs.pb_exit_n2, s->progs.pb_fork_n3,
		s->progs.pb_exit_n3,
	};

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nprog; i++) {
			if (links[i] || !bpf_program__autoload(progs[i]) ||
			    progs[i] == s->progs.sweep_init)	/* run, not attached */
				continue;
			if (first && !prog_in(progs[i], early, N(early)))
				continue;
			if (prog_in(progs[i], late, N(late)) != (pass == 1))
				continue;
			links[i] = bpf_program__attach(progs[i]);
			if (!links[i]) {
				int err = -errno;

				return err < 0 ? err : -EINVAL;
			}
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
		[M_STATS] = s->maps.stats, [M_NAMES] = s->maps.names,
		[M_TRACKED] = s->maps.tracked,
		[M_SCHED] = s->maps.sched_usage, [M_COOKIE_USAGE] = s->maps.cookie_usage,
		[M_COOKIE_MEM] = s->maps.cookie_mem, [M_SCHED_CLIENTS] = s->maps.sched_clients,
		[M_CGROUP_SCHED] = s->maps.cgroup_sched,
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
		s->maps.clients, s->maps.usage, s->maps.mem, s->maps.totals, s->maps.names,
		s->maps.cookie_usage, s->maps.cookie_mem,
	};
	struct bpf_map *sched[] = {
		s->maps.rings, s->maps.sched_usage, s->maps.procs, s->maps.cgroup_sched,
	};
	bool s617 = p->sched >= 0 && p->sched_set == DAC_SCHED_SET_617;

	for (size_t i = 0; p->drmacct < 0 && i < N(acct); i++)
		bpf_map__set_max_entries(acct[i], 1);
	for (size_t i = 0; p->sched < 0 && i < N(sched); i++)
		bpf_map__set_max_entries(sched[i], 1);
	/* fence address: the plain 6.1 programs; {context, seqno}: the others */
	if (p->sched != 0 || s617)
		bpf_map__set_max_entries(s->maps.inflight, 1);
	if (p->sched != 1 && !s617)
		bpf_map__set_max_entries(s->maps.inflight617, 1);
	if (!p->client_ids)
		bpf_map__set_max_entries(s->maps.sched_clients, 1);
}

/*
 * Set the sweep's timer up: sweep_init() (proc.bpf.c), run once here
 * after the load, gives it its callback, so that no exit program carries
 * the verification of that callback. It does nothing where use_timer is
 * false (PREEMPT_RT). The timer holds the program from then on; it goes
 * with the sweeper map.
 */
static int init_sweep(struct drmacct_bpf *s)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);

	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.sweep_init), &run))
		return -errno;
	return (int)run.retval;		/* 0, or the helper's -errno */
}

/*
 * DRMACCT_BPF_SCHED_ENTRIES into *@n: unset leaves it 0; anything but a
 * decimal number from 1 to DAC_BPF_SCHED_ENTRIES_MAX is -EINVAL, with the
 * reason in the load log.
 */
static int env_sched_entries(uint32_t *n)
{
	const char *env = getenv("DRMACCT_BPF_SCHED_ENTRIES");
	unsigned long long v;
	char *end, msg[160];
	int len;

	if (!env)
		return 0;
	errno = 0;
	v = strtoull(env, &end, 10);
	if (env[0] < '0' || env[0] > '9' || *end || errno || !v || v > DAC_BPF_SCHED_ENTRIES_MAX) {
		len = snprintf(msg, sizeof(msg),
			       "DRMACCT_BPF_SCHED_ENTRIES='%.40s': not a number from 1 to %u\n",
			       env, DAC_BPF_SCHED_ENTRIES_MAX);
		dac_bpf_load_log_add(msg, (size_t)len);
		return -EINVAL;
	}
	*n = (uint32_t)v;
	return 0;
}

/* Every gpu_scheduler map gets @n entries (dac_bpf_load_opts.sched_entries). */
static void size_sched_maps(struct drmacct_bpf *s, uint32_t n)
{
	struct bpf_map *m[] = {
		s->maps.rings, s->maps.inflight, s->maps.inflight617,
		s->maps.sched_usage, s->maps.sched_clients, s->maps.procs, s->maps.cgroup_sched,
	};

	for (size_t i = 0; i < N(m); i++)
		bpf_map__set_max_entries(m[i], n);
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
	/* PREEMPT_RT refuses bpf_timer: the sweep then runs at forks and exits */
	b->skel->rodata->use_timer = dac_bpf_sweep_timer_ok();
	b->skel->rodata->test_stall_reclaim = o->test_stall_reclaim;
	b->skel->rodata->test_sweep_late = o->test_sweep_late;
	if (o->test_break_btf) {
		/* A log buffer below the kernel's minimum: BPF_PROG_LOAD says EINVAL. */
		static char tiny_log[8];
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, b->skel->obj) {
			/* The sources' programs (drmacct_*, drm_*), not pb_fork. */
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
	if (o->sched_entries)
		size_sched_maps(b->skel, o->sched_entries);
	size_maps(b->skel, plan);
	err = drmacct_bpf__load(b->skel);
	if (err)
		goto fail;
	take_fds(b);
	err = init_sweep(b->skel);
	if (err)
		goto fail;
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
	b->info.sched_client_ids = plan->sched >= 0 && plan->client_ids;
	b->info.proc_exit = true;
	b->info.ringbuf_bytes = bpf_map__max_entries(b->skel->maps.records);
	/*
	 * Clients already open go into the table before the job programs
	 * run: a job of theirs counted before they were placed would be
	 * filed under device 0 (unknown) for good, in usage and in totals.
	 * The seed's fdinfo reads also name the devices (the name program is
	 * attached with the first ones).
	 */
	if (b->info.drmacct) {
		err = attach_progs(b->skel, true);
		if (err)
			goto fail;
		b->load_seeded = dac_bpf_seed_clients(b);
	}
	err = attach_progs(b->skel, false);
	if (err)
		goto fail;
	/*
	 * Every job begun from now on has its begin seen: its end may come
	 * first and take the running count below what runs, its begin puts
	 * it back (helper.bpf.c, jobs_seen_from).
	 */
	b->skel->data->jobs_seen_from = dac_bpf_mono_ns();
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
			p.client_ids = tp.client_ids;
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
	if (o.sched_entries > DAC_BPF_SCHED_ENTRIES_MAX ||
	    (!o.sched_entries && (err = env_sched_entries(&o.sched_entries))))
		return -EINVAL;
	err = try_load(&o, &plan, out);
	if (!err || err == -EPERM || err == -ENOMEM || o.attach != DAC_BPF_ATTACH_AUTO ||
	    (plan.drmacct != 1 && plan.sched != 1))
		return err;
	/*
	 * tp_btf refused: plain tracepoints may still do. What the first
	 * attempt logged is the cause to report if they do not.
	 */
	first_log = strdup(dac_bpf_load_log());
	dac_bpf_load_log_reset();
	if (!load_fallback(&o, &plan, err, out)) {
		free(first_log);
		return 0;
	}
	dac_bpf_load_log_reset();
	if (first_log)
		dac_bpf_load_log_add(first_log, strlen(first_log));
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

