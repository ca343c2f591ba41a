#ifndef LEAF_NET_SESSION_H
#define LEAF_NET_SESSION_H

/*
 * What the server layer (src/net) and a protocol module (src/http, src/resp)
 * share about one connection; a parked request's wake-up is leaf_wait.h (src/base).
 * libc only, so the protocols stay free of libuv and are tested without sockets.
 *
 * The server owns the socket and the event loop; the protocol owns parsing
 * and framing. The protocol embeds a struct session first in its
 * per-connection state and keeps its fields current; the server reads them
 * to decide when to read, write, wait and close.
 *
 * Ownership: a session and its protocol state belong to the connection's
 * event-loop thread. The one exception is session.wait, which another thread
 * may wake (see struct leaf_wait, leaf_wait.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "leaf_wait.h"
#include "sbuf.h"

/*
 * Replies waiting for the socket beyond this stop the reading and parsing of more requests
 * (back-pressure), unless the protocol sets a smaller budget in session.out_max; one reply
 * always goes out whole. A client that reads nothing for the request timeout is closed
 * (docs/OPERATIONS.md, "Clients that do not read").
 */
#define SESSION_MAX_OUTPUT (256u << 10)

struct session {
    struct sbuf out;         /* replies not yet handed to the socket */
    struct leaf_wait wait;   /* the parked request's wake-up */
    int64_t now_ms;          /* the loop's monotonic time, set before each call */
    int64_t now_ns;          /* monotonic ns, read once per loop iteration (see below) */
    int64_t resume_after_ms; /* parked: resume after this long even if not woken */
    int64_t head_started_ms; /* a request is partly received since then; 0 = none */
    size_t out_max;          /* set by the protocol: its output budget now (e.g. RESP before
                              * AUTH); 0 = SESSION_MAX_OUTPUT. session_out_max() reads it */
    int waiting;             /* a request is parked: feed no input, write what is ready */
    int close_after;         /* close once out is written */
    int close_soon;          /* close after the next answer (set by the server: an in-place
                              * upgrade's drain); the protocol says so where it can */
    int close_idle;          /* set by a protocol that cannot say "this answer is the last"
                              * (RESP): under close_soon the server answers every request
                              * received (buffered or in the socket) and closes once none is
                              * left, instead of after the next answer */
    int loopback;            /* the peer is a loopback address */
    char peer[48];           /* the peer's "ip:port" (set by the server after open), for logs */
    int loop;                /* index of the serving loop (per-loop counters) */
    void *conn;              /* the server's connection (set by the server; read by wake) */
};

/* Replies waiting beyond this stop the parsing of more requests (session.out_max). */
static inline size_t session_out_max(const struct session *s) {
    return s->out_max > 0 && s->out_max < SESSION_MAX_OUTPUT ? s->out_max : SESSION_MAX_OUTPUT;
}

/*
 * A protocol module, as the server sees it. Every call is made on the
 * connection's loop thread, with s->now_ms and s->now_ns set. now_ns is the
 * clock read once per turn of the loop, before the first connection served
 * in that turn: no later than the arrival of any input handed over in it, so
 * it is where a request's latency starts, and no connection pays a clock
 * reading of its own for that.
 */
struct proto_ops {
    const char *name; /* "http", "resp": logs and metrics */
    /* New connection: allocates the protocol state (buffers come later). */
    struct session *(*open)(void *arg, int loopback, int loop);
    /* Parses and answers requests from data; returns the bytes consumed. It
     * stops early when a request parks, close_after is set, or out is over
     * the output limit; the server passes the rest again later. */
    size_t (*input)(struct session *s, const char *data, size_t len);
    /* The parked request may go on (woken, or resume_after_ms passed). */
    void (*resume)(struct session *s);
    /* A request took longer than the request timeout (or the drain grace) to
     * arrive: answer with the protocol's error and set close_after. */
    void (*timeout)(struct session *s);
    /* Nothing is pending: release what can be released (idle connections
     * cost almost nothing). */
    void (*idle)(struct session *s);
    /* The connection is gone: free everything (s->wait is already cancelled). */
    void (*close)(struct session *s);
    /* Writes into buf (cap bytes) what a connection refused at accept by a connection limit
     * is told before it is closed, in the protocol's error shape; returns its length. NULL or
     * 0: nothing. No session exists for such a connection. */
    size_t (*refusal)(char *buf, size_t cap);
};

#endif
