// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: unload/reload of simgpu and drmacct (with and without
 * clients that came and went, and with jobs still in flight of a closed
 * file), unload ordering, and simgpu's module parameters (accounting=0:
 * no engine keys but jobs still run; legacy_memory=1: drm-memory-<r>;
 * pci=1: a second device on QEMU's edu PCI device, with drm-pdev).
 * Every test leaves both modules loaded with default parameters.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

static bool loaded(const char *mod)
{
	char p[128];

	snprintf(p, sizeof(p), "/sys/module/%s/initstate", mod);
	return access(p, F_OK) == 0;
}

/* Puts both modules back at default parameters (used by teardowns too). */
static void restore_defaults(void)
{
	if (loaded("simgpu"))
		sg_sh("rmmod simgpu");
	if (!loaded("drmacct"))
		sg_sh("modprobe drmacct");
	sg_sh("modprobe simgpu");
}

/* Waits up to 2 s for the render node to appear after modprobe. */
static int open_after_load(void)
{
	for (int i = 0; i < 100; i++) {
		int fd = sg_open_raw();

		if (fd >= 0)
			return fd;
		sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
	DT_FAIL("simgpu render node did not appear after modprobe");
	return -1;
}

/* A device works: a job runs and fdinfo shows exactly that job's cycles. */
static void check_device_works(bool accounting)
{
	int fd = open_after_load();
	struct drm_simgpu_wait w;
	struct sg_fdinfo fi;
	struct sg_dev dev;

	sg_query(fd, &dev);
	DT_EXPECT_EQ(!!(dev.q.flags & SIMGPU_DEVICE_ACCOUNTING), accounting);
	sg_wait(fd, sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, 5 * NSEC_PER_MSEC), &w);
	DT_EXPECT_GE(w.end_ns - w.start_ns, 5 * NSEC_PER_MSEC);
	if (accounting) {
		sg_fdinfo_read(fd, &fi);
		DT_EXPECT_EQ(sg_fdinfo_cycles(&fi, dev.eng[0].q.name), w.cycles);
		DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-client-id", ""), dev.q.client_id);
		sg_fdinfo_free(&fi);
	}
	sg_dev_free(&dev);
	close(fd);
}

DT_FIXTURE(mod) {
	int kmsg;
};

DT_SETUP(mod)
{
	self->kmsg = -1;
	if (!sg_is_root())
		DT_SKIP("needs root");
	if (sg_sh("command -v modprobe >/dev/null && command -v rmmod >/dev/null"))
		DT_SKIP("no modprobe/rmmod");
	if (!loaded("simgpu") || !loaded("drmacct"))
		DT_FAIL("simgpu and drmacct must be loaded before this test");
	self->kmsg = sg_kmsg_open();
}

DT_TEARDOWN(mod)
{
	restore_defaults();
	DT_EXPECT_TRUE(loaded("simgpu") && loaded("drmacct"));
	DT_EXPECT_EQ(sg_kmsg_bad_lines(self->kmsg), 0);
}

/* drmacct cannot go while simgpu uses it; simgpu cannot go while a file is open. */
DT_TEST_F(mod, unload_ordering)
{
	(void)self;
	int fd = sg_open();

	DT_EXPECT_NE(sg_sh("rmmod drmacct 2>/dev/null"), 0);
	DT_EXPECT_TRUE(loaded("drmacct"));
	DT_EXPECT_NE(sg_sh("rmmod simgpu 2>/dev/null"), 0);
	DT_EXPECT_TRUE(loaded("simgpu"));
	close(fd);
	check_device_works(true);
}

/* 20 rounds of rmmod simgpu; rmmod drmacct; modprobe drmacct; modprobe simgpu. */
DT_TEST_F_TIMEOUT(mod, reload_20_times, 240)
{
	(void)self;
	for (int round = 0; round < 20; round++) {
		/* odd rounds: clients with work opened and closed before unloading */
		if (round % 2) {
			int fds[3];

			for (int i = 0; i < 3; i++) {
				fds[i] = sg_open();
				sg_wait(fds[i], sg_submit_busy(fds[i], 0, SIMGPU_INSTANCE_ANY,
							       NSEC_PER_MSEC), NULL);
				sg_bo_create(fds[i], 8192);
			}
			for (int i = 0; i < 3; i++)
				close(fds[i]);
		}
		DT_ASSERT_EQ(sg_sh("rmmod simgpu"), 0);
		DT_ASSERT_FALSE(loaded("simgpu"));
		DT_ASSERT_EQ(sg_sh("rmmod drmacct"), 0);
		DT_ASSERT_FALSE(loaded("drmacct"));
		DT_ASSERT_EQ(sg_sh("modprobe drmacct"), 0);
		DT_ASSERT_EQ(sg_sh("modprobe simgpu"), 0);
		check_device_works(true);
	}
}

/*
 * Opens @n clients one after the other, checks that each id is non-zero,
 * matches its fdinfo and is larger than the one before, and returns the
 * first and the last id.
 */
static void open_clients(int n, uint64_t *first, uint64_t *last)
{
	uint64_t prev = 0;

	for (int i = 0; i < n; i++) {
		int fd = open_after_load();
		uint64_t id = sg_client_id(fd);
		struct sg_fdinfo fi;

		sg_fdinfo_read(fd, &fi);
		DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-client-id", ""), id);
		sg_fdinfo_free(&fi);
		close(fd);
		DT_ASSERT_GT(id, prev);
		if (i == 0)
			*first = id;
		prev = id;
	}
	*last = prev;
}

/*
 * drm-client-id is never reused, not even across a reload of drmacct: after
 * rmmod simgpu; rmmod drmacct; modprobe drmacct; modprobe simgpu, every new
 * client id is strictly greater than every id handed out before the reload
 * (a counter restarting at 1 would hand the same ids out again).
 */
DT_TEST_F_TIMEOUT(mod, client_ids_unique_across_reload, 60)
{
	(void)self;
	uint64_t first, last, before;

	open_clients(4, &first, &before);
	for (int round = 0; round < 3; round++) {
		DT_ASSERT_EQ(sg_sh("rmmod simgpu"), 0);
		DT_ASSERT_EQ(sg_sh("rmmod drmacct"), 0);
		DT_ASSERT_FALSE(loaded("drmacct"));
		DT_ASSERT_EQ(sg_sh("modprobe drmacct"), 0);
		DT_ASSERT_EQ(sg_sh("modprobe simgpu"), 0);
		open_clients(4, &first, &last);
		dt_info("reload %d: ids before <= %" PRIu64 ", after %" PRIu64 "..%" PRIu64,
			round, before, first, last);
		DT_EXPECT_GT(first, before);
		before = last;
	}
}

/*
 * A closed file's job still on the engine: unloading either fails cleanly
 * (the module is busy) or waits for the job; both leave a clean log, and the
 * device works after reloading.
 */
DT_TEST_F_TIMEOUT(mod, unload_with_job_of_closed_file, 60)
{
	(void)self;
	int fd = sg_open();
	int rc;

	sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, 500 * NSEC_PER_MSEC);
	sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, 500 * NSEC_PER_MSEC);
	close(fd);
	rc = sg_sh("rmmod simgpu 2>/dev/null");
	dt_info("rmmod simgpu with a job in flight: exit %d (%s)", rc,
		loaded("simgpu") ? "still loaded" : "unloaded");
	if (!loaded("simgpu"))
		DT_ASSERT_EQ(sg_sh("modprobe simgpu"), 0);
	else
		DT_EXPECT_NE(rc, 0);
	sg_sleep_ns(1200 * NSEC_PER_MSEC);
	DT_ASSERT_EQ(sg_sh("rmmod simgpu"), 0);
	DT_ASSERT_EQ(sg_sh("modprobe simgpu"), 0);
	check_device_works(true);
}

/* accounting=0: no engine/cycle keys in fdinfo (no helper), jobs still run. */
DT_TEST_F(mod, accounting_off)
{
	(void)self;
	struct drm_simgpu_wait w;
	struct sg_fdinfo fi;
	struct sg_dev dev;
	int fd;

	DT_ASSERT_EQ(sg_sh("rmmod simgpu"), 0);
	DT_ASSERT_EQ(sg_sh("modprobe simgpu accounting=0"), 0);
	fd = open_after_load();
	sg_query(fd, &dev);
	DT_EXPECT_FALSE(dev.q.flags & SIMGPU_DEVICE_ACCOUNTING);
	DT_EXPECT_EQ(dev.q.client_id, 0ull);
	for (unsigned int i = 0; i < dev.num_engines; i++) {
		sg_wait(fd, sg_submit_busy(fd, i, SIMGPU_INSTANCE_ANY, 20 * NSEC_PER_MSEC), &w);
		DT_EXPECT_GE(w.end_ns - w.start_ns, 20 * NSEC_PER_MSEC);
		DT_EXPECT_GT(w.cycles, 0ull);
	}
	sg_bo_create(fd, 4096);
	sg_fdinfo_read(fd, &fi);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-engine-"), (size_t)0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-cycles-"), (size_t)0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-maxfreq-"), (size_t)0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-total-cycles-"), (size_t)0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-client-id"), (size_t)0);
	sg_fdinfo_free(&fi);
	sg_dev_free(&dev);
	close(fd);
	restore_defaults();
	check_device_works(true);
}

/* legacy_memory=1: drm-memory-<r> appears and equals drm-resident-<r>. */
DT_TEST_F(mod, legacy_memory_key)
{
	(void)self;
	const uint64_t size = 3 * 4096;
	struct sg_fdinfo fi;
	struct sg_dev dev;
	size_t regions = 0;
	int fd;

	DT_ASSERT_EQ(sg_sh("rmmod simgpu"), 0);
	DT_ASSERT_EQ(sg_sh("modprobe simgpu legacy_memory=1"), 0);
	fd = open_after_load();
	sg_query(fd, &dev);
	DT_EXPECT_TRUE(dev.q.flags & SIMGPU_DEVICE_LEGACY_MEMORY);
	sg_bo_create(fd, size);
	sg_fdinfo_read(fd, &fi);
	for (size_t i = 0; i < fi.n; i++) {
		char key[160];
		const char *r;

		if (strncmp(fi.kv[i].key, "drm-memory-", 11))
			continue;
		r = fi.kv[i].key + 11;
		regions++;
		snprintf(key, sizeof(key), "drm-resident-%s", r);
		DT_EXPECT_EQ(sg_fdinfo_bytes(&fi, fi.kv[i].key), sg_fdinfo_bytes(&fi, key));
		snprintf(key, sizeof(key), "drm-total-%s", r);
		DT_EXPECT_EQ(sg_fdinfo_bytes(&fi, key), size);
	}
	DT_EXPECT_EQ(regions, sg_fdinfo_count_prefix(&fi, "drm-resident-"));
	DT_EXPECT_GE(regions, (size_t)1);
	sg_fdinfo_free(&fi);
	sg_dev_free(&dev);
	close(fd);

	/* and the default has no legacy key */
	restore_defaults();
	fd = open_after_load();
	sg_fdinfo_read(fd, &fi);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-memory-"), (size_t)0);
	sg_fdinfo_free(&fi);
	close(fd);
}

/*
 * pci=1: simgpu also drives QEMU's edu device. That device's clients print
 * drm-pdev with its PCI address (the spec's PCI-only key) and the platform
 * device's clients print none; a job on one device counts on it alone.
 */
DT_TEST_F(mod, pci_device_prints_pdev)
{
	struct sg_fdinfo fi, pfi;
	struct drm_simgpu_wait w;
	struct sg_dev dev, pdev;
	const struct sg_kv *kv;
	char bdf[256];
	int fd, pfd;

	(void)self;
	if (sg_edu_bdf(bdf, sizeof(bdf)))
		DT_SKIP("no QEMU edu PCI device (1234:11e8); run-vm.sh adds one");
	DT_ASSERT_EQ(sg_sh("rmmod simgpu"), 0);
	DT_ASSERT_EQ(sg_sh("modprobe simgpu pci=1"), 0);
	fd = sg_open_pci_node(bdf);
	pfd = open_after_load();	/* lowest simgpu minor: the platform device */
	sg_query(fd, &dev);
	sg_query(pfd, &pdev);
	DT_EXPECT_NE(dev.q.client_id, pdev.q.client_id);

	sg_wait(fd, sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, 20 * NSEC_PER_MSEC), &w);
	sg_fdinfo_read(fd, &fi);
	sg_fdinfo_read(pfd, &pfi);
	kv = sg_fdinfo_find(&fi, "drm-pdev");
	DT_ASSERT_TRUE(kv != NULL);
	DT_EXPECT_STREQ(kv->val, bdf);
	kv = sg_fdinfo_find(&fi, "drm-driver");
	DT_ASSERT_TRUE(kv != NULL);
	DT_EXPECT_STREQ(kv->val, "simgpu");
	DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-client-id", ""), dev.q.client_id);
	DT_EXPECT_GE(sg_fdinfo_engine_ns(&fi, dev.eng[0].q.name), w.end_ns - w.start_ns);
	DT_EXPECT_EQ(sg_fdinfo_cycles(&fi, dev.eng[0].q.name), w.cycles);

	DT_EXPECT_TRUE(sg_fdinfo_find(&pfi, "drm-pdev") == NULL);
	DT_EXPECT_EQ(sg_fdinfo_engine_ns(&pfi, pdev.eng[0].q.name), 0ull);
	DT_EXPECT_EQ(sg_fdinfo_cycles(&pfi, pdev.eng[0].q.name), 0ull);

	sg_fdinfo_free(&fi);
	sg_fdinfo_free(&pfi);
	sg_dev_free(&dev);
	sg_dev_free(&pdev);
	close(fd);
	close(pfd);
}

DT_MAIN
