// SPDX-License-Identifier: GPL-2.0
/*
 * A guest program that freezes the guest: it asks dt_warn (loaded with
 * --mods dt_warn) to spin every CPU with interrupts off. The runner's own
 * test then expects a TIMEOUT whose hang report names the spinning
 * function on every vCPU. It never finishes; if it does, the freeze failed.
 */
#include <fcntl.h>
#include <unistd.h>

#include "dtest.h"

DT_TEST(freeze_every_cpu)
{
	int fd = open("/sys/module/dt_warn/parameters/freeze", O_WRONLY | O_CLOEXEC);

	DT_ASSERT_GE(fd, 0);
	DT_EXPECT_EQ(write(fd, "1", 1), 1);
	close(fd);
	DT_FAIL("still running after the freeze");
}

DT_MAIN
