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
 * It also keeps the node's membership record (zk/zk_member.h: its version
 * and whether it authenticates) and the stage of the cluster's trees
 * (zk/zk_acl.h): with leafd.zk.auth the trees are closed only once every
 * live node authenticates and runs 1.0 or later, unless an operator holds
 * them open (`leafctl acl open`, the znode /leafd/{leaf.name}/acl). The
 * keeper thread does that every NODE_ZK_KEEP_MS, with synchronous calls,
 * off the control loop (docs/reference/zookeeper.md, "ACLs").
 *
 * Owned by main(). Fields: the control thread, except those marked.
 */
#include <pthread.h>
#include <uv.h>

#include "config.h"
#include "zk_session.h"

#define NODE_ZK_KEEP_MS 3000

struct node_zk {
    struct zk_session session;
    uv_async_t async;
    int open;                  /* the session and the async are live */
    struct zk_client_id adopt; /* set by main() before node_zk_open: resume this session */
    const struct leaf_config *cfg;
    char member_path[320];
    char member_data[256];

    /* The keeper thread; mu guards what follows and stop. */
    pthread_t keeper;
    int keeper_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    char held_back[512]; /* the nodes that keep the trees open ("" none); any thread, under mu */
};

/*
 * Opens the session when cfg names ZooKeeper; LEAF_OK and nothing open
 * otherwise. LEAF_EINVAL when the cluster's trees refuse this node (the
 * reason logged, naming the znode and the fix).
 */
leaf_status_t node_zk_open(struct node_zk *z, const struct leaf_config *cfg, uv_loop_t *loop);

/* The session, or NULL when ZooKeeper is not configured. */
struct zk_session *node_zk_session(struct node_zk *z);

/*
 * Any thread: why the trees are not closed yet although leafd.zk.auth is
 * set, into buf ("" when closed, or without credentials); returns buf.
 */
const char *node_zk_held_back(struct node_zk *z, char *buf, size_t cap);

/*
 * `leafd --zk-acl status|open|close -c FILE` (docs/reference/zookeeper.md,
 * "ACLs"): shows the trees' stage and the members; reopens the trees and holds
 * them open (a downgrade, or a node without the credentials); closes them,
 * refused while a live node would be locked out. Exit code 0, 1 or 2 (usage).
 */
int node_zk_acl_main(const struct leaf_config *cfg, const char *verb);

/* Closes the session: the ephemeral nodes of every service vanish at once. */
void node_zk_close(struct node_zk *z);

#endif
