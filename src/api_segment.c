/*
 * Segment ID endpoints: GET /api/segment/get/{key}[?count=N] (Leaf's) and
 * GET /api/leaf?biz_tag=T (the admin-style JSON read). The waiting policy is
 * here: a request whose range (or tag lookup) is in flight is retried every
 * millisecond or two until leafd.segment.wait.ms has passed since it
 * arrived, then answered 503; the event loop never blocks.
 */
#include <inttypes.h>
#include <stdio.h>

#include "api.h"
#include "metrics.h"
#include "leafd.h"
#include "segment_service.h"
#include "validate.h"

#define SEGMENT_RETRY_MS 1

/*
 * Issues count IDs into the loop's scratch buffer. LEAF_OK: *ids is set;
 * LEAF_EAGAIN: retry_ms is set; otherwise the error response is written.
 */
static leaf_status_t segment_issue(struct http_request *req, const char *key, size_t key_len,
                                   int count, int64_t **ids) {
    if (!leafd.cfg.segment_enable) {
        http_respond_error(req, 503, "segment_disabled", "segment mode is disabled on this node");
        return LEAF_ERR;
    }
    *ids = (int64_t *)(void *)http_loop_scratch(req->loop);
    leaf_status_t rc = segment_service_get(key, key_len, count, *ids, req->first_seen_ms);
    if (rc == LEAF_OK) {
        metrics_count_ids(http_loop_index(req->loop), METRICS_MODE_SEGMENT, count);
        return LEAF_OK;
    }
    int64_t waited = http_loop_now(req->loop) - req->first_seen_ms;
    if (rc == LEAF_EAGAIN && waited < leafd.cfg.segment_wait_ms) {
        req->retry_ms = SEGMENT_RETRY_MS;
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_ENOTFOUND) {
        http_respond_error(req, 404, "unknown_tag", "no such biz_tag in leaf_alloc");
    } else if (rc == LEAF_ENOMEM) {
        http_respond_error(req, 503, "too_many_tags", "too many tags are being looked up");
    } else {
        http_respond_error(req, 503, "database_unavailable",
                           "the database is unavailable and no IDs are buffered for this tag");
    }
    return LEAF_ERR;
}

leaf_status_t api_segment_get(struct http_request *req) {
    const char *key;
    size_t key_len;
    int count;
    int64_t *ids;
    if (api_key_and_count(req, sizeof("/api/segment/get/") - 1, &key, &key_len, &count) != LEAF_OK) {
        return LEAF_OK;
    }
    leaf_status_t rc = segment_issue(req, key, key_len, count, &ids);
    if (rc == LEAF_EAGAIN) {
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        api_respond_ids(req, ids, count);
    }
    return LEAF_OK;
}

leaf_status_t api_leaf_get(struct http_request *req) {
    const char *key;
    size_t key_len;
    int64_t *ids;
    if (!api_query_get(req, "biz_tag", &key, &key_len) || !validate_tag(key, key_len)) {
        http_respond_error(req, 400, "bad_tag", "biz_tag must be 1 to 128 bytes of [A-Za-z0-9._:-]");
        return LEAF_OK;
    }
    leaf_status_t rc = segment_issue(req, key, key_len, 1, &ids);
    if (rc == LEAF_EAGAIN) {
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        char body[256];
        int n = snprintf(body, sizeof(body), "{\"biz_tag\":\"%.*s\",\"id\":\"%" PRId64 "\"}",
                         (int)key_len, key, ids[0]);
        http_respond(req, 200, "application/json", body, (size_t)n);
    }
    return LEAF_OK;
}
