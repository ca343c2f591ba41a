/*
 * Unit tests of src/daemon/daemon_table.c: the daemon builds its objects
 * forward and releases them backward, and a failure at step k unwinds exactly
 * the steps before it (docs/design.md, "The code: floors, rooms and names").
 * Fake rows record what ran in a journal.
 */
#include <stdio.h>
#include <string.h>

#include "daemon_table.h"
#include "unit.h"

#define NROWS 5

/* The test's own daemon: which row fails, and what ran, in order. */
struct daemon {
    int fail_create; /* the row whose create fails, or -1 */
    int fail_start;  /* the row whose start fails, or -1 */
    char journal[256];
};

static void note(struct daemon *d, char what, int row) {
    size_t n = strlen(d->journal);
    snprintf(d->journal + n, sizeof(d->journal) - n, "%c%d ", what, row);
}

#define FAKE_ROW(k)                                                                                \
    static leaf_status_t create##k(struct daemon *d) {                                             \
        note(d, 'c', k);                                                                           \
        return d->fail_create == (k) ? LEAF_ERR : LEAF_OK;                                         \
    }                                                                                              \
    static leaf_status_t start##k(struct daemon *d) {                                              \
        note(d, 's', k);                                                                           \
        return d->fail_start == (k) ? LEAF_EUNAVAIL : LEAF_OK;                                     \
    }                                                                                              \
    static void stop##k(struct daemon *d) {                                                        \
        note(d, 't', k);                                                                           \
    }                                                                                              \
    static void free##k(struct daemon *d) {                                                        \
        note(d, 'f', k);                                                                           \
    }
FAKE_ROW(0)
FAKE_ROW(1)
FAKE_ROW(2)
FAKE_ROW(3)
FAKE_ROW(4)

static const struct daemon_row rows[NROWS] = {
    {"zero", create0, start0, stop0, free0}, {"one", create1, start1, stop1, free1},
    {"two", create2, start2, stop2, free2},  {"three", create3, start3, stop3, free3},
    {"four", create4, start4, stop4, free4},
};

/* A row with nothing to do in some steps (NULL columns), between two others. */
static const struct daemon_row sparse[] = {
    {"zero", create0, NULL, NULL, free0},
    {"empty", NULL, NULL, NULL, NULL},
    {"two", create2, start2, stop2, NULL},
};

/* Called once, before the unwinding: the journal says where. */
static void failed(struct daemon *d) {
    note(d, 'x', 9);
}

static void fresh(struct daemon *d, int fail_create, int fail_start) {
    memset(d, 0, sizeof(*d));
    d->fail_create = fail_create;
    d->fail_start = fail_start;
}

static void test_create_all(void) {
    struct daemon d;
    fresh(&d, -1, -1);
    CHECK_EQ_INT(daemon_table_create(rows, NROWS, &d, NULL), LEAF_OK);
    CHECK(strcmp(d.journal, "c0 c1 c2 c3 c4 ") == 0);
    d.journal[0] = '\0';
    daemon_table_free(rows, NROWS, &d);
    CHECK(strcmp(d.journal, "f4 f3 f2 f1 f0 ") == 0);
}

/* A failure at step k frees exactly k-1..0, for every k. */
static void test_create_fails_at_each_step(void) {
    static const char *want[NROWS] = {
        "c0 x9 ",
        "c0 c1 x9 f0 ",
        "c0 c1 c2 x9 f1 f0 ",
        "c0 c1 c2 c3 x9 f2 f1 f0 ",
        "c0 c1 c2 c3 c4 x9 f3 f2 f1 f0 ",
    };
    for (int k = 0; k < NROWS; k++) {
        struct daemon d;
        fresh(&d, k, -1);
        CHECK_EQ_INT(daemon_table_create(rows, NROWS, &d, failed), LEAF_ERR);
        if (strcmp(d.journal, want[k]) != 0) {
            fprintf(stderr, "create fails at %d: got '%s', want '%s'\n", k, d.journal, want[k]);
            CHECK(0);
        }
    }
}

/* A failed start stops the steps before it and itself (it may have started part-way). */
static void test_start_fails_at_each_step(void) {
    static const char *want[NROWS] = {
        "s0 t0 ",
        "s0 s1 t1 t0 ",
        "s0 s1 s2 t2 t1 t0 ",
        "s0 s1 s2 s3 t3 t2 t1 t0 ",
        "s0 s1 s2 s3 s4 t4 t3 t2 t1 t0 ",
    };
    for (int k = 0; k < NROWS; k++) {
        struct daemon d;
        fresh(&d, -1, k);
        CHECK_EQ_INT(daemon_table_start(rows, NROWS, &d), LEAF_EUNAVAIL);
        if (strcmp(d.journal, want[k]) != 0) {
            fprintf(stderr, "start fails at %d: got '%s', want '%s'\n", k, d.journal, want[k]);
            CHECK(0);
        }
    }
}

static void test_start_stop_all(void) {
    struct daemon d;
    fresh(&d, -1, -1);
    CHECK_EQ_INT(daemon_table_start(rows, NROWS, &d), LEAF_OK);
    daemon_table_stop(rows, NROWS, &d);
    CHECK(strcmp(d.journal, "s0 s1 s2 s3 s4 t4 t3 t2 t1 t0 ") == 0);
}

static void test_null_columns(void) {
    struct daemon d;
    fresh(&d, 2, -1);
    CHECK_EQ_INT(daemon_table_create(sparse, 3, &d, NULL), LEAF_ERR);
    CHECK(strcmp(d.journal, "c0 c2 f0 ") == 0);
    fresh(&d, -1, -1);
    CHECK_EQ_INT(daemon_table_create(sparse, 3, &d, NULL), LEAF_OK);
    CHECK_EQ_INT(daemon_table_start(sparse, 3, &d), LEAF_OK);
    daemon_table_stop(sparse, 3, &d);
    daemon_table_free(sparse, 3, &d);
    CHECK(strcmp(d.journal, "c0 c2 s2 t2 f0 ") == 0);
}

int main(void) {
    TEST(test_create_all);
    TEST(test_create_fails_at_each_step);
    TEST(test_start_fails_at_each_step);
    TEST(test_start_stop_all);
    TEST(test_null_columns);
    return unit_done();
}
