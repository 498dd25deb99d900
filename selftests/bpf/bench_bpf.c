// SPDX-License-Identifier: GPL-2.0
/*
 * bench_bpf — per-event cost of drmacct's BPF programs (guest program for
 * `make bench`).
 *
 * 1. drmacct_bench.ko's in-kernel loop (job init/begin/end/fini: two
 *    drmacct tracepoints per job) with no program attached, then with the
 *    tp_btf programs, then with the plain tracepoint programs: ns per job
 *    each way; the difference is what the programs (and, for plain
 *    tracepoints, building the trace record) add per job.
 * 2. The kernel's own view of every program: run_time_ns / run_cnt from
 *    BPF statistics (bpf_enable_stats(BPF_STATS_RUN_TIME)) after a simgpu
 *    workload that fires every tracepoint: client open/close, job
 *    begin/end, memory changes and the three gpu_scheduler events --
 *    beside an empty program on the same tracepoint (bpf/empty.bpf.c),
 *    attached in the same run, whose cost is the floor: each program's
 *    ns per run, the empty one's, and their ratio.
 * 3. The building blocks of the job programs alone (bpf/parts.bpf.c: a
 *    hash lookup, four locked adds, ...), each on drmacct_job_begin beside
 *    the empty program, over the same in-kernel loop: what each costs
 *    here, so what a design made of them can reach.
 * 4. How much work each program is for this kernel's verifier: verified
 *    instructions per program (dac_bpf_verify()), so growth shows between
 *    runs and kernels.
 *
 * usage: bench_bpf [JOBS]   (in-kernel loop iterations, default 200000)
 * Exit 0 ok, 1 error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "../../bpf/drmacct_bpf.h"	/* the parts' usage values (parts.skel.h) */
#include "dtest.h"
#include "empty.skel.h"
#include "parts.skel.h"
#include "sgtest.h"

#define RUN "/sys/kernel/debug/drmacct_bench/run"

/* ns per job of the helper's whole per-job loop, or < 0 on error. */
static double helper_loop(unsigned long long n)
{
	char num[32], *res;
	const char *p;
	double job;
	unsigned long long it;

	snprintf(num, sizeof(num), "%llu", n);
	if (sg_write_file(RUN, num))
		return -1;
	res = sg_read_file(RUN, NULL);
	if (!res)
		return -1;
	p = strstr(res, " job_ns=");
	if (sscanf(res, "iterations=%llu", &it) != 1 || !p || sscanf(p + 8, "%lf", &job) != 1) {
		free(res);
		return -1;
	}
	free(res);
	return job;
}

/* A workload that fires every tracepoint the programs use. */
static int workload(unsigned int clients, unsigned int jobs)
{
	char node[64];

	if (sg_find_node(node, sizeof(node)))
		return -1;
	for (unsigned int c = 0; c < clients; c++) {
		struct drm_simgpu_gem_create g = { .size = 1 << 16 };
		struct drm_simgpu_submit s = { .op = SIMGPU_OP_BUSY, .busy_ns = 1000,
					       .instance = SIMGPU_INSTANCE_ANY };
		struct drm_simgpu_wait w = { .timeout_ns = 10 * NSEC_PER_SEC };
		struct drm_gem_close gc = { 0 };
		int fd = open(node, O_RDWR | O_CLOEXEC);

		if (fd < 0)
			return -1;
		if (ioctl(fd, DRM_IOCTL_SIMGPU_GEM_CREATE, &g) == 0) {
			gc.handle = g.handle;
			ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc);
		}
		for (unsigned int j = 0; j < jobs; j++) {
			s.job_id = 0;
			if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, &s)) {
				close(fd);
				return -1;
			}
			/* WAIT writes its outputs back (run_ns too): a fresh one each time. */
			w = (struct drm_simgpu_wait){ .job_id = s.job_id,
						      .timeout_ns = 10 * NSEC_PER_SEC };
			if (ioctl(fd, DRM_IOCTL_SIMGPU_WAIT, &w)) {
				close(fd);
				return -1;
			}
		}
		close(fd);
	}
	return 0;
}

/* Is @sec the section of one of @b's loaded programs (@ps, @np: its list)? */
static bool section_loaded(struct dac_bpf *b, const struct dac_bpf_prog_stats *ps, size_t np,
			   const char *sec)
{
	for (size_t i = 0; i < np; i++) {
		const char *s = NULL;

		if (dac_bpf_prog_state(b, ps[i].name, &s) == 2 && s && !strcmp(s, sec))
			return true;
	}
	return false;
}

/*
 * The empty programs on the tracepoints @b's loaded programs use (the same
 * section: tp_btf or plain, 6.1's or 6.17's scheduler events), loaded and
 * attached; NULL with errno set on failure.
 */
static struct empty_bpf *empty_attach(struct dac_bpf *b)
{
	struct dac_bpf_prog_stats *ps = NULL;
	struct dac_bpf_info info;
	struct empty_bpf *e;
	struct bpf_program *p;
	size_t np = 0;
	int err = dac_bpf_read_prog_stats(b, &ps, &np);

	if (err) {
		errno = -err;
		return NULL;
	}
	e = empty_bpf__open();
	if (!e) {
		free(ps);
		return NULL;
	}
	if (dac_bpf_info(b, &info)) {
		free(ps);
		empty_bpf__destroy(e);
		errno = EINVAL;
		return NULL;
	}
	bpf_object__for_each_program(p, e->obj)
		bpf_program__set_autoload(p, section_loaded(b, ps, np,
							    bpf_program__section_name(p)));
	free(ps);
	/*
	 * drmacct's tp_btf scheduler programs name the 6.17 events and are
	 * attached to 6.1's names before 6.17: the same here.
	 */
	dac_bpf_sched_retarget(e->obj, info.sched_617 ? DAC_SCHED_SET_617 : DAC_SCHED_SET_61);
	if (empty_bpf__load(e) || empty_bpf__attach(e)) {
		err = errno;
		empty_bpf__destroy(e);
		errno = err;
		return NULL;
	}
	return e;
}

/* ns per run of program @p over the stats window; < 0 when it never ran. */
static double prog_cost(const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_program__fd(p) < 0 || bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len) ||
	    !info.run_cnt)
		return -1;
	return (double)info.run_time_ns / info.run_cnt;
}

/* ns per run of the empty program on section @sec; < 0 when none ran. */
static double empty_cost(struct empty_bpf *e, const char *sec)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, e->obj) {
		double ns;

		if (strcmp(bpf_program__section_name(p), sec))
			continue;
		ns = prog_cost(p);
		if (ns >= 0)
			return ns;
	}
	return -1;
}

static int measure(const char *label, enum dac_bpf_attach attach, unsigned long long n,
		   double base)
{
	struct empty_bpf *empty;
	struct dac_bpf_load_opts o = { .attach = attach };
	struct dac_bpf_prog_stats *ps = NULL;
	struct dac_bpf *b = NULL;
	double with;
	size_t np = 0;
	int sfd, err;

	err = dac_bpf_load(&o, &b);
	if (err) {
		fprintf(stderr, "bench_bpf: load (%s): %s\n", label, dac_bpf_load_strerror(err));
		return -1;
	}
	with = helper_loop(n);
	if (with < 0) {
		fprintf(stderr, "bench_bpf: helper loop failed\n");
		dac_bpf_close(b);
		return -1;
	}
	printf("bench_bpf: %-10s helper loop %8.1f ns/job, +%.1f ns/job over no program "
	       "(2 events/job: +%.1f ns/event)\n", label, with, with - base, (with - base) / 2);

	/* Per-program costs, counted only while the stats fd is open. */
	empty = empty_attach(b);
	if (!empty) {
		fprintf(stderr, "bench_bpf: the empty programs did not load: %s\n", strerror(errno));
		dac_bpf_close(b);
		return -1;
	}
	sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (sfd < 0) {
		fprintf(stderr, "bench_bpf: bpf_enable_stats: %s\n", strerror(errno));
		dac_bpf_close(b);
		return -1;
	}
	if (helper_loop(n / 4 ? n / 4 : 1) < 0 || workload(50, 40)) {
		fprintf(stderr, "bench_bpf: workload failed\n");
		close(sfd);
		empty_bpf__destroy(empty);
		dac_bpf_close(b);
		return -1;
	}
	close(sfd);
	err = dac_bpf_read_prog_stats(b, &ps, &np);
	if (err) {
		fprintf(stderr, "bench_bpf: program stats: %s\n", strerror(-err));
		empty_bpf__destroy(empty);
		dac_bpf_close(b);
		return -1;
	}
	for (size_t i = 0; i < np; i++) {
		double ns = ps[i].run_cnt ? (double)ps[i].run_time_ns / ps[i].run_cnt : 0.0;
		const char *sec = NULL;
		double floor = dac_bpf_prog_state(b, ps[i].name, &sec) == 2 && sec ?
			       empty_cost(empty, sec) : -1;

		printf("bench_bpf: %-10s prog %-18s run_cnt=%-8" PRIu64
		       " run_time_ns/run_cnt=%.1f", label, ps[i].name, ps[i].run_cnt, ns);
		if (floor > 0)
			printf(" empty=%.1f ratio=%.2f", floor, ns / floor);
		printf("\n");
	}
	free(ps);
	empty_bpf__destroy(empty);
	dac_bpf_close(b);
	return 0;
}

/*
 * The parts (bpf/parts.bpf.c), all on drmacct_job_begin with the empty
 * program and nothing else, over @n jobs of the in-kernel loop: each
 * one's ns per run, the empty one's, their ratio.
 */
static int parts_report(unsigned long long n)
{
	struct parts_bpf *parts = parts_bpf__open_and_load();
	struct empty_bpf *empty = empty_bpf__open();
	struct bpf_program *p, *floor = NULL;
	int sfd = -1, ret = 1;
	double e;

	if (!parts || !empty) {
		fprintf(stderr, "bench_bpf: parts: open: %s\n", strerror(errno));
		goto out;
	}
	bpf_object__for_each_program(p, empty->obj) {
		bool mine = !strcmp(bpf_program__name(p), "e_btf_job_begin");

		bpf_program__set_autoload(p, mine);
		if (mine)
			floor = p;
	}
	if (!floor || empty_bpf__load(empty) || empty_bpf__attach(empty) ||
	    parts_bpf__attach(parts)) {
		fprintf(stderr, "bench_bpf: parts: load/attach: %s\n", strerror(errno));
		goto out;
	}
	sfd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (sfd < 0) {
		fprintf(stderr, "bench_bpf: bpf_enable_stats: %s\n", strerror(errno));
		goto out;
	}
	if (helper_loop(n) < 0) {
		fprintf(stderr, "bench_bpf: helper loop failed\n");
		goto out;
	}
	close(sfd);
	sfd = -1;
	e = prog_cost(floor);
	if (e <= 0) {
		fprintf(stderr, "bench_bpf: parts: the empty program never ran\n");
		goto out;
	}
	ret = 0;
	bpf_object__for_each_program(p, parts->obj) {
		double ns = prog_cost(p);

		if (ns < 0) {
			fprintf(stderr, "bench_bpf: parts: %s never ran\n", bpf_program__name(p));
			ret = 1;
			continue;
		}
		printf("bench_bpf: parts      prog %-18s run_time_ns/run_cnt=%.1f empty=%.1f "
		       "ratio=%.2f\n", bpf_program__name(p), ns, e, ns / e);
	}
out:
	if (sfd >= 0)
		close(sfd);
	empty_bpf__destroy(empty);
	parts_bpf__destroy(parts);
	return ret;
}

/* The verifier's work per program on this kernel. */
static int verifier_report(void)
{
	struct dac_bpf_verdict *v = NULL;
	size_t n = 0;
	int err = dac_bpf_verify(&v, &n), ret = 0;

	if (err) {
		fprintf(stderr, "bench_bpf: verify: %s\n", strerror(-err));
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].status == DAC_BPF_NOT_HERE)
			continue;
		if (v[i].status < 0) {
			printf("bench_bpf: verifier  prog %-18s REFUSED (%s)\n", v[i].name,
			       strerror(-v[i].status));
			ret = 1;
			continue;
		}
		printf("bench_bpf: verifier  prog %-18s insns=%-5u verified_insns=%u\n",
		       v[i].name, v[i].insns, v[i].verified_insns);
	}
	free(v);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned long long n = 200000;
	double base;
	int ret = 0;

	if (argc > 1) {
		char *end;

		n = strtoull(argv[1], &end, 10);
		if (*end || !n || n > 100000000ull) {
			fprintf(stderr, "usage: bench_bpf [JOBS 1..100000000]\n");
			return 1;
		}
	}
	if (access(RUN, W_OK) && sg_sh("modprobe drmacct_bench")) {
		fprintf(stderr, "bench_bpf: modprobe drmacct_bench failed\n");
		return 1;
	}
	base = helper_loop(n);
	if (base < 0) {
		fprintf(stderr, "bench_bpf: helper loop failed\n");
		return 1;
	}
	printf("bench_bpf: iterations=%llu\n", n);
	printf("bench_bpf: %-10s helper loop %8.1f ns/job (tracepoints compiled in, nothing "
	       "attached)\n", "none", base);
	if (measure("tp_btf", DAC_BPF_ATTACH_BTF, n, base) ||
	    measure("tracepoint", DAC_BPF_ATTACH_TRACEPOINT, n, base) ||
	    parts_report(n / 4 ? n / 4 : 1))
		ret = 1;
	if (verifier_report())
		ret = 1;
	sg_sh("rmmod drmacct_bench 2>/dev/null");
	return ret;
}
