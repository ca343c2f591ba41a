#ifndef LEAF_SNOWFLAKE_SERVICE_H
#define LEAF_SNOWFLAKE_SERVICE_H

/*
 * A snowflake node: the generator (snowflake/) behind the one API that
 * issues IDs, and its worker ID, coordinated through ZooKeeper (zk/) or
 * static. Nothing outside this file takes the generator's lock.
 *
 * Start-up (snowflake_service_start, main thread, blocking, before the event
 * loops run): register in ZooKeeper or, when it is unreachable, start from
 * the local cache; refuse or wait while the clock is not above everything
 * stored; persist the first reservation; create the ephemeral node.
 *
 * Run time (control loop): every 3 s (at most half of reserve.ms) a new
 * reservation R = now + leafd.snowflake.reserve.ms is written to the local
 * cache on the libuv threadpool and to the leaf_forever node asynchronously;
 * the generator's ceiling is raised to R only after the local write
 * succeeded, so no ID is ever issued beyond what is on disk. ZooKeeper is a
 * weak dependency at run time: while it is away IDs keep flowing on the
 * local reservation; after a session expiry (the process's one session,
 * node_zk.h, replaces the handle) the ephemeral node is re-created.
 *
 * Stop (snowflake_service_stop, after the event loops stopped): stop
 * issuing, persist the last issued time (so a graceful restart does not
 * wait); main() then closes the session (the ephemeral node vanishes at once).
 *
 * Threads: snowflake_service_next() and snowflake_service_view() from any thread;
 * everything else from the main thread (which runs the control loop).
 */
#include <stdint.h>

#include "config.h"
#include "snowflake_gen.h"
#include "status.h"

struct uv_loop_s;
struct snowflake_service;
struct zk_session;

/* Control thread: what to call when the node cannot go on (its identity is
 * another live node's): main() stops the process with exit 1. */
void snowflake_service_on_fail(struct snowflake_service *n, void (*fail)(void *arg), void *arg);

/* Allocates the node and its generator (no worker yet); subscribes to zk,
 * the process's ZooKeeper session (NULL without ZooKeeper). */
leaf_status_t snowflake_service_create(struct snowflake_service **out,
                                       const struct leaf_config *cfg,
                                       struct uv_loop_s *control_loop, struct zk_session *zk);

/* Leases the worker ID and checks the clock (no-op when snowflake is off).
 * LEAF_OK, or an error already logged (main exits 1). */
leaf_status_t snowflake_service_start(struct snowflake_service *n);

/* Safe to call when the node was never started; after a failed start it only
 * closes the ZooKeeper session (nothing was issued, nothing is persisted). */
void snowflake_service_stop(struct snowflake_service *n);
void snowflake_service_free(struct snowflake_service *n);

/* Issues count ascending IDs; the returns of snowflake_gen_next(). Any thread. */
leaf_status_t snowflake_service_next(struct snowflake_service *n, int64_t *ids, int count,
                                     int64_t *wait_ms);

/* The layout (with its time unit) IDs are made and decoded with; fixed at create. Any thread. */
const struct snowflake_layout *snowflake_service_layout(const struct snowflake_service *n);

/* A snapshot for /ready, /metrics and pages. */
struct snowflake_service_view {
    int enabled, is_static, started, ready;
    const char *reason; /* why not ready ("" when ready) */
    int worker_id;
    int64_t clock_behind_ms, ceiling_ms, now_ms;
    int64_t clock_lead_ms, max_lead_ms; /* the bounded lead, and its bound */
    uint64_t issued, backwards_waits, backwards_errors, exhaustions, lead_issues;
    double years_left;
    int use_zk, zk_state, registered, ephemeral;
    long long connects, expirations;
    int64_t zk_report_age_ms, local_report_age_ms, reserved_ahead_ms;
    /* lease mode (docs/cluster.md, "Worker-ID leases") */
    int lease;
    int64_t lease_slot;      /* held slot, -1 none */
    const char *lease_state; /* "none", "held", "resync", "lost" */
    long long lease_claims, lease_claims_lost, lease_switches, lease_switch_failures;
    long long lease_fence_failures, lease_last_switch_us;
    int lease_seen_held, lease_nslots; /* slots held by others at the last failed claim */
    int lease_waiting;                 /* started while every slot was held; none yet */
    char lease_waiting_reason[96];
};
void snowflake_service_view(struct snowflake_service *n, struct snowflake_service_view *v);

#endif
