// SPDX-License-Identifier: MIT
/*
 * topview.c - what `drmacct top` shows on a terminal, as a grid of cells
 * (top.h): no terminal code here; top.c draws the grid with ncursesw.
 *
 * Rows: the title, the keys, one line per device, the table header, the
 * body (an entry per client or process, and with 'd' a line per engine),
 * the footer. Widths are counted in terminal columns, not bytes: a name
 * with a wide character takes two per character and pads accordingly.
 *
 * The table never hides usage: the GPU column (the busiest engine of the
 * entry) is always there; the engine columns keep one order, the one the
 * drivers print them in (ties by name), whatever the sort and whichever
 * client came first; when they do not all fit,
 * "+N" says how many are left out, and room for it is taken first; a
 * name that does not fit its column is abbreviated so that no two
 * columns read the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cli.h"
#include "order.h"
#include "output.h"
#include "procinfo.h"
#include "top.h"

/* The cgroup column's width (with its space): narrow, or from 120 columns on. */
#define CG_NARROW	21
#define CG_WIDE		33
/* The command column ('c') takes at least this much before the engines get any. */
#define CMD_MIN		24
/* An engine column is at least this wide (a percentage and a space), at most ENG_MAX. */
#define ENG_MIN		6
#define ENG_MAX		30
/* A label of at most this many bytes (names are cut to the column anyway). */
#define LABEL_MAX	64

/* ---- engine columns ---- */

/* The name of @name among the engine columns (added if new), or NULL. */
static const char *eng_add(struct top *tp, const char *name)
{
	for (size_t i = 0; i < tp->neng; i++)
		if (!strcmp(tp->eng[i], name))
			return tp->eng[i];
	if (tp->neng == tp->cap_eng) {
		size_t nc = tp->cap_eng ? tp->cap_eng * 2 : 16;
		char **nv = realloc(tp->eng, nc * sizeof(*nv));

		if (!nv)
			return NULL;
		tp->eng = nv;
		tp->cap_eng = nc;
	}
	tp->eng[tp->neng] = strdup(name);
	if (!tp->eng[tp->neng])
		return NULL;
	return tp->eng[tp->neng++];
}

/* A driver printed engine @a just before @b (names of tp->eng). */
static int eng_before(struct top *tp, const char *a, const char *b)
{
	for (size_t i = 0; i < tp->nbefore; i++)
		if (tp->before[i][0] == a && tp->before[i][1] == b)
			return 0;
	if (tp->nbefore == tp->cap_before) {
		size_t nc = tp->cap_before ? tp->cap_before * 2 : 16;
		const char *(*nv)[2] = realloc(tp->before, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		tp->before = nv;
		tp->cap_before = nc;
	}
	tp->before[tp->nbefore][0] = a;
	tp->before[tp->nbefore][1] = b;
	tp->nbefore++;
	return 0;
}

/*
 * Order tp->eng by the edges: next is always the engine that the fewest
 * engines not yet placed must precede (none, unless two drivers print
 * the same names in different orders), ties by name. The result depends
 * only on the set of names and edges, not on the order they came in.
 */
static void eng_order(struct top *tp)
{
	for (size_t k = 0; k < tp->neng; k++) {
		size_t best = k, best_in = SIZE_MAX;

		for (size_t i = k; i < tp->neng; i++) {
			size_t in = 0;

			for (size_t e = 0; e < tp->nbefore; e++) {
				if (tp->before[e][1] != tp->eng[i])
					continue;
				/* only edges from engines not placed yet count */
				for (size_t u = k; u < tp->neng; u++)
					if (tp->eng[u] == tp->before[e][0]) {
						in++;
						break;
					}
			}
			if (in < best_in || (in == best_in && strcmp(tp->eng[i], tp->eng[best]) < 0)) {
				best = i;
				best_in = in;
			}
		}
		if (best != k) {
			char *t = tp->eng[k];

			tp->eng[k] = tp->eng[best];
			tp->eng[best] = t;
		}
	}
}

int top_note_engines(struct top *tp)
{
	size_t n0 = tp->neng, e0 = tp->nbefore;

	/* each client's engines in the order its driver prints them */
	for (size_t i = 0; i < dac_tracker_nclients(tp->t); i++) {
		const struct dac_tk_client *c = dac_tracker_client(tp->t, i);
		const char *prev = NULL;

		for (size_t k = 0; k < c->nengines; k++) {
			const char *name;

			if (!c->engines[k].present)
				continue;
			name = eng_add(tp, c->engines[k].name);
			if (!name || (prev && eng_before(tp, prev, name)))
				return -ENOMEM;
			prev = name;
		}
	}
	if (tp->neng != n0 || tp->nbefore != e0)
		eng_order(tp);
	return 0;
}

void top_free_engines(struct top *tp)
{
	for (size_t i = 0; i < tp->neng; i++)
		free(tp->eng[i]);
	free(tp->eng);
	free(tp->before);
	tp->eng = NULL;
	tp->before = NULL;
	tp->neng = tp->cap_eng = tp->nbefore = tp->cap_before = 0;
}

/* ---- cells ---- */

static struct tv_cell *at(struct tv_grid *g, int r, int c)
{
	return &g->c[(size_t)r * (size_t)g->cols + (size_t)c];
}

static void clear_row(struct tv_grid *g, int r, uint8_t attr)
{
	for (int c = 0; c < g->cols; c++)
		*at(g, r, c) = (struct tv_cell){ ' ', attr };
}

/*
 * Text @s (any bytes: shown as cli_printable() has it) at row @r from
 * column @c, at most @maxw columns and never past the edge. Without
 * unicode every non-ASCII character is one '?'. Returns the columns used.
 */
static int put_text(struct tv_grid *g, int r, int c, int maxw, const char *s, uint8_t attr)
{
	size_t n = s ? strlen(s) : 0, k;
	int used = 0;
	uint32_t cp;

	if (r < 0 || r >= g->rows || c < 0)
		return 0;
	if (maxw > g->cols - c)
		maxw = g->cols - c;
	for (size_t i = 0; i < n && used < maxw; i += k) {
		int w;

		k = cli_next_char(s + i, n - i, &cp);
		if (!k)
			break;
		if (!g->unicode && cp >= 0x80)
			cp = '?';
		w = cli_char_width(cp);
		if (!w)
			continue;	/* a combining mark: no cell of its own */
		if (used + w > maxw)
			break;
		*at(g, r, c + used) = (struct tv_cell){ cp, attr };
		if (w == 2)
			*at(g, r, c + used + 1) = (struct tv_cell){ 0, attr };
		used += w;
	}
	return used;
}

static int put_fmt(struct tv_grid *g, int r, int c, int maxw, uint8_t attr, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int put_fmt(struct tv_grid *g, int r, int c, int maxw, uint8_t attr, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put_text(g, r, c, maxw, buf, attr);
}

/* Right-aligned in @w columns. */
static void put_right(struct tv_grid *g, int r, int c, int w, const char *s, uint8_t attr)
{
	int n = (int)cli_text_width(s);

	put_text(g, r, c + (n < w ? w - n : 0), w, s, attr);
}

static uint8_t level(double u)
{
	return isnan(u) ? 0 : u >= 0.8 ? TV_HIGH : u >= 0.5 ? TV_MID : TV_LOW;
}

/* Utilisation as shown: unknown stays NaN, else clamped to 0..100 % of capacity. */
static double shown_util(double u)
{
	if (isnan(u))
		return u;
	return u < 0 ? 0 : u > 1 ? 1 : u;
}

/*
 * A utilisation cell of @w columns at (@r, @c): a bar and the percentage
 * when there is room (w >= 10), else the percentage alone; the last
 * column stays blank. Unicode: eighths of a block; else '#' and '.'.
 */
static void put_util(struct tv_grid *g, int r, int c, int w, double u)
{
	static const uint32_t eighths[] = { 0, 0x258f, 0x258e, 0x258d, 0x258c, 0x258b, 0x258a,
					    0x2589 };
	char pct[16];
	uint8_t a = level(u);

	u = shown_util(u);
	if (isnan(u))
		snprintf(pct, sizeof(pct), "-");
	else
		snprintf(pct, sizeof(pct), "%.0f%%", u * 100.0);
	if (w >= 10) {
		int bw = w - 6;
		int fill = isnan(u) ? 0 : (int)(u * bw * 8 + 0.5);

		for (int i = 0; i < bw && c + i < g->cols; i++) {
			int part = fill - i * 8;
			uint32_t ch;

			if (g->unicode)
				ch = part >= 8 ? 0x2588 : part > 0 ? eighths[part] : ' ';
			else
				ch = part >= 4 ? '#' : '.';
			*at(g, r, c + i) = (struct tv_cell){ ch, ch == '.' ? TV_DIM : a };
		}
		put_right(g, r, c + bw, 5, pct, a);
	} else if (w > 1) {
		put_right(g, r, c, w - 1, pct, a);
	}
}

/* ---- labels ---- */

/* The first @w columns of printable @s into @out. */
static void cut(const char *s, size_t w, char *out, size_t len)
{
	char pb[CLI_PRINTABLE_MAX];
	const char *p = cli_printable(s, pb, sizeof(pb));
	size_t n = strlen(p), used = 0, o = 0, k;
	uint32_t cp;

	for (size_t i = 0; i < n; i += k) {
		int cw;

		k = cli_next_char(p + i, n - i, &cp);
		if (!k)
			break;
		cw = cli_char_width(cp);
		if (used + (size_t)cw > w || o + k >= len)
			break;
		memcpy(out + o, p + i, k);
		o += k;
		used += (size_t)cw;
	}
	out[o] = '\0';
}

static bool dup_label(char (*lab)[LABEL_MAX], size_t n, size_t i)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && !strcmp(lab[j], lab[i]))
			return true;
	return false;
}

/*
 * Column labels for @n engine names in at most @w columns each: the full
 * name where it fits, else a cut; cuts that read like another column get
 * the end of the name after '~' ("vid~e" next to "video"), then a number.
 * No two labels are the same (unless @w is too small for a number).
 */
static void labels(const char *const *names, size_t n, size_t w, char (*lab)[LABEL_MAX])
{
	for (size_t i = 0; i < n; i++)
		cut(names[i], w, lab[i], LABEL_MAX);
	for (size_t i = 0; i < n && w >= 3; i++) {
		char end[8];

		if (cli_text_width(names[i]) <= w || !dup_label(lab, n, i))
			continue;
		cut(names[i], w - 2, lab[i], LABEL_MAX - 8);
		snprintf(end, sizeof(end), "~%c", names[i][strlen(names[i]) - 1]);
		strcat(lab[i], end);
	}
	for (size_t i = 0, k = 1; i < n; i++) {
		char num[24];
		size_t d;

		if (!dup_label(lab, n, i))
			continue;
		d = (size_t)snprintf(num, sizeof(num), "%zu", k++);
		if (d >= w)
			continue;
		cut(names[i], w - d, lab[i], LABEL_MAX - 24);
		strcat(lab[i], num);
	}
}

/* ---- devices ---- */

struct dev_eng {
	const char *name;
	double util;		/* summed over clients, capped at 1; NaN: unknown */
};

struct dev_reg {
	const char *name;
	uint64_t bytes;
	bool printed;
};

struct dev_sum {
	dev_t rdev;
	const char *driver;
	size_t nclients;
	struct dev_eng *e;
	size_t ne;
	struct dev_reg *m;
	size_t nm;
	double busiest;
	const char *busiest_name;
};

static void devs_free(struct dev_sum *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(d[i].e);
		free(d[i].m);
	}
	free(d);
}

static struct dev_sum *dev_get(struct dev_sum **v, size_t *n, dev_t rdev)
{
	struct dev_sum *t;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].rdev == rdev)
			return &(*v)[i];
	t = realloc(*v, (*n + 1) * sizeof(*t));
	if (!t)
		return NULL;
	*v = t;
	t = &t[(*n)++];
	memset(t, 0, sizeof(*t));
	t->rdev = rdev;
	t->busiest = NAN;
	return t;
}

/* Per device, from the tracker's totals. NULL with *@n 0 when there is none. */
static struct dev_sum *devices(const struct dac_tracker *t, size_t *n)
{
	const struct dac_tk_agg *a = dac_tracker_totals(t);
	struct dev_sum *v = NULL, *d;

	*n = 0;
	for (size_t i = 0; i < dac_tracker_nclients(t); i++) {
		const struct dac_tk_client *c = dac_tracker_client(t, i);

		d = dev_get(&v, n, c->rdev);
		if (!d)
			goto oom;
		d->nclients++;
		if (!d->driver)
			d->driver = c->driver;
	}
	for (size_t i = 0; a && i < a->nengines; i++) {
		const struct dac_tk_agg_engine *e = &a->engines[i];
		struct dev_eng *x;

		d = dev_get(&v, n, e->rdev);
		if (!d || !(x = realloc(d->e, (d->ne + 1) * sizeof(*x))))
			goto oom;
		d->e = x;
		x[d->ne].name = e->name;
		x[d->ne].util = isnan(e->util) ? NAN : e->util > 1 ? 1 : e->util < 0 ? 0 : e->util;
		if (!isnan(x[d->ne].util) && (isnan(d->busiest) || x[d->ne].util > d->busiest)) {
			d->busiest = x[d->ne].util;
			d->busiest_name = e->name;
		}
		d->ne++;
	}
	for (size_t i = 0; a && i < a->nregions; i++) {
		const struct dac_tk_agg_region *r = &a->regions[i];
		struct dev_reg *x;

		d = dev_get(&v, n, r->rdev);
		if (!d || !(x = realloc(d->m, (d->nm + 1) * sizeof(*x))))
			goto oom;
		d->m = x;
		x[d->nm].name = r->name;
		x[d->nm].printed = r->has_total || r->has_resident;
		x[d->nm].bytes = r->has_total ? r->total : r->resident;
		d->nm++;
	}
	return v;
oom:
	devs_free(v, *n);
	*n = 0;
	return NULL;
}

/* Columns of " +@n". */
static int plus_width(size_t n)
{
	char b[32];

	return snprintf(b, sizeof(b), " +%zu", n);
}

/*
 * One device's line at row @r: its name and driver, GPU (the busiest
 * engine), then every engine's utilisation and every memory region, each
 * item whole or not at all; " +N" says how many items did not fit, and
 * there is always room left for it.
 */
static void device_line(struct tv_grid *g, int r, const struct dev_sum *d)
{
	char dev[32], val[32];
	size_t total = d->ne + d->nm;
	int c = 0;

	clear_row(g, r, 0);
	dac_dev_name(major(d->rdev), minor(d->rdev), dev, sizeof(dev));
	c += put_text(g, r, c, g->cols - c, dev, TV_BOLD);
	c += put_fmt(g, r, c, g->cols - c, TV_BOLD, " %s", d->driver ? d->driver : "-");
	c += put_text(g, r, c, g->cols - c, "  GPU ", 0);
	if (c + 11 <= g->cols) {
		put_util(g, r, c, 11, d->busiest);
		c += 11;
	} else if (c < g->cols) {
		put_util(g, r, c, 6, d->busiest);
		c += 6;
	}
	for (size_t i = 0; i < total; i++) {
		bool eng = i < d->ne;
		const char *name = eng ? d->e[i].name : d->m[i - d->ne].name;
		double u = eng ? d->e[i].util : NAN;
		size_t left = total - i - 1;
		int w;

		if (!eng)
			cli_fmt_bytes(d->m[i - d->ne].bytes, val, sizeof(val));
		if (eng && isnan(u))
			snprintf(val, sizeof(val), "-");
		else if (eng)
			snprintf(val, sizeof(val), "%.0f%%", u * 100.0);
		else if (!d->m[i - d->ne].printed)
			snprintf(val, sizeof(val), "-");
		/* "  name value" (engines) or " name value" (memory) */
		w = (eng ? 2 : 1) + (int)cli_text_width(name) + 1 + (int)strlen(val);
		if (c + w + (left ? plus_width(left) : 0) > g->cols) {
			if (c + plus_width(total - i) <= g->cols)
				put_fmt(g, r, c, g->cols - c, TV_REVERSE, " +%zu", total - i);
			break;
		}
		c += put_text(g, r, c, g->cols - c, eng ? "  " : " ", 0);
		c += put_text(g, r, c, g->cols - c, name, 0);
		c += put_text(g, r, c, g->cols - c, " ", 0);
		c += put_text(g, r, c, g->cols - c, val, eng ? level(u) : 0);
	}
}

void top_print_devices(FILE *f, const struct dac_tracker *t)
{
	char dev[32], nb[CLI_PRINTABLE_MAX], mem[32];
	size_t n;
	struct dev_sum *v = devices(t, &n);

	for (size_t i = 0; i < n; i++) {
		const struct dev_sum *d = &v[i];

		fprintf(f, "%s %s: GPU ", dac_dev_name(major(d->rdev), minor(d->rdev), dev,
							sizeof(dev)),
			cli_printable(d->driver ? d->driver : "-", nb, sizeof(nb)));
		if (isnan(d->busiest))
			fprintf(f, "-");
		else
			fprintf(f, "%.1f%% (%s)", d->busiest * 100.0,
				cli_printable(d->busiest_name, nb, sizeof(nb)));
		for (size_t k = 0; k < d->ne; k++) {
			fprintf(f, "%s %s ", k ? "," : ";", cli_printable(d->e[k].name, nb, sizeof(nb)));
			if (isnan(d->e[k].util))
				fprintf(f, "-");
			else
				fprintf(f, "%.1f%%", d->e[k].util * 100.0);
		}
		for (size_t k = 0; k < d->nm; k++)
			fprintf(f, "%s %s %s", k ? "," : "; memory",
				cli_printable(d->m[k].name, nb, sizeof(nb)),
				d->m[k].printed ? cli_fmt_bytes(d->m[k].bytes, mem, sizeof(mem)) : "-");
		fputc('\n', f);
	}
	devs_free(v, n);
}

/* ---- the table ---- */

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

/* Utilisation of engine @name in a client, or the busiest of that name in an aggregate. */
static double engine_util(const struct dac_tk_client *c, const struct dac_tk_agg *a,
			  const char *name, bool *has)
{
	double m = NAN;

	*has = false;
	for (size_t k = 0; c && k < c->nengines; k++)
		if (c->engines[k].present && !strcmp(c->engines[k].name, name)) {
			*has = true;
			return c->engines[k].util;
		}
	for (size_t k = 0; a && k < a->nengines; k++)
		if (!strcmp(a->engines[k].name, name)) {
			*has = true;
			if (!isnan(a->engines[k].util) && (isnan(m) || a->engines[k].util > m))
				m = a->engines[k].util;
		}
	return m;
}

/* Where the columns are, for this draw. */
struct layout {
	int pid, comm, clients, drvdev, id, cg, gpu, mem;	/* widths with their blank */
	int eng;			/* width of one engine column */
	size_t ne;			/* engine columns shown */
	size_t hidden;			/* engine columns that do not fit */
	int plus;			/* width of the "+N" slot (with its blank) */
	const char **names;		/* the engine columns present, in tp->eng's order */
	size_t nnames;
	char (*lab)[LABEL_MAX];
};

/* Engine names present among the entries now, in tp->eng's order. */
static const char **present_engines(const struct top *tp, size_t *n)
{
	const char **v = calloc(tp->neng ? tp->neng : 1, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t e = 0; e < tp->neng; e++) {
		bool has = false;

		for (size_t i = 0; i < dac_tracker_nclients(tp->t) && !has; i++)
			engine_util(dac_tracker_client(tp->t, i), NULL, tp->eng[e], &has);
		if (has)
			v[(*n)++] = tp->eng[e];
	}
	return v;
}

static int digits(size_t v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/*
 * The widths for @cols columns. The GPU column is always there; the
 * engine columns get what is left, at least ENG_MIN each; when not all fit,
 * the "+N" slot is reserved before them, and COMM gives up columns (down to
 * 6) before the slot would not fit.
 */
static void lay_out(const struct top *tp, int cols, struct layout *L)
{
	bool wide = cols >= 100, wider = cols >= 120;
	int fixed, area;

	L->pid = 8;
	L->comm = tp->cmdline ? 0 : 16;
	L->clients = tp->procs ? 8 : 0;
	L->drvdev = !tp->procs && wide ? 20 : 0;
	L->id = !tp->procs && wider ? 9 : 0;
	L->cg = tp->cgroup ? (wider ? CG_WIDE : CG_NARROW) : 0;
	L->gpu = cols >= 80 ? 11 : 6;
	L->mem = 7;
	L->ne = L->hidden = 0;
	L->eng = 0;
	L->plus = 0;
	fixed = L->pid + L->comm + L->clients + L->drvdev + L->id + L->cg + L->gpu + L->mem +
		(tp->cmdline ? CMD_MIN : 0);
	area = cols - fixed;
	if (!L->nnames)
		return;
	if ((int)L->nnames * ENG_MIN <= area) {
		L->ne = L->nnames;
	} else {
		/* the "+N" slot first: it says what is not shown; COMM makes room */
		int need = digits(L->nnames) + 2;

		if (area < need && L->comm > 7) {
			int give = L->comm - 7 < need - area ? L->comm - 7 : need - area;

			L->comm -= give;
			area += give;
		}
		for (size_t ne = area > 0 ? (size_t)area / ENG_MIN : 0;; ne--) {
			L->plus = digits(L->nnames - ne) + 2;
			if ((int)ne * ENG_MIN + L->plus <= area || !ne) {
				L->ne = ne;
				break;
			}
		}
		if (L->plus > area)
			L->plus = 0;	/* narrower than any table: nothing fits */
		L->hidden = L->nnames - L->ne;
	}
	if (L->ne) {
		L->eng = (area - L->plus) / (int)L->ne;
		if (L->eng > ENG_MAX)
			L->eng = ENG_MAX;
	}
}

/* Lines of the body: only those in [first, first + n) are drawn, at rows from @row. */
struct body {
	struct tv_grid *g;
	size_t index, first, n;
	int row;
};

/* The row for the next body line, or -1 when it is not on screen. */
static int next_line(struct body *b)
{
	size_t i = b->index++;

	if (i < b->first || i >= b->first + b->n)
		return -1;
	clear_row(b->g, b->row + (int)(i - b->first), 0);
	return b->row + (int)(i - b->first);
}

/*
 * The cgroup cell: @known (the opener's cgroup from the BPF table), else
 * @pid's from /proc, "-" when neither says. A longer path keeps its end,
 * where the container's name is, after "...".
 */
static void cgroup_cell(const struct top *tp, struct tv_grid *g, int r, int c, int w, pid_t pid,
			const char *known)
{
	char *own = NULL, pb[CLI_PRINTABLE_MAX];
	const char *s = known;
	size_t n, max = (size_t)w - 1;

	if (!s && pid > 0)
		s = own = cli_proc_cgroup(tp->proc_root, pid);
	s = s ? cli_printable(s, pb, sizeof(pb)) : "-";
	n = strlen(s);
	if (n > max) {
		s += n - (max - 3);
		while ((*s & 0xc0) == 0x80)
			s++;
		c += put_text(g, r, c, 3, "...", 0);
		max -= 3;
	}
	put_text(g, r, c, (int)max, s, 0);
	free(own);
}

/* The command column of process @pid: its command line, or "[comm]" as ps has it. */
static void command_cell(const struct top *tp, struct tv_grid *g, int r, int c, pid_t pid,
			 const char *comm)
{
	char *s = pid > 0 ? cli_proc_cmdline(tp->proc_root, pid) : NULL;

	if (s)
		put_text(g, r, c, g->cols - c, s, 0);
	else
		put_fmt(g, r, c, g->cols - c, 0, "[%s]", comm ? comm : "");
	free(s);
}

/* The utilisation cells of an entry: GPU, then every shown engine. */
static int util_cells(struct tv_grid *g, int r, int c, const struct layout *L, double busiest,
		      const struct dac_tk_client *cl, const struct dac_tk_agg *a)
{
	put_util(g, r, c, L->gpu, busiest < 0 ? NAN : busiest);
	c += L->gpu;
	{
		char mem[32];

		put_right(g, r, c, L->mem - 1, cl ? cli_fmt_client_mem(cl, mem, sizeof(mem))
						  : cli_fmt_agg_mem(a, mem, sizeof(mem)), 0);
		c += L->mem;
	}
	for (size_t e = 0; e < L->ne; e++, c += L->eng) {
		bool has;
		double u = engine_util(cl, a, L->names[e], &has);

		if (has)
			put_util(g, r, c, L->eng, u);
	}
	return c + L->plus;
}

/*
 * A detail line: "    [DEVICE] ENGINE busy S s util U%" or, for an engine
 * that prints cycles and no busy time, "cycles N util U% (SOURCE)".
 */
static void detail_engine(struct body *b, const char *dev, const char *name, bool has_busy,
			  uint64_t busy, bool has_cycles, uint64_t cycles, double u,
			  enum dac_util_source src, uint64_t capacity)
{
	char text[64], pct[32];
	int r = next_line(b), o = 4;

	if (r < 0)
		return;
	if (isnan(u))
		snprintf(pct, sizeof(pct), "-");
	else
		snprintf(pct, sizeof(pct), "%.1f%%", shown_util(u) * 100.0);
	if (dev) {
		put_text(b->g, r, o, 10, dev, 0);
		o += 11;
	}
	put_text(b->g, r, o, 16, name, 0);
	o += 16;
	text[0] = '\0';
	if (has_busy)
		snprintf(text, sizeof(text), " busy %.6f s", busy / 1e9);
	else if (has_cycles)
		snprintf(text, sizeof(text), " cycles %llu", (unsigned long long)cycles);
	o += put_fmt(b->g, r, o, b->g->cols - o, 0, "%s  util ", text);
	o += put_text(b->g, r, o, b->g->cols - o, pct, level(u));
	if (src == DAC_UTIL_CYCLES_TOTAL || src == DAC_UTIL_CYCLES_MAXFREQ)
		o += put_fmt(b->g, r, o, b->g->cols - o, 0, " (%s)", dac_util_source_name(src));
	if (capacity > 1)
		put_fmt(b->g, r, o, b->g->cols - o, 0, "  capacity %llu",
			(unsigned long long)capacity);
}

static void client_entry(const struct top *tp, struct body *b, const struct layout *L,
			 const struct dac_tk_client *cl)
{
	struct tv_grid *g = b->g;
	pid_t hpid = cl->nholders ? cl->holders[0].pid : 0;
	const char *hcomm = cl->nholders ? cl->holders[0].comm : "";
	char dev[32], id[32];
	int r = next_line(b), c = 0;

	dac_dev_name(cl->major, cl->minor, dev, sizeof(dev));
	if (cl->has_client_id)
		snprintf(id, sizeof(id), "%llu", (unsigned long long)cl->client_id);
	else
		snprintf(id, sizeof(id), "-");
	if (r >= 0) {
		put_fmt(g, r, c, L->pid - 1, 0, "%d%s", (int)hpid,
			cl->nholders > 1 && cl->holders[cl->nholders - 1].pid != hpid ? "+" : "");
		c += L->pid;
		if (L->comm) {
			put_text(g, r, c, L->comm - 1, hcomm, 0);
			c += L->comm;
		}
		if (L->drvdev) {
			put_text(g, r, c, 8, cl->driver ? cl->driver : "-", 0);
			put_text(g, r, c + 9, 10, dev, 0);
			c += L->drvdev;
		}
		if (L->id) {
			put_text(g, r, c, L->id - 1, id, 0);
			c += L->id;
		}
		if (L->cg) {
			cgroup_cell(tp, g, r, c, L->cg, hpid, cl->cgroup);
			c += L->cg;
		}
		c = util_cells(g, r, c, L, cli_client_util(cl), cl, NULL);
		if (tp->cmdline)
			command_cell(tp, g, r, c, hpid, hcomm);
	}
	if (!tp->detail)
		return;
	r = next_line(b);
	if (r >= 0)
		put_fmt(g, r, 0, g->cols, 0, "    %s on %s, client %s%s%s",
			cl->driver ? cl->driver : "-", dev, id, cl->client_name ? ", name " : "",
			cl->client_name ? cl->client_name : "");
	for (size_t k = 0; k < cl->nengines; k++) {
		const struct dac_tk_engine *e = &cl->engines[k];

		if (e->present)
			detail_engine(b, NULL, e->name, e->has_busy, e->busy.value, e->has_cycles,
				      e->cycles.value, e->util, e->util_src, e->capacity);
	}
	if (!cl->nengines && !cl->nregions && (r = next_line(b)) >= 0)
		put_text(g, r, 0, g->cols, "    core keys only: the driver prints no engine or "
			 "memory key", TV_DIM);
}

static void proc_entry(const struct top *tp, struct body *b, const struct layout *L,
		       const struct dac_tk_process *p)
{
	struct tv_grid *g = b->g;
	int r = next_line(b), c = 0;
	char dev[32];

	if (r >= 0) {
		put_fmt(g, r, c, L->pid - 1, 0, "%d", (int)p->pid);
		c += L->pid;
		if (L->comm) {
			put_text(g, r, c, L->comm - 1, p->comm, 0);
			c += L->comm;
		}
		put_fmt(g, r, c, L->clients - 1, 0, "%zu", p->nclients);
		c += L->clients;
		if (L->cg) {
			cgroup_cell(tp, g, r, c, L->cg, p->pid, NULL);
			c += L->cg;
		}
		c = util_cells(g, r, c, L, cli_agg_util(&p->agg), NULL, &p->agg);
		if (tp->cmdline)
			command_cell(tp, g, r, c, p->pid, p->comm);
	}
	if (!tp->detail)
		return;
	for (size_t k = 0; k < p->agg.nengines; k++) {
		const struct dac_tk_agg_engine *e = &p->agg.engines[k];

		dac_dev_name(major(e->rdev), minor(e->rdev), dev, sizeof(dev));
		detail_engine(b, dev, e->name, e->has_busy, e->busy_ns, e->has_cycles, e->cycles,
			      e->util, e->has_busy ? DAC_UTIL_TIME : DAC_UTIL_CYCLES_TOTAL, 1);
	}
}

static void header(const struct top *tp, struct tv_grid *g, int r, const struct layout *L)
{
	int c = 0;

	clear_row(g, r, TV_REVERSE);
	put_text(g, r, c, L->pid - 1, "PID", TV_REVERSE);
	c += L->pid;
	if (L->comm) {
		put_text(g, r, c, L->comm - 1, "COMM", TV_REVERSE);
		c += L->comm;
	}
	if (L->clients) {
		put_text(g, r, c, L->clients - 1, "CLIENTS", TV_REVERSE);
		c += L->clients;
	}
	if (L->drvdev) {
		put_text(g, r, c, 8, "DRIVER", TV_REVERSE);
		put_text(g, r, c + 9, 10, "DEVICE", TV_REVERSE);
		c += L->drvdev;
	}
	if (L->id) {
		put_text(g, r, c, L->id - 1, "CLIENT", TV_REVERSE);
		c += L->id;
	}
	if (L->cg) {
		put_text(g, r, c, L->cg - 1, "CGROUP", TV_REVERSE);
		c += L->cg;
	}
	put_text(g, r, c, L->gpu - 1, "GPU", TV_REVERSE);
	c += L->gpu;
	put_right(g, r, c, L->mem - 1, "MEMORY", TV_REVERSE);
	c += L->mem;
	for (size_t e = 0; e < L->ne; e++, c += L->eng)
		put_text(g, r, c, L->eng - 1, L->lab[e], TV_REVERSE);
	if (L->hidden && L->plus)
		put_fmt(g, r, c, L->plus - 1, TV_REVERSE, "+%zu", L->hidden);
	c += L->plus;
	if (tp->cmdline)
		put_text(g, r, c, g->cols - c, "COMMAND", TV_REVERSE);
}

void top_render(struct top *tp, struct tv_grid *g)
{
	size_t n = tp->procs ? dac_tracker_nprocs(tp->t) : dac_tracker_nclients(tp->t);
	size_t *order = tp->procs ? cli_sorted_procs(tp->t, tp->sort, tp->reverse)
				  : cli_sorted_clients(tp->t, tp->sort, tp->reverse);
	struct layout L = { 0 };
	struct body b = { .g = g };
	struct dev_sum *dv;
	size_t ndev, maxdev, body, total = 0, max_scroll;
	char text[512], pb[CLI_PRINTABLE_MAX];
	int r = 0, o;

	for (int i = 0; i < g->rows; i++)
		clear_row(g, i, 0);
	if (!g->rows || !g->cols)
		goto out;
	L.names = present_engines(tp, &L.nnames);
	L.lab = calloc(L.nnames ? L.nnames : 1, sizeof(*L.lab));
	dv = devices(tp->t, &ndev);
	if (!order || !L.names || !L.lab) {
		put_text(g, 0, 0, g->cols, "drmacct top: out of memory", TV_BOLD);
		devs_free(dv, ndev);
		goto out;
	}
	lay_out(tp, g->cols, &L);
	if (L.ne)
		labels(L.names, L.ne, (size_t)L.eng - 1, L.lab);

	/* title and keys */
	snprintf(text, sizeof(text), "drmacct top  %zu client%s, %zu process%s  interval %.2fs  "
		 "sort %s%s  source %s", dac_tracker_nclients(tp->t),
		 dac_tracker_nclients(tp->t) == 1 ? "" : "s", dac_tracker_nprocs(tp->t),
		 dac_tracker_nprocs(tp->t) == 1 ? "" : "es", (double)tp->interval / 1e9,
		 cli_sort_name(tp->sort), tp->reverse ? " (reversed)" : "",
		 tp->bpf ? "BPF" : "/proc");
	put_text(g, r++, 0, g->cols, text, TV_BOLD);
	if (r < g->rows) {
		if (tp->editing)
			put_fmt(g, r, 0, g->cols, 0, "filter (pid, name, driver%s; Enter apply, Esc "
				"cancel): %s_", tp->cmdline ? ", command line" : "",
				cli_printable(tp->edit, pb, sizeof(pb)));
		else
			put_fmt(g, r, 0, g->cols, 0, "q quit  u/m/p/I sort  r reverse  P processes  "
				"i %s idle  c %s  C cgroup  d detail  / filter  arrows PgUp PgDn scroll",
				tp->hide_idle ? "show" : "hide", tp->cmdline ? "comm" : "cmdline");
		r++;
	}
	/* the devices: at most a third of the rows below the title */
	maxdev = g->rows > 8 ? (size_t)(g->rows - 5) / 3 : g->rows > 5 ? 1 : 0;
	for (size_t i = 0; i < ndev && i < maxdev && r < g->rows - 2; i++) {
		if (i + 1 == maxdev && ndev > maxdev) {
			clear_row(g, r, 0);
			put_fmt(g, r++, 0, g->cols, TV_DIM, "+%zu more devices", ndev - i);
			break;
		}
		device_line(g, r++, &dv[i]);
	}
	devs_free(dv, ndev);
	if (r < g->rows)
		header(tp, g, r++, &L);

	/* the body: count, clamp the scroll, then draw what is on screen */
	body = g->rows - r > 1 ? (size_t)(g->rows - r - 1) : 0;
	tp->body_rows = body;
	b.first = SIZE_MAX;
	for (int pass = 0; pass < 2; pass++) {
		b.index = 0;
		for (size_t i = 0; i < n; i++) {
			if (tp->procs) {
				const struct dac_tk_process *p = dac_tracker_proc(tp->t, order[i]);

				if (proc_shown(tp, p))
					proc_entry(tp, &b, &L, p);
			} else {
				const struct dac_tk_client *c = dac_tracker_client(tp->t, order[i]);

				if (client_shown(tp, c))
					client_entry(tp, &b, &L, c);
			}
		}
		if (pass)
			break;
		total = b.index;
		max_scroll = total > body ? total - body : 0;
		if (tp->scroll > max_scroll)
			tp->scroll = max_scroll;
		b.first = tp->scroll;
		b.n = body;
		b.row = r;
	}

	/* the footer */
	if (g->rows - 1 >= r) {
		int fr = g->rows - 1;
		size_t last = tp->scroll + body < total ? tp->scroll + body : total;

		clear_row(g, fr, 0);
		o = 0;
		if (tp->scroll)
			o += put_fmt(g, fr, o, g->cols - o, TV_DIM, "%zu more above  ", tp->scroll);
		if (last < total)
			o += put_fmt(g, fr, o, g->cols - o, TV_DIM, "%zu more below  ", total - last);
		if (!total)
			o += put_text(g, fr, o, g->cols - o, "nothing to show  ", TV_DIM);
		if (*tp->filter)
			o += put_fmt(g, fr, o, g->cols - o, TV_DIM, "filter '%s'  ",
				     cli_printable(tp->filter, pb, sizeof(pb)));
		if (tp->hide_idle)
			o += put_text(g, fr, o, g->cols - o, "idle hidden  ", TV_DIM);
		if (dac_tracker_nostats(tp->t))
			o += put_fmt(g, fr, o, g->cols - o, TV_DIM, "%llu DRM fd%s without usage "
				     "stats  ", (unsigned long long)dac_tracker_nostats(tp->t),
				     dac_tracker_nostats(tp->t) == 1 ? "" : "s");
		if (tp->st.denied_procs || tp->st.denied_fds)
			put_fmt(g, fr, o, g->cols - o, TV_DIM, "%llu processes, %llu DRM fds not "
				"readable%s", (unsigned long long)tp->st.denied_procs,
				(unsigned long long)tp->st.denied_fds,
				geteuid() ? " (run as root)" : "");
	}
out:
	free(L.names);
	free(L.lab);
	free(order);
}
