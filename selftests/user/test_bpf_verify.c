// SPDX-License-Identifier: MIT
/*
 * The newest BPF verifier on every run: the host kernel here is newer than
 * any target kernel (6.18 against 6.1 and 6.12), so the programs go through
 * its verifier too, loaded one by one and never attached. Newer verifiers
 * are stricter (pointer arguments of module tracepoints as maybe-NULL) and
 * walk loops differently; a program that only the next kernel would refuse
 * fails here first.
 *
 * The host has neither drmacct nor gpu_sched, so its tp_btf programs on
 * their tracepoints have no BTF to load against ("not here"; the VM tests
 * verify those on each target kernel). Everything else must load: every
 * plain tracepoint program, of every scheduler event set, and the tp_btf
 * program on sched_process_fork. Each program's verified instruction count
 * goes to the log.
 *
 * Skips, with the reason, when not root or when the host kernel is not
 * newer than the newest target kernel (DRMACCT_NEWEST_TARGET_KVER, set by
 * the Makefile): then the guests' verifiers are the newest there is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf.h"
#include "dtest.h"

/* major.minor.patch of a kernel release; false when it has none. */
static bool release_version(const char *r, unsigned int v[3])
{
	v[0] = v[1] = v[2] = 0;
	return sscanf(r, "%u.%u.%u", &v[0], &v[1], &v[2]) >= 2;
}

static int version_cmp(const unsigned int a[3], const unsigned int b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

DT_TEST(release_versions_compare)
{
	unsigned int a[3], b[3];

	DT_ASSERT_TRUE(release_version("6.12.117+deb12-amd64", a));
	DT_EXPECT_EQ(a[0], 6u);
	DT_EXPECT_EQ(a[1], 12u);
	DT_EXPECT_EQ(a[2], 117u);
	DT_ASSERT_TRUE(release_version("6.1.0-56-amd64", b));
	DT_EXPECT_EQ(version_cmp(a, b), 1);
	DT_EXPECT_EQ(version_cmp(b, a), -1);
	DT_ASSERT_TRUE(release_version("6.18.44-fc-v669", b));
	DT_EXPECT_EQ(version_cmp(b, a), 1);
	DT_EXPECT_FALSE(release_version("vmlinuz", b));
}

/* The tail of a log: the last lines, from a line start, a final newline or not. */
DT_TEST(log_tail_is_the_last_lines)
{
	const char *log = "a\nbb\nccc\n";

	DT_EXPECT_STREQ(dac_bpf_log_tail(log, 1), "ccc\n");
	DT_EXPECT_STREQ(dac_bpf_log_tail(log, 2), "bb\nccc\n");
	DT_EXPECT_STREQ(dac_bpf_log_tail(log, 3), log);
	DT_EXPECT_STREQ(dac_bpf_log_tail(log, 9), log);
	DT_EXPECT_STREQ(dac_bpf_log_tail("x\ny", 1), "y");
	DT_EXPECT_STREQ(dac_bpf_log_tail("", 5), "");
	DT_EXPECT_STREQ(dac_bpf_log_tail("\n\n", 1), "\n");
}

DT_TEST_TIMEOUT(every_program_passes_the_host_verifier, 300)
{
	const char *target = getenv("DRMACCT_NEWEST_TARGET_KVER");
	unsigned int host[3], newest[3];
	struct dac_bpf_verdict *v = NULL;
	size_t n = 0, loaded = 0, plain = 0;
	struct utsname u;
	bool fork_loaded = false;
	int err;

	if (!target || !*target)
		DT_SKIP("DRMACCT_NEWEST_TARGET_KVER is not set (run through `make host-test`)");
	DT_ASSERT_EQ(uname(&u), 0);
	DT_ASSERT_TRUE(release_version(u.release, host));
	DT_ASSERT_TRUE(release_version(target, newest));
	if (version_cmp(host, newest) <= 0)
		DT_SKIP("the host kernel %s is not newer than the newest target %s: "
			"the VM tests run the newest verifier", u.release, target);
	if (geteuid())
		DT_SKIP("loading BPF programs needs root");
	dt_info("host kernel %s, newest target %s", u.release, target);

	err = dac_bpf_verify(&v, &n);
	DT_ASSERT_EQ(err, 0);
	DT_ASSERT_GT(n, (size_t)0);
	for (size_t i = 0; i < n; i++) {
		bool is_plain = !strncmp(v[i].sec, "tracepoint/", 11);

		if (v[i].status == 0) {
			loaded++;
			dt_info("verified %-18s %-44s %6u insns, %7u verified", v[i].name, v[i].sec,
				v[i].insns, v[i].verified_insns);
			DT_EXPECT_GT(v[i].verified_insns, 0u);
			if (!strcmp(v[i].sec, "tp_btf/sched_process_fork"))
				fork_loaded = true;
		} else if (v[i].status == DAC_BPF_NOT_HERE) {
			dt_info("not here %-18s %-44s", v[i].name, v[i].sec);
		} else {
			dt_info("REFUSED  %-18s %-44s %s:\n%s", v[i].name, v[i].sec,
				strerror(-v[i].status), v[i].why);
		}
		DT_EXPECT_GE(v[i].status, 0);
		if (is_plain) {
			plain++;
			DT_EXPECT_EQ(v[i].status, 0);
		}
	}
	dt_info("%zu of %zu programs loaded", loaded, n);
	/* 5 drmacct events, 3 of each scheduler set. */
	DT_EXPECT_EQ(plain, (size_t)11);
	DT_EXPECT_TRUE(fork_loaded);
	free(v);
}

DT_MAIN
