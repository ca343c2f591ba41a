#include "net.h"

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
#include "net_tls.h"
#include "peercount.h"

/* The loop's read buffer; a connection keeps only what a read left over. */
#define NET_LOOP_READ_BUF (64u << 10)
/* A connection's own input buffer, when a partial request must be kept. */
#define NET_CONN_IN_BUF (16u << 10)
/* A connection quiet this long gives its buffers back. */
#define NET_RELEASE_IDLE_MS 1000
/* An output buffer that grew past this (a large reply) is freed once written, not kept. */
#define NET_KEEP_OUT_BUF (64u << 10)
/* While draining, a request still arriving gets this long before its timeout answer. */
#define NET_DRAIN_GRACE_MS 1000
/* A polite drain (an in-place upgrade) closes a connection idle this long. */
#define NET_POLITE_IDLE_MS 300
/* ... and, after its last answer and FIN, waits this long at most for the client's FIN. */
#define NET_LINGER_MS 1000
/* Out of descriptors: a listener stops accepting this long, then tries again. */
#define NET_ACCEPT_PAUSE_MS 100
/*
 * An in-place upgrade's drain: a write that moved nothing for this long is a client that does not
 * read, closed (its client reconnects to the new process), and one still writing
 * NET_DRAIN_GRACE_MS after the drain's start is closed too. A stop's drain gives such a client
 * NET_DRAIN_GRACE_MS from the drain's start to begin reading: it may be reading only now.
 */
#define NET_DRAIN_STALL_MS 100
/* Connections one wake-up of a listener accepts at most (the others wait for the next turn). */
#define NET_ACCEPT_BATCH 64
/*
 * With a limit per address, the last 1/8 of max_connections are for addresses holding fewer than
 * PEERCOUNT_FEW connections (docs/OPERATIONS.md, "Connection slots").
 */
#define NET_RESERVE_DIV 8
/* Descriptors kept free of connections at start, beyond those already open. */
#define NET_FD_MARGIN 64

struct net_loop;

/* One listener of one loop. */
struct net_listener {
    uv_poll_t poll;    /* readable: connections to accept (leafd accepts them itself) */
    uv_timer_t resume; /* out of descriptors: polls again after NET_ACCEPT_PAUSE_MS */
    const struct net_listen_config *cfg;
    struct net_loop *nl;
    int index; /* in the server's listener list */
    int fd;    /* the listening socket; closed by loop_drain or loop_destroy */
    int listening;
};

/*
 * One client connection: the socket side. The protocol state is behind s.
 * Owned by its loop's thread; freed in the close callback once the TCP handle
 * and the timer are closed. ready/ready_prev/ready_next are guarded by the
 * loop's ready_lock (another thread's wake() links them).
 */
struct net_conn {
    uv_tcp_t tcp;
    uv_timer_t timer; /* resumes a parked request after resume_after_ms */
    uv_write_t wreq;
    struct net_loop *nl;
    struct net_listener *ls;
    struct session *s;
    struct net_conn *prev, *next; /* the loop's connection list */
    struct net_conn *ready_prev, *ready_next;
    int ready; /* on the loop's woken list */

    char *in; /* input the protocol has not consumed yet (NULL when none) */
    size_t in_len, in_cap;
    struct sbuf wbuf; /* replies being written by uv_write */
    int64_t last_active_ms;
    int writing;         /* wbuf is being written */
    int reading;         /* uv_read_start is active */
    int closing;         /* uv_close has been called */
    int handles_open;    /* handles still to be closed before free */
    int in_loop_buf;     /* the current read went into the loop's buffer */
    struct net_tls *tls; /* TLS session on a TLS listener; NULL = plain text */
    int64_t opened_ms;   /* accepted at (a TLS handshake must end within the request timeout) */
    int lingering;       /* polite drain: last answer sent, FIN sent; reading to the client's FIN */
    int64_t linger_ms;   /* since then */
    uint64_t peer_slot;  /* counted under its address (peercount_take); 0 = not counted */
    size_t write_left;   /* while writing: bytes uv_write had left when last looked at */
    int64_t write_moved_ms; /* while writing: when it last saw bytes leave (conn_write_stalled) */
};

/*
 * A loop's phase. The control thread asks for one (net_loop.want); the loop moves to it on its
 * next wake-up (loop_follow), and never back from NET_STOPPING.
 */
enum net_phase {
    NET_SERVING,  /* accepting */
    NET_HOLDING,  /* a polite drain: not accepting, the listening sockets kept for a resume */
    NET_STOPPING, /* draining, the listeners closed: the loop ends with its last connection */
};

/* One event loop and its listeners. Owned by its thread, see net.h. */
struct net_loop {
    uv_loop_t loop;
    uv_async_t async; /* stop requests and woken requests */
    uv_timer_t sweep; /* once a second: timeouts, idle connections, buffers */

    uv_prepare_t tick; /* before each poll: now_ns is read again on the next turn */
    int64_t now_ns;    /* monotonic ns of this turn of the loop; 0 = not read yet */

    uv_thread_t thread;
    struct net_server *srv;
    int index;
    int loop_ready; /* uv_loop_init succeeded */
    struct net_listener listeners[NET_MAX_LISTENERS];
    int nlisteners;
    atomic_int want;         /* enum net_phase, set by the control thread */
    atomic_int polite_asked; /* net_server_stop_polite ran (and no resume since) */
    int phase;               /* enum net_phase: what the loop does now */
    int polite;              /* this drain closes connections politely */
    int draining;            /* phase != NET_SERVING */
    int64_t drain_started_ms;
    struct net_conn *conns;
    char *rbuf; /* NET_LOOP_READ_BUF bytes */

    pthread_mutex_t ready_lock;
    struct net_conn *ready_head;
};

struct net_server {
    struct net_limits limits;
    const struct net_listen_config *listeners;
    int nlisteners;
    int nloops;
    struct net_loop *loops[NET_MAX_LOOPS];
    atomic_llong nconns[NET_MAX_LISTENERS]; /* process-wide, per listener */
    atomic_llong total_conns;
    atomic_ullong rejected;
    atomic_llong limit_log_ms; /* monotonic ms of the last "limit reached" line, any loop */
    atomic_ullong rejected_per_address;
    atomic_llong addr_log_ms;  /* the same for the limit per address */
    struct peercount peers;    /* connections per client address; slots NULL = no such limit */
    atomic_llong fd_log_ms;    /* the same for "out of descriptors" */
    atomic_ullong fd_pauses;   /* accept pauses for lack of descriptors */
    atomic_ullong stalled;     /* connections closed because their client read nothing */
    atomic_llong stall_log_ms; /* the same for those */
    int fds[NET_MAX_LISTENERS][NET_MAX_LOOPS]; /* the listening sockets; set before threads run */
};

static void conn_process(struct net_conn *c);
static void conn_flush(struct net_conn *c);
static void conn_close(struct net_conn *c);

static int64_t loop_now(struct net_loop *nl) {
    return (int64_t)uv_now(&nl->loop);
}

/* One clock reading per turn of the loop, shared by the connections served in it. */
static int64_t loop_now_ns(struct net_loop *nl) {
    if (nl->now_ns == 0) {
        nl->now_ns = (int64_t)uv_hrtime();
    }
    return nl->now_ns;
}

static void on_tick(uv_prepare_t *h) {
    ((struct net_loop *)h->data)->now_ns = 0;
}

static struct session *conn_session(struct net_conn *c) {
    c->s->now_ms = loop_now(c->nl);
    c->s->now_ns = loop_now_ns(c->nl);
    return c->s;
}

/* ---- waking parked requests (any thread -> loop) ------------------------- */

/* session.wait.wake: thread-safe. The connection is alive: see session.h. */
static void conn_wake(struct leaf_wait *w) {
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
static void conn_resume(struct net_conn *c) {
    uv_timer_stop(&c->timer);
    conn_unready(c);
    struct session *s = conn_session(c);
    if (c->closing || !s->waiting) {
        return;
    }
    c->ls->cfg->proto->resume(s);
    conn_process(c);
}

static void on_timer(uv_timer_t *t) {
    struct net_conn *c = t->data;
    if (conn_session(c)->waiting) {
        conn_resume(c);
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
    struct session *s = conn_session(c);
    size_t used = 0;
    if (!s->waiting && len > 0) {
        used = c->ls->cfg->proto->input(s, data, len);
    }
    if (c->in != NULL && data == c->in) {
        memmove(c->in, c->in + used, len - used);
        c->in_len = len - used;
    } else if (used < len && conn_keep_input(c, data + used, len - used) != 0) {
        conn_close(c);
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
    conn_flush(c);
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
static void conn_update_reading(struct net_conn *c) {
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
    conn_flush(c);
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
    c->last_active_ms = loop_now(c->nl);
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
    conn_flush(c); /* the alert, if OpenSSL wrote one, then close */
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
    conn_flush(c); /* handshake messages, even with no reply */
}

static void on_read_tls(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf) {
    struct net_conn *c = st->data;
    if (!read_begin(c, nread)) {
        return;
    }
    if (net_tls_feed(c->tls, buf->base, (size_t)nread) != 0) {
        log_error("net", "out of memory buffering TLS input; closing the connection");
        conn_close(c);
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
        conn_close(c);
        return;
    }
    if (c->in_len > 0 && !c->s->waiting) {
        conn_process(c); /* input held back by output back-pressure */
    } else {
        conn_flush(c);
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
    c->write_moved_ms = loop_now(c->nl);
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
static int socket_has_input(struct net_conn *c) {
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
        conn_close(c);
    }
}

/*
 * The polite drain's end of a plain connection: its last answer is out, so
 * send FIN now and close once the client has closed too. A close at once
 * would answer a request already on its way with RST, which can destroy the
 * answer before the client has read it; with FIN the client sees the end
 * before it sends again (redis-py checks for it before every command).
 */
static void conn_linger(struct net_conn *c) {
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0 || shutdown(fd, SHUT_WR) != 0) {
        conn_close(c);
        return;
    }
    conn_cork(c, 0);
    c->lingering = 1;
    c->linger_ms = loop_now(c->nl);
    if (c->reading) {
        uv_read_stop((uv_stream_t *)&c->tcp);
    }
    c->tcp.data = c;
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read_linger);
    c->reading = 1;
}

static void conn_flush(struct net_conn *c) {
    if (c->closing || c->lingering) {
        return;
    }
    struct session *s = c->s;
    if (s->out.failed) {
        log_error("net", "out of memory building a reply; closing the connection");
        conn_close(c);
        return;
    }
    if (s->close_soon && s->close_idle && !s->close_after && !c->writing && !s->waiting &&
        s->out.len > 0 && c->in_len == 0 && s->head_started_ms == 0 && !socket_has_input(c)) {
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
        conn_cork(c, 1); /* the last answer and the FIN leave in one segment (conn_linger) */
    }
    if (!c->writing && (s->out.len > 0 || (c->tls != NULL && net_tls_pending(c->tls) > 0)) &&
        conn_write_out(c) != 0) {
        conn_close(c);
        return;
    }
    if (!c->writing && s->close_after && !s->waiting) {
        if (s->close_soon && c->tls == NULL) {
            conn_linger(c);
            return;
        }
        conn_close(c);
        return;
    }
    if (c->nl->draining && !c->nl->polite && !c->writing && !s->waiting && c->in_len == 0 &&
        s->head_started_ms == 0 && !socket_has_input(c)) {
        conn_close(c); /* every request received so far is answered */
        return;
    }
    if (!c->writing && c->in_len > 0 && !s->waiting && !s->close_after &&
        s->out.len < session_out_max(s)) {
        /* Input held back by the output limit, and the output went out at once
         * (no write callback will come): go on with it from the loop, as the
         * client may send nothing more to trigger a read. */
        uv_timer_start(&c->timer, on_timer, 0, 0);
    }
    conn_update_reading(c);
}

/* ---- connection lifetime -------------------------------------------------- */

static void on_conn_closed(uv_handle_t *h) {
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

static void conn_close(struct net_conn *c) {
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
        peercount_release(&nl->srv->peers, c->peer_slot);
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
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
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

/* "ip:port" of a peer ("?" when unknown), for log lines. */
static void peer_name(const struct sockaddr_storage *ss, char *out, size_t cap) {
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof(ip));
        port = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
    }
    snprintf(out, cap, "%s:%d", ip, port);
}

/* The address bytes of a peer (an IPv4-mapped IPv6 address as IPv4); 0 when it has none. */
static size_t peer_addr(const struct sockaddr_storage *ss, const unsigned char **addr) {
    if (ss->ss_family == AF_INET) {
        *addr = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr;
        return 4;
    }
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        *addr = IN6_IS_ADDR_V4MAPPED(a) ? a->s6_addr + 12 : a->s6_addr;
        return IN6_IS_ADDR_V4MAPPED(a) ? 4 : 16;
    }
    return 0;
}

/* One line a second for the whole process, whichever loop logs; 1 when this one may. */
static int log_once_a_second(struct net_loop *nl, atomic_llong *last_ms) {
    int64_t now = loop_now(nl);
    long long last = atomic_load(last_ms);
    return (last == 0 || now - last >= 1000) && atomic_compare_exchange_strong(last_ms, &last, now);
}

/*
 * Counts the connection under its client's address; 0 when that address
 * holds its share already (leafd.http.max.connections.per.address).
 */
static int conn_admit_address(struct net_conn *c, const struct sockaddr_storage *ss,
                              const char *who) {
    struct net_loop *nl = c->nl;
    struct net_server *srv = nl->srv;
    const unsigned char *addr = NULL;
    size_t n = peer_addr(ss, &addr);
    if (srv->peers.slots == NULL || n == 0) {
        return 1; /* no limit per address, or no address to count it under (a peer gone) */
    }
    c->peer_slot = peercount_take(&srv->peers, addr, n);
    if (c->peer_slot != 0) {
        return 1;
    }
    unsigned long long refused = atomic_fetch_add(&srv->rejected_per_address, 1) + 1;
    if (log_once_a_second(nl, &srv->addr_log_ms)) {
        const char *port = strrchr(who, ':'); /* the address is what reached it, not this port */
        int len = port != NULL ? (int)(port - who) : (int)strlen(who);
        log_warn("net",
                 "connection limit leafd.http.max.connections.per.address = %" PRId64
                 " reached by %.*s; closing its new connections on %s (%llu refused so far)",
                 srv->limits.max_per_address, len, who, c->ls->cfg->addr, refused);
    }
    return 0;
}

/* Counts the connection; 0 when the process-wide limit or the one per address says close it. */
static int conn_admit(struct net_conn *c, const struct sockaddr_storage *ss, const char *who) {
    struct net_loop *nl = c->nl;
    struct net_server *srv = nl->srv;
    atomic_fetch_add_explicit(&srv->nconns[c->ls->index], 1, memory_order_relaxed);
    long long n = atomic_fetch_add_explicit(&srv->total_conns, 1, memory_order_relaxed) + 1;
    if (n <= srv->limits.max_connections) {
        return conn_admit_address(c, ss, who);
    }
    atomic_fetch_add_explicit(&srv->rejected, 1, memory_order_relaxed);
    if (log_once_a_second(nl, &srv->limit_log_ms)) {
        log_warn("net",
                 "connection limit leafd.http.max.connections = %" PRId64
                 " reached; closing new clients on %s (%llu refused so far)",
                 srv->limits.max_connections, c->ls->cfg->addr,
                 (unsigned long long)atomic_load(&srv->rejected));
    }
    return 0;
}

/*
 * A connection over a limit: told so in its protocol's words where the
 * socket takes them at once (a plain listener; a TLS client expects a
 * handshake), then closed.
 */
static void conn_refuse(struct net_conn *c) {
    const struct proto_ops *proto = c->ls->cfg->proto;
    char buf[512];
    size_t n =
        c->ls->cfg->tls == NULL && proto->refusal != NULL ? proto->refusal(buf, sizeof(buf)) : 0;
    if (n > 0) {
        uv_buf_t b = uv_buf_init(buf, (unsigned)n);
        (void)uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    }
    conn_close(c);
}

/* A connection fd accepted on ls: a connection of the loop, or closed. */
static void conn_accepted(struct net_listener *ls, int fd) {
    struct net_loop *nl = ls->nl;
    struct net_conn *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        log_error("net", "calloc(connection) failed");
        close(fd);
        return;
    }
    c->nl = nl;
    c->ls = ls;
    uv_tcp_init(&nl->loop, &c->tcp);
    uv_timer_init(&nl->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles_open = 2;
    if (uv_tcp_open(&c->tcp, fd) != 0) {
        close(fd);
        c->closing = 1;
        uv_close((uv_handle_t *)&c->timer, on_conn_closed);
        uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
        return;
    }
    c->next = nl->conns;
    if (nl->conns) {
        nl->conns->prev = c;
    }
    nl->conns = c;
    struct sockaddr_storage ss;
    int len = sizeof(ss), loopback = 0;
    char who[sizeof(c->s->peer)] = "?";
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        loopback = addr_is_loopback(&ss);
        peer_name(&ss, who, sizeof(who));
    }
    if (!conn_admit(c, &ss, who)) {
        conn_refuse(c);
        return;
    }
    c->s = ls->cfg->proto->open(ls->cfg->proto_arg, loopback, nl->index);
    if (c->s == NULL) {
        log_error("net", "out of memory opening a %s connection", ls->cfg->proto->name);
        conn_close(c);
        return;
    }
    c->s->conn = c;
    c->s->wait.wake = conn_wake;
    memcpy(c->s->peer, who, sizeof(who));
    if (ls->cfg->tls != NULL && (c->tls = net_tls_new(ls->cfg->tls)) == NULL) {
        log_error("net", "out of memory opening a TLS session on %s", ls->cfg->addr);
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->last_active_ms = c->opened_ms = loop_now(nl);
    conn_update_reading(c);
}

static void on_listener_readable(uv_poll_t *p, int status, int events);

static void on_listener_resume(uv_timer_t *t) {
    struct net_listener *ls = t->data;
    if (ls->listening) {
        uv_poll_start(&ls->poll, UV_READABLE, on_listener_readable);
    }
}

/*
 * Out of descriptors (EMFILE, ENFILE, or the kernel's memory): stops polling
 * the listener for NET_ACCEPT_PAUSE_MS instead of spinning on accept. The
 * clients wait in the listen backlog and are served once descriptors free.
 */
static void listener_pause(struct net_listener *ls, int err) {
    struct net_server *srv = ls->nl->srv;
    uv_poll_stop(&ls->poll);
    uv_timer_start(&ls->resume, on_listener_resume, NET_ACCEPT_PAUSE_MS, 0);
    unsigned long long n = atomic_fetch_add(&srv->fd_pauses, 1) + 1;
    if (log_once_a_second(ls->nl, &srv->fd_log_ms)) {
        struct rlimit rl = {0, 0};
        getrlimit(RLIMIT_NOFILE, &rl);
        log_warn("net",
                 "accept on %s: %s (RLIMIT_NOFILE %llu, %lld connections open); pausing accepts "
                 "for %d ms (%llu pauses so far; raise LimitNOFILE= or lower "
                 "leafd.http.max.connections)",
                 ls->cfg->addr, strerror(err), (unsigned long long)rl.rlim_cur,
                 (long long)atomic_load(&srv->total_conns), NET_ACCEPT_PAUSE_MS, n);
    }
}

static void on_listener_readable(uv_poll_t *p, int status, int events) {
    struct net_listener *ls = p->data;
    (void)events;
    if (status < 0 || !ls->listening) {
        return;
    }
    for (int i = 0; i < NET_ACCEPT_BATCH; i++) {
        int fd = accept4(ls->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            conn_accepted(ls, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) {
            continue;
        }
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            listener_pause(ls, errno);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK &&
                   log_once_a_second(ls->nl, &ls->nl->srv->fd_log_ms)) {
            log_warn("net", "accept on %s failed: %s", ls->cfg->addr, strerror(errno));
        }
        return;
    }
}

/* ---- per-loop timers, wake-ups and shutdown ------------------------------- */

/* Gives the buffers of a quiet connection back. */
static void conn_release_idle(struct net_conn *c) {
    struct session *s = c->s;
    if (c->writing || s->waiting || c->in_len > 0 || s->head_started_ms != 0 || s->out.len > 0) {
        return;
    }
    c->ls->cfg->proto->idle(conn_session(c));
    sbuf_free(&s->out);
    sbuf_free(&c->wbuf);
}

/*
 * 1 when a write in progress moved no byte for limit_ms: its client reads nothing (or is gone
 * without a word). What libuv has left to write is looked at on each sweep; less than last time
 * is progress.
 */
static int conn_write_stalled(struct net_conn *c, int64_t now, int64_t limit_ms) {
    if (!c->writing) {
        return 0;
    }
    size_t left = uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp);
    if (left < c->write_left) {
        c->write_left = left;
        c->write_moved_ms = now;
        return 0;
    }
    return now - c->write_moved_ms >= limit_ms;
}

/*
 * Closes a connection whose client reads nothing: its replies would hold the connection's output
 * buffers, and a drain, for as long as the client likes (docs/OPERATIONS.md, "Clients that do not
 * read"). One line a second for the whole process.
 */
static void conn_close_stalled(struct net_conn *c, int64_t limit_ms) {
    struct net_server *srv = c->nl->srv;
    unsigned long long n = atomic_fetch_add(&srv->stalled, 1) + 1;
    if (log_once_a_second(c->nl, &srv->stall_log_ms)) {
        log_warn("net",
                 "closing the connection of %s on %s: its client left %zu bytes of replies "
                 "unread for %" PRId64 " ms (%s; %llu such connections closed so far)",
                 c->s->peer, c->ls->cfg->addr, c->write_left + c->s->out.len, limit_ms,
                 c->nl->draining ? "the drain does not wait for it"
                                 : "leafd.http.request.timeout.ms",
                 n);
    }
    conn_close(c);
}

/* Bytes the kernel holds for the client, sent or not, that it has not acknowledged. */
static size_t conn_kernel_unread(struct net_conn *c) {
    uv_os_fd_t fd;
    int n = 0;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0 || ioctl(fd, SIOCOUTQ, &n) != 0 || n < 0) {
        return 0;
    }
    return (size_t)n;
}

/*
 * An upgrade's drain, since_ms into it: 1 when the connection's client is too far behind to wait
 * for. Still writing after NET_DRAIN_GRACE_MS (a client that only trickles: the kernel frees a
 * little of a full receive buffer now and then); or, after NET_DRAIN_STALL_MS, replies still to
 * make while the kernel holds the output limit's worth the client has not read (a RESP pipeline
 * is answered to its end, and a slow machine can take longer to fill the kernel's buffers than
 * the drain may last).
 */
static int conn_drain_behind(struct net_conn *c, int64_t since_ms) {
    const struct session *s = c->s;
    if (c->writing && since_ms >= NET_DRAIN_GRACE_MS) {
        return 1;
    }
    if (since_ms < NET_DRAIN_STALL_MS || c->lingering) {
        return 0;
    }
    int busy = c->writing || s->out.len > 0 || c->in_len > 0 || s->head_started_ms != 0;
    return (busy || socket_has_input(c)) && conn_kernel_unread(c) >= SESSION_MAX_OUTPUT;
}

static void conn_sweep(struct net_loop *nl, struct net_conn *c, int64_t now) {
    const struct net_limits *lim = &nl->srv->limits;
    const struct session *s = c->s;
    if (c->tls != NULL && !net_tls_established(c->tls) &&
        now - c->opened_ms > lim->request_timeout_ms) {
        log_debug("net", "TLS handshake with %s on %s not done in time; closing", s->peer,
                  c->ls->cfg->addr);
        conn_close(c);
        return;
    }
    int64_t stall_ms = !nl->draining ? lim->request_timeout_ms
                       : nl->polite  ? NET_DRAIN_STALL_MS
                                     : NET_DRAIN_GRACE_MS;
    if (conn_write_stalled(c, now, stall_ms)) {
        conn_close_stalled(c, stall_ms);
        return;
    }
    if (nl->polite && conn_drain_behind(c, now - nl->drain_started_ms)) {
        conn_close_stalled(c, now - nl->drain_started_ms);
        return;
    }
    if (c->lingering) {
        if (now - c->linger_ms >= NET_LINGER_MS) {
            conn_close(c);
        }
        return;
    }
    if (s->waiting || c->writing) {
        return;
    }
    int late = s->head_started_ms && now - s->head_started_ms > lim->request_timeout_ms;
    if (nl->draining && s->head_started_ms && now - nl->drain_started_ms >= NET_DRAIN_GRACE_MS) {
        late = 1;
    }
    if (late) {
        c->ls->cfg->proto->timeout(conn_session(c));
        conn_flush(c);
    } else if (nl->draining && nl->polite && !s->head_started_ms && c->in_len == 0 &&
               now - c->last_active_ms >= NET_POLITE_IDLE_MS && !socket_has_input(c)) {
        if (c->tls == NULL) {
            conn_linger(c); /* idle: FIN first, so a request on its way meets an end, not RST */
        } else {
            conn_close(c);
        }
    } else if (!s->head_started_ms && now - c->last_active_ms > lim->idle_timeout_ms) {
        conn_close(c);
    } else if (now - c->last_active_ms >= NET_RELEASE_IDLE_MS) {
        conn_release_idle(c);
    }
}

static void on_sweep(uv_timer_t *t) {
    struct net_loop *nl = t->data;
    int64_t now = loop_now(nl);
    struct net_conn *c = nl->conns, *next;
    for (; c != NULL; c = next) {
        next = c->next;
        conn_sweep(nl, c, now);
    }
}

static void on_listener_closed(uv_handle_t *h) {
    (void)h;
}

/*
 * The end of a drain: the listening sockets are closed (the loop's copies: after an in-place
 * upgrade the new process holds the same sockets) and the loop ends once its last connection is
 * gone (nothing else keeps it running).
 */
static void loop_close_listeners(struct net_loop *nl) {
    for (int i = 0; i < nl->nlisteners; i++) {
        struct net_listener *ls = &nl->listeners[i];
        if (ls->fd >= 0) {
            uv_close((uv_handle_t *)&ls->poll, on_listener_closed);
            uv_close((uv_handle_t *)&ls->resume, on_listener_closed);
            close(ls->fd); /* the poll handle is closed: nothing watches it any more */
            ls->fd = -1;
            ls->listening = 0;
        }
    }
    uv_unref((uv_handle_t *)&nl->async);
    nl->phase = NET_STOPPING;
}

/*
 * Stops accepting and drains. A polite drain that holds (an in-place upgrade, until the new
 * process has taken over) keeps the listening sockets open and the loop running: connections
 * wait in the kernel's queue, and net_server_resume serves them should the new process fail.
 */
static void loop_drain(struct net_loop *nl, int hold) {
    nl->draining = 1;
    nl->polite = hold || atomic_load(&nl->polite_asked);
    nl->drain_started_ms = loop_now(nl);
    for (int i = 0; i < nl->nlisteners; i++) {
        struct net_listener *ls = &nl->listeners[i];
        if (ls->listening) {
            uv_poll_stop(&ls->poll);
            uv_timer_stop(&ls->resume);
            ls->listening = 0;
        }
    }
    /*
     * Every request already sent is answered: a connection closes once its
     * input (buffered and in the socket) is used up and its answers written.
     * Idle connections go now; a request still arriving gets a short grace.
     */
    struct net_conn *c = nl->conns, *next;
    for (; c != NULL; c = next) {
        next = c->next;
        if (nl->polite && conn_write_stalled(c, nl->drain_started_ms, NET_DRAIN_STALL_MS)) {
            conn_close_stalled(c, NET_DRAIN_STALL_MS); /* an upgrade never waits for it */
            continue;
        }
        if (c->writing && c->write_moved_ms < nl->drain_started_ms) {
            c->write_moved_ms = nl->drain_started_ms; /* a stop: its grace starts now */
        }
        if (nl->polite) {
            c->s->close_soon = 1;
        }
        conn_flush(c);
    }
    uv_timer_start(&nl->sweep, on_sweep, 100, 100);
    uv_unref((uv_handle_t *)&nl->sweep);
    nl->phase = NET_HOLDING;
    if (!hold) {
        loop_close_listeners(nl);
    }
}

/*
 * A held drain called off: accepting again on the same sockets (what queued meanwhile is
 * accepted now). Connections told to close after their next answer and not yet at it stay open;
 * those that had their last answer or are closing go, as their clients expect.
 */
static void loop_resume(struct net_loop *nl) {
    nl->draining = 0;
    nl->polite = 0;
    nl->phase = NET_SERVING;
    for (int i = 0; i < nl->nlisteners; i++) {
        struct net_listener *ls = &nl->listeners[i];
        ls->listening = 1;
        uv_poll_start(&ls->poll, UV_READABLE, on_listener_readable);
    }
    for (struct net_conn *c = nl->conns; c != NULL; c = c->next) {
        if (!c->lingering && !c->s->close_after) {
            c->s->close_soon = 0;
        }
    }
    uv_timer_start(&nl->sweep, on_sweep, 1000, 1000);
    uv_ref((uv_handle_t *)&nl->sweep);
}

/* Moves the loop to the phase the control thread asks for. */
static void loop_follow(struct net_loop *nl) {
    int want = atomic_load(&nl->want);
    if (want == nl->phase || nl->phase == NET_STOPPING) {
        return;
    }
    if (want == NET_SERVING) {
        loop_resume(nl);
        return;
    }
    if (nl->phase == NET_SERVING) {
        loop_drain(nl, want == NET_HOLDING);
    } else if (want == NET_STOPPING) {
        loop_close_listeners(nl); /* the held drain goes on to its end */
    }
}

static void on_async(uv_async_t *a) {
    struct net_loop *nl = a->data;
    pthread_mutex_lock(&nl->ready_lock);
    struct net_conn *list = nl->ready_head;
    nl->ready_head = NULL;
    for (struct net_conn *c = list; c != NULL; c = c->ready_next) {
        c->ready = 0;
    }
    pthread_mutex_unlock(&nl->ready_lock);
    /* Resuming may close a connection, but never frees one before the close
     * callbacks, which run after this function returns. */
    for (struct net_conn *c = list, *next; c != NULL; c = next) {
        next = c->ready_next;
        conn_resume(c);
    }
    loop_follow(nl);
}

static void loop_thread(void *arg) {
    struct net_loop *nl = arg;
    uv_run(&nl->loop, UV_RUN_DEFAULT);
    /* Drained: close the loop's own handles and let their callbacks run. */
    uv_close((uv_handle_t *)&nl->sweep, NULL);
    uv_close((uv_handle_t *)&nl->async, NULL);
    uv_close((uv_handle_t *)&nl->tick, NULL);
    uv_run(&nl->loop, UV_RUN_DEFAULT);
}

/* ---- listeners ------------------------------------------------------------ */

/* Opens a listening socket with SO_REUSEPORT, so every loop has its own. */
static int listen_socket(const struct net_listen_config *lc) {
    struct sockaddr_in addr;
    int one = 1;
    if (uv_ip4_addr(lc->host, lc->port, &addr) != 0) {
        log_error("net", "bad listen address %s", lc->addr);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_error("net", "socket() failed: %s", strerror(errno));
        return -1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
        log_error("net", "setsockopt(%s, SO_REUSEPORT) failed: %s", lc->addr, strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        log_error("net", "bind(%s) for %s failed: %s", lc->addr, lc->what ? lc->what : "listening",
                  strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int listener_init(struct net_loop *nl, struct net_listener *ls,
                         const struct net_listen_config *lc, int index) {
    ls->cfg = lc;
    ls->nl = nl;
    ls->index = index;
    if (lc->fds != NULL && nl->index < lc->nfds) {
        /* Inherited from the previous process (an in-place upgrade): already bound. */
        ls->fd = lc->fds[nl->index];
        int fl = fcntl(ls->fd, F_GETFL);
        if (fl < 0 || fcntl(ls->fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
            fcntl(ls->fd, F_SETFD, FD_CLOEXEC) != 0) {
            log_error("net", "inherited socket %d for %s is not usable: %s", ls->fd, lc->addr,
                      strerror(errno));
            return -1;
        }
    } else {
        ls->fd = listen_socket(lc);
    }
    if (ls->fd < 0) {
        return -1;
    }
    nl->srv->fds[index][nl->index] = ls->fd;
    /* leafd accepts itself (on_listener_readable): out of descriptors, it can stop
     * polling the socket, which libuv's listen cannot (it spins on EMFILE). */
    if (listen(ls->fd, 4096) != 0) {
        log_error("net", "listen(%s) failed: %s", lc->addr, strerror(errno));
        return -1;
    }
    int rc = uv_poll_init(&nl->loop, &ls->poll, ls->fd);
    if (rc != 0) {
        log_error("net", "polling %s failed: %s", lc->addr, uv_strerror(rc));
        return -1;
    }
    ls->poll.data = ls;
    uv_timer_init(&nl->loop, &ls->resume);
    ls->resume.data = ls;
    ls->listening = 1;
    uv_poll_start(&ls->poll, UV_READABLE, on_listener_readable);
    return 0;
}

/* ---- loops and the server ------------------------------------------------- */

static void on_handle_closed(uv_handle_t *h) {
    (void)h;
}

static void close_any(uv_handle_t *h, void *arg) {
    if (!uv_is_closing(h)) {
        uv_close(h, on_handle_closed);
    }
}

/* Undoes loop_init, however far it got (only before the loop's thread runs). */
static void loop_destroy(struct net_loop *nl) {
    if (nl->loop_ready) {
        uv_walk(&nl->loop, close_any, NULL);
        uv_run(&nl->loop, UV_RUN_DEFAULT);
        uv_loop_close(&nl->loop);
        pthread_mutex_destroy(&nl->ready_lock);
    }
    for (int i = 0; i < nl->nlisteners; i++) {
        if (nl->listeners[i].fd >= 0) {
            close(nl->listeners[i].fd);
        }
    }
    free(nl->rbuf);
    free(nl);
}

static int loop_init(struct net_loop *nl, struct net_server *srv, int index) {
    nl->srv = srv;
    nl->index = index;
    nl->rbuf = malloc(NET_LOOP_READ_BUF);
    if (nl->rbuf == NULL || uv_loop_init(&nl->loop) != 0) {
        log_error("net", "setting up event loop %d failed", index);
        return -1;
    }
    pthread_mutex_init(&nl->ready_lock, NULL);
    nl->loop_ready = 1;
    for (int i = 0; i < srv->nlisteners; i++) {
        nl->listeners[i].fd = -1;
        nl->nlisteners++;
        if (listener_init(nl, &nl->listeners[i], &srv->listeners[i], i) != 0) {
            return -1;
        }
    }
    uv_async_init(&nl->loop, &nl->async, on_async);
    nl->async.data = nl;
    uv_timer_init(&nl->loop, &nl->sweep);
    nl->sweep.data = nl;
    uv_timer_start(&nl->sweep, on_sweep, 1000, 1000);
    uv_prepare_init(&nl->loop, &nl->tick);
    nl->tick.data = nl;
    uv_prepare_start(&nl->tick, on_tick);
    uv_unref((uv_handle_t *)&nl->tick); /* never what keeps the loop running */
    return 0;
}

/* Descriptors the process has open now (0 when /proc cannot tell). */
static long long open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    long long n = 0;
    if (d == NULL) {
        return 0;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n > 0 ? n - 1 : 0; /* less opendir's own */
}

/*
 * Fits the connection limit to RLIMIT_NOFILE: raises the soft limit to the
 * hard one where it can, then lowers max_connections to what the soft limit
 * leaves after the descriptors open now, the listeners and a margin.
 */
static void limits_fit_nofile(struct net_limits *lim, int nsockets) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
            log_info("net", "RLIMIT_NOFILE soft limit raised from %llu to the hard limit %llu",
                     (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
            rl = want;
        }
    }
    if (rl.rlim_cur == RLIM_INFINITY) {
        return;
    }
    long long now = open_fds();
    long long room = (long long)rl.rlim_cur - now - nsockets - NET_FD_MARGIN;
    if (room < 1) {
        room = 1;
    }
    if (lim->max_connections > room) {
        log_warn("net",
                 "leafd.http.max.connections = %" PRId64 " is more than RLIMIT_NOFILE %llu leaves "
                 "for connections (%lld descriptors open, %d kept free); using %lld (raise "
                 "LimitNOFILE= or ulimit -n, or lower leafd.http.max.connections)",
                 lim->max_connections, (unsigned long long)rl.rlim_cur, now + nsockets,
                 NET_FD_MARGIN, room);
        lim->max_connections = room;
    }
}

/*
 * The limit per client address, once max_connections is fitted: 0 takes
 * half of it, so one client leaves the other half to the rest, and the last
 * eighth is kept for addresses with few connections, so two clients cannot
 * take everything either; at or above it, no table is kept (no lock at
 * accept). 0, or -1 out of memory (logged).
 */
static int limits_per_address(struct net_server *srv) {
    struct net_limits *lim = &srv->limits;
    if (lim->max_per_address <= 0) {
        lim->max_per_address = lim->max_connections > 1 ? lim->max_connections / 2 : 1;
    }
    if (lim->max_per_address >= lim->max_connections) {
        return 0;
    }
    if (peercount_init(&srv->peers, (size_t)lim->max_connections, lim->max_per_address,
                       lim->max_connections / NET_RESERVE_DIV) != LEAF_OK) {
        log_error("net", "out of memory for the connection count of %" PRId64 " addresses",
                  lim->max_connections);
        return -1;
    }
    return 0;
}

leaf_status_t net_server_start(struct net_server **out, const struct net_limits *limits,
                               const struct net_listen_config *listeners, int nlisteners,
                               int nloops) {
    if (nlisteners < 1 || nlisteners > NET_MAX_LISTENERS || nloops < 1 || nloops > NET_MAX_LOOPS) {
        log_error("net", "bad server shape: %d listeners, %d loops", nlisteners, nloops);
        return LEAF_EINVAL;
    }
    struct net_server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        log_error("net", "calloc(server) failed");
        return LEAF_ENOMEM;
    }
    srv->limits = *limits;
    limits_fit_nofile(&srv->limits, nlisteners * nloops);
    if (limits_per_address(srv) != 0) {
        free(srv);
        return LEAF_ENOMEM;
    }
    srv->listeners = listeners;
    srv->nlisteners = nlisteners;
    for (int i = 0; i < nloops; i++) {
        struct net_loop *nl = calloc(1, sizeof(*nl));
        if (nl == NULL) {
            log_error("net", "calloc(loop) failed");
            goto fail;
        }
        srv->loops[srv->nloops++] = nl;
        if (loop_init(nl, srv, i) != 0) {
            goto fail;
        }
    }
    *out = srv; /* visible before any loop can serve /metrics */
    for (int i = 0; i < srv->nloops; i++) {
        if (uv_thread_create(&srv->loops[i]->thread, loop_thread, srv->loops[i]) != 0) {
            log_error("net", "uv_thread_create(loop %d) failed", i);
            abort();
        }
    }
    return LEAF_OK;
fail:
    /* Start-up failed before any thread ran: release in reverse order. */
    while (srv->nloops > 0) {
        loop_destroy(srv->loops[--srv->nloops]);
    }
    peercount_destroy(&srv->peers);
    free(srv);
    return LEAF_ERR;
}

void net_server_stop(struct net_server *srv) {
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        atomic_store(&srv->loops[i]->want, NET_STOPPING);
        uv_async_send(&srv->loops[i]->async);
    }
}

void net_server_stop_polite(struct net_server *srv) {
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        struct net_loop *nl = srv->loops[i];
        atomic_store(&nl->polite_asked, 1);
        if (atomic_load(&nl->want) == NET_SERVING) {
            atomic_store(&nl->want, NET_HOLDING);
        }
        uv_async_send(&nl->async);
    }
}

leaf_status_t net_server_resume(struct net_server *srv) {
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        if (atomic_load(&srv->loops[i]->want) != NET_HOLDING) {
            return LEAF_EINVAL; /* stopping: its listeners are closed */
        }
    }
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        struct net_loop *nl = srv->loops[i];
        atomic_store(&nl->polite_asked, 0);
        atomic_store(&nl->want, NET_SERVING);
        uv_async_send(&nl->async);
    }
    return srv != NULL ? LEAF_OK : LEAF_EINVAL;
}

void net_server_join(struct net_server *srv) {
    if (srv == NULL) {
        return; /* never started (a stop before accepting) */
    }
    net_server_stop(srv); /* a held drain ends too: nothing else would end its loop */
    for (int i = 0; i < srv->nloops; i++) {
        struct net_loop *nl = srv->loops[i];
        uv_thread_join(&nl->thread);
        uv_loop_close(&nl->loop);
        pthread_mutex_destroy(&nl->ready_lock);
        free(nl->rbuf);
        free(nl);
    }
    peercount_destroy(&srv->peers);
    free(srv);
}

int net_server_listener_fds(const struct net_server *srv, int listener, int *fds, int cap) {
    int n = 0;
    if (srv == NULL || listener < 0 || listener >= srv->nlisteners) {
        return 0;
    }
    for (int i = 0; i < srv->nloops && n < cap; i++) {
        fds[n++] = srv->fds[listener][i];
    }
    return n;
}

uint64_t net_server_closed_unread(const struct net_server *srv) {
    return srv != NULL ? atomic_load_explicit(&srv->stalled, memory_order_relaxed) : 0;
}

uint64_t net_server_connections(const struct net_server *srv, int listener) {
    if (srv == NULL || listener < 0 || listener >= srv->nlisteners) {
        return 0;
    }
    long long n = atomic_load_explicit(&srv->nconns[listener], memory_order_relaxed);
    return n > 0 ? (uint64_t)n : 0;
}
