/*
 * Keyed sequences' giveback (docs/keyed-sequences.md, "Giveback"): when a node stops
 * issuing some slots (a graceful stop, an in-place upgrade's hand-over, a demotion, a
 * rebalancing that moves slots away), every section it started and none of whose slots it
 * may issue any more is stopped and its max written back down to max(high, floor),
 * conditional on its version, as sequences give back their unused batch
 * (sequence_service_heal.c). A section that keeps some slots here goes on serving them.
 * The writes go out before the promise that follows them (the release of the lease, or an
 * owner node's "applied"): one session applies its requests in order.
 * Layer: the node (src/node/sequence), under sequence_service_heal.c.
 */
#include <inttypes.h>
#include <stdio.h>

#include "log.h"
#include "sequence_keyed.h"
#include "sequence_service_state.h"

int sequence_service_keyed_give_issuable(const struct sequence_service *svc, unsigned slot) {
    return svc->lease.primary && (!svc->shards.on || svc->shards.own[slot]);
}

/* 1 when no slot of the section may be issued here now (lock held). */
static int give_section_gone(const struct sequence_service *svc, int section) {
    unsigned first = (unsigned)section * SEQUENCE_KEYED_SLOTS_PER_SECTION;
    for (unsigned s = first; s < first + SEQUENCE_KEYED_SLOTS_PER_SECTION; s++) {
        if (sequence_service_keyed_give_issuable(svc, s)) {
            return 0;
        }
    }
    return 1;
}

/* The next section to give back at or after *at (space * SECTIONS + section), its write in
 * *a and its path in path; 0 when none is left (lock held). */
static int give_next(struct sequence_service *svc, int *at, struct sequence_keyed_action *a,
                     char *path, size_t cap) {
    struct sequence_keyed *k = svc->keyed.core;
    for (; *at < k->nspaces * SEQUENCE_KEYED_SECTIONS; (*at)++) {
        int space = *at / SEQUENCE_KEYED_SECTIONS, section = *at % SEQUENCE_KEYED_SECTIONS;
        const struct sequence_keyed_section *sec = sequence_keyed_section(k, space, section);
        if (sec->phase == SEQUENCE_KEYED_UNKNOWN || !give_section_gone(svc, section)) {
            continue;
        }
        if (sec->term != svc->lease.term) {
            /* Started in a term that ended without a giveback (the session expired): its
             * version is stale, and lowering the max now could fence a next owner that read
             * it meanwhile. */
            sequence_keyed_section_stop(k, space, section);
            continue;
        }
        if (sequence_keyed_giveback(k, space, section, a)) {
            snprintf(path, cap, "%s/%s/%d", svc->keyed.dir, sequence_keyed_space_name(k, space),
                     section);
            (*at)++;
            return 1;
        }
    }
    return 0;
}

size_t sequence_service_keyed_give_send(struct sequence_service *svc) {
    size_t sent = 0, failed = 0;
    if (svc->keyed.core == NULL) {
        return 0;
    }
    for (int at = 0;;) {
        struct sequence_keyed_action a;
        char path[SEQ_PATH_MAX];
        pthread_mutex_lock(&svc->lock);
        int go = give_next(svc, &at, &a, path, sizeof(path));
        pthread_mutex_unlock(&svc->lock);
        if (!go) {
            break;
        }
        if (zk_session_aset_version(&svc->zsub, OP_KEYED_GIVEBACK, 0, path, a.io.data, a.io.len,
                                    a.io.version) == LEAF_OK) {
            sent++;
        } else {
            failed++; /* the next owner starts above the max as it stands: a larger jump */
        }
    }
    svc->giveback_pending += sent;
    if (sent > 0 || failed > 0) {
        log_info("keyed",
                 "handing over: writing %zu keyed sections back down to their highest IDs "
                 "(%zu could not be sent)",
                 sent, failed);
    }
    return sent;
}

void sequence_service_keyed_give_on_zk(struct sequence_service *svc, const struct zk_event *ev) {
    if (ev->result != ZK_RESULT_OK) {
        log_info("keyed",
                 "a keyed section's giveback was refused or lost (%s): its next owner "
                 "starts above the max as it stands",
                 leaf_strstatus(ev->rc));
    }
    if (svc->giveback_pending > 0) {
        svc->giveback_pending--;
    }
}
