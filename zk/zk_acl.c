/*
 * The ACL rules of a cluster's coordination data: see zk_acl.h.
 */
#include "zk_acl.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

leaf_status_t zk_acl_self_id(const char *auth, char *id, size_t cap) {
    const char *colon = auth != NULL ? strchr(auth, ':') : NULL;
    if (colon == NULL || colon == auth) {
        return LEAF_EINVAL;
    }
    unsigned char sha[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)auth, strlen(auth), sha);
    unsigned char b64[4 * ((SHA_DIGEST_LENGTH + 2) / 3) + 1];
    EVP_EncodeBlock(b64, sha, SHA_DIGEST_LENGTH);
    int n = snprintf(id, cap, "%.*s:%s", (int)(colon - auth), auth, (const char *)b64);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

int zk_acl_shared_parent(const char *path) {
    return strcmp(path, "/") == 0 || strcmp(path, "/snowflake") == 0 || strcmp(path, "/leafd") == 0;
}

int zk_acl_private(const char *path) {
    const char *rest = strncmp(path, "/leafd/", 7) == 0 ? strchr(path + 7, '/') : NULL;
    return rest != NULL && strncmp(rest, "/users", 6) == 0 && (rest[6] == '\0' || rest[6] == '/');
}

int zk_acl_user_record(const char *path) {
    const char *rest = strncmp(path, "/leafd/", 7) == 0 ? strchr(path + 7, '/') : NULL;
    return rest != NULL && strncmp(rest, "/users/", 7) == 0 && rest[7] != '\0' &&
           strchr(rest + 7, '/') == NULL;
}

static int is_self(const struct zk_acl_entry *e, const char *self) {
    return self != NULL && strcmp(e->scheme, "digest") == 0 && strcmp(e->id, self) == 0;
}

/* world:anyone and ip entries: open to whoever reaches the ensemble, not an owner. */
static int is_anyone(const struct zk_acl_entry *e) {
    return strcmp(e->scheme, "world") == 0 || strcmp(e->scheme, "ip") == 0;
}

enum zk_acl_verdict zk_acl_judge(const struct zk_acl_entry *e, int n, const char *self, int stage,
                                 int private_node) {
    int open = 0, self_all = 0, world_all = 0;
    for (int i = 0; i < n; i++) {
        if (is_self(&e[i], self)) {
            self_all |= (e[i].perms & ZK_ACL_ALL) == ZK_ACL_ALL;
            continue;
        }
        if ((e[i].perms & ~ZK_ACL_READ) != 0 && !is_anyone(&e[i])) {
            return ZK_ACL_FOREIGN; /* someone else owns it: never trusted */
        }
        if ((e[i].perms & ~ZK_ACL_READ) != 0 || (private_node && e[i].perms != 0)) {
            open = 1;
        }
        world_all |= strcmp(e[i].scheme, "world") == 0 && (e[i].perms & ZK_ACL_ALL) == ZK_ACL_ALL;
    }
    if (stage == ZK_ACL_STAGE_REOPEN) {
        return world_all ? ZK_ACL_KEEP : ZK_ACL_OPEN;
    }
    if (stage != ZK_ACL_STAGE_CLOSED) {
        return ZK_ACL_KEEP; /* the open stage leaves open and closed znodes as they are */
    }
    return open || !self_all ? ZK_ACL_OPEN : ZK_ACL_KEEP;
}

int zk_acl_may_create(const struct zk_acl_entry *e, int n, const char *self) {
    for (int i = 0; i < n; i++) {
        int who = strcmp(e[i].scheme, "world") == 0 || is_self(&e[i], self);
        if (who && (e[i].perms & ZK_ACL_CREATE) != 0) {
            return 1;
        }
    }
    return 0;
}

int zk_acl_is_closed(const struct zk_acl_entry *e, int n, const char *self) {
    return n > 0 && zk_acl_judge(e, n, self, 1, 0) == ZK_ACL_KEEP;
}

int zk_acl_world_writes(const struct zk_acl_entry *e, int n) {
    for (int i = 0; i < n; i++) {
        if (strcmp(e[i].scheme, "world") == 0 && (e[i].perms & ZK_ACL_WRITE) != 0) {
            return 1;
        }
    }
    return 0;
}

const char *zk_acl_format(const struct zk_acl_entry *e, int n, char *buf, size_t cap) {
    static const char letters[] = "rwcda";
    size_t pos = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && pos < cap; i++) {
        char perms[6];
        int k = 0;
        for (int b = 0; b < 5; b++) {
            if (e[i].perms & (1 << b)) {
                perms[k++] = letters[b];
            }
        }
        perms[k] = '\0';
        int w =
            snprintf(buf + pos, cap - pos, "%s%s:%s=%s", i ? "," : "", e[i].scheme, e[i].id, perms);
        pos += w > 0 ? (size_t)w : 0;
    }
    return buf;
}
