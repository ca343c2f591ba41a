/*
 * Configurable snowflake layouts (docs/id-shapes.md): parsing and its
 * errors, the horizon check, encode/decode against each system's own
 * formula, and the generator (order, exhaustion, borrowing) at units 1, 10
 * and 1000 ms. The default layout is checked bit for bit against Leaf.
 */
#include <stdlib.h>

#include "snowflake_gen.h"
#include "snowflake_id.h"
#include "unit.h"

#define NOW_2026 INT64_C(1795000000000)        /* 2026-11-18, a fixed "now" */
#define SONYFLAKE_EPOCH INT64_C(1409529600000) /* 2014-09-01, Sonyflake's default */
#define BAIDU_EPOCH INT64_C(1463673600000)     /* 2016-05-20, uid-generator's default */
#define SONYFLAKE "time:39,sequence:8,worker:16"
#define BAIDU "time:28,worker:22,sequence:13"
#define BAIDU_LONG "time:31,worker:23,sequence:9"
#define JS_SAFE "time:41,worker:4,sequence:8"

static struct snowflake_layout parse_ok(const char *text, int64_t unit) {
    struct snowflake_layout l;
    char reason[SNOWFLAKE_REASON_MAX] = "";
    CHECK_EQ_INT(snowflake_layout_parse(&l, text, strlen(text), reason, sizeof(reason)), LEAF_OK);
    CHECK_EQ_INT(snowflake_layout_set_unit(&l, unit, reason, sizeof(reason)), LEAF_OK);
    CHECK_EQ_STR(reason, "");
    return l;
}

/* How many values a new tick's sequence start is drawn from, for a sequence of bits. */
static int span_of(int bits) {
    char text[64];
    snprintf(text, sizeof(text), "time:31,worker:1,sequence:%d", bits);
    struct snowflake_layout l = parse_ok(text, 1);
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &l, SNOWFLAKE_DEFAULT_EPOCH, 1);
    return g.start_span;
}

/* The parse fails and the reason holds `want`. */
static void parse_fails(const char *text, const char *want) {
    struct snowflake_layout l;
    char reason[SNOWFLAKE_REASON_MAX] = "";
    CHECK_EQ_INT(snowflake_layout_parse(&l, text, strlen(text), reason, sizeof(reason)),
                 LEAF_EINVAL);
    if (strstr(reason, want) == NULL) {
        fprintf(stderr, "layout \"%s\": reason \"%s\" lacks \"%s\"\n", text, reason, want);
        CHECK(0);
    }
}

static void test_parse_default_is_todays_layout(void) {
    struct snowflake_layout d, p = parse_ok(SNOWFLAKE_DEFAULT_LAYOUT, 1);
    snowflake_layout_default(&d);
    CHECK(memcmp(&d, &p, sizeof(d)) == 0);
    CHECK_EQ_INT(p.shift[SNOWFLAKE_TIME], 22);
    CHECK_EQ_INT(p.shift[SNOWFLAKE_WORKER], 12);
    CHECK_EQ_INT(p.shift[SNOWFLAKE_SEQUENCE], 0);
    CHECK_EQ_INT(snowflake_layout_workers(&p), 1024);
    char text[64];
    snowflake_layout_format(&p, text, sizeof(text));
    CHECK_EQ_STR(text, SNOWFLAKE_DEFAULT_LAYOUT);
    /* spaces around names and widths are fine; the order is kept */
    struct snowflake_layout s = parse_ok(" time : 39 , sequence:8,worker :16 ", 10);
    snowflake_layout_format(&s, text, sizeof(text));
    CHECK_EQ_STR(text, SONYFLAKE);
    CHECK_EQ_INT(s.shift[SNOWFLAKE_SEQUENCE], 16);
    CHECK_EQ_INT(s.shift[SNOWFLAKE_WORKER], 0);
    CHECK_EQ_INT(snowflake_layout_workers(&s), 65536);
}

static void test_parse_errors(void) {
    parse_fails("", "empty");
    parse_fails("   ", "empty");
    parse_fails("time:41,worker:10", "field sequence is missing");
    parse_fails("time:41", "field worker is missing");
    parse_fails("time:41,time:10,sequence:12", "field time listed twice");
    parse_fails("time:41,node:10,sequence:12", "unknown field \"node\"");
    parse_fails("time:41,worker:10,sequence:12,extra:1", "unknown field \"extra\"");
    parse_fails("time:41,worker:5,sequence:12,datacenter:1,worker:1", "more than 4 fields");
    parse_fails("time:41,datacenter:5,datacenter:5,sequence:12", "field datacenter listed twice");
    parse_fails("time:41,datacenter:5,sequence:12", "field worker is missing");
    parse_fails("twitters", "expected name:width");
    parse_fails("time:41,worker:10,sequence:12,", "stray comma");
    parse_fails("time:41,,worker:10,sequence:12", "stray comma");
    parse_fails("time:0,worker:10,sequence:12", "width 0 is out of range");
    parse_fails("time:41,worker:-3,sequence:12", "width -3 is out of range");
    parse_fails("time:41,worker:10,sequence:32", "width 32 is out of range (1..31 bits)");
    parse_fails("time:41,worker:10,sequence:x", "width \"x\" is not a whole number");
    parse_fails("time:41,worker:10,sequence:", "width \"\" is not a whole number");
    parse_fails("time:41;worker:10;sequence:12", "is not a whole number");
    parse_fails("time41,worker:10,sequence:12", "expected name:width");
    parse_fails("time:42,worker:10,sequence:12", "widths sum to 64 bits; at most 63");
    parse_fails("sequence:12,time:41,worker:10", "sequence is listed above time");
    /* the worker may sit anywhere, even above time */
    parse_ok("worker:10,time:41,sequence:12", 1);

    struct snowflake_layout l;
    char reason[SNOWFLAKE_REASON_MAX] = "";
    snowflake_layout_default(&l);
    CHECK_EQ_INT(snowflake_layout_set_unit(&l, 0, reason, sizeof(reason)), LEAF_EINVAL);
    CHECK(strstr(reason, "time unit 0 ms is out of range") != NULL);
    CHECK_EQ_INT(snowflake_layout_set_unit(&l, SNOWFLAKE_MAX_UNIT_MS + 1, reason, sizeof(reason)),
                 LEAF_EINVAL);
    CHECK_EQ_INT(l.unit_ms, 1);
}

static void horizon(const char *text, int64_t unit, int64_t epoch, leaf_status_t want) {
    struct snowflake_layout l = parse_ok(text, unit);
    char reason[SNOWFLAKE_REASON_MAX] = "";
    CHECK_EQ_INT(snowflake_layout_check_horizon(&l, epoch, NOW_2026, reason, sizeof(reason)), want);
    if (want != LEAF_OK) {
        CHECK(strstr(reason, "runs out") != NULL);
        CHECK(strstr(reason, "at least 1 year") != NULL);
    }
}

static void test_horizon(void) {
    horizon(SNOWFLAKE_DEFAULT_LAYOUT, 1, SNOWFLAKE_DEFAULT_EPOCH, LEAF_OK);
    horizon(SONYFLAKE, 10, SONYFLAKE_EPOCH, LEAF_OK);
    horizon(BAIDU_LONG, 1000, BAIDU_EPOCH, LEAF_OK);
    horizon(JS_SAFE, 1, NOW_2026, LEAF_OK);
    /* Baidu's default 28 bits of seconds last 8.5 years: over since 2024 from its
     * epoch (refused: IDs would wrap), 8.5 years from an epoch of today (taken, with a warning
     * at start: docs/id-shapes.md, "The horizon"). Its README's 29/21/13 lasts 17 years. */
    horizon(BAIDU, 1000, BAIDU_EPOCH, LEAF_EINVAL);
    horizon(BAIDU, 1000, NOW_2026, LEAF_OK);
    horizon("time:29,worker:21,sequence:13", 1000, NOW_2026, LEAF_OK);
    /* 38 bits of ms: 8.7 years (taken, warned); 34 bits: half a year (refused) */
    horizon("time:38,worker:10,sequence:12", 1, NOW_2026, LEAF_OK);
    horizon("time:34,worker:10,sequence:12", 1, NOW_2026, LEAF_EINVAL);
    horizon("time:39,worker:10,sequence:12", 1, NOW_2026, LEAF_OK);
    /* a wide time field at a coarse unit saturates instead of overflowing */
    horizon("time:61,worker:1,sequence:1", SNOWFLAKE_MAX_UNIT_MS, NOW_2026, LEAF_OK);
    struct snowflake_layout l = parse_ok(BAIDU, 1000);
    double y = snowflake_layout_years_left(&l, NOW_2026, NOW_2026);
    CHECK(y > 8.4 && y < 8.6);
    snowflake_layout_default(&l);
    y = snowflake_layout_years_left(&l, SNOWFLAKE_DEFAULT_EPOCH, SNOWFLAKE_DEFAULT_EPOCH);
    CHECK(y > 69.6 && y < 69.8); /* 2^41 ms is about 69.7 years */
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random field values round-trip, and stay within the layout's bits. */
static void round_trip(const struct snowflake_layout *l, int64_t epoch) {
    int width = l->bits[0] + l->bits[1] + l->bits[2];
    for (int i = 0; i < 10000; i++) {
        int64_t t = (int64_t)(next_rand() & (uint64_t)snowflake_layout_max(l, SNOWFLAKE_TIME));
        int64_t w = (int64_t)(next_rand() & (uint64_t)snowflake_layout_max(l, SNOWFLAKE_WORKER));
        int64_t s = (int64_t)(next_rand() & (uint64_t)snowflake_layout_max(l, SNOWFLAKE_SEQUENCE));
        if (i == 0) {
            t = snowflake_layout_max(l, SNOWFLAKE_TIME);
            w = snowflake_layout_max(l, SNOWFLAKE_WORKER);
            s = snowflake_layout_max(l, SNOWFLAKE_SEQUENCE);
        }
        int64_t id = snowflake_layout_make(l, t, w, s);
        struct snowflake_parts p;
        CHECK(id >= 0 && (id >> width) == 0);
        CHECK_EQ_INT(snowflake_layout_decode(l, id, epoch, &p), LEAF_OK);
        CHECK_EQ_INT(p.ticks, t);
        CHECK_EQ_INT(p.timestamp_ms, epoch + t * l->unit_ms);
        CHECK_EQ_INT(p.worker_id, w);
        CHECK_EQ_INT(p.sequence, s);
    }
}

static void test_round_trips_and_foreign_formulas(void) {
    struct snowflake_layout l;
    struct snowflake_parts p;
    snowflake_layout_default(&l);
    round_trip(&l, SNOWFLAKE_DEFAULT_EPOCH);

    /* Sonyflake: id = time << 24 | sequence << 16 | machine, time in 10 ms units */
    l = parse_ok(SONYFLAKE, 10);
    round_trip(&l, SONYFLAKE_EPOCH);
    int64_t id = snowflake_layout_make(&l, 123456789, 0xBEEF, 0x7A);
    CHECK_EQ_INT(id >> 24, 123456789);
    CHECK_EQ_INT((id >> 16) & 0xFF, 0x7A);
    CHECK_EQ_INT(id & 0xFFFF, 0xBEEF);

    /* Baidu: uid = seconds << 35 | worker << 13 | sequence */
    l = parse_ok(BAIDU, 1000);
    round_trip(&l, BAIDU_EPOCH);
    id = snowflake_layout_make(&l, 200000000, 3000000, 8000);
    CHECK_EQ_INT(id, (INT64_C(200000000) << 35) | (INT64_C(3000000) << 13) | 8000);
    CHECK_EQ_INT(snowflake_layout_decode(&l, id, BAIDU_EPOCH, &p), LEAF_OK);
    CHECK_EQ_INT(p.timestamp_ms, BAIDU_EPOCH + INT64_C(200000000) * 1000);

    /* Twitter 5+5: worker:10 holding datacenter << 5 | worker */
    l = parse_ok(SNOWFLAKE_DEFAULT_LAYOUT, 1);
    int datacenter = 17, worker = 9;
    id = snowflake_layout_make(&l, 1000, datacenter << 5 | worker, 3);
    CHECK_EQ_INT((id >> 17) & 31, datacenter); /* Twitter's datacenterIdShift = 17 */
    CHECK_EQ_INT((id >> 12) & 31, worker);     /* workerIdShift = 12 */

    /* JavaScript-safe: every ID below 2^53 */
    l = parse_ok(JS_SAFE, 1);
    round_trip(&l, NOW_2026);
    CHECK(snowflake_layout_make(&l, snowflake_layout_max(&l, SNOWFLAKE_TIME), 15, 255) <
          (INT64_C(1) << 53));
    CHECK_EQ_INT(snowflake_layout_decode(&l, INT64_C(1) << 53, NOW_2026, &p), LEAF_ERANGE);
    CHECK_EQ_INT(snowflake_layout_decode(&l, -5, NOW_2026, &p), LEAF_ERANGE);
}

/* Default-layout IDs read back with Leaf's own formula, and equal to what the old code made. */
static void test_default_matches_leaf_formula(void) {
    struct snowflake_gen a, b;
    struct snowflake_layout l = parse_ok(SNOWFLAKE_DEFAULT_LAYOUT, 1);
    snowflake_gen_init(&a, SNOWFLAKE_DEFAULT_EPOCH, 7);
    snowflake_gen_init_layout(&b, &l, SNOWFLAKE_DEFAULT_EPOCH, 7);
    snowflake_gen_set_worker(&a, 731);
    snowflake_gen_set_worker(&b, 731);
    int64_t now = NOW_2026, ida[5], idb[5], wait, prev = -1;
    for (int i = 0; i < 5000; i++) {
        now += (int64_t)(next_rand() % 3);
        int n = 1 + (int)(next_rand() % 5);
        CHECK_EQ_INT(snowflake_gen_next(&a, now, ida, n, &wait), LEAF_OK);
        CHECK_EQ_INT(snowflake_gen_next(&b, now, idb, n, &wait), LEAF_OK);
        for (int k = 0; k < n; k++) {
            CHECK_EQ_INT(ida[k], idb[k]);
            CHECK(ida[k] > prev);
            prev = ida[k];
            CHECK_EQ_INT((ida[k] >> 22) + SNOWFLAKE_DEFAULT_EPOCH, now);
            CHECK_EQ_INT((ida[k] >> 12) & 1023, 731);
            CHECK_EQ_INT(ida[k], snowflake_id_make(now - SNOWFLAKE_DEFAULT_EPOCH, 731,
                                                   (int)(ida[k] & 4095)));
        }
    }
    CHECK_EQ_INT(span_of(12), 100); /* Leaf's 0..99 */
}

static void test_start_span(void) {
    int want[][2] = {{1, 1}, {8, 1}, {9, 12}, {10, 25}, {11, 51}, {12, 100}, {13, 100}, {31, 100}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        CHECK_EQ_INT(span_of(want[i][0]), want[i][1]);
    }
}

/* Sonyflake at unit 10: order across ticks, decoded time within the unit, sequence from 0. */
static void test_sonyflake_generator(void) {
    struct snowflake_layout l = parse_ok(SONYFLAKE, 10);
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &l, SONYFLAKE_EPOCH, 5);
    snowflake_gen_set_worker(&g, 40000);
    int64_t id, wait, prev = -1, prev_tick = -1;
    for (int64_t now = NOW_2026; now < NOW_2026 + 1000; now++) {
        CHECK_EQ_INT(snowflake_gen_next(&g, now, &id, 1, &wait), LEAF_OK);
        CHECK(id > prev);
        prev = id;
        int64_t tick = id >> 24; /* Sonyflake's decomposition */
        CHECK_EQ_INT(tick, (now - SONYFLAKE_EPOCH) / 10);
        CHECK_EQ_INT(id & 0xFFFF, 40000);
        CHECK_EQ_INT((id >> 16) & 0xFF, tick == prev_tick ? (now % 10) : 0);
        struct snowflake_parts p;
        CHECK_EQ_INT(snowflake_layout_decode(&l, id, SONYFLAKE_EPOCH, &p), LEAF_OK);
        CHECK(p.timestamp_ms <= now && now < p.timestamp_ms + 10);
        prev_tick = tick;
    }
    /* a worker ID wider than the layout is refused, not spilled into other bits */
    snowflake_gen_set_worker(&g, 65536);
    CHECK_EQ_INT(snowflake_gen_next(&g, NOW_2026 + 2000, &id, 1, &wait), LEAF_EUNAVAIL);
}

/* 8-bit sequence at unit 10: a tick holds 256; then one borrowed tick; then EAGAIN. */
static void test_exhaustion_at_8_bits(void) {
    struct snowflake_layout l = parse_ok(SONYFLAKE, 10);
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &l, SONYFLAKE_EPOCH, 5);
    snowflake_gen_set_worker(&g, 1);
    int64_t ids[SNOWFLAKE_MAX_BATCH], wait;
    int64_t now = NOW_2026 + 3; /* 3 ms into a tick: NOW_2026 is a multiple of 10 */
    int64_t tick = (now - SONYFLAKE_EPOCH) / 10;
    CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, 256, &wait), LEAF_OK);
    CHECK_EQ_INT(ids[0] >> 24, tick);
    CHECK_EQ_INT(ids[255] >> 24, tick);
    CHECK_EQ_INT((ids[255] >> 16) & 0xFF, 255);
    CHECK_EQ_INT(g.exhaustions, 0);
    CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, 200, &wait), LEAF_OK); /* borrowed */
    CHECK_EQ_INT(ids[0] >> 24, tick + 1);
    CHECK_EQ_INT((ids[0] >> 16) & 0xFF, 0);
    CHECK_EQ_INT(g.exhaustions, 1);
    CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, 56, &wait), LEAF_OK);
    CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, 1, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(wait, 7); /* until the next tick starts */
    CHECK_EQ_INT(snowflake_gen_next(&g, now + 6, ids, 1, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(wait, 1);
    CHECK_EQ_INT(snowflake_gen_next(&g, now + 7, ids, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(ids[0] >> 24, tick + 2); /* borrowed again, one tick ahead of the clock */
    /* a fresh tick and one borrowed hold 512: the largest batch; more is refused at once */
    CHECK_EQ_INT(snowflake_gen_max_batch(&g), 512);
    CHECK_EQ_INT(snowflake_gen_next(&g, now + 7, ids, 513, &wait), LEAF_EINVAL);
    /* 512 waits until a fresh tick and the next are free: 255 left now (borrowed tick) */
    CHECK_EQ_INT(snowflake_gen_next(&g, now + 7, ids, 512, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(wait, 20);
    CHECK_EQ_INT(snowflake_gen_next(&g, now + 27, ids, 512, &wait), LEAF_OK);
    CHECK_EQ_INT(ids[0] >> 24, tick + 3);
    CHECK_EQ_INT(ids[511] >> 24, tick + 4);
    /* the default layout keeps its 10000 */
    struct snowflake_gen d;
    snowflake_gen_init(&d, SNOWFLAKE_DEFAULT_EPOCH, 1);
    CHECK_EQ_INT(snowflake_gen_max_batch(&d), SNOWFLAKE_MAX_BATCH);
}

/* Unit 1000 (Baidu): a full second borrows the next one, then waits for the clock. */
static void test_borrow_at_unit_1000(void) {
    struct snowflake_layout l = parse_ok(BAIDU, 1000);
    struct snowflake_gen g;
    int64_t epoch = NOW_2026 - INT64_C(86400000), ids[SNOWFLAKE_MAX_BATCH], wait;
    snowflake_gen_init_layout(&g, &l, epoch, 11);
    snowflake_gen_set_worker(&g, 4000000);
    CHECK_EQ_INT(g.start_span, 100);
    CHECK_EQ_INT(snowflake_gen_max_batch(&g), 10000); /* 2 x (8192 - 99), capped */
    int64_t now = NOW_2026 + 250, tick = (now - epoch) / 1000;
    CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, 10000, &wait), LEAF_OK);
    CHECK_EQ_INT(ids[0] >> 35, tick);
    CHECK_EQ_INT(ids[9999] >> 35, tick + 1);
    CHECK_EQ_INT((ids[9999] >> 13) & ((1 << 22) - 1), 4000000);
    CHECK_EQ_INT(g.exhaustions, 1);
    for (int i = 1; i < 10000; i++) {
        CHECK(ids[i] > ids[i - 1]);
    }
    CHECK_EQ_INT(g.last_ms, epoch + (tick + 1) * 1000);
    CHECK_EQ_INT(snowflake_gen_next(&g, now, ids, 10000, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(wait, 750); /* the rest of this second */
    CHECK_EQ_INT(snowflake_gen_next(&g, now + 750, ids, 10000, &wait), LEAF_OK);
    CHECK_EQ_INT(ids[9999] >> 35, tick + 2);
}

/* Floor and ceiling at unit 1000: the floor's tick is never used; a tick below the ceiling is. */
static void test_floor_ceiling_at_unit_1000(void) {
    struct snowflake_layout l = parse_ok(BAIDU_LONG, 1000);
    struct snowflake_gen g;
    int64_t epoch = BAIDU_EPOCH, ids[SNOWFLAKE_MAX_BATCH], wait;
    snowflake_gen_init_layout(&g, &l, epoch, 3);
    snowflake_gen_set_worker(&g, 5);
    int64_t t0 = NOW_2026; /* a whole second after the epoch */
    snowflake_gen_set_floor(&g, t0 + 400);
    CHECK_EQ_INT(snowflake_gen_behind(&g, t0 + 998), 2);
    CHECK_EQ_INT(snowflake_gen_next(&g, t0 + 998, ids, 1, &wait), LEAF_EAGAIN);
    CHECK_EQ_INT(snowflake_gen_next(&g, t0 + 500, ids, 1, &wait), LEAF_ECLOCK);
    CHECK_EQ_INT(wait, 500);
    snowflake_gen_set_ceiling(&g, t0 + 1001); /* only the tick at t0+1000 is reserved */
    CHECK_EQ_INT(snowflake_gen_next(&g, t0 + 1000, ids, 1, &wait), LEAF_OK);
    struct snowflake_parts p;
    CHECK_EQ_INT(snowflake_layout_decode(&l, ids[0], epoch, &p), LEAF_OK);
    CHECK_EQ_INT(p.timestamp_ms, t0 + 1000);
    CHECK(p.timestamp_ms > g.floor_ms);
    /* 512 a tick (start 0..11): cannot borrow the unreserved next tick */
    CHECK_EQ_INT(snowflake_gen_next(&g, t0 + 1000, ids, 600, &wait), LEAF_EUNAVAIL);
    /* the time field ends: ERANGE past the horizon */
    int64_t last = epoch + (snowflake_layout_max(&l, SNOWFLAKE_TIME) + 1) * l.unit_ms - 1;
    snowflake_gen_set_ceiling(&g, INT64_MAX);
    CHECK_EQ_INT(snowflake_gen_next(&g, last + 1, ids, 1, &wait), LEAF_ERANGE);
    CHECK_EQ_INT(snowflake_gen_next(&g, last, ids, 1, &wait), LEAF_OK);
    CHECK_EQ_INT(ids[0] >> 32, snowflake_layout_max(&l, SNOWFLAKE_TIME));
}

/* JavaScript-safe at unit 1: order across milliseconds, every ID below 2^53, decoded back. */
static void test_js_safe_generator(void) {
    struct snowflake_layout l = parse_ok(JS_SAFE, 1);
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &l, NOW_2026 - INT64_C(86400000), 9);
    snowflake_gen_set_worker(&g, 15);
    CHECK_EQ_INT(g.start_span, 1); /* 8 bits: every tick starts at 0 */
    CHECK_EQ_INT(snowflake_gen_max_batch(&g), 9 * 256);
    int64_t ids[SNOWFLAKE_MAX_BATCH], wait, prev = -1, now = NOW_2026;
    for (int i = 0; i < 3000; i++) {
        now += (int64_t)(next_rand() % 2);
        int n = 1 + (int)(next_rand() % 300);
        leaf_status_t rc = snowflake_gen_next(&g, now, ids, n, &wait);
        if (rc == LEAF_EAGAIN) {
            now += wait;
            rc = snowflake_gen_next(&g, now, ids, n, &wait);
        }
        CHECK_EQ_INT(rc, LEAF_OK);
        for (int k = 0; k < n && rc == LEAF_OK; k++) {
            struct snowflake_parts p;
            CHECK(ids[k] > prev && ids[k] < (INT64_C(1) << 53));
            prev = ids[k];
            CHECK_EQ_INT(snowflake_layout_decode(&l, ids[k], g.epoch, &p), LEAF_OK);
            CHECK_EQ_INT(p.worker_id, 15);
            CHECK(p.timestamp_ms <= now + SNOWFLAKE_DEFAULT_BORROW_MS);
        }
    }
}

/* A named layout parses to its field list and unit; the datacenter ID fits its field. */
static struct snowflake_layout named(const char *name, const char *fields, int64_t unit) {
    struct snowflake_layout l;
    char reason[SNOWFLAKE_REASON_MAX] = "", text[80];
    CHECK_EQ_INT(snowflake_layout_parse(&l, name, strlen(name), reason, sizeof(reason)), LEAF_OK);
    snowflake_layout_format(&l, text, sizeof(text));
    CHECK_EQ_STR(text, fields);
    CHECK_EQ_INT(l.unit_ms, unit);
    CHECK_EQ_INT(l.datacenter_id, 0);
    return l;
}

static void test_named_layouts(void) {
    struct snowflake_layout t = named(" twitter ", "time:41,datacenter:5,worker:5,sequence:12", 1);
    named("sonyflake", SONYFLAKE, 10);
    named("uid-generator", BAIDU_LONG, 1000);
    named("js-safe", JS_SAFE, 1);
    CHECK_EQ_INT(t.shift[SNOWFLAKE_DATACENTER], 17);
    CHECK_EQ_INT(t.shift[SNOWFLAKE_WORKER], 12);
    CHECK_EQ_INT(snowflake_layout_workers(&t), 32); /* leases and forever fit the worker only */
    char reason[SNOWFLAKE_REASON_MAX] = "";
    CHECK_EQ_INT(snowflake_layout_set_datacenter(&t, 32, reason, sizeof(reason)), LEAF_EINVAL);
    CHECK(strstr(reason, "holds 0..31") != NULL);
    CHECK_EQ_INT(snowflake_layout_set_datacenter(&t, 3, reason, sizeof(reason)), LEAF_OK);
    /* Twitter's formula: ts << 22 | datacenter << 17 | worker << 12 | sequence */
    int64_t id = snowflake_layout_make(&t, 123456789, 9, 42);
    CHECK(id == ((INT64_C(123456789) << 22) | (3 << 17) | (9 << 12) | 42));
    struct snowflake_parts p;
    CHECK_EQ_INT(snowflake_layout_decode(&t, id, SNOWFLAKE_DEFAULT_EPOCH, &p), LEAF_OK);
    CHECK_EQ_INT(p.datacenter_id, 3);
    CHECK_EQ_INT(p.worker_id, 9);
    CHECK_EQ_INT(p.sequence, 42);
    CHECK(p.ticks == 123456789);
    /* the generator writes the datacenter into every ID */
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &t, SNOWFLAKE_DEFAULT_EPOCH, 7);
    snowflake_gen_set_worker(&g, 9);
    int64_t ids[100], wait = 0;
    CHECK_EQ_INT(snowflake_gen_next(&g, NOW_2026, ids, 100, &wait), LEAF_OK);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ_INT(snowflake_layout_decode(&t, ids[i], SNOWFLAKE_DEFAULT_EPOCH, &p), LEAF_OK);
        CHECK_EQ_INT(p.datacenter_id, 3);
        CHECK_EQ_INT(p.worker_id, 9);
        CHECK(i == 0 || ids[i] > ids[i - 1]);
    }
    /* a datacenter ID without a datacenter field is refused, 0 is fine */
    struct snowflake_layout d;
    snowflake_layout_default(&d);
    CHECK_EQ_INT(snowflake_layout_set_datacenter(&d, 1, reason, sizeof(reason)), LEAF_EINVAL);
    CHECK(strstr(reason, "needs a layout with a datacenter field") != NULL);
    CHECK_EQ_INT(snowflake_layout_set_datacenter(&d, 0, reason, sizeof(reason)), LEAF_OK);
    /* js-safe: the largest ID it can make is below 2^53 */
    struct snowflake_layout j = named("js-safe", JS_SAFE, 1);
    int64_t top = snowflake_layout_make(&j, snowflake_layout_max(&j, SNOWFLAKE_TIME),
                                        snowflake_layout_max(&j, SNOWFLAKE_WORKER),
                                        snowflake_layout_max(&j, SNOWFLAKE_SEQUENCE));
    CHECK(top < (INT64_C(1) << 53));
}

int main(void) {
    TEST(test_parse_default_is_todays_layout);
    TEST(test_named_layouts);
    TEST(test_parse_errors);
    TEST(test_horizon);
    TEST(test_round_trips_and_foreign_formulas);
    TEST(test_default_matches_leaf_formula);
    TEST(test_start_span);
    TEST(test_sonyflake_generator);
    TEST(test_exhaustion_at_8_bits);
    TEST(test_borrow_at_unit_1000);
    TEST(test_floor_ceiling_at_unit_1000);
    TEST(test_js_safe_generator);
    return unit_done();
}
