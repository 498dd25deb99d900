// SPDX-License-Identifier: MIT
/*
 * The helper guide's claim about its example driver holds: the number of
 * call sites, functions and macros Documentation/drmacct-helper.rst states
 * ("A driver adopts the helper with N call sites of F functions and M
 * macros") is what kernel/example/drmacct_example.c has, and every block
 * the guide quotes from it is there between its markers. Run from the
 * repository root.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtest.h"

#define GUIDE "Documentation/drmacct-helper.rst"
#define EXAMPLE "kernel/example/drmacct_example.c"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
			cap += 65536;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		len += n;
		if (!n)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* Matches of @re in @text: total, and distinct matched strings. */
static void count_matches(const char *text, const char *re, unsigned int *total,
			  unsigned int *distinct)
{
	char seen[64][48];
	regmatch_t m;
	regex_t rx;

	*total = *distinct = 0;
	DT_ASSERT_EQ(regcomp(&rx, re, REG_EXTENDED), 0);
	while (!regexec(&rx, text, 1, &m, 0)) {
		char name[48];
		int len = (int)(m.rm_eo - m.rm_so);
		unsigned int i;

		snprintf(name, sizeof(name), "%.*s", len, text + m.rm_so);
		for (i = 0; i < *distinct && strcmp(seen[i], name); i++)
			;
		if (i == *distinct && *distinct < 64)
			snprintf(seen[(*distinct)++], sizeof(seen[0]), "%s", name);
		(*total)++;
		text += m.rm_eo;
	}
	regfree(&rx);
}

DT_TEST(call_site_count_is_the_examples)
{
	char *guide = slurp(GUIDE), *example = slurp(EXAMPLE);
	unsigned int want_sites, want_fns, want_macros, sites, fns, macros, dummy;
	const char *claim;

	if (!guide || !example)
		DT_SKIP("not run from the repository root (%s)", strerror(errno));
	claim = strstr(guide, "adopts the helper with");
	DT_ASSERT_TRUE(claim != NULL);
	DT_ASSERT_EQ(sscanf(claim, "adopts the helper with %u call sites of %u functions and %u macros",
			    &want_sites, &want_fns, &want_macros), 3);
	/* The helper's functions, not the compat header's. */
	count_matches(example, "drmacct_(client|device|job|show|mem)_?[a-z_]*\\(", &sites, &fns);
	count_matches(example, "DRMACCT_[A-Z]+_SHOW_FDINFO\\(", &macros, &dummy);
	dt_info("the guide says %u call sites of %u functions and %u macros; the example has "
		"%u, %u and %u", want_sites, want_fns, want_macros, sites, fns, macros);
	DT_EXPECT_EQ(sites, want_sites);
	DT_EXPECT_EQ(fns, want_fns);
	DT_EXPECT_EQ(macros, want_macros);
	free(guide);
	free(example);
}

/* Every "guide: X" block the guide quotes exists, once, with its end. */
DT_TEST(quoted_blocks_exist)
{
	char *guide = slurp(GUIDE), *example = slurp(EXAMPLE);
	const char *p;
	unsigned int blocks = 0;

	if (!guide || !example)
		DT_SKIP("not run from the repository root (%s)", strerror(errno));
	for (p = guide; (p = strstr(p, ":start-after: /* guide: ")); p++) {
		char marker[64], *q;
		const char *at;

		snprintf(marker, sizeof(marker), "%s", p + strlen(":start-after: "));
		q = strchr(marker, '\n');
		if (q)
			*q = '\0';
		at = strstr(example, marker);
		DT_EXPECT_TRUE(at != NULL);
		if (at) {
			DT_EXPECT_TRUE(strstr(at + 1, marker) == NULL);
			DT_EXPECT_TRUE(strstr(at, "/* guide: end */") != NULL);
		}
		blocks++;
	}
	DT_EXPECT_EQ(blocks, 5u);
	free(guide);
	free(example);
}

DT_MAIN
