/* SPDX-License-Identifier: MIT */
/*
 * fdinfo_priv.h - internals shared by the fdinfo*.c files of libdrmacct.
 * Not installed, not part of the API.
 *
 * The parser is three layers, each in its own file, used in this order by
 * dac__parse_text() (fdinfo.c):
 *   fdinfo_read.c   reading: a file into a text buffer the parser owns;
 *   fdinfo_lex.c    tokenising: lines, "key:value", the key's family by
 *                   longest prefix, numbers; no judgement;
 *   fdinfo_rules.c  the spec's rules: what a family means in a profile,
 *                   units, duplicates, the engine and region views, the
 *                   rules about engines, regions and the whole file; all
 *                   findings;
 * and fdinfo.c puts the result into one allocation. fdinfo_units.c has the
 * unit table, names and the allocation hooks.
 */
#ifndef DRMACCT_FDINFO_PRIV_H
#define DRMACCT_FDINFO_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fdinfo.h"

/*
 * On the functions every parse runs: the compiler puts them together
 * (.text.hot), so that after a read's system calls, which displace the
 * parser's code from the CPU's caches, it comes back in fewer lines and
 * pages than when it lies among the rest of the library (bench_parse:
 * parse from files / floor 1.30 -> 1.28).
 */
#if defined(__GNUC__)
#define DAC_HOT __attribute__((hot))
#else
#define DAC_HOT
#endif

/*
 * On a function whose loops must stay loops: the compiler may make a copy
 * loop a call of memcpy(), which after a read's system calls costs its
 * code's cache misses (fdinfo_lex.c).
 */
#if defined(__clang__)
#define DAC_NO_LIBC __attribute__((no_builtin))
#elif defined(__GNUC__)
#define DAC_NO_LIBC __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define DAC_NO_LIBC
#endif

/*
 * dac__zero() - zero @n bytes at @p (a multiple of 8) with plain stores: a
 * memset() or a structure's initialiser of a hundred bytes or more becomes
 * `rep stos` on x86-64, whose start costs more than the stores themselves.
 */
DAC_NO_LIBC static inline void dac__zero(void *p, size_t n)
{
	char *c = p;

	for (size_t i = 0; i < n; i += 8)
		__builtin_memcpy(c + i, &(uint64_t){ 0 }, 8);
}

/* Which units a numeric key accepts. */
enum dac_unit_kind {
	DAC_UNITS_NONE,		/* plain count: no unit allowed */
	DAC_UNITS_TIME,		/* "ns" */
	DAC_UNITS_MEMORY,	/* none (bytes), "KiB", "MiB" */
	DAC_UNITS_FREQ,		/* "Hz", "KHz", "MHz" */
	DAC_UNITS_ANY,		/* driver-specific / unknown keys: best effort */
};

/* How a unit string was judged for a given kind. */
enum dac_unit_verdict {
	DAC_UNIT_OK,		/* in the spec's list (or no unit where allowed) */
	DAC_UNIT_MISSING,	/* no unit where the spec names one; default used */
	DAC_UNIT_NONSTANDARD,	/* recognised but not in the spec's list: an
				 * error; *mult says what was probably meant */
	DAC_UNIT_UNEXPECTED,	/* a unit where none is allowed */
	DAC_UNIT_INVALID,	/* not understood */
	DAC_UNIT_UNKNOWN_KEEP,	/* DAC_UNITS_ANY: unknown unit, keep number */
};

/*
 * dac__unit_judge() - judge @unit (NULL = none printed) for @kind and give the
 * multiplier to base units in *@mult (1 when the number is kept as is).
 */
enum dac_unit_verdict dac__unit_judge(enum dac_unit_kind kind, const char *unit,
				      uint64_t *mult);

/* Canonical spelling of the accepted units for @kind, for messages. */
const char *dac__unit_list(enum dac_unit_kind kind);

/*
 * dac__unit_suggest() - spell @base (bytes or Hz) in the largest unit of the
 * spec's list for @kind that shows it exactly ("1 MiB", "1000 MHz"); ""
 * for kinds without such a list.
 */
void dac__unit_suggest(enum dac_unit_kind kind, uint64_t base, char *buf,
		       size_t size);

/* Allocation wrappers honouring dac_fdinfo_test_fail_alloc(). */
void *dac__malloc(size_t size);
void *dac__realloc(void *p, size_t size);
/* Is an allocation failure of dac_fdinfo_test_fail_alloc() to come? */
bool dac__fail_armed(void);

/*
 * The spare result allocation of the calling thread (fdinfo.c):
 * dac__spare_thread() makes sure it is freed when the thread ends,
 * dac__spare_free() frees it (fdinfo_units.c calls it then).
 */
void dac__spare_thread(void);
void dac__spare_free(void);

/*
 * dac__grow() - make room for at least @need elements of @elem bytes in
 * *@arr of capacity *@cap (doubling). Return 0 or -ENOMEM (incl. overflow).
 */
int dac__grow_to(void **arr, size_t *cap, size_t need, size_t elem, size_t first);

/* The common case (room left) without a call: the parser asks per line. */
static inline int dac__grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	return need <= *cap ? 0 : dac__grow_to(arr, cap, need, elem, first);
}

/*
 * dac__grow_from() - dac__grow() for an array that starts in room of the
 * parser's own (@inl, not to be freed): leaving it copies to the heap.
 */
int dac__grow_from(void **arr, size_t *cap, size_t need, size_t elem, const void *inl);

/* ---- the text --------------------------------------------------------- */

/*
 * The text the tokeniser works on is the result's copy, writable and
 * padded: @len bytes, then a '\n' it stops at, then DAC_TEXT_PAD - 1 more
 * bytes, so that it may read 32 bytes at a time from any byte of the text.
 */
#define DAC_TEXT_PAD	40

/* Texts up to this size are read straight into the result's allocation. */
#define DAC_TEXT_FIRST	4096

/*
 * dac__block_for() - an allocation a text of @len bytes can be parsed in
 * (read it to its start), *@size bytes; NULL when there is no memory.
 * dac__block_put() - give one back that no result owns.
 */
char *dac__block_for(size_t len, size_t *size);
void dac__block_put(char *block, size_t size);

/*
 * dac__parse_block() - parse the @len bytes at the start of @block (from
 * dac__block_for(n >= @len), @size bytes) into @out, which then owns the
 * block (on failure it is given back). Return 0 or -ENOMEM (@out empty).
 */
int dac__parse_block(char *block, size_t size, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out);

/*
 * dac__parse_text() - parse @src (@len bytes; not written to) into @out,
 * which then owns a copy of it. Return 0 or -ENOMEM (@out empty).
 */
int dac__parse_text(const char *src, size_t len, enum dac_profile profile,
		    struct dac_fdinfo *out);

/* ---- tokenising (fdinfo_lex.c) ------------------------------------------ */

enum dac_tok_kind {
	DAC_TOK_KV = 0,		/* a "key:value" line */
	DAC_TOK_NUL,		/* a line with a NUL byte: ignored */
	DAC_TOK_NO_COLON,	/* a drm- line without ':': ignored */
	DAC_TOK_NONE,		/* blank, or another line without ':': nothing */
};

/*
 * One line. For DAC_TOK_KV, *@kv (room the caller gave: where the line's
 * key/value stays) gets key and str (NUL-terminated in the text), line, and
 * type/name as the key's family says before any profile is applied
 * (DAC_KEY_INVALID for a bad key); the rules fill in the rest. The other
 * kinds only have @line.
 */
struct dac_tok {
	struct dac_kv *kv;
	unsigned int line;
	size_t klen;		/* strlen(kv.key) */
	const char *unit;	/* DAC_NUM_UNIT: the unit word */
	uint64_t num;		/* DAC_NUM_*: the number */
	unsigned char kind;	/* enum dac_tok_kind */
	unsigned char numform;	/* enum dac_num_form */
	unsigned char uid;	/* enum dac_unit_id: which unit word */
	bool drm;		/* the line starts with "drm-" */
	bool key_empty;		/* nothing before the ':' */
	bool key_ws;		/* whitespace in the key */
	bool trailing_ws;	/* blanks after the value were trimmed */
};

/* The unit words the tokeniser tells apart (for DAC_NUM_BARE: DAC_U_NONE). */
enum dac_unit_id {
	DAC_U_NONE = 0,
	DAC_U_NS,
	DAC_U_KIB,
	DAC_U_MIB,
	DAC_U_HZ,
	DAC_U_KHZ,
	DAC_U_MHZ,
	DAC_U_WORD,		/* a word no kind has ("jobs") */
	DAC_U_OTHER,		/* any other word (GiB, kHz, "nsec"): judged the long way */
};

/* What the value looks like, when the tokeniser could tell at once. */
enum dac_num_form {
	DAC_NUM_NONE = 0,	/* anything else (strings too): see kv.str */
	DAC_NUM_BARE,		/* "<uint>", up to 19 digits: @num */
	DAC_NUM_UNIT,		/* "<uint> <word>": @num, @unit (starts with a letter) */
};

struct dac_lex {
	char *end;		/* the text's end: its '\n' of the padding */
	unsigned int line;	/* lines so far */
	bool is_drm;		/* a line started with "drm-" */
};

/* dac__lex_start() - begin @text (@len bytes, padded: the padding is written) */
void dac__lex_start(struct dac_lex *lx, char *text, size_t len);

/* Lines dac__lex_lines() tokenises at most per call. */
#define DAC_LEX_BATCH	16

/*
 * dac__lex_lines() - the lines from *@pp (< lx->end) into @t, up to
 * DAC_LEX_BATCH of them and up to @room (>= 1) key/value lines, which get
 * the key/value slots from @kv on, in order; *@pp is then where the next
 * line starts. Returns how many lines. Keys and values are ended with NUL
 * bytes in the text. A batch and not a call per line: the call's cost
 * (saving and restoring registers) was a tenth of a line's tokenising.
 */
size_t dac__lex_lines(struct dac_lex *lx, char **pp, struct dac_tok *t, struct dac_kv *kv,
		      size_t room);

/*
 * dac__lex_uint() - the digits at @s as a number: *@v (only meaningful
 * without *@range), *@range when it does not fit in 64 bits. Returns the
 * first byte after the digits (@s when there is none).
 */
static inline const char *dac__lex_uint(const char *s, uint64_t *v, bool *range)
{
	uint64_t x = 0;
	int i;

	*range = false;
	/* up to 19 digits cannot overflow: no check per digit for them */
	for (i = 0; i < 19 && (unsigned char)(*s - '0') < 10; i++, s++)
		x = x * 10 + (uint64_t)(*s - '0');
	for (; (unsigned char)(*s - '0') < 10; s++) {
		uint64_t t;

		/* no division per digit: the overflow builtins */
		if (!*range && (__builtin_mul_overflow(x, 10, &t) ||
				__builtin_add_overflow(t, (uint64_t)(*s - '0'), &x)))
			*range = true;
	}
	*v = x;
	return s;
}

/* Whitespace as the spec means it: ' ', \t, \v, \f, \r (not \n). */
static inline bool dac__isws(char c)
{
	return c == ' ' || ((unsigned char)c - 9u <= 4u && c != '\n');
}

/* ---- the rules (fdinfo_rules.c) and their messages (fdinfo_msg.c) ------ */

/* Which message a finding has (struct dac_finding's priv_msg). */
enum dac_msg {
	DAC_MSG_NUL_BYTE = 1,
	DAC_MSG_NO_COLON,
	DAC_MSG_KEY_EMPTY,
	DAC_MSG_KEY_WHITESPACE,		/* key */
	DAC_MSG_TRAILING_WS,		/* key */
	DAC_MSG_DUPLICATE,		/* key; line: the first */
	DAC_MSG_NAME_EMPTY,		/* key */
	DAC_MSG_UNKNOWN_DRM_KEY,	/* key; n0: profile */
	DAC_MSG_DRIVER_PREFIX,		/* key, driver */
	DAC_MSG_VALUE_EMPTY,		/* key */
	DAC_MSG_VALUE_INVALID,		/* key, value */
	DAC_MSG_VALUE_RANGE,		/* key */
	DAC_MSG_VALUE_WHITESPACE,	/* key */
	DAC_MSG_UNIT_SPACING,		/* key, unit */
	DAC_MSG_UNIT_MISSING_NS,	/* key */
	DAC_MSG_UNIT_MISSING_HZ,	/* key; n0: unit kind */
	DAC_MSG_UNIT_NONSTANDARD,	/* key, unit; n0: kind, n1: base value (line 1: known) */
	DAC_MSG_UNIT_UNEXPECTED,	/* key, unit */
	DAC_MSG_UNIT_INVALID,		/* key, unit; n0: kind */
	DAC_MSG_PDEV_FORMAT,		/* value */
	DAC_MSG_CAPACITY_ZERO,		/* key */
	DAC_MSG_MAXFREQ_ZERO,		/* key */
	DAC_MSG_CAPACITY_ORPHAN,	/* engine; n0: current profile */
	DAC_MSG_CYCLES_ORPHAN_NOTE,	/* engine */
	DAC_MSG_CYCLES_ORPHAN,		/* engine */
	DAC_MSG_MAXFREQ_ORPHAN,		/* engine; n0: current profile */
	DAC_MSG_TOTAL_CYCLES_ORPHAN,	/* engine */
	DAC_MSG_MAXFREQ_AND_TOTAL,	/* engine */
	DAC_MSG_MEMORY_DEPRECATED,	/* region */
	DAC_MSG_MEMORY_MISMATCH,	/* region; n0 memory, n1 resident; line: resident's */
	DAC_MSG_MEMORY_LEGACY_DUP,	/* region; line: resident's */
	DAC_MSG_MEMORY_SUBSET,		/* region; n0 > n1; line: kinds small * 8 + big */
	DAC_MSG_DRIVER_MISSING,
	DAC_MSG_CLIENT_ID_MISSING,
};

/* A small string -> index hash map (open addressing, linear probing). */
struct dac_map_ent {
	const char *key;	/* NULL = empty slot */
	uint64_t hash;
	size_t val;
};

struct dac_map {
	struct dac_map_ent *ent;
	size_t cap;		/* 0 or a power of two */
	size_t n;
};

/*
 * Per-engine / per-region bookkeeping: the name's length and the first line
 * of each key kind, 0 = none, in the order of enum dac_key_type (engines:
 * drm-engine-, -engine-capacity-, -cycles-, -maxfreq-, -total-cycles-;
 * regions: drm-total-, -shared-, -resident-, -purgeable-, -active-,
 * -memory-).
 */
struct dac_view_aux {
	size_t nlen;
	unsigned int l[6];
};

/*
 * The engines or the regions: public elements (struct dac_engine or struct
 * dac_region, whose first member is the name) of @esz bytes with their
 * bookkeeping, found by name.
 */
struct dac_view {
	char *arr;
	struct dac_view_aux *aux;
	size_t n, cap, acap, esz;
	size_t last;		/* the one named last: asked first */
	struct dac_map map;	/* past a few names */
	void *arr_in;		/* the parser's own room */
	struct dac_view_aux *aux_in;
};

/* A key the rules compare by its text (keys without a slot of their own). */
struct dac_other {
	size_t kv;		/* index in the key/value lines */
	size_t klen;
};

/*
 * What the rules build, in room the caller gives (the result's allocation)
 * as long as it lasts, on the heap past it: the key/value lines, the
 * views and the findings.
 */
struct dac_judged {
	enum dac_profile profile;
	const char *driver, *pdev, *client_name;
	uint64_t client_id;
	bool has_client_id;
	const char *first_driver;	/* what driver-specific prefixes are judged by */
	struct dac_kv *kv;
	size_t nkv, kv_cap;
	struct dac_view eng, reg;
	struct dac_finding *find;	/* strings point into the text */
	size_t nfind, find_cap;
	void *kv_in, *find_in;		/* the caller's room */
	struct dac_map keys;	/* keys without a fixed slot, past a few */
	struct dac_other *other;
	size_t nother;
	size_t *pending;	/* driver-specific keys before any drm-driver */
	size_t npending, pending_cap;
	/* first line of drm-driver, -pdev, -client-id, -client-name; 0 none */
	unsigned int l_fixed[DAC_KEY_CLIENT_NAME + 1];
	bool have_driver_key, have_client_id_key;
	/* room of its own (not zeroed; the counts say what is used) */
	struct dac_view_aux eaux_in[16];
	struct dac_view_aux raux_in[16];
	struct dac_other other_in[16];
	size_t pending_in[8];
};

/* Room the caller gives: elements of each array before the heap is used. */
#define DAC_ROOM_VIEW	8
#define DAC_ROOM_FIND	8

/*
 * dac__judge_init() - start with the caller's room: @kv_cap key/value
 * lines at @kv, DAC_ROOM_VIEW engines at @eng and regions at @reg,
 * DAC_ROOM_FIND findings at @find. Nothing to free yet.
 */
void dac__judge_init(struct dac_judged *j, enum dac_profile profile, struct dac_kv *kv,
		     size_t kv_cap, struct dac_engine *eng, struct dac_region *reg,
		     struct dac_finding *find);
/*
 * dac__judge_text() - tokenise (@lx, started on @text) and judge every
 * line of @text by the spec's rules of @j->profile, one line at a time;
 * the key/value lines are kept in @j->kv with their types and values as
 * judged. Return 0 or -ENOMEM.
 */
int dac__judge_text(struct dac_judged *j, struct dac_lex *lx, char *text);
/* dac__judge_end() - the rules about engines, regions, the file; findings sorted */
int dac__judge_end(struct dac_judged *j);
/*
 * dac__judge_free() - what is on the heap and not kept: the lookups, and
 * with @all (a failed parse) the arrays that left the caller's room too.
 */
void dac__judge_free(struct dac_judged *j, bool all);

#endif /* DRMACCT_FDINFO_PRIV_H */
