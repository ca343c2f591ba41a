/*
 * Unit tests of keyed sequences' pure core (sequence/sequence_keyed.c and
 * sequence/sequence_keyed_table.c) against a fake ZooKeeper store that can
 * lose writes: per key strictly increasing through eviction, failover (a new
 * core built from the persisted maxima only), straddling owners, a lowered
 * max (fence) and giveback; the write count of a million new keys; probe runs.
 *
 * With arguments it measures memory instead (docs/keyed-sequences.md,
 * "Memory"): test_sequence_keyed --measure N inserts N 16-byte keys and prints
 * the bytes per resident key (the table's own count, malloc's, and RSS).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sequence_keyed.h"
#include "sequence_keyslot.h"
#include "sequence_record.h"
#include "unit.h"

static const struct siphash_key test_key = {0x0123456789abcdefULL, 0xfedcba9876543210ULL};

/* The fake store: one node per section of space 0. */
struct fake_node {
    int64_t max;
    int32_t version;
    int exists;
};
static struct fake_node store[SEQUENCE_KEYED_SECTIONS];

static void store_reset(void) {
    memset(store, 0, sizeof(store));
}

/* Applies a's request to the store; returns its result and fills a READ's answer. */
static enum sequence_result store_apply(const struct sequence_keyed_action *a, char *data,
                                        size_t *len, int32_t *version) {
    struct fake_node *n = &store[a->section];
    switch (a->io.op) {
    case SEQUENCE_OP_READ:
        if (!n->exists) {
            return SEQUENCE_RESULT_NONODE;
        }
        *len = sequence_record_format_max(data, SEQUENCE_RECORD_MAX_LEN, n->max);
        *version = n->version;
        return SEQUENCE_RESULT_OK;
    case SEQUENCE_OP_CREATE:
        if (n->exists) {
            return SEQUENCE_RESULT_EXISTS;
        }
        n->exists = 1;
        n->max = a->io.max;
        n->version = 0;
        return SEQUENCE_RESULT_OK;
    case SEQUENCE_OP_WRITE:
        if (!n->exists) {
            return SEQUENCE_RESULT_NONODE;
        }
        if (n->version != a->io.version) {
            return SEQUENCE_RESULT_BADVERSION;
        }
        n->max = a->io.max;
        n->version++;
        return SEQUENCE_RESULT_OK;
    default: return SEQUENCE_RESULT_FAILED;
    }
}

/*
 * Delivers a request with a fate: 0 as it happens, 1 lost before it landed
 * (UNKNOWN), 2 landed but the answer lost (UNKNOWN), 3 failed (not applied).
 */
static void deliver(struct sequence_keyed *k, struct sequence_lease *l,
                    const struct sequence_keyed_action *a, int fate) {
    char data[SEQUENCE_RECORD_MAX_LEN];
    size_t len = 0;
    int32_t version = 0;
    enum sequence_result r = SEQUENCE_RESULT_UNKNOWN;
    if (fate == 3) {
        r = SEQUENCE_RESULT_FAILED;
    } else if (fate != 1) {
        r = store_apply(a, data, &len, &version);
        if (fate == 2) {
            r = SEQUENCE_RESULT_UNKNOWN;
        }
    }
    sequence_keyed_done(k, l, a->io.token, 1, r, r == SEQUENCE_RESULT_OK ? data : NULL, len,
                        version);
}

/* Performs every request the core hands out, as it happens; returns how many writes. */
static int pump(struct sequence_keyed *k, struct sequence_lease *l) {
    struct sequence_keyed_action a;
    int writes = 0;
    while (sequence_keyed_action(k, l, 1, &a)) {
        writes += a.io.op != SEQUENCE_OP_READ;
        deliver(k, l, &a, 0);
    }
    return writes;
}

static void lease_up(struct sequence_lease *l) {
    sequence_lease_init(l, 30000);
    sequence_lease_connected(l, 1);
    sequence_lease_answer(l, 0, 0);
    sequence_lease_win(l);
}

static struct sequence_keyed *core_up(size_t max_keys, int64_t step,
                                      const struct sequence_lease *l) {
    struct sequence_keyed *k = sequence_keyed_new(max_keys, &test_key);
    int space = -1;
    CHECK_EQ_INT(sequence_keyed_space_add(k, "chat", 4, step, &space), LEAF_OK);
    CHECK_EQ_INT(space, 0);
    for (int s = 0; s < SEQUENCE_KEYED_SECTIONS; s++) {
        CHECK_EQ_INT(sequence_keyed_section_start(k, l, 0, s), LEAF_OK);
    }
    return k;
}

/* sequence_keyed_issue() of the key prepared as the service does (sequence_keyed_prepare()). */
static leaf_status_t issue(struct sequence_keyed *k, struct sequence_lease *l, int64_t now_ms,
                           int space, const char *key, size_t len, int64_t n, int64_t *first) {
    struct sequence_keyed_ref ref = {.space = space, .key = key, .len = len};
    if (sequence_keyed_prepare(k, space, key, len, &ref) != LEAF_OK) {
        ref.slot = 0; /* a bad index: issue refuses it */
    }
    return sequence_keyed_issue(k, l, now_ms, &ref, n, first);
}

/* Issues, pumping the requests a parked issue waits for. */
static leaf_status_t take(struct sequence_keyed *k, struct sequence_lease *l, const char *key,
                          int64_t n, int64_t *first) {
    leaf_status_t st = LEAF_EAGAIN;
    for (int i = 0; i < 4 && st == LEAF_EAGAIN; i++) {
        st = issue(k, l, 1, 0, key, strlen(key), n, first);
        pump(k, l);
    }
    return st;
}

/* The key slot of the RESP key "keyed:<space>:<key>", computed whole. */
static unsigned whole_slot(const char *space, size_t space_len, const char *key, size_t len) {
    char whole[300];
    int n = snprintf(whole, sizeof(whole), "keyed:%.*s:%.*s", (int)space_len, space, (int)len, key);
    return sequence_keyslot(whole, (size_t)n);
}

static int key_section(const char *key) {
    return (int)(whole_slot("chat", 4, key, strlen(key)) / SEQUENCE_KEYED_SLOTS_PER_SECTION);
}

static void test_names_and_spaces(void) {
    struct sequence_keyed *k = sequence_keyed_new(10, &test_key);
    int i = -1;
    CHECK(sequence_keyed_name_ok("a.b_c-9", 7));
    CHECK(!sequence_keyed_name_ok("a:b", 3));
    CHECK(!sequence_keyed_name_ok("..", 2));
    CHECK(!sequence_keyed_name_ok("", 0));
    CHECK_EQ_INT(sequence_keyed_space_add(k, "a", 1, 0, &i), LEAF_OK);
    CHECK_EQ_INT(sequence_keyed_space_add(k, "a", 1, 5, &i), LEAF_EEXIST);
    CHECK_EQ_INT(i, 0);
    CHECK_EQ_INT(k->spaces[0]->step, SEQUENCE_KEYED_DEFAULT_STEP);
    CHECK_EQ_INT(sequence_keyed_space_add(k, "b", 1, -1, &i), LEAF_EINVAL);
    CHECK_EQ_INT(sequence_keyed_space_find(k, "a", 1), 0);
    CHECK_EQ_INT(sequence_keyed_space_find(k, "b", 1), -1);
    CHECK(strcmp(sequence_keyed_space_name(k, 0), "a") == 0);
    for (int n = 1; n < SEQUENCE_KEYED_MAX_SPACES; n++) {
        char name[16];
        snprintf(name, sizeof(name), "s%d", n);
        CHECK_EQ_INT(sequence_keyed_space_add(k, name, strlen(name), 0, &i), LEAF_OK);
    }
    CHECK_EQ_INT(sequence_keyed_space_add(k, "late", 4, 0, &i), LEAF_ERANGE);
    /* the section is the slot of keyed:<space>:<key> / 64; hash tags honoured */
    struct sequence_keyed_ref r0;
    CHECK_EQ_INT(sequence_keyed_prepare(k, 0, "x", 1, &r0), LEAF_OK);
    CHECK_EQ_INT(r0.slot, sequence_keyslot("keyed:a:x", 9));
    CHECK_EQ_INT(sequence_keyed_prepare(k, 0, "{t}1", 4, &r0), LEAF_OK);
    CHECK_EQ_INT(r0.slot, sequence_keyslot("t", 1));
    /* a prepared key's slot (from the space's own CRC of "keyed:<space>:") is the whole key's,
     * tags, empty tags and unclosed braces included */
    const char *keys[] = {"x", "{t}1", "{}1", "1{", "a{b", "{{t}}", "ab}{c}", "}{"};
    for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
        struct sequence_keyed_ref ref;
        char whole[64];
        int n = snprintf(whole, sizeof(whole), "keyed:s7:%s", keys[j]);
        CHECK_EQ_INT(sequence_keyed_prepare(k, 7, keys[j], strlen(keys[j]), &ref), LEAF_OK);
        CHECK_EQ_INT(ref.slot, sequence_keyslot(whole, (size_t)n));
    }
    sequence_keyed_free(k);
}

static void test_first_ids_and_parking(void) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    struct sequence_keyed *k = core_up(100, 100, &l);
    int64_t first = 0;
    /* started, not read yet: park */
    CHECK_EQ_INT(issue(k, &l, 1, 0, "alice", 5, 1, &first), LEAF_EAGAIN);
    CHECK_EQ_INT(pump(k, &l), 1); /* 256 reads, one write: the section asked for */
    CHECK_EQ_INT(issue(k, &l, 1, 0, "alice", 5, 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 1);
    CHECK_EQ_INT(issue(k, &l, 1, 0, "alice", 5, 3, &first), LEAF_OK);
    CHECK_EQ_INT(first, 2);
    CHECK_EQ_INT(store[key_section("alice")].max, 101); /* what parked (1) plus a step */
    /* a count past the headroom parks and raises by what it needs plus a step */
    CHECK_EQ_INT(issue(k, &l, 1, 0, "alice", 5, 500, &first), LEAF_EAGAIN);
    pump(k, &l);
    CHECK_EQ_INT(store[key_section("alice")].max, 604);
    CHECK_EQ_INT(issue(k, &l, 1, 0, "alice", 5, 500, &first), LEAF_OK);
    CHECK_EQ_INT(first, 5);
    /* the key prepared by the caller (the service, before its lock): its slot and hash */
    struct sequence_keyed_ref ref;
    CHECK_EQ_INT(sequence_keyed_prepare(k, 0, "alice", 5, &ref), LEAF_OK);
    CHECK_EQ_INT(ref.slot, whole_slot("chat", 4, "alice", 5));
    CHECK(ref.hash == sequence_keyed_table_hash(&k->table, 0, "alice", 5));
    CHECK_EQ_INT(sequence_keyed_issue(k, &l, 1, &ref, 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 505);
    CHECK_EQ_INT(sequence_keyed_prepare(k, 1, "alice", 5, &ref), LEAF_EINVAL);
    CHECK_EQ_INT(sequence_keyed_prepare(k, -1, "alice", 5, &ref), LEAF_EINVAL);
    CHECK_EQ_INT(sequence_keyed_prepare(k, 0, "alice", 5, &ref), LEAF_OK);
    ref.slot = 16384;
    CHECK_EQ_INT(sequence_keyed_issue(k, &l, 1, &ref, 1, &first), LEAF_EINVAL);
    CHECK_EQ_INT(issue(k, &l, 1, 0, "", 0, 1, &first), LEAF_EINVAL);
    CHECK_EQ_INT(issue(k, &l, 1, 0, "a", 1, 0, &first), LEAF_EINVAL);
    CHECK_EQ_INT(issue(k, &l, 1, 7, "a", 1, 1, &first), LEAF_EINVAL);
    /* a long key (over 16 bytes) and a key with any byte */
    char odd[SEQUENCE_KEYED_KEY_MAX];
    for (size_t i = 0; i < sizeof(odd); i++) {
        odd[i] = (char)i;
    }
    CHECK_EQ_INT(issue(k, &l, 1, 0, odd, sizeof(odd) + 1, 1, &first), LEAF_EINVAL);
    leaf_status_t st = issue(k, &l, 1, 0, odd, sizeof(odd), 1, &first);
    pump(k, &l);
    st = st == LEAF_OK ? st : issue(k, &l, 1, 0, odd, sizeof(odd), 1, &first);
    CHECK_EQ_INT(st, LEAF_OK);
    CHECK_EQ_INT(issue(k, &l, 1, 0, odd, sizeof(odd), 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 2);
    /* not started, or not primary: unavailable */
    sequence_keyed_section_stop(k, 0, key_section("alice"));
    CHECK_EQ_INT(issue(k, &l, 1, 0, "alice", 5, 1, &first), LEAF_EUNAVAIL);
    sequence_lease_lose(&l);
    CHECK_EQ_INT(sequence_keyed_section_start(k, &l, 0, 0), LEAF_EUNAVAIL);
    const struct sequence_keyed_stats *stats = sequence_keyed_stats(k, 0);
    CHECK_EQ_INT(stats->issued, 507);
    CHECK_EQ_INT(stats->resident, 2);
    sequence_keyed_free(k);
}

/* The reference: the largest ID returned per key, and the checks against it. */
#define POOL 3000
static int64_t returned[POOL];
static char pool_keys[POOL][24];

static void pool_init(void) {
    memset(returned, 0, sizeof(returned));
    for (int i = 0; i < POOL; i++) {
        /* a third share hash tags, so a few sections hold many keys */
        if (i % 3 == 0) {
            snprintf(pool_keys[i], sizeof(pool_keys[i]), "{t%d}k%d", i % 7, i);
        } else {
            snprintf(pool_keys[i], sizeof(pool_keys[i]), "key-%d", i);
        }
    }
}

static int violations;

/* Issues for pool key i on k; checks strict increase against every earlier return. */
static void pool_issue(struct sequence_keyed *k, struct sequence_lease *l, int i, int64_t n) {
    int64_t first = 0;
    leaf_status_t st = issue(k, l, 1, 0, pool_keys[i], strlen(pool_keys[i]), n, &first);
    if (st != LEAF_OK) {
        return;
    }
    if (first <= returned[i] || first < 1) {
        if (violations++ < 5) {
            fprintf(stderr, "key %s: %lld after %lld\n", pool_keys[i], (long long)first,
                    (long long)returned[i]);
        }
    }
    returned[i] = first + n - 1;
}

static void test_eviction_keeps_order(void) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    pool_init();
    violations = 0;
    struct sequence_keyed *k = core_up(200, 50, &l);
    srand(7);
    for (int step = 0; step < 60000; step++) {
        /* a hot tenth and a cold rest */
        int i = rand() % 4 ? rand() % (POOL / 10) : rand() % POOL;
        pool_issue(k, &l, i, 1 + rand() % 3);
        pump(k, &l);
    }
    CHECK_EQ_INT(violations, 0);
    const struct sequence_keyed_stats *stats = sequence_keyed_stats(k, 0);
    CHECK(stats->evictions > 1000);
    CHECK(stats->resident <= 200);
    CHECK_EQ_INT(k->table.count, stats->resident);
    sequence_keyed_free(k);
}

/* A core's requests in flight, delivered later in any order (or never). */
#define INFLIGHT_MAX 512
struct flight {
    struct sequence_keyed_action a[INFLIGHT_MAX];
    int n;
};

static void flight_collect(struct sequence_keyed *k, struct sequence_lease *l, struct flight *f) {
    while (f->n < INFLIGHT_MAX && sequence_keyed_action(k, l, 1, &f->a[f->n])) {
        f->n++;
    }
}

static void flight_deliver_one(struct sequence_keyed *k, struct sequence_lease *l,
                               struct flight *f) {
    if (f->n == 0) {
        return;
    }
    int j = rand() % f->n;
    struct sequence_keyed_action a = f->a[j];
    f->a[j] = f->a[--f->n];
    int r = rand() % 10;
    deliver(k, l, &a, r < 7 ? 0 : r - 6); /* mostly as it happens, else lost, doubtful, failed */
}

/* kill -9: what was in flight landed or not, at random; the core is gone. */
static void flight_crash(struct flight *f) {
    for (int j = 0; j < f->n; j++) {
        if (f->a[j].io.op != SEQUENCE_OP_READ && rand() % 2) {
            char data[SEQUENCE_RECORD_MAX_LEN];
            size_t len;
            int32_t version;
            store_apply(&f->a[j], data, &len, &version);
        }
    }
    f->n = 0;
}

/* A graceful stop: what is in flight settles, then every section gives back; how many landed. */
static int graceful_stop(struct sequence_keyed *k, struct sequence_lease *l, struct flight *f) {
    while (f->n > 0) {
        flight_deliver_one(k, l, f);
    }
    int given = 0;
    for (int s = 0; s < SEQUENCE_KEYED_SECTIONS; s++) {
        struct sequence_keyed_action g;
        if (sequence_keyed_giveback(k, 0, s, &g)) {
            char data[SEQUENCE_RECORD_MAX_LEN];
            size_t len;
            int32_t version;
            given += store_apply(&g, data, &len, &version) == SEQUENCE_RESULT_OK;
        }
    }
    return given;
}

static void test_failover_property(void) {
    static struct flight f;
    struct sequence_lease l;
    store_reset();
    pool_init();
    violations = 0;
    srand(11);
    int failovers = 0;
    for (int round = 0; round < 40; round++) {
        lease_up(&l);
        struct sequence_keyed *k = core_up(300 + (size_t)(rand() % 600), 1 + rand() % 40, &l);
        f.n = 0;
        int ops = 200 + rand() % 2000;
        for (int op = 0; op < ops; op++) {
            int what = rand() % 3;
            if (what == 0) {
                pool_issue(k, &l, rand() % POOL, 1 + rand() % 5);
            } else if (what == 1) {
                flight_collect(k, &l, &f);
            } else {
                flight_deliver_one(k, &l, &f);
            }
        }
        if (round % 3 == 0) {
            graceful_stop(k, &l, &f);
        } else {
            flight_crash(&f);
        }
        failovers++;
        sequence_keyed_free(k); /* the next core knows only the store */
    }
    CHECK_EQ_INT(failovers, 40);
    CHECK_EQ_INT(violations, 0);
    int issued = 0;
    for (int i = 0; i < POOL; i++) {
        issued += returned[i] > 0;
    }
    CHECK(issued > POOL / 2);
}

static struct flight fa, fb;

/* Random work for two owners: A issues the keys of slots of one parity, B the others. */
static void straddle_run(struct sequence_keyed *a, struct sequence_lease *la,
                         struct sequence_keyed *b, struct sequence_lease *lb, int parity, int ops) {
    for (int op = 0; op < ops; op++) {
        int i = rand() % POOL;
        unsigned slot = whole_slot("chat", 4, pool_keys[i], strlen(pool_keys[i]));
        int to_a = (int)(slot % 2) == parity;
        int what = rand() % 3;
        if (what == 0) {
            pool_issue(to_a ? a : b, to_a ? la : lb, i, 1 + rand() % 3);
        } else if (what == 1) {
            flight_collect(a, la, &fa);
            flight_collect(b, lb, &fb);
        } else {
            flight_deliver_one(a, la, &fa);
            flight_deliver_one(b, lb, &fb);
        }
    }
}

/*
 * Two owners share every section: A owns the even slots, B the odd; they swap
 * (both gained slots in every section, so both start every section again);
 * then A leaves for good with a giveback and C takes A's slots over.
 */
static void test_straddling_owners(void) {
    struct sequence_lease la, lb, lc;
    store_reset();
    pool_init();
    violations = 0;
    srand(5);
    lease_up(&la);
    lease_up(&lb);
    struct sequence_keyed *a = core_up(400, 20, &la);
    struct sequence_keyed *b = core_up(400, 20, &lb);
    fa.n = fb.n = 0;
    int parity = 0;
    for (int round = 0; round < 4; round++) {
        if (round > 0) {
            parity = !parity;
            for (int s = 0; s < SEQUENCE_KEYED_SECTIONS; s++) {
                sequence_keyed_section_start(a, &la, 0, s);
                sequence_keyed_section_start(b, &lb, 0, s);
            }
        }
        straddle_run(a, &la, b, &lb, parity, 15000);
    }
    CHECK(graceful_stop(a, &la, &fa) > 0);
    sequence_keyed_free(a);
    lease_up(&lc);
    struct sequence_keyed *c = core_up(400, 20, &lc);
    straddle_run(c, &lc, b, &lb, parity, 30000);
    CHECK_EQ_INT(violations, 0);
    CHECK_EQ_INT(sequence_keyed_stats(b, 0)->fences, 0); /* A's giveback never went below B */
    sequence_keyed_free(b);
    sequence_keyed_free(c);
}

/* Finds a pool key of section s other than not (or -1). */
static int key_of_section(int s, int not ) {
    for (int i = 0; i < POOL; i++) {
        if (i != not &&key_section(pool_keys[i]) == s) {
            return i;
        }
    }
    return -1;
}

static void test_lowered_max_fences(void) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    pool_init();
    violations = 0;
    struct sequence_keyed *k = core_up(100, 10, &l);
    int64_t first = 0;
    CHECK_EQ_INT(take(k, &l, pool_keys[0], 8, &first), LEAF_OK);
    returned[0] = first + 7;
    int s = key_section(pool_keys[0]);
    CHECK_EQ_INT(store[s].max, 18);
    /* an operator restores an old max: the next raise is refused, the read shows it lower */
    store[s].max = 3;
    store[s].version += 5;
    CHECK_EQ_INT(issue(k, &l, 1, 0, pool_keys[0], strlen(pool_keys[0]), 20, &first), LEAF_EAGAIN);
    pump(k, &l);
    CHECK_EQ_INT(sequence_keyed_section(k, 0, s)->phase, SEQUENCE_KEYED_FENCED);
    CHECK_EQ_INT(sequence_keyed_stats(k, 0)->fences, 1);
    CHECK_EQ_INT(issue(k, &l, 1, 0, pool_keys[0], strlen(pool_keys[0]), 1, &first), LEAF_EUNAVAIL);
    /* started again, it serves above everything it issued, not above the lowered max */
    CHECK_EQ_INT(sequence_keyed_section_start(k, &l, 0, s), LEAF_OK);
    pump(k, &l);
    int other = key_of_section(s, 0);
    CHECK(other > 0);
    pool_issue(k, &l, 0, 1);
    pump(k, &l);
    pool_issue(k, &l, 0, 1);
    pool_issue(k, &l, other, 1);
    CHECK(returned[0] > 8);
    CHECK(returned[other] > 8);
    CHECK_EQ_INT(violations, 0);
    CHECK_EQ_INT(sequence_keyed_judge(10, 10), SEQUENCE_KEYED_ADOPT);
    CHECK_EQ_INT(sequence_keyed_judge(10, 11), SEQUENCE_KEYED_ADOPT);
    CHECK_EQ_INT(sequence_keyed_judge(10, 9), SEQUENCE_KEYED_FENCE);
    CHECK_EQ_INT(sequence_keyed_judge(0, -1), SEQUENCE_KEYED_ADOPT);
    CHECK_EQ_INT(sequence_keyed_judge(5, -1), SEQUENCE_KEYED_FENCE);
    sequence_keyed_free(k);
}

static void test_giveback(void) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    pool_init();
    struct sequence_keyed *k = core_up(2, 1000, &l);
    int64_t first = 0;
    int s = key_section(pool_keys[0]);
    int k1 = key_of_section(s, 0), k2 = key_of_section(s, k1);
    CHECK_EQ_INT(take(k, &l, pool_keys[0], 5, &first), LEAF_OK);
    CHECK_EQ_INT(take(k, &l, pool_keys[k1], 9, &first), LEAF_OK);
    CHECK_EQ_INT(take(k, &l, pool_keys[k2], 1, &first), LEAF_OK); /* evicts one: floor rises */
    CHECK_EQ_INT(store[s].max, 1005);
    struct sequence_keyed_action g;
    CHECK_EQ_INT(sequence_keyed_giveback(k, 0, s, &g), 1);
    CHECK_EQ_INT(g.io.op, SEQUENCE_OP_WRITE);
    CHECK_EQ_INT(g.io.max, 9); /* the highest issued: key k1's 1..9 */
    CHECK_EQ_INT(g.io.token, 0);
    char data[SEQUENCE_RECORD_MAX_LEN];
    size_t len;
    int32_t version;
    CHECK_EQ_INT(store_apply(&g, data, &len, &version), SEQUENCE_RESULT_OK);
    CHECK_EQ_INT(issue(k, &l, 1, 0, pool_keys[0], strlen(pool_keys[0]), 1, &first), LEAF_EUNAVAIL);
    /* at most once, and nothing for an untouched section */
    CHECK_EQ_INT(sequence_keyed_giveback(k, 0, s, &g), 0);
    CHECK_EQ_INT(sequence_keyed_giveback(k, 0, (s + 1) % SEQUENCE_KEYED_SECTIONS, &g), 0);
    /* the next owner starts every key of the section right after 9 */
    struct sequence_keyed *n = core_up(100, 1000, &l);
    CHECK_EQ_INT(take(n, &l, pool_keys[0], 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 10);
    CHECK_EQ_INT(take(n, &l, pool_keys[k1], 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 10); /* another key: its own sequence, from the same floor */
    sequence_keyed_free(k);
    sequence_keyed_free(n);
}

/* A section that leaves and comes back: its resident keys start above what others issued. */
static void test_section_returns(void) {
    struct sequence_lease la, lb;
    lease_up(&la);
    lease_up(&lb);
    store_reset();
    pool_init();
    struct sequence_keyed *a = core_up(100, 10, &la);
    struct sequence_keyed *b = core_up(100, 10, &lb);
    int64_t first = 0;
    int s = key_section(pool_keys[0]);
    CHECK_EQ_INT(take(a, &la, pool_keys[0], 3, &first), LEAF_OK);
    sequence_keyed_section_stop(a, 0, s);
    CHECK_EQ_INT(sequence_keyed_section_start(b, &lb, 0, s), LEAF_OK);
    pump(b, &lb);
    CHECK_EQ_INT(take(b, &lb, pool_keys[0], 30, &first), LEAF_OK);
    CHECK_EQ_INT(first, 14); /* above a's acknowledged 13 */
    sequence_keyed_section_stop(b, 0, s);
    CHECK_EQ_INT(sequence_keyed_section_start(a, &la, 0, s), LEAF_OK);
    pump(a, &la);
    CHECK_EQ_INT(take(a, &la, pool_keys[0], 1, &first), LEAF_OK);
    CHECK(first > 43); /* a still holds the key at 3: it starts above the max it read */
    sequence_keyed_free(a);
    sequence_keyed_free(b);
}

/* A lapse of the lease in the same session: the section proves itself with a write. */
static void test_lapse_proves(void) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    struct sequence_keyed *k = core_up(100, 100, &l);
    int64_t first = 0;
    CHECK_EQ_INT(take(k, &l, "bob", 1, &first), LEAF_OK);
    CHECK_EQ_INT(issue(k, &l, 30000, 0, "bob", 3, 1, &first), LEAF_EUNAVAIL);
    sequence_lease_answer(&l, 29990, 30000); /* answers again: a lapse */
    CHECK_EQ_INT(issue(k, &l, 30000, 0, "bob", 3, 1, &first), LEAF_EAGAIN);
    int32_t before = store[key_section("bob")].version;
    struct sequence_keyed_action a;
    CHECK_EQ_INT(sequence_keyed_action(k, &l, 30000, &a), 1);
    CHECK_EQ_INT(a.io.op, SEQUENCE_OP_WRITE);
    deliver(k, &l, &a, 0);
    CHECK_EQ_INT(store[key_section("bob")].version, before + 1);
    CHECK_EQ_INT(issue(k, &l, 30000, 0, "bob", 3, 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 2);
    sequence_keyed_free(k);
}

/* A node that does not hold {"max":n} is read again later, and nothing is issued meanwhile. */
static void test_corrupt_node_read_again(void) {
    struct sequence_lease l;
    lease_up(&l);
    struct sequence_keyed *k = sequence_keyed_new(10, &test_key);
    int space = -1;
    CHECK_EQ_INT(sequence_keyed_space_add(k, "chat", 4, 10, &space), LEAF_OK);
    int s = key_section("bob");
    CHECK_EQ_INT(sequence_keyed_section_start(k, &l, 0, s), LEAF_OK);
    struct sequence_keyed_action a;
    CHECK_EQ_INT(sequence_keyed_action(k, &l, 1, &a), 1);
    CHECK_EQ_INT(a.io.op, SEQUENCE_OP_READ);
    CHECK_EQ_INT(
        sequence_keyed_done(k, &l, a.io.token, 1, SEQUENCE_RESULT_OK, "{\"max\":-1}", 10, 3),
        LEAF_OK);
    CHECK_EQ_INT(sequence_keyed_done(k, &l, a.io.token, 1, SEQUENCE_RESULT_OK, "{}", 2, 3),
                 LEAF_EINVAL); /* a repeated result changes nothing */
    int64_t first = 0;
    CHECK_EQ_INT(issue(k, &l, 1, 0, "bob", 3, 1, &first), LEAF_EAGAIN);
    CHECK_EQ_INT(sequence_keyed_action(k, &l, SEQUENCE_RECHECK_MS, &a), 0);
    CHECK_EQ_INT(sequence_keyed_action(k, &l, 1 + SEQUENCE_RECHECK_MS, &a), 1);
    CHECK_EQ_INT(a.io.op, SEQUENCE_OP_READ);
    CHECK_EQ_INT(
        sequence_keyed_done(k, &l, a.io.token, 1, SEQUENCE_RESULT_OK, "{\"max\":40}", 10, 3),
        LEAF_OK);
    CHECK_EQ_INT(sequence_keyed_action(k, &l, 1, &a), 1); /* the parked request's raise */
    CHECK_EQ_INT(a.io.op, SEQUENCE_OP_WRITE);
    CHECK_EQ_INT(a.io.version, 3);
    CHECK_EQ_INT(a.io.max, 51);
    CHECK_EQ_INT(sequence_keyed_done(k, &l, a.io.token, 1, SEQUENCE_RESULT_OK, NULL, 0, 0),
                 LEAF_OK);
    CHECK_EQ_INT(issue(k, &l, 1, 0, "bob", 3, 1, &first), LEAF_OK);
    CHECK_EQ_INT(first, 41);
    sequence_keyed_free(k);
}

static void make_key16(char *out, uint64_t i) {
    snprintf(out, 17, "user-%011llu", (unsigned long long)i);
}

/* A million new keys each taking one ID: one write per section touched, at most 256. */
static void test_million_keys_writes(void) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    struct sequence_keyed *k = core_up(1000000, 10000, &l);
    pump(k, &l); /* the starts' reads */
    int writes = 0, refused = 0;
    char key[17];
    for (uint64_t i = 0; i < 1000000; i++) {
        int64_t first = 0;
        make_key16(key, i);
        leaf_status_t st = issue(k, &l, 1, 0, key, 16, 1, &first);
        if (st == LEAF_EAGAIN) {
            writes += pump(k, &l);
            st = issue(k, &l, 1, 0, key, 16, 1, &first);
        }
        refused += st != LEAF_OK || first < 1;
        writes += pump(k, &l);
    }
    CHECK_EQ_INT(refused, 0);
    CHECK(writes <= SEQUENCE_KEYED_SECTIONS);
    CHECK_EQ_INT(sequence_keyed_stats(k, 0)->writes, writes);
    CHECK_EQ_INT(sequence_keyed_stats(k, 0)->resident, 1000000);
    /* bytes per resident key, the table's own count */
    CHECK(sequence_keyed_bytes(k) / 1000000 < 128);
    /* hash flooding: the longest probe run stays short at this load */
    CHECK(k->table.probe_max < 200);
    printf("1,000,000 keys: %d section writes, %zu table bytes a key, longest probe %llu\n", writes,
           sequence_keyed_bytes(k) / 1000000, (unsigned long long)k->table.probe_max);
    sequence_keyed_free(k);
}

/* Keys that share one hash tag (one slot, one section) spread over the table all the same. */
static void test_tagged_keys_spread(void) {
    struct sequence_keyed_table t;
    CHECK_EQ_INT(sequence_keyed_table_init(&t, 100000, &test_key, NULL, NULL), LEAF_OK);
    char key[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(key, sizeof(key), "{same}%d", i);
        uint64_t h = sequence_keyed_table_hash(&t, 0, key, strlen(key));
        struct sequence_keyed_entry *e = NULL;
        CHECK_EQ_INT(sequence_keyed_table_insert(&t, h, 0, 0, key, strlen(key), 1, &e), LEAF_OK);
    }
    CHECK(t.probe_max < 100);
    /* every key is found, and a missing one is not */
    snprintf(key, sizeof(key), "{same}%d", 99999);
    CHECK(sequence_keyed_table_find(&t, sequence_keyed_table_hash(&t, 0, key, strlen(key)), 0, key,
                                    strlen(key)) != NULL);
    CHECK(sequence_keyed_table_find(&t, sequence_keyed_table_hash(&t, 1, key, strlen(key)), 1, key,
                                    strlen(key)) == NULL);
    sequence_keyed_table_free(&t);
}

/* The table alone: an evicted key is gone, every other key is found (backward shifts keep runs). */
static char table_gone[5000];

static void table_evicted(void *ctx, unsigned space, unsigned section, int64_t last) {
    (void)ctx;
    (void)space;
    (void)section;
    table_gone[last - 1] = 1; /* the tests store key i + 1 as its last value */
}

static void test_table_evicts_and_finds(void) {
    struct sequence_keyed_table t;
    memset(table_gone, 0, sizeof(table_gone));
    CHECK_EQ_INT(sequence_keyed_table_init(&t, 300, &test_key, table_evicted, NULL), LEAF_OK);
    char key[32];
    for (int i = 0; i < 5000; i++) {
        /* short and long keys, in three spaces */
        snprintf(key, sizeof(key), i % 2 ? "k%d" : "a-longer-key-%08d", i);
        uint64_t h = sequence_keyed_table_hash(&t, (unsigned)(i % 3), key, strlen(key));
        struct sequence_keyed_entry *e = NULL;
        CHECK_EQ_INT(
            sequence_keyed_table_insert(&t, h, (unsigned)(i % 3), 7, key, strlen(key), i + 1, &e),
            LEAF_OK);
        CHECK_EQ_INT(e->last, i + 1);
    }
    CHECK_EQ_INT(t.count, 300);
    CHECK_EQ_INT(t.evictions, 4700);
    int found = 0;
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), i % 2 ? "k%d" : "a-longer-key-%08d", i);
        uint64_t h = sequence_keyed_table_hash(&t, (unsigned)(i % 3), key, strlen(key));
        struct sequence_keyed_entry *e =
            sequence_keyed_table_find(&t, h, (unsigned)(i % 3), key, strlen(key));
        CHECK_EQ_INT(e != NULL, !table_gone[i]);
        found += e != NULL;
        if (e != NULL) {
            CHECK_EQ_INT(e->last, i + 1);
            CHECK_EQ_INT(e->section, 7);
        }
    }
    CHECK_EQ_INT(found, 300);
    sequence_keyed_table_free(&t); /* ASan: the long keys are freed */
}

static long rss_kib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f != NULL) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) {
            resident = 0;
        }
        fclose(f);
    }
    return resident * 4;
}

/* test_sequence_keyed --measure N: bytes per resident 16-byte key (docs/keyed-sequences.md). */
static int measure(uint64_t n) {
    struct sequence_lease l;
    lease_up(&l);
    store_reset();
    struct mallinfo2 before = mallinfo2();
    long rss_before = rss_kib();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct sequence_keyed *k = core_up(n, SEQUENCE_KEYED_MAX_STEP / 2, &l);
    pump(k, &l);
    char key[17];
    for (uint64_t i = 0; i < n; i++) {
        int64_t first = 0;
        make_key16(key, i);
        if (issue(k, &l, 1, 0, key, 16, 1, &first) != LEAF_OK) {
            pump(k, &l);
            if (issue(k, &l, 1, 0, key, 16, 1, &first) != LEAF_OK) {
                fprintf(stderr, "key %llu refused\n", (unsigned long long)i);
                return 1;
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct mallinfo2 after = mallinfo2();
    long rss_after = rss_kib();
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%llu keys of 16 bytes: table %.1f B/key (%zu slots), malloc %.1f B/key, "
           "RSS %.1f B/key, longest probe %llu, %.0f ns/key\n",
           (unsigned long long)n, (double)sequence_keyed_bytes(k) / (double)n,
           (size_t)(k->table.mask + 1),
           (double)((after.uordblks + after.hblkhd) - (before.uordblks + before.hblkhd)) /
               (double)n,
           (double)(rss_after - rss_before) * 1024.0 / (double)n,
           (unsigned long long)k->table.probe_max, secs * 1e9 / (double)n);
    sequence_keyed_free(k);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--measure") == 0) {
        return measure(strtoull(argv[2], NULL, 10));
    }
    TEST(test_names_and_spaces);
    TEST(test_first_ids_and_parking);
    TEST(test_eviction_keeps_order);
    TEST(test_failover_property);
    TEST(test_straddling_owners);
    TEST(test_lowered_max_fences);
    TEST(test_giveback);
    TEST(test_section_returns);
    TEST(test_lapse_proves);
    TEST(test_corrupt_node_read_again);
    TEST(test_million_keys_writes);
    TEST(test_tagged_keys_spread);
    TEST(test_table_evicts_and_finds);
    return unit_done();
}
