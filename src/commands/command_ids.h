#ifndef LEAF_COMMAND_IDS_H
#define LEAF_COMMAND_IDS_H

/* The ID commands (command_ids.c), rows of the command table (table_resp.c). */
#include "resp_conn.h"
#include "status.h"

/* INCR key: one ID. */
leaf_status_t command_ids_incr(struct resp_request *req);
/* INCRBY key n: the last of n consecutive IDs (dense modes; n = 1 any mode). */
leaf_status_t command_ids_incrby(struct resp_request *req);
/* LEAF.IDS key n: an array of n ascending IDs, any mode. */
leaf_status_t command_ids_leaf_ids(struct resp_request *req);
/* GET sequence:<name>: the last ID issued for the sequence. */
leaf_status_t command_ids_get(struct resp_request *req);
/* The command of a text mode (IDS_MODES' text command: LEAF.UUID key [count], LEAF.NUMBER
 * name [count]): one ID's text as a string, or an array of count. */
leaf_status_t command_ids_leaf_text(struct resp_request *req);
/* The key and count of an ID command, without issuing: 1 when good, else the error is written.
 * bare: 1 + the mode of a key without a mode prefix (LEAF.UUID's), 0: the key names it. */
int command_ids_check(struct resp_request *req, int bare);

#endif
