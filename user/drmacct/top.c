// SPDX-License-Identifier: MIT
/*
 * top.c - `drmacct top`: live per-client GPU utilisation.
 *
 * On a terminal: full-screen view drawn with plain ANSI sequences (no curses),
 * keys read in non-canonical mode. The terminal is put back on every way out:
 * 'q', end of -n iterations, errors, and SIGINT/SIGTERM/SIGHUP/SIGQUIT (the
 * signal is re-raised after the terminal is restored, so the parent sees
 * it); SIGTSTP restores the terminal before stopping and SIGCONT re-enters
 * the view. Not on a terminal (or with --batch): plain snapshots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "cli.h"
#include "view.h"

static const char *const CMD = "top";

#define ENTER_SCREEN "\033[?1049h\033[?25l"
#define LEAVE_SCREEN "\033[?25h\033[?1049l"

/* Terminal state, also used from signal handlers. */
static struct termios term_orig;
static volatile sig_atomic_t term_raw;		/* stdin is in our mode */
static volatile sig_atomic_t term_screen;	/* alternate screen entered */
static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t got_winch;
static volatile sig_atomic_t got_cont;

static void write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Async-signal-safe. */
static void term_leave(void)
{
	if (term_screen)
		write_all(STDOUT_FILENO, LEAVE_SCREEN, sizeof(LEAVE_SCREEN) - 1);
	if (term_raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &term_orig);
}

/* Async-signal-safe; @keys: put stdin in non-canonical mode too. */
static void term_enter(bool keys, bool screen)
{
	if (keys) {
		struct termios t = term_orig;

		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		if (!tcsetattr(STDIN_FILENO, TCSANOW, &t))
			term_raw = 1;
	}
	if (screen) {
		write_all(STDOUT_FILENO, ENTER_SCREEN, sizeof(ENTER_SCREEN) - 1);
		term_screen = 1;
	}
}

static void on_signal(int sig)
{
	if (got_signal) {
		/* Second signal: the loop is stuck somewhere; leave now. */
		term_leave();
		_exit(128 + sig);
	}
	got_signal = sig;
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
}

static void on_tstp(int sig)
{
	int saved = errno;
	bool raw = term_raw, screen = term_screen;
	struct sigaction sa;
	sigset_t set;

	(void)sig;
	term_leave();
	term_raw = 0;
	term_screen = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTSTP, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGTSTP);
	/* Continued. */
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	term_enter(raw, screen);
	got_cont = 1;
	errno = saved;
}

static void install_handlers(bool tty)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll/nanosleep return */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	if (!tty)
		return;
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	sigaction(SIGTTOU, &(struct sigaction){ .sa_handler = SIG_IGN }, NULL);
}

struct top {
	struct dac_tracker *t;
	struct dac_discover *d;
	struct dac_bpf *bpf;		/* clients from BPF; NULL: /proc */
	struct dac_discover_stats st;
	enum dac_profile profile;
	enum cli_sort sort;
	bool reverse, procs, keys;
	uint64_t interval;
	uint64_t count;		/* 0: forever */
	uint64_t shown;
	bool quit;
};

static void fmt_bar(char *buf, size_t width, double u)
{
	size_t fill, i;

	if (isnan(u) || u < 0)
		u = 0;
	if (u > 1)
		u = 1;
	fill = (size_t)(u * (double)width + 0.5);
	for (i = 0; i < width; i++)
		buf[i] = i < fill ? '#' : '.';
	buf[width] = '\0';
}

/* Emit one screen line, cut to the terminal width. */
static void line(FILE *f, int cols, int *row, int rows, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void line(FILE *f, int cols, int *row, int rows, const char *fmt, ...)
{
	char buf[1024];
	bool esc = false;
	va_list ap;
	size_t i, vis = 0;

	if (*row >= rows)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Cut at the terminal width counting visible characters only. */
	for (i = 0; buf[i]; i++) {
		if (buf[i] == '\033') {
			esc = true;
			for (i++; buf[i] && !(buf[i] >= 0x40 && buf[i] <= 0x7e && buf[i] != '['); i++)
				;
			if (!buf[i])
				break;
			continue;
		}
		if (cols > 0 && vis == (size_t)cols) {
			buf[i] = '\0';
			break;
		}
		vis++;
	}
	fprintf(f, "%s%s\033[K\n", buf, esc ? "\033[0m" : "");
	(*row)++;
}

static void bar_line(FILE *f, int cols, int *row, int rows, const char *dev, const char *name,
		     double u)
{
	char bar[512], pct[16];
	int width = cols - 40;

	if (width < 10)
		width = 10;
	if (width > (int)sizeof(bar) - 1)
		width = (int)sizeof(bar) - 1;
	fmt_bar(bar, (size_t)width, u);
	if (isnan(u))
		snprintf(pct, sizeof(pct), "%6s", "-");
	else
		snprintf(pct, sizeof(pct), "%5.1f%%", u * 100.0);
	line(f, cols, row, rows, "  %-10.10s %-14.14s [%s] %s", dev, name, bar, pct);
}

static void draw(struct top *tp)
{
	struct winsize ws = { 0 };
	int rows = 24, cols = 80, row = 0;
	char *buf = NULL, dev[32], mem[32], id[32];
	char cb[CLI_PRINTABLE_MAX], db[CLI_PRINTABLE_MAX], nb[CLI_PRINTABLE_MAX];
	size_t len = 0, i, k, *order;
	FILE *f;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	fputs("\033[H", f);
	line(f, cols, &row, rows, "\033[1mdrmacct top\033[0m  %zu client%s, %zu process%s  "
	     "interval %.2fs  sort %s%s  source %s", dac_tracker_nclients(tp->t),
	     dac_tracker_nclients(tp->t) == 1 ? "" : "s", dac_tracker_nprocs(tp->t),
	     dac_tracker_nprocs(tp->t) == 1 ? "" : "es", (double)tp->interval / 1e9,
	     cli_sort_name(tp->sort), tp->reverse ? " (reversed)" : "",
	     tp->bpf ? "BPF" : "/proc");
	if (tp->st.denied_procs || tp->st.denied_fds)
		line(f, cols, &row, rows, "(%llu processes / %llu fds not readable: run as root)",
		     (unsigned long long)tp->st.denied_procs,
		     (unsigned long long)tp->st.denied_fds);
	line(f, cols, &row, rows, "keys: q quit  u/m/p/c sort by util/mem/pid/client  "
	     "r reverse  P per-process");
	if (tp->procs) {
		order = cli_sorted_procs(tp->t, tp->sort, tp->reverse);
		line(f, cols, &row, rows, "\033[7m%-8s %-16s %-8s %-8s\033[0m", "PID", "COMM",
		     "CLIENTS", "MEMORY");
		for (i = 0; order && i < dac_tracker_nprocs(tp->t); i++) {
			const struct dac_tk_process *p = dac_tracker_proc(tp->t, order[i]);

			line(f, cols, &row, rows, "%-8d %-16s %-8zu %-8s", (int)p->pid,
			     cli_printable(p->comm, cb, sizeof(cb)),
			     p->nclients, cli_fmt_bytes(cli_agg_mem(&p->agg), mem, sizeof(mem)));
			for (k = 0; k < p->agg.nengines; k++) {
				const struct dac_tk_agg_engine *e = &p->agg.engines[k];

				bar_line(f, cols, &row, rows,
					 dac_dev_name(major(e->rdev), minor(e->rdev), dev,
						      sizeof(dev)),
					 cli_printable(e->name, nb, sizeof(nb)), e->util);
			}
		}
	} else {
		order = cli_sorted_clients(tp->t, tp->sort, tp->reverse);
		line(f, cols, &row, rows, "\033[7m%-8s %-16s %-10s %-11s %-8s %-8s\033[0m", "PID",
		     "COMM", "DRIVER", "DEVICE", "CLIENT", "MEMORY");
		for (i = 0; order && i < dac_tracker_nclients(tp->t); i++) {
			const struct dac_tk_client *c = dac_tracker_client(tp->t, order[i]);
			char pid[32];

			snprintf(pid, sizeof(pid), "%d%s", c->nholders ? (int)c->holders[0].pid : 0,
				 c->nholders > 1 && c->holders[c->nholders - 1].pid !=
				 c->holders[0].pid ? "+" : "");
			if (c->has_client_id)
				snprintf(id, sizeof(id), "%llu", (unsigned long long)c->client_id);
			else
				snprintf(id, sizeof(id), "-");
			line(f, cols, &row, rows, "%-8s %-16s %-10s %-11s %-8s %-8s", pid,
			     cli_printable(c->nholders ? c->holders[0].comm : "", cb, sizeof(cb)),
			     c->driver ? cli_printable(c->driver, db, sizeof(db)) : "-",
			     dac_dev_name(c->major, c->minor, dev, sizeof(dev)), id,
			     cli_fmt_bytes(cli_client_mem(c), mem, sizeof(mem)));
			for (k = 0; k < c->nengines; k++)
				if (c->engines[k].present)
					bar_line(f, cols, &row, rows, "",
						 cli_printable(c->engines[k].name, nb,
							       sizeof(nb)),
						 c->engines[k].util);
		}
	}
	free(order);
	fputs("\033[J", f);
	if (fclose(f) == 0 && buf)
		write_all(STDOUT_FILENO, buf, len);
	free(buf);
}

static void handle_keys(struct top *tp, bool *redraw)
{
	char buf[64];
	ssize_t n, i;

	n = read(STDIN_FILENO, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		switch (buf[i]) {
		case 'q':
		case 'Q':
			tp->quit = true;
			return;
		case 'u': tp->sort = CLI_SORT_UTIL; break;
		case 'm': tp->sort = CLI_SORT_MEM; break;
		case 'p': tp->sort = CLI_SORT_PID; break;
		case 'c': tp->sort = CLI_SORT_ID; break;
		case 'r': tp->reverse = !tp->reverse; break;
		case 'P': tp->procs = !tp->procs; break;
		case '\033':
			return;	/* escape sequence (arrows, F-keys): ignore the rest */
		default:
			continue;
		}
		*redraw = true;
	}
}

/* Wait until @deadline (monotonic ns); handles keys and resizes on a tty. */
static void wait_until(struct top *tp, uint64_t deadline, bool tty)
{
	for (;;) {
		uint64_t now = dac_now_ns();
		bool redraw = false;
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int ms;

		if (got_signal || tp->quit || now >= deadline)
			return;
		ms = (int)((deadline - now + 999999) / 1000000);
		if (poll(&pfd, tp->keys ? 1 : 0, ms) > 0 && (pfd.revents & POLLIN))
			handle_keys(tp, &redraw);
		else if (tp->keys && (pfd.revents & (POLLHUP | POLLERR)))
			tp->keys = false;	/* terminal gone: keep running on the clock */
		if (got_winch || got_cont) {
			got_winch = 0;
			got_cont = 0;
			redraw = true;
		}
		if (redraw && tty && !tp->quit)
			draw(tp);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct top [OPTIONS]\n\n"
		"Live per-client engine utilisation. On a terminal: a full-screen view,\n"
		"keys q quit, u/m/p/c sort by utilisation/memory/pid/client id,\n"
		"r reverse, P per-process view. Otherwise (or with --batch): a plain\n"
		"snapshot every interval.\n\n"
		"Options:\n"
		"  -i, --interval=DUR     update interval (default 1s; 1ms..1h; 500ms,\n"
		"                         2s, 1m; a bare number is seconds)\n"
		"  -n, --count=N          stop after N updates (default: run until quit)\n"
		"  -b, --batch            plain snapshots even on a terminal\n"
		"  -j, --json             JSON lines: one drmacct-list document per update\n"
		"                         (implies --batch)\n"
		"  -s, --sort=KEY         util (default), mem, pid or id\n"
		"  -r, --reverse          reverse the order\n"
		"  -p, --processes        per-process view\n"
		"      --pid=PID          only this process; when it exits, say so and\n"
		"                         end (exit status 0)\n"
		"      --spec=PROFILE     parse as 'current' (default) or '2022'\n"
		"      --proc-root=DIR    read DIR instead of /proc (testing)\n"
		"      --source=SRC       auto (default: the BPF client table when\n"
		"                         `drmacct bpf start` runs, else /proc), bpf or proc\n"
		"      --cgroup=PATH      only clients opened in cgroup v2 PATH or below\n"
		"                         (BPF client table only)\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 after q, --count updates or the end of the --pid process;\n"
		"1 sampling failed; 2 usage error; 141 the reader of the output went\n"
		"away; 128 + N after signal N.\n");
}

static int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "processes", no_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'P' },
		{ "spec", required_argument, NULL, 'S' },
		{ "proc-root", required_argument, NULL, 'R' },
		{ "source", required_argument, NULL, 'O' },
		{ "cgroup", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dac_discover_opts dopts = { .fd = -1 };
	struct top tp = { .profile = DAC_PROFILE_CURRENT, .interval = 1000000000ull };
	const char *cgroup = NULL;
	enum cli_source source = CLI_SOURCE_AUTO;
	bool batch = false, json = false, gone = false, tty;
	char *comm = NULL;	/* --pid: its name, for the message when it exits */
	char nbuf[CLI_PRINTABLE_MAX];
	uint64_t next;
	const struct cli_common_opts co = {
		.pid = &dopts.pid, .profile = &tp.profile, .proc_root = &dopts.proc_root,
		.source = &source, .usage = usage,
	};
	int c, opt, ret = 0, rc = CLI_EXIT_FAIL;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:n:bjs:rph", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (cli_opt_interval(CMD, optarg, false, &tp.interval))
				return CLI_EXIT_USAGE;
			break;
		case 'n':
			if (cli_opt_count(CMD, optarg, &tp.count))
				return CLI_EXIT_USAGE;
			break;
		case 'b':
			batch = true;
			break;
		case 'j':
			json = true;
			break;
		case 's':
			if (cli_opt_sort(CMD, optarg, &tp.sort))
				return CLI_EXIT_USAGE;
			break;
		case 'r':
			tp.reverse = true;
			break;
		case 'p':
			tp.procs = true;
			break;
		case 'C':
			cgroup = optarg;
			break;
		default:
			opt = cli_common_opt(CMD, &co, argv, c);
			if (opt != CLI_OPT_NEXT)
				return opt;
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (cli_check_source_conflict(CMD, source, &dopts))
		return CLI_EXIT_USAGE;

	if (cli_open_sampler(CMD, source, &dopts, &tp.bpf, &tp.d, &tp.t))
		return CLI_EXIT_FAIL;
	if (cli_source_cgroup(CMD, tp.bpf, cgroup)) {
		cli_close_sampler(tp.bpf, tp.d, tp.t);
		return CLI_EXIT_FAIL;
	}

	tty = !batch && !json && isatty(STDOUT_FILENO);
	tp.keys = tty && isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &term_orig);
	install_handlers(tty);
	if (tty)
		term_enter(tp.keys, true);

	next = dac_now_ns();
	ret = cli_source_sample(tp.bpf, tp.t, tp.d, tp.profile, &tp.st);
	if (!ret && tty)
		draw(&tp);
	while (!ret && !got_signal && !tp.quit) {
		next += tp.interval;
		wait_until(&tp, next, tty);
		if (got_signal || tp.quit)
			break;
		if (dopts.pid && dac_tracker_nprocs(tp.t)) {
			free(comm);
			comm = strdup(dac_tracker_proc(tp.t, 0)->comm);
		}
		ret = cli_source_sample(tp.bpf, tp.t, tp.d, tp.profile, &tp.st);
		/*
		 * --pid and the process exited (before or during this walk): its
		 * clients are gone with it, say so and end normally.
		 */
		if (dopts.pid && (ret == -ESRCH || (!ret && tp.st.gone_procs))) {
			gone = true;
			ret = 0;
			break;
		}
		if (ret || got_signal)
			break;
		tp.shown++;
		if (tty) {
			draw(&tp);
		} else if (json) {
			/* JSON lines: one drmacct-list document per update. */
			ret = cli_json_tracker(stdout, tp.t, &tp.st, &(struct cli_json_opts){
				.sort = tp.sort, .reverse = tp.reverse, .update = tp.shown });
			if (ret)
				break;
		} else {
			printf("== drmacct top: update %llu, interval %.3f s, source: %s\n",
			       (unsigned long long)tp.shown,
			       (double)dac_tracker_interval_ns(tp.t) / 1e9,
			       cli_source_name(tp.bpf));
			if (cli_print_table(stdout, tp.t, tp.sort, tp.reverse, tp.procs))
				ret = -ENOMEM;
			printf("\n");
			if (fflush(stdout)) {
				ret = errno == EPIPE ? -EPIPE : -EIO;
				break;
			}
		}
		if (tp.count && tp.shown >= tp.count)
			break;
		/* Don't pile up updates after a stall (e.g. a stopped process). */
		if (dac_now_ns() > next + tp.interval)
			next = dac_now_ns();
	}
	term_leave();
	term_raw = 0;
	term_screen = 0;
	if (got_signal) {
		int sig = got_signal;

		cli_close_sampler(tp.bpf, tp.d, tp.t);
		free(comm);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	if (ret == -ESRCH)
		cli_error(CMD, "no process %d", (int)dopts.pid);
	else if (ret && cli_write_failed_epipe(ret))
		;	/* the reader went away: quietly, main() exits CLI_EXIT_PIPE */
	else if (ret)
		cli_error(CMD, "%s", strerror(-ret));
	else
		rc = CLI_EXIT_OK;
	if (gone) {
		printf("drmacct top: process %d%s%s%s exited after %llu update%s\n",
		       (int)dopts.pid, comm ? " (" : "",
		       comm ? cli_printable(comm, nbuf, sizeof(nbuf)) : "", comm ? ")" : "",
		       (unsigned long long)tp.shown, tp.shown == 1 ? "" : "s");
		if (cli_output_done(CMD, 0))
			rc = CLI_EXIT_FAIL;
	} else if (!tty && !ret && !json) {
		cli_note_discovery(CMD, &tp.st);
	}
	free(comm);
	cli_close_sampler(tp.bpf, tp.d, tp.t);
	return rc;
}

DRMACCT_COMMAND(top, cmd_top, "live per-client engine utilisation");
