// SPDX-License-Identifier: GPL-2.0
/*
 * test_conformance.c - the conformance checks on hand-made fdinfo histories.
 *
 * One synthetic driver run (idle clients opened, dup'd, inherited, closed
 * and reopened; a workload client busy on a maxfreq engine, a capacity-2
 * engine and a total-cycles engine) passes every check. Each fault below
 * breaks one rule, the way simgpu's fault= parameter does in the VM, and
 * must fail exactly the check of that rule, with evidence.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "conformance.h"
#include "drm_client.h"
#include "dtest.h"
#include "json.h"
#include "json_dom.h"

#define MS 1000000ull

/* One client's counters at one read. */
struct snap {
	uint64_t id;
	uint64_t t;		/* ns since start */
	uint64_t render, render_cycles;	/* maxfreq 1 GHz: 1 cycle per ns */
	uint64_t copy;			/* capacity 2 */
	uint64_t compute, compute_cycles, compute_total;
	uint64_t mem_total, mem_resident, mem_active, mem_shared, mem_purgeable;
	unsigned int k;			/* read number of the file */
};

static const char *fault;
/* The device's PCI address, when the run's device is a PCI one. */
static const char *pci_pdev;

/* Is @f one of the space-separated names in fault? */
static bool is(const char *f)
{
	size_t n = strlen(f);

	for (const char *p = fault; p && *p; p += strcspn(p, " "), p += strspn(p, " "))
		if (!strncmp(p, f, n) && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static char *text_of(const struct snap *s, bool idle)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);
	bool odd = s->k & 1;

	DT_ASSERT_TRUE(f != NULL);
	fprintf(f, "pos:\t0\nflags:\t02100002\n");
	fprintf(f, "drm-driver:\t%s\n", is("driver-changes") && odd ? "simgpu2" : "simgpu");
	if (is("wrong-pdev"))
		fprintf(f, "drm-pdev:\t0000:01:00.0\n");
	else if (pci_pdev && !is("no-pdev"))
		fprintf(f, "drm-pdev:\t%s\n", pci_pdev);
	fprintf(f, "drm-client-id:\t%" PRIu64 "\n", s->id);
	if (is("bad-format"))
		fprintf(f, "drm-engine-render %" PRIu64 " ns\n", s->render);
	if (is("unprefixed-key"))
		fprintf(f, "gpu-jobs:\t3\n");
	fprintf(f, "simgpu-jobs:\t3\n");	/* a driver-specific key, prefixed */
	fprintf(f, "drm-engine-render:\t%" PRIu64 " ns\n",
		s->render + (is("idle-busy") && idle ? (uint64_t)s->k * 1000 : 0));
	fprintf(f, "drm-cycles-render:\t%" PRIu64 "\n", s->render_cycles);
	fprintf(f, "drm-maxfreq-render:\t%" PRIu64 " Hz\n",
		(uint64_t)1000000000 + (is("changing-maxfreq") && odd ? 1000000 : 0));
	fprintf(f, "drm-engine-copy:\t%" PRIu64 " ns\n", s->copy);
	fprintf(f, "drm-engine-capacity-copy:\t%d\n", is("changing-capacity") && odd ? 3 : 2);
	fprintf(f, "drm-engine-compute:\t%" PRIu64 " ns\n", s->compute);
	fprintf(f, "drm-cycles-compute:\t%" PRIu64 "\n", s->compute_cycles);
	fprintf(f, "drm-total-cycles-compute:\t%" PRIu64 "\n", s->compute_total);
	if (is("gib-unit") && !s->mem_total)
		fprintf(f, "drm-total-system:\t0 GiB\n");
	else
		fprintf(f, "drm-total-system:\t%" PRIu64 " KiB\n", s->mem_total >> 10);
	fprintf(f, "drm-shared-system:\t%" PRIu64 "\n", s->mem_shared);
	fprintf(f, "drm-resident-system:\t%" PRIu64 "\n",
		s->mem_resident + (is("resident-over-total") ? 4096 : 0));
	if (!(is("vanishing-key") && odd))
		fprintf(f, "drm-purgeable-system:\t%" PRIu64 "\n", s->mem_purgeable);
	fprintf(f, "drm-active-system:\t%" PRIu64 "\n", s->mem_active);
	DT_ASSERT_EQ(fclose(f), 0);
	return t;
}

static void add(struct dac_conf *c, int file, const char *via, struct snap *s, bool idle)
{
	char *t = text_of(s, idle);

	DT_ASSERT_EQ(dac_conf_read(c, file, via, s->t, s->t + 20000, t, strlen(t)), 0);
	free(t);
	s->k++;
}

static void idle_snap(struct snap *s, uint64_t id, uint64_t t)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->t = t;
	s->compute_total = t;	/* the engine clock runs: 1 cycle per ns */
}

/* The synthetic run; @f is the fault or NULL. */
static struct dac_conf *run(const char *f)
{
	struct dac_conf *c = dac_conf_new();
	struct snap a, b, d, w;
	int fa, fb, fd, fw;
	uint64_t t = 0, busy_r = 0, busy_c = 0, busy_x = 0;

	fault = f;
	DT_ASSERT_TRUE(c != NULL);
	DT_ASSERT_EQ(dac_conf_set_device(c, "/dev/dri/renderD128", pci_pdev), 0);
	fa = dac_conf_file(c, "open #1", DAC_CONF_F_IDLE);
	DT_ASSERT_GE(fa, 0);
	idle_snap(&a, 1, t);
	add(c, fa, "fd 3", &a, true);
	a.t = t += MS;
	if (is("unstable-client-id"))
		a.id += 1ull << 32;
	add(c, fa, "dup fd 4", &a, true);
	a.id = 1;
	a.t = t += MS;
	add(c, fa, "fd 3 inherited by child 99", &a, true);

	fb = dac_conf_file(c, "open #2", DAC_CONF_F_IDLE);
	idle_snap(&b, is("shared-client-id") ? 1 : 2, t += MS);
	add(c, fb, "fd 5", &b, true);
	DT_ASSERT_EQ(dac_conf_close(c, fb), 0);
	fd = dac_conf_file(c, "open #3 (after closing open #2)", DAC_CONF_F_IDLE);
	idle_snap(&d, is("reused-client-id") ? 2 : is("shared-client-id") ? 1 : 3, t += MS);
	add(c, fd, "fd 5", &d, true);

	fw = dac_conf_file(c, "pid 42 (load) fd 3", DAC_CONF_F_WORKLOAD);
	DT_ASSERT_GE(fw, 0);
	memset(&w, 0, sizeof(w));
	w.id = 4;
	for (int i = 0; i < 21; i++) {
		uint64_t now = t + (uint64_t)i * 100 * MS;

		/*
		 * render 60 % busy, copy two jobs at once, compute 80 % (20 %
		 * with low-busy)
		 */
		if (i) {
			busy_r += 60 * MS;
			busy_x += 160 * MS;
			busy_c += (is("low-busy") ? 20 : 80) * MS;
		}
		w.t = now;
		w.render = is("no-busy") ? 0 : busy_r;
		w.render_cycles = is("no-busy") ? 0 : busy_r;
		/* at 1 GHz maxfreq: 30 % more cycles than time allows */
		if (is("maxfreq-cycles-ahead"))
			w.render_cycles += busy_r * 3 / 10;
		if (is("maxfreq-cycles-over") && i == 20)
			w.render_cycles += 1000000000000ull;
		w.copy = is("no-busy") ? 0 : busy_x;
		w.compute = is("no-busy") ? 0 : busy_c;
		w.compute_cycles = is("no-busy") ? 0 : busy_c;
		if (is("cycles-disagree"))
			w.compute_cycles /= 2;
		/* governor: busy periods at 3 cycles/ns, idle ones at 1 */
		if (is("governor") && !is("no-busy"))
			w.compute_cycles *= 3;
		if (is("cycles-over-total") && i == 20)
			w.compute_cycles += 1000000000000ull;
		if (is("counter-step-back") && i == 10)
			w.render -= 100 * MS;
		if (is("busy-over-capacity") && i >= 10)
			w.copy += 1000 * MS;
		w.compute_total = is("governor") ? now + 2 * busy_c : now;
		/* hold: the first read comes while a job runs (no cycles yet) */
		if (is("hold") && !i)
			w.render = w.copy = w.compute = 5 * MS;
		w.mem_total = w.mem_resident = 8 << 20;
		w.mem_active = i & 1 ? 4 << 20 : 0;
		w.mem_shared = is("shared-over-total") && i == 5 ? 16 << 20 : 0;
		w.mem_purgeable = i & 1 ? 2 << 20 : 0;
		if (is("purgeable-over-resident") && i == 5) {
			w.mem_resident = 1 << 20;
			w.mem_purgeable = 2 << 20;
		}
		if (is("active-over-resident") && i == 7)
			w.mem_active = 16 << 20;
		add(c, fw, "pid 42 fd 3", &w, false);
		/* the idle clients are read as the workload runs */
		a.t = d.t = a.compute_total = d.compute_total = now + 50000;
		add(c, fa, "fd 3", &a, true);
		add(c, fd, "fd 5", &d, true);
	}
	/*
	 * hold: the workload keeps its file open 500 ms after its last job,
	 * read every 100 ms (simgpu-load --hold): settled reads, where
	 * time-cycles-agree's window ends, and which alone are idle.
	 */
	for (int i = 1; is("hold") && i <= 5; i++) {
		uint64_t now = t + (20 + (uint64_t)i) * 100 * MS;

		w.t = now;
		w.compute_total = is("governor") ? now + 2 * busy_c : now;
		add(c, fw, "pid 42 fd 3", &w, false);
	}
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	return c;
}

static void dump(const struct dac_conf *c)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	dac_conf_print_text(c, f, false);
	fclose(f);
	dt_info("%s", t);
	free(t);
}

DT_TEST(clean_run_passes_every_check)
{
	struct dac_conf *c = run(NULL);
	const struct dac_conf_info *ci = dac_conf_checks();

	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		enum dac_conf_status st = dac_conf_status(c, i);

		if (i == DAC_CONF_MIXED_SOURCES)
			DT_EXPECT_EQ(st, DAC_CONF_NOTE);
		else if (st != DAC_CONF_PASS)
			DT_FAIL("%s: %s", ci[i].name, dac_conf_status_name(st));
	}
	DT_EXPECT_EQ(dac_conf_failures(c), 0);
	if (dac_conf_failures(c))
		dump(c);
	dac_conf_free(c);
}

/*
 * A correct driver whose engine clock a governor raises while busy: compute
 * 80 % busy by time, 92.3 % by cycles (240 of 260 cycles per 100 ms). Cycles
 * ahead of time is what such a clock does; halved cycles on the same clock
 * (46.2 %) still fail.
 */
/* The run with @f (not a fault: a variant of the set-up) fails nothing. */
static void expect_clean(const char *f)
{
	struct dac_conf *c = run(f);

	if (dac_conf_failures(c))
		dump(c);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_TIME_CYCLES_AGREE), DAC_CONF_PASS);
	DT_EXPECT_EQ(dac_conf_failures(c), 0);
	dac_conf_free(c);
}

DT_TEST(governor_clock_puts_cycles_ahead_not_behind)
{
	struct dac_conf *c;

	expect_clean("governor");
	c = run("governor cycles-disagree");
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_TIME_CYCLES_AGREE), DAC_CONF_FAIL);
	DT_EXPECT_EQ(dac_conf_failures(c), 1);
	dac_conf_free(c);
}

/*
 * @c failed check @want and no other, and every other check has the
 * status it has without a fault: a fault that turns a check into a skip
 * hides it as surely as one that passes it.
 */
static void expect_only(struct dac_conf *c, int want, const char *what)
{
	const struct dac_conf_info *ci = dac_conf_checks();
	struct dac_conf *clean = run(NULL);

	fault = what;
	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		enum dac_conf_status st = dac_conf_status(c, i);
		enum dac_conf_status want_st = i == want ? DAC_CONF_FAIL : dac_conf_status(clean, i);

		if (st != want_st)
			dt__fail_here(__FILE__, __LINE__, false, "fault %s: check %s %s, not %s",
				      what, ci[i].name, dac_conf_status_name(st),
				      dac_conf_status_name(want_st));
	}
	dac_conf_free(clean);
}

DT_TEST(each_fault_fails_exactly_its_check)
{
	const struct dac_conf_info *ci = dac_conf_checks();

	for (int want = 0; want < DAC_CONF__COUNT; want++) {
		struct dac_conf *c;
		const char *const *ev;
		const char *sum;
		size_t n, total;

		if (!ci[want].fault)
			continue;
		c = run(ci[want].fault);
		expect_only(c, want, ci[want].fault);
		ev = dac_conf_evidence(c, want, &n, &total, &sum);
		DT_EXPECT_GE(n, 1);
		DT_EXPECT_GE(total, n);
		if (n)
			DT_EXPECT_TRUE(strlen(ev[0]) > 10);
		if (dac_conf_failures(c) != 1)
			dump(c);
		dac_conf_free(c);
	}
}

/*
 * Faults of the branches and relations simgpu's one fault per check does
 * not reach: each fails its check alone. The maxfreq branches of
 * time-cycles-agree (cycles at maxfreq ahead of time) and cycles-bound
 * (more cycles than maxfreq x wall); the low-busy side of
 * time-cycles-agree (halved cycles at 20 % busy, 10 points behind, which
 * a flat 10 points let pass), also when the workload holds its file open
 * idle after its last job (a window of the idle reads alone compared
 * nothing); each memory-subsets relation; a PCI device
 * whose fdinfo lacks drm-pdev in some reads.
 */
DT_TEST(each_branch_fault_fails_its_check_alone)
{
	static const struct {
		const char *fault, *pdev;
		enum dac_conf_id check;
	} t[] = {
		{ "maxfreq-cycles-ahead", NULL, DAC_CONF_TIME_CYCLES_AGREE },
		{ "low-busy cycles-disagree", NULL, DAC_CONF_TIME_CYCLES_AGREE },
		{ "hold cycles-disagree", NULL, DAC_CONF_TIME_CYCLES_AGREE },
		{ "maxfreq-cycles-over", NULL, DAC_CONF_CYCLES_BOUND },
		{ "resident-over-total", NULL, DAC_CONF_MEMORY_SUBSETS },
		{ "shared-over-total", NULL, DAC_CONF_MEMORY_SUBSETS },
		{ "purgeable-over-resident", NULL, DAC_CONF_MEMORY_SUBSETS },
		{ "active-over-resident", NULL, DAC_CONF_MEMORY_SUBSETS },
		{ "no-pdev", "0000:00:02.0", DAC_CONF_PDEV },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct dac_conf *c;

		pci_pdev = t[i].pdev;
		c = run(t[i].fault);
		expect_only(c, t[i].check, t[i].fault);
		if (dac_conf_failures(c) != 1)
			dump(c);
		dac_conf_free(c);
	}
	pci_pdev = NULL;
}

/* The same runs without their fault pass: the faults, not the set-up, fail. */
DT_TEST(branch_fault_runs_pass_without_the_fault)
{
	struct dac_conf *c;

	expect_clean("low-busy");
	expect_clean("hold");
	pci_pdev = "0000:00:02.0";
	c = run(NULL);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_PDEV), DAC_CONF_PASS);
	DT_EXPECT_EQ(dac_conf_failures(c), 0);
	dac_conf_free(c);
	pci_pdev = NULL;
}

DT_TEST(every_check_has_a_fault_or_is_a_note)
{
	const struct dac_conf_info *ci = dac_conf_checks();

	for (int i = 0; i < DAC_CONF__COUNT; i++) {
		/* only the portability note has none: it never fails */
		if (!ci[i].fault != !strcmp(ci[i].group, "portability"))
			DT_FAIL("check %s: fault %s", ci[i].name, ci[i].fault ? ci[i].fault : "none");
		for (int k = 0; k < i; k++)
			if (ci[i].fault && ci[k].fault && !strcmp(ci[i].fault, ci[k].fault))
				DT_FAIL("checks %s and %s share fault %s", ci[k].name, ci[i].name,
					ci[i].fault);
		DT_EXPECT_TRUE(ci[i].rule && strlen(ci[i].rule) > 20);
	}
}

DT_TEST(step_back_counts_catch_up)
{
	struct dac_conf *c = dac_conf_new();
	static const uint64_t v[] = { 100, 200, 150, 180, 250, 260 };
	const char *const *ev;
	const char *sum;
	size_t n, total;
	int f = dac_conf_file(c, "x", 0);

	for (size_t i = 0; i < 6; i++) {
		char t[128];

		snprintf(t, sizeof(t), "drm-driver: d\ndrm-client-id: 1\ndrm-engine-e: %" PRIu64 " ns\n",
			 v[i]);
		DT_ASSERT_EQ(dac_conf_read(c, f, NULL, i * 10 * MS, i * 10 * MS + 1, t, strlen(t)), 0);
	}
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_MONOTONIC), DAC_CONF_FAIL);
	ev = dac_conf_evidence(c, DAC_CONF_MONOTONIC, &n, &total, &sum);
	/* 150 and 180 are both below 200: two steps back, two reads behind */
	DT_EXPECT_EQ(total, 2);
	DT_ASSERT_EQ(n, 2);
	DT_EXPECT_TRUE(strstr(ev[0], "went back to 150 from 200") != NULL);
	DT_EXPECT_TRUE(strstr(sum, "2 steps back") != NULL);
	DT_EXPECT_TRUE(strstr(sum, "for 2 reads") != NULL);
	/* the catch-up values keep busy-capacity honest: no double counting */
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_BUSY_CAPACITY), DAC_CONF_PASS);
	dac_conf_free(c);
}

DT_TEST(no_client_id_skips_identity)
{
	struct dac_conf *c = dac_conf_new();
	const char *t = "drm-driver: d\ndrm-engine-e: 0 ns\n";
	int f = dac_conf_file(c, "x", DAC_CONF_F_IDLE);

	DT_ASSERT_EQ(dac_conf_read(c, f, NULL, 0, 1, t, strlen(t)), 0);
	DT_ASSERT_EQ(dac_conf_read(c, f, NULL, MS, MS + 1, t, strlen(t)), 0);
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_ID_STABLE), DAC_CONF_SKIP);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_ID_UNIQUE), DAC_CONF_SKIP);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_WORKLOAD_BUSY), DAC_CONF_SKIP);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_IDLE_ZERO), DAC_CONF_PASS);
	DT_EXPECT_EQ(dac_conf_failures(c), 0);
	/* a workload ran but nothing of it was seen: that fails */
	DT_ASSERT_EQ(dac_conf_set_workload(c, "sleep 1"), 0);
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_WORKLOAD_BUSY), DAC_CONF_FAIL);
	DT_EXPECT_EQ(dac_conf_failures(c), 1);
	dac_conf_free(c);
}

/*
 * A driver that prints the core keys only (what the DRM core prints on
 * 6.5+ for a driver hooking drm_show_fdinfo without stats of its own): the
 * identity checks have something to check, the counter and memory checks
 * have nothing and skip, and a workload that shows no busy time is not a
 * failure when no engine key exists to show it.
 */
DT_TEST(core_only_driver_skips_what_it_cannot_show)
{
	struct dac_conf *c = dac_conf_new();
	static const enum dac_conf_id skipped[] = {
		DAC_CONF_DRIVER_PREFIX, DAC_CONF_MONOTONIC, DAC_CONF_IDLE_ZERO,
		DAC_CONF_BUSY_CAPACITY, DAC_CONF_CYCLES_BOUND, DAC_CONF_MAXFREQ_CONSTANT,
		DAC_CONF_CAPACITY, DAC_CONF_MEMORY_UNITS, DAC_CONF_MEMORY_SUBSETS,
		DAC_CONF_MIXED_SOURCES, DAC_CONF_WORKLOAD_BUSY, DAC_CONF_TIME_CYCLES_AGREE,
	};
	static const enum dac_conf_id passed[] = {
		DAC_CONF_FORMAT, DAC_CONF_DRIVER, DAC_CONF_ID_STABLE, DAC_CONF_ID_UNIQUE,
		DAC_CONF_ID_NOT_REUSED, DAC_CONF_KEY_SET_STABLE,
	};
	const char *const *ev;
	const char *sum;
	size_t n, total;
	int fi, fw;

	DT_ASSERT_EQ(dac_conf_set_device(c, "/dev/dri/renderD129", NULL), 0);
	DT_ASSERT_EQ(dac_conf_set_workload(c, "true"), 0);
	fi = dac_conf_file(c, "open #1", DAC_CONF_F_IDLE);
	fw = dac_conf_file(c, "pid 42 fd 3", DAC_CONF_F_WORKLOAD);
	for (int i = 0; i < 3; i++) {
		char t[128];

		snprintf(t, sizeof(t), "drm-driver:\tsimgpu\ndrm-client-id:\t%d\n", 7);
		DT_ASSERT_EQ(dac_conf_read(c, fi, NULL, i * MS, i * MS + 1, t, strlen(t)), 0);
		snprintf(t, sizeof(t), "drm-driver:\tsimgpu\ndrm-client-id:\t%d\n", 8);
		DT_ASSERT_EQ(dac_conf_read(c, fw, NULL, i * MS, i * MS + 1, t, strlen(t)), 0);
	}
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	for (size_t i = 0; i < sizeof(skipped) / sizeof(skipped[0]); i++)
		if (dac_conf_status(c, skipped[i]) != DAC_CONF_SKIP)
			DT_FAIL("%s: %s, not skip", dac_conf_checks()[skipped[i]].name,
				dac_conf_status_name(dac_conf_status(c, skipped[i])));
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		if (dac_conf_status(c, passed[i]) != DAC_CONF_PASS)
			DT_FAIL("%s: %s, not pass", dac_conf_checks()[passed[i]].name,
				dac_conf_status_name(dac_conf_status(c, passed[i])));
	DT_EXPECT_EQ(dac_conf_failures(c), 0);
	ev = dac_conf_evidence(c, DAC_CONF_WORKLOAD_BUSY, &n, &total, &sum);
	(void)ev;
	DT_EXPECT_TRUE(sum && strstr(sum, "print no drm-engine- or drm-cycles- key") != NULL);
	ev = dac_conf_evidence(c, DAC_CONF_MONOTONIC, &n, &total, &sum);
	DT_EXPECT_TRUE(sum && strstr(sum, "no drm-engine-") != NULL);
	dac_conf_free(c);
}

/*
 * Without drm-pdev, client ids must be unique across all devices. A file
 * on another device showing the same id while ours is open fails
 * client-id-unique; with drm-pdev printed, ids are per device and the same
 * id elsewhere is legal.
 */
DT_TEST(ids_unique_across_devices_without_pdev)
{
	for (int pdev = 0; pdev < 2; pdev++) {
		struct dac_conf *c = dac_conf_new();
		const char *t = pdev ? "drm-driver: d\ndrm-pdev: 0000:00:02.0\ndrm-client-id: 5\n"
				     : "drm-driver: d\ndrm-client-id: 5\n";
		const char *const *ev;
		const char *sum;
		size_t n, total;
		int f = dac_conf_file(c, "open #1", 0);

		DT_ASSERT_EQ(dac_conf_read(c, f, NULL, 0, 1, t, strlen(t)), 0);
		DT_ASSERT_EQ(dac_conf_other_device_id(c, "renderD129 pid 7 fd 4", 6), 0);
		DT_ASSERT_EQ(dac_conf_other_device_id(c, "renderD129 pid 7 fd 5", 5), 0);
		DT_ASSERT_EQ(dac_conf_read(c, f, NULL, MS, MS + 1, t, strlen(t)), 0);
		DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
		ev = dac_conf_evidence(c, DAC_CONF_ID_UNIQUE, &n, &total, &sum);
		if (pdev) {
			DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_ID_UNIQUE), DAC_CONF_PASS);
			DT_EXPECT_TRUE(strstr(sum, "unique per device") != NULL);
		} else {
			DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_ID_UNIQUE), DAC_CONF_FAIL);
			DT_EXPECT_EQ(total, 1);
			DT_ASSERT_EQ(n, 1);
			DT_EXPECT_TRUE(strstr(ev[0], "renderD129 pid 7 fd 5") != NULL);
			DT_EXPECT_TRUE(strstr(ev[0], "drm-client-id 5") != NULL);
		}
		DT_EXPECT_EQ(dac_conf_other_device_id(c, NULL, 1), -EINVAL);
		dac_conf_free(c);
	}
}

DT_TEST(pdev_compared_with_sysfs)
{
	struct dac_conf *c = dac_conf_new();
	const char *t = "drm-driver: d\ndrm-pdev: 0000:00:02.0\ndrm-client-id: 1\n";
	int f = dac_conf_file(c, "x", 0);

	DT_ASSERT_EQ(dac_conf_read(c, f, NULL, 0, 1, t, strlen(t)), 0);
	DT_ASSERT_EQ(dac_conf_set_device(c, "/dev/dri/renderD128", "0000:00:02.0"), 0);
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_PDEV), DAC_CONF_PASS);
	DT_ASSERT_EQ(dac_conf_set_device(c, "/dev/dri/renderD128", "0000:00:03.0"), 0);
	DT_ASSERT_EQ(dac_conf_evaluate(c), 0);
	DT_EXPECT_EQ(dac_conf_status(c, DAC_CONF_PDEV), DAC_CONF_FAIL);
	dac_conf_free(c);
}

DT_TEST(reports_text_tap_json)
{
	struct dac_conf *c = run("gib-unit");
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);
	struct dac_json j;
	const struct jd *chk;
	struct jd *doc;

	DT_ASSERT_EQ(dac_conf_print_text(c, f, false), 0);
	fflush(f);
	EXPECT_HAS(t, "FAIL  memory-units          ");
	EXPECT_HAS(t, "      rule: drm-memory-<str>: <uint> [KiB|MiB]");
	EXPECT_HAS(t, "      - open #1 read 1 (fd 3) line 14: drm-total-system: '0 GiB': unit 'GiB'");
	EXPECT_HAS(t, "note  mixed-util-sources    ");
	EXPECT_HAS(t, "19 checks: 17 passed, 1 failed, 0 skipped, 1 notes\n");
	fclose(f);
	free(t);
	t = NULL;
	f = open_memstream(&t, &len);
	DT_ASSERT_EQ(dac_conf_print_tap(c, f), 0);
	fflush(f);
	DT_EXPECT_TRUE(strstr(t, "TAP version 13\n1..19\n") != NULL);
	DT_EXPECT_TRUE(strstr(t, "not ok 15 memory-units") != NULL);
	DT_EXPECT_TRUE(strstr(t, "ok 1 format") != NULL);
	DT_EXPECT_TRUE(strstr(t, "# - open #1 read 1 (fd 3) line 14: drm-total-system: '0 GiB'") != NULL);
	fclose(f);
	free(t);
	t = NULL;
	f = open_memstream(&t, &len);
	dac_json_init(&j, f, false);
	dac_json_obj_begin(&j, NULL);
	dac_conf_json(c, &j);
	dac_json_obj_end(&j);
	DT_EXPECT_EQ(dac_json_finish(&j), 0);
	fclose(f);
	doc = jd_parse(t);
	DT_ASSERT_NE(doc, NULL);
	DT_EXPECT_EQ(jd_len(doc, "checks"), 19);
	chk = jd_find_str(doc, "checks", "name", "memory-units");
	DT_ASSERT_NE(chk, NULL);
	DT_EXPECT_STREQ(jd_str(chk, "group"), "memory");
	DT_EXPECT_STREQ(jd_str(chk, "status"), "fail");
	DT_EXPECT_TRUE(jd_str(chk, "evidence.0") &&
		       strstr(jd_str(chk, "evidence.0"), "drm-total-system: '0 GiB'"));
	DT_EXPECT_STREQ(jd_str(doc, "checks.0.name"), "format");
	DT_EXPECT_STREQ(jd_str(doc, "checks.0.status"), "pass");
	DT_EXPECT_EQ(jd_u64(doc, "failed", 0), 1ull);
	jd_free(doc);
	free(t);
	dac_conf_free(c);
}

DT_TEST(bad_arguments)
{
	struct dac_conf *c = dac_conf_new();
	int f;

	DT_EXPECT_EQ(dac_conf_file(c, NULL, 0), -EINVAL);
	DT_EXPECT_EQ(dac_conf_file(c, "x", 0x100), -EINVAL);
	f = dac_conf_file(c, "x", 0);
	DT_EXPECT_EQ(dac_conf_read(c, f + 1, NULL, 0, 1, "", 0), -EINVAL);
	DT_EXPECT_EQ(dac_conf_read(c, f, NULL, 2, 1, "", 0), -EINVAL);
	DT_EXPECT_EQ(dac_conf_read(c, f, NULL, 5, 6, "", 0), 0);
	DT_EXPECT_EQ(dac_conf_read(c, f, NULL, 4, 6, "", 0), -EINVAL);	/* out of order */
	DT_EXPECT_EQ(dac_conf_close(c, f), 0);
	DT_EXPECT_EQ(dac_conf_close(c, f), -EINVAL);
	DT_EXPECT_EQ(dac_conf_read(c, f, NULL, 7, 8, "", 0), -EINVAL);	/* closed */
	DT_EXPECT_EQ(dac_conf_evaluate(NULL), -EINVAL);
	DT_EXPECT_EQ(dac_conf_check_by_name("nope"), -1);
	DT_EXPECT_EQ(dac_conf_file_stats(c, f), DAC_STATS_NONE);
	/* the driver name of a node (the default device's message): not a DRM fd */
	{
		char name[16] = "x";
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		DT_ASSERT_GE(fd, 0);
		DT_EXPECT_EQ(dac_drm_driver_name(fd, name, sizeof(name)), -ENOTTY);
		DT_EXPECT_EQ(dac_drm_driver_name(fd, name, 0), -EINVAL);
		DT_EXPECT_EQ(dac_drm_driver_name(-1, name, sizeof(name)), -EBADF);
		close(fd);
	}
	DT_EXPECT_EQ(dac_conf_file_stats(c, f + 1), DAC_STATS_NONE);
	dac_conf_free(c);
	dac_conf_free(NULL);
}

DT_TEST(cli_usage_and_errors)
{
	struct cli_result r;

	cli_run(&r, "conformance", "--help", NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "--workload=CMD");
	cli_result_free(&r);
	cli_run(&r, "conformance", "--json", "--tap", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--json and --tap exclude each other");
	cli_result_free(&r);
	cli_run(&r, "conformance", "--interval=5us", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "bad interval '5us'");
	cli_result_free(&r);
	/* -i is --interval, as in every command */
	cli_run(&r, "conformance", "-i", "5us", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "bad interval '5us'");
	cli_result_free(&r);
	cli_run(&r, "conformance", "-i", "10ms", "--device=/nonexistent/renderD128", NULL);
	DT_EXPECT_EQ(r.status, 4);	/* parsed; there is no device to test */
	EXPECT_HAS(r.out, "skip: /nonexistent/renderD128");
	cli_result_free(&r);
	cli_run(&r, "conformance", "--duration=0", NULL);
	DT_EXPECT_EQ(r.status, 2);
	cli_result_free(&r);
	cli_run(&r, "conformance", "--workload=", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "--workload: empty command");
	cli_result_free(&r);
	cli_run(&r, "conformance", "extra", NULL);
	DT_EXPECT_EQ(r.status, 2);
	cli_result_free(&r);
	/* not a DRM node: it opens, but prints no usage stats: nothing to test */
	cli_run(&r, "conformance", "--device=/dev/null", NULL);
	DT_EXPECT_EQ(r.status, 4);
	DT_EXPECT_STREQ(r.out, "skip: /dev/null: the driver prints no DRM usage stats (no drm- key in fdinfo)\n");
	DT_EXPECT_STREQ(r.err, "opening clients on /dev/null\n");
	cli_result_free(&r);
	cli_run(&r, "conformance", "--device=/nonexistent/renderD1", NULL);
	DT_EXPECT_EQ(r.status, 4);
	EXPECT_HAS(r.out, "skip: /nonexistent/renderD1: No such file or directory");
	cli_result_free(&r);
	/* a path that cannot be a device node is an error, not a skip */
	cli_run(&r, "conformance", "--device=/tmp", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "/tmp is not a character device");
	DT_EXPECT_STREQ(r.out, "");
	cli_result_free(&r);
}

/*
 * --json and --tap print a document whatever happens, and the exit status
 * tells a skip (4: nothing to test) from an error (1) and a failed check
 * (1, with "failed" > 0).
 */
DT_TEST(cli_documents_for_skip_and_error)
{
	struct cli_result r;
	struct jd *d;

	cli_run(&r, "conformance", "--json", "--device=/dev/null", NULL);
	DT_EXPECT_EQ(r.status, 4);
	d = jd_parse(r.out);
	DT_ASSERT_TRUE(d != NULL);
	DT_EXPECT_STREQ(jd_str(d, "schema"), "drmacct-conformance/1");
	DT_EXPECT_STREQ(jd_str(d, "result"), "skip");
	DT_EXPECT_STREQ(jd_str(d, "device"), "/dev/null");
	DT_EXPECT_STREQ(jd_str(d, "usage_stats"), "none");
	DT_EXPECT_STREQ(jd_str(d, "reason"),
			"/dev/null: the driver prints no DRM usage stats (no drm- key in fdinfo)");
	DT_EXPECT_EQ(jd_len(d, "checks"), 0);
	DT_EXPECT_EQ(jd_int(d, "failed", -1), 0);
	DT_EXPECT_TRUE(jd_get(d, "chosen") == NULL);	/* --device given */
	jd_free(d);
	DT_EXPECT_STREQ(r.err, "");
	cli_result_free(&r);

	cli_run(&r, "conformance", "--json", "--device=/tmp", NULL);
	DT_EXPECT_EQ(r.status, 1);
	d = jd_parse(r.out);
	DT_ASSERT_TRUE(d != NULL);
	DT_EXPECT_STREQ(jd_str(d, "result"), "error");
	DT_EXPECT_STREQ(jd_str(d, "reason"), "/tmp is not a character device");
	DT_EXPECT_TRUE(jd_is_null(d, "usage_stats"));
	jd_free(d);
	EXPECT_HAS(r.err, "/tmp is not a character device");
	cli_result_free(&r);

	cli_run(&r, "conformance", "--tap", "--device=/dev/null", NULL);
	DT_EXPECT_EQ(r.status, 4);
	DT_EXPECT_STREQ(r.out, "TAP version 13\n1..0 # SKIP /dev/null: the driver prints no DRM "
			       "usage stats (no drm- key in fdinfo)\n");
	cli_result_free(&r);
	cli_run(&r, "conformance", "--tap", "--device=/tmp", NULL);
	DT_EXPECT_EQ(r.status, 1);
	DT_EXPECT_STREQ(r.out, "TAP version 13\nBail out! /tmp is not a character device\n");
	cli_result_free(&r);
}

/* The kselftest-style program: skip (4) when there is nothing to test. */
DT_TEST(tap_program_skips_without_usage_stats)
{
	char out[4096] = "";
	FILE *p = popen("build/host/fdinfo_conformance --device=/dev/null 2>&1", "r");
	size_t n;
	int st;

	DT_ASSERT_TRUE(p != NULL);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	DT_ASSERT_TRUE(WIFEXITED(st));
	DT_EXPECT_EQ(WEXITSTATUS(st), 4);
	EXPECT_HAS(out, "TAP version 13\n1..0 # SKIP /dev/null: the driver prints no DRM usage stats");
	p = popen("build/host/fdinfo_conformance --interval=2x 2>&1", "r");
	DT_ASSERT_TRUE(p != NULL);
	while (fread(out, 1, sizeof(out), p) > 0)
		;
	st = pclose(p);
	DT_EXPECT_EQ(WEXITSTATUS(st), 2);
}

DT_MAIN
