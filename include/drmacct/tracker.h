/* SPDX-License-Identifier: MIT */
/*
 * tracker.h - DRM client tracker: de-duplication, catch-up rule, utilisation.
 *
 * A sample is a set of (pid, fd, parsed fdinfo) observations taken at one
 * time. The tracker
 *  - de-duplicates clients by (device, drm-client-id): dup'd fds and fds
 *    inherited by forked children show the same client, which is counted once
 *    in totals and attributed to every process holding it (process view);
 *    an fdinfo without drm-client-id cannot be matched and is its own client,
 *    keyed by (device, pid, fd);
 *  - applies the spec's catch-up rule to drm-engine-, drm-cycles- and
 *    drm-total-cycles- counters: a value lower than the previous one is held
 *    at the previous (larger) value until the counter catches up;
 *  - computes per-engine utilisation over the interval between two samples:
 *      time:            d(busy ns) / (interval ns x capacity)
 *      cycles/maxfreq:  d(cycles) / (maxfreq Hz x interval s x capacity)
 *      cycles/total:    d(cycles) / (d(total-cycles) x capacity)
 *    (drm-cycles are taken as the sum over the engine's instances, like busy
 *    time, hence the division by capacity in every form);
 *  - keeps memory per region (bytes) and builds per-process and total views.
 *
 * Values are fractions (1.0 = the engine fully busy). A utilisation that
 * cannot be computed (first sample of a client, no counter, no interval) is
 * NaN; check with isnan() or the has_ flags.
 */
#ifndef DRMACCT_TRACKER_H
#define DRMACCT_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover.h"
#include "fdinfo.h"

/* Catch-up state of one monotonic counter (exposed for tests and tools). */
struct dac_counter {
	uint64_t value;		/* reported value: max of everything seen */
	uint64_t raw;		/* last raw value read */
	uint64_t prev;		/* reported value at the previous sample */
	bool valid;		/* seen at least once */
	bool prev_valid;	/* @prev is a real reading (set when a sample begins) */
	bool held;		/* raw < value: holding the larger value */
	uint64_t regressions;	/* how many samples went backwards */
};

/* Feed one raw reading; returns the reported value (catch-up rule). */
uint64_t dac_counter_update(struct dac_counter *c, uint64_t raw);

enum dac_util_source {
	DAC_UTIL_NONE = 0,
	DAC_UTIL_TIME,		/* drm-engine-<e> ns */
	DAC_UTIL_CYCLES_MAXFREQ,	/* drm-cycles-<e> / drm-maxfreq-<e> */
	DAC_UTIL_CYCLES_TOTAL,	/* drm-cycles-<e> / drm-total-cycles-<e> */
};

const char *dac_util_source_name(enum dac_util_source s);

/*
 * Pure utilisation math (also used by the tracker). Every form returns NaN
 * when it cannot be computed (zero interval, zero capacity or frequency).
 */
double dac_util_time(uint64_t d_busy_ns, uint64_t interval_ns, uint64_t capacity);
double dac_util_cycles_maxfreq(uint64_t d_cycles, uint64_t maxfreq_hz, uint64_t interval_ns,
			       uint64_t capacity);
double dac_util_cycles_total(uint64_t d_cycles, uint64_t d_total_cycles, uint64_t capacity);

struct dac_tk_engine {
	char *name;
	uint64_t capacity;		/* 1 when not printed */
	struct dac_counter busy;	/* ns */
	struct dac_counter cycles;
	struct dac_counter total_cycles;
	uint64_t maxfreq_hz;
	bool has_busy, has_cycles, has_total_cycles, has_maxfreq;
	bool present;			/* printed in the latest sample */
	/* over the last interval: */
	uint64_t d_busy_ns, d_cycles, d_total_cycles;
	double util_time;		/* NaN if unknown */
	double util_cycles;		/* NaN if unknown */
	double util;			/* preferred: time, else cycles */
	enum dac_util_source util_src;
};

struct dac_tk_region {
	char *name;
	uint64_t total, shared, resident, purgeable, active;
	bool has_total, has_shared, has_resident, has_purgeable, has_active;
	bool resident_from_legacy;	/* only drm-memory-<r> was printed */
};

struct dac_tk_holder {
	pid_t pid;
	int fd;
	char *comm;
};

struct dac_tk_client {
	dev_t rdev;
	unsigned int major, minor;
	uint64_t client_id;
	bool has_client_id;
	char *driver;			/* NULL when not printed */
	char *pdev;
	char *client_name;
	char *cgroup;			/* cgroup v2 path of its opener; NULL unknown
					 * (the BPF feed knows it, /proc does not) */
	size_t spec_errors;		/* validator errors in the latest fdinfo */
	struct dac_tk_holder *holders;	/* every (pid, fd), sorted */
	size_t nholders;
	struct dac_tk_engine *engines;
	size_t nengines;
	struct dac_tk_region *regions;
	size_t nregions;
	uint64_t first_ns;		/* time of the first sample seeing it */
	uint64_t seen_ns;		/* when it was read in the latest sample */
	uint64_t prev_seen_ns;		/* ... and in the sample before */
	uint64_t interval_ns;		/* of the last utilisation; 0: none yet */
	/* private: */
	uint64_t key_id;		/* client id, or pid << 32 | fd without one */
	unsigned int gen;
	size_t cap_holders, cap_engines, cap_regions;
};

/* An aggregate over clients: one per (device, engine) and (device, region). */
struct dac_tk_agg_engine {
	dev_t rdev;
	const char *name;		/* borrowed from a client */
	uint64_t busy_ns;		/* sum of reported busy counters */
	uint64_t d_busy_ns;
	uint64_t cycles, d_cycles;	/* sum of reported cycles */
	bool has_busy, has_cycles;	/* some client printed it */
	double util;			/* sum of client utils; NaN if none known */
	size_t nclients;
};

struct dac_tk_agg_region {
	dev_t rdev;
	const char *name;		/* borrowed from a client */
	uint64_t total, shared, resident, purgeable, active;
	/* some client printed it (else the sum is 0 for nothing printed) */
	bool has_total, has_shared, has_resident, has_purgeable, has_active;
};

struct dac_tk_agg {
	struct dac_tk_agg_engine *engines;
	size_t nengines;
	struct dac_tk_agg_region *regions;
	size_t nregions;
	size_t cap_engines, cap_regions;
};

struct dac_tk_process {
	pid_t pid;
	char *comm;
	size_t *clients;	/* indices into the client list, each once */
	size_t nclients;
	struct dac_tk_agg agg;
};

struct dac_tracker;

struct dac_tracker *dac_tracker_new(void);
void dac_tracker_free(struct dac_tracker *t);

/* Start a sample at @now_ns (CLOCK_MONOTONIC ns; must not go backwards). */
int dac_tracker_begin(struct dac_tracker *t, uint64_t now_ns);
/*
 * One observation of the current sample. @fi must be a parsed DRM fdinfo;
 * the tracker copies what it needs. Returns 0, -EINVAL (no sample begun,
 * NULL fi) or -ENOMEM (the tracker stays consistent).
 */
int dac_tracker_add(struct dac_tracker *t, pid_t pid, int fd, const char *comm, dev_t rdev,
		    const struct dac_fdinfo *fi);
/*
 * Same, with the time @read_ns (CLOCK_MONOTONIC ns) at which this fdinfo was
 * read. A client's utilisation interval is then the time between its own
 * reads in the two samples (first read per sample counts) instead of the
 * time between the samples' begin calls, which removes the error of a walk
 * that takes longer in one sample than in the other.
 */
int dac_tracker_add_at(struct dac_tracker *t, pid_t pid, int fd, const char *comm, dev_t rdev,
		       const struct dac_fdinfo *fi, uint64_t read_ns);
/*
 * Set the cgroup path of client @client_id of device @rdev, added in this
 * sample (NULL: unknown). 0, -ENOENT (no such client), -ENOMEM.
 */
int dac_tracker_set_cgroup(struct dac_tracker *t, dev_t rdev, uint64_t client_id,
			   const char *path);
/*
 * Ends the sample: forgets clients not seen in it, computes utilisation
 * against the previous sample and rebuilds the process and total views.
 * Returns 0 or -ENOMEM.
 */
int dac_tracker_end(struct dac_tracker *t);

/*
 * An observation as the /proc walkers make it: a DRM fd whose driver
 * prints no usage stats (dac_fdinfo_stats() NONE: no drm- key) is no
 * client and is counted (dac_tracker_nostats()); any other is added with
 * dac_tracker_add_at(). Returns as that.
 */
int dac_tracker_add_fd(struct dac_tracker *t, pid_t pid, int fd, const char *comm, dev_t rdev,
		       const struct dac_fdinfo *fi, uint64_t read_ns);
/* DRM fds without usage stats seen in the latest sample (dac_tracker_add_fd()). */
uint64_t dac_tracker_nostats(const struct dac_tracker *t);

/*
 * Convenience: one whole sample from a /proc walk. Parses each fdinfo with
 * @profile and feeds it to dac_tracker_add_fd(). @st may be NULL. Returns
 * 0 or -errno (from the walk or the tracker).
 */
int dac_tracker_sample_proc(struct dac_tracker *t, struct dac_discover *d,
			    enum dac_profile profile, uint64_t now_ns,
			    struct dac_discover_stats *st);

/* Views, valid until the next dac_tracker_begin()/free. */
size_t dac_tracker_nclients(const struct dac_tracker *t);
const struct dac_tk_client *dac_tracker_client(const struct dac_tracker *t, size_t i);
size_t dac_tracker_nprocs(const struct dac_tracker *t);
const struct dac_tk_process *dac_tracker_proc(const struct dac_tracker *t, size_t i);
const struct dac_tk_agg *dac_tracker_totals(const struct dac_tracker *t);
uint64_t dac_tracker_interval_ns(const struct dac_tracker *t);	/* 0: first sample */
uint64_t dac_tracker_samples(const struct dac_tracker *t);

const struct dac_tk_engine *dac_tk_client_engine(const struct dac_tk_client *c, const char *name);
const struct dac_tk_region *dac_tk_client_region(const struct dac_tk_client *c, const char *name);
const struct dac_tk_agg_engine *dac_tk_agg_engine(const struct dac_tk_agg *a, dev_t rdev,
						 const char *name);
const struct dac_tk_agg_region *dac_tk_agg_region(const struct dac_tk_agg *a, dev_t rdev,
						 const char *name);

/* Monotonic clock in ns. */
uint64_t dac_now_ns(void);

/*
 * Testing only: make the Nth (0-based) allocation of the tracker from now on
 * fail; -1 disables. Lets the unit tests walk every -ENOMEM path.
 */
void dac_tracker_test_fail_alloc(long nth);

#endif /* DRMACCT_TRACKER_H */
