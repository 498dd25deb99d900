// SPDX-License-Identifier: MIT
/*
 * bpf_verify.c - put every program of drmacct's BPF object through this
 * kernel's verifier, one at a time, without attaching anything (see
 * dac_bpf_verify() in bpf.h).
 *
 * A program loads on its own: a fresh open of the object with only its
 * autoload on, the hash maps cut to one entry and the ring buffer to a page
 * (the verifier does not look at their sizes), so a run costs little memory
 * however large the collection's maps are. A tp_btf program needs its
 * tracepoint's BTF (btf_trace_<event>) in vmlinux or a loaded module: where
 * the kernel has none, the program is "not here" rather than refused. The
 * gpu_scheduler tp_btf programs go where the loader would attach them (the
 * 6.1 event names up to 6.16: dac_bpf_sched_target()). Plain
 * tracepoint programs need nothing at load time, so every kernel verifies
 * them all, the other kernel versions' event sets included.
 */
#include <errno.h>
#include <stdint.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "drmacct.skel.h"

#define BTF_DIR		"/sys/kernel/btf"

/* Does this kernel's BTF (vmlinux or a loaded module's) have @typedef? */
static bool kernel_has_typedef(const char *typedef_name, char *where, size_t wlen)
{
	struct btf *base, *mod;
	struct dirent *de;
	bool found = false;
	DIR *d;

	base = btf__parse(BTF_DIR "/vmlinux", NULL);
	if (!base)
		return false;
	if (btf__find_by_name_kind(base, typedef_name, BTF_KIND_TYPEDEF) > 0) {
		snprintf(where, wlen, "vmlinux");
		btf__free(base);
		return true;
	}
	d = opendir(BTF_DIR);
	while (d && !found && (de = readdir(d))) {
		char p[512];

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		snprintf(p, sizeof(p), BTF_DIR "/%s", de->d_name);
		mod = btf__parse_split(p, base);
		if (!mod)
			continue;
		if (btf__find_by_name_kind(mod, typedef_name, BTF_KIND_TYPEDEF) > 0) {
			snprintf(where, wlen, "%.*s", (int)(wlen ? wlen - 1 : 0), de->d_name);
			found = true;
		}
		btf__free(mod);
	}
	if (d)
		closedir(d);
	btf__free(base);
	return found;
}

/*
 * Where a program may load here: 0 yes, else DAC_BPF_NOT_HERE with the
 * reason in @why.
 */
static int loadable_here(const char *sec, int set, char *why, size_t wlen)
{
	char tdef[160], where[64];

	if (strncmp(sec, "tp_btf/", 7))
		return 0;
	snprintf(tdef, sizeof(tdef), "btf_trace_%s", dac_bpf_sched_target(sec + 7, set));
	if (kernel_has_typedef(tdef, where, sizeof(where)))
		return 0;
	snprintf(why, wlen, "no kernel BTF has %s (its module is not loaded, or this "
		 "kernel has no such tracepoint)", tdef);
	return DAC_BPF_NOT_HERE;
}

/*
 * The end of @log into @out: its last @max lines, or as much of their end
 * as fits, from a line start (the verifier's verdict is in the last lines).
 */
static void log_tail(const char *log, int max, char *out, size_t olen)
{
	const char *p = dac_bpf_log_tail(log, max);

	if (strlen(p) >= olen) {
		const char *nl;

		p = log + strlen(log) - (olen - 1);
		nl = strchr(p, '\n');
		if (nl && nl[1])
			p = nl + 1;
	}
	snprintf(out, olen, "%s", p);
}

static void shrink_maps(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		switch (bpf_map__type(m)) {
		case BPF_MAP_TYPE_HASH:
		case BPF_MAP_TYPE_LRU_HASH:
		case BPF_MAP_TYPE_PERCPU_HASH:
		case BPF_MAP_TYPE_LRU_PERCPU_HASH:
			bpf_map__set_max_entries(m, 1);
			break;
		case BPF_MAP_TYPE_RINGBUF:
			bpf_map__set_max_entries(m, 4096);
			break;
		default:
			break;
		}
	}
}

/*
 * The verifier's own time from a BPF_LOG_STATS log ("verification time
 * N usec", every kernel drmacct takes has it); 0 when the log has none.
 */
static uint32_t stats_time_us(const char *log)
{
	const char *p = strstr(log, "verification time ");
	unsigned long us;
	char *end;

	if (!p)
		return 0;
	p += strlen("verification time ");
	us = strtoul(p, &end, 10);
	if (end == p || strncmp(end, " usec", 5) || us > UINT32_MAX)
		return 0;
	return (uint32_t)us;
}

uint32_t dac_bpf_log_stack_bytes(const char *log, bool *is_max)
{
	const char *p = strstr(log, "stack depth ");
	unsigned long sum = 0;

	*is_max = false;
	if (!p)
		return 0;
	p += strlen("stack depth ");
	if (!strncmp(p, "max ", 4)) {
		*is_max = true;
		p += 4;
	}
	for (;;) {
		char *end;
		unsigned long d;

		if (*p < '0' || *p > '9')
			return 0;	/* strtoul() would take a sign or spaces */
		d = strtoul(p, &end, 10);
		if (d > 65536)
			return 0;
		sum += d;
		if (*end != '+' || *is_max)
			break;
		p = end + 1;
	}
	return sum > UINT32_MAX ? 0 : (uint32_t)sum;
}

/*
 * Load program @index of the object alone; fills @v. With @stats the
 * verifier writes only its statistics (BPF_LOG_STATS, a few lines) into a
 * buffer of ours: the time it took. A refusal is then loaded again
 * without, so that the verifier's words reach the load log.
 */
static int verify_one(size_t index, int set, struct dac_bpf_verdict *v, bool stats)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct drmacct_bpf *s;
	struct bpf_program *prog, *mine = NULL;
	char slog[4096] = "";
	size_t i = 0;
	int err, fd;

	s = drmacct_bpf__open();
	if (!s)
		return -errno;
	bpf_object__for_each_program(prog, s->obj) {
		bpf_program__set_autoload(prog, i == index);
		if (i == index)
			mine = prog;
		i++;
	}
	if (!mine) {
		drmacct_bpf__destroy(s);
		return -ENOENT;
	}
	shrink_maps(s->obj);
	dac_bpf_sched_retarget(s->obj, set);
	s->rodata->use_timer = dac_bpf_sweep_timer_ok();
	if (stats) {
		bpf_program__set_log_buf(mine, slog, sizeof(slog));
		bpf_program__set_log_level(mine, 4);	/* BPF_LOG_STATS */
	}
	dac_bpf_load_log_reset();
	err = bpf_object__load(s->obj);
	if (err && stats) {
		drmacct_bpf__destroy(s);
		return verify_one(index, set, v, false);
	}
	if (err) {
		v->status = err < 0 ? err : -EINVAL;
		log_tail(dac_bpf_load_log(), 12, v->why, sizeof(v->why));
		drmacct_bpf__destroy(s);
		return 0;
	}
	v->status = 0;
	v->insns = (uint32_t)bpf_program__insn_cnt(mine);
	v->verify_us = stats_time_us(slog);
	v->stack_bytes = dac_bpf_log_stack_bytes(slog, &v->stack_is_max);
	fd = bpf_program__fd(mine);
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
		v->verified_insns = info.verified_insns;
	drmacct_bpf__destroy(s);
	return 0;
}

int dac_bpf_verify(struct dac_bpf_verdict **out, size_t *n)
{
	struct dac_bpf_verdict *v = NULL;
	struct bpf_program *prog;
	struct dac_bpf_plan plan;
	struct drmacct_bpf *s;
	size_t count = 0, i = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	dac_bpf_log_to_buffer();
	s = drmacct_bpf__open();
	if (!s)
		return -errno;
	bpf_object__for_each_program(prog, s->obj)
		count++;
	v = calloc(count ? count : 1, sizeof(*v));
	if (!v) {
		drmacct_bpf__destroy(s);
		return -ENOMEM;
	}
	bpf_object__for_each_program(prog, s->obj) {
		snprintf(v[i].name, sizeof(v[i].name), "%s", bpf_program__name(prog));
		snprintf(v[i].sec, sizeof(v[i].sec), "%s", bpf_program__section_name(prog));
		i++;
	}
	drmacct_bpf__destroy(s);

	/* this kernel's scheduler set (0 when gpu_sched is not there) */
	if (dac_bpf_plan(NULL, NULL, &plan))
		plan.sched_set = 0;
	for (i = 0; i < count; i++) {
		v[i].status = loadable_here(v[i].sec, plan.sched_set, v[i].why, sizeof(v[i].why));
		if (v[i].status)
			continue;
		err = verify_one(i, plan.sched_set, &v[i], true);
		if (err)
			break;
	}
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = count;
	return 0;
}
