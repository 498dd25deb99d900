// SPDX-License-Identifier: MIT
/*
 * The loader's parsers, without BPF: field offsets in tracefs format text,
 * and CLIENT_EXIT ring-buffer records (good and malformed), each on
 * hand-made input including bad input.
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

DT_MAIN
