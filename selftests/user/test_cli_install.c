// SPDX-License-Identifier: MIT
/*
 * test_cli_install.c - `make install DESTDIR=... PREFIX=/usr` puts the CLI,
 * its man page (made from Documentation/drmacct.rst) and the bash completion
 * where packagers expect them, and each of them works.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Output of the shell command @cmd (stdout+stderr), its exit status in *@rc. */
static char *sh(const char *cmd, int *rc)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char tmp[4096];

	DT_ASSERT_TRUE(p != NULL);
	while ((n = fread(tmp, 1, sizeof(tmp), p)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			buf = realloc(buf, cap);
			DT_ASSERT_TRUE(buf != NULL);
		}
		memcpy(buf + len, tmp, n);
		len += n;
	}
	if (!buf)
		buf = calloc(1, 1);
	DT_ASSERT_TRUE(buf != NULL);
	buf[len] = '\0';
	*rc = pclose(p);
	*rc = WIFEXITED(*rc) ? WEXITSTATUS(*rc) : 128;
	return buf;
}

static char *slurp(const char *path)
{
	char cmd[PATH_MAX + 16];
	int rc;
	char *s;

	snprintf(cmd, sizeof(cmd), "cat '%s'", path);
	s = sh(cmd, &rc);
	DT_EXPECT_EQ(rc, 0);
	return s;
}

/* Ask the installed completion what it offers after @words (last one = cur). */
static char *complete(const char *dest, const char *words, int cword)
{
	char cmd[4 * PATH_MAX];
	int rc;
	char *s;

	snprintf(cmd, sizeof(cmd),
		 "PATH='%s/usr/bin':$PATH bash -c 'source \"%s/usr/share/bash-completion/"
		 "completions/drmacct\"; COMP_WORDS=(%s); COMP_CWORD=%d; _drmacct; "
		 "echo \"${COMPREPLY[*]}\"' 2>&1", dest, dest, words, cword);
	s = sh(cmd, &rc);
	DT_EXPECT_EQ(rc, 0);
	return s;
}

DT_TEST_TIMEOUT(make_install_destdir, 900)
{
	char dest[] = "/tmp/drmacct-install.XXXXXX", cmd[3 * PATH_MAX], path[PATH_MAX];
	struct stat st;
	char *out;
	int rc;

	DT_ASSERT_TRUE(mkdtemp(dest) != NULL);
	snprintf(cmd, sizeof(cmd), "make --no-print-directory install DESTDIR='%s' PREFIX=/usr "
		 "VERSION=9.8.7 2>&1", dest);
	out = sh(cmd, &rc);
	if (rc)
		DT_FAIL("make install failed (%d):\n%s", rc, out);
	free(out);

	/* the binary: executable, the version it was built as, working commands */
	snprintf(path, sizeof(path), "%s/usr/bin/drmacct", dest);
	DT_ASSERT_EQ(stat(path, &st), 0);
	DT_EXPECT_TRUE((st.st_mode & 0777) == 0755);
	snprintf(cmd, sizeof(cmd), "'%s' --version", path);
	out = sh(cmd, &rc);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_STREQ(out, "drmacct 9.8.7\n");
	free(out);
	snprintf(cmd, sizeof(cmd), "printf 'drm-driver:\\tx\\n' | '%s' validate -", path);
	out = sh(cmd, &rc);
	DT_EXPECT_EQ(rc, 0);
	EXPECT_HAS(out, "<stdin>: driver x: 0 errors");
	free(out);

	/* the man page: from Documentation/drmacct.rst, section 1 */
	snprintf(path, sizeof(path), "%s/usr/share/man/man1/drmacct.1", dest);
	DT_ASSERT_EQ(stat(path, &st), 0);
	DT_EXPECT_TRUE((st.st_mode & 0777) == 0644);
	out = slurp(path);
	EXPECT_HAS(out, ".TH \"DRMACCT\" 1");
	EXPECT_HAS(out, "9.8.7");
	EXPECT_HAS(out, "per-client GPU usage accounting");
	EXPECT_HAS(out, "The option grammar");
	EXPECT_HAS(out, "drmacct record");
	free(out);
	snprintf(cmd, sizeof(cmd), "MANWIDTH=80 man -l '%s' 2>/dev/null | col -b", path);
	out = sh(cmd, &rc);
	if (rc == 0) {	/* man-db is optional on a build host */
		EXPECT_HAS(out, "NAME");
		EXPECT_HAS(out, "drmacct - per-client GPU usage accounting");
	}
	free(out);

	/* the completion: commands and options come from the binary */
	snprintf(path, sizeof(path), "%s/usr/share/bash-completion/completions/drmacct", dest);
	DT_ASSERT_EQ(stat(path, &st), 0);
	out = complete(dest, "drmacct li", 1);
	DT_EXPECT_STREQ(out, "list\n");
	free(out);
	out = complete(dest, "drmacct list --so", 2);
	DT_EXPECT_STREQ(out, "--sort --source\n");
	free(out);
	out = complete(dest, "drmacct top --sort ''", 3);
	DT_EXPECT_STREQ(out, "util mem pid id\n");
	free(out);
	out = complete(dest, "drmacct top -", 2);
	EXPECT_HAS(out, "--count");
	EXPECT_HAS(out, "--interval");
	EXPECT_HAS(out, "-i");
	DT_EXPECT_TRUE(strstr(out, "--iterations") == NULL);
	free(out);
	out = complete(dest, "drmacct bpf st", 2);
	DT_EXPECT_STREQ(out, "start stop status\n");
	free(out);
	/* after a bpf subcommand, only its options */
	out = complete(dest, "drmacct bpf status --", 3);
	DT_EXPECT_STREQ(out, "--dir --help --json\n");
	free(out);
	out = complete(dest, "drmacct bpf start --no", 3);
	DT_EXPECT_STREQ(out, "--no-drmacct --no-sched\n");
	free(out);
	out = complete(dest, "drmacct bpf --", 2);
	EXPECT_HAS(out, "--attach");
	EXPECT_HAS(out, "--json");
	free(out);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dest);
	out = sh(cmd, &rc);
	free(out);
}

DT_MAIN
