// SPDX-License-Identifier: MIT
/*
 * The loader's parsers, without BPF: field offsets in tracefs format text,
 * CLIENT_EXIT ring-buffer records (good and malformed), and the name
 * probe's fdinfo (engine/region names in index order, capacities, client
 * id), each on hand-made input including bad input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "../../bpf/drmacct_bpf.h"
#include "dtest.h"

/* ---- format files ---------------------------------------------------------- */

static const char fmt617[] =
	"name: drm_sched_job_run\n"
	"ID: 1711\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 job_count;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc char[] dev;\toffset:20;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 fence_context;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 fence_seqno;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 client_id;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:u8 ring_names[16];\toffset:48;\tsize:16;\tsigned:0;\n"
	"\n"
	"print fmt: \"dev=%s, fence=%llu:%llu, ring=%s\", ...\n";

DT_TEST(format_offsets_of_fields)
{
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "name", NULL), 8L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "name", "__data_loc"), 8L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "dev", "__data_loc"), 20L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "fence_context", NULL), 24L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "fence_seqno", NULL), 32L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "client_id", NULL), 40L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "common_pid", NULL), 4L);
	/* An array field's name ends at '[': "ring_names[16]" is not "ring_names". */
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "ring_names", NULL), -1L);
}

DT_TEST(format_suffixes_and_types_do_not_match)
{
	/* "seqno" and "context" are only suffixes of real fields. */
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "seqno", NULL), -1L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "context", NULL), -1L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "id", NULL), -1L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "fence", NULL), -1L);
	/* Wrong type wanted. */
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "client_id", "*"), -2L);
	DT_EXPECT_EQ(dac_bpf_format_offset(fmt617, "fence_context", "__data_loc"), -2L);
	/* The print fmt line mentions fields but is no field line. */
	DT_EXPECT_EQ(dac_bpf_format_offset("print fmt: \"x\", REC->fence_seqno;offset:3;\n",
					   "fence_seqno", NULL), -1L);
}

DT_TEST(format_bad_text)
{
	DT_EXPECT_EQ(dac_bpf_format_offset("", "client_id", NULL), -1L);
	/* No offset on the field's line. */
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id;\tsize:8;\n"
					   "\tfield:u64 x;\toffset:40;\n", "client_id", NULL), -1L);
	/* Offset not a number, negative, overflowing, or cut short. */
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id;\toffset:abc;\n",
					   "client_id", NULL), -1L);
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id;\toffset:-8;\n",
					   "client_id", NULL), -1L);
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id;\toffset:99999999999999999999;\n",
					   "client_id", NULL), -1L);
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id;\toffset:40", "client_id", NULL),
		     -1L);
	/* No newline at the end is fine. */
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id;\toffset:40;", "client_id", NULL),
		     40L);
	/* A line without ';' followed by a good one. */
	DT_EXPECT_EQ(dac_bpf_format_offset("\tfield:u64 client_id\n"
					   "\tfield:u64 client_id;\toffset:16;\n",
					   "client_id", NULL), 16L);
}

/* ---- CLIENT_EXIT records ------------------------------------------------------ */

/* A record with @ne engines and @nr regions, in an 8-aligned buffer. */
static size_t make_rec(uint64_t *buf, size_t cap, uint32_t ne, uint32_t nr)
{
	struct dac_rec_exit *r = (void *)buf;
	struct dac_rec_engine *e = (void *)(r + 1);
	struct dac_rec_region *g = (void *)(e + ne);
	size_t size = sizeof(*r) + ne * sizeof(*e) + nr * sizeof(*g);

	DT_ASSERT_LE(size, cap);
	memset(buf, 0, cap);
	r->type = DAC_REC_CLIENT_EXIT;
	r->size = (uint32_t)size;
	r->seq = 7;
	r->client_id = 42;
	r->num_engines = ne;
	r->num_regions = nr;
	memcpy(r->comm, "glxgears", 9);
	for (uint32_t i = 0; i < ne; i++) {
		e[i].busy_ns = 1000 * (i + 1);
		e[i].cycles = 10 * (i + 1);
		e[i].jobs = i + 1;
	}
	for (uint32_t i = 0; i < nr; i++) {
		g[i].peak = 4096 * (i + 1);
		g[i].total = 512 * (i + 1);
	}
	return size;
}

DT_TEST(decode_good_record)
{
	static uint64_t buf[512];
	const struct dac_rec_exit *r = NULL;
	const struct dac_rec_engine *e = NULL;
	const struct dac_rec_region *g = NULL;
	size_t size = make_rec(buf, sizeof(buf), 3, 2);

	DT_ASSERT_EQ(size, sizeof(*r) + 3 * 24 + 2 * 16);
	DT_ASSERT_EQ(dac_bpf_decode_exit(buf, size, &r, &e, &g), 0);
	DT_EXPECT_EQ(r->client_id, (uint64_t)42);
	DT_EXPECT_EQ(r->seq, (uint64_t)7);
	DT_EXPECT_EQ(e[2].busy_ns, (uint64_t)3000);
	DT_EXPECT_EQ(e[2].jobs, (uint64_t)3);
	DT_EXPECT_EQ(g[0].peak, (uint64_t)4096);
	DT_EXPECT_EQ(g[1].total, (uint64_t)1024);
	DT_EXPECT_EQ((const char *)g - (const char *)buf, (long)(sizeof(*r) + 3 * 24));
	/* The ring may hand us more bytes than the record (8-byte rounding). */
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size + 8, &r, &e, &g), 0);
	/* The maximum: 64 engines, 16 regions. */
	size = make_rec(buf, sizeof(buf), DAC_EXIT_MAX_ENGINES, DAC_EXIT_MAX_REGIONS);
	DT_EXPECT_EQ(size, DAC_REC_EXIT_MAX_SIZE);
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size, &r, &e, &g), 0);
	/* No engines, no regions. */
	size = make_rec(buf, sizeof(buf), 0, 0);
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size, &r, &e, &g), 0);
}

/* A PROC_EXIT record with @nr rings into @buf; returns its size. */
static size_t make_proc(void *buf, uint32_t nr)
{
	struct dac_rec_proc_exit *r = buf;
	struct dac_rec_ring *e = (void *)(r + 1);
	size_t size = sizeof(*r) + nr * sizeof(*e);

	memset(buf, 0, size);
	r->type = DAC_REC_PROC_EXIT;
	r->size = size;
	r->tgid = 77;
	r->num_rings = nr;
	for (uint32_t i = 0; i < nr; i++) {
		e[i].ring_id = i + 1;
		e[i].busy_ns = 100 * (i + 1);
		r->busy_ns += e[i].busy_ns;
	}
	return size;
}

DT_TEST(decode_proc_exit_records)
{
	static uint64_t buf[256];
	struct dac_rec_proc_exit *w = (void *)buf;
	const struct dac_rec_proc_exit *r = NULL;
	const struct dac_rec_ring *e = NULL;
	size_t size = make_proc(buf, 3);

	DT_ASSERT_EQ(dac_bpf_decode_proc_exit(buf, size, &r, &e), 0);
	DT_EXPECT_EQ(r->tgid, 77u);
	DT_EXPECT_EQ(e[2].ring_id, 3u);
	DT_EXPECT_EQ(e[2].busy_ns, (uint64_t)300);
	DT_EXPECT_EQ(r->busy_ns, (uint64_t)600);
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, size + 8, &r, &e), 0);
	size = make_proc(buf, DAC_PROC_MAX_RINGS);
	DT_EXPECT_EQ(size, DAC_REC_PROC_MAX_SIZE);
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, size, &r, &e), 0);
	/* Bad: no data, short, truncated sample, other type, counts. */
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(NULL, 0, &r, &e), -EBADMSG);
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, sizeof(*w) - 1, &r, &e), -EBADMSG);
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, size - 8, &r, &e), -EBADMSG);
	w->type = DAC_REC_CLIENT_EXIT;
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, size, &r, &e), -EBADMSG);
	size = make_proc(buf, 2);
	w->num_rings = 3;
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, size, &r, &e), -EBADMSG);
	make_proc(buf, 0);
	w->num_rings = UINT32_MAX;
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, sizeof(buf), &r, &e), -EBADMSG);
	make_proc(buf, 0);
	w->size = sizeof(*w) - 8;
	DT_EXPECT_EQ(dac_bpf_decode_proc_exit(buf, sizeof(buf), &r, &e), -EBADMSG);
}

DT_TEST(decode_bad_records)
{
	static uint64_t buf[512];
	struct dac_rec_exit *w = (void *)buf;
	const struct dac_rec_exit *r = NULL;
	const struct dac_rec_engine *e = NULL;
	const struct dac_rec_region *g = NULL;
	size_t size;

	DT_EXPECT_EQ(dac_bpf_decode_exit(NULL, 0, &r, &e, &g), -EBADMSG);
	size = make_rec(buf, sizeof(buf), 2, 1);
	/* Shorter than its header. */
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, sizeof(*w) - 1, &r, &e, &g), -EBADMSG);
	/* Claims more bytes than the sample has. */
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size - 8, &r, &e, &g), -EBADMSG);
	/* Another record type. */
	w->type = 99;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size, &r, &e, &g), -EBADMSG);
	/* Counts that do not fit its own size. */
	make_rec(buf, sizeof(buf), 2, 1);
	w->num_engines = 3;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size, &r, &e, &g), -EBADMSG);
	make_rec(buf, sizeof(buf), 2, 1);
	w->num_regions = 2;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, size, &r, &e, &g), -EBADMSG);
	/* Counts beyond the format's limits, even with room. */
	size = make_rec(buf, sizeof(buf), DAC_EXIT_MAX_ENGINES, 0);
	w->num_engines = DAC_EXIT_MAX_ENGINES + 1;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, sizeof(buf), &r, &e, &g), -EBADMSG);
	make_rec(buf, sizeof(buf), 0, DAC_EXIT_MAX_REGIONS);
	w->num_regions = DAC_EXIT_MAX_REGIONS + 1;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, sizeof(buf), &r, &e, &g), -EBADMSG);
	/* Huge counts must not wrap the size computation. */
	make_rec(buf, sizeof(buf), 0, 0);
	w->num_engines = UINT32_MAX;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, sizeof(buf), &r, &e, &g), -EBADMSG);
	/* A size smaller than the header itself. */
	make_rec(buf, sizeof(buf), 0, 0);
	w->size = 8;
	DT_EXPECT_EQ(dac_bpf_decode_exit(buf, sizeof(buf), &r, &e, &g), -EBADMSG);
	DT_EXPECT_TRUE(r == NULL);	/* never set by a refused record */
}

/* ---- the name probe's fdinfo -------------------------------------------------- */

static int parse_text(const char *text, struct dac_probe_names *pn)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	DT_ASSERT_TRUE(f != NULL);
	err = dac_bpf_parse_probe(f, pn);
	fclose(f);
	return err;
}

DT_TEST(probe_names_in_order)
{
	static const char text[] =
		"pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1234\n"
		"drm-driver:\tsimgpu\n"
		"drm-client-id:\t17\n"
		"drm-engine-render:\t123 ns\n"
		"drm-engine-capacity-render:\t2\n"
		"drm-cycles-render:\t99\n"
		"drm-total-cycles-render:\t100\n"
		"drm-engine-copy:\t0 ns\n"
		"drm-engine-video:\t5 ns\n"
		"drm-engine-capacity-video:\t4\n"
		"drm-total-system:\t4 KiB\n"
		"drm-total-vram:\t0\n"
		"drm-shared-vram:\t0\n"
		"drm-resident-system:\t4 KiB\n";
	struct dac_probe_names pn;

	DT_ASSERT_EQ(parse_text(text, &pn), 0);
	DT_EXPECT_EQ(pn.client_id, (uint64_t)17);
	DT_ASSERT_EQ(pn.ne, (size_t)3);
	DT_EXPECT_STREQ(pn.eng[0], "render");
	DT_EXPECT_STREQ(pn.eng[1], "copy");
	DT_EXPECT_STREQ(pn.eng[2], "video");
	DT_EXPECT_EQ(pn.caps[0], (uint64_t)2);
	DT_EXPECT_EQ(pn.caps[1], (uint64_t)1);
	DT_EXPECT_EQ(pn.caps[2], (uint64_t)4);
	DT_ASSERT_EQ(pn.nr, (size_t)2);
	DT_EXPECT_STREQ(pn.reg[0], "system");
	DT_EXPECT_STREQ(pn.reg[1], "vram");
	dac_probe_names_free(&pn);
	DT_EXPECT_EQ(pn.ne, (size_t)0);
	DT_EXPECT_TRUE(pn.eng == NULL);
}

DT_TEST(probe_long_lines_and_names)
{
	/* A 2000-byte line must not be split into pseudo keys. */
	char *text = malloc(8192), *p = text;
	struct dac_probe_names pn;
	const char *n31 = "abcdefghijklmnopqrstuvwxyz01234";	/* 31 bytes */

	DT_ASSERT_TRUE(text != NULL);
	p += sprintf(p, "drm-client-id:\t5\n");
	/*
	 * A long line whose text at byte 511 reads like a key: a reader
	 * with a 512-byte line buffer would learn an engine "bogus".
	 */
	p += sprintf(p, "drm-driver:\t");
	while (p - text < (long)strlen("drm-client-id:\t5\n") + 511)
		*p++ = 'y';
	p += sprintf(p, "drm-engine-bogus:\t1 ns");
	for (int i = 0; i < 250; i++)
		p += sprintf(p, ":drm-engine-fake%d", i % 10);
	p += sprintf(p, "\ndrm-engine-%s:\t1 ns\n", n31);
	p += sprintf(p, "drm-engine-%s9:\t1 ns\n", n31);	/* 32 bytes: cut */
	p += sprintf(p, "drm-engine-capacity-%s9:\t8\n", n31);	/* no match after cut */
	sprintf(p, "drm-total-%s%s:\t1\n", n31, n31);
	DT_ASSERT_EQ(parse_text(text, &pn), 0);
	free(text);
	DT_EXPECT_EQ(pn.client_id, (uint64_t)5);
	DT_ASSERT_EQ(pn.ne, (size_t)2);
	DT_EXPECT_STREQ(pn.eng[0], n31);
	DT_EXPECT_STREQ(pn.eng[1], n31);
	DT_EXPECT_EQ(pn.caps[0], (uint64_t)1);
	DT_EXPECT_EQ(pn.caps[1], (uint64_t)1);
	DT_ASSERT_EQ(pn.nr, (size_t)1);
	DT_EXPECT_STREQ(pn.reg[0], n31);
	dac_probe_names_free(&pn);
}

DT_TEST(probe_bad_input)
{
	struct dac_probe_names pn;

	DT_EXPECT_EQ(parse_text("drm-client-id:\tseventeen\ndrm-engine-a:\t1 ns\n", &pn),
		     -EBADMSG);
	DT_EXPECT_EQ(pn.ne, (size_t)0);
	DT_EXPECT_TRUE(pn.eng == NULL);
	DT_EXPECT_EQ(parse_text("drm-client-id:\t0\n", &pn), -EBADMSG);
	DT_EXPECT_EQ(parse_text("drm-client-id:\t-3\n", &pn), -EBADMSG);
	DT_EXPECT_EQ(parse_text("drm-client-id:\t99999999999999999999999\n", &pn), -EBADMSG);
	DT_EXPECT_EQ(parse_text("drm-client-id:\t3\ndrm-engine-a:\t1 ns\n"
				"drm-engine-capacity-a:\tlots\n", &pn), -EBADMSG);
	DT_EXPECT_EQ(parse_text("drm-client-id:\t3\ndrm-engine-a:\t1 ns\n"
				"drm-engine-capacity-a:\t0\n", &pn), -EBADMSG);
	/* Empty names, lines without ':' and an empty file: nothing learned, no error. */
	DT_EXPECT_EQ(parse_text("drm-engine-:\t1 ns\ndrm-total-:\t4\nno colon here\n", &pn), 0);
	DT_EXPECT_EQ(pn.ne + pn.nr, (size_t)0);
	DT_EXPECT_EQ(pn.client_id, (uint64_t)0);
	dac_probe_names_free(&pn);
	DT_EXPECT_EQ(parse_text("", &pn), 0);
	DT_EXPECT_EQ(pn.ne, (size_t)0);
	dac_probe_names_free(&pn);
}

DT_MAIN
