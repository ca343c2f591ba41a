/*
 * Segment IDs of a region (segment/segment_region.c, docs/regions.md): region r of R issues
 * value * R + r, so regions never share an ID, a node's IDs still ascend, and one region
 * changes nothing.
 */
#include "segment_buffer.h"
#include "segment_region.h"
#include "unit.h"

/* The IDs a fresh tag (max_id 1, step 100) hands out first, in region r of R. */
static void first_ids(int64_t r, int64_t count, int64_t *ids, int n) {
    struct segment_buffer b;
    struct segment_region g;
    segment_buffer_init(&b, 100);
    segment_region_init(&g, r, count);
    segment_buffer_begin_fetch(&b, 0);
    CHECK_EQ_INT(segment_buffer_install(&b, 101, 100, 0), LEAF_OK);
    CHECK_EQ_INT(segment_buffer_take(&b, n, ids), LEAF_OK);
    CHECK_EQ_INT(segment_region_apply(&g, ids, n), LEAF_OK);
}

static void test_one_region_is_the_table(void) {
    int64_t ids[100];
    first_ids(0, 1, ids, 100);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ_INT(ids[i], i + 1); /* 1, 2, ... 100: as without regions */
    }
}

static void test_regions_never_share_an_id(void) {
    enum { R = 3, N = 100 };
    int64_t ids[R][N];
    for (int r = 0; r < R; r++) {
        first_ids(r, R, ids[r], N);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(ids[r][i] % R, r);
            CHECK_EQ_INT(ids[r][i], (int64_t)(i + 1) * R + r);
            CHECK(i == 0 || ids[r][i] > ids[r][i - 1]); /* still ascending */
        }
    }
    /* residues differ, so no ID of one region is another's */
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            CHECK(ids[0][i] != ids[1][j] && ids[1][i] != ids[2][j] && ids[0][i] != ids[2][j]);
        }
    }
}

static void test_overflow_changes_nothing(void) {
    struct segment_region g;
    segment_region_init(&g, 1, 2);
    int64_t ids[2] = {INT64_MAX / 2, INT64_MAX / 2 + 1};
    CHECK_EQ_INT(segment_region_apply(&g, ids, 2), LEAF_ERANGE);
    CHECK_EQ_INT(ids[0], INT64_MAX / 2);
    int64_t last = INT64_MAX / 2; /* 2 * that + 1 = INT64_MAX: the last that fits */
    CHECK_EQ_INT(segment_region_apply(&g, &last, 1), LEAF_OK);
    CHECK_EQ_INT(last, INT64_MAX);
    /* an ID out of range is clamped to region 0 of 1, never an invalid residue */
    segment_region_init(&g, 5, 2);
    CHECK_EQ_INT(g.id, 0);
}

int main(void) {
    TEST(test_one_region_is_the_table);
    TEST(test_regions_never_share_an_id);
    TEST(test_overflow_changes_nothing);
    return unit_done();
}
