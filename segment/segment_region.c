/* Segment IDs of one region among several: segment_region.h. */
#include "segment_region.h"

void segment_region_init(struct segment_region *g, int64_t id, int64_t count) {
    g->count = count < 1 ? 1 : count;
    g->id = id < 0 || id >= g->count ? 0 : id;
}

leaf_status_t segment_region_apply(const struct segment_region *g, int64_t *ids, int n) {
    if (segment_region_is_plain(g)) {
        return LEAF_OK;
    }
    /* Values ascend, so the last is the largest: check it once before changing any. */
    if (n > 0 && ids[n - 1] > (INT64_MAX - g->id) / g->count) {
        return LEAF_ERANGE;
    }
    for (int i = 0; i < n; i++) {
        ids[i] = ids[i] * g->count + g->id;
    }
    return LEAF_OK;
}
