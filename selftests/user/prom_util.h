/* SPDX-License-Identifier: MIT */
/*
 * prom_util.h - helpers for the exporter tests: run `drmacct export
 * --listen` as a child on a loopback port, talk HTTP to it, stop it.
 *
 * Children get PR_SET_PDEATHSIG(SIGKILL), so nothing outlives a test that
 * is killed by its timeout.
 */
#ifndef DRMACCT_PROM_UTIL_H
#define DRMACCT_PROM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct prom_child {
	pid_t pid;		/* 0: not running */
	int errfd;		/* read end of its stderr, -1: none */
	int port;		/* the port it listens on (exporter) */
};

/*
 * Start `drmacct export --listen 127.0.0.1:0 --proc-root ROOT`, wait up to
 * 10 s for its "listening on" line and fill @c. 0 or -errno.
 */
int prom_start_exporter(struct prom_child *c, const char *proc_root);

/*
 * Start `drmacct export ARGS...` (@args NULL-terminated; a --listen among
 * them), wait up to 10 s for its "listening on SCHEME://ADDR:PORT" line and
 * fill @c with that PORT. 0 or -errno (-EPIPE: it exited, its stderr is
 * left to read on c->errfd).
 */
int prom_start_exporter_argv(struct prom_child *c, char *const args[]);

/*
 * Start any program (argv[0] a path) with stdout and stderr to @log
 * (a file path, truncated). 0 or -errno.
 */
int prom_spawn(struct prom_child *c, char *const argv[], const char *log);

/* SIGTERM, wait up to 10 s, then SIGKILL. Returns the wait status, -1 if none. */
int prom_stop(struct prom_child *c);

/*
 * One HTTP/1.0 request to 127.0.0.1:@port. Fills *@status with the HTTP
 * status and *@body (malloc'd, NUL-terminated; may be NULL) with the body.
 * 0 or -errno (-ECONNREFUSED, -ETIMEDOUT after 10 s ...).
 */
int prom_http(int port, const char *method, const char *path, int *status, char **body);

/*
 * Connect to 127.0.0.1:@port and return the socket (-errno on failure),
 * with @secs receive and send timeouts.
 */
int prom_connect(int port, int secs);

/*
 * Send @len raw bytes to 127.0.0.1:@port, then read the answer until the
 * server closes (20 s timeout); *@status is its HTTP status (0 when none). 0 or -errno.
 */
int prom_raw(int port, const void *req, size_t len, int *status);

/*
 * Read from @fd until EOF (or its timeout) and return the HTTP status of
 * what came, 0 when none, -errno on a failed read.
 */
int prom_read_status(int fd);

/* A loopback TCP port that was free a moment ago. */
int prom_free_port(void);

#endif /* DRMACCT_PROM_UTIL_H */
