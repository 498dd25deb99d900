/* SPDX-License-Identifier: MIT */
/*
 * order.h - per-client and per-process summaries (utilisation, memory) and
 * the display order of list, top and the JSON document.
 */
#ifndef DRMACCT_ORDER_H
#define DRMACCT_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "tracker.h"

/* Utilisation summary of a client: max over its engines, -1 when unknown. */
double cli_client_util(const struct dac_tk_client *c);
/* Memory of a client: sum over regions of total (or resident). */
uint64_t cli_client_mem(const struct dac_tk_client *c);
uint64_t cli_agg_mem(const struct dac_tk_agg *a);
/* Did the driver print any memory key (total or resident) for it? */
bool cli_client_has_mem(const struct dac_tk_client *c);
bool cli_agg_has_mem(const struct dac_tk_agg *a);
/* The MEMORY column: the sum as cli_fmt_bytes() has it, "-" when none printed. */
const char *cli_fmt_client_mem(const struct dac_tk_client *c, char *buf, size_t len);
const char *cli_fmt_agg_mem(const struct dac_tk_agg *a, char *buf, size_t len);
double cli_agg_util(const struct dac_tk_agg *a);

/* Client indices in display order; caller frees. NULL on ENOMEM. */
size_t *cli_sorted_clients(const struct dac_tracker *t, enum cli_sort key, bool reverse);
size_t *cli_sorted_procs(const struct dac_tracker *t, enum cli_sort key, bool reverse);

#endif /* DRMACCT_ORDER_H */
