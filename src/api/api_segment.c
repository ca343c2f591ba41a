/*
 * Segment reads beyond /api/segment/get: GET /api/leaf?biz_tag=T (one ID as
 * JSON, the admin-style read), ranges for client-side caching, and opaque
 * IDs with their admin decoder (docs/id-shapes.md). The waiting policy is
 * src/door/door_ids.c's, as for every ID request.
 */
#include <inttypes.h>
#include <stdio.h>

#include "api.h"
#include "door_http.h"
#include "num.h"
#include "validate.h"

leaf_status_t api_leaf_get(struct http_request *req, enum ids_mode mode) {
    const char *key;
    size_t key_len;
    int64_t id;
    if (!door_http_query(req, "biz_tag", &key, &key_len) || !validate_tag(key, key_len)) {
        door_http_error(req, IDS_E_BAD_TAG, "biz_tag must be 1 to 128 bytes of [A-Za-z0-9._:-]");
        return LEAF_OK;
    }
    leaf_status_t rc = api_ids_issue(req, IDS_SEGMENT, key, key_len, 1, &id);
    if (rc == LEAF_EAGAIN) {
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        char body[256];
        int n = snprintf(body, sizeof(body), "{\"biz_tag\":\"%.*s\",\"id\":\"%" PRId64 "\"}",
                         (int)key_len, key, id);
        http_respond_ex(req, 200, "application/json", DOOR_HTTP_NO_STORE, body, (size_t)n);
    }
    return LEAF_OK;
}

/* The most IDs one range request may ask for: the dynamic step's cap. */
#define API_RANGE_COUNT_MAX 1000000

/*
 * GET /api/segment/range/{tag}?count=N: N consecutive IDs for the client to
 * hand out itself, as {"biz_tag":T,"start":"<id>","end":"<id>"} (end
 * included; IDs as strings). Taken from the node's buffers as RESP INCRBY:
 * from one range, skipping the rest of a range too short for N.
 */
leaf_status_t api_segment_range(struct http_request *req, enum ids_mode mode) {
    static const size_t prefix = sizeof("/api/segment/range/") - 1;
    const char *key = req->path + prefix, *val;
    size_t key_len = req->path_len - prefix, len;
    int64_t count = 1, last;
    if (!validate_tag(key, key_len)) {
        door_http_error(req, IDS_E_BAD_TAG, NULL);
        return LEAF_OK;
    }
    if (door_http_query(req, "count", &val, &len) &&
        (len == 0 || val[0] == '-' ||
         num_parse_range(val, len, 1, API_RANGE_COUNT_MAX, &count) != LEAF_OK)) {
        door_http_error(req, IDS_E_BAD_RANGE_COUNT, NULL);
        return LEAF_OK;
    }
    struct ids_call c = {
        .mode = IDS_SEGMENT,
        .key = key,
        .key_len = key_len,
        .count = (int)count,
        .dense = 1,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = http_request_now(req),
        .wait = req->wait,
    };
    leaf_status_t rc = door_ids_issue(door_ctx(req), &c, &last);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = c.retry_ms;
        return LEAF_EAGAIN;
    }
    if (rc != LEAF_OK) {
        door_http_error(req, c.err, NULL);
        return LEAF_OK;
    }
    char body[256];
    int n = snprintf(body, sizeof(body),
                     "{\"biz_tag\":\"%.*s\",\"start\":\"%" PRId64 "\",\"end\":\"%" PRId64 "\"}",
                     (int)key_len, key, last - count + 1, last);
    http_respond_ex(req, 200, "application/json", DOOR_HTTP_NO_STORE, body, (size_t)n);
    return LEAF_OK;
}

/* GET /decodeOpaqueId?id=N&biz_tag=T (admin: the route table checks): the segment ID behind an
 * opaque ID of tag T; without biz_tag, one issued before 0.2 (tag-less). */
leaf_status_t api_decode_opaque(struct http_request *req, enum ids_mode mode) {
    const char *val;
    size_t len;
    int64_t id, plain;
    struct segment_opaque *o = door_ids_opaque(door_ctx(req), req->loop);
    if (o == NULL) {
        door_http_error(req, IDS_E_OPAQUE_DISABLED, NULL);
        return LEAF_OK;
    }
    if (!door_http_query(req, "id", &val, &len) || len == 0 || val[0] == '-' ||
        num_parse_i64(val, len, &id) != LEAF_OK || id < 1) {
        door_http_error(req, DOOR_E_BAD_OPAQUE_ID,
                        "id must be a decimal integer from 1 to 9223372036854775807");
        return LEAF_OK;
    }
    /* With ?biz_tag= the tag's permutation (what leafd issues); without, the tag-less one of
     * the IDs issued before 0.2, so that those still decode. */
    const char *tag = NULL;
    size_t tag_len = 0;
    if (door_http_query(req, "biz_tag", &tag, &tag_len) && !validate_tag(tag, tag_len)) {
        door_http_error(req, IDS_E_BAD_TAG, "biz_tag: 1 to 128 bytes of [A-Za-z0-9._:-]");
        return LEAF_OK;
    }
    leaf_status_t rc = tag != NULL ? segment_opaque_decrypt_tag(o, tag, tag_len, &id, &plain, 1)
                                   : segment_opaque_decrypt(o, id, &plain);
    if (rc != LEAF_OK) {
        door_http_error(req, IDS_E_OPAQUE_FAILED, NULL);
        return LEAF_OK;
    }
    char body[320];
    int n = snprintf(body, sizeof(body),
                     "{\"id\":\"%" PRId64 "\",\"segment_id\":\"%" PRId64 "\",\"biz_tag\":%s%.*s%s}",
                     id, plain, tag != NULL ? "\"" : "", (int)(tag != NULL ? tag_len : 4),
                     tag != NULL ? tag : "null", tag != NULL ? "\"" : "");
    http_respond(req, 200, "application/json", body, (size_t)n);
    return LEAF_OK;
}
