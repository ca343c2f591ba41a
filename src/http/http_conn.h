#ifndef LEAF_HTTP_CONN_H
#define LEAF_HTTP_CONN_H

/*
 * HTTP/1.1 as a protocol module of the server layer (src/net/net_session.h), without
 * any I/O: bytes go in, replies come out in session.out. It parses with
 * llhttp (compiled in), one request at a time, hands each to a handler
 * through a callback, and reports each answered request through a
 * completion hook. It knows no route, handler or metric; the fuzzer and
 * the unit tests drive it directly.
 *
 * A handler writes exactly one response with http_respond*() and returns
 * LEAF_OK, or writes nothing and returns LEAF_EAGAIN after setting
 * req->retry_ms (resume at the latest after this long) and, optionally,
 * registering req->wait with whatever will wake it. The request is then
 * parked and handed to the handler again, unchanged but for retries, when
 * it is woken or retry_ms has passed. Replies leave in request order.
 *
 * Ownership: a struct http_conn belongs to the thread of its connection.
 */
#include <stddef.h>
#include <stdint.h>

#include "llhttp.h"
#include "net_session.h"
#include "sbuf.h"
#include "status.h"

#define HTTP_MAX_URL 2048
#define HTTP_MAX_HEAD 16384
#define HTTP_MAX_BODY 16384
#define HTTP_MAX_AUTH 512

/* req->route of a request answered by the protocol itself (malformed, too large, timeout). */
#define HTTP_ROUTE_NONE (-1)

struct http_conn;

/* What a handler sees of a request. Valid until it is answered. */
struct http_request {
    int method;       /* llhttp method number (HTTP_GET, ...) */
    const char *path; /* URL path, not decoded, no query (not NUL-terminated) */
    size_t path_len;
    const char *query; /* after '?', or "" */
    size_t query_len;
    const char *body;
    size_t body_len;
    const char *auth; /* Authorization header value, or "" */
    size_t auth_len;
    int auth_too_long; /* the Authorization value was longer than HTTP_MAX_AUTH (not kept) */
    /* Host, Origin, Content-Type and Sec-Fetch-Site values, NULL when absent (not
     * NUL-terminated): the same-origin and JSON-only rule of state changes. */
    const char *host;
    size_t host_len;
    const char *origin;
    size_t origin_len;
    const char *content_type;
    size_t content_type_len;
    const char *fetch_site;
    size_t fetch_site_len;
    int loopback;           /* client address is 127.0.0.0/8 or ::1 */
    const char *peer;       /* client "ip:port", for log lines */
    int loop;               /* index of the serving event loop */
    int retries;            /* times this request was parked so far */
    int ticket;             /* the handler's own state across parks; -1 at first */
    int64_t first_seen_ms;  /* monotonic ms when the request was first dispatched */
    int64_t started_ns;     /* monotonic ns of the loop turn that brought it (session.now_ns) */
    int64_t finished_ns;    /* monotonic ns when answered: set for the done hook only */
    int64_t retry_ms;       /* set by a handler that returns LEAF_EAGAIN */
    int route;              /* set by the route table (accounting); HTTP_ROUTE_NONE */
    int status;             /* status of the response written, 0 until then */
    struct leaf_wait *wait; /* where a parked request is woken */
    void *ctx;              /* the handler's context (http_conn_config.ctx) */
    struct http_conn *proto;
};

typedef leaf_status_t (*http_handler_fn)(struct http_request *req);
/*
 * Called once per answered request, after its response was appended.
 * Requests answered together (pipelined requests read in one go) are
 * reported together, after the last of their responses, with one clock
 * reading for all of them in req->finished_ns; finished_ns - started_ns is
 * then the time from the loop turn that brought a request to the moment its
 * response and those before it were ready. Only route, status, started_ns,
 * finished_ns, loop and ctx are meaningful here.
 */
typedef void (*http_done_fn)(const struct http_request *req);

struct http_conn_config {
    http_handler_fn handler;
    http_done_fn done; /* may be NULL */
    void *ctx;
};

/* The protocol's entry points for the server; open() takes a struct http_conn_config. */
extern const struct proto_ops http_proto_ops;

/* The loop's monotonic time when the request was last handed to the handler. */
int64_t http_request_now(const struct http_request *req);

/* Appends a complete response (status line, headers, body). */
void http_respond(struct http_request *req, int status, const char *content_type, const char *body,
                  size_t body_len);

/* The same with extra header lines, each ending in CRLF (e.g. "Allow: GET\r\n"). */
void http_respond_ex(struct http_request *req, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t body_len);

/*
 * The errors of the HTTP layer itself, answered before any route and the
 * connection closed after them: X(enum, status, code, meaning). Each site
 * writes its own message; the meaning is the line of the error reference,
 * whose one table (src/door/door_errors.h) takes these rows in.
 */
#define HTTP_CONN_ERRORS(X)                                                                        \
    X(HTTP_E_BAD_REQUEST, 400, "bad_request",                                                      \
      "malformed HTTP (the message names the fault: a header, the framing, the version)")          \
    X(HTTP_E_REQUEST_TIMEOUT, 408, "request_timeout", "the request head was not received in time") \
    X(HTTP_E_BODY_TOO_LARGE, 413, "body_too_large", "a request body larger than 16384 bytes")      \
    X(HTTP_E_URI_TOO_LONG, 414, "uri_too_long", "a request line longer than 2048 bytes")           \
    X(HTTP_E_EXPECTATION_FAILED, 417, "expectation_failed", "an Expect other than 100-continue")   \
    X(HTTP_E_HEADER_TOO_LARGE, 431, "header_too_large", "a request head larger than 16384 bytes")  \
    X(HTTP_E_NOT_IMPLEMENTED, 501, "not_implemented", "a transfer coding other than chunked")      \
    X(HTTP_E_OUT_OF_MEMORY, 503, "out_of_memory", "out of memory receiving the request")           \
    X(HTTP_E_VERSION_NOT_SUPPORTED, 505, "http_version_not_supported", "only HTTP/1.x is served")  \
    X(HTTP_E_TOO_MANY_CONNECTIONS, 503, "too_many_connections",                                    \
      "a connection beyond leafd.http.max.connections or its address's share, refused at accept")

enum http_conn_error {
#define HTTP_CONN_ERROR_ENUM(e, status, code, meaning) e,
    HTTP_CONN_ERRORS(HTTP_CONN_ERROR_ENUM)
#undef HTTP_CONN_ERROR_ENUM
        HTTP_E_COUNT
};

/* Appends a JSON error response {"code":...,"message":...} (code and message are not escaped). */
void http_respond_error(struct http_request *req, int status, const char *code,
                        const char *message);

/* The name of an llhttp method number ("GET"). */
const char *http_method_name(int method);

#endif
