/* Bit layout, decode round trip and the clock policy under an injected clock. */
#include "snowflake_gen.h"
#include "snowflake_id.h"
#include "unit.h"

#define EPOCH SNOWFLAKE_DEFAULT_EPOCH
#define T0 (EPOCH + 1000000000LL) /* an arbitrary "now" */

/* Splits an ID of the default layout: 0, or -1 for one it never issues (a negative one). */
static int id_decode(int64_t id, int64_t epoch, struct snowflake_parts *out) {
    struct snowflake_layout l;
    snowflake_layout_default(&l);
    return snowflake_layout_decode(&l, id, epoch, out) == LEAF_OK ? 0 : -1;
}

static void gen_with_worker(struct snowflake_gen *g, int worker) {
    snowflake_gen_init(g, EPOCH, 42);
    snowflake_gen_set_worker(g, worker);
}

static void test_layout_round_trip(void) {
    int64_t rel[] = {0, 1, 1234567890123LL, SNOWFLAKE_MAX_TIMESTAMP};
    int workers[] = {0, 1, 512, 1023};
    int seqs[] = {0, 99, 4095};
    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < 4; j++) {
            for (size_t k = 0; k < 3; k++) {
                int64_t id = snowflake_id_make(rel[i], workers[j], seqs[k]);
                struct snowflake_parts p;
                CHECK(id >= 0);
                CHECK_EQ_INT(id_decode(id, EPOCH, &p), 0);
                CHECK_EQ_INT(p.timestamp_ms, rel[i] + EPOCH);
                CHECK_EQ_INT(p.worker_id, workers[j]);
                CHECK_EQ_INT(p.sequence, seqs[k]);
            }
        }
    }
    /* Leaf's own example layout: ts << 22 | worker << 12 | seq */
    CHECK_EQ_INT(snowflake_id_make(5, 3, 7), (5LL << 22) | (3LL << 12) | 7);
    struct snowflake_parts p;
    CHECK_EQ_INT(id_decode(-1, EPOCH, &p), -1);
}

static void test_custom_epoch(void) {
    struct snowflake_gen g;
    int64_t epoch = 1600000000000LL, id, wait;
    snowflake_gen_init(&g, epoch, 1);
    snowflake_gen_set_worker(&g, 7);
    CHECK_EQ_INT(snowflake_gen_next(&g, epoch + 5000, &id, 1, &wait), LEAF_OK);
    struct snowflake_parts p;
    id_decode(id, epoch, &p);
    CHECK_EQ_INT(p.timestamp_ms, epoch + 5000);
    CHECK_EQ_INT(p.worker_id, 7);
    CHECK(p.sequence < SNOWFLAKE_RANDOM_START);
}

static void test_strictly_increasing_and_random_start(void) {
    struct snowflake_gen g;
    gen_with_worker(&g, 3);
    int64_t prev = -1, id, wait;
    int starts_seen[SNOWFLAKE_RANDOM_START] = {0}, distinct = 0;
    for (int64_t t = T0; t < T0 + 2000; t++) {
        for (int k = 0; k < 3; k++) {
            CHECK_EQ_INT(snowflake_gen_next(&g, t, &id, 1, &wait), LEAF_OK);
            CHECK(id > prev);
            prev = id;
            struct snowflake_parts p;
            id_decode(id, EPOCH, &p);
            CHECK_EQ_INT(p.timestamp_ms, t);
            if (k == 0) {
                CHECK(p.sequence < SNOWFLAKE_RANDOM_START);
                distinct += !starts_seen[p.sequence]++;
            }
        }
    }
    CHECK(distinct > 50); /* starts are spread over 0..99 */
}

static void test_backwards_small_waits(void) {
    int steps[] = {1, 5};
    for (int i = 0; i < 2; i++) {
        struct snowflake_gen g;
        gen_with_worker(&g, 1);
        int64_t id, id2, wait;
        CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
        CHECK_EQ_INT(snowflake_gen_next(&g, T0 - steps[i], &id2, 1, &wait), LEAF_EAGAIN);
        CHECK_EQ_INT(wait, steps[i]);
        CHECK_EQ_INT(g.backwards_waits, 1);
        /* after waiting, the clock is back where it was: served, above the last */
        CHECK_EQ_INT(snowflake_gen_next(&g, T0 - steps[i] + wait, &id2, 1, &wait), LEAF_OK);
        CHECK(id2 > id);
    }
}

static void test_backwards_large_refused(void) {
    int64_t steps[] = {6, 10000};
    for (int i = 0; i < 2; i++) {
        struct snowflake_gen g;
        gen_with_worker(&g, 1);
        int64_t id, id2, wait;
        CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
        CHECK_EQ_INT(snowflake_gen_next(&g, T0 - steps[i], &id2, 1, &wait), LEAF_ECLOCK);
        CHECK_EQ_INT(wait, steps[i]);
        CHECK_EQ_INT(g.backwards_errors, 1);
        /* still refused while behind, served once caught up */
        CHECK_EQ_INT(snowflake_gen_next(&g, T0 - steps[i] / 2 - 6, &id2, 1, &wait), LEAF_ECLOCK);
        CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 1, &id2, 1, &wait), LEAF_OK);
        CHECK(id2 > id);
    }
}

static void test_exhaustion_borrows_next_ms(void) {
    struct snowflake_gen g;
    gen_with_worker(&g, 9);
    int64_t ids[SNOWFLAKE_MAX_BATCH], wait;
    /* 4096 in one ms cannot fit (random start): the batch spills into T0+1. */
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, ids, 4096, &wait), LEAF_OK);
    for (int i = 1; i < 4096; i++) {
        CHECK(ids[i] > ids[i - 1]);
    }
    struct snowflake_parts first, last;
    id_decode(ids[0], EPOCH, &first);
    id_decode(ids[4095], EPOCH, &last);
    CHECK_EQ_INT(first.timestamp_ms, T0);
    CHECK_EQ_INT(last.timestamp_ms, T0 + 1);
    CHECK_EQ_INT(g.exhaustions, 1);
}

static void test_borrow_is_bounded(void) {
    struct snowflake_gen g;
    gen_with_worker(&g, 9);
    int64_t ids[SNOWFLAKE_MAX_BATCH], wait;
    leaf_status_t rc;
    int batches = 0;
    /* With the clock frozen, issuing stops once borrow_ms ahead is used. */
    while ((rc = snowflake_gen_next(&g, T0, ids, SNOWFLAKE_MAX_BATCH, &wait)) == LEAF_OK) {
        batches++;
    }
    CHECK_EQ_INT(rc, LEAF_EAGAIN);
    CHECK(wait >= 1);
    CHECK(batches >= 1);
    CHECK(g.last_ms <= T0 + g.borrow_ms);
    /* nothing was issued by the refused call */
    int64_t last = g.last_ms;
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, ids, SNOWFLAKE_MAX_BATCH, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(g.last_ms, last);
    /* time passes: served again, above everything before */
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + wait + 3, ids, 1, &wait), LEAF_OK);
    struct snowflake_parts p;
    id_decode(ids[0], EPOCH, &p);
    CHECK(p.timestamp_ms > T0);
}

static void test_floor_and_ceiling(void) {
    struct snowflake_gen g;
    gen_with_worker(&g, 2);
    int64_t id, wait;
    snowflake_gen_set_floor(&g, T0 + 3);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_EAGAIN); /* 4 ms behind */
    CHECK_EQ_INT(wait, 4);
    snowflake_gen_set_floor(&g, T0 + 100);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_ECLOCK);
    snowflake_gen_set_floor(&g, T0); /* never lowered */
    CHECK_EQ_INT(g.floor_ms, T0 + 100);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 101, &id, 1, &wait), LEAF_OK);
    struct snowflake_parts p;
    id_decode(id, EPOCH, &p);
    CHECK(p.timestamp_ms > T0 + 100);

    snowflake_gen_set_ceiling(&g, T0 + 102); /* only T0+101 is reserved */
    int64_t ids[SNOWFLAKE_MAX_BATCH];
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 101, ids, 5000, &wait), LEAF_EUNAVAIL);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 + 102, ids, 1, &wait), LEAF_EUNAVAIL);
}

/* A move forgets the old worker's clock readings; only the new floor and ceiling bind. */
static void test_move_to_other_worker(void) {
    struct snowflake_gen g;
    gen_with_worker(&g, 3);
    int64_t id, id2, wait;
    snowflake_gen_set_ceiling(&g, T0 + 1000);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    /* the clock steps back 10 minutes: refused on worker 3 */
    int64_t back = T0 - 600000;
    CHECK_EQ_INT(snowflake_gen_next(&g, back, &id2, 1, &wait), LEAF_ECLOCK);
    snowflake_gen_move(&g, 7, back - 50, back + 5000);
    CHECK_EQ_INT(snowflake_gen_next(&g, back, &id2, 1, &wait), LEAF_OK);
    struct snowflake_parts p;
    id_decode(id2, EPOCH, &p);
    CHECK_EQ_INT(p.worker_id, 7);
    CHECK_EQ_INT(p.timestamp_ms, back);
    CHECK(id2 < id); /* below the old worker's IDs: unique through the worker field */
    /* the new floor binds: a floor ahead of the clock refuses */
    snowflake_gen_move(&g, 8, back + 100, back + 5000);
    CHECK_EQ_INT(snowflake_gen_next(&g, back, &id2, 1, &wait), LEAF_ECLOCK);
    /* and the new ceiling */
    snowflake_gen_move(&g, 9, back - 10, back);
    CHECK_EQ_INT(snowflake_gen_next(&g, back, &id2, 1, &wait), LEAF_EUNAVAIL);
}

static void test_no_worker_and_range(void) {
    struct snowflake_gen g;
    int64_t id, wait;
    snowflake_gen_init(&g, EPOCH, 0);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_EUNAVAIL);
    snowflake_gen_set_worker(&g, 0);
    CHECK_EQ_INT(snowflake_gen_next(&g, EPOCH - 1, &id, 1, &wait), LEAF_ERANGE);
    CHECK_EQ_INT(snowflake_gen_next(&g, EPOCH + SNOWFLAKE_MAX_TIMESTAMP + 1, &id, 1, &wait),
                 LEAF_ERANGE);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 0, &wait), LEAF_EINVAL);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, SNOWFLAKE_MAX_BATCH + 1, &wait), LEAF_EINVAL);
}

int main(void) {
    TEST(test_layout_round_trip);
    TEST(test_custom_epoch);
    TEST(test_strictly_increasing_and_random_start);
    TEST(test_backwards_small_waits);
    TEST(test_backwards_large_refused);
    TEST(test_exhaustion_borrows_next_ms);
    TEST(test_borrow_is_bounded);
    TEST(test_floor_and_ceiling);
    TEST(test_move_to_other_worker);
    TEST(test_no_worker_and_range);
    return unit_done();
}
