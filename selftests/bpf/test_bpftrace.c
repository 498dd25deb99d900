// SPDX-License-Identifier: GPL-2.0
/*
 * The bpftrace one-liners of Documentation/bpf.rst ("Questions answered with
 * bpftrace"), run as documented: the build extracts each program's text
 * from the .rst into /opt/drmacct/bpftrace/NAME.bt and puts the build
 * machine's bpftrace into the initramfs (selftests/vm/mkbpftrace.sh). Each
 * test starts bpftrace, waits until it has attached, lets processes run
 * jobs whose times simgpu reports (WAIT), stops bpftrace with SIGINT and
 * compares the maps it prints with that ground truth:
 *   sched-time-per-process  @gpu_ns[pid, comm] = Σ (end_ns - run_ns) per
 *                           process, between Σ (hw_end_ns - run_ns) and
 *                           Σ (sg_sched_end_ns() - queued_ns), both measured
 *                           by simgpu: drm_run_job fires after SUBMIT and
 *                           before run_job(), the completion inside the
 *                           fence's signal;
 *   sched-jobs-per-ring     @jobs[pid, ring] = the jobs each process queued
 *                           on each ring, exactly;
 *   client-busy-per-engine  @busy_ns[client id, engine] = Σ (end_ns -
 *                           start_ns) of the client's jobs on the engine,
 *                           exactly, and equal to its fdinfo delta;
 *   sched-time-per-client   (6.17 events only) @gpu_ns[client id] = Σ
 *                           (end_ns - run_ns) of the client's jobs, within
 *                           the same measured bounds, keyed by the
 *                           drm-client-id fdinfo prints.
 * The scheduler one-liners exist for both event sets: NAME for the 6.1
 * names (drm_sched_job, drm_run_job, drm_sched_process_job), NAME-617 for
 * the 6.17 renames (drm_sched_job_queue/_run/_done, jobs named by fence
 * context and seqno); each test runs the one of the events this kernel's
 * tracefs has, and its TAP line says which.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define BPFTRACE "/usr/bin/bpftrace"
#define BTDIR "/opt/drmacct/bpftrace"
#define NPROCS 2
#define MAX_JOBS 4

struct bt {
	pid_t pid;
	int out;		/* bpftrace's stdout and stderr */
	char *buf;		/* everything it printed, NUL-terminated */
	size_t len, cap;
};

/* True (and reaped) when bpftrace has exited; its pid is then no longer ours. */
static bool bt_exited(struct bt *b)
{
	if (b->pid > 0 && waitpid(b->pid, NULL, WNOHANG) == b->pid)
		b->pid = -1;
	return b->pid < 0;
}

/* Kill bpftrace unless it has already exited and been reaped. */
static void bt_kill(struct bt *b)
{
	if (b->pid <= 0)
		return;
	kill(b->pid, SIGKILL);
	waitpid(b->pid, NULL, 0);
	b->pid = -1;
}

/* Append what bpftrace printed within @ms; false at EOF or on timeout. */
static bool bt_read(struct bt *b, int ms)
{
	struct pollfd p = { .fd = b->out, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return false;
	if (b->cap - b->len < 4096) {
		char *nb = realloc(b->buf, b->cap * 2);

		DT_ASSERT_TRUE(nb != NULL);
		b->buf = nb;
		b->cap *= 2;
	}
	n = read(b->out, b->buf + b->len, b->cap - b->len - 1);
	if (n <= 0)
		return false;
	b->len += n;
	b->buf[b->len] = '\0';
	return true;
}

/* Open perf_event fds of bpftrace: one per attached probe, and its buffers. */
static unsigned int bt_perf_fds(const struct bt *b)
{
	char dir[64], path[320], link[64];
	unsigned int n = 0;
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)b->pid);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		ssize_t len;

		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			n += !strcmp(link, "anon_inode:[perf_event]");
		}
	}
	closedir(dp);
	return n;
}

/* Whether bpftrace sleeps in its event loop's epoll_wait(); @wchan: where. */
static bool bt_in_event_loop(const struct bt *b, char *wchan, size_t len)
{
	char path[64];
	FILE *f;

	wchan[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)b->pid);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(wchan, len, f))
			wchan[0] = '\0';
		fclose(f);
	}
	return strstr(wchan, "epoll") || strstr(wchan, "ep_poll");
}

/* bpftrace running the documented one-liner @name, attached. */
static void bt_start(struct bt *b, const char *name)
{
	char path[256];
	uint64_t t0, deadline;
	unsigned int probes;
	int pfd[2];

	if (access(BPFTRACE, X_OK))
		DT_SKIP("no bpftrace in the guest: the build machine has none (install bpftrace)");
	/*
	 * bpftrace types tracepoint arguments from BTF, else from kernel
	 * headers, which the guest has not: a kernel built without BTF (the
	 * debug kernel's default) leaves it nothing to attach with.
	 */
	if (access("/sys/kernel/btf/vmlinux", F_OK))
		DT_SKIP("this kernel has no BTF (CONFIG_DEBUG_INFO_BTF off) and the guest no "
			"kernel headers: bpftrace cannot type the tracepoints' arguments");
	snprintf(path, sizeof(path), BTDIR "/%s.bt", name);
	/* bpftrace is there, so the one-liners were extracted with it */
	if (access(path, R_OK))
		DT_FAIL("%s: no such one-liner in bpf.rst", path);
	memset(b, 0, sizeof(*b));
	b->cap = 65536;
	b->buf = malloc(b->cap);
	DT_ASSERT_TRUE(b->buf != NULL);
	b->buf[0] = '\0';
	DT_ASSERT_EQ(pipe2(pfd, O_CLOEXEC), 0);
	b->pid = fork();
	DT_ASSERT_GE(b->pid, 0);
	if (b->pid == 0) {
		/* a shell's background job inherits SIGINT ignored */
		signal(SIGINT, SIG_DFL);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execl(BPFTRACE, "bpftrace", path, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	b->out = pfd[0];
	/* LLVM under TCG: starting takes seconds, more on a slow guest. */
	t0 = sg_now_ns();
	deadline = t0 + (uint64_t)(120 * dt_timeout_scale()) * NSEC_PER_SEC;
	while (!strstr(b->buf, "Attaching ")) {
		if (sg_now_ns() > deadline || (!bt_read(b, 1000) && bt_exited(b))) {
			dt_info("bpftrace %s printed:\n%s", name, b->buf);
			bt_kill(b);
			DT_FAIL("bpftrace did not attach %s", name);
		}
	}
	/*
	 * "Attaching N probes..." comes before the attach: it has attached
	 * when it holds a perf_event fd per probe (tracepoints; plus one
	 * output buffer per CPU) and sleeps in its event loop's epoll_wait()
	 * (a slow guest took 34 s).
	 */
	probes = strtoul(strstr(b->buf, "Attaching ") + strlen("Attaching "), NULL, 10);
	for (;;) {
		char wchan[64];

		if (bt_in_event_loop(b, wchan, sizeof(wchan)) && bt_perf_fds(b) >= probes)
			break;
		bt_read(b, 100);
		if (sg_now_ns() > deadline || bt_exited(b)) {
			dt_info("bpftrace %s printed:\n%s", name, b->buf);
			bt_kill(b);
			DT_FAIL("bpftrace never reached its event loop (wchan '%s')", wchan);
		}
	}
	dt_info("bpftrace attached %s in %.1f s (%u perf_event fds)", name, (sg_now_ns() - t0) / 1e9,
		bt_perf_fds(b));
}

/* SIGINT (as ^C would): bpftrace prints its maps and exits 0. */
static void bt_stop(struct bt *b)
{
	uint64_t t0 = sg_now_ns(), deadline = t0 + (uint64_t)(180 * dt_timeout_scale()) * NSEC_PER_SEC;
	unsigned int again = 0;
	uint64_t next = t0 + 5 * NSEC_PER_SEC;
	char wchan[64];
	int status;

	DT_ASSERT_EQ(kill(b->pid, SIGINT), 0);
	while (bt_read(b, 1000) || sg_now_ns() < deadline) {
		if (waitpid(b->pid, &status, WNOHANG) == b->pid) {
			while (bt_read(b, 100))
				;
			close(b->out);
			dt_info("bpftrace exited %.1f s after SIGINT (%u more) and printed:\n%s",
				(sg_now_ns() - t0) / 1e9, again, b->buf);
			DT_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			return;
		}
		/*
		 * Once (on 6.1, loaded host) bpftrace slept on in its event
		 * loop after SIGINT. ^C again, as a user would, but only while
		 * it is still in that loop: once it prints its maps a second
		 * SIGINT would kill it.
		 */
		if (sg_now_ns() > next && bt_in_event_loop(b, wchan, sizeof(wchan))) {
			kill(b->pid, SIGINT);
			again++;
			next = sg_now_ns() + 5 * NSEC_PER_SEC;
		}
	}
	sg_sh("for t in /proc/%d/task/*; do echo \"$t $(cat $t/comm) $(cut -d' ' -f3 $t/stat) "
	      "$(cat $t/wchan)\"; cat $t/stack; done 2>&1 | sed 's/^/# /'", (int)b->pid);
	bt_kill(b);
	DT_FAIL("bpftrace did not exit on SIGINT:\n%s", b->buf);
}

/* The value of "@map[key]: value" in bpftrace's output, -1 when absent. */
static int64_t bt_value(const struct bt *b, const char *map, const char *key)
{
	char pat[256];
	const char *p;

	snprintf(pat, sizeof(pat), "@%s[%s]: ", map, key);
	for (p = b->buf; (p = strstr(p, pat)); p++)
		if (p == b->buf || p[-1] == '\n')
			return strtoll(p + strlen(pat), NULL, 10);
	return -1;
}

/* Lines of @map in bpftrace's output. */
static unsigned int bt_entries(const struct bt *b, const char *map)
{
	char pat[128];
	unsigned int n = 0;

	snprintf(pat, sizeof(pat), "\n@%s[", map);
	for (const char *p = b->buf; (p = strstr(p, pat)); p++)
		n++;
	return n;
}

struct proc_truth {
	pid_t pid;
	unsigned int jobs;
	uint64_t sched_ns;		/* Σ end_ns - run_ns */
	uint64_t lo_ns;			/* Σ hw_end_ns - run_ns */
	uint64_t hi_ns;			/* Σ sg_sched_end_ns() - queued_ns */
	char ring[64];			/* engine name + instance, as drm_sched names it */
};

/* A child: @njobs jobs of @ns, one after the other, on @engine; truth to @wfd. */
static void child_jobs(const struct sg_engine *eng, unsigned int njobs, uint64_t ns, int wfd)
{
	struct proc_truth t = { .pid = getpid(), .jobs = njobs };
	int fd = sg_open();

	for (unsigned int j = 0; j < njobs; j++) {
		struct drm_simgpu_wait w;

		sg_wait(fd, sg_submit_busy(fd, eng->index, 0, ns), &w);
		t.sched_ns += w.end_ns - w.run_ns;
		t.lo_ns += w.hw_end_ns - w.run_ns;
		t.hi_ns += sg_sched_end_ns(&w) - w.queued_ns;
		snprintf(t.ring, sizeof(t.ring), "%s%u", eng->q.name, w.instance);
	}
	close(fd);
	_exit(write(wfd, &t, sizeof(t)) == sizeof(t) ? 0 : 1);
}

/* NPROCS processes with 3 and 2 jobs of 30 and 45 ms on the simple engine. */
static void run_procs(struct proc_truth *t)
{
	const struct sg_engine *eng;
	struct sg_dev dev;
	pid_t pid[NPROCS];
	int pfd[2], fd = sg_open();

	sg_query(fd, &dev);
	close(fd);
	eng = sg_engine_simple(&dev);
	DT_ASSERT_TRUE(eng != NULL);
	DT_ASSERT_EQ(pipe(pfd), 0);
	for (int i = 0; i < NPROCS; i++) {
		pid[i] = fork();
		DT_ASSERT_GE(pid[i], 0);
		if (pid[i] == 0) {
			close(pfd[0]);
			child_jobs(eng, 3 - i, (30 + 15 * i) * NSEC_PER_MSEC, pfd[1]);
		}
	}
	close(pfd[1]);
	for (int i = 0; i < NPROCS; i++) {
		struct proc_truth x;
		int status;

		DT_ASSERT_EQ(read(pfd[0], &x, sizeof(x)), (ssize_t)sizeof(x));
		for (int k = 0; k < NPROCS; k++)
			if (pid[k] == x.pid)
				t[k] = x;
		DT_ASSERT_EQ(waitpid(pid[i], &status, 0), pid[i]);
		DT_ASSERT_EQ(status, 0);
	}
	close(pfd[0]);
	sg_dev_free(&dev);
}

/*
 * The one-liner @name of this kernel's gpu_scheduler events: @name itself
 * for the 6.1 set, @name-617 for the 6.17 set; labels the TAP line.
 */
static const char *sched_oneliner(const char *name, char *buf, size_t len)
{
	int ev = sg_sched_events();

	if (!ev)
		DT_SKIP("no gpu_scheduler events in tracefs (gpu_sched not loaded)");
	dt_label("%s events", ev == 617 ? "6.17" : "6.1");
	snprintf(buf, len, "%s%s", name, ev == 617 ? "-617" : "");
	return buf;
}

DT_TEST_TIMEOUT(sched_time_per_process, 600)
{
	struct proc_truth t[NPROCS] = { 0 };
	char name[64];
	struct bt b;

	bt_start(&b, sched_oneliner("sched-time-per-process", name, sizeof(name)));
	run_procs(t);
	bt_stop(&b);
	for (int i = 0; i < NPROCS; i++) {
		char key[64];
		int64_t v;

		snprintf(key, sizeof(key), "%d, test_bpftrace", (int)t[i].pid);
		v = bt_value(&b, "gpu_ns", key);
		dt_info("pid %d: bpftrace %" PRId64 " ns, WAIT run..end %" PRIu64 " ns over %u jobs"
			" (measured bounds %" PRIu64 "..%" PRIu64 ")", (int)t[i].pid, v,
			t[i].sched_ns, t[i].jobs, t[i].lo_ns, t[i].hi_ns);
		DT_EXPECT_GE(v, (int64_t)t[i].lo_ns);
		DT_EXPECT_LE(v, (int64_t)t[i].hi_ns);
	}
	/* Only the two processes queued jobs; the END block cleared the joins. */
	DT_EXPECT_EQ(bt_entries(&b, "gpu_ns"), (unsigned int)NPROCS);
	DT_EXPECT_EQ(bt_entries(&b, "run") + bt_entries(&b, "pid"), 0u);
	free(b.buf);
}

DT_TEST_TIMEOUT(sched_jobs_per_ring, 600)
{
	struct proc_truth t[NPROCS] = { 0 };
	char name[64];
	struct bt b;

	bt_start(&b, sched_oneliner("sched-jobs-per-ring", name, sizeof(name)));
	run_procs(t);
	bt_stop(&b);
	for (int i = 0; i < NPROCS; i++) {
		char key[96];

		snprintf(key, sizeof(key), "%d, %s", (int)t[i].pid, t[i].ring);
		DT_EXPECT_EQ(bt_value(&b, "jobs", key), (int64_t)t[i].jobs);
	}
	DT_EXPECT_EQ(bt_entries(&b, "jobs"), (unsigned int)NPROCS);
	free(b.buf);
}

DT_TEST_TIMEOUT(client_busy_per_engine, 600)
{
	const struct sg_engine *eng[2];
	uint64_t truth[2][2] = { { 0 } }, id[2], before[2][2];
	struct sg_dev dev;
	struct bt b;
	int fd[2];

	for (int c = 0; c < 2; c++) {
		fd[c] = sg_open();
		id[c] = sg_client_id(fd[c]);
	}
	sg_query(fd[0], &dev);
	eng[0] = sg_engine_simple(&dev);
	eng[1] = sg_engine_multi(&dev);
	DT_ASSERT_TRUE(eng[0] && eng[1]);
	for (int c = 0; c < 2; c++) {
		struct sg_fdinfo fi;

		sg_fdinfo_read(fd[c], &fi);
		for (int e = 0; e < 2; e++)
			before[c][e] = sg_fdinfo_engine_ns(&fi, eng[e]->q.name);
		sg_fdinfo_free(&fi);
	}
	bt_start(&b, "client-busy-per-engine");
	/* client c: 2 + c jobs of 20..50 ms on each engine, all queued at once */
	for (int c = 0; c < 2; c++) {
		uint64_t job[2][4];

		for (int e = 0; e < 2; e++)
			for (int j = 0; j < 2 + c; j++)
				job[e][j] = sg_submit_busy(fd[c], eng[e]->index, SIMGPU_INSTANCE_ANY,
							   (20 + 10 * ((c + e + j) % 4)) * NSEC_PER_MSEC);
		for (int e = 0; e < 2; e++)
			for (int j = 0; j < 2 + c; j++) {
				struct drm_simgpu_wait w;

				sg_wait(fd[c], job[e][j], &w);
				truth[c][e] += w.end_ns - w.start_ns;
			}
	}
	bt_stop(&b);
	for (int c = 0; c < 2; c++) {
		struct sg_fdinfo fi;

		sg_fdinfo_read(fd[c], &fi);
		for (int e = 0; e < 2; e++) {
			char key[64];
			int64_t v;

			snprintf(key, sizeof(key), "%" PRIu64 ", %u", id[c], eng[e]->index);
			v = bt_value(&b, "busy_ns", key);
			dt_info("client %" PRIu64 " %s: bpftrace %" PRId64 " ns, WAIT %" PRIu64
				" ns", id[c], eng[e]->q.name, v, truth[c][e]);
			DT_EXPECT_EQ(v, (int64_t)truth[c][e]);
			DT_EXPECT_EQ(sg_fdinfo_engine_ns(&fi, eng[e]->q.name) - before[c][e],
				     truth[c][e]);
		}
		sg_fdinfo_free(&fi);
		close(fd[c]);
	}
	DT_EXPECT_EQ(bt_entries(&b, "busy_ns"), 4u);
	sg_dev_free(&dev);
	free(b.buf);
}

/*
 * 6.17 events only: two clients of this process, 3 and 2 jobs one after
 * the other on the simple engine; @gpu_ns[drm-client-id] per client.
 */
DT_TEST_TIMEOUT(sched_time_per_client, 600)
{
	const struct sg_engine *eng;
	uint64_t truth[2] = { 0 }, lo[2] = { 0 }, hi[2] = { 0 }, id[2];
	unsigned int jobs[2] = { 3, 2 };
	struct sg_dev dev;
	struct bt b;
	int fd[2];

	if (sg_sched_events() != 617)
		DT_SKIP("this kernel's gpu_scheduler events (6.1 set) carry no DRM client id");
	dt_label("6.17 events");
	for (int c = 0; c < 2; c++) {
		struct sg_fdinfo fi;

		fd[c] = sg_open();
		sg_fdinfo_read(fd[c], &fi);
		id[c] = sg_fdinfo_u64(&fi, "drm-client-id", "");
		sg_fdinfo_free(&fi);
	}
	sg_query(fd[0], &dev);
	eng = sg_engine_simple(&dev);
	DT_ASSERT_TRUE(eng != NULL);
	bt_start(&b, "sched-time-per-client");
	for (int c = 0; c < 2; c++)
		for (unsigned int j = 0; j < jobs[c]; j++) {
			struct drm_simgpu_wait w;

			sg_wait(fd[c], sg_submit_busy(fd[c], eng->index, SIMGPU_INSTANCE_ANY,
						      (25 + 10 * (c + j)) * NSEC_PER_MSEC), &w);
			truth[c] += w.end_ns - w.run_ns;
			lo[c] += w.hw_end_ns - w.run_ns;
			hi[c] += sg_sched_end_ns(&w) - w.queued_ns;
		}
	bt_stop(&b);
	for (int c = 0; c < 2; c++) {
		char key[32];
		int64_t v;

		snprintf(key, sizeof(key), "%" PRIu64, id[c]);
		v = bt_value(&b, "gpu_ns", key);
		dt_info("drm-client-id %" PRIu64 ": bpftrace %" PRId64 " ns, WAIT run..end %" PRIu64
			" ns over %u jobs (measured bounds %" PRIu64 "..%" PRIu64 ")", id[c], v,
			truth[c], jobs[c], lo[c], hi[c]);
		DT_EXPECT_GE(v, (int64_t)lo[c]);
		DT_EXPECT_LE(v, (int64_t)hi[c]);
		close(fd[c]);
	}
	DT_EXPECT_EQ(bt_entries(&b, "gpu_ns"), 2u);
	DT_EXPECT_EQ(bt_entries(&b, "run") + bt_entries(&b, "cid"), 0u);
	sg_dev_free(&dev);
	free(b.buf);
}

DT_MAIN
