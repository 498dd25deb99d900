// SPDX-License-Identifier: MIT
/*
 * main.c - drmacct: subcommand dispatch.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output.h"

extern const struct drmacct_cmd __start_drmacct_cmds[];
extern const struct drmacct_cmd __stop_drmacct_cmds[];

static int cmp_cmd(const void *a, const void *b)
{
	const struct drmacct_cmd *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static void usage(FILE *f)
{
	size_t n = (size_t)(__stop_drmacct_cmds - __start_drmacct_cmds), i;
	const struct drmacct_cmd **v = calloc(n ? n : 1, sizeof(*v));

	fprintf(f, "Usage: drmacct COMMAND [OPTIONS] [ARGS]\n"
		   "       drmacct COMMAND --help\n\n"
		   "Per-client GPU usage accounting (DRM client usage stats).\n\n"
		   "Commands:\n");
	if (v) {
		for (i = 0; i < n; i++)
			v[i] = &__start_drmacct_cmds[i];
		qsort(v, n, sizeof(*v), cmp_cmd);
		for (i = 0; i < n; i++)
			fprintf(f, "  %-10s %s\n", v[i]->name, v[i]->summary);
		free(v);
	}
	fprintf(f, "\nExit status: 0 success, 1 failure, 2 usage error, 4 nothing to check\n"
		   "(check, validate --all), 141 standard output closed by its reader;\n"
		   "stat and record -- COMMAND exit with COMMAND's status.\n");
}

int main(int argc, char **argv)
{
	const struct drmacct_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("drmacct %s\n", DRMACCT_VERSION);
		return CLI_EXIT_OK;
	}
	/*
	 * A reader of our output that goes away (`| head`) makes writes fail
	 * with EPIPE instead of killing us mid-way: each command stops, puts
	 * the terminal back, and we exit CLI_EXIT_PIPE without a message.
	 * Commands that run a program give it the default disposition back.
	 */
	signal(SIGPIPE, SIG_IGN);
	for (c = __start_drmacct_cmds; c < __stop_drmacct_cmds; c++)
		if (!strcmp(c->name, argv[1])) {
			int rc = c->run(argc - 1, argv + 1);

			return cli_stdout_closed() ? CLI_EXIT_PIPE : rc;
		}
	fprintf(stderr, "drmacct: unknown command '%s'\n", argv[1]);
	fprintf(stderr, "Try 'drmacct --help'.\n");
	return CLI_EXIT_USAGE;
}
