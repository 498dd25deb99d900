// SPDX-License-Identifier: MIT
/*
 * discover.c - /proc walk for DRM and accel fds. See discover.h.
 *
 * Cost model: per process one openat() of PID/fd and getdents64() on it, per
 * fd one fstatat(). That is the floor any /proc based tool pays; everything
 * else (comm, fdinfo) is only read for the few DRM fds.
 */
#define _GNU_SOURCE
#include "discover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

struct dbuf {
	char *p;
	size_t len;
	size_t cap;
};

struct dac_discover {
	int rootfd;
	bool synthetic;
	pid_t pid;
	int fd;
	struct dbuf dents;	/* getdents64 buffer for the proc root */
	struct dbuf fdents;	/* getdents64 buffer for PID/fd */
	struct dbuf text;	/* fdinfo */
	struct dbuf comm;
	pid_t comm_pid;		/* whose comm is in .comm; 0: none */
};

static int dbuf_reserve(struct dbuf *b, size_t want)
{
	size_t ncap;
	char *np;

	if (b->cap >= want)
		return 0;
	ncap = b->cap ? b->cap : 4096;
	while (ncap < want) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	np = realloc(b->p, ncap);
	if (!np)
		return -ENOMEM;
	b->p = np;
	b->cap = ncap;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Read a whole (proc) file into @b, NUL-terminated. Returns 0 or -errno.
 * Only for PID/fdinfo/N and PID/comm: procfs serves both with
 * single_open(), a seq_file of one record formatted whole before it is
 * copied out, so a read shorter than asked has returned the rest of it and
 * the read() that would return 0 is skipped (regular files of a synthetic
 * tree end at a short read too). See dac_read_parse() in fdinfo.c.
 * @at_ns, when not NULL, gets the middle of the first read(): the record
 * (an fdinfo's counters, taken at one moment) is formatted inside that
 * call, so the middle is off by at most half of it, where a clock read
 * after close() would also count close() and any preemption before it
 * (utilisation over a short interval is only as good as these times).
 * @start_ns, with @at_ns, gets the time just before that read().
 */
static int read_file_at(int dirfd, const char *path, struct dbuf *b, uint64_t *at_ns,
			uint64_t *start_ns)
{
	int fd, ret = 0;
	ssize_t n;
	uint64_t t0;

	b->len = 0;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	for (;;) {
		size_t want;

		ret = dbuf_reserve(b, b->len + 4096 + 1);
		if (ret)
			break;
		want = b->cap - b->len - 1;
		t0 = mono_ns();
		n = read(fd, b->p + b->len, want);
		if (at_ns && b->len == 0 && n >= 0) {
			*at_ns = t0 + (mono_ns() - t0) / 2;
			if (start_ns)
				*start_ns = t0;
			at_ns = NULL;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		b->len += (size_t)n;
		if ((size_t)n < want)	/* 0, or the end of the one record */
			break;
	}
	close(fd);
	if (ret)
		return ret;
	b->p[b->len] = '\0';
	/* An fdinfo with an embedded NUL is cut there: it is text. */
	b->len = strlen(b->p);
	return 0;
}

bool dac_is_drm_rdev(unsigned int major)
{
	return major == DAC_DRM_MAJOR || major == DAC_ACCEL_MAJOR;
}

/* Strictly decimal, no sign, no leading zeros (except "0"), fits @max. */
static bool parse_dec(const char *s, long max, long *out)
{
	long v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (max - (*s - '0')) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return true;
}

struct dac_discover *dac_discover_new(const struct dac_discover_opts *opts)
{
	const char *root = opts && opts->proc_root ? opts->proc_root : "/proc";
	struct dac_discover *d;

	if (opts && (opts->pid < 0 || opts->fd < -1 || (opts->fd >= 0 && opts->pid <= 0))) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->pid = opts ? opts->pid : 0;
	d->fd = opts ? opts->fd : -1;
	d->synthetic = strcmp(root, "/proc") != 0;
	d->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->rootfd < 0) {
		int e = errno;

		free(d);
		errno = e;
		return NULL;
	}
	return d;
}

void dac_discover_free(struct dac_discover *d)
{
	if (!d)
		return;
	close(d->rootfd);
	free(d->dents.p);
	free(d->fdents.p);
	free(d->text.p);
	free(d->comm.p);
	free(d);
}

static const char *get_comm(struct dac_discover *d, pid_t pid)
{
	char path[32];

	if (d->comm_pid == pid)
		return d->comm.p;
	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	d->comm_pid = pid;
	if (read_file_at(d->rootfd, path, &d->comm, NULL, NULL)) {
		if (dbuf_reserve(&d->comm, 1))
			return "";
		d->comm.p[0] = '\0';
		d->comm.len = 0;
	}
	while (d->comm.len && d->comm.p[d->comm.len - 1] == '\n')
		d->comm.p[--d->comm.len] = '\0';
	return d->comm.p;
}

/*
 * Count why a proc file could not be looked at: gone (the process exited or
 * the fd was closed), denied, or anything else (kept in last_errno).
 */
static void count_failure(struct dac_discover_stats *st, int err, uint64_t *gone,
			  uint64_t *denied)
{
	if (err == ENOENT || err == ESRCH)
		(*gone)++;
	else if (err == EACCES || err == EPERM)
		(*denied)++;
	else {
		st->errors++;
		st->last_errno = err;
	}
}

/*
 * Synthetic trees only: DIR/PID/fd/N -> "/dev/char/M:m" that does not exist.
 * Returns true and fills @maj/@min when the link has that exact form.
 */
static bool synthetic_char_link(int dirfd, const char *name, unsigned int *maj,
				unsigned int *min)
{
	char target[64], tail;
	ssize_t n;

	n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (n <= 0 || (size_t)n >= sizeof(target) - 1)
		return false;
	target[n] = '\0';
	if (sscanf(target, "/dev/char/%u:%u%c", maj, min, &tail) != 2)
		return false;
	return true;
}

/*
 * Look at one fd entry @name of @pid (relative to @dirfd, which is PID/fd or
 * the proc root when @name is a full "PID/fd/N"). Returns 0 when the callback
 * ran (its value in *@cbret) or a negative errno why it did not (not a DRM
 * device, gone, denied: counted in @st).
 */
static int visit_fd(struct dac_discover *d, int dirfd, const char *name, pid_t pid,
		    int fdnum, dac_discover_fn fn, void *arg,
		    struct dac_discover_stats *st, int *cbret)
{
	struct dac_fd_info fdi;
	unsigned int maj, min;
	char path[64];
	struct stat sb;
	int ret;

	st->fds++;
	if (fstatat(dirfd, name, &sb, 0) == 0) {
		if (!S_ISCHR(sb.st_mode))
			return -ENODEV;
		maj = major(sb.st_rdev);
		min = minor(sb.st_rdev);
	} else if (errno == ENOENT && d->synthetic &&
		   synthetic_char_link(dirfd, name, &maj, &min)) {
		/* marked DRM fd of a synthetic tree, see discover.h */
	} else {
		/* Not known to be a DRM fd: counted apart from DRM fds denied. */
		ret = -errno;
		count_failure(st, -ret, &st->gone_fds, &st->denied_stat_fds);
		return ret;
	}
	if (!dac_is_drm_rdev(maj))
		return -ENODEV;

	snprintf(path, sizeof(path), "%d/fdinfo/%d", (int)pid, fdnum);
	memset(&fdi, 0, sizeof(fdi));
	ret = read_file_at(d->rootfd, path, &d->text, &fdi.read_ns, &fdi.read_start_ns);
	if (ret) {
		count_failure(st, -ret, &st->gone_fds, &st->denied_fds);
		return ret;
	}
	st->drm_fds++;
	fdi.pid = pid;
	fdi.fd = fdnum;
	fdi.major = maj;
	fdi.minor = min;
	fdi.rdev = makedev(maj, min);
	fdi.comm = get_comm(d, pid);
	fdi.text = d->text.p;
	fdi.len = d->text.len;
	*cbret = fn(&fdi, arg);
	return 0;
}

/* Walk PID/fd. Returns 0, the callback's value or -ENOMEM. */
static int visit_proc(struct dac_discover *d, pid_t pid, dac_discover_fn fn,
		      void *arg, struct dac_discover_stats *st)
{
	char path[32];
	int dfd, ret = 0;

	st->procs++;
	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	dfd = openat(d->rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		count_failure(st, errno, &st->gone_procs, &st->denied_procs);
		return 0;
	}
	if (dbuf_reserve(&d->fdents, 32768)) {
		close(dfd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = getdents64(dfd, d->fdents.p, d->fdents.cap);
		ssize_t off;

		if (n < 0) {
			count_failure(st, errno, &st->gone_procs, &st->denied_procs);
			break;
		}
		if (n == 0)
			break;
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(d->fdents.p + off);
			long fdnum;

			off += de->d_reclen;
			if (de->d_name[0] == '.')
				continue;
			if (!parse_dec(de->d_name, INT_MAX, &fdnum))
				continue;
			/* a negative return was counted in @st; go on */
			visit_fd(d, dfd, de->d_name, pid, (int)fdnum, fn, arg, st, &ret);
			if (ret)
				goto out;
		}
	}
out:
	close(dfd);
	return ret;
}

int dac_discover_run(struct dac_discover *d, dac_discover_fn fn, void *arg,
			 struct dac_discover_stats *st)
{
	struct dac_discover_stats local;
	int ret = 0, cbret = 0;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	d->comm_pid = 0;

	if (d->pid > 0) {
		char path[64];

		snprintf(path, sizeof(path), "%d", (int)d->pid);
		if (faccessat(d->rootfd, path, F_OK, 0) != 0)
			return -ESRCH;
		if (d->fd < 0)
			return visit_proc(d, d->pid, fn, arg, st);
		st->procs++;
		snprintf(path, sizeof(path), "%d/fd/%d", (int)d->pid, d->fd);
		ret = visit_fd(d, d->rootfd, path, d->pid, d->fd, fn, arg, st, &cbret);
		if (ret == -ENOENT)
			return -EBADF;
		return ret ? ret : cbret;
	}

	if (lseek(d->rootfd, 0, SEEK_SET) < 0)
		return -errno;
	if (dbuf_reserve(&d->dents, 65536))
		return -ENOMEM;
	for (;;) {
		ssize_t n = getdents64(d->rootfd, d->dents.p, d->dents.cap);
		ssize_t off;

		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(d->dents.p + off);
			long pid;

			off += de->d_reclen;
			if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
				continue;
			if (!parse_dec(de->d_name, INT_MAX, &pid) || pid == 0)
				continue;
			ret = visit_proc(d, (pid_t)pid, fn, arg, st);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static size_t add_part(char *buf, size_t len, size_t pos, const char *fmt, uint64_t n,
		       const char *what)
{
	int w;

	if (!n || pos >= len)
		return pos;
	w = snprintf(buf + pos, len - pos, fmt, pos ? ", " : "", (unsigned long long)n,
		     what);
	return w < 0 ? pos : pos + (size_t)w;
}

/* ---- device identity through libdrm ---- */

#define DEV_ID_TTL_NS	5000000000ull	/* a device may come and go: re-ask */

struct dev_id_ent {
	dev_t rdev;
	int ret;
	uint64_t when_ns;
	struct dac_dev_id id;
};

static pthread_mutex_t dev_id_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev_id_ent *dev_id_cache;
static size_t dev_id_n, dev_id_cap;

static int dev_id_probe(dev_t rdev, struct dac_dev_id *out)
{
	static const char *const buses[] = {
		[DRM_BUS_PCI] = "pci", [DRM_BUS_USB] = "usb",
		[DRM_BUS_PLATFORM] = "platform", [DRM_BUS_HOST1X] = "host1x",
	};
	drmDevicePtr d = NULL;
	int type = minor(rdev) < 64 ? DRM_NODE_PRIMARY : DRM_NODE_RENDER;

	memset(out, 0, sizeof(*out));
	if (major(rdev) != DAC_DRM_MAJOR || drmGetDeviceFromDevId(rdev, 0, &d) || !d)
		return -ENODEV;
	if ((d->available_nodes & (1 << type)) && d->nodes[type]) {
		const char *slash = strrchr(d->nodes[type], '/');

		snprintf(out->node, sizeof(out->node), "%s", slash ? slash + 1 : d->nodes[type]);
	}
	if (d->bustype >= 0 && (size_t)d->bustype < sizeof(buses) / sizeof(buses[0]))
		snprintf(out->bus, sizeof(out->bus), "%s", buses[d->bustype]);
	if (d->bustype == DRM_BUS_PCI && d->businfo.pci && d->deviceinfo.pci) {
		out->has_pci = true;
		snprintf(out->slot, sizeof(out->slot), "%04x:%02x:%02x.%u", d->businfo.pci->domain,
			 d->businfo.pci->bus, d->businfo.pci->dev, d->businfo.pci->func);
		out->vendor_id = d->deviceinfo.pci->vendor_id;
		out->device_id = d->deviceinfo.pci->device_id;
		out->subvendor_id = d->deviceinfo.pci->subvendor_id;
		out->subdevice_id = d->deviceinfo.pci->subdevice_id;
	}
	drmFreeDevice(&d);
	return 0;
}

int dac_dev_identify(unsigned int maj, unsigned int min, struct dac_dev_id *out)
{
	dev_t rdev = makedev(maj, min);
	uint64_t now = mono_ns();
	struct dev_id_ent *e = NULL;
	int ret;

	pthread_mutex_lock(&dev_id_lock);
	for (size_t i = 0; i < dev_id_n; i++)
		if (dev_id_cache[i].rdev == rdev)
			e = &dev_id_cache[i];
	if (!e && dev_id_n == dev_id_cap) {
		size_t nc = dev_id_cap ? dev_id_cap * 2 : 8;
		struct dev_id_ent *nv = realloc(dev_id_cache, nc * sizeof(*nv));

		if (nv) {
			dev_id_cache = nv;
			dev_id_cap = nc;
		}
	}
	if (!e && dev_id_n < dev_id_cap) {
		e = &dev_id_cache[dev_id_n++];
		e->rdev = rdev;
		e->when_ns = 0;
	}
	if (e && e->when_ns && now - e->when_ns < DEV_ID_TTL_NS) {
		*out = e->id;
		ret = e->ret;
	} else {
		ret = dev_id_probe(rdev, out);	/* also without a cache slot (ENOMEM) */
		if (e) {
			e->ret = ret;
			e->id = *out;
			e->when_ns = now ? now : 1;
		}
	}
	pthread_mutex_unlock(&dev_id_lock);
	return ret;
}

const char *dac_dev_name(unsigned int maj, unsigned int min, char *buf, size_t len)
{
	struct dac_dev_id id;

	if (!dac_dev_identify(maj, min, &id) && id.node[0])
		snprintf(buf, len, "%s", id.node);
	else if (maj == DAC_DRM_MAJOR && min < 64)
		snprintf(buf, len, "card%u", min);
	else if (maj == DAC_DRM_MAJOR && min >= 128 && min < 192)
		snprintf(buf, len, "renderD%u", min);
	else if (maj == DAC_ACCEL_MAJOR)
		snprintf(buf, len, "accel%u", min);
	else
		snprintf(buf, len, "%u:%u", maj, min);
	return buf;
}

void dac_discover_describe(const struct dac_discover_stats *st, char *buf, size_t len)
{
	size_t pos = 0;

	if (!len)
		return;
	buf[0] = '\0';
	pos = add_part(buf, len, pos, "%s%llu %s", st->denied_procs,
		       st->denied_procs == 1 ? "process not readable (permission denied)"
					     : "processes not readable (permission denied)");
	pos = add_part(buf, len, pos, "%s%llu %s", st->denied_fds,
		       st->denied_fds == 1 ? "DRM fd not readable (permission denied)"
					   : "DRM fds not readable (permission denied)");
	pos = add_part(buf, len, pos, "%s%llu %s", st->denied_stat_fds,
		       st->denied_stat_fds == 1 ? "fd not examined (stat permission denied)"
						: "fds not examined (stat permission denied)");
	pos = add_part(buf, len, pos, "%s%llu %s", st->gone_procs,
		       st->gone_procs == 1 ? "process exited during the walk"
					   : "processes exited during the walk");
	pos = add_part(buf, len, pos, "%s%llu %s", st->gone_fds,
		       st->gone_fds == 1 ? "fd closed during the walk"
					 : "fds closed during the walk");
	if (st->errors && pos < len)
		snprintf(buf + pos, len - pos, "%s%llu other error%s (last: %s)", pos ? ", " : "",
			 (unsigned long long)st->errors, st->errors == 1 ? "" : "s",
			 strerror(st->last_errno));
}
