/* SPDX-License-Identifier: MIT */
/*
 * counters.h - GPU usage counters in the shape of the Khronos OpenKODE
 * KD_KHR_perfcounter extension.
 *
 * The extension's calls map one to one:
 *
 *   kdGetNumberOfCountersKHR()   dac_pc_get_number()
 *   kdGetCounterInformationKHR() dac_pc_get_info()
 *   kdActivateCountersKHR()      dac_pc_activate()
 *   kdDeactivateCountersKHR()    dac_pc_deactivate()
 *   kdStartSamplingKHR()         dac_pc_start()
 *   kdStopSamplingKHR()          dac_pc_stop()
 *   kdGetCounterValuesKHR()      dac_pc_get_values()
 *   kdGetError()                 dac_pc_get_error()
 *
 * with the same return conventions: -1 (or NULL) on failure, the reason in
 * the error indicator (and errno): EACCES "permission denied", EINVAL
 * "unrecognized counter index"; plus ENOMEM and the errno of a failed /proc
 * walk, which the extension has no code for.
 *
 * The counter set is fixed when the context is opened, from a /proc walk:
 * devices in device-number order are "GPU 0", "GPU 1", ... and each gets
 *
 *   "GPU X utilization"           busiest engine, 0..10000 (0.01 %), scale 0.01
 *   "GPU X <engine> utilization"  per engine,     0..10000 (0.01 %), scale 0.01
 *   "GPU X <engine> busy time"    ns since start of sampling, unbounded
 *   "GPU X memory usage"          bytes now (resident, else total), unbounded
 *   "GPU X clients amount"        DRM clients open now
 *
 * then "GPU memory usage" (bytes, every device). Names follow the
 * extension's recommended names ("GPU X utilization", "GPU memory usage").
 * Utilisation is busy time over elapsed time divided by the engine's
 * capacity, over the window since dac_pc_start(); busy time counts every
 * client seen during the window, including clients that opened after the
 * start (a client that closes between two reads loses its last interval;
 * read more often, or use BPF, to see those).
 *
 * Permission: with /proc entries the caller may not read (other users'
 * processes when not root) the numbers would be silently incomplete, so
 * every call then fails with EACCES, unless the context was opened with
 * allow_partial or restricted to one process with pid.
 *
 * Values of counters that are not active are DAC_PC_UNKNOWN.
 */
#ifndef DRMACCT_COUNTERS_H
#define DRMACCT_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdinfo.h"

#define DAC_PC_INFINITE	INT64_MAX	/* KD_INFINITE_COUNTER_VAL_KHR */
#define DAC_PC_UNKNOWN	(-1)		/* KD_UNKNOWN_COUNTER_VAL_KHR */

/* KDCounterInfoKHR */
struct dac_pc_info {
	const char *vendor;		/* "drmacct" */
	const char *name;
	const char *description;
	int64_t min;
	int64_t max;			/* DAC_PC_INFINITE when unbounded */
	float default_scale;		/* to 0..100; DAC_PC_UNKNOWN when none */
};

struct dac_pc_opts {
	const char *proc_root;		/* NULL: /proc */
	pid_t pid;			/* > 0: only this process's clients */
	enum dac_profile profile;
	bool allow_partial;		/* accept a walk that could not read everything */
};

struct dac_pc;

/* Opens the context (one /proc walk). NULL with errno set on failure. */
struct dac_pc *dac_pc_open(const struct dac_pc_opts *opts);
void dac_pc_close(struct dac_pc *pc);

/* The error indicator: the reason of the last failed call (0 after success). */
int dac_pc_get_error(const struct dac_pc *pc);

int dac_pc_get_number(struct dac_pc *pc);
const struct dac_pc_info *dac_pc_get_info(struct dac_pc *pc, int index);
/* All or nothing: with one bad index nothing changes. */
int dac_pc_activate(struct dac_pc *pc, const int *indexes, int numindexes);
int dac_pc_deactivate(struct dac_pc *pc, const int *indexes, int numindexes);
/* Zeroes every active counter and starts sampling them. */
int dac_pc_start(struct dac_pc *pc);
/* Takes a last reading and keeps the values as they are now. */
int dac_pc_stop(struct dac_pc *pc);
/*
 * While sampling: takes a reading now. After dac_pc_stop(): the values at
 * the stop. Before any start: 0 for active counters.
 */
int dac_pc_get_values(struct dac_pc *pc, const int *indexes, int numindexes, int64_t *values);

#endif /* DRMACCT_COUNTERS_H */
