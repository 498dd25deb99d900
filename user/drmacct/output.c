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
