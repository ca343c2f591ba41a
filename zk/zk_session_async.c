/* The calls answered through the event queue (zk_session.h). */

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

static struct zk_op_ctx *op_ctx2(struct zk_sub *sub, int op, uint64_t arg, const char *path) {
    struct zk_op_ctx *c = calloc(1, sizeof(*c));
    if (c != NULL) {
        c->s = sub->s;
        c->sub = sub;
        c->gen = sub->s->gen;
        c->op = op;
        c->arg = arg;
        c->sent_mono_ms = clock_mono_ms();
        snprintf(c->path, sizeof(c->path), "%s", path);
        pthread_mutex_lock(&c->s->mu);
        c->next = c->s->inflight;
        if (c->next != NULL) {
            c->next->prev = c;
        }
        c->s->inflight = c;
        pthread_mutex_unlock(&c->s->mu);
    }
    return c;
}

/* Any thread: the call is over (its completion ran, or the library refused it). */
static void op_free(struct zk_op_ctx *c) {
    pthread_mutex_lock(&c->s->mu);
    if (c->prev != NULL) {
        c->prev->next = c->next;
    } else {
        c->s->inflight = c->next;
    }
    if (c->next != NULL) {
        c->next->prev = c->prev;
    }
    if (c->s->inflight == NULL) {
        pthread_cond_broadcast(&c->s->cv); /* drain_inflight */
    }
    pthread_mutex_unlock(&c->s->mu);
    free(c);
}

static struct zk_op_ctx *op_ctx(struct zk_sub *sub, int op, const char *path) {
    return op_ctx2(sub, op, 0, path);
}

static void op_done(const struct zk_op_ctx *c, int rc, const char *what,
                    const struct String_vector *names) {
    struct zk_event *ev = zk_session_op_event(c, rc, what);
    if (ev == NULL) {
        return;
    }
    if (ev->rc == LEAF_OK && names && zk_session_copy_names(names, &ev->names, &ev->nnames) != 0) {
        ev->rc = LEAF_ENOMEM;
        ev->result = ZK_RESULT_FAILED;
    }
    zk_session_push_event(c->s, ev);
}

/* Completions of the sequence calls: version, data or created path with the result. */
static void version_done(int rc, const struct Stat *stat, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    struct zk_event *ev = zk_session_op_event(c, rc, "zoo_aset/aexists");
    if (ev != NULL) {
        ev->version = rc == ZOK && stat != NULL ? stat->version : -1;
        ev->mtime = rc == ZOK && stat != NULL ? stat->mtime : 0;
        zk_session_push_event(c->s, ev);
    }
    op_free(c);
}

static void data_done(int rc, const char *value, int value_len, const struct Stat *stat,
                      const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    struct zk_event *ev = zk_session_op_event(c, rc, "zoo_aget");
    if (ev != NULL) {
        ev->version = rc == ZOK && stat != NULL ? stat->version : -1;
        ev->mtime = rc == ZOK && stat != NULL ? stat->mtime : 0;
        if (rc == ZOK && value != NULL && value_len > 0) {
            ev->data = malloc((size_t)value_len + 1);
            if (ev->data == NULL) {
                ev->rc = LEAF_ENOMEM;
                ev->result = ZK_RESULT_FAILED;
            } else {
                memcpy(ev->data, value, (size_t)value_len);
                ev->data[value_len] = '\0';
                ev->len = (size_t)value_len;
            }
        }
        zk_session_push_event(c->s, ev);
    }
    op_free(c);
}

static void created_done(int rc, const char *value, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    struct zk_event *ev = zk_session_op_event(c, rc, "zoo_acreate");
    if (ev != NULL) {
        if (rc == ZOK && value != NULL) {
            ev->data = strdup(value);
            ev->len = ev->data != NULL ? strlen(ev->data) : 0;
        }
        zk_session_push_event(c->s, ev);
    }
    op_free(c);
}

static void void_done(int rc, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    op_done(c, rc, "zoo_adelete", NULL);
    op_free(c);
}

static void stat_done(int rc, const struct Stat *stat, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    op_done(c, rc, "zoo_aset", NULL);
    op_free(c);
}

static void string_done(int rc, const char *value, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    op_done(c, rc, "zoo_acreate", NULL);
    op_free(c);
}

static void strings_done(int rc, const struct String_vector *strings, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    op_done(c, rc, "zoo_aget_children", strings);
    op_free(c);
}

/* A call the library refused to queue: report it like a completion would. */
static leaf_status_t async_refused(struct zk_op_ctx *c, int rc, const char *what) {
    if (rc == ZOK) {
        return LEAF_OK;
    }
    leaf_status_t st = zk_session_check(rc, what, c->path);
    op_free(c);
    return st;
}

leaf_status_t zk_session_aset(struct zk_sub *sub, int op, const char *path, const char *data,
                              size_t len) {
    struct zk_op_ctx *c = op_ctx(sub, op, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    return async_refused(c, zoo_aset(sub->s->zh, path, data, (int)len, -1, stat_done, c),
                         "zoo_aset");
}

leaf_status_t zk_session_acreate(struct zk_sub *sub, int op, const char *path, const char *data,
                                 size_t len, enum zk_mode mode) {
    struct zk_op_ctx *c = op_ctx(sub, op, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    int rc = zoo_acreate(sub->s->zh, path, data, (int)len, zk_session_acl_for(sub->s, path),
                         zk_session_mode_flags(mode), string_done, c);
    return async_refused(c, rc, "zoo_acreate");
}

static void owner_done(int rc, const struct Stat *stat, const void *data) {
    struct zk_op_ctx *c = (struct zk_op_ctx *)data;
    zk_session_op_expired(c->s, c->gen, rc);
    struct zk_event *ev = calloc(1, sizeof(*ev));
    if (ev != NULL) {
        *ev = (struct zk_event){.kind = ZK_EVENT_DONE, .gen = c->gen, .sub = c->sub, .op = c->op};
        ev->answered_sent_mono_ms = zk_session_op_answered(rc) ? c->sent_mono_ms : -1;
        ev->rc = rc == ZCLOSING ? LEAF_EUNAVAIL : zk_session_check(rc, "zoo_aexists", c->path);
        pthread_mutex_lock(&c->s->mu);
        ev->mine = rc == ZOK && stat != NULL && stat->ephemeralOwner == c->s->session_id;
        ev->owner = rc == ZOK && stat != NULL ? stat->ephemeralOwner : 0;
        ev->version = rc == ZOK && stat != NULL ? stat->version : -1;
        pthread_mutex_unlock(&c->s->mu);
        zk_session_push_event(c->s, ev);
    }
    op_free(c);
}

leaf_status_t zk_session_amine(struct zk_sub *sub, int op, const char *path) {
    struct zk_op_ctx *c = op_ctx(sub, op, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    return async_refused(c, zoo_aexists(sub->s->zh, path, 0, owner_done, c), "zoo_aexists");
}

leaf_status_t zk_session_achildren(struct zk_sub *sub, int op, const char *path) {
    struct zk_op_ctx *c = op_ctx(sub, op, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    return async_refused(c, zoo_aget_children(sub->s->zh, path, 0, strings_done, c),
                         "zoo_aget_children");
}

leaf_status_t zk_session_acreate2(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                                  const char *data, size_t len, enum zk_mode mode) {
    struct zk_op_ctx *c = op_ctx2(sub, op, arg, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    int rc = zoo_acreate(sub->s->zh, path, data, (int)len, zk_session_acl_for(sub->s, path),
                         zk_session_mode_flags(mode), created_done, c);
    return async_refused(c, rc, "zoo_acreate");
}

static leaf_status_t aget(struct zk_sub *sub, int op, uint64_t arg, const char *path, int watch) {
    struct zk_op_ctx *c = op_ctx2(sub, op, arg, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    int rc = watch ? zoo_awget(sub->s->zh, path, zk_session_sub_watcher, sub, data_done, c)
                   : zoo_aget(sub->s->zh, path, 0, data_done, c);
    return async_refused(c, rc, "zoo_aget");
}

leaf_status_t zk_session_aget(struct zk_sub *sub, int op, uint64_t arg, const char *path) {
    return aget(sub, op, arg, path, 0);
}

leaf_status_t zk_session_aget_watch(struct zk_sub *sub, int op, uint64_t arg, const char *path) {
    return aget(sub, op, arg, path, 1);
}

leaf_status_t zk_session_aset_version(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                                      const char *data, size_t len, int32_t version) {
    struct zk_op_ctx *c = op_ctx2(sub, op, arg, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    return async_refused(c, zoo_aset(sub->s->zh, path, data, (int)len, version, version_done, c),
                         "zoo_aset");
}

leaf_status_t zk_session_adelete(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                                 int32_t version) {
    struct zk_op_ctx *c = op_ctx2(sub, op, arg, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    return async_refused(c, zoo_adelete(sub->s->zh, path, version, void_done, c), "zoo_adelete");
}

leaf_status_t zk_session_aexists_watch(struct zk_sub *sub, int op, uint64_t arg, const char *path) {
    struct zk_op_ctx *c = op_ctx2(sub, op, arg, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    return async_refused(
        c, zoo_awexists(sub->s->zh, path, zk_session_sub_watcher, sub, version_done, c),
        "zoo_aexists");
}

static leaf_status_t achildren(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                               int watch) {
    struct zk_op_ctx *c = op_ctx2(sub, op, arg, path);
    if (c == NULL) {
        return LEAF_ENOMEM;
    }
    int rc =
        watch ? zoo_awget_children(sub->s->zh, path, zk_session_sub_watcher, sub, strings_done, c)
              : zoo_aget_children(sub->s->zh, path, 0, strings_done, c);
    return async_refused(c, rc, "zoo_aget_children");
}

leaf_status_t zk_session_achildren2(struct zk_sub *sub, int op, uint64_t arg, const char *path) {
    return achildren(sub, op, arg, path, 0);
}

leaf_status_t zk_session_achildren_watch(struct zk_sub *sub, int op, uint64_t arg,
                                         const char *path) {
    return achildren(sub, op, arg, path, 1);
}

int zk_session_negotiated_timeout_ms(struct zk_session *s) {
    zhandle_t *zh = zk_session_hold(s);
    int t = zh != NULL ? zoo_recv_timeout(zh) : 0;
    zk_session_release(s);
    return t;
}
