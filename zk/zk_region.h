#ifndef LEAF_ZK_REGION_H
#define LEAF_ZK_REGION_H

/*
 * Region claims (docs/regions.md, "Region claims"), the pure part: where a
 * claim lives in the registry ZooKeeper, whose it is, what a node does about
 * it at start, and the local copy of a claim confirmed earlier.
 *
 *   /leafd-regions/{leaf.name}                     PERSISTENT, data: count=<leafd.region.count>
 *   /leafd-regions/{leaf.name}/{leafd.region.id}   PERSISTENT, data: the region's name
 *   {leafd.data.dir}/{leaf.name}/region.properties region=<name>, id=<n>, count=<n>, confirmed=<ms>
 *
 * The count is recorded once, by the first region to claim, because every
 * region must use the same one: region 0 of 2 and region 1 of 3 would both
 * issue the segment ID 4.
 *
 * A claim is created once and never rewritten: the first region name to
 * create the node holds the ID (ZooKeeper's create is the fence: exactly one
 * create of a path succeeds). No libuv, ZooKeeper or file header; the I/O is
 * src/node/region/region_service.c's. Values only: any thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define ZK_REGION_ROOT "/leafd-regions"
#define ZK_REGION_NAME_MAX 64 /* leafd.region's room, NUL included */
#define ZK_REGION_CACHE_FILE "region.properties"

/* What the registry says of this node's region ID. */
enum zk_region_claim {
    ZK_REGION_UNKNOWN, /* not read: the registry is unreachable (or answered with an error) */
    ZK_REGION_OURS,    /* claimed under this node's region name (by it or an earlier start) */
    ZK_REGION_OTHER,   /* claimed under another region name */
    ZK_REGION_COUNT,   /* the registry records another leafd.region.count */
};

/* What the node does about it. */
enum zk_region_verdict {
    ZK_REGION_SERVE,  /* confirmed now, or confirmed earlier (cached) and the registry is away */
    ZK_REGION_WAIT,   /* neither: not ready until the registry confirms the claim */
    ZK_REGION_REFUSE, /* another region holds the ID, or the count differs: refuse to start (or
                       * stop serving) */
};

/* The local copy of a claim the registry confirmed. */
struct zk_region_cache {
    char name[ZK_REGION_NAME_MAX];
    int64_t id;
    int64_t count;
    int64_t confirmed_ms; /* wall clock when the registry last confirmed it */
};

/* /leafd-regions/{leaf_name} into buf (the parent of the claims); LEAF_EINVAL if too long. */
leaf_status_t zk_region_dir(char *buf, size_t cap, const char *leaf_name);

/* /leafd-regions/{leaf_name}/{id} into buf; LEAF_EINVAL if too long. */
leaf_status_t zk_region_path(char *buf, size_t cap, const char *leaf_name, int64_t id);

/* 1 when a claim's data (len bytes) is a region name as leafd.region allows: 1-63 of
 * [A-Za-z0-9._-]; what else a registry holds is never shown. */
int zk_region_name_ok(const char *s, size_t len);

/* A claim's data (len bytes, trailing white space ignored) read against this node's name. */
enum zk_region_claim zk_region_judge(const char *data, size_t len, const char *ours);

/*
 * The decision: the registry's answer first (ours: serve; another's, or
 * another count: refuse, whatever the cache says), and only when the registry
 * cannot be read, the cache: a copy naming this node's region, ID and count
 * serves, anything else waits. cache may be NULL (no file).
 */
enum zk_region_verdict zk_region_decide(enum zk_region_claim claim,
                                        const struct zk_region_cache *cache, const char *ours,
                                        int64_t id, int64_t count);

/* The count record's data ("count=<n>") into buf; returns its length, 0 if cap is too small. */
size_t zk_region_count_format(int64_t count, char *buf, size_t cap);

/* Reads a count record (len bytes): LEAF_OK and *count, or LEAF_EINVAL (empty or malformed). */
leaf_status_t zk_region_count_parse(const char *data, size_t len, int64_t *count);

/* The cache file's text into buf (NUL-terminated); returns its length, 0 if cap is too small. */
size_t zk_region_cache_format(const struct zk_region_cache *c, char *buf, size_t cap);

/* Parses the cache file's text: LEAF_OK, or LEAF_EINVAL when a key is missing or malformed. */
leaf_status_t zk_region_cache_parse(const char *text, size_t len, struct zk_region_cache *c);

/*
 * Homes (docs/regions.md, "Homes"): a sequence, keyed space or numbering is
 * issued by one region only, its home, fenced by a persistent znode in the
 * registry, /leafd-homes/{leaf.name}/{kind}:{name} (beside the claims' root, whose
 * children are region IDs only), holding the home
 * region's name, created once (ZooKeeper's create is the fence).
 */
#define ZK_REGION_HOMES_ROOT "/leafd-homes"
#define ZK_REGION_PEERS_MAX 16
#define ZK_REGION_PEER_ADDR 64 /* as a sequence primary's address (sequence/sequence_record.h) */

/* The kinds of a home, one row each: what the znode's name starts with. */
enum zk_region_kind { ZK_REGION_SEQUENCE, ZK_REGION_KEYED, ZK_REGION_NUMBERING, ZK_REGION_KINDS };

/* The kind's word ("sequence", "keyed", "numbering"). */
const char *zk_region_kind_name(enum zk_region_kind k);

/* /leafd-homes/{leaf_name} into buf: LEAF_OK, or LEAF_EINVAL when it does not fit. */
leaf_status_t zk_region_homes_dir(char *buf, size_t cap, const char *leaf_name);

/* A home's znode name "{kind}:{name}" (name: len bytes) into buf: LEAF_OK, or LEAF_EINVAL. */
leaf_status_t zk_region_home_child(char *buf, size_t cap, enum zk_region_kind k, const char *name,
                                   size_t len);

/* Reads a home's znode name back: LEAF_OK with *k and the name at *name (*len bytes, inside
 * child), or LEAF_EINVAL when it is no home. */
leaf_status_t zk_region_home_parse(const char *child, enum zk_region_kind *k, const char **name,
                                   size_t *len);

/* One other region as leafd.region.peers names it. */
struct zk_region_peer {
    char name[ZK_REGION_NAME_MAX];
    char http[ZK_REGION_PEER_ADDR]; /* host:port */
    char resp[ZK_REGION_PEER_ADDR]; /* host:port, "" when none is given */
};

/*
 * Parses leafd.region.peers, "name=host:port[/host:port][,...]" (white space
 * around entries ignored; empty: none): LEAF_OK with *n peers, or LEAF_EINVAL
 * with the reason in err (a malformed entry, a bad name, more than
 * ZK_REGION_PEERS_MAX, a name twice, or this node's own region ours).
 */
leaf_status_t zk_region_peers_parse(const char *text, const char *ours, struct zk_region_peer *out,
                                    int *n, char *err, size_t errlen);

#endif
