/*
 * Keyed sequences' admin API (docs/keyed-sequences.md): POST /api/keyed {"name","step"}
 * creates a keyed space (201; 409 when it exists; 409 space_limit past 1024 spaces; 400 a bad
 * name or step) and GET /api/keyed lists the spaces with this node's counters. The IDs
 * themselves are an ID mode (GET /api/keyed/get/{space}/{key}, api_ids.c). The spaces live in
 * ZooKeeper (src/node/sequence/sequence_service_keyed.c), so the sequences must be on; both
 * calls are parked jobs with a ticket, as sequence creation is (api_sequence.c).
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "door_http.h"
#include "sequence_keyed.h"

#define KEYED_WAIT_MS 5000

/* The JSON integer n as a step: 1 .. SEQUENCE_KEYED_MAX_STEP (2^40, exact in a double). */
static int keyed_step(const cJSON *n, int64_t *step) {
    if (n == NULL) {
        *step = SEQUENCE_KEYED_DEFAULT_STEP;
        return 1;
    }
    double d = cJSON_IsNumber(n) ? n->valuedouble : 0;
    if (!(d >= 1 && d <= (double)SEQUENCE_KEYED_MAX_STEP && floor(d) == d)) {
        return 0;
    }
    *step = (int64_t)d;
    return 1;
}

/* Reads {"name":..,"step":..}; answers 400 itself and returns 0 when malformed. */
static int keyed_body(struct http_request *req, char *name, size_t cap, int64_t *step) {
    cJSON *root = door_http_body(req);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "name");
    int ok = cJSON_IsObject(root) && cJSON_IsString(n) &&
             ids_space_ok(n->valuestring, strlen(n->valuestring)) &&
             keyed_step(cJSON_GetObjectItemCaseSensitive(root, "step"), step);
    if (ok) {
        snprintf(name, cap, "%s", n->valuestring);
    }
    cJSON_Delete(root);
    if (!ok) {
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "expected {\"name\":\"<1 to 64 bytes of [A-Za-z0-9._-], not . or ..>\","
                        "\"step\":<integer from 1 to 2^40, default 10000>}");
    }
    return ok;
}

/* The sequences are on and a parked job has not waited too long: else answered, 0. */
static int keyed_may_ask(struct http_request *req) {
    if (!sequence_service_enabled(door_ctx(req)->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return 0;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > KEYED_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE, "ZooKeeper did not answer in time");
        return 0;
    }
    return 1;
}

leaf_status_t api_keyed_create(struct http_request *req, enum ids_mode mode) {
    (void)mode;
    char name[IDS_SPACE_MAX + 1];
    int64_t step;
    if (!keyed_body(req, name, sizeof(name), &step) || !keyed_may_ask(req)) {
        return LEAF_OK;
    }
    leaf_status_t home = api_home_create(req, ZK_REGION_KEYED, name, DOOR_E_SPACE_EXISTS);
    if (home != LEAF_OK) {
        return home == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
    }
    leaf_status_t rc = sequence_service_keyed_create(door_ctx(req)->sequence, name, strlen(name),
                                                     step, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = KEYED_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        char body[160];
        int n = snprintf(body, sizeof(body), "{\"name\":\"%s\",\"step\":%" PRId64 "}", name, step);
        http_respond(req, 201, "application/json", body, (size_t)n);
    } else if (rc == LEAF_EINVAL) {
        door_http_error(req, DOOR_E_BAD_REQUEST, "the service refused the space's name or step");
    } else {
        api_create_refused(req, rc, DOOR_E_SPACE_EXISTS, DOOR_E_SPACE_LIMIT);
    }
    return LEAF_OK;
}

/* One space's object of GET /api/keyed. */
static void keyed_json(struct sbuf *b, const struct sequence_keyed_view *v) {
    sbuf_printf(b,
                "{\"name\":\"%s\",\"step\":%" PRId64 ",\"issued\":%" PRIu64 ",\"resident\":%" PRIu64
                ",\"writes\":%" PRIu64 ",\"evictions\":%" PRIu64 "}",
                v->name, v->step, v->issued, v->resident, v->writes, v->evictions);
}

leaf_status_t api_keyed_list(struct http_request *req, enum ids_mode mode) {
    (void)mode;
    if (!keyed_may_ask(req)) {
        return LEAF_OK;
    }
    /* The views are copied out once the read is back (a first call may only queue it). */
    int n = 0;
    struct sequence_keyed_view *views = malloc(sizeof(*views) * SEQUENCE_KEYED_MAX_SPACES);
    if (views == NULL) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, NULL);
        return LEAF_OK;
    }
    leaf_status_t rc = sequence_service_keyed_list(
        door_ctx(req)->sequence, views, SEQUENCE_KEYED_MAX_SPACES, &n, &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        free(views);
        req->retry_ms = KEYED_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc != LEAF_OK) {
        free(views);
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper could not be reached for the read");
        return LEAF_OK;
    }
    struct sbuf b = SBUF_INIT;
    sbuf_puts(&b, "{\"spaces\":[");
    for (int i = 0; i < n && i < SEQUENCE_KEYED_MAX_SPACES; i++) {
        sbuf_puts(&b, i ? "," : "");
        keyed_json(&b, &views[i]);
    }
    sbuf_puts(&b, "]}");
    door_http_respond_sbuf(req, 200, "application/json", &b);
    sbuf_free(&b);
    free(views);
    return LEAF_OK;
}
