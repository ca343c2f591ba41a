#ifndef LEAF_NET_STATE_H
#define LEAF_NET_STATE_H

/*
 * The server layer's private half, shared by its files and by nothing outside src/net:
 * net.c (the server: start, stop, the descriptor limit), net_loop.c (one event loop: its
 * thread, wake-ups, sweep timer and drain), net_listener.c (the listening sockets and
 * accepting, with the connection limits) and net_conn.c (one client connection: input, TLS,
 * output, close). What each struct is and which thread owns it is said at the struct;
 * net.h says how the layer works.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "net.h"
#include "net_peercount.h"
#include "net_tls.h"
#include "sbuf.h"

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
 * NET_PEERCOUNT_FEW connections (docs/OPERATIONS.md, "Connection slots").
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
    int fd;    /* the listening socket; closed by loop_drain or net_loop_destroy */
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
    uint64_t peer_slot;  /* counted under its address (net_peercount_take); 0 = not counted */
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

/*
 * The server: made and freed by the thread that calls net_server_start and _join (the main
 * thread), and fixed once the loops run but for its atomics, which every loop updates, and
 * peers (net_peercount.h: its own lock).
 */
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
    atomic_llong addr_log_ms;   /* the same for the limit per address */
    struct net_peercount peers; /* connections per client address; slots NULL = no such limit */
    atomic_llong fd_log_ms;     /* the same for "out of descriptors" */
    atomic_ullong fd_pauses;    /* accept pauses for lack of descriptors */
    atomic_ullong stalled;      /* connections closed because their client read nothing */
    atomic_llong stall_log_ms;  /* the same for those */
    int fds[NET_MAX_LISTENERS][NET_MAX_LOOPS]; /* the listening sockets; set before threads run */
};

static inline int64_t net_loop_now(struct net_loop *nl) {
    return (int64_t)uv_now(&nl->loop);
}

/* One clock reading per turn of the loop, shared by the connections served in it. */
static inline int64_t net_loop_now_ns(struct net_loop *nl) {
    if (nl->now_ns == 0) {
        nl->now_ns = (int64_t)uv_hrtime();
    }
    return nl->now_ns;
}

/* One line a second for the whole process, whichever loop logs; 1 when this one may. */
static inline int net_log_once_a_second(struct net_loop *nl, atomic_llong *last_ms) {
    int64_t now = net_loop_now(nl);
    long long last = atomic_load(last_ms);
    return (last == 0 || now - last >= 1000) && atomic_compare_exchange_strong(last_ms, &last, now);
}

/* net_loop.c */
int net_loop_init(struct net_loop *nl, struct net_server *srv, int index);
void net_loop_destroy(struct net_loop *nl);
void net_loop_thread(void *arg);

/* net_listener.c */
int net_listener_init(struct net_loop *nl, struct net_listener *ls,
                      const struct net_listen_config *lc, int index);
void net_listener_on_readable(uv_poll_t *p, int status, int events);

/* net_conn.c */
struct session *net_conn_session(struct net_conn *c);
void net_conn_wake(struct leaf_wait *w);
void net_conn_resume(struct net_conn *c);
void net_conn_update_reading(struct net_conn *c);
int net_conn_has_input(struct net_conn *c);
void net_conn_linger(struct net_conn *c);
void net_conn_flush(struct net_conn *c);
void net_conn_on_closed(uv_handle_t *h);
void net_conn_close(struct net_conn *c);

#endif
