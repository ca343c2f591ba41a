#include "http.h"

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

#include "http_proto.h"
#include "log.h"

#define HTTP_READ_BUF 16384

/*
 * One client connection: the socket side. The protocol (parsing, dispatch,
 * responses) is in proto. Owned by its loop's thread; freed in the close
 * callback once both the TCP handle and the retry timer are closed.
 */
struct http_conn {
    uv_tcp_t tcp;
    uv_timer_t retry; /* re-runs a request whose handler said LEAF_EAGAIN */
    uv_write_t wreq;
    struct http_loop *hl;
    struct http_conn *prev, *next; /* the loop's connection list */

    char in[HTTP_READ_BUF]; /* input not yet consumed by proto */
    size_t in_len;
    struct http_buf wbuf;   /* responses being written by uv_write */
    struct http_proto proto;
    int64_t last_active_ms;
    int writing;      /* wbuf is being written */
    int reading;      /* uv_read_start is active */
    int closing;      /* uv_close has been called */
    int handles_open; /* handles still to be closed before free */
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
    int fd_owned;   /* the listener handle owns fd */
    int loop_ready; /* uv_loop_init succeeded */
    int listening;
    atomic_int stop_requested;
    int draining;
    int64_t drain_started_ms;
    struct http_conn *conns;
    atomic_ulong nconns;
    const struct leaf_config *cfg;
    char scratch[HTTP_SCRATCH];
};

struct http_server {
    int nloops;
    struct http_loop *loops[HTTP_MAX_LOOPS];
};

static void conn_process(struct http_conn *c);
static void conn_flush(struct http_conn *c);
static void conn_close(struct http_conn *c);

char *http_loop_scratch(struct http_loop *hl) {
    return hl->scratch;
}

int http_loop_index(const struct http_loop *hl) {
    return hl->index;
}

int64_t http_loop_now(const struct http_loop *hl) {
    return (int64_t)uv_now(&hl->loop);
}

static void on_retry(uv_timer_t *t) {
    struct http_conn *c = t->data;
    http_proto_retry(&c->proto);
    conn_process(c);
}

/*
 * Hands the buffered input to the protocol, then writes what it answered.
 * A request that must wait parks the connection on its retry timer.
 */
static void conn_process(struct http_conn *c) {
    struct http_proto *p = &c->proto;
    if (!p->waiting && c->in_len > 0) {
        size_t used = http_proto_execute(p, c->in, c->in_len);
        memmove(c->in, c->in + used, c->in_len - used);
        c->in_len -= used;
    }
    if (p->waiting) {
        uint64_t delay = p->req.retry_ms > 0 ? (uint64_t)p->req.retry_ms : 1;
        uv_timer_start(&c->retry, on_retry, delay, 0);
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
    const struct http_proto *p = &c->proto;
    int want = !c->closing && !p->close_after && !p->waiting && c->in_len < sizeof(c->in) &&
               p->out.len + c->wbuf.len < HTTP_MAX_OUTPUT;
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
    if (c->in_len > 0 && !c->proto.waiting) {
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
    struct http_buf *out = &c->proto.out;
    uv_buf_t b = uv_buf_init(out->data, (unsigned)out->len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n < 0 && n != UV_EAGAIN) {
        log_debug("http", "write to client failed: %s", uv_strerror(n));
        return -1;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    if (done == out->len) {
        out->len = 0;
        return 0;
    }
    struct http_buf t = c->wbuf;
    c->wbuf = *out;
    *out = t;
    out->len = 0;
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

/* True when the client has sent bytes not read yet (drain answers them too). */
static int socket_has_input(struct http_conn *c) {
    uv_os_fd_t fd;
    char b;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0) {
        return 0;
    }
    return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void conn_flush(struct http_conn *c) {
    if (c->closing) {
        return;
    }
    struct http_proto *p = &c->proto;
    if (!c->writing && p->out.len > 0 && conn_write_out(c) != 0) {
        conn_close(c);
        return;
    }
    if (!c->writing && p->close_after && !p->waiting) {
        conn_close(c);
        return;
    }
    if (c->hl->draining && !c->writing && !p->waiting && c->in_len == 0 &&
        p->head_started_ms == 0 && !socket_has_input(c)) {
        conn_close(c); /* every request received so far is answered */
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
        c->proto.close_after = 1;
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
    http_proto_free(&c->proto);
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
    int len = sizeof(ss), loopback = 0;
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        loopback = addr_is_loopback(&ss);
    }
    uv_tcp_nodelay(&c->tcp, 1);
    http_proto_init(&c->proto, hl, loopback);
    c->last_active_ms = (int64_t)uv_now(&hl->loop);
    conn_update_reading(c);
}

/* ---- per-loop timers and shutdown ----------------------------------------- */

/* While draining, a request still arriving gets this long before a 408. */
#define HTTP_DRAIN_GRACE_MS 1000

static void on_sweep(uv_timer_t *t) {
    struct http_loop *hl = t->data;
    int64_t now = (int64_t)uv_now(&hl->loop);
    int64_t head_limit = hl->cfg->request_timeout_ms;
    struct http_conn *c = hl->conns, *next;
    for (; c != NULL; c = next) {
        next = c->next;
        const struct http_proto *p = &c->proto;
        if (p->waiting || c->writing) {
            continue;
        }
        int late = p->head_started_ms && now - p->head_started_ms > head_limit;
        if (hl->draining && p->head_started_ms && now - hl->drain_started_ms >= HTTP_DRAIN_GRACE_MS) {
            late = 1;
        }
        if (late) {
            http_proto_fail(&c->proto, 408, "request_timeout", "request head not received in time");
            conn_flush(c);
        } else if (!p->head_started_ms && now - c->last_active_ms > hl->cfg->idle_timeout_ms) {
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
    hl->drain_started_ms = (int64_t)uv_now(&hl->loop);
    if (hl->listening) {
        uv_close((uv_handle_t *)&hl->listener, on_listener_closed);
        hl->listening = 0;
    }
    /*
     * Every request already sent is answered: a connection closes once its
     * input (buffered and in the socket) is used up and its answers written.
     * Idle connections go now; a request still arriving gets a short grace.
     */
    struct http_conn *c = hl->conns, *next;
    for (; c != NULL; c = next) {
        next = c->next;
        conn_flush(c);
    }
    uv_close((uv_handle_t *)&hl->wake, NULL);
    uv_timer_start(&hl->sweep, on_sweep, 100, 100);
    uv_unref((uv_handle_t *)&hl->sweep);
}

static void loop_thread(void *arg) {
    struct http_loop *hl = arg;
    uv_run(&hl->loop, UV_RUN_DEFAULT);
    /* Drained: close the sweep timer and let its callback run. */
    uv_close((uv_handle_t *)&hl->sweep, NULL);
    uv_run(&hl->loop, UV_RUN_DEFAULT);
}

/*
 * SO_REUSEPORT would let a second leafd share the port of a running one (and,
 * in static mode, issue the same IDs). A bind without it fails while anyone
 * listens there, so probe once before opening the real listeners.
 */
leaf_status_t http_listen_probe(const struct leaf_config *cfg) {
    struct sockaddr_in addr;
    int one = 1, rc = LEAF_ERR;
    uv_ip4_addr(cfg->listen_host, cfg->listen_port, &addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_error("http", "socket() failed: %s", strerror(errno));
        return -1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
        bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
        rc = LEAF_OK;
    } else {
        log_error("http", "bind(%s) failed: %s", cfg->listen, strerror(errno));
    }
    close(fd);
    return rc;
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

static void on_handle_closed(uv_handle_t *h) {
    (void)h;
}

static void close_any(uv_handle_t *h, void *arg) {
    if (!uv_is_closing(h)) {
        uv_close(h, on_handle_closed);
    }
}

/* Undoes loop_init, however far it got (only before the loop's thread runs). */
static void loop_destroy(struct http_loop *hl) {
    if (hl->loop_ready) {
        uv_walk(&hl->loop, close_any, NULL);
        uv_run(&hl->loop, UV_RUN_DEFAULT);
        uv_loop_close(&hl->loop);
    }
    if (hl->fd >= 0 && !hl->fd_owned) {
        close(hl->fd);
    }
    free(hl);
}

static int loop_init(struct http_loop *hl, const struct leaf_config *cfg, int index) {
    hl->cfg = cfg;
    hl->index = index;
    hl->fd = -1;
    if (uv_loop_init(&hl->loop) != 0) {
        log_error("http", "uv_loop_init(loop %d) failed", index);
        return -1;
    }
    hl->loop_ready = 1;
    hl->fd = listen_socket(cfg);
    if (hl->fd < 0) {
        return -1;
    }
    uv_tcp_init(&hl->loop, &hl->listener);
    hl->listener.data = hl;
    int rc = uv_tcp_open(&hl->listener, hl->fd);
    hl->fd_owned = rc == 0; /* from here on, closing the handle closes fd */
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

leaf_status_t http_server_start(struct http_server **out, const struct leaf_config *cfg,
                                int nloops) {
    struct http_server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        return LEAF_ENOMEM;
    }
    for (int i = 0; i < nloops; i++) {
        struct http_loop *hl = calloc(1, sizeof(*hl));
        if (hl == NULL) {
            goto fail;
        }
        srv->loops[srv->nloops++] = hl;
        if (loop_init(hl, cfg, i) != 0) {
            goto fail;
        }
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
    /* Start-up failed before any thread ran: release in reverse order. */
    while (srv->nloops > 0) {
        loop_destroy(srv->loops[--srv->nloops]);
    }
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
