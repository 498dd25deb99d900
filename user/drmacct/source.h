/* SPDX-License-Identifier: MIT */
/*
 * source.h - where list, top and record take their clients from: the BPF
 * client table when the pinned collection runs (no /proc walk), else the
 * /proc walk.
 */
#ifndef DRMACCT_SOURCE_H
#define DRMACCT_SOURCE_H

#include <stdbool.h>

#include "cli.h"
#include "discover.h"
#include "tracker.h"

/*
 * Open the /proc walk described by @o; on failure prints "cannot open
 * <proc root>: <why>" and returns NULL.
 */
struct dac_discover *cli_open_discover(const char *cmd, const struct dac_discover_opts *o);

/*
 * Open the /proc walk described by @o and a tracker (list, top). Prints why
 * on failure and returns -1; 0 on success.
 */
int cli_open_tracker(const char *cmd, const struct dac_discover_opts *o,
		     struct dac_discover **d, struct dac_tracker **t);

struct dac_bpf;

/*
 * Pick the source: *@b is the open BPF collection, or NULL for /proc.
 * @proc_only: options only /proc serves (--pid, --proc-root). Returns 0, or
 * -1 after printing why --source=bpf cannot be used.
 */
int cli_source_open(const char *cmd, enum cli_source src, bool proc_only, struct dac_bpf **b);
/* One tracker sample from @b, or from the /proc walk @d when @b is NULL. */
int cli_source_sample(struct dac_bpf *b, struct dac_tracker *t, struct dac_discover *d,
		      enum dac_profile profile, struct dac_discover_stats *st);
/* "BPF client table (no /proc walk)" or "/proc fdinfo". */
const char *cli_source_name(const struct dac_bpf *b);

/*
 * --cgroup=PATH of list/top: only clients opened in cgroup PATH or below.
 * The BPF client table knows each opener's cgroup; /proc does not: an
 * error without @b. Returns 0 or -1 (said why).
 */
int cli_source_cgroup(const char *cmd, struct dac_bpf *b, const char *path);

/*
 * Where list and top sample from: cli_source_open() for @src (--pid and
 * --proc-root in @o are options only /proc serves), then cli_open_tracker()
 * for @o. Prints why and returns -1 with nothing left open; 0 on success.
 */
int cli_open_sampler(const char *cmd, enum cli_source src, const struct dac_discover_opts *o,
		     struct dac_bpf **b, struct dac_discover **d, struct dac_tracker **t);
/* Close what cli_open_sampler() or cli_open_tracker() opened; NULLs are fine. */
void cli_close_sampler(struct dac_bpf *b, struct dac_discover *d, struct dac_tracker *t);

#endif /* DRMACCT_SOURCE_H */
