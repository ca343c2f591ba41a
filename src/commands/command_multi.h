#ifndef LEAF_COMMAND_MULTI_H
#define LEAF_COMMAND_MULTI_H

/*
 * MULTI / EXEC / DISCARD (docs/reference/resp.md), as redis-py's default
 * pipeline() sends them. With authentication on, MULTI needs a logged-in
 * user (the table's need): a queue is memory held for its client, bounded
 * by RESP_MULTI_* (command_client.h) and given back when the transaction ends or
 * fails. After MULTI an ID command (and PING, ECHO) is
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

#include "command_client.h"
#include "resp_conn.h"
#include "sbuf.h"
#include "status.h"

leaf_status_t command_multi(struct resp_request *req);
leaf_status_t command_multi_exec(struct resp_request *req);
leaf_status_t command_multi_discard(struct resp_request *req);

/* 1 between MULTI and EXEC / DISCARD: the dispatcher then queues instead of running. */
int command_multi_queueing(const struct resp_request *req);
/* Queues the command for fn (checked first when ids; bare as command_auth_allowed's); answers
 * +QUEUED or the refusal. */
leaf_status_t command_multi_queue(struct resp_request *req, resp_handler_fn fn, int queueable,
                                  int ids, int bare);
/* The dispatcher refused a command (unknown, arity, auth): inside MULTI, EXEC will abort. */
void command_multi_refused(struct resp_request *req);
/* RESET: forgets the transaction. */
void command_multi_reset(struct resp_request *req);

#endif
