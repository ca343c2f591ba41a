#ifndef LEAF_TABLE_RESP_H
#define LEAF_TABLE_RESP_H

/*
 * The Redis-protocol command table (table_resp.c), beside the HTTP route
 * table (table_http.h). The table is the RESP protocol's handler
 * (resp_conn_config.handler) and its completion hook does the per-command
 * accounting, so src/resp knows neither. Handlers run on an event-loop
 * thread with the same struct door_ctx as the HTTP handlers: src/commands'
 * ID commands (command_ids.c), AUTH (command_auth.c), connection commands
 * (command_connection.c), INFO (command_info.c), CLUSTER (command_cluster.c),
 * MULTI (command_multi.c) and, in table_resp.c, COMMAND, which reads the table.
 */
#include <stdio.h>

#include "resp_conn.h"
#include "status.h"

/* Dispatches a command to its row of the table. */
leaf_status_t table_resp_dispatch(struct resp_request *req);
/* The completion hook: per-command accounting. */
void table_resp_done(const struct resp_request *req);

/*
 * The commands' metric labels (lower case) by row of the table, then the
 * pseudo-commands unknown and protocol_error: writes up to cap names,
 * returns how many there are. The outcomes are command_outcome.h's.
 */
int table_resp_names(const char **names, int cap);
/* ids[i] = 1 when command i hands out IDs (its ISSUES flag), in the names' order. */
void table_resp_kinds(unsigned char *ids, int cap);
/*
 * Writes the command table as a Markdown table (leafd --print-reference
 * commands): name, arity, flags (Redis's, then leafd's dispatch flags),
 * the right needed on the key, a one-line description.
 */
void table_resp_print_reference(FILE *out);

#endif
