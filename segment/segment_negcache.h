#ifndef LEAF_SEGMENT_NEGCACHE_H
#define LEAF_SEGMENT_NEGCACHE_H

/*
 * Unknown tags, remembered for a short time (the negative cache), and the
 * budget of lookups for tags nobody knows yet. Pure, with an injected
 * clock; the service guards it with a mutex of its own.
 *
 * - An unknown answer is kept ttl_ms, at most `cap` of them: when full, the
 *   oldest goes (entries expire in insertion order, so a ring is exact).
 *   A request for a remembered tag gets 404 with no database query.
 * - The lookups of tags that are neither known nor remembered draw on a
 *   token bucket of `rate` a second (burst of as many): beyond it the
 *   request is refused (503 overloaded), again without a query.
 * Flooding distinct unknown tags therefore costs at most `rate` lookups a
 * second and `cap` entries of memory.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "validate.h"

struct segment_negcache_entry {
    char name[VALIDATE_TAG_MAX + 1];
    uint8_t len;
    int64_t expires_ms;
    int32_t next; /* index chain, -1 = end */
};

struct segment_negcache {
    struct segment_negcache_entry *ring; /* cap entries, oldest at `tail` */
    int32_t *buckets;                    /* nbuckets chain heads, -1 = empty */
    size_t cap, nbuckets, head, tail, count;
    int64_t ttl_ms;
    double rate, tokens;
    int64_t tokens_ms; /* when tokens was last topped up */
    uint64_t hits, refused;
};

leaf_status_t segment_negcache_init(struct segment_negcache *c, size_t cap, int64_t ttl_ms,
                                    double lookups_per_s);
void segment_negcache_free(struct segment_negcache *c);

/* When name was found unknown, if less than ttl_ms before now; else -1. */
int64_t segment_negcache_found(struct segment_negcache *c, const char *name, size_t len,
                               int64_t now_ms);

/* Remembers name as unknown from now on. */
void segment_negcache_put(struct segment_negcache *c, const char *name, size_t len, int64_t now_ms);

/* Forgets name (the tag was created). */
void segment_negcache_forget(struct segment_negcache *c, const char *name, size_t len);

/* Takes one lookup from the budget: 1, or 0 when the budget of this second is spent. */
int segment_negcache_admit(struct segment_negcache *c, int64_t now_ms);

#endif
