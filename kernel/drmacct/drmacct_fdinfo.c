// SPDX-License-Identifier: GPL-2.0
/*
 * drmacct — printing the DRM client usage stats (fdinfo).
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sizes.h>

#include <drm/drm_print.h>

#include "drmacct_compat.h"
#include "drmacct_internal.h"

/*
 * Memory values are printed in bytes unless they are an exact multiple of
 * a KiB (then KiB) or of a MiB (then MiB); 0 is printed as plain 0. A
 * reader never has to round.
 */
static void drmacct_print_mem(struct drm_printer *p, const char *key,
			      const char *region, u64 bytes)
{
	const char *unit = "";

	if (bytes && !(bytes & (SZ_1M - 1))) {
		bytes >>= 20;
		unit = " MiB";
	} else if (bytes && !(bytes & (SZ_1K - 1))) {
		bytes >>= 10;
		unit = " KiB";
	}
	drm_printf(p, "drm-%s-%s:\t%llu%s\n", key, region, bytes, unit);
}

static void drmacct_print_client_name(struct drmacct_client *client,
				      struct drm_printer *p)
{
	char name[DRMACCT_CLIENT_NAME_MAX + 1];
	unsigned int seq;
	u32 len;

	do {
		seq = read_seqcount_begin(&client->name_seq);
		len = client->name_len;
		memcpy(name, client->name, sizeof(name));
	} while (read_seqcount_retry(&client->name_seq, seq));

	if (len) {
		name[len] = '\0';
		drm_printf(p, "drm-client-name:\t%s\n", name);
	}
}

/**
 * drmacct_show_fdinfo() - print the usage stats of a client
 * @client: the client of the file being shown
 * @p: the printer drm_driver.show_fdinfo was given (where the DRM core
 *	owns fdinfo), else one on the seq_file of file_operations.show_fdinfo;
 *	DRMACCT_DEFINE_SHOW_FDINFO() in drmacct_compat.h builds that
 * @mem: array of one &struct drmacct_mem_stats per region of the device,
 *	filled by the driver for this file right now; NULL prints no
 *	memory keys
 *
 * Prints, one "key:\tvalue" line each: drm-driver, drm-pdev (PCI devices
 * only) and drm-client-id, unless the DRM core prints them (6.5+), then
 * drm-client-name when set and the DRM core does not own it (6.13+ prints
 * its own), then per engine what the driver measures
 * there: drm-engine-<e> (ns, including the running part of in-flight jobs)
 * for %DRMACCT_ENGINE_TIME, drm-engine-capacity-<e> (only when > 1), and
 * for %DRMACCT_ENGINE_CYCLES drm-cycles-<e> with drm-total-cycles-<e> or
 * drm-maxfreq-<e> (Hz); then per region drm-total-<r> and the device's
 * memory keys of drm-shared-, drm-resident-, drm-purgeable- and
 * drm-active-<r>, plus drm-memory-<r> (= resident) when the device was
 * created with %DRMACCT_DEVICE_LEGACY_MEMORY. Once the driver detached
 * (drmacct_device_destroy()), drm-total-cycles-<e> is left out.
 *
 * Each engine's time and cycles come from one consistent snapshot; the
 * busy time a reader sees never decreases.
 *
 * Also emits the drmacct_device_name tracepoint for each engine and region
 * of the client's device: a tracer that started after the client opened
 * learns the names (and which node and device id the client is on) from
 * any read of its fdinfo, with no file of its own.
 *
 * Context: process context.
 */
void drmacct_show_fdinfo(struct drmacct_client *client, struct drm_printer *p,
			 const struct drmacct_mem_stats *mem)
{
	struct drmacct_device *adev = client->adev;
	unsigned int keys = adev->mem_keys;
	unsigned int i;

	drmacct_trace_device_names(client);
	if (!DRMACCT_CORE_PRINTS_IDS) {
		drm_printf(p, "drm-driver:\t%s\n", adev->driver_name);
		if (adev->pdev[0])
			drm_printf(p, "drm-pdev:\t%s\n", adev->pdev);
		drm_printf(p, "drm-client-id:\t%llu\n", client->id);
	}
	if (!DRMACCT_CORE_OWNS_CLIENT_NAME)
		drmacct_print_client_name(client, p);

	for (i = 0; i < adev->num_engines; i++) {
		const struct drmacct_engine *e = &adev->engines[i];
		struct drmacct_engine_usage u;
		u64 total;

		drmacct_client_snapshot(client, i, &u);
		if (e->flags & DRMACCT_ENGINE_TIME)
			drm_printf(p, "drm-engine-%s:\t%llu ns\n", e->name, u.busy_ns);
		if (e->capacity > 1)
			drm_printf(p, "drm-engine-capacity-%s:\t%u\n", e->name,
				   e->capacity);
		if (!(e->flags & DRMACCT_ENGINE_CYCLES))
			continue;
		drm_printf(p, "drm-cycles-%s:\t%llu\n", e->name, u.cycles);
		if (e->total_cycles) {
			if (drmacct_device_total_cycles(adev, i, &total))
				drm_printf(p, "drm-total-cycles-%s:\t%llu\n", e->name,
					   total);
		} else if (e->max_freq_hz) {
			drm_printf(p, "drm-maxfreq-%s:\t%llu Hz\n", e->name,
				   e->max_freq_hz);
		}
	}

	if (!mem)
		return;
	for (i = 0; i < adev->num_regions; i++) {
		const char *r = adev->regions[i];

		drmacct_print_mem(p, "total", r, mem[i].total);
		if (keys & DRMACCT_MEM_KEY_SHARED)
			drmacct_print_mem(p, "shared", r, mem[i].shared);
		if (keys & DRMACCT_MEM_KEY_RESIDENT)
			drmacct_print_mem(p, "resident", r, mem[i].resident);
		if (keys & DRMACCT_MEM_KEY_PURGEABLE)
			drmacct_print_mem(p, "purgeable", r, mem[i].purgeable);
		if (keys & DRMACCT_MEM_KEY_ACTIVE)
			drmacct_print_mem(p, "active", r, mem[i].active);
		if (adev->flags & DRMACCT_DEVICE_LEGACY_MEMORY)
			drmacct_print_mem(p, "memory", r, mem[i].resident);
	}
}
EXPORT_SYMBOL_GPL(drmacct_show_fdinfo);
