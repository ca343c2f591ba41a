#include "zk_compat.h"

#include <stdio.h>
#include <string.h>

static int fits(int n, size_t cap) {
    return n >= 0 && (size_t)n < cap;
}

leaf_status_t zk_compat_parent(const struct zk_layout *l, char *buf, size_t cap) {
    return fits(snprintf(buf, cap, "%s/%s", l->root, ZK_COMPAT_PARENT), cap) ? LEAF_OK
                                                                             : LEAF_EINVAL;
}

leaf_status_t zk_compat_layout(struct zk_layout *l) {
    char forever[ZK_PATH_MAX], prefix[ZK_PATH_MAX];
    if (zk_compat_parent(l, forever, sizeof(forever)) != LEAF_OK ||
        !fits(snprintf(prefix, sizeof(prefix), "%s/%s-", forever, l->identity), sizeof(prefix))) {
        return LEAF_EINVAL;
    }
    memcpy(l->forever, forever, sizeof(forever));
    memcpy(l->forever_prefix, prefix, sizeof(prefix));
    return LEAF_OK;
}

leaf_status_t zk_compat_parse_child(const char *child, char *ip, size_t ip_len, int *port,
                                    int64_t *seq) {
    const char *dash = strrchr(child, '-');
    char addr[ZK_PATH_MAX];
    if (dash == NULL || (size_t)(dash - child) >= sizeof(addr) ||
        zk_layout_worker_id(child, seq) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    memcpy(addr, child, (size_t)(dash - child));
    addr[dash - child] = '\0';
    return zk_layout_peer_addr(addr, ip, ip_len, port);
}

enum zk_compat_verdict zk_compat_decide(int leaf_children, int leafd_children, int compat) {
    if (!compat) {
        return leaf_children > 0 ? ZK_COMPAT_REFUSE_LEAF : ZK_COMPAT_NATIVE;
    }
    return leafd_children > 0 ? ZK_COMPAT_REFUSE_MIXED : ZK_COMPAT_LEAF;
}

size_t zk_compat_message(enum zk_compat_verdict v, const char *leaf_parent,
                         const char *leafd_parent, int leaf_children, char *buf, size_t cap) {
    int n;
    if (v == ZK_COMPAT_REFUSE_LEAF) {
        n = snprintf(buf, cap,
                     "%s has %d node(s) registered by Meituan Leaf; leafd's own worker IDs "
                     "(%s) would repeat theirs: set leafd.snowflake.leaf.compat = true to "
                     "register as Leaf does (same parent, same JSON), or use another leaf.name "
                     "(refused since 0.2.0; CHANGELOG.md, 0.2.0)",
                     leaf_parent, leaf_children, leafd_parent);
    } else if (v == ZK_COMPAT_REFUSE_MIXED) {
        n = snprintf(buf, cap,
                     "leafd.snowflake.leaf.compat is on but %s has leafd nodes as well as %s: "
                     "the two sequences hand out the same worker IDs; migrate the cluster to "
                     "one parent (docs/IDENTITY.md) or use another leaf.name",
                     leafd_parent, leaf_parent);
    } else {
        n = snprintf(buf, cap, "%s", "");
    }
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}

int64_t zk_compat_floor_ms(int64_t leaf_timestamp_ms) {
    return leaf_timestamp_ms < 0 ? -1 : leaf_timestamp_ms + ZK_COMPAT_REPORT_MS;
}
