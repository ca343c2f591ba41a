#ifndef LEAF_ZK_IDENTITY_H
#define LEAF_ZK_IDENTITY_H

/*
 * One identity, one node (docs/IDENTITY.md).
 *
 * An identity is ip:port (leafd.snowflake.advertise.ip, leaf.snowflake.port). Its lock is the
 * EPHEMERAL znode /snowflake/{leaf.name}/leaf_temporary/{ip:port}: the session that owns it
 * (the znode's ephemeralOwner) holds the identity. The node records in its data dir (the cache's
 * session=, struct zk_cache_owner in zk_record.h) the session it held the identity with, so that
 * after a kill -9 it can tell its own previous incarnation's znode (take it over at once) from a
 * live twin's (wait for that session to end, at most leafd.zk.session.timeout.ms + 2 s, then exit
 * 1).
 *
 * The worker-ID cache likewise says whose it is (identity=, cluster=): a cache of another
 * identity or cluster is never used to serve, and an old cache that does not say is used only
 * once ZooKeeper confirms the worker ID for this identity.
 *
 * Pure code (no ZooKeeper or libuv header), unit-tested in tests/unit/test_zk_identity.c. The
 * clock is passed in (monotonic ms).
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "zk_record.h"

#define ZK_IDENTITY_GRACE_MS 2000 /* added to the session timeout before giving up */
#define ZK_IDENTITY_MESSAGE_MAX 512
/* How much earlier than the cache's last write an older leafd's znode must have been created
 * (covers the error of the measured clock offset to ZooKeeper) */
#define ZK_IDENTITY_CREATED_MARGIN_MS 500

/* ----- the identity lock ----- */

enum zk_identity_verdict {
    ZK_IDENTITY_CREATE,   /* no znode: create it (EPHEMERAL); on "node exists" read and decide
                             again */
    ZK_IDENTITY_HELD,     /* owned by our current session: nothing to do */
    ZK_IDENTITY_TAKEOVER, /* owned by the session our data dir recorded (our own previous
                             incarnation, killed), or by an older leafd that recorded no session
                             and wrote this data dir's cache after it created the znode (see
                             zk_identity_input.cache_written_ms): delete it (expecting its
                             version), create it */
    ZK_IDENTITY_WAIT,     /* owned by another session: issue nothing, /ready 503, watch the znode
                             and decide again when it is deleted or after wait_ms */
    ZK_IDENTITY_REFUSE,   /* owned by another session past the deadline: exit 1 with
                             zk_identity_message() */
};

struct zk_identity_input {
    int exists;                 /* the znode exists */
    int64_t owner_session;      /* its ephemeralOwner (0 for a persistent znode, never ours) */
    int64_t own_session;        /* our current session id */
    int64_t recorded_session;   /* the session the data dir recorded for this identity, 0 none
                                   (only a cache whose identity= is ours counts) */
    int64_t now_ms;             /* monotonic clock */
    int64_t wait_started_ms;    /* when this start first saw the znode held (monotonic); -1 when
                                   not waiting yet */
    int64_t session_timeout_ms; /* the negotiated session timeout */
    /* An older leafd (0.1.0) recorded no session in its cache. Its killed process's znode is
     * still told apart from a live twin's, only when recorded_session is 0, when all of these
     * hold: this process holds the data dir's lock (no other process of this data dir runs),
     * the cache is this identity's (an older leafd's whose worker ID ZooKeeper confirmed), and the
     * znode was created at least ZK_IDENTITY_CREATED_MARGIN_MS before the cache's last write:
     * the process that created it wrote this data dir afterwards, so it was this node's previous
     * process (0.1.0 wrote its cache every 3 s after creating the znode). A twin's znode is
     * created after this node stopped writing its cache. */
    int dir_locked;           /* this process holds the data dir's lock */
    int cache_ours;           /* the cache is this identity's (see above) */
    int64_t cache_written_ms; /* the cache file's last write (wall clock ms), -1 unknown */
    int64_t owner_created_ms; /* the znode's creation on this node's clock (ZooKeeper's ctime
                                 minus the measured offset), -1 unknown */
    /* How long a held znode is waited for from wait_started_ms; 0: session_timeout_ms +
     * ZK_IDENTITY_GRACE_MS (an ip:port identity). A named identity waits longer
     * (leafd.snowflake.identity.wait.ms): its holder may be a pod that still stops when this
     * one first looks, whose session expires a session timeout after it ends. */
    int64_t max_wait_ms;
};

struct zk_identity_decision {
    enum zk_identity_verdict verdict;
    int64_t wait_ms;     /* WAIT: how long until the deadline */
    int64_t deadline_ms; /* WAIT, REFUSE: wait_started + max_wait_ms (or the session timeout +
                            ZK_IDENTITY_GRACE_MS) */
};

/*
 * Decides at start (before the first ID), at every new session, and whenever the znode's watch
 * fires while waiting. A znode owned by another session is waited for from the first time it is
 * seen (pass that moment back in wait_started_ms) until the session timeout + 2 s (or
 * max_wait_ms): a holder killed without a graceful stop is gone by then; one still holding it is
 * a live twin.
 */
struct zk_identity_decision zk_identity_decide(const struct zk_identity_input *in);

/*
 * The exit-1 line for REFUSE, naming the identity, the holder and the keys:
 *   identity 10.0.0.5:8080 is held by another live node (ZooKeeper session 0x1000a2b3c4d0005
 *   owns /snowflake/it/leaf_temporary/10.0.0.5:8080 after waiting 12000 ms); two nodes with one
 *   identity would issue the same IDs: give this node another leafd.snowflake.advertise.ip or
 *   leaf.snowflake.port
 * Returns the length written (cut to cap).
 */
size_t zk_identity_message(const char *identity, const char *path, int64_t owner_session,
                           int64_t waited_ms, char *buf, size_t cap);

/* ----- whose cache is it ----- */

enum zk_cache_use {
    ZK_CACHE_OWN,     /* identity and cluster are ours: usable, also while ZooKeeper is down */
    ZK_CACHE_UNKNOWN, /* an old file without identity=: usable only once ZooKeeper confirms
                         (the worker ID of leaf_forever/{identity}-* equals the cache's); with
                         ZooKeeper down, do not serve from it */
    ZK_CACHE_FOREIGN, /* another identity or cluster (a copied data dir, a changed ip): never
                         used to serve, not even its timestamp as a worker's floor; log it
                         naming both identities, register from ZooKeeper */
    ZK_CACHE_NONE,    /* no worker ID in it */
};

/* Classifies a loaded cache against this node's identity ("ip:port") and cluster (leaf.name). */
enum zk_cache_use zk_identity_cache_use(const struct zk_cache_data *c,
                                        const struct zk_cache_owner *o, const char *identity,
                                        const char *cluster);

/*
 * The line a FOREIGN cache is logged with (warn), e.g.
 *   worker-ID cache /d/it/8080/workerID.properties belongs to identity 127.0.0.1:8080 of cluster
 *   it, not this node's 127.0.0.2:8080 of cluster it; not using it (registering through ZooKeeper)
 */
size_t zk_identity_cache_message(const struct zk_cache_owner *o, const char *path,
                                 const char *identity, const char *cluster, char *buf, size_t cap);

#endif
