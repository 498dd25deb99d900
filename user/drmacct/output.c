// SPDX-License-Identifier: MIT
/*
 * output.c - what the commands print and how they end (output.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "output.h"

int cli_exec_status(int err)
{
	return err == ENOENT ? 127 : 126;
}

int cli_wait_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return CLI_EXIT_FAIL;
}

static bool stdout_closed;

bool cli_write_failed_epipe(int err)
{
	/* -EIO: a stdio or JSON writer error, errno still says which */
	if (err == -EPIPE || ((!err || err == -EIO) && errno == EPIPE))
		stdout_closed = true;
	return stdout_closed;
}

bool cli_stdout_closed(void)
{
	if (fflush(stdout) && errno == EPIPE)
		stdout_closed = true;
	return stdout_closed;
}

int cli_output_done(const char *cmd, int ret)
{
	if (!ret && fflush(stdout))
		ret = errno == EPIPE ? -EPIPE : -EIO;
	if (ret == -EIO && errno == EPIPE)
		ret = -EPIPE;	/* a sticky JSON writer error from a pipe */
	if (ret && !cli_write_failed_epipe(ret))
		cli_error(cmd, "writing the output failed");
	return ret;
}

FILE *cli_open_output(const char *cmd, const char *path, bool binary, int *rc)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "we") : stdout;

	if (!f) {
		cli_error(cmd, "cannot create %s: %s", path, strerror(errno));
		*rc = CLI_EXIT_FAIL;
		return NULL;
	}
	if (binary && isatty(fileno(f))) {
		if (f != stdout)
			fclose(f);
		*rc = cli_usage_error(cmd, "refusing to write binary data to a terminal; give "
				      "-o FILE or redirect standard output");
		return NULL;
	}
	return f;
}

/*
 * Bytes of a safe character at @s (@n left), or 0 for a byte to replace:
 * C0 controls, DEL, C1 controls (U+0080..U+009F, which some terminals obey
 * as CSI & co.) and anything that is not well-formed UTF-8.
 */
static size_t safe_char(const unsigned char *s, size_t n)
{
	size_t seq;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	seq = dac_utf8_seq(s, n);
	if (seq == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return seq;
}

const char *cli_printable(const char *s, char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i, o, k;

	if (!s)
		return "";
	n = strlen(s);
	for (i = 0; i < n; i += k)
		if (!(k = safe_char(u + i, n - i)))
			break;
	if (i == n)
		return s;
	if (!len)
		return "";
	for (i = 0, o = 0; i < n && o + 1 < len; i += k ? k : 1) {
		k = safe_char(u + i, n - i);
		if (!k) {
			buf[o++] = '?';
		} else if (o + k < len) {
			memcpy(buf + o, s + i, k);
			o += k;
		} else {
			break;
		}
	}
	buf[o] = '\0';
	return buf;
}

size_t cli_next_char(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k;

	if (!n || !*u)
		return 0;
	k = safe_char(u, n);
	if (!k) {
		*cp = '?';
		return 1;
	}
	if (k == 1)
		*cp = u[0];
	else if (k == 2)
		*cp = (uint32_t)(u[0] & 0x1f) << 6 | (u[1] & 0x3f);
	else if (k == 3)
		*cp = (uint32_t)(u[0] & 0x0f) << 12 | (uint32_t)(u[1] & 0x3f) << 6 | (u[2] & 0x3f);
	else
		*cp = (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3f) << 12 |
		      (uint32_t)(u[2] & 0x3f) << 6 | (u[3] & 0x3f);
	return k;
}

/* [first, last] code point ranges, sorted. */
struct cp_range {
	uint32_t first, last;
};

static bool in_ranges(uint32_t cp, const struct cp_range *r, size_t n)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cp < r[mid].first)
			hi = mid;
		else if (cp > r[mid].last)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

int cli_char_width(uint32_t cp)
{
	/* combining marks, zero-width space/joiners, variation selectors */
	static const struct cp_range zero[] = {
		{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd }, { 0x0610, 0x061a },
		{ 0x064b, 0x065f }, { 0x0e31, 0x0e31 }, { 0x0e34, 0x0e3a }, { 0x0e47, 0x0e4e },
		{ 0x1ab0, 0x1aff }, { 0x1dc0, 0x1dff }, { 0x200b, 0x200f }, { 0x2028, 0x202e },
		{ 0x2060, 0x2064 }, { 0x20d0, 0x20ff }, { 0x302a, 0x302d }, { 0x3099, 0x309a },
		{ 0xfe00, 0xfe0f }, { 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff }, { 0xe0100, 0xe01ef },
	};
	/* East Asian Wide and Fullwidth, and the emoji blocks */
	static const struct cp_range wide[] = {
		{ 0x1100, 0x115f }, { 0x231a, 0x231b }, { 0x2329, 0x232a }, { 0x23e9, 0x23ec },
		{ 0x2614, 0x2615 }, { 0x2e80, 0x303e }, { 0x3041, 0x33ff }, { 0x3400, 0x4dbf },
		{ 0x4e00, 0x9fff }, { 0xa000, 0xa4cf }, { 0xa960, 0xa97f }, { 0xac00, 0xd7a3 },
		{ 0xf900, 0xfaff }, { 0xfe10, 0xfe19 }, { 0xfe30, 0xfe6f }, { 0xff00, 0xff60 },
		{ 0xffe0, 0xffe6 }, { 0x16fe0, 0x16fe4 }, { 0x17000, 0x18cff }, { 0x1b000, 0x1b2ff },
		{ 0x1f004, 0x1f004 }, { 0x1f0cf, 0x1f0cf }, { 0x1f18e, 0x1f18e },
		{ 0x1f191, 0x1f19a }, { 0x1f200, 0x1f251 }, { 0x1f300, 0x1f64f },
		{ 0x1f680, 0x1f6ff }, { 0x1f900, 0x1f9ff }, { 0x1fa70, 0x1faff },
		{ 0x20000, 0x2fffd }, { 0x30000, 0x3fffd },
	};

	if (in_ranges(cp, zero, sizeof(zero) / sizeof(zero[0])))
		return 0;
	return in_ranges(cp, wide, sizeof(wide) / sizeof(wide[0])) ? 2 : 1;
}

size_t cli_text_width(const char *s)
{
	size_t n = s ? strlen(s) : 0, w = 0, k;
	uint32_t cp;

	for (size_t i = 0; i < n; i += k) {
		k = cli_next_char(s + i, n - i, &cp);
		if (!k)
			break;
		w += (size_t)cli_char_width(cp);
	}
	return w;
}

const char *cli_pad(const char *s, size_t width, char *buf, size_t len)
{
	char tmp[CLI_PRINTABLE_MAX];
	const char *p = cli_printable(s, tmp, sizeof(tmp));
	size_t w = cli_text_width(p), n = strlen(p);

	if (!len)
		return "";
	if (n >= len)
		n = len - 1;
	memmove(buf, p, n);
	while (w < width && n + 1 < len) {
		buf[n++] = ' ';
		w++;
	}
	buf[n] = '\0';
	return buf;
}

void cli_put_trimmed(FILE *f, const char *s, size_t n)
{
	const char *end = s + n;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;

		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		fwrite(s, 1, (size_t)(e - s), f);
		if (!nl)
			break;
		fputc('\n', f);
		s = nl + 1;
	}
}

const char *cli_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double v = (double)b;
	int u = -1;

	if (b < 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)b);
		return buf;
	}
	while (v >= 1024.0 && u < 5) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
	return buf;
}

void cli_note_discovery(const char *cmd, const struct dac_discover_stats *st)
{
	char buf[512];

	dac_discover_describe(st, buf, sizeof(buf));
	if (!buf[0])
		return;
	/* The root hint only when it would help. */
	fprintf(stderr, "drmacct %s: note: %s%s\n", cmd, buf,
		geteuid() && (st->denied_procs || st->denied_fds || st->denied_stat_fds) ?
		"; run as root to see every client" : "");
}
