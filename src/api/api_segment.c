/*
 * Segment ID endpoints: GET /api/segment/get/{key}[?count=N] (Leaf's) and
 * GET /api/leaf?biz_tag=T (the admin-style JSON read). The waiting policy is
 * here: a request whose range (or tag lookup) is in flight parks on its tag
 * and is resumed when the tag changes (a range installed, a lookup or fetch
 * answered), or at the latest when leafd.segment.wait.ms has passed since it
 * arrived, then answered 503; the event loop never blocks.
 */
#include <inttypes.h>
#include <stdio.h>

#include "api.h"
#include "validate.h"

/*
 * Issues count IDs into ids. LEAF_OK; LEAF_EAGAIN: parked (retry_ms set);
 * otherwise the error response is written.
 */
static leaf_status_t segment_issue(struct http_request *req, const char *key, size_t key_len,
                                   int count, int64_t *ids) {
    const struct api_ctx *ctx = api_ctx(req);
    if (!ctx->cfg->segment_enable) {
        http_respond_error(req, 503, "segment_disabled", "segment mode is disabled on this node");
        return LEAF_ERR;
    }
    int64_t waited = http_request_now(req) - req->first_seen_ms;
    int64_t left = ctx->cfg->segment_wait_ms - waited;
    leaf_status_t rc = segment_service_get(ctx->segment, key, key_len, count, ids,
                                           req->first_seen_ms, left > 0 ? req->wait : NULL);
    if (rc == LEAF_OK) {
        metrics_count_ids(ctx->metrics, req->loop, METRICS_MODE_SEGMENT, count);
        return LEAF_OK;
    }
    if (rc == LEAF_EAGAIN && left > 0) {
        req->retry_ms = left; /* woken sooner when the tag changes */
        return LEAF_EAGAIN;
    }
    leaf_wait_cancel(req->wait);
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
    if (api_key_and_count(req, sizeof("/api/segment/get/") - 1, &key, &key_len, &count) !=
        LEAF_OK) {
        return LEAF_OK;
    }
    int64_t stack[API_IDS_STACK];
    int64_t *ids = api_ids_alloc(stack, count);
    if (ids == NULL) {
        http_respond_error(req, 503, "out_of_memory", "out of memory");
        return LEAF_OK;
    }
    leaf_status_t rc = segment_issue(req, key, key_len, count, ids);
    if (rc == LEAF_OK) {
        api_respond_ids(req, ids, count);
    }
    api_ids_free(stack, ids);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

leaf_status_t api_leaf_get(struct http_request *req) {
    const char *key;
    size_t key_len;
    int64_t id;
    if (!api_query_get(req, "biz_tag", &key, &key_len) || !validate_tag(key, key_len)) {
        http_respond_error(req, 400, "bad_tag",
                           "biz_tag must be 1 to 128 bytes of [A-Za-z0-9._:-]");
        return LEAF_OK;
    }
    leaf_status_t rc = segment_issue(req, key, key_len, 1, &id);
    if (rc == LEAF_EAGAIN) {
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_OK) {
        char body[256];
        int n = snprintf(body, sizeof(body), "{\"biz_tag\":\"%.*s\",\"id\":\"%" PRId64 "\"}",
                         (int)key_len, key, id);
        http_respond(req, 200, "application/json", body, (size_t)n);
    }
    return LEAF_OK;
}
