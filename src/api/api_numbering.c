/*
 * Business numbers' admin API (docs/id-shapes.md, "Business numbers"):
 * POST /api/numbering {"name","prefix","date","width","period","time_zone"}
 * creates a numbering (201; 409 when it exists; 409 numbering_limit when
 * the cluster holds 256), PUT /api/numbering (the same body) changes its
 * prefix, date or time zone, DELETE /api/numbering/{name} deletes it, GET
 * /api/numbering lists them. The numbers themselves are an ID mode (GET /api/number/get/{name},
 * api_ids.c). The definitions live in ZooKeeper (src/node/sequence/
 * sequence_service_numbering.c), so the sequences must be on.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "door_http.h"
#include "validate.h"

#define NUMBERING_WAIT_MS 5000
#define NUMBERING_LIST_MAX 256
#define NUMBERING_PATH "/api/numbering/"

/* 1 when the raw body holds a \u0000 escape: cJSON would cut the string there, silently. */
static int body_has_nul(const struct http_request *req) {
    for (size_t i = 0; i + 6 <= req->body_len; i++) {
        if (req->body[i] == '\\' && req->body[i + 1] == 'u' &&
            memcmp(req->body + i + 2, "0000", 4) == 0) {
            return 1;
        }
    }
    return 0;
}

/* A string member of at most cap - 1 bytes into out: 1, else 0. */
static int body_string(const cJSON *root, const char *key, char *out, size_t cap) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap) {
        return 0;
    }
    snprintf(out, cap, "%s", v->valuestring);
    return 1;
}

/* Reads the body into d; answers 400 itself (naming what is wrong) and returns 0 when bad. */
static int create_body(struct http_request *req, struct sequence_numbering *d) {
    cJSON *root = door_http_body(req);
    char date[16] = "", period[16] = "", why[256] = "";
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "width");
    memset(d, 0, sizeof(*d));
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (body_has_nul(req)) {
        snprintf(why, sizeof(why), "a string holds \\u0000");
    } else if (cJSON_IsString(nm) && strlen(nm->valuestring) > SEQUENCE_NUMBERING_NAME_MAX) {
        snprintf(why, sizeof(why), "name: 1 to %d bytes of [A-Za-z0-9._:-], not . or ..",
                 SEQUENCE_NUMBERING_NAME_MAX);
    }
    int ok = why[0] == '\0' && cJSON_IsObject(root) &&
             body_string(root, "name", d->name, sizeof(d->name)) &&
             body_string(root, "time_zone", d->time_zone, sizeof(d->time_zone)) &&
             cJSON_IsNumber(w) && floor(w->valuedouble) == w->valuedouble && w->valuedouble >= 1 &&
             w->valuedouble <= 99;
    if (ok) {
        d->width = (int)w->valuedouble;
        /* prefix and date may be left out: empty */
        ok = (cJSON_GetObjectItemCaseSensitive(root, "prefix") == NULL ||
              body_string(root, "prefix", d->prefix, sizeof(d->prefix))) &&
             (cJSON_GetObjectItemCaseSensitive(root, "date") == NULL ||
              body_string(root, "date", date, sizeof(date))) &&
             body_string(root, "period", period, sizeof(period));
    }
    if (ok && (sequence_numbering_parse_date(date, strlen(date), &d->date) != LEAF_OK ||
               sequence_numbering_parse_period(period, strlen(period), &d->period) != LEAF_OK)) {
        snprintf(why, sizeof(why),
                 "date is one of yyyyMMdd, yyMMdd, yyyyMM, yyyy or empty; "
                 "period one of day, month, year, never");
        ok = 0;
    }
    if (ok && sequence_numbering_check(d, why, sizeof(why)) != LEAF_OK) {
        ok = 0;
    }
    cJSON_Delete(root);
    if (!ok) {
        char msg[400];
        snprintf(msg, sizeof(msg),
                 "expected {\"name\",\"prefix\",\"date\",\"width\",\"period\",\"time_zone\"}%s%s",
                 why[0] ? ": " : "", why);
        door_http_error(req, DOOR_E_BAD_REQUEST, msg);
    }
    return ok;
}

/* The definition as JSON (the request's shape) into b; every string escaped (a table written
 * by an older node may hold a prefix with " or \). */
static void numbering_json(struct sbuf *b, const struct sequence_numbering *d) {
    const char *date = sequence_numbering_date_name(d->date);
    const char *period = sequence_numbering_period_name(d->period);
    sbuf_puts(b, "{\"name\":");
    sbuf_json_str(b, d->name, strlen(d->name));
    sbuf_puts(b, ",\"prefix\":");
    sbuf_json_str(b, d->prefix, strlen(d->prefix));
    sbuf_puts(b, ",\"date\":");
    sbuf_json_str(b, date, strlen(date));
    sbuf_printf(b, ",\"width\":%d,\"period\":", d->width);
    sbuf_json_str(b, period, strlen(period));
    sbuf_puts(b, ",\"time_zone\":");
    sbuf_json_str(b, d->time_zone, strlen(d->time_zone));
    sbuf_putc(b, '}');
}

/* Answers one numbering's definition as JSON with the given status. */
static void numbering_respond(struct http_request *req, int status,
                              const struct sequence_numbering *d) {
    struct sbuf b = SBUF_INIT;
    numbering_json(&b, d);
    door_http_respond_sbuf(req, status, "application/json", &b);
    sbuf_free(&b);
}

/* 1 when the definition's time_zone can be read on this node; else answers 400 and 0. */
static int zone_readable(struct http_request *req, const struct door_ctx *ctx,
                         const struct sequence_numbering *d) {
    int64_t period, day;
    if (sequence_service_numbering_period(ctx->sequence, d, clock_wall_ms(), &period, &day) ==
        LEAF_OK) {
        return 1;
    }
    door_http_error(req, DOOR_E_BAD_REQUEST,
                    "time_zone names no readable zone of the tz database on this node");
    return 0;
}

leaf_status_t api_numbering_create(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    struct sequence_numbering d;
    if (!create_body(req, &d)) {
        return LEAF_OK;
    }
    /* The route table checked the route's need; the numbering's name is in the body. */
    if (req->ticket < 0 &&
        !door_http_auth_key(req, AUTH_NEED_CREATE, IDS_NUMBER, d.name, strlen(d.name))) {
        return LEAF_OK;
    }
    if (!sequence_service_enabled(ctx->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return LEAF_OK;
    }
    leaf_status_t home = api_home_create(req, ZK_REGION_NUMBERING, d.name, DOOR_E_NUMBERING_EXISTS);
    if (home != LEAF_OK) {
        return home == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
    }
    if (req->ticket < 0 && !zone_readable(req, ctx, &d)) {
        return LEAF_OK;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > NUMBERING_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper did not answer the create in time");
        return LEAF_OK;
    }
    leaf_status_t rc =
        sequence_service_numbering_create(ctx->sequence, &d, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = NUMBERING_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        numbering_respond(req, 201, &d);
    } else if (rc == LEAF_EEXIST) {
        door_http_error(req, DOOR_E_NUMBERING_EXISTS, "a numbering of that name exists");
    } else if (rc == LEAF_ERANGE) {
        door_http_error(req, DOOR_E_NUMBERING_LIMIT,
                        "the cluster holds 256 numberings, the most; delete one first");
    } else if (rc == LEAF_ENOMEM) {
        door_http_error(req, DOOR_E_BUSY, "too many creates in flight");
    } else {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper could not be reached for the create");
    }
    return LEAF_OK;
}

leaf_status_t api_numbering_list(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    int n = 0;
    if (!sequence_service_enabled(ctx->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return LEAF_OK;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > NUMBERING_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper did not answer the read in time");
        return LEAF_OK;
    }
    /* The definitions are copied out once the read is back (the first call only queues it). */
    int answered = req->ticket >= 0;
    struct sequence_numbering *defs = answered ? malloc(sizeof(*defs) * NUMBERING_LIST_MAX) : NULL;
    leaf_status_t rc = sequence_service_numbering_list(
        ctx->sequence, defs, defs ? NUMBERING_LIST_MAX : 0, &n, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        free(defs);
        req->retry_ms = NUMBERING_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc != LEAF_OK || defs == NULL) {
        free(defs);
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper could not be reached for the read");
        return LEAF_OK;
    }
    struct sbuf b = SBUF_INIT;
    sbuf_putc(&b, '[');
    for (int i = 0; i < n; i++) {
        if (i) {
            sbuf_putc(&b, ',');
        }
        numbering_json(&b, &defs[i]);
    }
    sbuf_putc(&b, ']');
    door_http_respond_sbuf(req, 200, "application/json", &b);
    sbuf_free(&b);
    free(defs);
    return LEAF_OK;
}

/* A change's answer: 404 unknown, 400 a change of width or period, 503 ZooKeeper. */
static void change_respond(struct http_request *req, leaf_status_t rc, const char *name) {
    char msg[200];
    if (rc == LEAF_ENOTFOUND) {
        snprintf(msg, sizeof(msg), "no numbering %s", name);
        door_http_error(req, IDS_E_UNKNOWN_NUMBERING, msg);
    } else if (rc == LEAF_EINVAL) {
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "width and period are fixed at creation (the counter's values would "
                        "mean other numbers): delete the numbering and create it again");
    } else if (rc == LEAF_ENOMEM) {
        door_http_error(req, DOOR_E_BUSY, "too many changes in flight");
    } else {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper could not be reached for the change");
    }
}

/* The first call's checks of a change: the sequences on, not waited too long. 0: answered. */
static int change_ready(struct http_request *req) {
    if (!sequence_service_enabled(door_ctx(req)->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return 0;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > NUMBERING_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper did not answer the change in time");
        return 0;
    }
    return 1;
}

leaf_status_t api_numbering_update(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    struct sequence_numbering d;
    if (!create_body(req, &d) || !change_ready(req)) {
        return LEAF_OK;
    }
    if (req->ticket < 0 && !zone_readable(req, ctx, &d)) {
        return LEAF_OK;
    }
    leaf_status_t rc =
        sequence_service_numbering_update(ctx->sequence, &d, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = NUMBERING_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        numbering_respond(req, 200, &d);
    } else {
        change_respond(req, rc, d.name);
    }
    return LEAF_OK;
}

leaf_status_t api_numbering_delete(struct http_request *req, enum ids_mode mode) {
    const char *name = req->path + strlen(NUMBERING_PATH);
    size_t n = req->path_len - strlen(NUMBERING_PATH);
    char copy[SEQUENCE_NUMBERING_NAME_MAX + 1];
    if (n == 0 || n > SEQUENCE_NUMBERING_NAME_MAX || !validate_sequence_name(name, n)) {
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "DELETE /api/numbering/{name}: name 1 to 120 bytes of [A-Za-z0-9._:-]");
        return LEAF_OK;
    }
    if (!change_ready(req)) {
        return LEAF_OK;
    }
    snprintf(copy, sizeof(copy), "%.*s", (int)n, name);
    leaf_status_t rc =
        sequence_service_numbering_delete(door_ctx(req)->sequence, copy, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = NUMBERING_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        struct sbuf b = SBUF_INIT;
        sbuf_puts(&b, "{\"deleted\":");
        sbuf_json_str(&b, copy, strlen(copy));
        sbuf_putc(&b, '}');
        door_http_respond_sbuf(req, 200, "application/json", &b);
        sbuf_free(&b);
    } else {
        change_respond(req, rc, copy);
    }
    return LEAF_OK;
}
