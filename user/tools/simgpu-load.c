// SPDX-License-Identifier: MIT
/*
 * simgpu-load — workload generator for the simgpu demo driver.
 *
 * Opens the simgpu render node (or --device), optionally names the client,
 * creates buffers, and submits jobs to one or more engines until a job count
 * or a run time is reached, keeping --parallel jobs in flight. --fork N runs
 * N independent clients (processes). At the end it prints the ground truth
 * the driver reported through DRM_IOCTL_SIMGPU_WAIT: per client and in total,
 * the number of jobs and Σ busy ns and Σ cycles per engine.
 *
 * Exit status: 0 success, 1 runtime failure, 2 bad usage.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include "drm_client.h"
#include "simgpu_drm.h"

#define PROG "simgpu-load"
#define NSEC_PER_SEC 1000000000ull

enum op_kind { K_BUSY, K_FILL, K_COPY };

struct opts {
	const char *device;
	char *engines_arg;		/* comma list of names or indices; NULL = first */
	uint32_t instance;
	uint64_t job_ns;
	uint64_t count;			/* jobs per client; 0 = use run_ns */
	uint64_t run_ns;
	unsigned int parallel;
	const char *name;
	unsigned int buffers;
	uint64_t buf_size;
	enum op_kind op;
	unsigned int forks;
	uint64_t hold_ns;
	bool quiet;
};

/* Per-engine ground truth collected from WAIT. */
struct engine_sum {
	uint64_t jobs;
	uint64_t busy_ns;
	uint64_t cycles;
};

struct client_report {
	uint64_t client_id;
	int32_t pid;
	uint32_t num_engines;
	uint64_t errors;
	struct engine_sum eng[];	/* num_engines */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [options]\n"
"  -D, --device PATH      render node (default: the one whose driver is simgpu)\n"
"  -e, --engine LIST      engine names or indices, comma separated; jobs go\n"
"                         round-robin over them (default: engine 0); 'all'\n"
"  -i, --instance N|any   engine instance (default any)\n"
"  -d, --duration T       busy time per job, e.g. 500us, 20ms, 1s (default 10ms)\n"
"  -n, --count N          jobs per client (default 100 unless --time)\n"
"  -t, --time T           submit for this long instead of a job count\n"
"  -p, --parallel N       jobs kept in flight per client (default 1)\n"
"  -c, --name NAME        client name (drm-client-name)\n"
"  -b, --buffers N        create N buffers per client (default 0)\n"
"  -s, --buffer-size SZ   buffer size, e.g. 4096, 64K, 2M (default 1M)\n"
"  -o, --op busy|fill|copy  job type (fill/copy work on the buffers; default busy)\n"
"  -f, --fork N           run N clients in N child processes\n"
"  -H, --hold T           keep the file open this long after the last job\n"
"                         (\"simgpu-load: pid N holding\" when it starts)\n"
"  -q, --quiet            print only the summary\n"
"  -h, --help\n"
"Times take ns, us, ms or s (default ns); sizes K, M, G (powers of 1024).\n");
}

static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	exit(2);
}

/* Unsigned decimal with an optional suffix from @units (factor per suffix). */
static bool parse_scaled(const char *s, const char *const *units, const uint64_t *factors,
			 size_t nunits, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p)) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		p++;
	}
	if (!*p) {
		*out = v;
		return true;
	}
	for (size_t i = 0; i < nunits; i++) {
		if (!strcmp(p, units[i])) {
			if (factors[i] && v > UINT64_MAX / factors[i])
				return false;
			*out = v * factors[i];
			return true;
		}
	}
	return false;
}

static uint64_t parse_time(const char *opt, const char *s)
{
	static const char *const u[] = { "ns", "us", "ms", "s" };
	static const uint64_t f[] = { 1, 1000, 1000000, NSEC_PER_SEC };
	uint64_t v;

	if (!parse_scaled(s, u, f, 4, &v))
		die_usage("%s: '%s' is not a time (e.g. 250us, 20ms, 2s)", opt, s);
	return v;
}

static uint64_t parse_size(const char *opt, const char *s)
{
	static const char *const u[] = { "K", "M", "G", "KiB", "MiB", "GiB" };
	static const uint64_t f[] = { 1ull << 10, 1ull << 20, 1ull << 30,
				      1ull << 10, 1ull << 20, 1ull << 30 };
	uint64_t v;

	if (!parse_scaled(s, u, f, 6, &v))
		die_usage("%s: '%s' is not a size (e.g. 4096, 64K, 2M)", opt, s);
	return v;
}

static uint64_t parse_count(const char *opt, const char *s, uint64_t max)
{
	uint64_t v;

	if (!parse_scaled(s, NULL, NULL, 0, &v) || v > max)
		die_usage("%s: '%s' is not a number in 0..%" PRIu64, opt, s, max);
	return v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "device", required_argument, NULL, 'D' },
		{ "engine", required_argument, NULL, 'e' },
		{ "instance", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'n' },
		{ "time", required_argument, NULL, 't' },
		{ "parallel", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'c' },
		{ "buffers", required_argument, NULL, 'b' },
		{ "buffer-size", required_argument, NULL, 's' },
		{ "op", required_argument, NULL, 'o' },
		{ "fork", required_argument, NULL, 'f' },
		{ "hold", required_argument, NULL, 'H' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_count = false, have_time = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->instance = SIMGPU_INSTANCE_ANY;
	o->job_ns = 10 * 1000000ull;
	o->parallel = 1;
	o->buf_size = 1u << 20;
	o->op = K_BUSY;
	while ((c = getopt_long(argc, argv, "D:e:i:d:n:t:p:c:b:s:o:f:H:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'D':
			o->device = optarg;
			break;
		case 'e':
			if (!*optarg)
				die_usage("--engine: empty list");
			o->engines_arg = optarg;
			break;
		case 'i':
			if (!strcmp(optarg, "any"))
				o->instance = SIMGPU_INSTANCE_ANY;
			else
				o->instance = (uint32_t)parse_count("--instance", optarg, 1023);
			break;
		case 'd':
			o->job_ns = parse_time("--duration", optarg);
			if (!o->job_ns || o->job_ns > SIMGPU_MAX_BUSY_NS)
				die_usage("--duration: must be 1ns..60s");
			break;
		case 'n':
			o->count = parse_count("--count", optarg, UINT64_MAX);
			if (!o->count)
				die_usage("--count: must be at least 1");
			have_count = true;
			break;
		case 't':
			o->run_ns = parse_time("--time", optarg);
			if (!o->run_ns)
				die_usage("--time: must be more than 0");
			have_time = true;
			break;
		case 'p':
			o->parallel = (unsigned int)parse_count("--parallel", optarg, 1024);
			if (!o->parallel)
				die_usage("--parallel: must be at least 1");
			break;
		case 'c':
			if (!*optarg || strlen(optarg) > SIMGPU_CLIENT_NAME_MAX)
				die_usage("--name: 1..%d characters", SIMGPU_CLIENT_NAME_MAX);
			for (const char *p = optarg; *p; p++)
				if (isspace((unsigned char)*p) || !isprint((unsigned char)*p))
					die_usage("--name: no whitespace or control characters");
			o->name = optarg;
			break;
		case 'b':
			o->buffers = (unsigned int)parse_count("--buffers", optarg, 65536);
			break;
		case 's':
			o->buf_size = parse_size("--buffer-size", optarg);
			if (!o->buf_size)
				die_usage("--buffer-size: must be more than 0");
			break;
		case 'o':
			if (!strcmp(optarg, "busy"))
				o->op = K_BUSY;
			else if (!strcmp(optarg, "fill"))
				o->op = K_FILL;
			else if (!strcmp(optarg, "copy"))
				o->op = K_COPY;
			else
				die_usage("--op: '%s' is not busy, fill or copy", optarg);
			break;
		case 'f':
			o->forks = (unsigned int)parse_count("--fork", optarg, 4096);
			break;
		case 'H':
			o->hold_ns = parse_time("--hold", optarg);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (have_count && have_time)
		die_usage("--count and --time exclude each other");
	if (!have_count && !have_time)
		o->count = 100;
	if (o->op == K_FILL && o->buffers < 1)
		die_usage("--op fill needs --buffers 1 or more");
	if (o->op == K_COPY && o->buffers < 2)
		die_usage("--op copy needs --buffers 2 or more");
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static bool is_simgpu(int fd)
{
	char name[32] = "";
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return false;
	if (v.name_len < sizeof(name))
		name[v.name_len] = '\0';
	name[sizeof(name) - 1] = '\0';
	return !strcmp(name, "simgpu");
}

static int open_device(const char *path)
{
	unsigned int best = UINT_MAX;
	char found[300] = "";
	struct dirent *de;
	DIR *d;
	int fd;

	if (path) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
			return -1;
		}
		if (!is_simgpu(fd)) {
			fprintf(stderr, PROG ": %s is not a simgpu device\n", path);
			close(fd);
			return -1;
		}
		return fd;
	}
	d = opendir("/dev/dri");
	if (!d) {
		fprintf(stderr, PROG ": /dev/dri: %s (is simgpu loaded?)\n", strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		char p[300];
		unsigned int minor;

		if (sscanf(de->d_name, "renderD%u", &minor) != 1 || minor >= best)
			continue;
		snprintf(p, sizeof(p), "/dev/dri/%s", de->d_name);
		fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (is_simgpu(fd)) {
			best = minor;
			snprintf(found, sizeof(found), "%s", p);
		}
		close(fd);
	}
	closedir(d);
	if (!found[0]) {
		fprintf(stderr, PROG ": no simgpu render node in /dev/dri (is simgpu loaded?)\n");
		return -1;
	}
	fd = open(found, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, PROG ": %s: %s\n", found, strerror(errno));
	return fd;
}

struct device_info {
	uint32_t num_engines;
	uint64_t client_id;
	struct drm_simgpu_query_engine *eng;
};

static int query(int fd, struct device_info *di)
{
	struct drm_simgpu_query_device q;

	memset(&q, 0, sizeof(q));
	if (ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_DEVICE, &q)) {
		fprintf(stderr, PROG ": QUERY_DEVICE: %s\n", strerror(errno));
		return -1;
	}
	di->num_engines = q.num_engines;
	di->client_id = q.client_id;
	di->eng = calloc(q.num_engines ? q.num_engines : 1, sizeof(*di->eng));
	if (!di->eng) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	for (uint32_t i = 0; i < q.num_engines; i++) {
		di->eng[i].engine = i;
		if (ioctl(fd, DRM_IOCTL_SIMGPU_QUERY_ENGINE, &di->eng[i])) {
			fprintf(stderr, PROG ": QUERY_ENGINE %u: %s\n", i, strerror(errno));
			return -1;
		}
		di->eng[i].name[SIMGPU_NAME_LEN - 1] = '\0';
	}
	return 0;
}

/* Resolves --engine against the device; returns the count of entries in @list. */
static int resolve_engines(const struct opts *o, const struct device_info *di,
			   unsigned int **list)
{
	unsigned int n = 0, cap = 4;
	char *copy, *tok, *save = NULL;

	*list = malloc(cap * sizeof(**list));
	if (!*list)
		return -1;
	if (!o->engines_arg) {
		(*list)[0] = 0;
		return 1;
	}
	if (!strcmp(o->engines_arg, "all")) {
		free(*list);
		*list = malloc(di->num_engines * sizeof(**list));
		if (!*list)
			return -1;
		for (unsigned int i = 0; i < di->num_engines; i++)
			(*list)[i] = i;
		return (int)di->num_engines;
	}
	copy = strdup(o->engines_arg);
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int idx = UINT_MAX;
		char *end;

		for (unsigned int i = 0; i < di->num_engines; i++)
			if (!strcmp(di->eng[i].name, tok))
				idx = i;
		if (idx == UINT_MAX) {
			unsigned long v = strtoul(tok, &end, 10);

			if (*tok && !*end && v < di->num_engines)
				idx = (unsigned int)v;
		}
		if (idx == UINT_MAX) {
			fprintf(stderr, PROG ": --engine: no engine '%s'; this device has:", tok);
			for (unsigned int i = 0; i < di->num_engines; i++)
				fprintf(stderr, " %s", di->eng[i].name);
			fprintf(stderr, "\n");
			free(copy);
			return -2;
		}
		if (o->instance != SIMGPU_INSTANCE_ANY &&
		    o->instance >= di->eng[idx].capacity) {
			fprintf(stderr, PROG ": --instance %u: engine %s has %u instance(s)\n",
				o->instance, di->eng[idx].name, di->eng[idx].capacity);
			free(copy);
			return -2;
		}
		if (n == cap) {
			unsigned int *nl = realloc(*list, 2 * cap * sizeof(**list));

			if (!nl) {
				free(copy);
				return -1;
			}
			*list = nl;
			cap *= 2;
		}
		(*list)[n++] = idx;
	}
	free(copy);
	if (!n) {
		fprintf(stderr, PROG ": --engine: empty list\n");
		return -2;
	}
	return (int)n;
}

struct inflight {
	uint64_t job;
	unsigned int engine;
};

static int collect(int fd, const struct inflight *j, struct client_report *r)
{
	struct drm_simgpu_wait w;

	memset(&w, 0, sizeof(w));
	w.job_id = j->job;
	w.timeout_ns = SIMGPU_MAX_BUSY_NS * 4;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_WAIT, &w)) {
		fprintf(stderr, PROG ": WAIT job %" PRIu64 ": %s\n", j->job, strerror(errno));
		r->errors++;
		return -1;
	}
	if (w.status != SIMGPU_JOB_DONE)
		r->errors++;
	r->eng[j->engine].jobs++;
	r->eng[j->engine].busy_ns += w.end_ns - w.start_ns;
	r->eng[j->engine].cycles += w.cycles;
	return 0;
}

/* One client: open, set up, submit, collect. Returns 0, 1 on failure. */
static int run_client(const struct opts *o, struct client_report **out)
{
	struct device_info di = { 0, 0, NULL };
	struct inflight *ring = NULL;
	uint32_t *bo = NULL;
	unsigned int *engines = NULL;
	struct client_report *r = NULL;
	uint64_t sent = 0, done = 0, t_end;
	int fd, ne, ret = 1;

	fd = open_device(o->device);
	if (fd < 0)
		return 1;
	if (query(fd, &di))
		goto out;
	ne = resolve_engines(o, &di, &engines);
	if (ne < 0) {
		if (ne == -1)
			fprintf(stderr, PROG ": out of memory\n");
		ret = ne == -2 ? 2 : 1;
		goto out;
	}
	r = calloc(1, sizeof(*r) + di.num_engines * sizeof(r->eng[0]));
	ring = calloc(o->parallel, sizeof(*ring));
	bo = calloc(o->buffers ? o->buffers : 1, sizeof(*bo));
	if (!r || !ring || !bo) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	r->client_id = di.client_id;
	r->pid = getpid();
	r->num_engines = di.num_engines;
	if (o->name) {
		/* The DRM core's ioctl (6.13+), else simgpu's own. */
		int err = dac_drm_set_client_name(fd, o->name, strlen(o->name));

		if (err == -EOPNOTSUPP) {
			struct drm_simgpu_set_client_name sn;

			memset(&sn, 0, sizeof(sn));
			sn.name = (uintptr_t)o->name;
			sn.len = (uint32_t)strlen(o->name);
			err = ioctl(fd, DRM_IOCTL_SIMGPU_SET_CLIENT_NAME, &sn) ? -errno : 0;
		}
		if (err) {
			fprintf(stderr, PROG ": setting the client name '%s': %s\n", o->name,
				strerror(-err));
			goto out;
		}
	}
	for (unsigned int i = 0; i < o->buffers; i++) {
		struct drm_simgpu_gem_create c;

		memset(&c, 0, sizeof(c));
		c.size = o->buf_size;
		if (ioctl(fd, DRM_IOCTL_SIMGPU_GEM_CREATE, &c)) {
			fprintf(stderr, PROG ": GEM_CREATE %" PRIu64 " bytes: %s\n", o->buf_size,
				strerror(errno));
			goto out;
		}
		bo[i] = c.handle;
	}
	if (!o->quiet)
		printf(PROG ": pid %d client %" PRIu64 " started\n", (int)getpid(), di.client_id);
	fflush(stdout);

	t_end = o->count ? 0 : now_ns() + o->run_ns;
	while (o->count ? sent < o->count : now_ns() < t_end) {
		struct drm_simgpu_submit s;
		struct inflight *slot = &ring[sent % o->parallel];

		if (sent - done == o->parallel) {
			collect(fd, slot, r);
			done++;
		}
		memset(&s, 0, sizeof(s));
		s.engine = engines[sent % (unsigned int)ne];
		s.instance = o->instance;
		switch (o->op) {
		case K_BUSY:
			s.op = SIMGPU_OP_BUSY;
			s.busy_ns = o->job_ns;
			break;
		case K_FILL:
			s.op = SIMGPU_OP_FILL;
			s.dst_handle = bo[sent % o->buffers];
			s.size = o->buf_size;
			s.value = sent & 0xff;
			break;
		case K_COPY:
			s.op = SIMGPU_OP_COPY;
			s.src_handle = bo[sent % o->buffers];
			s.dst_handle = bo[(sent + 1) % o->buffers];
			s.size = o->buf_size;
			break;
		}
		if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, &s)) {
			fprintf(stderr, PROG ": SUBMIT to %s: %s\n", di.eng[s.engine].name,
				strerror(errno));
			r->errors++;
			break;
		}
		slot->job = s.job_id;
		slot->engine = s.engine;
		sent++;
	}
	while (done < sent) {
		collect(fd, &ring[done % o->parallel], r);
		done++;
	}
	if (o->hold_ns) {
		struct timespec ts = { (time_t)(o->hold_ns / NSEC_PER_SEC),
				       (long)(o->hold_ns % NSEC_PER_SEC) };

		/* a reader can look at the idle, still open file from here */
		if (!o->quiet)
			printf(PROG ": pid %d holding\n", (int)getpid());
		fflush(stdout);
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	ret = r->errors ? 1 : 0;
	*out = r;
	r = NULL;
out:
	free(r);
	free(ring);
	free(bo);
	free(engines);
	free(di.eng);
	close(fd);
	return ret;
}

static void print_report(const struct client_report *r, const struct device_info *di,
			 const char *label)
{
	uint64_t jobs = 0;

	for (uint32_t i = 0; i < r->num_engines; i++)
		jobs += r->eng[i].jobs;
	printf("%s jobs=%" PRIu64 " errors=%" PRIu64 "\n", label, jobs, r->errors);
	for (uint32_t i = 0; i < r->num_engines; i++) {
		if (!r->eng[i].jobs)
			continue;
		printf("  engine=%s jobs=%" PRIu64 " busy_ns=%" PRIu64 " cycles=%" PRIu64 "\n",
		       di && di->eng ? di->eng[i].name : "?", r->eng[i].jobs,
		       r->eng[i].busy_ns, r->eng[i].cycles);
	}
}

static ssize_t write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t left = len;

	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		left -= (size_t)n;
	}
	return (ssize_t)len;
}

static ssize_t read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int main(int argc, char **argv)
{
	struct device_info di = { 0, 0, NULL };
	struct client_report *total;
	struct opts o;
	size_t rsize;
	int fd, rc = 0;

	parse_opts(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* engine names for the report, and early, clear errors */
	fd = open_device(o.device);
	if (fd < 0)
		return 1;
	if (query(fd, &di)) {
		close(fd);
		return 1;
	}
	{
		unsigned int *tmp;
		int ne = resolve_engines(&o, &di, &tmp);

		if (ne < 0) {
			close(fd);
			return ne == -2 ? 2 : 1;
		}
		free(tmp);
	}
	close(fd);

	rsize = sizeof(*total) + di.num_engines * sizeof(total->eng[0]);
	total = calloc(1, rsize);
	if (!total) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	total->num_engines = di.num_engines;

	if (!o.forks) {
		struct client_report *r = NULL;

		rc = run_client(&o, &r);
		if (r) {
			printf("# " PROG " ground truth from DRM_IOCTL_SIMGPU_WAIT\n");
			print_report(r, &di, "client");
			printf("  client_id=%" PRIu64 " pid=%d\n", r->client_id, (int)r->pid);
			free(r);
		}
		free(total);
		free(di.eng);
		return rc;
	}

	{
		pid_t *pids = calloc(o.forks, sizeof(*pids));
		int *pipes = calloc(o.forks, sizeof(*pipes));
		struct client_report *r = malloc(rsize);

		if (!pids || !pipes || !r) {
			fprintf(stderr, PROG ": out of memory\n");
			return 1;
		}
		for (unsigned int k = 0; k < o.forks; k++) {
			int p[2];

			if (pipe(p)) {
				fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
				rc = 1;
				break;
			}
			fflush(stdout);
			pids[k] = fork();
			if (pids[k] < 0) {
				fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
				close(p[0]);
				close(p[1]);
				rc = 1;
				break;
			}
			if (pids[k] == 0) {
				struct client_report *mine = NULL;
				int crc;

				close(p[0]);
				crc = run_client(&o, &mine);
				if (mine && write_all(p[1], mine, rsize) < 0)
					crc = 1;
				free(mine);
				_exit(crc);
			}
			close(p[1]);
			pipes[k] = p[0];
		}
		printf("# " PROG " ground truth from DRM_IOCTL_SIMGPU_WAIT\n");
		for (unsigned int k = 0; k < o.forks && pids[k] > 0; k++) {
			int st = 0;
			ssize_t got = read_all(pipes[k], r, rsize);

			close(pipes[k]);
			waitpid(pids[k], &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				rc = 1;
			if (got != (ssize_t)rsize) {
				fprintf(stderr, PROG ": client %u (pid %d) reported nothing\n", k,
					(int)pids[k]);
				rc = 1;
				continue;
			}
			print_report(r, &di, "client");
			printf("  client_id=%" PRIu64 " pid=%d\n", r->client_id, (int)r->pid);
			total->errors += r->errors;
			for (uint32_t i = 0; i < di.num_engines; i++) {
				total->eng[i].jobs += r->eng[i].jobs;
				total->eng[i].busy_ns += r->eng[i].busy_ns;
				total->eng[i].cycles += r->eng[i].cycles;
			}
		}
		print_report(total, &di, "total");
		free(pids);
		free(pipes);
		free(r);
	}
	free(total);
	free(di.eng);
	return rc;
}
