// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sched.bpf.c - the kernel's gpu_scheduler tracepoints: busy time per process,
 * ring and cgroup, and per DRM client id on 6.17+. One tp_btf set for every
 * kernel; plain tracepoint programs for the 6.1 and the 6.17 record layouts.
 */
#include "drmacct.h"

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

/* ---- rings: the one ring map ------------------------------------------ */

/*
 * A reference to ring @r, just looked up under @ident, for a job that runs
 * on it. False when the ring is being reclaimed (refs at DAC_RING_DEAD) or
 * its element has been deleted and reused for another ring in between
 * (preallocated elements are reused at once): the key is checked again
 * after the reference is taken, so a reclaim either sees it or the job
 * sees the reclaim. A compare-and-swap, never an add to a claimed ring: an
 * add there and the take-back after it could straddle the delete and the
 * element's reuse by a new ring, and the take-back would then drop the
 * new ring's maker's reference.
 */
static __always_inline bool ring_hold(struct dac_ring_val *r, __u64 ident)
{
	for (int i = 0; i < DAC_CAS_TRIES; i++) {
		__u64 old = *(volatile __u64 *)&r->refs;

		if (old >= DAC_RING_DEAD)
			return false;
		if (__sync_val_compare_and_swap(&r->refs, old, old + 1) != old)
			continue;
		if (*(volatile __u64 *)&r->ident == ident)
			return true;
		/* another ring's now, alive (held): the reference goes back */
		atomic_dec_nonzero(&r->refs);
		return false;
	}
	DAC_CAS_GIVEUP();
	return false;
}

/* The followed job that held ring @ident is gone (done or dropped). */
static __always_inline void ring_drop(struct dac_ring_val *r, __u64 ident)
{
	if (r && *(volatile __u64 *)&r->ident == ident)
		atomic_dec_nonzero(&r->refs);
}

/*
 * What a reclaim (ring_reclaim(), clients_reclaim()) did: found nothing to
 * take (trying again is a walk for nothing), took an entry, or lost its
 * pick to another CPU (or a busy bucket): a new walk may find another.
 */
enum dac_reclaim {
	DAC_RECLAIM_NONE,
	DAC_RECLAIM_DONE,
	DAC_RECLAIM_RACE,
};

struct reclaim_ctx {
	__u64 key;		/* the idle ring unused longest, 0 none */
	__u64 last_ns;
};

/* bpf_for_each_map_elem() over rings: the idle ring unused longest. */
static long reclaim_pick(void *map, __u64 *key, struct dac_ring_val *r, struct reclaim_ctx *c)
{
	if (*(volatile __u64 *)&r->refs)
		return 0;	/* a followed job names it, or being reclaimed */
	if (!c->key || r->last_ns < c->last_ns) {
		c->key = *key;
		c->last_ns = r->last_ns;
	}
	return 0;
}

/*
 * Selftests only (dac_bpf_load_opts.test_stall_reclaim): a reclaim claims
 * its ring and stops there, never deleting it -- a reclaimer held between
 * its claim and its delete for good, which no test can otherwise arrange.
 * false in every other load: the verifier drops the branch.
 */
const volatile bool test_stall_reclaim = false;

/*
 * The rings map is full: the ring that no followed job names (refs 0) and
 * that has been unused longest goes, so that a new scheduler gets one.
 * Per-queue schedulers (xe, panthor, pvr, simgpu's per_client queues)
 * come and go, and their rings would otherwise fill the map for good. The
 * reclaim claims the ring by swapping refs from 0 to DAC_RING_DEAD: a job
 * that takes a reference meanwhile (ring_hold()) sees the mark and does
 * without, and one that took it first makes the swap fail. Nothing live
 * loses anything: no in-flight entry names the ring; its sched_usage and
 * sched_clients entries carry its id and name; a scheduler still alive
 * gets a new ring (a new id) at its next job, charged from there. A walk
 * over the map, once per new ring while it is full. Returns what it did
 * (enum dac_reclaim).
 */
__noinline int ring_reclaim(void)
{
	struct reclaim_ctx c = {};
	struct dac_ring_val *r;
	__u64 key;

	bpf_for_each_map_elem(&rings, reclaim_pick, &c, 0);
	key = c.key;
	if (!key)
		return DAC_RECLAIM_NONE;
	r = bpf_map_lookup_elem(&rings, &key);
	if (!r || r->ident != key || __sync_val_compare_and_swap(&r->refs, 0, DAC_RING_DEAD))
		return DAC_RECLAIM_RACE;
	if (test_stall_reclaim)
		return DAC_RECLAIM_RACE;
	if (bpf_map_delete_elem(&rings, &key)) {
		/* not deleted (-EBUSY): alive again, keeping references taken meanwhile */
		__sync_fetch_and_sub(&r->refs, DAC_RING_DEAD);
		return DAC_RECLAIM_RACE;
	}
	stat_inc(DAC_STAT_RINGS_RECLAIMED);
	return DAC_RECLAIM_DONE;
}

/*
 * A new ring for identity @ident named @name: a fresh id, never reused, so
 * two rings never share one; charged from now. It is made holding the
 * reference of the job that makes it (refs 1): made with none, another
 * CPU's reclaim could take it, as the only idle ring of a full map, before
 * that job held it, and the job would run on no ring (6.1, 1 run in 3 of
 * test_bpf_scheds' 2,000 schedulers). Full, an idle ring is reclaimed to
 * make room; without one (counted) the job runs on no ring: charged
 * nowhere, counted lost at its completion. Returns 1 (made, the caller
 * holds it), 0 (another CPU made it first: the caller takes a reference
 * of its own) or the refusal. ring_make() and ring_reclaim() are global
 * functions, which the verifier checks once on their own, not once per
 * caller and state: inline in every run program (four twins and two
 * plain ones), the reclaim's map walk cost each run program 28,000-46,000
 * verified instructions on 7.3.
 */
__noinline int ring_make(const struct dac_ring_new *nr)
{
	struct dac_ring_val r = {};
	__u64 ident;
	long err;

	if (!nr)
		return -DAC_ENOENT;
	ident = nr->ident;
	r.ident = ident;
	r.refs = 1;
	r.charged_ns = r.last_ns = bpf_ktime_get_ns();
	r.id = __sync_fetch_and_add(&next_ring_id, 1) + 1;
	__builtin_memcpy(r.name, nr->name, sizeof(r.name));
	err = bpf_map_update_elem(&rings, &ident, &r, BPF_NOEXIST);
	/*
	 * Full: -E2BIG from 6.12; 6.1's preallocated hash says something
	 * else (counted as nomem there), so any refusal but a busy bucket or
	 * a ring another CPU made first tries a reclaim. New rings on two
	 * CPUs at once pick the same ring to reclaim, or one takes the
	 * element the other freed: the loser picks again, a few times.
	 */
	for (int i = 0; i < DAC_RECLAIM_TRIES && err && err != -DAC_EEXIST && err != -DAC_EBUSY;
	     i++) {
		int rc = ring_reclaim();

		if (rc == DAC_RECLAIM_NONE)
			break;
		if (rc == DAC_RECLAIM_DONE)
			err = bpf_map_update_elem(&rings, &ident, &r, BPF_NOEXIST);
	}
	if (!err)
		stat_inc(DAC_STAT_RINGS_NEW);
	else if (err != -DAC_EEXIST)	/* else another CPU named it first: use its ring */
		map_fail(DAC_MAP_RINGS, err);
	if (!err)
		return 1;
	return err == -DAC_EEXIST ? 0 : err;
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

	if (!ident)
		return;
	r = bpf_map_lookup_elem(&rings, &ident);
	if (r)
		atomic_max(&r->charged_ns, bpf_ktime_get_ns());
}

/*
 * A new job is followed under @key of @map (inflight, inflight617), where
 * an earlier job's entry may still be: with the plain 6.1 records the key
 * is the address of the finished fence, which a job a kill dropped (no
 * event) freed and a new one now has. That entry goes, and its count with it, so that its
 * process does not wait for it for ever.
 */
static __always_inline void release_stale(void *map, __u32 mid, const void *key,
					  const struct dac_fence_key *id)
{
	struct inflight_val *v = bpf_map_lookup_elem(map, key);
	__u64 ring_key, start_ns;
	__u32 tgid, counted;

	if (!v || job_left(map, mid, key, v) || !job_claim(v, id))
		return;		/* gone, charged already, or another program's */
	/*
	 * What the release needs, not a copy of the entry (job_take()): the
	 * stack of this path on 6.1 counts the record's frames below it.
	 */
	ring_key = v->ring_key;
	start_ns = v->start_ns;
	tgid = v->tgid;
	counted = v->counted;
	job_drop(map, mid, key, v);
	stat_inc(DAC_STAT_STALE_RELEASED);
	/*
	 * It ran: its reference to its ring goes. (Whether the ring is idle
	 * is the kernel's count, which dropped the job itself.)
	 */
	if (ring_key)
		ring_drop(bpf_map_lookup_elem(&rings, &ring_key), ring_key);
	proc_job_gone(tgid, start_ns, counted);
}

/*
 * release_stale() for the job @k (its in-flight key is its fence,
 * k->context, in inflight; @k itself in inflight617, enum dac_map_id
 * @mid). A global function, verified once on its own: inline, the
 * release and the record its process may then write were verified again
 * in each of the six queue programs.
 */
__noinline int stale_release(const struct dac_fence_key *k, __u32 mid)
{
	struct dac_fence_key id;

	if (!k)
		return 0;
	id = *k;
	if (mid == DAC_MAP_INFLIGHT)
		release_stale(&inflight, DAC_MAP_INFLIGHT, &id.context, &id);
	else
		release_stale(&inflight617, DAC_MAP_INFLIGHT617, &id, &id);
	return 0;
}

/*
 * A new job could not be followed (@err: its in-flight entry refused,
 * counted by map_put()): counted lost, and nothing of it stays -- its
 * process does not wait for it, and it holds no ring.
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
static __always_inline int follow_job(void *map, __u32 id, const void *key,
				      struct inflight_val *v)
{
	int err;

	proc_job_queued(v);
	err = map_err(bpf_map_update_elem(map, key, v, BPF_NOEXIST));
	if (err == -DAC_EEXIST) {
		stale_release(&v->key, id);
		err = map_err(bpf_map_update_elem(map, key, v, BPF_ANY));
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
	v.key.context = fence;
	follow_job(&inflight, DAC_MAP_INFLIGHT, &fence, &v);
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

/*
 * The ring of identity @ident for a job that runs on it, held, or NULL:
 * @r is what the caller's lookup found (NULL: none, a new ring named
 * @name, on the caller's stack, is made) and could not hold. A ring found
 * but not held was being reclaimed (the ring unused longest is the one a
 * new scheduler at a torn-down one's address comes back to), or its
 * element was reused for another ring: it is looked up, or made, again.
 * The reclaimer deletes right after its claim, but "right after" is not
 * bounded: its CPU may be interrupted, or preempted on PREEMPT_RT, or be a
 * vCPU its host does not run for milliseconds (the fresh-clone make test
 * of afe4306 lost a job so on 6.12 under TCG). When the ring is still
 * there being reclaimed after the tries, *@dying is its id: the caller
 * charges the job without a ring (ring_run()). NULL with *@dying 0: the
 * map refused the new ring (counted by ring_make()), or the ring kept
 * going and coming back through the tries; the job runs on no ring,
 * counted lost at its completion.
 */
static __noinline struct dac_ring_val *ring_get(struct dac_ring_val *r, __u64 ident,
						const char *name, __u32 *dying)
{
	struct dac_ring_new nr;
	int made;

	*dying = 0;
	nr.ident = ident;
	if (r) {	/* the caller read no name: it found the ring */
		__builtin_memcpy(nr.name, r->name, sizeof(nr.name));
		/* reused for another ring meanwhile: no name rather than its */
		if (*(volatile __u64 *)&r->ident != ident)
			nr.name[0] = 0;
	} else {
		__builtin_memcpy(nr.name, name, sizeof(nr.name));
	}
	for (int i = 0; i < DAC_RECLAIM_TRIES; i++) {
		if (!r) {
			made = ring_make(&nr);
			if (made < 0)
				return NULL;
			r = bpf_map_lookup_elem(&rings, &ident);
			if (r && made)
				return r;	/* made with this job's reference */
		}
		if (r && ring_hold(r, ident))
			return r;
		if (r) {
			__u32 id = r->id;

			/* still ours after the id was read: not reused meanwhile */
			if (*(volatile __u64 *)&r->ident == ident &&
			    *(volatile __u64 *)&r->refs >= DAC_RING_DEAD)
				*dying = id;
		}
		r = bpf_map_lookup_elem(&rings, &ident);
	}
	return NULL;
}

/*
 * Job @v (in-flight entry of job @id) runs now on the ring of identity
 * @ident: @r, the caller's lookup of it, or NULL when there is none yet,
 * then made, named @name (the caller's stack; used only when @r is NULL,
 * see ring_get()); @idle: the kernel's count says it is the only job on
 * the ring's hardware, so the ring's charging starts here
 * (dac_ring_run()); @client_id: the job's DRM client, kept when the queue
 * did not know it (0: none).
 */
static __always_inline void ring_run(struct inflight_val *v, const struct dac_fence_key *id,
				     struct dac_ring_val *r, __u64 ident, const char *name,
				     bool idle, __u64 client_id)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 dying = 0;

	if (v->run_ns)
		return;		/* run again (resubmitted after a reset): one job */
	/*
	 * Held while it is written (enum dac_job_state). Not held: the sweep
	 * took it as a job that will never run (its process's record written
	 * without it), and it goes uncharged.
	 */
	if (!job_hold(v, id, DAC_JOB_FOLLOWED, DAC_JOB_RUNNING))
		return;
	v->run_ns = now;
	if (client_id && !v->client_id)
		v->client_id = client_id;
	if (!r || !ring_hold(r, ident))
		r = ring_get(r, ident, name, &dying);
	if (!r && dying) {
		/*
		 * Its ring is being reclaimed, and the reclaimer has not
		 * deleted it yet: the job is not lost for that. It holds no
		 * reference (ring_key stays 0) and is charged its own time, done -
		 * run, under the reclaimed ring's id -- the ring it would
		 * have been charged to had that not been picked. (Its
		 * sched_usage entry, if this job makes it, has no ring name:
		 * shown as "ring<id>".)
		 */
		v->ring_id = dying;
		stat_inc(DAC_STAT_RING_RECLAIM_RUNS);
	} else if (r) {
		v->ring_key = ident;
		v->ring_id = r->id;
		/*
		 * The kernel's count says the hardware holds this job alone,
		 * but a job whose count it dropped may not have had its done
		 * program yet (another CPU, or its task preempted): that one
		 * still holds a reference. Idle only when this job's is the
		 * only one; else moving the charge point up to this run
		 * would lose the late job's time before it (its done program
		 * charges it up to its own run, and this job from there).
		 */
		dac_ring_run(r, now, idle && *(volatile __u64 *)&r->refs == 1);
	}
	/* From queued to in flight: this one will get its completion. */
	if (__sync_val_compare_and_swap(&v->counted, DAC_COUNTED_QUEUED, DAC_COUNTED_RUN) ==
	    DAC_COUNTED_QUEUED)
		proc_job_ran(v->tgid, v->start_ns, now);
	/* written: its completion may take it from here, the sweep never */
	__sync_val_compare_and_swap(&v->state, DAC_JOB_RUNNING, DAC_JOB_RAN);
}

static __always_inline void on_sched_run(__u64 fence, struct dac_ring_val *r, __u64 ident,
					 const char *name, bool idle)
{
	struct dac_fence_key id = { .context = fence };
	struct inflight_val *v = bpf_map_lookup_elem(&inflight, &fence);

	if (!v)
		return;		/* queued before attach: counted at done */
	ring_run(v, &id, r, ident, name, idle, 0);
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
 * The sched_usage entry of key @k for job @v, created with its ring's name
 * @ring (empty when the job had no ring: the reader shows "ring<id>").
 */
static __always_inline struct dac_sched_val *sched_entry(const struct dac_sched_key *k,
							 const struct inflight_val *v,
							 const struct dac_ring_name *ring)
{
	struct dac_sched_val szero = {}, *s = bpf_map_lookup_elem(&sched_usage, k);

	if (s)
		return s;
	szero.cookie = v->cookie;
	szero.cgroup_id = v->cgroup_id;
	__builtin_memcpy(szero.comm, v->comm, sizeof(szero.comm));
	__builtin_memcpy(szero.ring, ring->s, sizeof(szero.ring));
	return lookup_or_init(&sched_usage, k, &szero, DAC_MAP_SCHED_USAGE);
}

/*
 * The cgroup job @v was queued from gets its charge @busy: per job, so a
 * process that moved between cgroups splits its time where it ran.
 */
static __always_inline void cgroup_charge(const struct inflight_val *v, __u64 busy)
{
	struct dac_cgroup_val zero = {}, *g;
	__u64 id = v->cgroup_id;

	if (!id)
		return;		/* kernel threads */
	g = lookup_or_init(&cgroup_sched, &id, &zero, DAC_MAP_CGROUP_SCHED);
	if (!g)
		return;		/* full (counted) */
	__sync_fetch_and_add(&g->busy_ns, busy);
	__sync_fetch_and_add(&g->jobs, 1);
}

/*
 * The charge of a job run at @run_ns that completes now, holding a
 * reference to the ring of identity @key (0: none): by dac_ring_done(),
 * the reference dropped, the ring's name into @name; without the ring the
 * job's own time, done - run. A global function, verified once on its
 * own: inline, the ring found or not doubled the verifier's states for
 * everything after it in a completion (7.3: sb_done 184,627 verified
 * instructions).
 */
__noinline __u64 ring_done(__u64 key, __u64 run_ns, struct dac_ring_name *name)
{
	__u64 busy, now = bpf_ktime_get_ns();
	struct dac_ring_val *r;

	r = key ? bpf_map_lookup_elem(&rings, &key) : NULL;
	if (!r || r->ident != key)
		return now > run_ns ? now - run_ns : 0;
	busy = dac_ring_done(r, now);
	atomic_dec_nonzero(&r->refs);
	if (name)
		__builtin_memcpy(name->s, r->name, sizeof(name->s));
	return busy;
}

/*
 * Charge the finished job @v by ring_done() to its ring, its (process,
 * ring) entry, its cgroup and its process; the ring's name into @rn (left
 * empty without a ring). Returns the charge. A job that holds no reference
 * (it ran while its ring was being reclaimed, see ring_run()) is charged
 * its own time, done - run; so would be one whose ring is not there any
 * more (never seen: its reference keeps it).
 */
static __always_inline __u64 charge_job(const struct inflight_val *v, struct dac_ring_name *rn)
{
	struct dac_sched_val *s;
	struct dac_proc_val *p;
	struct dac_sched_key k = {};
	__u64 busy;
	bool refused;

	k.tgid = v->tgid;
	k.ring_id = v->ring_id;
	k.start_ns = v->start_ns;
	busy = ring_done(v->ring_key, v->run_ns, rn);
	cgroup_charge(v, busy);
	/*
	 * The process first: a stale entry of an earlier process with this
	 * tgid takes its sched_usage entries with it before this job adds.
	 */
	p = proc_of(k.tgid, v->start_ns, v->cookie, v->cgroup_id, v->comm, &refused);
	if (refused)
		return busy;	/* counted (proc_late, busy); its process is written */
	s = sched_entry(&k, v, rn);
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
 * Take the job @id completing now out of @map (inflight or inflight617,
 * enum dac_map_id @mid; its key @key) into @job. The two programs of a
 * completion both come here: the one that claims the entry (job_claim())
 * has the job; @nested is the second program, which finds one only when
 * the kernel skipped the first (see nesting[]).
 * Returns false when there is nothing to charge: a job queued before
 * attach or whose in-flight entry was refused (counted once, by the first
 * program, as an orphan; its ring @sched, a kernel address or 0 when the
 * event does not name it, moves past it), or one that ran on no ring
 * (counted lost).
 */
static __always_inline bool sched_take(void *map, __u32 mid, const void *key,
				       const struct dac_fence_key *id, struct inflight_val *job,
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
	if (!job_take(map, mid, key, id, v, job))
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
	struct dac_fence_key id = { .context = fence };
	struct dac_ring_name rn = {};
	struct inflight_val job;

	if (!sched_take(&inflight, DAC_MAP_INFLIGHT, &fence, &id, &job, nested, sched))
		return;
	charge_job(&job, &rn);
	proc_job_gone(job.tgid, job.start_ns, job.counted);
}

/* ---- gpu_scheduler: the scheduler's types and its count ---------------- */

/* Only the fields used; CO-RE relocates them against gpu_sched's BTF. */
struct drm_gpu_scheduler___dac {
	const char *name;
	atomic_t hw_rq_count;		/* up to 6.6: jobs on the hardware */
	atomic_t credit_count;		/* 6.7 on: their credits */
} __attribute__((preserve_access_index));

/*
 * The scheduler of fence @sf (a rings key), for unfollowed completions.
 * tp_btf programs load through their typed arguments directly (the
 * verifier makes the loads fault-safe): no bpf_probe_read_kernel() call.
 */
#define FENCE_SCHED(sf)	((__u64)(sf)->sched)

/*
 * Is the job running now the only one on its scheduler's hardware -- was
 * the ring idle? The kernel's own count says, read in the run event:
 *
 *   6.1 (drm_sched_main()):          atomic_inc(&sched->hw_rq_count), then
 *                                    trace_drm_run_job(), then run_job();
 *   6.7 on (drm_sched_run_job_work()): atomic_add(job->credits,
 *                                    &sched->credit_count), then the run
 *                                    event (drm_run_job, 6.17 on
 *                                    drm_sched_job_run), then run_job();
 *   every version (drm_sched_job_done()): the count drops the job's share
 *                                    first, then the done event
 *                                    (drm_sched_process_job, 6.17 on
 *                                    drm_sched_job_done), then the finished
 *                                    fence signals.
 *
 * So in the run event the count includes the job itself and no job whose
 * done event has begun: it holds this job alone (1, or the job's credits,
 * never 0) exactly when every job run before it on the ring has completed.
 * Jobs the kernel takes off the hardware without an event (drm_sched_stop()
 * before a reset, a scheduler torn down) leave the count as well, so none
 * of them keeps a ring busy. A completion whose count the kernel has
 * dropped but whose done program has not yet run when the next job's run
 * program reads the count (another CPU; a few instructions, unless the
 * done program's task is preempted, as on PREEMPT_RT) still holds its
 * reference to the ring: ring_run() takes the run as idle only when its
 * job holds the only one.
 */
static __always_inline bool sched_idle(struct drm_gpu_scheduler___dac *sched, __u32 credits)
{
	if (bpf_core_field_exists(sched->credit_count))
		return sched->credit_count.counter <= (int)(credits ? credits : 1);
	if (bpf_core_field_exists(sched->hw_rq_count))
		return sched->hw_rq_count.counter <= 1;
	return true;	/* no count: each run starts charging */
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
	struct dac_ring_val *r;
	__u64 sched;
	bool idle;

	/*
	 * The record has no scheduler pointer, but the job's entity: its run
	 * queue's scheduler is the ring, as in the tp_btf variant (one ring
	 * per scheduler however many share a name: xe, panthor, pvr have one
	 * per user queue). Only where that cannot be read is a ring known by
	 * its name, and equally named rings merge.
	 *
	 * Idle: the record's hw_job_count is the kernel's count after this
	 * job's share (see sched_idle()); the record does not say the job's
	 * credits, so a job of more than one credit (6.7 on: nouveau,
	 * panthor, pvr) never finds its ring idle here, and the ring's idle
	 * gap before it is charged to it (tp_btf reads the credits).
	 */
	idle = TPS(ctx, hw_job_count) <= 1;
	sched = entity_sched(TPS(ctx, entity));
	if (sched) {
		r = bpf_map_lookup_elem(&rings, &sched);
		if (!r && bpf_probe_read_kernel_str(name, sizeof(name),
						    DATA_LOC(ctx, TPS(ctx, name_loc))) < 0)
			stat_inc(DAC_STAT_READ_FAULT);
		on_sched_run(TPS(ctx, fence), r, sched, name, idle);
		return 0;
	}
	if (bpf_probe_read_kernel_str(name, sizeof(name), DATA_LOC(ctx, TPS(ctx, name_loc))) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	for (int i = 0; i < DAC_NAME_LEN; i++) {
		if (!name[i])
			break;
		hash = (hash ^ (__u8)name[i]) * 0x100000001b3ull;
	}
	on_sched_run(TPS(ctx, fence), bpf_map_lookup_elem(&rings, &hash), hash, name, idle);
	return 0;
}

SEC("tracepoint/gpu_scheduler/drm_sched_process_job")
int st_done(struct tp_sched_process_job *ctx)
{
	on_sched_done(TPS(ctx, fence), false, 0);
	return 0;
}

/* ---- gpu_scheduler: jobs joined by fence context:seqno ------------------ */

/*
 * The tp_btf programs (every kernel) and the plain 6.17 ones: 6.17 renamed
 * the events (drm_sched_job_queue, drm_sched_job_run, drm_sched_job_done)
 * and dropped the pointers from their records, naming jobs by the finished
 * fence's context and seqno, with the DRM client id at queue and run. The
 * charge rule is the one above; a job with a client id is also charged to
 * its client in sched_clients.
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
	v.key = k;
	if (!follow_job(&inflight617, DAC_MAP_INFLIGHT617, &k, &v))
		return;
	r = bpf_task_storage_get(&queue_refused, bpf_get_current_task_btf(), NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (r)
		*r = k;
}

static __always_inline void on617_run(__u64 ctx, __u64 seqno, __u64 client_id,
				      struct dac_ring_val *r, __u64 ident, const char *name,
				      bool idle)
{
	struct dac_fence_key k = { .context = ctx, .seqno = seqno };
	struct inflight_val *v = bpf_map_lookup_elem(&inflight617, &k);

	if (!v)
		return;		/* queued before attach: counted at done */
	ring_run(v, &k, r, ident, name, idle, real_client(client_id));
}

struct client_pick_ctx {
	struct dac_sched_client_key key;
	__u64 last_ns;
	bool found;
};

/*
 * bpf_for_each_map_elem() over sched_clients: the entry unused longest
 * whose process of its last charge has gone (its procs entry deleted with
 * its PROC_EXIT record, which holds its sums per ring). Not its first
 * process: a client whose file another process holds on (inherited,
 * passed) would lose its sums while it still runs jobs.
 */
static long client_pick(void *map, struct dac_sched_client_key *key,
			struct dac_sched_client_val *c, struct client_pick_ctx *x)
{
	__u32 tgid = c->last_tgid;

	if (bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	if (!x->found || c->last_ns < x->last_ns) {
		x->key = *key;
		x->last_ns = c->last_ns;
		x->found = true;
	}
	return 0;
}

/*
 * sched_clients is full: the entry of an exited process unused longest
 * goes, so that a new client gets one. Without it the map kept one entry
 * per (client, ring) for the collection's life and refused every new one
 * once full (test_bpf_scheds on 7.3: 1,976 refusals of 2,000). What goes
 * is only the per-client split of an exited process's time: its process
 * sums went out in its PROC_EXIT record (or, with procs full, were never
 * kept). A walk over the map per new entry while it is full, a few when
 * another CPU takes the pick first, none more once a walk finds nothing
 * (as ring_reclaim()). Returns what it did (enum dac_reclaim).
 */
__noinline int clients_reclaim(void)
{
	struct client_pick_ctx x = {};

	bpf_for_each_map_elem(&sched_clients, client_pick, &x, 0);
	if (!x.found)
		return DAC_RECLAIM_NONE;
	if (bpf_map_delete_elem(&sched_clients, &x.key))
		return DAC_RECLAIM_RACE;	/* another CPU took it, or a busy bucket */
	stat_inc(DAC_STAT_CLIENTS_RECLAIMED);
	return DAC_RECLAIM_DONE;
}

/*
 * A finished job of DRM client @client_id, process @tgid, on ring @ring_id
 * is charged @busy in sched_clients (an entry made with the ring's name
 * @rn). Returns 0, or the error of the refused insert (for
 * client_charge_room(), which makes room and counts). A global function,
 * verified once on its own: as a static one the verifier took it once per
 * state of its caller (7.3 and 6.18: st17_done and sb_done 164,817
 * verified instructions, 36,440 without it); and a frame of its own: on
 * 6.1 the completion's stack with these locals inline came to 544 bytes
 * over three calls, past the verifier's 512.
 */
__noinline int client_charge(__u64 client_id, __u32 ring_id, __u32 tgid, __u64 busy,
			     const struct dac_ring_name *rn)
{
	struct dac_sched_client_key ck = {};
	struct dac_sched_client_val czero = {}, *c;
	int err;

	ck.client_id = client_id;
	ck.ring_id = ring_id;
	c = bpf_map_lookup_elem(&sched_clients, &ck);
	if (!c && rn) {
		/*
		 * The entry is made with this job in it and its time: made
		 * empty and charged after, it would be the oldest entry
		 * until then, the first a reclaim on another CPU takes.
		 */
		czero.tgid = tgid;
		czero.last_tgid = tgid;
		__builtin_memcpy(czero.ring, rn->s, sizeof(czero.ring));
		czero.busy_ns = busy;
		czero.jobs = 1;
		czero.last_ns = bpf_ktime_get_ns();
		err = map_err(bpf_map_update_elem(&sched_clients, &ck, &czero, BPF_NOEXIST));
		if (!err)
			return 0;
		if (err != -DAC_EEXIST)
			return err;
		c = bpf_map_lookup_elem(&sched_clients, &ck);
	}
	if (!c)
		return 0;
	/*
	 * The charging process first: its procs entry lives until its
	 * completions are all in (the caller's proc_job_gone() comes after),
	 * so from here no reclaim picks this entry.
	 */
	c->last_tgid = tgid;
	c->last_ns = bpf_ktime_get_ns();
	__sync_fetch_and_add(&c->busy_ns, busy);
	__sync_fetch_and_add(&c->jobs, 1);
	return 0;
}

/*
 * client_charge(), and when sched_clients is full (-E2BIG, or on 6.1
 * something else, see ring_make()) an exited process's entry makes room
 * (clients_reclaim()) a few times. Called from the completion itself, not
 * from client_charge(): 6.1 and 6.12 count the stack of every frame down
 * to the reclaim's map walk, and client_charge()'s locals on that path
 * came to 528-544 bytes, past the verifier's 512.
 */
static __always_inline void client_charge_room(__u64 client_id, __u32 ring_id, __u32 tgid,
					       __u64 busy, const struct dac_ring_name *rn)
{
	int err = client_charge(client_id, ring_id, tgid, busy, rn);

	for (int i = 0; i < DAC_RECLAIM_TRIES && err && err != -DAC_EBUSY; i++) {
		int rc = clients_reclaim();

		if (rc == DAC_RECLAIM_NONE)
			break;	/* only live processes' entries: no room */
		if (rc == DAC_RECLAIM_DONE)
			err = client_charge(client_id, ring_id, tgid, busy, rn);
	}
	if (err)
		map_fail(DAC_MAP_SCHED_CLIENTS, err);
}

static __always_inline void on617_done(__u64 ctx, __u64 seqno, bool nested, __u64 sched)
{
	struct dac_fence_key k = { .context = ctx, .seqno = seqno };
	struct dac_ring_name rn = {};
	struct inflight_val job;
	__u64 busy;

	if (!sched_take(&inflight617, DAC_MAP_INFLIGHT617, &k, &k, &job, nested, sched))
		return;
	busy = charge_job(&job, &rn);
	if (job.client_id)
		client_charge_room(job.client_id, job.ring_id, job.tgid, busy, &rn);
	proc_job_gone(job.tgid, job.start_ns, job.counted);
}

/*
 * ---- gpu_scheduler: tp_btf, one set for every kernel --------------------
 *
 * The arguments are the same on every kernel: (job, entity) at queue and
 * run, the scheduler fence at completion; 6.17 only renamed the events.
 * The sections name the 6.17 events; where gpu_sched's BTF has the 6.1
 * names (drm_sched_job, drm_run_job, drm_sched_process_job: 6.1 to 6.16)
 * the loader attaches the same programs there
 * (bpf_program__set_attach_target(), dac_bpf_sched_target()). Jobs are
 * joined by the finished fence's {context, seqno} on all of them -- not by
 * its address, which a kill's freed fence hands to the next job on 6.1 --
 * and the DRM client id is read where the kernel has it (6.17+, Debian's
 * 6.12). Only the fields used, relocated by CO-RE against gpu_sched's BTF;
 * the programs load through their typed arguments directly (the verifier
 * makes the loads fault-safe), no bpf_probe_read_kernel() call.
 */
struct dma_fence___dac {
	__u64 context;
	__u64 seqno;
} __attribute__((preserve_access_index));

struct drm_sched_fence___dac {
	struct dma_fence___dac finished;
	struct drm_gpu_scheduler___dac *sched;
	__u64 drm_client_id;
} __attribute__((preserve_access_index));

struct drm_sched_job___dac {
	struct drm_gpu_scheduler___dac *sched;
	struct drm_sched_fence___dac *s_fence;
	__u32 credits;
} __attribute__((preserve_access_index));

static __always_inline __u64 fence_client(struct drm_sched_fence___dac *sf)
{
	if (bpf_core_field_exists(sf->drm_client_id))
		return sf->drm_client_id;
	return 0;
}

SEC("tp_btf/drm_sched_job_queue")
int BPF_PROG(sb_queue, struct drm_sched_job___dac *job, void *entity)
{
	struct drm_sched_fence___dac *sf;

	if (!job)
		return 0;
	sf = job->s_fence;
	on617_queue(sf->finished.context, sf->finished.seqno, fence_client(sf));
	return 0;
}

/*
 * on617_run() for tp_btf: ring and idleness from @job's scheduler, whose
 * name is read only for a ring seen first.
 */
static __always_inline void btf_run(struct drm_sched_job___dac *job,
				       struct drm_sched_fence___dac *sf)
{
	struct drm_gpu_scheduler___dac *sched = job->sched;
	char name[DAC_NAME_LEN] = {};
	__u64 ident = (__u64)sched;
	struct dac_ring_val *r = bpf_map_lookup_elem(&rings, &ident);
	__u32 credits = 1;

	if (!r && bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(sched, name)) < 0)
		stat_inc(DAC_STAT_READ_FAULT);
	if (bpf_core_field_exists(job->credits))
		credits = job->credits;
	on617_run(sf->finished.context, sf->finished.seqno, fence_client(sf), r, ident, name,
		  sched_idle(sched, credits));
}

SEC("tp_btf/drm_sched_job_run")
int BPF_PROG(sb_run, struct drm_sched_job___dac *job, void *entity)
{
	struct drm_sched_fence___dac *sf;

	if (!job)
		return 0;
	sf = job->s_fence;
	btf_run(job, sf);
	return 0;
}

SEC("tp_btf/drm_sched_job_done")
int BPF_PROG(sb_done, struct drm_sched_fence___dac *sf)
{
	if (!sf)
		return 0;
	on617_done(sf->finished.context, sf->finished.seqno, false, FENCE_SCHED(sf));
	return 0;
}

/*
 * The events sb_queue, sb_run and sb_done missed.
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
 * run time, done claims and deletes it, so a twin acts only on a job no
 * program before it has seen -- queue: no entry; run: an entry without a
 * run time; done: the claim that succeeds (job_claim()).
 */
static __always_inline void queue_unseen(struct drm_sched_job___dac *job)
{
	struct drm_sched_fence___dac *sf;
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
	on617_queue(k.context, k.seqno, fence_client(sf));
}

static __always_inline void run_unseen(struct drm_sched_job___dac *job)
{
	struct drm_sched_fence___dac *sf;
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
	btf_run(job, sf);
}

static __always_inline void done_unseen(struct drm_sched_fence___dac *sf)
{
	if (sf)
		on617_done(sf->finished.context, sf->finished.seqno, true, 0);
}

#define BTF_TWINS(n)									\
SEC("tp_btf/drm_sched_job_queue")							\
int BPF_PROG(sb_queue_n##n, struct drm_sched_job___dac *job, void *entity)	\
{											\
	queue_unseen(job);								\
	return 0;									\
}											\
SEC("tp_btf/drm_sched_job_run")								\
int BPF_PROG(sb_run_n##n, struct drm_sched_job___dac *job, void *entity)	\
{											\
	run_unseen(job);								\
	return 0;									\
}											\
SEC("tp_btf/drm_sched_job_done")							\
int BPF_PROG(sb_done_n##n, struct drm_sched_fence___dac *sf)		\
{											\
	done_unseen(sf);								\
	return 0;									\
}

BTF_TWINS(1)
BTF_TWINS(2)
BTF_TWINS(3)

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
	/* the kernel's count after this job's share: see st_run() */
	bool idle = TPS(ctx, hw_job_count) <= 1;

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
		on617_run(fctx, seqno, client, bpf_map_lookup_elem(&rings, &sched), sched, name,
			  idle);
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
	on617_run(fctx, seqno, client, bpf_map_lookup_elem(&rings, &hash), hash, name, idle);
	return 0;
}

SEC("tracepoint/gpu_scheduler/drm_sched_job_done")
int st17_done(struct tp617_job_done *ctx)
{
	on617_done(TPS(ctx, fence_context), TPS(ctx, fence_seqno), false, 0);
	return 0;
}
