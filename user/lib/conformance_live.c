// SPDX-License-Identifier: MIT
/*
 * conformance_live.c - collect what the conformance checks judge, on a real
 * device: the tool's own clients (open, dup, fork, open while others are
 * open, close and reopen), every other process's files on the device (ids
 * only), and the clients of a workload command, read every interval.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "conformance.h"
#include "drm_client.h"

#define NSEC_PER_SEC 1000000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void logf_(const struct dac_conf_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(const struct dac_conf_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->log)
		return;
	va_start(ap, fmt);
	vfprintf(o->log, fmt, ap);
	va_end(ap);
}

/* Whole file into a malloc'd buffer; 0 or -errno. Times around open..read. */
static int slurp(const char *path, char **buf, size_t *len, uint64_t *t0, uint64_t *t1)
{
	size_t cap = 4096, n = 0;
	char *b = NULL;
	int fd, err = 0;

	*t0 = mono_ns();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (!b || n == cap) {
			char *t = realloc(b, b ? cap *= 2 : cap);

			if (!t) {
				err = -ENOMEM;
				break;
			}
			b = t;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	*t1 = mono_ns();
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}

static int read_into(struct dac_conf *c, int file, pid_t pid, int fd, const char *via)
{
	char path[64], *text;
	uint64_t t0, t1;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	ret = slurp(path, &text, &len, &t0, &t1);
	if (ret)
		return ret;
	ret = dac_conf_read(c, file, via, t0, t1, text, len);
	free(text);
	return ret;
}

/* ---- the device ------------------------------------------------------------ */

/*
 * What a file opened on @node now shows: its enum dac_stats, and its
 * drm-client-id in *@id when it prints one (*@has_id); its driver's name
 * in @drv ("" when it does not say). -errno when the node cannot be opened
 * or its fdinfo read.
 */
static int probe_node(const char *node, int *stats, bool *has_id, uint64_t *id, char *drv,
		      size_t drvlen)
{
	struct dac_fdinfo fi;
	char path[64];
	int fd, ret;

	drv[0] = '\0';
	fd = open(node, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dac_drm_driver_name(fd, drv, drvlen))
		drv[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ret = dac_fdinfo_read_file(path, DAC_PROFILE_CURRENT, &fi);
	close(fd);
	if (ret < 0)
		return ret;
	*stats = dac_fdinfo_stats(&fi);
	*has_id = fi.has_client_id;
	*id = fi.client_id;
	dac_fdinfo_free(&fi);
	return 0;
}

/* The render nodes, then the accel nodes, in name order. */
static int list_nodes(glob_t *g)
{
	int r = glob("/dev/dri/renderD*", 0, NULL, g);

	if (r && r != GLOB_NOMATCH)
		return -ENOMEM;
	r = glob("/dev/accel/accel*", r == GLOB_NOMATCH ? 0 : GLOB_APPEND, NULL, g);
	if (r && r != GLOB_NOMATCH)
		return -ENOMEM;
	return g->gl_pathc ? 0 : -ENOENT;
}

static const char *base_name(const char *p)
{
	return strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
}

/*
 * Without --device: the first node whose driver prints usage stats (engine
 * or memory keys), else the first with core keys, else the first node; and
 * in @why (info->chosen) which, and what the others print.
 */
static int pick_device(char *out, size_t len, char *why, size_t whylen)
{
	static const char *const what[] = { "prints no usage stats", "prints core keys only",
					    "prints usage stats" };
	int best = -1, best_stats = -1, ret;
	size_t off = 0;
	glob_t g;

	ret = list_nodes(&g);
	if (ret)
		return ret;
	for (size_t i = 0; i < g.gl_pathc && best_stats < DAC_STATS_FULL; i++) {
		char drv[64];
		bool has_id;
		uint64_t id;
		int stats;

		if (probe_node(g.gl_pathv[i], &stats, &has_id, &id, drv, sizeof(drv)))
			continue;
		if (stats > best_stats) {
			best = (int)i;
			best_stats = stats;
		}
	}
	if (best < 0)
		best = 0;	/* none could be read: the run says why */
	snprintf(out, len, "%s", g.gl_pathv[best]);
	why[0] = '\0';
	if (best_stats == DAC_STATS_FULL)
		off = (size_t)snprintf(why, whylen, "%s: the first node whose driver prints usage stats",
				       base_name(out));
	else if (best_stats == DAC_STATS_CORE)
		off = (size_t)snprintf(why, whylen,
				       "%s: no node's driver prints usage stats; the first with core keys",
				       base_name(out));
	else if (best_stats == DAC_STATS_NONE)
		off = (size_t)snprintf(why, whylen, "%s: no node's driver prints usage stats",
				       base_name(out));
	else
		off = (size_t)snprintf(why, whylen, "%s: no node could be opened", base_name(out));
	/* what the nodes before it print: why they were passed over */
	for (int i = 0; i < best && off < whylen; i++) {
		char drv[64];
		bool has_id;
		uint64_t id;
		int stats, r = probe_node(g.gl_pathv[i], &stats, &has_id, &id, drv, sizeof(drv));

		off += (size_t)snprintf(why + off, whylen - off, "; %s%s%s%s %s",
					base_name(g.gl_pathv[i]), drv[0] ? " (" : "", drv,
					drv[0] ? ")" : "",
					r ? "cannot be opened" : what[stats]);
	}
	globfree(&g);
	return 0;
}

/*
 * Every other render or accel node, opened once while our files on the
 * device are open: their drm-client-ids, for client-id-unique when the
 * device prints no drm-pdev. Nodes that cannot be opened are left out.
 */
static int other_devices(struct dac_conf *c, dev_t rdev, size_t *n)
{
	glob_t g;
	int ret = list_nodes(&g);

	*n = 0;
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	for (size_t i = 0; i < g.gl_pathc && !ret; i++) {
		char label[96];
		struct stat st;
		char drv[64];
		bool has_id;
		uint64_t id;
		int stats;

		if (stat(g.gl_pathv[i], &st) || st.st_rdev == rdev ||
		    probe_node(g.gl_pathv[i], &stats, &has_id, &id, drv, sizeof(drv)) || !has_id)
			continue;
		snprintf(label, sizeof(label), "a file on %s%s%s%s", base_name(g.gl_pathv[i]),
			 drv[0] ? " (" : "", drv, drv[0] ? ")" : "");
		ret = dac_conf_other_device_id(c, label, id);
		*n += !ret;
	}
	globfree(&g);
	return ret;
}

/* The PCI address of char device @rdev in sysfs, or "" when it is not PCI. */
static void sysfs_pdev(dev_t rdev, char *out, size_t len)
{
	char link[128], *dev, *sub, *base;

	out[0] = '\0';
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(rdev), minor(rdev));
	dev = realpath(link, NULL);
	if (!dev)
		return;
	{
		char *p;

		if (asprintf(&p, "%s/subsystem", dev) >= 0) {
			sub = realpath(p, NULL);
			free(p);
			base = sub ? strrchr(sub, '/') : NULL;
			if (base && !strcmp(base + 1, "pci")) {
				base = strrchr(dev, '/');
				snprintf(out, len, "%s", base ? base + 1 : dev);
			}
			free(sub);
		}
	}
	free(dev);
}

/* Does /proc/@pid/fd/@fd refer to the device @rdev? */
static bool fd_is_device(pid_t pid, const char *fdname, dev_t rdev)
{
	char path[320];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, fdname);
	return !stat(path, &st) && S_ISCHR(st.st_mode) && st.st_rdev == rdev;
}

static void comm_of(pid_t pid, char *out, size_t len)
{
	char path[64], *t = NULL;
	uint64_t a, b;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	out[0] = '\0';
	if (slurp(path, &t, &n, &a, &b))
		return;
	while (n && (t[n - 1] == '\n'))
		n--;
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)t[i]))
			t[i] = '?';
	snprintf(out, len, "%.*s", (int)n, t);
	free(t);
}

/*
 * kcmp(): 0 same file, 1 different, -1 cannot tell. A descriptor that is
 * not open (EBADF) or a process that is gone (ESRCH) is "different": the
 * file seen before is not there any more. Taking it for "cannot tell" filed
 * the text of a file opened and closed again on the same number between
 * two checks under the old file (a client id that seemed to change).
 */
static int same_file(pid_t p1, int fd1, pid_t p2, int fd2)
{
	long r = syscall(SYS_kcmp, p1, p2, KCMP_FILE, fd1, fd2);

	if (r < 0)
		return errno == EBADF || errno == ESRCH ? 1 : -1;
	return r == 0 ? 0 : 1;
}

/*
 * A reference of our own to the open file behind (@pid, @fd), so that a
 * later poll can tell the same file from a new one the process opened on
 * the same fd number (kcmp against a reference that outlives the fd).
 * -1 when the kernel or the permissions do not allow it.
 */
static int grab_file(pid_t pid, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), r;

	if (pfd < 0)
		return -1;
	r = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	return r < 0 ? -1 : r;
#else
	(void)pid;
	(void)fd;
	return -1;
#endif
}

/* drm-client-id of a text, without a full parse. */
static bool text_client_id(const char *t, size_t n, unsigned long long *id)
{
	const char *k = "drm-client-id:";
	size_t kl = strlen(k);

	for (size_t i = 0; i + kl <= n; ) {
		const char *nl = memchr(t + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - t) : n;

		if (end - i > kl && !memcmp(t + i, k, kl)) {
			char buf[32];
			size_t j = i + kl, m = 0;

			while (j < end && isspace((unsigned char)t[j]))
				j++;
			while (j < end && m < sizeof(buf) - 1 && isdigit((unsigned char)t[j]))
				buf[m++] = t[j++];
			buf[m] = '\0';
			if (!m)
				return false;
			*id = strtoull(buf, NULL, 10);
			return true;
		}
		i = end + 1;
	}
	return false;
}

/* ---- holders of watched files (other processes, the workload) ---------------- */

struct holder {
	pid_t pid;
	int fd;
	int ref;	/* our reference to the same open file (pidfd_getfd), or -1 */
	int file;
	bool has_id;
	unsigned long long id;
	unsigned long tick;	/* last poll it was seen in */
};

struct watch {
	struct holder *h;
	size_t n, cap;
	unsigned long tick;
	bool kcmp_missing;
	bool grab;	/* keep a reference per holder (polled watches only) */
	size_t nfiles;
};

/* kcmp() of (@pid, @fd) with holder @x: 0 same file, 1 different, -1 cannot tell */
static int same_as_holder(pid_t pid, int fd, const struct holder *x)
{
	if (x->ref >= 0)
		return same_file(getpid(), x->ref, pid, fd);
	return same_file(pid, fd, x->pid, x->fd);
}

/* Room for one more element in *@v (@n of *@cap used, @size each): 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t nc;
	void *t;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	t = realloc(*v, nc * size);
	if (!t)
		return -ENOMEM;
	*v = t;
	*cap = nc;
	return 0;
}

static struct holder *watch_add(struct watch *w)
{
	if (grow((void **)&w->h, &w->cap, w->n, sizeof(*w->h)))
		return NULL;
	memset(&w->h[w->n], 0, sizeof(w->h[0]));
	w->h[w->n].ref = -1;
	return &w->h[w->n++];
}

/* Another holder of @file seen in this poll read it already: one read per poll. */
static bool file_read_now(const struct watch *w, int file, size_t self)
{
	for (size_t i = 0; i < w->n; i++)
		if (i != self && w->h[i].file == file && w->h[i].tick == w->tick &&
		    w->h[i].fd >= 0)
			return true;
	return false;
}

/* @x no longer holds its file; the file is closed when no holder is left. */
static void holder_gone(struct dac_conf *c, struct watch *w, struct holder *x)
{
	bool alive = false;

	x->fd = -1;
	if (x->ref >= 0)
		close(x->ref);
	x->ref = -1;
	for (size_t j = 0; j < w->n; j++)
		if (w->h[j].fd >= 0 && w->h[j].file == x->file)
			alive = true;
	if (!alive)
		dac_conf_close(c, x->file);
}

/* After a poll: holders not seen are gone; a file with no holder left closed. */
static void watch_reap(struct dac_conf *c, struct watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->h[i].fd >= 0 && w->h[i].tick != w->tick)
			holder_gone(c, w, &w->h[i]);
}

/* Drop every reference (the run is over). */
static void watch_free(struct watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->h[i].ref >= 0)
			close(w->h[i].ref);
	free(w->h);
}

/*
 * One fd (@pid, @fd) on the device seen in this poll. It is the file it was
 * in the poll before (the same fd of the same process, seen without a gap:
 * a driver whose id then changes fails client-id-stable), or a file another
 * holder has open (kcmp; without kcmp, the holder with the same client id),
 * or a new file. Each file is read once per poll.
 *
 * The process may close the fd and open another file on the same number at
 * any time (a tool that probes a device, closes it and opens it again), so
 * the reference that identifies the file is taken before its fdinfo is
 * read and compared again after: a text read while the fd changed hands is
 * dropped (the next poll reads the new file), never filed under the other
 * file, where its client id would look unstable.
 */
static int watch_fd(struct dac_conf *c, struct watch *w, pid_t pid, int fd, unsigned int flags)
{
	char path[64], *text, label[96], comm[32], via[48];
	unsigned long long id = 0;
	struct holder *h = NULL;
	uint64_t t0, t1;
	size_t len, i;
	bool has_id;
	int ret, file = -1, ref = -1;

	for (i = 0; i < w->n; i++) {
		struct holder *x = &w->h[i];

		if (x->fd >= 0 && x->pid == pid && x->fd == fd) {
			/* the same fd number may hold a file opened since */
			if (same_as_holder(pid, fd, x) == 1) {
				holder_gone(c, w, x);
				continue;
			}
			h = x;
			break;
		}
	}
	if (!h && w->grab)
		ref = grab_file(pid, fd);
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	ret = slurp(path, &text, &len, &t0, &t1);
	if (!ret && (h ? same_as_holder(pid, fd, h) :
		     ref >= 0 ? same_file(getpid(), ref, pid, fd) : 0) == 1) {
		free(text);
		ret = -ENOENT;	/* changed hands during the read: next poll */
	}
	if (ret) {
		if (ref >= 0)
			close(ref);
		return ret == -ENOENT || ret == -ESRCH ? 0 : ret;
	}
	has_id = text_client_id(text, len, &id);
	if (!h) {
		for (i = 0; i < w->n && file < 0; i++) {
			struct holder *x = &w->h[i];
			int s;

			if (x->fd < 0)
				continue;
			s = same_as_holder(pid, fd, x);
			if (s < 0) {
				w->kcmp_missing = true;
				if (has_id && x->has_id && x->id == id)
					file = x->file;
			} else if (s == 0) {
				file = x->file;
			}
		}
		if (file < 0) {
			comm_of(pid, comm, sizeof(comm));
			snprintf(label, sizeof(label), "pid %d (%s) fd %d", (int)pid, comm, fd);
			file = dac_conf_file(c, label, flags);
			if (file < 0) {
				free(text);
				if (ref >= 0)
					close(ref);
				return file;
			}
			w->nfiles++;
		}
		h = watch_add(w);
		if (!h) {
			free(text);
			if (ref >= 0)
				close(ref);
			return -ENOMEM;
		}
		h->pid = pid;
		h->fd = fd;
		h->file = file;
		h->ref = ref;
		ref = -1;
	}
	h->has_id = has_id;
	h->id = id;
	h->tick = w->tick;
	ret = 0;
	if (!file_read_now(w, h->file, (size_t)(h - w->h))) {
		snprintf(via, sizeof(via), "pid %d fd %d", (int)pid, fd);
		ret = dac_conf_read(c, h->file, via, t0, t1, text, len);
	}
	free(text);
	return ret;
}

/* Every fd on the device of process @pid. */
static int watch_pid(struct dac_conf *c, struct watch *w, pid_t pid, dev_t rdev, unsigned int flags)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;	/* gone, or not ours to read */
	while ((de = readdir(d)) && !ret) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (*end || de->d_name[0] == '.' || !fd_is_device(pid, de->d_name, rdev))
			continue;
		ret = watch_fd(c, w, pid, (int)fd, flags);
	}
	closedir(d);
	return ret;
}

/* ppid of @pid from /proc/PID/stat, -1 when gone. */
static pid_t ppid_of(pid_t pid)
{
	char path[64], *t = NULL, *p;
	uint64_t a, b;
	size_t n;
	int pp = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (slurp(path, &t, &n, &a, &b))
		return -1;
	p = memrchr(t, ')', n);
	if (p && (size_t)(p - t) + 4 < n) {
		char *q = p + 2;	/* ") S ppid" */

		t[n - 1] = '\0';
		if (sscanf(q, "%*c %d", &pp) != 1)
			pp = -1;
	}
	free(t);
	return pp;
}

/* Process ids under /proc, with a filter. */
static int for_each_pid(int (*fn)(pid_t pid, void *arg), void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && !ret) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		ret = fn((pid_t)pid, arg);
	}
	closedir(d);
	return ret;
}

struct tree_arg {
	struct dac_conf *c;
	struct watch *w;
	dev_t rdev;
	pid_t root;
	pid_t self, child;
	unsigned int flags;
};

/*
 * The processes that can be in the workload's tree and their parents, read
 * once per poll (sorted by pid). Walking every process's ppid links read
 * 2-3 /proc/PID/stat per process and poll, which on a debug kernel under
 * TCG (some 50 ms a read) made one poll last longer than the whole
 * workload, whose clients were then never seen. A process that existed
 * before the workload started is not in its tree, so only the others are
 * read (an old pid reused by a new process after the pid counter wrapped
 * is missed: its clients would not be seen).
 */
struct ptab {
	struct ptab_ent {
		pid_t pid, ppid;
	} *v;
	size_t n, cap;
	pid_t *old;		/* pids before the workload, sorted */
	size_t nold, capold;
};

static int pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int ptab_note_old(pid_t pid, void *arg)
{
	struct ptab *t = arg;

	if (grow((void **)&t->old, &t->capold, t->nold, sizeof(*t->old)))
		return -ENOMEM;
	t->old[t->nold++] = pid;
	return 0;
}

/* Note the processes there before the workload starts. */
static int ptab_init(struct ptab *t)
{
	int ret = for_each_pid(ptab_note_old, t);

	qsort(t->old, t->nold, sizeof(*t->old), pid_cmp);
	return ret;
}

static int ptab_add(pid_t pid, void *arg)
{
	struct ptab *t = arg;
	pid_t pp;

	if (t->nold && bsearch(&pid, t->old, t->nold, sizeof(*t->old), pid_cmp))
		return 0;
	pp = ppid_of(pid);
	if (pp < 0)
		return 0;	/* gone */
	if (grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)))
		return -ENOMEM;
	t->v[t->n].pid = pid;
	t->v[t->n].ppid = pp;
	t->n++;
	return 0;
}

static int ptab_cmp(const void *a, const void *b)
{
	const struct ptab_ent *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Parent of @pid in @t, -1 when it was not there. */
static pid_t ptab_ppid(const struct ptab *t, pid_t pid)
{
	struct ptab_ent key = { .pid = pid }, *e;

	e = bsearch(&key, t->v, t->n, sizeof(*t->v), ptab_cmp);
	return e ? e->ppid : -1;
}

/* Is @pid @root or one of its descendants? (walks ppid links in @t) */
static bool in_tree(const struct ptab *t, pid_t pid, pid_t root)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == root)
			return true;
		pid = ptab_ppid(t, pid);
	}
	return pid == root;
}

/* One poll of the workload: every fd on the device of @a->root's tree. */
static int watch_workload(struct tree_arg *a, struct ptab *t)
{
	int ret;

	t->n = 0;
	ret = for_each_pid(ptab_add, t);
	if (ret)
		return ret;
	qsort(t->v, t->n, sizeof(*t->v), ptab_cmp);
	for (size_t i = 0; i < t->n; i++)
		if (in_tree(t, t->v[i].pid, a->root) &&
		    (ret = watch_pid(a->c, a->w, t->v[i].pid, a->rdev, a->flags)))
			return ret;
	return 0;
}

static int visit_other(pid_t pid, void *arg)
{
	struct tree_arg *a = arg;

	if (pid == a->self || pid == a->child)
		return 0;
	return watch_pid(a->c, a->w, pid, a->rdev, a->flags);
}

/* ---- the run ---------------------------------------------------------------- */

struct own {
	int fd;
	int file;
	int dup;	/* a dup of fd, or -1 */
	unsigned long reads;
};

static int own_read(struct dac_conf *c, struct own *o)
{
	char via[32];
	int fd = o->fd;

	/* alternate between the fd and its dup: both must show one client */
	if (o->dup >= 0 && (o->reads & 1))
		fd = o->dup;
	o->reads++;
	snprintf(via, sizeof(via), "%sfd %d", fd == o->fd ? "" : "dup ", fd);
	return read_into(c, o->file, getpid(), fd, via);
}

static int own_open(struct dac_conf *c, const char *dev, struct own *o, const char *label)
{
	o->dup = -1;
	o->reads = 0;
	o->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (o->fd < 0)
		return -errno;
	o->file = dac_conf_file(c, label, DAC_CONF_F_IDLE);
	if (o->file < 0) {
		close(o->fd);
		o->fd = -1;
		return o->file;
	}
	return own_read(c, o);
}

static void own_close(struct dac_conf *c, struct own *o)
{
	if (o->dup >= 0)
		close(o->dup);
	if (o->fd >= 0) {
		close(o->fd);
		dac_conf_close(c, o->file);
	}
	o->fd = o->dup = -1;
}

/* A child inherits @o's fd; its fdinfo is read while the child waits. */
static int fork_read(struct dac_conf *c, struct own *o)
{
	int p[2], ret;
	char via[48];
	pid_t child;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	child = fork();
	if (child < 0) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		return ret;
	}
	if (!child) {
		char ch;

		close(p[1]);
		while (read(p[0], &ch, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	snprintf(via, sizeof(via), "fd %d inherited by child %d", o->fd, (int)child);
	ret = read_into(c, o->file, child, o->fd, via);
	close(p[1]);
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	return ret;
}

/*
 * Runs sh -c @cmd in its own process group and returns once it exec'd (the
 * close-on-exec pipe reaches EOF), so no scan sees the tool's own fds in
 * the child between fork and exec.
 */
static int start_workload(const char *cmd, pid_t *pid)
{
	int p[2];
	char ch;
	pid_t c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	c = fork();
	if (c < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	if (!c) {
		close(p[0]);
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);	/* a caller may ignore it; the command must not */
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	setpgid(c, c);
	while (read(p[0], &ch, 1) < 0 && errno == EINTR)
		;
	close(p[0]);
	*pid = c;
	return 0;
}

#define NOWN 4

bool dac_conf_run_skip(int err)
{
	switch (err) {
	case -ENOENT:	/* no node */
	case -ENODATA:	/* the driver prints no usage stats */
	case -EACCES:	/* the node cannot be opened by us */
	case -EPERM:
	case -ENXIO:	/* a node without a device behind it */
	case -ENODEV:
		return true;
	default:
		return false;
	}
}

int dac_conf_run(struct dac_conf *c, const struct dac_conf_opts *o,
		 struct dac_conf_run_info *info, char *why, size_t whylen)
{
	uint64_t dur = o->duration_ns ? o->duration_ns : NSEC_PER_SEC;
	uint64_t ival = o->interval_ns ? o->interval_ns : 50 * 1000000ull;
	struct own own[NOWN];
	struct watch others = { 0 }, wl = { 0 };
	struct ptab procs = { 0 };
	struct tree_arg ta;
	char pdev[64];
	struct stat st;
	uint64_t start, end;
	pid_t wpid = -1;
	bool termed = false;
	int ret, i;

	memset(info, 0, sizeof(*info));
	info->stats = -1;
	for (i = 0; i < NOWN; i++)
		own[i].fd = own[i].dup = -1;
	if (o->device) {
		snprintf(info->device, sizeof(info->device), "%s", o->device);
	} else if ((ret = pick_device(info->device, sizeof(info->device), info->chosen,
				      sizeof(info->chosen)))) {
		if (ret == -ENOENT)
			snprintf(why, whylen,
				 "no /dev/dri/renderD* or /dev/accel/accel* node (use --device)");
		else
			snprintf(why, whylen, "%s", strerror(-ret));
		return ret;
	}
	if (stat(info->device, &st)) {
		ret = -errno;
		snprintf(why, whylen, "%s: %s", info->device, strerror(errno));
		return ret;
	}
	if (!S_ISCHR(st.st_mode)) {
		snprintf(why, whylen, "%s is not a character device", info->device);
		return -ENOTTY;
	}
	sysfs_pdev(st.st_rdev, pdev, sizeof(pdev));
	ret = dac_conf_set_device(c, info->device, pdev[0] ? pdev : NULL);
	if (ret)
		goto out;

	/* identity: open, dup, fork */
	logf_(o, "opening clients on %s\n", info->device);
	ret = own_open(c, info->device, &own[0], "open #1");
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT || ret == -ENXIO || ret == -ENODEV) {
		snprintf(why, whylen, "cannot open %s: %s", info->device, strerror(-ret));
		goto out;
	}
	if (ret)
		goto fail;
	info->stats = dac_conf_file_stats(c, own[0].file);
	if (info->stats == DAC_STATS_NONE) {
		snprintf(why, whylen, "%s: the driver prints no DRM usage stats (no drm- key in fdinfo)",
			 info->device);
		ret = -ENODATA;
		goto out;
	}
	own[0].dup = fcntl(own[0].fd, F_DUPFD_CLOEXEC, 0);
	if (own[0].dup < 0) {
		ret = -errno;
		goto fail;
	}
	if ((ret = own_read(c, &own[0])) || (ret = fork_read(c, &own[0])))
		goto fail;
	/* distinct files open together */
	if ((ret = own_open(c, info->device, &own[1], "open #2")) ||
	    (ret = own_open(c, info->device, &own[2], "open #3")))
		goto fail;
	/* files on the other devices, while ours are open: ids unique globally? */
	if ((ret = other_devices(c, st.st_rdev, &info->other_dev_files)))
		goto fail;
	/* every other process's files on the device, by id */
	ta = (struct tree_arg){ .c = c, .w = &others, .rdev = st.st_rdev, .self = getpid(),
				.child = -1, .flags = DAC_CONF_F_OTHER };
	others.tick = 1;
	ret = for_each_pid(visit_other, &ta);
	if (ret)
		goto fail;
	info->other_files = others.nfiles;
	/* reopen: a closed file's id must not come back */
	own_close(c, &own[1]);
	if ((ret = own_open(c, info->device, &own[1], "open #4 (after closing open #2)")))
		goto fail;
	own_close(c, &own[2]);
	if ((ret = own_open(c, info->device, &own[2], "open #5 (after closing open #3)")))
		goto fail;
	own_close(c, &own[2]);
	own_close(c, &own[1]);
	if ((ret = own_open(c, info->device, &own[1], "open #6 (after closing #4 and #5)")))
		goto fail;

	/* time: idle clients, and the workload's clients, every interval */
	if (o->workload) {
		logf_(o, "running workload: %s\n", o->workload);
		if ((ret = ptab_init(&procs)))
			goto fail;
		ret = start_workload(o->workload, &wpid);
		if (ret) {
			snprintf(why, whylen, "cannot start the workload: %s", strerror(-ret));
			goto out;
		}
		info->workload_ran = true;
		ret = dac_conf_set_workload(c, o->workload);
		if (ret)
			goto fail;
	}
	wl.grab = true;
	ta = (struct tree_arg){ .c = c, .w = &wl, .rdev = st.st_rdev, .root = wpid,
				.flags = DAC_CONF_F_WORKLOAD };
	start = mono_ns();
	end = start + dur;
	for (;;) {
		bool wl_alive = false;

		for (i = 0; i < NOWN; i++)
			if (own[i].fd >= 0 && (ret = own_read(c, &own[i])))
				goto fail;
		if (wpid > 0) {
			int status;
			pid_t r = waitpid(wpid, &status, WNOHANG);

			if (r == wpid) {
				info->workload_status = status;
				wpid = -1;
			} else {
				wl_alive = true;
				wl.tick++;
				ret = watch_workload(&ta, &procs);
				if (ret)
					goto fail;
				watch_reap(c, &wl);
			}
		}
		if (!wl_alive && mono_ns() >= end)
			break;
		if (wl_alive && o->duration_ns && mono_ns() >= end && !termed) {
			logf_(o, "--duration passed: stopping the workload\n");
			kill(-ta.root, SIGTERM);
			termed = true;
		} else if (wl_alive && termed && mono_ns() >= end + 5 * NSEC_PER_SEC) {
			kill(-ta.root, SIGKILL);	/* it ignored SIGTERM for 5 s */
		}
		sleep_ns(ival);
	}
	wl.tick++;
	watch_reap(c, &wl);
	info->workload_files = wl.nfiles;
	info->kcmp_missing = others.kcmp_missing || wl.kcmp_missing;
	for (i = 0; i < NOWN; i++)
		own_close(c, &own[i]);
	ret = dac_conf_evaluate(c);
	if (ret)
		snprintf(why, whylen, "out of memory");
	goto out;
fail:
	snprintf(why, whylen, "%s", strerror(-ret));
out:
	for (i = 0; i < NOWN; i++)
		if (own[i].fd >= 0)
			own_close(c, &own[i]);
	if (wpid > 0) {
		int status;

		kill(-wpid, SIGTERM);
		while (waitpid(wpid, &status, 0) < 0 && errno == EINTR)
			;
		info->workload_status = status;
	}
	watch_free(&others);
	watch_free(&wl);
	free(procs.v);
	free(procs.old);
	return ret;
}
