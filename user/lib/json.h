/* SPDX-License-Identifier: MIT */
/*
 * json.h - a small streaming JSON writer for drmacct's machine-readable output.
 *
 * Strings are always emitted as valid JSON: control characters are escaped and
 * bytes that are not valid UTF-8 become U+FFFD, so arbitrary fdinfo text
 * cannot break a consumer. Non-finite doubles are written as null.
 * Errors (out of memory, write errors) are sticky and reported by
 * dac_json_finish().
 */
#ifndef DRMACCT_JSON_H
#define DRMACCT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct dac_json {
	FILE *f;
	bool pretty;
	int err;		/* first error as -errno, sticky */
	size_t depth;
	size_t cap;
	unsigned char *state;	/* per level: 0 nothing written yet, 1 has members */
};

/*
 * Length (2..4) of the well-formed UTF-8 sequence at @s (@n bytes left; no
 * overlongs, no surrogates, <= U+10FFFF), or 0 when @s[0] does not start one.
 */
size_t dac_utf8_seq(const unsigned char *s, size_t n);

void dac_json_init(struct dac_json *j, FILE *f, bool pretty);
/* Ends the document (newline), frees state. Returns 0 or the first error. */
int dac_json_finish(struct dac_json *j);

/* @key is the member name inside objects and must be NULL inside arrays. */
void dac_json_obj_begin(struct dac_json *j, const char *key);
void dac_json_obj_end(struct dac_json *j);
void dac_json_arr_begin(struct dac_json *j, const char *key);
void dac_json_arr_end(struct dac_json *j);
void dac_json_str(struct dac_json *j, const char *key, const char *s);
/* A string of exactly @len bytes (may contain NULs, escaped as \u0000). */
void dac_json_strn(struct dac_json *j, const char *key, const char *s, size_t len);
void dac_json_u64(struct dac_json *j, const char *key, uint64_t v);
void dac_json_i64(struct dac_json *j, const char *key, int64_t v);
void dac_json_double(struct dac_json *j, const char *key, double v);
void dac_json_bool(struct dac_json *j, const char *key, bool v);
void dac_json_null(struct dac_json *j, const char *key);
/* @v when @has, else null. (dac_json_double() writes null for NaN itself.) */
void dac_json_u64_opt(struct dac_json *j, const char *key, bool has, uint64_t v);

#endif /* DRMACCT_JSON_H */
