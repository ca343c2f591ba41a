#include "resp_conn.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"

/*
 * Commands answered in one call from the server, reported to the done hook
 * together at its end with one clock reading (on the caller's stack: an idle
 * connection holds none of it).
 */
#define RESP_BATCH_MAX 64
struct resp_batch {
    int n;
    struct {
        int command, outcome;
        int64_t started_ns;
    } done[RESP_BATCH_MAX];
};

/* A connection: the session first (the server casts between the two). */
struct resp_conn {
    struct session s;
    struct resp_parser parser;
    struct resp_client client;
    struct resp_request req;
    struct resp_conn_config *cfg;
    struct resp_batch *batch; /* during a call from the server */
    uint64_t reads;           /* reads handed to resp_input so far (resp_request.read_seq) */
};

/* Reports the batch's commands to the done hook: one clock reading for all. */
static void conn_batch_flush(struct resp_conn *c) {
    struct resp_batch *b = c->batch;
    if (b->n == 0) {
        return;
    }
    struct resp_request r = c->req;
    r.cmd = (struct resp_cmd){0, NULL, NULL};
    r.finished_ns = clock_mono_ns();
    for (int i = 0; i < b->n; i++) {
        r.command = b->done[i].command;
        r.outcome = b->done[i].outcome;
        r.started_ns = b->done[i].started_ns;
        c->cfg->done(&r);
    }
    b->n = 0;
}

/* Brackets a call from the server: what it answers is reported at its end. */
static void conn_batch_begin(struct resp_conn *c, struct resp_batch *b) {
    b->n = 0;
    c->batch = b;
}

static void conn_batch_end(struct resp_conn *c) {
    conn_batch_flush(c);
    c->batch = NULL;
}

static void conn_done(struct resp_conn *c) {
    struct resp_batch *b = c->batch;
    if (c->cfg->done == NULL) {
        return;
    }
    if (b->n == RESP_BATCH_MAX) {
        conn_batch_flush(c);
    }
    b->done[b->n].command = c->req.command;
    b->done[b->n].outcome = c->req.outcome;
    b->done[b->n].started_ns = c->req.started_ns;
    b->n++;
}

static void conn_new_request(struct resp_conn *c) {
    c->req = (struct resp_request){
        .out = &c->s.out,
        .client = &c->client,
        .loop = c->s.loop,
        .loopback = c->s.loopback,
        .peer = c->s.peer,
        .first_seen_ms = c->s.now_ms,
        .now_ms = c->s.now_ms,
        .started_ns = c->s.now_ns,
        .command = RESP_COMMAND_NONE,
        .wait = &c->s.wait,
        .ctx = c->cfg->ctx,
        .read_seq = c->reads,
    };
}

int resp_request_repeats(const struct resp_request *req, int max) {
    int n = 0;
    if (req->raw == NULL || req->raw_len == 0) {
        return 0;
    }
    for (size_t off = 0; n < max && off + req->raw_len <= req->rest_len; off += req->raw_len) {
        if (memcmp(req->rest + off, req->raw, req->raw_len) != 0) {
            break;
        }
        n++;
    }
    return n;
}

/* Answers with an error of the protocol itself and closes after it. */
static void conn_fail(struct resp_conn *c, const char *msg) {
    conn_new_request(c);
    resp_reply_errorf(&c->s.out, "ERR %s", msg);
    c->s.close_after = 1;
    c->s.head_started_ms = 0;
    conn_done(c);
}

static void conn_dispatch(struct resp_conn *c) {
    struct resp_request *r = &c->req;
    r->retry_ms = 0;
    r->now_ms = c->s.now_ms;
    if (c->cfg->handler(r) == LEAF_EAGAIN) {
        r->retries++;
        c->s.waiting = 1;
        c->s.resume_after_ms = r->retry_ms;
        return;
    }
    leaf_wait_cancel(&c->s.wait); /* whatever registration the handler left */
    c->s.waiting = 0;
    if (r->close_after) {
        c->s.close_after = 1; /* an in-place upgrade's close_soon: the server closes once
                               * every command received is answered (close_idle) */
    }
    conn_done(c);
    c->s.out_max = c->client.logged_in ? 0 : c->cfg->anonymous_out_max; /* AUTH changes it */
}

static size_t resp_input_batch(struct session *s, const char *data, size_t len) {
    struct resp_conn *c = (struct resp_conn *)s;
    size_t used = 0;
    while (!s->waiting && !s->close_after && used < len && s->out.len < session_out_max(s)) {
        size_t n = 0;
        struct resp_cmd cmd;
        const char *err = NULL;
        resp_parser_set_max(&c->parser, c->client.logged_in ? RESP_MAX_COMMAND_USER
                                                            : RESP_MAX_COMMAND_ANONYMOUS);
        int whole = !resp_parser_in_command(&c->parser); /* the command starts in this read */
        leaf_status_t rc = resp_parse(&c->parser, data + used, len - used, &n, &cmd, &err);
        const char *raw = data + used;
        used += n;
        if (rc == LEAF_EAGAIN) {
            if (s->head_started_ms == 0 && resp_parser_in_command(&c->parser)) {
                s->head_started_ms = s->now_ms;
            }
            return len;
        }
        if (rc != LEAF_OK) {
            conn_fail(c, err != NULL ? err : "Protocol error");
            return len;
        }
        s->head_started_ms = 0;
        conn_new_request(c);
        c->req.cmd = cmd;
        if (whole) {
            c->req.raw = raw;
            c->req.raw_len = n;
            c->req.rest = data + used;
            c->req.rest_len = len - used;
        }
        conn_dispatch(c);
    }
    return used;
}

static size_t resp_input(struct session *s, const char *data, size_t len) {
    struct resp_conn *c = (struct resp_conn *)s;
    struct resp_batch batch;
    c->reads++;
    conn_batch_begin(c, &batch);
    size_t used = resp_input_batch(s, data, len);
    conn_batch_end(c);
    return used;
}

static void resp_resume(struct session *s) {
    struct resp_conn *c = (struct resp_conn *)s;
    struct resp_batch batch;
    c->req.raw = NULL; /* the read that brought it is gone */
    conn_batch_begin(c, &batch);
    conn_dispatch(c);
    conn_batch_end(c);
}

static void resp_timeout(struct session *s) {
    struct resp_conn *c = (struct resp_conn *)s;
    struct resp_batch batch;
    conn_batch_begin(c, &batch);
    conn_fail(c, "timeout: the command was not received in time");
    conn_batch_end(c);
}

static void resp_idle(struct session *s) {
    struct resp_conn *c = (struct resp_conn *)s;
    if (!s->waiting) {
        resp_parser_release_idle(&c->parser);
    }
}

static void resp_close(struct session *s) {
    struct resp_conn *c = (struct resp_conn *)s;
    if (c->cfg->app_close != NULL && c->client.app != NULL) {
        c->cfg->app_close(c->client.app);
    }
    resp_parser_free(&c->parser);
    sbuf_free(&s->out);
    free(c);
}

static struct session *resp_open(void *arg, int loopback, int loop) {
    const struct resp_conn_config *cfg = arg;
    size_t head = (sizeof(struct resp_conn) + 15) & ~(size_t)15;
    struct resp_conn *c = calloc(1, head + cfg->app_size);
    if (c == NULL) {
        return NULL;
    }
    c->cfg = arg;
    c->client.app = cfg->app_size ? (char *)c + head : NULL;
    c->s.loopback = loopback;
    c->s.loop = loop;
    c->s.close_idle = 1; /* a pipeline's commands are all answered before an upgrade's close */
    c->s.out_max = cfg->anonymous_out_max;
    sbuf_init(&c->s.out, 0);
    resp_parser_init(&c->parser);
    c->client.id = __atomic_add_fetch(&c->cfg->next_client_id, 1, __ATOMIC_RELAXED);
    c->client.connected_ms = clock_mono_ms();
    return &c->s;
}

/* A connection refused at accept: Redis's words for maxclients, and the keys that set it. */
static size_t resp_refusal(char *buf, size_t cap) {
    static const char msg[] = "-ERR max number of clients reached (leafd.http.max.connections, or "
                              "leafd.http.max.connections.per.address for this client "
                              "address)\r\n";
    if (cap < sizeof(msg)) {
        return 0;
    }
    memcpy(buf, msg, sizeof(msg));
    return sizeof(msg) - 1;
}

const struct proto_ops resp_proto_ops = {
    .name = "resp",
    .open = resp_open,
    .input = resp_input,
    .resume = resp_resume,
    .timeout = resp_timeout,
    .idle = resp_idle,
    .close = resp_close,
    .refusal = resp_refusal,
};
