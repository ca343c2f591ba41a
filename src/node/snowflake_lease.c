/*
 * Lease mode (contract section 12): the node's worker ID is a slot under
 * /snowflake/{leaf.name}/leaf_lease, claimed through an EPHEMERAL owner child
 * and fenced by the slot's "reserved", written with versioned sets. The
 * decisions are zk/zk_lease.c's; this file carries them out on the control
 * thread with the asynchronous ZooKeeper calls, and moves the generator.
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
 * moves on to the next candidate; none left: LIST again after a second.
 *
 * Threads: everything here runs on the control thread, except
 * snowflake_lease_want_switch() (any event loop, under the generator's lock).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "snowflake_impl.h"

#define LEASE_RETRY_MS 250
#define LEASE_START_WAIT_MS 30000
#define LEASE_SWITCH_BLOCK_MS 1000
/* Reads in flight at once: ZooKeeper stops reading a connection with too many
 * outstanding requests (globalOutstandingLimit), and the session may expire. */
#define LEASE_READ_WINDOW 128

/* Slots read per claim once every slot was created: a random sample, so a
 * start costs a few hundred reads, not two per slot. */
#define LEASE_SAMPLE 96

enum { READ_SLOT, READ_OWNERS, READ_FOREVER };

static uint64_t lease_rand(void *ctx) {
    struct snowflake_lease *l = ctx;
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    return l->rng;
}

static void lease_publish(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    atomic_store(&l->stats.slot, l->hold.state == ZK_LEASE_NONE ? -1 : l->hold.slot);
    atomic_store(&l->stats.state, (int)l->hold.state);
}

void snowflake_lease_init(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    int bits = n->gen.layout.bits[SNOWFLAKE_WORKER];
    int64_t slots = bits >= 16 ? ZK_LEASE_MAX_SLOTS : INT64_C(1) << bits;
    l->nslots = (int)slots;
    l->known_slot = -1;
    l->known_ms = -1;
    l->rng = (uint64_t)clock_mono_ns() ^ ((uint64_t)clock_wall_ms() << 20) ^ 0x9E3779B97F4A7C15ULL;
    l->retry.data = n;
    atomic_init(&l->stats.slot, -1);
}

void snowflake_lease_free(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    free(l->slots);
    if (l->fnames != NULL) {
        for (int i = 0; i < l->nslots; i++) {
            free(l->fnames[i]);
        }
        free(l->fnames);
    }
    zk_names_free(l->temp_names, l->ntemp);
    free(l->reads);
    l->reads = NULL;
    l->nreads = l->ireads = 0;
    l->slots = NULL;
    l->fnames = NULL;
    l->temp_names = NULL;
    l->ntemp = 0;
}

static int connected(struct snowflake_node *n) {
    return zk_session_state(&n->zk) == ZK_STATE_CONNECTED;
}

/* ----- the snapshot: LIST and READ ----- */

static void lease_wait(struct snowflake_node *n);
static void lease_choose(struct snowflake_node *n);

static int lease_reset_snapshot(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    snowflake_lease_free(n);
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

static void lease_list(struct snowflake_node *n, enum lease_purpose purpose) {
    struct snowflake_lease *l = &n->lease;
    l->purpose = purpose;
    l->pending = 0;
    l->phase = LEASE_LIST;
    if (!connected(n) || lease_reset_snapshot(n) != 0) {
        lease_wait(n);
        return;
    }
    const char *paths[] = {n->layout.lease, n->layout.forever, n->layout.temporary};
    int ops[] = {OP_L_LIST, OP_L_FLIST, OP_L_TLIST};
    for (int i = 0; i < 3; i++) {
        if (zk_session_achildren2(&n->zk, ops[i], 0, paths[i]) == LEAF_OK) {
            l->pending++;
        }
    }
    if (l->pending < 3) {
        lease_wait(n); /* the replies still due are ignored in WAIT */
    }
}

/* Takes a listing's names into the snapshot. */
static void lease_listed(struct snowflake_node *n, const struct zk_event *ev) {
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
    if (ev->op == OP_L_TLIST && ev->rc == LEAF_OK) {
        l->temp_names = ev->names; /* taken over: the event is freed without them */
        l->ntemp = ev->nnames;
        ((struct zk_event *)ev)->names = NULL;
        ((struct zk_event *)ev)->nnames = 0;
    }
}

/* 1 when the leaf_forever node name belongs to an identity alive in leaf_temporary:
 * a node still running in forever mode, whose worker ID no slot may take. */
static int forever_live(const struct snowflake_lease *l, const char *fname) {
    const char *dash = strrchr(fname, '-');
    size_t idlen = dash != NULL ? (size_t)(dash - fname) : 0;
    for (int i = 0; idlen > 0 && i < l->ntemp; i++) {
        if (strlen(l->temp_names[i]) == idlen && memcmp(l->temp_names[i], fname, idlen) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Sends READ's next calls while fewer than LEASE_READ_WINDOW are in flight. */
static void lease_send_reads(struct snowflake_node *n) {
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
                               ? zk_session_achildren2(&n->zk, ops[kind], (uint64_t)slot, path)
                               : zk_session_aget(&n->zk, ops[kind], (uint64_t)slot, path);
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
 * (their floor is 0, the oldest possible) a random sample of LEASE_SAMPLE.
 */
static void lease_pick_reads(struct snowflake_lease *l, int full, char *want) {
    int npool = 0;
    for (int i = 0; i < l->nslots; i++) {
        int used = l->slots[i].exists || l->fnames[i] != NULL;
        want[i] = used && (i == l->known_slot);
        if (used && full && i != l->known_slot) {
            l->reads[npool++] = i; /* the pool, before reads[] holds the calls */
        }
    }
    int take = npool < LEASE_SAMPLE ? npool : LEASE_SAMPLE;
    for (int k = 0; k < take; k++) {
        int j = k + (int)(lease_rand(l) % (uint64_t)(npool - k));
        int t = l->reads[k];
        l->reads[k] = l->reads[j];
        l->reads[j] = t;
        want[l->reads[k]] = 1;
    }
}

/* After LIST: queue the reads (a slot's data and owner, a leaf_forever node's
 * data); slots not read are not candidates this time. */
static void lease_read(struct snowflake_node *n) {
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
        lease_wait(n);
        return;
    }
    lease_pick_reads(l, l->full_read, want);
    for (int i = 0; i < l->nslots; i++) {
        struct zk_lease_slot *s = &l->slots[i];
        if (l->fnames[i] != NULL && forever_live(l, l->fnames[i])) {
            s->held = 1; /* a node still running in forever mode */
        } else if (l->fnames[i] != NULL && want[i]) {
            l->reads[l->nreads++] = i << 2 | READ_FOREVER;
        } else if (l->fnames[i] != NULL) {
            s->held = 1;
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

static void lease_got_read(struct snowflake_node *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    int64_t k = (int64_t)ev->arg;
    if (k < 0 || k >= l->nslots) {
        return;
    }
    struct zk_lease_slot *s = &l->slots[k];
    if (ev->op == OP_L_OWNERS) {
        for (int i = 0; ev->rc == LEAF_OK && i < ev->nnames; i++) {
            s->held |= strcmp(ev->names[i], ZK_LEASE_OWNER) == 0;
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

static void lease_try(struct snowflake_node *n);

/*
 * The highest clock reading and issued time of the current slot: a clock
 * this far behind it has stepped back. The floor is left out on purpose: a
 * slot taken back just after a loss has its floor ahead of the clock (up to
 * reserve.ms), which is waited out, not a step to switch away from.
 * Called with the generator's lock held.
 */
static int64_t gen_high_locked(const struct snowflake_gen *g) {
    return g->max_seen_ms > g->last_ms ? g->max_seen_ms : g->last_ms;
}

static int64_t gen_high(struct snowflake_node *n) {
    pthread_mutex_lock(&n->lock);
    int64_t h = gen_high_locked(&n->gen);
    pthread_mutex_unlock(&n->lock);
    return h;
}

/* Fills the candidates from the snapshot (none when there is no snapshot). */
static void lease_candidates(struct snowflake_node *n) {
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
        .rand = lease_rand,
        .rand_ctx = l,
    };
    int k = -1;
    if (listed != NULL && switching) {
        zk_lease_switch_choose(&c, gen_high(n), n->cfg->switch_after_ms, l->cand, LEASE_CANDIDATES,
                               &k);
    } else if (listed != NULL) {
        k = zk_lease_choose(&c, l->cand, LEASE_CANDIDATES);
    }
    free(listed);
    l->ncand = k > 0 ? k : 0;
    l->icand = 0;
}

static void lease_choose(struct snowflake_node *n) {
    lease_candidates(n);
    lease_try(n);
}

static void lease_release(struct snowflake_node *n, int64_t slot) {
    char path[ZK_PATH_MAX];
    if (zk_lease_owner_path(&n->layout, slot, path, sizeof(path)) == LEAF_OK) {
        zk_session_adelete(&n->zk, OP_L_RELEASE, (uint64_t)slot, path, -1);
    }
}

static size_t lease_data(struct snowflake_node *n, int64_t reserved, uint64_t token, char *buf,
                         size_t cap) {
    struct zk_lease_data d = {.reserved = reserved, .port = n->self.port, .token = token};
    snprintf(d.ip, sizeof(d.ip), "%s", n->self.ip);
    return zk_lease_format_data(&d, buf, cap);
}

static void lease_give_up(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
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
    lease_wait(n);
}

/* Sends the pipelined create-slot, create-owner and read-back of the next candidate. */
static void lease_try(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->icand >= l->ncand || !connected(n)) {
        lease_give_up(n);
        return;
    }
    const struct zk_lease_candidate *c = &l->cand[l->icand];
    char slot[ZK_PATH_MAX], owner[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    size_t len = lease_data(n, c->floor_ms, 0, data, sizeof(data));
    l->phase = LEASE_TRY;
    l->pending = 0;
    l->owner_rc = -1;
    l->got = 0;
    if (zk_lease_slot_path(&n->layout, c->slot, slot, sizeof(slot)) != LEAF_OK ||
        zk_lease_owner_path(&n->layout, c->slot, owner, sizeof(owner)) != LEAF_OK || len == 0) {
        lease_give_up(n);
        return;
    }
    uint64_t arg = (uint64_t)c->slot;
    if (!c->exists && zk_session_acreate2(&n->zk, OP_L_MKSLOT, arg, slot, data, len,
                                          ZK_MODE_PERSISTENT) == LEAF_OK) {
        l->pending++;
    }
    if (zk_session_acreate2(&n->zk, OP_L_OWNER, arg, owner, n->layout.identity,
                            strlen(n->layout.identity), ZK_MODE_EPHEMERAL) == LEAF_OK) {
        l->pending++;
    }
    if (zk_session_aget(&n->zk, OP_L_GET, arg, slot) == LEAF_OK) {
        l->pending++;
    }
}

static void lease_next(struct snowflake_node *n, int release) {
    struct snowflake_lease *l = &n->lease;
    if (release) {
        lease_release(n, l->cand[l->icand].slot);
    }
    l->icand++;
    lease_try(n);
}

/* All replies of a TRY are in: begin the hold and send its first reservation. */
static void lease_tried(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    const struct zk_lease_candidate *c = &l->cand[l->icand];
    if (l->owner_rc == ZK_RESULT_EXISTS || l->owner_rc == ZK_RESULT_NONODE) {
        lease_next(n, 0); /* lost the race, or the slot vanished */
        return;
    }
    if (l->owner_rc != ZK_RESULT_OK) {
        log_warn("snowflake", "claiming lease slot %" PRId64 ": the owner's create failed",
                 c->slot);
        lease_wait(n);
        return;
    }
    uint64_t token = 0;
    while (token == 0) {
        token = lease_rand(l);
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
    char path[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    size_t len = lease_data(n, reserved, token, data, sizeof(data));
    zk_lease_write_sent(&l->claim, reserved);
    l->phase = LEASE_FIRST;
    if (len == 0 || zk_lease_slot_path(&n->layout, c->slot, path, sizeof(path)) != LEAF_OK ||
        zk_session_aset_version(&n->zk, OP_L_FIRST, token, path, data, len, l->claim.version) !=
            LEAF_OK) {
        lease_next(n, 1);
    }
}

static void lease_got_try(struct snowflake_node *n, const struct zk_event *ev) {
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

/* ----- holding a slot ----- */

static enum zk_lease_write_rc write_rc(enum zk_result r) {
    return r == ZK_RESULT_OK           ? ZK_LEASE_WRITE_OK
           : r == ZK_RESULT_BADVERSION ? ZK_LEASE_WRITE_BADVERSION
           : r == ZK_RESULT_NONODE     ? ZK_LEASE_WRITE_NONODE
                                       : ZK_LEASE_WRITE_UNKNOWN;
}

static void lease_store_cache(struct snowflake_node *n);

/* The claim's first reservation is acknowledged: the generator moves to it. */
static void lease_install(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    struct zk_lease_hold old = l->hold;
    pthread_mutex_lock(&n->lock);
    if (!n->stopping) {
        snowflake_gen_move(&n->gen, (int)l->claim.slot, l->claim.floor_ms, l->claim.acked_ms);
    }
    pthread_mutex_unlock(&n->lock);
    l->hold = l->claim;
    l->claim.state = ZK_LEASE_NONE;
    l->write_busy = l->resync_busy = 0;
    l->known_slot = l->hold.slot;
    l->known_ms = l->hold.acked_ms;
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
            lease_release(n, old.slot);
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
    lease_publish(n);
    l->cache_dirty = 1;
    lease_store_cache(n);
}

static void lease_got_first(struct snowflake_node *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (ev->arg != l->claim.token || l->phase != LEASE_FIRST) {
        return;
    }
    if (zk_lease_write_done(&l->claim, write_rc(ev->result), ev->version) ==
        ZK_LEASE_RAISE_CEILING) {
        lease_install(n);
        return;
    }
    l->claim.state = ZK_LEASE_NONE;
    lease_next(n, 1);
}

/* The held slot was lost (fenced, deleted, or the session expired). */
static void lease_lost(struct snowflake_node *n, const char *why) {
    struct snowflake_lease *l = &n->lease;
    zk_lease_lose(&l->hold);
    atomic_fetch_add(&l->stats.claims_lost, 1);
    lease_publish(n);
    log_warn("snowflake",
             "lost lease slot %" PRId64 " (%s): issuing only below its acknowledged "
             "reservation %" PRId64 " ms, then none until a slot is claimed again",
             l->hold.slot, why, l->hold.acked_ms);
}

static void lease_act(struct snowflake_node *n, enum zk_lease_action a) {
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
        lease_store_cache(n);
    } else if (a == ZK_LEASE_LOST_SLOT) {
        atomic_fetch_add(&l->stats.fence_failures, 1);
        log_error("snowflake",
                  "fence: lease slot %" PRId64 " was written by someone else (or deleted); "
                  "this node no longer extends it",
                  l->hold.slot);
        lease_lost(n, "fenced");
        if (l->phase == LEASE_IDLE) {
            lease_list(n, LEASE_RECLAIM);
        }
    }
    lease_publish(n);
}

static void lease_got_hold(struct snowflake_node *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (ev->arg != l->hold.token) {
        return; /* a slot held before */
    }
    if (ev->op == OP_L_SET) {
        l->write_busy = 0;
        lease_act(n, zk_lease_write_done(&l->hold, write_rc(ev->result), ev->version));
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
static void lease_extend(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    struct zk_lease_hold *h = &l->hold;
    char path[ZK_PATH_MAX], data[ZK_LEASE_DATA_MAX];
    int64_t now = clock_wall_ms();
    if (!connected(n) || zk_lease_slot_path(&n->layout, h->slot, path, sizeof(path)) != LEAF_OK) {
        return;
    }
    if (h->state == ZK_LEASE_RESYNC && !l->resync_busy) {
        l->resync_busy = zk_session_aget(&n->zk, OP_L_RESYNC, h->token, path) == LEAF_OK;
        return;
    }
    if (l->write_busy || !zk_lease_should_write(h, now, n->cfg->reserve_ms)) {
        return;
    }
    int64_t reserved = zk_lease_next_reserved(h, now, n->cfg->reserve_ms);
    size_t len = lease_data(n, reserved, h->token, data, sizeof(data));
    if (len == 0) {
        return;
    }
    zk_lease_write_sent(h, reserved);
    l->write_busy =
        zk_session_aset_version(&n->zk, OP_L_SET, h->token, path, data, len, h->version) == LEAF_OK;
    if (!l->write_busy) {
        h->pending_ms = -1; /* refused before it was sent: nothing in flight */
    }
}

/* The local cache remembers the slot and its reservation for the next start
 * (its slot first); the generator's ceiling does not wait for it. */
static void lease_store_cache(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    if (!l->cache_dirty || n->work_busy || l->hold.state == ZK_LEASE_NONE) {
        return;
    }
    n->work_busy = 1;
    n->work_value = l->hold.acked_ms;
    l->cache_dirty = 0;
    if (uv_queue_work(n->loop, &n->work, snowflake_node_write_work, snowflake_node_write_done) !=
        0) {
        log_error("snowflake", "uv_queue_work(cache write %s) failed", n->cache_path);
        n->work_busy = 0;
        l->cache_dirty = 1;
    }
}

/* ----- driving it ----- */

static void lease_on_retry(uv_timer_t *t) {
    struct snowflake_node *n = t->data;
    struct snowflake_lease *l = &n->lease;
    if (l->phase != LEASE_WAIT) {
        return;
    }
    l->phase = LEASE_IDLE;
    if (l->hold.state != ZK_LEASE_HELD && l->hold.state != ZK_LEASE_RESYNC) {
        lease_list(n, l->hold.state == ZK_LEASE_NONE && !atomic_load(&n->ready) ? LEASE_START
                                                                                : LEASE_RECLAIM);
    }
}

static void lease_wait(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->purpose == LEASE_SWITCH) {
        lease_give_up(n);
        return;
    }
    l->phase = LEASE_WAIT;
    l->pending = 0;
    uv_timer_start(&l->retry, lease_on_retry, LEASE_RETRY_MS, 0);
}

void snowflake_lease_cron(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    if (l->hold.state == ZK_LEASE_HELD || l->hold.state == ZK_LEASE_RESYNC) {
        lease_extend(n);
    } else if (l->phase == LEASE_IDLE && connected(n)) {
        lease_list(n, LEASE_RECLAIM);
    }
    lease_store_cache(n);
}

static void lease_phase_reply(struct snowflake_node *n, const struct zk_event *ev) {
    struct snowflake_lease *l = &n->lease;
    if (l->phase == LEASE_LIST && ev->op <= OP_L_TLIST) {
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

void snowflake_lease_event(struct snowflake_node *n, const struct zk_event *ev) {
    if (ev->gen != n->zk.gen) {
        return; /* from a session already replaced */
    }
    switch (ev->op) {
    case OP_L_FIRST: lease_got_first(n, ev); break;
    case OP_L_SET:
    case OP_L_RESYNC: lease_got_hold(n, ev); break;
    case OP_L_RELEASE: break;
    default: lease_phase_reply(n, ev); break;
    }
}

void snowflake_lease_state(struct snowflake_node *n, int state) {
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
        lease_list(n, LEASE_RECLAIM);
    }
}

/* Control thread, on every wake-up: an event loop saw the clock far behind. */
void snowflake_lease_poke(struct snowflake_node *n) {
    struct snowflake_lease *l = &n->lease;
    if (!atomic_exchange(&l->switch_wanted, 0) || l->phase != LEASE_IDLE ||
        l->hold.state != ZK_LEASE_HELD || clock_mono_ms() < l->switch_block_until) {
        return;
    }
    int64_t now = clock_wall_ms();
    if (zk_lease_step_classify(now, gen_high(n), n->cfg->switch_after_ms) != ZK_LEASE_STEP_SWITCH) {
        return;
    }
    l->switch_started_ns = atomic_load(&l->switch_asked_ns);
    l->purpose = LEASE_SWITCH;
    /* The snapshot of the last claim first (never-created slots are below any
     * clock); LIST again only when it offers nothing. */
    lease_candidates(n);
    if (l->ncand > 0) {
        lease_try(n);
    } else {
        lease_list(n, LEASE_SWITCH);
    }
}

/* Any event loop, under the generator's lock: the clock is behind by wait_ms. */
void snowflake_lease_want_switch(struct snowflake_node *n, int64_t wait_ms) {
    struct snowflake_lease *l = &n->lease;
    if (wait_ms <= n->cfg->switch_after_ms ||
        gen_high_locked(&n->gen) - clock_wall_ms() <= n->cfg->switch_after_ms ||
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

/* Start-up: claim a slot, running the control loop until held or given up. */
leaf_status_t snowflake_lease_start(struct snowflake_node *n, const struct zk_cache_data *cache) {
    struct snowflake_lease *l = &n->lease;
    if (cache != NULL && cache->worker_id >= 0 && cache->worker_id < l->nslots) {
        l->known_slot = cache->worker_id;
        l->known_ms = cache->timestamp;
    }
    uv_timer_init(n->loop, &l->retry);
    uv_timer_t deadline;
    uv_timer_init(n->loop, &deadline);
    uv_timer_start(&deadline, lease_deadline, LEASE_START_WAIT_MS, 0);
    int64_t until = clock_mono_ms() + LEASE_START_WAIT_MS;
    lease_list(n, LEASE_START);
    while (l->hold.state == ZK_LEASE_NONE && clock_mono_ms() < until) {
        uv_run(n->loop, UV_RUN_ONCE);
    }
    uv_close((uv_handle_t *)&deadline, lease_closed);
    uv_run(n->loop, UV_RUN_NOWAIT);
    if (l->hold.state == ZK_LEASE_NONE) {
        log_error("snowflake",
                  "no lease slot could be claimed under %s within %d s (all %d held, or "
                  "ZooKeeper unreachable)",
                  n->layout.lease, LEASE_START_WAIT_MS / 1000, l->nslots);
        return LEAF_EUNAVAIL;
    }
    /* Serve only once the clock is above the slot's floor (within startup.max.wait.ms). */
    int64_t gap = l->hold.floor_ms + 1 - clock_wall_ms();
    if (gap > 0) {
        log_warn("snowflake",
                 "waiting %" PRId64 " ms for the clock to pass lease slot %" PRId64 "'s floor", gap,
                 l->hold.slot);
        struct timespec ts = {(time_t)(gap / 1000), (long)(gap % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return LEAF_OK;
}

void snowflake_lease_close(struct snowflake_node *n) {
    if (n->lease.retry.loop != NULL) {
        uv_close((uv_handle_t *)&n->lease.retry, lease_closed);
    }
}
