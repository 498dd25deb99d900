// SPDX-License-Identifier: MIT
/*
 * http.c - the exporter's web server on libmicrohttpd (see http.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "http.h"

#ifndef DRMACCT_NO_HTTP
#include <crypt.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>

/* Idle connections are closed after this; at most this many at once. */
#define HTTP_TIMEOUT_S		10
#define HTTP_MAX_CONNS		256
#define HTTP_MAX_PER_IP		32

struct http_ctx {
	const char *cmd;
	const struct web_config *wc;
	http_metrics_fn fn;
	void *arg;
};

static void logger(void *cls, const char *fmt, va_list ap)
{
	const struct http_ctx *x = cls;
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	msg[strcspn(msg, "\n")] = 0;
	cli_error(x->cmd, "web server: %s", msg);
	free(msg);
}

static bool same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return !d;
}

/* Does @pass hash to @hash (bcrypt, through libcrypt)? */
static bool bcrypt_ok(const char *pass, const char *hash)
{
	struct crypt_data *d = calloc(1, sizeof(*d));
	const char *r;
	bool ok;

	if (!d)
		return false;
	r = crypt_rn(pass, hash, d, (int)sizeof(*d));
	ok = r && r[0] != '*' && same(r, hash);
	explicit_bzero(d, sizeof(*d));
	free(d);
	return ok;
}

static bool authorized(const struct http_ctx *x, struct MHD_Connection *conn)
{
	const struct web_config *wc = x->wc;
	char *pass = NULL, *user;
	const struct web_pair *u = NULL;
	bool ok;

	user = MHD_basic_auth_get_username_password(conn, &pass);
	if (!user || !pass) {
		MHD_free(user);
		MHD_free(pass);
		return false;
	}
	for (size_t i = 0; i < wc->nusers && !u; i++)
		if (same(wc->users[i].name, user))
			u = &wc->users[i];
	/* an unknown user costs the same bcrypt as a known one */
	ok = bcrypt_ok(pass, u ? u->value : wc->users[0].value) && u;
	explicit_bzero(pass, strlen(pass));
	MHD_free(user);
	MHD_free(pass);
	return ok;
}

/* 0: fine; else the reason the client's certificate is refused. */
static const char *client_cert_refused(const struct http_ctx *x, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t s;
	unsigned int n = 0, status = 0;

	if (x->wc->client_auth == WEB_CLIENT_NONE)
		return NULL;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return "no TLS session";
	s = (gnutls_session_t)ci->tls_session;
	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return x->wc->client_auth == WEB_CLIENT_REQUIRE_VERIFY ?
		       "a client certificate is required" : NULL;
	if (gnutls_certificate_verify_peers2(s, &status) < 0 || status)
		return "the client certificate does not verify against client_ca_file";
	return NULL;
}

static enum MHD_Result reply(const struct http_ctx *x, struct MHD_Connection *conn,
			     unsigned int code, const char *type, char *body, size_t len,
			     bool owned, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, owned ? MHD_RESPMEM_MUST_FREE :
							    MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	for (size_t i = 0; x->wc && i < x->wc->nheaders; i++)
		MHD_add_response_header(r, x->wc->headers[i].name, x->wc->headers[i].value);
	if (code == MHD_HTTP_UNAUTHORIZED)
		ret = MHD_queue_basic_auth_fail_response(conn, "drmacct", r);
	else
		ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

#define TEXT "text/plain; charset=utf-8"
#define STATIC(s) (char *)(s), sizeof(s) - 1, false

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	const struct http_ctx *x = cls;
	const char *why;
	char *body = NULL, *msg = NULL;
	size_t len = 0;
	int ret;

	(void)version, (void)upload, (void)upload_size, (void)con_cls;
	if (x->wc && x->wc->cert_pem && (why = client_cert_refused(x, conn))) {
		if (asprintf(&msg, "forbidden: %s\n", why) < 0)
			return MHD_NO;
		return reply(x, conn, MHD_HTTP_FORBIDDEN, TEXT, msg, strlen(msg), true, NULL);
	}
	if (x->wc && x->wc->nusers && !authorized(x, conn))
		return reply(x, conn, MHD_HTTP_UNAUTHORIZED, TEXT, STATIC("unauthorized\n"), NULL);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(x, conn, MHD_HTTP_METHOD_NOT_ALLOWED, TEXT,
			     STATIC("GET or HEAD only\n"), "GET, HEAD");
	if (!strcmp(url, "/"))
		return reply(x, conn, MHD_HTTP_OK, TEXT, STATIC("drmacct exporter: see /metrics\n"),
			     NULL);
	if (strcmp(url, "/metrics"))
		return reply(x, conn, MHD_HTTP_NOT_FOUND, TEXT, STATIC("not found\n"), NULL);
	ret = x->fn(x->arg, &body, &len);
	if (ret) {
		if (asprintf(&msg, "scrape failed: %s\n", strerror(-ret)) < 0)
			return MHD_NO;
		cli_error(x->cmd, "%.*s", (int)strlen(msg) - 1, msg);
		return reply(x, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, TEXT, msg, strlen(msg), true,
			     NULL);
	}
	return reply(x, conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len,
		     true, NULL);
}

int http_serve(const char *cmd, int lfd, const struct web_config *wc, http_metrics_fn fn,
	       void *arg)
{
	struct http_ctx x = { .cmd = cmd, .wc = wc, .fn = fn, .arg = arg };
	struct MHD_OptionItem o[16];
	unsigned int flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	struct MHD_Daemon *d;
	sigset_t set, old;
	size_t n = 0;
	int sig = 0;

#define OPT(opt, val, ptr) (o[n++] = (struct MHD_OptionItem){ (opt), (intptr_t)(val), (ptr) })
	/* the logger first, so that it gets every message */
	OPT(MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)(void (*)(void))logger, &x);
	OPT(MHD_OPTION_LISTEN_SOCKET, lfd, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, HTTP_TIMEOUT_S, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNS, NULL);
	OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, HTTP_MAX_PER_IP, NULL);
	if (wc && wc->cert_pem) {
		flags |= MHD_USE_TLS;
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, wc->cert_pem);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, wc->key_pem);
		if (wc->ca_pem)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, wc->ca_pem);
		if (wc->priorities)
			OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, wc->priorities);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT

	/* The server's thread inherits the mask: only this thread takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, &x, MHD_OPTION_ARRAY, o,
			     MHD_OPTION_END);
	if (!d) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		close(lfd);
		cli_error(cmd, "cannot start the web server%s",
			  wc && wc->cert_pem ? " (TLS)" : "");
		return CLI_EXIT_FAIL;
	}
	while (sigwait(&set, &sig))
		;
	MHD_stop_daemon(d);	/* closes @lfd and every connection */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return CLI_EXIT_OK;
}

#else /* DRMACCT_NO_HTTP */

int http_serve(const char *cmd, int lfd, const struct web_config *wc, http_metrics_fn fn,
	       void *arg)
{
	(void)wc, (void)fn, (void)arg;
	close(lfd);
	cli_error(cmd, "this drmacct was built without the web server (HTTP=0)");
	return CLI_EXIT_FAIL;
}

#endif
