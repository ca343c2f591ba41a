/*
 * The process's one ZooKeeper session: see node_zk.h.
 * Layer: the node (src/node), beneath the services, which subscribe to it;
 * over zk/zk_session.c.
 */
#include "node_zk.h"

#include <inttypes.h>
#include <stdio.h>

#include "clock.h"
#include "log.h"

static void node_zk_tighten(struct node_zk *z, const struct leaf_config *cfg);

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
    if (zk_session_authenticate(&z->session, cfg->zk_auth) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    node_zk_tighten(z, cfg);
    return LEAF_OK;
}

/*
 * With leafd.zk.auth, the cluster's znodes created open before it was set
 * are tightened at start (once: a tree already closed costs one ACL read of
 * its root). ZooKeeper away: tried again at the next start.
 */
static void node_zk_tighten(struct node_zk *z, const struct leaf_config *cfg) {
    if (cfg->zk_auth[0] == '\0' || cfg->name[0] == '\0') {
        return;
    }
    if (zk_session_wait_connected(&z->session, (int)cfg->zk_session_timeout_ms) != LEAF_OK) {
        log_warn("zk", "ZooKeeper unreachable at start: the cluster's znodes are not checked for "
                       "open ACLs (again at the next start)");
        return;
    }
    char roots[2][300];
    snprintf(roots[0], sizeof(roots[0]), "/snowflake/%s", cfg->name);
    snprintf(roots[1], sizeof(roots[1]), "/leafd/%s", cfg->name);
    int64_t t0 = clock_mono_ms();
    long total = 0;
    for (int i = 0; i < 2; i++) {
        long n = zk_session_tighten(&z->session, roots[i]);
        if (n < 0) {
            log_warn("zk", "could not tighten every ACL under %s (again at the next start)",
                     roots[i]);
        } else {
            total += n;
        }
    }
    if (total > 0) {
        log_info("zk",
                 "closed %ld znode(s) created open under %s and %s (leafd.zk.auth: all rights "
                 "to its identity, read to anyone, users unreadable) in %" PRId64 " ms",
                 total, roots[0], roots[1], clock_mono_ms() - t0);
    }
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
