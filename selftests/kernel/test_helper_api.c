// SPDX-License-Identifier: GPL-2.0
/*
 * The helper's API where no driver ioctl reaches it, through the in-kernel
 * checks of drmacct_test_cases.ko run by drmacct_test.ko (debugfs
 * drmacct_test/run, on every kernel; test_kunit runs them as a KUnit
 * suite where the kernel has KUnit): descriptor
 * validation, the fdinfo keys that engine flags and memory keys choose,
 * job reset (time up to the reset charged, the job startable again),
 * writers on every CPU and in hard interrupts against a reader (consistent,
 * monotonic reads; the final busy time equal to what the writers were told),
 * destroy detaching the driver's callbacks, and device ids that grow. Each
 * test runs one case; a failing case prints the kernel's lines.
 *
 * And device ids across a reload of drmacct.ko, read from the
 * drmacct_client_open tracepoint: the new load's simgpu gets an id above
 * every id of the earlier load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define RUN "/sys/kernel/debug/drmacct_test/run"
#define TRACEFS "/sys/kernel/tracing"
#define OPEN_EV TRACEFS "/events/drmacct/drmacct_client_open/enable"

static void run_case(const char *name)
{
	char *out;
	int ret;

	if (!sg_is_root())
		DT_SKIP("needs root");
	if (access(RUN, W_OK) && sg_sh("modprobe drmacct_test"))
		DT_FAIL("modprobe drmacct_test failed");
	ret = sg_write_file(RUN, name);
	DT_ASSERT_EQ(ret, 0);
	out = sg_read_file(RUN, NULL);
	DT_ASSERT_TRUE(out != NULL);
	if (strcmp(out, "ok\n"))
		dt_info("%s", out);
	DT_EXPECT_STREQ(out, "ok\n");
	free(out);
}

DT_TEST(create_rejects_bad_descriptors)
{
	run_case("create_rejects_bad_descriptors");
}

DT_TEST(engine_flags_choose_keys)
{
	run_case("engine_flags_choose_keys");
}

DT_TEST(mem_keys_choose_keys)
{
	run_case("mem_keys_choose_keys");
}

DT_TEST(reset_charges_and_restarts)
{
	run_case("reset_charges_and_restarts");
}

DT_TEST(destroy_detaches_callbacks)
{
	run_case("destroy_detaches_callbacks");
}

DT_TEST_TIMEOUT(writers_race_readers, 60)
{
	run_case("writers_race_readers");
}

/*
 * Job begin/end, usage reads and a client's last put from a hard
 * interrupt (an HRTIMER_MODE_REL_HARD timer, hard also on PREEMPT_RT)
 * while threads write: the helper's "any context but NMI". A reader that
 * waited for the writer it interrupted would hang here; the VM runner
 * fails the run on any splat.
 */
DT_TEST_TIMEOUT(hard_irq_context, 60)
{
	run_case("hard_irq_context");
}

DT_TEST(device_ids_grow)
{
	run_case("device_ids_grow");
}

/* An unknown case is refused, not run. */
DT_TEST(unknown_case_is_refused)
{
	if (!sg_is_root())
		DT_SKIP("needs root");
	if (access(RUN, W_OK) && sg_sh("modprobe drmacct_test"))
		DT_FAIL("modprobe drmacct_test failed");
	DT_EXPECT_EQ(sg_write_file(RUN, "no_such_case"), -ENOENT);
}

/* The device_id of simgpu's drmacct_client_open events, the highest seen. */
static uint32_t simgpu_device_id(void)
{
	char *buf = sg_read_file(TRACEFS "/trace", NULL), *line, *save = NULL;
	uint32_t id = 0;

	DT_ASSERT_TRUE(buf != NULL);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, "drmacct_client_open: ");
		unsigned long long cid;
		unsigned int dev;
		char drv[32];

		if (p && sscanf(p, "drmacct_client_open: client_id=%llu device_id=%u driver=%31s",
				&cid, &dev, drv) == 3 && !strcmp(drv, "simgpu") && dev > id)
			id = dev;
	}
	free(buf);
	return id;
}

static uint32_t open_and_read_device_id(void)
{
	int fd = -1;

	for (int i = 0; i < 100 && fd < 0; i++) {
		fd = sg_open_raw();
		if (fd < 0)
			sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
	DT_ASSERT_GE(fd, 0);
	close(fd);
	return simgpu_device_id();
}

/* Device ids of a new load of drmacct.ko start above the old load's. */
DT_TEST_TIMEOUT(device_ids_not_reused_across_reload, 60)
{
	uint32_t before, after;

	if (!sg_is_root())
		DT_SKIP("needs root");
	if (access(OPEN_EV, W_OK))
		DT_SKIP("no drmacct tracepoints");
	DT_ASSERT_EQ(sg_write_file(TRACEFS "/trace", ""), 0);
	DT_ASSERT_EQ(sg_write_file(OPEN_EV, "1"), 0);
	before = open_and_read_device_id();
	DT_ASSERT_NE(before, 0u);
	/* Every module using drmacct first (busybox rmmod stops at the first it cannot remove). */
	sg_sh("rmmod simgpu; for m in drmacct_kunit drmacct_test drmacct_bench drmacct_test_cases;"
	      " do rmmod $m 2>/dev/null; done; rmmod drmacct");
	DT_ASSERT_EQ(sg_sh("modprobe simgpu"), 0);
	/* The events were disabled with the module: enable them again. */
	DT_ASSERT_EQ(sg_write_file(OPEN_EV, "1"), 0);
	after = open_and_read_device_id();
	sg_write_file(OPEN_EV, "0");
	dt_info("simgpu's device id %u before the reload, %u after", before, after);
	DT_EXPECT_GT(after, before);
}

DT_MAIN
