/*
 * The Redis-protocol command table: one row per command, with Redis's arity
 * convention (n: exactly n arguments with the name; -n: at least n), its
 * flags as COMMAND reports them (COMMAND is here, beside the table it
 * reads), its key positions, its handler, and what COMMAND DOCS says of it.
 * The handlers are src/commands': the ID commands (INCR, INCRBY, LEAF.IDS,
 * LEAF.UUID, GET) command_ids.c's, the connection commands command_connection.c's.
 */
#include "table_resp.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "command_auth.h"
#include "command_cluster.h"
#include "command_connection.h"
#include "command_ids.h"
#include "command_info.h"
#include "command_multi.h"
#include "command_outcome.h"
#include "door_auth.h"
#include "door_ctx.h"
#include "metrics.h"

/* ---- the table -------------------------------------------------------------- */

/*
 * What the dispatcher does with a command, as Redis 7's command flags: the
 * row says it, no handler is compared. ID_KEY: its key names an ID mode
 * ("<mode>:<key>", or the row's bare mode): the key and count are checked
 * when MULTI queues it and it is counted as an ID command in the metrics;
 * it hands out IDs, except GET, which reads a sequence's last; QUEUES: MULTI queues it
 * (the ID commands, PING, ECHO); NOW: runs at once inside MULTI (MULTI,
 * EXEC, DISCARD, QUIT, RESET). Any other command inside MULTI is refused.
 */
enum {
    CMD_ID_KEY = 1 << 0,
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
    int bare; /* 1 + the enum ids_mode of a key without a mode prefix (LEAF.UUID); 0: the key
               * names its mode ("<mode>:<key>") or there is none */
};

#define IDS AUTH_NEED_IDS
#define OPEN AUTH_NEED_NONE
#define USER AUTH_NEED_USER /* MULTI: a queue is memory held for a client, not for anyone */
#define ID_KEY (CMD_ID_KEY | CMD_QUEUES)
#define QUEUES CMD_QUEUES
#define NOW CMD_NOW

#define ARGS(a) (a), (int)(sizeof(a) / sizeof((a)[0]))
#define NO_ARGS NULL, 0
#define OPT ARG_OPTIONAL

static const struct resp_arg key_args[] = {{"key", "key", NULL, 0, NO_ARGS}};
static const struct resp_arg key_count_args[] = {{"key", "key", NULL, 0, NO_ARGS},
                                                 {"count", "integer", NULL, 0, NO_ARGS}};
static const struct resp_arg key_count_opt_args[] = {{"key", "key", NULL, 0, NO_ARGS},
                                                     {"count", "integer", NULL, OPT, NO_ARGS}};
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
    {"incr", "write fast", 2, 1, 1, 1, command_ids_incr, IDS, ID_KEY,
     "one ID of the key (mode:name)",
     {"string", "1.0.0", "O(1)", ARGS(key_args)}, 0},
    {"incrby", "write fast", 3, 1, 1, 1, command_ids_incrby, IDS, ID_KEY,
     "count IDs of the key; the reply is the last",
     {"string", "1.0.0", "O(1)", ARGS(key_count_args)}, 0},
    {"leaf.ids", "write fast", 3, 1, 1, 1, command_ids_leaf_ids, IDS, ID_KEY,
     "count IDs of the key, as an array",
     {"module", "0.1.0", "O(N) where N is the count", ARGS(key_count_args)}, 0},
    {"leaf.uuid", "write fast", -2, 1, 1, 1, command_ids_leaf_text, IDS, ID_KEY,
     "UUIDv7s of the key: one as a string, or count as an array",
     {"module", "1.1.0", "O(N) where N is the count", ARGS(key_count_opt_args)}, 1 + IDS_UUID},
    {"leaf.number", "write fast", -2, 1, 1, 1, command_ids_leaf_text, IDS, ID_KEY,
     "business numbers of the numbering: one as a string, or count as an array",
     {"module", "1.1.0", "O(N) where N is the count", ARGS(key_count_opt_args)}, 1 + IDS_NUMBER},
    {"get", "readonly fast", 2, 1, 1, 1, command_ids_get, IDS, ID_KEY,
     "sequence keys only: the last ID issued, nil when none; issues nothing (other keys: "
     "WRONG_MODE)",
     {"string", "1.0.0", "O(1)", ARGS(key_args)}, 0},
    {"ping", "fast stale", -1, 0, 0, 0, command_connection_ping, OPEN, QUEUES,
     "PONG, or the argument",
     {"connection", "1.0.0", "O(1)", ARGS(message_opt_args)}, 0},
    {"echo", "fast", 2, 0, 0, 0, command_connection_echo, OPEN, QUEUES,
     "the argument",
     {"connection", "1.0.0", "O(1)", ARGS(message_args)}, 0},
    {"hello", "noscript loading stale fast no_auth", -1, 0, 0, 0, command_connection_hello, OPEN, 0,
     "the protocol version (2 or 3), AUTH and SETNAME in one",
     {"connection", "6.0.0", "O(1)", ARGS(hello_args)}, 0},
    {"auth", "noscript loading stale fast no_auth", -2, 0, 0, 0, command_auth, OPEN, 0,
     "logs the connection in as a user",
     {"connection", "1.0.0", "O(log N) where N is the number of users", ARGS(auth_args)}, 0},
    {"select", "loading stale fast", 2, 0, 0, 0, command_connection_select, OPEN, 0,
     "database 0 only",
     {"connection", "1.0.0", "O(1)", ARGS(select_args)}, 0},
    {"client", "noscript loading stale", -2, 0, 0, 0, command_connection_client, OPEN, 0,
     "SETNAME, GETNAME, ID, SETINFO, INFO of the connection",
     {"connection", "2.4.0", NULL, NO_ARGS}, 0},
    {"info", "loading stale", -1, 0, 0, 0, command_info, OPEN, 0,
     "the server's sections, as Redis INFO",
     {"server", "1.0.0", "O(1)", ARGS(info_args)}, 0},
    {"command", "loading stale", -1, 0, 0, 0, cmd_command, OPEN, 0,
     "this table: COMMAND, COUNT, DOCS, INFO",
     {"server", "2.8.13", "O(N) where N is the number of commands", NO_ARGS}, 0},
    {"config", "admin noscript loading stale", -2, 0, 0, 0, command_connection_config, OPEN, 0,
     "CONFIG GET answers empty; nothing to set",
     {"server", "2.0.0", NULL, NO_ARGS}, 0},
    {"quit", "fast no_auth allow_busy", -1, 0, 0, 0, command_connection_quit, OPEN, NOW,
     "closes the connection after the reply",
     {"connection", "1.0.0", "O(1)", NO_ARGS}, 0},
    {"reset", "noscript loading stale fast no_auth", 1, 0, 0, 0, command_connection_reset, OPEN, NOW,
     "back to a fresh connection: RESP2, no name, no user, no MULTI",
     {"connection", "6.2.0", "O(1)", NO_ARGS}, 0},
    {"readonly", "fast loading stale", 1, 0, 0, 0, command_connection_readonly, OPEN, 0,
     "accepted for cluster clients; nothing changes",
     {"cluster", "3.0.0", "O(1)", NO_ARGS}, 0},
    {"readwrite", "fast loading stale", 1, 0, 0, 0, command_connection_readonly, OPEN, 0,
     "accepted for cluster clients; nothing changes",
     {"cluster", "3.0.0", "O(1)", NO_ARGS}, 0},
    {"cluster", "stale", -2, 0, 0, 0, command_cluster, OPEN, 0,
     "the cluster commands clients send: one node serving every slot",
     {"cluster", "3.0.0", NULL, NO_ARGS}, 0},
    {"multi", "noscript loading stale fast allow_busy", 1, 0, 0, 0, command_multi, USER, NOW,
     "starts a transaction: ID commands, PING and ECHO are queued",
     {"transactions", "1.2.0", "O(1)", NO_ARGS}, 0},
    {"exec", "noscript loading stale skip_slowlog", 1, 0, 0, 0, command_multi_exec, OPEN, NOW,
     "runs the queued commands, one array of replies",
     {"transactions", "1.2.0", "Depends on commands in the transaction", NO_ARGS}, 0},
    {"discard", "noscript loading stale fast allow_busy", 1, 0, 0, 0, command_multi_discard, OPEN,
     NOW,
     "drops the queued commands",
     {"transactions", "2.0.0", "O(N) where N is the number of queued commands", NO_ARGS}, 0},
};
/* clang-format on */

#define COMMANDS_N ((int)(sizeof(commands) / sizeof(commands[0])))
#define COMMAND_UNKNOWN COMMANDS_N
#define COMMAND_PROTOCOL (COMMANDS_N + 1)
_Static_assert(COMMANDS_N + 2 <= METRICS_MAX_COMMANDS, "METRICS_MAX_COMMANDS: room for every row");

int table_resp_names(const char **names, int cap) {
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

void table_resp_kinds(unsigned char *ids, int cap) {
    for (int i = 0; i < COMMANDS_N && i < cap; i++) {
        ids[i] = (commands[i].bits & CMD_ID_KEY) != 0;
    }
}

void table_resp_print_reference(FILE *out) {
    fprintf(out, "| Command | Arity | Flags | Right needed | Description |\n"
                 "|---|---|---|---|---|\n");
    for (int i = 0; i < COMMANDS_N; i++) {
        const struct resp_command *c = &commands[i];
        fprintf(out, "| `%s` | %d | %s%s%s%s | %s | %s |\n", c->name, c->arity, c->flags,
                c->bits & CMD_ID_KEY ? " id_key" : "", c->bits & CMD_QUEUES ? " queues" : "",
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
    command_multi_refused(req);
}

leaf_status_t table_resp_dispatch(struct resp_request *req) {
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
        command_multi_refused(req);
        return command_outcome_error(req, RESP_O_ERR,
                                     "ERR wrong number of arguments for '%s' command", c->name);
    }
    /* Checked at arrival; a parked command that resumes was allowed. */
    if (req->retries == 0 && !command_auth_allowed(req, c->need, c->first_key, c->bare)) {
        command_multi_refused(req);
        return LEAF_OK;
    }
    if (command_multi_queueing(req) && !(c->bits & CMD_NOW)) {
        return command_multi_queue(req, c->fn, (c->bits & CMD_QUEUES) != 0,
                                   (c->bits & CMD_ID_KEY) != 0, c->bare);
    }
    return c->fn(req);
}

void table_resp_done(const struct resp_request *req) {
    const struct door_ctx *ctx = req->ctx;
    int command = req->command == RESP_COMMAND_NONE ? COMMAND_PROTOCOL : req->command;
    int outcome = req->command == RESP_COMMAND_NONE ? RESP_O_PROTOCOL : req->outcome;
    metrics_count_command(ctx->metrics, req->loop, command, outcome);
    if (command < COMMANDS_N) {
        metrics_observe_command_latency(ctx->metrics, req->loop, command,
                                        req->finished_ns - req->started_ns);
    }
}
