/* One event loop: its thread, wake-ups, the sweep timer and the drain (net.h). */

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

static void on_tick(uv_prepare_t *h) {
    ((struct net_loop *)h->data)->now_ns = 0;
}

/* ---- per-loop timers, wake-ups and shutdown ------------------------------- */

/* Gives the buffers of a quiet connection back. */
static void conn_release_idle(struct net_conn *c) {
    struct session *s = c->s;
    if (c->writing || s->waiting || c->in_len > 0 || s->head_started_ms != 0 || s->out.len > 0) {
        return;
    }
    c->ls->cfg->proto->idle(net_conn_session(c));
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
    if (net_log_once_a_second(c->nl, &srv->stall_log_ms)) {
        log_warn("net",
                 "closing the connection of %s on %s: its client left %zu bytes of replies "
                 "unread for %" PRId64 " ms (%s; %llu such connections closed so far)",
                 c->s->peer, c->ls->cfg->addr, c->write_left + c->s->out.len, limit_ms,
                 c->nl->draining ? "the drain does not wait for it"
                                 : "leafd.http.request.timeout.ms",
                 n);
    }
    net_conn_close(c);
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
    return (busy || net_conn_has_input(c)) && conn_kernel_unread(c) >= SESSION_MAX_OUTPUT;
}

static void conn_sweep(struct net_loop *nl, struct net_conn *c, int64_t now) {
    const struct net_limits *lim = &nl->srv->limits;
    const struct session *s = c->s;
    if (c->tls != NULL && !net_tls_established(c->tls) &&
        now - c->opened_ms > lim->request_timeout_ms) {
        log_debug("net", "TLS handshake with %s on %s not done in time; closing", s->peer,
                  c->ls->cfg->addr);
        net_conn_close(c);
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
            net_conn_close(c);
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
        c->ls->cfg->proto->timeout(net_conn_session(c));
        net_conn_flush(c);
    } else if (nl->draining && nl->polite && !s->head_started_ms && c->in_len == 0 &&
               now - c->last_active_ms >= NET_POLITE_IDLE_MS && !net_conn_has_input(c)) {
        if (c->tls == NULL) {
            net_conn_linger(c); /* idle: FIN first, so a request on its way meets an end, not RST */
        } else {
            net_conn_close(c);
        }
    } else if (!s->head_started_ms && now - c->last_active_ms > lim->idle_timeout_ms) {
        net_conn_close(c);
    } else if (now - c->last_active_ms >= NET_RELEASE_IDLE_MS) {
        conn_release_idle(c);
    }
}

static void on_sweep(uv_timer_t *t) {
    struct net_loop *nl = t->data;
    int64_t now = net_loop_now(nl);
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
    nl->drain_started_ms = net_loop_now(nl);
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
        net_conn_flush(c);
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
        uv_poll_start(&ls->poll, UV_READABLE, net_listener_on_readable);
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
        net_conn_resume(c);
    }
    loop_follow(nl);
}

void net_loop_thread(void *arg) {
    struct net_loop *nl = arg;
    uv_run(&nl->loop, UV_RUN_DEFAULT);
    /* Drained: close the loop's own handles and let their callbacks run. */
    uv_close((uv_handle_t *)&nl->sweep, NULL);
    uv_close((uv_handle_t *)&nl->async, NULL);
    uv_close((uv_handle_t *)&nl->tick, NULL);
    uv_run(&nl->loop, UV_RUN_DEFAULT);
}

/* ---- setting a loop up and tearing it down ---------------------------------- */

static void on_handle_closed(uv_handle_t *h) {
    (void)h;
}

static void close_any(uv_handle_t *h, void *arg) {
    if (!uv_is_closing(h)) {
        uv_close(h, on_handle_closed);
    }
}

/* Undoes net_loop_init, however far it got (only before the loop's thread runs). */
void net_loop_destroy(struct net_loop *nl) {
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

int net_loop_init(struct net_loop *nl, struct net_server *srv, int index) {
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
        if (net_listener_init(nl, &nl->listeners[i], &srv->listeners[i], i) != 0) {
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
