/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Support code shared by the simgpu VM selftests and benches: finding the
 * simgpu render node, thin ioctl wrappers that fail the current test on error,
 * a strict fdinfo reader, ground-truth arithmetic on WAIT results, tracefs and
 * module helpers.
 */
#ifndef SGTEST_H
#define SGTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <drm.h>
#include "simgpu_drm.h"

#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_MSEC	1000000ull

/*
 * SG_CHECK() - EXPECT-style check with a formatted explanation: prints the
 * message and records a failure when @cond is false.
 */
#define SG_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			dt_info(__VA_ARGS__);				\
			DT_EXPECT_TRUE(cond);				\
		}							\
	} while (0)

/* ---- time ------------------------------------------------------------- */

/** sg_now_ns() - CLOCK_MONOTONIC in ns (the device clock, see the uapi). */
uint64_t sg_now_ns(void);
/** sg_sleep_ns() - sleep the full interval, restarting on EINTR. */
void sg_sleep_ns(uint64_t ns);
/** sg_overlap() - length of [a0,a1) ∩ [b0,b1), 0 when disjoint. */
uint64_t sg_overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1);
/**
 * sg_union_ns() - length of the union of the intervals [run[i], end[i]),
 * i < @n (any order, overlapping or not).
 */
uint64_t sg_union_ns(const uint64_t *run, const uint64_t *end, size_t n);

/*
 * sg_sched_bounds() - what the gpu_scheduler events may charge one ring
 * (scheduler) for its jobs @w[0..@n), from simgpu's measured stamps, no
 * allowance: at least @lo, the union of [run_ns, hw_end_ns] (drm_run_job
 * fires before run_job() reads run_ns; the completion's callback runs in
 * the fence's signal, after hw_end_ns), at most @hi, the union of
 * [queued_ns, max(signalled_ns, finished_ns)] (the job is handed over
 * after SUBMIT read queued_ns; the scheduler's done event comes before its
 * finished fence signals, finished_ns: usually inside the hardware fence's
 * signal, before signalled_ns, but later when the job completed before
 * drm_sched added its callback and its run worker ended it). @hi - @lo is
 * the error admitted: each busy period's wait from SUBMIT to run_job() and
 * its completions' callback time, measured.
 * BPF stamps with the fast monotonic clock, a few ns from ktime_get_ns()
 * at a timekeeping update; between each event and simgpu's read lie
 * whole function calls (run_job()'s entry; the helper's end and the
 * result's retire), microseconds even natively.
 */
void sg_sched_bounds(const struct drm_simgpu_wait *w, size_t n, uint64_t *lo, uint64_t *hi);

/* sg_sched_end_ns() - the latest a job's end is seen on the scheduler's side */
uint64_t sg_sched_end_ns(const struct drm_simgpu_wait *w);

/* ---- device ----------------------------------------------------------- */

/**
 * sg_find_node() - path of the simgpu render node.
 * Scans /dev/dri/renderD* and picks the lowest minor whose device's driver
 * (sysfs) is simgpu, without opening any node (an open is a DRM client).
 * Returns 0 and fills @path, or -ENODEV.
 */
int sg_find_node(char *path, size_t len);
/** sg_open_raw() - open the simgpu render node (O_RDWR|O_CLOEXEC); -1 + errno on failure. */
int sg_open_raw(void);
/** sg_open() - like sg_open_raw() but fails the current test on error. */
int sg_open(void);

struct sg_engine {
	unsigned int index;
	struct drm_simgpu_query_engine q;
};

struct sg_dev {
	struct drm_simgpu_query_device q;
	unsigned int num_engines;
	struct sg_engine *eng;		/* num_engines entries */
};

/** sg_query() - QUERY_DEVICE + QUERY_ENGINE for every engine; fails the test on error. */
void sg_query(int fd, struct sg_dev *dev);
void sg_dev_free(struct sg_dev *dev);
/** sg_client_id() - client id of @fd per QUERY_DEVICE. */
uint64_t sg_client_id(int fd);
/*
 * Names the file (drm-client-name): DRM_IOCTL_SET_CLIENT_NAME where the
 * DRM core owns the name (6.13+), else simgpu's SET_CLIENT_NAME. @len
 * bytes of @s. Like ioctl(): 0, or -1 with errno set.
 */
int sg_set_client_name(int fd, const char *s, size_t len);
/* Does the DRM core own drm-client-name here (DRM_IOCTL_SET_CLIENT_NAME)? */
bool sg_core_client_name(int fd);

/*
 * Engine pickers (by property, never by hard-coded name): NULL when the
 * device has no such engine.
 */
/* capacity 1, maxfreq (not total-cycles) */
const struct sg_engine *sg_engine_simple(const struct sg_dev *dev);
/* capacity >= 2 */
const struct sg_engine *sg_engine_multi(const struct sg_dev *dev);
/* total-cycles engine */
const struct sg_engine *sg_engine_total_cycles(const struct sg_dev *dev);
const struct sg_engine *sg_engine_by_name(const struct sg_dev *dev, const char *name);

/* ---- jobs ------------------------------------------------------------- */

/** sg_submit_busy() - OP_BUSY job; returns the job id, fails the test on error. */
uint64_t sg_submit_busy(int fd, unsigned int engine, unsigned int instance, uint64_t ns);
/** sg_submit() - submit @s; returns the job id, fails the test on error. */
uint64_t sg_submit(int fd, struct drm_simgpu_submit *s);
/**
 * sg_wait() - wait (up to 60 s) for @job; fails the test unless it
 * completed with stamps that pass sg_stamps_ok().
 */
void sg_wait(int fd, uint64_t job, struct drm_simgpu_wait *w);
/** sg_wait_raw() - wait with @timeout_ns; returns ioctl result, fills @w. */
int sg_wait_raw(int fd, uint64_t job, uint64_t timeout_ns, struct drm_simgpu_wait *w);

/*
 * sg_stamps_ok() - a finished job's stamps against the engine's own clock
 * reads: hw_start_ns <= start_ns <= hw_start_ns + start_gap_ns, the same
 * for the end, hw_start_ns <= hw_end_ns <= signalled_ns and queued_ns <=
 * hw_start_ns. Exact: the helper's stamp is read between the two engine
 * reads of its bracket, so a helper that stamps 1 ns outside fails.
 * Returns true, or false with the reason in @why.
 */
bool sg_stamps_ok(const struct drm_simgpu_wait *w, char *why, size_t len);

/*
 * struct sg_truth - sums over finished jobs of what WAIT reports
 * @jobs: jobs added
 * @acct_ns: Σ(end_ns - start_ns), the helper's stamps
 * @hw_ns: Σ(hw_end_ns - hw_start_ns), the engine's own
 * @start_gap_ns: Σ start_gap_ns
 * @end_gap_ns: Σ end_gap_ns
 * @signal_ns: Σ(signalled_ns - hw_end_ns): the completion's callbacks
 * @cycles: Σ cycles
 */
struct sg_truth {
	uint64_t jobs;
	uint64_t acct_ns;
	uint64_t hw_ns;
	uint64_t start_gap_ns;
	uint64_t end_gap_ns;
	uint64_t signal_ns;
	uint64_t cycles;
};

/** sg_truth_add() - add one finished job's WAIT result to @t. */
void sg_truth_add(struct sg_truth *t, const struct drm_simgpu_wait *w);
/** sg_truth_merge() - add @b's sums to @a. */
void sg_truth_merge(struct sg_truth *a, const struct sg_truth *b);
/*
 * sg_truth_expect() - @got, busy time some accounting reports for exactly
 * the jobs of @t (all finished, no other), against them: equal to
 * Σ(end_ns - start_ns) (both sides add up the same stamps), and within
 * [Σhw - Σstart_gap, Σhw + Σend_gap] of the engine's own truth: the only
 * error admitted is the measured time between the engine's clock reads
 * and the helper's, a few µs per job.
 */
void sg_truth_expect(const char *what, uint64_t got, const struct sg_truth *t);
/** sg_truth_expect_one() - sg_truth_expect() for the one job @w. */
void sg_truth_expect_one(const char *what, uint64_t got, const struct drm_simgpu_wait *w);

/* ---- GEM -------------------------------------------------------------- */

uint32_t sg_bo_create(int fd, uint64_t size);
void sg_bo_close(int fd, uint32_t handle);
int sg_bo_export(int fd, uint32_t handle);		/* dma-buf fd */
uint32_t sg_bo_import(int fd, int dmabuf);
/** sg_bo_madvise() - returns the 'retained' output. */
uint32_t sg_bo_madvise(int fd, uint32_t handle, uint32_t madv);

/* ---- fdinfo ----------------------------------------------------------- */

struct sg_kv {
	char *key;
	char *val;		/* full value text (after the TAB) */
	char *unit;		/* text after "<number> ", or "" */
	uint64_t num;		/* parsed number when has_num */
	bool has_num;
	bool strict;		/* "key:\tvalue" with value "<str>" or "<uint>[ <unit>]" */
	unsigned int line;	/* 1-based */
};

struct sg_fdinfo {
	char *buf;
	struct sg_kv *kv;
	size_t n;
	uint64_t t_before;	/* CLOCK_MONOTONIC just before open() */
	uint64_t t_after;	/* ... and just after the last read() */
};

/** sg_fdinfo_read_pid() - read /proc/<pid>/fdinfo/<fd>; returns 0 or -errno. */
int sg_fdinfo_read_pid(pid_t pid, int fd, struct sg_fdinfo *fi);
/** sg_fdinfo_read() - read this process's fdinfo of @fd; fails the test on error. */
void sg_fdinfo_read(int fd, struct sg_fdinfo *fi);
void sg_fdinfo_free(struct sg_fdinfo *fi);
const struct sg_kv *sg_fdinfo_find(const struct sg_fdinfo *fi, const char *key);
/** sg_fdinfo_u64() - numeric value of @key, which must exist with @unit ("" = none). */
uint64_t sg_fdinfo_u64(const struct sg_fdinfo *fi, const char *key, const char *unit);
/** sg_fdinfo_engine_ns() - drm-engine-<name> in ns (unit must be "ns"). */
uint64_t sg_fdinfo_engine_ns(const struct sg_fdinfo *fi, const char *name);
/** sg_fdinfo_cycles() - drm-cycles-<name> (no unit). */
uint64_t sg_fdinfo_cycles(const struct sg_fdinfo *fi, const char *name);
/**
 * sg_fdinfo_bytes() - a memory key converted to bytes; the unit must be
 * "", "KiB" or "MiB". Fails the test when the key is missing.
 */
uint64_t sg_fdinfo_bytes(const struct sg_fdinfo *fi, const char *key);
/** sg_fdinfo_count_prefix() - number of keys starting with @prefix. */
size_t sg_fdinfo_count_prefix(const struct sg_fdinfo *fi, const char *prefix);
/** sg_parse_fdinfo() - parse @buf (modified in place) into @fi; returns 0 or -errno. */
int sg_parse_fdinfo(char *buf, struct sg_fdinfo *fi);

/* ---- system ----------------------------------------------------------- */

/** sg_sh() - run a shell command, return its exit status (-1 when it did not exit). */
int sg_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** sg_write_file() - write a string to a file; 0 or -errno. */
int sg_write_file(const char *path, const char *s);
/** sg_read_file() - whole file as a malloc'd NUL-terminated string, NULL + errno on error. */
char *sg_read_file(const char *path, size_t *len);

/*
 * Parses a trace array "{a,b,c}" (decimal or 0x-hex, as __print_array
 * prints) into @out; returns the number of values, -1 when malformed or
 * longer than @max.
 */
int sg_parse_u64_list(const char *s, uint64_t *out, unsigned int max);

/**
 * sg_simgpu_reload() - rmmod simgpu and modprobe it with @params (may be
 * "", or end in a redirection); 0 once its render node is there (waits up
 * to 2 s), -1 when modprobe failed or no node came.
 */
int sg_simgpu_reload(const char *params);
/**
 * sg_simgpu_live() - a count of debugfs simgpu/objects: @what is "jobs "
 * or "results "; fails the test when the file cannot be read, -1 when it
 * has no such line.
 */
long sg_simgpu_live(const char *what);

/** sg_edu_bdf() - the PCI address of QEMU's edu device (1234:11e8); -1 without one. */
int sg_edu_bdf(char *bdf, size_t len);
/** sg_open_pci_node() - open the render node of PCI device @bdf; waits up to 2 s. */
int sg_open_pci_node(const char *bdf);
/**
 * sg_kmsg_open() - open /dev/kmsg positioned at its end, so that
 * sg_kmsg_bad_lines() later sees only what the kernel logged after this
 * point. Returns the fd or -1 (sg_kmsg_bad_lines() then counts the
 * unreadable log as one bad line).
 */
int sg_kmsg_open(void);
/**
 * sg_kmsg_bad_lines() - read the new kernel messages from @fd and count
 * those that show a kernel problem (BUG, WARNING, Oops, Call Trace, ...);
 * each is printed as a diagnostic. A log that could not be opened (@fd < 0)
 * or read counts as one more: an unreadable log is not a clean one.
 * Closes @fd.
 */
int sg_kmsg_bad_lines(int fd);
/** sg_is_root() - true when running with root privileges. */
bool sg_is_root(void);
/*
 * sg_need_end_first() - skip without root, fail when drmacct.ko has no
 * trace_end_first parameter (it fires each job's begin event right after
 * its end: kernel/drmacct/drmacct_core.c). sg_end_first() sets it; 0 or
 * -errno. A test that sets it clears it in its teardown.
 */
void sg_need_end_first(void);
int sg_end_first(bool on);
/**
 * sg_need_btf() - skip the test when the kernel has no BTF
 * (/sys/kernel/btf/vmlinux): every drmacct BPF object has CO-RE
 * relocations, which libbpf resolves against it, so nothing of ours loads
 * there (`make test-debug`'s kernel is built without it).
 */
void sg_need_btf(void);
struct dac_bpf;
struct dac_bpf_load_opts;
/**
 * sg_bpf_load() - load and attach drmacct's BPF programs for a test
 * @o: load options
 *
 * Skips the test when not root or when the kernel has no BTF; fails it
 * with the loader's message and libbpf's log when the load fails.
 * Return: the collection (never NULL).
 */
struct dac_bpf *sg_bpf_load(const struct dac_bpf_load_opts *o);
/**
 * sg_bpf_sched_sums() - busy time and jobs of process @tgid in @b's
 * sched_usage now, all its rings summed (a failed read fails the test)
 * @b: the collection
 * @tgid: the process
 * @busy: its busy time (ns)
 * @jobs: its jobs
 */
void sg_bpf_sched_sums(struct dac_bpf *b, uint32_t tgid, uint64_t *busy, uint64_t *jobs);
/**
 * sg_sched_events() - which gpu_scheduler events this kernel has, from
 * tracefs (the tests' own look, beside the loader's): 617 for the renamed
 * set (drm_sched_job_queue/_run/_done), 61 for drm_sched_job, drm_run_job,
 * drm_sched_process_job, 0 for neither (gpu_sched not loaded, no tracefs).
 */
int sg_sched_events(void);
/**
 * sg_bpf_label() - name the gpu_scheduler program set @b runs, and its
 * kind, on the test's TAP line (dt_label(): "6.17 set, tp_btf"); nothing
 * when @b has no scheduler programs. sg_bpf_load() calls it.
 */
void sg_bpf_label(struct dac_bpf *b);

/** sg_reap() - wait for the @n children in @pid; each must exit with status 0. */
void sg_reap(const pid_t *pid, int n);

struct dac_bpf_event;
struct dac_bpf_proc_exit;
/**
 * struct sg_proc_records - PROC_EXIT records of a test's children
 * @pid: the @n children, as fork() returned them
 * @n: how many
 * @rec: per child, its last record (rings not kept)
 * @records: per child, how many records came
 * @lost: records the ring buffer dropped
 */
struct sg_proc_records {
	const pid_t *pid;
	int n;
	struct dac_bpf_proc_exit *rec;
	unsigned int *records;
	uint64_t lost;
};

/** sg_catch_proc() - dac_bpf_poll() callback filling a struct sg_proc_records @ctx. */
int sg_catch_proc(void *ctx, const struct dac_bpf_event *ev);

/**
 * sg_bpf_poll_procs() - poll @b's records into @r until every child has one,
 * in at most @tries polls of 100 ms; fails the test when polling fails.
 */
void sg_bpf_poll_procs(struct dac_bpf *b, struct sg_proc_records *r, int tries);

#endif /* SGTEST_H */
