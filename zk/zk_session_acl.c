/* Closed coordination data: authentication and the ACLs of the znodes (zk_session.h). */

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "log.h"
#include "zk_acl.h"
#include "zk_session_state.h"

/* ---- closed coordination data (leafd.zk.auth; the rules are zk_acl.h's) -- */

static struct ACL acl_owner_read[2];
static struct ACL acl_owner_only[1];
static struct ACL_vector acl_vec_owner_read = {2, acl_owner_read};
static struct ACL_vector acl_vec_owner_only = {1, acl_owner_only};
static pthread_once_t acl_once = PTHREAD_ONCE_INIT;

static void acl_init(void) {
    acl_owner_read[0] = (struct ACL){ZOO_PERM_ALL, ZOO_AUTH_IDS};
    acl_owner_read[1] = (struct ACL){ZOO_PERM_READ, ZOO_ANYONE_ID_UNSAFE};
    acl_owner_only[0] = (struct ACL){ZOO_PERM_ALL, ZOO_AUTH_IDS};
}

/* The ACL of a znode at path in the closed stage. */
static struct ACL_vector *acl_closed_for(const char *path) {
    pthread_once(&acl_once, acl_init);
    return zk_acl_private(path) ? &acl_vec_owner_only : &acl_vec_owner_read;
}

/* The ACL a znode at path is created with: open until the trees are closed. */
struct ACL_vector *zk_session_acl_for(const struct zk_session *s, const char *path) {
    if (s->auth[0] == '\0' || !atomic_load(&s->acl_closed) || zk_acl_shared_parent(path)) {
        return &ZOO_OPEN_ACL_UNSAFE;
    }
    return acl_closed_for(path);
}

leaf_status_t zk_session_authenticate(struct zk_session *s, const char *auth) {
    if (auth == NULL || auth[0] == '\0') {
        return LEAF_OK;
    }
    if (strncmp(auth, "digest:", 7) != 0 || strlen(auth + 7) >= sizeof(s->auth) ||
        zk_acl_self_id(auth + 7, s->self_id, sizeof(s->self_id)) != LEAF_OK) {
        log_error("zk", "leafd.zk.auth: expected digest:<user>:<password>");
        return LEAF_EINVAL;
    }
    snprintf(s->auth, sizeof(s->auth), "%s", auth + 7);
    pthread_rwlock_rdlock(&s->zh_lock);
    if (s->zh != NULL) {
        zk_session_add_auth(s, s->zh);
    }
    pthread_rwlock_unlock(&s->zh_lock);
    return LEAF_OK;
}

void zk_session_acl_set_closed(struct zk_session *s, int closed) {
    atomic_store(&s->acl_closed, closed);
}

int zk_session_acl_is_closed(struct zk_session *s) {
    return atomic_load(&s->acl_closed);
}

#define ACL_MAX 32

/* path's ACL as plain entries (at most ACL_MAX); the ZooKeeper code, or ZOK. */
static int acl_read(zhandle_t *zh, const char *path, struct zk_acl_entry *e, int *n) {
    struct ACL_vector v = {0, NULL};
    struct Stat st;
    *n = 0;
    if (zh == NULL) {
        return ZCONNECTIONLOSS;
    }
    int rc = zoo_get_acl(zh, path, &v, &st);
    if (rc != ZOK) {
        return rc;
    }
    for (int i = 0; i < v.count && i < ACL_MAX; i++) {
        snprintf(e[i].scheme, sizeof(e[i].scheme), "%s", v.data[i].id.scheme);
        snprintf(e[i].id, sizeof(e[i].id), "%s", v.data[i].id.id);
        e[i].perms = v.data[i].perms;
        *n = i + 1;
    }
    deallocate_ACL_vector(&v);
    return ZOK;
}

/* The refusal of a znode leafd may not trust nor change, in why. */
static long acl_refuse(const char *path, const struct zk_acl_entry *e, int n, int rc, char *why,
                       size_t cap) {
    char acl[512];
    snprintf(why, cap,
             "znode %s (ACL %s) is not leafd's: %s; leafd trusts no record another identity may "
             "write. Delete it as its owner, or setAcl it to leafd.zk.auth's identity, then start "
             "again%s",
             path, n > 0 ? zk_acl_format(e, n, acl, sizeof(acl)) : "unreadable", zerror(rc),
             rc == ZNOAUTH ? " (a node of a cluster closed with other credentials: set "
                             "leafd.zk.auth to that cluster's digest:<user>:<password>)"
                           : "");
    return -2;
}

static long acl_walk(struct zk_session *s, zhandle_t *zh, const char *path, int depth, int stage,
                     char *why, size_t cap) {
    struct zk_acl_entry e[ACL_MAX];
    int n = 0;
    int rc = acl_read(zh, path, e, &n);
    if (rc == ZNONODE) {
        return 0;
    }
    if (rc == ZNOAUTH) {
        return acl_refuse(path, e, 0, rc, why, cap);
    }
    if (rc != ZOK) {
        log_warn("zk", "zoo_get_acl(%s) failed: %s", path, zerror(rc));
        return -1;
    }
    enum zk_acl_verdict v = zk_acl_judge(e, n, s->self_id, stage, zk_acl_private(path));
    long total = 0;
    struct String_vector kids = {0, NULL};
    rc = depth < 8 ? zoo_get_children(zh, path, 0, &kids) : ZOK;
    if (rc == ZNOAUTH) {
        return acl_refuse(path, e, n, rc, why, cap);
    }
    for (int i = 0; rc == ZOK && i < kids.count && total >= 0; i++) {
        char child[1024];
        int w = snprintf(child, sizeof(child), "%s/%s", path, kids.data[i]);
        if (w < 0 || (size_t)w >= sizeof(child)) {
            continue; /* deeper than any path leafd writes */
        }
        long k = acl_walk(s, zh, child, depth + 1, stage, why, cap);
        total = k < 0 ? k : total + k;
    }
    deallocate_String_vector(&kids);
    /* A parent after its children: a failure halfway leaves the root open, so
     * the next walk closes the rest. */
    if (total >= 0 && v == ZK_ACL_OPEN && stage == ZK_ACL_STAGE_CLOSED &&
        zk_acl_user_record(path) && zk_acl_world_writes(e, n)) {
        char acl[512];
        snprintf(why, cap,
                 "user record %s could be written by anyone (ACL %s) until now: leafd does not "
                 "trust a credential it cannot prove it wrote. Delete the znode, then add the "
                 "user again (leafctl user add)",
                 path, zk_acl_format(e, n, acl, sizeof(acl)));
        return -2;
    }
    if (total >= 0 && v != ZK_ACL_KEEP) {
        rc =
            zoo_set_acl(zh, path, -1,
                        stage == ZK_ACL_STAGE_CLOSED ? acl_closed_for(path) : &ZOO_OPEN_ACL_UNSAFE);
        if (rc == ZNOAUTH) {
            return acl_refuse(path, e, n, rc, why, cap);
        }
        if (rc == ZINVALIDACL) {
            /* The server knows no credentials of this session (an ACL of the "auth" scheme
             * needs them), though they were added when the handle was made: send them again,
             * so the next walk can close (seen once, under ThreadSanitizer). */
            log_warn("zk",
                     "zoo_set_acl(%s) failed: %s: ZooKeeper holds no credentials for this "
                     "session; sending leafd.zk.auth again",
                     path, zerror(rc));
            zk_session_add_auth(s, zh);
            return -1;
        }
        if (rc != ZOK && rc != ZNONODE) {
            log_warn("zk", "zoo_set_acl(%s) failed: %s", path, zerror(rc));
            return -1;
        }
        total += rc == ZOK;
    }
    return total;
}

long zk_session_acl_walk(struct zk_session *s, const char *root, int stage, char *why, size_t cap) {
    if (s->auth[0] == '\0') {
        return 0;
    }
    long n = acl_walk(s, zk_session_hold(s), root, 0, stage, why, cap);
    zk_session_release(s);
    return n;
}

int zk_session_acl_root_closed(struct zk_session *s, const char *root) {
    struct zk_acl_entry e[ACL_MAX];
    int n = 0;
    int rc = acl_read(zk_session_hold(s), root, e, &n);
    zk_session_release(s);
    if (rc != ZOK) {
        return rc == ZNONODE ? 0 : -1;
    }
    return zk_acl_is_closed(e, n, s->self_id);
}

int zk_session_acl_world_writes(struct zk_session *s, const char *root, char *acl, size_t cap) {
    struct zk_acl_entry e[ACL_MAX];
    int n = 0;
    int rc = acl_read(zk_session_hold(s), root, e, &n);
    zk_session_release(s);
    if (rc != ZOK) {
        return rc == ZNONODE ? 1 : -1;
    }
    zk_acl_format(e, n, acl, cap);
    return zk_acl_world_writes(e, n);
}

long zk_session_acl_parent(struct zk_session *s, const char *parent, const char *root, char *why,
                           size_t cap) {
    struct zk_acl_entry e[ACL_MAX];
    int n = 0;
    zhandle_t *zh = zk_session_hold(s);
    long out = 0;
    int rc = acl_read(zh, parent, e, &n);
    if (rc == ZOK && s->auth[0] != '\0' && zk_acl_is_closed(e, n, s->self_id)) {
        /* Closed by an older leafd with these credentials: give it back to everyone. */
        rc = zoo_set_acl(zh, parent, -1, &ZOO_OPEN_ACL_UNSAFE);
        out = rc == ZOK ? 1 : 0;
    } else if (rc == ZOK && !zk_acl_may_create(e, n, s->self_id)) {
        if (zoo_exists(zh, root, 0, NULL) == ZNONODE) {
            char acl[512];
            snprintf(why, cap,
                     "cannot create %s: the shared parent %s (ACL %s) lets only its owner create "
                     "children (another cluster's credentials closed it; leafd before 1.0 did "
                     "that). As that owner run `setAcl %s world:anyone:cdrwa` (its own cluster "
                     "keeps its subtree closed), or give this cluster a chroot in "
                     "leaf.snowflake.zk.address",
                     root, parent, zk_acl_format(e, n, acl, sizeof(acl)), parent);
            out = -2;
        }
    }
    zk_session_release(s);
    return out;
}
