// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * drmacct.h - what the units of the drmacct BPF object share: the maps,
 * the globals, the helpers and the plain-tracepoint record reader.
 *
 * The object is linked from three units, one per event source:
 * helper.bpf.c (drmacct's own tracepoints), sched.bpf.c (the kernel's
 * gpu_scheduler tracepoints, both event sets) and proc.bpf.c (process forks
 * and exits, and the sweep). helper.bpf.c defines what is shared
 * (DAC_DEFINE_SHARED); the others declare it extern, and bpftool gen object
 * joins them by name.
 *
 * Source 1, drmacct's tracepoints (system "drmacct"): a client table, busy
 * time, cycles and job counts per (client, engine), memory per (client,
 * region), all-time totals per (device, engine), and one CLIENT_EXIT record
 * per closed client with its final totals (like taskstats' exit data).
 *
 * Source 2, the kernel's gpu_scheduler tracepoints: busy time per (process,
 * scheduler ring, cgroup) for any drm_sched driver. A job is followed from
 * queue (in the submitter's context) through run to done, and charged
 * done - max(run, previous completion on the ring), so jobs pipelined into
 * the hardware queue are not counted twice. Kernels from 6.17 renamed the
 * events (drm_sched_job -> drm_sched_job_queue, drm_run_job ->
 * drm_sched_job_run, drm_sched_process_job -> drm_sched_job_done) with the
 * same arguments: the tp_btf programs (sb_*) are one set that the loader
 * attaches to either, joining jobs by the finished fence's (context,
 * seqno). The plain tracepoint records differ: st_* read the 6.1 layout
 * (jobs named by the finished fence's address), st17_* the 6.17 one
 * (context, seqno, and the DRM client id, charged per client too).
 *
 * Every program exists twice: tp_btf (typed arguments, needs module BTF) and
 * plain tracepoint (the trace record's layout). The loader enables one of
 * each pair, and one plain scheduler set, with bpf_program__set_autoload()
 * before loading; programs left out are neither relocated nor loaded.
 *
 * No kernel pointer reaches userspace: pointers are only in the scheduler
 * maps rings, inflight and inflight617, which are created BPF_F_WRONLY
 * (the bpf() syscall cannot read them) and are never pinned.
 */
#ifndef DRMACCT_BPF_COMMON_H
#define DRMACCT_BPF_COMMON_H

#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "drmacct_bpf.h"

/* The shared maps and globals: defined in helper.bpf.c, extern elsewhere. */
#ifdef DAC_DEFINE_SHARED
#define DAC_EXTERN
#else
#define DAC_EXTERN extern
#endif
#ifndef __maybe_unused
#define __maybe_unused __attribute__((unused))
#endif


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
#define DAC_ENOENT	2
#define DAC_EBUSY	16
#define DAC_EEXIST	17
#define DAC_E2BIG	7
#define DAC_PF_KTHREAD	0x00200000	/* task_struct.flags: a kernel thread */

/* ---- maps ---------------------------------------------------------------- */

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct dac_client_val);
} clients SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dac_usage_key);
	__type(value, struct dac_usage_val);
} usage SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dac_mem_key);
	__type(value, struct dac_mem_val);
} mem SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct dac_total_key);
	__type(value, struct dac_total_val);
} totals SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} records SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DAC_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Engine/region names of each device, from drmacct_device_name. */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct dac_name_key);
	__type(value, char[DAC_NAME_LEN]);
} names SEC(".maps");

/* Processes `drmacct stat` follows: tgid -> cookie; children inherit. */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

/* Usage and memory of tracked processes' clients, by cookie. */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct dac_cookie_key);
	__type(value, struct dac_cookie_val);
} cookie_usage SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct dac_cookie_key);
	__type(value, struct dac_cookie_val);
} cookie_mem SEC(".maps");

/*
 * The scheduler maps below are plain hashes, preallocated (no allocation
 * on the event path): an LRU would evict accounting state -- an in-flight
 * job that had run, a ring a job is still charged to -- and charge wrong
 * from then on. Full, an insert is refused and counted (map_fail()), and
 * the job it was for is counted lost (DAC_STAT_SCHED_LOST); only rings
 * make room first, by reclaiming an idle ring no in-flight entry names
 * (ring_reclaim()). The loader sizes them (dac_bpf_load_opts.sched_entries).
 */
/*
 * The one ring map: ring identity (its scheduler's address, or a hash of
 * its name) -> ring state with its id (struct dac_ring_val). Full, an idle
 * ring no followed job names is reclaimed (ring_reclaim()).
 */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_WRONLY);
	__type(key, __u64);
	__type(value, struct dac_ring_val);
} rings SEC(".maps");

/* A ring's name, as an argument of the global functions (a sized type). */
struct dac_ring_name {
	char s[DAC_NAME_LEN];
};

/*
 * A new ring's identity and name, for ring_make(): a global function takes
 * scalars or pointers to memory, and a tp_btf program's identity is the
 * scheduler's pointer, which the verifier does not let pass as a scalar.
 */
struct dac_ring_new {
	__u64 ident;
	char name[DAC_NAME_LEN];
};

struct inflight_val {
	__u64 queued_ns;
	__u64 run_ns;
	__u64 cookie;
	__u64 client_id;	/* 6.17 set: DRM client id, 0 = unknown */
	__u64 cgroup_id;	/* the submitter's cgroup v2 id */
	__u64 start_ns;		/* the submitter's process start (procs) */
	/*
	 * Its ring's identity (rings key), from its run: it holds a
	 * reference to that ring. 0 with a ring_id: it ran while its ring
	 * was being reclaimed (ring_run()) and holds none.
	 */
	__u64 ring_key;
	__u32 tgid;
	__u32 ring_id;
	__u32 counted;		/* enum dac_counted: in which count of its process */
	__u32 state;		/* enum dac_job_state */
	struct dac_fence_key key;	/* the map key (inflight: {fence, 0}) */
	char comm[DAC_COMM_LEN];
};

/*
 * Who has an in-flight entry, and whether its job ran. A job is FOLLOWED
 * from its queue; the run program holds it RUNNING while it writes the
 * run time, the ring and its reference (ring_run()), and leaves it RAN.
 * A completion or the release of a stale entry claims it, FOLLOWED or
 * RAN, by moving it to TAKEN (compare-and-swap: one of them wins) before
 * they copy and delete it; the delete is only the clean-up. The sweep
 * claims only FOLLOWED: a job that never ran. So a job that runs between
 * the sweep's look at it and its claim is not taken half run (its ring
 * held for ever) nor after (its completion lost), and a job the sweep
 * took first is not run into a deleted entry. (A completion never meets
 * RUNNING: the scheduler traces the run before it hands the job to the
 * hardware.) A delete that fails other than -ENOENT (the bucket was busy:
 * this CPU interrupted a program holding it) leaves the entry LEFT,
 * charged already, and counts under the map's busy or nomem; the sweep or
 * the next job under that key removes it. The key is kept in the value:
 * preallocated elements are reused at once, so an entry found under a key
 * may be another job's by the time it is claimed (job_hold()).
 */
enum dac_job_state {
	DAC_JOB_FOLLOWED,
	DAC_JOB_TAKEN,
	DAC_JOB_LEFT,
	DAC_JOB_RUNNING,
	DAC_JOB_RAN,
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

/* plain 6.1 tracepoints: finished-fence address -> job being followed */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_WRONLY);
	__type(key, __u64);
	__type(value, struct inflight_val);
} inflight SEC(".maps");

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dac_sched_key);
	__type(value, struct dac_sched_val);
} sched_usage SEC(".maps");

/* cgroup v2 id -> scheduler busy time of the jobs queued from it */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct dac_cgroup_val);
} cgroup_sched SEC(".maps");

/*
 * tp_btf (every kernel) and plain 6.17+ tracepoints: {fence context,
 * seqno} of the finished fence -> job being followed. The value names its
 * ring by a kernel address (ring_key): BPF_F_WRONLY, not pinned.
 */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_WRONLY);
	__type(key, struct dac_fence_key);
	__type(value, struct inflight_val);
} inflight617 SEC(".maps");

/* 6.17+ set: busy time per (DRM client id, ring); empty on older kernels. */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dac_sched_client_key);
	__type(value, struct dac_sched_client_val);
} sched_clients SEC(".maps");

/* Processes with scheduler jobs: sums and rings, for their PROC_EXIT record. */
DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct dac_proc_val);
} procs SEC(".maps");

/* Layout stamp the loader writes and readers check (struct dac_meta). */
DAC_EXTERN struct {
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

DAC_EXTERN struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DAC_NEST__COUNT);
	__type(key, __u32);
	__type(value, __u32);
} nesting SEC(".maps");

DAC_EXTERN __u32 next_ring_id;

/*
 * For the selftests only (test_bpf_exits): while not 0, every delete of a
 * claimed in-flight entry is taken as refused with -EBUSY, as when the
 * bucket is locked by a program this one interrupted -- a case no test
 * can make happen at will. The loader never sets it.
 */
DAC_EXTERN __u32 refuse_job_deletes;

/*
 * Set when a delete of an in-flight entry was refused and the entry left
 * LEFT: the next fork or exit arms the sweep (sweep_left()), which deletes
 * it again -- a completion program cannot arm it itself (the plain
 * tracepoint programs may not use a map with a timer).
 */
DAC_EXTERN __u32 jobs_left;

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
 * The error a map update or delete returned: its low 32 bits. On kernels
 * before 6.4 the verifier turns bpf_map_update_elem() and
 * bpf_map_delete_elem() of a hash into direct calls of the map's own
 * functions, which return int there: the upper half of the register is
 * zero, not the sign, and -EEXIST reads as 4294967279. A 64-bit compare
 * with -EEXIST then fails, and an insert that lost a race to another CPU
 * (the entry is there) looked like a failed one: the event was dropped
 * and counted under nomem. Every error is kept as an int.
 */
static __always_inline int map_err(long ret)
{
	return (int)ret;
}

/*
 * An insert into map @id failed with @err (map_err()): full (-E2BIG), busy
 * (-EBUSY, recursion) or anything else (-ENOMEM: no element could be
 * allocated).
 */
static __always_inline void map_fail(__u32 id, int err)
{
	__u32 base = DAC_STAT_NOMEM;

	if (err == -DAC_E2BIG)
		base = DAC_STAT_FULL;
	else if (err == -DAC_EBUSY)
		base = DAC_STAT_BUSY;
	stat_inc(base + id);
}

/* bpf_map_update_elem() counted by map_fail() when it fails. */
static __always_inline int map_put(void *map, __u32 id, const void *key, const void *val,
				   __u64 flags)
{
	int err = map_err(bpf_map_update_elem(map, key, val, flags));

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
	int err;

	if (v)
		return v;
	err = map_err(bpf_map_update_elem(map, key, zero, BPF_NOEXIST));
	if (err && err != -DAC_EEXIST) {
		map_fail(id, err);
		return NULL;
	}
	return bpf_map_lookup_elem(map, key);
}

/* Is in-flight entry @v the one of job @id (enum dac_job_state)? */
static __always_inline bool same_job(const struct inflight_val *v, const struct dac_fence_key *id)
{
	return v->key.context == id->context && v->key.seqno == id->seqno;
}

/*
 * Move in-flight entry @v, found under the key of job @id, from @from to
 * @to (enum dac_job_state): true for the one caller that does it while the
 * entry is still that job's. An entry reused for another job between the
 * lookup and the swap is given back.
 */
static __always_inline bool job_hold(struct inflight_val *v, const struct dac_fence_key *id,
				     __u32 from, __u32 to)
{
	if (!same_job(v, id))
		return false;
	if (__sync_val_compare_and_swap(&v->state, from, to) != from)
		return false;	/* another program has it, or it is not @from */
	if (same_job(v, id))
		return true;
	__sync_val_compare_and_swap(&v->state, to, from);
	return false;
}

/* Claim the entry @v of job @id, ran or not, for its deletion (TAKEN). */
static __always_inline bool job_claim(struct inflight_val *v, const struct dac_fence_key *id)
{
	return job_hold(v, id, DAC_JOB_RAN, DAC_JOB_TAKEN) ||
	       job_hold(v, id, DAC_JOB_FOLLOWED, DAC_JOB_TAKEN);
}

/*
 * Delete the claimed entry @v under @key of @map (enum dac_map_id @mid).
 * Only -ENOENT means it is gone; any other error is counted and leaves
 * the entry LEFT for the sweep or the next job under @key.
 */
static __always_inline bool job_drop(void *map, __u32 mid, const void *key,
				     struct inflight_val *v)
{
	int err = -DAC_EBUSY;

	if (!refuse_job_deletes)
		err = map_err(bpf_map_delete_elem(map, key));
	if (!err || err == -DAC_ENOENT)
		return true;
	map_fail(mid, err);
	v->state = DAC_JOB_LEFT;
	*(volatile __u32 *)&jobs_left = 1;
	return false;
}

/*
 * Take in-flight entry @v of job @id, under @key of @map (enum dac_map_id
 * @mid), into @job: claim it, copy it, delete it. False when another
 * program has it (job_claim()).
 */
static __always_inline bool job_take(void *map, __u32 mid, const void *key,
				     const struct dac_fence_key *id, struct inflight_val *v,
				     struct inflight_val *job)
{
	if (!job_claim(v, id))
		return false;
	__builtin_memcpy(job, v, sizeof(*job));
	job_drop(map, mid, key, v);
	return true;
}

/*
 * A LEFT entry @v (its job charged) under @key of @map: deleted again
 * (counted when it goes). True when @v was LEFT.
 */
static __always_inline bool job_left(void *map, __u32 mid, const void *key,
				     struct inflight_val *v)
{
	if (__sync_val_compare_and_swap(&v->state, DAC_JOB_LEFT, DAC_JOB_TAKEN) != DAC_JOB_LEFT)
		return false;
	if (job_drop(map, mid, key, v))
		stat_inc(DAC_STAT_LEFT_REMOVED);
	return true;
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
static __maybe_unused long drop_proc_ring(void *map, struct dac_sched_key *key, void *val,
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
			__builtin_memcpy(e->name, s->ring, sizeof(e->name));
		}
		used = i + 1;
		if (!keep)
			bpf_map_delete_elem(&sched_usage, k);
	}
	return used;
}

static __noinline __maybe_unused void proc_emit(__u32 tgid, struct dac_proc_val *p, __u32 flags)
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
 * proc_emit() for the entry of process (@tgid, @start), if it is still
 * there: a global function, verified once on its own. Inline (or static)
 * the record's ring walk was verified again in every program and state
 * that may write a record -- the queue programs among them, through a
 * reused tgid (proc_of()) and a released stale job -- which made the
 * queue programs the most expensive to load (about 188,500 verified
 * instructions each on 7.3). Defined in helper.bpf.c.
 */
int proc_write(__u32 tgid, __u64 start, __u32 flags);

#ifdef DAC_DEFINE_SHARED
__noinline int proc_write(__u32 tgid, __u64 start, __u32 flags)
{
	struct dac_proc_val *p = bpf_map_lookup_elem(&procs, &tgid);

	if (p && p->start_ns == start)
		proc_emit(tgid, p, flags);
	return 0;
}
#endif

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
			proc_write(tgid, p->start_ns, DAC_EXIT_F_REUSED);
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
		proc_write(tgid, p->start_ns, 0);
}

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
#ifdef DAC_DEFINE_SHARED
const volatile __u32 tp_shift_drmacct = 0;
const volatile __u32 tp_shift_sched = 0;
#else
extern const volatile __u32 tp_shift_drmacct;
extern const volatile __u32 tp_shift_sched;
#endif

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

#endif /* DRMACCT_BPF_COMMON_H */
