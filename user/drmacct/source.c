// SPDX-License-Identifier: MIT
/*
 * source.c - the BPF client table or the /proc walk (source.h).
 */
#include <errno.h>
#include <string.h>

#include "bpf.h"
#include "cli.h"
#include "source.h"

struct dac_discover *cli_open_discover(const char *cmd, const struct dac_discover_opts *o)
{
	struct dac_discover *d = dac_discover_new(o);

	if (!d)
		cli_error(cmd, "cannot open %s: %s", o->proc_root ? o->proc_root : "/proc",
			  strerror(errno));
	return d;
}

int cli_open_tracker(const char *cmd, const struct dac_discover_opts *o,
		     struct dac_discover **d, struct dac_tracker **t)
{
	*t = NULL;
	*d = cli_open_discover(cmd, o);
	if (!*d)
		return -1;
	*t = dac_tracker_new();
	if (!*t) {
		cli_error(cmd, "out of memory");
		dac_discover_free(*d);
		*d = NULL;
		return -1;
	}
	return 0;
}

int cli_open_sampler(const char *cmd, enum cli_source src, const struct dac_discover_opts *o,
		     struct dac_bpf **b, struct dac_discover **d, struct dac_tracker **t)
{
	*d = NULL;
	*t = NULL;
	if (cli_source_open(cmd, src, o->pid || o->proc_root, b))
		return -1;
	if (cli_open_tracker(cmd, o, d, t)) {
		dac_bpf_close(*b);
		*b = NULL;
		return -1;
	}
	return 0;
}

void cli_close_sampler(struct dac_bpf *b, struct dac_discover *d, struct dac_tracker *t)
{
	dac_tracker_free(t);
	dac_discover_free(d);
	dac_bpf_close(b);
}

int cli_source_open(const char *cmd, enum cli_source src, bool proc_only, struct dac_bpf **b)
{
	struct dac_bpf_info info;
	int err;

	*b = NULL;
	if (src == CLI_SOURCE_PROC)
		return 0;
	if (proc_only) {
		if (src == CLI_SOURCE_AUTO)
			return 0;
		cli_error(cmd, "--source=bpf cannot be combined with --pid or --proc-root");
		return -1;
	}
	err = dac_bpf_open_pinned(NULL, b);
	if (!err) {
		dac_bpf_info(*b, &info);
		if (info.drmacct)
			return 0;
		dac_bpf_close(*b);
		*b = NULL;
		err = -ENODEV;
	}
	if (src == CLI_SOURCE_AUTO)
		return 0;	/* /proc it is; list and top name it (cli_source_name()) */
	cli_error(cmd, "--source=bpf: %s", err == -ENODEV ?
		  "the BPF collection is not attached to drmacct's tracepoints" :
		  dac_bpf_strerror(err));
	return -1;
}

int cli_source_sample(struct dac_bpf *b, struct dac_tracker *t, struct dac_discover *d,
		      enum dac_profile profile, struct dac_discover_stats *st)
{
	if (!b)
		return dac_tracker_sample_proc(t, d, profile, dac_now_ns(), st);
	if (st)
		memset(st, 0, sizeof(*st));
	return dac_bpf_tracker_sample(b, t, NULL);
}

int cli_source_cgroup(const char *cmd, struct dac_bpf *b, const char *path)
{
	if (!path)
		return 0;
	if (!b) {
		cli_error(cmd, "--cgroup needs the BPF client table (`drmacct bpf start`, "
			  "--source=bpf): /proc does not say which cgroup opened a client");
		return -1;
	}
	if (path[0] != '/') {
		cli_error(cmd, "--cgroup: '%s' is not a cgroup v2 path (starts with /)", path);
		return -1;
	}
	if (dac_bpf_set_cgroup_filter(b, path)) {
		cli_error(cmd, "out of memory");
		return -1;
	}
	return 0;
}

const char *cli_source_name(const struct dac_bpf *b)
{
	return b ? "BPF client table (no /proc walk)" : "/proc fdinfo";
}
