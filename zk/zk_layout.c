#include "zk_layout.h"

#include "num.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fits(int n, size_t cap) {
    return n >= 0 && (size_t)n < cap;
}

leaf_status_t zk_layout_init(struct zk_layout *l, const char *name, const char *ip, int port) {
    memset(l, 0, sizeof(*l));
    if (!fits(snprintf(l->identity, sizeof(l->identity), "%s:%d", ip, port), sizeof(l->identity)) ||
        !fits(snprintf(l->root, sizeof(l->root), "/snowflake/%s", name), sizeof(l->root)) ||
        !fits(snprintf(l->forever, sizeof(l->forever), "%s/leaf_forever", l->root),
              sizeof(l->forever)) ||
        !fits(snprintf(l->temporary, sizeof(l->temporary), "%s/leaf_temporary", l->root),
              sizeof(l->temporary)) ||
        !fits(snprintf(l->ephemeral, sizeof(l->ephemeral), "%s/%s", l->temporary, l->identity),
              sizeof(l->ephemeral)) ||
        !fits(snprintf(l->forever_prefix, sizeof(l->forever_prefix), "%s/%s-", l->forever,
                       l->identity),
              sizeof(l->forever_prefix)) ||
        !fits(snprintf(l->lease, sizeof(l->lease), "%s/leaf_lease", l->root), sizeof(l->lease))) {
        return LEAF_EINVAL;
    }
    l->max_worker_id = ZK_MAX_WORKER_ID;
    return LEAF_OK;
}

leaf_status_t zk_layout_name(struct zk_layout *l, const char *identity) {
    if (!fits(snprintf(l->identity, sizeof(l->identity), "%s", identity), sizeof(l->identity)) ||
        !fits(snprintf(l->ephemeral, sizeof(l->ephemeral), "%s/%s", l->temporary, l->identity),
              sizeof(l->ephemeral)) ||
        !fits(snprintf(l->forever_prefix, sizeof(l->forever_prefix), "%s/%s-", l->forever,
                       l->identity),
              sizeof(l->forever_prefix))) {
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* 1 when s is exactly ZK_SEQUENCE_DIGITS decimal digits. */
static int is_sequence(const char *s) {
    size_t n = 0;
    for (; s[n]; n++) {
        if (s[n] < '0' || s[n] > '9') {
            return 0;
        }
    }
    return n == ZK_SEQUENCE_DIGITS;
}

leaf_status_t zk_layout_worker_id(const char *name_or_path, int64_t *worker_id) {
    const char *slash = strrchr(name_or_path, '/');
    const char *name = slash ? slash + 1 : name_or_path;
    const char *dash = strrchr(name, '-');
    if (dash == NULL || dash == name || !is_sequence(dash + 1)) {
        return LEAF_EINVAL;
    }
    return num_parse_i64(dash + 1, strlen(dash + 1), worker_id);
}

int zk_layout_is_own_child(const char *child, const char *identity) {
    size_t n = strlen(identity);
    return strncmp(child, identity, n) == 0 && child[n] == '-' && is_sequence(child + n + 1);
}

int zk_layout_find_own(const char *const *children, int n, const char *identity) {
    int best = -1;
    int64_t best_id = 0;
    for (int i = 0; i < n; i++) {
        int64_t id;
        if (!zk_layout_is_own_child(children[i], identity) ||
            zk_layout_worker_id(children[i], &id) != LEAF_OK) {
            continue;
        }
        if (best < 0 || id < best_id) {
            best = i;
            best_id = id;
        }
    }
    return best;
}

leaf_status_t zk_layout_peer_addr(const char *child, char *ip, size_t ip_len, int *port) {
    const char *colon = strrchr(child, ':');
    if (colon == NULL || colon == child || (size_t)(colon - child) >= ip_len) {
        return LEAF_EINVAL;
    }
    int64_t p;
    if (num_parse_range(colon + 1, strlen(colon + 1), 1, 65535, &p) != LEAF_OK || colon[1] == '-') {
        return LEAF_EINVAL;
    }
    memcpy(ip, child, (size_t)(colon - child));
    ip[colon - child] = '\0';
    *port = (int)p;
    return LEAF_OK;
}
