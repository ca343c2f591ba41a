/*
 * Issuing IDs over HTTP: the {key} and ?count=N of a GET, door_ids_issue() and
 * its outcome as an HTTP answer. The one path every ID route takes.
 */
#include "api_ids.h"

#include "door_http.h"
#include "door_http_auth.h"
#include "validate.h"

/*
 * Reads the {key} after `prefix_len` bytes of the path and the optional
 * ?count=N; answers 400 itself and returns LEAF_EINVAL when either is bad.
 */
static leaf_status_t api_ids_key_and_count(struct http_request *req, size_t prefix_len,
                                           const char **key, size_t *key_len, int *count) {
    *key = req->path + prefix_len;
    *key_len = req->path_len - prefix_len;
    if (!validate_tag(*key, *key_len)) {
        door_http_respond_ids_error(req, IDS_E_BAD_TAG);
        return LEAF_EINVAL;
    }
    const char *val;
    size_t len;
    *count = 1;
    if (door_http_query(req, "count", &val, &len) && validate_count(val, len, count) != LEAF_OK) {
        door_http_respond_ids_error(req, IDS_E_BAD_COUNT);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* Issues count IDs for the request; LEAF_OK when the request was answered. */
leaf_status_t api_ids_issue(struct http_request *req, enum ids_mode mode, const char *key,
                            size_t key_len, int count, int64_t *ids) {
    struct ids_call c = {
        .mode = mode,
        .key = key,
        .key_len = key_len,
        .count = count,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = http_request_now(req),
        .wait = req->wait,
        /* Autocreate needs the 'create' right, as POST /api/sequence does (docs/SECURITY.md). */
        .may_create =
            mode == IDS_SEQUENCE && door_http_auth_may(req, AUTH_NEED_CREATE, mode, key, key_len),
    };
    leaf_status_t rc = door_ids_issue(door_ctx(req), &c, ids);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = c.retry_ms;
    } else if (rc != LEAF_OK && c.err == IDS_E_NOT_PRIMARY) {
        door_http_respond_redirect(req, &c.primary);
    } else if (rc != LEAF_OK) {
        door_http_respond_ids_error(req, c.err);
    }
    return rc;
}

/* GET <the mode's HTTP prefix>{key}[?count=N] (IDS_MODES): the IDs, one per line. */
leaf_status_t api_ids_get(struct http_request *req, enum ids_mode mode) {
    size_t prefix_len = ids_mode_info(mode)->http_prefix_len;
    const char *key;
    size_t key_len;
    int count;
    if (api_ids_key_and_count(req, prefix_len, &key, &key_len, &count) != LEAF_OK) {
        return LEAF_OK;
    }
    int64_t stack[IDS_STACK];
    int64_t *ids = door_ids_alloc(stack, count);
    if (ids == NULL) {
        door_http_respond_ids_error(req, IDS_E_OUT_OF_MEMORY);
        return LEAF_OK;
    }
    leaf_status_t rc = api_ids_issue(req, mode, key, key_len, count, ids);
    if (rc == LEAF_OK) {
        door_http_respond_ids(req, ids, count);
    }
    door_ids_free(stack, ids);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}
