/* SPDX-License-Identifier: MIT */
/*
 * bpf_priv.h - internals shared by libdrmacct's BPF files (not installed).
 */
#ifndef DRMACCT_BPF_PRIV_H
#define DRMACCT_BPF_PRIV_H

#include <sys/types.h>

#include "bpf.h"

/*
 * Raw entry of the names map (kind is enum dac_name_kind): 0, or -ENOENT
 * when userspace has not learned it.
 */
int dac_bpf_name_raw(struct dac_bpf *b, uint32_t device_id, unsigned int kind, uint32_t index,
		     char *buf, size_t len);

struct dac_client_val;

/* Insert a client table entry unless one exists (-EEXIST then). */
int dac_bpf_client_insert(struct dac_bpf *b, uint64_t client_id,
			  const struct dac_client_val *cv);

/*
 * Devices whose node is known from name learning: parallel malloc'd arrays
 * of drmacct device ids and device numbers.
 */
int dac_bpf_known_devices(struct dac_bpf *b, uint32_t **ids, dev_t **rdevs, size_t *n);

#endif /* DRMACCT_BPF_PRIV_H */
