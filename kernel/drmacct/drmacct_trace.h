/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of drmacct.ko (system "drmacct").
 *
 * Every field is an id or a value: clients are named by their drm-client-id,
 * devices by the helper's device id (in every event, as 6.17's gpu_scheduler
 * events carry their device in each: two devices of one driver stay apart
 * in a trace) and, at client open, by the device's name (dev_name(), the
 * "dev" of the scheduler's events), engines and regions by index (their
 * names come in drmacct_device_name, at each client open and each print
 * of a client's fdinfo). No field
 * carries a kernel pointer. Field names and the order of the fields are part
 * of the interface (BPF programs and the VM tests read them; new fields go
 * last); see Documentation/drmacct-helper.rst.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM drmacct

#if !defined(_DRMACCT_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _DRMACCT_TRACE_H_

#include <linux/tracepoint.h>

#include "drmacct.h"
#include "drmacct_compat.h"

TRACE_EVENT(drmacct_client_open,
	TP_PROTO(u64 client_id, u32 device_id, const char *driver, const char *dev),
	TP_ARGS(client_id, device_id, driver, dev),
	TP_STRUCT__entry(
		__field(u64, client_id)
		__field(u32, device_id)
		__string(driver, driver)
		__string(dev, dev)
	),
	TP_fast_assign(
		__entry->client_id = client_id;
		__entry->device_id = device_id;
		DRMACCT_ASSIGN_STR(driver, driver);
		DRMACCT_ASSIGN_STR(dev, dev);
	),
	TP_printk("client_id=%llu device_id=%u driver=%s dev=%s",
		  __entry->client_id, __entry->device_id, __get_str(driver),
		  __get_str(dev))
);

TRACE_DEFINE_ENUM(DRMACCT_NAME_ENGINE);
TRACE_DEFINE_ENUM(DRMACCT_NAME_REGION);

/*
 * One engine or region of a device, so that a tracer learns the names the
 * device's fdinfo prints without opening it. @client_id is the client
 * whose open or fdinfo print this is. @rdev is the device's render node
 * (its accel or primary node where it has none); 0 for a client with no
 * DRM file. The u64 goes first, as in every drmacct event, so a larger
 * common header (PREEMPT_RT) moves every field by the same amount; the
 * string goes last.
 */
TRACE_EVENT(drmacct_device_name,
	TP_PROTO(u64 client_id, u32 device_id, dev_t rdev, u32 kind, u32 index,
		 const char *name, u32 capacity),
	TP_ARGS(client_id, device_id, rdev, kind, index, name, capacity),
	TP_STRUCT__entry(
		__field(u64, client_id)
		__field(u32, device_id)
		__field(dev_t, rdev)
		__field(u32, kind)
		__field(u32, index)
		__field(u32, capacity)
		__string(name, name)
	),
	TP_fast_assign(
		__entry->client_id = client_id;
		__entry->device_id = device_id;
		__entry->rdev = rdev;
		__entry->kind = kind;
		__entry->index = index;
		__entry->capacity = capacity;
		DRMACCT_ASSIGN_STR(name, name);
	),
	TP_printk("client_id=%llu device_id=%u rdev=%u:%u kind=%s index=%u name=%s capacity=%u",
		  __entry->client_id, __entry->device_id, MAJOR(__entry->rdev),
		  MINOR(__entry->rdev),
		  __print_symbolic(__entry->kind,
				   { DRMACCT_NAME_ENGINE, "engine" },
				   { DRMACCT_NAME_REGION, "region" }),
		  __entry->index, __get_str(name), __entry->capacity)
);

TRACE_EVENT(drmacct_client_close,
	TP_PROTO(u64 client_id, u32 device_id, u32 num_engines,
		 const u64 *busy_ns, const u64 *cycles),
	TP_ARGS(client_id, device_id, num_engines, busy_ns, cycles),
	TP_STRUCT__entry(
		__field(u64, client_id)
		__field(u32, device_id)
		__field(u32, num_engines)
		__dynamic_array(u64, busy_ns, num_engines)
		__dynamic_array(u64, cycles, num_engines)
	),
	TP_fast_assign(
		__entry->client_id = client_id;
		__entry->device_id = device_id;
		__entry->num_engines = num_engines;
		memcpy(__get_dynamic_array(busy_ns), busy_ns,
		       sizeof(u64) * num_engines);
		memcpy(__get_dynamic_array(cycles), cycles,
		       sizeof(u64) * num_engines);
	),
	/*
	 * The element size is a literal: libtraceevent (1.7, Debian 12)
	 * cannot evaluate sizeof() in a format file's print fmt.
	 */
	TP_printk("client_id=%llu device_id=%u num_engines=%u busy_ns=%s cycles=%s",
		  __entry->client_id, __entry->device_id, __entry->num_engines,
		  __print_array(__get_dynamic_array(busy_ns),
				__entry->num_engines, 8),
		  __print_array(__get_dynamic_array(cycles),
				__entry->num_engines, 8))
);

TRACE_EVENT(drmacct_job_begin,
	TP_PROTO(u64 client_id, u32 engine, u64 ts_ns, u32 running, u32 device_id),
	TP_ARGS(client_id, engine, ts_ns, running, device_id),
	TP_STRUCT__entry(
		__field(u64, client_id)
		__field(u64, ts_ns)
		__field(u32, engine)
		__field(u32, running)
		__field(u32, device_id)
	),
	TP_fast_assign(
		__entry->client_id = client_id;
		__entry->ts_ns = ts_ns;
		__entry->engine = engine;
		__entry->running = running;
		__entry->device_id = device_id;
	),
	TP_printk("client_id=%llu engine=%u ts_ns=%llu running=%u device_id=%u",
		  __entry->client_id, __entry->engine, __entry->ts_ns,
		  __entry->running, __entry->device_id)
);

TRACE_EVENT(drmacct_job_end,
	TP_PROTO(u64 client_id, u32 engine, u64 ts_ns, u64 busy_ns, u64 cycles,
		 u32 running, u32 device_id),
	TP_ARGS(client_id, engine, ts_ns, busy_ns, cycles, running, device_id),
	TP_STRUCT__entry(
		__field(u64, client_id)
		__field(u64, ts_ns)
		__field(u64, busy_ns)
		__field(u64, cycles)
		__field(u32, engine)
		__field(u32, running)
		__field(u32, device_id)
	),
	TP_fast_assign(
		__entry->client_id = client_id;
		__entry->ts_ns = ts_ns;
		__entry->busy_ns = busy_ns;
		__entry->cycles = cycles;
		__entry->engine = engine;
		__entry->running = running;
		__entry->device_id = device_id;
	),
	TP_printk("client_id=%llu engine=%u ts_ns=%llu busy_ns=%llu cycles=%llu running=%u device_id=%u",
		  __entry->client_id, __entry->engine, __entry->ts_ns,
		  __entry->busy_ns, __entry->cycles, __entry->running,
		  __entry->device_id)
);

/* The op names in the format file, for readers that only have that. */
TRACE_DEFINE_ENUM(DRMACCT_MEM_CREATE);
TRACE_DEFINE_ENUM(DRMACCT_MEM_OPEN);
TRACE_DEFINE_ENUM(DRMACCT_MEM_CLOSE);
TRACE_DEFINE_ENUM(DRMACCT_MEM_PURGEABLE);
TRACE_DEFINE_ENUM(DRMACCT_MEM_WILLNEED);
TRACE_DEFINE_ENUM(DRMACCT_MEM_ACTIVE);
TRACE_DEFINE_ENUM(DRMACCT_MEM_IDLE);

TRACE_EVENT(drmacct_mem_change,
	TP_PROTO(u64 client_id, u32 region, u32 op, u64 size, u32 device_id),
	TP_ARGS(client_id, region, op, size, device_id),
	TP_STRUCT__entry(
		__field(u64, client_id)
		__field(u64, size)
		__field(u32, region)
		__field(u32, op)
		__field(u32, device_id)
	),
	TP_fast_assign(
		__entry->client_id = client_id;
		__entry->size = size;
		__entry->region = region;
		__entry->op = op;
		__entry->device_id = device_id;
	),
	TP_printk("client_id=%llu region=%u op=%s size=%llu device_id=%u",
		  __entry->client_id, __entry->region,
		  __print_symbolic(__entry->op,
				   { DRMACCT_MEM_CREATE, "create" },
				   { DRMACCT_MEM_OPEN, "open" },
				   { DRMACCT_MEM_CLOSE, "close" },
				   { DRMACCT_MEM_PURGEABLE, "purgeable" },
				   { DRMACCT_MEM_WILLNEED, "willneed" },
				   { DRMACCT_MEM_ACTIVE, "active" },
				   { DRMACCT_MEM_IDLE, "idle" }),
		  __entry->size, __entry->device_id)
);

#endif /* _DRMACCT_TRACE_H_ */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE drmacct_trace
#include <trace/define_trace.h>
