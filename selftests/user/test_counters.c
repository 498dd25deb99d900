// SPDX-License-Identifier: MIT
/*
 * test_counters.c - the KD_KHR_perfcounter-shaped counter API on synthetic
 * /proc trees: the counter set and names, info fields, bad-index and
 * permission errors as the extension reports them, start zeroing, exact busy
 * time deltas, utilisation against the ground truth busy time over a
 * bracketed elapsed time, memory, stop freezing the values.
 */
#define _GNU_SOURCE
#include "counters.h"
#include "dtest.h"
#include "proc_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *fdinfo_sim(char *buf, size_t len, uint64_t render, uint64_t copy)
{
	snprintf(buf, len,
		 "drm-driver:\tsimgpu\ndrm-client-id:\t7\n"
		 "drm-engine-render:\t%llu ns\n"
		 "drm-engine-copy:\t%llu ns\ndrm-engine-capacity-copy:\t2\n"
		 "drm-total-system:\t8 MiB\ndrm-resident-system:\t4 MiB\n",
		 (unsigned long long)render, (unsigned long long)copy);
	return buf;
}

#define FDINFO_OTHER \
	"drm-driver:\tother\ndrm-client-id:\t3\n" \
	"drm-engine-gfx:\t5000 ns\ndrm-total-vram:\t1 MiB\n"

DT_FIXTURE(pc) {
	struct proc_tree pt;
	struct dac_pc *pc;
};

DT_SETUP(pc)
{
	char b[512];

	self->pc = NULL;
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 200, "other-app"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 200, 4, 226, 129, FDINFO_OTHER), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 100, "sim-app"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 100, 3, 226, 128,
					  fdinfo_sim(b, sizeof(b), 1000000000ull, 7)), 0);
}

DT_TEARDOWN(pc)
{
	dac_pc_close(self->pc);
	proc_tree_cleanup(&self->pt);
}

static struct dac_pc *open_pc(struct dt_fx_pc *self)
{
	struct dac_pc_opts o = { .proc_root = self->pt.root };

	self->pc = dac_pc_open(&o);
	DT_ASSERT_NE(self->pc, NULL);
	return self->pc;
}

static int find(struct dac_pc *pc, const char *name)
{
	int n = dac_pc_get_number(pc);

	for (int i = 0; i < n; i++)
		if (!strcmp(dac_pc_get_info(pc, i)->name, name))
			return i;
	DT_FAIL("no counter named \"%s\"", name);
	return -1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

DT_TEST_F(pc, counter_set_and_info)
{
	static const char *const names[] = {
		"GPU 0 utilization", "GPU 0 render utilization", "GPU 0 copy utilization",
		"GPU 0 render busy time", "GPU 0 copy busy time", "GPU 0 memory usage",
		"GPU 0 clients amount", "GPU 1 utilization", "GPU 1 gfx utilization",
		"GPU 1 gfx busy time", "GPU 1 memory usage", "GPU 1 clients amount",
		"GPU memory usage",
	};
	struct dac_pc *pc = open_pc(self);
	const struct dac_pc_info *in;

	/* renderD128 sorts before renderD129 although it was found second */
	DT_ASSERT_EQ(dac_pc_get_number(pc), 13);
	DT_EXPECT_EQ(dac_pc_get_error(pc), 0);
	for (int i = 0; i < 13; i++) {
		in = dac_pc_get_info(pc, i);
		DT_ASSERT_NE(in, NULL);
		DT_EXPECT_STREQ(in->name, names[i]);
		DT_EXPECT_STREQ(in->vendor, "drmacct");
		DT_EXPECT_GT(strlen(in->description), (size_t)20);
		DT_EXPECT_EQ(in->min, (int64_t)0);
	}
	in = dac_pc_get_info(pc, 1);
	DT_EXPECT_EQ(in->max, (int64_t)10000);
	DT_EXPECT_NEAR(in->default_scale, 0.01, 1e-9);	/* 10000 -> 100 */
	in = dac_pc_get_info(pc, 3);
	DT_EXPECT_EQ(in->max, (int64_t)DAC_PC_INFINITE);
	DT_EXPECT_EQ(in->default_scale, (float)DAC_PC_UNKNOWN);
	DT_EXPECT_NE(strstr(in->description, "drm-engine-render"), NULL);
}

DT_TEST_F(pc, bad_indexes)
{
	struct dac_pc *pc = open_pc(self);
	int64_t v[2] = { 5, 5 };
	int good = find(pc, "GPU 0 render busy time");

	errno = 0;
	DT_EXPECT_EQ(dac_pc_get_info(pc, -1), NULL);
	DT_EXPECT_EQ(dac_pc_get_error(pc), EINVAL);
	DT_EXPECT_EQ(errno, EINVAL);
	DT_EXPECT_EQ(dac_pc_get_info(pc, 13), NULL);
	DT_EXPECT_EQ(dac_pc_get_error(pc), EINVAL);
	DT_EXPECT_NE(dac_pc_get_info(pc, 12), NULL);
	DT_EXPECT_EQ(dac_pc_get_error(pc), 0);

	/* all or nothing: the good index in a bad list is not activated */
	DT_EXPECT_EQ(dac_pc_activate(pc, (const int[]){ good, 99 }, 2), -1);
	DT_EXPECT_EQ(dac_pc_get_error(pc), EINVAL);
	DT_ASSERT_EQ(dac_pc_start(pc), 0);
	DT_ASSERT_EQ(dac_pc_get_values(pc, &good, 1, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)DAC_PC_UNKNOWN);
	DT_EXPECT_EQ(dac_pc_deactivate(pc, (const int[]){ -5 }, 1), -1);
	DT_EXPECT_EQ(dac_pc_get_error(pc), EINVAL);
	DT_EXPECT_EQ(dac_pc_activate(pc, &good, -1), -1);
	DT_EXPECT_EQ(dac_pc_get_error(pc), EINVAL);
	v[0] = v[1] = 5;
	DT_EXPECT_EQ(dac_pc_get_values(pc, (const int[]){ good, 13 }, 2, v), -1);
	DT_EXPECT_EQ(dac_pc_get_error(pc), EINVAL);
	DT_EXPECT_EQ(v[0], (int64_t)5);	/* nothing written on failure */
	DT_EXPECT_EQ(dac_pc_activate(pc, NULL, 0), 0);
	DT_EXPECT_EQ(dac_pc_get_error(pc), 0);
}

DT_TEST_F_TIMEOUT(pc, busy_time_utilization_memory, 30)
{
	struct dac_pc *pc = open_pc(self);
	int idx[9];
	int64_t v[9];
	uint64_t t0, t1, t2, t3;
	char b[512];

	idx[0] = find(pc, "GPU 0 render busy time");
	idx[1] = find(pc, "GPU 0 copy busy time");
	idx[2] = find(pc, "GPU 0 render utilization");
	idx[3] = find(pc, "GPU 0 copy utilization");
	idx[4] = find(pc, "GPU 0 utilization");
	idx[5] = find(pc, "GPU 0 memory usage");
	idx[6] = find(pc, "GPU 1 memory usage");
	idx[7] = find(pc, "GPU memory usage");
	idx[8] = find(pc, "GPU 0 clients amount");
	DT_ASSERT_EQ(dac_pc_activate(pc, idx, 9), 0);
	/* active, never started: zero */
	DT_ASSERT_EQ(dac_pc_get_values(pc, idx, 9, v), 0);
	for (int i = 0; i < 9; i++)
		DT_EXPECT_EQ(v[i], (int64_t)0);

	t0 = now_ns();
	DT_ASSERT_EQ(dac_pc_start(pc), 0);
	t1 = now_ns();
	DT_ASSERT_EQ(dac_pc_get_values(pc, idx, 2, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)0);	/* 1 s of busy time before the start */
	DT_EXPECT_EQ(v[1], (int64_t)0);
	usleep(1000000);
	/* +300 ms render, +1 s copy (capacity 2) */
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 3,
					  fdinfo_sim(b, sizeof(b), 1300000000ull,
						     1000000007ull)), 0);
	t2 = now_ns();
	DT_ASSERT_EQ(dac_pc_get_values(pc, idx, 9, v), 0);
	t3 = now_ns();
	DT_EXPECT_EQ(v[0], (int64_t)300000000);
	DT_EXPECT_EQ(v[1], (int64_t)1000000000);
	/* elapsed lies in [t2 - t1, t3 - t0]; 0.01 % units, +-1 rounding */
	DT_EXPECT_GE(v[2], (int64_t)(3e9 / (double)(t3 - t0) * 1000.0) - 1);
	DT_EXPECT_LE(v[2], (int64_t)(3e9 / (double)(t2 - t1) * 1000.0) + 1);
	DT_EXPECT_GE(v[3], (int64_t)(5e9 / (double)(t3 - t0) * 1000.0) - 1);
	DT_EXPECT_LE(v[3], (int64_t)(5e9 / (double)(t2 - t1) * 1000.0) + 1);
	DT_EXPECT_EQ(v[4], v[3]);	/* busiest engine */
	DT_EXPECT_EQ(v[5], (int64_t)4194304);	/* resident */
	DT_EXPECT_EQ(v[6], (int64_t)1048576);	/* total: no resident printed */
	DT_EXPECT_EQ(v[7], (int64_t)(4194304 + 1048576));
	DT_EXPECT_EQ(v[8], (int64_t)1);
	dt_info("render %.2f %%, copy %.2f %%", (double)v[2] / 100, (double)v[3] / 100);

	/* stop freezes; a later change is not seen */
	DT_ASSERT_EQ(dac_pc_stop(pc), 0);
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 100, 3,
					  fdinfo_sim(b, sizeof(b), 9000000000ull,
						     1000000007ull)), 0);
	{
		int64_t w[9];

		DT_ASSERT_EQ(dac_pc_get_values(pc, idx, 9, w), 0);
		DT_EXPECT_EQ(w[0], (int64_t)300000000);
		DT_EXPECT_EQ(w[1], (int64_t)1000000000);
	}
	/* start again: zeroed */
	DT_ASSERT_EQ(dac_pc_start(pc), 0);
	DT_ASSERT_EQ(dac_pc_get_values(pc, idx, 2, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)0);
	DT_EXPECT_EQ(v[1], (int64_t)0);
}

/* A client that opens after the start counts with all its busy time; a
 * counter activated while sampling starts from zero at that moment. */
DT_TEST_F(pc, new_clients_and_late_activation)
{
	struct dac_pc *pc = open_pc(self);
	int busy = find(pc, "GPU 0 render busy time");
	int clients = find(pc, "GPU 0 clients amount");
	int64_t v[2];
	char b[512];

	DT_ASSERT_EQ(dac_pc_activate(pc, &busy, 1), 0);
	DT_ASSERT_EQ(dac_pc_start(pc), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 300, "late"), 0);
	snprintf(b, sizeof(b), "drm-driver:\tsimgpu\ndrm-client-id:\t9\n"
			       "drm-engine-render:\t250000000 ns\n");
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 300, 5, 226, 128, b), 0);
	DT_ASSERT_EQ(dac_pc_get_values(pc, &busy, 1, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)250000000);

	DT_ASSERT_EQ(dac_pc_activate(pc, &clients, 1), 0);
	DT_ASSERT_EQ(dac_pc_get_values(pc, (const int[]){ busy, clients }, 2, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)250000000);
	DT_EXPECT_EQ(v[1], (int64_t)2);
	/* deactivated: unknown */
	DT_ASSERT_EQ(dac_pc_deactivate(pc, &busy, 1), 0);
	DT_ASSERT_EQ(dac_pc_get_values(pc, &busy, 1, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)DAC_PC_UNKNOWN);
	/* a counter activated mid-window starts at zero */
	DT_ASSERT_EQ(dac_pc_activate(pc, &busy, 1), 0);
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&self->pt, 300, 5,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t9\n"
					  "drm-engine-render:\t260000000 ns\n"), 0);
	DT_ASSERT_EQ(dac_pc_get_values(pc, &busy, 1, v), 0);
	DT_EXPECT_EQ(v[0], (int64_t)10000000);
}

/*
 * Permission: a process whose fd directory the caller may not read makes
 * every call fail with EACCES (the numbers would be incomplete), unless
 * allow_partial. Run as nobody in a child (root reads everything).
 */
DT_TEST_F(pc, permission_denied)
{
	struct { int n, err_n, info_null, err_info, start, err_start, n_partial; } res;
	int p[2], status;
	pid_t pid;

	if (geteuid() != 0)
		DT_SKIP("needs root to build a tree another user cannot read");
	DT_ASSERT_EQ(chmod(self->pt.base, 0755), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 100, "fd", 0755), 0);
	DT_ASSERT_EQ(proc_tree_chmod(&self->pt, 200, "fd", 0000), 0);
	DT_ASSERT_EQ(pipe(p), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct dac_pc_opts o = { .proc_root = self->pt.root };
		struct dac_pc *pc;

		memset(&res, 0, sizeof(res));
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		pc = dac_pc_open(&o);
		if (!pc)
			_exit(2);
		res.n = dac_pc_get_number(pc);
		res.err_n = dac_pc_get_error(pc);
		res.info_null = dac_pc_get_info(pc, 0) == NULL;
		res.err_info = dac_pc_get_error(pc);
		res.start = dac_pc_start(pc);
		res.err_start = dac_pc_get_error(pc);
		dac_pc_close(pc);
		o.allow_partial = true;
		pc = dac_pc_open(&o);
		if (!pc)
			_exit(3);
		res.n_partial = dac_pc_get_number(pc);
		dac_pc_close(pc);
		_exit(write(p[1], &res, sizeof(res)) == sizeof(res) ? 0 : 4);
	}
	close(p[1]);
	memset(&res, 0, sizeof(res));
	DT_EXPECT_EQ(read(p[0], &res, sizeof(res)), (ssize_t)sizeof(res));
	close(p[0]);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_ASSERT_TRUE(WIFEXITED(status));
	DT_ASSERT_EQ(WEXITSTATUS(status), 0);
	DT_EXPECT_EQ(res.n, -1);
	DT_EXPECT_EQ(res.err_n, EACCES);
	DT_EXPECT_EQ(res.info_null, 1);
	DT_EXPECT_EQ(res.err_info, EACCES);
	DT_EXPECT_EQ(res.start, -1);
	DT_EXPECT_EQ(res.err_start, EACCES);
	/* partial: only GPU 0 (renderD128) is visible: 7 + 1 counters */
	DT_EXPECT_EQ(res.n_partial, 8);
}

DT_TEST(open_errors)
{
	struct dac_pc_opts o = { .proc_root = "/nonexistent/drmacct" };

	errno = 0;
	DT_EXPECT_EQ(dac_pc_open(&o), NULL);
	DT_EXPECT_EQ(errno, ENOENT);
	errno = 0;
	DT_EXPECT_EQ(dac_pc_open(NULL), NULL);
	DT_EXPECT_EQ(errno, EINVAL);
}

DT_MAIN
