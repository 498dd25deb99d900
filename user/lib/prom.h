/* SPDX-License-Identifier: MIT */
/*
 * prom.h - Prometheus text exposition (format 0.0.4) of DRM client usage.
 *
 * One scrape walks /proc (or a synthetic --proc-root tree), feeds a tracker
 * that lives across scrapes (so the spec's catch-up rule keeps every counter
 * monotonic, as Prometheus requires of counters) and writes:
 *
 *   drmacct_client_engine_busy_seconds_total   counter  drm-engine-<e>
 *   drmacct_client_engine_cycles_total         counter  drm-cycles-<e>
 *   drmacct_client_engine_total_cycles_total   counter  drm-total-cycles-<e>
 *   drmacct_client_engine_jobs_total           counter  <drv>-jobs-<e> (v3d...)
 *   drmacct_client_engine_capacity             gauge    drm-engine-capacity-<e>
 *   drmacct_client_engine_max_frequency_hertz  gauge    drm-maxfreq-<e>
 *   drmacct_client_memory_bytes                gauge    drm-<kind>-<r>
 *   drmacct_client_info                        gauge    1: pid, comm, holders
 *   drmacct_clients                            gauge    clients per device
 *   drmacct_device_info                        gauge    1: pdev (drm-pdev)
 *   drmacct_discovery_unreadable               gauge    what the walk missed
 *   drmacct_discovery_failures                 gauge    the same by reason
 *   drmacct_scrape_duration_seconds            gauge    walk + parse time
 *   drmacct_scrape_errors_total                counter  failed scrapes
 *   drmacct_build_info                         gauge    1, version label
 *
 * Value series are keyed by the client: driver, device ("renderD128") and
 * client_id, plus holder="PID:FD" for a client without drm-client-id, and
 * engine, or region and kind (total, shared, resident, purgeable, active).
 * A client shared by several processes is one series, never counted twice;
 * drmacct_client_info carries who holds it (lowest pid and its comm, every
 * pid:fd). Label values are escaped (backslash, double quote, newline) and
 * made valid UTF-8.
 * Documentation/exporter.rst has the details.
 */
#ifndef DRMACCT_PROM_H
#define DRMACCT_PROM_H

#include <stdio.h>

#include "discover.h"
#include "fdinfo.h"

struct dac_prom;

/* Returns NULL with errno set (the proc root cannot be opened, ENOMEM). */
struct dac_prom *dac_prom_new(const struct dac_discover_opts *o, enum dac_profile profile);
void dac_prom_free(struct dac_prom *p);

/*
 * Print drmacct_build_info{version="@version"} 1 in every scrape (NULL:
 * not at all). 0 or -ENOMEM.
 */
int dac_prom_set_version(struct dac_prom *p, const char *version);

/*
 * Sample now and write the exposition to @out. Returns 0, or -errno (the
 * walk failed, out of memory, -EIO when writing failed). A failed walk is
 * counted in drmacct_scrape_errors_total of the next scrape.
 */
int dac_prom_scrape(struct dac_prom *p, FILE *out);

/* Write @s as an escaped label value (without the quotes). */
void dac_prom_label_value(FILE *out, const char *s);

#endif /* DRMACCT_PROM_H */
