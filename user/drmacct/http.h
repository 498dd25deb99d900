/* SPDX-License-Identifier: MIT */
/*
 * http.h - the exporter's web server: libmicrohttpd, with TLS (GnuTLS) and
 * basic auth (bcrypt, libcrypt's crypt_rn) as a web configuration
 * (webconfig.h) asks. It answers GET and HEAD on /metrics (the body from
 * the callback) and / (a pointer to /metrics); other paths 404, other
 * methods 405. One thread serves every connection, so the callback is
 * never called twice at once.
 */
#ifndef DRMACCT_HTTP_H
#define DRMACCT_HTTP_H

#include <stddef.h>

#include "webconfig.h"

/*
 * The metrics: 0 with *@body (malloc'd, freed by the server) and *@len, or
 * -errno (answered 500 with the reason).
 */
typedef int (*http_metrics_fn)(void *arg, char **body, size_t *len);

/*
 * Serve on the listening socket @lfd until SIGINT or SIGTERM. @wc (NULL:
 * plain HTTP, no auth) gives TLS, client certificates, users and headers.
 * Returns the exit status: 0 after the signal, 1 when the server cannot
 * start (the reason printed as "drmacct CMD: ...").
 */
int http_serve(const char *cmd, int lfd, const struct web_config *wc, http_metrics_fn fn,
	       void *arg);

#endif /* DRMACCT_HTTP_H */
