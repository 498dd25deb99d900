// SPDX-License-Identifier: MIT
/*
 * webconfig.c - read the exporter-toolkit web configuration (webconfig.h)
 * with libyaml; check the TLS files with GnuTLS as the server will use them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webconfig.h"

#ifndef DRMACCT_NO_HTTP
#include <gnutls/gnutls.h>
#include <yaml.h>

struct wc_ctx {
	yaml_document_t *doc;
	const char *path;
	char *dir;			/* of @path, for relative file names */
	char **err;
};

static int fail(struct wc_ctx *x, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct wc_ctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (n) {
		if (asprintf(x->err, "%s:%zu: %s", x->path, n->start_mark.line + 1,
			     msg ? msg : "out of memory") < 0)
			*x->err = NULL;
	} else if (asprintf(x->err, "%s: %s", x->path, msg ? msg : "out of memory") < 0) {
		*x->err = NULL;
	}
	free(msg);
	return -1;
}

/* Append a copy of @name and @value to *@arr; -1 when out of memory (the
 * array stays valid and owns whatever was appended). */
static int add_pair(struct web_pair **arr, size_t *n, const char *name, const char *value)
{
	struct web_pair *na = realloc(*arr, (*n + 1) * sizeof(*na));

	if (!na)
		return -1;
	*arr = na;
	na[*n].name = strdup(name);
	na[*n].value = strdup(value);
	(*n)++;
	return na[*n - 1].name && na[*n - 1].value ? 0 : -1;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar, or the error naming @key. */
static int want_scalar(struct wc_ctx *x, const yaml_node_t *v, const char *key, const char **out)
{
	*out = scalar(v);
	if (!*out)
		return fail(x, v, "%s: a string is expected", key);
	return 0;
}

/* The whole content of @name (relative to the configuration's directory). */
static int read_file(struct wc_ctx *x, const yaml_node_t *at, const char *key, const char *name,
		     char **out)
{
	char *path = NULL, *buf = NULL;
	size_t len = 0;
	FILE *f, *m;
	char tmp[4096];
	size_t n;

	if (!*name)
		return fail(x, at, "%s is empty", key);
	if (asprintf(&path, "%s%s", name[0] == '/' ? "" : x->dir, name) < 0)
		return fail(x, at, "out of memory");
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		fail(x, at, "%s: cannot read %s: %s", key, path, strerror(e));
		free(path);
		return -1;
	}
	m = open_memstream(&buf, &len);
	while (m && (n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		fwrite(tmp, 1, n, m);
	if (!m || ferror(f) || fclose(m)) {
		fail(x, at, "%s: cannot read %s", key, path);
		fclose(f);
		free(path);
		free(buf);
		return -1;
	}
	fclose(f);
	free(path);
	*out = buf;
	return 0;
}

static int tls_version(struct wc_ctx *x, const yaml_node_t *v, const char *key, int *out)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	const char *s;

	if (want_scalar(x, v, key, &s))
		return -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	return fail(x, v, "%s: '%s' is not TLS10, TLS11, TLS12 or TLS13", key, s);
}

static int parse_tls(struct wc_ctx *x, const yaml_node_t *map, struct web_config *wc)
{
	static const char *const vers[] = { "+VERS-TLS1.0", "+VERS-TLS1.1", "+VERS-TLS1.2",
					    "+VERS-TLS1.3" };
	const char *cert = NULL, *key = NULL, *ca = NULL;
	const yaml_node_t *cert_at = map, *key_at = map, *ca_at = map;
	int minv = 2, maxv = 3;
	bool versions = false;

	if (map->type != YAML_MAPPING_NODE)
		return fail(x, map, "tls_server_config: a mapping is expected");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		const char *name = scalar(k), *s;

		if (!name)
			return fail(x, k, "tls_server_config: keys are strings");
		if (!strcmp(name, "cert_file")) {
			if (want_scalar(x, v, name, &cert))
				return -1;
			cert_at = v;
		} else if (!strcmp(name, "key_file")) {
			if (want_scalar(x, v, name, &key))
				return -1;
			key_at = v;
		} else if (!strcmp(name, "client_ca_file")) {
			if (want_scalar(x, v, name, &ca))
				return -1;
			ca_at = v;
		} else if (!strcmp(name, "client_auth_type")) {
			if (want_scalar(x, v, name, &s))
				return -1;
			if (!strcmp(s, "NoClientCert"))
				wc->client_auth = WEB_CLIENT_NONE;
			else if (!strcmp(s, "VerifyClientCertIfGiven"))
				wc->client_auth = WEB_CLIENT_VERIFY_IF_GIVEN;
			else if (!strcmp(s, "RequireAndVerifyClientCert"))
				wc->client_auth = WEB_CLIENT_REQUIRE_VERIFY;
			else
				return fail(x, v, "client_auth_type: '%s' is not supported "
					    "(NoClientCert, VerifyClientCertIfGiven, "
					    "RequireAndVerifyClientCert)", s);
		} else if (!strcmp(name, "min_version")) {
			if (tls_version(x, v, name, &minv))
				return -1;
			versions = true;
		} else if (!strcmp(name, "max_version")) {
			if (tls_version(x, v, name, &maxv))
				return -1;
			versions = true;
		} else if (!strcmp(name, "cipher_suites") || !strcmp(name, "curve_preferences") ||
			   !strcmp(name, "prefer_server_cipher_suites")) {
			return fail(x, k, "tls_server_config: %s is not supported by drmacct "
				    "(GnuTLS chooses them)", name);
		} else {
			return fail(x, k, "tls_server_config: unknown key '%s'", name);
		}
	}
	if (!cert)
		return fail(x, map, "tls_server_config: cert_file is missing");
	if (!key)
		return fail(x, map, "tls_server_config: key_file is missing");
	if (minv > maxv)
		return fail(x, map, "tls_server_config: min_version is above max_version");
	if (wc->client_auth != WEB_CLIENT_NONE && !ca)
		return fail(x, map, "tls_server_config: client_auth_type needs client_ca_file");
	if (ca && wc->client_auth == WEB_CLIENT_NONE)
		return fail(x, ca_at, "client_ca_file without a client_auth_type that uses it");
	if (read_file(x, cert_at, "cert_file", cert, &wc->cert_pem) ||
	    read_file(x, key_at, "key_file", key, &wc->key_pem) ||
	    (ca && read_file(x, ca_at, "client_ca_file", ca, &wc->ca_pem)))
		return -1;
	if (versions) {
		char buf[128] = "NORMAL:-VERS-ALL";

		for (int i = minv; i <= maxv; i++) {
			strcat(buf, ":");
			strcat(buf, vers[i]);
		}
		wc->priorities = strdup(buf);
		if (!wc->priorities)
			return fail(x, map, "out of memory");
	}
	return 0;
}

static const char *const allowed_headers[] = {
	"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
	"X-XSS-Protection", "Strict-Transport-Security",
};

static int parse_http(struct wc_ctx *x, const yaml_node_t *map, struct web_config *wc)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(x, map, "http_server_config: a mapping is expected");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		const char *name = scalar(k), *s;

		if (!name)
			return fail(x, k, "http_server_config: keys are strings");
		if (!strcmp(name, "http2")) {
			if (want_scalar(x, v, name, &s))
				return -1;
			if (strcmp(s, "true") && strcmp(s, "false"))
				return fail(x, v, "http2: true or false");
			continue;	/* HTTP/1.1 either way */
		}
		if (strcmp(name, "headers"))
			return fail(x, k, "http_server_config: unknown key '%s'", name);
		if (v->type != YAML_MAPPING_NODE)
			return fail(x, v, "headers: a mapping is expected");
		for (yaml_node_pair_t *h = v->data.mapping.pairs.start;
		     h < v->data.mapping.pairs.top; h++) {
			const yaml_node_t *hk = yaml_document_get_node(x->doc, h->key);
			const yaml_node_t *hv = yaml_document_get_node(x->doc, h->value);
			const char *hn = scalar(hk), *val;
			size_t a;

			for (a = 0; hn && a < sizeof(allowed_headers) / sizeof(*allowed_headers); a++)
				if (!strcmp(hn, allowed_headers[a]))
					break;
			if (!hn || a == sizeof(allowed_headers) / sizeof(*allowed_headers))
				return fail(x, hk, "headers: '%s' cannot be set (Content-Security-Policy, "
					    "X-Frame-Options, X-Content-Type-Options, "
					    "X-XSS-Protection, Strict-Transport-Security)",
					    hn ? hn : "?");
			if (want_scalar(x, hv, hn, &val))
				return -1;
			if (strpbrk(val, "\r\n"))
				return fail(x, hv, "%s: a header value is one line", hn);
			if (add_pair(&wc->headers, &wc->nheaders, hn, val))
				return fail(x, hv, "out of memory");
		}
	}
	return 0;
}

static int parse_users(struct wc_ctx *x, const yaml_node_t *map, struct web_config *wc)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(x, map, "basic_auth_users: a mapping of user: bcrypt hash is expected");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		const char *name = scalar(k), *hash;

		if (!name || !*name || strchr(name, ':'))
			return fail(x, k, "basic_auth_users: a user name is a non-empty string "
				    "without ':'");
		if (want_scalar(x, v, name, &hash))
			return -1;
		if (strncmp(hash, "$2a$", 4) && strncmp(hash, "$2b$", 4) && strncmp(hash, "$2y$", 4))
			return fail(x, v, "basic_auth_users: %s: not a bcrypt hash ($2a$, $2b$ or "
				    "$2y$)", name);
		for (size_t i = 0; i < wc->nusers; i++)
			if (!strcmp(wc->users[i].name, name))
				return fail(x, k, "basic_auth_users: %s twice", name);
		if (add_pair(&wc->users, &wc->nusers, name, hash))
			return fail(x, k, "out of memory");
	}
	return 0;
}

/* The key pair as the server will load it: a clear message now, not at start. */
static int check_tls(struct wc_ctx *x, struct web_config *wc)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t c = { (unsigned char *)wc->cert_pem, (unsigned int)strlen(wc->cert_pem) };
	gnutls_datum_t k = { (unsigned char *)wc->key_pem, (unsigned int)strlen(wc->key_pem) };
	int r;

	if (gnutls_certificate_allocate_credentials(&cred))
		return fail(x, NULL, "out of memory");
	r = gnutls_certificate_set_x509_key_mem2(cred, &c, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (r >= 0 && wc->ca_pem) {
		gnutls_datum_t ca = { (unsigned char *)wc->ca_pem, (unsigned int)strlen(wc->ca_pem) };

		r = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (r == 0)
			r = GNUTLS_E_NO_CERTIFICATE_FOUND;
		if (r < 0) {
			gnutls_certificate_free_credentials(cred);
			return fail(x, NULL, "client_ca_file: %s", gnutls_strerror(r));
		}
	}
	gnutls_certificate_free_credentials(cred);
	if (r < 0)
		return fail(x, NULL, "cert_file and key_file: %s", gnutls_strerror(r));
	if (wc->priorities) {
		gnutls_priority_t prio;

		if (gnutls_priority_init(&prio, wc->priorities, NULL) < 0)
			return fail(x, NULL, "GnuTLS does not offer these TLS versions");
		gnutls_priority_deinit(prio);
	}
	return 0;
}

int web_config_load(const char *path, struct web_config *wc, char **err)
{
	struct wc_ctx x = { .path = path, .err = err };
	yaml_parser_t parser;
	yaml_document_t doc;
	const yaml_node_t *root;
	const char *slash = strrchr(path, '/');
	FILE *f;
	int ret = -1;

	memset(wc, 0, sizeof(*wc));
	*err = NULL;
	wc->path = strdup(path);
	x.dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup("");
	if (!wc->path || !x.dir) {
		free(x.dir);
		return fail(&x, NULL, "out of memory");
	}
	f = fopen(path, "re");
	if (!f) {
		fail(&x, NULL, "%s", strerror(errno));
		free(x.dir);
		web_config_free(wc);
		return -1;
	}
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		free(x.dir);
		web_config_free(wc);
		return fail(&x, NULL, "out of memory");
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		if (asprintf(err, "%s:%zu: %s", path, parser.problem_mark.line + 1,
			     parser.problem ? parser.problem : "not YAML") < 0)
			*err = NULL;
		yaml_parser_delete(&parser);
		fclose(f);
		free(x.dir);
		web_config_free(wc);
		return -1;
	}
	x.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root || (root->type == YAML_SCALAR_NODE && !*scalar(root))) {
		ret = 0;	/* an empty file: no TLS, no users */
	} else if (root->type != YAML_MAPPING_NODE) {
		fail(&x, root, "a mapping is expected at the top");
	} else {
		ret = 0;
		for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
		     !ret && p < root->data.mapping.pairs.top; p++) {
			const yaml_node_t *k = yaml_document_get_node(&doc, p->key);
			const yaml_node_t *v = yaml_document_get_node(&doc, p->value);
			const char *name = scalar(k);

			if (name && !strcmp(name, "tls_server_config"))
				ret = parse_tls(&x, v, wc);
			else if (name && !strcmp(name, "http_server_config"))
				ret = parse_http(&x, v, wc);
			else if (name && !strcmp(name, "basic_auth_users"))
				ret = parse_users(&x, v, wc);
			else
				ret = fail(&x, k, "unknown key '%s' (tls_server_config, "
					   "http_server_config, basic_auth_users)", name ? name : "?");
		}
		if (!ret && wc->cert_pem)
			ret = check_tls(&x, wc);
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	free(x.dir);
	if (ret)
		web_config_free(wc);
	return ret;
}

#else /* DRMACCT_NO_HTTP */

int web_config_load(const char *path, struct web_config *wc, char **err)
{
	memset(wc, 0, sizeof(*wc));
	if (asprintf(err, "%s: this drmacct was built without the web server (HTTP=0)", path) < 0)
		*err = NULL;
	return -1;
}

#endif

static void free_pairs(struct web_pair *arr, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(arr[i].name);
		free(arr[i].value);
	}
	free(arr);
}

void web_config_free(struct web_config *wc)
{
	free(wc->path);
	free(wc->cert_pem);
	if (wc->key_pem) {
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
		free(wc->key_pem);
	}
	free(wc->ca_pem);
	free(wc->priorities);
	free_pairs(wc->users, wc->nusers);
	free_pairs(wc->headers, wc->nheaders);
	memset(wc, 0, sizeof(*wc));
}
