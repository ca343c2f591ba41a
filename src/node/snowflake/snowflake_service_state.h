#ifndef LEAF_SNOWFLAKE_SERVICE_STATE_H
#define LEAF_SNOWFLAKE_SERVICE_STATE_H

/*
 * The snowflake node's internals (the node layer; the pure rules are in
 * snowflake/ and zk/), shared by the files of src/node/snowflake, each
 * calling only the ones below it: snowflake_service.c (start, the static and
 * forever modes, the generator's API) over snowflake_service_identity.c (the
 * start-up identity checks), snowflake_service_forever.c (forever mode's upkeep)
 * and snowflake_service_lease.c (lease mode: holding a slot), which drives
 * snowflake_service_claim.c (claiming one); both modes write the local cache
 * through snowflake_service_cache.c. snowflake_service_view.c reads the counters.
 * Lease mode's state is in snowflake_service_lease_types.h (included here); its
 * calls are in snowflake_service_lease.h and snowflake_service_claim.h, which only
 * the files above them include. Nothing outside this folder includes this.
 * Layer: the node (src/node/snowflake), the floor of the snowflake room.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "lockstat.h"
#include "snowflake_gen.h"
#include "snowflake_service_lease_types.h"
#include "zk_layout.h"
#include "zk_marker.h"
#include "zk_record.h"
#include "zk_session.h"
#include "zk_shape.h"

/* Tags of the asynchronous ZooKeeper calls. */
enum {
    OP_SET_FOREVER = 1,
    OP_SET_EPHEMERAL,
    OP_CREATE_EPHEMERAL,
    OP_MINE_EPHEMERAL,
    OP_FIND,
    OP_WATCH_FOREVER,  /* exists-watch on this node's own leaf_forever node */
    OP_REREAD_FOREVER, /* its version read again after a refused write (identity confirmed) */
    OP_TAKE_EPHEMERAL, /* the previous process's leaf_temporary node deleted (at its version) */
    OP_F_LAST = OP_TAKE_EPHEMERAL,
    /* lease mode (snowflake_service_lease.c) */
    OP_L_LIST,    /* children of leaf_lease */
    OP_L_FLIST,   /* children of leaf_forever */
    OP_L_READ,    /* a slot's data (arg: slot) */
    OP_L_OWNERS,  /* a slot's children: whether it has an owner (arg: slot) */
    OP_L_FREAD,   /* a leaf_forever node's data (arg: worker ID) */
    OP_L_MKSLOT,  /* create a slot (arg: slot) */
    OP_L_OWNER,   /* create a slot's owner (arg: slot) */
    OP_L_GET,     /* the claimed slot read back (arg: slot) */
    OP_L_FIRST,   /* a claim's first reservation (arg: token) */
    OP_L_SET,     /* the held slot's reservation (arg: token) */
    OP_L_RESYNC,  /* the held slot read back after an unknown outcome (arg: token) */
    OP_L_RELEASE, /* delete an owner (arg: slot) */
    OP_L_LAST = OP_L_RELEASE
};

/*
 * The node. The generator (gen, under lock) is shared by every event loop;
 * everything else belongs to the control thread from start to shutdown,
 * except stats (atomics, read by any thread for /ready and /metrics).
 */
struct snowflake_service {
    const struct leaf_config *cfg;
    uv_loop_t *loop; /* the control loop */
    /* snowflake_service.c's forever-mode reservation, handed down so that the
     * files below it (forever mode's upkeep) can ask for one at once
     * without calling up a floor. */
    void (*reserve_now)(struct snowflake_service *n);
    pthread_mutex_t lock;
    struct lockstat lock_stat; /* lock's contention (LEAFD_LOCK_STATS builds) */
    struct snowflake_gen gen;  /* guarded by lock, but for snowflake_gen_fast() */
    atomic_int ready;          /* worker held and clock checked */
    int is_static;             /* static worker mode: not coordinated */
    /*
     * A named identity (leafd.snowflake.identity; docs/IDENTITY.md, "Named
     * identity"): fenced by ZooKeeper alone. The ceiling is the reservation
     * ZooKeeper acknowledged while this session held the identity (never the
     * local disk's), and no ID is issued once the monotonic clock passes
     * fence_mono_ms: the session timeout after the sending of the last call
     * ZooKeeper answered, before which the session cannot have expired.
     */
    int named;
    atomic_llong fence_mono_ms; /* written by the control thread, read by the loops */

    int started;
    int stopping;
    int use_zk; /* 0 in static worker mode: the reservation lives in the local cache only */
    struct zk_layout layout;
    struct zk_session *zk;    /* the process's one session (node_zk); NULL in static mode */
    struct zk_sub zsub;       /* this node's calls and events on it */
    struct zk_node_data self; /* ip and port of the identity */
    char cache_path[1024];
    int64_t worker_id;
    char forever_path[ZK_PATH_MAX];
    int registered; /* 1: forever node known; 0: look it up; -1: gave up (logged) */
    int ephemeral_ok;
    int busy[OP_F_LAST + 1]; /* an async call of that tag is in flight (forever mode) */

    /* One identity, one node (snowflake_service_identity.c); control thread. */
    struct zk_cache_owner owner;      /* what every cache write records (work_owner: its copy) */
    struct zk_cache_owner work_owner; /* the threadpool write's copy, set when it is queued */
    int cache_use;                    /* enum zk_cache_use of the cache found at start */
    int64_t recorded_session;         /* the session the data dir recorded for the identity */
    int64_t cache_written_ms;         /* the cache file's mtime at start (wall ms), -1 none */
    int64_t cache_worker_id;          /* the worker ID the cache named at start, -1 none */
    struct zk_marker local_marker;    /* the cluster marker the data dir recorded */
    int shape_changed;                /* the cache's history was issued in old_shape */
    struct zk_shape old_shape;
    int zk_offset_known;      /* ZooKeeper's clock was read at the marker's write */
    int64_t zk_offset_ms;     /* ZooKeeper's clock minus this node's */
    int leaf_compat;          /* registered under Meituan Leaf's own parent */
    int forever_watched;      /* an exists-watch is set on forever_path */
    int32_t forever_version;  /* forever_path's version: its time writes are conditional */
    int64_t forever_sent_ms;  /* the time a write in flight carries */
    int64_t forever_acked_ms; /* the last time ZooKeeper acknowledged there */
    int forever_fenced;   /* a write was refused: nothing above forever_acked_ms until rechecked */
    int forever_checking; /* a refused write: reading whether its time is this node's own */
    int64_t forever_maybe_ms;  /* the time of a write whose answer was lost (it may have landed) */
    int64_t idwait_started_ms; /* monotonic: the identity was first seen held; -1 none */
    int64_t idwait_owner;      /* the session holding it */
    int64_t idwait_logged_ms;  /* monotonic: the last "still waiting" line */
    uv_timer_t idwait;         /* re-checks the identity while it is held */
    int idwait_armed;          /* idwait was initialised (closed at shutdown) */
    int64_t floor_ms;          /* the start-up floor: no ID at or below it */
    void (*fail)(void *arg);   /* the process cannot go on (main's daemon_fail) */
    void *fail_arg;
    /* An older leafd's cache with ZooKeeper down: zkwait retries the start, which goes on with
     * zkwait_cache; zkwait_armed: initialised (closed at shutdown). */
    uv_timer_t zkwait;
    int zkwait_armed;
    struct zk_cache_data zkwait_cache;
    int64_t reserved_ms; /* highest reservation on disk = the generator's ceiling */
    int64_t report_ms;

    uv_async_t async;       /* woken by an event loop that saw the clock far behind (lease mode),
                             * or the reservation nearly used up (reserve_low) */
    atomic_int reserve_low; /* an event loop found the ceiling near: reserve now (node_on_idle) */
    uv_timer_t cron;
    uv_work_t work; /* the cache-file write on the threadpool */
    int work_busy;
    int64_t work_value;
    leaf_status_t work_rc;
    char work_err[320];      /* what failed, when work_rc is not LEAF_OK */
    int64_t write_failures;  /* cache writes failed in a row (control thread) */
    int64_t write_logged_ms; /* monotonic ms of the last line about them */

    struct snowflake_lease lease; /* lease mode only */

    struct {
        atomic_int zk_state;
        atomic_int registered;
        atomic_int ephemeral;
        atomic_llong last_zk_report_ms;
        atomic_llong last_local_report_ms;
        atomic_llong reserved_ms;
        atomic_llong worker_id;
        atomic_int use_zk;
        atomic_int identity_wait; /* the identity is held by another session: waiting */
        atomic_int zk_refused;    /* ZooKeeper refuses the time writes (an ACL): fenced */
        atomic_int zk_wait;       /* an older leafd's cache waits for ZooKeeper to confirm it */
        atomic_int fence_passed;  /* a named identity's fence passed: issuing stopped (logged) */
    } stats;
};

/* snowflake_service_cache.c: the local cache write (control thread). write: queues value (with
 * owner) unless a write is in flight (the caller checks work_busy); LEAF_ERR (logged) when
 * it could not be queued. stored: raises the ceiling to a reservation now on disk. */
leaf_status_t snowflake_service_cache_write(struct snowflake_service *n, int64_t value);
void snowflake_service_cache_stored(struct snowflake_service *n, int64_t reserved);

/* snowflake_service_forever.c: a named identity's fence moved on by a call ZooKeeper answered,
 * sent at sent_mono_ms (control thread). */
void snowflake_service_fence_answered(struct snowflake_service *n, int64_t sent_mono_ms);

/* snowflake_service_identity.c: one identity, one node (control thread, start-up) */
leaf_status_t snowflake_service_identity_cache(struct snowflake_service *n, struct zk_cache_data *c,
                                               int *have);
leaf_status_t snowflake_service_identity_cluster(struct snowflake_service *n);
leaf_status_t snowflake_service_identity_clock(struct snowflake_service *n);
leaf_status_t snowflake_service_identity_lock(struct snowflake_service *n, const char *data,
                                              size_t len);
/* After a wait for the identity: leaf_forever read again (its version, and the time the
 * previous holder wrote at its stop) into n->forever_version and *stored_ms (-1 none). */
leaf_status_t snowflake_service_identity_reread(struct snowflake_service *n, int64_t *stored_ms);

/* snowflake_service_forever.c: forever mode's ZooKeeper upkeep, and the JSON a
 * leaf_forever/leaf_temporary node holds (control thread) */
void snowflake_service_forever_report(struct snowflake_service *n, int64_t reserved);
void snowflake_service_forever_done(struct snowflake_service *n, const struct zk_event *ev);
void snowflake_service_forever_watched(struct snowflake_service *n);
size_t snowflake_service_forever_json(struct snowflake_service *n, int64_t timestamp, char *buf,
                                      size_t cap);

static inline int snowflake_service_connected(struct snowflake_service *n) {
    return zk_session_state(n->zk) == ZK_STATE_CONNECTED;
}

#endif
