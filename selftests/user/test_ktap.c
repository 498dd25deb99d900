// SPDX-License-Identifier: GPL-2.0
/*
 * test_ktap.c - the KTAP reader the VM test test_kunit uses (ktap.h), on
 * KUnit output kept in selftests/user/fixtures/ktap. Captured from our 7.3
 * kernel: the suite passing as debugfs shows it (pass-debugfs) and as
 * dmesg shows it among other kernel messages (pass-dmesg), a case failing
 * (fail-debugfs: a build with one check of engine_flags_choose_keys turned
 * round on purpose), the suite's init refusing a filtered suite
 * (init-failed: before suite_init checked the module's own case array).
 * Written by hand: a failing case beside a skipped one and a parameterised
 * one with its own nested subtest (fail-skip-nested), the suite among
 * lines that are no KTAP and after another suite (kmsg-garbage), a kernel
 * that died inside the suite (truncated). And short texts for each rule of
 * ktap_suite_complete(). Run from the repository root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtest.h"
#include "ktap.h"

#define FIXTURES "selftests/user/fixtures/ktap/"

/* Parses @text for drmacct_test; fails the test when it is not there. */
static void parse(const char *text, struct ktap_suite *s)
{
	int ret = ktap_find_suite(text, "drmacct_test", s);

	if (ret)
		DT_FAIL("ktap_find_suite: %s", ktap_strerror(ret));
}

/* Reads the fixture @name and parses its suite drmacct_test into @s. */
static void parse_fixture(const char *name, struct ktap_suite *s)
{
	char path[256], *text = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int c;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	f = fopen(path, "r");
	if (!f)
		DT_FAIL("%s: %s (run from the repository root)", path, strerror(errno));
	mem = open_memstream(&text, &len);
	DT_ASSERT_TRUE(mem != NULL);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(f);
	DT_ASSERT_EQ(fclose(mem), 0);
	parse(text, s);
	free(text);
}

static void expect_case(const struct ktap_suite *s, size_t i, unsigned int number,
			const char *name, enum ktap_status st)
{
	DT_ASSERT_LT(i, s->ncases);
	DT_EXPECT_EQ(s->cases[i].number, number);
	DT_EXPECT_STREQ(s->cases[i].name, name);
	DT_EXPECT_STREQ(ktap_status_name(s->cases[i].status), ktap_status_name(st));
}

static const char *const all_cases[] = {
	"writers_race_readers", "create_rejects_bad_descriptors",
	"engine_flags_choose_keys", "mem_keys_choose_keys",
	"reset_charges_and_restarts", "destroy_detaches_callbacks",
	"device_ids_grow",
};

DT_TEST(passing_suite_from_debugfs)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("pass-debugfs.ktap", &s);
	DT_EXPECT_STREQ(s.name, "drmacct_test");
	DT_EXPECT_EQ(s.plan, 7);
	DT_EXPECT_EQ(s.plans, 1u);
	DT_ASSERT_EQ(s.ncases, 7u);
	for (size_t i = 0; i < 7; i++)
		expect_case(&s, i, (unsigned int)i + 1, all_cases[i], KTAP_PASS);
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_EQ(s.number, 1u);
	DT_EXPECT_STREQ(s.end_name, "drmacct_test");
	DT_EXPECT_EQ((int)s.status, (int)KTAP_PASS);
	DT_EXPECT_TRUE(s.directive == NULL);
	DT_EXPECT_EQ(s.garbage, 0u);
	/* The race's counts and the slow mark come with the first case. */
	DT_EXPECT_STREQ(s.cases[0].diag,
			"# writers_race_readers: 4055378 + 574747 + 2204 (irq) rounds, 1458687 reads\n"
			"# writers_race_readers.speed: slow\n");
	DT_EXPECT_STREQ(s.cases[1].diag, "");
	DT_EXPECT_EQ(s.cases[0].subtests, 0u);
	/*
	 * The module attribute after the cases is the suite's; the totals
	 * KUnit logs at column 0 are outside it.
	 */
	DT_EXPECT_STREQ(s.diag, "# module: drmacct_kunit\n");
	DT_EXPECT_TRUE(ktap_suite_complete(&s, why, sizeof(why)));
	DT_EXPECT_TRUE(ktap_suite_case(&s, "device_ids_grow") == &s.cases[6]);
	DT_EXPECT_TRUE(ktap_suite_case(&s, "capacity_warn") == NULL);
	ktap_suite_free(&s);
}

DT_TEST(passing_suite_from_dmesg)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("pass-dmesg.ktap", &s);
	DT_ASSERT_EQ(s.ncases, 7u);
	for (size_t i = 0; i < 7; i++)
		expect_case(&s, i, (unsigned int)i + 1, all_cases[i], KTAP_PASS);
	DT_EXPECT_EQ(s.plan, 7);
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_EQ((int)s.status, (int)KTAP_PASS);
	/*
	 * Not KTAP: drmacct_test.ko's line, simgpu's, modprobe's, twelve of
	 * the guest's module addresses. Timestamps are no garbage.
	 */
	DT_EXPECT_EQ(s.garbage, 15u);
	/* In the kernel log the module attribute comes before the plan. */
	DT_EXPECT_STREQ(s.diag, "# module: drmacct_kunit\n");
	DT_EXPECT_STREQ(s.cases[0].diag,
			"# writers_race_readers: 4396437 + 1578815 + 2327 (irq) rounds, 656651 reads\n"
			"# writers_race_readers.speed: slow\n");
	DT_EXPECT_TRUE(ktap_suite_complete(&s, why, sizeof(why)));
	ktap_suite_free(&s);
}

DT_TEST(failing_case_from_debugfs)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("fail-debugfs.ktap", &s);
	DT_ASSERT_EQ(s.ncases, 7u);
	for (size_t i = 0; i < 7; i++)
		expect_case(&s, i, (unsigned int)i + 1, all_cases[i],
			    i == 2 ? KTAP_FAIL : KTAP_PASS);
	/* KUnit's line, our message's first line, then one line per fdinfo line. */
	DT_EXPECT_STREQ(s.cases[2].diag,
			"# engine_flags_choose_keys: EXPECTATION FAILED at kernel/drmacct/drmacct_kunit.c:41\n"
			"case_engine_flags_choose_keys:183: !has_key(buf, \"drm-engine-time\"): "
			"drm-engine-time:\t0 ns\n"
			"# engine_flags_choose_keys: drm-engine-capacity-time:\t2\n"
			"# engine_flags_choose_keys: drm-cycles-cyc:\t0\n"
			"# engine_flags_choose_keys: drm-maxfreq-cyc:\t5000 Hz\n"
			"# engine_flags_choose_keys: drm-engine-both:\t0 ns\n"
			"# engine_flags_choose_keys: drm-cycles-both:\t0\n");
	DT_EXPECT_EQ(s.garbage, 1u);	/* the message's first line */
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_EQ((int)s.status, (int)KTAP_FAIL);
	/* It ran every case and says it failed, as one did: complete. */
	DT_EXPECT_TRUE(ktap_suite_complete(&s, why, sizeof(why)));
	ktap_suite_free(&s);
}

DT_TEST(failing_skipped_and_nested_cases)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("fail-skip-nested.ktap", &s);
	DT_EXPECT_EQ(s.plan, 4);
	/* The nested subtest's three results are not the suite's cases. */
	DT_ASSERT_EQ(s.ncases, 4u);
	expect_case(&s, 0, 1, "create_rejects_bad_descriptors", KTAP_PASS);
	expect_case(&s, 1, 2, "engine_flags_choose_keys", KTAP_FAIL);
	expect_case(&s, 2, 3, "mem_keys_choose_keys", KTAP_SKIP);
	expect_case(&s, 3, 4, "reset_charges_and_restarts", KTAP_PASS);
	/* The failure's message, its deeper-indented line kept under it. */
	DT_EXPECT_STREQ(s.cases[1].diag,
			"# engine_flags_choose_keys: EXPECTATION FAILED at kernel/drmacct/drmacct_kunit.c:41\n"
			"    case_engine_flags_choose_keys:170: has_key(buf, \"drm-engine-time\"): drm-driver:\tt\n"
			"# engine_flags_choose_keys: drm-client-id:\t12\n");
	DT_EXPECT_STREQ(s.cases[2].directive, "SKIP no memory regions on this device");
	DT_EXPECT_TRUE(s.cases[1].directive == NULL);
	DT_EXPECT_EQ(s.cases[3].subtests, 3u);
	DT_EXPECT_TRUE(strstr(s.cases[3].diag, "    # Subtest: reset_charges_and_restarts\n") != NULL);
	DT_EXPECT_TRUE(strstr(s.cases[3].diag, "    ok 3 both # SKIP no cycles counter\n") != NULL);
	DT_EXPECT_EQ(s.cases[0].subtests + s.cases[1].subtests + s.cases[2].subtests, 0u);
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_EQ((int)s.status, (int)KTAP_FAIL);
	DT_EXPECT_EQ(s.garbage, 1u);	/* the message's second line */
	/* Complete: it ran every case, and says it failed, as one did. */
	DT_EXPECT_TRUE(ktap_suite_complete(&s, why, sizeof(why)));
	ktap_suite_free(&s);
}

DT_TEST(suite_among_kernel_log_lines)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("kmsg-garbage.ktap", &s);
	/* Another suite before it lends it nothing. */
	DT_ASSERT_EQ(s.ncases, 3u);
	expect_case(&s, 0, 1, "create_rejects_bad_descriptors", KTAP_PASS);
	expect_case(&s, 1, 2, "engine_flags_choose_keys", KTAP_PASS);
	expect_case(&s, 2, 3, "device_ids_grow", KTAP_PASS);
	DT_EXPECT_TRUE(ktap_suite_case(&s, "other_case") == NULL);
	DT_EXPECT_TRUE(ktap_suite_case(&s, "drmacct_first") == NULL);
	/* "ok three" (no number) does not end it; its own line does. */
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_STREQ(s.end_name, "drmacct_test");
	DT_EXPECT_EQ((int)s.status, (int)KTAP_PASS);
	/*
	 * Not KTAP: the banner, the taint line, the crng line, the binary
	 * line, simgpu's line, the two-space line, "ok three", the heartbeat.
	 */
	DT_EXPECT_EQ(s.garbage, 8u);
	/* The attribute before the plan is the suite's, not the first case's. */
	DT_EXPECT_STREQ(s.diag, "# module: drmacct_kunit\n"
			"# drmacct_test: pass:3 fail:0 skip:0 total:3\n");
	DT_EXPECT_STREQ(s.cases[0].diag, "");
	DT_EXPECT_TRUE(ktap_suite_complete(&s, why, sizeof(why)));
	ktap_suite_free(&s);
}

DT_TEST(kernel_died_inside_the_suite)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("truncated.ktap", &s);
	DT_EXPECT_EQ(s.plan, 7);
	DT_EXPECT_EQ(s.ncases, 2u);
	DT_EXPECT_FALSE(s.ended);
	DT_EXPECT_EQ(s.garbage, 3u);	/* BUG, Oops, RIP; "#PF" is a comment */
	DT_EXPECT_FALSE(ktap_suite_complete(&s, why, sizeof(why)));
	DT_EXPECT_STREQ(why, "the suite never ended: 2 case results, then the text ends");
	ktap_suite_free(&s);
}

DT_TEST(suite_init_failed)
{
	struct ktap_suite s;
	char why[256];

	parse_fixture("init-failed.ktap", &s);
	DT_EXPECT_EQ(s.plan, 1);
	DT_EXPECT_EQ(s.ncases, 0u);
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_EQ((int)s.status, (int)KTAP_FAIL);
	DT_EXPECT_TRUE(strstr(s.diag, "# drmacct_test: case writers_race_readers is not in the suite\n")
		       != NULL);
	DT_EXPECT_TRUE(strstr(s.diag, "# failed to initialize (-22)\n") != NULL);
	DT_EXPECT_FALSE(ktap_suite_complete(&s, why, sizeof(why)));
	DT_EXPECT_STREQ(why, "planned 1 cases, 0 reported");
	ktap_suite_free(&s);
}

/* @text as a suite drmacct_test: complete or not, and why not. */
static void expect_incomplete(const char *text, const char *want_why)
{
	struct ktap_suite s;
	char why[256] = "";

	parse(text, &s);
	DT_EXPECT_FALSE(ktap_suite_complete(&s, why, sizeof(why)));
	DT_EXPECT_STREQ(why, want_why);
	ktap_suite_free(&s);
}

#define HEAD "    # Subtest: drmacct_test\n"

DT_TEST(incomplete_suites_say_why)
{
	expect_incomplete(HEAD "    1..2\n    ok 1 a\nok 1 drmacct_test\n",
			  "planned 2 cases, 1 reported");
	expect_incomplete(HEAD "    ok 1 a\nok 1 drmacct_test\n", "0 plan lines in the suite");
	expect_incomplete(HEAD "    1..1\n    1..1\n    ok 1 a\nok 1 drmacct_test\n",
			  "2 plan lines in the suite");
	expect_incomplete(HEAD "    1..2\n    ok 1 a\n    ok 3 b\nok 1 drmacct_test\n",
			  "case 2 (b) is numbered 3");
	expect_incomplete(HEAD "    1..2\n    ok 1 a\n    ok 2 a\nok 1 drmacct_test\n",
			  "case a reported twice");
	expect_incomplete(HEAD "    1..1\n    not ok 1 a\nok 1 drmacct_test\n",
			  "the suite says ok, and 1 of its cases failed");
	expect_incomplete(HEAD "    1..1\n    ok 1 a\nnot ok 1 drmacct_test\n",
			  "the suite says not ok, and 0 of its cases failed");
	expect_incomplete(HEAD "    1..1\n    ok 1 a\nok 1 other\n",
			  "the suite's result line names \"other\"");
}

DT_TEST(lines_and_directives)
{
	struct ktap_suite s;
	char why[256];

	/* CRLF, "- " before a name, TODO is no skip, no newline at the end. */
	parse("\r\n" HEAD "    1..3\r\n    ok 1 - a\r\n    not ok 2 b # TODO later\r\n"
	      "    ok 3 c #skip  spaces   \r\nok 1 drmacct_test", &s);
	DT_ASSERT_EQ(s.ncases, 3u);
	expect_case(&s, 0, 1, "a", KTAP_PASS);
	expect_case(&s, 1, 2, "b", KTAP_FAIL);
	DT_EXPECT_STREQ(s.cases[1].directive, "TODO later");
	expect_case(&s, 2, 3, "c", KTAP_SKIP);
	DT_EXPECT_STREQ(s.cases[2].directive, "skip  spaces");
	DT_EXPECT_TRUE(s.ended);
	DT_EXPECT_FALSE(ktap_suite_complete(&s, why, sizeof(why)));	/* b failed, suite ok */
	ktap_suite_free(&s);

	/* "ok" without a number, "ok 1x", "okay 1" are no result lines. */
	parse(HEAD "    1..1\n    ok\n    ok 1x\n    okay 1\n    ok 1 a\n"
	      "ok\nok x drmacct_test\nok 1 drmacct_test\n", &s);
	DT_ASSERT_EQ(s.ncases, 1u);
	expect_case(&s, 0, 1, "a", KTAP_PASS);
	DT_EXPECT_STREQ(s.cases[0].diag, "ok\nok 1x\nokay 1\n");
	DT_EXPECT_EQ(s.garbage, 5u);
	DT_EXPECT_TRUE(ktap_suite_complete(&s, why, sizeof(why)));
	ktap_suite_free(&s);
}

/* @rec through ktap_kmsg_record(). */
static void expect_kmsg(const char *rec, const char *want)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	DT_ASSERT_TRUE(out != NULL);
	ktap_kmsg_record(out, rec);
	DT_ASSERT_EQ(fclose(out), 0);
	DT_EXPECT_STREQ(text, want);
	free(text);
}

DT_TEST(kmsg_records_become_lines)
{
	/* Prefix off, escapes undone, the dictionary line after it dropped. */
	expect_kmsg("6,1321,5094763,-;    # engine_flags_choose_keys: drm-engine-capacity-time:\\x092\n"
		    " SUBSYSTEM=kunit\n",
		    "    # engine_flags_choose_keys: drm-engine-capacity-time:\t2\n");
	/* A message of several lines stays one record: its newlines come escaped. */
	expect_kmsg("4,7,8,c;a\\x0ab\\x5cx41", "a\nb\\x41\n");
	/* Not an escape: too short, not hex, upper-case x. */
	expect_kmsg("6,1,2,-;\\x4", "\\x4\n");
	expect_kmsg("6,1,2,-;\\xg1 \\X41", "\\xg1 \\X41\n");
	/* No prefix at all: the whole text. */
	expect_kmsg("ok 1 drmacct_test", "ok 1 drmacct_test\n");
	expect_kmsg("6,1,2,-;", "\n");
}

DT_TEST(no_such_suite_or_two_runs)
{
	struct ktap_suite s;

	DT_EXPECT_EQ(ktap_find_suite("", "drmacct_test", &s), -ENOENT);
	DT_EXPECT_STREQ(ktap_strerror(-ENOENT), "no subtest of that name");
	DT_EXPECT_EQ(ktap_find_suite(HEAD "    1..0\nok 1 drmacct_test\n", "drmacct", &s),
		     -ENOENT);
	/* A suite named like ours with a longer name is another suite. */
	DT_EXPECT_EQ(ktap_find_suite("    # Subtest: drmacct_test2\n", "drmacct_test", &s),
		     -ENOENT);
	/* Two runs in one text: which one counts is not the reader's guess. */
	DT_EXPECT_EQ(ktap_find_suite(HEAD "    1..0\nok 1 drmacct_test\n"
				     HEAD "    1..0\nok 2 drmacct_test\n", "drmacct_test", &s),
		     -EEXIST);
	/* A second header before the first run ended: a rerun after a crash. */
	DT_EXPECT_EQ(ktap_find_suite(HEAD "    1..2\n    ok 1 a\n" HEAD, "drmacct_test", &s),
		     -EEXIST);
}

DT_MAIN
