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
#include "leaf_wait.h"
#include "segment_opaque.h"
#include "sequence_service.h"
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
    int may_create; /* sequences, keyed spaces: an unknown one may be created
                     * (leafd.sequence.autocreate) by this caller: it holds the 'create' right
                     * (always 1 with auth off) */
    /* outputs */
    struct sequence_numbering numbering; /* IDS_NUMBER: the definition the numbers follow */
    int64_t day;                         /* IDS_NUMBER: the primary's local day when issued */
    int64_t retry_ms;                    /* LEAF_EAGAIN: resume at the latest after this long */
    enum door_error err;                 /* LEAF_ERR: why (IDS_ERRORS) */
    struct sequence_where primary;       /* IDS_E_NOT_PRIMARY: where to ask */
    char home[64]; /* IDS_E_HOME_REGION_UNREACHABLE: the home region ("" when none is known) */
};

/*
 * Issues c->count IDs into ids (room for count, or 1 when dense).
 * Sequences are dense by nature: count consecutive IDs (ids[0] = the highest
 * when dense). GET's "last issued" is door_ids_last().
 * LEAF_OK; LEAF_EAGAIN: parked (c->retry_ms set, c->wait registered where
 * the answer comes from); LEAF_ERR: refused, c->err says why. The key must
 * already be valid (ids_mode_key_ok) and count within 1..10000.
 */
leaf_status_t door_ids_issue(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids);

/* The words of a refused call's error where they name more than its row (c->err
 * IDS_E_NO_SUCH_SPACE: the space), written into buf; NULL: the row's own. */
const char *door_ids_error_text(const struct ids_call *c, char *buf, size_t cap);

/* The error a key that breaks mode's key rule gets (ids_mode_key_ok): BAD_TAG's rows. */
enum door_error door_ids_key_error(enum ids_mode mode);

/* The event loop's opaque cipher; NULL when leafd.opaque.key is empty. */
struct segment_opaque *door_ids_opaque(const struct door_ctx *ctx, int loop);

/* The IDs a reply holds inside (struct ids_reply), without the heap. */
#define IDS_STACK 16

/*
 * IDs ready for a reply, as door_ids_issue_reply() leaves them: count integers, or for a text
 * mode (IDS_MODES' text command) count texts, UUIDv7s (snowflake/snowflake_uuid.h; the random
 * bits from getrandom(2)) or business numbers (sequence/sequence_numbering.h). Each protocol
 * writes them one way: door_ids_reply_text() says what the i-th is. Room for IDS_STACK IDs is
 * inside, more is taken from the heap. Owned by the handler that made it, on its loop thread;
 * door_ids_reply_free() releases it whatever the outcome.
 */
#define DOOR_IDS_TEXT_MAX 64
struct ids_reply {
    int count;
    int text;     /* 1: the IDs are answered as texts */
    int64_t *ids; /* count IDs; for a text mode, those the texts were made from */
    char *texts;  /* text: the i-th is texts + i * DOOR_IDS_TEXT_MAX, lens[i] bytes, no NUL */
    size_t *lens;
    int64_t ids_stack[IDS_STACK];
    char texts_stack[IDS_STACK * DOOR_IDS_TEXT_MAX];
    size_t lens_stack[IDS_STACK];
};

/*
 * Gets ready to issue for key[0..len) of mode soon (a pipelined command not yet dispatched):
 * 1 when the mode has something to prepare and did (keyed sequences load the key's place in
 * their table into the cache, docs/keyed-sequences.md, "In the service"), else 0. Changes
 * nothing that an issue could see; the key need not have been checked.
 */
int door_ids_prepare(const struct door_ctx *ctx, enum ids_mode mode, const char *key, size_t len);

/*
 * Issues c->count IDs into r (as door_ids_issue(), c->dense must be 0), then, for a text mode,
 * writes their text. LEAF_OK; LEAF_EAGAIN (parked, as door_ids_issue()); LEAF_ERR with c->err
 * set, IDS_E_OUT_OF_MEMORY or IDS_E_RANDOM_FAILED (logged here) among the reasons.
 */
leaf_status_t door_ids_issue_reply(const struct door_ctx *ctx, struct ids_call *c,
                                   struct ids_reply *r);

/* The i-th ID's text (its length in *len) when r holds texts, else NULL. */
const char *door_ids_reply_text(const struct ids_reply *r, int i, size_t *len);

void door_ids_reply_free(struct ids_reply *r);

/* The last ID issued of a sequence (c->count unused); 0 when none yet. As door_ids_issue(). */
leaf_status_t door_ids_last(const struct door_ctx *ctx, struct ids_call *c, int64_t *last);

#endif
