// SPDX-License-Identifier: GPL-2.0
/*
 * tep-check SERIAL_LOG LABEL — drmacct's events through Debian's
 * libtraceevent, the library perf and trace-cmd print events with.
 *
 * Reads what selftests/kernel/test_trace_events put in a VM suite's serial
 * log ("# tep-..." lines: the kernel's text of every drmacct event, the
 * events' format files, the ring buffer's page header, the raw pages of
 * every CPU), parses the formats and walks every raw record with
 * libtraceevent, and checks that:
 *   1. the page header and every format file parse;
 *   2. every record is of a known event and prints without "FAILED TO
 *      PARSE" (what a TP_printk calling a function of the module's own, or
 *      an enum the format file leaves symbolic, gets);
 *   3. libtraceevent's values of the records are the kernel's, record for
 *      record (compared as sorted lists), and every drmacct event is there.
 *      Values, not text: the two print an array differently (the kernel
 *      "{0x1,0x2}", libtraceevent 1.7 "1 2"), so both texts are brought to
 *      one form first: name=value pairs, each value a number list where it
 *      is numbers, else its text.
 * TAP on stdout, framed for tap-summary.sh as LABEL/tep-check; exit 0 when
 * all pass, 1 otherwise, 2 on usage or I/O errors. A stop before the end
 * (the log unreadable or malformed, memory short) still prints all four
 * checks, those not made as failures, and ends the block.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>
#include <traceevent/trace-seq.h>

#define PAGE 4096

struct blob {
	char name[64];
	unsigned char *data;
	size_t len, want;
};

struct strv {
	char **v;
	size_t n, cap;
};

static int strv_push(struct strv *s, const char *str)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = strdup(str);
	return s->v[s->n] ? (int)s->n++ : -1;
}

static void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

struct input {
	struct blob *files;
	size_t nfiles;
	struct strv text;
	bool begun, ended;
};

/* Takes one line of the log; -1 on a malformed tep line. */
static int take_line(struct input *in, char *line)
{
	size_t len = strlen(line);
	struct blob *b;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!strcmp(line, "# tep-begin")) {
		in->begun = true;
		return 0;
	}
	if (!in->begun || in->ended)
		return 0;
	if (!strcmp(line, "# tep-end")) {
		in->ended = true;
		return 0;
	}
	if (!strncmp(line, "# tep-text ", 11))
		return strv_push(&in->text, line + 11) < 0 ? -1 : 0;
	if (!strncmp(line, "# tep-file ", 11)) {
		struct blob *nb = realloc(in->files, (in->nfiles + 1) * sizeof(*nb));

		if (!nb)
			return -1;
		in->files = nb;
		b = &nb[in->nfiles];
		memset(b, 0, sizeof(*b));
		if (sscanf(line + 11, "%63s %zu", b->name, &b->want) != 2)
			return -1;
		b->data = malloc(b->want + 1);
		if (!b->data)
			return -1;
		in->nfiles++;
		return 0;
	}
	if (!strncmp(line, "# tep-hex ", 10)) {
		const char *h = line + 10;

		if (!in->nfiles)
			return -1;
		b = &in->files[in->nfiles - 1];
		for (; h[0] && h[1]; h += 2) {
			int hi = hexval(h[0]), lo = hexval(h[1]);

			if (hi < 0 || lo < 0 || b->len >= b->want)
				return -1;
			b->data[b->len++] = (unsigned char)(hi << 4 | lo);
		}
		return *h ? -1 : 0;
	}
	return 0;
}

/*
 * @text ("event: k=v k=v ...") in one form for both printers: every value
 * that is numbers (decimal or 0x, in {a,b} or "a b") as a decimal list.
 */
static char *canonical(const char *text)
{
	size_t len = strlen(text), cap = 2 * len + 64, used = 0;
	char *out = malloc(cap), *copy = strdup(text), *save = NULL, *tok;
	const char *colon = strstr(text, ": ");
	bool first = true;

	if (!out || !copy || !colon) {
		free(out);
		free(copy);
		return NULL;
	}
	used = (size_t)(colon - text) + 1;
	memcpy(out, text, used);
	out[used] = '\0';
	for (tok = strtok_r(copy + used + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '='), *v = eq ? eq + 1 : tok, *end, *p;
		bool numbers = true;

		if (*v == '{') {
			v++;
			p = strchr(v, '}');
			if (p)
				*p = '\0';
		}
		for (p = v; *p && numbers; ) {
			strtoull(p, &end, 0);
			numbers = end != p && (*end == ',' || !*end);
			p = *end ? end + 1 : end;
		}
		if (eq)
			used += snprintf(out + used, cap - used, "%s%.*s=", first ? " " : "; ",
					 (int)(eq - tok), tok);
		else
			used += snprintf(out + used, cap - used, ",");
		first = false;
		if (!numbers) {
			used += snprintf(out + used, cap - used, "%s", v);
			continue;
		}
		for (p = v; *p; ) {
			unsigned long long x = strtoull(p, &end, 0);

			used += snprintf(out + used, cap - used, "%s%llu", p == v ? "" : ",", x);
			p = *end ? end + 1 : end;
		}
	}
	free(copy);
	return out;
}

/* Replaces every string of @s by its canonical form; -1 when one fails. */
static int canonicalize(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++) {
		char *c = canonical(s->v[i]);

		if (!c)
			return -1;
		free(s->v[i]);
		s->v[i] = c;
	}
	return 0;
}

/* The four checks, in the order they are made. */
static const char *const checks[] = {
	"the VM suite left the events' formats, pages and text",
	"libtraceevent parses the page header and every drmacct format file",
	"every raw record prints through libtraceevent without a parse failure",
	"libtraceevent's values of every record are the kernel's",
};
#define N_CHECKS (sizeof(checks) / sizeof(checks[0]))

static size_t n_tap;
static int n_fail;

/* The next check's result. */
static void tap(bool ok, const char *label)
{
	if (!ok)
		n_fail++;
	printf("%sok %zu %s: %s\n", ok ? "" : "not ", n_tap + 1, label, checks[n_tap]);
	n_tap++;
}

/*
 * A stop before the end: every check not yet made fails, after a line that
 * says why, and the block ends; a summary then counts all four checks,
 * however early the stop.
 */
static int bail(const char *label, const char *why)
{
	printf("# tep-check stopped: %s\n", why);
	while (n_tap < N_CHECKS)
		tap(false, label);
	printf("# drmacct-vm: end %s/tep-check rc=1\n", label);
	return 2;
}

int main(int argc, char **argv)
{
	static const char *const events[] = {
		"drmacct_client_open", "drmacct_client_close", "drmacct_job_begin",
		"drmacct_job_end", "drmacct_mem_change", "drmacct_device_name",
	};
	struct input in = { 0 };
	struct strv lib = { 0 };
	struct tep_handle *tep;
	bool header_ok = false, formats_ok = true, records_ok = true, same = true, all = true;
	size_t nformats = 0, unparsed = 0, unknown = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: tep-check SERIAL_LOG LABEL\n");
		return 2;
	}
	printf("# drmacct-vm: begin %s/tep-check\nTAP version 13\n1..%zu\n", argv[2], N_CHECKS);
	f = fopen(argv[1], "r");
	if (!f) {
		printf("# %s: %s\n", argv[1], strerror(errno));
		return bail(argv[2], "cannot open the serial log");
	}
	while (getline(&line, &cap, f) > 0) {
		if (take_line(&in, line)) {
			printf("# malformed line in %s: %s", argv[1], line);
			free(line);
			fclose(f);
			return bail(argv[2], "a malformed line in the serial log");
		}
	}
	free(line);
	fclose(f);

	tap(in.begun && in.ended && in.text.n > 0, argv[2]);

	tep = tep_alloc();
	if (!tep)
		return bail(argv[2], "out of memory");
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, PAGE);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	for (size_t i = 0; i < in.nfiles; i++) {
		struct blob *b = &in.files[i];

		if (b->len != b->want) {
			printf("# %s: %zu of %zu bytes\n", b->name, b->len, b->want);
			formats_ok = false;
			continue;
		}
		b->data[b->len] = '\0';
		if (!strcmp(b->name, "header_page")) {
			header_ok = !tep_parse_header_page(tep, (char *)b->data, b->len, 8);
		} else if (!strncmp(b->name, "format/", 7)) {
			enum tep_errno err = tep_parse_event(tep, (char *)b->data, b->len, "drmacct");

			nformats++;
			if (err) {
				char msg[256];

				tep_strerror(tep, err, msg, sizeof(msg));
				printf("# %s: %s\n", b->name, msg);
				formats_ok = false;
			}
		}
	}
	tap(header_ok && formats_ok && nformats == sizeof(events) / sizeof(events[0]), argv[2]);

	for (size_t i = 0; i < in.nfiles; i++) {
		struct blob *b = &in.files[i];
		struct kbuffer *kb;
		int cpu;

		if (strncmp(b->name, "cpu", 3) || sscanf(b->name + 3, "%d", &cpu) != 1)
			continue;
		kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
		if (!kb)
			return bail(argv[2], "out of memory");
		for (size_t off = 0; off + PAGE <= b->len; off += PAGE) {
			unsigned long long ts;
			void *data;

			if (kbuffer_load_subbuffer(kb, b->data + off)) {
				printf("# cpu%d: page at %zu does not load\n", cpu, off);
				records_ok = false;
				continue;
			}
			for (data = kbuffer_read_event(kb, &ts); data;
			     data = kbuffer_next_event(kb, &ts)) {
				struct tep_record rec = {
					.ts = ts, .cpu = cpu, .data = data,
					.size = kbuffer_event_size(kb),
				};
				struct trace_seq s;

				if (!tep_find_event_by_record(tep, &rec)) {
					unknown++;
					continue;
				}
				trace_seq_init(&s);
				tep_print_event(tep, &s, &rec, "%s: %s", TEP_PRINT_NAME,
						TEP_PRINT_INFO);
				trace_seq_terminate(&s);
				if (strstr(s.buffer, "FAILED TO PARSE") || strstr(s.buffer, "[UNKNOWN")) {
					unparsed++;
					printf("# does not parse: %s\n", s.buffer);
				}
				if (strv_push(&lib, s.buffer) < 0)
					return bail(argv[2], "out of memory");
				trace_seq_destroy(&s);
			}
		}
		kbuffer_free(kb);
	}
	if (unknown)
		printf("# %zu records of events other than drmacct's\n", unknown);
	tap(records_ok && !unparsed && !unknown && lib.n > 0, argv[2]);

	if (canonicalize(&in.text) || canonicalize(&lib))
		return bail(argv[2], "a record's text has no \": \" or memory ran out");
	/* (an empty list has no array: qsort() must not see its NULL) */
	if (in.text.n)
		qsort(in.text.v, in.text.n, sizeof(char *), cmp_str);
	if (lib.n)
		qsort(lib.v, lib.n, sizeof(char *), cmp_str);
	printf("# %zu events in the kernel's text, %zu records through libtraceevent\n",
	       in.text.n, lib.n);
	same = in.text.n == lib.n;
	for (size_t i = 0; same && i < lib.n; i++) {
		if (strcmp(in.text.v[i], lib.v[i])) {
			printf("# kernel:         %s\n# libtraceevent:  %s\n", in.text.v[i], lib.v[i]);
			same = false;
		}
	}
	for (size_t e = 0; e < sizeof(events) / sizeof(events[0]); e++) {
		size_t n = 0, len = strlen(events[e]);

		for (size_t i = 0; i < lib.n; i++)
			n += !strncmp(lib.v[i], events[e], len) && lib.v[i][len] == ':';
		printf("# %s: %zu records\n", events[e], n);
		all = all && n > 0;
	}
	tap(same && all, argv[2]);
	printf("# drmacct-vm: end %s/tep-check rc=%d\n", argv[2], n_fail ? 1 : 0);

	tep_free(tep);
	strv_free(&in.text);
	strv_free(&lib);
	for (size_t i = 0; i < in.nfiles; i++)
		free(in.files[i].data);
	free(in.files);
	return n_fail ? 1 : 0;
}
