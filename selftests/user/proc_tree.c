// SPDX-License-Identifier: MIT
/*
 * proc_tree.c - synthetic /proc trees for tests. See proc_tree.h.
 */
#define _GNU_SOURCE
#include "proc_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_data(const char *path, const void *data, size_t len)
{
	const char *text = data;
	size_t off = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		off += (size_t)n;
	}
	if (close(fd))
		return -errno;
	return 0;
}

static int write_file(const char *path, const char *text)
{
	return write_data(path, text, strlen(text));
}

int proc_tree_write(struct proc_tree *pt, pid_t pid, const char *rel, const void *data,
		    size_t len)
{
	char path[PATH_MAX + 64];

	proc_tree_path(pt, pid, rel, path, sizeof(path));
	return write_data(path, data, len);
}

void proc_tree_path(const struct proc_tree *pt, pid_t pid, const char *rel, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s/%d%s%s", pt->root, (int)pid, rel && *rel ? "/" : "",
		 rel ? rel : "");
}

bool proc_tree_can_mknod(void)
{
	char dir[] = "/tmp/proc_tree_probe.XXXXXX", node[64];
	bool ok;

	if (!mkdtemp(dir))
		return false;
	snprintf(node, sizeof(node), "%s/n", dir);
	ok = mknod(node, S_IFCHR | 0600, makedev(226, 250)) == 0;
	unlink(node);
	rmdir(dir);
	return ok;
}

int proc_tree_init(struct proc_tree *pt, enum proc_tree_mode mode)
{
	const char *tmp = getenv("TMPDIR");
	char dev[PATH_MAX + 8];

	memset(pt, 0, sizeof(*pt));
	pt->mode = mode;
	snprintf(pt->base, sizeof(pt->base), "%s/drmacct-proc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(pt->base)) {
		pt->base[0] = '\0';
		return -errno;
	}
	snprintf(pt->root, sizeof(pt->root), "%s/proc", pt->base);
	snprintf(dev, sizeof(dev), "%s/dev", pt->base);
	if (mkdir(pt->root, 0755) || mkdir(dev, 0755)) {
		int e = errno;

		proc_tree_cleanup(pt);
		return -e;
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) ? -1 : 0;
	return unlink(path) ? -1 : 0;
}

static int chmod_open(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, 0755);
	(void)sb;
	return 0;
}

void proc_tree_cleanup(struct proc_tree *pt)
{
	if (!pt->base[0])
		return;
	/* Tests chmod things to 000: open directories up first. */
	chmod(pt->base, 0755);
	nftw(pt->base, chmod_open, 16, FTW_PHYS);
	nftw(pt->base, chmod_open, 16, FTW_PHYS);
	nftw(pt->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	pt->base[0] = '\0';
	pt->root[0] = '\0';
}

int proc_tree_add_proc(struct proc_tree *pt, pid_t pid, const char *comm)
{
	char path[PATH_MAX + 32], text[256];

	proc_tree_path(pt, pid, NULL, path, sizeof(path));
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	proc_tree_path(pt, pid, "fd", path, sizeof(path));
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	proc_tree_path(pt, pid, "fdinfo", path, sizeof(path));
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	if (!comm)
		return 0;
	proc_tree_path(pt, pid, "comm", path, sizeof(path));
	snprintf(text, sizeof(text), "%s\n", comm);
	return write_file(path, text);
}

int proc_tree_set_fdinfo(struct proc_tree *pt, pid_t pid, int fd, const char *text)
{
	char path[PATH_MAX + 64], tmp[PATH_MAX + 80], rel[48];
	int ret;

	snprintf(rel, sizeof(rel), "fdinfo/%d", fd);
	proc_tree_path(pt, pid, rel, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ret = write_file(tmp, text);
	if (ret)
		return ret;
	if (rename(tmp, path))
		return -errno;
	return 0;
}

/* The feeder: serves @texts over the FIFO @path for ever (see proc_tree.h). */
static void feed(const char *path, const char *const *texts, size_t n, const char *gate,
		 const char *done)
{
	bool counting = !gate;
	size_t k = 0;

	for (;;) {
		const char *t;
		size_t len, off = 0;
		struct pollfd pfd;
		int w = open(path, O_WRONLY | O_CLOEXEC);	/* waits for a reader */

		if (w < 0)
			_exit(1);
		if (!counting && !access(gate, F_OK))
			counting = true;
		t = texts[counting && k < n ? k : counting ? n - 1 : 0];
		len = strlen(t);
		while (off < len) {
			ssize_t m = write(w, t + off, len - off);

			if (m <= 0)
				break;	/* the reader left early: EPIPE */
			off += (size_t)m;
		}
		/* one text per reader: wait until it closed its end */
		pfd.fd = w;
		pfd.events = 0;
		while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			;
		close(w);
		if (counting && ++k == n && done) {
			int d = open(done, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (d >= 0)
				close(d);
		}
	}
}

pid_t proc_tree_feed(struct proc_tree *pt, pid_t pid, int fd, const char *const *texts,
		     size_t n, const char *gate, const char *done)
{
	char path[PATH_MAX + 64], rel[48];
	pid_t child;

	if (!n)
		return -EINVAL;
	snprintf(rel, sizeof(rel), "fdinfo/%d", fd);
	proc_tree_path(pt, pid, rel, path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		return -errno;
	if (mkfifo(path, 0644))
		return -errno;
	child = fork();
	if (child < 0)
		return -errno;
	if (!child) {
		signal(SIGPIPE, SIG_IGN);
		feed(path, texts, n, gate, done);
	}
	return child;
}

int proc_tree_feed_stop(pid_t feeder)
{
	int st;

	if (feeder <= 0)
		return -EINVAL;
	if (kill(feeder, SIGKILL))
		return -errno;
	while (waitpid(feeder, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int proc_tree_add_link_fd(struct proc_tree *pt, pid_t pid, int fd, const char *target)
{
	char path[PATH_MAX + 64], rel[48];

	snprintf(rel, sizeof(rel), "fd/%d", fd);
	proc_tree_path(pt, pid, rel, path, sizeof(path));
	if (symlink(target, path))
		return -errno;
	return proc_tree_set_fdinfo(pt, pid, fd, "pos:\t0\nflags:\t02\nmnt_id:\t1\n");
}

int proc_tree_add_drm_fd(struct proc_tree *pt, pid_t pid, int fd, unsigned int maj,
			 unsigned int min, const char *text)
{
	char target[PATH_MAX + 64], path[PATH_MAX + 64], rel[48];
	struct stat sb;

	if (pt->mode == PROC_TREE_MKNOD) {
		snprintf(target, sizeof(target), "%s/dev/char-%u-%u", pt->base, maj, min);
		if (stat(target, &sb) &&
		    mknod(target, S_IFCHR | 0600, makedev(maj, min)))
			return -errno;
	} else {
		snprintf(target, sizeof(target), "/dev/char/%u:%u", maj, min);
	}
	snprintf(rel, sizeof(rel), "fd/%d", fd);
	proc_tree_path(pt, pid, rel, path, sizeof(path));
	if (symlink(target, path))
		return -errno;
	return proc_tree_set_fdinfo(pt, pid, fd, text);
}

static int rm_tree(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb))
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return unlink(path) ? -errno : 0;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

int proc_tree_remove(struct proc_tree *pt, pid_t pid, const char *rel)
{
	char path[PATH_MAX + 64];

	proc_tree_path(pt, pid, rel, path, sizeof(path));
	return rm_tree(path);
}

int proc_tree_chmod(struct proc_tree *pt, pid_t pid, const char *rel, mode_t mode)
{
	char path[PATH_MAX + 64];

	proc_tree_path(pt, pid, rel, path, sizeof(path));
	return chmod(path, mode) ? -errno : 0;
}
