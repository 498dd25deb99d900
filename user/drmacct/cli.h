/* SPDX-License-Identifier: MIT */
/*
 * cli.h - shared pieces of the drmacct command line tool.
 *
 * Subcommands register themselves with DRMACCT_COMMAND() in their own .c
 * file; main.c finds every registered command through the linker-built
 * section "drmacct_cmds", so adding a subcommand needs no edit elsewhere.
 *
 * The layers below the command files, each using only those under it:
 *   cli.h (opts.c)        messages, the option grammar
 *   output.h, procinfo.h  what goes to stdout/stderr, exit statuses; /proc
 *                         command lines and cgroups
 *   order.h               per-client summaries, display order
 *   source.h              where list/top/record sample from: BPF or /proc
 *   tracker_json.h,       the drmacct-list JSON document and the text table
 *   view.h
 * Command files (list.c, top.c, bpf.c, ...) use these and never each other.
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

/* Where list and top take their clients from: source.h. */
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
