/* SPDX-License-Identifier: MIT */
/*
 * tracker_json.h - the drmacct-list JSON document (list --json, top --json).
 */
#ifndef DRMACCT_TRACKER_JSON_H
#define DRMACCT_TRACKER_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "tracker.h"

/*
 * Emit the tracker state as the drmacct-list JSON document (see
 * Documentation/json-schema.rst). Returns 0 or -errno.
 */
struct cli_json_opts {
	enum cli_sort sort;	/* order of clients[] and processes[] */
	bool reverse;
	bool pretty;		/* indented; else one line (JSON lines) */
	uint64_t update;	/* top: update number, 0: not written */
	bool procinfo;		/* top: "cmdline" and "cgroup" of holders, processes */
	const char *proc_root;	/* where those are read; NULL: /proc */
};

int cli_json_tracker(FILE *f, const struct dac_tracker *t,
		     const struct dac_discover_stats *st, const struct cli_json_opts *o);

#endif /* DRMACCT_TRACKER_JSON_H */
