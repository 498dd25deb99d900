/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * kernel_types.h - the kernel types drmacct's BPF programs touch.
 *
 * The programs are CO-RE: libbpf relocates every field access of a
 * preserve_access_index type against the BTF of the kernel they load on, so
 * a declaration needs only the fields used, under their kernel names. With
 * these declarations the object builds without any kernel image, for any
 * architecture, and one object serves every kernel. Types of the DRM
 * scheduler are declared in the program itself, as "flavours" (___dac)
 * that CO-RE matches by name against gpu_sched's module BTF.
 *
 * Built with -DDAC_VMLINUX_H (and a vmlinux.h dumped from a kernel's BTF
 * on the include path) the programs take the kernel's full types instead:
 * the Makefile does that for every target kernel, as a check.
 */
#ifndef DAC_KERNEL_TYPES_H
#define DAC_KERNEL_TYPES_H

#ifdef DAC_VMLINUX_H
#include "vmlinux.h"
#else

#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

/*
 * The common head of every trace record (include/linux/trace_events.h).
 * Plain tracepoint programs read records at fixed offsets, which the loader
 * checks against the event's format file before it loads them; so this one
 * is not relocated.
 */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;		/* threads not yet exiting */
};

struct task_struct {
	unsigned int flags;	/* PF_* */
	int pid;
	int tgid;
	struct task_struct *group_leader;
	u64 start_time;		/* CLOCK_MONOTONIC ns at fork */
	char comm[16];
	struct signal_struct *signal;
	void *worker_private;	/* kthreads: their struct kthread */
};

struct dma_fence {
	u64 context;
	u64 seqno;
};

#pragma clang attribute pop

#endif /* DAC_VMLINUX_H */
#endif /* DAC_KERNEL_TYPES_H */
