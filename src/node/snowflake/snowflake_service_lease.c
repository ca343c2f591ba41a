/*
 * Lease mode (docs/cluster.md, "Worker-ID leases"): the node's worker ID is a slot under
 * /snowflake/{leaf.name}/leaf_lease, claimed through an EPHEMERAL owner child
 * and fenced by the slot's "reserved", written with versioned sets. The
 * decisions are zk/zk_lease.c's; this file carries them out on the control
 * thread with the asynchronous ZooKeeper calls, and moves the generator.
 * This file holds a slot (extends its reservation, reads it back after an
 * unknown outcome, notices its loss) and drives the claims, which
 * snowflake_service_claim.c makes.
 *
 * A claim (start, re-claim after a lost slot, switch on a clock step):
 *   LIST   children of leaf_lease, leaf_forever and leaf_temporary;
 *   READ   the data (and whether an owner exists) of the slots and
 *          leaf_forever nodes that matter: none while enough slots were
 *          never created (their floor is 0, the oldest possible), else a
 *          random sample of LEASE_SAMPLE; and always the slot this node held
 *          last;
 *   TRY    per candidate, pipelined: create the slot if missing, create its
 *          owner, read the slot back (ZooKeeper answers in order);
 *   FIRST  zk_lease_begin() on what was read, then the first reservation
 *          (versioned set); once acknowledged the generator moves to the
 *          slot in one locked call, and the slot held before is released
 *          (its owner deleted, its reservation kept).
 * A lost race (owner exists), a floor too far ahead or a failed first write
 * moves on to the next candidate; none left: LIST again after LEASE_RETRY_MS
 * (a switch gives up instead: 503 until the clock catches up).
 *
 * Threads: everything here runs on the control thread, except
 * snowflake_service_lease_want_switch() (any event loop, under the generator's lock).
 * Layer: the node (src/node/snowflake), below snowflake_service.c and over
 * snowflake_service_claim.c; the pure lease rules are zk/zk_lease.c.
 */
#include "snowflake_service_lease.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "snowflake_service_claim.h"
#include "snowflake_service_state.h"

#define LEASE_START_WAIT_MS 30000

void snowflake_service_lease_init(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    int bits = n->gen.layout.bits[SNOWFLAKE_WORKER];
    int64_t slots = bits >= 16 ? ZK_LEASE_MAX_SLOTS : INT64_C(1) << bits;
    l->nslots = (int)slots;
    l->known_slot = -1;
    l->known_ms = -1;
    l->own_slot = -1;
    l->rng = (uint64_t)clock_mono_ns() ^ ((uint64_t)clock_wall_ms() << 20) ^ 0x9E3779B97F4A7C15ULL;
    l->retry.data = n;
    atomic_init(&l->stats.slot, -1);
}

void snowflake_service_lease_free(struct snowflake_service *n) {
    snowflake_service_claim_free(n);
}

/* ----- holding a slot ----- */

/* The held slot was lost (fenced, deleted, or the session expired). */
static void lease_lost(struct snowflake_service *n, const char *why) {
    struct snowflake_lease *l = &n->lease;
    zk_lease_lose(&l->hold);
    atomic_fetch_add(&l->stats.claims_lost, 1);
    snowflake_service_claim_publish(n);
    log_warn("snowflake",
             "lost lease slot %" PRId64 " (%s): issuing only below its acknowledged "
             "reservation %" PRId64 " ms, then none until a slot is claimed again",
             l->hold.slot, why, l->hold.acked_ms);
}

static void lease_act(struct snowflake_service *n, enum zk_lease_action a) {
    struct snowflake_lease *l = &n->lease;
    if (a == ZK_LEASE_RAISE_CEILING) {
        pthread_mutex_lock(&n->lock);
        if (!n->stopping && n->gen.worker_id == (int)l->hold.slot) {
            snowflake_gen_set_ceiling(&n->gen, l->hold.acked_ms);
        }
        pthread_mutex_unlock(&n->lock);
        l->known_ms = l->hold.acked_ms;
        atomic_store(&n->stats.reserved_ms, l->hold.acked_ms);
        atomic_store(&n->stats.last_zk_report_ms, clock_wall_ms());
        l->cache_dirty = 1;
        snowflake_service_claim_store_cache(n);
    } else if (a == ZK_LEASE_LOST_SLOT) {
        atomic_fetch_add(&l->stats.fence_failures, 1);
        log_error("snowflake",
                  "fence: lease slot %" PRId64 " was written by someone else (or deleted); "
                  "this node no longer extends it",
                  l->hold.slot);
        lease_lost(n, "fenced");
        if (l->phase == LEASE_IDLE) {
            snowflake_service_claim_list(n, LEASE_RECLAIM);
        }
    }
    snowflake_service_claim_publish(n);
}

static void lease_got_hold(struct snowflake_service *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (ev->arg != l->hold.token) {
        return; /* a slot held before */
    }
    if (ev->op == OP_L_SET) {
        l->write_busy = 0;
        lease_act(n, zk_lease_write_done(&l->hold, snowflake_service_claim_write_rc(ev->result),
                                         ev->version));
        return;
    }
    l->resync_busy = 0;
    struct zk_lease_data d;
    const char *why;
    if (ev->result == ZK_RESULT_NONODE) {
        lease_act(n, zk_lease_resync(&l->hold, -1, NULL));
    } else if (ev->result == ZK_RESULT_OK &&
               zk_lease_parse_data(ev->data ? ev->data : "", ev->len, &d, &why) == LEAF_OK) {
        lease_act(n, zk_lease_resync(&l->hold, ev->version, &d));
    }
}

/* Extends the held slot's reservation, or reads it back after an unknown outcome. */
static void lease_extend(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    struct zk_lease_hold *h = &l->hold;
    char path[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    int64_t now = clock_wall_ms();
    if (!snowflake_service_connected(n) ||
        zk_lease_slot_path(&n->layout, h->slot, path, sizeof(path)) != LEAF_OK) {
        return;
    }
    if (h->state == ZK_LEASE_RESYNC && !l->resync_busy) {
        l->resync_busy = zk_session_aget(&n->zsub, OP_L_RESYNC, h->token, path) == LEAF_OK;
        return;
    }
    if (l->write_busy || !zk_lease_should_write(h, now, n->cfg->reserve_ms)) {
        return;
    }
    int64_t reserved = zk_lease_next_reserved(h, now, n->cfg->reserve_ms);
    size_t len = snowflake_service_claim_data(n, reserved, h->token, data, sizeof(data));
    if (len == 0) {
        return;
    }
    zk_lease_write_sent(h, reserved);
    l->write_busy = zk_session_aset_version(&n->zsub, OP_L_SET, h->token, path, data, len,
                                            h->version) == LEAF_OK;
    if (!l->write_busy) {
        h->pending_ms = -1; /* refused before it was sent: nothing in flight */
    }
}

void snowflake_service_lease_cron(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->hold.state == ZK_LEASE_HELD || l->hold.state == ZK_LEASE_RESYNC) {
        lease_extend(n);
    } else if (l->phase == LEASE_IDLE && snowflake_service_connected(n)) {
        snowflake_service_claim_list(n, LEASE_RECLAIM);
    }
    snowflake_service_claim_store_cache(n);
}
void snowflake_service_lease_event(struct snowflake_service *n, const struct zk_event *ev) {
    switch (ev->op) {
    case OP_L_SET:
    case OP_L_RESYNC: lease_got_hold(n, ev); break;
    case OP_L_RELEASE: break;
    default: snowflake_service_claim_reply(n, ev); break;
    }
}

void snowflake_service_lease_state(struct snowflake_service *n, int state) {
    struct snowflake_lease *l = &n->lease;
    if (state == ZK_STATE_EXPIRED) {
        /* Every owner of the session is gone: the hold is lost and a claim in
         * progress starts over on the next session. */
        if (l->hold.state == ZK_LEASE_HELD || l->hold.state == ZK_LEASE_RESYNC) {
            lease_lost(n, "ZooKeeper session expired");
        }
        l->claim.state = ZK_LEASE_NONE;
        l->write_busy = l->resync_busy = 0;
        if (l->phase != LEASE_WAIT) {
            l->phase = LEASE_IDLE;
        }
        l->pending = 0;
    } else if (state == ZK_STATE_CONNECTED && l->phase == LEASE_IDLE &&
               l->hold.state != ZK_LEASE_HELD && l->hold.state != ZK_LEASE_RESYNC &&
               atomic_load(&n->ready)) {
        snowflake_service_claim_list(n, LEASE_RECLAIM);
    }
}

/* Control thread, on every wake-up: an event loop saw the clock far behind. */
void snowflake_service_lease_poke(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    if (!atomic_exchange(&l->switch_wanted, 0) || l->phase != LEASE_IDLE ||
        l->hold.state != ZK_LEASE_HELD || clock_mono_ms() < l->switch_block_until) {
        return;
    }
    int64_t now = clock_wall_ms();
    if (zk_lease_step_classify(now, snowflake_service_claim_high(n), n->cfg->switch_after_ms) !=
        ZK_LEASE_STEP_SWITCH) {
        return;
    }
    l->switch_started_ns = atomic_load(&l->switch_asked_ns);
    l->purpose = LEASE_SWITCH;
    l->switch_listed = 0;
    /* The snapshot of the last claim first (never-created slots are below any
     * clock); LIST again only when it offers nothing. */
    snowflake_service_claim_candidates(n);
    if (l->ncand > 0) {
        snowflake_service_claim_try(n);
    } else {
        snowflake_service_claim_list(n, LEASE_SWITCH);
    }
}

/* Any event loop, under the generator's lock: the clock is behind by wait_ms. */
void snowflake_service_lease_want_switch(struct snowflake_service *n, int64_t wait_ms) {
    struct snowflake_lease *l = &n->lease;
    if (wait_ms <= n->cfg->switch_after_ms ||
        snowflake_gen_high(&n->gen) - clock_wall_ms() <= n->cfg->switch_after_ms ||
        atomic_exchange(&l->switch_wanted, 1)) {
        return;
    }
    atomic_store(&l->switch_asked_ns, clock_mono_ns());
    uv_async_send(&n->async);
}

static void lease_deadline(uv_timer_t *t) {
    (void)t; /* only wakes the loop */
}

static void lease_closed(uv_handle_t *h) {
    (void)h;
}

/*
 * A session adopted from the previous process of an in-place upgrade still
 * owns that process's slot (its owner node is ephemeral; docs/UPGRADING.md,
 * "In place, without a restart"): the claim takes that slot back instead of
 * seeing it held. A new session owns none. Start-up only (synchronous).
 */
static void find_own_slot(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    char path[ZK_PATH_MAX];
    struct zk_stat st;
    int64_t sid = zk_session_id(n->zk);
    if (l->known_slot < 0 || sid == 0 ||
        zk_lease_owner_path(&n->layout, l->known_slot, path, sizeof(path)) != LEAF_OK ||
        zk_session_stat(n->zk, path, &st) != LEAF_OK || st.owner != sid) {
        return;
    }
    l->own_slot = l->known_slot;
    log_info("snowflake",
             "lease slot %" PRId64 " is still held by the adopted ZooKeeper session 0x%llx: "
             "taking it back",
             l->own_slot, (unsigned long long)sid);
}

/* Start-up: claim a slot, running the control loop until held or given up. */
leaf_status_t snowflake_service_lease_start(struct snowflake_service *n,
                                            const struct zk_cache_data *cache) {
    struct snowflake_lease *l = &n->lease;
    if (cache != NULL && cache->worker_id >= 0 && cache->worker_id < l->nslots) {
        l->known_slot = cache->worker_id;
        l->known_ms = cache->timestamp;
    }
    find_own_slot(n);
    uv_timer_init(n->loop, &l->retry);
    uv_timer_t deadline;
    uv_timer_init(n->loop, &deadline);
    uv_timer_start(&deadline, lease_deadline, LEASE_START_WAIT_MS, 0);
    int64_t until = clock_mono_ms() + LEASE_START_WAIT_MS;
    snowflake_service_claim_list(n, LEASE_START);
    while (l->hold.state == ZK_LEASE_NONE && clock_mono_ms() < until &&
           atomic_load(&l->stats.seen_held) < l->nslots) {
        uv_run(n->loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&deadline, lease_closed);
    uv_run(n->loop, UV_RUN_NOWAIT);
    if (l->hold.state == ZK_LEASE_NONE && atomic_load(&l->stats.seen_held) >= l->nslots) {
        /* Every slot is held: start (/health 200, /ready 503) and keep trying;
         * the claim that succeeds makes the node ready (claim_install). */
        atomic_store(&l->stats.waiting, 1);
        return LEAF_EAGAIN;
    }
    if (l->hold.state == ZK_LEASE_NONE) {
        log_error("snowflake",
                  "no lease slot could be claimed under %s within %d s (all %d held, or "
                  "ZooKeeper unreachable): check that ZooKeeper answers at "
                  "leaf.snowflake.zk.address",
                  n->layout.lease, LEASE_START_WAIT_MS / 1000, l->nslots);
        return LEAF_EUNAVAIL;
    }
    /* Serve once the clock is within max.lead.ms of the slot's floor (the bounded lead). */
    int64_t gap = l->hold.floor_ms + 1 - clock_wall_ms() - n->cfg->max_lead_ms;
    if (gap > 0) {
        log_warn("snowflake",
                 "waiting %" PRId64 " ms for the clock to pass lease slot %" PRId64 "'s floor", gap,
                 l->hold.slot);
        struct timespec ts = {(time_t)(gap / 1000), (long)(gap % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return LEAF_OK;
}

/*
 * An extension still in flight at stop: its outcome is read back with one
 * synchronous read. ZooKeeper answers a session's requests in order, so the
 * read sees the extension applied (our token, our reservation, the next
 * version) or not applied (the version we hold); anything else is someone
 * else's write, and the slot is left alone. The same pure judgement as the
 * resync after an unknown outcome (zk_lease_resync).
 */
static void lease_settle_in_flight(struct snowflake_service *n, const char *path) {
    struct snowflake_lease *l = &n->lease;
    char buf[ZK_LEASE_DATA_MAX];
    size_t len = 0;
    struct zk_stat st;
    struct zk_lease_data d;
    const char *why;
    if (zk_session_get_stat(n->zk, path, buf, sizeof(buf) - 1, &len, &st) != LEAF_OK ||
        zk_lease_parse_data(buf, len, &d, &why) != LEAF_OK) {
        log_warn("snowflake",
                 "lease slot %" PRId64 " kept as it is at stop: the extension in flight could "
                 "not be read back",
                 l->hold.slot);
        return;
    }
    l->hold.state = ZK_LEASE_RESYNC;
    l->write_busy = 0;
    (void)zk_lease_resync(&l->hold, st.version, &d);
}

/*
 * Graceful stop, issuing already stopped at final_ms (no ID above it): the
 * held slot's reservation comes down to final_ms with the fencing write, so
 * the next holder (this node restarted, or any other) starts at once instead
 * of waiting out a reservation nobody will use. An extension in flight is
 * settled first (lease_settle_in_flight). Someone else's write since (bad
 * version) leaves the slot as it is; so does a session that is gone.
 */
void snowflake_service_lease_stop(struct snowflake_service *n, int64_t final_ms) {
    struct snowflake_lease *l = &n->lease;
    struct zk_lease_hold *h = &l->hold;
    char path[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    if (h->state != ZK_LEASE_HELD || zk_session_state(n->zk) != ZK_STATE_CONNECTED ||
        zk_lease_slot_path(&n->layout, h->slot, path, sizeof(path)) != LEAF_OK) {
        return;
    }
    if (l->write_busy) {
        lease_settle_in_flight(n, path);
    }
    if (h->state != ZK_LEASE_HELD || final_ms >= h->acked_ms) {
        return;
    }
    size_t len = snowflake_service_claim_data(n, final_ms, h->token, data, sizeof(data));
    if (len > 0 && zk_session_set_version(n->zk, path, data, len, h->version) == LEAF_OK) {
        log_info("snowflake",
                 "lease slot %" PRId64 " given back with its reservation lowered to %" PRId64
                 " ms, the last time issued",
                 h->slot, final_ms);
    }
}

void snowflake_service_lease_close(struct snowflake_service *n) {
    if (n->lease.retry.loop != NULL) {
        uv_close((uv_handle_t *)&n->lease.retry, lease_closed);
    }
}
