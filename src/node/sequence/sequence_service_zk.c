/*
 * The ZooKeeper side of sequences, on the control thread: the election
 * (create an EPHEMERAL_SEQUENTIAL node, list, watch the predecessor and the
 * primary), the reads and conditional writes each sequence's state machine
 * asks for, admin creates, demotion, and session events. Taking over and the
 * heartbeat (the lease node) are sequence_service_lease.c's.
 * Layer: the node (src/node/sequence), over sequence/sequence_elect.c and
 * sequence/sequence_state.c.
 */
#include "sequence_service_previous.h"
#include "sequence_service_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "sequence_elect.h"
#include "sequence_record.h"

/* ---- the election (control thread) ----------------------------------------- */

void sequence_service_zk_lose_primary(struct sequence_service *svc, const char *why) {
    pthread_mutex_lock(&svc->lock);
    int was = svc->lease.primary;
    sequence_lease_lose(&svc->lease);
    for (size_t i = 0; i < svc->count; i++) {
        sequence_state_stop(&svc->by_idx[i]->st);
    }
    sequence_service_shard_lost_all(svc);
    svc->where.known = 0;
    svc->takeover_park = 0;
    sequence_service_table_wake_all(svc);
    pthread_mutex_unlock(&svc->lock);
    if (was) {
        log_warn("sequence", "no longer the sequence primary: %s", why);
    }
}

static void elect_create(struct sequence_service *svc) {
    if (svc->creating || svc->mine[0] || svc->stopping) {
        return;
    }
    char path[SEQ_PATH_MAX];
    snprintf(path, sizeof(path), "%s/n_", svc->dir_primary);
    svc->create_sent_ms = clock_mono_ms();
    if (zk_session_acreate2(&svc->zsub, OP_ELECT_CREATE, 0, path, svc->self_data,
                            strlen(svc->self_data), ZK_MODE_EPHEMERAL_SEQUENTIAL) == LEAF_OK) {
        svc->creating = 1;
    }
}

static void elect_list(struct sequence_service *svc) {
    if (svc->listing) {
        return;
    }
    if (zk_session_achildren2(&svc->zsub, OP_ELECT_LIST, 0, svc->dir_primary) == LEAF_OK) {
        svc->listing = 1;
    }
}

/* Reads every child's address for the view (CLUSTER SLOTS, redirects). */
static void view_read(struct sequence_service *svc, char **names, int n) {
    zk_names_free(svc->line, svc->nline);
    svc->line = names;
    svc->nline = n;
    pthread_mutex_lock(&svc->lock);
    svc->next_npeers = 0;
    pthread_mutex_unlock(&svc->lock);
    svc->peer_reads_left = 0;
    for (int i = 0; i < n && i < 64; i++) {
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%.200s", svc->dir_primary, names[i]);
        if (sequence_elect_seq(names[i]) >= 0 &&
            zk_session_aget(&svc->zsub, OP_PEER_GET, (uint64_t)i, path) == LEAF_OK) {
            svc->peer_reads_left++;
        }
    }
    svc->last_view_ms = clock_mono_ms();
}

static int peer_cmp(const void *a, const void *b) {
    long long x = ((const struct sequence_peer *)a)->seq,
              y = ((const struct sequence_peer *)b)->seq;
    return x < y ? -1 : x > y;
}

/* An address read for the view: kept, and the view published once all are in. */
static void on_peer(struct sequence_service *svc, const struct zk_event *ev) {
    int i = (int)ev->arg;
    struct sequence_node_addr a;
    pthread_mutex_lock(&svc->lock);
    if (ev->result == ZK_RESULT_OK && i < svc->nline && ev->data != NULL &&
        sequence_record_parse_node(ev->data, ev->len, &a) == LEAF_OK &&
        svc->next_npeers < SEQUENCE_MAX_PEERS) {
        struct sequence_peer *p = &svc->next_peers[svc->next_npeers++];
        memset(p, 0, sizeof(*p));
        p->seq = sequence_elect_seq(svc->line[i]);
        p->self = svc->mine[0] && strcmp(seq_base_name(svc->mine), svc->line[i]) == 0;
        snprintf(p->http, sizeof(p->http), "%s", a.http);
        snprintf(p->resp, sizeof(p->resp), "%s", a.resp);
    }
    if (--svc->peer_reads_left <= 0) {
        qsort(svc->next_peers, svc->next_npeers, sizeof(svc->next_peers[0]), peer_cmp);
        if (svc->next_npeers > 0) {
            svc->next_peers[0].primary = 1;
        }
        memcpy(svc->peers, svc->next_peers, sizeof(svc->peers));
        svc->npeers = svc->next_npeers;
        if (svc->npeers > 0 && !svc->peers[0].self) {
            svc->where.known = 1;
            snprintf(svc->where.http, sizeof(svc->where.http), "%s", svc->peers[0].http);
            snprintf(svc->where.resp, sizeof(svc->where.resp), "%s", svc->peers[0].resp);
        } else if (svc->npeers == 0) {
            svc->where.known = 0;
        }
    }
    pthread_mutex_unlock(&svc->lock);
}

/* An exists watch on one election node: its going wakes this node (handle_event()). */
static void elect_watch(struct sequence_service *svc, const char *name) {
    char path[SEQ_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%.200s", svc->dir_primary, name);
    zk_session_aexists_watch(&svc->zsub, OP_ELECT_WATCH, 0, path);
}

static void on_list(struct sequence_service *svc, struct zk_event *ev) {
    svc->listing = 0;
    if (svc->leaving) {
        /* Asked before the demotion's release and delete were applied (ZooKeeper answers
         * in order): the list still shows this node first in line. Acting on it would
         * take the role back and write the lease node over "released" (leave_line()). */
        return;
    }
    if (ev->result == ZK_RESULT_NONODE) {
        sequence_service_heal_parents(svc); /* the tree was deleted */
    }
    if (ev->result != ZK_RESULT_OK || svc->mine[0] == '\0') {
        return; /* retried by the cron */
    }
    struct sequence_elect d;
    const char *const *names = (const char *const *)ev->names;
    if (sequence_elect_decide(names, ev->nnames, svc->mine, &d) != LEAF_OK) {
        log_error("sequence", "my election node %s has no counter", svc->mine);
        return;
    }
    if (d.verdict != SEQUENCE_ELECT_PRIMARY) {
        svc->taking_over = 0;
        pthread_mutex_lock(&svc->lock);
        if (svc->takeover_park) {
            svc->takeover_park = 0;
            sequence_service_table_wake_all(svc); /* parked: now redirected */
        }
        pthread_mutex_unlock(&svc->lock);
    }
    if (d.verdict == SEQUENCE_ELECT_MISSING) {
        sequence_service_zk_lose_primary(svc, "my election node is gone");
        svc->mine[0] = '\0';
        elect_create(svc);
    } else if (d.verdict == SEQUENCE_ELECT_PRIMARY) {
        if (!svc->shards.conf) {
            /* First in line, taking over: no redirect to the node that was first (it is gone);
             * requests park until the lease is claimed, a few round trips. */
            pthread_mutex_lock(&svc->lock);
            svc->where.known = 0;
            svc->takeover_park = !svc->lease.primary && svc->taking_over != 3;
            pthread_mutex_unlock(&svc->lock);
            sequence_service_lease_become_primary(
                svc); /* sharded: the lowest only coordinates the map */
        }
    } else {
        elect_watch(svc, ev->names[d.watch]);
        if (d.primary >= 0 && d.primary != d.watch) {
            /* The primary too, so that this node's redirects follow a new primary at once
             * rather than at the next view (SEQ_VIEW_MS): one more list per standby when the
             * primary goes, and nothing else (docs/cluster.md, "Sequences"). */
            elect_watch(svc, ev->names[d.primary]);
        }
    }
    if (svc->shards.conf && d.verdict != SEQUENCE_ELECT_MISSING) {
        /* Configured to shard but no map yet: the ordinary election, once the map's
         * absence is read after this list (the cron, sequence_service_shard_may_lead). */
        sequence_service_shard_on_list(svc, ev->names, ev->nnames,
                                       d.verdict == SEQUENCE_ELECT_PRIMARY);
    }
    /* The names move to the view, which reads every address. */
    char **taken = ev->names;
    int n = ev->nnames;
    ev->names = NULL;
    ev->nnames = 0;
    view_read(svc, taken, n);
}

static void on_elect_create(struct sequence_service *svc, const struct zk_event *ev) {
    svc->creating = 0;
    if (ev->result != ZK_RESULT_OK || ev->data == NULL) {
        return; /* the cron creates again while connected */
    }
    snprintf(svc->mine, sizeof(svc->mine), "%s", ev->data);
    sequence_service_previous_record(svc); /* a new session's: the next start knows it */
    pthread_mutex_lock(&svc->lock);
    sequence_lease_answer(&svc->lease, svc->create_sent_ms, clock_mono_ms());
    pthread_mutex_unlock(&svc->lock);
    log_info("sequence", "in line for sequence primary as %s", seq_base_name(svc->mine));
    elect_list(svc);
}

/* ---- sequences: perform what the state machine asks (control thread) ------- */

static void seq_perform(struct sequence_service *svc, struct seq_entry *e,
                        const struct sequence_action *a) {
    char path[SEQ_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", svc->dir_seqs, e->name);
    uint64_t arg = ((uint64_t)a->token << 24) | e->idx;
    leaf_status_t rc = LEAF_ERR;
    switch (a->op) {
    case SEQUENCE_OP_READ: rc = zk_session_aget(&svc->zsub, OP_SEQ, arg, path); break;
    case SEQUENCE_OP_CREATE:
        rc =
            zk_session_acreate2(&svc->zsub, OP_SEQ, arg, path, a->data, a->len, ZK_MODE_PERSISTENT);
        break;
    case SEQUENCE_OP_WRITE:
        rc = zk_session_aset_version(&svc->zsub, OP_SEQ, arg, path, a->data, a->len, a->version);
        break;
    default: return;
    }
    if (rc != LEAF_OK) {
        /* Not sent at all: it cannot have landed. */
        pthread_mutex_lock(&svc->lock);
        sequence_state_done(&e->st, &svc->lease, a->token, clock_mono_ms(), SEQUENCE_RESULT_FAILED,
                            NULL, 0, 0);
        sequence_service_table_mark_dirty(svc, e);
        pthread_mutex_unlock(&svc->lock);
    }
}

/* Wants the control thread to look again later (lock held). */
static int entry_wants(const struct seq_entry *e) {
    return e->waiters.head != NULL || e->st.need > 0 ||
           (e->st.inflight == 0 &&
            (e->st.phase == SEQUENCE_READING || e->st.phase == SEQUENCE_CREATING ||
             e->st.phase == SEQUENCE_FENCING || e->st.verify));
}

static void run_dirty(struct sequence_service *svc) {
    pthread_mutex_lock(&svc->lock);
    size_t n = svc->ndirty;
    struct seq_entry **list = svc->dirty;
    svc->dirty = NULL;
    svc->ndirty = svc->dirty_cap = 0;
    for (size_t i = 0; i < n; i++) {
        list[i]->dirty = 0;
    }
    pthread_mutex_unlock(&svc->lock);
    for (size_t i = 0; i < n; i++) {
        struct seq_entry *e = list[i];
        struct sequence_action a;
        pthread_mutex_lock(&svc->lock);
        int act = svc->connected && sequence_state_action(&e->st, &svc->lease, clock_mono_ms(), &a);
        if (!act && entry_wants(e)) {
            sequence_service_table_mark_dirty(
                svc, e); /* backing off, or waiting to be connected: the cron retries */
        }
        pthread_mutex_unlock(&svc->lock);
        if (act) {
            seq_perform(svc, e, &a);
        }
    }
    free(list);
}

static void on_seq(struct sequence_service *svc, const struct zk_event *ev) {
    uint32_t idx = (uint32_t)(ev->arg & 0xffffff);
    uint64_t token = ev->arg >> 24;
    uint64_t first_term = 0;
    char first_name[VALIDATE_TAG_MAX + 1] = "";
    pthread_mutex_lock(&svc->lock);
    if (idx < svc->count) {
        struct seq_entry *e = svc->by_idx[idx];
        sequence_state_done(&e->st, &svc->lease, token, clock_mono_ms(),
                            sequence_service_table_result(ev->result), ev->data, ev->len,
                            ev->version);
        sequence_service_heal_after_done(svc, e);
        leaf_wait_wake_all(&e->waiters);
        sequence_service_table_mark_dirty(svc, e);
        if (e->st.phase == SEQUENCE_SERVING && svc->lease.primary &&
            svc->fenced_term != svc->lease.term) {
            svc->fenced_term = first_term = svc->lease.term;
            snprintf(first_name, sizeof(first_name), "%s", e->name);
        }
    }
    pthread_mutex_unlock(&svc->lock);
    if (first_term != 0) {
        /* Once a term: the failover's last step (docs/cluster.md, "Sequences"). */
        log_info("sequence", "term %" PRIu64 ": the first sequence (%s) is fenced and serving",
                 first_term, first_name);
    }
}

/* ---- admin creates (control thread) ---------------------------------------- */

static void run_creates(struct sequence_service *svc) {
    for (;;) {
        char path[SEQ_PATH_MAX], data[SEQUENCE_RECORD_MAX_LEN];
        size_t len = 0;
        pthread_mutex_lock(&svc->lock);
        int i = node_jobs_next(&svc->jobs);
        if (i >= 0) {
            const struct seq_create *c = &svc->creates[i];
            snprintf(path, sizeof(path), "%s/%s", svc->dir_seqs, c->name);
            len = sequence_record_format_max(data, sizeof(data), c->start - 1);
        }
        pthread_mutex_unlock(&svc->lock);
        if (i < 0) {
            return;
        }
        if (zk_session_acreate2(&svc->zsub, OP_ADMIN_CREATE, (uint64_t)i, path, data, len,
                                ZK_MODE_PERSISTENT) != LEAF_OK) {
            pthread_mutex_lock(&svc->lock);
            node_jobs_finish(&svc->jobs, &svc->creates[i].job, LEAF_EUNAVAIL);
            pthread_mutex_unlock(&svc->lock);
        }
    }
}

/* The session expired: creates in flight on it will never hear back. */
static void fail_running_creates(struct sequence_service *svc) {
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < SEQ_MAX_CREATES; i++) {
        if (svc->creates[i].job.running) {
            node_jobs_finish(&svc->jobs, &svc->creates[i].job, LEAF_EUNAVAIL);
        }
    }
    pthread_mutex_unlock(&svc->lock);
}

static void on_admin_create(struct sequence_service *svc, const struct zk_event *ev) {
    int i = (int)ev->arg;
    if (i < 0 || i >= SEQ_MAX_CREATES) {
        return;
    }
    leaf_status_t rc = ev->result == ZK_RESULT_OK       ? LEAF_OK
                       : ev->result == ZK_RESULT_EXISTS ? LEAF_EEXIST
                                                        : LEAF_EUNAVAIL;
    pthread_mutex_lock(&svc->lock);
    struct seq_create *c = &svc->creates[i];
    if (!c->job.running) {
        pthread_mutex_unlock(&svc->lock);
        return;
    }
    if (ev->result == ZK_RESULT_NONODE && !c->repaired) {
        /* The parent is gone (the tree was deleted): create it, then this again. */
        c->repaired = 1;
        c->job.running = 0;
        c->job.queued = 1;
        pthread_mutex_unlock(&svc->lock);
        sequence_service_heal_parents(svc);
        run_creates(svc);
        return;
    }
    if (ev->result == ZK_RESULT_EXISTS && c->adopt) {
        /* A retried move: the record this create would write is there already (read it). */
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", svc->dir_seqs, c->name);
        pthread_mutex_unlock(&svc->lock);
        if (zk_session_aget(&svc->zsub, OP_ADMIN_ADOPT_READ, (uint64_t)i, path) != LEAF_OK) {
            pthread_mutex_lock(&svc->lock);
            node_jobs_finish(&svc->jobs, &c->job, LEAF_EUNAVAIL);
            pthread_mutex_unlock(&svc->lock);
        }
        return;
    }
    /* A sequence found missing here is read again at once, except a moved home's: that one
     * waits for the switch (sequence_service_adopted()), so that its record stays as written
     * until then and a retried move finds it so. */
    int created = (ev->result == ZK_RESULT_OK || ev->result == ZK_RESULT_EXISTS) && !c->adopt;
    char name[VALIDATE_TAG_MAX + 1];
    snprintf(name, sizeof(name), "%s", c->name);
    node_jobs_finish(&svc->jobs, &c->job, rc);
    pthread_mutex_unlock(&svc->lock);
    if (created) {
        sequence_service_heal_created(svc, name);
    }
}

/* An adopt's record read back: exactly {"max":start - 1}, unmarked, is its own earlier create;
 * anything else is another sequence's record (docs/regions.md, "Moving a home"). */
static void on_adopt_read(struct sequence_service *svc, const struct zk_event *ev) {
    int i = (int)ev->arg;
    if (i < 0 || i >= SEQ_MAX_CREATES) {
        return;
    }
    int64_t max = -1;
    char moved[SEQUENCE_MOVED_MAX];
    int ok = ev->result == ZK_RESULT_OK &&
             sequence_record_parse_seq(ev->data, ev->len, &max, moved) == LEAF_OK;
    pthread_mutex_lock(&svc->lock);
    struct seq_create *c = &svc->creates[i];
    if (c->job.running) {
        leaf_status_t rc = !ok                                       ? LEAF_EUNAVAIL
                           : moved[0] == '\0' && max == c->start - 1 ? LEAF_OK
                                                                     : LEAF_EEXIST;
        if (ev->result == ZK_RESULT_OK && !ok) {
            rc = LEAF_EEXIST; /* a record it cannot read: not this move's */
        }
        node_jobs_finish(&svc->jobs, &c->job, rc);
    }
    pthread_mutex_unlock(&svc->lock);
}

/* ---- session events, demotion, the cron (control thread) ------------------- */

static void on_state(struct sequence_service *svc, int state) {
    pthread_mutex_lock(&svc->lock);
    svc->connected = state == ZK_STATE_CONNECTED;
    sequence_lease_connected(&svc->lease, svc->connected);
    if (svc->connected) {
        int t = zk_session_negotiated_timeout_ms(svc->zk);
        if (t > 0) {
            svc->lease.timeout_ms = t;
        }
    }
    pthread_mutex_unlock(&svc->lock);
    if (state == ZK_STATE_EXPIRED) {
        fail_running_creates(svc);
        sequence_service_numbering_expired(svc);
        sequence_service_keyed_expired(svc);
        sequence_service_zk_lose_primary(svc, "the ZooKeeper session expired");
        svc->mine[0] = '\0';
        svc->creating = svc->listing = svc->heartbeat_inflight = svc->deleting = 0;
        svc->taking_over = svc->leaving = 0; /* the election node went with the session */
        svc->giveback_pending =
            0; /* the dead handle's answers are dropped: a stop waits for none */
        log_warn("sequence", "ZooKeeper session expired: getting in line again on the new one");
    } else if (state == ZK_STATE_CONNECTED) {
        if (!svc->connected_once || svc->mine[0] == '\0') {
            long long sid = (long long)zk_session_id(svc->zk);
            log_info("sequence", "the election runs on ZooKeeper session 0x%llx", sid);
        }
        svc->connected_once = 1;
        if (svc->mine[0] == '\0') {
            elect_create(svc);
        } else {
            elect_list(svc);
        }
    }
}

/*
 * A demoted node leaves the line: it releases the lease when it was primary (the
 * next primary need not wait it out), then deletes its election node; ZooKeeper
 * applies them in order, after the give-back. Until the delete is answered the
 * node is still first in line, and the answer to a list sent before it says so:
 * svc->leaving makes on_list() ignore such answers. Acting on one took the role
 * back and wrote the lease node over "released", so the next primary waited out
 * a lease (4/3 of the session timeout) while the demoted node issued again.
 * A delete that fails (the connection lost) is sent again by the cron; the
 * release is not (its answer may have been lost after it landed, and by then the
 * next primary's heartbeat may stand there).
 */
static void leave_line(struct sequence_service *svc) {
    if (svc->deleting || svc->mine[0] == '\0') {
        return;
    }
    if (zk_session_adelete(&svc->zsub, OP_ELECT_DELETE, 0, svc->mine, -1) == LEAF_OK) {
        svc->deleting = 1;
    }
}

static void on_delete_done(struct sequence_service *svc, const struct zk_event *ev) {
    svc->deleting = 0;
    if (ev->result == ZK_RESULT_OK || ev->result == ZK_RESULT_NONODE) {
        svc->leaving = 0;
        svc->mine[0] = '\0';
        elect_create(svc); /* back in line, behind every other node */
    }
}

static void demote(struct sequence_service *svc) {
    pthread_mutex_lock(&svc->lock);
    int stopped = svc->demote_was_primary; /* issuing already stopped by the request */
    int was = svc->lease.primary || stopped;
    svc->demote_was_primary = 0;
    if (was) {
        svc->demotions++;
    }
    pthread_mutex_unlock(&svc->lock);
    if (stopped) {
        log_warn("sequence", "no longer the sequence primary: demoted");
    }
    sequence_service_zk_lose_primary(svc, "demoted");
    svc->taking_over = 0;
    if (svc->mine[0] == '\0' || svc->leaving) {
        return;
    }
    /* Issuing has stopped: give back, release the lease, leave the line. */
    if (was) {
        (void)sequence_service_heal_giveback_send(
            svc); /* applied before the release and the delete (leave_line()) */
    }
    if (svc->shards.on) {
        sequence_service_shard_release(svc);
    }
    svc->leaving = 1;
    const char *release = svc->shards.on ? svc->shards.hb_path : svc->lease_path;
    if (was && release[0] != '\0' &&
        zk_session_aset_version(&svc->zsub, OP_LEASE_RELEASE, 0, release, "released", 8, -1) ==
            LEAF_OK) {
        svc->deleting = 1; /* the delete follows the answer (on_lease_release) */
        return;
    }
    leave_line(svc);
}

/* The release answered, whatever it says (one lost with the connection leaves the next
 * primary to wait out the lease, as after a crash): the delete. */
static void on_lease_release(struct sequence_service *svc) {
    svc->deleting = 0;
    leave_line(svc);
}

static void handle_event(struct sequence_service *svc, struct zk_event *ev) {
    if (ev->kind == ZK_EVENT_STATE) {
        on_state(svc, ev->state);
        return;
    }
    if (ev->kind == ZK_EVENT_WATCH) {
        if (!sequence_service_shard_watch(svc, ev)) {
            /* Logged for the failover's timeline (docs/cluster.md, "Sequences"). */
            log_info("sequence", "the election node I watch (%s) changed or went: listing the line",
                     ev->data != NULL ? seq_base_name(ev->data) : "?");
            elect_list(svc); /* the predecessor changed or went */
        }
        return;
    }
    if (ev->op >= OP_SHARD_READ && ev->op <= OP_SHARD_LAST) {
        sequence_service_shard_on_zk(svc, ev);
        return;
    }
    switch (ev->op) {
    case OP_ELECT_CREATE: on_elect_create(svc, ev); break;
    case OP_ELECT_LIST: on_list(svc, ev); break;
    case OP_ELECT_WATCH:
        if (ev->result == ZK_RESULT_NONODE) {
            elect_list(svc); /* gone before the watch was set */
        }
        break;
    case OP_HEARTBEAT: sequence_service_lease_on_heartbeat(svc, ev); break;
    case OP_LEASE_READ: sequence_service_lease_on_read(svc, ev); break;
    case OP_LEASE_CLAIM: sequence_service_lease_on_claim(svc, ev); break;
    case OP_LEASE_RELEASE: on_lease_release(svc); break;
    case OP_ELECT_DELETE: on_delete_done(svc, ev); break;
    case OP_PEER_GET: on_peer(svc, ev); break;
    case OP_SEQ: on_seq(svc, ev); break;
    case OP_ADMIN_CREATE: on_admin_create(svc, ev); break;
    case OP_ADMIN_ADOPT_READ: on_adopt_read(svc, ev); break;
    case OP_SEQ_GIVEBACK: sequence_service_heal_on_giveback(svc, ev); break;
    case OP_NUMBERING_SEQ:
    case OP_NUMBERING_READ:
    case OP_NUMBERING_WRITE:
    case OP_NUMBERING_SEQ_DEL: sequence_service_numbering_on_zk(svc, ev); break;
    case OP_KEYED_GIVEBACK: sequence_service_keyed_give_on_zk(svc, ev); break;
    case OP_KEYED_SPACE:
    case OP_KEYED_AUTO:
    case OP_KEYED_AUTO_DIR:
    case OP_KEYED_SECTION:
    case OP_KEYED_CREATE:
    case OP_KEYED_DIR:
    case OP_KEYED_LIST:
    case OP_KEYED_LIST_GET: sequence_service_keyed_on_zk(svc, ev); break;
    default: break;
    }
}

/* Control thread: one event of this service's on the session (node_zk). */
void sequence_service_zk_on_event(void *arg, struct zk_event *ev) {
    struct sequence_service *svc = arg;
    if (!svc->zk_open) {
        return;
    }
    if (!svc->stopping) {
        handle_event(svc, ev);
    } else if (ev->kind == ZK_EVENT_DONE && ev->op == OP_SEQ_GIVEBACK) {
        sequence_service_heal_on_giveback(svc,
                                          ev); /* the handover's writes, answered during the stop */
    } else if (ev->kind == ZK_EVENT_DONE && ev->op == OP_KEYED_GIVEBACK) {
        sequence_service_keyed_give_on_zk(svc, ev); /* the same, for keyed sections */
    } else if (ev->kind == ZK_EVENT_DONE && ev->op == OP_ELECT_CREATE &&
               ev->result == ZK_RESULT_OK && ev->data != NULL) {
        /* Created after the stop began: out of line at once. */
        (void)zk_session_adelete(&svc->zsub, OP_ELECT_DELETE, 0, ev->data, -1);
    }
}

void sequence_service_zk_on_async(uv_async_t *h) {
    sequence_service_zk_on_idle(h->data);
}

/* Control thread: after a batch of ZooKeeper events, or woken by an event loop. */
void sequence_service_zk_on_idle(void *arg) {
    struct sequence_service *svc = arg;
    if (!svc->zk_open || svc->stopping) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    int dem = svc->demote_requested;
    svc->demote_requested = 0;
    pthread_mutex_unlock(&svc->lock);
    if (dem) {
        demote(svc);
    }
    run_creates(svc);
    sequence_service_numbering_run(svc);
    sequence_service_keyed_run(svc);
    run_dirty(svc);
}

void sequence_service_zk_on_cron(uv_timer_t *t) {
    struct sequence_service *svc = t->data;
    int64_t now = clock_mono_ms();
    if (svc->stopping || !svc->connected) {
        return;
    }
    sequence_service_lease_heartbeat(svc, now);
    sequence_service_shard_cron(svc, now);
    if (svc->taking_over == 3 || (svc->taking_over == 0 && sequence_service_shard_may_lead(svc))) {
        sequence_service_lease_become_primary(
            svc); /* once the previous primary's lease has run out */
    }
    if (svc->leaving) {
        leave_line(svc); /* a delete that failed (the connection lost): again */
    } else if (svc->mine[0] == '\0') {
        elect_create(svc);
    } else if (now - svc->last_view_ms >= SEQ_VIEW_MS) {
        elect_list(svc);
    }
    sequence_service_keyed_run(svc); /* retries after failures, raises asked ahead */
    run_dirty(svc);
}
