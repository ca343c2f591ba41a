/* One client connection: input, TLS, output and close (net_state.h, net.h). */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "log.h"
#include "net_state.h"

static void conn_process(struct net_conn *c);

struct session *net_conn_session(struct net_conn *c) {
    c->s->now_ms = net_loop_now(c->nl);
    c->s->now_ns = net_loop_now_ns(c->nl);
    return c->s;
}

/* ---- waking parked requests (any thread -> loop) ------------------------- */

/* session.wait.wake: thread-safe. The connection is alive: see net_session.h. */
void net_conn_wake(struct leaf_wait *w) {
    struct session *s = (struct session *)(void *)((char *)w - offsetof(struct session, wait));
    struct net_conn *c = s->conn;
    struct net_loop *nl = c->nl;
    pthread_mutex_lock(&nl->ready_lock);
    if (!c->ready) {
        c->ready = 1;
        c->ready_prev = NULL;
        c->ready_next = nl->ready_head;
        if (nl->ready_head != NULL) {
            nl->ready_head->ready_prev = c;
        }
        nl->ready_head = c;
    }
    pthread_mutex_unlock(&nl->ready_lock);
    uv_async_send(&nl->async);
}

/* Loop thread: takes c off the woken list (it is closing, or resumed by its timer). */
static void conn_unready(struct net_conn *c) {
    struct net_loop *nl = c->nl;
    pthread_mutex_lock(&nl->ready_lock);
    if (c->ready) {
        if (c->ready_prev != NULL) {
            c->ready_prev->ready_next = c->ready_next;
        } else {
            nl->ready_head = c->ready_next;
        }
        if (c->ready_next != NULL) {
            c->ready_next->ready_prev = c->ready_prev;
        }
        c->ready = 0;
    }
    pthread_mutex_unlock(&nl->ready_lock);
}

/* Runs the parked request again, then whatever input followed it. */
void net_conn_resume(struct net_conn *c) {
    uv_timer_stop(&c->timer);
    conn_unready(c);
    struct session *s = net_conn_session(c);
    if (c->closing || !s->waiting) {
        return;
    }
    c->ls->cfg->proto->resume(s);
    conn_process(c);
}

static void on_timer(uv_timer_t *t) {
    struct net_conn *c = t->data;
    if (net_conn_session(c)->waiting) {
        net_conn_resume(c);
    } else if (!c->closing && c->in_len > 0) {
        conn_process(c); /* input held back by output that has gone since */
    }
}

/* ---- input ---------------------------------------------------------------- */

/* Keeps the unconsumed tail of a read that went into the loop's buffer. */
static int conn_keep_input(struct net_conn *c, const char *data, size_t len) {
    if (data == NULL || len == 0) {
        c->in_len = 0;
        return 0;
    }
    if (c->in == NULL) {
        size_t cap = len > NET_CONN_IN_BUF ? len : NET_CONN_IN_BUF;
        c->in = malloc(cap);
        if (c->in == NULL) {
            log_error("net", "malloc(%zu) for connection input failed", cap);
            return -1;
        }
        c->in_cap = cap;
    }
    memmove(c->in, data, len);
    c->in_len = len;
    return 0;
}

/*
 * Hands input to the protocol, then writes what it answered. A request that
 * parks arms the connection's timer.
 */
static void conn_feed(struct net_conn *c, const char *data, size_t len) {
    struct session *s = net_conn_session(c);
    size_t used = 0;
    if (!s->waiting && len > 0) {
        used = c->ls->cfg->proto->input(s, data, len);
    }
    if (c->in != NULL && data == c->in) {
        memmove(c->in, c->in + used, len - used);
        c->in_len = len - used;
    } else if (used < len && conn_keep_input(c, data + used, len - used) != 0) {
        net_conn_close(c);
        return;
    }
    if (c->in != NULL && c->in_len == 0) {
        free(c->in);
        c->in = NULL;
        c->in_cap = 0;
    }
    if (s->waiting) {
        int64_t delay = s->resume_after_ms > 0 ? s->resume_after_ms : 1;
        uv_timer_start(&c->timer, on_timer, (uint64_t)delay, 0);
    }
    net_conn_flush(c);
}

static void conn_tls_pump(struct net_conn *c);

static void conn_process(struct net_conn *c) {
    conn_feed(c, c->in, c->in_len);
    if (c->tls != NULL) {
        conn_tls_pump(c); /* plaintext the protocol did not take before */
    }
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
    struct net_conn *c = h->data;
    /* A connection with a partial request reads after it; otherwise into the
     * loop's buffer, and nothing is copied when the read is used up. */
    c->in_loop_buf = c->in_len == 0;
    if (c->in_loop_buf) {
        *buf = uv_buf_init(c->nl->rbuf, NET_LOOP_READ_BUF);
    } else {
        *buf = uv_buf_init(c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
    }
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);
static void on_alloc_tls(uv_handle_t *h, size_t hint, uv_buf_t *buf);
static void on_read_tls(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

/* Reads only while there is room for input and the client keeps up. */
void net_conn_update_reading(struct net_conn *c) {
    const struct session *s = c->s;
    int room = c->in == NULL || c->in_len < c->in_cap;
    int want = !c->closing && !s->close_after && !s->waiting && room &&
               s->out.len + c->wbuf.len < session_out_max(s);
    if (want && !c->reading) {
        if (c->tls == NULL) {
            uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
        } else {
            uv_read_start((uv_stream_t *)&c->tcp, on_alloc_tls, on_read_tls);
        }
        c->reading = 1;
    } else if (!want && c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
}

/* The client is gone or half-closed: answer what is parked, then close. */
static void conn_read_end(struct net_conn *c) {
    c->s->close_after = 1;
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->reading = 0;
    }
    net_conn_flush(c);
}

/* The start of both read callbacks: 0 when there is nothing to feed (the
 * connection may be ending); 1 with the connection marked active. */
static int read_begin(struct net_conn *c, ssize_t nread) {
    if (nread == 0) {
        return 0;
    }
    if (nread < 0) {
        if (nread != UV_EOF) {
            log_debug("net", "read from client failed: %s", uv_strerror((int)nread));
        }
        conn_read_end(c);
        return 0;
    }
    c->last_active_ms = net_loop_now(c->nl);
    return 1;
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
    struct net_conn *c = st->data;
    if (!read_begin(c, nread)) {
        return;
    }
    if (c->in_loop_buf) {
        conn_feed(c, buf->base, (size_t)nread);
    } else {
        c->in_len += (size_t)nread;
        conn_process(c);
    }
}

/* ---- TLS input ------------------------------------------------------------ */

/* Ciphertext always goes into the loop's buffer: OpenSSL copies it at once. */
static void on_alloc_tls(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
    struct net_conn *c = h->data;
    *buf = uv_buf_init(c->nl->rbuf, NET_LOOP_READ_BUF);
}

/* A handshake or record that failed costs this connection only. */
static void conn_tls_fail(struct net_conn *c) {
    log_debug("net", "TLS with %s on %s failed: %s", c->s->peer, c->ls->cfg->addr,
              net_tls_error(c->tls));
    c->s->close_after = 1;
    net_conn_flush(c); /* the alert, if OpenSSL wrote one, then close */
}

/*
 * Decrypts what the client sent and feeds the plaintext to the protocol,
 * for as long as the protocol takes input (not parked, not held back by its
 * output). What it does not take stays in the TLS session until
 * conn_process() runs again. The loop's buffer is free for plaintext: the
 * ciphertext read into it is in the session already.
 */
static void conn_tls_pump(struct net_conn *c) {
    struct session *s = c->s;
    while (!c->closing && !s->waiting && !s->close_after && c->in_len == 0) {
        long n = net_tls_read(c->tls, c->nl->rbuf, NET_LOOP_READ_BUF);
        if (n == NET_TLS_FAIL) {
            conn_tls_fail(c);
            return;
        }
        if (n == NET_TLS_EOF) {
            conn_read_end(c);
            return;
        }
        if (n == NET_TLS_AGAIN) {
            break;
        }
        conn_feed(c, c->nl->rbuf, (size_t)n);
    }
    net_conn_flush(c); /* handshake messages, even with no reply */
}

static void on_read_tls(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
    struct net_conn *c = st->data;
    if (!read_begin(c, nread)) {
        return;
    }
    if (net_tls_feed(c->tls, buf->base, (size_t)nread) != 0) {
        log_error("net", "out of memory buffering TLS input; closing the connection");
        net_conn_close(c);
        return;
    }
    conn_tls_pump(c);
}

/* ---- output --------------------------------------------------------------- */

/*
 * An output buffer is written: emptied, and freed when a large reply made it
 * grow, so a busy connection keeps at most NET_KEEP_OUT_BUF of it
 * (docs/reference/resp.md, "Memory per connection").
 */
static void out_written(struct sbuf *b) {
    if (b->cap > NET_KEEP_OUT_BUF) {
        sbuf_free(b);
    } else {
        sbuf_reset(b);
    }
}

static void on_written(uv_write_t *w, int status) {
    struct net_conn *c = w->data;
    c->writing = 0;
    out_written(&c->wbuf);
    if (status < 0) {
        log_debug("net", "write to client failed: %s", uv_strerror(status));
        net_conn_close(c);
        return;
    }
    if (c->in_len > 0 && !c->s->waiting) {
        conn_process(c); /* input held back by output back-pressure */
    } else {
        net_conn_flush(c);
    }
}

/*
 * Tries to write the output at once (the common case: the socket has room);
 * only what the kernel does not take goes through uv_write. Skipping
 * uv_write when possible saves a deferred callback and an epoll_ctl per
 * batch of replies.
 */
static int conn_tls_write_out(struct net_conn *c);

/* What uv_try_write did not take of c->wbuf (from done on) goes through uv_write. */
static int conn_queue_rest(struct net_conn *c, size_t done) {
    uv_buf_t b = uv_buf_init(c->wbuf.data + done, (unsigned)(c->wbuf.len - done));
    c->wreq.data = c;
    int rc = uv_write(&c->wreq, (uv_stream_t *)&c->tcp, &b, 1, on_written);
    if (rc < 0) {
        log_debug("net", "uv_write failed: %s", uv_strerror(rc));
        return -1;
    }
    c->writing = 1;
    c->write_left = uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp);
    c->write_moved_ms = net_loop_now(c->nl);
    return 0;
}

static int conn_write_out(struct net_conn *c) {
    if (c->tls != NULL) {
        return conn_tls_write_out(c);
    }
    struct sbuf *out = &c->s->out;
    uv_buf_t b = uv_buf_init(out->data, (unsigned)out->len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n < 0 && n != UV_EAGAIN) {
        log_debug("net", "write to client failed: %s", uv_strerror(n));
        return -1;
    }
    size_t done = n > 0 ? (size_t)n : 0;
    if (done == out->len) {
        out_written(out);
        return 0;
    }
    struct sbuf t = c->wbuf;
    c->wbuf = *out;
    *out = t;
    out_written(out);
    return conn_queue_rest(c, done);
}

/*
 * TLS: the replies are encrypted into the session, and what it has to send
 * (records, handshake messages, alerts) is written as in conn_write_out.
 */
static int conn_tls_write_out(struct net_conn *c) {
    struct sbuf *out = &c->s->out;
    if (out->len > 0) {
        if (net_tls_write(c->tls, out->data, out->len) != 0) {
            log_debug("net", "TLS write to %s failed: %s", c->s->peer, net_tls_error(c->tls));
            return -1;
        }
        out_written(out);
    }
    size_t n = net_tls_pending(c->tls);
    if (n == 0) {
        return 0;
    }
    sbuf_reset(&c->wbuf);
    if (sbuf_reserve(&c->wbuf, n) != LEAF_OK) {
        log_error("net", "out of memory for %zu bytes of TLS output; closing the connection", n);
        return -1;
    }
    c->wbuf.len = net_tls_take(c->tls, c->wbuf.data, n);
    uv_buf_t b = uv_buf_init(c->wbuf.data, (unsigned)c->wbuf.len);
    int w = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (w < 0 && w != UV_EAGAIN) {
        log_debug("net", "write to client failed: %s", uv_strerror(w));
        return -1;
    }
    size_t done = w > 0 ? (size_t)w : 0;
    if (done == c->wbuf.len) {
        out_written(&c->wbuf);
        return 0;
    }
    return conn_queue_rest(c, done);
}

/* True when the client has sent bytes not read yet (the drain answers them too). */
int net_conn_has_input(struct net_conn *c) {
    uv_os_fd_t fd;
    char b;
    if (c->tls != NULL && net_tls_has_input(c->tls)) {
        return 1;
    }
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0) {
        return 0;
    }
    return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

static void conn_cork(struct net_conn *c, int on) {
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0) {
        (void)setsockopt(fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
    }
}

/* Lingering: whatever the client still sends is read and dropped, until its FIN. */
static void on_read_linger(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
    struct net_conn *c = st->data;
    (void)buf;
    if (nread < 0) {
        net_conn_close(c);
    }
}

/*
 * The polite drain's end of a plain connection: its last answer is out, so
 * send FIN now and close once the client has closed too. A close at once
 * would answer a request already on its way with RST, which can destroy the
 * answer before the client has read it; with FIN the client sees the end
 * before it sends again (redis-py checks for it before every command).
 */
void net_conn_linger(struct net_conn *c) {
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0 || shutdown(fd, SHUT_WR) != 0) {
        net_conn_close(c);
        return;
    }
    conn_cork(c, 0);
    c->lingering = 1;
    c->linger_ms = net_loop_now(c->nl);
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
    }
    c->tcp.data = c;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read_linger);
    c->reading = 1;
}

void net_conn_flush(struct net_conn *c) {
    if (c->closing || c->lingering) {
        return;
    }
    struct session *s = c->s;
    if (s->out.failed) {
        log_error("net", "out of memory building a reply; closing the connection");
        net_conn_close(c);
        return;
    }
    if (s->close_soon && s->close_idle && !s->close_after && !c->writing && !s->waiting &&
        s->out.len > 0 && c->in_len == 0 && s->head_started_ms == 0 && !net_conn_has_input(c)) {
        /*
         * A polite drain of a protocol without a "last answer" (RESP): this answer leaves
         * no command received unanswered, so it is the last, and the FIN leaves with it (a
         * client that looks for an end before it sends, as redis-py does, sees it and
         * reconnects; commands sent before it are answered first). A connection idle when
         * the drain begins gets no FIN then, while its client may be about to send: after
         * its next answer, or NET_POLITE_IDLE_MS of quiet (conn_sweep).
         */
        s->close_after = 1;
    }
    if (!c->writing && s->close_after && s->close_soon && c->tls == NULL && s->out.len > 0) {
        conn_cork(c, 1); /* the last answer and the FIN leave in one segment (net_conn_linger) */
    }
    if (!c->writing && (s->out.len > 0 || (c->tls != NULL && net_tls_pending(c->tls) > 0)) &&
        conn_write_out(c) != 0) {
        net_conn_close(c);
        return;
    }
    if (!c->writing && s->close_after && !s->waiting) {
        if (s->close_soon && c->tls == NULL) {
            net_conn_linger(c);
            return;
        }
        net_conn_close(c);
        return;
    }
    if (c->nl->draining && !c->nl->polite && !c->writing && !s->waiting && c->in_len == 0 &&
        s->head_started_ms == 0 && !net_conn_has_input(c)) {
        net_conn_close(c); /* every request received so far is answered */
        return;
    }
    if (!c->writing && c->in_len > 0 && !s->waiting && !s->close_after &&
        s->out.len < session_out_max(s)) {
        /* Input held back by the output limit, and the output went out at once
         * (no write callback will come): go on with it from the loop, as the
         * client may send nothing more to trigger a read. */
        uv_timer_start(&c->timer, on_timer, 0, 0);
    }
    net_conn_update_reading(c);
}

/* ---- connection lifetime -------------------------------------------------- */

void net_conn_on_closed(uv_handle_t *h) {
    struct net_conn *c = h->data;
    if (--c->handles_open > 0) {
        return;
    }
    if (c->s != NULL) {
        c->ls->cfg->proto->close(c->s);
    }
    net_tls_free(c->tls);
    free(c->in);
    sbuf_free(&c->wbuf);
    free(c);
}

/* Best effort: a TLS client learns the end was meant (close_notify), if the socket takes it now. */
static void conn_tls_close_notify(struct net_conn *c) {
    char buf[256];
    net_tls_shutdown(c->tls);
    size_t n = net_tls_take(c->tls, buf, sizeof(buf));
    if (n > 0) {
        uv_buf_t b = uv_buf_init(buf, (unsigned)n);
        (void)uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    }
}

void net_conn_close(struct net_conn *c) {
    if (c->closing) {
        return;
    }
    c->closing = 1;
    struct net_loop *nl = c->nl;
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        nl->conns = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    atomic_fetch_sub_explicit(&nl->srv->nconns[c->ls->index], 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&nl->srv->total_conns, 1, memory_order_relaxed);
    if (c->peer_slot != 0) {
        net_peercount_release(&nl->srv->peers, c->peer_slot);
        c->peer_slot = 0;
    }
    if (c->s != NULL) {
        /* Cancel first: after it, no other thread can wake this connection;
         * then take it off the woken list, if a wake came before. */
        leaf_wait_cancel(&c->s->wait);
    }
    conn_unready(c);
    if (c->tls != NULL && !c->writing) {
        conn_tls_close_notify(c);
    }
    uv_timer_stop(&c->timer);
    uv_close((uv_handle_t *)&c->timer, net_conn_on_closed);
    uv_close((uv_handle_t *)&c->tcp, net_conn_on_closed);
}
