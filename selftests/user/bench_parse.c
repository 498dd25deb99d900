// SPDX-License-Identifier: GPL-2.0
/*
 * bench_parse.c - fdinfo parser throughput on the host.
 *
 * Parses every sample in $DRMACCT_SHARED/fixtures/fdinfo (default
 * ../shared) repeatedly, (1) from memory with dac_fdinfo_parse() and (2) from
 * the files with dac_fdinfo_read_file(), plus (3) one synthetic file with
 * 1000 engines and 1000 regions, and prints MB/s and ns per file for each.
 * Each measurement runs for about half a second of wall time.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdinfo.h"

struct sample {
	char *path;
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

/* Run one pass over all samples; return -errno on the first failure. */
static int pass(const struct sample *s, size_t n, bool from_file)
{
	struct dac_fdinfo fi;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = from_file ?
		     dac_fdinfo_read_file(s[i].path, DAC_PROFILE_CURRENT, &fi) :
		     dac_fdinfo_parse(s[i].text, s[i].len, DAC_PROFILE_CURRENT, &fi);
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
		n++;
	}
	closedir(d);
	if (!n) {
		fprintf(stderr, "bench_parse: no fixtures in %s\n", dir);
		return 1;
	}
	qsort(s, n, sizeof(*s), cmp_sample);

	rc |= measure("fixtures, in memory", s, n, false);
	rc |= measure("fixtures, from files", s, n, true);
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
