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

#include "cli.h"
#include "order.h"
#include "output.h"
#include "procinfo.h"
#include "source.h"
#include "tracker_json.h"
#include "view.h"

static const char *const CMD = "top";

/* alternate screen, cursor hidden, no autowrap (a long line cannot scroll) */
#define ENTER_SCREEN "\033[?1049h\033[?25l\033[?7l"
#define LEAVE_SCREEN "\033[?7h\033[?25h\033[?1049l"

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
	/* the full-screen view */
	size_t scroll;		/* first body line shown */
	size_t body_rows;	/* body lines that fit at the last draw (PgUp/PgDn) */
	bool hide_idle;		/* 'i': only clients with utilisation > 0 */
	bool detail;		/* 'd': a line per engine under each entry */
	bool cmdline;		/* 'c': the full command line instead of comm */
	bool cgroup;		/* 'C': a cgroup v2 column */
	const char *proc_root;	/* where cmdline and cgroup are read; NULL: /proc */
	bool editing;		/* '/': typing a filter */
	char filter[64];	/* pid, or part of comm, driver or device name */
	char edit[64];
};

/* Utilisation as shown: unknown stays NaN, else clamped to 0..100 % of capacity. */
static double shown_util(double u)
{
	if (isnan(u))
		return u;
	return u < 0 ? 0 : u > 1 ? 1 : u;
}

/* ---- body lines ---- */

struct lines {
	char **v;
	size_t n, cap;
};

static void addf(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void addf(struct lines *l, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		char **nv = realloc(l->v, nc * sizeof(*nv));

		if (!nv)
			return;
		l->v = nv;
		l->cap = nc;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		l->v[l->n++] = s;
	va_end(ap);
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Distinct engine names of what is shown, in order of first appearance. */
struct names {
	const char **v;
	size_t n, cap;
};

static void name_add(struct names *nm, const char *s)
{
	for (size_t i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], s))
			return;
	if (nm->n == nm->cap) {
		size_t nc = nm->cap ? nm->cap * 2 : 16;
		const char **nv = realloc(nm->v, nc * sizeof(*nv));

		if (!nv)
			return;
		nm->v = nv;
		nm->cap = nc;
	}
	nm->v[nm->n++] = s;
}

/* One cell of @w columns: a bar and the percentage, or just the percentage. */
static void cell(char *buf, size_t w, double u)
{
	char pct[16];
	size_t bw, fill, i, o = 0;

	if (isnan(u))
		snprintf(pct, sizeof(pct), "-");
	else
		snprintf(pct, sizeof(pct), "%.0f%%", u * 100.0);
	if (w >= 10) {
		bw = w - 6;
		fill = isnan(u) ? 0 : (size_t)(u * (double)bw + 0.5);
		for (i = 0; i < bw; i++)
			buf[o++] = i < fill ? '#' : '.';
		o += (size_t)sprintf(buf + o, " %4s ", pct);
	} else {
		o += (size_t)sprintf(buf + o, "%*s ", (int)(w > 1 ? w - 1 : 0), pct);
	}
	buf[o] = '\0';
}

static bool match_filter(const struct top *tp, pid_t pid, const char *comm, const char *driver,
			 const char *dev)
{
	const char *f = tp->filter;
	char pb[16];

	if (!*f)
		return true;
	snprintf(pb, sizeof(pb), "%d", (int)pid);
	if (strspn(f, "0123456789") == strlen(f))
		return !strcmp(pb, f);
	if ((comm && strcasestr(comm, f)) || (driver && strcasestr(driver, f)) ||
	    (dev && strcasestr(dev, f)))
		return true;
	/* with the command column on, what it shows matches too (as in htop) */
	if (tp->cmdline && pid > 0) {
		char *cmd = cli_proc_cmdline(tp->proc_root, pid);
		bool m = cmd && strcasestr(cmd, f);

		free(cmd);
		return m;
	}
	return false;
}

static bool client_shown(const struct top *tp, const struct dac_tk_client *c)
{
	char dev[32];
	bool m = false;

	if (tp->hide_idle && !(cli_client_util(c) > 0.0005))
		return false;
	dac_dev_name(c->major, c->minor, dev, sizeof(dev));
	for (size_t k = 0; k < c->nholders && !m; k++)
		m = match_filter(tp, c->holders[k].pid, c->holders[k].comm, c->driver, dev);
	return m || (!c->nholders && match_filter(tp, 0, NULL, c->driver, dev));
}

static bool proc_shown(const struct top *tp, const struct dac_tk_process *p)
{
	if (tp->hide_idle && !(cli_agg_util(&p->agg) > 0.0005))
		return false;
	return match_filter(tp, p->pid, p->comm, NULL, NULL);
}

/* Max utilisation of engine @name over the entry's engines (or devices). */
static double client_engine_util(const struct dac_tk_client *c, const char *name, bool *has)
{
	for (size_t k = 0; k < c->nengines; k++)
		if (c->engines[k].present && !strcmp(c->engines[k].name, name)) {
			*has = true;
			return c->engines[k].util;
		}
	*has = false;
	return NAN;
}

static double agg_engine_util(const struct dac_tk_agg *a, const char *name, bool *has)
{
	double m = NAN;

	*has = false;
	for (size_t k = 0; k < a->nengines; k++)
		if (!strcmp(a->engines[k].name, name)) {
			*has = true;
			if (!isnan(a->engines[k].util) && (isnan(m) || a->engines[k].util > m))
				m = a->engines[k].util;
		}
	return m;
}

/*
 * The engine cells of a client @c or process aggregate @a, at @row + @o.
 * Returns where they end.
 */
static size_t engine_cells(char *row, size_t size, size_t o, const struct names *nm, size_t ne,
			 size_t w, const struct dac_tk_client *c, const struct dac_tk_agg *a)
{
	for (size_t e = 0; e < ne && o + w < size; e++) {
		bool has;
		double u = shown_util(c ? client_engine_util(c, nm->v[e], &has)
					: agg_engine_util(a, nm->v[e], &has));

		if (has)
			cell(row + o, w, u);
		else
			snprintf(row + o, size - o, "%*s", (int)w, "");
		o += strlen(row + o);
	}
	return o;
}

/* The cgroup column's width (with its space): narrow, or from 120 columns on. */
#define CG_NARROW	21
#define CG_WIDE		33
/* The command column ('c') takes at least this much before the engines get any. */
#define CMD_MIN		24

/*
 * The command column of process @pid: its command line, or "[comm]" as ps
 * has it when there is none (kernel thread, zombie, gone). Caller frees.
 */
static char *command_of(const struct top *tp, pid_t pid, const char *comm)
{
	char *s = pid > 0 ? cli_proc_cmdline(tp->proc_root, pid) : NULL;

	if (!s && asprintf(&s, "[%s]", comm ? comm : "") < 0)
		s = NULL;
	return s;
}

/*
 * The cgroup cell at @row + @o (@w columns with the space): @known (the
 * opener's cgroup from the BPF table), else @pid's from /proc, "-" when
 * neither says. A longer path keeps its end, where the container's name
 * is, after "...".
 */
static size_t cgroup_cell(const struct top *tp, char *row, size_t size, size_t o, size_t w,
			  pid_t pid, const char *known)
{
	char *own = NULL, pb[CLI_PRINTABLE_MAX];
	const char *s = known;
	size_t n, max = w - 1;
	int r;

	if (!s && pid > 0)
		s = own = cli_proc_cgroup(tp->proc_root, pid);
	s = s ? cli_printable(s, pb, sizeof(pb)) : "-";
	n = strlen(s);
	if (n > max) {
		s += n - (max - 3);
		while ((*s & 0xc0) == 0x80)
			s++;
		r = snprintf(row + o, size - o, "...%-*s ", (int)(max - 3), s);
	} else {
		r = snprintf(row + o, size - o, "%-*s ", (int)max, s);
	}
	free(own);
	return r < 0 ? o : (size_t)r + o < size ? o + (size_t)r : size - 1;
}

/*
 * The command column at @row + @o after @pad blanks (the header's "+N"
 * slot), to the end of the row; put_row() cuts it at the last column.
 */
static void command_cell(const struct top *tp, char *row, size_t size, size_t o, size_t pad,
			 pid_t pid, const char *comm)
{
	char *s = command_of(tp, pid, comm), pb[CLI_PRINTABLE_MAX];

	if (o < size)
		snprintf(row + o, size - o, "%*s%s", (int)pad, "",
			 s ? cli_printable(s, pb, sizeof(pb)) : "");
	free(s);
}

/*
 * The table: @hdr gets the header line, @l one line per entry (and per
 * engine in detail mode), every line at most @cols wide before cutting.
 * Columns: PID, COMM (not with 'c'), DRIVER DEVICE (100 columns on),
 * CLIENT (120 on), CGROUP ('C'), MEMORY, a cell per engine, COMMAND ('c').
 */
static void build(struct top *tp, int cols, char *hdr, size_t hlen, struct lines *l)
{
	size_t n = tp->procs ? dac_tracker_nprocs(tp->t) : dac_tracker_nclients(tp->t);
	size_t *order = tp->procs ? cli_sorted_procs(tp->t, tp->sort, tp->reverse)
				  : cli_sorted_clients(tp->t, tp->sort, tp->reverse);
	bool wide = cols >= 100, wider = cols >= 120;
	struct names nm = { 0 };
	size_t fixed, area, ne, w = 0, o, cgw = tp->cgroup ? (wider ? CG_WIDE : CG_NARROW) : 0;
	size_t commw = tp->cmdline ? 0 : 16, cmdw = tp->cmdline ? CMD_MIN : 0, extra = 0;
	char cb[CLI_PRINTABLE_MAX], db[CLI_PRINTABLE_MAX], nb[CLI_PRINTABLE_MAX];
	char row[2048], c1[64], mem[32], dev[32];

	if (!order)
		return;
	/* the engine columns: engines that exist among what is shown */
	for (size_t i = 0; i < n; i++) {
		if (tp->procs) {
			const struct dac_tk_process *p = dac_tracker_proc(tp->t, order[i]);

			if (proc_shown(tp, p))
				for (size_t k = 0; k < p->agg.nengines; k++)
					name_add(&nm, p->agg.engines[k].name);
		} else {
			const struct dac_tk_client *c = dac_tracker_client(tp->t, order[i]);

			if (client_shown(tp, c))
				for (size_t k = 0; k < c->nengines; k++)
					if (c->engines[k].present)
						name_add(&nm, c->engines[k].name);
		}
	}
	fixed = 8 + commw + cgw + cmdw + 7 +
		(tp->procs ? 8 : (wide ? 20 : 0) + (wider ? 9 : 0));
	area = (size_t)cols > fixed ? (size_t)cols - fixed : 0;
	ne = nm.n;
	if (ne) {
		w = area / ne;
		if (w < 6) {	/* as many engines as fit at 6 columns */
			ne = area / 6;
			w = ne ? area / ne : 0;
		}
		if (w > 30)
			w = 30;
	}
	/* with the command last, the header's "+N" gets a slot of its own */
	if (tp->cmdline && ne < nm.n)
		extra = (size_t)snprintf(c1, sizeof(c1), "+%zu ", nm.n - ne);
	o = (size_t)snprintf(hdr, hlen, "%-7s ", "PID");
	if (!tp->cmdline)
		o += (size_t)snprintf(hdr + o, hlen - o, "%-15s ", "COMM");
	if (tp->procs)
		o += (size_t)snprintf(hdr + o, hlen - o, "%-7s ", "CLIENTS");
	else
		o += (size_t)snprintf(hdr + o, hlen - o, "%s%s", wide ? "DRIVER   DEVICE     " : "",
				      wider ? "CLIENT   " : "");
	if (cgw)
		o += (size_t)snprintf(hdr + o, hlen - o, "%-*s", (int)cgw, "CGROUP");
	o += (size_t)snprintf(hdr + o, hlen - o, "%6s ", "MEMORY");
	for (size_t e = 0; e < ne && o < hlen; e++)
		o += (size_t)snprintf(hdr + o, hlen - o, "%-*.*s", (int)w, (int)(w ? w - 1 : 0),
				      cli_printable(nm.v[e], nb, sizeof(nb)));
	if (ne < nm.n && o < hlen)
		o += (size_t)snprintf(hdr + o, hlen - o, "+%zu%s", nm.n - ne, extra ? " " : "");
	if (tp->cmdline && o < hlen)
		snprintf(hdr + o, hlen - o, "COMMAND");

	for (size_t i = 0; i < n; i++) {
		if (tp->procs) {
			const struct dac_tk_process *p = dac_tracker_proc(tp->t, order[i]);

			if (!proc_shown(tp, p))
				continue;
			o = (size_t)snprintf(row, sizeof(row), "%-7d ", (int)p->pid);
			if (!tp->cmdline)
				o += (size_t)snprintf(row + o, sizeof(row) - o, "%-15.15s ",
						      cli_printable(p->comm, cb, sizeof(cb)));
			o += (size_t)snprintf(row + o, sizeof(row) - o, "%-7zu ", p->nclients);
			if (cgw)
				o = cgroup_cell(tp, row, sizeof(row), o, cgw, p->pid, NULL);
			o += (size_t)snprintf(row + o, sizeof(row) - o, "%6s ",
					      cli_fmt_bytes(cli_agg_mem(&p->agg), mem, sizeof(mem)));
			o = engine_cells(row, sizeof(row), o, &nm, ne, w, NULL, &p->agg);
			if (tp->cmdline)
				command_cell(tp, row, sizeof(row), o, extra, p->pid, p->comm);
			addf(l, "%s", row);
			if (!tp->detail)
				continue;
			for (size_t k = 0; k < p->agg.nengines; k++) {
				const struct dac_tk_agg_engine *e = &p->agg.engines[k];
				double u = shown_util(e->util);

				addf(l, "    %-10s %-14.14s busy %.6f s  util %s", dac_dev_name(
				     major(e->rdev), minor(e->rdev), dev, sizeof(dev)),
				     cli_printable(e->name, nb, sizeof(nb)), e->busy_ns / 1e9,
				     isnan(u) ? "-" : (snprintf(c1, sizeof(c1), "%.1f%%", u * 100),
						       c1));
			}
		} else {
			const struct dac_tk_client *c = dac_tracker_client(tp->t, order[i]);
			pid_t hpid = c->nholders ? c->holders[0].pid : 0;
			const char *hcomm = c->nholders ? c->holders[0].comm : "";
			char pid[32], id[32];

			if (!client_shown(tp, c))
				continue;
			snprintf(pid, sizeof(pid), "%d%s", (int)hpid,
				 c->nholders > 1 && c->holders[c->nholders - 1].pid !=
				 c->holders[0].pid ? "+" : "");
			if (c->has_client_id)
				snprintf(id, sizeof(id), "%llu", (unsigned long long)c->client_id);
			else
				snprintf(id, sizeof(id), "-");
			dac_dev_name(c->major, c->minor, dev, sizeof(dev));
			o = (size_t)snprintf(row, sizeof(row), "%-7s ", pid);
			if (!tp->cmdline)
				o += (size_t)snprintf(row + o, sizeof(row) - o, "%-15.15s ",
						      cli_printable(hcomm, cb, sizeof(cb)));
			if (wide)
				o += (size_t)snprintf(row + o, sizeof(row) - o, "%-8.8s %-10.10s ",
						      c->driver ? cli_printable(c->driver, db,
										sizeof(db)) : "-",
						      dev);
			if (wider)
				o += (size_t)snprintf(row + o, sizeof(row) - o, "%-8.8s ", id);
			if (cgw)
				o = cgroup_cell(tp, row, sizeof(row), o, cgw, hpid, c->cgroup);
			o += (size_t)snprintf(row + o, sizeof(row) - o, "%6s ",
					      cli_fmt_bytes(cli_client_mem(c), mem, sizeof(mem)));
			o = engine_cells(row, sizeof(row), o, &nm, ne, w, c, NULL);
			if (tp->cmdline)
				command_cell(tp, row, sizeof(row), o, extra, hpid, hcomm);
			addf(l, "%s", row);
			if (!tp->detail)
				continue;
			addf(l, "    %s on %s, client %s%s%s", c->driver ? cli_printable(c->driver, db,
			     sizeof(db)) : "-", dev, id, c->client_name ? ", name " : "",
			     c->client_name ? cli_printable(c->client_name, nb, sizeof(nb)) : "");
			for (size_t k = 0; k < c->nengines; k++) {
				const struct dac_tk_engine *e = &c->engines[k];
				double u = shown_util(e->util);

				if (!e->present)
					continue;
				addf(l, "    %-14.14s busy %.6f s  util %s%s", cli_printable(e->name, nb,
				     sizeof(nb)), e->busy.value / 1e9, isnan(u) ? "-" :
				     (snprintf(c1, sizeof(c1), "%.1f%%", u * 100), c1),
				     e->capacity > 1 ? (snprintf(db, sizeof(db), "  capacity %llu",
				     (unsigned long long)e->capacity), db) : "");
			}
		}
	}
	free(nm.v);
	free(order);
}

/* ---- the screen ---- */

/*
 * Row @r (0-based) of the screen: @text cut to @cols columns (UTF-8 aware),
 * @pad: filled with spaces to the full width (the inverse header), rest of
 * the row erased. Rows are addressed absolutely and no newline is written,
 * so nothing ever scrolls the terminal.
 */
static void put_row(FILE *f, int r, int cols, const char *attr, const char *text, bool pad)
{
	int vis = 0;

	fprintf(f, "\033[%d;1H%s", r + 1, attr ? attr : "");
	for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
		if ((*s & 0xc0) != 0x80) {	/* not a continuation byte */
			if (vis == cols)
				break;
			vis++;
		}
		fputc(*s, f);
	}
	for (; pad && vis < cols; vis++)
		fputc(' ', f);
	fputs(attr ? "\033[0m\033[K" : "\033[K", f);
}

static void draw(struct top *tp)
{
	struct winsize ws = { 0 };
	int rows = 24, cols = 80, r = 0;
	struct lines l = { 0 };
	char *buf = NULL, title[512], keys[256], hdr[1024] = "", foot[256];
	char cb[CLI_PRINTABLE_MAX];
	size_t len = 0, body, last, max_scroll;
	FILE *f;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	build(tp, cols, hdr, sizeof(hdr), &l);
	body = rows > 4 ? (size_t)rows - 4 : 0;
	max_scroll = l.n > body ? l.n - body : 0;
	if (tp->scroll > max_scroll)
		tp->scroll = max_scroll;
	tp->body_rows = body;

	snprintf(title, sizeof(title), "drmacct top  %zu client%s, %zu process%s  interval %.2fs  "
		 "sort %s%s  source %s", dac_tracker_nclients(tp->t),
		 dac_tracker_nclients(tp->t) == 1 ? "" : "s", dac_tracker_nprocs(tp->t),
		 dac_tracker_nprocs(tp->t) == 1 ? "" : "es", (double)tp->interval / 1e9,
		 cli_sort_name(tp->sort), tp->reverse ? " (reversed)" : "",
		 tp->bpf ? "BPF" : "/proc");
	if (tp->editing)
		snprintf(keys, sizeof(keys), "filter (pid, name, driver%s; Enter apply, Esc cancel): "
			 "%s_", tp->cmdline ? ", command line" : "",
			 cli_printable(tp->edit, cb, sizeof(cb)));
	else
		snprintf(keys, sizeof(keys), "q quit  u/m/p/I sort  r reverse  P processes  "
			 "i %s idle  c %s  C cgroup  d detail  / filter  arrows PgUp PgDn scroll",
			 tp->hide_idle ? "show" : "hide", tp->cmdline ? "comm" : "cmdline");

	fputs("\033[H", f);
	put_row(f, r++, cols, "\033[1m", title, false);
	if (r < rows)
		put_row(f, r++, cols, NULL, keys, false);
	if (r < rows)
		put_row(f, r++, cols, "\033[7m", hdr, true);
	last = tp->scroll + body < l.n ? tp->scroll + body : l.n;
	for (size_t i = tp->scroll; i < last; i++)
		put_row(f, r++, cols, NULL, l.v[i], false);
	while (r < rows - 1)
		put_row(f, r++, cols, NULL, "", false);
	if (r < rows) {
		size_t o = 0;

		foot[0] = '\0';
		if (tp->scroll)
			o += (size_t)snprintf(foot + o, sizeof(foot) - o, "%zu more above  ",
					      tp->scroll);
		if (last < l.n)
			o += (size_t)snprintf(foot + o, sizeof(foot) - o, "%zu more below  ",
					      l.n - last);
		if (!l.n)
			o += (size_t)snprintf(foot + o, sizeof(foot) - o, "nothing to show  ");
		if (*tp->filter && o < sizeof(foot))
			o += (size_t)snprintf(foot + o, sizeof(foot) - o, "filter '%s'  ",
					      cli_printable(tp->filter, cb, sizeof(cb)));
		if (tp->hide_idle && o < sizeof(foot))
			o += (size_t)snprintf(foot + o, sizeof(foot) - o, "idle hidden  ");
		if ((tp->st.denied_procs || tp->st.denied_fds) && o < sizeof(foot))
			snprintf(foot + o, sizeof(foot) - o, "%llu processes, %llu DRM fds not "
				 "readable%s", (unsigned long long)tp->st.denied_procs,
				 (unsigned long long)tp->st.denied_fds,
				 geteuid() ? " (run as root)" : "");
		put_row(f, r, cols, "\033[2m", foot, false);
	}
	lines_free(&l);
	if (fclose(f) == 0 && buf)
		write_all(STDOUT_FILENO, buf, len);
	free(buf);
}

static void scroll_by(struct top *tp, long d)
{
	if (d < 0 && (size_t)-d > tp->scroll)
		tp->scroll = 0;
	else
		tp->scroll += (size_t)d;	/* draw() clamps at the end */
}

/* One key of the filter line being typed. */
static void edit_key(struct top *tp, unsigned char c)
{
	size_t n = strlen(tp->edit);

	if (c == '\r' || c == '\n') {
		snprintf(tp->filter, sizeof(tp->filter), "%s", tp->edit);
		tp->editing = false;
		tp->scroll = 0;
	} else if (c == 0x7f || c == 0x08) {
		if (n)
			tp->edit[n - 1] = '\0';
	} else if (c == 0x1b) {
		tp->editing = false;
	} else if (c >= 0x20 && n + 1 < sizeof(tp->edit)) {
		tp->edit[n] = (char)c;
		tp->edit[n + 1] = '\0';
	}
}

/*
 * An escape sequence at @s (@n bytes, s[0] = ESC): the keys we use are
 * ESC [ A/B (arrows), ESC [ 5~/6~ (PgUp/PgDn), ESC [ H/F or 1~/4~ (Home/End),
 * also with O instead of [. Returns the bytes it used.
 */
static size_t escape_key(struct top *tp, const char *s, size_t n)
{
	size_t i = 2;
	long page = tp->body_rows ? (long)tp->body_rows : 1;

	if (n < 2 || (s[1] != '[' && s[1] != 'O')) {
		if (tp->editing)
			tp->editing = false;	/* a lone Esc cancels the filter */
		return 1;
	}
	while (i < n && !(s[i] >= 0x40 && s[i] <= 0x7e))
		i++;
	if (i == n)
		return n;
	if (s[i] == 'A')
		scroll_by(tp, -1);
	else if (s[i] == 'B')
		scroll_by(tp, 1);
	else if (s[i] == 'H' || (s[i] == '~' && s[2] == '1'))
		tp->scroll = 0;
	else if (s[i] == 'F' || (s[i] == '~' && s[2] == '4'))
		tp->scroll = SIZE_MAX / 2;
	else if (s[i] == '~' && s[2] == '5')
		scroll_by(tp, -page);
	else if (s[i] == '~' && s[2] == '6')
		scroll_by(tp, page);
	return i + 1;
}

static void handle_keys(struct top *tp, bool *redraw)
{
	char buf[256];
	ssize_t n, i;

	n = read(STDIN_FILENO, buf, sizeof(buf));
	for (i = 0; i < n; i++) {
		if (buf[i] == '\033') {
			i += (ssize_t)escape_key(tp, buf + i, (size_t)(n - i)) - 1;
			*redraw = true;
			continue;
		}
		if (tp->editing) {
			edit_key(tp, (unsigned char)buf[i]);
			*redraw = true;
			continue;
		}
		switch (buf[i]) {
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
		case 'k': scroll_by(tp, -1); break;
		case 'j': scroll_by(tp, 1); break;
		case ' ': scroll_by(tp, tp->body_rows ? (long)tp->body_rows : 1); break;
		case '/':
			tp->editing = true;
			snprintf(tp->edit, sizeof(tp->edit), "%s", tp->filter);
			break;
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
		"one line per client with a bar per engine (clamped at 100%% of the\n"
		"engine's capacity); keys q quit, u/m/p/I sort by utilisation/memory/\n"
		"pid/client id, r reverse, P per-process view, i hide idle clients,\n"
		"c full command line instead of comm, C cgroup column, d details,\n"
		"/ filter by pid, name or driver (with c on: the command line too),\n"
		"arrows PgUp PgDn Home End scroll.\n"
		"Otherwise (or with --batch): a plain snapshot every interval, with\n"
		"each process's command line and cgroup.\n\n"
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

	tp.proc_root = dopts.proc_root;
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
				.sort = tp.sort, .reverse = tp.reverse, .update = tp.shown,
				.procinfo = true, .proc_root = dopts.proc_root });
			if (ret)
				break;
		} else {
			printf("== drmacct top: update %llu, interval %.3f s, source: %s\n",
			       (unsigned long long)tp.shown,
			       (double)dac_tracker_interval_ns(tp.t) / 1e9,
			       cli_source_name(tp.bpf));
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
