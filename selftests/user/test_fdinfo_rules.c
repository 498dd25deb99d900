// SPDX-License-Identifier: GPL-2.0
/*
 * test_fdinfo_rules.c - one hand-made input per validation rule, with the
 * exact findings (line:severity:code) and, where it matters, the values the
 * parser must (or must not) report. Every finding code the library can emit
 * must be exercised by at least one case here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtest.h"
#include "fdinfo.h"
#include "fdinfo_testutil.h"

#define CUR DAC_PROFILE_CURRENT
#define OLD DAC_PROFILE_2022

/* Lines 1-2 of most inputs, so no file-level findings get in the way. */
#define HDR "drm-driver: simgpu\ndrm-client-id: 1\n"

struct rule_case {
	const char *name;
	enum dac_profile profile;
	const char *text;
	const char *want;
	size_t len;		/* 0: strlen(text) */
};

#define NUL_TEXT HDR "drm-engine-a: 5\0 ns\n"

static const struct rule_case cases[] = {
	/* --- clean inputs ------------------------------------------------ */
	{ "minimal", CUR, HDR, "", 0 },
	{ "minimal-2022", OLD, HDR, "", 0 },
	{ "any-whitespace-after-colon", CUR,
	  HDR "drm-engine-a:5 ns\ndrm-engine-b:\t \t7 ns\ndrm-engine-c:      9 ns\n", "", 0 },
	{ "no-final-newline", CUR, HDR "drm-engine-a: 5 ns", "", 0 },
	{ "units-all-standard", CUR,
	  HDR "drm-engine-e: 1 ns\ndrm-cycles-e: 2\ndrm-maxfreq-e: 3 KHz\n"
	  "drm-total-r: 4 MiB\ndrm-resident-r: 5 KiB\ndrm-active-r: 6\n", "", 0 },
	{ "non-drm-lines-ignored", CUR,
	  "pos:\t0\nflags:\t02\nmnt_id:\t3\nino:\t4\nsome text without colon\n"
	  "\n   \n" HDR, "", 0 },
	{ "driver-prefix-match", CUR,
	  "drm-driver: amdgpu\ndrm-client-id: 1\namd-evicted-vram: 0 KiB\n"
	  "amdgpu-thing: 3\n", "", 0 },
	{ "pdev-pci", CUR, HDR "drm-pdev: 0000:0a:1f.7\n", "", 0 },
	{ "pdev-pci-5-digit-domain", CUR, HDR "drm-pdev: 10000:e1:00.0\n", "", 0 },
	{ "xe-cycles-only-capacity-ok", CUR,
	  HDR "drm-cycles-vcs: 0\ndrm-total-cycles-vcs: 7655183225\n"
	  "drm-engine-capacity-vcs: 2\n", "3:n:cycles-orphan", 0 },
	{ "client-name-with-space-current", CUR,
	  HDR "drm-client-name: my app\n", "", 0 },
	{ "driver-with-space-current", CUR,
	  "drm-driver: my drv\ndrm-client-id: 1\n", "", 0 },
	{ "engine-capacity-before-engine", CUR,
	  HDR "drm-engine-capacity-video: 2\ndrm-engine-video: 0 ns\n", "", 0 },

	/* --- file-level -------------------------------------------------- */
	{ "driver-missing", CUR, "drm-client-id: 1\ndrm-engine-a: 1 ns\n",
	  "0:e:driver-missing", 0 },
	{ "empty-input", CUR, "", "0:e:driver-missing 0:n:client-id-missing", 0 },
	{ "client-id-missing", CUR, "drm-driver: x\n", "0:n:client-id-missing", 0 },

	/* --- line syntax ------------------------------------------------- */
	{ "no-colon", CUR, HDR "drm-engine-a 5 ns\n", "3:e:no-colon", 0 },
	{ "key-empty", CUR, HDR ": 5\n", "3:e:key-empty", 0 },
	{ "key-whitespace-inside", CUR, HDR "drm-engine-a b: 5 ns\n",
	  "3:e:key-whitespace", 0 },
	{ "key-whitespace-leading", CUR, " drm-driver: x\ndrm-client-id: 1\n",
	  "1:e:key-whitespace 0:e:driver-missing", 0 },
	{ "key-whitespace-before-colon", CUR, HDR "drm-engine-a : 5 ns\n",
	  "3:e:key-whitespace", 0 },
	{ "trailing-whitespace", CUR, HDR "drm-engine-a: 5 ns \t\n",
	  "3:n:trailing-whitespace", 0 },
	{ "crlf", CUR, "drm-driver: x\r\ndrm-client-id: 1\r\n",
	  "1:n:trailing-whitespace 2:n:trailing-whitespace", 0 },
	{ "duplicate-key", CUR, HDR "drm-engine-a: 1 ns\ndrm-engine-a: 2 ns\n",
	  "4:e:duplicate-key", 0 },
	{ "duplicate-driver", CUR, HDR "drm-driver: other\n", "3:e:duplicate-key", 0 },
	{ "name-empty-engine", CUR, HDR "drm-engine-: 5 ns\n", "3:e:name-empty", 0 },
	{ "name-empty-region", CUR, HDR "drm-total-: 5\n", "3:e:name-empty", 0 },

	{ "nul-byte", CUR, NUL_TEXT, "3:e:nul-byte", sizeof(NUL_TEXT) - 1 },

	/* --- key classes ------------------------------------------------- */
	{ "unknown-drm-key", CUR, HDR "drm-curfreq-gpu: 5 Hz\n",
	  "3:w:unknown-drm-key", 0 },
	{ "unknown-drm-key-no-name", CUR, HDR "drm-engine: 5 ns\n",
	  "3:w:unknown-drm-key", 0 },
	{ "client-name-2022-unknown", OLD, HDR "drm-client-name: app\n",
	  "3:w:unknown-drm-key", 0 },
	{ "total-cycles-2022-unknown", OLD,
	  HDR "drm-engine-a: 1 ns\ndrm-cycles-a: 1\ndrm-total-cycles-a: 9\n",
	  "5:w:unknown-drm-key", 0 },
	{ "memory-keys-2022-unknown", OLD,
	  HDR "drm-total-a: 1\ndrm-shared-a: 1\ndrm-resident-a: 1\n"
	  "drm-purgeable-a: 1\ndrm-active-a: 1\n",
	  "3:w:unknown-drm-key 4:w:unknown-drm-key 5:w:unknown-drm-key "
	  "6:w:unknown-drm-key 7:w:unknown-drm-key", 0 },
	{ "driver-prefix-mismatch", CUR,
	  "drm-driver: amdgpu\ndrm-client-id: 1\nxyz-foo: 1\n",
	  "3:n:driver-prefix-mismatch", 0 },
	{ "driver-prefix-mismatch-2022-silent", OLD,
	  "drm-driver: amdgpu\ndrm-client-id: 1\nxyz-foo: 1\n", "", 0 },

	/* --- values ------------------------------------------------------ */
	{ "value-empty-number", CUR, HDR "drm-engine-a:\n", "3:e:value-empty", 0 },
	{ "value-empty-blank", CUR, HDR "drm-engine-a:   \n", "3:e:value-empty", 0 },
	{ "value-empty-string", CUR, "drm-driver:\ndrm-client-id: 1\n",
	  "1:e:value-empty", 0 },
	{ "value-invalid-negative", CUR, HDR "drm-engine-a: -5 ns\n",
	  "3:e:value-invalid", 0 },
	{ "value-invalid-plus", CUR, HDR "drm-client-id: +5\n",
	  "3:e:value-invalid 3:e:duplicate-key", 0 },
	{ "value-invalid-fraction", CUR, HDR "drm-engine-a: 5.5 ns\n",
	  "3:e:value-invalid", 0 },
	{ "value-invalid-hex", CUR, HDR "drm-cycles-a: 0x10\ndrm-engine-a: 1 ns\n",
	  "3:e:value-invalid", 0 },
	{ "value-invalid-two-numbers", CUR, HDR "drm-cycles-a: 5 6\ndrm-engine-a: 1 ns\n",
	  "3:e:value-invalid", 0 },
	{ "value-invalid-word", CUR, HDR "drm-engine-capacity-a: two\ndrm-engine-a: 1 ns\n",
	  "3:e:value-invalid", 0 },
	{ "value-range-digits", CUR,
	  HDR "drm-engine-a: 18446744073709551616 ns\n", "3:e:value-range", 0 },
	{ "value-range-unit", CUR,
	  HDR "drm-total-a: 18014398509481984 MiB\n", "3:e:value-range", 0 },
	{ "value-u64-max-ok", CUR,
	  HDR "drm-engine-a: 18446744073709551615 ns\n", "", 0 },
	{ "value-whitespace-2022-driver", OLD, "drm-driver: my drv\ndrm-client-id: 1\n",
	  "1:e:value-whitespace", 0 },
	{ "pdev-format-short", CUR, HDR "drm-pdev: 0000:00:02\n", "3:w:pdev-format", 0 },
	{ "pdev-format-spec-typo", CUR, HDR "drm-pdev: 0000:00.02.0\n",
	  "3:w:pdev-format", 0 },
	{ "pdev-format-function", CUR, HDR "drm-pdev: 0000:00:02.8\n",
	  "3:w:pdev-format", 0 },

	/* --- units ------------------------------------------------------- */
	{ "unit-missing-engine", CUR, HDR "drm-engine-a: 5\n", "3:w:unit-missing", 0 },
	{ "unit-missing-maxfreq", CUR,
	  HDR "drm-engine-a: 5 ns\ndrm-cycles-a: 1\ndrm-maxfreq-a: 100\n",
	  "5:n:unit-missing", 0 },
	{ "unit-invalid-engine", CUR, HDR "drm-engine-a: 5 us\n", "3:e:unit-invalid", 0 },
	{ "unit-invalid-memory", CUR, HDR "drm-total-a: 5 KB\n", "3:e:unit-invalid", 0 },
	{ "unit-invalid-wrong-kind", CUR,
	  HDR "drm-engine-a: 5 ns\ndrm-cycles-a: 1\ndrm-maxfreq-a: 5 KiB\n",
	  "5:e:unit-invalid", 0 },
	{ "unit-invalid-legacy-memory", CUR, HDR "drm-memory-a: 5 MB\n",
	  "3:e:unit-invalid 3:n:memory-deprecated", 0 },
	{ "unit-unexpected-cycles", CUR, HDR "drm-engine-a: 5 ns\ndrm-cycles-a: 5 ns\n",
	  "4:e:unit-unexpected", 0 },
	{ "unit-unexpected-capacity", CUR,
	  HDR "drm-engine-a: 5 ns\ndrm-engine-capacity-a: 2 engines\n",
	  "4:e:unit-unexpected", 0 },
	{ "unit-unexpected-client-id", CUR, "drm-driver: x\ndrm-client-id: 5 ns\n",
	  "2:e:unit-unexpected", 0 },
	/* Units outside the spec's list are errors in both profiles. */
	{ "unit-nonstandard-gib", CUR, HDR "drm-total-a: 1 GiB\n",
	  "3:e:unit-nonstandard", 0 },
	{ "unit-nonstandard-gib-2022", OLD, HDR "drm-memory-a: 1 GiB\n",
	  "3:e:unit-nonstandard", 0 },
	{ "unit-nonstandard-khz", CUR,
	  HDR "drm-engine-a: 5 ns\ndrm-cycles-a: 1\ndrm-maxfreq-a: 2 kHz\n",
	  "5:e:unit-nonstandard", 0 },
	{ "unit-nonstandard-ghz-2022", OLD,
	  HDR "drm-engine-a: 5 ns\ndrm-cycles-a: 1\ndrm-maxfreq-a: 2 GHz\n",
	  "5:e:unit-nonstandard", 0 },
	{ "unit-nonstandard-nospace", CUR, HDR "drm-resident-a: 3GiB\n",
	  "3:n:unit-spacing 3:e:unit-nonstandard", 0 },
	{ "unit-spacing", CUR, HDR "drm-engine-a: 5ns\n", "3:n:unit-spacing", 0 },

	/* --- engines ----------------------------------------------------- */
	{ "capacity-zero", CUR, HDR "drm-engine-a: 5 ns\ndrm-engine-capacity-a: 0\n",
	  "4:e:capacity-zero", 0 },
	{ "maxfreq-zero", CUR,
	  HDR "drm-engine-a: 5 ns\ndrm-cycles-a: 1\ndrm-maxfreq-a: 0 Hz\n",
	  "5:e:maxfreq-zero", 0 },
	{ "capacity-orphan", CUR, HDR "drm-engine-capacity-a: 2\n",
	  "3:e:capacity-orphan", 0 },
	{ "capacity-orphan-2022-cycles-only", OLD,
	  HDR "drm-cycles-a: 1\ndrm-engine-capacity-a: 2\n",
	  "3:e:cycles-orphan 4:e:capacity-orphan", 0 },
	{ "cycles-orphan-current-note", CUR, HDR "drm-cycles-a: 1\n",
	  "3:n:cycles-orphan", 0 },
	{ "cycles-orphan-2022-error", OLD, HDR "drm-cycles-a: 1\n",
	  "3:e:cycles-orphan", 0 },
	{ "maxfreq-orphan", CUR, HDR "drm-maxfreq-a: 1 Hz\n", "3:e:maxfreq-orphan", 0 },
	{ "maxfreq-with-cycles-only-current", CUR,
	  HDR "drm-cycles-a: 1\ndrm-maxfreq-a: 1 Hz\n", "3:n:cycles-orphan", 0 },
	{ "maxfreq-orphan-2022-cycles-only", OLD,
	  HDR "drm-cycles-a: 1\ndrm-maxfreq-a: 1 Hz\n",
	  "3:e:cycles-orphan 4:e:maxfreq-orphan", 0 },
	{ "total-cycles-orphan", CUR, HDR "drm-engine-a: 1 ns\ndrm-total-cycles-a: 1\n",
	  "4:e:total-cycles-orphan", 0 },
	{ "maxfreq-and-total-cycles", CUR,
	  HDR "drm-engine-a: 1 ns\ndrm-cycles-a: 1\ndrm-maxfreq-a: 1 Hz\n"
	  "drm-total-cycles-a: 5\n",
	  "6:e:maxfreq-and-total-cycles", 0 },
	{ "maxfreq-and-total-cycles-order", CUR,
	  HDR "drm-total-cycles-a: 5\ndrm-cycles-a: 1\ndrm-engine-a: 1 ns\n"
	  "drm-maxfreq-a: 1 Hz\n",
	  "6:e:maxfreq-and-total-cycles", 0 },

	/* --- memory ------------------------------------------------------ */
	{ "memory-deprecated", CUR, HDR "drm-memory-vram: 4 KiB\n",
	  "3:n:memory-deprecated", 0 },
	{ "memory-2022-fine", OLD, HDR "drm-memory-vram: 4 KiB\n", "", 0 },
	{ "memory-legacy-duplicate", CUR,
	  HDR "drm-resident-vram: 4096\ndrm-memory-vram: 4 KiB\n",
	  "4:n:memory-legacy-duplicate", 0 },
	{ "memory-legacy-duplicate-first", CUR,
	  HDR "drm-memory-vram: 4 KiB\ndrm-resident-vram: 4096\n",
	  "3:n:memory-legacy-duplicate", 0 },
	{ "memory-resident-mismatch", CUR,
	  HDR "drm-memory-vram: 8 KiB\ndrm-resident-vram: 4 KiB\n",
	  "3:w:memory-resident-mismatch", 0 },
	{ "memory-subset-shared", CUR,
	  HDR "drm-total-r: 1 KiB\ndrm-shared-r: 2 KiB\n", "4:w:memory-subset", 0 },
	{ "memory-subset-resident", CUR,
	  HDR "drm-resident-r: 2 KiB\ndrm-total-r: 1 KiB\n", "3:w:memory-subset", 0 },
	{ "memory-subset-purgeable", CUR,
	  HDR "drm-resident-r: 1 KiB\ndrm-purgeable-r: 2 KiB\n", "4:w:memory-subset", 0 },
	{ "memory-subset-active", CUR,
	  HDR "drm-resident-r: 1 KiB\ndrm-active-r: 1025\n", "4:w:memory-subset", 0 },
	{ "memory-subset-equal-ok", CUR,
	  HDR "drm-total-r: 1 KiB\ndrm-shared-r: 1024\ndrm-resident-r: 1024\n"
	  "drm-purgeable-r: 1024\ndrm-active-r: 1 KiB\n", "", 0 },
};

static bool run_case(const struct rule_case *c)
{
	struct dac_fdinfo fi;
	bool ok;
	int rc;

	rc = dac_fdinfo_parse(c->text, c->len ? c->len : strlen(c->text),
			      c->profile, &fi);
	if (rc) {
		dt_info("case %s: parse returned %d", c->name, rc);
		return false;
	}
	ok = fdinfo_tu_findings(&fi, c->want);
	if (!ok)
		dt_info("case %s (%s) failed", c->name, dac_profile_name(c->profile));
	dac_fdinfo_free(&fi);
	return ok;
}

DT_TEST(rule_cases)
{
	size_t i, failed = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		failed += !run_case(&cases[i]);
	DT_EXPECT_EQ(failed, (size_t)0);
}

/* Every code the library can emit has at least one case above. */
DT_TEST(every_code_has_a_case)
{
	size_t n, i, j;
	const char *const *codes = dac_finding_codes(&n);
	char pat[64];

	DT_ASSERT_GT(n, (size_t)20);
	for (i = 0; i < n; i++) {
		bool found = false;

		snprintf(pat, sizeof(pat), ":%s", codes[i]);
		for (j = 0; j < sizeof(cases) / sizeof(cases[0]) && !found; j++) {
			const char *w = strstr(cases[j].want, pat);

			found = w && (w[strlen(pat)] == ' ' || !w[strlen(pat)]);
		}
		if (!found)
			DT_FAIL("finding code %s has no test case", codes[i]);
	}
}

/* ---- values behind the rules ------------------------------------------- */

DT_TEST(longest_prefix_capacity)
{
	struct dac_fdinfo fi;
	const struct dac_engine *e;

	fdinfo_tu_parse(HDR "drm-engine-capacity-rcs: 4\ndrm-engine-rcs: 10 ns\n",
			CUR, &fi);
	DT_ASSERT_EQ(fi.nengines, (size_t)1);
	e = dac_fdinfo_engine(&fi, "rcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_TRUE(e->has_capacity);
	DT_EXPECT_EQ(e->capacity, 4u);
	DT_EXPECT_EQ(e->busy_ns, 10u);
	DT_EXPECT_EQ(e->line, 3u);
	DT_EXPECT_EQ((int)fi.kv[2].type, (int)DAC_KEY_ENGINE_CAPACITY);
	DT_EXPECT_STREQ(fi.kv[2].name, "rcs");
	dac_fdinfo_free(&fi);
}

DT_TEST(longest_prefix_total_cycles)
{
	struct dac_fdinfo fi;
	const char *text = HDR "drm-cycles-ccs: 7\ndrm-total-cycles-ccs: 99\n";

	fdinfo_tu_parse(text, CUR, &fi);
	DT_EXPECT_EQ(fi.nregions, (size_t)0);
	DT_ASSERT_EQ(fi.nengines, (size_t)1);
	DT_EXPECT_TRUE(fi.engines[0].has_total_cycles);
	DT_EXPECT_EQ(fi.engines[0].total_cycles, 99u);
	DT_EXPECT_EQ(fi.engines[0].cycles, 7u);
	DT_EXPECT_STREQ(fi.kv[3].name, "ccs");
	DT_EXPECT_EQ((int)fi.kv[3].type, (int)DAC_KEY_TOTAL_CYCLES);
	dac_fdinfo_free(&fi);

	/* 2022 knows neither drm-total-cycles- nor drm-total-. */
	fdinfo_tu_parse(text, OLD, &fi);
	DT_EXPECT_EQ(fi.nregions, (size_t)0);
	DT_ASSERT_EQ(fi.nengines, (size_t)1);
	DT_EXPECT_FALSE(fi.engines[0].has_total_cycles);
	DT_EXPECT_EQ((int)fi.kv[3].type, (int)DAC_KEY_UNKNOWN_DRM);
	DT_EXPECT_TRUE(fi.kv[3].name == NULL);
	dac_fdinfo_free(&fi);
}

DT_TEST(unit_conversion)
{
	struct dac_fdinfo fi;
	const struct dac_region *r;

	fdinfo_tu_parse(HDR "drm-engine-e: 1 ns\ndrm-cycles-e: 2\n"
			"drm-maxfreq-e: 3 MHz\ndrm-total-r: 4 MiB\n"
			"drm-resident-r: 5 KiB\ndrm-active-r: 6\n"
			"drm-engine-f: 9 ns\ndrm-cycles-f: 1\ndrm-maxfreq-f: 7 KHz\n"
			"drm-engine-g: 9 ns\ndrm-cycles-g: 1\ndrm-maxfreq-g: 8 Hz\n"
			"drm-engine-h: 1 ns\ndrm-cycles-h: 1\n"
			"drm-maxfreq-h: 2000 MHz\n", CUR, &fi);
	DT_EXPECT_EQ(dac_fdinfo_engine(&fi, "e")->maxfreq_hz, 3000000u);
	DT_EXPECT_EQ(dac_fdinfo_engine(&fi, "f")->maxfreq_hz, 7000u);
	DT_EXPECT_EQ(dac_fdinfo_engine(&fi, "g")->maxfreq_hz, 8u);
	DT_EXPECT_EQ(dac_fdinfo_engine(&fi, "h")->maxfreq_hz, 2000000000u);
	r = dac_fdinfo_region(&fi, "r");
	DT_ASSERT_TRUE(r != NULL);
	DT_EXPECT_EQ(r->total, 4u * 1024 * 1024);
	DT_EXPECT_EQ(r->resident, 5u * 1024);
	DT_EXPECT_EQ(r->active, 6u);
	DT_EXPECT_FALSE(r->has_shared);
	DT_EXPECT_EQ(dac_fdinfo_count(&fi, DAC_SEV_WARNING), (size_t)0);
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)0);
	dac_fdinfo_free(&fi);
}

DT_TEST(rejected_values_not_used)
{
	struct dac_fdinfo fi;
	const struct dac_engine *e;

	fdinfo_tu_parse(HDR "drm-engine-a: 5 us\ndrm-engine-capacity-a: 0\n"
			"drm-cycles-a: 3 ns\ndrm-maxfreq-a: 0 Hz\n", CUR, &fi);
	e = dac_fdinfo_engine(&fi, "a");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_FALSE(e->has_busy);
	DT_EXPECT_FALSE(e->has_capacity);
	DT_EXPECT_EQ(e->capacity, 1u);	/* spec default */
	DT_EXPECT_FALSE(e->has_cycles);
	DT_EXPECT_FALSE(e->has_maxfreq);
	DT_EXPECT_FALSE(fi.kv[2].has_value);
	DT_EXPECT_STREQ(fi.kv[2].str, "5 us");	/* raw text kept */
	DT_EXPECT_STREQ(fi.kv[2].unit, "us");
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)4);
	dac_fdinfo_free(&fi);

	/* A missing ns is only a warning: the value is still used. */
	fdinfo_tu_parse(HDR "drm-engine-a: 5\n", CUR, &fi);
	DT_EXPECT_TRUE(fi.engines[0].has_busy);
	DT_EXPECT_EQ(fi.engines[0].busy_ns, 5u);
	DT_EXPECT_TRUE(fi.kv[2].unit == NULL);
	dac_fdinfo_free(&fi);
}

/*
 * GiB, GHz, kHz: errors under both profiles, the value is not used, and the
 * message says what the driver probably meant in a unit of the spec.
 */
DT_TEST(nonstandard_units_rejected_with_hint)
{
	static const struct {
		enum dac_profile profile;
		const char *line, *key, *hint;
	} c[] = {
		{ CUR, "drm-total-r: 2 GiB\n", "drm-total-r", "(probably meant '2048 MiB')" },
		{ OLD, "drm-memory-r: 1 GiB\n", "drm-memory-r", "(probably meant '1024 MiB')" },
		{ CUR, "drm-maxfreq-e: 2 GHz\n", "drm-maxfreq-e", "(probably meant '2000 MHz')" },
		{ OLD, "drm-maxfreq-e: 1500 kHz\n", "drm-maxfreq-e", "(probably meant '1500 KHz')" },
		{ CUR, "drm-maxfreq-e: 1 kHz\n", "drm-maxfreq-e", "(probably meant '1 KHz')" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char text[256];
		struct dac_fdinfo fi;
		const struct dac_finding *f;
		const struct dac_kv *kv;

		snprintf(text, sizeof(text),
			 HDR "drm-engine-e: 5 ns\ndrm-cycles-e: 1\n%s", c[i].line);
		fdinfo_tu_parse(text, c[i].profile, &fi);
		f = dac_fdinfo_find_code(&fi, "unit-nonstandard");
		DT_ASSERT_TRUE(f != NULL);
		DT_EXPECT_EQ((int)f->sev, (int)DAC_SEV_ERROR);
		DT_EXPECT_EQ(f->line, 5u);
		DT_EXPECT_TRUE(strstr(fdinfo_tu_msg(f), c[i].hint) != NULL);
		if (!strstr(fdinfo_tu_msg(f), c[i].hint))
			dt_info("case %zu: message '%s'", i, fdinfo_tu_msg(f));
		DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)1);
		kv = dac_fdinfo_get(&fi, c[i].key);
		DT_ASSERT_TRUE(kv != NULL);
		DT_EXPECT_FALSE(kv->has_value);
		DT_EXPECT_TRUE(kv->unit != NULL);	/* as printed, for callers */
		if (fi.nregions)
			DT_EXPECT_FALSE(fi.regions[0].has_resident ||
					fi.regions[0].has_total);
		else
			DT_EXPECT_FALSE(dac_fdinfo_engine(&fi, "e")->has_maxfreq);
		dac_fdinfo_free(&fi);
	}
}

/* An alias that differs: a warning, and drm-resident- is the value used. */
DT_TEST(legacy_memory_mismatch_uses_resident)
{
	struct dac_fdinfo fi;
	const struct dac_region *r;

	fdinfo_tu_parse(HDR "drm-memory-vram: 8 KiB\ndrm-resident-vram: 4 KiB\n",
			CUR, &fi);
	r = dac_fdinfo_region(&fi, "vram");
	DT_ASSERT_TRUE(r != NULL);
	DT_EXPECT_EQ(r->resident, 4096u);
	DT_EXPECT_EQ(r->memory, 8192u);
	DT_EXPECT_FALSE(r->resident_from_legacy);
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)0);
	DT_EXPECT_EQ(dac_fdinfo_count(&fi, DAC_SEV_WARNING), (size_t)1);
	dac_fdinfo_free(&fi);
}

/* xe prints cycles, total-cycles and capacity per engine, no drm-engine-. */
DT_TEST(cycles_only_engine_values)
{
	struct dac_fdinfo fi;
	const struct dac_engine *e;

	fdinfo_tu_parse(HDR "drm-cycles-vcs: 0\ndrm-total-cycles-vcs: 7655183225\n"
			"drm-engine-capacity-vcs: 2\ndrm-cycles-rcs: 28257900\n"
			"drm-total-cycles-rcs: 7655183225\n", CUR, &fi);
	DT_ASSERT_EQ(fi.nengines, (size_t)2);
	e = dac_fdinfo_engine(&fi, "vcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_FALSE(e->has_busy);
	DT_EXPECT_TRUE(e->has_capacity);
	DT_EXPECT_EQ(e->capacity, 2u);
	DT_EXPECT_EQ(e->total_cycles, 7655183225ull);
	e = dac_fdinfo_engine(&fi, "rcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_EQ(e->cycles, 28257900u);
	DT_EXPECT_EQ(e->capacity, 1u);
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)0);
	dac_fdinfo_free(&fi);
}

DT_TEST(duplicate_first_wins)
{
	struct dac_fdinfo fi;
	const struct dac_finding *f;

	fdinfo_tu_parse("drm-driver: one\ndrm-driver: two\ndrm-client-id: 1\n"
			"drm-engine-a: 1 ns\ndrm-engine-a: 2 ns\n", CUR, &fi);
	DT_EXPECT_STREQ(fi.driver, "one");
	DT_EXPECT_EQ(fi.engines[0].busy_ns, 1u);
	DT_EXPECT_EQ(fi.nkv, (size_t)5);	/* nothing dropped */
	DT_EXPECT_STREQ(fi.kv[4].str, "2 ns");
	f = dac_fdinfo_find_code(&fi, "duplicate-key");
	DT_ASSERT_TRUE(f != NULL);
	DT_EXPECT_EQ(f->line, 2u);
	DT_EXPECT_TRUE(strstr(fdinfo_tu_msg(f), "line 1") != NULL);
	dac_fdinfo_free(&fi);
}

DT_TEST(invalid_key_kept_but_unused)
{
	struct dac_fdinfo fi;

	fdinfo_tu_parse(HDR "drm-engine-a b: 5 ns\n", CUR, &fi);
	DT_EXPECT_EQ(fi.nengines, (size_t)0);
	DT_ASSERT_EQ(fi.nkv, (size_t)3);
	DT_EXPECT_EQ((int)fi.kv[2].type, (int)DAC_KEY_INVALID);
	DT_EXPECT_STREQ(fi.kv[2].key, "drm-engine-a b");
	DT_EXPECT_STREQ(fi.kv[2].str, "5 ns");
	dac_fdinfo_free(&fi);
}

DT_TEST(strings_and_identity)
{
	struct dac_fdinfo fi;

	fdinfo_tu_parse("drm-driver:\tsimgpu\ndrm-pdev: 0000:00:02.0\n"
			"drm-client-id: 18446744073709551615\n"
			"drm-client-name: my app\n", CUR, &fi);
	DT_EXPECT_STREQ(fi.driver, "simgpu");
	DT_EXPECT_STREQ(fi.pdev, "0000:00:02.0");
	DT_EXPECT_TRUE(fi.has_client_id);
	DT_EXPECT_EQ(fi.client_id, UINT64_MAX);
	DT_EXPECT_STREQ(fi.client_name, "my app");
	DT_EXPECT_FALSE(fi.kv[0].has_value);	/* string key */
	dac_fdinfo_free(&fi);

	/* 2022: whitespace in a value is an error, the driver is not taken. */
	fdinfo_tu_parse("drm-driver: my drv\ndrm-client-id: 1\n", OLD, &fi);
	DT_EXPECT_TRUE(fi.driver == NULL);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "driver-missing") == NULL);
	dac_fdinfo_free(&fi);
}

DT_TEST(nul_byte_line)
{
	static const char text[] = "drm-driver: x\ndrm-client-id: 1\n"
				   "drm-engine-a: 5\0 ns\ndrm-engine-b: 6 ns\n";
	struct dac_fdinfo fi;

	DT_ASSERT_EQ(dac_fdinfo_parse(text, sizeof(text) - 1, CUR, &fi), 0);
	FDINFO_EXPECT_FINDINGS(&fi, "3:e:nul-byte");
	DT_EXPECT_EQ(fi.nlines, 4u);
	DT_EXPECT_TRUE(dac_fdinfo_engine(&fi, "a") == NULL);
	DT_ASSERT_TRUE(dac_fdinfo_engine(&fi, "b") != NULL);
	DT_EXPECT_EQ(dac_fdinfo_engine(&fi, "b")->busy_ns, 6u);
	DT_EXPECT_EQ(dac_fdinfo_engine(&fi, "b")->line, 4u);
	dac_fdinfo_free(&fi);
}

/*
 * Whitespace in a key is found eight bytes at a time: each whitespace byte
 * at every position of keys of every length up to 40 (the word and the
 * tail) is an error, and bytes below 0x21 that are not whitespace (a
 * control character) or above 0x7f (UTF-8) are not.
 */
DT_TEST(key_whitespace_at_every_position)
{
	static const char ws[] = " \t\v\f\r", other[] = "\x01\x1f\xc3\xa9";
	struct dac_fdinfo fi;
	char text[128], key[48];

	for (size_t len = 1; len <= 40; len++) {
		for (size_t pos = 0; pos < len; pos++) {
			for (size_t k = 0; k < sizeof(ws) - 1 + sizeof(other) - 1; k++) {
				bool is_ws = k < sizeof(ws) - 1;
				char c = is_ws ? ws[k] : other[k - (sizeof(ws) - 1)];
				int n;

				memset(key, 'k', len);
				key[len] = '\0';
				key[pos] = c;
				n = snprintf(text, sizeof(text), "drm-driver: x\ndrm-client-id: 1\n"
					     "x-%s: 5\n", key);
				DT_ASSERT_EQ(dac_fdinfo_parse(text, (size_t)n, CUR, &fi), 0);
				if ((dac_fdinfo_find_code(&fi, "key-whitespace") != NULL) != is_ws)
					DT_FAIL("key of %zu bytes, byte %#x at %zu: whitespace %s",
						len + 2, (unsigned char)c, pos + 2,
						is_ws ? "missed" : "reported");
				dac_fdinfo_free(&fi);
			}
		}
	}
}

/*
 * A few engines are found by comparing names, more through a hash map: an
 * engine named again after the switch (capacity lines after all engines,
 * one duplicate of the first) still finds its own entry.
 */
DT_TEST(engines_found_again_past_the_linear_search)
{
	char text[4096];
	struct dac_fdinfo fi;
	size_t o = 0;

	o += (size_t)snprintf(text + o, sizeof(text) - o, "drm-driver: x\ndrm-client-id: 1\n");
	for (int e = 0; e < 12; e++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "drm-engine-e%d: %d ns\n", e,
				      100 + e);
	for (int e = 0; e < 12; e++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "drm-engine-capacity-e%d: %d\n",
				      e, e + 2);
	o += (size_t)snprintf(text + o, sizeof(text) - o, "drm-engine-e0: 999 ns\n");
	DT_ASSERT_EQ(dac_fdinfo_parse(text, o, CUR, &fi), 0);
	DT_EXPECT_EQ(fi.nengines, (size_t)12);
	for (int e = 0; e < 12; e++) {
		char name[16];

		snprintf(name, sizeof(name), "e%d", e);
		DT_ASSERT_TRUE(dac_fdinfo_engine(&fi, name) != NULL);
		DT_EXPECT_EQ(dac_fdinfo_engine(&fi, name)->busy_ns, (uint64_t)(100 + e));
		DT_EXPECT_EQ(dac_fdinfo_engine(&fi, name)->capacity, (uint64_t)(e + 2));
	}
	FDINFO_EXPECT_FINDINGS(&fi, "27:e:duplicate-key");
	dac_fdinfo_free(&fi);
}

DT_TEST(legacy_memory_fallback)
{
	struct dac_fdinfo fi;
	const struct dac_region *r;

	fdinfo_tu_parse(HDR "drm-memory-vram: 8 KiB\ndrm-resident-vram: 4 KiB\n"
			"drm-memory-gtt: 2 KiB\n", CUR, &fi);
	r = dac_fdinfo_region(&fi, "vram");
	DT_ASSERT_TRUE(r != NULL);
	DT_EXPECT_EQ(r->resident, 4096u);	/* drm-resident wins */
	DT_EXPECT_FALSE(r->resident_from_legacy);
	DT_EXPECT_EQ(r->memory, 8192u);
	r = dac_fdinfo_region(&fi, "gtt");
	DT_ASSERT_TRUE(r != NULL);
	DT_EXPECT_TRUE(r->resident_from_legacy);
	DT_EXPECT_EQ(r->resident, 2048u);
	DT_EXPECT_FALSE(r->has_total);
	dac_fdinfo_free(&fi);
}

DT_TEST(not_drm_fdinfo)
{
	struct dac_fdinfo fi;

	fdinfo_tu_parse("pos:\t0\nflags:\t02\nmnt_id:\t3\nino:\t4\n", CUR, &fi);
	DT_EXPECT_FALSE(fi.is_drm);
	DT_EXPECT_EQ(fi.nkv, (size_t)4);
	DT_EXPECT_EQ((int)fi.kv[3].type, (int)DAC_KEY_OTHER);
	FDINFO_EXPECT_FINDINGS(&fi, "0:e:driver-missing 0:n:client-id-missing");
	DT_EXPECT_EQ(fi.find[0].line, 0u);
	dac_fdinfo_free(&fi);
}

DT_TEST(findings_sorted_by_line)
{
	struct dac_fdinfo fi;
	size_t i;

	/* Cross-key findings (lines 3, 4) come out after per-line ones (5). */
	fdinfo_tu_parse("drm-client-id: 1\ndrm-driver: x\ndrm-cycles-a: 1\n"
			"drm-engine-capacity-b: 2\ndrm-engine-c: 5 us\n", OLD, &fi);
	DT_ASSERT_EQ(fi.nfind, (size_t)3);
	for (i = 1; i < fi.nfind; i++)
		DT_EXPECT_LE(fi.find[i - 1].line, fi.find[i].line);
	DT_EXPECT_STREQ(fi.find[0].code, "cycles-orphan");
	DT_EXPECT_STREQ(fi.find[2].code, "unit-invalid");
	dac_fdinfo_free(&fi);
}

/* ---- no fixed limits ---------------------------------------------------- */

DT_TEST_TIMEOUT(many_engines_and_regions, 120)
{
	const size_t n = 20000;
	struct dac_fdinfo fi;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	DT_ASSERT_TRUE(f != NULL);
	fputs(HDR, f);
	for (i = 0; i < n; i++)
		fprintf(f, "drm-engine-e%zu: %zu ns\ndrm-engine-capacity-e%zu: %zu\n"
			"drm-resident-r%zu: %zu KiB\n", i, i * 3, i, i % 7 + 1, i, i);
	fclose(f);
	DT_ASSERT_EQ(dac_fdinfo_parse(text, len, CUR, &fi), 0);
	DT_ASSERT_EQ(fi.nengines, n);
	DT_ASSERT_EQ(fi.nregions, n);
	DT_EXPECT_EQ(fi.nkv, 3 * n + 2);
	for (i = 0; i < n; i += 997) {
		char name[32];

		snprintf(name, sizeof(name), "e%zu", i);
		DT_EXPECT_STREQ(fi.engines[i].name, name);
		DT_EXPECT_EQ(fi.engines[i].busy_ns, (uint64_t)i * 3);
		DT_EXPECT_EQ(fi.engines[i].capacity, (uint64_t)(i % 7 + 1));
		DT_EXPECT_EQ(fi.regions[i].resident, (uint64_t)i * 1024);
	}
	DT_EXPECT_EQ(fi.engines[n - 1].busy_ns, (uint64_t)(n - 1) * 3);
	FDINFO_EXPECT_FINDINGS(&fi, "");
	dac_fdinfo_free(&fi);
	free(text);
}

DT_TEST(long_lines)
{
	const size_t big = 1 << 20;
	struct dac_fdinfo fi;
	char *text = malloc(2 * big + 256), *p;
	size_t len;

	DT_ASSERT_TRUE(text != NULL);
	/* A 1 MiB engine name and a 1 MiB client name. */
	p = text + sprintf(text, HDR "drm-engine-");
	memset(p, 'x', big);
	p += big;
	p += sprintf(p, ": 42 ns\ndrm-client-name: ");
	memset(p, 'n', big);
	p += big;
	len = (size_t)(p - text);
	DT_ASSERT_EQ(dac_fdinfo_parse(text, len, CUR, &fi), 0);
	DT_ASSERT_EQ(fi.nengines, (size_t)1);
	DT_EXPECT_EQ(strlen(fi.engines[0].name), big);
	DT_EXPECT_EQ(fi.engines[0].busy_ns, 42u);
	DT_ASSERT_TRUE(fi.client_name != NULL);
	DT_EXPECT_EQ(strlen(fi.client_name), big);
	FDINFO_EXPECT_FINDINGS(&fi, "");
	dac_fdinfo_free(&fi);
	free(text);
}

/*
 * The messages come from the parser's own formatter: byte for byte what
 * printf would make of them, with the largest numbers, a line number and a
 * key cut to 64 bytes with "...".
 */
DT_TEST(messages_formatted_exactly)
{
	static const char text[] =
		"drm-driver: x\n"
		"drm-resident-vram: 18014398509481983 KiB\n"
		"drm-memory-vram: 1 KiB\n"
		"drm-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: 1\n";
	const struct dac_finding *f;
	struct dac_fdinfo fi;
	char want[256];

	DT_ASSERT_EQ(dac_fdinfo_parse(text, sizeof(text) - 1, CUR, &fi), 0);
	f = dac_fdinfo_find_code(&fi, "memory-resident-mismatch");
	DT_ASSERT_TRUE(f != NULL);
	DT_EXPECT_STREQ(fdinfo_tu_msg(f), "'drm-memory-vram' (1024 bytes) is an alias of drm-resident- "
			"(line 2, 18446744073709550592 bytes) but differs; drm-resident- is used");
	f = dac_fdinfo_find_code(&fi, "unknown-drm-key");
	DT_ASSERT_TRUE(f != NULL);
	snprintf(want, sizeof(want), "key '%.64s...' is not defined by the current spec",
		 "drm-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	DT_EXPECT_STREQ(fdinfo_tu_msg(f), want);
	DT_EXPECT_EQ(f->line, 4u);
	dac_fdinfo_free(&fi);
}

/* KiB and MiB up to the last value that fits in 64 bits, and one past it. */
DT_TEST(memory_units_at_64_bits)
{
	static const char fits[] = HDR
		"drm-total-a: 18014398509481983 KiB\n"
		"drm-total-b: 17592186044415 MiB\n"
		"drm-total-c: 3 KiB\n";
	static const char over[] = HDR
		"drm-total-a: 18014398509481984 KiB\n"
		"drm-total-b: 17592186044416 MiB\n";
	const struct dac_region *r;
	struct dac_fdinfo fi;

	DT_ASSERT_EQ(dac_fdinfo_parse(fits, sizeof(fits) - 1, CUR, &fi), 0);
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)0);
	r = dac_fdinfo_region(&fi, "a");
	DT_ASSERT_TRUE(r && r->has_total);
	DT_EXPECT_EQ(r->total, 18446744073709550592ull);
	r = dac_fdinfo_region(&fi, "b");
	DT_ASSERT_TRUE(r && r->has_total);
	DT_EXPECT_EQ(r->total, 18446744073708503040ull);
	r = dac_fdinfo_region(&fi, "c");
	DT_ASSERT_TRUE(r && r->has_total);
	DT_EXPECT_EQ(r->total, 3072ull);
	dac_fdinfo_free(&fi);

	DT_ASSERT_EQ(dac_fdinfo_parse(over, sizeof(over) - 1, CUR, &fi), 0);
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), (size_t)2);
	DT_EXPECT_EQ(dac_fdinfo_count(&fi, DAC_SEV_ERROR), (size_t)2);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "value-range") != NULL);
	r = dac_fdinfo_region(&fi, "a");
	DT_EXPECT_TRUE(!r || !r->has_total);
	dac_fdinfo_free(&fi);
}

DT_TEST(many_findings_messages_bounded)
{
	const size_t n = 5000;
	struct dac_fdinfo fi;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	DT_ASSERT_TRUE(f != NULL);
	fputs(HDR, f);
	for (i = 0; i < n; i++)
		fprintf(f, "drm-engine-%0200zu: 1 us\n", i);
	fclose(f);
	DT_ASSERT_EQ(dac_fdinfo_parse(text, len, CUR, &fi), 0);
	DT_ASSERT_EQ(fi.nfind, n);
	for (i = 0; i < n; i++) {
		DT_EXPECT_STREQ(fi.find[i].code, "unit-invalid");
		DT_EXPECT_EQ(fi.find[i].line, (unsigned int)(i + 3));
		/* Keys are shortened in messages: 200-char key, short message. */
		DT_EXPECT_LT(strlen(fdinfo_tu_msg(&fi.find[i])), (size_t)200);
	}
	dac_fdinfo_free(&fi);
	free(text);
}

DT_MAIN
