// SPDX-License-Identifier: MIT
/*
 * test_export_prometheus.c - the exporter against a real Prometheus server.
 *
 * Serves a synthetic /proc tree with `drmacct export --listen 127.0.0.1:0`,
 * starts /usr/bin/prometheus on another loopback port with a generated
 * config (1 s scrape interval, storage in a temp dir), waits for a scrape
 * and checks through /api/v1/query that the series exist with the exact
 * values the fdinfo text says (ns -> s, MiB -> bytes), that escaped label
 * values arrive intact, and that a counter increase is seen on the next
 * scrape, and (second test) that it scrapes over TLS with basic auth while
 * the same target without credentials is down with a 401. Everything started is stopped in the teardown (also on failure,
 * and children die with the test through PR_SET_PDEATHSIG). Skips when
 * /usr/bin/prometheus (or $DRMACCT_PROMETHEUS) is absent.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "proc_tree.h"
#include "prom_util.h"

#include <crypt.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* $DRMACCT_PROMETHEUS overrides the server binary (default: Debian's). */
static const char *prometheus(void)
{
	const char *p = getenv("DRMACCT_PROMETHEUS");

	return p && *p ? p : "/usr/bin/prometheus";
}

#define FDINFO_7(busy) \
	"drm-driver:\tsimgpu\n" \
	"drm-client-id:\t7\n" \
	"drm-engine-render:\t" busy " ns\n" \
	"drm-engine-copy:\t250000000 ns\n" \
	"drm-engine-capacity-copy:\t2\n" \
	"drm-cycles-render:\t987654321\n" \
	"drm-maxfreq-render:\t1500 MHz\n" \
	"drm-total-vram:\t8 MiB\n" \
	"drm-resident-vram:\t6 MiB\n" \
	"drm-total-system:\t12 KiB\n"

#define FDINFO_8 \
	"drm-driver:\tsimgpu\n" \
	"drm-client-id:\t8\n" \
	"drm-engine-render:\t42 ns\n"

DT_FIXTURE(pr) {
	struct proc_tree pt;
	struct prom_child exp, prom;
	char dir[256];
	int port;
};

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

DT_SETUP(pr)
{
	self->exp.pid = self->prom.pid = 0;
	self->exp.errfd = self->prom.errfd = -1;
	self->dir[0] = 0;
	if (access(prometheus(), X_OK))
		DT_SKIP("%s not installed (Debian package prometheus)", prometheus());
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	snprintf(self->dir, sizeof(self->dir), "%s/drmacct-prom.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(self->dir)) {
		self->dir[0] = 0;
		DT_FAIL("mkdtemp failed");
	}
}

DT_TEARDOWN(pr)
{
	prom_stop(&self->prom);
	prom_stop(&self->exp);
	if (self->dir[0])
		nftw(self->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	proc_tree_cleanup(&self->pt);
}

static void urlenc(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s && o + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-' || c == '.') {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = 0;
}

/* GET /api/v1/query?query=@q; the body, or NULL when Prometheus did not answer 200. */
static char *query(const struct dt_fx_pr *self, const char *q)
{
	char enc[2048], path[2200], *body = NULL;
	int status = 0;

	urlenc(q, enc, sizeof(enc));
	snprintf(path, sizeof(path), "/api/v1/query?query=%s", enc);
	if (prom_http(self->port, "GET", path, &status, &body) || status != 200) {
		free(body);
		return NULL;
	}
	return body;
}

static int nresults(const char *body)
{
	int n = 0;

	for (const char *p = body; (p = strstr(p, "\"metric\":")); p++)
		n++;
	return n;
}

static void log_tail(const struct dt_fx_pr *self)
{
	char path[300], line[512];
	FILE *f;
	long n = 0;

	snprintf(path, sizeof(path), "%s/prometheus.log", self->dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (++n > 0 && (strstr(line, "level=error") || strstr(line, "level=warn")))
			dt_info("prometheus: %s", line);
	fclose(f);
}

/* Poll @q until it has @want results (and @value in it when not NULL). */
static char *wait_query(const struct dt_fx_pr *self, const char *q, int want, const char *value,
			int secs)
{
	time_t end = time(NULL) + secs;

	do {
		char *b = query(self, q);

		if (b && nresults(b) == want && (!value || strstr(b, value)))
			return b;
		free(b);
		if (self->prom.pid > 0 &&
		    waitpid(self->prom.pid, NULL, WNOHANG) == self->prom.pid) {
			log_tail(self);
			DT_FAIL("prometheus exited");
		}
		usleep(250000);
	} while (time(NULL) < end);
	log_tail(self);
	DT_FAIL("no answer with %d series%s%s to %s within %d s", want, value ? " and " : "",
		value ? value : "", q, secs);
	return NULL;
}

/* Start Prometheus on a free loopback port with @scrape_configs; wait until ready. */
static void start_prometheus(struct dt_fx_pr *self, const char *scrape_configs)
{
	char cfg[300], data[300], log[300], listen[64], cfgarg[320], dataarg[320];
	char *argv[8];
	int status = 0, ret;
	time_t end;
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", self->dir);
	snprintf(data, sizeof(data), "%s/data", self->dir);
	snprintf(log, sizeof(log), "%s/prometheus.log", self->dir);
	f = fopen(cfg, "w");
	DT_ASSERT_NE(f, NULL);
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		   "scrape_configs:\n%s", scrape_configs);
	DT_ASSERT_EQ(fclose(f), 0);
	self->port = prom_free_port();
	DT_ASSERT_GT(self->port, 0);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", self->port);
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	snprintf(dataarg, sizeof(dataarg), "--storage.tsdb.path=%s", data);
	argv[0] = (char *)prometheus();
	argv[1] = cfgarg;
	argv[2] = dataarg;
	argv[3] = listen;
	argv[4] = "--storage.tsdb.retention.time=1h";
	argv[5] = NULL;
	DT_ASSERT_EQ(prom_spawn(&self->prom, argv, log), 0);
	dt_info("prometheus on 127.0.0.1:%d", self->port);

	/* Ready? */
	end = time(NULL) + 60;
	do {
		char *body = NULL;

		ret = prom_http(self->port, "GET", "/-/ready", &status, &body);
		free(body);
		if (!ret && status == 200)
			break;
		if (waitpid(self->prom.pid, NULL, WNOHANG) == self->prom.pid) {
			self->prom.pid = 0;
			log_tail(self);
			DT_FAIL("prometheus exited before it was ready");
		}
		usleep(200000);
	} while (time(NULL) < end);
	DT_ASSERT_EQ(status, 200);
}

DT_TEST_F_TIMEOUT(pr, scraped_series_and_values, 180)
{
	char jobs[256], *b;
	int ret;

	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 100, "game"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 100, 9, 226, 128, FDINFO_7("1234567890")), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 200, "we\"ird\\name"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 200, 3, 226, 129, FDINFO_8), 0);
	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	dt_info("exporter on 127.0.0.1:%d", self->exp.port);
	snprintf(jobs, sizeof(jobs), "  - job_name: drmacct\n    static_configs:\n"
		 "      - targets: ['127.0.0.1:%d']\n", self->exp.port);
	start_prometheus(self, jobs);

	/* The scrape target is up, and every series is there with its value. */
	b = wait_query(self, "up{job=\"drmacct\"}", 1, ",\"1\"]", 60);
	free(b);
	b = wait_query(self, "drmacct_client_engine_busy_seconds_total{client_id=\"7\","
			     "engine=\"render\"}", 1, NULL, 30);
	EXPECT_HAS(b, ",\"1.23456789\"]");
	EXPECT_HAS(b, "\"driver\":\"simgpu\"");
	EXPECT_HAS(b, "\"device\":\"renderD128\"");
	EXPECT_HAS(b, "\"job\":\"drmacct\"");
	free(b);
	/* who holds the client: joined in from drmacct_client_info */
	b = wait_query(self, "drmacct_client_engine_busy_seconds_total{client_id=\"7\","
			     "engine=\"render\"} * on (driver, device, client_id, holder) "
			     "group_left (pid, comm) drmacct_client_info", 1, ",\"1.23456789\"]", 10);
	EXPECT_HAS(b, "\"pid\":\"100\"");
	EXPECT_HAS(b, "\"comm\":\"game\"");
	free(b);
	b = wait_query(self, "drmacct_client_engine_busy_seconds_total{engine=\"copy\"}", 1,
		       ",\"0.25\"]", 10);
	free(b);
	b = wait_query(self, "drmacct_client_engine_cycles_total", 1, ",\"987654321\"]", 10);
	free(b);
	b = wait_query(self, "drmacct_client_engine_max_frequency_hertz", 1, ",\"1500000000\"]",
		       10);
	free(b);
	b = wait_query(self, "drmacct_client_engine_capacity{engine=\"copy\"}", 1, ",\"2\"]", 10);
	free(b);
	b = wait_query(self, "drmacct_client_memory_bytes{client_id=\"7\",region=\"vram\","
			     "kind=\"total\"}", 1, ",\"8388608\"]", 10);
	free(b);
	b = wait_query(self, "drmacct_client_memory_bytes{region=\"vram\",kind=\"resident\"}", 1,
		       ",\"6291456\"]", 10);
	free(b);
	b = wait_query(self, "drmacct_client_memory_bytes{region=\"system\"}", 1, ",\"12288\"]",
		       10);
	free(b);
	b = wait_query(self, "count(drmacct_client_engine_busy_seconds_total)", 1, ",\"3\"]", 10);
	free(b);
	b = wait_query(self, "sum(drmacct_clients)", 1, ",\"2\"]", 10);
	free(b);
	/* the device total of renderD128: only client 7 there */
	b = wait_query(self, "drmacct_device_engine_busy_seconds_total{device=\"renderD128\","
			     "engine=\"render\"}", 1, ",\"1.23456789\"]", 10);
	free(b);
	/* the escaped comm arrives as it was: JSON shows we\"ird\\name */
	b = wait_query(self, "drmacct_client_info{client_id=\"8\"}", 1, ",\"1\"]", 10);
	EXPECT_HAS(b, "\"comm\":\"we\\\"ird\\\\name\"");
	free(b);
	/* the utilisation query of Documentation/exporter.rst: one result per
	 * (comm, pid, engine) -- game/render, game/copy, weird/render */
	b = wait_query(self, "sum by (comm, pid, engine) ("
			     "rate(drmacct_client_engine_busy_seconds_total[1m]) / "
			     "drmacct_client_engine_capacity * on (driver, device, client_id, "
			     "holder) group_left (comm, pid) drmacct_client_info)", 3, NULL, 20);
	EXPECT_HAS(b, "\"comm\":\"game\"");
	EXPECT_HAS(b, "\"pid\":\"200\"");
	free(b);
	/* TYPE counter made it through: rate() works on it */
	b = query(self, "rate(drmacct_client_engine_busy_seconds_total[1m])");
	DT_ASSERT_NE(b, NULL);
	EXPECT_HAS(b, "\"status\":\"success\"");
	free(b);

	/* The next scrapes see the counter move. */
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 9, FDINFO_7("3000000000")), 0);
	b = wait_query(self, "drmacct_client_engine_busy_seconds_total{client_id=\"7\","
			     "engine=\"render\"}", 1, ",\"3\"]", 30);
	free(b);

	ret = prom_stop(&self->prom);
	DT_EXPECT_TRUE(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
	ret = prom_stop(&self->exp);
	DT_EXPECT_TRUE(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
}

/*
 * The exporter as a fleet runs it: TLS (a certificate signed by a CA the
 * test makes with openssl) and basic auth (a bcrypt hash). Prometheus,
 * given the CA and the credentials, scrapes it; the same target without
 * credentials is down with a 401, and plain HTTP to it is down too.
 */
DT_TEST_F_TIMEOUT(pr, scraped_over_tls_with_basic_auth, 180)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	char cmd[1500], web[600], salt[64], jobs[2048], *b;
	const char *hash;
	FILE *f;
	int ret;

	DT_ASSERT_NE(cd, NULL);
	if (system("command -v openssl >/dev/null"))
		DT_SKIP("openssl not installed");
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 100, "game"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 100, 9, 226, 128, FDINFO_7("1234567890")), 0);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && exec 2>openssl.log && "
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout ca.key -out ca.crt -days 2 -subj /CN=drmacct-test-ca && "
		 "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout tls.key -out tls.csr -subj /CN=localhost && "
		 "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
		 "openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		 "-out tls.crt -days 2 -extfile san.ext", self->dir);
	DT_ASSERT_EQ(system(cmd), 0);
	hash = crypt_gensalt_rn("$2y$", 10, NULL, 0, salt, sizeof(salt));
	DT_ASSERT_NE(hash, NULL);
	hash = crypt_rn("fleet-pass", salt, cd, (int)sizeof(*cd));
	DT_ASSERT_TRUE(hash && hash[0] == '$');
	snprintf(web, sizeof(web), "%s/web.yml", self->dir);
	f = fopen(web, "w");
	DT_ASSERT_NE(f, NULL);
	fprintf(f, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
		   "basic_auth_users:\n  prometheus: %s\n", hash);
	DT_ASSERT_EQ(fclose(f), 0);
	free(cd);
	DT_ASSERT_EQ(prom_start_exporter_argv(&self->exp, (char *const[]){
		"--listen", "127.0.0.1:0", "--web-config", web, "--proc-root", self->pt.root,
		NULL }), 0);
	dt_info("exporter on https://127.0.0.1:%d", self->exp.port);
	snprintf(jobs, sizeof(jobs),
		 "  - job_name: tls\n    scheme: https\n    tls_config:\n      ca_file: %s/ca.crt\n"
		 "    basic_auth:\n      username: prometheus\n      password: fleet-pass\n"
		 "    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
		 "  - job_name: noauth\n    scheme: https\n    tls_config:\n      ca_file: %s/ca.crt\n"
		 "    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
		 "  - job_name: plain\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n",
		 self->dir, self->exp.port, self->dir, self->exp.port, self->exp.port);
	start_prometheus(self, jobs);

	b = wait_query(self, "up{job=\"tls\"}", 1, ",\"1\"]", 60);
	free(b);
	b = wait_query(self, "drmacct_client_engine_busy_seconds_total{job=\"tls\","
			     "client_id=\"7\",engine=\"render\"}", 1, ",\"1.23456789\"]", 30);
	free(b);
	b = wait_query(self, "up{job=\"noauth\"}", 1, ",\"0\"]", 30);
	free(b);
	b = wait_query(self, "up{job=\"plain\"}", 1, ",\"0\"]", 30);
	free(b);
	/* why: Prometheus says 401 for the job without credentials */
	{
		char *body = NULL;
		int status = 0;
		time_t end = time(NULL) + 30;

		do {
			free(body);
			body = NULL;
			DT_ASSERT_EQ(prom_http(self->port, "GET", "/api/v1/targets", &status,
					       &body), 0);
			if (body && strstr(body, "401 Unauthorized"))
				break;
			usleep(250000);
		} while (time(NULL) < end);
		DT_ASSERT_NE(body, NULL);
		EXPECT_HAS(body, "401 Unauthorized");
		free(body);
	}
	/* none of the series came in through the jobs that were refused */
	b = wait_query(self, "count(drmacct_client_info{job=~\"noauth|plain\"})", 0, NULL, 5);
	free(b);

	ret = prom_stop(&self->prom);
	DT_EXPECT_TRUE(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
	ret = prom_stop(&self->exp);
	DT_EXPECT_TRUE(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
}

DT_MAIN
