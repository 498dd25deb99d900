// SPDX-License-Identifier: MIT
/*
 * fdinfo_units.c - units, names and allocation helpers for the fdinfo parser.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdinfo_priv.h"

struct dac_unit {
	const char *name;
	enum dac_unit_kind kind;
	uint64_t mult;
	bool standard;		/* in the spec's list for its kind */
};

/*
 * Every unit we recognise. The spec spells kilohertz "KHz". "kHz" (the SI
 * spelling), "GHz" and "GiB" are not in the spec: a reader that follows it
 * cannot read them, so they are errors; we only know them to say in the
 * message what the driver probably meant (the value in a spec unit).
 */
static const struct dac_unit dac_units[] = {
	{ "ns", DAC_UNITS_TIME, 1, true },
	{ "KiB", DAC_UNITS_MEMORY, 1024, true },
	{ "MiB", DAC_UNITS_MEMORY, 1024 * 1024, true },
	{ "GiB", DAC_UNITS_MEMORY, 1024 * 1024 * 1024, false },
	{ "Hz", DAC_UNITS_FREQ, 1, true },
	{ "KHz", DAC_UNITS_FREQ, 1000, true },
	{ "MHz", DAC_UNITS_FREQ, 1000 * 1000, true },
	{ "kHz", DAC_UNITS_FREQ, 1000, false },
	{ "GHz", DAC_UNITS_FREQ, 1000 * 1000 * 1000, false },
};

enum dac_unit_verdict dac__unit_judge(enum dac_unit_kind kind, const char *unit,
				      uint64_t *mult)
{
	size_t i;

	*mult = 1;
	if (!unit) {
		/* Memory defaults to bytes; time and frequency need a unit. */
		if (kind == DAC_UNITS_TIME || kind == DAC_UNITS_FREQ)
			return DAC_UNIT_MISSING;
		return DAC_UNIT_OK;
	}
	if (kind == DAC_UNITS_NONE)
		return DAC_UNIT_UNEXPECTED;
	for (i = 0; i < sizeof(dac_units) / sizeof(dac_units[0]); i++) {
		const struct dac_unit *u = &dac_units[i];

		if (u->name[0] != unit[0] || strcmp(u->name, unit))
			continue;
		if (kind == DAC_UNITS_ANY) {
			*mult = u->mult;
			return DAC_UNIT_OK;
		}
		if (u->kind != kind)
			return DAC_UNIT_INVALID;
		*mult = u->mult;
		return u->standard ? DAC_UNIT_OK : DAC_UNIT_NONSTANDARD;
	}
	return kind == DAC_UNITS_ANY ? DAC_UNIT_UNKNOWN_KEEP : DAC_UNIT_INVALID;
}

const char *dac__unit_list(enum dac_unit_kind kind)
{
	switch (kind) {
	case DAC_UNITS_NONE:
		return "no unit";
	case DAC_UNITS_TIME:
		return "ns";
	case DAC_UNITS_MEMORY:
		return "no unit (bytes), KiB or MiB";
	case DAC_UNITS_FREQ:
		return "Hz, KHz or MHz";
	case DAC_UNITS_ANY:
		break;
	}
	return "any unit";
}

void dac__unit_suggest(enum dac_unit_kind kind, uint64_t base, char *buf,
		       size_t size)
{
	/* Largest spec unit that shows the value exactly, smallest first. */
	static const struct { enum dac_unit_kind kind; uint64_t mult; const char *sfx; }
	spell[] = {
		{ DAC_UNITS_MEMORY, 1, "" },
		{ DAC_UNITS_MEMORY, 1024, " KiB" },
		{ DAC_UNITS_MEMORY, 1024 * 1024, " MiB" },
		{ DAC_UNITS_FREQ, 1, " Hz" },
		{ DAC_UNITS_FREQ, 1000, " KHz" },
		{ DAC_UNITS_FREQ, 1000 * 1000, " MHz" },
	};
	const char *sfx = NULL;
	uint64_t div = 1;
	size_t i;

	for (i = 0; i < sizeof(spell) / sizeof(spell[0]); i++) {
		if (spell[i].kind != kind || base % spell[i].mult)
			continue;
		sfx = spell[i].sfx;
		div = spell[i].mult;
	}
	if (!sfx || !size) {
		if (size)
			buf[0] = '\0';
		return;
	}
	snprintf(buf, size, "%llu%s", (unsigned long long)(base / div), sfx);
}

/* Test hook: index of the allocation (from now) that fails; -1 = none. */
static _Thread_local long dac_fail_nth = -1;

void dac_fdinfo_test_fail_alloc(long nth)
{
	dac_fail_nth = nth < 0 ? -1 : nth;
}

static bool dac_should_fail(void)
{
	if (dac_fail_nth < 0)
		return false;
	if (dac_fail_nth == 0) {
		dac_fail_nth = -1;
		return true;
	}
	dac_fail_nth--;
	return false;
}

DAC_HOT
bool dac__fail_armed(void)
{
	return dac_fail_nth >= 0;
}

/*
 * A thread that kept a spare result allocation frees it when it ends: a
 * key whose destructor runs then (for the process's first thread, at
 * exit).
 */
static pthread_key_t dac_spare_key;
static pthread_once_t dac_spare_once = PTHREAD_ONCE_INIT;
static _Thread_local bool dac_spare_registered;
static bool dac_spare_key_ok;

static void dac_spare_destroy(void *unused)
{
	(void)unused;
	dac__spare_free();
}

static void dac_spare_at_exit(void)
{
	dac__spare_free();
}

static void dac_spare_init(void)
{
	dac_spare_key_ok = !pthread_key_create(&dac_spare_key, dac_spare_destroy);
	atexit(dac_spare_at_exit);
}

DAC_HOT
void dac__spare_thread(void)
{
	if (dac_spare_registered)
		return;
	pthread_once(&dac_spare_once, dac_spare_init);
	/* any non-NULL value: the destructor runs only for those */
	if (dac_spare_key_ok)
		pthread_setspecific(dac_spare_key, &dac_spare_registered);
	dac_spare_registered = true;
}

void *dac__malloc(size_t size)
{
	if (dac_should_fail())
		return NULL;
	return malloc(size ? size : 1);
}

void *dac__realloc(void *p, size_t size)
{
	if (dac_should_fail())
		return NULL;
	return realloc(p, size ? size : 1);
}

int dac__grow_to(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t ncap = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = dac__realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int dac__grow_from(void **arr, size_t *cap, size_t need, size_t elem, const void *inl)
{
	void *old = *arr;
	size_t ocap = *cap;

	if (need <= *cap)
		return 0;
	if (old != inl)
		return dac__grow_to(arr, cap, need, elem, 8);
	*arr = NULL;
	*cap = 0;
	if (dac__grow_to(arr, cap, need > 2 * ocap ? need : 2 * ocap, elem, 8)) {
		*arr = old;
		*cap = ocap;
		return -ENOMEM;
	}
	memcpy(*arr, old, ocap * elem);
	return 0;
}

const char *dac_severity_name(enum dac_severity sev)
{
	switch (sev) {
	case DAC_SEV_NOTE:
		return "note";
	case DAC_SEV_WARNING:
		return "warning";
	case DAC_SEV_ERROR:
		return "error";
	}
	return "?";
}

const char *dac_profile_name(enum dac_profile profile)
{
	switch (profile) {
	case DAC_PROFILE_CURRENT:
		return "current";
	case DAC_PROFILE_2022:
		return "2022";
	}
	return "?";
}

int dac_profile_parse(const char *s, enum dac_profile *profile)
{
	if (!s || !profile)
		return -EINVAL;
	if (!strcmp(s, "current")) {
		*profile = DAC_PROFILE_CURRENT;
		return 0;
	}
	if (!strcmp(s, "2022")) {
		*profile = DAC_PROFILE_2022;
		return 0;
	}
	return -EINVAL;
}

static const char *const dac_key_type_names[DAC_KEY__COUNT] = {
	[DAC_KEY_DRIVER] = "driver",
	[DAC_KEY_PDEV] = "pdev",
	[DAC_KEY_CLIENT_ID] = "client-id",
	[DAC_KEY_CLIENT_NAME] = "client-name",
	[DAC_KEY_ENGINE] = "engine",
	[DAC_KEY_ENGINE_CAPACITY] = "engine-capacity",
	[DAC_KEY_CYCLES] = "cycles",
	[DAC_KEY_MAXFREQ] = "maxfreq",
	[DAC_KEY_TOTAL_CYCLES] = "total-cycles",
	[DAC_KEY_MEM_TOTAL] = "mem-total",
	[DAC_KEY_MEM_SHARED] = "mem-shared",
	[DAC_KEY_MEM_RESIDENT] = "mem-resident",
	[DAC_KEY_MEM_PURGEABLE] = "mem-purgeable",
	[DAC_KEY_MEM_ACTIVE] = "mem-active",
	[DAC_KEY_MEMORY_LEGACY] = "memory-legacy",
	[DAC_KEY_DRIVER_SPECIFIC] = "driver-specific",
	[DAC_KEY_UNKNOWN_DRM] = "unknown-drm",
	[DAC_KEY_OTHER] = "other",
	[DAC_KEY_INVALID] = "invalid",
};

const char *dac_key_type_name(enum dac_key_type type)
{
	if ((unsigned int)type >= DAC_KEY__COUNT)
		return "?";
	return dac_key_type_names[type];
}
