#ifndef LEAF_HTTP_H
#define LEAF_HTTP_H

/*
 * The HTTP/1.1 server: several libuv event loops, one per thread, each with
 * its own SO_REUSEPORT listener, so the kernel spreads connections and no
 * lock is taken between loops on the request path.
 *
 * Per connection: requests are parsed by llhttp (compiled in) one at a time
 * (the parser pauses after each message), dispatched to the router, and the
 * responses are appended to one output buffer that is written once per read
 * ("response batching"), so pipelined responses leave in request order. A
 * handler that cannot answer yet (clock a little behind, segment range in
 * flight) returns LEAF_EAGAIN with a retry delay: the connection stops
 * parsing, arms its retry timer, and calls the handler again later. The
 * event loop never waits.
 *
 * Limits: URL > HTTP_MAX_URL -> 414; head > HTTP_MAX_HEAD -> 431; body >
 * HTTP_MAX_BODY -> 413; a head that takes longer than request_timeout_ms ->
 * 408; idle keep-alive connections closed after idle_timeout_ms; output over
 * HTTP_MAX_OUTPUT stops reading from that client until it drains.
 *
 * Ownership: a struct http_loop and all its connections belong to its own
 * thread. Other threads talk to a loop only through http_server_stop(), which
 * sets a flag and wakes the loop with uv_async_send.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "status.h"

#define HTTP_MAX_URL 2048
#define HTTP_MAX_HEAD 8192
#define HTTP_MAX_BODY 16384
#define HTTP_MAX_AUTH 512
#define HTTP_MAX_OUTPUT (4u << 20)
#define HTTP_MAX_LOOPS 64

struct http_loop;
struct http_proto;

/* What a handler sees of a request. Valid only during the handler call. */
struct http_request {
    int method;                /* llhttp method number (HTTP_GET, ...) */
    const char *path;          /* URL path, not decoded, no query */
    size_t path_len;
    const char *query;         /* after '?', or "" */
    size_t query_len;
    const char *body;
    size_t body_len;
    const char *auth;          /* Authorization header value, or "" */
    size_t auth_len;
    int loopback;              /* client address is 127.0.0.0/8 or ::1 */
    int retries;               /* times this request got LEAF_EAGAIN so far */
    int64_t first_seen_ms;     /* monotonic ms when the request was first dispatched */
    int64_t started_ns;        /* monotonic ns, for the latency histogram */
    int64_t retry_ms;          /* set by a handler that returns LEAF_EAGAIN */
    int route;                 /* route index, set by the router (metrics) */
    int status;                /* status of the response written, 0 until then */
    struct http_loop *loop;    /* the loop serving it (metrics, scratch) */
    struct http_proto *proto;  /* where the response goes */
};

/* Appends a complete response (status line, headers, body). */
void http_respond(struct http_request *req, int status, const char *content_type,
                  const char *body, size_t body_len);

/* The same with extra header lines, each ending in CRLF (e.g. "Allow: GET\r\n"). */
void http_respond_ex(struct http_request *req, int status, const char *content_type,
                     const char *extra_headers, const char *body, size_t body_len);

/* Appends a JSON error response {"code":...,"message":...}. */
void http_respond_error(struct http_request *req, int status, const char *code,
                        const char *message);

/* A per-loop scratch buffer a handler may format into (HTTP_SCRATCH bytes). */
#define HTTP_SCRATCH (512u << 10)
char *http_loop_scratch(struct http_loop *hl);
int http_loop_index(const struct http_loop *hl);

/* Monotonic ms of the loop (libuv's cached time). */
int64_t http_loop_now(const struct http_loop *hl);

struct http_server;

/*
 * Fails (logged, naming the address) when another process listens on the
 * configured address. The listeners use SO_REUSEPORT, which would otherwise
 * let a second leafd share the port. Called before anything is registered.
 */
leaf_status_t http_listen_probe(const struct leaf_config *cfg);

/* Binds every loop's listener (errors logged naming the address). */
leaf_status_t http_server_start(struct http_server **out, const struct leaf_config *cfg,
                                int nloops);
/* Asks every loop to drain: stop accepting, finish in-flight requests, close. */
void http_server_stop(struct http_server *srv);
/* Waits for every loop thread to finish; frees the server. */
void http_server_join(struct http_server *srv);
int http_server_nloops(const struct http_server *srv);
/* Open connections, summed over loops (for metrics). */
uint64_t http_server_connections(const struct http_server *srv);
struct http_loop *http_server_loop(struct http_server *srv, int i);

#endif
