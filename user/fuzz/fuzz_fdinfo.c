// SPDX-License-Identifier: MIT
/*
 * fuzz_fdinfo.c - libFuzzer target for the fdinfo parser/validator.
 *
 * Parses the input under both profiles and checks invariants of the result
 * that must hold for any input; a violation aborts (and so is a crash the
 * fuzzer reports). ASan/UBSan catch out-of-bounds reads and UB.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdinfo.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c, \
				__FILE__, __LINE__);			\
			abort();					\
		}							\
	} while (0)

/* s lies inside the parser's copy of the text (len + 1 bytes). */
static void inside(const struct dac_fdinfo *fi, size_t len, const char *s)
{
	CHECK(s >= fi->priv_text && s <= fi->priv_text + len);
	CHECK(s + strlen(s) <= fi->priv_text + len);
}

static bool known_code(const char *code)
{
	size_t n, i;
	const char *const *codes = dac_finding_codes(&n);

	for (i = 0; i < n; i++)
		if (codes[i] == code)
			return true;
	return false;
}

static void check(const uint8_t *data, size_t size, enum dac_profile p)
{
	struct dac_fdinfo fi;
	size_t i, newlines = 0;

	CHECK(dac_fdinfo_parse((const char *)data, size, p, &fi) == 0);
	for (i = 0; i < size; i++)
		newlines += data[i] == '\n';
	/* Lines: one per '\n', plus an unterminated last one. */
	CHECK(fi.nlines == newlines + (size && data[size - 1] != '\n'));
	for (i = 0; i < fi.nkv; i++) {
		const struct dac_kv *kv = &fi.kv[i];

		CHECK(kv->line >= 1 && kv->line <= fi.nlines);
		CHECK(i == 0 || fi.kv[i - 1].line < kv->line);
		CHECK((unsigned int)kv->type < DAC_KEY__COUNT);
		inside(&fi, size, kv->key);
		inside(&fi, size, kv->str);
		if (kv->name) {
			inside(&fi, size, kv->name);
			CHECK(*kv->name);
			CHECK(!strcmp(kv->key + strlen(kv->key) - strlen(kv->name),
				      kv->name));
		}
		if (kv->unit)
			inside(&fi, size, kv->unit);
		if (kv->type == DAC_KEY_DRIVER || kv->type == DAC_KEY_PDEV ||
		    kv->type == DAC_KEY_OTHER || kv->type == DAC_KEY_INVALID)
			CHECK(!kv->has_value);
		if (p == DAC_PROFILE_2022)
			CHECK(kv->type != DAC_KEY_MEM_TOTAL &&
			      kv->type != DAC_KEY_TOTAL_CYCLES &&
			      kv->type != DAC_KEY_CLIENT_NAME);
	}
	for (i = 0; i < fi.nfind; i++) {
		const struct dac_finding *f = &fi.find[i];

		CHECK(known_code(f->code));
		CHECK(f->line <= fi.nlines);
		CHECK(i == 0 || fi.find[i - 1].line <= f->line);
		CHECK((unsigned int)f->sev <= DAC_SEV_ERROR);
		{
			char msg[DAC_FINDING_MSG_MAX];

			/* the message fits the documented room: quoted text is cut */
			dac_finding_message(f, msg, sizeof(msg));
			CHECK(strlen(msg) < sizeof(msg) - 1);
			if (f->priv_str[0])
				inside(&fi, size, f->priv_str[0]);
			if (f->priv_str[1])
				inside(&fi, size, f->priv_str[1]);
		}
	}
	for (i = 0; i < fi.nengines; i++) {
		const struct dac_engine *e = &fi.engines[i];

		inside(&fi, size, e->name);
		CHECK(dac_fdinfo_engine(&fi, e->name) == e);	/* unique */
		CHECK(e->capacity >= 1);
		CHECK(!e->has_maxfreq || e->maxfreq_hz > 0);
	}
	for (i = 0; i < fi.nregions; i++) {
		const struct dac_region *r = &fi.regions[i];

		inside(&fi, size, r->name);
		CHECK(dac_fdinfo_region(&fi, r->name) == r);
		CHECK(!r->resident_from_legacy ||
		      (r->has_memory && r->resident == r->memory));
	}
	if (fi.driver)
		inside(&fi, size, fi.driver);
	CHECK(dac_fdinfo_errors(&fi) + dac_fdinfo_count(&fi, DAC_SEV_WARNING) +
	      dac_fdinfo_count(&fi, DAC_SEV_NOTE) == fi.nfind);
	dac_fdinfo_free(&fi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size, DAC_PROFILE_CURRENT);
	check(data, size, DAC_PROFILE_2022);
	return 0;
}
