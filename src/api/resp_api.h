#ifndef LEAF_RESP_API_H
#define LEAF_RESP_API_H

/*
 * The Redis-protocol API: the command table (resp_api.c), the ID commands
 * and the connection and tooling commands that common clients send. The
 * table is the RESP protocol's handler (resp_conn_config.handler) and its
 * completion hook does the per-command accounting, so src/resp knows
 * neither. Handlers run on an event-loop thread with the same struct
 * api_ctx as the HTTP handlers.
 */
#include "auth_decide.h"
#include "resp_conn.h"
#include "status.h"

struct api_ctx;

/*
 * The Redis version leafd reports in HELLO and INFO. Clients read it to pick
 * features; leafd answers the commands of the README's list as Redis 7 does.
 */
#define LEAFD_REDIS_VERSION "7.0.0"

/* Dispatches a command to its row of the table. */
leaf_status_t resp_api_dispatch(struct resp_request *req);
/* The completion hook: per-command accounting. */
void resp_api_done(const struct resp_request *req);

/* Rows of the command table, plus the pseudo-commands unknown and protocol_error. */
int resp_api_command_count(void);
const char *resp_api_command_name(int command); /* lower case, the metric label */

/* Outcomes of a command: "ok", "err" (Redis's ERR), then the stable codes. */
int resp_api_outcome_count(void);
const char *resp_api_outcome_name(int outcome);

/* INFO and COMMAND (resp_info.c). */
leaf_status_t resp_cmd_info(struct resp_request *req);
leaf_status_t resp_cmd_command(struct resp_request *req);
/* CLUSTER SLOTS|SHARDS|NODES|INFO|MYID (resp_cluster.c): the sequence primary owns every slot. */
leaf_status_t resp_cmd_cluster(struct resp_request *req);

/* Row lookups for COMMAND: name, arity, flags text, first/last key and step. */
struct resp_command_doc {
    const char *name;
    int arity;
    const char *flags; /* space-separated, e.g. "write fast" */
    int first_key, last_key, key_step;
};
int resp_api_command_doc(int i, struct resp_command_doc *doc);

/*
 * Users and permissions over RESP (resp_auth.c). The connection keeps who
 * AUTHed in resp_client.app (resp_api_app_size() bytes: the server's
 * resp_conn_config.app_size). login: AUTH / HELLO AUTH, 1 when accepted,
 * else the WRONGPASS reply is written; allowed: the check of a command's
 * need on its key argument, 1 when allowed, else the NOAUTH / WRONGPASS /
 * NOPERM reply is written; reset: RESET forgets the user.
 */
size_t resp_api_app_size(void);
leaf_status_t resp_cmd_auth(struct resp_request *req);
int resp_auth_login(struct resp_request *req, const char *user, size_t user_len, const char *secret,
                    size_t secret_len);
int resp_auth_allowed(struct resp_request *req, enum auth_need need, int key_arg);
void resp_auth_reset(struct resp_request *req);
/* Writes the refusal v (Redis's words) and records its outcome. */
void resp_api_refuse(struct resp_request *req, enum auth_verdict v);

#endif
