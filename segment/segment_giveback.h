#ifndef LEAF_SEGMENT_GIVEBACK_H
#define LEAF_SEGMENT_GIVEBACK_H

/*
 * Zero waste: the statement that gives the unused rest of a tag's ranges
 * back to leaf_alloc, on a graceful stop or when an idle tag is evicted.
 * Pure: it builds the statement and its parameters; the database thread
 * runs it as a prepared statement (the tag is a parameter, never spliced).
 *
 *   UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?
 *   parameters: new_max (BIGINT), biz_tag (string), expected_max (BIGINT)
 *
 * new_max is the first ID this node has not used; everything at or above
 * it up to expected_max is this node's and unused (segment_buffer_unused_tail).
 * expected_max is the end of this node's last range: max_id still equals it
 * only if no node (leafd or Leaf) reserved a range of the tag since, and
 * then the next reservation continues exactly at new_max. Otherwise the
 * UPDATE matches no row and nothing is given back, which is safe: one
 * statement, no read-modify-write race.
 *
 * The caller, under the tag's mutex: build, then segment_buffer_clear()
 * so nothing more is issued from the given-back IDs, then unlock and
 * submit. One matched row: new_max .. expected_max - 1 given back; none:
 * someone reserved since (or the row is gone), nothing to do but log.
 */
#include <stddef.h>
#include <stdint.h>

#include "segment_buffer.h"
#include "status.h"
#include "validate.h"

#define SEGMENT_GIVEBACK_SQL "UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?"

struct segment_giveback {
    const char *sql;                    /* SEGMENT_GIVEBACK_SQL */
    int64_t new_max;                    /* parameter 1 */
    char biz_tag[VALIDATE_TAG_MAX + 1]; /* parameter 2, copied: the buffer may be gone */
    int64_t expected_max;               /* parameter 3 */
    int64_t ids;                        /* IDs given back if it matches (for the log) */
};

/*
 * Fills *out for the tag (tag_len bytes) and its buffer. LEAF_OK;
 * LEAF_ENOTFOUND when there is nothing to give back (no range buffered);
 * LEAF_EINVAL for a tag validate_tag() refuses. *out is untouched unless
 * LEAF_OK.
 */
leaf_status_t segment_giveback_build(const struct segment_buffer *b, const char *tag,
                                     size_t tag_len, struct segment_giveback *out);

#endif
