/* SPDX-License-Identifier: GPL-2.0 */
/*
 * drmacct — per-client GPU usage accounting helper for DRM drivers.
 *
 * A driver describes its engines and memory regions once per device
 * (drmacct_device_create()), creates one client per open DRM file
 * (drmacct_client_open()), wraps every job in a struct drmacct_job, and
 * prints the spec-exact fdinfo with drmacct_show_fdinfo() from its
 * drm_driver.show_fdinfo (kernel/include/drmacct_compat.h hooks that up on
 * kernels whose DRM core does not own fdinfo yet).
 *
 * See Documentation/drmacct-helper.rst for the full contract.
 */
#ifndef _DRMACCT_H_
#define _DRMACCT_H_

#include <linux/bits.h>
#include <linux/types.h>

struct device;
struct drm_file;
struct drm_printer;
struct drmacct_device;
struct drmacct_client;

/** DRMACCT_CLIENT_NAME_MAX - longest client name, without the NUL */
#define DRMACCT_CLIENT_NAME_MAX		64
/** DRMACCT_NAME_MAX - longest engine or region name, without the NUL */
#define DRMACCT_NAME_MAX		31

/* drmacct_engine_desc.flags: what the driver measures on an engine */
/** DRMACCT_ENGINE_TIME - busy time: drm-engine-<e> */
#define DRMACCT_ENGINE_TIME		BIT(0)
/**
 * DRMACCT_ENGINE_CYCLES - busy cycles reported at job end: drm-cycles-<e>,
 * with drm-maxfreq-<e> or drm-total-cycles-<e>
 */
#define DRMACCT_ENGINE_CYCLES		BIT(1)

/**
 * struct drmacct_engine_desc - one engine class of a device
 * @name: the <e> in drm-engine-<e>: a <str> of the spec, so printable
 *	ASCII without whitespace or ':' (drmacct_device_create() refuses
 *	anything else), at most %DRMACCT_NAME_MAX characters, unique within
 *	the device. Upstream drivers use lower case, digits and '-' or '_'.
 * @flags: what the driver measures: %DRMACCT_ENGINE_TIME and/or
 *	%DRMACCT_ENGINE_CYCLES (at least one); only those keys are printed.
 * @capacity: number of identical instances (>= 1). Up to @capacity jobs
 *	of one client may run at once; busy time accrues per running job.
 *	More running jobs than this is a driver bug (begin called at
 *	submission instead of at hardware start) and WARNs once.
 * @max_freq_hz: maximum engine frequency, printed as drm-maxfreq-<e>.
 *	Only with %DRMACCT_ENGINE_CYCLES; 0 when @total_cycles is set (an
 *	engine prints one of the two).
 * @total_cycles: optional, only with %DRMACCT_ENGINE_CYCLES; returns the
 *	engine's total clock cycles since an arbitrary origin (printed as
 *	drm-total-cycles-<e>). Called from process context (fdinfo reads),
 *	never after drmacct_device_destroy() has returned.
 */
struct drmacct_engine_desc {
	const char *name;
	unsigned int flags;
	unsigned int capacity;
	u64 max_freq_hz;
	u64 (*total_cycles)(void *priv, unsigned int engine);
};

/* drmacct_device_desc.flags */
/** DRMACCT_DEVICE_LEGACY_MEMORY - also print drm-memory-<r> (= resident) */
#define DRMACCT_DEVICE_LEGACY_MEMORY	BIT(0)

/*
 * drmacct_device_desc.mem_keys: the memory keys a driver measures, printed
 * per region besides drm-total-<r> (always printed when there are regions).
 */
/** DRMACCT_MEM_KEY_SHARED - drm-shared-<r> */
#define DRMACCT_MEM_KEY_SHARED		BIT(0)
/** DRMACCT_MEM_KEY_RESIDENT - drm-resident-<r> */
#define DRMACCT_MEM_KEY_RESIDENT	BIT(1)
/** DRMACCT_MEM_KEY_PURGEABLE - drm-purgeable-<r> */
#define DRMACCT_MEM_KEY_PURGEABLE	BIT(2)
/** DRMACCT_MEM_KEY_ACTIVE - drm-active-<r> */
#define DRMACCT_MEM_KEY_ACTIVE		BIT(3)
/** DRMACCT_MEM_KEYS_ALL - every memory key */
#define DRMACCT_MEM_KEYS_ALL		(DRMACCT_MEM_KEY_SHARED | \
					 DRMACCT_MEM_KEY_RESIDENT | \
					 DRMACCT_MEM_KEY_PURGEABLE | \
					 DRMACCT_MEM_KEY_ACTIVE)

/**
 * struct drmacct_device_desc - static description of a device
 * @driver_name: printed as drm-driver (the name of the struct drm_driver)
 *	where the helper prints it (kernels before 6.5).
 * @dev: the device; drm-pdev is printed when this is a PCI device.
 * @engines: engine classes, indexed by the engine index the driver uses.
 * @num_engines: number of entries in @engines (may be 0).
 * @regions: memory region names (the <r> in drm-total-<r> ...).
 * @num_regions: number of entries in @regions (may be 0).
 * @mem_keys: DRMACCT_MEM_KEY_* the driver fills in &struct drmacct_mem_stats;
 *	the others are not printed.
 * @flags: DRMACCT_DEVICE_* flags (%DRMACCT_DEVICE_LEGACY_MEMORY needs
 *	%DRMACCT_MEM_KEY_RESIDENT).
 * @priv: driver cookie passed to the callbacks.
 *
 * Everything is copied by drmacct_device_create(); the descriptor itself
 * may live on the stack. @dev and @priv must stay valid until
 * drmacct_device_destroy().
 */
struct drmacct_device_desc {
	const char *driver_name;
	struct device *dev;
	const struct drmacct_engine_desc *engines;
	unsigned int num_engines;
	const char * const *regions;
	unsigned int num_regions;
	unsigned int mem_keys;
	unsigned int flags;
	void *priv;
};

/**
 * struct drmacct_mem_stats - memory of one client in one region, in bytes
 * @total: all objects the client has a handle to.
 * @shared: objects that are also reachable from another file or device
 *	(another handle, or a dma-buf export or import).
 * @resident: objects with backing store allocated.
 * @purgeable: resident objects userspace marked as not needed.
 * @active: objects in use by a job that has not finished.
 *
 * The driver fills these at read time (drmacct_show_fdinfo()), by walking
 * the handles of the file under the lock that protects them (for GEM, the
 * file's table_lock), so that sharing through another file is seen by
 * both files without any cross-file bookkeeping. An object counts in one
 * region only. Members not in the device's mem_keys are ignored.
 */
struct drmacct_mem_stats {
	u64 total;
	u64 shared;
	u64 resident;
	u64 purgeable;
	u64 active;
};

/**
 * enum drmacct_mem_op - kind of memory event reported by drmacct_mem_event()
 * @DRMACCT_MEM_CREATE: an object was created for the client.
 * @DRMACCT_MEM_OPEN: the client got a handle to an existing object (import).
 * @DRMACCT_MEM_CLOSE: the client closed its handle.
 * @DRMACCT_MEM_PURGEABLE: the object was marked purgeable.
 * @DRMACCT_MEM_WILLNEED: the object was marked needed again.
 * @DRMACCT_MEM_ACTIVE: a job of the client started using the object.
 * @DRMACCT_MEM_IDLE: that job finished.
 */
enum drmacct_mem_op {
	DRMACCT_MEM_CREATE,
	DRMACCT_MEM_OPEN,
	DRMACCT_MEM_CLOSE,
	DRMACCT_MEM_PURGEABLE,
	DRMACCT_MEM_WILLNEED,
	DRMACCT_MEM_ACTIVE,
	DRMACCT_MEM_IDLE,
};

/**
 * enum drmacct_name_kind - what a drmacct_device_name tracepoint names
 * @DRMACCT_NAME_ENGINE: an engine (the event carries its capacity).
 * @DRMACCT_NAME_REGION: a memory region.
 *
 * The values are part of the tracepoint interface (BPF programs read them).
 */
enum drmacct_name_kind {
	DRMACCT_NAME_ENGINE = 1,
	DRMACCT_NAME_REGION = 2,
};

/**
 * struct drmacct_job - accounting state of one job, embedded in the
 *	driver's job structure
 * @client: the client the job is charged to (holds a reference).
 * @start_ns: CLOCK_MONOTONIC start time while running.
 * @engine: engine index.
 * @state: 0 = not started (or reset), 1 = running, 2 = ended.
 * @begin_held: the drmacct_job_begin event is held back until the run's
 *	end (the trace_end_first test parameter).
 *
 * All fields are private to the helper.
 */
struct drmacct_job {
	struct drmacct_client *client;
	u64 start_ns;
	u32 engine;
	u32 state;
	u32 begin_held;
};

struct drmacct_device *drmacct_device_create(const struct drmacct_device_desc *desc);
void drmacct_device_destroy(struct drmacct_device *adev);
u32 drmacct_device_id(const struct drmacct_device *adev);

struct drmacct_client *drmacct_client_open(struct drmacct_device *adev,
					   struct drm_file *file);
void drmacct_client_close(struct drmacct_client *client);
u64 drmacct_client_id(const struct drmacct_client *client);
int drmacct_client_set_name(struct drmacct_client *client, const char *name,
			    size_t len);

int drmacct_job_init(struct drmacct_job *job, struct drmacct_client *client,
		     unsigned int engine);
u64 drmacct_job_begin(struct drmacct_job *job);
u64 drmacct_job_end(struct drmacct_job *job, u64 cycles);
u64 drmacct_job_reset(struct drmacct_job *job, u64 cycles);
void drmacct_job_fini(struct drmacct_job *job);

void drmacct_mem_event(struct drmacct_client *client, unsigned int region,
		       enum drmacct_mem_op op, u64 size);

void drmacct_show_fdinfo(struct drmacct_client *client, struct drm_printer *p,
			 const struct drmacct_mem_stats *mem);

/**
 * struct drmacct_engine_usage - a consistent snapshot of one engine
 * @busy_ns: busy time including the running part of in-flight jobs.
 * @cycles: busy cycles of finished jobs.
 * @running: number of jobs running right now.
 */
struct drmacct_engine_usage {
	u64 busy_ns;
	u64 cycles;
	u32 running;
};

int drmacct_client_usage(struct drmacct_client *client, unsigned int engine,
			 struct drmacct_engine_usage *usage);

#endif /* _DRMACCT_H_ */
