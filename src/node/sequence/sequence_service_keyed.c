/*
 * Keyed sequences in the sequence service (docs/keyed-sequences.md): the service performs
 * what sequence/sequence_keyed.h decides, as it does for sequences (sequence_service_zk.c).
 *
 * ZooKeeper: /leafd/{leaf.name}/keyed/{space} holds a space's definition, {"step":N}
 * (sequence_record.h), and its children {section} (0..255) hold {"max":M}, created by a
 * section's first write. There is no node per key.
 *
 * Threads: event loops find the space, the key's slot and hash and prefetch its place in the
 * table without the lock (sequence_keyed_prepare and _prefetch read only what never changes once
 * published, sequence/sequence_keyed.h), then issue under svc->lock (sequence_service_keyed_next):
 * a key's owner is the primary, or sharded the owner of the slot of "keyed:<space>:<key>"; a
 * section is started on the first request after this node gained it (a new term, or sharded a slot
 * of it arrived: shards.own is only set after the previous owner's lease, docs/cluster.md); a
 * request that cannot issue now parks on its space's waiters. The control thread performs the
 * core's actions and reads unknown spaces (lookups; with leafd.sequence.autocreate it creates
 * an absent one, step SEQUENCE_KEYED_DEFAULT_STEP, as POST /api/keyed would), and wakes the
 * waiters when an answer changes something. The spaces' definitions and admin jobs are
 * sequence_service_keyed_space.c's; losing slots gives sections back
 * (sequence_service_keyed_give.c).
 * Layer: the node (src/node/sequence), between sequence_service_zk.c (which calls run and
 * on_zk) and sequence_service_shard.c (redirects).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "sequence_keyed.h"
#include "sequence_record.h"
#include "sequence_service.h"
#include "sequence_service_state.h"

#define KEYED_SECTION_BITS 8 /* SEQUENCE_KEYED_SECTIONS */
#define KEYED_SPACE_BITS 10  /* SEQUENCE_KEYED_MAX_SPACES */

/* An action's tag: the core's token with the space and section, to wake the space's waiters. */
static uint64_t keyed_arg(uint64_t token, int space, int section) {
    return (token << (KEYED_SECTION_BITS + KEYED_SPACE_BITS)) |
           ((uint64_t)space << KEYED_SECTION_BITS) | (uint64_t)section;
}

leaf_status_t sequence_service_keyed_init(struct sequence_service *svc) {
    struct seq_keyed_svc *ks = &svc->keyed;
    ks->running = -1;
    ks->jobs =
        (struct node_jobs){&svc->lock, ks->slots, SEQ_KEYED_JOBS, sizeof(ks->slots[0]), NULL};
    snprintf(ks->dir, sizeof(ks->dir), "/leafd/%s/keyed", svc->cfg->name);
    if (!svc->cfg->sequence_enable || svc->cfg->keyed_max_keys == 0) {
        return LEAF_OK; /* keyed requests answer LEAF_EUNAVAIL */
    }
    ks->core = sequence_keyed_new((size_t)svc->cfg->keyed_max_keys, NULL);
    ks->gensum =
        calloc((size_t)SEQUENCE_KEYED_MAX_SPACES * SEQUENCE_KEYED_SECTIONS, sizeof(*ks->gensum));
    if (ks->core == NULL || ks->gensum == NULL) {
        log_error("keyed", "out of memory creating the keyed sequences (%lld keys)",
                  (long long)svc->cfg->keyed_max_keys);
        sequence_service_keyed_free(svc);
        return LEAF_ENOMEM;
    }
    return LEAF_OK;
}

void sequence_service_keyed_free(struct sequence_service *svc) {
    if (svc->keyed.core != NULL) {
        sequence_keyed_free(svc->keyed.core);
    }
    free(svc->keyed.gensum);
    svc->keyed.core = NULL;
    svc->keyed.gensum = NULL;
}

/* ---- the request path (event-loop threads) ------------------------------------------------- */

static void keyed_wait_cancel(struct leaf_wait *w) {
    struct sequence_service *svc = w->data;
    pthread_mutex_lock(&svc->lock);
    leaf_wait_unlink(w);
    pthread_mutex_unlock(&svc->lock);
}

static void keyed_park(struct sequence_service *svc, struct leaf_wait_list *l,
                       struct leaf_wait *w) {
    if (w != NULL) {
        leaf_wait_link(l, w);
        w->data = svc;
        w->cancel = keyed_wait_cancel;
    }
}

/* The lookup of a space not known here, or a free one (NULL: all busy); lock held. */
static struct seq_keyed_lookup *keyed_lookup_find(struct seq_keyed_svc *ks, const char *name,
                                                  size_t len, int64_t now) {
    struct seq_keyed_lookup *spare = NULL;
    for (int i = 0; i < SEQ_KEYED_LOOKUPS; i++) {
        struct seq_keyed_lookup *l = &ks->lookups[i];
        if (l->state != SEQ_KEYED_FREE && l->len == len && memcmp(l->name, name, len) == 0) {
            return l;
        }
        int stale = (l->state == SEQ_KEYED_ABSENT || l->state == SEQ_KEYED_FAILED) &&
                    now >= l->until_ms && l->waiters.head == NULL;
        if (spare == NULL && (l->state == SEQ_KEYED_FREE || stale)) {
            spare = l;
        }
    }
    if (spare != NULL) {
        memset(spare, 0, sizeof(*spare));
        memcpy(spare->name, name, len);
        spare->len = len;
    }
    return spare;
}

/* A space this node does not know: LEAF_EAGAIN while it is read (w parked), LEAF_ENOTFOUND
 * when it was found absent lately, LEAF_EUNAVAIL when its read failed lately; lock held.
 * create (leafd.sequence.autocreate, a caller who may create): an absent space is created,
 * also one a caller who may not found absent lately. */
static leaf_status_t keyed_lookup(struct sequence_service *svc, const char *name, size_t len,
                                  int create, struct leaf_wait *w, int *kick) {
    int64_t now = clock_mono_ms();
    struct seq_keyed_lookup *l = keyed_lookup_find(&svc->keyed, name, len, now);
    if (l == NULL) {
        return LEAF_EUNAVAIL; /* SEQ_KEYED_LOOKUPS names read at once: try again */
    }
    int lately =
        (l->state == SEQ_KEYED_ABSENT || l->state == SEQ_KEYED_FAILED) && now < l->until_ms;
    if (lately && (l->state == SEQ_KEYED_FAILED || !create)) {
        return l->state == SEQ_KEYED_ABSENT ? LEAF_ENOTFOUND : LEAF_EUNAVAIL;
    }
    if (l->state == SEQ_KEYED_ABSENT || l->state == SEQ_KEYED_FAILED) {
        l->create = 0; /* a new read */
        l->tries = 0;
    }
    l->create |= create;
    if (l->state != SEQ_KEYED_SENT) {
        l->state = SEQ_KEYED_QUEUED;
        *kick = 1;
    }
    keyed_park(svc, &l->waiters, w);
    return LEAF_EAGAIN;
}

/* The sum of the section's slots' generations: another sum means a slot arrived (lock held). */
static uint32_t keyed_gensum(const struct sequence_service *svc, int section) {
    uint32_t sum = 0;
    if (svc->shards.on) {
        int first = section * SEQUENCE_KEYED_SLOTS_PER_SECTION;
        for (int s = first; s < first + SEQUENCE_KEYED_SLOTS_PER_SECTION; s++) {
            sum += svc->shards.gen[s];
        }
    }
    return sum;
}

/*
 * Starts the section when this node gained it since it last started it: a new term, or
 * (sharded) a slot of it arrived, so keys resident here start above whatever its other
 * owner issued. A section fenced in this term stays fenced (lock held).
 */
static leaf_status_t keyed_section_ready(struct sequence_service *svc, int space, int section,
                                         int *kick) {
    struct seq_keyed_svc *ks = &svc->keyed;
    const struct sequence_keyed_section *sec = sequence_keyed_section(ks->core, space, section);
    uint32_t *seen = &ks->gensum[space * SEQUENCE_KEYED_SECTIONS + section];
    uint32_t now = keyed_gensum(svc, section);
    if (sec->phase != SEQUENCE_KEYED_UNKNOWN && sec->term == svc->lease.term && *seen == now) {
        return LEAF_OK;
    }
    leaf_status_t rc = sequence_keyed_section_start(ks->core, &svc->lease, space, section);
    if (rc == LEAF_OK) {
        *seen = now;
        *kick = 1;
    }
    return rc;
}

/* Issues the key of ref (sequence_keyed_prepare(), before the lock) (lock held). */
static leaf_status_t keyed_issue(struct sequence_service *svc, const struct sequence_keyed_ref *ref,
                                 int64_t n, int64_t *first, struct leaf_wait *w, int *kick) {
    struct sequence_keyed *k = svc->keyed.core;
    if (ref->len < 1 || ref->len > SEQUENCE_KEYED_KEY_MAX || n < 1) {
        return LEAF_EINVAL;
    }
    if (!sequence_service_keyed_give_issuable(svc, ref->slot)) {
        return LEAF_EUNAVAIL; /* another node's key, or not taken over yet */
    }
    leaf_status_t rc = keyed_section_ready(
        svc, ref->space, (int)(ref->slot / SEQUENCE_KEYED_SLOTS_PER_SECTION), kick);
    if (rc == LEAF_OK) {
        rc = sequence_keyed_issue(k, &svc->lease, clock_mono_ms(), ref, n, first);
    }
    if (rc == LEAF_EAGAIN) {
        keyed_park(svc, &svc->keyed.waiters[ref->space], w);
    }
    if (rc == LEAF_EAGAIN || k->spaces[ref->space]->wanting > 0) {
        *kick = 1; /* a read or a raise (ahead, below half a step) for the control thread */
    }
    return rc;
}

void sequence_service_keyed_prefetch(struct sequence_service *svc, const char *space,
                                     size_t space_len, const char *key, size_t key_len) {
    if (svc == NULL || svc->keyed.core == NULL) {
        return;
    }
    /* No lock: the core's find and prefetch read only what never changes once published. */
    int index = sequence_keyed_space_find(svc->keyed.core, space, space_len);
    if (index >= 0) {
        sequence_keyed_prefetch(svc->keyed.core, index, key, key_len);
    }
}

leaf_status_t sequence_service_keyed_next(struct sequence_service *svc, const char *space,
                                          size_t space_len, const char *key, size_t key_len,
                                          int64_t n, int may_create, int64_t *first,
                                          struct leaf_wait *w, struct sequence_where *where) {
    if (w != NULL) {
        leaf_wait_cancel(w); /* a resumed request: leave whatever list it was on */
    }
    if (where != NULL) {
        where->known = 0;
    }
    if (svc == NULL || !svc->enabled || svc->keyed.core == NULL) {
        return LEAF_EUNAVAIL;
    }
    if (!sequence_keyed_name_ok(space, space_len)) {
        return LEAF_ENOTFOUND; /* no such space can exist */
    }
    /* The space, the key's slot and hash, and the prefetch of its place in the table, before the
     * lock (docs/keyed-sequences.md, "In the service"): a space once known stays known. */
    struct sequence_keyed_ref ref;
    int index = sequence_keyed_space_find(svc->keyed.core, space, space_len);
    if (index >= 0) {
        (void)sequence_keyed_prepare(svc->keyed.core, index, key, key_len, &ref);
    }
    int kick = 0;
    leaf_status_t rc;
    pthread_mutex_lock(&svc->lock);
    if (index < 0) {
        index = sequence_keyed_space_find(svc->keyed.core, space, space_len); /* learnt since? */
        if (index >= 0) {
            (void)sequence_keyed_prepare(svc->keyed.core, index, key, key_len, &ref);
        }
    }
    if (index < 0) {
        rc = keyed_lookup(svc, space, space_len, svc->cfg->sequence_autocreate && may_create, w,
                          &kick);
    } else {
        rc = keyed_issue(svc, &ref, n, first, w, &kick);
    }
    if (rc == LEAF_EUNAVAIL && where != NULL && index >= 0) {
        if (svc->shards.on) {
            sequence_service_shard_where(svc, (int)ref.slot, where);
        } else if (!svc->lease.primary) {
            *where = svc->where;
        }
    }
    pthread_mutex_unlock(&svc->lock);
    if (kick) {
        uv_async_send(&svc->async);
    }
    return rc;
}

/* ---- the control thread -------------------------------------------------------------------- */

/* A lookup's end for a while: absent or failed, its waiters woken (lock held). */
static void keyed_lookup_end(struct seq_keyed_lookup *l, enum seq_keyed_lookup_state state) {
    l->state = state;
    l->until_ms =
        clock_mono_ms() + (state == SEQ_KEYED_ABSENT ? SEQ_KEYED_ABSENT_MS : SEQ_KEYED_FAILED_MS);
    leaf_wait_wake_all(&l->waiters);
}

/* Sends lookup i's read (op OP_KEYED_SPACE), its autocreate (OP_KEYED_AUTO) or the re-creation
 * of /keyed for it (OP_KEYED_AUTO_DIR); a request not sent fails the lookup. */
static void keyed_lookup_send(struct sequence_service *svc, int i, int op) {
    struct seq_keyed_svc *ks = &svc->keyed;
    char path[SEQ_PATH_MAX], data[SEQUENCE_RECORD_MAX_LEN];
    size_t len =
        sequence_record_format_int(data, sizeof(data), "step", SEQUENCE_KEYED_DEFAULT_STEP);
    pthread_mutex_lock(&svc->lock);
    snprintf(path, sizeof(path), "%s/%s", ks->dir, ks->lookups[i].name);
    ks->lookups[i].tries += op == OP_KEYED_AUTO;
    pthread_mutex_unlock(&svc->lock);
    leaf_status_t rc;
    if (op == OP_KEYED_SPACE) {
        rc = zk_session_aget(&svc->zsub, op, (uint64_t)i, path);
    } else if (op == OP_KEYED_AUTO) {
        rc = zk_session_acreate2(&svc->zsub, op, (uint64_t)i, path, data, len, ZK_MODE_PERSISTENT);
    } else {
        rc = zk_session_acreate2(&svc->zsub, op, (uint64_t)i, ks->dir, "", 0, ZK_MODE_PERSISTENT);
    }
    if (rc != LEAF_OK) {
        log_warn("keyed", "%s: the request could not be sent (%s)", path, leaf_strstatus(rc));
        pthread_mutex_lock(&svc->lock);
        keyed_lookup_end(&ks->lookups[i], SEQ_KEYED_FAILED);
        pthread_mutex_unlock(&svc->lock);
    }
}

/* Sends the reads of the spaces asked for by event loops. */
static void keyed_run_lookups(struct sequence_service *svc) {
    struct seq_keyed_svc *ks = &svc->keyed;
    for (int i = 0; i < SEQ_KEYED_LOOKUPS; i++) {
        pthread_mutex_lock(&svc->lock);
        int go = ks->lookups[i].state == SEQ_KEYED_QUEUED;
        if (go) {
            ks->lookups[i].state = SEQ_KEYED_SENT;
        }
        pthread_mutex_unlock(&svc->lock);
        if (go) {
            keyed_lookup_send(svc, i, OP_KEYED_SPACE);
        }
    }
}

/* The answer to a lookup's read, autocreate or /keyed; the next request to send, or -1 (lock
 * held). A create that finds the space exists (another node created it) reads it. */
static int keyed_lookup_answer(struct sequence_service *svc, struct seq_keyed_lookup *l,
                               const struct zk_event *ev) {
    struct seq_keyed_svc *ks = &svc->keyed;
    char data[SEQUENCE_RECORD_MAX_LEN];
    const char *def = ev->data;
    size_t len = ev->len;
    if (ev->op == OP_KEYED_AUTO && ev->result == ZK_RESULT_OK) {
        def = data;
        len = sequence_record_format_int(data, sizeof(data), "step", SEQUENCE_KEYED_DEFAULT_STEP);
        log_info("keyed",
                 "keyed space %s created on first use (leafd.sequence.autocreate, step %d)",
                 l->name, SEQUENCE_KEYED_DEFAULT_STEP);
    }
    int may_create = l->create && l->tries < SEQ_KEYED_CREATE_TRIES &&
                     ks->core->nspaces < SEQUENCE_KEYED_MAX_SPACES;
    if (ev->op == OP_KEYED_AUTO_DIR) {
        if (ev->result == ZK_RESULT_OK || ev->result == ZK_RESULT_EXISTS) {
            return OP_KEYED_AUTO;
        }
    } else if (ev->result == ZK_RESULT_OK) {
        if (sequence_service_keyed_space_learn(svc, l->name, def, len) == LEAF_OK) {
            l->state = SEQ_KEYED_FREE;
            leaf_wait_wake_all(&l->waiters);
            return -1;
        }
    } else if (ev->op == OP_KEYED_AUTO && ev->result == ZK_RESULT_EXISTS) {
        return OP_KEYED_SPACE;
    } else if (ev->result == ZK_RESULT_NONODE && ev->op == OP_KEYED_SPACE) {
        if (may_create) {
            return OP_KEYED_AUTO;
        }
        keyed_lookup_end(l, SEQ_KEYED_ABSENT);
        return -1;
    } else if (ev->result == ZK_RESULT_NONODE && may_create) {
        return OP_KEYED_AUTO_DIR; /* /keyed is gone (a tree wiped by hand) */
    }
    if (ev->op != OP_KEYED_SPACE) {
        log_warn("keyed", "creating %s/%s on first use failed (%s)", ks->dir, l->name,
                 leaf_strstatus(ev->rc));
    }
    keyed_lookup_end(l, SEQ_KEYED_FAILED);
    return -1;
}

static void keyed_on_lookup(struct sequence_service *svc, const struct zk_event *ev) {
    if (ev->arg >= SEQ_KEYED_LOOKUPS) {
        return;
    }
    int next = -1;
    pthread_mutex_lock(&svc->lock);
    struct seq_keyed_lookup *l = &svc->keyed.lookups[ev->arg];
    if (l->state == SEQ_KEYED_SENT) {
        next = keyed_lookup_answer(svc, l, ev);
    }
    pthread_mutex_unlock(&svc->lock);
    if (next >= 0) {
        keyed_lookup_send(svc, (int)ev->arg, next);
    }
}

/* ---- the sections: perform what the core asks ---------------------------------------------- */

/* The answer to a section's request; a section fenced by it is logged (lock held). */
static void keyed_done(struct sequence_service *svc, uint64_t arg, enum sequence_result r,
                       const char *data, size_t len, int32_t version) {
    struct sequence_keyed *k = svc->keyed.core;
    int space = (int)((arg >> KEYED_SECTION_BITS) & ((1u << KEYED_SPACE_BITS) - 1));
    int section = (int)(arg & ((1u << KEYED_SECTION_BITS) - 1));
    const char *name = sequence_keyed_space_name(k, space);
    int64_t stored = -1;
    if (name == NULL) {
        return;
    }
    /* Only a read answers with the record: a create answers with the path it made. */
    const struct sequence_keyed_section *sec = sequence_keyed_section(k, space, section);
    int read = sec != NULL && sec->inflight_op == SEQUENCE_OP_READ;
    if (read && r == SEQUENCE_RESULT_OK && data != NULL &&
        sequence_record_parse_max(data, len, &stored) != LEAF_OK) {
        log_error("keyed", "%s/%s/%d holds no {\"max\":M}: %.*s; the section waits for a repair",
                  svc->keyed.dir, name, section, (int)(len < 80 ? len : 80), data);
    }
    uint64_t fences = sequence_keyed_stats(k, space)->fences;
    (void)sequence_keyed_done(k, &svc->lease, arg >> (KEYED_SECTION_BITS + KEYED_SPACE_BITS),
                              clock_mono_ms(), r, data, len, version);
    if (sequence_keyed_stats(k, space)->fences != fences) {
        log_error("keyed",
                  "%s/%s/%d: ZooKeeper's max (%" PRId64 ") went below the one this node wrote "
                  "(restored by hand?): the section issues nothing here until its next owner "
                  "starts it",
                  svc->keyed.dir, name, section, stored);
    }
    leaf_wait_wake_all(&svc->keyed.waiters[space]);
}

static void keyed_perform(struct sequence_service *svc, const struct sequence_keyed_action *a,
                          const char *path) {
    uint64_t arg = keyed_arg(a->io.token, a->space, a->section);
    leaf_status_t rc = LEAF_ERR;
    switch (a->io.op) {
    case SEQUENCE_OP_READ: rc = zk_session_aget(&svc->zsub, OP_KEYED_SECTION, arg, path); break;
    case SEQUENCE_OP_CREATE:
        rc = zk_session_acreate2(&svc->zsub, OP_KEYED_SECTION, arg, path, a->io.data, a->io.len,
                                 ZK_MODE_PERSISTENT);
        break;
    case SEQUENCE_OP_WRITE:
        rc = zk_session_aset_version(&svc->zsub, OP_KEYED_SECTION, arg, path, a->io.data, a->io.len,
                                     a->io.version);
        break;
    default: return;
    }
    if (rc != LEAF_OK) {
        pthread_mutex_lock(&svc->lock); /* not sent at all: it cannot have landed */
        keyed_done(svc, arg, SEQUENCE_RESULT_FAILED, NULL, 0, 0);
        pthread_mutex_unlock(&svc->lock);
    }
}

static void keyed_run_sections(struct sequence_service *svc) {
    for (;;) {
        struct sequence_keyed_action a;
        char path[SEQ_PATH_MAX];
        pthread_mutex_lock(&svc->lock);
        int act = svc->connected &&
                  sequence_keyed_action(svc->keyed.core, &svc->lease, clock_mono_ms(), &a);
        if (act) {
            snprintf(path, sizeof(path), "%s/%s/%d", svc->keyed.dir,
                     sequence_keyed_space_name(svc->keyed.core, a.space), a.section);
        }
        pthread_mutex_unlock(&svc->lock);
        if (!act) {
            return;
        }
        keyed_perform(svc, &a, path);
    }
}

void sequence_service_keyed_run(struct sequence_service *svc) {
    if (svc->keyed.core == NULL) {
        return;
    }
    keyed_run_lookups(svc);
    sequence_service_keyed_space_run(svc);
    keyed_run_sections(svc);
}

void sequence_service_keyed_on_zk(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_keyed_svc *ks = &svc->keyed;
    if (ks->core == NULL) {
        return;
    }
    switch (ev->op) {
    case OP_KEYED_SPACE:
    case OP_KEYED_AUTO:
    case OP_KEYED_AUTO_DIR: keyed_on_lookup(svc, ev); break;
    case OP_KEYED_SECTION:
        pthread_mutex_lock(&svc->lock);
        keyed_done(svc, ev->arg, sequence_service_table_result(ev->result), ev->data, ev->len,
                   ev->version);
        pthread_mutex_unlock(&svc->lock);
        break;
    default: sequence_service_keyed_space_on_zk(svc, ev); break;
    }
    keyed_run_sections(svc);
}

void sequence_service_keyed_expired(struct sequence_service *svc) {
    struct seq_keyed_svc *ks = &svc->keyed;
    sequence_service_keyed_space_expired(svc);
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < SEQ_KEYED_LOOKUPS; i++) {
        if (ks->lookups[i].state == SEQ_KEYED_SENT) {
            ks->lookups[i].state = SEQ_KEYED_QUEUED; /* read again on the new session */
        }
    }
    /* Every section stops: its answers went with the session, and a giveback later (a demote)
     * would write with a version another owner may have read since. */
    for (int i = 0; ks->core != NULL && i < ks->core->nspaces; i++) {
        for (int s = 0; s < SEQUENCE_KEYED_SECTIONS; s++) {
            sequence_keyed_section_stop(ks->core, i, s);
        }
    }
    pthread_mutex_unlock(&svc->lock);
}
