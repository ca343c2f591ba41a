/*
 * The refresh's known set and the negative cache with its lookup budget
 * (segment/segment_known.c, segment/segment_negcache.c), with an injected
 * clock: what a flood of unknown tags may cost, and that a table of
 * 100,000 tags costs a few MB.
 */
#include <stdlib.h>

#include "segment_known.h"
#include "segment_negcache.h"
#include "segment_tags.h"
#include "unit.h"

static void test_known_set(void) {
    struct sbuf packed = SBUF_INIT;
    char name[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(name, sizeof(name), "tag.%d", i);
        segment_known_pack(&packed, name, (size_t)n, 1000 + i);
    }
    struct segment_known *k = NULL;
    CHECK_EQ_INT(segment_known_build(&k, &packed, 7), LEAF_OK);
    CHECK(packed.data == NULL); /* the set took the rows */
    CHECK_EQ_INT(segment_known_count(k), 100000);
    CHECK_EQ_INT(segment_known_gen(k), 7);
    int64_t step = 0;
    CHECK(segment_known_find(k, "tag.0", 5, &step) && step == 1000);
    CHECK(segment_known_find(k, "tag.99999", 9, &step) && step == 100999);
    CHECK(!segment_known_find(k, "tag.100000", 10, &step));
    CHECK(!segment_known_find(k, "tag.1", 4, &step));
    CHECK(!segment_known_find(NULL, "tag.1", 5, &step));
    CHECK(segment_known_bytes(k) < 100000 * 40); /* ~30 bytes a tag */
    segment_known_free(k);
}

/* A refresh as a known set touches only the tags in the map. */
static void test_sync_known(void) {
    struct segment_tags m;
    CHECK_EQ_INT(segment_tags_init(&m), LEAF_OK);
    int created;
    struct segment_tag *a = segment_tags_add(&m, "a", 1, &created);
    segment_tags_activate(&m, a, 10);
    struct segment_tag *b = segment_tags_add(&m, "b", 1, &created);
    segment_tags_activate(&m, b, 10);
    uint64_t g = segment_tags_next_gen(&m);
    struct sbuf packed = SBUF_INIT;
    segment_known_pack(&packed, "a", 1, 20);
    segment_known_pack(&packed, "c", 1, 30);
    struct segment_known *k = NULL;
    CHECK_EQ_INT(segment_known_build(&k, &packed, g), LEAF_OK);
    CHECK_EQ_INT(segment_tags_sync_known(&m, k), 1); /* b left the table */
    a = segment_tags_find(&m, "a", 1);
    CHECK(a != NULL && a->state == SEGMENT_TAG_ACTIVE && a->buf.min_step == 20);
    CHECK(segment_tags_find(&m, "b", 1) == NULL); /* absent, nothing waiting: swept */
    CHECK(segment_tags_find(&m, "c", 1) == NULL); /* known, never used: no entry */
    CHECK_EQ_INT(m.count, 1);
    segment_known_free(k);
    segment_tags_free(&m);
}

static void test_negcache_ttl_and_cap(void) {
    struct segment_negcache c;
    CHECK_EQ_INT(segment_negcache_init(&c, 4, 1000, 100), LEAF_OK);
    segment_negcache_put(&c, "x", 1, 0);
    CHECK_EQ_INT(segment_negcache_found(&c, "x", 1, 500), 0); /* when it was found unknown */
    CHECK(segment_negcache_found(&c, "x", 1, 999) >= 0);
    CHECK(segment_negcache_found(&c, "x", 1, 1000) < 0); /* expired */
    CHECK(segment_negcache_found(&c, "y", 1, 10) < 0);
    char name[16];
    for (int i = 0; i < 10; i++) { /* over the cap: the oldest go */
        int n = snprintf(name, sizeof(name), "u%d", i);
        segment_negcache_put(&c, name, (size_t)n, 2000 + i);
    }
    CHECK(c.count <= 4);
    CHECK(segment_negcache_found(&c, "u9", 2, 2100) >= 0);
    CHECK(segment_negcache_found(&c, "u6", 2, 2100) >= 0);
    CHECK(segment_negcache_found(&c, "u5", 2, 2100) < 0);
    segment_negcache_forget(&c, "u9", 2); /* created since */
    CHECK(segment_negcache_found(&c, "u9", 2, 2100) < 0);
    segment_negcache_put(&c, "u9", 2, 2200);
    CHECK(segment_negcache_found(&c, "u9", 2, 2300) >= 0);
    segment_negcache_free(&c);
}

static void test_lookup_budget(void) {
    struct segment_negcache c;
    CHECK_EQ_INT(segment_negcache_init(&c, 16, 1000, 100), LEAF_OK);
    int admitted = 0;
    for (int i = 0; i < 1000; i++) {
        admitted += segment_negcache_admit(&c, 5000); /* one instant: the burst */
    }
    CHECK_EQ_INT(admitted, 100);
    admitted = 0;
    for (int64_t t = 5001; t <= 7000; t++) { /* 2 s, a request every ms */
        admitted += segment_negcache_admit(&c, t);
    }
    CHECK(admitted >= 195 && admitted <= 205);
    CHECK(c.refused > 1000);
    segment_negcache_free(&c);
}

int main(void) {
    TEST(test_known_set);
    TEST(test_sync_known);
    TEST(test_negcache_ttl_and_cap);
    TEST(test_lookup_budget);
    return unit_done();
}
