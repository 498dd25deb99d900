/* SPDX-License-Identifier: MIT */
/*
 * output.h - what the drmacct commands print and how they end: output files,
 * safe text for terminals, byte sizes, discovery notes, exit statuses.
 */
#ifndef DRMACCT_OUTPUT_H
#define DRMACCT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "discover.h"

/*
 * Exit status for a command that could not be started, as a shell has it:
 * 127 when execvp() said ENOENT (not found), else 126 (found, not runnable).
 */
int cli_exec_status(int err);
/* Exit status of a waited-for command: its own, or 128 + the signal. */
int cli_wait_status(int wstatus);

/*
 * Text from fdinfo or /proc (comm, driver, names, finding messages) is data
 * any process controls. Before it goes to a terminal: @s itself when it is
 * printable UTF-8, else a copy in @buf (cut to @len - 1 bytes) with every
 * C0/C1 control, DEL and byte that is not well-formed UTF-8 shown as '?',
 * so no escape sequence or newline of a process name can reach the terminal
 * or break a table line. NULL gives "".
 * JSON output keeps the exact bytes (escaped) instead.
 */
const char *cli_printable(const char *s, char *buf, size_t len);
#define CLI_PRINTABLE_MAX 256

/*
 * Text as a terminal shows it, the same in every locale: the next
 * character of @s (at most @n bytes) as a code point in *@cp, '?' for what
 * cli_printable() replaces; returns the bytes it took (1 for a replaced
 * byte, 0 at the end).
 */
size_t cli_next_char(const char *s, size_t n, uint32_t *cp);
/*
 * Columns a code point takes on a terminal: 2 for East Asian wide and
 * full-width characters and emoji, 0 for combining marks and zero-width
 * characters, else 1.
 */
int cli_char_width(uint32_t cp);
/* Columns of the printable text of @s (see cli_printable()). */
size_t cli_text_width(const char *s);
/*
 * The printable text of @s left-aligned in @width columns: padded with
 * blanks, never cut (a longer text is kept whole, as printf's %-Ns does),
 * in @buf. For tables whose cells may hold non-ASCII names: printf pads by
 * bytes, which shifts every later column.
 */
const char *cli_pad(const char *s, size_t width, char *buf, size_t len);

/*
 * Write the @n bytes of text at @s to @f with the blanks at the end of each
 * line left out (a table pads its cells; nothing may follow the last).
 */
void cli_put_trimmed(FILE *f, const char *s, size_t n);

/* Bytes as "0", "512", "8.0K", "1.5M", "2.0G" (binary units). */
const char *cli_fmt_bytes(uint64_t b, char *buf, size_t len);

/*
 * The end of a command's output to stdout: @ret is how writing it went (0 or
 * -errno); stdout is flushed too. When either failed, says "writing the
 * output failed" on stderr. Returns 0 or a negative errno.
 */
int cli_output_done(const char *cmd, int ret);
/*
 * A write that failed with @err (-errno, or 0 to look at errno): true when it
 * was EPIPE (the reader of standard output went away). Then nothing is said
 * and main() exits with CLI_EXIT_PIPE.
 */
bool cli_write_failed_epipe(int err);
/* Flushes stdout; true when a write to it ever failed with EPIPE. */
bool cli_stdout_closed(void);

/*
 * Open output file @path for writing, "-" = stdout. @binary: refuse a
 * terminal. NULL with *@rc set (1: cannot create, 2: terminal) and the
 * message printed.
 */
FILE *cli_open_output(const char *cmd, const char *path, bool binary, int *rc);

/* Print the discovery shortfall (if any) as a note on stderr. */
void cli_note_discovery(const char *cmd, const struct dac_discover_stats *st);

#endif /* DRMACCT_OUTPUT_H */
