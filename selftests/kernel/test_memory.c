// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu memory keys (drm-total/shared/resident/purgeable/active-<region>):
 * exact byte counts after creating buffers of known sizes, after a PRIME
 * import by another file, madvise, a job using a buffer, and freeing.
 * Expected values come from the sizes the test asked for (rounded up to the
 * page size, as the uapi documents), never from fdinfo itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

struct mem {
	uint64_t total, shared, resident, purgeable, active;
};

DT_FIXTURE(m) {
	int fd;
	struct sg_dev dev;
	char region[64];
	uint64_t page;
};

/* The one region simgpu has: the suffix of its only drm-total-<r> key. */
static void find_region(int fd, char *out, size_t len)
{
	struct sg_fdinfo fi;
	size_t n = 0;

	sg_fdinfo_read(fd, &fi);
	for (size_t i = 0; i < fi.n; i++) {
		if (strncmp(fi.kv[i].key, "drm-total-", 10) ||
		    !strncmp(fi.kv[i].key, "drm-total-cycles-", 17))
			continue;
		snprintf(out, len, "%s", fi.kv[i].key + 10);
		n++;
	}
	sg_fdinfo_free(&fi);
	DT_ASSERT_EQ(n, (size_t)1);
}

DT_SETUP(m)
{
	self->fd = sg_open();
	sg_query(self->fd, &self->dev);
	self->page = (uint64_t)sysconf(_SC_PAGESIZE);
	find_region(self->fd, self->region, sizeof(self->region));
}

DT_TEARDOWN(m)
{
	sg_dev_free(&self->dev);
	if (self->fd >= 0)
		close(self->fd);
}

static struct mem mem_of(int fd, const char *r)
{
	struct sg_fdinfo fi;
	struct mem m;
	char k[128];

	sg_fdinfo_read(fd, &fi);
	snprintf(k, sizeof(k), "drm-total-%s", r);
	m.total = sg_fdinfo_bytes(&fi, k);
	snprintf(k, sizeof(k), "drm-shared-%s", r);
	m.shared = sg_fdinfo_bytes(&fi, k);
	snprintf(k, sizeof(k), "drm-resident-%s", r);
	m.resident = sg_fdinfo_bytes(&fi, k);
	snprintf(k, sizeof(k), "drm-purgeable-%s", r);
	m.purgeable = sg_fdinfo_bytes(&fi, k);
	snprintf(k, sizeof(k), "drm-active-%s", r);
	m.active = sg_fdinfo_bytes(&fi, k);
	sg_fdinfo_free(&fi);
	return m;
}

#define EXPECT_MEM(m, t, s, r, p, a)					\
	do {								\
		struct mem m_ = (m);					\
		DT_EXPECT_EQ(m_.total, (uint64_t)(t));			\
		DT_EXPECT_EQ(m_.shared, (uint64_t)(s));			\
		DT_EXPECT_EQ(m_.resident, (uint64_t)(r));		\
		DT_EXPECT_EQ(m_.purgeable, (uint64_t)(p));		\
		DT_EXPECT_EQ(m_.active, (uint64_t)(a));			\
	} while (0)

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* Buffers of known sizes: total and resident are their page-rounded sum. */
DT_TEST_F(m, create_exact_bytes_then_free)
{
	const uint64_t sizes[] = { 1, 4096, 3 * 4096 + 1, 1 << 20, (5 << 20) + 100 };
	const size_t n = sizeof(sizes) / sizeof(sizes[0]);
	uint32_t h[sizeof(sizes) / sizeof(sizes[0])];
	uint64_t sum = 0;

	EXPECT_MEM(mem_of(self->fd, self->region), 0, 0, 0, 0, 0);
	for (size_t i = 0; i < n; i++) {
		h[i] = sg_bo_create(self->fd, sizes[i]);
		sum += round_up(sizes[i], self->page);
		/* simgpu allocates backing pages at creation: resident at once */
		EXPECT_MEM(mem_of(self->fd, self->region), sum, 0, sum, 0, 0);
	}
	for (size_t i = 0; i < n; i++) {
		struct drm_simgpu_gem_info gi;

		memset(&gi, 0, sizeof(gi));
		gi.handle = h[i];
		DT_ASSERT_EQ(ioctl(self->fd, DRM_IOCTL_SIMGPU_GEM_INFO, &gi), 0);
		DT_EXPECT_EQ(gi.size, round_up(sizes[i], self->page));
	}
	for (size_t i = 0; i < n; i++) {
		sg_bo_close(self->fd, h[i]);
		sum -= round_up(sizes[i], self->page);
		EXPECT_MEM(mem_of(self->fd, self->region), sum, 0, sum, 0, 0);
	}
}

/*
 * PRIME: a buffer exported by A and imported by B counts as shared for
 * both; B's total includes it; when B drops it, A's shared returns to 0.
 */
DT_TEST_F(m, prime_import_is_shared_for_both)
{
	const uint64_t a_sz = 64 << 10, b_sz = 2 << 20;
	int other = sg_open();
	uint32_t a, b, imp;
	int dmabuf;

	a = sg_bo_create(self->fd, a_sz);
	b = sg_bo_create(self->fd, b_sz);
	dmabuf = sg_bo_export(self->fd, b);
	/* exporting alone shares nothing */
	EXPECT_MEM(mem_of(self->fd, self->region), a_sz + b_sz, 0, a_sz + b_sz, 0, 0);

	imp = sg_bo_import(other, dmabuf);
	EXPECT_MEM(mem_of(self->fd, self->region), a_sz + b_sz, b_sz, a_sz + b_sz, 0, 0);
	EXPECT_MEM(mem_of(other, self->region), b_sz, b_sz, b_sz, 0, 0);
	/* the other file's client is a different client */
	DT_EXPECT_NE(sg_client_id(other), self->dev.q.client_id);

	/* importing again into the same file gives the same handle, no double count */
	DT_EXPECT_EQ(sg_bo_import(other, dmabuf), imp);
	EXPECT_MEM(mem_of(other, self->region), b_sz, b_sz, b_sz, 0, 0);

	sg_bo_close(other, imp);
	EXPECT_MEM(mem_of(other, self->region), 0, 0, 0, 0, 0);
	EXPECT_MEM(mem_of(self->fd, self->region), a_sz + b_sz, 0, a_sz + b_sz, 0, 0);

	/* the importer keeps the buffer alive after the exporter dropped it */
	imp = sg_bo_import(other, dmabuf);
	sg_bo_close(self->fd, b);
	EXPECT_MEM(mem_of(self->fd, self->region), a_sz, 0, a_sz, 0, 0);
	EXPECT_MEM(mem_of(other, self->region), b_sz, 0, b_sz, 0, 0);
	close(dmabuf);
	close(other);
	sg_bo_close(self->fd, a);
	EXPECT_MEM(mem_of(self->fd, self->region), 0, 0, 0, 0, 0);
}

/* madvise DONTNEED makes a resident buffer purgeable; WILLNEED undoes it. */
DT_TEST_F(m, madvise_purgeable)
{
	const uint64_t s1 = 128 << 10, s2 = 3 << 20;
	uint32_t h1 = sg_bo_create(self->fd, s1);
	uint32_t h2 = sg_bo_create(self->fd, s2);

	DT_EXPECT_EQ(sg_bo_madvise(self->fd, h2, SIMGPU_MADV_DONTNEED), 1u);
	EXPECT_MEM(mem_of(self->fd, self->region), s1 + s2, 0, s1 + s2, s2, 0);
	DT_EXPECT_EQ(sg_bo_madvise(self->fd, h1, SIMGPU_MADV_DONTNEED), 1u);
	EXPECT_MEM(mem_of(self->fd, self->region), s1 + s2, 0, s1 + s2, s1 + s2, 0);
	DT_EXPECT_EQ(sg_bo_madvise(self->fd, h2, SIMGPU_MADV_WILLNEED), 1u);
	EXPECT_MEM(mem_of(self->fd, self->region), s1 + s2, 0, s1 + s2, s1, 0);
	sg_bo_close(self->fd, h1);
	EXPECT_MEM(mem_of(self->fd, self->region), s2, 0, s2, 0, 0);
	sg_bo_close(self->fd, h2);
	EXPECT_MEM(mem_of(self->fd, self->region), 0, 0, 0, 0, 0);
}

/*
 * A buffer is active while a job that uses it is unfinished (queued behind a
 * long job on the same instance, so the window is long and known), and
 * inactive once WAIT says the job is done.
 */
DT_TEST_F(m, active_while_job_uses_buffer)
{
	const uint64_t s_src = 256 << 10, s_dst = 512 << 10, s_idle = 64 << 10;
	const struct sg_engine *e = sg_engine_simple(&self->dev);
	uint32_t src, dst, idle;
	struct drm_simgpu_submit s;
	struct drm_simgpu_wait w;
	uint64_t blocker, copy, t_read;
	struct mem m;

	if (!e)
		DT_SKIP("no capacity-1 engine");
	src = sg_bo_create(self->fd, s_src);
	dst = sg_bo_create(self->fd, s_dst);
	idle = sg_bo_create(self->fd, s_idle);
	blocker = sg_submit_busy(self->fd, e->index, 0, 600 * NSEC_PER_MSEC);
	memset(&s, 0, sizeof(s));
	s.engine = e->index;
	s.instance = 0;
	s.op = SIMGPU_OP_COPY;
	s.src_handle = src;
	s.dst_handle = dst;
	s.size = s_src;
	copy = sg_submit(self->fd, &s);

	sg_sleep_ns(100 * NSEC_PER_MSEC);
	t_read = sg_now_ns();
	m = mem_of(self->fd, self->region);
	sg_wait(self->fd, blocker, &w);
	/* only meaningful if the read happened before the copy could finish */
	DT_ASSERT_LT(t_read, w.end_ns);
	EXPECT_MEM(m, s_src + s_dst + s_idle, 0, s_src + s_dst + s_idle, 0, s_src + s_dst);

	sg_wait(self->fd, copy, &w);
	EXPECT_MEM(mem_of(self->fd, self->region), s_src + s_dst + s_idle, 0,
		   s_src + s_dst + s_idle, 0, 0);
	sg_bo_close(self->fd, src);
	sg_bo_close(self->fd, dst);
	sg_bo_close(self->fd, idle);
	EXPECT_MEM(mem_of(self->fd, self->region), 0, 0, 0, 0, 0);
}

/* Closing the file frees everything: a new file of the same process starts at 0. */
DT_TEST_F(m, new_file_starts_empty)
{
	int fd = sg_open();

	sg_bo_create(fd, 1 << 20);
	EXPECT_MEM(mem_of(fd, self->region), 1 << 20, 0, 1 << 20, 0, 0);
	close(fd);
	fd = sg_open();
	EXPECT_MEM(mem_of(fd, self->region), 0, 0, 0, 0, 0);
	close(fd);
}

/* FILL and COPY do real work: the bytes are there when read back via mmap. */
DT_TEST_F(m, fill_and_copy_do_the_work)
{
	const uint64_t sz = 3 * 4096;
	struct drm_simgpu_gem_info gi;
	struct drm_simgpu_submit s;
	uint32_t a, b;
	unsigned char *pa, *pb;

	a = sg_bo_create(self->fd, sz);
	b = sg_bo_create(self->fd, sz);
	memset(&s, 0, sizeof(s));
	s.engine = 0;
	s.instance = SIMGPU_INSTANCE_ANY;
	s.op = SIMGPU_OP_FILL;
	s.dst_handle = a;
	s.dst_offset = 100;
	s.size = 5000;
	s.value = 0xa5;
	sg_wait(self->fd, sg_submit(self->fd, &s), NULL);
	memset(&s, 0, sizeof(s));
	s.engine = 0;
	s.instance = SIMGPU_INSTANCE_ANY;
	s.op = SIMGPU_OP_COPY;
	s.src_handle = a;
	s.dst_handle = b;
	s.src_offset = 0;
	s.dst_offset = 4096;
	s.size = 8192;
	sg_wait(self->fd, sg_submit(self->fd, &s), NULL);

	memset(&gi, 0, sizeof(gi));
	gi.handle = a;
	DT_ASSERT_EQ(ioctl(self->fd, DRM_IOCTL_SIMGPU_GEM_INFO, &gi), 0);
	pa = mmap(NULL, sz, PROT_READ, MAP_SHARED, self->fd, (off_t)gi.mmap_offset);
	DT_ASSERT_TRUE(pa != MAP_FAILED);
	gi.handle = b;
	DT_ASSERT_EQ(ioctl(self->fd, DRM_IOCTL_SIMGPU_GEM_INFO, &gi), 0);
	pb = mmap(NULL, sz, PROT_READ, MAP_SHARED, self->fd, (off_t)gi.mmap_offset);
	DT_ASSERT_TRUE(pb != MAP_FAILED);
	for (uint64_t i = 0; i < sz; i++) {
		unsigned char want_a = (i >= 100 && i < 5100) ? 0xa5 : 0;
		unsigned char want_b = (i >= 4096) ? ((i - 4096 >= 100 && i - 4096 < 5100) ? 0xa5 : 0)
						   : 0;

		if (pa[i] != want_a || pb[i] != want_b)
			DT_FAIL("byte %" PRIu64 ": a %#x (want %#x) b %#x (want %#x)", i, pa[i],
				want_a, pb[i], want_b);
	}
	munmap(pa, sz);
	munmap(pb, sz);
}

/* GEM_CREATE of @size bytes: 0 and the handle, or the errno. */
static int try_create(int fd, uint64_t size, uint32_t *handle)
{
	struct drm_simgpu_gem_create c;

	memset(&c, 0, sizeof(c));
	c.size = size;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_GEM_CREATE, &c))
		return errno;
	*handle = c.handle;
	return 0;
}

/*
 * The pin budget (max_pinned_mb): a file's buffers keep their pages pinned
 * until freed, so simgpu charges the file that created them; past the
 * budget GEM_CREATE fails with ENOSPC, and a freed buffer gives its pages
 * back. Run as nobody, whom the render node lets in like any desktop user:
 * the budget is what stops such a user from pinning the guest's memory.
 * The child reports each step's errno through a pipe.
 */
DT_TEST(pin_budget_holds_for_an_unprivileged_user)
{
	const uint64_t mib = 1 << 20;
	enum { STEPS = 7 };
	/*
	 * 8 MiB: 3 + 3 fit, a third 3 does not, 2 does; then not one page
	 * more; a second file of the same user has a budget of its own; and
	 * freeing a 3 MiB buffer makes room for another.
	 */
	const int want[STEPS] = { 0, 0, ENOSPC, 0, ENOSPC, 0, 0 };
	int got[STEPS], pfd[2], status;
	char node[64];
	pid_t pid;

	memset(got, -1, sizeof(got));

	if (!sg_is_root())
		DT_SKIP("reloading simgpu needs root");
	DT_ASSERT_EQ(sg_simgpu_reload("max_pinned_mb=8"), 0);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	DT_ASSERT_EQ(chmod(node, 0666), 0);
	DT_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct drm_gem_close gc;
		uint32_t h[STEPS] = { 0 };
		int fd, fd2, r[STEPS];

		close(pfd[0]);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = open(node, O_RDWR | O_CLOEXEC);
		fd2 = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0 || fd2 < 0)
			_exit(11);
		r[0] = try_create(fd, 3 * mib, &h[0]);
		r[1] = try_create(fd, 3 * mib, &h[1]);
		r[2] = try_create(fd, 3 * mib, &h[2]);
		r[3] = try_create(fd, 2 * mib, &h[3]);
		r[4] = try_create(fd, 1, &h[4]);
		r[5] = try_create(fd2, 3 * mib, &h[5]);
		memset(&gc, 0, sizeof(gc));
		gc.handle = h[0];
		if (ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc))
			_exit(12);
		r[6] = try_create(fd, 3 * mib, &h[6]);
		if (write(pfd[1], r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(13);
		_exit(0);
	}
	close(pfd[1]);
	DT_EXPECT_EQ(read(pfd[0], got, sizeof(got)), (ssize_t)sizeof(got));
	close(pfd[0]);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int i = 0; i < STEPS; i++)
		DT_EXPECT_EQ(got[i], want[i]);
	DT_EXPECT_EQ(sg_simgpu_reload(""), 0);
}

DT_MAIN
