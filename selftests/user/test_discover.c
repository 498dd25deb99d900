// SPDX-License-Identifier: MIT
/*
 * test_discover.c - /proc discovery on synthetic trees and on the real /proc.
 */
#define _GNU_SOURCE
#include "discover.h"
#include "dtest.h"
#include "proc_tree.h"
#include "tracker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

struct seen {
	pid_t pid;
	int fd;
	unsigned int maj, min;
	char comm[64];
	char *text;
	uint64_t read_ns, read_start_ns;
};

struct seen_list {
	struct seen v[8192];
	size_t n;
	int stop_after;		/* > 0: return stop_value (42) after this many */
	int stop_value;
};

static int collect(const struct dac_fd_info *fdi, void *arg)
{
	struct seen_list *l = arg;
	struct seen *s;

	DT_ASSERT_LT(l->n, sizeof(l->v) / sizeof(l->v[0]));
	s = &l->v[l->n++];
	s->pid = fdi->pid;
	s->fd = fdi->fd;
	s->maj = fdi->major;
	s->min = fdi->minor;
	DT_ASSERT_EQ(fdi->rdev, makedev(fdi->major, fdi->minor));
	DT_ASSERT_EQ(strlen(fdi->text), fdi->len);
	snprintf(s->comm, sizeof(s->comm), "%s", fdi->comm);
	s->text = strdup(fdi->text);
	DT_ASSERT_TRUE(s->text != NULL);
	s->read_ns = fdi->read_ns;
	s->read_start_ns = fdi->read_start_ns;
	if (l->stop_after && (int)l->n == l->stop_after)
		return l->stop_value ? l->stop_value : 42;
	return 0;
}

static const struct seen *find(const struct seen_list *l, pid_t pid, int fd)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].fd == fd)
			return &l->v[i];
	return NULL;
}

static void free_list(struct seen_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].text);
	l->n = 0;
}

static int walk(const char *root, pid_t pid, int fd, struct seen_list *l,
		struct dac_discover_stats *st)
{
	struct dac_discover_opts o = { .proc_root = root, .pid = pid, .fd = fd };
	struct dac_discover *d = dac_discover_new(&o);
	int ret;

	DT_ASSERT_TRUE(d != NULL);
	ret = dac_discover_run(d, collect, l, st);
	dac_discover_free(d);
	return ret;
}

static const char *A = "drm-driver:\tsimgpu\ndrm-client-id:\t7\ndrm-engine-render:\t100 ns\n";
static const char *B = "drm-driver:\tivpu\ndrm-client-id:\t3\n";
static const char *C = "drm-driver:\tsimgpu\ndrm-client-id:\t9\n";

static struct seen_list *L;

static void build_basic(struct proc_tree *pt)
{
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 100, "glxgears"), 0);
	DT_ASSERT_EQ(proc_tree_add_link_fd(pt, 100, 0, "/dev/null"), 0);
	DT_ASSERT_EQ(proc_tree_add_link_fd(pt, 100, 1, "/"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 100, 3, 226, 128, A), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 100, 4, 261, 0, B), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 100, 12, 226, 128, A), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 200, "vkcube"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, 200, 7, 226, 0, C), 0);
	/* A char device of another major is not DRM: */
	DT_ASSERT_EQ(proc_tree_add_link_fd(pt, 200, 8, "/dev/char/1:3"), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 300, "bash"), 0);
	DT_ASSERT_EQ(proc_tree_add_link_fd(pt, 300, 0, "/dev/null"), 0);
	/* Not processes: */
	DT_ASSERT_EQ(proc_tree_add_proc(pt, 0, "zero"), 0);
	{
		char p[PATH_MAX + 32];

		snprintf(p, sizeof(p), "%s/self", pt->root);
		DT_ASSERT_EQ(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/0123", pt->root);
		DT_ASSERT_EQ(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/meminfo", pt->root);
		DT_ASSERT_EQ(mkdir(p, 0755), 0);
	}
}

static void check_basic(struct proc_tree *pt)
{
	struct dac_discover_stats st;
	const struct seen *s;

	uint64_t t0, t1;

	L = calloc(1, sizeof(*L));
	DT_ASSERT_TRUE(L != NULL);
	t0 = dac_now_ns();
	DT_ASSERT_EQ(walk(pt->root, 0, -1, L, &st), 0);
	t1 = dac_now_ns();
	DT_EXPECT_EQ(L->n, (size_t)4);
	/* Each fdinfo's read time lies in the walk, in the order they were read. */
	for (size_t i = 0; i < L->n; i++) {
		DT_EXPECT_GE(L->v[i].read_ns, i ? L->v[i - 1].read_ns : t0);
		DT_EXPECT_LE(L->v[i].read_ns, t1);
		/* the read started before its middle, after the one before */
		DT_EXPECT_GE(L->v[i].read_start_ns, i ? L->v[i - 1].read_ns : t0);
		DT_EXPECT_LE(L->v[i].read_start_ns, L->v[i].read_ns);
	}
	s = find(L, 100, 3);
	DT_ASSERT_TRUE(s != NULL);
	DT_EXPECT_EQ(s->maj, 226u);
	DT_EXPECT_EQ(s->min, 128u);
	DT_EXPECT_STREQ(s->comm, "glxgears");
	DT_EXPECT_STREQ(s->text, A);
	s = find(L, 100, 4);
	DT_ASSERT_TRUE(s != NULL);
	DT_EXPECT_EQ(s->maj, 261u);
	DT_EXPECT_EQ(s->min, 0u);
	DT_EXPECT_STREQ(s->text, B);
	s = find(L, 100, 12);
	DT_ASSERT_TRUE(s != NULL);
	DT_EXPECT_STREQ(s->text, A);
	s = find(L, 200, 7);
	DT_ASSERT_TRUE(s != NULL);
	DT_EXPECT_EQ(s->min, 0u);
	DT_EXPECT_STREQ(s->comm, "vkcube");
	DT_EXPECT_STREQ(s->text, C);
	DT_EXPECT_TRUE(find(L, 200, 8) == NULL);

	DT_EXPECT_EQ(st.procs, 3u);	/* 100, 200, 300; not 0, 0123, self */
	DT_EXPECT_EQ(st.fds, 8u);
	DT_EXPECT_EQ(st.drm_fds, 4u);
	DT_EXPECT_EQ(st.denied_procs + st.denied_fds + st.gone_procs + st.gone_fds + st.errors,
		     0u);
	free_list(L);
	free(L);
}

DT_FIXTURE(tree) {
	struct proc_tree pt;
};

DT_SETUP(tree)
{
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
}

DT_TEARDOWN(tree)
{
	proc_tree_cleanup(&self->pt);
}

DT_TEST_F(tree, devchar_links_found)
{
	build_basic(&self->pt);
	check_basic(&self->pt);
}

DT_TEST(mknod_nodes_found)
{
	struct proc_tree pt;

	if (!proc_tree_can_mknod())
		DT_SKIP("mknod of char devices not permitted here");
	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_MKNOD), 0);
	build_basic(&pt);
	/* A block device of major 226 is not a DRM device. */
	{
		char node[PATH_MAX + 16], link[PATH_MAX + 64];

		snprintf(node, sizeof(node), "%s/dev/blk", pt.base);
		DT_ASSERT_EQ(mknod(node, S_IFBLK | 0600, makedev(226, 1)), 0);
		proc_tree_path(&pt, 300, "fd/9", link, sizeof(link));
		DT_ASSERT_EQ(symlink(node, link), 0);
		DT_ASSERT_EQ(proc_tree_set_fdinfo(&pt, 300, 9, "drm-driver: x\n"), 0);
	}
	L = calloc(1, sizeof(*L));
	{
		struct dac_discover_stats st;

		DT_ASSERT_EQ(walk(pt.root, 0, -1, L, &st), 0);
		DT_EXPECT_EQ(st.drm_fds, 4u);
		DT_EXPECT_EQ(st.fds, 9u);
		DT_EXPECT_TRUE(find(L, 300, 9) == NULL);
		free_list(L);
	}
	free(L);
	DT_ASSERT_EQ(proc_tree_remove(&pt, 300, "fd/9"), 0);
	check_basic(&pt);
	proc_tree_cleanup(&pt);
}

DT_TEST_F(tree, gone_processes_and_fds_counted)
{
	struct dac_discover_stats st;
	struct seen_list *l = calloc(1, sizeof(*l));
	char buf[512];

	DT_ASSERT_TRUE(l != NULL);
	build_basic(&self->pt);
	/* 400: exited after the root was listed: no fd dir any more. */
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 400, "gone"), 0);
	DT_ASSERT_EQ(proc_tree_remove(&self->pt, 400, "fd"), 0);
	/* 100's fd 5 was closed between getdents and stat (dangling). */
	DT_ASSERT_EQ(proc_tree_add_link_fd(&self->pt, 100, 5, "/nonexistent/x"), 0);
	/* 200's DRM fd 9 closed between stat and fdinfo read. */
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 200, 9, 226, 129, A), 0);
	DT_ASSERT_EQ(proc_tree_remove(&self->pt, 200, "fdinfo/9"), 0);

	DT_ASSERT_EQ(walk(self->pt.root, 0, -1, l, &st), 0);
	DT_EXPECT_EQ(l->n, (size_t)4);
	DT_EXPECT_EQ(st.gone_procs, 1u);
	DT_EXPECT_EQ(st.gone_fds, 2u);
	DT_EXPECT_EQ(st.denied_procs + st.denied_fds + st.errors, 0u);
	DT_EXPECT_EQ(st.procs, 4u);
	dac_discover_describe(&st, buf, sizeof(buf));
	DT_EXPECT_STREQ(buf, "1 process exited during the walk, 2 fds closed during the walk");
	free_list(l);
	free(l);
}

DT_TEST_F(tree, permission_denied_counted)
{
	struct dac_discover_stats st;
	struct seen_list *l = calloc(1, sizeof(*l));
	char buf[512];

	DT_ASSERT_TRUE(l != NULL);
	build_basic(&self->pt);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 500, "secret"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 500, 3, 226, 128, A), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 600, "half"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 600, 3, 226, 128, C), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 600, 4, 226, 128, C), 0);
	/* Everything readable by others except 500's fd dir and 600's fdinfo. */
	DT_ASSERT_EQ(chmod(self->pt.base, 0755), 0);
	for (pid_t p = 100; p <= 300; p += 100)
		DT_ASSERT_EQ(proc_tree_chmod(&self->pt, p, "fd", 0755), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 500, "fd", 0000), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 600, "fd", 0755), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 600, "fdinfo/3", 0000), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 600, "fdinfo/4", 0000), 0);
	{
		/* An fd whose stat() is denied: not known to be DRM, counted apart. */
		char locked[PATH_MAX], file[PATH_MAX + 8];

		snprintf(locked, sizeof(locked), "%s/locked", self->pt.base);
		DT_ASSERT_EQ(mkdir(locked, 0700), 0);
		snprintf(file, sizeof(file), "%s/x", locked);
		DT_ASSERT_EQ(close(open(file, O_CREAT | O_WRONLY, 0600)), 0);
		DT_ASSERT_EQ(proc_tree_add_link_fd(&self->pt, 600, 9, file), 0);
	}
	{
		/*
		 * Root reads everything: walk as nobody, in a child so that the
		 * teardown still runs as root and can remove the tree.
		 */
		struct { struct dac_discover_stats st; size_t n; int ret; } res;
		int p[2];
		pid_t pid;

		DT_ASSERT_EQ(pipe(p), 0);
		pid = fork();
		DT_ASSERT_GE(pid, 0);
		if (pid == 0) {
			memset(&res, 0, sizeof(res));
			if (geteuid() == 0 && (setresgid(65534, 65534, 65534) ||
					       setresuid(65534, 65534, 65534)))
				_exit(1);
			res.ret = walk(self->pt.root, 0, -1, l, &res.st);
			res.n = l->n;
			_exit(write(p[1], &res, sizeof(res)) == sizeof(res) ? 0 : 1);
		}
		close(p[1]);
		DT_ASSERT_EQ(read(p[0], &res, sizeof(res)), (ssize_t)sizeof(res));
		close(p[0]);
		waitpid(pid, NULL, 0);
		st = res.st;
		DT_ASSERT_EQ(res.ret, 0);
		DT_EXPECT_EQ(res.n, (size_t)4);
	}
	DT_EXPECT_EQ(st.denied_procs, 1u);
	DT_EXPECT_EQ(st.denied_fds, 2u);
	DT_EXPECT_EQ(st.denied_stat_fds, 1u);
	DT_EXPECT_EQ(st.drm_fds, 4u);
	DT_EXPECT_EQ(st.gone_procs + st.gone_fds + st.errors, 0u);
	dac_discover_describe(&st, buf, sizeof(buf));
	DT_EXPECT_STREQ(buf, "1 process not readable (permission denied), "
			     "2 DRM fds not readable (permission denied), "
			     "1 fd not examined (stat permission denied)");
	free_list(l);
	free(l);
}

DT_TEST_F(tree, single_process_and_fd)
{
	struct dac_discover_stats st;
	struct seen_list *l = calloc(1, sizeof(*l));

	DT_ASSERT_TRUE(l != NULL);
	build_basic(&self->pt);
	DT_ASSERT_EQ(walk(self->pt.root, 100, -1, l, &st), 0);
	DT_EXPECT_EQ(l->n, (size_t)3);
	DT_EXPECT_EQ(st.procs, 1u);
	DT_EXPECT_EQ(st.fds, 5u);
	free_list(l);

	DT_ASSERT_EQ(walk(self->pt.root, 200, 7, l, &st), 0);
	DT_ASSERT_EQ(l->n, (size_t)1);
	DT_EXPECT_EQ(l->v[0].pid, 200);
	DT_EXPECT_EQ(l->v[0].fd, 7);
	DT_EXPECT_STREQ(l->v[0].text, C);
	free_list(l);

	DT_EXPECT_EQ(walk(self->pt.root, 999, -1, l, &st), -ESRCH);
	DT_EXPECT_EQ(walk(self->pt.root, 200, 99, l, &st), -EBADF);
	DT_EXPECT_EQ(walk(self->pt.root, 200, 8, l, &st), -ENODEV);
	DT_EXPECT_EQ(walk(self->pt.root, 100, 0, l, &st), -ENODEV);
	DT_EXPECT_EQ(l->n, (size_t)0);
	free(l);
}

DT_TEST_F(tree, callback_stops_walk)
{
	struct seen_list *l = calloc(1, sizeof(*l));

	DT_ASSERT_TRUE(l != NULL);
	build_basic(&self->pt);
	l->stop_after = 2;
	DT_EXPECT_EQ(walk(self->pt.root, 0, -1, l, NULL), 42);
	DT_EXPECT_EQ(l->n, (size_t)2);
	free_list(l);
	/* negative values (e.g. -ENOMEM from the consumer) stop it too */
	l->stop_value = -ENOMEM;
	DT_EXPECT_EQ(walk(self->pt.root, 0, -1, l, NULL), -ENOMEM);
	DT_EXPECT_EQ(l->n, (size_t)2);
	free_list(l);
	l->stop_after = 1;
	DT_EXPECT_EQ(walk(self->pt.root, 200, 7, l, NULL), -ENOMEM);
	free_list(l);
	free(l);
}

DT_TEST_F(tree, missing_comm_and_big_fdinfo)
{
	struct seen_list *l = calloc(1, sizeof(*l));
	size_t n = 20000, i, len = 0;
	char *big = malloc(n * 48 + 64);

	DT_ASSERT_TRUE(l != NULL && big != NULL);
	len += sprintf(big, "drm-driver:\tsimgpu\n");
	for (i = 0; i < n; i++)
		len += sprintf(big + len, "drm-engine-e%zu:\t%zu ns\n", i, i * 1000);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 77, NULL), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 77, 3, 226, 128, big), 0);
	DT_ASSERT_EQ(walk(self->pt.root, 0, -1, l, NULL), 0);
	DT_ASSERT_EQ(l->n, (size_t)1);
	DT_EXPECT_STREQ(l->v[0].comm, "");
	DT_EXPECT_EQ(strlen(l->v[0].text), len);
	DT_EXPECT_TRUE(strcmp(l->v[0].text, big) == 0);
	free(big);
	free_list(l);
	free(l);
}

DT_TEST_F_TIMEOUT(tree, thousands_of_fds_in_one_process, 120)
{
	struct dac_discover_stats st;
	struct seen_list *l = calloc(1, sizeof(*l));
	int i;

	DT_ASSERT_TRUE(l != NULL);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 1234, "many"), 0);
	/* Names long enough that one getdents64 buffer cannot hold them all. */
	for (i = 0; i < 3000; i++) {
		if (i % 3 == 0)
			DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 1234, 100000 + i, 226,
							  128 + i % 5, A), 0);
		else
			DT_ASSERT_EQ(proc_tree_add_link_fd(&self->pt, 1234, 100000 + i,
							   "/dev/null"), 0);
	}
	DT_ASSERT_EQ(walk(self->pt.root, 0, -1, l, &st), 0);
	DT_EXPECT_EQ(st.fds, 3000u);
	DT_EXPECT_EQ(st.drm_fds, 1000u);
	DT_EXPECT_EQ(l->n, (size_t)1000);
	for (i = 0; i < 3000; i += 3)
		DT_EXPECT_TRUE(find(l, 1234, 100000 + i) != NULL);
	free_list(l);
	free(l);
}

DT_TEST(bad_options)
{
	struct dac_discover_opts o = { .pid = -1, .fd = -1 };

	DT_EXPECT_TRUE(dac_discover_new(&o) == NULL);
	DT_EXPECT_EQ(errno, EINVAL);
	o.pid = 0;
	o.fd = 3;	/* an fd without a pid */
	DT_EXPECT_TRUE(dac_discover_new(&o) == NULL);
	DT_EXPECT_EQ(errno, EINVAL);
	o.fd = -2;
	DT_EXPECT_TRUE(dac_discover_new(&o) == NULL);
	DT_EXPECT_EQ(errno, EINVAL);
	o.fd = -1;
	o.proc_root = "/nonexistent/drmacct/proc";
	DT_EXPECT_TRUE(dac_discover_new(&o) == NULL);
	DT_EXPECT_EQ(errno, ENOENT);
	o.proc_root = "/dev/null";
	DT_EXPECT_TRUE(dac_discover_new(&o) == NULL);
	DT_EXPECT_EQ(errno, ENOTDIR);
	dac_discover_free(NULL);
}

/*
 * The real /proc: an O_PATH fd on a char node of major 226 is seen through
 * /proc/self/fd without the device ever being opened (there is no driver
 * behind 226:250 here, so a real open would fail with ENXIO).
 */
DT_TEST(real_proc_sees_drm_node_without_opening_it)
{
	char dir[] = "/tmp/drmacct-node.XXXXXX", node[64];
	struct dac_discover_stats st;
	struct seen_list *l = calloc(1, sizeof(*l));
	const struct seen *s;
	int fd;

	DT_ASSERT_TRUE(l != NULL);
	if (!proc_tree_can_mknod())
		DT_SKIP("mknod of char devices not permitted here");
	DT_ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(node, sizeof(node), "%s/renderD250", dir);
	DT_ASSERT_EQ(mknod(node, S_IFCHR | 0600, makedev(226, 250)), 0);
	fd = open(node, O_PATH | O_CLOEXEC);
	unlink(node);
	rmdir(dir);
	DT_ASSERT_GE(fd, 0);

	DT_ASSERT_EQ(walk(NULL, getpid(), -1, l, &st), 0);
	DT_EXPECT_EQ(st.procs, 1u);
	DT_EXPECT_GE(st.fds, 4u);	/* stdin/out/err + ours at least */
	s = find(l, getpid(), fd);
	DT_ASSERT_TRUE(s != NULL);
	DT_EXPECT_EQ(s->maj, 226u);
	DT_EXPECT_EQ(s->min, 250u);
	DT_EXPECT_TRUE(strstr(s->text, "flags:") != NULL);
	DT_EXPECT_TRUE(strstr(s->text, "drm-") == NULL);
	free_list(l);

	DT_ASSERT_EQ(walk(NULL, getpid(), fd, l, &st), 0);
	DT_EXPECT_EQ(l->n, (size_t)1);
	free_list(l);
	DT_EXPECT_EQ(walk(NULL, getpid(), 0x7ffffff0, l, &st), -EBADF);

	/* The whole /proc: ours is among whatever else exists. */
	DT_ASSERT_EQ(walk(NULL, 0, -1, l, &st), 0);
	DT_EXPECT_TRUE(find(l, getpid(), fd) != NULL);
	DT_EXPECT_GE(st.procs, 2u);
	free_list(l);
	close(fd);
	free(l);
}

DT_TEST(describe_formats_each_cause)
{
	struct dac_discover_stats st = { 0 };
	char buf[512], tiny[8];

	dac_discover_describe(&st, buf, sizeof(buf));
	DT_EXPECT_STREQ(buf, "");
	st.denied_procs = 3;
	st.gone_fds = 1;
	st.errors = 2;
	st.last_errno = EIO;
	dac_discover_describe(&st, buf, sizeof(buf));
	DT_EXPECT_STREQ(buf, "3 processes not readable (permission denied), "
			     "1 fd closed during the walk, 2 other errors (last: Input/output error)");
	dac_discover_describe(&st, tiny, sizeof(tiny));
	DT_EXPECT_EQ(strlen(tiny), (size_t)7);
}

/* libdrm knows only DRM devices of this machine: others fall back to names. */
DT_TEST(identify_unknown_devices_falls_back)
{
	struct dac_dev_id id;
	char buf[32];

	DT_EXPECT_EQ(dac_dev_identify(1, 3, &id), -ENODEV);	/* /dev/null */
	DT_EXPECT_EQ(dac_dev_identify(226, 255, &id), -ENODEV);	/* no such DRM minor */
	DT_EXPECT_EQ(dac_dev_identify(261, 0, &id), -ENODEV);	/* accel: not libdrm's */
	DT_EXPECT_FALSE(id.has_pci);
	/* asked twice: the cached answer is the same */
	DT_EXPECT_EQ(dac_dev_identify(226, 255, &id), -ENODEV);
	DT_EXPECT_STREQ(dac_dev_name(226, 255, buf, sizeof(buf)), "226:255");
}

/* The kernel's node names: DRM minors 0-63 card, 128-191 renderD; accel. */
DT_TEST(dev_name_of_each_node_kind)
{
	char buf[32], tiny[6];

	DT_EXPECT_STREQ(dac_dev_name(226, 0, buf, sizeof(buf)), "card0");
	DT_EXPECT_STREQ(dac_dev_name(226, 63, buf, sizeof(buf)), "card63");
	DT_EXPECT_STREQ(dac_dev_name(226, 64, buf, sizeof(buf)), "226:64");
	DT_EXPECT_STREQ(dac_dev_name(226, 127, buf, sizeof(buf)), "226:127");
	DT_EXPECT_STREQ(dac_dev_name(226, 128, buf, sizeof(buf)), "renderD128");
	DT_EXPECT_STREQ(dac_dev_name(226, 191, buf, sizeof(buf)), "renderD191");
	DT_EXPECT_STREQ(dac_dev_name(226, 192, buf, sizeof(buf)), "226:192");
	DT_EXPECT_STREQ(dac_dev_name(261, 3, buf, sizeof(buf)), "accel3");
	DT_EXPECT_STREQ(dac_dev_name(1, 3, buf, sizeof(buf)), "1:3");
	DT_EXPECT_STREQ(dac_dev_name(226, 128, tiny, sizeof(tiny)), "rende");
}

DT_MAIN
