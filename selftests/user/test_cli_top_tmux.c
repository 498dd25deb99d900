// SPDX-License-Identifier: MIT
/*
 * test_cli_top_tmux.c - `drmacct top` on a real terminal (tmux) at 80x24,
 * 60x20 and 200x60, with more clients than rows: the title stays on the
 * first row and nothing is written past the last one, arrows/PgDn/End
 * scroll and say how many more, engines that exist get a column, a client
 * busier than its engine's capacity shows 100 %, 'i' hides idle clients, '/'
 * filters (by the command line too while 'c' shows it), 'c' shows the
 * command line instead of comm and 'C' a cgroup column, and a resize
 * redraws at the new size; the engine columns are in the drivers' order
 * whichever client top saw first. The clients come from a
 * synthetic /proc tree whose counters the test advances while top runs.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "proc_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NIDLE	90
#define NBUSY	10
#define HOT_PID	5000
/* the hot client's command line as /proc has it, and as top shows it */
#define HOT_CMDLINE	"/opt/hotgame\0-l\0three\0"
#define HOT_SHOWN	"/opt/hotgame -l three"
/* a v1 line top must not take, then the v2 one whose end it shows */
#define HOT_CGROUP	"3:cpu:/v1-wrong\n0::/machine.slice/container-hot.scope\n"

struct tm_run {
	struct proc_tree pt;
	char sock[64];		/* tmux -L: a server of our own */
	unsigned long long busy_ns, hot_ns;
	int w, h;
	bool fed;		/* the counters come from feeders: nothing to advance */
};

static void fdinfo(char *buf, size_t len, unsigned int id, unsigned long long busy)
{
	snprintf(buf, len, "drm-driver:\tsimgpu\ndrm-client-id:\t%u\n"
		 "drm-engine-render:\t%llu ns\ndrm-engine-copy:\t0 ns\n"
		 "drm-total-system:\t%u\n", id, busy, 4096 * id);
}

static void build(struct tm_run *t)
{
	char text[512], comm[32];

	DT_ASSERT_EQ(proc_tree_init(&t->pt, PROC_TREE_DEVCHAR), 0);
	for (int i = 0; i < NIDLE + NBUSY; i++) {
		pid_t pid = 1000 + i;

		snprintf(comm, sizeof(comm), "%s%d", i < NIDLE ? "idle" : "busy", i);
		DT_ASSERT_EQ(proc_tree_add_proc(&t->pt, pid, comm), 0);
		fdinfo(text, sizeof(text), (unsigned int)(100 + i), 1000);
		DT_ASSERT_EQ(proc_tree_add_drm_fd(&t->pt, pid, 3, 226, 128, text), 0);
	}
	DT_ASSERT_EQ(proc_tree_add_proc(&t->pt, HOT_PID, "hot"), 0);
	fdinfo(text, sizeof(text), 99, 1000);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&t->pt, HOT_PID, 3, 226, 128, text), 0);
	DT_ASSERT_EQ(proc_tree_write(&t->pt, HOT_PID, "cmdline", HOT_CMDLINE,
				     sizeof(HOT_CMDLINE) - 1), 0);
	DT_ASSERT_EQ(proc_tree_write(&t->pt, HOT_PID, "cgroup", HOT_CGROUP,
				     sizeof(HOT_CGROUP) - 1), 0);
}

/* Called every ~50 ms: busy clients +25 ms (50 %), the hot one +150 ms (300 %). */
static void advance(struct tm_run *t)
{
	char text[512];

	if (t->fed)
		return;
	t->busy_ns += 25000000ull;
	t->hot_ns += 150000000ull;
	for (int i = NIDLE; i < NIDLE + NBUSY; i++) {
		fdinfo(text, sizeof(text), (unsigned int)(100 + i), 1000 + t->busy_ns);
		DT_ASSERT_EQ(proc_tree_set_fdinfo(&t->pt, 1000 + i, 3, text), 0);
	}
	fdinfo(text, sizeof(text), 99, 1000 + t->hot_ns);
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&t->pt, HOT_PID, 3, text), 0);
}

static int tmux(struct tm_run *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int tmux(struct tm_run *t, const char *fmt, ...)
{
	char args[2048], cmd[2400];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	/* no fd of ours may stay open in the tmux server */
	snprintf(cmd, sizeof(cmd), "tmux -L %s %s </dev/null >/dev/null 2>&1", t->sock, args);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The screen as text, one line per row (trailing blanks trimmed by tmux). */
static char *capture(struct tm_run *t)
{
	char cmd[256], *buf = NULL;
	size_t len = 0;
	FILE *p, *m;
	int c;

	snprintf(cmd, sizeof(cmd), "tmux -L %s capture-pane -p -t top 2>/dev/null", t->sock);
	p = popen(cmd, "r");
	DT_ASSERT_TRUE(p != NULL);
	m = open_memstream(&buf, &len);
	DT_ASSERT_TRUE(m != NULL);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	pclose(p);
	fclose(m);
	return buf;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static const char *last_line(const char *s)
{
	const char *e = s + strlen(s), *b;

	while (e > s && e[-1] == '\n')
		e--;
	for (b = e; b > s && b[-1] != '\n'; b--)
		;
	return b;
}

/* Every invariant of a screen: rows, width, title on top, no % above 100. */
static void check_screen(struct tm_run *t, const char *scr)
{
	size_t row = 0;

	if (strncmp(scr, "drmacct top  ", 13))
		DT_FAIL("%dx%d: the title is not on the first row:\n%s", t->w, t->h, scr);
	DT_EXPECT_EQ(count_lines(scr), (size_t)t->h);
	for (const char *l = scr; *l; row++) {
		const char *e = strchr(l, '\n');
		size_t w = 0;

		if (!e)
			e = l + strlen(l);
		for (const char *c = l; c < e; c++)
			w += ((unsigned char)*c & 0xc0) != 0x80;
		if (w > (size_t)t->w)
			DT_FAIL("%dx%d: row %zu is %zu wide", t->w, t->h, row, w);
		for (const char *c = l; c < e; c++) {
			if (*c == '%' && c > l) {
				const char *d = c;

				while (d > l && d[-1] >= '0' && d[-1] <= '9')
					d--;
				if (d < c && atoi(d) > 100)
					DT_FAIL("%dx%d: %.*s above 100 %% in row %zu", t->w, t->h,
						(int)(c - d), d, row);
			}
		}
		l = *e ? e + 1 : e;
	}
}

/*
 * Advance the counters and look at the screen until @pred holds (10 s at
 * most, no timing assumption beyond that). Returns the last screen.
 */
static char *wait_screen(struct tm_run *t, bool (*pred)(const char *), const char *what)
{
	char *scr = NULL;

	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 50000000 };

		advance(t);
		nanosleep(&ts, NULL);
		free(scr);
		scr = capture(t);
		if (pred(scr)) {
			check_screen(t, scr);
			return scr;
		}
	}
	DT_FAIL("%dx%d: never saw %s; the screen:\n%s", t->w, t->h, what, scr);
	return scr;
}

static bool has_more_below(const char *s)
{
	return strstr(last_line(s), "more below") && strstr(s, "%");
}

static bool hot_full(const char *s)
{
	const char *h = strstr(s, " hot ");
	const char *e = h ? strchr(h, '\n') : NULL;
	const char *p = h ? strstr(h, "100%") : NULL;

	return p && e && p < e;
}

static bool scrolled(const char *s)
{
	return strstr(last_line(s), "more above") != NULL;
}

static bool at_end(const char *s)
{
	return strstr(last_line(s), "more above") && !strstr(last_line(s), "more below");
}

/* A client row of comm @name followed by its number ("idle7"). */
static bool has_comm(const char *s, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(s, name); p; p = strstr(p + 1, name))
		if (p[n] >= '0' && p[n] <= '9' && p > s && p[-1] == ' ')
			return true;
	return false;
}

static bool idle_hidden(const char *s)
{
	return strstr(last_line(s), "idle hidden") && !has_comm(s, "idle") &&
	       has_comm(s, "busy");
}

static bool filtered_hot(const char *s)
{
	return strstr(last_line(s), "filter 'hot'") && strstr(s, " hot ") && !has_comm(s, "busy") &&
	       !has_comm(s, "idle");
}

/* The row of the hot client: the one with its pid at the start. */
static const char *hot_row(const char *s, size_t *len)
{
	char pfx[16];
	const char *p;

	snprintf(pfx, sizeof(pfx), "\n%d ", HOT_PID);
	p = strstr(s, pfx);
	if (!p)
		return NULL;
	p++;
	*len = strcspn(p, "\n");
	return p;
}

static bool row_has(const char *s, const char *needle)
{
	size_t len, n = strlen(needle);
	const char *r = hot_row(s, &len);

	for (const char *p = r; p && p + n <= r + len; p++)
		if (!memcmp(p, needle, n))
			return true;
	return false;
}

/* 'c': the command line (NULs shown as spaces) in the COMMAND column, no comm */
static bool shows_cmdline(const char *s)
{
	const char *hdr = strstr(s, "\nPID ");

	return hdr && strstr(hdr, "COMMAND") && !strstr(hdr, "COMM ") && row_has(s, HOT_SHOWN) &&
	       !row_has(s, " hot ");
}

/* '/three' with 'c' on: the hot client alone, found by its command line */
static bool filtered_by_cmdline(const char *s)
{
	return strstr(last_line(s), "filter 'three'") && row_has(s, HOT_SHOWN) &&
	       !has_comm(s, "busy") && !has_comm(s, "idle");
}

/* '/three' with 'c' off: no client row at all */
static bool filtered_none(const char *s)
{
	size_t len;
	const char *hdr = strstr(s, "\nPID ");

	return strstr(last_line(s), "filter 'three'") && hdr && strstr(hdr, "COMM ") &&
	       !hot_row(s, &len) && !has_comm(s, "busy") && !has_comm(s, "idle");
}

/* 'C': the end of the v2 path in a CGROUP column, not the v1 line */
static bool shows_cgroup(const char *s)
{
	const char *hdr = strstr(s, "\nPID ");

	return hdr && strstr(hdr, "CGROUP") && row_has(s, "-hot.scope") &&
	       !strstr(s, "v1-wrong");
}

/* 'c' and 'C' again: comm back, no cgroup column */
static bool shows_comm(const char *s)
{
	const char *hdr = strstr(s, "\nPID ");

	return hdr && !strstr(hdr, "CGROUP") && !strstr(hdr, "COMMAND") && row_has(s, " hot ") &&
	       !row_has(s, "hotgame");
}

static int resized_w, resized_h;

static bool resized(const char *s)
{
	return count_lines(s) == (size_t)resized_h && !strncmp(s, "drmacct top", 11);
}

/*
 * The tmux server (private socket, -L) must not outlive the test however
 * the test ends: the teardown after a failure, a handler for the signals
 * that end a test run (SIGTERM, SIGALRM, SIGINT, SIGHUP), and for SIGKILL
 * (the harness's timeout), a watchdog inside the server that kills it once
 * the test process is gone.
 */
static char live_sock[64];

/* Async-signal-safe: fork, exec and wait only. */
static void kill_server(void)
{
	pid_t p;

	if (!live_sock[0])
		return;
	p = fork();
	if (p == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("tmux", "tmux", "-L", live_sock, "kill-server", (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
	live_sock[0] = '\0';
}

static void on_end_signal(int sig)
{
	kill_server();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_end_signals(void)
{
	static const int sigs[] = { SIGTERM, SIGALRM, SIGINT, SIGHUP };
	struct sigaction sa = { .sa_handler = on_end_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * A server of our own on socket @t->sock with session "top" of @w x @h
 * running @cmd, and its watchdog: a background job of the server that
 * kills it when this process no longer exists.
 */
static void start_server(struct tm_run *t, int w, int h, const char *cmd)
{
	snprintf(t->sock, sizeof(t->sock), "drmacct-test-%d", (int)getpid());
	snprintf(live_sock, sizeof(live_sock), "%s", t->sock);
	catch_end_signals();
	if (tmux(t, "new-session -d -s top -x %d -y %d '%s'", w, h, cmd))
		DT_FAIL("tmux new-session failed (is tmux installed? make deps)");
	if (tmux(t, "run-shell -b \"while kill -0 %d 2>/dev/null; do sleep 0.2; done; "
		 "tmux -L %s kill-server\"", (int)getpid(), t->sock))
		DT_FAIL("tmux run-shell failed");
}

static void run_at(int w, int h)
{
	struct tm_run t = { .w = w, .h = h };
	char *scr;

	char *cmd;

	build(&t);
	DT_ASSERT_GT(asprintf(&cmd, "%s top --proc-root %s -i 100ms --sort=pid", cli_bin(),
			      t.pt.root), 0);
	start_server(&t, w, h, cmd);
	free(cmd);

	/* the first screen: 101 clients do not fit, the title does */
	scr = wait_screen(&t, has_more_below, "\"more below\"");
	{
		const char *hdr = strstr(scr, "\nPID ");

		DT_ASSERT_TRUE(hdr != NULL);
		/* the engines that exist have a column, no other */
		DT_EXPECT_TRUE(strstr(hdr, "render") != NULL);
		DT_EXPECT_TRUE(strstr(hdr, "copy") != NULL);
		DT_EXPECT_TRUE(strstr(hdr, "video") == NULL);
		if (w >= 120)
			DT_EXPECT_TRUE(strstr(hdr, "DRIVER") != NULL);
	}
	free(scr);

	/* the hot client (300 % of one render engine) sorted last: End shows it */
	tmux(&t, "send-keys -t top End");
	scr = wait_screen(&t, at_end, "the end of the list");
	free(scr);
	scr = wait_screen(&t, hot_full, "the hot client at 100%");
	free(scr);

	tmux(&t, "send-keys -t top Home NPage");
	scr = wait_screen(&t, scrolled, "\"more above\" after PgDn");
	free(scr);
	tmux(&t, "send-keys -t top Up");
	scr = wait_screen(&t, scrolled, "still scrolled after Up");
	free(scr);

	/* hide idle: only the busy ones and the hot one remain */
	tmux(&t, "send-keys -t top i");
	scr = wait_screen(&t, idle_hidden, "idle clients hidden");
	DT_EXPECT_TRUE(strstr(scr, " busy9") != NULL);
	free(scr);
	tmux(&t, "send-keys -t top i");

	/* filter by name */
	tmux(&t, "send-keys -t top / h o t Enter");
	scr = wait_screen(&t, filtered_hot, "only the hot client");
	free(scr);

	/* the command line instead of comm, then a cgroup column too */
	tmux(&t, "send-keys -t top c");
	scr = wait_screen(&t, shows_cmdline, "the command line of the hot client");
	free(scr);
	/*
	 * "three" is only in the hot client's command line: with 'c' on it
	 * matches the hot client alone; with 'c' off nothing matches.
	 */
	tmux(&t, "send-keys -t top / BSpace BSpace BSpace t h r e e Enter");
	scr = wait_screen(&t, filtered_by_cmdline, "the hot client found by its command line");
	free(scr);
	tmux(&t, "send-keys -t top c");
	scr = wait_screen(&t, filtered_none, "no client: comm does not contain the filter");
	free(scr);
	tmux(&t, "send-keys -t top c / BSpace BSpace BSpace BSpace BSpace h o t Enter");
	scr = wait_screen(&t, shows_cmdline, "the hot client again by name");
	free(scr);
	tmux(&t, "send-keys -t top C");
	scr = wait_screen(&t, shows_cgroup, "the cgroup of the hot client");
	DT_EXPECT_TRUE(row_has(scr, HOT_SHOWN) || t.w < 80);
	free(scr);
	tmux(&t, "send-keys -t top c C");
	scr = wait_screen(&t, shows_comm, "comm again, no cgroup column");
	free(scr);

	/* a resize: everything at the new size */
	resized_w = w > 100 ? 100 : w - 10;
	resized_h = h - 4;
	tmux(&t, "resize-window -t top -x %d -y %d", resized_w, resized_h);
	t.w = resized_w;
	t.h = resized_h;
	scr = wait_screen(&t, resized, "the new size");
	free(scr);

	tmux(&t, "send-keys -t top q");
	for (int i = 0; i < 100 && !tmux(&t, "has-session -t top"); i++)
		usleep(50000);
	DT_EXPECT_NE(tmux(&t, "has-session -t top"), 0);	/* q ended it */
	kill_server();
	proc_tree_cleanup(&t.pt);
}

DT_FIXTURE(tm) {
	int unused;
};

DT_SETUP(tm)
{
}

DT_TEARDOWN(tm)
{
	kill_server();
}

DT_TEST_F_TIMEOUT(tm, top_80x24, 120)
{
	run_at(80, 24);
}

DT_TEST_F_TIMEOUT(tm, top_60x20, 120)
{
	run_at(60, 20);
}

DT_TEST_F_TIMEOUT(tm, top_120x40, 120)
{
	run_at(120, 40);
}

DT_TEST_F_TIMEOUT(tm, top_200x60, 120)
{
	run_at(200, 60);
}

/* ---- forty clients, ten engines, a non-ASCII name ---- */

#define NXE		12	/* busy clients of renderD128 (xe-like: cycles only) */
#define NSIM		27	/* idle clients of renderD129 */
#define XE_PID		3000
#define SIM_PID		4000
#define WIDE_PID	4999
/* 11 bytes, 8 columns: c a f e-acute and two wide CJK characters */
#define WIDE_COMM	"caf\xc3\xa9\xe6\xb8\xb2\xe6\x9f\x93"
#define NTEXTS		600	/* reads fed to each busy client: 60 s at 100 ms */

static const char *const xe_eng[] = { "rcs", "bcs", "vcs", "vecs", "ccs", "gsc" };

/* Busy client @i runs engine xe_eng[i % 6] at 5 % x (i + 1). */
static unsigned int busy_pct(int i)
{
	return 5u * (unsigned int)(i + 1);
}

/*
 * The @k-th fdinfo of busy client @i: every engine's clock at k x 10000
 * cycles, its own engine busy for busy_pct(i) % of them. Utilisation from
 * cycles is exact whatever the time between two reads.
 */
static char *xe_text(int i, int k)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	DT_ASSERT_TRUE(f != NULL);
	fprintf(f, "drm-driver:\txe\ndrm-client-id:\t%d\n", 500 + i);
	for (int e = 0; e < 6; e++)
		fprintf(f, "drm-cycles-%s:\t%llu\ndrm-total-cycles-%s:\t%llu\n", xe_eng[e],
			e == i % 6 ? (unsigned long long)k * 100 * busy_pct(i) : 0ull, xe_eng[e],
			(unsigned long long)k * 10000);
	fprintf(f, "drm-total-vram0:\t%d MiB\n", 64 + i);
	fclose(f);
	return t;
}

struct forty {
	struct tm_run t;
	pid_t feeder[NXE];
	char **texts[NXE];
};

static void build_forty(struct forty *F)
{
	char text[512], comm[32];

	DT_ASSERT_EQ(proc_tree_init(&F->t.pt, PROC_TREE_DEVCHAR), 0);
	for (int i = 0; i < NXE; i++) {
		snprintf(comm, sizeof(comm), "busy%d", i);
		DT_ASSERT_EQ(proc_tree_add_proc(&F->t.pt, XE_PID + i, comm), 0);
		F->texts[i] = calloc(NTEXTS, sizeof(char *));
		DT_ASSERT_TRUE(F->texts[i] != NULL);
		for (int k = 0; k < NTEXTS; k++)
			F->texts[i][k] = xe_text(i, k + 1);
		DT_ASSERT_EQ(proc_tree_add_drm_fd(&F->t.pt, XE_PID + i, 3, 226, 128,
						  F->texts[i][0]), 0);
		F->feeder[i] = proc_tree_feed(&F->t.pt, XE_PID + i, 3,
					      (const char *const *)F->texts[i], NTEXTS, NULL, NULL);
		DT_ASSERT_GT(F->feeder[i], 0);
	}
	for (int i = 0; i <= NSIM; i++) {
		pid_t pid = i < NSIM ? SIM_PID + i : WIDE_PID;

		snprintf(comm, sizeof(comm), "idle%d", i);
		DT_ASSERT_EQ(proc_tree_add_proc(&F->t.pt, pid, i < NSIM ? comm : WIDE_COMM), 0);
		snprintf(text, sizeof(text), "drm-driver:\tsimgpu\ndrm-client-id:\t%d\n"
			 "drm-engine-render:\t10 ns\ndrm-engine-copy:\t0 ns\n"
			 "drm-engine-video:\t0 ns\ndrm-engine-compute:\t0 ns\n"
			 "drm-total-system:\t%d KiB\n", 700 + i, 4 * (i + 1));
		DT_ASSERT_EQ(proc_tree_add_drm_fd(&F->t.pt, pid, 3, 226, 129, text), 0);
	}
}

static void free_forty(struct forty *F)
{
	for (int i = 0; i < NXE; i++) {
		if (F->feeder[i] > 0)
			proc_tree_feed_stop(F->feeder[i]);
		for (int k = 0; F->texts[i] && k < NTEXTS; k++)
			free(F->texts[i][k]);
		free(F->texts[i]);
	}
	kill_server();
	proc_tree_cleanup(&F->t.pt);
}

/* The row that starts with @pid, its length in *@len; NULL when not on screen. */
static const char *row_of(const char *s, int pid, size_t *len)
{
	char pfx[16];
	const char *p;

	snprintf(pfx, sizeof(pfx), "\n%d ", pid);
	p = strstr(s, pfx);
	if (!p)
		return NULL;
	*len = strcspn(p + 1, "\n");
	return p + 1;
}

/* The first percentage of a row (the GPU column), -1 when there is none. */
static int first_pct(const char *row, size_t len)
{
	const char *pc = memchr(row, '%', len), *d;

	if (!pc)
		return -1;
	for (d = pc; d > row && d[-1] >= '0' && d[-1] <= '9'; d--)
		;
	return d < pc ? atoi(d) : -1;
}

/* Every busy client on screen with its exact utilisation in the GPU column. */
static bool all_busy_visible(const char *s)
{
	for (int i = 0; i < NXE; i++) {
		size_t len;
		const char *r = row_of(s, XE_PID + i, &len);

		if (!r || first_pct(r, len) != (int)busy_pct(i))
			return false;
	}
	return true;
}

/* Terminal columns of the UTF-8 text [s, e): the CJK ideographs used here take two. */
static size_t cols_of(const char *s, const char *e)
{
	size_t w = 0;

	while (s < e) {
		unsigned char c = (unsigned char)*s;
		size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;

		w += k == 3 && c >= 0xe4 && c <= 0xe9 ? 2 : 1;
		s += k;
	}
	return w;
}

/* The header line of a screen (it starts with "PID"). */
static char *header_of(const char *s)
{
	const char *h = strstr(s, "\nPID ");

	return h ? strndup(h + 1, strcspn(h + 1, "\n")) : NULL;
}

static bool has_header(const char *s)
{
	return strstr(s, "\nPID ") != NULL && all_busy_visible(s);
}

/* busy11 (60 % of gsc) first, and under it its engines: gsc by cycles */
static bool detail_cycles(const char *s)
{
	const char *r = strstr(s, "\n3011 ");

	return r && strstr(r, "\n    gsc              cycles ") &&
	       strstr(r, "  util 60.0% (cycles/total-cycles)") && !strstr(r, "busy 0.000");
}

static const char *sort_shown;

static bool sorted_by(const char *s)
{
	char want[32];

	snprintf(want, sizeof(want), "sort %s", sort_shown);
	return strstr(s, want) != NULL && strstr(s, "\nPID ") != NULL;
}

/*
 * 40 clients at 80x24, on two devices with ten engines between them: the
 * twelve busy ones (cycles only, 5 % to 60 %, two of them on an engine
 * whose column does not fit) are all on the first screen with their exact
 * utilisation in the GPU column; the header says how many engine columns
 * are left out, and it is the same whatever the sort.
 */
DT_TEST_F_TIMEOUT(tm, forty_clients_80x24_every_busy_client_visible, 120)
{
	static const char *const keys[] = { "m", "p", "I", "r", "u" };
	static const char *const names[] = { "mem", "pid", "id", "id (reversed)", "util" };
	struct forty F = { .t = { .w = 80, .h = 24, .fed = true } };
	char *cmd, *scr, *hdr0;
	size_t shown = 0;
	const char *plus;

	build_forty(&F);
	DT_ASSERT_GT(asprintf(&cmd, "env LANG=C.UTF-8 %s top --proc-root %s -i 100ms", cli_bin(),
			      F.t.pt.root), 0);
	start_server(&F.t, 80, 24, cmd);
	free(cmd);
	scr = wait_screen(&F.t, has_header, "every busy client with its utilisation");
	hdr0 = header_of(scr);
	DT_ASSERT_TRUE(hdr0 != NULL);
	/* "+N": the engine columns shown and N are all ten */
	plus = strstr(hdr0, " +");
	DT_ASSERT_TRUE(plus != NULL);
	for (const char *p = strstr(hdr0, "MEMORY") + 6; p < plus; ) {
		p += strspn(p, " ");
		if (p >= plus)
			break;
		shown++;
		p += strcspn(p, " ");
	}
	DT_EXPECT_EQ(shown + (size_t)atoi(plus + 2), (size_t)10);
	DT_EXPECT_GT(shown, 0);
	/*
	 * Both devices have a summary line. xe's GPU: its busiest engine,
	 * gsc, used by two clients (30 % and 60 %): 90 %, in no column.
	 */
	{
		const char *d = strstr(scr, "\nrenderD128 xe  GPU ");

		DT_ASSERT_TRUE(d != NULL);
		DT_EXPECT_EQ(first_pct(d + 1, strcspn(d + 1, "\n")), 90);
		DT_EXPECT_TRUE(strstr(scr, "\nrenderD129 simgpu  GPU ") != NULL);
		/*
		 * At 80 columns neither line has room for all its items (xe:
		 * six engines and vram0; simgpu: four engines and system):
		 * what is shown is whole, and "+N" counts the rest.
		 */
		DT_EXPECT_TRUE(strstr(d, "  vecs 70%  ccs 80% +2\n") != NULL);
		DT_EXPECT_TRUE(strstr(scr, "  video 0%  compute 0% +1\n") != NULL);
		if (!strstr(d, "ccs 80% +2\n"))
			dt_info("%s", scr);
	}
	free(scr);

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *h;

		tmux(&F.t, "send-keys -t top %s", keys[k]);
		sort_shown = names[k];
		scr = wait_screen(&F.t, sorted_by, "the new sort");
		h = header_of(scr);
		DT_EXPECT_TRUE(h && !strcmp(h, hdr0));
		if (h && strcmp(h, hdr0))
			dt_info("header under sort %s:\n%s\nfirst:\n%s", names[k], h, hdr0);
		free(h);
		free(scr);
	}
	/* 'd': a cycles-only engine's detail is its cycles and where its utilisation comes from */
	tmux(&F.t, "send-keys -t top r d");
	scr = wait_screen(&F.t, detail_cycles, "the detail of the busiest client");
	free(scr);
	free(hdr0);
	free_forty(&F);
}

static bool wide_row_shown(const char *s)
{
	size_t len;

	return row_of(s, WIDE_PID, &len) && row_of(s, SIM_PID, &len) && all_busy_visible(s);
}

/*
 * A process name with non-ASCII characters (two of them two columns wide)
 * at 80 columns: its row's columns line up with the others', and the name
 * is shown as it is.
 */
DT_TEST_F_TIMEOUT(tm, non_ascii_name_at_80_columns, 120)
{
	struct forty F = { .t = { .w = 80, .h = 60, .fed = true } };
	const char *wr, *ir, *wp, *ip;
	size_t wl, il;
	char *cmd, *scr;

	build_forty(&F);
	DT_ASSERT_GT(asprintf(&cmd, "env LANG=C.UTF-8 %s top --proc-root %s -i 100ms", cli_bin(),
			      F.t.pt.root), 0);
	start_server(&F.t, 80, 60, cmd);
	free(cmd);
	scr = wait_screen(&F.t, wide_row_shown, "the row of the non-ASCII name");
	wr = row_of(scr, WIDE_PID, &wl);
	ir = row_of(scr, SIM_PID, &il);
	DT_ASSERT_TRUE(wr && ir);
	DT_EXPECT_TRUE(memmem(wr, wl, WIDE_COMM, strlen(WIDE_COMM)) != NULL);
	/* the GPU column's "%" and the memory's unit at the same terminal column */
	wp = memchr(wr, '%', wl);
	ip = memchr(ir, '%', il);
	DT_ASSERT_TRUE(wp && ip);
	DT_EXPECT_EQ(cols_of(wr, wp), cols_of(ir, ip));
	wp = memchr(wr, 'K', wl);
	ip = memchr(ir, 'K', il);
	DT_ASSERT_TRUE(wp && ip);
	DT_EXPECT_EQ(cols_of(wr, wp), cols_of(ir, ip));
	free(scr);
	free_forty(&F);
}

/*
 * A test process ended by @sig while its server runs (a long sleep in the
 * session, standing for top): the server is gone soon after, by the
 * handler (SIGTERM, SIGALRM) or the watchdog (SIGKILL).
 */
static void killed_leaves_no_server(int sig)
{
	struct tm_run t = { .w = 80, .h = 24 };
	int ready[2], status;
	char c = 0;
	pid_t pid;

	DT_ASSERT_EQ(pipe(ready), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(ready[0]);
		start_server(&t, 80, 24, "sleep 600");
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	DT_ASSERT_EQ(read(ready[0], &c, 1), 1);
	close(ready[0]);
	snprintf(t.sock, sizeof(t.sock), "drmacct-test-%d", (int)pid);
	DT_ASSERT_EQ(tmux(&t, "has-session -t top"), 0);	/* it runs */
	kill(pid, sig);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig);
	for (int i = 0; i < 100 && !tmux(&t, "has-session -t top"); i++)
		usleep(50000);
	if (!tmux(&t, "has-session -t top")) {
		tmux(&t, "kill-server");
		DT_FAIL("the tmux server outlived its test killed by %s", sigabbrev_np(sig));
	}
}

DT_TEST_F_TIMEOUT(tm, killed_by_sigterm_leaves_no_server, 30)
{
	killed_leaves_no_server(SIGTERM);
}

DT_TEST_F_TIMEOUT(tm, killed_by_sigalrm_leaves_no_server, 30)
{
	killed_leaves_no_server(SIGALRM);
}

DT_TEST_F_TIMEOUT(tm, killed_by_sigkill_leaves_no_server, 30)
{
	killed_leaves_no_server(SIGKILL);
}

/* ---- engine columns: the drivers' order, whichever client came first ---- */

/* One client prints only "dec"; another "gfx" and then "dec" (a driver's order). */
#define DEC_ONLY	"drm-driver:\tsimgpu\ndrm-client-id:\t1\ndrm-engine-dec:\t0 ns\n"
#define GFX_DEC		"drm-driver:\tsimgpu\ndrm-client-id:\t2\ndrm-engine-gfx:\t0 ns\n" \
			"drm-engine-dec:\t0 ns\n"

static const char *want_engines;

/* The header's words after MEMORY (the engine columns) are @want_engines. */
static bool engines_are(const char *s)
{
	char *h = header_of(s), got[128] = "";
	const char *m = h ? strstr(h, "MEMORY") : NULL;
	size_t n = 0;

	for (const char *p = m ? m + 6 : ""; *p; ) {
		size_t k;

		p += strspn(p, " ");
		k = strcspn(p, " ");
		if (k && n + k + 2 < sizeof(got))
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%.*s", n ? " " : "",
					      (int)k, p);
		p += k;
	}
	free(h);
	return !strcmp(got, want_engines);
}

/* Both clients are on screen, and the columns are @want_engines. */
static bool both_with_engines(const char *s)
{
	return strstr(s, "\n100 ") && strstr(s, "\n200 ") && engines_are(s);
}

/*
 * top starts with the client of @first only (columns @first_cols), the
 * one of @second comes later:
 * the columns are "gfx dec" either way -- the order the driver prints
 * (gfx before dec), not the order of arrival ("dec gfx" when the dec-only
 * client came first), nor by name.
 */
static void engines_in_driver_order(const char *first, const char *first_cols,
				    const char *second)
{
	struct tm_run t = { .w = 120, .h = 20, .fed = true };
	char *cmd, *scr;

	DT_ASSERT_EQ(proc_tree_init(&t.pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&t.pt, 100, "first"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&t.pt, 100, 3, 226, 128, first), 0);
	DT_ASSERT_GT(asprintf(&cmd, "%s top --proc-root %s -i 100ms", cli_bin(), t.pt.root), 0);
	start_server(&t, t.w, t.h, cmd);
	free(cmd);
	want_engines = first_cols;
	free(wait_screen(&t, engines_are, want_engines));

	DT_ASSERT_EQ(proc_tree_add_proc(&t.pt, 200, "second"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&t.pt, 200, 3, 226, 128, second), 0);
	want_engines = "gfx dec";
	scr = wait_screen(&t, both_with_engines, "both clients and the columns \"gfx dec\"");
	free(scr);
	kill_server();
	proc_tree_cleanup(&t.pt);
}

DT_TEST_F_TIMEOUT(tm, engine_columns_dec_only_client_first, 60)
{
	engines_in_driver_order(DEC_ONLY, "dec", GFX_DEC);
}

DT_TEST_F_TIMEOUT(tm, engine_columns_gfx_dec_client_first, 60)
{
	engines_in_driver_order(GFX_DEC, "gfx dec", DEC_ONLY);
}

DT_MAIN
