// SPDX-License-Identifier: GPL-2.0
/*
 * Readers racing writers: 8 threads submit jobs on one file while 4 threads
 * read its fdinfo for 10 s. Every read must parse with the same key set,
 * every engine's time and cycles must never go backwards, busy time can
 * never exceed wall time since open × capacity, cycles can never exceed
 * max frequency × busy time. At the end fdinfo must equal the WAIT sums
 * exactly (the same stamps added up) and lie within the measured gaps of
 * the engine's own Σ(hw_end_ns - hw_start_ns).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtest.h"
#include "sgtest.h"

#define SUBMITTERS	8
#define READERS		4
#define RUN_NS		(10 * NSEC_PER_SEC)
#define INFLIGHT	4	/* jobs each submitter keeps queued */

struct shared {
	int fd;
	struct sg_dev dev;
	uint64_t t_open;
	uint64_t t_end;
	atomic_bool stop;
};

struct submitter {
	struct shared *sh;
	pthread_t th;
	unsigned int seed;
	struct sg_truth *truth;	/* per engine, Σ over its finished jobs */
	uint64_t jobs;
	char err[256];
};

struct reader {
	struct shared *sh;
	pthread_t th;
	uint64_t reads;
	char err[512];
};

static int submit_busy(int fd, unsigned int engine, uint64_t ns, uint64_t *job)
{
	struct drm_simgpu_submit s;

	memset(&s, 0, sizeof(s));
	s.engine = engine;
	s.instance = SIMGPU_INSTANCE_ANY;
	s.op = SIMGPU_OP_BUSY;
	s.busy_ns = ns;
	if (ioctl(fd, DRM_IOCTL_SIMGPU_SUBMIT, &s))
		return -errno;
	*job = s.job_id;
	return 0;
}

/* Threads must not use DT_ASSERT (longjmp across threads): they record errors. */
static int collect(struct submitter *su, uint64_t job, unsigned int engine)
{
	struct drm_simgpu_wait w;

	if (sg_wait_raw(su->sh->fd, job, 60 * NSEC_PER_SEC, &w)) {
		snprintf(su->err, sizeof(su->err), "WAIT job %" PRIu64 ": %s", job,
			 strerror(errno));
		return -1;
	}
	if (w.status != SIMGPU_JOB_DONE || w.end_ns < w.start_ns) {
		snprintf(su->err, sizeof(su->err), "job %" PRIu64 ": status %u, %" PRIu64
			 "..%" PRIu64, job, w.status, (uint64_t)w.start_ns, (uint64_t)w.end_ns);
		return -1;
	}
	if (!sg_stamps_ok(&w, su->err, sizeof(su->err)))
		return -1;
	sg_truth_add(&su->truth[engine], &w);
	su->jobs++;
	return 0;
}

static void *submit_main(void *arg)
{
	struct submitter *su = arg;
	uint64_t ring_job[INFLIGHT];
	unsigned int ring_eng[INFLIGHT];
	unsigned int n = 0;

	while (!atomic_load(&su->sh->stop)) {
		unsigned int slot = n % INFLIGHT;
		unsigned int e = (unsigned int)rand_r(&su->seed) % su->sh->dev.num_engines;
		uint64_t ns = 100000 + (uint64_t)(rand_r(&su->seed) % 3000) * 1000;
		int ret;

		if (n >= INFLIGHT && collect(su, ring_job[slot], ring_eng[slot]))
			return NULL;
		ret = submit_busy(su->sh->fd, e, ns, &ring_job[slot]);
		if (ret) {
			snprintf(su->err, sizeof(su->err), "SUBMIT: %s", strerror(-ret));
			return NULL;
		}
		ring_eng[slot] = e;
		n++;
	}
	for (unsigned int k = n > INFLIGHT ? n - INFLIGHT : 0; k < n; k++)
		if (collect(su, ring_job[k % INFLIGHT], ring_eng[k % INFLIGHT]))
			return NULL;
	return NULL;
}

static void *read_main(void *arg)
{
	struct reader *rd = arg;
	const struct sg_dev *dev = &rd->sh->dev;
	unsigned int ne = dev->num_engines;
	uint64_t *pb = calloc(ne, sizeof(*pb)), *pc = calloc(ne, sizeof(*pc));
	size_t keys = 0;

	if (!pb || !pc) {
		snprintf(rd->err, sizeof(rd->err), "out of memory");
		goto out;
	}
	while (!atomic_load(&rd->sh->stop)) {
		struct sg_fdinfo fi;
		int ret = sg_fdinfo_read_pid(0, rd->sh->fd, &fi);

		if (ret) {
			snprintf(rd->err, sizeof(rd->err), "read: %s", strerror(-ret));
			goto out;
		}
		if (!keys)
			keys = fi.n;
		if (fi.n != keys) {
			snprintf(rd->err, sizeof(rd->err), "read %" PRIu64 ": %zu keys, first had %zu",
				 rd->reads, fi.n, keys);
			sg_fdinfo_free(&fi);
			goto out;
		}
		for (unsigned int i = 0; i < ne; i++) {
			const struct drm_simgpu_query_engine *q = &dev->eng[i].q;
			char k1[96], k2[96];
			const struct sg_kv *b, *c;
			double wall;

			snprintf(k1, sizeof(k1), "drm-engine-%s", q->name);
			snprintf(k2, sizeof(k2), "drm-cycles-%s", q->name);
			b = sg_fdinfo_find(&fi, k1);
			c = sg_fdinfo_find(&fi, k2);
			if (!b || !c || !b->has_num || !c->has_num || strcmp(b->unit, "ns") ||
			    strcmp(c->unit, "")) {
				snprintf(rd->err, sizeof(rd->err), "read %" PRIu64
					 ": engine %s keys missing or malformed", rd->reads, q->name);
				sg_fdinfo_free(&fi);
				goto out;
			}
			wall = (double)(fi.t_after - rd->sh->t_open) * q->capacity;
			if (b->num < pb[i] || c->num < pc[i] || (double)b->num > wall ||
			    (double)c->num > (double)b->num * (double)q->max_freq_hz / 1e9 * 1.001 + 1) {
				snprintf(rd->err, sizeof(rd->err), "read %" PRIu64
					 ": %s busy %" PRIu64 " (prev %" PRIu64 ", wall*cap %.0f)"
					 " cycles %" PRIu64 " (prev %" PRIu64 ", maxfreq %llu)",
					 rd->reads, q->name, b->num, pb[i], wall, c->num, pc[i],
					 (unsigned long long)q->max_freq_hz);
				sg_fdinfo_free(&fi);
				goto out;
			}
			pb[i] = b->num;
			pc[i] = c->num;
		}
		sg_fdinfo_free(&fi);
		rd->reads++;
	}
out:
	free(pb);
	free(pc);
	return NULL;
}

DT_TEST_TIMEOUT(readers_race_submitters, 120)
{
	struct submitter su[SUBMITTERS];
	struct reader rd[READERS];
	struct shared sh;
	struct sg_fdinfo fi;
	uint64_t jobs = 0, reads = 0;
	int kmsg = sg_kmsg_open();

	memset(&sh, 0, sizeof(sh));
	sh.t_open = sg_now_ns();
	sh.fd = sg_open();
	sg_query(sh.fd, &sh.dev);
	for (unsigned int i = 0; i < sh.dev.num_engines; i++)
		if (!sh.dev.eng[i].q.max_freq_hz)
			DT_FAIL("engine %s reports max_freq_hz 0", sh.dev.eng[i].q.name);
	atomic_init(&sh.stop, false);

	for (int i = 0; i < SUBMITTERS; i++) {
		memset(&su[i], 0, sizeof(su[i]));
		su[i].sh = &sh;
		su[i].seed = 1234u + (unsigned int)i;
		su[i].truth = calloc(sh.dev.num_engines, sizeof(*su[i].truth));
		DT_ASSERT_TRUE(su[i].truth);
		DT_ASSERT_EQ(pthread_create(&su[i].th, NULL, submit_main, &su[i]), 0);
	}
	for (int i = 0; i < READERS; i++) {
		memset(&rd[i], 0, sizeof(rd[i]));
		rd[i].sh = &sh;
		DT_ASSERT_EQ(pthread_create(&rd[i].th, NULL, read_main, &rd[i]), 0);
	}
	sg_sleep_ns(RUN_NS);
	atomic_store(&sh.stop, true);
	for (int i = 0; i < SUBMITTERS; i++)
		pthread_join(su[i].th, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i].th, NULL);

	for (int i = 0; i < SUBMITTERS; i++) {
		SG_CHECK(!su[i].err[0], "submitter %d: %s", i, su[i].err);
		jobs += su[i].jobs;
	}
	for (int i = 0; i < READERS; i++) {
		SG_CHECK(!rd[i].err[0], "reader %d: %s", i, rd[i].err);
		reads += rd[i].reads;
	}
	dt_info("%" PRIu64 " jobs, %" PRIu64 " fdinfo reads", jobs, reads);
	DT_EXPECT_GT(jobs, (uint64_t)SUBMITTERS);
	DT_EXPECT_GT(reads, (uint64_t)READERS);

	/*
	 * All jobs collected, none running: fdinfo adds up exactly the stamps
	 * WAIT returned (one lost or doubled job is off by >= 100 us), and the
	 * cycles the engine reported; the time is also checked against the
	 * engine's own clock reads within their measured gaps.
	 */
	sg_fdinfo_read(sh.fd, &fi);
	for (unsigned int e = 0; e < sh.dev.num_engines; e++) {
		struct sg_truth t = { 0 };

		for (int i = 0; i < SUBMITTERS; i++)
			sg_truth_merge(&t, &su[i].truth[e]);
		sg_truth_expect(sh.dev.eng[e].q.name,
				sg_fdinfo_engine_ns(&fi, sh.dev.eng[e].q.name), &t);
		DT_EXPECT_EQ(sg_fdinfo_cycles(&fi, sh.dev.eng[e].q.name), t.cycles);
	}
	sg_fdinfo_free(&fi);
	for (int i = 0; i < SUBMITTERS; i++)
		free(su[i].truth);
	sg_dev_free(&sh.dev);
	close(sh.fd);
	DT_EXPECT_EQ(sg_kmsg_bad_lines(kmsg), 0);
}

DT_MAIN
