/*
 * Issuing IDs over HTTP: the {key} and ?count=N of a GET, door_ids_issue_reply()
 * and its outcome as an HTTP answer (the IDs one per line, integers and texts
 * alike, an ID error, the 307 to the sequence primary). The one path every ID
 * route takes.
 */
#include "api_ids.h"

#include <string.h>

#include "door_http.h"
#include "door_http_auth.h"
#include "num.h"
#include "validate.h"

/* The bytes one ID of r takes as a line: its text, or a decimal int64 and the newline. */
static size_t ids_line_max(const struct ids_reply *r) {
    return r->text ? DOOR_IDS_TEXT_MAX + 1 : 21;
}

/* Writes r's IDs into out, one per line, integers or texts alike; returns the length. */
static size_t ids_lines(const struct ids_reply *r, char *out) {
    size_t len = 0;
    for (int i = 0; i < r->count; i++) {
        size_t n;
        const char *text = door_ids_reply_text(r, i, &n);
        if (i) {
            out[len++] = '\n';
        }
        if (text != NULL) {
            memcpy(out + len, text, n);
            len += n;
        } else {
            len += num_format_i64(out + len, r->ids[i]);
        }
    }
    return len;
}

/* Answers 200 text/plain with the IDs, one per line (never kept by a cache). */
static void api_ids_respond(struct http_request *req, const struct ids_reply *r) {
    char small[IDS_STACK * (DOOR_IDS_TEXT_MAX + 1)];
    if (r->count <= IDS_STACK) {
        http_respond_ex(req, 200, "text/plain", DOOR_HTTP_NO_STORE, small, ids_lines(r, small));
        return;
    }
    struct sbuf b = SBUF_INIT;
    if (sbuf_reserve(&b, (size_t)r->count * ids_line_max(r)) == LEAF_OK) {
        b.len = ids_lines(r, b.data);
    }
    if (b.failed && r->text) {
        door_http_error(req, IDS_E_OUT_OF_MEMORY, NULL);
    } else if (b.failed) {
        door_http_respond_sbuf(req, 200, "text/plain", &b); /* the 500 */
    } else {
        http_respond_ex(req, 200, "text/plain", DOOR_HTTP_NO_STORE, b.data, b.len);
    }
    sbuf_free(&b);
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
 * Reads the {key} after the mode's prefix of the path (by the mode's key rule: a keyed
 * "{space}/{key}" is decoded into buf, IDS_MODE_HTTP_KEY_MAX bytes) and the optional
 * ?count=N; answers 400 itself and returns LEAF_EINVAL when either is bad.
 */
static leaf_status_t api_ids_key_and_count(struct http_request *req, enum ids_mode mode, char *buf,
                                           const char **key, size_t *key_len, int *count) {
    size_t prefix_len = ids_mode_info(mode)->http_prefix_len;
    if (!ids_mode_http_key(mode, req->path + prefix_len, req->path_len - prefix_len, buf,
                           IDS_MODE_HTTP_KEY_MAX, key, key_len)) {
        door_http_error(req, door_ids_key_error(mode), NULL);
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

/* Answers a refused call (the 307 to the primary, an ID error) or parks a waiting one; LEAF_OK
 * when issued, else the request was answered or parked. */
static leaf_status_t api_ids_outcome(struct http_request *req, const struct ids_call *c,
                                     leaf_status_t rc) {
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = c->retry_ms;
    } else if (rc != LEAF_OK && c->err == IDS_E_NOT_PRIMARY) {
        respond_redirect(req, &c->primary);
    } else if (rc != LEAF_OK) {
        char text[160];
        door_http_error(req, c->err, door_ids_error_text(c, text, sizeof(text)));
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
        .may_create = (mode == IDS_SEQUENCE || mode == IDS_KEYED) &&
                      door_http_auth_may(req, AUTH_NEED_CREATE, mode, key, key_len),
    };
}

/* Issues count IDs for the request; LEAF_OK when the request was answered. */
leaf_status_t api_ids_issue(struct http_request *req, enum ids_mode mode, const char *key,
                            size_t key_len, int count, int64_t *ids) {
    struct ids_call c;
    api_ids_call_init(&c, req, mode, key, key_len, count);
    return api_ids_outcome(req, &c, door_ids_issue(door_ctx(req), &c, ids));
}

/* GET <the mode's HTTP prefix>{key}[?count=N] (IDS_MODES): the IDs, one per line. */
leaf_status_t api_ids_get(struct http_request *req, enum ids_mode mode) {
    char buf[IDS_MODE_HTTP_KEY_MAX];
    const char *key;
    size_t key_len;
    int count;
    if (api_ids_key_and_count(req, mode, buf, &key, &key_len, &count) != LEAF_OK) {
        return LEAF_OK;
    }
    struct ids_call c;
    struct ids_reply r;
    api_ids_call_init(&c, req, mode, key, key_len, count);
    leaf_status_t rc = api_ids_outcome(req, &c, door_ids_issue_reply(door_ctx(req), &c, &r));
    if (rc == LEAF_OK) {
        api_ids_respond(req, &r);
    }
    door_ids_reply_free(&r);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}
