// SPDX-License-Identifier: MIT
/*
 * procinfo.c - the command line and cgroup v2 path of a process from /proc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procinfo.h"

/* The whole of @proc_root/@pid/@name, NUL-terminated; *@len its bytes. */
static char *read_whole(const char *proc_root, pid_t pid, const char *name, size_t *len)
{
	size_t cap = 512, n = 0;
	char path[4096], *buf = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", proc_root ? proc_root : "/proc", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t r;

		if (!buf || n + 1 >= cap) {
			char *nb = realloc(buf, buf ? cap *= 2 : cap);

			if (!nb)
				goto fail;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

char *cli_proc_cmdline(const char *proc_root, pid_t pid)
{
	size_t n, i;
	char *s = read_whole(proc_root, pid, "cmdline", &n);

	if (!s)
		return NULL;
	while (n && s[n - 1] == '\0')
		n--;
	if (!n) {
		free(s);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	s[n] = '\0';
	return s;
}

char *cli_proc_cgroup(const char *proc_root, pid_t pid)
{
	size_t n;
	char *s = read_whole(proc_root, pid, "cgroup", &n), *line, *end, *ret = NULL;

	if (!s)
		return NULL;
	for (line = s; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (!strncmp(line, "0::", 3) && line[3] == '/') {
			ret = strndup(line + 3, (size_t)(end - line - 3));
			break;
		}
	}
	free(s);
	return ret;
}
