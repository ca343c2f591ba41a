#ifndef LEAF_NET_H
#define LEAF_NET_H

/*
 * The server layer: event loops, listeners, connections, back-pressure,
 * timeouts, drain, and waking parked requests. It knows no protocol: each
 * listener carries a struct proto_ops (net_session.h), and HTTP and RESP plug in
 * the same way. It knows no route table, handler or metric either.
 *
 * Several libuv loops, one per thread, each with its own SO_REUSEPORT
 * listener per configured address, so the kernel spreads connections and no
 * lock is taken between loops on the request path.
 *
 * Per connection: input goes to the protocol; its replies collect in
 * session.out and are written once per read ("response batching"), so
 * pipelined replies leave in request order. A request that cannot be
 * answered yet parks (session.waiting): the connection stops feeding input
 * and resumes when the request's wait is woken from another thread
 * (session.wait.wake, thread-safe) or resume_after_ms has passed. The event
 * loop never waits.
 *
 * Memory: a connection holds no buffer while idle. Input is read into the
 * loop's buffer and only a partial request is copied into the connection;
 * a connection quiet for a second gives its buffers back.
 *
 * TLS (a listener with a net_tls_ctx): the socket's bytes go through the
 * connection's struct net_tls (net_tls.h) on their way in and out; the
 * protocol sees plaintext as on a plain listener. Plain connections take
 * none of these paths: their read callbacks and writes are the same
 * functions as before TLS existed, and a plain connection's only extra cost
 * is one pointer test per flush with nothing to write.
 *
 * Limits: output over session_out_max() stops reading from that client until it
 * drains, and a write that moves no byte for request_timeout_ms (a drain: 100 ms)
 * closes the connection (docs/OPERATIONS.md, "Clients that do not read"); a
 * request that takes longer than request_timeout_ms to arrive gets the
 * protocol's timeout answer; idle connections close after idle_timeout_ms;
 * beyond max_connections (process-wide), or beyond max_per_address from its
 * client's address, or in the reserve (the last eighth of max_connections) from
 * an address holding a few already, a new connection is told so
 * (proto_ops.refusal, on a plain listener) and closed at once, with a log line
 * at most once a second.
 *
 * Ownership: a loop and all its connections belong to the loop's thread.
 * Other threads reach a loop only through net_server_stop(), _stop_polite(),
 * _resume() and a parked request's wake(), which queue or set an atomic and
 * call uv_async_send.
 */
#include <stdint.h>

#include "net_session.h"
#include "status.h"

#define NET_MAX_LOOPS 64
#define NET_MAX_LISTENERS 4

struct net_tls_ctx;

struct net_listen_config {
    const char *addr; /* "host:port", as configured (messages) */
    const char *what; /* the setting it comes from, e.g. "leafd.listen" (messages) */
    const char *host; /* dotted IPv4 */
    int port;
    const struct proto_ops *proto; /* the protocol spoken there */
    void *proto_arg;               /* passed to proto->open */
    struct net_tls_ctx *tls;       /* TLS on this listener (net_tls.h); NULL = plain text */
    /* An in-place upgrade (docs/UPGRADING.md): listening sockets inherited from the previous
     * process, one per loop; loop i adopts fds[i] instead of binding (i < nfds). */
    const int *fds;
    int nfds;
    /* The claim on this address net_listen_probe took (net_claim.c), held until the process
     * exits; -1 = none yet. Owned by the main thread. */
    int claim_fd;
};

struct net_limits {
    int64_t idle_timeout_ms;
    int64_t request_timeout_ms;
    int64_t max_connections;
    /* Connections one client address may hold (net_peercount.h); 0 = half of max_connections once
     * that is fitted to RLIMIT_NOFILE; max_connections or more = no limit per address. */
    int64_t max_per_address;
};

struct net_server;

/*
 * Claims the address for this process (net_claim.c, docs/OPERATIONS.md "One
 * process per listen address"), then fails (logged, naming the address) when
 * another process listens there. The listeners use SO_REUSEPORT, which would
 * otherwise let a second leafd share the port. Called before anything is
 * registered; the claim stays in lc->claim_fd until the process exits.
 */
leaf_status_t net_listen_probe(struct net_listen_config *lc);

/* Binds every loop's listeners and starts the loop threads (errors logged). */
leaf_status_t net_server_start(struct net_server **out, const struct net_limits *limits,
                               const struct net_listen_config *listeners, int nlisteners,
                               int nloops);

/* Asks every loop to drain: stop accepting, finish in-flight requests, close. */
void net_server_stop(struct net_server *srv); /* NULL (never started): nothing to stop */

/*
 * The drain of an in-place upgrade: as net_server_stop, but politely, for
 * clients that reconnect: each connection closes after its next answer (HTTP
 * says `Connection: close` in it; a protocol that sets close_idle, RESP, after
 * the answer that leaves no command received unanswered), or once it has been
 * idle for NET_POLITE_IDLE_MS, never while a request may be on its way.
 * The loops stop accepting but keep their listening sockets open and keep
 * running, even with no connection left, until net_server_stop (the new
 * process has taken over) or net_server_resume (it failed before that).
 */
void net_server_stop_polite(struct net_server *srv);

/*
 * After net_server_stop_polite and before net_server_stop: the loops accept
 * again on the same sockets (connections queued meanwhile are served) and
 * connections not yet at their last answer stay open. LEAF_EINVAL (nothing
 * changes) when the server is not in such a drain.
 */
leaf_status_t net_server_resume(struct net_server *srv);

/* Stops what still runs (net_server_stop), waits for every loop thread to finish; frees the
 * server. */
void net_server_join(struct net_server *srv); /* NULL: nothing */

/*
 * The listening sockets of listener i, one per loop, into fds (at most cap);
 * returns how many. Any thread: they are fixed from start until net_server_stop (a polite
 * drain keeps them).
 */
int net_server_listener_fds(const struct net_server *srv, int listener, int *fds, int cap);

/* Connections closed because their client left its replies unread
 * (docs/OPERATIONS.md, "Clients that do not read"), since start. Any thread; NULL: 0. */
uint64_t net_server_closed_unread(const struct net_server *srv);

/* Open connections on listener i (0..nlisteners-1), summed over loops. Any thread. */
uint64_t net_server_connections(const struct net_server *srv, int listener);

#endif
