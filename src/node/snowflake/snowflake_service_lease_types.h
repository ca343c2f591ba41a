#ifndef LEAF_SNOWFLAKE_SERVICE_LEASE_TYPES_H
#define LEAF_SNOWFLAKE_SERVICE_LEASE_TYPES_H

/*
 * Lease mode's state, private to src/node/snowflake: struct snowflake_lease
 * is embedded in the node (snowflake_service_state.h), so every file of the room sees
 * it; snowflake_service_lease.c and snowflake_service_claim.c change it,
 * snowflake_service_view.c reads the counters. Types only: the calls are in
 * snowflake_service_lease.h and snowflake_service_claim.h. The decisions are the
 * pure rules of zk/zk_lease.c.
 * Layer: the node (src/node/snowflake), the floor of the snowflake room,
 * with snowflake_service_state.h.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "zk_lease.h"

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
 * Lease mode's state (snowflake_service_lease.c). Control thread only, except
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
    int64_t own_slot;   /* known_slot whose owner node is this session's (an in-place
                         * upgrade adopted it): taken back, not seen as held; -1 none */
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

#endif
