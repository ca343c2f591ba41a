/*
 * Unit tests of the pure segment logic: the dynamic step rule under an
 * injected clock (segment/segment_step.c), the double buffer arithmetic
 * (segment/segment_buffer.c) and the tag table bookkeeping
 * (segment/segment_tags.c). No database, no threads.
 */
#include <stdlib.h>

#include "segment_buffer.h"
#include "segment_step.h"
#include "segment_tags.h"
#include "unit.h"

#define MIN_MS (60LL * 1000)

static void test_step_doubles_under_15_min(void) {
    CHECK_EQ_INT(segment_step_next(2000, 2000, 0), 4000);
    CHECK_EQ_INT(segment_step_next(2000, 2000, 15 * MIN_MS - 1), 4000);
    CHECK_EQ_INT(segment_step_next(4000, 2000, 14 * MIN_MS), 8000);
}

static void test_step_caps_at_one_million(void) {
    CHECK_EQ_INT(segment_step_next(600000, 2000, 1000), 1000000);
    CHECK_EQ_INT(segment_step_next(1000000, 2000, 1000), 1000000);
    int64_t s = 2000;
    for (int i = 0; i < 30; i++) {
        s = segment_step_next(s, 2000, 1000);
    }
    CHECK_EQ_INT(s, SEGMENT_STEP_MAX);
    /* a table step above the cap is still the floor */
    CHECK_EQ_INT(segment_step_next(3000000, 3000000, 1000), 3000000);
}

static void test_step_keeps_between_15_and_30_min(void) {
    CHECK_EQ_INT(segment_step_next(8000, 2000, 15 * MIN_MS), 8000);
    CHECK_EQ_INT(segment_step_next(8000, 2000, 30 * MIN_MS - 1), 8000);
}

static void test_step_halves_over_30_min_not_below_table(void) {
    CHECK_EQ_INT(segment_step_next(8000, 2000, 30 * MIN_MS), 4000);
    CHECK_EQ_INT(segment_step_next(4000, 2000, 90 * MIN_MS), 2000);
    CHECK_EQ_INT(segment_step_next(2000, 2000, 90 * MIN_MS), 2000);
    CHECK_EQ_INT(segment_step_next(3000, 2000, 31 * MIN_MS), 2000); /* 1500 clamped to 2000 */
    CHECK_EQ_INT(segment_step_next(1000, 2000, 20 * MIN_MS), 2000); /* table step raised */
}

/* Fetches for b at time now and installs what a table at *max_id would give. */
static int64_t fetch(struct segment_buffer *b, int64_t *max_id, int64_t now) {
    CHECK(segment_buffer_need_fetch(b));
    int64_t n = segment_buffer_begin_fetch(b, now);
    CHECK(!segment_buffer_need_fetch(b)); /* one in flight at most */
    *max_id += n;
    CHECK_EQ_INT(segment_buffer_install(b, *max_id, n, now), LEAF_OK);
    return n;
}

static void test_buffer_fresh_tag_issues_from_one(void) {
    struct segment_buffer b;
    int64_t max_id = 1, ids[10000];
    segment_buffer_init(&b, 2000);
    CHECK_EQ_INT(segment_buffer_take(&b, 1, ids), LEAF_EAGAIN);
    CHECK_EQ_INT(fetch(&b, &max_id, 0), 2000);
    CHECK_EQ_INT(max_id, 2001);
    CHECK_EQ_INT(segment_buffer_take(&b, 3, ids), LEAF_OK);
    CHECK_EQ_INT(ids[0], 1);
    CHECK_EQ_INT(ids[2], 3);
    CHECK(!segment_buffer_need_fetch(&b));
    CHECK_EQ_INT(segment_buffer_take(&b, 196, ids), LEAF_OK); /* 199 used: below 10% */
    CHECK(!segment_buffer_need_fetch(&b));
    CHECK_EQ_INT(segment_buffer_take(&b, 1, ids), LEAF_OK); /* 200 used = 10% */
    CHECK(segment_buffer_need_fetch(&b));
    CHECK_EQ_INT(fetch(&b, &max_id, 10), 2000); /* second fetch: table step, as Leaf */
    CHECK_EQ_INT(max_id, 4001);
    CHECK(!segment_buffer_need_fetch(&b)); /* next range ready: no fetch */
    CHECK_EQ_INT(segment_buffer_take(&b, 1800, ids), LEAF_OK);
    CHECK_EQ_INT(ids[1799], 2000);
    CHECK_EQ_INT(segment_buffer_take(&b, 1, ids), LEAF_OK);
    CHECK_EQ_INT(ids[0], 2001);
}

static void test_buffer_all_or_nothing_and_spanning(void) {
    struct segment_buffer b;
    int64_t max_id = 1, ids[10000];
    segment_buffer_init(&b, 10);
    fetch(&b, &max_id, 0); /* 1..10 */
    CHECK_EQ_INT(segment_buffer_take(&b, 8, ids), LEAF_OK);
    fetch(&b, &max_id, 0);                                       /* 11..20 */
    CHECK_EQ_INT(segment_buffer_take(&b, 13, ids), LEAF_EAGAIN); /* 12 buffered */
    CHECK_EQ_INT(b.available, 12);
    /* the refused demand asks for a range big enough to meet it */
    CHECK(segment_buffer_need_fetch(&b));
    int64_t n = segment_buffer_begin_fetch(&b, 1);
    CHECK(n >= 10);
    max_id += n;
    CHECK_EQ_INT(segment_buffer_install(&b, max_id, n, 1), LEAF_OK);
    CHECK_EQ_INT(segment_buffer_take(&b, 13, ids), LEAF_OK);
    for (int i = 0; i < 13; i++) {
        CHECK_EQ_INT(ids[i], 9 + i);
    }
}

static void test_buffer_big_batch_small_step(void) {
    struct segment_buffer b;
    int64_t max_id = 1, ids[10000];
    segment_buffer_init(&b, 1);
    CHECK_EQ_INT(segment_buffer_take(&b, 10000, ids), LEAF_EAGAIN);
    int64_t n = segment_buffer_begin_fetch(&b, 0);
    CHECK_EQ_INT(n, 10000);
    max_id += n;
    CHECK_EQ_INT(segment_buffer_install(&b, max_id, n, 0), LEAF_OK);
    CHECK_EQ_INT(segment_buffer_take(&b, 10000, ids), LEAF_OK);
    CHECK_EQ_INT(ids[0], 1);
    CHECK_EQ_INT(ids[9999], 10000);
}

static void test_buffer_dynamic_step_with_clock(void) {
    struct segment_buffer b;
    int64_t max_id = 1;
    segment_buffer_init(&b, 2000);
    CHECK_EQ_INT(fetch(&b, &max_id, 0), 2000);
    segment_buffer_clear(&b);
    CHECK_EQ_INT(fetch(&b, &max_id, 1000), 2000);
    segment_buffer_clear(&b);
    CHECK_EQ_INT(fetch(&b, &max_id, 2000), 4000); /* 1 s later: doubled */
    segment_buffer_clear(&b);
    CHECK_EQ_INT(fetch(&b, &max_id, 2000 + 20 * MIN_MS), 4000); /* 20 min: kept */
    segment_buffer_clear(&b);
    CHECK_EQ_INT(fetch(&b, &max_id, 2000 + 60 * MIN_MS), 2000); /* 40 min: halved */
    segment_buffer_clear(&b);
    CHECK_EQ_INT(fetch(&b, &max_id, 2000 + 120 * MIN_MS), 2000); /* never below the table */
    segment_buffer_set_min_step(&b, 5000);                       /* PUT /api/leaf/step */
    segment_buffer_clear(&b);
    CHECK_EQ_INT(fetch(&b, &max_id, 2000 + 200 * MIN_MS), 5000);
}

static void test_buffer_failed_fetch_and_stale_install(void) {
    struct segment_buffer b;
    int64_t ids[4];
    segment_buffer_init(&b, 100);
    segment_buffer_begin_fetch(&b, 0);
    segment_buffer_fetch_failed(&b);
    CHECK(segment_buffer_need_fetch(&b));
    CHECK_EQ_INT(segment_buffer_install(&b, 101, 100, 0), LEAF_EINVAL); /* none in flight */
    /* a range below what was installed before (max_id lowered by hand) is clipped */
    segment_buffer_begin_fetch(&b, 0);
    CHECK_EQ_INT(segment_buffer_install(&b, 501, 100, 0), LEAF_OK); /* 401..500 */
    segment_buffer_begin_fetch(&b, 0);
    CHECK_EQ_INT(segment_buffer_install(&b, 451, 100, 0), LEAF_EINVAL);
    segment_buffer_begin_fetch(&b, 0);
    CHECK_EQ_INT(segment_buffer_install(&b, 551, 100, 0), LEAF_OK); /* clipped to 501..550 */
    CHECK_EQ_INT(b.available, 150);
    /* never an ID below 1 */
    struct segment_buffer c;
    segment_buffer_init(&c, 10);
    segment_buffer_begin_fetch(&c, 0);
    CHECK_EQ_INT(segment_buffer_install(&c, 5, 10, 0), LEAF_OK);
    CHECK_EQ_INT(segment_buffer_take(&c, 4, ids), LEAF_OK);
    CHECK_EQ_INT(ids[0], 1);
    CHECK_EQ_INT(c.available, 0);
}

/* A refresh read with generation gen, the table holding n rows (name, step). */
static struct segment_known *table_at(uint64_t gen, const char *const *names, const int64_t *steps,
                                      int n) {
    struct sbuf packed = SBUF_INIT;
    for (int i = 0; i < n; i++) {
        segment_known_pack(&packed, names[i], strlen(names[i]), steps[i]);
    }
    struct segment_known *k = NULL;
    CHECK_EQ_INT(segment_known_build(&k, &packed, gen), LEAF_OK);
    return k;
}

static void test_tags_refresh_and_lookup_race(void) {
    struct segment_tags m;
    int created;
    CHECK_EQ_INT(segment_tags_init(&m), LEAF_OK);
    CHECK(segment_tags_add(&m, "a", 1, &created) != NULL && created);
    CHECK(segment_tags_add(&m, "b", 1, &created) != NULL && created);
    static const char *const ab[] = {"a", "b"};
    static const int64_t ab_steps[] = {10, 20};
    struct segment_known *k = table_at(segment_tags_next_gen(&m), ab, ab_steps, 2);
    CHECK_EQ_INT(segment_tags_sync_known(&m, k), 0);
    segment_known_free(k);
    struct segment_tag *a = segment_tags_find(&m, "a", 1);
    CHECK(a != NULL && a->state == SEGMENT_TAG_ACTIVE && a->buf.min_step == 10);
    /* refresh g2 starts; tag c is found by a lookup meanwhile; b is gone from the table */
    uint64_t g2 = segment_tags_next_gen(&m);
    struct segment_tag *c = segment_tags_add(&m, "c", 1, &created);
    CHECK(created && c->state == SEGMENT_TAG_PENDING);
    segment_tags_activate(&m, c, 5);
    k = table_at(g2, ab, ab_steps, 1);
    CHECK_EQ_INT(segment_tags_sync_known(&m, k), 1);
    segment_known_free(k);
    CHECK(segment_tags_find(&m, "c", 1) != NULL);
    CHECK(segment_tags_find(&m, "c", 1)->state == SEGMENT_TAG_ACTIVE);
    CHECK(segment_tags_find(&m, "b", 1) == NULL); /* absent and idle: freed */
    CHECK_EQ_INT(m.count, 2);
    segment_tags_free(&m);
}

static void test_tags_many_and_epochs(void) {
    struct segment_tags m;
    int created;
    char name[16];
    CHECK_EQ_INT(segment_tags_init(&m), LEAF_OK);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "t%d", i);
        CHECK(segment_tags_add(&m, name, strlen(name), &created) != NULL && created);
    }
    CHECK_EQ_INT(m.count, 1000);
    CHECK(segment_tags_find(&m, "t999", 4) != NULL);
    CHECK(segment_tags_find(&m, "t1000", 5) == NULL);
    struct segment_tag *t = segment_tags_find(&m, "t7", 2);
    uint64_t e0 = t->epoch;
    segment_tags_activate(&m, t, 100);
    t->buf.fetching = 1; /* a fetch is out when the tag leaves the table */
    segment_tags_deactivate(&m, t);
    CHECK(t->epoch != e0);
    segment_tags_activate(&m, t, 100);
    CHECK_EQ_INT(t->buf.fetching, 1); /* still counted: no second fetch in flight */
    CHECK(segment_tags_add(&m, "", 0, &created) == NULL);
    segment_tags_free(&m);
}

/* INCRBY: n consecutive IDs from one range; a short rest is skipped, never issued. */
static void test_buffer_dense_skips_short_rest(void) {
    struct segment_buffer b;
    int64_t max_id = 1, last = 0, ids[4];
    segment_buffer_init(&b, 10);
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 3, &last), LEAF_EAGAIN);
    fetch(&b, &max_id, 0); /* 1..10 */
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 3, &last), LEAF_OK);
    CHECK_EQ_INT(last, 3); /* 1..3 */
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 6, &last), LEAF_OK);
    CHECK_EQ_INT(last, 9); /* 4..9; 10 left */
    /* 1 left and no next range: nothing is skipped yet, a fetch of >= 4 is wanted */
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 4, &last), LEAF_EAGAIN);
    CHECK_EQ_INT(b.available, 1);
    CHECK(segment_buffer_need_fetch(&b));
    CHECK(segment_buffer_begin_fetch(&b, 0) >= 4);
    max_id += 10;
    CHECK_EQ_INT(segment_buffer_install(&b, max_id, 10, 0), LEAF_OK); /* 11..20 */
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 4, &last), LEAF_OK);
    CHECK_EQ_INT(last, 14); /* 11..14: 10 was skipped */
    CHECK_EQ_INT(b.skipped, 1);
    CHECK_EQ_INT(b.issued, 13);
    CHECK_EQ_INT(b.available, 6);
    CHECK_EQ_INT(segment_buffer_take(&b, 1, ids), LEAF_OK);
    CHECK_EQ_INT(ids[0], 15); /* single takes go on above; 10 never comes back */
    /* a dense take that ends a range exactly moves to the next */
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 5, &last), LEAF_OK);
    CHECK_EQ_INT(last, 20);
    CHECK_EQ_INT(b.nranges, 0);
    CHECK_EQ_INT(segment_buffer_take_dense(&b, 0, &last), LEAF_EINVAL);
}

int main(void) {
    TEST(test_step_doubles_under_15_min);
    TEST(test_step_caps_at_one_million);
    TEST(test_step_keeps_between_15_and_30_min);
    TEST(test_step_halves_over_30_min_not_below_table);
    TEST(test_buffer_fresh_tag_issues_from_one);
    TEST(test_buffer_all_or_nothing_and_spanning);
    TEST(test_buffer_big_batch_small_step);
    TEST(test_buffer_dynamic_step_with_clock);
    TEST(test_buffer_failed_fetch_and_stale_install);
    TEST(test_buffer_dense_skips_short_rest);
    TEST(test_tags_refresh_and_lookup_race);
    TEST(test_tags_many_and_epochs);
    return unit_done();
}
