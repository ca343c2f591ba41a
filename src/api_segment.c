#include "src/api.h"

/* Segment IDs arrive with issue 4; until then the mode is reported disabled. */
leaf_status_t api_segment_get(struct http_request *req) {
    const char *key;
    size_t key_len;
    int count;
    if (api_key_and_count(req, sizeof("/api/segment/get/") - 1, &key, &key_len, &count) != LEAF_OK) {
        return LEAF_OK;
    }
    http_respond_error(req, 503, "segment_disabled", "segment mode is disabled on this node");
    return LEAF_OK;
}
