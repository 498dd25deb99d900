// SPDX-License-Identifier: MIT
/*
 * fdinfo_read.c - reading fdinfo texts for the parser: by path, at a
 * directory fd (the /proc walker's hot path) and from any fd.
 *
 * A text up to DAC_TEXT_FIRST bytes is read straight into the allocation
 * the result will have, usually the one the last result gave back;
 * longer texts grow on the heap. dac_fdinfo_parse() copies the caller's
 * text into one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdinfo_priv.h"

/* -errno for what is not a file of text (a directory, a device), else 0. */
static int dac_check_type(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return -EINVAL;
	return 0;
}

static bool dac_profile_ok(enum dac_profile profile)
{
	return profile == DAC_PROFILE_CURRENT || profile == DAC_PROFILE_2022;
}

/*
 * Make room for more bytes after @len in *@buf (capacity *@cap); *@buf may
 * be @first, the result's allocation the reading began in, which is not
 * freed here.
 */
static int dac_room(char **buf, size_t *cap, size_t len, const char *first)
{
	size_t ncap = *cap * 2;
	char *nb;

	if (len < *cap)
		return 0;
	if (ncap < *cap)
		return -ENOMEM;
	nb = *buf == first ? dac__malloc(ncap) : dac__realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	if (*buf == first)
		memcpy(nb, first, len);
	*buf = nb;
	*cap = ncap;
	return 0;
}

/*
 * Read @fd to its end and parse; with @own, close @fd once read, before the
 * parse (on every path). Closing first is cheaper: close() then runs while
 * the kernel's own code and data of the read are still in the CPU's
 * caches, not after the parser has displaced them (about 40 ns a file in
 * bench_parse). @typed: the caller has checked the type
 * and @short_eof says whether a short read ends the file; !@typed: the fd
 * was opened by path from an fdinfo directory and is fstat()ed only when
 * the first read leaves a doubt (empty, or the buffer filled).
 *
 * The first DAC_TEXT_FIRST bytes are read into the result's allocation
 * (usually the one the last result freed: no malloc() at all); a longer
 * text moves to a buffer of its own and is copied into one of its size.
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
DAC_HOT
static int dac_read_parse(int fd, bool own, bool typed, bool short_eof,
			  enum dac_profile profile, struct dac_fdinfo *out)
{
	size_t size, len = 0, cap = DAC_TEXT_FIRST;
	char *block = dac__block_for(DAC_TEXT_FIRST, &size), *buf = block;
	struct stat st;
	ssize_t n;
	int err;

	if (!block) {
		if (own)
			close(fd);
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	for (;;) {
		size_t want;

		err = dac_room(&buf, &cap, len, block);
		if (err)
			goto out;
		want = cap - len;
		n = read(fd, buf + len, want);
		if (n < 0) {
			err = errno;
			if (err == EINTR)
				continue;
			err = -err;
			goto out;
		}
		if (!typed && (n == 0 || (size_t)n == want)) {
			/* Empty, or maybe more: what is it? (once) */
			typed = true;
			if (fstat(fd, &st)) {
				err = -errno;
				goto out;
			}
			err = dac_check_type(&st);
			if (err)
				goto out;
			short_eof = S_ISREG(st.st_mode);
		}
		len += (size_t)n;
		if (n == 0 || (short_eof && (size_t)n < want))
			break;
	}
	if (own)
		close(fd);
	if (buf == block)
		return dac__parse_block(block, size, len, profile, out);
	err = dac__parse_text(buf, len, profile, out);
	free(buf);
	dac__block_put(block, size);
	return err;
out:
	if (own)
		close(fd);
	if (buf != block)
		free(buf);
	dac__block_put(block, size);
	memset(out, 0, sizeof(*out));
	return err;
}

/* dac_fdinfo_read_fd(), closing @fd with @own (on every path). */
static int dac_read_checked(int fd, bool own, enum dac_profile profile, struct dac_fdinfo *out)
{
	struct stat st;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!dac_profile_ok(profile))
		err = -EINVAL;
	else if (fstat(fd, &st))
		err = -errno;
	else
		err = dac_check_type(&st);
	if (err) {
		if (own)
			close(fd);
		return err;
	}
	/* Not opened by us: only a regular file ends at a short read. */
	return dac_read_parse(fd, own, true, S_ISREG(st.st_mode), profile, out);
}

int dac_fdinfo_read_fd(int fd, enum dac_profile profile, struct dac_fdinfo *out)
{
	if (!out)
		return -EINVAL;
	return dac_read_checked(fd, false, profile, out);
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
	if (fd < 0) {
		int err = -errno;

		memset(out, 0, sizeof(*out));
		return err;
	}
	if (!at_fdinfo)
		return dac_read_checked(fd, true, profile, out);
	if (!dac_profile_ok(profile)) {
		close(fd);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return dac_read_parse(fd, true, false, true, profile, out);
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

DAC_HOT
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

int dac_fdinfo_parse(const char *buf, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out)
{
	if (!out)
		return -EINVAL;
	if ((!buf && len) || !dac_profile_ok(profile)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return dac__parse_text(len ? buf : "", len, profile, out);
}
