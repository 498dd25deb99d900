// SPDX-License-Identifier: GPL-2.0
/*
 * The helper guide's example driver (kernel/example/drmacct_example.c,
 * quoted by Documentation/drmacct-helper.rst) works as the guide says, on
 * every kernel: its fdinfo has exactly the keys its descriptor asks for,
 * busy time equals the sum of the jobs' own (end - start) to the
 * nanosecond, cycles follow its fixed clock, a hung job is reset with its
 * time charged, memory counts its buffers, and it unloads. Where the DRM
 * core names files (6.13+), DRM_IOCTL_SET_CLIENT_NAME names the example's
 * too, printed once. And its teardown is a hot-unplug: an unbind with a
 * file open and a job running waits only for that job, then every ioctl
 * of the file says ENODEV, and the file closes and the module unloads.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drm_client.h"
#include "drmacct_example.h"
#include "dtest.h"
#include "sgtest.h"

/* Opens the example's render node (by its driver in sysfs); waits 2 s. */
static int open_example(void)
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
			snprintf(p, sizeof(p), "/sys/class/drm/%s/device/driver", de->d_name);
			n = readlink(p, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (!strstr(target, "/drmacct_example"))
				continue;
			snprintf(p, sizeof(p), "/dev/dri/%s", de->d_name);
			fd = open(p, O_RDWR | O_CLOEXEC);
		}
		closedir(d);
		if (fd >= 0)
			return fd;
		sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
	DT_FAIL("no render node of drmacct_example");
	return -1;
}

DT_TEST_TIMEOUT(example_driver_follows_the_guide, 60)
{
	static const char *const keys[] = {
		"drm-engine-gfx", "drm-cycles-gfx", "drm-maxfreq-gfx", "drm-total-vram",
		"drm-shared-vram", "drm-resident-vram",
	};
	struct drm_example_bo bo = { .size = 3 * 4096 };
	uint64_t truth = 0, ns[3] = { 20, 35, 10 };
	struct drm_example_run r;
	struct sg_fdinfo fi;
	size_t drm_keys = 0;
	int fd;

	if (!sg_is_root())
		DT_SKIP("needs root to load the module");
	DT_ASSERT_EQ(sg_sh("modprobe drmacct_example"), 0);
	fd = open_example();
	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_EXAMPLE_BO, &bo), 0);
	for (int i = 0; i < 3; i++) {
		memset(&r, 0, sizeof(r));
		r.ns = ns[i] * NSEC_PER_MSEC;
		DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_EXAMPLE_RUN, &r), 0);
		DT_EXPECT_GE(r.end_ns - r.start_ns, ns[i] * NSEC_PER_MSEC);
		truth += r.end_ns - r.start_ns;
	}
	/* A hang: reset after the 50 ms watchdog, its time charged. */
	memset(&r, 0, sizeof(r));
	r.ns = 1000;
	r.flags = EXAMPLE_RUN_HANG;
	DT_EXPECT_ERRNO(ioctl(fd, DRM_IOCTL_EXAMPLE_RUN, &r), ETIMEDOUT);
	DT_EXPECT_GE(r.end_ns - r.start_ns, 50 * NSEC_PER_MSEC);
	truth += r.end_ns - r.start_ns;

	sg_fdinfo_read(fd, &fi);
	for (size_t i = 0; i < fi.n; i++)
		if (!strncmp(fi.kv[i].key, "drm-", 4))
			drm_keys++;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		DT_EXPECT_TRUE(sg_fdinfo_find(&fi, keys[k]) != NULL);
	/* The guide's descriptor asks for no purgeable or active key. */
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-purgeable-"), (size_t)0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-active-"), (size_t)0);
	/* Those six, drm-driver and drm-client-id, nothing else. */
	DT_EXPECT_EQ(drm_keys, (size_t)8);
	DT_EXPECT_EQ(sg_fdinfo_engine_ns(&fi, "gfx"), truth);
	DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-maxfreq-gfx", "Hz"), 500000000ull);
	/* Cycles at 500 MHz over the jobs that ended (the reset adds none). */
	DT_EXPECT_GT(sg_fdinfo_cycles(&fi, "gfx"), 500000000ull * 60 / 1000);
	DT_EXPECT_LE(sg_fdinfo_cycles(&fi, "gfx"), 500000000ull * truth / NSEC_PER_SEC);
	DT_EXPECT_EQ(sg_fdinfo_bytes(&fi, "drm-total-vram"), 3 * 4096ull);
	DT_EXPECT_EQ(sg_fdinfo_bytes(&fi, "drm-resident-vram"), 3 * 4096ull);
	DT_EXPECT_EQ(sg_fdinfo_bytes(&fi, "drm-shared-vram"), 0ull);
	dt_info("busy %" PRIu64 " ns over 3 jobs and a hang, cycles %" PRIu64,
		sg_fdinfo_engine_ns(&fi, "gfx"), sg_fdinfo_cycles(&fi, "gfx"));
	sg_fdinfo_free(&fi);

	/* The core's name ioctl works for any driver where the core has it. */
	if (sg_core_client_name(fd)) {
		DT_ASSERT_EQ(dac_drm_set_client_name(fd, "example-client", 14), 0);
		sg_fdinfo_read(fd, &fi);
		DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-client-name"), (size_t)1);
		DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-client-name")->val, "example-client");
		sg_fdinfo_free(&fi);
	}
	close(fd);
	DT_EXPECT_EQ(sg_sh("rmmod drmacct_example"), 0);
}

#define EXAMPLE_DRV "/sys/bus/platform/drivers/drmacct_example"

DT_TEST_TIMEOUT(unplug_with_a_file_open_and_a_job_running, 60)
{
	struct drm_example_bo bo = { .size = 4096 };
	struct drm_example_run r;
	uint64_t t0, t1;
	int fd, st, pfd[2];
	pid_t pid;
	char c;

	if (!sg_is_root())
		DT_SKIP("needs root to load the module");
	DT_ASSERT_EQ(sg_sh("modprobe drmacct_example"), 0);
	fd = open_example();
	DT_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* A 500 ms job on the shared file, running when the unbind comes. */
		memset(&r, 0, sizeof(r));
		r.ns = 500 * NSEC_PER_MSEC;
		if (write(pfd[1], "r", 1) != 1)
			_exit(2);
		_exit(ioctl(fd, DRM_IOCTL_EXAMPLE_RUN, &r) ? 3 : 0);
	}
	DT_ASSERT_EQ(read(pfd[0], &c, 1), 1);
	sg_sleep_ns(100 * NSEC_PER_MSEC);
	t0 = sg_now_ns();
	DT_ASSERT_EQ(sg_write_file(EXAMPLE_DRV "/unbind", "drmacct_example"), 0);
	t1 = sg_now_ns();
	dt_info("unbind took %.1f ms with a 500 ms job running", (t1 - t0) / 1e6);
	/*
	 * It waited for the running job (the RUN ioctl is inside
	 * drm_dev_enter()), and for nothing else: at most the job's 400 ms
	 * left; 5 s admits a guest 12 times slower.
	 */
	DT_EXPECT_LT(t1 - t0, 5 * NSEC_PER_SEC);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* Gone: every ioctl of the open file says so; the file closes. */
	memset(&r, 0, sizeof(r));
	r.ns = 1000;
	DT_EXPECT_ERRNO(ioctl(fd, DRM_IOCTL_EXAMPLE_RUN, &r), ENODEV);
	DT_EXPECT_ERRNO(ioctl(fd, DRM_IOCTL_EXAMPLE_BO, &bo), ENODEV);
	DT_EXPECT_EQ(close(fd), 0);
	close(pfd[0]);
	close(pfd[1]);
	DT_EXPECT_EQ(sg_sh("rmmod drmacct_example"), 0);
}

DT_MAIN
