// SPDX-License-Identifier: MIT
/*
 * bpf_read.c - read a loaded or pinned collection (see bpf.h): counters,
 * engine and region names, exit records, the maps' contents and costs,
 * program statistics, `drmacct stat` tracking, cgroup paths.
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

/* Names of enum dac_map_id (the maps with full/busy/nomem counters). */
static const char *const counted_maps[DAC_MAP__COUNT] = {
	[DAC_MAP_CLIENTS] = "clients", [DAC_MAP_USAGE] = "usage", [DAC_MAP_MEM] = "mem",
	[DAC_MAP_TOTALS] = "totals", [DAC_MAP_COOKIE_USAGE] = "cookie_usage",
	[DAC_MAP_COOKIE_MEM] = "cookie_mem", [DAC_MAP_TRACKED] = "tracked",
	[DAC_MAP_RINGS] = "rings",
	[DAC_MAP_INFLIGHT] = "inflight", [DAC_MAP_SCHED_USAGE] = "sched_usage",
	[DAC_MAP_INFLIGHT617] = "inflight617", [DAC_MAP_SCHED_CLIENTS] = "sched_clients",
	[DAC_MAP_PROCS] = "procs", [DAC_MAP_CGROUP_SCHED] = "cgroup_sched",
	[DAC_MAP_NAMES] = "names",
};

/* ---- stats ----------------------------------------------------------------- */

int dac_bpf_read_stats(struct dac_bpf *b, struct dac_bpf_stats *st)
{
	uint64_t v[DAC_STAT__COUNT];

	for (uint32_t i = 0; i < DAC_STAT__COUNT; i++) {
		v[i] = 0;
		if (bpf_map_lookup_elem(b->fd[M_STATS], &i, &v[i]))
			return -errno;
	}
	memset(st, 0, sizeof(*st));
	st->exit_records = v[DAC_STAT_EXIT_RECORDS];
	st->proc_records = v[DAC_STAT_PROC_RECORDS];
	st->exit_drops = v[DAC_STAT_EXIT_DROPS];
	st->job_end_unseen = v[DAC_STAT_JOB_END_UNSEEN];
	st->sched_orphans = v[DAC_STAT_SCHED_ORPHAN_DONE];
	st->read_faults = v[DAC_STAT_READ_FAULT];
	st->cas_giveups = v[DAC_STAT_CAS_GIVEUP];
	st->nested_job_begin = v[DAC_STAT_NESTED_JOB_BEGIN];
	st->nested_job_end = v[DAC_STAT_NESTED_JOB_END];
	st->nested_sched_done = v[DAC_STAT_NESTED_SCHED_DONE];
	st->nested_client_open = v[DAC_STAT_NESTED_CLIENT_OPEN];
	st->nested_client_close = v[DAC_STAT_NESTED_CLIENT_CLOSE];
	st->nested_mem_change = v[DAC_STAT_NESTED_MEM_CHANGE];
	st->nested_sched_queue = v[DAC_STAT_NESTED_SCHED_QUEUE];
	st->nested_sched_run = v[DAC_STAT_NESTED_SCHED_RUN];
	st->nested_fork = v[DAC_STAT_NESTED_FORK];
	st->nested_exit = v[DAC_STAT_NESTED_EXIT];
	st->scratch_full = v[DAC_STAT_SCRATCH_FULL];
	st->proc_late = v[DAC_STAT_PROC_LATE];
	st->sweep_written = v[DAC_STAT_SWEEP_WRITTEN];
	st->stale_released = v[DAC_STAT_STALE_RELEASED];
	st->sched_lost = v[DAC_STAT_SCHED_LOST];
	st->rings_new = v[DAC_STAT_RINGS_NEW];
	st->rings_reclaimed = v[DAC_STAT_RINGS_RECLAIMED];
	st->ring_reclaim_runs = v[DAC_STAT_RING_RECLAIM_RUNS];
	st->left_removed = v[DAC_STAT_LEFT_REMOVED];
	st->clients_reclaimed = v[DAC_STAT_CLIENTS_RECLAIMED];
	for (int i = 0; i < DAC_MAP__COUNT; i++) {
		st->full += v[DAC_STAT_FULL + i];
		st->busy += v[DAC_STAT_BUSY + i];
		st->nomem += v[DAC_STAT_NOMEM + i];
	}
	return 0;
}

static void copy_str(char *dst, size_t dlen, const char *src, size_t slen)
{
	size_t n = strnlen(src, slen);

	if (n >= dlen)
		n = dlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- names ----------------------------------------------------------------- */

static void fallback_name(bool region, uint32_t index, char *buf, size_t len)
{
	snprintf(buf, len, "%s%u", region ? "region" : "engine", index);
}

static bool tried_device(struct dac_bpf *b, uint32_t dev)
{
	for (size_t i = 0; i < b->nlearned; i++)
		if (b->learned[i] == dev)
			return true;
	return false;
}

int dac_bpf_name_raw(struct dac_bpf *b, uint32_t device_id, unsigned int kind, uint32_t index,
		     char *buf, size_t len)
{
	struct dac_name_key k = { .device_id = device_id, .kind = kind, .index = index };
	char name[DAC_NAME_LEN];

	if (index > UINT16_MAX)
		return -ERANGE;
	if (bpf_map_lookup_elem(b->fd[M_NAMES], &k, name))
		return -errno;
	name[DAC_NAME_LEN - 1] = '\0';
	snprintf(buf, len, "%s", name);
	return 0;
}

const char *dac_bpf_name(struct dac_bpf *b, uint32_t device_id, bool region, uint32_t index,
			 char *buf, size_t len)
{
	struct dac_name_key k = {
		.device_id = device_id,
		.kind = region ? DAC_NAME_REGION : DAC_NAME_ENGINE,
		.index = index,
	};
	char name[DAC_NAME_LEN];

	if (index > UINT16_MAX || !device_id)
		goto fallback;
	if (!bpf_map_lookup_elem(b->fd[M_NAMES], &k, name))
		goto found;
	/*
	 * Not named yet: one walk of /proc, whose fdinfo reads make the
	 * kernel name the devices of the files open now (bpf_seed.c); at
	 * most once per device.
	 */
	if (!tried_device(b, device_id)) {
		uint32_t *tmp = realloc(b->learned, (b->nlearned + 1) * sizeof(*tmp));

		if (tmp) {
			b->learned = tmp;
			b->learned[b->nlearned++] = device_id;
			dac_bpf_learn_names(b);
			if (!bpf_map_lookup_elem(b->fd[M_NAMES], &k, name))
				goto found;
		}
	}
fallback:
	fallback_name(region, index, buf, len);
	return buf;
found:
	name[DAC_NAME_LEN - 1] = '\0';
	snprintf(buf, len, "%s", name);
	return buf;
}

/* ---- records --------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t want, size_t elem)
{
	void *tmp;

	if (want <= *cap)
		return 0;
	tmp = realloc(*p, want * elem);
	if (!tmp)
		return -ENOMEM;
	*p = tmp;
	*cap = want;
	return 0;
}

/* Hand @ev to the poll callback; its non-zero return stops the poll. */
static int deliver(struct dac_bpf *b, const struct dac_bpf_event *ev)
{
	int ret = b->cb(b->cb_ctx, ev);

	b->delivered++;
	if (ret) {
		b->cb_ret = ret;
		return -ECANCELED;	/* stops ring_buffer__poll; the record is consumed */
	}
	return 0;
}

/*
 * Name @name of ring @id (carried by the entry or record: the rings map
 * is write-only) into @buf; "ring<N>" when it is empty (the ring was gone
 * when the entry was made).
 */
static void ring_name(uint32_t id, const char *name, size_t name_len, char *buf, size_t len)
{
	if (name_len && name[0])
		copy_str(buf, len, name, name_len);
	else
		snprintf(buf, len, "ring%u", id);
}

static int on_proc_record(struct dac_bpf *b, const void *data, size_t size)
{
	const struct dac_rec_proc_exit *r;
	const struct dac_rec_ring *rr;
	struct dac_bpf_event ev = { .type = DAC_BPF_PROC_EXIT };
	struct dac_bpf_proc_exit *x = &ev.proc;

	if (dac_bpf_decode_proc_exit(data, size, &r, &rr))
		return 0;	/* not ours: skip */
	if (grow((void **)&b->rings, &b->rings_cap, r->num_rings + 1, sizeof(*b->rings))) {
		b->cb_ret = -ENOMEM;
		return -ENOMEM;
	}
	x->tgid = r->tgid;
	x->flags = (r->flags & DAC_EXIT_F_TRUNCATED ? DAC_BPF_EXIT_TRUNCATED : 0) |
		   (r->flags & DAC_EXIT_F_REUSED ? DAC_BPF_EXIT_REUSED : 0) |
		   (r->flags & DAC_EXIT_F_INCOMPLETE ? DAC_BPF_EXIT_INCOMPLETE : 0);
	x->pending = r->pending;
	x->seq = r->seq;
	x->start_ns = r->start_ns;
	x->exit_ns = r->exit_ns;
	x->busy_ns = r->busy_ns;
	x->jobs = r->jobs;
	x->acct_busy_ns = r->acct_busy_ns;
	x->acct_jobs = r->acct_jobs;
	x->cookie = r->cookie;
	x->cgroup_id = r->cgroup_id;
	copy_str(x->comm, sizeof(x->comm), r->comm, sizeof(r->comm));
	x->num_rings = 0;
	x->rings = b->rings;
	/* entry i is the process's ring slot i: ring id 0 is an empty slot */
	for (uint32_t i = 0; i < r->num_rings; i++) {
		struct dac_bpf_proc_ring *o = &b->rings[x->num_rings];

		if (!rr[i].ring_id)
			continue;
		o->ring_id = rr[i].ring_id;
		ring_name(rr[i].ring_id, rr[i].name, sizeof(rr[i].name), o->ring, sizeof(o->ring));
		o->busy_ns = rr[i].busy_ns;
		o->jobs = rr[i].jobs;
		x->num_rings++;
	}
	return deliver(b, &ev);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct dac_bpf *b = ctx;
	const struct dac_rec_exit *r;
	struct dac_bpf_event ev = { .type = DAC_BPF_CLIENT_EXIT };
	struct dac_bpf_client_exit *x = &ev.exit;
	const struct dac_rec_engine *re;
	const struct dac_rec_region *rr;

	if (size >= sizeof(uint32_t) && *(const uint32_t *)data == DAC_REC_PROC_EXIT)
		return on_proc_record(b, data, size);
	if (dac_bpf_decode_exit(data, size, &r, &re, &rr))
		return 0;	/* not ours: skip, never trust its sizes */
	if (grow((void **)&b->eng, &b->eng_cap, r->num_engines + 1, sizeof(*b->eng)) ||
	    grow((void **)&b->reg, &b->reg_cap, r->num_regions + 1, sizeof(*b->reg))) {
		b->cb_ret = -ENOMEM;
		return -ENOMEM;
	}
	x->client_id = r->client_id;
	x->seq = r->seq;
	x->cookie = r->cookie;
	x->open_ns = r->open_ns;
	x->close_ns = r->close_ns;
	x->device_id = r->device_id;
	x->pid = r->pid;
	x->tgid = r->tgid;
	x->flags = (r->flags & DAC_EXIT_F_TRUNCATED ? DAC_BPF_EXIT_TRUNCATED : 0) |
		   (r->flags & DAC_EXIT_F_NO_OPEN ? DAC_BPF_EXIT_NO_OPEN : 0);
	copy_str(x->comm, sizeof(x->comm), r->comm, sizeof(r->comm));
	copy_str(x->driver, sizeof(x->driver), r->driver, sizeof(r->driver));
	x->num_engines = r->num_engines;
	x->num_regions = r->num_regions;
	x->engines = b->eng;
	x->regions = b->reg;
	for (uint32_t i = 0; i < r->num_engines; i++) {
		dac_bpf_name(b, r->device_id, false, i, b->eng[i].name, sizeof(b->eng[i].name));
		b->eng[i].busy_ns = re[i].busy_ns;
		b->eng[i].cycles = re[i].cycles;
		b->eng[i].jobs = re[i].jobs;
	}
	for (uint32_t i = 0; i < r->num_regions; i++) {
		dac_bpf_name(b, r->device_id, true, i, b->reg[i].name, sizeof(b->reg[i].name));
		b->reg[i].peak = rr[i].peak;
		b->reg[i].total = rr[i].total;
	}
	return deliver(b, &ev);
}

int dac_bpf_poll(struct dac_bpf *b, int timeout_ms, dac_bpf_event_fn cb, void *ctx)
{
	uint64_t drops;
	int err;

	if (!b->rb) {
		b->rb = ring_buffer__new(b->fd[M_RECORDS], on_record, b, NULL);
		if (!b->rb)
			return -errno;
	}
	b->cb = cb;
	b->cb_ctx = ctx;
	b->cb_ret = 0;
	b->delivered = 0;
	err = ring_buffer__poll(b->rb, timeout_ms);
	if (err < 0 && b->cb_ret)
		return b->cb_ret;
	if (err < 0)
		return err;
	/* Drain what arrived meanwhile, then account the drops. */
	err = ring_buffer__consume(b->rb);
	if (err < 0)
		return b->cb_ret ? b->cb_ret : err;
	drops = dac_bpf_stat_get(b, DAC_STAT_EXIT_DROPS);
	if (drops > b->drops_reported) {
		struct dac_bpf_event ev = { .type = DAC_BPF_LOST };
		int ret;

		ev.lost.count = drops - b->drops_reported;
		b->drops_reported = drops;
		ret = cb(ctx, &ev);
		b->delivered++;
		if (ret)
			return ret;
	}
	return b->delivered;
}

/* ---- map readers ------------------------------------------------------------ */

/*
 * Walk every entry of @fd, calling @fn(key, value, arg); a non-zero return
 * of @fn ends the walk with that value.
 *
 * By BPF_MAP_LOOKUP_BATCH: the kernel hands over whole hash buckets, in
 * bucket order, so an entry deleted or added during the walk moves no
 * other entry's place -- each entry present from start to end is seen
 * exactly once (a key-by-key walk, whose cursor key can vanish, starts
 * over from the first key then). A bucket larger than the chunk (ENOSPC)
 * doubles it. Maps without batch operations (EINVAL, ENOTSUPP from kernels
 * or map types that lack them) are walked key by key.
 */
typedef dac_bpf_walk_fn walk_fn;

#define WALK_CHUNK	256
static size_t walk_chunk = WALK_CHUNK;

void dac_bpf_test_walk_chunk(size_t n)
{
	walk_chunk = n ? n : WALK_CHUNK;
}
#define DAC_ENOTSUPP	524	/* the kernel's internal "not supported" */

static int map_walk_keys(int fd, size_t ksize, size_t vsize, walk_fn fn, void *arg)
{
	unsigned char *key = calloc(2, ksize), *next = key + ksize, *val = malloc(vsize);
	bool first = true;
	int err = 0;

	if (!key || !val) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (bpf_map_get_next_key(fd, first ? NULL : key, next)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		first = false;
		memcpy(key, next, ksize);
		if (bpf_map_lookup_elem(fd, key, val)) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			break;
		}
		err = fn(key, val, arg);
		if (err)
			break;
	}
out:
	free(key);
	free(val);
	return err;
}

int dac_bpf_map_walk(int fd, size_t ksize, size_t vsize, walk_fn fn, void *arg)
{
	/* the batch cursor: a bucket index for hashes, a key for arrays */
	unsigned char *token = calloc(2, ksize > 8 ? ksize : 8);
	size_t tsize = ksize > 8 ? ksize : 8, chunk = walk_chunk;
	unsigned char *keys = NULL, *vals = NULL, *in = NULL;
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	int err = 0;

	if (!token)
		return -ENOMEM;
	for (bool done = false; !done && !err;) {
		__u32 count = chunk;

		if (!keys) {
			keys = malloc(chunk * ksize);
			vals = malloc(chunk * vsize);
			if (!keys || !vals) {
				err = -ENOMEM;
				break;
			}
		}
		if (bpf_map_lookup_batch(fd, in, token + tsize, keys, vals, &count, &opts)) {
			if (errno == ENOSPC && chunk < (1u << 20)) {
				chunk *= 2;	/* one bucket holds more: again, bigger */
				free(keys);
				free(vals);
				keys = vals = NULL;
				continue;
			}
			if ((errno == EINVAL || errno == DAC_ENOTSUPP) && !in) {
				free(keys);
				free(vals);
				free(token);
				return map_walk_keys(fd, ksize, vsize, fn, arg);
			}
			if (errno != ENOENT) {
				err = -errno;
				break;
			}
			done = true;	/* ENOENT: these were the last ones */
		}
		for (__u32 i = 0; i < count && !err; i++)
			err = fn(keys + i * ksize, vals + i * vsize, arg);
		memcpy(token, token + tsize, tsize);
		in = token;
	}
	free(keys);
	free(vals);
	free(token);
	return err;
}

struct vec {
	void *p;
	size_t n, cap, elem;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *tmp = realloc(v->p, cap * v->elem);

		if (!tmp)
			return NULL;
		v->p = tmp;
		v->cap = cap;
	}
	return memset((char *)v->p + v->n++ * v->elem, 0, v->elem);
}

static int finish(struct vec *v, int err, void *out, size_t *n)
{
	if (err) {
		free(v->p);
		*(void **)out = NULL;
		*n = 0;
		return err;
	}
	*(void **)out = v->p;
	*n = v->n;
	return 0;
}

static int client_cb(const void *key, const void *val, void *arg)
{
	const struct dac_client_val *c = val;
	struct dac_bpf_client *o = vec_push(arg);

	if (!o)
		return -ENOMEM;
	o->client_id = *(const uint64_t *)key;
	o->open_ns = c->open_ns;
	o->cookie = c->cookie;
	o->device_id = c->device_id;
	o->pid = c->pid;
	o->tgid = c->tgid;
	o->cgroup_id = c->cgroup_id;
	copy_str(o->comm, sizeof(o->comm), c->comm, sizeof(c->comm));
	copy_str(o->driver, sizeof(o->driver), c->driver, sizeof(c->driver));
	copy_str(o->name, sizeof(o->name), c->name, sizeof(c->name));
	return 0;
}

int dac_bpf_read_clients(struct dac_bpf *b, struct dac_bpf_client **out, size_t *n)
{
	struct vec v = { .elem = sizeof(**out) };

	return finish(&v, dac_bpf_map_walk(b->fd[M_CLIENTS], sizeof(uint64_t),
				   sizeof(struct dac_client_val), client_cb, &v), out, n);
}

/*
 * One usage entry as of one moment: two copies that agree, taken while no
 * program was writing it (struct dac_usage_val). A copy by the bpf()
 * syscall is not atomic, so a single one can pair start_sum from before a
 * job's begin with running from after it. -ENOENT when the entry is gone;
 * -EAGAIN when writers kept it busy for every try (practically never: a
 * write takes well under a microsecond).
 */
#define USAGE_READ_TRIES	1000

static int usage_lookup(int fd, const struct dac_usage_key *k, struct dac_usage_val *v)
{
	struct dac_usage_val again;

	for (int i = 0; i < USAGE_READ_TRIES; i++) {
		if (bpf_map_lookup_elem(fd, k, v) || bpf_map_lookup_elem(fd, k, &again))
			return -errno;
		if (v->wr_begun == v->wr_done && !memcmp(v, &again, sizeof(again)))
			return 0;
		sched_yield();
	}
	return -EAGAIN;
}

/*
 * Busy time of @v at @now: finished jobs plus the running ones so far. A
 * job that began after @now was taken has no in-flight part yet; while an
 * end precedes its begin (struct dac_usage_val) the running ones count at
 * most what they ran, never more.
 */
static uint64_t usage_busy_at(const struct dac_usage_val *v, uint64_t now)
{
	int64_t inflight;

	if (v->running <= 0)
		return v->busy_ns;
	inflight = v->running * (int64_t)now - v->start_sum;
	return inflight > 0 ? v->busy_ns + (uint64_t)inflight : v->busy_ns;
}

static int usage_key_cb(const void *key, const void *val, void *arg)
{
	struct dac_usage_key *o = vec_push(arg);

	(void)val;
	if (!o)
		return -ENOMEM;
	memcpy(o, key, sizeof(*o));
	return 0;
}

uint64_t dac_bpf_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void usage_fill(struct dac_bpf *b, const struct dac_usage_key *k,
		       const struct dac_usage_val *v, uint64_t now, struct dac_bpf_usage *o)
{
	memset(o, 0, sizeof(*o));
	o->client_id = k->client_id;
	o->device_id = v->device_id;
	o->engine = k->engine;
	dac_bpf_name(b, v->device_id, false, k->engine, o->name, sizeof(o->name));
	o->busy_ns = usage_busy_at(v, now);
	o->cycles = v->cycles;
	o->jobs = v->jobs;
	o->running = v->running > 0 ? (uint32_t)v->running : 0;
}

int dac_bpf_read_usage(struct dac_bpf *b, uint64_t *now_ns, struct dac_bpf_usage **out,
		       size_t *n)
{
	struct vec keys = { .elem = sizeof(struct dac_usage_key) };
	struct dac_usage_val *vals;
	struct dac_bpf_usage *u;
	size_t nu = 0;
	uint64_t now;
	int err;

	*out = NULL;
	*n = 0;
	err = dac_bpf_map_walk(b->fd[M_USAGE], sizeof(struct dac_usage_key),
		       sizeof(struct dac_usage_val), usage_key_cb, &keys);
	if (err) {
		free(keys.p);
		return err;
	}
	u = calloc(keys.n ? keys.n : 1, sizeof(*u));
	if (!u) {
		free(keys.p);
		return -ENOMEM;
	}
	/*
	 * Each entry is taken at its own moment and its in-flight part
	 * computed at the one @now taken after all of them: a job counts as
	 * running at most until @now, never longer than it can have run.
	 */
	vals = calloc(keys.n ? keys.n : 1, sizeof(*vals));
	if (!vals) {
		free(keys.p);
		free(u);
		return -ENOMEM;
	}
	for (size_t i = 0; i < keys.n; i++) {
		err = usage_lookup(b->fd[M_USAGE], (struct dac_usage_key *)keys.p + i, &vals[nu]);
		if (err == -ENOENT)
			continue;	/* the client closed meanwhile */
		if (err)
			break;
		((struct dac_usage_key *)keys.p)[nu] = ((struct dac_usage_key *)keys.p)[i];
		nu++;
	}
	now = dac_bpf_mono_ns();
	if (err && err != -ENOENT) {
		free(keys.p);
		free(vals);
		free(u);
		return err;
	}
	for (size_t i = 0; i < nu; i++)
		usage_fill(b, (struct dac_usage_key *)keys.p + i, &vals[i], now, &u[i]);
	*n = nu;
	*out = u;
	*now_ns = now;
	free(keys.p);
	free(vals);
	return 0;
}

int dac_bpf_lookup_usage(struct dac_bpf *b, uint64_t client_id, uint32_t engine,
			 uint64_t *now_ns, struct dac_bpf_usage *out)
{
	struct dac_usage_key k = { .client_id = client_id, .engine = engine };
	struct dac_usage_val v;
	uint64_t now;
	int err = usage_lookup(b->fd[M_USAGE], &k, &v);

	if (err)
		return err;
	now = dac_bpf_mono_ns();
	usage_fill(b, &k, &v, now, out);
	*now_ns = now;
	return 0;
}

struct mem_arg {
	struct vec v;
	struct dac_bpf *b;
};

static int mem_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_mem_key *k = key;
	const struct dac_mem_val *m = val;
	struct dac_bpf_mem *o = vec_push(&a->v);
	struct dac_client_val cv;
	uint32_t dev = 0;

	if (!o)
		return -ENOMEM;
	if (!bpf_map_lookup_elem(a->b->fd[M_CLIENTS], &k->client_id, &cv))
		dev = cv.device_id;
	o->client_id = k->client_id;
	o->region = k->region;
	dac_bpf_name(a->b, dev, true, k->region, o->name, sizeof(o->name));
	o->total = m->total;
	o->peak = m->peak;
	return 0;
}

int dac_bpf_read_mem(struct dac_bpf *b, struct dac_bpf_mem **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, dac_bpf_map_walk(b->fd[M_MEM], sizeof(struct dac_mem_key),
				     sizeof(struct dac_mem_val), mem_cb, &a), out, n);
}

/* The row of (@device_id, @engine) in @a's rows, added when there is none. */
static struct dac_bpf_total *total_row(struct mem_arg *a, uint32_t device_id, uint32_t engine)
{
	struct dac_bpf_total *o = a->v.p;

	for (size_t i = 0; i < a->v.n; i++)
		if (o[i].device_id == device_id && o[i].engine == engine)
			return &o[i];
	o = vec_push(&a->v);
	if (!o)
		return NULL;
	o->device_id = device_id;
	o->engine = engine;
	dac_bpf_name(a->b, device_id, false, engine, o->name, sizeof(o->name));
	return o;
}

/* Add finished jobs' sums to the row of (@device_id, @engine). */
static int total_add(struct mem_arg *a, uint32_t device_id, uint32_t engine, uint64_t busy_ns,
		     uint64_t cycles, uint64_t jobs)
{
	struct dac_bpf_total *o = total_row(a, device_id, engine);

	if (!o)
		return -ENOMEM;
	o->busy_ns += busy_ns;
	o->cycles += cycles;
	o->jobs += jobs;
	return 0;
}

static int total_cb(const void *key, const void *val, void *arg)
{
	const struct dac_total_key *k = key;
	const struct dac_total_val *t = val;

	return total_add(arg, k->device_id, k->engine, t->busy_ns, t->cycles, t->jobs);
}

/* An open client's finished jobs on one engine: part of its device's totals. */
static int total_usage_cb(const void *key, const void *val, void *arg)
{
	const struct dac_usage_key *k = key;
	const struct dac_usage_val *u = val;

	return total_add(arg, u->device_id, k->engine, u->busy_ns, u->cycles, u->jobs);
}

/*
 * Tries of a totals read that a client close moved entries under (each
 * means a close made progress; a close's move takes microseconds).
 */
#define TOTALS_READ_TRIES	1000

/*
 * The totals map holds closed clients' jobs; open clients' are in their
 * usage entries, which a close moves into it (bpf/drmacct/helper.bpf.c,
 * close_fold()). A read counts both, and is taken only when no move began
 * or was under way while it ran: else a moving client would count twice or
 * not at all.
 */
int dac_bpf_read_totals(struct dac_bpf *b, struct dac_bpf_total **out, size_t *n)
{
	for (int i = 0; i < TOTALS_READ_TRIES; i++) {
		struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };
		uint64_t done = dac_bpf_stat_get(b, DAC_STAT_FOLDS_DONE);
		uint64_t begun = dac_bpf_stat_get(b, DAC_STAT_FOLDS_BEGUN);
		int err;

		if (begun != done) {
			sched_yield();
			continue;
		}
		err = dac_bpf_map_walk(b->fd[M_TOTALS], sizeof(struct dac_total_key),
			       sizeof(struct dac_total_val), total_cb, &a);
		if (!err)
			err = dac_bpf_map_walk(b->fd[M_USAGE], sizeof(struct dac_usage_key),
				       sizeof(struct dac_usage_val), total_usage_cb, &a);
		if (!err && dac_bpf_stat_get(b, DAC_STAT_FOLDS_BEGUN) != begun) {
			free(a.v.p);
			sched_yield();
			continue;
		}
		return finish(&a.v, err, out, n);
	}
	*out = NULL;
	*n = 0;
	return -EAGAIN;
}

static int sched_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_sched_key *k = key;
	const struct dac_sched_val *s = val;
	struct dac_bpf_sched *o = vec_push(&a->v);

	if (!o)
		return -ENOMEM;
	o->tgid = k->tgid;
	o->ring_id = k->ring_id;
	o->start_ns = k->start_ns;
	o->cookie = s->cookie;
	o->cgroup_id = s->cgroup_id;
	copy_str(o->comm, sizeof(o->comm), s->comm, sizeof(s->comm));
	ring_name(k->ring_id, s->ring, sizeof(s->ring), o->ring, sizeof(o->ring));
	o->busy_ns = s->busy_ns;
	o->jobs = s->jobs;
	return 0;
}

int dac_bpf_read_sched(struct dac_bpf *b, struct dac_bpf_sched **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, dac_bpf_map_walk(b->fd[M_SCHED], sizeof(struct dac_sched_key),
				     sizeof(struct dac_sched_val), sched_cb, &a), out, n);
}

static int cgroup_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_cgroup_val *g = val;
	struct dac_bpf_cgroup *o = vec_push(&a->v);

	if (!o)
		return -ENOMEM;
	memcpy(&o->cgroup_id, key, sizeof(o->cgroup_id));
	o->busy_ns = g->busy_ns;
	o->jobs = g->jobs;
	return 0;
}

int dac_bpf_read_cgroups(struct dac_bpf *b, struct dac_bpf_cgroup **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, dac_bpf_map_walk(b->fd[M_CGROUP_SCHED], sizeof(uint64_t),
				     sizeof(struct dac_cgroup_val), cgroup_cb, &a), out, n);
}

static int sched_client_cb(const void *key, const void *val, void *arg)
{
	struct mem_arg *a = arg;
	const struct dac_sched_client_key *k = key;
	const struct dac_sched_client_val *s = val;
	struct dac_bpf_sched_client *o = vec_push(&a->v);

	if (!o)
		return -ENOMEM;
	o->client_id = k->client_id;
	o->ring_id = k->ring_id;
	o->tgid = s->tgid;
	ring_name(k->ring_id, s->ring, sizeof(s->ring), o->ring, sizeof(o->ring));
	o->busy_ns = s->busy_ns;
	o->jobs = s->jobs;
	return 0;
}

int dac_bpf_read_sched_clients(struct dac_bpf *b, struct dac_bpf_sched_client **out, size_t *n)
{
	struct mem_arg a = { .v = { .elem = sizeof(**out) }, .b = b };

	return finish(&a.v, dac_bpf_map_walk(b->fd[M_SCHED_CLIENTS], sizeof(struct dac_sched_client_key),
				     sizeof(struct dac_sched_client_val), sched_client_cb, &a),
		      out, n);
}

static int prog_stats_fd(int fd, const char *name, struct vec *v)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct dac_bpf_prog_stats *o;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	o = vec_push(v);
	if (!o)
		return -ENOMEM;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->run_cnt = info.run_cnt;
	o->run_time_ns = info.run_time_ns;
	o->recursion_misses = info.recursion_misses;
	return 0;
}

/*
 * Call @fn(prog fd, name, @arg) for every program of the collection that
 * runs: attached by us, or through a pinned link.
 */
static int for_each_prog(struct dac_bpf *b, int (*fn)(int fd, const char *name, void *arg),
			 void *arg)
{
	char p[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *dir;

	if (b->skel) {
		struct bpf_program **progs = (struct bpf_program **)&b->skel->progs;
		struct bpf_link **links = (struct bpf_link **)&b->skel->links;
		size_t nprog = sizeof(b->skel->progs) / sizeof(progs[0]);

		/*
		 * The attached ones, as in a pinned collection: not the other
		 * variant's (not loaded), nor sweep_init (run once by the loader).
		 */
		for (size_t i = 0; i < nprog; i++) {
			if (!links[i])
				continue;
			err = fn(bpf_program__fd(progs[i]), bpf_program__name(progs[i]), arg);
			if (err)
				return err;
		}
		return 0;
	}
	dac_bpf_join(p, sizeof(p), b->pin_dir, "links", NULL);
	dir = opendir(p);
	if (!dir)
		return -errno;
	while (!err && (de = readdir(dir))) {
		struct bpf_link_info li = {};
		__u32 len = sizeof(li);
		int lfd, pfd;

		if (de->d_name[0] == '.')
			continue;
		if (dac_bpf_join(p, sizeof(p), b->pin_dir, "links", de->d_name))
			continue;
		lfd = bpf_obj_get(p);
		if (lfd < 0) {
			err = -errno;
			break;
		}
		if (bpf_obj_get_info_by_fd(lfd, &li, &len)) {
			err = -errno;
			close(lfd);
			break;
		}
		close(lfd);
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0) {
			err = -errno;
			break;
		}
		err = fn(pfd, de->d_name, arg);
		close(pfd);
	}
	closedir(dir);
	return err;
}

static int prog_stats_cb(int fd, const char *name, void *arg)
{
	return prog_stats_fd(fd, name, arg);
}

int dac_bpf_read_prog_stats(struct dac_bpf *b, struct dac_bpf_prog_stats **out, size_t *n)
{
	struct vec v = { .elem = sizeof(**out) };

	return finish(&v, for_each_prog(b, prog_stats_cb, &v), out, n);
}

/* ---- maps: what each holds and costs ------------------------------------ */

/* The ids of the maps program @fd uses, appended to @ids (no duplicates). */
static int prog_map_ids_cb(int fd, const char *name, void *arg)
{
	struct vec *ids = arg;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), nr;
	uint32_t *m;
	int err = 0;

	(void)name;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	nr = info.nr_map_ids;
	if (!nr)
		return 0;
	m = calloc(nr, sizeof(*m));
	if (!m)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = nr;
	info.map_ids = (uintptr_t)m;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	for (__u32 i = 0; !err && i < nr && i < info.nr_map_ids; i++) {
		bool have = false;
		uint32_t *o;

		for (size_t k = 0; k < ids->n; k++)
			have |= ((uint32_t *)ids->p)[k] == m[i];
		if (have)
			continue;
		o = vec_push(ids);
		if (!o)
			err = -ENOMEM;
		else
			*o = m[i];
	}
	free(m);
	return err;
}

/* "memlock:" of a map's fdinfo: what the kernel charges for it. */
static uint64_t fd_memlock(int fd)
{
	unsigned long long v = 0;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Entries of a hash map by walking its keys; -1 when it cannot be read. */
static int64_t count_entries(int fd, const struct bpf_map_info *mi)
{
	unsigned char *key, *next;
	int64_t n = 0;

	switch (mi->type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return mi->max_entries;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		break;
	default:
		return -1;
	}
	key = calloc(2, mi->key_size ? mi->key_size : 1);
	if (!key)
		return -1;
	next = key + mi->key_size;
	for (bool first = true; !bpf_map_get_next_key(fd, first ? NULL : key, next); first = false) {
		memcpy(key, next, mi->key_size);
		n++;
	}
	if (errno != ENOENT)
		n = -1;		/* write-only: the kernel will not say */
	free(key);
	return n;
}

int dac_bpf_read_maps(struct dac_bpf *b, struct dac_bpf_map_stat **out, size_t *n)
{
	struct vec ids = { .elem = sizeof(uint32_t) }, v = { .elem = sizeof(**out) };
	uint64_t st[DAC_STAT__COUNT] = { 0 };
	int err = for_each_prog(b, prog_map_ids_cb, &ids);

	for (uint32_t i = 0; i < DAC_STAT__COUNT; i++)
		bpf_map_lookup_elem(b->fd[M_STATS], &i, &st[i]);
	for (size_t i = 0; !err && i < ids.n; i++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);
		struct dac_bpf_map_stat *o;
		const char *t;
		int fd = bpf_map_get_fd_by_id(((uint32_t *)ids.p)[i]);

		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* gone meanwhile */
			err = -errno;
			break;
		}
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			err = -errno;
			close(fd);
			break;
		}
		o = vec_push(&v);
		if (!o) {
			err = -ENOMEM;
			close(fd);
			break;
		}
		copy_str(o->name, sizeof(o->name), mi.name, sizeof(mi.name));
		t = libbpf_bpf_map_type_str(mi.type);
		snprintf(o->type, sizeof(o->type), "%s", t ? t : "?");
		o->max_entries = mi.max_entries;
		o->entries = count_entries(fd, &mi);
		o->memlock = fd_memlock(fd);
		for (int k = 0; k < DAC_MAP__COUNT; k++) {
			if (strcmp(o->name, counted_maps[k]))
				continue;
			o->full = st[DAC_STAT_FULL + k];
			o->busy = st[DAC_STAT_BUSY + k];
			o->nomem = st[DAC_STAT_NOMEM + k];
		}
		close(fd);
	}
	free(ids.p);
	return finish(&v, err, out, n);
}

int dac_bpf_client_insert(struct dac_bpf *b, uint64_t client_id,
			  const struct dac_client_val *cv)
{
	return bpf_map_update_elem(b->fd[M_CLIENTS], &client_id, cv, BPF_NOEXIST) ? -errno : 0;
}

int dac_bpf_mem_seed(struct dac_bpf *b, uint64_t client_id, uint32_t region, uint64_t total)
{
	struct dac_mem_key k = { .client_id = client_id, .region = region };
	struct dac_mem_val v = { 0 };

	/*
	 * The fdinfo total includes every change made before it was read,
	 * those the programs counted since attaching too, so it replaces
	 * the entry rather than adding to it; only a change between that
	 * read and this update is lost.
	 */
	if (bpf_map_lookup_elem(b->fd[M_MEM], &k, &v) && errno != ENOENT)
		return -errno;
	v.total = total;
	if (v.peak < total)
		v.peak = total;
	return bpf_map_update_elem(b->fd[M_MEM], &k, &v, BPF_ANY) ? -errno : 0;
}

int dac_bpf_take_load_seeded(struct dac_bpf *b)
{
	int n = b->load_seeded;

	b->load_seeded = 0;
	return n;
}

struct known_arg {
	struct vec ids, rdevs;
};

static int known_cb(const void *key, const void *val, void *arg)
{
	const struct dac_name_key *k = key;
	struct known_arg *a = arg;
	char v[DAC_NAME_LEN];
	unsigned int ma, mi;
	uint32_t *id;
	dev_t *rd;

	if (k->kind != DAC_NAME_RDEV)
		return 0;
	memcpy(v, val, sizeof(v));
	v[sizeof(v) - 1] = '\0';
	if (sscanf(v, "%u:%u", &ma, &mi) != 2)
		return 0;
	id = vec_push(&a->ids);
	rd = vec_push(&a->rdevs);
	if (!id || !rd)
		return -ENOMEM;
	*id = k->device_id;
	*rd = makedev(ma, mi);
	return 0;
}

int dac_bpf_known_devices(struct dac_bpf *b, uint32_t **ids, dev_t **rdevs, size_t *n)
{
	struct known_arg a = { .ids = { .elem = sizeof(uint32_t) },
			       .rdevs = { .elem = sizeof(dev_t) } };
	int err = dac_bpf_map_walk(b->fd[M_NAMES], sizeof(struct dac_name_key), DAC_NAME_LEN, known_cb, &a);

	if (err) {
		free(a.ids.p);
		free(a.rdevs.p);
		*ids = NULL;
		*rdevs = NULL;
		*n = 0;
		return err;
	}
	*ids = a.ids.p;
	*rdevs = a.rdevs.p;
	*n = a.ids.n;
	return 0;
}

/* ---- tracking --------------------------------------------------------------- */

int dac_bpf_track(struct dac_bpf *b, uint32_t tgid, uint64_t cookie)
{
	if (!cookie || !tgid)
		return -EINVAL;
	return bpf_map_update_elem(b->fd[M_TRACKED], &tgid, &cookie, BPF_ANY) ? -errno : 0;
}

struct untrack_arg {
	uint64_t cookie;
	struct vec v;
};

static int untrack_cb(const void *key, const void *val, void *arg)
{
	struct untrack_arg *a = arg;
	uint32_t *o;

	if (*(const uint64_t *)val != a->cookie)
		return 0;
	o = vec_push(&a->v);
	if (!o)
		return -ENOMEM;
	*o = *(const uint32_t *)key;
	return 0;
}

static int cookie_keys_cb(const void *key, const void *val, void *arg)
{
	struct untrack_arg *a = arg;
	const struct dac_cookie_key *k = key;
	struct dac_cookie_key *o;

	(void)val;
	if (k->cookie != a->cookie)
		return 0;
	o = vec_push(&a->v);
	if (!o)
		return -ENOMEM;
	*o = *k;
	return 0;
}

static int sched_cookie_cb(const void *key, const void *val, void *arg)
{
	struct untrack_arg *a = arg;
	const struct dac_sched_val *sv = val;
	struct dac_sched_key *o;

	if (sv->cookie != a->cookie)
		return 0;
	o = vec_push(&a->v);
	if (!o)
		return -ENOMEM;
	memcpy(o, key, sizeof(*o));
	return 0;
}

/* Delete every key of @fd that @fn collects for @cookie. */
static int delete_matching(int fd, size_t ksize, size_t vsize, walk_fn fn, uint64_t cookie)
{
	struct untrack_arg a = { .cookie = cookie, .v = { .elem = ksize } };
	int err = dac_bpf_map_walk(fd, ksize, vsize, fn, &a);

	for (size_t i = 0; !err && i < a.v.n; i++)
		if (bpf_map_delete_elem(fd, (char *)a.v.p + i * ksize) && errno != ENOENT)
			err = -errno;
	free(a.v.p);
	return err;
}

int dac_bpf_untrack(struct dac_bpf *b, uint64_t cookie)
{
	int err = delete_matching(b->fd[M_TRACKED], sizeof(uint32_t), sizeof(uint64_t),
				  untrack_cb, cookie);
	int e2 = delete_matching(b->fd[M_COOKIE_USAGE], sizeof(struct dac_cookie_key),
				 sizeof(struct dac_cookie_val), cookie_keys_cb, cookie);
	int e3 = delete_matching(b->fd[M_COOKIE_MEM], sizeof(struct dac_cookie_key),
				 sizeof(struct dac_cookie_val), cookie_keys_cb, cookie);
	/* The scheduler entries its exited processes left for the reader. */
	int e4 = delete_matching(b->fd[M_SCHED], sizeof(struct dac_sched_key),
				 sizeof(struct dac_sched_val), sched_cookie_cb, cookie);

	return err ? err : e2 ? e2 : e3 ? e3 : e4;
}

struct cookie_arg {
	struct dac_bpf *b;
	uint64_t cookie;
	struct vec v;
	bool region;
};

static int cookie_read_cb(const void *key, const void *val, void *arg)
{
	struct cookie_arg *a = arg;
	const struct dac_cookie_key *k = key;
	const struct dac_cookie_val *cv = val;

	if (k->cookie != a->cookie)
		return 0;
	if (a->region) {
		struct dac_bpf_cookie_region *o = vec_push(&a->v);

		if (!o)
			return -ENOMEM;
		o->device_id = k->device_id;
		o->region = k->index;
		dac_bpf_name(a->b, k->device_id, true, k->index, o->name, sizeof(o->name));
		o->total = cv->total;
		o->peak = cv->peak;
	} else {
		struct dac_bpf_cookie_engine *o = vec_push(&a->v);

		if (!o)
			return -ENOMEM;
		o->device_id = k->device_id;
		o->engine = k->index;
		dac_bpf_name(a->b, k->device_id, false, k->index, o->name, sizeof(o->name));
		o->busy_ns = cv->busy_ns;
		o->cycles = cv->cycles;
		o->jobs = cv->jobs;
	}
	return 0;
}

int dac_bpf_read_cookie(struct dac_bpf *b, uint64_t cookie,
			struct dac_bpf_cookie_engine **eng, size_t *neng,
			struct dac_bpf_cookie_region **reg, size_t *nreg)
{
	struct cookie_arg e = { .b = b, .cookie = cookie, .v = { .elem = sizeof(**eng) } };
	struct cookie_arg r = { .b = b, .cookie = cookie, .v = { .elem = sizeof(**reg) },
				.region = true };
	int err;

	err = finish(&e.v, dac_bpf_map_walk(b->fd[M_COOKIE_USAGE], sizeof(struct dac_cookie_key),
				    sizeof(struct dac_cookie_val), cookie_read_cb, &e), eng, neng);
	if (err)
		return err;
	err = finish(&r.v, dac_bpf_map_walk(b->fd[M_COOKIE_MEM], sizeof(struct dac_cookie_key),
				    sizeof(struct dac_cookie_val), cookie_read_cb, &r), reg, nreg);
	if (err) {
		free(*eng);
		*eng = NULL;
		*neng = 0;
	}
	return err;
}

/* ---- cgroups ------------------------------------------------------------------ */

int dac_bpf_set_cgroup_filter(struct dac_bpf *b, const char *path)
{
	char *dup = NULL;

	if (path && !(dup = strdup(path)))
		return -ENOMEM;
	free(b->cgroup_filter);
	b->cgroup_filter = dup;
	return 0;
}

const char *dac_bpf_cgroup_filter(const struct dac_bpf *b)
{
	return b->cgroup_filter;
}

/* Where cgroup2 is mounted (mountinfo), else the usual place. */
static void cgroup2_root(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	snprintf(buf, len, "/sys/fs/cgroup");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint opts ... - fstype source opts */
		char mnt[512], *dash = strstr(line, " - cgroup2 ");

		if (dash && sscanf(line, "%*s %*s %*s %*s %511s", mnt) == 1) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	}
	fclose(f);
}

/*
 * Find the directory with inode @id under @dir (a path buffer of PATH_MAX
 * holding @len bytes; on success it holds the match), @depth levels deep
 * at most. Does not cross into other file systems.
 */
static bool cgroup_find(char *dir, size_t len, dev_t fs, uint64_t id, int depth)
{
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (depth < 0 || !(d = opendir(dir)))
		return false;
	while (!found && (de = readdir(d))) {
		struct stat st;
		int n;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		n = snprintf(dir + len, PATH_MAX - len, "/%s", de->d_name);
		if (n < 0 || (size_t)n >= PATH_MAX - len)
			continue;
		if (lstat(dir, &st) || st.st_dev != fs || !S_ISDIR(st.st_mode))
			continue;
		found = (uint64_t)st.st_ino == id ||
			cgroup_find(dir, len + n, fs, id, depth - 1);
	}
	closedir(d);
	if (!found)
		dir[len] = '\0';
	return found;
}

const char *dac_bpf_cgroup_path(struct dac_bpf *b, uint64_t id, char *buf, size_t len)
{
	char dir[PATH_MAX];
	size_t rlen;
	struct stat st;

	for (size_t i = 0; i < b->ncg; i++) {
		if (b->cg_ids[i] == id) {
			snprintf(buf, len, "%s", b->cg_paths[i]);
			return buf;
		}
	}
	cgroup2_root(dir, sizeof(dir));
	rlen = strlen(dir);
	if (id && !stat(dir, &st)) {
		const char *found = NULL;

		if ((uint64_t)st.st_ino == id)
			found = "/";
		else if (cgroup_find(dir, rlen, st.st_dev, id, 32))
			found = dir + rlen;
		if (found) {
			uint64_t *ids = realloc(b->cg_ids, (b->ncg + 1) * sizeof(*ids));
			char **paths = ids ? realloc(b->cg_paths, (b->ncg + 1) * sizeof(*paths)) : NULL;

			/* Remembered: a cgroup id is never reused while it exists. */
			if (ids)
				b->cg_ids = ids;
			if (paths) {
				b->cg_paths = paths;
				paths[b->ncg] = strdup(found);
				if (paths[b->ncg])
					ids[b->ncg++] = id;
			}
			snprintf(buf, len, "%s", found);
			return buf;
		}
	}
	/* cgroup2 not mounted: the root's id is still known (kernfs root, 1). */
	if (id == 1)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "cgroup:%llu", (unsigned long long)id);
	return buf;
}

