// SPDX-License-Identifier: MIT
/*
 * record.c - `drmacct record`: write the binary record stream
 * (Documentation/record-format.rst) from periodic /proc samples and, when
 * BPF collection runs, the CLIENT_EXIT and LOST events of the BPF ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "cli.h"
#include "output.h"
#include "record.h"
#include "source.h"
#include "tracker.h"

static const char *const CMD = "record";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct record [OPTIONS] [-- COMMAND [ARGS...]]\n\n"
		"Write a binary record stream (its format: see drmacct(1)): one SAMPLE\n"
		"record per DRM client every interval and, when BPF collection runs\n"
		"('drmacct bpf start'), a CLIENT_EXIT record with the final totals of every\n"
		"client that closes and LOST records for events the ring buffer dropped.\n"
		"With COMMAND: record while it runs (and one last sample after it exits);\n"
		"the exit status is then COMMAND's (127 not found, 126 not runnable,\n"
		"128 + N killed by signal N). Without: until SIGINT/SIGTERM, --duration\n"
		"or --count.\n\n"
		"Options:\n"
		"  -o, --output=FILE      where to write (default drmacct.rec; '-' = stdout,\n"
		"                         refused when it is a terminal)\n"
		"  -i, --interval=DUR     sampling interval (default 1s; 1ms..1h; 500ms,\n"
		"                         2s, 1m; a bare number is seconds)\n"
		"      --duration=DUR     stop after DUR (1ms..8760h; 30s, 5m, 2h)\n"
		"  -n, --count=N          stop after N samples\n"
		"      --no-bpf           do not use BPF collection even when it runs\n"
		"      --pid=PID          only this process\n"
		"      --spec=PROFILE     parse fdinfo as 'current' (default) or '2022'\n"
		"      --proc-root=DIR    read DIR instead of /proc (testing)\n"
		"  -h, --help             this text\n\n"
		"Exit status: with COMMAND, COMMAND's when it ended by itself; else 0;\n"
		"1 the first sample or writing failed; 2 usage error (also: binary\n"
		"output to a terminal); 141 the reader of standard output went away.\n");
}

/* ---- the device table of the stream ---- */

struct rdev_ent {
	struct drec_device d;		/* names point into our own copies */
	dev_t rdev;
	bool bpf_only;			/* known from BPF records only */
	bool has_bpf_id;		/* bpf_device_id learnt for a sampled device */
	uint32_t bpf_device_id;
	size_t cap_engines, cap_regions;
	bool dirty;			/* changed since last described */
};

struct rec_state {
	struct drec_writer w;
	struct rdev_ent *devs;
	size_t ndevs, cap_devs;
	struct drec_engine_val *ev;
	struct drec_region_val *rv;
	size_t cap_ev, cap_rv;
	/* client id -> device index, for CLIENT_EXIT of clients we sampled */
	struct { uint64_t id; uint32_t dev; } *seen;
	size_t nseen, cap_seen;
	/* the capacities last written per client (CAPACITY records) */
	struct capset {
		uint32_t dev, pid;
		uint64_t id;
		bool has_id;
		unsigned long gen;	/* sample it was last seen in */
		size_t n;
		struct drec_capacity *v;
	} *caps;
	size_t ncaps, cap_caps, cap_hint;
	struct drec_capacity *cv;	/* this client's, being built */
	size_t cap_cv;
	uint64_t samples, exits, lost, overflows;
	uint64_t start_ns;		/* time of the first sample */
	pid_t pid_filter;		/* --pid: only this process's exits */
	int err;
};

static int grow(void **p, size_t *cap, size_t need, size_t sz)
{
	size_t n;
	void *np;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * sz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static struct rdev_ent *find_dev(struct rec_state *s, dev_t rdev, const char *driver,
				 const char *pdev, bool bpf_only, uint32_t bpf_id)
{
	struct rdev_ent *e;
	size_t i;

	for (i = 0; i < s->ndevs; i++) {
		e = &s->devs[i];
		if (!bpf_only && !e->bpf_only && e->rdev == rdev)
			return e;
		if (bpf_only && e->bpf_only && e->bpf_device_id == bpf_id)
			return e;
	}
	if (grow((void **)&s->devs, &s->cap_devs, s->ndevs + 1, sizeof(*s->devs)))
		return NULL;
	e = &s->devs[s->ndevs];
	memset(e, 0, sizeof(*e));
	e->d.driver = strdup(driver ? driver : "");
	e->d.pdev = strdup(pdev ? pdev : "");
	if (!e->d.driver || !e->d.pdev) {
		free((char *)e->d.driver);
		free((char *)e->d.pdev);
		return NULL;
	}
	e->d.dev = (uint32_t)s->ndevs;
	e->rdev = rdev;
	e->d.major = bpf_only ? 0 : major(rdev);
	e->d.minor = bpf_only ? bpf_id : minor(rdev);
	e->bpf_only = bpf_only;
	e->bpf_device_id = bpf_id;
	e->dirty = true;
	s->ndevs++;
	return e;
}

/*
 * Index of engine @name on @e, appended when new. The device's capacity
 * is that of the first client that printed the engine: each client's own
 * goes into CAPACITY records. -1: out of memory.
 */
static long engine_idx(struct rdev_ent *e, const char *name, uint64_t cap, uint64_t maxfreq)
{
	struct drec_engine_desc *x;
	size_t i;

	for (i = 0; i < e->d.nengines; i++) {
		x = &e->d.engines[i];
		if (strcmp(x->name, name))
			continue;
		if (maxfreq && x->maxfreq_hz != maxfreq) {
			x->maxfreq_hz = maxfreq;
			e->dirty = true;
		}
		return (long)i;
	}
	if (grow((void **)&e->d.engines, &e->cap_engines, e->d.nengines + 1,
		 sizeof(*e->d.engines)))
		return -1;
	x = &e->d.engines[e->d.nengines];
	x->name = strdup(name);
	if (!x->name)
		return -1;
	x->capacity = cap ? cap : 1;
	x->maxfreq_hz = maxfreq;
	e->dirty = true;
	return (long)e->d.nengines++;
}

static long region_idx(struct rdev_ent *e, const char *name)
{
	size_t i;
	char *c;

	for (i = 0; i < e->d.nregions; i++)
		if (!strcmp(e->d.regions[i], name))
			return (long)i;
	if (grow((void **)&e->d.regions, &e->cap_regions, e->d.nregions + 1,
		 sizeof(*e->d.regions)))
		return -1;
	c = strdup(name);
	if (!c)
		return -1;
	e->d.regions[e->d.nregions] = c;
	e->dirty = true;
	return (long)e->d.nregions++;
}

static void free_state(struct rec_state *s)
{
	size_t i, j;

	for (i = 0; i < s->ndevs; i++) {
		struct rdev_ent *e = &s->devs[i];

		free((char *)e->d.driver);
		free((char *)e->d.pdev);
		for (j = 0; j < e->d.nengines; j++)
			free((char *)e->d.engines[j].name);
		for (j = 0; j < e->d.nregions; j++)
			free((char *)e->d.regions[j]);
		free(e->d.engines);
		free(e->d.regions);
	}
	free(s->devs);
	free(s->ev);
	free(s->rv);
	free(s->seen);
	for (i = 0; i < s->ncaps; i++)
		free(s->caps[i].v);
	free(s->caps);
	free(s->cv);
}

/* Describe every changed device (DEVICE records). */
static int flush_devices(struct rec_state *s)
{
	size_t i;
	int ret;

	for (i = 0; i < s->ndevs; i++) {
		if (!s->devs[i].dirty)
			continue;
		ret = drec_write_device(&s->w, &s->devs[i].d);
		if (ret)
			return ret;
		s->devs[i].dirty = false;
	}
	return 0;
}

static void note_seen(struct rec_state *s, uint64_t id, uint32_t dev)
{
	size_t i;

	for (i = 0; i < s->nseen; i++)
		if (s->seen[i].id == id) {
			s->seen[i].dev = dev;
			return;
		}
	if (grow((void **)&s->seen, &s->cap_seen, s->nseen + 1, sizeof(*s->seen)))
		return;	/* only a lookup aid */
	s->seen[s->nseen].id = id;
	s->seen[s->nseen++].dev = dev;
}

/* Map one tracked client to stream indices and fill @c. */
static int map_client(struct rec_state *s, const struct dac_tk_client *tc, struct drec_client *c)
{
	struct rdev_ent *e = find_dev(s, tc->rdev, tc->driver, tc->pdev, false, 0);
	size_t i;

	if (!e)
		return -ENOMEM;
	if (grow((void **)&s->ev, &s->cap_ev, tc->nengines + 1, sizeof(*s->ev)) ||
	    grow((void **)&s->rv, &s->cap_rv, tc->nregions + 1, sizeof(*s->rv)))
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->time_ns = tc->seen_ns;
	c->client_id = tc->has_client_id ? tc->client_id : 0;
	c->flags = tc->has_client_id ? DREC_C_CLIENT_ID : 0;
	/* Not there at the first sample: everything it counted is ours. */
	if (s->samples && tc->first_ns > s->start_ns)
		c->flags |= DREC_C_NEW;
	c->dev = e->d.dev;
	if (tc->nholders) {
		c->pid = (uint32_t)tc->holders[0].pid;
		snprintf(c->comm, sizeof(c->comm), "%s",
			 tc->holders[0].comm ? tc->holders[0].comm : "");
	}
	for (i = 0; i < tc->nengines; i++) {
		const struct dac_tk_engine *te = &tc->engines[i];
		struct drec_engine_val *v = &s->ev[c->nengines];
		long idx;

		if (!te->present)
			continue;
		idx = engine_idx(e, te->name, te->capacity, te->has_maxfreq ? te->maxfreq_hz : 0);
		if (idx < 0)
			return -ENOMEM;
		memset(v, 0, sizeof(*v));
		v->engine = (uint32_t)idx;
		if (te->has_busy) {
			v->flags |= DREC_E_BUSY;
			v->busy_ns = te->busy.value;
		}
		if (te->has_cycles) {
			v->flags |= DREC_E_CYCLES;
			v->cycles = te->cycles.value;
		}
		if (te->has_total_cycles) {
			v->flags |= DREC_E_TOTAL_CYCLES;
			v->total_cycles = te->total_cycles.value;
		}
		c->nengines++;
	}
	for (i = 0; i < tc->nregions; i++) {
		const struct dac_tk_region *tr = &tc->regions[i];
		struct drec_region_val *v = &s->rv[c->nregions];
		long idx = region_idx(e, tr->name);

		if (idx < 0)
			return -ENOMEM;
		memset(v, 0, sizeof(*v));
		v->region = (uint32_t)idx;
		v->flags = (tr->has_total ? DREC_R_TOTAL : 0) |
			   (tr->has_shared ? DREC_R_SHARED : 0) |
			   (tr->has_resident ? DREC_R_RESIDENT : 0) |
			   (tr->has_purgeable ? DREC_R_PURGEABLE : 0) |
			   (tr->has_active ? DREC_R_ACTIVE : 0);
		v->total = tr->total;
		v->shared = tr->shared;
		v->resident = tr->resident;
		v->purgeable = tr->purgeable;
		v->active = tr->active;
		c->nregions++;
	}
	c->engines = s->ev;
	c->regions = s->rv;
	if (c->flags & DREC_C_CLIENT_ID)
		note_seen(s, c->client_id, c->dev);
	return 0;
}

/* Write every client of the tracker's latest sample. */
/*
 * A client held by more than one process (fork, fd passing): a HOLDERS
 * record after its SAMPLE names every one of them (the SAMPLE has the first).
 */
static int write_holders(struct rec_state *s, const struct dac_tk_client *c,
			 const struct drec_client *dc)
{
	struct drec_holder *h;
	size_t n = 0;
	int ret;

	if (!(dc->flags & DREC_C_CLIENT_ID) || c->nholders < 2)
		return 0;
	h = calloc(c->nholders, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t k = 0; k < c->nholders; k++) {
		size_t j;

		for (j = 0; j < n && h[j].pid != (uint32_t)c->holders[k].pid; j++)
			;
		if (j < n)
			continue;	/* another fd of the same process */
		h[n].pid = (uint32_t)c->holders[k].pid;
		snprintf(h[n].comm, sizeof(h[n].comm), "%s",
			 c->holders[k].comm ? c->holders[k].comm : "");
		n++;
	}
	ret = n > 1 ? drec_write_holders(&s->w, dc->time_ns, dc->dev, dc->client_id, dc->flags,
					 h, n) : 0;
	free(h);
	return ret;
}

/*
 * A CAPACITY record for client @dc (engines of @tc) before its SAMPLE when
 * it is new to the recording or prints other capacities than last time:
 * utilisation is busy time over wall time times the client's own capacity.
 */
static int write_capacity(struct rec_state *s, const struct dac_tk_client *tc,
			  const struct drec_client *dc, unsigned long gen)
{
	bool has_id = dc->flags & DREC_C_CLIENT_ID;
	uint64_t id = has_id ? dc->client_id : dc->pid;
	struct capset *cs = NULL;
	size_t n = 0, i;

	if (grow((void **)&s->cv, &s->cap_cv, dc->nengines + 1, sizeof(*s->cv)))
		return -ENOMEM;
	for (i = 0; i < dc->nengines; i++) {
		const struct dac_tk_engine *te = NULL;
		const char *name = s->devs[dc->dev].d.engines[dc->engines[i].engine].name;

		for (size_t k = 0; k < tc->nengines && !te; k++)
			if (tc->engines[k].present && !strcmp(tc->engines[k].name, name))
				te = &tc->engines[k];
		s->cv[n].engine = dc->engines[i].engine;
		s->cv[n++].capacity = te && te->capacity ? te->capacity : 1;
	}
	/* clients come in the same order every sample: try where the last one was */
	for (i = 0; i < s->ncaps; i++) {
		size_t k = (s->cap_hint + i) % s->ncaps;
		struct capset *x = &s->caps[k];

		if (x->dev == dc->dev && x->id == id && x->has_id == has_id) {
			cs = x;
			s->cap_hint = k + 1;
			break;
		}
	}
	if (!cs) {
		if (grow((void **)&s->caps, &s->cap_caps, s->ncaps + 1, sizeof(*s->caps)))
			return -ENOMEM;
		cs = &s->caps[s->ncaps++];
		memset(cs, 0, sizeof(*cs));
		cs->dev = dc->dev;
		cs->id = id;
		cs->has_id = has_id;
		cs->n = (size_t)-1;	/* never written */
	}
	cs->gen = gen;
	if (cs->n == n && !memcmp(cs->v, s->cv, n * sizeof(*s->cv)))
		return 0;
	free(cs->v);
	cs->v = malloc((n ? n : 1) * sizeof(*cs->v));
	if (!cs->v) {
		cs->n = (size_t)-1;
		return -ENOMEM;
	}
	memcpy(cs->v, s->cv, n * sizeof(*cs->v));
	cs->n = n;
	return n ? drec_write_capacity(&s->w, dc, s->cv, n) : 0;
}

/* Forget the capacities of clients that were not in sample @gen. */
static void prune_capacity(struct rec_state *s, unsigned long gen)
{
	size_t k = 0;

	for (size_t i = 0; i < s->ncaps; i++) {
		if (s->caps[i].gen != gen) {
			free(s->caps[i].v);
			continue;
		}
		s->caps[k++] = s->caps[i];
	}
	s->ncaps = k;
	s->cap_hint = 0;
}

static int write_samples(struct rec_state *s, const struct dac_tracker *t)
{
	size_t i, n = dac_tracker_nclients(t);
	struct drec_client *cs = calloc(n ? n : 1, sizeof(*cs));
	struct drec_engine_val **evs = calloc(n ? n : 1, sizeof(*evs));
	struct drec_region_val **rvs = calloc(n ? n : 1, sizeof(*rvs));
	int ret = 0;

	if (!cs || !evs || !rvs) {
		ret = -ENOMEM;
		goto out;
	}
	/* Map first (it may extend device descriptions), then describe, then write. */
	for (i = 0; i < n && !ret; i++) {
		ret = map_client(s, dac_tracker_client(t, i), &cs[i]);
		if (ret)
			break;
		evs[i] = malloc((cs[i].nengines + 1) * sizeof(**evs));
		rvs[i] = malloc((cs[i].nregions + 1) * sizeof(**rvs));
		if (!evs[i] || !rvs[i]) {
			ret = -ENOMEM;
			break;
		}
		memcpy(evs[i], cs[i].engines, cs[i].nengines * sizeof(**evs));
		memcpy(rvs[i], cs[i].regions, cs[i].nregions * sizeof(**rvs));
		cs[i].engines = evs[i];
		cs[i].regions = rvs[i];
	}
	if (!ret)
		ret = flush_devices(s);
	for (i = 0; i < n && !ret; i++) {
		ret = write_capacity(s, dac_tracker_client(t, i), &cs[i], s->samples + 1);
		if (!ret)
			ret = drec_write_client(&s->w, DREC_SAMPLE, &cs[i]);
		if (!ret)
			ret = write_holders(s, dac_tracker_client(t, i), &cs[i]);
	}
	if (!ret) {
		s->samples++;
		prune_capacity(s, s->samples);
	}
out:
	for (i = 0; evs && rvs && i < n; i++) {
		free(evs[i]);
		free(rvs[i]);
	}
	free(evs);
	free(rvs);
	free(cs);
	return ret;
}

/* ---- BPF events ---- */

static int on_bpf_event(void *ctx, const struct dac_bpf_event *ev)
{
	struct rec_state *s = ctx;
	const struct dac_bpf_client_exit *x;
	struct drec_client c;
	struct rdev_ent *e = NULL, *same = NULL;
	char drv[DAC_BPF_NAME_LEN + 1];
	uint64_t now = dac_now_ns();
	size_t i, n;

	if (ev->type == DAC_BPF_LOST) {
		s->err = drec_write_overflow(&s->w, now, DREC_SRC_BPF_RINGBUF);
		if (!s->err)
			s->err = drec_write_lost(&s->w, now, DREC_SRC_BPF_RINGBUF,
						 ev->lost.count);
		s->overflows++;
		s->lost += ev->lost.count;
		return s->err;
	}
	if (ev->type != DAC_BPF_CLIENT_EXIT)
		return 0;
	x = &ev->exit;
	/*
	 * The ring may hold exits from before this recording (nobody read them
	 * yet): they are not part of it. With --pid, neither are other
	 * processes' clients.
	 */
	if (x->close_ns < s->start_ns ||
	    (s->pid_filter && (pid_t)(x->tgid ? x->tgid : x->pid) != s->pid_filter))
		return 0;
	snprintf(drv, sizeof(drv), "%.*s", DAC_BPF_NAME_LEN, x->driver);
	/*
	 * Which stream device? The one the client was sampled on (and then we
	 * learn that BPF device id), else one learnt before, else the only
	 * sampled device of that driver, else a device known from BPF only.
	 */
	for (i = 0; i < s->nseen && !e; i++)
		if (s->seen[i].id == x->client_id) {
			e = &s->devs[s->seen[i].dev];
			if (!e->bpf_only) {
				e->has_bpf_id = true;
				e->bpf_device_id = x->device_id;
			}
		}
	for (i = 0; i < s->ndevs && !e; i++)
		if ((s->devs[i].bpf_only || s->devs[i].has_bpf_id) &&
		    s->devs[i].bpf_device_id == x->device_id)
			e = &s->devs[i];
	for (i = 0, n = 0; i < s->ndevs && !e; i++)
		if (!s->devs[i].bpf_only && !strcmp(s->devs[i].d.driver, drv))
			n++, same = &s->devs[i];
	if (!e && n == 1)
		e = same;
	if (!e)
		e = find_dev(s, 0, drv, "", true, x->device_id);
	if (!e || grow((void **)&s->ev, &s->cap_ev, x->num_engines + 1, sizeof(*s->ev)) ||
	    grow((void **)&s->rv, &s->cap_rv, x->num_regions + 1, sizeof(*s->rv)))
		return s->err = -ENOMEM;
	memset(&c, 0, sizeof(c));
	c.time_ns = x->close_ns;
	c.client_id = x->client_id;
	c.flags = DREC_C_CLIENT_ID;
	c.dev = e->d.dev;
	c.pid = x->tgid ? x->tgid : x->pid;
	snprintf(c.comm, sizeof(c.comm), "%.*s", DAC_BPF_COMM_LEN, x->comm);
	for (i = 0; i < x->num_engines; i++) {
		char name[DAC_BPF_NAME_LEN + 1];
		long idx;

		snprintf(name, sizeof(name), "%.*s", DAC_BPF_NAME_LEN, x->engines[i].name);
		idx = engine_idx(e, name, 0, 0);
		if (idx < 0)
			return s->err = -ENOMEM;
		s->ev[i] = (struct drec_engine_val){
			.engine = (uint32_t)idx,
			.flags = DREC_E_BUSY | DREC_E_CYCLES | DREC_E_JOBS,
			.busy_ns = x->engines[i].busy_ns,
			.cycles = x->engines[i].cycles,
			.jobs = x->engines[i].jobs,
		};
	}
	for (i = 0; i < x->num_regions; i++) {
		char name[DAC_BPF_NAME_LEN + 1];
		long idx;

		snprintf(name, sizeof(name), "%.*s", DAC_BPF_NAME_LEN, x->regions[i].name);
		idx = region_idx(e, name);
		if (idx < 0)
			return s->err = -ENOMEM;
		s->rv[i] = (struct drec_region_val){
			.region = (uint32_t)idx,
			.flags = DREC_R_TOTAL,
			.total = x->regions[i].total,
		};
	}
	c.nengines = x->num_engines;
	c.nregions = x->num_regions;
	c.engines = s->ev;
	c.regions = s->rv;
	s->err = flush_devices(s);
	if (!s->err)
		s->err = drec_write_client(&s->w, DREC_CLIENT_EXIT, &c);
	if (!s->err)
		s->exits++;
	return s->err;
}

/* ---- main loop ---- */

static volatile sig_atomic_t stop_sig, child_done;

static void on_stop(int sig)
{
	stop_sig = sig;
}

static void on_chld(int sig)
{
	(void)sig;
	child_done = 1;
}

static void sleep_until(uint64_t deadline)
{
	uint64_t now = dac_now_ns();
	struct timespec ts;

	if (now >= deadline || stop_sig || child_done)
		return;
	ts.tv_sec = (time_t)((deadline - now) / 1000000000ull);
	ts.tv_nsec = (long)((deadline - now) % 1000000000ull);
	nanosleep(&ts, NULL);	/* a signal ends it early: that is wanted */
}

static pid_t spawn(char **argv)
{
	pid_t pid = fork();
	int e;

	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		fprintf(stderr, "drmacct record: cannot run %s: %s\n", argv[0], strerror(e));
		_exit(cli_exec_status(e));
	}
	return pid;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'D' },
		{ "count", required_argument, NULL, 'n' },
		{ "no-bpf", no_argument, NULL, 'B' },
		{ "pid", required_argument, NULL, 'P' },
		{ "spec", required_argument, NULL, 'S' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_discover_opts dopts = { .proc_root = NULL, .pid = 0, .fd = -1 };
	enum dac_profile profile = DAC_PROFILE_CURRENT;
	const char *out = "drmacct.rec";
	uint64_t interval = 1000000000ull, duration = 0, count = 0;
	struct rec_state s;
	struct drec_file_info fi;
	struct dac_discover_stats st;
	struct dac_tracker *t = NULL;
	struct dac_discover *d = NULL;
	struct dac_bpf *bpf = NULL;
	struct sigaction sa;
	struct timespec rt;
	bool use_bpf = true, wrote_header = false, ok = false;
	pid_t child = -1;
	const struct cli_common_opts co = {
		.pid = &dopts.pid, .profile = &profile, .proc_root = &dopts.proc_root,
		.usage = usage,
	};
	int c, opt, ret, rc = CLI_EXIT_FAIL, cstatus = 0;
	uint64_t start, next;
	FILE *f = NULL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:i:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return cli_usage_error(CMD, "--output needs a file name");
			out = optarg;
			break;
		case 'i':
			if (cli_opt_interval(CMD, optarg, false, &interval))
				return CLI_EXIT_USAGE;
			break;
		case 'D':
			if (cli_opt_duration(CMD, "duration", optarg, CLI_INTERVAL_MIN_NS,
					     8760 * 3600000000000ull, false, &duration))
				return CLI_EXIT_USAGE;
			break;
		case 'n':
			if (cli_opt_count(CMD, optarg, &count))
				return CLI_EXIT_USAGE;
			break;
		case 'B':
			use_bpf = false;
			break;
		default:
			opt = cli_common_opt(CMD, &co, argv, c);
			if (opt != CLI_OPT_NEXT)
				return opt;
			break;
		}
	}
	if (optind < argc && optind > 0 && strcmp(argv[optind - 1], "--"))
		return cli_usage_error(CMD, "unexpected argument '%s' (put a command after --)",
				       argv[optind]);
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO))
		return cli_usage_error(CMD, "refusing to write binary data to a terminal; give "
				       "-o FILE or redirect standard output");

	memset(&s, 0, sizeof(s));
	s.pid_filter = dopts.pid;
	if (cli_open_tracker(CMD, &dopts, &d, &t))
		return CLI_EXIT_FAIL;
	if (use_bpf && dopts.proc_root) {
		/* BPF sees this machine's clients, not those of another tree. */
		fprintf(stderr, "drmacct record: --proc-root given: not using BPF collection; "
			"recording SAMPLE records only\n");
		use_bpf = false;
	}
	if (use_bpf) {
		ret = dac_bpf_open_pinned(NULL, &bpf);
		if (ret) {
			bpf = NULL;
			fprintf(stderr, "drmacct record: BPF collection not available (%s): "
				"recording SAMPLE records only, no CLIENT_EXIT or LOST records\n",
				dac_bpf_strerror(ret));
		}
	}

	f = cli_open_output(CMD, out, true, &rc);
	if (!f)
		goto done;
	rc = CLI_EXIT_FAIL;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);

	/* The first sample describes the devices of the file header. */
	clock_gettime(CLOCK_REALTIME, &rt);
	start = dac_now_ns();
	s.start_ns = start;
	ret = dac_tracker_sample_proc(t, d, profile, start, &st);
	if (ret) {
		cli_error(CMD, "sampling failed: %s",
			  ret == -ESRCH ? "no such process" : strerror(-ret));
		goto done;
	}
	for (size_t i = 0; i < dac_tracker_nclients(t); i++) {
		struct drec_client tmp;

		if (map_client(&s, dac_tracker_client(t, i), &tmp)) {
			cli_error(CMD, "out of memory");
			goto done;
		}
	}
	memset(&fi, 0, sizeof(fi));
	fi.flags = bpf ? DREC_F_BPF : 0;
	fi.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	fi.start_mono_ns = start;
	fi.interval_ns = interval;
	{
		struct drec_device *devs = calloc(s.ndevs ? s.ndevs : 1, sizeof(*devs));

		if (!devs) {
			cli_error(CMD, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < s.ndevs; i++) {
			devs[i] = s.devs[i].d;
			s.devs[i].dirty = false;
		}
		ret = drec_writer_init(&s.w, f, &fi, devs, s.ndevs);
		free(devs);
	}
	if (ret)
		goto write_err;
	wrote_header = true;
	ret = write_samples(&s, t);
	if (!ret)
		ret = drec_writer_flush(&s.w);
	if (ret)
		goto write_err;

	if (optind < argc) {
		child = spawn(argv + optind);
		if (child < 0) {
			cli_error(CMD, "fork: %s", strerror(errno));
			goto done;
		}
	}
	next = start + interval;
	while (!stop_sig) {
		uint64_t now;

		if (count && s.samples >= count)
			break;
		if (bpf) {
			int ms;

			now = dac_now_ns();
			ms = next > now ? (int)((next - now + 999999) / 1000000) : 0;
			ret = dac_bpf_poll(bpf, ms, on_bpf_event, &s);
			if (ret < 0 && ret != -EINTR && !s.err) {
				cli_error(CMD, "reading BPF events failed: %s", strerror(-ret));
				dac_bpf_close(bpf);
				bpf = NULL;
			}
			if (s.err) {
				ret = s.err;
				goto write_err;
			}
		}
		sleep_until(next);
		if (child > 0 && child_done) {
			if (waitpid(child, &cstatus, WNOHANG) == child)
				child = 0;	/* take a last sample, then stop */
			child_done = 0;
		}
		if (stop_sig)
			break;
		now = dac_now_ns();
		if (now < next && child != 0)
			continue;
		ret = dac_tracker_sample_proc(t, d, profile, now, &st);
		if (ret && ret != -ESRCH) {
			cli_error(CMD, "sampling failed: %s", strerror(-ret));
			goto done;
		}
		ret = write_samples(&s, t);
		/* Whole records on disk after every sample: readable live. */
		if (!ret)
			ret = drec_writer_flush(&s.w);
		if (ret)
			goto write_err;
		next += interval;
		if (next < now)
			next = now + interval;	/* we fell behind: do not burst */
		if (child == 0)
			break;
		if (duration && now - start >= duration)
			break;
	}
	/* Exits that happened up to the end. */
	if (bpf) {
		dac_bpf_poll(bpf, 0, on_bpf_event, &s);
		if (s.err) {
			ret = s.err;
			goto write_err;
		}
	}
	ret = drec_writer_finish(&s.w);
	if (ret)
		goto write_err;
	fprintf(stderr, "drmacct record: %llu samples, %llu records (%llu client exits, "
		"%llu lost), %llu bytes to %s\n",
		(unsigned long long)s.samples, (unsigned long long)s.w.records,
		(unsigned long long)s.exits, (unsigned long long)s.lost,
		(unsigned long long)s.w.bytes, strcmp(out, "-") ? out : "stdout");
	cli_note_discovery(CMD, &st);
	if (child == 0 && (!WIFEXITED(cstatus) || WEXITSTATUS(cstatus)))
		fprintf(stderr, "drmacct record: the command %s %d\n",
			WIFEXITED(cstatus) ? "exited with status" : "was killed by signal",
			WIFEXITED(cstatus) ? WEXITSTATUS(cstatus) : WTERMSIG(cstatus));
	/* A command that ended by itself: its status, as from a shell. */
	ok = true;
	rc = child == 0 ? cli_wait_status(cstatus) : CLI_EXIT_OK;
	goto done;
write_err:
	if (f != stdout || !cli_write_failed_epipe(ret))
		cli_error(CMD, "writing %s failed: %s", out, strerror(-ret));
done:
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	if (wrote_header && !ok)
		drec_writer_finish(&s.w);
	else if (!wrote_header)
		free(s.w.buf);
	if (f && f != stdout && fclose(f) && ok) {
		cli_error(CMD, "writing %s failed: %s", out, strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	free_state(&s);
	cli_close_sampler(bpf, d, t);
	return rc;
}

DRMACCT_COMMAND(record, cmd_record, "record per-client usage to a binary stream file");
