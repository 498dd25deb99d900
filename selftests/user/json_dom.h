/* SPDX-License-Identifier: MIT */
/*
 * json_dom.h - a small JSON parser for tests: the whole document becomes a
 * tree, so tests assert values (by path) instead of searching for
 * substrings. Strict RFC 8259 syntax; \u escapes are decoded to UTF-8
 * (surrogate pairs joined); numbers are kept as double and, when they are
 * integers that fit, as uint64/int64 exactly.
 */
#ifndef DRMACCT_JSON_DOM_H
#define DRMACCT_JSON_DOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jd_type { JD_NULL, JD_BOOL, JD_NUM, JD_STR, JD_ARR, JD_OBJ };

struct jd {
	enum jd_type type;
	bool b;
	double num;
	bool is_int;		/* num is an integer: exact value in i (or u) */
	int64_t i;
	uint64_t u;
	char *str;		/* JD_STR; for object members the key is in key */
	char *key;		/* member name inside an object, else NULL */
	struct jd *kids;	/* JD_ARR / JD_OBJ */
	size_t n;
};

/* Parse @text (whole document, trailing whitespace only). NULL when invalid. */
struct jd *jd_parse(const char *text);
void jd_free(struct jd *j);

/*
 * Follow @path from @j: members by name, array elements by number, separated
 * by '.', e.g. "clients.0.holders.1.pid". NULL when absent.
 */
const struct jd *jd_path(const struct jd *j, const char *path);
/* The member @key of object @j, or NULL. */
const struct jd *jd_get(const struct jd *j, const char *key);

/* Value at @path, or the fallback when absent or of another type. */
int64_t jd_int(const struct jd *j, const char *path, int64_t fallback);
uint64_t jd_u64(const struct jd *j, const char *path, uint64_t fallback);
double jd_num(const struct jd *j, const char *path, double fallback);
const char *jd_str(const struct jd *j, const char *path);	/* NULL: absent */
/* Number of elements (array) or members (object) at @path; -1 when absent. */
long jd_len(const struct jd *j, const char *path);
/* True when @path exists and is null. */
bool jd_is_null(const struct jd *j, const char *path);

/*
 * The first element of the array at @path (from @j) whose member @key is
 * the integer @v, or whose member @key is the string @v; NULL when none.
 */
const struct jd *jd_find_u64(const struct jd *j, const char *path, const char *key, uint64_t v);
const struct jd *jd_find_str(const struct jd *j, const char *path, const char *key,
			     const char *v);
/* How many members named @key anywhere in @j (at any depth) are the integer @v. */
size_t jd_count_u64(const struct jd *j, const char *key, uint64_t v);

#endif /* DRMACCT_JSON_DOM_H */
