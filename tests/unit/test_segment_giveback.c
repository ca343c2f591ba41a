/* Zero waste: the give-back statement built from a tag's double buffer. */
#include "segment_buffer.h"
#include "segment_giveback.h"
#include "unit.h"

#define TAG "orders.eu-1"

static void install(struct segment_buffer *b, int64_t new_max, int64_t size) {
    segment_buffer_begin_fetch(b, 0);
    CHECK_EQ_INT(segment_buffer_install(b, new_max, size, 0), LEAF_OK);
}

static void take(struct segment_buffer *b, int n) {
    int64_t ids[1000];
    CHECK_EQ_INT(segment_buffer_take(b, n, ids), LEAF_OK);
}

static void build_ok(const struct segment_buffer *b, int64_t new_max, int64_t expected) {
    struct segment_giveback g;
    CHECK_EQ_INT(segment_giveback_build(b, TAG, strlen(TAG), &g), LEAF_OK);
    CHECK_EQ_STR(g.sql, "UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ? AND max_id = ?");
    CHECK(strstr(g.sql, TAG) == NULL); /* the tag is a parameter, never in the text */
    CHECK_EQ_STR(g.biz_tag, TAG);
    CHECK_EQ_INT(g.new_max, new_max);
    CHECK_EQ_INT(g.expected_max, expected);
    CHECK_EQ_INT(g.ids, expected - new_max);
}

static void build_nothing(const struct segment_buffer *b) {
    struct segment_giveback g = {.new_max = -7};
    CHECK_EQ_INT(segment_giveback_build(b, TAG, strlen(TAG), &g), LEAF_ENOTFOUND);
    CHECK_EQ_INT(g.new_max, -7);
}

static void test_nothing_without_ranges(void) {
    struct segment_buffer b;
    segment_buffer_init(&b, 100);
    build_nothing(&b);
    /* a range used up to its end leaves nothing */
    install(&b, 101, 100); /* [1, 101) as a fresh tag with max_id 1, step 100 */
    take(&b, 100);
    build_nothing(&b);
    /* a cleared buffer (tag deleted, or already given back) gives nothing */
    install(&b, 201, 100);
    segment_buffer_clear(&b);
    build_nothing(&b);
}

static void test_rest_of_current_range(void) {
    struct segment_buffer b;
    segment_buffer_init(&b, 1000);
    install(&b, 1001, 1000);
    build_ok(&b, 1, 1001); /* nothing used: all of it */
    take(&b, 10);          /* 1..10 issued */
    build_ok(&b, 11, 1001);
}

static void test_current_and_next_range(void) {
    struct segment_buffer b;
    segment_buffer_init(&b, 1000);
    install(&b, 2001, 1000); /* [1001, 2001) */
    take(&b, 499);           /* next is 1500 */
    install(&b, 3001, 1000); /* [2001, 3001): no one reserved in between */
    build_ok(&b, 1500, 3001);
}

static void test_gap_gives_back_only_above_it(void) {
    struct segment_buffer b;
    segment_buffer_init(&b, 1000);
    install(&b, 2001, 1000); /* [1001, 2001) */
    take(&b, 499);
    install(&b, 6001, 1000); /* [5001, 6001): another node took [2001, 5001) */
    build_ok(&b, 5001, 6001);
    /* once the current range is used up, the next one is all unused */
    take(&b, 501);
    build_ok(&b, 5001, 6001);
    take(&b, 1);
    build_ok(&b, 5002, 6001);
}

static void test_clipped_range_is_contiguous(void) {
    struct segment_buffer b;
    segment_buffer_init(&b, 100);
    install(&b, 101, 100); /* [1, 101) */
    take(&b, 30);
    install(&b, 150, 100); /* max_id lowered by hand: [50, 150) clipped to [101, 150) */
    build_ok(&b, 31, 150);
}

static void test_fetch_in_flight_still_builds(void) {
    /* The condition on max_id decides: if the fetch's UPDATE ran, nothing matches. */
    struct segment_buffer b;
    segment_buffer_init(&b, 100);
    install(&b, 101, 100);
    take(&b, 20);
    segment_buffer_begin_fetch(&b, 0);
    build_ok(&b, 21, 101);
}

static void test_bad_tag(void) {
    struct segment_buffer b;
    struct segment_giveback g;
    segment_buffer_init(&b, 100);
    install(&b, 101, 100);
    CHECK_EQ_INT(segment_giveback_build(&b, "a'; DROP TABLE leaf_alloc; --", 29, &g), LEAF_EINVAL);
    CHECK_EQ_INT(segment_giveback_build(&b, "", 0, &g), LEAF_EINVAL);
    char longest[VALIDATE_TAG_MAX + 1];
    memset(longest, 'x', sizeof(longest));
    CHECK_EQ_INT(segment_giveback_build(&b, longest, VALIDATE_TAG_MAX + 1, &g), LEAF_EINVAL);
    CHECK_EQ_INT(segment_giveback_build(&b, longest, VALIDATE_TAG_MAX, &g), LEAF_OK);
    CHECK_EQ_INT(strlen(g.biz_tag), VALIDATE_TAG_MAX);
}

int main(void) {
    TEST(test_nothing_without_ranges);
    TEST(test_rest_of_current_range);
    TEST(test_current_and_next_range);
    TEST(test_gap_gives_back_only_above_it);
    TEST(test_clipped_range_is_contiguous);
    TEST(test_fetch_in_flight_still_builds);
    TEST(test_bad_tag);
    return unit_done();
}
