#ifndef LEAF_ZK_SHAPE_H
#define LEAF_ZK_SHAPE_H

/*
 * The cluster's ID shape (docs/IDENTITY.md): the snowflake layout, the
 * epoch and the time unit every node of a cluster must issue with. Recorded once, at the first
 * start of a cluster, in /snowflake/{leaf.name}/leafd_shape, and checked at every start: a node
 * configured otherwise would issue IDs of another shape under worker IDs the cluster shares, and
 * two shapes can produce one ID from two different (time, worker, sequence) triples.
 *
 *   {"layout":"time:41,worker:10,sequence:12","epoch":1288834974657,"time_unit_ms":1}
 *
 * Pure code (no ZooKeeper or libuv header), unit-tested in tests/unit/test_zk_identity.c. The
 * layout is compared as text, so callers pass snowflake_layout_format()'s output, never the
 * configured text (which may hold spaces).
 *
 * Ownership: a struct zk_shape is a value; any thread may use these functions.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define ZK_SHAPE_NODE "leafd_shape" /* child of /snowflake/{leaf.name} */
#define ZK_SHAPE_LAYOUT_MAX 128     /* as struct zk_cache_data's layout */
#define ZK_SHAPE_MESSAGE_MAX 512    /* room for zk_shape_mismatch()'s message */

struct zk_shape {
    char layout[ZK_SHAPE_LAYOUT_MAX]; /* "time:41,worker:10,sequence:12" */
    int64_t epoch;                    /* ms since 1970, >= 0 */
    int64_t unit_ms;                  /* ms per tick of the time field, >= 1 */
};

/* Writes the JSON (NUL-terminated); returns its length, or 0 when it does not fit. */
size_t zk_shape_format(const struct zk_shape *s, char *buf, size_t cap);

/*
 * Parses the JSON of the shape znode. LEAF_EINVAL when it is not an object, or a member is
 * missing or out of range (layout empty or too long, epoch below 0, time_unit_ms below 1):
 * the caller refuses to start naming the znode, it does not overwrite it.
 */
leaf_status_t zk_shape_parse(const char *buf, size_t len, struct zk_shape *s);

/* 1 when both shapes issue the same IDs (layout text, epoch and unit all equal), else 0. */
int zk_shape_equal(const struct zk_shape *a, const struct zk_shape *b);

/*
 * The refusal when the recorded shape (stored, read from `path`) differs from the configured
 * one (mine): writes one line naming both values and the keys to change, e.g.
 *   cluster shape mismatch: /snowflake/it/leafd_shape records layout time:41,worker:10,
 *   sequence:12, epoch 1288834974657, time unit 1 ms; this node is configured with layout ...;
 *   set leafd.snowflake.layout, leafd.snowflake.epoch and leafd.snowflake.time.unit.ms to the
 *   recorded values (a cluster keeps one ID shape for good)
 * Only the differing fields are named after "configured with". Returns the length written.
 */
size_t zk_shape_mismatch(const struct zk_shape *stored, const struct zk_shape *mine,
                         const char *path, char *buf, size_t cap);

/*
 * The time floor of the start-up clock check expressed in this node's shape. A stored time
 * (ZooKeeper's or the cache's timestamp, ms since 1970) was reserved by IDs of shape `old`; the
 * IDs this node issues must have a time field above that tick, not merely a wall clock above
 * that ms: with another epoch the same wall clock is another tick. Returns the largest ms of
 * `mine` whose tick is at or below old's tick of stored_ms, i.e. the floor to pass to
 * zk_clock_startup() (IDs are issued from floor + 1 on). Equal shapes return stored_ms itself;
 * stored_ms < 0 (unknown) returns -1. A floor before `mine`'s epoch returns mine->epoch - 1.
 */
int64_t zk_shape_floor_ms(const struct zk_shape *old, int64_t stored_ms,
                          const struct zk_shape *mine);

#endif
