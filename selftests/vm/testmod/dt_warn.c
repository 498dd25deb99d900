// SPDX-License-Identifier: GPL-2.0
/*
 * dt_warn - a module that misbehaves on request, for the VM runner's own
 * tests: trigger=1 emits one kernel WARNING at load time (the run must fail
 * and show the lines); writing 1 to its freeze parameter freezes the guest,
 * every CPU spinning with interrupts off, where no soft-lockup or RCU-stall
 * report can come (the run must time out and its hang report must name
 * dt_warn_freeze_cpu on every vCPU). On the debug kernel: lockorder=1 takes
 * two mutexes in one order and then in the other (lockdep must report a
 * possible circular locking dependency), leak=1 allocates and drops a few
 * buffers (kmemleak must report them as unreferenced objects). It is never
 * loaded by the normal test or demo runs.
 */
#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>

static bool trigger;
module_param(trigger, bool, 0444);
MODULE_PARM_DESC(trigger, "emit one WARNING at load time (default: false)");

static bool lockorder;
module_param(lockorder, bool, 0444);
MODULE_PARM_DESC(lockorder, "take two mutexes in both orders at load time (default: false)");

static bool leak;
module_param(leak, bool, 0444);
MODULE_PARM_DESC(leak, "allocate buffers at load time and drop them (default: false)");

static DEFINE_MUTEX(dt_warn_lock_a);
static DEFINE_MUTEX(dt_warn_lock_b);

/* A then B, then B then A: one thread, so no deadlock, but lockdep sees the cycle. */
static void dt_warn_lock_both_orders(void)
{
	mutex_lock(&dt_warn_lock_a);
	mutex_lock(&dt_warn_lock_b);
	mutex_unlock(&dt_warn_lock_b);
	mutex_unlock(&dt_warn_lock_a);

	mutex_lock(&dt_warn_lock_b);
	mutex_lock(&dt_warn_lock_a);
	mutex_unlock(&dt_warn_lock_a);
	mutex_unlock(&dt_warn_lock_b);
}

/*
 * Four buffers whose pointers are dropped. A copy of the last one may
 * linger in a register or on a stack for a while; the others have none.
 */
static noinline void dt_warn_leak(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		void *p = kmalloc(96, GFP_KERNEL);

		if (p)
			memset(p, 0x5a, 96);
	}
}

/* Spins for ever; called with interrupts off. Not inlined: a named RIP. */
static noinline void dt_warn_freeze_cpu(void *unused)
{
	static atomic_t frozen = ATOMIC_INIT(0);

	atomic_inc(&frozen);
	for (;;)
		cpu_relax();
}

static int dt_warn_freeze_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (!on)
		return 0;
	/* Every other CPU in an IPI, then this one: all with irqs off. */
	smp_call_function(dt_warn_freeze_cpu, NULL, 0);
	local_irq_disable();
	dt_warn_freeze_cpu(NULL);
	return 0;
}

static const struct kernel_param_ops dt_warn_freeze_ops = {
	.set = dt_warn_freeze_set,
};
module_param_cb(freeze, &dt_warn_freeze_ops, NULL, 0200);
MODULE_PARM_DESC(freeze, "writing 1 freezes every CPU with interrupts off");

static int __init dt_warn_init(void)
{
	WARN(trigger, "dt_warn: deliberate warning for the runner self-test\n");
	if (lockorder)
		dt_warn_lock_both_orders();
	if (leak)
		dt_warn_leak();
	return 0;
}

static void __exit dt_warn_exit(void)
{
}

module_init(dt_warn_init);
module_exit(dt_warn_exit);

MODULE_DESCRIPTION("drmacct VM runner self-test: deliberate WARNING, freeze, lock inversion or leak");
MODULE_LICENSE("GPL");
