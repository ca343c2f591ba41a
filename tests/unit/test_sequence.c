/*
 * The sequence core under an injected clock and a fake ZooKeeper store:
 * batches and top-up, headroom, rate-driven batches, fencing, the 2/3
 * liveness rule, new primaries, two primaries across a partition, the
 * election decision and the znode payloads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sequence_elect.h"
#include "sequence_floor.h"
#include "sequence_numbering.h"
#include "sequence_record.h"
#include "sequence_state.h"
#include "unit.h"
#include "validate.h"

/* ---- fake ZooKeeper node and a simulated primary -------------------------------------------- */

struct store {
    int exists;
    int64_t max;
    int32_t version;
    int writes; /* writes applied */
};

/* What the fake does with the next request of a node. */
enum fault { FAULT_NONE = 0, FAULT_FAIL, FAULT_UNKNOWN_LANDED, FAULT_UNKNOWN_LOST, FAULT_HOLD };

struct sim {
    struct sequence_lease l;
    struct sequence_state s;
    struct store *st;
    int64_t latency_ms;
    enum fault fault; /* applied to the next request, then cleared (HOLD stays) */
    int partitioned;  /* requests neither reach the store nor return */
    int busy;         /* a request is travelling */
    uint64_t token;
    int64_t due_ms;
    enum sequence_result r;
    char data[SEQUENCE_RECORD_MAX_LEN];
    size_t len;
    int32_t version;
    int writes_sent;
};

static void store_apply(struct store *st, const struct sequence_action *a, struct sim *m) {
    m->len = 0;
    if (a->op == SEQUENCE_OP_READ) {
        m->r = st->exists ? SEQUENCE_RESULT_OK : SEQUENCE_RESULT_NONODE;
        if (st->exists) {
            m->len = sequence_record_format_max(m->data, sizeof(m->data), st->max);
            m->version = st->version;
        }
    } else if (a->op == SEQUENCE_OP_CREATE) {
        m->r = st->exists ? SEQUENCE_RESULT_EXISTS : SEQUENCE_RESULT_OK;
        if (!st->exists) {
            CHECK_EQ_INT(sequence_record_parse_max(a->data, a->len, &st->max), LEAF_OK);
            st->exists = 1;
            st->version = 0;
        }
    } else {
        m->r = !st->exists                 ? SEQUENCE_RESULT_NONODE
               : st->version != a->version ? SEQUENCE_RESULT_BADVERSION
                                           : SEQUENCE_RESULT_OK;
        if (m->r == SEQUENCE_RESULT_OK) {
            int64_t max = -1;
            CHECK_EQ_INT(sequence_record_parse_max(a->data, a->len, &max), LEAF_OK);
            CHECK(max >= st->max); /* the persisted max never goes down */
            st->max = max;
            st->version++;
            st->writes++;
        }
    }
}

static void sim_init(struct sim *m, struct store *st, int64_t batch, int64_t timeout_ms) {
    *m = (struct sim){.st = st, .latency_ms = 1};
    sequence_lease_init(&m->l, timeout_ms);
    sequence_state_init(&m->s, batch);
}

/* Elected at now: the create of its election node was answered. */
static void sim_win(struct sim *m, int64_t now, int64_t create_start) {
    sequence_lease_connected(&m->l, 1);
    sequence_lease_answer(&m->l, now, now);
    sequence_lease_win(&m->l);
    CHECK_EQ_INT(sequence_state_start(&m->s, &m->l, create_start), LEAF_OK);
}

/* Sends the request the core asks for, if any. */
static void sim_send(struct sim *m, int64_t now) {
    struct sequence_action a;
    if (m->busy || !sequence_state_action(&m->s, &m->l, now, &a)) {
        return;
    }
    CHECK(a.op != SEQUENCE_OP_WRITE || a.version != -1);
    m->writes_sent += a.op == SEQUENCE_OP_WRITE;
    m->busy = 1;
    m->token = a.token;
    m->due_ms = now + m->latency_ms;
    if (m->partitioned) {
        m->due_ms = INT64_MAX;
        return;
    }
    enum fault f = m->fault;
    if (f != FAULT_HOLD) {
        m->fault = FAULT_NONE;
    }
    if (f == FAULT_HOLD) {
        store_apply(m->st, &a, m); /* lands, but the answer is held back */
        m->due_ms = INT64_MAX;
    } else if (f == FAULT_FAIL) {
        m->r = SEQUENCE_RESULT_FAILED;
    } else if (f == FAULT_UNKNOWN_LOST) {
        m->r = SEQUENCE_RESULT_UNKNOWN;
    } else {
        store_apply(m->st, &a, m);
        if (f == FAULT_UNKNOWN_LANDED) {
            m->r = SEQUENCE_RESULT_UNKNOWN;
        }
    }
}

/* Delivers a due answer, then sends whatever is next. */
static void sim_step(struct sim *m, int64_t now) {
    if (m->busy && now >= m->due_ms) {
        m->busy = 0;
        CHECK_EQ_INT(
            sequence_state_done(&m->s, &m->l, m->token, now, m->r, m->data, m->len, m->version),
            LEAF_OK);
    }
    sim_send(m, now);
}

/* Delivers a held answer now. */
static void sim_release(struct sim *m, int64_t now) {
    m->fault = FAULT_NONE;
    m->due_ms = now;
    sim_step(m, now);
}

/* Runs until serving (or ms run out); returns the time. */
static int64_t sim_settle(struct sim *m, int64_t now, int64_t ms) {
    for (int64_t end = now + ms; now < end && m->s.phase != SEQUENCE_SERVING; now++) {
        sim_step(m, now);
    }
    sim_step(m, now);
    return now;
}

static leaf_status_t sim_issue(struct sim *m, int64_t now, int64_t n, int64_t *first) {
    leaf_status_t rc = sequence_state_issue_from(&m->s, &m->l, now, n, 0, first);
    if (rc == LEAF_OK) {
        /* Never above what ZooKeeper acknowledged, nor above what it holds. */
        CHECK(*first - 1 + n <= m->s.acked_max);
        CHECK(*first - 1 + n <= m->st->max);
    }
    sim_send(m, now);
    return rc;
}

#define T_SESSION 6000
#define T0 100000

/* ---- new primary, batches and top-up --------------------------------------------------------- */

static void test_new_primary_starts_above_max(void) {
    struct store st = {.exists = 1, .max = 41, .version = 3};
    struct sim m;
    int64_t id = 0;
    sim_init(&m, &st, 100, T_SESSION);
    CHECK_EQ_INT(sim_issue(&m, T0, 1, &id), LEAF_EUNAVAIL); /* not primary */
    sim_win(&m, T0, 0);
    m.latency_ms = 50;
    CHECK_EQ_INT(sim_issue(&m, T0, 1, &id), LEAF_EAGAIN); /* reading */
    CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
    sim_step(&m, T0 + 50); /* read answered; fencing write sent */
    CHECK_EQ_INT(m.s.phase, SEQUENCE_FENCING);
    CHECK_EQ_INT(st.max, 142); /* 41 + the parked request + a batch; landed in the fake... */
    CHECK_EQ_INT(st.version, 4);
    for (int64_t t = T0 + 51; t < T0 + 100; t++) {
        CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN); /* ...but not acknowledged */
    }
    sim_step(&m, T0 + 100);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
    CHECK_EQ_INT(sim_issue(&m, T0 + 100, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 42);
    CHECK_EQ_INT(sim_issue(&m, T0 + 100, 3, &id), LEAF_OK);
    CHECK_EQ_INT(id, 43);
    CHECK_EQ_INT(sequence_state_headroom(&m.s), 142 - 45);
}

static void test_autocreate_and_missing(void) {
    struct store st = {0};
    struct sim m;
    int64_t id = 0, t;
    sim_init(&m, &st, 10, T_SESSION);
    sim_win(&m, T0, 0);
    t = sim_settle(&m, T0, 20);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_MISSING);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_ENOTFOUND);
    CHECK_EQ_INT(st.exists, 0);

    CHECK_EQ_INT(sequence_state_start(&m.s, &m.l, 1), LEAF_OK); /* autocreate at 1 */
    t = sim_settle(&m, t, 20);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
    CHECK_EQ_INT(st.max, 10); /* created at 0, fenced to 0 + 10 */
    CHECK_EQ_INT(st.version, 1);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 1);

    /* Created by someone else between our read and our create: read it. */
    struct store st2 = {0};
    struct sim m2;
    sim_init(&m2, &st2, 10, T_SESSION);
    sim_win(&m2, T0, 1000);
    sim_step(&m2, T0); /* read sent: no node */
    st2 = (struct store){.exists = 1, .max = 500, .version = 7};
    sim_step(&m2, T0 + 1); /* NONODE answered: create sent, EXISTS */
    t = sim_settle(&m2, T0 + 2, 20);
    CHECK_EQ_INT(m2.s.phase, SEQUENCE_SERVING);
    CHECK_EQ_INT(sim_issue(&m2, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 501);
}

static void test_top_up_at_half(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0, expect = 1;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(st.max, 100);
    int sent_before = m.writes_sent;
    /* 51 left: no write; 49 left: a write. (The rate stays low: one ID per 10 ms.) */
    for (; expect <= 49; expect++, t += 10) {
        CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
        CHECK_EQ_INT(id, expect);
    }
    CHECK_EQ_INT(m.writes_sent, sent_before);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK); /* 50 left: not less than half */
    CHECK_EQ_INT(m.writes_sent, sent_before);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK); /* 49 left */
    CHECK_EQ_INT(m.writes_sent, sent_before + 1);
    CHECK_EQ_INT(st.max, 151); /* one batch above the last issued (51): a crash loses <= a batch */
    /* At most one write in flight, whatever the demand. */
    for (int i = 0; i < 20; i++) {
        CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    }
    CHECK_EQ_INT(m.writes_sent, sent_before + 1);
    CHECK_EQ_INT(m.s.acked_max, 100); /* landed in the fake, not yet acknowledged */
    sim_step(&m, t + 1);
    CHECK_EQ_INT(m.s.acked_max, 151);
}

static void test_eagain_until_ack(void) {
    struct store st = {.exists = 1, .max = 1000, .version = 5};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    m.fault = FAULT_HOLD; /* the top-up lands but its answer is slow */
    int64_t last = 1000;
    for (int i = 0; i < 100; i++) {
        CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
        CHECK_EQ_INT(id, ++last);
    }
    CHECK_EQ_INT(last, 1100);
    CHECK(st.max > 1100);                                /* ZooKeeper holds more... */
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN); /* ...but it is not acknowledged */
    CHECK_EQ_INT(sim_issue(&m, t + 1, 5, &id), LEAF_EAGAIN);
    CHECK_EQ_INT(m.s.short_waits, 2);
    sim_release(&m, t + 2);
    CHECK_EQ_INT(sim_issue(&m, t + 2, 5, &id), LEAF_OK);
    CHECK_EQ_INT(id, 1101);

    /* A request larger than a batch: the next write covers it. */
    int64_t left = sequence_state_headroom(&m.s);
    CHECK_EQ_INT(sim_issue(&m, t + 3, left + 1000, &id), LEAF_EAGAIN);
    t = t + 3;
    for (int i = 0; i < 5; i++) {
        sim_step(&m, ++t);
    }
    CHECK_EQ_INT(sim_issue(&m, t, left + 1000, &id), LEAF_OK);
    CHECK_EQ_INT(id, 1106);
    CHECK_EQ_INT(sim_issue(&m, t, 0, &id), LEAF_EINVAL);
}

/* 1M IDs/s in requests of 100, write latency 3 ms: about 5 and never more than 10 writes/s. */
static void test_rate_growth(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0, expect = 1;
    sim_init(&m, &st, 10000, T_SESSION);
    m.latency_ms = 3;
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    int per_second[6] = {0};
    int eagain_late = 0;
    for (int sec = 0; sec < 6; sec++) {
        int before = m.writes_sent;
        for (int ms = 0; ms < 1000; ms++, t++) {
            sim_step(&m, t);
            sequence_lease_answer(&m.l, t, t); /* a heartbeat keeps the lease */
            for (int k = 0; k < 10; k++) {
                leaf_status_t rc = sim_issue(&m, t, 100, &id);
                if (rc == LEAF_OK) {
                    CHECK_EQ_INT(id, expect);
                    expect += 100;
                } else {
                    CHECK_EQ_INT(rc, LEAF_EAGAIN);
                    eagain_late += sec > 0;
                }
            }
        }
        per_second[sec] = m.writes_sent - before;
    }
    for (int sec = 1; sec < 6; sec++) {
        CHECK(per_second[sec] <= 10);
        CHECK(per_second[sec] >= 3);
    }
    CHECK_EQ_INT(eagain_late, 0);
    CHECK(m.s.batch >= 190000); /* about 200 ms of IDs */
    CHECK(m.s.batch <= SEQUENCE_MAX_BATCH);
    /* Idle again: the batch halves per write back to the base. */
    for (int i = 0; i < 200; i++) {
        t += 1000;
        sequence_lease_answer(&m.l, t, t);
        int64_t left = sequence_state_headroom(&m.s);
        CHECK_EQ_INT(sim_issue(&m, t, left > 1 ? left - 1 : 1, &id), LEAF_OK);
        sim_step(&m, t + 5);
    }
    CHECK_EQ_INT(m.s.batch, 10000);
}

/* ---- failures ------------------------------------------------------------------------------- */

static void test_fenced_by_another_primary(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    for (int i = 0; i < 40; i++) {
        CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    }
    st.max += 100; /* another primary's fencing write */
    st.version++;
    CHECK_EQ_INT(sim_issue(&m, t, 11, &id), LEAF_OK); /* 49 left: top-up sent */
    sim_step(&m, t + 1);                              /* bad version */
    CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);        /* reads the record again at once */
    CHECK_EQ_INT(m.s.fence, SEQUENCE_FENCE_CHANGED);
    CHECK_EQ_INT(m.s.fence_failures, 1);
    CHECK_EQ_INT(sim_issue(&m, t + 1, 1, &id), LEAF_EAGAIN); /* headroom left, but not used */

    /* ... and serves again strictly above what is stored, without a new term. */
    t = sim_settle(&m, t + 1, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 201);

    /* A new term re-reads and starts above what the other one persisted. */
    st.max += 1000;
    st.version++;
    int64_t stored = st.max;
    sim_win(&m, t + 600, 0);
    t = sim_settle(&m, t + 600, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, stored + 1);
}

static void test_write_errors(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);

    /* A failed write is retried after SEQUENCE_RETRY_MS; issuing goes on below the max. */
    m.fault = FAULT_FAIL;
    CHECK_EQ_INT(sim_issue(&m, t, 60, &id), LEAF_OK);
    sim_step(&m, t + 1);
    CHECK_EQ_INT(m.s.write_failures, 1);
    int sent = m.writes_sent;
    for (int64_t u = t + 1; u < t + 1 + SEQUENCE_RETRY_MS; u++) {
        sim_step(&m, u);
    }
    CHECK_EQ_INT(m.writes_sent, sent);
    CHECK_EQ_INT(sim_issue(&m, t + 50, 40, &id), LEAF_OK);
    CHECK_EQ_INT(id, 61);
    CHECK_EQ_INT(sim_issue(&m, t + 50, 1, &id), LEAF_EAGAIN);
    t = t + 1 + SEQUENCE_RETRY_MS;
    sim_step(&m, t);
    CHECK_EQ_INT(m.writes_sent, sent + 1);
    sim_step(&m, t + 1);
    CHECK_EQ_INT(sim_issue(&m, t + 1, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 101);
    t += 1;

    /* Outcome unknown, and it landed: read back, counted as ours. */
    m.fault = FAULT_UNKNOWN_LANDED;
    CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
    int64_t persisted = st.max;
    sim_step(&m, t + 1); /* unknown: read back */
    CHECK_EQ_INT(m.s.verify, 1);
    sim_step(&m, t + 2);
    CHECK_EQ_INT(m.s.acked_max, persisted);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
    CHECK_EQ_INT(m.s.version, st.version);
    t += 3;

    /* Outcome unknown, and it did not land: written again. */
    m.fault = FAULT_UNKNOWN_LOST;
    CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
    persisted = st.max;
    sim_step(&m, t + 1);
    sim_step(&m, t + 2); /* read back: version unchanged; the write goes again */
    sim_step(&m, t + 3);
    CHECK(st.max > persisted);
    CHECK_EQ_INT(m.s.acked_max, st.max);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
    t += 4;

    /* Outcome unknown, and someone else wrote: fenced. */
    m.fault = FAULT_UNKNOWN_LOST;
    CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
    sim_step(&m, t + 1);
    st.max += 1000;
    st.version++;
    int64_t other = st.max;
    sim_step(&m, t + 2);
    sim_step(&m, t + 3);
    CHECK_EQ_INT(m.s.fence, SEQUENCE_FENCE_CHANGED);
    CHECK_EQ_INT(sim_issue(&m, t + 3, 1, &id), LEAF_EAGAIN); /* reading it again */
    t = sim_settle(&m, t + 3, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, other + 1); /* right above the max the other writer stored */

    /* A node that does not hold {"max":n} is not guessed at. */
    struct sequence_state s;
    struct sequence_lease l;
    struct sequence_action a;
    sequence_lease_init(&l, T_SESSION);
    sequence_lease_connected(&l, 1);
    sequence_lease_answer(&l, T0, T0);
    sequence_lease_win(&l);
    sequence_state_init(&s, 100);
    sequence_state_start(&s, &l, 0);
    CHECK_EQ_INT(sequence_state_action(&s, &l, T0, &a), 1);
    CHECK_EQ_INT(sequence_state_done(&s, &l, a.token + 1, T0, SEQUENCE_RESULT_OK, "{}", 2, 0),
                 LEAF_EINVAL); /* not the request in flight */
    CHECK_EQ_INT(
        sequence_state_done(&s, &l, a.token, T0, SEQUENCE_RESULT_OK, "{\"max\":1.5}", 11, 0),
        LEAF_OK);
    CHECK_EQ_INT(s.phase, SEQUENCE_CORRUPT);
    CHECK_EQ_INT(sequence_state_done(&s, &l, a.token, T0, SEQUENCE_RESULT_OK, "{}", 2, 0),
                 LEAF_EINVAL); /* repeated */
}

static void test_restart_drops_old_results(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    m.fault = FAULT_HOLD;
    CHECK_EQ_INT(sim_issue(&m, t, 60, &id), LEAF_OK); /* top-up lands, answer held */
    /* Re-elected in the same session: the read waits for the write in flight. */
    sim_win(&m, t + 1, 0);
    struct sequence_action a;
    CHECK_EQ_INT(sequence_state_action(&m.s, &m.l, t + 1, &a), 0);
    sim_release(&m, t + 2); /* dropped, then the read goes out */
    CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
    t = sim_settle(&m, t + 3, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 161); /* above the max the held write had persisted (60 + 100) */

    /* After stop (session gone) a late answer changes nothing. */
    m.fault = FAULT_HOLD;
    CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
    uint64_t token = m.token;
    sequence_lease_lose(&m.l);
    sequence_state_stop(&m.s);
    CHECK_EQ_INT(sequence_state_done(&m.s, &m.l, token, t + 1, SEQUENCE_RESULT_OK, NULL, 0, 0),
                 LEAF_EINVAL);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_IDLE);
    CHECK_EQ_INT(sim_issue(&m, t + 1, 1, &id), LEAF_EUNAVAIL);
}

static void test_range_end(void) {
    struct store st = {.exists = 1, .max = INT64_MAX - 5, .version = 9};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(st.max, INT64_MAX);
    CHECK_EQ_INT(sim_issue(&m, t, 6, &id), LEAF_ERANGE);
    CHECK_EQ_INT(sim_issue(&m, t, 5, &id), LEAF_OK);
    CHECK_EQ_INT(id, INT64_MAX - 4);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_ERANGE);
    struct sequence_action a;
    CHECK_EQ_INT(sequence_state_action(&m.s, &m.l, t + 1000, &a), 0); /* nothing to persist */
}

/* A skip (a business numbering's new period): the max records it before a value above is
 * issued, a stale start is refused, and the sequence never goes back below it. */
static void test_issue_from_skips(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 3, &id), LEAF_OK);
    CHECK_EQ_INT(id, 1);
    /* skip to 1,000,001: more than the headroom, so it waits for the write */
    CHECK_EQ_INT(sequence_state_issue_from(&m.s, &m.l, t, 2, 1000001, &id), LEAF_EAGAIN);
    sim_send(&m, t);
    leaf_status_t rc = LEAF_EAGAIN;
    for (int i = 0; i < 20 && rc == LEAF_EAGAIN; i++) {
        sim_step(&m, ++t);
        rc = sequence_state_issue_from(&m.s, &m.l, t, 2, 1000001, &id);
    }
    CHECK(st.max >= 1000002 && m.s.acked_max >= 1000002);
    CHECK_EQ_INT(rc, LEAF_OK);
    CHECK_EQ_INT(id, 1000001);
    CHECK_EQ_INT(m.s.last, 1000002);
    /* a start at or below the last ID is refused; 0 goes on after it */
    CHECK_EQ_INT(sequence_state_issue_from(&m.s, &m.l, t, 1, 1000002, &id), LEAF_EINVAL);
    CHECK_EQ_INT(sequence_state_issue_from(&m.s, &m.l, t, 1, 0, &id), LEAF_OK);
    CHECK_EQ_INT(id, 1000003);
}

/* ---- liveness ------------------------------------------------------------------------------- */

static void test_liveness_boundaries(void) {
    struct sequence_lease l;
    int64_t timeouts[] = {3000, 3001, 3002, 10000};
    int64_t last_live[] = {1999, 2000, 2001, 6666}; /* largest elapsed with 3e < 2T */
    for (int i = 0; i < 4; i++) {
        sequence_lease_init(&l, timeouts[i]);
        sequence_lease_answer(&l, T0, T0);
        CHECK_EQ_INT(sequence_lease_live(&l, T0), 0); /* not primary */
        sequence_lease_win(&l);
        CHECK_EQ_INT(sequence_lease_live(&l, T0), 1);
        CHECK_EQ_INT(sequence_lease_live(&l, T0 + last_live[i]), 1);
        CHECK_EQ_INT(sequence_lease_left_ms(&l, T0 + last_live[i]), 1);
        CHECK_EQ_INT(sequence_lease_live(&l, T0 + last_live[i] + 1), 0);
        CHECK_EQ_INT(sequence_lease_left_ms(&l, T0 + last_live[i] + 1), 0);
        CHECK_EQ_INT(sequence_lease_left_ms(&l, T0), last_live[i] + 1);
        sequence_lease_lose(&l);
        CHECK_EQ_INT(sequence_lease_live(&l, T0), 0);
    }
    sequence_lease_init(&l, 6000);
    sequence_lease_win(&l);
    CHECK_EQ_INT(sequence_lease_live(&l, T0), 0); /* no answer yet */
    sequence_lease_answer(&l, T0, T0 + 10);
    sequence_lease_answer(&l, T0 - 500, T0 + 20); /* an older request answered late */
    CHECK_EQ_INT(l.answer_ms, T0);
}

/* The stop rule on issue, connected or not, and resuming in the same session. */
static void test_stop_and_resume(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 1000, 3000);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    int64_t answer = m.l.answer_ms;
    CHECK_EQ_INT(answer, T0 + 1);      /* the fencing write's send time */
    sequence_lease_connected(&m.l, 0); /* cut off: no writes, but issuing goes on */
    CHECK_EQ_INT(sim_issue(&m, answer + 1999, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(sim_issue(&m, answer + 2000, 1, &id), LEAF_EUNAVAIL);
    CHECK_EQ_INT(sim_issue(&m, answer + 2500, 1, &id), LEAF_EUNAVAIL);

    /* Reconnected in the same session: the heartbeat write is answered late (a lapse). */
    t = answer + 2600;
    sequence_lease_connected(&m.l, 1);
    sequence_lease_answer(&m.l, t - 5, t);
    CHECK_EQ_INT(m.l.lapses, 1);
    int v = st.version;
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN); /* revalidating */
    CHECK_EQ_INT(m.s.phase, SEQUENCE_FENCING);
    sim_step(&m, t + 1);
    CHECK_EQ_INT(st.version, v + 1); /* the held version was current: nobody wrote since */
    CHECK_EQ_INT(m.s.version, v + 1);
    CHECK_EQ_INT(sim_issue(&m, t + 1, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 2); /* no gap */

    /* Lapse again, and meanwhile someone else wrote: fenced. */
    t = m.l.answer_ms + 2000;
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EUNAVAIL);
    st.version++;
    sequence_lease_answer(&m.l, t + 10, t + 20);
    CHECK_EQ_INT(sim_issue(&m, t + 20, 1, &id), LEAF_EAGAIN);
    int64_t stored = st.max;
    sim_step(&m, t + 21);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
    CHECK_EQ_INT(sim_issue(&m, t + 21, 1, &id), LEAF_EAGAIN);
    t = sim_settle(&m, t + 21, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, stored + 1);
}

/* ---- healing (docs/IDENTITY.md)
 * ------------------------------------------------------------------- */

/* Fenced again and again within the window: gives up (the glue steps down); later it counts anew.
 */
static void test_fence_limit(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    for (int i = 1; i <= SEQUENCE_FENCE_LIMIT; i++) {
        st.version++; /* someone writes under it */
        CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
        sim_step(&m, t + 1);
        if (i < SEQUENCE_FENCE_LIMIT) {
            CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
            t = sim_settle(&m, t + 1, 10);
            CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
        }
    }
    CHECK_EQ_INT(m.s.phase, SEQUENCE_FENCED);
    CHECK_EQ_INT(sim_issue(&m, t + 2, 1, &id), LEAF_EUNAVAIL);
    /* A new term starts it again, and the count starts over. */
    sim_win(&m, t + 100, 0);
    t = sim_settle(&m, t + 100, 10);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
    st.version++;
    CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
    sim_step(&m, t + 1);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
    /* Refusals further apart than the window never add up. */
    for (int i = 0; i < 5; i++) {
        t = sim_settle(&m, t + SEQUENCE_FENCE_WINDOW_MS, 10);
        st.version++;
        CHECK_EQ_INT(sim_issue(&m, t, sequence_state_headroom(&m.s) - 10, &id), LEAF_OK);
        sim_step(&m, t + 1);
        CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
    }
}

/* The record deleted under a serving primary: read again, then created or missing. */
static void test_record_deleted(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 1); /* autocreate */
    t = sim_settle(&m, t, 10);
    st.exists = 0; /* deleteall, just before the top-up */
    st.max = 0;
    CHECK_EQ_INT(sequence_state_issue_from(&m.s, &m.l, t, 60, 0, &id), LEAF_OK); /* 1..60 */
    sim_send(&m, t); /* the top-up: no node */
    sim_step(&m, t + 1);
    CHECK_EQ_INT(m.s.fence, SEQUENCE_FENCE_DELETED);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_READING);
    t = sim_settle(&m, t + 1, 10);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_SERVING);
    CHECK(st.exists);
    CHECK(st.max >= 100); /* created at the floor (100), not at start - 1 */
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 101);

    /* Without autocreate: missing until someone creates it. */
    sim_win(&m, t + 10, 0);
    t = sim_settle(&m, t + 10, 10);
    st.exists = 0;
    CHECK_EQ_INT(
        sequence_state_issue_from(&m.s, &m.l, t, sequence_state_headroom(&m.s) - 10, 0, &id),
        LEAF_OK);
    sim_send(&m, t);
    t = sim_settle(&m, t + 1, 10);
    sim_step(&m, ++t); /* the read's answer */
    CHECK_EQ_INT(m.s.phase, SEQUENCE_MISSING);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_ENOTFOUND);
}

/* A cached "missing" is read again after SEQUENCE_RECHECK_MS, or at once when created here. */
static void test_missing_recheck(void) {
    struct store st = {.exists = 0};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_MISSING);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_ENOTFOUND);
    /* POST on another node creates it at start 100. */
    st.exists = 1;
    st.max = 99;
    t = m.s.phase_since_ms;
    CHECK_EQ_INT(sim_issue(&m, t + SEQUENCE_RECHECK_MS - 1, 1, &id), LEAF_ENOTFOUND);
    t += SEQUENCE_RECHECK_MS;
    sequence_lease_answer(&m.l, t, t);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN); /* reading again */
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 100);

    /* Created on this node: at once. */
    struct store st2 = {.exists = 0};
    sim_init(&m, &st2, 100, T_SESSION);
    t = T0;
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_ENOTFOUND);
    st2.exists = 1;
    st2.max = 99;
    sequence_state_created(&m.s);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 100);

    /* Not primary: never re-read (a standby redirects instead). */
    sim_init(&m, &st2, 100, T_SESSION);
    m.s.phase = SEQUENCE_MISSING;
    CHECK_EQ_INT(sequence_state_recheck(&m.s, &m.l, T0 + 10 * SEQUENCE_RECHECK_MS), 0);

    /* A corrupt record is read again too, once fixed. */
    struct store st3 = {.exists = 1, .max = 7, .version = 2};
    sim_init(&m, &st3, 100, T_SESSION);
    t = T0;
    sim_win(&m, t, 0);
    struct sequence_action a;
    CHECK_EQ_INT(sequence_state_action(&m.s, &m.l, t, &a), 1);
    CHECK_EQ_INT(sequence_state_done(&m.s, &m.l, a.token, t, SEQUENCE_RESULT_OK, "{}", 2, 2),
                 LEAF_OK);
    CHECK_EQ_INT(m.s.phase, SEQUENCE_CORRUPT);
    CHECK_EQ_INT(sim_issue(&m, t + 1, 1, &id), LEAF_EUNAVAIL);
    t += SEQUENCE_RECHECK_MS;
    sequence_lease_answer(&m.l, t, t);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_EAGAIN);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 8);
}

/* The local floor: a read below it starts above it, and says so; writes raise it. */
static void test_floor(void) {
    struct store st = {.exists = 1, .max = 99, .version = 4};
    struct sim m;
    int64_t id = 0, t = T0;
    sim_init(&m, &st, 100, T_SESSION);
    sequence_state_set_floor(&m.s, 5000);
    CHECK_EQ_INT(m.s.floor_dirty, 0);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(m.s.floor_over, 5000);
    CHECK_EQ_INT(m.s.zk_below, 99);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 5001);
    CHECK_EQ_INT(m.s.floor, st.max); /* raised with the fencing write */
    CHECK_EQ_INT(m.s.floor_dirty, 1);
    /* ZooKeeper above the floor: no warning, starts above ZooKeeper's. */
    struct store st2 = {.exists = 1, .max = 9000, .version = 1};
    sim_init(&m, &st2, 100, T_SESSION);
    sequence_state_set_floor(&m.s, 5000);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(m.s.floor_over, 0);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 9001);
    /* An autocreate never creates below the floor. */
    struct store st3 = {.exists = 0};
    sim_init(&m, &st3, 100, T_SESSION);
    sequence_state_set_floor(&m.s, 777);
    sim_win(&m, t, 1);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 778);
}

/* Applies a giveback write to the store (it may lower the max: that is its point). */
static enum sequence_result store_giveback(struct store *st, const struct sequence_action *a) {
    if (!st->exists) {
        return SEQUENCE_RESULT_NONODE;
    }
    if (st->version != a->version) {
        return SEQUENCE_RESULT_BADVERSION;
    }
    CHECK_EQ_INT(sequence_record_parse_max(a->data, a->len, &st->max), LEAF_OK);
    st->version++;
    return SEQUENCE_RESULT_OK;
}

/* A graceful stop writes the record down to the last ID issued; the next primary skips none. */
static void test_giveback(void) {
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m, b;
    int64_t id = 0, t = T0;
    struct sequence_action a;
    sim_init(&m, &st, 100, T_SESSION);
    sim_win(&m, t, 0);
    t = sim_settle(&m, t, 10);
    CHECK_EQ_INT(sim_issue(&m, t, 30, &id), LEAF_OK);   /* 1..30 of 100 */
    CHECK_EQ_INT(sequence_state_giveback(&m.s, &a), 0); /* not stopped: nothing */
    sequence_lease_lose(&m.l);
    sequence_state_stop(&m.s);
    CHECK_EQ_INT(sequence_state_giveback(&m.s, &a), 1);
    CHECK_EQ_INT(a.op, SEQUENCE_OP_WRITE);
    CHECK_EQ_INT(a.max, 30);
    CHECK_EQ_INT(a.version, st.version);
    CHECK_EQ_INT(sequence_state_giveback(&m.s, &a), 0); /* once */
    sequence_state_giveback_done(&m.s, store_giveback(&st, &a));
    CHECK_EQ_INT(st.max, 30);
    CHECK_EQ_INT(m.s.floor, 30); /* lowered: nothing above was issued */
    CHECK_EQ_INT(m.s.floor_dirty, 1);
    /* The next primary goes on right after it. */
    sim_init(&b, &st, 100, T_SESSION);
    sim_win(&b, t + 5, 0);
    t = sim_settle(&b, t + 5, 10);
    CHECK_EQ_INT(sim_issue(&b, t, 1, &id), LEAF_OK);
    CHECK_EQ_INT(id, 31);

    /* A top-up in flight at the stop: the giveback follows it on the session. */
    CHECK_EQ_INT(sim_issue(&b, t, 60, &id), LEAF_OK); /* 32..91: below half, top-up */
    b.fault = FAULT_HOLD;
    sim_send(&b, t);
    CHECK(b.busy);
    int64_t last = b.s.last;
    sequence_lease_lose(&b.l);
    sequence_state_stop(&b.s);
    CHECK_EQ_INT(sequence_state_giveback(&b.s, &a), 1);
    CHECK_EQ_INT(a.max, last);
    CHECK_EQ_INT(a.version, st.version); /* the version the held write left */
    sequence_state_giveback_done(&b.s, store_giveback(&st, &a));
    CHECK_EQ_INT(st.max, last);
    /* If someone wrote meanwhile, the giveback is refused and changes nothing. */
    struct sim c;
    sim_init(&c, &st, 100, T_SESSION);
    sim_win(&c, t + 10, 0);
    t = sim_settle(&c, t + 10, 10);
    CHECK_EQ_INT(sim_issue(&c, t, 5, &id), LEAF_OK);
    CHECK_EQ_INT(id, last + 1);
    sequence_lease_lose(&c.l);
    sequence_state_stop(&c.s);
    st.version++;
    int64_t before = st.max, floor = c.s.floor;
    CHECK_EQ_INT(sequence_state_giveback(&c.s, &a), 1);
    sequence_state_giveback_done(&c.s, store_giveback(&st, &a));
    CHECK_EQ_INT(st.max, before);
    CHECK_EQ_INT(c.s.floor, floor);
    /* Stopped while still reading: nothing to give back. */
    sim_init(&c, &st, 100, T_SESSION);
    sim_win(&c, t + 20, 0);
    sim_step(&c, t + 20);
    sequence_lease_lose(&c.l);
    sequence_state_stop(&c.s);
    CHECK_EQ_INT(sequence_state_giveback(&c.s, &a), 0);
}

/*
 * Two primaries across a partition. A serves; at T_CUT it is cut off from
 * ZooKeeper (not from clients), and its clients keep asking. The server
 * expires A's session T after it last heard from A; B wins the election
 * then, reads and fences. Later A's partition heals. Every answer is logged
 * with its time: IDs are unique, and an ID returned at a later millisecond
 * than another is larger.
 */
struct op {
    int64_t t, id;
    int node;
};

static int op_cmp(const void *a, const void *b) {
    const struct op *x = a, *y = b;
    return x->t != y->t ? (x->t < y->t ? -1 : 1) : (x->id < y->id ? -1 : x->id > y->id);
}

static void test_two_primaries_partition(void) {
    enum { T = 3000, CUT = T0 + 5000, END = T0 + 20000, HEAL = T0 + 12000 };
    struct store st = {.exists = 1, .max = 1000, .version = 2};
    struct sim a, b;
    int64_t heard_a = T0, b_first = -1, a_last_ok = -1;
    size_t nops = 0, cap = 1 << 16;
    struct op *ops = malloc(cap * sizeof(*ops));
    if (ops == NULL) {
        CHECK(ops != NULL);
        return;
    }
    int a_expired = 0, b_elected = 0;
    sim_init(&a, &st, 50, T);
    sim_init(&b, &st, 50, T);
    a.latency_ms = b.latency_ms = 2;
    sim_win(&a, T0, 0);
    for (int64_t t = T0; t < END; t++) {
        /* A's heartbeat every T/6, while the server hears it. */
        if (t % (T / 6) == 0 && !a.partitioned && !a_expired) {
            heard_a = t;
            sequence_lease_answer(&a.l, t, t + a.latency_ms);
        }
        if (t == CUT) {
            a.partitioned = 1;
        }
        if (t == HEAL) {
            a.partitioned = 0; /* its session is gone: the glue sees EXPIRED */
            a.busy = 0;
            sequence_lease_lose(&a.l);
            sequence_state_stop(&a.s);
        }
        if (!a_expired && t - heard_a >= T) {
            a_expired = 1;
        }
        if (a_expired && !b_elected && t >= heard_a + T + 100) {
            b_elected = 1; /* B saw A's node vanish and listed the children */
            sim_win(&b, t, 0);
        }
        sim_step(&a, t);
        if (b_elected) {
            sim_step(&b, t);
            sequence_lease_answer(&b.l, t, t); /* B's heartbeats are answered */
        }
        for (int k = 0; k < 3; k++) {
            struct sim *m = k == 1 ? &b : &a;
            int64_t id;
            if ((m == &b && !b_elected) || (m == &a && t > CUT && t % 25 != 0)) {
                continue; /* after the cut, A's clients ask slowly: its headroom outlasts the window
                           */
            }
            leaf_status_t rc = sim_issue(m, t, 1 + k, &id);
            if (rc == LEAF_OK && nops + (size_t)(1 + k) <= cap) {
                for (int j = 0; j <= k; j++) {
                    ops[nops++] = (struct op){t, id + j, m == &b};
                }
                if (m == &a) {
                    a_last_ok = t;
                } else if (b_first < 0) {
                    b_first = t;
                }
            }
        }
    }
    CHECK(a_last_ok >= CUT + T / 2);     /* A served a while after the cut (from its headroom)... */
    CHECK(a.s.acked_max - a.s.last > 0); /* ...and stopped with headroom left: the 2/3 rule */
    CHECK(a_last_ok < b_first);          /* ...and stopped before B started */
    CHECK(b_first > 0);
    CHECK(b_first - a_last_ok >= T / 3);
    CHECK(a.s.issued > 0 && b.s.issued > 0);
    qsort(ops, nops, sizeof(*ops), op_cmp);
    int64_t max_before = INT64_MIN, max_this = INT64_MIN, cur_t = -1;
    int unique = 1, ordered = 1;
    for (size_t i = 0; i < nops; i++) {
        if (ops[i].t != cur_t) {
            max_before = max_this > max_before ? max_this : max_before;
            cur_t = ops[i].t;
        }
        ordered &= ops[i].id > max_before;
        unique &= i == 0 || ops[i].id != ops[i - 1].id;
        max_this = ops[i].id > max_this ? ops[i].id : max_this;
    }
    CHECK(nops > 10000);
    CHECK(unique);
    CHECK(ordered);
    free(ops);
}

/* ---- election and payloads ------------------------------------------------------------------ */

static void test_elect(void) {
    struct sequence_elect e;
    const char *kids[] = {"n_0000000012", "n_0000000003", "junk", "x_0000000007", "n_0000000010"};
    CHECK_EQ_INT(sequence_elect_seq("n_0000000012"), 12);
    CHECK_EQ_INT(sequence_elect_seq("/leafd/a/primary/_c_9f-n_0000000042"), 42);
    CHECK_EQ_INT(sequence_elect_seq("n_00000012"), -1);
    CHECK_EQ_INT(sequence_elect_seq("n_00000000a2"), -1);

    CHECK_EQ_INT(sequence_elect_decide(kids, 5, "n_0000000003", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_PRIMARY);
    CHECK_EQ_INT(e.primary, 1);
    CHECK_EQ_INT(e.watch, -1);

    CHECK_EQ_INT(sequence_elect_decide(kids, 5, "/leafd/a/primary/n_0000000012", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_WATCH);
    CHECK_EQ_INT(e.watch, 4); /* the immediate predecessor, 10, not the primary */
    CHECK_EQ_INT(e.primary, 1);
    CHECK_EQ_INT(e.mine_seq, 12);

    CHECK_EQ_INT(sequence_elect_decide(kids, 5, "n_0000000010", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_WATCH);
    CHECK_EQ_INT(e.watch, 3); /* any prefix counts */

    CHECK_EQ_INT(sequence_elect_decide(kids, 5, "n_0000000011", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_MISSING); /* expired: re-create */
    CHECK_EQ_INT(e.watch, -1);
    CHECK_EQ_INT(e.primary, 1);

    const char *alone[] = {"n_0000000099"};
    CHECK_EQ_INT(sequence_elect_decide(alone, 1, "n_0000000099", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_PRIMARY);
    CHECK_EQ_INT(sequence_elect_decide(alone, 0, "n_0000000099", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_MISSING);
    CHECK_EQ_INT(e.primary, -1);
    CHECK_EQ_INT(sequence_elect_decide(alone, 1, "mine", &e), LEAF_EINVAL);

    /* Same counter, other name (a prefix changed): not mine. */
    const char *other[] = {"a_0000000005", "b_0000000006"};
    CHECK_EQ_INT(sequence_elect_decide(other, 2, "c_0000000006", &e), LEAF_OK);
    CHECK_EQ_INT(e.verdict, SEQUENCE_ELECT_MISSING);
}

static void test_record_max(void) {
    int64_t vals[] = {0, 1, 9007199254740993LL /* 2^53 + 1: not a double */, INT64_MAX - 1,
                      INT64_MAX};
    char buf[SEQUENCE_RECORD_MAX_LEN];
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        size_t n = sequence_record_format_max(buf, sizeof(buf), vals[i]);
        int64_t back = -1;
        CHECK(n > 0);
        CHECK_EQ_INT(sequence_record_parse_max(buf, n, &back), LEAF_OK);
        CHECK_EQ_INT(back, vals[i]);
    }
    CHECK_EQ_STR((sequence_record_format_max(buf, sizeof(buf), INT64_MAX), buf),
                 "{\"max\":9223372036854775807}");
    CHECK_EQ_INT(sequence_record_format_max(buf, sizeof(buf), -1), 0);
    CHECK_EQ_INT(sequence_record_format_max(buf, 10, 12345), 0);

    int64_t v = -1;
    const char *ok = " {\n\t\"max\" :  77 } \r\n";
    CHECK_EQ_INT(sequence_record_parse_max(ok, strlen(ok), &v), LEAF_OK);
    CHECK_EQ_INT(v, 77);
    const char *bad[] = {"",
                         "{}",
                         "{\"max\":}",
                         "{\"max\":-1}",
                         "{\"max\":+1}",
                         "{\"max\":01}",
                         "{\"max\":1.0}",
                         "{\"max\":1e3}",
                         "{\"max\":\"1\"}",
                         "{\"max\":1,\"x\":2}",
                         "{\"max\":1}x",
                         "{\"MAX\":1}",
                         "{\"max\":1",
                         "\"max\":1}",
                         "{max:1}",
                         "{\"max\":1 2}",
                         "[1]",
                         "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 42;
        CHECK_EQ_INT(sequence_record_parse_max(bad[i], strlen(bad[i]), &v), LEAF_EINVAL);
        CHECK_EQ_INT(v, 42);
    }
    const char *big = "{\"max\":9223372036854775808}";
    CHECK_EQ_INT(sequence_record_parse_max(big, strlen(big), &v), LEAF_ERANGE);
    const char *huge = "{\"max\":99999999999999999999999}";
    CHECK_EQ_INT(sequence_record_parse_max(huge, strlen(huge), &v), LEAF_ERANGE);
    CHECK_EQ_INT(sequence_record_parse_max("{\"max\":1}\0", 10, &v), LEAF_EINVAL); /* NUL */
    CHECK_EQ_INT(sequence_record_parse_max("{\"max\":12}", 9, &v), LEAF_EINVAL);   /* cut */
}

/* A keyed space's definition, {"step":N}: the same rules under another key. */
static void test_record_step(void) {
    char buf[SEQUENCE_RECORD_MAX_LEN];
    size_t n = sequence_record_format_int(buf, sizeof(buf), "step", INT64_MAX);
    CHECK_EQ_STR(buf, "{\"step\":9223372036854775807}");
    int64_t v = -1;
    CHECK_EQ_INT(sequence_record_parse_int(buf, n, "step", &v), LEAF_OK);
    CHECK_EQ_INT(v, INT64_MAX);
    const char *ok = " { \"step\" : 10000 } ";
    CHECK_EQ_INT(sequence_record_parse_int(ok, strlen(ok), "step", &v), LEAF_OK);
    CHECK_EQ_INT(v, 10000);
    const char *bad[] = {"{\"max\":1}", "{\"ste\":1}", "{\"steps\":1}", "{\"step\":1.5}",
                         "{step:1}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 42;
        CHECK_EQ_INT(sequence_record_parse_int(bad[i], strlen(bad[i]), "step", &v), LEAF_EINVAL);
        CHECK_EQ_INT(v, 42);
    }
    CHECK_EQ_INT(sequence_record_parse_int("{\"max\":1}", 9, "max", &v), LEAF_OK);
}

static void test_record_node(void) {
    char buf[160];
    struct sequence_node_addr a;
    size_t n = sequence_record_format_node(buf, sizeof(buf), "192.0.2.7:8080", "192.0.2.7:6380");
    CHECK_EQ_STR(buf, "http=192.0.2.7:8080 resp=192.0.2.7:6380");
    CHECK_EQ_INT(sequence_record_parse_node(buf, n, &a), LEAF_OK);
    CHECK_EQ_STR(a.http, "192.0.2.7:8080");
    CHECK_EQ_STR(a.resp, "192.0.2.7:6380");

    n = sequence_record_format_node(buf, sizeof(buf), "[2001:db8::1]:8080", NULL);
    CHECK_EQ_STR(buf, "http=[2001:db8::1]:8080");
    CHECK_EQ_INT(sequence_record_parse_node(buf, n, &a), LEAF_OK);
    CHECK_EQ_STR(a.http, "[2001:db8::1]:8080");
    CHECK_EQ_STR(a.resp, "");

    const char *fwd = "zone=b resp=h:1 http=h:65535";
    CHECK_EQ_INT(sequence_record_parse_node(fwd, strlen(fwd), &a), LEAF_OK);
    CHECK_EQ_STR(a.http, "h:65535");
    CHECK_EQ_STR(a.resp, "h:1");

    CHECK_EQ_INT(sequence_record_format_node(buf, sizeof(buf), "h:0", NULL), 0);
    CHECK_EQ_INT(sequence_record_format_node(buf, sizeof(buf), "h:8080", "bad addr:1"), 0);
    CHECK_EQ_INT(sequence_record_format_node(buf, 10, "h:8080", "h:6380"), 0);

    const char *bad[] = {"",
                         "resp=h:1",
                         "http=h:0",
                         "http=h:65536",
                         "http=h",
                         "http=:80",
                         "http=h:8x",
                         "http=h:-1",
                         "http=h:80  resp=h:1",
                         "http=h:80 ",
                         " http=h:80",
                         "http=h:80 http=h:81",
                         "http",
                         "http=h:80 resp=",
                         "http=h:123456"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(sequence_record_parse_node(bad[i], strlen(bad[i]), &a), LEAF_EINVAL);
    }
    char longaddr[80];
    memset(longaddr, 'a', sizeof(longaddr));
    memcpy(longaddr, "http=", 5);
    memcpy(longaddr + sizeof(longaddr) - 3, ":80", 3);
    CHECK_EQ_INT(sequence_record_parse_node(longaddr, sizeof(longaddr), &a), LEAF_EINVAL);
}

/* The floors' file lines: round trip, torn lines refused, the compaction rule. */
static void test_floor_file_format(void) {
    char buf[SEQUENCE_FLOOR_LINE_MAX], name[VALIDATE_TAG_MAX + 1];
    size_t n = sequence_floor_header(buf, sizeof(buf), "it");
    CHECK(n > 0 && buf[n - 1] == '\n');
    CHECK(sequence_floor_header_ok(buf, n - 1, "it"));
    CHECK(!sequence_floor_header_ok(buf, n - 1, "other"));
    CHECK(!sequence_floor_header_ok(buf, n - 2, "it"));
    n = sequence_floor_format(buf, sizeof(buf), "orders", 6, INT64_MAX);
    CHECK_EQ_STR(buf, "orders 9223372036854775807\n");
    size_t nlen = 0;
    int64_t f = 0;
    CHECK_EQ_INT(sequence_floor_parse(buf, n - 1, name, &nlen, &f), LEAF_OK);
    CHECK_EQ_STR(name, "orders");
    CHECK_EQ_INT(f, INT64_MAX);
    /* a numbering's counter (@<name>) keeps its floor too; the sequence routes refuse the name */
    n = sequence_floor_format(buf, sizeof(buf), "@orders", 7, 5);
    CHECK_EQ_STR(buf, "@orders 5\n");
    CHECK_EQ_INT(sequence_floor_parse(buf, n - 1, name, &nlen, &f), LEAF_OK);
    CHECK_EQ_STR(name, "@orders");
    CHECK(!validate_sequence_name("@orders", 7) && validate_stored_sequence_name("@orders", 7));
    CHECK(!validate_stored_sequence_name("@@orders", 8) && !validate_stored_sequence_name("@", 1));
    CHECK_EQ_INT(sequence_floor_format(buf, sizeof(buf), "a b", 3, 1), 0);
    CHECK_EQ_INT(sequence_floor_format(buf, sizeof(buf), "a", 1, -1), 0);
    const char *bad[] = {"orders",
                         "orders ",
                         " 12",
                         "orders 12x",
                         "orders -1",
                         "or/ders 1",
                         "orders 99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(sequence_floor_parse(bad[i], strlen(bad[i]), name, &nlen, &f), LEAF_EINVAL);
    }
    CHECK(!sequence_floor_should_compact(2 * 100000 + SEQUENCE_FLOOR_SLACK, 100000));
    CHECK(sequence_floor_should_compact(2 * 100000 + SEQUENCE_FLOOR_SLACK + 1, 100000));
    CHECK(sequence_floor_should_compact(SEQUENCE_FLOOR_SLACK + 1, 0));
}

/* ---- business numbers through a crash (sequence_numbering.h) -------------------------------- */

/* n numbers of d at the clock's period on m, as the glue does: the range from the last value,
 * then the issue, parked (stepped) while the headroom is short. */
static leaf_status_t num_take(struct sim *m, const struct sequence_numbering *d, int64_t period,
                              int64_t n, int64_t *t, int64_t *first) {
    leaf_status_t rc = LEAF_EAGAIN;
    for (int i = 0; i < 200 && rc == LEAF_EAGAIN; i++) {
        int64_t start = 0;
        sequence_state_set_room(&m->s, sequence_numbering_room(d),
                                sequence_numbering_end(d, m->s.last, period));
        rc = sequence_numbering_range(d, m->s.last, period, n, &start);
        if (rc == LEAF_OK) {
            rc = sequence_state_issue_from(&m->s, &m->l, *t, n, start, first);
        }
        sim_send(m, *t);
        sim_step(m, ++*t);
    }
    return rc;
}

/* A primary killed (-9) and a new one on the same record. */
static void num_crash(struct sim *m, struct store *st, int64_t batch, int64_t room, int64_t *t) {
    sim_init(m, st, batch, T_SESSION);
    sequence_state_set_room(&m->s, room, room - 1); /* the glue sets it on the first request */
    sim_win(m, *t, 0); /* not settled: the first request parks while it reads and fences */
}

static int64_t pow10i(int w) {
    int64_t p = 1;
    while (w-- > 0) {
        p *= 10;
    }
    return p;
}

/* After a kill -9 the new primary goes on in the clock's period with a gap inside it, never in
 * a later period (a date ahead of the clock), never back to counters issued before. */
static void num_crash_case(int width, enum sequence_numbering_period period, int64_t batch,
                           int64_t before, int64_t p) {
    struct sequence_numbering d = {.name = "n",
                                   .prefix = "W",
                                   .width = width,
                                   .period = period,
                                   .date = NUMBERING_DATE_YYYYMMDD,
                                   .time_zone = "UTC"};
    struct store st = {.exists = 1, .max = 0, .version = 0};
    struct sim m;
    int64_t t = T0, first = 0, room = pow10i(width), last = 0;
    num_crash(&m, &st, batch, room, &t);
    for (int64_t left = before; left > 0;) {
        int64_t n = left > 1000 ? 1000 : left;
        CHECK_EQ_INT(num_take(&m, &d, p, n, &t, &first), LEAF_OK);
        last = first + n - 1;
        left -= n;
    }
    for (int crash = 0; crash < 3; crash++) {
        num_crash(&m, &st, batch, room, &t);
        leaf_status_t rc = num_take(&m, &d, p, 1, &t, &first);
        if (rc == LEAF_ERANGE) {
            continue; /* the period's room spent: refused, never wrapped; crash again */
        }
        CHECK_EQ_INT(rc, LEAF_OK);
        CHECK(first > last);               /* never again */
        CHECK_EQ_INT(first / room - 1, p); /* the clock's period, not a later one */
        if (first / room - 1 != p || first <= last) {
            fprintf(stderr, "width %d batch %lld: %lld after %lld (period %lld, clock %lld)\n",
                    width, (long long)batch, (long long)first, (long long)last,
                    (long long)(first / room - 1), (long long)p);
            return;
        }
        last = first;
    }
    /* a period used up asks for no write: it could only rewrite the same max */
    int writes = st.writes;
    for (int i = 0; i < 50; i++) {
        sim_step(&m, ++t);
    }
    CHECK(st.writes - writes <= 1);
}

static void test_numbering_crash_stays_in_period(void) {
    int64_t dec7 = 20794;                                       /* 2026-12-07, days since 1970 */
    num_crash_case(4, NUMBERING_PERIOD_DAY, 10000, 7, dec7);    /* W2026120700007 then */
    num_crash_case(3, NUMBERING_PERIOD_DAY, 10000, 5, dec7);    /* ten days ahead before */
    num_crash_case(5, NUMBERING_PERIOD_NEVER, 10000, 95000, 0); /* INV-09001 again before */
    num_crash_case(3, NUMBERING_PERIOD_NEVER, 1900, 3, 0);      /* INV-001 again before */
    num_crash_case(6, NUMBERING_PERIOD_DAY, 10000, 42, dec7);
    num_crash_case(3, NUMBERING_PERIOD_DAY, 10000, 999, dec7); /* used up, then crashes */
    num_crash_case(4, NUMBERING_PERIOD_DAY, 10000, 9990, dec7);
}

int main(void) {
    TEST(test_new_primary_starts_above_max);
    TEST(test_autocreate_and_missing);
    TEST(test_top_up_at_half);
    TEST(test_eagain_until_ack);
    TEST(test_rate_growth);
    TEST(test_fenced_by_another_primary);
    TEST(test_write_errors);
    TEST(test_restart_drops_old_results);
    TEST(test_range_end);
    TEST(test_issue_from_skips);
    TEST(test_numbering_crash_stays_in_period);
    TEST(test_liveness_boundaries);
    TEST(test_stop_and_resume);
    TEST(test_two_primaries_partition);
    TEST(test_fence_limit);
    TEST(test_record_deleted);
    TEST(test_missing_recheck);
    TEST(test_floor);
    TEST(test_giveback);
    TEST(test_floor_file_format);
    TEST(test_elect);
    TEST(test_record_max);
    TEST(test_record_step);
    TEST(test_record_node);
    return unit_done();
}
