// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * helper.bpf.c - drmacct's own tracepoints (system "drmacct"): clients, usage,
 * memory, totals and CLIENT_EXIT records. Defines what the units share.
 */
#define DAC_DEFINE_SHARED
#include "drmacct.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- drmacct: common handlers ------------------------------------------ */

static __always_inline void on_client_open(__u64 client_id, __u32 device_id,
					   const char *driver)
{
	struct dac_client_val c = {};
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	c.open_ns = bpf_ktime_get_ns();
	c.cookie = cookie_of_current();
	c.device_id = device_id;
	c.pid = (__u32)pid_tgid;
	c.tgid = pid_tgid >> 32;
	c.cgroup_id = bpf_get_current_cgroup_id();
	c.start_ns = proc_start((void *)bpf_get_current_task());
	bpf_get_current_comm(c.comm, sizeof(c.comm));
	if (bpf_probe_read_kernel_str(c.driver, sizeof(c.driver), driver) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	map_put(&clients, DAC_MAP_CLIENTS, &client_id, &c, BPF_ANY);
}

/*
 * One engine or region name of a device (drmacct_device_name): the name,
 * for an engine its capacity too, and with the first of each kind the
 * device's node ("major:minor", the kernel's dev_t split as MAJOR() and
 * MINOR() do), which the loader's /proc walk matches open files against.
 */
static __always_inline void on_device_name(__u32 device_id, __u32 rdev, __u32 kind,
					   __u32 index, const char *name, __u32 capacity)
{
	struct dac_name_key k = { .device_id = device_id, .kind = kind, .index = index };
	char v[DAC_NAME_LEN] = {};
	__u64 args[2];

	if (!device_id || index > 0xffff ||
	    (kind != DAC_NAME_ENGINE && kind != DAC_NAME_REGION))
		return;
	if (bpf_probe_read_kernel_str(v, sizeof(v), name) < 0) {
		stat_inc(DAC_STAT_READ_FAULT);
		return;
	}
	if (map_put(&names, DAC_MAP_NAMES, &k, v, BPF_ANY))
		return;
	if (kind == DAC_NAME_ENGINE) {
		__builtin_memset(v, 0, sizeof(v));
		args[0] = capacity;
		bpf_snprintf(v, sizeof(v), "%u", args, sizeof(args[0]));
		k.kind = DAC_NAME_CAPACITY;
		map_put(&names, DAC_MAP_NAMES, &k, v, BPF_ANY);
	}
	if (rdev && !index) {
		__builtin_memset(v, 0, sizeof(v));
		args[0] = rdev >> 20;
		args[1] = rdev & ((1U << 20) - 1);
		bpf_snprintf(v, sizeof(v), "%u:%u", args, sizeof(args));
		k.kind = DAC_NAME_RDEV;
		k.index = 0;
		map_put(&names, DAC_MAP_NAMES, &k, v, BPF_ANY);
	}
}

/* The cookie of a client's opener, with its device. */
static __always_inline __u64 client_cookie(__u64 client_id, __u32 *device_id)
{
	struct dac_client_val *c = bpf_map_lookup_elem(&clients, &client_id);

	if (!c)
		return 0;
	*device_id = c->device_id;
	return c->cookie;
}

/*
 * Jobs that began at or after this time (CLOCK_MONOTONIC ns) had their
 * begin seen by the programs: the loader writes it, from its own clock,
 * once the job programs are attached (a begin takes its time before its
 * tracepoint fires, so a time from after the attach is an event after
 * it). Until then nothing is known to be seen (~0).
 */
__u64 jobs_seen_from = ~0ULL;

/*
 * The usage entry of (@client_id, @engine) on device @device_id, made on
 * the first job with what the client table knows of the opener (the only
 * client lookup on the job path).
 */
static __always_inline struct dac_usage_val *usage_of(__u64 client_id, __u32 engine,
						      __u32 device_id)
{
	struct dac_usage_key k = { .client_id = client_id, .engine = engine };
	struct dac_usage_val zero = {}, *u;
	struct dac_client_val *c;

	u = bpf_map_lookup_elem(&usage, &k);
	if (u)
		return u;
	zero.device_id = device_id;
	c = bpf_map_lookup_elem(&clients, &client_id);
	if (c) {
		zero.cookie = c->cookie;
		zero.start_ns = c->start_ns;
		zero.tgid = c->tgid;
		zero.flags = DAC_USAGE_F_OPENER;
	}
	return lookup_or_init(&usage, &k, &zero, DAC_MAP_USAGE);
}

/*
 * A job of a client whose opener is @u's ended: the opener's process gets
 * it, exactly. Its procs entry is looked up by tgid alone when it is
 * there and the same process; only a first charge (or a tgid taken by
 * another process since) goes through the client table and proc_of().
 */
static __always_inline void proc_acct(__u64 client_id, const struct dac_usage_val *u,
				      __u64 busy_ns)
{
	struct dac_client_val *c;
	struct dac_proc_val *p;
	__u32 tgid = u->tgid;
	bool refused;

	if (!(u->flags & DAC_USAGE_F_OPENER))
		return;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p || !proc_same(p, u->start_ns)) {
		c = bpf_map_lookup_elem(&clients, &client_id);
		if (!c)
			return;
		p = proc_of(c->tgid, c->start_ns, c->cookie, c->cgroup_id, c->comm, &refused);
		if (!p)
			return;
	}
	__sync_fetch_and_add(&p->acct_busy_ns, busy_ns);
	__sync_fetch_and_add(&p->acct_jobs, 1);
}

static __always_inline void on_job_begin(__u64 client_id, __u32 engine, __u32 device_id,
					 __u64 ts_ns)
{
	struct dac_usage_val *u = usage_of(client_id, engine, device_id);

	if (!u)
		return;
	/* A write readers can tell from (struct dac_usage_val). */
	__sync_fetch_and_add(&u->wr_begun, 1);
	__sync_fetch_and_add(&u->start_sum, ts_ns);
	__sync_fetch_and_add(&u->running, 1);
	__sync_fetch_and_add(&u->wr_done, 1);
}

/*
 * A job ended. Its begin, when the programs saw it or will, added what
 * this takes away (struct dac_usage_val), in whichever order the two
 * come. A job that began before jobs_seen_from may have begun before the
 * programs were attached: it leaves the running ones only when some job
 * is counted running (as many as were seen to begin).
 */
/*
 * The device's all-time totals are not touched here: a client's usage
 * entries go into them when it closes (close_fold()), and readers add the
 * open clients' (dac_bpf_read_totals()).
 */
static __always_inline void on_job_end(__u64 client_id, __u32 engine, __u32 device_id,
				       __u64 ts_ns, __u64 busy_ns, __u64 cycles)
{
	struct dac_usage_val *u = usage_of(client_id, engine, device_id);
	struct dac_cookie_key ck = {};
	struct dac_cookie_val czero = {}, *cu;
	__u64 start = ts_ns - busy_ns;

	if (u) {
		__sync_fetch_and_add(&u->wr_begun, 1);
		__sync_fetch_and_add(&u->busy_ns, busy_ns);
		__sync_fetch_and_add(&u->cycles, cycles);
		__sync_fetch_and_add(&u->jobs, 1);
		if (start >= jobs_seen_from) {
			__sync_fetch_and_add(&u->running, -1);
			__sync_fetch_and_add(&u->start_sum, -start);
		} else if (__sync_fetch_and_add(&u->running, -1) > 0) {
			__sync_fetch_and_add(&u->start_sum, -start);
		} else {
			/* begun before the programs ran: never counted */
			__sync_fetch_and_add(&u->running, 1);
			stat_inc(DAC_STAT_JOB_END_UNSEEN);
		}
		__sync_fetch_and_add(&u->wr_done, 1);
	}
	if (!u)
		return;
	proc_acct(client_id, u, busy_ns);
	if (!u->cookie)
		return;
	ck.cookie = u->cookie;
	ck.device_id = device_id;
	ck.index = engine;
	cu = lookup_or_init(&cookie_usage, &ck, &czero, DAC_MAP_COOKIE_USAGE);
	if (cu) {
		__sync_fetch_and_add(&cu->busy_ns, busy_ns);
		__sync_fetch_and_add(&cu->cycles, cycles);
		__sync_fetch_and_add(&cu->jobs, 1);
	}
}

static __always_inline void on_mem_change(__u64 client_id, __u32 region, __u32 op, __u64 size)
{
	struct dac_mem_key k = { .client_id = client_id, .region = region };
	struct dac_mem_val zero = {}, *m;
	struct dac_cookie_key ck = {};
	struct dac_cookie_val czero = {}, *cm;
	__u64 add = op == 2 ? 0 : size, sub = op == 2 ? size : 0;

	/* 0 create, 1 open (import): the client holds more; 2 close: less. */
	if (op > 2)
		return;
	m = lookup_or_init(&mem, &k, &zero, DAC_MAP_MEM);
	if (!m)
		return;
	/* Threads of a client may create and close objects at once. */
	atomic_max(&m->peak, atomic_add_sub_floor(&m->total, add, sub));

	ck.cookie = client_cookie(client_id, &ck.device_id);
	if (!ck.cookie)
		return;
	ck.index = region;
	cm = lookup_or_init(&cookie_mem, &ck, &czero, DAC_MAP_COOKIE_MEM);
	if (!cm)
		return;
	/* Several clients of one command, on several CPUs. */
	atomic_max(&cm->peak, atomic_add_sub_floor(&cm->total, add, sub));
}

/* Engines whose usage entries a closing client's walk removes, at most. */
#define DAC_CLOSE_MAX_ENGINES	4096

/*
 * Usage entry @u of engine @engine of a closing client on @device_id: its
 * finished jobs go into the device's all-time totals (a reader adds open
 * clients' entries itself, so the jobs of a client count once: in its
 * entry while it is open, in the totals after).
 */
static __always_inline void close_fold(const struct dac_usage_val *u, __u32 device_id,
				       __u32 engine)
{
	struct dac_total_key tk = { .device_id = device_id, .engine = engine };
	struct dac_total_val tzero = {}, *t;

	t = lookup_or_init(&totals, &tk, &tzero, DAC_MAP_TOTALS);
	if (!t)
		return;
	__sync_fetch_and_add(&t->busy_ns, u->busy_ns);
	__sync_fetch_and_add(&t->cycles, u->cycles);
	__sync_fetch_and_add(&t->jobs, u->jobs);
}

struct close_walk {
	struct dac_close_scratch *s;
	__u64 client_id;
	__u32 device_id;
	__u32 ne;		/* engines in the record */
	__u32 nr;		/* regions in the record: the last one held + 1 */
	__u32 pad;
};

/*
 * Usage entry of engine DAC_EXIT_MAX_ENGINES + @i of closing client @arg:
 * beyond the record (a bpf_loop() callback, verified once), it is folded
 * into the totals and goes.
 */
static int close_engine_beyond(__u32 i, void *arg)
{
	struct close_walk *w = arg;
	struct dac_usage_key k = { .client_id = w->client_id,
				   .engine = DAC_EXIT_MAX_ENGINES + i };
	struct dac_usage_val *u = bpf_map_lookup_elem(&usage, &k);

	if (!u)
		return 0;
	close_fold(u, w->device_id, k.engine);
	bpf_map_delete_elem(&usage, &k);
	return 0;
}

/*
 * What a closing client's record carries, gathered before the record is
 * reserved: the walks over its entries are bpf_loop() callbacks, verified
 * once each whatever the engine count, and no reservation may be held
 * across a callback (6.1's verifier loses it there). One slot per CPU and
 * per program of the event (the first, and its twin that runs only while
 * the first is interrupted on that CPU), so no two closes share one.
 */
struct dac_close_scratch {
	__u64 busy[DAC_EXIT_MAX_ENGINES];
	__u64 cycles[DAC_EXIT_MAX_ENGINES];
	__u64 jobs[DAC_EXIT_MAX_ENGINES];
	struct dac_rec_region region[DAC_EXIT_MAX_REGIONS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct dac_close_scratch);
} close_scratch SEC(".maps");

/* Engine @i (< DAC_EXIT_MAX_ENGINES): its jobs kept, its entry gone. */
static int close_engine(__u32 i, void *arg)
{
	struct close_walk *w = arg;
	struct dac_usage_key k = { .client_id = w->client_id, .engine = i };
	struct dac_close_scratch *s = w->s;
	struct dac_usage_val *u;

	if (i >= DAC_EXIT_MAX_ENGINES)
		return 1;
	/* engines past the count: zeros (the read below fills the others) */
	s->busy[i] = 0;
	s->cycles[i] = 0;
	s->jobs[i] = 0;
	if (i >= w->ne)
		return 0;
	u = bpf_map_lookup_elem(&usage, &k);
	if (!u)
		return 0;
	s->jobs[i] = u->jobs;
	close_fold(u, w->device_id, i);
	bpf_map_delete_elem(&usage, &k);
	return 0;
}

/* Region @i: its total and peak kept, its entry gone. */
static int close_region(__u32 i, void *arg)
{
	struct close_walk *w = arg;
	struct dac_mem_key k = { .client_id = w->client_id, .region = i };
	struct dac_close_scratch *s = w->s;
	struct dac_mem_val *m;

	if (i >= DAC_EXIT_MAX_REGIONS)
		return 1;
	m = bpf_map_lookup_elem(&mem, &k);
	s->region[i].peak = m ? m->peak : 0;
	s->region[i].total = m ? m->total : 0;
	if (!m)
		return 0;
	w->nr = i + 1;
	bpf_map_delete_elem(&mem, &k);
	return 0;
}

/*
 * A client closed for good (its last job ended): the CLIENT_EXIT record
 * with the final totals of @busy and @cycles (@n engines, kernel memory the
 * event points to), and the client's entries leave every map. The record
 * is built in place in the ring buffer (its largest size reserved, its
 * real size in the header) from the scratch slot @slot.
 */
static __always_inline void on_client_close(__u64 client_id, __u32 device_id, __u32 n,
					    const __u64 *busy, const __u64 *cycles, __u32 slot)
{
	struct dac_total_key tk = { .device_id = device_id, .engine = 0 };
	struct close_walk w = { .client_id = client_id, .device_id = device_id };
	struct dac_total_val tzero = {}, *t;
	struct dac_rec_exit *rec = NULL;
	struct dac_rec_engine *e;
	struct dac_rec_region *r;
	struct dac_client_val *c;
	__u32 ne = n, rne, sz;
	long faults = 0;

	w.s = bpf_map_lookup_elem(&close_scratch, &slot);
	if (!w.s)
		return;		/* never: an array's index in range */
	/*
	 * The usage entries move into the totals between these two counts
	 * (a reader that sees them apart retries: it would count the moving
	 * jobs twice or not at all).
	 */
	stat_inc(DAC_STAT_FOLDS_BEGUN);
	if (n > DAC_EXIT_MAX_ENGINES)
		bpf_loop((n < DAC_CLOSE_MAX_ENGINES ? n : DAC_CLOSE_MAX_ENGINES) -
			 DAC_EXIT_MAX_ENGINES, close_engine_beyond, &w, 0);
	if (ne > DAC_EXIT_MAX_ENGINES)
		ne = DAC_EXIT_MAX_ENGINES;
	w.ne = ne;
	bpf_loop(DAC_EXIT_MAX_ENGINES, close_engine, &w, 0);
	stat_inc(DAC_STAT_FOLDS_DONE);
	bpf_loop(DAC_EXIT_MAX_REGIONS, close_region, &w, 0);
	/*
	 * A failed read (a NULL array too) leaves 0, counted. The count is
	 * bounded again after a barrier: 6.1's verifier loses the bound the
	 * compiler's copy of it had.
	 */
	sz = ne;
	asm volatile("" : "+r"(sz));
	if (sz > DAC_EXIT_MAX_ENGINES)
		sz = DAC_EXIT_MAX_ENGINES;
	faults |= bpf_probe_read_kernel(w.s->busy, sz * sizeof(__u64), busy);
	faults |= bpf_probe_read_kernel(w.s->cycles, sz * sizeof(__u64), cycles);
	if (faults)
		stat_inc(DAC_STAT_READ_FAULT);

	c = bpf_map_lookup_elem(&clients, &client_id);
	t = lookup_or_init(&totals, &tk, &tzero, DAC_MAP_TOTALS);
	if (t)
		__sync_fetch_and_add(&t->clients_closed, 1);
	/*
	 * One test of the reservation: 6.1's verifier does not know a
	 * checked ring-buffer pointer is non-NULL, and would walk a second
	 * test's NULL branch holding the reference.
	 */
	rec = bpf_ringbuf_reserve(&records, DAC_REC_EXIT_MAX_SIZE, 0);
	if (!rec) {
		/* the entries go all the same; seq counts the lost record */
		stat_inc(DAC_STAT_EXIT_DROPS);
		stat_inc(DAC_STAT_EXIT_RECORDS);
		if (c)
			bpf_map_delete_elem(&clients, &client_id);
		return;
	}
	__builtin_memset(rec, 0, sizeof(*rec));
	rec->type = DAC_REC_CLIENT_EXIT;
	rec->client_id = client_id;
	rec->close_ns = bpf_ktime_get_ns();
	rec->device_id = device_id;
	if (c) {
		rec->cookie = c->cookie;
		rec->open_ns = c->open_ns;
		rec->pid = c->pid;
		rec->tgid = c->tgid;
		__builtin_memcpy(rec->comm, c->comm, sizeof(rec->comm));
		__builtin_memcpy(rec->driver, c->driver, sizeof(rec->driver));
		bpf_map_delete_elem(&clients, &client_id);
	} else {
		rec->flags |= DAC_EXIT_F_NO_OPEN;
	}
	if (n > DAC_EXIT_MAX_ENGINES)
		rec->flags |= DAC_EXIT_F_TRUNCATED;
	rec->num_engines = ne;
	/*
	 * Every engine slot is written (zeros past the count, which the
	 * regions then overwrite): no branch per engine, so the verifier walks
	 * the copy once per iteration with one state.
	 */
	for (__u32 i = 0; i < DAC_EXIT_MAX_ENGINES; i++) {
		e = (void *)(rec + 1) + i * sizeof(*e);
		e->busy_ns = w.s->busy[i];
		e->cycles = w.s->cycles[i];
		e->jobs = w.s->jobs[i];
	}
	/*
	 * Where the regions start, read back from the record: a value the
	 * verifier knows only by its bound.
	 */
	rne = *(volatile __u32 *)&rec->num_engines;
	if (rne > DAC_EXIT_MAX_ENGINES)
		rne = DAC_EXIT_MAX_ENGINES;	/* never: the bound, for the verifier */
	asm volatile("" : "+r"(rne));
	for (__u32 i = 0; i < DAC_EXIT_MAX_REGIONS; i++) {
		r = (void *)(rec + 1) + rne * sizeof(struct dac_rec_engine) + i * sizeof(*r);
		r->peak = w.s->region[i].peak;
		r->total = w.s->region[i].total;
	}
	rec->num_regions = w.nr;
	rec->size = sizeof(*rec) + ne * sizeof(struct dac_rec_engine) +
		    w.nr * sizeof(struct dac_rec_region);
	rec->seq = stat_inc(DAC_STAT_EXIT_RECORDS);
	bpf_ringbuf_submit(rec, 0);
}

/* ---- drmacct: tp_btf ----------------------------------------------------- */

SEC("tp_btf/drmacct_client_open")
int BPF_PROG(hb_open, u64 client_id, u32 device_id, const char *driver)
{
	on_client_open(client_id, device_id, driver);
	return 0;
}

/*
 * tp_btf programs check every pointer argument: newer verifiers (6.12 on,
 * Debian's included) take the pointer arguments of module tracepoints as
 * possibly NULL and refuse arithmetic on them before a check.
 */
SEC("tp_btf/drmacct_client_close")
int BPF_PROG(hb_close, u64 client_id, u32 device_id, u32 num_engines,
	     const u64 *busy_ns, const u64 *cycles)
{
	__u32 *m = nest_mark(DAC_NEST_CLIENT_CLOSE);

	on_client_close(client_id, device_id, num_engines, busy_ns, cycles, 0);
	nest_unmark(m);
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(hb_begin, u64 client_id, u32 engine, u64 ts_ns, u32 running, u32 device_id)
{
	__u32 *m = nest_mark(DAC_NEST_JOB_BEGIN);

	on_job_begin(client_id, engine, device_id, ts_ns);
	nest_unmark(m);
	return 0;
}

SEC("tp_btf/drmacct_job_end")
int BPF_PROG(hb_end, u64 client_id, u32 engine, u64 ts_ns, u64 busy_ns,
	     u64 cycles, u32 running, u32 device_id)
{
	__u32 *m = nest_mark(DAC_NEST_JOB_END);

	on_job_end(client_id, engine, device_id, ts_ns, busy_ns, cycles);
	nest_unmark(m);
	return 0;
}

SEC("tp_btf/drmacct_mem_change")
int BPF_PROG(hb_mem, u64 client_id, u32 region, u32 op, u64 size)
{
	__u32 *m;

	if (op > 2)
		return 0;	/* not a change of what the client holds */
	m = nest_mark(DAC_NEST_MEM_CHANGE);
	on_mem_change(client_id, region, op, size);
	nest_unmark(m);
	return 0;
}

SEC("tp_btf/drmacct_device_name")
int BPF_PROG(hb_name, u64 client_id, u32 device_id, u32 rdev, u32 kind,
	     u32 index, const char *name, u32 capacity)
{
	on_device_name(device_id, rdev, kind, index, name, capacity);
	return 0;
}

/* The events hb_begin and hb_end missed (see nesting[]). */
SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(hb_begin_n, u64 client_id, u32 engine, u64 ts_ns, u32 running,
	     u32 device_id)
{
	if (nest_missed(DAC_NEST_JOB_BEGIN, DAC_STAT_NESTED_JOB_BEGIN))
		on_job_begin(client_id, engine, device_id, ts_ns);
	return 0;
}

SEC("tp_btf/drmacct_job_end")
int BPF_PROG(hb_end_n, u64 client_id, u32 engine, u64 ts_ns, u64 busy_ns,
	     u64 cycles, u32 running, u32 device_id)
{
	if (nest_missed(DAC_NEST_JOB_END, DAC_STAT_NESTED_JOB_END))
		on_job_end(client_id, engine, device_id, ts_ns, busy_ns, cycles);
	return 0;
}

/*
 * The client events hb_open, hb_close and hb_mem
 * missed. They come from task context (open, close, GEM ioctls, the last
 * job's free), where 7.x kernels run tracepoints preemptible; drmacct
 * fires its events with preemption disabled all the same (a task
 * preempted inside a program would hold it on its CPU, and the next task
 * there would skip it), so what nests is an interrupt. An open leaves its
 * client in the table, so a client not there is one the first program did
 * not see; close and memory changes have no such trace and go by
 * nesting[].
 */
SEC("tp_btf/drmacct_client_open")
int BPF_PROG(hb_open_n, u64 client_id, u32 device_id, const char *driver)
{
	if (bpf_map_lookup_elem(&clients, &client_id))
		return 0;
	stat_inc(DAC_STAT_NESTED_CLIENT_OPEN);
	on_client_open(client_id, device_id, driver);
	return 0;
}

/*
 * A name hb_name missed: the entry it would have written is absent. No
 * count of its own: a name is written again at every client open and
 * fdinfo print, and the entry is what tells.
 */
SEC("tp_btf/drmacct_device_name")
int BPF_PROG(hb_name_n, u64 client_id, u32 device_id, u32 rdev, u32 kind,
	     u32 index, const char *name, u32 capacity)
{
	struct dac_name_key k = { .device_id = device_id, .kind = kind, .index = index };

	if (index > 0xffff || bpf_map_lookup_elem(&names, &k))
		return 0;
	on_device_name(device_id, rdev, kind, index, name, capacity);
	return 0;
}

SEC("tp_btf/drmacct_client_close")
int BPF_PROG(hb_close_n, u64 client_id, u32 device_id, u32 num_engines,
	     const u64 *busy_ns, const u64 *cycles)
{
	if (nest_missed(DAC_NEST_CLIENT_CLOSE, DAC_STAT_NESTED_CLIENT_CLOSE))
		on_client_close(client_id, device_id, num_engines, busy_ns, cycles, 1);
	return 0;
}

SEC("tp_btf/drmacct_mem_change")
int BPF_PROG(hb_mem_n, u64 client_id, u32 region, u32 op, u64 size)
{
	if (op <= 2 && nest_missed(DAC_NEST_MEM_CHANGE, DAC_STAT_NESTED_MEM_CHANGE))
		on_mem_change(client_id, region, op, size);
	return 0;
}

/* ---- drmacct: plain tracepoints (record layouts of drmacct_trace.h) ----- */

struct ht_open {
	struct trace_entry ent;
	__u64 client_id;
	__u32 device_id;
	__u32 driver_loc;	/* __data_loc char[] */
};

struct ht_close {
	struct trace_entry ent;
	__u64 client_id;
	__u32 device_id;
	__u32 num_engines;
	__u32 busy_loc;		/* __data_loc u64[] */
	__u32 cycles_loc;
};

struct ht_begin {
	struct trace_entry ent;
	__u64 client_id;
	__u64 ts_ns;
	__u32 engine;
	__u32 running;
	__u32 device_id;
};

struct ht_end {
	struct trace_entry ent;
	__u64 client_id;
	__u64 ts_ns;
	__u64 busy_ns;
	__u64 cycles;
	__u32 engine;
	__u32 running;
	__u32 device_id;
};

struct ht_mem {
	struct trace_entry ent;
	__u64 client_id;
	__u64 size;
	__u32 region;
	__u32 op;
};

struct ht_name {
	struct trace_entry ent;
	__u64 client_id;
	__u32 device_id;
	__u32 rdev;
	__u32 kind;
	__u32 index;
	__u32 capacity;
	__u32 name_loc;		/* __data_loc char[] */
};

SEC("tracepoint/drmacct/drmacct_client_open")
int ht_open(struct ht_open *ctx)
{
	on_client_open(TPD(ctx, client_id), TPD(ctx, device_id),
		       DATA_LOC(ctx, TPD(ctx, driver_loc)));
	return 0;
}

SEC("tracepoint/drmacct/drmacct_client_close")
int ht_close(struct ht_close *ctx)
{
	on_client_close(TPD(ctx, client_id), TPD(ctx, device_id), TPD(ctx, num_engines),
			DATA_LOC(ctx, TPD(ctx, busy_loc)), DATA_LOC(ctx, TPD(ctx, cycles_loc)), 0);
	return 0;
}

SEC("tracepoint/drmacct/drmacct_job_begin")
int ht_begin(struct ht_begin *ctx)
{
	on_job_begin(TPD(ctx, client_id), TPD(ctx, engine), TPD(ctx, device_id), TPD(ctx, ts_ns));
	return 0;
}

SEC("tracepoint/drmacct/drmacct_job_end")
int ht_end(struct ht_end *ctx)
{
	on_job_end(TPD(ctx, client_id), TPD(ctx, engine), TPD(ctx, device_id), TPD(ctx, ts_ns),
		   TPD(ctx, busy_ns), TPD(ctx, cycles));
	return 0;
}

SEC("tracepoint/drmacct/drmacct_mem_change")
int ht_mem(struct ht_mem *ctx)
{
	on_mem_change(TPD(ctx, client_id), TPD(ctx, region), TPD(ctx, op), TPD(ctx, size));
	return 0;
}

SEC("tracepoint/drmacct/drmacct_device_name")
int ht_name(struct ht_name *ctx)
{
	on_device_name(TPD(ctx, device_id), TPD(ctx, rdev), TPD(ctx, kind), TPD(ctx, index),
		       DATA_LOC(ctx, TPD(ctx, name_loc)), TPD(ctx, capacity));
	return 0;
}
