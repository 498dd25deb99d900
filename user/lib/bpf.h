/* SPDX-License-Identifier: MIT */
/*
 * bpf.h - libdrmacct's BPF loader and map reader.
 *
 * The programs in bpf/drmacct/ account GPU usage live from two sources:
 * drmacct's own tracepoints (per-client, per-engine busy time, cycles, job
 * counts, memory; a client table; a CLIENT_EXIT record with the final totals
 * of every client that closes) and the kernel's gpu_scheduler tracepoints
 * (per-process, per-ring busy time for any drm_sched driver).
 *
 * `drmacct bpf start` loads them with dac_bpf_load() and pins programs, links
 * and maps under DAC_BPF_PIN_DIR (mode 0700, root only), so that collection
 * outlives the command; every reader then uses dac_bpf_open_pinned().
 *
 * Engines and regions are named, not numbered: drmacct's tracepoints carry
 * the engine index, and the loader maps index -> name per device from the
 * drm-engine-<e>/drm-total-<r> keys of the device's fdinfo (printed in index
 * order), learned once per device by opening its render node (see
 * Documentation/bpf.rst, "Names"). Unknown names read "engine<N>"/"region<N>".
 *
 * All functions return 0 (or a count) on success and a negative errno on
 * failure; none prints anything. Not thread-safe per handle.
 */
#ifndef DRMACCT_BPF_API_H
#define DRMACCT_BPF_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DAC_BPF_PIN_DIR		"/sys/fs/bpf/drmacct"
#define DAC_BPF_COMM_LEN	16
#define DAC_BPF_NAME_LEN	32
#define DAC_BPF_CLIENT_NAME_LEN	72	/* drm-client-name (<= 64 bytes) + NUL */

struct dac_bpf;		/* opaque handle on a loaded or pinned collection */

enum dac_bpf_attach {
	DAC_BPF_ATTACH_AUTO = 0,	/* tp_btf where module BTF exists, else tracepoint */
	DAC_BPF_ATTACH_BTF,		/* tp_btf only (fails without module BTF) */
	DAC_BPF_ATTACH_TRACEPOINT,	/* plain tracepoints only */
};

#define DAC_BPF_SCHED_ENTRIES_MAX	(1u << 22)

struct dac_bpf_load_opts {
	enum dac_bpf_attach attach;
	uint32_t ringbuf_bytes;		/* 0 = 1 MiB; else a power of 2 >= page size */
	uint32_t max_clients;		/* 0 = 16384 live clients */
	/*
	 * Entries of each gpu_scheduler map (rings, inflight,
	 * inflight617, sched_usage, sched_clients, procs), 1 to
	 * DAC_BPF_SCHED_ENTRIES_MAX: 0 = the environment's
	 * DRMACCT_BPF_SCHED_ENTRIES if set (a decimal number in that range:
	 * -EINVAL otherwise), else 16384. Full,
	 * they refuse inserts (counted) and the jobs concerned are counted
	 * lost; nothing is evicted.
	 */
	uint32_t sched_entries;
	bool no_drmacct;		/* do not attach to drmacct's tracepoints */
	bool no_sched;			/* do not attach to gpu_scheduler's */
	/*
	 * For tests of the fallback: the tp_btf programs of both sources go
	 * to the kernel with a log buffer below its minimum size, so that the
	 * kernel refuses their load (EINVAL; ENOSPC from 6.4) as it would
	 * refuse a program it cannot verify.
	 */
	bool test_break_btf;
	/*
	 * For the test of a run that meets its ring being reclaimed: every
	 * ring reclaim claims its ring and stops before the delete, as if
	 * its CPU were held there for good (the ring stays in the map, dead).
	 */
	bool test_stall_reclaim;
	/*
	 * For the test of a job that runs between the sweep's test of it and
	 * its claim: the sweep takes every job idle for its period to the
	 * claim, whether it ran or its process lives.
	 */
	bool test_sweep_late;
};

/*
 * Load and attach the programs (not pinned). With drmacct's tracepoints,
 * the clients that are already open are put in place before any usage is
 * counted: the client open/close, memory and name programs are attached
 * first, then the open clients are added from their fdinfo
 * (dac_bpf_seed_clients(), which also names their devices), and only
 * then are the job programs attached, so every job of such a client is
 * filed under its real device. -ENOENT when a source the
 * options ask for has no tracepoints in this kernel (module not loaded),
 * -EPERM/-EACCES without CAP_BPF/CAP_PERFMON, -EACCES/-E2BIG/-EINVAL when
 * the verifier refuses a program (dac_bpf_load_log() has its log).
 *
 * With DAC_BPF_ATTACH_AUTO, when the tp_btf programs of a source do not
 * load (a verifier that reads the module's types differently), that source
 * falls back to its plain tracepoint programs; the info's note says so.
 */
int dac_bpf_load(const struct dac_bpf_load_opts *opts, struct dac_bpf **out);

/*
 * libbpf's warnings during the last dac_bpf_load() or dac_bpf_verify() of
 * this process (the newest 16 KiB: the end of a refused program's verifier
 * log among them), "" when there were none. For failed loads; when a load
 * succeeded after a fallback it holds what the fallback logged.
 */
const char *dac_bpf_load_log(void);

/* Where the last @lines lines of @log begin (inside @log). */
const char *dac_bpf_log_tail(const char *log, int lines);

/*
 * The stack a verifier's BPF_LOG_STATS @log gives: its deepest call chain
 * ("stack depth max 96": 7.3 says so, 6.18 not yet; *@is_max true) or
 * every frame's depth summed ("stack depth 24+0+32": the main program's,
 * then each subprogram's); 0 when the log has neither or it does not
 * parse.
 */
uint32_t dac_bpf_log_stack_bytes(const char *log, bool *is_max);

/*
 * Everything libbpf says (info and debug too) to stderr as it comes,
 * instead of only keeping its warnings; also DRMACCT_BPF_DEBUG=1.
 */
void dac_bpf_set_verbose(bool on);

/* A load error in words: what the errno means for loading programs. */
const char *dac_bpf_load_strerror(int err);

/* ---- verification ------------------------------------------------------------ */

/* dac_bpf_verdict.status of a program this kernel cannot take at all */
#define DAC_BPF_NOT_HERE	1

struct dac_bpf_verdict {
	char name[64];			/* program name */
	char sec[128];			/* ELF section: tp_btf/..., tracepoint/... */
	int status;			/* 0 loaded, -errno refused, DAC_BPF_NOT_HERE */
	uint32_t insns;			/* loaded: its instructions */
	uint32_t verified_insns;	/* loaded: instructions the verifier walked */
	uint32_t verify_us;		/* loaded: the verifier's time (its BPF_LOG_STATS
					 * "verification time"), 0 where it gave none */
	/*
	 * Loaded: the stack of its deepest call chain, which the kernel holds
	 * to 512 bytes, where the verifier says it (BPF_LOG_STATS "stack depth
	 * max N", on 7.3, not 6.18: stack_is_max); else the stack of its main
	 * program and every subprogram summed ("stack depth 24+0+32"), at
	 * least that chain. 0 where the log says neither.
	 */
	uint32_t stack_bytes;
	bool stack_is_max;
	char why[4096];			/* refused: the end of the verifier's log;
					 * not here: what this kernel lacks */
};

/*
 * Put every program of the object through this kernel's verifier, each on
 * its own, attaching nothing: a tp_btf program whose tracepoint has no BTF
 * here is DAC_BPF_NOT_HERE, every other one loads or is refused. Needs
 * what loading needs (root). A malloc'd array of one verdict per program,
 * in the object's order; 0 or -errno (not for refusals: those are
 * verdicts).
 */
int dac_bpf_verify(struct dac_bpf_verdict **out, size_t *n);

/*
 * Pin a loaded collection under @dir (NULL = DAC_BPF_PIN_DIR): the
 * directory is created with mode 0700; -EEXIST when something is pinned
 * there already.
 */
int dac_bpf_pin(struct dac_bpf *b, const char *dir);

/* Remove a pinned collection (stops collection). -ENOENT when none. */
int dac_bpf_unpin(const char *dir);

/*
 * Open a pinned collection. -ENOENT when nothing is pinned (BPF not
 * running), -EACCES/-EPERM when the caller may not open it (not root),
 * -ESTALE when what is pinned has another layout than this library reads
 * (an older drmacct's collection: `drmacct bpf stop`, then start again).
 */
int dac_bpf_open_pinned(const char *dir, struct dac_bpf **out);

void dac_bpf_close(struct dac_bpf *b);

/* Which programs are attached, and how. */
/* What the scheduler programs know a ring (a drm_gpu_scheduler) by. */
enum dac_bpf_ring_identity {
	DAC_BPF_RING_NONE = 0,		/* no scheduler programs */
	DAC_BPF_RING_SCHED,		/* its address: one ring per scheduler */
	DAC_BPF_RING_NAME,		/* a hash of its name: equally named rings merge */
	DAC_BPF_RING_DEV_NAME,		/* a hash of device and name (6.17 plain records) */
};

/* "scheduler", "ring name", "device and ring name", "none". */
const char *dac_bpf_ring_identity_name(enum dac_bpf_ring_identity id);

struct dac_bpf_info {
	bool drmacct;			/* drmacct tracepoint programs attached */
	bool sched;			/* gpu_scheduler programs attached */
	bool drmacct_btf;		/* ... as tp_btf (else plain tracepoint) */
	bool sched_btf;
	bool sched_617;			/* the 6.17+ scheduler set (renamed events) */
	/*
	 * The scheduler programs see DRM client ids (dac_bpf_read_sched_clients()):
	 * the 6.17 events carry them; tp_btf reads them from the scheduler
	 * fence wherever the kernel has drm_sched_fence.drm_client_id (6.17,
	 * and Debian's 6.12 has it too).
	 */
	bool sched_client_ids;
	bool proc_exit;			/* sched_process_exit program attached */
	enum dac_bpf_ring_identity ring_identity;
	uint32_t ringbuf_bytes;
	char note[256];			/* load: a fallback that happened, else "" */
};
int dac_bpf_info(struct dac_bpf *b, struct dac_bpf_info *info);

/* ---- records --------------------------------------------------------------- */

enum dac_bpf_event_type {
	DAC_BPF_CLIENT_EXIT = 1,
	DAC_BPF_LOST = 2,
	DAC_BPF_PROC_EXIT = 3,
};

struct dac_bpf_engine_usage {
	char name[DAC_BPF_NAME_LEN];
	uint64_t busy_ns;
	uint64_t cycles;
	uint64_t jobs;
};

struct dac_bpf_region_mem {
	char name[DAC_BPF_NAME_LEN];
	uint64_t peak;			/* highest total bytes while open */
	uint64_t total;			/* bytes still held at close */
};

#define DAC_BPF_EXIT_TRUNCATED	(1u << 0)	/* engines/regions beyond the record's room */
#define DAC_BPF_EXIT_NO_OPEN	(1u << 1)	/* opened before collection started */
/*
 * PROC_EXIT written when a later process with its tgid came, not at its
 * exit: its exit or its last job's completion was not seen, or charges
 * came after its own record (then it adds to the record with the same
 * tgid and start_ns).
 */
#define DAC_BPF_EXIT_REUSED	(1u << 2)
/*
 * PROC_EXIT only: written by the sweep, long after the exit, with jobs
 * still pending (dac_bpf_proc_exit.pending: queued jobs a kill dropped, a
 * completion never seen); the sums are what was charged.
 */
#define DAC_BPF_EXIT_INCOMPLETE	(1u << 3)

struct dac_bpf_client_exit {
	uint64_t client_id;
	uint64_t seq;			/* exit sequence number */
	uint64_t cookie;		/* dac_bpf_track() cookie, 0 = none */
	uint64_t open_ns, close_ns;	/* CLOCK_MONOTONIC; open 0 when unknown */
	uint32_t device_id;
	uint32_t pid, tgid;
	uint32_t flags;			/* DAC_BPF_EXIT_* */
	char comm[DAC_BPF_COMM_LEN];
	char driver[DAC_BPF_NAME_LEN];
	uint32_t num_engines;
	uint32_t num_regions;
	struct dac_bpf_engine_usage *engines;	/* valid during the callback only */
	struct dac_bpf_region_mem *regions;
};

/* A process's gpu_scheduler usage, one per ring it used. */
struct dac_bpf_proc_ring {
	uint32_t ring_id;
	char ring[DAC_BPF_NAME_LEN];	/* drm_gpu_scheduler name */
	uint64_t busy_ns, jobs;
};

/*
 * A process that had GPU jobs exited (its last thread) and its last
 * gpu_scheduler job in flight completed: its gpu_scheduler sums over all
 * rings and per ring, and the exact sums of its clients' jobs from
 * drmacct's events (clients it opened; jobs that end after its exit, when
 * its files close, are only in their CLIENT_EXIT records). TRUNCATED: it
 * used more rings than a record lists (its total still counts them all).
 */
struct dac_bpf_proc_exit {
	uint32_t tgid;			/* 0: kernel threads (DAC_BPF_TGID_KERNEL) */
	uint32_t flags;			/* DAC_BPF_EXIT_TRUNCATED, _REUSED, _INCOMPLETE */
	uint64_t seq;			/* process exit sequence number */
	/*
	 * The process's start (its task start_time, CLOCK_MONOTONIC at
	 * fork; 0 unknown): with tgid, which process this is when tgids
	 * have been reused.
	 */
	uint64_t start_ns;
	uint64_t exit_ns;		/* CLOCK_MONOTONIC: when written */
	uint64_t busy_ns, jobs;		/* gpu_scheduler path, all rings */
	uint64_t acct_busy_ns;		/* drmacct path (exact): its clients' jobs */
	uint64_t acct_jobs;
	uint64_t cookie;
	uint64_t cgroup_id;		/* cgroup v2 id at its first job */
	char comm[DAC_BPF_COMM_LEN];	/* the process's (group leader's) name */
	uint32_t num_rings;
	struct dac_bpf_proc_ring *rings;	/* valid during the callback only */
	uint32_t pending;		/* INCOMPLETE: jobs that never completed */
};

struct dac_bpf_event {
	enum dac_bpf_event_type type;
	union {
		struct dac_bpf_client_exit exit;
		struct dac_bpf_proc_exit proc;
		struct {
			uint64_t count;	/* records (either kind) dropped: ring full */
		} lost;
	};
};

/* Return 0 to go on, non-zero to stop dac_bpf_poll() (which returns it). */
typedef int (*dac_bpf_event_fn)(void *ctx, const struct dac_bpf_event *ev);

/*
 * Wait up to @timeout_ms (0 = do not wait, -1 = forever) for records and
 * deliver every available one to @cb; after the ring is drained, records
 * that were dropped since the last call are delivered as one DAC_BPF_LOST
 * event with their exact count. Returns the number of events delivered,
 * the callback's non-zero return, or -errno (-EINTR on a signal).
 */
int dac_bpf_poll(struct dac_bpf *b, int timeout_ms, dac_bpf_event_fn cb, void *ctx);

/* ---- map readers (each returns a malloc'd array the caller frees) ------- */

struct dac_bpf_client {
	uint64_t client_id;
	uint64_t open_ns;
	uint64_t cookie;
	uint32_t device_id;
	uint32_t pid, tgid;
	uint64_t cgroup_id;			/* cgroup v2 id of the opener; 0 unknown */
	char comm[DAC_BPF_COMM_LEN];
	char driver[DAC_BPF_NAME_LEN];
	char name[DAC_BPF_CLIENT_NAME_LEN];	/* drm-client-name; "" unknown (see below) */
};
/*
 * The client table. A client's name is known only for clients that were
 * already open when collection started (read from their fdinfo then); no
 * tracepoint reports a name set later.
 */
int dac_bpf_read_clients(struct dac_bpf *b, struct dac_bpf_client **out, size_t *n);

struct dac_bpf_usage {
	uint64_t client_id;
	uint32_t device_id;
	uint32_t engine;		/* index on the device */
	char name[DAC_BPF_NAME_LEN];
	uint64_t busy_ns;		/* finished jobs + in-flight part at now_ns */
	uint64_t cycles;		/* finished jobs */
	uint64_t jobs;			/* finished jobs */
	uint32_t running;		/* jobs running at the time of the read */
};
/*
 * Usage of every live client and engine, the in-flight part computed at
 * *@now_ns (CLOCK_MONOTONIC; the time of the read is stored there).
 */
int dac_bpf_read_usage(struct dac_bpf *b, uint64_t *now_ns, struct dac_bpf_usage **out,
		       size_t *n);

/*
 * One (client, engine) entry, read and timed on its own (for comparisons
 * with an fdinfo read just before). -ENOENT when the programs have no entry
 * (the client never ran a job on that engine since collection started).
 */
int dac_bpf_lookup_usage(struct dac_bpf *b, uint64_t client_id, uint32_t engine,
			 uint64_t *now_ns, struct dac_bpf_usage *out);

struct dac_bpf_mem {
	uint64_t client_id;
	uint32_t region;
	char name[DAC_BPF_NAME_LEN];
	uint64_t total, peak;
};
int dac_bpf_read_mem(struct dac_bpf *b, struct dac_bpf_mem **out, size_t *n);

/* All-time totals per (device, engine): exact even when records were lost. */
struct dac_bpf_total {
	uint32_t device_id;
	uint32_t engine;
	char name[DAC_BPF_NAME_LEN];
	uint64_t busy_ns, cycles, jobs;
};
int dac_bpf_read_totals(struct dac_bpf *b, struct dac_bpf_total **out, size_t *n);

/* tgid of the jobs kernel threads queued: all of them are "the kernel". */
#define DAC_BPF_TGID_KERNEL	0

/* gpu_scheduler path: busy time per (process, ring). */
struct dac_bpf_sched {
	uint32_t tgid;			/* DAC_BPF_TGID_KERNEL: kernel threads */
	uint32_t ring_id;
	uint64_t start_ns;		/* the process's start (0: kernel threads) */
	uint64_t cookie;
	uint64_t cgroup_id;		/* cgroup v2 id of the process at its first job */
	char comm[DAC_BPF_COMM_LEN];	/* the process's (group leader's) name */
	char ring[DAC_BPF_NAME_LEN];	/* drm_gpu_scheduler name, e.g. "render0" */
	uint64_t busy_ns, jobs;
};
int dac_bpf_read_sched(struct dac_bpf *b, struct dac_bpf_sched **out, size_t *n);

/*
 * gpu_scheduler path per DRM client: busy time per (client id, ring), from
 * the client id the 6.17+ scheduler events carry (the drm-client-id of
 * core fdinfo). Empty with the 6.1 set, whose events have none, and for
 * jobs whose driver gave none (0).
 */
struct dac_bpf_sched_client {
	uint64_t client_id;		/* drm_sched_fence.drm_client_id */
	uint32_t ring_id;
	uint32_t tgid;			/* the process that queued its first job here */
	char ring[DAC_BPF_NAME_LEN];	/* drm_gpu_scheduler name */
	uint64_t busy_ns, jobs;
};
int dac_bpf_read_sched_clients(struct dac_bpf *b, struct dac_bpf_sched_client **out,
			       size_t *n);

/*
 * gpu_scheduler path per cgroup: busy time and jobs of the jobs queued from
 * each cgroup v2 (the submitter's cgroup at the job's queue time: a process
 * that moved splits its time), processes alive and exited alike. Kernel
 * threads' jobs are not in it. dac_bpf_cgroup_path() names the cgroup.
 */
struct dac_bpf_cgroup {
	uint64_t cgroup_id;
	uint64_t busy_ns, jobs;
};
int dac_bpf_read_cgroups(struct dac_bpf *b, struct dac_bpf_cgroup **out, size_t *n);

/* Counters the programs keep about themselves. */
struct dac_bpf_stats {
	uint64_t exit_records;		/* CLIENT_EXIT records attempted */
	uint64_t proc_records;		/* PROC_EXIT records attempted */
	uint64_t exit_drops;		/* records of either kind dropped: ring full */
	uint64_t job_end_unseen;	/* job ends whose begin was not seen */
	uint64_t sched_orphans;		/* completions of jobs queued before attach */
	uint64_t read_faults;
	uint64_t cas_giveups;		/* atomic updates given up under contention */
	/*
	 * Events a "_nested" program took because the kernel skipped the
	 * first one (already running on that CPU): drmacct_job_begin,
	 * drmacct_job_end, scheduler completions.
	 */
	uint64_t nested_job_begin;
	uint64_t nested_job_end;
	uint64_t nested_sched_done;
	/*
	 * More of them, where tp_btf programs run preemptible (7.x): another
	 * task was preempted inside the first program on that CPU. Forks and
	 * exits count only those that had something to do (a tracked parent,
	 * a process with scheduler jobs or tracked).
	 */
	uint64_t nested_client_open;
	uint64_t nested_client_close;
	uint64_t nested_mem_change;
	uint64_t nested_sched_queue;
	uint64_t nested_sched_run;
	uint64_t nested_fork;
	uint64_t nested_exit;
	/* 0: records are built in place now (kept for the JSON output) */
	uint64_t scratch_full;
	/*
	 * Charges for a process whose tgid a later process already has (the
	 * charge's process start is older than the entry's): dropped.
	 */
	uint64_t proc_late;
	uint64_t full;			/* inserts refused, every map: map full */
	uint64_t busy;			/* ... bucket busy (recursion miss) */
	uint64_t nomem;			/* ... any other error (no memory) */
	/*
	 * Scheduler jobs not charged because a map had no room for them
	 * (no in-flight entry, no ring): counted, never charged elsewhere.
	 */
	uint64_t sched_lost;
	uint64_t sweep_written;		/* PROC_EXIT records the sweep wrote */
	/* in-flight entries of jobs never completed, released (overwrite, sweep) */
	uint64_t stale_released;
	/*
	 * Rings created (one per scheduler that ran a followed job), and idle
	 * rings reclaimed to make room for new ones when the map was full.
	 */
	uint64_t rings_new;
	uint64_t rings_reclaimed;
	/*
	 * Runs that found their ring being reclaimed (its reclaimer between
	 * its claim and its delete): charged their own time, done - run.
	 */
	uint64_t ring_reclaim_runs;
	/*
	 * In-flight entries whose delete was refused (counted under the
	 * map's busy or nomem; their jobs charged), deleted later by the
	 * sweep.
	 */
	uint64_t left_removed;
	/*
	 * sched_clients entries of exited processes deleted to make room for
	 * new ones (the map full): only the per-client split of an exited
	 * process's time, which its PROC_EXIT record holds per ring.
	 */
	uint64_t clients_reclaimed;
};
int dac_bpf_read_stats(struct dac_bpf *b, struct dac_bpf_stats *st);

/*
 * Every map of the collection (the unpinned join maps too, found through
 * the programs): what it holds and costs. entries is -1 where the bpf()
 * syscall cannot count them (write-only maps, the ring buffer).
 */
struct dac_bpf_map_stat {
	char name[DAC_BPF_NAME_LEN];
	char type[16];			/* "hash", "lru_hash", "array", "ringbuf", ... */
	uint32_t max_entries;
	int64_t entries;
	uint64_t memlock;		/* bytes the kernel charges for it */
	uint64_t full;			/* inserts refused: full (-E2BIG) */
	uint64_t busy;			/* inserts refused: bucket busy (recursion miss) */
	uint64_t nomem;			/* inserts refused: any other error (-ENOMEM) */
};
int dac_bpf_read_maps(struct dac_bpf *b, struct dac_bpf_map_stat **out, size_t *n);

/*
 * Cost of each attached program, from the kernel's BPF statistics: counted
 * only while kernel.bpf_stats_enabled is 1 (sysctl, or the fd of
 * bpf_enable_stats(BPF_STATS_RUN_TIME) held open).
 */
struct dac_bpf_prog_stats {
	char name[64];			/* program (= link pin) name, e.g. hb_end */
	uint64_t run_cnt;
	uint64_t run_time_ns;
	uint64_t recursion_misses;	/* runs skipped: it was already running on that CPU */
};
int dac_bpf_read_prog_stats(struct dac_bpf *b, struct dac_bpf_prog_stats **out, size_t *n);

/* ---- process tracking (drmacct stat) ---------------------------------------- */

/*
 * Tag process @tgid and every process it forks from now on with @cookie
 * (non-zero): clients they open and scheduler jobs they submit carry it,
 * and the programs sum their usage per cookie (closed clients included).
 * dac_bpf_untrack() removes every process tagged with @cookie and the
 * cookie's sums.
 */
int dac_bpf_track(struct dac_bpf *b, uint32_t tgid, uint64_t cookie);
int dac_bpf_untrack(struct dac_bpf *b, uint64_t cookie);

struct dac_bpf_cookie_engine {
	uint32_t device_id;
	uint32_t engine;
	char name[DAC_BPF_NAME_LEN];
	uint64_t busy_ns, cycles, jobs;	/* finished jobs */
};

struct dac_bpf_cookie_region {
	uint32_t device_id;
	uint32_t region;
	char name[DAC_BPF_NAME_LEN];
	uint64_t total;			/* bytes the cookie's clients hold now */
	uint64_t peak;			/* highest such total */
};

/* Sums for @cookie: per (device, engine) and per (device, region). */
int dac_bpf_read_cookie(struct dac_bpf *b, uint64_t cookie,
			struct dac_bpf_cookie_engine **eng, size_t *neng,
			struct dac_bpf_cookie_region **reg, size_t *nreg);

/* ---- names ----------------------------------------------------------------- */

/*
 * Name of engine @index (or region, @region true) of drmacct device
 * @device_id into @buf; learns the device's names first when they are not
 * known yet. Falls back to "engine<N>"/"region<N>". Returns @buf.
 */
const char *dac_bpf_name(struct dac_bpf *b, uint32_t device_id, bool region,
			 uint32_t index, char *buf, size_t len);

/*
 * Learn the engine and region names of the devices of every DRM file open
 * now, without opening any: one walk of /proc that reads each file's
 * fdinfo, which makes drmacct.ko emit drmacct_device_name for its device,
 * and the programs write the names (and the device's render node). A
 * client that opens later names its device itself. Returns the number of
 * devices whose node the names map knows, 0 when the collection is not on
 * drmacct's tracepoints, or a negative errno.
 */
int dac_bpf_learn_names(struct dac_bpf *b);

/*
 * Add the clients that were already open when collection started to the
 * client table, from a /proc walk (each DRM fd whose device node matches a
 * device whose names were learned), with what their fdinfo says: device,
 * driver, drm-client-name, and the bytes held per region (drm-total-<r>,
 * which becomes the memory map's total and peak). Their open time is
 * unknown (0) and their busy time counts from the start of collection.
 * dac_bpf_load() already does this once; on its handle the first call
 * also counts the clients added then. Returns the number added or -errno.
 */
int dac_bpf_seed_clients(struct dac_bpf *b);

/* ---- tracker feed (drmacct list/top) --------------------------------------- */

struct dac_tracker;

/*
 * One whole tracker sample from the BPF tables, no /proc walk: every live
 * client of the client table (of the cgroup filter, if set) becomes one
 * observation (holder: its opener's tgid and comm, fd -1 because the
 * programs do not know it; its opener's cgroup path) with the keys
 * fdinfo would print that the programs know -- drm-driver, drm-client-id,
 * drm-engine-<e> (busy incl. in-flight), drm-engine-capacity-<e>,
 * drm-cycles-<e>, drm-total-<r>. The device node comes from name learning;
 * rdev is 0 when unknown. *@nclients (may be NULL) gets the count.
 * Returns 0 or -errno.
 */
int dac_bpf_tracker_sample(struct dac_bpf *b, struct dac_tracker *t, size_t *nclients);

/*
 * Only clients whose opener's cgroup is @path (a cgroup v2 path such as
 * "/system.slice/x.service", relative to the cgroup2 mount) or below it
 * from now on in dac_bpf_tracker_sample(); NULL: all. 0 or -ENOMEM.
 */
int dac_bpf_set_cgroup_filter(struct dac_bpf *b, const char *path);

/*
 * The cgroup v2 path of cgroup @id into @buf: "/" for the root (id 1, also
 * when cgroup2 is not mounted), else the directory under the cgroup2 mount
 * whose inode is @id; "cgroup:<id>" when none is found (not mounted, or the
 * cgroup is gone). Returns @buf.
 */
const char *dac_bpf_cgroup_path(struct dac_bpf *b, uint64_t id, char *buf, size_t len);

/*
 * Human-readable reason for an error of dac_bpf_open_pinned() and the
 * readers (-ENOENT: nothing pinned, not running). For load errors see
 * dac_bpf_load_strerror().
 */
const char *dac_bpf_strerror(int err);

#endif /* DRMACCT_BPF_API_H */
