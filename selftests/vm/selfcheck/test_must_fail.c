// SPDX-License-Identifier: GPL-2.0
/*
 * A guest program that fails on purpose. Only the VM runner's own test
 * (selftests/vm/test_runner.sh) runs it, to prove that one failing guest
 * test makes the whole run fail and is named in the summary.
 */
#include "dtest.h"

DT_TEST(passes_on_purpose)
{
	DT_EXPECT_EQ(2 + 2, 4);
}

DT_TEST(fails_on_purpose)
{
	int answer = 41;

	DT_EXPECT_EQ(answer, 42);
}

DT_MAIN
