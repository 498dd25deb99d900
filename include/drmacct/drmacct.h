/* SPDX-License-Identifier: MIT */
/*
 * drmacct.h - libdrmacct, per-client GPU usage from DRM fdinfo: the whole
 * public API (Documentation/libdrmacct.rst).
 *
 *   fdinfo.h    parse and validate one fdinfo text against the DRM client
 *               usage stats spec (dac_fdinfo_*)
 *   discover.h  find DRM and accel clients by walking /proc (dac_discover_*)
 *   tracker.h   clients across samples: de-duplication, the catch-up rule,
 *               utilisation, per-process and per-device totals (dac_tracker_*)
 *   counters.h  the same numbers as KD_KHR_perfcounter-style counters
 *               (dac_pc_*)
 *
 * Build with `pkg-config --cflags --libs libdrmacct` and include
 * <drmacct/drmacct.h>. Every exported symbol starts with dac_; the shared
 * library exports exactly the functions declared in these headers, but
 * the two *_test_fail_alloc() hooks, which only the static library has
 * (they are for libdrmacct's own tests).
 */
#ifndef DRMACCT_DRMACCT_H
#define DRMACCT_DRMACCT_H

#ifdef __cplusplus
extern "C" {
#endif

#include "fdinfo.h"
#include "discover.h"
#include "tracker.h"
#include "counters.h"

#ifdef __cplusplus
}
#endif

#endif /* DRMACCT_DRMACCT_H */
