// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo_lex.c - the fdinfo tokeniser: lines, "key:value", the key's family.
 *
 * It judges nothing: which keys a profile defines, units, duplicates and
 * every other rule are fdinfo_rules.c's. What it does per line, kept short
 * because it runs for every line of every client at every sample:
 *  - the key is scanned eight bytes at a time for the first ':' or byte
 *    below 0x21 (whitespace, '\n', NUL and other controls are all below);
 *    a line whose first such byte is the ':' is the common case and takes
 *    no other look at its key;
 *  - the line's end is found eight bytes at a time too, from the ':' on;
 *  - the key's family is found by its character after "drm-" and fixed-size
 *    compares of the few prefixes that start with it, longest first.
 * Anything else (a blank line, a line without ':', whitespace or a control
 * character in the key, a NUL byte in the line) takes the plain path, byte
 * by byte, with the same results. The common path calls no function of
 * the C library: after the system calls of a read, each one called costs
 * its code's cache misses again (bench_parse measures that case).
 *
 * The text is the parser's own and padded (fdinfo_priv.h): a '\n' after its
 * last byte stops every scan, and eight-byte loads past a line's end stay
 * inside the buffer.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "fdinfo_priv.h"

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

static inline uint64_t load8(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/*
 * The lowest byte of @w (in memory order) that is ':' (@colon) or below
 * 0x21 is flagged in the result; bytes above the first flagged one may be
 * flagged wrongly (a borrow), which is why only the lowest is used.
 */
static inline uint64_t special(uint64_t w, bool colon)
{
	uint64_t m = (w - ONES * 0x21) & ~w & HIGHS;
	uint64_t c = w ^ (ONES * ':');

	if (colon)
		m |= (c - ONES) & ~c & HIGHS;
	return m;
}

/* Index of the first byte at @p that is ':' (when @colon) or below 0x21. */
static inline size_t scan(const char *p, bool colon)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	for (size_t i = 0;; i += 8) {
		uint64_t m = special(load8(p + i), colon);

		if (m)
			return i + ((size_t)__builtin_ctzll(m) >> 3);
	}
#else
	size_t i = 0;

	while ((unsigned char)p[i] >= 0x21 && !(colon && p[i] == ':'))
		i++;
	return i;
#endif
}

/*
 * The '\n' ending the line that goes on at @p (the padding has one), or the
 * first NUL byte before it, whichever comes first.
 */
static inline char *line_end(char *p)
{
#if __BYTE_ORDER == __LITTLE_ENDIAN
	for (;; p += 8) {
		uint64_t w = load8(p), x = w ^ (ONES * '\n');
		uint64_t m = ((x - ONES) & ~x) | ((w - ONES) & ~w);

		m &= HIGHS;
		if (m)
			return p + (__builtin_ctzll(m) >> 3);
	}
#else
	while (*p != '\n' && *p)
		p++;
	return p;
#endif
}

/* The '\n' ending the line at @p, NUL bytes or not. */
static char *newline(char *p)
{
	while (*p != '\n')
		p++;
	return p;
}

/* "drm-" at @s: four bytes that are readable whatever the line (padding). */
static inline bool is_drm(const char *s)
{
	return s[0] == 'd' && s[1] == 'r' && s[2] == 'm' && s[3] == '-';
}

/*
 * The family of a key starting with "drm-": the rest @r (@m bytes) is
 * compared with the prefixes of the spec that start with its first
 * character, longest first. *@name: the engine or region name, or NULL.
 */
static enum dac_key_type drm_family(const char *r, size_t m, const char **name)
{
#define IS(lit) (m == sizeof(lit) - 1 && !memcmp(r, lit, sizeof(lit) - 1))
#define HAS(lit) (m >= sizeof(lit) - 1 && !memcmp(r, lit, sizeof(lit) - 1) && \
		  (*name = r + sizeof(lit) - 1))
	*name = NULL;
	if (!m)
		return DAC_KEY_UNKNOWN_DRM;
	switch (r[0]) {
	case 'a':
		if (HAS("active-"))
			return DAC_KEY_MEM_ACTIVE;
		break;
	case 'c':
		if (IS("client-id"))
			return DAC_KEY_CLIENT_ID;
		if (IS("client-name"))
			return DAC_KEY_CLIENT_NAME;
		if (HAS("cycles-"))
			return DAC_KEY_CYCLES;
		break;
	case 'd':
		if (IS("driver"))
			return DAC_KEY_DRIVER;
		break;
	case 'e':
		if (HAS("engine-capacity-"))
			return DAC_KEY_ENGINE_CAPACITY;
		if (HAS("engine-"))
			return DAC_KEY_ENGINE;
		break;
	case 'm':
		if (HAS("maxfreq-"))
			return DAC_KEY_MAXFREQ;
		if (HAS("memory-"))
			return DAC_KEY_MEMORY_LEGACY;
		break;
	case 'p':
		if (IS("pdev"))
			return DAC_KEY_PDEV;
		if (HAS("purgeable-"))
			return DAC_KEY_MEM_PURGEABLE;
		break;
	case 'r':
		if (HAS("resident-"))
			return DAC_KEY_MEM_RESIDENT;
		break;
	case 's':
		if (HAS("shared-"))
			return DAC_KEY_MEM_SHARED;
		break;
	case 't':
		if (HAS("total-cycles-"))
			return DAC_KEY_TOTAL_CYCLES;
		if (HAS("total-"))
			return DAC_KEY_MEM_TOTAL;
		break;
	}
	return DAC_KEY_UNKNOWN_DRM;
#undef IS
#undef HAS
}

/* A '-' in the key [@s, @s + @n)? */
static inline bool has_dash(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '-')
			return true;
	return false;
}

/* The tail of a line kv_line() finishes: key [@s, @colon), value [@v, @end). */
static inline void kv_finish(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon,
			     char *v, char *end, unsigned int line, bool key_ws,
			     enum dac_key_type type, const char *name)
{
	size_t klen = (size_t)(colon - s);

	t->kind = DAC_TOK_KV;
	t->klen = klen;
	t->drm = is_drm(s);
	t->key_empty = !klen;
	t->key_ws = key_ws;
	t->line = line;
	*t->kv = (struct dac_kv){ .type = type, .key = s, .name = name, .str = v, .line = line };
	*colon = '\0';
	*end = '\0';
	lx->is_drm |= t->drm;
}

/* The family of the well-formed key [@s, @s + @klen) ("drm-" keys: the spec's). */
static inline enum dac_key_type family(const char *s, size_t klen, const char **name)
{
	*name = NULL;
	if (is_drm(s))		/* the ':' after a shorter key is no '-' */
		return drm_family(s + 4, klen - 4, name);
	return has_dash(s, klen) ? DAC_KEY_DRIVER_SPECIFIC : DAC_KEY_OTHER;
}

/* Does a key of family @t take a number (so that num_line() is worth it)? */
static inline bool numeric(enum dac_key_type t)
{
	return t == DAC_KEY_CLIENT_ID || (t >= DAC_KEY_ENGINE && t <= DAC_KEY_UNKNOWN_DRM);
}

/*
 * A "key:value" line: key [@s, @colon), the line ends at @le ('\n'). Ends
 * the key and the value with NUL bytes in the text.
 */
static void kv_line(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon, char *le,
		    unsigned int line, bool key_ws, enum dac_key_type type, const char *name)
{
	char *v = colon + 1, *end = le;

	while (v < end && dac__isws(*v))
		v++;
	while (end > v && dac__isws(end[-1]))
		end--;
	t->trailing_ws = end != le;
	t->numform = DAC_NUM_NONE;
	kv_finish(lx, t, s, colon, v, end, line, key_ws, type, name);
}

#if __BYTE_ORDER == __LITTLE_ENDIAN
/* High bit of each byte of @w that equals @c (exactly: no borrow between bytes). */
static inline uint64_t bytes_eq(uint64_t w, unsigned char c)
{
	uint64_t x = w ^ (ONES * c);

	return ~(((x & ~HIGHS) + ~HIGHS) | x) & HIGHS;
}

/* High bit of each byte of @w that is not a decimal digit. */
static inline uint64_t non_digits(uint64_t w)
{
	uint64_t x = w ^ (ONES * '0');

	return (((x & ~HIGHS) + ONES * 0x76) | x) & HIGHS;
}

/* The value of @n (1..8) digits at the start of @w (little-endian). */
static inline uint64_t digits8(uint64_t w, unsigned int n)
{
	w = (w & (ONES * 0x0f)) << (8 * (8 - n));
	w = (w * (10 * 256 + 1)) >> 8;
	w = ((w & 0x00ff00ff00ff00ffull) * (100 * 65536 + 1)) >> 16;
	return ((w & 0x0000ffff0000ffffull) * (10000 * (1ull << 32) + 1)) >> 32;
}

static const uint64_t pow10[] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
};

/*
 * The common line "key:<blanks><uint>[ <unit>]\n" at @s with its ':' at
 * @colon, ending at @le: the blanks, up to 16 digits and the unit word are
 * found eight bytes at a time, without a loop per byte. @le is found
 * first, on its own, so that the next line's work does not wait for the
 * number's. Returns false when the line is not of that form (it then takes
 * kv_line()).
 */
static bool num_line(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon, char *le,
		     unsigned int line, enum dac_key_type type, const char *name)
{
	char *v = colon + 1, *e, *u = NULL;
	uint64_t m, w, num;
	unsigned int n, n2;

	/* blanks: spaces and tabs (others take the plain way) */
	for (;;) {
		w = load8(v);
		m = ~(bytes_eq(w, ' ') | bytes_eq(w, '\t')) & HIGHS;
		if (m)
			break;
		v += 8;
	}
	v += __builtin_ctzll(m) >> 3;
	w = load8(v);
	m = non_digits(w);
	n = m ? (unsigned int)__builtin_ctzll(m) >> 3 : 8;
	if (!n)
		return false;
	num = digits8(w, n);
	e = v + n;
	if (n == 8) {
		w = load8(e);
		m = non_digits(w);
		n2 = m ? (unsigned int)__builtin_ctzll(m) >> 3 : 8;
		if (n2 == 8)
			return false;	/* 17 digits or more: the plain way */
		if (n2) {
			num = num * pow10[n2] + digits8(w, n2);
			e += n2;
		}
	}
	if (e != le) {
		/* " <word>" to the end: one space, a letter, no blank after */
		if (*e != ' ' || !(((e[1] | 0x20) >= 'a' && (e[1] | 0x20) <= 'z')) ||
		    e + 1 + scan(e + 1, false) != le)
			return false;
		u = e + 1;
	}
	t->trailing_ws = false;
	t->num = num;
	t->numform = u ? DAC_NUM_UNIT : DAC_NUM_BARE;
	t->unit = u;
	kv_finish(lx, t, s, colon, v, le, line, false, type, name);
	return true;
}
#else
static bool num_line(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon, char *le,
		     unsigned int line, enum dac_key_type type, const char *name)
{
	(void)lx, (void)t, (void)s, (void)colon, (void)le, (void)line, (void)type, (void)name;
	return false;
}
#endif

static bool has_ws(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (dac__isws(s[i]))
			return true;
	return false;
}

/* Any line, byte by byte: [@s, @le), @le the '\n' that ends it. */
__attribute__((cold))
static void plain_line(struct dac_lex *lx, struct dac_tok *t, char *s, char *le,
		       unsigned int line)
{
	size_t ll = (size_t)(le - s), i;
	char *colon;

	t->kind = DAC_TOK_NONE;
	t->line = line;
	if (memchr(s, '\0', ll)) {
		t->kind = DAC_TOK_NUL;
		t->drm = ll >= 4 && is_drm(s);
		lx->is_drm |= t->drm;
		return;
	}
	for (i = 0; i < ll && dac__isws(s[i]); i++)
		;
	if (i == ll)
		return;		/* blank line: nothing to say */
	colon = memchr(s, ':', ll);
	if (!colon) {
		if (ll >= 4 && is_drm(s)) {
			t->kind = DAC_TOK_NO_COLON;
			t->drm = true;
			lx->is_drm = true;
		}
		return;		/* not a key/value line: not ours to judge */
	}
	if (colon == s || has_ws(s, (size_t)(colon - s))) {
		kv_line(lx, t, s, colon, le, line, colon != s, DAC_KEY_INVALID, NULL);
	} else {
		const char *name;
		enum dac_key_type type = family(s, (size_t)(colon - s), &name);

		kv_line(lx, t, s, colon, le, line, false, type, name);
	}
}

void dac__lex_start(struct dac_lex *lx, char *text, size_t len)
{
	text[len] = '\n';
	for (size_t i = 1; i < DAC_TEXT_PAD; i++)
		text[len + i] = '\0';
	lx->end = text + len;
	lx->line = 0;
	lx->is_drm = false;
}

char *dac__lex_line(struct dac_lex *lx, char *p, struct dac_tok *t)
{
	size_t i = scan(p, true);
	char *le;

	lx->line++;
	if (p[i] == ':' && i) {
		le = line_end(p + i + 1);
		if (*le == '\n') {
			const char *name;
			enum dac_key_type type = family(p, i, &name);

			if (!numeric(type) || !num_line(lx, t, p, p + i, le, lx->line, type, name))
				kv_line(lx, t, p, p + i, le, lx->line, false, type, name);
			return le + 1;
		}
	}
	le = newline(p);
	plain_line(lx, t, p, le, lx->line);
	return le + 1;
}
