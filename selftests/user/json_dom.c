// SPDX-License-Identifier: MIT
/*
 * json_dom.c - the tests' JSON parser (see json_dom.h).
 */
#define _GNU_SOURCE
#include "json_dom.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct jp {
	const char *s;
	int depth;
};

static void ws(struct jp *p)
{
	while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')
		p->s++;
}

static int hex4(const char *s, unsigned int *out)
{
	unsigned int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned int)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at p->s (opening quote); decoded copy or NULL. */
static char *string(struct jp *p)
{
	const char *s = p->s;
	char *out, *o;

	if (*s++ != '"')
		return NULL;
	out = malloc(strlen(s) + 1);	/* decoding never grows the text */
	if (!out)
		return NULL;
	o = out;
	while (*s != '"') {
		unsigned int cp, lo;

		if (!*s || (unsigned char)*s < 0x20)
			goto bad;
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (hex4(s + 1, &cp))
				goto bad;
			s += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && s[1] == '\\' && s[2] == 'u' &&
			    !hex4(s + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				s += 6;
			}
			o += put_utf8(o, cp);
			break;
		default:
			goto bad;
		}
		s++;
	}
	*o = '\0';
	p->s = s + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static int value(struct jp *p, struct jd *out);

static int push(struct jd *parent, struct jd *kid)
{
	struct jd *k = realloc(parent->kids, (parent->n + 1) * sizeof(*k));

	if (!k)
		return -1;
	parent->kids = k;
	k[parent->n++] = *kid;
	return 0;
}

static void clear(struct jd *j)
{
	for (size_t i = 0; i < j->n; i++)
		clear(&j->kids[i]);
	free(j->kids);
	free(j->str);
	free(j->key);
}

static int container(struct jp *p, struct jd *out)
{
	bool obj = *p->s == '{';
	char close = obj ? '}' : ']';

	out->type = obj ? JD_OBJ : JD_ARR;
	p->s++;
	ws(p);
	if (*p->s == close) {
		p->s++;
		return 0;
	}
	for (;;) {
		struct jd kid = { 0 };
		char *key = NULL;

		ws(p);
		if (obj) {
			key = string(p);
			if (!key)
				return -1;
			ws(p);
			if (*p->s++ != ':') {
				free(key);
				return -1;
			}
		}
		if (value(p, &kid)) {
			free(key);
			clear(&kid);
			return -1;
		}
		kid.key = key;
		if (push(out, &kid)) {
			clear(&kid);
			return -1;
		}
		ws(p);
		if (*p->s == close) {
			p->s++;
			return 0;
		}
		if (*p->s++ != ',')
			return -1;
	}
}

static int number(struct jp *p, struct jd *out)
{
	const char *s = p->s, *start = s;
	bool integer = true;
	char *end;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return -1;
	if (*s == '.') {
		integer = false;
		s++;
		if (*s < '0' || *s > '9')
			return -1;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		integer = false;
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return -1;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	out->type = JD_NUM;
	out->num = strtod(start, NULL);
	if (integer) {
		errno = 0;
		if (*start == '-') {
			out->i = strtoll(start, &end, 10);
			out->is_int = !errno;
			out->u = (uint64_t)out->i;
		} else {
			out->u = strtoull(start, &end, 10);
			out->is_int = !errno;
			out->i = (int64_t)out->u;
		}
	}
	p->s = s;
	return 0;
}

static int value(struct jp *p, struct jd *out)
{
	if (++p->depth > 200)
		return -1;
	ws(p);
	switch (*p->s) {
	case '{':
	case '[':
		if (container(p, out))
			return -1;
		break;
	case '"':
		out->type = JD_STR;
		out->str = string(p);
		if (!out->str)
			return -1;
		break;
	case 't':
	case 'f':
		out->type = JD_BOOL;
		out->b = *p->s == 't';
		if (strncmp(p->s, out->b ? "true" : "false", out->b ? 4 : 5))
			return -1;
		p->s += out->b ? 4 : 5;
		break;
	case 'n':
		if (strncmp(p->s, "null", 4))
			return -1;
		out->type = JD_NULL;
		p->s += 4;
		break;
	default:
		if (number(p, out))
			return -1;
	}
	p->depth--;
	return 0;
}

struct jd *jd_parse(const char *text)
{
	struct jp p = { .s = text };
	struct jd *j = calloc(1, sizeof(*j));

	if (!j || !text)
		goto bad;
	if (value(&p, j))
		goto bad;
	ws(&p);
	if (*p.s)
		goto bad;
	return j;
bad:
	jd_free(j);
	return NULL;
}

void jd_free(struct jd *j)
{
	if (!j)
		return;
	clear(j);
	free(j);
}

const struct jd *jd_get(const struct jd *j, const char *key)
{
	if (!j || j->type != JD_OBJ)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (!strcmp(j->kids[i].key, key))
			return &j->kids[i];
	return NULL;
}

const struct jd *jd_path(const struct jd *j, const char *path)
{
	char part[256];

	while (j && path && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		if (j->type == JD_ARR) {
			char *end;
			unsigned long k = strtoul(part, &end, 10);

			j = (*part && !*end && k < j->n) ? &j->kids[k] : NULL;
		} else {
			j = jd_get(j, part);
		}
		path = dot ? dot + 1 : NULL;
	}
	return j;
}

int64_t jd_int(const struct jd *j, const char *path, int64_t fallback)
{
	const struct jd *v = jd_path(j, path);

	return v && v->type == JD_NUM && v->is_int ? v->i : fallback;
}

uint64_t jd_u64(const struct jd *j, const char *path, uint64_t fallback)
{
	const struct jd *v = jd_path(j, path);

	return v && v->type == JD_NUM && v->is_int ? v->u : fallback;
}

double jd_num(const struct jd *j, const char *path, double fallback)
{
	const struct jd *v = jd_path(j, path);

	return v && v->type == JD_NUM ? v->num : fallback;
}

const char *jd_str(const struct jd *j, const char *path)
{
	const struct jd *v = jd_path(j, path);

	return v && v->type == JD_STR ? v->str : NULL;
}

long jd_len(const struct jd *j, const char *path)
{
	const struct jd *v = jd_path(j, path);

	return v && (v->type == JD_ARR || v->type == JD_OBJ) ? (long)v->n : -1;
}

bool jd_is_null(const struct jd *j, const char *path)
{
	const struct jd *v = jd_path(j, path);

	return v && v->type == JD_NULL;
}

const struct jd *jd_find_u64(const struct jd *j, const char *path, const char *key, uint64_t v)
{
	const struct jd *a = jd_path(j, path);

	for (size_t i = 0; a && a->type == JD_ARR && i < a->n; i++) {
		const struct jd *m = jd_get(&a->kids[i], key);

		if (m && m->type == JD_NUM && m->is_int && m->num >= 0 && m->u == v)
			return &a->kids[i];
	}
	return NULL;
}

const struct jd *jd_find_str(const struct jd *j, const char *path, const char *key,
			     const char *v)
{
	const struct jd *a = jd_path(j, path);

	for (size_t i = 0; a && a->type == JD_ARR && i < a->n; i++) {
		const struct jd *m = jd_get(&a->kids[i], key);

		if (m && m->type == JD_STR && !strcmp(m->str, v))
			return &a->kids[i];
	}
	return NULL;
}

size_t jd_count_u64(const struct jd *j, const char *key, uint64_t v)
{
	size_t n = 0;

	if (!j)
		return 0;
	if (j->key && !strcmp(j->key, key) && j->type == JD_NUM && j->is_int && j->num >= 0 &&
	    j->u == v)
		n++;
	for (size_t i = 0; i < j->n && (j->type == JD_ARR || j->type == JD_OBJ); i++)
		n += jd_count_u64(&j->kids[i], key, v);
	return n;
}
