#ifndef LEAF_SEGMENT_REGION_H
#define LEAF_SEGMENT_REGION_H

/*
 * Segment IDs of one region among several (docs/regions.md, "Segment IDs"):
 * region r of R issues only IDs with id mod R == r, residue classes as
 * Flickr's ticket servers. Each region reserves ranges from its own
 * database's leaf_alloc exactly as before, in the table's own units; a value
 * v of a range becomes the ID v * R + r. So a range of step values holds step
 * IDs of this region (nothing is skipped), IDs stay increasing per node and
 * tag, Leaf's table is untouched, and with R = 1 the ID is the value itself,
 * byte for byte as before. max_id counts values: the IDs of a region lie
 * below max_id * R.
 *
 * Pure: no lock, no clock, no I/O. Ownership: a value, set once at start,
 * read by any thread.
 */
#include <stdint.h>

#include "status.h"

struct segment_region {
    int64_t id;    /* r: 0 .. count - 1 */
    int64_t count; /* R >= 1 */
};

/* The region of leafd.region.id and leafd.region.count. */
void segment_region_init(struct segment_region *g, int64_t id, int64_t count);

/* 1 when the region changes nothing (R = 1). */
static inline int segment_region_is_plain(const struct segment_region *g) {
    return g->count <= 1;
}

/*
 * Turns n table values in ids into this region's IDs, in place: LEAF_OK, or
 * LEAF_ERANGE and nothing changed when one of them would pass INT64_MAX.
 */
leaf_status_t segment_region_apply(const struct segment_region *g, int64_t *ids, int n);

#endif
