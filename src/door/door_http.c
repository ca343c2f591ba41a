/*
 * What the HTTP handlers and the pages share to read a request's arguments
 * and write its answer: the query, the body as a JSON object, an answer from
 * a growable buffer. Below every handler; knows no route.
 */
#include "door_http.h"

#include <cjson/cJSON.h>
#include <string.h>

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
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory building the answer");
        return;
    }
    http_respond(req, status, type, b->data ? b->data : "", b->len);
}

void door_http_error(struct http_request *req, enum door_error e, const char *message) {
    const struct door_error_info *info = door_error(e);
    http_respond_error(req, info->http_status, info->code,
                       message != NULL ? message : info->message);
}

void door_http_error_ex(struct http_request *req, enum door_error e, const char *extra_headers,
                        const char *message) {
    const struct door_error_info *info = door_error(e);
    const char *msg = message != NULL ? message : info->message;
    struct sbuf b = SBUF_INIT;
    sbuf_printf(&b, "{\"code\":\"%s\",\"message\":", info->code);
    sbuf_json_str(&b, msg, strlen(msg));
    sbuf_putc(&b, '}');
    if (b.failed) {
        door_http_error(req, e, message);
    } else {
        http_respond_ex(req, info->http_status, "application/json", extra_headers, b.data, b.len);
    }
    sbuf_free(&b);
}

void door_http_error_code(struct http_request *req, const char *code, const char *message) {
    enum door_error e = DOOR_E_BAD_REQUEST;
    (void)door_error_by_code(code, &e); /* every code segment_request.c hands back is a row */
    door_http_error(req, e, message);
}
