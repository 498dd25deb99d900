// SPDX-License-Identifier: MIT
/*
 * fuzz_record.c - libFuzzer target for the record stream decoder.
 *
 * Invariants checked on every input, beyond "no crash, no overread":
 *  - every record returned lies inside the input and has 8 <= size,
 *    size % 8 == 0, and records come in increasing offset order without
 *    overlapping;
 *  - the engine and region accessors of client records stay inside the
 *    record and name indices the record's device describes;
 *  - every problem's offset lies inside the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct drec_reader r;
	struct drec_record rec;
	uint64_t next_min = 0;
	size_t i;

	if (drec_reader_init(&r, data, size) == 0) {
		while (drec_next(&r, &rec) == 1) {
			const struct drec_device *d;
			struct drec_engine_val e;
			struct drec_region_val g;

			if (rec.offset < next_min || rec.size < DREC_HDR_SIZE || rec.size % 8 ||
			    rec.offset + rec.size > size ||
			    rec.payload != data + rec.offset + DREC_HDR_SIZE)
				abort();
			next_min = rec.offset + rec.size;
			if (rec.type == DREC_HOLDERS) {
				struct drec_holder h;

				/* every holder the count names lies inside the record */
				for (i = 0; drec_holder(&rec, i, &h); i++)
					if (!memchr(h.comm, 0, sizeof(h.comm)))
						abort();
				if (i != rec.count || !drec_device(&r, rec.client.dev) ||
				    DREC_HDR_SIZE + DREC_HOLDERS_FIXED + i * DREC_HOLDER_ENTRY !=
				    rec.size)
					abort();
				continue;
			}
			if (rec.type == DREC_CAPACITY) {
				struct drec_capacity c;

				/* every entry names an engine of the device, never capacity 0 */
				d = drec_device(&r, rec.client.dev);
				if (!d)
					abort();
				for (i = 0; drec_capacity(&rec, i, &c); i++)
					if (c.engine >= d->nengines || !c.capacity)
						abort();
				if (i != rec.count ||
				    DREC_HDR_SIZE + DREC_CAPACITY_FIXED + i * DREC_CAPACITY_ENTRY !=
				    rec.size)
					abort();
				continue;
			}
			if (rec.type != DREC_SAMPLE && rec.type != DREC_CLIENT_EXIT)
				continue;
			d = drec_device(&r, rec.client.dev);
			if (!d)
				abort();
			for (i = 0; drec_client_engine(&rec, i, &e); i++)
				if (e.engine >= d->nengines || !d->engines[e.engine].name)
					abort();
			for (i = 0; drec_client_region(&rec, i, &g); i++)
				if (g.region >= d->nregions || !d->regions[g.region])
					abort();
			if (i != rec.client.nregions)
				abort();
		}
	}
	for (i = 0; i < r.nproblems; i++)
		if (r.problems[i].offset > size || !memchr(r.problems[i].msg, 0,
							   sizeof(r.problems[i].msg)))
			abort();
	drec_reader_free(&r);
	return 0;
}
