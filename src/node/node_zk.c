/*
 * The process's one ZooKeeper session: see node_zk.h.
 */
#include "node_zk.h"

#include "log.h"

static void node_zk_on_async(uv_async_t *a) {
    struct node_zk *z = a->data;
    if (z->open) {
        zk_session_dispatch(&z->session);
    }
}

/* ZooKeeper threads: wake the control loop. */
static void node_zk_notify(void *arg) {
    uv_async_send(arg);
}

leaf_status_t node_zk_open(struct node_zk *z, const struct leaf_config *cfg, uv_loop_t *loop) {
    if (cfg->zk_address[0] == '\0') {
        return LEAF_OK;
    }
    if (uv_async_init(loop, &z->async, node_zk_on_async) != 0) {
        log_error("zk", "uv_async_init(ZooKeeper session) failed");
        return LEAF_ERR;
    }
    z->async.data = z;
    /* The control loop ends with the signals, not with the session. */
    uv_unref((uv_handle_t *)&z->async);
    if (zk_session_open(&z->session, cfg->zk_address, (int)cfg->zk_session_timeout_ms,
                        node_zk_notify, &z->async) != LEAF_OK) {
        return LEAF_ERR; /* the async is closed with the control loop's handles */
    }
    z->open = 1;
    return LEAF_OK;
}

struct zk_session *node_zk_session(struct node_zk *z) {
    return z->open ? &z->session : NULL;
}

void node_zk_close(struct node_zk *z) {
    if (!z->open) {
        return;
    }
    zk_session_close(&z->session);
    z->open = 0;
}
