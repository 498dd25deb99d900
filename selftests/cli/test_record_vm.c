// SPDX-License-Identifier: MIT
/*
 * test_record_vm.c - `drmacct record` with BPF exit records on simgpu
 * (guest test).
 *
 * With the BPF collection running (`drmacct bpf start`), a client that
 * opens, runs a job and closes between two samples is invisible to /proc
 * sampling but must appear in the stream as a CLIENT_EXIT record carrying
 * its final totals. The ground truth is the client's own fdinfo, read by
 * the client just before it closed (no job ran after that read), which in
 * turn equals its jobs' WAIT sums, within the measured gaps of simgpu's
 * own clock reads:
 *  - the CLIENT_EXIT busy time of its engine equals that fdinfo value;
 *  - its device, pid and comm are the client's;
 *  - a long-lived client is sampled (SAMPLE records) with busy time that
 *    never goes backwards and ends at its fdinfo value;
 *  - `drmacct report --json` shows the short client as exited with the
 *    same final busy time, and the file decodes without a problem.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include "dtest.h"
#include "fdinfo.h"
#include "record.h"
#include "sgtest.h"
#include "simgpu_drm.h"

#define REC_FILE "/tmp/test_record_vm.rec"
#define REC_LOG "/tmp/test_record_vm.log"

static const char *bin(void)
{
	const char *b = getenv("DRMACCT_BIN");

	if (!b || !*b)
		b = "/usr/bin/drmacct";
	if (access(b, X_OK))
		DT_FAIL("%s not found", b);
	return b;
}

/* Run drmacct with args, output to @log (or /dev/null); returns exit code. */
static pid_t spawn(const char *log, const char *a0, ...) __attribute__((sentinel));

static pid_t spawn(const char *log, const char *a0, ...)
{
	const char *b = bin();
	char *argv[32];
	int n = 0;
	va_list ap;
	pid_t pid;

	argv[n++] = (char *)"drmacct";
	va_start(ap, a0);
	for (const char *a = a0; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(b, argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void show_log(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		dt_info("%s", line);
	fclose(f);
}

/* ---- simgpu ---- */

static uint64_t run_job(int fd, unsigned int engine, uint64_t ns, struct sg_truth *t)
{
	char why[160];

	struct drm_simgpu_submit s = { 0 };
	struct drm_simgpu_wait w = { 0 };

	s.engine = engine;
	s.instance = SIMGPU_INSTANCE_ANY;
	s.op = SIMGPU_OP_BUSY;
	s.busy_ns = ns;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, &s))
		return 0;
	w.job_id = s.job_id;
	w.timeout_ns = 60ull * 1000000000ull;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_WAIT, &w) || w.status != SIMGPU_JOB_DONE ||
	    !sg_stamps_ok(&w, why, sizeof(why)))
		return 0;
	sg_truth_add(t, &w);
	return 1;
}

struct client_result {
	uint64_t client_id;
	uint64_t busy_ns;	/* its fdinfo busy time of the engine, last read */
	struct sg_truth truth;	/* its jobs' WAIT results */
	unsigned int minor;
	char engine[SIMGPU_NAME_LEN + 1];
	int ok;
};

/* Engine 0's name and the fdinfo busy time of that engine on @fd. */
static int fdinfo_busy(int fd, const char *engine, uint64_t *busy)
{
	char path[64];
	struct dac_fdinfo fi;
	const struct dac_engine *e;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (dac_fdinfo_read_file(path, DAC_PROFILE_CURRENT, &fi))
		return -1;
	e = dac_fdinfo_engine(&fi, engine);
	if (!e || !e->has_busy) {
		dac_fdinfo_free(&fi);
		return -1;
	}
	*busy = e->busy_ns;
	dac_fdinfo_free(&fi);
	return 0;
}

/*
 * In a child: open simgpu, run @jobs jobs of @ns on engine 0, read own
 * fdinfo, close (after @hold_ms), report through @pipefd.
 */
static pid_t client(int pipefd, int jobs, uint64_t ns, int hold_ms)
{
	pid_t pid = fork();

	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct client_result r = { 0 };
		struct drm_simgpu_query_device qd = { 0 };
		struct drm_simgpu_query_engine qe = { 0 };
		struct stat st;
		int fd = sg_open_raw();

		if (fd < 0 || ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &qd) ||
		    ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_ENGINE, &qe) || fstat(fd, &st))
			_exit(2);
		r.client_id = qd.client_id;
		r.minor = minor(st.st_rdev);
		memcpy(r.engine, qe.name, SIMGPU_NAME_LEN);
		for (int i = 0; i < jobs; i++)
			if (!run_job(fd, 0, ns, &r.truth))
				_exit(3);
		usleep((useconds_t)hold_ms * 1000);
		if (fdinfo_busy(fd, r.engine, &r.busy_ns))
			_exit(4);
		r.ok = 1;
		close(fd);	/* -> drmacct_client_close -> CLIENT_EXIT */
		_exit(write(pipefd, &r, sizeof(r)) == sizeof(r) ? 0 : 5);
	}
	return pid;
}

static void get_result(int fd, pid_t pid, struct client_result *r)
{
	memset(r, 0, sizeof(*r));
	DT_ASSERT_EQ(read(fd, r, sizeof(*r)), (ssize_t)sizeof(*r));
	DT_ASSERT_EQ(wait_exit(pid), 0);
	DT_ASSERT_EQ(r->ok, 1);
}

DT_FIXTURE(rv) {
	bool started_bpf;
	pid_t rec;
};

DT_SETUP(rv)
{
	int fd = sg_open_raw();
	struct drm_simgpu_query_device qd = { 0 };

	self->started_bpf = false;
	self->rec = 0;
	if (fd < 0)
		DT_SKIP("no simgpu render node (is simgpu.ko loaded?)");
	if (ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &qd) ||
	    !(qd.flags & SIMGPU_DEVICE_ACCOUNTING)) {
		close(fd);
		DT_SKIP("simgpu runs without the drmacct helper");
	}
	close(fd);
	unlink(REC_FILE);
}

DT_TEARDOWN(rv)
{
	if (self->rec > 0) {
		kill(self->rec, SIGKILL);
		waitpid(self->rec, NULL, 0);
	}
	if (self->started_bpf)
		wait_exit(spawn(NULL, "bpf", "stop", NULL));
	unlink(REC_FILE);
}

/* Starts `drmacct record` every @interval and waits for its file header. */
static void start_recorder(struct dt_fx_rv *self, const char *interval)
{
	struct stat st;
	time_t end = time(NULL) + 60;

	self->rec = spawn(REC_LOG, "record", "-o", REC_FILE, "-i", interval, NULL);
	/* the header is written once BPF is open */
	while ((stat(REC_FILE, &st) || st.st_size < DREC_FILE_HEADER_SIZE) && time(NULL) < end)
		usleep(50000);
	DT_ASSERT_GE(st.st_size, (off_t)DREC_FILE_HEADER_SIZE);
}

/* Ends the recorder with SIGINT; it must exit 0. */
static void stop_recorder(struct dt_fx_rv *self)
{
	int rc;

	kill(self->rec, SIGINT);
	rc = wait_exit(self->rec);
	self->rec = 0;
	show_log(REC_LOG);
	DT_ASSERT_EQ(rc, 0);
}

/*
 * Starts a BPF collection of this test's own (ring of @ringbuf bytes, NULL
 * for the default); skips when another one runs, since the test needs @why.
 */
static void start_own_bpf(struct dt_fx_rv *self, const char *ringbuf, const char *why)
{
	int rc;

	sg_need_btf();
	rc = ringbuf ? wait_exit(spawn(REC_LOG, "bpf", "start", "--ringbuf", ringbuf, NULL))
		     : wait_exit(spawn(REC_LOG, "bpf", "start", NULL));

	if (rc && !wait_exit(spawn(NULL, "bpf", "status", NULL)))
		DT_SKIP("a BPF collection is already running; this test needs %s", why);
	if (rc) {
		show_log(REC_LOG);
		DT_FAIL("drmacct bpf start%s%s failed (%d)", ringbuf ? " --ringbuf " : "",
			ringbuf ? ringbuf : "", rc);
	}
	self->started_bpf = true;
}

DT_TEST_F_TIMEOUT(rv, exit_records_from_bpf, 240)
{
	struct client_result shortc, longc;
	struct drec_reader rd;
	struct drec_record rec;
	unsigned char *buf = NULL;
	size_t len = 0;
	int p[2], q[2], rc, exits = 0, samples_long = 0;
	uint64_t last_long = 0;
	bool seen_short_sample = false;
	pid_t ps, pl;

	sg_need_btf();
	rc = wait_exit(spawn(REC_LOG, "bpf", "start", NULL));
	if (rc && wait_exit(spawn(NULL, "bpf", "status", NULL))) {
		show_log(REC_LOG);
		DT_FAIL("drmacct bpf start failed (%d)", rc);
	}
	self->started_bpf = !rc;	/* else someone else's collection: leave it */

	DT_ASSERT_EQ(pipe(p), 0);
	DT_ASSERT_EQ(pipe(q), 0);
	/* long-lived client: sampled; closes after the short one */
	pl = client(q[1], 3, 50000000ull, 3000);
	start_recorder(self, "1s");
	/* short-lived client: opens and closes, likely between two samples */
	ps = client(p[1], 1, 100000000ull, 0);
	get_result(p[0], ps, &shortc);
	get_result(q[0], pl, &longc);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	/* one more sample and poll after both closed, then stop it */
	sleep(2);
	stop_recorder(self);
	dt_info("short client %llu (pid %d): %s busy %llu ns; long client %llu (pid %d): %llu ns",
		(unsigned long long)shortc.client_id, (int)ps, shortc.engine,
		(unsigned long long)shortc.busy_ns, (unsigned long long)longc.client_id, (int)pl,
		(unsigned long long)longc.busy_ns);
	DT_ASSERT_GE(shortc.busy_ns, 100000000ull);	/* the job ran */
	/* the clients' fdinfo against their jobs' WAIT results: accuracy */
	sg_truth_expect("short client", shortc.busy_ns, &shortc.truth);
	sg_truth_expect("long client", longc.busy_ns, &longc.truth);

	DT_ASSERT_EQ(drec_read_file(REC_FILE, &buf, &len), 0);
	DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
	DT_EXPECT_TRUE(rd.info.flags & DREC_F_BPF);
	while (drec_next(&rd, &rec) == 1) {
		const struct drec_device *d;
		struct drec_engine_val e;
		size_t i;

		dt_info("record at %llu: %s client %llu pid %u", (unsigned long long)rec.offset,
			drec_type_name(rec.type), (unsigned long long)rec.client.client_id,
			rec.client.pid);
		if (rec.type != DREC_SAMPLE && rec.type != DREC_CLIENT_EXIT)
			continue;
		d = drec_device(&rd, rec.client.dev);
		DT_ASSERT_NE(d, NULL);
		for (i = 0; drec_client_engine(&rec, i, &e); i++)
			if (!strcmp(d->engines[e.engine].name, shortc.engine))
				break;
		if (rec.client.client_id == shortc.client_id) {
			if (rec.type == DREC_SAMPLE) {
				seen_short_sample = true;
				continue;
			}
			exits++;
			DT_ASSERT_LT(i, rec.client.nengines);
			/* the final totals are the client's own last fdinfo */
			DT_EXPECT_EQ(e.busy_ns, shortc.busy_ns);
			DT_EXPECT_TRUE(e.flags & DREC_E_BUSY);
			DT_EXPECT_STREQ(d->driver, "simgpu");
			DT_EXPECT_EQ(rec.client.pid, (uint32_t)ps);
			/* never sampled: mapped to the sampled device of its driver */
			DT_EXPECT_EQ(d->major, 226u);
			DT_EXPECT_EQ(d->minor, shortc.minor);
			DT_EXPECT_EQ(strncmp(rec.client.comm, "test_record_vm", 15), 0);
		}
		if (rec.client.client_id == longc.client_id && rec.type == DREC_SAMPLE) {
			DT_ASSERT_LT(i, rec.client.nengines);
			DT_EXPECT_GE(e.busy_ns, last_long);	/* never backwards */
			last_long = e.busy_ns;
			samples_long++;
			DT_EXPECT_EQ(d->major, 226u);
			DT_EXPECT_EQ(d->minor, longc.minor);
		}
		if (rec.client.client_id == longc.client_id && rec.type == DREC_CLIENT_EXIT) {
			DT_ASSERT_LT(i, rec.client.nengines);
			DT_EXPECT_EQ(e.busy_ns, longc.busy_ns);
			exits++;
		}
	}
	DT_EXPECT_EQ(rd.nproblems, (size_t)0);
	DT_EXPECT_EQ(exits, 2);
	DT_EXPECT_GE(samples_long, 1);
	DT_EXPECT_EQ(last_long, longc.busy_ns);
	if (seen_short_sample)
		dt_info("the short client was also sampled (a slow guest)");
	drec_reader_free(&rd);
	free(buf);

	/* the report agrees */
	{
		char want[96], *out = NULL;
		size_t olen = 0;
		FILE *f;

		rc = wait_exit(spawn(REC_LOG, "report", "--json", REC_FILE, NULL));
		DT_EXPECT_EQ(rc, 0);
		f = fopen(REC_LOG, "r");
		DT_ASSERT_NE(f, NULL);
		DT_ASSERT_GT(getdelim(&out, &olen, '\0', f), 0);
		fclose(f);
		snprintf(want, sizeof(want), "\"busy_ns_final\": %llu,",
			 (unsigned long long)shortc.busy_ns);
		if (!strstr(out, want) || !strstr(out, "\"exited\": true"))
			DT_FAIL("report lacks %s / exited:\n%s", want, out);
		free(out);
	}
}

/*
 * A full ring buffer is never silent: with a 4 KiB ring and the recorder
 * stopped (SIGSTOP) while 60 clients close, some CLIENT_EXIT events are
 * dropped; the recorder then writes OVERFLOW and LOST records whose count,
 * added to the exits it did receive, is exactly the 60 clients that closed.
 */
DT_TEST_F_TIMEOUT(rv, lost_records_counted, 240)
{
	enum { N = 60 };
	uint64_t ids[N];
	struct drec_reader rd;
	struct drec_record rec;
	unsigned char *buf = NULL;
	size_t len = 0;
	uint64_t lost = 0;
	int exits = 0, overflows = 0, others = 0;

	start_own_bpf(self, "4096", "its own 4 KiB ring");
	start_recorder(self, "500ms");
	DT_ASSERT_EQ(kill(self->rec, SIGSTOP), 0);
	for (int i = 0; i < N; i++) {
		struct drm_simgpu_query_device qd = { 0 };
		int fd = sg_open_raw();

		DT_ASSERT_GE(fd, 0);
		DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &qd), 0);
		ids[i] = qd.client_id;
		close(fd);
	}
	DT_ASSERT_EQ(kill(self->rec, SIGCONT), 0);
	sleep(2);
	stop_recorder(self);

	DT_ASSERT_EQ(drec_read_file(REC_FILE, &buf, &len), 0);
	DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
	while (drec_next(&rd, &rec) == 1) {
		if (rec.type == DREC_LOST) {
			DT_EXPECT_EQ(rec.source, (uint32_t)DREC_SRC_BPF_RINGBUF);
			lost += rec.count;
		} else if (rec.type == DREC_OVERFLOW) {
			overflows++;
		} else if (rec.type == DREC_CLIENT_EXIT) {
			bool ours = false;

			for (int i = 0; i < N; i++)
				ours |= rec.client.client_id == ids[i];
			if (ours)
				exits++;
			else
				others++;
		}
	}
	dt_info("%d exits received, %llu lost, %d overflow records, %d other exits", exits,
		(unsigned long long)lost, overflows, others);
	DT_EXPECT_EQ(rd.nproblems, (size_t)0);
	DT_EXPECT_GT(lost, 0ull);
	DT_EXPECT_GE(overflows, 1);
	DT_EXPECT_EQ((uint64_t)exits + lost, (uint64_t)N + (uint64_t)others);
	drec_reader_free(&rd);
	free(buf);
}

/*
 * An exit that happened before the recording started (still unread in the
 * BPF ring) is not part of the recording; one after the start is.
 */
DT_TEST_F_TIMEOUT(rv, exits_before_the_recording_are_not_in_it, 240)
{
	struct client_result before, after;
	struct drec_reader rd;
	struct drec_record rec;
	unsigned char *buf = NULL;
	size_t len = 0;
	int p[2], exits_before = 0, exits_after = 0;
	pid_t pid;

	start_own_bpf(self, NULL, "a fresh ring");
	DT_ASSERT_EQ(pipe(p), 0);
	pid = client(p[1], 1, 20000000ull, 0);
	get_result(p[0], pid, &before);
	start_recorder(self, "500ms");
	pid = client(p[1], 1, 20000000ull, 0);
	get_result(p[0], pid, &after);
	close(p[0]);
	close(p[1]);
	sleep(2);
	stop_recorder(self);
	DT_ASSERT_EQ(drec_read_file(REC_FILE, &buf, &len), 0);
	DT_ASSERT_EQ(drec_reader_init(&rd, buf, len), 0);
	while (drec_next(&rd, &rec) == 1) {
		if (rec.type != DREC_CLIENT_EXIT)
			continue;
		exits_before += rec.client.client_id == before.client_id;
		exits_after += rec.client.client_id == after.client_id;
	}
	dt_info("client %llu closed before the recording, %llu during it: %d and %d exits",
		(unsigned long long)before.client_id, (unsigned long long)after.client_id,
		exits_before, exits_after);
	DT_EXPECT_EQ(exits_before, 0);
	DT_EXPECT_EQ(exits_after, 1);
	drec_reader_free(&rd);
	free(buf);
}

DT_MAIN
