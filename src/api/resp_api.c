/*
 * The Redis-protocol command table: one row per command, with Redis's arity
 * convention (n: exactly n arguments with the name; -n: at least n), its
 * flags as COMMAND reports them, its key positions, and its handler. The
 * ID commands (INCR, INCRBY, LEAF.IDS, GET) issue through ids.c, as the HTTP
 * handlers do; the rest is what the common clients send on connect and for
 * tooling (section "Redis protocol" of the README lists them).
 */
#include "resp_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "clock.h"
#include "num.h"
#include "resp_slot.h"
#include "validate.h"

/* ---- outcomes (the metric's status label) ---------------------------------- */

#define RESP_OUTCOMES(X)                                                                           \
    X(O_OK, "ok")                                                                                  \
    X(O_ERR, "err")                                                                                \
    X(O_BAD_KEY, "bad_key")                                                                        \
    X(O_WRONG_MODE, "wrong_mode")                                                                  \
    X(O_PROTOCOL, "protocol_error")                                                                \
    X(O_NOAUTH, "noauth")                                                                          \
    X(O_WRONGPASS, "wrongpass")                                                                    \
    X(O_NOPERM, "noperm")

enum {
#define RESP_OUTCOME_ENUM(e, name) e,
    RESP_OUTCOMES(RESP_OUTCOME_ENUM)
#undef RESP_OUTCOME_ENUM
        O_IDS /* O_IDS + enum ids_error: the ID errors, by their stable code */
};

static const char *const outcome_names[O_IDS] = {
#define RESP_OUTCOME_NAME(e, name) name,
    RESP_OUTCOMES(RESP_OUTCOME_NAME)
#undef RESP_OUTCOME_NAME
};

int resp_api_outcome_count(void) {
    return O_IDS + IDS_E_COUNT;
}

const char *resp_api_outcome_name(int outcome) {
    if (outcome >= 0 && outcome < O_IDS) {
        return outcome_names[outcome];
    }
    return outcome >= O_IDS && outcome < O_IDS + IDS_E_COUNT
               ? ids_error_info((enum ids_error)(outcome - O_IDS))->code
               : "other";
}

/* Writes an error reply and records its outcome; always LEAF_OK (answered). */
static leaf_status_t __attribute__((format(printf, 3, 4)))
reply_error(struct resp_request *req, int outcome, const char *fmt, ...) {
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    resp_reply_error(req->out, msg);
    req->outcome = outcome;
    return LEAF_OK;
}

void resp_api_refuse(struct resp_request *req, enum auth_verdict v) {
    int outcome = v == AUTH_NOAUTH ? O_NOAUTH : v == AUTH_WRONGPASS ? O_WRONGPASS : O_NOPERM;
    reply_error(req, outcome, "%s", auth_verdict_resp(v));
}

static leaf_status_t reply_ok(struct resp_request *req) {
    resp_reply_simple(req->out, "OK");
    return LEAF_OK;
}

/* ---- keys: the namespace names the mode ------------------------------------- */

enum key_ns { KEY_SNOWFLAKE, KEY_SEGMENT, KEY_SEQUENCE, KEY_OPAQUE };

struct key_ref {
    enum key_ns ns;
    const char *name;
    size_t len;
};

static const struct {
    const char *prefix;
    size_t len;
    enum key_ns ns;
} key_spaces[] = {
    {"snowflake:", 10, KEY_SNOWFLAKE},
    {"segment:", 8, KEY_SEGMENT},
    {"sequence:", 9, KEY_SEQUENCE},
    {"opaque:", 7, KEY_OPAQUE},
};

/* Reads argument i as a key; on failure the error reply is written and 0 returned. */
static int key_parse(struct resp_request *req, int i, struct key_ref *k) {
    const char *a = req->cmd.argv[i];
    size_t n = req->cmd.argvlen[i];
    for (size_t s = 0; s < sizeof(key_spaces) / sizeof(key_spaces[0]); s++) {
        if (n >= key_spaces[s].len && memcmp(a, key_spaces[s].prefix, key_spaces[s].len) == 0) {
            k->ns = key_spaces[s].ns;
            k->name = a + key_spaces[s].len;
            k->len = n - key_spaces[s].len;
            if (!validate_tag(k->name, k->len)) {
                reply_error(req, O_IDS + IDS_E_BAD_TAG,
                            "BAD_TAG the part after '%s' must be 1 to 128 bytes of [A-Za-z0-9._:-]",
                            key_spaces[s].prefix);
                return 0;
            }
            return 1;
        }
    }
    reply_error(req, O_BAD_KEY,
                "BAD_KEY the key names the mode: snowflake:<key>, segment:<biz_tag>, "
                "sequence:<name> or opaque:<biz_tag>");
    return 0;
}

/* Reads argument i as a count of IDs (1..10000); on failure replies and returns 0. */
static int count_parse(struct resp_request *req, int i, int *count) {
    if (validate_count(req->cmd.argv[i], req->cmd.argvlen[i], count) != LEAF_OK) {
        reply_error(req, O_IDS + IDS_E_BAD_COUNT, "BAD_COUNT %s",
                    ids_error_info(IDS_E_BAD_COUNT)->message);
        return 0;
    }
    return 1;
}

static leaf_status_t issue_outcome(struct resp_request *req, const struct key_ref *k,
                                   const struct ids_call *c, leaf_status_t rc);

/*
 * Issues IDs for key. LEAF_OK (ids filled), LEAF_EAGAIN (parked), or
 * LEAF_ERR with the error reply written.
 */
static leaf_status_t issue(struct resp_request *req, const struct key_ref *k, int count, int dense,
                           int64_t *ids) {
    struct ids_call c = {
        .mode = k->ns == KEY_SNOWFLAKE ? IDS_SNOWFLAKE
                : k->ns == KEY_SEGMENT ? IDS_SEGMENT
                : k->ns == KEY_OPAQUE  ? IDS_OPAQUE
                                       : IDS_SEQUENCE,
        .key = k->name,
        .key_len = k->len,
        .count = count,
        .dense = dense,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = req->now_ms,
        .wait = req->wait,
    };
    leaf_status_t rc = ids_issue((const struct api_ctx *)req->ctx, &c, ids);
    return issue_outcome(req, k, &c, rc);
}

/* Answers a refused ID call: -MOVED and -TRYAGAIN as Redis Cluster, else -CODE message. */
static leaf_status_t issue_outcome(struct resp_request *req, const struct key_ref *k,
                                   const struct ids_call *c, leaf_status_t rc) {
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = c->retry_ms;
    } else if (rc != LEAF_OK && c->err == IDS_E_NOT_PRIMARY && c->primary.resp[0] != '\0') {
        reply_error(req, O_IDS + (int)c->err, "MOVED %u %s",
                    resp_key_slot(req->cmd.argv[1], req->cmd.argvlen[1]), c->primary.resp);
    } else if (rc != LEAF_OK && (c->err == IDS_E_NO_PRIMARY || c->err == IDS_E_NOT_PRIMARY)) {
        reply_error(req, O_IDS + (int)c->err,
                    "TRYAGAIN no sequence primary can issue now (an election or a handover)");
    } else if (rc != LEAF_OK) {
        const struct ids_error_info *e = ids_error_info(c->err);
        char code[32];
        size_t i = 0;
        for (; e->code[i] != '\0' && i + 1 < sizeof(code); i++) {
            code[i] = (char)(e->code[i] >= 'a' && e->code[i] <= 'z' ? e->code[i] - 'a' + 'A'
                                                                    : e->code[i]);
        }
        code[i] = '\0';
        reply_error(req, O_IDS + (int)c->err, "%s %s", code, e->message);
    }
    (void)k;
    return rc;
}

/* ---- ID commands --------------------------------------------------------------- */

/* INCR key: one ID. */
static leaf_status_t cmd_incr(struct resp_request *req) {
    struct key_ref k;
    int64_t id;
    if (!key_parse(req, 1, &k)) {
        return LEAF_OK;
    }
    leaf_status_t rc = issue(req, &k, 1, 0, &id);
    if (rc == LEAF_OK) {
        resp_reply_int(req->out, id);
    }
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* INCRBY key n: the last of n consecutive IDs (dense modes only). */
static leaf_status_t cmd_incrby(struct resp_request *req) {
    struct key_ref k;
    int count;
    int64_t last;
    if (!key_parse(req, 1, &k) || !count_parse(req, 2, &count)) {
        return LEAF_OK;
    }
    int scattered = k.ns == KEY_SNOWFLAKE || k.ns == KEY_OPAQUE;
    if (scattered && count == 1) {
        /* A block of one is consecutive: answered as INCR (redis-py's incr() sends INCRBY k 1). */
        int64_t id;
        leaf_status_t rc = issue(req, &k, 1, 0, &id);
        if (rc == LEAF_OK) {
            resp_reply_int(req->out, id);
        }
        return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
    }
    if (scattered) {
        return reply_error(req, O_WRONG_MODE,
                           "WRONG_MODE %s IDs are not consecutive, so INCRBY cannot hand "
                           "out a block of them; use LEAF.IDS %s %d",
                           k.ns == KEY_OPAQUE ? "opaque" : "snowflake", req->cmd.argv[1], count);
    }
    leaf_status_t rc = issue(req, &k, count, 1, &last);
    if (rc == LEAF_OK) {
        resp_reply_int(req->out, last);
    }
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* LEAF.IDS key n: an array of n ascending IDs, any mode. */
static leaf_status_t cmd_leaf_ids(struct resp_request *req) {
    struct key_ref k;
    int count;
    if (!key_parse(req, 1, &k) || !count_parse(req, 2, &count)) {
        return LEAF_OK;
    }
    int64_t stack[API_IDS_STACK];
    int64_t *ids = api_ids_alloc(stack, count);
    if (ids == NULL) {
        return reply_error(req, O_IDS + IDS_E_OUT_OF_MEMORY, "OUT_OF_MEMORY out of memory");
    }
    leaf_status_t rc = issue(req, &k, count, 0, ids);
    if (rc == LEAF_OK) {
        resp_reply_array(req->out, (size_t)count);
        for (int i = 0; i < count; i++) {
            resp_reply_int(req->out, ids[i]);
        }
    }
    api_ids_free(stack, ids);
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* GET sequence:<name>: the last ID issued for the sequence. */
static leaf_status_t cmd_get(struct resp_request *req) {
    struct key_ref k;
    if (!key_parse(req, 1, &k)) {
        return LEAF_OK;
    }
    if (k.ns != KEY_SEQUENCE) {
        return reply_error(req, O_WRONG_MODE,
                           "WRONG_MODE GET reads the last ID of a sequence: GET sequence:<name>");
    }
    struct ids_call c = {
        .mode = IDS_SEQUENCE,
        .key = k.name,
        .key_len = k.len,
        .count = 1,
        .loop = req->loop,
        .first_seen_ms = req->first_seen_ms,
        .now_ms = req->now_ms,
        .wait = req->wait,
    };
    int64_t last = 0;
    leaf_status_t rc = ids_last((const struct api_ctx *)req->ctx, &c, &last);
    if (rc == LEAF_OK && last > 0) {
        resp_reply_int(req->out, last);
    } else if (rc == LEAF_OK) {
        resp_reply_null(req->out, req->client->resp3);
    } else if (rc == LEAF_ERR && c.err == IDS_E_UNKNOWN_SEQUENCE) {
        resp_reply_null(req->out, req->client->resp3); /* nil: none yet */
        rc = LEAF_OK;
    } else {
        rc = issue_outcome(req, &k, &c, rc);
    }
    return rc == LEAF_EAGAIN ? LEAF_EAGAIN : LEAF_OK;
}

/* ---- connection commands ------------------------------------------------------ */

static leaf_status_t cmd_ping(struct resp_request *req) {
    if (req->cmd.argc > 2) {
        return reply_error(req, O_ERR, "ERR wrong number of arguments for 'ping' command");
    }
    if (req->cmd.argc == 2) {
        resp_reply_bulk(req->out, req->cmd.argv[1], req->cmd.argvlen[1]);
    } else {
        resp_reply_simple(req->out, "PONG");
    }
    return LEAF_OK;
}

static leaf_status_t cmd_echo(struct resp_request *req) {
    resp_reply_bulk(req->out, req->cmd.argv[1], req->cmd.argvlen[1]);
    return LEAF_OK;
}

/* A client name: Redis refuses spaces and newlines in it. */
static int set_name(struct resp_request *req, int i) {
    const char *n = req->cmd.argv[i];
    size_t len = req->cmd.argvlen[i];
    for (size_t j = 0; j < len; j++) {
        if (n[j] < '!' || n[j] > '~') {
            reply_error(req, O_ERR,
                        "ERR Client names cannot contain spaces, newlines or special "
                        "characters.");
            return 0;
        }
    }
    if (len > RESP_CLIENT_NAME_MAX) {
        reply_error(req, O_ERR, "ERR client name longer than %d bytes", RESP_CLIENT_NAME_MAX);
        return 0;
    }
    memcpy(req->client->name, n, len);
    req->client->name[len] = '\0';
    return 1;
}

static void hello_pair(struct sbuf *b, const char *key, const char *val) {
    resp_reply_bulk(b, key, strlen(key));
    resp_reply_bulk(b, val, strlen(val));
}

/* HELLO [protover [AUTH user secret] [SETNAME name]] */
static leaf_status_t cmd_hello(struct resp_request *req) {
    const struct resp_cmd *c = &req->cmd;
    int proto = req->client->resp3 ? 3 : 2;
    int i = 1;
    if (c->argc > 1) {
        int64_t v;
        if (num_parse_i64(c->argv[1], c->argvlen[1], &v) != LEAF_OK) {
            return reply_error(req, O_ERR,
                               "ERR Protocol version is not an integer or out of range");
        }
        if (v != 2 && v != 3) {
            return reply_error(req, O_ERR, "NOPROTO unsupported protocol version");
        }
        proto = (int)v;
        i = 2;
    }
    for (; i < c->argc; i++) {
        if (resp_arg_is(c, i, "auth") && i + 2 < c->argc) {
            if (!resp_auth_login(req, c->argv[i + 1], c->argvlen[i + 1], c->argv[i + 2],
                                 c->argvlen[i + 2])) {
                return LEAF_OK;
            }
            i += 2;
        } else if (resp_arg_is(c, i, "setname") && i + 1 < c->argc) {
            if (!set_name(req, i + 1)) {
                return LEAF_OK;
            }
            i += 1;
        } else {
            return reply_error(req, O_ERR, "ERR Syntax error in HELLO option '%.64s'", c->argv[i]);
        }
    }
    req->client->resp3 = proto == 3;
    struct sbuf *b = req->out;
    int r3 = req->client->resp3;
    resp_reply_map(b, 7, r3);
    hello_pair(b, "server", "redis");
    hello_pair(b, "version", LEAFD_REDIS_VERSION);
    resp_reply_bulk(b, "proto", 5);
    resp_reply_int(b, proto);
    resp_reply_bulk(b, "id", 2);
    resp_reply_int(b, (int64_t)req->client->id);
    hello_pair(b, "mode", "standalone");
    hello_pair(b, "role", "master");
    resp_reply_bulk(b, "modules", 7);
    resp_reply_array(b, 0);
    return LEAF_OK;
}

static leaf_status_t cmd_select(struct resp_request *req) {
    if (req->cmd.argvlen[1] == 1 && req->cmd.argv[1][0] == '0') {
        return reply_ok(req);
    }
    return reply_error(req, O_ERR, "ERR DB index is out of range");
}

static leaf_status_t client_info(struct resp_request *req) {
    const struct resp_client *cl = req->client;
    char line[256];
    int n = snprintf(
        line, sizeof(line), "id=%llu name=%s age=%lld db=0 user=%s resp=%d lib-name= lib-ver=\n",
        (unsigned long long)cl->id, cl->name, (long long)((req->now_ms - cl->connected_ms) / 1000),
        cl->user[0] ? cl->user : "default", cl->resp3 ? 3 : 2);
    resp_reply_verbatim(req->out, line, (size_t)n, cl->resp3);
    return LEAF_OK;
}

/* CLIENT SETNAME|GETNAME|ID|SETINFO|INFO */
static leaf_status_t cmd_client(struct resp_request *req) {
    const struct resp_cmd *c = &req->cmd;
    if (resp_arg_is(c, 1, "setname") && c->argc == 3) {
        return set_name(req, 2) ? reply_ok(req) : LEAF_OK;
    }
    if (resp_arg_is(c, 1, "getname") && c->argc == 2) {
        if (req->client->name[0] == '\0') {
            resp_reply_null(req->out, req->client->resp3);
        } else {
            resp_reply_bulk(req->out, req->client->name, strlen(req->client->name));
        }
        return LEAF_OK;
    }
    if (resp_arg_is(c, 1, "id") && c->argc == 2) {
        resp_reply_int(req->out, (int64_t)req->client->id);
        return LEAF_OK;
    }
    if (resp_arg_is(c, 1, "setinfo") && c->argc == 4) {
        if (!resp_arg_is(c, 2, "lib-name") && !resp_arg_is(c, 2, "lib-ver")) {
            return reply_error(req, O_ERR, "ERR Unrecognized option '%.64s'", c->argv[2]);
        }
        return reply_ok(req);
    }
    if (resp_arg_is(c, 1, "info") && c->argc == 2) {
        return client_info(req);
    }
    return reply_error(req, O_ERR,
                       "ERR unknown subcommand or wrong number of arguments for "
                       "'%.64s'. Try CLIENT HELP.",
                       c->argv[1]);
}

/* CONFIG GET pattern...: leafd has no Redis settings to show (redis-benchmark asks). */
static leaf_status_t cmd_config(struct resp_request *req) {
    if (resp_arg_is(&req->cmd, 1, "get") && req->cmd.argc >= 3) {
        resp_reply_map(req->out, 0, req->client->resp3);
        return LEAF_OK;
    }
    return reply_error(req, O_ERR,
                       "ERR CONFIG %.64s is not supported by leafd (only CONFIG GET, "
                       "which answers empty)",
                       req->cmd.argv[1]);
}

static leaf_status_t cmd_quit(struct resp_request *req) {
    req->close_after = 1;
    return reply_ok(req);
}

static leaf_status_t cmd_reset(struct resp_request *req) {
    req->client->resp3 = 0;
    req->client->name[0] = '\0';
    resp_auth_reset(req);
    resp_reply_simple(req->out, "RESET");
    return LEAF_OK;
}

static leaf_status_t cmd_readonly(struct resp_request *req) {
    return reply_ok(req);
}

/* ---- the table -------------------------------------------------------------- */

struct resp_command {
    const char *name; /* lower case */
    const char *flags;
    int arity; /* n: exactly n arguments with the name; -n: at least n */
    int first_key, last_key, key_step;
    leaf_status_t (*fn)(struct resp_request *req);
    enum auth_need need; /* the right needed on the key (first_key) */
};

#define IDS AUTH_NEED_IDS
#define OPEN AUTH_NEED_NONE

/* The ID commands first: they are looked up most. */
static const struct resp_command commands[] = {
    {"incr", "write fast", 2, 1, 1, 1, cmd_incr, IDS},
    {"incrby", "write fast", 3, 1, 1, 1, cmd_incrby, IDS},
    {"leaf.ids", "write fast", 3, 1, 1, 1, cmd_leaf_ids, IDS},
    {"get", "readonly fast", 2, 1, 1, 1, cmd_get, IDS},
    {"ping", "fast stale", -1, 0, 0, 0, cmd_ping, OPEN},
    {"echo", "fast", 2, 0, 0, 0, cmd_echo, OPEN},
    {"hello", "noscript loading stale fast no_auth", -1, 0, 0, 0, cmd_hello, OPEN},
    {"auth", "noscript loading stale fast no_auth", -2, 0, 0, 0, resp_cmd_auth, OPEN},
    {"select", "loading stale fast", 2, 0, 0, 0, cmd_select, OPEN},
    {"client", "noscript loading stale", -2, 0, 0, 0, cmd_client, OPEN},
    {"info", "loading stale", -1, 0, 0, 0, resp_cmd_info, OPEN},
    {"command", "loading stale", -1, 0, 0, 0, resp_cmd_command, OPEN},
    {"config", "admin noscript loading stale", -2, 0, 0, 0, cmd_config, OPEN},
    {"quit", "fast no_auth allow_busy", -1, 0, 0, 0, cmd_quit, OPEN},
    {"reset", "noscript loading stale fast no_auth", 1, 0, 0, 0, cmd_reset, OPEN},
    {"readonly", "fast loading stale", 1, 0, 0, 0, cmd_readonly, OPEN},
    {"readwrite", "fast loading stale", 1, 0, 0, 0, cmd_readonly, OPEN},
    {"cluster", "stale", -2, 0, 0, 0, resp_cmd_cluster, OPEN},
};

#define COMMANDS_N ((int)(sizeof(commands) / sizeof(commands[0])))
#define COMMAND_UNKNOWN COMMANDS_N
#define COMMAND_PROTOCOL (COMMANDS_N + 1)

int resp_api_command_count(void) {
    return COMMANDS_N + 2;
}

const char *resp_api_command_name(int command) {
    if (command == COMMAND_UNKNOWN) {
        return "unknown";
    }
    if (command == COMMAND_PROTOCOL) {
        return "protocol_error";
    }
    return command >= 0 && command < COMMANDS_N ? commands[command].name : "other";
}

int resp_api_command_doc(int i, struct resp_command_doc *doc) {
    if (i < 0 || i >= COMMANDS_N) {
        return 0;
    }
    const struct resp_command *c = &commands[i];
    *doc = (struct resp_command_doc){c->name,      c->arity,    c->flags,
                                     c->first_key, c->last_key, c->key_step};
    return 1;
}

static int command_find(const struct resp_cmd *cmd) {
    const char *name = cmd->argv[0];
    size_t len = cmd->argvlen[0];
    for (int i = 0; i < COMMANDS_N; i++) {
        if (strlen(commands[i].name) == len && strncasecmp(commands[i].name, name, len) == 0) {
            return i;
        }
    }
    return -1;
}

/* Redis's words: "unknown command 'x', with args beginning with: 'a' 'b' " */
static void reply_unknown(struct resp_request *req) {
    struct sbuf msg = SBUF_INIT;
    sbuf_printf(&msg, "ERR unknown command '%.128s', with args beginning with: ", req->cmd.argv[0]);
    for (int i = 1; i < req->cmd.argc && msg.len < 400; i++) {
        sbuf_printf(&msg, "'%.64s' ", req->cmd.argv[i]);
    }
    resp_reply_error(req->out, msg.failed || msg.data == NULL ? "ERR unknown command" : msg.data);
    req->outcome = O_ERR;
    sbuf_free(&msg);
}

leaf_status_t resp_api_dispatch(struct resp_request *req) {
    int i = command_find(&req->cmd);
    if (i < 0) {
        req->command = COMMAND_UNKNOWN;
        reply_unknown(req);
        return LEAF_OK;
    }
    const struct resp_command *c = &commands[i];
    req->command = i;
    req->outcome = O_OK;
    if ((c->arity > 0 && req->cmd.argc != c->arity) ||
        (c->arity < 0 && req->cmd.argc < -c->arity)) {
        return reply_error(req, O_ERR, "ERR wrong number of arguments for '%s' command", c->name);
    }
    /* Checked at arrival; a parked command that resumes was allowed. */
    if (req->retries == 0 && !resp_auth_allowed(req, c->need, c->first_key)) {
        return LEAF_OK;
    }
    return c->fn(req);
}

void resp_api_done(const struct resp_request *req) {
    const struct api_ctx *ctx = req->ctx;
    int command = req->command == RESP_COMMAND_NONE ? COMMAND_PROTOCOL : req->command;
    int outcome = req->command == RESP_COMMAND_NONE ? O_PROTOCOL : req->outcome;
    metrics_count_command(ctx->metrics, req->loop, command, outcome);
    if (command < COMMANDS_N) {
        metrics_observe_command_latency(ctx->metrics, req->loop, command,
                                        clock_mono_ns() - req->started_ns);
    }
}
