// SPDX-License-Identifier: MIT
/*
 * bpf_pinned.c - the pinned collection (see bpf.h): pin a loaded one,
 * unpin, and open a pinned one after checking its layout.
 *
 * Pinned layout under the pin directory (mode 0700):
 *   maps/<name>    clients usage mem totals records stats names
 *                  tracked sched_usage cookie_usage cookie_mem
 *                  sched_clients procs cgroup_sched; sweeper (kept for its
 *                  timer, not read)
 *   links/<prog>   one per attached program (hb_* and sb_* tp_btf, ht_* and
 *                  st_* plain tracepoints, pb_* processes)
 * The scheduler maps rings, inflight and inflight617 hold kernel
 * addresses (keys, or a ring's identity in a value); they are write-only
 * for the bpf() syscall and never pinned.
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

/* The pinned maps; meta first: it says whether the rest can be trusted. */
static const char *const map_names[M__COUNT] = {
	[M_META] = "meta",
	[M_CLIENTS] = "clients", [M_USAGE] = "usage", [M_MEM] = "mem",
	[M_TOTALS] = "totals", [M_RECORDS] = "records", [M_STATS] = "stats",
	[M_NAMES] = "names", [M_TRACKED] = "tracked",
	[M_SCHED] = "sched_usage",
	[M_COOKIE_USAGE] = "cookie_usage", [M_COOKIE_MEM] = "cookie_mem",
	[M_SCHED_CLIENTS] = "sched_clients", [M_PROCS] = "procs",
	[M_CGROUP_SCHED] = "cgroup_sched",
};

/* ---- pin / unpin / open ---------------------------------------------------- */

static int mkdir_private(const char *p)
{
	if (mkdir(p, 0700))
		return -errno;
	if (chmod(p, 0700))
		return -errno;
	return 0;
}

int dac_bpf_pin(struct dac_bpf *b, const char *dir)
{
	struct bpf_program *prog;
	char p[PATH_MAX];
	int err;

	if (!b->skel)
		return -EINVAL;
	if (!dir)
		dir = DAC_BPF_PIN_DIR;
	err = mkdir_private(dir);
	if (err)
		return err;
	if ((err = dac_bpf_join(p, sizeof(p), dir, "maps", NULL)) || (err = mkdir_private(p)))
		goto fail;
	if ((err = dac_bpf_join(p, sizeof(p), dir, "links", NULL)) || (err = mkdir_private(p)))
		goto fail;
	for (int i = 0; i < M__COUNT; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(b->skel->obj, map_names[i]);

		if (!m) {
			err = -ENOENT;
			goto fail;
		}
		if ((err = dac_bpf_join(p, sizeof(p), dir, "maps", map_names[i])) ||
		    (err = bpf_map__pin(m, p)))
			goto fail;
	}
	/*
	 * Not read, but pinned: the kernel frees a map's timers when its last
	 * user reference (a descriptor or a pin) goes, so unpinned the sweep
	 * would stop with the process that loaded the collection.
	 */
	if ((err = dac_bpf_join(p, sizeof(p), dir, "maps", "sweeper")) ||
	    (err = bpf_map__pin(b->skel->maps.sweeper, p)))
		goto fail;
	bpf_object__for_each_program(prog, b->skel->obj) {
		struct bpf_link **links = (struct bpf_link **)&b->skel->links;
		struct bpf_program **progs = (struct bpf_program **)&b->skel->progs;
		size_t nprog = sizeof(b->skel->progs) / sizeof(progs[0]);

		for (size_t i = 0; i < nprog; i++) {
			if (progs[i] != prog || !links[i])
				continue;
			if ((err = dac_bpf_join(p, sizeof(p), dir, "links", bpf_program__name(prog))) ||
			    (err = bpf_link__pin(links[i], p)))
				goto fail;
		}
	}
	return 0;
fail:
	dac_bpf_unpin(dir);
	return err;
}

static int unlink_all(const char *d)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *dir = opendir(d);
	int err = 0;

	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", d, de->d_name) >= (int)sizeof(p))
			continue;
		if (unlink(p) && !err)
			err = -errno;
	}
	closedir(dir);
	if (rmdir(d) && !err)
		err = -errno;
	return err;
}

int dac_bpf_unpin(const char *dir)
{
	char p[PATH_MAX];
	int err, e2;

	if (!dir)
		dir = DAC_BPF_PIN_DIR;
	if (access(dir, F_OK))
		return -errno;
	/* Links first: collection stops before its maps go away. */
	dac_bpf_join(p, sizeof(p), dir, "links", NULL);
	err = unlink_all(p);
	dac_bpf_join(p, sizeof(p), dir, "maps", NULL);
	e2 = unlink_all(p);
	if (rmdir(dir) && !err && !e2)
		return -errno;
	return err ? err : e2;
}

/*
 * Whether the pinned maps are the ones this library reads: the meta stamp,
 * then type, key and value size of every map against this build's object
 * (opened, not loaded). -ESTALE when not: reading another layout could
 * overrun the reader's buffers.
 */
static int check_pinned_layout(struct dac_bpf *b)
{
	struct dac_meta m = { 0 };
	struct drmacct_bpf *s;
	uint32_t zero = 0;
	int err = 0;

	if (bpf_map_lookup_elem(b->fd[M_META], &zero, &m))
		return -errno;
	if (m.magic != DAC_LAYOUT_MAGIC || m.version != DAC_LAYOUT_VERSION)
		return -ESTALE;
	s = drmacct_bpf__open();
	if (!s)
		return -errno;
	for (int i = 0; i < M__COUNT && !err; i++) {
		struct bpf_map *want = bpf_object__find_map_by_name(s->obj, map_names[i]);
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		if (!want) {
			err = -ESTALE;
			break;
		}
		if (bpf_obj_get_info_by_fd(b->fd[i], &mi, &len)) {
			err = -errno;
			break;
		}
		if (mi.type != bpf_map__type(want) || mi.key_size != bpf_map__key_size(want) ||
		    mi.value_size != bpf_map__value_size(want))
			err = -ESTALE;
	}
	drmacct_bpf__destroy(s);
	return err;
}

int dac_bpf_open_pinned(const char *dir, struct dac_bpf **out)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	char p[PATH_MAX];
	struct dac_bpf *b;
	int err;

	*out = NULL;
	if (!dir)
		dir = DAC_BPF_PIN_DIR;
	if (access(dir, F_OK))
		return errno == ENOENT ? -ENOENT : -errno;
	b = dac_bpf_alloc();
	if (!b)
		return -ENOMEM;
	for (int i = 0; i < M__COUNT; i++) {
		if ((err = dac_bpf_join(p, sizeof(p), dir, "maps", map_names[i])))
			goto fail;
		b->fd[i] = bpf_obj_get(p);
		if (b->fd[i] < 0) {
			err = -errno;
			/* No meta (older) or a map missing: another layout. */
			if (err == -ENOENT)
				err = -ESTALE;
			goto fail;
		}
	}
	err = check_pinned_layout(b);
	if (err)
		goto fail;
	dac_bpf_join(p, sizeof(p), dir, "links/hb_end", NULL);
	b->info.drmacct_btf = dac_path_exists(p);
	dac_bpf_join(p, sizeof(p), dir, "links/ht_end", NULL);
	b->info.drmacct = b->info.drmacct_btf || dac_path_exists(p);
	/*
	 * One tp_btf set on every kernel: its run twins are loaded only on
	 * the 6.17 events (set_groups()), so they tell the set.
	 */
	dac_bpf_join(p, sizeof(p), dir, "links/sb_done", NULL);
	b->info.sched_btf = dac_path_exists(p);
	dac_bpf_join(p, sizeof(p), dir, "links/sb_run_n1", NULL);
	b->info.sched_617 = dac_path_exists(p);
	dac_bpf_join(p, sizeof(p), dir, "links/st17_done", NULL);
	b->info.sched_617 = b->info.sched_617 || dac_path_exists(p);
	dac_bpf_join(p, sizeof(p), dir, "links/st_done", NULL);
	b->info.sched = b->info.sched_btf || b->info.sched_617 || dac_path_exists(p);
	b->info.ring_identity = dac_bpf_ring_identity_of(NULL, b->info.sched ? b->info.sched_btf : -1,
							 b->info.sched_617 ? DAC_SCHED_SET_617 :
							 DAC_SCHED_SET_61);
	b->info.sched_client_ids = dac_bpf_client_ids_of(NULL, b->info.sched ? b->info.sched_btf : -1,
							 b->info.sched_617 ? DAC_SCHED_SET_617 :
							 DAC_SCHED_SET_61);
	dac_bpf_join(p, sizeof(p), dir, "links/pb_exit", NULL);
	b->info.proc_exit = dac_path_exists(p);
	if (!bpf_obj_get_info_by_fd(b->fd[M_RECORDS], &mi, &len))
		b->info.ringbuf_bytes = mi.max_entries;
	b->pin_dir = strdup(dir);
	if (!b->pin_dir) {
		err = -ENOMEM;
		goto fail;
	}
	/* Drops before this handle existed are not its reader's losses. */
	b->drops_reported = dac_bpf_stat_get(b, DAC_STAT_EXIT_DROPS);
	*out = b;
	return 0;
fail:
	dac_bpf_close(b);
	return err;
}
