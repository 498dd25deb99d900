/* SPDX-License-Identifier: MIT */
/*
 * fdinfo.h - DRM client usage stats (fdinfo) parser and validator.
 *
 * One call parses the text of one /proc/<pid>/fdinfo/<fd> file and yields:
 *  - every "key: value" line as a struct dac_kv (type, key, engine/region
 *    name, raw value string, unit, value converted to base units: bytes,
 *    nanoseconds, Hz, cycles, plain counts);
 *  - findings (struct dac_finding): spec violations and remarks, each with a
 *    1-based line number (0 = about the whole file), a severity and a stable
 *    code string (documented in Documentation/fdinfo-validation.rst);
 *  - convenience views: driver, pdev, client id/name, engines[], regions[].
 *
 * Two spec profiles are supported: DAC_PROFILE_2022 (the original text of
 * Documentation/gpu/drm-usage-stats.rst) and DAC_PROFILE_CURRENT (upstream
 * today: drm-client-name, drm-total-cycles-*, drm-{total,shared,resident,
 * purgeable,active}-*, driver_name- prefixed keys, drm-memory-* deprecated).
 *
 * There are no fixed limits: any number of lines, engines, regions, any line
 * length. Every input (including binary garbage and NUL bytes) is handled
 * without reading out of bounds.
 *
 * Return values: functions returning int return 0 on success or a negative
 * errno (-ENOMEM, -EINVAL, or the errno of a failed open/read). Findings are
 * not errors of the call: a file full of spec violations parses with 0.
 *
 * Memory: all strings in a struct dac_fdinfo (kv key/name/str/unit, engine
 * and region names, driver, pdev, client_name) and its arrays are owned by
 * it (one allocation for the usual text) and stay valid until
 * dac_fdinfo_free(). Finding
 * codes are static strings; their messages are made on request
 * (dac_finding_message()).
 *
 * Thread safety: no global state except the test-only allocation failure hook
 * (which is thread-local); different struct dac_fdinfo may be used from
 * different threads at the same time.
 */
#ifndef DRMACCT_FDINFO_H
#define DRMACCT_FDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** enum dac_profile - which version of the usage stats spec to check against */
enum dac_profile {
	DAC_PROFILE_CURRENT = 0,	/* upstream today (the default) */
	DAC_PROFILE_2022,		/* the original 2022 text */
};

/** enum dac_severity - how bad a finding is */
enum dac_severity {
	DAC_SEV_NOTE = 0,	/* allowed, but worth knowing (e.g. deprecated) */
	DAC_SEV_WARNING,	/* deviates from the spec, value still usable */
	DAC_SEV_ERROR,		/* violates a "shall"/"must"; value not trusted */
};

/**
 * enum dac_key_type - what a line's key is, after longest-prefix matching
 *
 * Prefixes are matched longest first, so "drm-engine-capacity-x" is
 * ENGINE_CAPACITY (never an engine named "capacity-x") and
 * "drm-total-cycles-x" is TOTAL_CYCLES (never a region named "cycles-x").
 * Which keys are known depends on the profile: in DAC_PROFILE_2022,
 * drm-client-name, drm-total-cycles-* and drm-{total,shared,resident,
 * purgeable,active}-* are DAC_KEY_UNKNOWN_DRM.
 */
enum dac_key_type {
	DAC_KEY_DRIVER = 0,	/* drm-driver: <str> */
	DAC_KEY_PDEV,		/* drm-pdev: <aaaa:bb:cc.d> */
	DAC_KEY_CLIENT_ID,	/* drm-client-id: <uint> */
	DAC_KEY_CLIENT_NAME,	/* drm-client-name: <str> (current) */
	DAC_KEY_ENGINE,		/* drm-engine-<e>: <uint> ns */
	DAC_KEY_ENGINE_CAPACITY, /* drm-engine-capacity-<e>: <uint> */
	DAC_KEY_CYCLES,		/* drm-cycles-<e>: <uint> */
	DAC_KEY_MAXFREQ,	/* drm-maxfreq-<e>: <uint> [Hz|KHz|MHz] */
	DAC_KEY_TOTAL_CYCLES,	/* drm-total-cycles-<e>: <uint> (current) */
	DAC_KEY_MEM_TOTAL,	/* drm-total-<r>: <uint> [KiB|MiB] (current) */
	DAC_KEY_MEM_SHARED,	/* drm-shared-<r> (current) */
	DAC_KEY_MEM_RESIDENT,	/* drm-resident-<r> (current) */
	DAC_KEY_MEM_PURGEABLE,	/* drm-purgeable-<r> (current) */
	DAC_KEY_MEM_ACTIVE,	/* drm-active-<r> (current) */
	DAC_KEY_MEMORY_LEGACY,	/* drm-memory-<r>: <uint> [KiB|MiB] */
	DAC_KEY_DRIVER_SPECIFIC, /* "<prefix>-...", e.g. amd-*, v3d-* */
	DAC_KEY_UNKNOWN_DRM,	/* a drm- key the profile does not define */
	DAC_KEY_OTHER,		/* non-drm fdinfo lines: pos, flags, ino... */
	DAC_KEY_INVALID,	/* malformed key (e.g. whitespace in it) */
	DAC_KEY__COUNT
};

/**
 * struct dac_kv - one "key: value" line
 * @type:      key type (see enum dac_key_type)
 * @key:       the key as printed (text before the first ':')
 * @name:      engine or region name (suffix of @key) or NULL for other types
 * @str:       the value text: from the first non-blank after ':' to the end
 *             of the line, trailing blanks removed (may be "")
 * @unit:      unit as printed ("ns", "KiB", "Hz", "jobs"...) or NULL if none
 * @value:     numeric value in base units (bytes, ns, Hz, cycles, count);
 *             only meaningful when @has_value
 * @has_value: @str parsed as <uint>[ unit], the unit was understood and the
 *             converted value fits in 64 bits. False for string keys and for
 *             values that drew an error finding. Driver-specific keys with an
 *             unknown unit (e.g. "19576 jobs") keep the number as is.
 * @line:      1-based line number
 */
struct dac_kv {
	enum dac_key_type type;
	const char *key;
	const char *name;
	const char *str;
	const char *unit;
	uint64_t value;
	bool has_value;
	unsigned int line;
};

/**
 * struct dac_finding - one validation result
 * @sev:  severity
 * @code: stable identifier, e.g. "capacity-zero" (static string)
 * @line: 1-based line number, 0 when about the whole file
 *
 * The human-readable explanation is made only when asked for, by
 * dac_finding_message(): the /proc walkers never print it, and making it
 * at every parse cost them more than the rest of a line's validation. The
 * private fields are what it needs (strings inside the parsed text).
 */
struct dac_finding {
	enum dac_severity sev;
	const char *code;
	unsigned int line;
	/* private: */
	unsigned int priv_msg;
	unsigned int priv_line;
	const char *priv_str[2];
	uint64_t priv_num[2];
};

/* Room enough for any message of dac_finding_message(), with its NUL. */
#define DAC_FINDING_MSG_MAX 512

/**
 * dac_finding_message() - the explanation of finding @f, e.g.
 * "'drm-engine-capacity-r': zero capacity is not allowed; 1 assumed"
 * (keys and values quoted in it are cut to 64 bytes, so it fits in
 * DAC_FINDING_MSG_MAX bytes), in @buf (@len bytes, cut to fit).
 * @f must be a finding of a struct dac_fdinfo that is not freed yet.
 * Return: @buf.
 */
const char *dac_finding_message(const struct dac_finding *f, char *buf, size_t len);

/**
 * struct dac_engine - everything known about one engine name
 * @name:          engine name (<e> in drm-engine-<e>)
 * @busy_ns:       drm-engine-<e> in ns (valid if @has_busy)
 * @capacity:      drm-engine-capacity-<e>; 1 when absent (spec default)
 * @cycles:        drm-cycles-<e>
 * @maxfreq_hz:    drm-maxfreq-<e> converted to Hz
 * @total_cycles:  drm-total-cycles-<e>
 * @line:          line of the first key naming this engine
 *
 * An engine appears here when any engine-type key names it, in order of
 * first appearance; values that drew an error finding are not filled in.
 */
struct dac_engine {
	const char *name;
	uint64_t busy_ns;
	uint64_t capacity;
	uint64_t cycles;
	uint64_t maxfreq_hz;
	uint64_t total_cycles;
	bool has_busy;
	bool has_capacity;
	bool has_cycles;
	bool has_maxfreq;
	bool has_total_cycles;
	unsigned int line;
};

/**
 * struct dac_region - everything known about one memory region, in bytes
 * @name:          region name (<r> in drm-total-<r>)
 * @total:         drm-total-<r>
 * @shared:        drm-shared-<r>
 * @resident:      drm-resident-<r>, or drm-memory-<r> if only that is present
 *                 (it is the deprecated alias; then @resident_from_legacy)
 * @purgeable:     drm-purgeable-<r>
 * @active:        drm-active-<r>
 * @memory:        drm-memory-<r> as printed (legacy key)
 * @line:          line of the first key naming this region
 */
struct dac_region {
	const char *name;
	uint64_t total;
	uint64_t shared;
	uint64_t resident;
	uint64_t purgeable;
	uint64_t active;
	uint64_t memory;
	bool has_total;
	bool has_shared;
	bool has_resident;
	bool has_purgeable;
	bool has_active;
	bool has_memory;
	bool resident_from_legacy;
	unsigned int line;
};

/**
 * struct dac_fdinfo - result of parsing one fdinfo text
 * @profile:      the profile it was checked against
 * @kv/@nkv:      every key/value line in file order; blank lines, lines
 *                without ':' and lines with a NUL byte are not listed (a
 *                NUL byte is always an error, a missing ':' on a drm- line)
 * @find/@nfind:  findings sorted by line (file-level ones, line 0, first)
 * @nlines:       number of lines in the text
 * @is_drm:       at least one key starts with "drm-"
 * @driver:       drm-driver value or NULL
 * @pdev:         drm-pdev value or NULL
 * @client_id:    drm-client-id (valid if @has_client_id)
 * @client_name:  drm-client-name value or NULL (current profile only)
 * @engines/@nengines: per-engine view
 * @regions/@nregions: per-region view
 *
 * For keys printed more than once the first occurrence wins (the later ones
 * draw a "duplicate-key" error and stay in @kv).
 */
struct dac_fdinfo {
	enum dac_profile profile;
	struct dac_kv *kv;
	size_t nkv;
	struct dac_finding *find;
	size_t nfind;
	unsigned int nlines;
	bool is_drm;
	const char *driver;
	const char *pdev;
	const char *client_name;
	uint64_t client_id;
	bool has_client_id;
	struct dac_engine *engines;
	size_t nengines;
	struct dac_region *regions;
	size_t nregions;
	/* private: */
	char *priv_text;	/* the copy of the input the strings point into */
	void *priv_alloc;	/* the allocation holding everything, */
	void *priv_heap[4];	/* but arrays that outgrew their room there */
	size_t priv_size;	/* of priv_alloc */
};

/**
 * dac_fdinfo_parse() - parse and validate one fdinfo text
 * @buf:     the text (need not be NUL-terminated; may contain NUL bytes)
 * @len:     its length in bytes
 * @profile: spec profile
 * @out:     result; overwritten (not freed) on entry, to be released with
 *           dac_fdinfo_free() after a successful call. On failure @out is
 *           left empty and need not be freed (freeing it is harmless).
 *
 * Return: 0, -EINVAL (NULL @out, NULL @buf with @len > 0, bad @profile),
 *         -ENOMEM.
 */
int dac_fdinfo_parse(const char *buf, size_t len, enum dac_profile profile,
		     struct dac_fdinfo *out);

/**
 * dac_fdinfo_read_fd() - read everything from @fd (one read loop into a
 * growing buffer, EINTR retried) and parse it. Does not close @fd. One
 * fstat() first; a regular file (/proc fdinfo files are) ends at a short
 * read, anything else (a pipe) is read until read() returns 0.
 *
 * Return: as dac_fdinfo_parse(), or -errno from read(), -EISDIR for a
 *         directory, -EINVAL for a character or block device.
 */
int dac_fdinfo_read_fd(int fd, enum dac_profile profile, struct dac_fdinfo *out);

/**
 * dac_fdinfo_read_file() - open @path read-only and dac_fdinfo_read_fd() it
 * (open, fstat, read, close for a file under 4 KiB).
 */
int dac_fdinfo_read_file(const char *path, enum dac_profile profile,
			 struct dac_fdinfo *out);

/**
 * dac_fdinfo_read_at() - openat(@dirfd, @name) and parse, for the /proc
 * walker (@dirfd = an open /proc/<pid>/fdinfo directory, @name = "<fd>").
 * Made for the hot path: an fdinfo under 4 KiB costs openat, one read and
 * close, the least any reader pays. It relies on @name being a regular file
 * or a /proc fdinfo file (a one-record seq_file), where a short read is the
 * end; it fstat()s only when the first read is empty or fills the buffer,
 * which is when devices and directories are refused, so do not point it at
 * a tty. Return: as dac_fdinfo_read_fd(); -ENOENT when the fd or process is
 * gone.
 */
int dac_fdinfo_read_at(int dirfd, const char *name, enum dac_profile profile,
		       struct dac_fdinfo *out);

/**
 * enum dac_stats - how much of the usage stats a driver prints in an fd's
 * fdinfo; one notion for every command (validate, conformance, list, top)
 */
enum dac_stats {
	DAC_STATS_NONE = 0,	/* no drm- key at all: the driver prints no usage
				 * stats (most drivers; the output is opt-in) */
	DAC_STATS_CORE,		/* drm- keys, but no engine or memory key: the
				 * identity lines (drm-driver, drm-client-id,
				 * drm-pdev) that the DRM core prints on 6.5+ for
				 * drivers with a show_fdinfo hook and no stats */
	DAC_STATS_FULL,		/* engine or memory keys */
};

/** dac_fdinfo_stats() - which of enum dac_stats @fi is (NONE for NULL) */
enum dac_stats dac_fdinfo_stats(const struct dac_fdinfo *fi);

/** dac_stats_name() - "none", "core" or "full" ("?" if out of range) */
const char *dac_stats_name(enum dac_stats s);

/** dac_fdinfo_free() - release everything owned by @fi and zero it; NULL ok */
void dac_fdinfo_free(struct dac_fdinfo *fi);

/** dac_fdinfo_count() - number of findings of severity @sev */
size_t dac_fdinfo_count(const struct dac_fdinfo *fi, enum dac_severity sev);

/** dac_fdinfo_errors() - number of error findings (0 = spec-conformant) */
size_t dac_fdinfo_errors(const struct dac_fdinfo *fi);

/** dac_fdinfo_find_code() - first finding with code @code, or NULL */
const struct dac_finding *dac_fdinfo_find_code(const struct dac_fdinfo *fi,
					       const char *code);

/** dac_fdinfo_engine() - engine by name, or NULL */
const struct dac_engine *dac_fdinfo_engine(const struct dac_fdinfo *fi,
					   const char *name);

/** dac_fdinfo_region() - memory region by name, or NULL */
const struct dac_region *dac_fdinfo_region(const struct dac_fdinfo *fi,
					   const char *name);

/** dac_fdinfo_get() - first key/value line with key @key, or NULL */
const struct dac_kv *dac_fdinfo_get(const struct dac_fdinfo *fi, const char *key);

/** dac_severity_name() - "error", "warning", "note" ("?" if out of range) */
const char *dac_severity_name(enum dac_severity sev);

/** dac_profile_name() - "current" or "2022" ("?" if out of range) */
const char *dac_profile_name(enum dac_profile profile);

/**
 * dac_profile_parse() - "current" or "2022" to a profile
 * Return: 0, or -EINVAL for any other string (including NULL).
 */
int dac_profile_parse(const char *s, enum dac_profile *profile);

/** dac_key_type_name() - short name, e.g. "engine", "mem-total" ("?" if bad) */
const char *dac_key_type_name(enum dac_key_type type);

/**
 * dac_finding_codes() - every finding code this library can emit
 * @n: set to the number of entries
 * Return: static array of static strings (for documentation and tests).
 */
const char *const *dac_finding_codes(size_t *n);

/*
 * Testing only: make the Nth (0-based) internal allocation of the calling
 * thread from now on fail with -ENOMEM; -1 disables. Used by the unit tests
 * to drive every allocation failure path.
 */
void dac_fdinfo_test_fail_alloc(long nth);

#ifdef __cplusplus
}
#endif

#endif /* DRMACCT_FDINFO_H */
