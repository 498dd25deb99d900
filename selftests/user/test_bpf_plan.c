// SPDX-License-Identifier: MIT
/*
 * The loader's choice of program sets and its record layout check, on
 * hand-made tracefs and BTF trees (no root, no kernel): which gpu_scheduler
 * set (6.1 names or the 6.17 renames) and which kind (tp_btf or plain
 * tracepoint) it picks, and that it refuses format files whose offsets are
 * not the ones the programs read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf.h"
#include "bpf_priv.h"
#include "dtest.h"

DT_FIXTURE(tree) {
	char root[64];
	char events[128];
	char btf[128];
};

DT_SETUP(tree)
{
	snprintf(self->root, sizeof(self->root), "/tmp/bpfu-plan-XXXXXX");
	DT_ASSERT_TRUE(mkdtemp(self->root) != NULL);
	snprintf(self->events, sizeof(self->events), "%s/events", self->root);
	snprintf(self->btf, sizeof(self->btf), "%s/btf", self->root);
	DT_ASSERT_EQ(mkdir(self->events, 0755), 0);
	DT_ASSERT_EQ(mkdir(self->btf, 0755), 0);
}

DT_TEARDOWN(tree)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->root);
	if (self->root[0] && system(cmd))
		dt_info("could not remove %s", self->root);
}

/* mkdir -p under @base */
static void mkdirs(const char *base, const char *rel)
{
	char p[512];
	size_t n = (size_t)snprintf(p, sizeof(p), "%s/%s", base, rel);

	DT_ASSERT_LT(n, sizeof(p));
	for (char *s = p + strlen(base) + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		DT_ASSERT_TRUE(!mkdir(p, 0755) || errno == EEXIST);
		*s = '/';
	}
	DT_ASSERT_TRUE(!mkdir(p, 0755) || errno == EEXIST);
}

static void write_file(const char *base, const char *rel, const void *data, size_t len)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	DT_ASSERT_GE(fd, 0);
	DT_ASSERT_EQ(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/*
 * Format files as the kernel prints them (the common fields, a blank
 * line, then the event's own), with the event's field lines in @fields.
 */
static void write_format(const char *events, const char *ev, const char *fields)
{
	char rel[256], text[4096];
	int n;

	mkdirs(events, ev);
	n = snprintf(text, sizeof(text),
		     "name: %s\nID: 1234\nformat:\n"
		     "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		     "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		     "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		     "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n%s\n"
		     "print fmt: \"whatever\"\n", strrchr(ev, '/') + 1, fields);
	DT_ASSERT_LT(n, (int)sizeof(text));
	snprintf(rel, sizeof(rel), "%s/format", ev);
	write_file(events, rel, text, (size_t)n);
}

#define F617_JOB \
	"\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n" \
	"\tfield:u32 job_count;\toffset:12;\tsize:4;\tsigned:0;\n" \
	"\tfield:int hw_job_count;\toffset:16;\tsize:4;\tsigned:1;\n" \
	"\tfield:__data_loc char[] dev;\toffset:20;\tsize:4;\tsigned:0;\n" \
	"\tfield:u64 fence_context;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:u64 fence_seqno;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:u64 client_id;\toffset:40;\tsize:8;\tsigned:0;\n"
#define F617_DONE \
	"\tfield:u64 fence_context;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:u64 fence_seqno;\toffset:16;\tsize:8;\tsigned:0;\n"
#define F61_JOB \
	"\tfield:struct drm_sched_entity * entity;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:struct dma_fence * fence;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:__data_loc char[] name;\toffset:24;\tsize:4;\tsigned:0;\n" \
	"\tfield:uint64_t id;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\tfield:u32 job_count;\toffset:40;\tsize:4;\tsigned:0;\n" \
	"\tfield:int hw_job_count;\toffset:44;\tsize:4;\tsigned:1;\n"
#define F61_DONE "\tfield:struct dma_fence * fence;\toffset:8;\tsize:8;\tsigned:0;\n"

static void sched61(const char *events)
{
	write_format(events, "gpu_scheduler/drm_sched_job", F61_JOB);
	write_format(events, "gpu_scheduler/drm_run_job", F61_JOB);
	write_format(events, "gpu_scheduler/drm_sched_process_job", F61_DONE);
}

static void sched617(const char *events)
{
	write_format(events, "gpu_scheduler/drm_sched_job_queue", F617_JOB);
	write_format(events, "gpu_scheduler/drm_sched_job_run", F617_JOB);
	write_format(events, "gpu_scheduler/drm_sched_job_done", F617_DONE);
}

/*
 * A vmlinux base BTF and a split gpu_sched BTF whose only type besides an
 * int is the typedef btf_trace_<@event> that tp_btf attaches by.
 */
static void write_btf(const char *dir, const char *event)
{
	struct btf *base = btf__new_empty(), *mod;
	const void *raw;
	char name[128];
	__u32 size;
	int id;

	DT_ASSERT_TRUE(base != NULL);
	id = btf__add_int(base, "int", 4, BTF_INT_SIGNED);
	DT_ASSERT_GT(id, 0);
	raw = btf__raw_data(base, &size);
	DT_ASSERT_TRUE(raw != NULL);
	write_file(dir, "vmlinux", raw, size);
	mod = btf__new_empty_split(base);
	DT_ASSERT_TRUE(mod != NULL);
	snprintf(name, sizeof(name), "btf_trace_%s", event);
	DT_ASSERT_GT(btf__add_typedef(mod, name, id), 0);
	raw = btf__raw_data(mod, &size);
	DT_ASSERT_TRUE(raw != NULL);
	write_file(dir, "gpu_sched", raw, size);
	btf__free(mod);
	btf__free(base);
}

static struct dac_bpf_plan plan(const char *events, const char *btf, enum dac_bpf_attach mode,
				int want_ret)
{
	struct dac_bpf_env env = { .events_root = events, .btf_dir = btf };
	struct dac_bpf_load_opts o = { .attach = mode };
	struct dac_bpf_plan p;

	DT_ASSERT_EQ(dac_bpf_plan(&env, &o, &p), want_ret);
	return p;
}

DT_TEST_F(tree, tracefs_61_names_pick_61_tracepoints)
{
	struct dac_bpf_plan p;

	sched61(self->events);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 0);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_61);
	DT_EXPECT_EQ(p.drmacct, -ENOENT);	/* no drmacct system in this tree */
	DT_EXPECT_EQ(dac_bpf_check_layout(&(struct dac_bpf_env){ .events_root = self->events },
					  dac_bpf_sched61_fields, NULL), 0);
}

DT_TEST_F(tree, tracefs_617_names_pick_617_tracepoints)
{
	struct dac_bpf_env env = { .events_root = self->events };
	struct dac_bpf_plan p;

	sched617(self->events);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 0);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_617);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, NULL), 0);
	/* The 6.1 table has nothing to check against here. */
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, NULL), -ENOENT);
}

DT_TEST_F(tree, both_names_prefer_617)
{
	struct dac_bpf_plan p;

	sched61(self->events);
	sched617(self->events);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_TRACEPOINT, 0);
	DT_EXPECT_EQ(p.sched, 0);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_617);
}

DT_TEST_F(tree, nothing_there_is_enodev)
{
	struct dac_bpf_plan p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, -ENODEV);

	DT_EXPECT_EQ(p.sched, -ENOENT);
	DT_EXPECT_EQ(p.drmacct, -ENOENT);
	DT_EXPECT_EQ(p.sched_set, 0);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_BTF, -ENODEV);
	DT_EXPECT_EQ(p.sched, -ENOENT);
}

DT_TEST_F(tree, drmacct_tracepoints_alone)
{
	struct dac_bpf_plan p;

	mkdirs(self->events, "drmacct/drmacct_job_end");
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.drmacct, 0);
	DT_EXPECT_EQ(p.sched, -ENOENT);
	write_file(self->btf, "drmacct", "x", 1);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.drmacct, 1);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_TRACEPOINT, 0);
	DT_EXPECT_EQ(p.drmacct, 0);
}

DT_TEST_F(tree, btf_617_typedef_picks_617_tp_btf)
{
	struct dac_bpf_plan p;

	/* tracefs says 6.1 (stale mount, say): the BTF of the module decides tp_btf. */
	sched61(self->events);
	write_btf(self->btf, "drm_sched_job_run");
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 1);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_617);
	/* No tracefs at all: BTF alone. */
	p = plan("/nonexistent/events", self->btf, DAC_BPF_ATTACH_BTF, 0);
	DT_EXPECT_EQ(p.sched, 1);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_617);
	/* Plain tracepoints follow tracefs, not BTF. */
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_TRACEPOINT, 0);
	DT_EXPECT_EQ(p.sched, 0);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_61);
}

DT_TEST_F(tree, btf_61_typedef_picks_61_tp_btf)
{
	struct dac_bpf_plan p;

	write_btf(self->btf, "drm_run_job");
	p = plan("/nonexistent/events", self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 1);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_61);
}

DT_TEST_F(tree, unreadable_btf_falls_back_to_tracefs_names)
{
	static const char junk[] = "this is not BTF at all, just bytes";
	struct dac_bpf_plan p;

	sched617(self->events);
	write_file(self->btf, "vmlinux", junk, sizeof(junk));
	write_file(self->btf, "gpu_sched", junk, sizeof(junk));
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 1);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_617);
	/* Neither BTF nor tracefs names an event: the 6.1 names (attach says why). */
	p = plan("/nonexistent/events", self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 1);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_61);
}

DT_TEST_F(tree, btf_with_neither_typedef_uses_tracefs)
{
	struct dac_bpf_plan p;

	write_btf(self->btf, "something_else");
	sched617(self->events);
	p = plan(self->events, self->btf, DAC_BPF_ATTACH_AUTO, 0);
	DT_EXPECT_EQ(p.sched, 1);
	DT_EXPECT_EQ(p.sched_set, DAC_SCHED_SET_617);
}

static const char *const sched_types[][4] = {
	/* vmlinux */
	{ "task_struct", "worker_private", "flags", NULL },
	{ "kthread", "data", NULL, NULL },
	{ "worker", "current_work", NULL, NULL },
	/* gpu_sched */
	{ "drm_gpu_scheduler", "work_run_job", "name", NULL },
	{ "drm_sched_entity", "rq", NULL, NULL },
	{ "drm_sched_rq", "sched", NULL, NULL },
	{ "drm_sched_fence", "drm_client_id", NULL, NULL },
};

/*
 * Structs sched_types[@from..@to) into @btf, each member a pointer to
 * type @ptr, but member @drop ("struct.member", NULL for none).
 */
static void add_structs(struct btf *btf, int ptr, int from, int to, const char *drop)
{
	for (int t = from; t < to; t++) {
		const char *m[4] = { NULL };
		char full[96];
		int k = 0;

		for (int i = 1; sched_types[t][i]; i++) {
			snprintf(full, sizeof(full), "%s.%s", sched_types[t][0], sched_types[t][i]);
			if (!drop || strcmp(drop, full))
				m[k++] = sched_types[t][i];
		}
		DT_ASSERT_GT(btf__add_struct(btf, sched_types[t][0], 8 * (k ? k : 1)), 0);
		for (int i = 0; i < k; i++)
			DT_ASSERT_EQ(btf__add_field(btf, m[i], ptr, 64 * i, 0), 0);
	}
}

/*
 * vmlinux and gpu_sched BTF with the members the plain programs read a
 * job's scheduler through: 6.17 (task_struct.worker_private, kthread.data,
 * worker.current_work, drm_gpu_scheduler.work_run_job and .name), 6.1
 * (drm_sched_entity.rq, drm_sched_rq.sched), but @drop.
 */
static void write_sched_btf(const char *dir, const char *drop)
{
	struct btf *base = btf__new_empty(), *mod;
	const void *raw;
	__u32 size;
	int ptr;

	DT_ASSERT_TRUE(base != NULL);
	ptr = btf__add_ptr(base, 0);
	DT_ASSERT_GT(ptr, 0);
	add_structs(base, ptr, 0, 3, drop);
	raw = btf__raw_data(base, &size);
	DT_ASSERT_TRUE(raw != NULL);
	write_file(dir, "vmlinux", raw, size);
	mod = btf__new_empty_split(base);
	DT_ASSERT_TRUE(mod != NULL);
	add_structs(mod, ptr, 3, 7, drop);
	raw = btf__raw_data(mod, &size);
	DT_ASSERT_TRUE(raw != NULL);
	write_file(dir, "gpu_sched", raw, size);
	btf__free(mod);
	btf__free(base);
}

/*
 * What plain tracepoint programs know a ring by: its scheduler where the
 * BTF describes every member on the way to it (6.17: through the current
 * workqueue worker; 6.1: through the record's entity), else its name
 * (6.1) or its device and name (6.17). Any one member missing is enough
 * to lose the scheduler; tp_btf always has it.
 */
DT_TEST_F(tree, ring_identity_follows_the_btf)
{
	static const char *const need617[] = {
		"task_struct.worker_private", "kthread.data", "worker.current_work",
		"drm_gpu_scheduler.work_run_job", "drm_gpu_scheduler.name",
	};
	struct dac_bpf_env env = { .btf_dir = self->btf };

	write_sched_btf(self->btf, NULL);
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_617), DAC_BPF_RING_SCHED);
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_61), DAC_BPF_RING_SCHED);
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 1, DAC_SCHED_SET_617), DAC_BPF_RING_SCHED);
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, -ENOENT, DAC_SCHED_SET_617),
		     DAC_BPF_RING_NONE);
	for (size_t i = 0; i < sizeof(need617) / sizeof(need617[0]); i++) {
		write_sched_btf(self->btf, need617[i]);
		dt_info("without %s", need617[i]);
		DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_617),
			     DAC_BPF_RING_DEV_NAME);
		DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_61),
			     DAC_BPF_RING_SCHED);
		DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 1, DAC_SCHED_SET_617),
			     DAC_BPF_RING_SCHED);
	}
	write_sched_btf(self->btf, "drm_sched_rq.sched");
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_61), DAC_BPF_RING_NAME);
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_617), DAC_BPF_RING_SCHED);
	/* No BTF at all. */
	env.btf_dir = "/nonexistent/btf";
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_617), DAC_BPF_RING_DEV_NAME);
	DT_EXPECT_EQ(dac_bpf_ring_identity_of(&env, 0, DAC_SCHED_SET_61), DAC_BPF_RING_NAME);
}

/*
 * Whether the scheduler programs see DRM client ids: the plain 6.17
 * records carry them, the plain 6.1 ones never; tp_btf reads the fence's
 * drm_client_id, whatever the events' names, only where the BTF has it.
 */
DT_TEST_F(tree, client_ids_follow_the_btf)
{
	struct dac_bpf_env env = { .btf_dir = self->btf };

	write_sched_btf(self->btf, NULL);
	DT_EXPECT_TRUE(dac_bpf_client_ids_of(&env, 1, DAC_SCHED_SET_61));
	DT_EXPECT_TRUE(dac_bpf_client_ids_of(&env, 1, DAC_SCHED_SET_617));
	DT_EXPECT_TRUE(dac_bpf_client_ids_of(&env, 0, DAC_SCHED_SET_617));
	DT_EXPECT_FALSE(dac_bpf_client_ids_of(&env, 0, DAC_SCHED_SET_61));
	DT_EXPECT_FALSE(dac_bpf_client_ids_of(&env, -ENOENT, DAC_SCHED_SET_617));
	write_sched_btf(self->btf, "drm_sched_fence.drm_client_id");
	DT_EXPECT_FALSE(dac_bpf_client_ids_of(&env, 1, DAC_SCHED_SET_61));
	DT_EXPECT_FALSE(dac_bpf_client_ids_of(&env, 1, DAC_SCHED_SET_617));
	DT_EXPECT_TRUE(dac_bpf_client_ids_of(&env, 0, DAC_SCHED_SET_617));
	env.btf_dir = "/nonexistent/btf";
	DT_EXPECT_FALSE(dac_bpf_client_ids_of(&env, 1, DAC_SCHED_SET_61));
}

/* The one tp_btf set goes to the 6.1 names of its events on the 6.1 set. */
DT_TEST(tp_btf_targets_per_set)
{
	static const char *const ev[][2] = {
		{ "drm_sched_job_queue", "drm_sched_job" },
		{ "drm_sched_job_run", "drm_run_job" },
		{ "drm_sched_job_done", "drm_sched_process_job" },
	};

	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		DT_EXPECT_STREQ(dac_bpf_sched_target(ev[i][0], DAC_SCHED_SET_61), ev[i][1]);
		DT_EXPECT_STREQ(dac_bpf_sched_target(ev[i][0], DAC_SCHED_SET_617), ev[i][0]);
	}
	/* anything else stays where its section says */
	DT_EXPECT_STREQ(dac_bpf_sched_target("drmacct_job_end", DAC_SCHED_SET_61),
			"drmacct_job_end");
	DT_EXPECT_STREQ(dac_bpf_sched_target("sched_process_exit", DAC_SCHED_SET_61),
			"sched_process_exit");
}

DT_TEST_F(tree, layout_refuses_other_offsets)
{
	struct dac_bpf_env env = { .events_root = self->events };
	unsigned int shift;

	sched617(self->events);
	/* client_id moved by 8: a kernel that added a field before it. */
	write_format(self->events, "gpu_scheduler/drm_sched_job_run",
		     "\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
		     "\tfield:__data_loc char[] dev;\toffset:20;\tsize:4;\tsigned:0;\n"
		     "\tfield:u64 fence_context;\toffset:24;\tsize:8;\tsigned:0;\n"
		     "\tfield:u64 fence_seqno;\toffset:32;\tsize:8;\tsigned:0;\n"
		     "\tfield:u64 client_id;\toffset:48;\tsize:8;\tsigned:0;\n");
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, &shift), -EPROTO);
	/* name not a __data_loc string (a fixed char array): refused too. */
	write_format(self->events, "gpu_scheduler/drm_sched_job_run",
		     "\tfield:char name[4];\toffset:8;\tsize:4;\tsigned:0;\n"
		     "\tfield:__data_loc char[] dev;\toffset:20;\tsize:4;\tsigned:0;\n"
		     "\tfield:u64 fence_context;\toffset:24;\tsize:8;\tsigned:0;\n"
		     "\tfield:u64 fence_seqno;\toffset:32;\tsize:8;\tsigned:0;\n"
		     "\tfield:u64 client_id;\toffset:40;\tsize:8;\tsigned:0;\n");
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, &shift), -EPROTO);
	/* A field missing altogether. */
	write_format(self->events, "gpu_scheduler/drm_sched_job_run", F617_DONE);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, &shift), -EPROTO);
	/* The 6.1 layout refuses a 6.1 record whose fence moved. */
	sched61(self->events);
	write_format(self->events, "gpu_scheduler/drm_sched_process_job",
		     "\tfield:struct dma_fence * fence;\toffset:16;\tsize:8;\tsigned:0;\n");
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, &shift), -EPROTO);
}

/* The 6.1 records as a PREEMPT_RT kernel writes them: a 16-byte header. */
#define F61_RT_JOB \
	"\tfield:unsigned char common_preempt_lazy_count;\toffset:8;\tsize:1;\tsigned:0;\n" \
	"\tfield:struct drm_sched_entity * entity;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:struct dma_fence * fence;\toffset:24;\tsize:8;\tsigned:0;\n" \
	"\tfield:__data_loc char[] name;\toffset:32;\tsize:4;\tsigned:0;\n"
#define F61_RT_DONE "\tfield:struct dma_fence * fence;\toffset:16;\tsize:8;\tsigned:0;\n"

DT_TEST_F(tree, layout_follows_a_larger_common_header)
{
	struct dac_bpf_env env = { .events_root = self->events };
	unsigned int shift = 99;

	sched61(self->events);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, &shift), 0);
	DT_EXPECT_EQ(shift, 0u);
	write_format(self->events, "gpu_scheduler/drm_sched_job", F61_RT_JOB);
	write_format(self->events, "gpu_scheduler/drm_run_job", F61_RT_JOB);
	write_format(self->events, "gpu_scheduler/drm_sched_process_job", F61_RT_DONE);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, &shift), 0);
	DT_EXPECT_EQ(shift, 8u);
	/* Without a place to put the shift, a shifted layout is another one. */
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, NULL), -EPROTO);
	/* One event not shifted with the others: no common shift. */
	write_format(self->events, "gpu_scheduler/drm_sched_process_job", F61_DONE);
	shift = 99;
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, &shift), -EPROTO);
	DT_EXPECT_EQ(shift, 99u);
	/* Fields before their place (a smaller header) are refused too. */
	write_format(self->events, "gpu_scheduler/drm_sched_process_job",
		     "\tfield:struct dma_fence * fence;\toffset:4;\tsize:8;\tsigned:0;\n");
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, &shift), -EPROTO);
	/* A shift beyond any header growth is refused. */
	write_format(self->events, "gpu_scheduler/drm_sched_process_job",
		     "\tfield:struct dma_fence * fence;\toffset:4096;\tsize:8;\tsigned:0;\n");
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched61_fields, &shift), -EPROTO);
}

DT_TEST_F(tree, layout_empty_or_missing_format)
{
	struct dac_bpf_env env = { .events_root = self->events };

	sched617(self->events);
	write_file(self->events, "gpu_scheduler/drm_sched_job_done/format", "", 0);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, NULL), -EIO);
	DT_ASSERT_EQ(chdir(self->events), 0);
	DT_ASSERT_EQ(unlink("gpu_scheduler/drm_sched_job_done/format"), 0);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, NULL), -ENOENT);
}

DT_TEST_F(tree, layout_reads_format_files_beyond_8k)
{
	struct dac_bpf_env env = { .events_root = self->events };
	size_t pad = 20000, len;
	char *text, *p;

	/* An event with many fields: ours come last, past 8 KiB of text. */
	sched617(self->events);
	text = malloc(pad + 1024);
	DT_ASSERT_TRUE(text != NULL);
	p = text + sprintf(text, "name: drm_sched_job_done\nID: 1\nformat:\n");
	for (int i = 0; (size_t)(p - text) < pad; i++)
		p += sprintf(p, "\tfield:u64 filler%d;\toffset:%d;\tsize:8;\tsigned:0;\n",
			     i, 100 + 8 * i);
	p += sprintf(p, "%s", F617_DONE);
	len = (size_t)(p - text);
	write_file(self->events, "gpu_scheduler/drm_sched_job_done/format", text, len);
	free(text);
	DT_EXPECT_EQ(dac_bpf_check_layout(&env, dac_bpf_sched617_fields, NULL), 0);
}

DT_MAIN
