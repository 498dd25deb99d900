// SPDX-License-Identifier: MIT
/*
 * top.c - `drmacct top`: live per-client GPU utilisation.
 *
 * On a terminal whose terminfo entry can address the cursor: a full-screen
 * view drawn with ncursesw (topview.c builds it), keys through curses.
 * The terminal is put back on every way out: 'q', the end of -n updates,
 * errors, and SIGINT/SIGTERM/SIGHUP/SIGQUIT (the signal is re-raised after
 * endwin(), so the parent sees it; a second one restores the terminal with
 * the raw terminfo strings and leaves at once). ncurses handles SIGTSTP,
 * SIGCONT and SIGWINCH. Otherwise -- not a terminal, --batch, TERM=dumb or
 * no terminfo entry -- plain snapshots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>
#include <term.h>

#include "cli.h"
#include "order.h"
#include "output.h"
#include "procinfo.h"
#include "source.h"
#include "top.h"
#include "tracker_json.h"
#include "view.h"

static const char *const CMD = "top";

/* Terminal state, also used from signal handlers. */
static struct termios term_orig;
static volatile sig_atomic_t term_active;	/* the curses screen is up */
static volatile sig_atomic_t got_signal;
/* rmcup and cnorm of the terminal, for a second signal (async-signal-safe) */
static char raw_leave[256];
static size_t raw_leave_len;

static SCREEN *screen;
static bool unicode;		/* the locale is UTF-8: wide names, block bars */
static bool colour;

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

static void on_signal(int sig)
{
	if (got_signal) {
		/* Second signal: the loop is stuck somewhere; restore and leave now. */
		if (term_active) {
			write_all(STDOUT_FILENO, raw_leave, raw_leave_len);
			tcsetattr(STDOUT_FILENO, TCSANOW, &term_orig);
		}
		_exit(128 + sig);
	}
	got_signal = sig;
}

static void install_handlers(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;	/* no SA_RESTART: a wait returns */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void raw_add(const char *cap)
{
	const char *s = tigetstr(cap);
	size_t n;

	if (!s || s == (char *)-1)
		return;
	n = strlen(s);
	if (raw_leave_len + n <= sizeof(raw_leave)) {
		memcpy(raw_leave + raw_leave_len, s, n);
		raw_leave_len += n;
	}
}

/*
 * The full-screen view, when the terminal can have one: @why says why not
 * (no TERM, no terminfo entry, a terminal that cannot address the cursor).
 */
static bool screen_start(bool keys, char *why, size_t len)
{
	const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");
	const char *cup;
	int err = 0;

	if (!term || !*term) {
		snprintf(why, len, "TERM is not set");
		return false;
	}
	if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
		snprintf(why, len, "no terminfo entry for TERM=%.64s", term);
		return false;
	}
	cup = tigetstr("cup");
	if (!cup || cup == (char *)-1) {
		snprintf(why, len, "TERM=%.64s cannot move the cursor", term);
		del_curterm(cur_term);
		return false;
	}
	raw_add("rmcup");
	raw_add("cnorm");
	del_curterm(cur_term);
	if (tcgetattr(STDOUT_FILENO, &term_orig)) {
		snprintf(why, len, "cannot read the terminal's settings: %s", strerror(errno));
		return false;
	}
	setlocale(LC_CTYPE, "");
	unicode = !strcmp(nl_langinfo(CODESET), "UTF-8");
	screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		snprintf(why, len, "cannot set up TERM=%.64s", term);
		return false;
	}
	term_active = 1;
	set_term(screen);
	cbreak();
	noecho();
	nonl();
	curs_set(0);
	leaveok(stdscr, TRUE);
	if (keys) {
		keypad(stdscr, TRUE);
		set_escdelay(25);
	}
	/* NO_COLOR (no-color.org): present and not empty, no colour */
	colour = (!nc || !*nc) && has_colors() && start_color() == OK;
	if (colour) {
		short bg = use_default_colors() == OK ? -1 : COLOR_BLACK;

		init_pair(1, COLOR_GREEN, bg);
		init_pair(2, COLOR_YELLOW, bg);
		init_pair(3, COLOR_RED, bg);
	}
	return true;
}

static void screen_stop(void)
{
	if (!term_active)
		return;
	endwin();
	delscreen(screen);
	screen = NULL;
	term_active = 0;
}

static attr_t curses_attr(uint8_t a)
{
	attr_t r = A_NORMAL;

	if (a & TV_BOLD)
		r |= A_BOLD;
	if (a & TV_REVERSE)
		r |= A_REVERSE;
	if (a & TV_DIM)
		r |= A_DIM;
	if (colour)
		r |= a & TV_HIGH ? COLOR_PAIR(3) : a & TV_MID ? COLOR_PAIR(2) :
		     a & TV_LOW ? COLOR_PAIR(1) : 0;
	else if (a & TV_HIGH)
		r |= A_BOLD;
	return r;
}

static void draw(struct top *tp)
{
	struct tv_grid g = { .rows = LINES, .cols = COLS, .unicode = unicode };
	wchar_t run[512];

	if (g.rows <= 0 || g.cols <= 0)
		return;
	g.c = calloc((size_t)g.rows * (size_t)g.cols, sizeof(*g.c));
	if (!g.c)
		return;
	top_render(tp, &g);
	for (int r = 0; r < g.rows; r++) {
		const struct tv_cell *row = &g.c[(size_t)r * (size_t)g.cols];
		int n = 0;
		uint8_t a = row[0].attr;

		wmove(stdscr, r, 0);
		for (int c = 0; c <= g.cols; c++) {
			if (c < g.cols && !row[c].ch)
				continue;	/* the right half of a wide character */
			if (c == g.cols || row[c].attr != a || n == (int)(sizeof(run) / sizeof(run[0]))) {
				wattrset(stdscr, curses_attr(a));
				waddnwstr(stdscr, run, n);	/* ERR at the last cell: drawn */
				n = 0;
				if (c == g.cols)
					break;
				a = row[c].attr;
			}
			run[n++] = (wchar_t)row[c].ch;
		}
	}
	wattrset(stdscr, A_NORMAL);
	wnoutrefresh(stdscr);
	doupdate();
	free(g.c);
}

static void scroll_by(struct top *tp, long d)
{
	if (d < 0 && (size_t)-d > tp->scroll)
		tp->scroll = 0;
	else
		tp->scroll += (size_t)d;	/* top_render() clamps at the end */
}

/* One key of the filter line being typed. */
static void edit_key(struct top *tp, int c)
{
	size_t n = strlen(tp->edit);

	if (c == '\r' || c == '\n' || c == KEY_ENTER) {
		snprintf(tp->filter, sizeof(tp->filter), "%s", tp->edit);
		tp->editing = false;
		tp->scroll = 0;
	} else if (c == 0x7f || c == 0x08 || c == KEY_BACKSPACE) {
		if (n)
			tp->edit[n - 1] = '\0';
	} else if (c == 0x1b) {
		tp->editing = false;	/* Esc cancels */
	} else if (c >= 0x20 && c < 0x100 && n + 1 < sizeof(tp->edit)) {
		tp->edit[n] = (char)c;
		tp->edit[n + 1] = '\0';
	}
}

static void handle_key(struct top *tp, int ch, bool *redraw)
{
	long page = tp->body_rows ? (long)tp->body_rows : 1;

	*redraw = true;
	if (ch == KEY_RESIZE)
		return;
	if (tp->editing) {
		edit_key(tp, ch);
		return;
	}
	switch (ch) {
	case 'q':
	case 'Q':
		tp->quit = true;
		return;
	case 'u': tp->sort = CLI_SORT_UTIL; break;
	case 'm': tp->sort = CLI_SORT_MEM; break;
	case 'p': tp->sort = CLI_SORT_PID; break;
	case 'I': tp->sort = CLI_SORT_ID; break;
	case 'c': tp->cmdline = !tp->cmdline; break;
	case 'C': tp->cgroup = !tp->cgroup; break;
	case 'r': tp->reverse = !tp->reverse; break;
	case 'P': tp->procs = !tp->procs; tp->scroll = 0; break;
	case 'i': tp->hide_idle = !tp->hide_idle; tp->scroll = 0; break;
	case 'd': tp->detail = !tp->detail; break;
	case 'k':
	case KEY_UP: scroll_by(tp, -1); break;
	case 'j':
	case KEY_DOWN: scroll_by(tp, 1); break;
	case KEY_PPAGE: scroll_by(tp, -page); break;
	case ' ':
	case KEY_NPAGE: scroll_by(tp, page); break;
	case KEY_HOME: tp->scroll = 0; break;
	case KEY_END: tp->scroll = SIZE_MAX / 2; break;
	case '/':
		tp->editing = true;
		snprintf(tp->edit, sizeof(tp->edit), "%s", tp->filter);
		break;
	default:
		*redraw = false;
		break;
	}
}

/*
 * Wait until @deadline (monotonic ns); on the screen, handles keys and
 * resizes. Waits of at most 100 ms, so that a signal is seen soon even
 * where a read is restarted.
 */
static void wait_until(struct top *tp, uint64_t deadline, bool tty)
{
	for (;;) {
		uint64_t now = dac_now_ns();
		bool redraw = false;
		int ms, ch;

		if (got_signal || tp->quit || now >= deadline)
			return;
		ms = (int)((deadline - now + 999999) / 1000000);
		if (ms > 100)
			ms = 100;
		if (tty && tp->keys) {
			wtimeout(stdscr, ms);
			ch = wgetch(stdscr);
			while (ch != ERR && !tp->quit) {
				bool r;

				handle_key(tp, ch, &r);
				redraw |= r;
				wtimeout(stdscr, 0);
				ch = wgetch(stdscr);
			}
		} else {
			struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);
		}
		if (redraw && tty && !tp->quit)
			draw(tp);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: drmacct top [OPTIONS]\n\n"
		"Live per-client engine utilisation. On a terminal: a full-screen view\n"
		"(ncurses): a line per device (its busiest engine, each engine summed over\n"
		"its clients, memory per region), then a line per client with GPU (its\n"
		"busiest engine), memory and a bar per engine (clamped at 100%% of the\n"
		"engine's capacity; \"+N\": N engines without a column). Keys: q quit,\n"
		"u/m/p/I sort by utilisation/memory/pid/client id, r reverse, P processes,\n"
		"i hide idle, c command line, C cgroup, d details, / filter, arrows PgUp\n"
		"PgDn Home End scroll. Colour unless NO_COLOR is set; block bars in a UTF-8\n"
		"locale, '#' otherwise. Not on a terminal, with --batch, or when TERM\n"
		"cannot address the cursor (dumb, no terminfo entry): a plain snapshot\n"
		"every interval, with each process's command line and cgroup.\n\n"
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
		"away; 128 + N after signal N. See drmacct(1).\n");
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
	char nbuf[CLI_PRINTABLE_MAX], why[160];
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

	tp.proc_root = dopts.proc_root;
	install_handlers();
	tty = !batch && !json && isatty(STDOUT_FILENO);
	tp.keys = tty && isatty(STDIN_FILENO);
	if (tty && !screen_start(tp.keys, why, sizeof(why))) {
		cli_error(CMD, "%s: plain snapshots instead", why);
		tty = false;
	}

	next = dac_now_ns();
	ret = cli_source_sample(tp.bpf, tp.t, tp.d, tp.profile, &tp.st);
	if (!ret)
		ret = top_note_engines(&tp);
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
		if (!ret)
			ret = top_note_engines(&tp);
		if (ret || got_signal)
			break;
		tp.shown++;
		if (tty) {
			draw(&tp);
		} else if (json) {
			/* JSON lines: one drmacct-list document per update. */
			ret = cli_json_tracker(stdout, tp.t, &tp.st, &(struct cli_json_opts){
				.sort = tp.sort, .reverse = tp.reverse, .update = tp.shown,
				.procinfo = true, .proc_root = dopts.proc_root });
			if (ret)
				break;
		} else {
			printf("== drmacct top: update %llu, interval %.3f s, source: %s\n",
			       (unsigned long long)tp.shown,
			       (double)dac_tracker_interval_ns(tp.t) / 1e9,
			       cli_source_name(tp.bpf));
			top_print_devices(stdout, tp.t);
			if (cli_print_table(stdout, tp.t, tp.sort, tp.reverse, tp.procs, true,
					    dopts.proc_root))
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
	screen_stop();
	if (got_signal) {
		int sig = got_signal;

		cli_close_sampler(tp.bpf, tp.d, tp.t);
		top_free_engines(&tp);
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
	top_free_engines(&tp);
	cli_close_sampler(tp.bpf, tp.d, tp.t);
	return rc;
}

DRMACCT_COMMAND(top, cmd_top, "live per-client engine utilisation");
