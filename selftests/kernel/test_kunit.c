// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct's in-kernel cases as the KUnit suite drmacct_test
 * (drmacct_kunit.ko), where the kernel has KUnit (our 7.3 build; Debian's
 * 6.1 and 6.12 have it off, and every test here skips, saying so;
 * test_helper_api runs the same cases through drmacct_test.ko there).
 *
 * The first test that needs them loads the module once for the whole run
 * of this program: KUnit runs the suite at load, the test keeps its KTAP
 * from debugfs (kunit/drmacct_test/results) and from the kernel log
 * (/dev/kmsg from just before the load), and unloads it again (and
 * drmacct_test_cases.ko, unless something had loaded it before), so that
 * test_modules and test_helper_api can still unload drmacct. Then:
 *
 * - suite_ran_every_case: the suite ended, with one plan and exactly the
 *   cases it planned, each once, numbered in order, its own result line
 *   agreeing with them (ktap_suite_complete()), and its cases are exactly
 *   the ones below (capacity_warn, which WARNs by design, is not one);
 * - one test per KUnit case, named like it: ok, or the case's KUnit
 *   messages and a failure; a case KUnit skipped skips;
 * - kernel_log_matches_debugfs: the kernel log holds the same results.
 *
 * The KTAP reader is selftests/user/ktap.c (host test: test_ktap).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"
#include "../user/ktap.h"

#define SUITE "drmacct_test"
#define RESULTS "/sys/kernel/debug/kunit/" SUITE "/results"

/* The suite's cases, in its order (kernel/drmacct/drmacct_kunit.c). */
#define DRMACCT_KUNIT_CASES(X)			\
	X(writers_race_readers)			\
	X(hard_irq_context)			\
	X(create_rejects_bad_descriptors)	\
	X(engine_flags_choose_keys)		\
	X(mem_keys_choose_keys)			\
	X(reset_charges_and_restarts)		\
	X(destroy_detaches_callbacks)		\
	X(device_ids_grow)

#define CASE_NAME(name) #name,
static const char *const known_cases[] = { DRMACCT_KUNIT_CASES(CASE_NAME) };
#define NKNOWN (sizeof(known_cases) / sizeof(known_cases[0]))

/* What one load of drmacct_kunit.ko left, kept for the run's tests. */
struct kunit_run {
	char *debugfs;		/* the results file; NULL without KUnit's debugfs */
	char *kmsg;		/* the kernel log from just before the load */
};

/* /tmp/drmacct_kunit.<the harness's pid>.<what>: one load per run of the program. */
static void run_file(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "/tmp/drmacct_kunit.%d.%s", (int)getppid(), what);
}

static int save(const char *what, const char *text)
{
	char path[128];
	FILE *f;
	int ret;

	run_file(path, sizeof(path), what);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fputs(text, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static char *load(const char *what)
{
	char path[128];

	run_file(path, sizeof(path), what);
	return sg_read_file(path, NULL);
}

static bool module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !access(path, F_OK);
}

/*
 * The text of every record from @fd on, one line each (NULL: no memory).
 * Records the kernel overwrote before they were read leave a line saying
 * so, which is no KTAP.
 */
static char *kmsg_text(int fd)
{
	char rec[8192], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out)
		return NULL;
	for (;;) {
		ssize_t r = read(fd, rec, sizeof(rec) - 1);

		if (r < 0 && errno == EPIPE) {
			fputs("test_kunit: kernel log records lost here\n", out);
			continue;
		}
		if (r <= 0)
			break;
		rec[r] = '\0';
		ktap_kmsg_record(out, rec);
	}
	if (fclose(out))
		return NULL;
	return text;
}

/* Prints @text as diagnostic lines, each with @prefix. */
static void show(const char *prefix, const char *text)
{
	const char *p = text, *nl;

	for (; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		dt_info("%s%.*s", prefix, nl ? (int)(nl - p) : (int)strlen(p), p);
	}
}

/* @what into @err, unless @err already says what went wrong first. */
static void first_error(char *err, size_t errlen, const char *what)
{
	if (!err[0])
		snprintf(err, errlen, "%s", what);
}

/*
 * Loads drmacct_kunit.ko (KUnit runs the suite), keeps its debugfs
 * results and the kernel log of the load, and unloads it, and
 * drmacct_test_cases.ko unless that was loaded before. Returns @err: ""
 * or what went wrong.
 */
static const char *run_suite(char *err, size_t errlen)
{
	bool had_cases = module_loaded("drmacct_test_cases");
	char ko[256], *text;
	struct utsname u;
	int fd, rc;

	err[0] = '\0';
	if (uname(&u)) {
		first_error(err, errlen, "uname failed");
		return err;
	}
	snprintf(ko, sizeof(ko), "/lib/modules/%s/extra/drmacct_kunit.ko", u.release);
	if (access(ko, F_OK)) {
		first_error(err, errlen, "the kernel has KUnit, but there is no drmacct_kunit.ko "
			    "for it (kernel/compat.mk builds it where CONFIG_KUNIT is set)");
		return err;
	}
	/* Loaded already (by hand): unload it, so that the suite runs now. */
	if (module_loaded("drmacct_kunit") && sg_sh("rmmod drmacct_kunit")) {
		first_error(err, errlen, "rmmod drmacct_kunit (loaded before this test) failed");
		return err;
	}
	fd = sg_kmsg_open();
	if (fd < 0) {
		first_error(err, errlen, "cannot read /dev/kmsg");
		return err;
	}
	rc = sg_sh("modprobe drmacct_kunit");
	if (rc)
		snprintf(err, errlen, "modprobe drmacct_kunit: exit status %d", rc);
	text = kmsg_text(fd);
	close(fd);
	if (!text || save("kmsg", text))
		first_error(err, errlen, "cannot keep the kernel log in /tmp");
	free(text);
	/* No results file: no KUnit debugfs, the kernel log is all there is. */
	text = sg_read_file(RESULTS, NULL);
	if (text && save("debugfs", text))
		first_error(err, errlen, "cannot keep the debugfs results in /tmp");
	free(text);
	if (module_loaded("drmacct_kunit") && sg_sh("rmmod drmacct_kunit"))
		first_error(err, errlen, "rmmod drmacct_kunit failed");
	if (!had_cases && module_loaded("drmacct_test_cases") &&
	    sg_sh("rmmod drmacct_test_cases"))
		first_error(err, errlen, "rmmod drmacct_test_cases failed");
	return err;
}

/*
 * The suite's run for this run of the program: made by the first test that
 * asks (a test that runs alone makes its own), read by the others. A run
 * that an earlier test started and never finished (killed at its timeout)
 * fails the later tests too: the suite runs once, not once more.
 */
static void get_run(struct kunit_run *r)
{
	char *started, *done, err[256];

	if (!sg_is_root())
		DT_SKIP("needs root");
	if (!module_loaded("kunit"))
		DT_SKIP("no KUnit in this kernel (CONFIG_KUNIT unset), so no drmacct_kunit.ko; "
			"test_helper_api runs these cases");
	started = load("started");
	done = load("done");
	if (!started) {
		DT_ASSERT_EQ(save("started", "1"), 0);
		DT_ASSERT_EQ(save("done", run_suite(err, sizeof(err))), 0);
		done = load("done");
	} else if (!done) {
		free(started);
		DT_FAIL("an earlier test of this run loaded drmacct_kunit.ko and did not finish");
	}
	free(started);
	DT_ASSERT_TRUE(done != NULL);
	if (done[0]) {
		char *kmsg = load("kmsg");

		show("kernel log: ", kmsg);
		free(kmsg);
		dt_info("drmacct_kunit.ko: %s", done);
		free(done);
		DT_FAIL("the KUnit suite did not run");
	}
	free(done);
	r->kmsg = load("kmsg");
	r->debugfs = load("debugfs");
	DT_ASSERT_TRUE(r->kmsg != NULL);
	if (!r->debugfs && strstr(r->kmsg, "kunit: disabled")) {
		free(r->kmsg);
		DT_SKIP("KUnit is disabled in this kernel (kunit.enable=0)");
	}
}

static void free_run(struct kunit_run *r)
{
	free(r->debugfs);
	free(r->kmsg);
}

/* The suite from debugfs, or from the kernel log where debugfs has none. */
static void get_suite(struct ktap_suite *s, const char **from)
{
	struct kunit_run r;
	int ret;

	get_run(&r);
	*from = r.debugfs ? RESULTS : "the kernel log";
	ret = ktap_find_suite(r.debugfs ? r.debugfs : r.kmsg, SUITE, s);
	if (ret) {
		show("", r.debugfs ? r.debugfs : r.kmsg);
		free_run(&r);
		DT_FAIL("no KTAP of the suite %s in %s: %s", SUITE, *from, ktap_strerror(ret));
	}
	free_run(&r);
}

DT_TEST_TIMEOUT(suite_ran_every_case, 180)
{
	unsigned int n[3] = { 0 };
	struct ktap_suite s;
	const char *from;
	char why[256];

	get_suite(&s, &from);
	for (size_t i = 0; i < s.ncases; i++)
		n[s.cases[i].status]++;
	dt_info("KUnit suite %s (%s): %zu cases, %u ok, %u not ok, %u skipped; suite %s",
		SUITE, from, s.ncases, n[KTAP_PASS], n[KTAP_FAIL], n[KTAP_SKIP],
		s.ended ? ktap_status_name(s.status) : "unfinished");
	if (!ktap_suite_complete(&s, why, sizeof(why))) {
		show("", s.diag);
		ktap_suite_free(&s);
		DT_FAIL("the suite in %s: %s", from, why);
	}
	/* Exactly the cases this test knows: none more, none less. */
	for (size_t i = 0; i < s.ncases; i++) {
		bool known = false;

		for (size_t k = 0; k < NKNOWN; k++)
			known |= !strcmp(s.cases[i].name, known_cases[k]);
		if (!known)
			dt_info("KUnit ran case %s, which this test does not know", s.cases[i].name);
		DT_EXPECT_TRUE(known);
	}
	for (size_t k = 0; k < NKNOWN; k++)
		if (!ktap_suite_case(&s, known_cases[k]))
			dt__fail_here(__FILE__, __LINE__, false, "KUnit did not report case %s",
				      known_cases[k]);
	DT_EXPECT_EQ(s.ncases, NKNOWN);
	DT_EXPECT_TRUE(ktap_suite_case(&s, "capacity_warn") == NULL);
	ktap_suite_free(&s);
}

/* One KUnit case's result as this test's. */
static void kunit_case(const char *name)
{
	const struct ktap_case *c;
	struct ktap_suite s;
	const char *from;

	get_suite(&s, &from);
	c = ktap_suite_case(&s, name);
	if (!c) {
		ktap_suite_free(&s);
		DT_FAIL("KUnit reported no case %s in %s", name, from);
	}
	show("kunit: ", c->diag);
	if (c->status == KTAP_SKIP) {
		char reason[256];

		snprintf(reason, sizeof(reason), "%s", c->directive ? c->directive : "");
		ktap_suite_free(&s);
		DT_SKIP("KUnit skipped it: %s", reason);
	}
	if (c->status == KTAP_FAIL)
		dt__fail_here(__FILE__, __LINE__, false, "KUnit: not ok %u %s", c->number, c->name);
	ktap_suite_free(&s);
}

#define CASE_TEST(name) DT_TEST_TIMEOUT(name, 180) { kunit_case(#name); }
DRMACCT_KUNIT_CASES(CASE_TEST)

/* The kernel log's KTAP of the suite says what debugfs says. */
DT_TEST_TIMEOUT(kernel_log_matches_debugfs, 180)
{
	struct ktap_suite d, k;
	struct kunit_run r;
	int ret;

	get_run(&r);
	if (!r.debugfs) {
		free_run(&r);
		DT_SKIP("no %s (CONFIG_KUNIT_DEBUGFS off): the kernel log is the only source",
			RESULTS);
	}
	ret = ktap_find_suite(r.debugfs, SUITE, &d);
	if (ret) {
		free_run(&r);
		DT_FAIL("debugfs: %s", ktap_strerror(ret));
	}
	ret = ktap_find_suite(r.kmsg, SUITE, &k);
	if (ret) {
		show("", r.kmsg);
		ktap_suite_free(&d);
		free_run(&r);
		DT_FAIL("no KTAP of %s in the kernel log: %s", SUITE, ktap_strerror(ret));
	}
	dt_info("kernel log of the load: %zu lines that are no KTAP", k.garbage);
	DT_EXPECT_EQ(k.plan, d.plan);
	DT_EXPECT_EQ(k.ended, d.ended);
	DT_EXPECT_EQ((int)k.status, (int)d.status);
	DT_EXPECT_EQ(k.ncases, d.ncases);
	for (size_t i = 0; i < k.ncases && i < d.ncases; i++) {
		DT_EXPECT_STREQ(k.cases[i].name, d.cases[i].name);
		DT_EXPECT_EQ(k.cases[i].number, d.cases[i].number);
		DT_EXPECT_EQ((int)k.cases[i].status, (int)d.cases[i].status);
	}
	ktap_suite_free(&k);
	ktap_suite_free(&d);
	free_run(&r);
}

DT_MAIN
