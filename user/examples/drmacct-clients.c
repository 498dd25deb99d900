// SPDX-License-Identifier: MIT
/*
 * drmacct-clients.c - libdrmacct in a few lines: every DRM client of the
 * machine (or of a synthetic /proc tree), with its busy time per engine,
 * its memory and whether its fdinfo follows the usage stats spec.
 *
 *   cc drmacct-clients.c $(pkg-config --cflags --libs libdrmacct) -o drmacct-clients
 *   ./drmacct-clients [PROC_ROOT]
 *
 * Output, one line per client, then one per engine and region:
 *   client DRIVER DEVICE ID pid PID comm COMM errors N
 *     engine NAME busy NS capacity N
 *     region NAME total BYTES resident BYTES
 * Exit status 0, or 1 with a message when /proc cannot be walked.
 */
#include <drmacct/drmacct.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Parse each DRM fdinfo the walk finds, count its spec errors, track it. */
struct ctx {
	struct dac_tracker *t;
	size_t errors;
};

static int on_fd(const struct dac_fd_info *fdi, void *arg)
{
	struct ctx *c = arg;
	struct dac_fdinfo fi;
	int ret = dac_fdinfo_parse(fdi->text, fdi->len, DAC_PROFILE_CURRENT, &fi);

	if (ret)
		return ret;
	c->errors += dac_fdinfo_errors(&fi);
	if (fi.driver)	/* drivers that print no usage stats have none */
		ret = dac_tracker_add(c->t, fdi->pid, fdi->fd, fdi->comm, fdi->rdev, &fi);
	dac_fdinfo_free(&fi);
	return ret;
}

int main(int argc, char **argv)
{
	struct dac_discover_opts o = { .proc_root = argc > 1 ? argv[1] : NULL, .fd = -1 };
	struct ctx c = { .t = dac_tracker_new() };
	struct dac_discover *d = dac_discover_new(&o);
	struct dac_discover_stats st;
	char dev[32];
	int ret;

	if (!d || !c.t) {
		fprintf(stderr, "drmacct-clients: %s\n", strerror(errno ? errno : ENOMEM));
		return 1;
	}
	ret = dac_tracker_begin(c.t, dac_now_ns());
	if (!ret)
		ret = dac_discover_run(d, on_fd, &c, &st);
	if (!ret)
		ret = dac_tracker_end(c.t);
	if (ret) {
		fprintf(stderr, "drmacct-clients: %s\n", strerror(-ret));
		return 1;
	}
	for (size_t i = 0; i < dac_tracker_nclients(c.t); i++) {
		const struct dac_tk_client *cl = dac_tracker_client(c.t, i);

		dac_dev_name(major(cl->rdev), minor(cl->rdev), dev, sizeof(dev));
		printf("client %s %s %" PRIu64 " pid %d comm %s errors %zu\n", cl->driver, dev,
		       cl->client_id, cl->nholders ? (int)cl->holders[0].pid : 0,
		       cl->nholders ? cl->holders[0].comm : "", cl->spec_errors);
		for (size_t k = 0; k < cl->nengines; k++)
			printf("  engine %s busy %" PRIu64 " capacity %" PRIu64 "\n",
			       cl->engines[k].name, cl->engines[k].busy.value,
			       cl->engines[k].capacity);
		for (size_t k = 0; k < cl->nregions; k++)
			printf("  region %s total %" PRIu64 " resident %" PRIu64 "\n",
			       cl->regions[k].name, cl->regions[k].total, cl->regions[k].resident);
	}
	printf("%zu clients, %zu spec errors, %" PRIu64 " DRM fds read\n",
	       dac_tracker_nclients(c.t), c.errors, st.drm_fds);
	dac_tracker_free(c.t);
	dac_discover_free(d);
	return 0;
}
