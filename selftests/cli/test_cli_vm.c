// SPDX-License-Identifier: MIT
/*
 * test_cli_vm.c - the drmacct CLI against real simgpu clients (guest test).
 *
 * Runs /usr/bin/drmacct (or $DRMACCT_BIN) and compares what it reports with
 * the raw fdinfo and with what the test itself did on the device:
 *  - `validate --all` finds no spec errors in simgpu's fdinfo;
 *  - `list --json` shows the same counters as /proc/self/fdinfo (a
 *    consistency check: the CLI and this test parse the same text with
 *    the same library), and busy times equal to the jobs' WAIT sums and
 *    within the measured gaps of simgpu's own clock reads (accuracy);
 *  - a client whose fd is dup'd and inherited by a child is one client,
 *    held by both processes, counted once in the totals;
 *  - utilisation of a fully busy engine is 100 % (capacity 1) and 50 %
 *    with one job on a capacity-2 engine, within 1 % of that, the engine
 *    busy for the whole window by its own stamps;
 *  - `top` runs in batch mode, and on a pseudo terminal draws its
 *    full-screen view with the guest's terminfo (static ncursesw);
 *  - a driver without usage stats (simgpu accounting=0, vgem) and one with
 *    the core keys only (simgpu stats=core): validate, list and conformance
 *    say so and exit 4 where there is nothing to check;
 *  - with a private BPF collection: `check` says when it had nothing to
 *    compare (exit 4), and `check -v` and `bpf dump` show a comm with an
 *    escape sequence and invalid UTF-8 as '?', never the raw bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm.h>
#include "dtest.h"
#include "fdinfo.h"
#include "../user/json_dom.h"
#include "sgtest.h"
#include "simgpu_drm.h"

/* ---- device ---- */

static int open_simgpu(void)
{
	int fd = sg_open_raw();

	if (fd < 0)
		DT_SKIP("no simgpu render node (is simgpu.ko loaded?)");
	return fd;
}

static uint64_t client_id(int fd, unsigned int *nengines)
{
	struct drm_simgpu_query_device q = { 0 };

	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &q), 0);
	if (nengines)
		*nengines = q.num_engines;
	if (!(q.flags & SIMGPU_DEVICE_ACCOUNTING))
		DT_SKIP("simgpu runs without the drmacct helper");
	return q.client_id;
}

static void query_engine(int fd, unsigned int idx, struct drm_simgpu_query_engine *q)
{
	memset(q, 0, sizeof(*q));
	q->engine = idx;
	DT_ASSERT_EQ(ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_ENGINE, q), 0);
}

/* First engine with capacity @cap (any when 0); -1 when none. */
static int find_engine(int fd, unsigned int n, unsigned int cap,
		       struct drm_simgpu_query_engine *q)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		query_engine(fd, i, q);
		if (!cap || q->capacity == cap)
			return (int)i;
	}
	return -1;
}

/* ---- running drmacct ---- */

struct run {
	int status;
	char *out;
	size_t len;
};

static void drmacct(struct run *r, const char *a0, ...) __attribute__((sentinel));

static void drmacct(struct run *r, const char *a0, ...)
{
	const char *bin = getenv("DRMACCT_BIN");
	char *argv[32];
	int p[2], st, n = 0;
	va_list ap;
	pid_t pid;

	if (!bin || !*bin)
		bin = "/usr/bin/drmacct";
	if (access(bin, X_OK))
		DT_FAIL("%s not found", bin);
	argv[n++] = (char *)"drmacct";
	va_start(ap, a0);
	for (const char *a = a0; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	DT_ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		execv(bin, argv);
		_exit(127);
	}
	close(p[1]);
	r->out = NULL;
	r->len = 0;
	for (;;) {
		char buf[4096];
		ssize_t k = read(p[0], buf, sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		r->out = realloc(r->out, r->len + (size_t)k + 1);
		DT_ASSERT_TRUE(r->out != NULL);
		memcpy(r->out + r->len, buf, (size_t)k);
		r->len += (size_t)k;
		r->out[r->len] = '\0';
	}
	close(p[0]);
	if (!r->out)
		r->out = strdup("");
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- picking values out of drmacct's pretty-printed JSON ---- */

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The client object with this id: from its "index" to the next client. */
static char *client_obj(const char *json, uint64_t id)
{
	char key[64];
	const char *s, *e, *p;
	char *obj;

	snprintf(key, sizeof(key), "\"client_id\": %llu,", (unsigned long long)id);
	e = strstr(json, key);
	if (!e)
		return NULL;
	/* back to the start of this client: the last "index" before the id */
	for (s = NULL, p = json; (p = strstr(p, "\"index\":")) && p < e; p++)
		s = p;
	if (!s)
		return NULL;
	e = strstr(e, "\"index\":");
	if (!e)
		e = strstr(s, "\"processes\":");
	if (!e)
		e = s + strlen(s);
	obj = strndup(s, (size_t)(e - s));
	DT_ASSERT_TRUE(obj != NULL);
	return obj;
}

/* Value of "@field": N after "name": "@engine" inside @obj; -1 if absent. */
static long long engine_field(const char *obj, const char *engine, const char *field)
{
	char key[96];
	const char *s, *next, *f;

	snprintf(key, sizeof(key), "\"name\": \"%s\",", engine);
	s = strstr(obj, key);
	if (!s)
		return -1;
	next = strstr(s + strlen(key), "\"name\": ");
	snprintf(key, sizeof(key), "\"%s\": ", field);
	f = strstr(s, key);
	if (!f || (next && f > next))
		return -1;
	f += strlen(key);
	if (!strncmp(f, "null", 4))
		return -2;
	return strtoll(f, NULL, 10);
}

static double engine_util(const char *obj, const char *engine)
{
	char key[96];
	const char *s, *f, *next;

	snprintf(key, sizeof(key), "\"name\": \"%s\",", engine);
	s = strstr(obj, key);
	DT_ASSERT_TRUE(s != NULL);
	next = strstr(s + strlen(key), "\"name\": ");
	f = strstr(s, "\"utilization\": ");
	DT_ASSERT_TRUE(f != NULL && (!next || f < next));
	f += strlen("\"utilization\": ");
	if (!strncmp(f, "null", 4))
		DT_FAIL("utilization of %s is null", engine);
	return strtod(f, NULL);
}

/* ---- tests ---- */

DT_TEST_TIMEOUT(validate_all_has_no_errors, 120)
{
	unsigned int n, i;
	struct run r;
	char pidfd[32];
	int fd = open_simgpu(), fd2 = open_simgpu();

	client_id(fd, &n);
	sg_bo_create(fd, 65536);
	for (i = 0; i < n; i++)
		sg_wait(fd, sg_submit_busy(fd, i, SIMGPU_INSTANCE_ANY, 1000000), NULL);
	drmacct(&r, "validate", "--all", NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.out, ": 0 errors") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, "driver simgpu") != NULL);
	free(r.out);

	snprintf(pidfd, sizeof(pidfd), "%d:%d", (int)getpid(), fd);
	drmacct(&r, "validate", pidfd, NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.out, "1 checked against the current spec: 0 errors") != NULL);
	free(r.out);
	close(fd2);
	close(fd);
}

/* @v lies in [@lo, @hi]: read between two raw fdinfo reads. */
#define EXPECT_BETWEEN(v, lo, hi)					\
	do {								\
		long long v_ = (v);					\
		DT_EXPECT_GE(v_, (long long)(lo));			\
		DT_EXPECT_LE(v_, (long long)(hi));			\
	} while (0)

/*
 * Consistency, not accuracy, for the counters: the CLI and this test read
 * the fdinfo text with the same parser, so a parser bug would pass. The
 * accuracy part is the busy time against the jobs' WAIT results: exactly
 * their Σ(end_ns - start_ns), within the measured gaps of the engine's own
 * Σ(hw_end_ns - hw_start_ns) (sg_truth_expect()).
 */
DT_TEST_TIMEOUT(list_json_consistent_with_raw_fdinfo, 120)
{
	struct dac_fdinfo fi, fi1;
	char path[64], pid[16], *obj;
	struct drm_simgpu_wait w[16];
	unsigned int n, i;
	uint64_t id;
	struct run r;
	int fd = open_simgpu();

	id = client_id(fd, &n);
	DT_ASSERT_LE(n, 16u);
	sg_bo_create(fd, 3 * 65536);
	for (i = 0; i < n; i++)
		sg_wait(fd, sg_submit_busy(fd, i, SIMGPU_INSTANCE_ANY, 5000000 * (i + 1)), &w[i]);
	/*
	 * Idle now: busy time and cycles stay put, so drmacct must show exactly
	 * the raw values. drm-total-cycles is a running clock: drmacct's reading
	 * lies between one raw read before and one after.
	 */
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	DT_ASSERT_EQ(dac_fdinfo_read_file(path, DAC_PROFILE_CURRENT, &fi), 0);
	DT_ASSERT_TRUE(fi.has_client_id);
	DT_EXPECT_EQ(fi.client_id, id);

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	drmacct(&r, "list", "--json", "--interval=0", "--pid", pid, NULL);
	DT_ASSERT_EQ(dac_fdinfo_read_file(path, DAC_PROFILE_CURRENT, &fi1), 0);
	DT_ASSERT_EQ(r.status, 0);
	DT_EXPECT_EQ(count(r.out, "\"client_id\": "), (size_t)1);
	obj = client_obj(r.out, id);
	DT_ASSERT_TRUE(obj != NULL);
	DT_EXPECT_TRUE(strstr(obj, "\"driver\": \"simgpu\"") != NULL);
	DT_EXPECT_EQ(fi.nengines, (size_t)n);
	DT_ASSERT_EQ(fi1.nengines, fi.nengines);
	for (i = 0; i < fi.nengines; i++) {
		const struct dac_engine *e = &fi.engines[i], *e1 = &fi1.engines[i];

		DT_EXPECT_TRUE(e->has_busy);
		DT_EXPECT_GE(e->busy_ns, 5000000ull * (i + 1));
		DT_EXPECT_EQ(e1->busy_ns, e->busy_ns);
		DT_EXPECT_EQ(engine_field(obj, e->name, "busy_ns"), (long long)e->busy_ns);
		/* the engine of this name ran one job of this file: accuracy */
		for (unsigned int k = 0; k < n; k++) {
			struct drm_simgpu_query_engine q;

			query_engine(fd, k, &q);
			if (!strcmp(q.name, e->name))
				sg_truth_expect_one(e->name,
						    (uint64_t)engine_field(obj, e->name, "busy_ns"),
						    &w[k]);
		}
		DT_EXPECT_EQ(engine_field(obj, e->name, "capacity"), (long long)e->capacity);
		if (e->has_cycles) {
			DT_EXPECT_EQ(e1->cycles, e->cycles);
			DT_EXPECT_EQ(engine_field(obj, e->name, "cycles"), (long long)e->cycles);
		}
		if (e->has_maxfreq)
			DT_EXPECT_EQ(engine_field(obj, e->name, "maxfreq_hz"),
				     (long long)e->maxfreq_hz);
		if (e->has_total_cycles)
			EXPECT_BETWEEN(engine_field(obj, e->name, "total_cycles"),
				       e->total_cycles, e1->total_cycles);
	}
	for (i = 0; i < fi.nregions; i++) {
		const struct dac_region *g = &fi.regions[i];
		char key[128];

		if (!g->has_total)
			continue;
		snprintf(key, sizeof(key), "\"region\": \"%s\",\n          \"total\": %llu,",
			 g->name, (unsigned long long)g->total);
		if (!strstr(obj, key))
			DT_FAIL("region %s total %llu not in:\n%s", g->name,
				(unsigned long long)g->total, obj);
	}
	free(obj);
	free(r.out);
	dac_fdinfo_free(&fi);
	dac_fdinfo_free(&fi1);
	close(fd);
}

DT_TEST_TIMEOUT(dup_and_fork_counted_once, 120)
{
	char *obj, key[64], *tot;
	int fd = open_simgpu(), fd2, p[2];
	struct drm_simgpu_query_engine q;
	long long busy, total_busy;
	unsigned int n;
	uint64_t id;
	struct run r;
	pid_t child;
	int eng;

	id = client_id(fd, &n);
	eng = find_engine(fd, n, 0, &q);
	DT_ASSERT_GE(eng, 0);
	fd2 = dup(fd);
	DT_ASSERT_GE(fd2, 0);
	DT_ASSERT_EQ(pipe(p), 0);
	child = fork();
	DT_ASSERT_GE(child, 0);
	if (child == 0) {
		char c;

		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	sg_wait(fd, sg_submit_busy(fd, (unsigned int)eng, SIMGPU_INSTANCE_ANY, 20000000), NULL);
	sg_wait(fd2, sg_submit_busy(fd2, (unsigned int)eng, SIMGPU_INSTANCE_ANY, 10000000), NULL);

	drmacct(&r, "list", "--json", "--interval=0", NULL);
	close(p[1]);
	waitpid(child, NULL, 0);
	DT_ASSERT_EQ(r.status, 0);
	snprintf(key, sizeof(key), "\"client_id\": %llu,", (unsigned long long)id);
	DT_EXPECT_EQ(count(r.out, key), (size_t)1);
	obj = client_obj(r.out, id);
	DT_ASSERT_TRUE(obj != NULL);
	snprintf(key, sizeof(key), "\"pid\": %d,", (int)getpid());
	DT_EXPECT_EQ(count(obj, key), (size_t)2);	/* fd and fd2 */
	snprintf(key, sizeof(key), "\"pid\": %d,", (int)child);
	DT_EXPECT_EQ(count(obj, key), (size_t)2);	/* both inherited */
	busy = engine_field(obj, q.name, "busy_ns");
	DT_EXPECT_GE(busy, 30000000ll);
	/* Totals: this device's engine has exactly our one client, counted once. */
	tot = strstr(r.out, "\"totals\":");
	DT_ASSERT_TRUE(tot != NULL);
	snprintf(key, sizeof(key), "\"name\": \"%s\",\n", q.name);
	tot = strstr(tot, key);
	DT_ASSERT_TRUE(tot != NULL);
	DT_EXPECT_TRUE(strstr(tot, "\"clients\": 1,") != NULL);
	total_busy = strtoll(strstr(tot, "\"busy_ns\": ") + 11, NULL, 10);
	DT_EXPECT_EQ(total_busy, busy);
	/* Both processes are listed with the client. */
	snprintf(key, sizeof(key), "\"pid\": %d,\n      \"comm\"", (int)child);
	DT_EXPECT_TRUE(strstr(strstr(r.out, "\"processes\": ["), key) != NULL);
	free(obj);
	free(r.out);
	close(fd2);
	close(fd);
}

/*
 * Utilisation of an engine that one job keeps busy for the whole window:
 * 1/@cap exactly by the engine's own truth, the CLI within 1 % of it.
 */
static void busy_util(unsigned int cap)
{
	struct drm_simgpu_query_engine q;
	struct drm_simgpu_wait w;
	char pid[16], *obj;
	unsigned int n;
	uint64_t id, job, t0, t1;
	struct run r;
	double u, want, scale = dt_timeout_scale();
	const char *iv;
	int fd = open_simgpu(), eng;
	char interval[32];

	id = client_id(fd, &n);
	eng = find_engine(fd, n, cap, &q);
	if (eng < 0)
		DT_SKIP("no engine with capacity %u", cap);
	/*
	 * One 6 s job; the CLI's 2 s sampling window lies inside it, which
	 * the engine's own stamps prove below (hw_start_ns before the CLI
	 * started, hw_end_ns after it returned), so the true utilisation is
	 * exactly 1/cap. The kernel's busy time is exact at each read, so
	 * the error is the CLI's: how far its clock readings are from the two
	 * fdinfo reads. A stall of the guest between a read and its clock
	 * reading counts in full: 20 ms of stall in the 2 s window is the
	 * 1 % admitted (worst error: 1 % of 1/cap either way); an interval
	 * 2 % off fails.
	 */
	job = sg_submit_busy(fd, (unsigned int)eng, SIMGPU_INSTANCE_ANY,
			     (uint64_t)(6000000000.0 * scale));
	usleep(100000);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(interval, sizeof(interval), "--interval=%.0fms", 2000 * scale);
	t0 = sg_now_ns();
	drmacct(&r, "list", "--json", interval, "--pid", pid, NULL);
	t1 = sg_now_ns();
	DT_ASSERT_EQ(r.status, 0);
	obj = client_obj(r.out, id);
	DT_ASSERT_TRUE(obj != NULL);
	u = engine_util(obj, q.name);
	iv = strstr(obj, "\"interval_ns\": ");
	dt_info("engine %s capacity %u: utilization %.4f over %lld ns, busy %lld ns", q.name,
		q.capacity, u, iv ? strtoll(iv + strlen("\"interval_ns\": "), NULL, 10) : -1ll,
		engine_field(obj, q.name, "busy_ns"));
	free(obj);
	free(r.out);

	drmacct(&r, "top", "-n", "1", "-i", "300ms", "--pid", pid, NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.out, "== drmacct top: update 1") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, "simgpu") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, q.name) != NULL);
	free(r.out);
	sg_wait(fd, job, &w);
	dt_info("engine ran the job %" PRIu64 "..%" PRIu64 ", the CLI ran %" PRIu64 "..%" PRIu64,
		(uint64_t)w.hw_start_ns, (uint64_t)w.hw_end_ns, t0, t1);
	/* the premise, from the engine's stamps: busy over the whole window */
	DT_ASSERT_LE(w.hw_start_ns, t0);
	DT_ASSERT_GE(w.hw_end_ns, t1);
	want = 1.0 / q.capacity;
	DT_EXPECT_GE(u, want * 0.99);
	DT_EXPECT_LE(u, want * 1.01);
	close(fd);
}

DT_TEST_TIMEOUT(busy_engine_utilisation_full, 120)
{
	busy_util(1);
}

DT_TEST_TIMEOUT(busy_engine_utilisation_half_of_capacity_2, 120)
{
	busy_util(2);
}

/* ---- check and bpf dump, with a collection pinned where no one else looks ---- */

/*
 * Device identity through libdrm: simgpu pci=1 also drives QEMU's edu PCI
 * device (1234:11e8); list --json names that client's device with its bus,
 * PCI slot (= the driver's drm-pdev) and ids, and the render node libdrm
 * reports; the platform device has no PCI identity.
 */
DT_TEST_TIMEOUT(list_json_device_identity_from_libdrm, 120)
{
	char bdf[256], pid[16], p[96];
	struct run r;
	struct jd *j;
	bool seen_pci = false, seen_platform = false;
	int fd, pfd;

	if (sg_edu_bdf(bdf, sizeof(bdf)))
		DT_SKIP("no QEMU edu PCI device (1234:11e8); run-vm.sh adds one");
	DT_ASSERT_EQ(sg_sh("rmmod simgpu && modprobe simgpu pci=1"), 0);
	fd = sg_open_pci_node(bdf);
	pfd = open_simgpu();
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	drmacct(&r, "list", "--json", "-i", "0", "--pid", pid, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	for (long i = 0; i < jd_len(j, "clients"); i++) {
		const char *pdev, *bus;

		snprintf(p, sizeof(p), "clients.%ld.pdev", i);
		pdev = jd_str(j, p);
		snprintf(p, sizeof(p), "clients.%ld.device.bus", i);
		bus = jd_str(j, p);
		if (pdev && !strcmp(pdev, bdf)) {
			seen_pci = true;
			DT_EXPECT_STREQ(bus, "pci");
			snprintf(p, sizeof(p), "clients.%ld.device.pci.slot", i);
			DT_EXPECT_STREQ(jd_str(j, p), bdf);
			snprintf(p, sizeof(p), "clients.%ld.device.pci.vendor_id", i);
			DT_EXPECT_EQ(jd_int(j, p, -1), 0x1234);
			snprintf(p, sizeof(p), "clients.%ld.device.pci.device_id", i);
			DT_EXPECT_EQ(jd_int(j, p, -1), 0x11e8);
			snprintf(p, sizeof(p), "clients.%ld.device.name", i);
			DT_EXPECT_TRUE(jd_str(j, p) && !strncmp(jd_str(j, p), "renderD", 7));
		} else {
			seen_platform = true;
			snprintf(p, sizeof(p), "clients.%ld.device.pci", i);
			DT_EXPECT_TRUE(jd_is_null(j, p));
		}
	}
	DT_EXPECT_TRUE(seen_pci);
	DT_EXPECT_TRUE(seen_platform);
	jd_free(j);
	free(r.out);
	close(fd);
	close(pfd);
	DT_EXPECT_EQ(sg_sh("rmmod simgpu && modprobe simgpu"), 0);
}

/*
 * `drmacct top -n 2` on a new pseudo terminal with TERM=@term; what it
 * wrote, in a malloc'd string. The exit status in *@status.
 */
static char *top_on_pty(const char *term, int *status)
{
	const char *bin = getenv("DRMACCT_BIN");
	char *out = NULL, *name;
	size_t len = 0;
	int master, st;
	pid_t pid;

	if (!bin || !*bin)
		bin = "/usr/bin/drmacct";
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	DT_ASSERT_GE(master, 0);
	DT_ASSERT_EQ(grantpt(master), 0);
	DT_ASSERT_EQ(unlockpt(master), 0);
	name = ptsname(master);
	DT_ASSERT_TRUE(name != NULL);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd;

		setsid();
		fd = open(name, O_RDWR);
		if (fd < 0)
			_exit(127);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("TERM", term, 1);
		execl(bin, "drmacct", "top", "-n", "2", "-i", "100ms", (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct pollfd pf = { .fd = master, .events = POLLIN };
		char buf[4096];
		ssize_t k;

		if (poll(&pf, 1, 20000) <= 0)
			break;
		k = read(master, buf, sizeof(buf));
		if (k <= 0)
			break;	/* EIO once the child closed the terminal */
		out = realloc(out, len + (size_t)k + 1);
		DT_ASSERT_TRUE(out != NULL);
		memcpy(out + len, buf, (size_t)k);
		len += (size_t)k;
		out[len] = '\0';
	}
	DT_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	close(master);
	*status = st;
	return out ? out : strdup("");
}

/*
 * top's full-screen view in the guest: its static ncursesw finds the
 * terminfo entries the initramfs carries (TERM=linux: the alternate screen
 * is not in that entry, so the view is seen by its cursor addressing); an
 * unknown terminal gets plain snapshots and the reason.
 */
DT_TEST_TIMEOUT(top_screen_with_the_guests_terminfo, 60)
{
	char *out;
	int st;

	out = top_on_pty("linux", &st);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	DT_EXPECT_TRUE(strstr(out, "drmacct top  ") != NULL);
	DT_EXPECT_TRUE(strstr(out, "\033[") != NULL);
	DT_EXPECT_TRUE(strstr(out, "plain snapshots instead") == NULL);
	if (!strstr(out, "\033[") || strstr(out, "plain snapshots"))
		dt_info("%s", out);
	free(out);
	out = top_on_pty("drmacct-no-such-terminal", &st);
	DT_EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	DT_EXPECT_TRUE(strstr(out, "no terminfo entry for TERM=drmacct-no-such-terminal: "
				   "plain snapshots instead") != NULL);
	DT_EXPECT_TRUE(strstr(out, "== drmacct top: update 2") != NULL);
	free(out);
}

#define PRIV_BPF_DIR "/sys/fs/bpf/drmacct-cli-vm"

DT_FIXTURE(privbpf) {
	bool started;
};

DT_SETUP(privbpf)
{
	struct run r;

	sg_need_btf();
	drmacct(&r, "bpf", "stop", "--dir", PRIV_BPF_DIR, NULL);	/* a leftover */
	free(r.out);
	drmacct(&r, "bpf", "start", "--dir", PRIV_BPF_DIR, NULL);
	free(r.out);
	if (r.status)
		DT_FAIL("drmacct bpf start --dir %s failed (%d)", PRIV_BPF_DIR, r.status);
	self->started = true;
}

DT_TEARDOWN(privbpf)
{
	struct run r;

	if (!self->started)
		return;
	drmacct(&r, "bpf", "stop", "--dir", PRIV_BPF_DIR, NULL);
	free(r.out);
	if (r.status)
		dt_info("drmacct bpf stop --dir %s failed (%d)", PRIV_BPF_DIR, r.status);
}

/*
 * No client open: nothing was compared, and check says so and exits 4
 * instead of claiming that "0 pairs agree" with exit 0.
 */
DT_TEST_F_TIMEOUT(privbpf, check_with_nothing_to_compare, 120)
{
	struct run r;

	drmacct(&r, "check", "--dir", PRIV_BPF_DIR, "--interval", "0.2", NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 4);
	DT_EXPECT_TRUE(strstr(r.out, "nothing to compare: no live DRM client") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, "agree") == NULL);
	free(r.out);

	drmacct(&r, "check", "-d", PRIV_BPF_DIR, "-i", "200ms", "--json", NULL);
	DT_EXPECT_EQ(r.status, 4);
	{
		struct jd *j = jd_parse(r.out);

		DT_ASSERT_TRUE(j != NULL);
		DT_EXPECT_STREQ(jd_str(j, "result"), "nothing");
		DT_EXPECT_EQ(jd_int(j, "compared", -1), 0);
		DT_EXPECT_EQ(jd_len(j, "pairs"), 0);
		DT_EXPECT_EQ(jd_u64(j, "interval_ns", 0), (uint64_t)200000000);
		jd_free(j);
	}
	free(r.out);
}

/*
 * check --json while our client runs a 600 ms job (x DT_TIMEOUT_SCALE): our (client, engine 0)
 * pair is there, fdinfo saw it busy between the samples, BPF agrees.
 */
DT_TEST_F_TIMEOUT(privbpf, check_json_pairs, 120)
{
	unsigned int n;
	struct run r;
	uint64_t id, job, job_ns;
	bool found = false;
	struct jd *j;
	int fd;

	fd = open_simgpu();
	id = client_id(fd, &n);
	DT_ASSERT_GT(n, 0u);
	/* Busy through check's window, also where starting check is slow (debug kernel). */
	job_ns = (uint64_t)(600000000ull * dt_timeout_scale());
	job = sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, job_ns);
	drmacct(&r, "check", "-d", PRIV_BPF_DIR, "-i", "200ms", "-j", NULL);
	sg_wait(fd, job, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_STREQ(jd_str(j, "schema"), "drmacct-check/1");
	DT_EXPECT_STREQ(jd_str(j, "result"), "agree");
	DT_EXPECT_EQ(jd_int(j, "compared", -1), jd_len(j, "pairs"));
	DT_EXPECT_EQ(jd_int(j, "disagree", -1), 0);
	for (long i = 0; i < jd_len(j, "pairs"); i++) {
		char p[64];

		snprintf(p, sizeof(p), "pairs.%ld.client_id", i);
		if (jd_u64(j, p, 0) != id)
			continue;
		snprintf(p, sizeof(p), "pairs.%ld.pid", i);
		DT_EXPECT_EQ(jd_int(j, p, -1), (int64_t)getpid());
		snprintf(p, sizeof(p), "pairs.%ld.fdinfo_ns", i);
		if (jd_u64(j, p, 0) > 0) {
			uint64_t f = jd_u64(j, p, 0), b;

			snprintf(p, sizeof(p), "pairs.%ld.bpf_ns", i);
			b = jd_u64(j, p, 0);
			found = true;
			DT_EXPECT_LE(f, job_ns);
			DT_EXPECT_GT(b, (uint64_t)0);
		}
	}
	DT_EXPECT_TRUE(found);	/* the busy engine of our client */
	jd_free(j);
	free(r.out);
	close(fd);
}

/*
 * A client opened by a process whose comm holds ESC sequences and an invalid
 * UTF-8 byte: both tables show '?' for them, and no ESC reaches the output.
 */
DT_TEST_F_TIMEOUT(privbpf, check_and_dump_filter_hostile_comm, 120)
{
	static const char comm[] = "x\033[31m\xff\033]0;t\007";
	unsigned int n;
	struct run r;
	char want[64];
	uint64_t id;
	int fd;

	DT_ASSERT_EQ(prctl(PR_SET_NAME, comm, 0, 0, 0), 0);
	fd = open_simgpu();
	id = client_id(fd, &n);
	DT_ASSERT_GT(n, 0u);
	sg_wait(fd, sg_submit_busy(fd, 0, SIMGPU_INSTANCE_ANY, 20000000ull), NULL);

	drmacct(&r, "bpf", "dump", "--dir", PRIV_BPF_DIR, NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strchr(r.out, '\033') == NULL);
	DT_EXPECT_TRUE(strchr(r.out, '\007') == NULL);
	DT_EXPECT_TRUE(strchr(r.out, '\xff') == NULL);
	snprintf(want, sizeof(want), "%8llu %8d %8d %-16s ", (unsigned long long)id,
		 (int)getpid(), (int)getpid(), "x?[31m??]0;t?");
	if (!strstr(r.out, want))
		DT_FAIL("no \"%s\" in:\n%s", want, r.out);
	free(r.out);

	drmacct(&r, "check", "--dir", PRIV_BPF_DIR, "--interval", "0.2", "-v", NULL);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strchr(r.out, '\033') == NULL);
	DT_EXPECT_TRUE(strchr(r.out, '\xff') == NULL);
	snprintf(want, sizeof(want), "%8llu %8d x?[31m??]0;t? ", (unsigned long long)id,
		 (int)getpid());
	if (!strstr(r.out, want))
		DT_FAIL("no \"%s\" in:\n%s", want, r.out);
	free(r.out);
	close(fd);
}

/* ---- drivers that print no usage stats, or the core keys only ---- */

/*
 * simgpu reloaded with other parameters (accounting=0: no fdinfo at all;
 * stats=core: the DRM core's keys only), and vgem, a driver without usage
 * stats; the teardown puts simgpu back as the other tests expect it.
 */
DT_FIXTURE(restats) {
	int unused;
};

DT_SETUP(restats)
{
}

DT_TEARDOWN(restats)
{
	sg_sh("rmmod vgem 2>/dev/null");
	if (sg_simgpu_reload(""))
		dt_info("could not reload simgpu with its defaults");
}

/*
 * "renderD129" of the first render node whose driver is @drv, in @out; 0
 * or -1. The driver's name as DRM_IOCTL_VERSION gives it: sysfs does not
 * name it everywhere (vgem's platform device has no driver link; on 7.x
 * vgem is a faux device, whose driver link says "faux_driver").
 */
static int node_of_driver(const char *drv, char *out, size_t len)
{
	for (unsigned int m = 128; m < 192; m++) {
		char path[64], name[64] = "";
		struct drm_version v = { .name = name, .name_len = sizeof(name) - 1 };
		int fd, ret;

		snprintf(path, sizeof(path), "/dev/dri/renderD%u", m);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		ret = ioctl(fd, DRM_IOCTL_VERSION, &v);
		close(fd);
		if (ret)
			continue;
		name[v.name_len < sizeof(name) ? v.name_len : sizeof(name) - 1] = '\0';
		if (!strcmp(name, drv)) {
			snprintf(out, len, "renderD%u", m);
			return 0;
		}
	}
	return -1;
}

/* The status of check @name in conformance JSON, or NULL. */
static const char *check_status(const struct jd *j, const char *name)
{
	const struct jd *c = jd_find_str(j, "checks", "name", name);

	return c ? jd_str(c, "status") : NULL;
}

/*
 * accounting=0: simgpu prints no fdinfo key at all, as most upstream
 * drivers do. validate calls the client (one, though two fds hold it) a
 * driver without usage stats, not a spec violation, and exits 4; list
 * counts the fds in its footer and JSON; conformance prints a skip
 * document and exits 4, with and without --device.
 */
DT_TEST_F_TIMEOUT(restats, no_stats_driver_is_nothing_to_check, 120)
{
	char node[64], pid[16], dev[32];
	struct sg_fdinfo fi;
	struct run r;
	struct jd *j;
	int fd, fd2;

	DT_ASSERT_EQ(sg_simgpu_reload("accounting=0"), 0);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	fd = open(node, O_RDWR | O_CLOEXEC);
	DT_ASSERT_GE(fd, 0);
	fd2 = fcntl(fd, F_DUPFD_CLOEXEC, 0);	/* not into drmacct's own process */
	DT_ASSERT_GE(fd2, 0);
	sg_fdinfo_read(fd, &fi);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-"), 0);	/* the premise */
	sg_fdinfo_free(&fi);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(dev, sizeof(dev), "%s", strrchr(node, '/') + 1);

	drmacct(&r, "validate", pid, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 4);
	DT_EXPECT_EQ(count(r.out, "driver prints no usage stats"), 1);	/* one client */
	DT_EXPECT_EQ(count(r.out, "driver-missing"), 0);
	DT_EXPECT_TRUE(strstr(r.out, ", simgpu)") != NULL);
	free(r.out);
	drmacct(&r, "validate", "--json", pid, NULL);
	DT_EXPECT_EQ(r.status, 4);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_STREQ(jd_str(j, "sources.0.usage_stats"), "none");
	DT_EXPECT_EQ(jd_int(j, "summary.without_stats", -1), 1);
	DT_EXPECT_EQ(jd_int(j, "summary.errors", -1), 0);
	jd_free(j);
	free(r.out);

	drmacct(&r, "list", "-i", "0", NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.out, "0 clients in 0 processes; 2 DRM fds without usage stats\n") != NULL);
	if (!strstr(r.out, "; 2 DRM fds"))	/* who else holds one? */
		sg_sh("for p in /proc/[0-9]*; do ls -l $p/fd 2>/dev/null | grep /dev/dri | "
		      "sed \"s|^|# $p $(cat $p/comm 2>/dev/null): |\"; done");
	free(r.out);
	drmacct(&r, "list", "-i", "0", "--json", NULL);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_EQ(jd_int(j, "totals.drm_fds_without_stats", -1), 2);
	DT_EXPECT_EQ(jd_len(j, "clients"), 0);
	jd_free(j);
	free(r.out);

	drmacct(&r, "conformance", "--json", "--duration=200ms", "--device", node, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 4);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_STREQ(jd_str(j, "result"), "skip");
	DT_EXPECT_STREQ(jd_str(j, "usage_stats"), "none");
	DT_EXPECT_TRUE(jd_str(j, "reason") &&
		       strstr(jd_str(j, "reason"), "the driver prints no DRM usage stats"));
	DT_EXPECT_EQ(jd_len(j, "checks"), 0);
	jd_free(j);
	free(r.out);
	/* without --device: the only node prints none, and it says so */
	drmacct(&r, "conformance", "--tap", "--duration=200ms", NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 4);
	DT_EXPECT_TRUE(strstr(r.out, "no node's driver prints usage stats") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, "\n1..0 # SKIP ") != NULL);
	free(r.out);
	close(fd2);
	close(fd);
}

/*
 * stats=core: simgpu prints only drm-driver and drm-client-id (what the DRM
 * core prints on 6.5+ for a driver that hooks drm_show_fdinfo without stats
 * of its own; simgpu prints the same itself before 6.5). validate finds no
 * error and says "core keys only"; list shows the client with "-" for what
 * is never printed; conformance runs, passes the identity checks and skips
 * the counter and memory checks instead of passing them over nothing.
 */
DT_TEST_F_TIMEOUT(restats, core_only_driver, 120)
{
	char node[64], pid[16], line[64], workload[128];
	struct sg_fdinfo fi;
	struct run r;
	struct jd *j;
	uint64_t id;
	int fd;

	DT_ASSERT_EQ(sg_simgpu_reload("stats=core"), 0);
	DT_ASSERT_EQ(sg_find_node(node, sizeof(node)), 0);
	fd = open(node, O_RDWR | O_CLOEXEC);
	DT_ASSERT_GE(fd, 0);
	sg_fdinfo_read(fd, &fi);
	DT_EXPECT_STREQ(sg_fdinfo_find(&fi, "drm-driver")->val, "simgpu");
	id = sg_fdinfo_u64(&fi, "drm-client-id", "");
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-engine-"), 0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-cycles-"), 0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-total-"), 0);
	DT_EXPECT_EQ(sg_fdinfo_count_prefix(&fi, "drm-resident-"), 0);
	sg_fdinfo_free(&fi);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());

	drmacct(&r, "validate", pid, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.out, "driver simgpu: 0 errors") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, "core keys only") != NULL);
	free(r.out);

	drmacct(&r, "list", "-i", "0", NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	DT_EXPECT_TRUE(strstr(r.out, "core keys only: the driver prints no engine or memory key") != NULL);
	DT_EXPECT_TRUE(strstr(r.out, "without usage stats") == NULL);
	free(r.out);
	drmacct(&r, "list", "-i", "0", "--json", "--pid", pid, NULL);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_EQ(jd_len(j, "clients"), 1);
	DT_EXPECT_EQ(jd_u64(j, "clients.0.client_id", 0), id);
	DT_EXPECT_STREQ(jd_str(j, "clients.0.stats"), "core");
	DT_EXPECT_EQ(jd_len(j, "clients.0.engines"), 0);
	DT_EXPECT_EQ(jd_len(j, "clients.0.memory"), 0);
	DT_EXPECT_EQ(jd_int(j, "totals.drm_fds_without_stats", -1), 0);
	jd_free(j);
	free(r.out);

	drmacct(&r, "conformance", "--json", "--duration=300ms", "--device", node, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 0);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_STREQ(jd_str(j, "result"), "pass");
	DT_EXPECT_STREQ(jd_str(j, "usage_stats"), "core");
	DT_EXPECT_EQ(jd_int(j, "failed", -1), 0);
	DT_EXPECT_STREQ(check_status(j, "client-id-stable"), "pass");
	DT_EXPECT_STREQ(check_status(j, "client-id-unique"), "pass");
	DT_EXPECT_STREQ(check_status(j, "counters-monotonic"), "skip");
	DT_EXPECT_STREQ(check_status(j, "idle-zero"), "skip");
	DT_EXPECT_STREQ(check_status(j, "capacity"), "skip");
	DT_EXPECT_STREQ(check_status(j, "memory-units"), "skip");
	DT_EXPECT_STREQ(check_status(j, "driver-prefix"), "skip");
	jd_free(j);
	free(r.out);
	/* a workload on a driver with no engine key: nothing can show busy */
	snprintf(workload, sizeof(workload), "exec 3<>%s; sleep 0.5", node);
	drmacct(&r, "conformance", "--tap", "--duration=300ms", "--device", node,
		"--workload", workload, NULL);
	snprintf(line, sizeof(line), "ok 18 workload-busy # SKIP");
	DT_EXPECT_TRUE(strstr(r.out, line) != NULL);
	if (!strstr(r.out, line))
		dt_info("%s", r.out);
	free(r.out);
	close(fd);
}

/*
 * Two drivers, the first node's (vgem) without usage stats: conformance
 * without --device tests simgpu's node and says why; validate of a vgem fd
 * says the driver prints no usage stats.
 */
DT_TEST_F_TIMEOUT(restats, default_device_prefers_stats, 120)
{
	char vgem[32], simgpu[32], path[64], pid[16], want[256];
	struct run r;
	struct jd *j;
	int fd;

	sg_sh("rmmod simgpu 2>/dev/null");
	if (sg_sh("modprobe vgem 2>/dev/null")) {
		DT_ASSERT_EQ(sg_simgpu_reload(""), 0);
		DT_SKIP("no vgem module in this guest");
	}
	DT_ASSERT_EQ(sg_simgpu_reload(""), 0);
	DT_ASSERT_EQ(node_of_driver("vgem", vgem, sizeof(vgem)), 0);
	DT_ASSERT_EQ(node_of_driver("simgpu", simgpu, sizeof(simgpu)), 0);
	if (atoi(vgem + 7) > atoi(simgpu + 7))
		DT_SKIP("vgem's node %s comes after simgpu's %s", vgem, simgpu);
	drmacct(&r, "conformance", "--json", "--duration=300ms", NULL);
	dt_info("%s", r.out);
	j = jd_parse(r.out);
	DT_ASSERT_TRUE(j != NULL);
	snprintf(path, sizeof(path), "/dev/dri/%s", simgpu);
	DT_EXPECT_STREQ(jd_str(j, "device"), path);
	DT_EXPECT_STREQ(jd_str(j, "usage_stats"), "full");
	snprintf(want, sizeof(want), "%s: the first node whose driver prints usage stats; %s (vgem) prints no usage stats",
		 simgpu, vgem);
	DT_EXPECT_STREQ(jd_str(j, "chosen"), want);
	jd_free(j);
	free(r.out);

	snprintf(path, sizeof(path), "/dev/dri/%s", vgem);
	fd = open(path, O_RDWR | O_CLOEXEC);
	DT_ASSERT_GE(fd, 0);
	snprintf(pid, sizeof(pid), "%d:%d", (int)getpid(), fd);
	drmacct(&r, "validate", pid, NULL);
	dt_info("%s", r.out);
	DT_EXPECT_EQ(r.status, 4);
	snprintf(want, sizeof(want), "driver prints no usage stats (no drm- key; %s, vgem)", vgem);
	DT_EXPECT_TRUE(strstr(r.out, want) != NULL);
	free(r.out);
	close(fd);
}

DT_MAIN
