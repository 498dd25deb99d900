// SPDX-License-Identifier: MIT
/*
 * test_export_web.c - `drmacct export` for fleets: --web-config (every
 * error of the file named, TLS, basic auth with bcrypt hashes, client
 * certificates, headers), listening beyond loopback, the cgroup label,
 * and the textfile mode (atomic replacement, one tracker with --interval,
 * --state across runs). Certificates are made here with openssl (a CA, a
 * server and a client certificate it signs, and a client certificate it
 * does not); the HTTPS client is curl. Skips when either is missing.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "proc_tree.h"
#include "prom_util.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FDINFO(busy) \
	"drm-driver:\tsimgpu\ndrm-client-id:\t7\ndrm-engine-render:\t" busy " ns\n" \
	"drm-total-system:\t2 MiB\n"

DT_FIXTURE(web) {
	struct proc_tree pt;
	struct prom_child exp;
	char dir[256];
	char hash[128];		/* bcrypt of "s3cret" */
};

/* Output of the shell command @cmd (stdout, stderr to /dev/null unless in it). */
static char *sh(const char *cmd, int *rc)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char tmp[4096];
	size_t n;

	DT_ASSERT_TRUE(p != NULL && m != NULL);
	while ((n = fread(tmp, 1, sizeof(tmp), p)) > 0)
		fwrite(tmp, 1, n, m);
	DT_ASSERT_EQ(fclose(m), 0);
	*rc = pclose(p);
	*rc = WIFEXITED(*rc) ? WEXITSTATUS(*rc) : 128;
	return buf;
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

static void put(const struct dt_fx_web *self, const char *name, const char *text)
{
	char path[400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	f = fopen(path, "w");
	DT_ASSERT_NE(f, NULL);
	fputs(text, f);
	DT_ASSERT_EQ(fclose(f), 0);
}

DT_SETUP(web)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	char cmd[2048], salt[64], *out;
	const char *h;
	int rc;

	self->exp.pid = 0;
	self->exp.errfd = -1;
	self->dir[0] = 0;
	DT_ASSERT_NE(cd, NULL);
	if (system("command -v openssl >/dev/null && command -v curl >/dev/null"))
		DT_SKIP("openssl or curl not installed");
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 100, "game"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 100, 9, 226, 128, FDINFO("1500000000")), 0);
	DT_ASSERT_EQ(proc_tree_write(&self->pt, 100, "cgroup",
				     "0::/user.slice/user-1000.slice/game.scope\n", 42), 0);
	snprintf(self->dir, sizeof(self->dir), "%s/drmacct-web.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(self->dir)) {
		self->dir[0] = 0;
		DT_FAIL("mkdtemp failed");
	}
	/* A CA; a server and a client certificate it signs; a client one it does not. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && exec 2>openssl.log && "
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout ca.key -out ca.crt -days 2 -subj /CN=drmacct-test-ca && "
		 "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout tls.key -out tls.csr -subj /CN=localhost && "
		 "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
		 "openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		 "-out tls.crt -days 2 -extfile san.ext && "
		 "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout client.key -out client.csr -subj /CN=prometheus && "
		 "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
		 "-out client.crt -days 2 && "
		 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
		 "-keyout rogue.key -out rogue.crt -days 2 -subj /CN=rogue", self->dir);
	out = sh(cmd, &rc);
	free(out);
	DT_ASSERT_EQ(rc, 0);
	/* cost 5: a fast test, the same code path as cost 10 */
	h = crypt_gensalt_rn("$2b$", 5, NULL, 0, salt, sizeof(salt));
	DT_ASSERT_NE(h, NULL);
	h = crypt_rn("s3cret", salt, cd, (int)sizeof(*cd));
	DT_ASSERT_TRUE(h && h[0] == '$');
	snprintf(self->hash, sizeof(self->hash), "%s", h);
	free(cd);
}

DT_TEARDOWN(web)
{
	prom_stop(&self->exp);
	if (self->dir[0])
		nftw(self->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	proc_tree_cleanup(&self->pt);
}

/* `drmacct export --listen 127.0.0.1:0 --web-config DIR/@name`: exit 1 and @msg. */
static void config_fails(struct dt_fx_web *self, const char *name, const char *yaml,
			 const char *msg)
{
	char path[400];
	struct cli_result r;

	put(self, name, yaml);
	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	cli_run(&r, "export", "--listen", "127.0.0.1:0", "--web-config", path, "--proc-root",
		self->pt.root, NULL);
	if (r.status != 1 || !strstr(r.err, msg))
		DT_FAIL("%s: status %d, stderr:\n%s\nwant 1 and \"%s\"", name, r.status, r.err,
			msg);
	EXPECT_HAS(r.err, path);
	DT_EXPECT_STREQ(r.out, "");
	cli_result_free(&r);
}

DT_TEST_F_TIMEOUT(web, web_config_errors, 120)
{
	char y[1024];
	struct cli_result r;

	cli_run(&r, "export", "--listen", "127.0.0.1:0", "--web-config", "/nonexistent/w.yml",
		NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "--web-config: /nonexistent/w.yml: No such file or directory");
	cli_result_free(&r);
	config_fails(self, "e1.yml", "tls_server_config: [\n", "e1.yml:");
	config_fails(self, "e2.yml", "- a\n- b\n", "a mapping is expected at the top");
	config_fails(self, "e3.yml", "web: 1\n", "unknown key 'web'");
	config_fails(self, "e4.yml", "tls_server_config:\n  key_file: tls.key\n",
		     "cert_file is missing");
	config_fails(self, "e5.yml", "tls_server_config:\n  cert_file: tls.crt\n",
		     "key_file is missing");
	config_fails(self, "e6.yml", "tls_server_config:\n  cert_file: nope.crt\n"
		     "  key_file: tls.key\n", "cert_file: cannot read");
	/* a key that is not the certificate's */
	config_fails(self, "e7.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: rogue.key\n", "cert_file and key_file:");
	config_fails(self, "e8.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		     "cipher_suites is not supported");
	config_fails(self, "e9.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  min_version: TLS14\n", "'TLS14' is not TLS10");
	config_fails(self, "e10.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  min_version: TLS13\n  max_version: TLS12\n",
		     "min_version is above max_version");
	config_fails(self, "e11.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  client_auth_type: RequireAnyClientCert\n",
		     "'RequireAnyClientCert' is not supported");
	config_fails(self, "e12.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  client_auth_type: RequireAndVerifyClientCert\n",
		     "client_auth_type needs client_ca_file");
	config_fails(self, "e13.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  client_ca_file: ca.crt\n",
		     "client_ca_file without a client_auth_type");
	config_fails(self, "e14.yml", "basic_auth_users:\n  prom: plaintext\n",
		     "prom: not a bcrypt hash");
	config_fails(self, "e15.yml", "basic_auth_users:\n  'a:b': $2y$10$x\n",
		     "a user name is a non-empty string without ':'");
	config_fails(self, "e16.yml", "basic_auth_users: [a]\n", "a mapping of user");
	config_fails(self, "e17.yml", "http_server_config:\n  headers:\n    Server: x\n",
		     "'Server' cannot be set");
	config_fails(self, "e18.yml", "http_server_config:\n  http2: maybe\n",
		     "http2: true or false");
	config_fails(self, "e19.yml", "http_server_config:\n  tls: 1\n",
		     "http_server_config: unknown key 'tls'");
	config_fails(self, "e20.yml", "tls_server_config:\n  cert_file: tls.crt\n"
		     "  key_file: tls.key\n  client_auth_type: RequireAndVerifyClientCert\n"
		     "  client_ca_file: tls.key\n", "client_ca_file:");
	config_fails(self, "e22.yml", "tls_server_config: 1\n",
		     "tls_server_config: a mapping is expected");
	config_fails(self, "e23.yml", "tls_server_config:\n  cert_file: [a]\n",
		     "cert_file: a string is expected");
	config_fails(self, "e24.yml", "http_server_config: x\n",
		     "http_server_config: a mapping is expected");
	config_fails(self, "e25.yml", "http_server_config:\n  headers: [x]\n",
		     "headers: a mapping is expected");
	config_fails(self, "e26.yml", "http_server_config:\n  headers:\n"
		     "    X-Frame-Options: |\n      DENY\n      more\n", "a header value is one line");
	config_fails(self, "e27.yml", "tls_server_config:\n  ? [a]\n  : b\n",
		     "tls_server_config: keys are strings");
	config_fails(self, "e28.yml", "tls_server_config:\n  cert_file: ''\n  key_file: tls.key\n",
		     "cert_file is empty");
	snprintf(y, sizeof(y), "basic_auth_users:\n  prom: %s\n  prom: %s\n", self->hash,
		 self->hash);
	config_fails(self, "e21.yml", y, "prom twice");
	/* beyond loopback, a configuration with neither TLS nor users */
	put(self, "empty.yml", "");
	snprintf(y, sizeof(y), "%s/empty.yml", self->dir);
	cli_run(&r, "export", "--listen", "0.0.0.0:0", "--web-config", y, "--proc-root",
		self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "sets neither TLS nor basic auth: beyond loopback that is --insecure");
	cli_result_free(&r);
}

/* curl -w '%{http_code}' with @args against https://127.0.0.1:PORT@path: the code. */
static int curl_code(const struct dt_fx_web *self, const char *args, const char *path,
		     char **out)
{
	char cmd[2048];
	int rc, code;
	char *o, *nl;

	snprintf(cmd, sizeof(cmd), "cd '%s' && curl -sS -m 10 -D headers.txt -o body.txt "
		 "-w '%%{http_code}' %s 'https://127.0.0.1:%d%s' 2>&1; cat body.txt 2>/dev/null",
		 self->dir, args, self->exp.port, path);
	o = sh(cmd, &rc);
	code = atoi(o);
	nl = o + strspn(o, "0123456789");
	if (out)
		*out = strdup(nl);
	free(o);
	return code;
}

static char *headers(const struct dt_fx_web *self)
{
	char cmd[400];
	int rc;

	snprintf(cmd, sizeof(cmd), "cat '%s/headers.txt'", self->dir);
	return sh(cmd, &rc);
}

DT_TEST_F_TIMEOUT(web, tls_and_basic_auth, 120)
{
	char y[1024], path[400], *body = NULL, *h;
	int ret;

	snprintf(y, sizeof(y), "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
		 "  min_version: TLS12\nhttp_server_config:\n  http2: true\n  headers:\n"
		 "    Strict-Transport-Security: max-age=31536000\n"
		 "basic_auth_users:\n  prom: %s\n  other: %s\n", self->hash, self->hash);
	put(self, "web.yml", y);
	snprintf(path, sizeof(path), "%s/web.yml", self->dir);
	DT_ASSERT_EQ(prom_start_exporter_argv(&self->exp, (char *const[]){
		"--listen", "127.0.0.1:0", "--web-config", path, "--proc-root", self->pt.root,
		NULL }), 0);
	/* no credentials, a wrong password, an unknown user: 401 with the realm */
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt", "/metrics", NULL), 401);
	h = headers(self);
	EXPECT_HAS(h, "WWW-Authenticate: Basic realm=\"drmacct\"");
	EXPECT_HAS(h, "Strict-Transport-Security: max-age=31536000");
	free(h);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u prom:wrong", "/metrics", NULL), 401);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u nobody:s3cret", "/metrics", NULL), 401);
	/* the server is not trusted without the CA */
	DT_EXPECT_EQ(curl_code(self, "-u prom:s3cret", "/metrics", NULL), 0);
	/* right: the metrics, with the cgroup of the client's process */
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u prom:s3cret", "/metrics", &body), 200);
	EXPECT_HAS(body, "drmacct_client_engine_busy_seconds_total{driver=\"simgpu\","
		   "device=\"renderD128\",client_id=\"7\",engine=\"render\"} 1.500000000\n");
	EXPECT_HAS(body, "drmacct_client_info{driver=\"simgpu\",device=\"renderD128\","
		   "client_id=\"7\",pid=\"100\",comm=\"game\",holders=\"100:9\","
		   "cgroup=\"/user.slice/user-1000.slice/game.scope\"} 1\n");
	free(body);
	h = headers(self);
	EXPECT_HAS(h, "Content-Type: text/plain; version=0.0.4; charset=utf-8");
	EXPECT_HAS(h, "Strict-Transport-Security: max-age=31536000");
	free(h);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u other:s3cret -I", "/metrics", NULL), 200);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u prom:s3cret", "/nope", NULL), 404);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u prom:s3cret -X POST", "/metrics", NULL),
		     405);
	/* TLS 1.1 is below min_version */
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt -u prom:s3cret --tlsv1.1 --tls-max 1.1",
			       "/metrics", NULL), 0);
	ret = prom_stop(&self->exp);
	DT_ASSERT_TRUE(WIFEXITED(ret));
	DT_EXPECT_EQ(WEXITSTATUS(ret), 0);
}

DT_TEST_F_TIMEOUT(web, client_certificates, 120)
{
	char path[400];

	put(self, "mtls.yml", "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
	    "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n");
	snprintf(path, sizeof(path), "%s/mtls.yml", self->dir);
	DT_ASSERT_EQ(prom_start_exporter_argv(&self->exp, (char *const[]){
		"--listen", "127.0.0.1:0", "--web-config", path, "--proc-root", self->pt.root,
		NULL }), 0);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt --cert client.crt --key client.key",
			       "/metrics", NULL), 200);
	/* no certificate, or one the CA did not sign: refused */
	DT_EXPECT_NE(curl_code(self, "--cacert ca.crt", "/metrics", NULL), 200);
	DT_EXPECT_NE(curl_code(self, "--cacert ca.crt --cert rogue.crt --key rogue.key",
			       "/metrics", NULL), 200);
	prom_stop(&self->exp);

	/* VerifyClientCertIfGiven: none is fine, a rogue one is not */
	put(self, "ifgiven.yml", "tls_server_config:\n  cert_file: tls.crt\n"
	    "  key_file: tls.key\n  client_auth_type: VerifyClientCertIfGiven\n"
	    "  client_ca_file: ca.crt\n");
	snprintf(path, sizeof(path), "%s/ifgiven.yml", self->dir);
	DT_ASSERT_EQ(prom_start_exporter_argv(&self->exp, (char *const[]){
		"--listen", "127.0.0.1:0", "--web-config", path, "--proc-root", self->pt.root,
		NULL }), 0);
	DT_EXPECT_EQ(curl_code(self, "--cacert ca.crt", "/metrics", NULL), 200);
	DT_EXPECT_NE(curl_code(self, "--cacert ca.crt --cert rogue.crt --key rogue.key",
			       "/metrics", NULL), 200);
}

/* A port another exporter holds: exit 1, said. */
DT_TEST_F_TIMEOUT(web, port_in_use, 60)
{
	char addr[64];
	struct cli_result r;

	DT_ASSERT_EQ(prom_start_exporter(&self->exp, self->pt.root), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", self->exp.port);
	cli_run(&r, "export", "--listen", addr, "--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot listen on");
	EXPECT_HAS(r.err, "Address already in use");
	cli_result_free(&r);
}

/* Every address (:PORT) with --insecure: plain HTTP, reachable on loopback too. */
DT_TEST_F_TIMEOUT(web, every_address_insecure, 60)
{
	char *body = NULL;
	int status, ret;

	DT_ASSERT_EQ(prom_start_exporter_argv(&self->exp, (char *const[]){
		"--listen", ":0", "--insecure", "--proc-root", self->pt.root, NULL }), 0);
	DT_ASSERT_EQ(prom_http(self->exp.port, "GET", "/metrics", &status, &body), 0);
	DT_EXPECT_EQ(status, 200);
	DT_ASSERT_NE(body, NULL);
	EXPECT_HAS(body, "client_id=\"7\",engine=\"render\"} 1.500000000\n");
	free(body);
	ret = prom_stop(&self->exp);
	DT_EXPECT_TRUE(WIFEXITED(ret) && WEXITSTATUS(ret) == 0);
}

static char *slurp(const char *path)
{
	char cmd[600];
	int rc;
	char *s;

	snprintf(cmd, sizeof(cmd), "cat '%s' 2>/dev/null", path);
	s = sh(cmd, &rc);
	if (rc) {
		free(s);
		return NULL;
	}
	return s;
}

/* The files in @dir but "." and "..", as one line. */
static char *listing(const char *dir)
{
	char cmd[600];
	int rc;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | tr '\\n' ' '", dir);
	return sh(cmd, &rc);
}

DT_TEST_F_TIMEOUT(web, textfile_once, 60)
{
	char out[400], file[560], *t, *l;
	struct cli_result r;
	struct stat st;

	snprintf(out, sizeof(out), "%s/textfile", self->dir);
	DT_ASSERT_EQ(mkdir(out, 0755), 0);
	cli_run(&r, "export", "--textfile", out, "--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_STREQ(r.out, "");
	cli_result_free(&r);
	snprintf(file, sizeof(file), "%s/drmacct.prom", out);
	DT_ASSERT_EQ(stat(file, &st), 0);
	DT_EXPECT_EQ(st.st_mode & 0777, 0644);
	t = slurp(file);
	DT_ASSERT_NE(t, NULL);
	EXPECT_HAS(t, "client_id=\"7\",engine=\"render\"} 1.500000000\n");
	EXPECT_HAS(t, "drmacct_device_engine_busy_seconds_total{driver=\"simgpu\","
		   "device=\"renderD128\",engine=\"render\"} 1.500000000\n");
	free(t);
	/* nothing else left behind: no temporary file */
	l = listing(out);
	DT_EXPECT_STREQ(l, "drmacct.prom ");
	free(l);
	/* drmacct.prom is a directory: the rename fails, exit 1, no temporary file left */
	{
		char sub[480], blocker[520];

		snprintf(sub, sizeof(sub), "%s/blocked", self->dir);
		snprintf(blocker, sizeof(blocker), "%s/drmacct.prom/x", sub);
		DT_ASSERT_EQ(mkdir(sub, 0755), 0);
		snprintf(file, sizeof(file), "%s/drmacct.prom", sub);
		DT_ASSERT_EQ(mkdir(file, 0755), 0);
		DT_ASSERT_EQ(mkdir(blocker, 0755), 0);
		cli_run(&r, "export", "--textfile", sub, "--proc-root", self->pt.root, NULL);
		DT_EXPECT_EQ(r.status, 1);
		EXPECT_HAS(r.err, "cannot rename");
		cli_result_free(&r);
		l = listing(sub);
		DT_EXPECT_STREQ(l, "drmacct.prom ");
		free(l);
	}
	/* a directory it cannot write: exit 1, the old file stays */
	if (geteuid() != 0) {
		DT_ASSERT_EQ(chmod(out, 0555), 0);
		cli_run(&r, "export", "--textfile", out, "--proc-root", self->pt.root, NULL);
		DT_EXPECT_EQ(r.status, 1);
		EXPECT_HAS(r.err, "cannot write");
		cli_result_free(&r);
		DT_ASSERT_EQ(chmod(out, 0755), 0);
	}
}

/* The value of the line starting with @prefix in @text; "" when none. */
static void value_of(const char *text, const char *prefix, char *buf, size_t len)
{
	const char *s = text ? strstr(text, prefix) : NULL, *nl, *sp;

	buf[0] = 0;
	if (!s || !(nl = strchr(s, '\n')))
		return;
	for (sp = nl; sp > s && sp[-1] != ' '; sp--)
		;
	snprintf(buf, len, "%.*s", (int)(nl - sp), sp);
}

/* Wait until DIR/drmacct.prom has @want for the client's busy series. */
static void wait_busy(const char *file, const char *want)
{
	char v[64] = "";

	for (int i = 0; i < 100; i++) {
		char *t = slurp(file);

		value_of(t, "drmacct_client_engine_busy_seconds_total{", v, sizeof(v));
		free(t);
		if (!strcmp(v, want))
			return;
		usleep(50000);
	}
	DT_FAIL("%s: busy %s, want %s", file, v, want);
}

/* --interval: one tracker (the catch-up rule across writes), renamed each time. */
DT_TEST_F_TIMEOUT(web, textfile_interval, 60)
{
	char out[400], file[440], *l;
	struct stat st;
	int ret, fd;

	snprintf(out, sizeof(out), "%s/tf", self->dir);
	snprintf(file, sizeof(file), "%s/drmacct.prom", out);
	DT_ASSERT_EQ(mkdir(out, 0755), 0);
	DT_ASSERT_EQ(prom_spawn(&self->exp, (char *const[]){
		(char *)cli_bin(), "export", "--textfile", out, "--interval", "100ms",
		"--proc-root", self->pt.root, NULL }, "/dev/null"), 0);
	wait_busy(file, "1.500000000");
	/* a new file each time, renamed over the old: the one open here is unlinked */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	DT_ASSERT_GE(fd, 0);
	/* the counter goes back in fdinfo: held (a fresh tracker would not) */
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 9, FDINFO("1000")), 0);
	usleep(400000);
	wait_busy(file, "1.500000000");
	DT_ASSERT_EQ(fstat(fd, &st), 0);
	DT_EXPECT_EQ(st.st_nlink, 0);
	close(fd);
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 9, FDINFO("2500000000")), 0);
	wait_busy(file, "2.500000000");
	ret = prom_stop(&self->exp);
	DT_ASSERT_TRUE(WIFEXITED(ret));
	DT_EXPECT_EQ(WEXITSTATUS(ret), 0);
	l = listing(out);
	DT_EXPECT_STREQ(l, "drmacct.prom ");
	free(l);
}

/* One run of `export --textfile OUT --state STATE`; the file's text. */
static char *run_state(struct dt_fx_web *self, const char *out, const char *state,
		       const char *want_err)
{
	char file[440];
	struct cli_result r;

	cli_run(&r, "export", "--textfile", out, "--state", state, "--proc-root", self->pt.root,
		NULL);
	DT_EXPECT_EQ(r.status, 0);
	if (want_err)
		EXPECT_HAS(r.err, want_err);
	else
		DT_EXPECT_STREQ(r.err, "");
	cli_result_free(&r);
	snprintf(file, sizeof(file), "%s/drmacct.prom", out);
	return slurp(file);
}

/*
 * A timer's runs, each a fresh process, carry the series and totals in
 * --state: a client that closed lingers one run and then only counts in
 * the device total, which never goes down; a broken state is said and
 * replaced; an unwritable one fails.
 */
DT_TEST_F_TIMEOUT(web, textfile_state_across_runs, 60)
{
	char out[400], state[440], v[64], *t;
	struct cli_result r;

	snprintf(out, sizeof(out), "%s/ts", self->dir);
	snprintf(state, sizeof(state), "%s/export.state", self->dir);
	DT_ASSERT_EQ(mkdir(out, 0755), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 200, "enc"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 200, 3, 226, 128,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t8\n"
					  "drm-engine-render:\t250000000 ns\n"), 0);
	t = run_state(self, out, state, NULL);
	value_of(t, "drmacct_device_engine_busy_seconds_total{", v, sizeof(v));
	DT_EXPECT_STREQ(v, "1.750000000");
	free(t);
	/* client 8 closes: the next run still shows it, the total stays */
	DT_ASSERT_EQ(proc_tree_remove(&self->pt, 200, NULL), 0);
	t = run_state(self, out, state, NULL);
	EXPECT_HAS(t, "client_id=\"8\",engine=\"render\"} 0.250000000\n");
	value_of(t, "drmacct_device_engine_busy_seconds_total{", v, sizeof(v));
	DT_EXPECT_STREQ(v, "1.750000000");
	value_of(t, "drmacct_clients{", v, sizeof(v));
	DT_EXPECT_STREQ(v, "1");
	free(t);
	/* the run after: dropped, counted in the total and as closed */
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 9, FDINFO("1600000000")), 0);
	t = run_state(self, out, state, NULL);
	DT_EXPECT_TRUE(strstr(t, "client_id=\"8\"") == NULL);
	value_of(t, "drmacct_device_engine_busy_seconds_total{", v, sizeof(v));
	DT_EXPECT_STREQ(v, "1.850000000");
	value_of(t, "drmacct_device_clients_closed_total{", v, sizeof(v));
	DT_EXPECT_STREQ(v, "1");
	free(t);
	/* client 7's counter goes back in fdinfo: held across runs too */
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 9, FDINFO("5")), 0);
	t = run_state(self, out, state, NULL);
	EXPECT_HAS(t, "client_id=\"7\",engine=\"render\"} 1.600000000\n");
	free(t);
	/* a state that is not one: said, started afresh, replaced by a good one */
	put(self, "export.state", "drmacct-export-state 1\nclient\tx\n");
	t = run_state(self, out, state, "export.state:2: not a state this drmacct wrote");
	value_of(t, "drmacct_device_engine_busy_seconds_total{", v, sizeof(v));
	DT_EXPECT_STREQ(v, "0.000000005");
	free(t);
	t = run_state(self, out, state, NULL);
	free(t);
	/* a state that cannot be written: exit 1 */
	cli_run(&r, "export", "--textfile", out, "--state", "/nonexistent/dir/state",
		"--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "--state: cannot write /nonexistent/dir/state.");
	cli_result_free(&r);
}

DT_MAIN
