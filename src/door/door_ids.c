#include "door_ids.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "door_ctx.h"
#include "log.h"
#include "metrics.h"
#include "sequence_keyed.h"
#include "snowflake_uuid.h"
#include "validate.h"

/*
 * A request waiting for the generator (clock a little behind, or every
 * millisecond up to the borrow limit used) gives up after this long.
 */
#define IDS_MAX_GEN_WAIT_MS 1000

/* The key rules of src/ids (libc only) are the rules of the rooms that keep the keys. */
_Static_assert(IDS_TAG_MAX == VALIDATE_TAG_MAX, "a tag's length, in src/ids and src/base");
_Static_assert(IDS_SPACE_MAX == SEQUENCE_KEYED_NAME_MAX,
               "a space's name, in src/ids and sequence/");
_Static_assert(IDS_SPACED_KEY_MAX == SEQUENCE_KEYED_KEY_MAX,
               "a key's length, in src/ids and sequence/");

/* A sequence request waits this long for a primary's write or an election, then 503/TRYAGAIN. */
#define IDS_MAX_SEQUENCE_WAIT_MS 1000
/* A home claimed on first use (docs/regions.md, "Homes"): the region thread answers within its
 * tick; the call looks again this often, this long at most. */
#define IDS_HOME_CLAIM_POLL_MS 20
#define IDS_HOME_CLAIM_WAIT_MS 3000

static enum door_error snowflake_error(leaf_status_t rc) {
    switch (rc) {
    case LEAF_ECLOCK: return IDS_E_CLOCK_BACKWARDS;
    case LEAF_EAGAIN: return IDS_E_OVERLOADED;
    case LEAF_ERANGE: return IDS_E_CLOCK_OUT_OF_RANGE;
    case LEAF_EINVAL: return IDS_E_BATCH_TOO_LARGE;
    default: return IDS_E_NOT_READY;
    }
}

static leaf_status_t issue_snowflake(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    if (!ctx->cfg->snowflake_enable) {
        c->err = IDS_E_SNOWFLAKE_DISABLED;
        return LEAF_ERR;
    }
    int64_t wait_ms = 0;
    leaf_status_t rc = snowflake_service_next(ctx->snowflake, ids, c->count, &wait_ms);
    if (rc == LEAF_OK) {
        return LEAF_OK;
    }
    if (rc == LEAF_EAGAIN && c->now_ms - c->first_seen_ms + wait_ms <= IDS_MAX_GEN_WAIT_MS) {
        c->retry_ms = wait_ms;
        return LEAF_EAGAIN;
    }
    c->err = snowflake_error(rc);
    return LEAF_ERR;
}

/*
 * The segment waiting policy: a request whose range (or tag lookup) is in
 * flight parks on its tag and is resumed when the tag changes (a range
 * installed, a lookup or fetch answered), or at the latest when
 * leafd.segment.wait.ms has passed since it arrived; then it is refused.
 */
static leaf_status_t issue_segment(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    if (!ctx->cfg->segment_enable) {
        c->err = IDS_E_SEGMENT_DISABLED;
        return LEAF_ERR;
    }
    if (c->dense && c->count > 1 && ctx->cfg->region_count > 1) {
        /* A region's IDs are one in every region.count (docs/regions.md, "Segment IDs"). */
        c->err = IDS_E_NOT_CONSECUTIVE;
        return LEAF_ERR;
    }
    int64_t left = ctx->cfg->segment_wait_ms - (c->now_ms - c->first_seen_ms);
    leaf_status_t rc = segment_service_get(ctx->segment, c->key, c->key_len, c->count, c->dense,
                                           ids, c->first_seen_ms, left > 0 ? c->wait : NULL);
    if (rc == LEAF_OK) {
        return LEAF_OK;
    }
    if (rc == LEAF_EAGAIN && left > 0) {
        c->retry_ms = left; /* woken sooner when the tag changes */
        return LEAF_EAGAIN;
    }
    leaf_wait_cancel(c->wait);
    c->err = rc == LEAF_ENOTFOUND ? IDS_E_UNKNOWN_TAG
             : rc == LEAF_ENOMEM  ? IDS_E_TOO_MANY_TAGS
             : rc == LEAF_EBUSY   ? IDS_E_LOOKUPS_OVERLOADED
             : rc == LEAF_ERANGE  ? IDS_E_SEGMENT_EXHAUSTED
                                  : IDS_E_DATABASE_UNAVAILABLE;
    return LEAF_ERR;
}

/* The outcome of a sequence call other than LEAF_OK (shared by next and last). */
static leaf_status_t sequence_outcome(struct ids_call *c, leaf_status_t rc) {
    int64_t left = IDS_MAX_SEQUENCE_WAIT_MS - (c->now_ms - c->first_seen_ms);
    if (rc == LEAF_EAGAIN && left > 0) {
        c->retry_ms = left; /* woken sooner by the sequence's next change */
        return LEAF_EAGAIN;
    }
    leaf_wait_cancel(c->wait);
    switch (rc) {
    case LEAF_EUNAVAIL: c->err = c->primary.known ? IDS_E_NOT_PRIMARY : IDS_E_NO_PRIMARY; break;
    case LEAF_EAGAIN: c->err = IDS_E_NO_PRIMARY; break;
    case LEAF_ENOTFOUND: c->err = IDS_E_UNKNOWN_SEQUENCE; break;
    case LEAF_ERANGE: c->err = IDS_E_SEQUENCE_EXHAUSTED; break;
    default: c->err = IDS_E_OUT_OF_MEMORY; break;
    }
    return LEAF_ERR;
}

/* A sequence is a ZooKeeper node: . and .. are refused here, not by ZooKeeper (a 503). */
static int sequence_name_ok(struct ids_call *c) {
    if (!validate_sequence_name(c->key, c->key_len)) {
        c->err = IDS_E_BAD_SEQUENCE_NAME;
        return 0;
    }
    return 1;
}

/* count consecutive IDs from first into ids: the highest alone when c is dense. */
static void ids_consecutive(const struct ids_call *c, int64_t first, int64_t *ids) {
    if (c->dense) {
        ids[0] = first + c->count - 1;
    } else {
        for (int i = 0; i < c->count; i++) {
            ids[i] = first + i;
        }
    }
}

/*
 * Where a sequence, keyed space or numbering (kind k, name) is issued with
 * several regions (docs/regions.md, "Homes"): LEAF_OK here; LEAF_ERR with the
 * 307 to the home region (IDS_E_NOT_PRIMARY, c->primary its peer) or 503
 * home_region_unreachable; LEAF_EAGAIN while the registry answers a claim, which
 * only a call that may create asks for (claim). The registry is never waited on: the
 * region thread reads and claims, this reads its table.
 */
/* A first use that creates (leafd.sequence.autocreate, the caller's create right) claims a home. */
static int home_claim(const struct door_ctx *ctx, const struct ids_call *c) {
    return c->may_create && ctx->cfg->sequence_autocreate;
}

static leaf_status_t issue_home(const struct door_ctx *ctx, struct ids_call *c,
                                enum zk_region_kind k, const char *name, size_t len, int claim) {
    if (ctx->cfg->region_count <= 1) {
        return LEAF_OK;
    }
    struct region_service_home home;
    enum region_service_where w = region_service_home(ctx->region, k, name, len, claim, &home);
    int64_t left = IDS_HOME_CLAIM_WAIT_MS - (c->now_ms - c->first_seen_ms);
    if (w == REGION_HOME_HERE) {
        return LEAF_OK;
    }
    if (w == REGION_HOME_PENDING && left > 0) {
        c->retry_ms = left < IDS_HOME_CLAIM_POLL_MS ? left : IDS_HOME_CLAIM_POLL_MS;
        return LEAF_EAGAIN;
    }
    leaf_wait_cancel(c->wait);
    if (w == REGION_HOME_AWAY) {
        c->primary.known = 1;
        snprintf(c->primary.http, sizeof(c->primary.http), "%s", home.http);
        snprintf(c->primary.resp, sizeof(c->primary.resp), "%s", home.resp);
        c->err = IDS_E_NOT_PRIMARY;
    } else {
        snprintf(c->home, sizeof(c->home), "%s", home.region);
        c->err = IDS_E_HOME_REGION_UNREACHABLE;
    }
    return LEAF_ERR;
}

static leaf_status_t issue_sequence(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    if (!sequence_service_enabled(ctx->sequence)) {
        c->err = IDS_E_SEQUENCE_DISABLED;
        return LEAF_ERR;
    }
    if (!sequence_name_ok(c)) {
        return LEAF_ERR;
    }
    leaf_status_t home =
        issue_home(ctx, c, ZK_REGION_SEQUENCE, c->key, c->key_len, home_claim(ctx, c));
    if (home != LEAF_OK) {
        return home;
    }
    int64_t first = 0;
    leaf_status_t rc = sequence_service_next(ctx->sequence, c->key, c->key_len, c->count, &first,
                                             c->may_create, c->wait, &c->primary);
    if (rc != LEAF_OK) {
        return sequence_outcome(c, rc);
    }
    ids_consecutive(c, first, ids);
    return LEAF_OK;
}

/*
 * Keyed sequences (docs/keyed-sequences.md): the key is "<space>:<key>" (ids_mode_key_ok has
 * checked it), dense like a sequence's, issued by the key's owner.
 */
static leaf_status_t issue_keyed(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    if (!sequence_service_enabled(ctx->sequence)) {
        c->err = IDS_E_SEQUENCE_DISABLED;
        return LEAF_ERR;
    }
    const char *colon = memchr(c->key, ':', c->key_len);
    if (colon == NULL) {
        c->err = IDS_E_BAD_KEYED_KEY;
        return LEAF_ERR;
    }
    size_t space_len = (size_t)(colon - c->key);
    leaf_status_t home = issue_home(ctx, c, ZK_REGION_KEYED, c->key, space_len, home_claim(ctx, c));
    if (home != LEAF_OK) {
        return home;
    }
    int64_t first = 0;
    leaf_status_t rc = sequence_service_keyed_next(ctx->sequence, c->key, space_len, colon + 1,
                                                   c->key_len - space_len - 1, c->count,
                                                   c->may_create, &first, c->wait, &c->primary);
    if (rc == LEAF_ENOTFOUND) {
        leaf_wait_cancel(c->wait);
        c->err = IDS_E_NO_SUCH_SPACE;
        return LEAF_ERR;
    }
    if (rc != LEAF_OK) {
        return sequence_outcome(c, rc);
    }
    ids_consecutive(c, first, ids);
    return LEAF_OK;
}

/* Keyed sequences get ready for an issue of "<space>:<key>" by prefetching the key's place in
 * their table (sequence_service_keyed_prefetch); any key is taken, a bad one finds nothing. */
static void prepare_keyed(const struct door_ctx *ctx, const char *key, size_t len) {
    const char *colon = memchr(key, ':', len);
    if (colon != NULL) {
        size_t space_len = (size_t)(colon - key);
        sequence_service_keyed_prefetch(ctx->sequence, key, space_len, colon + 1,
                                        len - space_len - 1);
    }
}

leaf_status_t door_ids_last(const struct door_ctx *ctx, struct ids_call *c, int64_t *last) {
    c->retry_ms = 0;
    c->err = IDS_E_NONE;
    if (!sequence_service_enabled(ctx->sequence)) {
        c->err = IDS_E_SEQUENCE_DISABLED;
        return LEAF_ERR;
    }
    if (!sequence_name_ok(c)) {
        return LEAF_ERR;
    }
    leaf_status_t rc = issue_home(ctx, c, ZK_REGION_SEQUENCE, c->key, c->key_len, 0);
    if (rc != LEAF_OK) {
        return rc;
    }
    rc = sequence_service_last(ctx->sequence, c->key, c->key_len, last, c->wait, &c->primary);
    return rc == LEAF_OK ? LEAF_OK : sequence_outcome(c, rc);
}

const char *door_ids_error_text(const struct ids_call *c, char *buf, size_t cap) {
    if (c->err == IDS_E_HOME_REGION_UNREACHABLE && c->home[0] != '\0') {
        snprintf(buf, cap,
                 "homed in region %s, which this region cannot reach now (leafd.region.peers); "
                 "retry shortly",
                 c->home);
        return buf;
    }
    const char *colon = c->key != NULL ? memchr(c->key, ':', c->key_len) : NULL;
    if (c->err != IDS_E_NO_SUCH_SPACE || colon == NULL) {
        return NULL;
    }
    snprintf(buf, cap,
             "no such keyed space '%.*s' (create it with POST /api/keyed, or on first use with "
             "leafd.sequence.autocreate)",
             (int)(colon - c->key), c->key);
    return buf;
}

enum door_error door_ids_key_error(enum ids_mode mode) {
    const struct ids_mode_info *m = ids_mode_info(mode);
    return m != NULL && m->rule == IDS_KEY_SPACED ? IDS_E_BAD_KEYED_KEY : IDS_E_BAD_TAG;
}

/* The event loop's own cipher context (one per loop: OpenSSL contexts are not shared). */
struct segment_opaque *door_ids_opaque(const struct door_ctx *ctx, int loop) {
    return ctx->opaque != NULL && loop >= 0 && loop < ctx->opaque_loops ? &ctx->opaque[loop] : NULL;
}

/* Segment IDs of the tag, then the keyed permutation, in place. */
static leaf_status_t issue_opaque(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    struct segment_opaque *o = door_ids_opaque(ctx, c->loop);
    if (o == NULL) {
        c->err = IDS_E_OPAQUE_DISABLED;
        return LEAF_ERR;
    }
    c->dense = 0;
    leaf_status_t rc = issue_segment(ctx, c, ids);
    if (rc != LEAF_OK) {
        return rc;
    }
    if (segment_opaque_encrypt_tag(o, c->key, c->key_len, ids, ids, c->count) != LEAF_OK) {
        log_error("api", "the opaque ID cipher failed for tag '%.*s'", (int)c->key_len, c->key);
        c->err = IDS_E_OPAQUE_FAILED;
        return LEAF_ERR;
    }
    return LEAF_OK;
}

/* Fills r[0..n) from getrandom(2), in as many calls as it takes. LEAF_OK or LEAF_ERR. */
static leaf_status_t uuid_random(uint64_t *r, int n) {
    size_t want = (size_t)n * sizeof(*r), got = 0;
    while (got < want) {
        ssize_t k = getrandom((char *)r + got, want - got, 0);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            log_error("uuid", "getrandom(%zu bytes) failed: %s", want - got,
                      k < 0 ? strerror(errno) : "no bytes");
            return LEAF_ERR;
        }
        got += (size_t)k;
    }
    return LEAF_OK;
}

#define UUID_RANDOM_CHUNK 64 /* random words drawn per getrandom call */

/* The UUIDv7 text of n snowflake IDs (IDS_UUID). */
static leaf_status_t text_uuid(const struct door_ctx *ctx, const struct ids_call *c,
                               const int64_t *ids, int n, char *text, size_t *lens) {
    (void)c;
    const struct snowflake_layout *l = snowflake_service_layout(ctx->snowflake);
    uint64_t r[UUID_RANDOM_CHUNK] = {0};
    for (int i = 0; i < n; i++) {
        if (i % UUID_RANDOM_CHUNK == 0 &&
            uuid_random(r, n - i < UUID_RANDOM_CHUNK ? n - i : UUID_RANDOM_CHUNK) != LEAF_OK) {
            return LEAF_ERR;
        }
        uint8_t u[16];
        char one[SNOWFLAKE_UUID_TEXT + 1];
        /* An ID this node's generator issued always fits its layout. */
        if (snowflake_uuid_from_id(l, ctx->cfg->epoch, ids[i], r[i % UUID_RANDOM_CHUNK], u) !=
            LEAF_OK) {
            log_error("uuid", "snowflake ID %lld does not fit the layout", (long long)ids[i]);
            return LEAF_ERR;
        }
        snowflake_uuid_format(u, one);
        memcpy(text + (size_t)i * DOOR_IDS_TEXT_MAX, one, SNOWFLAKE_UUID_TEXT);
        lens[i] = SNOWFLAKE_UUID_TEXT;
    }
    return LEAF_OK;
}

_Static_assert(SEQUENCE_NUMBERING_TEXT_MAX <= DOOR_IDS_TEXT_MAX, "room for a business number");

/* The business numbers of n IDs of c's numbering (IDS_NUMBER), in the period it was issued in. */
static leaf_status_t text_number(const struct door_ctx *ctx, const struct ids_call *c,
                                 const int64_t *ids, int n, char *text, size_t *lens) {
    (void)ctx;
    for (int i = 0; i < n; i++) {
        char one[SEQUENCE_NUMBERING_TEXT_MAX];
        lens[i] = sequence_numbering_format(&c->numbering, ids[i], c->day, one);
        memcpy(text + (size_t)i * DOOR_IDS_TEXT_MAX, one, lens[i]);
    }
    return LEAF_OK;
}

/*
 * Business numbers: the numbering's definition (a read of the table when the name is not
 * known yet), the period by this node's wall clock in its time zone, then its sequence on the
 * primary (a standby redirects, as for sequences: the primary's clock decides the period).
 */
static leaf_status_t issue_number(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    if (!sequence_service_enabled(ctx->sequence)) {
        c->err = IDS_E_SEQUENCE_DISABLED;
        return LEAF_ERR;
    }
    if (!sequence_name_ok(c)) {
        return LEAF_ERR;
    }
    leaf_status_t rc = issue_home(ctx, c, ZK_REGION_NUMBERING, c->key, c->key_len, 0);
    if (rc != LEAF_OK) {
        return rc;
    }
    rc = sequence_service_numbering_find(ctx->sequence, c->key, c->key_len, c->first_seen_ms,
                                         &c->numbering, c->wait);
    if (rc == LEAF_ENOTFOUND) {
        c->err = IDS_E_UNKNOWN_NUMBERING;
        return LEAF_ERR;
    }
    if (rc != LEAF_OK) {
        return sequence_outcome(c, rc);
    }
    int64_t period, first = 0;
    if (sequence_service_numbering_period(ctx->sequence, &c->numbering, clock_wall_ms(), &period,
                                          &c->day) != LEAF_OK) {
        c->err = IDS_E_NUMBERING_ZONE;
        return LEAF_ERR;
    }
    rc = sequence_service_number(ctx->sequence, &c->numbering, period, c->count, &first, c->wait,
                                 &c->primary);
    if (rc == LEAF_ERANGE) {
        leaf_wait_cancel(c->wait);
        c->err = IDS_E_NUMBERING_EXHAUSTED;
        return LEAF_ERR;
    }
    if (rc != LEAF_OK) {
        return sequence_outcome(c, rc);
    }
    for (int i = 0; i < c->count; i++) {
        ids[i] = first + i;
    }
    return LEAF_OK;
}

/* How each mode issues, writes its text and gets ready: the last three columns of its row
 * (IDS_MODES). A mode whose row names no function of this file does not compile. */
typedef leaf_status_t (*ids_issue_fn)(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids);
typedef leaf_status_t (*ids_text_fn)(const struct door_ctx *ctx, const struct ids_call *c,
                                     const int64_t *ids, int n, char *text, size_t *lens);
typedef void (*ids_prepare_fn)(const struct door_ctx *ctx, const char *key, size_t len);

static const struct {
    ids_issue_fn issue;
    ids_text_fn text;       /* NULL: an integer mode */
    ids_prepare_fn prepare; /* NULL: nothing to get ready */
} ids_mode_fns[IDS_MODE_COUNT] = {
#define IDS_MODE_FNS(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text,   \
                     prepare)                                                                      \
    [e] = {issue, text, prepare},
    IDS_MODES(IDS_MODE_FNS)
#undef IDS_MODE_FNS
};

int door_ids_prepare(const struct door_ctx *ctx, enum ids_mode mode, const char *key, size_t len) {
    if ((int)mode < 0 || mode >= IDS_MODE_COUNT || ids_mode_fns[mode].prepare == NULL) {
        return 0;
    }
    ids_mode_fns[mode].prepare(ctx, key, len);
    return 1;
}

/* An enum ids_mode out of the table is refused, never issued as some other mode. */
static int mode_known(const struct ids_call *c) {
    if ((int)c->mode >= 0 && c->mode < IDS_MODE_COUNT) {
        return 1;
    }
    log_error("ids", "issue: mode %d is no row of IDS_MODES", (int)c->mode);
    return 0;
}

/* Room for count IDs: the stack buffer (IDS_STACK) when it is big enough, else the heap (free
 * with ids_free). NULL when out of memory. */
static int64_t *ids_alloc(int64_t *stack, int count) {
    return count <= IDS_STACK ? stack : malloc((size_t)count * sizeof(int64_t));
}

static void ids_free(int64_t *stack, int64_t *ids) {
    if (ids != stack) {
        free(ids);
    }
}

/* The text of r's IDs, by the mode's text function: LEAF_OK, or LEAF_ERR with c->err set. */
static leaf_status_t reply_texts(const struct door_ctx *ctx, struct ids_call *c,
                                 struct ids_reply *r) {
    int n = r->count;
    r->texts = n <= IDS_STACK ? r->texts_stack : malloc((size_t)n * DOOR_IDS_TEXT_MAX);
    r->lens = n <= IDS_STACK ? r->lens_stack : malloc((size_t)n * sizeof(*r->lens));
    if (r->texts == NULL || r->lens == NULL) {
        c->err = IDS_E_OUT_OF_MEMORY;
        return LEAF_ERR;
    }
    ids_text_fn text = ids_mode_fns[c->mode].text;
    if (text == NULL) {
        /* A row with a text command must name its text function (IDS_MODES). */
        log_error("ids", "mode %s answers text but its row names no text function",
                  ids_mode_name(c->mode));
    }
    if (text == NULL || text(ctx, c, r->ids, n, r->texts, r->lens) != LEAF_OK) {
        c->err = IDS_E_RANDOM_FAILED;
        return LEAF_ERR;
    }
    r->text = 1;
    return LEAF_OK;
}

leaf_status_t door_ids_issue_reply(const struct door_ctx *ctx, struct ids_call *c,
                                   struct ids_reply *r) {
    r->count = c->count;
    r->text = 0;
    r->texts = NULL;
    r->lens = NULL;
    r->ids = ids_alloc(r->ids_stack, c->count);
    if (r->ids == NULL) {
        c->err = IDS_E_OUT_OF_MEMORY;
        return LEAF_ERR;
    }
    leaf_status_t rc = door_ids_issue(ctx, c, r->ids);
    if (rc != LEAF_OK || !ids_mode_info(c->mode)->text) {
        return rc;
    }
    return reply_texts(ctx, c, r);
}

const char *door_ids_reply_text(const struct ids_reply *r, int i, size_t *len) {
    if (!r->text) {
        return NULL;
    }
    *len = r->lens[i];
    return r->texts + (size_t)i * DOOR_IDS_TEXT_MAX;
}

void door_ids_reply_free(struct ids_reply *r) {
    if (r->ids != NULL) {
        ids_free(r->ids_stack, r->ids);
    }
    if (r->texts != r->texts_stack) {
        free(r->texts);
    }
    if (r->lens != r->lens_stack) {
        free(r->lens);
    }
    r->ids = NULL;
    r->texts = NULL;
    r->lens = NULL;
}

leaf_status_t door_ids_issue(const struct door_ctx *ctx, struct ids_call *c, int64_t *ids) {
    c->retry_ms = 0;
    c->err = IDS_E_NONE;
    if (!mode_known(c)) {
        c->err = IDS_E_NOT_READY;
        return LEAF_ERR;
    }
    if (!region_service_ready(ctx->region)) {
        /* One atomic read: the registry is never waited on here (docs/regions.md). */
        c->err = IDS_E_REGION_UNCLAIMED;
        return LEAF_ERR;
    }
    leaf_status_t rc = ids_mode_fns[c->mode].issue(ctx, c, ids);
    if (rc == LEAF_OK) {
        metrics_count_ids(ctx->metrics, c->loop, c->mode, c->count);
    }
    return rc;
}
