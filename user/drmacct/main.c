// SPDX-License-Identifier: MIT
/*
 * main.c - drmacct: subcommand dispatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef DRMACCT_VERSION
#define DRMACCT_VERSION "0.1"
#endif

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
	fprintf(f, "\nExit status: 0 success, 1 failure, 2 usage error.\n");
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
	for (c = __start_drmacct_cmds; c < __stop_drmacct_cmds; c++)
		if (!strcmp(c->name, argv[1]))
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "drmacct: unknown command '%s'\n", argv[1]);
	fprintf(stderr, "Try 'drmacct --help'.\n");
	return CLI_EXIT_USAGE;
}
