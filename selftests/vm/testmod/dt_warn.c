// SPDX-License-Identifier: GPL-2.0
/*
 * dt_warn - a module that triggers one kernel WARNING when loaded with
 * trigger=1. It exists only so that the VM runner's own tests can prove that
 * a WARNING in the guest fails the run and that the offending lines are shown.
 * It is never loaded by the normal test or demo runs.
 */
#include <linux/bug.h>
#include <linux/module.h>

static bool trigger;
module_param(trigger, bool, 0444);
MODULE_PARM_DESC(trigger, "emit one WARNING at load time (default: false)");

static int __init dt_warn_init(void)
{
	WARN(trigger, "dt_warn: deliberate warning for the runner self-test\n");
	return 0;
}

static void __exit dt_warn_exit(void)
{
}

module_init(dt_warn_init);
module_exit(dt_warn_exit);

MODULE_DESCRIPTION("drmacct VM runner self-test: deliberate WARNING");
MODULE_LICENSE("GPL");
