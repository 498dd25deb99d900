// SPDX-License-Identifier: MIT
/*
 * record.c - the drmacct record stream codec (see record.h and
 * Documentation/record-format.rst).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"

/* ---- little-endian helpers ---- */

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

const char *drec_type_name(uint32_t type)
{
	switch (type) {
	case DREC_SAMPLE:
		return "sample";
	case DREC_CLIENT_EXIT:
		return "client-exit";
	case DREC_LOST:
		return "lost";
	case DREC_OVERFLOW:
		return "overflow";
	case DREC_DEVICE:
		return "device";
	case DREC_HOLDERS:
		return "holders";
	case DREC_CAPACITY:
		return "capacity";
	}
	return "unknown";
}

const char *drec_problem_name(enum drec_problem_kind k)
{
	switch (k) {
	case DREC_P_TRUNCATED:
		return "truncated";
	case DREC_P_CORRUPT:
		return "corrupt";
	case DREC_P_SKIPPED:
		return "skipped";
	}
	return "?";
}

/* ---- writer ---- */

static unsigned char *wbuf(struct drec_writer *w, size_t len)
{
	if (len > w->cap) {
		unsigned char *n = realloc(w->buf, len);

		if (!n) {
			if (!w->err)
				w->err = -ENOMEM;
			return NULL;
		}
		w->buf = n;
		w->cap = len;
	}
	memset(w->buf, 0, len);
	return w->buf;
}

static int wout(struct drec_writer *w, const void *p, size_t len)
{
	if (w->err)
		return w->err;
	if (len && fwrite(p, 1, len, w->f) != len) {
		w->err = errno == EPIPE ? -EPIPE : -EIO;
		return w->err;
	}
	w->bytes += len;
	return 0;
}

static size_t desc_size(const struct drec_device *d)
{
	size_t n = DREC_DEVICE_FIXED + d->nengines * DREC_ENGINE_DESC, i;

	n += strlen(d->driver ? d->driver : "") + 1;
	n += strlen(d->pdev ? d->pdev : "") + 1;
	for (i = 0; i < d->nengines; i++)
		n += strlen(d->engines[i].name) + 1;
	for (i = 0; i < d->nregions; i++)
		n += strlen(d->regions[i]) + 1;
	return align8(n);
}

static unsigned char *put_str(unsigned char *p, const char *s)
{
	size_t n = strlen(s ? s : "") + 1;

	memcpy(p, s ? s : "", n);
	return p + n;
}

/* @p has desc_size(d) zeroed bytes. */
static void put_desc(unsigned char *p, const struct drec_device *d, size_t size)
{
	unsigned char *s;
	size_t i;

	put32(p, (uint32_t)size);
	put32(p + 4, d->dev);
	put32(p + 8, d->major);
	put32(p + 12, d->minor);
	put16(p + 16, (uint16_t)d->nengines);
	put16(p + 18, (uint16_t)d->nregions);
	for (i = 0; i < d->nengines; i++) {
		put64(p + DREC_DEVICE_FIXED + i * DREC_ENGINE_DESC, d->engines[i].capacity);
		put64(p + DREC_DEVICE_FIXED + i * DREC_ENGINE_DESC + 8, d->engines[i].maxfreq_hz);
	}
	s = p + DREC_DEVICE_FIXED + d->nengines * DREC_ENGINE_DESC;
	s = put_str(s, d->driver);
	s = put_str(s, d->pdev);
	for (i = 0; i < d->nengines; i++)
		s = put_str(s, d->engines[i].name);
	for (i = 0; i < d->nregions; i++)
		s = put_str(s, d->regions[i]);
}

static bool desc_ok(const struct drec_device *d)
{
	size_t i;

	if (d->nengines > UINT16_MAX || d->nregions > UINT16_MAX)
		return false;
	for (i = 0; i < d->nengines; i++)
		if (!d->engines[i].name)
			return false;
	for (i = 0; i < d->nregions; i++)
		if (!d->regions[i])
			return false;
	return true;
}

int drec_writer_init(struct drec_writer *w, FILE *f, const struct drec_file_info *fi,
		     const struct drec_device *devs, size_t ndev)
{
	size_t total = DREC_FILE_HEADER_SIZE, i, off;
	unsigned char *p;

	memset(w, 0, sizeof(*w));
	w->f = f;
	if (!f || !fi || (ndev && !devs) || ndev > UINT32_MAX)
		return w->err = -EINVAL;
	for (i = 0; i < ndev; i++) {
		if (!desc_ok(&devs[i]))
			return w->err = -EINVAL;
		total += desc_size(&devs[i]);
	}
	if (total > UINT32_MAX)
		return w->err = -E2BIG;
	p = wbuf(w, total);
	if (!p)
		return w->err;
	memcpy(p, DREC_MAGIC, 8);
	put16(p + 8, DREC_VERSION_MAJOR);
	put16(p + 10, DREC_VERSION_MINOR);
	put32(p + 12, (uint32_t)total);
	put32(p + 16, fi->flags);
	put32(p + 20, (uint32_t)ndev);
	put64(p + 24, fi->start_realtime_ns);
	put64(p + 32, fi->start_mono_ns);
	put64(p + 40, fi->interval_ns);
	off = DREC_FILE_HEADER_SIZE;
	for (i = 0; i < ndev; i++) {
		size_t sz = desc_size(&devs[i]);

		put_desc(p + off, &devs[i], sz);
		off += sz;
	}
	return wout(w, p, total);
}

static unsigned char *rec_begin(struct drec_writer *w, uint32_t type, size_t size)
{
	unsigned char *p = wbuf(w, size);

	if (!p)
		return NULL;
	put32(p, type);
	put16(p + 4, 0);
	put16(p + 6, (uint16_t)size);
	return p;
}

static int rec_end(struct drec_writer *w, size_t size)
{
	int ret = wout(w, w->buf, size);

	if (!ret)
		w->records++;
	return ret;
}

int drec_write_raw(struct drec_writer *w, uint32_t type, const void *payload, size_t len)
{
	size_t size = DREC_HDR_SIZE + align8(len);
	unsigned char *p;

	if (w->err)
		return w->err;
	if (size > DREC_MAX_RECORD || (len && !payload))
		return -EINVAL;
	p = rec_begin(w, type, size);
	if (!p)
		return w->err;
	if (len)
		memcpy(p + DREC_HDR_SIZE, payload, len);
	return rec_end(w, size);
}

int drec_write_device(struct drec_writer *w, const struct drec_device *d)
{
	size_t sz;
	unsigned char *p;

	if (w->err)
		return w->err;
	if (!d || !desc_ok(d))
		return -EINVAL;
	sz = desc_size(d);
	if (DREC_HDR_SIZE + sz > DREC_MAX_RECORD)
		return -E2BIG;
	p = rec_begin(w, DREC_DEVICE, DREC_HDR_SIZE + sz);
	if (!p)
		return w->err;
	put_desc(p + DREC_HDR_SIZE, d, sz);
	return rec_end(w, DREC_HDR_SIZE + sz);
}

int drec_write_client(struct drec_writer *w, uint32_t type, const struct drec_client *c)
{
	const size_t room = DREC_MAX_RECORD - DREC_HDR_SIZE - DREC_CLIENT_FIXED;
	size_t ei = 0, ri = 0;
	bool first = true;

	if (w->err)
		return w->err;
	if (!c || (type != DREC_SAMPLE && type != DREC_CLIENT_EXIT) ||
	    (c->nengines && !c->engines) || (c->nregions && !c->regions))
		return -EINVAL;
	/* One record, or as many as it takes when 64 KiB is not enough. */
	while (first || ei < c->nengines || ri < c->nregions) {
		size_t ne = c->nengines - ei, nr = c->nregions - ri, size, i;
		unsigned char *p, *q;

		if (ne * DREC_ENGINE_ENTRY > room)
			ne = room / DREC_ENGINE_ENTRY;
		if (ne * DREC_ENGINE_ENTRY + nr * DREC_REGION_ENTRY > room)
			nr = (room - ne * DREC_ENGINE_ENTRY) / DREC_REGION_ENTRY;
		size = DREC_HDR_SIZE + DREC_CLIENT_FIXED + ne * DREC_ENGINE_ENTRY +
		       nr * DREC_REGION_ENTRY;
		p = rec_begin(w, type, size);
		if (!p)
			return w->err;
		q = p + DREC_HDR_SIZE;
		put64(q, c->time_ns);
		put64(q + 8, c->client_id);
		put32(q + 16, c->dev);
		put32(q + 20, c->pid);
		put16(q + 24, (uint16_t)ne);
		put16(q + 26, (uint16_t)nr);
		put32(q + 28, c->flags);
		memcpy(q + 32, c->comm, strnlen(c->comm, DREC_COMM_LEN));	/* NUL-padded */
		q += DREC_CLIENT_FIXED;
		for (i = 0; i < ne; i++, q += DREC_ENGINE_ENTRY) {
			const struct drec_engine_val *e = &c->engines[ei + i];

			put32(q, e->engine);
			put32(q + 4, e->flags);
			put64(q + 8, e->busy_ns);
			put64(q + 16, e->cycles);
			put64(q + 24, e->total_cycles);
			put64(q + 32, e->jobs);
		}
		for (i = 0; i < nr; i++, q += DREC_REGION_ENTRY) {
			const struct drec_region_val *r = &c->regions[ri + i];

			put32(q, r->region);
			put32(q + 4, r->flags);
			put64(q + 8, r->total);
			put64(q + 16, r->shared);
			put64(q + 24, r->resident);
			put64(q + 32, r->purgeable);
			put64(q + 40, r->active);
		}
		ei += ne;
		ri += nr;
		first = false;
		if (rec_end(w, size))
			return w->err;
	}
	return 0;
}

int drec_write_lost(struct drec_writer *w, uint64_t time_ns, uint32_t source, uint64_t count)
{
	unsigned char pl[24] = { 0 };

	put64(pl, time_ns);
	put64(pl + 8, count);
	put32(pl + 16, source);
	return drec_write_raw(w, DREC_LOST, pl, sizeof(pl));
}

int drec_write_holders(struct drec_writer *w, uint64_t time_ns, uint32_t dev,
		       uint64_t client_id, uint32_t flags, const struct drec_holder *h, size_t n)
{
	const size_t per = (DREC_MAX_RECORD - DREC_HDR_SIZE - DREC_HOLDERS_FIXED) /
			   DREC_HOLDER_ENTRY;

	do {
		size_t k = n < per ? n : per;
		size_t len = DREC_HOLDERS_FIXED + k * DREC_HOLDER_ENTRY;
		unsigned char *pl = calloc(1, len);
		int ret;

		if (!pl)
			return w->err ? w->err : (w->err = -ENOMEM);
		put64(pl, time_ns);
		put64(pl + 8, client_id);
		put32(pl + 16, dev);
		put32(pl + 20, flags);
		put32(pl + 24, (uint32_t)k);
		for (size_t i = 0; i < k; i++) {
			unsigned char *q = pl + DREC_HOLDERS_FIXED + i * DREC_HOLDER_ENTRY;

			put32(q, h[i].pid);
			memcpy(q + 8, h[i].comm, strnlen(h[i].comm, DREC_COMM_LEN));
		}
		ret = drec_write_raw(w, DREC_HOLDERS, pl, len);
		free(pl);
		if (ret)
			return ret;
		h += k;
		n -= k;
	} while (n);
	return 0;
}

int drec_write_capacity(struct drec_writer *w, const struct drec_client *c,
			const struct drec_capacity *v, size_t n)
{
	const size_t per = (DREC_MAX_RECORD - DREC_HDR_SIZE - DREC_CAPACITY_FIXED) /
			   DREC_CAPACITY_ENTRY;

	do {
		size_t k = n < per ? n : per;
		size_t len = DREC_CAPACITY_FIXED + k * DREC_CAPACITY_ENTRY;
		unsigned char *pl = calloc(1, len);
		int ret;

		if (!pl)
			return w->err ? w->err : (w->err = -ENOMEM);
		put64(pl, c->time_ns);
		put64(pl + 8, c->client_id);
		put32(pl + 16, c->dev);
		put32(pl + 20, c->flags);
		put32(pl + 24, c->pid);
		put32(pl + 28, (uint32_t)k);
		for (size_t i = 0; i < k; i++) {
			unsigned char *q = pl + DREC_CAPACITY_FIXED + i * DREC_CAPACITY_ENTRY;

			put32(q, v[i].engine);
			put64(q + 8, v[i].capacity);
		}
		ret = drec_write_raw(w, DREC_CAPACITY, pl, len);
		free(pl);
		if (ret)
			return ret;
		v += k;
		n -= k;
	} while (n);
	return 0;
}

int drec_write_overflow(struct drec_writer *w, uint64_t time_ns, uint32_t source)
{
	unsigned char pl[16] = { 0 };

	put64(pl, time_ns);
	put32(pl + 8, source);
	return drec_write_raw(w, DREC_OVERFLOW, pl, sizeof(pl));
}

int drec_writer_flush(struct drec_writer *w)
{
	if (!w->err && w->f && fflush(w->f))
		w->err = errno == EPIPE ? -EPIPE : -EIO;
	return w->err;
}

int drec_writer_finish(struct drec_writer *w)
{
	if (!w->err && w->f && fflush(w->f))
		w->err = errno == EPIPE ? -EPIPE : -EIO;
	free(w->buf);
	w->buf = NULL;
	w->cap = 0;
	return w->err;
}

/* ---- decoder ---- */

static void problem(struct drec_reader *r, enum drec_problem_kind kind, uint64_t off,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void problem(struct drec_reader *r, enum drec_problem_kind kind, uint64_t off,
		    const char *fmt, ...)
{
	struct drec_problem *p;
	va_list ap;

	if (kind == DREC_P_CORRUPT)
		r->ncorrupt++;
	if (r->nproblems == r->cap_problems) {
		size_t n = r->cap_problems ? 2 * r->cap_problems : 8;
		struct drec_problem *np = realloc(r->problems, n * sizeof(*np));

		if (!np) {
			r->dropped_problems = true;
			return;
		}
		r->problems = np;
		r->cap_problems = n;
	}
	p = &r->problems[r->nproblems++];
	p->kind = kind;
	p->offset = off;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
}

static void dev_free(struct drec_device *d)
{
	free(d->engines);
	free(d->regions);
	memset(d, 0, sizeof(*d));
}

/* A NUL-terminated string inside [*p, end); advances *p. NULL if none. */
static const char *take_str(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *s = *p, *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, 0, (size_t)(end - s));
	if (!nul)
		return NULL;
	*p = nul + 1;
	return (const char *)s;
}

/*
 * Parses a device descriptor of exactly @len bytes at @p into @d (arrays
 * allocated, strings pointing into the buffer). Returns 0, -EBADMSG with a
 * reason in @why, or -ENOMEM.
 */
static int parse_desc(const unsigned char *p, size_t len, struct drec_device *d,
		      const char **why)
{
	const unsigned char *s, *end = p + len;
	size_t ne, nr, i, sz;

	memset(d, 0, sizeof(*d));
	if (len < DREC_DEVICE_FIXED) {
		*why = "device descriptor shorter than its fixed part";
		return -EBADMSG;
	}
	sz = get32(p);
	if (sz != len) {
		*why = "device descriptor size does not match";
		return -EBADMSG;
	}
	d->dev = get32(p + 4);
	d->major = get32(p + 8);
	d->minor = get32(p + 12);
	ne = get16(p + 16);
	nr = get16(p + 18);
	if (ne * DREC_ENGINE_DESC > len - DREC_DEVICE_FIXED) {
		*why = "engine count larger than the descriptor";
		return -EBADMSG;
	}
	d->engines = calloc(ne ? ne : 1, sizeof(*d->engines));
	d->regions = calloc(nr ? nr : 1, sizeof(*d->regions));
	if (!d->engines || !d->regions) {
		dev_free(d);
		return -ENOMEM;
	}
	d->nengines = ne;
	d->nregions = nr;
	s = p + DREC_DEVICE_FIXED + ne * DREC_ENGINE_DESC;
	if (!(d->driver = take_str(&s, end)) || !(d->pdev = take_str(&s, end)))
		goto bad_str;
	for (i = 0; i < ne; i++) {
		d->engines[i].capacity = get64(p + DREC_DEVICE_FIXED + i * DREC_ENGINE_DESC);
		d->engines[i].maxfreq_hz =
			get64(p + DREC_DEVICE_FIXED + i * DREC_ENGINE_DESC + 8);
		d->engines[i].name = take_str(&s, end);
		if (!d->engines[i].name)
			goto bad_str;
	}
	for (i = 0; i < nr; i++)
		if (!(d->regions[i] = take_str(&s, end)))
			goto bad_str;
	return 0;
bad_str:
	*why = "device names run past the descriptor";
	dev_free(d);
	return -EBADMSG;
}

/* Installs @d as device d->dev (replacing an older description). */
static int set_dev(struct drec_reader *r, struct drec_device *d)
{
	if (d->dev >= r->ndevs) {
		size_t n = (size_t)d->dev + 1;
		struct drec_device *nd;

		/* Device indices are small and dense; refuse absurd ones. */
		if (n > 1u << 16)
			return -EBADMSG;
		nd = realloc(r->devs, n * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		memset(nd + r->ndevs, 0, (n - r->ndevs) * sizeof(*nd));
		r->devs = nd;
		r->ndevs = n;
	}
	dev_free(&r->devs[d->dev]);
	r->devs[d->dev] = *d;
	return 0;
}

const struct drec_device *drec_device(const struct drec_reader *r, uint32_t dev)
{
	if (dev >= r->ndevs || !r->devs[dev].driver)
		return NULL;
	return &r->devs[dev];
}

int drec_reader_init(struct drec_reader *r, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t hsize, off, i, ndev;

	memset(r, 0, sizeof(*r));
	r->buf = buf;
	r->len = len;
	if (len < 8 || memcmp(p, DREC_MAGIC, 8)) {
		if (len < 8 && len && !memcmp(p, DREC_MAGIC, len)) {
			problem(r, DREC_P_TRUNCATED, 0, "the file header is truncated (%zu bytes)",
				len);
			return -ENODATA;
		}
		problem(r, DREC_P_CORRUPT, 0, "not a drmacct record stream (bad magic)");
		return -EINVAL;
	}
	if (len < DREC_FILE_HEADER_SIZE) {
		problem(r, DREC_P_TRUNCATED, 0, "the file header is truncated (%zu of %u bytes)",
			len, DREC_FILE_HEADER_SIZE);
		return -ENODATA;
	}
	r->info.version_major = get16(p + 8);
	r->info.version_minor = get16(p + 10);
	if (r->info.version_major != DREC_VERSION_MAJOR) {
		problem(r, DREC_P_CORRUPT, 8, "unsupported stream version %u.%u (this is %u.%u)",
			r->info.version_major, r->info.version_minor, DREC_VERSION_MAJOR,
			DREC_VERSION_MINOR);
		return -EINVAL;
	}
	hsize = get32(p + 12);
	r->info.flags = get32(p + 16);
	ndev = get32(p + 20);
	r->info.start_realtime_ns = get64(p + 24);
	r->info.start_mono_ns = get64(p + 32);
	r->info.interval_ns = get64(p + 40);
	if (hsize < DREC_FILE_HEADER_SIZE || hsize % 8) {
		problem(r, DREC_P_CORRUPT, 12, "file header size %zu is invalid", hsize);
		return -EBADMSG;
	}
	if (hsize > len) {
		problem(r, DREC_P_TRUNCATED, 12,
			"the file header is truncated (%zu of %zu bytes)", len, hsize);
		return -ENODATA;
	}
	off = DREC_FILE_HEADER_SIZE;
	for (i = 0; i < ndev; i++) {
		struct drec_device d;
		const char *why = "";
		size_t sz;
		int ret;

		if (hsize - off < DREC_DEVICE_FIXED) {
			problem(r, DREC_P_CORRUPT, off, "device %zu of %zu does not fit the header",
				i, ndev);
			return -EBADMSG;
		}
		sz = get32(p + off);
		if (sz < DREC_DEVICE_FIXED || sz % 8 || sz > hsize - off) {
			problem(r, DREC_P_CORRUPT, off, "device descriptor size %zu is invalid",
				sz);
			return -EBADMSG;
		}
		ret = parse_desc(p + off, sz, &d, &why);
		if (!ret) {
			ret = set_dev(r, &d);
			if (ret)
				dev_free(&d);
			if (ret == -EBADMSG)
				why = "device index too large";
		}
		if (ret == -ENOMEM)
			return r->err = -ENOMEM;
		if (ret) {
			problem(r, DREC_P_CORRUPT, off, "%s", why);
			return -EBADMSG;
		}
		off += sz;
	}
	if (off != hsize) {
		problem(r, DREC_P_CORRUPT, off,
			"%zu unexplained bytes at the end of the file header",
			hsize - off);
		return -EBADMSG;
	}
	r->pos = hsize;
	return 0;
}

static bool dec_client(struct drec_reader *r, struct drec_record *rec, const char **why)
{
	const unsigned char *q = rec->payload;
	const struct drec_device *d;
	size_t ne, nr, i;

	if (rec->payload_len < DREC_CLIENT_FIXED) {
		*why = "client record shorter than its fixed part";
		return false;
	}
	ne = get16(q + 24);
	nr = get16(q + 26);
	if (rec->payload_len != DREC_CLIENT_FIXED + ne * DREC_ENGINE_ENTRY +
				nr * DREC_REGION_ENTRY) {
		*why = "engine and region counts do not match the record size";
		return false;
	}
	rec->client.time_ns = rec->time_ns = get64(q);
	rec->client.client_id = get64(q + 8);
	rec->client.dev = get32(q + 16);
	rec->client.pid = get32(q + 20);
	rec->client.flags = get32(q + 28);
	memcpy(rec->client.comm, q + 32, DREC_COMM_LEN);
	rec->client.comm[DREC_COMM_LEN] = 0;
	rec->client.nengines = ne;
	rec->client.nregions = nr;
	d = drec_device(r, rec->client.dev);
	if (!d) {
		*why = "client record names a device that was not described";
		return false;
	}
	for (i = 0; i < ne; i++)
		if (get32(q + DREC_CLIENT_FIXED + i * DREC_ENGINE_ENTRY) >= d->nengines) {
			*why = "engine index not described for the device";
			return false;
		}
	q += DREC_CLIENT_FIXED + ne * DREC_ENGINE_ENTRY;
	for (i = 0; i < nr; i++)
		if (get32(q + i * DREC_REGION_ENTRY) >= d->nregions) {
			*why = "region index not described for the device";
			return false;
		}
	return true;
}

bool drec_client_engine(const struct drec_record *rec, size_t i, struct drec_engine_val *out)
{
	const unsigned char *q;

	if ((rec->type != DREC_SAMPLE && rec->type != DREC_CLIENT_EXIT) ||
	    i >= rec->client.nengines)
		return false;
	q = rec->payload + DREC_CLIENT_FIXED + i * DREC_ENGINE_ENTRY;
	out->engine = get32(q);
	out->flags = get32(q + 4);
	out->busy_ns = get64(q + 8);
	out->cycles = get64(q + 16);
	out->total_cycles = get64(q + 24);
	out->jobs = get64(q + 32);
	return true;
}

bool drec_client_region(const struct drec_record *rec, size_t i, struct drec_region_val *out)
{
	const unsigned char *q;

	if ((rec->type != DREC_SAMPLE && rec->type != DREC_CLIENT_EXIT) ||
	    i >= rec->client.nregions)
		return false;
	q = rec->payload + DREC_CLIENT_FIXED + rec->client.nengines * DREC_ENGINE_ENTRY +
	    i * DREC_REGION_ENTRY;
	out->region = get32(q);
	out->flags = get32(q + 4);
	out->total = get64(q + 8);
	out->shared = get64(q + 16);
	out->resident = get64(q + 24);
	out->purgeable = get64(q + 32);
	out->active = get64(q + 40);
	return true;
}

static bool dec_holders(struct drec_reader *r, struct drec_record *rec, const char **why)
{
	const unsigned char *q = rec->payload;
	size_t n;

	if (rec->payload_len < DREC_HOLDERS_FIXED) {
		*why = "HOLDERS record shorter than its fixed part";
		return false;
	}
	n = get32(q + 24);
	if (n > (rec->payload_len - DREC_HOLDERS_FIXED) / DREC_HOLDER_ENTRY ||
	    rec->payload_len != DREC_HOLDERS_FIXED + n * DREC_HOLDER_ENTRY) {
		*why = "holder count does not match the record size";
		return false;
	}
	rec->client.time_ns = rec->time_ns = get64(q);
	rec->client.client_id = get64(q + 8);
	rec->client.dev = get32(q + 16);
	rec->client.flags = get32(q + 20);
	rec->count = n;
	if (!drec_device(r, rec->client.dev)) {
		*why = "HOLDERS record names a device that was not described";
		return false;
	}
	return true;
}

bool drec_holder(const struct drec_record *rec, size_t i, struct drec_holder *out)
{
	const unsigned char *q;

	if (rec->type != DREC_HOLDERS || i >= rec->count)
		return false;
	q = rec->payload + DREC_HOLDERS_FIXED + i * DREC_HOLDER_ENTRY;
	out->pid = get32(q);
	memcpy(out->comm, q + 8, DREC_COMM_LEN);
	out->comm[DREC_COMM_LEN] = 0;
	return true;
}

static bool dec_capacity(struct drec_reader *r, struct drec_record *rec, const char **why)
{
	const unsigned char *q = rec->payload;
	const struct drec_device *d;
	size_t n;

	if (rec->payload_len < DREC_CAPACITY_FIXED) {
		*why = "CAPACITY record shorter than its fixed part";
		return false;
	}
	n = get32(q + 28);
	if (n > (rec->payload_len - DREC_CAPACITY_FIXED) / DREC_CAPACITY_ENTRY ||
	    rec->payload_len != DREC_CAPACITY_FIXED + n * DREC_CAPACITY_ENTRY) {
		*why = "engine count does not match the CAPACITY record size";
		return false;
	}
	rec->client.time_ns = rec->time_ns = get64(q);
	rec->client.client_id = get64(q + 8);
	rec->client.dev = get32(q + 16);
	rec->client.flags = get32(q + 20);
	rec->client.pid = get32(q + 24);
	rec->count = n;
	d = drec_device(r, rec->client.dev);
	if (!d) {
		*why = "CAPACITY record names a device that was not described";
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const unsigned char *e = q + DREC_CAPACITY_FIXED + i * DREC_CAPACITY_ENTRY;

		if (get32(e) >= d->nengines) {
			*why = "CAPACITY record names an engine the device does not have";
			return false;
		}
		if (!get64(e + 8)) {
			*why = "CAPACITY record with capacity 0";
			return false;
		}
	}
	return true;
}

bool drec_capacity(const struct drec_record *rec, size_t i, struct drec_capacity *out)
{
	const unsigned char *q;

	if (rec->type != DREC_CAPACITY || i >= rec->count)
		return false;
	q = rec->payload + DREC_CAPACITY_FIXED + i * DREC_CAPACITY_ENTRY;
	out->engine = get32(q);
	out->capacity = get64(q + 8);
	return true;
}

/*
 * Decodes the record at r->pos whose framing was checked. Returns 1 valid,
 * 0 invalid (@why says why), -ENOMEM.
 */
static int decode(struct drec_reader *r, struct drec_record *rec, bool install,
		  const char **why)
{
	const unsigned char *p = r->buf + r->pos;
	struct drec_device d;
	int ret;

	memset(rec, 0, sizeof(*rec));
	rec->offset = r->pos;
	rec->type = get32(p);
	rec->size = get16(p + 6);
	rec->payload = p + DREC_HDR_SIZE;
	rec->payload_len = rec->size - DREC_HDR_SIZE;
	rec->known = true;
	switch (rec->type) {
	case DREC_SAMPLE:
	case DREC_CLIENT_EXIT:
		return dec_client(r, rec, why);
	case DREC_LOST:
		if (rec->payload_len < 24) {
			*why = "LOST record too short";
			return 0;
		}
		rec->time_ns = get64(rec->payload);
		rec->count = get64(rec->payload + 8);
		rec->source = get32(rec->payload + 16);
		return 1;
	case DREC_OVERFLOW:
		if (rec->payload_len < 16) {
			*why = "OVERFLOW record too short";
			return 0;
		}
		rec->time_ns = get64(rec->payload);
		rec->source = get32(rec->payload + 8);
		return 1;
	case DREC_HOLDERS:
		return dec_holders(r, rec, why);
	case DREC_CAPACITY:
		return dec_capacity(r, rec, why);
	case DREC_DEVICE:
		ret = parse_desc(rec->payload, rec->payload_len, &d, why);
		if (ret)
			return ret == -ENOMEM ? ret : 0;
		if (!install) {
			dev_free(&d);
			return 1;
		}
		ret = set_dev(r, &d);
		if (ret) {
			dev_free(&d);
			if (ret == -ENOMEM)
				return ret;
			*why = "device index too large";
			return 0;
		}
		rec->device = &r->devs[d.dev];
		return 1;
	default:
		rec->known = false;
		return 1;
	}
}

/* Is there a plausible record at @pos? Used to resynchronise. */
static bool plausible(struct drec_reader *r, size_t pos)
{
	const unsigned char *p = r->buf + pos;
	size_t size, save = r->pos;
	struct drec_record tmp;
	const char *why;
	uint32_t type;
	int ok;

	if (r->len - pos < DREC_HDR_SIZE)
		return false;
	type = get32(p);
	size = get16(p + 6);
	if (type < DREC_SAMPLE || type > DREC_CAPACITY || size < DREC_HDR_SIZE || size % 8 ||
	    size > r->len - pos)
		return false;
	r->pos = pos;
	ok = decode(r, &tmp, false, &why);
	r->pos = save;
	return ok == 1;
}

static void resync(struct drec_reader *r, size_t from)
{
	size_t pos = from;

	while (pos < r->len && !plausible(r, pos))
		pos += 8;
	if (pos > r->len)
		pos = r->len;
	if (pos > from)
		problem(r, DREC_P_SKIPPED, from, "skipped %zu bytes to the next valid record",
			pos - from);
	r->pos = pos;
}

int drec_next(struct drec_reader *r, struct drec_record *rec)
{
	if (r->err)
		return r->err;
	while (r->pos < r->len) {
		size_t left = r->len - r->pos, size;
		const unsigned char *p = r->buf + r->pos;
		const char *why = "";
		int ret;

		if (left < DREC_HDR_SIZE) {
			problem(r, DREC_P_TRUNCATED, r->pos,
				"stream ends inside a record header (%zu bytes left)", left);
			r->pos = r->len;
			return 0;
		}
		size = get16(p + 6);
		if (size < DREC_HDR_SIZE || size % 8) {
			problem(r, DREC_P_CORRUPT, r->pos,
				"record size %zu is %s", size,
				size < DREC_HDR_SIZE ? "smaller than the record header"
						     : "not a multiple of 8");
			resync(r, r->pos + 8);
			continue;
		}
		if (size > left) {
			problem(r, DREC_P_TRUNCATED, r->pos,
				"%s record of %zu bytes but only %zu bytes left",
				drec_type_name(get32(p)), size, left);
			/* A corrupt size rather than the end? Look for more. */
			resync(r, r->pos + 8);
			continue;
		}
		ret = decode(r, rec, true, &why);
		if (ret < 0)
			return r->err = ret;
		if (!ret) {
			problem(r, DREC_P_CORRUPT, r->pos, "%s record: %s",
				drec_type_name(rec->type), why);
			r->pos += size;
			continue;
		}
		r->pos += size;
		r->nrecords++;
		if (!rec->known)
			r->nunknown++;
		return 1;
	}
	return 0;
}

void drec_reader_free(struct drec_reader *r)
{
	size_t i;

	for (i = 0; i < r->ndevs; i++)
		dev_free(&r->devs[i]);
	free(r->devs);
	free(r->problems);
	memset(r, 0, sizeof(*r));
}

int drec_read_file(const char *path, unsigned char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *b;
	bool is_stdin = !strcmp(path, "-");
	int fd, ret = 0;

	*buf = NULL;
	*len = 0;
	fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	b = malloc(cap);
	if (!b) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (ret) {
		free(b);
	} else {
		*buf = b;
		*len = n;
	}
out:
	if (!is_stdin)
		close(fd);
	return ret;
}
