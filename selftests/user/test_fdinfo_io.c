// SPDX-License-Identifier: GPL-2.0
/*
 * test_fdinfo_io.c - the fdinfo readers (path, dirfd, fd), every error path
 * (missing file, directory, device, bad arguments, allocation failure at
 * each allocation), a real /proc/self/fdinfo file, the small name/lookup
 * helpers, and that Documentation/fdinfo-validation.rst documents every
 * finding code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtest.h"
#include "fdinfo.h"
#include "fdinfo_testutil.h"

#define CUR DAC_PROFILE_CURRENT

/* n engines "e<i>: i*10 ns", several findings, a legacy memory key. */
static char *make_text(size_t n, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	size_t i;

	DT_ASSERT_TRUE(f != NULL);
	fputs("pos:\t0\ndrm-driver:\tsimgpu\ndrm-client-id:\t3\n", f);
	for (i = 0; i < n; i++)
		fprintf(f, "drm-engine-e%zu:\t%zu ns\n", i, i * 10);
	fputs("drm-memory-vram: 3 KiB\ndrm-resident-vram: 3072\n"
	      "drm-cycles-x: 1 ns\ndrm-engine-e0: 1 ns\n", f);
	fclose(f);
	return text;
}

static void check_text(const struct dac_fdinfo *fi, size_t n)
{
	char want[256];
	size_t i;

	DT_ASSERT_EQ(fi->nengines, n + 1);
	for (i = 0; i < n; i++)
		DT_EXPECT_EQ(fi->engines[i].busy_ns, (uint64_t)i * 10);
	DT_EXPECT_EQ(fi->client_id, 3u);
	DT_EXPECT_STREQ(fi->driver, "simgpu");
	snprintf(want, sizeof(want),
		 "%zu:n:memory-legacy-duplicate %zu:e:unit-unexpected "
		 "%zu:n:cycles-orphan %zu:e:duplicate-key",
		 n + 4, n + 6, n + 6, n + 7);
	FDINFO_EXPECT_FINDINGS(fi, want);
}

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/fdinfo-test-XXXXXX");
	DT_ASSERT_TRUE(mkdtemp(tmpdir) != NULL);
}

static void write_file(const char *name, const char *text, size_t len)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void rm_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd))
		dt_info("could not remove %s", tmpdir);
}

DT_TEST(read_file_bigger_than_a_page)
{
	const size_t n = 3000;	/* ~60 KiB: many read() calls, many grows */
	struct dac_fdinfo fi;
	char path[128];
	size_t len;
	char *text = make_text(n, &len);
	const struct dac_finding *f;

	DT_ASSERT_GT(len, (size_t)(16 * 4096));
	make_tmpdir();
	write_file("big", text, len);
	snprintf(path, sizeof(path), "%s/big", tmpdir);
	DT_ASSERT_EQ(dac_fdinfo_read_file(path, CUR, &fi), 0);
	DT_ASSERT_EQ(fi.nengines, n + 1);
	DT_EXPECT_EQ(fi.engines[n - 1].busy_ns, (uint64_t)(n - 1) * 10);
	DT_EXPECT_EQ(fi.engines[0].busy_ns, 0u);	/* first of the dup */
	DT_EXPECT_EQ(fi.nlines, (unsigned int)(n + 7));
	f = dac_fdinfo_find_code(&fi, "duplicate-key");
	DT_ASSERT_TRUE(f != NULL);
	DT_EXPECT_EQ(f->line, (unsigned int)(n + 7));
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "memory-legacy-duplicate") != NULL);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "cycles-orphan") != NULL);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "unit-unexpected") != NULL);
	dac_fdinfo_free(&fi);
	free(text);
	rm_tmpdir();
}

DT_TEST(read_at_dirfd)
{
	static const char text[] = "drm-driver: v3d\ndrm-client-id: 9\n"
				   "drm-engine-bin: 77 ns\n";
	struct dac_fdinfo fi;
	int dfd;

	make_tmpdir();
	write_file("7", text, sizeof(text) - 1);
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	DT_ASSERT_GE(dfd, 0);
	DT_ASSERT_EQ(dac_fdinfo_read_at(dfd, "7", CUR, &fi), 0);
	DT_EXPECT_STREQ(fi.driver, "v3d");
	DT_EXPECT_EQ(fi.client_id, 9u);
	DT_ASSERT_EQ(fi.nengines, (size_t)1);
	DT_EXPECT_EQ(fi.engines[0].busy_ns, 77u);
	dac_fdinfo_free(&fi);
	/* A process or fd that went away: ENOENT, out left empty. */
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, "8", CUR, &fi), -ENOENT);
	DT_EXPECT_EQ(fi.nkv, (size_t)0);
	DT_EXPECT_TRUE(fi.kv == NULL);
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, NULL, CUR, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_read_at(-1, "7", CUR, &fi), -EBADF);
	close(dfd);
	rm_tmpdir();
}

/*
 * Files of exactly the first read's size and around it: a read that fills
 * the buffer is not taken for the end, nothing is lost or doubled.
 */
DT_TEST(read_at_size_boundaries)
{
	static const size_t sizes[] = { 1, 4094, 4095, 4096, 4097, 8190, 8191,
					8192, 12289 };
	size_t i;
	int dfd;

	make_tmpdir();
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	DT_ASSERT_GE(dfd, 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		static const char head[] = "drm-driver: x\n";
		size_t n = sizes[i], k;
		char *text = malloc(n);
		struct dac_fdinfo fi;
		const struct dac_kv *kv;

		DT_ASSERT_TRUE(text != NULL);
		/* "drm-driver: x\n" then "pad: yyyy...y" up to n bytes. */
		memcpy(text, head, n < sizeof(head) - 1 ? n : sizeof(head) - 1);
		for (k = sizeof(head) - 1; k < n; k++)
			text[k] = k - (sizeof(head) - 1) < 5 ?
				  "pad: "[k - (sizeof(head) - 1)] : 'y';
		write_file("s", text, n);
		for (k = 0; k < 2; k++) {
			char path[160];

			/* read_at(), then the path reader: both see it all. */
			snprintf(path, sizeof(path), "%s/s", tmpdir);
			DT_ASSERT_EQ(k ? dac_fdinfo_read_file(path, CUR, &fi) :
				     dac_fdinfo_read_at(dfd, "s", CUR, &fi), 0);
			DT_EXPECT_EQ(fi.nlines, n > 14 ? 2u : 1u);
			if (n > 14) {
				kv = dac_fdinfo_get(&fi, "pad");
				DT_ASSERT_TRUE(kv != NULL);
				DT_EXPECT_EQ(strlen(kv->str), n - 14 - 5);
				DT_EXPECT_STREQ(fi.driver, "x");
			}
			dac_fdinfo_free(&fi);
		}
		free(text);
	}
	close(dfd);
	rm_tmpdir();
}

/*
 * read_at() fstat()s only when the first read is empty or full: devices
 * and directories are still refused, an empty regular file still parses.
 */
DT_TEST(read_at_refuses_devices_and_dirs)
{
	struct dac_fdinfo fi;
	char path[160];
	int dfd;

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/null", tmpdir);
	DT_ASSERT_EQ(symlink("/dev/null", path), 0);
	snprintf(path, sizeof(path), "%s/zero", tmpdir);
	DT_ASSERT_EQ(symlink("/dev/zero", path), 0);
	snprintf(path, sizeof(path), "%s/dir", tmpdir);
	DT_ASSERT_EQ(mkdir(path, 0700), 0);
	write_file("empty", "", 0);
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	DT_ASSERT_GE(dfd, 0);
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, "null", CUR, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, "zero", CUR, &fi), -EINVAL);
	DT_EXPECT_TRUE(fi.kv == NULL && fi.priv_text == NULL);
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, "dir", CUR, &fi), -EISDIR);
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, "empty", CUR, &fi), 0);
	DT_EXPECT_EQ(fi.nlines, 0u);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "driver-missing") != NULL);
	dac_fdinfo_free(&fi);
	DT_EXPECT_EQ(dac_fdinfo_read_at(dfd, "empty", (enum dac_profile)9, &fi),
		     -EINVAL);
	close(dfd);
	snprintf(path, sizeof(path), "%s/dir", tmpdir);
	rmdir(path);
	rm_tmpdir();
	DT_EXPECT_EQ(fdinfo_tu_leaks(), 0);
}

/*
 * A real /proc fdinfo larger than the first read: an epoll fd watching 300
 * fds prints a "tfd:" line for each (about 25 KiB), all in one seq_file
 * record. Reading it with a short read taken as the end must still give
 * every line, as counted by reading the same file until read() returns 0.
 */
DT_TEST(read_at_large_proc_fdinfo)
{
	enum { NWATCH = 300 };
	int ep, dfd, efd[NWATCH], i, fd;
	size_t want_lines = 0, got_tfd = 0, k;
	char name[32], buf[65536];
	struct dac_fdinfo fi;
	ssize_t n, total = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	DT_ASSERT_GE(ep, 0);
	for (i = 0; i < NWATCH; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)i };

		efd[i] = eventfd(0, EFD_CLOEXEC);
		DT_ASSERT_GE(efd[i], 0);
		DT_ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, efd[i], &ev), 0);
	}
	dfd = open("/proc/self/fdinfo", O_RDONLY | O_DIRECTORY);
	DT_ASSERT_GE(dfd, 0);
	snprintf(name, sizeof(name), "%d", ep);
	/* Ground truth: small reads until 0. */
	fd = openat(dfd, name, O_RDONLY);
	DT_ASSERT_GE(fd, 0);
	while ((n = read(fd, buf + total, 1000)) > 0)
		total += n;
	close(fd);
	DT_ASSERT_GT(total, (ssize_t)8192);
	for (k = 0; k < (size_t)total; k++)
		want_lines += buf[k] == '\n';
	DT_ASSERT_EQ(dac_fdinfo_read_at(dfd, name, CUR, &fi), 0);
	DT_EXPECT_EQ(fi.nlines, (unsigned int)want_lines);
	for (k = 0; k < fi.nkv; k++)
		got_tfd += !strcmp(fi.kv[k].key, "tfd");
	DT_EXPECT_EQ(got_tfd, (size_t)NWATCH);
	dac_fdinfo_free(&fi);
	close(dfd);
	for (i = 0; i < NWATCH; i++)
		close(efd[i]);
	close(ep);
}

DT_TEST(read_fd_pipe_large)
{
	const size_t n = 10000;	/* more than a pipe buffer */
	struct dac_fdinfo fi;
	size_t len;
	char *text = make_text(n, &len);
	int pfd[2], status;
	pid_t pid;

	DT_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	DT_ASSERT_GE(pid, 0);
	if (pid == 0) {
		size_t off = 0;

		close(pfd[0]);
		while (off < len) {
			/* Small writes: the reader sees many short reads. */
			size_t chunk = len - off < 777 ? len - off : 777;
			ssize_t w = write(pfd[1], text + off, chunk);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(pfd[1]);
	DT_ASSERT_EQ(dac_fdinfo_read_fd(pfd[0], CUR, &fi), 0);
	close(pfd[0]);
	DT_ASSERT_EQ(waitpid(pid, &status, 0), pid);
	DT_EXPECT_EQ(status, 0);
	DT_ASSERT_EQ(fi.nengines, n + 1);
	DT_EXPECT_EQ(fi.engines[n - 1].busy_ns, (uint64_t)(n - 1) * 10);
	DT_EXPECT_EQ(fi.engines[1234].busy_ns, 12340u);
	dac_fdinfo_free(&fi);
	free(text);
}

DT_TEST(read_errors)
{
	struct dac_fdinfo fi;
	int fd;

	memset(&fi, 0x5a, sizeof(fi));
	DT_EXPECT_EQ(dac_fdinfo_read_file("/nonexistent/fdinfo/1", CUR, &fi), -ENOENT);
	DT_EXPECT_EQ(fi.nkv, (size_t)0);	/* out emptied on failure */
	DT_EXPECT_TRUE(fi.priv_text == NULL);
	dac_fdinfo_free(&fi);			/* harmless */
	DT_EXPECT_EQ(dac_fdinfo_read_file("/tmp", CUR, &fi), -EISDIR);
	DT_EXPECT_EQ(dac_fdinfo_read_file("/dev/null", CUR, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_read_file(NULL, CUR, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_read_file("/tmp", CUR, NULL), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_read_file(fdinfo_tu_fixture_path("i915_1.txt"),
					  (enum dac_profile)7, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_read_fd(-1, CUR, &fi), -EBADF);
	/* A write-only fd: read() fails with EBADF, nothing leaks. */
	fd = open("/tmp", O_TMPFILE | O_WRONLY, 0600);
	DT_ASSERT_GE(fd, 0);
	DT_EXPECT_EQ(dac_fdinfo_read_fd(fd, CUR, &fi), -EBADF);
	close(fd);
	if (getuid() != 0) {
		DT_EXPECT_EQ(dac_fdinfo_read_file("/proc/1/fdinfo/0", CUR, &fi),
			     -EACCES);
	}
	DT_EXPECT_EQ(fdinfo_tu_leaks(), 0);
}

DT_TEST(parse_arguments)
{
	struct dac_fdinfo fi;

	DT_EXPECT_EQ(dac_fdinfo_parse("x", 1, CUR, NULL), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_parse(NULL, 1, CUR, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_parse("x", 1, (enum dac_profile)-1, &fi), -EINVAL);
	DT_EXPECT_EQ(dac_fdinfo_parse("x", SIZE_MAX, CUR, &fi), -ENOMEM);
	/* NULL with length 0 is an empty text. */
	DT_ASSERT_EQ(dac_fdinfo_parse(NULL, 0, CUR, &fi), 0);
	DT_EXPECT_EQ(fi.nlines, 0u);
	FDINFO_EXPECT_FINDINGS(&fi, "0:e:driver-missing 0:n:client-id-missing");
	dac_fdinfo_free(&fi);
	dac_fdinfo_free(&fi);	/* twice is fine: free zeroes */
	dac_fdinfo_free(NULL);
}

/* A real fdinfo file from /proc: non-DRM, but pos and flags are known. */
DT_TEST(proc_self_fdinfo)
{
	struct dac_fdinfo fi;
	const struct dac_kv *kv;
	char name[32], pos[32];
	int fd, dfd;

	fd = open("/proc/self/status", O_RDONLY);
	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(lseek(fd, 123, SEEK_SET), (off_t)123);
	dfd = open("/proc/self/fdinfo", O_RDONLY | O_DIRECTORY);
	DT_ASSERT_GE(dfd, 0);
	snprintf(name, sizeof(name), "%d", fd);
	DT_ASSERT_EQ(dac_fdinfo_read_at(dfd, name, CUR, &fi), 0);
	DT_EXPECT_FALSE(fi.is_drm);
	kv = dac_fdinfo_get(&fi, "pos");
	DT_ASSERT_TRUE(kv != NULL);
	snprintf(pos, sizeof(pos), "%d", 123);
	DT_EXPECT_STREQ(kv->str, pos);
	DT_EXPECT_EQ((int)kv->type, (int)DAC_KEY_OTHER);
	DT_EXPECT_EQ(kv->line, 1u);
	DT_EXPECT_TRUE(dac_fdinfo_get(&fi, "flags") != NULL);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "driver-missing") != NULL);
	dac_fdinfo_free(&fi);
	close(dfd);
	close(fd);
}

/*
 * Fail every allocation in turn: each failure must give -ENOMEM, an empty
 * result and no leak; the loop ends when the call no longer allocates past
 * the failure point, i.e. succeeds.
 */
DT_TEST_TIMEOUT(alloc_failure_each_step_parse, 120)
{
	size_t len, fails = 0;
	char *text = make_text(300, &len);
	struct dac_fdinfo fi;
	long n;
	int rc;

	for (n = 0;; n++) {
		dac_fdinfo_test_fail_alloc(n);
		rc = dac_fdinfo_parse(text, len, CUR, &fi);
		dac_fdinfo_test_fail_alloc(-1);
		if (rc == 0)
			break;
		DT_ASSERT_EQ(rc, -ENOMEM);
		DT_ASSERT_TRUE(fi.kv == NULL && fi.find == NULL &&
			       fi.engines == NULL && fi.priv_text == NULL);
		fails++;
		DT_ASSERT_LT(n, 100000L);
	}
	check_text(&fi, 300);	/* would fail if the hook leaked into it */
	dac_fdinfo_free(&fi);
	dt_info("%zu allocation failure points exercised", fails);
	/*
	 * The result is one allocation; 300 engines outgrow its room for
	 * engines, the lookups past eight names and the room for findings:
	 * each step of each is a point that fails.
	 */
	DT_EXPECT_GE(fails, (size_t)10);
	free(text);
	DT_EXPECT_EQ(fdinfo_tu_leaks(), 0);
}

DT_TEST_TIMEOUT(alloc_failure_each_step_read, 120)
{
	size_t len, fails = 0;
	char *text = make_text(2000, &len);
	struct dac_fdinfo fi;
	char path[128];
	long n;
	int rc;

	make_tmpdir();
	write_file("f", text, len);
	snprintf(path, sizeof(path), "%s/f", tmpdir);
	for (n = 0;; n++) {
		dac_fdinfo_test_fail_alloc(n);
		rc = dac_fdinfo_read_file(path, CUR, &fi);
		dac_fdinfo_test_fail_alloc(-1);
		if (rc == 0)
			break;
		DT_ASSERT_EQ(rc, -ENOMEM);
		DT_ASSERT_TRUE(fi.kv == NULL && fi.priv_text == NULL);
		fails++;
		DT_ASSERT_LT(n, 100000L);
	}
	check_text(&fi, 2000);
	dac_fdinfo_free(&fi);
	DT_EXPECT_GE(fails, (size_t)10);
	free(text);
	rm_tmpdir();
	DT_EXPECT_EQ(fdinfo_tu_leaks(), 0);
}

DT_TEST(names_and_lookups)
{
	enum dac_profile p = DAC_PROFILE_2022;
	struct dac_fdinfo fi;
	size_t n, i, j;
	const char *const *codes = dac_finding_codes(&n);

	DT_EXPECT_EQ(dac_profile_parse("current", &p), 0);
	DT_EXPECT_EQ((int)p, (int)DAC_PROFILE_CURRENT);
	DT_EXPECT_EQ(dac_profile_parse("2022", &p), 0);
	DT_EXPECT_EQ((int)p, (int)DAC_PROFILE_2022);
	DT_EXPECT_EQ(dac_profile_parse("2023", &p), -EINVAL);
	DT_EXPECT_EQ(dac_profile_parse("", &p), -EINVAL);
	DT_EXPECT_EQ(dac_profile_parse(NULL, &p), -EINVAL);
	DT_EXPECT_EQ((int)p, (int)DAC_PROFILE_2022);	/* untouched on error */
	DT_EXPECT_STREQ(dac_profile_name(DAC_PROFILE_CURRENT), "current");
	DT_EXPECT_STREQ(dac_profile_name(DAC_PROFILE_2022), "2022");
	DT_EXPECT_STREQ(dac_profile_name((enum dac_profile)9), "?");
	DT_EXPECT_STREQ(dac_severity_name(DAC_SEV_ERROR), "error");
	DT_EXPECT_STREQ(dac_severity_name(DAC_SEV_WARNING), "warning");
	DT_EXPECT_STREQ(dac_severity_name(DAC_SEV_NOTE), "note");
	DT_EXPECT_STREQ(dac_severity_name((enum dac_severity)5), "?");
	DT_EXPECT_STREQ(dac_key_type_name(DAC_KEY_ENGINE_CAPACITY), "engine-capacity");
	DT_EXPECT_STREQ(dac_key_type_name(DAC_KEY__COUNT), "?");
	for (i = 0; i < DAC_KEY__COUNT; i++)
		DT_EXPECT_STRNE(dac_key_type_name((enum dac_key_type)i), "?");
	/* Codes are unique and lower-case-with-dashes. */
	for (i = 0; i < n; i++) {
		DT_EXPECT_EQ(strspn(codes[i], "abcdefghijklmnopqrstuvwxyz-"),
			     strlen(codes[i]));
		for (j = i + 1; j < n; j++)
			DT_EXPECT_STRNE(codes[i], codes[j]);
	}

	fdinfo_tu_fixture("msm_1.txt", CUR, &fi);
	DT_EXPECT_TRUE(dac_fdinfo_engine(&fi, "gpu") == &fi.engines[0]);
	DT_EXPECT_TRUE(dac_fdinfo_engine(&fi, "gp") == NULL);
	DT_EXPECT_TRUE(dac_fdinfo_engine(&fi, NULL) == NULL);
	DT_EXPECT_TRUE(dac_fdinfo_region(&fi, "gpu") == NULL);
	DT_EXPECT_TRUE(dac_fdinfo_get(&fi, "drm-cycles-gpu") == &fi.kv[7]);
	DT_EXPECT_TRUE(dac_fdinfo_get(&fi, "nope") == NULL);
	DT_EXPECT_TRUE(dac_fdinfo_find_code(&fi, "capacity-zero") == NULL);
	DT_EXPECT_EQ(dac_fdinfo_count(&fi, DAC_SEV_NOTE), (size_t)0);
	DT_EXPECT_EQ(dac_fdinfo_errors(NULL), (size_t)0);
	dac_fdinfo_free(&fi);
}

/* Documentation/fdinfo-validation.rst lists every code as ``code``. */
DT_TEST(every_code_documented)
{
	struct stat st;
	size_t n, i;
	const char *const *codes = dac_finding_codes(&n);
	char *doc, pat[80];
	FILE *f = fopen("Documentation/fdinfo-validation.rst", "r");

	if (!f)
		DT_FAIL("Documentation/fdinfo-validation.rst: %s (run from the repo root)",
			strerror(errno));
	DT_ASSERT_EQ(fstat(fileno(f), &st), 0);
	doc = calloc(1, (size_t)st.st_size + 1);
	DT_ASSERT_TRUE(doc != NULL);
	DT_ASSERT_EQ(fread(doc, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	for (i = 0; i < n; i++) {
		snprintf(pat, sizeof(pat), "``%s``", codes[i]);
		if (!strstr(doc, pat))
			DT_FAIL("finding code %s is not documented", codes[i]);
	}
	free(doc);
}

DT_MAIN
