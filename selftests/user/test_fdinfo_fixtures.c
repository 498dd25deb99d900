// SPDX-License-Identifier: GPL-2.0
/*
 * test_fdinfo_fixtures.c - parse every real fdinfo sample in
 * ../shared/fixtures/fdinfo and compare with the values printed in it
 * (written out by hand from the sample text) and the exact findings the
 * rules in Documentation/fdinfo-validation.rst call for.
 */
#include <string.h>

#include "dtest.h"
#include "fdinfo.h"
#include "fdinfo_testutil.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

static const struct dac_engine *engine(const struct dac_fdinfo *fi, const char *n)
{
	const struct dac_engine *e = dac_fdinfo_engine(fi, n);

	if (!e)
		DT_FAIL("engine %s missing", n);
	return e;
}

static const struct dac_region *region(const struct dac_fdinfo *fi, const char *n)
{
	const struct dac_region *r = dac_fdinfo_region(fi, n);

	if (!r)
		DT_FAIL("region %s missing", n);
	return r;
}

/* An engine that only has drm-engine-<n>: <busy> ns. */
static void time_only_engine(const struct dac_fdinfo *fi, const char *n,
			     unsigned long long busy)
{
	const struct dac_engine *e = engine(fi, n);

	DT_EXPECT_TRUE(e->has_busy);
	DT_EXPECT_EQ(e->busy_ns, busy);
	DT_EXPECT_FALSE(e->has_capacity);
	DT_EXPECT_EQ(e->capacity, 1u);
	DT_EXPECT_FALSE(e->has_cycles);
	DT_EXPECT_FALSE(e->has_maxfreq);
	DT_EXPECT_FALSE(e->has_total_cycles);
}

static void kv_is(const struct dac_fdinfo *fi, const char *key,
		  enum dac_key_type type, const char *str, const char *unit)
{
	const struct dac_kv *kv = dac_fdinfo_get(fi, key);

	if (!kv)
		DT_FAIL("key %s missing", key);
	DT_EXPECT_EQ((int)kv->type, (int)type);
	DT_EXPECT_STREQ(kv->str, str);
	DT_EXPECT_STREQ(kv->unit, unit);
}

static void ident(const struct dac_fdinfo *fi, const char *driver,
		  const char *pdev, unsigned long long id)
{
	DT_EXPECT_TRUE(fi->is_drm);
	DT_EXPECT_STREQ(fi->driver, driver);
	DT_EXPECT_STREQ(fi->pdev, pdev);
	DT_EXPECT_TRUE(fi->has_client_id);
	DT_EXPECT_EQ(fi->client_id, id);
	DT_EXPECT_TRUE(fi->client_name == NULL);
}

static void amdgpu_1(enum dac_profile p)
{
	struct dac_fdinfo fi;
	const struct dac_region *r;

	fdinfo_tu_fixture("amdgpu_1.txt", p, &fi);
	ident(&fi, "amdgpu", "0000:08:00.0", 217);
	DT_EXPECT_EQ(fi.nlines, 12u);
	DT_EXPECT_EQ(fi.nkv, 12u);
	kv_is(&fi, "pasid", DAC_KEY_OTHER, "32784", NULL);
	kv_is(&fi, "mnt_id", DAC_KEY_OTHER, "24", NULL);
	DT_ASSERT_EQ(fi.nengines, 1u);
	time_only_engine(&fi, "gfx", 107322799ull);
	DT_ASSERT_EQ(fi.nregions, 3u);
	DT_EXPECT_STREQ(fi.regions[0].name, "vram");
	DT_EXPECT_STREQ(fi.regions[1].name, "gtt");
	DT_EXPECT_STREQ(fi.regions[2].name, "cpu");
	r = region(&fi, "vram");
	DT_EXPECT_TRUE(r->has_memory);
	DT_EXPECT_EQ(r->memory, 2068 * KiB);
	/* drm-memory is the resident figure when nothing else is printed. */
	DT_EXPECT_TRUE(r->has_resident);
	DT_EXPECT_TRUE(r->resident_from_legacy);
	DT_EXPECT_EQ(r->resident, 2068 * KiB);
	DT_EXPECT_FALSE(r->has_total);
	DT_EXPECT_EQ(region(&fi, "gtt")->memory, 8192 * KiB);
	DT_EXPECT_TRUE(region(&fi, "cpu")->has_memory);
	DT_EXPECT_EQ(region(&fi, "cpu")->memory, 0u);
	kv_is(&fi, "drm-memory-gtt", DAC_KEY_MEMORY_LEGACY, "8192 KiB", "KiB");
	if (p == DAC_PROFILE_CURRENT)
		FDINFO_EXPECT_FINDINGS(&fi, "9:n:memory-deprecated 10:n:memory-deprecated 11:n:memory-deprecated");
	else
		FDINFO_EXPECT_FINDINGS(&fi, "");
	DT_EXPECT_EQ(dac_fdinfo_errors(&fi), 0u);
	dac_fdinfo_free(&fi);
}

DT_TEST(amdgpu_1_current) { amdgpu_1(DAC_PROFILE_CURRENT); }
DT_TEST(amdgpu_1_2022) { amdgpu_1(DAC_PROFILE_2022); }

DT_TEST(amdgpu_2_current)
{
	struct dac_fdinfo fi;
	const struct dac_region *r;
	const struct dac_kv *kv;

	fdinfo_tu_fixture("amdgpu_2.txt", DAC_PROFILE_CURRENT, &fi);
	ident(&fi, "amdgpu", "0000:04:00.0", 4);
	DT_EXPECT_EQ(fi.nlines, 33u);
	DT_ASSERT_EQ(fi.nengines, 1u);
	time_only_engine(&fi, "compute", 46464671ull);
	DT_ASSERT_EQ(fi.nregions, 3u);

	r = region(&fi, "cpu");
	DT_EXPECT_TRUE(r->has_total && r->has_shared && r->has_active &&
		       r->has_resident && r->has_purgeable && r->has_memory);
	DT_EXPECT_EQ(0ull + r->total + r->shared + r->active + r->resident +
		     r->purgeable + r->memory, 0u);

	r = region(&fi, "gtt");
	DT_EXPECT_EQ(r->total, 2392 * KiB);
	DT_EXPECT_EQ(r->shared, 0u);
	DT_EXPECT_EQ(r->active, 0u);
	DT_EXPECT_EQ(r->resident, 2392 * KiB);
	DT_EXPECT_FALSE(r->resident_from_legacy);
	DT_EXPECT_EQ(r->purgeable, 0u);
	DT_EXPECT_EQ(r->memory, 2392 * KiB);

	r = region(&fi, "vram");
	DT_EXPECT_EQ(r->total, 44564 * KiB);
	DT_EXPECT_EQ(r->shared, 31952 * KiB);
	DT_EXPECT_EQ(r->active, 0u);
	DT_EXPECT_EQ(r->resident, 44564 * KiB);
	DT_EXPECT_EQ(r->purgeable, 0u);
	DT_EXPECT_EQ(r->memory, 44564 * KiB);

	/* "drm-memory-gtt: \t2392 KiB": space + TAB after the colon. */
	kv_is(&fi, "drm-memory-gtt", DAC_KEY_MEMORY_LEGACY, "2392 KiB", "KiB");
	/* amd-* keys: driver-specific, still converted when the unit is known. */
	kv = dac_fdinfo_get(&fi, "amd-requested-visible-vram");
	DT_ASSERT_TRUE(kv != NULL);
	DT_EXPECT_EQ((int)kv->type, (int)DAC_KEY_DRIVER_SPECIFIC);
	DT_EXPECT_TRUE(kv->has_value);
	DT_EXPECT_EQ(kv->value, 11952 * KiB);
	DT_EXPECT_EQ(kv->line, 31u);
	kv_is(&fi, "pasid", DAC_KEY_OTHER, "32771", NULL);
	kv_is(&fi, "drm-total-cpu", DAC_KEY_MEM_TOTAL, "0", NULL);

	/* Both the deprecated alias and drm-resident for every region, same
	 * values: allowed by the spec, so notes only. */
	FDINFO_EXPECT_FINDINGS(&fi, "24:n:memory-legacy-duplicate 25:n:memory-legacy-duplicate 26:n:memory-legacy-duplicate");
	dac_fdinfo_free(&fi);
}

DT_TEST(amdgpu_2_2022)
{
	struct dac_fdinfo fi;

	fdinfo_tu_fixture("amdgpu_2.txt", DAC_PROFILE_2022, &fi);
	ident(&fi, "amdgpu", "0000:04:00.0", 4);
	DT_ASSERT_EQ(fi.nregions, 3u);
	/* Only drm-memory exists in 2022; the rest are unknown drm- keys. */
	DT_EXPECT_EQ(region(&fi, "vram")->memory, 44564 * KiB);
	DT_EXPECT_EQ(region(&fi, "vram")->resident, 44564 * KiB);
	DT_EXPECT_TRUE(region(&fi, "vram")->resident_from_legacy);
	DT_EXPECT_FALSE(region(&fi, "vram")->has_total);
	DT_EXPECT_FALSE(region(&fi, "vram")->has_shared);
	kv_is(&fi, "drm-shared-vram", DAC_KEY_UNKNOWN_DRM, "31952 KiB", "KiB");
	FDINFO_EXPECT_FINDINGS(&fi,
		"9:w:unknown-drm-key 10:w:unknown-drm-key 11:w:unknown-drm-key "
		"12:w:unknown-drm-key 13:w:unknown-drm-key 14:w:unknown-drm-key "
		"15:w:unknown-drm-key 16:w:unknown-drm-key 17:w:unknown-drm-key "
		"18:w:unknown-drm-key 19:w:unknown-drm-key 20:w:unknown-drm-key "
		"21:w:unknown-drm-key 22:w:unknown-drm-key 23:w:unknown-drm-key");
	dac_fdinfo_free(&fi);
}

static void i915(const char *file, bool with_capacity)
{
	enum dac_profile ps[] = { DAC_PROFILE_CURRENT, DAC_PROFILE_2022 };
	const struct dac_engine *e;
	struct dac_fdinfo fi;
	size_t i;

	for (i = 0; i < 2; i++) {
		fdinfo_tu_fixture(file, ps[i], &fi);
		ident(&fi, "i915", "0000:00:02.0", 7);
		DT_EXPECT_EQ(fi.nlines, with_capacity ? 11u : 10u);
		DT_ASSERT_EQ(fi.nengines, 4u);
		DT_EXPECT_STREQ(fi.engines[0].name, "render");
		DT_EXPECT_STREQ(fi.engines[3].name, "video-enhance");
		time_only_engine(&fi, "render", 9288864723ull);
		time_only_engine(&fi, "copy", 2035071108ull);
		time_only_engine(&fi, "video-enhance", 0);
		e = engine(&fi, "video");
		DT_EXPECT_TRUE(e->has_busy);
		DT_EXPECT_EQ(e->busy_ns, 0u);
		/* Longest prefix: capacity-video is not an engine. */
		DT_EXPECT_EQ(e->has_capacity, with_capacity);
		DT_EXPECT_EQ(e->capacity, with_capacity ? 2u : 1u);
		DT_EXPECT_TRUE(dac_fdinfo_engine(&fi, "capacity-video") == NULL);
		DT_EXPECT_EQ(fi.nregions, 0u);
		FDINFO_EXPECT_FINDINGS(&fi, "");
		dac_fdinfo_free(&fi);
	}
}

DT_TEST(i915_1_both) { i915("i915_1.txt", true); }
DT_TEST(i915_3_both) { i915("i915_3.txt", false); }

DT_TEST(msm_1_both)
{
	enum dac_profile ps[] = { DAC_PROFILE_CURRENT, DAC_PROFILE_2022 };
	const struct dac_engine *e;
	struct dac_fdinfo fi;
	size_t i;

	for (i = 0; i < 2; i++) {
		fdinfo_tu_fixture("msm_1.txt", ps[i], &fi);
		ident(&fi, "msm", NULL, 7);
		DT_ASSERT_EQ(fi.nengines, 1u);
		e = engine(&fi, "gpu");
		DT_EXPECT_EQ(e->busy_ns, 1734371319ull);
		DT_EXPECT_TRUE(e->has_cycles);
		DT_EXPECT_EQ(e->cycles, 1153645024ull);
		DT_EXPECT_TRUE(e->has_maxfreq);
		DT_EXPECT_EQ(e->maxfreq_hz, 800000000ull);
		DT_EXPECT_FALSE(e->has_total_cycles);
		kv_is(&fi, "flags", DAC_KEY_OTHER, "02400002", NULL);
		kv_is(&fi, "drm-maxfreq-gpu", DAC_KEY_MAXFREQ, "800000000 Hz", "Hz");
		FDINFO_EXPECT_FINDINGS(&fi, "");
		dac_fdinfo_free(&fi);
	}
}

static void panfrost(enum dac_profile p)
{
	const struct dac_engine *e;
	const struct dac_region *r;
	const struct dac_kv *kv;
	struct dac_fdinfo fi;

	fdinfo_tu_fixture("panfrost_1.txt", p, &fi);
	ident(&fi, "panfrost", NULL, 14);
	DT_ASSERT_EQ(fi.nengines, 2u);
	e = engine(&fi, "fragment");
	DT_EXPECT_EQ(e->busy_ns, 1846584880ull);
	DT_EXPECT_EQ(e->cycles, 1424359409ull);
	DT_EXPECT_EQ(e->maxfreq_hz, 799999987ull);
	e = engine(&fi, "vertex-tiler");
	DT_EXPECT_EQ(e->busy_ns, 71932239ull);
	DT_EXPECT_EQ(e->cycles, 52617357ull);
	DT_EXPECT_EQ(e->maxfreq_hz, 799999987ull);
	/* drm-curfreq is not in any spec version: unknown, value still read. */
	kv = dac_fdinfo_get(&fi, "drm-curfreq-fragment");
	DT_ASSERT_TRUE(kv != NULL);
	DT_EXPECT_EQ((int)kv->type, (int)DAC_KEY_UNKNOWN_DRM);
	DT_EXPECT_TRUE(kv->has_value);
	DT_EXPECT_EQ(kv->value, 799999987ull);
	DT_EXPECT_STREQ(kv->unit, "Hz");

	if (p == DAC_PROFILE_CURRENT) {
		DT_ASSERT_EQ(fi.nregions, 1u);
		r = region(&fi, "memory");
		DT_EXPECT_EQ(r->total, 290 * MiB);
		DT_EXPECT_TRUE(r->has_shared);
		DT_EXPECT_EQ(r->shared, 0u);
		DT_EXPECT_EQ(r->active, 226 * MiB);
		DT_EXPECT_EQ(r->resident, 36496 * KiB);
		DT_EXPECT_EQ(r->purgeable, 128 * KiB);
		DT_EXPECT_FALSE(r->has_memory);
		/* active 226 MiB > resident 35.6 MiB breaks "active is a subset". */
		FDINFO_EXPECT_FINDINGS(&fi, "10:w:unknown-drm-key 14:w:unknown-drm-key 17:w:memory-subset");
	} else {
		DT_EXPECT_EQ(fi.nregions, 0u);
		FDINFO_EXPECT_FINDINGS(&fi,
			"10:w:unknown-drm-key 14:w:unknown-drm-key 15:w:unknown-drm-key "
			"16:w:unknown-drm-key 17:w:unknown-drm-key 18:w:unknown-drm-key "
			"19:w:unknown-drm-key");
	}
	dac_fdinfo_free(&fi);
}

DT_TEST(panfrost_1_current) { panfrost(DAC_PROFILE_CURRENT); }
DT_TEST(panfrost_1_2022) { panfrost(DAC_PROFILE_2022); }

DT_TEST(v3d_1_both)
{
	enum dac_profile ps[] = { DAC_PROFILE_CURRENT, DAC_PROFILE_2022 };
	const struct dac_kv *kv;
	struct dac_fdinfo fi;
	size_t i;

	for (i = 0; i < 2; i++) {
		fdinfo_tu_fixture("v3d_1.txt", ps[i], &fi);
		ident(&fi, "v3d", NULL, 44);
		DT_ASSERT_EQ(fi.nengines, 5u);
		time_only_engine(&fi, "bin", 1661076898ull);
		time_only_engine(&fi, "render", 31469427170ull);
		time_only_engine(&fi, "tfu", 5002964ull);
		time_only_engine(&fi, "csd", 188038329691ull);
		time_only_engine(&fi, "cache_clean", 27736024038ull);
		kv = dac_fdinfo_get(&fi, "v3d-jobs-cache_clean");
		DT_ASSERT_TRUE(kv != NULL);
		DT_EXPECT_EQ((int)kv->type, (int)DAC_KEY_DRIVER_SPECIFIC);
		DT_EXPECT_STREQ(kv->unit, "job");
		DT_EXPECT_TRUE(kv->has_value);
		DT_EXPECT_EQ(kv->value, 250392u);
		kv = dac_fdinfo_get(&fi, "v3d-jobs-csd");
		DT_ASSERT_TRUE(kv != NULL);
		DT_EXPECT_STREQ(kv->unit, "jobs");
		DT_EXPECT_EQ(kv->value, 250393u);
		DT_EXPECT_EQ(kv->line, 14u);
		FDINFO_EXPECT_FINDINGS(&fi, "");
		dac_fdinfo_free(&fi);
	}
}

static void v3d_3(enum dac_profile p)
{
	const struct dac_region *r;
	struct dac_fdinfo fi;

	fdinfo_tu_fixture("v3d_3.txt", p, &fi);
	ident(&fi, "v3d", NULL, 14);
	DT_EXPECT_EQ(fi.nlines, 13u);
	DT_ASSERT_EQ(fi.nengines, 6u);
	time_only_engine(&fi, "bin", 25951428711ull);
	time_only_engine(&fi, "render", 1400777565939ull);
	time_only_engine(&fi, "tfu", 26324241848ull);
	time_only_engine(&fi, "csd", 0);
	time_only_engine(&fi, "cache_clean", 0);
	time_only_engine(&fi, "cpu", 0);
	if (p == DAC_PROFILE_CURRENT) {
		DT_ASSERT_EQ(fi.nregions, 1u);
		r = region(&fi, "memory");
		DT_EXPECT_EQ(r->total, 74864 * KiB);
		DT_EXPECT_EQ(r->shared, 31600 * KiB);
		DT_EXPECT_TRUE(r->has_active);
		DT_EXPECT_EQ(r->active, 0u);
		DT_EXPECT_EQ(r->resident, 43264 * KiB);
		DT_EXPECT_TRUE(r->has_purgeable);
		DT_EXPECT_EQ(r->purgeable, 0u);
		FDINFO_EXPECT_FINDINGS(&fi, "");
	} else {
		DT_EXPECT_EQ(fi.nregions, 0u);
		FDINFO_EXPECT_FINDINGS(&fi,
			"9:w:unknown-drm-key 10:w:unknown-drm-key 11:w:unknown-drm-key "
			"12:w:unknown-drm-key 13:w:unknown-drm-key");
	}
	dac_fdinfo_free(&fi);
}

DT_TEST(v3d_3_current) { v3d_3(DAC_PROFILE_CURRENT); }
DT_TEST(v3d_3_2022) { v3d_3(DAC_PROFILE_2022); }

DT_MAIN
