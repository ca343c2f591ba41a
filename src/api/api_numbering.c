/*
 * Business numbers' admin API (docs/id-shapes.md, "Business numbers"):
 * POST /api/numbering {"name","prefix","date","width","period","time_zone"}
 * creates a numbering (201; 409 when it exists), GET /api/numbering lists
 * them. The numbers themselves are an ID mode (GET /api/number/get/{name},
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
#include "validate.h"

#define NUMBERING_WAIT_MS 5000
#define NUMBERING_LIST_MAX 256

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
    int ok = cJSON_IsObject(root) && body_string(root, "name", d->name, sizeof(d->name)) &&
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
        http_respond_error(req, 400, "bad_request", msg);
    }
    return ok;
}

/* The definition as JSON (the request's shape) into b. */
static void numbering_json(struct sbuf *b, const struct sequence_numbering *d) {
    sbuf_printf(b,
                "{\"name\":\"%s\",\"prefix\":\"%s\",\"date\":\"%s\",\"width\":%d,"
                "\"period\":\"%s\",\"time_zone\":\"%s\"}",
                d->name, d->prefix, sequence_numbering_date_name(d->date), d->width,
                sequence_numbering_period_name(d->period), d->time_zone);
}

leaf_status_t api_numbering_create(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    struct sequence_numbering d;
    int64_t period, day;
    if (!create_body(req, &d)) {
        return LEAF_OK;
    }
    /* The router checked the route's need; the numbering's name is in the body. */
    if (req->ticket < 0 &&
        !door_http_auth_key(req, AUTH_NEED_CREATE, IDS_NUMBER, d.name, strlen(d.name))) {
        return LEAF_OK;
    }
    if (!sequence_service_enabled(ctx->sequence)) {
        api_ids_respond_error(req, IDS_E_SEQUENCE_DISABLED);
        return LEAF_OK;
    }
    if (req->ticket < 0 && sequence_service_numbering_period(ctx->sequence, &d, clock_wall_ms(),
                                                             &period, &day) != LEAF_OK) {
        http_respond_error(req, 400, "bad_request",
                           "time_zone names no readable zone of the tz database on this node");
        return LEAF_OK;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > NUMBERING_WAIT_MS) {
        http_respond_error(req, 503, "zookeeper_unavailable",
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
        struct sbuf b = SBUF_INIT;
        numbering_json(&b, &d);
        door_http_respond_sbuf(req, 201, "application/json", &b);
        sbuf_free(&b);
    } else if (rc == LEAF_EEXIST) {
        http_respond_error(req, 409, "numbering_exists", "a numbering of that name exists");
    } else if (rc == LEAF_ENOMEM) {
        http_respond_error(req, 503, "busy", "too many creates in flight, or too many numberings");
    } else {
        http_respond_error(req, 503, "zookeeper_unavailable",
                           "ZooKeeper could not be reached for the create");
    }
    return LEAF_OK;
}

leaf_status_t api_numbering_list(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    int n = 0;
    if (!sequence_service_enabled(ctx->sequence)) {
        api_ids_respond_error(req, IDS_E_SEQUENCE_DISABLED);
        return LEAF_OK;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > NUMBERING_WAIT_MS) {
        http_respond_error(req, 503, "zookeeper_unavailable",
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
        http_respond_error(req, 503, "zookeeper_unavailable",
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
