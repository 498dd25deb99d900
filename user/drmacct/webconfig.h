/* SPDX-License-Identifier: MIT */
/*
 * webconfig.h - the web configuration file of Prometheus exporters
 * (the exporter-toolkit's --web.config.file format, YAML), as `drmacct
 * export --web-config FILE` reads it:
 *
 *   tls_server_config:
 *     cert_file: server.crt      # PEM; relative paths: to the file's directory
 *     key_file: server.key       # PEM, unencrypted
 *     client_auth_type: RequireAndVerifyClientCert   # or NoClientCert (default),
 *     client_ca_file: ca.crt                         # VerifyClientCertIfGiven
 *     min_version: TLS12         # TLS10..TLS13
 *     max_version: TLS13
 *   http_server_config:
 *     http2: true                # accepted; drmacct serves HTTP/1.1
 *     headers:                   # added to every answer (these names only)
 *       Strict-Transport-Security: max-age=31536000
 *   basic_auth_users:
 *     prometheus: $2y$10$...     # bcrypt hashes ($2a$, $2b$, $2y$)
 *
 * Unknown keys are errors, as in the toolkit; cipher_suites,
 * curve_preferences and prefer_server_cipher_suites, which name Go's
 * cipher suites, are refused as not supported (GnuTLS picks).
 */
#ifndef DRMACCT_WEBCONFIG_H
#define DRMACCT_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum web_client_auth {
	WEB_CLIENT_NONE = 0,		/* NoClientCert */
	WEB_CLIENT_VERIFY_IF_GIVEN,	/* VerifyClientCertIfGiven */
	WEB_CLIENT_REQUIRE_VERIFY,	/* RequireAndVerifyClientCert */
};

/* A basic-auth user (value: the bcrypt hash) or a response header. */
struct web_pair {
	char *name, *value;
};

struct web_config {
	char *path;			/* the file it came from */
	char *cert_pem, *key_pem;	/* both NULL: no TLS */
	char *ca_pem;			/* client_ca_file, NULL: none */
	enum web_client_auth client_auth;
	char *priorities;		/* GnuTLS priorities (TLS versions); NULL: default */
	struct web_pair *users;		/* basic auth: none when nusers is 0 */
	size_t nusers;
	struct web_pair *headers;
	size_t nheaders;
};

/*
 * Read and check @path (the TLS files are read and the key pair tried).
 * 0, or -1 with a message in *@err (malloc'd) naming the file and what is
 * wrong with it.
 */
int web_config_load(const char *path, struct web_config *wc, char **err);
void web_config_free(struct web_config *wc);

#endif /* DRMACCT_WEBCONFIG_H */
