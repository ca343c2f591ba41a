/*
 * Sharded sequences on the control thread (leafd.sequence.sharding;
 * docs/cluster.md, "Sharded sequences"): the coordinator writes the slot map, every node applies
 * it, heartbeats its owner node, and takes a slot it gained only past the barrier that proves
 * nobody else can still issue it. The rules are in sequence_service_state.h (struct seq_shards) and
 * sequence/sequence_shard.h (the assignment itself, pure).
 *
 * Why the barrier is enough for strict order: a slot's sequences are issued
 * by a node only while it owns the slot in the newest map it applied and its
 * lease is live. Before a node issues a slot it gained in map E, every other
 * node has (a) promised, by writing "applied E'" with E' >= E after it
 * stopped every slot map E' gives away, not to issue it; or (b) written
 * "released" after it stopped everything; or (c) left the line, with its last
 * heartbeat more than T before (its lease, 2/3 T from a heartbeat's send,
 * ran out before that; its session is gone, so it never heartbeats again
 * under that name). Then each sequence starts as a new primary does: it reads
 * the persisted max (which bounds every ID issued before, and which a
 * handover's giveback lowered to the last ID issued) and fences it with a
 * versioned write, so its first ID is larger than any ID issued before.
 * Layer: the node (src/node/sequence), the ZooKeeper side over the pure
 * assignment of sequence/sequence_shard.c.
 */
#include "sequence_service_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "sequence_elect.h"
#include "sequence_shard_gate.h"
#include "zk_member.h"

#define SHARD_BARRIER_MS 100 /* the owner nodes are read again this often while a gain waits */
#define S SEQUENCE_SHARD_SLOTS

static void shard_apply(struct sequence_service *svc, const struct sequence_shard_map *m,
                        int force);
static void shard_coordinate(struct sequence_service *svc);

static const char *shard_base(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

leaf_status_t sequence_service_shard_init(struct sequence_service *svc) {
    struct seq_shards *sh = &svc->shards;
    sh->conf = svc->cfg->sequence_sharding;
    sh->on = 0; /* until a slot map exists (the gate) */
    sh->self_id = -1;
    sequence_shard_init(&sh->map);
    if (!sh->conf) {
        return LEAF_OK;
    }
    sh->own = calloc(S, sizeof(*sh->own));
    sh->gen = calloc(S, sizeof(*sh->gen));
    return sh->own && sh->gen ? LEAF_OK : LEAF_ENOMEM;
}

void sequence_service_shard_free(struct sequence_service *svc) {
    zk_names_free(svc->shards.gate_owners, svc->shards.gate_nowners);
    free(svc->shards.own);
    free(svc->shards.gen);
}

void sequence_service_shard_paths(struct sequence_service *svc) {
    snprintf(svc->shards.path_map, sizeof(svc->shards.path_map), "/leafd/%s/shards",
             svc->cfg->name);
    snprintf(svc->shards.dir_owners, sizeof(svc->shards.dir_owners), "/leafd/%s/owners",
             svc->cfg->name);
}

/* My owner node follows my election node (a new one after an expiry or a demotion). */
static void shard_sync_mine(struct sequence_service *svc) {
    struct seq_shards *sh = &svc->shards;
    long long id = svc->mine[0] ? sequence_elect_seq(svc->mine) : -1;
    if (id == sh->self_id) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    sh->self_id = id;
    pthread_mutex_unlock(&svc->lock);
    sh->released = 0;
    sh->hb_gen++;
    sh->hb_inflight = 0; /* an answer for the old name is ignored (hb_gen) */
    sh->last_hb_ms = 0;
    sh->hb_confirmed = 0;
    if (id >= 0) {
        snprintf(sh->hb_path, sizeof(sh->hb_path), "%s/%.200s", sh->dir_owners,
                 shard_base(svc->mine));
    } else {
        sh->hb_path[0] = '\0';
    }
    if (id >= 0 && sh->map_exists && sh->on) {
        /* The map may already name this node under its new name: apply it again. */
        static struct sequence_shard_map m; /* control thread only */
        pthread_mutex_lock(&svc->lock);
        m = sh->map;
        pthread_mutex_unlock(&svc->lock);
        shard_apply(svc, &m, 1);
    }
}

/* ---- the heartbeat: "applied <epoch>" on my owner node ------------------------ */

static void shard_hb(struct sequence_service *svc, int64_t now, int force) {
    struct seq_shards *sh = &svc->shards;
    if (!sh->on || sh->hb_path[0] == '\0' || sh->released || svc->stopping) {
        return;
    }
    if (sh->hb_inflight) {
        sh->hb_again |= force;
        return;
    }
    if (!force && now - sh->last_hb_ms < svc->lease.timeout_ms / 6) {
        return;
    }
    char data[48];
    int n = snprintf(data, sizeof(data), "applied %" PRIu64, sh->applied);
    sh->hb_sent_ms = sh->last_hb_ms = now;
    sh->hb_again = 0;
    if (zk_session_aset_version(&svc->zsub, OP_SHARD_HB, sh->hb_gen << 1, sh->hb_path, data,
                                (size_t)n, -1) == LEAF_OK) {
        sh->hb_inflight = 1;
    }
}

static void shard_on_hb(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_shards *sh = &svc->shards;
    if ((ev->arg >> 1) != sh->hb_gen) {
        return; /* for an owner node this node has left */
    }
    sh->hb_inflight = 0;
    int64_t now = clock_mono_ms();
    if (ev->result == ZK_RESULT_NONODE && (ev->arg & 1) == 0 && !sh->released) {
        char data[48];
        int n = snprintf(data, sizeof(data), "applied %" PRIu64, sh->applied);
        if (zk_session_acreate2(&svc->zsub, OP_SHARD_HB, (sh->hb_gen << 1) | 1, sh->hb_path, data,
                                (size_t)n, ZK_MODE_PERSISTENT) == LEAF_OK) {
            sh->hb_inflight = 1;
        }
        return;
    }
    if (ev->result != ZK_RESULT_OK) {
        return;
    }
    sh->hb_confirmed = 1;
    pthread_mutex_lock(&svc->lock);
    sequence_lease_answer(&svc->lease, sh->hb_sent_ms, now);
    int won = !svc->lease.primary && !sh->released;
    if (won) {
        sequence_lease_win(&svc->lease); /* in line: may issue the slots it owns */
        svc->elections++;
        sequence_service_table_wake_all(svc);
    }
    pthread_mutex_unlock(&svc->lock);
    if (won) {
        log_info("sequence", "sharded sequences: in line as %s", shard_base(sh->hb_path));
    }
    if ((ev->arg & 1) == 0 && ev->mtime > 0) {
        sh->hb_mtime = ev->mtime;
        sh->hb_answer_ms = now;
    } else {
        sh->last_hb_ms = 0; /* a create tells no time: write again soon */
    }
    if (sh->hb_again) {
        shard_hb(svc, now, 1);
    }
    if (!sh->map_exists && sh->coordinator) {
        shard_coordinate(svc); /* the first map waits for this owner node */
    }
}

/* ---- the map: read, apply, and (coordinator) rebalance ------------------------ */

static void shard_read(struct sequence_service *svc) {
    struct seq_shards *sh = &svc->shards;
    if (sh->reading) {
        sh->read_again = 1; /* sent before the latest list: ask once more after it */
        return;
    }
    sh->last_read_ms = clock_mono_ms();
    sh->read_again = 0;
    if (zk_session_aget_watch(&svc->zsub, OP_SHARD_READ, sh->list_gen, sh->path_map) == LEAF_OK) {
        sh->reading = 1;
    }
}

static void shard_barrier(struct sequence_service *svc);

/*
 * A newer map: stop issuing what it gives away, give it back, promise it
 * ("applied E"), and wait for the barrier before issuing what it gives here.
 */
static void shard_apply(struct sequence_service *svc, const struct sequence_shard_map *m,
                        int force) {
    struct seq_shards *sh = &svc->shards;
    int lost = 0, gains = 0, mine = 0;
    pthread_mutex_lock(&svc->lock);
    if (!force && m->epoch <= sh->map.epoch && sh->applied > 0) {
        pthread_mutex_unlock(&svc->lock);
        return;
    }
    sh->map = *m;
    for (int i = 0; i < m->n; i++) {
        const struct sequence_shard_range *r = &m->r[i];
        int here = sh->self_id >= 0 && r->owner == sh->self_id;
        for (int s = r->start; s <= r->end; s++) {
            if (sh->own[s] && !here) {
                sh->own[s] = 0;
                lost++;
            }
            gains += here && !sh->own[s];
            mine += here;
        }
    }
    if (lost > 0) {
        for (size_t i = 0; i < svc->count; i++) {
            struct seq_entry *e = svc->by_idx[i];
            if (!sh->own[e->slot] && e->st.phase != SEQUENCE_IDLE) {
                sequence_state_stop(&e->st);
            }
        }
        sh->moves_out += (uint64_t)lost;
    }
    sequence_service_table_wake_all(svc); /* parked requests of a lost slot are redirected */
    pthread_mutex_unlock(&svc->lock);
    if (lost > 0) {
        (void)sequence_service_heal_giveback_send(
            svc); /* before the promise below: one session, in order */
    }
    sh->applied = m->epoch;
    sh->barrier_epoch = gains > 0 ? m->epoch : 0;
    log_info("sequence",
             "shards: epoch %" PRIu64 " applied: %d slots here, %d given away, %d to take",
             m->epoch, mine, lost, gains);
    shard_hb(svc, clock_mono_ms(), 1);
    if (gains > 0) {
        shard_barrier(svc);
    }
}

/*
 * Sharding turns on here: a map exists, or this coordinator is about to write
 * the first one. Whatever this node issued as the ordinary primary stops and is
 * given back first (one session, in order: before its owner node's first
 * write, which comes before the map's).
 */
static void shard_activate(struct sequence_service *svc, const char *why) {
    struct seq_shards *sh = &svc->shards;
    pthread_mutex_lock(&svc->lock);
    int was = svc->lease.primary;
    sequence_lease_lose(&svc->lease);
    for (size_t i = 0; i < svc->count; i++) {
        sequence_state_stop(&svc->by_idx[i]->st);
    }
    memset(sh->own, 0, S);
    __atomic_store_n(&sh->on, 1, __ATOMIC_RELEASE);
    sh->self_id = -2; /* shard_sync_mine() below starts the owner node afresh */
    svc->where.known = 0;
    sequence_service_table_wake_all(svc);
    pthread_mutex_unlock(&svc->lock);
    svc->taking_over = 0;
    if (was) {
        (void)sequence_service_heal_giveback_send(svc);
    }
    log_info("sequence", "sharded sequences on: %s", why);
    shard_sync_mine(svc);
    shard_hb(svc, clock_mono_ms(), 1);
}

/* The live nodes that take part (the gate's last round); 1 in *all when every one does. */
static int shard_taking_part(const struct seq_shards *sh, long long *out, int *all) {
    int n = 0;
    *all = 1;
    for (int i = 0; i < sh->nlive; i++) {
        int in = 0;
        for (int j = 0; j < sh->npart && !in; j++) {
            in = sh->part[j] == sh->live[i];
        }
        if (in) {
            out[n++] = sh->live[i];
        } else {
            *all = 0;
        }
    }
    return n;
}

static void shard_coordinate(struct sequence_service *svc) {
    struct seq_shards *sh = &svc->shards;
    if (!sh->coordinator || sh->writing || sh->reading || sh->last_read_ms == 0 || sh->nlive == 0 ||
        !sh->gate_done) {
        return;
    }
    long long live[SEQUENCE_SHARD_MAX_NODES];
    int all = 0;
    int nlive = shard_taking_part(sh, live, &all);
    if (!sh->map_exists) {
        if (!all) {
            return; /* held back: the gate names who (sequence_shard_gate.h) */
        }
        if (!sh->on) {
            shard_activate(svc,
                           "every node of the sequence line shards; writing the first slot map");
            return;
        }
        if (!sh->hb_confirmed) {
            return; /* its answer comes back here */
        }
    }
    if (nlive == 0) {
        return;
    }
    static struct sequence_shard_map cur, next; /* control thread only; 6 KB each */
    pthread_mutex_lock(&svc->lock);
    cur = sh->map;
    pthread_mutex_unlock(&svc->lock);
    if (!sh->map_exists) {
        sequence_shard_init(&cur);
    }
    int moved =
        sequence_shard_rebalance(&cur, live, nlive, &next); /* never to one that does not shard */
    if (moved <= 0) {
        return;
    }
    char buf[SEQUENCE_SHARD_TEXT_MAX];
    size_t len = sequence_shard_format(&next, buf, sizeof(buf));
    leaf_status_t rc = sh->map_exists
                           ? zk_session_aset_version(&svc->zsub, OP_SHARD_WRITE, 0, sh->path_map,
                                                     buf, len, sh->map_version)
                           : zk_session_acreate2(&svc->zsub, OP_SHARD_WRITE, 0, sh->path_map, buf,
                                                 len, ZK_MODE_PERSISTENT);
    if (rc == LEAF_OK) {
        sh->writing = 1;
        log_info("sequence",
                 "shards: coordinator writes epoch %" PRIu64 " for %d node(s): %d slots move",
                 next.epoch, nlive, moved);
    }
}

static void shard_on_read(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_shards *sh = &svc->shards;
    sh->reading = 0;
    if (ev->result == ZK_RESULT_NONODE) {
        sh->map_exists = 0;
        sh->absent_gen = ev->arg;
    } else if (ev->result == ZK_RESULT_OK) {
        static struct sequence_shard_map m; /* control thread only */
        if (!sh->on) {
            shard_activate(svc, "the slot map exists");
        }
        if (sequence_shard_parse(ev->data ? ev->data : "", ev->len, &m) != 0) {
            log_error("sequence", "shards: %s holds no valid map; the coordinator writes one",
                      sh->path_map);
            sh->map_exists = 1;
            sh->map_version = ev->version;
            pthread_mutex_lock(&svc->lock);
            m = sh->map;
            pthread_mutex_unlock(&svc->lock);
        } else {
            sh->map_exists = 1;
            sh->map_version = ev->version;
            shard_apply(svc, &m, 0);
        }
    } else {
        return;
    }
    if (sh->read_again) {
        shard_read(svc);
        return;
    }
    shard_coordinate(svc);
}

static void shard_on_write(struct sequence_service *svc, const struct zk_event *ev) {
    svc->shards.writing = 0;
    if (ev->result != ZK_RESULT_OK) {
        log_warn("sequence",
                 "shards: the map write was refused (another coordinator?); reading it again");
    }
    shard_read(svc);
}

void sequence_service_shard_on_list(struct sequence_service *svc, char **names, int n,
                                    int coordinator) {
    struct seq_shards *sh = &svc->shards;
    shard_sync_mine(svc);
    sh->list_gen++;
    sh->nlive = 0;
    for (int i = 0; i < n && sh->nlive < SEQUENCE_SHARD_MAX_NODES; i++) {
        long long id = sequence_elect_seq(names[i]);
        if (id >= 0) {
            sh->live[sh->nlive++] = id;
        }
    }
    if (coordinator && !sh->coordinator) {
        log_info("sequence", "shards: this node coordinates the slot map");
    }
    sh->coordinator = coordinator;
    if (sh->last_read_ms == 0 || (!sh->on && coordinator)) {
        shard_read(svc); /* not sharded yet: is the map still absent after this list? */
    } else {
        shard_coordinate(svc);
    }
}

/* ---- the barrier before a gained slot is issued ------------------------------- */

static int shard_is_live(const struct seq_shards *sh, long long id) {
    for (int i = 0; i < sh->nlive; i++) {
        if (sh->live[i] == id) {
            return 1;
        }
    }
    return 0;
}

static void shard_barrier(struct sequence_service *svc) {
    struct seq_shards *sh = &svc->shards;
    if (sh->barrier_epoch == 0 || sh->hb_listing || sh->hb_reads_left > 0) {
        return;
    }
    sh->last_barrier_ms = clock_mono_ms();
    if (zk_session_achildren2(&svc->zsub, OP_SHARD_HB_LIST, sh->barrier_epoch, sh->dir_owners) ==
        LEAF_OK) {
        sh->hb_listing = 1;
    }
}

/* Every other node cleared the way: the gained slots are issued here from now on. */
static void shard_gain(struct sequence_service *svc, uint64_t epoch) {
    struct seq_shards *sh = &svc->shards;
    if (epoch != sh->barrier_epoch) {
        return; /* a newer map came meanwhile: its own barrier decides */
    }
    int n = 0;
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < sh->map.n; i++) {
        const struct sequence_shard_range *r = &sh->map.r[i];
        for (int s = r->start; s <= r->end && r->owner == sh->self_id && sh->self_id >= 0; s++) {
            if (!sh->own[s]) {
                sh->own[s] = 1;
                sh->gen[s]++;
                n++;
            }
        }
    }
    sh->moves_in += (uint64_t)n;
    sequence_service_table_wake_all(svc);
    pthread_mutex_unlock(&svc->lock);
    sh->barrier_epoch = 0;
    log_info("sequence", "shards: epoch %" PRIu64 ": serving %d more slots", epoch, n);
}

static void shard_on_hb_list(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_shards *sh = &svc->shards;
    sh->hb_listing = 0;
    if (ev->result != ZK_RESULT_OK || ev->arg != sh->barrier_epoch) {
        return; /* the cron asks again */
    }
    sh->barrier_bad = 0;
    sh->hb_reads_left = 0;
    sh->round_epoch = ev->arg; /* every answer of this round is judged against it */
    for (int i = 0; i < ev->nnames; i++) {
        long long id = sequence_elect_seq(ev->names[i]);
        if (id < 0 || id == sh->self_id) {
            continue;
        }
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%.200s", sh->dir_owners, ev->names[i]);
        if (zk_session_aget(&svc->zsub, OP_SHARD_HB_GET, (uint64_t)id, path) == LEAF_OK) {
            sh->hb_reads_left++;
        } else {
            sh->barrier_bad = 1;
        }
    }
    if (sh->hb_reads_left == 0 && !sh->barrier_bad) {
        shard_gain(svc, ev->arg);
    }
}

/* Whether another node's owner node lets this node take the barrier's slots. */
static int shard_clear(struct sequence_service *svc, const struct zk_event *ev, long long id) {
    struct seq_shards *sh = &svc->shards;
    if (ev->result == ZK_RESULT_NONODE) {
        return 1; /* deleted: it was out of line and expired */
    }
    if (ev->result != ZK_RESULT_OK || ev->data == NULL) {
        return 0;
    }
    char text[48];
    snprintf(text, sizeof(text), "%.*s", (int)(ev->len < 47 ? ev->len : 47), ev->data);
    unsigned long long applied = 0;
    if (strcmp(text, "released") == 0 ||
        (sscanf(text, "applied %llu", &applied) == 1 && applied >= sh->round_epoch)) {
        return 1;
    }
    if (shard_is_live(sh, id) || sh->hb_mtime <= 0) {
        return 0;
    }
    /* Out of line: past T since its last heartbeat on the server's clock (4/3 on ours). */
    int64_t left = ev->mtime + svc->lease.timeout_ms - sh->hb_mtime;
    int64_t ready = sh->hb_answer_ms + (left > 0 ? left * 4 / 3 : 0);
    if (clock_mono_ms() < ready) {
        return 0;
    }
    if (sh->coordinator) { /* tidy: it can never speak again */
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/n_%010lld", sh->dir_owners, id);
        (void)zk_session_adelete(&svc->zsub, OP_SHARD_HB_DELETE, 0, path, ev->version);
    }
    return 1;
}

static void shard_on_hb_get(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_shards *sh = &svc->shards;
    if (sh->hb_reads_left <= 0) {
        return;
    }
    if (!shard_clear(svc, ev, (long long)ev->arg)) {
        sh->barrier_bad = 1;
    }
    if (--sh->hb_reads_left == 0 && !sh->barrier_bad) {
        shard_gain(svc, sh->round_epoch);
    }
}

/* ---- the gate: who takes part (sequence/sequence_shard_gate.h) ----------------- */

/* Every SEQ_VIEW_MS on a node configured to shard: the member records and the owner nodes. */
static void gate_start(struct sequence_service *svc, int64_t now) {
    struct seq_shards *sh = &svc->shards;
    int busy = sh->gate_members_left > 0 || sh->gate_owners_left > 0;
    if (svc->nline == 0 || now - sh->last_gate_ms < (busy ? 5 * SEQ_VIEW_MS : SEQ_VIEW_MS)) {
        return; /* a round whose answers are lost is given up after 5 s (its arg is stale) */
    }
    sh->gate_members_left = sh->gate_owners_left = 0;
    char dir[SEQ_DIR_MAX];
    snprintf(dir, sizeof(dir), "/leafd/%s/members", svc->cfg->name);
    sh->last_gate_ms = now;
    sh->gate_round++;
    sh->gate_bad = 0;
    sh->gate_nm = 0;
    if (zk_session_achildren2(&svc->zsub, OP_SHARD_GATE_MEMBERS, sh->gate_round, dir) != LEAF_OK) {
        return;
    }
    sh->gate_members_left = 1;
    if (zk_session_achildren2(&svc->zsub, OP_SHARD_GATE_OWNERS, sh->gate_round, sh->dir_owners) ==
        LEAF_OK) {
        sh->gate_owners_left = 1;
    } else {
        sh->gate_bad = 1;
    }
}

/* All answers of a round are in: judge the line as the view last read it. */
static void gate_judge(struct sequence_service *svc) {
    struct seq_shards *sh = &svc->shards;
    if (sh->gate_bad) {
        return; /* the next round */
    }
    struct sequence_gate_node line[SEQUENCE_SHARD_MAX_NODES];
    char https[SEQUENCE_SHARD_MAX_NODES][SEQUENCE_PEER_ADDR];
    struct sequence_gate_member mem[SEQ_GATE_MEMBERS];
    int takes[SEQUENCE_SHARD_MAX_NODES];
    int n = 0;
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < svc->nline && n < SEQUENCE_SHARD_MAX_NODES; i++) {
        long long id = sequence_elect_seq(svc->line[i]);
        if (id < 0) {
            continue;
        }
        https[n][0] = '\0';
        for (size_t k = 0; k < svc->npeers; k++) {
            if (svc->peers[k].seq == id) {
                snprintf(https[n], sizeof(https[n]), "%s", svc->peers[k].http);
            }
        }
        int owner = 0;
        for (int k = 0; k < sh->gate_nowners && !owner; k++) {
            owner = strcmp(sh->gate_owners[k], svc->line[i]) == 0;
        }
        line[n] = (struct sequence_gate_node){id, https[n], owner};
        n++;
    }
    pthread_mutex_unlock(&svc->lock);
    for (int j = 0; j < sh->gate_nm; j++) {
        mem[j] = (struct sequence_gate_member){sh->gate_m[j].http, sh->gate_m[j].version,
                                               sh->gate_m[j].sharding};
    }
    char held[sizeof(sh->held)];
    (void)sequence_gate_judge(line, n, mem, sh->gate_nm, takes, held, sizeof(held));
    sh->npart = 0;
    for (int i = 0; i < n; i++) {
        if (takes[i]) {
            sh->part[sh->npart++] = line[i].id;
        }
    }
    pthread_mutex_lock(&svc->lock);
    int changed = strcmp(sh->held, held) != 0;
    snprintf(sh->held, sizeof(sh->held), "%s", held);
    pthread_mutex_unlock(&svc->lock);
    if (changed && held[0] != '\0') {
        log_warn("sequence",
                 "leafd.sequence.sharding: %s; held back by node(s) of the sequence line that "
                 "do not shard: %s",
                 sh->map_exists ? "they are given no slots"
                                : "sharding stays off (the ordinary election) until every node "
                                  "of the line runs 1.0 or later with it on",
                 held);
    } else if (changed && sh->gate_done) {
        log_info("sequence", "leafd.sequence.sharding: every node of the sequence line shards");
    }
    sh->gate_done = 1;
    shard_coordinate(svc);
}

static void gate_on_zk(struct sequence_service *svc, struct zk_event *ev) {
    struct seq_shards *sh = &svc->shards;
    if (ev->arg != sh->gate_round) {
        return; /* an older round's */
    }
    if (ev->op == OP_SHARD_GATE_OWNERS) {
        sh->gate_owners_left = 0;
        if (ev->result == ZK_RESULT_OK) {
            zk_names_free(sh->gate_owners, sh->gate_nowners);
            sh->gate_owners = ev->names;
            sh->gate_nowners = ev->nnames;
            ev->names = NULL; /* kept: freed by the next round or at free */
            ev->nnames = 0;
        } else if (ev->result == ZK_RESULT_NONODE) {
            zk_names_free(sh->gate_owners, sh->gate_nowners);
            sh->gate_owners = NULL;
            sh->gate_nowners = 0;
        } else {
            sh->gate_bad = 1;
        }
    } else if (ev->op == OP_SHARD_GATE_MEMBERS) {
        sh->gate_members_left = 0;
        if (ev->result != ZK_RESULT_OK && ev->result != ZK_RESULT_NONODE) {
            sh->gate_bad = 1;
        }
        for (int i = 0; ev->result == ZK_RESULT_OK && i < ev->nnames; i++) {
            char path[SEQ_PATH_MAX];
            snprintf(path, sizeof(path), "/leafd/%s/members/%.200s", svc->cfg->name, ev->names[i]);
            if (zk_session_aget(&svc->zsub, OP_SHARD_GATE_MEMBER, sh->gate_round, path) ==
                LEAF_OK) {
                sh->gate_members_left++;
            } else {
                sh->gate_bad = 1;
            }
        }
    } else {
        sh->gate_members_left--;
        struct zk_member m;
        if (ev->result == ZK_RESULT_OK && ev->data != NULL &&
            zk_member_parse(ev->data, ev->len, &m) == LEAF_OK && sh->gate_nm < SEQ_GATE_MEMBERS) {
            struct seq_gate_member *g = &sh->gate_m[sh->gate_nm++];
            snprintf(g->http, sizeof(g->http), "%s", m.http);
            snprintf(g->version, sizeof(g->version), "%s", m.version);
            g->sharding = m.sharding;
        } /* gone since the listing, or not a record: that node counts as old */
    }
    if (sh->gate_members_left == 0 && sh->gate_owners_left == 0) {
        gate_judge(svc);
    }
}

/* ---- the glue's entry points ---------------------------------------------------- */

void sequence_service_shard_on_zk(struct sequence_service *svc, struct zk_event *ev) {
    switch (ev->op) {
    case OP_SHARD_READ: shard_on_read(svc, ev); break;
    case OP_SHARD_WRITE: shard_on_write(svc, ev); break;
    case OP_SHARD_HB: shard_on_hb(svc, ev); break;
    case OP_SHARD_HB_LIST: shard_on_hb_list(svc, ev); break;
    case OP_SHARD_HB_GET: shard_on_hb_get(svc, ev); break;
    case OP_SHARD_GATE_MEMBERS:
    case OP_SHARD_GATE_MEMBER:
    case OP_SHARD_GATE_OWNERS: gate_on_zk(svc, ev); break;
    default: break;
    }
}

int sequence_service_shard_watch(struct sequence_service *svc, const struct zk_event *ev) {
    if (!svc->shards.conf || ev->data == NULL || strcmp(ev->data, svc->shards.path_map) != 0) {
        return 0;
    }
    shard_read(svc);
    return 1;
}

void sequence_service_shard_cron(struct sequence_service *svc, int64_t now) {
    struct seq_shards *sh = &svc->shards;
    if (!sh->conf) {
        return;
    }
    gate_start(svc, now);
    shard_sync_mine(svc);
    shard_hb(svc, now, 0);
    if (now - sh->last_read_ms >= SEQ_VIEW_MS) {
        shard_read(svc);
    }
    if (sh->barrier_epoch != 0 && now - sh->last_barrier_ms >= SHARD_BARRIER_MS) {
        shard_barrier(svc);
    }
}

int sequence_service_shard_may_lead(const struct sequence_service *svc) {
    const struct seq_shards *sh = &svc->shards;
    return sh->conf && !sh->on && sh->coordinator && sh->list_gen > 0 &&
           sh->absent_gen == sh->list_gen && !sh->reading;
}

void sequence_service_shard_lost_all(struct sequence_service *svc) {
    if (svc->shards.conf) {
        memset(svc->shards.own, 0, S);
    }
}

/* Stops the heartbeat for good on this owner node: "released" is written by the caller. */
void sequence_service_shard_release(struct sequence_service *svc) {
    svc->shards.released = 1;
}

int sequence_service_shard_settling(const struct sequence_service *svc) {
    if (svc == NULL || !svc->enabled || !svc->started) {
        return 0;
    }
    const struct seq_shards *sh = &svc->shards;
    if (!sh->conf || svc->mine[0] == '\0') {
        return 0;
    }
    return sh->last_read_ms == 0 || (sh->reading && !sh->on) || sh->barrier_epoch != 0;
}

void sequence_service_shard_where(struct sequence_service *svc, int slot,
                                  struct sequence_where *where) {
    struct seq_shards *sh = &svc->shards;
    *where = (struct sequence_where){0};
    long long owner = sequence_shard_owner(&sh->map, slot);
    if (owner < 0 || owner == sh->self_id) {
        return; /* none, or this node still waits for the barrier: 503 / TRYAGAIN */
    }
    for (size_t i = 0; i < svc->npeers; i++) {
        if (svc->peers[i].seq == owner) {
            where->known = 1;
            snprintf(where->http, sizeof(where->http), "%s", svc->peers[i].http);
            snprintf(where->resp, sizeof(where->resp), "%s", svc->peers[i].resp);
            return;
        }
    }
}
