#ifndef LEAF_SNOWFLAKE_NODE_H
#define LEAF_SNOWFLAKE_NODE_H

/*
 * A snowflake node coordinated through ZooKeeper: the glue between zk/
 * (session, registration, cache file) and the generator in leafd.gen.
 *
 * Start-up (snowflake_node_start, main thread, blocking, before the HTTP
 * loops run): register in ZooKeeper or, when it is unreachable, start from
 * the local cache; refuse or wait while the clock is not above everything
 * stored; persist the first reservation; create the ephemeral node.
 *
 * Run time (control loop): every 3 s (at most half of reserve.ms) a new
 * reservation R = now + leafd.snowflake.reserve.ms is written to the local
 * cache on the libuv threadpool and to the leaf_forever node asynchronously;
 * the generator's ceiling is raised to R only after the local write
 * succeeded, so no ID is ever issued beyond what is on disk. ZooKeeper is a
 * weak dependency at run time: while it is away IDs keep flowing on the
 * local reservation; after a session expiry the handle is replaced and the
 * ephemeral node re-created.
 *
 * Shutdown (snowflake_node_shutdown, after the HTTP loops stopped): stop
 * issuing, persist the last issued time (so a graceful restart does not
 * wait), close the session (the ephemeral node vanishes at once).
 *
 * Ownership: all state belongs to the control thread (main); the counters
 * behind snowflake_node_ready_json()/snowflake_node_metrics() are atomics any
 * thread may read.
 */
#include <stddef.h>

#include "status.h"

/* LEAF_OK, or an error already logged (main exits 1). */
leaf_status_t snowflake_node_start(void);

/* Safe to call when the node was never started. */
void snowflake_node_shutdown(void);

/* Appends ,"zookeeper":{...} to the /ready JSON; returns bytes written. */
size_t snowflake_node_ready_json(char *buf, size_t cap);

/* Appends the ZooKeeper metrics (Prometheus text); returns bytes written. */
size_t snowflake_node_metrics(char *buf, size_t cap);

#endif
