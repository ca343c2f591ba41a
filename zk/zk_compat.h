#ifndef LEAF_ZK_COMPAT_H
#define LEAF_ZK_COMPAT_H

/*
 * Meituan Leaf's own ZooKeeper layout (docs/IDENTITY.md):
 *
 *   /snowflake/{leaf.name}/forever/{ip}:{port}-{10-digit sequence}   PERSISTENT_SEQUENTIAL
 *       data: {"ip":"10.0.0.5","port":"8080","timestamp":1795335806892}   rewritten every 3 s
 *
 * Leaf's worker ID is the sequence (it splits the child's name on '-'); its timestamp is the
 * wall clock of its last report, not a reservation: a Leaf node issues up to
 * ZK_COMPAT_REPORT_MS past it. leafd's own parent is leaf_forever, a sequence of its own, so a
 * cluster with Leaf nodes and leafd nodes in the two parents would hand out every small worker
 * ID twice. Hence:
 * - without leafd.snowflake.leaf.compat, a cluster whose Leaf parent has children is refused
 *   (exit 1 naming that path);
 * - with it, leafd registers exactly as Leaf does: the same sequential parent (the paths from
 *   zk_compat_layout()), the same JSON (zk_record_format_node()), and an identity that Leaf
 *   registered is taken over above its timestamp + ZK_COMPAT_REPORT_MS (zk_compat_floor_ms()).
 *
 * Pure code (no ZooKeeper or libuv header), unit-tested in tests/unit/test_zk_identity.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "zk_layout.h"

#define ZK_COMPAT_PARENT "forever" /* Leaf's PATH_FOREVER under /snowflake/{leaf.name} */
#define ZK_COMPAT_REPORT_MS 3000   /* Leaf's ScheduledUploadData period */
#define ZK_COMPAT_MESSAGE_MAX 1200

/*
 * Switches an initialised layout (zk_layout_init()) to Leaf's parent: forever becomes
 * {root}/forever and forever_prefix {root}/forever/{identity}-. The rest (leaf_temporary for
 * the identity lock and the peers, leaf_lease) stays: Leaf never reads them. zk_layout_find_own()
 * and zk_layout_worker_id() work on Leaf's children unchanged. LEAF_EINVAL when a path would not
 * fit.
 */
leaf_status_t zk_compat_layout(struct zk_layout *l);

/* Builds {root}/forever into buf; LEAF_EINVAL when it does not fit. */
leaf_status_t zk_compat_parent(const struct zk_layout *l, char *buf, size_t cap);

/*
 * Splits a child of Leaf's parent, "{ip}:{port}-{10 digits}", into ip, port and the sequence
 * (Leaf's worker ID). The port is the digits between the last ':' and the last '-'.
 * LEAF_EINVAL when malformed.
 */
leaf_status_t zk_compat_parse_child(const char *child, char *ip, size_t ip_len, int *port,
                                    int64_t *seq);

enum zk_compat_verdict {
    ZK_COMPAT_NATIVE,       /* no Leaf children, compat off: leafd's own leaf_forever */
    ZK_COMPAT_LEAF,         /* compat on: register under Leaf's parent (zk_compat_layout()) */
    ZK_COMPAT_REFUSE_LEAF,  /* Leaf children and compat off: exit 1 naming Leaf's parent */
    ZK_COMPAT_REFUSE_MIXED, /* compat on but leafd's leaf_forever has children too: the two
                               sequences overlap; exit 1 naming both parents */
};

/*
 * Decides at start, after listing both parents (a missing parent counts as 0 children).
 * compat: leafd.snowflake.leaf.compat.
 */
enum zk_compat_verdict zk_compat_decide(int leaf_children, int leafd_children, int compat);

/* The exit-1 line of a REFUSE verdict, naming the path(s) and leafd.snowflake.leaf.compat. */
size_t zk_compat_message(enum zk_compat_verdict v, const char *leaf_parent,
                         const char *leafd_parent, int leaf_children, char *buf, size_t cap);

/*
 * The time floor of a worker ID last reported by Leaf at leaf_timestamp_ms (ms, the data's
 * timestamp): Leaf may have issued up to its next report, so leaf_timestamp_ms +
 * ZK_COMPAT_REPORT_MS. -1 stays -1 (unknown).
 */
int64_t zk_compat_floor_ms(int64_t leaf_timestamp_ms);

#endif
