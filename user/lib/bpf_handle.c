// SPDX-License-Identifier: MIT
/*
 * bpf_handle.c - the collection handle every other BPF file works on: its
 * allocation and release, libbpf's log, error texts, and the small helpers
 * they share (see bpf_priv.h). Depends on nothing else of ours.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "../../bpf/drmacct_bpf.h"
#include "drmacct.skel.h"

/*
 * What libbpf says. Its warnings (a failed program load among them, with
 * the verifier's log) are kept, the last DAC_LOAD_LOG_MAX bytes, for
 * dac_bpf_load_log(): the library itself prints nothing. With verbose on
 * (dac_bpf_set_verbose(), or DRMACCT_BPF_DEBUG in the environment)
 * everything, info and debug included, goes to stderr as it comes instead.
 */
#define DAC_LOAD_LOG_MAX	16384

static char load_log[DAC_LOAD_LOG_MAX + 1];
static size_t load_log_len;
static int verbose = -1;

void dac_bpf_set_verbose(bool on)
{
	verbose = on;
}

static bool is_verbose(void)
{
	if (verbose < 0)
		verbose = getenv("DRMACCT_BPF_DEBUG") != NULL;
	return verbose;
}

const char *dac_bpf_load_log(void)
{
	return load_log;
}

const char *dac_bpf_log_tail(const char *log, int lines)
{
	const char *p = log + strlen(log);
	int n = 0;

	if (p > log && p[-1] == '\n')
		p--;
	while (p > log && n < lines) {
		p--;
		if (*p == '\n')
			n++;
	}
	return *p == '\n' ? p + 1 : p;
}

void dac_bpf_load_log_reset(void)
{
	load_log_len = 0;
	load_log[0] = '\0';
}

/* Append @text, keeping the newest DAC_LOAD_LOG_MAX bytes from a line start. */
void dac_bpf_load_log_add(const char *text, size_t n)
{
	if (n > DAC_LOAD_LOG_MAX) {
		text += n - DAC_LOAD_LOG_MAX;
		n = DAC_LOAD_LOG_MAX;
	}
	if (load_log_len + n > DAC_LOAD_LOG_MAX) {
		size_t drop = load_log_len + n - DAC_LOAD_LOG_MAX;
		const char *nl = memchr(load_log + drop, '\n', load_log_len - drop);

		if (nl)
			drop = (size_t)(nl + 1 - load_log);
		drop = drop < load_log_len ? drop : load_log_len;
		memmove(load_log, load_log + drop, load_log_len - drop);
		load_log_len -= drop;
	}
	memcpy(load_log + load_log_len, text, n);
	load_log_len += n;
	load_log[load_log_len] = '\0';
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	va_list aq;
	int n;

	if (is_verbose())
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN)
		return 0;
	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	if (n < 0)
		return n;
	if ((size_t)n < sizeof(buf)) {
		dac_bpf_load_log_add(buf, (size_t)n);
	} else {
		char *big = malloc((size_t)n + 1);

		if (!big)
			return -ENOMEM;
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		dac_bpf_load_log_add(big, (size_t)n);
		free(big);
	}
	return n;
}

void dac_bpf_log_to_buffer(void)
{
	libbpf_set_print(libbpf_print);
}

struct dac_bpf *dac_bpf_alloc(void)
{
	struct dac_bpf *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	for (int i = 0; i < M__COUNT; i++)
		b->fd[i] = -1;
	return b;
}

void dac_bpf_close(struct dac_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->rb);
	if (b->skel) {
		drmacct_bpf__destroy(b->skel);	/* owns the map fds */
	} else {
		for (int i = 0; i < M__COUNT; i++)
			if (b->fd[i] >= 0)
				close(b->fd[i]);
	}
	free(b->eng);
	free(b->reg);
	free(b->rings);
	free(b->learned);
	free(b->pin_dir);
	free(b->cgroup_filter);
	for (size_t i = 0; i < b->ncg; i++)
		free(b->cg_paths[i]);
	free(b->cg_ids);
	free(b->cg_paths);
	free(b);
}

const char *dac_bpf_strerror(int err)
{
	switch (err) {
	case -ENOENT:
		return "BPF collection not running (start it with `drmacct bpf start`)";
	case -EACCES:
	case -EPERM:
		if (geteuid())
			return "permission denied: the pinned BPF maps are root-only (run as root)";
		return "permission denied by the kernel, although root "
		       "(kernel lockdown or a security module?)";
	case -EEXIST:
		return "a BPF collection is already pinned there";
	case -ESTALE:
		return "an older drmacct collection is pinned (another map layout): "
		       "run `drmacct bpf stop`, then start it again";
	case -ENODEV:
		return "no tracepoints to attach to (drmacct and gpu_sched modules not loaded)";
	case -EPROTO:
		return "a tracepoint's record layout is not the one the programs read "
		       "(plain tracepoints on another kernel version); try --attach btf";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

const char *dac_bpf_load_strerror(int err)
{
	switch (err) {
	case -EPERM:
		if (geteuid())
			return "loading BPF programs needs root (or CAP_BPF with CAP_PERFMON)";
		return "the kernel does not allow BPF programs here, although root "
		       "(kernel lockdown or a security module?)";
	case -EACCES:
		if (geteuid())
			return "loading BPF programs needs root (or CAP_BPF with CAP_PERFMON)";
		return "the kernel's BPF verifier refused a program";
	case -E2BIG:
		return "a program is too large or too complex for this kernel's verifier";
	case -ENOENT:
	case -ESRCH:
		return "a tracepoint or kernel type the programs need is missing on this kernel";
	case -ENODEV:
	case -EPROTO:
		return dac_bpf_strerror(err);
	default:
		return strerror(err < 0 ? -err : err);
	}
}

uint64_t dac_bpf_stat_get(struct dac_bpf *b, uint32_t which)
{
	uint64_t v = 0;

	bpf_map_lookup_elem(b->fd[M_STATS], &which, &v);
	return v;
}


int dac_bpf_join(char *buf, size_t len, const char *a, const char *b, const char *c)
{
	int n = snprintf(buf, len, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int dac_bpf_info(struct dac_bpf *b, struct dac_bpf_info *info)
{
	*info = b->info;
	return 0;
}

bool dac_bpf_kernel_is_rt(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "re");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == '1';
}

bool dac_bpf_sweep_timer_ok(void)
{
	return !dac_bpf_kernel_is_rt();
}
