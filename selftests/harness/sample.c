// SPDX-License-Identifier: GPL-2.0
/*
 * Sample program for the harness's own test (test_harness.sh): one test of
 * every outcome the harness must report.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"

static void check_three(int x)
{
	DT_ASSERT_EQ(x, 3);
}

DT_TEST(passes)
{
	DT_EXPECT_EQ(1 + 1, 2);
	DT_EXPECT_STREQ("a", "a");
	DT_EXPECT_NEAR(1.0, 1.05, 0.1);
	DT_EXPECT_ERRNO(close(-1), EBADF);
}

DT_TEST(mixed_types_compare_by_value)
{
	size_t n = 12;
	uint64_t big = UINT64_MAX;

	DT_EXPECT_EQ(n, 12);
	DT_EXPECT_LT(-1, big);
	DT_EXPECT_GT(big, -1);
	DT_EXPECT_NE(-1, big);
	DT_EXPECT_LT(-5, -2);
	DT_EXPECT_LE(0, 0u);
	DT_EXPECT_GT(0.5, 0);
	DT_EXPECT_LT(0.25, 0.5);
	DT_EXPECT_GT(-0.5, -1);
	DT_EXPECT_EQ(2.0, 2);
}

DT_TEST(float_compare_fails)
{
	double util = 0.05, nan = __builtin_nan("");

	DT_EXPECT_GT(util, 0.1);
	DT_EXPECT_EQ(nan, nan);
	DT_EXPECT_NE(nan, nan);
}

DT_TEST(expect_fails_and_continues)
{
	DT_EXPECT_EQ(2u, 3u);
	DT_EXPECT_LT(-1, -2);
	dt_info("reached after two failed expectations");
}

DT_TEST(assert_in_helper_ends_test)
{
	check_three(4);
	dt_info("NOT REACHED");
}

DT_TEST(skips)
{
	DT_SKIP("no device %d", 7);
}

DT_TEST_TIMEOUT(hangs, 1)
{
	pause();
}

DT_TEST(crashes)
{
	raise(SIGSEGV);
}

DT_TEST(errno_mismatch)
{
	DT_EXPECT_ERRNO(close(-1), EINVAL);
}

DT_FIXTURE(fx)
{
	int v;
};

DT_SETUP(fx)
{
	self->v = 42;
}

DT_TEARDOWN(fx)
{
	printf("# teardown saw v=%d\n", self->v);
}

DT_TEST_F(fx, body_need_not_use_self)
{
	DT_EXPECT_TRUE(1);
}

DT_TEST_F(fx, assert_fails_teardown_runs)
{
	DT_ASSERT_EQ(self->v, 41);
}

/* Notes for the TAP line: each once, in order, also from a child process. */
DT_TEST(labelled)
{
	pid_t pid;

	dt_label("6.17 set");
	dt_label("tp_btf");
	dt_label("6.17 set");
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		dt_label("from #child");
		_exit(0);
	}
	DT_ASSERT_EQ(waitpid(pid, NULL, 0), pid);
}

DT_TEST(labelled_skip)
{
	dt_label("6.1 set");
	DT_SKIP("no 6.17 events");
}

DT_MAIN
