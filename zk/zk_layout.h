#ifndef LEAF_ZK_LAYOUT_H
#define LEAF_ZK_LAYOUT_H

/*
 * The ZooKeeper layout (/snowflake/{leaf.name}/leaf_forever and leaf_temporary), as pure string
 * work (no ZooKeeper header), unit-tested in tests/unit/test_zk_core.c:
 *
 *   /snowflake/{leaf.name}/leaf_forever/{ip}:{port}-{10-digit sequence}
 *   /snowflake/{leaf.name}/leaf_temporary/{ip}:{port}
 *   /snowflake/{leaf.name}/leaf_lease/{10-digit slot}[/owner]  (docs/cluster.md, "Worker-ID
 * leases", zk_lease.h)
 *
 * The worker ID is the integer of the 10-digit suffix after the LAST '-' of
 * the node's name (Leaf split the whole path on '-', which broke on a
 * leaf.name containing '-': Leaf defect 3).
 *
 * Ownership: a struct zk_layout is filled once at start-up and read-only
 * afterwards; any thread may read it.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define ZK_PATH_MAX 512
#define ZK_IDENTITY_MAX 64 /* "255.255.255.255:65535", or a name of 1-63 [A-Za-z0-9._-] */
#define ZK_MAX_WORKER_ID 1023
#define ZK_SEQUENCE_DIGITS 10

struct zk_layout {
    char identity[ZK_IDENTITY_MAX];   /* ip:port, or the name (zk_layout_name) */
    char root[ZK_PATH_MAX];           /* /snowflake/{name} */
    char forever[ZK_PATH_MAX];        /* {root}/leaf_forever */
    char temporary[ZK_PATH_MAX];      /* {root}/leaf_temporary */
    char ephemeral[ZK_PATH_MAX];      /* {temporary}/{identity} */
    char forever_prefix[ZK_PATH_MAX]; /* {forever}/{identity}- (for PERSISTENT_SEQUENTIAL) */
    char lease[ZK_PATH_MAX];          /* {root}/leaf_lease (lease mode's slots) */
    int64_t max_worker_id; /* the snowflake layout's largest worker ID (ZK_MAX_WORKER_ID unless
                              the caller sets another after init) */
};

/* Fills every path; LEAF_EINVAL when a path would not fit. */
leaf_status_t zk_layout_init(struct zk_layout *l, const char *name, const char *ip, int port);

/*
 * A named identity (docs/IDENTITY.md, "Named identity"): identity, ephemeral
 * and forever_prefix become the name's instead of ip:port's; a name holds no
 * ':', so it never reads as an address. LEAF_EINVAL when a path would not fit.
 */
leaf_status_t zk_layout_name(struct zk_layout *l, const char *identity);

/*
 * Parses the worker ID from a leaf_forever child name or full path: the
 * 10 digits after the last '-' of the last path component. LEAF_EINVAL when
 * the name does not end in '-' and exactly 10 digits.
 */
leaf_status_t zk_layout_worker_id(const char *name_or_path, int64_t *worker_id);

/* 1 when child is exactly "{identity}-{10 digits}", else 0. */
int zk_layout_is_own_child(const char *child, const char *identity);

/*
 * Picks this identity's node among leaf_forever children: the one with the
 * lowest sequence when (wrongly) several exist. Returns its index or -1.
 */
int zk_layout_find_own(const char *const *children, int n, const char *identity);

/* Splits a leaf_temporary child "ip:port" (last ':'); LEAF_EINVAL if malformed. */
leaf_status_t zk_layout_peer_addr(const char *child, char *ip, size_t ip_len, int *port);

#endif
