/* SPDX-License-Identifier: MIT */
/*
 * view.h - plain-text rendering of the tracker state.
 */
#ifndef DRMACCT_VIEW_H
#define DRMACCT_VIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "tracker.h"

/*
 * One line per client (or per process with @per_process), followed by an
 * indented line per engine and per memory region, then a count line.
 * A client's cgroup from the BPF table is shown; with @procinfo (top) also
 * "command" (the full command line) and "cgroup" (the cgroup v2 path of
 * its first holder, when BPF did not say) from @proc_root (NULL: /proc).
 * Returns 0, or -1 when out of memory.
 */
int cli_print_table(FILE *f, const struct dac_tracker *t, enum cli_sort key, bool reverse,
		    bool per_process, bool procinfo, const char *proc_root);

#endif /* DRMACCT_VIEW_H */
