#ifndef LEAF_COMMAND_AUTH_H
#define LEAF_COMMAND_AUTH_H

/*
 * Users and permissions over RESP (command_auth.c). The connection keeps who
 * AUTHed in resp_client.app (command_client_size() bytes: the server's
 * resp_conn_config.app_size). login: AUTH / HELLO AUTH, 1 when accepted,
 * else the WRONGPASS reply is written; allowed: the check of a command's
 * need on its key argument, 1 when allowed, else the NOAUTH / WRONGPASS /
 * NOPERM reply is written; reset: RESET forgets the user.
 */
#include <stddef.h>

#include "auth_decide.h"
#include "resp_conn.h"
#include "status.h"

leaf_status_t command_auth(struct resp_request *req);
int command_auth_login(struct resp_request *req, const char *user, size_t user_len,
                       const char *secret, size_t secret_len);
/* bare: 1 + the enum ids_mode of a key without a mode prefix (LEAF.UUID's); 0: the key names
 * its mode ("<mode>:<key>"). */
int command_auth_allowed(struct resp_request *req, enum auth_need need, int key_arg, int bare);
/* Whether the connection's user holds need on the key, silently; 1 with auth off. */
int command_auth_may(struct resp_request *req, enum auth_need need, enum ids_mode mode,
                     const char *name, size_t len);
void command_auth_reset(struct resp_request *req);

#endif
