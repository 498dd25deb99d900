// SPDX-License-Identifier: MIT
/*
 * test_record.c - the record stream codec: byte layout against hand-built
 * streams, round trips, splitting of huge clients, and every kind of damage
 * (bad magic/version, truncation, sizes below the header or unaligned,
 * counts the size does not cover, undescribed devices, garbage) with the
 * offsets the decoder must report and what it must still recover.
 */
#define _GNU_SOURCE
#include "dtest.h"
#include "record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a byte builder: streams written by hand, little-endian ---- */

struct bb {
	unsigned char b[16384];
	size_t n;
};

static void b_u16(struct bb *s, uint16_t v)
{
	s->b[s->n++] = v & 0xff;
	s->b[s->n++] = v >> 8;
}

static void b_u32(struct bb *s, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		s->b[s->n++] = (v >> (8 * i)) & 0xff;
}

static void b_u64(struct bb *s, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		s->b[s->n++] = (v >> (8 * i)) & 0xff;
}

static void b_str(struct bb *s, const char *str)
{
	size_t l = strlen(str) + 1;

	memcpy(s->b + s->n, str, l);
	s->n += l;
}

static void b_pad(struct bb *s)
{
	while (s->n % 8)
		s->b[s->n++] = 0;
}

/* The version minor b_header() writes: 2 (CAPACITY); older ones are read too. */
static uint16_t hdr_minor = 2;

/* File header with one device 0 = 226:128 "simgpu", engines render (cap 1,
 * 1 GHz) and copy (cap 2), region "system". Returns the header size. */
static size_t b_header(struct bb *s)
{
	size_t hstart = s->n, dstart;

	memcpy(s->b + s->n, "DRMACREC", 8);
	s->n += 8;
	b_u16(s, 1);
	b_u16(s, hdr_minor);	/* version 1.2 (1.1 HOLDERS, 1.2 CAPACITY) */
	b_u32(s, 0);		/* header size, patched below */
	b_u32(s, 0);		/* flags */
	b_u32(s, 1);		/* one device */
	b_u64(s, 1700000000000000000ull);
	b_u64(s, 5000000000ull);	/* start mono */
	b_u64(s, 100000000ull);		/* interval */
	dstart = s->n;
	b_u32(s, 0);		/* desc size, patched */
	b_u32(s, 0);		/* dev index */
	b_u32(s, 226);
	b_u32(s, 128);
	b_u16(s, 2);
	b_u16(s, 1);
	b_u32(s, 0);
	b_u64(s, 1);
	b_u64(s, 1000000000ull);
	b_u64(s, 2);
	b_u64(s, 0);
	b_str(s, "simgpu");
	b_str(s, "");
	b_str(s, "render");
	b_str(s, "copy");
	b_str(s, "system");
	b_pad(s);
	s->b[dstart] = (unsigned char)(s->n - dstart);
	s->b[hstart + 12] = (unsigned char)(s->n - hstart);
	return s->n - hstart;
}

/* SAMPLE for client @id at @t with render busy @busy, copy busy @busy/2,
 * memory system total @mem. 8 + 48 + 2*40 + 48 = 184 bytes. */
static size_t b_sample(struct bb *s, uint64_t t, uint64_t id, uint64_t busy, uint64_t mem)
{
	size_t start = s->n;

	b_u32(s, DREC_SAMPLE);
	b_u16(s, 0);
	b_u16(s, 184);
	b_u64(s, t);
	b_u64(s, id);
	b_u32(s, 0);		/* dev */
	b_u32(s, 4242);		/* pid */
	b_u16(s, 2);
	b_u16(s, 1);
	b_u32(s, DREC_C_CLIENT_ID);
	memset(s->b + s->n, 0, 16);
	memcpy(s->b + s->n, "glxgears", 8);
	s->n += 16;
	b_u32(s, 0);
	b_u32(s, DREC_E_BUSY | DREC_E_CYCLES);
	b_u64(s, busy);
	b_u64(s, busy / 10);
	b_u64(s, 0);
	b_u64(s, 0);
	b_u32(s, 1);
	b_u32(s, DREC_E_BUSY);
	b_u64(s, busy / 2);
	b_u64(s, 0);
	b_u64(s, 0);
	b_u64(s, 0);
	b_u32(s, 0);
	b_u32(s, DREC_R_TOTAL | DREC_R_RESIDENT);
	b_u64(s, mem);
	b_u64(s, 0);
	b_u64(s, mem / 2);
	b_u64(s, 0);
	b_u64(s, 0);
	return start;
}

/* CAPACITY of client @id (pid 4242): copy (engine 1) at @cap. 8 + 32 + 16 bytes. */
static size_t b_capacity(struct bb *s, uint64_t t, uint64_t id, uint32_t engine, uint64_t cap)
{
	size_t start = s->n;

	b_u32(s, DREC_CAPACITY);
	b_u16(s, 0);
	b_u16(s, 56);
	b_u64(s, t);
	b_u64(s, id);
	b_u32(s, 0);		/* dev */
	b_u32(s, DREC_C_CLIENT_ID);
	b_u32(s, 4242);		/* pid */
	b_u32(s, 1);		/* one engine */
	b_u32(s, engine);
	b_u32(s, 0);
	b_u64(s, cap);
	return start;
}

static size_t b_lost(struct bb *s, uint64_t t, uint64_t count)
{
	size_t start = s->n;

	b_u32(s, DREC_LOST);
	b_u16(s, 0);
	b_u16(s, 32);
	b_u64(s, t);
	b_u64(s, count);
	b_u32(s, DREC_SRC_BPF_RINGBUF);
	b_u32(s, 0);
	return start;
}

struct seen {
	int samples, lost, unknown, other;
	uint64_t busy[8], ids[8], lost_count;
};

static int read_all(struct drec_reader *r, struct seen *sn)
{
	struct drec_record rec;
	int ret;

	memset(sn, 0, sizeof(*sn));
	while ((ret = drec_next(r, &rec)) == 1) {
		struct drec_engine_val e;

		if (!rec.known) {
			sn->unknown++;
		} else if (rec.type == DREC_SAMPLE) {
			DT_ASSERT_TRUE(drec_client_engine(&rec, 0, &e));
			if (sn->samples < 8) {
				sn->busy[sn->samples] = e.busy_ns;
				sn->ids[sn->samples] = rec.client.client_id;
			}
			sn->samples++;
		} else if (rec.type == DREC_LOST) {
			sn->lost++;
			sn->lost_count += rec.count;
		} else {
			sn->other++;
		}
	}
	return ret;
}

static const struct drec_problem *find_problem(const struct drec_reader *r,
					       enum drec_problem_kind k)
{
	for (size_t i = 0; i < r->nproblems; i++)
		if (r->problems[i].kind == k)
			return &r->problems[i];
	return NULL;
}

/* ---- hand-built streams: the documented layout ---- */

DT_TEST(handmade_stream_decodes)
{
	static struct bb s;
	struct drec_reader r;
	struct drec_record rec;
	struct drec_engine_val e;
	struct drec_region_val g;
	const struct drec_device *d;
	size_t h;

	s.n = 0;
	h = b_header(&s);
	/* 48 + 24 + 2 * 16 + "simgpu\0" "\0" "render\0" "copy\0" "system\0" padded to 32 */
	DT_ASSERT_EQ(h, (size_t)136);
	b_sample(&s, 5100000000ull, 7, 3000000, 8388608);
	b_lost(&s, 5150000000ull, 12);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_EXPECT_EQ(r.info.version_major, 1u);
	DT_EXPECT_EQ(r.info.start_mono_ns, 5000000000ull);
	DT_EXPECT_EQ(r.info.interval_ns, 100000000ull);
	d = drec_device(&r, 0);
	DT_ASSERT_NE(d, NULL);
	DT_EXPECT_STREQ(d->driver, "simgpu");
	DT_EXPECT_EQ(d->major, 226u);
	DT_EXPECT_EQ(d->minor, 128u);
	DT_ASSERT_EQ(d->nengines, (size_t)2);
	DT_EXPECT_STREQ(d->engines[1].name, "copy");
	DT_EXPECT_EQ(d->engines[1].capacity, 2ull);
	DT_EXPECT_EQ(d->engines[0].maxfreq_hz, 1000000000ull);
	DT_EXPECT_STREQ(d->regions[0], "system");

	DT_ASSERT_EQ(drec_next(&r, &rec), 1);
	DT_EXPECT_EQ(rec.offset, (uint64_t)136);
	DT_EXPECT_EQ(rec.type, (uint32_t)DREC_SAMPLE);
	DT_EXPECT_EQ(rec.size, 184u);
	DT_EXPECT_EQ(rec.client.time_ns, 5100000000ull);
	DT_EXPECT_EQ(rec.client.client_id, 7ull);
	DT_EXPECT_EQ(rec.client.pid, 4242u);
	DT_EXPECT_STREQ(rec.client.comm, "glxgears");
	DT_ASSERT_TRUE(drec_client_engine(&rec, 1, &e));
	DT_EXPECT_EQ(e.engine, 1u);
	DT_EXPECT_EQ(e.busy_ns, 1500000ull);
	DT_EXPECT_FALSE(drec_client_engine(&rec, 2, &e));
	DT_ASSERT_TRUE(drec_client_region(&rec, 0, &g));
	DT_EXPECT_EQ(g.total, 8388608ull);
	DT_EXPECT_EQ(g.resident, 4194304ull);
	DT_ASSERT_EQ(drec_next(&r, &rec), 1);
	DT_EXPECT_EQ(rec.type, (uint32_t)DREC_LOST);
	DT_EXPECT_EQ(rec.count, 12ull);
	DT_EXPECT_EQ(rec.source, (uint32_t)DREC_SRC_BPF_RINGBUF);
	DT_EXPECT_EQ(drec_next(&r, &rec), 0);
	DT_EXPECT_EQ(r.nproblems, (size_t)0);
	drec_reader_free(&r);
}

/*
 * Version 1.2's CAPACITY record: decoded, written the same, and checked
 * (an engine the device does not have, capacity 0, a count the size does
 * not cover: corrupt, skipped, the stream goes on). Streams of version 1.0
 * and 1.1 (no CAPACITY) are still read.
 */
DT_TEST(capacity_record_and_old_versions)
{
	static struct bb s;
	struct drec_capacity cv = { .engine = 1, .capacity = 4 }, x;
	struct drec_client c = { .time_ns = 5100000000ull, .client_id = 7, .dev = 0,
				 .pid = 4242, .flags = DREC_C_CLIENT_ID };
	struct drec_engine_desc eng[2] = {
		{ "render", 1, 1000000000ull }, { "copy", 2, 0 },
	};
	const char *regs[1] = { "system" };
	struct drec_device dev = {
		.dev = 0, .major = 226, .minor = 128, .driver = "simgpu", .pdev = "",
		.nengines = 2, .engines = eng, .nregions = 1, .regions = regs,
	};
	struct drec_file_info fi = {
		.start_realtime_ns = 1700000000000000000ull, .start_mono_ns = 5000000000ull,
		.interval_ns = 100000000ull,
	};
	struct drec_reader r;
	struct drec_record rec;
	struct drec_writer w;
	struct seen sn;
	char *mem = NULL;
	size_t len = 0, off;
	FILE *f;

	s.n = 0;
	b_header(&s);
	off = b_capacity(&s, 5100000000ull, 7, 1, 4);
	b_sample(&s, 5100000000ull, 7, 3000000, 8388608);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_EXPECT_EQ(r.info.version_minor, 2u);
	DT_ASSERT_EQ(drec_next(&r, &rec), 1);
	DT_EXPECT_EQ(rec.type, (uint32_t)DREC_CAPACITY);
	DT_EXPECT_TRUE(rec.known);
	DT_EXPECT_STREQ(drec_type_name(rec.type), "capacity");
	DT_EXPECT_EQ(rec.count, 1ull);
	DT_EXPECT_EQ(rec.client.client_id, 7ull);
	DT_EXPECT_EQ(rec.client.pid, 4242u);
	DT_EXPECT_EQ(rec.client.flags, (uint32_t)DREC_C_CLIENT_ID);
	DT_ASSERT_TRUE(drec_capacity(&rec, 0, &x));
	DT_EXPECT_EQ(x.engine, 1u);
	DT_EXPECT_EQ(x.capacity, 4ull);
	DT_EXPECT_FALSE(drec_capacity(&rec, 1, &x));
	DT_ASSERT_EQ(drec_next(&r, &rec), 1);
	DT_EXPECT_FALSE(drec_capacity(&rec, 0, &x));	/* not a CAPACITY record */
	DT_EXPECT_EQ(r.nproblems, (size_t)0);
	drec_reader_free(&r);

	/* the writer writes the same bytes */
	f = open_memstream(&mem, &len);
	DT_ASSERT_NE(f, NULL);
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), 0);
	DT_ASSERT_EQ(drec_write_capacity(&w, &c, &cv, 1), 0);
	DT_ASSERT_EQ(drec_writer_finish(&w), 0);
	fclose(f);
	DT_ASSERT_EQ(len, off + 56);
	DT_EXPECT_EQ(memcmp(mem, s.b, len), 0);
	free(mem);

	/* engine 2 does not exist; capacity 0 is not allowed; count 2 in 56 bytes */
	for (int bad = 0; bad < 3; bad++) {
		s.n = 0;
		b_header(&s);
		if (bad == 0)
			b_capacity(&s, 5100000000ull, 7, 2, 4);
		else
			b_capacity(&s, 5100000000ull, 7, 1, bad == 1 ? 0 : 4);
		if (bad == 2)
			s.b[off + DREC_HDR_SIZE + 28] = 2;
		b_sample(&s, 5200000000ull, 7, 3000000, 8388608);
		DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
		DT_ASSERT_EQ(read_all(&r, &sn), 0);
		DT_EXPECT_EQ(sn.samples, 1);
		DT_EXPECT_EQ(sn.other, 0);
		DT_ASSERT_GE(r.nproblems, (size_t)1);
		DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)off);
		DT_EXPECT_NE(strstr(r.problems[0].msg, bad == 0 ? "engine the device does not have" :
						      bad == 1 ? "capacity 0" :
								 "does not match"), NULL);
		drec_reader_free(&r);
	}

	/* 1.0 and 1.1 files: read as before */
	for (uint16_t minor = 0; minor < 2; minor++) {
		hdr_minor = minor;
		s.n = 0;
		b_header(&s);
		b_sample(&s, 5100000000ull, 7, 3000000, 8388608);
		b_sample(&s, 5200000000ull, 7, 4000000, 8388608);
		DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
		DT_EXPECT_EQ(r.info.version_minor, (uint32_t)minor);
		DT_ASSERT_EQ(read_all(&r, &sn), 0);
		DT_EXPECT_EQ(sn.samples, 2);
		DT_EXPECT_EQ(sn.busy[1], 4000000ull);
		DT_EXPECT_EQ(r.nproblems, (size_t)0);
		drec_reader_free(&r);
	}
	hdr_minor = 2;
}

/* The writer produces exactly the hand-built bytes. */
DT_TEST(writer_matches_layout)
{
	static struct bb s;
	struct drec_engine_desc eng[2] = {
		{ "render", 1, 1000000000ull }, { "copy", 2, 0 },
	};
	const char *regs[1] = { "system" };
	struct drec_device dev = {
		.dev = 0, .major = 226, .minor = 128, .driver = "simgpu", .pdev = "",
		.nengines = 2, .engines = eng, .nregions = 1, .regions = regs,
	};
	struct drec_file_info fi = {
		.start_realtime_ns = 1700000000000000000ull, .start_mono_ns = 5000000000ull,
		.interval_ns = 100000000ull,
	};
	struct drec_engine_val ev[2] = {
		{ .engine = 0, .flags = DREC_E_BUSY | DREC_E_CYCLES, .busy_ns = 3000000,
		  .cycles = 300000 },
		{ .engine = 1, .flags = DREC_E_BUSY, .busy_ns = 1500000 },
	};
	struct drec_region_val rv = { .region = 0, .flags = DREC_R_TOTAL | DREC_R_RESIDENT,
				      .total = 8388608, .resident = 4194304 };
	struct drec_client c = {
		.time_ns = 5100000000ull, .client_id = 7, .dev = 0, .pid = 4242,
		.flags = DREC_C_CLIENT_ID, .comm = "glxgears", .nengines = 2, .nregions = 1,
		.engines = ev, .regions = &rv,
	};
	struct drec_writer w;
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	DT_ASSERT_NE(f, NULL);
	s.n = 0;
	b_header(&s);
	b_sample(&s, 5100000000ull, 7, 3000000, 8388608);
	b_lost(&s, 5150000000ull, 12);
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), 0);
	DT_ASSERT_EQ(drec_write_client(&w, DREC_SAMPLE, &c), 0);
	DT_ASSERT_EQ(drec_write_lost(&w, 5150000000ull, DREC_SRC_BPF_RINGBUF, 12), 0);
	DT_ASSERT_EQ(drec_writer_finish(&w), 0);
	fclose(f);
	DT_ASSERT_EQ(len, s.n);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)mem[i] != s.b[i])
			DT_FAIL("byte %zu: writer 0x%02x, layout 0x%02x", i, (unsigned char)mem[i],
				s.b[i]);
	DT_EXPECT_EQ(w.records, 2ull);
	free(mem);
}

DT_TEST(writer_rejects_bad_input)
{
	struct drec_writer w;
	struct drec_file_info fi = { 0 };
	struct drec_engine_desc eng = { NULL, 1, 0 };
	struct drec_device dev = { .driver = "x", .pdev = "", .nengines = 1, .engines = &eng };
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);
	struct drec_client c = { .nengines = 1, .engines = NULL };

	DT_EXPECT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), -EINVAL);	/* NULL name */
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, NULL, 0), 0);
	DT_EXPECT_EQ(drec_write_client(&w, DREC_SAMPLE, &c), -EINVAL);
	c.nengines = 0;
	DT_EXPECT_EQ(drec_write_client(&w, DREC_LOST, &c), -EINVAL);
	DT_EXPECT_EQ(drec_write_raw(&w, 9, NULL, 65536), -EINVAL);
	DT_EXPECT_EQ(drec_writer_finish(&w), 0);
	fclose(f);
	DT_EXPECT_EQ(len, (size_t)DREC_FILE_HEADER_SIZE);
	free(mem);
}

/* A client with more engines than one 64 KiB record holds is split. */
DT_TEST(huge_client_split_and_rejoined)
{
	enum { NE = 4000 };
	struct drec_engine_desc *eng = calloc(NE, sizeof(*eng));
	struct drec_engine_val *ev = calloc(NE, sizeof(*ev));
	char (*names)[16] = calloc(NE, 16);
	struct drec_device dev = { .driver = "big", .pdev = "0000:01:00.0", .major = 226,
				   .minor = 1, .nengines = NE };
	struct drec_file_info fi = { .start_mono_ns = 1 };
	struct drec_client c = { .time_ns = 9, .client_id = 3, .nengines = NE };
	struct drec_writer w;
	struct drec_reader r;
	struct drec_record rec;
	char *mem = NULL;
	size_t len = 0, got = 0, nrec = 0;
	FILE *f = open_memstream(&mem, &len);

	DT_ASSERT_TRUE(eng && ev && names && f);
	for (int i = 0; i < NE; i++) {
		snprintf(names[i], 16, "e%d", i);
		eng[i] = (struct drec_engine_desc){ names[i], 1, 0 };
		ev[i] = (struct drec_engine_val){ .engine = (uint32_t)i, .flags = DREC_E_BUSY,
						  .busy_ns = 1000ull * (uint64_t)i };
	}
	dev.engines = eng;
	c.engines = ev;
	/* Too many engines for a DEVICE record, fine for the file header. */
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), 0);
	DT_EXPECT_EQ(drec_write_device(&w, &dev), -E2BIG);
	DT_ASSERT_EQ(drec_write_client(&w, DREC_SAMPLE, &c), 0);
	DT_ASSERT_EQ(drec_writer_finish(&w), 0);
	fclose(f);
	DT_ASSERT_EQ(drec_reader_init(&r, mem, len), 0);
	while (drec_next(&r, &rec) == 1) {
		struct drec_engine_val e;

		nrec++;
		DT_ASSERT_LE(rec.size, DREC_MAX_RECORD);
		for (size_t i = 0; drec_client_engine(&rec, i, &e); i++, got++)
			DT_ASSERT_EQ(e.busy_ns, 1000ull * e.engine);
	}
	DT_EXPECT_EQ(got, (size_t)NE);
	DT_EXPECT_EQ(nrec, (size_t)3);	/* 4000 * 40 bytes: 1636 engines a record */
	DT_EXPECT_EQ(r.nproblems, (size_t)0);
	drec_reader_free(&r);
	free(mem);
	free(eng);
	free(ev);
	free(names);
}

/* HOLDERS: 3000 processes split over records, read back; a bad count rejected. */
DT_TEST(holders_split_rejoined_and_checked)
{
	enum { NH = 3000 };
	struct drec_holder *h = calloc(NH, sizeof(*h));
	struct drec_device dev = { .driver = "d", .pdev = "", .major = 226, .minor = 128 };
	struct drec_file_info fi = { .start_mono_ns = 1 };
	struct drec_writer w;
	struct drec_reader r;
	struct drec_record rec;
	char *mem = NULL;
	size_t len = 0, got = 0, nrec = 0;
	FILE *f = open_memstream(&mem, &len);

	DT_ASSERT_TRUE(h && f);
	for (int i = 0; i < NH; i++) {
		h[i].pid = 1000 + (uint32_t)i;
		char full[48];

		snprintf(full, sizeof(full), "p%d-with-a-long-name", i);
		memcpy(h[i].comm, full, DREC_COMM_LEN);	/* 16 bytes, no NUL: the limit */
	}
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), 0);
	DT_ASSERT_EQ(drec_write_holders(&w, 5, 0, 42, DREC_C_CLIENT_ID, h, NH), 0);
	DT_ASSERT_EQ(drec_writer_finish(&w), 0);
	fclose(f);
	DT_ASSERT_EQ(drec_reader_init(&r, mem, len), 0);
	DT_EXPECT_EQ(r.info.version_minor, 2u);
	while (drec_next(&r, &rec) == 1) {
		struct drec_holder x;

		nrec++;
		DT_ASSERT_EQ(rec.type, (uint32_t)DREC_HOLDERS);
		DT_EXPECT_STREQ(drec_type_name(rec.type), "holders");
		DT_EXPECT_EQ(rec.client.client_id, 42ull);
		DT_EXPECT_EQ(rec.client.time_ns, 5ull);
		for (size_t i = 0; drec_holder(&rec, i, &x); i++, got++) {
			char want[48];

			DT_ASSERT_EQ(x.pid, 1000 + (uint32_t)got);
			snprintf(want, sizeof(want), "p%zu-with-a-long-name", got);
			want[DREC_COMM_LEN] = '\0';
			DT_ASSERT_STREQ(x.comm, want);
		}
		DT_EXPECT_FALSE(drec_holder(&rec, rec.count, &x));
	}
	DT_EXPECT_EQ(got, (size_t)NH);
	DT_EXPECT_EQ(nrec, (size_t)2);	/* 2728 holders fit a record */
	DT_EXPECT_EQ(r.nproblems, (size_t)0);
	drec_reader_free(&r);

	/* A count the size does not cover: corrupt, skipped, reported. */
	{
		size_t off;

		/* the first record after the header (and its device table) */
		DT_ASSERT_EQ(drec_reader_init(&r, mem, len), 0);
		DT_ASSERT_EQ(drec_next(&r, &rec), 1);
		off = rec.offset;
		drec_reader_free(&r);
		mem[off + DREC_HDR_SIZE + 24] = (char)0xff;	/* count low byte */
		mem[off + DREC_HDR_SIZE + 25] = (char)0xff;
		DT_ASSERT_EQ(drec_reader_init(&r, mem, len), 0);
		nrec = 0;
		while (drec_next(&r, &rec) == 1)
			nrec++;
		DT_EXPECT_EQ(nrec, (size_t)1);		/* the second record only */
		DT_EXPECT_GE(r.nproblems, (size_t)1);
		drec_reader_free(&r);
	}
	free(mem);
	free(h);
}

/* ---- damage ---- */

DT_TEST(bad_magic_version_and_short_header)
{
	static struct bb s;
	struct drec_reader r;

	s.n = 0;
	b_header(&s);
	s.b[0] = 'X';
	DT_EXPECT_EQ(drec_reader_init(&r, s.b, s.n), -EINVAL);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "magic"), NULL);
	drec_reader_free(&r);

	s.b[0] = 'D';
	s.b[8] = 2;		/* version 2.x */
	s.b[10] = 0;		/* 2.0 */
	DT_EXPECT_EQ(drec_reader_init(&r, s.b, s.n), -EINVAL);
	DT_ASSERT_EQ(r.nproblems, (size_t)1);
	DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)8);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "version 2.0"), NULL);
	drec_reader_free(&r);
	s.b[8] = 1;
	s.b[10] = 1;

	DT_EXPECT_EQ(drec_reader_init(&r, s.b, 20), -ENODATA);
	DT_EXPECT_EQ(r.problems[0].kind, DREC_P_TRUNCATED);
	drec_reader_free(&r);
	DT_EXPECT_EQ(drec_reader_init(&r, s.b, 100), -ENODATA);	/* inside the devices */
	DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)12);
	drec_reader_free(&r);
	DT_EXPECT_EQ(drec_reader_init(&r, s.b, 5), -ENODATA);
	drec_reader_free(&r);
	DT_EXPECT_EQ(drec_reader_init(&r, s.b, 0), -EINVAL);
	drec_reader_free(&r);

	/* device string table without its terminating NUL */
	s.b[104 + 6] = (unsigned char)'x';	/* the NUL after "simgpu" ... */
	memset(s.b + 104, 'x', 32);	/* ... and every other one */
	DT_EXPECT_EQ(drec_reader_init(&r, s.b, s.n), -EBADMSG);
	DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)48);
	drec_reader_free(&r);
}

DT_TEST(size_below_header_is_rejected_and_stream_recovers)
{
	static struct bb s;
	struct drec_reader r;
	struct seen sn;
	size_t bad;

	s.n = 0;
	b_header(&s);
	b_sample(&s, 1, 1, 100, 0);
	bad = b_sample(&s, 2, 1, 200, 0);
	s.b[bad + 6] = 4;	/* size 4 < 8 */
	s.b[bad + 7] = 0;
	b_sample(&s, 3, 1, 300, 0);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 2);
	DT_EXPECT_EQ(sn.busy[0], 100ull);
	DT_EXPECT_EQ(sn.busy[1], 300ull);
	DT_ASSERT_GE(r.nproblems, (size_t)1);
	DT_EXPECT_EQ(r.problems[0].kind, DREC_P_CORRUPT);
	DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)bad);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "smaller than the record header"), NULL);
	DT_ASSERT_NE(find_problem(&r, DREC_P_SKIPPED), NULL);
	DT_EXPECT_EQ(find_problem(&r, DREC_P_SKIPPED)->offset, (uint64_t)bad + 8);
	drec_reader_free(&r);

	/* size 0 would loop forever in a naive reader */
	s.b[bad + 6] = 0;
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 2);
	drec_reader_free(&r);

	/* unaligned size */
	s.b[bad + 6] = 185;
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 2);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "not a multiple of 8"), NULL);
	drec_reader_free(&r);
}

DT_TEST(truncated_last_record)
{
	static struct bb s;
	struct drec_reader r;
	struct seen sn;
	size_t last;

	s.n = 0;
	b_header(&s);
	b_sample(&s, 1, 1, 100, 0);
	last = b_sample(&s, 2, 1, 200, 0);
	for (size_t cut = 1; cut < 184; cut += 7) {
		DT_ASSERT_EQ(drec_reader_init(&r, s.b, last + cut), 0);
		DT_ASSERT_EQ(read_all(&r, &sn), 0);
		DT_EXPECT_EQ(sn.samples, 1);
		DT_EXPECT_EQ(sn.busy[0], 100ull);
		DT_ASSERT_NE(find_problem(&r, DREC_P_TRUNCATED), NULL);
		DT_EXPECT_EQ(find_problem(&r, DREC_P_TRUNCATED)->offset, (uint64_t)last);
		DT_EXPECT_EQ(find_problem(&r, DREC_P_CORRUPT), NULL);
		drec_reader_free(&r);
	}
}

DT_TEST(counts_not_covered_by_size)
{
	static struct bb s;
	struct drec_reader r;
	struct seen sn;
	size_t bad;

	s.n = 0;
	b_header(&s);
	bad = b_sample(&s, 1, 1, 100, 0);
	s.b[bad + 8 + 24] = 200;	/* nengines 200: would read far past the record */
	b_sample(&s, 2, 1, 200, 0);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 1);
	DT_EXPECT_EQ(sn.busy[0], 200ull);
	DT_ASSERT_EQ(r.nproblems, (size_t)1);	/* skipped by its size: no resync */
	DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)bad);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "do not match the record size"), NULL);
	drec_reader_free(&r);

	/* engine index beyond the device's engines; undescribed device */
	s.b[bad + 8 + 24] = 2;
	s.b[bad + 8 + 48] = 9;
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 1);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "engine index"), NULL);
	drec_reader_free(&r);
	s.b[bad + 8 + 48] = 0;
	s.b[bad + 8 + 16] = 3;	/* dev 3 */
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 1);
	DT_EXPECT_NE(strstr(r.problems[0].msg, "device that was not described"), NULL);
	drec_reader_free(&r);
}

DT_TEST(unknown_types_skipped_by_size)
{
	static struct bb s;
	struct drec_reader r;
	struct seen sn;

	s.n = 0;
	b_header(&s);
	b_sample(&s, 1, 1, 100, 0);
	b_u32(&s, 77);		/* a type from the future, 40 bytes */
	b_u16(&s, 0xabcd);	/* pad is ignored */
	b_u16(&s, 40);
	for (int i = 0; i < 4; i++)
		b_u64(&s, 0xffffffffffffffffull);
	b_sample(&s, 2, 1, 200, 0);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 2);
	DT_EXPECT_EQ(sn.unknown, 1);
	DT_EXPECT_EQ(r.nunknown, 1ull);
	DT_EXPECT_EQ(r.nproblems, (size_t)0);
	drec_reader_free(&r);
}

DT_TEST(garbage_in_the_middle)
{
	static struct bb s;
	struct drec_reader r;
	struct seen sn;
	size_t g;

	s.n = 0;
	b_header(&s);
	b_sample(&s, 1, 1, 100, 0);
	g = s.n;
	memset(s.b + s.n, 0xff, 64);
	s.n += 64;
	b_lost(&s, 3, 5);
	b_sample(&s, 4, 9, 400, 0);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(read_all(&r, &sn), 0);
	DT_EXPECT_EQ(sn.samples, 2);
	DT_EXPECT_EQ(sn.ids[1], 9ull);
	DT_EXPECT_EQ(sn.lost_count, 5ull);
	/* 0xffff: size not a multiple of 8; then the skip to the LOST record */
	DT_ASSERT_NE(find_problem(&r, DREC_P_SKIPPED), NULL);
	DT_EXPECT_EQ(r.problems[0].offset, (uint64_t)g);
	DT_EXPECT_NE(strstr(find_problem(&r, DREC_P_SKIPPED)->msg, "skipped 56 bytes"), NULL);
	drec_reader_free(&r);
}

DT_TEST(device_record_extends_device)
{
	static struct bb s;
	struct drec_reader r;
	struct drec_record rec;
	size_t st;

	s.n = 0;
	b_header(&s);
	/* DEVICE record: dev 0 now has a third engine "video" */
	st = s.n;
	b_u32(&s, DREC_DEVICE);
	b_u16(&s, 0);
	b_u16(&s, 0);
	b_u32(&s, 0);
	b_u32(&s, 0);
	b_u32(&s, 226);
	b_u32(&s, 128);
	b_u16(&s, 3);
	b_u16(&s, 0);
	b_u32(&s, 0);
	for (int i = 0; i < 3; i++) {
		b_u64(&s, 1);
		b_u64(&s, 0);
	}
	b_str(&s, "simgpu");
	b_str(&s, "");
	b_str(&s, "render");
	b_str(&s, "copy");
	b_str(&s, "video");
	b_pad(&s);
	s.b[st + 6] = (unsigned char)(s.n - st);
	s.b[st + 8] = (unsigned char)(s.n - st - 8);
	DT_ASSERT_EQ(drec_reader_init(&r, s.b, s.n), 0);
	DT_ASSERT_EQ(drec_next(&r, &rec), 1);
	DT_EXPECT_EQ(rec.type, (uint32_t)DREC_DEVICE);
	DT_ASSERT_EQ(drec_device(&r, 0)->nengines, (size_t)3);
	DT_EXPECT_STREQ(drec_device(&r, 0)->engines[2].name, "video");
	DT_EXPECT_EQ(drec_device(&r, 0)->nregions, (size_t)0);
	DT_EXPECT_EQ(r.nproblems, (size_t)0);
	drec_reader_free(&r);
}

/* Every prefix and every single-byte corruption: no crash, no overread
 * (ASan), and never more records than were written. */
DT_TEST(every_prefix_and_byte_flip)
{
	static struct bb s;
	struct drec_reader r;
	struct seen sn;
	unsigned char *copy;

	s.n = 0;
	b_header(&s);
	b_sample(&s, 1, 1, 100, 4096);
	b_lost(&s, 2, 3);
	b_sample(&s, 3, 2, 300, 8192);
	for (size_t n = 0; n <= s.n; n++) {
		copy = malloc(n ? n : 1);	/* exact size: ASan sees any overread */
		DT_ASSERT_NE(copy, NULL);
		memcpy(copy, s.b, n);
		if (!drec_reader_init(&r, copy, n)) {
			DT_ASSERT_EQ(read_all(&r, &sn), 0);
			DT_ASSERT_LE(sn.samples, 2);
		}
		drec_reader_free(&r);
		free(copy);
	}
	copy = malloc(s.n);
	DT_ASSERT_NE(copy, NULL);
	for (size_t i = 0; i < s.n; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			memcpy(copy, s.b, s.n);
			copy[i] ^= (unsigned char)(1u << bit);
			if (!drec_reader_init(&r, copy, s.n)) {
				DT_ASSERT_EQ(read_all(&r, &sn), 0);
				DT_ASSERT_LE(sn.samples + sn.lost + sn.unknown, 3);
			}
			drec_reader_free(&r);
		}
	}
	free(copy);
}

DT_MAIN
