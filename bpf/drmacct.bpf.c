// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * drmacct.bpf.c - live GPU usage accounting.
 *
 * Source 1, drmacct's tracepoints (system "drmacct"): a client table, busy
 * time, cycles and job counts per (client, engine), memory per (client,
 * region), all-time totals per (device, engine), and one CLIENT_EXIT record
 * per closed client with its final totals (like taskstats' exit data).
 *
 * Source 2, the kernel's gpu_scheduler tracepoints (6.1 names): busy time per
 * (process, scheduler ring) for any drm_sched driver. A job is followed from
 * queue (drm_sched_job, in the submitter's context) through run
 * (drm_run_job) to done (drm_sched_process_job) by the address of its
 * finished fence, and charged done - max(run, previous completion on the
 * ring), so jobs pipelined into the hardware queue are not counted twice.
 * Kernels from 6.17 renamed these events and name jobs by the finished
 * fence's (context, seqno) instead: a third set (sb17_*, st17_*) follows
 * them the same way and also charges per DRM client id.
 *
 * Every program exists twice: tp_btf (typed arguments, needs module BTF) and
 * plain tracepoint (the trace record's layout). The loader enables one of
 * each pair, and one scheduler set, with bpf_program__set_autoload() before
 * loading; programs left out are neither relocated nor loaded.
 *
 * No kernel pointer reaches userspace: pointers are only keys of the
 * scheduler join maps (ring_ids, inflight), which are created BPF_F_WRONLY
 * (the bpf() syscall cannot read them) and are never pinned.
 */
#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "drmacct_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef BPF_F_WRONLY
#define BPF_F_WRONLY	(1U << 4)
#endif
#ifndef BPF_NOEXIST
#define BPF_NOEXIST	1
#endif
#ifndef BPF_ANY
#define BPF_ANY		0
#endif
#ifndef BPF_F_NO_PREALLOC
#define BPF_F_NO_PREALLOC	(1U << 0)
#endif
/* errno values the map helpers return (negated) */
#define DAC_EBUSY	16
#define DAC_EEXIST	17
#define DAC_E2BIG	7
#define DAC_PF_KTHREAD	0x00200000	/* task_struct.flags: a kernel thread */

/* ---- maps ---------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct dac_client_val);
} clients SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dac_usage_key);
	__type(value, struct dac_usage_val);
} usage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dac_mem_key);
	__type(value, struct dac_mem_val);
} mem SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct dac_total_key);
	__type(value, struct dac_total_val);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DAC_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Clients of the loader's own name probes: no CLIENT_EXIT for them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __u32);
} muted SEC(".maps");

/* Engine/region names, written by userspace (DAC_MAP_NAMES in the docs). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct dac_name_key);
	__type(value, char[DAC_NAME_LEN]);
} names SEC(".maps");

/* Processes `drmacct stat` follows: tgid -> cookie; children inherit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

/* Usage and memory of tracked processes' clients, by cookie. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct dac_cookie_key);
	__type(value, struct dac_cookie_val);
} cookie_usage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct dac_cookie_key);
	__type(value, struct dac_cookie_val);
} cookie_mem SEC(".maps");

/*
 * The scheduler maps below are plain hashes, preallocated (no allocation
 * on the event path): an LRU would evict accounting state -- an in-flight
 * job that had run, a ring without its id -- and charge wrong from then
 * on. Full, an insert is refused and counted (map_fail()), and the job it
 * was for is counted lost (DAC_STAT_SCHED_LOST); the loader sizes them
 * (dac_bpf_load_opts.sched_entries).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct dac_ring_val);
} rings SEC(".maps");

/* ring identity (scheduler or its name, a kernel address) -> ring id */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_WRONLY);
	__type(key, __u64);
	__type(value, __u32);
} ring_ids SEC(".maps");

struct inflight_val {
	__u64 queued_ns;
	__u64 run_ns;
	__u64 cookie;
	__u64 client_id;	/* 6.17 set: DRM client id, 0 = unknown */
	__u64 cgroup_id;	/* the submitter's cgroup v2 id */
	__u64 start_ns;		/* the submitter's process start (procs) */
	__u32 tgid;
	__u32 ring_id;
	__u32 counted;		/* enum dac_counted: in which count of its process */
	__u32 pad;
	char comm[DAC_COMM_LEN];
};

/*
 * Where a followed job is counted in its process (struct dac_proc_val):
 * from its queue in queued, from its run in inflight -- every job that ran
 * gets a completion, so inflight goes back to 0; a queued job a kill drops
 * gets no event at all, so queued may not (the sweep writes those).
 */
enum dac_counted {
	DAC_COUNTED_NONE,
	DAC_COUNTED_QUEUED,
	DAC_COUNTED_RUN,
};

/* finished-fence address -> job being followed */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_WRONLY);
	__type(key, __u64);
	__type(value, struct inflight_val);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dac_sched_key);
	__type(value, struct dac_sched_val);
} sched_usage SEC(".maps");

/*
 * 6.17+ set: {fence context, seqno} of the finished fence -> job being
 * followed. No kernel address in key or value, but not pinned either: it is
 * the programs' working state.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dac_fence_key);
	__type(value, struct inflight_val);
} inflight617 SEC(".maps");

/* 6.17+ set: busy time per (DRM client id, ring); empty on older kernels. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dac_sched_client_key);
	__type(value, struct dac_sched_client_val);
} sched_clients SEC(".maps");

/* Processes with scheduler jobs: sums and rings, for their PROC_EXIT record. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct dac_proc_val);
} procs SEC(".maps");

/* Layout stamp the loader writes and readers check (struct dac_meta). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dac_meta);
} meta SEC(".maps");

/*
 * Records are built in place in the ring buffer (bpf_ringbuf_reserve() of
 * the largest size, the real one in the header): no buffer is shared, so
 * an interrupt, or on 7.x a preemption, in the middle of an emit cannot
 * rewrite another record, and a record the ring buffer has no room for is
 * the only one lost (counted).
 */

/*
 * A tp_btf program runs at most once at a time per CPU: an event that comes
 * while it is already running there (an interrupt in the middle of it)
 * skips it, and the kernel counts a recursion miss. Drivers end jobs both
 * from interrupts and from task context (simgpu: its timer and its worker;
 * drm_sched completes a job whose fence signalled before it could wait from
 * its worker), so this happens; a lost job end would leave its job running
 * for ever, a lost completion its process waiting for it. The events whose
 * loss matters have a second program ("_nested"), attached after the first,
 * that takes exactly the events the first missed and counts them
 * (DAC_STAT_NESTED_*). For the drmacct events the first program marks
 * itself running on its CPU in nesting[], and the second acts only under
 * that mark; what is left is an interrupt in the few instructions between
 * the kernel's own mark and ours. For completions the in-flight entry
 * decides: whichever program deletes it charges it.
 */
enum dac_nest {
	DAC_NEST_JOB_BEGIN,
	DAC_NEST_JOB_END,
	DAC_NEST_CLIENT_CLOSE,
	DAC_NEST_MEM_CHANGE,
	DAC_NEST__COUNT
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DAC_NEST__COUNT);
	__type(key, __u32);
	__type(value, __u32);
} nesting SEC(".maps");

__u32 next_ring_id;

/* ---- helpers ------------------------------------------------------------- */

/* Add 1 to stats[@which]; returns the value before, unique per caller. */
static __always_inline __u64 stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (!v)
		return 0;
	return __sync_fetch_and_add(v, 1);
}

/* A cmpxchg loop of dac_atomic.h gave up (never seen: counted to be sure). */
#define DAC_CAS_GIVEUP()	stat_inc(DAC_STAT_CAS_GIVEUP)
#include "dac_atomic.h"

/*
 * When @task's process started: its group leader's start_time
 * (CLOCK_MONOTONIC at fork). With the tgid it names one process, also
 * after its tgid has been reused.
 */
static __always_inline __u64 proc_start(struct task_struct *task)
{
	return BPF_CORE_READ(task, group_leader, start_time);
}

static __always_inline __u64 cookie_of_current(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *c = bpf_map_lookup_elem(&tracked, &tgid);

	return c ? *c : 0;
}

/*
 * An insert into map @id failed with @err: full (-E2BIG), busy (-EBUSY,
 * recursion) or anything else (-ENOMEM: no element could be allocated).
 */
static __always_inline void map_fail(__u32 id, long err)
{
	__u32 base = DAC_STAT_NOMEM;

	if (err == -DAC_E2BIG)
		base = DAC_STAT_FULL;
	else if (err == -DAC_EBUSY)
		base = DAC_STAT_BUSY;
	stat_inc(base + id);
}

/* bpf_map_update_elem() counted by map_fail() when it fails. */
static __always_inline long map_put(void *map, __u32 id, const void *key, const void *val,
				    __u64 flags)
{
	long err = bpf_map_update_elem(map, key, val, flags);

	if (err)
		map_fail(id, err);
	return err;
}

/*
 * Look @key up in @map (enum dac_map_id @id), inserting @zero first when
 * absent; NULL (counted) when the map is full or busy.
 */
static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero,
					    __u32 id)
{
	void *v = bpf_map_lookup_elem(map, key);
	long err;

	if (v)
		return v;
	err = bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	if (err && err != -DAC_EEXIST) {
		map_fail(id, err);
		return NULL;
	}
	return bpf_map_lookup_elem(map, key);
}

/* The first program of event @which runs on this CPU from now on. */
static __always_inline __u32 *nest_mark(__u32 which)
{
	__u32 *m = bpf_map_lookup_elem(&nesting, &which);

	if (m) {
		*(volatile __u32 *)m = 1;
		asm volatile("" ::: "memory");
	}
	return m;
}

static __always_inline void nest_unmark(__u32 *m)
{
	if (m) {
		asm volatile("" ::: "memory");
		*(volatile __u32 *)m = 0;
	}
}

/*
 * For the second program of event @which: the first is running on this
 * CPU, so the kernel skipped it for this event (counted in @stat).
 */
static __always_inline bool nest_missed(__u32 which, __u32 stat)
{
	__u32 *m = bpf_map_lookup_elem(&nesting, &which);

	if (!m || !*(volatile __u32 *)m)
		return false;
	stat_inc(stat);
	return true;
}

/* Pending jobs of process entry @p, queued or running: its record waits for them. */
static __always_inline __u64 proc_pending(struct dac_proc_val *p)
{
	return __sync_fetch_and_add(&p->queued, 0) + __sync_fetch_and_add(&p->inflight, 0);
}

/*
 * sched_usage entry @key of the process of @ctx (its tgid and start) goes
 * (bpf_for_each_map_elem).
 */
static long drop_proc_ring(void *map, struct dac_sched_key *key, void *val,
			   struct dac_sched_key *ctx)
{
	if (key->tgid == ctx->tgid && key->start_ns == ctx->start_ns)
		bpf_map_delete_elem(map, key);
	return 0;
}

/* procs start_ns of an entry being written out (proc_emit()) */
#define DAC_START_GONE	(~0ull)

/*
 * Write process @tgid's PROC_EXIT record from @p -- sums, then one entry
 * per ring with its sched_usage entry, which goes -- and delete @p. More
 * than one CPU may get here for one entry (its exit and its last
 * completion; two threads of a later process with its tgid; the sweep):
 * the one that swaps its start for DAC_START_GONE writes it. Others, and
 * charges that find it so, leave it alone; a CPU holding a stale pointer
 * to an element the map has reused for another process fails that swap
 * too. @flags: more DAC_EXIT_F_* for the record. The record is built in
 * place in the ring buffer; without room there (counted as a drop) the
 * entries go all the same, as if it were written.
 */
/*
 * proc_emit()'s walk over @p's ring slots with key @k (tgid, start): ring
 * slot i is entry i of record @rec (NULL: no record), ring id 0 an empty
 * slot, so each offset is a constant of its iteration. Returns the slots
 * used. Inlined once with the record and once without: the verifier then
 * never meets a test of the reservation that it cannot tie to it (6.1's
 * lost it through the compiler's reuse of one test, and through any
 * callback).
 */
static __always_inline __u32 proc_rings(struct dac_rec_proc_exit *rec, struct dac_proc_val *p,
					struct dac_sched_key *k, bool keep)
{
	struct dac_sched_val *s;
	struct dac_rec_ring *e;
	__u32 used = 0;

	for (int i = 0; i < DAC_PROC_MAX_RINGS; i++) {
		k->ring_id = p->ring_ids[i];
		if (!k->ring_id)
			continue;
		s = bpf_map_lookup_elem(&sched_usage, k);
		if (!s)
			continue;
		if (rec) {
			e = (void *)(rec + 1) + i * sizeof(*e);
			e->ring_id = k->ring_id;
			e->busy_ns = s->busy_ns;
			e->jobs = s->jobs;
		}
		used = i + 1;
		if (!keep)
			bpf_map_delete_elem(&sched_usage, k);
	}
	return used;
}

static __noinline void proc_emit(__u32 tgid, struct dac_proc_val *p, __u32 flags)
{
	struct dac_sched_key k = { .tgid = tgid };
	struct dac_rec_proc_exit *rec;
	__u64 start = p->start_ns, pending;
	__u32 all_flags = p->flags | flags;
	bool keep;

	if (start == DAC_START_GONE ||
	    __sync_val_compare_and_swap(&p->start_ns, start, DAC_START_GONE) != start)
		return;
	k.start_ns = start;
	/* `drmacct stat` reads them after its command exited; untrack deletes. */
	keep = p->cookie != 0;
	pending = proc_pending(p);
	if (pending)
		all_flags |= DAC_EXIT_F_INCOMPLETE;
	/*
	 * The rings before the entry goes: until then, a later process's
	 * charges find it GONE and are refused (counted), rather than adding
	 * to sched_usage entries the walk is about to take.
	 */
	rec = bpf_ringbuf_reserve(&records, DAC_REC_PROC_MAX_SIZE, 0);
	if (!rec) {
		/* the entries go all the same; seq counts the lost record */
		stat_inc(DAC_STAT_EXIT_DROPS);
		proc_rings(NULL, p, &k, keep);
		if (bpf_map_lookup_elem(&procs, &tgid) == p)
			bpf_map_delete_elem(&procs, &tgid);
		stat_inc(DAC_STAT_PROC_RECORDS);
	} else {
		__builtin_memset(rec, 0, DAC_REC_PROC_MAX_SIZE);
		rec->type = DAC_REC_PROC_EXIT;
		rec->exit_ns = bpf_ktime_get_ns();
		rec->tgid = tgid;
		rec->busy_ns = p->busy_ns;
		rec->jobs = p->jobs;
		rec->acct_busy_ns = p->acct_busy_ns;
		rec->acct_jobs = p->acct_jobs;
		rec->cookie = p->cookie;
		rec->cgroup_id = p->cgroup_id;
		rec->start_ns = start;
		rec->flags = all_flags;
		rec->pending = pending > 0xffffffffull ? 0xffffffffu : (__u32)pending;
		__builtin_memcpy(rec->comm, p->comm, sizeof(rec->comm));
		rec->num_rings = proc_rings(rec, p, &k, keep);
		if (bpf_map_lookup_elem(&procs, &tgid) == p)
			bpf_map_delete_elem(&procs, &tgid);
		rec->size = DAC_REC_PROC_MAX_SIZE;
		rec->seq = stat_inc(DAC_STAT_PROC_RECORDS);
		bpf_ringbuf_submit(rec, 0);
	}
	/*
	 * More rings than slots (a process that used thousands of per-queue
	 * schedulers): the entries of the rings without a slot go too, or
	 * they would stay and a later process with this tgid would add to
	 * them. A walk over the map, for these only -- after the submit: no
	 * reservation may be held across a callback. The keys carry the
	 * start, so a later process's entries are safe.
	 */
	if ((all_flags & DAC_EXIT_F_TRUNCATED) && !keep)
		bpf_for_each_map_elem(&sched_usage, drop_proc_ring, &k, 0);
}

/*
 * Is entry @p (of a process with @p's tgid) the process that started at
 * @start_ns? An unknown start (0: a client seeded from fdinfo, kernel
 * threads) matches any.
 */
static __always_inline bool proc_same(const struct dac_proc_val *p, __u64 start_ns)
{
	__u64 s = p->start_ns;

	return s != DAC_START_GONE && (!start_ns || !s || s == start_ns);
}

/*
 * A charge for process @start_ns found entry @p of another: the entry is
 * a later process's (the charge comes too late: DAC_STAT_PROC_LATE) or is
 * being written out right now (refused, counted as a busy insert).
 */
static __always_inline void proc_refused(const struct dac_proc_val *p, __u64 start_ns)
{
	if (p->start_ns != DAC_START_GONE)
		stat_inc(DAC_STAT_PROC_LATE);
	else
		map_fail(DAC_MAP_PROCS, -DAC_EBUSY);
}

/*
 * The procs entry of process (@tgid, @start_ns), created on first use with
 * @cookie, @cgroup_id and @comm. An entry of an earlier process with this
 * tgid -- one whose exit or last completion was not seen -- is written out
 * first, as its own record (DAC_EXIT_F_REUSED), so that nothing of it adds
 * to the new process. A charge for an earlier process than the entry's
 * (its tgid is already reused) gets NULL and *@refused true
 * (proc_refused()); a failed insert gets NULL and *@refused false.
 */
static __always_inline struct dac_proc_val *proc_of(__u32 tgid, __u64 start_ns, __u64 cookie,
						     __u64 cgroup_id, const char *comm,
						     bool *refused)
{
	struct dac_proc_val zero = {}, *p = bpf_map_lookup_elem(&procs, &tgid);

	*refused = false;
	if (p && !proc_same(p, start_ns)) {
		if (p->start_ns < start_ns)	/* never DAC_START_GONE */
			proc_emit(tgid, p, DAC_EXIT_F_REUSED);
		else
			goto refuse;
		p = NULL;
	}
	if (!p) {
		zero.cookie = cookie;
		zero.cgroup_id = cgroup_id;
		zero.start_ns = start_ns;
		__builtin_memcpy(zero.comm, comm, sizeof(zero.comm));
		p = lookup_or_init(&procs, &tgid, &zero, DAC_MAP_PROCS);
		if (!p)
			return NULL;
	}
	/* seeded (start unknown): learnt now */
	if (!p->start_ns && start_ns)
		__sync_val_compare_and_swap(&p->start_ns, 0, start_ns);
	/* again: another CPU may have put another process's entry first */
	if (proc_same(p, start_ns))
		return p;
refuse:
	proc_refused(p, start_ns);
	*refused = true;
	return NULL;
}

/*
 * A scheduler job of process (@tgid, @start_ns), counted as @counted, is
 * done (or dropped): one fewer pending; the last one of an exited process
 * writes its record.
 */
static __always_inline void proc_job_gone(__u32 tgid, __u64 start_ns, __u32 counted)
{
	struct dac_proc_val *p = bpf_map_lookup_elem(&procs, &tgid);
	bool gone;

	if (!p || !proc_same(p, start_ns))
		return;
	p->last_ns = bpf_ktime_get_ns();
	if (counted == DAC_COUNTED_RUN)
		gone = atomic_dec_nonzero(&p->inflight);
	else if (counted == DAC_COUNTED_QUEUED)
		gone = atomic_dec_nonzero(&p->queued);
	else
		return;
	if (gone && __sync_fetch_and_add(&p->exited, 0) && !proc_pending(p))
		proc_emit(tgid, p, 0);
}

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
	if (bpf_map_lookup_elem(&muted, &client_id)) {
		bpf_map_delete_elem(&muted, &client_id);
	} else {
		t = lookup_or_init(&totals, &tk, &tzero, DAC_MAP_TOTALS);
		if (t)
			__sync_fetch_and_add(&t->clients_closed, 1);
		rec = bpf_ringbuf_reserve(&records, DAC_REC_EXIT_MAX_SIZE, 0);
		if (!rec) {
			/* the entries go all the same; seq counts the lost record */
			stat_inc(DAC_STAT_EXIT_DROPS);
			stat_inc(DAC_STAT_EXIT_RECORDS);
		}
	}
	if (rec) {
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
		} else {
			rec->flags |= DAC_EXIT_F_NO_OPEN;
		}
		if (n > DAC_EXIT_MAX_ENGINES)
			rec->flags |= DAC_EXIT_F_TRUNCATED;
		rec->num_engines = ne;
	}
	if (c)
		bpf_map_delete_elem(&clients, &client_id);
	if (!rec)
		return;
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

/* __data_loc: low 16 bits offset from the start of the record. */
#define DATA_LOC(ctx, loc)	((const void *)(ctx) + ((loc) & 0xffff))

/*
 * How much further into the record than the structs here say every field
 * of the drmacct and of the gpu_scheduler events sits: 0, or more where the
 * kernel's common header is larger (PREEMPT_RT kernels add two counters to
 * it). The loader derives both from the format files, refusing a layout
 * that is not one uniform shift, and sets them before load, so the
 * verifier sees constants and keeps one of the two reads below.
 */
const volatile __u32 tp_shift_drmacct = 0;
const volatile __u32 tp_shift_sched = 0;

/*
 * TP_READ - a fixed field of a plain tracepoint record at its shift. The
 * verifier only lets a context access through the context pointer itself
 * with a constant offset, so a shifted field is read through
 * bpf_probe_read_kernel(), from a copy of the pointer the compiler cannot
 * share with the direct read, and the direct read is a volatile load kept
 * in its branch (else the compiler computes &ctx->field once, or loads
 * from a pointer chosen between the two branches, and the verifier refuses
 * the dereference of a moved context pointer).
 */
#define TP_READ(ctx, field, shift) ({						\
	typeof((ctx)->field) __v = 0;						\
	if (!(shift)) {								\
		__v = *(volatile typeof(__v) *)&(ctx)->field;			\
		asm volatile("" : "+r"(__v));					\
	} else {								\
		const void *__p = (ctx);					\
										\
		asm volatile("" : "+r"(__p));					\
		if (bpf_probe_read_kernel(&__v, sizeof(__v), __p + (shift) +	\
					  __builtin_offsetof(typeof(*(ctx)), field))) \
			stat_inc(DAC_STAT_READ_FAULT);				\
	}									\
	__v;									\
})
#define TPD(ctx, field)	TP_READ(ctx, field, tp_shift_drmacct)
#define TPS(ctx, field)	TP_READ(ctx, field, tp_shift_sched)

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

/* ---- gpu_scheduler: common handlers --------------------------------------- */

/*
 * Who queued the job: the process (tgid, its group leader's name), its
 * cgroup and cookie. Jobs queued by kernel threads (kworkers, on behalf of
 * whoever) are all the kernel's: tgid DAC_TGID_KERNEL, "[kernel]".
 */
static __always_inline void fill_submitter(struct inflight_val *v)
{
	/*
	 * Direct loads through the task's BTF pointer (the verifier makes
	 * them fault-safe), not bpf_probe_read_kernel() calls: once per job.
	 */
	struct task_struct *task = bpf_get_current_task_btf(), *leader;
	__u64 *comm = (__u64 *)v->comm;

	v->queued_ns = bpf_ktime_get_ns();
	if (task->flags & DAC_PF_KTHREAD) {
		v->tgid = DAC_TGID_KERNEL;
		__builtin_memcpy(v->comm, "[kernel]", 9);
		return;
	}
	leader = task->group_leader;
	v->tgid = bpf_get_current_pid_tgid() >> 32;
	v->start_ns = leader->start_time;
	v->cookie = cookie_of_current();
	v->cgroup_id = bpf_get_current_cgroup_id();
	/* comm is 16 bytes, NUL-padded by the kernel: two loads */
	comm[0] = *(__u64 *)&leader->comm[0];
	comm[1] = *(__u64 *)&leader->comm[8];
}

/* Job @v is followed from now: its process has one more in flight. */
static __always_inline void proc_job_queued(struct inflight_val *v)
{
	bool refused;
	struct dac_proc_val *p = proc_of(v->tgid, v->start_ns, v->cookie, v->cgroup_id, v->comm,
					 &refused);

	if (!p)
		return;
	p->last_ns = v->queued_ns;
	__sync_fetch_and_add(&p->queued, 1);
	v->counted = DAC_COUNTED_QUEUED;
}

/*
 * A job that ran on ring @ring_id is dropped without its completion (its
 * entry overwritten): the ring no longer counts it active.
 */
static __always_inline void ring_forget(__u32 ring_id)
{
	struct dac_ring_val *r = bpf_map_lookup_elem(&rings, &ring_id);

	if (r)
		atomic_dec_nonzero(&r->active);
}

/*
 * A job the programs did not follow (no in-flight entry) completes now on
 * the scheduler at @ident (0: the event does not say): its ring has been
 * busy with it up to now, so no later completion there is charged its
 * time. Not charged to anyone (the jobs are counted lost or orphans).
 */
static __always_inline void ring_unfollowed_done(__u64 ident)
{
	struct dac_ring_val *r;
	__u32 *idp;

	if (!ident)
		return;
	idp = bpf_map_lookup_elem(&ring_ids, &ident);
	if (!idp)
		return;
	r = bpf_map_lookup_elem(&rings, idp);
	if (r)
		atomic_max(&r->charged_ns, bpf_ktime_get_ns());
}

/*
 * A new job is followed under @key of @map (inflight, inflight617), where
 * an earlier job's entry may still be: on 6.1 the key is the address of
 * the finished fence, which a job a kill dropped (no event) freed and a
 * new one now has. That entry goes, and its count with it, so that its
 * process does not wait for it for ever.
 */
static __always_inline void release_stale(void *map, const void *key)
{
	struct inflight_val *v = bpf_map_lookup_elem(map, key), old;

	if (!v)
		return;
	__builtin_memcpy(&old, v, sizeof(old));
	if (bpf_map_delete_elem(map, key))
		return;		/* another program took it */
	stat_inc(DAC_STAT_STALE_RELEASED);
	/* It ran: its ring must not stay busy for it (it would charge idle gaps). */
	if (old.run_ns && old.ring_id)
		ring_forget(old.ring_id);
	proc_job_gone(old.tgid, old.start_ns, old.counted);
}

/*
 * A new job could not be followed (@err: its in-flight entry refused,
 * counted by map_put()): counted lost, and nothing of it stays -- its
 * process does not wait for it, and its ring never counts it active.
 */
static __always_inline void sched_lost(struct inflight_val *v)
{
	stat_inc(DAC_STAT_SCHED_LOST);
	proc_job_gone(v->tgid, v->start_ns, v->counted);
}

/*
 * Follow the job @v under @key of @map (enum dac_map_id @id): one insert
 * when the key is free (the common case); an entry already there is stale
 * (release_stale()) and the job replaces it.
 */
static __always_inline long follow_job(void *map, __u32 id, const void *key,
				       struct inflight_val *v)
{
	long err;

	proc_job_queued(v);
	err = bpf_map_update_elem(map, key, v, BPF_NOEXIST);
	if (err == -DAC_EEXIST) {
		release_stale(map, key);
		err = bpf_map_update_elem(map, key, v, BPF_ANY);
	}
	if (err) {
		map_fail(id, err);
		sched_lost(v);
	}
	return err;
}

static __always_inline void on_sched_queue(__u64 fence)
{
	struct inflight_val v = {};

	fill_submitter(&v);
	follow_job(&inflight, DAC_MAP_INFLIGHT, &fence, &v);
}

/*
 * Ring id of the ring identified by @ident (a kernel address, or a hash of
 * its name), named @name (already read, on the BPF stack).
 */
static __always_inline __u32 ring_id_of(__u64 ident, const char *name)
{
	struct dac_ring_val r = {};
	__u32 *idp, id;

	idp = bpf_map_lookup_elem(&ring_ids, &ident);
	if (idp)
		return *idp;
	__builtin_memcpy(r.name, name, sizeof(r.name));
	/*
	 * A new ring (once per scheduler): a fresh id, never reused, so two
	 * rings never share one. Without room (counted) the job runs on ring
	 * 0, none: charged nowhere, counted lost at its completion.
	 */
	id = __sync_fetch_and_add(&next_ring_id, 1) + 1;
	if (map_put(&rings, DAC_MAP_RINGS, &id, &r, BPF_NOEXIST))
		return 0;
	if (bpf_map_update_elem(&ring_ids, &ident, &id, BPF_NOEXIST)) {
		/* Another CPU named the same ring first: use its id. */
		bpf_map_delete_elem(&rings, &id);
		idp = bpf_map_lookup_elem(&ring_ids, &ident);
		return idp ? *idp : 0;
	}
	return id;
}

/*
 * A job of process (@tgid, @start_ns) counted as queued runs at @now: it
 * moves to the process's in-flight count. Its process's entry has gone
 * only when the sweep wrote it (nothing moved for long): then nothing.
 */
static __always_inline void proc_job_ran(__u32 tgid, __u64 start_ns, __u64 now)
{
	struct dac_proc_val *p = bpf_map_lookup_elem(&procs, &tgid);

	if (!p || !proc_same(p, start_ns))
		return;
	p->last_ns = now;
	__sync_fetch_and_add(&p->inflight, 1);
	atomic_dec_nonzero(&p->queued);
}

/* Job @v runs on ring @ring_id now: an idle ring's charging starts here. */
static __always_inline void ring_run(struct inflight_val *v, __u32 ring_id)
{
	struct dac_ring_val *r;
	__u64 now = bpf_ktime_get_ns();

	if (v->run_ns)
		return;		/* run again (resubmitted after a reset): one job */
	v->run_ns = now;
	v->ring_id = ring_id;
	r = bpf_map_lookup_elem(&rings, &ring_id);
	if (r)
		dac_ring_run(r, now);
	/* From queued to in flight: this one will get its completion. */
	if (__sync_val_compare_and_swap(&v->counted, DAC_COUNTED_QUEUED, DAC_COUNTED_RUN) ==
	    DAC_COUNTED_QUEUED)
		proc_job_ran(v->tgid, v->start_ns, now);
}

static __always_inline void on_sched_run(__u64 fence, __u32 ring_id)
{
	struct inflight_val *v = bpf_map_lookup_elem(&inflight, &fence);

	if (!v)
		return;		/* queued before attach: counted at done */
	ring_run(v, ring_id);
}

/* Ring @ring_id among process @p's rings; false when its slots are full. */
static __always_inline bool proc_add_ring(struct dac_proc_val *p, __u32 ring_id)
{
	for (int i = 0; i < DAC_PROC_MAX_RINGS; i++) {
		__u32 cur = *(volatile __u32 *)&p->ring_ids[i];

		if (cur == ring_id)
			return true;
		if (!cur && (__sync_val_compare_and_swap(&p->ring_ids[i], 0, ring_id) == 0 ||
			     p->ring_ids[i] == ring_id))
			return true;
	}
	return false;
}

/*
 * Charge the finished job @v by dac_ring_done() to its ring, its
 * (process, ring) entry and its process. Returns the charge.
 */
static __always_inline __u64 charge_job(const struct inflight_val *v)
{
	struct dac_sched_val szero = {}, *s;
	struct dac_proc_val *p;
	struct dac_sched_key k = {};
	struct dac_ring_val *r;
	__u64 busy = 0;
	bool refused;

	k.tgid = v->tgid;
	k.ring_id = v->ring_id;
	k.start_ns = v->start_ns;
	r = bpf_map_lookup_elem(&rings, &k.ring_id);
	if (r)
		busy = dac_ring_done(r, bpf_ktime_get_ns());
	/*
	 * The process first: a stale entry of an earlier process with this
	 * tgid takes its sched_usage entries with it before this job adds.
	 */
	p = proc_of(k.tgid, v->start_ns, v->cookie, v->cgroup_id, v->comm, &refused);
	if (refused)
		return busy;	/* counted (proc_late, busy); its process is written */
	szero.cookie = v->cookie;
	szero.cgroup_id = v->cgroup_id;
	__builtin_memcpy(szero.comm, v->comm, sizeof(szero.comm));
	s = lookup_or_init(&sched_usage, &k, &szero, DAC_MAP_SCHED_USAGE);
	if (s) {
		__sync_fetch_and_add(&s->busy_ns, busy);
		__sync_fetch_and_add(&s->jobs, 1);
	}
	if (!p)
		return busy;	/* procs full or busy (counted) */
	__sync_fetch_and_add(&p->busy_ns, busy);
	__sync_fetch_and_add(&p->jobs, 1);
	if (!proc_add_ring(p, k.ring_id))
		__sync_fetch_and_or(&p->flags, DAC_EXIT_F_TRUNCATED);
	return busy;
}

/*
 * Take the job completing now out of @map (inflight or inflight617) into
 * @job. The two programs of a completion both come here: the one that
 * deletes the entry has the job; @nested is the second program, which
 * finds one only when the kernel skipped the first (see nesting[]).
 * Returns false when there is nothing to charge: a job queued before
 * attach or whose in-flight entry was refused (counted once, by the first
 * program, as an orphan; its ring @sched, a kernel address or 0 when the
 * event does not name it, moves past it), or one that ran on no ring
 * (counted lost).
 */
static __always_inline bool sched_take(void *map, const void *key, struct inflight_val *job,
				       bool nested, __u64 sched)
{
	struct inflight_val *v = bpf_map_lookup_elem(map, key);

	if (!v) {
		if (!nested) {
			stat_inc(DAC_STAT_SCHED_ORPHAN_DONE);
			ring_unfollowed_done(sched);
		}
		return false;
	}
	__builtin_memcpy(job, v, sizeof(*job));
	if (bpf_map_delete_elem(map, key))
		return false;	/* the other program of this event has it */
	if (nested)
		stat_inc(DAC_STAT_NESTED_SCHED_DONE);
	if (!job->run_ns || !job->ring_id) {
		stat_inc(job->run_ns ? DAC_STAT_SCHED_LOST : DAC_STAT_SCHED_ORPHAN_DONE);
		proc_job_gone(job->tgid, job->start_ns, job->counted);
		return false;
	}
	return true;
}

static __always_inline void on_sched_done(__u64 fence, bool nested, __u64 sched)
{
	struct inflight_val job;

	if (!sched_take(&inflight, &fence, &job, nested, sched))
		return;
	charge_job(&job);
	proc_job_gone(job.tgid, job.start_ns, job.counted);
}

/* ---- gpu_scheduler: tp_btf (types from gpu_sched's module BTF) ---------- */

/* Only the fields used; CO-RE relocates them against gpu_sched's BTF. */
struct dma_fence___dac {
	__u64 seqno;
} __attribute__((preserve_access_index));

struct drm_gpu_scheduler___dac {
	const char *name;
} __attribute__((preserve_access_index));

struct drm_sched_fence___dac {
	struct dma_fence finished;
	struct drm_gpu_scheduler___dac *sched;
} __attribute__((preserve_access_index));

/*
 * The scheduler of fence @sf (a ring_ids key), for unfollowed completions.
 * tp_btf programs load through their typed arguments directly (the
 * verifier makes the loads fault-safe): no bpf_probe_read_kernel() call.
 */
#define FENCE_SCHED(sf)	((__u64)(sf)->sched)

struct drm_sched_job___dac {
	struct drm_gpu_scheduler___dac *sched;
	struct drm_sched_fence___dac *s_fence;
} __attribute__((preserve_access_index));

static __always_inline __u64 job_fence(struct drm_sched_job___dac *job)
{
	struct drm_sched_fence___dac *sf = job->s_fence;

	return (__u64)__builtin_preserve_access_index(&sf->finished);
}

SEC("tp_btf/drm_sched_job")
int BPF_PROG(sb_queue, struct drm_sched_job___dac *job, void *entity)
{
	if (!job)
		return 0;
	on_sched_queue(job_fence(job));
	return 0;
}

SEC("tp_btf/drm_run_job")
int BPF_PROG(sb_run, struct drm_sched_job___dac *job, void *entity)
{
	struct drm_gpu_scheduler___dac *sched;
	char name[DAC_NAME_LEN] = {};
	__u32 *idp, id;
	__u64 ident;

	if (!job)
		return 0;
	sched = job->sched;
	ident = (__u64)sched;
	idp = bpf_map_lookup_elem(&ring_ids, &ident);
	if (idp) {
		id = *idp;
	} else {
		if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(sched, name)) < 0)
			stat_inc(DAC_STAT_READ_FAULT);
		id = ring_id_of(ident, name);
	}
	on_sched_run(job_fence(job), id);
	return 0;
}

SEC("tp_btf/drm_sched_process_job")
int BPF_PROG(sb_done, struct drm_sched_fence___dac *sf)
{
	if (!sf)
		return 0;
	on_sched_done((__u64)__builtin_preserve_access_index(&sf->finished), false,
		      FENCE_SCHED(sf));
	return 0;
}

/* The completions sb_done missed (see nesting[]). */
SEC("tp_btf/drm_sched_process_job")
int BPF_PROG(sb_done_n, struct drm_sched_fence___dac *sf)
{
	if (!sf)
		return 0;
	on_sched_done((__u64)__builtin_preserve_access_index(&sf->finished), true, 0);
	return 0;
}

/* ---- gpu_scheduler: plain tracepoints (6.1 record layouts) -------------- */

struct tp_sched_job {
	struct trace_entry ent;
	__u64 entity;		/* struct drm_sched_entity *; drm_run_job: read */
	__u64 fence;		/* &job->s_fence->finished */
	__u32 name_loc;		/* __data_loc char[]: sched->name */
	__u32 pad;
	__u64 id;
	__u32 job_count;
	__s32 hw_job_count;
};

struct tp_sched_process_job {
	struct trace_entry ent;
	__u64 fence;		/* &s_fence->finished */
};

SEC("tracepoint/gpu_scheduler/drm_sched_job")
int st_queue(struct tp_sched_job *ctx)
{
	on_sched_queue(TPS(ctx, fence));
	return 0;
}

/* Only the fields used; CO-RE relocates them against gpu_sched's BTF. */
struct drm_sched_rq___dac {
	struct drm_gpu_scheduler___dac *sched;
} __attribute__((preserve_access_index));

struct drm_sched_entity___dac {
	struct drm_sched_rq___dac *rq;
} __attribute__((preserve_access_index));

/*
 * The scheduler that runs @entity's jobs (entity->rq->sched), 0 when the
 * kernel's BTF does not describe these types (the relocations resolve to
 * "absent" and the verifier drops the reads) or a read faults.
 */
static __always_inline __u64 entity_sched(__u64 entity)
{
	struct drm_sched_entity___dac *ent = (void *)entity;
	struct drm_sched_rq___dac *rq = NULL;

	if (!entity || !bpf_core_field_exists(ent->rq) || !bpf_core_field_exists(rq->sched))
		return 0;
	return (__u64)BPF_CORE_READ(ent, rq, sched);
}

SEC("tracepoint/gpu_scheduler/drm_run_job")
int st_run(struct tp_sched_job *ctx)
{
	char name[DAC_NAME_LEN] = {};
	__u64 hash = 0xcbf29ce484222325ull;	/* FNV-1a */
	__u64 sched;
	__u32 *idp;

	/*
	 * The record has no scheduler pointer, but the job's entity: its run
	 * queue's scheduler is the ring, as in the tp_btf variant (one ring
	 * per scheduler however many share a name: xe, panthor, pvr have one
	 * per user queue). Only where that cannot be read is a ring known by
	 * its name, and equally named rings merge.
	 */
	sched = entity_sched(TPS(ctx, entity));
	if (sched) {
		idp = bpf_map_lookup_elem(&ring_ids, &sched);
		if (idp) {
			on_sched_run(TPS(ctx, fence), *idp);
			return 0;
		}
	}
	if (bpf_probe_read_kernel_str(name, sizeof(name), DATA_LOC(ctx, TPS(ctx, name_loc))) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	if (sched) {
		on_sched_run(TPS(ctx, fence), ring_id_of(sched, name));
		return 0;
	}
	for (int i = 0; i < DAC_NAME_LEN; i++) {
		if (!name[i])
			break;
		hash = (hash ^ (__u8)name[i]) * 0x100000001b3ull;
	}
	on_sched_run(TPS(ctx, fence), ring_id_of(hash, name));
	return 0;
}

SEC("tracepoint/gpu_scheduler/drm_sched_process_job")
int st_done(struct tp_sched_process_job *ctx)
{
	on_sched_done(TPS(ctx, fence), false, 0);
	return 0;
}

/* ---- gpu_scheduler 6.17+: renamed events, joined by fence context:seqno */

/*
 * 6.17 renamed the events (drm_sched_job_queue, drm_sched_job_run,
 * drm_sched_job_done) and dropped the pointers from their records: jobs are
 * named by the finished fence's context and seqno, the queue and run events
 * carry the DRM client id. The charge rule is the one above; each job is
 * also charged to its client in sched_clients.
 */
/*
 * A DRM client id of a real client: amdgpu gives its own kernel jobs
 * (page table updates, clears, moves, ...) synthetic ids counting down
 * from U64_MAX (AMDGPU_KERNEL_JOB_ID_*), which name no client; they would
 * be phantom clients in sched_clients. Their jobs stay charged to their
 * process and ring, under client id 0 (unknown).
 */
#define DAC_SYNTHETIC_CLIENT_MIN	(~0ull - 0xffff)

static __always_inline __u64 real_client(__u64 client_id)
{
	return client_id >= DAC_SYNTHETIC_CLIENT_MIN ? 0 : client_id;
}

/*
 * The last job queued by this task whose in-flight entry was refused (the
 * map full): the queue twins (queue617_unseen()) find no entry for it
 * either, and must not take it for one the first program missed -- that
 * would try, refuse and count it lost again. Written on that rare path
 * only; per task, since on 7.x a task may migrate between the programs of
 * one event.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dac_fence_key);
} queue_refused SEC(".maps");

static __always_inline void on617_queue(__u64 ctx, __u64 seqno, __u64 client_id)
{
	struct dac_fence_key k = { .context = ctx, .seqno = seqno }, *r;
	struct inflight_val v = {};

	fill_submitter(&v);
	v.client_id = real_client(client_id);
	if (!follow_job(&inflight617, DAC_MAP_INFLIGHT617, &k, &v))
		return;
	r = bpf_task_storage_get(&queue_refused, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (r)
		*r = k;
}

static __always_inline void on617_run(__u64 ctx, __u64 seqno, __u64 client_id, __u32 ring_id)
{
	struct dac_fence_key k = { .context = ctx, .seqno = seqno };
	struct inflight_val *v = bpf_map_lookup_elem(&inflight617, &k);

	if (!v)
		return;		/* queued before attach: counted at done */
	ring_run(v, ring_id);
	if (!v->client_id)
		v->client_id = real_client(client_id);
}

static __always_inline void on617_done(__u64 ctx, __u64 seqno, bool nested, __u64 sched)
{
	struct dac_fence_key k = { .context = ctx, .seqno = seqno };
	struct dac_sched_client_key ck = {};
	struct dac_sched_client_val czero = {}, *c;
	struct inflight_val job;
	__u64 busy;

	if (!sched_take(&inflight617, &k, &job, nested, sched))
		return;
	busy = charge_job(&job);
	if (job.client_id) {
		ck.client_id = job.client_id;
		ck.ring_id = job.ring_id;
		czero.tgid = job.tgid;
		c = lookup_or_init(&sched_clients, &ck, &czero, DAC_MAP_SCHED_CLIENTS);
		if (c) {
			__sync_fetch_and_add(&c->busy_ns, busy);
			__sync_fetch_and_add(&c->jobs, 1);
		}
	}
	proc_job_gone(job.tgid, job.start_ns, job.counted);
}

/* tp_btf: the 6.17 types, relocated by CO-RE against gpu_sched's BTF. */
struct dma_fence___dac617 {
	__u64 context;
	__u64 seqno;
} __attribute__((preserve_access_index));

struct drm_sched_fence___dac617 {
	struct dma_fence___dac617 finished;
	struct drm_gpu_scheduler___dac *sched;
	__u64 drm_client_id;
} __attribute__((preserve_access_index));

struct drm_sched_job___dac617 {
	struct drm_gpu_scheduler___dac *sched;
	struct drm_sched_fence___dac617 *s_fence;
} __attribute__((preserve_access_index));

static __always_inline __u64 fence617_client(struct drm_sched_fence___dac617 *sf)
{
	if (bpf_core_field_exists(sf->drm_client_id))
		return sf->drm_client_id;
	return 0;
}

SEC("tp_btf/drm_sched_job_queue")
int BPF_PROG(sb17_queue, struct drm_sched_job___dac617 *job, void *entity)
{
	struct drm_sched_fence___dac617 *sf;

	if (!job)
		return 0;
	sf = job->s_fence;
	on617_queue(sf->finished.context, sf->finished.seqno, fence617_client(sf));
	return 0;
}

/* The ring id of @job's scheduler (a new one on first sight). */
static __always_inline __u32 btf617_ring(struct drm_sched_job___dac617 *job)
{
	struct drm_gpu_scheduler___dac *sched = job->sched;
	char name[DAC_NAME_LEN] = {};
	__u64 ident = (__u64)sched;
	__u32 *idp = bpf_map_lookup_elem(&ring_ids, &ident);

	if (idp)
		return *idp;
	if (bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(sched, name)) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	return ring_id_of(ident, name);
}

SEC("tp_btf/drm_sched_job_run")
int BPF_PROG(sb17_run, struct drm_sched_job___dac617 *job, void *entity)
{
	struct drm_sched_fence___dac617 *sf;

	if (!job)
		return 0;
	sf = job->s_fence;
	on617_run(sf->finished.context, sf->finished.seqno, fence617_client(sf),
		  btf617_ring(job));
	return 0;
}

SEC("tp_btf/drm_sched_job_done")
int BPF_PROG(sb17_done, struct drm_sched_fence___dac617 *sf)
{
	if (!sf)
		return 0;
	on617_done(sf->finished.context, sf->finished.seqno, false, FENCE_SCHED(sf));
	return 0;
}

/*
 * The events sb17_queue, sb17_run and sb17_done missed.
 * Completions nest in interrupts (see nesting[]); and on 7.x all three run
 * preemptible (tracepoints under SRCU, tp_btf programs with only migration
 * disabled): a submitter or scheduler worker preempted inside one of them
 * holds it on its CPU, and the next task there that fires the event is
 * skipped. Under load that is common (test_bpf_nested on 7.3, 20 s: 1,747
 * queue and 5,426 run events skipped), and one twin was often held by a
 * preempted task as well (8 and 192 of them lost). So each event has three
 * twins, attached after it; one of them is skipped only when four tasks on
 * the CPU are preempted inside the four programs at once. The job's
 * in-flight entry makes it exactly once: queue creates it, run stamps its
 * run time, done deletes it, so a twin acts only on a job no program before
 * it has seen -- queue: no entry; run: an entry without a run time; done:
 * the delete that succeeds.
 */
static __always_inline void queue617_unseen(struct drm_sched_job___dac617 *job)
{
	struct drm_sched_fence___dac617 *sf;
	struct dac_fence_key k, *r;

	if (!job)
		return;
	sf = job->s_fence;
	k.context = sf->finished.context;
	k.seqno = sf->finished.seqno;
	if (bpf_map_lookup_elem(&inflight617, &k))
		return;
	r = bpf_task_storage_get(&queue_refused, bpf_get_current_task_btf(), NULL, 0);
	if (r && r->context == k.context && r->seqno == k.seqno)
		return;	/* seen and refused: counted once */
	stat_inc(DAC_STAT_NESTED_SCHED_QUEUE);
	on617_queue(k.context, k.seqno, fence617_client(sf));
}

static __always_inline void run617_unseen(struct drm_sched_job___dac617 *job)
{
	struct drm_sched_fence___dac617 *sf;
	struct dac_fence_key k;
	struct inflight_val *v;

	if (!job)
		return;
	sf = job->s_fence;
	k.context = sf->finished.context;
	k.seqno = sf->finished.seqno;
	v = bpf_map_lookup_elem(&inflight617, &k);
	if (!v || v->run_ns)
		return;	/* queued before attach, or seen */
	stat_inc(DAC_STAT_NESTED_SCHED_RUN);
	on617_run(k.context, k.seqno, fence617_client(sf), btf617_ring(job));
}

static __always_inline void done617_unseen(struct drm_sched_fence___dac617 *sf)
{
	if (sf)
		on617_done(sf->finished.context, sf->finished.seqno, true, 0);
}

#define BTF617_TWINS(n)									\
SEC("tp_btf/drm_sched_job_queue")							\
int BPF_PROG(sb17_queue_n##n, struct drm_sched_job___dac617 *job, void *entity)	\
{											\
	queue617_unseen(job);								\
	return 0;									\
}											\
SEC("tp_btf/drm_sched_job_run")								\
int BPF_PROG(sb17_run_n##n, struct drm_sched_job___dac617 *job, void *entity)	\
{											\
	run617_unseen(job);								\
	return 0;									\
}											\
SEC("tp_btf/drm_sched_job_done")							\
int BPF_PROG(sb17_done_n##n, struct drm_sched_fence___dac617 *sf)		\
{											\
	done617_unseen(sf);								\
	return 0;									\
}

BTF617_TWINS(1)
BTF617_TWINS(2)
BTF617_TWINS(3)

/* Plain tracepoints: the 6.17 record layouts (checked by the loader). */
struct tp617_sched_job {
	struct trace_entry ent;
	__u32 name_loc;		/* __data_loc char[]: ring name */
	__u32 job_count;
	__s32 hw_job_count;
	__u32 dev_loc;		/* __data_loc char[]: dev_name() */
	__u64 fence_context;
	__u64 fence_seqno;
	__u64 client_id;
};

struct tp617_job_done {
	struct trace_entry ent;
	__u64 fence_context;
	__u64 fence_seqno;
};

SEC("tracepoint/gpu_scheduler/drm_sched_job_queue")
int st17_queue(struct tp617_sched_job *ctx)
{
	on617_queue(TPS(ctx, fence_context), TPS(ctx, fence_seqno), TPS(ctx, client_id));
	return 0;
}

/*
 * The plain 6.17 records name no scheduler, but drm_sched_job_run fires in
 * the scheduler's own run-job work item (drm_sched_run_job_work()), so the
 * workqueue worker running it knows which: current's kthread data is its
 * struct worker, whose current_work is &sched->work_run_job. Only the
 * fields used, relocated by CO-RE against vmlinux's BTF (task, kthread,
 * worker) and gpu_sched's (the scheduler).
 */
#define DAC_PF_WQ_WORKER	0x00000020	/* task_struct.flags: a workqueue worker */

struct kthread___dac {
	void *data;		/* a workqueue worker's struct worker */
} __attribute__((preserve_access_index));

struct worker___dac {
	void *current_work;	/* struct work_struct * being run */
} __attribute__((preserve_access_index));

struct work_struct___dac {
	long data;
} __attribute__((preserve_access_index));

struct drm_gpu_scheduler___dac617 {
	const char *name;
	struct work_struct___dac work_run_job;
} __attribute__((preserve_access_index));

/*
 * The scheduler whose run-job work this CPU is running, if the name at its
 * name pointer is @name (the record's ring name): 0 otherwise -- not in a
 * workqueue worker, another work item, a read that faults, or a kernel
 * whose BTF does not describe the way there (the relocations resolve to
 * "absent" and the verifier drops the reads).
 */
static __always_inline __u64 running_sched(const char *name)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct drm_gpu_scheduler___dac617 *sched = NULL;
	struct kthread___dac *kt = NULL;
	struct worker___dac *w = NULL;
	char sname[DAC_NAME_LEN] = {};
	__u64 work;

	if (!bpf_core_field_exists(task->worker_private) || !bpf_core_field_exists(kt->data) ||
	    !bpf_core_field_exists(w->current_work) ||
	    !bpf_core_field_exists(sched->work_run_job) || !bpf_core_field_exists(sched->name))
		return 0;
	if (!(BPF_CORE_READ(task, flags) & DAC_PF_WQ_WORKER))
		return 0;
	kt = BPF_CORE_READ(task, worker_private);
	w = BPF_CORE_READ(kt, data);
	work = (__u64)BPF_CORE_READ(w, current_work);
	if (!work)
		return 0;
	sched = (void *)(work - bpf_core_field_offset(sched->work_run_job));
	if (bpf_probe_read_kernel_str(sname, sizeof(sname), BPF_CORE_READ(sched, name)) < 0)
		return 0;
	for (int i = 0; i < DAC_NAME_LEN; i++) {
		if (sname[i] != name[i])
			return 0;
		if (!name[i])
			break;
	}
	return (__u64)sched;
}

SEC("tracepoint/gpu_scheduler/drm_sched_job_run")
int st17_run(struct tp617_sched_job *ctx)
{
	char name[DAC_NAME_LEN] = {}, dev[DAC_NAME_LEN] = {};
	__u64 hash = 0xcbf29ce484222325ull;	/* FNV-1a over dev, '/', name */
	__u64 fctx = TPS(ctx, fence_context), seqno = TPS(ctx, fence_seqno);
	__u64 client = TPS(ctx, client_id), sched;
	__u32 *idp;

	if (bpf_probe_read_kernel_str(name, sizeof(name), DATA_LOC(ctx, TPS(ctx, name_loc))) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	/*
	 * A ring is its scheduler, as with tp_btf: one ring per scheduler
	 * however many share a name (xe, panthor, pvr have one per user
	 * queue). Only where that cannot be found is a ring (dev, name), the
	 * record's two names, and equally named rings of one device merge.
	 */
	sched = running_sched(name);
	if (sched) {
		idp = bpf_map_lookup_elem(&ring_ids, &sched);
		on617_run(fctx, seqno, client, idp ? *idp : ring_id_of(sched, name));
		return 0;
	}
	if (bpf_probe_read_kernel_str(dev, sizeof(dev), DATA_LOC(ctx, TPS(ctx, dev_loc))) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	for (int i = 0; i < DAC_NAME_LEN; i++) {
		if (!dev[i])
			break;
		hash = (hash ^ (__u8)dev[i]) * 0x100000001b3ull;
	}
	hash = (hash ^ (__u8)'/') * 0x100000001b3ull;
	for (int i = 0; i < DAC_NAME_LEN; i++) {
		if (!name[i])
			break;
		hash = (hash ^ (__u8)name[i]) * 0x100000001b3ull;
	}
	on617_run(fctx, seqno, client, ring_id_of(hash, name));
	return 0;
}

SEC("tracepoint/gpu_scheduler/drm_sched_job_done")
int st17_done(struct tp617_job_done *ctx)
{
	on617_done(TPS(ctx, fence_context), TPS(ctx, fence_seqno), false, 0);
	return 0;
}

/* ---- the sweep: records of processes whose jobs will never complete --- */

/*
 * An exited process whose jobs are still pending waits for them: each job
 * that ran gets its completion. A job a kill dropped from its queue gets
 * no event at all (drm_sched_entity_kill_jobs_work() signals it with
 * -ESRCH and no scheduler tracepoint), nor does one whose completion the
 * programs missed. The sweep, a bpf_timer started by an exit that had to
 * wait, writes the record of every exited process with nothing moving
 * (no queue, run or completion of its jobs) for DAC_SWEEP_IDLE_NS with
 * none in flight (DAC_SWEEP_LOST_NS with some), flagged
 * DAC_EXIT_F_INCOMPLETE with the jobs still pending and what was charged;
 * it fires again while any exited process still waits. It then drops the
 * in-flight entries of processes whose record has been written: jobs
 * that never ran and never will. The timer callback runs in softirq
 * context; proc_emit()'s compare-and-swap makes it one record however the
 * sweep and a late completion meet.
 */
#define DAC_SWEEP_PERIOD_NS	1000000000ull	/* 1 s */
#define DAC_SWEEP_IDLE_NS	2000000000ull	/* 2 s: a close's flush runs the queue */
/*
 * A job that ran gets its completion (a hung one at its timeout, drm_sched's
 * job timeout is seconds): a process with one in flight is written only
 * when nothing moved for a minute -- a completion the programs missed.
 */
#define DAC_SWEEP_LOST_NS	60000000000ull
#define DAC_CLOCK_MONOTONIC	1
#define DAC_ENOENT		2

/*
 * PREEMPT_RT kernels refuse bpf_timer ("bpf_timer cannot be used for
 * PREEMPT_RT"): there the loader clears use_timer (/sys/kernel/realtime),
 * the verifier never visits the timer calls, and the sweep runs at the
 * next fork or exit once a period has passed (sweep_poke()) instead.
 */
const volatile bool use_timer = true;
__u32 sweep_waiting;		/* no timer: an exited process waits */
__u64 sweep_next_ns;		/* no timer: no sweep before this */

struct sweep_val {
	struct bpf_timer timer;
	__u32 armed;		/* 1: started and not yet fired */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sweep_val);
} sweeper SEC(".maps");

/*
 * A pass writes at most DAC_SWEEP_BATCH records; when more are due, the
 * next pass comes DAC_SWEEP_AGAIN_NS later rather than a period.
 */
#define DAC_SWEEP_BATCH		4
#define DAC_SWEEP_AGAIN_NS	1000000ull	/* 1 ms */
#define DAC_SWEEP_WAITING	1	/* sweep_pass(): an exited process waits */
#define DAC_SWEEP_MORE		2	/* sweep_pass(): more were due than written */

struct sweep_ctx {
	__u64 now;
	__u32 waiting;			/* 0, DAC_SWEEP_WAITING or DAC_SWEEP_MORE */
	__u32 n;			/* due[] used */
	__u32 due[DAC_SWEEP_BATCH];	/* tgids of the processes to write now */
};

/* Is process entry @p exited, its record not written yet? */
static __always_inline bool sweep_exited(struct dac_proc_val *p)
{
	return __sync_fetch_and_add(&p->exited, 0) && p->start_ns != DAC_START_GONE;
}

/* Has nothing moved in exited process entry @p for long enough at @now? */
static __always_inline bool sweep_due(struct dac_proc_val *p, __u64 now)
{
	__u64 last = p->last_ns;

	last += __sync_fetch_and_add(&p->inflight, 0) ? DAC_SWEEP_LOST_NS : DAC_SWEEP_IDLE_NS;
	return now >= last;
}

/*
 * Process entry @p (key @tgid): noted to be written now if it exited and
 * nothing moves. sweep_pass() writes it after the walk: a proc_emit()
 * (which may walk a map itself) inside this callback cost the 7.3 verifier
 * 264,023 verified instructions, one at the top level 9,367.
 */
static long sweep_proc(void *map, __u32 *tgid, struct dac_proc_val *p, struct sweep_ctx *c)
{
	__u32 n = c->n;

	if (!sweep_exited(p))
		return 0;
	if (!sweep_due(p, c->now)) {
		c->waiting |= DAC_SWEEP_WAITING;
		return 0;
	}
	if (n >= DAC_SWEEP_BATCH) {
		c->waiting |= DAC_SWEEP_MORE;
		return 1;	/* the rest next pass */
	}
	c->due[n] = *tgid;
	c->n = n + 1;
	return 0;
}

/*
 * In-flight entry @v: dropped when its process's record has been written
 * (no entry of that process any more) and it never ran -- a job a kill
 * dropped. A job of a live process, or one that ran, stays.
 */
static long sweep_job(void *map, const void *key, struct inflight_val *v, struct sweep_ctx *c)
{
	__u32 tgid = v->tgid;
	struct dac_proc_val *p;

	if (v->run_ns || v->tgid == DAC_TGID_KERNEL || c->now < v->queued_ns + DAC_SWEEP_IDLE_NS)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p && proc_same(p, v->start_ns))
		return 0;
	if (!bpf_map_delete_elem(map, key))
		stat_inc(DAC_STAT_STALE_RELEASED);
	return 0;
}

/*
 * Write the record of process @tgid if it is still due at @now (a late
 * completion or a new process with the tgid may have come since the walk).
 * A global function: the verifier checks it once, on its own, not once
 * per call with each caller's state (four calls of a static one cost the
 * 6.18 verifier 114,245 instructions in all).
 */
__noinline int sweep_write(__u32 tgid, __u64 now)
{
	struct dac_proc_val *p = bpf_map_lookup_elem(&procs, &tgid);

	if (!p || !sweep_exited(p) || !sweep_due(p, now))
		return 0;
	stat_inc(DAC_STAT_SWEEP_WRITTEN);
	proc_emit(tgid, p, 0);
	return 1;
}

/*
 * One pass: the records due, then the in-flight entries. Returns 0,
 * DAC_SWEEP_WAITING or DAC_SWEEP_MORE (both bits: more).
 */
static __noinline __u32 sweep_pass(void)
{
	struct sweep_ctx c = { .now = bpf_ktime_get_ns() };

	bpf_for_each_map_elem(&procs, sweep_proc, &c, 0);
	for (int i = 0; i < DAC_SWEEP_BATCH; i++) {
		if (i >= c.n)
			break;
		sweep_write(c.due[i], c.now);
	}
	bpf_for_each_map_elem(&inflight, sweep_job, &c, 0);
	bpf_for_each_map_elem(&inflight617, sweep_job, &c, 0);
	return c.waiting;
}

static int sweep_fire(void *map, __u32 *key, struct sweep_val *sv)
{
	__u32 w;

	__sync_fetch_and_and(&sv->armed, 0);
	w = sweep_pass();
	if (w && !__sync_val_compare_and_swap(&sv->armed, 0, 1))
		bpf_timer_start(&sv->timer, (w & DAC_SWEEP_MORE) ? DAC_SWEEP_AGAIN_NS :
				DAC_SWEEP_PERIOD_NS, 0);
	return 0;
}

/* Without a timer: a fork or an exit runs the sweep when one is due. */
static __always_inline void sweep_poke(void)
{
	__u64 next, now;
	__u32 w;

	if (use_timer || !*(volatile __u32 *)&sweep_waiting)
		return;
	next = *(volatile __u64 *)&sweep_next_ns;
	now = bpf_ktime_get_ns();
	if (now < next ||
	    __sync_val_compare_and_swap(&sweep_next_ns, next, now + DAC_SWEEP_PERIOD_NS) != next)
		return;
	__sync_fetch_and_and(&sweep_waiting, 0);
	w = sweep_pass();
	if (w)
		__sync_fetch_and_or(&sweep_waiting, 1);
	if (w & DAC_SWEEP_MORE)
		sweep_next_ns = now;	/* the next fork or exit goes on */
}

/*
 * The timer is set up once, by sweep_init(), which the loader runs right
 * after the load (BPF_PROG_TEST_RUN): the verifier checks the callback
 * (sweep_fire(), the whole sweep with its three map walks) only in the
 * program that names it. Were the exit programs to call
 * bpf_timer_set_callback() themselves, each of the four would carry that
 * verification too, and 7.x verifiers walk callbacks until their states
 * converge: pb_exit cost 273,780 verified instructions on 7.3 that way
 * (27,741 on 6.12). A syscall program: one the loader runs itself, on
 * every kernel the loader takes (6.1 has them), and no event of its own.
 * Returns 0 or the helper's error; a no-op without a timer (PREEMPT_RT).
 */
SEC("syscall")
int sweep_init(void *ctx)
{
	__u32 zero = 0;
	struct sweep_val *sv;
	long err;

	if (!use_timer)
		return 0;
	sv = bpf_map_lookup_elem(&sweeper, &zero);
	if (!sv)
		return -DAC_ENOENT;
	err = bpf_timer_init(&sv->timer, &sweeper, DAC_CLOCK_MONOTONIC);
	if (err)
		return err;
	return bpf_timer_set_callback(&sv->timer, sweep_fire);
}

/*
 * An exited process waits for its jobs: the sweep runs within a period.
 * bpf_timer_start() refuses a timer sweep_init() has not set up (-EINVAL):
 * then nothing is armed, and the sweep does not run.
 */
static __always_inline void sweep_arm(void)
{
	__u32 zero = 0;
	struct sweep_val *sv;

	if (!use_timer) {
		if (!__sync_fetch_and_or(&sweep_waiting, 1))
			sweep_next_ns = bpf_ktime_get_ns() + DAC_SWEEP_PERIOD_NS;
		return;
	}
	sv = bpf_map_lookup_elem(&sweeper, &zero);
	if (!sv || __sync_val_compare_and_swap(&sv->armed, 0, 1))
		return;		/* already on its way */
	if (bpf_timer_start(&sv->timer, DAC_SWEEP_PERIOD_NS, 0))
		__sync_fetch_and_and(&sv->armed, 0);
}

/* ---- process tracking ---------------------------------------------------- */

/*
 * A new process inherits its parent's `drmacct stat` cookie. Returns
 * whether there was one to copy and the child did not have it yet.
 */
static __always_inline bool fork_inherit(struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u64 *cookie, *have, c;

	if (ptgid == ctgid)
		return false;	/* a new thread, not a new process */
	cookie = bpf_map_lookup_elem(&tracked, &ptgid);
	if (!cookie)
		return false;
	c = *cookie;
	have = bpf_map_lookup_elem(&tracked, &ctgid);
	if (have && *have == c)
		return false;
	bpf_map_update_elem(&tracked, &ctgid, &c, BPF_ANY);
	return true;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(pb_fork, struct task_struct *parent, struct task_struct *child)
{
	if (parent && child)
		fork_inherit(parent, child);
	sweep_poke();
	return 0;
}

/*
 * Has exiting process @task work left for pb_exit: a tracked entry, or
 * a procs entry not yet marked exited (or an earlier process's, never
 * written)? What pb_exit leaves behind once it ran, so its _nested
 * twin tells from it whether the first program saw this exit.
 */
static __always_inline bool exit_pending(struct task_struct *task, __u32 tgid)
{
	struct dac_proc_val *p;
	__u64 start;

	if (bpf_map_lookup_elem(&tracked, &tgid))
		return true;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return false;
	start = proc_start(task);
	if (proc_same(p, start))
		return !__sync_fetch_and_add(&p->exited, 0);
	return p->start_ns < start;	/* never DAC_START_GONE */
}

/*
 * A process is gone (its last thread exits; its files, DRM clients among
 * them, close right after): it is marked exited, and its PROC_EXIT record
 * is written now, or by the completion of its last scheduler job still in
 * flight (proc_job_gone()). Every exiting process loses its tracked entry;
 * processes that never had a GPU job cost one failed lookup.
 */
static __always_inline void on_exit(struct task_struct *task, __u32 tgid)
{
	struct dac_proc_val *p;
	__u64 start;

	bpf_map_delete_elem(&tracked, &tgid);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return;
	start = proc_start(task);
	if (!proc_same(p, start)) {
		/* an earlier process's entry, never written: it goes now */
		if (p->start_ns < start)
			proc_emit(tgid, p, DAC_EXIT_F_REUSED);
		return;
	}
	p->last_ns = bpf_ktime_get_ns();	/* the exit is its last event so far */
	if (__sync_val_compare_and_swap(&p->exited, 0, 1))
		return;
	if (!proc_pending(p))
		proc_emit(tgid, p, 0);
	else
		sweep_arm();
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(pb_exit, struct task_struct *task)
{
	sweep_poke();
	if (!task || BPF_CORE_READ(task, signal, live.counter))
		return 0;	/* other threads live on */
	on_exit(task, BPF_CORE_READ(task, tgid));
	return 0;
}

/*
 * The forks and exits pb_fork and pb_exit missed: these events come
 * from task context, where 7.x kernels run tp_btf programs preemptible (see
 * sb17_queue_n1). What the first program leaves behind tells
 * whether it saw the event: the child's cookie, the exit's entries.
 */
static __always_inline void exit_unseen(struct task_struct *task)
{
	__u32 tgid;

	if (!task || BPF_CORE_READ(task, signal, live.counter))
		return;
	tgid = BPF_CORE_READ(task, tgid);
	if (!exit_pending(task, tgid))
		return;
	stat_inc(DAC_STAT_NESTED_EXIT);
	on_exit(task, tgid);
}

/*
 * Three twins each, as for the 6.17 scheduler events: exits come in
 * bursts (a job's processes end together), pb_exit walks a process's
 * rings and is long, and a twin held by a preempted exiting task loses
 * the next exit on its CPU as well (test_bpf_scheds on 7.3: pb_exit
 * and pb_exit_n1 both skipped once, one PROC_EXIT record lost).
 * What the first program to act leaves behind stops the others.
 */
#define TRACK_TWINS(n)									\
SEC("tp_btf/sched_process_fork")							\
int BPF_PROG(pb_fork_n##n, struct task_struct *parent, struct task_struct *child)	\
{											\
	if (parent && child && fork_inherit(parent, child))				\
		stat_inc(DAC_STAT_NESTED_FORK);						\
	return 0;									\
}											\
SEC("tp_btf/sched_process_exit")							\
int BPF_PROG(pb_exit_n##n, struct task_struct *task)					\
{											\
	exit_unseen(task);								\
	return 0;									\
}

TRACK_TWINS(1)
TRACK_TWINS(2)
TRACK_TWINS(3)
