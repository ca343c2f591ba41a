#ifndef LEAF_SNOWFLAKE_NODE_LEASE_H
#define LEAF_SNOWFLAKE_NODE_LEASE_H

/*
 * Lease mode's state and calls, private to src/node/snowflake:
 * snowflake_node_lease.c holds a slot and drives the claims that
 * snowflake_node_claim.c makes (never the other way round); snowflake_node.c
 * embeds the state in the node and calls the snowflake_node_lease_*
 * functions; snowflake_node_view.c reads the counters. The decisions are the
 * pure rules of zk/zk_lease.c.
 * Layer: the node (src/node/snowflake).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "status.h"
#include "zk_lease.h"
#include "zk_session.h"

struct snowflake_node;
struct zk_cache_data;

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
 * Lease mode's state (snowflake_node_lease.c). Control thread only, except
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

/* snowflake_node_lease.c: lease mode, driven by snowflake_node.c (control thread,
 * except snowflake_node_lease_want_switch: any event loop) */
void snowflake_node_lease_init(struct snowflake_node *n);
leaf_status_t snowflake_node_lease_start(struct snowflake_node *n,
                                         const struct zk_cache_data *cache);
void snowflake_node_lease_cron(struct snowflake_node *n);
void snowflake_node_lease_event(struct snowflake_node *n, const struct zk_event *ev);
void snowflake_node_lease_state(struct snowflake_node *n, int state);
void snowflake_node_lease_poke(struct snowflake_node *n);
void snowflake_node_lease_want_switch(struct snowflake_node *n, int64_t wait_ms);
void snowflake_node_lease_stop(struct snowflake_node *n, int64_t final_ms);
void snowflake_node_lease_close(struct snowflake_node *n);
void snowflake_node_lease_free(struct snowflake_node *n);

/* snowflake_node_claim.c: claiming a slot (control thread) */
void snowflake_node_claim_list(struct snowflake_node *n, enum lease_purpose purpose);
void snowflake_node_claim_candidates(struct snowflake_node *n);
void snowflake_node_claim_try(struct snowflake_node *n);
void snowflake_node_claim_reply(struct snowflake_node *n, const struct zk_event *ev);
size_t snowflake_node_claim_data(struct snowflake_node *n, int64_t reserved, uint64_t token,
                                 char *buf, size_t cap);
int64_t snowflake_node_claim_high(struct snowflake_node *n);
enum zk_lease_write_rc snowflake_node_claim_write_rc(enum zk_result r);
void snowflake_node_claim_free(struct snowflake_node *n);
void snowflake_node_claim_publish(struct snowflake_node *n);
void snowflake_node_claim_store_cache(struct snowflake_node *n);

#endif
