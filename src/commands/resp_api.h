#ifndef LEAF_RESP_API_H
#define LEAF_RESP_API_H

/*
 * The Redis-protocol API: the command table (resp_api.c), the top of the
 * RESP side. The table is the RESP protocol's handler
 * (resp_conn_config.handler) and its completion hook does the per-command
 * accounting, so src/resp knows neither. Handlers run on an event-loop
 * thread with the same struct door_ctx as the HTTP handlers: the ID commands
 * (resp_ids.c), AUTH (resp_auth.c), INFO (resp_info.c), CLUSTER
 * (resp_cluster.c) and, in resp_api.c, the connection commands and COMMAND.
 */
#include <stdio.h>

#include "resp_conn.h"
#include "status.h"

/* Dispatches a command to its row of the table. */
leaf_status_t resp_api_dispatch(struct resp_request *req);
/* The completion hook: per-command accounting. */
void resp_api_done(const struct resp_request *req);

/*
 * The commands' metric labels (lower case) by row of the table, then the
 * pseudo-commands unknown and protocol_error: writes up to cap names,
 * returns how many there are. The outcomes are resp_outcome.h's.
 */
int resp_api_command_names(const char **names, int cap);
/* ids[i] = 1 when command i hands out IDs (its ISSUES flag), in the names' order. */
void resp_api_command_kinds(unsigned char *ids, int cap);
/*
 * Writes the command table as a Markdown table (leafd --print-reference
 * commands): name, arity, flags (Redis's, then leafd's dispatch flags),
 * the right needed on the key, a one-line description.
 */
void resp_api_print_reference(FILE *out);

#endif
