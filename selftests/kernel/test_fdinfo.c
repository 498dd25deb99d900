// SPDX-License-Identifier: GPL-2.0
/*
 * simgpu fdinfo: exact format and key set of a fresh file, client names,
 * isolation between files and client identity across dup()/fork()/open().
 * The expected key set is built from QUERY_DEVICE/QUERY_ENGINE, not from the
 * fdinfo output itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drm_client.h"
#include "dtest.h"
#include "sgtest.h"

DT_FIXTURE(gpu) {
	int fd;
	struct sg_dev dev;
};

DT_SETUP(gpu)
{
	self->fd = sg_open();
	sg_query(self->fd, &self->dev);
}

DT_TEARDOWN(gpu)
{
	sg_dev_free(&self->dev);
	if (self->fd >= 0)
		close(self->fd);
}

/* Keys every file has regardless of the driver (fs/proc/fd.c). */
static const char *const vfs_keys[] = { "pos", "flags", "mnt_id", "ino" };

static bool is_vfs_key(const char *k)
{
	for (size_t i = 0; i < sizeof(vfs_keys) / sizeof(vfs_keys[0]); i++)
		if (!strcmp(k, vfs_keys[i]))
			return true;
	return false;
}

/* Whether the device behind @fd sits on the PCI bus (then drm-pdev is due). */
static bool fd_is_pci(int fd)
{
	char path[128], link[256];
	struct stat st;
	ssize_t n;

	DT_ASSERT_EQ(fstat(fd, &st), 0);
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/subsystem",
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strlen(link) >= 4 && !strcmp(link + strlen(link) - 4, "/pci");
}

struct expect {
	char key[160];
	const char *unit;	/* NULL: string value */
	bool seen;
};

static void add(struct expect *e, size_t *n, size_t cap, const char *unit, const char *fmt,
		const char *arg)
{
	DT_ASSERT_LT(*n, cap);
	snprintf(e[*n].key, sizeof(e[*n].key), fmt, arg);
	e[*n].unit = unit;
	e[*n].seen = false;
	(*n)++;
}

static const char *const mem_keys[] = { "total", "shared", "resident", "purgeable", "active" };

/*
 * A fresh file: every line "key:<TAB>value", the drm- keys are exactly the
 * documented set for this device with zero usage, the right units, and
 * nothing else.
 */
DT_TEST_F(gpu, fresh_file_exact_key_set)
{
	size_t cap = 16 + self->dev.num_engines * 6 + 64, n = 0, regions = 0;
	struct expect *e = calloc(cap, sizeof(*e));
	bool legacy = self->dev.q.flags & SIMGPU_DEVICE_LEGACY_MEMORY;
	struct sg_fdinfo fi;

	DT_ASSERT_TRUE(e != NULL);
	DT_ASSERT_TRUE(self->dev.q.flags & SIMGPU_DEVICE_ACCOUNTING);
	sg_fdinfo_read(self->fd, &fi);

	add(e, &n, cap, NULL, "drm-driver%s", "");
	add(e, &n, cap, "", "drm-client-id%s", "");
	if (fd_is_pci(self->fd))
		add(e, &n, cap, NULL, "drm-pdev%s", "");
	for (unsigned int i = 0; i < self->dev.num_engines; i++) {
		const struct sg_engine *en = &self->dev.eng[i];

		add(e, &n, cap, "ns", "drm-engine-%s", en->q.name);
		if (en->q.capacity > 1)
			add(e, &n, cap, "", "drm-engine-capacity-%s", en->q.name);
		add(e, &n, cap, "", "drm-cycles-%s", en->q.name);
		if (en->q.flags & SIMGPU_ENGINE_TOTAL_CYCLES)
			add(e, &n, cap, "", "drm-total-cycles-%s", en->q.name);
		else
			add(e, &n, cap, "Hz", "drm-maxfreq-%s", en->q.name);
	}
	/* memory regions: each drm-total-<r> brings the whole family */
	for (size_t i = 0; i < fi.n; i++) {
		const char *r;

		if (strncmp(fi.kv[i].key, "drm-total-", 10) ||
		    !strncmp(fi.kv[i].key, "drm-total-cycles-", 17))
			continue;
		r = fi.kv[i].key + 10;
		regions++;
		for (size_t m = 0; m < sizeof(mem_keys) / sizeof(mem_keys[0]); m++) {
			char fmt[64];

			snprintf(fmt, sizeof(fmt), "drm-%s-%%s", mem_keys[m]);
			add(e, &n, cap, "mem", fmt, r);
		}
		if (legacy)
			add(e, &n, cap, "mem", "drm-memory-%s", r);
	}
	DT_EXPECT_GE(regions, (size_t)1);

	for (size_t i = 0; i < fi.n; i++) {
		const struct sg_kv *kv = &fi.kv[i];
		struct expect *x = NULL;

		if (!kv->strict)
			SG_CHECK(false, "line %u '%s' is not 'key:<TAB>value'", kv->line, kv->key);
		if (is_vfs_key(kv->key))
			continue;
		for (size_t k = 0; k < n; k++)
			if (!strcmp(e[k].key, kv->key))
				x = &e[k];
		if (!x) {
			SG_CHECK(false, "unexpected key '%s: %s'",
				      kv->key, kv->val);
			continue;
		}
		if (x->seen)
			SG_CHECK(false, "key '%s' twice", kv->key);
		x->seen = true;
		if (!x->unit)
			continue;
		if (!kv->has_num) {
			SG_CHECK(false, "%s: '%s' is not a number",
				      kv->key, kv->val);
			continue;
		}
		if (!strcmp(x->unit, "mem")) {
			DT_EXPECT_EQ(sg_fdinfo_bytes(&fi, kv->key), 0ull);
			continue;
		}
		DT_EXPECT_STREQ(kv->unit, x->unit);
	}
	for (size_t k = 0; k < n; k++)
		if (!e[k].seen)
			SG_CHECK(false, "missing key '%s'", e[k].key);

	DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-driver")->val, "simgpu");
	DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-client-id", ""), self->dev.q.client_id);
	DT_EXPECT_NE(self->dev.q.client_id, 0ull);
	for (unsigned int i = 0; i < self->dev.num_engines; i++) {
		const struct sg_engine *en = &self->dev.eng[i];
		char key[128];

		DT_EXPECT_EQ(sg_fdinfo_engine_ns(&fi, en->q.name), 0ull);
		DT_EXPECT_EQ(sg_fdinfo_cycles(&fi, en->q.name), 0ull);
		snprintf(key, sizeof(key), "drm-engine-capacity-%s", en->q.name);
		if (en->q.capacity > 1)
			DT_EXPECT_EQ(sg_fdinfo_u64(&fi, key, ""), (uint64_t)en->q.capacity);
	}
	sg_fdinfo_free(&fi);
	free(e);
}

/* Engine names are usable as <str>: non-empty, no whitespace or colon, unique. */
DT_TEST_F(gpu, engine_names_valid_and_unique)
{
	for (unsigned int i = 0; i < self->dev.num_engines; i++) {
		const char *n = self->dev.eng[i].q.name;

		DT_EXPECT_GT(strlen(n), (size_t)0);
		DT_EXPECT_TRUE(strpbrk(n, " \t\n:") == NULL);
		for (unsigned int k = 0; k < i; k++)
			DT_EXPECT_STRNE(n, self->dev.eng[k].q.name);
	}
}

/* The DRM core's DRM_IOCTL_SET_CLIENT_NAME where it has one, else simgpu's. */
static int set_name(int fd, const char *s, uint32_t len)
{
	return sg_set_client_name(fd, s, len);
}

/* drm-client-name: appears when set, follows changes, disappears when cleared. */
DT_TEST_F(gpu, client_name)
{
	char longest[SIMGPU_CLIENT_NAME_MAX + 1];
	struct sg_fdinfo fi;

	memset(longest, 'n', sizeof(longest));
	DT_ASSERT_EQ(set_name(self->fd, "first-name-and-junk", 10), 0);
	sg_fdinfo_read(self->fd, &fi);
	DT_ASSERT_TRUE(sg_fdinfo_find(&fi, "drm-client-name") != NULL);
	DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-client-name")->val, "first-name");
	sg_fdinfo_free(&fi);

	/* bad names are rejected and leave the old name */
	DT_EXPECT_ERRNO(set_name(self->fd, "has space", 9), EINVAL);
	DT_EXPECT_ERRNO(set_name(self->fd, "tab\there", 8), EINVAL);
	DT_EXPECT_ERRNO(set_name(self->fd, longest, SIMGPU_CLIENT_NAME_MAX + 1), EINVAL);
	sg_fdinfo_read(self->fd, &fi);
	DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-client-name")->val, "first-name");
	sg_fdinfo_free(&fi);

	/* the longest allowed name is printed whole */
	longest[SIMGPU_CLIENT_NAME_MAX] = '\0';
	DT_ASSERT_EQ(set_name(self->fd, longest, SIMGPU_CLIENT_NAME_MAX), 0);
	sg_fdinfo_read(self->fd, &fi);
	DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-client-name")->val, longest);
	sg_fdinfo_free(&fi);

	DT_ASSERT_EQ(set_name(self->fd, NULL, 0), 0);
	sg_fdinfo_read(self->fd, &fi);
	DT_EXPECT_TRUE(sg_fdinfo_find(&fi, "drm-client-name") == NULL);
	sg_fdinfo_free(&fi);
}

/*
 * Every key at most once per fdinfo, with a name set, a job run and a
 * buffer: where the DRM core owns drm-client-name (6.13+) it prints it and
 * the helper must not print a second one; before, the helper prints it.
 * Exactly one of the two name ioctls works: the core's, or simgpu's.
 */
DT_TEST_F(gpu, each_key_once_with_a_name)
{
	struct drm_simgpu_set_client_name a;
	bool core = sg_core_client_name(self->fd);
	const struct sg_engine *eng = sg_engine_simple(&self->dev);
	struct sg_fdinfo fi;
	size_t names = 0;

	dt_info("drm-client-name owned by %s", core ? "the DRM core" : "the helper");
	memset(&a, 0, sizeof(a));
	a.name = (uintptr_t)"simgpu-name";
	a.len = 11;
	if (core)
		DT_EXPECT_ERRNO(ioctl(self->fd, DRM_IOCTL_SIMGPU_SET_CLIENT_NAME, &a), EOPNOTSUPP);
	else
		DT_EXPECT_EQ(dac_drm_set_client_name(self->fd, "core-name", 9), -EOPNOTSUPP);
	DT_ASSERT_EQ(sg_set_client_name(self->fd, "once-only", 9), 0);
	DT_ASSERT_TRUE(eng != NULL);
	sg_wait(self->fd, sg_submit_busy(self->fd, eng->index, 0, NSEC_PER_MSEC), NULL);
	sg_bo_create(self->fd, 8192);

	sg_fdinfo_read(self->fd, &fi);
	for (size_t i = 0; i < fi.n; i++) {
		if (!strcmp(fi.kv[i].key, "drm-client-name")) {
			names++;
			DT_EXPECT_STREQ(fi.kv[i].val, "once-only");
		}
		for (size_t j = i + 1; j < fi.n; j++)
			DT_EXPECT_STRNE(fi.kv[i].key, fi.kv[j].key);
	}
	DT_EXPECT_EQ(names, (size_t)1);
	sg_fdinfo_free(&fi);
}

/*
 * Load on one open file does not show on another open of the same device:
 * A's busy time equals its job's WAIT busy time, B stays at 0 on every
 * engine; the two have different client ids.
 */
DT_TEST_F(gpu, isolation_between_opens)
{
	int b = sg_open();
	struct drm_simgpu_wait w;
	struct sg_fdinfo fa, fb;
	uint64_t job;

	DT_EXPECT_NE(sg_client_id(b), self->dev.q.client_id);
	job = sg_submit_busy(self->fd, 0, SIMGPU_INSTANCE_ANY, 200 * NSEC_PER_MSEC);
	sg_wait(self->fd, job, &w);
	sg_fdinfo_read(self->fd, &fa);
	sg_fdinfo_read(b, &fb);
	sg_truth_expect_one("fdinfo", sg_fdinfo_engine_ns(&fa, self->dev.eng[0].q.name), &w);
	DT_EXPECT_EQ(sg_fdinfo_cycles(&fa, self->dev.eng[0].q.name), w.cycles);
	for (unsigned int i = 0; i < self->dev.num_engines; i++) {
		DT_EXPECT_EQ(sg_fdinfo_engine_ns(&fb, self->dev.eng[i].q.name), 0ull);
		DT_EXPECT_EQ(sg_fdinfo_cycles(&fb, self->dev.eng[i].q.name), 0ull);
	}
	DT_EXPECT_NE(sg_fdinfo_u64(&fa, "drm-client-id", ""),
		     sg_fdinfo_u64(&fb, "drm-client-id", ""));
	/* jobs are per file: B cannot wait for A's job */
	DT_EXPECT_TRUE(sg_wait_raw(b, job, 0, &w) == -1);
	sg_fdinfo_free(&fa);
	sg_fdinfo_free(&fb);
	close(b);
}

/* dup() shares the file: same client id, same numbers, load via either shows on both. */
DT_TEST_F(gpu, dup_shares_client)
{
	int d = dup(self->fd);
	struct drm_simgpu_wait w;
	struct sg_fdinfo a, b;
	const char *n = self->dev.eng[0].q.name;
	uint64_t job;

	DT_ASSERT_GE(d, 0);
	DT_EXPECT_EQ(sg_client_id(d), self->dev.q.client_id);
	job = sg_submit_busy(d, 0, SIMGPU_INSTANCE_ANY, 50 * NSEC_PER_MSEC);
	sg_wait(self->fd, job, &w);	/* same file, so the job is visible via either fd */
	sg_fdinfo_read(self->fd, &a);
	sg_fdinfo_read(d, &b);
	DT_EXPECT_EQ(sg_fdinfo_u64(&a, "drm-client-id", ""), sg_fdinfo_u64(&b, "drm-client-id", ""));
	DT_EXPECT_EQ(sg_fdinfo_engine_ns(&a, n), sg_fdinfo_engine_ns(&b, n));
	DT_EXPECT_EQ(sg_fdinfo_cycles(&a, n), w.cycles);
	DT_EXPECT_EQ(sg_fdinfo_cycles(&b, n), w.cycles);
	sg_truth_expect_one("fdinfo", sg_fdinfo_engine_ns(&a, n), &w);
	sg_fdinfo_free(&a);
	sg_fdinfo_free(&b);
	close(d);
}

/*
 * fork(): the child's inherited fd is the same client (id and numbers); the
 * child's job shows in the parent's fdinfo, and the parent can read the
 * child's /proc/<pid>/fdinfo with the same values.
 */
DT_TEST_F(gpu, fork_shares_client)
{
	const char *n = self->dev.eng[0].q.name;
	int up[2], down[2];
	struct {
		uint64_t id_query, id_fdinfo, job;
		struct drm_simgpu_wait w;
	} msg;
	struct sg_fdinfo mine, theirs;
	char go = 0;
	pid_t pid;
	int st, r;

	DT_ASSERT_EQ(pipe(up), 0);
	DT_ASSERT_EQ(pipe(down), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct sg_fdinfo fi;

		memset(&msg, 0, sizeof(msg));
		msg.id_query = sg_client_id(self->fd);
		sg_fdinfo_read(self->fd, &fi);
		msg.id_fdinfo = sg_fdinfo_u64(&fi, "drm-client-id", "");
		msg.job = sg_submit_busy(self->fd, 0, SIMGPU_INSTANCE_ANY, 50 * NSEC_PER_MSEC);
		sg_wait(self->fd, msg.job, &msg.w);
		if (write(up[1], &msg, sizeof(msg)) != (ssize_t)sizeof(msg))
			_exit(3);
		/* stay alive until the parent has read our fdinfo */
		if (read(down[0], &go, 1) != 1)
			_exit(3);
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	r = (int)read(up[0], &msg, sizeof(msg));
	DT_ASSERT_EQ(r, (int)sizeof(msg));
	DT_EXPECT_EQ(msg.id_query, self->dev.q.client_id);
	DT_EXPECT_EQ(msg.id_fdinfo, self->dev.q.client_id);

	sg_fdinfo_read(self->fd, &mine);
	DT_ASSERT_EQ(sg_fdinfo_read_pid(pid, self->fd, &theirs), 0);
	DT_EXPECT_EQ(sg_fdinfo_u64(&theirs, "drm-client-id", ""), self->dev.q.client_id);
	DT_EXPECT_EQ(sg_fdinfo_engine_ns(&mine, n), sg_fdinfo_engine_ns(&theirs, n));
	DT_EXPECT_EQ(sg_fdinfo_cycles(&mine, n), msg.w.cycles);
	sg_truth_expect_one("fdinfo", sg_fdinfo_engine_ns(&mine, n), &msg.w);
	sg_fdinfo_free(&mine);
	sg_fdinfo_free(&theirs);

	DT_EXPECT_EQ(write(down[1], &go, 1), 1);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(up[0]);
	close(down[1]);
}

/*
 * Client ids are never reused: across many open/close cycles (and a few
 * files held open meanwhile) every new id is larger than every earlier one,
 * and fdinfo and QUERY_DEVICE agree.
 */
DT_TEST_F(gpu, client_ids_never_reused)
{
	enum { ROUNDS = 300, HELD = 8 };
	uint64_t last = self->dev.q.client_id;
	int held[HELD];
	size_t nheld = 0;

	for (int i = 0; i < ROUNDS; i++) {
		int fd = sg_open();
		uint64_t id = sg_client_id(fd);

		DT_ASSERT_GT(id, last);
		last = id;
		if (i % 37 == 0) {
			struct sg_fdinfo fi;

			sg_fdinfo_read(fd, &fi);
			DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-client-id", ""), id);
			sg_fdinfo_free(&fi);
		}
		if (i % 41 == 0 && nheld < HELD)
			held[nheld++] = fd;	/* interleave long-lived files */
		else
			close(fd);
	}
	for (size_t i = 0; i < nheld; i++)
		close(held[i]);
	/* ids from another process keep increasing as well */
	pid_t pid = fork();

	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = sg_open_raw();
		struct drm_simgpu_query_device q;

		memset(&q, 0, sizeof(q));
		if (fd < 0 || ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &q))
			_exit(2);
		_exit(q.client_id > last ? 0 : 1);
	}
	int st;

	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

DT_MAIN
