// SPDX-License-Identifier: GPL-2.0
/*
 * Closing a file while its jobs are still on the engines: no crash, the
 * device keeps working, and the drmacct_client_close tracepoint carries the
 * final totals including the jobs that were in flight at close — compared
 * with the busy time those jobs were submitted with (a job can run no
 * shorter than its busy_ns) and the engine's frequency range.
 * Also: the job_end tracepoint against WAIT, close only at last fd, and one
 * client id everywhere: fdinfo (printed by the DRM core on 6.5+ kernels,
 * by the helper before), the query ioctl and every drmacct event.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define TRACEFS "/sys/kernel/tracing"
#define EV_DIR TRACEFS "/events/drmacct"

DT_FIXTURE(tr) {
	int fd;
	struct sg_dev dev;
	int kmsg;
};

static void trace_clear(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	DT_ASSERT_GE(fd, 0);
	close(fd);
}

DT_SETUP(tr)
{
	self->kmsg = -1;
	self->fd = -1;
	if (!sg_is_root())
		DT_SKIP("needs root for tracefs");
	if (access(EV_DIR "/drmacct_client_close/enable", W_OK))
		DT_SKIP("no drmacct tracepoints in " EV_DIR);
	self->kmsg = sg_kmsg_open();
	DT_ASSERT_EQ(sg_write_file(EV_DIR "/drmacct_client_close/enable", "1"), 0);
	DT_ASSERT_EQ(sg_write_file(EV_DIR "/drmacct_job_end/enable", "1"), 0);
	trace_clear();
	self->fd = sg_open();
	sg_query(self->fd, &self->dev);
}

DT_TEARDOWN(tr)
{
	sg_write_file(EV_DIR "/drmacct_client_close/enable", "0");
	sg_write_file(EV_DIR "/drmacct_job_end/enable", "0");
	sg_write_file(EV_DIR "/drmacct_mem_change/enable", "0");
	sg_write_file(EV_DIR "/drmacct_client_open/enable", "0");
	sg_write_file(EV_DIR "/drmacct_job_begin/enable", "0");
	sg_dev_free(&self->dev);
	if (self->fd >= 0)
		close(self->fd);
	DT_EXPECT_EQ(sg_kmsg_bad_lines(self->kmsg), 0);
}

struct close_ev {
	uint64_t client_id;
	unsigned int num_engines;
	uint64_t busy[64];
	uint64_t cycles[64];
};

/*
 * Finds the drmacct_client_close event for @id in the trace buffer.
 * Returns 1 when found (and fills @ev), 0 when not there, fails the test on
 * a malformed line or on two events for one client.
 */
static int find_close(uint64_t id, struct close_ev *ev)
{
	char *buf = sg_read_file(TRACEFS "/trace", NULL);
	char *line, *save = NULL;
	int found = 0;

	DT_ASSERT_TRUE(buf != NULL);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, "drmacct_client_close: ");
		unsigned long long cid;
		unsigned int dev, ne;
		const char *b, *c;

		if (!p)
			continue;
		if (sscanf(p, "drmacct_client_close: client_id=%llu device_id=%u num_engines=%u",
			   &cid, &dev, &ne) != 3)
			DT_FAIL("malformed close event: %s", line);
		if (cid != id)
			continue;
		if (found)
			DT_FAIL("two close events for client %" PRIu64, id);
		b = strstr(p, " busy_ns=");
		c = strstr(p, " cycles=");
		if (!b || !c || ne > 64)
			DT_FAIL("malformed close event: %s", line);
		memset(ev, 0, sizeof(*ev));
		ev->client_id = cid;
		ev->num_engines = ne;
		if (sg_parse_u64_list(b + 9, ev->busy, 64) != (int)ne ||
		    sg_parse_u64_list(c + 8, ev->cycles, 64) != (int)ne)
			DT_FAIL("malformed busy/cycles list: %s", line);
		found = 1;
	}
	free(buf);
	return found;
}

/* Polls for the close event of @id for up to @ms milliseconds. */
static int wait_close(uint64_t id, struct close_ev *ev, unsigned int ms)
{
	for (unsigned int t = 0; t <= ms; t += 20) {
		if (find_close(id, ev))
			return 1;
		sg_sleep_ns(20 * NSEC_PER_MSEC);
	}
	return 0;
}

/* The busy/cycles of a closed client match the jobs it had submitted. */
static int job_ends(uint64_t id, uint64_t *busy, uint64_t *cycles, unsigned int *engine,
		    int max);

/*
 * The close event's totals must equal, exactly, the sum of the client's own
 * job_end events per engine (so no job that was in flight is left out or
 * counted twice), be at least the time submitted (a job runs at least its
 * busy_ns), and at most what the test's own clock allows: every job ran
 * inside [@t0, now], @t0 read before the first submit, so an engine's busy
 * time is at most its jobs times that span (the same clock, no tolerance).
 * There is no per-job lateness bound: under TCG with other guests on the
 * host, simgpu's timers fired 12-142 ms late (a 300 ms job measured
 * 441.9 ms on 6.1-rt with four guests on two cores).
 */
static void check_final(const struct sg_dev *dev, uint64_t id, const struct close_ev *ev,
			const uint64_t *want_ns, uint64_t t0)
{
	uint64_t span = sg_now_ns() - t0;
	enum { MAXJ = 256 };
	uint64_t busy[MAXJ], cycles[MAXJ];
	unsigned int engine[MAXJ];
	int n = job_ends(id, busy, cycles, engine, MAXJ);

	DT_ASSERT_LT(n, MAXJ);
	DT_ASSERT_EQ(ev->num_engines, dev->num_engines);
	for (unsigned int i = 0; i < dev->num_engines; i++) {
		const struct drm_simgpu_query_engine *q = &dev->eng[i].q;
		uint64_t sum_busy = 0, sum_cycles = 0, njobs = 0;

		for (int j = 0; j < n; j++) {
			if (engine[j] != i)
				continue;
			sum_busy += busy[j];
			sum_cycles += cycles[j];
			njobs++;
		}
		dt_info("%s: close event busy %" PRIu64 " ns cycles %" PRIu64
			", submitted %" PRIu64 " ns, %" PRIu64 " job_end events (%" PRIu64 " ns)",
			q->name, ev->busy[i], ev->cycles[i], want_ns[i], njobs, sum_busy);
		DT_EXPECT_EQ(ev->busy[i], sum_busy);
		DT_EXPECT_EQ(ev->cycles[i], sum_cycles);
		if (!want_ns[i]) {
			DT_EXPECT_EQ(ev->busy[i], 0);
			DT_EXPECT_EQ(ev->cycles[i], 0);
			continue;
		}
		DT_EXPECT_GE(ev->busy[i], want_ns[i]);
		DT_EXPECT_LE(ev->busy[i], njobs * span);
		/*
		 * The cycles integrate the engine's clock over its own
		 * [hw_start_ns, hw_end_ns], the busy time is the helper's
		 * stamps: they differ by the measured gaps (µs per job).
		 * Worst error admitted: 1% of the cycles at either bound.
		 */
		DT_EXPECT_GE((double)ev->cycles[i],
			     (double)q->min_freq_hz * (double)ev->busy[i] / 1e9 * 0.99);
		DT_EXPECT_LE((double)ev->cycles[i],
			     (double)q->max_freq_hz * (double)ev->busy[i] / 1e9 * 1.01);
	}
}

/*
 * close() with one job running and one queued on each of two engines: the
 * close event appears once, after the jobs ended, with all of their time.
 */
DT_TEST_F(tr, close_with_jobs_in_flight)
{
	uint64_t *want = calloc(self->dev.num_engines, sizeof(*want));
	uint64_t id = self->dev.q.client_id, t_close, t0;
	unsigned int e2 = self->dev.num_engines > 1 ? 1 : 0;
	struct close_ev ev;
	int other;

	DT_ASSERT_TRUE(want != NULL);
	t0 = sg_now_ns();
	sg_submit_busy(self->fd, 0, SIMGPU_INSTANCE_ANY, 300 * NSEC_PER_MSEC);
	sg_submit_busy(self->fd, 0, SIMGPU_INSTANCE_ANY, 200 * NSEC_PER_MSEC);
	sg_submit_busy(self->fd, e2, SIMGPU_INSTANCE_ANY, 250 * NSEC_PER_MSEC);
	want[0] += 500 * NSEC_PER_MSEC;
	want[e2] += 250 * NSEC_PER_MSEC;
	sg_sleep_ns(50 * NSEC_PER_MSEC);
	t_close = sg_now_ns();
	close(self->fd);
	self->fd = -1;

	/* the device keeps serving other files meanwhile */
	other = sg_open();
	DT_EXPECT_NE(sg_client_id(other), id);
	DT_ASSERT_TRUE(wait_close(id, &ev, 5000));
	dt_info("close event seen %.1f ms after close()",
		(double)(sg_now_ns() - t_close) / 1e6);
	check_final(&self->dev, id, &ev, want, t0);
	close(other);
	free(want);
}

/* Counts drmacct_mem_change events of @id with op @op and size @size. */
static int count_mem_events(uint64_t id, const char *op, uint64_t size)
{
	char *buf = sg_read_file(TRACEFS "/trace", NULL);
	char *line, *save = NULL;
	int n = 0;

	DT_ASSERT_TRUE(buf != NULL);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, "drmacct_mem_change: ");
		unsigned long long cid, sz;
		unsigned int region;
		char evop[16];

		if (!p)
			continue;
		if (sscanf(p, "drmacct_mem_change: client_id=%llu region=%u op=%15s size=%llu",
			   &cid, &region, evop, &sz) != 4) {
			free(buf);
			DT_FAIL("malformed mem_change line: %s", line);
		}
		if (cid == id && !strcmp(evop, op) && sz == size)
			n++;
	}
	free(buf);
	return n;
}

/*
 * A FILL job queued behind a long job when its file is closed runs after
 * the close: its buffer goes active at SUBMIT and idle when the job ends,
 * and both memory events are charged to the (closed) client — the idle one
 * used to be lost because the job went through the file's client pointer,
 * which close clears.
 */
DT_TEST_F(tr, mem_idle_event_after_close)
{
	const struct sg_engine *e = sg_engine_simple(&self->dev);
	uint64_t id = self->dev.q.client_id, size = 64 * 1024;
	struct drm_simgpu_submit s;
	struct close_ev ev;
	uint32_t h;

	DT_ASSERT_TRUE(e != NULL);
	DT_ASSERT_EQ(sg_write_file(EV_DIR "/drmacct_mem_change/enable", "1"), 0);
	h = sg_bo_create(self->fd, size);
	sg_submit_busy(self->fd, e->index, 0, 300 * NSEC_PER_MSEC);
	memset(&s, 0, sizeof(s));
	s.engine = e->index;
	s.instance = 0;
	s.op = SIMGPU_OP_FILL;
	s.dst_handle = h;
	s.size = size;
	s.value = 0x5a;
	sg_submit(self->fd, &s);
	DT_EXPECT_EQ(count_mem_events(id, "active", size), 1);
	close(self->fd);
	self->fd = -1;
	/* the close event fires after the last job was freed, so after its idle */
	DT_ASSERT_TRUE(wait_close(id, &ev, 5000));
	sg_write_file(EV_DIR "/drmacct_mem_change/enable", "0");
	DT_EXPECT_EQ(count_mem_events(id, "create", size), 1);
	DT_EXPECT_EQ(count_mem_events(id, "active", size), 1);
	DT_EXPECT_EQ(count_mem_events(id, "idle", size), 1);
	DT_EXPECT_EQ(count_mem_events(id, "close", size), 1);
}

/* A process killed mid-job: the exit path closes the file the same way. */
DT_TEST_F(tr, sigkill_with_job_in_flight)
{
	uint64_t *want = calloc(self->dev.num_engines, sizeof(*want));
	struct close_ev ev;
	uint64_t id = 0, t0;
	int pfd[2], st;
	pid_t pid;

	DT_ASSERT_TRUE(want != NULL);
	close(self->fd);
	self->fd = -1;
	DT_ASSERT_EQ(pipe(pfd), 0);
	t0 = sg_now_ns();
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = sg_open();
		uint64_t cid = sg_client_id(fd);

		sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, 400 * NSEC_PER_MSEC);
		if (write(pfd[1], &cid, sizeof(cid)) != sizeof(cid))
			_exit(3);
		for (;;)
			pause();
	}
	close(pfd[1]);
	DT_ASSERT_EQ(read(pfd[0], &id, sizeof(id)), (ssize_t)sizeof(id));
	close(pfd[0]);
	sg_sleep_ns(100 * NSEC_PER_MSEC);
	kill(pid, SIGKILL);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	want[0] = 400 * NSEC_PER_MSEC;
	DT_ASSERT_TRUE(wait_close(id, &ev, 5000));
	check_final(&self->dev, id, &ev, want, t0);
	free(want);
}

/*
 * A process that exits cleanly with jobs still queued in its entity (more
 * than the hardware queue takes) gets them run: closing flushes the
 * entities. Only a killed process's queued jobs are dropped.
 */
DT_TEST_F_TIMEOUT(tr, clean_exit_runs_queued_jobs, 60)
{
	uint64_t *want = calloc(self->dev.num_engines, sizeof(*want));
	const unsigned int njobs = 12;
	struct close_ev ev;
	uint64_t id = 0, t0;
	int pfd[2], st;
	pid_t pid;

	DT_ASSERT_TRUE(want != NULL);
	DT_ASSERT_EQ(pipe(pfd), 0);
	t0 = sg_now_ns();
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = sg_open();
		uint64_t cid = sg_client_id(fd);

		for (unsigned int i = 0; i < njobs; i++)
			sg_submit_busy(fd, 0, 0, 30 * NSEC_PER_MSEC);
		if (write(pfd[1], &cid, sizeof(cid)) != sizeof(cid))
			_exit(3);
		_exit(0);	/* no WAIT: the jobs are still queued */
	}
	close(pfd[1]);
	DT_ASSERT_EQ(read(pfd[0], &id, sizeof(id)), (ssize_t)sizeof(id));
	close(pfd[0]);
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	want[0] = njobs * 30 * NSEC_PER_MSEC;
	DT_ASSERT_TRUE(wait_close(id, &ev, 5000));
	check_final(&self->dev, id, &ev, want, t0);
	free(want);
}

/* dup()ed files close once: no event while another fd refers to the file. */
DT_TEST_F(tr, close_event_only_at_last_fd)
{
	uint64_t *want = calloc(self->dev.num_engines, sizeof(*want));
	uint64_t id = self->dev.q.client_id, t0 = sg_now_ns();
	struct drm_simgpu_wait w;
	struct close_ev ev;
	int d = dup(self->fd);

	DT_ASSERT_TRUE(want != NULL);
	DT_ASSERT_GE(d, 0);
	sg_wait(self->fd, sg_submit_busy(self->fd, 0, 0, 300 * NSEC_PER_MSEC), &w);
	want[0] = 300 * NSEC_PER_MSEC;
	close(self->fd);
	self->fd = -1;
	sg_sleep_ns(200 * NSEC_PER_MSEC);
	DT_EXPECT_EQ(find_close(id, &ev), 0);
	close(d);
	DT_ASSERT_TRUE(wait_close(id, &ev, 2000));
	check_final(&self->dev, id, &ev, want, t0);
	sg_truth_expect_one("close event", ev.busy[0], &w);
	DT_EXPECT_EQ(ev.cycles[0], w.cycles);
	free(want);
}

/* Parses job_end events of @id; returns how many it found. */
static int job_ends(uint64_t id, uint64_t *busy, uint64_t *cycles, unsigned int *engine,
		    int max)
{
	char *buf = sg_read_file(TRACEFS "/trace", NULL);
	char *line, *save = NULL;
	int n = 0;

	DT_ASSERT_TRUE(buf != NULL);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, "drmacct_job_end: ");
		unsigned long long cid, ts, b, c;
		unsigned int e, running;

		if (!p)
			continue;
		if (sscanf(p, "drmacct_job_end: client_id=%llu engine=%u ts_ns=%llu busy_ns=%llu "
			   "cycles=%llu running=%u", &cid, &e, &ts, &b, &c, &running) != 6)
			DT_FAIL("malformed job_end event: %s", line);
		if (cid != id || n == max)
			continue;
		busy[n] = b;
		cycles[n] = c;
		engine[n] = e;
		n++;
	}
	free(buf);
	return n;
}

/* job_end carries the job's engine, its busy time (1%) and exactly WAIT's cycles. */
DT_TEST_F(tr, job_end_event_matches_wait)
{
	struct drm_simgpu_wait w[3];
	uint64_t busy[8], cyc[8];
	unsigned int eng[8];
	int n;

	for (unsigned int i = 0; i < 3; i++) {
		unsigned int e = i % self->dev.num_engines;

		sg_wait(self->fd, sg_submit_busy(self->fd, e, SIMGPU_INSTANCE_ANY,
						 (10 + 10 * i) * NSEC_PER_MSEC), &w[i]);
	}
	n = job_ends(self->dev.q.client_id, busy, cyc, eng, 8);
	DT_ASSERT_EQ(n, 3);
	for (int i = 0; i < 3; i++) {
		DT_EXPECT_EQ(eng[i], (unsigned int)i % self->dev.num_engines);
		sg_truth_expect_one("drmacct_job_end", busy[i], &w[i]);
		DT_EXPECT_EQ(cyc[i], w[i].cycles);
	}
}

/* Events of @name in the trace buffer whose client_id= is @id. */
static int count_events(const char *name, uint64_t id)
{
	char *buf = sg_read_file(TRACEFS "/trace", NULL);
	char *line, *save = NULL, tag[64];
	int n = 0;

	DT_ASSERT_TRUE(buf != NULL);
	snprintf(tag, sizeof(tag), "%s: client_id=", name);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, tag);

		if (p && strtoull(p + strlen(tag), NULL, 10) == id)
			n++;
	}
	free(buf);
	return n;
}

/*
 * One client id everywhere: what fdinfo prints as drm-client-id (the DRM
 * core's drm_file.client_id where the core owns fdinfo), what the query
 * ioctl returns, and what drmacct's open, job and close events carry are
 * the same number, for the file and its dup; another file has another.
 * drm-driver and drm-client-id appear once each, whoever prints them.
 */
DT_TEST_F(tr, one_client_id_everywhere)
{
	const struct sg_engine *e = sg_engine_simple(&self->dev);
	struct drm_simgpu_wait w;
	struct sg_fdinfo fi, fd2;
	struct close_ev ev;
	uint64_t id;
	int fd, d, other;

	DT_ASSERT_TRUE(e != NULL);
	DT_ASSERT_EQ(sg_write_file(EV_DIR "/drmacct_client_open/enable", "1"), 0);
	DT_ASSERT_EQ(sg_write_file(EV_DIR "/drmacct_job_begin/enable", "1"), 0);
	fd = sg_open();
	id = sg_client_id(fd);
	DT_ASSERT_NE(id, 0ull);
	d = dup(fd);
	DT_ASSERT_GE(d, 0);
	other = sg_open();
	DT_EXPECT_NE(sg_client_id(other), id);
	sg_wait(fd, sg_submit_busy(fd, e->index, 0, 20 * NSEC_PER_MSEC), &w);

	sg_fdinfo_read(fd, &fi);
	sg_fdinfo_read(d, &fd2);
	DT_EXPECT_EQ(sg_fdinfo_u64(&fi, "drm-client-id", ""), id);
	DT_EXPECT_EQ(sg_fdinfo_u64(&fd2, "drm-client-id", ""), id);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-client-id"), (size_t)1);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-driver"), (size_t)1);
	DT_ASSERT_TRUE(sg_fdinfo_find(&fi, "drm-driver") != NULL);
	DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-driver")->val, "simgpu");
	DT_EXPECT_GT(sg_fdinfo_engine_ns(&fi, e->q.name), 0ull);
	sg_fdinfo_free(&fi);
	sg_fdinfo_free(&fd2);

	close(fd);
	close(d);
	close(other);
	DT_ASSERT_TRUE(wait_close(id, &ev, 5000));
	DT_EXPECT_EQ(count_events("drmacct_client_open", id), 1);
	DT_EXPECT_EQ(count_events("drmacct_job_begin", id), 1);
	DT_EXPECT_EQ(count_events("drmacct_job_end", id), 1);
	DT_EXPECT_EQ(count_events("drmacct_client_close", id), 1);
	DT_EXPECT_GT(ev.busy[e->index], 0ull);
	DT_EXPECT_EQ(ev.cycles[e->index], w.cycles);
}

DT_MAIN
