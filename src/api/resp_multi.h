#ifndef LEAF_RESP_MULTI_H
#define LEAF_RESP_MULTI_H

/*
 * MULTI / EXEC / DISCARD (contract section 17), as redis-py's default
 * pipeline() sends them. After MULTI an ID command (and PING, ECHO) is
 * checked (its key, its count, the caller's right on the key) and queued
 * with +QUEUED; nothing is issued until EXEC, which runs the queue in order
 * and answers one array. A command that cannot be queued (any other, an
 * unknown one, wrong arity, a bad key, a refusal) is answered with its error
 * when it is sent, and EXEC then answers -EXECABORT, so a failed
 * transaction consumes no ID. DISCARD drops the queue. A queued command
 * that fails at EXEC (an unknown tag, no database) is an error in the
 * array, as Redis answers: the others have issued their IDs.
 *
 * EXEC may park, as any ID command: when a queued command waits for a
 * range, EXEC returns LEAF_EAGAIN and goes on where it stopped when it is
 * handed back. Ownership: the connection's loop thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "resp_conn.h"
#include "sbuf.h"
#include "status.h"

/* A queued command has at most this many arguments (the ID commands, PING, ECHO). */
#define RESP_MULTI_ARGS_MAX 3
/* At most this many queued commands, and IDs asked for by them, per transaction. */
#define RESP_MULTI_COMMANDS_MAX 1000
#define RESP_MULTI_IDS_MAX 100000

struct resp_multi_entry {
    resp_handler_fn fn;
    int argc;
    int ids; /* an ID command: its right on the key is checked again at EXEC */
    size_t off[RESP_MULTI_ARGS_MAX]; /* into resp_multi.args */
    size_t len[RESP_MULTI_ARGS_MAX];
};

struct resp_multi {
    int active;  /* between MULTI and EXEC / DISCARD */
    int dirty;   /* a command was refused: EXEC answers -EXECABORT */
    int n, cap;  /* queued commands, room in q */
    int64_t ids; /* IDs the queued commands ask for */
    struct resp_multi_entry *q;
    struct sbuf args; /* the queued arguments, each NUL-terminated */
    /* EXEC in progress: the next command, its first dispatch and parkings, the replies so far. */
    int next;
    int64_t sub_first_seen_ms;
    int sub_retries;
    struct sbuf replies;
};

leaf_status_t resp_multi_cmd_multi(struct resp_request *req);
leaf_status_t resp_multi_cmd_exec(struct resp_request *req);
leaf_status_t resp_multi_cmd_discard(struct resp_request *req);

/* 1 between MULTI and EXEC / DISCARD: the dispatcher then queues instead of running. */
int resp_multi_queueing(const struct resp_request *req);
/* Queues the command for fn (checked first when ids); answers +QUEUED or the refusal. */
leaf_status_t resp_multi_queue(struct resp_request *req, resp_handler_fn fn, int queueable,
                               int ids);
/* The dispatcher refused a command (unknown, arity, auth): inside MULTI, EXEC will abort. */
void resp_multi_refused(struct resp_request *req);
/* RESET: forgets the transaction. */
void resp_multi_reset(struct resp_request *req);

#endif
