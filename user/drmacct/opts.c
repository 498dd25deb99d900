// SPDX-License-Identifier: MIT
/*
 * opts.c - the option grammar every drmacct command shares: usage errors,
 * strict numbers, durations, and the options several commands take.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "duration.h"

static void vmsg(const char *cmd, const char *fmt, va_list ap)
{
	fprintf(stderr, "drmacct %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'drmacct %s --help'.\n", cmd);
	return CLI_EXIT_USAGE;
}

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, fmt, ap);
	va_end(ap);
}

int cli_getopt_error(const char *cmd, char **argv, int ret)
{
	const char *arg = optind > 0 ? argv[optind - 1] : NULL;

	if (arg && !strncmp(arg, "--", 2)) {
		if (ret == ':')
			return cli_usage_error(cmd, "option '%s' needs an argument", arg);
		return cli_usage_error(cmd, "unknown option or unexpected argument: '%s'", arg);
	}
	if (ret == ':')
		return cli_usage_error(cmd, "option '-%c' needs an argument", optopt);
	if (optopt > 32 && optopt < 127)
		return cli_usage_error(cmd, "unknown option '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option '%s'", arg ? arg : "?");
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int cli_parse_duration(const char *s, uint64_t *ns)
{
	return dac_parse_duration(s, ns);
}

int cli_opt_duration(const char *cmd, const char *opt, const char *arg, uint64_t min_ns,
		     uint64_t max_ns, bool zero_ok, uint64_t *ns)
{
	char lo[32], hi[32];
	uint64_t v;

	if (!cli_parse_duration(arg, &v) && ((!v && zero_ok) || (v >= min_ns && v <= max_ns))) {
		*ns = v;
		return 0;
	}
	return cli_usage_error(cmd, "bad %s '%s': a duration from %s to %s%s, e.g. 500ms, 2s, "
			       "1m (a bare number is seconds)", opt, arg,
			       cli_fmt_duration(min_ns, lo, sizeof(lo)),
			       cli_fmt_duration(max_ns, hi, sizeof(hi)), zero_ok ? ", or 0" : "");
}

int cli_opt_interval(const char *cmd, const char *arg, bool zero_ok, uint64_t *ns)
{
	return cli_opt_duration(cmd, "interval", arg, CLI_INTERVAL_MIN_NS, CLI_INTERVAL_MAX_NS,
				zero_ok, ns);
}

const char *cli_fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns && !(ns % 3600000000000ull))
		snprintf(buf, len, "%lluh", (unsigned long long)(ns / 3600000000000ull));
	else if (ns && !(ns % 60000000000ull))
		snprintf(buf, len, "%llum", (unsigned long long)(ns / 60000000000ull));
	else if (!(ns % 1000000000ull))
		snprintf(buf, len, "%llus", (unsigned long long)(ns / 1000000000ull));
	else if (!(ns % 1000000ull))
		snprintf(buf, len, "%llums", (unsigned long long)(ns / 1000000ull));
	else
		snprintf(buf, len, "%.9gs", (double)ns / 1e9);
	return buf;
}

int cli_opt_source(const char *cmd, const char *arg, enum cli_source *out)
{
	if (!strcmp(arg, "auto"))
		*out = CLI_SOURCE_AUTO;
	else if (!strcmp(arg, "bpf"))
		*out = CLI_SOURCE_BPF;
	else if (!strcmp(arg, "proc"))
		*out = CLI_SOURCE_PROC;
	else
		return cli_usage_error(cmd, "--source: '%s' is not auto, bpf or proc", arg);
	return 0;
}

int cli_check_source_conflict(const char *cmd, enum cli_source src,
			      const struct dac_discover_opts *o)
{
	if (src == CLI_SOURCE_BPF && (o->pid || o->proc_root))
		return cli_usage_error(cmd, "--source=bpf cannot be combined with %s",
				       o->pid ? "--pid" : "--proc-root");
	return 0;
}

int cli_opt_pid(const char *cmd, const char *arg, pid_t *out)
{
	uint64_t v;

	if (cli_parse_u64(arg, &v) || !v || v > 0x7fffffff)
		return cli_usage_error(cmd, "bad pid '%s'", arg);
	*out = (pid_t)v;
	return 0;
}

int cli_opt_spec(const char *cmd, const char *arg, enum dac_profile *out)
{
	if (dac_profile_parse(arg, out))
		return cli_usage_error(cmd, "unknown spec '%s' (use 'current' or '2022')", arg);
	return 0;
}

int cli_opt_proc_root(const char *cmd, const char *arg, const char **out)
{
	if (!*arg)
		return cli_usage_error(cmd, "--proc-root needs a directory");
	*out = arg;
	return 0;
}

static const char *const sort_names[CLI_SORT__COUNT] = { "util", "mem", "pid", "id" };

int cli_parse_sort(const char *s, enum cli_sort *out)
{
	int i;

	for (i = 0; i < CLI_SORT__COUNT; i++)
		if (!strcmp(s, sort_names[i])) {
			*out = (enum cli_sort)i;
			return 0;
		}
	return -EINVAL;
}

const char *cli_sort_name(enum cli_sort s)
{
	return (unsigned int)s < CLI_SORT__COUNT ? sort_names[s] : "?";
}

int cli_opt_sort(const char *cmd, const char *arg, enum cli_sort *out)
{
	if (cli_parse_sort(arg, out))
		return cli_usage_error(cmd, "unknown sort key '%s' (util, mem, pid, id)", arg);
	return 0;
}

int cli_common_opt(const char *cmd, const struct cli_common_opts *co, char **argv, int c)
{
	int ret = -1;

	switch (c) {
	case 'P':
		if (co->pid)
			ret = cli_opt_pid(cmd, optarg, co->pid);
		break;
	case 'S':
		if (co->profile)
			ret = cli_opt_spec(cmd, optarg, co->profile);
		break;
	case 'R':
		if (co->proc_root)
			ret = cli_opt_proc_root(cmd, optarg, co->proc_root);
		break;
	case 'O':
		if (co->source)
			ret = cli_opt_source(cmd, optarg, co->source);
		break;
	case 'h':
		if (co->usage) {
			co->usage(stdout);
			return CLI_EXIT_OK;
		}
		break;
	default:
		break;
	}
	if (ret < 0)
		return cli_getopt_error(cmd, argv, c);
	return ret ? CLI_EXIT_USAGE : CLI_OPT_NEXT;
}

int cli_opt_count(const char *cmd, const char *arg, uint64_t *out)
{
	if (cli_parse_u64(arg, out) || !*out)
		return cli_usage_error(cmd, "bad count '%s' (a number >= 1)", arg);
	return 0;
}
