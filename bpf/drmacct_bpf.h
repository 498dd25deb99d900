/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * drmacct_bpf.h - layouts shared by bpf/drmacct/ and the loader in
 * user/lib/bpf.c: map keys and values, ring-buffer records, stats slots.
 *
 * Included from BPF (vmlinux.h types) and from userspace (<stdint.h>), so
 * only the __u8/__u32/__u64 spellings are used. Every structure is padded
 * explicitly to a multiple of 8 bytes. No field ever holds a kernel pointer:
 * clients are named by their drm-client-id, devices by drmacct's device id,
 * scheduler rings by a small id the programs assign (DAC_MAP_RINGS).
 *
 * See Documentation/bpf.rst.
 */
#ifndef DRMACCT_BPF_H
#define DRMACCT_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define DAC_COMM_LEN		16
#define DAC_NAME_LEN		32	/* driver, engine, region, ring names */
/*
 * Reclaims a new ring or sched_clients entry tries when its map is full
 * (each a walk over the map); also the tries of a run whose ring is being
 * reclaimed.
 */
#define DAC_RECLAIM_TRIES	4
#define DAC_CLIENT_NAME_LEN	72	/* drm-client-name: up to 64 bytes + NUL, padded */

/*
 * Engines and regions carried in one CLIENT_EXIT record. drmacct's devices
 * describe a handful (simgpu 4, real drivers < 16); a device with more gets
 * DAC_EXIT_F_TRUNCATED and the rest of its totals only in DAC_MAP_TOTALS.
 */
#define DAC_EXIT_MAX_ENGINES	64
#define DAC_EXIT_MAX_REGIONS	16

/* ---- client table: key __u64 client id ---------------------------------- */
struct dac_client_val {
	__u64 open_ns;		/* CLOCK_MONOTONIC at drmacct_client_open */
	__u64 cookie;		/* DAC_MAP_TRACKED cookie of the opener, 0 = none */
	__u32 device_id;
	__u32 pid;		/* task that opened the file */
	__u32 tgid;
	__u32 pad;
	__u64 cgroup_id;	/* cgroup v2 id of the opener; 0 unknown (seeded) */
	__u64 start_ns;		/* the opener's process start, 0 unknown (seeded) */
	char comm[DAC_COMM_LEN];
	char driver[DAC_NAME_LEN];
	/*
	 * drm-client-name, "" when unknown: only the loader fills it, from
	 * the fdinfo of a client that was open before collection started
	 * (no tracepoint reports the name).
	 */
	char name[DAC_CLIENT_NAME_LEN];
};

/* ---- per-(client, engine) usage ------------------------------------------ */
struct dac_usage_key {
	__u64 client_id;
	__u32 engine;
	__u32 pad;
};

/*
 * busy_ns and cycles count finished jobs. Jobs still running add
 * running * now - start_sum (their start times summed), which is how a
 * reader gets the in-flight part at any instant, like fdinfo does.
 *
 * running and start_sum are signed sums that a begin and an end move in
 * opposite directions (begin: +1 and +start; end: -1 and -start), so the
 * order the two events reach the programs in does not matter: an end
 * traced before its begin (another CPU, an interrupt between the helper's
 * write and its tracepoint) takes the count below what is running until
 * its begin comes, never for longer. A job whose begin came before the
 * programs were attached is the exception (see jobs_seen_from in
 * helper.bpf.c): its end never takes the count below 0.
 *
 * Every writer (a job's begin or end, on any CPU) adds 1 to wr_begun before
 * it changes busy_ns, cycles, jobs, start_sum or running and 1 to wr_done
 * after, all with fully ordered atomics. A reader copies the value twice
 * and uses it only when both copies are equal and wr_begun == wr_done: no
 * write was under way, so start_sum, running and busy_ns are of one moment
 * (a copy is not atomic: start_sum of before a begin with running of after
 * it would count the new job as running since boot).
 *
 * The entry also keeps who opened the client, copied from the client
 * table when the entry is made (DAC_USAGE_F_OPENER), so that a job's end
 * charges the opener's process and cookie without looking the client up.
 */
#define DAC_USAGE_F_OPENER	(1u << 0)	/* tgid, start_ns, cookie are known */

struct dac_usage_val {
	__u64 busy_ns;
	__u64 cycles;
	__u64 jobs;		/* finished jobs */
	__s64 start_sum;	/* sum of start times of running jobs */
	__s64 running;		/* jobs running now (< 0 while an end precedes its begin) */
	__u64 wr_begun;		/* writes begun */
	__u64 wr_done;		/* writes finished */
	__u64 cookie;		/* DAC_MAP_TRACKED cookie of the client's opener */
	__u64 start_ns;		/* the opener's process start, 0 unknown */
	__u32 device_id;
	__u32 tgid;		/* the opener's process */
	__u32 flags;		/* DAC_USAGE_F_* */
	__u32 pad;
};

/* ---- per-(client, region) memory (drmacct_mem_change) ------------------ */
struct dac_mem_key {
	__u64 client_id;
	__u32 region;
	__u32 pad;
};

struct dac_mem_val {
	__u64 total;		/* bytes of objects the client holds now */
	__u64 peak;		/* highest total seen */
};

/*
 * ---- all-time totals per (device, engine), never deleted ----------------
 * Closed clients' finished jobs: a client's usage entries are added when it
 * closes; a reader adds the open clients' entries (dac_bpf_read_totals()).
 */
struct dac_total_key {
	__u32 device_id;
	__u32 engine;
};

struct dac_total_val {
	__u64 busy_ns;
	__u64 cycles;
	__u64 jobs;
	__u64 clients_closed;	/* only on engine 0 */
};

/* ---- per-cookie (drmacct stat) usage and memory: never lose closed clients */
struct dac_cookie_key {
	__u64 cookie;
	__u32 device_id;
	__u32 index;		/* engine (cookie_usage) or region (cookie_mem) */
};

struct dac_cookie_val {
	__u64 busy_ns;		/* cookie_usage: finished jobs */
	__u64 cycles;
	__u64 jobs;
	__u64 total;		/* cookie_mem: bytes held by the cookie's clients */
	__u64 peak;		/* cookie_mem: highest total */
};

/* ---- gpu_scheduler path ------------------------------------------------- */
/*
 * rings: the one ring map, key the ring's identity (__u64: its
 * drm_gpu_scheduler's address, or a hash of its name where the scheduler
 * cannot be found), created BPF_F_WRONLY and never pinned. The value
 * carries the small ring id that sched_usage, sched_clients and PROC_EXIT
 * records use, and the ring's name, which those copy (readers cannot read
 * this map).
 *
 * Busy time of a ring is the union of its jobs' [run, done] intervals:
 * charged_ns is the time up to which it has been charged; when a job runs
 * on a ring the kernel says was idle (its own count of jobs on the
 * hardware, see dac_ring_run()) it moves up to that run; each completion
 * charges done - charged_ns and moves it to done. Never more than wall
 * time, exact for rings that complete in order (see Documentation/bpf.rst).
 * A completion of a job the programs could not follow (no room in a map,
 * queued before attach) moves charged_ns to it too where the event names
 * the ring (tp_btf): its time goes to no job.
 *
 * refs counts the in-flight entries that name the ring (jobs that ran on
 * it and are not done): a ring is reclaimed only at 0, by swapping in
 * DAC_RING_DEAD first, so no followed job ever loses its ring. It is not
 * the ring's idleness (a job the programs lost would keep it up for ever;
 * that only keeps the ring from being reclaimed).
 */
#define DAC_RING_DEAD	(1ull << 62)

struct dac_ring_val {
	__u64 ident;			/* the key: re-checked, elements are reused at once */
	__u64 charged_ns;		/* busy time charged up to here */
	__u64 jobs;
	__u64 busy_ns;
	__u64 refs;			/* in-flight entries naming it; DAC_RING_DEAD */
	__u64 last_ns;			/* its last run or completion */
	__u32 id;			/* ring id (1..), never reused */
	__u32 pad;
	char name[DAC_NAME_LEN];	/* drm_gpu_scheduler.name */
};

struct dac_sched_key {
	__u32 tgid;		/* submitting process */
	__u32 ring_id;
	/*
	 * The process's start (procs start_ns; 0 kernel threads): a charge
	 * of an earlier process with this tgid that comes after its entry
	 * was written out stays its own, never the next process's.
	 */
	__u64 start_ns;
};

struct dac_sched_val {
	__u64 busy_ns;
	__u64 jobs;
	__u64 cookie;		/* DAC_MAP_TRACKED cookie of the submitter */
	__u64 cgroup_id;	/* cgroup v2 id of the submitter at its first job */
	char comm[DAC_COMM_LEN];	/* the process's (group leader's) name */
	char ring[DAC_NAME_LEN];	/* the ring's name (rings is not readable) */
};

/*
 * cgroup_sched: key __u64 cgroup v2 id. gpu_scheduler busy time and jobs
 * per cgroup, each job charged to the cgroup its submitter was in when it
 * queued it (a process that moves keeps its earlier jobs where they ran).
 * Jobs of kernel threads (cgroup id 0) are not counted here.
 */
struct dac_cgroup_val {
	__u64 busy_ns;
	__u64 jobs;
};

/*
 * procs: key __u32 tgid. A process that had scheduler jobs charged: its
 * sums and the rings it used, so that its exit (sched_process_exit) can
 * write one PROC_EXIT record and delete its sched_usage entries. A tgid
 * names a process only while it lives; start_ns (its group leader's
 * task_struct start_time, CLOCK_MONOTONIC at fork) tells a later process
 * with the same tgid from it.
 */
#define DAC_PROC_MAX_RINGS	16

struct dac_proc_val {
	__u64 busy_ns;		/* gpu_scheduler path, all rings */
	__u64 jobs;
	__u64 acct_busy_ns;	/* drmacct path: its clients' finished jobs */
	__u64 acct_jobs;
	__u64 cookie;
	__u64 cgroup_id;
	/*
	 * Scheduler jobs of the process: queued and not yet run (a killed
	 * process's are dropped without any event), and run and not yet
	 * done (each of these gets its completion).
	 */
	__u64 queued;
	__u64 inflight;
	__u64 start_ns;		/* process start; 0 unknown (a seeded client's) */
	__u64 last_ns;		/* its last job event (queue, run, done) or its exit */
	__u32 exited;		/* 1: record as soon as queued and inflight are 0 */
	__u32 flags;		/* DAC_EXIT_F_TRUNCATED: more rings than slots */
	__u32 ring_ids[DAC_PROC_MAX_RINGS];	/* 0 = free slot */
	char comm[DAC_COMM_LEN];
};

/* tgid of jobs queued by kernel threads (kworkers): all one "process" */
#define DAC_TGID_KERNEL		0

/* 6.17+ scheduler events: a job is named by its finished fence. */
struct dac_fence_key {
	__u64 context;
	__u64 seqno;
};

/* sched_clients (6.17+ set only): busy time per (DRM client id, ring) */
struct dac_sched_client_key {
	__u64 client_id;	/* drm_sched_fence.drm_client_id (drm-client-id) */
	__u32 ring_id;
	__u32 pad;
};

struct dac_sched_client_val {
	__u64 busy_ns;
	__u64 jobs;
	__u32 tgid;		/* process that queued the client's first job */
	/*
	 * Process of its last charge: the entry is taken back, when the map
	 * is full, only once this one has gone (a client's file may outlive
	 * its first process).
	 */
	__u32 last_tgid;
	char ring[DAC_NAME_LEN];	/* the ring's name */
	__u64 last_ns;		/* the client's last completion on the ring */
};

/* ---- records (ring buffer) ---------------------------------------------- */
enum dac_rec_type {
	DAC_REC_CLIENT_EXIT = 1,
	DAC_REC_PROC_EXIT = 2,
};

#define DAC_EXIT_F_TRUNCATED	(1u << 0)	/* more engines/regions than fit */
#define DAC_EXIT_F_NO_OPEN	(1u << 1)	/* opened before the programs ran */
/*
 * PROC_EXIT written when a later process with its tgid came, not at its
 * exit: its exit or its last job's completion was not seen, or charges
 * came after its own record (a drmacct job end of a client another
 * process still held) -- then it adds to that record.
 */
#define DAC_EXIT_F_REUSED	(1u << 2)
/*
 * PROC_EXIT written by the sweep: jobs of the process were still queued
 * or running (pending) long after its exit with nothing moving -- queued
 * jobs a kill dropped, or a completion never seen. The sums are what
 * was charged.
 */
#define DAC_EXIT_F_INCOMPLETE	(1u << 3)

struct dac_rec_engine {
	__u64 busy_ns;
	__u64 cycles;
	__u64 jobs;		/* 0 when the programs did not see them all */
};

struct dac_rec_region {
	__u64 peak;		/* highest total bytes while open */
	__u64 total;		/* bytes still held at close */
};

/*
 * One record per closed client; built in place in the ring buffer (the
 * largest size reserved, the real size here): the header, num_engines engine entries, then num_regions
 * region entries.
 */
struct dac_rec_exit {
	__u32 type;		/* DAC_REC_CLIENT_EXIT */
	__u32 size;		/* bytes, including this header */
	__u64 seq;		/* exit sequence number, counts drops too */
	__u64 client_id;
	__u64 cookie;
	__u64 open_ns;
	__u64 close_ns;
	__u32 device_id;
	__u32 pid;
	__u32 tgid;
	__u32 flags;		/* DAC_EXIT_F_* */
	__u32 num_engines;	/* entries that follow */
	__u32 num_regions;
	char comm[DAC_COMM_LEN];
	char driver[DAC_NAME_LEN];
	/* struct dac_rec_engine e[num_engines]; struct dac_rec_region r[num_regions]; */
};

#define DAC_REC_EXIT_MAX_SIZE	(sizeof(struct dac_rec_exit) +			\
				 DAC_EXIT_MAX_ENGINES * sizeof(struct dac_rec_engine) + \
				 DAC_EXIT_MAX_REGIONS * sizeof(struct dac_rec_region))

/*
 * One per exiting process that had scheduler jobs: the header, then
 * num_rings struct dac_rec_ring.
 */
struct dac_rec_proc_exit {
	__u32 type;		/* DAC_REC_PROC_EXIT */
	__u32 size;
	__u64 seq;		/* process exit sequence number, counts drops too */
	__u64 exit_ns;
	__u64 busy_ns;		/* gpu_scheduler path, all rings */
	__u64 jobs;
	__u64 acct_busy_ns;	/* drmacct path (exact): its clients' jobs */
	__u64 acct_jobs;
	__u64 cookie;
	__u64 cgroup_id;
	__u64 start_ns;		/* process start (task start_time), 0 unknown */
	__u32 tgid;
	__u32 flags;		/* DAC_EXIT_F_TRUNCATED, _REUSED, _INCOMPLETE */
	__u32 num_rings;
	__u32 pending;		/* INCOMPLETE: jobs queued or running, never done */
	char comm[DAC_COMM_LEN];
};

struct dac_rec_ring {
	__u32 ring_id;
	__u32 pad;
	__u64 busy_ns;
	__u64 jobs;
	char name[DAC_NAME_LEN];	/* the ring's name */
};

#define DAC_REC_PROC_MAX_SIZE	(sizeof(struct dac_rec_proc_exit) +		\
				 DAC_PROC_MAX_RINGS * sizeof(struct dac_rec_ring))

/*
 * Maps whose inserts can fail: per map, stats counts failures because the
 * map was full (DAC_STAT_FULL + id: -E2BIG), because the bucket was busy
 * (DAC_STAT_BUSY + id: -EBUSY, the program interrupted itself on this CPU,
 * e.g. from an NMI -- a recursion miss) and for any other reason
 * (DAC_STAT_NOMEM + id: -ENOMEM, an element that could not be allocated;
 * 6.1 also says so for a full preallocated hash, later kernels -E2BIG).
 * None of these maps is an LRU: nothing is ever evicted, a refused insert
 * is the only way an entry is missing, and it is counted here.
 */
enum dac_map_id {
	DAC_MAP_CLIENTS,
	DAC_MAP_USAGE,
	DAC_MAP_MEM,
	DAC_MAP_TOTALS,
	DAC_MAP_COOKIE_USAGE,
	DAC_MAP_COOKIE_MEM,
	DAC_MAP_TRACKED,
	DAC_MAP_RINGS,
	DAC_MAP_INFLIGHT,
	DAC_MAP_SCHED_USAGE,
	DAC_MAP_INFLIGHT617,
	DAC_MAP_SCHED_CLIENTS,
	DAC_MAP_PROCS,
	DAC_MAP_CGROUP_SCHED,
	DAC_MAP_NAMES,
	DAC_MAP__COUNT
};

/* ---- stats: array of __u64, index below ---------------------------------- */
enum dac_stat {
	DAC_STAT_EXIT_RECORDS,		/* CLIENT_EXIT records attempted */
	DAC_STAT_EXIT_DROPS,		/* records (either kind) the full ring buffer dropped */
	DAC_STAT_PROC_RECORDS,		/* PROC_EXIT records attempted */
	DAC_STAT_JOB_END_UNSEEN,	/* job end without its begin (attached late) */
	DAC_STAT_SCHED_ORPHAN_DONE,	/* completion of a job queued before attach */
	DAC_STAT_READ_FAULT,		/* bpf_probe_read_kernel failed */
	DAC_STAT_CAS_GIVEUP,		/* a cmpxchg loop lost DAC_CAS_TRIES times */
	/*
	 * Events the second ("_nested") program of a tp_btf event handled:
	 * the first was already running on that CPU (an interrupt came in
	 * the middle of it), so the kernel skipped it for this event and
	 * counted a recursion miss.
	 */
	DAC_STAT_NESTED_JOB_BEGIN,	/* drmacct_job_begin */
	DAC_STAT_NESTED_JOB_END,	/* drmacct_job_end */
	DAC_STAT_NESTED_SCHED_DONE,	/* drm_sched_process_job / drm_sched_job_done */
	DAC_STAT_PROC_LATE,		/* charge for a process whose tgid a later one has */
	/*
	 * More events of that kind, seen where tp_btf programs run
	 * preemptible (7.x): another task on the CPU was preempted inside
	 * the first program.
	 */
	DAC_STAT_NESTED_CLIENT_OPEN,	/* drmacct_client_open */
	DAC_STAT_NESTED_CLIENT_CLOSE,	/* drmacct_client_close */
	DAC_STAT_NESTED_MEM_CHANGE,	/* drmacct_mem_change */
	DAC_STAT_NESTED_SCHED_QUEUE,	/* drm_sched_job_queue */
	DAC_STAT_NESTED_SCHED_RUN,	/* drm_sched_job_run */
	DAC_STAT_NESTED_FORK,		/* sched_process_fork */
	DAC_STAT_NESTED_EXIT,		/* sched_process_exit */
	DAC_STAT_SCRATCH_FULL,		/* unused since records are built in place: 0 */
	DAC_STAT_SWEEP_WRITTEN,		/* PROC_EXIT records the sweep wrote (INCOMPLETE) */
	DAC_STAT_STALE_RELEASED,	/* in-flight entries overwritten by a new job */
	/*
	 * A closing client's usage entries move into totals between these
	 * two counts (readers add open clients' entries to totals).
	 */
	DAC_STAT_FOLDS_BEGUN,
	DAC_STAT_FOLDS_DONE,
	/*
	 * Scheduler jobs not charged because a map had no room: no in-flight
	 * entry at queue, or no ring at run (counted once, at the refusal,
	 * or at the completion of a job that ran on a ring without an id).
	 */
	DAC_STAT_SCHED_LOST,
	DAC_STAT_RINGS_NEW,		/* rings created (one per scheduler seen) */
	DAC_STAT_RINGS_RECLAIMED,	/* idle rings deleted to make room */
	/*
	 * Runs that found their ring being reclaimed and no other to take:
	 * charged their own time (done - run) under the reclaimed ring's id.
	 */
	DAC_STAT_RING_RECLAIM_RUNS,
	/* in-flight entries a refused delete left, deleted later (sweep, new job) */
	DAC_STAT_LEFT_REMOVED,
	/*
	 * sched_clients entries of exited processes deleted to make room
	 * for a new (client, ring) (the map full)
	 */
	DAC_STAT_CLIENTS_RECLAIMED,
	DAC_STAT_FULL,			/* + enum dac_map_id: insert failed, map full */
	DAC_STAT_BUSY = DAC_STAT_FULL + DAC_MAP__COUNT,	/* + id: bucket busy */
	DAC_STAT_NOMEM = DAC_STAT_BUSY + DAC_MAP__COUNT,	/* + id: other errors */
	DAC_STAT__COUNT = DAC_STAT_NOMEM + DAC_MAP__COUNT
};

/*
 * The pinned "meta" map (array, one entry): what a reader checks before it
 * trusts the other pins. Bumped whenever a key, value or record changes.
 */
#define DAC_LAYOUT_MAGIC	0x6472616363745f6dull	/* "drmacct_m" */
#define DAC_LAYOUT_VERSION	15

struct dac_meta {
	__u64 magic;
	__u32 version;
	__u32 pad;
};

/*
 * ---- device names: key, value char[DAC_NAME_LEN] --------------------------
 * Written by the programs on drmacct_device_name (each client open, each
 * print of a client's fdinfo). ENGINE and REGION are the kernel's
 * DRMACCT_NAME_ENGINE and DRMACCT_NAME_REGION.
 */
enum dac_name_kind {
	DAC_NAME_ENGINE = 1,	/* engine name */
	DAC_NAME_REGION = 2,	/* region name */
	DAC_NAME_CAPACITY = 3,	/* engine capacity, decimal text */
	DAC_NAME_RDEV = 4,	/* index 0: "major:minor" of the device's render node */
};

struct dac_name_key {
	__u32 device_id;
	__u16 kind;		/* DAC_NAME_* */
	__u16 index;
};

#endif /* DRMACCT_BPF_H */
