/*
 * Sequences over HTTP: GET /api/sequence/get/{name}[?count=N] (N consecutive
 * IDs, one per line; a standby answers 307 to the primary, 503 no_primary
 * while none can issue), POST /api/sequence {"name":..,"start":..} (admin:
 * 201, 409 when it exists) and POST /api/cluster/demote (admin: the primary
 * steps down and the next node in line takes over).
 *
 * "start" may be a JSON integer below 2^53 (cJSON holds numbers as doubles)
 * or a decimal string up to 2^63-1.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "door_http.h"
#include "num.h"
#include "validate.h"

#define SEQUENCE_CREATE_WAIT_MS 5000

/* Reads {"name":..,"start":..}; answers 400 itself and returns 0 when malformed. */
static int create_body(struct http_request *req, char *name, size_t cap, int64_t *start) {
    cJSON *root = door_http_body(req);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "start");
    int ok = cJSON_IsObject(root) && cJSON_IsString(n) &&
             validate_sequence_name(n->valuestring, strlen(n->valuestring));
    if (ok) {
        snprintf(name, cap, "%s", n->valuestring);
    }
    *start = 1;
    if (ok && s != NULL) {
        if (cJSON_IsNumber(s)) {
            double d = s->valuedouble;
            ok = d >= 1 && d < 9007199254740992.0 && floor(d) == d;
            *start = ok ? (int64_t)d : 0;
        } else if (cJSON_IsString(s)) {
            ok = num_parse_i64(s->valuestring, strlen(s->valuestring), start) == LEAF_OK &&
                 *start >= 1;
        } else {
            ok = 0;
        }
    }
    cJSON_Delete(root);
    if (!ok) {
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "expected {\"name\":\"<1 to 128 bytes of [A-Za-z0-9._:-], not . or "
                        "..>\","
                        "\"start\":<integer >= 1, a string above 2^53>}");
    }
    return ok;
}

leaf_status_t api_sequence_create(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    char name[VALIDATE_TAG_MAX + 1];
    int64_t start;
    if (!create_body(req, name, sizeof(name), &start)) {
        return LEAF_OK;
    }
    /* The route table checked the route's need; the sequence's name is in the body. */
    if (req->ticket < 0 &&
        !door_http_auth_key(req, AUTH_NEED_CREATE, IDS_SEQUENCE, name, strlen(name))) {
        return LEAF_OK;
    }
    if (!sequence_service_enabled(ctx->sequence)) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return LEAF_OK;
    }
    leaf_status_t home = api_home_create(req, ZK_REGION_SEQUENCE, name, DOOR_E_SEQUENCE_EXISTS);
    if (home != LEAF_OK) {
        return home == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
    }
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > SEQUENCE_CREATE_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper did not answer the create in time");
        return LEAF_OK;
    }
    leaf_status_t rc = sequence_service_create_seq(ctx->sequence, name, strlen(name), start,
                                                   &req->ticket, req->wait);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = SEQUENCE_CREATE_WAIT_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        char body[256];
        int n = snprintf(body, sizeof(body), "{\"name\":\"%s\",\"start\":\"%" PRId64 "\"}", name,
                         start);
        http_respond(req, 201, "application/json", body, (size_t)n);
    } else {
        api_create_refused(req, rc, DOOR_E_SEQUENCE_EXISTS, DOOR_E_ZOOKEEPER_UNAVAILABLE);
    }
    return LEAF_OK;
}

void api_create_refused(struct http_request *req, leaf_status_t rc, enum door_error exists,
                        enum door_error limit) {
    if (rc == LEAF_EEXIST) {
        door_http_error(req, exists, NULL);
    } else if (rc == LEAF_ERANGE && limit != DOOR_E_ZOOKEEPER_UNAVAILABLE) {
        door_http_error(req, limit, NULL);
    } else if (rc == LEAF_ENOMEM) {
        door_http_error(req, DOOR_E_BUSY, "too many creates in flight");
    } else {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper could not be reached for the create");
    }
}

leaf_status_t api_cluster_demote(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    if (sequence_service_demote(ctx->sequence) != LEAF_OK) {
        door_http_error(req, IDS_E_SEQUENCE_DISABLED, NULL);
        return LEAF_OK;
    }
    static const char body[] = "{\"demoted\":true}";
    http_respond(req, 200, "application/json", body, sizeof(body) - 1);
    return LEAF_OK;
}
