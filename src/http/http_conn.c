#include "http_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "http_check.h"
#include "num.h"

/*
 * Requests answered in one call from the server, reported to the done hook
 * together at its end with one clock reading (on the caller's stack: an idle
 * connection holds none of it).
 */
#define PROTO_BATCH_MAX 64
struct proto_batch {
    int n;
    struct {
        int route, status;
        int64_t started_ns;
    } done[PROTO_BATCH_MAX];
};

/* The header values kept for the handler (struct http_request's host, origin, ...). */
enum proto_kept { KEPT_HOST, KEPT_ORIGIN, KEPT_CTYPE, KEPT_SITE, PROTO_KEPT_N };
#define PROTO_KEPT_MAX 256 /* longer Origin, Content-Type or Sec-Fetch-Site values: 400 */

/*
 * One connection's protocol state. The request being received is copied
 * into head, which is allocated when a request starts and released when the
 * connection goes idle: url, then the Authorization value, then the body.
 */
struct http_conn {
    struct session s; /* first: the server sees only this */
    llhttp_t parser;
    const struct http_conn_config *cfg;

    struct sbuf head; /* the request being received */
    size_t url_len;
    size_t auth_off, auth_len;
    size_t body_off, body_len;
    /* Host, Origin, Content-Type and Sec-Fetch-Site, kept in head for the handler (the
     * same-origin and JSON-only rule of state changes); their len is -1 when absent. */
    size_t kept_off[PROTO_KEPT_N];
    long kept_len[PROTO_KEPT_N];
    size_t head_bytes;
    char field[32];
    size_t field_len;
    int hdr;           /* enum proto_header: the header whose value is being received */
    int auth_too_long; /* the Authorization value passed HTTP_MAX_AUTH: bad credentials */
    int in_body;
    int auth_seen; /* Authorization headers seen */
    int kept;      /* enum proto_kept of the value being received (hdr == HDR_KEPT) */
    int head_only; /* the request is HEAD: answers carry no body */

    /* What RFC 9112 checks need of the head: Host, Expect, Transfer-Encoding. */
    char value[128]; /* the current Host/Expect/Transfer-Encoding value */
    size_t value_len;
    int hosts;           /* Host headers seen */
    int expect_continue; /* Expect: 100-continue */
    int expect_other;    /* any other expectation: 417 */
    int te_other;        /* a transfer coding other than chunked: 501 */

    /* Set when the request is refused while parsing: answered, then the connection closes. */
    int reject; /* 1: refused, as reject_error says */
    enum http_conn_error reject_error;
    const char *reject_msg;

    /* Folded header lines (obs-fold) are told apart from a value split across reads by the
     * bytes before a value: the start of the bytes being parsed, and whether the bytes parsed
     * before them ended in a line feed (followed by blanks only). */
    const char *exec_start;
    int tail_nl;

    struct http_request req; /* the request dispatched last (kept while parked) */

    struct proto_batch *batch; /* during a call from the server */
};

/* ---- output -------------------------------------------------------------- */

static const char *http_reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 307: return "Temporary Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

static char *put_str(char *o, const char *s) {
    size_t n = strlen(s);
    memcpy(o, s, n); /* NOLINT(bugprone-not-null-terminated-result): a head, not a string */
    return o + n;
}

static char *put_num(char *o, int64_t v) {
    return o + num_format_i64(o, v);
}

/* Status line and headers are assembled by hand: snprintf showed in profiles. */
static void proto_append_response(struct http_conn *p, int status, const char *type,
                                  const char *extra, const char *body, size_t body_len) {
    struct sbuf *out = &p->s.out;
    size_t extra_len = extra ? strlen(extra) : 0;
    if (sbuf_reserve(out, body_len + extra_len + strlen(type) + 192) != LEAF_OK) {
        p->s.close_after = 1;
        return;
    }
    char *o = out->data + out->len;
    o = put_str(o, "HTTP/1.1 ");
    o = put_num(o, status);
    *o++ = ' ';
    o = put_str(o, http_reason(status));
    o = put_str(o, "\r\nContent-Type: ");
    o = put_str(o, type);
    o = put_str(o, "\r\nContent-Length: ");
    o = put_num(o, (int64_t)body_len);
    if (p->s.close_soon) {
        p->s.close_after = 1; /* an in-place upgrade: this answer is the last */
    }
    if (p->s.close_after) {
        o = put_str(o, "\r\nConnection: close");
    } else if (p->parser.http_major == 1 && p->parser.http_minor == 0) {
        o = put_str(o, "\r\nConnection: keep-alive");
    }
    o = put_str(o, "\r\n");
    if (extra_len) {
        memcpy(o, extra, extra_len); /* NOLINT(bugprone-not-null-terminated-result): ditto */
        o += extra_len;
    }
    o = put_str(o, "\r\n");
    if (!p->head_only && body_len > 0) { /* HEAD: the GET answer's headers, no body */
        memcpy(o, body, body_len);
        o += body_len;
    }
    out->len = (size_t)(o - out->data);
    out->data[out->len] = '\0';
}

void http_respond_ex(struct http_request *req, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t body_len) {
    req->status = status;
    proto_append_response(req->proto, status, content_type, extra_headers, body, body_len);
}

void http_respond(struct http_request *req, int status, const char *content_type, const char *body,
                  size_t body_len) {
    http_respond_ex(req, status, content_type, NULL, body, body_len);
}

/*
 * s as the inside of a JSON string into out (cap bytes, NUL-terminated): quotes,
 * backslashes and control bytes escaped. A message may quote the client's text
 * (an unknown field's name); cut short rather than cut inside an escape.
 */
static void json_escape(const char *s, char *out, size_t cap) {
    size_t o = 0;
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        size_t n = 1;
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c, n = 2;
        } else if (c < 0x20 || c == 0x7f) {
            n = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
        } else {
            esc[0] = (char)c;
        }
        if (o + n >= cap) {
            break;
        }
        memcpy(out + o, esc, n);
        o += n;
    }
    out[o] = '\0';
}

void http_respond_error(struct http_request *req, int status, const char *code,
                        const char *message) {
    char body[640], msg[512];
    json_escape(message, msg, sizeof(msg));
    int n = snprintf(body, sizeof(body), "{\"code\":\"%s\",\"message\":\"%s\"}", code, msg);
    if (n < 0 || (size_t)n >= sizeof(body)) {
        n = snprintf(body, sizeof(body), "{\"code\":\"%s\",\"message\":\"\"}", code);
    }
    http_respond(req, status, "application/json", body, (size_t)n);
}

const char *http_method_name(int method) {
    return llhttp_method_name((llhttp_method_t)method);
}

int64_t http_request_now(const struct http_request *req) {
    return req->proto->s.now_ms;
}

/* Reports the batch's requests to the done hook: one clock reading for all. */
static void proto_batch_flush(struct http_conn *p) {
    struct proto_batch *b = p->batch;
    if (b->n == 0) {
        return;
    }
    struct http_request r = {
        .loop = p->s.loop,
        .ctx = p->cfg->ctx,
        .proto = p,
        .finished_ns = clock_mono_ns(),
    };
    for (int i = 0; i < b->n; i++) {
        r.route = b->done[i].route;
        r.status = b->done[i].status;
        r.started_ns = b->done[i].started_ns;
        p->cfg->done(&r);
    }
    b->n = 0;
}

static void proto_done(struct http_conn *p) {
    struct proto_batch *b = p->batch;
    if (p->cfg->done == NULL) {
        return;
    }
    if (b->n == PROTO_BATCH_MAX) {
        proto_batch_flush(p);
    }
    b->done[b->n].route = p->req.route;
    b->done[b->n].status = p->req.status;
    b->done[b->n].started_ns = p->req.started_ns;
    b->n++;
}

/* Brackets a call from the server: what it answers is reported at its end. */
static void proto_batch_begin(struct http_conn *p, struct proto_batch *b) {
    b->n = 0;
    p->batch = b;
}

static void proto_batch_end(struct http_conn *p) {
    proto_batch_flush(p);
    p->batch = NULL;
}

static const struct {
    int status;
    const char *code;
} proto_errors[HTTP_E_COUNT] = {
#define HTTP_CONN_ERROR_ROW(e, status, code, meaning) [e] = {status, code},
    HTTP_CONN_ERRORS(HTTP_CONN_ERROR_ROW)
#undef HTTP_CONN_ERROR_ROW
};

/* Answers with an error of the HTTP layer itself and closes after it. */
static void proto_fail(struct http_conn *p, enum http_conn_error e, const char *message) {
    p->req = (struct http_request){
        .route = HTTP_ROUTE_NONE,
        .loop = p->s.loop,
        .started_ns = p->s.now_ns,
        .ctx = p->cfg->ctx,
        .proto = p,
    };
    p->s.close_after = 1;
    p->head_only = 0;
    http_respond_error(&p->req, proto_errors[e].status, proto_errors[e].code, message);
    p->s.head_started_ms = 0;
    proto_done(p);
}

/* ---- llhttp callbacks: copy what the handler needs, enforce limits -------- */

/* The headers whose values the protocol itself reads. */
enum proto_header { HDR_OTHER, HDR_AUTH, HDR_HOST, HDR_EXPECT, HDR_TE, HDR_KEPT };

/* Refuses the request being parsed: it is answered with e's status and code, then the
 * connection closes. */
static int proto_reject(struct http_conn *p, enum http_conn_error e, const char *msg) {
    p->reject = 1;
    p->reject_error = e;
    p->reject_msg = msg;
    return HPE_USER;
}

static int on_message_begin(llhttp_t *lp) {
    struct http_conn *p = lp->data;
    sbuf_reset(&p->head);
    p->url_len = p->auth_off = p->auth_len = p->body_off = p->body_len = 0;
    p->head_bytes = p->field_len = p->value_len = 0;
    p->hdr = HDR_OTHER;
    p->in_body = p->auth_too_long = p->auth_seen = 0;
    p->head_only = 0;
    p->hosts = p->expect_continue = p->expect_other = p->te_other = 0;
    p->reject = 0;
    for (int i = 0; i < PROTO_KEPT_N; i++) {
        p->kept_len[i] = -1;
    }
    if (p->s.head_started_ms == 0) {
        p->s.head_started_ms = p->s.now_ms;
    }
    return 0;
}

/* Appends a piece of the request to head; over the cap, refuses with the status given. */
static int proto_append(struct http_conn *p, size_t *len, size_t cap, const char *at, size_t n,
                        int status) {
    if (*len + n > cap) {
        switch (status) {
        case 414:
            return proto_reject(p, HTTP_E_URI_TOO_LONG, "request line longer than 2048 bytes");
        case 413:
            return proto_reject(p, HTTP_E_BODY_TOO_LARGE, "request body larger than 16384 bytes");
        default:
            return proto_reject(p, HTTP_E_HEADER_TOO_LARGE, "request head larger than 16384 bytes");
        }
    }
    sbuf_append(&p->head, at, n);
    if (p->head.failed) {
        return proto_reject(p, HTTP_E_OUT_OF_MEMORY, "out of memory receiving the request");
    }
    *len += n;
    return 0;
}

static int on_url(llhttp_t *lp, const char *at, size_t len) {
    struct http_conn *p = lp->data;
    return proto_append(p, &p->url_len, HTTP_MAX_URL, at, len, 414);
}

static int head_add(struct http_conn *p, size_t len) {
    p->head_bytes += len;
    if (p->head_bytes > HTTP_MAX_HEAD) {
        return proto_reject(p, HTTP_E_HEADER_TOO_LARGE, "request head larger than 16384 bytes");
    }
    return 0;
}

static int on_header_field(llhttp_t *lp, const char *at, size_t len) {
    struct http_conn *p = lp->data;
    if (head_add(p, len) != 0) {
        return HPE_USER;
    }
    if (http_check_name_has_blank(at, len)) { /* "Host :": RFC 9112 5.1 */
        return proto_reject(p, HTTP_E_BAD_REQUEST, "whitespace in a header field name");
    }
    size_t room = sizeof(p->field) - 1 - p->field_len;
    size_t n = len < room ? len : room;
    memcpy(p->field + p->field_len, at, n);
    p->field_len += n;
    return 0;
}

static int field_is(const struct http_conn *p, const char *name) {
    size_t n = strlen(name);
    return p->field_len == n && strncasecmp(p->field, name, n) == 0;
}

/* Starts keeping the value of a header of enum proto_kept; a second one is refused. */
static int proto_keep(struct http_conn *p, int which) {
    if (p->kept_len[which] >= 0) {
        return proto_reject(p, HTTP_E_BAD_REQUEST,
                            "more than one Origin, Content-Type or Sec-Fetch-Site header");
    }
    p->kept = which;
    p->kept_off[which] = p->head.len;
    p->kept_len[which] = 0;
    p->hdr = HDR_KEPT;
    return 0;
}

static int on_header_field_complete(llhttp_t *lp) {
    struct http_conn *p = lp->data;
    p->hdr = field_is(p, "authorization")       ? HDR_AUTH
             : field_is(p, "host")              ? HDR_HOST
             : field_is(p, "expect")            ? HDR_EXPECT
             : field_is(p, "transfer-encoding") ? HDR_TE
                                                : HDR_OTHER;
    int keep = field_is(p, "origin")           ? KEPT_ORIGIN
               : field_is(p, "content-type")   ? KEPT_CTYPE
               : field_is(p, "sec-fetch-site") ? KEPT_SITE
                                               : -1;
    if (keep >= 0 && proto_keep(p, keep) != 0) {
        return HPE_USER;
    }
    if (p->hdr == HDR_AUTH) {
        /* Two credentials in one request: which one counts is a guess. Refuse it. */
        if (p->auth_seen++) {
            return proto_reject(p, HTTP_E_BAD_REQUEST, "more than one Authorization header");
        }
        p->auth_off = p->head.len;
        p->auth_len = 0;
        p->auth_too_long = 0;
    }
    if (p->hdr == HDR_HOST && ++p->hosts > 1) { /* RFC 9112 3.2 */
        return proto_reject(p, HTTP_E_BAD_REQUEST, "more than one Host header");
    }
    p->field_len = 0;
    p->value_len = 0;
    return 0;
}

static int on_header_value(llhttp_t *lp, const char *at, size_t len) {
    struct http_conn *p = lp->data;
    if (head_add(p, len) != 0) {
        return HPE_USER;
    }
    if (len > 0 && http_check_folded(at, p->exec_start, p->tail_nl)) { /* obs-fold: RFC 9112 5.2 */
        return proto_reject(p, HTTP_E_BAD_REQUEST, "folded header line (obs-fold)");
    }
    if (p->hdr == HDR_AUTH) {
        if (p->auth_too_long || p->auth_len + len > HTTP_MAX_AUTH) {
            /* Credentials that long are wrong ones (401), not a reason to drop the connection. */
            p->auth_too_long = 1;
            return 0;
        }
        return proto_append(p, &p->auth_len, HTTP_MAX_AUTH, at, len, 431);
    }
    if (p->hdr == HDR_KEPT) {
        size_t n = (size_t)p->kept_len[p->kept];
        if (n + len > PROTO_KEPT_MAX) {
            return proto_reject(p, HTTP_E_BAD_REQUEST,
                                "Origin, Content-Type or Sec-Fetch-Site too long");
        }
        int rc = proto_append(p, &n, PROTO_KEPT_MAX, at, len, 431);
        p->kept_len[p->kept] = (long)n;
        return rc;
    }
    if (p->hdr != HDR_OTHER) {
        if (p->value_len + len > sizeof(p->value)) {
            return proto_reject(p, HTTP_E_BAD_REQUEST,
                                "Host, Expect or Transfer-Encoding too long");
        }
        memcpy(p->value + p->value_len, at, len);
        p->value_len += len;
    }
    return 0;
}

static int on_header_value_complete(llhttp_t *lp) {
    struct http_conn *p = lp->data;
    switch (p->hdr) {
    case HDR_HOST:
        if (!http_check_host(p->value, p->value_len)) {
            return proto_reject(p, HTTP_E_BAD_REQUEST, "invalid Host header");
        }
        p->kept_off[KEPT_HOST] = p->head.len; /* kept for the same-origin rule */
        p->kept_len[KEPT_HOST] = (long)p->value_len;
        sbuf_append(&p->head, p->value, p->value_len);
        if (p->head.failed) {
            return proto_reject(p, HTTP_E_OUT_OF_MEMORY, "out of memory receiving the request");
        }
        break;
    case HDR_EXPECT:
        if (http_check_expect_continue(p->value, p->value_len)) {
            p->expect_continue = 1;
        } else {
            p->expect_other = 1;
        }
        break;
    case HDR_TE:
        if (!http_check_te_chunked_only(p->value, p->value_len)) {
            p->te_other = 1;
        }
        break;
    default: break;
    }
    p->hdr = HDR_OTHER;
    return 0;
}

/* RFC 9112's rules for the whole head; 0 to go on, HPE_USER after proto_reject(). */
static int proto_check_head(struct http_conn *p, const llhttp_t *lp) {
    if (lp->http_major == 0) { /* "GET /path" alone: HTTP/0.9 is not served */
        return proto_reject(p, HTTP_E_BAD_REQUEST, "request line without an HTTP/1.x version");
    }
    if (lp->http_major > 1) {
        return proto_reject(p, HTTP_E_VERSION_NOT_SUPPORTED, "only HTTP/1.x is served");
    }
    if (lp->http_minor >= 1 && p->hosts == 0) { /* RFC 9112 3.2 */
        return proto_reject(p, HTTP_E_BAD_REQUEST, "HTTP/1.1 request without a Host header");
    }
    if (lp->flags & F_TRANSFER_ENCODING) {
        if (!(lp->flags & F_CHUNKED)) { /* RFC 9112 6.3: chunked must be the final coding */
            return proto_reject(p, HTTP_E_BAD_REQUEST, "chunked is not the final transfer coding");
        }
        if (lp->http_minor == 0) { /* RFC 9112 6.1: a 1.0 message may not be chunked */
            return proto_reject(p, HTTP_E_BAD_REQUEST, "Transfer-Encoding in an HTTP/1.0 request");
        }
        if (p->te_other) {
            return proto_reject(p, HTTP_E_NOT_IMPLEMENTED, "only the chunked transfer coding");
        }
    }
    if (p->expect_other) {
        return proto_reject(p, HTTP_E_EXPECTATION_FAILED, "only Expect: 100-continue is met");
    }
    if ((lp->flags & F_CONTENT_LENGTH) && lp->content_length > HTTP_MAX_BODY) {
        return proto_reject(p, HTTP_E_BODY_TOO_LARGE, "request body larger than 16384 bytes");
    }
    return 0;
}

static int on_headers_complete(llhttp_t *lp) {
    struct http_conn *p = lp->data;
    if (proto_check_head(p, lp) != 0) {
        return HPE_USER;
    }
    p->hdr = HDR_OTHER;
    /* RFC 9110 10.1.1: answer 100 before a body the client holds back; not to HTTP/1.0. */
    int body_follows =
        (lp->flags & F_CHUNKED) || ((lp->flags & F_CONTENT_LENGTH) && lp->content_length > 0);
    if (p->expect_continue && lp->http_minor >= 1 && body_follows) {
        sbuf_puts(&p->s.out, "HTTP/1.1 100 Continue\r\n\r\n");
    }
    return 0;
}

static int on_body(llhttp_t *lp, const char *at, size_t len) {
    struct http_conn *p = lp->data;
    if (!p->in_body) {
        p->in_body = 1;
        p->body_off = p->head.len;
    }
    return proto_append(p, &p->body_len, HTTP_MAX_BODY, at, len, 413);
}

static int on_message_complete(llhttp_t *lp) {
    /* One request at a time: http_input() dispatches it, then resumes. */
    return HPE_PAUSED;
}

/* ---- dispatch -------------------------------------------------------------- */

/* "GET http://host:port/path" (absolute form, RFC 9112 3.2.2): keep the path. */
static void proto_strip_absolute_form(struct http_request *r) {
    const char *u = r->path;
    size_t skip = 0;
    if (r->path_len == 0 || u[0] == '/') {
        return; /* origin-form, the usual: no scheme to look for */
    }
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

/* A kept header's value in head, or NULL when the request had none. */
static const char *proto_kept_value(const struct http_conn *p, int which, size_t *len) {
    if (p->kept_len[which] < 0 || p->head.data == NULL) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)p->kept_len[which];
    return p->head.data + p->kept_off[which];
}

static void proto_build_request(struct http_conn *p) {
    struct http_request *r = &p->req;
    const char *base = p->head.data ? p->head.data : "";
    *r = (struct http_request){
        .method = p->parser.method,
        .path = base,
        .path_len = p->url_len,
        .query = "",
        .body = p->body_len ? base + p->body_off : "",
        .body_len = p->body_len,
        .auth = p->auth_len ? base + p->auth_off : "",
        .auth_len = p->auth_len,
        .auth_too_long = p->auth_too_long,
        .loopback = p->s.loopback,
        .peer = p->s.peer,
        .loop = p->s.loop,
        .first_seen_ms = p->s.now_ms,
        .started_ns = p->s.now_ns,
        .route = HTTP_ROUTE_NONE,
        .ticket = -1,
        .wait = &p->s.wait,
        .ctx = p->cfg->ctx,
        .proto = p,
    };
    r->host = proto_kept_value(p, KEPT_HOST, &r->host_len);
    r->origin = proto_kept_value(p, KEPT_ORIGIN, &r->origin_len);
    r->content_type = proto_kept_value(p, KEPT_CTYPE, &r->content_type_len);
    r->fetch_site = proto_kept_value(p, KEPT_SITE, &r->fetch_site_len);
    proto_strip_absolute_form(r);
    p->head_only = r->method == HTTP_HEAD;
    const char *q = memchr(r->path, '?', r->path_len);
    if (q != NULL) {
        r->query = q + 1;
        r->query_len = r->path_len - (size_t)(q - r->path) - 1;
        r->path_len = (size_t)(q - r->path);
    }
    if (!llhttp_should_keep_alive(&p->parser)) {
        p->s.close_after = 1;
    }
}

static void proto_dispatch(struct http_conn *p) {
    p->req.status = 0;
    p->req.retry_ms = 0;
    if (p->cfg->handler(&p->req) == LEAF_EAGAIN) {
        p->req.retries++;
        p->s.waiting = 1;
        p->s.resume_after_ms = p->req.retry_ms;
        return;
    }
    leaf_wait_cancel(&p->s.wait); /* whatever registration the handler left */
    p->s.waiting = 0;
    p->s.head_started_ms = 0;
    proto_done(p);
}

static void proto_parse_error(struct http_conn *p, llhttp_errno_t err) {
    if (p->reject != 0) {
        proto_fail(p, p->reject_error, p->reject_msg);
        return;
    }
    char msg[160];
    snprintf(msg, sizeof(msg), "malformed HTTP request: %s", llhttp_errno_name(err));
    proto_fail(p, HTTP_E_BAD_REQUEST, msg);
}

/* ---- the protocol's entry points ------------------------------------------ */

static size_t http_input_batch(struct session *s, const char *data, size_t len) {
    struct http_conn *p = (struct http_conn *)s;
    size_t used = 0;
    while (!s->waiting && !s->close_after && used < len && s->out.len < session_out_max(s)) {
        p->exec_start = data + used;
        llhttp_errno_t err = llhttp_execute(&p->parser, data + used, len - used);
        if (err == HPE_OK) {
            p->tail_nl = http_check_tail_nl(data + used, len - used, p->tail_nl);
            return len;
        }
        if (err != HPE_PAUSED) {
            proto_parse_error(p, err);
            return len;
        }
        size_t end = (size_t)(llhttp_get_error_pos(&p->parser) - data);
        p->tail_nl = http_check_tail_nl(data + used, end - used, p->tail_nl);
        used = end;
        llhttp_resume(&p->parser);
        proto_build_request(p);
        proto_dispatch(p);
    }
    return used;
}

static size_t http_input(struct session *s, const char *data, size_t len) {
    struct http_conn *p = (struct http_conn *)s;
    struct proto_batch b;
    proto_batch_begin(p, &b);
    size_t used = http_input_batch(s, data, len);
    proto_batch_end(p);
    return used;
}

static void http_resume(struct session *s) {
    struct http_conn *p = (struct http_conn *)s;
    struct proto_batch b;
    proto_batch_begin(p, &b);
    proto_dispatch(p);
    proto_batch_end(p);
}

static void http_timeout(struct session *s) {
    struct http_conn *p = (struct http_conn *)s;
    struct proto_batch b;
    proto_batch_begin(p, &b);
    proto_fail(p, HTTP_E_REQUEST_TIMEOUT, "request head not received in time");
    proto_batch_end(p);
}

static void http_idle(struct session *s) {
    struct http_conn *p = (struct http_conn *)s;
    if (s->head_started_ms == 0 && !s->waiting) {
        sbuf_free(&p->head);
    }
}

static void http_close(struct session *s) {
    struct http_conn *p = (struct http_conn *)s;
    sbuf_free(&p->head);
    sbuf_free(&s->out);
    free(p);
}

static const llhttp_settings_t proto_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static struct session *http_open(void *arg, int loopback, int loop) {
    struct http_conn *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    p->cfg = arg;
    p->s.loopback = loopback;
    p->s.loop = loop;
    sbuf_init(&p->s.out, 0);
    sbuf_init(&p->head, 0);
    llhttp_init(&p->parser, HTTP_REQUEST, &proto_settings);
    /* Any HTTP/d.d reaches proto_check_head: 1.2 is served as 1.1, 2.0 gets 505. */
    p->parser.lenient_flags |= LENIENT_VERSION;
    p->parser.data = p;
    return &p->s;
}

/* A connection refused at accept (docs/reference/configuration.md, the connection limits). */
static size_t http_refusal(char *buf, size_t cap) {
    static const char message[] = "the node holds all the connections it allows "
                                  "(leafd.http.max.connections), or this client address its share "
                                  "of them (leafd.http.max.connections.per.address)";
    const char *code = proto_errors[HTTP_E_TOO_MANY_CONNECTIONS].code;
    size_t body_len =
        sizeof("{\"code\":\"\",\"message\":\"\"}") - 1 + strlen(code) + sizeof(message) - 1;
    int n = snprintf(buf, cap,
                     "HTTP/1.1 %d Service Unavailable\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n"
                     "{\"code\":\"%s\",\"message\":\"%s\"}",
                     proto_errors[HTTP_E_TOO_MANY_CONNECTIONS].status, body_len, code, message);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

const struct proto_ops http_proto_ops = {
    .name = "http",
    .open = http_open,
    .input = http_input,
    .resume = http_resume,
    .timeout = http_timeout,
    .idle = http_idle,
    .close = http_close,
    .refusal = http_refusal,
};
