// SPDX-License-Identifier: MIT
/*
 * fdinfo.c - DRM client usage stats (fdinfo) parser and validator: the
 * parse of one text and its result.
 *
 * A parse makes ONE allocation for the result (the text, room for the
 * key/value lines, engines, regions and findings), has the text there (the
 * /proc walker's reader reads it there), and runs the tokeniser (fdinfo_lex.c) and the spec's rules
 * (fdinfo_rules.c) over it line by line: each line is tokenised and judged
 * at once, its key/value written where it stays. Only a text with more of
 * something than its room has arrays on the heap too. Reading the text is
 * fdinfo_read.c's, the findings' messages fdinfo_msg.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fdinfo_priv.h"

/*
 * Copy @n bytes, eight at a time. Not memcpy(): after a read's system calls
 * each C library function called costs its code's cache misses again (see
 * fdinfo_lex.c).
 */
DAC_NO_LIBC static void copy8(char *dst, const char *src, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		__builtin_memcpy(&w, src + i, 8);
		__builtin_memcpy(dst + i, &w, 8);
	}
	for (; i < n; i++)
		dst[i] = src[i];
}

/*
 * The result's allocation holds, in this order: the text with its padding
 * (at the start, so that a text can be read into it), room for the
 * key/value lines (one per 16 bytes of text and 16 more: real texts have
 * longer lines), and at its end DAC_ROOM_VIEW engines and regions and
 * DAC_ROOM_FIND findings. An array that outgrows its room moves to the heap
 * on its own (dac_fdinfo_free() knows).
 */
#define FIXED_ROOM (DAC_ROOM_VIEW * (sizeof(struct dac_engine) + sizeof(struct dac_region)) + \
		    DAC_ROOM_FIND * sizeof(struct dac_finding))

_Static_assert(FIXED_ROOM % 8 == 0 && sizeof(struct dac_kv) % 8 == 0,
	       "the parts of the allocation stay aligned");

static size_t text_room(size_t len)
{
	return (len + DAC_TEXT_PAD + 7) & ~(size_t)7;
}

/*
 * The allocation of the result freed last by this thread, kept for the
 * next parse: a /proc walk parses, takes what it needs and frees, fdinfo
 * after fdinfo, and malloc() and free() cost as much after a read's system
 * calls as a line of text does. Only blocks up to this size are kept.
 */
#define SPARE_MAX (64 * 1024)

static _Thread_local struct {
	char *block;
	size_t size;
} spare;

DAC_HOT
char *dac__block_for(size_t len, size_t *size)
{
	size_t want, kv;
	char *b = spare.block;

	if (len > SIZE_MAX / 2 || __builtin_mul_overflow(len / 16 + 16, sizeof(struct dac_kv), &kv) ||
	    __builtin_add_overflow(text_room(len), kv, &want) ||
	    __builtin_add_overflow(want, FIXED_ROOM, &want))
		return NULL;
	if (b && spare.size >= want && !dac__fail_armed()) {
		spare.block = NULL;
		*size = spare.size;
		return b;
	}
	*size = want;
	return dac__malloc(want);
}

/*
 * The larger of @b and the spare stays. Keeping the first one put would
 * keep a small block from a parse of a short text in memory for good, and
 * every read after it -- which asks for room for DAC_TEXT_FIRST bytes --
 * would pay a malloc() and a free() (1.3 a file in bench_parse's reads
 * after its in-memory passes).
 */
DAC_HOT
void dac__block_put(char *b, size_t size)
{
	if (size <= SPARE_MAX && (!spare.block || spare.size < size)) {
		dac__spare_thread();
		free(spare.block);
		spare.block = b;
		spare.size = size;
		return;
	}
	free(b);
}

/* At the end of a thread (or the process), its spare block. */
void dac__spare_free(void)
{
	free(spare.block);
	spare.block = NULL;
}

DAC_HOT
int dac__parse_block(char *block, size_t size, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out)
{
	const size_t kv_off = text_room(len);
	char *fixed = block + size - FIXED_ROOM;
	struct dac_judged j;
	struct dac_lex lx;
	int err;

	dac__lex_start(&lx, block, len);
	dac__judge_init(&j, profile, (struct dac_kv *)(block + kv_off),
			(size - FIXED_ROOM - kv_off) / sizeof(struct dac_kv),
			(struct dac_engine *)fixed,
			(struct dac_region *)(fixed + DAC_ROOM_VIEW * sizeof(struct dac_engine)),
			(struct dac_finding *)(fixed + DAC_ROOM_VIEW * (sizeof(struct dac_engine) +
									sizeof(struct dac_region))));
	err = dac__judge_text(&j, &lx, block);
	if (!err)
		err = dac__judge_end(&j);
	dac__judge_free(&j, err != 0);
	if (err) {
		dac__block_put(block, size);
		*out = (struct dac_fdinfo){ .kv = NULL };
		return err;
	}
	block[len] = '\0';
	/*
	 * Field by field: an initialiser of the whole structure zeroes it
	 * first with `rep stos`, whose start costs more than these stores.
	 */
	out->profile = profile;
	out->kv = j.nkv ? j.kv : NULL;
	out->nkv = j.nkv;
	out->find = j.nfind ? j.find : NULL;
	out->nfind = j.nfind;
	out->nlines = lx.line;
	out->is_drm = lx.is_drm;
	out->driver = j.driver;
	out->pdev = j.pdev;
	out->client_name = j.client_name;
	out->client_id = j.client_id;
	out->has_client_id = j.has_client_id;
	out->engines = j.eng.n ? (struct dac_engine *)j.eng.arr : NULL;
	out->nengines = j.eng.n;
	out->regions = j.reg.n ? (struct dac_region *)j.reg.arr : NULL;
	out->nregions = j.reg.n;
	out->priv_text = block;
	out->priv_alloc = block;
	out->priv_size = size;
	/* the arrays that outgrew their room, freed with it */
	out->priv_heap[0] = j.kv != j.kv_in ? j.kv : NULL;
	out->priv_heap[1] = j.eng.arr != j.eng.arr_in ? j.eng.arr : NULL;
	out->priv_heap[2] = j.reg.arr != j.reg.arr_in ? j.reg.arr : NULL;
	out->priv_heap[3] = j.find != j.find_in ? j.find : NULL;
	return 0;
}

int dac__parse_text(const char *src, size_t len, enum dac_profile profile,
		    struct dac_fdinfo *out)
{
	size_t size;
	char *block = dac__block_for(len, &size);

	if (!block) {
		*out = (struct dac_fdinfo){ .kv = NULL };
		return -ENOMEM;
	}
	copy8(block, src, len);
	return dac__parse_block(block, size, len, profile, out);
}

DAC_HOT DAC_NO_LIBC
void dac_fdinfo_free(struct dac_fdinfo *fi)
{
	if (!fi)
		return;
	if (fi->priv_heap[0] || fi->priv_heap[1] || fi->priv_heap[2] || fi->priv_heap[3])
		for (size_t i = 0; i < sizeof(fi->priv_heap) / sizeof(fi->priv_heap[0]); i++)
			free(fi->priv_heap[i]);
	if (fi->priv_alloc)
		dac__block_put(fi->priv_alloc, fi->priv_size);
	dac__zero(fi, sizeof(*fi));
}

size_t dac_fdinfo_count(const struct dac_fdinfo *fi, enum dac_severity sev)
{
	size_t i, n = 0;

	if (!fi)
		return 0;
	for (i = 0; i < fi->nfind; i++)
		n += fi->find[i].sev == sev;
	return n;
}

size_t dac_fdinfo_errors(const struct dac_fdinfo *fi)
{
	return dac_fdinfo_count(fi, DAC_SEV_ERROR);
}

const struct dac_finding *dac_fdinfo_find_code(const struct dac_fdinfo *fi,
					       const char *code)
{
	size_t i;

	if (!fi || !code)
		return NULL;
	for (i = 0; i < fi->nfind; i++)
		if (!strcmp(fi->find[i].code, code))
			return &fi->find[i];
	return NULL;
}

const struct dac_engine *dac_fdinfo_engine(const struct dac_fdinfo *fi,
					   const char *name)
{
	size_t i;

	if (!fi || !name)
		return NULL;
	for (i = 0; i < fi->nengines; i++)
		if (!strcmp(fi->engines[i].name, name))
			return &fi->engines[i];
	return NULL;
}

const struct dac_region *dac_fdinfo_region(const struct dac_fdinfo *fi,
					   const char *name)
{
	size_t i;

	if (!fi || !name)
		return NULL;
	for (i = 0; i < fi->nregions; i++)
		if (!strcmp(fi->regions[i].name, name))
			return &fi->regions[i];
	return NULL;
}

const struct dac_kv *dac_fdinfo_get(const struct dac_fdinfo *fi, const char *key)
{
	size_t i;

	if (!fi || !key)
		return NULL;
	for (i = 0; i < fi->nkv; i++)
		if (!strcmp(fi->kv[i].key, key))
			return &fi->kv[i];
	return NULL;
}

enum dac_stats dac_fdinfo_stats(const struct dac_fdinfo *fi)
{
	if (!fi || !fi->is_drm)
		return DAC_STATS_NONE;
	return fi->nengines || fi->nregions ? DAC_STATS_FULL : DAC_STATS_CORE;
}

const char *dac_stats_name(enum dac_stats s)
{
	switch (s) {
	case DAC_STATS_NONE:
		return "none";
	case DAC_STATS_CORE:
		return "core";
	case DAC_STATS_FULL:
		return "full";
	}
	return "?";
}
