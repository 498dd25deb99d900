// SPDX-License-Identifier: GPL-2.0
/*
 * A guest program that passes: the runner's own test uses it as the whole
 * workload of a run whose only fault is a kernel WARNING, so that the
 * WARNING alone must be what fails that run.
 */
#include <sys/utsname.h>

#include "dtest.h"

DT_TEST(guest_kernel_is_the_target)
{
	struct utsname u;

	DT_ASSERT_EQ(uname(&u), 0);
	DT_EXPECT_STREQ(u.sysname, "Linux");
}

DT_MAIN
