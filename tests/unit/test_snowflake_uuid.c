/*
 * UUIDv7 from snowflake IDs (snowflake/snowflake_uuid.h, docs/id-shapes.md
 * "UUIDv7"): RFC 9562's Appendix A.6 test vector reproduced bit for bit, the
 * parts read back, and a node's UUIDs ascending through counter rollover and
 * a clock step back within the bounded lead, in several layouts.
 */
#include <stdlib.h>

#include "snowflake_gen.h"
#include "snowflake_uuid.h"
#include "unit.h"

#define NOW_2026 INT64_C(1795000000000)
/* RFC 9562 Appendix A.6: unix_ts_ms 0x017F22E279B0, rand_a 0xCC3, rand_b 0x18C4DC0C0C07398F. */
#define A6_MS INT64_C(0x017F22E279B0)
#define A6_RAND_A 0xCC3u
#define A6_RAND_B UINT64_C(0x18C4DC0C0C07398F)
#define A6_TEXT "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"

static struct snowflake_layout layout_of(const char *text) {
    struct snowflake_layout l;
    char reason[SNOWFLAKE_REASON_MAX] = "";
    CHECK_EQ_INT(snowflake_layout_parse(&l, text, strlen(text), reason, sizeof(reason)), LEAF_OK);
    return l;
}

static void test_rfc9562_a6_vector(void) {
    /* RFC 9562 Appendix A.6 from leafd's encoder. In the default layout the counter is 12 bits
     * (all of rand_a), the 10-bit worker ID tops rand_b and 52 random bits follow: the vector's
     * rand_b read that way is worker 0x18C and random 0x4DC0C0C07398F. The snowflake ID of that
     * time, counter 0xCC3 and worker 0x18C, with those random bits, encodes to the vector. */
    struct snowflake_layout l;
    struct snowflake_uuid_shape s;
    snowflake_layout_default(&l);
    snowflake_uuid_shape(&l, &s);
    CHECK_EQ_INT(s.counter_bits, 12);
    CHECK_EQ_INT(s.node_bits, 10);
    CHECK_EQ_INT(s.random_bits, 52);
    CHECK(A6_RAND_B >> 52 == 0x18C);
    uint8_t u[16];
    char text[SNOWFLAKE_UUID_TEXT + 1];
    int64_t id = snowflake_id_make(A6_MS - SNOWFLAKE_DEFAULT_EPOCH, 0x18C, (int)A6_RAND_A);
    CHECK_EQ_INT(snowflake_uuid_from_id(&l, SNOWFLAKE_DEFAULT_EPOCH, id,
                                        A6_RAND_B & ((UINT64_C(1) << 52) - 1), u),
                 LEAF_OK);
    snowflake_uuid_format(u, text);
    CHECK_EQ_STR(text, A6_TEXT);
    /* bit for bit: the 16 bytes of the vector */
    static const uint8_t a6[16] = {0x01, 0x7F, 0x22, 0xE2, 0x79, 0xB0, 0x7C, 0xC3,
                                   0x98, 0xC4, 0xDC, 0x0C, 0x0C, 0x07, 0x39, 0x8F};
    CHECK(memcmp(u, a6, 16) == 0);

    struct snowflake_uuid_parts d;
    uint8_t w[16];
    CHECK_EQ_INT(snowflake_uuid_parse(A6_TEXT, strlen(A6_TEXT), w), LEAF_OK);
    CHECK(memcmp(u, w, 16) == 0);
    CHECK_EQ_INT(snowflake_uuid_decode(&s, w, &d), LEAF_OK);
    CHECK(d.unix_ms == A6_MS && d.counter == 0xCC3 && d.worker_id == 0x18C &&
          d.datacenter_id == 0 && d.random == UINT64_C(0x4DC0C0C07398F));
    CHECK_EQ_INT(snowflake_uuid_parse("017F22E2-79B0-7CC3-98C4-DC0C0C07398F", 36, w), LEAF_OK);
    CHECK(memcmp(u, w, 16) == 0);
}

static void test_parse_and_decode_errors(void) {
    uint8_t u[16];
    struct snowflake_uuid_shape s;
    struct snowflake_uuid_parts d;
    struct snowflake_layout l;
    snowflake_layout_default(&l);
    snowflake_uuid_shape(&l, &s);
    CHECK_EQ_INT(snowflake_uuid_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398", 35, u), LEAF_EINVAL);
    CHECK_EQ_INT(snowflake_uuid_parse("017f22e2x79b0-7cc3-98c4-dc0c0c07398f", 36, u), LEAF_EINVAL);
    CHECK_EQ_INT(snowflake_uuid_parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398g", 36, u), LEAF_EINVAL);
    /* version 4 and the NCS variant are not leafd's */
    CHECK_EQ_INT(snowflake_uuid_parse("017f22e2-79b0-4cc3-98c4-dc0c0c07398f", 36, u), LEAF_OK);
    CHECK_EQ_INT(snowflake_uuid_decode(&s, u, &d), LEAF_EINVAL);
    CHECK_EQ_INT(snowflake_uuid_parse("017f22e2-79b0-7cc3-58c4-dc0c0c07398f", 36, u), LEAF_OK);
    CHECK_EQ_INT(snowflake_uuid_decode(&s, u, &d), LEAF_EINVAL);
    /* an ID the layout never issues */
    CHECK_EQ_INT(snowflake_uuid_from_id(&l, SNOWFLAKE_DEFAULT_EPOCH, -1, 0, u), LEAF_ERANGE);
    /* a time past 2^48 ms: a 63-bit time field can hold one */
    struct snowflake_layout wide;
    const char *text = "time:61,worker:1,sequence:1";
    char reason[SNOWFLAKE_REASON_MAX];
    CHECK_EQ_INT(snowflake_layout_parse(&wide, text, strlen(text), reason, sizeof(reason)),
                 LEAF_OK);
    CHECK_EQ_INT(snowflake_uuid_from_id(&wide, 0, INT64_C(1) << 52, 0, u), LEAF_ERANGE);
}

/* Every UUID of a run is version 7, RFC variant, strictly above the last, and decodes to its
 * snowflake ID's parts. */
struct run {
    struct snowflake_layout l;
    struct snowflake_uuid_shape s;
    uint8_t last[16];
    int have_last, bad;
    long n;
};

static void run_add(struct run *r, int64_t id, uint64_t random) {
    uint8_t u[16];
    struct snowflake_parts sp;
    struct snowflake_uuid_parts d;
    CHECK_EQ_INT(snowflake_uuid_from_id(&r->l, SNOWFLAKE_DEFAULT_EPOCH, id, random, u), LEAF_OK);
    CHECK_EQ_INT(snowflake_layout_decode(&r->l, id, SNOWFLAKE_DEFAULT_EPOCH, &sp), LEAF_OK);
    CHECK_EQ_INT(snowflake_uuid_decode(&r->s, u, &d), LEAF_OK);
    r->bad += (u[6] >> 4) != 7 || (u[8] >> 6) != 2;
    r->bad += d.unix_ms != sp.timestamp_ms || d.counter != sp.sequence ||
              d.worker_id != sp.worker_id || d.datacenter_id != sp.datacenter_id;
    r->bad += r->have_last && memcmp(r->last, u, 16) >= 0;
    memcpy(r->last, u, 16);
    r->have_last = 1;
    r->n++;
}

static void ascending_run(const char *layout_text, int64_t unit, int worker, int64_t dc) {
    struct run r = {.l = layout_of(layout_text)};
    char reason[SNOWFLAKE_REASON_MAX];
    CHECK_EQ_INT(snowflake_layout_set_unit(&r.l, unit, reason, sizeof(reason)), LEAF_OK);
    CHECK_EQ_INT(snowflake_layout_set_datacenter(&r.l, dc, reason, sizeof(reason)), LEAF_OK);
    snowflake_uuid_shape(&r.l, &r.s);
    struct snowflake_gen g;
    snowflake_gen_init_layout(&g, &r.l, SNOWFLAKE_DEFAULT_EPOCH, 99);
    snowflake_gen_set_worker(&g, worker);
    snowflake_gen_set_max_lead(&g, 5000);
    int batch = snowflake_gen_max_batch(&g) < 500 ? snowflake_gen_max_batch(&g) : 500;
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)batch), wait;
    uint64_t rnd = 0x9E3779B97F4A7C15ULL;
    int64_t now = NOW_2026;
    for (int step = 0; step < 400; step++) {
        /* the clock moves 1 ms a call, except one step back of 2 s at call 100 */
        now += step == 100 ? -2000 : 1;
        if (snowflake_gen_next(&g, now, ids, step % 3 ? 1 : batch, &wait) != LEAF_OK) {
            continue; /* a borrowed tick ahead: the next call goes on */
        }
        for (int i = 0; i < (step % 3 ? 1 : batch); i++) {
            rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
            run_add(&r, ids[i], rnd);
        }
    }
    free(ids);
    if (r.bad || r.n < 1000) {
        fprintf(stderr, "%s: %ld UUIDs, %d bad\n", layout_text, r.n, r.bad);
    }
    CHECK(r.bad == 0 && r.n >= 1000);
}

static void test_ascending_per_node(void) {
    ascending_run(SNOWFLAKE_DEFAULT_LAYOUT, 1, 1023, 0);
    ascending_run("time:41,datacenter:5,worker:5,sequence:12", 1, 9, 3);
    ascending_run("time:39,sequence:8,worker:16", 10, 40000, 0);
    ascending_run("time:31,worker:23,sequence:9", 1000, 5000000, 0);
    /* a counter wider than rand_a: its low bits lead rand_b */
    ascending_run("time:40,worker:3,sequence:20", 1, 5, 0);
}

static void test_nodes_never_share(void) {
    /* the same time, counter and random bits on two workers: different UUIDs */
    struct snowflake_layout l;
    snowflake_layout_default(&l);
    uint8_t a[16], b[16];
    int64_t rel = NOW_2026 - SNOWFLAKE_DEFAULT_EPOCH;
    CHECK_EQ_INT(
        snowflake_uuid_from_id(&l, SNOWFLAKE_DEFAULT_EPOCH, snowflake_id_make(rel, 1, 7), 42, a),
        LEAF_OK);
    CHECK_EQ_INT(
        snowflake_uuid_from_id(&l, SNOWFLAKE_DEFAULT_EPOCH, snowflake_id_make(rel, 2, 7), 42, b),
        LEAF_OK);
    CHECK(memcmp(a, b, 16) != 0);
}

/*
 * A UUIDv7 made elsewhere decodes too; snowflake_uuid_foreign says when it cannot be one of
 * leafd's for this layout (docs/id-shapes.md, "Decoding a UUID"): a time before the epoch or
 * ahead of the clock beyond the lead, a time not at a tick's start, a counter wider than the
 * sequence, another datacenter.
 */
static void test_foreign(void) {
    struct snowflake_layout l;
    struct snowflake_uuid_shape s;
    struct snowflake_uuid_parts d = {A6_MS, 0xCC3, 0x18C, 0, 0};
    snowflake_layout_default(&l);
    snowflake_uuid_shape(&l, &s);
    /* A6 (2022) fits the default layout: nothing says it is not leafd's */
    CHECK(snowflake_uuid_foreign(&l, &d, SNOWFLAKE_DEFAULT_EPOCH, NOW_2026, 5000) == NULL);
    const char *why = snowflake_uuid_foreign(&l, &d, NOW_2026, NOW_2026, 5000);
    CHECK(why != NULL && strstr(why, "before leafd.snowflake.epoch") != NULL);
    d.unix_ms = NOW_2026 + 60000;
    why = snowflake_uuid_foreign(&l, &d, SNOWFLAKE_DEFAULT_EPOCH, NOW_2026, 5000);
    CHECK(why != NULL && strstr(why, "ahead of this node's clock") != NULL);
    /* Sonyflake: 8-bit sequence at 10 ms ticks */
    l = layout_of("time:39,sequence:8,worker:16");
    CHECK_EQ_INT(snowflake_layout_set_unit(&l, 10, NULL, 0), LEAF_OK);
    d = (struct snowflake_uuid_parts){SNOWFLAKE_DEFAULT_EPOCH + 1000, 0xCC3, 7, 0, 0};
    why = snowflake_uuid_foreign(&l, &d, SNOWFLAKE_DEFAULT_EPOCH, NOW_2026, 5000);
    CHECK(why != NULL && strstr(why, "counter") != NULL);
    d.counter = 200;
    CHECK(snowflake_uuid_foreign(&l, &d, SNOWFLAKE_DEFAULT_EPOCH, NOW_2026, 5000) == NULL);
    d.unix_ms += 3; /* not the start of a 10 ms tick */
    why = snowflake_uuid_foreign(&l, &d, SNOWFLAKE_DEFAULT_EPOCH, NOW_2026, 5000);
    CHECK(why != NULL && strstr(why, "tick") != NULL);
    /* twitter: a datacenter field of another value */
    l = layout_of("time:41,datacenter:5,worker:5,sequence:12");
    CHECK_EQ_INT(snowflake_layout_set_datacenter(&l, 3, NULL, 0), LEAF_OK);
    d = (struct snowflake_uuid_parts){SNOWFLAKE_DEFAULT_EPOCH + 1000, 5, 7, 4, 0};
    why = snowflake_uuid_foreign(&l, &d, SNOWFLAKE_DEFAULT_EPOCH, NOW_2026, 5000);
    CHECK(why != NULL && strstr(why, "datacenter") != NULL);
}

int main(void) {
    TEST(test_rfc9562_a6_vector);
    TEST(test_parse_and_decode_errors);
    TEST(test_ascending_per_node);
    TEST(test_nodes_never_share);
    TEST(test_foreign);
    return unit_done();
}
