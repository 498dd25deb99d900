// SPDX-License-Identifier: GPL-2.0
/*
 * The pinned BPF collection through the drmacct CLI:
 *   5. the pins are root-only; non-root drmacct says why, clearly;
 *   6. `drmacct stat -- simgpu-load ...` reports the workload's busy time
 *      equal to the ground truth simgpu-load prints (Σ WAIT), with
 *      clients in forked children that closed before the command ended;
 *   plus `drmacct check`'s numbers under load, and stat's polling fallback
 *   saying what it may miss.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf.h"
#include "../../bpf/drmacct_bpf.h"
#include "dtest.h"
#include "../user/json_dom.h"
#include "sgtest.h"
#include "tracker.h"

#define DRMACCT "/usr/bin/drmacct"
#define LOAD "/usr/bin/simgpu-load"
#define NOBODY 65534
#define NB_DRMACCT "/tmp/drmacct-nobody"

DT_FIXTURE(pinned) {
	int dummy;
};

DT_SETUP(pinned)
{
	self->dummy = 0;
	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_sh(DRMACCT " bpf stop >/dev/null 2>&1");
	sg_need_btf();
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf start >/tmp/bpf-start.out 2>&1"), 0);
	{
		struct dac_bpf *b = NULL;

		DT_ASSERT_EQ(dac_bpf_open_pinned(NULL, &b), 0);
		sg_bpf_label(b);
		dac_bpf_close(b);
	}
}

DT_TEARDOWN(pinned)
{
	if (sg_sh(DRMACCT " bpf stop >/dev/null 2>&1"))
		dt_info("drmacct bpf stop failed");
}

/*
 * Run argv as uid/gid @uid with stdout+stderr into a malloc'd string;
 * returns the exit status (-1 when it did not exit).
 */
static int run_as(uid_t uid, char *const argv[], char **out)
{
	int p[2], status;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;
	pid_t pid;

	DT_ASSERT_TRUE(buf != NULL);
	DT_ASSERT_EQ(pipe(p), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 512) {
			char *tmp = realloc(buf, cap * 2);

			DT_ASSERT_TRUE(tmp != NULL);
			buf = tmp;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	close(p[0]);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	*out = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- 5. root only ---------------------------------------------------------- */

DT_TEST_F_TIMEOUT(pinned, pins_are_root_only_and_nonroot_is_told_why, 60)
{
	char *const root_argv[] = { DRMACCT, "bpf", "status", NULL };
	char *const status_argv[] = { NB_DRMACCT, "bpf", "status", NULL };
	char *const dump_argv[] = { NB_DRMACCT, "bpf", "dump", NULL };
	char *const check_argv[] = { NB_DRMACCT, "check", "--interval", "0.1", NULL };
	struct dac_bpf *b = NULL;
	struct stat st;
	char *out;
	int pfd[2], err = 0, status;
	pid_t pid;

	/*
	 * The initramfs root may come up 0700 (mktemp -d); then nobody is
	 * stopped at "/" and the checks below would prove nothing.
	 */
	DT_ASSERT_EQ(stat("/", &st), 0);
	if ((st.st_mode & 0005) != 0005) {
		dt_info("/ is %04o: opening it up for the non-root checks", st.st_mode & 07777);
		DT_ASSERT_EQ(chmod("/", 0755), 0);
	}
	DT_ASSERT_EQ(stat(DAC_BPF_PIN_DIR, &st), 0);
	DT_EXPECT_EQ(st.st_mode & 07777, 0700u);
	DT_EXPECT_EQ(st.st_uid, 0u);
	DT_ASSERT_EQ(stat(DAC_BPF_PIN_DIR "/maps/usage", &st), 0);
	DT_EXPECT_EQ(st.st_mode & 0077, 0u);

	/* Root: status works and says how it is attached. */
	DT_EXPECT_EQ(run_as(0, root_argv, &out), 0);
	DT_EXPECT_TRUE(strstr(out, "running") != NULL);
	DT_EXPECT_TRUE(strstr(out, "tp_btf") != NULL);
	free(out);

	/* The library, as nobody: EACCES, not some other failure. */
	DT_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		/* Everything up to the pin directory is reachable ... */
		if (access("/sys/fs/bpf", X_OK))
			_exit(3);
		/* ... the pins are not. */
		err = dac_bpf_open_pinned(NULL, &b);
		_exit(write(pfd[1], &err, sizeof(err)) == sizeof(err) ? 0 : 1);
	}
	close(pfd[1]);
	DT_ASSERT_EQ(read(pfd[0], &err, sizeof(err)), (ssize_t)sizeof(err));
	close(pfd[0]);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_EXPECT_EQ(status, 0);
	DT_EXPECT_EQ(err, -EACCES);

	/*
	 * The CLI, as nobody: exit 1 and a message that names the cause.
	 * (A world-executable copy: the initramfs need not make /usr/bin's
	 * binaries executable by others.)
	 */
	DT_ASSERT_EQ(sg_sh("cp " DRMACCT " " NB_DRMACCT " && chmod 0755 " NB_DRMACCT), 0);
	DT_EXPECT_EQ(run_as(NOBODY, status_argv, &out), 1);
	dt_info("nobody: drmacct bpf status: %s", out);
	DT_EXPECT_TRUE(strstr(out, "permission denied") != NULL);
	DT_EXPECT_TRUE(strstr(out, "root") != NULL);
	free(out);
	DT_EXPECT_EQ(run_as(NOBODY, dump_argv, &out), 1);
	DT_EXPECT_TRUE(strstr(out, "root") != NULL);
	free(out);
	DT_EXPECT_EQ(run_as(NOBODY, check_argv, &out), 1);
	DT_EXPECT_TRUE(strstr(out, "root") != NULL);
	free(out);
}

/* ---- 6. drmacct stat ---------------------------------------------------------- */

struct eng_truth {
	char name[32];
	uint64_t jobs, busy_ns, cycles;
};

/* The "total" (or, without --fork, "client") block simgpu-load prints. */
static size_t parse_truth(const char *text, const char *label, struct eng_truth *t, size_t max)
{
	const char *p = strstr(text, label);
	size_t n = 0;

	if (!p)
		return 0;
	p = strchr(p, '\n');
	while (p && n < max) {
		struct eng_truth x;

		p++;
		if (sscanf(p, " engine=%31s jobs=%" SCNu64 " busy_ns=%" SCNu64 " cycles=%" SCNu64,
			   x.name, &x.jobs, &x.busy_ns, &x.cycles) != 4)
			break;
		t[n++] = x;
		p = strchr(p, '\n');
	}
	return n;
}

struct stat_row {
	char name[32];
	uint64_t busy_ns, jobs, cycles;
};

/* Engine rows of drmacct stat's report: "DEV NAME BUSY UTIL% JOBS CYCLES". */
static size_t parse_stat(const char *text, struct stat_row *r, size_t max)
{
	const char *p = strstr(text, "ENGINE");
	size_t n = 0;

	if (!p)
		return 0;
	p = strchr(p, '\n');
	while (p && n < max) {
		unsigned int dev;
		double util;
		struct stat_row x;

		p++;
		if (sscanf(p, " %u %31s %" SCNu64 " %lf%% %" SCNu64 " %" SCNu64, &dev, x.name,
			   &x.busy_ns, &util, &x.jobs, &x.cycles) != 6)
			break;
		r[n++] = x;
		p = strchr(p, '\n');
	}
	return n;
}

DT_TEST_F_TIMEOUT(pinned, stat_reports_workload_exactly, 180)
{
	struct eng_truth t[8];
	struct stat_row r[8];
	char *out, *err;
	size_t nt, nr, matched = 0;
	int rc;

	/*
	 * Two forked clients, two engines, parallel jobs; every client has
	 * closed (and its process exited) before simgpu-load itself ends.
	 */
	rc = sg_sh(DRMACCT " stat -- " LOAD " --fork 2 -e render,copy -n 6 -d 30ms -p 2 "
		   ">/tmp/stat.out 2>/tmp/stat.err");
	out = sg_read_file("/tmp/stat.out", NULL);
	err = sg_read_file("/tmp/stat.err", NULL);
	DT_ASSERT_TRUE(out && err);
	dt_info("drmacct stat report:\n%s", err);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_TRUE(strstr(err, "source: BPF") != NULL);
	nt = parse_truth(out, "total jobs=", t, 8);
	nr = parse_stat(err, r, 8);
	DT_ASSERT_EQ(nt, (size_t)2);
	for (size_t i = 0; i < nt; i++) {
		for (size_t j = 0; j < nr; j++) {
			if (strcmp(t[i].name, r[j].name))
				continue;
			matched++;
			dt_info("%s: stat %" PRIu64 " ns %" PRIu64 " jobs, truth %" PRIu64 " ns %"
				PRIu64 " jobs", t[i].name, r[j].busy_ns, r[j].jobs, t[i].busy_ns,
				t[i].jobs);
			/* finished jobs, the same helper stamps on both sides: exact */
			DT_EXPECT_EQ(r[j].busy_ns, t[i].busy_ns);
			DT_EXPECT_EQ(r[j].jobs, t[i].jobs);
			DT_EXPECT_EQ(r[j].cycles, t[i].cycles);
		}
	}
	DT_EXPECT_EQ(matched, nt);
	free(out);
	free(err);

	/* -e keeps only the named engines. */
	rc = sg_sh(DRMACCT " stat -e copy -- " LOAD " -e render,copy -n 2 -d 10ms "
		   ">/tmp/stat.out 2>/tmp/stat.err");
	err = sg_read_file("/tmp/stat.err", NULL);
	DT_ASSERT_TRUE(err != NULL);
	DT_EXPECT_EQ(rc, 0);
	nr = parse_stat(err, r, 8);
	DT_EXPECT_EQ(nr, (size_t)1);
	if (nr)
		DT_EXPECT_STREQ(r[0].name, "copy");
	free(err);

	/* The command's exit status is stat's. */
	DT_EXPECT_EQ(sg_sh(DRMACCT " stat -- /bin/sh -c 'exit 7' 2>/dev/null"), 7);
}

DT_TEST_TIMEOUT(stat_without_bpf_polls_and_says_so, 120)
{
	struct stat_row r[8];
	char *err;
	int rc;

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_sh(DRMACCT " bpf stop >/dev/null 2>&1");
	rc = sg_sh(DRMACCT " stat -- " LOAD " -e render -n 4 -d 50ms "
		   ">/tmp/stat.out 2>/tmp/stat.err");
	err = sg_read_file("/tmp/stat.err", NULL);
	DT_ASSERT_TRUE(err != NULL);
	dt_info("%s", err);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_TRUE(strstr(err, "not running") != NULL);
	DT_EXPECT_TRUE(strstr(err, "polling") != NULL);
	DT_EXPECT_TRUE(strstr(err, "misses") != NULL);
	/* Polling can only see less than what ran (4 x 50 ms). */
	if (parse_stat(err, r, 8) == 1)
		DT_EXPECT_LE(r[0].busy_ns, 4 * 50 * NSEC_PER_MSEC + 4 * NSEC_PER_MSEC);
	free(err);
}

/* ---- clients open before collection started ------------------------------- */

DT_TEST_TIMEOUT(clients_open_before_start_are_in_the_table, 60)
{
	struct dac_bpf_client *c = NULL;
	struct dac_bpf *b = NULL;
	uint64_t id;
	size_t n = 0;
	bool found = false;
	int fd, fd2;

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_sh(DRMACCT " bpf stop >/dev/null 2>&1");
	fd = sg_open();
	id = sg_client_id(fd);
	sg_need_btf();
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf start >/tmp/bpf-start.out 2>&1"), 0);
	DT_ASSERT_EQ(dac_bpf_open_pinned(NULL, &b), 0);
	DT_ASSERT_EQ(dac_bpf_read_clients(b, &c, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (c[i].client_id != id)
			continue;
		found = true;
		DT_EXPECT_EQ(c[i].tgid, (uint32_t)getpid());
		DT_EXPECT_STREQ(c[i].driver, "simgpu");
		DT_EXPECT_EQ(c[i].open_ns, (uint64_t)0);	/* unknown */
	}
	DT_EXPECT_TRUE(found);
	free(c);
	dac_bpf_close(b);
	/*
	 * Neither the start nor the readers opened a DRM file: the next
	 * client takes the next id (the kernel's counter of every DRM file
	 * on 6.5+, of drmacct's clients before).
	 */
	sg_sh(DRMACCT " list --source=bpf -i 0.1 >/dev/null 2>&1");
	sg_sh(DRMACCT " bpf status >/dev/null 2>&1");
	fd2 = sg_open();
	DT_EXPECT_EQ(sg_client_id(fd2), id + 1);
	close(fd2);
	close(fd);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf stop >/dev/null 2>&1"), 0);
}

/*
 * A client that was open before `bpf start`, holding buffers and a name,
 * runs a job after it: every reader files it under its real device (the
 * one the programs saw for a client opened after start), with the engine
 * and region names of fdinfo, the exact bytes it holds and its name; no
 * device-0 row appears anywhere.
 */
static int set_client_name(int fd, const char *s)
{
	return sg_set_client_name(fd, s, strlen(s));
}

/* The first memory region @fd's fdinfo names (drm-total-<region>), "" if none. */
static void region_of(int fd, char *region, size_t len)
{
	struct sg_fdinfo fi;

	region[0] = '\0';
	sg_fdinfo_read(fd, &fi);
	for (size_t i = 0; i < fi.n; i++)
		if (!strncmp(fi.kv[i].key, "drm-total-", 10) &&
		    strncmp(fi.kv[i].key, "drm-total-cycles-", 17) && !region[0])
			snprintf(region, len, "%s", fi.kv[i].key + 10);
	sg_fdinfo_free(&fi);
}

/* The line of @text's section @section (up to the blank line) starting with @start. */
static const char *section_line(const char *text, const char *section, const char *start)
{
	const char *p = strstr(text, section), *end;
	size_t sl = strlen(start);

	if (!p)
		return NULL;
	end = strstr(p, "\n\n");
	for (p = strchr(p, '\n'); p && (!end || p < end); p = strchr(p + 1, '\n'))
		if (!strncmp(p + 1, start, sl))
			return p + 1;
	return NULL;
}

DT_TEST_TIMEOUT(client_open_before_start_filed_under_its_device, 90)
{
	char name[SIMGPU_CLIENT_NAME_MAX + 1], region[64] = "", key[96], *out;
	const uint64_t bytes = (4ull << 20) + (8 << 10);	/* 4 MiB + 8 KiB */
	struct dac_bpf_client *c = NULL;
	struct dac_bpf_usage *u = NULL;
	struct dac_bpf_total *t = NULL;
	struct dac_bpf_mem *m = NULL;
	struct dac_tracker *tk;
	const struct dac_tk_client *tc = NULL;
	const struct sg_engine *eng;
	struct drm_simgpu_wait w;
	struct sg_dev dev;
	struct dac_bpf *b = NULL;
	uint64_t id, id2, now, truth;
	uint32_t dev_id = 0, dev_id2 = 0;
	size_t nc = 0, nu = 0, nt = 0, nm = 0;
	int fd, fd2, found;
	const char *line;

	if (!sg_is_root())
		DT_SKIP("needs root");
	sg_sh(DRMACCT " bpf stop >/dev/null 2>&1");
	/* The longest name simgpu takes: nothing may be cut. */
	memset(name, 'n', SIMGPU_CLIENT_NAME_MAX);
	memcpy(name, "before-start-", 13);
	name[SIMGPU_CLIENT_NAME_MAX] = '\0';
	fd = sg_open();
	id = sg_client_id(fd);
	sg_query(fd, &dev);
	eng = sg_engine_simple(&dev);
	DT_ASSERT_TRUE(eng != NULL);
	DT_ASSERT_EQ(set_client_name(fd, name), 0);
	sg_bo_create(fd, 4 << 20);
	sg_bo_create(fd, 8 << 10);
	region_of(fd, region, sizeof(region));
	DT_ASSERT_TRUE(region[0] != '\0');

	sg_need_btf();
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf start >/tmp/bpf-start.out 2>&1"), 0);
	out = sg_read_file("/tmp/bpf-start.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	DT_EXPECT_TRUE(strstr(out, "clients already open:") != NULL);
	free(out);
	/* A client opened after start: its device comes from the tracepoint. */
	fd2 = sg_open();
	id2 = sg_client_id(fd2);
	sg_wait(fd, sg_submit_busy(fd, eng->index, SIMGPU_INSTANCE_ANY, 40 * NSEC_PER_MSEC), &w);
	truth = w.end_ns - w.start_ns;

	DT_ASSERT_EQ(dac_bpf_open_pinned(NULL, &b), 0);
	DT_ASSERT_EQ(dac_bpf_read_clients(b, &c, &nc), 0);
	for (size_t i = 0; i < nc; i++) {
		if (c[i].client_id == id2)
			dev_id2 = c[i].device_id;
		if (c[i].client_id != id)
			continue;
		dev_id = c[i].device_id;
		DT_EXPECT_STREQ(c[i].name, name);
		DT_EXPECT_STREQ(c[i].driver, "simgpu");
	}
	DT_EXPECT_NE(dev_id2, 0u);
	DT_EXPECT_EQ(dev_id, dev_id2);

	DT_ASSERT_EQ(dac_bpf_read_usage(b, &now, &u, &nu), 0);
	found = 0;
	for (size_t i = 0; i < nu; i++) {
		if (u[i].client_id != id)
			continue;
		found++;
		DT_EXPECT_EQ(u[i].engine, eng->index);
		DT_EXPECT_EQ(u[i].device_id, dev_id2);
		DT_EXPECT_STREQ(u[i].name, eng->q.name);
		DT_EXPECT_EQ(u[i].jobs, (uint64_t)1);
		/* one finished job: BPF adds up the same stamps WAIT returned */
		DT_EXPECT_EQ(u[i].busy_ns, truth);
	}
	DT_EXPECT_EQ(found, 1);

	DT_ASSERT_EQ(dac_bpf_read_mem(b, &m, &nm), 0);
	found = 0;
	for (size_t i = 0; i < nm; i++) {
		if (m[i].client_id != id)
			continue;
		found++;
		DT_EXPECT_STREQ(m[i].name, region);
		DT_EXPECT_EQ(m[i].total, bytes);
		DT_EXPECT_EQ(m[i].peak, bytes);
	}
	DT_EXPECT_EQ(found, 1);

	DT_ASSERT_EQ(dac_bpf_read_totals(b, &t, &nt), 0);
	found = 0;
	for (size_t i = 0; i < nt; i++) {
		DT_EXPECT_NE(t[i].device_id, 0u);
		if (t[i].device_id == dev_id2 && t[i].engine == eng->index && t[i].jobs) {
			found++;
			DT_EXPECT_STREQ(t[i].name, eng->q.name);
		}
	}
	DT_EXPECT_EQ(found, 1);

	/* The tracker feed of list/top: name, device node, memory. */
	tk = dac_tracker_new();
	DT_ASSERT_TRUE(tk != NULL);
	DT_ASSERT_EQ(dac_bpf_tracker_sample(b, tk, NULL), 0);
	for (size_t i = 0; i < dac_tracker_nclients(tk); i++)
		if (dac_tracker_client(tk, i)->client_id == id)
			tc = dac_tracker_client(tk, i);
	DT_ASSERT_TRUE(tc != NULL);
	DT_EXPECT_TRUE(tc->client_name && !strcmp(tc->client_name, name));
	found = 0;
	for (size_t i = 0; i < tc->nregions; i++) {
		if (strcmp(tc->regions[i].name, region))
			continue;
		found++;
		DT_EXPECT_EQ(tc->regions[i].total, bytes);
	}
	DT_EXPECT_EQ(found, 1);
	dac_tracker_free(tk);

	/* bpf dump: the engine's name, the bytes, no device-0 totals row. */
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf dump >/tmp/dump.out 2>&1"), 0);
	out = sg_read_file("/tmp/dump.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("dump:\n%s", out);
	snprintf(key, sizeof(key), "%8" PRIu64 " %-12s ", id, eng->q.name);
	DT_EXPECT_TRUE(section_line(out, "\nusage (", key) != NULL);
	snprintf(key, sizeof(key), "%8" PRIu64 " %-12s %14" PRIu64 " ", id, region, bytes);
	DT_EXPECT_TRUE(section_line(out, "\nmemory (", key) != NULL);
	snprintf(key, sizeof(key), "%6u ", 0u);
	line = section_line(out, "\ntotals since start (", key);
	DT_EXPECT_TRUE(line == NULL);
	snprintf(key, sizeof(key), "%6u %-12s ", dev_id2, eng->q.name);
	DT_EXPECT_TRUE(section_line(out, "\ntotals since start (", key) != NULL);
	free(out);

	/* list --source=bpf: the same client with its name and its bytes. */
	DT_ASSERT_EQ(sg_sh(DRMACCT " list --source=bpf -j -i 0 >/tmp/list.out 2>&1"), 0);
	out = sg_read_file("/tmp/list.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	snprintf(key, sizeof(key), "\"client_id\": %" PRIu64, id);
	for (line = strstr(out, key); line && isdigit((unsigned char)line[strlen(key)]);
	     line = strstr(line + 1, key))
		;
	if (!line)
		dt_info("list:\n%s", out);
	DT_ASSERT_TRUE(line != NULL);
	{
		const char *next = strstr(line + 1, "\"client_id\":");
		size_t len = next ? (size_t)(next - line) : strlen(line);
		char *rec = strndup(line, len);

		DT_ASSERT_TRUE(rec != NULL);
		snprintf(key, sizeof(key), "\"client_name\": \"%s\"", name);
		DT_EXPECT_TRUE(strstr(rec, key) != NULL);
		snprintf(key, sizeof(key), "\"total\": %" PRIu64, bytes);
		DT_EXPECT_TRUE(strstr(rec, key) != NULL);
		snprintf(key, sizeof(key), "\"name\": \"%s\"", eng->q.name);
		DT_EXPECT_TRUE(strstr(rec, key) != NULL);
		if (!strstr(rec, "\"client_name\""))
			dt_info("list record:\n%s", rec);
		free(rec);
	}
	free(out);

	free(c);
	free(u);
	free(m);
	free(t);
	dac_bpf_close(b);
	sg_dev_free(&dev);
	close(fd2);
	close(fd);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf stop >/dev/null 2>&1"), 0);
}

/* ---- list and top take clients from the BPF table ------------------------- */

DT_TEST_F_TIMEOUT(pinned, list_and_top_use_the_bpf_client_table, 90)
{
	char pidstr[32], *out, *err;
	pid_t pid;
	int rc;

	/* A load whose client lives through every command below. */
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		char t[32];

		/* longer on a slower guest (debug kernel): top comes last */
		snprintf(t, sizeof(t), "%ums", (unsigned int)(4000 * dt_timeout_scale()));
		dup2(fd, 1);
		execl(LOAD, LOAD, "-e", "copy", "-t", t, "-d", "20ms", "-p", "2", (char *)NULL);
		_exit(127);
	}
	snprintf(pidstr, sizeof(pidstr), "\n%d ", (int)pid);	/* a row starting with it */
	sg_sleep_ns(300 * NSEC_PER_MSEC);

	rc = sg_sh(DRMACCT " list -i 0.3 >/tmp/list.out 2>/tmp/list.err");
	out = sg_read_file("/tmp/list.out", NULL);
	err = sg_read_file("/tmp/list.err", NULL);
	DT_ASSERT_TRUE(out && err);
	dt_info("list (auto):\n%s%s", out, err);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_TRUE(strstr(err, "source: BPF client table") != NULL);
	DT_EXPECT_TRUE(strstr(out, "simgpu") != NULL);
	DT_EXPECT_TRUE(strstr(out, "copy") != NULL);
	DT_EXPECT_TRUE(strstr(out, pidstr) != NULL);
	free(out);
	free(err);

	/* JSON from the BPF table names the process too. */
	rc = sg_sh(DRMACCT " list -j -i 0 >/tmp/list.out 2>/tmp/list.err");
	out = sg_read_file("/tmp/list.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	DT_EXPECT_EQ(rc, 0);
	snprintf(pidstr, sizeof(pidstr), "\"pid\": %d", (int)pid);
	DT_EXPECT_TRUE(strstr(out, pidstr) != NULL);
	free(out);

	/* --source proc walks /proc and says so. */
	rc = sg_sh(DRMACCT " list --source proc -i 0 >/tmp/list.out 2>/tmp/list.err");
	err = sg_read_file("/tmp/list.err", NULL);
	DT_ASSERT_TRUE(err != NULL);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_TRUE(strstr(err, "source: /proc") != NULL);
	free(err);

	/* top in batch mode says its source in every update header. */
	rc = sg_sh(DRMACCT " top -b -n 1 -i 300ms >/tmp/top.out 2>/tmp/top.err");
	out = sg_read_file("/tmp/top.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("top:\n%s", out);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_TRUE(strstr(out, "source: BPF client table") != NULL);
	DT_EXPECT_TRUE(strstr(out, "copy") != NULL);
	free(out);

	/* --source bpf with --pid cannot be served: a usage error, named. */
	rc = sg_sh(DRMACCT " list --source bpf --pid 1 >/dev/null 2>/tmp/list.err");
	err = sg_read_file("/tmp/list.err", NULL);
	DT_ASSERT_TRUE(err != NULL);
	DT_EXPECT_EQ(rc, 2);
	DT_EXPECT_TRUE(strstr(err, "--pid") != NULL);
	free(err);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* ---- bad input: a clear error, nothing half-done ---------------------------- */

DT_TEST_F_TIMEOUT(pinned, bad_input_is_refused_clearly, 60)
{
	static const struct {
		const char *cmd;
		int status;
		const char *says;
	} cases[] = {
		{ DRMACCT " bpf", 2, "missing subcommand" },
		{ DRMACCT " bpf frobnicate", 2, "unknown subcommand" },
		{ DRMACCT " bpf start --ringbuf 1000", 2, "power of 2" },
		{ DRMACCT " bpf start --sched-entries 0", 2, "not a number from 1 to 4194304" },
		{ DRMACCT " bpf start --sched-entries 8x", 2, "not a number from 1 to" },
		{ DRMACCT " bpf start --attach magic", 2, "not auto, btf or tracepoint" },
		{ DRMACCT " bpf start", 1, "already running" },
		{ DRMACCT " stat", 2, "missing the command" },
		{ DRMACCT " stat -e , -- true", 2, "engine names" },
		{ DRMACCT " stat -- /nonexistent/cmd", 127, "cannot run" },
		{ DRMACCT " check --tolerance lots", 2, "--tolerance" },
		{ DRMACCT " check extra", 2, "unexpected argument" },
	};
	char *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = sg_sh("%s >/dev/null 2>/tmp/bad.err", cases[i].cmd);

		err = sg_read_file("/tmp/bad.err", NULL);
		DT_ASSERT_TRUE(err != NULL);
		SG_CHECK(rc == cases[i].status, "'%s': exit %d, expected %d", cases[i].cmd, rc,
			 cases[i].status);
		SG_CHECK(strstr(err, cases[i].says) != NULL, "'%s' said: %s", cases[i].cmd, err);
		free(err);
	}
	/* The refused second start left the running collection alone. */
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf status >/dev/null 2>&1"), 0);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf stop >/dev/null 2>&1"), 0);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf stop >/dev/null 2>/tmp/bad.err"), 1);
	err = sg_read_file("/tmp/bad.err", NULL);
	DT_ASSERT_TRUE(err != NULL);
	DT_EXPECT_TRUE(strstr(err, "not running") != NULL);
	free(err);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf status >/dev/null 2>&1"), 1);
}

/*
 * bpf status says which program set runs, lists every map with its memlock
 * and the total; a pinned collection of another layout (here: the meta
 * stamp of an older version) is refused by every reader with what to do,
 * and `bpf stop` still removes it.
 */
/* The join map of `bpf start`'s programs: "inflight617" or "inflight". */
static const char *join_map(void)
{
	bool btf = !access("/sys/kernel/btf/gpu_sched", F_OK);

	return btf || sg_sched_events() == 617 ? "inflight617" : "inflight";
}

DT_TEST_F_TIMEOUT(pinned, status_maps_and_stale_layout, 60)
{
	struct dac_meta m = { 0 };
	struct dac_bpf *b = NULL;
	uint32_t zero = 0;
	char *out;
	int fd;

	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf status >/tmp/st.out 2>&1"), 0);
	out = sg_read_file("/tmp/st.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("bpf status:\n%s", out);
	DT_ASSERT_NE(sg_sched_events(), 0);
	DT_EXPECT_TRUE(strstr(out, sg_sched_events() == 617 ?
			      "scheduler program set:     6.17+ (drm_sched_job_queue/_run/_done)\n" :
			      "scheduler program set:     6.1 (drm_sched_job, drm_run_job, "
			      "drm_sched_process_job)\n") != NULL);
	DT_EXPECT_TRUE(strstr(out, "process exits:             sched_process_exit") != NULL);
	/*
	 * The unpinned join maps too, found through the programs: the one
	 * the loaded programs use is the full size (tp_btf, started by
	 * default where gpu_sched has BTF, and the plain 6.17 programs join
	 * by {fence context, seqno}; the plain 6.1 ones by fence address).
	 */
	{
		char want[32];

		snprintf(want, sizeof(want), " %s ", join_map());
		DT_EXPECT_TRUE(strstr(out, want) != NULL);
	}
	DT_EXPECT_TRUE(strstr(out, " rings ") != NULL);
	DT_EXPECT_TRUE(strstr(out, " hash ") != NULL);
	DT_EXPECT_TRUE(strstr(out, "lru_hash") == NULL);	/* nothing is evicted */
	DT_EXPECT_TRUE(strstr(out, "memlock used:") != NULL);
	DT_EXPECT_TRUE(strstr(out, "recursion misses") != NULL);
	free(out);

	fd = bpf_obj_get(DAC_BPF_PIN_DIR "/maps/meta");
	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(bpf_map_lookup_elem(fd, &zero, &m), 0);
	DT_EXPECT_EQ(m.magic, DAC_LAYOUT_MAGIC);
	DT_EXPECT_EQ(m.version, (uint32_t)DAC_LAYOUT_VERSION);
	m.version--;	/* what an older drmacct left pinned */
	DT_ASSERT_EQ(bpf_map_update_elem(fd, &zero, &m, BPF_ANY), 0);
	close(fd);
	DT_EXPECT_EQ(dac_bpf_open_pinned(NULL, &b), -ESTALE);
	DT_EXPECT_TRUE(b == NULL);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf status >/dev/null 2>/tmp/st.err"), 1);
	out = sg_read_file("/tmp/st.err", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("bpf status with an older layout pinned: %s", out);
	DT_EXPECT_TRUE(strstr(out, "an older drmacct collection is pinned") != NULL);
	DT_EXPECT_TRUE(strstr(out, "drmacct bpf stop") != NULL);
	free(out);
	DT_EXPECT_EQ(sg_sh(DRMACCT " list --source=bpf >/dev/null 2>/tmp/st.err"), 1);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf stop >/dev/null 2>&1"), 0);
}

/* ---- bpf status --json and bpf dump --json ---------------------------------- */

/* The element of array @arr whose integer member @key is @v, or NULL. */
static const struct jd *jd_find(const struct jd *arr, const char *key, uint64_t v)
{
	for (size_t i = 0; arr && arr->type == JD_ARR && i < arr->n; i++)
		if (jd_path(&arr->kids[i], key) && jd_u64(&arr->kids[i], key, ~v) == v)
			return &arr->kids[i];
	return NULL;
}

/* `drmacct @args` into a parsed JSON document; its exit status in @rc. */
/*
 * This process's start in clock ticks since boot (/proc/self/stat field
 * 22); the guest never suspends, so boot time and CLOCK_MONOTONIC agree.
 */
static uint64_t self_start_ticks(void)
{
	char buf[1024], *p;
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	DT_ASSERT_TRUE(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* comm may hold spaces */
	DT_ASSERT_TRUE(p != NULL);
	/* fields 3..21 after the comm, then starttime */
	DT_ASSERT_EQ(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				   "%*d %*d %*d %*d %llu", &v), 1);
	return v;
}

static struct jd *run_json(const char *args, int *rc)
{
	struct jd *j;
	char *out;

	*rc = sg_sh(DRMACCT " %s >/tmp/json.out 2>/tmp/json.err", args);
	out = sg_read_file("/tmp/json.out", NULL);
	if (!out)
		return NULL;
	j = jd_parse(out);
	dt_info("drmacct %s (exit %d)%s:\n%s", args, *rc, j ? "" : ", not JSON", out);
	free(out);
	return j;
}

/*
 * status --json says how the collection runs, as the text does: the
 * scheduler set of the events this kernel's tracefs has, the exit program, every
 * map with a memlock summing to the total; dump --json has a client this
 * test opened after start with its pid, comm and driver, the one job it ran
 * (busy time exactly simgpu's WAIT), the exact bytes it holds, the
 * device totals and its gpu_scheduler ring, all under one device id.
 */
DT_TEST_F_TIMEOUT(pinned, status_and_dump_json_match_what_happened, 90)
{
	const uint64_t bytes = (2ull << 20) + (4 << 10);	/* 2 MiB + 4 KiB */
	const struct jd *maps, *progs, *cl, *u, *m, *t, *sc;
	struct dac_bpf_info info;
	struct dac_bpf *b = NULL;
	const struct sg_engine *eng;
	struct drm_simgpu_wait w;
	struct sg_dev dev;
	struct jd *st, *dj;
	char region[64], comm[32] = "", ring[48], *p;
	uint64_t id, truth, sched_truth, memlock = 0, dev_id;
	int fd, rc;
	bool inflight = false;

	fd = sg_open();
	id = sg_client_id(fd);
	sg_query(fd, &dev);
	eng = sg_engine_simple(&dev);
	DT_ASSERT_TRUE(eng != NULL);
	sg_bo_create(fd, 2 << 20);
	sg_bo_create(fd, 4 << 10);
	region_of(fd, region, sizeof(region));
	DT_ASSERT_TRUE(region[0] != '\0');
	sg_wait(fd, sg_submit_busy(fd, eng->index, SIMGPU_INSTANCE_ANY, 40 * NSEC_PER_MSEC), &w);
	truth = w.end_ns - w.start_ns;
	sched_truth = w.end_ns - w.run_ns;
	p = sg_read_file("/proc/self/comm", NULL);
	DT_ASSERT_TRUE(p != NULL);
	snprintf(comm, sizeof(comm), "%.*s", (int)strcspn(p, "\n"), p);
	free(p);

	/* status --json */
	st = run_json("bpf status --json", &rc);
	DT_ASSERT_TRUE(st != NULL);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_STREQ(jd_str(st, "schema"), "drmacct-bpf-status/1");
	DT_EXPECT_TRUE(jd_path(st, "running") && jd_path(st, "running")->b);
	DT_EXPECT_STREQ(jd_str(st, "dir"), DAC_BPF_PIN_DIR);
	DT_ASSERT_EQ(dac_bpf_open_pinned(NULL, &b), 0);
	DT_ASSERT_EQ(dac_bpf_info(b, &info), 0);
	dac_bpf_close(b);
	DT_EXPECT_TRUE(info.drmacct && info.sched);
	DT_EXPECT_STREQ(jd_str(st, "drmacct"), info.drmacct_btf ? "tp_btf" : "tracepoint");
	DT_EXPECT_STREQ(jd_str(st, "sched"), info.sched_btf ? "tp_btf" : "tracepoint");
	DT_ASSERT_NE(sg_sched_events(), 0);
	DT_EXPECT_STREQ(jd_str(st, "sched_set"), sg_sched_events() == 617 ? "6.17" : "6.1");
	/* every target kernel lets the programs read the scheduler's address */
	DT_EXPECT_STREQ(jd_str(st, "ring_identity"), "scheduler");
	DT_EXPECT_TRUE(jd_path(st, "proc_exit") && jd_path(st, "proc_exit")->b);
	DT_EXPECT_EQ(jd_u64(st, "ringbuf_bytes", 0), (uint64_t)1 << 20);	/* the default */
	DT_EXPECT_EQ(jd_u64(st, "stats.exit_drops", 1), (uint64_t)0);
	maps = jd_path(st, "maps");
	DT_ASSERT_TRUE(maps && maps->type == JD_ARR && maps->n > 0);
	for (size_t i = 0; i < maps->n; i++) {
		const struct jd *e = &maps->kids[i];
		const char *name = jd_str(e, "name");

		DT_ASSERT_TRUE(name && *name && jd_str(e, "type"));
		/* task storage (queue_refused, 6.17 set) has no max_entries: 0 */
		if (strcmp(jd_str(e, "type"), "task_storage"))
			DT_EXPECT_GT(jd_u64(e, "max_entries", 0), (uint64_t)0);
		else
			DT_EXPECT_EQ(jd_u64(e, "max_entries", 1), (uint64_t)0);
		memlock += jd_u64(e, "memlock", 0);
		/* the join map of this kernel's set, unpinned, found all the same */
		if (!strcmp(name, join_map())) {
			inflight = true;
			DT_EXPECT_STREQ(jd_str(e, "type"), "hash");
			DT_EXPECT_GT(jd_u64(e, "max_entries", 0), (uint64_t)1);
		}
	}
	DT_EXPECT_TRUE(inflight);
	DT_EXPECT_GT(memlock, (uint64_t)0);
	DT_EXPECT_EQ(jd_u64(st, "memlock_bytes", 0), memlock);
	progs = jd_path(st, "programs");
	DT_ASSERT_TRUE(progs && progs->type == JD_ARR && progs->n > 0);
	for (size_t i = 0; i < progs->n; i++)
		DT_EXPECT_TRUE(jd_str(&progs->kids[i], "name") != NULL);

	/* dump --json */
	dj = run_json("bpf dump --json", &rc);
	DT_ASSERT_TRUE(dj != NULL);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_STREQ(jd_str(dj, "schema"), "drmacct-bpf-dump/1");
	DT_EXPECT_GT(jd_u64(dj, "now_ns", 0), (uint64_t)0);
	/* Nothing opened or closed a client between the two reads. */
	DT_EXPECT_EQ(jd_len(dj, "clients"), (long)jd_u64(st, "live_clients", 0));
	cl = jd_find(jd_path(dj, "clients"), "client_id", id);
	DT_ASSERT_TRUE(cl != NULL);
	DT_EXPECT_EQ(jd_u64(cl, "tgid", 0), (uint64_t)getpid());
	DT_EXPECT_EQ(jd_u64(cl, "pid", 0), (uint64_t)getpid());
	DT_EXPECT_STREQ(jd_str(cl, "comm"), comm);
	DT_EXPECT_STREQ(jd_str(cl, "driver"), "simgpu");
	DT_EXPECT_TRUE(jd_is_null(cl, "name"));	/* opened after start: not known */
	dev_id = jd_u64(cl, "device", 0);
	DT_EXPECT_NE(dev_id, (uint64_t)0);

	u = jd_find(jd_path(dj, "usage"), "client_id", id);
	DT_ASSERT_TRUE(u != NULL);
	DT_EXPECT_EQ(jd_u64(u, "device", 0), dev_id);
	DT_EXPECT_EQ(jd_u64(u, "engine", ~0ull), (uint64_t)eng->index);
	DT_EXPECT_STREQ(jd_str(u, "name"), eng->q.name);
	DT_EXPECT_EQ(jd_u64(u, "jobs", 0), (uint64_t)1);
	DT_EXPECT_EQ(jd_u64(u, "running", 9), (uint64_t)0);
	DT_EXPECT_EQ(jd_u64(u, "busy_ns", 0), truth);	/* exact for finished jobs */

	m = jd_find(jd_path(dj, "memory"), "client_id", id);
	DT_ASSERT_TRUE(m != NULL);
	DT_EXPECT_STREQ(jd_str(m, "name"), region);
	DT_EXPECT_EQ(jd_u64(m, "total", 0), bytes);
	DT_EXPECT_EQ(jd_u64(m, "peak", 0), bytes);

	/* The only job since start: the device totals are this client's. */
	t = jd_find(jd_path(dj, "totals"), "device", dev_id);
	DT_ASSERT_TRUE(t != NULL);
	DT_EXPECT_EQ(jd_u64(t, "engine", ~0ull), (uint64_t)eng->index);
	DT_EXPECT_STREQ(jd_str(t, "name"), eng->q.name);
	DT_EXPECT_EQ(jd_u64(t, "jobs", 0), (uint64_t)1);
	DT_EXPECT_EQ(jd_u64(t, "busy_ns", 0), jd_u64(u, "busy_ns", 1));

	sc = jd_find(jd_path(dj, "sched"), "tgid", (uint64_t)getpid());
	DT_ASSERT_TRUE(sc != NULL);
	DT_EXPECT_STREQ(jd_str(sc, "comm"), comm);
	{
		/* the entry is this process's: its start, to the tick */
		uint64_t tick = NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK);
		uint64_t start = jd_u64(sc, "start_ns", 0) / tick, want = self_start_ticks();

		dt_info("sched entry start %" PRIu64 " ticks, /proc/self/stat %" PRIu64, start,
			want);
		DT_EXPECT_LE(start, want + 1);
		DT_EXPECT_GE(start + 1, want);
	}
	snprintf(ring, sizeof(ring), "%s%u", eng->q.name, w.instance);
	DT_EXPECT_STREQ(jd_str(sc, "ring"), ring);
	DT_EXPECT_EQ(jd_u64(sc, "jobs", 0), (uint64_t)1);
	/*
	 * From drm_run_job to the scheduler's completion: between the job's
	 * measured [run_ns, hw_end_ns] and [queued_ns, sg_sched_end_ns()], no
	 * allowance.
	 */
	dt_info("sched busy %" PRIu64 " ns, run..end %" PRIu64 " ns, bounds %" PRIu64 "..%"
		PRIu64 " ns", jd_u64(sc, "busy_ns", 0), sched_truth,
		(uint64_t)(w.hw_end_ns - w.run_ns), (uint64_t)(sg_sched_end_ns(&w) - w.queued_ns));
	DT_EXPECT_GE(jd_u64(sc, "busy_ns", 0), w.hw_end_ns - w.run_ns);
	DT_EXPECT_LE(jd_u64(sc, "busy_ns", 0), sg_sched_end_ns(&w) - w.queued_ns);
	/* The same one job, charged to the cgroup it was queued from: ours. */
	{
		const struct jd *g = jd_find(jd_path(dj, "sched_cgroups"), "cgroup_id",
					     jd_u64(cl, "cgroup_id", 0));

		DT_ASSERT_TRUE(g != NULL);
		DT_EXPECT_EQ(jd_u64(g, "jobs", 0), (uint64_t)1);
		DT_EXPECT_EQ(jd_u64(g, "busy_ns", 0), jd_u64(sc, "busy_ns", 1));
		DT_EXPECT_TRUE(jd_str(g, "cgroup") && jd_str(g, "cgroup")[0] == '/');
	}

	jd_free(st);
	jd_free(dj);
	sg_dev_free(&dev);
	close(fd);

	/* Stopped: status --json says so (exit 1), dump is an error. */
	DT_ASSERT_EQ(sg_sh(DRMACCT " bpf stop >/dev/null 2>&1"), 0);
	st = run_json("bpf status --json", &rc);
	DT_ASSERT_TRUE(st != NULL);
	DT_EXPECT_EQ(rc, 1);
	DT_EXPECT_TRUE(jd_path(st, "running") && !jd_path(st, "running")->b);
	jd_free(st);
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf dump --json >/tmp/json.out 2>/dev/null"), 1);
	p = sg_read_file("/tmp/json.out", NULL);
	DT_EXPECT_TRUE(p && !*p);
	free(p);
	/* the fixture's stop finds nothing to stop; start again for it */
	DT_EXPECT_EQ(sg_sh(DRMACCT " bpf start >/dev/null 2>&1"), 0);
}

/* ---- drmacct check ---------------------------------------------------------- */

DT_TEST_F_TIMEOUT(pinned, check_agrees_under_load, 120)
{
	const struct jd *pairs;
	unsigned int render = 0, copy = 0;
	struct jd *j;
	pid_t pid;
	int rc;

	/* A background load that outlives both samples, also on a slower guest. */
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		char t[32];

		snprintf(t, sizeof(t), "%ums", (unsigned int)(3000 * dt_timeout_scale()));
		dup2(fd, 1);
		execl(LOAD, LOAD, "-e", "render,copy", "-t", t, "-d", "20ms", "-p", "2",
		      (char *)NULL);
		_exit(127);
	}
	sg_sleep_ns(300 * NSEC_PER_MSEC);
	j = run_json("check --interval 1 --json", &rc);
	DT_ASSERT_TRUE(j != NULL);
	DT_EXPECT_EQ(rc, 0);
	DT_EXPECT_STREQ(jd_str(j, "result"), "agree");
	DT_EXPECT_EQ(jd_u64(j, "disagree", ~0ull), 0ull);
	/*
	 * The numbers, not the verdict: every pair of the load's client on
	 * render and copy moved in both sources, and the two deltas differ by
	 * no more than the allowance check printed (its tolerance plus the
	 * read gaps it measured), recomputed here from the numbers.
	 */
	pairs = jd_path(j, "pairs");
	DT_ASSERT_TRUE(pairs != NULL && pairs->type == JD_ARR);
	for (size_t i = 0; i < pairs->n; i++) {
		const struct jd *p = &pairs->kids[i];
		const char *eng = jd_str(p, "engine"), *comm = jd_str(p, "comm");
		uint64_t f = jd_u64(p, "fdinfo_ns", 0), bn = jd_u64(p, "bpf_ns", 0);
		uint64_t allow = jd_u64(p, "allowed_ns", 0);

		if (!eng || !comm || strcmp(comm, "simgpu-load"))
			continue;
		if (!strcmp(eng, "render"))
			render++;
		else if (!strcmp(eng, "copy"))
			copy++;
		else
			continue;
		dt_info("%s: fdinfo %" PRIu64 " ns, bpf %" PRIu64 " ns, allowed %" PRIu64 " ns",
			eng, f, bn, allow);
		DT_EXPECT_GT(f, 0ull);
		DT_EXPECT_GT(bn, 0ull);
		DT_EXPECT_LE(f > bn ? f - bn : bn - f, allow);
		DT_EXPECT_TRUE(jd_path(p, "agree") && jd_path(p, "agree")->type == JD_BOOL &&
			       jd_path(p, "agree")->b);
	}
	DT_EXPECT_GT(render, 0u);
	DT_EXPECT_GT(copy, 0u);
	jd_free(j);
	waitpid(pid, NULL, 0);
}

/*
 * check must catch a disagreement: the BPF side of one client is made wrong
 * by 100 ms (written into the pinned usage map, as a bug in the programs
 * would) while check samples; it must exit 1 with a table naming it.
 */
DT_TEST_F_TIMEOUT(pinned, check_catches_a_disagreement, 60)
{
	struct dac_usage_key k = { 0 };
	struct dac_usage_val v;
	const struct sg_engine *e;
	struct drm_simgpu_wait w;
	struct sg_dev dev;
	uint64_t job;
	char *out;
	int fd = sg_open(), mfd, status;
	pid_t pid;

	sg_query(fd, &dev);
	e = sg_engine_simple(&dev);
	k.client_id = sg_client_id(fd);
	k.engine = e->index;
	/*
	 * The change must land between check's two samples: on a slower guest
	 * (a debug kernel) starting check alone can take longer than 0.5 s,
	 * so the job, the interval and the wait scale with DT_TIMEOUT_SCALE.
	 */
	job = sg_submit_busy(fd, e->index, SIMGPU_INSTANCE_ANY,
			     (uint64_t)(3 * dt_timeout_scale()) * NSEC_PER_SEC);
	sg_sleep_ns(100 * NSEC_PER_MSEC);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		int o = open("/tmp/check.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		char ival[32];

		snprintf(ival, sizeof(ival), "%.0f", dt_timeout_scale());
		dup2(o, 1);
		dup2(o, 2);
		execl(DRMACCT, DRMACCT, "check", "--interval", ival, (char *)NULL);
		_exit(127);
	}
	sg_sleep_ns((uint64_t)(500 * dt_timeout_scale()) * NSEC_PER_MSEC);
	mfd = bpf_obj_get(DAC_BPF_PIN_DIR "/maps/usage");
	DT_ASSERT_GE(mfd, 0);
	DT_ASSERT_EQ(bpf_map_lookup_elem(mfd, &k, &v), 0);
	v.busy_ns += 100 * NSEC_PER_MSEC;
	DT_ASSERT_EQ(bpf_map_update_elem(mfd, &k, &v, BPF_EXIST), 0);
	close(mfd);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	out = sg_read_file("/tmp/check.out", NULL);
	DT_ASSERT_TRUE(out != NULL);
	dt_info("%s", out);
	DT_EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	DT_EXPECT_TRUE(strstr(out, "DISAGREE") != NULL);
	DT_EXPECT_TRUE(strstr(out, e->q.name) != NULL);
	DT_EXPECT_TRUE(strstr(out, "<-") != NULL);
	free(out);
	sg_wait(fd, job, &w);
	sg_dev_free(&dev);
	close(fd);
}

DT_MAIN
