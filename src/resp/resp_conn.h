#ifndef LEAF_RESP_CONN_H
#define LEAF_RESP_CONN_H

/*
 * RESP as a protocol module of the server layer (src/net/net_session.h), beside
 * http_conn: bytes go in, replies come out in session.out. It parses with
 * resp_codec.h, hands each command to a handler through a callback and
 * reports each answered command through a completion hook. It knows no
 * command; the command table is the handler's (src/tables/table_resp.c).
 *
 * A handler writes exactly one reply with resp_reply_*() into req->out and
 * returns LEAF_OK, or writes nothing and returns LEAF_EAGAIN after setting
 * req->retry_ms and, optionally, registering req->wait. The command is then
 * parked and handed to the handler again, unchanged but for retries, when it
 * is woken or retry_ms has passed. Replies to pipelined commands leave in
 * order: nothing after a parked command is parsed until it is answered.
 *
 * A malformed frame gets "-ERR Protocol error: ..." and the connection is
 * closed after it; other connections are not affected.
 *
 * Ownership: a connection's state belongs to its loop's thread.
 * struct resp_conn_config is shared by every loop (read-only but for the
 * client-ID counter, which is atomic).
 */
#include <stddef.h>
#include <stdint.h>

#include "net_session.h"
#include "resp_codec.h"
#include "sbuf.h"
#include "status.h"

#define RESP_CLIENT_NAME_MAX 64
#define RESP_USER_MAX 64
/*
 * What one command may hold in all (resp_parser_set_max): before a user has
 * logged in on the connection (and always with authentication off, whatever
 * AUTH was sent: resp_client.logged_in), and after. The largest ID command
 * (LEAF.IDS sequence:<128-byte tag> 10000) is under 200 bytes; the rest is
 * room for HELLO, AUTH, CLIENT SETNAME, ECHO. What a connection may hold in
 * all is in docs/reference/resp.md, "Memory per connection".
 */
#define RESP_MAX_COMMAND_ANONYMOUS (4u << 10)
#define RESP_MAX_COMMAND_USER (16u << 10)
/*
 * Replies waiting for a client before AUTH (authentication on) beyond this stop the parsing of
 * its next command (session.out_max): COMMAND DOCS answers 6 KB to 30 bytes, and a client that
 * does not read must not make an anonymous connection hold megabytes (docs/OPERATIONS.md,
 * "Clients that do not read").
 */
#define RESP_OUT_ANONYMOUS (16u << 10)

/* What commands may change about their connection (HELLO, CLIENT, AUTH). */
struct resp_client {
    uint64_t id; /* CLIENT ID: unique in the process, from 1 */
    int resp3;   /* replies in RESP3 (after HELLO 3) */
    char name[RESP_CLIENT_NAME_MAX + 1];
    char user[RESP_USER_MAX + 1]; /* the user AUTH named, "" = none (CLIENT INFO) */
    int logged_in; /* a user's secret was checked (authentication on): the larger limits apply */
    int64_t connected_ms; /* monotonic ms at accept */
    void *app; /* resp_conn_config.app_size zeroed bytes the handler owns (e.g. who AUTHed) */
};

/* What a handler sees of a command. Valid until it is answered. */
struct resp_request {
    struct resp_cmd cmd;
    struct sbuf *out; /* the reply goes here */
    struct resp_client *client;
    int loop;              /* index of the serving event loop */
    int loopback;          /* the peer is a loopback address */
    const char *peer;      /* the peer's "ip:port", for log lines */
    int retries;           /* times this command was parked so far */
    int64_t first_seen_ms; /* monotonic ms when the command was first dispatched */
    int64_t now_ms;        /* the loop's monotonic time at this dispatch */
    int64_t started_ns;    /* monotonic ns of the loop turn that brought it (session.now_ns) */
    int64_t finished_ns;   /* monotonic ns when answered: set for the done hook only */
    int64_t retry_ms;      /* set by a handler that returns LEAF_EAGAIN */
    int command;           /* set by the handler: its table row (accounting); -1 = none */
    int outcome;           /* set by the handler: how it ended (accounting) */
    int close_after;       /* set by the handler: close once the reply is written */
    struct leaf_wait *wait;
    void *ctx; /* the handler's context (resp_conn_config.ctx) */
    /*
     * Where the command came from, for resp_request_repeats(): its bytes when
     * one read brought all of them (else raw is NULL: a command split over
     * reads, a parked one handed over again, a queued one run by EXEC), what
     * followed them in that read, and which read of the connection it was.
     */
    const char *raw;
    size_t raw_len;
    const char *rest;
    size_t rest_len;
    uint64_t read_seq;
};

/*
 * How many commands byte-for-byte equal to this one follow it at once in
 * the same read (pipelined), at most max; 0 when raw is NULL. A handler may
 * do their work together (one reservation of IDs for 16 pipelined INCRs);
 * each of them is still handed over, checked and answered on its own.
 */
int resp_request_repeats(const struct resp_request *req, int max);

typedef leaf_status_t (*resp_handler_fn)(struct resp_request *req);
/*
 * Called once per answered command, after its reply was appended. Commands
 * answered together (pipelined commands read in one go) are reported
 * together, after the last of their replies, with one clock reading for all
 * of them in req->finished_ns; finished_ns - started_ns is then the time
 * from the loop turn that brought a command to the moment its reply and
 * those before it were ready. Only command, outcome, started_ns,
 * finished_ns, loop, client and ctx are meaningful here (not cmd).
 */
typedef void (*resp_done_fn)(const struct resp_request *req);

struct resp_conn_config {
    resp_handler_fn handler;
    resp_done_fn done; /* may be NULL */
    void *ctx;
    uint64_t next_client_id; /* atomic; starts at 0 */
    size_t app_size;         /* per-connection state of the handler's (resp_client.app) */

    /* Releases what app holds when the connection closes; may be NULL. */
    void (*app_close)(void *app);
    /* The output budget of a connection no user has logged in on (session.out_max): main sets
     * RESP_OUT_ANONYMOUS with authentication on; 0 = SESSION_MAX_OUTPUT. */
    size_t anonymous_out_max;
};

/* req->command of a reply the protocol wrote itself (protocol error, timeout). */
#define RESP_COMMAND_NONE (-1)

/* The protocol's entry points; open() takes a struct resp_conn_config. */
extern const struct proto_ops resp_proto_ops;

#endif
