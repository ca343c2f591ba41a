#ifndef LEAF_COMMAND_CONNECTION_H
#define LEAF_COMMAND_CONNECTION_H

/* The connection commands (command_connection.c), rows of the command table. */
#include "resp_conn.h"
#include "status.h"

/* PING [message]: PONG, or the message. */
leaf_status_t command_connection_ping(struct resp_request *req);
/* ECHO message. */
leaf_status_t command_connection_echo(struct resp_request *req);
/* HELLO [protover [AUTH user secret] [SETNAME name]]. */
leaf_status_t command_connection_hello(struct resp_request *req);
/* SELECT 0 (database 0 only). */
leaf_status_t command_connection_select(struct resp_request *req);
/* CLIENT SETNAME|GETNAME|ID|SETINFO|INFO. */
leaf_status_t command_connection_client(struct resp_request *req);
/* CONFIG GET pattern...: answers empty. */
leaf_status_t command_connection_config(struct resp_request *req);
/* QUIT: closes the connection after the reply. */
leaf_status_t command_connection_quit(struct resp_request *req);
/* RESET: back to a fresh connection. */
leaf_status_t command_connection_reset(struct resp_request *req);
/* READONLY and READWRITE: accepted for cluster clients; nothing changes. */
leaf_status_t command_connection_readonly(struct resp_request *req);

#endif
