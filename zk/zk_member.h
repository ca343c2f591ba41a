#ifndef LEAF_ZK_MEMBER_H
#define LEAF_ZK_MEMBER_H

/*
 * A node's membership record, pure (docs/reference/zookeeper.md, "members"):
 * every node of leafd 1.0 or later holds the EPHEMERAL znode
 * /leafd/{leaf.name}/members/{ip}:{port} (its snowflake identity) while it
 * runs, with the data
 *     {"version":"1.0.0","auth":true,"http":"127.0.0.1:8080","sharding":false}
 * so that its peers, /cluster and tools/programs/zk-inspect see which release each
 * node runs, whether it authenticates to ZooKeeper and whether it is configured
 * to shard sequences (leafd.sequence.sharding: the slot map is written only
 * when every node of the sequence line says so, docs/UPGRADING.md). A live node without a
 * record (in leaf_temporary or the sequence line) runs 0.2.0 or older.
 */
#include <stddef.h>

#include "status.h"

struct zk_member {
    char version[24]; /* "1.0.0"; "" unknown */
    int auth;         /* authenticates with leafd.zk.auth */
    char http[64];    /* ip:port of its HTTP listener */
    int sharding;     /* leafd.sequence.sharding: 1 on, 0 off, -1 the record does not say */
};

/* The record's JSON into buf; its length, 0 when it does not fit. */
size_t zk_member_format(const struct zk_member *m, char *buf, size_t cap);

/* Parses a record; LEAF_EINVAL when it is not one (fields left ""/0). */
leaf_status_t zk_member_parse(const char *buf, size_t len, struct zk_member *m);

/*
 * Compares two versions "MAJOR.MINOR.PATCH" (a missing or bad part counts as
 * 0; "" is below every version): <0, 0 or >0 as a is below, equal to or
 * above b.
 */
int zk_member_version_cmp(const char *a, const char *b);

#endif
