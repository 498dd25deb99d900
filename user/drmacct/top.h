/* SPDX-License-Identifier: MIT */
/*
 * top.h - `drmacct top`: its state, shared by the command (top.c: options,
 * sampling, the terminal) and the screen it draws (topview.c).
 */
#ifndef DRMACCT_TOP_H
#define DRMACCT_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "tracker.h"

struct dac_bpf;

struct top {
	struct dac_tracker *t;
	struct dac_discover *d;
	struct dac_bpf *bpf;		/* clients from BPF; NULL: /proc */
	struct dac_discover_stats st;
	enum dac_profile profile;
	enum cli_sort sort;
	bool reverse, procs, keys;
	uint64_t interval;
	uint64_t count;		/* 0: forever */
	uint64_t shown;
	bool quit;
	/* the full-screen view */
	size_t scroll;		/* first body line shown */
	size_t body_rows;	/* body lines that fit at the last draw (PgUp/PgDn) */
	bool hide_idle;		/* 'i': only clients with utilisation > 0 */
	bool detail;		/* 'd': a line per engine under each entry */
	bool cmdline;		/* 'c': the full command line instead of comm */
	bool cgroup;		/* 'C': a cgroup v2 column */
	const char *proc_root;	/* where cmdline and cgroup are read; NULL: /proc */
	bool editing;		/* '/': typing a filter */
	char filter[64];	/* pid, or part of comm, driver or device name */
	char edit[64];
	/*
	 * The engine columns in a fixed order: every pair of engines a client
	 * printed one after the other is an edge (@before: pairs of names of
	 * @eng), and the columns follow the edges, ties by name. Which client
	 * was seen first, a sort key, a client coming and going never move a
	 * column.
	 */
	char **eng;
	size_t neng, cap_eng;
	const char *(*before)[2];
	size_t nbefore, cap_before;
};

/* ---- the screen as a grid of cells (topview.c) ---- */

/* Cell attributes; the bar levels become colours where there are any. */
#define TV_BOLD		0x01
#define TV_REVERSE	0x02
#define TV_DIM		0x04
#define TV_LOW		0x08	/* utilisation below 50 % */
#define TV_MID		0x10	/* 50 % to 80 % */
#define TV_HIGH		0x20	/* 80 % and more */

struct tv_cell {
	uint32_t ch;		/* a code point; 0: the right half of a wide one */
	uint8_t attr;
};

struct tv_grid {
	int rows, cols;
	bool unicode;		/* the terminal shows UTF-8: block bars, names as they are */
	struct tv_cell *c;	/* rows x cols */
};

/* Remember the engine names of the latest sample and their order (top->eng). 0 or -ENOMEM. */
int top_note_engines(struct top *tp);
void top_free_engines(struct top *tp);

/*
 * Draw the whole screen of @tp into @g (rows, cols and unicode set, cells
 * allocated by the caller): title, keys, one line per device (its busiest
 * engine, every engine's utilisation summed over its clients and capped
 * at 100 %, memory per region), the table (PID, COMM, ..., GPU: the
 * client's busiest engine, MEMORY, a column per engine, "+N" when N engine
 * columns do not fit), the footer. Sets tp->body_rows and clamps
 * tp->scroll.
 */
void top_render(struct top *tp, struct tv_grid *g);

/*
 * The device summary lines of top's snapshots (batch mode): the same
 * numbers as the screen's, as text, one line per device, to @f.
 */
void top_print_devices(FILE *f, const struct dac_tracker *t);

#endif /* DRMACCT_TOP_H */
