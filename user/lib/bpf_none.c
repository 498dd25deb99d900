// SPDX-License-Identifier: MIT
/*
 * bpf_none.c - the BPF collection's entry points in a build without it
 * (make BPF=0: no libbpf, libelf, clang or bpftool). Every call that
 * would load, open or read the collection fails with -EOPNOTSUPP, which
 * dac_bpf_strerror() and dac_bpf_load_strerror() explain; so `list`, `top`,
 * `stat` and `record` use /proc, and `bpf` and `check` say why they cannot
 * run. Built instead of bpf*.c, never with them (see the Makefile).
 */
#include <errno.h>
#include <stddef.h>

#include "bpf.h"

static const char no_bpf[] = "drmacct was built without BPF support (BPF=0)";

int dac_bpf_load(const struct dac_bpf_load_opts *opts, struct dac_bpf **out)
{
	(void)opts;
	*out = NULL;
	return -EOPNOTSUPP;
}

const char *dac_bpf_load_log(void)
{
	return "";
}

const char *dac_bpf_log_tail(const char *log, int lines)
{
	(void)lines;
	return log;
}

void dac_bpf_set_verbose(bool on)
{
	(void)on;
}

const char *dac_bpf_load_strerror(int err)
{
	(void)err;
	return no_bpf;
}

const char *dac_bpf_strerror(int err)
{
	(void)err;
	return no_bpf;
}

int dac_bpf_pin(struct dac_bpf *b, const char *dir)
{
	(void)b, (void)dir;
	return -EOPNOTSUPP;
}

int dac_bpf_unpin(const char *dir)
{
	(void)dir;
	return -EOPNOTSUPP;
}

int dac_bpf_open_pinned(const char *dir, struct dac_bpf **out)
{
	(void)dir;
	*out = NULL;
	return -EOPNOTSUPP;
}

/* No handle can exist: dac_bpf_load() and dac_bpf_open_pinned() give none. */
void dac_bpf_close(struct dac_bpf *b)
{
	(void)b;
}

const char *dac_bpf_ring_identity_name(enum dac_bpf_ring_identity id)
{
	(void)id;
	return "none";
}

int dac_bpf_info(struct dac_bpf *b, struct dac_bpf_info *info)
{
	(void)b;
	(void)info;
	return -EOPNOTSUPP;
}

int dac_bpf_poll(struct dac_bpf *b, int timeout_ms, dac_bpf_event_fn cb, void *ctx)
{
	(void)b;
	(void)timeout_ms;
	(void)cb;
	(void)ctx;
	return -EOPNOTSUPP;
}

int dac_bpf_read_clients(struct dac_bpf *b, struct dac_bpf_client **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_usage(struct dac_bpf *b, uint64_t *now_ns, struct dac_bpf_usage **out,
		       size_t *n)
{
	(void)b;
	(void)now_ns;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_lookup_usage(struct dac_bpf *b, uint64_t client_id, uint32_t engine,
			 uint64_t *now_ns, struct dac_bpf_usage *out)
{
	(void)b;
	(void)client_id;
	(void)engine;
	(void)now_ns;
	(void)out;
	return -EOPNOTSUPP;
}

int dac_bpf_read_mem(struct dac_bpf *b, struct dac_bpf_mem **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_totals(struct dac_bpf *b, struct dac_bpf_total **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_sched(struct dac_bpf *b, struct dac_bpf_sched **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_cgroups(struct dac_bpf *b, struct dac_bpf_cgroup **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_sched_clients(struct dac_bpf *b, struct dac_bpf_sched_client **out,
			       size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_stats(struct dac_bpf *b, struct dac_bpf_stats *st)
{
	(void)b;
	(void)st;
	return -EOPNOTSUPP;
}

int dac_bpf_read_maps(struct dac_bpf *b, struct dac_bpf_map_stat **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_read_prog_stats(struct dac_bpf *b, struct dac_bpf_prog_stats **out, size_t *n)
{
	(void)b;
	(void)out;
	(void)n;
	return -EOPNOTSUPP;
}

int dac_bpf_track(struct dac_bpf *b, uint32_t tgid, uint64_t cookie)
{
	(void)b;
	(void)tgid;
	(void)cookie;
	return -EOPNOTSUPP;
}

int dac_bpf_untrack(struct dac_bpf *b, uint64_t cookie)
{
	(void)b;
	(void)cookie;
	return -EOPNOTSUPP;
}

int dac_bpf_read_cookie(struct dac_bpf *b, uint64_t cookie,
			struct dac_bpf_cookie_engine **eng, size_t *neng,
			struct dac_bpf_cookie_region **reg, size_t *nreg)
{
	(void)b;
	(void)cookie;
	(void)eng;
	(void)neng;
	(void)reg;
	(void)nreg;
	return -EOPNOTSUPP;
}

int dac_bpf_learn_names(struct dac_bpf *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

int dac_bpf_seed_clients(struct dac_bpf *b)
{
	(void)b;
	return -EOPNOTSUPP;
}

int dac_bpf_tracker_sample(struct dac_bpf *b, struct dac_tracker *t, size_t *nclients)
{
	(void)b;
	(void)t;
	(void)nclients;
	return -EOPNOTSUPP;
}

int dac_bpf_set_cgroup_filter(struct dac_bpf *b, const char *path)
{
	(void)b;
	(void)path;
	return -EOPNOTSUPP;
}
