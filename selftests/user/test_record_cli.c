// SPDX-License-Identifier: MIT
/*
 * test_record_cli.c - `drmacct record` and `drmacct report` on synthetic
 * /proc trees: what the stream holds (checked with the decoder against the
 * fdinfo text), busy time over a recording while a command changes the
 * counters, clients that open during the recording, report output in text,
 * JSON and trace-event form, and damaged files reported with offsets.
 */
#define _GNU_SOURCE
#include "cli_run.h"
#include "dtest.h"
#include "json_dom.h"
#include "proc_tree.h"
#include "prom_util.h"
#include "record.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FD_A(busy) \
	"pos:\t0\n" \
	"drm-driver:\tsimgpu\n" \
	"drm-client-id:\t7\n" \
	"drm-engine-render:\t" busy " ns\n" \
	"drm-engine-copy:\t20 ns\n" \
	"drm-engine-capacity-copy:\t2\n" \
	"drm-cycles-render:\t555\n" \
	"drm-maxfreq-render:\t1000 MHz\n" \
	"drm-total-system:\t8 MiB\n" \
	"drm-resident-system:\t4 MiB\n"

DT_FIXTURE(rc) {
	struct proc_tree pt;
	char out[2100];
	char dir[2100];
};

DT_SETUP(rc)
{
	DT_ASSERT_EQ(proc_tree_init(&self->pt, PROC_TREE_DEVCHAR), 0);
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 100, "app"), 0);
	DT_ASSERT_EQ(proc_tree_add_drm_fd(&self->pt, 100, 5, 226, 128, FD_A("1000000000")), 0);
	snprintf(self->out, sizeof(self->out), "%s/out.rec", self->pt.base);
	snprintf(self->dir, sizeof(self->dir), "%s", self->pt.base);
}

DT_TEARDOWN(rc)
{
	char p[2200];

	snprintf(p, sizeof(p), "%s/out.rec", self->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/trace.json", self->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/new.txt", self->dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/bad.rec", self->dir);
	unlink(p);
	proc_tree_cleanup(&self->pt);
}

static void load(const char *path, unsigned char **buf, size_t *len)
{
	DT_ASSERT_EQ(drec_read_file(path, buf, len), 0);
}

DT_TEST_F(rc, stream_holds_the_fdinfo_values)
{
	struct cli_result r;
	struct drec_reader rd;
	struct drec_record rec;
	const struct drec_device *d;
	unsigned char *buf;
	size_t len, n = 0;

	cli_run(&r, "record", "--no-bpf", "--proc-root", self->pt.root, "-o", self->out,
		"-i", "50ms", "-n", "3", NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.err, "3 samples, 4 records");	/* and the client's CAPACITY */
	cli_result_free(&r);

	load(self->out, &buf, &len);
	DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
	DT_EXPECT_EQ(rd.info.interval_ns, 50000000ull);
	DT_EXPECT_EQ(rd.info.flags & DREC_F_BPF, 0u);
	d = drec_device(&rd, 0);
	DT_ASSERT_NE(d, NULL);
	DT_EXPECT_STREQ(d->driver, "simgpu");
	DT_EXPECT_EQ(d->major, 226u);
	DT_EXPECT_EQ(d->minor, 128u);
	DT_ASSERT_EQ(d->nengines, (size_t)2);
	DT_EXPECT_STREQ(d->engines[0].name, "render");
	DT_EXPECT_EQ(d->engines[0].maxfreq_hz, 1000000000ull);
	DT_EXPECT_STREQ(d->engines[1].name, "copy");
	DT_EXPECT_EQ(d->engines[1].capacity, 2ull);
	DT_ASSERT_EQ(d->nregions, (size_t)1);
	/* before the client's first sample: the capacities it prints */
	DT_ASSERT_EQ(drec_next(&rd, &rec), 1);
	DT_ASSERT_EQ(rec.type, (uint32_t)DREC_CAPACITY);
	DT_EXPECT_EQ(rec.client.client_id, 7ull);
	DT_EXPECT_EQ(rec.count, 2ull);
	{
		struct drec_capacity cv;

		DT_ASSERT_TRUE(drec_capacity(&rec, 0, &cv));
		DT_EXPECT_EQ(cv.engine, 0u);
		DT_EXPECT_EQ(cv.capacity, 1ull);	/* render prints none */
		DT_ASSERT_TRUE(drec_capacity(&rec, 1, &cv));
		DT_EXPECT_EQ(cv.engine, 1u);
		DT_EXPECT_EQ(cv.capacity, 2ull);
	}
	while (drec_next(&rd, &rec) == 1) {
		struct drec_engine_val e;
		struct drec_region_val g;

		DT_ASSERT_EQ(rec.type, (uint32_t)DREC_SAMPLE);
		DT_EXPECT_EQ(rec.client.client_id, 7ull);
		DT_EXPECT_EQ(rec.client.pid, 100u);
		DT_EXPECT_STREQ(rec.client.comm, "app");
		DT_EXPECT_GE(rec.client.time_ns, rd.info.start_mono_ns);
		DT_ASSERT_TRUE(drec_client_engine(&rec, 0, &e));
		DT_EXPECT_EQ(e.busy_ns, 1000000000ull);
		DT_EXPECT_EQ(e.cycles, 555ull);
		DT_EXPECT_EQ(e.flags, (uint32_t)(DREC_E_BUSY | DREC_E_CYCLES));
		DT_ASSERT_TRUE(drec_client_engine(&rec, 1, &e));
		DT_EXPECT_EQ(e.busy_ns, 20ull);
		DT_ASSERT_TRUE(drec_client_region(&rec, 0, &g));
		DT_EXPECT_EQ(g.total, 8388608ull);
		DT_EXPECT_EQ(g.resident, 4194304ull);
		n++;
	}
	DT_EXPECT_EQ(n, (size_t)3);
	DT_EXPECT_EQ(rd.nproblems, (size_t)0);
	drec_reader_free(&rd);
	free(buf);
}

/*
 * A command changes the client's counters and opens a second client with a
 * new engine while `record -- CMD` runs; the report shows exactly the busy
 * time that accrued during the recording.
 */
DT_TEST_F_TIMEOUT(rc, record_a_command_and_report, 60)
{
	static char script[32768];
	char newp[2200], tmpp[4200], fdinfo[4096], ffd[4096], cfd[4200], cinfo[4096];
	const struct jd *c, *e;
	struct cli_result r;
	struct jd *doc;
	FILE *f;

	snprintf(newp, sizeof(newp), "%s/new.txt", self->dir);
	f = fopen(newp, "w");
	DT_ASSERT_NE(f, NULL);
	fputs(FD_A("1500000000"), f);
	fputs("drm-engine-video:\t77 ns\n", f);
	fclose(f);
	proc_tree_path(&self->pt, 100, "fdinfo/5", fdinfo, sizeof(fdinfo));
	snprintf(tmpp, sizeof(tmpp), "%s.tmp", fdinfo);
	/* the second client: pid 200, fd 6, opened during the recording */
	DT_ASSERT_EQ(proc_tree_add_proc(&self->pt, 200, "late"), 0);
	proc_tree_path(&self->pt, 200, "fd/6", ffd, sizeof(ffd));
	proc_tree_path(&self->pt, 200, "fdinfo/6", cinfo, sizeof(cinfo));
	snprintf(cfd, sizeof(cfd), "%s.tmp", cinfo);
	snprintf(script, sizeof(script),
		 "sleep 0.3; cp '%s' '%s' && mv '%s' '%s' && "
		 "printf 'drm-driver:\\tsimgpu\\ndrm-client-id:\\t9\\n"
		 "drm-engine-render:\\t250000000 ns\\n' > '%s' && mv '%s' '%s' && "
		 "ln -s /dev/char/226:128 '%s'; sleep 0.3",
		 newp, tmpp, tmpp, fdinfo, cfd, cfd, cinfo, ffd);
	cli_run(&r, "record", "--no-bpf", "--proc-root", self->pt.root, "-o", self->out,
		"-i", "100ms", "--", "/bin/sh", "-c", script, NULL);
	DT_ASSERT_EQ(r.status, 0);
	DT_EXPECT_EQ(strstr(r.err, "BPF collection not available"), NULL);
	cli_result_free(&r);

	cli_run(&r, "report", "--json", self->out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	/* client 7: render 1.0 s -> 1.5 s during the recording */
	c = jd_find_u64(doc, "clients", "client_id", 7);
	DT_ASSERT_NE(c, NULL);
	e = jd_find_str(c, "engines", "name", "render");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 500000000ull);
	DT_EXPECT_EQ(jd_u64(e, "busy_ns_final", 0), 1500000000ull);
	e = jd_find_str(c, "engines", "name", "copy");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 1), 0ull);
	DT_EXPECT_EQ(jd_u64(e, "busy_ns_final", 0), 20ull);
	DT_EXPECT_NE(jd_find_str(c, "engines", "name", "video"), NULL);
	DT_EXPECT_EQ(jd_u64(jd_find_str(c, "memory", "region", "system"), "peak_total", 0),
		     8388608ull);
	/* client 9 opened during the recording: all of its 250 ms count */
	c = jd_find_u64(doc, "clients", "client_id", 9);
	DT_ASSERT_NE(c, NULL);
	DT_EXPECT_STREQ(jd_str(c, "processes.0.comm"), "late");
	DT_EXPECT_EQ(jd_u64(c, "processes.0.pid", 0), 200ull);
	e = jd_find_str(c, "engines", "name", "render");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 250000000ull);
	DT_EXPECT_EQ(jd_len(doc, "clients"), 2);
	DT_EXPECT_EQ(jd_len(doc, "problems"), 0);
	jd_free(doc);
	cli_result_free(&r);

	cli_run(&r, "report", self->out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "client 7 on renderD128 (simgpu): app[100]");
	EXPECT_HAS(r.out, "client 9 on renderD128 (simgpu): late[200]");
	EXPECT_HAS(r.out, "busy     0.500000 s");
	EXPECT_HAS(r.out, "busy     0.250000 s");
	EXPECT_HAS(r.out, "Processes: 2\n  app[100]: 1 client\n");
	cli_result_free(&r);
}

DT_TEST_F(rc, trace_events)
{
	char trace[2200], *text = NULL;
	struct cli_result r;
	size_t len = 0;
	const struct jd *ev, *m;
	int nr = 0, nc = 0, nm = 0;
	struct jd *doc;
	FILE *f;

	cli_run(&r, "record", "--no-bpf", "--proc-root", self->pt.root, "-o", self->out,
		"-i", "20ms", "-n", "4", NULL);
	DT_ASSERT_EQ(r.status, 0);
	cli_result_free(&r);
	snprintf(trace, sizeof(trace), "%s/trace.json", self->dir);
	cli_run(&r, "report", "--trace-events", trace, self->out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	EXPECT_HAS(r.out, "client 7 on renderD128");	/* text summary still on stdout */
	cli_result_free(&r);
	f = fopen(trace, "r");
	DT_ASSERT_NE(f, NULL);
	DT_ASSERT_GT(getdelim(&text, &len, '\0', f), 0);
	fclose(f);
	doc = jd_parse(text);
	DT_ASSERT_NE(doc, NULL);
	DT_EXPECT_STREQ(jd_str(doc, "displayTimeUnit"), "ms");
	ev = jd_path(doc, "traceEvents");
	DT_ASSERT_TRUE(ev && ev->type == JD_ARR);
	m = jd_find_str(doc, "traceEvents", "name", "process_name");
	DT_EXPECT_STREQ(jd_str(m, "ph"), "M");
	DT_EXPECT_EQ(jd_u64(m, "pid", 0), 1ull);
	DT_EXPECT_STREQ(jd_str(m, "args.name"), "client 7 renderD128 app[100]");
	/* a counter track per engine of the client: 3 intervals each, idle */
	for (size_t i = 0; i < ev->n; i++) {
		const struct jd *x = &ev->kids[i];
		const char *name = jd_str(x, "name"), *ph = jd_str(x, "ph");

		if (!name || !ph || strcmp(ph, "C"))
			continue;
		if (!strcmp(name, "render") || !strcmp(name, "copy")) {
			*(!strcmp(name, "render") ? &nr : &nc) += 1;
			DT_EXPECT_EQ(jd_len(x, "args"), 1);
			DT_EXPECT_EQ(jd_int(x, "args.util %", -1), 0);
			DT_EXPECT_EQ(jd_u64(x, "pid", 0), 1ull);
		} else if (!strcmp(name, "memory system")) {
			nm++;
			DT_EXPECT_EQ(jd_u64(x, "args.bytes", 0), 8388608ull);
		}
	}
	DT_EXPECT_EQ(nr, 3);
	DT_EXPECT_EQ(nc, 3);
	DT_EXPECT_GT(nm, 0);
	jd_free(doc);
	free(text);
}

/* Damage: the report goes on, says where, and exits 1. */
DT_TEST_F(rc, damaged_files)
{
	char bad[2200], msg[128];
	unsigned char *buf;
	size_t len, second;
	struct cli_result r;
	const struct jd *pb;
	struct jd *doc;
	FILE *f;

	cli_run(&r, "record", "--no-bpf", "--proc-root", self->pt.root, "-o", self->out,
		"-i", "20ms", "-n", "3", NULL);
	DT_ASSERT_EQ(r.status, 0);
	cli_result_free(&r);
	load(self->out, &buf, &len);
	snprintf(bad, sizeof(bad), "%s/bad.rec", self->dir);
	/* the offset of the second SAMPLE (a CAPACITY record comes first) */
	{
		struct drec_reader rd;
		struct drec_record rec;
		int k = 0;

		second = 0;
		DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
		while (drec_next(&rd, &rec) == 1)
			if (rec.type == DREC_SAMPLE && ++k == 2)
				second = (size_t)rec.offset;
		drec_reader_free(&rd);
		DT_ASSERT_NE(second, (size_t)0);
	}
	{
		unsigned char s6 = buf[second + 6], s7 = buf[second + 7];

		buf[second + 6] = 4;	/* size 4 */
		buf[second + 7] = 0;
		f = fopen(bad, "w");
		DT_ASSERT_NE(f, NULL);
		DT_ASSERT_EQ(fwrite(buf, 1, len, f), len);
		fclose(f);
		buf[second + 6] = s6;
		buf[second + 7] = s7;
	}
	cli_run(&r, "report", "--json", bad, NULL);
	DT_EXPECT_EQ(r.status, 1);
	snprintf(msg, sizeof(msg), "offset %zu: corrupt: record size 4 is smaller than the "
		 "record header", second);
	EXPECT_HAS(r.err, msg);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	DT_EXPECT_EQ(jd_u64(doc, "clients.0.samples", 0), 2ull);	/* the other two recovered */
	pb = jd_find_u64(doc, "problems", "offset", second);
	DT_ASSERT_NE(pb, NULL);
	DT_EXPECT_TRUE(jd_str(pb, "message") &&
		       strstr(jd_str(pb, "message"), "smaller than the record header"));
	jd_free(doc);
	cli_result_free(&r);

	/* truncated in the middle of the last record */
	f = fopen(bad, "w");
	DT_ASSERT_NE(f, NULL);
	DT_ASSERT_EQ(fwrite(buf, 1, len - 13, f), len - 13);
	fclose(f);
	cli_run(&r, "report", bad, NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, ": truncated: sample record of");
	EXPECT_HAS(r.out, "2 samples over");	/* of 3 */
	cli_result_free(&r);

	/* not a stream at all */
	f = fopen(bad, "w");
	DT_ASSERT_NE(f, NULL);
	fputs("hello, this is not a record file\n", f);
	fclose(f);
	cli_run(&r, "report", bad, NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "offset 0: corrupt: not a drmacct record stream (bad magic)");
	DT_EXPECT_STREQ(r.out, "");
	cli_result_free(&r);
	free(buf);
}

/*
 * report's arithmetic on a stream with known values: busy time over the
 * recording per client (including a client that opened during it and one
 * that exited), average utilisation, and the sum per process.
 */
DT_TEST_F(rc, report_sums_and_utilization)
{
	struct drec_engine_desc eng[2] = { { "render", 1, 0 }, { "copy", 2, 0 } };
	struct drec_device dev = { .dev = 0, .major = 226, .minor = 130, .driver = "simgpu",
				   .pdev = "", .nengines = 2, .engines = eng };
	struct drec_file_info fi = { .start_mono_ns = 1000000000ull, .interval_ns = 1000000000ull };
	struct drec_writer w;
	struct cli_result r;
	const struct jd *c, *e, *p;
	struct jd *doc;
	FILE *f = fopen(self->out, "w");
	const uint64_t S = 1000000000ull, MS = 1000000ull;
	struct {
		uint64_t t, id;
		uint32_t pid, flags, type;
		uint64_t render, copy;
	} recs[] = {
		{ S, 1, 10, DREC_C_CLIENT_ID, DREC_SAMPLE, 100 * MS, 0 },
		{ S, 2, 10, DREC_C_CLIENT_ID, DREC_SAMPLE, 1000 * MS, 10 * MS },
		{ 2 * S, 1, 10, DREC_C_CLIENT_ID, DREC_SAMPLE, 400 * MS, 0 },
		{ 2 * S, 2, 10, DREC_C_CLIENT_ID, DREC_SAMPLE, 1500 * MS, 810 * MS },
		{ 2 * S, 3, 20, DREC_C_CLIENT_ID | DREC_C_NEW, DREC_SAMPLE, 70 * MS, 0 },
		{ 2 * S + S / 2, 1, 10, DREC_C_CLIENT_ID, DREC_CLIENT_EXIT, 450 * MS, 0 },
	};

	DT_ASSERT_NE(f, NULL);
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), 0);
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		struct drec_engine_val ev[2] = {
			{ .engine = 0, .flags = DREC_E_BUSY, .busy_ns = recs[i].render },
			{ .engine = 1, .flags = DREC_E_BUSY, .busy_ns = recs[i].copy },
		};
		struct drec_client c = { .time_ns = recs[i].t, .client_id = recs[i].id,
					 .pid = recs[i].pid, .flags = recs[i].flags,
					 .nengines = 2, .engines = ev };

		snprintf(c.comm, sizeof(c.comm), "p%u", recs[i].pid);
		DT_ASSERT_EQ(drec_write_client(&w, recs[i].type, &c), 0);
	}
	DT_ASSERT_EQ(drec_writer_finish(&w), 0);
	fclose(f);

	cli_run(&r, "report", "--json", self->out, NULL);
	DT_ASSERT_EQ(r.status, 0);
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	/* client 1: 100 -> 450 ms over 1.5 s; client 2: +500 ms render, +800 ms
	 * copy (capacity 2) over 1 s; client 3: new, 70 ms since the sample before */
	c = jd_find_u64(doc, "clients", "client_id", 1);
	e = jd_find_str(c, "engines", "name", "render");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 350000000ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.35 / 1.5) < 1e-6);
	DT_EXPECT_TRUE(jd_path(c, "exited") && jd_path(c, "exited")->type == JD_BOOL &&
		       jd_path(c, "exited")->b);
	c = jd_find_u64(doc, "clients", "client_id", 2);
	e = jd_find_str(c, "engines", "name", "render");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 500000000ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.5) < 1e-9);
	e = jd_find_str(c, "engines", "name", "copy");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 800000000ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.4) < 1e-9);
	DT_EXPECT_TRUE(jd_path(c, "exited") && !jd_path(c, "exited")->b);
	c = jd_find_u64(doc, "clients", "client_id", 3);
	e = jd_find_str(c, "engines", "name", "render");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 70000000ull);
	DT_EXPECT_TRUE(fabs(jd_num(e, "utilization", -1) - 0.07) < 1e-9);
	/* per process: pid 10 = clients 1 and 2, render 350 + 500 ms */
	p = jd_find_u64(doc, "processes", "pid", 10);
	DT_EXPECT_STREQ(jd_str(p, "comm"), "p10");
	DT_EXPECT_EQ(jd_u64(p, "clients", 0), 2ull);
	e = jd_find_str(p, "engines", "name", "render");
	DT_EXPECT_STREQ(jd_str(e, "device"), "renderD130");
	DT_EXPECT_EQ(jd_u64(e, "busy_ns", 0), 850000000ull);
	p = jd_find_u64(doc, "processes", "pid", 20);
	DT_EXPECT_STREQ(jd_str(p, "comm"), "p20");
	DT_EXPECT_EQ(jd_u64(p, "clients", 0), 1ull);
	jd_free(doc);
	cli_result_free(&r);
}

/*
 * Names in a record file come from processes and drivers: the text report
 * shows every control byte, C1 control and invalid UTF-8 byte of a comm,
 * driver, engine or region name as '?', the JSON report keeps them escaped.
 */
DT_TEST_F(rc, report_hostile_names)
{
	struct drec_engine_desc eng[1] = { { "r\033[1men", 1, 0 } };
	const char *regions[1] = { "sys\033]0;t\007" };
	struct drec_device dev = { .dev = 0, .major = 226, .minor = 128,
				   .driver = "ev\033[2Jil", .pdev = "", .nengines = 1,
				   .engines = eng, .nregions = 1, .regions = regions };
	struct drec_file_info fi = { .start_mono_ns = 1000000000ull, .interval_ns = 1000000000ull };
	struct drec_engine_val ev = { .engine = 0, .flags = DREC_E_BUSY };
	struct drec_region_val rv = { .region = 0, .flags = DREC_R_TOTAL, .total = 4096 };
	struct drec_writer w;
	struct cli_result r;
	struct jd *doc;
	FILE *f = fopen(self->out, "w");

	DT_ASSERT_NE(f, NULL);
	DT_ASSERT_EQ(drec_writer_init(&w, f, &fi, &dev, 1), 0);
	for (int i = 0; i < 2; i++) {
		struct drec_client c = { .time_ns = (uint64_t)(i + 1) * 1000000000ull,
					 .client_id = 5, .pid = 42, .flags = DREC_C_CLIENT_ID,
					 .nengines = 1, .engines = &ev, .nregions = 1,
					 .regions = &rv };

		/* ESC, a C1 CSI (2 bytes), 2 invalid bytes, a valid e-acute */
		snprintf(c.comm, sizeof(c.comm), "a\033[31m\xc2\x9b\xff\xfe\xc3\xa9");
		ev.busy_ns = (uint64_t)i * 300000000ull;
		DT_ASSERT_EQ(drec_write_client(&w, DREC_SAMPLE, &c), 0);
	}
	DT_ASSERT_EQ(drec_writer_finish(&w), 0);
	fclose(f);

	cli_run(&r, "report", self->out, NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strchr(r.out, '\033') == NULL);
	DT_EXPECT_TRUE(strchr(r.out, '\007') == NULL);
	DT_EXPECT_TRUE(strstr(r.out, "\xc2\x9b") == NULL);
	EXPECT_HAS(r.out, "client 5 on renderD128 (ev?[2Jil): a?[31m????\xc3\xa9[42]");
	EXPECT_HAS(r.out, "    r?[1men          busy     0.300000 s");
	EXPECT_HAS(r.out, "    memory sys?]0;t? peak 4.0K");
	EXPECT_HAS(r.out, "  a?[31m????\xc3\xa9[42]: 1 client\n");
	EXPECT_HAS(r.out, "renderD128 r?[1men          busy     0.300000 s");
	cli_result_free(&r);

	cli_run(&r, "report", "--json", self->out, NULL);
	DT_EXPECT_EQ(r.status, 0);
	/* the strict parser takes no raw control byte: all of them escaped */
	doc = jd_parse(r.out);
	DT_ASSERT_NE(doc, NULL);
	/* the invalid bytes became U+FFFD, the rest is kept */
	DT_EXPECT_STREQ(jd_str(doc, "clients.0.processes.0.comm"),
			"a\033[31m\xc2\x9b\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9");
	DT_EXPECT_STREQ(jd_str(doc, "clients.0.driver"), "ev\033[2Jil");
	DT_EXPECT_STREQ(jd_str(doc, "clients.0.engines.0.name"), "r\033[1men");
	DT_EXPECT_STREQ(jd_str(doc, "clients.0.memory.0.region"), "sys\033]0;t\007");
	jd_free(doc);
	cli_result_free(&r);
}

/*
 * record -- CMD exits with CMD's status as a shell would (127 not found, 126
 * not runnable, 128 + N for signal N, else CMD's own), and the file is
 * complete in every case.
 */
DT_TEST_F_TIMEOUT(rc, record_exit_status_is_the_commands, 90)
{
	static const struct {
		const char *cmd[4];
		int status;
		const char *err;
	} cases[] = {
		{ { "/bin/sh", "-c", "sleep 0.1; exit 3", NULL }, 3,
		  "the command exited with status 3" },
		{ { "/bin/sh", "-c", "sleep 0.1; kill -TERM $$", NULL }, 128 + SIGTERM,
		  "the command was killed by signal 15" },
		{ { "/bin/true", NULL }, 0, "samples" },
		{ { "drmacct-no-such-command", NULL }, 127,
		  "cannot run drmacct-no-such-command: No such file or directory" },
		{ { "/dev/null", NULL }, 126, "cannot run /dev/null: Permission denied" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[16] = { "record", "--no-bpf", "--proc-root", self->pt.root,
					 "-o", self->out, "-i", "20ms", "--" };
		struct drec_reader rd;
		struct drec_record rec;
		struct cli_result r;
		unsigned char *buf;
		size_t len, n = 9, samples = 0;

		for (size_t k = 0; cases[i].cmd[k]; k++)
			args[n++] = cases[i].cmd[k];
		args[n] = NULL;
		unlink(self->out);
		cli_runv(&r, args);
		dt_info("record -- %s: %d", cases[i].cmd[0], r.status);
		DT_EXPECT_EQ(r.status, cases[i].status);
		EXPECT_HAS(r.err, cases[i].err);
		cli_result_free(&r);
		/* a complete file: header, the client's samples, no problem */
		load(self->out, &buf, &len);
		DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
		while (drec_next(&rd, &rec) == 1)
			samples += rec.type == DREC_SAMPLE && rec.client.client_id == 7;
		DT_EXPECT_GE(samples, (size_t)2);
		DT_EXPECT_EQ(rd.nproblems, (size_t)0);
		drec_reader_free(&rd);
		free(buf);
	}
}

/* Whole records reach the file after every sample (readable live); SIGINT
 * ends the recording cleanly. */
DT_TEST_F_TIMEOUT(rc, readable_while_recording_and_sigint, 60)
{
	char logp[2200], *argv[12];
	struct prom_child ch = { 0 };
	struct drec_reader rd;
	struct drec_record rec;
	unsigned char *buf;
	size_t len, n = 0;
	struct stat st;
	time_t end;
	int status;

	snprintf(logp, sizeof(logp), "%s/trace.json", self->dir);	/* removed by teardown */
	argv[0] = (char *)cli_bin();
	argv[1] = "record";
	argv[2] = "--no-bpf";
	argv[3] = "--proc-root";
	argv[4] = self->pt.root;
	argv[5] = "-o";
	argv[6] = self->out;
	argv[7] = "-i";
	argv[8] = "50ms";
	argv[9] = NULL;
	DT_ASSERT_EQ(prom_spawn(&ch, argv, logp), 0);
	/* the header (136 bytes) and at least two SAMPLE records (184 bytes each) */
	end = time(NULL) + 30;
	while ((stat(self->out, &st) || st.st_size < 600) && time(NULL) < end)
		usleep(20000);
	DT_ASSERT_GE(st.st_size, (off_t)600);
	load(self->out, &buf, &len);
	DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
	while (drec_next(&rd, &rec) == 1)
		n++;
	DT_EXPECT_GE(n, (size_t)2);
	DT_EXPECT_EQ(rd.nproblems, (size_t)0);	/* whole records only */
	drec_reader_free(&rd);
	free(buf);

	DT_ASSERT_EQ(kill(ch.pid, SIGINT), 0);
	DT_ASSERT_EQ(waitpid(ch.pid, &status, 0), ch.pid);
	ch.pid = 0;
	DT_ASSERT_TRUE(WIFEXITED(status));
	DT_EXPECT_EQ(WEXITSTATUS(status), 0);
	load(self->out, &buf, &len);
	DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
	while (drec_next(&rd, &rec) == 1)
		;
	DT_EXPECT_EQ(rd.nproblems, (size_t)0);
	DT_EXPECT_GE(rd.nrecords, (uint64_t)n);
	drec_reader_free(&rd);
	free(buf);
}

DT_TEST(usage_and_io_errors)
{
	struct cli_result r;

	cli_run(&r, "report", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "which file?");
	cli_result_free(&r);
	cli_run(&r, "report", "/nonexistent/x.rec", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot read /nonexistent/x.rec: No such file or directory");
	cli_result_free(&r);
	cli_run(&r, "report", "--json", "--trace-events=-", "x", NULL);
	DT_EXPECT_EQ(r.status, 2);
	cli_result_free(&r);
	cli_run(&r, "record", "sleep", "1", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "put a command after --");
	cli_result_free(&r);
	cli_run(&r, "record", "-i", "0", NULL);
	DT_EXPECT_EQ(r.status, 2);
	EXPECT_HAS(r.err, "bad interval '0'");
	cli_result_free(&r);
	cli_run(&r, "record", "--no-bpf", "-o", "/nonexistent/dir/x.rec", "-n", "1", NULL);
	DT_EXPECT_EQ(r.status, 1);
	EXPECT_HAS(r.err, "cannot create /nonexistent/dir/x.rec");
	cli_result_free(&r);
}

DT_MAIN
