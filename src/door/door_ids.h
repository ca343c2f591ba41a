#ifndef LEAF_DOOR_IDS_H
#define LEAF_DOOR_IDS_H

/*
 * Issuing IDs, for every protocol: the HTTP handlers and the RESP commands
 * both call door_ids_issue() and turn its outcome into their own answer. The
 * waiting policy is here once; a refusal is a row of IDS_ERRORS
 * (door_errors.h), which each protocol writes with its one error writer.
 *
 * Runs on an event-loop thread; the services it calls are thread-safe.
 */
#include <stddef.h>
#include <stdint.h>

#include "door_errors.h"
#include "ids_mode.h"
#include "segment_opaque.h"
#include "sequence_service.h"
#include "session.h"
#include "status.h"

struct door_ctx;

/*
 * The modes are the rows of IDS_MODES (ids_mode.h). IDS_OPAQUE: a tag's
 * segment IDs through the keyed permutation (segment_opaque.h); never dense.
 */

/*
 * One call for IDs. The caller fills the inputs; a request that parks is
 * handed in again, unchanged, when it resumes.
 */
struct ids_call {
    enum ids_mode mode;
    const char *key;
    size_t key_len;
    int count;
    int dense;             /* segment: count consecutive IDs, ids[0] = the highest */
    int loop;              /* the event loop (metrics) */
    int64_t first_seen_ms; /* monotonic ms when the request arrived */
    int64_t now_ms;        /* monotonic ms now */
    struct leaf_wait *wait;
    int may_create; /* sequences: an unknown one may be created (leafd.sequence.autocreate) by
                     * this caller: it holds the 'create' right (always 1 with auth off) */
    /* outputs */
    struct sequence_numbering numbering; /* IDS_NUMBER: the definition the numbers follow */
    int64_t day;                         /* IDS_NUMBER: the primary's local day when issued */
    int64_t retry_ms;                    /* LEAF_EAGAIN: resume at the latest after this long */
    enum door_error err;                 /* LEAF_ERR: why (IDS_ERRORS) */
    struct sequence_where primary;       /* IDS_E_NOT_PRIMARY: where to ask */
};

/*
 * Issues c->count IDs into ids (room for count, or 1 when dense).
 * Sequences are dense by nature: count consecutive IDs (ids[0] = the highest
 * when dense). GET's "last issued" is door_ids_last().
 * LEAF_OK; LEAF_EAGAIN: parked (c->retry_ms set, c->wait registered where
 * the answer comes from); LEAF_ERR: refused, c->err says why. The key must
 * already be valid (validate_tag) and count within 1..10000.
 */
leaf_status_t door_ids_issue(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids);

/* The event loop's opaque cipher; NULL when leafd.opaque.key is empty. */
struct segment_opaque *door_ids_opaque(const struct door_ctx *ctx, int loop);

/*
 * Room for count IDs: the stack buffer (IDS_STACK) when it is big enough,
 * else the heap (free with ids_free). NULL when out of memory.
 */
#define IDS_STACK 16
int64_t *door_ids_alloc(int64_t *stack, int count);
void door_ids_free(int64_t *stack, int64_t *ids);

/*
 * The text of n IDs of a text mode (IDS_MODES' text column) that c issued: UUIDv7s
 * (snowflake/snowflake_uuid.h; the random bits from getrandom(2)) or business numbers
 * (sequence/sequence_numbering.h). The i-th is text + i * DOOR_IDS_TEXT_MAX, lens[i] bytes,
 * no NUL. LEAF_OK, or LEAF_ERR when getrandom failed (logged here).
 */
#define DOOR_IDS_TEXT_MAX 64
leaf_status_t door_ids_text(const struct door_ctx *ctx, const struct ids_call *c,
                            const int64_t *ids, int n, char *text, size_t *lens);

/* The last ID issued of a sequence (c->count unused); 0 when none yet. As door_ids_issue(). */
leaf_status_t door_ids_last(const struct door_ctx *ctx, struct ids_call *c, int64_t *last);

#endif
