// SPDX-License-Identifier: GPL-2.0
/*
 * Hot-unplug: removing the PCI device (QEMU's edu, driven by simgpu with
 * pci=1) through sysfs while four clients submit jobs, wait for them and
 * read their fdinfo. Afterwards every ioctl of those files fails with
 * ENODEV, their fdinfo stays readable, nothing leaks (debugfs
 * simgpu/objects), the module unloads once they are closed, and the kernel
 * log stays clean (the runner checks it). The device comes back with a PCI
 * rescan. Once with the device's schedulers, once with queues=per_client
 * (each file's own schedulers are torn down by the unplug).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define CLIENTS 4

/* What a client reports to the test through its pipe. */
struct report {
	unsigned int jobs_done;		/* jobs that finished before the unplug */
	unsigned int enodev;		/* ioctls after the unplug that said ENODEV */
	unsigned int other;		/* ... that said something else */
	unsigned int fdinfo_reads;	/* fdinfo reads after the unplug */
};

static int fdinfo_readable(int fd)
{
	char p[64], *buf;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", fd);
	buf = sg_read_file(p, NULL);
	if (!buf)
		return 0;
	free(buf);
	return 1;
}

/* One client: jobs, waits and fdinfo reads until the device is gone. */
static void client(const char *bdf, int out)
{
	struct report r = { 0 };
	int fd = sg_open_pci_node(bdf);

	for (;;) {
		struct drm_simgpu_submit s;
		struct drm_simgpu_wait w;

		memset(&s, 0, sizeof(s));
		s.engine = 0;
		s.instance = SIMGPU_INSTANCE_ANY;
		s.op = SIMGPU_OP_BUSY;
		s.busy_ns = 2 * NSEC_PER_MSEC;
		if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, &s))
			break;
		if (sg_wait_raw(fd, s.job_id, 10 * NSEC_PER_SEC, &w))
			break;
		if (w.status == SIMGPU_JOB_DONE)
			r.jobs_done++;
		fdinfo_readable(fd);
	}
	/* Gone: everything says ENODEV, fdinfo still reads. */
	for (int i = 0; i < 5; i++) {
		struct drm_simgpu_query_device q = { 0 };
		struct drm_simgpu_gem_create gc = { .size = 4096 };
		struct drm_simgpu_submit s = { .op = SIMGPU_OP_BUSY, .busy_ns = 1000 };
		struct drm_simgpu_wait w = { .job_id = 1 };
		unsigned long cmds[] = {
			DRM_IOCTL_SIMGPU_QUERY_DEVICE, DRM_IOCTL_SIMGPU_GEM_CREATE,
			DRM_IOCTL_SIMGPU_SUBMIT, DRM_IOCTL_SIMGPU_WAIT,
		};
		void *args[] = { &q, &gc, &s, &w };

		for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
			if (ioctl(fd, cmds[c], args[c]) == -1 && errno == ENODEV)
				r.enodev++;
			else
				r.other++;
		}
		r.fdinfo_reads += fdinfo_readable(fd);
	}
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	close(fd);
	_exit(0);
}

/* Unplug under load with simgpu loaded with pci=1 and @params. */
static void remove_under_load(const char *params)
{
	char bdf[64], path[160];
	pid_t pids[CLIENTS];
	int pfd[2];

	if (!sg_is_root())
		DT_SKIP("needs root");
	if (sg_edu_bdf(bdf, sizeof(bdf)))
		DT_SKIP("no edu PCI device in this VM");
	DT_ASSERT_EQ(sg_sh("rmmod simgpu && modprobe simgpu pci=1 %s", params), 0);
	DT_ASSERT_EQ(pipe(pfd), 0);
	for (int i = 0; i < CLIENTS; i++) {
		pids[i] = fork();
		DT_ASSERT_GE(pids[i], 0);
		if (!pids[i]) {
			close(pfd[0]);
			client(bdf, pfd[1]);
		}
	}
	close(pfd[1]);
	/* Long enough for every client to finish a job first, also on a slower guest. */
	sg_sleep_ns((uint64_t)(500 * dt_timeout_scale()) * NSEC_PER_MSEC);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", bdf);
	DT_ASSERT_EQ(sg_write_file(path, "1"), 0);
	dt_info("removed %s with %d clients busy", bdf, CLIENTS);

	for (int i = 0; i < CLIENTS; i++) {
		struct report r;
		int st;

		DT_ASSERT_EQ(read(pfd[0], &r, sizeof(r)), (ssize_t)sizeof(r));
		dt_info("client: %u jobs done before, afterwards %u ENODEV, %u other, %u fdinfo reads",
			r.jobs_done, r.enodev, r.other, r.fdinfo_reads);
		DT_EXPECT_GT(r.jobs_done, 0u);
		DT_EXPECT_EQ(r.enodev, 20u);
		DT_EXPECT_EQ(r.other, 0u);
		DT_EXPECT_EQ(r.fdinfo_reads, 5u);
		DT_ASSERT_EQ(waitpid(pids[i], &st, 0), pids[i]);
		DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	close(pfd[0]);
	/* Every client is gone: nothing of theirs is left, the module unloads. */
	DT_EXPECT_EQ(sg_simgpu_live("results "), 0);
	DT_EXPECT_EQ(sg_simgpu_live("jobs "), 0);
	DT_EXPECT_EQ(sg_sh("rmmod simgpu"), 0);
	DT_ASSERT_EQ(sg_write_file("/sys/bus/pci/rescan", "1"), 0);
	DT_EXPECT_EQ(sg_sh("modprobe simgpu"), 0);
}

DT_TEST_TIMEOUT(pci_remove_under_load, 120)
{
	remove_under_load("");
}

DT_TEST_TIMEOUT(pci_remove_under_load_per_client_queues, 120)
{
	remove_under_load("queues=per_client");
}

DT_MAIN
