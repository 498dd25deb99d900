// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct's events as perf, trace-cmd and libtraceevent see them: from the
 * format files alone. A workload fires every drmacct event (client open
 * and close, job begin and end, every kind of memory change); the kernel's
 * own text of each event is checked here, and the test hands the raw
 * material to the host: the events' format files, the ring buffer's page
 * header and the raw ring-buffer pages of every CPU, hex-encoded in
 * "# tep-..." lines, with the kernel's text of every event beside them.
 * selftests/vm/tep-check.c (run by `make test` after each VM suite) parses
 * them with Debian's libtraceevent and requires its text of every record
 * to be the kernel's, with nothing it fails to parse.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define TRACEFS "/sys/kernel/tracing"
#define EVENTS TRACEFS "/events/drmacct"

static const char *const events[] = {
	"drmacct_client_open", "drmacct_client_close", "drmacct_job_begin",
	"drmacct_job_end", "drmacct_mem_change", "drmacct_device_name",
};

/* Prints @len bytes of @buf as "# tep-file NAME LEN" and "# tep-hex" lines. */
static void dump(const char *name, const unsigned char *buf, size_t len)
{
	printf("# tep-file %s %zu\n", name, len);
	for (size_t off = 0; off < len; off += 64) {
		size_t n = len - off < 64 ? len - off : 64;

		printf("# tep-hex ");
		for (size_t i = 0; i < n; i++)
			printf("%02x", buf[off + i]);
		printf("\n");
	}
}

static void dump_file(const char *name, const char *path)
{
	size_t len = 0;
	char *buf = sg_read_file(path, &len);

	DT_ASSERT_TRUE(buf != NULL);
	dump(name, (const unsigned char *)buf, len);
	free(buf);
}

/* Drains per_cpu/cpuN/trace_pipe_raw: whole ring-buffer pages. */
static size_t dump_cpu(int cpu)
{
	size_t cap = 1 << 16, len = 0;
	unsigned char *buf = malloc(cap);
	char path[128], name[32];
	ssize_t n;
	int fd;

	DT_ASSERT_TRUE(buf != NULL);
	snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/trace_pipe_raw", cpu);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return 0;
	}
	for (;;) {
		if (cap - len < 4096) {
			unsigned char *nb = realloc(buf, cap * 2);

			DT_ASSERT_TRUE(nb != NULL);
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, 4096);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	snprintf(name, sizeof(name), "cpu%d", cpu);
	dump(name, buf, len);
	free(buf);
	return len;
}

/* Every drmacct event with the memory ops of a buffer's whole life. */
static void workload(void)
{
	struct drm_simgpu_submit s;
	struct drm_simgpu_wait w;
	struct sg_dev dev;
	uint32_t h;
	int fd = sg_open();

	sg_query(fd, &dev);
	h = sg_bo_create(fd, 64 * 1024);
	for (unsigned int e = 0; e < dev.num_engines; e++)
		sg_wait(fd, sg_submit_busy(fd, e, SIMGPU_INSTANCE_ANY, 2 * NSEC_PER_MSEC), &w);
	memset(&s, 0, sizeof(s));
	s.engine = 0;
	s.instance = SIMGPU_INSTANCE_ANY;
	s.op = SIMGPU_OP_FILL;
	s.dst_handle = h;
	s.size = 4096;
	s.value = 7;
	sg_wait(fd, sg_submit(fd, &s), &w);
	sg_bo_madvise(fd, h, SIMGPU_MADV_DONTNEED);
	sg_bo_madvise(fd, h, SIMGPU_MADV_WILLNEED);
	sg_bo_close(fd, h);
	sg_dev_free(&dev);
	close(fd);
}

DT_TEST_TIMEOUT(events_parse_from_their_format_files, 60)
{
	char *text, *line, *save = NULL, path[160];
	unsigned int seen[sizeof(events) / sizeof(events[0])] = { 0 };
	size_t raw = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (!sg_is_root())
		DT_SKIP("needs root for tracefs");
	if (access(EVENTS "/enable", W_OK))
		DT_SKIP("no drmacct events");
	DT_ASSERT_EQ(sg_write_file(TRACEFS "/tracing_on", "0"), 0);
	DT_ASSERT_EQ(sg_write_file(TRACEFS "/trace", ""), 0);
	DT_ASSERT_EQ(sg_write_file(EVENTS "/enable", "1"), 0);
	DT_ASSERT_EQ(sg_write_file(TRACEFS "/tracing_on", "1"), 0);
	workload();
	/* The close event comes when the last job is freed: give it time. */
	sg_sleep_ns(200 * NSEC_PER_MSEC);
	DT_ASSERT_EQ(sg_write_file(TRACEFS "/tracing_on", "0"), 0);
	sg_write_file(EVENTS "/enable", "0");

	printf("# tep-begin\n");
	text = sg_read_file(TRACEFS "/trace", NULL);
	DT_ASSERT_TRUE(text != NULL);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = strstr(line, " drmacct_");

		if (line[0] == '#' || !p)
			continue;
		p++;
		for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
			if (!strncmp(p, events[i], strlen(events[i])) &&
			    p[strlen(events[i])] == ':')
				seen[i]++;
		DT_EXPECT_TRUE(strstr(p, "FAILED TO PARSE") == NULL);
		printf("# tep-text %s\n", p);
	}
	free(text);
	dump_file("header_page", TRACEFS "/events/header_page");
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		char name[64];

		snprintf(path, sizeof(path), EVENTS "/%s/format", events[i]);
		snprintf(name, sizeof(name), "format/%s", events[i]);
		dump_file(name, path);
	}
	for (long c = 0; c < ncpu; c++)
		raw += dump_cpu((int)c);
	printf("# tep-end\n");
	sg_write_file(TRACEFS "/tracing_on", "1");

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		dt_info("%s: %u in the kernel's text", events[i], seen[i]);
		DT_EXPECT_GT(seen[i], 0u);
	}
	DT_EXPECT_GT(raw, (size_t)0);
}

DT_MAIN
