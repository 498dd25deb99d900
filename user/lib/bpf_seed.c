// SPDX-License-Identifier: MIT
/*
 * bpf_seed.c - put the DRM clients that were open before the collection
 * started into its client table (see bpf.h, dac_bpf_seed_clients()), from
 * their fdinfo, without opening any render node.
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
	uint32_t *dev_ids;
	dev_t *rdevs;
	size_t ndev;
	int added;
	int err;
};

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
	size_t i;
	int err;

	for (i = 0; i < s->ndev; i++)
		if (s->rdevs[i] == fdi->rdev)
			break;
	if (i == s->ndev)
		return 0;	/* not a device drmacct's programs know */
	if (dac_fdinfo_parse(fdi->text, fdi->len, DAC_PROFILE_CURRENT, &fi))
		return 0;
	if (fi.has_client_id) {
		cv.device_id = s->dev_ids[i];
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

int dac_bpf_seed_clients(struct dac_bpf *b)
{
	struct dac_discover_opts o = { .fd = -1 };
	struct seed s = { .b = b };
	struct dac_discover *d;
	int at_load, err;

	/*
	 * Clients dac_bpf_load() added count here (this walk finds them in
	 * the table); an error of that walk is superseded by this one.
	 */
	at_load = dac_bpf_take_load_seeded(b);
	if (at_load > 0)
		s.added = at_load;
	err = dac_bpf_known_devices(b, &s.dev_ids, &s.rdevs, &s.ndev);
	if (err)
		return err;
	if (!s.ndev)
		goto out;
	d = dac_discover_new(&o);
	if (!d) {
		err = -errno;
		goto out;
	}
	err = dac_discover_run(d, seed_cb, &s, NULL);
	dac_discover_free(d);
out:
	free(s.dev_ids);
	free(s.rdevs);
	if (!err)
		err = s.err;
	return err ? err : s.added;
}
