#ifndef LEAF_ZK_RECORD_H
#define LEAF_ZK_RECORD_H

/*
 * The two persisted records of a snowflake node, formatted and parsed here
 * as pure code (no ZooKeeper or libuv header), unit-tested in
 * tests/unit/test_zk_core.c:
 *
 * - znode data (leaf_forever and leaf_temporary), Leaf's JSON:
 *     {"ip":"10.0.0.5","port":"8080","timestamp":1795335806892}
 * - the local cache {data.dir}/{leaf.name}/{port}/workerID.properties:
 *     workerID=3
 *     timestamp=1795335806892
 *   and (docs/IDENTITY.md) the identity, cluster, session, marker and shape
 *   it belongs to (struct zk_cache_data below)
 *
 * In both, "timestamp" is a reservation: the node never issues an ID with a
 * timestamp at or above it, and it is written up to
 * leafd.snowflake.reserve.ms ahead of the clock. After a graceful stop it is
 * the timestamp of the last ID issued.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct zk_node_data {
    char ip[64];
    int port;
    int64_t timestamp; /* -1 when absent */
};

/* Writes the JSON (NUL-terminated); returns its length, or 0 when it does not fit. */
size_t zk_record_format_node(const struct zk_node_data *d, char *buf, size_t cap);

/*
 * Parses znode JSON. "port" may be a string (Leaf) or a number; a missing,
 * non-numeric or negative "timestamp", or one at or above 9e15 ms, leaves it
 * -1. LEAF_EINVAL when not a JSON object. What it returns, the formatter
 * writes back so that it reads the same (the ip is escaped as JSON).
 */
leaf_status_t zk_record_parse_node(const char *buf, size_t len, struct zk_node_data *d);

/*
 * Sizes of the cache's text fields (with the NUL). Each field's character set is checked by the
 * parser and the formatter alike, so what one accepts the other writes back unchanged.
 */
#define ZK_CACHE_IDENTITY_MAX 64 /* ip:port or a name, [0-9A-Za-z.:_-] */
#define ZK_CACHE_CLUSTER_MAX 129 /* leaf.name, [A-Za-z0-9._-] */
#define ZK_CACHE_MARKER_MAX 33   /* the cluster marker's id, hex digits */
#define ZK_CACHE_LAYOUT_MAX 128  /* leafd.snowflake.layout as formatted, [a-z0-9:,] */
#define ZK_CACHE_TEXT_MAX 1024   /* a formatted cache always fits in this */

struct zk_cache_data {
    int64_t worker_id; /* -1 when absent */
    int64_t timestamp; /* -1 when absent (a cache written by Leaf has none) */
};

/*
 * Whose cache it is (docs/IDENTITY.md). A cache is only ever used by
 * the identity and cluster it names (zk_identity_cache_use()). Every field is optional and
 * zero/empty means "unknown": an old two-key file (or Leaf's, workerID only) reads with all of
 * them unknown. Kept apart from struct zk_cache_data so that its {worker_id, timestamp}
 * initialisers stay complete. The keys, after workerID and timestamp:
 *
 *   identity=10.0.0.5:8080       the ip:port the worker ID belongs to
 *   cluster=orders               leaf.name
 *   session=0x1000a2b3c4d0005    the ZooKeeper session that last held leaf_temporary/{identity}
 *   marker=9f2c4e1a0b3d5e7f      the cluster marker's id (zk_marker.h)
 *   generation=17                the marker generation this node last wrote
 *   layout=time:41,worker:10,sequence:12   the ID shape timestamp was issued under (zk_shape.h)
 *   epoch=1288834974657
 *   time.unit.ms=1
 */
struct zk_cache_owner {
    char identity[ZK_CACHE_IDENTITY_MAX]; /* "" unknown */
    char cluster[ZK_CACHE_CLUSTER_MAX];   /* "" unknown */
    int64_t session_id;                   /* 0 unknown (ZooKeeper never issues session 0) */
    char marker[ZK_CACHE_MARKER_MAX];     /* "" unknown */
    int64_t generation;                   /* 0 unknown (generations start at 1) */
    char layout[ZK_CACHE_LAYOUT_MAX];     /* "" unknown; epoch and unit_ms count only when set */
    int64_t epoch;
    int64_t unit_ms;
};

/*
 * The cache file's properties text, with the owner fields. The formatter writes at most
 * ZK_CACHE_TEXT_MAX bytes and leaves unknown owner fields out (all of them unknown: the old
 * two-key file); it returns 0 when the text does not fit or a text field holds a character its
 * set does not allow (or the layout is set with an epoch below 0 or a unit below 1). The parser
 * ignores comments, blank lines and other keys ('=' or ':' separates key and value, as in Java)
 * and reads the owner fields into o (NULL: checked, then dropped). It refuses (LEAF_EINVAL) a
 * workerID or timestamp with a bad value, a negative or non-decimal number, a generation or
 * time.unit.ms of 0, a session that is not 0x-hex or is 0, a text field too long or outside its
 * character set.
 */
size_t zk_record_format_cache_owned(const struct zk_cache_data *c, const struct zk_cache_owner *o,
                                    char *buf, size_t cap);
leaf_status_t zk_record_parse_cache_owned(const char *text, size_t len, struct zk_cache_data *c,
                                          struct zk_cache_owner *o);

#endif
