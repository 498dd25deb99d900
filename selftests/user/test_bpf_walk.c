// SPDX-License-Identifier: MIT
/*
 * dac_bpf_map_walk(), the reader of every BPF map the CLI shows, on maps
 * the test creates in the host kernel (root only): every entry once with
 * its own value; entries deleted during the walk neither repeat nor hide
 * the others (the old key-by-key walk started over when its cursor key
 * went); a bucket larger than the batch grows the batch; a map type
 * without batch lookups (LPM trie) is walked key by key; the callback's
 * non-zero return ends the walk with that value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf_priv.h"
#include "dtest.h"

#define N 5000

struct seen {
	int fd;
	unsigned char count[N];
	size_t calls, bad_values, calls_at_stop;
	uint32_t stop_at;	/* return 7 at this key (N: never) */
	bool delete_odd;	/* delete odd keys from within the walk */
};

static int on_entry(const void *key, const void *val, void *arg)
{
	struct seen *s = arg;
	uint32_t k = *(const uint32_t *)key;
	uint64_t v = *(const uint64_t *)val;

	s->calls++;
	if (k >= N)
		return -ERANGE;
	s->count[k]++;
	if (v != (uint64_t)k * 3 + 1)
		s->bad_values++;
	if (k == s->stop_at) {
		s->calls_at_stop = s->calls;
		return 7;
	}
	if (s->delete_odd && (k & 1)) {
		/* the entry being walked goes: a key-by-key walk's cursor */
		bpf_map_delete_elem(s->fd, &k);
	}
	if (s->delete_odd && s->calls == 1) {
		/* at the first entry: the upper half's odd keys, ahead and behind */
		for (uint32_t d = N / 2 + 1; d < N; d += 2)
			bpf_map_delete_elem(s->fd, &d);
	}
	return 0;
}

static int hash_map(enum bpf_map_type type)
{
	/* An LRU map evicts before it is full (per-CPU free lists): room to spare. */
	int fd = bpf_map_create(type, "dac_walk_test", sizeof(uint32_t), sizeof(uint64_t),
				type == BPF_MAP_TYPE_LRU_HASH ? 4 * N : N, NULL);

	DT_ASSERT_GE(fd, 0);
	for (uint32_t k = 0; k < N; k++) {
		uint64_t v = (uint64_t)k * 3 + 1;

		DT_ASSERT_EQ(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
	}
	return fd;
}

static void need_root(void)
{
	if (geteuid())
		DT_SKIP("creating BPF maps needs root");
}

static size_t seen_once(const struct seen *s, uint32_t step)
{
	size_t n = 0;

	for (uint32_t k = 0; k < N; k += step)
		n += s->count[k] == 1;
	return n;
}

DT_TEST(hash_every_entry_once)
{
	struct seen *s = calloc(1, sizeof(*s));

	need_root();
	DT_ASSERT_TRUE(s != NULL);
	s->fd = hash_map(BPF_MAP_TYPE_HASH);
	s->stop_at = N;
	DT_EXPECT_EQ(dac_bpf_map_walk(s->fd, 4, 8, on_entry, s), 0);
	DT_EXPECT_EQ(s->calls, (size_t)N);
	DT_EXPECT_EQ(seen_once(s, 1), (size_t)N);
	DT_EXPECT_EQ(s->bad_values, 0);
	close(s->fd);
	free(s);
}

DT_TEST(deletes_during_the_walk_repeat_or_hide_nothing)
{
	struct seen *s = calloc(1, sizeof(*s));
	size_t odd_seen = 0;

	need_root();
	DT_ASSERT_TRUE(s != NULL);
	s->fd = hash_map(BPF_MAP_TYPE_HASH);
	s->stop_at = N;
	s->delete_odd = true;
	DT_EXPECT_EQ(dac_bpf_map_walk(s->fd, 4, 8, on_entry, s), 0);
	/* even keys and the lower half's odd ones were there until walked */
	DT_EXPECT_EQ(seen_once(s, 2), (size_t)N / 2);
	for (uint32_t k = 1; k < N / 2; k += 2)
		DT_EXPECT_EQ(s->count[k], 1);
	/* the upper half's odd keys went at the first entry: the first batch at most */
	for (uint32_t k = N / 2 + 1; k < N; k += 2) {
		DT_EXPECT_LE(s->count[k], 1);
		odd_seen += s->count[k];
	}
	DT_EXPECT_LE(odd_seen, (size_t)256);
	close(s->fd);
	free(s);
}

DT_TEST(bucket_larger_than_the_batch_grows_it)
{
	struct seen *s = calloc(1, sizeof(*s));

	need_root();
	DT_ASSERT_TRUE(s != NULL);
	s->fd = hash_map(BPF_MAP_TYPE_HASH);
	s->stop_at = N;
	dac_bpf_test_walk_chunk(1);	/* any bucket of two is too big */
	DT_EXPECT_EQ(dac_bpf_map_walk(s->fd, 4, 8, on_entry, s), 0);
	dac_bpf_test_walk_chunk(0);
	DT_EXPECT_EQ(seen_once(s, 1), (size_t)N);
	DT_EXPECT_EQ(s->calls, (size_t)N);
	close(s->fd);
	free(s);
}

DT_TEST(lru_hash_and_array_walked_too)
{
	struct seen *s = calloc(1, sizeof(*s));

	need_root();
	DT_ASSERT_TRUE(s != NULL);
	s->stop_at = N;
	s->fd = hash_map(BPF_MAP_TYPE_LRU_HASH);
	DT_EXPECT_EQ(dac_bpf_map_walk(s->fd, 4, 8, on_entry, s), 0);
	close(s->fd);
	s->fd = hash_map(BPF_MAP_TYPE_ARRAY);
	DT_EXPECT_EQ(dac_bpf_map_walk(s->fd, 4, 8, on_entry, s), 0);
	close(s->fd);
	DT_EXPECT_EQ(s->calls, (size_t)2 * N);
	for (uint32_t k = 0; k < N; k++)
		DT_EXPECT_EQ(s->count[k], 2);
	DT_EXPECT_EQ(s->bad_values, 0);
	free(s);
}

struct lpm_key {
	uint32_t prefixlen;
	uint32_t addr;
};

static int lpm_entry(const void *key, const void *val, void *arg)
{
	const struct lpm_key *k = key;
	size_t *n = arg;

	if (k->prefixlen != 32 || *(const uint64_t *)val != k->addr * 2ULL)
		return -EINVAL;
	(*n)++;
	return 0;
}

DT_TEST(map_without_batch_walked_key_by_key)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_NO_PREALLOC);
	int fd;
	size_t n = 0;

	need_root();
	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "dac_walk_lpm", sizeof(struct lpm_key),
			    sizeof(uint64_t), 100, &o);
	DT_ASSERT_GE(fd, 0);
	for (uint32_t a = 0; a < 100; a++) {
		struct lpm_key k = { 32, a << 8 };
		uint64_t v = (uint64_t)(a << 8) * 2;

		DT_ASSERT_EQ(bpf_map_update_elem(fd, &k, &v, BPF_ANY), 0);
	}
	DT_EXPECT_EQ(dac_bpf_map_walk(fd, sizeof(struct lpm_key), 8, lpm_entry, &n), 0);
	DT_EXPECT_EQ(n, (size_t)100);
	close(fd);
}

DT_TEST(callback_value_ends_the_walk)
{
	struct seen *s = calloc(1, sizeof(*s));

	need_root();
	DT_ASSERT_TRUE(s != NULL);
	s->fd = hash_map(BPF_MAP_TYPE_HASH);
	s->stop_at = 1234;
	DT_EXPECT_EQ(dac_bpf_map_walk(s->fd, 4, 8, on_entry, s), 7);
	DT_EXPECT_EQ(s->count[1234], 1);
	DT_EXPECT_GT(s->calls_at_stop, 0);
	DT_EXPECT_EQ(s->calls, s->calls_at_stop);	/* no call after the stop */
	close(s->fd);
	free(s);
}

DT_TEST(bad_map_fd_is_an_error)
{
	size_t n = 0;

	DT_EXPECT_EQ(dac_bpf_map_walk(-1, 4, 8, lpm_entry, &n), -EBADF);
	DT_EXPECT_EQ(n, 0);
}

DT_MAIN
