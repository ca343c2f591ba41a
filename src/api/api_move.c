/*
 * Moving a sequence's home to another region (docs/regions.md, "Moving a home"), the two
 * halves that `leafctl region move` calls in turn:
 * - POST /api/region/move {"sequence":..,"region":"<to>"} in the home region: its primary
 *   stops issuing the sequence and marks its record moved at F, the acknowledged max; the
 *   answer carries F and where the new region's nodes are (307 to the primary first, as for
 *   IDs). Asked again, the same F; once the registry names the new region, {"done":true}.
 * - POST /api/region/adopt {"sequence":..,"from":"<old home>","max":"F"} in the new region:
 *   creates the sequence's record at F in this region's ZooKeeper (its first ID is F + 1),
 *   then switches the home in the registry from the old region to this one with a
 *   conditional write; every node then reads its homes again, and the old region redirects.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "door_http.h"
#include "num.h"
#include "validate.h"

#define MOVE_WAIT_MS 5000
#define MOVE_POLL_MS 20        /* the registry's switch is asked again this often */
#define MOVE_MARK_POLL_MS 200  /* a parked move is woken by the mark's answer; at the latest */
#define MOVE_SWITCHING INT_MAX /* req->ticket: the record is created, the switch is asked */

/* The body's string members into bufs; 0 (answered 400) when one is missing or malformed. */
static int move_body(struct http_request *req, const char *second, char *name, size_t ncap,
                     char *region, size_t rcap, int64_t *max) {
    cJSON *root = door_http_body(req);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "sequence");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, second);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "max");
    int ok = cJSON_IsObject(root) && cJSON_IsString(n) &&
             validate_sequence_name(n->valuestring, strlen(n->valuestring)) && cJSON_IsString(r) &&
             zk_region_name_ok(r->valuestring, strlen(r->valuestring));
    if (ok && max != NULL) {
        ok = cJSON_IsString(m) &&
             num_parse_i64(m->valuestring, strlen(m->valuestring), max) == LEAF_OK && *max >= 0 &&
             *max < INT64_MAX;
    }
    if (ok) {
        snprintf(name, ncap, "%s", n->valuestring);
        snprintf(region, rcap, "%s", r->valuestring);
    }
    cJSON_Delete(root);
    if (!ok) {
        char why[200];
        snprintf(why, sizeof(why), "expected {\"sequence\":\"<name>\",\"%s\":\"<region>\"%s}",
                 second, max != NULL ? ",\"max\":\"<the max the move answered>\"" : "");
        door_http_error(req, DOOR_E_BAD_REQUEST, why);
    }
    return ok;
}

/* 1 when this node has regions and `region` is one of leafd.region.peers (answered otherwise). */
static int move_peer(struct http_request *req, const char *region,
                     struct region_service_home *peer) {
    const struct door_ctx *ctx = door_ctx(req);
    if (ctx->cfg->region_count > 1 && region_service_peer(ctx->region, region, peer)) {
        return 1;
    }
    char why[200];
    snprintf(why, sizeof(why), "region %s is not one of leafd.region.peers of this node (%s)",
             region, ctx->cfg->region_count > 1 ? ctx->cfg->region : "one region");
    door_http_error(req, DOOR_E_BAD_REQUEST, why);
    return 0;
}

static void move_answer(struct http_request *req, const char *name, const char *from,
                        const struct region_service_home *to, int64_t max) {
    char body[512];
    int n = snprintf(body, sizeof(body),
                     "{\"sequence\":\"%s\",\"from\":\"%s\",\"to\":\"%s\",\"max\":\"%" PRId64
                     "\",\"to_http\":\"%s\"}",
                     name, from, to->region, max, to->http);
    http_respond(req, 200, "application/json", body, (size_t)n);
}

/* The answer to a move the sequence service refused or could not finish. */
static void move_refused(struct http_request *req, leaf_status_t rc, const char *name,
                         const struct sequence_where *where) {
    char why[400];
    if (rc == LEAF_EUNAVAIL && where->known) {
        api_redirect(req, where->http, "not_primary", "primary", where->http);
    } else if (rc == LEAF_EUNAVAIL) {
        door_http_error(req, IDS_E_NO_PRIMARY, NULL);
    } else if (rc == LEAF_ENOTFOUND) {
        door_http_error(req, IDS_E_UNKNOWN_SEQUENCE, NULL);
    } else if (rc == LEAF_EEXIST) {
        snprintf(why, sizeof(why), "sequence %s moves (or moved) to another region", name);
        door_http_error(req, DOOR_E_HOME_MOVING, why);
    } else if (rc == LEAF_EINVAL) {
        door_http_error(req, DOOR_E_BAD_REQUEST, "sequences are sharded here: they do not move");
    } else if (rc == LEAF_EAGAIN) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "the moved mark was not acknowledged in time; ask again (the sequence "
                        "issues nothing meanwhile)");
    } else {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, NULL);
    }
}

leaf_status_t api_region_move(struct http_request *req, enum ids_mode mode) {
    (void)mode;
    const struct door_ctx *ctx = door_ctx(req);
    char name[VALIDATE_TAG_MAX + 1], to[ZK_REGION_NAME_MAX];
    struct region_service_home peer, home;
    if (!move_body(req, "region", name, sizeof(name), to, sizeof(to), NULL) ||
        !move_peer(req, to, &peer)) {
        return LEAF_OK;
    }
    if (!sequence_service_enabled(ctx->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return LEAF_OK;
    }
    enum region_service_where at =
        region_service_home(ctx->region, ZK_REGION_SEQUENCE, name, strlen(name), 0, &home);
    if (at == REGION_HOME_HERE && home.region[0] == '\0') {
        /* No home in the registry (created before the second region, or a numbering's
         * counter): nothing to switch, so nothing is marked. */
        char why[300];
        snprintf(why, sizeof(why),
                 "sequence %s has no home in the registry that this node has read (a sequence "
                 "created before the second region has none; a new one is read within a second)",
                 name);
        door_http_error(req, IDS_E_UNKNOWN_SEQUENCE, why);
        return LEAF_OK;
    }
    if (at != REGION_HOME_HERE && strcmp(home.region, to) == 0) {
        /* Moved there already (a retry after the switch landed late): nothing left to do. */
        char body[400];
        int n = snprintf(body, sizeof(body), "{\"sequence\":\"%s\",\"to\":\"%s\",\"done\":true}",
                         name, to);
        http_respond(req, 200, "application/json", body, (size_t)n);
        return LEAF_OK;
    }
    if (at != REGION_HOME_HERE) {
        char why[400];
        snprintf(why, sizeof(why), "sequence %s is homed in region %s, not here (%s)", name,
                 home.region, ctx->cfg->region);
        door_http_error(req, DOOR_E_HOME_ELSEWHERE, why);
        return LEAF_OK;
    }
    int64_t max = 0;
    struct sequence_where where = {0};
    leaf_status_t rc =
        sequence_service_move(ctx->sequence, name, strlen(name), to, &max, req->wait, &where);
    if (rc == LEAF_EAGAIN && http_request_now(req) - req->first_seen_ms <= MOVE_WAIT_MS) {
        req->retry_ms = MOVE_MARK_POLL_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        move_answer(req, name, ctx->cfg->region, &peer, max);
    } else {
        move_refused(req, rc, name, &where);
    }
    return LEAF_OK;
}

/* The registry's switch, asked again until answered (the region thread does it). */
static leaf_status_t adopt_switch(struct http_request *req, const char *name, const char *from,
                                  const struct region_service_home *old, int64_t max) {
    const struct door_ctx *ctx = door_ctx(req);
    char holder[ZK_REGION_NAME_MAX] = "", why[400];
    leaf_status_t rc = region_service_switch(ctx->region, ZK_REGION_SEQUENCE, name, strlen(name),
                                             from, holder, sizeof(holder));
    if ((rc == LEAF_EAGAIN || rc == LEAF_EBUSY) &&
        http_request_now(req) - req->first_seen_ms <= MOVE_WAIT_MS) {
        req->retry_ms = MOVE_POLL_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        sequence_service_adopted(ctx->sequence, name, strlen(name));
        struct region_service_home here = {0};
        snprintf(here.region, sizeof(here.region), "%s", ctx->cfg->region);
        move_answer(req, name, old->region, &here, max);
    } else if (rc == LEAF_EEXIST) {
        snprintf(why, sizeof(why), "the registry homes sequence %s in region %s, not %s", name,
                 holder, from);
        door_http_error(req, DOOR_E_HOME_ELSEWHERE, why);
    } else if (rc == LEAF_ENOTFOUND) {
        snprintf(why, sizeof(why), "sequence %s has no home in the registry", name);
        door_http_error(req, IDS_E_UNKNOWN_SEQUENCE, why);
    } else {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "the registry (leafd.region.registry.zk.address) did not switch the home "
                        "in time; ask again");
    }
    return LEAF_OK;
}

leaf_status_t api_region_adopt(struct http_request *req, enum ids_mode mode) {
    (void)mode;
    const struct door_ctx *ctx = door_ctx(req);
    char name[VALIDATE_TAG_MAX + 1], from[ZK_REGION_NAME_MAX];
    struct region_service_home old;
    int64_t max = 0;
    if (!move_body(req, "from", name, sizeof(name), from, sizeof(from), &max) ||
        !move_peer(req, from, &old)) {
        return LEAF_OK;
    }
    if (!sequence_service_enabled(ctx->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return LEAF_OK;
    }
    struct region_service_home home;
    if (req->ticket < 0 &&
        region_service_home(ctx->region, ZK_REGION_SEQUENCE, name, strlen(name), 0, &home) ==
            REGION_HOME_HERE &&
        strcmp(home.region, ctx->cfg->region) == 0) {
        /* Switched already (a retry after a late switch): this region may have issued above
         * max since, so nothing is created or switched again. */
        move_answer(req, name, old.region, &home, max);
        return LEAF_OK;
    }
    if (req->ticket == MOVE_SWITCHING) {
        return adopt_switch(req, name, from, &old, max);
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > MOVE_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper did not answer the create in time");
        return LEAF_OK;
    }
    /* The record first, so that no node of this region can issue at or below max. */
    leaf_status_t rc =
        sequence_service_adopt(ctx->sequence, name, strlen(name), max, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = MOVE_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_EEXIST) {
        char why[400];
        snprintf(why, sizeof(why),
                 "this region's ZooKeeper already holds another record of sequence %s (not "
                 "the one this move writes: a sequence of the name, or an earlier move's with "
                 "another max); the home is not switched",
                 name);
        door_http_error(req, DOOR_E_SEQUENCE_EXISTS, why);
        return LEAF_OK;
    }
    if (rc != LEAF_OK) {
        api_create_refused(req, rc, DOOR_E_SEQUENCE_EXISTS, DOOR_E_ZOOKEEPER_UNAVAILABLE);
        return LEAF_OK;
    }
    req->ticket = MOVE_SWITCHING;
    return adopt_switch(req, name, from, &old, max);
}
