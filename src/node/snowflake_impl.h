#ifndef LEAF_SNOWFLAKE_IMPL_H
#define LEAF_SNOWFLAKE_IMPL_H

/*
 * The snowflake node's internals, shared by its two files:
 * snowflake_node.c (start, the forever and static modes, the generator's
 * API) and snowflake_lease.c (lease mode: slots, fence, switch). Nothing
 * else includes this.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "snowflake_gen.h"
#include "zk_layout.h"
#include "zk_lease.h"
#include "zk_marker.h"
#include "zk_record.h"
#include "zk_session.h"
#include "zk_shape.h"

/* How long start-up waits for a first ZooKeeper connection before it falls
 * back to the local cache (and keeps trying in the background). */
#define NODE_CONNECT_WAIT_MS 5000
#define NODE_REPORT_MS 3000
#define NODE_IDWAIT_MS 250 /* how often a held identity is looked at again */

/* Tags of the asynchronous ZooKeeper calls. */
enum {
    OP_SET_FOREVER = 1,
    OP_SET_EPHEMERAL,
    OP_CREATE_EPHEMERAL,
    OP_MINE_EPHEMERAL,
    OP_FIND,
    OP_WATCH_FOREVER,  /* exists-watch on this node's own leaf_forever node */
    OP_REREAD_FOREVER, /* its version read again after a refused write (identity confirmed) */
    /* lease mode (snowflake_lease.c) */
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

/* Lease mode: how many candidates one claim tries before it reads the slots again. */
#define LEASE_CANDIDATES 8

enum lease_phase {
    LEASE_IDLE = 0, /* no claim in progress */
    LEASE_LIST,     /* listing leaf_lease, leaf_forever and leaf_temporary */
    LEASE_READ,     /* reading the slots and leaf_forever nodes listed */
    LEASE_TRY,      /* creating a candidate's owner and reading the slot back */
    LEASE_FIRST,    /* the candidate's first reservation is in flight */
    LEASE_WAIT,     /* nothing to claim now: the retry timer runs */
};

enum lease_purpose {
    LEASE_START,   /* the first claim, at start-up */
    LEASE_RECLAIM, /* the slot was lost (session expired, fenced) */
    LEASE_SWITCH,  /* the clock stepped back: move to a slot below the clock */
};

/*
 * Lease mode's state (snowflake_lease.c). Control thread only, except
 * switch_wanted (set by any event loop) and the counters (read by views).
 * `hold` is the slot the generator issues from; `claim` a claim in
 * progress, which replaces it once its first reservation is acknowledged.
 */
struct snowflake_lease {
    struct zk_lease_hold hold;
    struct zk_lease_hold claim;
    enum lease_phase phase;
    enum lease_purpose purpose;
    int pending;        /* replies this phase still waits for */
    int nslots;         /* slots of the layout (2^worker bits) */
    int64_t known_slot; /* the slot this node held last (cache or memory), -1 none */
    int64_t known_ms;   /* what it knows of that slot's reservation, -1 none */
    uint64_t rng;

    /* the last snapshot: per slot, indexed by slot number */
    struct zk_lease_slot *slots; /* nslots entries; .exists marks a listed slot */
    char **fnames;               /* nslots leaf_forever child names by worker ID (NULL none) */
    int full_read;               /* the slots' data were read (else listed ones are skipped) */
    int *reads;                  /* READ's calls to make, (slot << 2 | kind), in order */
    int nreads, ireads;          /* how many, and the next to send */

    /* the claim in progress */
    struct zk_lease_candidate cand[LEASE_CANDIDATES];
    int ncand, icand;
    int owner_rc;                  /* result of the owner's create (enum zk_result), -1 none */
    int got;                       /* the slot was read back */
    struct zk_lease_data got_data; /* ...its data */
    int32_t got_version;

    int write_busy, resync_busy;
    int cache_dirty;            /* the local cache lags the hold */
    int64_t switch_block_until; /* monotonic ms: no switch attempt before (none found) */
    int switch_listed;          /* this switch read the slots afresh (else: the last snapshot) */
    uv_timer_t retry;

    atomic_int switch_wanted;
    struct {
        atomic_llong slot; /* held slot, -1 none */
        atomic_int state;  /* enum zk_lease_state of the hold */
        atomic_llong claims, claims_lost, switches, fence_failures, switch_failures;
        atomic_llong last_switch_us; /* from the refusal to the move */
        atomic_int seen_held;        /* slots held by others at the last claim that found none */
        atomic_int waiting;          /* no slot held since start: every slot was held */
    } stats;
    int64_t all_held_logged_ms;   /* monotonic: the last warn line about every slot held */
    int64_t switch_started_ns;    /* monotonic, when the switch being made was asked for */
    atomic_llong switch_asked_ns; /* monotonic, set with switch_wanted by an event loop */
};

/*
 * The node. The generator (gen, under lock) is shared by every event loop;
 * everything else belongs to the control thread from start to shutdown,
 * except stats (atomics, read by any thread for /ready and /metrics).
 */
struct snowflake_node {
    const struct leaf_config *cfg;
    uv_loop_t *loop; /* the control loop */
    pthread_mutex_t lock;
    struct snowflake_gen gen; /* guarded by lock */
    atomic_int ready;         /* worker held and clock checked */
    int is_static;            /* static worker mode: not coordinated */

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
    int busy[OP_REREAD_FOREVER + 1]; /* an async call of that tag is in flight (forever mode) */

    /* One identity, one node (snowflake_identity.c); control thread. */
    struct zk_cache_owner owner;      /* what every cache write records (work_owner: its copy) */
    struct zk_cache_owner work_owner; /* the threadpool write's copy, set when it is queued */
    int cache_use;                    /* enum zk_cache_use of the cache found at start */
    int64_t recorded_session;         /* the session the data dir recorded for the identity */
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
    uv_timer_t idwait;         /* re-checks the identity while it is held */
    int idwait_armed;          /* idwait was initialised (closed at shutdown) */
    int64_t floor_ms;          /* the start-up floor: no ID at or below it */
    void (*fail)(void *arg);   /* the process cannot go on (main's daemon_fail) */
    void *fail_arg;
    int64_t reserved_ms; /* highest reservation on disk = the generator's ceiling */
    int64_t report_ms;

    uv_async_t async; /* woken by an event loop that saw the clock far behind (lease mode) */
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
    } stats;
};

/* snowflake_node.c, shared with snowflake_lease.c and snowflake_forever.c:
 * the local cache write, and the JSON a leaf_forever/leaf_temporary node holds */
void snowflake_node_write_work(uv_work_t *w);
void snowflake_node_write_done(uv_work_t *w, int status);
size_t snowflake_forever_json(struct snowflake_node *n, int64_t timestamp, char *buf, size_t cap);

/* snowflake_identity.c: one identity, one node (control thread, start-up) */
leaf_status_t snowflake_identity_cache(struct snowflake_node *n, struct zk_cache_data *c,
                                       int *have);
leaf_status_t snowflake_identity_cluster(struct snowflake_node *n);
leaf_status_t snowflake_identity_clock(struct snowflake_node *n);
leaf_status_t snowflake_identity_lock(struct snowflake_node *n, const char *data, size_t len);

/* snowflake_forever.c: forever mode's ZooKeeper upkeep (control thread) */
void snowflake_forever_report(struct snowflake_node *n, int64_t reserved);
void snowflake_forever_done(struct snowflake_node *n, const struct zk_event *ev);
void snowflake_forever_watched(struct snowflake_node *n);

/* snowflake_lease.c: lease mode, driven by snowflake_node.c (control thread,
 * except snowflake_lease_want_switch: any event loop) */
void snowflake_lease_init(struct snowflake_node *n);
leaf_status_t snowflake_lease_start(struct snowflake_node *n, const struct zk_cache_data *cache);
void snowflake_lease_cron(struct snowflake_node *n);
void snowflake_lease_event(struct snowflake_node *n, const struct zk_event *ev);
void snowflake_lease_state(struct snowflake_node *n, int state);
void snowflake_lease_poke(struct snowflake_node *n);
void snowflake_lease_want_switch(struct snowflake_node *n, int64_t wait_ms);
void snowflake_lease_stop(struct snowflake_node *n, int64_t final_ms);
void snowflake_lease_close(struct snowflake_node *n);
void snowflake_lease_free(struct snowflake_node *n);

/* snowflake_claim.c: claiming a slot (control thread) */
void snowflake_claim_list(struct snowflake_node *n, enum lease_purpose purpose);
void snowflake_claim_candidates(struct snowflake_node *n);
void snowflake_claim_try(struct snowflake_node *n);
void snowflake_claim_reply(struct snowflake_node *n, const struct zk_event *ev);
void snowflake_claim_release(struct snowflake_node *n, int64_t slot);
size_t snowflake_claim_data(struct snowflake_node *n, int64_t reserved, uint64_t token, char *buf,
                            size_t cap);
int64_t snowflake_claim_high_locked(const struct snowflake_gen *g);
int64_t snowflake_claim_high(struct snowflake_node *n);
enum zk_lease_write_rc snowflake_claim_write_rc(enum zk_result r);
uint64_t snowflake_claim_rand(void *ctx);
void snowflake_claim_free(struct snowflake_node *n);
void snowflake_claim_give_up(struct snowflake_node *n);
void snowflake_claim_publish(struct snowflake_node *n);
void snowflake_claim_store_cache(struct snowflake_node *n);

static inline int snowflake_node_connected(struct snowflake_node *n) {
    return zk_session_state(n->zk) == ZK_STATE_CONNECTED;
}

#endif
