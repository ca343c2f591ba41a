/*
 * The bounded lead (docs/reference/guarantees.md, "The bounded lead") under an injected clock:
 * steps back within and beyond the bound, a restart above a stored reservation, batches that cross
 * the bound, and every layout and time unit of docs/id-shapes.md.
 */
#include <string.h>

#include "snowflake_gen.h"
#include "snowflake_id.h"
#include "unit.h"

#define EPOCH SNOWFLAKE_DEFAULT_EPOCH
#define T0 (EPOCH + 1000000000LL) /* an arbitrary "now" */
#define LEAD 5000

struct shape {
    const char *text;
    int64_t unit_ms;
};

static const struct shape shapes[] = {
    {"time:41,worker:10,sequence:12", 1},    /* Leaf, the default */
    {"time:39,sequence:8,worker:16", 10},    /* Sonyflake */
    {"time:28,worker:22,sequence:13", 1000}, /* Baidu uid-generator */
    {"time:41,worker:4,sequence:8", 1},      /* JavaScript-safe (53 bits) */
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static void gen_shape(struct snowflake_gen *g, const struct shape *s, int64_t lead) {
    struct snowflake_layout l;
    char reason[128];
    CHECK_EQ_INT(snowflake_layout_parse(&l, s->text, strlen(s->text), reason, sizeof(reason)),
                 LEAF_OK);
    CHECK_EQ_INT(snowflake_layout_set_unit(&l, s->unit_ms, reason, sizeof(reason)), LEAF_OK);
    snowflake_gen_init_layout(g, &l, EPOCH, 42);
    snowflake_gen_set_worker(g, 3);
    snowflake_gen_set_max_lead(g, lead);
}

static int64_t time_of(const struct snowflake_gen *g, int64_t id) {
    struct snowflake_parts p;
    CHECK_EQ_INT(snowflake_layout_decode(&g->layout, id, EPOCH, &p), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 3);
    return p.timestamp_ms;
}

/*
 * After an ID at T0, the clock steps back by step ms and requests keep
 * coming, one ID every ms of the clock: each is served at once, above the
 * last one, with a time field within the bound, until the clock is back.
 */
static void step_within_bound(const struct shape *s, int64_t step) {
    struct snowflake_gen g;
    gen_shape(&g, s, LEAD);
    int64_t id, prev, wait;
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &prev, 1, &wait), LEAF_OK);
    int64_t t0_time = time_of(&g, prev);
    for (int64_t now = T0 - step; now <= T0 + 2 * s->unit_ms; now++) {
        CHECK_EQ_INT(snowflake_gen_next(&g, now, &id, 1, &wait), LEAF_OK);
        CHECK(id > prev);
        CHECK(time_of(&g, id) >= t0_time);
        CHECK(time_of(&g, id) <= now + LEAD);
        prev = id;
    }
    CHECK_EQ_INT(g.backwards_errors, 0);
    CHECK_EQ_INT(g.backwards_waits, 0);
    CHECK(g.lead_issues > 0 || step < s->unit_ms);
}

static void test_steps_within_bound(void) {
    int64_t steps[] = {1, 500, 4900};
    for (size_t i = 0; i < NSHAPES; i++) {
        for (size_t k = 0; k < 3; k++) {
            step_within_bound(&shapes[i], steps[k]);
        }
    }
}

/* 60 s back: the bound is reached at once; 503 until the clock is within it, not 60 s. */
static void test_step_beyond_bound(void) {
    for (size_t i = 0; i < NSHAPES; i++) {
        struct snowflake_gen g;
        gen_shape(&g, &shapes[i], LEAD);
        int64_t id, id2, wait;
        CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
        int64_t back = T0 - 60000;
        CHECK_EQ_INT(snowflake_gen_next(&g, back, &id2, 1, &wait), LEAF_ECLOCK);
        CHECK_EQ_INT(wait, 60000 - LEAD);
        CHECK_EQ_INT(g.backwards_errors, 1);
        /* 5 ms short of the bound: a short wait, as a small step without a lead */
        CHECK_EQ_INT(snowflake_gen_next(&g, back + wait - 5, &id2, 1, &wait), LEAF_EAGAIN);
        CHECK_EQ_INT(wait, 5);
        /* at the bound: served, above the last, the time field LEAD ahead */
        int64_t now = T0 - LEAD;
        CHECK_EQ_INT(snowflake_gen_next(&g, now, &id2, 1, &wait), LEAF_OK);
        CHECK(id2 > id);
        CHECK(time_of(&g, id2) <= now + LEAD);
        CHECK_EQ_INT(snowflake_gen_lead(&g, now), LEAD);
    }
}

/* max.lead.ms = 0 keeps the waiting behaviour of docs/reference/guarantees.md. */
static void test_zero_lead_waits(void) {
    struct snowflake_gen g;
    gen_shape(&g, &shapes[0], 0);
    int64_t id, wait;
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 - 3, &id, 1, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(wait, 3);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 - 500, &id, 1, &wait), LEAF_ECLOCK);
    CHECK_EQ_INT(wait, 500);
    snowflake_gen_set_floor(&g, T0 + 4800);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_ECLOCK);
    CHECK_EQ_INT(wait, 4801);
}

/* A restart above the stored reservation serves at once, above it. */
static void test_restart_above_reservation(void) {
    for (size_t i = 0; i < NSHAPES; i++) {
        const struct shape *s = &shapes[i];
        struct snowflake_gen g;
        gen_shape(&g, s, LEAD);
        int64_t floor_ms = T0 + 4800, id, prev = -1, wait;
        snowflake_gen_set_floor(&g, floor_ms);
        snowflake_gen_set_ceiling(&g, floor_ms + 5000);
        for (int64_t now = T0; now < T0 + 20; now++) {
            CHECK_EQ_INT(snowflake_gen_next(&g, now, &id, 1, &wait), LEAF_OK);
            CHECK(time_of(&g, id) > floor_ms - s->unit_ms); /* a tick above floor's tick */
            CHECK(id > prev);
            prev = id;
        }
        /* the first tick after the floor's starts above it */
        struct snowflake_parts p;
        snowflake_layout_decode(&g.layout, id, EPOCH, &p);
        CHECK(p.ticks > (floor_ms - EPOCH) / s->unit_ms);
        CHECK(snowflake_gen_lead(&g, T0) > 0);
        /* a reservation beyond the bound is still waited for (here refused) */
        gen_shape(&g, s, LEAD);
        snowflake_gen_set_floor(&g, T0 + LEAD + 2 * s->unit_ms + 100);
        CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_ECLOCK);
        CHECK(wait > 100);
    }
}

/*
 * Clock stepped back by 4,995 ms: large batches borrow tick after tick up to
 * the bound (5 ms ahead of the last ID here), never past it nor past the
 * ceiling; a batch that does not fit is refused whole with a short wait (not
 * a clock error), and IDs stay strictly increasing throughout.
 */
static void test_batches_cross_bound(void) {
    static int64_t ids[SNOWFLAKE_MAX_BATCH];
    for (size_t i = 0; i < NSHAPES; i++) {
        const struct shape *s = &shapes[i];
        struct snowflake_gen g;
        gen_shape(&g, s, LEAD);
        int64_t prev, wait, now = T0 - 4995;
        int max = snowflake_gen_max_batch(&g) / 4; /* fits in what one tick has left */
        CHECK_EQ_INT(snowflake_gen_next(&g, T0, &prev, 1, &wait), LEAF_OK);
        uint64_t before = g.issued;
        leaf_status_t rc = LEAF_OK;
        int rounds = 0;
        while (rc == LEAF_OK && rounds < 100000) {
            rc = snowflake_gen_next(&g, now, ids, max, &wait);
            if (rc == LEAF_OK) {
                CHECK(ids[0] > prev);
                CHECK(ids[max - 1] > ids[0]);
                CHECK(time_of(&g, ids[max - 1]) <= now + LEAD);
                prev = ids[max - 1];
            }
            rounds++;
        }
        CHECK_EQ_INT(rc, LEAF_EAGAIN);
        CHECK(wait >= 1 && wait <= 2 * s->unit_ms + SNOWFLAKE_DEFAULT_BORROW_MS);
        CHECK(g.issued > before); /* the lead gave room for at least one batch */
        /* the clock moves on: served again, still within the bound */
        for (int64_t t = now + wait; t < now + wait + 3 * s->unit_ms; t++) {
            rc = snowflake_gen_next(&g, t, ids, 1, &wait);
            CHECK(rc == LEAF_OK || rc == LEAF_EAGAIN);
            if (rc == LEAF_OK) {
                CHECK(ids[0] > prev);
                CHECK(time_of(&g, ids[0]) <= t + LEAD);
                prev = ids[0];
            }
        }
    }
}

/*
 * 3 s back under a load just below the layout's limit for 3 s of the clock:
 * every batch is served (the lead's clock advances with the wall clock), the
 * lead shrinks, and no ID passes the bound.
 */
static void test_lead_at_full_rate(void) {
    static int64_t ids[SNOWFLAKE_MAX_BATCH];
    struct snowflake_gen g;
    gen_shape(&g, &shapes[0], LEAD);
    int64_t prev, wait;
    int per_ms = 3900; /* a fresh tick surely holds 4096 - 99 */
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &prev, 1, &wait), LEAF_OK);
    for (int64_t now = T0 - 3000; now < T0; now++) {
        CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, per_ms, &wait), LEAF_OK);
        CHECK(ids[0] > prev);
        CHECK(time_of(&g, ids[per_ms - 1]) <= now + 3000 + SNOWFLAKE_DEFAULT_BORROW_MS);
        prev = ids[per_ms - 1];
    }
    /* below the limit the last tick lags the lead's clock: the lead shrinks */
    CHECK(snowflake_gen_lead(&g, T0 - 1) < 3000);
}

/* Within the lead, the ceiling (what ZooKeeper or the cache acknowledged) still binds. */
static void test_lead_stops_at_ceiling(void) {
    static int64_t ids[SNOWFLAKE_MAX_BATCH];
    struct snowflake_gen g;
    gen_shape(&g, &shapes[0], LEAD);
    int64_t id, wait;
    snowflake_gen_set_ceiling(&g, T0 + 3);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    leaf_status_t rc;
    do {
        rc = snowflake_gen_next(&g, T0 - 1000, ids, 1000, &wait);
        CHECK(rc != LEAF_OK || time_of(&g, ids[999]) < T0 + 3);
    } while (rc == LEAF_OK);
    CHECK_EQ_INT(rc, LEAF_EUNAVAIL);
    /* and a restart: the floor above the ceiling issues nothing */
    gen_shape(&g, &shapes[0], LEAD);
    snowflake_gen_set_floor(&g, T0 + 100);
    snowflake_gen_set_ceiling(&g, T0 + 101);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_EUNAVAIL);
}

/* Outside a step back, exhaustion borrows borrow_ms only: the lead is no extra throughput. */
static void test_no_runaway_without_step(void) {
    static int64_t ids[SNOWFLAKE_MAX_BATCH];
    struct snowflake_gen g;
    gen_shape(&g, &shapes[0], LEAD);
    int64_t wait;
    int max = snowflake_gen_max_batch(&g);
    leaf_status_t rc;
    int64_t last = 0;
    while ((rc = snowflake_gen_next(&g, T0, ids, max, &wait)) == LEAF_OK) {
        last = ids[max - 1];
    }
    CHECK_EQ_INT(rc, LEAF_EAGAIN);
    CHECK(time_of(&g, last) <= T0 + SNOWFLAKE_DEFAULT_BORROW_MS);
    CHECK(snowflake_gen_lead(&g, T0) <= SNOWFLAKE_DEFAULT_BORROW_MS);
    CHECK_EQ_INT(g.lead_issues, 0);
}

/* The lead shown: the logical time ahead of the clock, 0 once it caught up. */
static void test_lead_value(void) {
    struct snowflake_gen g;
    gen_shape(&g, &shapes[0], LEAD);
    int64_t id, wait;
    CHECK_EQ_INT(snowflake_gen_lead(&g, T0), 0);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_lead(&g, T0), 0);
    CHECK_EQ_INT(snowflake_gen_next(&g, T0 - 300, &id, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_lead(&g, T0 - 300), 300);
    CHECK_EQ_INT(snowflake_gen_lead(&g, T0 + 1), 0);
}

int main(void) {
    TEST(test_steps_within_bound);
    TEST(test_step_beyond_bound);
    TEST(test_zero_lead_waits);
    TEST(test_restart_above_reservation);
    TEST(test_batches_cross_bound);
    TEST(test_lead_at_full_rate);
    TEST(test_lead_stops_at_ceiling);
    TEST(test_no_runaway_without_step);
    TEST(test_lead_value);
    return unit_done();
}
