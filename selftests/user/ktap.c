// SPDX-License-Identifier: GPL-2.0
/*
 * ktap.c — read one KUnit suite's results out of KTAP text; see ktap.h.
 */
#define _GNU_SOURCE
#include "ktap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A string that grows; out of memory sticks and makes sb_take() fail. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *p, size_t n)
{
	size_t cap;
	char *s;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		for (cap = b->cap ? b->cap : 128; cap < b->len + n + 1; cap *= 2)
			;
		s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_line(struct sbuf *b, const char *line)
{
	sb_add(b, line, strlen(line));
	sb_add(b, "\n", 1);
}

/* The string built ("" when nothing was added), @b emptied; NULL: no memory. */
static char *sb_take(struct sbuf *b)
{
	char *s = b->oom ? NULL : b->s ? b->s : strdup("");

	if (b->oom)
		free(b->s);
	*b = (struct sbuf){ 0 };
	return s;
}

enum ktap_kind { L_OTHER, L_VERSION, L_PLAN, L_RESULT, L_SUBTEST, L_DIAG };

/* One line of the text, classified; the pointers are into the line. */
struct ktap_line {
	size_t indent;
	char *body;			/* after the indentation */
	enum ktap_kind kind;
	long plan;			/* L_PLAN */
	enum ktap_status status;	/* L_RESULT ... */
	unsigned int number;
	char *name;
	char *directive;		/* NULL when none */
	char *subtest;			/* L_SUBTEST: its name */
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * "ok N [- ]name [# directive]" or "not ok ..." in @s, cut up in place.
 * False when @s is no result line.
 */
static bool parse_result(char *s, struct ktap_line *l)
{
	unsigned long n;
	char *end, *hash;

	if (!strncmp(s, "ok ", 3)) {
		l->status = KTAP_PASS;
		s += 3;
	} else if (!strncmp(s, "not ok ", 7)) {
		l->status = KTAP_FAIL;
		s += 7;
	} else {
		return false;
	}
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || n > 0xffffffffUL || (*end && *end != ' '))
		return false;
	l->number = (unsigned int)n;
	s = end;
	hash = strchr(s, '#');
	l->directive = NULL;
	if (hash) {
		*hash = '\0';
		l->directive = trim(hash + 1);
		if (!strncasecmp(l->directive, "SKIP", 4) &&
		    (!l->directive[4] || l->directive[4] == ' '))
			l->status = KTAP_SKIP;
	}
	s = trim(s);
	if (s[0] == '-' && (!s[1] || s[1] == ' '))
		s = trim(s + 1);
	l->name = s;
	return true;
}

static void classify(char *raw, struct ktap_line *l)
{
	char *s = raw;

	memset(l, 0, sizeof(*l));
	while (*s == ' ')
		s++;
	l->indent = (size_t)(s - raw);
	l->body = s;
	if (!strncmp(s, "KTAP version ", 13) || !strncmp(s, "TAP version ", 12)) {
		l->kind = L_VERSION;
	} else if (!strncmp(s, "1..", 3) && all_digits(s + 3)) {
		l->kind = L_PLAN;
		l->plan = strtol(s + 3, NULL, 10);
	} else if (!strncmp(s, "# Subtest: ", 11)) {
		l->kind = L_SUBTEST;
		l->subtest = trim(s + 11);
	} else if (s[0] == '#') {
		l->kind = L_DIAG;
	} else if (parse_result(s, l)) {
		l->kind = L_RESULT;
	} else {
		l->kind = L_OTHER;
	}
}

/*
 * The length of a printk timestamp "[    4.088054] " that starts @s, as
 * dmesg and a serial console show the kernel log; 0 when there is none.
 */
static size_t timestamp_len(const char *s)
{
	const char *p = s;
	bool digits = false, dot = false;

	if (*p++ != '[')
		return 0;
	while (*p == ' ')
		p++;
	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
		if (*p == '.')
			dot = true;
		else
			digits = true;
	}
	if (!digits || !dot || p[0] != ']' || p[1] != ' ')
		return 0;
	return (size_t)(p + 2 - s);
}

static char *dup_or_null(const char *s, int *ret)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*ret = -ENOMEM;
	return d;
}

/* Parser state while inside the suite. */
struct ktap_state {
	struct ktap_suite *s;
	size_t depth;			/* the suite's indentation */
	struct sbuf pending;		/* lines for the next case */
	struct sbuf suite_diag;
	unsigned int pending_subtests;
	bool ended;
};

static int add_case(struct ktap_state *st, const struct ktap_line *l)
{
	struct ktap_suite *s = st->s;
	struct ktap_case *c, *cases;
	int ret = 0;

	cases = realloc(s->cases, (s->ncases + 1) * sizeof(*cases));
	if (!cases)
		return -ENOMEM;
	s->cases = cases;
	c = &cases[s->ncases++];
	memset(c, 0, sizeof(*c));
	c->number = l->number;
	c->status = l->status;
	c->subtests = st->pending_subtests;
	st->pending_subtests = 0;
	c->name = dup_or_null(l->name, &ret);
	c->directive = dup_or_null(l->directive, &ret);
	c->diag = sb_take(&st->pending);
	if (!c->diag)
		ret = -ENOMEM;
	return ret;
}

/* One line of the text while inside the suite. */
static int suite_line(struct ktap_state *st, char *raw, const struct ktap_line *l)
{
	struct ktap_suite *s = st->s;
	int ret = 0;

	if (l->indent < st->depth) {
		/* Its own result line ends it; anything else here is not its. */
		if (l->kind != L_RESULT)
			return 0;
		s->ended = true;
		st->ended = true;
		s->number = l->number;
		s->status = l->status;
		s->end_name = dup_or_null(l->name, &ret);
		s->directive = dup_or_null(l->directive, &ret);
		return ret;
	}
	if (l->indent > st->depth) {
		/* A case's nested subtest or a message's continuation. */
		if (l->kind == L_RESULT && l->indent == st->depth + 4)
			st->pending_subtests++;
		sb_line(&st->pending, raw + st->depth);
		return 0;
	}
	switch (l->kind) {
	case L_PLAN:
		if (!s->plans++)
			s->plan = l->plan;
		return 0;
	case L_RESULT:
		return add_case(st, l);
	case L_VERSION:
		return 0;
	default:
		/* Before the plan: the suite's (its attributes); after: a case's. */
		sb_line(s->plans || s->ncases ? &st->pending : &st->suite_diag, raw + st->depth);
		return 0;
	}
}

int ktap_find_suite(const char *text, const char *name, struct ktap_suite *out)
{
	struct ktap_state st = { .s = out };
	bool found = false;
	const char *p = text;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->plan = -1;
	while (*p && !ret) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char *raw = strndup(p, n), *line, *work;
		struct ktap_line l;

		p += n + (nl ? 1 : 0);
		if (n && raw && raw[n - 1] == '\r')
			raw[n - 1] = '\0';
		/* The kernel log as dmesg shows it: a timestamp before each line. */
		line = raw ? raw + timestamp_len(raw) : NULL;
		/* classify() cuts its copy up; @line stays the line as it was. */
		work = line ? strdup(line) : NULL;
		if (!work) {
			free(raw);
			ret = -ENOMEM;
			break;
		}
		classify(work, &l);
		if (!*l.body) {
			free(work);	/* a blank line says nothing */
			free(raw);
			continue;
		}
		if (l.kind == L_OTHER)
			out->garbage++;
		if (l.kind == L_SUBTEST && !strcmp(l.subtest, name)) {
			if (found) {
				ret = -EEXIST;	/* a second run of it */
			} else {
				found = true;
				st.depth = l.indent;
				out->name = strdup(name);
				if (!out->name)
					ret = -ENOMEM;
			}
		} else if (found && !st.ended) {
			ret = suite_line(&st, line, &l);
		}
		free(work);
		free(raw);
	}
	if (!ret && !found)
		ret = -ENOENT;
	/* Lines after the last case are the suite's (its totals). */
	if (st.pending.len)
		sb_add(&st.suite_diag, st.pending.s, st.pending.len);
	free(sb_take(&st.pending));
	out->diag = sb_take(&st.suite_diag);
	if (!ret && !out->diag)
		ret = -ENOMEM;
	if (ret)
		ktap_suite_free(out);
	return ret;
}

void ktap_suite_free(struct ktap_suite *s)
{
	for (size_t i = 0; i < s->ncases; i++) {
		free(s->cases[i].name);
		free(s->cases[i].directive);
		free(s->cases[i].diag);
	}
	free(s->cases);
	free(s->name);
	free(s->end_name);
	free(s->directive);
	free(s->diag);
	memset(s, 0, sizeof(*s));
	s->plan = -1;
}

static bool why_not(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool why_not(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return false;
}

bool ktap_suite_complete(const struct ktap_suite *s, char *why, size_t len)
{
	size_t failed = 0;

	if (!s->ended)
		return why_not(why, len, "the suite never ended: %zu case results, then the text ends",
			       s->ncases);
	if (s->plans != 1)
		return why_not(why, len, "%u plan lines in the suite", s->plans);
	if (s->plan < 0 || (size_t)s->plan != s->ncases)
		return why_not(why, len, "planned %ld cases, %zu reported", s->plan, s->ncases);
	for (size_t i = 0; i < s->ncases; i++) {
		if (s->cases[i].number != i + 1)
			return why_not(why, len, "case %zu (%s) is numbered %u", i + 1,
				       s->cases[i].name, s->cases[i].number);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->cases[i].name, s->cases[j].name))
				return why_not(why, len, "case %s reported twice", s->cases[i].name);
		failed += s->cases[i].status == KTAP_FAIL;
	}
	if (strcmp(s->end_name, s->name))
		return why_not(why, len, "the suite's result line names \"%s\"", s->end_name);
	if ((s->status == KTAP_FAIL) != (failed > 0))
		return why_not(why, len, "the suite says %s, and %zu of its cases failed",
			       ktap_status_name(s->status), failed);
	return true;
}

const struct ktap_case *ktap_suite_case(const struct ktap_suite *s, const char *name)
{
	for (size_t i = 0; i < s->ncases; i++)
		if (!strcmp(s->cases[i].name, name))
			return &s->cases[i];
	return NULL;
}

const char *ktap_status_name(enum ktap_status st)
{
	switch (st) {
	case KTAP_PASS:
		return "ok";
	case KTAP_FAIL:
		return "not ok";
	case KTAP_SKIP:
		return "skipped";
	}
	return "?";
}

const char *ktap_strerror(int ret)
{
	switch (ret) {
	case 0:
		return "found";
	case -ENOENT:
		return "no subtest of that name";
	case -EEXIST:
		return "more than one run of it";
	case -ENOMEM:
		return "out of memory";
	}
	return "unknown error";
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

void ktap_kmsg_record(FILE *out, const char *rec)
{
	const char *msg = strchr(rec, ';'), *end;

	msg = msg ? msg + 1 : rec;
	end = strchr(msg, '\n');
	if (!end)
		end = msg + strlen(msg);
	for (const char *p = msg; p < end; p++) {
		if (p[0] == '\\' && end - p >= 4 && p[1] == 'x' &&
		    hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
			fputc(hexval(p[2]) * 16 + hexval(p[3]), out);
			p += 3;
		} else {
			fputc(*p, out);
		}
	}
	fputc('\n', out);
}
