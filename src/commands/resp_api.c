/*
 * The Redis-protocol command table: one row per command, with Redis's arity
 * convention (n: exactly n arguments with the name; -n: at least n), its
 * flags as COMMAND reports them (COMMAND is here, beside the table it
 * reads), its key positions, its handler, and what COMMAND DOCS says of it.
 * The ID commands (INCR, INCRBY, LEAF.IDS, GET) are resp_ids.c's; the
 * connection commands here are what the common clients send on connect and
 * for tooling (docs/reference/resp.md lists them).
 */
#include "resp_api.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "door_auth.h"
#include "door_ctx.h"
#include "metrics.h"
#include "num.h"
#include "resp_auth.h"
#include "resp_cluster.h"
#include "resp_ids.h"
#include "resp_info.h"
#include "resp_multi.h"
#include "resp_outcome.h"

static leaf_status_t reply_ok(struct resp_request *req) {
    resp_reply_simple(req->out, "OK");
    return LEAF_OK;
}

/* ---- connection commands ------------------------------------------------------ */

static leaf_status_t cmd_ping(struct resp_request *req) {
    if (req->cmd.argc > 2) {
        return resp_outcome_error(req, RESP_O_ERR,
                                  "ERR wrong number of arguments for 'ping' command");
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
            resp_outcome_error(req, RESP_O_ERR,
                               "ERR Client names cannot contain spaces, newlines or special "
                               "characters.");
            return 0;
        }
    }
    if (len > RESP_CLIENT_NAME_MAX) {
        resp_outcome_error(req, RESP_O_ERR, "ERR client name longer than %d bytes",
                           RESP_CLIENT_NAME_MAX);
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
            return resp_outcome_error(req, RESP_O_ERR,
                                      "ERR Protocol version is not an integer or out of range");
        }
        if (v != 2 && v != 3) {
            return resp_outcome_error(req, RESP_O_ERR, "NOPROTO unsupported protocol version");
        }
        proto = (int)v;
        i = 2;
    }
    /* The whole command is checked before any option acts: a syntax error
     * after AUTH must not leave the connection logged in (as Redis). */
    int first = i;
    for (; i < c->argc; i++) {
        if (resp_arg_is(c, i, "auth") && i + 2 < c->argc) {
            i += 2;
        } else if (resp_arg_is(c, i, "setname") && i + 1 < c->argc) {
            i += 1;
        } else {
            return resp_outcome_error(req, RESP_O_ERR, "ERR Syntax error in HELLO option '%.64s'",
                                      c->argv[i]);
        }
    }
    for (i = first; i < c->argc; i++) {
        if (resp_arg_is(c, i, "auth")) {
            if (!resp_auth_login(req, c->argv[i + 1], c->argvlen[i + 1], c->argv[i + 2],
                                 c->argvlen[i + 2])) {
                return LEAF_OK;
            }
            i += 2;
        } else {
            if (!set_name(req, i + 1)) {
                return LEAF_OK;
            }
            i += 1;
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
    return resp_outcome_error(req, RESP_O_ERR, "ERR DB index is out of range");
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
            return resp_outcome_error(req, RESP_O_ERR, "ERR Unrecognized option '%.64s'",
                                      c->argv[2]);
        }
        return reply_ok(req);
    }
    if (resp_arg_is(c, 1, "info") && c->argc == 2) {
        return client_info(req);
    }
    return resp_outcome_error(req, RESP_O_ERR,
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
    return resp_outcome_error(req, RESP_O_ERR,
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
    resp_multi_reset(req);
    resp_reply_simple(req->out, "RESET");
    return LEAF_OK;
}

static leaf_status_t cmd_readonly(struct resp_request *req) {
    return reply_ok(req);
}

/* ---- the table -------------------------------------------------------------- */

/*
 * What the dispatcher does with a command, as Redis 7's command flags: the
 * row says it, no handler is compared. ISSUES: hands out IDs (checked when
 * queued, counted as an ID command in the metrics); QUEUES: MULTI queues it
 * (the ID commands, PING, ECHO); NOW: runs at once inside MULTI (MULTI,
 * EXEC, DISCARD, QUIT, RESET). Any other command inside MULTI is refused.
 */
enum {
    CMD_ISSUES = 1 << 0,
    CMD_QUEUES = 1 << 1,
    CMD_NOW = 1 << 2,
};

/*
 * One argument as COMMAND DOCS describes it (Redis 7's argument model): a
 * key, a string or an integer, a word (pure-token), or a block of arguments
 * that go together; token: the word written before it (HELLO's AUTH).
 */
enum { ARG_OPTIONAL = 1 << 0, ARG_MULTIPLE = 1 << 1 };

struct resp_arg {
    const char *name;
    const char *type; /* key, string, integer, pure-token, block */
    const char *token;
    unsigned flags; /* ARG_* */
    const struct resp_arg *args;
    int nargs; /* a block's */
};

/* What COMMAND DOCS says of a command beyond its row's summary (`what`). */
struct resp_command_doc {
    const char *group;      /* Redis's: string, connection, server, cluster, transactions; module */
    const char *since;      /* the Redis version that brought it; leafd's own: leafd's version */
    const char *complexity; /* NULL: not one figure (a container's subcommands differ) */
    const struct resp_arg *args;
    int nargs;
};

struct resp_command {
    const char *name;  /* lower case */
    const char *flags; /* Redis's flags, as COMMAND reports them */
    int arity;         /* n: exactly n arguments with the name; -n: at least n */
    int first_key, last_key, key_step;
    leaf_status_t (*fn)(struct resp_request *req);
    enum auth_need need; /* the right needed on the key (first_key) */
    unsigned bits;       /* CMD_*: what the dispatcher does with it */
    const char *what;    /* one line for the reference (leafd --print-reference commands) and
                          * COMMAND DOCS' summary */
    struct resp_command_doc doc;
};

#define IDS AUTH_NEED_IDS
#define OPEN AUTH_NEED_NONE
#define USER AUTH_NEED_USER /* MULTI: a queue is memory held for a client, not for anyone */
#define ISSUES (CMD_ISSUES | CMD_QUEUES)
#define QUEUES CMD_QUEUES
#define NOW CMD_NOW

#define ARGS(a) (a), (int)(sizeof(a) / sizeof((a)[0]))
#define NO_ARGS NULL, 0
#define OPT ARG_OPTIONAL

static const struct resp_arg key_args[] = {{"key", "key", NULL, 0, NO_ARGS}};
static const struct resp_arg key_count_args[] = {{"key", "key", NULL, 0, NO_ARGS},
                                                 {"count", "integer", NULL, 0, NO_ARGS}};
static const struct resp_arg message_opt_args[] = {{"message", "string", NULL, OPT, NO_ARGS}};
static const struct resp_arg message_args[] = {{"message", "string", NULL, 0, NO_ARGS}};
static const struct resp_arg hello_auth_args[] = {{"username", "string", NULL, 0, NO_ARGS},
                                                  {"password", "string", NULL, 0, NO_ARGS}};
static const struct resp_arg hello_block_args[] = {
    {"protover", "integer", NULL, 0, NO_ARGS},
    {"auth", "block", "AUTH", OPT, ARGS(hello_auth_args)},
    {"clientname", "string", "SETNAME", OPT, NO_ARGS},
};
static const struct resp_arg hello_args[] = {
    {"arguments", "block", NULL, OPT, ARGS(hello_block_args)}};
static const struct resp_arg auth_args[] = {{"username", "string", NULL, OPT, NO_ARGS},
                                            {"password", "string", NULL, 0, NO_ARGS}};
static const struct resp_arg select_args[] = {{"index", "integer", NULL, 0, NO_ARGS}};
static const struct resp_arg info_args[] = {
    {"section", "string", NULL, OPT | ARG_MULTIPLE, NO_ARGS}};

/* The ID commands first: they are looked up most. */
static leaf_status_t cmd_command(struct resp_request *req);

/* A row: how it is dispatched, its summary, what COMMAND DOCS adds. */
/* clang-format off */
static const struct resp_command commands[] = {
    {"incr", "write fast", 2, 1, 1, 1, resp_ids_incr, IDS, ISSUES,
     "one ID of the key (mode:name)",
     {"string", "1.0.0", "O(1)", ARGS(key_args)}},
    {"incrby", "write fast", 3, 1, 1, 1, resp_ids_incrby, IDS, ISSUES,
     "count IDs of the key; the reply is the last",
     {"string", "1.0.0", "O(1)", ARGS(key_count_args)}},
    {"leaf.ids", "write fast", 3, 1, 1, 1, resp_ids_leaf_ids, IDS, ISSUES,
     "count IDs of the key, as an array",
     {"module", "0.1.0", "O(N) where N is the count", ARGS(key_count_args)}},
    {"get", "readonly fast", 2, 1, 1, 1, resp_ids_get, IDS, ISSUES,
     "sequence keys only: the last ID issued, nil when none; issues nothing (other keys: "
     "WRONG_MODE)",
     {"string", "1.0.0", "O(1)", ARGS(key_args)}},
    {"ping", "fast stale", -1, 0, 0, 0, cmd_ping, OPEN, QUEUES,
     "PONG, or the argument",
     {"connection", "1.0.0", "O(1)", ARGS(message_opt_args)}},
    {"echo", "fast", 2, 0, 0, 0, cmd_echo, OPEN, QUEUES,
     "the argument",
     {"connection", "1.0.0", "O(1)", ARGS(message_args)}},
    {"hello", "noscript loading stale fast no_auth", -1, 0, 0, 0, cmd_hello, OPEN, 0,
     "the protocol version (2 or 3), AUTH and SETNAME in one",
     {"connection", "6.0.0", "O(1)", ARGS(hello_args)}},
    {"auth", "noscript loading stale fast no_auth", -2, 0, 0, 0, resp_cmd_auth, OPEN, 0,
     "logs the connection in as a user",
     {"connection", "1.0.0", "O(log N) where N is the number of users", ARGS(auth_args)}},
    {"select", "loading stale fast", 2, 0, 0, 0, cmd_select, OPEN, 0,
     "database 0 only",
     {"connection", "1.0.0", "O(1)", ARGS(select_args)}},
    {"client", "noscript loading stale", -2, 0, 0, 0, cmd_client, OPEN, 0,
     "SETNAME, GETNAME, ID, SETINFO, INFO of the connection",
     {"connection", "2.4.0", NULL, NO_ARGS}},
    {"info", "loading stale", -1, 0, 0, 0, resp_cmd_info, OPEN, 0,
     "the server's sections, as Redis INFO",
     {"server", "1.0.0", "O(1)", ARGS(info_args)}},
    {"command", "loading stale", -1, 0, 0, 0, cmd_command, OPEN, 0,
     "this table: COMMAND, COUNT, DOCS, INFO",
     {"server", "2.8.13", "O(N) where N is the number of commands", NO_ARGS}},
    {"config", "admin noscript loading stale", -2, 0, 0, 0, cmd_config, OPEN, 0,
     "CONFIG GET answers empty; nothing to set",
     {"server", "2.0.0", NULL, NO_ARGS}},
    {"quit", "fast no_auth allow_busy", -1, 0, 0, 0, cmd_quit, OPEN, NOW,
     "closes the connection after the reply",
     {"connection", "1.0.0", "O(1)", NO_ARGS}},
    {"reset", "noscript loading stale fast no_auth", 1, 0, 0, 0, cmd_reset, OPEN, NOW,
     "back to a fresh connection: RESP2, no name, no user, no MULTI",
     {"connection", "6.2.0", "O(1)", NO_ARGS}},
    {"readonly", "fast loading stale", 1, 0, 0, 0, cmd_readonly, OPEN, 0,
     "accepted for cluster clients; nothing changes",
     {"cluster", "3.0.0", "O(1)", NO_ARGS}},
    {"readwrite", "fast loading stale", 1, 0, 0, 0, cmd_readonly, OPEN, 0,
     "accepted for cluster clients; nothing changes",
     {"cluster", "3.0.0", "O(1)", NO_ARGS}},
    {"cluster", "stale", -2, 0, 0, 0, resp_cmd_cluster, OPEN, 0,
     "the cluster commands clients send: one node serving every slot",
     {"cluster", "3.0.0", NULL, NO_ARGS}},
    {"multi", "noscript loading stale fast allow_busy", 1, 0, 0, 0, resp_multi_cmd_multi, USER, NOW,
     "starts a transaction: ID commands, PING and ECHO are queued",
     {"transactions", "1.2.0", "O(1)", NO_ARGS}},
    {"exec", "noscript loading stale skip_slowlog", 1, 0, 0, 0, resp_multi_cmd_exec, OPEN, NOW,
     "runs the queued commands, one array of replies",
     {"transactions", "1.2.0", "Depends on commands in the transaction", NO_ARGS}},
    {"discard", "noscript loading stale fast allow_busy", 1, 0, 0, 0, resp_multi_cmd_discard, OPEN,
     NOW,
     "drops the queued commands",
     {"transactions", "2.0.0", "O(N) where N is the number of queued commands", NO_ARGS}},
};
/* clang-format on */

#define COMMANDS_N ((int)(sizeof(commands) / sizeof(commands[0])))
#define COMMAND_UNKNOWN COMMANDS_N
#define COMMAND_PROTOCOL (COMMANDS_N + 1)

int resp_api_command_names(const char **names, int cap) {
    for (int i = 0; i < COMMANDS_N && i < cap; i++) {
        names[i] = commands[i].name;
    }
    if (COMMAND_UNKNOWN < cap) {
        names[COMMAND_UNKNOWN] = "unknown";
    }
    if (COMMAND_PROTOCOL < cap) {
        names[COMMAND_PROTOCOL] = "protocol_error";
    }
    return COMMANDS_N + 2;
}

void resp_api_command_kinds(unsigned char *ids, int cap) {
    for (int i = 0; i < COMMANDS_N && i < cap; i++) {
        ids[i] = (commands[i].bits & CMD_ISSUES) != 0;
    }
}

void resp_api_print_reference(FILE *out) {
    fprintf(out, "| Command | Arity | Flags | Right needed | Description |\n"
                 "|---|---|---|---|---|\n");
    for (int i = 0; i < COMMANDS_N; i++) {
        const struct resp_command *c = &commands[i];
        fprintf(out, "| `%s` | %d | %s%s%s%s | %s | %s |\n", c->name, c->arity, c->flags,
                c->bits & CMD_ISSUES ? " issues" : "", c->bits & CMD_QUEUES ? " queues" : "",
                c->bits & CMD_NOW ? " now" : "", door_auth_need_name(c->need), c->what);
    }
}

/* One COMMAND row: name, arity, flags, first key, last key, step (Redis 2.8+). */
static void command_row(struct sbuf *out, const struct resp_command *d, int resp3) {
    resp_reply_array(out, 6);
    resp_reply_bulk(out, d->name, strlen(d->name));
    resp_reply_int(out, d->arity);
    size_t nflags = 0;
    for (const char *p = d->flags; *p; p++) {
        nflags += (p == d->flags || p[-1] == ' ') && *p != ' ';
    }
    resp_reply_set(out, nflags, resp3);
    const char *p = d->flags;
    while (*p) {
        size_t n = strcspn(p, " ");
        char flag[32];
        if (n > 0 && n < sizeof(flag)) {
            memcpy(flag, p, n);
            flag[n] = '\0';
            resp_reply_simple(out, flag);
        }
        p += n;
        p += *p == ' ';
    }
    resp_reply_int(out, d->first_key);
    resp_reply_int(out, d->last_key);
    resp_reply_int(out, d->key_step);
}

static void reply_text(struct sbuf *out, const char *s) {
    resp_reply_bulk(out, s, strlen(s));
}

/* One argument's map, as Redis 7's COMMAND DOCS writes it (a block's arguments nested). */
static void arg_doc(struct sbuf *out, const struct resp_arg *a, int resp3) {
    int shown = strcmp(a->type, "block") != 0 && strcmp(a->type, "pure-token") != 0;
    int is_key = strcmp(a->type, "key") == 0;
    size_t nflags = (a->flags & ARG_OPTIONAL ? 1 : 0) + (a->flags & ARG_MULTIPLE ? 1 : 0);
    resp_reply_map(out,
                   2 + (size_t)shown + (size_t)is_key + (a->token != NULL) + (nflags > 0) +
                       (a->nargs > 0),
                   resp3);
    reply_text(out, "name");
    reply_text(out, a->name);
    reply_text(out, "type");
    reply_text(out, a->type);
    if (shown) {
        reply_text(out, "display_text");
        reply_text(out, a->name);
    }
    if (is_key) {
        reply_text(out, "key_spec_index");
        resp_reply_int(out, 0);
    }
    if (a->token != NULL) {
        reply_text(out, "token");
        reply_text(out, a->token);
    }
    if (nflags > 0) {
        reply_text(out, "flags");
        resp_reply_set(out, nflags, resp3);
        if (a->flags & ARG_OPTIONAL) {
            resp_reply_simple(out, "optional");
        }
        if (a->flags & ARG_MULTIPLE) {
            resp_reply_simple(out, "multiple");
        }
    }
    if (a->nargs > 0) {
        reply_text(out, "arguments");
        resp_reply_array(out, (size_t)a->nargs);
        for (int i = 0; i < a->nargs; i++) {
            arg_doc(out, &a->args[i], resp3);
        }
    }
}

/*
 * One command's name and documentation, as Redis 7's COMMAND DOCS: summary,
 * since, group, complexity (when it is one figure), module (leafd's own
 * commands), arguments (when it takes any). Containers (CLIENT, CLUSTER,
 * COMMAND, CONFIG) list no subcommands: their summary names them.
 */
static void command_doc(struct sbuf *out, const struct resp_command *d, int resp3) {
    const struct resp_command_doc *doc = &d->doc;
    int module = strcmp(doc->group, "module") == 0;
    reply_text(out, d->name);
    resp_reply_map(out, 3 + (doc->complexity != NULL) + (size_t)module + (doc->nargs > 0), resp3);
    reply_text(out, "summary");
    reply_text(out, d->what);
    reply_text(out, "since");
    reply_text(out, doc->since);
    reply_text(out, "group");
    reply_text(out, doc->group);
    if (doc->complexity != NULL) {
        reply_text(out, "complexity");
        reply_text(out, doc->complexity);
    }
    if (module) {
        reply_text(out, "module");
        reply_text(out, "leafd");
    }
    if (doc->nargs > 0) {
        reply_text(out, "arguments");
        resp_reply_array(out, (size_t)doc->nargs);
        for (int i = 0; i < doc->nargs; i++) {
            arg_doc(out, &doc->args[i], resp3);
        }
    }
}

/* The row of argument a of c, or -1 when it names no command. */
static int command_named(const struct resp_cmd *c, int a) {
    for (int i = 0; i < COMMANDS_N; i++) {
        if (resp_arg_is(c, a, commands[i].name)) {
            return i;
        }
    }
    return -1;
}

/* COMMAND DOCS [name...]: every command, or the named ones in order (unknown names left out). */
static void command_docs(struct resp_request *req) {
    const struct resp_cmd *c = &req->cmd;
    int resp3 = req->client->resp3;
    if (c->argc == 2) {
        resp_reply_map(req->out, (size_t)COMMANDS_N, resp3);
        for (int i = 0; i < COMMANDS_N; i++) {
            command_doc(req->out, &commands[i], resp3);
        }
        return;
    }
    size_t n = 0;
    for (int a = 2; a < c->argc; a++) {
        n += command_named(c, a) >= 0;
    }
    resp_reply_map(req->out, n, resp3);
    for (int a = 2; a < c->argc; a++) {
        int i = command_named(c, a);
        if (i >= 0) {
            command_doc(req->out, &commands[i], resp3);
        }
    }
}

/* COMMAND, COMMAND COUNT, COMMAND DOCS [name...], COMMAND INFO name... */
static leaf_status_t cmd_command(struct resp_request *req) {
    const struct resp_cmd *c = &req->cmd;
    int resp3 = req->client->resp3;

    if (c->argc == 1) {
        resp_reply_array(req->out, (size_t)COMMANDS_N);
        for (int i = 0; i < COMMANDS_N; i++) {
            command_row(req->out, &commands[i], resp3);
        }
        return LEAF_OK;
    }
    if (resp_arg_is(c, 1, "count") && c->argc == 2) {
        resp_reply_int(req->out, COMMANDS_N);
        return LEAF_OK;
    }
    if (resp_arg_is(c, 1, "docs")) {
        command_docs(req);
        return LEAF_OK;
    }
    if (resp_arg_is(c, 1, "info")) {
        resp_reply_array(req->out, (size_t)(c->argc - 2));
        for (int a = 2; a < c->argc; a++) {
            int found = 0;
            for (int i = 0; !found && i < COMMANDS_N; i++) {
                if (resp_arg_is(c, a, commands[i].name)) {
                    command_row(req->out, &commands[i], resp3);
                    found = 1;
                }
            }
            if (!found) {
                resp_reply_null(req->out, resp3);
            }
        }
        return LEAF_OK;
    }
    resp_reply_errorf(req->out, "ERR unknown subcommand '%.64s'. Try COMMAND HELP.", c->argv[1]);
    return LEAF_OK;
}

/*
 * Command lookup without a case-insensitive scan: the name is lowered once
 * into a small buffer; its length and first and last bytes pick a slot of an
 * open-addressing index over the table (built once, from the table, so a new
 * row needs nothing here), and one memcmp confirms it.
 */
#define COMMAND_NAME_MAX 32
#define COMMAND_SLOTS 64 /* a power of two, well over COMMANDS_N */
_Static_assert(COMMANDS_N < COMMAND_SLOTS / 2, "COMMAND_SLOTS: keep the index sparse");
static unsigned char command_slot[COMMAND_SLOTS]; /* row + 1; 0 = empty */
static unsigned char command_len[COMMANDS_N];
static pthread_once_t command_index_once = PTHREAD_ONCE_INIT;

static unsigned command_hash(const char *lower, size_t len) {
    return ((unsigned)len * 17u + (unsigned char)lower[0] * 5u + (unsigned char)lower[len - 1]) &
           (COMMAND_SLOTS - 1);
}

static void command_index_build(void) {
    for (int i = 0; i < COMMANDS_N; i++) {
        size_t len = strlen(commands[i].name);
        unsigned h = command_hash(commands[i].name, len);
        while (command_slot[h] != 0) {
            h = (h + 1) & (COMMAND_SLOTS - 1);
        }
        command_slot[h] = (unsigned char)(i + 1);
        command_len[i] = (unsigned char)len;
    }
}

static int command_find(const struct resp_cmd *cmd) {
    size_t len = cmd->argvlen[0];
    char lower[COMMAND_NAME_MAX];
    if (len == 0 || len > sizeof(lower)) {
        return -1; /* longer than any name in the table */
    }
    for (size_t j = 0; j < len; j++) {
        char ch = cmd->argv[0][j];
        lower[j] = (char)(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
    }
    pthread_once(&command_index_once, command_index_build);
    for (unsigned h = command_hash(lower, len); command_slot[h] != 0;
         h = (h + 1) & (COMMAND_SLOTS - 1)) {
        int i = command_slot[h] - 1;
        if (command_len[i] == len && memcmp(commands[i].name, lower, len) == 0) {
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
    req->outcome = RESP_O_ERR;
    sbuf_free(&msg);
    resp_multi_refused(req);
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
    req->outcome = RESP_O_OK;
    if ((c->arity > 0 && req->cmd.argc != c->arity) ||
        (c->arity < 0 && req->cmd.argc < -c->arity)) {
        resp_multi_refused(req);
        return resp_outcome_error(req, RESP_O_ERR, "ERR wrong number of arguments for '%s' command",
                                  c->name);
    }
    /* Checked at arrival; a parked command that resumes was allowed. */
    if (req->retries == 0 && !resp_auth_allowed(req, c->need, c->first_key)) {
        resp_multi_refused(req);
        return LEAF_OK;
    }
    if (resp_multi_queueing(req) && !(c->bits & CMD_NOW)) {
        return resp_multi_queue(req, c->fn, (c->bits & CMD_QUEUES) != 0,
                                (c->bits & CMD_ISSUES) != 0);
    }
    return c->fn(req);
}

void resp_api_done(const struct resp_request *req) {
    const struct door_ctx *ctx = req->ctx;
    int command = req->command == RESP_COMMAND_NONE ? COMMAND_PROTOCOL : req->command;
    int outcome = req->command == RESP_COMMAND_NONE ? RESP_O_PROTOCOL : req->outcome;
    metrics_count_command(ctx->metrics, req->loop, command, outcome);
    if (command < COMMANDS_N) {
        metrics_observe_command_latency(ctx->metrics, req->loop, command,
                                        req->finished_ns - req->started_ns);
    }
}
