#ifndef LEAF_SEGMENT_KNOWN_H
#define LEAF_SEGMENT_KNOWN_H

/*
 * The tags leaf_alloc held at the last refresh, compactly: each tag's name
 * and step, and nothing else (about 30 bytes a tag), so that 100,000 rows
 * cost a few MB however few of them are used. A request for a tag in the
 * set is served without a lookup; only the tags requests use get a full
 * entry (segment_tags.h) with a double buffer.
 *
 * Rows arrive packed (segment_known_pack, as the database thread writes
 * them): an 8-byte step, a 1-byte name length, the name. The set is built
 * once, then only read: the service swaps the whole set under its tags
 * write lock and reads it under the read lock. Pure: no lock, no clock.
 */
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"
#include "status.h"

struct segment_known;

/* Appends one row to a packed buffer (len 1..255). */
void segment_known_pack(struct sbuf *packed, const char *name, size_t len, int64_t step);

/* Builds the set from a packed buffer, taking its memory; gen is the refresh generation. */
leaf_status_t segment_known_build(struct segment_known **out, struct sbuf *packed, uint64_t gen);

/* 1 and *step when name is in the set (NULL set: 0). */
int segment_known_find(const struct segment_known *k, const char *name, size_t len, int64_t *step);

size_t segment_known_count(const struct segment_known *k);
uint64_t segment_known_gen(const struct segment_known *k);

/* Bytes held, for the figures. */
size_t segment_known_bytes(const struct segment_known *k);

void segment_known_free(struct segment_known *k);

#endif
