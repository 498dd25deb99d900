// SPDX-License-Identifier: MIT
/*
 * fdinfo.c - DRM client usage stats (fdinfo) parser and validator.
 *
 * The text is parsed in three steps:
 *  1. split into lines; each "key:value" line becomes a struct dac_kv whose
 *     strings point into our own copy of the text (NUL-terminated in place);
 *  2. every key is classified (longest prefix first), its value checked and
 *     converted to base units, and the engine/region views are filled;
 *  3. checks that need the whole file (orphan keys, legacy memory keys,
 *     memory subset rules, mandatory keys) run, and findings are sorted.
 *
 * The rules and the finding codes are documented in
 * Documentation/fdinfo-validation.rst; keep both in sync.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Profiles a key prefix is defined in. */
#define P_2022		(1u << DAC_PROFILE_2022)
#define P_CURRENT	(1u << DAC_PROFILE_CURRENT)
#define P_ALL		(P_2022 | P_CURRENT)

/*
 * Standard keys. @named entries are prefixes followed by an engine or region
 * name; the others must match exactly. Matching picks the longest match.
 */
static const struct dac_keydef {
	const char *prefix;
	size_t len;
	enum dac_key_type type;
	bool named;
	unsigned int profiles;
} dac_keydefs[] = {
#define KD(s, t, n, p) { s, sizeof(s) - 1, t, n, p }
	KD("drm-driver", DAC_KEY_DRIVER, false, P_ALL),
	KD("drm-pdev", DAC_KEY_PDEV, false, P_ALL),
	KD("drm-client-id", DAC_KEY_CLIENT_ID, false, P_ALL),
	KD("drm-client-name", DAC_KEY_CLIENT_NAME, false, P_CURRENT),
	KD("drm-engine-", DAC_KEY_ENGINE, true, P_ALL),
	KD("drm-engine-capacity-", DAC_KEY_ENGINE_CAPACITY, true, P_ALL),
	KD("drm-cycles-", DAC_KEY_CYCLES, true, P_ALL),
	KD("drm-maxfreq-", DAC_KEY_MAXFREQ, true, P_ALL),
	KD("drm-total-cycles-", DAC_KEY_TOTAL_CYCLES, true, P_CURRENT),
	KD("drm-total-", DAC_KEY_MEM_TOTAL, true, P_CURRENT),
	KD("drm-shared-", DAC_KEY_MEM_SHARED, true, P_CURRENT),
	KD("drm-resident-", DAC_KEY_MEM_RESIDENT, true, P_CURRENT),
	KD("drm-purgeable-", DAC_KEY_MEM_PURGEABLE, true, P_CURRENT),
	KD("drm-active-", DAC_KEY_MEM_ACTIVE, true, P_CURRENT),
	KD("drm-memory-", DAC_KEY_MEMORY_LEGACY, true, P_ALL),
#undef KD
};

/* Per-engine / per-region bookkeeping: first line of each key, 0 = none. */
struct dac_eng_aux {
	unsigned int l_engine, l_capacity, l_cycles, l_maxfreq, l_total;
};

struct dac_reg_aux {
	unsigned int l_total, l_shared, l_resident, l_purgeable, l_active;
	unsigned int l_memory;
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
	struct dac_map_ent *inl;	/* room of the parser's own, or NULL */
	size_t inl_cap;			/* its entries, a power of two */
};

struct dac_parser {
	struct dac_fdinfo *fi;
	size_t kv_cap, find_cap, eng_cap, reg_cap, eaux_cap, raux_cap;
	struct dac_eng_aux *eaux;
	struct dac_reg_aux *raux;
	struct dac_kaux {
		size_t klen;	/* strlen(key) */
		bool bad;	/* key malformed (already reported) */
	} *kaux;		/* per kv */
	size_t bad_cap;
	struct dac_map keys, engines, regions;
	bool have_driver_key, have_client_id_key;
	/* first line of drm-driver, -pdev, -client-id, -client-name; 0 none */
	unsigned int l_fixed[DAC_KEY_CLIENT_NAME + 1];
	/*
	 * Room for what texts in the wild need, so that a parse allocates
	 * none of its own scratch: larger texts move to the heap (and these
	 * are not zeroed up front: dac__parse_owned() clears the fields above).
	 */
	struct dac_kaux kaux_in[64];
	struct dac_eng_aux eaux_in[16];
	struct dac_reg_aux raux_in[8];
	struct dac_map_ent keys_in[128], engines_in[32], regions_in[16];
};

/*
 * dac__grow() for an array that starts in the parser's own room @inl:
 * leaving it copies to the heap; later growth reallocates as usual.
 */
static int dac_grow_in(void **arr, size_t *cap, size_t need, size_t elem, const void *inl)
{
	void *old = *arr;
	size_t ocap = *cap;

	if (need <= *cap)
		return 0;
	if (old != inl)
		return dac__grow_to(arr, cap, need, elem, 8);
	*arr = NULL;
	*cap = 0;
	if (dac__grow_to(arr, cap, need > 2 * ocap ? need : 2 * ocap, elem, 8)) {
		*arr = old;
		*cap = ocap;
		return -ENOMEM;
	}
	memcpy(*arr, old, ocap * elem);
	return 0;
}

/* String hash, eight bytes a step (keys are 10-30 bytes: this is hot). */
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

static uint64_t dac_hash(const char *s)
{
	return dac_hash_n(s, strlen(s));
}

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

static int dac_map_add(struct dac_map *m, const char *key, uint64_t h, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 16, j;
		struct dac_map_ent *ne;

		if (ncap > SIZE_MAX / sizeof(*ne))
			return -ENOMEM;
		if (!m->cap && m->inl && m->inl_cap >= ncap) {
			ne = m->inl;
		} else {
			ne = dac__malloc(ncap * sizeof(*ne));
		}
		if (!ne)
			return -ENOMEM;
		memset(ne, 0, ncap * sizeof(*ne));
		for (j = 0; j < m->cap; j++) {
			if (!m->ent[j].key)
				continue;
			for (i = m->ent[j].hash & (ncap - 1); ne[i].key;
			     i = (i + 1) & (ncap - 1))
				;
			ne[i] = m->ent[j];
		}
		if (m->ent != m->inl)
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

static void dac_map_free(struct dac_map *m)
{
	if (m->ent != m->inl)
		free(m->ent);
	memset(m, 0, sizeof(*m));
}

/* Whitespace as the spec means it: ' ', \t, \v, \f, \r (not \n). */
static bool dac_isws(char c)
{
	return c == ' ' || ((unsigned char)c - 9u <= 4u && c != '\n');
}

/*
 * Whitespace in the key [s, s + n)? Eight bytes a step: a word has a byte
 * below 0x21 (every whitespace byte is) when (w - 0x21..21) & ~w & 0x80..80
 * is not 0; only then are its bytes looked at one by one. This runs for
 * every line, where strcspn() cost a call and a table per key.
 */
static bool dac_key_has_ws(const char *s, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	size_t i = 0;
	uint64_t w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if ((w - ones * 0x21) & ~w & high)
			goto bytes;
	}
	w = ones * 'A';		/* the tail, padded with a byte that is no whitespace */
	memcpy(&w, s + i, n - i);
	if (!((w - ones * 0x21) & ~w & high))
		return false;
bytes:
	for (i = 0; i < n; i++)
		if (dac_isws(s[i]))
			return true;
	return false;
}

static bool dac_has_ws(const char *s)
{
	return s[strcspn(s, " \t\r\v\f")] != '\0';
}

/* Does @s start with "drm-"? Without calls: it runs for every line. */
static bool dac_is_drm(const char *s)
{
	return s[0] == 'd' && s[1] == 'r' && s[2] == 'm' && s[3] == '-';
}

/* Length-limited key for messages, so a 1 MiB key makes no 1 MiB message. */
#define KEYMAX 64
#define NFMT "%.*s%s"
#define KFMT "'" NFMT "'"
#define KARG(k) (int)(strlen(k) > KEYMAX ? KEYMAX : strlen(k)), (k), \
		(strlen(k) > KEYMAX ? "..." : "")

/* Append @n bytes of @s at @o of @buf (@size bytes), keeping room for the NUL. */
static size_t dac_put(char *buf, size_t size, size_t o, const char *s, size_t n)
{
	if (o < size - 1)
		memcpy(buf + o, s, n < size - 1 - o ? n : size - 1 - o);
	return o + n;
}

/*
 * The findings' messages: a vsnprintf() for the conversions they use
 * (%s, %.*s, %u, %llu, %%) at a fraction of its cost, since a finding is
 * made for every line of some drivers' fdinfo at every sample. Writes at
 * most @size bytes (@size > 0) with the NUL; returns the full length as
 * vsnprintf() does, or -1 at any other conversion (the caller then uses
 * vsnprintf(), so a new message format cannot come out wrong).
 */
static int dac_format(char *buf, size_t size, const char *fmt, va_list ap)
{
	char num[24];
	size_t o = 0;

	for (const char *f = fmt; *f; ) {
		const char *pct = strchrnul(f, '%');
		unsigned long long u;
		const char *str;
		size_t n;
		int prec;

		o = dac_put(buf, size, o, f, (size_t)(pct - f));
		if (!*pct)
			break;
		f = pct + 2;
		switch (pct[1]) {
		case '%':
			o = dac_put(buf, size, o, "%", 1);
			continue;
		case 's':
			str = va_arg(ap, const char *);
			if (!str)
				return -1;
			o = dac_put(buf, size, o, str, strlen(str));
			continue;
		case 'u':
			u = va_arg(ap, unsigned int);
			break;
		case 'l':
			if (pct[2] != 'l' || pct[3] != 'u')
				return -1;
			u = va_arg(ap, unsigned long long);
			f = pct + 4;
			break;
		case '.':
			if (pct[2] != '*' || pct[3] != 's')
				return -1;
			prec = va_arg(ap, int);
			str = va_arg(ap, const char *);
			if (!str)
				return -1;
			n = prec < 0 ? strlen(str) : strnlen(str, (size_t)prec);
			o = dac_put(buf, size, o, str, n);
			f = pct + 4;
			continue;
		default:
			return -1;
		}
		n = sizeof(num);
		do {
			num[--n] = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		o = dac_put(buf, size, o, num + n, sizeof(num) - n);
	}
	if (o > INT_MAX)
		return -1;
	buf[o < size ? o : size - 1] = '\0';
	return (int)o;
}

__attribute__((format(printf, 5, 6)))
static int dac_add(struct dac_parser *p, enum dac_severity sev, const char *code,
		   unsigned int line, const char *fmt, ...)
{
	struct dac_fdinfo *fi = p->fi;
	struct dac_finding *f;
	char small[256], *msg;
	va_list ap;
	int n;

	/*
	 * Format once; only a message longer than @small, or with a conversion
	 * dac_format() does not do, is formatted (again) by vsnprintf().
	 */
	va_start(ap, fmt);
	n = dac_format(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		va_start(ap, fmt);
		n = vsnprintf(small, sizeof(small), fmt, ap);
		va_end(ap);
	}
	if (n < 0)
		return -ENOMEM;
	if (dac__grow((void **)&fi->find, &p->find_cap, fi->nfind + 1,
		      sizeof(*fi->find), 16))
		return -ENOMEM;
	msg = dac__malloc((size_t)n + 1);
	if (!msg)
		return -ENOMEM;
	if ((size_t)n < sizeof(small)) {
		memcpy(msg, small, (size_t)n + 1);
	} else {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	f = &fi->find[fi->nfind++];
	f->sev = sev;
	f->code = code;
	f->line = line;
	f->msg = msg;
	return 0;
}

#define ADD(p, sev, code, line, ...)					\
	do {								\
		int add_err_ = dac_add(p, sev, code, line, __VA_ARGS__); \
		if (add_err_)						\
			return add_err_;				\
	} while (0)

/*
 * Step 1: one line [s, s + ll); s[ll] is writable ('\n' or spare byte).
 * @nul: the text has a NUL byte somewhere, so look for one in this line
 * (one memchr() over the whole text saves one per line otherwise).
 */
static int dac_line(struct dac_parser *p, char *s, size_t ll, unsigned int line,
		    bool nul)
{
	struct dac_fdinfo *fi = p->fi;
	char *colon, *v, *end, *le = s + ll;
	bool bad, key_ws = false;
	struct dac_kv *kv;
	size_t i;

	if (nul && memchr(s, '\0', ll)) {
		if (ll >= 4 && !memcmp(s, "drm-", 4))
			fi->is_drm = true;
		ADD(p, DAC_SEV_ERROR, C_NUL_BYTE, line,
		    "line contains a NUL byte; line ignored");
		return 0;
	}
	for (i = 0; i < ll && dac_isws(s[i]); i++)
		;
	if (i == ll)
		return 0;	/* blank line: nothing to say */
	colon = memchr(s, ':', ll);
	if (!colon) {
		if (ll >= 4 && !memcmp(s, "drm-", 4)) {
			fi->is_drm = true;
			ADD(p, DAC_SEV_ERROR, C_NO_COLON, line,
			    "drm- line without ':' between key and value; line ignored");
		}
		return 0;	/* not a key/value line: not ours to judge */
	}
	key_ws = dac_key_has_ws(s, (size_t)(colon - s));
	*colon = '\0';
	end = le;
	for (v = colon + 1; v < end && dac_isws(*v); v++)
		;
	while (end > v && dac_isws(end[-1]))
		end--;
	bad = end != le;	/* trailing whitespace trimmed */
	*end = '\0';

	if (dac__grow((void **)&fi->kv, &p->kv_cap, fi->nkv + 1, sizeof(*kv), 32))
		return -ENOMEM;
	if (dac_grow_in((void **)&p->kaux, &p->bad_cap, fi->nkv + 1,
			sizeof(*p->kaux), p->kaux_in))
		return -ENOMEM;
	kv = &fi->kv[fi->nkv];
	memset(kv, 0, sizeof(*kv));
	kv->type = DAC_KEY_INVALID;
	kv->key = s;
	kv->str = v;
	kv->line = line;
	p->kaux[fi->nkv].bad = false;
	p->kaux[fi->nkv].klen = (size_t)(colon - s);
	fi->nkv++;

	if (dac_is_drm(s))
		fi->is_drm = true;
	if (bad && dac_is_drm(s))
		ADD(p, DAC_SEV_NOTE, C_TRAILING_WS, line,
		    KFMT ": trailing whitespace after the value", KARG(s));
	if (!*s) {
		p->kaux[fi->nkv - 1].bad = true;
		ADD(p, DAC_SEV_ERROR, C_KEY_EMPTY, line, "empty key before ':'");
	} else if (key_ws) {
		p->kaux[fi->nkv - 1].bad = true;
		ADD(p, DAC_SEV_ERROR, C_KEY_WHITESPACE, line,
		    "key " KFMT " contains whitespace (keys must not); line ignored",
		    KARG(s));
	}
	return 0;
}

/*
 * dac_keydefs by the character after "drm-": index + 1 of each definition
 * starting with it, 0-terminated (dac_classify() runs for every key).
 */
static const unsigned char dac_keydefs_by[26][4] = {
	['a' - 'a'] = { 14 },		/* active- */
	['c' - 'a'] = { 3, 4, 7 },	/* client-id, client-name, cycles- */
	['d' - 'a'] = { 1 },		/* driver */
	['e' - 'a'] = { 5, 6 },		/* engine-, engine-capacity- */
	['m' - 'a'] = { 8, 15 },	/* maxfreq-, memory- */
	['p' - 'a'] = { 2, 13 },	/* pdev, purgeable- */
	['r' - 'a'] = { 12 },		/* resident- */
	['s' - 'a'] = { 11 },		/* shared- */
	['t' - 'a'] = { 9, 10 },	/* total-cycles-, total- */
};

static enum dac_key_type dac_classify(enum dac_profile profile, const char *key,
				      size_t klen, const char **name)
{
	const struct dac_keydef *best = NULL;

	*name = NULL;
	if (!dac_is_drm(key))
		return strchr(key, '-') ? DAC_KEY_DRIVER_SPECIFIC : DAC_KEY_OTHER;
	if (key[4] < 'a' || key[4] > 'z')
		return DAC_KEY_UNKNOWN_DRM;
	/* Only the definitions whose character after "drm-" matches. */
	for (const unsigned char *c = dac_keydefs_by[key[4] - 'a']; *c; c++) {
		const struct dac_keydef *d = &dac_keydefs[*c - 1];

		if (!(d->profiles & (1u << profile)))
			continue;
		/* klen is strlen(key): memcmp stays inside the key. */
		if (d->named ? klen < d->len : klen != d->len)
			continue;
		if (memcmp(key, d->prefix, d->len))
			continue;
		if (!best || d->len > best->len)
			best = d;
	}
	if (!best)
		return DAC_KEY_UNKNOWN_DRM;
	if (best->named)
		*name = key + best->len;
	return best->type;
}

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
 * Parse "<uint>[<ws><unit>]" into kv->value (base units) and kv->unit.
 * Standard keys get findings; DAC_UNITS_ANY keys are best effort and silent.
 * Return 1 when the value is usable, 0 when not, negative on -ENOMEM.
 */
static int dac_number(struct dac_parser *p, struct dac_kv *kv,
		      enum dac_unit_kind kind)
{
	const bool quiet = kind == DAC_UNITS_ANY;
	const char *s = kv->str, *u;
	enum dac_unit_verdict verdict;
	uint64_t v = 0, mult;
	bool range = false;

	if (!*s) {
		if (!quiet)
			ADD(p, DAC_SEV_ERROR, C_VALUE_EMPTY, kv->line,
			    KFMT ": empty value", KARG(kv->key));
		return 0;
	}
	if (*s < '0' || *s > '9') {
		if (!quiet)
			ADD(p, DAC_SEV_ERROR, C_VALUE_INVALID, kv->line,
			    KFMT ": value " KFMT " is not an unsigned integer",
			    KARG(kv->key), KARG(s));
		return 0;
	}
	/* up to 19 digits cannot overflow: no check per digit for them */
	for (int i = 0; i < 19 && *s >= '0' && *s <= '9'; i++, s++)
		v = v * 10 + (uint64_t)(*s - '0');
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t t;

		/* no division per digit: the overflow builtins */
		if (!range && (__builtin_mul_overflow(v, 10, &t) ||
			       __builtin_add_overflow(t, (uint64_t)(*s - '0'), &v)))
			range = true;
	}
	/* The forms nearly every line has, settled without the unit table. */
	if (!range && !*s && kind != DAC_UNITS_TIME && kind != DAC_UNITS_FREQ) {
		kv->value = v;		/* bytes, an id, a count: no unit */
		return 1;
	}
	if (!range && kind == DAC_UNITS_TIME && s[0] == ' ' && s[1] == 'n' && s[2] == 's' &&
	    !s[3]) {
		kv->unit = s + 1;	/* "<uint> ns" */
		kv->value = v;
		return 1;
	}
	if (!range && kind == DAC_UNITS_MEMORY && s[0] == ' ' && (s[1] == 'K' || s[1] == 'M') &&
	    s[2] == 'i' && s[3] == 'B' && !s[4]) {
		unsigned int shift = s[1] == 'K' ? 10 : 20;	/* "<uint> KiB|MiB" */

		if (v <= UINT64_MAX >> shift) {
			kv->unit = s + 1;
			kv->value = v << shift;
			return 1;
		}
	}
	u = s;
	while (dac_isws(*u))
		u++;
	/* Units are words: "5.5 ns", "5 6", "5-3" are not <uint>[ unit]. */
	if (*u && !((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z'))) {
		if (!quiet)
			ADD(p, DAC_SEV_ERROR, C_VALUE_INVALID, kv->line,
			    KFMT ": value " KFMT " is not an unsigned integer",
			    KARG(kv->key), KARG(kv->str));
		return 0;
	}
	if (*u)
		kv->unit = u;
	verdict = dac__unit_judge(kind, kv->unit, &mult);
	if (kv->unit && u == s && !quiet) {
		/* "0x10", "12abc": a malformed number, not a number + unit. */
		if (verdict == DAC_UNIT_INVALID || verdict == DAC_UNIT_UNEXPECTED) {
			ADD(p, DAC_SEV_ERROR, C_VALUE_INVALID, kv->line,
			    KFMT ": value " KFMT " is not an unsigned integer",
			    KARG(kv->key), KARG(kv->str));
			return 0;
		}
		ADD(p, DAC_SEV_NOTE, C_UNIT_SPACING, kv->line,
		    KFMT ": no space between number and unit " KFMT,
		    KARG(kv->key), KARG(u));
	}
	switch (verdict) {
	case DAC_UNIT_OK:
	case DAC_UNIT_UNKNOWN_KEEP:
		break;
	case DAC_UNIT_MISSING:
		if (kind == DAC_UNITS_TIME)
			ADD(p, DAC_SEV_WARNING, C_UNIT_MISSING, kv->line,
			    KFMT ": no unit, the spec requires 'ns'; ns assumed",
			    KARG(kv->key));
		else
			ADD(p, DAC_SEV_NOTE, C_UNIT_MISSING, kv->line,
			    KFMT ": no unit (%s); Hz assumed", KARG(kv->key),
			    dac__unit_list(kind));
		break;
	case DAC_UNIT_NONSTANDARD: {
		/* A reader following the spec cannot read it: an error. */
		char meant[64] = "";

		if (!range && v <= UINT64_MAX / mult)
			dac__unit_suggest(kind, v * mult, meant, sizeof(meant));
		ADD(p, DAC_SEV_ERROR, C_UNIT_NONSTANDARD, kv->line,
		    KFMT ": unit " KFMT " is not in the spec (%s); value not used%s%s%s",
		    KARG(kv->key), KARG(kv->unit), dac__unit_list(kind),
		    *meant ? " (probably meant '" : "", meant, *meant ? "')" : "");
		return 0;
	}
	case DAC_UNIT_UNEXPECTED:
		ADD(p, DAC_SEV_ERROR, C_UNIT_UNEXPECTED, kv->line,
		    KFMT ": takes no unit, found " KFMT, KARG(kv->key),
		    KARG(kv->unit));
		return 0;
	case DAC_UNIT_INVALID:
		ADD(p, DAC_SEV_ERROR, C_UNIT_INVALID, kv->line,
		    KFMT ": unit " KFMT " not allowed here (%s)", KARG(kv->key),
		    KARG(kv->unit), dac__unit_list(kind));
		return 0;
	}
	if (!range && mult > 1 && v > UINT64_MAX / mult)
		range = true;
	if (range) {
		if (!quiet)
			ADD(p, DAC_SEV_ERROR, C_VALUE_RANGE, kv->line,
			    KFMT ": value does not fit in 64 bits (in base units)",
			    KARG(kv->key));
		return 0;
	}
	kv->value = v * mult;
	return 1;
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

static int dac_string(struct dac_parser *p, struct dac_kv *kv)
{
	if (!*kv->str) {
		ADD(p, DAC_SEV_ERROR, C_VALUE_EMPTY, kv->line,
		    KFMT ": empty value", KARG(kv->key));
		return 0;
	}
	/* The 2022 text forbids whitespace in values; <valstr> allows it. */
	if (p->fi->profile == DAC_PROFILE_2022 && dac_has_ws(kv->str)) {
		ADD(p, DAC_SEV_ERROR, C_VALUE_WHITESPACE, kv->line,
		    KFMT ": value contains whitespace", KARG(kv->key));
		return 0;
	}
	return 1;
}

/*
 * The engine and region views work alike: a name map to an index into the
 * public array (@arr, elements of @elem bytes) and a parallel private array
 * (@aux). Find @name, or append a zeroed element to both arrays. Sets
 * *@created when it appended. Returns 0 or -ENOMEM (nothing changed).
 */
struct dac_view {
	struct dac_map *map;
	void **arr;
	size_t *cap, elem;
	void **aux;
	size_t *aux_cap, aux_elem;
	const void *aux_inl;	/* the parser's own room *@aux starts in */
	size_t *n;
	size_t name_off;	/* offsetof the element's const char *name */
};

/* Up to this many names a view is searched in order, without hashing. */
#define DAC_VIEW_LINEAR 8

static const char *dac_view_name(const struct dac_view *v, size_t i)
{
	const char *name;

	memcpy(&name, (const char *)*v->arr + i * v->elem + v->name_off, sizeof(name));
	return name;
}

static int dac_view_idx(const struct dac_view *v, const char *name, size_t *idx,
			bool *created)
{
	size_t n = *v->n, i;
	uint64_t h = 0;

	*created = false;
	if (!v->map->n) {
		/* few names (every driver seen): compare them, no map yet */
		for (i = 0; i < n; i++)
			if (!strcmp(dac_view_name(v, i), name)) {
				*idx = i;
				return 0;
			}
		/* the one past DAC_VIEW_LINEAR: from now on the map */
		for (i = 0; n >= DAC_VIEW_LINEAR && i < n; i++)
			if (dac_map_add(v->map, dac_view_name(v, i), dac_hash(dac_view_name(v, i)), i))
				return -ENOMEM;
	} else {
		struct dac_map_ent *e = dac_map_find(v->map, name, h = dac_hash(name));

		if (e) {
			*idx = e->val;
			return 0;
		}
	}
	if (dac__grow(v->arr, v->cap, n + 1, v->elem, 8) ||
	    dac_grow_in(v->aux, v->aux_cap, n + 1, v->aux_elem, v->aux_inl))
		return -ENOMEM;
	if (v->map->n && dac_map_add(v->map, name, h ? h : dac_hash(name), n))
		return -ENOMEM;
	memset((char *)*v->arr + n * v->elem, 0, v->elem);
	memset((char *)*v->aux + n * v->aux_elem, 0, v->aux_elem);
	*idx = (*v->n)++;
	*created = true;
	return 0;
}

static int dac_engine_idx(struct dac_parser *p, const char *name, unsigned int line,
			  size_t *idx)
{
	struct dac_fdinfo *fi = p->fi;
	const struct dac_view v = {
		.map = &p->engines, .arr = (void **)&fi->engines, .cap = &p->eng_cap,
		.elem = sizeof(*fi->engines), .aux = (void **)&p->eaux,
		.aux_cap = &p->eaux_cap, .aux_elem = sizeof(*p->eaux), .aux_inl = p->eaux_in,
		.n = &fi->nengines, .name_off = offsetof(struct dac_engine, name),
	};
	bool created;

	if (dac_view_idx(&v, name, idx, &created))
		return -ENOMEM;
	if (created) {
		fi->engines[*idx].name = name;
		fi->engines[*idx].capacity = 1;
		fi->engines[*idx].line = line;
	}
	return 0;
}

static int dac_region_idx(struct dac_parser *p, const char *name, unsigned int line,
			  size_t *idx)
{
	struct dac_fdinfo *fi = p->fi;
	const struct dac_view v = {
		.map = &p->regions, .arr = (void **)&fi->regions, .cap = &p->reg_cap,
		.elem = sizeof(*fi->regions), .aux = (void **)&p->raux,
		.aux_cap = &p->raux_cap, .aux_elem = sizeof(*p->raux), .aux_inl = p->raux_in,
		.n = &fi->nregions, .name_off = offsetof(struct dac_region, name),
	};
	bool created;

	if (dac_view_idx(&v, name, idx, &created))
		return -ENOMEM;
	if (created) {
		fi->regions[*idx].name = name;
		fi->regions[*idx].line = line;
	}
	return 0;
}

/* Record a value in the engine view (first key occurrence only). */
static void dac_put_engine(struct dac_parser *p, size_t idx, const struct dac_kv *kv,
			   bool ok)
{
	struct dac_engine *en = &p->fi->engines[idx];
	struct dac_eng_aux *a = &p->eaux[idx];

	switch (kv->type) {
	case DAC_KEY_ENGINE:
		a->l_engine = kv->line;
		en->has_busy = ok;
		en->busy_ns = ok ? kv->value : 0;
		break;
	case DAC_KEY_ENGINE_CAPACITY:
		a->l_capacity = kv->line;
		en->has_capacity = ok;
		en->capacity = ok ? kv->value : 1;
		break;
	case DAC_KEY_CYCLES:
		a->l_cycles = kv->line;
		en->has_cycles = ok;
		en->cycles = ok ? kv->value : 0;
		break;
	case DAC_KEY_MAXFREQ:
		a->l_maxfreq = kv->line;
		en->has_maxfreq = ok;
		en->maxfreq_hz = ok ? kv->value : 0;
		break;
	case DAC_KEY_TOTAL_CYCLES:
		a->l_total = kv->line;
		en->has_total_cycles = ok;
		en->total_cycles = ok ? kv->value : 0;
		break;
	default:
		break;
	}
}

static void dac_put_region(struct dac_parser *p, size_t idx, const struct dac_kv *kv,
			   bool ok)
{
	struct dac_region *r = &p->fi->regions[idx];
	struct dac_reg_aux *a = &p->raux[idx];
	uint64_t v = ok ? kv->value : 0;

	switch (kv->type) {
	case DAC_KEY_MEM_TOTAL:
		a->l_total = kv->line;
		r->has_total = ok;
		r->total = v;
		break;
	case DAC_KEY_MEM_SHARED:
		a->l_shared = kv->line;
		r->has_shared = ok;
		r->shared = v;
		break;
	case DAC_KEY_MEM_RESIDENT:
		a->l_resident = kv->line;
		r->has_resident = ok;
		r->resident = v;
		break;
	case DAC_KEY_MEM_PURGEABLE:
		a->l_purgeable = kv->line;
		r->has_purgeable = ok;
		r->purgeable = v;
		break;
	case DAC_KEY_MEM_ACTIVE:
		a->l_active = kv->line;
		r->has_active = ok;
		r->active = v;
		break;
	case DAC_KEY_MEMORY_LEGACY:
		a->l_memory = kv->line;
		r->has_memory = ok;
		r->memory = v;
		break;
	default:
		break;
	}
}

static bool dac_is_engine_type(enum dac_key_type t)
{
	return t == DAC_KEY_ENGINE || t == DAC_KEY_ENGINE_CAPACITY ||
	       t == DAC_KEY_CYCLES || t == DAC_KEY_MAXFREQ ||
	       t == DAC_KEY_TOTAL_CYCLES;
}

static bool dac_is_region_type(enum dac_key_type t)
{
	return t >= DAC_KEY_MEM_TOTAL && t <= DAC_KEY_MEMORY_LEGACY;
}

/* The line-number field of @t in an engine's or region's bookkeeping. */
static unsigned int *dac_aux_line(struct dac_parser *p, enum dac_key_type t, size_t idx)
{
	struct dac_eng_aux *e = &p->eaux[idx];
	struct dac_reg_aux *r = &p->raux[idx];

	switch (t) {
	case DAC_KEY_ENGINE: return &e->l_engine;
	case DAC_KEY_ENGINE_CAPACITY: return &e->l_capacity;
	case DAC_KEY_CYCLES: return &e->l_cycles;
	case DAC_KEY_MAXFREQ: return &e->l_maxfreq;
	case DAC_KEY_TOTAL_CYCLES: return &e->l_total;
	case DAC_KEY_MEM_TOTAL: return &r->l_total;
	case DAC_KEY_MEM_SHARED: return &r->l_shared;
	case DAC_KEY_MEM_RESIDENT: return &r->l_resident;
	case DAC_KEY_MEM_PURGEABLE: return &r->l_purgeable;
	case DAC_KEY_MEM_ACTIVE: return &r->l_active;
	default: return &r->l_memory;	/* DAC_KEY_MEMORY_LEGACY */
	}
}

/*
 * Has key @i appeared before? 1 with *@first its first line, 0 (now noted),
 * or -ENOMEM. *@idx: the key's engine or region (made when new). The spec's keys are looked up where their values go anyway
 * (the engine's or region's line fields, fixed slots), so only other keys
 * (driver-specific, unknown drm-, an empty name) need the key map's hash.
 */
static int dac_seen(struct dac_parser *p, size_t i, unsigned int *first, size_t *idx)
{
	struct dac_fdinfo *fi = p->fi;
	struct dac_kv *kv = &fi->kv[i];
	struct dac_map_ent *e;
	unsigned int *slot = NULL;
	uint64_t h;

	if (kv->type <= DAC_KEY_CLIENT_NAME) {
		slot = &p->l_fixed[kv->type];
	} else if (kv->name && *kv->name && dac_is_engine_type(kv->type)) {
		if (dac_engine_idx(p, kv->name, kv->line, idx))
			return -ENOMEM;
		slot = dac_aux_line(p, kv->type, *idx);
	} else if (kv->name && *kv->name && dac_is_region_type(kv->type)) {
		if (dac_region_idx(p, kv->name, kv->line, idx))
			return -ENOMEM;
		slot = dac_aux_line(p, kv->type, *idx);
	}
	if (slot) {
		if (*slot) {
			*first = *slot;
			return 1;
		}
		*slot = kv->line;
		return 0;
	}
	h = dac_hash_n(kv->key, p->kaux[i].klen);
	e = dac_map_find(&p->keys, kv->key, h);
	if (e) {
		*first = fi->kv[e->val].line;
		return 1;
	}
	return dac_map_add(&p->keys, kv->key, h, i) ? -ENOMEM : 0;
}

/* Step 2 for one key/value. */
static int dac_kv_check(struct dac_parser *p, size_t i, const char *driver)
{
	struct dac_fdinfo *fi = p->fi;
	struct dac_kv *kv = &fi->kv[i];
	unsigned int first;
	bool dup = false;
	int ok = 0, err;
	size_t idx;

	kv->type = dac_classify(fi->profile, kv->key, p->kaux[i].klen, &kv->name);
	if (kv->type == DAC_KEY_OTHER)
		return 0;

	err = dac_seen(p, i, &first, &idx);
	if (err < 0)
		return err;
	if (err) {
		dup = true;
		ADD(p, DAC_SEV_ERROR, C_DUPLICATE_KEY, kv->line,
		    "key " KFMT " already appeared on line %u; the first value is used",
		    KARG(kv->key), first);
	}

	if (kv->name && !*kv->name) {
		ADD(p, DAC_SEV_ERROR, C_NAME_EMPTY, kv->line,
		    "key " KFMT " has an empty engine/region name", KARG(kv->key));
		kv->name = NULL;
		return 0;
	}

	switch (kv->type) {
	case DAC_KEY_DRIVER:
		p->have_driver_key = true;
		ok = dac_string(p, kv);
		if (ok > 0 && !dup)
			fi->driver = kv->str;
		break;
	case DAC_KEY_PDEV:
		ok = dac_string(p, kv);
		if (ok > 0 && !dac_pdev_ok(kv->str))
			ADD(p, DAC_SEV_WARNING, C_PDEV_FORMAT, kv->line,
			    "drm-pdev " KFMT " is not a PCI address dddd:bb:dd.f",
			    KARG(kv->str));
		if (ok > 0 && !dup)
			fi->pdev = kv->str;
		break;
	case DAC_KEY_CLIENT_NAME:
		ok = dac_string(p, kv);
		if (ok > 0 && !dup)
			fi->client_name = kv->str;
		break;
	case DAC_KEY_CLIENT_ID:
		p->have_client_id_key = true;
		ok = dac_number(p, kv, DAC_UNITS_NONE);
		if (ok > 0 && !dup) {
			fi->client_id = kv->value;
			fi->has_client_id = true;
		}
		break;
	case DAC_KEY_UNKNOWN_DRM:
		ADD(p, DAC_SEV_WARNING, C_UNKNOWN_DRM_KEY, kv->line,
		    "key " KFMT " is not defined by the %s spec", KARG(kv->key),
		    dac_profile_name(fi->profile));
		ok = dac_number(p, kv, DAC_UNITS_ANY);
		break;
	case DAC_KEY_DRIVER_SPECIFIC: {
		size_t plen = (size_t)(strchr(kv->key, '-') - kv->key);

		/* amdgpu prints "amd-": a prefix of the driver name is fine. */
		if (fi->profile == DAC_PROFILE_CURRENT && driver &&
		    (plen > strlen(driver) || strncmp(kv->key, driver, plen)))
			ADD(p, DAC_SEV_NOTE, C_DRIVER_PREFIX, kv->line,
			    "driver-specific key " KFMT " is not prefixed with the driver name " KFMT,
			    KARG(kv->key), KARG(driver));
		ok = dac_number(p, kv, DAC_UNITS_ANY);
		break;
	}
	default:
		ok = dac_number(p, kv, dac_units_of(kv->type));
		break;
	}
	if (ok < 0)
		return ok;

	if (ok && kv->type == DAC_KEY_ENGINE_CAPACITY && kv->value == 0) {
		ADD(p, DAC_SEV_ERROR, C_CAPACITY_ZERO, kv->line,
		    KFMT ": zero capacity is not allowed; 1 assumed",
		    KARG(kv->key));
		ok = 0;
	}
	if (ok && kv->type == DAC_KEY_MAXFREQ && kv->value == 0) {
		ADD(p, DAC_SEV_ERROR, C_MAXFREQ_ZERO, kv->line,
		    KFMT ": a maximum frequency of 0 Hz is meaningless",
		    KARG(kv->key));
		ok = 0;
	}
	kv->has_value = ok && kv->type != DAC_KEY_DRIVER &&
			kv->type != DAC_KEY_PDEV && kv->type != DAC_KEY_CLIENT_NAME;
	if (dup)
		return 0;
	/* dac_seen() found (or made) the engine or region: idx */
	if (dac_is_engine_type(kv->type))
		dac_put_engine(p, idx, kv, ok);
	else if (dac_is_region_type(kv->type))
		dac_put_region(p, idx, kv, ok);
	return 0;
}

/* Step 3: rules about one engine as a whole. */
static int dac_engine_rules(struct dac_parser *p, size_t i)
{
	const bool cur = p->fi->profile == DAC_PROFILE_CURRENT;
	const struct dac_eng_aux *a = &p->eaux[i];
	const char *n = p->fi->engines[i].name;
	/* Upstream today also lets drm-cycles-<e> introduce an engine (xe). */
	const bool declared = a->l_engine || (cur && a->l_cycles);

	if (a->l_capacity && !declared)
		ADD(p, DAC_SEV_ERROR, C_CAPACITY_ORPHAN, a->l_capacity,
		    "'drm-engine-capacity-" NFMT "' names an engine without %s",
		    KARG(n), cur ? "drm-engine- or drm-cycles- key" :
				   "drm-engine- key");
	if (a->l_cycles && !a->l_engine) {
		if (cur)
			ADD(p, DAC_SEV_NOTE, C_CYCLES_ORPHAN, a->l_cycles,
			    "engine " KFMT " reports cycles but no drm-engine- time",
			    KARG(n));
		else
			ADD(p, DAC_SEV_ERROR, C_CYCLES_ORPHAN, a->l_cycles,
			    "'drm-cycles-" NFMT "' names an engine without drm-engine- key",
			    KARG(n));
	}
	if (a->l_maxfreq && !declared)
		ADD(p, DAC_SEV_ERROR, C_MAXFREQ_ORPHAN, a->l_maxfreq,
		    "'drm-maxfreq-" NFMT "' names an engine without %s",
		    KARG(n), cur ? "drm-engine- or drm-cycles- key" :
				   "drm-engine- key");
	if (a->l_total && !a->l_cycles)
		ADD(p, DAC_SEV_ERROR, C_TOTAL_CYCLES_ORPHAN, a->l_total,
		    "'drm-total-cycles-" NFMT "' without drm-cycles- for that engine",
		    KARG(n));
	if (a->l_total && a->l_maxfreq)
		ADD(p, DAC_SEV_ERROR, C_MAXFREQ_AND_TOTAL,
		    a->l_total > a->l_maxfreq ? a->l_total : a->l_maxfreq,
		    "engine " KFMT " has both drm-maxfreq- and drm-total-cycles- (only one is allowed)",
		    KARG(n));
	return 0;
}

static int dac_subset(struct dac_parser *p, const char *region, bool has_small,
		      uint64_t small, const char *sname, unsigned int sline,
		      bool has_big, uint64_t big, const char *bname)
{
	if (has_small && has_big && small > big)
		ADD(p, DAC_SEV_WARNING, C_MEMORY_SUBSET, sline,
		    "region " KFMT ": %s (%llu bytes) exceeds %s (%llu bytes)",
		    KARG(region), sname, (unsigned long long)small, bname,
		    (unsigned long long)big);
	return 0;
}

/* Step 3: rules about one memory region as a whole. */
static int dac_region_rules(struct dac_parser *p, size_t i)
{
	struct dac_region *r = &p->fi->regions[i];
	const struct dac_reg_aux *a = &p->raux[i];
	int err;

	if (p->fi->profile == DAC_PROFILE_CURRENT && a->l_memory) {
		if (!a->l_resident)
			ADD(p, DAC_SEV_NOTE, C_MEMORY_DEPRECATED, a->l_memory,
			    "'drm-memory-" NFMT "' is deprecated; drm-resident- is its replacement",
			    KARG(r->name));
		else if (r->has_memory && r->has_resident &&
			 r->memory != r->resident)
			ADD(p, DAC_SEV_WARNING, C_MEMORY_MISMATCH, a->l_memory,
			    "'drm-memory-" NFMT "' (%llu bytes) is an alias of drm-resident- (line %u, %llu bytes) but differs; drm-resident- is used",
			    KARG(r->name), (unsigned long long)r->memory,
			    a->l_resident, (unsigned long long)r->resident);
		else
			/* Allowed by the spec (amdgpu prints both): a note. */
			ADD(p, DAC_SEV_NOTE, C_MEMORY_LEGACY_DUP, a->l_memory,
			    "deprecated drm-memory-" KFMT " printed next to drm-resident- (line %u) with the same value",
			    KARG(r->name), a->l_resident);
	}
	/* The deprecated key is the resident figure when nothing else is. */
	if (r->has_memory && !a->l_resident) {
		r->resident = r->memory;
		r->has_resident = true;
		r->resident_from_legacy = true;
	}
	if (p->fi->profile != DAC_PROFILE_CURRENT)
		return 0;
	err = dac_subset(p, r->name, r->has_shared, r->shared, "shared",
			 a->l_shared, r->has_total, r->total, "total");
	if (!err)
		err = dac_subset(p, r->name, r->has_resident && a->l_resident,
				 r->resident, "resident", a->l_resident,
				 r->has_total, r->total, "total");
	if (!err)
		err = dac_subset(p, r->name, r->has_purgeable, r->purgeable,
				 "purgeable", a->l_purgeable, r->has_resident,
				 r->resident, "resident");
	if (!err)
		err = dac_subset(p, r->name, r->has_active, r->active, "active",
				 a->l_active, r->has_resident, r->resident,
				 "resident");
	return err;
}

/* Stable merge sort of the findings by line. */
static int dac_sort_findings(struct dac_fdinfo *fi)
{
	struct dac_finding *a = fi->find, *b, *t;
	size_t n = fi->nfind, w, lo;

	if (n < 2)
		return 0;
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
	if (a != fi->find) {
		memcpy(fi->find, a, n * sizeof(*a));
		b = a;
	}
	free(b);
	return 0;
}

static int dac_run(struct dac_parser *p, size_t len)
{
	struct dac_fdinfo *fi = p->fi;
	char *text = fi->priv_text;
	const char *driver = NULL;
	bool nul = memchr(text, '\0', len) != NULL;
	unsigned int line = 0;
	size_t pos = 0, i;
	int err;

	/* The arrays grow as keys come (dac_line()), no counting pass first. */
	while (pos < len) {
		char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - s) : len - pos;

		line++;
		pos += ll + (nl ? 1 : 0);
		err = dac_line(p, s, ll, line, nul);
		if (err)
			return err;
	}
	fi->nlines = line;

	/* Driver-specific prefixes are judged against the (first) driver. */
	for (i = 0; i < fi->nkv; i++) {
		if (!p->kaux[i].bad && !strcmp(fi->kv[i].key, "drm-driver") &&
		    *fi->kv[i].str) {
			driver = fi->kv[i].str;
			break;
		}
	}
	for (i = 0; i < fi->nkv; i++) {
		if (p->kaux[i].bad)
			continue;
		err = dac_kv_check(p, i, driver);
		if (err)
			return err;
	}
	for (i = 0; i < fi->nengines; i++) {
		err = dac_engine_rules(p, i);
		if (err)
			return err;
	}
	for (i = 0; i < fi->nregions; i++) {
		err = dac_region_rules(p, i);
		if (err)
			return err;
	}
	if (!p->have_driver_key)
		ADD(p, DAC_SEV_ERROR, C_DRIVER_MISSING, 0,
		    "mandatory key drm-driver is missing");
	if (!p->have_client_id_key)
		ADD(p, DAC_SEV_NOTE, C_CLIENT_ID_MISSING, 0,
		    "no drm-client-id: shared or duplicated fds cannot be told apart");
	return dac_sort_findings(fi);
}

int dac__parse_owned(char *text, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out)
{
	struct dac_parser p;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, offsetof(struct dac_parser, kaux_in));
	p.kaux = p.kaux_in;
	p.bad_cap = sizeof(p.kaux_in) / sizeof(p.kaux_in[0]);
	p.eaux = p.eaux_in;
	p.eaux_cap = sizeof(p.eaux_in) / sizeof(p.eaux_in[0]);
	p.raux = p.raux_in;
	p.raux_cap = sizeof(p.raux_in) / sizeof(p.raux_in[0]);
	p.keys.inl = p.keys_in;
	p.keys.inl_cap = sizeof(p.keys_in) / sizeof(p.keys_in[0]);
	p.engines.inl = p.engines_in;
	p.engines.inl_cap = sizeof(p.engines_in) / sizeof(p.engines_in[0]);
	p.regions.inl = p.regions_in;
	p.regions.inl_cap = sizeof(p.regions_in) / sizeof(p.regions_in[0]);
	out->profile = profile;
	out->priv_text = text;
	text[len] = '\0';
	p.fi = out;
	err = dac_run(&p, len);
	if (p.eaux != p.eaux_in)
		free(p.eaux);
	if (p.raux != p.raux_in)
		free(p.raux);
	if (p.kaux != p.kaux_in)
		free(p.kaux);
	dac_map_free(&p.keys);
	dac_map_free(&p.engines);
	dac_map_free(&p.regions);
	if (err)
		dac_fdinfo_free(out);
	return err;
}

static bool dac_profile_ok(enum dac_profile profile)
{
	return profile == DAC_PROFILE_CURRENT || profile == DAC_PROFILE_2022;
}

int dac_fdinfo_parse(const char *buf, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out)
{
	char *text;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if ((!buf && len) || !dac_profile_ok(profile))
		return -EINVAL;
	if (len == SIZE_MAX)
		return -ENOMEM;
	text = dac__malloc(len + 1);
	if (!text)
		return -ENOMEM;
	if (len)
		memcpy(text, buf, len);
	return dac__parse_owned(text, len, profile, out);
}

/* First read size: every fdinfo seen in the wild fits, so one read does. */
#define DAC_READ_FIRST 4096

/* -errno for what is not a file of text (a directory, a device), else 0. */
static int dac_check_type(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return -EINVAL;
	return 0;
}

/*
 * Read @fd to its end and parse. @typed: the caller has checked the type
 * and @short_eof says whether a short read ends the file; !@typed: the fd
 * was opened by path from an fdinfo directory and is fstat()ed only when
 * the first read leaves a doubt (empty, or the buffer filled).
 *
 * Why a short read may end the file, saving the read() that would return 0:
 * - a regular file: read() returns less than asked only at its end (a
 *   writer appending meanwhile is not something a snapshot can see anyway);
 * - /proc/<pid>/fdinfo/<fd>: procfs serves it with single_open(), i.e. a
 *   seq_file of ONE record. seq_read_iter() formats that record whole into
 *   its own buffer (doubling the buffer until it fits) and then copies
 *   min(record left, bytes asked); so a read shorter than asked has copied
 *   the rest of the record, and the next read() would return 0. This is
 *   not true of seq_files with many records (/proc/<pid>/maps...), which
 *   stop a read at a record that does not fit in the buffer: a short read
 *   there is not EOF, and the same holds for pipes, sockets and ttys. So
 *   fds we did not open ourselves from an fdinfo directory, and anything
 *   not a regular file, are read until read() returns 0.
 */
static int dac_read_parse(int fd, bool typed, bool short_eof,
			  enum dac_profile profile, struct dac_fdinfo *out)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct stat st;
	ssize_t n;
	int err;

	for (;;) {
		size_t want;

		/* Keep one spare byte for the terminating NUL. */
		if (dac__grow((void **)&buf, &cap, len + 2, 1, DAC_READ_FIRST)) {
			free(buf);
			return -ENOMEM;
		}
		want = cap - len - 1;
		n = read(fd, buf + len, want);
		if (n < 0) {
			err = errno;
			if (err == EINTR)
				continue;
			free(buf);
			return -err;
		}
		if (!typed && (n == 0 || (size_t)n == want)) {
			/* Empty, or maybe more: what is it? (once) */
			typed = true;
			if (fstat(fd, &st)) {
				err = -errno;
				free(buf);
				return err;
			}
			err = dac_check_type(&st);
			if (err) {
				free(buf);
				return err;
			}
			short_eof = S_ISREG(st.st_mode);
		}
		len += (size_t)n;
		if (n == 0 || (short_eof && (size_t)n < want))
			break;
	}
	return dac__parse_owned(buf, len, profile, out);
}

int dac_fdinfo_read_fd(int fd, enum dac_profile profile, struct dac_fdinfo *out)
{
	struct stat st;
	int err;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!dac_profile_ok(profile))
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	err = dac_check_type(&st);
	if (err)
		return err;
	/* Not opened by us: only a regular file ends at a short read. */
	return dac_read_parse(fd, true, S_ISREG(st.st_mode), profile, out);
}

/*
 * Parse what was opened by path and close it. @at_fdinfo: the path is an
 * entry of an fdinfo directory, read with the fewest syscalls (see
 * dac_read_parse()); otherwise it is any path a user gave, fstat()ed first
 * so that a tty or a device is refused before it is read.
 */
static int dac_read_opened(int fd, bool at_fdinfo, enum dac_profile profile,
			   struct dac_fdinfo *out)
{
	int err = fd < 0 ? -errno : 0;

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	if (!dac_profile_ok(profile))
		err = -EINVAL;
	else if (at_fdinfo)
		err = dac_read_parse(fd, false, true, profile, out);
	else
		err = dac_fdinfo_read_fd(fd, profile, out);
	close(fd);
	return err;
}

int dac_fdinfo_read_file(const char *path, enum dac_profile profile,
			 struct dac_fdinfo *out)
{
	if (!out)
		return -EINVAL;
	if (!path) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return dac_read_opened(open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY),
			       false, profile, out);
}

int dac_fdinfo_read_at(int dirfd, const char *name, enum dac_profile profile,
		       struct dac_fdinfo *out)
{
	if (!out)
		return -EINVAL;
	if (!name) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return dac_read_opened(openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY),
			       true, profile, out);
}

void dac_fdinfo_free(struct dac_fdinfo *fi)
{
	size_t i;

	if (!fi)
		return;
	for (i = 0; i < fi->nfind; i++)
		free((void *)fi->find[i].msg);
	free(fi->find);
	free(fi->kv);
	free(fi->engines);
	free(fi->regions);
	free(fi->priv_text);
	free(fi->priv_alloc);
	memset(fi, 0, sizeof(*fi));
}

size_t dac_fdinfo_count(const struct dac_fdinfo *fi, enum dac_severity sev)
{
	size_t i, n = 0;

	if (!fi)
		return 0;
	for (i = 0; i < fi->nfind; i++)
		n += fi->find[i].sev == sev;
	return n;
}

size_t dac_fdinfo_errors(const struct dac_fdinfo *fi)
{
	return dac_fdinfo_count(fi, DAC_SEV_ERROR);
}

const struct dac_finding *dac_fdinfo_find_code(const struct dac_fdinfo *fi,
					       const char *code)
{
	size_t i;

	if (!fi || !code)
		return NULL;
	for (i = 0; i < fi->nfind; i++)
		if (!strcmp(fi->find[i].code, code))
			return &fi->find[i];
	return NULL;
}

const struct dac_engine *dac_fdinfo_engine(const struct dac_fdinfo *fi,
					   const char *name)
{
	size_t i;

	if (!fi || !name)
		return NULL;
	for (i = 0; i < fi->nengines; i++)
		if (!strcmp(fi->engines[i].name, name))
			return &fi->engines[i];
	return NULL;
}

const struct dac_region *dac_fdinfo_region(const struct dac_fdinfo *fi,
					   const char *name)
{
	size_t i;

	if (!fi || !name)
		return NULL;
	for (i = 0; i < fi->nregions; i++)
		if (!strcmp(fi->regions[i].name, name))
			return &fi->regions[i];
	return NULL;
}

const struct dac_kv *dac_fdinfo_get(const struct dac_fdinfo *fi, const char *key)
{
	size_t i;

	if (!fi || !key)
		return NULL;
	for (i = 0; i < fi->nkv; i++)
		if (!strcmp(fi->kv[i].key, key))
			return &fi->kv[i];
	return NULL;
}
