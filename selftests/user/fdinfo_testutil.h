/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fdinfo_testutil.h - helpers for the fdinfo parser tests.
 */
#ifndef FDINFO_TESTUTIL_H
#define FDINFO_TESTUTIL_H

#include <stddef.h>

#include "fdinfo.h"

/* Directory of the shared fixtures: $DRMACCT_SHARED/fixtures/fdinfo. */
const char *fdinfo_tu_fixture_path(const char *file);

/*
 * Parse @text (a C string) with @profile into @fi; ASSERTs success.
 */
void fdinfo_tu_parse(const char *text, enum dac_profile profile,
		     struct dac_fdinfo *fi);

/* Read a shared fixture with @profile into @fi; ASSERTs success. */
void fdinfo_tu_fixture(const char *file, enum dac_profile profile,
		       struct dac_fdinfo *fi);

/* The message of @f, in a buffer of the calling thread's (valid until the next call). */
const char *fdinfo_tu_msg(const struct dac_finding *f);

/*
 * Check that the findings of @fi are exactly @want, a space-separated list of
 * "LINE:SEV:CODE" (SEV is e, w or n), in any order; "" = no findings.
 * Prints every finding on mismatch. Returns true on match.
 */
bool fdinfo_tu_findings(const struct dac_fdinfo *fi, const char *want);

#define FDINFO_EXPECT_FINDINGS(fi, want)				\
	do {								\
		if (!fdinfo_tu_findings(fi, want))			\
			dt__fail_here(__FILE__, __LINE__, false,	\
				      "findings differ from \"%s\"", want); \
	} while (0)

/* Number of bytes LeakSanitizer finds leaked right now (0 without LSan). */
int fdinfo_tu_leaks(void);

#endif
