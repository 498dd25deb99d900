// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo_testutil.c - helpers for the fdinfo parser tests.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtest.h"
#include "fdinfo_testutil.h"

const char *fdinfo_tu_fixture_path(const char *file)
{
	static char path[4096];
	const char *shared = getenv("DRMACCT_SHARED");

	snprintf(path, sizeof(path), "%s/fixtures/fdinfo/%s",
		 shared && *shared ? shared : "../shared", file);
	return path;
}

void fdinfo_tu_parse(const char *text, enum dac_profile profile,
		     struct dac_fdinfo *fi)
{
	int rc = dac_fdinfo_parse(text, strlen(text), profile, fi);

	DT_ASSERT_EQ(rc, 0);
}

void fdinfo_tu_fixture(const char *file, enum dac_profile profile,
		       struct dac_fdinfo *fi)
{
	const char *path = fdinfo_tu_fixture_path(file);
	int rc = dac_fdinfo_read_file(path, profile, fi);

	if (rc)
		dt_info("reading %s: %s", path, strerror(-rc));
	DT_ASSERT_EQ(rc, 0);
}

const char *fdinfo_tu_msg(const struct dac_finding *f)
{
	static _Thread_local char buf[DAC_FINDING_MSG_MAX];

	return dac_finding_message(f, buf, sizeof(buf));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the space-separated tokens of s and join them again with spaces. */
static char *canonical(char *s)
{
	size_t n = 0, cap = 8, i, len = 0;
	char **tok = malloc(cap * sizeof(*tok)), *save = NULL, *t, *out;

	DT_ASSERT_TRUE(tok != NULL);
	for (t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (n == cap) {
			char **nt = realloc(tok, 2 * cap * sizeof(*tok));

			DT_ASSERT_TRUE(nt != NULL);
			tok = nt;
			cap *= 2;
		}
		tok[n++] = t;
		len += strlen(t) + 1;
	}
	qsort(tok, n, sizeof(*tok), cmp_str);
	out = calloc(1, len + 1);
	DT_ASSERT_TRUE(out != NULL);
	for (i = 0; i < n; i++) {
		if (i)
			strcat(out, " ");
		strcat(out, tok[i]);
	}
	free(tok);
	return out;
}

bool fdinfo_tu_findings(const struct dac_fdinfo *fi, const char *want)
{
	char *w = strdup(want), *have = NULL, *cw, *ch;
	size_t i, hlen = 0;
	FILE *f = open_memstream(&have, &hlen);
	bool ok;

	DT_ASSERT_TRUE(w != NULL && f != NULL);
	for (i = 0; i < fi->nfind; i++)
		fprintf(f, "%s%u:%c:%s", i ? " " : "", fi->find[i].line,
			dac_severity_name(fi->find[i].sev)[0], fi->find[i].code);
	fclose(f);
	cw = canonical(w);
	ch = canonical(have);
	ok = !strcmp(cw, ch);
	if (!ok) {
		dt_info("want findings: %s", cw);
		dt_info("have findings: %s", ch);
		for (i = 0; i < fi->nfind; i++) {
			char msg[DAC_FINDING_MSG_MAX];

			dt_info("  line %u %s %s: %s", fi->find[i].line,
				dac_severity_name(fi->find[i].sev), fi->find[i].code,
				dac_finding_message(&fi->find[i], msg, sizeof(msg)));
		}
	}
	free(w);
	free(have);
	free(cw);
	free(ch);
	return ok;
}

int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

int fdinfo_tu_leaks(void)
{
	return __lsan_do_recoverable_leak_check ?
	       __lsan_do_recoverable_leak_check() : 0;
}
