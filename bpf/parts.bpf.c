// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * parts — the building blocks of drmacct's job programs, each alone on
 * drmacct_job_begin, for `make bench` (selftests/bpf/bench_bpf.c). Each
 * program's run time next to the empty program's on the same event
 * (bpf/empty.bpf.c) says what one block costs on this kernel: what any
 * design made of them cannot go below, and what replacing one block by
 * another would save. They compute nothing anyone reads.
 *
 * pt_ktime    bpf_ktime_get_ns()
 * pt_nest     a per-CPU array lookup and a store (nest_mark())
 * pt_lock4    four locked adds to one global (hb_begin's four atomics)
 * pt_plain4   four plain adds to one global
 * pt_hash     a hash lookup of the (client, engine) key, the entry made
 *             when absent (usage_of() on an existing entry)
 * pt_pcpu     the same in a per-CPU hash
 * pt_h_lock4  pt_hash and pt_lock4 on the entry found (hb_begin's work,
 *             without its nest mark)
 * pt_pc_seq   pt_pcpu, then on this CPU's value two plain adds between
 *             two locked ones (a per-CPU value a reader checks by its
 *             write counts, ordered on every architecture)
 * pt_a_lock4  an array element by index (a lookup the JIT inlines: what
 *             a small per-client slot number from the kernel would allow
 *             instead of the hash) and pt_lock4 on it
 */
#include "kernel_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "drmacct_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#ifndef BPF_F_NO_PREALLOC
#define BPF_F_NO_PREALLOC	(1U << 0)
#endif
#ifndef BPF_NOEXIST
#define BPF_NOEXIST		1
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dac_usage_key);
	__type(value, struct dac_usage_val);
} pt_h SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct dac_usage_key);
	__type(value, struct dac_usage_val);
} pt_pch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct dac_usage_val);
} pt_arr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u32);
} pt_mark SEC(".maps");

/* What the programs without a map write: a usage value of no client. */
struct dac_usage_val pt_sink;

/* The usage entry of (@client_id, @engine) in @map, made when absent. */
static __always_inline struct dac_usage_val *pt_entry(void *map, __u64 client_id,
						      __u32 engine)
{
	struct dac_usage_key k = { .client_id = client_id, .engine = engine };
	struct dac_usage_val zero = {}, *v;

	v = bpf_map_lookup_elem(map, &k);
	if (v)
		return v;
	bpf_map_update_elem(map, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &k);
}

/* hb_begin's four locked adds (on_job_begin()), on @u */
static __always_inline void lock4(struct dac_usage_val *u, __u64 ts_ns)
{
	__sync_fetch_and_add(&u->wr_begun, 1);
	__sync_fetch_and_add(&u->start_sum, ts_ns);
	__sync_fetch_and_add(&u->running, 1);
	__sync_fetch_and_add(&u->wr_done, 1);
}

/* Read one field of @u, so that the lookup is not optimised away. */
static __always_inline void touch(const struct dac_usage_val *u)
{
	if (u)
		pt_sink.busy_ns = u->busy_ns;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_ktime, u64 client_id, u32 engine, u64 ts_ns)
{
	pt_sink.busy_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_nest, u64 client_id, u32 engine)
{
	__u32 which = 1, *m = bpf_map_lookup_elem(&pt_mark, &which);

	if (m)
		*(volatile __u32 *)m = 1;
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_lock4, u64 client_id, u32 engine, u64 ts_ns)
{
	lock4(&pt_sink, ts_ns);
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_plain4, u64 client_id, u32 engine, u64 ts_ns)
{
	volatile struct dac_usage_val *s = &pt_sink;

	s->wr_begun += 1;
	s->start_sum += ts_ns;
	s->running += 1;
	s->wr_done += 1;
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_hash, u64 client_id, u32 engine)
{
	touch(pt_entry(&pt_h, client_id, engine));
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_pcpu, u64 client_id, u32 engine)
{
	touch(pt_entry(&pt_pch, client_id, engine));
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_h_lock4, u64 client_id, u32 engine, u64 ts_ns)
{
	struct dac_usage_val *v = pt_entry(&pt_h, client_id, engine);

	if (v)
		lock4(v, ts_ns);
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_pc_seq, u64 client_id, u32 engine, u64 ts_ns)
{
	struct dac_usage_val *v = pt_entry(&pt_pch, client_id, engine);
	volatile struct dac_usage_val *w = v;

	if (!v)
		return 0;
	__sync_fetch_and_add(&v->wr_begun, 1);
	w->start_sum += ts_ns;
	w->running += 1;
	__sync_fetch_and_add(&v->wr_done, 1);
	return 0;
}

SEC("tp_btf/drmacct_job_begin")
int BPF_PROG(pt_a_lock4, u64 client_id, u32 engine, u64 ts_ns)
{
	__u32 slot = (__u32)(client_id * 64 + engine) & 4095;
	struct dac_usage_val *v = bpf_map_lookup_elem(&pt_arr, &slot);

	if (v)
		lock4(v, ts_ns);
	return 0;
}
