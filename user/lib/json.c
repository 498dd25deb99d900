// SPDX-License-Identifier: MIT
/*
 * json.c - streaming JSON writer. See json.h.
 */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dac_json_init(struct dac_json *j, FILE *f, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

static void put(struct dac_json *j, const char *s, size_t n)
{
	if (j->err)
		return;
	if (n && fwrite(s, 1, n, j->f) != n)
		j->err = -EIO;
}

static void puts_(struct dac_json *j, const char *s)
{
	put(j, s, strlen(s));
}

static void indent(struct dac_json *j)
{
	size_t i;

	if (!j->pretty)
		return;
	put(j, "\n", 1);
	for (i = 0; i < j->depth; i++)
		put(j, "  ", 2);
}

size_t dac_utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp = 0, min = 0;
	size_t seq = 0, k;
	unsigned char c = n ? s[0] : 0;

	if (c >= 0xc2 && c <= 0xdf) {
		seq = 2; cp = c & 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		seq = 3; cp = c & 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		seq = 4; cp = c & 0x07; min = 0x10000;
	}
	for (k = 1; seq && k < seq; k++) {
		if (k >= n || (s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	if (seq && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	return seq;
}

static void escape(struct dac_json *j, const unsigned char *s, size_t n)
{
	size_t i = 0, start = 0;
	char tmp[8];

	put(j, "\"", 1);
	while (i < n) {
		unsigned char c = s[i];
		size_t seq = 0;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80) {
			/* Well-formed UTF-8 goes out as it is. */
			seq = dac_utf8_seq(s + i, n - i);
			if (seq) {
				i += seq;
				continue;
			}
		}
		put(j, (const char *)s + start, i - start);
		switch (c) {
		case '"': puts_(j, "\\\""); break;
		case '\\': puts_(j, "\\\\"); break;
		case '\n': puts_(j, "\\n"); break;
		case '\t': puts_(j, "\\t"); break;
		case '\r': puts_(j, "\\r"); break;
		default:
			if (c >= 0x80) {
				puts_(j, "\\ufffd");
			} else {
				snprintf(tmp, sizeof(tmp), "\\u%04x", c);
				puts_(j, tmp);
			}
		}
		i++;
		start = i;
	}
	put(j, (const char *)s + start, i - start);
	put(j, "\"", 1);
}

/* Separator, indentation and key for a new value at the current level. */
static void member(struct dac_json *j, const char *key)
{
	if (j->depth) {
		if (j->state[j->depth - 1])
			put(j, ",", 1);
		j->state[j->depth - 1] = 1;
		indent(j);
	}
	if (key) {
		escape(j, (const unsigned char *)key, strlen(key));
		put(j, j->pretty ? ": " : ":", j->pretty ? 2 : 1);
	}
}

static void push(struct dac_json *j, const char *key, const char *open)
{
	member(j, key);
	put(j, open, 1);
	if (j->depth == j->cap) {
		size_t ncap = j->cap ? j->cap * 2 : 16;
		unsigned char *ns = realloc(j->state, ncap);

		if (!ns) {
			if (!j->err)
				j->err = -ENOMEM;
			return;
		}
		j->state = ns;
		j->cap = ncap;
	}
	j->state[j->depth++] = 0;
}

static void pop(struct dac_json *j, const char *close)
{
	bool had;

	if (!j->depth) {
		if (!j->err)
			j->err = -EINVAL;
		return;
	}
	had = j->state[j->depth - 1];
	j->depth--;
	if (had)
		indent(j);
	put(j, close, 1);
}

void dac_json_obj_begin(struct dac_json *j, const char *key)
{
	push(j, key, "{");
}

void dac_json_obj_end(struct dac_json *j)
{
	pop(j, "}");
}

void dac_json_arr_begin(struct dac_json *j, const char *key)
{
	push(j, key, "[");
}

void dac_json_arr_end(struct dac_json *j)
{
	pop(j, "]");
}

void dac_json_strn(struct dac_json *j, const char *key, const char *s, size_t len)
{
	member(j, key);
	escape(j, (const unsigned char *)s, len);
}

void dac_json_str(struct dac_json *j, const char *key, const char *s)
{
	if (!s) {
		dac_json_null(j, key);
		return;
	}
	dac_json_strn(j, key, s, strlen(s));
}

void dac_json_u64(struct dac_json *j, const char *key, uint64_t v)
{
	char tmp[32];

	member(j, key);
	snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	puts_(j, tmp);
}

void dac_json_i64(struct dac_json *j, const char *key, int64_t v)
{
	char tmp[32];

	member(j, key);
	snprintf(tmp, sizeof(tmp), "%" PRId64, v);
	puts_(j, tmp);
}

void dac_json_double(struct dac_json *j, const char *key, double v)
{
	char tmp[40];

	member(j, key);
	if (!isfinite(v)) {
		puts_(j, "null");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.6g", v);
	puts_(j, tmp);
}

void dac_json_bool(struct dac_json *j, const char *key, bool v)
{
	member(j, key);
	puts_(j, v ? "true" : "false");
}

void dac_json_null(struct dac_json *j, const char *key)
{
	member(j, key);
	puts_(j, "null");
}

void dac_json_u64_opt(struct dac_json *j, const char *key, bool has, uint64_t v)
{
	if (has)
		dac_json_u64(j, key, v);
	else
		dac_json_null(j, key);
}

int dac_json_finish(struct dac_json *j)
{
	int err;

	if (j->depth && !j->err)
		j->err = -EINVAL;
	put(j, "\n", 1);
	if (!j->err && fflush(j->f))
		j->err = -EIO;
	err = j->err;
	free(j->state);
	j->state = NULL;
	j->cap = j->depth = 0;
	return err;
}
