/* SPDX-License-Identifier: MIT */
/*
 * conformance.h - driver-agnostic conformance checks of DRM client usage
 * stats (fdinfo), the library behind `drmacct conformance`.
 *
 * The checks judge what a driver prints over time, not one text: the caller
 * records every read of every open file it watches (the text and the
 * CLOCK_MONOTONIC time just before the open and just after the last read),
 * says which reads belong to the same open file description, when a file was
 * closed, which files never ran work (idle) and which belong to a workload,
 * and the PCI address the device has in sysfs. dac_conf_evaluate() then runs
 * every check (see dac_conf_checks()) and gives each a status and evidence.
 *
 * Nothing here opens a device or /proc: the live collection is in
 * conformance_live.c, the host tests feed hand-made texts.
 *
 * Return values: 0 or a negative errno (-EINVAL bad arguments, -ENOMEM).
 */
#ifndef DRMACCT_CONFORMANCE_H
#define DRMACCT_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "fdinfo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** enum dac_conf_id - the checks, in report order */
enum dac_conf_id {
	DAC_CONF_FORMAT = 0,
	DAC_CONF_DRIVER,
	DAC_CONF_ID_STABLE,
	DAC_CONF_ID_UNIQUE,
	DAC_CONF_ID_NOT_REUSED,
	DAC_CONF_PDEV,
	DAC_CONF_DRIVER_PREFIX,
	DAC_CONF_MONOTONIC,
	DAC_CONF_IDLE_ZERO,
	DAC_CONF_BUSY_CAPACITY,
	DAC_CONF_CYCLES_BOUND,
	DAC_CONF_MAXFREQ_CONSTANT,
	DAC_CONF_CAPACITY,
	DAC_CONF_KEY_SET_STABLE,
	DAC_CONF_MEMORY_UNITS,
	DAC_CONF_MEMORY_SUBSETS,
	DAC_CONF_MIXED_SOURCES,		/* portability note, never a failure */
	DAC_CONF_WORKLOAD_BUSY,
	DAC_CONF_TIME_CYCLES_AGREE,
	DAC_CONF__COUNT
};

/** enum dac_conf_status - outcome of one check */
enum dac_conf_status {
	DAC_CONF_PASS = 0,	/* checked, nothing wrong */
	DAC_CONF_FAIL,		/* evidence says what broke the rule */
	DAC_CONF_SKIP,		/* nothing to check (evidence says why) */
	DAC_CONF_NOTE,		/* portability note: legal, but a risk for readers */
};

/**
 * struct dac_conf_info - what a check is
 * @name:  stable identifier, e.g. "counters-monotonic"
 * @group: "identity", "time", "memory", "portability" or "workload"
 * @what:  one line: what is checked
 * @rule:  the spec sentence it enforces (the 2022 text, or the current
 *         upstream text where it says so)
 * @fault: the value of simgpu's fault= module parameter that breaks this
 *         rule (the proof that the check can fail), NULL for the note
 */
struct dac_conf_info {
	const char *name;
	const char *group;
	const char *what;
	const char *rule;
	const char *fault;
};

/** dac_conf_checks() - static table of DAC_CONF__COUNT entries */
const struct dac_conf_info *dac_conf_checks(void);

/** dac_conf_status_name() - "pass", "FAIL", "skip", "note" */
const char *dac_conf_status_name(enum dac_conf_status s);

/** dac_conf_check_by_name() - id of check @name, or -1 */
int dac_conf_check_by_name(const char *name);

/* Flags of a watched file. */
#define DAC_CONF_F_IDLE		0x1u	/* ran no work: busy/cycles must not move */
#define DAC_CONF_F_WORKLOAD	0x2u	/* a client of the workload */
#define DAC_CONF_F_OTHER	0x4u	/* another process's file, read once: id only */

/*
 * Over a workload client's watched window, utilisation from total-cycles
 * may be below utilisation from time (0..1 of the engine, after dividing
 * by capacity), and from cycles at maxfreq above it, by a quarter of the
 * time's share, at least 0.01 and at most 0.10. The other directions are
 * what a variable clock does. Drivers add cycles when a job ends, so a
 * window edge inside a job is lumpy: the window starts and ends at settled
 * reads where it can.
 */
#define DAC_CONF_AGREE_TOLERANCE	0.10
#define DAC_CONF_AGREE_RELATIVE		0.25
#define DAC_CONF_AGREE_FLOOR		0.01
/* Cycles may exceed the total-cycles or maxfreq bound by this fraction. */
#define DAC_CONF_CYCLES_SLACK		0.10

struct dac_conf;

/** dac_conf_new() - empty run; NULL on ENOMEM */
struct dac_conf *dac_conf_new(void);
/** dac_conf_free() - release everything; NULL ok */
void dac_conf_free(struct dac_conf *c);

/**
 * dac_conf_set_device() - what sysfs says about the device
 * @c:    the run
 * @path: the device node, for messages (copied; may be NULL)
 * @pdev: its PCI address ("0000:00:02.0") when it is a PCI device, NULL
 *        when it is not (then a drm-pdev line is wrong)
 */
int dac_conf_set_device(struct dac_conf *c, const char *path, const char *pdev);

/**
 * dac_conf_set_workload() - a workload command ran (@cmd, copied): without a
 * workload client, workload-busy then fails instead of being skipped
 */
int dac_conf_set_workload(struct dac_conf *c, const char *cmd);

/**
 * dac_conf_file() - start watching one open file description
 * @c:     the run
 * @label: how messages name it ("open #1", "pid 42 fd 5"); copied
 * @flags: DAC_CONF_F_*
 *
 * Return: the file's index (>= 0) for dac_conf_read() and dac_conf_close(),
 *         or -EINVAL / -ENOMEM.
 */
int dac_conf_file(struct dac_conf *c, const char *label, unsigned int flags);

/**
 * dac_conf_read() - one read of a file's fdinfo
 * @c:    the run
 * @file: index from dac_conf_file()
 * @via:  through what it was read ("fd 5", "dup fd 6", "child 77 fd 5");
 *        copied; NULL = "fd"
 * @t0:   CLOCK_MONOTONIC ns just before the fdinfo file was opened
 * @t1:   ... and just after its last read(); t0 <= t1
 * @text: the fdinfo text, @len bytes
 *
 * Reads of one file must be added in time order.
 */
int dac_conf_read(struct dac_conf *c, int file, const char *via, uint64_t t0, uint64_t t1,
		  const char *text, size_t len);

/**
 * dac_conf_other_device_id() - a file open on another DRM device now (read
 * once; @label names it, copied), by its drm-client-id. It counts in
 * client-id-unique when the device under test prints no drm-pdev: its ids
 * must then be unique across all devices ("either globally unique, or
 * unique within the scope of each device, in which case drm-pdev shall be
 * present"). 0, -EINVAL or -ENOMEM.
 */
int dac_conf_other_device_id(struct dac_conf *c, const char *label, uint64_t id);

/**
 * dac_conf_file_stats() - what the last read of @file printed: no drm- key
 * (DAC_STATS_NONE, also for a bad @file or no read), core keys only, or
 * usage stats
 */
enum dac_stats dac_conf_file_stats(const struct dac_conf *c, int file);

/** dac_conf_close() - the file was closed: its client id must not come back */
int dac_conf_close(struct dac_conf *c, int file);

/**
 * dac_conf_evaluate() - run every check on what was recorded
 * May be called again after more reads; the results are replaced.
 */
int dac_conf_evaluate(struct dac_conf *c);

/** dac_conf_status() - status of check @id after dac_conf_evaluate() */
enum dac_conf_status dac_conf_status(const struct dac_conf *c, enum dac_conf_id id);

/**
 * dac_conf_evidence() - the evidence lines of check @id
 * @n:     set to the number of lines kept (at most DAC_CONF_EVIDENCE_MAX)
 * @total: set to the number of findings (may be larger: the rest are counted)
 * @summary: set to a one-line summary (never NULL after evaluate)
 */
const char *const *dac_conf_evidence(const struct dac_conf *c, enum dac_conf_id id, size_t *n,
				     size_t *total, const char **summary);
#define DAC_CONF_EVIDENCE_MAX 8

/** dac_conf_failures() - number of checks with status FAIL */
size_t dac_conf_failures(const struct dac_conf *c);

/** dac_conf_nreads() - reads recorded; dac_conf_nfiles() - files */
size_t dac_conf_nreads(const struct dac_conf *c);
size_t dac_conf_nfiles(const struct dac_conf *c);

/* ---- reports ----------------------------------------------------------- */

/**
 * dac_conf_print_text() - one line per check; rule and evidence of failed
 * checks and notes below it (of every check with @verbose). 0 or -EIO.
 */
int dac_conf_print_text(const struct dac_conf *c, FILE *f, bool verbose);
/** dac_conf_print_tap() - TAP 13: one test point per check, evidence as comments */
int dac_conf_print_tap(const struct dac_conf *c, FILE *f);
struct dac_json;
/** dac_conf_json() - "checks" array and "failed" count into an open JSON object */
void dac_conf_json(const struct dac_conf *c, struct dac_json *j);

/* ---- live collection (conformance_live.c) ------------------------------ */

/**
 * struct dac_conf_opts - what dac_conf_run() does
 * @device:      device node; NULL = the first render node (then accel node)
 *               whose driver prints usage stats, else the first one
 * @workload:    shell command to run and watch (sh -c), or NULL
 * @duration_ns: how long the idle reads (and at least the workload watch)
 *               last; 0 = 1 s
 * @interval_ns: time between reads; 0 = 50 ms
 * @log:         progress lines go here when not NULL (FILE *)
 */
struct dac_conf_opts {
	const char *device;
	const char *workload;
	uint64_t duration_ns;
	uint64_t interval_ns;
	void *log;
};

/**
 * struct dac_conf_run_info - what dac_conf_run() saw
 * @device:          the device node used (static or owned by the run)
 * @chosen:          without dac_conf_opts.device: why this one ("the first
 *                   render node with usage stats; renderD128 (vgem) prints
 *                   none"); "" when it was given
 * @stats:           what its driver prints (enum dac_stats of fdinfo.h), or
 *                   -1 when no file on it could be opened and read
 * @other_dev_files: files on other DRM devices compared by id (for the
 *                   global uniqueness of ids when no drm-pdev is printed)
 * @workload_status: wait status of the workload (valid when @workload_ran)
 * @workload_files:  workload files watched
 * @other_files:     files of other processes compared by id
 * @kcmp_missing:    kcmp() was not available: other processes' fds were
 *                   compared by id only
 */
struct dac_conf_run_info {
	char device[256];
	char chosen[512];
	int stats;
	size_t other_dev_files;
	bool workload_ran;
	int workload_status;
	size_t workload_files;
	size_t other_files;
	bool kcmp_missing;
};

/**
 * dac_conf_run() - open clients on the device (open, dup, fork, reopen,
 * close), read their fdinfo, run and watch the workload, record it all in @c
 * and evaluate.
 *
 * Return: 0, or -errno when the device cannot be opened or its fdinfo
 *         cannot be read (-ENOENT no device found, -ENOTTY not a character
 *         device, -ENODATA when the driver prints no usage stats at all);
 *         @why then says why. dac_conf_run_skip() says which of these are
 *         nothing to test rather than a failure.
 */
int dac_conf_run(struct dac_conf *c, const struct dac_conf_opts *o,
		 struct dac_conf_run_info *info, char *why, size_t whylen);

/*
 * dac_conf_run_skip() - a dac_conf_run() error that means "nothing to
 * test" (no device, the driver prints no usage stats, the device cannot be
 * opened by us) rather than a failure: kselftest's skip (4).
 */
bool dac_conf_run_skip(int err);

#ifdef __cplusplus
}
#endif

#endif /* DRMACCT_CONFORMANCE_H */
