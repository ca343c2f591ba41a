/*
 * Sequences heal themselves (docs/IDENTITY.md), the glue around
 * the pure decisions of sequence/sequence_state.c:
 * - a refused conditional write is logged for what it is (the record was
 *   changed or deleted by someone else) while the state machine reads the
 *   record again and serves above it; a sequence that keeps being refused
 *   gives up and this node steps down;
 * - a ZooKeeper max below this node's floor is logged at warn (the state
 *   machine starts above the floor);
 * - a sequence created here after it was answered "unknown" is read again at
 *   once (elsewhere, after SEQUENCE_RECHECK_MS);
 * - a graceful stop or a demotion gives every sequence back down to its last
 *   issued ID with a conditional write, so a planned handover skips no IDs.
 * Control thread, unless a function says otherwise.
 * Layer: the node (src/node/sequence), over sequence/sequence_state.c.
 */
#include "sequence_service_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "sequence_record.h"
#include "sequence_service_floor.h"

void sequence_service_heal_after_done(struct sequence_service *svc, struct seq_entry *e) {
    struct sequence_state *s = &e->st;
    if (s->fence != SEQUENCE_FENCE_NONE && s->phase == SEQUENCE_FENCED) {
        log_error("sequence",
                  "sequence '%s': %d writes refused within %d s (its record keeps changing "
                  "under this primary); stepping down so that another node takes over",
                  e->name, SEQUENCE_FENCE_LIMIT, SEQUENCE_FENCE_WINDOW_MS / 1000);
        svc->demote_requested =
            1; /* sequence_service_zk_on_async() demotes after this batch of events */
    } else if (s->fence == SEQUENCE_FENCE_CHANGED) {
        log_warn("sequence",
                 "sequence '%s': a conditional write was refused: its record was changed "
                 "by someone else (an operator, a restore); reading it again and serving above "
                 "the stored max",
                 e->name);
    } else if (s->fence == SEQUENCE_FENCE_DELETED) {
        log_warn("sequence",
                 "sequence '%s': a conditional write was refused: its record was deleted by "
                 "someone else; reading it again",
                 e->name);
    }
    s->fence = SEQUENCE_FENCE_NONE;
    if (s->moved_new) {
        log_warn("sequence",
                 "sequence '%s': its record is marked moved to region %s at max %" PRId64
                 "; this region never issues it again (docs/regions.md, \"Moving a home\")",
                 e->name, s->moved_to, s->acked_max);
        s->moved_new = 0;
    }
    if (s->move_failed) {
        log_warn("sequence",
                 "sequence '%s': moving its home to region %s failed (the record was changed by "
                 "someone else, or the write failed); it serves here as before",
                 e->name, s->moved_to);
        s->move_failed = 0;
    }
    if (s->floor_over > 0) {
        log_warn("sequence",
                 "sequence '%s': ZooKeeper's max %" PRId64 " is below this node's floor %" PRId64
                 " (was ZooKeeper restored from an older copy, or the record deleted and "
                 "created again?); starting above %" PRId64,
                 e->name, s->zk_below, s->floor_over, s->floor_over);
        s->floor_over = 0;
    }
    if (s->floor_dirty) {
        sequence_service_floor_mark(svc, e);
    }
}

void sequence_service_heal_created(struct sequence_service *svc, const char *name) {
    pthread_mutex_lock(&svc->lock);
    struct seq_entry *e = sequence_service_table_find(svc, name, strlen(name));
    if (e != NULL && e->st.phase == SEQUENCE_MISSING) {
        sequence_state_created(&e->st);
        sequence_service_table_mark_dirty(svc, e);
        leaf_wait_wake_all(&e->waiters);
    }
    pthread_mutex_unlock(&svc->lock);
}

/*
 * The cluster's tree was deleted under the running cluster (deleteall
 * /leafd/{leaf.name}): the election, the lease and every record went with it.
 * Creates the persistent parents again, asynchronously; ZooKeeper applies one
 * session's requests in order, so each create finds its parent. The next
 * list then finds this node's election node missing and gets in line again
 * (a new term: every sequence re-reads, and starts above its floor).
 */
void sequence_service_heal_parents(struct sequence_service *svc) {
    int64_t now = clock_mono_ms();
    if (svc->parents_repaired_ms != 0 && now - svc->parents_repaired_ms < SEQ_VIEW_MS) {
        return;
    }
    svc->parents_repaired_ms = now;
    char top[SEQ_DIR_MAX];
    snprintf(top, sizeof(top), "/leafd/%s", svc->cfg->name);
    const char *parts[] = {"/leafd", top, svc->dir_primary, svc->dir_seqs};
    log_warn("sequence", "%s is gone from ZooKeeper (deleted?); creating it again", top);
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        (void)zk_session_acreate2(&svc->zsub, OP_PARENT_CREATE, 0, parts[i], "", 0,
                                  ZK_MODE_PERSISTENT);
    }
}

/* ---- the giveback -------------------------------------------------------------------------- */

static enum sequence_result heal_result(enum zk_result r) {
    return r == ZK_RESULT_OK           ? SEQUENCE_RESULT_OK
           : r == ZK_RESULT_BADVERSION ? SEQUENCE_RESULT_BADVERSION
           : r == ZK_RESULT_NONODE     ? SEQUENCE_RESULT_NONODE
                                       : SEQUENCE_RESULT_FAILED;
}

size_t sequence_service_heal_giveback_send(struct sequence_service *svc) {
    size_t sent = 0;
    pthread_mutex_lock(&svc->lock);
    size_t n = svc->count;
    pthread_mutex_unlock(&svc->lock);
    for (size_t i = 0; i < n; i++) {
        struct sequence_action a;
        char path[SEQ_PATH_MAX];
        pthread_mutex_lock(&svc->lock);
        struct seq_entry *e = svc->by_idx[i];
        int go = sequence_state_giveback(&e->st, &a);
        if (go) {
            snprintf(path, sizeof(path), "%s/%s", svc->dir_seqs, e->name);
        }
        pthread_mutex_unlock(&svc->lock);
        if (!go) {
            continue;
        }
        if (zk_session_aset_version(&svc->zsub, OP_SEQ_GIVEBACK, i, path, a.data, a.len,
                                    a.version) == LEAF_OK) {
            sent++;
        } else {
            pthread_mutex_lock(&svc->lock);
            sequence_state_giveback_done(&e->st, SEQUENCE_RESULT_FAILED);
            pthread_mutex_unlock(&svc->lock);
        }
    }
    svc->giveback_pending += sent;
    (void)sequence_service_keyed_give_send(svc); /* keyed sections, in the same session order */
    if (sent > 0) {
        log_info("sequence",
                 "handing over: writing %zu sequence records back down to their last "
                 "issued IDs",
                 sent);
    }
    return sent;
}

void sequence_service_heal_on_giveback(struct sequence_service *svc, const struct zk_event *ev) {
    pthread_mutex_lock(&svc->lock);
    if (ev->arg < svc->count) {
        struct seq_entry *e = svc->by_idx[ev->arg];
        enum sequence_result r = heal_result(ev->result);
        sequence_state_giveback_done(&e->st, r);
        if (r == SEQUENCE_RESULT_OK) {
            svc->giveback_ok++;
        } else {
            svc->giveback_refused++;
        }
        if (e->st.floor_dirty) {
            sequence_service_floor_mark(svc, e);
        }
    }
    uint64_t ok = svc->giveback_ok, refused = svc->giveback_refused;
    pthread_mutex_unlock(&svc->lock);
    if (svc->giveback_pending > 0 && --svc->giveback_pending == 0) {
        log_info("sequence",
                 "handover: %" PRIu64 " sequence records given back to their last issued IDs, "
                 "%" PRIu64 " refused or failed (their next primary skips the rest of a batch)",
                 ok, refused);
    }
}

/*
 * A stop waits for the answers to its givebacks before the floors are written: the answers lower
 * the floors (sequence_state_giveback_done), and floors left above the records make the next
 * start skip the rest of each batch ("ZooKeeper's max ... is below this node's floor"). It hands
 * the session's events out as they come (the answers reach this service through
 * sequence_service_zk_on_event, the other subscribers' events reach them), for at most
 * SEQ_GIVEBACK_WAIT_MS: a connection lost meanwhile answers them too (connection loss), sooner or
 * later. A synchronous call after the givebacks would not do: its answer comes back on the C
 * client's I/O thread, possibly before its completion thread has queued theirs (zk_session.h,
 * zk_session_wait_event).
 */
void sequence_service_heal_giveback_drain(struct sequence_service *svc) {
    int64_t until = clock_mono_ms() + SEQ_GIVEBACK_WAIT_MS;
    zk_session_dispatch(svc->zk);
    for (int64_t left; svc->giveback_pending > 0 && (left = until - clock_mono_ms()) > 0;) {
        if (zk_session_wait_event(svc->zk, (int)left) == LEAF_OK) {
            zk_session_dispatch(svc->zk);
        }
    }
    if (svc->giveback_pending > 0) {
        log_warn("sequence",
                 "%zu sequence records given back, not answered within %d ms: their floors stay "
                 "above their records (the next start here skips the rest of their batches)",
                 svc->giveback_pending, SEQ_GIVEBACK_WAIT_MS);
    }
}
