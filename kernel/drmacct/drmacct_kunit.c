// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct_kunit — the KUnit runner of drmacct_test_cases.ko: its cases as
 * the KUnit suite "drmacct_test", one KUnit case each, for kernels built
 * with CONFIG_KUNIT (kernel/compat.mk; Debian's have KUnit off, and there
 * drmacct_test.ko runs the same cases through debugfs). Every case but
 * capacity_warn, which WARNs by design. The suite runs when the module
 * loads:
 *
 *   modprobe drmacct_kunit
 *   cat /sys/kernel/debug/kunit/drmacct_test/results	(CONFIG_KUNIT_DEBUGFS)
 *
 * and the kernel log has the same KTAP. The VM test
 * selftests/kernel/test_kunit reports every case of it.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "drmacct_compat.h"
#include "drmacct_test_cases.h"

/*
 * A failure of the case as a KUnit expectation failure. Its first line goes
 * with KUnit's "EXPECTATION FAILED" line, indented like KUnit's own
 * messages; each further line (a case may show fdinfo text) becomes a
 * diagnostic line of the case, so the KTAP stays well formed.
 */
static void drmacct_kunit_fail(struct drmacct_test_ctx *ctx, struct va_format *vaf)
{
	struct kunit *test = ctx->priv;
	char *msg = kasprintf(GFP_KERNEL, "%pV", vaf);
	char *rest = msg, *line;

	if (!msg) {
		KUNIT_FAIL(test, KUNIT_SUBTEST_INDENT "(no memory for the failure's message)");
		return;
	}
	line = strsep(&rest, "\n");
	KUNIT_FAIL(test, KUNIT_SUBTEST_INDENT "%s", line);
	while ((line = strsep(&rest, "\n")))
		if (*line)
			kunit_err(test, "%s", line);
	kfree(msg);
}

static void drmacct_kunit_info(struct drmacct_test_ctx *ctx, struct va_format *vaf)
{
	struct kunit *test = ctx->priv;

	kunit_info(test, "%pV", vaf);
}

static const struct drmacct_test_ops drmacct_kunit_ops = {
	.fail = drmacct_kunit_fail,
	.info = drmacct_kunit_info,
};

static void drmacct_kunit_run(struct kunit *test, const char *name)
{
	const struct drmacct_test_case *tc = drmacct_test_case_find(name);
	struct drmacct_test_ctx ctx = { .ops = &drmacct_kunit_ops, .priv = test };

	if (!tc) {
		KUNIT_FAIL(test, KUNIT_SUBTEST_INDENT "drmacct_test_cases.ko has no case %s",
			   name);
		return;
	}
	drmacct_test_case_run(tc, &ctx);
}

/* A KUnit case of the same name as the shared case it runs. */
#define DRMACCT_KUNIT_CASE_FN(name)					\
static void name(struct kunit *test)					\
{									\
	drmacct_kunit_run(test, #name);					\
}

DRMACCT_KUNIT_CASE_FN(writers_race_readers)
DRMACCT_KUNIT_CASE_FN(hard_irq_context)
DRMACCT_KUNIT_CASE_FN(create_rejects_bad_descriptors)
DRMACCT_KUNIT_CASE_FN(engine_flags_choose_keys)
DRMACCT_KUNIT_CASE_FN(mem_keys_choose_keys)
DRMACCT_KUNIT_CASE_FN(reset_charges_and_restarts)
DRMACCT_KUNIT_CASE_FN(destroy_detaches_callbacks)
DRMACCT_KUNIT_CASE_FN(device_ids_grow)

static struct kunit_case drmacct_kunit_cases[] = {
	/* one second at least: the writers and the reader race that long */
	DRMACCT_KUNIT_CASE_SLOW(writers_race_readers),
	/* as long: hard interrupts race the writer threads */
	DRMACCT_KUNIT_CASE_SLOW(hard_irq_context),
	KUNIT_CASE(create_rejects_bad_descriptors),
	KUNIT_CASE(engine_flags_choose_keys),
	KUNIT_CASE(mem_keys_choose_keys),
	KUNIT_CASE(reset_charges_and_restarts),
	KUNIT_CASE(destroy_detaches_callbacks),
	KUNIT_CASE(device_ids_grow),
	{}
};

/*
 * The suite and the shared cases agree: every case that does not WARN is a
 * KUnit case, and none that does. A case added to drmacct_test_cases.c
 * and forgotten here fails the suite, naming it. Checked on the array
 * above, not on @suite's cases: KUnit's filters (kunit.filter_glob) run a
 * copy of the suite with only the cases they chose.
 */
static int drmacct_kunit_suite_init(struct kunit_suite *suite)
{
	const struct drmacct_test_case *tc;
	const struct kunit_case *kc;
	unsigned int i;
	int ret = 0;

	for (i = 0; (tc = drmacct_test_case_get(i)); i++) {
		bool listed = false;

		for (kc = drmacct_kunit_cases; kc->run_case; kc++)
			listed |= !strcmp(kc->name, tc->name);
		if (listed == !(tc->flags & DRMACCT_TEST_WARNS))
			continue;
		kunit_err(suite, "case %s %s", tc->name,
			  listed ? "WARNs by design: not for KUnit" : "is not in the suite");
		ret = -EINVAL;
	}
	return ret;
}

static struct kunit_suite drmacct_kunit_suite = {
	.name = "drmacct_test",
	.suite_init = drmacct_kunit_suite_init,
	.test_cases = drmacct_kunit_cases,
};

kunit_test_suite(drmacct_kunit_suite);

MODULE_DESCRIPTION("drmacct_kunit: the drmacct helper's in-kernel checks as the KUnit suite drmacct_test");
MODULE_LICENSE("GPL");
