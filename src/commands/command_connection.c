/*
 * The connection commands of the Redis protocol (Redis's "connection" group,
 * and what the common clients send on connect and for tooling: CONFIG GET,
 * READONLY): PING, ECHO, HELLO, SELECT, CLIENT, CONFIG, QUIT, RESET,
 * READONLY and READWRITE. Rows of the command table
 * (src/tables/table_resp.c); docs/reference/resp.md lists them.
 */
#include "command_connection.h"

#include <stdio.h>
#include <string.h>

#include "command_auth.h"
#include "command_info.h"
#include "command_multi.h"
#include "command_outcome.h"
#include "num.h"

static leaf_status_t reply_ok(struct resp_request *req) {
    resp_reply_simple(req->out, "OK");
    return LEAF_OK;
}

leaf_status_t command_connection_ping(struct resp_request *req) {
    if (req->cmd.argc > 2) {
        return command_outcome_error(req, RESP_O_ERR,
                                     "ERR wrong number of arguments for 'ping' command");
    }
    if (req->cmd.argc == 2) {
        resp_reply_bulk(req->out, req->cmd.argv[1], req->cmd.argvlen[1]);
    } else {
        resp_reply_simple(req->out, "PONG");
    }
    return LEAF_OK;
}

leaf_status_t command_connection_echo(struct resp_request *req) {
    resp_reply_bulk(req->out, req->cmd.argv[1], req->cmd.argvlen[1]);
    return LEAF_OK;
}

/* A client name: Redis refuses spaces and newlines in it. */
static int set_name(struct resp_request *req, int i) {
    const char *n = req->cmd.argv[i];
    size_t len = req->cmd.argvlen[i];
    for (size_t j = 0; j < len; j++) {
        if (n[j] < '!' || n[j] > '~') {
            command_outcome_error(req, RESP_O_ERR,
                                  "ERR Client names cannot contain spaces, newlines or special "
                                  "characters.");
            return 0;
        }
    }
    if (len > RESP_CLIENT_NAME_MAX) {
        command_outcome_error(req, RESP_O_ERR, "ERR client name longer than %d bytes",
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
leaf_status_t command_connection_hello(struct resp_request *req) {
    const struct resp_cmd *c = &req->cmd;
    int proto = req->client->resp3 ? 3 : 2;
    int i = 1;
    if (c->argc > 1) {
        int64_t v;
        if (num_parse_i64(c->argv[1], c->argvlen[1], &v) != LEAF_OK) {
            return command_outcome_error(req, RESP_O_ERR,
                                         "ERR Protocol version is not an integer or out of range");
        }
        if (v != 2 && v != 3) {
            return command_outcome_error(req, RESP_O_ERR, "NOPROTO unsupported protocol version");
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
            return command_outcome_error(req, RESP_O_ERR,
                                         "ERR Syntax error in HELLO option '%.64s'", c->argv[i]);
        }
    }
    for (i = first; i < c->argc; i++) {
        if (resp_arg_is(c, i, "auth")) {
            if (!command_auth_login(req, c->argv[i + 1], c->argvlen[i + 1], c->argv[i + 2],
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

leaf_status_t command_connection_select(struct resp_request *req) {
    if (req->cmd.argvlen[1] == 1 && req->cmd.argv[1][0] == '0') {
        return reply_ok(req);
    }
    return command_outcome_error(req, RESP_O_ERR, "ERR DB index is out of range");
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
leaf_status_t command_connection_client(struct resp_request *req) {
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
            return command_outcome_error(req, RESP_O_ERR, "ERR Unrecognized option '%.64s'",
                                         c->argv[2]);
        }
        return reply_ok(req);
    }
    if (resp_arg_is(c, 1, "info") && c->argc == 2) {
        return client_info(req);
    }
    return command_outcome_error(req, RESP_O_ERR,
                                 "ERR unknown subcommand or wrong number of arguments for "
                                 "'%.64s'. Try CLIENT HELP.",
                                 c->argv[1]);
}

/* CONFIG GET pattern...: leafd has no Redis settings to show (redis-benchmark asks). */
leaf_status_t command_connection_config(struct resp_request *req) {
    if (resp_arg_is(&req->cmd, 1, "get") && req->cmd.argc >= 3) {
        resp_reply_map(req->out, 0, req->client->resp3);
        return LEAF_OK;
    }
    return command_outcome_error(req, RESP_O_ERR,
                                 "ERR CONFIG %.64s is not supported by leafd (only CONFIG GET, "
                                 "which answers empty)",
                                 req->cmd.argv[1]);
}

leaf_status_t command_connection_quit(struct resp_request *req) {
    req->close_after = 1;
    return reply_ok(req);
}

leaf_status_t command_connection_reset(struct resp_request *req) {
    req->client->resp3 = 0;
    req->client->name[0] = '\0';
    command_auth_reset(req);
    command_multi_reset(req);
    resp_reply_simple(req->out, "RESET");
    return LEAF_OK;
}

leaf_status_t command_connection_readonly(struct resp_request *req) {
    return reply_ok(req);
}
