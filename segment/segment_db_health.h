#ifndef LEAF_SEGMENT_DB_HEALTH_H
#define LEAF_SEGMENT_DB_HEALTH_H

/*
 * Whether a database host takes writes, asked on a connection of the
 * database thread (segment_db.c) at every connect and every idle check: a
 * read-only server (MySQL Group Replication's secondaries are), or a Galera
 * node outside the primary component or not synced, is left for the next
 * host of leaf.jdbc.url. The verdict is segment_hosts_judge()'s (pure); this
 * file only asks. MySQL has no @@wsrep_on.
 */
#include <mysql.h>

#include "segment_hosts.h"

/* SEGMENT_HOST_UP, or why not (logged here, naming host:port). */
enum segment_host_state segment_db_health(MYSQL *m, const char *host, int port);

#endif
