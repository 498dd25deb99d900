// SPDX-License-Identifier: MIT
/*
 * bpf_tracker.c - feed the client tracker from the BPF tables (see bpf.h).
 *
 * Each live client is written out as the fdinfo text drmacct would print
 * for the keys the programs know, and parsed by the ordinary fdinfo parser;
 * the tracker, its utilisation arithmetic and every view of list/top then
 * work unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/sysmacros.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "discover.h"
#include "fdinfo.h"
#include "tracker.h"
#include "../../bpf/drmacct_bpf.h"

struct text {
	char *p;
	size_t len, cap;
	int err;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->err = -EINVAL;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += n;
			return;
		}
		char *np = realloc(t->p, t->cap * 2 + n);

		if (!np) {
			t->err = -ENOMEM;
			return;
		}
		t->p = np;
		t->cap = t->cap * 2 + n;
	}
}

static dev_t device_rdev(struct dac_bpf *b, uint32_t device_id)
{
	char v[DAC_BPF_NAME_LEN];
	unsigned int ma, mi;

	if (dac_bpf_name_raw(b, device_id, DAC_NAME_RDEV, 0, v, sizeof(v)) ||
	    sscanf(v, "%u:%u", &ma, &mi) != 2)
		return 0;
	return makedev(ma, mi);
}

/* Write client @c's fdinfo-like text into @t. */
static void client_text(struct dac_bpf *b, const struct dac_bpf_client *c,
			const struct dac_bpf_usage *u, size_t nu, const struct dac_bpf_mem *m,
			size_t nm, struct text *t)
{
	uint32_t neng = 0, nreg = 0;
	char name[DAC_BPF_NAME_LEN], cap[DAC_BPF_NAME_LEN];

	add(t, "drm-driver:\t%s\ndrm-client-id:\t%" PRIu64 "\n", c->driver[0] ? c->driver : "unknown",
	    c->client_id);
	if (c->name[0])
		add(t, "drm-client-name:\t%s\n", c->name);
	/* Engines: every one the device has (learned names), or that has usage. */
	while (!dac_bpf_name_raw(b, c->device_id, DAC_NAME_ENGINE, neng, name, sizeof(name)))
		neng++;
	for (size_t i = 0; i < nu; i++)
		if (u[i].client_id == c->client_id && u[i].engine + 1 > neng)
			neng = u[i].engine + 1;
	for (uint32_t e = 0; e < neng; e++) {
		const struct dac_bpf_usage *x = NULL;

		for (size_t i = 0; i < nu; i++)
			if (u[i].client_id == c->client_id && u[i].engine == e)
				x = &u[i];
		dac_bpf_name(b, c->device_id, false, e, name, sizeof(name));
		add(t, "drm-engine-%s:\t%" PRIu64 " ns\n", name, x ? x->busy_ns : 0);
		if (!dac_bpf_name_raw(b, c->device_id, DAC_NAME_CAPACITY, e, cap, sizeof(cap)) &&
		    strcmp(cap, "1"))
			add(t, "drm-engine-capacity-%s:\t%s\n", name, cap);
		add(t, "drm-cycles-%s:\t%" PRIu64 "\n", name, x ? x->cycles : 0);
	}
	while (!dac_bpf_name_raw(b, c->device_id, DAC_NAME_REGION, nreg, name, sizeof(name)))
		nreg++;
	for (size_t i = 0; i < nm; i++)
		if (m[i].client_id == c->client_id && m[i].region + 1 > nreg)
			nreg = m[i].region + 1;
	for (uint32_t r = 0; r < nreg; r++) {
		uint64_t bytes = 0;

		for (size_t i = 0; i < nm; i++)
			if (m[i].client_id == c->client_id && m[i].region == r)
				bytes = m[i].total;
		dac_bpf_name(b, c->device_id, true, r, name, sizeof(name));
		add(t, "drm-total-%s:\t%" PRIu64 "\n", name, bytes);
	}
}

/* Is cgroup @cg @top or below it? ("/a" holds "/a" and "/a/b", not "/ab") */
static bool cgroup_under(const char *cg, const char *top)
{
	size_t n = strlen(top);

	while (n > 1 && top[n - 1] == '/')
		n--;
	if (n == 1 && top[0] == '/')
		return cg[0] == '/';
	return !strncmp(cg, top, n) && (cg[n] == '\0' || cg[n] == '/');
}

int dac_bpf_tracker_sample(struct dac_bpf *b, struct dac_tracker *t, size_t *nclients)
{
	struct dac_bpf_client *c = NULL;
	struct dac_bpf_usage *u = NULL;
	struct dac_bpf_mem *m = NULL;
	struct text txt = { 0 };
	size_t nc = 0, nu = 0, nm = 0;
	uint64_t now;
	int err;

	if (nclients)
		*nclients = 0;
	if ((err = dac_bpf_read_clients(b, &c, &nc)) ||
	    (err = dac_bpf_read_usage(b, &now, &u, &nu)) ||
	    (err = dac_bpf_read_mem(b, &m, &nm)))
		goto out;
	txt.cap = 1024;
	txt.p = malloc(txt.cap);
	if (!txt.p) {
		err = -ENOMEM;
		goto out;
	}
	err = dac_tracker_begin(t, now);
	if (err)
		goto out;
	for (size_t i = 0; i < nc; i++) {
		const char *filter = dac_bpf_cgroup_filter(b);
		struct dac_fdinfo fi;
		char cg[PATH_MAX] = "";
		dev_t rdev;

		if (c[i].cgroup_id)
			dac_bpf_cgroup_path(b, c[i].cgroup_id, cg, sizeof(cg));
		if (filter && !cgroup_under(cg, filter))
			continue;
		txt.len = 0;
		client_text(b, &c[i], u, nu, m, nm, &txt);
		if (txt.err) {
			err = txt.err;
			break;
		}
		err = dac_fdinfo_parse(txt.p, txt.len, DAC_PROFILE_CURRENT, &fi);
		if (err)
			break;
		rdev = device_rdev(b, c[i].device_id);
		err = dac_tracker_add_at(t, (pid_t)c[i].tgid, -1, c[i].comm, rdev, &fi, now);
		if (!err && fi.has_client_id)
			err = dac_tracker_set_cgroup(t, rdev, fi.client_id, cg[0] ? cg : NULL);
		dac_fdinfo_free(&fi);
		if (err)
			break;
		if (nclients)
			(*nclients)++;
	}
	/* End the sample even after an error, so the tracker stays usable. */
	{
		int e2 = dac_tracker_end(t);

		if (!err)
			err = e2;
	}
out:
	free(txt.p);
	free(c);
	free(u);
	free(m);
	return err;
}
