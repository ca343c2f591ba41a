#ifndef LEAF_ZK_ACL_H
#define LEAF_ZK_ACL_H

/*
 * The ACL rules of a cluster's coordination data (docs/reference/zookeeper.md,
 * "ACLs"), pure: no ZooKeeper header, so they are unit-tested with plain
 * arrays. zk_session_acl.c reads and writes the ACLs; this file decides.
 *
 * A cluster owns /snowflake/{leaf.name} and /leafd/{leaf.name} and nothing
 * above them: the shared parents stay creatable by anyone, so that other
 * clusters (leafd's or Meituan Leaf's) on the same ensemble can register.
 *
 * With leafd.zk.auth the trees pass through two stages:
 *   open    the node authenticates, but what it creates stays open, so that
 *           nodes of an older release (or without the credentials) keep
 *           working while a rollout is under way;
 *   closed  every znode of the trees grants all rights to leafd's identity
 *           and read to anyone (the users' tree: nothing to anyone else).
 * In both stages a znode that grants write or admin to another non-world
 * identity (a foreign digest, sasl, x509, ...) is never trusted: leafd resets
 * its ACL when it may, and refuses to start, naming the znode, when it may not.
 */
#include <stddef.h>

#include "status.h"

/* ZooKeeper's permission bits (zookeeper.h's ZOO_PERM_*). */
#define ZK_ACL_READ 1
#define ZK_ACL_WRITE 2
#define ZK_ACL_CREATE 4
#define ZK_ACL_DELETE 8
#define ZK_ACL_ADMIN 16
#define ZK_ACL_ALL 31

struct zk_acl_entry {
    char scheme[16]; /* "world", "ip", "digest", "sasl", "x509", ... */
    char id[160];    /* "anyone", an address, "user:base64(sha1(user:password))" */
    int perms;
};

/*
 * leafd's own identity as ZooKeeper writes it in an ACL: for "user:password"
 * the digest id "user:base64(sha1(user:password))". LEAF_EINVAL when auth has
 * no ':' or the id does not fit.
 */
leaf_status_t zk_acl_self_id(const char *auth, char *id, size_t cap);

/* 1 for a shared parent that no cluster owns: "/", "/snowflake", "/leafd". */
int zk_acl_shared_parent(const char *path);

/* 1 for the users' records: /leafd/{name}/users and below (unreadable to others when closed). */
int zk_acl_private(const char *path);

/* The stages (a walk's target); REOPEN is the operator's way back to open trees. */
enum zk_acl_stage { ZK_ACL_STAGE_OPEN = 0, ZK_ACL_STAGE_CLOSED = 1, ZK_ACL_STAGE_REOPEN = 2 };

/*
 * 1 for one user's record (/leafd/{name}/users/{user}): a record that anyone
 * could write when the trees close is refused, not closed, since its content
 * may be planted (an admin whose secret the planter knows).
 */
int zk_acl_user_record(const char *path);

/* What a znode's ACL needs in a stage. */
enum zk_acl_verdict {
    ZK_ACL_KEEP = 0, /* as it should be */
    ZK_ACL_OPEN,     /* open to anyone: to be closed in the closed stage */
    ZK_ACL_FOREIGN,  /* another identity may write or administer it: reset, or refuse */
};

/*
 * The verdict on a znode of the cluster's trees whose ACL is e[0..n): self is
 * leafd's identity (zk_acl_self_id), stage an enum zk_acl_stage. OPEN keeps
 * open and closed znodes alike (the gate turns closing on, never off);
 * REOPEN wants world:anyone with all rights.
 */
enum zk_acl_verdict zk_acl_judge(const struct zk_acl_entry *e, int n, const char *self, int stage,
                                 int private_node);

/*
 * 1 when the ACL lets leafd (self, or anyone) create children: a shared
 * parent that another cluster's credentials closed (leafd before 1.0 did
 * that) fails this.
 */
int zk_acl_may_create(const struct zk_acl_entry *e, int n, const char *self);

/* 1 when the ACL is exactly leafd's closed one (all to self, at most read to world). */
int zk_acl_is_closed(const struct zk_acl_entry *e, int n, const char *self);

/* 1 when anyone (world:anyone) may write the znode's data. */
int zk_acl_world_writes(const struct zk_acl_entry *e, int n);

/* "digest:u:h=cdrwa,world:anyone=r" into buf (cut to cap); returns buf. */
const char *zk_acl_format(const struct zk_acl_entry *e, int n, char *buf, size_t cap);

#endif
