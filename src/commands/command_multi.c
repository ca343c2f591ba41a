/*
 * MULTI / EXEC / DISCARD: the queue of a RESP connection's transaction
 * (command_multi.h says what is queued and when IDs are issued).
 */
#include "command_multi.h"

#include <stdlib.h>
#include <string.h>

#include "command_auth.h"
#include "command_client.h"
#include "command_ids.h"
#include "command_outcome.h"
#include "validate.h"

static struct command_multi_queue *multi_of(const struct resp_request *req) {
    return &((struct command_client *)req->client->app)->multi;
}

/* Gives the queue's memory back (the transaction, if any, goes on without it). */
static void multi_drop_queue(struct command_multi_queue *m) {
    free(m->q);
    m->q = NULL;
    m->n = m->cap = m->next = m->sub_retries = 0;
    m->ids = 0;
    sbuf_free(&m->args);
    sbuf_free(&m->replies);
}

/*
 * Back to no transaction. The buffers go too: a queue may have grown to
 * RESP_MULTI_BYTES_MAX and EXEC's replies to 100000 IDs, which a connection
 * must not keep for its next commands (docs/reference/resp.md, "Memory per
 * connection").
 */
static void multi_clear(struct command_multi_queue *m) {
    multi_drop_queue(m);
    m->active = m->dirty = 0;
}

int command_multi_queueing(const struct resp_request *req) {
    return req->client->app != NULL && multi_of(req)->active;
}

/* The transaction will abort at EXEC: what it queued is never run, so it is dropped now. */
static void multi_doom(struct command_multi_queue *m) {
    m->dirty = 1;
    multi_drop_queue(m);
}

void command_multi_refused(struct resp_request *req) {
    if (command_multi_queueing(req)) {
        multi_doom(multi_of(req));
    }
}

void command_multi_reset(struct resp_request *req) {
    multi_clear(multi_of(req));
}

leaf_status_t command_multi(struct resp_request *req) {
    struct command_multi_queue *m = multi_of(req);
    if (m->active) {
        return command_outcome_error(req, RESP_O_ERR, "ERR MULTI calls can not be nested");
    }
    multi_clear(m);
    sbuf_init(&m->args, RESP_MULTI_BYTES_MAX); /* never grows past it */
    m->active = 1;
    resp_reply_simple(req->out, "OK");
    return LEAF_OK;
}

leaf_status_t command_multi_discard(struct resp_request *req) {
    struct command_multi_queue *m = multi_of(req);
    if (!m->active) {
        return command_outcome_error(req, RESP_O_ERR, "ERR DISCARD without MULTI");
    }
    multi_clear(m);
    resp_reply_simple(req->out, "OK");
    return LEAF_OK;
}

/* Refuses a command inside MULTI: its error now, -EXECABORT at EXEC. */
static leaf_status_t refuse(struct resp_request *req, const char *msg) {
    multi_doom(multi_of(req));
    return command_outcome_error(req, RESP_O_ERR, "%s", msg);
}

/* The bytes command c takes in command_multi_queue.args. */
static size_t args_bytes(const struct resp_cmd *c) {
    size_t n = 0;
    for (int i = 0; i < c->argc; i++) {
        n += c->argvlen[i] + 1;
    }
    return n;
}

/* The IDs an ID command asks for: its count argument, else one. */
static int64_t ids_asked(const struct resp_request *req) {
    int count = 1;
    if (req->cmd.argc >= 3 &&
        validate_count(req->cmd.argv[2], req->cmd.argvlen[2], &count) != LEAF_OK) {
        count = 1;
    }
    return count;
}

static int queue_room(struct command_multi_queue *m) {
    if (m->n < m->cap) {
        return 1;
    }
    int cap = m->cap ? m->cap * 2 : 8;
    if (cap > RESP_MULTI_COMMANDS_MAX) {
        cap = RESP_MULTI_COMMANDS_MAX;
    }
    struct command_multi_entry *q = realloc(m->q, (size_t)cap * sizeof(*q));
    if (q == NULL) {
        return 0;
    }
    m->q = q;
    m->cap = cap;
    return 1;
}

leaf_status_t command_multi_queue(struct resp_request *req, resp_handler_fn fn, int queueable,
                                  int ids, int bare) {
    struct command_multi_queue *m = multi_of(req);
    const struct resp_cmd *c = &req->cmd;
    if (!queueable || c->argc > RESP_MULTI_ARGS_MAX) {
        multi_doom(m);
        return command_outcome_error(
            req, RESP_O_ERR,
            "ERR '%.64s' cannot be queued in a transaction: leafd queues ID "
            "commands, PING and ECHO",
            c->argv[0]);
    }
    if (ids && !command_ids_check(req, bare)) {
        multi_doom(m);
        return LEAF_OK;
    }
    if (m->dirty) {
        resp_reply_simple(req->out, "QUEUED"); /* as Redis answers; EXEC aborts, nothing to keep */
        return LEAF_OK;
    }
    int64_t asked = ids ? ids_asked(req) : 0;
    if (m->n >= RESP_MULTI_COMMANDS_MAX || m->ids + asked > RESP_MULTI_IDS_MAX ||
        m->args.len + args_bytes(c) > RESP_MULTI_BYTES_MAX) {
        multi_doom(m);
        return command_outcome_error(
            req, RESP_O_ERR,
            "ERR transaction too large: at most %d commands, %d IDs and %zu "
            "bytes of arguments",
            RESP_MULTI_COMMANDS_MAX, RESP_MULTI_IDS_MAX, RESP_MULTI_BYTES_MAX);
    }
    if (!queue_room(m)) {
        return refuse(req, "ERR out of memory queueing the command");
    }
    struct command_multi_entry *e = &m->q[m->n];
    e->fn = fn;
    e->argc = c->argc;
    e->ids = ids;
    e->bare = bare;
    for (int i = 0; i < c->argc; i++) {
        e->off[i] = m->args.len;
        e->len[i] = c->argvlen[i];
        sbuf_append(&m->args, c->argv[i], c->argvlen[i]);
        sbuf_putc(&m->args, '\0');
    }
    if (m->args.failed) {
        return refuse(req, "ERR out of memory queueing the command");
    }
    m->n++;
    m->ids += asked;
    resp_reply_simple(req->out, "QUEUED");
    return LEAF_OK;
}

/* Queued command i's arguments, as a command. */
static struct resp_cmd entry_cmd(const struct command_multi_queue *m, int i, const char **argv,
                                 size_t *argvlen) {
    const struct command_multi_entry *e = &m->q[i];
    for (int a = 0; a < e->argc; a++) {
        argv[a] = m->args.data + e->off[a];
        argvlen[a] = e->len[a];
    }
    return (struct resp_cmd){e->argc, argv, argvlen};
}

/*
 * The rights were checked when each command was queued; a revoke, a rotated
 * secret or a deleted user since then must stop it too. 1 when every ID
 * command may still run; else 0 with the first refusal as EXEC's reply.
 */
static int exec_still_allowed(struct resp_request *req, struct command_multi_queue *m) {
    for (int i = 0; i < m->n; i++) {
        if (!m->q[i].ids) {
            continue;
        }
        const char *argv[RESP_MULTI_ARGS_MAX];
        size_t argvlen[RESP_MULTI_ARGS_MAX];
        struct resp_request sub = *req;
        sub.cmd = entry_cmd(m, i, argv, argvlen);
        sub.raw = NULL;
        if (!command_auth_allowed(&sub, AUTH_NEED_IDS, 1, m->q[i].bare)) {
            req->outcome = sub.outcome;
            return 0;
        }
    }
    return 1;
}

/* Runs queued command i into m->replies: LEAF_OK (answered) or LEAF_EAGAIN (parked). */
static leaf_status_t run_one(struct resp_request *req, struct command_multi_queue *m, int i) {
    const char *argv[RESP_MULTI_ARGS_MAX];
    size_t argvlen[RESP_MULTI_ARGS_MAX];
    struct resp_request sub = *req;
    sub.cmd = entry_cmd(m, i, argv, argvlen);
    sub.raw = NULL; /* EXEC's bytes are not the queued command's */
    sub.out = &m->replies;
    sub.retries = m->sub_retries;
    sub.first_seen_ms = m->sub_first_seen_ms;
    sub.retry_ms = 0;
    leaf_status_t rc = m->q[i].fn(&sub);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = sub.retry_ms;
    }
    return rc;
}

leaf_status_t command_multi_exec(struct resp_request *req) {
    struct command_multi_queue *m = multi_of(req);
    if (!m->active) {
        return command_outcome_error(req, RESP_O_ERR, "ERR EXEC without MULTI");
    }
    if (m->dirty) {
        multi_clear(m);
        return command_outcome_error(req, RESP_O_ERR,
                                     "EXECABORT Transaction discarded because of previous errors.");
    }
    if (req->retries == 0 && !exec_still_allowed(req, m)) {
        multi_clear(m); /* the refusal is EXEC's reply, as Redis answers an ACL change */
        return LEAF_OK;
    }
    if (req->retries == 0) {
        m->next = 0;
        m->sub_retries = 0;
        m->sub_first_seen_ms = req->now_ms;
        sbuf_reset(&m->replies);
    }
    /* Each command starts its own clock when it first runs, as if sent alone. */
    while (m->next < m->n) {
        if (run_one(req, m, m->next) == LEAF_EAGAIN) {
            m->sub_retries++;
            return LEAF_EAGAIN;
        }
        m->next++;
        m->sub_retries = 0;
        m->sub_first_seen_ms = req->now_ms;
    }
    int failed = m->replies.failed;
    if (!failed) {
        resp_reply_array(req->out, (size_t)m->n);
        sbuf_append(req->out, m->replies.data, m->replies.len);
    }
    multi_clear(m);
    if (failed) {
        return command_outcome_error(req, RESP_O_ERR, "ERR out of memory building EXEC's reply");
    }
    return LEAF_OK;
}
