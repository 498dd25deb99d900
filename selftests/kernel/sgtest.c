// SPDX-License-Identifier: GPL-2.0
/*
 * Support code for the simgpu VM selftests and benches (see sgtest.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf.h"
#include "dtest.h"
#include "drm_client.h"
#include "sgtest.h"

uint64_t sg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

void sg_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

uint64_t sg_overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0;
	uint64_t hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

struct sg_span {
	uint64_t lo, hi;
};

static int span_cmp(const void *a, const void *b)
{
	const struct sg_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

uint64_t sg_union_ns(const uint64_t *run, const uint64_t *end, size_t n)
{
	struct sg_span *s = calloc(n ? n : 1, sizeof(*s));
	uint64_t total = 0, lo = 0, hi = 0;

	if (!s)
		return 0;
	for (size_t i = 0; i < n; i++)
		s[i] = (struct sg_span){ run[i], end[i] };
	qsort(s, n, sizeof(*s), span_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i && s[i].lo <= hi) {
			if (s[i].hi > hi)
				hi = s[i].hi;
			continue;
		}
		total += hi - lo;
		lo = s[i].lo;
		hi = s[i].hi;
	}
	free(s);
	return total + hi - lo;
}

uint64_t sg_sched_end_ns(const struct drm_simgpu_wait *w)
{
	return w->finished_ns > w->signalled_ns ? w->finished_ns : w->signalled_ns;
}

void sg_sched_bounds(const struct drm_simgpu_wait *w, size_t n, uint64_t *lo, uint64_t *hi)
{
	uint64_t *a = calloc(n ? 2 * n : 1, sizeof(*a));

	*lo = *hi = 0;
	if (!a)
		return;
	for (size_t i = 0; i < n; i++) {
		a[i] = w[i].run_ns;
		a[n + i] = w[i].hw_end_ns;
	}
	*lo = sg_union_ns(a, a + n, n);
	for (size_t i = 0; i < n; i++) {
		a[i] = w[i].queued_ns;
		a[n + i] = sg_sched_end_ns(&w[i]);
	}
	*hi = sg_union_ns(a, a + n, n);
	free(a);
}

/* ---- device ----------------------------------------------------------- */

/*
 * Is render node @name (e.g. "renderD128") driven by simgpu? Read from
 * sysfs (the device's driver link), not by opening the node: an open
 * would make a DRM client of its own, which tests that count clients or
 * their exit events would see.
 */
static int node_is_simgpu(const char *name)
{
	char p[300], target[300];
	const char *drv;
	ssize_t n;

	snprintf(p, sizeof(p), "/sys/class/drm/%s/device/driver", name);
	n = readlink(p, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	drv = strrchr(target, '/');
	return strcmp(drv ? drv + 1 : target, "simgpu") == 0;
}

int sg_find_node(char *path, size_t len)
{
	struct dirent *de;
	int found = -ENODEV;
	unsigned int best = ~0u;
	DIR *d;

	d = opendir("/dev/dri");
	if (!d)
		return -ENODEV;
	while ((de = readdir(d))) {
		unsigned int minor;

		if (sscanf(de->d_name, "renderD%u", &minor) != 1)
			continue;
		/* lowest matching minor, so the choice is deterministic */
		if (minor < best && node_is_simgpu(de->d_name)) {
			best = minor;
			snprintf(path, len, "/dev/dri/%s", de->d_name);
			found = 0;
		}
	}
	closedir(d);
	return found;
}

int sg_open_raw(void)
{
	char path[300];
	int ret = sg_find_node(path, sizeof(path));

	if (ret) {
		errno = -ret;
		return -1;
	}
	return open(path, O_RDWR | O_CLOEXEC);
}

int sg_open(void)
{
	int fd = sg_open_raw();

	if (fd < 0)
		DT_FAIL("no simgpu render node could be opened: %s", strerror(errno));
	return fd;
}

void sg_query(int fd, struct sg_dev *dev)
{
	unsigned int i;

	memset(dev, 0, sizeof(*dev));
	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &dev->q), 0);
	DT_ASSERT_GT(dev->q.num_engines, 0u);
	dev->num_engines = dev->q.num_engines;
	dev->eng = calloc(dev->num_engines, sizeof(*dev->eng));
	DT_ASSERT_TRUE(dev->eng != NULL);
	for (i = 0; i < dev->num_engines; i++) {
		struct sg_engine *e = &dev->eng[i];

		e->index = i;
		e->q.engine = i;
		DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_ENGINE, &e->q), 0);
		e->q.name[SIMGPU_NAME_LEN - 1] = '\0';
		DT_ASSERT_GT(e->q.capacity, 0u);
	}
}

void sg_dev_free(struct sg_dev *dev)
{
	free(dev->eng);
	dev->eng = NULL;
	dev->num_engines = 0;
}

uint64_t sg_client_id(int fd)
{
	struct drm_simgpu_query_device q;

	memset(&q, 0, sizeof(q));
	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &q), 0);
	return q.client_id;
}

bool sg_core_client_name(int fd)
{
	/* A name of a bad address: EFAULT where the ioctl exists. */
	return dac_drm_set_client_name(fd, NULL, 1) != -EOPNOTSUPP;
}

int sg_set_client_name(int fd, const char *s, size_t len)
{
	struct drm_simgpu_set_client_name a;
	int ret = dac_drm_set_client_name(fd, s, len);

	if (ret != -EOPNOTSUPP) {
		errno = -ret;
		return ret ? -1 : 0;
	}
	memset(&a, 0, sizeof(a));
	a.name = (uintptr_t)s;
	a.len = (uint32_t)len;
	return ioctl(fd, DRM_IOCTL_SIMGPU_SET_CLIENT_NAME, &a);
}

const struct sg_engine *sg_engine_simple(const struct sg_dev *dev)
{
	for (unsigned int i = 0; i < dev->num_engines; i++)
		if (dev->eng[i].q.capacity == 1 &&
		    !(dev->eng[i].q.flags & SIMGPU_ENGINE_TOTAL_CYCLES))
			return &dev->eng[i];
	return NULL;
}

const struct sg_engine *sg_engine_multi(const struct sg_dev *dev)
{
	for (unsigned int i = 0; i < dev->num_engines; i++)
		if (dev->eng[i].q.capacity >= 2)
			return &dev->eng[i];
	return NULL;
}

const struct sg_engine *sg_engine_total_cycles(const struct sg_dev *dev)
{
	for (unsigned int i = 0; i < dev->num_engines; i++)
		if (dev->eng[i].q.flags & SIMGPU_ENGINE_TOTAL_CYCLES)
			return &dev->eng[i];
	return NULL;
}

const struct sg_engine *sg_engine_by_name(const struct sg_dev *dev, const char *name)
{
	for (unsigned int i = 0; i < dev->num_engines; i++)
		if (!strcmp(dev->eng[i].q.name, name))
			return &dev->eng[i];
	return NULL;
}

/* ---- jobs ------------------------------------------------------------- */

uint64_t sg_submit(int fd, struct drm_simgpu_submit *s)
{
	if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, s))
		DT_FAIL("SUBMIT engine %u instance %u op %u failed: %s",
			s->engine, s->instance, s->op, strerror(errno));
	DT_ASSERT_GT(s->job_id, 0ull);
	return s->job_id;
}

uint64_t sg_submit_busy(int fd, unsigned int engine, unsigned int instance, uint64_t ns)
{
	struct drm_simgpu_submit s;

	memset(&s, 0, sizeof(s));
	s.engine = engine;
	s.instance = instance;
	s.op = SIMGPU_OP_BUSY;
	s.busy_ns = ns;
	return sg_submit(fd, &s);
}

int sg_wait_raw(int fd, uint64_t job, uint64_t timeout_ns, struct drm_simgpu_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->job_id = job;
	w->timeout_ns = timeout_ns;
	return ioctl(fd, DRM_IOCTL_SIMGPU_WAIT, w);
}

void sg_wait(int fd, uint64_t job, struct drm_simgpu_wait *w)
{
	struct drm_simgpu_wait local;

	if (!w)
		w = &local;
	if (sg_wait_raw(fd, job, 60 * NSEC_PER_SEC, w))
		DT_FAIL("WAIT job %" PRIu64 ": %s", job, strerror(errno));
	DT_ASSERT_EQ(w->status, (uint32_t)SIMGPU_JOB_DONE);
	DT_ASSERT_LE(w->queued_ns, w->start_ns);
	DT_ASSERT_LE(w->start_ns, w->end_ns);
	{
		char why[160];

		if (!sg_stamps_ok(w, why, sizeof(why)))
			DT_FAIL("WAIT job %" PRIu64 ": %s", job, why);
	}
}

bool sg_stamps_ok(const struct drm_simgpu_wait *w, char *why, size_t len)
{
	if (w->hw_start_ns < w->queued_ns || w->hw_end_ns < w->hw_start_ns ||
	    w->signalled_ns < w->hw_end_ns) {
		snprintf(why, len, "engine stamps out of order: queued %" PRIu64 " start %"
			 PRIu64 " end %" PRIu64 " signalled %" PRIu64,
			 (uint64_t)w->queued_ns, (uint64_t)w->hw_start_ns,
			 (uint64_t)w->hw_end_ns, (uint64_t)w->signalled_ns);
		return false;
	}
	if (w->start_ns < w->hw_start_ns || w->start_ns - w->hw_start_ns > w->start_gap_ns) {
		snprintf(why, len, "helper's start %+" PRId64 " ns from the engine's, outside [0, %"
			 PRIu64 "]", (int64_t)(w->start_ns - w->hw_start_ns),
			 (uint64_t)w->start_gap_ns);
		return false;
	}
	if (w->end_ns < w->hw_end_ns || w->end_ns - w->hw_end_ns > w->end_gap_ns) {
		snprintf(why, len, "helper's end %+" PRId64 " ns from the engine's, outside [0, %"
			 PRIu64 "]", (int64_t)(w->end_ns - w->hw_end_ns),
			 (uint64_t)w->end_gap_ns);
		return false;
	}
	return true;
}

void sg_truth_add(struct sg_truth *t, const struct drm_simgpu_wait *w)
{
	t->jobs++;
	t->acct_ns += w->end_ns - w->start_ns;
	t->hw_ns += w->hw_end_ns - w->hw_start_ns;
	t->start_gap_ns += w->start_gap_ns;
	t->end_gap_ns += w->end_gap_ns;
	t->signal_ns += w->signalled_ns - w->hw_end_ns;
	t->cycles += w->cycles;
}

void sg_truth_merge(struct sg_truth *a, const struct sg_truth *b)
{
	a->jobs += b->jobs;
	a->acct_ns += b->acct_ns;
	a->hw_ns += b->hw_ns;
	a->start_gap_ns += b->start_gap_ns;
	a->end_gap_ns += b->end_gap_ns;
	a->signal_ns += b->signal_ns;
	a->cycles += b->cycles;
}

void sg_truth_expect(const char *what, uint64_t got, const struct sg_truth *t)
{
	dt_info("%s: %" PRIu64 " ns; %" PRIu64 " jobs: helper %" PRIu64 " ns, engine %" PRIu64
		" ns (gaps -%" PRIu64 "/+%" PRIu64 " ns)", what, got, t->jobs, t->acct_ns,
		t->hw_ns, t->start_gap_ns, t->end_gap_ns);
	DT_EXPECT_EQ(got, t->acct_ns);
	DT_EXPECT_GE(got + t->start_gap_ns, t->hw_ns);
	DT_EXPECT_LE(got, t->hw_ns + t->end_gap_ns);
}

void sg_truth_expect_one(const char *what, uint64_t got, const struct drm_simgpu_wait *w)
{
	struct sg_truth t = { 0 };

	sg_truth_add(&t, w);
	sg_truth_expect(what, got, &t);
}

/* ---- GEM -------------------------------------------------------------- */

uint32_t sg_bo_create(int fd, uint64_t size)
{
	struct drm_simgpu_gem_create c;

	memset(&c, 0, sizeof(c));
	c.size = size;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_GEM_CREATE, &c))
		DT_FAIL("GEM_CREATE %" PRIu64 ": %s", size, strerror(errno));
	DT_ASSERT_NE(c.handle, 0u);
	return c.handle;
}

void sg_bo_close(int fd, uint32_t handle)
{
	struct drm_gem_close c;

	memset(&c, 0, sizeof(c));
	c.handle = handle;
	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c), 0);
}

int sg_bo_export(int fd, uint32_t handle)
{
	struct drm_prime_handle p;

	memset(&p, 0, sizeof(p));
	p.handle = handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p))
		DT_FAIL("PRIME_HANDLE_TO_FD: %s", strerror(errno));
	return p.fd;
}

uint32_t sg_bo_import(int fd, int dmabuf)
{
	struct drm_prime_handle p;

	memset(&p, 0, sizeof(p));
	p.fd = dmabuf;
	if (ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p))
		DT_FAIL("PRIME_FD_TO_HANDLE: %s", strerror(errno));
	return p.handle;
}

uint32_t sg_bo_madvise(int fd, uint32_t handle, uint32_t madv)
{
	struct drm_simgpu_gem_madvise m;

	memset(&m, 0, sizeof(m));
	m.handle = handle;
	m.madv = madv;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_GEM_MADVISE, &m))
		DT_FAIL("GEM_MADVISE %u %u: %s", handle, madv, strerror(errno));
	return m.retained;
}

/* ---- fdinfo ----------------------------------------------------------- */

static bool parse_u64(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		unsigned int d = (unsigned int)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	*end = s;
	*out = v;
	return true;
}

static bool has_space(const char *s)
{
	for (; *s; s++)
		if (isspace((unsigned char)*s))
			return true;
	return false;
}

int sg_parse_fdinfo(char *buf, struct sg_fdinfo *fi)
{
	size_t cap = 0;
	unsigned int lineno = 0;
	char *line = buf;

	fi->kv = NULL;
	fi->n = 0;
	while (line && *line) {
		char *nl = strchr(line, '\n');
		struct sg_kv *kv;
		char *colon, *v;
		const char *end;

		if (nl)
			*nl = '\0';
		lineno++;
		colon = strchr(line, ':');
		if (!colon)
			goto next;	/* not a key line (e.g. continuation) */
		if (fi->n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct sg_kv *n = realloc(fi->kv, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			fi->kv = n;
			cap = ncap;
		}
		kv = &fi->kv[fi->n++];
		memset(kv, 0, sizeof(*kv));
		*colon = '\0';
		kv->key = line;
		kv->line = lineno;
		v = colon + 1;
		/* strict: exactly one TAB, then a non-empty value */
		kv->strict = v[0] == '\t' && v[1] != '\0' && !isspace((unsigned char)v[1]) &&
			     !has_space(kv->key) && kv->key[0] != '\0';
		while (*v == ' ' || *v == '\t')
			v++;
		kv->val = v;
		kv->unit = "";
		if (parse_u64(v, &end, &kv->num)) {
			if (*end == '\0') {
				kv->has_num = true;
			} else if (*end == ' ' && end[1] != '\0' && !has_space(end + 1)) {
				kv->has_num = true;
				kv->unit = (char *)end + 1;
			}
		}
		if (!kv->has_num && has_space(v))
			kv->strict = false;
next:
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

int sg_fdinfo_read_pid(pid_t pid, int fd, struct sg_fdinfo *fi)
{
	char path[64];
	size_t cap = 4096, len = 0;
	char *buf;
	int f, ret;

	memset(fi, 0, sizeof(*fi));
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	fi->t_before = sg_now_ns();
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0) {
		ret = -errno;
		free(buf);
		return ret;
	}
	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			char *n = realloc(buf, cap * 2);

			if (!n) {
				close(f);
				free(buf);
				return -ENOMEM;
			}
			buf = n;
			cap *= 2;
		}
		r = read(f, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			close(f);
			free(buf);
			return ret;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	fi->t_after = sg_now_ns();
	close(f);
	buf[len] = '\0';
	fi->buf = buf;
	ret = sg_parse_fdinfo(buf, fi);
	if (ret) {
		sg_fdinfo_free(fi);
		return ret;
	}
	return 0;
}

void sg_fdinfo_read(int fd, struct sg_fdinfo *fi)
{
	int ret = sg_fdinfo_read_pid(0, fd, fi);

	if (ret)
		DT_FAIL("reading fdinfo of fd %d: %s", fd, strerror(-ret));
}

void sg_fdinfo_free(struct sg_fdinfo *fi)
{
	free(fi->kv);
	free(fi->buf);
	memset(fi, 0, sizeof(*fi));
}

const struct sg_kv *sg_fdinfo_find(const struct sg_fdinfo *fi, const char *key)
{
	for (size_t i = 0; i < fi->n; i++)
		if (!strcmp(fi->kv[i].key, key))
			return &fi->kv[i];
	return NULL;
}

uint64_t sg_fdinfo_u64(const struct sg_fdinfo *fi, const char *key, const char *unit)
{
	const struct sg_kv *kv = sg_fdinfo_find(fi, key);

	if (!kv)
		DT_FAIL("fdinfo has no key '%s'", key);
	if (!kv->has_num)
		DT_FAIL("fdinfo key '%s' value '%s' is not a number", key, kv->val);
	if (strcmp(kv->unit, unit))
		DT_FAIL("fdinfo key '%s' has unit '%s', expected '%s'", key, kv->unit, unit);
	return kv ? kv->num : 0;
}

uint64_t sg_fdinfo_engine_ns(const struct sg_fdinfo *fi, const char *name)
{
	char key[128];

	snprintf(key, sizeof(key), "drm-engine-%s", name);
	return sg_fdinfo_u64(fi, key, "ns");
}

uint64_t sg_fdinfo_cycles(const struct sg_fdinfo *fi, const char *name)
{
	char key[128];

	snprintf(key, sizeof(key), "drm-cycles-%s", name);
	return sg_fdinfo_u64(fi, key, "");
}

uint64_t sg_fdinfo_bytes(const struct sg_fdinfo *fi, const char *key)
{
	const struct sg_kv *kv = sg_fdinfo_find(fi, key);

	if (!kv)
		DT_FAIL("fdinfo has no key '%s'", key);
	if (!kv->has_num)
		DT_FAIL("fdinfo key '%s' value '%s' is not a number", key, kv->val);
	if (!strcmp(kv->unit, ""))
		return kv->num;
	if (!strcmp(kv->unit, "KiB"))
		return kv->num << 10;
	if (!strcmp(kv->unit, "MiB"))
		return kv->num << 20;
	DT_FAIL("fdinfo key '%s' has bad memory unit '%s'", key, kv->unit);
	return 0;
}

size_t sg_fdinfo_count_prefix(const struct sg_fdinfo *fi, const char *prefix)
{
	size_t n = 0, l = strlen(prefix);

	for (size_t i = 0; i < fi->n; i++)
		if (!strncmp(fi->kv[i].key, prefix, l))
			n++;
	return n;
}

/* ---- system ----------------------------------------------------------- */

int sg_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

int sg_write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, s, len);
	if (r < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	return (size_t)r == len ? 0 : -EIO;
}

char *sg_read_file(const char *path, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		free(buf);
		errno = e;
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			char *n = realloc(buf, cap * 2);

			if (!n) {
				close(fd);
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = n;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

int sg_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int sg_kmsg_bad_lines(int fd)
{
	static const char *const bad[] = {
		"BUG", "WARNING", "Oops", "Call Trace", "general protection",
		"refcount_t", "use-after-free", "list_add corruption",
		"list_del corruption", "INFO: task", "hung_task", "RIP:",
	};
	char rec[8192];
	int n = 0;

	if (fd < 0) {
		/* a log that cannot be read is not a clean one */
		dt_info("kernel log: /dev/kmsg could not be opened");
		return 1;
	}
	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);
		char *msg;

		if (r < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on with the next */
		if (r < 0 && errno != EAGAIN) {
			dt_info("kernel log: reading /dev/kmsg: %s", strerror(errno));
			n++;
			break;
		}
		if (r <= 0)
			break;	/* EAGAIN: no newer record */
		rec[r] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(msg, bad[i])) {
				char *nl = strchr(msg, '\n');

				if (nl)
					*nl = '\0';
				dt_info("kernel log: %s", msg);
				n++;
				break;
			}
		}
	}
	close(fd);
	return n;
}

bool sg_is_root(void)
{
	return geteuid() == 0;
}

#define SG_END_FIRST	"/sys/module/drmacct/parameters/trace_end_first"

void sg_need_end_first(void)
{
	if (!sg_is_root())
		DT_SKIP("needs root");
	if (access(SG_END_FIRST, W_OK))
		DT_FAIL("%s: %s (drmacct.ko without the test parameter?)", SG_END_FIRST,
			strerror(errno));
}

int sg_end_first(bool on)
{
	return sg_write_file(SG_END_FIRST, on ? "Y" : "N");
}

void sg_need_btf(void)
{
	if (access("/sys/kernel/btf/vmlinux", F_OK))
		DT_SKIP("this kernel has no BTF (CONFIG_DEBUG_INFO_BTF off): "
			"the CO-RE BPF programs cannot load");
}

struct dac_bpf *sg_bpf_load(const struct dac_bpf_load_opts *o)
{
	struct dac_bpf *b = NULL;
	int err;

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_need_btf();
	err = dac_bpf_load(o, &b);
	if (err)
		DT_FAIL("dac_bpf_load: %s (%s); libbpf said:\n%s", dac_bpf_load_strerror(err),
			strerror(-err), dac_bpf_load_log());
	sg_bpf_label(b);
	return b;
}

void sg_bpf_sched_sums(struct dac_bpf *b, uint32_t tgid, uint64_t *busy, uint64_t *jobs)
{
	struct dac_bpf_sched *s = NULL;
	size_t n = 0;

	*busy = *jobs = 0;
	DT_ASSERT_EQ(dac_bpf_read_sched(b, &s, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (s[i].tgid != tgid)
			continue;
		*busy += s[i].busy_ns;
		*jobs += s[i].jobs;
	}
	free(s);
}

int sg_sched_events(void)
{
	const char *ev = "/sys/kernel/tracing/events/gpu_scheduler";
	char p[128];

	snprintf(p, sizeof(p), "%s/drm_sched_job_run", ev);
	if (!access(p, F_OK))
		return 617;
	snprintf(p, sizeof(p), "%s/drm_run_job", ev);
	return access(p, F_OK) ? 0 : 61;
}

void sg_bpf_label(struct dac_bpf *b)
{
	struct dac_bpf_info info;

	if (dac_bpf_info(b, &info))
		DT_FAIL("dac_bpf_info failed");
	if (!info.sched)
		return;
	dt_label("%s set", info.sched_617 ? "6.17" : "6.1");
	dt_label("%s", info.sched_btf ? "tp_btf" : "tracepoint");
}

int sg_parse_u64_list(const char *s, uint64_t *out, unsigned int max)
{
	unsigned int n = 0;
	char *end;

	if (*s++ != '{')
		return -1;
	if (*s == '}')
		return 0;
	for (;;) {
		if (n == max || *s < '0' || *s > '9')
			return -1;
		errno = 0;
		out[n++] = strtoull(s, &end, 0);
		if (end == s || errno)
			return -1;
		if (*end == '}')
			return (int)n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* Is /sys/bus/pci/devices/@bdf/@attr exactly @want (plus newline)? */
static bool pci_attr_is(const char *bdf, const char *attr, const char *want)
{
	char p[300], *v;
	bool same;

	snprintf(p, sizeof(p), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	v = sg_read_file(p, NULL);
	if (!v)
		return false;
	v[strcspn(v, "\n")] = '\0';
	same = strcmp(v, want) == 0;
	free(v);
	return same;
}

int sg_edu_bdf(char *bdf, size_t len)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *de;
	int ret = -1;

	if (!d)
		return -1;
	while (ret && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (pci_attr_is(de->d_name, "vendor", "0x1234") &&
		    pci_attr_is(de->d_name, "device", "0x11e8")) {
			ret = snprintf(bdf, len, "%s", de->d_name) < (int)len ? 0 : -1;
		}
	}
	closedir(d);
	return ret;
}

int sg_open_pci_node(const char *bdf)
{
	for (int i = 0; i < 100; i++) {
		DIR *d = opendir("/sys/class/drm");
		struct dirent *de;
		int fd = -1;

		DT_ASSERT_TRUE(d != NULL);
		while (fd < 0 && (de = readdir(d))) {
			char p[300], target[300];
			ssize_t n;

			if (strncmp(de->d_name, "renderD", 7))
				continue;
			snprintf(p, sizeof(p), "/sys/class/drm/%s/device", de->d_name);
			n = readlink(p, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (strcmp(basename(target), bdf))
				continue;
			snprintf(p, sizeof(p), "/dev/dri/%s", de->d_name);
			fd = open(p, O_RDWR | O_CLOEXEC);
		}
		closedir(d);
		if (fd >= 0)
			return fd;
		sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
	DT_FAIL("no render node for PCI device %s after modprobe simgpu pci=1", bdf);
	return -1;
}

int sg_simgpu_reload(const char *params)
{
	char path[64];

	sg_sh("rmmod simgpu 2>/dev/null");
	if (sg_sh("modprobe simgpu %s", params))
		return -1;
	for (int i = 0; i < 200; i++) {
		if (!sg_find_node(path, sizeof(path)))
			return 0;
		usleep(10000);
	}
	return -1;
}

long sg_simgpu_live(const char *what)
{
	char *buf = sg_read_file("/sys/kernel/debug/simgpu/objects", NULL), *p;
	long v = -1;

	DT_ASSERT_TRUE(buf != NULL);
	p = strstr(buf, what);
	if (p)
		v = strtol(p + strlen(what), NULL, 10);
	free(buf);
	return v;
}

void sg_reap(const pid_t *pid, int n)
{
	for (int i = 0; i < n; i++) {
		int status;

		DT_ASSERT_EQ(waitpid(pid[i], &status, 0), pid[i]);
		DT_ASSERT_EQ(status, 0);
	}
}

int sg_catch_proc(void *ctx, const struct dac_bpf_event *ev)
{
	struct sg_proc_records *r = ctx;

	if (ev->type == DAC_BPF_LOST)
		r->lost += ev->lost.count;
	if (ev->type != DAC_BPF_PROC_EXIT)
		return 0;
	for (int i = 0; i < r->n; i++) {
		if ((uint32_t)r->pid[i] != ev->proc.tgid)
			continue;
		r->rec[i] = ev->proc;
		r->rec[i].rings = NULL;
		r->records[i]++;
	}
	return 0;
}

void sg_bpf_poll_procs(struct dac_bpf *b, struct sg_proc_records *r, int tries)
{
	for (int t = 0; t < tries; t++) {
		int done = 0;

		DT_ASSERT_GE(dac_bpf_poll(b, 100, sg_catch_proc, r), 0);
		for (int i = 0; i < r->n; i++)
			done += r->records[i] > 0;
		if (done == r->n)
			return;
	}
}
