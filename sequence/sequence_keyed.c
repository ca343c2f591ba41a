/* Keyed sequences, the pure core: see sequence_keyed.h and docs/keyed-sequences.md. */
#include "sequence_keyed.h"

#include <stdlib.h>
#include <string.h>

#include "sequence_keyslot.h"
#include "sequence_record.h"

/* A token is (request number << 18) | (space << 8) | section: done() finds its section. */
#define KEYED_TOKEN_SHIFT 18

static const char *const keyed_phase_names[] = {"unknown", "reading", "serving", "fenced"};

const char *sequence_keyed_phase_name(enum sequence_keyed_phase p) {
    return (unsigned)p < sizeof(keyed_phase_names) / sizeof(keyed_phase_names[0])
               ? keyed_phase_names[p]
               : "?";
}

static int64_t max64(int64_t a, int64_t b) {
    return a > b ? a : b;
}

static struct sequence_keyed_space *keyed_space(const struct sequence_keyed *k, int space) {
    return space >= 0 && space < k->nspaces ? k->spaces[space] : NULL;
}

struct sequence_keyed_section *sequence_keyed_section(struct sequence_keyed *k, int space,
                                                      int section) {
    struct sequence_keyed_space *sp = keyed_space(k, space);
    if (sp == NULL || section < 0 || section >= SEQUENCE_KEYED_SECTIONS) {
        return NULL;
    }
    return &sp->sections[section];
}

static void keyed_want(struct sequence_keyed_space *sp, struct sequence_keyed_section *sec) {
    if (!sec->want) {
        sec->want = 1;
        sp->wanting++;
    }
}

static void keyed_unwant(struct sequence_keyed_space *sp, struct sequence_keyed_section *sec) {
    if (sec->want) {
        sec->want = 0;
        sp->wanting--;
    }
}

/* An evicted key's last value joins its section's floor (sequence_keyed.h, "Eviction"). */
static void keyed_evicted(void *ctx, unsigned space, unsigned section, int64_t last) {
    struct sequence_keyed *k = ctx;
    struct sequence_keyed_space *sp = keyed_space(k, (int)space);
    if (sp == NULL) {
        return;
    }
    struct sequence_keyed_section *sec = &sp->sections[section];
    sec->floor = max64(sec->floor, last);
    sp->stats.evictions++;
    sp->stats.resident--;
}

struct sequence_keyed *sequence_keyed_new(size_t max_keys, const struct siphash_key *hash_key) {
    struct sequence_keyed *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return NULL;
    }
    if (sequence_keyed_table_init(&k->table, max_keys, hash_key, keyed_evicted, k) != LEAF_OK) {
        free(k);
        return NULL;
    }
    return k;
}

void sequence_keyed_free(struct sequence_keyed *k) {
    if (k == NULL) {
        return;
    }
    sequence_keyed_table_free(&k->table);
    for (int i = 0; i < k->nspaces; i++) {
        free(k->spaces[i]);
    }
    free(k);
}

int sequence_keyed_name_ok(const char *name, size_t len) {
    if (len < 1 || len > SEQUENCE_KEYED_NAME_MAX) {
        return 0;
    }
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.')) {
        return 0; /* a ZooKeeper node cannot be named so */
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

/* The CRC16 of "keyed:<space>:", which every key's slot of the space goes on from (a space's
 * name holds no '{', sequence_keyed_name_ok, so a hash tag can only be in the key). */
static unsigned keyed_prefix_crc(const char *space, size_t space_len) {
    unsigned crc = sequence_keyslot_crc(0, "keyed:", sizeof("keyed:") - 1);
    crc = sequence_keyslot_crc(crc, space, space_len);
    return sequence_keyslot_crc(crc, ":", 1);
}

int sequence_keyed_space_find(const struct sequence_keyed *k, const char *name, size_t len) {
    int n = __atomic_load_n(&k->nspaces, __ATOMIC_ACQUIRE); /* may run without the mutex */
    for (int i = 0; i < n; i++) {
        if (k->spaces[i]->len == len && memcmp(k->spaces[i]->name, name, len) == 0) {
            return i;
        }
    }
    return -1;
}

leaf_status_t sequence_keyed_space_add(struct sequence_keyed *k, const char *name, size_t len,
                                       int64_t step, int *index) {
    if (!sequence_keyed_name_ok(name, len) || step < 0 || step > SEQUENCE_KEYED_MAX_STEP) {
        return LEAF_EINVAL;
    }
    int found = sequence_keyed_space_find(k, name, len);
    if (found >= 0) {
        *index = found;
        return LEAF_EEXIST;
    }
    if (k->nspaces >= SEQUENCE_KEYED_MAX_SPACES) {
        return LEAF_ERANGE;
    }
    struct sequence_keyed_space *sp = calloc(1, sizeof(*sp));
    if (sp == NULL) {
        return LEAF_ENOMEM;
    }
    memcpy(sp->name, name, len);
    sp->len = len;
    sp->slot_crc = keyed_prefix_crc(name, len);
    sp->step = step == 0 ? SEQUENCE_KEYED_DEFAULT_STEP : step;
    for (int i = 0; i < SEQUENCE_KEYED_SECTIONS; i++) {
        sp->sections[i].version = -1;
    }
    *index = k->nspaces;
    k->spaces[k->nspaces] = sp;
    /* Published: a find without the mutex sees the space whole (sequence_keyed_space_find). */
    __atomic_store_n(&k->nspaces, k->nspaces + 1, __ATOMIC_RELEASE);
    return LEAF_OK;
}

leaf_status_t sequence_keyed_section_start(struct sequence_keyed *k, const struct sequence_lease *l,
                                           int space, int section) {
    struct sequence_keyed_section *sec = sequence_keyed_section(k, space, section);
    if (sec == NULL) {
        return LEAF_EINVAL;
    }
    if (!l->primary) {
        return LEAF_EUNAVAIL;
    }
    sec->phase = SEQUENCE_KEYED_READING;
    sec->term = l->term;
    sec->lapses_seen = l->lapses;
    sec->inflight = 0;
    sec->reread = 0;
    sec->prove = 0;
    sec->need = 0;
    sec->retry_at_ms = INT64_MIN;
    keyed_want(k->spaces[space], sec);
    return LEAF_OK;
}

void sequence_keyed_section_stop(struct sequence_keyed *k, int space, int section) {
    struct sequence_keyed_section *sec = sequence_keyed_section(k, space, section);
    if (sec == NULL) {
        return;
    }
    sec->phase = SEQUENCE_KEYED_UNKNOWN;
    sec->inflight = 0;
    sec->reread = 0;
    sec->need = 0;
    keyed_unwant(k->spaces[space], sec);
}

/* LEAF_OK when the section may issue now; else what issue answers. */
static leaf_status_t keyed_ready(struct sequence_keyed_space *sp,
                                 struct sequence_keyed_section *sec, struct sequence_lease *l,
                                 int64_t now_ms) {
    if (sec->phase == SEQUENCE_KEYED_UNKNOWN || sec->phase == SEQUENCE_KEYED_FENCED ||
        sec->term != l->term || !sequence_lease_live(l, now_ms)) {
        return LEAF_EUNAVAIL;
    }
    if (sec->phase == SEQUENCE_KEYED_READING) {
        return LEAF_EAGAIN;
    }
    if (sec->lapses_seen != l->lapses) {
        /* The window ran out and came back in the same session: prove it with a write. */
        sec->lapses_seen = l->lapses;
        sec->prove = 1;
        keyed_want(sp, sec);
    }
    return sec->prove ? LEAF_EAGAIN : LEAF_OK;
}

/*
 * Headroom is short: the section should raise ahead (sequence_keyed.h,
 * "Issuing"). Not before it issued anything since its start, so a takeover
 * writes only the sections that are asked for.
 */
static int keyed_short(const struct sequence_keyed_space *sp,
                       const struct sequence_keyed_section *sec) {
    return sec->high > sec->base && sec->acked - max64(sec->high, sec->floor) < sp->step / 2;
}

leaf_status_t sequence_keyed_prepare(const struct sequence_keyed *k, int space, const char *key,
                                     size_t len, struct sequence_keyed_ref *ref) {
    int n = __atomic_load_n(&k->nspaces, __ATOMIC_ACQUIRE); /* may run without the mutex */
    if (space < 0 || space >= n) {
        return LEAF_EINVAL;
    }
    const struct sequence_keyed_space *sp = k->spaces[space];
    *ref = (struct sequence_keyed_ref){
        .space = space,
        .slot = sequence_keyslot_after(sp->slot_crc, key,
                                       len < SEQUENCE_KEYED_KEY_MAX ? len : SEQUENCE_KEYED_KEY_MAX),
        .hash = sequence_keyed_table_hash(&k->table, (unsigned)space, key, len),
        .key = key,
        .len = len,
    };
    sequence_keyed_table_prefetch(&k->table, ref->hash);
    return LEAF_OK;
}

void sequence_keyed_prefetch(const struct sequence_keyed *k, int space, const char *key,
                             size_t len) {
    int n = __atomic_load_n(&k->nspaces, __ATOMIC_ACQUIRE); /* may run without the mutex */
    if (space >= 0 && space < n) {
        sequence_keyed_table_prefetch(
            &k->table, sequence_keyed_table_hash(&k->table, (unsigned)space, key, len));
    }
}

leaf_status_t sequence_keyed_issue(struct sequence_keyed *k, struct sequence_lease *l,
                                   int64_t now_ms, const struct sequence_keyed_ref *ref, int64_t n,
                                   int64_t *first) {
    int space = ref->space;
    unsigned slot = ref->slot;
    const char *key = ref->key;
    size_t len = ref->len;
    struct sequence_keyed_space *sp = keyed_space(k, space);
    if (sp == NULL || n < 1 || len < 1 || len > SEQUENCE_KEYED_KEY_MAX ||
        slot >= SEQUENCE_KEYED_SECTIONS * SEQUENCE_KEYED_SLOTS_PER_SECTION) {
        return LEAF_EINVAL;
    }
    unsigned section = slot / SEQUENCE_KEYED_SLOTS_PER_SECTION;
    struct sequence_keyed_section *sec = &sp->sections[section];
    leaf_status_t st = keyed_ready(sp, sec, l, now_ms);
    if (st == LEAF_EAGAIN && sec->phase == SEQUENCE_KEYED_READING) {
        sec->need = max64(sec->need, n); /* a count until the read gives the base */
    }
    if (st != LEAF_OK) {
        return st;
    }
    uint64_t hash = ref->hash;
    struct sequence_keyed_entry *e =
        sequence_keyed_table_find(&k->table, hash, (unsigned)space, key, len);
    int64_t last = e != NULL ? max64(e->last, sec->base) : sec->floor;
    if (last > INT64_MAX - n) {
        return LEAF_ERANGE;
    }
    int64_t end = last + n;
    if (end > sec->acked) {
        sec->need = max64(sec->need, end);
        sp->stats.short_waits++;
        keyed_want(sp, sec);
        return LEAF_EAGAIN;
    }
    if (e == NULL) {
        st = sequence_keyed_table_insert(&k->table, hash, (unsigned)space, section, key, len, end,
                                         &e);
        if (st != LEAF_OK) {
            return st;
        }
        sp->stats.resident++;
    }
    e->last = end;
    e->space_ref |= 1u;
    sec->high = max64(sec->high, end);
    sp->stats.issued += (uint64_t)n;
    if (keyed_short(sp, sec)) {
        keyed_want(sp, sec);
    }
    *first = last + 1;
    return LEAF_OK;
}

static void keyed_emit(struct sequence_keyed *k, struct sequence_keyed_space *sp, int space,
                       int section, enum sequence_op op, int64_t now_ms,
                       struct sequence_keyed_action *a) {
    struct sequence_keyed_section *sec = &sp->sections[section];
    memset(a, 0, sizeof(*a));
    a->space = space;
    a->section = section;
    a->io.op = op;
    a->io.token = (++k->tokens << KEYED_TOKEN_SHIFT) | ((uint64_t)space << 8) | (uint64_t)section;
    a->io.sent_ms = now_ms;
    sec->inflight = a->io.token;
    sec->inflight_op = op;
    sec->inflight_sent_ms = now_ms;
    if (op == SEQUENCE_OP_READ) {
        return;
    }
    /* A raise: past what is issued, known and parked, by a step; never below acked. */
    int64_t top = max64(max64(sec->high, sec->floor), sec->need);
    int64_t target = top > INT64_MAX - sp->step ? INT64_MAX : top + sp->step;
    a->io.max = max64(target, sec->acked);
    a->io.version = sec->version;
    a->io.len = sequence_record_format_max(a->io.data, sizeof(a->io.data), a->io.max);
    sec->inflight_max = a->io.max;
    sp->stats.writes++;
}

/* What the section should send now: a READ, a raise, or nothing (SEQUENCE_OP_NONE). */
static enum sequence_op keyed_next_op(const struct sequence_keyed_space *sp,
                                      const struct sequence_keyed_section *sec) {
    if (sec->phase == SEQUENCE_KEYED_READING || sec->reread) {
        return SEQUENCE_OP_READ;
    }
    if (sec->phase == SEQUENCE_KEYED_SERVING &&
        (sec->prove || sec->need > sec->acked || keyed_short(sp, sec))) {
        return sec->version < 0 ? SEQUENCE_OP_CREATE : SEQUENCE_OP_WRITE;
    }
    return SEQUENCE_OP_NONE;
}

int sequence_keyed_action(struct sequence_keyed *k, struct sequence_lease *l, int64_t now_ms,
                          struct sequence_keyed_action *a) {
    if (!l->primary || !l->connected) {
        return 0;
    }
    for (int i = 0; i < k->nspaces; i++) {
        struct sequence_keyed_space *sp = k->spaces[i];
        for (int s = 0; sp->wanting > 0 && s < SEQUENCE_KEYED_SECTIONS; s++) {
            struct sequence_keyed_section *sec = &sp->sections[s];
            if (!sec->want || now_ms < sec->retry_at_ms) {
                continue; /* a section backing off keeps its mark for the cron */
            }
            enum sequence_op op = SEQUENCE_OP_NONE;
            if (sec->term == l->term && sec->inflight == 0) {
                op = keyed_next_op(sp, sec);
            }
            keyed_unwant(sp, sec); /* done() marks it again when its request returns */
            if (op != SEQUENCE_OP_NONE) {
                keyed_emit(k, sp, i, s, op, now_ms, a);
                return 1;
            }
        }
    }
    return 0;
}

enum sequence_keyed_verdict sequence_keyed_judge(int64_t acked, int64_t stored) {
    return max64(stored, 0) >= acked ? SEQUENCE_KEYED_ADOPT : SEQUENCE_KEYED_FENCE;
}

/* A max read (stored -1: no node): a start serves above it, a reread judges it. */
static void keyed_read(struct sequence_keyed_space *sp, struct sequence_keyed_section *sec,
                       int64_t stored, int32_t version) {
    int64_t m = max64(stored, 0);
    if (sec->phase == SEQUENCE_KEYED_READING) {
        /* IDs up to m may have been issued by anyone, and up to high by us: start above. */
        sec->base = max64(max64(m, sec->high), sec->floor);
        sec->floor = sec->base;
        sec->acked = m;
        sec->version = version;
        sec->phase = SEQUENCE_KEYED_SERVING;
        sec->need = sec->need > 0 ? sec->base + sec->need : 0; /* raise for what parked */
        return;
    }
    sec->reread = 0;
    if (sequence_keyed_judge(sec->acked, stored) == SEQUENCE_KEYED_FENCE) {
        sec->phase = SEQUENCE_KEYED_FENCED;
        sp->stats.fences++;
        return;
    }
    /*
     * Another owner of the section raised it (or our write landed): write from its version
     * and never below it, nor give back below it; but issue only up to what our own writes
     * made it, as that owner may give its raise back (sequence_keyed.h, "Straddling owners").
     */
    sec->version = version;
    sec->floor = max64(sec->floor, m);
}

static void keyed_done_write(struct sequence_keyed_section *sec, enum sequence_result r,
                             int64_t now_ms) {
    if (r == SEQUENCE_RESULT_OK) {
        sec->acked = sec->inflight_max;
        sec->version = sec->inflight_op == SEQUENCE_OP_CREATE ? 0 : sec->version + 1;
        sec->prove = 0;
        if (sec->need <= sec->acked) {
            sec->need = 0;
        }
    } else if (r == SEQUENCE_RESULT_FAILED) {
        sec->retry_at_ms = now_ms + SEQUENCE_RETRY_MS;
    } else {
        sec->reread = 1; /* refused, exists, or in doubt: read what is there, then judge */
    }
}

leaf_status_t sequence_keyed_done(struct sequence_keyed *k, struct sequence_lease *l,
                                  uint64_t token, int64_t now_ms, enum sequence_result r,
                                  const char *data, size_t len, int32_t version) {
    int space = (int)((token >> 8) & ((1u << (KEYED_TOKEN_SHIFT - 8)) - 1));
    int section = (int)(token & 0xff);
    struct sequence_keyed_section *sec = sequence_keyed_section(k, space, section);
    if (token == 0 || sec == NULL || sec->inflight != token) {
        return LEAF_EINVAL;
    }
    struct sequence_keyed_space *sp = k->spaces[space];
    sec->inflight = 0;
    sec->retry_at_ms = INT64_MIN;
    keyed_want(sp, sec);
    if (sec->inflight_op != SEQUENCE_OP_READ) {
        if (r != SEQUENCE_RESULT_UNKNOWN && r != SEQUENCE_RESULT_FAILED) {
            /* The leader decided on it, so the session was alive when it was sent. */
            sequence_lease_answer(l, sec->inflight_sent_ms, now_ms);
        }
        keyed_done_write(sec, r, now_ms);
        return LEAF_OK;
    }
    int64_t max = -1;
    if (r == SEQUENCE_RESULT_OK &&
        (data == NULL || sequence_record_parse_max(data, len, &max) != LEAF_OK)) {
        sec->retry_at_ms = now_ms + SEQUENCE_RECHECK_MS; /* not {"max":n}: the glue logs it */
        return LEAF_OK;
    }
    if (r == SEQUENCE_RESULT_OK || r == SEQUENCE_RESULT_NONODE) {
        keyed_read(sp, sec, r == SEQUENCE_RESULT_OK ? max : -1,
                   r == SEQUENCE_RESULT_OK ? version : -1);
    } else {
        sec->retry_at_ms = now_ms + SEQUENCE_RETRY_MS;
    }
    return LEAF_OK;
}

int sequence_keyed_giveback(struct sequence_keyed *k, int space, int section,
                            struct sequence_keyed_action *a) {
    struct sequence_keyed_section *sec = sequence_keyed_section(k, space, section);
    if (sec == NULL) {
        return 0;
    }
    int settled = sec->phase == SEQUENCE_KEYED_SERVING && sec->inflight == 0 && !sec->reread &&
                  !sec->prove && sec->version >= 0;
    int64_t down = max64(sec->high, sec->floor);
    int32_t version = sec->version;
    sequence_keyed_section_stop(k, space, section);
    if (!settled || down >= sec->acked) {
        return 0;
    }
    memset(a, 0, sizeof(*a));
    a->space = space;
    a->section = section;
    a->io.op = SEQUENCE_OP_WRITE;
    a->io.version = version;
    a->io.max = down;
    a->io.len = sequence_record_format_max(a->io.data, sizeof(a->io.data), down);
    return 1;
}

const char *sequence_keyed_space_name(const struct sequence_keyed *k, int space) {
    const struct sequence_keyed_space *sp = keyed_space(k, space);
    return sp != NULL ? sp->name : NULL;
}

const struct sequence_keyed_stats *sequence_keyed_stats(const struct sequence_keyed *k, int space) {
    const struct sequence_keyed_space *sp = keyed_space(k, space);
    return sp != NULL ? &sp->stats : NULL;
}

size_t sequence_keyed_bytes(const struct sequence_keyed *k) {
    return sequence_keyed_table_bytes(&k->table);
}
