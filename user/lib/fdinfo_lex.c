// SPDX-License-Identifier: MIT
/*
 * fdinfo_lex.c - the fdinfo tokeniser: lines, "key:value", the key's family.
 *
 * It judges nothing: which keys a profile defines, units, duplicates and
 * every other rule are fdinfo_rules.c's. What it does per line, kept short
 * because it runs for every line of every client at every sample:
 *  - the line's end is found first, 32 bytes at a time (SSE2; elsewhere 8
 *    bytes a word): the next line's start then depends on nothing else, so
 *    the work on one line's key and value overlaps with the next line's;
 *  - the key is scanned the same way for the first ':' or byte below 0x21
 *    (whitespace, '\n', NUL and other controls are all below), from the
 *    same first 32 bytes as the line's end (one pair of loads for both);
 *    a line whose first such byte is the ':' is the common case and takes
 *    no other look at its key;
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
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fdinfo_priv.h"

#define ONES	0x0101010101010101ull
#define HIGHS	0x8080808080808080ull

static inline uint64_t load8(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

#if !defined(__SSE2__) && __BYTE_ORDER == __LITTLE_ENDIAN
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
#endif

#if defined(__SSE2__)
/*
 * 32 bytes a step, SSE2 (every x86-64 has it): two loads, compares and one
 * mask. The bytes of the 32 at @p that are @cc or below 0x21 (key_mask()),
 * that are '\n' or NUL (end_mask()), one bit each, the first byte lowest.
 */
static inline unsigned int key_mask(const char *p, char cc)
{
	const __m128i c20 = _mm_set1_epi8(0x20), c = _mm_set1_epi8(cc);
	__m128i a = _mm_loadu_si128((const __m128i *)p);
	__m128i b = _mm_loadu_si128((const __m128i *)(p + 16));

	/* x <= 0x20: min(x, 0x20) == x, unsigned */
	return (unsigned int)_mm_movemask_epi8(
		_mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(a, c20), a), _mm_cmpeq_epi8(a, c))) |
		(unsigned int)_mm_movemask_epi8(
		_mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(b, c20), b), _mm_cmpeq_epi8(b, c))) << 16;
}

static inline unsigned int end_mask(const char *p)
{
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
	__m128i a = _mm_loadu_si128((const __m128i *)p);
	__m128i b = _mm_loadu_si128((const __m128i *)(p + 16));

	return (unsigned int)_mm_movemask_epi8(
		_mm_or_si128(_mm_cmpeq_epi8(a, nl), _mm_cmpeq_epi8(a, zero))) |
		(unsigned int)_mm_movemask_epi8(
		_mm_or_si128(_mm_cmpeq_epi8(b, nl), _mm_cmpeq_epi8(b, zero))) << 16;
}
#endif

/* Index of the first byte at @p that is ':' (when @colon) or below 0x21. */
static inline size_t scan(const char *p, bool colon)
{
#if defined(__SSE2__)
	for (size_t i = 0;; i += 32) {
		unsigned int m = key_mask(p + i, colon ? ':' : 0x20);

		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
#elif __BYTE_ORDER == __LITTLE_ENDIAN
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
#if defined(__SSE2__)
	/*
	 * The next line's start depends on nothing else of this line, so the
	 * work on the key and the value of one line overlaps with the next's.
	 */
	for (;; p += 32) {
		unsigned int m = end_mask(p);

		if (m)
			return p + __builtin_ctz(m);
	}
#elif __BYTE_ORDER == __LITTLE_ENDIAN
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
#if __BYTE_ORDER == __LITTLE_ENDIAN
	uint32_t w;

	memcpy(&w, s, sizeof(w));
	return w == 0x2d6d7264;		/* "drm-" */
#else
	return s[0] == 'd' && s[1] == 'r' && s[2] == 'm' && s[3] == '-';
#endif
}

/*
 * The family of a key starting with "drm-": the rest @r (@m bytes) is
 * compared with the prefixes of the spec that start with its first
 * character, longest first. *@name: the engine or region name, or NULL.
 */
DAC_HOT
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

/* A '-' in the key [@s, @s + @n)? (16 bytes past it are readable: padding) */
static inline bool has_dash(const char *s, size_t n)
{
#if defined(__SSE2__)
	for (size_t i = 0; i < n; i += 16) {
		unsigned int m = (unsigned int)_mm_movemask_epi8(
			_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i)), _mm_set1_epi8('-')));

		if (n - i < 16)
			m &= (1u << (n - i)) - 1;
		if (m)
			return true;
	}
	return false;
#else
	for (size_t i = 0; i < n; i++)
		if (s[i] == '-')
			return true;
	return false;
#endif
}

/* The types family() gives keys that start with "drm-", one bit each. */
#define DRM_TYPES (((1u << (DAC_KEY_MEMORY_LEGACY + 1)) - 1) | 1u << DAC_KEY_UNKNOWN_DRM)
_Static_assert(DAC_KEY__COUNT <= 32, "DRM_TYPES has a bit per key type");

/* The tail of a line kv_line() finishes: key [@s, @colon), value [@v, @end). */
static inline void kv_finish(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon,
			     char *v, char *end, unsigned int line, bool key_ws,
			     enum dac_key_type type, const char *name)
{
	size_t klen = (size_t)(colon - s);

	struct dac_kv *kv = t->kv;

	t->kind = DAC_TOK_KV;
	t->klen = klen;
	/* family() gave the "drm-" keys these types: a bit each */
	t->drm = ((DRM_TYPES >> type) & 1) || (type == DAC_KEY_INVALID && is_drm(s));
	t->key_empty = !klen;
	t->key_ws = key_ws;
	t->line = line;
	/* field by field: a structure's initialiser zeroes all of it first */
	kv->type = type;
	kv->key = s;
	kv->name = name;
	kv->str = v;
	kv->unit = NULL;
	kv->value = 0;
	kv->has_value = false;
	kv->line = line;
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
/*
 * The first byte at @v, at most @end (a '\n'), that is not whitespace
 * (dac__isws()); 16 bytes a step where there is SSE2 (the padding makes
 * 16 bytes past @end readable).
 */
static inline char *skip_ws(char *v, char *end)
{
#if defined(__SSE2__)
	(void)end;	/* it is not whitespace: the loop stops there */
	for (;; v += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)v);
		__m128i d = _mm_sub_epi8(a, _mm_set1_epi8(9));
		/* 9..13 but '\n', or ' ' */
		__m128i ws = _mm_andnot_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8('\n')),
					      _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(4)), d));
		unsigned int m = (unsigned int)_mm_movemask_epi8(
			_mm_or_si128(ws, _mm_cmpeq_epi8(a, _mm_set1_epi8(' ')))) ^ 0xffff;

		if (m)
			return v + __builtin_ctz(m);
	}
#else
	while (v < end && dac__isws(*v))
		v++;
	return v;
#endif
}

DAC_HOT
static void kv_line(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon, char *le,
		    unsigned int line, bool key_ws, enum dac_key_type type, const char *name)
{
	char *v = skip_ws(colon + 1, le), *end = le;

	while (end > v && dac__isws(end[-1]))
		end--;
	t->trailing_ws = end != le;
	t->numform = DAC_NUM_NONE;
	kv_finish(lx, t, s, colon, v, end, line, key_ws, type, name);
}

#if __BYTE_ORDER == __LITTLE_ENDIAN
#if !defined(__SSE2__)
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
#endif

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
/* The digits at @v: how many of the first 16 (16 when all are). */
static inline unsigned int ndigits(const char *v)
{
#if defined(__SSE2__)
	__m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)v), _mm_set1_epi8('0'));
	unsigned int m = (unsigned int)_mm_movemask_epi8(
		_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d));

	return (unsigned int)__builtin_ctz(~m);	/* bit 16 up: always set */
#else
	uint64_t m1 = non_digits(load8(v)), m2 = non_digits(load8(v + 8));

	return m1 ? (unsigned int)__builtin_ctzll(m1) >> 3 :
	       m2 ? 8 + ((unsigned int)__builtin_ctzll(m2) >> 3) : 16;
#endif
}

/* Which unit the word [@u, @u + @len) is (a word: no blank in it, @len > 0). */
static inline unsigned char unit_id(const char *u, size_t len)
{
	uint64_t w = len <= 3 ? load8(u) & ((1ull << (8 * len)) - 1) : 0;
	unsigned char id = u[0] == 'n' || u[0] == 'K' || u[0] == 'M' || u[0] == 'G' ||
			   u[0] == 'H' || u[0] == 'k' ? DAC_U_OTHER : DAC_U_WORD;

	/* little-endian spellings of "ns", "Hz", "KiB", "MiB", "KHz", "MHz" */
	id = w == 0x736e ? DAC_U_NS : id;
	id = w == 0x7a48 ? DAC_U_HZ : id;
	id = w == 0x42694b ? DAC_U_KIB : id;
	id = w == 0x42694d ? DAC_U_MIB : id;
	id = w == 0x7a484b ? DAC_U_KHZ : id;
	id = w == 0x7a484d ? DAC_U_MHZ : id;
	return id;
}

static bool num_line(struct dac_lex *lx, struct dac_tok *t, char *s, char *colon, char *le,
		     unsigned int line, enum dac_key_type type, const char *name)
{
	char *v = colon + 1, *e;
	uint64_t hi, lo;
	unsigned int n;

	/* blanks: spaces and tabs (others take the plain way) */
#if defined(__SSE2__)
	for (;;) {
		__m128i a = _mm_loadu_si128((const __m128i *)v);
		unsigned int b = (unsigned int)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8(' ')),
				     _mm_cmpeq_epi8(a, _mm_set1_epi8('\t')))) ^ 0xffff;

		if (b) {
			v += __builtin_ctz(b);
			break;
		}
		v += 16;
	}
#else
	uint64_t m, w;

	for (;;) {
		w = load8(v);
		m = ~(bytes_eq(w, ' ') | bytes_eq(w, '\t')) & HIGHS;
		if (m)
			break;
		v += 8;
	}
	v += __builtin_ctzll(m) >> 3;
#endif
	/* up to 16 digits, both halves worked out and picked without a branch */
	n = ndigits(v);
	if (!n || n > 15)
		return false;	/* not a number, or one for the long way */
	hi = digits8(load8(v), n < 8 ? n : 8);
	lo = digits8(load8(v + 8), n > 8 ? n - 8 : 1);
	t->num = n > 8 ? hi * pow10[n - 8] + lo : hi;
	e = v + n;
	if (e == le) {
		t->numform = DAC_NUM_BARE;
		t->uid = DAC_U_NONE;
		t->unit = NULL;
	} else {
		/* " <word>" to the end: one space, a letter, no blank after */
		if (*e != ' ' || !(((e[1] | 0x20) >= 'a' && (e[1] | 0x20) <= 'z')) ||
		    e + 1 + scan(e + 1, false) != le)
			return false;
		t->numform = DAC_NUM_UNIT;
		t->unit = e + 1;
		t->uid = unit_id(e + 1, (size_t)(le - e - 1));
	}
	t->trailing_ws = false;
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

DAC_HOT
void dac__lex_start(struct dac_lex *lx, char *text, size_t len)
{
	text[len] = '\n';
	for (size_t i = 1; i < DAC_TEXT_PAD; i++)
		text[len + i] = '\0';
	lx->end = text + len;
	lx->line = 0;
	lx->is_drm = false;
}

/*
 * The line's end and the end of its key at once: both from the same 32
 * bytes at @p (nearly every key and many lines end in them); past them
 * line_end() and scan() go on. *@key: the index scan(@p, true) gives.
 */
static inline char *line_and_key(char *p, size_t *key)
{
#if defined(__SSE2__)
	/* the same loads for both (the compiler shares them) */
	unsigned int e = end_mask(p), k = key_mask(p, ':');

	/* '\n' and NUL are below 0x21: a line ending here has k too */
	*key = k ? (size_t)__builtin_ctz(k) : 32 + scan(p + 32, true);
	return e ? p + __builtin_ctz(e) : line_end(p + 32);
#else
	*key = scan(p, true);
	return line_end(p);
#endif
}

static inline char *lex_line(struct dac_lex *lx, char *p, struct dac_tok *t)
{
	size_t i;
	char *le = line_and_key(p, &i);

	lx->line++;
	if (*le == '\n') {
		if (p[i] == ':' && i && p + i < le) {
			const char *name;
			enum dac_key_type type = family(p, i, &name);

			if (!numeric(type) || !num_line(lx, t, p, p + i, le, lx->line, type, name))
				kv_line(lx, t, p, p + i, le, lx->line, false, type, name);
			return le + 1;
		}
	} else {
		le = newline(le);
	}
	plain_line(lx, t, p, le, lx->line);
	return le + 1;
}

DAC_HOT
size_t dac__lex_lines(struct dac_lex *lx, char **pp, struct dac_tok *t, struct dac_kv *kv,
		      size_t room)
{
	char *p = *pp;
	size_t n = 0;

	while (n < DAC_LEX_BATCH && p < lx->end) {
		bool is_kv;

		t[n].kv = kv;
		p = lex_line(lx, p, &t[n]);
		is_kv = t[n++].kind == DAC_TOK_KV;
		kv += is_kv;
		room -= is_kv;
		if (!room)
			break;
	}
	*pp = p;
	return n;
}
