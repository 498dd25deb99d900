// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attach_probe — proves the BPF build and attach chain end to end: CO-RE
 * object from vmlinux.h, tp_btf on the distribution's gpu_sched module
 * tracepoints (module BTF shipped by Debian) and on drmacct's own
 * tracepoints (module BTF added to our .ko by pahole at build time).
 *
 * It counts events and sums the busy time drmacct reports at job end, per
 * client, so a test can compare both against the jobs it submitted.
 *
 * The scheduler events exist under two sets of names: up to 6.16
 * drm_sched_job, drm_run_job, drm_sched_process_job; from 6.17
 * drm_sched_job_queue, drm_sched_job_run, drm_sched_job_done. Both sets
 * are here; the test loads the one its kernel has (bpf_program__set_autoload()).
 * On the 6.17 set the queue program also counts jobs per DRM client id,
 * read from the job's scheduler fence (drm_sched_fence.drm_client_id, the
 * field the event itself records).
 */
#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The scheduler's types live in gpu_sched's module BTF, not in vmlinux.h;
 * this program only counts, so opaque declarations are enough.
 */
struct drm_sched_job;
struct drm_sched_entity;
struct drm_sched_fence;

/* 6.17 set: the one field read, relocated against gpu_sched's BTF. */
struct drm_sched_fence___probe {
	__u64 drm_client_id;
} __attribute__((preserve_access_index));

struct drm_sched_job___probe {
	struct drm_sched_fence___probe *s_fence;
} __attribute__((preserve_access_index));

enum {
	PROBE_SCHED_QUEUE,	/* gpu_scheduler:drm_sched_job, 6.17: drm_sched_job_queue */
	PROBE_SCHED_RUN,	/* gpu_scheduler:drm_run_job, 6.17: drm_sched_job_run */
	PROBE_SCHED_DONE,	/* gpu_scheduler:drm_sched_process_job, 6.17: drm_sched_job_done */
	PROBE_ACCT_BEGIN,	/* drmacct:drmacct_job_begin */
	PROBE_ACCT_END,		/* drmacct:drmacct_job_end */
	PROBE_NR,
};

/* Only count events of this process (set before attach; 0 = all). */
const volatile __u32 filter_tgid;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROBE_NR);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct busy {
	__u64 jobs;
	__u64 busy_ns;
	__u64 cycles;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);		/* drmacct client id */
	__type(value, struct busy);
} per_client SEC(".maps");

/* 6.17 set: jobs queued per DRM client id (the fence's drm_client_id). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u64);
} queued_by_client SEC(".maps");

static __always_inline bool mine(void)
{
	return !filter_tgid || (bpf_get_current_pid_tgid() >> 32) == filter_tgid;
}

static __always_inline void bump(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &which);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/*
 * The scheduler events fire from the submitting task (queue) and from the
 * scheduler's own threads (run, done), so only the queue event can be
 * filtered by process; the test makes sure nobody else submits meanwhile.
 */
SEC("tp_btf/drm_sched_job")
int BPF_PROG(on_sched_job, struct drm_sched_job *job, struct drm_sched_entity *entity)
{
	if (mine())
		bump(PROBE_SCHED_QUEUE);
	return 0;
}

SEC("tp_btf/drm_run_job")
int BPF_PROG(on_run_job, struct drm_sched_job *job, struct drm_sched_entity *entity)
{
	bump(PROBE_SCHED_RUN);
	return 0;
}

SEC("tp_btf/drm_sched_process_job")
int BPF_PROG(on_process_job, struct drm_sched_fence *fence)
{
	bump(PROBE_SCHED_DONE);
	return 0;
}

SEC("tp_btf/drm_sched_job_queue")
int BPF_PROG(on_job_queue, struct drm_sched_job___probe *job, struct drm_sched_entity *entity)
{
	__u64 one = 1, id, *n;

	if (!mine())
		return 0;
	bump(PROBE_SCHED_QUEUE);
	if (!job || !bpf_core_field_exists(job->s_fence->drm_client_id))
		return 0;
	id = BPF_CORE_READ(job, s_fence, drm_client_id);
	n = bpf_map_lookup_elem(&queued_by_client, &id);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&queued_by_client, &id, &one, BPF_NOEXIST);
	return 0;
}

SEC("tp_btf/drm_sched_job_run")
int BPF_PROG(on_job_run, struct drm_sched_job *job, struct drm_sched_entity *entity)
{
	bump(PROBE_SCHED_RUN);
	return 0;
}

SEC("tp_btf/drm_sched_job_done")
int BPF_PROG(on_job_done, struct drm_sched_fence *fence)
{
	bump(PROBE_SCHED_DONE);
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(on_acct_begin, u64 client_id, u32 engine, u64 ts_ns, u32 running)
{
	bump(PROBE_ACCT_BEGIN);
	return 0;
}

SEC("tp_btf/drmacct_job_end")
int BPF_PROG(on_acct_end, u64 client_id, u32 engine, u64 ts_ns, u64 busy_ns,
	     u64 cycles, u32 running)
{
	struct busy zero = {}, *b;

	bump(PROBE_ACCT_END);
	b = bpf_map_lookup_elem(&per_client, &client_id);
	if (!b) {
		bpf_map_update_elem(&per_client, &client_id, &zero, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&per_client, &client_id);
		if (!b)
			return 0;
	}
	__sync_fetch_and_add(&b->jobs, 1);
	__sync_fetch_and_add(&b->busy_ns, busy_ns);
	__sync_fetch_and_add(&b->cycles, cycles);
	return 0;
}
