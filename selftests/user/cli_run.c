// SPDX-License-Identifier: MIT
/*
 * cli_run.c - run the drmacct binary from host tests. See cli_run.h.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "json_dom.h"

#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *cli_bin(void)
{
	const char *b = getenv("DRMACCT_BIN");

	if (!b || !*b)
		b = "build/host/drmacct";
	if (access(b, X_OK))
		DT_FAIL("drmacct binary '%s' not found (build it first or set DRMACCT_BIN)", b);
	return b;
}

static void setenv_append(const char *name, const char *add)
{
	const char *old = getenv(name);
	char *v;

	if (old && *old) {
		if (asprintf(&v, "%s:%s", old, add) < 0)
			_exit(127);
	} else {
		v = strdup(add);
	}
	if (!v || setenv(name, v, 1))
		_exit(127);
	free(v);
}

void cli_child_env(void)
{
	setenv_append("ASAN_OPTIONS", "exitcode=86");
	setenv_append("UBSAN_OPTIONS", "exitcode=86:print_stacktrace=1");
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static void sbuf_add(struct sbuf *b, const char *d, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;

		while (nc < b->len + n + 1)
			nc *= 2;
		b->p = realloc(b->p, nc);
		DT_ASSERT_TRUE(b->p != NULL);
		b->cap = nc;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void cli_runv(struct cli_result *r, const char *const *args)
{
	cli_run_io(r, &(struct cli_io){ 0 }, args);
}

void cli_run_io(struct cli_result *r, const struct cli_io *io, const char *const *args)
{
	const char *bin = cli_bin();
	struct sbuf bo = { 0 }, be = { 0 };
	int po[2], pe[2], st, pty = -1;
	size_t n = 0, i;
	pid_t pid;

	while (args[n])
		n++;
	DT_ASSERT_EQ(pipe2(po, O_CLOEXEC), 0);
	DT_ASSERT_EQ(pipe2(pe, O_CLOEXEC), 0);
	if (io->out == CLI_OUT_PTY) {
		pty = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		DT_ASSERT_GE(pty, 0);
		DT_ASSERT_EQ(grantpt(pty), 0);
		DT_ASSERT_EQ(unlockpt(pty), 0);
	}
	if (io->out == CLI_OUT_CLOSED) {
		/* A pipe whose reader has gone: every write fails with EPIPE. */
		close(po[0]);
		po[0] = -1;
	}
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		char **argv = calloc(n + 2, sizeof(*argv));
		int in = open(io->in ? io->in : "/dev/null", O_RDONLY);
		int out = pty >= 0 ? open(ptsname(pty), O_RDWR | O_NOCTTY) : po[1];

		if (!argv || in < 0 || out < 0)
			_exit(127);
		argv[0] = (char *)"drmacct";
		for (i = 0; i < n; i++)
			argv[i + 1] = (char *)args[i];
		dup2(in, 0);
		dup2(out, 1);
		dup2(pe[1], 2);
		cli_child_env();
		execv(bin, argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pty >= 0) {
		close(po[0]);
		po[0] = -1;
	}
	sbuf_add(&bo, "", 0);
	sbuf_add(&be, "", 0);
	for (int open_fds = 2; open_fds;) {
		struct pollfd pf[2] = { { .fd = po[0], .events = POLLIN },
					{ .fd = pe[0], .events = POLLIN } };
		char buf[4096];

		DT_ASSERT_GE(poll(pf, 2, -1), 0);
		for (i = 0; i < 2; i++) {
			ssize_t k;

			if (!pf[i].revents)
				continue;
			k = read(pf[i].fd, buf, sizeof(buf));
			if (k > 0) {
				sbuf_add(i ? &be : &bo, buf, (size_t)k);
			} else {
				close(pf[i].fd);
				if (i)
					pe[0] = -1;
				else
					po[0] = -1;
				open_fds--;
			}
		}
		if (po[0] < 0 && pe[0] < 0)
			break;
	}
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (pty >= 0) {
		/* What went to the terminal (the slave is closed: no blocking). */
		char buf[4096];
		ssize_t k;

		fcntl(pty, F_SETFL, O_NONBLOCK);
		while ((k = read(pty, buf, sizeof(buf))) > 0)
			sbuf_add(&bo, buf, (size_t)k);
		close(pty);
	}
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = bo.p;
	r->err = be.p;
	if (r->status == CLI_SANITIZER_EXIT)
		dt_info("sanitizer report from drmacct:\n%s", r->err);
	DT_ASSERT_NE(r->status, CLI_SANITIZER_EXIT);
}

void cli_run(struct cli_result *r, const char *arg, ...)
{
	const char *args[64];
	size_t n = 0;
	va_list ap;

	va_start(ap, arg);
	for (const char *a = arg; a; a = va_arg(ap, const char *)) {
		DT_ASSERT_LT(n, sizeof(args) / sizeof(args[0]) - 1);
		args[n++] = a;
	}
	va_end(ap);
	args[n] = NULL;
	cli_runv(r, args);
}

void cli_result_free(struct cli_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* ---- JSON: the tests' one parser, json_dom ---- */

bool cli_json_valid(const char *s)
{
	struct jd *j = jd_parse(s);
	bool ok = j != NULL;

	jd_free(j);
	return ok;
}
