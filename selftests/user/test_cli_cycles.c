// SPDX-License-Identifier: MIT
/*
 * test_cli_cycles.c - engines that print cycles but no busy time, as xe
 * does (drm-cycles-<e> and drm-total-cycles-<e>, no drm-engine-<e>), and
 * engine capacity per client, on synthetic /proc trees.
 *
 * The fdinfo of the xe client is a FIFO fed one text per read
 * (proc_tree_feed()): the first read sees cycles 1000 of 10000 total, every
 * later one 4000 of 20000 on rcs and 6000 of 20000 on vcs (capacity 2). So
 * rcs is exactly 30 % busy between any two samples, and vcs 30 % of its
 * two instances, whatever the timing; a command that took busy time where
 * there is none would show 0 or nothing.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_run.h"
#include "dtest.h"
#include "json_dom.h"
#include "proc_tree.h"

#define XE_HEAD \
	"pos:\t0\n" \
	"flags:\t02100002\n" \
	"drm-driver:\txe\n" \
	"drm-client-id:\t8\n" \
	"drm-pdev:\t0000:00:02.0\n" \
	"drm-total-gtt:\t192 KiB\n" \
	"drm-resident-gtt:\t192 KiB\n"

/* rcs @c of @t, bcs 0 of @t, vcs @v of @t (capacity 2) */
#define XE(c, v, t) XE_HEAD \
	"drm-cycles-rcs:\t" c "\n" \
	"drm-total-cycles-rcs:\t" t "\n" \
	"drm-cycles-bcs:\t0\n" \
	"drm-total-cycles-bcs:\t" t "\n" \
	"drm-cycles-vcs:\t" v "\n" \
	"drm-total-cycles-vcs:\t" t "\n" \
	"drm-engine-capacity-vcs:\t2\n"

static const char *const xe_texts[] = {
	XE("1000", "0", "10000"),
	XE("4000", "6000", "20000"),
};

DT_FIXTURE(xe) {
	struct proc_tree pt;
	pid_t feeder;
};

DT_SETUP(xe)
{
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 300, "xeapp"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 300, 4, 226, 129, xe_texts[0]), 0);
	self->feeder = 0;
}

DT_TEARDOWN(xe)
{
	if (self->feeder > 0)
		proc_tree_feed_stop(self->feeder);
	proc_tree_cleanup(&self->pt);
}

/* A fresh feeder: the next read is the first. */
static void refeed(struct proc_tree *pt, pid_t *feeder)
{
	if (*feeder > 0)
		DT_ASSERT_EQ(proc_tree_feed_stop(*feeder), 0);
	*feeder = proc_tree_feed(pt, 300, 4, xe_texts, 2, NULL, NULL);
	DT_ASSERT_GT(*feeder, 0);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

DT_TEST_F(xe, list_shows_utilisation_from_cycles)
{
	struct cli_result r;
	const struct jd *e;
	struct jd *j;

	refeed(&self->pt, &self->feeder);
	cli_run(&r, "list", "-i", "20ms", "--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "    rcs              cycles 4000  util  30.0% (cycles/total-cycles)\n");
	EXPECT_HAS(r.out, "    vcs              cycles 6000  util  30.0% (cycles/total-cycles)"
			  "  capacity 2\n");
	DT_EXPECT_EQ(count(r.out, "busy"), 0);	/* no busy time is printed: none is shown */
	cli_result_free(&r);

	refeed(&self->pt, &self->feeder);
	cli_run(&r, "list", "-i", "20ms", "-p", "--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "    renderD129 rcs              cycles 4000  util  30.0%\n");
	EXPECT_HAS(r.out, "    renderD129 vcs              cycles 6000  util  30.0%\n");
	DT_EXPECT_EQ(count(r.out, "busy"), 0);
	cli_result_free(&r);

	refeed(&self->pt, &self->feeder);
	cli_run(&r, "list", "-i", "20ms", "--json", "--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	e = jd_find_str(j, "clients.0.engines", "name", "vcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_TRUE(jd_get(e, "busy_ns") == NULL);
	DT_EXPECT_EQ(jd_u64(e, "delta_cycles", 0), 6000ull);
	DT_EXPECT_EQ(jd_u64(e, "delta_total_cycles", 0), 10000ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.3) < 1e-9);
	DT_EXPECT_STREQ(jd_str(e, "utilization_source"), "cycles/total-cycles");
	jd_free(j);
	cli_result_free(&r);
}

/* top's snapshots: the device's line and the client's engines, from cycles. */
DT_TEST_F(xe, top_snapshots_from_cycles)
{
	struct cli_result r;

	refeed(&self->pt, &self->feeder);
	cli_run(&r, "top", "-b", "-n", "1", "-i", "20ms", "--proc-root", self->pt.root, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "\nrenderD129 xe: GPU 30.0% (rcs); rcs 30.0%, bcs 0.0%, vcs 30.0%; "
			  "memory gtt 192K\n");
	EXPECT_HAS(r.out, "    rcs              cycles 4000  util  30.0% (cycles/total-cycles)\n");
	DT_EXPECT_EQ(count(r.out, "busy"), 0);
	cli_result_free(&r);
}

/*
 * check compares busy time with BPF's; cycles are not busy time. Without
 * BPF (this host) one look is enough to say there is nothing to compare.
 */
DT_TEST_F(xe, check_names_cycles_only_engines)
{
	struct cli_result r;
	struct jd *j;

	refeed(&self->pt, &self->feeder);
	cli_run(&r, "check", "--proc-root", self->pt.root, "-d", "/nonexistent/drmacct-bpf", NULL);
	DT_EXPECT_EQ(r.status, 4);
	EXPECT_HAS(r.out, "nothing to compare: 3 client-engines print cycles but no busy time");
	cli_result_free(&r);

	refeed(&self->pt, &self->feeder);
	cli_run(&r, "check", "--json", "--proc-root", self->pt.root, "-d",
		"/nonexistent/drmacct-bpf", NULL);
	DT_EXPECT_EQ(r.status, 4);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_STREQ(jd_str(j, "result"), "nothing");
	DT_EXPECT_EQ(jd_len(j, "cycles_only"), 3);
	DT_EXPECT_STREQ(jd_str(j, "cycles_only.2.engine"), "vcs");
	DT_EXPECT_EQ(jd_u64(j, "cycles_only.0.client_id", 0), 8ull);
	jd_free(j);
	cli_result_free(&r);

	/* a client with busy time needs BPF: that is an error without it */
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 301, "gfx"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 301, 3, 226, 128,
					  "drm-driver:\tsimgpu\ndrm-client-id:\t9\n"
					  "drm-engine-render:\t5 ns\n"), 0);
	refeed(&self->pt, &self->feeder);
	cli_run(&r, "check", "--proc-root", self->pt.root, "-d", "/nonexistent/drmacct-bpf", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot open the BPF collection at /nonexistent/drmacct-bpf");
	cli_result_free(&r);
}

/*
 * stat polls the command's clients: the command names pid 300 its child
 * (ROOT/300/stat) and waits until two reads were served after that.
 */
DT_TEST_F(xe, stat_utilisation_from_cycles)
{
	char stat_path[4200], gate[4200], done[4200], script[16384];
	struct cli_result r;
	struct jd *j;
	const struct jd *e;

	proc_tree_path(&self->pt, 300, "stat", stat_path, sizeof(stat_path));
	snprintf(gate, sizeof(gate), "%s/gate", self->pt.base);
	snprintf(done, sizeof(done), "%s/done", self->pt.base);
	self->feeder = proc_tree_feed(&self->pt, 300, 4, xe_texts, 2, gate, done);
	DT_ASSERT_GT(self->feeder, 0);
	snprintf(script, sizeof(script),
		 "echo \"300 (xeapp) S $$ 0 0\" > '%s' && touch '%s' && "
		 "while [ ! -e '%s' ]; do sleep 0.01; done", stat_path, gate, done);
	cli_run(&r, "stat", "--proc-root", self->pt.root, "-i", "10ms", "-j", "-o", "-", "--",
		"/bin/sh", "-c", script, NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_STREQ(r.err, "");	/* polling was asked for: no note about BPF */
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_STREQ(jd_str(j, "source"), "proc");
	e = jd_find_str(j, "engines", "name", "rcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_TRUE(jd_is_null(e, "busy_ns"));
	DT_EXPECT_EQ(jd_u64(e, "cycles", 0), 4000ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.3) < 1e-9);
	DT_EXPECT_STREQ(jd_str(e, "utilization_source"), "cycles/total-cycles");
	/* stat's utilisation is busy / elapsed, of all instances: 6000 of 10000 */
	e = jd_find_str(j, "engines", "name", "vcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.6) < 1e-9);
	jd_free(j);
	cli_result_free(&r);

	/* the text report: BUSY_NS "-", UTIL from cycles, marked */
	DT_ASSERT_EQ(proc_tree_feed_stop(self->feeder), 0);
	unlink(gate);
	unlink(done);
	unlink(stat_path);
	self->feeder = proc_tree_feed(&self->pt, 300, 4, xe_texts, 2, gate, done);
	DT_ASSERT_GT(self->feeder, 0);
	cli_run(&r, "stat", "--proc-root", self->pt.root, "-i", "10ms", "-o", "-", "--",
		"/bin/sh", "-c", script, NULL);
	DT_EXPECT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "  129    rcs                           -  30.00%*        -             4000\n");
	EXPECT_HAS(r.out, "  * no busy time printed (xe): cycles over the engine's total cycles");
	cli_result_free(&r);
}

/*
 * record/report: the xe client's utilisation from cycles, and capacity per
 * client. Clients 10 and 11 of one device each ran copy for 1 s between
 * the samples; 10 prints drm-engine-capacity-copy 2, 11 prints none
 * (capacity 1). Each is measured against its own capacity: 11's
 * utilisation is twice 10's (with the device's capacity both were equal).
 */
DT_TEST_F(xe, record_report_cycles_and_capacity_per_client)
{
	static const char *const c10[] = {
		"drm-driver:\tsimgpu\ndrm-client-id:\t10\ndrm-engine-copy:\t0 ns\n"
		"drm-engine-capacity-copy:\t2\n",
		"drm-driver:\tsimgpu\ndrm-client-id:\t10\ndrm-engine-copy:\t1000000000 ns\n"
		"drm-engine-capacity-copy:\t2\n",
	};
	static const char *const c11[] = {
		"drm-driver:\tsimgpu\ndrm-client-id:\t11\ndrm-engine-copy:\t0 ns\n",
		"drm-driver:\tsimgpu\ndrm-client-id:\t11\ndrm-engine-copy:\t1000000000 ns\n",
	};
	char out[4200];
	struct cli_result r;
	const struct jd *c, *e, *c10e, *c11e, *e10, *e11;
	struct jd *j;
	pid_t f10, f11;
	double s10, s11;

	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 310, "ten"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 310, 3, 226, 128, c10[0]), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 311, "eleven"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 311, 3, 226, 128, c11[0]), 0);
	f10 = proc_tree_feed(&self->pt, 310, 3, c10, 2, NULL, NULL);
	f11 = proc_tree_feed(&self->pt, 311, 3, c11, 2, NULL, NULL);
	DT_ASSERT_GT(f10, 0);
	DT_ASSERT_GT(f11, 0);
	refeed(&self->pt, &self->feeder);
	snprintf(out, sizeof(out), "%s/cyc.rec", self->pt.base);
	cli_run(&r, "record", "--no-bpf", "--proc-root", self->pt.root, "-o", out, "-i", "50ms",
		"--", "sleep", "0.1", NULL);
	DT_EXPECT_EQ(r.status, 0);
	cli_result_free(&r);
	proc_tree_feed_stop(f10);
	proc_tree_feed_stop(f11);

	cli_run(&r, "report", "--json", out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_EQ(jd_int(j, "version_minor", -1), 2);
	c = jd_find_u64(j, "clients", "client_id", 8);
	DT_ASSERT_TRUE(c != NULL);
	e = jd_find_str(c, "engines", "name", "rcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_TRUE(jd_is_null(e, "busy_ns"));
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.3) < 1e-9);
	DT_EXPECT_STREQ(jd_str(e, "utilization_source"), "cycles/total-cycles");
	DT_EXPECT_EQ(jd_u64(e, "cycles", 0), 3000ull);
	DT_EXPECT_EQ(jd_u64(e, "total_cycles", 0), 10000ull);
	e = jd_find_str(c, "engines", "name", "vcs");
	DT_ASSERT_TRUE(e != NULL);
	DT_EXPECT_EQ(jd_u64(e, "capacity", 0), 2ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.3) < 1e-9);

	c10e = jd_find_u64(j, "clients", "client_id", 10);
	c11e = jd_find_u64(j, "clients", "client_id", 11);
	e10 = jd_find_str(c10e, "engines", "name", "copy");
	e11 = jd_find_str(c11e, "engines", "name", "copy");
	DT_ASSERT_TRUE(e10 != NULL && e11 != NULL);
	DT_EXPECT_EQ(jd_u64(e10, "capacity", 0), 2ull);
	DT_EXPECT_EQ(jd_u64(e11, "capacity", 0), 1ull);
	DT_EXPECT_EQ(jd_u64(e10, "busy_ns", 0), 1000000000ull);
	DT_EXPECT_EQ(jd_u64(e11, "busy_ns", 0), 1000000000ull);
	/*
	 * Each client's utilisation is its busy time over its own sampled span
	 * (the engine is in every sample of its client) divided by its own
	 * capacity. The spans can differ by a sample when the machine is
	 * loaded, so each is checked against its own span: exact but for the
	 * JSON's rounding of the utilisation to 6 significant digits (at most
	 * 5e-6 relative; 1e-5 admitted).
	 */
	s10 = (double)(jd_u64(c10e, "last_ns", 0) - jd_u64(c10e, "first_ns", 0));
	s11 = (double)(jd_u64(c11e, "last_ns", 0) - jd_u64(c11e, "first_ns", 0));
	DT_ASSERT_TRUE(s10 > 0 && s11 > 0);
	DT_EXPECT_TRUE(fabs(jd_num(e10, "utilization", 0) * s10 * 2 / 1e9 - 1.0) < 1e-5);
	DT_EXPECT_TRUE(fabs(jd_num(e11, "utilization", 0) * s11 / 1e9 - 1.0) < 1e-5);
	jd_free(j);
	cli_result_free(&r);

	cli_run(&r, "report", out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "    rcs              busy            -    avg  30.00% "
			  "(cycles/total-cycles)  cycles 3000\n");
	EXPECT_HAS(r.out, "    vcs              busy            -    avg  30.00% "
			  "(cycles/total-cycles)  capacity 2  cycles 6000\n");
	EXPECT_HAS(r.out, "  xeapp[300]: 1 client\n    renderD129 rcs              busy            -"
			  "    cycles 3000\n");
	cli_result_free(&r);
	unlink(out);
}

DT_MAIN
