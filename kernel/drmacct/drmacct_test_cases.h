/* SPDX-License-Identifier: GPL-2.0 */
/*
 * drmacct_test_cases.h — the in-kernel cases of the helper's API
 * (drmacct_test_cases.ko), and what a runner gives them.
 *
 * The cases do not know who runs them. Two thin runners do:
 * drmacct_test.ko (debugfs drmacct_test/run, every kernel) and
 * drmacct_kunit.ko (the KUnit suite drmacct_test, only for kernels built
 * with CONFIG_KUNIT). A case reports each failure through its context, and
 * the runner turns it into a "FAIL:" line or a KUnit failure.
 */
#ifndef _DRMACCT_TEST_CASES_H_
#define _DRMACCT_TEST_CASES_H_

#include <linux/bits.h>
#include <linux/printk.h>
#include <linux/types.h>

struct drmacct_test_case;
struct drmacct_test_ctx;

/**
 * struct drmacct_test_ops - how a runner hears from a running case
 * @fail: one failure of the case; @vaf is its message (no trailing newline,
 *	possibly several lines). Called in the thread that runs the case.
 * @info: one line of information that is not a failure (e.g. how many
 *	rounds a race ran). Same context as @fail.
 */
struct drmacct_test_ops {
	void (*fail)(struct drmacct_test_ctx *ctx, struct va_format *vaf);
	void (*info)(struct drmacct_test_ctx *ctx, struct va_format *vaf);
};

/**
 * struct drmacct_test_ctx - what a case runs with
 * @ops: the runner's callbacks
 * @priv: the runner's own (the struct kunit of the KUnit runner)
 * @tc: the case running, set by drmacct_test_case_run()
 * @failures: failures the case reported, counted by drmacct_test_case_run()
 *	from zero
 */
struct drmacct_test_ctx {
	const struct drmacct_test_ops *ops;
	void *priv;
	const struct drmacct_test_case *tc;
	unsigned int failures;
};

/*
 * The case WARNs by design (capacity_warn: more of a client's jobs running
 * than the engine's capacity). A runner that wants a clean kernel log, as
 * KUnit does, leaves it out.
 */
#define DRMACCT_TEST_WARNS	BIT(0)

/**
 * struct drmacct_test_case - one case
 * @name: its name, as the runners know it
 * @run: runs it; reports failures through drmacct_test_ctx.ops
 * @flags: DRMACCT_TEST_*
 */
struct drmacct_test_case {
	const char *name;
	void (*run)(struct drmacct_test_ctx *ctx);
	unsigned int flags;
};

const struct drmacct_test_case *drmacct_test_case_find(const char *name);
const struct drmacct_test_case *drmacct_test_case_get(unsigned int i);
unsigned int drmacct_test_case_run(const struct drmacct_test_case *tc,
				   struct drmacct_test_ctx *ctx);

#endif /* _DRMACCT_TEST_CASES_H_ */
