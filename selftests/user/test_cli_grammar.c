// SPDX-License-Identifier: MIT
/*
 * test_cli_grammar.c - the option grammar every drmacct command shares:
 * durations with units, the same letter meaning the same everywhere, '-' as
 * stdin/stdout, binary output refused on a terminal, --json where there is
 * output (asserted by parsing it), exit codes (EPIPE, conflicts, nothing
 * read) and one help layout.
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

static const char *fdinfo(char *buf, size_t len, unsigned int id, unsigned long long busy,
			  unsigned long long mem)
{
	snprintf(buf, len,
		 "drm-driver:\tsimgpu\n"
		 "drm-pdev:\t0000:00:02.0\n"
		 "drm-client-id:\t%u\n"
		 "drm-engine-render:\t%llu ns\n"
		 "drm-engine-copy:\t0 ns\n"
		 "drm-total-system:\t%llu\n",
		 id, busy, mem);
	return buf;
}

/* pid 100 "alpha" client 7 (busy 3 s, 4 KiB), pid 200 "beta" client 9 (1 s, 1 MiB),
 * pid 300 "gamma" client 5 (2 s, 64 KiB); 200 also holds client 7 (fd passing). */
static void build(struct proc_tree *pt)
{
	char t[512];

	DT_ASSERT_EQ(proc_tree_init(pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 100, "alpha"), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 200, "beta"), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 300, "gamma"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 100, 3, 226, 128,
					  fdinfo(t, sizeof(t), 7, 3000000000ull, 4096)), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 200, 4, 226, 128,
					  fdinfo(t, sizeof(t), 7, 3000000000ull, 4096)), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 200, 5, 226, 128,
					  fdinfo(t, sizeof(t), 9, 1000000000ull, 1048576)), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 300, 6, 226, 128,
					  fdinfo(t, sizeof(t), 5, 2000000000ull, 65536)), 0);
}

static struct jd *parse_ok(const char *text)
{
	struct jd *j = jd_parse(text);

	if (!j)
		DT_FAIL("not JSON:\n%s", text);
	return j;
}

/* ---- durations ---- */

DT_TEST(durations_take_units_bare_is_seconds)
{
	static const struct {
		const char *cmd[3];
	} interval_cmds[] = {
		{ { "list" } }, { { "top" } }, { { "record" } }, { { "check" } },
		{ { "stat" } },
	};
	static const char *const bad[] = { "5x", "ms", "-1", "1e3", "nan", "2h", "61m", "3601",
					   "0.5ms", "1.2.3", "" };
	struct cli_result r;

	for (size_t c = 0; c < sizeof(interval_cmds) / sizeof(interval_cmds[0]); c++) {
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			const char *args[] = { interval_cmds[c].cmd[0], "-i", bad[b], "--", "true",
					       NULL };

			/* stat needs its command; the others reject the operand later */
			if (strcmp(args[0], "stat"))
				args[3] = NULL;
			cli_runv(&r, args);
			if (r.status != 2 || !strstr(r.err, "bad interval"))
				DT_FAIL("%s -i '%s': status %d, stderr %s", args[0], bad[b],
					r.status, r.err);
			cli_result_free(&r);
		}
		/* 0 is one sample for list only */
		if (strcmp(interval_cmds[c].cmd[0], "list")) {
			const char *args[] = { interval_cmds[c].cmd[0], "--interval=0", "--", "true",
					       NULL };

			if (strcmp(args[0], "stat"))
				args[2] = NULL;
			cli_runv(&r, args);
			DT_EXPECT_EQ(r.status, 2);
			cli_result_free(&r);
		}
	}
}

DT_TEST(durations_mean_what_they_say)
{
	static const struct {
		const char *arg;
		unsigned long long ns;
	} cases[] = {
		{ "5", 5000000000ull },		/* record -i 5 is five seconds */
		{ "0.25", 250000000ull },
		{ "250ms", 250000000ull },
		{ "2s", 2000000000ull },
		{ "1.5m", 90000000000ull },
		{ "1h", 3600000000000ull },
	};
	struct proc_tree pt;
	struct cli_result r;
	char out[PATH_MAX];

	build(&pt);
	snprintf(out, sizeof(out), "%s/x.rec", pt.base);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jd *j;

		/* -n 1: one sample, the header keeps the interval exactly */
		cli_run(&r, "record", "--proc-root", pt.root, "-i", cases[i].arg, "-n", "1",
			"-o", out, NULL);
		DT_ASSERT_EQ(r.status, 0);
		cli_result_free(&r);
		cli_run(&r, "report", "--json", out, NULL);
		DT_ASSERT_EQ(r.status, 0);
		j = parse_ok(r.out);
		DT_EXPECT_EQ(jd_u64(j, "interval_ns", 0), (uint64_t)cases[i].ns);
		jd_free(j);
		cli_result_free(&r);
	}
	/* list measures over the interval it was given: at least 200 ms */
	cli_run(&r, "list", "--proc-root", pt.root, "-i", "200ms", "--json", NULL);
	DT_ASSERT_EQ(r.status, 0);
	{
		struct jd *j = parse_ok(r.out);

		DT_EXPECT_GE(jd_u64(j, "interval_ns", 0), (uint64_t)200000000);
		DT_EXPECT_LT(jd_u64(j, "interval_ns", 0), (uint64_t)60000000000ull);
		jd_free(j);
	}
	cli_result_free(&r);
	/* --duration of record: a duration too */
	cli_run(&r, "record", "--proc-root", pt.root, "-i", "20ms", "--duration", "100ms",
		"-o", out, NULL);
	DT_EXPECT_EQ(r.status, 0);
	cli_result_free(&r);
	cli_run(&r, "record", "--duration", "5parsecs", "-o", out, NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "bad duration");
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/* ---- one meaning per letter ---- */

DT_TEST(letters_mean_one_thing)
{
	/* Letters that moved: each of these is now an unknown option (2). */
	static const char *const gone[][5] = {
		{ "top", "-d", "1", NULL },			/* -d is --dir */
		{ "record", "-d", "1", NULL },			/* --duration has no letter */
		{ "validate", "-s", "2022", "x", NULL },	/* -s is --sort */
		{ "export", "-p", NULL },			/* -p is --processes */
		{ "check", "-t", "5", NULL },			/* -t is --trace-events */
		{ "bpf", "start", "-a", "btf", NULL },		/* -a is --all */
		{ "bpf", "start", "-r", "4096", NULL },		/* -r is --reverse */
		{ "top", "--iterations=2", NULL },		/* now --count */
	};
	struct cli_result r;

	for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		cli_runv(&r, gone[i]);
		if (r.status != 2 || !strstr(r.err, "unknown option"))
			DT_FAIL("%s %s: status %d, stderr %s", gone[i][0], gone[i][1], r.status,
				r.err);
		cli_result_free(&r);
	}
	/* -n is a count in top and record alike */
	cli_run(&r, "top", "-n", "0", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "bad count");
	cli_result_free(&r);
	cli_run(&r, "record", "-n", "0", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "bad count");
	cli_result_free(&r);
}

/* ---- '-' and terminals ---- */

DT_TEST(dash_is_stdin_and_stdout)
{
	struct proc_tree pt;
	struct cli_result r;
	char in[PATH_MAX], rec[PATH_MAX], t[512];
	FILE *f;
	struct jd *j;

	build(&pt);
	snprintf(in, sizeof(in), "%s/in.txt", pt.base);
	f = fopen(in, "w");
	DT_ASSERT_TRUE(f != NULL);
	fputs(fdinfo(t, sizeof(t), 11, 5, 6), f);
	fputs("drm-engine-capacity-copy:\t0\n", f);	/* a spec error */
	fclose(f);
	cli_run_io(&r, &(struct cli_io){ .in = in },
		   (const char *const[]){ "validate", "--json", "-", NULL });
	DT_EXPECT_EQ(r.status, 1);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.source"), "<stdin>");
	DT_EXPECT_EQ(jd_int(j, "sources.0.client_id", -1), 11);
	DT_EXPECT_EQ(jd_int(j, "sources.0.errors", -1), 1);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.findings.0.code"), "capacity-zero");
	jd_free(j);
	cli_result_free(&r);

	/*
	 * stdin that is a character device: read like any other. An empty text
	 * has no drm- key: no usage stats, nothing checked (4), not a spec error.
	 */
	cli_run_io(&r, &(struct cli_io){ .in = "/dev/null" },
		   (const char *const[]){ "validate", "--json", "-", NULL });
	DT_EXPECT_EQ(r.status, 4);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.source"), "<stdin>");
	DT_EXPECT_TRUE(jd_path(j, "sources.0.read_error") == NULL);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.usage_stats"), "none");
	DT_EXPECT_EQ(jd_int(j, "sources.0.errors", -1), 0);
	DT_EXPECT_EQ(jd_int(j, "summary.without_stats", -1), 1);
	jd_free(j);
	cli_result_free(&r);

	/* record -o - into a file, report - from it */
	snprintf(rec, sizeof(rec), "%s/s.rec", pt.base);
	{
		char cmd[3 * PATH_MAX];

		snprintf(cmd, sizeof(cmd), "%s record --proc-root %s -i 10ms -n 2 -o - > %s",
			 cli_bin(), pt.root, rec);
		cli_child_env();
		DT_ASSERT_EQ(system(cmd), 0);
	}
	cli_run_io(&r, &(struct cli_io){ .in = rec },
		   (const char *const[]){ "report", "--json", "-", NULL });
	DT_EXPECT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_EQ(jd_len(j, "clients"), 3);
	jd_free(j);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(binary_to_a_terminal_is_refused)
{
	struct cli_result r;

	cli_run_io(&r, &(struct cli_io){ .out = CLI_OUT_PTY },
		   (const char *const[]){ "record", "-o", "-", "-n", "1", NULL });
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "refusing to write binary data to a terminal");
	DT_EXPECT_TRUE(strstr(r.out, "DRMACCT") == NULL);
	cli_result_free(&r);
	/* text output to a terminal is fine */
	cli_run_io(&r, &(struct cli_io){ .out = CLI_OUT_PTY },
		   (const char *const[]){ "--version", NULL });
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "drmacct");
	cli_result_free(&r);
}

/* ---- JSON everywhere ---- */

DT_TEST(list_json_follows_sort_and_reverse)
{
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;

	build(&pt);
	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--json", "--sort=mem", NULL);
	DT_ASSERT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "sort"), "mem");
	DT_EXPECT_EQ(jd_len(j, "clients"), 3);
	/* most memory first: 9 (1 MiB), 5 (64 KiB), 7 (4 KiB) */
	DT_EXPECT_EQ(jd_int(j, "clients.0.client_id", -1), 9);
	DT_EXPECT_EQ(jd_int(j, "clients.1.client_id", -1), 5);
	DT_EXPECT_EQ(jd_int(j, "clients.2.client_id", -1), 7);
	for (int i = 0; i < 3; i++) {
		char p[32];

		snprintf(p, sizeof(p), "clients.%d.index", i);
		DT_EXPECT_EQ(jd_int(j, p, -1), i);
	}
	/* processes refer to clients by their position in this array */
	for (long i = 0; i < jd_len(j, "processes"); i++) {
		char p[64];
		long pid;

		snprintf(p, sizeof(p), "processes.%ld.pid", i);
		pid = (long)jd_int(j, p, -1);
		snprintf(p, sizeof(p), "processes.%ld.clients", i);
		for (long k = 0; k < jd_len(j, p); k++) {
			char q[96], h[96];
			long idx, n;
			bool held = false;

			snprintf(q, sizeof(q), "processes.%ld.clients.%ld", i, k);
			idx = (long)jd_int(j, q, -1);
			snprintf(h, sizeof(h), "clients.%ld.holders", idx);
			n = jd_len(j, h);
			for (long m = 0; m < n; m++) {
				snprintf(h, sizeof(h), "clients.%ld.holders.%ld.pid", idx, m);
				held |= jd_int(j, h, -1) == pid;
			}
			if (!held)
				DT_FAIL("process %ld lists client index %ld that it does not hold",
					pid, idx);
		}
	}
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--json", "--sort=mem", "-r", NULL);
	DT_ASSERT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_EQ(jd_int(j, "clients.0.client_id", -1), 7);
	DT_EXPECT_EQ(jd_int(j, "clients.2.client_id", -1), 9);
	DT_EXPECT_TRUE(jd_path(j, "reverse") && jd_path(j, "reverse")->b);
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--json", "--sort=pid", NULL);
	j = parse_ok(r.out);
	DT_EXPECT_EQ(jd_int(j, "processes.0.pid", -1), 100);
	DT_EXPECT_EQ(jd_int(j, "processes.2.pid", -1), 300);
	DT_EXPECT_EQ(jd_int(j, "clients.0.holders.0.pid", -1), 100);
	jd_free(j);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * The tests' one JSON parser (json_dom, also behind cli_json_valid()) is
 * strict: what RFC 8259 allows parses, the usual near misses do not.
 */
DT_TEST(json_checker_is_strict)
{
	static const char *const good[] = {
		"{\"a\": [1, -0.5e3, 0, true, false, null, \"x\\u00e9\\n\\\"\"]}",
		" [ ] ", "\"\"", "-0", "1E+2", "{\"\\ud83d\\ude00\": {}}",
	};
	static const char *const bad[] = {
		"{\"a\": 01}", "[1,]", "{\"a\" 1}", "\"tab\there\"", "\"\\x\"", "[1] x",
		"{\"a\": 1", "\"\\u12\"", "nul", "", "1.", ".5", "+1", "{,}", "[true false]",
		"{\"a\":1,}", "'s'",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!cli_json_valid(good[i]))
			DT_FAIL("valid JSON refused: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_json_valid(bad[i]))
			DT_FAIL("invalid JSON accepted: %s", bad[i]);
}

DT_TEST(top_json_lines)
{
	struct proc_tree pt;
	struct cli_result r;
	char *line, *save = NULL;
	int n = 0;

	build(&pt);
	cli_run(&r, "top", "--proc-root", pt.root, "--json", "-n", "3", "-i", "20ms",
		"--sort=id", NULL);
	DT_ASSERT_EQ(r.status, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct jd *j = parse_ok(line);

		n++;
		DT_EXPECT_STREQ(jd_str(j, "schema"), "drmacct-list/1");
		DT_EXPECT_EQ(jd_int(j, "update", -1), n);
		DT_EXPECT_EQ(jd_len(j, "clients"), 3);
		DT_EXPECT_EQ(jd_int(j, "clients.0.client_id", -1), 5);
		DT_EXPECT_GT(jd_u64(j, "interval_ns", 0), (uint64_t)0);
		jd_free(j);
	}
	DT_EXPECT_EQ(n, 3);
	DT_EXPECT_TRUE(strstr(r.err, "note") == NULL);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/*
 * top's batch and JSON output carry each process's command line (NULs as
 * spaces) and cgroup v2 path (the "0::" line, not a v1 one); a process
 * without them has null, not comm.
 */
DT_TEST(top_cmdline_and_cgroup)
{
	static const char cmd[] = "/usr/bin/beta\0--frames\0000\0two words\0";
	static const char cg[] = "12:cpuset:/v1-wrong\n0::/machine.slice/beta-ctr.scope\n";
	struct proc_tree pt;
	struct cli_result r;
	struct jd *j;
	int beta = -1;

	build(&pt);
	DT_ASSERT_EQ(proc_tree_write(&pt, 200, "cmdline", cmd, sizeof(cmd) - 1), 0);
	DT_ASSERT_EQ(proc_tree_write(&pt, 200, "cgroup", cg, sizeof(cg) - 1), 0);
	cli_run(&r, "top", "--proc-root", pt.root, "--json", "-n", "1", "-i", "10ms",
		"--sort=pid", NULL);
	DT_ASSERT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_EQ(jd_int(j, "processes.1.pid", -1), 200);
	DT_EXPECT_STREQ(jd_str(j, "processes.1.cmdline"), "/usr/bin/beta --frames 0 two words");
	DT_EXPECT_STREQ(jd_str(j, "processes.1.cgroup"), "/machine.slice/beta-ctr.scope");
	DT_EXPECT_TRUE(jd_is_null(j, "processes.0.cmdline"));
	DT_EXPECT_TRUE(jd_is_null(j, "processes.0.cgroup"));
	for (long i = 0; i < jd_len(j, "clients"); i++) {
		char path[64];

		snprintf(path, sizeof(path), "clients.%ld.holders.0.pid", i);
		if (jd_int(j, path, -1) == 200)
			beta = (int)i;
	}
	DT_ASSERT_GE(beta, 0);
	{
		char path[64];

		snprintf(path, sizeof(path), "clients.%d.holders.0.cmdline", beta);
		DT_EXPECT_STREQ(jd_str(j, path), "/usr/bin/beta --frames 0 two words");
		snprintf(path, sizeof(path), "clients.%d.holders.0.cgroup", beta);
		DT_EXPECT_STREQ(jd_str(j, path), "/machine.slice/beta-ctr.scope");
	}
	jd_free(j);
	cli_result_free(&r);

	/* list's document stays as it was: no per-holder /proc reads */
	cli_run(&r, "list", "--proc-root", pt.root, "-i", "0", "--json", NULL);
	DT_ASSERT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_TRUE(jd_path(j, "processes.0.cmdline") == NULL);
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "top", "--proc-root", pt.root, "-b", "-n", "1", "-i", "10ms", NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "    command /usr/bin/beta --frames 0 two words\n");
	EXPECT_HAS(r.out, "    cgroup /machine.slice/beta-ctr.scope\n");
	DT_EXPECT_TRUE(strstr(r.out, "v1-wrong") == NULL);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(stat_json)
{
	struct cli_result r;
	char path[] = "/tmp/drmacct-stat.XXXXXX";
	struct jd *j;
	int fd = mkstemp(path);
	FILE *f;
	char buf[8192];
	size_t n;

	DT_ASSERT_GE(fd, 0);
	close(fd);
	/*
	 * The report to -o FILE, the command's own status. The command lives
	 * 300 ms, so the first poll (right after it starts) comes before it
	 * ends even on a loaded machine; one that exits at once can end
	 * before any poll.
	 */
	cli_run(&r, "stat", "--no-bpf", "-i", "10ms", "--json", "-o", path, "--", "/bin/sh",
		"-c", "sleep 0.3; echo hello; exit 3", NULL);
	DT_EXPECT_EQ(r.status, 3);
	DT_EXPECT_STREQ(r.out, "hello\n");
	f = fopen(path, "r");
	DT_ASSERT_TRUE(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	j = parse_ok(buf);
	DT_EXPECT_STREQ(jd_str(j, "schema"), "drmacct-stat/1");
	DT_EXPECT_STREQ(jd_str(j, "command.0"), "/bin/sh");
	DT_EXPECT_STREQ(jd_str(j, "command.2"), "sleep 0.3; echo hello; exit 3");
	DT_EXPECT_STREQ(jd_str(j, "source"), "proc");
	DT_EXPECT_EQ(jd_int(j, "exit_status", -1), 3);
	DT_EXPECT_GE(jd_int(j, "polls", -1), 1);
	DT_EXPECT_GT(jd_u64(j, "elapsed_ns", 0), (uint64_t)0);
	DT_EXPECT_EQ(jd_len(j, "engines"), 0);
	jd_free(j);
	cli_result_free(&r);

	/* -e names an engine nobody used: listed with zeros, device null */
	cli_run(&r, "stat", "--no-bpf", "-j", "-e", "render", "-o", "-", "--", "true", NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "engines.0.name"), "render");
	DT_EXPECT_EQ(jd_u64(j, "engines.0.busy_ns", 1), (uint64_t)0);
	DT_EXPECT_TRUE(jd_is_null(j, "engines.0.device"));
	jd_free(j);
	cli_result_free(&r);
}

/* ---- report: memory as printed ---- */

/*
 * amdgpu before drm-total-*: only the legacy drm-memory-<region>, which is
 * resident. report shows it as resident and total as null, not 0.
 */
DT_TEST(report_memory_only_what_was_printed)
{
	struct proc_tree pt;
	struct cli_result r;
	char out[PATH_MAX];
	struct jd *j;

	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 77, "game"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 77, 9, 226, 128,
					  "drm-driver:\tamdgpu\ndrm-client-id:\t5\n"
					  "drm-memory-vram:\t2048 KiB\n"
					  "drm-engine-gfx:\t100 ns\n"), 0);
	snprintf(out, sizeof(out), "%s/l.rec", pt.base);
	cli_run(&r, "record", "--proc-root", pt.root, "-i", "10ms", "-n", "2", "-o", out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	cli_result_free(&r);
	cli_run(&r, "report", out, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "memory vram      peak 2.0M, last 2.0M (resident)");
	cli_result_free(&r);
	cli_run(&r, "report", "-j", out, NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "clients.0.memory.0.region"), "vram");
	DT_EXPECT_TRUE(jd_is_null(j, "clients.0.memory.0.peak_total"));
	DT_EXPECT_TRUE(jd_is_null(j, "clients.0.memory.0.last_total"));
	DT_EXPECT_EQ(jd_u64(j, "clients.0.memory.0.peak_resident", 0), (uint64_t)2097152);
	DT_EXPECT_EQ(jd_u64(j, "clients.0.memory.0.last_resident", 0), (uint64_t)2097152);
	jd_free(j);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/* A client held by two processes (fd passing): the record keeps both. */
DT_TEST(record_keeps_every_holder)
{
	struct proc_tree pt;
	struct cli_result r;
	char out[PATH_MAX];
	struct jd *j;
	bool found = false;

	build(&pt);	/* client 7: pids 100 and 200 */
	snprintf(out, sizeof(out), "%s/h.rec", pt.base);
	cli_run(&r, "record", "--proc-root", pt.root, "-i", "10ms", "-n", "2", "-o", out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	cli_result_free(&r);
	cli_run(&r, "report", "--json", out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	j = parse_ok(r.out);
	DT_EXPECT_EQ(jd_int(j, "version_minor", -1), 2);
	for (long i = 0; i < jd_len(j, "clients"); i++) {
		char p[64];

		snprintf(p, sizeof(p), "clients.%ld.client_id", i);
		if (jd_int(j, p, -1) != 7)
			continue;
		found = true;
		snprintf(p, sizeof(p), "clients.%ld.processes", i);
		DT_EXPECT_EQ(jd_len(j, p), 2);
		snprintf(p, sizeof(p), "clients.%ld.processes.0.pid", i);
		DT_EXPECT_EQ(jd_int(j, p, -1), 100);
		snprintf(p, sizeof(p), "clients.%ld.processes.1.pid", i);
		DT_EXPECT_EQ(jd_int(j, p, -1), 200);
		snprintf(p, sizeof(p), "clients.%ld.processes.1.comm", i);
		DT_EXPECT_STREQ(jd_str(j, p), "beta");
	}
	DT_EXPECT_TRUE(found);
	/* both processes are credited with the client in the per-process part */
	DT_EXPECT_EQ(jd_len(j, "processes"), 3);
	jd_free(j);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

/* ---- exit codes ---- */

DT_TEST(closed_stdout_ends_quietly_with_141)
{
	struct proc_tree pt;
	struct cli_result r;

	build(&pt);
	{
		const char *const cmds[][10] = {
			{ "list", "--proc-root", pt.root, "-i", "0", NULL },
			{ "list", "--proc-root", pt.root, "-i", "0", "--json", NULL },
			{ "top", "--proc-root", pt.root, "-b", "-n", "2", "-i", "10ms", NULL },
			{ "top", "--proc-root", pt.root, "--json", "-n", "2", "-i", "10ms", NULL },
			{ "validate", "--proc-root", pt.root, "--all", NULL },
			{ "record", "--proc-root", pt.root, "-o", "-", "-n", "2", "-i", "10ms" },
			{ "export", "--prometheus", "--proc-root", pt.root, NULL },
			{ "--help", NULL },
		};

		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			cli_run_io(&r, &(struct cli_io){ .out = CLI_OUT_CLOSED }, cmds[i]);
			if (r.status != 141 || strstr(r.err, "fail") || strstr(r.err, "error"))
				DT_FAIL("%s: status %d, stderr:\n%s", cmds[i][0], r.status, r.err);
			cli_result_free(&r);
		}
	}
	proc_tree_cleanup(&pt);
}

DT_TEST(validate_all_that_read_nothing_fails)
{
	struct proc_tree pt;
	struct cli_result r;

	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 10, "idle"), 0);
	DT_ASSERT_EQ(proc_tree_add_link_fd(&pt, 10, 0, "/dev/null"), 0);
	cli_run(&r, "validate", "--proc-root", pt.root, "--all", NULL);
	DT_EXPECT_EQ(r.status, 4);
	EXPECT_HAS(r.err, "nothing to validate");
	cli_result_free(&r);
	cli_run(&r, "validate", "--proc-root", pt.root, "--all", "--json", NULL);
	DT_EXPECT_EQ(r.status, 4);
	{
		struct jd *j = parse_ok(r.out);

		DT_EXPECT_EQ(jd_int(j, "summary.sources", -1), 0);
		jd_free(j);
	}
	cli_result_free(&r);
	/* a DRM fd of a driver without usage stats only: still nothing checked */
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 10, 3, 226, 0, "pos:\t0\nflags:\t02\n"), 0);
	cli_run(&r, "validate", "--proc-root", pt.root, "--all", NULL);
	DT_EXPECT_EQ(r.status, 4);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(missing_pid_fails_alike)
{
	struct proc_tree pt;
	struct cli_result r;
	static const char *const cmds[][2] = {
		{ "list", "-i0" }, { "top", "-n1" }, { "export", "--prometheus" },
	};

	build(&pt);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cli_runv(&r, (const char *const[]){ cmds[i][0], cmds[i][1], "--proc-root", pt.root,
						    "--pid", "4242", NULL });
		DT_EXPECT_EQ(r.status, 1);
		EXPECT_HAS(r.err, "no process 4242");
		DT_EXPECT_STREQ(r.out, "");
		cli_result_free(&r);
	}
	/* and an existing one works for export */
	cli_run(&r, "export", "--prometheus", "--proc-root", pt.root, "--pid", "300", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "client_id=\"5\"");
	DT_EXPECT_TRUE(strstr(r.out, "client_id=\"9\"") == NULL);
	cli_result_free(&r);
	proc_tree_cleanup(&pt);
}

DT_TEST(usage_conflicts_exit_2)
{
	static const char *const cases[][6] = {
		{ "list", "--source=bpf", "--pid=1", NULL },
		{ "top", "--source=bpf", "--proc-root=/tmp", NULL },
		{ "report", "--json", "-t", "-", "x", NULL },
		{ "export", "--prometheus", "--listen", "127.0.0.1:0", NULL },
		{ "validate", "--all", "1", NULL },
	};
	struct cli_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cli_runv(&r, cases[i]);
		if (r.status != 2 || !strstr(r.err, "--help"))
			DT_FAIL("%s %s: status %d, stderr %s", cases[i][0], cases[i][1], r.status,
				r.err);
		DT_EXPECT_STREQ(r.out, "");
		cli_result_free(&r);
	}
}

/* ---- one help layout ---- */

/*
 * An option line: "  -x, --long..." or "      --long...", its text from
 * column 26 (index 25) on, or alone when the option is longer (the text
 * then on the next line); a continuation line starts at column 26.
 */
static bool option_line_ok(const char *l, size_t len)
{
	size_t gap;

	if (len >= 25 && !strncmp(l, "                         ", 25))
		return len > 25 && l[25] != ' ';
	if (strncmp(l, "  -", 3) && strncmp(l, "      --", 8))
		return false;
	for (gap = l[2] == '-' ? 3 : 8; gap + 1 < len; gap++)
		if (l[gap] == ' ' && l[gap + 1] == ' ')
			break;
	if (gap + 1 >= len)
		return true;	/* no text on this line */
	while (gap < len && l[gap] == ' ')
		gap++;
	return gap == 25;
}

/* The help of `drmacct ARGS... --help` is in the common layout. */
static void check_help(const char *const *args, const char *name)
{
	const char *argv[8];
	struct cli_result r;
	char head[96];
	size_t n = 0;

	while (args[n] && n < 6) {
		argv[n] = args[n];
		n++;
	}
	argv[n++] = "--help";
	argv[n] = NULL;
	cli_runv(&r, argv);
	DT_EXPECT_EQ(r.status, 0);
	snprintf(head, sizeof(head), "Usage: drmacct %s ", name);
	if (strncmp(r.out, head, strlen(head)) || !strstr(r.out, "\n\nOptions:\n") ||
	    !strstr(r.out, "\n  -h, --help             this text\n") ||
	    !strstr(r.out, "\n\nExit status: ")) {
		DT_FAIL("%s --help is not in the common layout:\n%s", name, r.out);
		cli_result_free(&r);
		return;
	}
	for (char *l = strstr(r.out, "\n\nOptions:\n") + 11; *l && *l != '\n';) {
		char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);

		if (!option_line_ok(l, len))
			DT_FAIL("%s --help: option line off the layout: '%.*s'", name, (int)len,
				l);
		if (!nl)
			break;
		l = nl + 1;
	}
	DT_EXPECT_STREQ(r.err, "");
	cli_result_free(&r);
}

DT_TEST(help_has_one_layout)
{
	static const char *const cmds[][3] = {
		{ "validate" }, { "list" }, { "top" }, { "record" }, { "report" },
		{ "export" }, { "stat" }, { "check" }, { "conformance" }, { "bpf" },
		{ "bpf", "start" }, { "bpf", "stop" }, { "bpf", "status" }, { "bpf", "dump" },
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s%s%s", cmds[i][0], cmds[i][1] ? " " : "",
			 cmds[i][1] ? cmds[i][1] : "");
		check_help(cmds[i], name);
	}
}

/* ---- bpf status/dump --json without a collection (no BPF needed) ---- */

DT_TEST(bpf_json_when_nothing_is_pinned)
{
	char dir[] = "/tmp/drmacct-nopin.XXXXXX";
	char gone[64];
	struct cli_result r;
	struct jd *j;

	/* An empty directory's name, removed: surely nothing pinned there. */
	DT_ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(gone, sizeof(gone), "%s/none", dir);

	/* status: a document saying so, and the text's exit status (1). */
	cli_run(&r, "bpf", "status", "--json", "--dir", gone, NULL);
	DT_EXPECT_EQ(r.status, 1);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "schema"), "drmacct-bpf-status/1");
	DT_EXPECT_TRUE(jd_path(j, "running") && jd_path(j, "running")->type == JD_BOOL &&
		       !jd_path(j, "running")->b);
	DT_EXPECT_STREQ(jd_str(j, "dir"), gone);
	DT_EXPECT_TRUE(jd_path(j, "maps") == NULL);
	DT_EXPECT_STREQ(r.err, "");
	jd_free(j);
	cli_result_free(&r);

	/* -j is --json; options before the subcommand count too */
	cli_run(&r, "bpf", "-j", "-d", gone, "status", NULL);
	DT_EXPECT_EQ(r.status, 1);
	j = parse_ok(r.out);
	DT_EXPECT_STREQ(jd_str(j, "schema"), "drmacct-bpf-status/1");
	jd_free(j);
	cli_result_free(&r);

	/* dump has no table to show: an error, no half document */
	cli_run(&r, "bpf", "dump", "--json", "--dir", gone, NULL);
	DT_EXPECT_EQ(r.status, 1);
	DT_EXPECT_STREQ(r.out, "");
	EXPECT_HAS(r.err, "not running");
	EXPECT_HAS(r.err, gone);
	cli_result_free(&r);
	rmdir(dir);
}

DT_TEST(bpf_options_belong_to_their_subcommand)
{
	static const char *const bad[][5] = {
		{ "bpf", "start", "--json", NULL },
		{ "bpf", "stop", "-j", NULL },
		{ "bpf", "status", "--attach=btf", NULL },
		{ "bpf", "dump", "--no-sched", NULL },
		{ "bpf", "stop", "--ringbuf", "4096", NULL },
		{ "bpf", "status", "--debug", NULL },
		{ "bpf", "frob", "--help", NULL },
		{ "bpf", "--json", NULL },
	};
	struct cli_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cli_runv(&r, bad[i]);
		if (r.status != 2 || r.out[0] || !strstr(r.err, "Try 'drmacct bpf --help'"))
			DT_FAIL("%s %s %s: status %d, stdout '%s', stderr %s", bad[i][0],
				bad[i][1], bad[i][2] ? bad[i][2] : "", r.status, r.out, r.err);
		cli_result_free(&r);
	}
	/* the reason names the option and where it belongs */
	cli_run(&r, "bpf", "status", "--attach=btf", NULL);
	EXPECT_HAS(r.err, "--attach is an option of `bpf start`");
	cli_result_free(&r);
	cli_run(&r, "bpf", "start", "--json", NULL);
	EXPECT_HAS(r.err, "--json is for `bpf status` and `bpf dump`");
	cli_result_free(&r);
}

DT_MAIN
