// SPDX-License-Identifier: MIT
/*
 * test_export_churn.c - the exporter's series stay bounded when clients
 * come and go: 10,000 short-lived clients, 100 open at a time, each for
 * one scrape. With --drop-after 2, no scrape has more than the 100 open
 * clients and the 100 that closed one scrape before; after two scrapes
 * without clients there is none left; and the device totals hold every
 * one of the 10,000 clients' busy time, cycles and jobs exactly, as
 * counters (never lower than the scrape before). In-process, through the
 * exporter's library layer (user/lib/prom.c) on a synthetic /proc tree.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "proc_tree.h"
#include "prom.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS		100
#define PER_ROUND	100

DT_FIXTURE(ch) {
	struct proc_tree pt;
	struct dac_prom *p;
};

DT_SETUP(ch)
{
	struct dac_discover_opts o = { .fd = -1 };

	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	o.proc_root = self->pt.root;
	self->p = dac_prom_new(&o, DAC_PROFILE_CURRENT);
	DT_ASSERT_NE(self->p, NULL);
}

DT_TEARDOWN(ch)
{
	dac_prom_free(self->p);
	proc_tree_cleanup(&self->pt);
}

/* One scrape; the text (malloc'd). */
static char *scrape(struct dac_prom *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	DT_ASSERT_NE(m, NULL);
	DT_ASSERT_EQ(dac_prom_scrape(p, m), 0);
	DT_ASSERT_EQ(fclose(m), 0);
	return buf;
}

static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0, l = strlen(prefix);

	for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
		if (!strncmp(s, prefix, l))
			n++;
	return n;
}

/* The value of the sample line starting with @prefix; ASSERTs it is there. */
static const char *value_of(const char *text, const char *prefix, char *buf, size_t len)
{
	const char *s = strstr(text, prefix), *sp, *nl;

	if (!s)
		DT_FAIL("no %s in the exposition", prefix);
	nl = strchr(s, '\n');
	DT_ASSERT_NE(nl, NULL);
	for (sp = nl; sp > s && sp[-1] != ' '; sp--)
		;
	snprintf(buf, len, "%.*s", (int)(nl - sp), sp);
	return buf;
}

/* Client i: busy i+1 ms, cycles 3i+7, jobs i+1 (driver key), 1 MiB. */
static void add_client(struct proc_tree *pt, unsigned int i)
{
	char text[512];
	pid_t pid = (pid_t)(1000 + i);

	snprintf(text, sizeof(text),
		 "drm-driver:\tsimgpu\ndrm-client-id:\t%u\n"
		 "drm-engine-render:\t%llu ns\ndrm-cycles-render:\t%u\n"
		 "simgpu-jobs-render:\t%u jobs\ndrm-total-system:\t1 MiB\n",
		 i + 1, (unsigned long long)(i + 1) * 1000000, 3 * i + 7, i + 1);
	DT_ASSERT_EQ(proc_tree_add_proc(pt, pid, "short"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(pt, pid, 3, 226, 128, text), 0);
}

static void remove_client(struct proc_tree *pt, unsigned int i)
{
	DT_ASSERT_EQ(proc_tree_remove(pt, (pid_t)(1000 + i), NULL), 0);
}

DT_TEST_F_TIMEOUT(ch, ten_thousand_short_lived_clients, 300)
{
	uint64_t busy_ns = 0, cycles = 0, jobs = 0, prev_busy_ms = 0;
	size_t max_clients = 0, max_lines = 0;
	char v[64], want[64], *t;

	DT_ASSERT_EQ(dac_prom_set_drop_after(self->p, 2), 0);
	for (unsigned int r = 0; r < ROUNDS; r++) {
		uint64_t busy_ms;

		for (unsigned int k = 0; k < PER_ROUND; k++) {
			unsigned int i = r * PER_ROUND + k;

			if (r)
				remove_client(&self->pt, i - PER_ROUND);
			add_client(&self->pt, i);
			busy_ns += (uint64_t)(i + 1) * 1000000u;
			cycles += 3 * (uint64_t)i + 7;
			jobs += i + 1;
		}
		t = scrape(self->p);
		/* open now, and at most those that closed one scrape ago */
		if (dac_prom_nseries_clients(self->p) > max_clients)
			max_clients = dac_prom_nseries_clients(self->p);
		DT_ASSERT_EQ(dac_prom_nseries_clients(self->p),
			     (size_t)(r ? 2 * PER_ROUND : PER_ROUND));
		DT_ASSERT_EQ(count_lines(t, "drmacct_client_info{"),
			     (size_t)(r ? 2 * PER_ROUND : PER_ROUND));
		/* memory only of the open ones */
		DT_ASSERT_EQ(count_lines(t, "drmacct_client_memory_bytes{"), (size_t)PER_ROUND);
		DT_EXPECT_STREQ(value_of(t, "drmacct_clients{", v, sizeof(v)), "100");
		DT_EXPECT_STREQ(value_of(t, "drmacct_device_memory_bytes{", v, sizeof(v)),
				"104857600");
		if (count_lines(t, "drmacct_") > max_lines)
			max_lines = count_lines(t, "drmacct_");
		/* the device counter: a counter, and every client's busy time so far */
		value_of(t, "drmacct_device_engine_busy_seconds_total{", v, sizeof(v));
		busy_ms = (uint64_t)(strtod(v, NULL) * 1000 + 0.5);
		DT_ASSERT_GE(busy_ms, prev_busy_ms);
		prev_busy_ms = busy_ms;
		DT_ASSERT_EQ(busy_ms, busy_ns / 1000000);
		snprintf(want, sizeof(want), "%u", r ? (r - 1) * PER_ROUND : 0);
		DT_EXPECT_STREQ(value_of(t, "drmacct_device_clients_closed_total{", v, sizeof(v)),
				want);
		free(t);
	}
	/* All 10,000 close: two scrapes later no client series is left. */
	for (unsigned int k = 0; k < PER_ROUND; k++)
		remove_client(&self->pt, (ROUNDS - 1) * PER_ROUND + k);
	t = scrape(self->p);
	DT_EXPECT_EQ(dac_prom_nseries_clients(self->p), (size_t)PER_ROUND);
	free(t);
	t = scrape(self->p);
	DT_EXPECT_EQ(dac_prom_nseries_clients(self->p), (size_t)0);
	DT_EXPECT_EQ(count_lines(t, "drmacct_client_"), (size_t)0);
	DT_EXPECT_STREQ(value_of(t, "drmacct_clients{", v, sizeof(v)), "0");
	snprintf(want, sizeof(want), "%" PRIu64 ".%09" PRIu64, busy_ns / 1000000000u,
		 busy_ns % 1000000000u);
	DT_EXPECT_STREQ(value_of(t, "drmacct_device_engine_busy_seconds_total{", v, sizeof(v)),
			want);
	snprintf(want, sizeof(want), "%" PRIu64, cycles);
	DT_EXPECT_STREQ(value_of(t, "drmacct_device_engine_cycles_total{", v, sizeof(v)), want);
	snprintf(want, sizeof(want), "%" PRIu64, jobs);
	DT_EXPECT_STREQ(value_of(t, "drmacct_device_engine_jobs_total{", v, sizeof(v)), want);
	DT_EXPECT_STREQ(value_of(t, "drmacct_device_clients_closed_total{", v, sizeof(v)),
			"10000");
	/* no memory series without open clients */
	DT_EXPECT_EQ(count_lines(t, "drmacct_device_memory_bytes{"), (size_t)0);
	printf("# %u clients: at most %zu with series, at most %zu sample lines per scrape; "
	       "now %zu lines\n", ROUNDS * PER_ROUND, max_clients, max_lines,
	       count_lines(t, "drmacct_"));
	free(t);
}

/* --drop-after 1 drops at the first scrape without the client (0 is refused). */
DT_TEST_F(ch, drop_after_one)
{
	char *t;

	DT_EXPECT_EQ(dac_prom_set_drop_after(self->p, 0), -EINVAL);
	DT_ASSERT_EQ(dac_prom_set_drop_after(self->p, 1), 0);
	add_client(&self->pt, 0);
	free(scrape(self->p));
	DT_EXPECT_EQ(dac_prom_nseries_clients(self->p), (size_t)1);
	remove_client(&self->pt, 0);
	t = scrape(self->p);
	DT_EXPECT_EQ(dac_prom_nseries_clients(self->p), (size_t)0);
	EXPECT_HAS(t, "drmacct_device_engine_busy_seconds_total{driver=\"simgpu\","
		   "device=\"renderD128\",engine=\"render\"} 0.001000000\n");
	free(t);
}

/*
 * A client that goes missing for one scrape and comes back keeps its one
 * series (drop-after 2), its counter held at the largest value seen.
 */
DT_TEST_F(ch, back_within_drop_after)
{
	char *t;

	add_client(&self->pt, 4);	/* busy 5 ms */
	free(scrape(self->p));
	remove_client(&self->pt, 4);
	t = scrape(self->p);
	EXPECT_HAS(t, "drmacct_client_engine_busy_seconds_total{driver=\"simgpu\","
		   "device=\"renderD128\",client_id=\"5\",engine=\"render\"} 0.005000000\n");
	DT_EXPECT_EQ(count_lines(t, "drmacct_client_memory_bytes{"), (size_t)0);
	free(t);
	add_client(&self->pt, 4);
	t = scrape(self->p);
	DT_EXPECT_EQ(dac_prom_nseries_clients(self->p), (size_t)1);
	EXPECT_HAS(t, "drmacct_device_clients_closed_total{driver=\"simgpu\","
		   "device=\"renderD128\"} 0\n");
	EXPECT_HAS(t, "drmacct_device_engine_busy_seconds_total{driver=\"simgpu\","
		   "device=\"renderD128\",engine=\"render\"} 0.005000000\n");
	free(t);
}

/* The text dac_prom_save() writes of @p (malloc'd). */
static char *saved(const struct dac_prom *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	DT_ASSERT_NE(m, NULL);
	DT_ASSERT_EQ(dac_prom_save(p, m), 0);
	DT_ASSERT_EQ(fclose(m), 0);
	return buf;
}

static int load_text(struct dac_prom *p, const char *text, size_t *bad)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	DT_ASSERT_NE(f, NULL);
	ret = dac_prom_load(p, f, bad);
	fclose(f);
	return ret;
}

/*
 * The state (export --state) round-trips: saved, loaded into a new
 * exporter and saved again it is the same text, names with a tab, a
 * newline and a backslash included; and the next scrape goes on from it.
 */
DT_TEST_F(ch, state_round_trip)
{
	struct dac_discover_opts o = { .proc_root = self->pt.root, .fd = -1 };
	struct dac_prom *q = dac_prom_new(&o, DAC_PROFILE_CURRENT);
	char *a, *b, *t;
	size_t bad = 99;

	DT_ASSERT_NE(q, NULL);
	add_client(&self->pt, 0);
	add_client(&self->pt, 1);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 50, "tab\there\nnl\\bs"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 50, 4, 226, 129,
					  "drm-driver:\tv3d\ndrm-engine-bin:\t7 ns\n"), 0);
	free(scrape(self->p));
	remove_client(&self->pt, 1);
	free(scrape(self->p));		/* client 2 lingers */
	a = saved(self->p);
	DT_ASSERT_EQ(load_text(q, a, &bad), 0);
	DT_EXPECT_EQ(bad, (size_t)0);
	DT_EXPECT_EQ(dac_prom_nseries_clients(q), (size_t)3);
	b = saved(q);
	DT_EXPECT_STREQ(b, a);
	/* the next scrape of the loaded one drops client 2 into the total */
	t = scrape(q);
	EXPECT_HAS(t, "drmacct_device_engine_busy_seconds_total{driver=\"simgpu\","
		   "device=\"renderD128\",engine=\"render\"} 0.003000000\n");
	EXPECT_HAS(t, "drmacct_device_clients_closed_total{driver=\"simgpu\","
		   "device=\"renderD128\"} 1\n");
	EXPECT_HAS(t, "comm=\"tab\there\\nnl\\\\bs\"");
	free(t);
	free(a);
	free(b);
	dac_prom_free(q);
}

/* Every way a state can be broken: -EINVAL with its line, nothing kept. */
DT_TEST_F(ch, state_load_errors)
{
	static const struct {
		const char *text;
		size_t line;
	} cases[] = {
		{ "", 0 },
		{ "nope\n", 1 },
		{ "drmacct-export-state 2\n", 1 },
		{ "drmacct-export-state 1", 1 },			/* cut short */
		{ "drmacct-export-state 1\nfoo\n", 2 },
		{ "drmacct-export-state 1\nretired\t1\t2\t3\t111\t=render\n", 2 },
		{ "drmacct-export-state 1\nengine\t1\t2\t3\t4\t1\t0\t11110\t=r\n", 2 },
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=simgpu\t-\n"
		  "device\t57472\t0\t=simgpu\t-\n", 3 },		/* twice */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=simgpu\n", 2 },	/* a field short */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=simgpu\t-\tx\n", 2 },	/* one more */
		{ "drmacct-export-state 1\ndevice\t-1\t0\t=simgpu\t-\n", 2 },
		{ "drmacct-export-state 1\ndevice\t99999999999999999999\t0\t=s\t-\n", 2 },
		{ "drmacct-export-state 1\ndevice\t57472\t0\tsimgpu\t-\n", 2 },	/* no = */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=a\\q\t-\n", 2 },	/* escape */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "retired\t1\t2\t3\t121\t=render\n", 3 },		/* flag 2 */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "client\t57473\t1\t7\t0\t100\t=s\t=c\t=100:3\t-\n", 3 },	/* no such device */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "client\t57472\t1\t8\t0\t100\t=s\t=c\t=100:3\t-\n"
		  "client\t57472\t1\t7\t0\t100\t=s\t=c\t=100:3\t-\n", 4 },	/* order */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "client\t57472\t2\t7\t0\t100\t=s\t=c\t=100:3\t-\n", 3 },	/* has_id 2 */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "client\t57472\t1\t7\t0\t100\t-\t=c\t=100:3\t-\n", 3 },	/* no driver */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "client\t57472\t1\t7\t0\t100\t=s\t=c\t=100:3\t-\n"
		  "engine\t1\t2\t3\t4\t1\t0\t1111\t=r\n", 4 },		/* 4 flags */
		{ "drmacct-export-state 1\ndevice\t57472\t0\t=s\t-\n"
		  "client\t57472\t1\t7\t0\t100\t=s\t=c\t=100:3\t-\n"
		  "engine\t1\t2\t3\t4\t1\t0\t11111\t-\n", 4 },		/* no name */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t bad = 99;
		int ret = load_text(self->p, cases[i].text, &bad);

		if (ret != -EINVAL || bad != cases[i].line)
			DT_FAIL("case %zu: %d at line %zu, want -EINVAL at line %zu", i, ret, bad,
				cases[i].line);
		DT_EXPECT_EQ(dac_prom_nseries_clients(self->p), (size_t)0);
	}
	/* a good one after all that */
	{
		size_t bad = 99;

		DT_EXPECT_EQ(load_text(self->p, "drmacct-export-state 1\n"
				       "device\t57984\t3\t=simgpu\t-\n"
				       "retired\t5\t0\t0\t100\t=render\n", &bad), 0);
		add_client(&self->pt, 0);
		{
			char *t = scrape(self->p);

			EXPECT_HAS(t, "drmacct_device_engine_busy_seconds_total{driver=\"simgpu\","
				   "device=\"renderD128\",engine=\"render\"} 0.001000005\n");
			EXPECT_HAS(t, "drmacct_device_clients_closed_total{driver=\"simgpu\","
				   "device=\"renderD128\"} 3\n");
			free(t);
		}
	}
}

DT_MAIN
