/*
 * Moving a sequence's home (docs/regions.md, "Moving a home"), the pure part:
 * the moved mark's format, and the old home's primary that stops issuing,
 * marks its record with a conditional write and never issues, writes or gives
 * back again; a newer primary that reads the mark never issues either.
 */
#include <stdint.h>
#include <string.h>

#include "sequence_record.h"
#include "sequence_state.h"
#include "unit.h"

#define T_SESSION 6000
#define T0 100000

/* The record in the region's ensemble, with its version and the mark. */
struct store {
    int64_t max;
    int32_t version;
    char moved[SEQUENCE_MOVED_MAX];
};

static struct store *g_store;

static void store_read(struct store *st, char *data, size_t cap, size_t *len) {
    *len = st->moved[0] != '\0' ? sequence_record_format_moved(data, cap, st->max, st->moved)
                                : sequence_record_format_max(data, cap, st->max);
}

/* Applies a write the way ZooKeeper does: only at the expected version. */
static enum sequence_result store_write(struct store *st, const struct sequence_action *a) {
    if (a->version != st->version) {
        return SEQUENCE_RESULT_BADVERSION;
    }
    int64_t max = -1;
    char moved[SEQUENCE_MOVED_MAX];
    CHECK_EQ_INT(sequence_record_parse_seq(a->data, a->len, &max, moved), LEAF_OK);
    CHECK(max >= st->max);
    CHECK(st->moved[0] == '\0'); /* nothing lands on a marked record */
    st->max = max;
    memcpy(st->moved, moved, sizeof(moved));
    st->version++;
    return SEQUENCE_RESULT_OK;
}

/* Performs the action the core asks for now, answering at once; 1 when there was one. */
static int step(struct sequence_state *s, struct sequence_lease *l, int64_t now) {
    struct sequence_action a;
    if (!sequence_state_action(s, l, now, &a)) {
        return 0;
    }
    char data[SEQUENCE_RECORD_MAX_LEN];
    size_t len = 0;
    enum sequence_result r = SEQUENCE_RESULT_OK;
    if (a.op == SEQUENCE_OP_READ) {
        store_read(g_store, data, sizeof(data), &len);
    } else {
        r = store_write(g_store, &a);
    }
    CHECK_EQ_INT(sequence_state_done(s, l, a.token, now, r, data, len, g_store->version), LEAF_OK);
    return 1;
}

static void win(struct sequence_state *s, struct sequence_lease *l, int64_t now) {
    sequence_lease_init(l, T_SESSION);
    sequence_state_init(s, 100);
    sequence_lease_connected(l, 1);
    sequence_lease_answer(l, now, now);
    sequence_lease_win(l);
    CHECK_EQ_INT(sequence_state_start(s, l, 0), LEAF_OK);
    while (s->phase != SEQUENCE_SERVING && step(s, l, now)) {
    }
}

static void test_record_moved(void) {
    char buf[SEQUENCE_RECORD_MAX_LEN], moved[SEQUENCE_MOVED_MAX];
    int64_t max = -1;
    size_t n = sequence_record_format_moved(buf, sizeof(buf), INT64_MAX, "eu-west.2_b");
    CHECK_EQ_STR(buf, "{\"max\":9223372036854775807,\"moved\":\"eu-west.2_b\"}");
    CHECK_EQ_INT(sequence_record_parse_seq(buf, n, &max, moved), LEAF_OK);
    CHECK_EQ_INT(max, INT64_MAX);
    CHECK_EQ_STR(moved, "eu-west.2_b");
    /* The plain parser (and so an older binary) refuses a marked record: it never issues. */
    CHECK_EQ_INT(sequence_record_parse_max(buf, n, &max), LEAF_EINVAL);
    const char *plain = " { \"max\" : 7 } ";
    CHECK_EQ_INT(sequence_record_parse_seq(plain, strlen(plain), &max, moved), LEAF_OK);
    CHECK_EQ_INT(max, 7);
    CHECK_EQ_STR(moved, "");
    const char *spaced = "{ \"max\" : 8 , \"moved\" : \"b\" }\n";
    CHECK_EQ_INT(sequence_record_parse_seq(spaced, strlen(spaced), &max, moved), LEAF_OK);
    CHECK_EQ_STR(moved, "b");
    char long_name[SEQUENCE_MOVED_MAX + 1];
    memset(long_name, 'a', SEQUENCE_MOVED_MAX);
    long_name[SEQUENCE_MOVED_MAX] = '\0';
    CHECK_EQ_INT(sequence_record_format_moved(buf, sizeof(buf), 1, long_name), 0);
    CHECK_EQ_INT(sequence_record_format_moved(buf, sizeof(buf), 1, "a b"), 0);
    CHECK_EQ_INT(sequence_record_format_moved(buf, sizeof(buf), 1, ""), 0);
    CHECK_EQ_INT(sequence_record_format_moved(buf, sizeof(buf), -1, "b"), 0);
    const char *bad[] = {
        "{\"max\":1,\"moved\":\"\"}",   "{\"max\":1,\"moved\":\"a b\"}",
        "{\"max\":1,\"moved\":1}",      "{\"moved\":\"b\",\"max\":1}",
        "{\"max\":1,\"moved\":\"b\",}", "{\"max\":1,\"other\":\"b\"}",
        "{\"max\":1,\"moved\":\"b\"}x", "{\"max\":01,\"moved\":\"b\"}",
        "{\"max\":1 \"moved\":\"b\"}",  "{\"max\":1,\"moved\":\"b\\\"\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        strcpy(moved, "untouched");
        CHECK_EQ_INT(sequence_record_parse_seq(bad[i], strlen(bad[i]), &max, moved), LEAF_EINVAL);
        CHECK_EQ_STR(moved, "untouched");
    }
    const char *big = "{\"max\":9223372036854775808,\"moved\":\"b\"}";
    CHECK_EQ_INT(sequence_record_parse_seq(big, strlen(big), &max, moved), LEAF_ERANGE);
}

/* The old home stops at once, marks the acknowledged max, and never issues or gives back. */
static void test_move_marks_and_stops(void) {
    struct store st = {.max = 41, .version = 3};
    struct sequence_state s;
    struct sequence_lease l;
    struct sequence_action a;
    int64_t id = 0, t = T0;
    g_store = &st;
    win(&s, &l, t);
    CHECK_EQ_INT(sequence_state_issue_from(&s, &l, t, 5, 0, &id), LEAF_OK);
    CHECK_EQ_INT(id, 42);
    int64_t acked = s.acked_max;
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVING);
    /* From the move on nothing is issued: requests park. */
    CHECK_EQ_INT(sequence_state_issue_from(&s, &l, t, 1, 0, &id), LEAF_EAGAIN);
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);     /* asked again: the same */
    CHECK_EQ_INT(sequence_state_move(&s, &l, "ap"), LEAF_EEXIST); /* elsewhere: refused */
    CHECK_EQ_INT(step(&s, &l, t + 1), 1);
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVED);
    CHECK_EQ_INT(s.moved_new, 1);
    CHECK_EQ_INT(s.move_failed, 0);
    /* The mark carries the acknowledged max as it was: every ID issued here is below it. */
    CHECK_EQ_INT(st.max, acked);
    CHECK_EQ_STR(st.moved, "eu");
    CHECK_EQ_INT(sequence_state_issue_from(&s, &l, t + 2, 1, 0, &id), LEAF_EUNAVAIL);
    CHECK_EQ_INT(step(&s, &l, t + 2), 0); /* no top-up, ever */
    sequence_lease_lose(&l);
    sequence_state_stop(&s);
    CHECK_EQ_INT(sequence_state_giveback(&s, &a), 0); /* a give-back would erase the mark */
    /* A newer primary of the old region reads the mark and never issues. */
    struct sequence_state s2;
    struct sequence_lease l2;
    win(&s2, &l2, t + 10000);
    CHECK_EQ_INT(s2.phase, SEQUENCE_MOVED);
    CHECK_EQ_STR(s2.moved_to, "eu");
    CHECK_EQ_INT(s2.floor, acked);
    CHECK_EQ_INT(sequence_state_issue_from(&s2, &l2, t + 10000, 1, 0, &id), LEAF_EUNAVAIL);
    CHECK_EQ_INT(sequence_state_move(&s2, &l2, "eu"), LEAF_OK);
    CHECK_EQ_INT(sequence_state_move(&s2, &l2, "ap"), LEAF_EEXIST);
    CHECK_EQ_INT(step(&s2, &l2, t + 10001), 0);
}

/* A top-up in flight at the move lands first; the mark carries its max. */
static void test_move_waits_for_top_up(void) {
    struct store st = {.max = 0, .version = 0};
    struct sequence_state s;
    struct sequence_lease l;
    struct sequence_action a;
    int64_t id = 0, t = T0;
    g_store = &st;
    win(&s, &l, t);
    CHECK_EQ_INT(sequence_state_issue_from(&s, &l, t, 80, 0, &id), LEAF_OK);
    CHECK_EQ_INT(sequence_state_action(&s, &l, t, &a), 1); /* the top-up, in flight */
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    enum sequence_result r = store_write(&st, &a);
    CHECK_EQ_INT(sequence_state_done(&s, &l, a.token, t + 1, r, NULL, 0, 0), LEAF_OK);
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVING);
    CHECK_EQ_INT(step(&s, &l, t + 2), 1);
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVED);
    CHECK_EQ_INT(st.max, a.max);
    CHECK(st.max >= s.last);
}

/* Refused (a newer primary wrote the record), failed, or in doubt. */
static void test_move_refused_failed_unknown(void) {
    struct store st = {.max = 10, .version = 1};
    struct sequence_state s;
    struct sequence_lease l;
    struct sequence_action a;
    int64_t id = 0, t = T0;
    g_store = &st;
    win(&s, &l, t);
    /* Refused: the move fails and the sequence reads again (never marks over another's write). */
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    st.version++; /* someone wrote it */
    CHECK_EQ_INT(step(&s, &l, t + 1), 1);
    CHECK_EQ_INT(s.move_failed, 1);
    CHECK_EQ_INT(s.phase, SEQUENCE_READING);
    CHECK(st.moved[0] == '\0');
    while (s.phase != SEQUENCE_SERVING && step(&s, &l, t + 2)) {
    }
    CHECK_EQ_INT(s.phase, SEQUENCE_SERVING);
    /* Failed for sure: serves again, the caller may ask again. */
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    CHECK_EQ_INT(s.move_failed, 0);
    CHECK_EQ_INT(sequence_state_action(&s, &l, t + 3, &a), 1);
    CHECK_EQ_INT(sequence_state_done(&s, &l, a.token, t + 3, SEQUENCE_RESULT_FAILED, NULL, 0, 0),
                 LEAF_OK);
    CHECK_EQ_INT(s.move_failed, 1);
    CHECK_EQ_INT(s.phase, SEQUENCE_SERVING);
    CHECK_EQ_INT(sequence_state_issue_from(&s, &l, t + 3, 1, 0, &id), LEAF_OK);
    /* In doubt and landed: the read-back proves it, MOVED. */
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    CHECK_EQ_INT(sequence_state_action(&s, &l, t + 4, &a), 1);
    CHECK_EQ_INT(store_write(&st, &a), SEQUENCE_RESULT_OK);
    CHECK_EQ_INT(sequence_state_done(&s, &l, a.token, t + 4, SEQUENCE_RESULT_UNKNOWN, NULL, 0, 0),
                 LEAF_OK);
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVING);
    CHECK_EQ_INT(sequence_state_issue_from(&s, &l, t + 4, 1, 0, &id), LEAF_EAGAIN);
    CHECK_EQ_INT(step(&s, &l, t + 5), 1); /* the read-back */
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVED);
    CHECK_EQ_INT(s.move_failed, 0);
    CHECK(st.max >= id);
}

/* In doubt and lost: the read-back finds the version unchanged and the mark is written again. */
static void test_move_unknown_lost(void) {
    struct store st = {.max = 10, .version = 1};
    struct sequence_state s;
    struct sequence_lease l;
    struct sequence_action a;
    g_store = &st;
    win(&s, &l, T0);
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    CHECK_EQ_INT(sequence_state_action(&s, &l, T0 + 1, &a), 1);
    CHECK_EQ_INT(sequence_state_done(&s, &l, a.token, T0 + 1, SEQUENCE_RESULT_UNKNOWN, NULL, 0, 0),
                 LEAF_OK);
    CHECK_EQ_INT(step(&s, &l, T0 + 2), 1); /* read-back: not landed */
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVING);
    CHECK_EQ_INT(step(&s, &l, T0 + 3), 1); /* the mark again */
    CHECK_EQ_INT(s.phase, SEQUENCE_MOVED);
    CHECK_EQ_STR(st.moved, "eu");
    /* A stop while moving abandons the move; nothing is given back. */
    struct store st2 = {.max = 10, .version = 1};
    g_store = &st2;
    win(&s, &l, T0);
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_OK);
    sequence_lease_lose(&l);
    sequence_state_stop(&s);
    CHECK_EQ_INT(s.move_failed, 1);
    CHECK_EQ_INT(sequence_state_giveback(&s, &a), 0);
}

/* Only a serving primary moves. */
static void test_move_refusals(void) {
    struct store st = {.max = 10, .version = 1};
    struct sequence_state s;
    struct sequence_lease l;
    g_store = &st;
    sequence_lease_init(&l, T_SESSION);
    sequence_state_init(&s, 100);
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_EUNAVAIL); /* not primary */
    sequence_lease_connected(&l, 1);
    sequence_lease_answer(&l, T0, T0);
    sequence_lease_win(&l);
    CHECK_EQ_INT(sequence_state_start(&s, &l, 0), LEAF_OK);
    CHECK_EQ_INT(sequence_state_move(&s, &l, "eu"), LEAF_EAGAIN); /* still reading */
    CHECK_EQ_INT(sequence_state_move(&s, &l, ""), LEAF_EINVAL);
}

int main(void) {
    TEST(test_record_moved);
    TEST(test_move_marks_and_stops);
    TEST(test_move_waits_for_top_up);
    TEST(test_move_refused_failed_unknown);
    TEST(test_move_unknown_lost);
    TEST(test_move_refusals);
    return unit_done();
}
