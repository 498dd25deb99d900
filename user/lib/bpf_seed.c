// SPDX-License-Identifier: MIT
/*
 * bpf_seed.c - put the DRM clients that were open before the collection
 * started into its client table (see bpf.h, dac_bpf_seed_clients()), from
 * their fdinfo, without opening any render node; and learn the devices'
 * names the same way (dac_bpf_learn_names()).
 *
 * Names come from the kernel: drmacct emits drmacct_device_name for each
 * engine and region of a client's device whenever that client's fdinfo is
 * printed (and at each client open), and the programs write them, with
 * the device's render node, into the names map. Reading a file's fdinfo
 * under /proc is all it takes; by the time the walk's callback runs for a
 * file, the names of its device are in the map.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "discover.h"
#include "fdinfo.h"
#include "../../bpf/drmacct_bpf.h"

struct seed {
	struct dac_bpf *b;
	bool seed;		/* false: only read the fdinfo (names) */
	uint32_t *dev_ids;
	dev_t *rdevs;
	size_t ndev;
	dev_t *foreign;		/* nodes no device's names name, after a refresh */
	size_t nforeign;
	int added;
	int err;
};

/*
 * The device id of node @rdev, from the names map: looked up again when the
 * copy in @s does not have it (its fdinfo was just read, which named its
 * device), unless that already failed for @rdev in this walk (a node of a
 * driver without drmacct, or a display node). -ENOENT when unknown.
 */
static int device_of(struct seed *s, dev_t rdev, uint32_t *device_id)
{
	dev_t *f;
	int err;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->ndev; i++) {
			if (s->rdevs[i] == rdev) {
				*device_id = s->dev_ids[i];
				return 0;
			}
		}
		for (size_t i = 0; i < s->nforeign; i++)
			if (s->foreign[i] == rdev)
				return -ENOENT;
		if (pass)
			break;
		free(s->dev_ids);
		free(s->rdevs);
		err = dac_bpf_known_devices(s->b, &s->dev_ids, &s->rdevs, &s->ndev);
		if (err)
			return err;
	}
	f = realloc(s->foreign, (s->nforeign + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	s->foreign = f;
	s->foreign[s->nforeign++] = rdev;
	return -ENOENT;
}

/*
 * The bytes client @client_id of device @device_id holds per region, from
 * its fdinfo: each drm-total-<r> whose <r> is a learned region name of the
 * device (the programs number regions by the device's order).
 */
static int seed_mem(struct dac_bpf *b, uint32_t device_id, uint64_t client_id,
		    const struct dac_fdinfo *fi)
{
	char name[DAC_BPF_NAME_LEN];

	for (uint32_t r = 0;
	     !dac_bpf_name_raw(b, device_id, DAC_NAME_REGION, r, name, sizeof(name)); r++) {
		for (size_t i = 0; i < fi->nregions; i++) {
			const struct dac_region *reg = &fi->regions[i];
			int err;

			if (!reg->has_total || !reg->name || strcmp(reg->name, name))
				continue;
			err = dac_bpf_mem_seed(b, client_id, r, reg->total);
			if (err)
				return err;
		}
	}
	return 0;
}

static int seed_cb(const struct dac_fd_info *fdi, void *arg)
{
	struct seed *s = arg;
	struct dac_client_val cv = { 0 };
	struct dac_fdinfo fi;
	uint32_t device_id;
	int err;

	if (!s->seed)
		return 0;	/* reading the fdinfo was the point */
	err = device_of(s, fdi->rdev, &device_id);
	if (err) {
		if (err != -ENOENT && !s->err)
			s->err = err;
		return 0;	/* not a device drmacct's programs know */
	}
	if (dac_fdinfo_parse(fdi->text, fdi->len, DAC_PROFILE_CURRENT, &fi))
		return 0;
	if (fi.has_client_id) {
		cv.device_id = device_id;
		cv.pid = (uint32_t)fdi->pid;
		cv.tgid = (uint32_t)fdi->pid;
		snprintf(cv.comm, sizeof(cv.comm), "%.*s", (int)sizeof(cv.comm) - 1, fdi->comm);
		snprintf(cv.driver, sizeof(cv.driver), "%.*s", (int)sizeof(cv.driver) - 1,
			 fi.driver ? fi.driver : "");
		snprintf(cv.name, sizeof(cv.name), "%.*s", (int)sizeof(cv.name) - 1,
			 fi.client_name ? fi.client_name : "");
		/*
		 * BPF_NOEXIST: a client the programs saw open keeps its entry,
		 * and its memory, which they have followed since.
		 */
		err = dac_bpf_client_insert(s->b, fi.client_id, &cv);
		if (!err) {
			s->added++;
			err = seed_mem(s->b, cv.device_id, fi.client_id, &fi);
		}
		if (err && err != -EEXIST && !s->err)
			s->err = err;
	}
	dac_fdinfo_free(&fi);
	return 0;
}

/* One walk of /proc: every DRM file's fdinfo read, @s->seed: clients added. */
static int walk(struct seed *s)
{
	struct dac_discover_opts o = { .fd = -1 };
	struct dac_discover *d;
	int err;

	err = dac_bpf_known_devices(s->b, &s->dev_ids, &s->rdevs, &s->ndev);
	if (err)
		return err;
	d = dac_discover_new(&o);
	if (!d)
		return -errno;
	err = dac_discover_run(d, seed_cb, s, NULL);
	dac_discover_free(d);
	return err;
}

static void seed_free(struct seed *s)
{
	free(s->dev_ids);
	free(s->rdevs);
	free(s->foreign);
	s->dev_ids = NULL;
	s->rdevs = NULL;
	s->foreign = NULL;
	s->ndev = s->nforeign = 0;
}

int dac_bpf_learn_names(struct dac_bpf *b)
{
	struct seed s = { .b = b };
	size_t n;
	int err;

	if (!b->info.drmacct && b->skel)
		return 0;	/* no program on drmacct_device_name */
	err = walk(&s);
	seed_free(&s);
	if (err)
		return err;
	err = dac_bpf_known_devices(b, &s.dev_ids, &s.rdevs, &s.ndev);
	n = s.ndev;
	seed_free(&s);
	return err ? err : (int)n;
}

int dac_bpf_seed_clients(struct dac_bpf *b)
{
	struct seed s = { .b = b, .seed = true };
	int at_load, err;

	/*
	 * Clients dac_bpf_load() added count here (this walk finds them in
	 * the table); an error of that walk is superseded by this one.
	 */
	at_load = dac_bpf_take_load_seeded(b);
	if (at_load > 0)
		s.added = at_load;
	err = walk(&s);
	seed_free(&s);
	if (!err)
		err = s.err;
	return err ? err : s.added;
}
