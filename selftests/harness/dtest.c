// SPDX-License-Identifier: GPL-2.0
/*
 * dtest - runner side of drmacct's test harness; see dtest.h.
 */
#define _GNU_SOURCE
#include "dtest.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { DT_RC_PASS = 0, DT_RC_FAIL = 1, DT_RC_SKIP = 4 };

static struct dt_case *dt_head, **dt_tail = &dt_head;

/* Child-side state of the test being run. */
static jmp_buf dt_jmp;
static bool dt_failed;
static bool dt_skipped;
static int dt_skip_fd = -1;
/*
 * The running test's TAP label (dt_label()): a shared page, so that the
 * runner reads what the test's process wrote however that process ended.
 */
static char *dt_label_buf;

void dt_register(struct dt_case *c)
{
	c->next = NULL;
	*dt_tail = c;
	dt_tail = &c->next;
}

const char *strerrorname_dt(int err)
{
	static char buf[32];
	const char *n = err ? strerrorname_np(err) : "0";

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static void dt_vline(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		printf("# %s(out of memory formatting message)\n", prefix);
		fflush(stdout);
		return;
	}
	/* Keep every line a TAP comment even when the message has newlines. */
	for (char *line = msg, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		printf("# %s%s\n", prefix, line);
		prefix = "  ";
	}
	free(msg);
	fflush(stdout);
}

void dt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dt_vline("", fmt, ap);
	va_end(ap);
}

void dt_label(const char *fmt, ...)
{
	char note[DT_LABEL_MAX + 1];
	size_t have, len;
	const char *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	/* Characters that would end the name in a TAP line, or the line. */
	for (char *c = note; *c; c++)
		if (*c == '#' || *c == '\n' || *c == '[' || *c == ']')
			*c = ' ';
	len = strlen(note);
	if (!dt_label_buf || !len)
		return;
	for (p = dt_label_buf; *p; p += strcspn(p, ","), p += *p ? 2 : 0)
		if (!strncmp(p, note, len) && (p[len] == ',' || !p[len]))
			return;		/* already there */
	have = strlen(dt_label_buf);
	if (have + (have ? 2 : 0) + len > DT_LABEL_MAX) {
		dt_info("dt_label: no room for '%s'", note);
		return;
	}
	if (have) {
		memcpy(dt_label_buf + have, ", ", 2);
		have += 2;
	}
	memcpy(dt_label_buf + have, note, len + 1);	/* fits: checked above */
}

void dt__end_now(void)
{
	longjmp(dt_jmp, 1);
}

void dt__fail_here(const char *file, int line, bool fatal, const char *fmt, ...)
{
	char prefix[256];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s:%d: %s: ", file, line,
		 fatal ? "ASSERT" : "EXPECT");
	va_start(ap, fmt);
	dt_vline(prefix, fmt, ap);
	va_end(ap);
	dt_failed = true;
	if (fatal)
		dt__end_now();
}

static long double dt_as_float(struct dt_val v)
{
	if (v.is_float)
		return v.f;
	return v.neg ? -(long double)v.mag : (long double)v.mag;
}

bool dt__holds(struct dt_val a, struct dt_val b, enum dt_op op)
{
	int c;

	if (a.is_float || b.is_float) {
		long double x = dt_as_float(a), y = dt_as_float(b);

		switch (op) {
		case DT_OP_EQ: return x == y;
		case DT_OP_NE: return !(x == y);
		case DT_OP_LT: return x < y;
		case DT_OP_LE: return x <= y;
		case DT_OP_GT: return x > y;
		case DT_OP_GE: return x >= y;
		}
		return false;
	}
	if (a.neg != b.neg)
		c = a.neg ? -1 : 1;
	else if (a.mag == b.mag)
		c = 0;
	else	/* among negatives the larger magnitude is the smaller value */
		c = (a.mag < b.mag) != a.neg ? -1 : 1;
	switch (op) {
	case DT_OP_EQ: return c == 0;
	case DT_OP_NE: return c != 0;
	case DT_OP_LT: return c < 0;
	case DT_OP_LE: return c <= 0;
	case DT_OP_GT: return c > 0;
	case DT_OP_GE: return c >= 0;
	}
	return false;
}

static void dt_val_str(struct dt_val v, char *buf, size_t len)
{
	if (v.is_float)
		snprintf(buf, len, "%.17Lg", v.f);
	else
		snprintf(buf, len, "%s%llu", v.neg ? "-" : "", v.mag);
}

void dt__cmp_fail(const char *file, int line, bool fatal, const char *expr,
		  struct dt_val a, struct dt_val b)
{
	char x[64], y[64];

	dt_val_str(a, x, sizeof(x));
	dt_val_str(b, y, sizeof(y));
	dt__fail_here(file, line, fatal, "%s: %s vs %s", expr, x, y);
}

void dt__skip(const char *file, int line, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	printf("# %s:%d: SKIP: %s\n", file, line, msg ? msg : "?");
	fflush(stdout);
	if (dt_skip_fd >= 0 && msg) {
		/* Reason for the TAP directive; newlines would break the line. */
		for (char *p = msg; *p; p++)
			if (*p == '\n' || *p == '#')
				*p = ' ';
		if (write(dt_skip_fd, msg, strlen(msg)) < 0)
			dt_info("could not pass the skip reason on");
	}
	free(msg);
	dt_skipped = true;
	dt__end_now();
}

static void dt_child(struct dt_case *c, int skip_fd)
{
	void *volatile self = NULL;
	volatile int phase = 0;	/* 0 setup, 1 body, 2 teardown, 3 done */

	setpgid(0, 0);
	dt_skip_fd = skip_fd;
	if (c->self_size) {
		self = calloc(1, c->self_size);
		if (!self) {
			printf("# out of memory for the fixture\n");
			_exit(DT_RC_FAIL);
		}
	}
	if (setjmp(dt_jmp)) {
		/* A fatal check or a skip ended the current phase. */
		if (phase == 0)
			phase = 3;	/* setup did not finish: no teardown */
		else if (phase == 1)
			phase = 2;
		else
			phase = 3;
	}
	if (phase == 0) {
		if (c->setup)
			c->setup(self);
		phase = 1;
	}
	if (phase == 1) {
		c->run(self);
		phase = 2;
	}
	if (phase == 2) {
		phase = 3;	/* a failure inside teardown ends it */
		if (c->teardown)
			c->teardown(self);
	}
	free(self);
	fflush(stdout);
	fflush(stderr);
	if (dt_failed)
		_exit(DT_RC_FAIL);
	_exit(dt_skipped ? DT_RC_SKIP : DT_RC_PASS);
}

static double dt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double dt_timeout_scale(void)
{
	const char *s = getenv("DT_TIMEOUT_SCALE");
	char *end;
	double v;

	if (!s || !*s)
		return 1.0;
	v = strtod(s, &end);
	if (*end || !(v > 0)) {
		printf("# ignoring bad DT_TIMEOUT_SCALE=%s\n", s);
		return 1.0;
	}
	return v;
}

/* Runs one test; returns a DT_RC_* and fills @why for skips and failures. */
static int dt_run_one(struct dt_case *c, double scale, char *why, size_t whylen)
{
	double limit = c->timeout_s * scale, start, delay = 0.0005;
	int pfd[2], status = 0;
	ssize_t n;
	pid_t pid, r;

	why[0] = '\0';
	if (dt_label_buf)
		dt_label_buf[0] = '\0';
	if (pipe(pfd)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return DT_RC_FAIL;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return DT_RC_FAIL;
	}
	if (pid == 0) {
		close(pfd[0]);
		dt_child(c, pfd[1]);
	}
	close(pfd[1]);
	start = dt_now();
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			snprintf(why, whylen, "waitpid: %s", strerror(errno));
			close(pfd[0]);
			return DT_RC_FAIL;
		}
		if (dt_now() - start > limit) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(pfd[0]);
			snprintf(why, whylen, "TIMEOUT: killed after %.0f s", limit);
			return DT_RC_FAIL;
		}
		struct timespec ts = { 0, (long)(delay * 1e9) };

		nanosleep(&ts, NULL);
		if (delay < 0.02)
			delay *= 2;
	}
	/* Reap anything the test left in its process group. */
	kill(-pid, SIGKILL);
	n = read(pfd[0], why, whylen - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "killed by signal %d (%s)", WTERMSIG(status),
			 sigabbrev_np(WTERMSIG(status)) ?: "?");
		return DT_RC_FAIL;
	}
	switch (WEXITSTATUS(status)) {
	case DT_RC_PASS:
		return DT_RC_PASS;
	case DT_RC_SKIP:
		return DT_RC_SKIP;
	case DT_RC_FAIL:
		why[0] = '\0';
		return DT_RC_FAIL;
	default:
		snprintf(why, whylen, "exited with status %d", WEXITSTATUS(status));
		return DT_RC_FAIL;
	}
}

static void dt_full_name(const struct dt_case *c, char *buf, size_t len)
{
	if (c->fixture)
		snprintf(buf, len, "%s.%s", c->fixture, c->name);
	else
		snprintf(buf, len, "%s", c->name);
}

static bool dt_selected(const struct dt_case *c, char **only, int nonly)
{
	char full[512];

	if (!nonly)
		return true;
	dt_full_name(c, full, sizeof(full));
	for (int i = 0; i < nonly; i++)
		if (!strcmp(only[i], full) || !strcmp(only[i], c->name))
			return true;
	return false;
}

static void dt_usage(const char *prog, FILE *f)
{
	fprintf(f, "usage: %s [-l] [-t NAME]...\n"
		"  -l        list the tests and exit\n"
		"  -t NAME   run only NAME (test or fixture.test); repeatable\n"
		"env DT_TIMEOUT_SCALE=F multiplies every test's timeout\n", prog);
}

int dt_main(int argc, char **argv)
{
	int pass = 0, fail = 0, skip = 0, planned = 0, n = 0, nonly = 0, opt;
	char **only = calloc((size_t)argc + 1, sizeof(*only));
	bool list = false;
	double scale;
	char full[512], name[512 + DT_LABEL_MAX + 4], why[1024];

	if (!only) {
		fprintf(stderr, "out of memory\n");
		return DT_RC_FAIL;
	}
	while ((opt = getopt(argc, argv, "lt:h")) != -1) {
		switch (opt) {
		case 'l':
			list = true;
			break;
		case 't':
			only[nonly++] = optarg;
			break;
		case 'h':
			dt_usage(argv[0], stdout);
			free(only);
			return 0;
		default:
			dt_usage(argv[0], stderr);
			free(only);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		dt_usage(argv[0], stderr);
		free(only);
		return 2;
	}
	for (struct dt_case *c = dt_head; c; c = c->next) {
		if (!dt_selected(c, only, nonly))
			continue;
		planned++;
		if (list) {
			dt_full_name(c, full, sizeof(full));
			printf("%s\n", full);
		}
	}
	if (list) {
		free(only);
		return 0;
	}
	if (nonly && !planned) {
		fprintf(stderr, "%s: no test matches the -t names\n", argv[0]);
		free(only);
		return 2;
	}
	/* Children must not inherit buffered output. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	dt_label_buf = mmap(NULL, DT_LABEL_MAX + 1, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (dt_label_buf == MAP_FAILED) {
		printf("# no shared page for labels: %s\n", strerror(errno));
		dt_label_buf = NULL;
	}
	scale = dt_timeout_scale();
	printf("TAP version 13\n1..%d\n", planned);
	for (struct dt_case *c = dt_head; c; c = c->next) {
		int rc;

		if (!dt_selected(c, only, nonly))
			continue;
		n++;
		dt_full_name(c, full, sizeof(full));
		printf("# RUN %s\n", full);
		rc = dt_run_one(c, scale, why, sizeof(why));
		if (dt_label_buf && dt_label_buf[0]) {
			dt_label_buf[DT_LABEL_MAX] = '\0';
			snprintf(name, sizeof(name), "%s [%s]", full, dt_label_buf);
		} else {
			snprintf(name, sizeof(name), "%s", full);
		}
		if (rc == DT_RC_PASS) {
			pass++;
			printf("ok %d %s\n", n, name);
		} else if (rc == DT_RC_SKIP) {
			skip++;
			printf("ok %d %s # SKIP %s\n", n, name, why);
		} else {
			fail++;
			if (why[0])
				printf("# %s: %s\n", full, why);
			printf("not ok %d %s\n", n, name);
		}
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	free(only);
	if (fail)
		return DT_RC_FAIL;
	return (!pass && skip) ? DT_RC_SKIP : DT_RC_PASS;
}
