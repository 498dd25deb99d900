/* SPDX-License-Identifier: MIT */
/*
 * record.h - the drmacct record stream: writer and decoder.
 *
 * The byte layout is specified in Documentation/record-format.rst; this
 * header is the C view of it. In short: a file header (magic "DRMACREC",
 * version, start clocks, the devices and their engines and regions), then
 * records framed like the i915 perf stream:
 *
 *	struct { u32 type; u16 pad; u16 size; }  size covers the header
 *
 * with every size a multiple of 8 (payloads are 8-byte aligned) and every
 * integer little-endian. Readers skip record types they do not know by size.
 *
 * The decoder works on a buffer in memory, never reads outside it or past a
 * record's size, and never trusts a count inside a record that its size does
 * not cover. Problems (truncation, corruption) are collected with the byte
 * offset where they were found; after a corrupt record the decoder resumes
 * at the next 8-byte boundary that holds a plausible record, so everything
 * that can be recovered is.
 */
#ifndef DRMACCT_RECORD_H
#define DRMACCT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DREC_MAGIC		"DRMACREC"	/* 8 bytes, no NUL */
#define DREC_VERSION_MAJOR	1u	/* incompatible layout changes */
#define DREC_VERSION_MINOR	2u	/* compatible additions: 1 = HOLDERS,
					 * 2 = CAPACITY */
#define DREC_FILE_HEADER_SIZE	48u	/* fixed part of the file header */
#define DREC_HDR_SIZE		8u	/* record header */
#define DREC_MAX_RECORD		65528u	/* largest size that is a multiple of 8 */
#define DREC_COMM_LEN		16u
#define DREC_DEVICE_FIXED	24u	/* fixed part of a device descriptor */
#define DREC_ENGINE_DESC	16u	/* per engine: capacity, maxfreq */
#define DREC_CLIENT_FIXED	48u	/* fixed part of SAMPLE / CLIENT_EXIT */
#define DREC_ENGINE_ENTRY	40u
#define DREC_REGION_ENTRY	48u
#define DREC_HOLDERS_FIXED	32u	/* fixed part of HOLDERS */
#define DREC_HOLDER_ENTRY	24u	/* per holder: pid, comm */
#define DREC_CAPACITY_FIXED	32u	/* fixed part of CAPACITY */
#define DREC_CAPACITY_ENTRY	16u	/* per engine: index, capacity */

/* File header flags. */
#define DREC_F_BPF		(1u << 0)	/* CLIENT_EXIT/LOST come from BPF */

enum drec_type {
	DREC_SAMPLE = 1,	/* one client's counters at one time */
	DREC_CLIENT_EXIT = 2,	/* a client's final totals when it closed */
	DREC_LOST = 3,		/* records dropped before they reached us */
	DREC_OVERFLOW = 4,	/* a buffer filled */
	DREC_DEVICE = 5,	/* a device described (new, or more engines) */
	DREC_HOLDERS = 6,	/* every process holding a client (version 1.1) */
	DREC_CAPACITY = 7,	/* a client's engine capacities (version 1.2) */
	/* 8..0xffffffff: reserved; readers skip them by size */
};

/* Sources of LOST / OVERFLOW. */
enum drec_source {
	DREC_SRC_BPF_RINGBUF = 1,	/* the BPF collector's ring buffer */
	DREC_SRC_RECORDER = 2,		/* drmacct record itself */
};

/* Entry flags. */
#define DREC_E_BUSY		(1u << 0)
#define DREC_E_CYCLES		(1u << 1)
#define DREC_E_TOTAL_CYCLES	(1u << 2)
#define DREC_E_JOBS		(1u << 3)
#define DREC_E_MAXFREQ		(1u << 0)	/* in device engine descriptors */
#define DREC_R_TOTAL		(1u << 0)
#define DREC_R_SHARED		(1u << 1)
#define DREC_R_RESIDENT		(1u << 2)
#define DREC_R_PURGEABLE	(1u << 3)
#define DREC_R_ACTIVE		(1u << 4)
#define DREC_C_CLIENT_ID	(1u << 0)	/* client_id is the driver's */
#define DREC_C_NEW		(1u << 1)	/* opened during the recording */

struct drec_engine_desc {
	const char *name;
	uint64_t capacity;
	uint64_t maxfreq_hz;	/* 0: not printed */
};

/* A device: index used by records, device number, names. */
struct drec_device {
	uint32_t dev;
	uint32_t major, minor;
	const char *driver;	/* "" when unknown */
	const char *pdev;	/* "" when not a PCI device */
	size_t nengines;
	struct drec_engine_desc *engines;
	size_t nregions;
	const char **regions;
};

struct drec_engine_val {
	uint32_t engine;	/* index into the device's engines */
	uint32_t flags;		/* DREC_E_* */
	uint64_t busy_ns, cycles, total_cycles, jobs;
};

struct drec_region_val {
	uint32_t region;	/* index into the device's regions */
	uint32_t flags;		/* DREC_R_* */
	uint64_t total, shared, resident, purgeable, active;
};

/* SAMPLE and CLIENT_EXIT. */
struct drec_client {
	uint64_t time_ns;	/* CLOCK_MONOTONIC */
	uint64_t client_id;
	uint32_t dev;
	uint32_t pid;
	uint32_t flags;		/* DREC_C_* */
	char comm[DREC_COMM_LEN + 1];
	size_t nengines, nregions;
	const struct drec_engine_val *engines;	/* writer input */
	const struct drec_region_val *regions;
};

/*
 * One engine's capacity as one client prints it (CAPACITY): 1 when the
 * client prints no drm-engine-capacity- key for it.
 */
struct drec_capacity {
	uint32_t engine;	/* index into the device's engines */
	uint64_t capacity;
};

/* One process holding a client (HOLDERS). */
struct drec_holder {
	uint32_t pid;
	char comm[DREC_COMM_LEN + 1];
};

struct drec_file_info {
	uint32_t version_major, version_minor;
	uint32_t flags;		/* DREC_F_* */
	uint64_t start_realtime_ns;
	uint64_t start_mono_ns;
	uint64_t interval_ns;
};

/* ---- writer ---------------------------------------------------------- */

struct drec_writer {
	FILE *f;
	int err;		/* first error, -errno; sticky */
	uint64_t bytes, records;
	unsigned char *buf;
	size_t cap;
};

/*
 * Writes the file header with @ndev devices. Returns 0 or -errno (-EINVAL:
 * a device that does not fit a record, -ENOMEM, -EIO).
 */
int drec_writer_init(struct drec_writer *w, FILE *f, const struct drec_file_info *fi,
		     const struct drec_device *devs, size_t ndev);
/* Describes a new device or a device with more engines/regions. */
int drec_write_device(struct drec_writer *w, const struct drec_device *d);
/*
 * SAMPLE or CLIENT_EXIT (@type). A client with more engines and regions than
 * fit 64 KiB is written as several records with the same time and client.
 */
int drec_write_client(struct drec_writer *w, uint32_t type, const struct drec_client *c);
int drec_write_lost(struct drec_writer *w, uint64_t time_ns, uint32_t source, uint64_t count);
/*
 * HOLDERS: the @n processes holding client @client_id (@flags DREC_C_*) of
 * device @dev at @time_ns; split over several records when they do not fit one.
 */
int drec_write_holders(struct drec_writer *w, uint64_t time_ns, uint32_t dev,
		       uint64_t client_id, uint32_t flags, const struct drec_holder *h, size_t n);
/*
 * CAPACITY: the capacity of each of @n engines as client @c (time, id,
 * dev, pid, flags; no engines or regions) prints it. Capacity is a
 * property of what a client prints, not of the device: the device
 * descriptor's capacity is what the first client printed. The recorder
 * writes one before a client's first SAMPLE and again when it changes;
 * split over several records when they do not fit one.
 */
int drec_write_capacity(struct drec_writer *w, const struct drec_client *c,
			const struct drec_capacity *v, size_t n);
int drec_write_overflow(struct drec_writer *w, uint64_t time_ns, uint32_t source);
/* Any record, for tests and future types: @payload of @len bytes, padded. */
int drec_write_raw(struct drec_writer *w, uint32_t type, const void *payload, size_t len);
/* Pushes what was written to the file (so readers see whole records). */
int drec_writer_flush(struct drec_writer *w);
/* Flushes; frees the buffer. Returns 0 or the first error. */
int drec_writer_finish(struct drec_writer *w);

/* ---- decoder --------------------------------------------------------- */

enum drec_problem_kind {
	DREC_P_TRUNCATED = 1,	/* the data ends inside a header or record */
	DREC_P_CORRUPT,		/* a record or header is not valid */
	DREC_P_SKIPPED,		/* bytes skipped while resynchronising */
};

struct drec_problem {
	enum drec_problem_kind kind;
	uint64_t offset;	/* byte offset in the stream */
	char msg[120];
};

struct drec_record {
	uint64_t offset;	/* of the record header */
	uint32_t type;
	uint32_t size;		/* including the header */
	const unsigned char *payload;
	size_t payload_len;
	/* decoded, depending on type: */
	struct drec_client client;		/* SAMPLE, CLIENT_EXIT; HOLDERS: time,
						 * id, dev, flags; CAPACITY: time,
						 * id, dev, pid, flags */
	const struct drec_device *device;	/* DEVICE (valid until the next DEVICE) */
	uint64_t time_ns;			/* LOST, OVERFLOW (and client.time_ns) */
	uint32_t source;			/* LOST, OVERFLOW */
	uint64_t count;				/* LOST; HOLDERS: holders;
						 * CAPACITY: engines */
	bool known;				/* type known to this decoder */
};

struct drec_reader {
	const unsigned char *buf;
	size_t len, pos;
	struct drec_file_info info;
	struct drec_device *devs;	/* by index, owned */
	size_t ndevs;
	struct drec_problem *problems;
	size_t nproblems, cap_problems;
	uint64_t nrecords, nunknown, ncorrupt;
	bool dropped_problems;		/* ran out of memory for the list */
	int err;			/* -ENOMEM, sticky */
};

/*
 * Reads the file header from @buf (which must outlive the reader).
 * Returns 0; -EINVAL when this is not a record stream (bad magic or
 * version major), -EBADMSG when the header is corrupt, -ENODATA when it is
 * truncated (a problem entry says where), -ENOMEM.
 */
int drec_reader_init(struct drec_reader *r, const void *buf, size_t len);
/*
 * The next valid record. Returns 1 and fills @rec, 0 at the end of the
 * data, -ENOMEM. Records of unknown type are returned with known = false.
 * Corrupt records are reported in r->problems and skipped.
 */
int drec_next(struct drec_reader *r, struct drec_record *rec);
/* Engine @i / region @i of a decoded client record (bounds-checked). */
bool drec_client_engine(const struct drec_record *rec, size_t i, struct drec_engine_val *out);
bool drec_client_region(const struct drec_record *rec, size_t i, struct drec_region_val *out);
/* Holder @i of a decoded HOLDERS record (bounds-checked). */
bool drec_holder(const struct drec_record *rec, size_t i, struct drec_holder *out);
/* Engine @i of a decoded CAPACITY record (bounds-checked). */
bool drec_capacity(const struct drec_record *rec, size_t i, struct drec_capacity *out);
/* The device with index @dev, or NULL. */
const struct drec_device *drec_device(const struct drec_reader *r, uint32_t dev);
void drec_reader_free(struct drec_reader *r);

const char *drec_type_name(uint32_t type);	/* "sample", ..., "unknown" */
const char *drec_problem_name(enum drec_problem_kind k);

/* Reads a whole file (or stdin for "-") into memory. 0 or -errno. */
int drec_read_file(const char *path, unsigned char **buf, size_t *len);

#endif /* DRMACCT_RECORD_H */
