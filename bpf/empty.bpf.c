// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * empty — one program that does nothing on every tracepoint bpf/drmacct/
 * uses, tp_btf and plain, for `make bench` (selftests/bpf/bench_bpf.c): it
 * runs beside drmacct's programs on the same events, and the kernel's
 * run_time_ns/run_cnt of each gives the floor a program on that event
 * cannot go below (the attach point's own cost and the stats' timing).
 * Each program's section names its tracepoint, as in bpf/drmacct/; the
 * bench loads those whose section one of drmacct's loaded programs has
 * (the gpu_scheduler events of 6.1 and of 6.17 never both exist).
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EMPTY_BTF(name, tp)						\
	SEC("tp_btf/" tp)						\
	int name(void *ctx)						\
	{								\
		return 0;						\
	}

#define EMPTY_TP(name, sys, tp)						\
	SEC("tracepoint/" sys "/" tp)					\
	int name(void *ctx)						\
	{								\
		return 0;						\
	}

EMPTY_BTF(e_btf_client_open, "drmacct_client_open")
EMPTY_BTF(e_btf_client_close, "drmacct_client_close")
EMPTY_BTF(e_btf_job_begin, "drmacct_job_begin")
EMPTY_BTF(e_btf_job_end, "drmacct_job_end")
EMPTY_BTF(e_btf_mem_change, "drmacct_mem_change")
EMPTY_BTF(e_btf_sched_job, "drm_sched_job")
EMPTY_BTF(e_btf_run_job, "drm_run_job")
EMPTY_BTF(e_btf_process_job, "drm_sched_process_job")
EMPTY_BTF(e_btf_job_queue, "drm_sched_job_queue")
EMPTY_BTF(e_btf_job_run, "drm_sched_job_run")
EMPTY_BTF(e_btf_job_done, "drm_sched_job_done")
EMPTY_BTF(e_btf_fork, "sched_process_fork")
EMPTY_BTF(e_btf_exit, "sched_process_exit")

EMPTY_TP(e_tp_client_open, "drmacct", "drmacct_client_open")
EMPTY_TP(e_tp_client_close, "drmacct", "drmacct_client_close")
EMPTY_TP(e_tp_job_begin, "drmacct", "drmacct_job_begin")
EMPTY_TP(e_tp_job_end, "drmacct", "drmacct_job_end")
EMPTY_TP(e_tp_mem_change, "drmacct", "drmacct_mem_change")
EMPTY_TP(e_tp_sched_job, "gpu_scheduler", "drm_sched_job")
EMPTY_TP(e_tp_run_job, "gpu_scheduler", "drm_run_job")
EMPTY_TP(e_tp_process_job, "gpu_scheduler", "drm_sched_process_job")
EMPTY_TP(e_tp_job_queue, "gpu_scheduler", "drm_sched_job_queue")
EMPTY_TP(e_tp_job_run, "gpu_scheduler", "drm_sched_job_run")
EMPTY_TP(e_tp_job_done, "gpu_scheduler", "drm_sched_job_done")
