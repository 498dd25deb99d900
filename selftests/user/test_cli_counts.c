// SPDX-License-Identifier: MIT
/*
 * drmacct validate's summary counts when an operand names nothing that can
 * be read: the count of checked sources must stay 0 (it once wrapped to
 * 2^64-1, because failed operands were subtracted from sources that were
 * never counted), and the failure must be counted once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "dtest.h"
#include "json_dom.h"

DT_FIXTURE(empty)
{
	char root[64];
};

DT_SETUP(empty)
{
	strcpy(self->root, "/tmp/dt-cli-counts-XXXXXX");
	DT_ASSERT_TRUE(mkdtemp(self->root) != NULL);
}

DT_TEARDOWN(empty)
{
	rmdir(self->root);
}

DT_TEST_F(empty, missing_pid_counts_zero_checked_one_failure)
{
	char opt[128];
	struct cli_result r;

	snprintf(opt, sizeof(opt), "--proc-root=%s", self->root);
	cli_run(&r, "validate", opt, "300", NULL);
	DT_EXPECT_EQ(r.status, 1);
	DT_EXPECT_TRUE(strstr(r.out, "0 checked against the current spec: 0 errors, "
			  "0 warnings, 0 notes, 1 could not be read\n") != NULL);
	DT_EXPECT_TRUE(strstr(r.err, "300: no such process") != NULL);
	cli_result_free(&r);
}

DT_TEST_F(empty, missing_pid_json_summary)
{
	char opt[128];
	struct cli_result r;
	struct jd *doc;

	snprintf(opt, sizeof(opt), "--proc-root=%s", self->root);
	cli_run(&r, "validate", "--json", opt, "300", "301:4", NULL);
	DT_EXPECT_EQ(r.status, 1);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	DT_EXPECT_EQ(jd_u64(doc, "summary.sources", 1), 0ull);
	DT_EXPECT_EQ(jd_u64(doc, "summary.failures", 0), 2ull);
	DT_EXPECT_EQ(jd_len(doc, "sources"), 0);
	jd_free(doc);
	cli_result_free(&r);
}

DT_MAIN
