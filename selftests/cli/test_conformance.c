// SPDX-License-Identifier: GPL-2.0
/*
 * test_conformance.c - `drmacct conformance` against simgpu (guest test).
 *
 * simgpu as it is passes every check, with simgpu-load as the workload; the
 * kselftest-style fdinfo_conformance says the same. Then simgpu is loaded
 * with each value of its fault= parameter in turn (the fault each check
 * names in dac_conf_checks()), and exactly that check must fail; the
 * fixture's teardown reloads simgpu without a fault, whatever happened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"
#include "dtest.h"
#include "sgtest.h"

#define OUT "/tmp/conformance.out"
/*
 * Two clients: one keeps the total-cycles engine (compute) busy with jobs
 * in flight, so its frequency stays up and utilisation from time and from
 * cycles measure the same thing (see time-cycles-agree in
 * Documentation/conformance.rst); the other runs on a maxfreq engine
 * (render) and the capacity-2 engine (copy), with buffers. Each holds its
 * file open 300 ms after its last job (six reads at the checker's 50 ms),
 * so time-cycles-agree's window ends at settled reads: no job running,
 * every job's cycles in.
 */
#define WORKLOAD "simgpu-load -e compute -p %u -d %ums -t %ums -H 300ms -q & " \
	"simgpu-load -e render,copy -p 3 -d 5ms -t %ums -H 300ms -b 2 -s 64K -q; wait"

/*
 * The compute client's jobs: two of 5 ms in flight, and on a slower guest
 * (DT_TIMEOUT_SCALE) longer jobs and more of them. A debug kernel's SUBMIT
 * and WAIT (KASAN, lockdep, under TCG) take longer than a 5 ms job, so the
 * engine idled between jobs: ~20% busy with two in flight, 30-57% with
 * twelve, and 74% with two jobs of 30 ms. Part-idle is where the simulated
 * clock's governor (it steps up while busy, down while idle) puts
 * utilisation from cycles ahead of time (by 10-17 points; time-cycles-agree
 * allows ahead), and at 20% busy halved cycles (fault=cycles-disagree)
 * came out less than the flat 10 points behind time it failed on then (now
 * a quarter of time's share: 5 points at 20%). Longer jobs, more in
 * flight, keep the engine busy, so halved cycles fall far behind.
 */
static unsigned int compute_in_flight(void)
{
	double scale = dt_timeout_scale();

	return scale > 1.0 ? (unsigned int)(2 * scale + 0.5) : 2;
}

static unsigned int compute_job_ms(void)
{
	double scale = dt_timeout_scale();

	return scale > 1.0 ? (unsigned int)(5 * scale + 0.5) : 5;
}

/*
 * How long the workload runs: 1.5 s, longer on a slower guest (a debug
 * kernel's KASAN and lockdep, DT_TIMEOUT_SCALE), so the checker's samples
 * still see its clients busy.
 */
static unsigned int workload_ms(void)
{
	return (unsigned int)(1500 * dt_timeout_scale());
}

static const char *cli(void)
{
	const char *bin = getenv("DRMACCT_BIN");

	return bin && *bin ? bin : "/usr/bin/drmacct";
}

/* Reload simgpu with fault=@fault ("none" = no fault); 0 on success. */
static int load(const char *fault)
{
	char params[128];

	snprintf(params, sizeof(params), "fault=%s", fault);
	return sg_simgpu_reload(params);
}

/*
 * Runs @prog (drmacct conformance or fdinfo_conformance) with TAP output;
 * returns its exit status and the output in *@out (caller frees).
 */
static int run_tap(const char *prog, char **out)
{
	char node[64], workload[256];
	size_t len;
	int st;

	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	snprintf(workload, sizeof(workload), WORKLOAD, compute_in_flight(), compute_job_ms(),
		 workload_ms(), workload_ms());
	st = sg_sh("%s --device=%s --workload='%s' > " OUT " 2>&1", prog, node, workload);
	*out = sg_read_file(OUT, &len);
	DT_ASSERT_TRUE(*out != NULL);
	return st;
}

/*
 * The names of the test points that failed ("not ok"), or with @skips of
 * those that skipped ("ok ... # SKIP"), space-separated in TAP order, in
 * @out.
 */
static void list_checks(const char *tap, bool skips, char *out, size_t len)
{
	out[0] = '\0';
	for (const char *p = tap; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		bool notok = !strncmp(p, "not ok ", 7);
		const char *eol = strchrnul(p, '\n'), *name;
		bool skip;
		size_t n;

		if (!notok && strncmp(p, "ok ", 3))
			continue;
		skip = memmem(p, (size_t)(eol - p), "# SKIP", 6) != NULL;
		if (skips ? notok || !skip : !notok)
			continue;
		name = p + (notok ? 7 : 3);
		name += strspn(name, "0123456789");
		name += strspn(name, " ");
		n = strcspn(name, " \n");
		if (strlen(out) + n + 2 < len) {
			if (out[0])
				strcat(out, " ");
			strncat(out, name, n);
		}
	}
}

/*
 * Runs @prog once (no second chance: a check that fails now and then is a
 * check to fix, not to repeat) and names its failed checks in @failed and
 * its skipped ones in @skipped.
 */
static int run_checks(const char *prog, char *failed, char *skipped, size_t len, char **out)
{
	int st = run_tap(prog, out);

	list_checks(*out, false, failed, len);
	list_checks(*out, true, skipped, len);
	return st;
}

/* @list (space-separated words) without @word, in @out. */
static void without(const char *list, const char *word, char *out, size_t len)
{
	size_t n = strlen(word);

	out[0] = '\0';
	for (const char *p = list; *p; p += strspn(p, " ")) {
		size_t m = strcspn(p, " ");

		if ((m != n || strncmp(p, word, n)) && strlen(out) + m + 2 < len) {
			if (out[0])
				strcat(out, " ");
			strncat(out, p, m);
		}
		p += m;
	}
}

DT_TEST_TIMEOUT(simgpu_passes, 120)
{
	char failed[512], skipped[512], *out;
	int st;

	if (access(cli(), X_OK))
		DT_SKIP("%s not found", cli());
	DT_ASSERT_EQ(load("none"), 0);
	st = sg_sh("%s conformance --help >/dev/null", cli());
	DT_ASSERT_EQ(st, 0);

	{
		char prog[300];

		snprintf(prog, sizeof(prog), "%s conformance --tap", cli());
		st = run_checks(prog, failed, skipped, sizeof(failed), &out);
	}
	if (st || failed[0])
		dt_info("%s", out);
	DT_EXPECT_EQ(st, 0);
	DT_EXPECT_STREQ(failed, "");
	/* the workload was seen and compared, not skipped */
	DT_EXPECT_TRUE(strstr(out, "ok 18 workload-busy # ") != NULL);
	DT_EXPECT_TRUE(strstr(out, "ok 19 time-cycles-agree # ") != NULL &&
		       !strstr(out, "ok 19 time-cycles-agree # SKIP"));
	DT_EXPECT_TRUE(strstr(out, "ok 10 busy-capacity # ") != NULL &&
		       !strstr(out, "ok 10 busy-capacity # SKIP"));
	free(out);

	/* the kselftest-style program: same checks, exit 0 */
	if (!access("/usr/bin/fdinfo_conformance", X_OK)) {
		st = run_checks("/usr/bin/fdinfo_conformance", failed, skipped, sizeof(failed), &out);
		if (st || failed[0])
			dt_info("%s", out);
		DT_EXPECT_EQ(st, 0);
		DT_EXPECT_STREQ(failed, "");
		DT_EXPECT_TRUE(strstr(out, "1..19\n") != NULL);
		free(out);
	}
}

/* Tests that load simgpu with a fault: whatever happens, it goes back without. */
DT_FIXTURE(faulty) {
	int unused;
};

DT_SETUP(faulty)
{
}

DT_TEARDOWN(faulty)
{
	if (load("none"))
		dt_info("could not reload simgpu without a fault");
}

DT_TEST_F_TIMEOUT(faulty, each_fault_fails_its_check_only, 900)
{
	const struct dac_conf_info *ci = dac_conf_checks();
	char prog[300], failed[512], clean_skips[512], *out;
	int st;

	if (access(cli(), X_OK))
		DT_SKIP("%s not found", cli());
	snprintf(prog, sizeof(prog), "%s conformance --tap", cli());
	/*
	 * What the fault-free run skips: a fault that turns any other check
	 * into a skip hides that check as surely as one that passes it.
	 */
	DT_ASSERT_EQ(load("none"), 0);
	st = run_checks(prog, failed, clean_skips, sizeof(failed), &out);
	dt_info("no fault -> failed: '%s', skipped: '%s'", failed, clean_skips);
	DT_EXPECT_EQ(st, 0);
	DT_EXPECT_STREQ(failed, "");
	free(out);
	for (int k = 0; k < DAC_CONF__COUNT; k++) {
		char skipped[512], want_skips[512];

		if (!ci[k].fault)
			continue;
		if (load(ci[k].fault)) {
			dt__fail_here(__FILE__, __LINE__, false, "modprobe simgpu fault=%s failed",
				      ci[k].fault);
			continue;
		}
		st = run_checks(prog, failed, skipped, sizeof(failed), &out);
		dt_info("fault=%-20s -> failed: %s; skipped: %s", ci[k].fault, failed, skipped);
		/* (a check with nothing to check without the fault has with it) */
		without(clean_skips, ci[k].name, want_skips, sizeof(want_skips));
		if (strcmp(failed, ci[k].name) || st != 1 || strcmp(skipped, want_skips)) {
			dt_info("%s", out);
			dt__fail_here(__FILE__, __LINE__, false,
				      "fault=%s: want only '%s' to fail (exit 1) and the skips '%s' "
				      "of the run without a fault, got failed '%s' (exit %d), "
				      "skipped '%s'", ci[k].fault, ci[k].name, want_skips, failed,
				      st, skipped);
		}
		free(out);
	}
}

/* --duration stops a workload that runs longer; one with no client fails workload-busy. */
DT_TEST_TIMEOUT(duration_stops_workload, 60)
{
	char node[64], *out;
	uint64_t t0;
	size_t len;
	int st;

	if (access(cli(), X_OK))
		DT_SKIP("%s not found", cli());
	DT_ASSERT_EQ(load("none"), 0);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	t0 = sg_now_ns();
	st = sg_sh("%s conformance --tap --device=%s --duration=1s --workload='sleep 30' > "
		   OUT " 2>&1", cli(), node);
	out = sg_read_file(OUT, &len);
	DT_ASSERT_TRUE(out != NULL);
	DT_EXPECT_EQ(st, 1);
	DT_EXPECT_LT(sg_now_ns() - t0, 20 * NSEC_PER_SEC);
	DT_EXPECT_TRUE(strstr(out, "not ok 18 workload-busy") != NULL);
	DT_EXPECT_TRUE(strstr(out, "the workload 'sleep 30' opened no client") != NULL);
	DT_EXPECT_TRUE(strstr(out, "--duration passed") == NULL);	/* --tap: no log */
	free(out);
}

/*
 * A process that opens the device, closes it and opens it again gets a new
 * client on the same fd number (simgpu-load does it: it probes the node
 * first). Each open is a file of its own: a checker that read one file's
 * fdinfo and then took its reference to the next one filed the new id
 * under the old file and failed client-id-stable (seen under the debug
 * kernel, whose slow syscalls widen that window). Here a shell reopens fd
 * 3 as fast as it can while the checker polls every 10 ms.
 */
DT_TEST_TIMEOUT(reopen_on_the_same_fd_is_a_new_file, 120)
{
	char node[64], *out, *p;
	unsigned int files = 0;
	size_t len;

	if (access(cli(), X_OK))
		DT_SKIP("%s not found", cli());
	DT_ASSERT_EQ(load("none"), 0);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	sg_sh("%s conformance --tap --device=%s --interval=10ms --duration=%ums "
	      "--workload='while :; do exec 3<>%s; exec 3<&-; done' > " OUT " 2>&1",
	      cli(), node, (unsigned int)(3000 * dt_timeout_scale()), node);
	out = sg_read_file(OUT, &len);
	DT_ASSERT_TRUE(out != NULL);
	p = strstr(out, "ok 3 client-id-stable # ");
	if (!p || (p > out && p[-1] == ' '))
		dt_info("%s", out);
	DT_ASSERT_TRUE(p != NULL);
	DT_EXPECT_FALSE(p > out && p[-1] == ' ');	/* "not ok 3" */
	DT_EXPECT_EQ(sscanf(p, "ok 3 client-id-stable # %u files", &files), 1);
	dt_info("%u files seen", files);
	/*
	 * Reopens were seen as files of their own (not one file whose id
	 * moved): 39-43 on Debian's kernels, 6 under the loaded debug kernel,
	 * whose polls are slow.
	 */
	DT_EXPECT_GE(files, 3u);
	free(out);
}

DT_TEST_F(faulty, unknown_fault_is_refused)
{
	DT_EXPECT_NE(sg_sh("rmmod simgpu 2>/dev/null; modprobe simgpu fault=nonsense 2>/dev/null"), 0);
}

DT_MAIN
