#ifndef LEAF_ZK_SESSION_STATE_H
#define LEAF_ZK_SESSION_STATE_H

/*
 * The ZooKeeper session's private half, shared by its files and by nothing outside zk/:
 * zk_session.c (the handle, its watcher, the event queue and dispatch), zk_session_acl.c
 * (closed coordination data: authentication and the ACLs), zk_session_sync.c (the blocking
 * calls) and zk_session_async.c (the calls answered through the event queue). zk_session.h
 * says how the session works and which thread may call what.
 */
#include <stddef.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "status.h"
#include "zk_session.h"

/*
 * Identifies a handle to its watcher (the handle's context). Made by the owner thread with the
 * handle; the client library's threads only read it.
 */
struct zk_handle_ctx {
    struct zk_session *s;
    unsigned gen;
};

/*
 * One asynchronous call in flight: made by the owner thread when it sends the call, freed by its
 * completion on the client library's completion thread.
 */
struct zk_op_ctx {
    struct zk_session *s;
    struct zk_sub *sub;
    unsigned gen;
    int op;
    uint64_t arg;
    int64_t sent_mono_ms;          /* read before the request is queued */
    char path[64];                 /* for messages (may be cut short) */
    struct zk_op_ctx *prev, *next; /* in s->inflight, under s->mu */
};

/* zk_session.c */
int zk_session_op_answered(int rc);
int zk_session_mode_flags(enum zk_mode m);
leaf_status_t zk_session_check(int rc, const char *op, const char *path);
void zk_session_push_event(struct zk_session *s, struct zk_event *ev);
void zk_session_sub_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);
int zk_session_copy_names(const struct String_vector *v, char ***names, int *n);
zhandle_t *zk_session_hold(struct zk_session *s);
void zk_session_release(struct zk_session *s);
void zk_session_add_auth(struct zk_session *s, zhandle_t *zh);
void zk_session_op_expired(struct zk_session *s, unsigned gen, int rc);
struct zk_event *zk_session_op_event(const struct zk_op_ctx *c, int rc, const char *what);

/* zk_session_acl.c */
struct ACL_vector *zk_session_acl_for(const struct zk_session *s, const char *path);

#endif
