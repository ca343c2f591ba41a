#ifndef LEAF_SNOWFLAKE_SERVICE_RETIRE_H
#define LEAF_SNOWFLAKE_SERVICE_RETIRE_H

/*
 * leafd --retire IDENTITY|stopped -c FILE (snowflake_service_retire.c): retires
 * forever-mode identities (ip:port, or every one whose node is not live) so
 * that their worker IDs join the lease pool, each slot reserved above the
 * forever node's recorded time. Returns the process's exit code.
 */
#include "config.h"

int snowflake_service_retire_main(const struct leaf_config *cfg, const char *what);

#endif
