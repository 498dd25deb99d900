/* SPDX-License-Identifier: MIT */
/*
 * cli_run.h - run the drmacct binary from host tests.
 *
 * The binary is $DRMACCT_BIN, or build/host/drmacct relative to the repo
 * root (the tests' working directory). Sanitizer failures in the child exit
 * with 86 so they cannot pass for an ordinary exit code.
 */
#ifndef DRMACCT_CLI_RUN_H
#define DRMACCT_CLI_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#define CLI_SANITIZER_EXIT 86

/*
 * Like DT_EXPECT_TRUE(strstr(hay, needle)), but the message shows the text
 * that lacks @needle (for checking command output). Needs dtest.h and
 * string.h where it is used.
 */
#define EXPECT_HAS(hay, needle)						\
	do {								\
		if (!strstr((hay), (needle)))				\
			dt__fail_here(__FILE__, __LINE__, false,	\
				      "missing \"%s\" in:\n%s", (needle), (hay)); \
	} while (0)

struct cli_result {
	int status;	/* exit code, or 128 + signal */
	char *out;	/* stdout, NUL-terminated */
	char *err;	/* stderr */
};

/* Path of the binary; ASSERTs it exists and is executable. */
const char *cli_bin(void);

/*
 * Run drmacct with the NULL-terminated argument list (without argv[0]),
 * stdin from /dev/null, and collect its output. ASSERTs on harness failures.
 */
void cli_run(struct cli_result *r, const char *arg, ...) __attribute__((sentinel));
/* Same with an argv vector (NULL-terminated, without argv[0]). */
void cli_runv(struct cli_result *r, const char *const *args);

enum cli_out {
	CLI_OUT_PIPE = 0,	/* stdout collected in r->out */
	CLI_OUT_CLOSED,		/* a pipe whose reader is gone (EPIPE) */
	CLI_OUT_PTY,		/* a pseudo-terminal (r->out: what it showed) */
};

struct cli_io {
	const char *in;		/* file for stdin; NULL: /dev/null */
	enum cli_out out;
};

/* cli_runv() with stdin and stdout as @io says. */
void cli_run_io(struct cli_result *r, const struct cli_io *io, const char *const *args);
void cli_result_free(struct cli_result *r);

/*
 * Strict JSON syntax check of a whole document (RFC 8259): jd_parse() of
 * json_dom.h, the one JSON parser of the tests, succeeds.
 */
bool cli_json_valid(const char *s);

/* Environment for a child: adds the sanitizer exit code options. */
void cli_child_env(void);

#endif /* DRMACCT_CLI_RUN_H */
