/*
 * Lease mode's claims (see snowflake_service_lease.c for the whole): the snapshot of
 * the slots (LIST, READ), the choice of candidates (zk/zk_lease.c decides),
 * and trying them one after another (TRY, FIRST) until one is held. Control
 * thread only.
 * Layer: the node (src/node/snowflake), below snowflake_service_lease.c; the
 * pure rules are zk/zk_lease.c.
 */
#include "snowflake_service_claim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "snowflake_service_state.h"

#define LEASE_SWITCH_BLOCK_MS 1000
/* Reads in flight at once: ZooKeeper stops reading a connection with too many
 * outstanding requests (globalOutstandingLimit), and the session may expire. */
#define LEASE_READ_WINDOW 128
/* Slots read per claim once every slot was created: a random sample, so a
 * claim costs a few dozen reads, not two per slot. A start or re-claim only
 * needs an old slot (the oldest of 32 random ones is in the oldest 3% on
 * average); a switch needs one below a stepped-back clock, which may be rare,
 * so it reads more. */
#define LEASE_SAMPLE 32
#define LEASE_SAMPLE_SWITCH 96

enum { READ_SLOT, READ_OWNERS, READ_FOREVER };

#define LEASE_RETRY_MS 250

static void claim_wait(struct snowflake_service *n);
static void claim_install(struct snowflake_service *n);

#define LEASE_ALL_HELD_LOG_MS 10000 /* the warn line about every slot held, at most this often */

/* No slot could be claimed: how many are held by others, said once every 10 s at most. */
static void claim_count_held(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    int held = 0;
    for (int i = 0; l->slots != NULL && i < l->nslots; i++) {
        held += l->slots[i].held || l->slots[i].bad;
    }
    atomic_store(&l->stats.seen_held, held);
    int64_t now = clock_mono_ms();
    if (held < l->nslots || l->hold.state == ZK_LEASE_HELD) {
        return;
    }
    if (l->all_held_logged_ms == 0 || now - l->all_held_logged_ms >= LEASE_ALL_HELD_LOG_MS) {
        l->all_held_logged_ms = now;
        log_warn("snowflake",
                 "%d of %d lease slots under %s are held by other nodes: no worker ID for this "
                 "node; retrying every %d ms until one frees (said again every %d s at most)",
                 held, l->nslots, n->layout.lease, LEASE_RETRY_MS, LEASE_ALL_HELD_LOG_MS / 1000);
    }
}

static uint64_t claim_rand(void *ctx) {
    struct snowflake_lease *l = ctx;
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    return l->rng;
}

/* Frees the snapshot of the last claim. */
void snowflake_service_claim_free(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    free(l->slots);
    if (l->fnames != NULL) {
        for (int i = 0; i < l->nslots; i++) {
            free(l->fnames[i]);
        }
        free(l->fnames);
    }
    free(l->reads);
    l->reads = NULL;
    l->nreads = l->ireads = 0;
    l->slots = NULL;
    l->fnames = NULL;
}

/* ----- the snapshot: LIST and READ ----- */

static void lease_choose(struct snowflake_service *n);

static int lease_reset_snapshot(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    snowflake_service_claim_free(n);
    l->slots = calloc((size_t)l->nslots, sizeof(*l->slots));
    l->fnames = calloc((size_t)l->nslots, sizeof(*l->fnames));
    l->reads = calloc((size_t)l->nslots * 3, sizeof(*l->reads));
    if (l->slots == NULL || l->reads == NULL || l->fnames == NULL) {
        log_error("snowflake", "out of memory reading %d lease slots", l->nslots);
        return -1;
    }
    for (int i = 0; i < l->nslots; i++) {
        l->slots[i] = (struct zk_lease_slot){i, 0, 0, 0, -1, -1};
    }
    return 0;
}

void snowflake_service_claim_list(struct snowflake_service *n, enum lease_purpose purpose) {
    struct snowflake_lease *l = &n->lease;
    l->purpose = purpose;
    l->switch_listed = purpose == LEASE_SWITCH;
    l->pending = 0;
    l->phase = LEASE_LIST;
    if (!snowflake_service_connected(n) || lease_reset_snapshot(n) != 0) {
        claim_wait(n);
        return;
    }
    const char *paths[] = {n->layout.lease, n->layout.forever};
    int ops[] = {OP_L_LIST, OP_L_FLIST};
    for (int i = 0; i < 2; i++) {
        if (zk_session_achildren2(&n->zsub, ops[i], 0, paths[i]) == LEAF_OK) {
            l->pending++;
        }
    }
    if (l->pending < 2) {
        claim_wait(n); /* the replies still due are ignored in WAIT */
    }
}

/* Takes a listing's names into the snapshot. */
static void lease_listed(struct snowflake_service *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    for (int i = 0; ev->rc == LEAF_OK && i < ev->nnames; i++) {
        int64_t k;
        if (ev->op == OP_L_LIST && zk_lease_slot_number(ev->names[i], l->nslots, &k) == LEAF_OK) {
            l->slots[k].exists = 1;
        } else if (ev->op == OP_L_FLIST && zk_layout_worker_id(ev->names[i], &k) == LEAF_OK &&
                   k < l->nslots && l->fnames[k] == NULL) {
            l->fnames[k] = strdup(ev->names[i]);
        }
    }
}

/* Sends READ's next calls while fewer than LEASE_READ_WINDOW are in flight. */
static void lease_send_reads(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    char path[ZK_PATH_MAX];
    static const int ops[] = {OP_L_READ, OP_L_OWNERS, OP_L_FREAD};
    while (l->ireads < l->nreads && l->pending < LEASE_READ_WINDOW) {
        int slot = l->reads[l->ireads] >> 2, kind = l->reads[l->ireads] & 3;
        int fits = kind == READ_FOREVER
                       ? snprintf(path, sizeof(path), "%s/%s", n->layout.forever, l->fnames[slot]) <
                             (int)sizeof(path)
                       : zk_lease_slot_path(&n->layout, slot, path, sizeof(path)) == LEAF_OK;
        leaf_status_t st = !fits ? LEAF_EINVAL
                           : kind == READ_OWNERS
                               ? zk_session_achildren2(&n->zsub, ops[kind], (uint64_t)slot, path)
                               : zk_session_aget(&n->zsub, ops[kind], (uint64_t)slot, path);
        l->ireads++;
        if (st == LEAF_OK) {
            l->pending++;
        } else {
            l->slots[slot].bad = 1;
        }
    }
}

/*
 * Sets want[i] for the created slots (or leaf_forever workers) READ reads:
 * the slot this node held last, and unless enough slots were never created
 * (their floor is 0, the oldest possible) a random sample of LEASE_SAMPLE
 * (LEASE_SAMPLE_SWITCH for a switch).
 */
static void lease_pick_reads(struct snowflake_lease *l, int full, char *want) {
    int sample = l->purpose == LEASE_SWITCH ? LEASE_SAMPLE_SWITCH : LEASE_SAMPLE;
    int npool = 0;
    for (int i = 0; i < l->nslots; i++) {
        int used = l->slots[i].exists || l->fnames[i] != NULL;
        want[i] = (char)(used && i == l->known_slot);
        if (used && full && i != l->known_slot) {
            l->reads[npool++] = i; /* the pool, before reads[] holds the calls */
        }
    }
    int take = npool < sample ? npool : sample;
    for (int k = 0; k < take; k++) {
        int j = k + (int)(claim_rand(l) % (uint64_t)(npool - k));
        int t = l->reads[k];
        l->reads[k] = l->reads[j];
        l->reads[j] = t;
        want[l->reads[k]] = 1;
    }
}

/* After LIST: queue the reads (a slot's data and owner, a leaf_forever node's
 * data); slots not read are not candidates this time. */
static void lease_read(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    int fresh = 0;
    for (int i = 0; i < l->nslots; i++) {
        fresh += !l->slots[i].exists && l->fnames[i] == NULL && i != l->known_slot;
    }
    l->full_read = fresh < 2 * ZK_LEASE_SPREAD + LEASE_CANDIDATES;
    l->phase = LEASE_READ;
    l->pending = 0;
    l->nreads = l->ireads = 0;
    char *want = calloc((size_t)l->nslots, 1);
    if (want == NULL) {
        claim_wait(n);
        return;
    }
    lease_pick_reads(l, l->full_read, want);
    for (int i = 0; i < l->nslots; i++) {
        struct zk_lease_slot *s = &l->slots[i];
        /* Another identity's forever node keeps its worker ID out of the pool,
         * live or not (a forever node cut off from ZooKeeper keeps serving on
         * its local reservation), until an operator retires it (leafd
         * --retire); this identity's own (a migration) is a floor to read. */
        int blocks =
            l->fnames[i] != NULL && zk_lease_forever_blocks(l->fnames[i], n->layout.identity);
        if (l->fnames[i] != NULL && want[i] && !blocks) {
            l->reads[l->nreads++] = i << 2 | READ_FOREVER;
        } else if (l->fnames[i] != NULL) {
            s->held = 1; /* not read, or another identity's worker ID */
        }
        if (s->exists && want[i]) {
            /* Its data, and whether it is held: a holder cut off keeps an old
             * reservation until its session expires, and must not be tried
             * over and over. */
            l->reads[l->nreads++] = i << 2 | READ_SLOT;
            l->reads[l->nreads++] = i << 2 | READ_OWNERS;
        } else if (s->exists) {
            s->held = 1;
        }
    }
    free(want);
    lease_send_reads(n);
    if (l->pending == 0) {
        lease_choose(n);
    }
}

static void lease_got_read(struct snowflake_service *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    int64_t k = (int64_t)ev->arg;
    if (k < 0 || k >= l->nslots) {
        return;
    }
    struct zk_lease_slot *s = &l->slots[k];
    if (ev->op == OP_L_OWNERS) {
        for (int i = 0; ev->rc == LEAF_OK && i < ev->nnames; i++) {
            s->held |= strcmp(ev->names[i], ZK_LEASE_OWNER) == 0 && k != l->own_slot;
        }
    } else if (ev->op == OP_L_READ && ev->result == ZK_RESULT_NONODE) {
        s->exists = 0;
    } else if (ev->op == OP_L_READ) {
        struct zk_lease_data d;
        const char *why = NULL;
        if (ev->result != ZK_RESULT_OK ||
            zk_lease_parse_data(ev->data ? ev->data : "", ev->len, &d, &why) != LEAF_OK) {
            s->bad = 1;
            if (why != NULL) {
                log_warn("snowflake", "lease slot %" PRId64 " has unreadable data (%s); skipped", k,
                         why);
            }
        } else {
            s->reserved = d.reserved;
        }
    } else {
        struct zk_node_data d;
        if (ev->result == ZK_RESULT_OK &&
            zk_record_parse_node(ev->data ? ev->data : "", ev->len, &d) == LEAF_OK) {
            s->forever_ms = d.timestamp;
        } else if (ev->result != ZK_RESULT_NONODE) {
            s->bad = 1; /* its floor is unknown */
        }
    }
}

/* ----- choosing and trying candidates ----- */

/*
 * The highest clock reading and issued time of the current slot: a clock
 * this far behind it has stepped back. The floor is left out on purpose: a
 * slot taken back just after a loss has its floor ahead of the clock (up to
 * reserve.ms), which is waited out, not a step to switch away from.
 * Called with the generator's lock held.
 */
int64_t snowflake_service_claim_high(struct snowflake_service *n) {
    pthread_mutex_lock(&n->lock);
    int64_t h = snowflake_gen_high(&n->gen);
    pthread_mutex_unlock(&n->lock);
    return h;
}

/* Fills the candidates from the snapshot (none when there is no snapshot). */
void snowflake_service_claim_candidates(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    l->ncand = 0;
    if (l->slots == NULL) {
        return;
    }
    struct zk_lease_slot *listed = malloc((size_t)l->nslots * sizeof(*listed));
    int nl = 0;
    for (int i = 0; listed != NULL && i < l->nslots; i++) {
        const struct zk_lease_slot *s = &l->slots[i];
        if (s->exists || s->held || s->bad || s->forever_ms >= 0) {
            listed[nl++] = *s;
        }
    }
    int switching = l->purpose == LEASE_SWITCH;
    struct zk_lease_choice c = {
        .slots = listed,
        .nslots_listed = nl,
        .nslots = l->nslots,
        .cache_slot = switching ? -1 : l->known_slot,
        .cache_ms = switching ? -1 : l->known_ms,
        .exclude = switching ? l->hold.slot : -1,
        .now_ms = clock_wall_ms(),
        .max_wait_ms = n->cfg->startup_max_wait_ms,
        .rand = claim_rand,
        .rand_ctx = l,
    };
    int k = -1;
    if (listed != NULL && switching) {
        zk_lease_switch_choose(&c, snowflake_service_claim_high(n), n->cfg->switch_after_ms,
                               l->cand, LEASE_CANDIDATES, &k);
    } else if (listed != NULL) {
        k = zk_lease_choose(&c, l->cand, LEASE_CANDIDATES);
    }
    free(listed);
    l->ncand = k > 0 ? k : 0;
    l->icand = 0;
}

static void lease_choose(struct snowflake_service *n) {
    snowflake_service_claim_candidates(n);
    snowflake_service_claim_try(n);
}

static void claim_release(struct snowflake_service *n, int64_t slot) {
    char path[ZK_PATH_MAX];
    if (zk_lease_owner_path(&n->layout, slot, path, sizeof(path)) == LEAF_OK) {
        zk_session_adelete(&n->zsub, OP_L_RELEASE, (uint64_t)slot, path, -1);
    }
}

size_t snowflake_service_claim_data(struct snowflake_service *n, int64_t reserved, uint64_t token,
                                    char *buf, size_t cap) {
    struct zk_lease_data d = {.reserved = reserved, .port = n->self.port, .token = token};
    snprintf(d.ip, sizeof(d.ip), "%s", n->self.ip);
    return zk_lease_format_data(&d, buf, cap);
}

static void claim_give_up(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->purpose == LEASE_SWITCH && !l->switch_listed) {
        /* The candidates came from the last snapshot, which may be stale: read
         * the slots afresh before giving up. */
        snowflake_service_claim_list(n, LEASE_SWITCH);
        return;
    }
    if (l->purpose == LEASE_SWITCH) {
        /* No slot below the clock: 503 until it catches up, as in forever mode. */
        atomic_fetch_add(&l->stats.switch_failures, 1);
        log_warn("snowflake",
                 "the clock stepped back, but no free lease slot is below it; refusing "
                 "snowflake IDs until the clock catches up");
        l->switch_block_until = clock_mono_ms() + LEASE_SWITCH_BLOCK_MS;
        l->phase = LEASE_IDLE;
        return;
    }
    claim_count_held(n);
    claim_wait(n);
}

/* Sends the pipelined create-slot, create-owner and read-back of the next candidate. */
void snowflake_service_claim_try(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->icand >= l->ncand || !snowflake_service_connected(n)) {
        claim_give_up(n);
        return;
    }
    const struct zk_lease_candidate *c = &l->cand[l->icand];
    char slot[ZK_PATH_MAX], owner[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    size_t len = snowflake_service_claim_data(n, c->floor_ms, 0, data, sizeof(data));
    l->phase = LEASE_TRY;
    l->pending = 0;
    l->owner_rc = -1;
    l->got = 0;
    if (zk_lease_slot_path(&n->layout, c->slot, slot, sizeof(slot)) != LEAF_OK ||
        zk_lease_owner_path(&n->layout, c->slot, owner, sizeof(owner)) != LEAF_OK || len == 0) {
        claim_give_up(n);
        return;
    }
    uint64_t arg = (uint64_t)c->slot;
    if (!c->exists && zk_session_acreate2(&n->zsub, OP_L_MKSLOT, arg, slot, data, len,
                                          ZK_MODE_PERSISTENT) == LEAF_OK) {
        l->pending++;
    }
    if (zk_session_acreate2(&n->zsub, OP_L_OWNER, arg, owner, n->layout.identity,
                            strlen(n->layout.identity), ZK_MODE_EPHEMERAL) == LEAF_OK) {
        l->pending++;
    }
    if (zk_session_aget(&n->zsub, OP_L_GET, arg, slot) == LEAF_OK) {
        l->pending++;
    }
}

static void lease_next(struct snowflake_service *n, int release) {
    struct snowflake_lease *l = &n->lease;
    if (release) {
        claim_release(n, l->cand[l->icand].slot);
    }
    l->icand++;
    snowflake_service_claim_try(n);
}

/* All replies of a TRY are in: begin the hold and send its first reservation. */
static void lease_tried(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    const struct zk_lease_candidate *c = &l->cand[l->icand];
    if (l->owner_rc == ZK_RESULT_EXISTS && c->slot == l->own_slot) {
        l->owner_rc = ZK_RESULT_OK; /* this session's owner node (find_own_slot) */
    }
    if (l->owner_rc == ZK_RESULT_EXISTS || l->owner_rc == ZK_RESULT_NONODE) {
        lease_next(n, 0); /* lost the race, or the slot vanished */
        return;
    }
    if (l->owner_rc != ZK_RESULT_OK) {
        log_warn("snowflake", "claiming lease slot %" PRId64 ": the owner's create failed",
                 c->slot);
        claim_wait(n);
        return;
    }
    uint64_t token = 0;
    while (token == 0) {
        token = claim_rand(l);
    }
    int64_t now = clock_wall_ms();
    int64_t max_wait = l->purpose == LEASE_SWITCH ? 0 : n->cfg->startup_max_wait_ms;
    int64_t known = c->slot == l->known_slot ? l->known_ms : -1;
    if (!l->got || zk_lease_begin(&l->claim, c->slot, token, l->got_version, &l->got_data,
                                  l->slots[c->slot].forever_ms, known, now, max_wait) != LEAF_OK) {
        lease_next(n, 1); /* unreadable, or its floor moved too far ahead meanwhile */
        return;
    }
    int64_t reserved = zk_lease_next_reserved(&l->claim, now, n->cfg->reserve_ms);
    if (reserved <= l->claim.floor_ms + n->gen.layout.unit_ms) {
        /* a floor ahead of the clock is issued from (the bounded lead): a tick above it */
        reserved = l->claim.floor_ms + n->gen.layout.unit_ms + 1;
    }
    char path[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    size_t len = snowflake_service_claim_data(n, reserved, token, data, sizeof(data));
    zk_lease_write_sent(&l->claim, reserved);
    l->phase = LEASE_FIRST;
    if (len == 0 || zk_lease_slot_path(&n->layout, c->slot, path, sizeof(path)) != LEAF_OK ||
        zk_session_aset_version(&n->zsub, OP_L_FIRST, token, path, data, len, l->claim.version) !=
            LEAF_OK) {
        lease_next(n, 1);
    }
}

static void lease_got_try(struct snowflake_service *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (ev->op == OP_L_OWNER) {
        l->owner_rc = (int)ev->result;
    } else if (ev->op == OP_L_GET && ev->result == ZK_RESULT_OK) {
        const char *why;
        l->got =
            zk_lease_parse_data(ev->data ? ev->data : "", ev->len, &l->got_data, &why) == LEAF_OK;
        l->got_version = ev->version;
    }
}

enum zk_lease_write_rc snowflake_service_claim_write_rc(enum zk_result r) {
    return r == ZK_RESULT_OK           ? ZK_LEASE_WRITE_OK
           : r == ZK_RESULT_BADVERSION ? ZK_LEASE_WRITE_BADVERSION
           : r == ZK_RESULT_NONODE     ? ZK_LEASE_WRITE_NONODE
                                       : ZK_LEASE_WRITE_UNKNOWN;
}

static void lease_got_first(struct snowflake_service *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (ev->arg != l->claim.token || l->phase != LEASE_FIRST) {
        return;
    }
    if (zk_lease_write_done(&l->claim, snowflake_service_claim_write_rc(ev->result), ev->version) ==
        ZK_LEASE_RAISE_CEILING) {
        claim_install(n);
        return;
    }
    l->claim.state = ZK_LEASE_NONE;
    lease_next(n, 1);
}

void snowflake_service_claim_reply(struct snowflake_service *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (ev->op == OP_L_FIRST) {
        lease_got_first(n, ev);
    } else if (l->phase == LEASE_LIST && ev->op <= OP_L_FLIST) {
        lease_listed(n, ev);
        if (--l->pending == 0) {
            lease_read(n);
        }
    } else if (l->phase == LEASE_READ &&
               (ev->op == OP_L_READ || ev->op == OP_L_OWNERS || ev->op == OP_L_FREAD)) {
        lease_got_read(n, ev);
        l->pending--;
        lease_send_reads(n);
        if (l->pending == 0) {
            lease_choose(n);
        }
    } else if (l->phase == LEASE_TRY && ev->op >= OP_L_MKSLOT && ev->op <= OP_L_GET &&
               ev->arg == (uint64_t)l->cand[l->icand].slot) {
        lease_got_try(n, ev);
        if (--l->pending == 0) {
            lease_tried(n);
        }
    }
}

void snowflake_service_claim_publish(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    atomic_store(&l->stats.slot, l->hold.state == ZK_LEASE_NONE ? -1 : l->hold.slot);
    atomic_store(&l->stats.state, (int)l->hold.state);
}

/* The local cache remembers the slot and its reservation for the next start
 * (its slot first); the generator's ceiling does not wait for it. */
void snowflake_service_claim_store_cache(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    if (!l->cache_dirty || n->work_busy || l->hold.state == ZK_LEASE_NONE) {
        return;
    }
    l->cache_dirty = 0;
    if (snowflake_service_cache_write(n, l->hold.acked_ms) != LEAF_OK) {
        l->cache_dirty = 1;
    }
}

/* The claim's first reservation is acknowledged: the generator moves to it. */
static void claim_install(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    struct zk_lease_hold old = l->hold;
    pthread_mutex_lock(&n->lock);
    if (!n->stopping) {
        snowflake_gen_move(&n->gen, (int)l->claim.slot, l->claim.floor_ms, l->claim.acked_ms);
    }
    pthread_mutex_unlock(&n->lock);
    l->hold = l->claim;
    l->claim.state = ZK_LEASE_NONE;
    atomic_store(&l->stats.seen_held, 0);
    if (atomic_exchange(&l->stats.waiting, 0) && !n->stopping) {
        /* Started while every slot was held: this is the first slot. */
        atomic_store(&n->ready, 1);
        log_info("snowflake", "a lease slot freed up: serving as %s", n->layout.identity);
    }
    l->write_busy = l->resync_busy = 0;
    l->known_slot = l->hold.slot;
    l->known_ms = l->hold.acked_ms;
    l->own_slot = -1;
    l->slots[l->hold.slot].held = 1;
    n->worker_id = l->hold.slot;
    atomic_store(&n->stats.worker_id, n->worker_id);
    atomic_store(&n->stats.reserved_ms, l->hold.acked_ms);
    atomic_store(&n->stats.last_zk_report_ms, clock_wall_ms());
    atomic_fetch_add(&l->stats.claims, 1);
    /* The slot held before: its owner goes, its reservation stays. After an
     * expiry the owner went with the session (and may be someone else's now). */
    if (old.state == ZK_LEASE_HELD || old.state == ZK_LEASE_RESYNC) {
        if (old.slot != l->hold.slot) {
            claim_release(n, old.slot);
        }
    }
    if (l->purpose == LEASE_SWITCH) {
        int64_t us = (clock_mono_ns() - l->switch_started_ns) / 1000;
        atomic_fetch_add(&l->stats.switches, 1);
        atomic_store(&l->stats.last_switch_us, us);
        log_warn("snowflake",
                 "the clock stepped back: switched from lease slot %" PRId64 " to %" PRId64
                 " in %" PRId64 " us; slot %" PRId64 " keeps its reservation %" PRId64 " ms",
                 old.slot, l->hold.slot, us, old.slot, old.acked_ms);
    } else {
        log_info("snowflake",
                 "holding lease slot %" PRId64 " (worker ID %" PRId64
                 "): no ID at or below %" PRId64 " ms, reserved up to %" PRId64 " ms",
                 l->hold.slot, l->hold.slot, l->hold.floor_ms, l->hold.acked_ms);
    }
    l->phase = LEASE_IDLE;
    snowflake_service_claim_publish(n);
    l->cache_dirty = 1;
    snowflake_service_claim_store_cache(n);
}
/* ----- driving it ----- */

static void lease_on_retry(uv_timer_t *t) {
    struct snowflake_service *n = t->data;
    struct snowflake_lease *l = &n->lease;
    if (l->phase != LEASE_WAIT) {
        return;
    }
    l->phase = LEASE_IDLE;
    if (l->hold.state != ZK_LEASE_HELD && l->hold.state != ZK_LEASE_RESYNC) {
        snowflake_service_claim_list(n, l->hold.state == ZK_LEASE_NONE && !atomic_load(&n->ready)
                                            ? LEASE_START
                                            : LEASE_RECLAIM);
    }
}

static void claim_wait(struct snowflake_service *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->purpose == LEASE_SWITCH) {
        claim_give_up(n);
        return;
    }
    l->phase = LEASE_WAIT;
    l->pending = 0;
    uv_timer_start(&l->retry, lease_on_retry, LEASE_RETRY_MS, 0);
}
