/* SPDX-License-Identifier: MIT */
/*
 * proc_tree.h - build synthetic /proc trees for discovery tests.
 *
 * Layout (see include/drmacct/discover.h): ROOT/PID/comm, ROOT/PID/fd/N,
 * ROOT/PID/fdinfo/N. A DRM fd is marked either with a symlink to a char
 * device node made with mknod (PROC_TREE_MKNOD, needs CAP_MKNOD) or with a
 * symlink to the literal "/dev/char/M:m" (PROC_TREE_DEVCHAR, unprivileged).
 * Every function returns 0 or -errno.
 */
#ifndef DRMACCT_PROC_TREE_H
#define DRMACCT_PROC_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

enum proc_tree_mode {
	PROC_TREE_DEVCHAR = 0,
	PROC_TREE_MKNOD,
};

struct proc_tree {
	char root[PATH_MAX / 2 + 16];	/* the tree: pass as proc_root */
	char base[PATH_MAX / 2];	/* mkdtemp dir holding root/ and dev/ */
	enum proc_tree_mode mode;
};

/* Makes a fresh tree under $TMPDIR (or /tmp). */
int proc_tree_init(struct proc_tree *pt, enum proc_tree_mode mode);
/* Removes everything; safe to call twice or after a failed init. */
void proc_tree_cleanup(struct proc_tree *pt);
/* True when mknod of a char device works here (root, CAP_MKNOD). */
bool proc_tree_can_mknod(void);

/* ROOT/PID/{fd,fdinfo}/ and ROOT/PID/comm ("comm\n"); comm NULL: no file. */
int proc_tree_add_proc(struct proc_tree *pt, pid_t pid, const char *comm);
/* DRM/accel fd @fd of @pid on char device @maj:@min with fdinfo @text. */
int proc_tree_add_drm_fd(struct proc_tree *pt, pid_t pid, int fd, unsigned int maj,
			 unsigned int min, const char *text);
/* A non-DRM fd: symlink to @target (e.g. "/dev/null"), fdinfo "pos: 0". */
int proc_tree_add_link_fd(struct proc_tree *pt, pid_t pid, int fd, const char *target);
/* Replace the fdinfo text of an fd atomically (rename). */
int proc_tree_set_fdinfo(struct proc_tree *pt, pid_t pid, int fd, const char *text);
/*
 * Replace the fdinfo of (@pid, @fd) with a FIFO that a child process feeds,
 * one text per read, so that a command reading it twice (two samples) sees
 * exactly what the test chose, whatever the timing: the k-th counted read
 * gets @texts[k] (the last one once k >= @n). Reads are counted once the
 * file @gate exists (NULL: from the start; earlier reads get @texts[0]);
 * after @n counted reads the file @done is created (NULL: none). Each
 * read is one open of the FIFO, served whole, and the next text waits
 * until that reader has closed it. Returns the feeder's pid (> 0) or
 * -errno; stop it with proc_tree_feed_stop() once the command exited (a
 * reader that opens the FIFO after that waits for ever).
 */
pid_t proc_tree_feed(struct proc_tree *pt, pid_t pid, int fd, const char *const *texts,
		     size_t n, const char *gate, const char *done);
/* Kill and reap a feeder of proc_tree_feed(); 0 or -errno. */
int proc_tree_feed_stop(pid_t feeder);
/* Remove one entry: "fd/N", "fdinfo/N", "comm", "fd" (dir), ... relative to PID/. */
int proc_tree_remove(struct proc_tree *pt, pid_t pid, const char *rel);
/* ROOT/PID/@rel with @len bytes of @data (NULs too: "cmdline"). */
int proc_tree_write(struct proc_tree *pt, pid_t pid, const char *rel, const void *data,
		    size_t len);
/* chmod ROOT/PID/@rel */
int proc_tree_chmod(struct proc_tree *pt, pid_t pid, const char *rel, mode_t mode);
/* Path ROOT/PID/@rel into @buf. */
void proc_tree_path(const struct proc_tree *pt, pid_t pid, const char *rel, char *buf,
		    size_t len);

#endif /* DRMACCT_PROC_TREE_H */
