/*
 * What the HTTP handlers and the pages share to read a request's arguments
 * and write its answer: the query, a growable body, IDs one per line, an ID
 * error and the 307 to the sequence primary. Below every handler; knows no
 * route.
 */
#include "door_http.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "num.h"

cJSON *door_http_body(const struct http_request *req) {
    const char *end = req->body, *stop = req->body + req->body_len;
    cJSON *root = cJSON_ParseWithLengthOpts(req->body, req->body_len, &end, 0);
    while (root != NULL && end < stop &&
           (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) {
        end++;
    }
    if (root == NULL || !cJSON_IsObject(root) || end != stop) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int door_http_query(const struct http_request *req, const char *name, const char **val,
                    size_t *len) {
    size_t name_len = strlen(name);
    const char *p = req->query, *end = req->query + req->query_len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        if ((size_t)(stop - p) >= name_len && memcmp(p, name, name_len) == 0 &&
            (p + name_len == stop || p[name_len] == '=')) {
            /* "name" alone counts as present with an empty value */
            *val = p + name_len + (p + name_len < stop);
            *len = (size_t)(stop - *val);
            return 1;
        }
        p = stop + 1;
    }
    return 0;
}

void door_http_respond_sbuf(struct http_request *req, int status, const char *type,
                            struct sbuf *b) {
    if (b->failed) {
        http_respond_error(req, 500, "out_of_memory", "out of memory building the answer");
        return;
    }
    http_respond(req, status, type, b->data ? b->data : "", b->len);
}

void door_http_respond_ids(struct http_request *req, const int64_t *ids, int n) {
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

void door_http_respond_ids_error(struct http_request *req, enum ids_error e) {
    const struct ids_error_info *info = door_ids_error(e);
    http_respond_error(req, info->http_status, info->code, info->message);
}

void door_http_respond_redirect(struct http_request *req, const struct sequence_where *primary) {
    struct sbuf hdr = SBUF_INIT, body = SBUF_INIT;
    sbuf_printf(&hdr, "Location: http://%s%.*s%s%.*s\r\n", primary->http, (int)req->path_len,
                req->path, req->query_len ? "?" : "", (int)req->query_len, req->query);
    sbuf_printf(&body,
                "{\"code\":\"not_primary\",\"message\":\"this node is a standby; ask the "
                "sequence primary\",\"primary\":\"%s\"}",
                primary->http);
    if (hdr.failed || body.failed) {
        door_http_respond_ids_error(req, IDS_E_OUT_OF_MEMORY);
    } else {
        http_respond_ex(req, 307, "application/json", hdr.data, body.data, body.len);
    }
    sbuf_free(&hdr);
    sbuf_free(&body);
}
