// SPDX-License-Identifier: MIT
/*
 * test_cli_stats.c - one notion of a DRM fd in every command: without usage
 * stats (no drm- key: most drivers), core keys only (drm-driver,
 * drm-client-id, drm-pdev: what the DRM core prints on 6.5+ for a driver
 * with a show_fdinfo hook and no stats of its own), or with stats. On
 * synthetic /proc trees: validate (PID, PID:FD, FILE, --all, operands that
 * name one client twice), list and top (footer, JSON, "-" for what was
 * never printed), export, and list -p of amdgpu's legacy memory keys.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "json_dom.h"
#include "proc_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* vgem, bochs, virtio-gpu: an fdinfo with no drm- key at all */
#define NOSTATS "pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t5\n"
/* a driver with a show_fdinfo hook and nothing of its own, on 6.5+ */
#define CORE "pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t5\ndrm-driver:\tsimgpu\n" \
	     "drm-client-id:\t41\ndrm-pdev:\t0000:00:04.0\n"
#define FULL "drm-driver:\tsimgpu\ndrm-client-id:\t7\ndrm-engine-render:\t5000 ns\n" \
	     "drm-total-system:\t8 KiB\n"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * 200 holds a no-stats fd twice (3 and 4: a synthetic tree cannot tell a
 * dup from a second open, so two); 201 a core-only client; 202 a client
 * with stats; 203 all three kinds.
 */
static void build(struct proc_tree *pt)
{
	DT_ASSERT_EQ(proc_tree_init(pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 200, "vgemuser"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 200, 3, 226, 129, NOSTATS), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 200, 4, 226, 129, NOSTATS), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 201, "coreuser"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 201, 3, 226, 130, CORE), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 202, "gfx"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 202, 5, 226, 128, FULL), 0);
}

DT_TEST(validate_no_stats_fd_is_no_spec_error)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;

	build(&pt);
	/* PID: said, counted, exit 4 (nothing checked), no driver-missing */
	cli_run(&r, "validate", "--proc-root", pt.root, "200", NULL);
	DT_EXPECT_EQ(r.status, 4);
	EXPECT_HAS(r.out, "/200/fdinfo/3: driver prints no usage stats (no drm- key; renderD129)\n");
	DT_EXPECT_EQ(count(r.out, "driver-missing"), (size_t)0);
	EXPECT_HAS(r.out, "0 checked against the current spec: 0 errors, 0 warnings, 0 notes, "
			  "2 without usage stats\n");
	EXPECT_HAS(r.err, "nothing to validate: the driver prints no usage stats");
	cli_result_free(&r);

	/* PID:FD alike, and in JSON */
	cli_run(&r, "validate", "--proc-root", pt.root, "--json", "200:4", NULL);
	DT_EXPECT_EQ(r.status, 4);
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.usage_stats"), "none");
	DT_EXPECT_STREQ(jd_str(j, "sources.0.device"), "renderD129");
	DT_EXPECT_EQ(jd_int(j, "sources.0.fd", -1), 4);
	DT_EXPECT_EQ(jd_int(j, "summary.sources", -1), 0);
	DT_EXPECT_EQ(jd_int(j, "summary.without_stats", -1), 1);
	DT_EXPECT_EQ(jd_int(j, "summary.errors", -1), 0);
	jd_free(j);
	cli_result_free(&r);

	/* a no-stats fd next to a checked client: the checked one decides (0) */
	cli_run(&r, "validate", "--proc-root", pt.root, "200", "202", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "1 checked against the current spec: 0 errors, 0 warnings, 0 notes, "
			  "2 without usage stats\n");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(validate_file_without_drm_keys)
{
	char path[] = "/tmp/drmacct-stats.XXXXXX";
	struct cli_result r;
	int fd = mkstemp(path);

	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(write(fd, NOSTATS, strlen(NOSTATS)), (ssize_t)strlen(NOSTATS));
	close(fd);
	cli_run(&r, "validate", path, NULL);
	DT_EXPECT_EQ(r.status, 4);
	EXPECT_HAS(r.out, ": driver prints no usage stats (no drm- key)\n");
	DT_EXPECT_EQ(count(r.out, "error"), (size_t)1);	/* "0 errors" only */
	cli_result_free(&r);
	unlink(path);
}

DT_TEST(validate_core_only_client_conforms)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;

	build(&pt);
	cli_run(&r, "validate", "--proc-root", pt.root, "201", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "/201/fdinfo/3: driver simgpu: 0 errors, 0 warnings, 0 notes "
			  "(core keys only: no engine or memory key)\n");
	cli_result_free(&r);
	cli_run(&r, "validate", "--proc-root", pt.root, "--json", "201", NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.usage_stats"), "core");
	DT_EXPECT_EQ(jd_int(j, "sources.0.client_id", -1), 41);
	jd_free(j);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/* Operands that name one client twice check it once. */
DT_TEST(validate_same_client_named_twice)
{
	struct proc_tree pt;
	struct cli_result r;

	build(&pt);
	/* 203 inherited 202's client 7 */
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 203, "gfxchild"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 203, 5, 226, 128, FULL), 0);
	cli_run(&r, "validate", "--proc-root", pt.root, "202", "202", "203:5", NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_EQ(count(r.out, "driver simgpu:"), (size_t)1);
	EXPECT_HAS(r.out, "1 checked against the current spec: 0 errors, 0 warnings, 0 notes, "
			  "2 more fds of clients already checked\n");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(list_counts_fds_without_stats_and_shows_dashes)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;
	const struct jd *c;

	build(&pt);
	cli_run(&r, "list", "-i", "0", "--proc-root", pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "2 clients in 2 processes; 2 DRM fds without usage stats\n");
	/* the core-only client: MEMORY "-" (never printed), and why */
	EXPECT_HAS(r.out, "201          coreuser         simgpu     renderD130  41       -\n");
	EXPECT_HAS(r.out, "    core keys only: the driver prints no engine or memory key\n");
	EXPECT_HAS(r.out, "202          gfx              simgpu     renderD128  7        8.0K");
	cli_result_free(&r);

	cli_run(&r, "list", "-i", "0", "--json", "--proc-root", pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	DT_EXPECT_EQ(jd_int(j, "totals.drm_fds_without_stats", -1), 2);
	DT_EXPECT_EQ(jd_int(j, "totals.clients", -1), 2);
	c = jd_find_u64(j, "clients", "client_id", 41);
	DT_ASSERT_NE(c, NULL);
	DT_EXPECT_STREQ(jd_str(c, "stats"), "core");
	DT_EXPECT_EQ(jd_len(c, "engines"), 0);
	DT_EXPECT_EQ(jd_len(c, "memory"), 0);
	c = jd_find_u64(j, "clients", "client_id", 7);
	DT_ASSERT_NE(c, NULL);
	DT_EXPECT_STREQ(jd_str(c, "stats"), "full");
	jd_free(j);
	cli_result_free(&r);

	/* one fd of one kind: singular */
	DT_ASSERT_EQ(proc_tree_remove(&pt, 200, "fd/4"), 0);
	cli_run(&r, "list", "-i", "0", "--proc-root", pt.root, NULL);
	EXPECT_HAS(r.out, "2 clients in 2 processes; 1 DRM fd without usage stats\n");
	cli_result_free(&r);

	/* top's snapshots say the same */
	cli_run(&r, "top", "-b", "-n", "1", "-i", "10ms", "--proc-root", pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "2 clients in 2 processes; 1 DRM fd without usage stats\n");
	cli_result_free(&r);

	/* and export */
	cli_run(&r, "export", "--prometheus", "--proc-root", pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "\ndrmacct_drm_fds_without_usage_stats 1\n");
	EXPECT_HAS(r.out, "drmacct_discovery_failures{reason=\"parse\"} 0\n");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * amdgpu's legacy drm-memory-<r> is resident memory: the per-process view
 * shows it as resident, and no "total 0" the driver never printed.
 */
DT_TEST(list_processes_legacy_memory_is_resident_only)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;
	const struct jd *m;

	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 300, "blender"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 9, 226, 128,
					  "drm-driver:\tamdgpu\ndrm-client-id:\t217\n"
					  "drm-memory-vram:\t2048 KiB\ndrm-engine-gfx:\t5 ns\n"), 0);
	cli_run(&r, "list", "-p", "-i", "0", "--proc-root", pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "    renderD128 vram             resident 2.0M\n");
	DT_EXPECT_EQ(count(r.out, "total 0"), (size_t)0);
	EXPECT_HAS(r.out, "300      blender          1        2.0M\n");
	cli_result_free(&r);
	cli_run(&r, "list", "-p", "-i", "0", "--json", "--proc-root", pt.root, NULL);
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	m = jd_path(j, "processes.0.memory.0");
	DT_ASSERT_NE(m, NULL);
	DT_EXPECT_TRUE(jd_is_null(m, "total"));
	DT_EXPECT_EQ(jd_u64(m, "resident", 0), 2097152ull);
	jd_free(j);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_MAIN
