#include "http_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "metrics.h"
#include "router.h"


/* ---- output -------------------------------------------------------------- */

static int buf_reserve(struct http_buf *b, size_t extra) {
    if (b->len + extra <= b->cap) {
        return 0;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra) {
        cap *= 2;
    }
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        log_error("http", "realloc(%zu) for output failed", cap);
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

static const char *http_reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
    }
}

static char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *put_uint(char *p, size_t v) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) {
        *p++ = tmp[--n];
    }
    return p;
}

/* Status line and headers are assembled by hand: snprintf showed in profiles. */
static void proto_append_response(struct http_proto *p, int status, const char *type,
                                  const char *extra, const char *body, size_t body_len) {
    size_t extra_len = extra ? strlen(extra) : 0;
    if (buf_reserve(&p->out, body_len + extra_len + 256) != 0) {
        p->close_after = 1;
        return;
    }
    char *o = p->out.data + p->out.len;
    o = put_str(o, "HTTP/1.1 ");
    o = put_uint(o, (size_t)status);
    *o++ = ' ';
    o = put_str(o, http_reason(status));
    o = put_str(o, "\r\nContent-Type: ");
    o = put_str(o, type);
    o = put_str(o, "\r\nContent-Length: ");
    o = put_uint(o, body_len);
    if (p->close_after) {
        o = put_str(o, "\r\nConnection: close");
    } else if (p->parser.http_major == 1 && p->parser.http_minor == 0) {
        o = put_str(o, "\r\nConnection: keep-alive");
    }
    o = put_str(o, "\r\n");
    if (extra_len) {
        memcpy(o, extra, extra_len);
        o += extra_len;
    }
    o = put_str(o, "\r\n");
    if (p->head_only) {
        body_len = 0; /* HEAD: the headers of the GET answer, no body */
    }
    memcpy(o, body, body_len);
    p->out.len = (size_t)(o + body_len - p->out.data);
}

void http_respond_ex(struct http_request *req, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t body_len) {
    req->status = status;
    proto_append_response(req->proto, status, content_type, extra_headers, body, body_len);
}

void http_respond(struct http_request *req, int status, const char *content_type,
                  const char *body, size_t body_len) {
    http_respond_ex(req, status, content_type, NULL, body, body_len);
}

void http_respond_error(struct http_request *req, int status, const char *code,
                        const char *message) {
    char body[512];
    int n = snprintf(body, sizeof(body), "{\"code\":\"%s\",\"message\":\"%s\"}", code, message);
    if (n < 0 || (size_t)n >= sizeof(body)) {
        n = (int)sizeof(body) - 1;
    }
    http_respond(req, status, "application/json", body, (size_t)n);
}

void http_proto_fail(struct http_proto *p, int status, const char *code, const char *message) {
    struct http_request req = {.proto = p, .loop = p->loop};
    req.route = router_route_bad_request();
    p->close_after = 1;
    http_respond_error(&req, status, code, message);
    metrics_count_request(http_loop_index(p->loop), req.route, status);
}

/* ---- llhttp callbacks: copy what the router needs, enforce limits --------- */

static int on_message_begin(llhttp_t *lp) {
    struct http_proto *p = lp->data;
    p->url_len = p->head_bytes = p->field_len = p->auth_len = p->body_len = 0;
    p->in_auth = 0;
    p->too_large = 0;
    p->head_only = 0;
    if (p->head_started_ms == 0) {
        p->head_started_ms = http_loop_now(p->loop);
    }
    return 0;
}

/*
 * Appends a piece of the request (llhttp hands spans in pieces) to one of
 * its copies; over cap, records the status to answer with and stops parsing.
 */
static int proto_append(struct http_proto *p, char *dst, size_t *dst_len, size_t cap,
                        const char *at, size_t len, int status) {
    if (*dst_len + len > cap) {
        p->too_large = status;
        return HPE_USER;
    }
    memcpy(dst + *dst_len, at, len);
    *dst_len += len;
    return 0;
}

static int on_url(llhttp_t *lp, const char *at, size_t len) {
    struct http_proto *p = lp->data;
    return proto_append(p, p->url, &p->url_len, HTTP_MAX_URL, at, len, 414);
}

static int head_add(struct http_proto *p, size_t len) {
    p->head_bytes += len;
    if (p->head_bytes > HTTP_MAX_HEAD) {
        p->too_large = 431;
        return HPE_USER;
    }
    return 0;
}

static int on_header_field(llhttp_t *lp, const char *at, size_t len) {
    struct http_proto *p = lp->data;
    if (head_add(p, len) != 0) {
        return HPE_USER;
    }
    size_t room = sizeof(p->field) - 1 - p->field_len;
    size_t n = len < room ? len : room;
    memcpy(p->field + p->field_len, at, n);
    p->field_len += n;
    return 0;
}

static int on_header_field_complete(llhttp_t *lp) {
    struct http_proto *p = lp->data;
    p->in_auth = p->field_len == 13 && strncasecmp(p->field, "authorization", 13) == 0;
    if (p->in_auth) {
        p->auth_len = 0; /* the last Authorization header wins */
    }
    p->field_len = 0;
    return 0;
}

static int on_header_value(llhttp_t *lp, const char *at, size_t len) {
    struct http_proto *p = lp->data;
    if (head_add(p, len) != 0) {
        return HPE_USER;
    }
    return p->in_auth ? proto_append(p, p->auth, &p->auth_len, HTTP_MAX_AUTH, at, len, 431) : 0;
}

static int on_headers_complete(llhttp_t *lp) {
    struct http_proto *p = lp->data;
    if ((lp->flags & F_CONTENT_LENGTH) && lp->content_length > HTTP_MAX_BODY) {
        p->too_large = 413;
        return HPE_USER;
    }
    return 0;
}

static int on_body(llhttp_t *lp, const char *at, size_t len) {
    struct http_proto *p = lp->data;
    return proto_append(p, p->body, &p->body_len, HTTP_MAX_BODY, at, len, 413);
}

static int on_message_complete(llhttp_t *lp) {
    /* One request at a time: http_proto_execute() dispatches it, then resumes. */
    return HPE_PAUSED;
}

/* ---- dispatch -------------------------------------------------------------- */

/* "GET http://host:port/path" (absolute form, RFC 9112 3.2.2): keep the path. */
static void proto_strip_absolute_form(struct http_request *r) {
    const char *u = r->path;
    size_t skip = 0;
    if (r->path_len >= 7 && strncasecmp(u, "http://", 7) == 0) {
        skip = 7;
    } else if (r->path_len >= 8 && strncasecmp(u, "https://", 8) == 0) {
        skip = 8;
    } else {
        return;
    }
    const char *slash = memchr(u + skip, '/', r->path_len - skip);
    if (slash == NULL) {
        r->path = "/";
        r->path_len = 1;
        return;
    }
    r->path_len -= (size_t)(slash - u);
    r->path = slash;
}

static void proto_build_request(struct http_proto *p) {
    struct http_request *r = &p->req;
    p->url[p->url_len] = '\0';
    p->auth[p->auth_len] = '\0';
    *r = (struct http_request){
        .method = p->parser.method,
        .path = p->url,
        .path_len = p->url_len,
        .query = "",
        .body = p->body,
        .body_len = p->body_len,
        .auth = p->auth,
        .auth_len = p->auth_len,
        .loopback = p->loopback,
        .first_seen_ms = http_loop_now(p->loop),
        .started_ns = metrics_now_ns(),
        .loop = p->loop,
        .proto = p,
    };
    proto_strip_absolute_form(r);
    p->head_only = r->method == HTTP_HEAD;
    const char *q = memchr(r->path, '?', r->path_len);
    if (q != NULL) {
        r->query = q + 1;
        r->query_len = r->path_len - (size_t)(q - r->path) - 1;
        r->path_len = (size_t)(q - r->path);
    }
    if (!llhttp_should_keep_alive(&p->parser)) {
        p->close_after = 1;
    }
}

static void proto_dispatch(struct http_proto *p) {
    p->req.status = 0;
    p->req.retry_ms = 0;
    if (router_dispatch(&p->req) == LEAF_EAGAIN) {
        p->req.retries++;
        p->waiting = 1;
        return;
    }
    p->waiting = 0;
    p->head_started_ms = 0;
}

void http_proto_retry(struct http_proto *p) {
    proto_dispatch(p);
}

static void proto_parse_error(struct http_proto *p, llhttp_errno_t err) {
    switch (p->too_large) {
    case 414:
        http_proto_fail(p, 414, "uri_too_long", "request line longer than 2048 bytes");
        return;
    case 431:
        http_proto_fail(p, 431, "header_too_large", "request head larger than 8192 bytes");
        return;
    case 413:
        http_proto_fail(p, 413, "body_too_large", "request body larger than 16384 bytes");
        return;
    default: {
        char msg[160];
        snprintf(msg, sizeof(msg), "malformed HTTP request: %s", llhttp_errno_name(err));
        http_proto_fail(p, 400, "bad_request", msg);
    }
    }
}

size_t http_proto_execute(struct http_proto *p, const char *data, size_t len) {
    size_t used = 0;
    while (!p->waiting && !p->close_after && used < len && p->out.len < HTTP_MAX_OUTPUT) {
        llhttp_errno_t err = llhttp_execute(&p->parser, data + used, len - used);
        if (err == HPE_OK) {
            return len;
        }
        if (err != HPE_PAUSED) {
            proto_parse_error(p, err);
            return len;
        }
        used = (size_t)(llhttp_get_error_pos(&p->parser) - data);
        llhttp_resume(&p->parser);
        proto_build_request(p);
        proto_dispatch(p);
    }
    return used;
}

static const llhttp_settings_t proto_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void http_proto_init(struct http_proto *p, struct http_loop *loop, int loopback) {
    memset(p, 0, sizeof(*p)); /* out must have been freed (or never used) */
    p->loop = loop;
    p->loopback = loopback;
    llhttp_init(&p->parser, HTTP_REQUEST, &proto_settings);
    p->parser.data = p;
}

void http_proto_free(struct http_proto *p) {
    free(p->out.data);
    p->out = (struct http_buf){0};
}
