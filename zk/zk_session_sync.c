/* The blocking calls, for start-up and the tools (zk_session.h). */

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

leaf_status_t zk_session_create(struct zk_session *s, const char *path, const char *data,
                                size_t len, enum zk_mode mode, char *created, size_t cap) {
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL
                 ? ZCONNECTIONLOSS
                 : zoo_create(zh, path, data, data ? (int)len : -1, zk_session_acl_for(s, path),
                              zk_session_mode_flags(mode), created, (int)cap);
    zk_session_release(s);
    return zk_session_check(rc, "zoo_create", path);
}

leaf_status_t zk_session_get(struct zk_session *s, const char *path, char *buf, size_t cap,
                             size_t *len) {
    int n = (int)cap;
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_get(zh, path, 0, buf, &n, NULL);
    zk_session_release(s);
    *len = rc == ZOK && n > 0 ? (size_t)n : 0;
    return zk_session_check(rc, "zoo_get", path);
}

leaf_status_t zk_session_set_version(struct zk_session *s, const char *path, const char *data,
                                     size_t len, int32_t version) {
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_set(zh, path, data, (int)len, version);
    zk_session_release(s);
    return zk_session_check(rc, "zoo_set", path);
}

leaf_status_t zk_session_set(struct zk_session *s, const char *path, const char *data, size_t len) {
    return zk_session_set_version(s, path, data, len, -1);
}

leaf_status_t zk_session_delete(struct zk_session *s, const char *path, int32_t version) {
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_delete(zh, path, version);
    zk_session_release(s);
    return zk_session_check(rc, "zoo_delete", path);
}

static void stat_copy(const struct Stat *in, struct zk_stat *out) {
    *out = (struct zk_stat){in->ephemeralOwner, in->version, in->mtime, in->ctime};
}

leaf_status_t zk_session_stat(struct zk_session *s, const char *path, struct zk_stat *st) {
    struct Stat raw;
    memset(&raw, 0, sizeof(raw));
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_exists(zh, path, 0, &raw);
    zk_session_release(s);
    stat_copy(&raw, st);
    return zk_session_check(rc, "zoo_exists", path);
}

leaf_status_t zk_session_get_stat(struct zk_session *s, const char *path, char *buf, size_t cap,
                                  size_t *len, struct zk_stat *st) {
    struct Stat raw;
    memset(&raw, 0, sizeof(raw));
    int n = (int)cap;
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_get(zh, path, 0, buf, &n, &raw);
    zk_session_release(s);
    *len = rc == ZOK && n > 0 ? (size_t)n : 0;
    stat_copy(&raw, st);
    return zk_session_check(rc, "zoo_get", path);
}

leaf_status_t zk_session_set_stat(struct zk_session *s, const char *path, const char *data,
                                  size_t len, int32_t version, struct zk_stat *st) {
    struct Stat raw;
    memset(&raw, 0, sizeof(raw));
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_set2(zh, path, data, (int)len, version, &raw);
    zk_session_release(s);
    stat_copy(&raw, st);
    return zk_session_check(rc, "zoo_set", path);
}

leaf_status_t zk_session_create_stat(struct zk_session *s, const char *path, const char *data,
                                     size_t len, enum zk_mode mode, struct zk_stat *st) {
    struct Stat raw;
    memset(&raw, 0, sizeof(raw));
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL
                 ? ZCONNECTIONLOSS
                 : zoo_create2(zh, path, data, data ? (int)len : -1, zk_session_acl_for(s, path),
                               zk_session_mode_flags(mode), NULL, 0, &raw);
    zk_session_release(s);
    stat_copy(&raw, st);
    return zk_session_check(rc, "zoo_create", path);
}

leaf_status_t zk_session_children(struct zk_session *s, const char *path, char ***names, int *n) {
    struct String_vector v = {0, NULL};
    *names = NULL;
    *n = 0;
    zhandle_t *zh = zk_session_hold(s);
    int rc = zh == NULL ? ZCONNECTIONLOSS : zoo_get_children(zh, path, 0, &v);
    zk_session_release(s);
    leaf_status_t st = zk_session_check(rc, "zoo_get_children", path);
    if (st == LEAF_OK && zk_session_copy_names(&v, names, n) != 0) {
        st = LEAF_ENOMEM;
    }
    deallocate_String_vector(&v);
    return st;
}
