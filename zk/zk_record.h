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

struct zk_cache_data {
    int64_t worker_id; /* -1 when absent */
    int64_t timestamp; /* -1 when absent (a cache written by Leaf has none) */
};

/* Writes the properties text; returns its length, or 0 when it does not fit. */
size_t zk_record_format_cache(const struct zk_cache_data *c, char *buf, size_t cap);

/*
 * Parses the properties text (comments, blank lines and other keys are
 * ignored). LEAF_EINVAL when workerID or timestamp has a bad value.
 */
leaf_status_t zk_record_parse_cache(const char *text, size_t len, struct zk_cache_data *c);

#endif
