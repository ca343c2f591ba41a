/*
 * What /ready, /metrics and the pages show of the snowflake node: a copy
 * taken under the generator's lock and from the counters (any thread).
 * Layer: the node (src/node/snowflake), a leaf: nothing in the room calls it.
 */
#include <stdatomic.h>

#include "clock.h"
#include <stdio.h>

#include "snowflake_service.h"
#include "snowflake_service_state.h"

static void node_view_lease(struct snowflake_service *n, struct snowflake_service_view *v) {
    static const char *const states[] = {"none", "held", "resync", "lost"};
    struct snowflake_lease *l = &n->lease;
    int st = atomic_load(&l->stats.state);
    v->lease = n->cfg->lease_mode;
    v->lease_slot = atomic_load(&l->stats.slot);
    v->lease_state = st >= 0 && st <= ZK_LEASE_LOST ? states[st] : "none";
    v->lease_claims = atomic_load(&l->stats.claims);
    v->lease_claims_lost = atomic_load(&l->stats.claims_lost);
    v->lease_switches = atomic_load(&l->stats.switches);
    v->lease_switch_failures = atomic_load(&l->stats.switch_failures);
    v->lease_fence_failures = atomic_load(&l->stats.fence_failures);
    v->lease_last_switch_us = atomic_load(&l->stats.last_switch_us);
    v->lease_seen_held = atomic_load(&l->stats.seen_held);
    v->lease_nslots = l->nslots;
    v->lease_waiting = atomic_load(&l->stats.waiting) && v->lease_seen_held >= l->nslots;
    snprintf(v->lease_waiting_reason, sizeof(v->lease_waiting_reason),
             "%d of %d lease slots held by other nodes: waiting for one to free",
             v->lease_seen_held, l->nslots);
}

/* Age in ms of a wall-clock stamp, -1 when it never happened. */
static int64_t age_ms(int64_t stamp, int64_t now) {
    return stamp > 0 ? now - stamp : -1;
}

void snowflake_service_view(struct snowflake_service *n, struct snowflake_service_view *v) {
    pthread_mutex_lock(&n->lock);
    int64_t now = clock_wall_ms();
    snowflake_gen_fold(&n->gen); /* the fast window's IDs into the counters */
    /* Field by field, never the whole struct: its fast word is written by the
     * loops without the lock (snowflake_gen_fast), and a plain copy would read it. */
    const struct snowflake_gen *gen = &n->gen;
    struct {
        struct snowflake_layout layout;
        int worker_id;
        int64_t max_lead_ms, ceiling_ms;
        uint64_t lead_issues, issued, backwards_waits, backwards_errors, exhaustions;
    } g = {gen->layout,          gen->worker_id,        gen->max_lead_ms,
           gen->ceiling_ms,      gen->lead_issues,      gen->issued,
           gen->backwards_waits, gen->backwards_errors, gen->exhaustions};
    int64_t behind = snowflake_gen_behind(&n->gen, now);
    int64_t lead = snowflake_gen_lead(&n->gen, now);
    pthread_mutex_unlock(&n->lock);
    /* beyond the lead bound, the clock is behind for good (not answered from the lead) */
    int64_t excess = behind - g.max_lead_ms;
    *v = (struct snowflake_service_view){
        .enabled = n->cfg->snowflake_enable,
        .is_static = n->is_static,
        .worker_id = g.worker_id,
        .clock_behind_ms = behind,
        .clock_lead_ms = lead,
        .max_lead_ms = g.max_lead_ms,
        .lead_issues = g.lead_issues,
        .ceiling_ms = g.ceiling_ms,
        .now_ms = now,
        .issued = g.issued,
        .backwards_waits = g.backwards_waits,
        .backwards_errors = g.backwards_errors,
        .exhaustions = g.exhaustions,
        .years_left = snowflake_layout_years_left(&g.layout, n->cfg->epoch, now),
        .use_zk = atomic_load(&n->stats.use_zk),
        .started = atomic_load(&n->stats.worker_id) >= 0,
        .zk_state = atomic_load(&n->stats.zk_state),
        .registered = atomic_load(&n->stats.registered),
        .ephemeral = atomic_load(&n->stats.ephemeral),
        /* The process's one session's, whoever uses it. */
        .connects = n->zk != NULL ? atomic_load(&n->zk->connects) : 0,
        .expirations = n->zk != NULL ? atomic_load(&n->zk->expirations) : 0,
        .zk_report_age_ms = age_ms(atomic_load(&n->stats.last_zk_report_ms), now),
        .local_report_age_ms = age_ms(atomic_load(&n->stats.last_local_report_ms), now),
        .reserved_ahead_ms = (int64_t)atomic_load(&n->stats.reserved_ms) - now,
    };
    node_view_lease(n, v);
    /* Ready while the persisted reservation is ahead of the clock and the
     * clock is not behind what was issued (ZooKeeper itself is a weak
     * dependency at run time). */
    int fenced = n->named && clock_mono_ms() >= atomic_load(&n->fence_mono_ms);
    v->ready = atomic_load(&n->ready) && v->worker_id >= 0 && v->ceiling_ms > now && !fenced &&
               excess <= SNOWFLAKE_MAX_BACKWARDS_WAIT_MS && !atomic_load(&n->stats.zk_refused);
    v->reason = v->ready ? ""
                : atomic_load(&n->stats.zk_refused)
                    ? "ZooKeeper refuses this node's time writes (the cluster's trees are closed "
                      "with leafd.zk.auth credentials this node lacks): set leafd.zk.auth"
                : fenced && atomic_load(&n->ready)
                    ? "named identity: ZooKeeper has answered nothing for a session timeout, so "
                      "it may have given the identity to another process"
                : atomic_load(&n->stats.identity_wait) && n->named
                    ? "named identity held by another ZooKeeper session (the previous pod of "
                      "this name, still stopping or not yet expired, or a live twin): waiting "
                      "for it to end (leafd.snowflake.identity.wait.ms)"
                : atomic_load(&n->stats.identity_wait)
                    ? "identity held by another ZooKeeper session (another live node with this "
                      "ip:port?): waiting for it to end"
                : atomic_load(&n->stats.zk_wait) && n->named
                    ? "named identity waits for ZooKeeper: only ZooKeeper can confirm it is not "
                      "held elsewhere"
                : atomic_load(&n->stats.zk_wait)
                    ? "snowflake identity waits for ZooKeeper: the local cache was written by an "
                      "older leafd and names no identity; only ZooKeeper can confirm its worker ID"
                : v->worker_id < 0 && v->lease_waiting     ? v->lease_waiting_reason
                : v->worker_id < 0                         ? "no worker ID held"
                : excess > SNOWFLAKE_MAX_BACKWARDS_WAIT_MS ? "clock behind the last issued ID "
                                                             "by more than the lead bound"
                : v->ceiling_ms <= now                     ? "time reservation not persisted"
                                                           : "starting";
}
