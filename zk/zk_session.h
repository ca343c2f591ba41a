#ifndef LEAF_ZK_SESSION_H
#define LEAF_ZK_SESSION_H

/*
 * The process's one ZooKeeper session, wrapping the multi-threaded C client
 * so that no other file includes zookeeper.h.
 *
 * One session, many subscribers (as libuv serves many uv_async_t from one
 * eventfd): each service that uses ZooKeeper registers a struct zk_sub
 * with zk_session_subscribe() and makes its asynchronous calls through it.
 * A result or a watch comes back to that subscriber only, with the
 * subscriber's own operation tag, so tags of two services cannot collide.
 * A state change (connected, connection lost, expired) goes to every
 * subscriber.
 *
 * Threads: the client runs its own I/O and completion threads; watchers and
 * completions run there. They never touch the owner's state: each result is
 * pushed as a struct zk_event onto a mutex-protected queue and the owner is
 * woken through the notify function (the daemon passes one that calls
 * uv_async_send). The owner (the control thread) calls zk_session_dispatch(),
 * which is the one place that drops the events of a replaced handle and the
 * one reconnect path: an expired handle is dead, so after every subscriber
 * has seen ZK_STATE_EXPIRED the session closes it and starts a new one (a new
 * generation). The owner opens and closes the session.
 *
 * The synchronous calls (zk_session_create/get/set/children/delete) block
 * the calling thread until ZooKeeper answers: the control thread uses them
 * at start-up and shutdown only, before and after the event loops run; the
 * /cluster survey's own thread uses them at any time. A read-write lock
 * keeps the handle alive under them while the owner replaces or closes it.
 *
 * The library's own log lines go through src/base/log.h (component "zookeeper").
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

enum zk_state {
    ZK_STATE_CONNECTING = 0, /* not connected (yet or any more); the client retries */
    ZK_STATE_CONNECTED,
    ZK_STATE_EXPIRED, /* the session is dead: reopen */
    ZK_STATE_CLOSED,
};

const char *zk_state_name(int state);

enum zk_mode {
    ZK_MODE_PERSISTENT,
    ZK_MODE_EPHEMERAL,
    ZK_MODE_PERSISTENT_SEQUENTIAL,
    ZK_MODE_EPHEMERAL_SEQUENTIAL,
};

/* ZK_EVENT_WATCH: a watch set by zk_session_aexists_watch() fired for path (in data). */
enum zk_event_kind { ZK_EVENT_STATE, ZK_EVENT_DONE, ZK_EVENT_WATCH };

/*
 * The outcome of an asynchronous call, finer than rc where a caller must
 * tell the cases apart: UNKNOWN means the request may or may not have been
 * applied (connection loss, timeout, session expiry or close).
 */
enum zk_result {
    ZK_RESULT_OK = 0,
    ZK_RESULT_BADVERSION,
    ZK_RESULT_NONODE,
    ZK_RESULT_EXISTS,
    ZK_RESULT_UNKNOWN,
    ZK_RESULT_NOAUTH, /* ZooKeeper refuses this session the write (an ACL: leafd.zk.auth) */
    ZK_RESULT_FAILED,
};

struct zk_sub;

/* One result handed from a ZooKeeper thread to the owner; the owner frees it. */
struct zk_event {
    struct zk_event *next;
    enum zk_event_kind kind;
    struct zk_sub *sub; /* DONE and WATCH: the subscriber it is for; STATE: NULL (everyone
                         * active) or the one activated (its current state) */
    unsigned gen;       /* handle generation that produced it */
    int state;          /* ZK_EVENT_STATE: the new enum zk_state */
    int op;             /* ZK_EVENT_DONE: the caller's tag */
    leaf_status_t rc;   /* ZK_EVENT_DONE: LEAF_OK, LEAF_EEXIST, LEAF_ENOTFOUND, LEAF_EUNAVAIL... */
    char **names;       /* ZK_EVENT_DONE of zk_session_achildren(): the children */
    int nnames;
    int mine;                      /* ZK_EVENT_DONE of zk_session_amine(): 1 when the node is an
                                    * ephemeral owned by this session */
    int64_t owner;                 /* the same: the node's ephemeralOwner (0: persistent or none) */
    enum zk_result result;         /* ZK_EVENT_DONE */
    uint64_t arg;                  /* ZK_EVENT_DONE: the caller's second tag */
    int32_t version;               /* ZK_EVENT_DONE of aget/aset_version/aexists/amine: the node's
                                    * version */
    int64_t mtime;                 /* the same: the server's time of the node's last change (ms) */
    int64_t answered_sent_mono_ms; /* ZK_EVENT_DONE: when the request was sent (monotonic ms,
                                    * read before it was queued) if the server answered it
                                    * (OK or a refusal), else -1 (connection loss, expiry) */
    char *data;                    /* aget: the data; acreate: the created path; WATCH: the path */
    size_t len;
};

typedef void (*zk_notify_fn)(void *arg);

#define ZK_MAX_SUBS 8

/*
 * A service's registration on the session. The service owns and embeds it;
 * it lives as long as the session. on_event runs on the owner thread for
 * each result and watch of this subscriber and for every state change;
 * on_idle (may be NULL) once after each batch of events, whether or not
 * one was this subscriber's. The event belongs to the session, which frees
 * it after the call: a subscriber may take ev->names or ev->data over by
 * setting the field to NULL (a state event is shared: take nothing).
 */
struct zk_sub {
    const char *name; /* for log lines: "snowflake", "sequence", "users" */
    void (*on_event)(void *arg, struct zk_event *ev);
    void (*on_idle)(void *arg);
    void *arg;
    struct zk_session *s; /* set by zk_session_subscribe */
    int active;           /* events are delivered (zk_session_activate) */
};

/* A session's identity, as another process adopts it (an in-place upgrade, docs/UPGRADING.md). */
struct zk_client_id {
    int64_t id;
    char passwd[16];
};

struct zk_op_ctx;

struct zk_session {
    /* Owner (control thread) only. */
    void *hctx;
    struct zk_client_id adopt; /* the first handle resumes this session (adopt.id != 0) */
    char hosts[512];
    int timeout_ms;
    unsigned gen; /* written by the owner under mu; ZooKeeper threads read it under mu */
    zk_notify_fn notify;
    void *notify_arg;
    struct zk_sub *subs[ZK_MAX_SUBS];
    int nsubs;
    char auth[256];         /* digest credentials "user:password" (leafd.zk.auth); "" = none */
    char self_id[160];      /* that identity as an ACL names it (zk_acl_self_id) */
    _Atomic int acl_closed; /* the trees' stage (zk_acl.h); any thread */

    /* The handle: replaced and closed by the owner under the write lock;
     * every call on it holds the read lock (other threads' synchronous
     * calls may run while the owner wants to replace it). */
    pthread_rwlock_t zh_lock;
    void *zh; /* zhandle_t */

    /* Owner writes, any thread reads (the metrics). */
    _Atomic long long connects;    /* times a session was (re)established */
    _Atomic long long expirations; /* sessions that expired */

    /* Guarded by mu; written by ZooKeeper threads, read by the owner. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;      /* latest enum zk_state */
    int notify_off; /* set by zk_session_close: no more wake-ups */
    int64_t session_id;
    struct zk_event *head, *tail;
    struct zk_op_ctx *inflight; /* asynchronous calls not yet completed (op_ctx2, op_free) */
};

/*
 * Like zk_session_open, but the first handle resumes the live session `adopt`
 * (another process's, handed over by an in-place upgrade): its ephemeral nodes
 * stay. A later expiry opens a new session as usual. adopt NULL: a new session.
 */
leaf_status_t zk_session_open_adopt(struct zk_session *s, const char *hosts, int timeout_ms,
                                    zk_notify_fn notify, void *notify_arg,
                                    const struct zk_client_id *adopt);

/* Owner thread: the current session's id and password (LEAF_EUNAVAIL when none yet). */
leaf_status_t zk_session_client_id(struct zk_session *s, struct zk_client_id *out);

/* Starts a session (connection happens in the background). */
leaf_status_t zk_session_open(struct zk_session *s, const char *hosts, int timeout_ms,
                              zk_notify_fn notify, void *notify_arg);

/*
 * Closed coordination data (docs/SECURITY.md): before zk_session_open's
 * connection is used, `auth` ("digest:user:password", leafd.zk.auth)
 * authenticates this session and every later one, and every znode created
 * from now on gets an ACL granting all rights to that identity and read to
 * world:anyone, except below a "/users" node of the cluster's /leafd tree:
 * no world access at all. Without it znodes are created open, as before.
 */
leaf_status_t zk_session_authenticate(struct zk_session *s, const char *auth);

/*
 * The stage of the cluster's trees (zk_acl.h): 0 open (what this session
 * creates is open), 1 closed. Set by node_zk.c from the root's ACL; any thread.
 */
void zk_session_acl_set_closed(struct zk_session *s, int closed);
int zk_session_acl_is_closed(struct zk_session *s);

/*
 * Synchronous, any thread but the owner's loop (it blocks): walks root and
 * everything below it (children before parents) and sets each znode's ACL as
 * the stage (enum zk_acl_stage) wants it (zk_acl_judge): closed, or reopened. Returns how many ACLs
 * it set; -1 when ZooKeeper failed (logged; try again later); -2 when a znode is not leafd's and
 * leafd may not change it (why says which and what to do). Without leafd.zk.auth: 0.
 */
long zk_session_acl_walk(struct zk_session *s, const char *root, int stage, char *why, size_t cap);

/* 1 when root exists with leafd's closed ACL, 0 when not (or absent), -1 on failure. */
int zk_session_acl_root_closed(struct zk_session *s, const char *root);

/* 1 when anyone may write root (or it is absent), 0 when not (its ACL in acl), -1 on failure. */
int zk_session_acl_world_writes(struct zk_session *s, const char *root, char *acl, size_t cap);

/*
 * The shared parent of root (/snowflake or /leafd) as zk_acl.h wants it:
 * reopened when an older leafd closed it with these credentials (returns 1);
 * -2 with why when root is missing and the parent lets this identity create
 * nothing (another cluster closed it); 0 otherwise.
 */
long zk_session_acl_parent(struct zk_session *s, const char *parent, const char *root, char *why,
                           size_t cap);

/* Owner thread: registers sub (at create); nothing reaches it before it is activated. */
leaf_status_t zk_session_subscribe(struct zk_session *s, struct zk_sub *sub);

/*
 * Owner thread, when the service starts using the session: from now on its
 * events are delivered, beginning with the session's current state if it is
 * connected already (another service's start may have dispatched that
 * event before). A service may thus see CONNECTED twice: its handling of it
 * must be idempotent.
 */
void zk_session_activate(struct zk_sub *sub);

/*
 * Owner thread, when woken: hands every queued event to its subscriber
 * (state changes to all), drops those of a replaced handle, replaces an
 * expired handle, then calls every on_idle.
 */
void zk_session_dispatch(struct zk_session *s);

/*
 * Owner thread: blocks until an event is queued for zk_session_dispatch (LEAF_OK) or timeout_ms
 * passed (LEAF_EAGAIN). For a stop that must see the answers of its own asynchronous requests:
 * a synchronous call sent after them proves that they were applied (one session's requests are
 * applied in order), not that their answers are queued, since the C client hands a synchronous
 * answer back on its I/O thread at once and the asynchronous ones through its completion thread.
 */
leaf_status_t zk_session_wait_event(struct zk_session *s, int timeout_ms);

/* Blocks until connected (LEAF_OK), expired or timeout_ms passed (LEAF_EUNAVAIL). */
leaf_status_t zk_session_wait_connected(struct zk_session *s, int timeout_ms);

/* The latest state as the ZooKeeper threads reported it. */
int zk_session_state(struct zk_session *s);

/* The server's id of the current session (0 before the first connection). */
int64_t zk_session_id(struct zk_session *s);

/* Closes the session (ephemeral nodes vanish at once) and frees queued events. */
void zk_session_close(struct zk_session *s);

/* Synchronous, start-up only. created/cap may be NULL/0. */
leaf_status_t zk_session_create(struct zk_session *s, const char *path, const char *data,
                                size_t len, enum zk_mode mode, char *created, size_t cap);
leaf_status_t zk_session_get(struct zk_session *s, const char *path, char *buf, size_t cap,
                             size_t *len);
leaf_status_t zk_session_set(struct zk_session *s, const char *path, const char *data, size_t len);
/* Only if the node is still at version (the fence); a failure is logged
 * ("bad version": someone else wrote it since). */
leaf_status_t zk_session_set_version(struct zk_session *s, const char *path, const char *data,
                                     size_t len, int32_t version);
/* Any version when version is -1. */
leaf_status_t zk_session_delete(struct zk_session *s, const char *path, int32_t version);

/* A node's stat, as far as leafd uses it. */
struct zk_stat {
    int64_t owner;   /* ephemeralOwner: the session of an ephemeral node, 0 for a persistent one */
    int32_t version; /* data version (the fence of versioned sets) */
    int64_t mtime;   /* the server's clock at the last change (ms) */
    int64_t ctime;   /* the server's clock at the creation (ms) */
};
/* LEAF_ENOTFOUND when the node does not exist. */
leaf_status_t zk_session_stat(struct zk_session *s, const char *path, struct zk_stat *st);
/* zk_session_get that also returns the stat. */
leaf_status_t zk_session_get_stat(struct zk_session *s, const char *path, char *buf, size_t cap,
                                  size_t *len, struct zk_stat *st);
/* zk_session_set_version that returns the new stat (mtime: ZooKeeper's clock at the write). */
leaf_status_t zk_session_set_stat(struct zk_session *s, const char *path, const char *data,
                                  size_t len, int32_t version, struct zk_stat *st);
/* zk_session_create (no sequential name back) that returns the new node's stat. */
leaf_status_t zk_session_create_stat(struct zk_session *s, const char *path, const char *data,
                                     size_t len, enum zk_mode mode, struct zk_stat *st);
/* *names is an array of *n strings; free with zk_names_free. */
leaf_status_t zk_session_children(struct zk_session *s, const char *path, char ***names, int *n);
void zk_names_free(char **names, int n);

/*
 * Asynchronous, owner thread: the result comes back to sub's on_event as a
 * ZK_EVENT_DONE with the given op tag (the subscriber's own numbering).
 */
leaf_status_t zk_session_aset(struct zk_sub *sub, int op, const char *path, const char *data,
                              size_t len);
leaf_status_t zk_session_acreate(struct zk_sub *sub, int op, const char *path, const char *data,
                                 size_t len, enum zk_mode mode);
leaf_status_t zk_session_achildren(struct zk_sub *sub, int op, const char *path);
/* Whether path is an ephemeral node of this very session (result in ev->mine). */
leaf_status_t zk_session_amine(struct zk_sub *sub, int op, const char *path);

/*
 * The calls of the sequence primary; each result carries op and arg back,
 * with ev->result. acreate2: ev->data is the created path (sequential modes
 * append the counter). aget: ev->data/len and ev->version. aset_version:
 * conditional on the node's version being `version` (-1: any); ev->version
 * is the new version. adelete: version -1 deletes any version.
 * aexists_watch: ev->result OK or NONODE, and a watch that fires once as a
 * ZK_EVENT_WATCH (path in ev->data) when the node is created, changed or
 * deleted; the watch is the subscriber's (it reaches sub only).
 */
leaf_status_t zk_session_acreate2(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                                  const char *data, size_t len, enum zk_mode mode);
leaf_status_t zk_session_aget(struct zk_sub *sub, int op, uint64_t arg, const char *path);
leaf_status_t zk_session_aset_version(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                                      const char *data, size_t len, int32_t version);
leaf_status_t zk_session_adelete(struct zk_sub *sub, int op, uint64_t arg, const char *path,
                                 int32_t version);
leaf_status_t zk_session_aexists_watch(struct zk_sub *sub, int op, uint64_t arg, const char *path);
leaf_status_t zk_session_achildren2(struct zk_sub *sub, int op, uint64_t arg, const char *path);
/*
 * aget and achildren2 that also leave a watch: it fires once as a
 * ZK_EVENT_WATCH (path in ev->data) when the node's data changes or it is
 * deleted (aget), or when a child is added or removed (achildren). The
 * client keeps one watch per path however often it is set, and sets them
 * again by itself after a reconnect (not after an expiry: a new session
 * starts with none).
 */
leaf_status_t zk_session_aget_watch(struct zk_sub *sub, int op, uint64_t arg, const char *path);
leaf_status_t zk_session_achildren_watch(struct zk_sub *sub, int op, uint64_t arg,
                                         const char *path);

/* The session timeout the server granted (ms); 0 before the first connection. */
int zk_session_negotiated_timeout_ms(struct zk_session *s);

#endif
