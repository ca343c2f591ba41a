#ifndef LEAF_RESP_APP_H
#define LEAF_RESP_APP_H

/*
 * What a RESP connection keeps for the API: resp_client.app points at one
 * struct resp_app (resp_auth_app_size() bytes, zeroed at accept; the
 * server's resp_conn_config.app_size). Who AUTHed is resp_auth.c's, the
 * MULTI queue resp_multi.c's. resp_app_close (resp_multi.c) releases what
 * it holds when the connection closes (resp_conn_config.app_close).
 *
 * Ownership: the connection's loop thread, as the connection.
 */
#include "auth_decide.h"
#include "resp_multi.h"
#include "user_service.h"

struct resp_app {
    struct auth_session auth;
    struct resp_multi multi;
};

void resp_app_close(void *app);

#endif
