/*
 * The lease node of the sequence primary, on the control thread: taking over (read the lease
 * node, claim it, wait out a lease the previous primary may still hold) and the primary's
 * heartbeat that renews and dates it. The election that decides who takes over is
 * sequence_service_zk.c's. Layer: the node (src/node/sequence), below sequence_service_zk.c.
 */
#include "sequence_service_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

/*
 * The lease node. An election is decided by the election nodes, which
 * vanish when a session ends. ZooKeeper ends a session by itself only after
 * the timeout, by which time the old primary has stopped issuing (its lease
 * runs 2/3 of it). But a session can also be closed early, by anyone who
 * opens it with its id and password: the old primary would then issue for up
 * to 2/3 T more while the new one already does, and strict order would
 * break. So the primary also rewrites /leafd/{leaf.name}/lease as its
 * heartbeat, and a new primary, before it issues, reads that node's last
 * change (the server's mtime), writes it to learn the server's time now,
 * and waits until T has passed since the old primary's last heartbeat on
 * the server's clock (times 4/3 on its own: the clock rates agree within a
 * third, as for the lease itself; the old primary stopped by 2/3 T after its
 * send, which is at most 8/9 T on the server's clock). After a crash
 * that time has already passed when the session expires: no wait. A primary
 * that steps down writes "released" after it stopped issuing: no wait either.
 */
static void takeover_start(struct sequence_service *svc) {
    if (svc->taking_over || svc->leaving) {
        return;
    }
    if (zk_session_aget(&svc->zsub, OP_LEASE_READ, 0, svc->lease_path) == LEAF_OK) {
        svc->taking_over = 1;
    }
}

static void takeover_claim(struct sequence_service *svc, int exists) {
    char data[SEQ_PATH_MAX + 16];
    int n = snprintf(data, sizeof(data), "primary=%s", seq_base_name(svc->mine));
    svc->takeover_sent_ms = clock_mono_ms();
    leaf_status_t rc = exists ? zk_session_aset_version(&svc->zsub, OP_LEASE_CLAIM, 0,
                                                        svc->lease_path, data, (size_t)n, -1)
                              : zk_session_acreate2(&svc->zsub, OP_LEASE_CLAIM, 0, svc->lease_path,
                                                    data, (size_t)n, ZK_MODE_PERSISTENT);
    svc->taking_over = rc == LEAF_OK ? 2 : 0;
}

void sequence_service_lease_on_read(struct sequence_service *svc, const struct zk_event *ev) {
    if (svc->taking_over != 1) {
        return;
    }
    if (ev->result == ZK_RESULT_OK) {
        svc->lease_old_mtime = ev->mtime;
        svc->lease_released =
            ev->data != NULL && ev->len >= 8 && memcmp(ev->data, "released", 8) == 0;
        takeover_claim(svc, 1);
    } else if (ev->result == ZK_RESULT_NONODE) {
        /* No primary ever held it, or the tree was deleted under a primary that may
         * still issue for the rest of its lease: then wait that out (sequence_service_heal.c). */
        svc->lease_released = svc->parents_repaired_ms == 0;
        svc->lease_old_mtime = -1;
        takeover_claim(svc, 0);
    } else {
        svc->taking_over = 0; /* the next list tries again */
    }
}

void sequence_service_lease_on_claim(struct sequence_service *svc, const struct zk_event *ev) {
    if (svc->taking_over != 2) {
        return;
    }
    if (ev->result != ZK_RESULT_OK) {
        svc->taking_over = 0;
        return;
    }
    int64_t now = clock_mono_ms();
    pthread_mutex_lock(&svc->lock);
    sequence_lease_answer(&svc->lease, svc->takeover_sent_ms, now);
    int64_t t = svc->lease.timeout_ms;
    pthread_mutex_unlock(&svc->lock);
    int64_t wait = 0;
    if (!svc->lease_released && svc->lease_old_mtime == -1) {
        wait = t * 4 / 3;
    } else if (!svc->lease_released && ev->mtime > 0) {
        wait = svc->lease_old_mtime + t - ev->mtime;
        wait = wait < 0 ? 0 : wait * 4 / 3;
    }
    svc->takeover_at_ms = now + wait;
    svc->taking_over = 3;
    if (wait > 0) {
        pthread_mutex_lock(&svc->lock);
        svc->takeover_park = 0; /* a lease to wait out: no_primary meanwhile */
        sequence_service_table_wake_all(svc);
        pthread_mutex_unlock(&svc->lock);
        log_warn("sequence",
                 "the previous primary's session ended %lld ms after its last heartbeat, "
                 "before its lease could run out (was it closed from elsewhere?); waiting "
                 "%lld ms before issuing",
                 (long long)(ev->mtime - svc->lease_old_mtime), (long long)wait);
    }
    sequence_service_lease_become_primary(svc);
}

void sequence_service_lease_become_primary(struct sequence_service *svc) {
    if (svc->taking_over != 3) {
        takeover_start(svc);
        return;
    }
    if (clock_mono_ms() < svc->takeover_at_ms) {
        return; /* the cron comes back */
    }
    pthread_mutex_lock(&svc->lock);
    /* A demote waits for on_idle; a demoted node wins nothing until it is back in line. */
    int was = svc->lease.primary || svc->demote_requested || svc->leaving;
    if (!was) {
        sequence_lease_win(&svc->lease);
        svc->elections++;
        svc->where.known = 0;
        svc->takeover_park = 0;
        sequence_service_table_wake_all(
            svc); /* parked requests start their sequences in the new term */
    }
    uint64_t term = svc->lease.term;
    pthread_mutex_unlock(&svc->lock);
    if (!was) {
        log_info("sequence", "elected sequence primary (term %" PRIu64 ", %s)", term,
                 seq_base_name(svc->mine));
    }
}

void sequence_service_lease_on_heartbeat(struct sequence_service *svc, const struct zk_event *ev) {
    svc->heartbeat_inflight = 0;
    if (ev->result == ZK_RESULT_OK) {
        pthread_mutex_lock(&svc->lock);
        sequence_lease_answer(&svc->lease, svc->heartbeat_sent_ms, clock_mono_ms());
        pthread_mutex_unlock(&svc->lock);
    }
}

/* The primary's heartbeat: a write of the lease node (renews the lease, dates it). */
void sequence_service_lease_heartbeat(struct sequence_service *svc, int64_t now) {
    int64_t every = svc->lease.timeout_ms / 6;
    pthread_mutex_lock(&svc->lock);
    int primary = svc->lease.primary;
    pthread_mutex_unlock(&svc->lock);
    if (svc->shards.on || svc->mine[0] == '\0' || (!primary && svc->taking_over != 3) ||
        svc->heartbeat_inflight || now - svc->last_heartbeat_ms < every) {
        return;
    }
    char data[SEQ_PATH_MAX + 16];
    int n = snprintf(data, sizeof(data), "primary=%s", seq_base_name(svc->mine));
    svc->last_heartbeat_ms = now;
    svc->heartbeat_sent_ms = now;
    if (zk_session_aset_version(&svc->zsub, OP_HEARTBEAT, 0, svc->lease_path, data, (size_t)n,
                                -1) == LEAF_OK) {
        svc->heartbeat_inflight = 1;
    }
}
