// SPDX-License-Identifier: MIT
/*
 * fdinfo_rules.c - the spec's rules, applied to the tokens of fdinfo_lex.c.
 *
 * Per token, in file order: the line's syntax (NUL byte, no colon, key,
 * trailing whitespace), what its family means in the profile, duplicates,
 * the value and its unit, and its place in the engine and region views.
 * Then the rules about one engine, one region and the whole file; the
 * findings are sorted by line (stable, so a line's findings keep the order
 * they were made in).
 *
 * The rules and the finding codes are documented in
 * Documentation/fdinfo-validation.rst; keep both in sync.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdinfo_priv.h"

/* Finding codes: stable strings, see Documentation/fdinfo-validation.rst. */
#define C_NUL_BYTE		"nul-byte"
#define C_NO_COLON		"no-colon"
#define C_KEY_EMPTY		"key-empty"
#define C_KEY_WHITESPACE	"key-whitespace"
#define C_NAME_EMPTY		"name-empty"
#define C_DUPLICATE_KEY		"duplicate-key"
#define C_UNKNOWN_DRM_KEY	"unknown-drm-key"
#define C_DRIVER_PREFIX		"driver-prefix-mismatch"
#define C_VALUE_EMPTY		"value-empty"
#define C_VALUE_WHITESPACE	"value-whitespace"
#define C_VALUE_INVALID		"value-invalid"
#define C_VALUE_RANGE		"value-range"
#define C_UNIT_MISSING		"unit-missing"
#define C_UNIT_UNEXPECTED	"unit-unexpected"
#define C_UNIT_INVALID		"unit-invalid"
#define C_UNIT_NONSTANDARD	"unit-nonstandard"
#define C_UNIT_SPACING		"unit-spacing"
#define C_TRAILING_WS		"trailing-whitespace"
#define C_PDEV_FORMAT		"pdev-format"
#define C_CAPACITY_ZERO		"capacity-zero"
#define C_MAXFREQ_ZERO		"maxfreq-zero"
#define C_CAPACITY_ORPHAN	"capacity-orphan"
#define C_CYCLES_ORPHAN		"cycles-orphan"
#define C_MAXFREQ_ORPHAN	"maxfreq-orphan"
#define C_TOTAL_CYCLES_ORPHAN	"total-cycles-orphan"
#define C_MAXFREQ_AND_TOTAL	"maxfreq-and-total-cycles"
#define C_MEMORY_DEPRECATED	"memory-deprecated"
#define C_MEMORY_LEGACY_DUP	"memory-legacy-duplicate"
#define C_MEMORY_MISMATCH	"memory-resident-mismatch"
#define C_MEMORY_SUBSET		"memory-subset"
#define C_DRIVER_MISSING	"driver-missing"
#define C_CLIENT_ID_MISSING	"client-id-missing"

static const char *const dac_codes[] = {
	C_NUL_BYTE, C_NO_COLON, C_KEY_EMPTY, C_KEY_WHITESPACE, C_NAME_EMPTY,
	C_DUPLICATE_KEY, C_UNKNOWN_DRM_KEY, C_DRIVER_PREFIX, C_VALUE_EMPTY,
	C_VALUE_WHITESPACE, C_VALUE_INVALID, C_VALUE_RANGE, C_UNIT_MISSING,
	C_UNIT_UNEXPECTED, C_UNIT_INVALID, C_UNIT_NONSTANDARD, C_UNIT_SPACING,
	C_TRAILING_WS, C_PDEV_FORMAT, C_CAPACITY_ZERO, C_MAXFREQ_ZERO,
	C_CAPACITY_ORPHAN, C_CYCLES_ORPHAN, C_MAXFREQ_ORPHAN,
	C_TOTAL_CYCLES_ORPHAN, C_MAXFREQ_AND_TOTAL, C_MEMORY_DEPRECATED,
	C_MEMORY_LEGACY_DUP, C_MEMORY_MISMATCH, C_MEMORY_SUBSET,
	C_DRIVER_MISSING, C_CLIENT_ID_MISSING,
};

const char *const *dac_finding_codes(size_t *n)
{
	if (n)
		*n = sizeof(dac_codes) / sizeof(dac_codes[0]);
	return dac_codes;
}

/* ---- the hash map (past a few names) ------------------------------------ */

/* String hash, eight bytes a step (keys are 10-30 bytes). */
static uint64_t dac_hash_n(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n, w;

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

__attribute__((cold))
static struct dac_map_ent *dac_map_find(const struct dac_map *m, const char *key,
					uint64_t h)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = h & (m->cap - 1); m->ent[i].key; i = (i + 1) & (m->cap - 1))
		if (m->ent[i].hash == h && !strcmp(m->ent[i].key, key))
			return &m->ent[i];
	return NULL;
}

__attribute__((cold))
static int dac_map_add(struct dac_map *m, const char *key, uint64_t h, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 32, j;
		struct dac_map_ent *ne;

		if (ncap > SIZE_MAX / sizeof(*ne))
			return -ENOMEM;
		ne = dac__malloc(ncap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		memset(ne, 0, ncap * sizeof(*ne));
		for (j = 0; j < m->cap; j++) {
			if (!m->ent[j].key)
				continue;
			for (i = m->ent[j].hash & (ncap - 1); ne[i].key; i = (i + 1) & (ncap - 1))
				;
			ne[i] = m->ent[j];
		}
		free(m->ent);
		m->ent = ne;
		m->cap = ncap;
	}
	for (i = h & (m->cap - 1); m->ent[i].key; i = (i + 1) & (m->cap - 1))
		;
	m->ent[i].key = key;
	m->ent[i].hash = h;
	m->ent[i].val = val;
	m->n++;
	return 0;
}

/* ---- findings ------------------------------------------------------------ */

/*
 * A finding: its message is made later, when asked for, from @msg and the
 * parts (fdinfo_msg.c); the strings are the parser's text.
 */
DAC_HOT
static int dac_add(struct dac_judged *j, enum dac_severity sev, const char *code,
		   unsigned int line, enum dac_msg msg, const char *s0, const char *s1,
		   uint64_t n0, uint64_t n1, unsigned int l2)
{
	if (j->nfind == j->find_cap &&
	    dac__grow_from((void **)&j->find, &j->find_cap, j->nfind + 1, sizeof(*j->find),
			   j->find_in))
		return -ENOMEM;
	j->find[j->nfind++] = (struct dac_finding){
		.sev = sev, .code = code, .line = line, .priv_msg = msg, .priv_line = l2,
		.priv_str = { s0, s1 }, .priv_num = { n0, n1 },
	};
	return 0;
}

/* ADD(j, sev, code, line, msg[, s0[, s1[, n0[, n1[, line2]]]]]) */
#define ADD_(j, sev, code, line, msg, s0, s1, n0, n1, l2, ...)		\
	do {								\
		int add_err_ = dac_add(j, sev, code, line, msg, s0, s1, n0, n1, l2); \
		if (add_err_)						\
			return add_err_;				\
	} while (0)
#define ADD(...) ADD_(__VA_ARGS__, 0, 0, 0, 0, 0)

/* ---- values ---------------------------------------------------------------- */

static enum dac_unit_kind dac_units_of(enum dac_key_type t)
{
	switch (t) {
	case DAC_KEY_ENGINE:
		return DAC_UNITS_TIME;
	case DAC_KEY_MAXFREQ:
		return DAC_UNITS_FREQ;
	case DAC_KEY_MEM_TOTAL:
	case DAC_KEY_MEM_SHARED:
	case DAC_KEY_MEM_RESIDENT:
	case DAC_KEY_MEM_PURGEABLE:
	case DAC_KEY_MEM_ACTIVE:
	case DAC_KEY_MEMORY_LEGACY:
		return DAC_UNITS_MEMORY;
	case DAC_KEY_DRIVER_SPECIFIC:
	case DAC_KEY_UNKNOWN_DRM:
		return DAC_UNITS_ANY;
	default:
		return DAC_UNITS_NONE;
	}
}

/*
 * Judge "<uint>[<ws><unit>]" into kv->value (base units) and kv->unit.
 * Standard keys get findings; DAC_UNITS_ANY keys are best effort and silent.
 * Return 1 when the value is usable, 0 when not, negative on -ENOMEM.
 * dac_number() settles the forms nearly every line has and leaves the
 * rest to this.
 */
__attribute__((cold))
static int dac_number_slow(struct dac_judged *j, struct dac_kv *kv, enum dac_unit_kind kind)
{
	const bool quiet = kind == DAC_UNITS_ANY;
	const char *s = kv->str, *u;
	enum dac_unit_verdict verdict;
	uint64_t v, mult;
	bool range;

	if (!*s) {
		if (!quiet)
			ADD(j, DAC_SEV_ERROR, C_VALUE_EMPTY, kv->line, DAC_MSG_VALUE_EMPTY,
			    kv->key);
		return 0;
	}
	if ((unsigned char)(*s - '0') >= 10) {
		if (!quiet)
			ADD(j, DAC_SEV_ERROR, C_VALUE_INVALID, kv->line, DAC_MSG_VALUE_INVALID,
			    kv->key, kv->str);
		return 0;
	}
	s = dac__lex_uint(s, &v, &range);
	u = s;
	while (dac__isws(*u))
		u++;
	/* Units are words: "5.5 ns", "5 6", "5-3" are not <uint>[ unit]. */
	if (*u && !((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z'))) {
		if (!quiet)
			ADD(j, DAC_SEV_ERROR, C_VALUE_INVALID, kv->line, DAC_MSG_VALUE_INVALID,
			    kv->key, kv->str);
		return 0;
	}
	if (*u)
		kv->unit = u;
	verdict = dac__unit_judge(kind, kv->unit, &mult);
	if (kv->unit && u == s && !quiet) {
		/* "0x10", "12abc": a malformed number, not a number + unit. */
		if (verdict == DAC_UNIT_INVALID || verdict == DAC_UNIT_UNEXPECTED) {
			ADD(j, DAC_SEV_ERROR, C_VALUE_INVALID, kv->line, DAC_MSG_VALUE_INVALID,
			    kv->key, kv->str);
			return 0;
		}
		ADD(j, DAC_SEV_NOTE, C_UNIT_SPACING, kv->line, DAC_MSG_UNIT_SPACING, kv->key, u);
	}
	switch (verdict) {
	case DAC_UNIT_OK:
	case DAC_UNIT_UNKNOWN_KEEP:
		break;
	case DAC_UNIT_MISSING:
		if (kind == DAC_UNITS_TIME)
			ADD(j, DAC_SEV_WARNING, C_UNIT_MISSING, kv->line, DAC_MSG_UNIT_MISSING_NS,
			    kv->key);
		else
			ADD(j, DAC_SEV_NOTE, C_UNIT_MISSING, kv->line, DAC_MSG_UNIT_MISSING_HZ,
			    kv->key, NULL, kind);
		break;
	case DAC_UNIT_NONSTANDARD: {
		/* A reader following the spec cannot read it: an error. */
		const bool known = !range && v <= UINT64_MAX / mult;

		ADD(j, DAC_SEV_ERROR, C_UNIT_NONSTANDARD, kv->line, DAC_MSG_UNIT_NONSTANDARD,
		    kv->key, kv->unit, kind, known ? v * mult : 0, known);
		return 0;
	}
	case DAC_UNIT_UNEXPECTED:
		ADD(j, DAC_SEV_ERROR, C_UNIT_UNEXPECTED, kv->line, DAC_MSG_UNIT_UNEXPECTED, kv->key,
		    kv->unit);
		return 0;
	case DAC_UNIT_INVALID:
		ADD(j, DAC_SEV_ERROR, C_UNIT_INVALID, kv->line, DAC_MSG_UNIT_INVALID, kv->key,
		    kv->unit, kind);
		return 0;
	}
	if (!range && mult > 1 && v > UINT64_MAX / mult)
		range = true;
	if (range) {
		if (!quiet)
			ADD(j, DAC_SEV_ERROR, C_VALUE_RANGE, kv->line, DAC_MSG_VALUE_RANGE, kv->key);
		return 0;
	}
	kv->value = v * mult;
	return 1;
}

/* Base units per unit word the tokeniser tells apart. */
static const uint64_t unit_mult[] = {
	[DAC_U_NONE] = 1, [DAC_U_NS] = 1, [DAC_U_KIB] = 1024, [DAC_U_MIB] = 1024 * 1024,
	[DAC_U_HZ] = 1, [DAC_U_KHZ] = 1000, [DAC_U_MHZ] = 1000 * 1000, [DAC_U_WORD] = 1,
	[DAC_U_OTHER] = 1,
};

/* The unit words each kind takes as the spec has them (bit per enum dac_unit_id). */
#define U(x) (1u << DAC_U_##x)
static const unsigned int unit_ok[] = {
	[DAC_UNITS_NONE] = U(NONE),
	[DAC_UNITS_TIME] = U(NS),
	[DAC_UNITS_MEMORY] = U(NONE) | U(KIB) | U(MIB),
	[DAC_UNITS_FREQ] = U(HZ) | U(KHZ) | U(MHZ),
	/* best effort: known units convert, a word no kind has keeps the number */
	[DAC_UNITS_ANY] = U(NONE) | U(NS) | U(KIB) | U(MIB) | U(HZ) | U(KHZ) | U(MHZ) | U(WORD),
};
#undef U

/*
 * The forms nearly every line has, as the tokeniser found them: "<uint>"
 * where no unit is needed, "<uint> <unit>" with a unit of the spec for the
 * key's kind (or a word no kind knows, for the best-effort keys), by
 * table. Anything else: dac_number_slow().
 */
static inline int dac_number(struct dac_judged *j, const struct dac_tok *tok, struct dac_kv *kv,
			     enum dac_unit_kind kind)
{
	uint64_t v;

	if (tok->numform != DAC_NUM_NONE && ((unit_ok[kind] >> tok->uid) & 1) &&
	    !__builtin_mul_overflow(tok->num, unit_mult[tok->uid], &v)) {
		kv->value = v;
		kv->unit = tok->unit;	/* NULL without one */
		return 1;
	}
	return dac_number_slow(j, kv, kind);
}

/* Hex digits at the start of @s (strspn() builds a table per call). */
static size_t dac_hex_span(const char *s)
{
	size_t n = 0;

	while ((s[n] >= '0' && s[n] <= '9') || ((s[n] | 0x20) >= 'a' && (s[n] | 0x20) <= 'f'))
		n++;
	return n;
}

/* Is s "<hex>{4,}:<hex>{2}:<hex>{2}.<0-7>" (a PCI slot address)? */
static bool dac_pdev_ok(const char *s)
{
	size_t n = dac_hex_span(s);

	if (n < 4 || s[n] != ':')
		return false;
	s += n + 1;
	if (dac_hex_span(s) != 2 || s[2] != ':')
		return false;
	s += 3;
	if (dac_hex_span(s) != 2 || s[2] != '.')
		return false;
	s += 3;
	return s[0] >= '0' && s[0] <= '7' && !s[1];
}

DAC_HOT
static int dac_string(struct dac_judged *j, struct dac_kv *kv)
{
	if (!*kv->str) {
		ADD(j, DAC_SEV_ERROR, C_VALUE_EMPTY, kv->line, DAC_MSG_VALUE_EMPTY, kv->key);
		return 0;
	}
	/* The 2022 text forbids whitespace in values; <valstr> allows it. */
	if (j->profile == DAC_PROFILE_2022 && kv->str[strcspn(kv->str, " \t\r\v\f")]) {
		ADD(j, DAC_SEV_ERROR, C_VALUE_WHITESPACE, kv->line, DAC_MSG_VALUE_WHITESPACE,
		    kv->key);
		return 0;
	}
	return 1;
}

/* ---- the engine and region views ------------------------------------------ */

/* Up to this many names a view is searched in order, without hashing. */
#define DAC_VIEW_LINEAR 8

_Static_assert(offsetof(struct dac_engine, name) == 0 && offsetof(struct dac_region, name) == 0,
	       "a view finds an element's name at its start");

static inline const char *view_name(const struct dac_view *v, size_t i)
{
	const char *name;

	__builtin_memcpy(&name, v->arr + i * v->esz, sizeof(name));
	return name;
}

/*
 * Names of the text, eight bytes at a time: the text is padded, so loads
 * past a name's end stay inside it (fdinfo_priv.h).
 */
static inline bool same_name(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0;
	uint64_t x, y;

	if (alen != blen)
		return false;
	if (!alen)
		return true;
	for (; i + 8 < alen; i += 8) {
		__builtin_memcpy(&x, a + i, 8);
		__builtin_memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	__builtin_memcpy(&x, a + i, 8);
	__builtin_memcpy(&y, b + i, 8);
	x ^= y;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return !(x & (~0ull >> (8 * (8 - (alen - i)))));
#else
	return !(x & (~0ull << (8 * (8 - (alen - i)))));
#endif
}

/* Past DAC_VIEW_LINEAR names, the map: made once, then asked. */
__attribute__((cold))
static int view_map_find(struct dac_view *v, const char *name, size_t nlen, uint64_t *h,
			 size_t *idx)
{
	struct dac_map_ent *e;

	if (!v->map.n)
		for (size_t i = 0; i < v->n; i++)
			if (dac_map_add(&v->map, view_name(v, i),
					dac_hash_n(view_name(v, i), v->aux[i].nlen), i))
				return -ENOMEM;
	*h = dac_hash_n(name, nlen);
	e = dac_map_find(&v->map, name, *h);
	if (!e)
		return 0;
	*idx = e->val;
	return 1;
}

/*
 * The engine or region named @name (@nlen bytes) of view @v: found, or
 * appended with its first line @line. *@idx is its index. 0 or -ENOMEM
 * (nothing changed).
 */
static int view_find(struct dac_view *v, const char *name, size_t nlen, unsigned int line,
		     size_t *idx)
{
	size_t n = v->n, i;
	uint64_t h = 0;
	int err;
	char *e;

	if (v->last < n && same_name(view_name(v, v->last), v->aux[v->last].nlen, name, nlen)) {
		*idx = v->last;
		return 0;
	}
	if (n < DAC_VIEW_LINEAR) {
		/* few names (every driver seen): compare them */
		for (i = 0; i < n; i++)
			if (same_name(view_name(v, i), v->aux[i].nlen, name, nlen)) {
				*idx = v->last = i;
				return 0;
			}
	} else {
		err = view_map_find(v, name, nlen, &h, idx);
		if (err < 0)
			return err;
		if (err) {
			v->last = *idx;
			return 0;
		}
	}
	if ((n == v->cap && dac__grow_from((void **)&v->arr, &v->cap, n + 1, v->esz, v->arr_in)) ||
	    (n == v->acap &&
	     dac__grow_from((void **)&v->aux, &v->acap, n + 1, sizeof(*v->aux), v->aux_in)))
		return -ENOMEM;
	if (v->map.n && dac_map_add(&v->map, name, h, n))
		return -ENOMEM;
	e = v->arr + n * v->esz;
	if (v->esz == sizeof(struct dac_engine))
		*(struct dac_engine *)e = (struct dac_engine){ .name = name, .capacity = 1,
								.line = line };
	else
		*(struct dac_region *)e = (struct dac_region){ .name = name, .line = line };
	v->aux[n] = (struct dac_view_aux){ .nlen = nlen };
	*idx = v->last = v->n++;
	return 0;
}

/*
 * A value of key kind @k of an engine or region: the values and their
 * has_ flags are in the order of enum dac_key_type in both structures.
 */
_Static_assert(offsetof(struct dac_engine, total_cycles) - offsetof(struct dac_engine, busy_ns) ==
	       4 * sizeof(uint64_t) && offsetof(struct dac_engine, has_total_cycles) -
	       offsetof(struct dac_engine, has_busy) == 4, "engine values in key order");
_Static_assert(offsetof(struct dac_region, memory) - offsetof(struct dac_region, total) ==
	       5 * sizeof(uint64_t) && offsetof(struct dac_region, has_memory) -
	       offsetof(struct dac_region, has_total) == 5, "region values in key order");

static void view_put(struct dac_view *v, size_t idx, bool region, unsigned int k, bool ok,
		     uint64_t value)
{
	char *e = v->arr + idx * v->esz;
	size_t val = region ? offsetof(struct dac_region, total) : offsetof(struct dac_engine, busy_ns);
	size_t has = region ? offsetof(struct dac_region, has_total)
			    : offsetof(struct dac_engine, has_busy);

	__builtin_memcpy(e + val + k * sizeof(uint64_t), &value, sizeof(value));
	e[has + k] = ok;
}

/* Up to this many keys without a fixed slot are compared in order. */
#define DAC_OTHER_LINEAR 16

/*
 * Key/value line @ki (key @klen bytes) has no slot of its own
 * (driver-specific, unknown drm-, an empty name): 1 with *@first its first
 * line when it was printed before, 0 (now noted), or -ENOMEM.
 */
static int dac_seen_other(struct dac_judged *j, size_t ki, size_t klen, unsigned int *first)
{
	const char *key = j->kv[ki].key;
	struct dac_map_ent *e;
	uint64_t h;

	if (!j->keys.n) {
		for (size_t i = 0; i < j->nother; i++) {
			const struct dac_other *o = &j->other[i];

			if (same_name(j->kv[o->kv].key, o->klen, key, klen)) {
				*first = j->kv[o->kv].line;
				return 1;
			}
		}
		if (j->nother < DAC_OTHER_LINEAR) {
			j->other[j->nother++] = (struct dac_other){ .kv = ki, .klen = klen };
			return 0;
		}
		for (size_t i = 0; i < j->nother; i++) {
			const struct dac_other *o = &j->other[i];

			if (dac_map_add(&j->keys, j->kv[o->kv].key,
					dac_hash_n(j->kv[o->kv].key, o->klen), o->kv))
				return -ENOMEM;
		}
	}
	h = dac_hash_n(key, klen);
	e = dac_map_find(&j->keys, key, h);
	if (e) {
		*first = j->kv[e->val].line;
		return 1;
	}
	return dac_map_add(&j->keys, key, h, ki) ? -ENOMEM : 0;
}

/* A driver-specific key @kv is judged against @driver's name. */
DAC_HOT
static int dac_prefix(struct dac_judged *j, const struct dac_kv *kv, const char *driver)
{
	size_t plen = 0, k;

	while (kv->key[plen] != '-')
		plen++;
	for (k = 0; k < plen && driver[k] == kv->key[k]; k++)
		;
	/* amdgpu prints "amd-": a prefix of the driver name is fine. */
	if (k < plen)
		ADD(j, DAC_SEV_NOTE, C_DRIVER_PREFIX, kv->line, DAC_MSG_DRIVER_PREFIX, kv->key,
		    driver);
	return 0;
}

/* The families the 2022 text does not know. */
static bool dac_current_only(enum dac_key_type t)
{
	return t == DAC_KEY_CLIENT_NAME || t == DAC_KEY_TOTAL_CYCLES ||
	       (t >= DAC_KEY_MEM_TOTAL && t <= DAC_KEY_MEM_ACTIVE);
}

/*
 * A key of an engine or a region with a name: its place in the view, its
 * value, the view filled (first occurrence only).
 */
static int dac_view_key(struct dac_judged *j, struct dac_tok *tok, struct dac_kv *kv)
{
	const bool region = kv->type >= DAC_KEY_MEM_TOTAL;
	struct dac_view *v = region ? &j->reg : &j->eng;
	const unsigned int k = kv->type - (region ? DAC_KEY_MEM_TOTAL : DAC_KEY_ENGINE);
	unsigned int *slot;
	size_t idx;
	bool dup;
	int ok;

	if (view_find(v, kv->name, tok->klen - (size_t)(kv->name - kv->key), kv->line, &idx))
		return -ENOMEM;
	slot = &v->aux[idx].l[k];
	dup = *slot;
	if (dup)
		ADD(j, DAC_SEV_ERROR, C_DUPLICATE_KEY, kv->line, DAC_MSG_DUPLICATE, kv->key, NULL, 0,
		    0, *slot);
	else
		*slot = kv->line;
	ok = dac_number(j, tok, kv, dac_units_of(kv->type));
	if (ok < 0)
		return ok;
	if (ok && !kv->value && kv->type == DAC_KEY_ENGINE_CAPACITY) {
		ADD(j, DAC_SEV_ERROR, C_CAPACITY_ZERO, kv->line, DAC_MSG_CAPACITY_ZERO, kv->key);
		ok = 0;
	}
	if (ok && !kv->value && kv->type == DAC_KEY_MAXFREQ) {
		ADD(j, DAC_SEV_ERROR, C_MAXFREQ_ZERO, kv->line, DAC_MSG_MAXFREQ_ZERO, kv->key);
		ok = 0;
	}
	kv->has_value = ok;
	if (!dup)	/* a rejected capacity stays 1 */
		view_put(v, idx, region, k, ok, ok ? kv->value : kv->type == DAC_KEY_ENGINE_CAPACITY);
	return 0;
}

/* Key/value line @ki with a well-formed key (token @tok). */
static int dac_kv_check(struct dac_judged *j, struct dac_tok *tok, size_t ki)
{
	struct dac_kv *kv = &j->kv[ki];
	unsigned int first = 0;
	bool dup = false;
	int ok = 0, err;

	if (kv->type == DAC_KEY_OTHER)
		return 0;
	if (j->profile == DAC_PROFILE_2022 && dac_current_only(kv->type)) {
		kv->type = DAC_KEY_UNKNOWN_DRM;
		kv->name = NULL;
	}
	if (kv->name && *kv->name)
		return dac_view_key(j, tok, kv);
	if (kv->type <= DAC_KEY_CLIENT_NAME) {
		unsigned int *slot = &j->l_fixed[kv->type];

		dup = *slot;
		first = *slot;
		if (!dup)
			*slot = kv->line;
	} else {
		err = dac_seen_other(j, ki, tok->klen, &first);
		if (err < 0)
			return err;
		dup = err;
	}
	if (dup)
		ADD(j, DAC_SEV_ERROR, C_DUPLICATE_KEY, kv->line, DAC_MSG_DUPLICATE, kv->key, NULL, 0,
		    0, first);
	if (kv->name) {
		ADD(j, DAC_SEV_ERROR, C_NAME_EMPTY, kv->line, DAC_MSG_NAME_EMPTY, kv->key);
		kv->name = NULL;
		return 0;
	}

	switch (kv->type) {
	case DAC_KEY_DRIVER:
		j->have_driver_key = true;
		ok = dac_string(j, kv);
		if (ok > 0 && !dup)
			j->driver = kv->str;
		break;
	case DAC_KEY_PDEV:
		ok = dac_string(j, kv);
		if (ok > 0 && !dac_pdev_ok(kv->str))
			ADD(j, DAC_SEV_WARNING, C_PDEV_FORMAT, kv->line, DAC_MSG_PDEV_FORMAT, kv->str);
		if (ok > 0 && !dup)
			j->pdev = kv->str;
		break;
	case DAC_KEY_CLIENT_NAME:
		ok = dac_string(j, kv);
		if (ok > 0 && !dup)
			j->client_name = kv->str;
		break;
	case DAC_KEY_CLIENT_ID:
		j->have_client_id_key = true;
		ok = dac_number(j, tok, kv, DAC_UNITS_NONE);
		if (ok > 0 && !dup) {
			j->client_id = kv->value;
			j->has_client_id = true;
		}
		kv->has_value = ok > 0;
		break;
	case DAC_KEY_UNKNOWN_DRM:
		ADD(j, DAC_SEV_WARNING, C_UNKNOWN_DRM_KEY, kv->line, DAC_MSG_UNKNOWN_DRM_KEY, kv->key,
		    NULL, j->profile);
		ok = dac_number(j, tok, kv, DAC_UNITS_ANY);
		kv->has_value = ok > 0;
		break;
	default:	/* DAC_KEY_DRIVER_SPECIFIC */
		/* the first drm-driver; one printed later is looked at in the end */
		if (j->profile == DAC_PROFILE_CURRENT && j->first_driver) {
			err = dac_prefix(j, kv, j->first_driver);
			if (err)
				return err;
		} else if (j->profile == DAC_PROFILE_CURRENT) {
			if (j->npending == j->pending_cap &&
			    dac__grow_from((void **)&j->pending, &j->pending_cap, j->npending + 1,
					   sizeof(*j->pending), j->pending_in))
				return -ENOMEM;
			j->pending[j->npending++] = ki;
		}
		ok = dac_number(j, tok, kv, DAC_UNITS_ANY);
		kv->has_value = ok > 0;
		break;
	}
	return ok < 0 ? ok : 0;
}

/* Where the next key/value line goes, or NULL (-ENOMEM). */
static inline struct dac_kv *dac_judge_room(struct dac_judged *j)
{
	if (j->nkv == j->kv_cap &&
	    dac__grow_from((void **)&j->kv, &j->kv_cap, j->nkv + 1, sizeof(*j->kv), j->kv_in))
		return NULL;
	return &j->kv[j->nkv];
}

/* The rules for line @tok (a key/value line in the room dac_judge_room() gave). */
static inline int dac_judge_tok(struct dac_judged *j, struct dac_tok *tok)
{
	const struct dac_kv *kv = tok->kv;
	size_t ki;

	switch (tok->kind) {
	case DAC_TOK_NONE:
		return 0;
	case DAC_TOK_NUL:
		ADD(j, DAC_SEV_ERROR, C_NUL_BYTE, tok->line, DAC_MSG_NUL_BYTE);
		return 0;
	case DAC_TOK_NO_COLON:
		ADD(j, DAC_SEV_ERROR, C_NO_COLON, tok->line, DAC_MSG_NO_COLON);
		return 0;
	}
	ki = j->nkv++;		/* dac__judge_room() made room */
	if (tok->trailing_ws && tok->drm)
		ADD(j, DAC_SEV_NOTE, C_TRAILING_WS, kv->line, DAC_MSG_TRAILING_WS, kv->key);
	if (tok->key_empty) {
		ADD(j, DAC_SEV_ERROR, C_KEY_EMPTY, kv->line, DAC_MSG_KEY_EMPTY);
		return 0;
	}
	if (tok->key_ws) {
		ADD(j, DAC_SEV_ERROR, C_KEY_WHITESPACE, kv->line, DAC_MSG_KEY_WHITESPACE, kv->key);
		return 0;
	}
	if (!j->first_driver && kv->type == DAC_KEY_DRIVER && *kv->str)
		j->first_driver = kv->str;
	return dac_kv_check(j, tok, ki);
}

DAC_HOT
int dac__judge_text(struct dac_judged *j, struct dac_lex *lx, char *text)
{
	struct dac_tok tok[DAC_LEX_BATCH];
	int err;

	for (char *p = text; p < lx->end; ) {
		size_t n;

		if (!dac_judge_room(j))
			return -ENOMEM;
		/* the judging adds no key/value slot: the batch's stay where they are */
		n = dac__lex_lines(lx, &p, tok, &j->kv[j->nkv], j->kv_cap - j->nkv);
		for (size_t i = 0; i < n; i++) {
			err = dac_judge_tok(j, &tok[i]);
			if (err)
				return err;
		}
	}
	return 0;
}

/* ---- rules about an engine, a region, the file ---------------------------- */

static int dac_engine_rules(struct dac_judged *j, size_t i)
{
	const bool cur = j->profile == DAC_PROFILE_CURRENT;
	const unsigned int *l = j->eng.aux[i].l;
	const unsigned int l_engine = l[0], l_capacity = l[1], l_cycles = l[2];
	const unsigned int l_maxfreq = l[3], l_total = l[4];
	const char *n = view_name(&j->eng, i);
	/* Upstream today also lets drm-cycles-<e> introduce an engine (xe). */
	const bool declared = l_engine || (cur && l_cycles);

	if (!l_capacity && !l_maxfreq && !l_total && l_engine)
		return 0;	/* the common case: nothing to say */
	if (l_capacity && !declared)
		ADD(j, DAC_SEV_ERROR, C_CAPACITY_ORPHAN, l_capacity, DAC_MSG_CAPACITY_ORPHAN, n, NULL,
		    cur);
	if (l_cycles && !l_engine) {
		if (cur)
			ADD(j, DAC_SEV_NOTE, C_CYCLES_ORPHAN, l_cycles, DAC_MSG_CYCLES_ORPHAN_NOTE, n);
		else
			ADD(j, DAC_SEV_ERROR, C_CYCLES_ORPHAN, l_cycles, DAC_MSG_CYCLES_ORPHAN, n);
	}
	if (l_maxfreq && !declared)
		ADD(j, DAC_SEV_ERROR, C_MAXFREQ_ORPHAN, l_maxfreq, DAC_MSG_MAXFREQ_ORPHAN, n, NULL,
		    cur);
	if (l_total && !l_cycles)
		ADD(j, DAC_SEV_ERROR, C_TOTAL_CYCLES_ORPHAN, l_total, DAC_MSG_TOTAL_CYCLES_ORPHAN, n);
	if (l_total && l_maxfreq)
		ADD(j, DAC_SEV_ERROR, C_MAXFREQ_AND_TOTAL, l_total > l_maxfreq ? l_total : l_maxfreq,
		    DAC_MSG_MAXFREQ_AND_TOTAL, n);
	return 0;
}

/* The memory categories of a region as fdinfo_msg.c names them. */
enum { MEM_TOTAL, MEM_SHARED, MEM_RESIDENT, MEM_PURGEABLE, MEM_ACTIVE };

static int dac_subset(struct dac_judged *j, const char *region, bool has_small,
		      uint64_t small, unsigned int skind, unsigned int sline,
		      bool has_big, uint64_t big, unsigned int bkind)
{
	if (has_small && has_big && small > big)
		ADD(j, DAC_SEV_WARNING, C_MEMORY_SUBSET, sline, DAC_MSG_MEMORY_SUBSET, region, NULL,
		    small, big, skind * 8 + bkind);
	return 0;
}

static int dac_region_rules(struct dac_judged *j, size_t i)
{
	struct dac_region *r = (struct dac_region *)j->reg.arr + i;
	const unsigned int *l = j->reg.aux[i].l;
	const unsigned int l_shared = l[1], l_resident = l[2], l_purgeable = l[3];
	const unsigned int l_active = l[4], l_memory = l[5];
	int err;

	if (j->profile == DAC_PROFILE_CURRENT && l_memory) {
		if (!l_resident)
			ADD(j, DAC_SEV_NOTE, C_MEMORY_DEPRECATED, l_memory, DAC_MSG_MEMORY_DEPRECATED,
			    r->name);
		else if (r->has_memory && r->has_resident && r->memory != r->resident)
			ADD(j, DAC_SEV_WARNING, C_MEMORY_MISMATCH, l_memory, DAC_MSG_MEMORY_MISMATCH,
			    r->name, NULL, r->memory, r->resident, l_resident);
		else
			/* Allowed by the spec (amdgpu prints both): a note. */
			ADD(j, DAC_SEV_NOTE, C_MEMORY_LEGACY_DUP, l_memory, DAC_MSG_MEMORY_LEGACY_DUP,
			    r->name, NULL, 0, 0, l_resident);
	}
	/* The deprecated key is the resident figure when nothing else is. */
	if (r->has_memory && !l_resident) {
		r->resident = r->memory;
		r->has_resident = true;
		r->resident_from_legacy = true;
	}
	if (j->profile != DAC_PROFILE_CURRENT)
		return 0;
	err = dac_subset(j, r->name, r->has_shared, r->shared, MEM_SHARED,
			 l_shared, r->has_total, r->total, MEM_TOTAL);
	if (!err)
		err = dac_subset(j, r->name, r->has_resident && l_resident,
				 r->resident, MEM_RESIDENT, l_resident,
				 r->has_total, r->total, MEM_TOTAL);
	if (!err)
		err = dac_subset(j, r->name, r->has_purgeable, r->purgeable,
				 MEM_PURGEABLE, l_purgeable, r->has_resident,
				 r->resident, MEM_RESIDENT);
	if (!err)
		err = dac_subset(j, r->name, r->has_active, r->active, MEM_ACTIVE,
				 l_active, r->has_resident, r->resident, MEM_RESIDENT);
	return err;
}

/* Stable sort of the findings by line; usually they are in order already. */
static int dac_sort_findings(struct dac_judged *j)
{
	struct dac_finding *a = j->find, *b, *t;
	size_t n = j->nfind, w, lo, i;

	for (i = 1; i < n && a[i - 1].line <= a[i].line; i++)
		;
	if (i >= n)
		return 0;
	if (n <= 32) {
		/* a few (the region rules' findings of amdgpu): insertion */
		for (; i < n; i++) {
			struct dac_finding f = a[i];
			size_t k = i;

			for (; k && a[k - 1].line > f.line; k--)
				a[k] = a[k - 1];
			a[k] = f;
		}
		return 0;
	}
	b = dac__malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (w = 1; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n;
			size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t x = lo, y = mid, k = lo;

			while (x < mid && y < hi)
				b[k++] = a[y].line < a[x].line ? a[y++] : a[x++];
			while (x < mid)
				b[k++] = a[x++];
			while (y < hi)
				b[k++] = a[y++];
		}
		t = a;
		a = b;
		b = t;
	}
	if (a != j->find) {
		memcpy(j->find, a, n * sizeof(*a));
		b = a;
	}
	if (b != j->find)
		free(b);
	return 0;
}

/* An empty view in room of the parser's own (field by field: see dac__zero()). */
static inline void view_init(struct dac_view *v, void *arr, struct dac_view_aux *aux, size_t esz,
			     size_t acap)
{
	v->arr = arr;
	v->arr_in = arr;
	v->aux = aux;
	v->aux_in = aux;
	v->n = 0;
	v->cap = DAC_ROOM_VIEW;
	v->acap = acap;
	v->esz = esz;
	v->last = SIZE_MAX;
	v->map.ent = NULL;
	v->map.cap = 0;
	v->map.n = 0;
}

DAC_HOT
void dac__judge_init(struct dac_judged *j, enum dac_profile profile, struct dac_kv *kv,
		     size_t kv_cap, struct dac_engine *eng, struct dac_region *reg,
		     struct dac_finding *find)
{
	/* field by field: see dac__zero() */
	j->profile = profile;
	j->driver = j->pdev = j->client_name = j->first_driver = NULL;
	j->client_id = 0;
	j->has_client_id = j->have_driver_key = j->have_client_id_key = false;
	j->kv = j->kv_in = kv;
	j->nkv = 0;
	j->kv_cap = kv_cap;
	view_init(&j->eng, eng, j->eaux_in, sizeof(struct dac_engine),
		  sizeof(j->eaux_in) / sizeof(j->eaux_in[0]));
	view_init(&j->reg, reg, j->raux_in, sizeof(struct dac_region),
		  sizeof(j->raux_in) / sizeof(j->raux_in[0]));
	j->find = j->find_in = find;
	j->nfind = 0;
	j->find_cap = DAC_ROOM_FIND;
	j->keys.ent = NULL;
	j->keys.cap = 0;
	j->keys.n = 0;
	j->other = j->other_in;
	j->nother = 0;
	j->pending = j->pending_in;
	j->npending = 0;
	for (size_t i = 0; i < sizeof(j->l_fixed) / sizeof(j->l_fixed[0]); i++)
		j->l_fixed[i] = 0;
	j->pending_cap = sizeof(j->pending_in) / sizeof(j->pending_in[0]);
}

/* What the rules put on the heap: only texts past the room they were given. */
__attribute__((cold))
static void dac_judge_free_heap(struct dac_judged *j, bool all)
{
	if (all && j->kv != j->kv_in)
		free(j->kv);
	if (all && j->eng.arr != j->eng.arr_in)
		free(j->eng.arr);
	if (all && j->reg.arr != j->reg.arr_in)
		free(j->reg.arr);
	if (all && j->find != j->find_in)
		free(j->find);
	if (j->eng.aux != j->eng.aux_in)
		free(j->eng.aux);
	if (j->reg.aux != j->reg.aux_in)
		free(j->reg.aux);
	free(j->eng.map.ent);
	free(j->reg.map.ent);
	free(j->keys.ent);
	if (j->pending != j->pending_in)
		free(j->pending);
}

DAC_HOT
void dac__judge_free(struct dac_judged *j, bool all)
{
	if ((all && (j->kv != j->kv_in || j->eng.arr != j->eng.arr_in ||
		     j->reg.arr != j->reg.arr_in || j->find != j->find_in)) ||
	    j->eng.aux != j->eng.aux_in || j->reg.aux != j->reg.aux_in || j->eng.map.ent ||
	    j->reg.map.ent || j->keys.ent || j->pending != j->pending_in)
		dac_judge_free_heap(j, all);
}

DAC_HOT
int dac__judge_end(struct dac_judged *j)
{
	size_t i;
	int err;

	/* driver-specific keys printed before the first drm-driver */
	for (i = 0; i < j->npending && j->first_driver; i++) {
		err = dac_prefix(j, &j->kv[j->pending[i]], j->first_driver);
		if (err)
			return err;
	}
	for (i = 0; i < j->eng.n; i++) {
		err = dac_engine_rules(j, i);
		if (err)
			return err;
	}
	for (i = 0; i < j->reg.n; i++) {
		err = dac_region_rules(j, i);
		if (err)
			return err;
	}
	if (!j->have_driver_key)
		ADD(j, DAC_SEV_ERROR, C_DRIVER_MISSING, 0, DAC_MSG_DRIVER_MISSING);
	if (!j->have_client_id_key)
		ADD(j, DAC_SEV_NOTE, C_CLIENT_ID_MISSING, 0, DAC_MSG_CLIENT_ID_MISSING);
	return dac_sort_findings(j);
}
