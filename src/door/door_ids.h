#ifndef LEAF_DOOR_IDS_H
#define LEAF_DOOR_IDS_H

/*
 * Issuing IDs, for every protocol: the HTTP handlers and the RESP commands
 * both call door_ids_issue() and turn its outcome into their own answer. The
 * waiting policy and the errors are here once: an error is a row of
 * IDS_ERRORS with its stable code (HTTP's JSON "code", RESP's first word in
 * upper case), its HTTP status and its message.
 *
 * Runs on an event-loop thread; the services it calls are thread-safe.
 */
#include <stddef.h>
#include <stdint.h>

#include "ids_mode.h"
#include "leaf_wait.h"
#include "segment_opaque.h"
#include "sequence_service.h"
#include "status.h"

struct door_ctx;

/*
 * X(enum, HTTP status, code, RESP error, message). The code is HTTP's JSON
 * "code" and the RESP status label; the RESP error's first word is the code
 * in upper case, except where Redis Cluster clients act on Redis's own words:
 * -MOVED <slot> <host:port> (-TRYAGAIN while the primary has no RESP
 * address) and -TRYAGAIN.
 */
#define IDS_ERRORS(X)                                                                              \
    X(IDS_E_NONE, 200, "ok", "", "")                                                               \
    X(IDS_E_BAD_TAG, 400, "bad_tag", "BAD_TAG", "key must be 1 to 128 bytes of [A-Za-z0-9._:-]")   \
    X(IDS_E_BAD_SEQUENCE_NAME, 400, "bad_tag", "BAD_TAG",                                          \
      "a sequence name must be 1 to 128 bytes of [A-Za-z0-9._:-], not . or ..")                    \
    X(IDS_E_BAD_COUNT, 400, "bad_count", "BAD_COUNT", "count must be an integer from 1 to 10000")  \
    X(IDS_E_SNOWFLAKE_DISABLED, 503, "snowflake_disabled", "SNOWFLAKE_DISABLED",                   \
      "snowflake mode is disabled on this node")                                                   \
    X(IDS_E_SEGMENT_DISABLED, 503, "segment_disabled", "SEGMENT_DISABLED",                         \
      "segment mode is disabled on this node")                                                     \
    X(IDS_E_UNKNOWN_TAG, 404, "unknown_tag", "UNKNOWN_TAG", "no such biz_tag in leaf_alloc")       \
    X(IDS_E_TOO_MANY_TAGS, 503, "too_many_tags", "TOO_MANY_TAGS",                                  \
      "too many tags are being looked up")                                                         \
    X(IDS_E_DATABASE_UNAVAILABLE, 503, "database_unavailable", "DATABASE_UNAVAILABLE",             \
      "the database is unavailable and no IDs are buffered for this tag")                          \
    X(IDS_E_CLOCK_BACKWARDS, 503, "clock_backwards", "CLOCK_BACKWARDS",                            \
      "the clock moved backwards; refusing until it catches up")                                   \
    X(IDS_E_OVERLOADED, 503, "overloaded", "OVERLOADED",                                           \
      "the generator stayed busy or the clock behind for a whole second")                          \
    X(IDS_E_CLOCK_OUT_OF_RANGE, 503, "clock_out_of_range", "CLOCK_OUT_OF_RANGE",                   \
      "the clock is before the epoch or past the time field's horizon")                            \
    X(IDS_E_NOT_READY, 503, "not_ready", "NOT_READY",                                              \
      "no worker ID held or reservation not persisted")                                            \
    X(IDS_E_OUT_OF_MEMORY, 503, "out_of_memory", "OUT_OF_MEMORY", "out of memory")                 \
    X(IDS_E_SEQUENCE_DISABLED, 503, "sequence_disabled", "SEQUENCE_DISABLED",                      \
      "sequence mode is disabled on this node")                                                    \
    X(IDS_E_NOT_PRIMARY, 307, "not_primary", "MOVED",                                              \
      "this node is a standby; ask the sequence primary")                                          \
    X(IDS_E_NO_PRIMARY, 503, "no_primary", "TRYAGAIN",                                             \
      "no sequence primary can issue now; retry shortly")                                          \
    X(IDS_E_UNKNOWN_SEQUENCE, 404, "unknown_sequence", "UNKNOWN_SEQUENCE",                         \
      "no such sequence (create it with POST /api/sequence)")                                      \
    X(IDS_E_SEQUENCE_EXHAUSTED, 503, "sequence_exhausted", "SEQUENCE_EXHAUSTED",                   \
      "the sequence would pass 2^63-1")                                                            \
    X(IDS_E_BAD_RANGE_COUNT, 400, "bad_count", "BAD_COUNT",                                        \
      "count must be an integer from 1 to 1000000")                                                \
    X(IDS_E_OPAQUE_DISABLED, 503, "opaque_disabled", "OPAQUE_DISABLED",                            \
      "opaque IDs are off on this node (leafd.opaque.key is empty)")                               \
    X(IDS_E_OPAQUE_FAILED, 503, "opaque_failed", "OPAQUE_FAILED",                                  \
      "the opaque ID cipher failed; see the node's log")                                           \
    X(IDS_E_BATCH_TOO_LARGE, 400, "bad_count", "BAD_COUNT",                                        \
      "count is above what leafd.snowflake.layout issues at once (its sequence width and time "    \
      "unit; the node logs the limit at start); ask for fewer")                                    \
    X(IDS_E_LOOKUPS_OVERLOADED, 503, "overloaded", "OVERLOADED",                                   \
      "too many unknown tags looked up this second; retry shortly")                                \
    X(IDS_E_RANDOM_FAILED, 503, "random_failed", "RANDOM_FAILED",                                  \
      "the system's random source (getrandom) failed; see the node's log")                         \
    X(IDS_E_UNKNOWN_NUMBERING, 404, "unknown_numbering", "UNKNOWN_NUMBERING",                      \
      "no such numbering (create it with POST /api/numbering)")                                    \
    X(IDS_E_NUMBERING_EXHAUSTED, 503, "numbering_exhausted", "NUMBERING_EXHAUSTED",                \
      "the numbering's counter would pass its width in this period; it restarts with the next")    \
    X(IDS_E_NUMBERING_ZONE, 503, "time_zone_unavailable", "TIME_ZONE_UNAVAILABLE",                 \
      "the numbering's time zone has no readable tzdata file on this node; see its log")

enum ids_error {
#define IDS_ERROR_ENUM(e, status, code, resp, msg) e,
    IDS_ERRORS(IDS_ERROR_ENUM)
#undef IDS_ERROR_ENUM
        IDS_E_COUNT
};

struct ids_error_info {
    int http_status;
    const char *code;
    const char *resp; /* the RESP error's first word */
    const char *message;
};

const struct ids_error_info *door_ids_error(enum ids_error e);

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
    enum ids_error err;                  /* LEAF_ERR: why */
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
