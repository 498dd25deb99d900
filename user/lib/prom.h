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
 *   drmacct_client_info                        gauge    1: pid, comm, holders, cgroup
 *   drmacct_device_engine_busy_seconds_total   counter  sum over every client seen
 *   drmacct_device_engine_cycles_total         counter  ... of the device, closed
 *   drmacct_device_engine_jobs_total           counter  ones included
 *   drmacct_device_memory_bytes                gauge    sum over open clients
 *   drmacct_device_clients_closed_total        counter  clients dropped
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
 * pid:fd, the cgroup v2 path of that pid). Label values are escaped
 * (backslash, double quote, newline) and made valid UTF-8.
 *
 * Cardinality stays bounded: the series of a client that closed are
 * exported for drop_after - 1 more scrapes with their last values (so
 * every scraper sees the final counters), then dropped; the device totals
 * keep what the dropped clients had counted, so they stay counters.
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

/* A client gone from this many scrapes in a row is dropped (by default). */
#define DAC_PROM_DROP_AFTER	2

/* @scrapes >= 1 (1: dropped at the first scrape without it). 0 or -EINVAL. */
int dac_prom_set_drop_after(struct dac_prom *p, unsigned int scrapes);

/* Clients with series now: open ones and gone ones not dropped yet. */
size_t dac_prom_nseries_clients(const struct dac_prom *p);

/*
 * Sample now and write the exposition to @out. Returns 0, or -errno (the
 * walk failed, out of memory, -EIO when writing failed). A failed walk is
 * counted in drmacct_scrape_errors_total of the next scrape.
 */
int dac_prom_scrape(struct dac_prom *p, FILE *out);

/*
 * The series and device totals (what makes the next scrape's counters
 * continue this one's), for a run that scrapes once and ends, to carry
 * them to the next run (export --textfile --state FILE): a text format
 * private to this file. dac_prom_save(): 0 or -EIO. dac_prom_load()
 * replaces what @p has: 0, -ENOMEM, -EIO, or -EINVAL with *@bad_line the
 * line that is not what dac_prom_save() writes (@p then has nothing).
 */
int dac_prom_save(const struct dac_prom *p, FILE *f);
int dac_prom_load(struct dac_prom *p, FILE *f, size_t *bad_line);

/* Write @s as an escaped label value (without the quotes). */
void dac_prom_label_value(FILE *out, const char *s);

#endif /* DRMACCT_PROM_H */
