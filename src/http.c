#include "src/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "llhttp.h"
#include "src/log.h"
#include "src/metrics.h"
#include "src/router.h"

#define HTTP_READ_BUF 16384

/* A growable byte buffer. */
struct http_buf {
    char *data;
    size_t len, cap;
};

/*
 * One client connection. Owned by its loop's thread; freed in the close
 * callback once both the TCP handle and the retry timer are closed.
 */
struct http_conn {
    uv_tcp_t tcp;
    uv_timer_t retry; /* re-runs a request whose handler said LEAF_EAGAIN */
    uv_write_t wreq;
    llhttp_t parser;
    struct http_loop *hl;
    struct http_conn *prev, *next; /* the loop's connection list */

    char in[HTTP_READ_BUF]; /* unparsed input (kept while a request waits) */
    size_t in_len;
    struct http_buf out;  /* responses being appended */
    struct http_buf wbuf; /* responses being written */

    /* the request being received */
    char url[HTTP_MAX_URL + 1];
    size_t url_len;
    size_t head_bytes;
    char field[32];
    size_t field_len;
    int in_auth;
    char auth[HTTP_MAX_AUTH + 1];
    size_t auth_len;
    char body[HTTP_MAX_BODY];
    size_t body_len;
    int too_large; /* status (413/414/431) once a limit is hit */

    struct http_request req; /* the request waiting for a retry */
    int64_t head_started_ms; /* loop time the current head began, 0 = none */
    int64_t last_active_ms;
    int loopback;
    int waiting;       /* a request is parked on the retry timer */
    int writing;       /* wbuf is being written */
    int reading;       /* uv_read_start is active */
    int close_after;   /* close once the output is written */
    int closing;       /* uv_close has been called */
    int handles_open;  /* handles still to be closed before free */
};

/* One event loop and its listener. Owned by its thread, see http.h. */
struct http_loop {
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_async_t wake;  /* http_server_stop() -> drain */
    uv_timer_t sweep; /* once a second: idle and slow connections */
    uv_thread_t thread;
    int index;
    int fd;
    int listening;
    atomic_int stop_requested;
    int draining;
    struct http_conn *conns;
    atomic_ulong nconns;
    const struct leaf_config *cfg;
    char scratch[HTTP_SCRATCH];
};

struct http_server {
    int nloops;
    struct http_loop *loops[HTTP_MAX_LOOPS];
};

static llhttp_settings_t http_settings;

static void conn_process(struct http_conn *c);
static void conn_flush(struct http_conn *c);
static void conn_close(struct http_conn *c);

/* ---- buffers ------------------------------------------------------------ */

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

/* ---- responses ---------------------------------------------------------- */

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
static void conn_append_response(struct http_conn *c, int status, const char *type,
                                 const char *body, size_t body_len) {
    if (buf_reserve(&c->out, body_len + 256) != 0) {
        c->close_after = 1;
        return;
    }
    char *p = c->out.data + c->out.len;
    p = put_str(p, "HTTP/1.1 ");
    p = put_uint(p, (size_t)status);
    *p++ = ' ';
    p = put_str(p, http_reason(status));
    p = put_str(p, "\r\nContent-Type: ");
    p = put_str(p, type);
    p = put_str(p, "\r\nContent-Length: ");
    p = put_uint(p, body_len);
    if (c->close_after) {
        p = put_str(p, "\r\nConnection: close");
    } else if (c->parser.http_major == 1 && c->parser.http_minor == 0) {
        p = put_str(p, "\r\nConnection: keep-alive");
    }
    p = put_str(p, "\r\n\r\n");
    memcpy(p, body, body_len);
    c->out.len = (size_t)(p + body_len - c->out.data);
}

void http_respond(struct http_request *req, int status, const char *content_type,
                  const char *body, size_t body_len) {
    req->status = status;
    conn_append_response(req->conn, status, content_type, body, body_len);
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

char *http_loop_scratch(struct http_loop *hl) {
    return hl->scratch;
}

int http_loop_index(const struct http_loop *hl) {
    return hl->index;
}

int64_t http_loop_now(const struct http_loop *hl) {
    return (int64_t)uv_now(&hl->loop);
}

/* An error found by the HTTP layer itself: answer and close the connection. */
static void conn_fail(struct http_conn *c, int status, const char *code, const char *message) {
    struct http_request req = {.conn = c, .loop = c->hl};
    req.route = status == 404 ? router_route_not_found() : router_route_bad_request();
    c->close_after = 1;
    http_respond_error(&req, status, code, message);
    metrics_count_request(c->hl->index, req.route, status);
}

/* ---- llhttp callbacks: copy what the router needs, enforce limits --------- */

static int on_message_begin(llhttp_t *p) {
    struct http_conn *c = p->data;
    c->url_len = c->head_bytes = c->field_len = c->auth_len = c->body_len = 0;
    c->in_auth = 0;
    c->too_large = 0;
    if (c->head_started_ms == 0) {
        c->head_started_ms = (int64_t)uv_now(&c->hl->loop);
    }
    return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len) {
    struct http_conn *c = p->data;
    if (c->url_len + len > HTTP_MAX_URL) {
        c->too_large = 414;
        return HPE_USER;
    }
    memcpy(c->url + c->url_len, at, len);
    c->url_len += len;
    return 0;
}

static int head_add(struct http_conn *c, size_t len) {
    c->head_bytes += len;
    if (c->head_bytes > HTTP_MAX_HEAD) {
        c->too_large = 431;
        return HPE_USER;
    }
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len) {
    struct http_conn *c = p->data;
    if (head_add(c, len) != 0) {
        return HPE_USER;
    }
    size_t room = sizeof(c->field) - 1 - c->field_len;
    size_t n = len < room ? len : room;
    memcpy(c->field + c->field_len, at, n);
    c->field_len += n;
    return 0;
}

static int on_header_field_complete(llhttp_t *p) {
    struct http_conn *c = p->data;
    c->in_auth = c->field_len == 13 && strncasecmp(c->field, "authorization", 13) == 0;
    if (c->in_auth) {
        c->auth_len = 0; /* the last Authorization header wins */
    }
    c->field_len = 0;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
    struct http_conn *c = p->data;
    if (head_add(c, len) != 0) {
        return HPE_USER;
    }
    if (c->in_auth) {
        if (c->auth_len + len > HTTP_MAX_AUTH) {
            c->too_large = 431;
            return HPE_USER;
        }
        memcpy(c->auth + c->auth_len, at, len);
        c->auth_len += len;
    }
    return 0;
}

static int on_headers_complete(llhttp_t *p) {
    struct http_conn *c = p->data;
    if ((p->flags & F_CONTENT_LENGTH) && p->content_length > HTTP_MAX_BODY) {
        c->too_large = 413;
        return HPE_USER;
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
    struct http_conn *c = p->data;
    if (c->body_len + len > HTTP_MAX_BODY) {
        c->too_large = 413;
        return HPE_USER;
    }
    memcpy(c->body + c->body_len, at, len);
    c->body_len += len;
    return 0;
}

static int on_message_complete(llhttp_t *p) {
    /* One request at a time: conn_process() dispatches it, then resumes. */
    return HPE_PAUSED;
}

/* ---- request dispatch ----------------------------------------------------- */

static void conn_build_request(struct http_conn *c) {
    struct http_request *r = &c->req;
    c->url[c->url_len] = '\0';
    c->auth[c->auth_len] = '\0';
    *r = (struct http_request){
        .method = c->parser.method,
        .path = c->url,
        .path_len = c->url_len,
        .query = "",
        .body = c->body,
        .body_len = c->body_len,
        .auth = c->auth,
        .auth_len = c->auth_len,
        .loopback = c->loopback,
        .first_seen_ms = (int64_t)uv_now(&c->hl->loop),
        .loop = c->hl,
        .conn = c,
    };
    char *q = memchr(c->url, '?', c->url_len);
    if (q != NULL) {
        r->path_len = (size_t)(q - c->url);
        r->query = q + 1;
        r->query_len = c->url_len - r->path_len - 1;
    }
    if (!llhttp_should_keep_alive(&c->parser) || c->hl->draining) {
        c->close_after = 1;
    }
}

static void on_retry(uv_timer_t *t);

/* Runs the parked or fresh request; returns 1 if it must wait. */
static int conn_dispatch(struct http_conn *c) {
    c->req.status = 0;
    leaf_status_t rc = router_dispatch(&c->req);
    if (rc == LEAF_EAGAIN) {
        c->req.retries++;
        c->waiting = 1;
        uint64_t delay = c->req.retry_ms > 0 ? (uint64_t)c->req.retry_ms : 1;
        uv_timer_start(&c->retry, on_retry, delay, 0);
        return 1;
    }
    c->head_started_ms = 0;
    return 0;
}

static void on_retry(uv_timer_t *t) {
    struct http_conn *c = t->data;
    c->waiting = 0;
    if (conn_dispatch(c)) {
        conn_flush(c);
        return;
    }
    conn_process(c);
}

/*
 * Parses and answers every complete request in the input, in order, until
 * the input is used up, a handler must wait, or the output is too large.
 */
static void conn_process(struct http_conn *c) {
    size_t used = 0;
    while (!c->waiting && !c->closing && !c->close_after && used < c->in_len &&
           c->out.len < HTTP_MAX_OUTPUT) {
        llhttp_errno_t err = llhttp_execute(&c->parser, c->in + used, c->in_len - used);
        if (err == HPE_OK) {
            used = c->in_len;
            break;
        }
        if (err == HPE_PAUSED) {
            used = (size_t)(llhttp_get_error_pos(&c->parser) - c->in);
            llhttp_resume(&c->parser);
            conn_build_request(c);
            conn_dispatch(c);
            continue;
        }
        if (c->too_large == 414) {
            conn_fail(c, 414, "uri_too_long", "request line longer than 2048 bytes");
        } else if (c->too_large == 431) {
            conn_fail(c, 431, "header_too_large", "request head larger than 8192 bytes");
        } else if (c->too_large == 413) {
            conn_fail(c, 413, "body_too_large", "request body larger than 16384 bytes");
        } else {
            char msg[160];
            snprintf(msg, sizeof(msg), "malformed HTTP request: %s", llhttp_errno_name(err));
            conn_fail(c, 400, "bad_request", msg);
        }
        used = c->in_len;
    }
    if (used > 0) {
        memmove(c->in, c->in + used, c->in_len - used);
        c->in_len -= used;
    }
    conn_flush(c);
}

/* ---- I/O ------------------------------------------------------------------ */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
    struct http_conn *c = h->data;
    buf->base = c->in + c->in_len;
    buf->len = sizeof(c->in) - c->in_len;
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

/* Reads only while there is room for input and the client keeps up. */
static void conn_update_reading(struct http_conn *c) {
    int want = !c->closing && !c->close_after && !c->waiting && c->in_len < sizeof(c->in) &&
               c->out.len + c->wbuf.len < HTTP_MAX_OUTPUT;
    if (want && !c->reading) {
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        c->reading = 1;
    } else if (!want && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
}

static void on_written(uv_write_t *w, int status) {
    struct http_conn *c = w->data;
    c->writing = 0;
    c->wbuf.len = 0;
    if (status < 0) {
        log_debug("http", "write to client failed: %s", uv_strerror(status));
        conn_close(c);
        return;
    }
    if (c->in_len > 0 && !c->waiting) {
        conn_process(c); /* input held back by output back-pressure */
    } else {
        conn_flush(c);
    }
}

/*
 * Tries to write the output at once (the common case: the socket has room);
 * only what the kernel does not take goes through uv_write. Skipping
 * uv_write when possible saves a deferred callback and an epoll_ctl per
 * batch of responses.
 */
static int conn_write_out(struct http_conn *c) {
    uv_buf_t b = uv_buf_init(c->out.data, (unsigned)c->out.len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n < 0 && n != UV_EAGAIN) {
        log_debug("http", "write to client failed: %s", uv_strerror(n));
        return -1;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    if (done == c->out.len) {
        c->out.len = 0;
        return 0;
    }
    struct http_buf t = c->wbuf;
    c->wbuf = c->out;
    c->out = t;
    c->out.len = 0;
    b = uv_buf_init(c->wbuf.data + done, (unsigned)(c->wbuf.len - done));
    c->wreq.data = c;
    int rc = uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &b, 1, on_written);
    if (rc < 0) {
        log_debug("http", "uv_write failed: %s", uv_strerror(rc));
        return -1;
    }
    c->writing = 1;
    return 0;
}

static void conn_flush(struct http_conn *c) {
    if (c->closing) {
        return;
    }
    if (!c->writing && c->out.len > 0 && conn_write_out(c) != 0) {
        conn_close(c);
        return;
    }
    if (!c->writing && c->close_after && !c->waiting) {
        conn_close(c);
        return;
    }
    if (c->hl->draining && !c->writing && !c->waiting && c->in_len == 0 &&
        c->head_started_ms == 0) {
        conn_close(c);
        return;
    }
    conn_update_reading(c);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    struct http_conn *c = s->data;
    if (nread == 0) {
        return;
    }
    if (nread < 0) {
        if (nread != UV_EOF) {
            log_debug("http", "read from client failed: %s", uv_strerror((int)nread));
        }
        /* The client is gone or half-closed: answer what is parked, then close. */
        c->close_after = 1;
        if (c->reading) {
            uv_read_stop(s);
            c->reading = 0;
        }
        conn_flush(c);
        return;
    }
    c->in_len += (size_t)nread;
    c->last_active_ms = (int64_t)uv_now(&c->hl->loop);
    conn_process(c);
}

static void on_conn_closed(uv_handle_t *h) {
    struct http_conn *c = h->data;
    if (--c->handles_open > 0) {
        return;
    }
    free(c->out.data);
    free(c->wbuf.data);
    free(c);
}

static void conn_close(struct http_conn *c) {
    if (c->closing) {
        return;
    }
    c->closing = 1;
    struct http_loop *hl = c->hl;
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        hl->conns = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    atomic_fetch_sub_explicit(&hl->nconns, 1, memory_order_relaxed);
    uv_timer_stop(&c->retry);
    uv_close((uv_handle_t *)&c->retry, on_conn_closed);
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static int addr_is_loopback(const struct sockaddr_storage *ss) {
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    return 0;
}

static void on_connection(uv_stream_t *server, int status) {
    struct http_loop *hl = server->data;
    if (status < 0) {
        log_warn("http", "accept on %s failed: %s", hl->cfg->listen, uv_strerror(status));
        return;
    }
    struct http_conn *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        log_error("http", "calloc(connection) failed");
        return;
    }
    c->hl = hl;
    uv_tcp_init(&hl->loop, &c->tcp);
    uv_timer_init(&hl->loop, &c->retry);
    c->tcp.data = c->retry.data = c;
    c->handles_open = 2;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        c->closing = 1;
        uv_close((uv_handle_t *)&c->retry, on_conn_closed);
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
        return;
    }
    c->next = hl->conns;
    if (hl->conns) {
        hl->conns->prev = c;
    }
    hl->conns = c;
    unsigned long n = atomic_fetch_add_explicit(&hl->nconns, 1, memory_order_relaxed) + 1;
    if ((int64_t)n * 1 > hl->cfg->max_connections) {
        log_warn("http", "connection limit %" PRId64 " reached on loop %d, closing new client",
                 hl->cfg->max_connections, hl->index);
        conn_close(c);
        return;
    }
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        c->loopback = addr_is_loopback(&ss);
    }
    uv_tcp_nodelay(&c->tcp, 1);
    llhttp_init(&c->parser, HTTP_REQUEST, &http_settings);
    c->parser.data = c;
    c->last_active_ms = (int64_t)uv_now(&hl->loop);
    conn_update_reading(c);
}

/* ---- per-loop timers and shutdown ----------------------------------------- */

static void on_sweep(uv_timer_t *t) {
    struct http_loop *hl = t->data;
    int64_t now = (int64_t)uv_now(&hl->loop);
    struct http_conn *c = hl->conns, *next;
    for (; c != NULL; c = next) {
        next = c->next;
        if (c->waiting || c->writing) {
            continue;
        }
        if (c->head_started_ms && now - c->head_started_ms > hl->cfg->request_timeout_ms) {
            conn_fail(c, 408, "request_timeout", "request head not received in time");
            conn_flush(c);
        } else if (!c->head_started_ms && now - c->last_active_ms > hl->cfg->idle_timeout_ms) {
            conn_close(c);
        }
    }
}

static void on_listener_closed(uv_handle_t *h) {
    (void)h;
}

static void on_wake(uv_async_t *a) {
    struct http_loop *hl = a->data;
    if (!atomic_load(&hl->stop_requested) || hl->draining) {
        return;
    }
    hl->draining = 1;
    if (hl->listening) {
        uv_close((uv_handle_t *)&hl->listener, on_listener_closed);
        hl->listening = 0;
    }
    /* Idle connections go now; busy ones close after their current answer. */
    struct http_conn *c = hl->conns, *next;
    for (; c != NULL; c = next) {
        next = c->next;
        conn_flush(c);
    }
    uv_close((uv_handle_t *)&hl->wake, NULL);
    uv_unref((uv_handle_t *)&hl->sweep);
}

static void loop_thread(void *arg) {
    struct http_loop *hl = arg;
    uv_run(&hl->loop, UV_RUN_DEFAULT);
    /* Drained: close the sweep timer and let its callback run. */
    uv_close((uv_handle_t *)&hl->sweep, NULL);
    uv_run(&hl->loop, UV_RUN_DEFAULT);
}

/* Opens a listening socket with SO_REUSEPORT, so every loop has its own. */
static int listen_socket(const struct leaf_config *cfg) {
    struct sockaddr_in addr;
    int fd = -1, one = 1;
    if (uv_ip4_addr(cfg->listen_host, cfg->listen_port, &addr) != 0) {
        log_error("http", "bad listen address %s", cfg->listen);
        return -1;
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_error("http", "socket() failed: %s", strerror(errno));
        return -1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
        log_error("http", "setsockopt(SO_REUSEPORT) failed: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        log_error("http", "bind(%s) failed: %s", cfg->listen, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int loop_init(struct http_loop *hl, const struct leaf_config *cfg, int index) {
    hl->cfg = cfg;
    hl->index = index;
    uv_loop_init(&hl->loop);
    hl->fd = listen_socket(cfg);
    if (hl->fd < 0) {
        return -1;
    }
    uv_tcp_init(&hl->loop, &hl->listener);
    hl->listener.data = hl;
    int rc = uv_tcp_open(&hl->listener, hl->fd);
    if (rc == 0) {
        rc = uv_listen((uv_stream_t *)&hl->listener, 4096, on_connection);
    }
    if (rc != 0) {
        log_error("http", "listen(%s) failed: %s", cfg->listen, uv_strerror(rc));
        return -1;
    }
    hl->listening = 1;
    uv_async_init(&hl->loop, &hl->wake, on_wake);
    hl->wake.data = hl;
    uv_timer_init(&hl->loop, &hl->sweep);
    hl->sweep.data = hl;
    uv_timer_start(&hl->sweep, on_sweep, 1000, 1000);
    return 0;
}

static void settings_init(void) {
    llhttp_settings_init(&http_settings);
    http_settings.on_message_begin = on_message_begin;
    http_settings.on_url = on_url;
    http_settings.on_header_field = on_header_field;
    http_settings.on_header_field_complete = on_header_field_complete;
    http_settings.on_header_value = on_header_value;
    http_settings.on_headers_complete = on_headers_complete;
    http_settings.on_body = on_body;
    http_settings.on_message_complete = on_message_complete;
}

leaf_status_t http_server_start(struct http_server **out, const struct leaf_config *cfg,
                                int nloops) {
    struct http_server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        return LEAF_ENOMEM;
    }
    settings_init();
    for (int i = 0; i < nloops; i++) {
        struct http_loop *hl = calloc(1, sizeof(*hl));
        if (hl == NULL || loop_init(hl, cfg, i) != 0) {
            free(hl);
            goto fail;
        }
        srv->loops[srv->nloops++] = hl;
    }
    *out = srv; /* visible before any loop can serve /metrics */
    for (int i = 0; i < srv->nloops; i++) {
        if (uv_thread_create(&srv->loops[i]->thread, loop_thread, srv->loops[i]) != 0) {
            log_error("http", "uv_thread_create(loop %d) failed", i);
            abort();
        }
    }
    return LEAF_OK;
fail:
    /* Start-up failed before any thread ran: the process is about to exit. */
    free(srv);
    return LEAF_ERR;
}

void http_server_stop(struct http_server *srv) {
    for (int i = 0; i < srv->nloops; i++) {
        atomic_store(&srv->loops[i]->stop_requested, 1);
        uv_async_send(&srv->loops[i]->wake);
    }
}

void http_server_join(struct http_server *srv) {
    for (int i = 0; i < srv->nloops; i++) {
        uv_thread_join(&srv->loops[i]->thread);
        uv_loop_close(&srv->loops[i]->loop);
        free(srv->loops[i]);
    }
    free(srv);
}

int http_server_nloops(const struct http_server *srv) {
    return srv->nloops;
}

struct http_loop *http_server_loop(struct http_server *srv, int i) {
    return srv->loops[i];
}

uint64_t http_server_connections(const struct http_server *srv) {
    uint64_t n = 0;
    for (int i = 0; i < srv->nloops; i++) {
        n += atomic_load_explicit(&srv->loops[i]->nconns, memory_order_relaxed);
    }
    return n;
}
