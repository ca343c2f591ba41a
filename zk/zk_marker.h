#ifndef LEAF_ZK_MARKER_H
#define LEAF_ZK_MARKER_H

/*
 * The cluster marker (docs/IDENTITY.md): how a node tells that the
 * ZooKeeper it talks to lost the cluster's tree (emptied data dir, deleteall, a new ensemble) or
 * went back in time (restored from an older snapshot). Either would hand out worker IDs that
 * live or recent nodes still use.
 *
 *   /snowflake/{leaf.name}/leafd_marker   PERSISTENT, {"id":"9f2c4e1a0b3d5e7f","generation":17}
 *
 * `id` is drawn at random (64 bits, hex) when the marker is created, so a tree created afresh is
 * told apart from the old one even at the same generation. `generation` goes up by one at every
 * session start of every node (a versioned set of the marker); each node keeps in its data dir
 * (the worker-ID cache, zk_record.h: marker= and generation=) the id and the generation it last
 * wrote. A ZooKeeper whose marker is missing, carries another id, or a generation below the
 * node's own has lost writes the node saw acknowledged: the node refuses (exit 1 naming the
 * recovery steps in docs/OPERATIONS.md), whatever the rest of the tree says.
 *
 * Pure code (no ZooKeeper or libuv header), unit-tested in tests/unit/test_zk_identity.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define ZK_MARKER_NODE "leafd_marker" /* child of /snowflake/{leaf.name} */
#define ZK_MARKER_ID_MAX 33           /* 1..32 lower-case hex digits and the NUL */
#define ZK_MARKER_MESSAGE_MAX 640     /* room for zk_marker_message() */

struct zk_marker {
    char id[ZK_MARKER_ID_MAX]; /* "" unknown */
    int64_t generation;        /* >= 1; 0 unknown */
};

/* Writes the JSON (NUL-terminated); returns its length, or 0 when it does not fit. */
size_t zk_marker_format(const struct zk_marker *m, char *buf, size_t cap);

/* Parses the marker's JSON; LEAF_EINVAL unless id is 1..32 lower-case hex and generation >= 1. */
leaf_status_t zk_marker_parse(const char *buf, size_t len, struct zk_marker *m);

/* Writes 16 lower-case hex digits of r into id (a fresh marker's id; the caller draws r from
 * getrandom()). */
void zk_marker_new_id(uint64_t r, char id[ZK_MARKER_ID_MAX]);

enum zk_marker_verdict {
    ZK_MARKER_CREATE, /* no marker anywhere: a new cluster (or one from before the marker). Create
                         it with a fresh id and generation 1, then record it locally */
    ZK_MARKER_ADOPT,  /* ZooKeeper has a marker, this data dir none (a new node, or one upgraded
                         from an older leafd): write generation + 1, then record it locally */
    ZK_MARKER_OK,     /* same id, ZooKeeper at or above ours: write generation + 1, record it */
    ZK_MARKER_BEHIND, /* same id, ZooKeeper's generation below ours: ZooKeeper was restored
                         from an older state. Refuse */
    ZK_MARKER_LOST,   /* ZooKeeper has no marker, or another id, while our data dir has one:
                         the tree was lost or rebuilt. Refuse */
};

struct zk_marker_decision {
    enum zk_marker_verdict verdict;
    struct zk_marker write; /* CREATE, ADOPT, OK: what to write (versioned: create for CREATE, a
                               set expecting the version read for the others; on a bad version
                               read again and decide again) and, once acknowledged, to record in
                               the data dir */
};

/*
 * Decides at every session start (the first and every new session after an expiry), after
 * reading the marker znode and before any registration is trusted.
 * zk: the marker read from ZooKeeper, NULL when the znode does not exist (a znode that does not
 * parse is the caller's refusal, naming it, not a case here). local: the data dir's id and
 * generation (empty id = none recorded). fresh_id: the id to create with (zk_marker_new_id()).
 */
struct zk_marker_decision zk_marker_decide(const struct zk_marker *zk,
                                           const struct zk_marker *local, const char *fresh_id);

/*
 * The refusal for BEHIND and LOST: one line naming the znode, both states and the recovery
 * steps, e.g.
 *   ZooKeeper lost the cluster's tree: /snowflake/it/leafd_marker is missing but this node's
 *   data dir /var/leafd/it/8080 records marker 9f2c... generation 17; refusing to issue IDs
 *   that may repeat; recovery: docs/OPERATIONS.md, "ZooKeeper lost or restored" (stop every
 *   node, wait leafd.snowflake.reserve.ms, clear marker= and generation= in each node's cache)
 * Returns the length written (cut to cap).
 */
size_t zk_marker_message(const struct zk_marker_decision *d, const struct zk_marker *zk,
                         const struct zk_marker *local, const char *marker_path,
                         const char *data_dir, char *buf, size_t cap);

#endif
