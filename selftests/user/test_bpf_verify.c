// SPDX-License-Identifier: MIT
/*
 * One more verifier on every run: the host kernel's, whatever its version
 * (6.18 here, between the 6.12 and 7.3 targets). The programs go through it
 * loaded one by one and never attached. Verifiers differ from release to
 * release (pointer arguments of module tracepoints as maybe-NULL, loop
 * walking), in both directions, so every one that is at hand counts: a
 * program that some kernel between two targets would refuse fails here.
 *
 * The host has neither drmacct nor gpu_sched, so its tp_btf programs on
 * their tracepoints have no BTF to load against ("not here"; the VM tests
 * verify those on each target kernel). Everything else must load: every
 * plain tracepoint program, of every scheduler event set, and the tp_btf
 * program on sched_process_fork. Each program's verified instruction count
 * goes to the log.
 *
 * Skips, with the reason, only when not root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf.h"
#include "dtest.h"

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

/*
 * The stack line of a verifier's statistics: on 7.3 the deepest chain
 * ("max"), on 6.18 and before every frame summed; 0 for none or garbage.
 */
DT_TEST(log_stack_bytes_reads_both_forms)
{
	bool max = true;

	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("verification time 12 usec\nstack depth 24+0+32\n"
					     "processed 9 insns\n", &max), 56u);
	DT_EXPECT_FALSE(max);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("stack depth 512", &max), 512u);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("verification time 7 usec\nstack depth max 96\n"
					     "subprog 0 (main) main insns_self 9 insns_total 9 "
					     "stack 64\n", &max), 96u);
	DT_EXPECT_TRUE(max);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("stack depth max +8", &max), 0u);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("stack depth 8+", &max), 0u);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("stack depth +8", &max), 0u);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("stack depth 99999999", &max), 0u);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("verification time 3 usec\n", &max), 0u);
	DT_EXPECT_FALSE(max);
	DT_EXPECT_EQ(dac_bpf_log_stack_bytes("", &max), 0u);
}

DT_TEST_TIMEOUT(every_program_passes_the_host_verifier, 300)
{
	struct dac_bpf_verdict *v = NULL;
	size_t n = 0, loaded = 0, plain = 0;
	struct utsname u;
	bool fork_loaded = false;
	int err;

	DT_ASSERT_EQ(uname(&u), 0);
	if (geteuid())
		DT_SKIP("loading BPF programs needs root");
	dt_info("host kernel %s", u.release);

	err = dac_bpf_verify(&v, &n);
	DT_ASSERT_EQ(err, 0);
	DT_ASSERT_GT(n, (size_t)0);
	for (size_t i = 0; i < n; i++) {
		bool is_plain = !strncmp(v[i].sec, "tracepoint/", 11);

		if (v[i].status == 0) {
			loaded++;
			dt_info("verified %-18s %-44s %6u insns, %7u verified, %8u us, stack %3u%s",
				v[i].name, v[i].sec, v[i].insns, v[i].verified_insns, v[i].verify_us,
				v[i].stack_bytes, v[i].stack_is_max ? " max" : " summed");
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
	/* 6 drmacct events, 3 of each scheduler set. */
	DT_EXPECT_EQ(plain, (size_t)12);
	DT_EXPECT_TRUE(fork_loaded);
	free(v);
}

DT_MAIN
