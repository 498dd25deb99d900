// SPDX-License-Identifier: GPL-2.0
/*
 * bench_parse.c - fdinfo parser throughput on the host.
 *
 * Parses every sample in $DRMACCT_SHARED/fixtures/fdinfo (default
 * ../shared) repeatedly, (1) from memory with dac_fdinfo_parse() and (2) from
 * the files with dac_fdinfo_read_at() (what the /proc walker does), beside
 * (3) a floor loop that only does openat+read+close of the same files, and
 * prints the ratio (2)/(3); plus (4) one synthetic file with 1000 engines and
 * 1000 regions, and prints MB/s and ns per file for each.
 *
 * (2) and (3) run in alternating batches and each keeps its fastest batch,
 * so that other load on the machine (it is shared) skews the ratio less.
 * Each other measurement runs for about half a second of wall time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdinfo.h"

struct sample {
	char *path;
	const char *name;	/* basename, for openat() in the fixtures dir */
	char *text;
	size_t len;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int load(const char *path, struct sample *s)
{
	FILE *f = fopen(path, "r");
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	s->text = malloc((size_t)n + 1);
	s->path = strdup(path);
	if (!s->text || !s->path ||
	    fread(s->text, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	s->len = (size_t)n;
	return 0;
}

static int cmp_sample(const void *a, const void *b)
{
	return strcmp(((const struct sample *)a)->path,
		      ((const struct sample *)b)->path);
}

/* dirfd of the samples' directory for the from-file passes; -1: by path. */
static int sample_dirfd = -1;

/* Run one pass over all samples; return -errno on the first failure. */
static int pass(const struct sample *s, size_t n, bool from_file)
{
	struct dac_fdinfo fi;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (!from_file)
			rc = dac_fdinfo_parse(s[i].text, s[i].len,
					      DAC_PROFILE_CURRENT, &fi);
		else if (sample_dirfd >= 0)
			rc = dac_fdinfo_read_at(sample_dirfd, s[i].name,
						DAC_PROFILE_CURRENT, &fi);
		else
			rc = dac_fdinfo_read_file(s[i].path, DAC_PROFILE_CURRENT,
						  &fi);
		if (rc) {
			fprintf(stderr, "bench_parse: %s: %s\n", s[i].path,
				strerror(-rc));
			return rc;
		}
		if (!fi.driver) {
			fprintf(stderr, "bench_parse: %s: no drm-driver parsed\n",
				s[i].path);
			dac_fdinfo_free(&fi);
			return -EINVAL;
		}
		dac_fdinfo_free(&fi);
	}
	return 0;
}

static int measure(const char *what, const struct sample *s, size_t n,
		   bool from_file)
{
	size_t bytes = 0, passes = 0, i;
	double t0, dt;

	for (i = 0; i < n; i++)
		bytes += s[i].len;
	if (pass(s, n, from_file))	/* warm-up, and checks every file */
		return 1;
	t0 = now_s();
	do {
		if (pass(s, n, from_file))
			return 1;
		passes++;
		dt = now_s() - t0;
	} while (dt < 0.5);
	printf("bench_parse: %-22s %3zu file(s) %8zu bytes x %7zu passes: %9.1f MB/s %9.0f ns/file\n",
	       what, n, bytes, passes, (double)bytes * (double)passes / dt / 1e6,
	       dt * 1e9 / ((double)passes * (double)n));
	return 0;
}

/*
 * The floor: what reading the files costs with no parser at all, one
 * openat(), one read() into a buffer big enough for any sample, one close().
 */
static int floor_pass(const struct sample *s, size_t n)
{
	static char buf[1 << 16];
	size_t i;

	for (i = 0; i < n; i++) {
		int fd = openat(sample_dirfd, s[i].name, O_RDONLY | O_CLOEXEC);
		ssize_t r;

		if (fd < 0)
			return -errno;
		r = read(fd, buf, sizeof(buf));
		close(fd);
		if (r != (ssize_t)s[i].len)
			return r < 0 ? -errno : -EIO;
	}
	return 0;
}

/* Seconds for @passes passes of the floor (parse = false) or of parsing. */
static double batch(const struct sample *s, size_t n, bool parse, size_t passes)
{
	double t0 = now_s();
	size_t k;

	for (k = 0; k < passes; k++)
		if (parse ? pass(s, n, true) : floor_pass(s, n))
			return -1;
	return now_s() - t0;
}

/*
 * Parsing from files against the floor: batches of each in turn for about a
 * second, keeping the fastest batch of each; prints both and the ratio.
 */
static int versus_floor(const struct sample *s, size_t n)
{
	const size_t passes = 50;
	double best_floor = 1e9, best_parse = 1e9, t0 = now_s();
	size_t rounds = 0, bytes = 0, i;

	for (i = 0; i < n; i++)
		bytes += s[i].len;
	if (floor_pass(s, n) || pass(s, n, true)) {	/* warm-up + checks */
		fprintf(stderr, "bench_parse: floor or parse pass failed\n");
		return 1;
	}
	do {
		double f = batch(s, n, false, passes);
		double p = batch(s, n, true, passes);

		if (f < 0 || p < 0) {
			fprintf(stderr, "bench_parse: a pass failed\n");
			return 1;
		}
		best_floor = f < best_floor ? f : best_floor;
		best_parse = p < best_parse ? p : best_parse;
		rounds++;
	} while (now_s() - t0 < 1.0 || rounds < 3);
	printf("bench_parse: %-22s %3zu file(s) %8zu bytes, best of %zu x %zu passes: %9.0f ns/file\n",
	       "floor: openat+read+close", n, bytes, rounds, passes,
	       best_floor * 1e9 / ((double)passes * (double)n));
	printf("bench_parse: %-22s %3zu file(s) %8zu bytes, best of %zu x %zu passes: %9.0f ns/file\n",
	       "parse from files (at)", n, bytes, rounds, passes,
	       best_parse * 1e9 / ((double)passes * (double)n));
	printf("bench_parse: parse from files / floor: %.2fx (validation on, profile current)\n",
	       best_parse / best_floor);
	return 0;
}

/* A large synthetic fdinfo file: many engines and regions. */
static int synthetic(const char *dir, struct sample *s)
{
	FILE *f;
	int i;

	if (asprintf(&s->path, "%s/bench_parse-synthetic.txt", dir) < 0)
		return -ENOMEM;
	f = fopen(s->path, "w");
	if (!f)
		return -errno;
	fprintf(f, "pos:\t0\nflags:\t02100002\ndrm-driver:\tsimgpu\n"
		"drm-pdev:\t0000:00:02.0\ndrm-client-id:\t42\n");
	for (i = 0; i < 1000; i++)
		fprintf(f, "drm-engine-e%d:\t%d ns\ndrm-engine-capacity-e%d:\t2\n"
			"drm-cycles-e%d:\t%d\ndrm-maxfreq-e%d:\t%d MHz\n"
			"drm-total-r%d:\t%d KiB\ndrm-resident-r%d:\t%d KiB\n",
			i, i * 1000, i, i, i * 7, i, 1000 + i, i, 4 * i, i, 2 * i);
	if (fclose(f))
		return -errno;
	return load(s->path, s);
}

int main(void)
{
	const char *shared = getenv("DRMACCT_SHARED");
	char dir[4096];
	struct sample *s = NULL, syn = { 0 };
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	int rc = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/fixtures/fdinfo",
		 shared && *shared ? shared : "../shared");
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "bench_parse: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char path[8192];

		if (l < 5 || strcmp(de->d_name + l - 4, ".txt"))
			continue;
		if (n == cap) {
			struct sample *ns;

			cap = cap ? 2 * cap : 16;
			ns = realloc(s, cap * sizeof(*s));
			if (!ns) {
				fprintf(stderr, "bench_parse: out of memory\n");
				return 1;
			}
			s = ns;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		memset(&s[n], 0, sizeof(s[n]));
		if (load(path, &s[n])) {
			fprintf(stderr, "bench_parse: cannot read %s\n", path);
			return 1;
		}
		s[n].name = strrchr(s[n].path, '/') + 1;
		n++;
	}
	closedir(d);
	sample_dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sample_dirfd < 0) {
		fprintf(stderr, "bench_parse: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (!n) {
		fprintf(stderr, "bench_parse: no fixtures in %s\n", dir);
		return 1;
	}
	qsort(s, n, sizeof(*s), cmp_sample);

	rc |= measure("fixtures, in memory", s, n, false);
	rc |= measure("fixtures, from files", s, n, true);
	rc |= versus_floor(s, n);
	close(sample_dirfd);
	sample_dirfd = -1;	/* the synthetic file is read by path */
	if (synthetic("/tmp", &syn)) {
		fprintf(stderr, "bench_parse: cannot write the synthetic file\n");
		rc = 1;
	} else {
		rc |= measure("1000 engines, memory", &syn, 1, false);
		rc |= measure("1000 engines, file", &syn, 1, true);
		unlink(syn.path);
	}
	for (i = 0; i < n; i++) {
		free(s[i].path);
		free(s[i].text);
	}
	free(s);
	free(syn.path);
	free(syn.text);
	return rc;
}
