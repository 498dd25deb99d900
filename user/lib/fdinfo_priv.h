/* SPDX-License-Identifier: MIT */
/*
 * fdinfo_priv.h - internals shared by the fdinfo*.c files of libdrmacct.
 * Not installed, not part of the API.
 */
#ifndef DRMACCT_FDINFO_PRIV_H
#define DRMACCT_FDINFO_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "fdinfo.h"

/* Which units a numeric key accepts. */
enum dac_unit_kind {
	DAC_UNITS_NONE,		/* plain count: no unit allowed */
	DAC_UNITS_TIME,		/* "ns" */
	DAC_UNITS_MEMORY,	/* none (bytes), "KiB", "MiB" */
	DAC_UNITS_FREQ,		/* "Hz", "KHz", "MHz" */
	DAC_UNITS_ANY,		/* driver-specific / unknown keys: best effort */
};

/* How a unit string was judged for a given kind. */
enum dac_unit_verdict {
	DAC_UNIT_OK,		/* in the spec's list (or no unit where allowed) */
	DAC_UNIT_MISSING,	/* no unit where the spec names one; default used */
	DAC_UNIT_NONSTANDARD,	/* recognised but not in the spec's list: an
				 * error; *mult says what was probably meant */
	DAC_UNIT_UNEXPECTED,	/* a unit where none is allowed */
	DAC_UNIT_INVALID,	/* not understood */
	DAC_UNIT_UNKNOWN_KEEP,	/* DAC_UNITS_ANY: unknown unit, keep number */
};

/*
 * dac__unit_judge() - judge @unit (NULL = none printed) for @kind and give the
 * multiplier to base units in *@mult (1 when the number is kept as is).
 */
enum dac_unit_verdict dac__unit_judge(enum dac_unit_kind kind, const char *unit,
				      uint64_t *mult);

/* Canonical spelling of the accepted units for @kind, for messages. */
const char *dac__unit_list(enum dac_unit_kind kind);

/*
 * dac__unit_suggest() - spell @base (bytes or Hz) in the largest unit of the
 * spec's list for @kind that shows it exactly ("1 MiB", "1000 MHz"); ""
 * for kinds without such a list.
 */
void dac__unit_suggest(enum dac_unit_kind kind, uint64_t base, char *buf,
		       size_t size);

/* Allocation wrappers honouring dac_fdinfo_test_fail_alloc(). */
void *dac__malloc(size_t size);
void *dac__realloc(void *p, size_t size);

/*
 * dac__grow() - make room for at least @need elements of @elem bytes in
 * *@arr of capacity *@cap (doubling). Return 0 or -ENOMEM (incl. overflow).
 */
int dac__grow_to(void **arr, size_t *cap, size_t need, size_t elem, size_t first);

/* The common case (room left) without a call: the parser asks per line. */
static inline int dac__grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	return need <= *cap ? 0 : dac__grow_to(arr, cap, need, elem, first);
}

/* Parse a text the caller hands over: @text has len + 1 bytes, malloc'd. */
int dac__parse_owned(char *text, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out);

#endif /* DRMACCT_FDINFO_PRIV_H */
