// SPDX-License-Identifier: MIT
/*
 * test_export.c - `drmacct export`: the exposition text (names, units,
 * labels, escaping, one series per shared client, jobs from driver keys),
 * its syntax, the HTTP server (status codes, loopback only, catch-up rule
 * across scrapes, clean stop).
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "proc_tree.h"
#include "prom_util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIMGPU_A \
	"pos:\t0\n" \
	"drm-driver:\tsimgpu\n" \
	"drm-client-id:\t7\n" \
	"drm-engine-render:\t1234567890 ns\n" \
	"drm-engine-copy:\t5 ns\n" \
	"drm-engine-capacity-copy:\t2\n" \
	"drm-cycles-render:\t987654321\n" \
	"drm-maxfreq-render:\t1500 MHz\n" \
	"drm-total-system:\t8 MiB\n" \
	"drm-resident-system:\t4096 KiB\n" \
	"drm-purgeable-system:\t0\n"

#define SIMGPU_B \
	"drm-driver:\tsimgpu\n" \
	"drm-client-id:\t8\n" \
	"drm-engine-render:\t42 ns\n" \
	"drm-total-cycles-render:\t1000\n" \
	"drm-cycles-render:\t250\n"

DT_FIXTURE(ex) {
	struct proc_tree pt;
	struct prom_child exp;
};

DT_SETUP(ex)
{
	self->exp.pid = 0;
	self->exp.errfd = -1;
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	/* client 7 held by pids 300 and 100 (inherited fd); client 8 in 200 */
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 300, "child"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 300, 4, 226, 128, SIMGPU_A), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 100, "game"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 100, 9, 226, 128, SIMGPU_A), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 200, "we\"ird\\na\xff" "me"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 200, 3, 226, 129, SIMGPU_B), 0);
}

DT_TEARDOWN(ex)
{
	prom_stop(&self->exp);
	proc_tree_cleanup(&self->pt);
}

static const char *line_of(const char *out, const char *prefix, char *buf, size_t len)
{
	const char *p = out;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (!strncmp(p, prefix, strlen(prefix))) {
			snprintf(buf, len, "%.*s", (int)l, p);
			return buf;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* One whole sample line: NAME{LABELS,REST\n */
static void series(const char *out, const char *name, const char *labels, const char *rest)
{
	char want[1024];

	snprintf(want, sizeof(want), "%s%s,%s\n", name, labels, rest);
	EXPECT_HAS(out, want);
}

DT_TEST_F(ex, exposition_values_and_labels)
{
	struct cli_result r;
	const char *l7 = "{driver=\"simgpu\",device=\"renderD128\",client_id=\"7\"";

	cli_run(&r, "export", "--prometheus", "--proc-root", self->pt.root, NULL);
	DT_ASSERT_EQ(r.status, 0);
	/* ns -> seconds exactly; counters and gauges in base units */
	series(r.out, "drmacct_client_engine_busy_seconds_total", l7,
	       "engine=\"render\"} 1.234567890");
	series(r.out, "drmacct_client_engine_busy_seconds_total", l7,
	       "engine=\"copy\"} 0.000000005");
	series(r.out, "drmacct_client_engine_cycles_total", l7, "engine=\"render\"} 987654321");
	series(r.out, "drmacct_client_engine_capacity", l7, "engine=\"copy\"} 2");
	series(r.out, "drmacct_client_engine_max_frequency_hertz", l7,
	       "engine=\"render\"} 1500000000");
	series(r.out, "drmacct_client_memory_bytes", l7,
	       "region=\"system\",kind=\"total\"} 8388608");
	series(r.out, "drmacct_client_memory_bytes", l7,
	       "region=\"system\",kind=\"resident\"} 4194304");
	series(r.out, "drmacct_client_memory_bytes", l7,
	       "region=\"system\",kind=\"purgeable\"} 0");
	/* client 7 is held by two processes but is one series */
	/* 2 busy, 1 cycles, 2 capacity, 1 maxfreq, 3 memory, 1 info */
	DT_EXPECT_EQ(count_of(r.out, "client_id=\"7\""), 10);
	/* who holds it is in the info series only: lowest pid first, every holder */
	EXPECT_HAS(r.out, "drmacct_client_info{driver=\"simgpu\",device=\"renderD128\","
		   "client_id=\"7\",pid=\"100\",comm=\"game\",holders=\"100:9,300:4\"} 1\n");
	DT_EXPECT_EQ(count_of(r.out, "pid=\""), 2);
	DT_EXPECT_EQ(count_of(r.out, "comm=\""), 2);
	EXPECT_HAS(r.out, "drmacct_client_engine_total_cycles_total{driver=\"simgpu\","
		   "device=\"renderD129\",client_id=\"8\",engine=\"render\"} 1000\n");
	/* escaping: quote, backslash; invalid UTF-8 byte becomes U+FFFD */
	EXPECT_HAS(r.out, "drmacct_client_info{driver=\"simgpu\",device=\"renderD129\","
		   "client_id=\"8\",pid=\"200\",comm=\"we\\\"ird\\\\na\xef\xbf\xbdme\","
		   "holders=\"200:3\"} 1\n");
	/* devices: no drm-pdev in these fdinfo */
	EXPECT_HAS(r.out, "drmacct_device_info{driver=\"simgpu\",device=\"renderD128\","
		   "pdev=\"\"} 1\n");
	EXPECT_HAS(r.out, "drmacct_clients{driver=\"simgpu\",device=\"renderD128\"} 1\n");
	EXPECT_HAS(r.out, "drmacct_clients{driver=\"simgpu\",device=\"renderD129\"} 1\n");
	EXPECT_HAS(r.out, "drmacct_discovery_unreadable{what=\"denied_processes\"} 0\n");
	cli_result_free(&r);
}

/* Syntax of the whole text: every family announced once by HELP and TYPE
 * before its samples, samples contiguous, names legal, counters _total. */
DT_TEST_F(ex, exposition_syntax)
{
	struct cli_result r;
	char families[32][96], cur[96] = "";
	int nfam = 0;
	char *save, *line, *text;

	cli_run(&r, "export", "--prometheus", "--proc-root", self->pt.root, NULL);
	DT_ASSERT_EQ(r.status, 0);
	text = strdup(r.out);
	DT_ASSERT_NE(text, NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[96], type[16];

		if (!strncmp(line, "# HELP ", 7)) {
			DT_ASSERT_EQ(sscanf(line + 7, "%95s", name), 1);
			for (int i = 0; i < nfam; i++)
				if (!strcmp(families[i], name))
					DT_FAIL("family %s announced twice", name);
			DT_ASSERT_LT(nfam, 32);
			snprintf(families[nfam++], 96, "%s", name);
			snprintf(cur, sizeof(cur), "%s", name);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			DT_ASSERT_EQ(sscanf(line + 7, "%95s %15s", name, type), 2);
			DT_EXPECT_STREQ(name, cur);
			if (!strcmp(type, "counter")) {
				size_t l = strlen(name);

				DT_EXPECT_TRUE(l > 6 && !strcmp(name + l - 6, "_total"));
			} else {
				DT_EXPECT_STREQ(type, "gauge");
			}
			continue;
		}
		DT_ASSERT_NE(line[0], '#');
		/* sample: name{labels} value, name belongs to the current family */
		{
			size_t l = strcspn(line, "{ ");
			const char *v = strrchr(line, ' ');
			char *end;

			DT_ASSERT_TRUE(l > 0);
			for (size_t i = 0; i < l; i++)
				DT_ASSERT_TRUE(isalnum((unsigned char)line[i]) || line[i] == '_' ||
					       line[i] == ':');
			DT_EXPECT_TRUE(strlen(cur) == l && !strncmp(line, cur, l));
			DT_ASSERT_NE(v, NULL);
			strtod(v + 1, &end);
			DT_EXPECT_EQ(*end, '\0');
		}
	}
	DT_EXPECT_GE(nfam, 8);
	free(text);
	cli_result_free(&r);
}

/*
 * Clients without drm-client-id are keyed by holder="PID:FD";
 * drm-pdev reaches drmacct_device_info.
 */
DT_TEST_F(ex, no_client_id_and_pdev)
{
	const char *fi = "drm-driver:\tpanfrost\ndrm-pdev:\tfde60000.gpu\n"
			 "drm-engine-fragment:\t%d ns\n";
	char a[128], b[128];
	struct cli_result r;

	snprintf(a, sizeof(a), fi, 11);
	snprintf(b, sizeof(b), fi, 22);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 600, "mali"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 600, 3, 226, 131, a), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 600, 4, 226, 131, b), 0);
	cli_run(&r, "export", "--prometheus", "--proc-root", self->pt.root, "--pid", "600", NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "drmacct_client_engine_busy_seconds_total{driver=\"panfrost\","
		   "device=\"renderD131\",client_id=\"\",holder=\"600:3\","
		   "engine=\"fragment\"} 0.000000011\n");
	EXPECT_HAS(r.out, "drmacct_client_engine_busy_seconds_total{driver=\"panfrost\","
		   "device=\"renderD131\",client_id=\"\",holder=\"600:4\","
		   "engine=\"fragment\"} 0.000000022\n");
	EXPECT_HAS(r.out, "drmacct_client_info{driver=\"panfrost\",device=\"renderD131\","
		   "client_id=\"\",holder=\"600:4\",pid=\"600\",comm=\"mali\","
		   "holders=\"600:4\"} 1\n");
	EXPECT_HAS(r.out, "drmacct_device_info{driver=\"panfrost\",device=\"renderD131\","
		   "pdev=\"fde60000.gpu\"} 1\n");
	EXPECT_HAS(r.out, "drmacct_clients{driver=\"panfrost\",device=\"renderD131\"} 2\n");
	DT_EXPECT_EQ(count_of(r.out, "drmacct_device_info{"), 1);
	cli_result_free(&r);
}

/* v3d prints its job counts as driver-specific keys. */
DT_TEST_F(ex, jobs_from_driver_keys)
{
	const char *sh = getenv("DRMACCT_SHARED");
	char path[512], *text = NULL;
	struct cli_result r;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fixtures/fdinfo/v3d_1.txt", sh && *sh ? sh : "../shared");
	f = fopen(path, "r");
	if (!f)
		DT_FAIL("fixture %s not readable (set DRMACCT_SHARED)", path);
	DT_ASSERT_EQ(getdelim(&text, &len, '\0', f) > 0, true);
	fclose(f);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 400, "v3d-app"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 400, 5, 226, 130, text), 0);
	free(text);
	cli_run(&r, "export", "--prometheus", "--proc-root", self->pt.root, "--pid", "400", NULL);
	DT_ASSERT_EQ(r.status, 0);
	/* values as printed in the fixture */
	EXPECT_HAS(r.out, "drmacct_client_engine_jobs_total{driver=\"v3d\",device=\"renderD130\","
		   "client_id=\"44\",engine=\"render\"} 19575\n");
	EXPECT_HAS(r.out, "engine=\"cache_clean\"} 250392\n");
	EXPECT_HAS(r.out, "drmacct_client_engine_busy_seconds_total{driver=\"v3d\","
		   "device=\"renderD130\",client_id=\"44\",engine=\"csd\"} 188.038329691\n");
	EXPECT_HAS(r.out, "drmacct_client_info{driver=\"v3d\",device=\"renderD130\","
		   "client_id=\"44\",pid=\"400\",comm=\"v3d-app\",holders=\"400:5\"} 1\n");
	DT_EXPECT_EQ(count_of(r.out, "client_id=\"7\""), 0);
	cli_result_free(&r);
}

DT_TEST(usage_errors)
{
	struct cli_result r;

	cli_run(&r, "export", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "exactly one of --prometheus, --listen and --textfile");
	cli_result_free(&r);
	cli_run(&r, "export", "--prometheus", "--listen", "127.0.0.1:0", NULL);
	DT_EXPECT_EQ(r.status, 2);
	cli_result_free(&r);
	cli_run(&r, "export", "--textfile", "/tmp", "--listen", "127.0.0.1:0", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "exactly one of");
	cli_result_free(&r);
	cli_run(&r, "export", "--prometheus", "--web-config", "/nonexistent", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--web-config is for --listen");
	cli_result_free(&r);
	cli_run(&r, "export", "--prometheus", "--insecure", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--insecure is for --listen");
	cli_result_free(&r);
	cli_run(&r, "export", "--listen", ":0", "--insecure", "--web-config", "/x", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--web-config and --insecure exclude each other");
	cli_result_free(&r);
	cli_run(&r, "export", "--prometheus", "--interval", "1s", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--interval is for --textfile");
	cli_result_free(&r);
	cli_run(&r, "export", "--listen", "127.0.0.1:0", "--state", "/tmp/x", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--state is for --textfile");
	cli_result_free(&r);
	for (const char *const *a = (const char *const[]){ "0", "-1", "x", "1000001", NULL };
	     *a; a++) {
		cli_run(&r, "export", "--prometheus", "--drop-after", *a, NULL);
		DT_EXPECT_EQ(r.status, 2);
		EXPECT_HAS(r.err, "--drop-after: '");
		cli_result_free(&r);
	}
	cli_run(&r, "export", "--textfile", "/nonexistent/dir", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "--textfile: /nonexistent/dir is not a directory");
	cli_result_free(&r);
	/* beyond loopback: only with --web-config or --insecure */
	for (const char *const *a = (const char *const[]){ "0.0.0.0:9400", "192.168.1.1:80",
							   "[::]:9400", "[2001:db8::1]:1",
							   ":9400", NULL };
	     *a; a++) {
		cli_run(&r, "export", "--listen", *a, NULL);
		DT_EXPECT_EQ(r.status, 2);
		EXPECT_HAS(r.err, "is not a loopback address");
		EXPECT_HAS(r.err, "give --web-config FILE (TLS, basic auth) or --insecure");
		cli_result_free(&r);
	}
	for (const char *const *a = (const char *const[]){ "127.0.0.1", "127.0.0.1:70000",
							   "127.0.0.1:x", "[::1]9", "host:1",
							   "[::1:9", "[]:9", "[127.0.0.1]:9",
							   NULL };
	     *a; a++) {
		cli_run(&r, "export", "--listen", *a, NULL);
		DT_EXPECT_EQ(r.status, 2);
		EXPECT_HAS(r.err, "bad --listen");
		cli_result_free(&r);
	}
	cli_run(&r, "export", "--prometheus", "--proc-root", "/nonexistent/x", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot open /nonexistent/x");
	cli_result_free(&r);
}

/* Scrape /metrics at @port: the busy series of the renderD129 client has @want. */
static void expect_render_busy(int port, const char *want)
{
	char *body = NULL, line[512];
	int status;

	DT_ASSERT_EQ(prom_http(port, "GET", "/metrics", &status, &body), 0);
	DT_EXPECT_EQ(status, 200);
	DT_ASSERT_NE(body, NULL);
	DT_ASSERT_NE(line_of(body, "drmacct_client_engine_busy_seconds_total{driver=\"simgpu\","
			     "device=\"renderD129\"", line, sizeof(line)), NULL);
	EXPECT_HAS(line, want);
	free(body);
}

DT_TEST_F_TIMEOUT(ex, http_server, 60)
{
	char *body = NULL;
	int status, ret;

	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	expect_render_busy(self->exp.port, "} 0.000000042");

	/* The counter goes backwards in fdinfo: the catch-up rule holds it. */
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 200, 3,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t8\n"
					  "drm-engine-render:\t40 ns\n"), 0);
	expect_render_busy(self->exp.port, "} 0.000000042");
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 200, 3,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t8\n"
					  "drm-engine-render:\t2000000000 ns\n"), 0);
	expect_render_busy(self->exp.port, "} 2.000000000");

	DT_ASSERT_EQ(prom_http(self->exp.port, "GET", "/nope", &status, &body), 0);
	DT_EXPECT_EQ(status, 404);
	free(body);
	DT_ASSERT_EQ(prom_http(self->exp.port, "POST", "/metrics", &status, &body), 0);
	DT_EXPECT_EQ(status, 405);
	free(body);
	DT_ASSERT_EQ(prom_http(self->exp.port, "HEAD", "/metrics", &status, &body), 0);
	DT_EXPECT_EQ(status, 200);
	DT_EXPECT_STREQ(body ? body : "", "");
	free(body);

	ret = prom_stop(&self->exp);
	DT_ASSERT_TRUE(WIFEXITED(ret));
	DT_EXPECT_EQ(WEXITSTATUS(ret), 0);
}

static double mono_s(void);

/*
 * reason="permission": a process whose fd directory and a DRM fd whose
 * fdinfo cannot be read, as a user who is not root (nobody, when the test
 * runs as root), with what it can read still exported.
 */
DT_TEST_F(ex, discovery_failures_permission)
{
	char buf[65536];
	size_t n = 0;
	int p[2], st;
	pid_t pid;

	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 500, "secret"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 500, 3, 226, 128, SIMGPU_B), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 600, "half"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 600, 3, 226, 128, SIMGPU_B), 0);
	DT_ASSERT_EQ(chmod(self->pt.base, 0755), 0);
	for (pid_t q = 100; q <= 300; q += 100)
		DT_ASSERT_EQ(proc_tree_chmod(&self->pt, q, "fd", 0755), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 500, "fd", 0000), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 600, "fd", 0755), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 600, "fdinfo/3", 0000), 0);
	DT_ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		const char *bin = cli_bin();

		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) ||
				       setresuid(65534, 65534, 65534)))
			_exit(126);
		dup2(p[1], 1);
		cli_child_env();
		execl(bin, bin, "export", "--prometheus", "--proc-root", self->pt.root,
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t r = read(p[0], buf + n, sizeof(buf) - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(p[0]);
	buf[n] = 0;
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_ASSERT_TRUE(WIFEXITED(st));
	DT_ASSERT_EQ(WEXITSTATUS(st), 0);
	EXPECT_HAS(buf, "drmacct_discovery_failures{reason=\"permission\"} 2\n");
	EXPECT_HAS(buf, "drmacct_discovery_failures{reason=\"vanished\"} 0\n");
	EXPECT_HAS(buf, "drmacct_discovery_unreadable{what=\"denied_processes\"} 1\n");
	EXPECT_HAS(buf, "drmacct_discovery_unreadable{what=\"denied_fds\"} 1\n");
	EXPECT_HAS(buf, "drmacct_client_info{driver=\"simgpu\",device=\"renderD128\","
		   "client_id=\"7\",pid=\"100\",comm=\"game\",holders=\"100:9,300:4\"} 1\n");
}

/* Debian's promtool lints the whole exposition, self-metrics included. */
DT_TEST_F(ex, promtool_check_metrics)
{
	const char *tool = getenv("DRMACCT_PROMTOOL");
	char cmd[1200], log[] = "/tmp/dt-promtool-XXXXXX", msg[2048] = "";
	struct cli_result r;
	FILE *pipe, *lf;
	size_t n;
	int fd, st;

	if (!tool || !*tool)
		tool = "/usr/bin/promtool";
	if (access(tool, X_OK))
		DT_SKIP("%s not installed (Debian package prometheus)", tool);
	cli_run(&r, "export", "--prometheus", "--proc-root", self->pt.root, NULL);
	DT_ASSERT_EQ(r.status, 0);
	fd = mkstemp(log);
	DT_ASSERT_GE(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s' check metrics >'%s' 2>&1", tool, log);
	pipe = popen(cmd, "w");
	DT_ASSERT_NE(pipe, NULL);
	fputs(r.out, pipe);
	st = pclose(pipe);
	lf = fopen(log, "r");
	if (lf) {
		n = fread(msg, 1, sizeof(msg) - 1, lf);
		msg[n] = 0;
		fclose(lf);
	}
	unlink(log);
	cli_result_free(&r);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		DT_FAIL("promtool check metrics: status %d: %s", st, msg);
}

/*
 * Self-metrics: failures of the walk by reason, the scrape's duration (no
 * longer than the whole HTTP round trip around it), errors, build info
 * with the version `drmacct --version` prints.
 */
DT_TEST_F(ex, self_metrics)
{
	struct cli_result r;
	char line[512], ver[64] = "", want[128];
	char *body = NULL;
	double t0, took, dur = -1;
	int status;

	/* 400 exited after the root was listed (no fd dir any more). */
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 400, "gone"), 0);
	DT_ASSERT_EQ(proc_tree_remove(&self->pt, 400, "fd"), 0);
	/* 100's fd 5 closed between getdents and stat (dangling link). */
	DT_ASSERT_EQ(proc_tree_add_link_fd(&self->pt, 100, 5, "/nonexistent/x"), 0);
	/* Two DRM fds whose fdinfo break the spec: counted, still exported. */
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 500, "odd"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 500, 3, 226, 128,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t9\n"
					  "drm-engine-render:\t12 parsecs\n"
					  "drm-total-vram:\t3 KiB\n"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 500, 4, 226, 128,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t10\n"
					  "drm-engine-render:\t5 ns\ndrm-engine-render:\t6 ns\n"), 0);

	cli_run(&r, "--version", NULL);
	DT_ASSERT_EQ(r.status, 0);
	DT_ASSERT_EQ(sscanf(r.out, "drmacct %63s", ver), 1);
	cli_result_free(&r);

	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	t0 = mono_s();
	DT_ASSERT_EQ(prom_http(self->exp.port, "GET", "/metrics", &status, &body), 0);
	took = mono_s() - t0;
	DT_ASSERT_EQ(status, 200);
	DT_ASSERT_NE(body, NULL);
	EXPECT_HAS(body, "drmacct_discovery_failures{reason=\"permission\"} 0\n");
	EXPECT_HAS(body, "drmacct_discovery_failures{reason=\"vanished\"} 2\n");
	EXPECT_HAS(body, "drmacct_discovery_failures{reason=\"parse\"} 2\n");
	EXPECT_HAS(body, "drmacct_discovery_failures{reason=\"other\"} 0\n");
	/* the broken client is still there with what could be read */
	EXPECT_HAS(body, "client_id=\"9\",region=\"vram\",kind=\"total\"} 3072\n");
	EXPECT_HAS(body, "drmacct_scrape_errors_total 0\n");
	snprintf(want, sizeof(want), "drmacct_build_info{version=\"%s\"} 1\n", ver);
	EXPECT_HAS(body, want);
	DT_ASSERT_NE(line_of(body, "drmacct_scrape_duration_seconds ", line, sizeof(line)),
		     NULL);
	DT_ASSERT_EQ(sscanf(line, "drmacct_scrape_duration_seconds %lf", &dur), 1);
	printf("# scrape duration %.6f s, HTTP round trip %.6f s\n", dur, took);
	DT_EXPECT_GT(dur, 0.0);
	DT_EXPECT_LE(dur, took);
	free(body);
	/* --prometheus prints them too */
	cli_run(&r, "export", "--prometheus", "--proc-root", self->pt.root, NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.out, want);
	EXPECT_HAS(r.out, "drmacct_discovery_failures{reason=\"vanished\"} 2\n");
	cli_result_free(&r);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Three connections that send nothing, and one that stops half-way through
 * its request line, do not hold up a scrape from another client; the idle
 * ones are closed after the server's 10 s idle timeout, not kept.
 */
DT_TEST_F_TIMEOUT(ex, idle_connections_do_not_stall, 60)
{
	int idle[4], status;
	double t0, took;
	char *body = NULL;

	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	t0 = mono_s();
	for (int i = 0; i < 4; i++) {
		idle[i] = prom_connect(self->exp.port, 20);
		DT_ASSERT_GE(idle[i], 0);
	}
	DT_ASSERT_EQ(send(idle[3], "GET /met", 8, MSG_NOSIGNAL), 8);
	usleep(100000);	/* the server has seen them all */
	for (int k = 0; k < 3; k++) {
		double s0 = mono_s();

		DT_ASSERT_EQ(prom_http(self->exp.port, "GET", "/metrics", &status, &body), 0);
		took = mono_s() - s0;
		DT_EXPECT_EQ(status, 200);
		DT_ASSERT_NE(body, NULL);
		EXPECT_HAS(body, "client_id=\"8\"");
		free(body);
		body = NULL;
		/* generous: the old server took 5 s per idle connection ahead */
		DT_EXPECT_LT(took, 2.0);
		printf("# scrape %d with 4 idle connections open: %.3f s\n", k, took);
	}
	/* The idle ones are closed after the idle timeout, with nothing sent. */
	for (int i = 0; i < 4; i++) {
		DT_EXPECT_EQ(prom_read_status(idle[i]), 0);
		close(idle[i]);
	}
	took = mono_s() - t0;
	printf("# idle connections closed after %.1f s\n", took);
	DT_EXPECT_GE(took, 9.0);
	DT_EXPECT_LT(took, 20.0);
}

/* A connection from @src (a loopback address) to 127.0.0.1:@port, or -errno. */
static int connect_from(const char *src, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	inet_pton(AF_INET, src, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -errno;
	}
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * One address opening more connections than the per-address limit (32)
 * gets the ones over it closed at once; the first 32 stay open, and a
 * scraper at another address is served all the while.
 */
DT_TEST_F_TIMEOUT(ex, connection_limit_per_address, 60)
{
	int fds[40], status, closed = 0;
	char *body = NULL, b;

	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	for (int i = 0; i < 40; i++) {
		fds[i] = connect_from("127.0.0.2", self->exp.port);
		DT_ASSERT_GE(fds[i], 0);
		usleep(2000);	/* accepted in order */
	}
	DT_ASSERT_EQ(prom_http(self->exp.port, "GET", "/metrics", &status, &body), 0);
	DT_EXPECT_EQ(status, 200);
	DT_ASSERT_NE(body, NULL);
	EXPECT_HAS(body, "client_id=\"8\"");
	free(body);
	usleep(200000);
	for (int i = 0; i < 40; i++) {
		ssize_t r = recv(fds[i], &b, 1, MSG_DONTWAIT);

		if (r == 0)
			closed++;
		/* the first 32 are open and waiting (nothing to read yet) */
		if (i < 32 && !(r < 0 && errno == EAGAIN))
			DT_FAIL("connection %d: recv %zd (%s), want EAGAIN", i, r,
				r < 0 ? strerror(errno) : "data");
	}
	DT_EXPECT_EQ(closed, 8);
	for (int i = 0; i < 40; i++)
		close(fds[i]);
}

/*
 * Garbage is refused (400, or the connection closed without an answer:
 * status 0), methods other than GET and HEAD get 405, and the server goes
 * on serving. (libmicrohttpd parses the requests.)
 */
DT_TEST_F_TIMEOUT(ex, garbage_requests, 60)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		{ "\x01\x02\xff garbage\r\n\r\n", 400 },
		{ "hello\n\n", 0 },
		{ "GET metrics HTTP/1.1\r\n\r\n", 404 },
		{ "GET /metrics SPDY/3\r\n\r\n", 400 },
		{ "GET /metrics\r\n\r\n", 400 },
		{ "get /metrics HTTP/1.1\r\n\r\n", 405 },
		{ "\r\n\r\n", 0 },
		{ "FOO /metrics HTTP/1.1\r\n\r\n", 405 },
		{ "DELETE /metrics HTTP/1.0\r\n\r\n", 405 },
		{ "GET /metricsx HTTP/1.1\r\nHost: x\r\n\r\n", 404 },
		{ "GET /metrics HTTP/1.1\nHost: x\n\n", 200 },
	};
	char *big = malloc(8192);
	int status;

	DT_ASSERT_NE(big, NULL);
	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		DT_ASSERT_EQ(prom_raw(self->exp.port, cases[i].req, strlen(cases[i].req),
				      &status), 0);
		if (status != cases[i].status)
			DT_FAIL("request %zu: status %d, want %d", i, status, cases[i].status);
	}
	/* 8 KiB that are no request line */
	memset(big, 'A', 8192);
	DT_ASSERT_EQ(prom_raw(self->exp.port, big, 8192, &status), 0);
	DT_EXPECT_EQ(status, 0);
	free(big);
	/* and the server still serves */
	expect_render_busy(self->exp.port, "} 0.000000042");
}

DT_MAIN
