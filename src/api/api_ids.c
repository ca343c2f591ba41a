/*
 * Issuing IDs over HTTP: the {key} and ?count=N of a GET, door_ids_issue() and
 * its outcome as an HTTP answer (the IDs one per line, an ID error, the 307
 * to the sequence primary). The one path every ID route takes.
 */
#include "api_ids.h"

#include <stdlib.h>
#include <string.h>

#include "door_http.h"
#include "door_http_auth.h"
#include "num.h"
#include "validate.h"

/* Answers 200 text/plain with the IDs, one per line (never kept by a cache). */
static void api_ids_respond(struct http_request *req, const int64_t *ids, int n) {
    char small[IDS_STACK * 21];
    if (n <= IDS_STACK) {
        size_t len = 0;
        for (int i = 0; i < n; i++) {
            if (i) {
                small[len++] = '\n';
            }
            len += num_format_i64(small + len, ids[i]);
        }
        http_respond_ex(req, 200, "text/plain", DOOR_HTTP_NO_STORE, small, len);
        return;
    }
    struct sbuf text = SBUF_INIT;
    if (sbuf_reserve(&text, (size_t)n * 21) == LEAF_OK) {
        for (int i = 0; i < n; i++) {
            if (i) {
                text.data[text.len++] = '\n';
            }
            text.len += num_format_i64(text.data + text.len, ids[i]);
        }
    }
    if (text.failed) {
        door_http_respond_sbuf(req, 200, "text/plain", &text); /* the 500 */
    } else {
        http_respond_ex(req, 200, "text/plain", DOOR_HTTP_NO_STORE, text.data ? text.data : "",
                        text.len);
    }
    sbuf_free(&text);
}

/* Answers 200 text/plain with the text of the IDs of a text mode (IDS_MODES' text column: UUIDs,
 * business numbers), one per line. */
static void api_ids_respond_text(struct http_request *req, const struct ids_call *c,
                                 const int64_t *ids, int n) {
    struct sbuf text = SBUF_INIT;
    char *raw = malloc((size_t)n * DOOR_IDS_TEXT_MAX);
    size_t *lens = malloc((size_t)n * sizeof(*lens));
    if (raw == NULL || lens == NULL ||
        sbuf_reserve(&text, (size_t)n * (DOOR_IDS_TEXT_MAX + 1)) != LEAF_OK) {
        door_http_error(req, IDS_E_OUT_OF_MEMORY, NULL);
    } else if (door_ids_text(door_ctx(req), c, ids, n, raw, lens) != LEAF_OK) {
        door_http_error(req, IDS_E_RANDOM_FAILED, NULL);
    } else {
        for (int i = 0; i < n; i++) {
            if (i) {
                text.data[text.len++] = '\n';
            }
            memcpy(text.data + text.len, raw + (size_t)i * DOOR_IDS_TEXT_MAX, lens[i]);
            text.len += lens[i];
        }
        http_respond_ex(req, 200, "text/plain", DOOR_HTTP_NO_STORE, text.data, text.len);
    }
    free(raw);
    free(lens);
    sbuf_free(&text);
}

static void respond_redirect(struct http_request *req, const struct sequence_where *primary) {
    struct sbuf hdr = SBUF_INIT, body = SBUF_INIT;
    sbuf_printf(&hdr, "Location: http://%s%.*s%s%.*s\r\n", primary->http, (int)req->path_len,
                req->path, req->query_len ? "?" : "", (int)req->query_len, req->query);
    const struct door_error_info *e = door_error(IDS_E_NOT_PRIMARY);
    sbuf_printf(&body, "{\"code\":\"%s\",\"message\":\"%s\",\"primary\":\"%s\"}", e->code,
                e->message, primary->http);
    if (hdr.failed || body.failed) {
        door_http_error(req, IDS_E_OUT_OF_MEMORY, NULL);
    } else {
        http_respond_ex(req, e->http_status, "application/json", hdr.data, body.data, body.len);
    }
    sbuf_free(&hdr);
    sbuf_free(&body);
}

/*
 * Reads the {key} after `prefix_len` bytes of the path and the optional
 * ?count=N; answers 400 itself and returns LEAF_EINVAL when either is bad.
 */
static leaf_status_t api_ids_key_and_count(struct http_request *req, size_t prefix_len,
                                           const char **key, size_t *key_len, int *count) {
    *key = req->path + prefix_len;
    *key_len = req->path_len - prefix_len;
    if (!validate_tag(*key, *key_len)) {
        door_http_error(req, IDS_E_BAD_TAG, NULL);
        return LEAF_EINVAL;
    }
    const char *val;
    size_t len;
    *count = 1;
    if (door_http_query(req, "count", &val, &len) && validate_count(val, len, count) != LEAF_OK) {
        door_http_error(req, IDS_E_BAD_COUNT, NULL);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* Issues c->count IDs for the request (c filled by the caller); LEAF_OK when issued, else the
 * request was answered or parked. */
static leaf_status_t api_ids_call(struct http_request *req, struct ids_call *c, int64_t *ids) {
    leaf_status_t rc = door_ids_issue(door_ctx(req), c, ids);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = c->retry_ms;
    } else if (rc != LEAF_OK && c->err == IDS_E_NOT_PRIMARY) {
        respond_redirect(req, &c->primary);
    } else if (rc != LEAF_OK) {
        door_http_error(req, c->err, NULL);
    }
    return rc;
}

static void api_ids_call_init(struct ids_call *c, struct http_request *req, enum ids_mode mode,
                              const char *key, size_t key_len, int count) {
    *c = (struct ids_call){
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
}

/* Issues count IDs for the request; LEAF_OK when the request was answered. */
leaf_status_t api_ids_issue(struct http_request *req, enum ids_mode mode, const char *key,
                            size_t key_len, int count, int64_t *ids) {
    struct ids_call c;
    api_ids_call_init(&c, req, mode, key, key_len, count);
    return api_ids_call(req, &c, ids);
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
        door_http_error(req, IDS_E_OUT_OF_MEMORY, NULL);
        return LEAF_OK;
    }
    struct ids_call c;
    api_ids_call_init(&c, req, mode, key, key_len, count);
    leaf_status_t rc = api_ids_call(req, &c, ids);
    if (rc == LEAF_OK && ids_mode_info(mode)->text) {
        api_ids_respond_text(req, &c, ids, count);
    } else if (rc == LEAF_OK) {
        api_ids_respond(req, ids, count);
    }
    door_ids_free(stack, ids);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}
