// SPDX-License-Identifier: MIT
/*
 * test_cli.c - the drmacct binary: exit codes, messages, validate/list/top
 * on real fixtures and synthetic /proc trees, terminal handling of top.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "json_dom.h"
#include "proc_tree.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char *const FIXTURES[] = {
	"amdgpu_1.txt", "amdgpu_2.txt", "i915_1.txt", "i915_3.txt",
	"msm_1.txt", "panfrost_1.txt", "v3d_1.txt", "v3d_3.txt",
};

static void fixture(const char *name, char *buf, size_t len)
{
	const char *sh = getenv("DRMACCT_SHARED");

	snprintf(buf, len, "%s/fixtures/fdinfo/%s", sh && *sh ? sh : "../shared", name);
	if (access(buf, R_OK))
		DT_FAIL("fixture %s not readable (set DRMACCT_SHARED)", buf);
}

static void write_tmp(char *path, size_t len, const char *text)
{
	int fd;

	snprintf(path, len, "/tmp/drmacct-cli.XXXXXX");
	fd = mkstemp(path);
	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* ---- dispatch ---- */

DT_TEST(dispatch_and_help)
{
	struct cli_result r;

	cli_runv(&r, (const char *const[]){ NULL });
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "Usage: drmacct COMMAND");
	cli_result_free(&r);

	cli_run(&r, "--help", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "validate");
	EXPECT_HAS(r.out, "list");
	EXPECT_HAS(r.out, "top");
	cli_result_free(&r);

	cli_run(&r, "frobnicate", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "unknown command 'frobnicate'");
	cli_result_free(&r);

	for (const char *const *c = (const char *const[]){ "validate", "list", "top", NULL };
	     *c; c++) {
		cli_run(&r, *c, "--help", NULL);
		DT_EXPECT_EQ(r.status, 0);
		EXPECT_HAS(r.out, "Usage: drmacct");
		DT_EXPECT_STREQ(r.err, "");
		cli_result_free(&r);
	}
}

/* Every bad option of every command: exit 2 and a message naming it. */
DT_TEST(bad_options_exit_2)
{
	static const char *const cases[][5] = {
		{ "validate", NULL },				/* nothing to do */
		{ "validate", "--all", "x.txt", NULL },
		{ "validate", "--spec=2023", "x", NULL },
		{ "validate", "--spec", NULL },
		{ "validate", "--frob", "x", NULL },
		{ "validate", "-z", "x", NULL },
		{ "validate", "0", NULL },			/* pid 0 */
		{ "validate", "99999999999", NULL },		/* pid out of range */
		{ "validate", "1:99999999999", NULL },
		{ "validate", "", NULL },
		{ "validate", "--proc-root=", "--all", NULL },
		{ "validate", "--json=yes", "x", NULL },
		{ "list", "extra", NULL },
		{ "list", "--interval=-1", NULL },
		{ "list", "--interval=abc", NULL },
		{ "list", "--interval=3601", NULL },
		{ "list", "--interval=61m", NULL },
		{ "list", "--interval=0.5ms", NULL },
		{ "list", "--interval=5x", NULL },
		{ "list", "--interval=ms", NULL },
		{ "list", "--source=bpf", "--pid=1", NULL },
		{ "list", "-i", NULL },
		{ "list", "--sort=size", NULL },
		{ "list", "--pid=0", NULL },
		{ "list", "--pid=12x", NULL },
		{ "list", "--spec=x", NULL },
		{ "list", "--proc-root=", NULL },
		{ "list", "-x", NULL },
		{ "top", "-n", "0", NULL },
		{ "top", "-n", "-3", NULL },
		{ "top", "-n", "18446744073709551616", NULL },
		{ "top", "-i", "0", NULL },
		{ "top", "-i", "nan", NULL },
		{ "top", "-i", "inf", NULL },
		{ "top", "-i", "1e3", NULL },
		{ "top", "-i", ".", NULL },
		{ "top", "-i", NULL },
		{ "top", "-d", "1", NULL },			/* -d is --dir, top has none */
		{ "top", "--sort=cpu", NULL },
		{ "top", "--count", NULL },
		{ "top", "--iterations=3", NULL },		/* renamed --count */
		{ "top", "--pid=-1", NULL },
		{ "top", "something", NULL },
		{ "top", "--batch=1", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_result r;

		cli_runv(&r, cases[i]);
		if (r.status != 2 || !strstr(r.err, "drmacct ") || !strstr(r.err, "--help"))
			dt__fail_here(__FILE__, __LINE__, false,
				      "case %zu (%s %s): status %d, stderr:\n%s", i, cases[i][0],
				      cases[i][1] ? cases[i][1] : "", r.status, r.err);
		DT_EXPECT_STREQ(r.out, "");
		cli_result_free(&r);
	}
}

/* ---- validate ---- */

DT_TEST(validate_real_fixtures_pass)
{
	const char *args[16] = { "validate" };
	char paths[8][4096];
	struct cli_result r;
	size_t i;

	for (i = 0; i < 8; i++) {
		fixture(FIXTURES[i], paths[i], sizeof(paths[i]));
		args[i + 1] = paths[i];
	}
	args[9] = NULL;
	cli_runv(&r, args);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "8 checked against the current spec: 0 errors");
	/* panfrost's drm-curfreq-* is not a spec key: a warning with its line */
	EXPECT_HAS(r.out, "panfrost_1.txt:10: warning:");
	cli_result_free(&r);

	args[0] = "validate";
	args[1] = "--spec=2022";
	args[2] = paths[2];	/* i915_1 */
	args[3] = NULL;
	cli_runv(&r, args);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "1 checked against the 2022 spec: 0 errors, 0 warnings, 0 notes");
	cli_result_free(&r);
}

DT_TEST(validate_errors_exit_1)
{
	char bad[64], good[64];
	struct cli_result r;
	const struct jd *f;
	struct jd *doc;

	write_tmp(bad, sizeof(bad), "drm-driver: x\ndrm-client-id: 1\n"
				    "drm-engine-capacity-r: 0\ndrm-engine-r: 5 ns\n");
	write_tmp(good, sizeof(good), "drm-driver: x\ndrm-client-id: 1\ndrm-engine-r: 5 ns\n");

	cli_run(&r, "validate", good, NULL);
	DT_EXPECT_EQ(r.status, 0);
	cli_result_free(&r);

	cli_run(&r, "validate", good, bad, NULL);
	DT_EXPECT_EQ(r.status, 1);
	{
		char want[128];

		snprintf(want, sizeof(want), "%s:3: error:", bad);
		EXPECT_HAS(r.out, want);
	}
	EXPECT_HAS(r.out, "[capacity-zero]");
	EXPECT_HAS(r.out, "2 checked against the current spec: 1 error");
	cli_result_free(&r);

	/* -q: only errors and the summary */
	cli_run(&r, "validate", "-q", good, bad, NULL);
	DT_EXPECT_EQ(r.status, 1);
	DT_EXPECT_TRUE(strstr(r.out, "driver x: 0 errors") == NULL);
	EXPECT_HAS(r.out, "[capacity-zero]");
	cli_result_free(&r);

	/* Unreadable sources are failures, and the rest is still checked. */
	cli_run(&r, "validate", "/nonexistent/fdinfo", good, NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot read /nonexistent/fdinfo: No such file or directory");
	EXPECT_HAS(r.out, "1 checked against the current spec: 0 errors");
	EXPECT_HAS(r.out, "1 could not be read");
	cli_result_free(&r);

	/* A file named like a pid is reachable as ./NAME */
	cli_run(&r, "validate", "/tmp/../tmp/nonexistent-123", NULL);
	DT_EXPECT_EQ(r.status, 1);
	cli_result_free(&r);

	/* JSON: valid document with the counts and the finding. */
	cli_run(&r, "validate", "--json", good, bad, NULL);
	DT_EXPECT_EQ(r.status, 1);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	DT_EXPECT_STREQ(jd_str(doc, "schema"), "drmacct-validate/1");
	DT_EXPECT_EQ(jd_len(doc, "sources"), 2);
	DT_EXPECT_STREQ(jd_str(doc, "sources.0.source"), good);
	DT_EXPECT_EQ(jd_len(doc, "sources.0.findings"), 0);
	DT_EXPECT_STREQ(jd_str(doc, "sources.1.source"), bad);
	DT_EXPECT_EQ(jd_u64(doc, "sources.1.errors", 0), 1ull);
	f = jd_find_str(doc, "sources.1.findings", "code", "capacity-zero");
	DT_ASSERT_NE(f, NULL);
	DT_EXPECT_EQ(jd_u64(f, "line", 0), 3ull);
	DT_EXPECT_STREQ(jd_str(f, "severity"), "error");
	DT_EXPECT_EQ(jd_u64(doc, "summary.errors", 0), 1ull);
	DT_EXPECT_EQ(jd_u64(doc, "summary.sources", 0), 2ull);
	jd_free(doc);
	cli_result_free(&r);
	unlink(bad);
	unlink(good);
}

static const char *T7 = "drm-driver:\tsimgpu\ndrm-client-id:\t7\n"
			"drm-engine-render:\t%llu ns\ndrm-engine-copy:\t0 ns\n"
			"drm-engine-capacity-copy:\t2\ndrm-total-system:\t8 KiB\n"
			"drm-resident-system:\t4 KiB\n";
static const char *T8 = "drm-driver:\tsimgpu\ndrm-client-id:\t8\n"
			"drm-engine-render:\t%llu ns\ndrm-total-system:\t1 MiB\n";

static void add_client(struct proc_tree *pt, pid_t pid, int fd, const char *fmt,
		       unsigned long long busy)
{
	char text[512];

	snprintf(text, sizeof(text), fmt, busy);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, pid, fd, 226, 128, text), 0);
}

/*
 * 100 (parent) has client 7 on fds 3 and 4 (dup); 101 (forked child)
 * inherited fd 3; 101 also opened client 8; 102 has no DRM fds.
 */
static void build_tree(struct proc_tree *pt, unsigned long long b7, unsigned long long b8)
{
	DT_ASSERT_EQ(proc_tree_init(pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 100, "parent"), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 101, "child"), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 102, "bash"), 0);
	DT_ASSERT_EQ(proc_tree_add_link_fd(pt, 100, 0, "/dev/null"), 0);
	add_client(pt, 100, 3, T7, b7);
	add_client(pt, 100, 4, T7, b7);
	add_client(pt, 101, 3, T7, b7);
	add_client(pt, 101, 5, T8, b8);
	DT_ASSERT_EQ(proc_tree_add_link_fd(pt, 102, 0, "/dev/null"), 0);
}

static size_t count(const char *hay, const char *needle);

DT_TEST(validate_pid_fd_and_all)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *doc;
	char bad[256];

	build_tree(&pt, 5, 6);
	snprintf(bad, sizeof(bad), "drm-driver: x\ndrm-engine-capacity-r: 0\n");
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 103, "broken"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 103, 9, 226, 129, bad), 0);
	/* A DRM fd of a driver that prints no usage stats. */
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 102, 7, 226, 0, "pos:\t0\nflags:\t02\n"), 0);

	/* fds 3 and 4 of 100 are one client (dup): checked once */
	cli_run(&r, "validate", "--proc-root", pt.root, "100", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "/100/fdinfo/3: driver simgpu: 0 errors, 0 warnings, 0 notes "
			  "(client 7 held by 100:3, 100:4)\n");
	DT_EXPECT_TRUE(strstr(r.out, "/100/fdinfo/4") == NULL);
	EXPECT_HAS(r.out, "1 checked against the current spec: 0 errors, 0 warnings, 0 notes, "
			  "1 more fd of clients already checked\n");
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "101:5", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "1 checked");
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "103:9", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.out, "/103/fdinfo/9:2: error:");
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "100:0", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "100:0: not a DRM or accel device");
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "100:77", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "100:77: process has no such fd");
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "4242", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "4242: no such process");
	cli_result_free(&r);

	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 104, "idle"), 0);
	cli_run(&r, "validate", "--proc-root", pt.root, "104", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "104: process has no DRM or accel fds");
	cli_result_free(&r);

	/*
	 * --all: 5 usage-stats fds of 3 clients (7 on three fds), one with two
	 * errors; the no-stats fd said and counted, not judged
	 */
	cli_run(&r, "validate", "--proc-root", pt.root, "--all", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.out, "3 checked against the current spec: 2 errors");
	EXPECT_HAS(r.out, "2 more fds of clients already checked");
	EXPECT_HAS(r.out, ", 1 without usage stats\n");
	EXPECT_HAS(r.out, "/102/fdinfo/7: driver prints no usage stats (no drm- key; card0)\n");
	DT_EXPECT_EQ(count(r.out, "[driver-missing]"), (size_t)0);
	EXPECT_HAS(r.out, "(client 7 held by 100:3, 100:4, 101:3)\n");
	cli_result_free(&r);

	DT_ASSERT_EQ(proc_tree_remove(&pt, 103, ""), 0);
	cli_run(&r, "validate", "--proc-root", pt.root, "--all", "--json", NULL);
	DT_EXPECT_EQ(r.status, 0);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	DT_EXPECT_EQ(jd_u64(doc, "summary.sources", 0), 2ull);
	/* the two checked and the one without stats, which says so */
	DT_EXPECT_EQ(jd_len(doc, "sources"), 3);
	for (int i = 0, none = 0; i < 3; i++) {
		char k[64];

		snprintf(k, sizeof(k), "sources.%d.usage_stats", i);
		if (strcmp(jd_str(doc, k), "none")) {
			DT_EXPECT_STREQ(jd_str(doc, k), "full");
			continue;
		}
		DT_EXPECT_EQ(++none, 1);
		snprintf(k, sizeof(k), "sources.%d.pid", i);
		DT_EXPECT_EQ(jd_int(doc, k, -1), 102);
		snprintf(k, sizeof(k), "sources.%d.findings", i);
		DT_EXPECT_EQ(jd_len(doc, k), 0);
	}
	DT_EXPECT_EQ(jd_u64(doc, "summary.without_stats", 0), 1ull);
	DT_EXPECT_EQ(jd_u64(doc, "summary.shared_fds", 0), 2ull);
	DT_EXPECT_EQ(jd_u64(doc, "summary.errors", 1), 0ull);
	jd_free(doc);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/* ---- list ---- */

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * One client on two fds of a process (dup) is validated once: its findings
 * appear once, it counts once, and every PID:FD holding it is listed. The
 * same client id on another device, or texts without a client id, are other
 * clients.
 */
DT_TEST(validate_all_reports_dup_client_once)
{
	static const char bad7[] = "drm-driver:\tsimgpu\ndrm-client-id:\t7\n"
				   "drm-engine-render:\t5 ns\ndrm-engine-capacity-render:\t0\n";
	static const char noid[] = "drm-driver:\tsimgpu\ndrm-engine-render:\t5 ns\n";
	struct proc_tree pt;
	struct cli_result r;
	struct jd *doc;

	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 300, "gl"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 5, 226, 128, bad7), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 9, 226, 128, bad7), 0);

	cli_run(&r, "validate", "--proc-root", pt.root, "--all", NULL);
	DT_EXPECT_EQ(r.status, 1);	/* the error still fails the run */
	DT_EXPECT_EQ(count(r.out, "[capacity-zero]"), (size_t)1);
	EXPECT_HAS(r.out, "/300/fdinfo/5:4: error: ");
	DT_EXPECT_TRUE(strstr(r.out, "/300/fdinfo/9") == NULL);
	EXPECT_HAS(r.out, "/300/fdinfo/5: driver simgpu: 1 error, 0 warnings, 0 notes "
			  "(client 7 held by 300:5, 300:9)\n");
	EXPECT_HAS(r.out, "1 checked against the current spec: 1 error, 0 warnings, 0 notes, "
			  "1 more fd of clients already checked\n");
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "--all", "--json", NULL);
	DT_EXPECT_EQ(r.status, 1);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	/* one source, its finding once, both fds as holders */
	DT_ASSERT_EQ(jd_len(doc, "sources"), 1);
	DT_EXPECT_EQ(jd_len(doc, "sources.0.findings"), 1);
	DT_EXPECT_STREQ(jd_str(doc, "sources.0.findings.0.code"), "capacity-zero");
	DT_EXPECT_EQ(jd_len(doc, "sources.0.holders"), 2);
	DT_EXPECT_EQ(jd_int(doc, "sources.0.holders.0.pid", -1), 300);
	DT_EXPECT_EQ(jd_int(doc, "sources.0.holders.0.fd", -1), 5);
	DT_EXPECT_STREQ(jd_str(doc, "sources.0.holders.0.comm"), "gl");
	DT_EXPECT_EQ(jd_int(doc, "sources.0.holders.1.pid", -1), 300);
	DT_EXPECT_EQ(jd_int(doc, "sources.0.holders.1.fd", -1), 9);
	DT_EXPECT_EQ(jd_u64(doc, "summary.errors", 0), 1ull);	/* counted once */
	DT_EXPECT_EQ(jd_u64(doc, "summary.sources", 0), 1ull);
	DT_EXPECT_EQ(jd_u64(doc, "summary.shared_fds", 0), 1ull);
	jd_free(doc);
	cli_result_free(&r);

	/* Same id on another device; two fds without an id: 3 more clients. */
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 11, 226, 129, bad7), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 12, 226, 128, noid), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 13, 226, 128, noid), 0);
	cli_run(&r, "validate", "--proc-root", pt.root, "300", NULL);
	DT_EXPECT_EQ(r.status, 1);
	DT_EXPECT_EQ(count(r.out, "[capacity-zero]"), (size_t)2);
	EXPECT_HAS(r.out, "/300/fdinfo/11: driver simgpu: 1 error");
	EXPECT_HAS(r.out, "/300/fdinfo/12: driver simgpu: 0 errors");
	EXPECT_HAS(r.out, "/300/fdinfo/13: driver simgpu: 0 errors");
	EXPECT_HAS(r.out, "4 checked against the current spec: 2 errors, 0 warnings, 2 notes, "
			  "1 more fd of clients already checked\n");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(list_dedupes_and_attributes)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;
	int found = 0;

	build_tree(&pt, 1000000000ull, 0);
	cli_run(&r, "list", "--proc-root", pt.root, "--interval=0", "--sort=id", NULL);
	DT_EXPECT_EQ(r.status, 0);
	/* client 7 once, with both processes */
	EXPECT_HAS(r.out, "100,101");
	EXPECT_HAS(r.out, "2 clients in 2 processes");
	DT_EXPECT_EQ(count(r.out, "simgpu"), (size_t)2);
	EXPECT_HAS(r.out, "renderD128");
	EXPECT_HAS(r.out, "busy       1.000000000 s");
	EXPECT_HAS(r.out, "capacity 2");
	EXPECT_HAS(r.out, "total 8.0K resident 4.0K");
	cli_result_free(&r);

	/* the document, by value (json_dom), not by substring */
	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--json", "--sort=id", NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	if (!j)
		DT_FAIL("not JSON:\n%s", r.out);
	DT_EXPECT_STREQ(jd_str(j, "schema"), "drmacct-list/1");
	DT_EXPECT_EQ(jd_len(j, "clients"), 2);
	DT_EXPECT_EQ(jd_int(j, "clients.0.client_id", -1), 7);
	DT_EXPECT_EQ(jd_int(j, "clients.1.client_id", -1), 8);
	/* client 7: fds 3 and 4 of 100 and fd 3 of 101; client 8: fd 5 of 101 */
	DT_EXPECT_EQ(jd_len(j, "clients.0.holders"), 3);
	DT_EXPECT_EQ(jd_int(j, "clients.0.holders.2.pid", -1), 101);
	DT_EXPECT_EQ(jd_len(j, "clients.1.holders"), 1);
	DT_EXPECT_TRUE(jd_is_null(j, "interval_ns"));
	DT_EXPECT_TRUE(jd_is_null(j, "clients.0.engines.0.utilization"));
	DT_EXPECT_EQ(jd_u64(j, "discovery.drm_fds", 0), 4u);
	/* totals: 2 clients; the render total counts client 7 once */
	DT_EXPECT_EQ(jd_u64(j, "totals.clients", 0), 2u);
	DT_EXPECT_EQ(jd_u64(j, "totals.processes", 0), 2u);
	for (long e = 0; e < jd_len(j, "totals.engines"); e++) {
		char path[64];

		snprintf(path, sizeof(path), "totals.engines.%ld.busy_ns", e);
		if (jd_u64(j, path, 0) == 1000000000ull) {
			snprintf(path, sizeof(path), "totals.engines.%ld.clients", e);
			DT_EXPECT_EQ(jd_u64(j, path, 0), 2u);
			found++;
		}
	}
	DT_EXPECT_EQ(found, 1);
	/* memory totals: 8 KiB + 1 MiB, once each */
	DT_EXPECT_EQ(jd_u64(j, "totals.memory.0.total", 0), 1056768u);
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "-p", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "100      parent           1");
	EXPECT_HAS(r.out, "101      child            2");
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--pid", "100", "--json", NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	DT_EXPECT_EQ(jd_count_u64(j, "pid", 101), (size_t)0);
	DT_EXPECT_EQ(jd_count_u64(j, "client_id", 7), (size_t)1);
	DT_EXPECT_EQ(jd_len(j, "clients"), 1);
	DT_EXPECT_EQ(jd_u64(j, "clients.0.client_id", 0), 7ull);
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--pid", "4242", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "no process 4242");
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", "/nonexistent/proc", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot open /nonexistent/proc");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * Utilisation over a real interval: a helper process adds exactly 250 ms of
 * busy time to client 7 while list waits 0.5 s between its two samples.
 */
/*
 * The first line of @s that ends in a blank (or NULL): what a table pads a
 * cell with must not be left at the end of a line where nothing follows.
 */
static const char *trailing_blank(const char *s)
{
	for (const char *l = s; *l; ) {
		const char *e = strchr(l, '\n');

		if (!e)
			e = l + strlen(l);
		if (e > l && (e[-1] == ' ' || e[-1] == '\t'))
			return l;
		l = *e ? e + 1 : e;
	}
	return NULL;
}

/*
 * The tree the trailing-blank tests print: build_tree()'s, plus in pid 102
 * a core-only client and a named one with an engine and a region.
 */
static int build_blank_tree(struct proc_tree *pt)
{
	build_tree(pt, 1000000000ull, 0);
	if (proc_tree_add_drm_fd(pt, 102, 7, 226, 129, "drm-driver:\tcore\ndrm-client-id:\t9\n"))
		return -1;
	return proc_tree_add_drm_fd(pt, 102, 8, 226, 128,
				    "drm-driver:\tsimgpu\ndrm-client-id:\t10\n"
				    "drm-client-name:\tnamed\n"
				    "drm-engine-render:\t5 ns\ndrm-memory-vram:\t4 KiB\n");
}

/*
 * No table line ends in blanks: clients without a name (list's last
 * column), a core-only client (no MEMORY), a region with no value of its
 * own, each view of list and top's batch mode.
 */
DT_TEST(tables_have_no_trailing_blanks)
{
	static const char *const views[][8] = {
		{ "list", "-i", "0", NULL },
		{ "list", "-i", "0", "-p", NULL },
		{ "list", "-i", "0", "-p", "--sort=mem", NULL },
		{ "top", "-b", "-n", "2", "-i", "1ms", NULL },
		{ "top", "-b", "-n", "2", "-i", "1ms", "-p", NULL },
	};
	struct proc_tree pt;
	struct cli_result r;

	DT_ASSERT_EQ(build_blank_tree(&pt), 0);
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		const char *args[16] = { NULL };
		const char *bad;
		size_t n = 0;

		for (; views[v][n]; n++)
			args[n] = views[v][n];
		args[n++] = "--proc-root";
		args[n++] = pt.root;
		cli_runv(&r, args);
		DT_EXPECT_EQ(r.status, 0);
		/* the rows the blanks would follow are there */
		EXPECT_HAS(r.out, strcmp(views[v][0], "top") ? "parent" : "simgpu");
		bad = trailing_blank(r.out);
		if (bad)
			DT_FAIL("%s %s: a line ends in a blank: \"%.*s\"", views[v][0],
				views[v][3] ? views[v][3] : "", (int)strcspn(bad, "\n"), bad);
		cli_result_free(&r);
	}
	proc_tree_cleanup(&pt);
}

/*
 * The other commands' text output has no line ending in blanks either:
 * validate (every fd, one pid), check, record + report, stat, on the same
 * tree as tables_have_no_trailing_blanks (a core-only client, one with a
 * name, an engine and a region). Both streams are looked at; each command
 * must print something, or an empty output would pass. check needs BPF,
 * which the host tests do not load: here it only reaches its message
 * saying so (exit 1); its table is the VM tests'. bpf dump likewise.
 */
DT_TEST(reports_have_no_trailing_blanks)
{
	char rec[4096], pid[16];
	const char *const views[][12] = {
		{ "validate", "--all", "--proc-root", NULL },
		{ "validate", pid, "--proc-root", NULL },
		{ "check", "--proc-root", NULL },
		{ "record", "-n", "2", "-i", "1ms", "--no-bpf", "-o", rec, "--proc-root", NULL },
		{ "report", rec, NULL },
		{ "stat", "-i", "1ms", "--proc-root", NULL },
	};
	/* check: no BPF here (1); the others succeed */
	static const int status[] = { 0, 0, 1, 0, 0, 0 };
	struct proc_tree pt;
	struct cli_result r;

	DT_ASSERT_EQ(build_blank_tree(&pt), 0);
	snprintf(rec, sizeof(rec), "%s/trailing.rec", pt.root);
	snprintf(pid, sizeof(pid), "102");
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		const char *args[20] = { NULL };
		const char *bad;
		size_t n = 0;
		bool root = false;

		for (; views[v][n]; n++) {
			args[n] = views[v][n];
			root |= !strcmp(views[v][n], "--proc-root");
		}
		if (root)
			args[n++] = pt.root;
		if (!strcmp(views[v][0], "stat")) {
			args[n++] = "--";
			args[n++] = "true";
		}
		cli_runv(&r, args);
		DT_EXPECT_EQ(r.status, status[v]);
		if (!*r.out && !*r.err)
			DT_FAIL("%s: printed nothing", views[v][0]);
		bad = trailing_blank(r.out);
		if (!bad)
			bad = trailing_blank(r.err);
		if (bad)
			DT_FAIL("%s: a line ends in a blank: \"%.*s\"", views[v][0],
				(int)strcspn(bad, "\n"), bad);
		cli_result_free(&r);
	}
	proc_tree_cleanup(&pt);
}

DT_TEST(list_measures_utilisation)
{
	struct proc_tree pt;
	struct cli_result r;
	const struct jd *e;
	struct jd *j;
	double util;
	pid_t pid;
	int st;

	build_tree(&pt, 1000000000ull, 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		char text[512];
		struct timespec ts = { 0, 200000000 };

		nanosleep(&ts, NULL);
		snprintf(text, sizeof(text), T7, 1250000000ull);
		for (int fd = 3; fd <= 4; fd++)
			if (proc_tree_set_fdinfo(&pt, 100, fd, text))
				_exit(1);
		_exit(proc_tree_set_fdinfo(&pt, 101, 3, text) ? 1 : 0);
	}
	cli_run(&r, "list", "--proc-root", pt.root, "--interval=0.5", "--json", NULL);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	e = jd_find_str(jd_find_u64(j, "clients", "client_id", 7), "engines", "name", "render");
	DT_ASSERT_NE(e, NULL);
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 1250000000ull);
	DT_EXPECT_EQ(jd_u64(e, "delta_busy_ns", 0), 250000000ull);
	util = jd_num(e, "utilization", -1);
	jd_free(j);
	/* 0.25 s over an interval of at least 0.5 s (longer on a loaded box) */
	/* doubles: the harness's ordered compares are for integers */
	dt_info("utilization %.6f", util);
	DT_EXPECT_TRUE(util <= 0.5 + 1e-6);
	DT_EXPECT_TRUE(util > 0.1);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/* ---- top ---- */

DT_TEST(top_batch_snapshots)
{
	struct proc_tree pt;
	struct cli_result r;

	build_tree(&pt, 5, 6);
	cli_run(&r, "top", "--proc-root", pt.root, "-n", "3", "-i", "50ms", NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_EQ(count(r.out, "== drmacct top: update "), (size_t)3);
	EXPECT_HAS(r.out, "update 3, interval");
	DT_EXPECT_EQ(count(r.out, "2 clients in 2 processes"), (size_t)3);
	DT_EXPECT_TRUE(strchr(r.out, '\033') == NULL);	/* no escapes off a tty */
	EXPECT_HAS(r.out, "util   0.0%");
	cli_result_free(&r);

	cli_run(&r, "top", "--proc-root", pt.root, "-n", "1", "-i", "0.01", "-p", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "101      child            2");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * top --pid P while P exits: no "no process" failure; the snapshots before
 * show its client, then top says the process exited and ends with status 0
 * (long before -n runs out). A pid that never existed is still an error.
 */
DT_TEST(top_pid_exits_while_watched)
{
	struct proc_tree pt;
	struct cli_result r;
	const char *msg;
	pid_t pid;
	int st;

	build_tree(&pt, 5, 6);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct timespec ts = { 0, 600000000 };

		nanosleep(&ts, NULL);
		_exit(proc_tree_remove(&pt, 100, "") ? 1 : 0);
	}
	cli_run(&r, "top", "--proc-root", pt.root, "--pid", "100", "-i", "100ms", "-n", "200",
		NULL);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.err, "no process") == NULL);
	msg = strstr(r.out, "drmacct top: process 100 (parent) exited after ");
	DT_ASSERT_TRUE(msg != NULL);
	DT_EXPECT_TRUE(strchr(msg, '\n') == msg + strlen(msg) - 1);	/* the last line */
	/* It was watched before it went: client 7 of process 100. */
	DT_EXPECT_GE(count(r.out, "== drmacct top: update "), (size_t)1);
	EXPECT_HAS(r.out, "1 client in 1 process\n");
	DT_EXPECT_LT(count(r.out, "== drmacct top: update "), (size_t)200);
	cli_result_free(&r);

	cli_run(&r, "top", "--proc-root", pt.root, "--pid", "100", "-n", "1", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "no process 100");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * Names any process controls -- comm (non-UTF-8, quotes, escape sequences,
 * a C1 CSI), drm-driver, drm-client-name, engine names -- never reach a
 * terminal as control bytes and never break the JSON: the table shows '?'
 * for each unsafe byte, JSON keeps them escaped (invalid UTF-8 as U+FFFD).
 */
DT_TEST(hostile_names_table_and_json)
{
	static const char text[] = "drm-driver:\tev\033[2Jil\ndrm-client-id:\t4\n"
				   "drm-client-name:\tq\"uo\\te\033]0;x\007\n"
				   "drm-engine-r\033[1m:\t10 ns\n";
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;

	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 77, "a\"b\\c\033[31m\xc2\x9b\xff\xfe\xc3\xa9"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 77, 3, 226, 128, text), 0);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strchr(r.out, '\033') == NULL);
	DT_EXPECT_TRUE(strchr(r.out, '\007') == NULL);
	DT_EXPECT_TRUE(strstr(r.out, "\xc2\x9b") == NULL);
	/* C1 CSI (2 bytes) and 2 invalid bytes: 4 '?'; valid UTF-8 kept */
	EXPECT_HAS(r.out, "a\"b\\c?[31m????\xc3\xa9 ");
	EXPECT_HAS(r.out, "ev?[2Jil");
	EXPECT_HAS(r.out, "q\"uo\\te?]0;x?");
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--json", NULL);
	DT_EXPECT_EQ(r.status, 0);
	/* the strict parser takes no raw control byte: all of them escaped */
	j = jd_parse(r.out);
	DT_ASSERT_NE(j, NULL);
	/* the invalid bytes became U+FFFD, the rest is kept */
	DT_EXPECT_STREQ(jd_str(j, "clients.0.holders.0.comm"),
			"a\"b\\c\033[31m\xc2\x9b\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9");
	DT_EXPECT_STREQ(jd_str(j, "clients.0.driver"), "ev\033[2Jil");
	DT_EXPECT_STREQ(jd_str(j, "clients.0.client_name"), "q\"uo\\te\033]0;x\007");
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "validate", "--proc-root", pt.root, "77", NULL);
	DT_EXPECT_TRUE(strchr(r.out, '\033') == NULL);
	EXPECT_HAS(r.out, "driver ev?[2Jil:");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * stat exits as a shell would: the command's own status, 128 + N when
 * signal N ended it, 127 when the command is not found and 126 when it
 * cannot be run -- never 1 for a command that did not run. (--no-bpf: the
 * /proc polling path; the BPF path shares spawn() and the status code.)
 */
DT_TEST_TIMEOUT(stat_exit_status_like_a_shell, 60)
{
	static const struct {
		const char *cmd[4];
		int status;
		const char *err;
	} cases[] = {
		{ { "/bin/sh", "-c", "exit 3", NULL }, 3, "seconds time elapsed" },
		{ { "/bin/sh", "-c", "exit 0", NULL }, 0, "seconds time elapsed" },
		{ { "/bin/sh", "-c", "kill -TERM $$", NULL }, 128 + SIGTERM, "seconds time elapsed" },
		{ { "drmacct-no-such-command", NULL }, 127,
		  "cannot run 'drmacct-no-such-command': No such file or directory" },
		{ { "/nonexistent/dir/cmd", NULL }, 127, "cannot run '/nonexistent/dir/cmd'" },
		{ { "/dev/null", NULL }, 126, "cannot run '/dev/null': Permission denied" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[10] = { "stat", "--no-bpf", "--interval", "0.05", "--" };
		struct cli_result r;
		size_t n = 5;

		for (size_t k = 0; cases[i].cmd[k]; k++)
			args[n++] = cases[i].cmd[k];
		args[n] = NULL;
		cli_runv(&r, args);
		dt_info("stat -- %s: %d", cases[i].cmd[0], r.status);
		DT_EXPECT_EQ(r.status, cases[i].status);
		EXPECT_HAS(r.err, cases[i].err);
		cli_result_free(&r);
	}
}

/* top on a pseudo terminal. */
struct ptyrun {
	int master, slave;
	pid_t pid;
	struct termios before;
	char out[1 << 16];
	size_t len;
};

/*
 * drmacct top on a new pseudo terminal (100x30), with @env ("NAME=value",
 * NULL-terminated; NULL: TERM=xterm only) and @args after the fixed ones.
 */
static void pty_start_with(struct ptyrun *p, const char *root, const char *const *env,
			   const char *const *args)
{
	const char *bin = cli_bin();
	struct winsize ws = { .ws_row = 30, .ws_col = 100 };
	char *name;

	memset(p, 0, sizeof(*p));
	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	DT_ASSERT_GE(p->master, 0);
	DT_ASSERT_EQ(grantpt(p->master), 0);
	DT_ASSERT_EQ(unlockpt(p->master), 0);
	name = ptsname(p->master);
	DT_ASSERT_TRUE(name != NULL);
	p->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	DT_ASSERT_GE(p->slave, 0);
	DT_ASSERT_EQ(ioctl(p->slave, TIOCSWINSZ, &ws), 0);
	DT_ASSERT_EQ(tcgetattr(p->slave, &p->before), 0);
	DT_ASSERT_TRUE(p->before.c_lflag & ICANON);
	DT_ASSERT_TRUE(p->before.c_lflag & ECHO);
	p->pid = fork();
	DT_ASSERT_GE(p->pid, 0);
	if (p->pid == 0) {
		int fd;

		setsid();
		fd = open(name, O_RDWR);	/* becomes the controlling tty */
		if (fd < 0)
			_exit(127);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		cli_child_env();
		/* a terminal with a terminfo entry, whatever the test runs under */
		setenv("TERM", "xterm", 1);
		unsetenv("NO_COLOR");
		for (size_t i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		{
			const char *argv[16] = { "drmacct", "top", "--proc-root", root, "-i", "0.1" };
			size_t n = 6;

			for (size_t i = 0; args && args[i] && n < 15; i++)
				argv[n++] = args[i];
			argv[n] = NULL;
			execv(bin, (char **)argv);
		}
		_exit(127);
	}
}

static void pty_start(struct ptyrun *p, const char *root)
{
	pty_start_with(p, root, NULL, NULL);
}

/* Read from the master until @needle shows up (or timeout). */
static bool pty_wait_for(struct ptyrun *p, const char *needle, int ms)
{
	uint64_t end = (uint64_t)time(NULL) * 1000 + (uint64_t)ms;

	for (;;) {
		struct pollfd pf = { .fd = p->master, .events = POLLIN };
		ssize_t n;

		p->out[p->len] = '\0';
		if (strstr(p->out, needle))
			return true;
		if ((uint64_t)time(NULL) * 1000 > end || p->len >= sizeof(p->out) - 1)
			return false;
		if (poll(&pf, 1, 100) <= 0)
			continue;
		n = read(p->master, p->out + p->len, sizeof(p->out) - 1 - p->len);
		if (n <= 0)
			return strstr(p->out, needle) != NULL;
		p->len += (size_t)n;
	}
}

/* Wait until @needle shows up in what was read after byte @mark. */
static bool pty_wait_after(struct ptyrun *p, size_t mark, const char *needle, int ms)
{
	for (int i = 0; i < ms / 100; i++) {
		p->out[p->len] = '\0';
		if (strstr(p->out + mark, needle))
			return true;
		pty_wait_for(p, "\001never\001", 100);	/* keep draining */
	}
	p->out[p->len] = '\0';
	return strstr(p->out + mark, needle) != NULL;
}

static int pty_wait_exit(struct ptyrun *p)
{
	int st = 0;

	for (int i = 0; i < 100; i++) {
		pid_t w;

		pty_wait_for(p, "\001never\001", 50);	/* keep draining */
		w = waitpid(p->pid, &st, WNOHANG);
		if (w == p->pid)
			return st;
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &st, 0);
	DT_FAIL("drmacct top did not exit");
	return st;
}

static void expect_restored(struct ptyrun *p)
{
	struct termios now;

	DT_ASSERT_EQ(tcgetattr(p->slave, &now), 0);
	DT_EXPECT_EQ(now.c_lflag, p->before.c_lflag);
	DT_EXPECT_EQ(now.c_iflag, p->before.c_iflag);
	DT_EXPECT_EQ(now.c_oflag, p->before.c_oflag);
	DT_EXPECT_EQ(now.c_cc[VMIN], p->before.c_cc[VMIN]);
	DT_EXPECT_EQ(now.c_cc[VTIME], p->before.c_cc[VTIME]);
	p->out[p->len] = '\0';
	/* left the alternate screen and showed the cursor again */
	DT_EXPECT_TRUE(strstr(p->out, "\033[?25h\033[?1049l") != NULL);
}

static void expect_raw(struct ptyrun *p)
{
	struct termios now;

	DT_ASSERT_EQ(tcgetattr(p->slave, &now), 0);
	DT_EXPECT_FALSE(now.c_lflag & ICANON);
	DT_EXPECT_FALSE(now.c_lflag & ECHO);
}

DT_TEST_TIMEOUT(top_tty_q_quits_and_restores, 60)
{
	struct proc_tree pt;
	struct ptyrun p;
	size_t mark;
	int st;

	build_tree(&pt, 5, 6);
	pty_start(&p, pt.root);
	DT_ASSERT_TRUE(pty_wait_for(&p, "drmacct top", 10000));
	DT_ASSERT_TRUE(pty_wait_for(&p, "renderD128", 10000));
	expect_raw(&p);
	DT_EXPECT_TRUE(strstr(p.out, "\033[?1049h") != NULL);
	/*
	 * A sort key: the title follows. curses writes only what changed
	 * ("mem" where "util" was), so the new text is looked for after the key.
	 */
	mark = p.len;
	DT_ASSERT_EQ(write(p.master, "m", 1), 1);
	DT_EXPECT_TRUE(pty_wait_after(&p, mark, "mem", 10000));
	DT_ASSERT_EQ(write(p.master, "P", 1), 1);
	DT_EXPECT_TRUE(pty_wait_for(&p, "CLIENTS", 10000));
	DT_ASSERT_EQ(write(p.master, "q", 1), 1);
	st = pty_wait_exit(&p);
	DT_EXPECT_TRUE(WIFEXITED(st));
	DT_EXPECT_EQ(WEXITSTATUS(st), 0);
	expect_restored(&p);
	close(p.master);
	close(p.slave);
	proc_tree_cleanup(&pt);
}

static void signal_case(int sig)
{
	struct proc_tree pt;
	struct ptyrun p;
	int st;

	build_tree(&pt, 5, 6);
	pty_start(&p, pt.root);
	DT_ASSERT_TRUE(pty_wait_for(&p, "renderD128", 10000));
	expect_raw(&p);
	DT_ASSERT_EQ(kill(p.pid, sig), 0);
	st = pty_wait_exit(&p);
	/* the signal is re-raised after the terminal is restored */
	DT_EXPECT_TRUE(WIFSIGNALED(st));
	if (WIFSIGNALED(st))
		DT_EXPECT_EQ(WTERMSIG(st), sig);
	else
		dt_info("exit status %d", WEXITSTATUS(st));
	expect_restored(&p);
	close(p.master);
	close(p.slave);
	proc_tree_cleanup(&pt);
}

DT_TEST_TIMEOUT(top_tty_sigterm_restores, 60)
{
	signal_case(SIGTERM);
}

DT_TEST_TIMEOUT(top_tty_sigint_restores, 60)
{
	signal_case(SIGINT);
}

DT_TEST_TIMEOUT(top_tty_sighup_restores, 60)
{
	signal_case(SIGHUP);
}

/* A terminal that cannot take the full-screen view: plain snapshots, and why. */
static void plain_on(const char *term, const char *why)
{
	static const char *const args[] = { "-n", "2", NULL };
	const char *env[] = { term, NULL };
	struct proc_tree pt;
	struct ptyrun p;
	int st;

	build_tree(&pt, 5, 6);
	pty_start_with(&p, pt.root, env, args);
	st = pty_wait_exit(&p);
	p.out[p.len] = '\0';
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	DT_EXPECT_TRUE(strstr(p.out, why) != NULL);
	DT_EXPECT_TRUE(strstr(p.out, "plain snapshots instead") != NULL);
	DT_EXPECT_EQ(count(p.out, "== drmacct top: update "), (size_t)2);
	DT_EXPECT_TRUE(strchr(p.out, '\033') == NULL);	/* not one escape sequence */
	if (strchr(p.out, '\033') || !strstr(p.out, why))
		dt_info("%s", p.out);
	close(p.master);
	close(p.slave);
	proc_tree_cleanup(&pt);
}

DT_TEST_TIMEOUT(top_tty_dumb_terminal_gets_snapshots, 60)
{
	plain_on("TERM=dumb", "TERM=dumb cannot move the cursor");
	plain_on("TERM=drmacct-no-such-terminal", "no terminfo entry for "
		 "TERM=drmacct-no-such-terminal");
}

/*
 * One client at exactly 50 % (cycles over total cycles, fed one text per
 * read): its bars are Unicode blocks in a UTF-8 locale and '#' in the C
 * locale; the utilisation levels are coloured unless NO_COLOR is set.
 */
static void screen_case(const char *const *env, const char *want, const char *refuse)
{
	static const char *texts[200];
	struct proc_tree pt;
	struct ptyrun p;
	pid_t feeder;
	int st;

	for (int k = 0; k < 200; k++) {
		char *t;

		DT_ASSERT_GT(asprintf(&t, "drm-driver:\txe\ndrm-client-id:\t3\n"
				      "drm-cycles-rcs:\t%d\ndrm-total-cycles-rcs:\t%d\n",
				      (k + 1) * 5000, (k + 1) * 10000), 0);
		texts[k] = t;
	}
	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 300, "half"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 300, 3, 226, 128, texts[0]), 0);
	feeder = proc_tree_feed(&pt, 300, 3, texts, 200, NULL, NULL);
	DT_ASSERT_GT(feeder, 0);
	pty_start_with(&p, pt.root, env, NULL);
	DT_EXPECT_TRUE(pty_wait_for(&p, want, 10000));
	p.out[p.len] = '\0';
	DT_EXPECT_TRUE(strstr(p.out, "50%") != NULL);
	DT_EXPECT_TRUE(refuse == NULL || strstr(p.out, refuse) == NULL);
	if (!strstr(p.out, want) || (refuse && strstr(p.out, refuse)))
		dt_info("want '%s', refuse '%s'; got:\n%s", want, refuse ? refuse : "", p.out);
	DT_ASSERT_EQ(write(p.master, "q", 1), 1);
	st = pty_wait_exit(&p);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	expect_restored(&p);
	close(p.master);
	close(p.slave);
	proc_tree_feed_stop(feeder);
	proc_tree_cleanup(&pt);
	for (int k = 0; k < 200; k++)
		free((char *)texts[k]);
}

DT_TEST_TIMEOUT(top_tty_unicode_bars_ascii_fallback_and_no_color, 90)
{
	/* 50 % of a 5-cell bar: two full blocks and a half (U+2588, U+258C) */
	screen_case((const char *const[]){ "LC_ALL=C.UTF-8", NULL }, "\u2588\u2588\u258c", NULL);
	screen_case((const char *const[]){ "LC_ALL=C", NULL }, "###", "\xe2\x96");
	/* xterm's setaf: ESC [ 3 <colour> m; yellow from 50 % to 80 % */
	screen_case((const char *const[]){ "LC_ALL=C.UTF-8", NULL }, "\033[33m", NULL);
	screen_case((const char *const[]){ "LC_ALL=C.UTF-8", "NO_COLOR=1", NULL }, "50%",
		    "\033[33m");
}

DT_MAIN
