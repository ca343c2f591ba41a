#ifndef LEAF_NODE_ZK_H
#define LEAF_NODE_ZK_H

/*
 * The process's one ZooKeeper session on the control loop. main() opens it
 * before the services start, when leaf.snowflake.zk.address is set, and
 * closes it after they have stopped; the services (snowflake node, sequence
 * service, users, the /cluster survey) subscribe to it instead of holding
 * sessions of their own. A uv_async wakes the control loop when the
 * ZooKeeper threads queue an event; the loop hands the events to the
 * subscribers (zk_session_dispatch).
 *
 * Owned by main(); control thread only.
 */
#include <uv.h>

#include "config.h"
#include "zk_session.h"

struct node_zk {
    struct zk_session session;
    uv_async_t async;
    int open; /* the session and the async are live */
};

/* Opens the session when cfg names ZooKeeper; LEAF_OK and nothing open otherwise. */
leaf_status_t node_zk_open(struct node_zk *z, const struct leaf_config *cfg, uv_loop_t *loop);

/* The session, or NULL when ZooKeeper is not configured. */
struct zk_session *node_zk_session(struct node_zk *z);

/* Closes the session: the ephemeral nodes of every service vanish at once. */
void node_zk_close(struct node_zk *z);

#endif
