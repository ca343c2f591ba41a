/*
 * The ID commands of the Redis protocol (INCR, INCRBY, LEAF.IDS, GET, and
 * LEAF.UUID, whose key is bare): a key
 * names its mode ("<mode name>:<key>", the key spaces of IDS_MODES), and the
 * IDs come from src/door/door_ids.c, as for the HTTP handlers. Runs on the loop thread.
 */
#include "command_ids.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "command_auth.h"
#include "command_client.h"
#include "command_outcome.h"
#include "door_ctx.h"
#include "door_ids.h"
#include "sequence_keyslot.h"
#include "validate.h"

/* ---- keys: the namespace names the mode ------------------------------------- */

/* A key argument: "<mode name>:<key>" (IDS_MODES), the key following the tag rule. */
struct key_ref {
    enum ids_mode mode;
    const char *name;
    size_t len;
};

/* The BAD_KEY reply lists the key spaces: "snowflake:<key>, ... or opaque:<biz_tag>". */
static leaf_status_t reply_bad_key(struct resp_request *req) {
    char list[256];
    size_t n = 0;
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        const struct ids_mode_info *info = ids_mode_info((enum ids_mode)m);
        const char *sep = m == 0 ? "" : m + 1 < IDS_MODE_COUNT ? ", " : " or ";
        int w =
            snprintf(list + n, sizeof(list) - n, "%s%s<%s>", sep, info->key_prefix, info->key_word);
        n = w > 0 && (size_t)w < sizeof(list) - n ? n + (size_t)w : n;
    }
    return command_outcome_error(req, RESP_O_BAD_KEY, "BAD_KEY the key names the mode: %s", list);
}

/* The mode a key's prefix names ("<mode name>:", IDS_MODES) and the key after it: 1, or 0 when
 * no prefix matches. */
static int key_split(const char *a, size_t n, struct key_ref *k) {
    for (int m = 0; m < IDS_MODE_COUNT; m++) {
        const struct ids_mode_info *info = ids_mode_info((enum ids_mode)m);
        if (n >= info->key_prefix_len && memcmp(a, info->key_prefix, info->key_prefix_len) == 0) {
            *k = (struct key_ref){(enum ids_mode)m, a + info->key_prefix_len,
                                  n - info->key_prefix_len};
            return 1;
        }
    }
    return 0;
}

/* Reads argument i as a key; on failure the error reply is written and 0 returned. */
static int key_parse(struct resp_request *req, int i, struct key_ref *k) {
    const char *a = req->cmd.argv[i];
    size_t n = req->cmd.argvlen[i];
    if (key_split(a, n, k)) {
        const struct ids_mode_info *info = ids_mode_info(k->mode);
        if (!ids_mode_key_ok(k->mode, k->name, k->len)) {
            char msg[192];
            snprintf(msg, sizeof(msg), "the part after '%s' must be %s", info->key_prefix,
                     ids_mode_key_rule_text(k->mode));
            command_outcome_ids_error(req, door_ids_key_error(k->mode), msg);
            return 0;
        }
        return 1;
    }
    /* leafd.resp.default.mode: a key with no mode prefix is in that mode (March's INCR orders). */
    int def = ((const struct door_ctx *)req->ctx)->cfg->resp_default_mode;
    if (def > 0) {
        *k = (struct key_ref){(enum ids_mode)(def - 1), a, n};
        if (!ids_mode_key_ok(k->mode, a, n)) {
            char msg[192];
            snprintf(msg, sizeof(msg), "a key must be %s", ids_mode_key_rule_text(k->mode));
            command_outcome_ids_error(req, door_ids_key_error(k->mode), msg);
            return 0;
        }
        return 1;
    }
    reply_bad_key(req);
    return 0;
}

/* Reads argument i as a key of mode bare - 1 without a prefix (LEAF.UUID's), or as key_parse()
 * when bare is 0; on failure the error reply is written and 0 returned. */
static int key_parse_bare(struct resp_request *req, int i, int bare, struct key_ref *k) {
    if (bare == 0) {
        return key_parse(req, i, k);
    }
    *k = (struct key_ref){(enum ids_mode)(bare - 1), req->cmd.argv[i], req->cmd.argvlen[i]};
    if (!ids_mode_key_ok(k->mode, k->name, k->len)) {
        command_outcome_ids_error(req, door_ids_key_error(k->mode), NULL);
        return 0;
    }
    return 1;
}

/* A key of a text mode (UUIDs) has no integer answer: 1 when k's IDs are integers, else the
 * WRONG_MODE reply is written. */
static int integer_mode(struct resp_request *req, const struct key_ref *k) {
    if (!ids_mode_info(k->mode)->text) {
        return 1;
    }
    command_outcome_error(req, RESP_O_WRONG_MODE,
                          "WRONG_MODE %s IDs are strings, not integers: %s <key> [count]",
                          ids_mode_name(k->mode), ids_mode_info(k->mode)->text_command);
    return 0;
}

/* Reads argument i as a count of IDs (1..10000); on failure replies and returns 0. */
static int count_parse(struct resp_request *req, int i, int *count) {
    if (validate_count(req->cmd.argv[i], req->cmd.argvlen[i], count) != LEAF_OK) {
        command_outcome_ids_error(req, IDS_E_BAD_COUNT, NULL);
        return 0;
    }
    return 1;
}

static leaf_status_t issue_outcome(struct resp_request *req, const struct key_ref *k,
                                   const struct ids_call *c, leaf_status_t rc);

/* -TRYAGAIN's words: more than no_primary's row says, since RESP has no Retry-After. */
#define TRYAGAIN_WHY "no sequence primary can issue now (an election or a handover)"

/* The call for count IDs of key (dense: a block, ids[0] the highest), from this request. */
static void call_init(struct resp_request *req, const struct key_ref *k, int count, int dense,
                      struct ids_call *c) {
    *c = (struct ids_call){
        .mode = k->mode,
        .key = k->name,
        .key_len = k->len,
        .count = count,
        .dense = dense,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = req->now_ms,
        .wait = req->wait,
        /* Autocreate needs the 'create' right, as POST /api/sequence does (docs/SECURITY.md). */
        .may_create = (k->mode == IDS_SEQUENCE || k->mode == IDS_KEYED) &&
                      command_auth_may(req, AUTH_NEED_CREATE, k->mode, k->name, k->len),
    };
}

/*
 * Issues IDs for key into ids. LEAF_OK (ids filled), LEAF_EAGAIN (parked), or LEAF_ERR with the
 * error reply written.
 */
static leaf_status_t issue(struct resp_request *req, const struct key_ref *k, int count, int dense,
                           int64_t *ids) {
    struct ids_call c;
    call_init(req, k, count, dense, &c);
    return issue_outcome(req, k, &c, door_ids_issue((const struct door_ctx *)req->ctx, &c, ids));
}

/* Issues count IDs for key into r, reply-ready (integers or texts). As issue(). */
static leaf_status_t issue_reply(struct resp_request *req, const struct key_ref *k, int count,
                                 struct ids_reply *r) {
    struct ids_call c;
    call_init(req, k, count, 0, &c);
    return issue_outcome(req, k, &c,
                         door_ids_issue_reply((const struct door_ctx *)req->ctx, &c, r));
}

/* RESP's one writer of issued IDs: integers or bulk strings, as an array when many. */
static void reply_ids(struct resp_request *req, const struct ids_reply *r, int many) {
    if (many) {
        resp_reply_array(req->out, (size_t)r->count);
    }
    for (int i = 0; i < r->count; i++) {
        size_t len;
        const char *text = door_ids_reply_text(r, i, &len);
        if (text != NULL) {
            resp_reply_bulk(req->out, text, len);
        } else {
            resp_reply_int(req->out, r->ids[i]);
        }
    }
}

/* Answers a refused ID call: -MOVED and -TRYAGAIN as Redis Cluster, else -CODE message. */
static leaf_status_t issue_outcome(struct resp_request *req, const struct key_ref *k,
                                   const struct ids_call *c, leaf_status_t rc) {
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = c->retry_ms;
    } else if (rc != LEAF_OK && c->err == IDS_E_NOT_PRIMARY && c->primary.resp[0] != '\0') {
        command_outcome_error(req, RESP_O_IDS + (int)c->err, "%s %u %s", door_error(c->err)->resp,
                              sequence_keyslot(req->cmd.argv[1], req->cmd.argvlen[1]),
                              c->primary.resp);
    } else if (rc != LEAF_OK && c->err == IDS_E_NOT_PRIMARY) {
        /* A standby with no RESP address for the primary: Redis Cluster's -TRYAGAIN, as for
         * no primary, counted under not_primary. */
        command_outcome_error(req, RESP_O_IDS + (int)c->err, "%s %s",
                              door_error(IDS_E_NO_PRIMARY)->resp, TRYAGAIN_WHY);
    } else if (rc != LEAF_OK) {
        char text[160];
        const char *why = door_ids_error_text(c, text, sizeof(text));
        command_outcome_ids_error(req, c->err, c->err == IDS_E_NO_PRIMARY ? TRYAGAIN_WHY : why);
    }
    (void)k;
    return rc;
}

/* The next ID taken ahead for this very command (command_client.h, struct command_stash), or 0. */
static int stash_take(struct resp_request *req, int64_t *id) {
    struct command_stash *st =
        req->client->app != NULL ? &((struct command_client *)req->client->app)->stash : NULL;
    if (st == NULL || req->raw == NULL || req->raw != st->next_raw ||
        req->read_seq != st->read_seq || st->next >= st->n) {
        return 0;
    }
    *id = st->ids[st->next++];
    st->next_raw += req->raw_len;
    return 1;
}

/*
 * An INCR of a batching mode (IDS_MODES' batch column: snowflake, segment,
 * opaque) with identical INCRs pipelined behind it takes their IDs too, in
 * one call; 0 when there are none or the batch is refused (then the command
 * takes its one ID as usual). A segment batch is all or nothing and need not
 * be consecutive (dense 0), so it never skips the rest of a range.
 */
static int stash_fill(struct resp_request *req, const struct key_ref *k, int64_t *id) {
    int more = ids_mode_info(k->mode)->batch && req->client->app != NULL
                   ? resp_request_repeats(req, RESP_STASH_MAX - 1)
                   : 0;
    if (more == 0) {
        return 0;
    }
    struct command_stash *st = &((struct command_client *)req->client->app)->stash;
    int64_t ids[RESP_STASH_MAX];
    struct ids_call c = {
        .mode = k->mode,
        .key = k->name,
        .key_len = k->len,
        .count = more + 1,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = req->now_ms,
    };
    if (door_ids_issue((const struct door_ctx *)req->ctx, &c, ids) != LEAF_OK) {
        return 0;
    }
    *id = ids[0];
    memcpy(st->ids, ids + 1, (size_t)more * sizeof(ids[0]));
    st->n = more;
    st->next = 0;
    st->read_seq = req->read_seq;
    st->next_raw = req->raw + req->raw_len;
    return 1;
}

#define AHEAD_MAX 16 /* pipelined commands made ready at once */

/*
 * When this command's mode gets ready for an issue (door_ids_prepare: a keyed
 * sequence loads its key's place in its table into the cache), the keys of
 * the INCR and INCRBY commands pipelined behind it in the same read are made
 * ready too, before their turn, so their loads from memory run together
 * instead of one after the other (docs/keyed-sequences.md, "In the service").
 * Once per AHEAD_MAX commands: those it covered do not look again. A hint
 * only: each command is still parsed, checked and issued on its turn.
 */
static void ahead_prepare(struct resp_request *req, const struct key_ref *k) {
    struct command_ahead *a =
        req->client->app != NULL ? &((struct command_client *)req->client->app)->ahead : NULL;
    const struct door_ctx *ctx = req->ctx;
    if (a == NULL || req->raw == NULL || (a->read_seq == req->read_seq && req->raw < a->until)) {
        return;
    }
    a->read_seq = req->read_seq;
    a->until = req->raw + req->raw_len;
    if (!door_ids_prepare(ctx, k->mode, k->name, k->len)) {
        return;
    }
    size_t off = 0;
    for (int i = 0; i < AHEAD_MAX - 1; i++) {
        const char *argv[3];
        size_t argvlen[3];
        struct resp_cmd cmd = {0, argv, argvlen};
        struct key_ref next;
        size_t used = resp_peek(req->rest + off, req->rest_len - off, argv, argvlen, 3, &cmd.argc);
        if (used == 0 || cmd.argc < 2 ||
            !(resp_arg_is(&cmd, 0, "incr") || resp_arg_is(&cmd, 0, "incrby"))) {
            break;
        }
        off += used;
        if (key_split(argv[1], argvlen[1], &next)) {
            (void)door_ids_prepare(ctx, next.mode, next.name, next.len);
        }
    }
    a->until = req->rest + off;
}

/* One ID of the key, answered as an integer: INCR, and INCRBY key 1. */
static leaf_status_t incr_one(struct resp_request *req, const struct key_ref *k) {
    int64_t id;
    if (stash_take(req, &id) || stash_fill(req, k, &id)) {
        resp_reply_int(req->out, id);
        return LEAF_OK;
    }
    ahead_prepare(req, k);
    leaf_status_t rc = issue(req, k, 1, 0, &id);
    if (rc == LEAF_OK) {
        resp_reply_int(req->out, id);
    }
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* INCR key: one ID. */
leaf_status_t command_ids_incr(struct resp_request *req) {
    struct key_ref k;
    if (!key_parse(req, 1, &k) || !integer_mode(req, &k)) {
        return LEAF_OK;
    }
    return incr_one(req, &k);
}

/* INCRBY key n: the last of n consecutive IDs (dense modes only). */
leaf_status_t command_ids_incrby(struct resp_request *req) {
    struct key_ref k;
    int count;
    int64_t last;
    if (!key_parse(req, 1, &k) || !integer_mode(req, &k) || !count_parse(req, 2, &count)) {
        return LEAF_OK;
    }
    int scattered = !ids_mode_info(k.mode)->dense;
    if (scattered && count == 1) {
        /* A block of one is consecutive: answered as INCR (redis-py's incr() sends INCRBY k 1). */
        return incr_one(req, &k);
    }
    if (scattered) {
        return command_outcome_error(req, RESP_O_WRONG_MODE,
                                     "WRONG_MODE %s IDs are not consecutive, so INCRBY cannot hand "
                                     "out a block of them; use LEAF.IDS %s %d",
                                     ids_mode_name(k.mode), req->cmd.argv[1], count);
    }
    leaf_status_t rc = issue(req, &k, count, 1, &last);
    if (rc == LEAF_OK) {
        resp_reply_int(req->out, last);
    }
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* LEAF.IDS key n: an array of n ascending IDs, any mode. */
leaf_status_t command_ids_leaf_ids(struct resp_request *req) {
    struct key_ref k;
    int count;
    if (!key_parse(req, 1, &k) || !integer_mode(req, &k) || !count_parse(req, 2, &count)) {
        return LEAF_OK;
    }
    struct ids_reply r;
    leaf_status_t rc = issue_reply(req, &k, count, &r);
    if (rc == LEAF_OK) {
        reply_ids(req, &r, 1);
    }
    door_ids_reply_free(&r);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* LEAF.UUID key [count], LEAF.NUMBER name [count], the command of every text mode (IDS_MODES'
 * text command, which names the mode): the text of one ID as a bulk string, or an array of count
 * (docs/id-shapes.md). */
leaf_status_t command_ids_leaf_text(struct resp_request *req) {
    struct key_ref k;
    enum ids_mode mode;
    int count = 1;
    mode = ids_mode_find_text_command(req->cmd.argv[0], req->cmd.argvlen[0]);
    if (mode == IDS_MODE_NONE) {
        return command_outcome_error(req, RESP_O_ERR, "ERR '%.*s' names no mode of text IDs",
                                     (int)req->cmd.argvlen[0], req->cmd.argv[0]);
    }
    if (req->cmd.argc > 3) {
        const char *cmd = ids_mode_info(mode)->text_command;
        char lower[32];
        size_t n = 0;
        for (; cmd[n] != '\0' && n + 1 < sizeof(lower); n++) {
            lower[n] = (char)tolower((unsigned char)cmd[n]);
        }
        lower[n] = '\0';
        return command_outcome_error(req, RESP_O_ERR,
                                     "ERR wrong number of arguments for '%s' command", lower);
    }
    if (!key_parse_bare(req, 1, 1 + (int)mode, &k) ||
        (req->cmd.argc == 3 && !count_parse(req, 2, &count))) {
        return LEAF_OK;
    }
    struct ids_reply r;
    leaf_status_t rc = issue_reply(req, &k, count, &r);
    if (rc == LEAF_OK) {
        reply_ids(req, &r, req->cmd.argc == 3);
    }
    door_ids_reply_free(&r);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* GET sequence:<name>: the last ID issued for the sequence. */
leaf_status_t command_ids_get(struct resp_request *req) {
    struct key_ref k;
    if (!key_parse(req, 1, &k)) {
        return LEAF_OK;
    }
    if (k.mode != IDS_SEQUENCE) {
        return command_outcome_error(
            req, RESP_O_WRONG_MODE,
            "WRONG_MODE GET reads the last ID of a sequence: GET sequence:<name>");
    }
    struct ids_call c = {
        .mode = IDS_SEQUENCE,
        .key = k.name,
        .key_len = k.len,
        .count = 1,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = req->now_ms,
        .wait = req->wait,
    };
    int64_t last = 0;
    leaf_status_t rc = door_ids_last((const struct door_ctx *)req->ctx, &c, &last);
    if (rc == LEAF_OK && last > 0) {
        resp_reply_int(req->out, last);
    } else if (rc == LEAF_OK) {
        resp_reply_null(req->out, req->client->resp3);
    } else if (rc == LEAF_ERR && c.err == IDS_E_UNKNOWN_SEQUENCE) {
        resp_reply_null(req->out, req->client->resp3); /* nil: none yet */
        rc = LEAF_OK;
    } else {
        rc = issue_outcome(req, &k, &c, rc);
    }
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* MULTI: a queued ID command's key and count are checked when it is sent (command_multi.c). */
int command_ids_check(struct resp_request *req, int bare) {
    struct key_ref k;
    int count;
    return key_parse_bare(req, 1, bare, &k) && (req->cmd.argc < 3 || count_parse(req, 2, &count));
}
