// SPDX-License-Identifier: GPL-2.0
/*
 * The loader picks the gpu_scheduler events the running kernel has: the
 * 6.1 names (drm_sched_job, drm_run_job, drm_sched_process_job) or the
 * 6.17 ones (drm_sched_job_queue/_run/_done). The tp_btf programs (sb_*)
 * are one set, attached to whichever the kernel has; the plain tracepoint
 * programs are one set per record layout (st_* 6.1, st17_* 6.17), and the
 * other layout's stays in the object with autoload off: not relocated, not
 * loaded, and the load succeeds although this kernel has none of its
 * attach points. The expected set comes from the event directories this
 * test finds in tracefs itself (sg_sched_events()); the loader's tp_btf
 * choice reads gpu_sched's BTF instead, so each source is checked against
 * the other. The kernel release is logged, never used.
 *
 * And every program of the object passes this kernel's verifier on its
 * own: each one's verified instruction count goes to the log with the
 * kernel's release ("verified on <release>: ..."), so growth shows from run
 * to run and kernel to kernel.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "dtest.h"
#include "sgtest.h"

/* tp_btf: one set; the sections name the 6.17 events */
static const char *const sbtf[] = { "sb_queue", "sb_run", "sb_done" };
static const char *const sbtf_sec[] = {
	"tp_btf/drm_sched_job_queue", "tp_btf/drm_sched_job_run", "tp_btf/drm_sched_job_done",
};
/* where they attach on a kernel with the 6.1 names */
static const char *const sbtf_61[] = { "drm_sched_job", "drm_run_job", "drm_sched_process_job" };
/* plain tracepoints: one set per record layout */
static const char *const stp61[] = { "st_queue", "st_run", "st_done" };
static const char *const stp617[] = { "st17_queue", "st17_run", "st17_done" };
static const char *const stp617_sec[] = {
	"tracepoint/gpu_scheduler/drm_sched_job_queue",
	"tracepoint/gpu_scheduler/drm_sched_job_run",
	"tracepoint/gpu_scheduler/drm_sched_job_done",
};

/* The set this kernel must have, from the events its tracefs shows. */
static int expected_set(void)
{
	struct utsname u;
	int ev = sg_sched_events();

	DT_ASSERT_EQ(uname(&u), 0);
	if (!ev)
		DT_SKIP("no gpu_scheduler events in tracefs (gpu_sched not loaded)");
	dt_info("kernel %s: %s gpu_scheduler events in tracefs", u.release,
		ev == 617 ? "6.17" : "6.1");
	dt_label("%s set", ev == 617 ? "6.17" : "6.1");
	return ev == 617 ? DAC_SCHED_SET_617 : DAC_SCHED_SET_61;
}

DT_TEST(plan_picks_this_kernels_set)
{
	struct dac_bpf_load_opts o = { .no_drmacct = true };
	struct dac_bpf_plan p;
	int want = expected_set();

	DT_ASSERT_EQ(dac_bpf_plan(NULL, &o, &p), 0);
	DT_EXPECT_EQ(p.sched, access("/sys/kernel/btf/gpu_sched", F_OK) ? 0 : 1);
	DT_EXPECT_EQ(p.sched_set, want);
	o.attach = DAC_BPF_ATTACH_TRACEPOINT;
	DT_ASSERT_EQ(dac_bpf_plan(NULL, &o, &p), 0);
	DT_EXPECT_EQ(p.sched, 0);
	DT_EXPECT_EQ(p.sched_set, want);
	if (!access("/sys/kernel/btf/gpu_sched", F_OK)) {
		/* From gpu_sched's BTF typedefs alone, tracefs hidden. */
		struct dac_bpf_env env = { .events_root = "/nonexistent" };

		o.attach = DAC_BPF_ATTACH_BTF;
		DT_ASSERT_EQ(dac_bpf_plan(&env, &o, &p), 0);
		DT_EXPECT_EQ(p.sched, 1);
		DT_EXPECT_EQ(p.sched_set, want);
	}
}

/*
 * Where this kernel's common record header ends, read from an event's
 * format file (the common_* fields: 8 bytes on Debian's stock kernels,
 * more on PREEMPT_RT), rounded up to the 8-byte alignment of the first
 * field our 6.1 and drmacct records have.
 */
static unsigned int header_end(const char *event)
{
	char path[256], line[512];
	unsigned int end = 0, off, size;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/format", event);
	f = fopen(path, "r");
	DT_ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		const char *c = strstr(line, " common_");
		const char *o = strstr(line, "offset:");

		if (!c || !o || sscanf(o, "offset:%u;\tsize:%u;", &off, &size) != 2)
			continue;
		if (off + size > end)
			end = off + size;
	}
	fclose(f);
	dt_info("%s: common header ends at %u", event, end);
	DT_ASSERT_GT(end, 0u);
	return (end + 7) & ~7u;
}

DT_TEST(layout_check_matches_this_kernel)
{
	bool is617 = expected_set() == DAC_SCHED_SET_617;
	unsigned int shift = 999, want;

	want = header_end(is617 ? "gpu_scheduler/drm_sched_job_done" :
			  "gpu_scheduler/drm_sched_process_job") - 8;
	DT_EXPECT_EQ(dac_bpf_check_layout(NULL, dac_bpf_sched61_fields, &shift),
		     is617 ? -ENOENT : 0);
	if (!is617)
		DT_EXPECT_EQ(shift, want);
	shift = 999;
	DT_EXPECT_EQ(dac_bpf_check_layout(NULL, dac_bpf_sched617_fields, &shift),
		     is617 ? 0 : -ENOENT);
	if (is617)
		DT_EXPECT_EQ(shift, want);
	if (!access("/sys/kernel/tracing/events/drmacct", F_OK)) {
		shift = 999;
		DT_EXPECT_EQ(dac_bpf_check_layout(NULL, dac_bpf_drmacct_fields, &shift), 0);
		DT_EXPECT_EQ(shift, header_end("drmacct/drmacct_job_end") - 8);
	}
}

static void check_loaded(enum dac_bpf_attach mode)
{
	struct dac_bpf_load_opts o = { .attach = mode, .no_drmacct = true };
	bool is617 = expected_set() == DAC_SCHED_SET_617;
	struct dac_bpf_prog_stats *st = NULL;
	struct dac_bpf_info info;
	struct dac_bpf *b = NULL;
	unsigned int tracked = 0;
	size_t n = 0;
	int err;

	if (getuid())
		DT_SKIP("needs root");
	sg_need_btf();
	err = dac_bpf_load(&o, &b);
	if (err == -ENOENT && mode == DAC_BPF_ATTACH_BTF)
		DT_SKIP("no gpu_sched BTF");
	if (err)
		dt_info("dac_bpf_load: %s; libbpf said:\n%s", dac_bpf_load_strerror(err),
			dac_bpf_load_log());
	DT_ASSERT_EQ(err, 0);
	sg_bpf_label(b);
	DT_ASSERT_EQ(dac_bpf_info(b, &info), 0);
	DT_EXPECT_TRUE(info.sched);
	DT_EXPECT_EQ(info.sched_btf, mode == DAC_BPF_ATTACH_BTF);
	DT_EXPECT_EQ(info.sched_617, is617);
	for (size_t i = 0; i < 3; i++) {
		bool btf = mode == DAC_BPF_ATTACH_BTF;
		const char *sec = NULL;

		DT_EXPECT_EQ(dac_bpf_prog_state(b, sbtf[i], &sec), btf ? 2 : 0);
		DT_ASSERT_TRUE(sec != NULL);
		DT_EXPECT_STREQ(sec, sbtf_sec[i]);
		/* the event the loader attaches it to on this kernel */
		DT_EXPECT_STREQ(dac_bpf_sched_target(sbtf_sec[i] + 7, expected_set()),
				is617 ? sbtf_sec[i] + 7 : sbtf_61[i]);
		sec = NULL;
		DT_EXPECT_EQ(dac_bpf_prog_state(b, stp617[i], &sec), is617 && !btf ? 2 : 0);
		DT_ASSERT_TRUE(sec != NULL);
		DT_EXPECT_STREQ(sec, stp617_sec[i]);
		DT_EXPECT_EQ(dac_bpf_prog_state(b, stp61[i], NULL), !is617 && !btf ? 2 : 0);
	}
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "no_such_prog", NULL), -ENOENT);
	/*
	 * What the kernel holds: exactly three scheduler programs, with
	 * tp_btf their _nested twins (the 6.1 names, preemption off in the
	 * events: one, the completion's; the 6.17 names: three each, its
	 * events run preemptible on 7.x), and the process programs pb_fork,
	 * pb_exit and three twins each (their events run preemptible on 7.x
	 * too).
	 */
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "sb_done_n1", NULL),
		     mode == DAC_BPF_ATTACH_BTF ? 2 : 0);
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "sb_queue_n1", NULL),
		     is617 && mode == DAC_BPF_ATTACH_BTF ? 2 : 0);
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "sb_run_n1", NULL),
		     is617 && mode == DAC_BPF_ATTACH_BTF ? 2 : 0);
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "sb_done_n3", NULL),
		     is617 && mode == DAC_BPF_ATTACH_BTF ? 2 : 0);
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "pb_exit_n3", NULL), 2);
	DT_EXPECT_EQ(dac_bpf_prog_state(b, "pb_fork_n3", NULL), 2);
	DT_ASSERT_EQ(dac_bpf_read_prog_stats(b, &st, &n), 0);
	for (size_t i = 0; i < n; i++) {
		bool track = !strncmp(st[i].name, "pb_", 3);

		dt_info("loaded: %s", st[i].name);
		tracked += track;
		/* every plain scheduler program is of this kernel's layout */
		if (!strncmp(st[i].name, "st", 2))
			DT_EXPECT_EQ(!strncmp(st[i].name + 2, "17_", 3), is617);
	}
	DT_EXPECT_EQ(tracked, 8u);
	DT_EXPECT_EQ(n, (size_t)(8 + (mode != DAC_BPF_ATTACH_BTF ? 3 : is617 ? 12 : 4)));
	free(st);
	dac_bpf_close(b);
}

DT_TEST_TIMEOUT(load_btf_enables_only_this_kernels_set, 120)
{
	check_loaded(DAC_BPF_ATTACH_BTF);
}

DT_TEST_TIMEOUT(load_tracepoint_enables_only_this_kernels_set, 120)
{
	check_loaded(DAC_BPF_ATTACH_TRACEPOINT);
}

/*
 * Every program loads on this kernel: all plain tracepoint programs (they
 * need no attach point to load, so both record layouts are verified here),
 * the tp_btf programs on drmacct's events, on this kernel's gpu_scheduler
 * events whatever their names, and on sched_process_fork. None is "not
 * here". Refusals name the program and show the verifier's words.
 */
DT_TEST_TIMEOUT(every_program_passes_this_kernels_verifier, 300)
{
	struct dac_bpf_verdict *v = NULL;
	size_t n = 0, loaded = 0;
	uint64_t sum_insns = 0, sum_us = 0;
	const char *stack_prog = NULL, *stack_how = "none said";
	uint32_t stack_max = 0;
	struct utsname u;

	DT_ASSERT_EQ(uname(&u), 0);
	if (getuid())
		DT_SKIP("needs root");
	if (access("/sys/kernel/btf/drmacct", F_OK) || access("/sys/kernel/btf/gpu_sched", F_OK))
		DT_SKIP("drmacct or gpu_sched not loaded (no module BTF)");
	sg_need_btf();
	DT_ASSERT_EQ(dac_bpf_verify(&v, &n), 0);
	DT_ASSERT_GT(n, (size_t)0);
	for (size_t i = 0; i < n; i++) {
		if (v[i].status == 0) {
			loaded++;
			dt_info("verified on %s: %-22s %-44s %6u insns, %7u verified, %8u us, "
				"stack %3u%s", u.release, v[i].name, v[i].sec, v[i].insns,
				v[i].verified_insns, v[i].verify_us, v[i].stack_bytes,
				v[i].stack_is_max ? " max" : " summed");
			if (v[i].stack_bytes > stack_max) {
				stack_max = v[i].stack_bytes;
				stack_prog = v[i].name;
				stack_how = v[i].stack_is_max ? "its deepest call chain" :
					    "all its frames summed";
			}
			sum_insns += v[i].verified_insns;
			sum_us += v[i].verify_us;
		} else if (v[i].status == DAC_BPF_NOT_HERE) {
			dt_info("not here on %s: %-22s %-44s (%s)", u.release, v[i].name, v[i].sec,
				v[i].why);
		} else {
			dt_info("REFUSED on %s: %-22s %-44s %s:\n%s", u.release, v[i].name, v[i].sec,
				strerror(-v[i].status), v[i].why);
		}
		DT_EXPECT_GE(v[i].status, 0);
		DT_EXPECT_NE(v[i].status, DAC_BPF_NOT_HERE);
		if (v[i].status == 0)
			DT_EXPECT_GT(v[i].verified_insns, 0u);
	}
	dt_info("%zu of %zu programs loaded on %s: %llu verified, %llu us verifying", loaded, n,
		u.release, (unsigned long long)sum_insns, (unsigned long long)sum_us);
	/*
	 * The kernel refuses a call chain over 512 bytes. Where the verifier
	 * gives the deepest chain (7.3; 6.18 not yet) this is the margin
	 * left; where it gives each frame, their sum bounds the chain from
	 * above: under 512 it is the margin too, over it says nothing.
	 */
	dt_info("largest stack on %s: %s, %u bytes (%s)", u.release,
		stack_prog ? stack_prog : "-", stack_max, stack_how);
	free(v);
}

DT_MAIN
