/* SPDX-License-Identifier: MIT */
/*
 * cli.h - shared pieces of the drmacct command line tool.
 *
 * Subcommands register themselves with DRMACCT_COMMAND() in their own .c
 * file; main.c finds every registered command through the linker-built
 * section "drmacct_cmds", so adding a subcommand needs no edit elsewhere.
 *
 * Exit codes of every subcommand: 0 success, 1 failure (including spec errors
 * found by validate), 2 usage error (always with a message on stderr).
 * Commands that run a command (stat, record) exit with that command's
 * status instead, as a shell does: see cli_exec_status(), cli_wait_status().
 * check exits 4 when it had nothing to compare.
 */
#ifndef DRMACCT_CLI_H
#define DRMACCT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "discover.h"
#include "fdinfo.h"
#include "tracker.h"

/* Set by the Makefile (VERSION=); the fallback for builds that do not. */
#ifndef DRMACCT_VERSION
#define DRMACCT_VERSION "0.1"
#endif

#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2
/* check, validate --all: there was nothing to check (kselftest's "skip"). */
#define CLI_EXIT_NOTHING	4
/* Standard output's reader went away: as if SIGPIPE had ended us, quietly. */
#define CLI_EXIT_PIPE	141

struct drmacct_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the command name */
	const char *summary;
};

#define DRMACCT_COMMAND(id, fn, text)					\
	static const struct drmacct_cmd drmacct_cmd_##id		\
	__attribute__((used, section("drmacct_cmds"),			\
		       aligned(__alignof__(struct drmacct_cmd)))) = {	\
		.name = #id, .run = fn, .summary = text,		\
	}

/*
 * Exit status for a command that could not be started, as a shell has it:
 * 127 when execvp() said ENOENT (not found), else 126 (found, not runnable).
 */
int cli_exec_status(int err);
/* Exit status of a waited-for command: its own, or 128 + the signal. */
int cli_wait_status(int wstatus);

/* Prints "drmacct CMD: <msg>" and a hint to --help on stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "drmacct CMD: <msg>" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Report a getopt_long() failure: @ret is what it returned (':' missing
 * argument, '?' unknown option); shortopts must start with ':'. Returns 2.
 */
int cli_getopt_error(const char *cmd, char **argv, int ret);

/* Strict parsers: whole string, no sign, no overflow. 0 or -EINVAL/-ERANGE. */
int cli_parse_u64(const char *s, uint64_t *out);
/*
 * A duration: a decimal number (digits, at most one '.') with an optional
 * unit ms, s, m or h; a bare number is seconds. 0 or -EINVAL/-ERANGE.
 * dac_parse_duration() of libdrmacct (duration.h).
 */
int cli_parse_duration(const char *s, uint64_t *ns);
/* "500ms", "2s", "1m", "1h", "1.5s": the shortest exact form. */
const char *cli_fmt_duration(uint64_t ns, char *buf, size_t len);

/* Every --interval: 1ms to 1h (list also takes 0: one sample). */
#define CLI_INTERVAL_MIN_NS	1000000ull
#define CLI_INTERVAL_MAX_NS	3600000000000ull
/*
 * A duration option @opt ("interval", "duration") between @min_ns and
 * @max_ns (0 also when @zero_ok): 0, or the usage error (2) printed.
 */
int cli_opt_duration(const char *cmd, const char *opt, const char *arg, uint64_t min_ns,
		     uint64_t max_ns, bool zero_ok, uint64_t *ns);
/* -n/--count (top, record): N >= 1. */
int cli_opt_count(const char *cmd, const char *arg, uint64_t *out);
/* --interval, the same for every command. */
int cli_opt_interval(const char *cmd, const char *arg, bool zero_ok, uint64_t *ns);

/*
 * Option arguments shared by several subcommands. Each parses @arg into *@out
 * and returns 0, or prints the usage error and returns CLI_EXIT_USAGE.
 */
int cli_opt_pid(const char *cmd, const char *arg, pid_t *out);		/* --pid */
int cli_opt_spec(const char *cmd, const char *arg, enum dac_profile *out);	/* --spec */
int cli_opt_proc_root(const char *cmd, const char *arg, const char **out);	/* --proc-root */

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

/*
 * Text from fdinfo or /proc (comm, driver, names, finding messages) is data
 * any process controls. Before it goes to a terminal: @s itself when it is
 * printable UTF-8, else a copy in @buf (cut to @len - 1 bytes) with every
 * C0/C1 control, DEL and byte that is not well-formed UTF-8 shown as '?',
 * so no escape sequence or newline of a process name can reach the terminal
 * or break a table line. NULL gives "".
 * JSON output keeps the exact bytes (escaped) instead.
 */
const char *cli_printable(const char *s, char *buf, size_t len);
#define CLI_PRINTABLE_MAX 256

/* Bytes as "0", "512", "8.0K", "1.5M", "2.0G" (binary units). */
const char *cli_fmt_bytes(uint64_t b, char *buf, size_t len);

enum cli_sort {
	CLI_SORT_UTIL = 0,	/* busiest first (max over engines) */
	CLI_SORT_MEM,		/* most memory first */
	CLI_SORT_PID,
	CLI_SORT_ID,
	CLI_SORT__COUNT
};

int cli_parse_sort(const char *s, enum cli_sort *out);
/* --sort: like cli_opt_pid(). */
int cli_opt_sort(const char *cmd, const char *arg, enum cli_sort *out);
const char *cli_sort_name(enum cli_sort s);

/* Utilisation summary of a client: max over its engines, -1 when unknown. */
double cli_client_util(const struct dac_tk_client *c);
/* Memory of a client: sum over regions of total (or resident). */
uint64_t cli_client_mem(const struct dac_tk_client *c);
uint64_t cli_agg_mem(const struct dac_tk_agg *a);
double cli_agg_util(const struct dac_tk_agg *a);

/* Client indices in display order; caller frees. NULL on ENOMEM. */
size_t *cli_sorted_clients(const struct dac_tracker *t, enum cli_sort key, bool reverse);
size_t *cli_sorted_procs(const struct dac_tracker *t, enum cli_sort key, bool reverse);

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

/*
 * The end of a command's output to stdout: @ret is how writing it went (0 or
 * -errno); stdout is flushed too. When either failed, says "writing the
 * output failed" on stderr. Returns 0 or a negative errno.
 */
int cli_output_done(const char *cmd, int ret);
/*
 * A write that failed with @err (-errno, or 0 to look at errno): true when it
 * was EPIPE (the reader of standard output went away). Then nothing is said
 * and main() exits with CLI_EXIT_PIPE.
 */
bool cli_write_failed_epipe(int err);
/* Flushes stdout; true when a write to it ever failed with EPIPE. */
bool cli_stdout_closed(void);

/*
 * Open output file @path for writing, "-" = stdout. @binary: refuse a
 * terminal. NULL with *@rc set (1: cannot create, 2: terminal) and the
 * message printed.
 */
FILE *cli_open_output(const char *cmd, const char *path, bool binary, int *rc);

/* Print the discovery shortfall (if any) as a note on stderr. */
void cli_note_discovery(const char *cmd, const struct dac_discover_stats *st);

/*
 * Where list and top take their clients from (user/drmacct/bpf.c): the BPF
 * client table when the pinned collection runs (no /proc walk), else /proc.
 */
struct dac_bpf;

enum cli_source {
	CLI_SOURCE_AUTO = 0,	/* BPF when it runs and is readable, else /proc */
	CLI_SOURCE_BPF,
	CLI_SOURCE_PROC,
};

/* --source=bpf with --pid or --proc-root: the usage error (2), else 0. */
int cli_check_source_conflict(const char *cmd, enum cli_source src,
			      const struct dac_discover_opts *o);
/* --source: like cli_opt_pid(). */
int cli_opt_source(const char *cmd, const char *arg, enum cli_source *out);
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
 * Where list and top sample from: cli_source_open() for @src (--pid and
 * --proc-root in @o are options only /proc serves), then cli_open_tracker()
 * for @o. Prints why and returns -1 with nothing left open; 0 on success.
 */
/*
 * --cgroup=PATH of list/top: only clients opened in cgroup PATH or below.
 * The BPF client table knows each opener's cgroup; /proc does not: an
 * error without @b. Returns 0 or -1 (said why).
 */
int cli_source_cgroup(const char *cmd, struct dac_bpf *b, const char *path);

int cli_open_sampler(const char *cmd, enum cli_source src, const struct dac_discover_opts *o,
		     struct dac_bpf **b, struct dac_discover **d, struct dac_tracker **t);
/* Close what cli_open_sampler() or cli_open_tracker() opened; NULLs are fine. */
void cli_close_sampler(struct dac_bpf *b, struct dac_discover *d, struct dac_tracker *t);

/*
 * The options several subcommands share, handled in one place: each field
 * points at where the command keeps the value, NULL when the command does
 * not take that option. Long options map to these getopt values:
 * --pid 'P', --spec 'S', --proc-root 'R', --source 'O', --help / -h 'h'.
 */
struct cli_common_opts {
	pid_t *pid;			/* --pid */
	enum dac_profile *profile;	/* --spec */
	const char **proc_root;		/* --proc-root */
	enum cli_source *source;	/* --source */
	void (*usage)(FILE *f);		/* --help: printed to stdout */
};

/* cli_common_opt(): @c was a shared option, parsed; go on with getopt. */
#define CLI_OPT_NEXT	(-1)

/*
 * The default: branch of a subcommand's getopt_long() switch. Parses @c
 * when it is one of the shared options @co takes and returns CLI_OPT_NEXT;
 * after --help returns CLI_EXIT_OK; on a bad argument, an option @co does
 * not take or a getopt failure prints why and returns CLI_EXIT_USAGE.
 */
int cli_common_opt(const char *cmd, const struct cli_common_opts *co, char **argv, int c);

#endif /* DRMACCT_CLI_H */
