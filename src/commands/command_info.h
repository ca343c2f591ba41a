#ifndef LEAF_COMMAND_INFO_H
#define LEAF_COMMAND_INFO_H

/* INFO (command_info.c), a row of the command table. */
#include "resp_conn.h"
#include "status.h"

/*
 * The Redis version leafd reports in HELLO and INFO. Clients read it to pick
 * features; leafd answers the commands of the README's list as Redis 7 does.
 */
#define LEAFD_REDIS_VERSION "7.0.0"

leaf_status_t command_info(struct resp_request *req);

#endif
