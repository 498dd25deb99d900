// SPDX-License-Identifier: MIT
/*
 * conformance.c - the checks of `drmacct conformance`, run on recorded reads.
 *
 * Each check owns the parser findings that belong to its rule (so one bad
 * line fails one check); every other parser error fails "format".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conformance.h"
#include "fdinfo.h"
#include "json.h"

static const struct dac_conf_info checks[DAC_CONF__COUNT] = {
	[DAC_CONF_FORMAT] = {
		"format", "identity",
		"every text parses without a spec error (other checks own their findings)",
		"File shall contain one key value pair per one line of text. Colon character (`:`) must be used to delimit keys and values.",
		"bad-format",
	},
	[DAC_CONF_DRIVER] = {
		"driver", "identity",
		"drm-driver is in every read and never changes",
		"drm-driver: <str> (mandatory) -- String shall contain the name this driver registered as via the respective `struct drm_driver` data structure.",
		"driver-changes",
	},
	[DAC_CONF_ID_STABLE] = {
		"client-id-stable", "identity",
		"one open file shows one drm-client-id: every read, every dup'd fd, every fd inherited across fork",
		"drm-client-id: Unique value relating to the open DRM file descriptor used to distinguish duplicated and shared file descriptors. Conceptually the value should map 1:1 to the in kernel representation of `struct drm_file` instances.",
		"unstable-client-id",
	},
	[DAC_CONF_ID_UNIQUE] = {
		"client-id-unique", "identity",
		"files open at the same time on the device never share a drm-client-id",
		"drm-client-id: Uniqueness of the value shall be either globally unique, or unique within the scope of each device, in which case `drm-pdev` shall be present as well.",
		"shared-client-id",
	},
	[DAC_CONF_ID_NOT_REUSED] = {
		"client-id-not-reused", "identity",
		"a file opened after another closed (reopen) gets a new drm-client-id, never one seen before",
		"drm-client-id: Conceptually the value should map 1:1 to the in kernel representation of `struct drm_file` instances.",
		"reused-client-id",
	},
	[DAC_CONF_PDEV] = {
		"pdev", "identity",
		"drm-pdev, when printed, is the device's PCI address in sysfs",
		"drm-pdev: <aaaa:bb.cc.d> -- For PCI devices this should contain the PCI slot address of the device in question.",
		"wrong-pdev",
	},
	[DAC_CONF_DRIVER_PREFIX] = {
		"driver-prefix", "identity",
		"driver-specific keys start with the drm-driver name (or a prefix of it) and '-'",
		"(current upstream) Driver specific keys are prefixed with the driver name; the prefix should ideally be the drm-driver name.",
		"unprefixed-key",
	},
	[DAC_CONF_MONOTONIC] = {
		"counters-monotonic", "time",
		"drm-engine-, drm-cycles- and drm-total-cycles- never go backwards between reads",
		"Values are not required to be constantly monotonic if it makes the driver implementation easier, but are required to catch up with the previously reported larger value within a reasonable period.",
		"counter-step-back",
	},
	[DAC_CONF_IDLE_ZERO] = {
		"idle-zero", "time",
		"a client that ran nothing shows exactly 0 change in drm-engine- and drm-cycles-",
		"drm-engine-<str>: Value shall be in specified time units which the respective GPU engine spent busy executing workloads belonging to this client.",
		"idle-busy",
	},
	[DAC_CONF_BUSY_CAPACITY] = {
		"busy-capacity", "time",
		"between two reads of a client, busy time grew by at most wall time x capacity",
		"drm-engine-<str>: time ... spent busy executing workloads belonging to this client; drm-engine-capacity-<str>: ... in case the exported engine corresponds to a group of identical hardware engines.",
		"busy-over-capacity",
	},
	[DAC_CONF_CYCLES_BOUND] = {
		"cycles-bound", "time",
		"busy cycles grew by at most total-cycles x capacity (or maxfreq x wall x capacity)",
		"drm-cycles-<str>: the number of busy cycles for the given engine; (current upstream) drm-total-cycles-<str>: the total number of cycles for the given engine; drm-maxfreq-<str>: the maximum frequency for the given engine.",
		"cycles-over-total",
	},
	[DAC_CONF_MAXFREQ_CONSTANT] = {
		"maxfreq-constant", "time",
		"drm-maxfreq-<e> is the same in every read of every client",
		"drm-maxfreq-<str>: shall contain the maximum frequency for the given engine.",
		"changing-maxfreq",
	},
	[DAC_CONF_CAPACITY] = {
		"capacity", "time",
		"drm-engine-capacity-<e> is >= 1 and the same in every read of every client",
		"drm-engine-capacity-<str>: shall contain a greater than zero number in case the exported engine corresponds to a group of identical hardware engines. ... Zero capacity is not allowed.",
		"changing-capacity",
	},
	[DAC_CONF_KEY_SET_STABLE] = {
		"key-set-stable", "time",
		"a key a client printed does not disappear from a later read",
		"GPUs usually contain multiple execution engines. Each shall be given a stable and unique name (str). / Each possible memory type ... shall be given a stable and unique name.",
		"vanishing-key",
	},
	[DAC_CONF_MEMORY_UNITS] = {
		"memory-units", "memory",
		"memory values are bytes, KiB or MiB",
		"drm-memory-<str>: <uint> [KiB|MiB] -- Default unit shall be bytes with optional unit specifiers of 'KiB' or 'MiB' indicating kibi- or mebi-bytes.",
		"gib-unit",
	},
	[DAC_CONF_MEMORY_SUBSETS] = {
		"memory-subsets", "memory",
		"resident <= total, purgeable <= resident, active <= resident, shared <= total",
		"(current upstream) drm-total: all requested buffers, shared and private; drm-shared: shared with another file; drm-resident: resident in the region; drm-purgeable: resident and purgeable; drm-active: active on one or more engines.",
		"resident-over-total",
	},
	[DAC_CONF_MIXED_SOURCES] = {
		"mixed-util-sources", "portability",
		"a client whose engines mix drm-maxfreq and drm-total-cycles (legal, but generic readers that pick one utilisation source per client compute NaN)",
		"(current upstream) drm-total-cycles-<str> and drm-maxfreq-<str> are each per engine.",
		NULL,
	},
	[DAC_CONF_WORKLOAD_BUSY] = {
		"workload-busy", "workload",
		"the workload's clients show busy > 0 on some engine",
		"drm-engine-<str> / drm-cycles-<str>: time (cycles) the engine spent busy executing workloads belonging to this client.",
		"no-busy",
	},
	[DAC_CONF_TIME_CYCLES_AGREE] = {
		"time-cycles-agree", "workload",
		"utilisation from drm-cycles-/drm-total-cycles- never below, from cycles at drm-maxfreq never above, utilisation from drm-engine- by more than 10 points",
		"drm-maxfreq-<str>: Taken together with drm-cycles-<str>, this can be used to calculate percentage utilization of the engine, whereas drm-engine-<str> only reflects time active.",
		"cycles-disagree",
	},
};

struct cread {
	struct dac_fdinfo fi;
	char *via;
	uint64_t t0, t1;
	uint64_t seq;
};

struct cfile {
	char *label;
	unsigned int flags;
	bool closed;
	uint64_t close_seq;
	struct cread *reads;
	size_t n, cap;
};

struct cresult {
	enum dac_conf_status status;
	char *ev[DAC_CONF_EVIDENCE_MAX];
	size_t nev, total;
	char *summary;
};

struct dac_conf {
	char *path;
	char *pdev;
	char *workload;
	bool device_known;
	struct cfile *files;
	size_t nfiles, capfiles;
	size_t nreads;
	uint64_t seq;
	struct cresult res[DAC_CONF__COUNT];
	bool oom;		/* an evidence line could not be allocated */
	/* files on other devices, by id (dac_conf_other_device_id()) */
	struct odev {
		char *label;
		uint64_t id;
		uint64_t seq;
	} *odev;
	size_t nodev, capodev;
};

const struct dac_conf_info *dac_conf_checks(void)
{
	return checks;
}

const char *dac_conf_status_name(enum dac_conf_status s)
{
	switch (s) {
	case DAC_CONF_PASS: return "pass";
	case DAC_CONF_FAIL: return "FAIL";
	case DAC_CONF_SKIP: return "skip";
	case DAC_CONF_NOTE: return "note";
	}
	return "?";
}

int dac_conf_check_by_name(const char *name)
{
	for (int i = 0; name && i < DAC_CONF__COUNT; i++)
		if (!strcmp(checks[i].name, name))
			return i;
	return -1;
}

struct dac_conf *dac_conf_new(void)
{
	return calloc(1, sizeof(struct dac_conf));
}

static void results_clear(struct dac_conf *c)
{
	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		for (size_t k = 0; k < c->res[i].nev; k++)
			free(c->res[i].ev[k]);
		free(c->res[i].summary);
		memset(&c->res[i], 0, sizeof(c->res[i]));
	}
}

void dac_conf_free(struct dac_conf *c)
{
	if (!c)
		return;
	results_clear(c);
	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		for (size_t k = 0; k < f->n; k++) {
			dac_fdinfo_free(&f->reads[k].fi);
			free(f->reads[k].via);
		}
		free(f->reads);
		free(f->label);
	}
	free(c->files);
	for (size_t i = 0; i < c->nodev; i++)
		free(c->odev[i].label);
	free(c->odev);
	free(c->path);
	free(c->pdev);
	free(c->workload);
	free(c);
}

int dac_conf_set_device(struct dac_conf *c, const char *path, const char *pdev)
{
	char *p = NULL, *d = NULL;

	if (!c)
		return -EINVAL;
	if ((path && !(p = strdup(path))) || (pdev && !(d = strdup(pdev)))) {
		free(p);
		return -ENOMEM;
	}
	free(c->path);
	free(c->pdev);
	c->path = p;
	c->pdev = d;
	c->device_known = true;
	return 0;
}

int dac_conf_set_workload(struct dac_conf *c, const char *cmd)
{
	char *w;

	if (!c || !cmd)
		return -EINVAL;
	w = strdup(cmd);
	if (!w)
		return -ENOMEM;
	free(c->workload);
	c->workload = w;
	return 0;
}

int dac_conf_file(struct dac_conf *c, const char *label, unsigned int flags)
{
	struct cfile *f;

	if (!c || !label || (flags & ~(DAC_CONF_F_IDLE | DAC_CONF_F_WORKLOAD | DAC_CONF_F_OTHER)))
		return -EINVAL;
	if (c->nfiles == c->capfiles) {
		size_t nc = c->capfiles ? c->capfiles * 2 : 8;
		struct cfile *t = realloc(c->files, nc * sizeof(*t));

		if (!t)
			return -ENOMEM;
		c->files = t;
		c->capfiles = nc;
	}
	f = &c->files[c->nfiles];
	memset(f, 0, sizeof(*f));
	f->label = strdup(label);
	if (!f->label)
		return -ENOMEM;
	f->flags = flags;
	return (int)c->nfiles++;
}

int dac_conf_read(struct dac_conf *c, int file, const char *via, uint64_t t0, uint64_t t1,
		  const char *text, size_t len)
{
	struct cfile *f;
	struct cread *r;
	int ret;

	if (!c || file < 0 || (size_t)file >= c->nfiles || (!text && len) || t1 < t0)
		return -EINVAL;
	f = &c->files[file];
	if (f->closed || (f->n && f->reads[f->n - 1].t0 > t0))
		return -EINVAL;
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 16;
		struct cread *t = realloc(f->reads, nc * sizeof(*t));

		if (!t)
			return -ENOMEM;
		f->reads = t;
		f->cap = nc;
	}
	r = &f->reads[f->n];
	memset(r, 0, sizeof(*r));
	r->via = strdup(via ? via : "fd");
	if (!r->via)
		return -ENOMEM;
	ret = dac_fdinfo_parse(text ? text : "", len, DAC_PROFILE_CURRENT, &r->fi);
	if (ret) {
		free(r->via);
		return ret;
	}
	r->t0 = t0;
	r->t1 = t1;
	r->seq = ++c->seq;
	f->n++;
	c->nreads++;
	return 0;
}

int dac_conf_other_device_id(struct dac_conf *c, const char *label, uint64_t id)
{
	if (!c || !label)
		return -EINVAL;
	if (c->nodev == c->capodev) {
		size_t nc = c->capodev ? c->capodev * 2 : 8;
		struct odev *t = realloc(c->odev, nc * sizeof(*t));

		if (!t)
			return -ENOMEM;
		c->odev = t;
		c->capodev = nc;
	}
	c->odev[c->nodev].label = strdup(label);
	if (!c->odev[c->nodev].label)
		return -ENOMEM;
	c->odev[c->nodev].id = id;
	c->odev[c->nodev].seq = ++c->seq;
	c->nodev++;
	return 0;
}

int dac_conf_close(struct dac_conf *c, int file)
{
	if (!c || file < 0 || (size_t)file >= c->nfiles || c->files[file].closed)
		return -EINVAL;
	c->files[file].closed = true;
	c->files[file].close_seq = ++c->seq;
	return 0;
}

enum dac_stats dac_conf_file_stats(const struct dac_conf *c, int file)
{
	const struct cfile *f;

	if (!c || file < 0 || (size_t)file >= c->nfiles)
		return DAC_STATS_NONE;
	f = &c->files[file];
	return f->n ? dac_fdinfo_stats(&f->reads[f->n - 1].fi) : DAC_STATS_NONE;
}

size_t dac_conf_nreads(const struct dac_conf *c)
{
	return c ? c->nreads : 0;
}

size_t dac_conf_nfiles(const struct dac_conf *c)
{
	return c ? c->nfiles : 0;
}

/* ---- results ------------------------------------------------------------ */

static void fail(struct dac_conf *c, enum dac_conf_id id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct dac_conf *c, enum dac_conf_id id, const char *fmt, ...)
{
	struct cresult *r = &c->res[id];
	va_list ap;

	if (checks[id].group[0] != 'p')	/* portability: a note, never a failure */
		r->status = DAC_CONF_FAIL;
	else
		r->status = DAC_CONF_NOTE;
	r->total++;
	if (r->nev >= DAC_CONF_EVIDENCE_MAX)
		return;
	va_start(ap, fmt);
	if (vasprintf(&r->ev[r->nev], fmt, ap) < 0) {
		r->ev[r->nev] = NULL;
		c->oom = true;
	} else {
		r->nev++;
	}
	va_end(ap);
}

static void summary(struct dac_conf *c, enum dac_conf_id id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void summary(struct dac_conf *c, enum dac_conf_id id, const char *fmt, ...)
{
	va_list ap;

	free(c->res[id].summary);
	va_start(ap, fmt);
	if (vasprintf(&c->res[id].summary, fmt, ap) < 0) {
		c->res[id].summary = NULL;
		c->oom = true;
	}
	va_end(ap);
}

static void skip(struct dac_conf *c, enum dac_conf_id id, const char *why)
{
	c->res[id].status = DAC_CONF_SKIP;
	summary(c, id, "%s", why);
}

enum dac_conf_status dac_conf_status(const struct dac_conf *c, enum dac_conf_id id)
{
	if (!c || id < 0 || id >= DAC_CONF__COUNT)
		return DAC_CONF_SKIP;
	return c->res[id].status;
}

const char *const *dac_conf_evidence(const struct dac_conf *c, enum dac_conf_id id, size_t *n,
				     size_t *total, const char **sum)
{
	if (!c || id < 0 || id >= DAC_CONF__COUNT) {
		*n = 0;
		*total = 0;
		*sum = "";
		return NULL;
	}
	*n = c->res[id].nev;
	*total = c->res[id].total;
	*sum = c->res[id].summary ? c->res[id].summary : "";
	return (const char *const *)c->res[id].ev;
}

size_t dac_conf_failures(const struct dac_conf *c)
{
	size_t n = 0;

	for (int i = 0; c && i < DAC_CONF__COUNT; i++)
		n += c->res[i].status == DAC_CONF_FAIL;
	return n;
}

/* ---- helpers ------------------------------------------------------------ */

/* "open #1 read 3 (dup fd 6)" */
#define WHERE_FMT "%s read %zu (%s)"
#define WHERE(f, k) (f)->label, (size_t)(k) + 1, (f)->reads[k].via

static const struct dac_kv *kv_at_line(const struct dac_fdinfo *fi, unsigned int line)
{
	for (size_t i = 0; i < fi->nkv; i++)
		if (fi->kv[i].line == line)
			return &fi->kv[i];
	return NULL;
}

static bool is_mem_key(enum dac_key_type t)
{
	return t == DAC_KEY_MEM_TOTAL || t == DAC_KEY_MEM_SHARED || t == DAC_KEY_MEM_RESIDENT ||
	       t == DAC_KEY_MEM_PURGEABLE || t == DAC_KEY_MEM_ACTIVE || t == DAC_KEY_MEMORY_LEGACY;
}

/* Which check owns a parser finding; DAC_CONF__COUNT = none (format for errors). */
static enum dac_conf_id finding_owner(const struct dac_fdinfo *fi, const struct dac_finding *f)
{
	const struct dac_kv *kv;

	if (!strcmp(f->code, "capacity-zero"))
		return DAC_CONF_CAPACITY;
	if (!strcmp(f->code, "driver-missing"))
		return DAC_CONF_DRIVER;
	if (!strcmp(f->code, "driver-prefix-mismatch"))
		return DAC_CONF_DRIVER_PREFIX;
	if (!strcmp(f->code, "memory-subset"))
		return DAC_CONF_MEMORY_SUBSETS;
	if (!strcmp(f->code, "pdev-format"))
		return DAC_CONF_PDEV;
	if (!strncmp(f->code, "unit-", 5) && f->line && (kv = kv_at_line(fi, f->line)) &&
	    is_mem_key(kv->type))
		return DAC_CONF_MEMORY_UNITS;
	return DAC_CONF__COUNT;
}

static bool is_counter(enum dac_key_type t)
{
	return t == DAC_KEY_ENGINE || t == DAC_KEY_CYCLES || t == DAC_KEY_TOTAL_CYCLES;
}

/* ---- identity ----------------------------------------------------------- */

static void check_format_driver(struct dac_conf *c)
{
	const char *first = NULL, *first_where = NULL;
	size_t nread = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		for (size_t k = 0; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;

			nread++;
			for (size_t j = 0; j < fi->nfind; j++) {
				const struct dac_finding *fd = &fi->find[j];
				char msg[DAC_FINDING_MSG_MAX];

				if (fd->sev == DAC_SEV_ERROR &&
				    finding_owner(fi, fd) == DAC_CONF__COUNT)
					fail(c, DAC_CONF_FORMAT, WHERE_FMT " line %u: %s: %s",
					     WHERE(f, k), fd->line, fd->code,
					     dac_finding_message(fd, msg, sizeof(msg)));
			}
			if (!fi->driver) {
				fail(c, DAC_CONF_DRIVER, WHERE_FMT ": no drm-driver line",
				     WHERE(f, k));
			} else if (!first) {
				first = fi->driver;
				first_where = f->label;
			} else if (strcmp(first, fi->driver)) {
				fail(c, DAC_CONF_DRIVER,
				     WHERE_FMT ": drm-driver '%s', but '%s' in %s",
				     WHERE(f, k), fi->driver, first, first_where);
			}
		}
	}
	summary(c, DAC_CONF_FORMAT, "%zu texts parsed", nread);
	if (first)
		summary(c, DAC_CONF_DRIVER, "drm-driver '%s' in %zu texts", first, nread);
	else if (!c->res[DAC_CONF_DRIVER].total)
		skip(c, DAC_CONF_DRIVER, "nothing read");
}

struct idspan {
	uint64_t id;
	size_t file;
	uint64_t open_seq, close_seq;	/* first read, close (UINT64_MAX open) */
};

/*
 * Another file still open with the same id when @young opened: then @young
 * shares a live id (client-id-unique says so), it did not take a dead one.
 */
static bool held_by_other(const struct idspan *sp, size_t nsp, const struct idspan *old,
			  const struct idspan *young)
{
	for (size_t z = 0; z < nsp; z++)
		if (&sp[z] != old && &sp[z] != young && sp[z].id == young->id &&
		    sp[z].open_seq < young->open_seq && sp[z].close_seq > young->open_seq)
			return true;
	return false;
}

/* Does any read print drm-pdev? */
static bool device_prints_pdev(const struct dac_conf *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		for (size_t k = 0; k < c->files[i].n; k++)
			if (c->files[i].reads[k].fi.pdev)
				return true;
	return false;
}

static void check_ids(struct dac_conf *c)
{
	struct idspan *sp = calloc(c->nfiles + c->nodev ? c->nfiles + c->nodev : 1, sizeof(*sp));
	size_t nsp = 0, with_id = 0, dups = 0;
	/* without drm-pdev, ids must be unique across every device */
	const bool global = !device_prints_pdev(c);
	bool any = false;

	if (!sp) {
		c->oom = true;
		return;
	}
	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];
		const struct cread *r0 = NULL;
		size_t k0 = 0;

		for (size_t k = 0; k < f->n; k++) {
			const struct cread *r = &f->reads[k];

			if (!r->fi.has_client_id)
				continue;	/* judged below */
			any = true;
			if (!r0) {
				r0 = r;
				k0 = k;
				continue;
			}
			if (r->fi.client_id != r0->fi.client_id)
				fail(c, DAC_CONF_ID_STABLE,
				     WHERE_FMT ": drm-client-id %" PRIu64 ", but %" PRIu64
				     " in read %zu (%s) of the same open file",
				     WHERE(f, k), r->fi.client_id, r0->fi.client_id, k0 + 1, r0->via);
			if (strcmp(r->via, r0->via))
				dups++;
		}
		for (size_t k = 0; r0 && k < f->n; k++)
			if (!f->reads[k].fi.has_client_id)
				fail(c, DAC_CONF_ID_STABLE,
				     WHERE_FMT ": no drm-client-id, other reads of the file have one",
				     WHERE(f, k));
		if (r0) {
			sp[nsp].id = r0->fi.client_id;
			sp[nsp].file = i;
			sp[nsp].open_seq = f->reads[0].seq;
			sp[nsp].close_seq = f->closed ? f->close_seq : UINT64_MAX;
			nsp++;
			with_id++;
		}
	}
	if (!any) {
		skip(c, DAC_CONF_ID_STABLE, "no drm-client-id printed (optional key): dup'd and shared fds cannot be told apart");
		skip(c, DAC_CONF_ID_UNIQUE, "no drm-client-id printed");
		skip(c, DAC_CONF_ID_NOT_REUSED, "no drm-client-id printed");
		free(sp);
		return;
	}
	summary(c, DAC_CONF_ID_STABLE, "%zu files, %zu reads through another fd or process", with_id, dups);
	for (size_t a = 0; a < nsp; a++) {
		for (size_t b = a + 1; b < nsp; b++) {
			const struct idspan *x = &sp[a], *y = &sp[b];
			const struct idspan *old, *young;

			if (x->id != y->id)
				continue;
			old = x->open_seq <= y->open_seq ? x : y;
			young = old == x ? y : x;
			if (old->close_seq > young->open_seq)
				fail(c, DAC_CONF_ID_UNIQUE,
				     "%s and %s are different open files, both open, and both show drm-client-id %" PRIu64,
				     c->files[old->file].label, c->files[young->file].label, x->id);
			else if (!held_by_other(sp, nsp, old, young))
				fail(c, DAC_CONF_ID_NOT_REUSED,
				     "%s, opened after %s was closed, shows the closed file's drm-client-id %" PRIu64,
				     c->files[young->file].label, c->files[old->file].label, x->id);
		}
	}
	/* files on other devices: an id in use on the device at the same time */
	for (size_t o = 0; global && o < c->nodev; o++)
		for (size_t a = 0; a < nsp; a++)
			if (sp[a].id == c->odev[o].id && sp[a].open_seq < c->odev[o].seq &&
			    sp[a].close_seq > c->odev[o].seq)
				fail(c, DAC_CONF_ID_UNIQUE,
				     "%s and %s on another device both show drm-client-id %" PRIu64
				     "; %s prints no drm-pdev, so its ids must be unique across devices",
				     c->files[sp[a].file].label, c->odev[o].label, sp[a].id,
				     c->path ? c->path : "the device");
	if (global)
		summary(c, DAC_CONF_ID_UNIQUE,
			"%zu files, and %zu on other devices (no drm-pdev printed: ids must be unique across devices)",
			with_id, c->nodev);
	else
		summary(c, DAC_CONF_ID_UNIQUE, "%zu files compared (drm-pdev printed: unique per device)",
			with_id);
	summary(c, DAC_CONF_ID_NOT_REUSED, "%zu files compared", with_id);
	free(sp);
}

static void check_pdev_prefix(struct dac_conf *c)
{
	size_t seen = 0, specific = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		for (size_t k = 0; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;

			for (size_t j = 0; j < fi->nfind; j++) {
				const struct dac_finding *fd = &fi->find[j];
				enum dac_conf_id o = finding_owner(fi, fd);
				char msg[DAC_FINDING_MSG_MAX];

				if (o == DAC_CONF_DRIVER_PREFIX || o == DAC_CONF_PDEV)
					fail(c, o, WHERE_FMT " line %u: %s", WHERE(f, k), fd->line,
					     dac_finding_message(fd, msg, sizeof(msg)));
			}
			for (size_t j = 0; j < fi->nkv; j++)
				specific += fi->kv[j].type == DAC_KEY_DRIVER_SPECIFIC;
			/* "For PCI devices this should contain the PCI slot address" */
			if (!fi->pdev && c->device_known && c->pdev)
				fail(c, DAC_CONF_PDEV,
				     WHERE_FMT ": no drm-pdev, but sysfs says %s is PCI device %s",
				     WHERE(f, k), c->path ? c->path : "the device", c->pdev);
			if (!fi->pdev)
				continue;
			seen++;
			if (!c->device_known)
				continue;
			if (!c->pdev)
				fail(c, DAC_CONF_PDEV,
				     WHERE_FMT ": drm-pdev '%s', but sysfs says %s is not a PCI device",
				     WHERE(f, k), fi->pdev, c->path ? c->path : "the device");
			else if (strcasecmp(c->pdev, fi->pdev))
				fail(c, DAC_CONF_PDEV,
				     WHERE_FMT ": drm-pdev '%s', but sysfs says %s is PCI device %s",
				     WHERE(f, k), fi->pdev, c->path ? c->path : "the device", c->pdev);
		}
	}
	if (c->res[DAC_CONF_PDEV].status != DAC_CONF_FAIL) {
		if (!seen)
			summary(c, DAC_CONF_PDEV, "no drm-pdev printed%s",
				c->device_known ? "; the device is not a PCI device" : "");
		else if (!c->device_known)
			skip(c, DAC_CONF_PDEV, "drm-pdev printed, device unknown: not compared");
		else
			summary(c, DAC_CONF_PDEV, "drm-pdev matches sysfs in %zu reads", seen);
	}
	if (!specific)
		skip(c, DAC_CONF_DRIVER_PREFIX, "no driver-specific key printed");
	else if (!c->res[DAC_CONF_DRIVER_PREFIX].total)
		summary(c, DAC_CONF_DRIVER_PREFIX, "%zu driver-specific keys, each with the driver prefix",
			specific);
}

/* ---- time --------------------------------------------------------------- */

static const struct dac_kv *find_key(const struct dac_fdinfo *fi, const char *key)
{
	return dac_fdinfo_get(fi, key);
}

/*
 * Catch-up value of @key at read @k of @f: the largest value printed so far
 * (the spec's rule for readers). false when read @k lacks the key.
 */
static bool catchup(const struct cfile *f, size_t k, const char *key, uint64_t *out)
{
	const struct dac_kv *kv = find_key(&f->reads[k].fi, key);
	uint64_t m = 0;

	if (!kv || !kv->has_value)
		return false;
	for (size_t j = 0; j <= k; j++) {
		const struct dac_kv *v = find_key(&f->reads[j].fi, key);

		if (v && v->has_value && v->value > m)
			m = v->value;
	}
	*out = m;
	return true;
}

/* Read @k of @f has @key and it is not below an earlier value. */
static bool not_behind(const struct cfile *f, size_t k, const char *key)
{
	const struct dac_kv *kv = find_key(&f->reads[k].fi, key);
	uint64_t m;

	return kv && kv->has_value && catchup(f, k, key, &m) && m == kv->value;
}

static void check_monotonic_idle(struct dac_conf *c)
{
	size_t counters = 0, steps = 0, behind_reads = 0, idle_files = 0, idle_counters = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		if (!f->n)
			continue;
		idle_files += !!(f->flags & DAC_CONF_F_IDLE);
		/* every counter key any read of the file has */
		for (size_t k = 0; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;

			for (size_t j = 0; j < fi->nkv; j++) {
				const struct dac_kv *kv = &fi->kv[j];
				bool first = true;
				uint64_t max = 0, base = 0;
				size_t maxk = 0, behind_since = 0;
				bool behind = false;

				if (!is_counter(kv->type) || !kv->has_value)
					continue;
				/* judge each key once: at its first appearance */
				for (size_t q = 0; q < k && first; q++)
					if (find_key(&f->reads[q].fi, kv->key))
						first = false;
				if (!first || find_key(fi, kv->key) != kv)
					continue;
				counters++;
				if ((f->flags & DAC_CONF_F_IDLE) && kv->type != DAC_KEY_TOTAL_CYCLES)
					idle_counters++;
				base = kv->value;
				for (size_t q = k; q < f->n; q++) {
					const struct dac_kv *v = find_key(&f->reads[q].fi, kv->key);

					if (!v || !v->has_value)
						continue;
					if ((f->flags & DAC_CONF_F_IDLE) && kv->type != DAC_KEY_TOTAL_CYCLES &&
					    v->value != base)
						fail(c, DAC_CONF_IDLE_ZERO,
						     WHERE_FMT ": %s %" PRIu64 " %s, but %" PRIu64
						     " in read %zu; the client ran no work",
						     WHERE(f, q), kv->key, v->value, v->unit ? v->unit : "",
						     base, k + 1);
					if (q > k && v->value < max) {
						steps++;
						fail(c, DAC_CONF_MONOTONIC,
						     WHERE_FMT ": %s went back to %" PRIu64 " from %" PRIu64
						     " (read %zu)",
						     WHERE(f, q), kv->key, v->value, max, maxk + 1);
						if (!behind)
							behind_since = q;
						behind = true;
					} else {
						if (behind && f->reads[q].t1 >= f->reads[behind_since].t0)
							behind_reads += q - behind_since;
						behind = false;
						max = v->value;
						maxk = q;
					}
					if (q == k)
						max = v->value;
				}
				if (behind)
					behind_reads += f->n - behind_since;
			}
		}
	}
	if (c->res[DAC_CONF_MONOTONIC].status == DAC_CONF_FAIL)
		summary(c, DAC_CONF_MONOTONIC,
			"%zu steps back over %zu counters; a reader had to hold the larger value (catch-up rule) for %zu reads",
			steps, counters, behind_reads);
	else if (!counters)
		skip(c, DAC_CONF_MONOTONIC,
		     "no drm-engine-, drm-cycles- or drm-total-cycles- key printed");
	else
		summary(c, DAC_CONF_MONOTONIC, "%zu counters, %zu reads, never backwards",
			counters, c->nreads);
	if (!idle_files)
		skip(c, DAC_CONF_IDLE_ZERO, "no idle client watched");
	else if (!idle_counters)
		skip(c, DAC_CONF_IDLE_ZERO, "the idle clients print no drm-engine- or drm-cycles- key");
	else if (c->res[DAC_CONF_IDLE_ZERO].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_IDLE_ZERO, "%zu idle clients, every busy and cycles counter stayed put",
			idle_files);
}

static uint64_t capacity_of(const struct dac_fdinfo *fi, const char *engine)
{
	const struct dac_engine *e = dac_fdinfo_engine(fi, engine);

	return e && e->capacity ? e->capacity : 1;
}

/* (file, engine) pairs whose bounds failed: time-cycles-agree leaves them out. */
struct badpair {
	size_t file;
	const char *engine;
};

struct badset {
	struct badpair *v;
	size_t n, cap;
};

static void bad_add(struct dac_conf *c, struct badset *b, size_t file, const char *engine)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 8;
		struct badpair *t = realloc(b->v, nc * sizeof(*t));

		if (!t) {
			c->oom = true;
			return;
		}
		b->v = t;
		b->cap = nc;
	}
	b->v[b->n].file = file;
	b->v[b->n].engine = engine;
	b->n++;
}

static bool bad_has(const struct badset *b, size_t file, const char *engine)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].file == file && !strcmp(b->v[i].engine, engine))
			return true;
	return false;
}

/* Engines of read @k, by name; the key text is built into @buf. */
static const char *engine_key(char *buf, size_t len, const char *prefix, const char *name)
{
	snprintf(buf, len, "%s%s", prefix, name);
	return buf;
}

static void check_bounds(struct dac_conf *c, struct badset *bad)
{
	size_t intervals = 0, windows = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		if (f->n < 2)
			continue;
		for (size_t k = 1; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;

			for (size_t e = 0; e < fi->nengines; e++) {
				const struct dac_engine *en = &fi->engines[e];
				char key[512];
				uint64_t a, b, cap, wall;

				if (!en->has_busy)
					continue;
				size_t j;

				engine_key(key, sizeof(key), "drm-engine-", en->name);
				/*
				 * From the last read before that was not behind (a
				 * stepped-back value owes time, counters-monotonic
				 * reports it) to this one, if this one is not behind.
				 */
				if (!catchup(f, k, key, &b) || b != en->busy_ns)
					continue;
				for (j = k; j-- > 0;)
					if (not_behind(f, j, key))
						break;
				if (j == SIZE_MAX || !catchup(f, j, key, &a))
					continue;
				intervals++;
				cap = capacity_of(fi, en->name);
				if (capacity_of(&f->reads[j].fi, en->name) < cap)
					cap = capacity_of(&f->reads[j].fi, en->name);
				wall = f->reads[k].t1 - f->reads[j].t0;
				if (b - a > wall * cap) {
					fail(c, DAC_CONF_BUSY_CAPACITY,
					     WHERE_FMT ": %s grew %" PRIu64 " ns since read %zu, but only %"
					     PRIu64 " ns passed (capacity %" PRIu64 ")",
					     WHERE(f, k), key, b - a, j + 1, wall, cap);
					bad_add(c, bad, i, en->name);
				}
			}
		}
		/* cycles over the whole window (drivers add cycles when a job ends) */
		const struct dac_fdinfo *last = &f->reads[f->n - 1].fi;

		for (size_t e = 0; e < last->nengines; e++) {
			const struct dac_engine *en = &last->engines[e];
			char ck[512], tk[512];
			size_t k0 = SIZE_MAX, k1 = SIZE_MAX;
			uint64_t c0, c1, cap = 1, maxfreq = 0;
			double bound;

			if (!en->has_cycles)
				continue;
			engine_key(ck, sizeof(ck), "drm-cycles-", en->name);
			engine_key(tk, sizeof(tk), "drm-total-cycles-", en->name);
			for (size_t k = 0; k < f->n; k++) {
				const struct dac_engine *x = dac_fdinfo_engine(&f->reads[k].fi, en->name);

				if (!x || !x->has_cycles || !(x->has_total_cycles || x->has_maxfreq))
					continue;
				if (k0 == SIZE_MAX)
					k0 = k;
				k1 = k;
				if (x->has_maxfreq && x->maxfreq_hz > maxfreq)
					maxfreq = x->maxfreq_hz;
				if (k == k0 || x->capacity < cap)
					cap = x->capacity ? x->capacity : 1;
			}
			if (k0 == SIZE_MAX || k0 == k1 || !catchup(f, k0, ck, &c0) ||
			    !catchup(f, k1, ck, &c1))
				continue;
			windows++;
			{
				uint64_t t0, t1;

				if (catchup(f, k0, tk, &t0) && catchup(f, k1, tk, &t1)) {
					bound = (double)(t1 - t0) * (double)cap;
					if ((double)(c1 - c0) > bound * (1.0 + DAC_CONF_CYCLES_SLACK)) {
						fail(c, DAC_CONF_CYCLES_BOUND,
						     "%s reads %zu..%zu: %s grew %" PRIu64 ", but %s only %" PRIu64
						     " (capacity %" PRIu64 ")",
						     f->label, k0 + 1, k1 + 1, ck, c1 - c0, tk, t1 - t0, cap);
						bad_add(c, bad, i, en->name);
					}
					continue;
				}
			}
			if (!maxfreq)
				continue;
			bound = (double)maxfreq * (double)(f->reads[k1].t1 - f->reads[k0].t0) / 1e9 *
				(double)cap;
			if ((double)(c1 - c0) > bound * (1.0 + DAC_CONF_CYCLES_SLACK)) {
				fail(c, DAC_CONF_CYCLES_BOUND,
				     "%s reads %zu..%zu: %s grew %" PRIu64 " in %.3f s, more than drm-maxfreq %"
				     PRIu64 " Hz x capacity %" PRIu64 " allows (%.0f)",
				     f->label, k0 + 1, k1 + 1, ck, c1 - c0,
				     (double)(f->reads[k1].t1 - f->reads[k0].t0) / 1e9, maxfreq, cap, bound);
				bad_add(c, bad, i, en->name);
			}
		}
	}
	if (!intervals)
		skip(c, DAC_CONF_BUSY_CAPACITY, "no client read twice with drm-engine- keys");
	else if (c->res[DAC_CONF_BUSY_CAPACITY].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_BUSY_CAPACITY, "%zu client-engine intervals within wall x capacity", intervals);
	if (!windows)
		skip(c, DAC_CONF_CYCLES_BOUND, "no client read twice with drm-cycles- and drm-total-cycles-/drm-maxfreq-");
	else if (c->res[DAC_CONF_CYCLES_BOUND].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_CYCLES_BOUND, "%zu client-engines within their bound (+%.0f%%)", windows,
			DAC_CONF_CYCLES_SLACK * 100);
}

/* A value that must be the same for one engine name in every read. */
struct constval {
	const char *engine;
	uint64_t v;
	const char *where;
	size_t read;
};

static void check_constants(struct dac_conf *c, bool *maxfreq_bad)
{
	struct constval *mf = NULL, *cp = NULL;
	size_t nmf = 0, ncp = 0, cap = 0;

	*maxfreq_bad = false;
	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		for (size_t k = 0; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;

			for (size_t j = 0; j < fi->nfind; j++) {
				char msg[DAC_FINDING_MSG_MAX];

				if (finding_owner(fi, &fi->find[j]) == DAC_CONF_CAPACITY)
					fail(c, DAC_CONF_CAPACITY, WHERE_FMT " line %u: %s",
					     WHERE(f, k), fi->find[j].line,
					     dac_finding_message(&fi->find[j], msg, sizeof(msg)));
			}
			for (size_t e = 0; e < fi->nengines; e++) {
				const struct dac_engine *en = &fi->engines[e];
				uint64_t capv = en->capacity ? en->capacity : 1;
				size_t a, b;

				if (!en->has_busy && !en->has_cycles)
					continue;
				if (nmf + 1 > cap || ncp + 1 > cap) {
					size_t nc = cap ? cap * 2 : 16;
					struct constval *t1 = realloc(mf, nc * sizeof(*t1));

					if (!t1)
						goto oom;
					mf = t1;
					t1 = realloc(cp, nc * sizeof(*t1));
					if (!t1)
						goto oom;
					cp = t1;
					cap = nc;
				}
				for (a = 0; a < ncp && strcmp(cp[a].engine, en->name); a++)
					;
				if (a == ncp)
					cp[ncp++] = (struct constval){ en->name, capv, f->label, k };
				else if (cp[a].v != capv)
					fail(c, DAC_CONF_CAPACITY,
					     WHERE_FMT ": capacity of %s is %" PRIu64 ", but %" PRIu64
					     " in %s read %zu",
					     WHERE(f, k), en->name, capv, cp[a].v, cp[a].where, cp[a].read + 1);
				if (!en->has_maxfreq)
					continue;
				for (b = 0; b < nmf && strcmp(mf[b].engine, en->name); b++)
					;
				if (b == nmf) {
					mf[nmf++] = (struct constval){ en->name, en->maxfreq_hz, f->label, k };
				} else if (mf[b].v != en->maxfreq_hz) {
					*maxfreq_bad = true;
					fail(c, DAC_CONF_MAXFREQ_CONSTANT,
					     WHERE_FMT ": drm-maxfreq-%s is %" PRIu64 " Hz, but %" PRIu64
					     " Hz in %s read %zu",
					     WHERE(f, k), en->name, en->maxfreq_hz, mf[b].v, mf[b].where,
					     mf[b].read + 1);
				}
			}
		}
	}
	if (!nmf)
		skip(c, DAC_CONF_MAXFREQ_CONSTANT, "no drm-maxfreq- key printed");
	else if (!*maxfreq_bad)
		summary(c, DAC_CONF_MAXFREQ_CONSTANT, "%zu engines with a constant drm-maxfreq", nmf);
	if (!ncp)
		skip(c, DAC_CONF_CAPACITY, "no engine printed");
	else if (c->res[DAC_CONF_CAPACITY].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_CAPACITY, "%zu engines with a constant capacity >= 1", ncp);
	free(mf);
	free(cp);
	return;
oom:
	c->oom = true;
	free(mf);
	free(cp);
}

static bool judged_key(enum dac_key_type t)
{
	return t != DAC_KEY_OTHER && t != DAC_KEY_INVALID;
}

static void check_keyset(struct dac_conf *c)
{
	size_t pairs = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		for (size_t k = 1; k < f->n; k++) {
			const struct dac_fdinfo *prev = &f->reads[k - 1].fi, *cur = &f->reads[k].fi;

			pairs++;
			for (size_t j = 0; j < prev->nkv; j++)
				if (judged_key(prev->kv[j].type) && !find_key(cur, prev->kv[j].key))
					fail(c, DAC_CONF_KEY_SET_STABLE,
					     WHERE_FMT ": %s is missing; read %zu printed it",
					     WHERE(f, k), prev->kv[j].key, k);
		}
	}
	if (!pairs)
		skip(c, DAC_CONF_KEY_SET_STABLE, "no client read twice");
	else if (c->res[DAC_CONF_KEY_SET_STABLE].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_KEY_SET_STABLE, "%zu consecutive reads, no key disappeared", pairs);
}

/* ---- memory ------------------------------------------------------------- */

static void check_memory(struct dac_conf *c)
{
	size_t keys = 0, regions = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];

		for (size_t k = 0; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;

			for (size_t j = 0; j < fi->nkv; j++) {
				const struct dac_kv *kv = &fi->kv[j];

				if (!is_mem_key(kv->type))
					continue;
				keys++;
				if (kv->unit && strcmp(kv->unit, "KiB") && strcmp(kv->unit, "MiB"))
					fail(c, DAC_CONF_MEMORY_UNITS,
					     WHERE_FMT " line %u: %s: '%s': unit '%s' is not bytes, KiB or MiB",
					     WHERE(f, k), kv->line, kv->key, kv->str, kv->unit);
				else if (!kv->has_value)
					fail(c, DAC_CONF_MEMORY_UNITS,
					     WHERE_FMT " line %u: %s: '%s' is not <uint> [KiB|MiB]",
					     WHERE(f, k), kv->line, kv->key, kv->str);
			}
			for (size_t r = 0; r < fi->nregions; r++) {
				const struct dac_region *g = &fi->regions[r];

				regions++;
#define SUBSET(small, big, what)						\
	do {									\
		if (g->has_##small && g->has_##big && g->small > g->big)	\
			fail(c, DAC_CONF_MEMORY_SUBSETS,			\
			     WHERE_FMT ": region %s: " #small " %" PRIu64	\
			     " B > " #big " %" PRIu64 " B (" what ")",		\
			     WHERE(f, k), g->name, g->small, g->big);		\
	} while (0)
				SUBSET(resident, total, "resident buffers are requested buffers");
				SUBSET(shared, total, "total includes shared");
				SUBSET(purgeable, resident, "purgeable means resident and purgeable");
				SUBSET(active, resident, "active buffers are resident");
#undef SUBSET
			}
		}
	}
	if (!keys)
		skip(c, DAC_CONF_MEMORY_UNITS, "no memory key printed");
	else if (c->res[DAC_CONF_MEMORY_UNITS].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_MEMORY_UNITS, "%zu memory values in bytes, KiB or MiB", keys);
	if (!regions)
		skip(c, DAC_CONF_MEMORY_SUBSETS, "no memory region printed");
	else if (c->res[DAC_CONF_MEMORY_SUBSETS].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_MEMORY_SUBSETS, "%zu region snapshots consistent", regions);
}

/* ---- portability and workload ------------------------------------------- */

static void check_mixed(struct dac_conf *c)
{
	size_t clients = 0, sources = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];
		const struct dac_fdinfo *fi;
		const char *mf = NULL, *tc = NULL;

		if (!f->n)
			continue;
		clients++;
		fi = &f->reads[f->n - 1].fi;
		for (size_t e = 0; e < fi->nengines; e++) {
			if (fi->engines[e].has_maxfreq && !mf)
				mf = fi->engines[e].name;
			if (fi->engines[e].has_total_cycles && !tc)
				tc = fi->engines[e].name;
		}
		sources += mf || tc;
		if (mf && tc)
			fail(c, DAC_CONF_MIXED_SOURCES,
			     "%s: engine %s has drm-maxfreq, engine %s drm-total-cycles: a reader "
			     "that picks one utilisation source per client gets NaN for the other engines",
			     f->label, mf, tc);
	}
	if (c->res[DAC_CONF_MIXED_SOURCES].status == DAC_CONF_NOTE)
		summary(c, DAC_CONF_MIXED_SOURCES, "%zu of %zu clients mix the two (legal per engine)",
			c->res[DAC_CONF_MIXED_SOURCES].total, clients);
	else if (!sources)
		skip(c, DAC_CONF_MIXED_SOURCES, "no engine prints drm-maxfreq- or drm-total-cycles-");
	else
		summary(c, DAC_CONF_MIXED_SOURCES, "no client mixes drm-maxfreq and drm-total-cycles");
}

/* Wall time from read @k0 to read @k1 of @f (their midpoints), ns. */
static double span(const struct cfile *f, size_t k0, size_t k1)
{
	return ((double)f->reads[k1].t0 + (double)f->reads[k1].t1 -
		(double)f->reads[k0].t0 - (double)f->reads[k0].t1) / 2.0;
}

/*
 * Is read @k of @f settled for busy key @bk and cycles key @ck: neither
 * moved since the read before (or both are still 0)? Then no job ran
 * across the two reads, and both counters hold every job that had ended.
 */
static bool settled(const struct cfile *f, size_t k, const char *bk, const char *ck)
{
	uint64_t b, cy, pb, pc;

	if (!catchup(f, k, bk, &b) || !catchup(f, k, ck, &cy))
		return false;
	if (!b && !cy)
		return true;
	return k && catchup(f, k - 1, bk, &pb) && catchup(f, k - 1, ck, &pc) &&
	       pb == b && pc == cy;
}

/*
 * How far utilisation from cycles may be on the wrong side of utilisation
 * from time @ut (0..1): a quarter of @ut, at least 1 point (a window of
 * 200 ms holds 2 ms of one job's lumpiness there), at most
 * DAC_CONF_AGREE_TOLERANCE. At 20 % busy, cycles half of time (10 points
 * behind) fail; a flat 10 points passed them.
 */
static double agree_tolerance(double ut)
{
	double t = ut * DAC_CONF_AGREE_RELATIVE;

	if (t < DAC_CONF_AGREE_FLOOR)
		t = DAC_CONF_AGREE_FLOOR;
	return t < DAC_CONF_AGREE_TOLERANCE ? t : DAC_CONF_AGREE_TOLERANCE;
}

static void check_workload(struct dac_conf *c, const struct badset *bad, bool maxfreq_bad)
{
	size_t wfiles = 0, busy = 0, compared = 0, with_engines = 0;

	for (size_t i = 0; i < c->nfiles; i++) {
		struct cfile *f = &c->files[i];
		const struct dac_fdinfo *last;

		if (!(f->flags & DAC_CONF_F_WORKLOAD) || !f->n)
			continue;
		wfiles++;
		for (size_t k = 0; k < f->n; k++) {
			const struct dac_fdinfo *fi = &f->reads[k].fi;
			bool counter = false;

			for (size_t e = 0; e < fi->nengines && !counter; e++)
				counter = fi->engines[e].has_busy || fi->engines[e].has_cycles;
			if (counter) {
				with_engines++;
				break;
			}
		}
		last = &f->reads[f->n - 1].fi;
		for (size_t e = 0; e < last->nengines; e++) {
			const struct dac_engine *en = &last->engines[e];
			char bk[512], ck[512], tk[512];
			uint64_t b0, b1, c0, c1, t0, t1, cap;
			double wall, ut, uc;
			size_t k0 = SIZE_MAX, k1 = SIZE_MAX, s1 = SIZE_MAX;

			engine_key(bk, sizeof(bk), "drm-engine-", en->name);
			engine_key(ck, sizeof(ck), "drm-cycles-", en->name);
			engine_key(tk, sizeof(tk), "drm-total-cycles-", en->name);
			if ((catchup(f, f->n - 1, bk, &b1) && b1) ||
			    (catchup(f, f->n - 1, ck, &c1) && c1))
				busy++;
			if (!en->has_busy || !en->has_cycles || bad_has(bad, i, en->name))
				continue;
			if (en->has_maxfreq && maxfreq_bad)
				continue;
			/*
			 * The window runs between reads that are not behind
			 * (counters-monotonic reports those): a held value
			 * lags the time of the read it is paired with. Where
			 * it can, it starts and ends at settled reads (see
			 * settled()): busy time counts a running job and its
			 * cycles come when it ends, so an edge inside a job
			 * moves the two apart by up to that job's time.
			 */
			for (size_t k = 0; k < f->n; k++) {
				if (!not_behind(f, k, bk) || !catchup(f, k, ck, &c1))
					continue;
				if (k0 == SIZE_MAX)
					k0 = k;
				k1 = k;
				if (settled(f, k, bk, ck))
					s1 = k;
			}
			if (k0 == SIZE_MAX || k0 == k1)
				continue;
			/*
			 * The end: the last settled read. The start: the first
			 * read, or a settled one before either counter moved
			 * from it (the time between is idle either way). A
			 * window of settled reads inside an idle stretch alone
			 * would compare nothing.
			 */
			if (s1 != SIZE_MAX && s1 > k0 && span(f, k0, s1) >= 2e8)
				k1 = s1;
			catchup(f, k0, bk, &b0);
			catchup(f, k0, ck, &c0);
			for (size_t k = k0; k < k1 && !settled(f, k0, bk, ck); k++) {
				if (!catchup(f, k, bk, &b1) || !catchup(f, k, ck, &c1) ||
				    b1 != b0 || c1 != c0)
					break;
				if (settled(f, k, bk, ck) && span(f, k, k1) >= 2e8)
					k0 = k;
			}
			catchup(f, k0, bk, &b0);
			catchup(f, k0, ck, &c0);
			catchup(f, k1, bk, &b1);
			catchup(f, k1, ck, &c1);
			wall = span(f, k0, k1);
			cap = en->capacity ? en->capacity : 1;
			if (wall < 2e8)
				continue;	/* too short to compare */
			ut = (double)(b1 - b0) / (wall * (double)cap);
			if (en->has_total_cycles && catchup(f, k0, tk, &t0) &&
			    catchup(f, k1, tk, &t1) && t1 > t0) {
				uc = (double)(c1 - c0) / ((double)(t1 - t0) * (double)cap);
				compared++;
				/*
				 * Both counters run at the engine clock: a
				 * governor that clocks busy periods higher
				 * than idle ones puts cycles ahead of time,
				 * never behind it. Ahead is bounded only by
				 * cycles-bound (cycles <= total-cycles).
				 */
				if (ut - uc > agree_tolerance(ut))
					fail(c, DAC_CONF_TIME_CYCLES_AGREE,
					     "%s reads %zu..%zu, engine %s: %.1f%% busy from drm-engine-, "
					     "but only %.1f%% from drm-cycles-/drm-total-cycles-",
					     f->label, k0 + 1, k1 + 1, en->name, ut * 100, uc * 100);
			} else if (en->has_maxfreq && en->maxfreq_hz) {
				uc = (double)(c1 - c0) / ((double)en->maxfreq_hz * wall / 1e9 * (double)cap);
				compared++;
				if (uc - ut > agree_tolerance(ut))
					fail(c, DAC_CONF_TIME_CYCLES_AGREE,
					     "%s reads %zu..%zu, engine %s: %.1f%% busy from drm-engine-, "
					     "but cycles at drm-maxfreq give %.1f%%",
					     f->label, k0 + 1, k1 + 1, en->name, ut * 100, uc * 100);
			}
		}
	}
	if (!wfiles) {
		if (c->workload)
			fail(c, DAC_CONF_WORKLOAD_BUSY,
			     "the workload '%s' opened no client on %s that was seen (wrong device, "
			     "or clients shorter than one interval)",
			     c->workload, c->path ? c->path : "the device");
		else
			skip(c, DAC_CONF_WORKLOAD_BUSY, "no workload (--workload)");
		skip(c, DAC_CONF_TIME_CYCLES_AGREE, "no workload client");
		return;
	}
	if (!with_engines)
		skip(c, DAC_CONF_WORKLOAD_BUSY,
		     "the workload's clients print no drm-engine- or drm-cycles- key (both optional): "
		     "nothing can show busy");
	else if (!busy)
		fail(c, DAC_CONF_WORKLOAD_BUSY,
		     "%zu workload clients watched, none printed busy time or cycles > 0 on any engine",
		     wfiles);
	else
		summary(c, DAC_CONF_WORKLOAD_BUSY, "%zu client-engines of %zu workload clients busy",
			busy, wfiles);
	if (!compared)
		skip(c, DAC_CONF_TIME_CYCLES_AGREE,
		     "no workload client printed both time and cycles over 200 ms or more");
	else if (c->res[DAC_CONF_TIME_CYCLES_AGREE].status != DAC_CONF_FAIL)
		summary(c, DAC_CONF_TIME_CYCLES_AGREE,
			"%zu client-engines agree within a quarter of the time's share (1 to %.0f points)",
			compared, DAC_CONF_AGREE_TOLERANCE * 100);
}

int dac_conf_evaluate(struct dac_conf *c)
{
	struct badset bad = { 0 };
	bool maxfreq_bad;

	if (!c)
		return -EINVAL;
	results_clear(c);
	c->oom = false;
	check_format_driver(c);
	check_ids(c);
	check_pdev_prefix(c);
	check_monotonic_idle(c);
	check_bounds(c, &bad);
	check_constants(c, &maxfreq_bad);
	check_keyset(c);
	check_memory(c);
	check_mixed(c);
	check_workload(c, &bad, maxfreq_bad);
	free(bad.v);
	if (c->res[DAC_CONF_FORMAT].total)
		summary(c, DAC_CONF_FORMAT, "%zu spec errors", c->res[DAC_CONF_FORMAT].total);
	return c->oom ? -ENOMEM : 0;
}

/* ---- reports -------------------------------------------------------------- */

/* Evidence text goes to a terminal or TAP line: no control characters. */
static void put_clean(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static const char *sum_or_count(const struct dac_conf *c, int id, char *buf, size_t len)
{
	if (c->res[id].summary)
		return c->res[id].summary;
	snprintf(buf, len, "%zu findings", c->res[id].total);
	return buf;
}

int dac_conf_print_text(const struct dac_conf *c, FILE *f, bool verbose)
{
	size_t counts[4] = { 0 };
	char buf[64];

	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		const struct cresult *r = &c->res[i];

		counts[r->status]++;
		fprintf(f, "%-4s  %-21s ", dac_conf_status_name(r->status), checks[i].name);
		put_clean(f, sum_or_count(c, i, buf, sizeof(buf)));
		fputc('\n', f);
		if (r->status != DAC_CONF_FAIL && r->status != DAC_CONF_NOTE && !verbose)
			continue;
		if (r->status == DAC_CONF_FAIL || verbose) {
			fprintf(f, "      rule: ");
			put_clean(f, checks[i].rule);
			fputc('\n', f);
		}
		for (size_t k = 0; k < r->nev; k++) {
			fprintf(f, "      - ");
			put_clean(f, r->ev[k]);
			fputc('\n', f);
		}
		if (r->total > r->nev)
			fprintf(f, "      ... and %zu more\n", r->total - r->nev);
	}
	fprintf(f, "%zu checks: %zu passed, %zu failed, %zu skipped, %zu notes\n",
		(size_t)DAC_CONF__COUNT, counts[DAC_CONF_PASS], counts[DAC_CONF_FAIL],
		counts[DAC_CONF_SKIP], counts[DAC_CONF_NOTE]);
	return ferror(f) ? -EIO : 0;
}

int dac_conf_print_tap(const struct dac_conf *c, FILE *f)
{
	char buf[64];

	fprintf(f, "TAP version 13\n1..%d\n", DAC_CONF__COUNT);
	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		const struct cresult *r = &c->res[i];

		fprintf(f, "# %s: ", checks[i].name);
		put_clean(f, checks[i].what);
		fputc('\n', f);
		if (r->status == DAC_CONF_FAIL) {
			fprintf(f, "# rule: ");
			put_clean(f, checks[i].rule);
			fputc('\n', f);
		}
		for (size_t k = 0; k < r->nev; k++) {
			fprintf(f, "# - ");
			put_clean(f, r->ev[k]);
			fputc('\n', f);
		}
		if (r->total > r->nev)
			fprintf(f, "# ... and %zu more\n", r->total - r->nev);
		fprintf(f, "%sok %d %s", r->status == DAC_CONF_FAIL ? "not " : "", i + 1, checks[i].name);
		if (r->status == DAC_CONF_SKIP) {
			fprintf(f, " # SKIP ");
			put_clean(f, sum_or_count(c, i, buf, sizeof(buf)));
		} else {
			fprintf(f, " # ");
			put_clean(f, sum_or_count(c, i, buf, sizeof(buf)));
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

void dac_conf_json(const struct dac_conf *c, struct dac_json *j)
{
	char buf[64];

	dac_json_arr_begin(j, "checks");
	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		const struct cresult *r = &c->res[i];

		dac_json_obj_begin(j, NULL);
		dac_json_str(j, "name", checks[i].name);
		dac_json_str(j, "group", checks[i].group);
		dac_json_str(j, "status", r->status == DAC_CONF_FAIL ? "fail" :
			     dac_conf_status_name(r->status));
		dac_json_str(j, "summary", sum_or_count(c, i, buf, sizeof(buf)));
		dac_json_str(j, "rule", checks[i].rule);
		dac_json_u64(j, "findings", r->total);
		dac_json_arr_begin(j, "evidence");
		for (size_t k = 0; k < r->nev; k++)
			dac_json_str(j, NULL, r->ev[k]);
		dac_json_arr_end(j);
		dac_json_obj_end(j);
	}
	dac_json_arr_end(j);
	dac_json_u64(j, "failed", dac_conf_failures(c));
}
