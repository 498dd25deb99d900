// SPDX-License-Identifier: MIT
/*
 * test_tracker.c - client tracker: catch-up rule, utilisation math with
 * hand-computed expectations, de-duplication, per-process views, memory.
 */
#define _GNU_SOURCE
#include "dtest.h"
#include "fdinfo.h"
#include "proc_tree.h"
#include "tracker.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define SEC 1000000000ull
#define DEV0 makedev(226, 128)
#define DEV1 makedev(226, 129)

static void add(struct dac_tracker *t, pid_t pid, int fd, dev_t dev, const char *text)
{
	struct dac_fdinfo fi;

	DT_ASSERT_EQ(dac_fdinfo_parse(text, strlen(text), DAC_PROFILE_CURRENT, &fi), 0);
	DT_ASSERT_EQ(dac_tracker_add(t, pid, fd, "comm", dev, &fi), 0);
	dac_fdinfo_free(&fi);
}

static const struct dac_tk_client *client_by_id(struct dac_tracker *t, dev_t dev, uint64_t id)
{
	size_t i;

	for (i = 0; i < dac_tracker_nclients(t); i++) {
		const struct dac_tk_client *c = dac_tracker_client(t, i);

		if (c->rdev == dev && c->has_client_id && c->client_id == id)
			return c;
	}
	return NULL;
}

static const struct dac_tk_engine *eng(struct dac_tracker *t, dev_t dev, uint64_t id,
				       const char *name)
{
	const struct dac_tk_client *c = client_by_id(t, dev, id);
	const struct dac_tk_engine *e;

	DT_ASSERT_TRUE(c != NULL);
	e = dac_tk_client_engine(c, name);
	DT_ASSERT_TRUE(e != NULL);
	return e;
}

DT_TEST(counter_catch_up_rule)
{
	/* raw readings and what the spec says userspace must report */
	static const uint64_t raw[] = { 100, 200, 150, 180, 199, 200, 250, 0, 260 };
	static const uint64_t want[] = { 100, 200, 200, 200, 200, 200, 250, 250, 260 };
	static const bool held[] = { 0, 0, 1, 1, 1, 0, 0, 1, 0 };
	struct dac_counter c = { 0 };
	size_t i;

	for (i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
		DT_EXPECT_EQ(dac_counter_update(&c, raw[i]), want[i]);
		DT_EXPECT_EQ(c.value, want[i]);
		DT_EXPECT_EQ(c.raw, raw[i]);
		DT_EXPECT_EQ(c.held, held[i]);
	}
	DT_EXPECT_EQ(c.regressions, 4u);
}

DT_TEST(utilisation_math)
{
	/* 0.5 s busy in 1 s on a 2-wide engine: 25 % */
	DT_EXPECT_NEAR(dac_util_time(500000000, SEC, 2), 0.25, 1e-12);
	/* 3 s busy in 2 s on a 2-wide engine: 75 % */
	DT_EXPECT_NEAR(dac_util_time(3 * SEC, 2 * SEC, 2), 0.75, 1e-12);
	/* 400 M cycles in 1 s at 800 MHz: 50 % */
	DT_EXPECT_NEAR(dac_util_cycles_maxfreq(400000000, 800000000, SEC, 1), 0.5, 1e-12);
	/* 100 M cycles in 250 ms at 1 GHz on 2 instances: 20 % */
	DT_EXPECT_NEAR(dac_util_cycles_maxfreq(100000000, 1000000000, SEC / 4, 2), 0.2, 1e-12);
	/* 300 of 1200 clocks on a 2-wide engine: 12.5 % */
	DT_EXPECT_NEAR(dac_util_cycles_total(300, 1200, 2), 0.125, 1e-12);
	/* Undefined inputs are NaN, not 0 and not a crash. */
	DT_EXPECT_TRUE(isnan(dac_util_time(1, 0, 1)));
	DT_EXPECT_TRUE(isnan(dac_util_time(1, 1, 0)));
	DT_EXPECT_TRUE(isnan(dac_util_cycles_maxfreq(1, 0, SEC, 1)));
	DT_EXPECT_TRUE(isnan(dac_util_cycles_maxfreq(1, 1, 0, 1)));
	DT_EXPECT_TRUE(isnan(dac_util_cycles_total(1, 0, 1)));
	DT_EXPECT_TRUE(isnan(dac_util_cycles_total(1, 1, 0)));
	DT_EXPECT_STREQ(dac_util_source_name(DAC_UTIL_TIME), "time");
	DT_EXPECT_STREQ(dac_util_source_name(DAC_UTIL_CYCLES_TOTAL), "cycles/total-cycles");
}

DT_TEST(time_utilisation_with_capacity)
{
	struct dac_tracker *t = dac_tracker_new();
	const struct dac_tk_engine *e;

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_tracker_begin(t, 1 * SEC), 0);
	add(t, 100, 3, DEV0, "drm-driver: simgpu\ndrm-client-id: 7\n"
			     "drm-engine-render: 1000000000 ns\n"
			     "drm-engine-copy: 0 ns\ndrm-engine-capacity-copy: 2\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	/* First sample: nothing to compare with. */
	e = eng(t, DEV0, 7, "render");
	DT_EXPECT_TRUE(isnan(e->util));
	DT_EXPECT_EQ((int)e->util_src, (int)DAC_UTIL_NONE);
	DT_EXPECT_EQ(dac_tracker_interval_ns(t), 0u);

	DT_ASSERT_EQ(dac_tracker_begin(t, 3 * SEC), 0);
	add(t, 100, 3, DEV0, "drm-driver: simgpu\ndrm-client-id: 7\n"
			     "drm-engine-render: 1500000000 ns\n"
			     "drm-engine-copy: 3000000000 ns\ndrm-engine-capacity-copy: 2\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_EQ(dac_tracker_interval_ns(t), 2 * SEC);
	e = eng(t, DEV0, 7, "render");
	DT_EXPECT_EQ(e->d_busy_ns, 500000000u);
	DT_EXPECT_EQ(e->capacity, 1u);
	DT_EXPECT_NEAR(e->util, 0.25, 1e-12);		/* 0.5 s of 2 s */
	DT_EXPECT_EQ((int)e->util_src, (int)DAC_UTIL_TIME);
	e = eng(t, DEV0, 7, "copy");
	DT_EXPECT_EQ(e->capacity, 2u);
	DT_EXPECT_EQ(e->d_busy_ns, 3 * SEC);
	DT_EXPECT_NEAR(e->util, 0.75, 1e-12);		/* 3 s of 2 s x 2 */
	DT_EXPECT_TRUE(isnan(e->util_cycles));
	dac_tracker_free(t);
}

/* Each client's interval runs between its own reads, not the sample starts. */
DT_TEST(per_client_read_times)
{
	struct dac_tracker *t = dac_tracker_new();
	struct dac_fdinfo a, b;
	const char *ta0 = "drm-driver: x\ndrm-client-id: 1\ndrm-engine-r: 0 ns\n";
	const char *ta1 = "drm-driver: x\ndrm-client-id: 1\ndrm-engine-r: 500000000 ns\n";
	const char *tb0 = "drm-driver: x\ndrm-client-id: 2\ndrm-engine-r: 0 ns\n";
	const char *tb1 = "drm-driver: x\ndrm-client-id: 2\ndrm-engine-r: 600000000 ns\n";

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_tracker_begin(t, 10 * SEC), 0);
	DT_ASSERT_EQ(dac_fdinfo_parse(ta0, strlen(ta0), DAC_PROFILE_CURRENT, &a), 0);
	DT_ASSERT_EQ(dac_fdinfo_parse(tb0, strlen(tb0), DAC_PROFILE_CURRENT, &b), 0);
	DT_ASSERT_EQ(dac_tracker_add_at(t, 1, 3, "a", DEV0, &a, 10 * SEC), 0);
	DT_ASSERT_EQ(dac_tracker_add_at(t, 2, 3, "b", DEV0, &b, 10 * SEC + SEC / 2), 0);
	/* a dup'd fd of client 1 read later in the same walk does not count */
	DT_ASSERT_EQ(dac_tracker_add_at(t, 1, 4, "a", DEV0, &a, 10 * SEC + SEC / 4), 0);
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	dac_fdinfo_free(&a);
	dac_fdinfo_free(&b);

	DT_ASSERT_EQ(dac_tracker_begin(t, 11 * SEC), 0);
	DT_ASSERT_EQ(dac_fdinfo_parse(ta1, strlen(ta1), DAC_PROFILE_CURRENT, &a), 0);
	DT_ASSERT_EQ(dac_fdinfo_parse(tb1, strlen(tb1), DAC_PROFILE_CURRENT, &b), 0);
	DT_ASSERT_EQ(dac_tracker_add_at(t, 1, 3, "a", DEV0, &a, 11 * SEC), 0);
	DT_ASSERT_EQ(dac_tracker_add_at(t, 2, 3, "b", DEV0, &b, 12 * SEC), 0);
	DT_ASSERT_EQ(dac_tracker_add_at(t, 1, 4, "a", DEV0, &a, 11 * SEC + SEC / 4), 0);
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	dac_fdinfo_free(&a);
	dac_fdinfo_free(&b);

	DT_EXPECT_EQ(client_by_id(t, DEV0, 1)->interval_ns, SEC);
	DT_EXPECT_EQ(client_by_id(t, DEV0, 2)->interval_ns, 3 * SEC / 2);
	DT_EXPECT_NEAR(eng(t, DEV0, 1, "r")->util, 0.5, 1e-12);	/* 0.5 s of 1 s */
	DT_EXPECT_NEAR(eng(t, DEV0, 2, "r")->util, 0.4, 1e-12);	/* 0.6 s of 1.5 s */
	DT_EXPECT_EQ(dac_tracker_interval_ns(t), SEC);
	dac_tracker_free(t);
}

DT_TEST(cycles_maxfreq_and_total_cycles)
{
	struct dac_tracker *t = dac_tracker_new();
	const struct dac_tk_engine *e;

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_tracker_begin(t, 10 * SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: panfrost\ndrm-client-id: 14\n"
			   "drm-engine-fragment: 1000000000 ns\n"
			   "drm-cycles-fragment: 2000000000\n"
			   "drm-maxfreq-fragment: 800 MHz\n"
			   "drm-cycles-compute: 5000\n"
			   "drm-total-cycles-compute: 100000\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_ASSERT_EQ(dac_tracker_begin(t, 11 * SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: panfrost\ndrm-client-id: 14\n"
			   "drm-engine-fragment: 1600000000 ns\n"
			   "drm-cycles-fragment: 2400000000\n"
			   "drm-maxfreq-fragment: 800 MHz\n"
			   "drm-cycles-compute: 5300\n"
			   "drm-total-cycles-compute: 101000\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	e = eng(t, DEV0, 14, "fragment");
	DT_EXPECT_EQ(e->maxfreq_hz, 800000000u);
	DT_EXPECT_NEAR(e->util_time, 0.6, 1e-12);	/* 600 ms of 1 s */
	DT_EXPECT_NEAR(e->util_cycles, 0.5, 1e-12);	/* 400 M of 800 MHz x 1 s */
	DT_EXPECT_NEAR(e->util, 0.6, 1e-12);		/* time is preferred */
	DT_EXPECT_EQ((int)e->util_src, (int)DAC_UTIL_TIME);
	e = eng(t, DEV0, 14, "compute");
	DT_EXPECT_FALSE(e->has_busy);
	DT_EXPECT_EQ(e->d_cycles, 300u);
	DT_EXPECT_EQ(e->d_total_cycles, 1000u);
	DT_EXPECT_NEAR(e->util, 0.3, 1e-12);		/* 300 of 1000 clocks */
	DT_EXPECT_EQ((int)e->util_src, (int)DAC_UTIL_CYCLES_TOTAL);
	dac_tracker_free(t);
}

DT_TEST(catch_up_rule_in_tracker)
{
	struct dac_tracker *t = dac_tracker_new();
	static const uint64_t busy[] = { 1000, 900, 950, 1100, 1400 };
	/* deltas after holding the previous larger value */
	static const uint64_t dwant[] = { 0, 0, 0, 100, 300 };
	const struct dac_tk_engine *e;
	char text[256];
	size_t i;

	DT_ASSERT_TRUE(t != NULL);
	for (i = 0; i < 5; i++) {
		snprintf(text, sizeof(text),
			 "drm-driver: x\ndrm-client-id: 1\ndrm-engine-gfx: %llu ns\n",
			 (unsigned long long)busy[i]);
		DT_ASSERT_EQ(dac_tracker_begin(t, (i + 1) * 1000), 0);
		add(t, 1, 3, DEV0, text);
		DT_ASSERT_EQ(dac_tracker_end(t), 0);
		e = eng(t, DEV0, 1, "gfx");
		DT_EXPECT_EQ(e->d_busy_ns, dwant[i]);
		DT_EXPECT_EQ(e->busy.value, i < 3 ? 1000u : busy[i]);
		if (i)
			DT_EXPECT_NEAR(e->util, (double)dwant[i] / 1000.0, 1e-12);
	}
	DT_EXPECT_EQ(e->busy.regressions, 2u);
	dac_tracker_free(t);
}

static const char *C7 = "drm-driver: simgpu\ndrm-client-id: 7\ndrm-engine-render: %llu ns\n"
			"drm-total-system: 8 KiB\ndrm-resident-system: 4 KiB\n";
static const char *C8 = "drm-driver: simgpu\ndrm-client-id: 8\ndrm-engine-render: %llu ns\n"
			"drm-total-system: 1 MiB\ndrm-resident-system: 1 MiB\n";

static void add_fmt(struct dac_tracker *t, pid_t pid, int fd, dev_t dev, const char *fmt,
		    unsigned long long v)
{
	char text[512];

	snprintf(text, sizeof(text), fmt, v);
	add(t, pid, fd, dev, text);
}

/*
 * Client 7 is open in process 100 on fds 3 and 12 (dup) and inherited by
 * the forked process 200 (fd 3); process 200 also has its own client 8.
 */
static void shared_sample(struct dac_tracker *t, uint64_t now, unsigned long long b7,
			  unsigned long long b8)
{
	DT_ASSERT_EQ(dac_tracker_begin(t, now), 0);
	add_fmt(t, 100, 3, DEV0, C7, b7);
	add_fmt(t, 200, 3, DEV0, C7, b7);
	add_fmt(t, 100, 12, DEV0, C7, b7);
	add_fmt(t, 200, 4, DEV0, C8, b8);
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
}

DT_TEST(dedupe_dup_and_fork)
{
	struct dac_tracker *t = dac_tracker_new();
	const struct dac_tk_client *c7, *c8;
	const struct dac_tk_process *p;
	const struct dac_tk_agg_engine *ae;
	const struct dac_tk_agg_region *ar;

	DT_ASSERT_TRUE(t != NULL);
	shared_sample(t, SEC, 1000000, 0);
	shared_sample(t, 2 * SEC, 401000000, 100000000);

	DT_ASSERT_EQ(dac_tracker_nclients(t), (size_t)2);
	c7 = client_by_id(t, DEV0, 7);
	c8 = client_by_id(t, DEV0, 8);
	DT_ASSERT_TRUE(c7 && c8);
	DT_ASSERT_EQ(c7->nholders, (size_t)3);
	/* holders sorted by (pid, fd) */
	DT_EXPECT_EQ(c7->holders[0].pid, 100);
	DT_EXPECT_EQ(c7->holders[0].fd, 3);
	DT_EXPECT_EQ(c7->holders[1].pid, 100);
	DT_EXPECT_EQ(c7->holders[1].fd, 12);
	DT_EXPECT_EQ(c7->holders[2].pid, 200);
	DT_EXPECT_EQ(c8->nholders, (size_t)1);

	/* Totals count client 7 once: 0.4 + 0.1 of one second. */
	ae = dac_tk_agg_engine(dac_tracker_totals(t), DEV0, "render");
	DT_ASSERT_TRUE(ae != NULL);
	DT_EXPECT_EQ(ae->nclients, (size_t)2);
	DT_EXPECT_EQ(ae->d_busy_ns, 500000000u);
	DT_EXPECT_EQ(ae->busy_ns, 501000000u);
	DT_EXPECT_NEAR(ae->util, 0.5, 1e-12);
	ar = dac_tk_agg_region(dac_tracker_totals(t), DEV0, "system");
	DT_ASSERT_TRUE(ar != NULL);
	DT_EXPECT_EQ(ar->total, 8192u + 1048576u);
	DT_EXPECT_EQ(ar->resident, 4096u + 1048576u);

	/* Process view: 100 holds client 7 (once, despite two fds); 200 both. */
	DT_ASSERT_EQ(dac_tracker_nprocs(t), (size_t)2);
	p = dac_tracker_proc(t, 0);
	DT_EXPECT_EQ(p->pid, 100);
	DT_EXPECT_STREQ(p->comm, "comm");
	DT_ASSERT_EQ(p->nclients, (size_t)1);
	DT_EXPECT_TRUE(dac_tracker_client(t, p->clients[0]) == c7);
	ae = dac_tk_agg_engine(&p->agg, DEV0, "render");
	DT_ASSERT_TRUE(ae != NULL);
	DT_EXPECT_NEAR(ae->util, 0.4, 1e-12);
	ar = dac_tk_agg_region(&p->agg, DEV0, "system");
	DT_EXPECT_EQ(ar->total, 8192u);
	p = dac_tracker_proc(t, 1);
	DT_EXPECT_EQ(p->pid, 200);
	DT_EXPECT_EQ(p->nclients, (size_t)2);
	ae = dac_tk_agg_engine(&p->agg, DEV0, "render");
	DT_EXPECT_NEAR(ae->util, 0.5, 1e-12);
	DT_EXPECT_EQ(ae->d_busy_ns, 500000000u);
	DT_EXPECT_TRUE(dac_tracker_proc(t, 2) == NULL);
	dac_tracker_free(t);
}

DT_TEST(same_id_other_device_and_no_id)
{
	struct dac_tracker *t = dac_tracker_new();
	const char *noid = "drm-driver: old\ndrm-engine-gfx: 5 ns\n";
	size_t i, anon = 0;

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_tracker_begin(t, SEC), 0);
	add_fmt(t, 1, 3, DEV0, C7, 10);
	add_fmt(t, 1, 4, DEV1, C7, 20);		/* same id, other device */
	add(t, 1, 5, DEV0, noid);
	add(t, 1, 6, DEV0, noid);		/* no id: cannot be matched */
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_EQ(dac_tracker_nclients(t), (size_t)4);
	DT_EXPECT_EQ(eng(t, DEV0, 7, "render")->busy.value, 10u);
	DT_EXPECT_EQ(eng(t, DEV1, 7, "render")->busy.value, 20u);
	for (i = 0; i < dac_tracker_nclients(t); i++)
		anon += !dac_tracker_client(t, i)->has_client_id;
	DT_EXPECT_EQ(anon, (size_t)2);

	/* Next sample: the no-id fds keep their identity by (pid, fd). */
	DT_ASSERT_EQ(dac_tracker_begin(t, 2 * SEC), 0);
	add(t, 1, 5, DEV0, "drm-driver: old\ndrm-engine-gfx: 500000005 ns\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_ASSERT_EQ(dac_tracker_nclients(t), (size_t)1);
	DT_EXPECT_NEAR(dac_tracker_client(t, 0)->engines[0].util, 0.5, 1e-12);
	DT_EXPECT_EQ(dac_tracker_client(t, 0)->holders[0].fd, 5);
	dac_tracker_free(t);
}

DT_TEST(clients_come_and_go)
{
	struct dac_tracker *t = dac_tracker_new();
	const struct dac_tk_engine *e;

	DT_ASSERT_TRUE(t != NULL);
	shared_sample(t, SEC, 0, 0);
	DT_ASSERT_EQ(dac_tracker_begin(t, 2 * SEC), 0);
	add_fmt(t, 200, 4, DEV0, C8, 250000000);
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_ASSERT_EQ(dac_tracker_nclients(t), (size_t)1);
	DT_EXPECT_TRUE(client_by_id(t, DEV0, 7) == NULL);
	DT_EXPECT_NEAR(eng(t, DEV0, 8, "render")->util, 0.25, 1e-12);
	DT_EXPECT_EQ(dac_tracker_nprocs(t), (size_t)1);

	/* Client 7 again: a new client for the tracker, no utilisation yet. */
	DT_ASSERT_EQ(dac_tracker_begin(t, 3 * SEC), 0);
	add_fmt(t, 100, 3, DEV0, C7, 900000000);
	add_fmt(t, 200, 4, DEV0, C8, 250000000);
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	e = eng(t, DEV0, 7, "render");
	DT_EXPECT_TRUE(isnan(e->util));
	DT_EXPECT_EQ(client_by_id(t, DEV0, 7)->interval_ns, 0u);
	DT_EXPECT_NEAR(eng(t, DEV0, 8, "render")->util, 0.0, 1e-12);

	/* An engine that appears later has no utilisation in its first sample. */
	DT_ASSERT_EQ(dac_tracker_begin(t, 4 * SEC), 0);
	add(t, 200, 4, DEV0, "drm-driver: simgpu\ndrm-client-id: 8\n"
			     "drm-engine-render: 250000000 ns\ndrm-engine-video: 7 ns\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_TRUE(isnan(eng(t, DEV0, 8, "video")->util));
	DT_EXPECT_NEAR(eng(t, DEV0, 8, "render")->util, 0.0, 1e-12);
	/* ...and one that is no longer printed is not present. */
	DT_ASSERT_EQ(dac_tracker_begin(t, 5 * SEC), 0);
	add(t, 200, 4, DEV0, "drm-driver: simgpu\ndrm-client-id: 8\n"
			     "drm-engine-video: 500000007 ns\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	e = eng(t, DEV0, 8, "render");
	DT_EXPECT_FALSE(e->present);
	DT_EXPECT_TRUE(isnan(e->util));
	DT_EXPECT_NEAR(eng(t, DEV0, 8, "video")->util, 0.5, 1e-12);
	DT_EXPECT_TRUE(dac_tk_agg_engine(dac_tracker_totals(t), DEV0, "render") == NULL);
	dac_tracker_free(t);
}

DT_TEST(memory_regions_and_legacy)
{
	struct dac_tracker *t = dac_tracker_new();
	const struct dac_tk_client *c;
	const struct dac_tk_region *r;

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_tracker_begin(t, SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: amdgpu\ndrm-client-id: 217\ndrm-pdev: 0000:08:00.0\n"
			   "drm-memory-vram: 2068 KiB\ndrm-memory-gtt: 8192 KiB\n");
	add(t, 2, 3, DEV0, "drm-driver: panfrost\ndrm-client-id: 14\n"
			   "drm-total-memory: 290 MiB\ndrm-shared-memory: 0 MiB\n"
			   "drm-active-memory: 226 MiB\ndrm-resident-memory: 36496 KiB\n"
			   "drm-purgeable-memory: 128 KiB\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	c = client_by_id(t, DEV0, 217);
	DT_ASSERT_TRUE(c != NULL);
	DT_EXPECT_STREQ(c->driver, "amdgpu");
	DT_EXPECT_STREQ(c->pdev, "0000:08:00.0");
	r = dac_tk_client_region(c, "vram");
	DT_ASSERT_TRUE(r != NULL);
	DT_EXPECT_EQ(r->resident, 2068u * 1024);
	DT_EXPECT_TRUE(r->resident_from_legacy);
	DT_EXPECT_FALSE(r->has_total);
	c = client_by_id(t, DEV0, 14);
	r = dac_tk_client_region(c, "memory");
	DT_ASSERT_TRUE(r != NULL);
	DT_EXPECT_EQ(r->total, 290ull << 20);
	DT_EXPECT_EQ(r->active, 226ull << 20);
	DT_EXPECT_EQ(r->resident, 36496ull << 10);
	DT_EXPECT_EQ(r->purgeable, 128ull << 10);
	DT_EXPECT_TRUE(r->has_shared);
	DT_EXPECT_EQ(r->shared, 0u);
	DT_EXPECT_FALSE(r->resident_from_legacy);
	dac_tracker_free(t);
}

DT_TEST(client_name_and_driver_updates)
{
	struct dac_tracker *t = dac_tracker_new();

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_tracker_begin(t, SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: simgpu\ndrm-client-id: 3\ndrm-client-name: first\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_STREQ(client_by_id(t, DEV0, 3)->client_name, "first");
	DT_ASSERT_EQ(dac_tracker_begin(t, 2 * SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: simgpu\ndrm-client-id: 3\ndrm-client-name: second\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_STREQ(client_by_id(t, DEV0, 3)->client_name, "second");
	DT_ASSERT_EQ(dac_tracker_begin(t, 3 * SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: simgpu\ndrm-client-id: 3\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_TRUE(client_by_id(t, DEV0, 3)->client_name == NULL);
	/* A spec error in the fdinfo is counted on the client. */
	DT_ASSERT_EQ(dac_tracker_begin(t, 4 * SEC), 0);
	add(t, 1, 3, DEV0, "drm-driver: simgpu\ndrm-client-id: 3\n"
			   "drm-engine-capacity-x: 0\ndrm-engine-x: 5 ns\n");
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_GE(client_by_id(t, DEV0, 3)->spec_errors, (size_t)1);
	DT_EXPECT_EQ(eng(t, DEV0, 3, "x")->capacity, 1u);	/* 0 is rejected */
	dac_tracker_free(t);
}

DT_TEST(misuse_is_rejected)
{
	struct dac_tracker *t = dac_tracker_new();
	struct dac_fdinfo fi;

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(dac_fdinfo_parse("drm-driver: x\n", 14, DAC_PROFILE_CURRENT, &fi), 0);
	DT_EXPECT_EQ(dac_tracker_add(t, 1, 1, "c", DEV0, &fi), -EINVAL);	/* no begin */
	DT_EXPECT_EQ(dac_tracker_end(t), -EINVAL);
	DT_ASSERT_EQ(dac_tracker_begin(t, 5 * SEC), 0);
	DT_EXPECT_EQ(dac_tracker_add(t, 1, 1, "c", DEV0, NULL), -EINVAL);
	DT_EXPECT_EQ(dac_tracker_add(t, 1, 1, NULL, DEV0, &fi), 0);	/* no comm is ok */
	DT_ASSERT_EQ(dac_tracker_end(t), 0);
	DT_EXPECT_STREQ(dac_tracker_client(t, 0)->holders[0].comm, "");
	DT_EXPECT_EQ(dac_tracker_begin(t, 4 * SEC), -EINVAL);	/* time went back */
	DT_EXPECT_EQ(dac_tracker_begin(NULL, 4 * SEC), -EINVAL);
	DT_EXPECT_TRUE(dac_tracker_client(t, 5) == NULL);
	dac_fdinfo_free(&fi);
	dac_tracker_free(t);
	dac_tracker_free(NULL);
}

/*
 * Every allocation failure: the call fails with -ENOMEM, nothing leaks
 * (LeakSanitizer), and the tracker still gives right answers afterwards.
 */
DT_TEST_TIMEOUT(allocation_failures, 120)
{
	long nth;
	int done = 0;

	for (nth = 0; nth < 400 && !done; nth++) {
		struct dac_tracker *t;
		struct dac_fdinfo fi[3];
		const char *txt[3] = {
			"drm-driver: simgpu\ndrm-client-id: 7\ndrm-client-name: n\n"
			"drm-pdev: 0000:00:02.0\n"
			"drm-engine-render: 100 ns\ndrm-total-vram: 4 KiB\n",
			"drm-driver: simgpu\ndrm-client-id: 7\ndrm-engine-render: 100 ns\n"
			"drm-total-vram: 4 KiB\n",
			"drm-driver: simgpu\ndrm-engine-copy: 300000100 ns\n",
		};
		int i, ret = 0;

		for (i = 0; i < 3; i++)
			DT_ASSERT_EQ(dac_fdinfo_parse(txt[i], strlen(txt[i]),
						      DAC_PROFILE_CURRENT, &fi[i]), 0);
		dac_tracker_test_fail_alloc(nth);
		t = dac_tracker_new();
		if (!t) {
			for (i = 0; i < 3; i++)
				dac_fdinfo_free(&fi[i]);
			continue;
		}
		for (int s = 0; s < 2 && !ret; s++) {
			DT_ASSERT_EQ(dac_tracker_begin(t, (s + 1) * SEC), 0);
			for (i = 0; i < 3; i++) {
				int r = dac_tracker_add(t, 10 + i, 3, "c", DEV0, &fi[i]);

				DT_ASSERT_TRUE(r == 0 || r == -ENOMEM);
				if (r)
					ret = r;
			}
			if (dac_tracker_end(t))
				ret = -ENOMEM;
		}
		dac_tracker_test_fail_alloc(-1);
		if (!ret) {
			done = 1;	/* no failure injected any more: check results */
			DT_EXPECT_EQ(dac_tracker_nclients(t), (size_t)2);
			DT_EXPECT_EQ(dac_tracker_nprocs(t), (size_t)3);
		}
		/* Whatever happened, one more clean sample must work. */
		DT_ASSERT_EQ(dac_tracker_begin(t, 10 * SEC), 0);
		for (i = 0; i < 3; i++)
			DT_ASSERT_EQ(dac_tracker_add(t, 10 + i, 3, "c", DEV0, &fi[i]), 0);
		DT_ASSERT_EQ(dac_tracker_end(t), 0);
		DT_EXPECT_EQ(dac_tracker_nclients(t), (size_t)2);
		DT_EXPECT_EQ(dac_tracker_nprocs(t), (size_t)3);
		DT_EXPECT_EQ(dac_tk_agg_region(dac_tracker_totals(t), DEV0, "vram")->total, 4096u);
		dac_tracker_free(t);
		for (i = 0; i < 3; i++)
			dac_fdinfo_free(&fi[i]);
	}
	DT_EXPECT_TRUE(done);
	DT_EXPECT_GT(nth, 20);
}

/* Whole pipeline on a synthetic /proc: discovery, parsing, tracking. */
DT_TEST(sample_proc_synthetic_tree)
{
	struct dac_discover_opts o = { .fd = -1 };
	struct dac_discover_stats st;
	struct dac_tracker *t = dac_tracker_new();
	const struct dac_tk_client *c;
	const struct dac_tk_engine *e;
	uint64_t t0, t1, t2, t3;
	struct dac_discover *d;
	struct proc_tree pt;
	char text[256];

	DT_ASSERT_TRUE(t != NULL);
	DT_ASSERT_EQ(proc_tree_init(&pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 10, "parent"), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&pt, 11, "child"), 0);
	snprintf(text, sizeof(text), C7, 1000000000ull);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 10, 3, 226, 128, text), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 10, 4, 226, 128, text), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 11, 3, 226, 128, text), 0);
	/* A DRM fd whose driver prints no usage stats: not a client. */
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&pt, 11, 5, 226, 0, "pos: 0\nflags: 02\n"), 0);
	o.proc_root = pt.root;
	d = dac_discover_new(&o);
	DT_ASSERT_TRUE(d != NULL);
	t0 = dac_now_ns();
	DT_ASSERT_EQ(dac_tracker_sample_proc(t, d, DAC_PROFILE_CURRENT, t0, &st), 0);
	t1 = dac_now_ns();
	DT_EXPECT_EQ(st.drm_fds, 4u);
	DT_EXPECT_EQ(dac_tracker_nclients(t), (size_t)1);

	snprintf(text, sizeof(text), C7, 1750000000ull);
	for (int fd = 3; fd <= 4; fd++)
		DT_ASSERT_EQ(proc_tree_set_fdinfo(&pt, 10, fd, text), 0);
	DT_ASSERT_EQ(proc_tree_set_fdinfo(&pt, 11, 3, text), 0);
	usleep(100000);
	t2 = dac_now_ns();
	DT_ASSERT_EQ(dac_tracker_sample_proc(t, d, DAC_PROFILE_CURRENT, t2, &st), 0);
	t3 = dac_now_ns();
	DT_ASSERT_EQ(dac_tracker_nclients(t), (size_t)1);
	/*
	 * The fdinfo was read inside each call, so the client's interval lies
	 * in [t2 - t1, t3 - t0] and 750 ms of new busy time gives a utilisation
	 * between 0.75 s / (t3 - t0) and 0.75 s / (t2 - t1).
	 */
	c = dac_tracker_client(t, 0);
	DT_EXPECT_GE(c->interval_ns, t2 - t1);
	DT_EXPECT_LE(c->interval_ns, t3 - t0);
	e = eng(t, makedev(226, 128), 7, "render");
	DT_EXPECT_EQ(e->d_busy_ns, 750000000u);
	DT_EXPECT_GE(e->util, 0.75e9 / (double)(t3 - t0) - 1e-9);
	DT_EXPECT_LE(e->util, 0.75e9 / (double)(t2 - t1) + 1e-9);
	DT_EXPECT_EQ(c->nholders, (size_t)3);
	DT_EXPECT_EQ(dac_tracker_nprocs(t), (size_t)2);
	DT_EXPECT_STREQ(dac_tracker_proc(t, 1)->comm, "child");

	/* An allocation failure in the middle of a walk stops it and is returned. */
	dac_tracker_test_fail_alloc(0);
	DT_EXPECT_EQ(dac_tracker_sample_proc(t, d, DAC_PROFILE_CURRENT, dac_now_ns(), &st),
		     -ENOMEM);
	dac_tracker_test_fail_alloc(-1);
	DT_ASSERT_EQ(dac_tracker_sample_proc(t, d, DAC_PROFILE_CURRENT, dac_now_ns(), &st), 0);
	DT_EXPECT_EQ(dac_tracker_nclients(t), (size_t)1);
	DT_EXPECT_EQ(dac_tracker_client(t, 0)->nholders, (size_t)3);
	dac_discover_free(d);
	dac_tracker_free(t);
	proc_tree_cleanup(&pt);
}

DT_MAIN
