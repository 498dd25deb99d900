/* SPDX-License-Identifier: MIT */
/*
 * bpf_priv.h - internals shared by libdrmacct's BPF files (not installed).
 */
#ifndef DRMACCT_BPF_PRIV_H
#define DRMACCT_BPF_PRIV_H

#include "bpf.h"

/*
 * Raw entry of the names map (kind is enum dac_name_kind): 0, or -ENOENT
 * when userspace has not learned it.
 */
int dac_bpf_name_raw(struct dac_bpf *b, uint32_t device_id, unsigned int kind, uint32_t index,
		     char *buf, size_t len);

#endif /* DRMACCT_BPF_PRIV_H */
