/*
 * GET /api/leaf?biz_tag=T: one segment ID as JSON (the admin-style read).
 * The waiting policy is ids.c's, as for every ID request.
 */
#include <inttypes.h>
#include <stdio.h>

#include "api.h"
#include "validate.h"

leaf_status_t api_leaf_get(struct http_request *req) {
    const char *key;
    size_t key_len;
    int64_t id;
    if (!api_query_get(req, "biz_tag", &key, &key_len) || !validate_tag(key, key_len)) {
        http_respond_error(req, 400, "bad_tag",
                           "biz_tag must be 1 to 128 bytes of [A-Za-z0-9._:-]");
        return LEAF_OK;
    }
    leaf_status_t rc = api_issue(req, IDS_SEGMENT, key, key_len, 1, &id);
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
