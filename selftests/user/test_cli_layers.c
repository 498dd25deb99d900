// SPDX-License-Identifier: MIT
/*
 * test_cli_layers.c - the shape of user/drmacct as the linker sees it: a
 * command file (one with DRMACCT_COMMAND()) exports no symbol, so nothing
 * calls up into a command; and the files below the commands use each other
 * without a cycle (each depends only downwards). Read from the objects the
 * tested binary was linked from (nm), for every source file that exists.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRC_DIR "user/drmacct"

struct unit {
	char name[64];		/* "opts" for opts.c */
	bool command;
	char **defs, **undefs;	/* global symbols it defines / needs */
	size_t ndefs, nundefs;
	int mark;		/* cycle search: 0 new, 1 on the path, 2 done */
};

static struct unit units[64];
static size_t nunits;
static char objdir[PATH_MAX];

static bool is_command(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	bool cmd = false;

	DT_ASSERT_TRUE(f != NULL);
	while (!cmd && fgets(line, sizeof(line), f))
		cmd = !strncmp(line, "DRMACCT_COMMAND(", 16);
	fclose(f);
	return cmd;
}

/* Symbols of `nm @flags OBJ`: the last word of each line. */
static void nm_syms(const char *obj, const char *flags, char ***v, size_t *n)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s '%s'", flags, obj);
	p = popen(cmd, "r");
	DT_ASSERT_TRUE(p != NULL);
	while (fgets(line, sizeof(line), p)) {
		char *s = strrchr(line, ' ');

		s = s ? s + 1 : line;
		s[strcspn(s, "\n")] = '\0';
		*v = realloc(*v, (*n + 1) * sizeof(**v));
		DT_ASSERT_TRUE(*v != NULL);
		(*v)[(*n)++] = strdup(s);
	}
	DT_ASSERT_EQ(pclose(p), 0);
}

static void load(void)
{
	char bin[PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(bin, sizeof(bin), "%s", cli_bin());
	snprintf(objdir, sizeof(objdir), "%s/obj/" SRC_DIR, dirname(bin));
	if (access(objdir, R_OK))
		DT_SKIP("no objects next to the binary (%s)", objdir);
	d = opendir(SRC_DIR);
	DT_ASSERT_TRUE(d != NULL);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char src[PATH_MAX], obj[PATH_MAX + 80];
		struct unit *u;

		if (len < 3 || strcmp(e->d_name + len - 2, ".c"))
			continue;
		DT_ASSERT_LT(nunits, sizeof(units) / sizeof(units[0]));
		u = &units[nunits++];
		snprintf(u->name, sizeof(u->name), "%.*s", (int)(len - 2), e->d_name);
		snprintf(src, sizeof(src), SRC_DIR "/%s", e->d_name);
		snprintf(obj, sizeof(obj), "%s/%s.o", objdir, u->name);
		u->command = is_command(src);
		DT_ASSERT_EQ(access(obj, R_OK), 0);
		nm_syms(obj, "-g --defined-only", &u->defs, &u->ndefs);
		nm_syms(obj, "-u", &u->undefs, &u->nundefs);
	}
	closedir(d);
	DT_ASSERT_GT(nunits, (size_t)10);
}

/* The unit defining @sym, or NULL (libdrmacct, libc). */
static struct unit *definer(const char *sym)
{
	for (size_t i = 0; i < nunits; i++)
		for (size_t k = 0; k < units[i].ndefs; k++)
			if (!strcmp(units[i].defs[k], sym))
				return &units[i];
	return NULL;
}

/* Depth-first: true when a cycle is reachable from @u (named in the failure). */
static bool cycle_from(struct unit *u)
{
	if (u->mark == 2)
		return false;
	if (u->mark == 1)
		return true;
	u->mark = 1;
	for (size_t k = 0; k < u->nundefs; k++) {
		struct unit *t = definer(u->undefs[k]);

		if (t && t != u && cycle_from(t)) {
			DT_FAIL("%s.c -> %s.c (%s) is part of a cycle", u->name, t->name,
				u->undefs[k]);
			return true;
		}
	}
	u->mark = 2;
	return false;
}

DT_TEST(commands_export_nothing)
{
	size_t ncmd = 0;

	load();
	for (size_t i = 0; i < nunits; i++) {
		if (!units[i].command)
			continue;
		ncmd++;
		for (size_t k = 0; k < units[i].ndefs; k++)
			DT_FAIL("command file %s.c exports %s: it belongs in a file below the "
				"commands", units[i].name, units[i].defs[k]);
	}
	/* validate, list, top, record, report, stat, check, export, bpf, conformance */
	DT_EXPECT_GE(ncmd, (size_t)10);
}

DT_TEST(lower_files_have_no_cycle)
{
	size_t edges = 0;

	load();
	for (size_t i = 0; i < nunits; i++)
		for (size_t k = 0; k < units[i].nundefs; k++)
			edges += definer(units[i].undefs[k]) != NULL;
	/* the check means something: the files do call each other */
	DT_EXPECT_GT(edges, (size_t)20);
	for (size_t i = 0; i < nunits; i++)
		if (cycle_from(&units[i]))
			break;
}

DT_MAIN
