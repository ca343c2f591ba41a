/* The lease decisions of zk/zk_lease.c: slot data and names, slot choice,
 * the fence arithmetic, the clock-step switch, and a simulation of many
 * claims against an in-memory ZooKeeper checking that no two holders of a
 * slot ever issue in overlapping time windows. */
#include <stdlib.h>

#include "unit.h"
#include "zk_lease.h"

static uint64_t xorshift(void *ctx) {
    uint64_t *s = ctx;
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint64_t below(uint64_t *rng, uint64_t n) {
    return xorshift(rng) % n;
}

/* ----- slot data and names ----- */

static void test_data_round_trip(void) {
    struct zk_lease_data d = {1795335806892LL, "192.0.2.5", 8080, 0xdeadbeef01ULL}, p;
    char buf[ZK_LEASE_DATA_MAX];
    const char *why = "unset";
    size_t n = zk_lease_format_data(&d, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "{\"reserved\":1795335806892,\"ip\":\"192.0.2.5\",\"port\":8080,"
                      "\"token\":\"000000deadbeef01\"}");
    CHECK_EQ_INT(zk_lease_parse_data(buf, n, &p, &why), LEAF_OK);
    CHECK(why == NULL);
    CHECK_EQ_INT(p.reserved, d.reserved);
    CHECK_EQ_STR(p.ip, "192.0.2.5");
    CHECK_EQ_INT(p.port, 8080);
    CHECK(p.token == d.token);
    /* the largest exact value, and an ip that needs escaping */
    struct zk_lease_data big = {ZK_LEASE_MS_LIMIT - 1, "a\"b\\c\n", 1, UINT64_MAX};
    n = zk_lease_format_data(&big, buf, sizeof(buf));
    CHECK(n > 0);
    CHECK_EQ_INT(zk_lease_parse_data(buf, n, &p, &why), LEAF_OK);
    CHECK_EQ_INT(p.reserved, ZK_LEASE_MS_LIMIT - 1);
    CHECK_EQ_STR(p.ip, "a\"b\\c\n");
    CHECK(p.token == UINT64_MAX);
    /* only "reserved" is required */
    CHECK_EQ_INT(zk_lease_parse_data("{\"reserved\":0}", 14, &p, &why), LEAF_OK);
    CHECK_EQ_INT(p.reserved, 0);
    CHECK_EQ_INT(p.port, 0);
    /* refused to format */
    big.reserved = ZK_LEASE_MS_LIMIT;
    CHECK_EQ_INT(zk_lease_format_data(&big, buf, sizeof(buf)), 0);
    big.reserved = -1;
    CHECK_EQ_INT(zk_lease_format_data(&big, buf, sizeof(buf)), 0);
    CHECK_EQ_INT(zk_lease_format_data(&d, buf, 20), 0);
}

static void test_data_malformed(void) {
    static const struct {
        const char *json, *why;
    } bad[] = {
        {"", "not a JSON object"},
        {"[1]", "not a JSON object"},
        {"{\"reserved\":1", "not a JSON object"},
        {"{}", "no \"reserved\""},
        {"{\"reserved\":\"1700000000000\"}", "\"reserved\" is not an integer in [0, 2^53)"},
        {"{\"reserved\":-1}", "\"reserved\" is not an integer in [0, 2^53)"},
        {"{\"reserved\":1.5}", "\"reserved\" is not an integer in [0, 2^53)"},
        {"{\"reserved\":9007199254740992}", "\"reserved\" is not an integer in [0, 2^53)"},
        {"{\"reserved\":1e300}", "\"reserved\" is not an integer in [0, 2^53)"},
        {"{\"reserved\":null}", "\"reserved\" is not an integer in [0, 2^53)"},
        {"{\"reserved\":1,\"ip\":5}", "\"ip\" is not a string of at most 63 bytes"},
        {"{\"reserved\":1,\"port\":70000}", "\"port\" is not an integer in [0, 65535]"},
        {"{\"reserved\":1,\"port\":\"80\"}", "\"port\" is not an integer in [0, 65535]"},
        {"{\"reserved\":1,\"token\":\"12\"}", "\"token\" is not 16 lower-case hex digits"},
        {"{\"reserved\":1,\"token\":\"000000000000000g\"}",
         "\"token\" is not 16 lower-case hex digits"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct zk_lease_data p;
        const char *why = NULL;
        CHECK_EQ_INT(zk_lease_parse_data(bad[i].json, strlen(bad[i].json), &p, &why), LEAF_EINVAL);
        CHECK_EQ_STR(why, bad[i].why);
        CHECK_EQ_INT(p.reserved, -1);
    }
}

static void test_names(void) {
    struct zk_layout l;
    char path[ZK_PATH_MAX];
    int64_t slot = -1;
    CHECK_EQ_INT(zk_layout_init(&l, "my-leaf", "192.0.2.5", 8080), LEAF_OK);
    CHECK_EQ_STR(l.lease, "/snowflake/my-leaf/leaf_lease");
    CHECK_EQ_INT(zk_lease_slot_path(&l, 17, path, sizeof(path)), LEAF_OK);
    CHECK_EQ_STR(path, "/snowflake/my-leaf/leaf_lease/0000000017");
    CHECK_EQ_INT(zk_lease_owner_path(&l, 1023, path, sizeof(path)), LEAF_OK);
    CHECK_EQ_STR(path, "/snowflake/my-leaf/leaf_lease/0000001023/owner");
    CHECK_EQ_INT(zk_lease_slot_path(&l, -1, path, sizeof(path)), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_path(&l, 10000000000LL, path, sizeof(path)), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_path(&l, 1, path, 10), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_number("/snowflake/a-b/leaf_lease/0000000017", 1024, &slot),
                 LEAF_OK);
    CHECK_EQ_INT(slot, 17);
    CHECK_EQ_INT(zk_lease_slot_number("0000001023", 1024, &slot), LEAF_OK);
    CHECK_EQ_INT(slot, 1023);
    CHECK_EQ_INT(zk_lease_slot_number("0000001024", 1024, &slot), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_number("0017", 1024, &slot), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_number("00000000017", 1024, &slot), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_number("-000000017", 1024, &slot), LEAF_EINVAL);
    CHECK_EQ_INT(zk_lease_slot_number("owner", 1024, &slot), LEAF_EINVAL);
}

/* ----- slot choice ----- */

static struct zk_lease_choice choice(const struct zk_lease_slot *s, int n, int64_t nslots,
                                     uint64_t *rng) {
    struct zk_lease_choice c = {s, n, nslots, -1, -1, -1, 100000, 0, xorshift, rng};
    return c;
}

static struct zk_lease_slot slot_at(int64_t slot, int held, int64_t reserved) {
    struct zk_lease_slot s = {slot, 1, held, 0, reserved, -1};
    return s;
}

static void test_choose_cached(void) {
    uint64_t rng = 42;
    struct zk_lease_slot s[4] = {slot_at(0, 0, 100), slot_at(1, 0, 50000), slot_at(2, 1, 10),
                                 slot_at(3, 0, 200)};
    struct zk_lease_candidate out[8];
    struct zk_lease_choice c = choice(s, 4, 4, &rng);
    c.cache_slot = 1;
    c.cache_ms = 60000; /* the cache knows more than the slot: it is the floor */
    CHECK_EQ_INT(zk_lease_choose(&c, out, 8), 3);
    CHECK_EQ_INT(out[0].slot, 1);
    CHECK_EQ_INT(out[0].floor_ms, 60000);
    for (int i = 1; i < 3; i++) {
        CHECK(out[i].slot == 0 || out[i].slot == 3);
    }
    c.cache_slot = 2; /* held: not offered at all */
    int n = zk_lease_choose(&c, out, 8);
    CHECK_EQ_INT(n, 3);
    for (int i = 0; i < n; i++) {
        CHECK(out[i].slot != 2);
    }
    /* the cached slot was never created (or was deleted): its cache still counts */
    s[1].exists = 0;
    s[1].reserved = -1;
    c.cache_slot = 1;
    c.cache_ms = 7000;
    CHECK_EQ_INT(zk_lease_choose(&c, out, 8), 3);
    CHECK_EQ_INT(out[0].slot, 1);
    CHECK_EQ_INT(out[0].floor_ms, 7000);
    CHECK_EQ_INT(out[0].exists, 0);
    /* a cached slot that is not usable within max_wait_ms is left out */
    c.now_ms = 1000;
    c.max_wait_ms = 5000; /* usable: floor < 6000 */
    n = zk_lease_choose(&c, out, 8);
    CHECK_EQ_INT(n, 2);
    CHECK(out[0].slot != 1 && out[1].slot != 1);
}

/* Oldest first with randomness: over many seeds the first pick spreads over
 * the ZK_LEASE_SPREAD oldest free slots and never lands on a held one. */
static void test_choose_spread(void) {
    struct zk_lease_slot s[16];
    for (int i = 0; i < 16; i++) {
        s[i] = slot_at(i, i % 5 == 0, 1000 + 100 * i); /* 0, 5, 10, 15 held */
    }
    int first[16] = {0};
    for (uint64_t seed = 1; seed <= 4000; seed++) {
        uint64_t rng = seed * 0x9e3779b97f4a7c15ULL;
        struct zk_lease_candidate out[16];
        struct zk_lease_choice c = choice(s, 16, 16, &rng);
        int n = zk_lease_choose(&c, out, 16);
        CHECK_EQ_INT(n, 12);
        int seen[16] = {0};
        for (int i = 0; i < n; i++) {
            CHECK(out[i].slot % 5 != 0);
            CHECK(!seen[out[i].slot]);
            seen[out[i].slot] = 1;
            /* position i comes from the SPREAD oldest left: at most SPREAD - 1
             * younger slots were passed over before it */
            int older_later = 0;
            for (int j = i + 1; j < n; j++) {
                older_later += out[j].floor_ms < out[i].floor_ms;
            }
            CHECK(older_later < ZK_LEASE_SPREAD);
        }
        first[out[0].slot]++;
    }
    /* the four oldest free are 1, 2, 3, 4: each about a quarter */
    for (int i = 1; i <= 4; i++) {
        CHECK(first[i] > 800 && first[i] < 1200);
    }
    CHECK_EQ_INT(first[6] + first[7] + first[8] + first[9], 0);
}

static void test_choose_never_used_and_forever(void) {
    uint64_t rng = 7;
    /* 8 slots: 0..3 exist and are old but not as old as never-used ones;
     * 5 has a leaf_forever node with a timestamp far ahead: its floor. */
    struct zk_lease_slot s[5] = {slot_at(0, 0, 1000),
                                 slot_at(1, 0, 1000),
                                 slot_at(2, 0, 1000),
                                 slot_at(3, 0, 1000),
                                 {5, 0, 0, 0, -1, 90000}};
    int first_zero = 0, first_four = 0;
    for (int round = 0; round < 1000; round++) {
        struct zk_lease_candidate out[8];
        struct zk_lease_choice c = choice(s, 5, 8, &rng);
        int n = zk_lease_choose(&c, out, 8);
        CHECK_EQ_INT(n, 8);
        /* the first is drawn among the four oldest: the three never used
         * (floor 0) and one of 0..3 (floor 1000); slot 5 sorts last, so it
         * can only be drawn once fewer than SPREAD slots are left */
        CHECK(out[0].slot != 5);
        first_zero += out[0].floor_ms == 0;
        first_four += out[0].slot == 4;
        for (int i = 0; i < 8 - ZK_LEASE_SPREAD; i++) {
            CHECK(out[i].slot != 5);
        }
        for (int i = 0; i < 8; i++) {
            CHECK(out[i].exists == (out[i].slot <= 3));
            CHECK_EQ_INT(out[i].floor_ms, out[i].slot <= 3 ? 1000 : out[i].slot == 5 ? 90000 : 0);
        }
    }
    CHECK(first_zero > 650 && first_zero < 850); /* 3/4 */
    CHECK(first_four > 170 && first_four < 330); /* 1/4 */
    /* with a clock below 90000 - max_wait, slot 5 is not usable */
    struct zk_lease_candidate out[8];
    struct zk_lease_choice c = choice(s, 5, 8, &rng);
    c.now_ms = 50000;
    c.max_wait_ms = 10000;
    CHECK_EQ_INT(zk_lease_choose(&c, out, 8), 7);
}

static void test_choose_exhausted_and_invalid(void) {
    uint64_t rng = 3;
    struct zk_lease_slot s[4] = {slot_at(0, 1, 0), slot_at(1, 1, 0), slot_at(2, 1, 0),
                                 slot_at(3, 1, 0)};
    struct zk_lease_candidate out[4];
    struct zk_lease_choice c = choice(s, 4, 4, &rng);
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), 0);
    s[2].held = 0;
    s[2].bad = 1; /* unreadable data: never claimed */
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), 0);
    s[2].bad = 0;
    c.exclude = 2;
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), 0);
    c.exclude = -1;
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), 1);
    s[1].slot = 2; /* duplicate */
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), LEAF_EINVAL);
    s[1].slot = 4; /* beyond nslots */
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), LEAF_EINVAL);
    s[1].slot = 1;
    c.nslots = ZK_LEASE_MAX_SLOTS + 1;
    CHECK_EQ_INT(zk_lease_choose(&c, out, 4), LEAF_EINVAL);
    c.nslots = 4;
    CHECK_EQ_INT(zk_lease_choose(&c, out, 0), 0);
}

/* A lost race moves on: the caller walks the list, and the list holds every
 * free slot once, oldest first within the spread window. */
static void test_lost_race_order(void) {
    uint64_t rng = 11;
    struct zk_lease_slot s[6];
    for (int i = 0; i < 6; i++) {
        s[i] = slot_at(i, 0, 6000 - 1000 * i); /* 5 is the oldest */
    }
    struct zk_lease_candidate out[6];
    struct zk_lease_choice c = choice(s, 6, 6, &rng);
    int n = zk_lease_choose(&c, out, 6);
    CHECK_EQ_INT(n, 6);
    int owner[6] = {1, 1, 0, 0, 0, 0}; /* meanwhile taken by others: tries until 2..5 */
    int got = -1;
    for (int i = 0; i < n && got < 0; i++) {
        if (!owner[out[i].slot]) {
            got = (int)out[i].slot;
        }
    }
    CHECK(got >= 2);
    CHECK(out[0].slot >= 2); /* the oldest four are 2..5 */
}

/* ----- fence arithmetic ----- */

/* A new holder's floor, as zk_lease_begin() sets it (reserved -1: the slot does not exist). */
static int64_t floor_of(int64_t reserved, int64_t forever_ms, int64_t known_ms) {
    struct zk_lease_hold h;
    struct zk_lease_data d = {reserved, "", 0, 0};
    CHECK_EQ_INT(zk_lease_begin(&h, 3, 1, 7, &d, forever_ms, known_ms, 0, INT64_MAX / 2), LEAF_OK);
    return h.floor_ms;
}

static void test_floor(void) {
    CHECK_EQ_INT(floor_of(-1, -1, -1), 0);      /* never used: 0 */
    CHECK_EQ_INT(floor_of(500, -1, -1), 500);   /* the slot */
    CHECK_EQ_INT(floor_of(-1, 9000, -1), 9000); /* leaf_forever, never used */
    CHECK_EQ_INT(floor_of(500, 9000, -1), 9000);
    CHECK_EQ_INT(floor_of(500, 9000, 12000), 12000); /* the local cache */
    CHECK_EQ_INT(floor_of(20000, 9000, 12000), 20000);
}

static struct zk_lease_hold held(int64_t reserved, int64_t now) {
    struct zk_lease_hold h;
    struct zk_lease_data d = {reserved, "", 0, 0};
    memset(&h, 0, sizeof(h));
    CHECK_EQ_INT(zk_lease_begin(&h, 3, 0xabc, 7, &d, -1, -1, now, 10000), LEAF_OK);
    return h;
}

static void test_begin(void) {
    struct zk_lease_hold h;
    struct zk_lease_data d = {50000, "", 0, 0};
    CHECK_EQ_INT(zk_lease_begin(&h, 3, 1, 7, &d, 80000, 60000, 70000, 10000), LEAF_ECLOCK);
    CHECK_EQ_INT(zk_lease_begin(&h, 3, 1, 7, &d, 79999, 60000, 70000, 10000), LEAF_OK);
    CHECK_EQ_INT(h.floor_ms, 79999);
    CHECK_EQ_INT(h.acked_ms, 79999); /* nothing issuable before the first ack */
    CHECK_EQ_INT(h.version, 7);
    CHECK_EQ_INT(h.state, ZK_LEASE_HELD);
    CHECK_EQ_INT(zk_lease_begin(&h, 3, 1, 7, &d, -1, -1, 50000, 0), LEAF_ECLOCK);
    CHECK_EQ_INT(zk_lease_begin(&h, 3, 1, 7, &d, -1, -1, 50001, 0), LEAF_OK);
}

static void test_reservation_writes(void) {
    struct zk_lease_hold h = held(1000, 2000);
    CHECK(zk_lease_should_write(&h, 2000, 5000)); /* first reservation */
    int64_t r = zk_lease_next_reserved(&h, 2000, 5000);
    CHECK_EQ_INT(r, 7000);
    zk_lease_write_sent(&h, r);
    CHECK(!zk_lease_should_write(&h, 2000, 5000)); /* one in flight */
    CHECK_EQ_INT(zk_lease_write_done(&h, ZK_LEASE_WRITE_OK, 8), ZK_LEASE_RAISE_CEILING);
    CHECK_EQ_INT(h.acked_ms, 7000);
    CHECK_EQ_INT(h.version, 8);
    CHECK(!zk_lease_should_write(&h, 4500, 5000)); /* 2500 left: half */
    CHECK(zk_lease_should_write(&h, 4501, 5000));
    /* the clock stepped back: the reservation is never lowered */
    CHECK_EQ_INT(zk_lease_next_reserved(&h, 1000, 5000), 7000);
    CHECK(!zk_lease_should_write(&h, 1000, 5000));
    /* bad version: fenced; the ceiling stays and nothing extends it */
    zk_lease_write_sent(&h, zk_lease_next_reserved(&h, 4600, 5000));
    CHECK_EQ_INT(zk_lease_write_done(&h, ZK_LEASE_WRITE_BADVERSION, 0), ZK_LEASE_LOST_SLOT);
    CHECK_EQ_INT(h.state, ZK_LEASE_LOST);
    CHECK_EQ_INT(h.acked_ms, 7000);
    CHECK(!zk_lease_should_write(&h, 6000, 5000));
    /* no node: likewise */
    h = held(1000, 2000);
    zk_lease_write_sent(&h, 7000);
    CHECK_EQ_INT(zk_lease_write_done(&h, ZK_LEASE_WRITE_NONODE, 0), ZK_LEASE_LOST_SLOT);
    CHECK_EQ_INT(h.acked_ms, 1000);
    /* an answer arriving after the session expired changes nothing */
    h = held(1000, 2000);
    zk_lease_write_sent(&h, 7000);
    zk_lease_lose(&h);
    CHECK_EQ_INT(zk_lease_write_done(&h, ZK_LEASE_WRITE_OK, 8), ZK_LEASE_LOST_SLOT);
    CHECK_EQ_INT(h.acked_ms, 1000);
}

static void test_resync(void) {
    struct zk_lease_hold h = held(1000, 2000);
    struct zk_lease_data same = {1000, "", 0, 0xabc}, mine = {7000, "", 0, 0xabc},
                         other = {7000, "", 0, 0x123};
    /* not applied: the same version; the write is sent again */
    zk_lease_write_sent(&h, 7000);
    CHECK_EQ_INT(zk_lease_write_done(&h, ZK_LEASE_WRITE_UNKNOWN, 0), ZK_LEASE_RESYNC_NEEDED);
    CHECK(!zk_lease_should_write(&h, 2000, 5000));
    CHECK_EQ_INT(zk_lease_resync(&h, 7, &same), ZK_LEASE_KEEP);
    CHECK(zk_lease_should_write(&h, 2000, 5000));
    CHECK_EQ_INT(h.acked_ms, 1000);
    /* applied: one version more with this claim's token and value */
    zk_lease_write_sent(&h, 7000);
    zk_lease_write_done(&h, ZK_LEASE_WRITE_UNKNOWN, 0);
    CHECK_EQ_INT(zk_lease_resync(&h, 8, &mine), ZK_LEASE_RAISE_CEILING);
    CHECK_EQ_INT(h.acked_ms, 7000);
    CHECK_EQ_INT(h.version, 8);
    /* someone else's write: lost */
    zk_lease_write_sent(&h, 9000);
    zk_lease_write_done(&h, ZK_LEASE_WRITE_UNKNOWN, 0);
    CHECK_EQ_INT(zk_lease_resync(&h, 9, &other), ZK_LEASE_LOST_SLOT);
    CHECK_EQ_INT(h.acked_ms, 7000);
    /* two versions on, even with our token: lost (not provably ours alone) */
    h = held(1000, 2000);
    zk_lease_write_sent(&h, 7000);
    zk_lease_write_done(&h, ZK_LEASE_WRITE_UNKNOWN, 0);
    CHECK_EQ_INT(zk_lease_resync(&h, 9, &mine), ZK_LEASE_LOST_SLOT);
    /* the slot is gone */
    h = held(1000, 2000);
    zk_lease_write_sent(&h, 7000);
    zk_lease_write_done(&h, ZK_LEASE_WRITE_UNKNOWN, 0);
    CHECK_EQ_INT(zk_lease_resync(&h, 0, NULL), ZK_LEASE_LOST_SLOT);
}

/* After expiry the node reclaims; even the same slot, read again, gives a
 * floor at or above the old ceiling, because every acknowledged write is in
 * the data it reads. */
static void test_reclaim_after_expiry(void) {
    struct zk_lease_hold h = held(1000, 2000);
    zk_lease_write_sent(&h, 7000);
    zk_lease_write_done(&h, ZK_LEASE_WRITE_OK, 8);
    zk_lease_lose(&h); /* session expired */
    CHECK_EQ_INT(h.state, ZK_LEASE_LOST);
    CHECK_EQ_INT(h.acked_ms, 7000);
    struct zk_lease_hold again;
    struct zk_lease_data read = {7000, "", 0, 0xabc}; /* nobody took it meanwhile */
    CHECK_EQ_INT(zk_lease_begin(&again, 3, 0xdef, 8, &read, -1, h.acked_ms, 3000, 10000), LEAF_OK);
    CHECK(again.floor_ms >= h.acked_ms);
}

/* ----- clock step ----- */

static void test_step_classify(void) {
    CHECK_EQ_INT(zk_lease_step_classify(10000, 9000, 1000), ZK_LEASE_STEP_NONE);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 10000, 1000), ZK_LEASE_STEP_NONE);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 10001, 1000), ZK_LEASE_STEP_WAIT);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 10005, 1000), ZK_LEASE_STEP_WAIT);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 10006, 1000), ZK_LEASE_STEP_REFUSE);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 11000, 1000), ZK_LEASE_STEP_REFUSE);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 11001, 1000), ZK_LEASE_STEP_SWITCH);
    CHECK_EQ_INT(zk_lease_step_classify(10000, 10003, 2), ZK_LEASE_STEP_WAIT);
}

static void test_switch_choose(void) {
    uint64_t rng = 5;
    /* current slot 0 (held by us), clock 100000 stepped back from 700000 */
    struct zk_lease_slot s[4] = {slot_at(0, 1, 705000), slot_at(1, 0, 100000), slot_at(2, 0, 99999),
                                 slot_at(3, 0, 400000)};
    struct zk_lease_candidate out[4];
    struct zk_lease_choice c = choice(s, 4, 4, &rng);
    c.now_ms = 100000;
    c.exclude = 0;
    c.max_wait_ms = 10000; /* ignored: a switch needs floor < now */
    int n = -1;
    CHECK_EQ_INT(zk_lease_switch_choose(&c, 700000, 1000, out, 4, &n), ZK_LEASE_STEP_SWITCH);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(out[0].slot, 2);
    /* at the boundary: no switch */
    CHECK_EQ_INT(zk_lease_switch_choose(&c, 101000, 1000, out, 4, &n), ZK_LEASE_STEP_REFUSE);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(zk_lease_switch_choose(&c, 101001, 1000, out, 4, &n), ZK_LEASE_STEP_SWITCH);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(zk_lease_switch_choose(&c, 100005, 1000, out, 4, &n), ZK_LEASE_STEP_WAIT);
    CHECK_EQ_INT(n, 0);
    /* no suitable slot: switch wanted, none offered (behave as REFUSE) */
    s[2].reserved = 100000;
    CHECK_EQ_INT(zk_lease_switch_choose(&c, 700000, 1000, out, 4, &n), ZK_LEASE_STEP_SWITCH);
    CHECK_EQ_INT(n, 0);
}

/* ----- simulation ----- */

/*
 * An in-memory ZooKeeper (versioned sets, ephemeral owners) and up to 8 live
 * nodes driven by random events: claims, reservation writes (some answered
 * "unknown", applied or not), clock steps back and forth, switches,
 * partitions with session expiry, expiries, graceful stops and crashes.
 * Each time a node's generator takes a hold, a window records what it issued
 * from that slot. The fence must keep every slot's windows apart.
 */
#define SIM_SLOTS 16
#define SIM_NODES 8
#define SIM_CLAIMS 2000
#define SIM_RESERVE 5000
#define SIM_SWITCH_AFTER 1000
#define SIM_MAX_WAIT 10000
#define SIM_WINDOWS 20000
#define SIM_T0 1700000000000LL

struct sim_slot {
    int exists;
    int64_t reserved;
    int32_t version;
    uint64_t token;
    int owner; /* session id, -1 none */
};

struct sim_window {
    int64_t slot, floor_ms, ceiling_ms; /* ceiling: the highest acknowledged */
    int64_t lo, hi;                     /* timestamps issued, -1 none */
};

struct sim_node {
    int alive, partitioned, session;
    int64_t offset;
    struct zk_lease_hold h;
    int win; /* the generator's window, -1 none */
    int64_t cache_slot, cache_ms;
};

struct sim {
    uint64_t rng;
    int64_t t;
    struct sim_slot zk[SIM_SLOTS];
    int64_t forever[SIM_SLOTS];
    struct sim_node node[SIM_NODES];
    struct sim_window win[SIM_WINDOWS];
    int nwin, claims, sessions;
    int switches, no_switch, races, fenced, resyncs, expiries, issued, rogue;
    int64_t pool_slot, pool_ms; /* a dead node's cache, for a restart to reuse */
};

static int64_t sim_now(const struct sim *s, const struct sim_node *n) {
    return s->t + n->offset;
}

static enum zk_lease_write_rc sim_set(struct sim *s, int64_t slot, int32_t version, int64_t value,
                                      uint64_t token, int32_t *new_version) {
    struct sim_slot *z = &s->zk[slot];
    if (!z->exists) {
        return ZK_LEASE_WRITE_NONODE;
    }
    if (z->version != version) {
        return ZK_LEASE_WRITE_BADVERSION;
    }
    z->reserved = value;
    z->token = token;
    *new_version = ++z->version;
    return ZK_LEASE_WRITE_OK;
}

static void sim_raise(struct sim *s, struct sim_node *n) {
    if (n->win >= 0 && s->win[n->win].slot == n->h.slot) {
        s->win[n->win].ceiling_ms = n->h.acked_ms;
    }
}

/* One reservation write; the answer is sometimes lost (applied or not). */
static void sim_write(struct sim *s, struct sim_node *n) {
    int64_t now = sim_now(s, n);
    if (n->h.state == ZK_LEASE_RESYNC && !n->partitioned) {
        struct sim_slot *z = &s->zk[n->h.slot];
        struct zk_lease_data d = {z->reserved, "", 0, z->token};
        s->resyncs++;
        if (zk_lease_resync(&n->h, z->version, z->exists ? &d : NULL) == ZK_LEASE_RAISE_CEILING) {
            sim_raise(s, n);
        }
    }
    if (!zk_lease_should_write(&n->h, now, SIM_RESERVE)) {
        return;
    }
    int64_t r = zk_lease_next_reserved(&n->h, now, SIM_RESERVE);
    int32_t v = 0;
    zk_lease_write_sent(&n->h, r);
    enum zk_lease_write_rc rc = ZK_LEASE_WRITE_UNKNOWN;
    if (!n->partitioned) {
        s->rogue += n->session < 0;
        rc = sim_set(s, n->h.slot, n->h.version, r, n->h.token, &v);
        if (below(&s->rng, 10) == 0) {
            rc = ZK_LEASE_WRITE_UNKNOWN;
        }
    }
    enum zk_lease_action a = zk_lease_write_done(&n->h, rc, v);
    if (a == ZK_LEASE_RAISE_CEILING) {
        sim_raise(s, n);
    }
    s->fenced += a == ZK_LEASE_LOST_SLOT;
}

static void sim_snapshot(struct sim *s, struct zk_lease_slot *out, int *n) {
    *n = 0;
    for (int i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *z = &s->zk[i];
        if (z->exists || s->forever[i] >= 0) {
            /* a stale view now and then: a held slot looks free */
            int held = z->owner >= 0 && below(&s->rng, 4) != 0;
            out[(*n)++] = (struct zk_lease_slot){i, z->exists, held, 0, z->reserved, s->forever[i]};
        }
    }
}

/* Tries the candidates in order; 1 when one was claimed and is now served. */
static int sim_try(struct sim *s, struct sim_node *n, const struct zk_lease_candidate *cand, int k,
                   int64_t max_wait) {
    int64_t now = sim_now(s, n);
    for (int i = 0; i < k; i++) {
        struct sim_slot *z = &s->zk[cand[i].slot];
        if (!z->exists) {
            *z = (struct sim_slot){1, cand[i].floor_ms, 0, 0, -1};
        }
        if (z->owner >= 0) {
            s->races++;
            continue;
        }
        z->owner = n->session;
        struct zk_lease_data d = {z->reserved, "", 0, z->token};
        int64_t known = cand[i].slot == n->cache_slot ? n->cache_ms : -1;
        struct zk_lease_hold h;
        if (zk_lease_begin(&h, cand[i].slot, xorshift(&s->rng) | 1, z->version, &d,
                           s->forever[cand[i].slot], known, now, max_wait) != LEAF_OK) {
            z->owner = -1;
            continue;
        }
        int32_t v = 0;
        int64_t r = zk_lease_next_reserved(&h, now, SIM_RESERVE);
        zk_lease_write_sent(&h, r);
        enum zk_lease_write_rc rc = sim_set(s, h.slot, h.version, r, h.token, &v);
        if (zk_lease_write_done(&h, rc, v) != ZK_LEASE_RAISE_CEILING || s->nwin == SIM_WINDOWS) {
            z->owner = -1;
            continue;
        }
        /* the generator moves to the new slot; the old owner is deleted, data kept */
        if (n->h.state != ZK_LEASE_NONE && s->zk[n->h.slot].owner == n->session) {
            s->zk[n->h.slot].owner = -1;
        }
        n->h = h;
        n->win = s->nwin++;
        s->win[n->win] = (struct sim_window){h.slot, h.floor_ms, h.acked_ms, -1, -1};
        n->cache_slot = h.slot;
        n->cache_ms = h.acked_ms;
        s->claims++;
        return 1;
    }
    return 0;
}

static int sim_claim(struct sim *s, struct sim_node *n) {
    struct zk_lease_slot snap[SIM_SLOTS];
    struct zk_lease_candidate cand[SIM_SLOTS];
    int ns;
    sim_snapshot(s, snap, &ns);
    struct zk_lease_choice c = {snap,        ns,     SIM_SLOTS,     n->cache_slot,
                                n->cache_ms, -1,     sim_now(s, n), SIM_MAX_WAIT,
                                xorshift,    &s->rng};
    int k = zk_lease_choose(&c, cand, SIM_SLOTS);
    CHECK(k >= 0);
    return k > 0 && sim_try(s, n, cand, k, SIM_MAX_WAIT);
}

static void sim_step_back(struct sim *s, struct sim_node *n) {
    n->offset -= 10 + (int64_t)below(&s->rng, 120000);
    if (n->win < 0 || n->partitioned || n->session < 0 || n->h.state != ZK_LEASE_HELD) {
        return;
    }
    const struct sim_window *w = &s->win[n->win];
    int64_t high = w->hi > w->floor_ms ? w->hi : w->floor_ms;
    struct zk_lease_slot snap[SIM_SLOTS];
    struct zk_lease_candidate cand[SIM_SLOTS];
    int ns, k;
    sim_snapshot(s, snap, &ns);
    struct zk_lease_choice c = {snap,          ns,           SIM_SLOTS, -1,     -1, n->h.slot,
                                sim_now(s, n), SIM_MAX_WAIT, xorshift,  &s->rng};
    int step = zk_lease_switch_choose(&c, high, SIM_SWITCH_AFTER, cand, SIM_SLOTS, &k);
    if (step != ZK_LEASE_STEP_SWITCH) {
        return;
    }
    for (int i = 0; i < k; i++) {
        CHECK(cand[i].floor_ms < sim_now(s, n));
    }
    if (k > 0 && sim_try(s, n, cand, k, 0)) {
        s->switches++;
    } else {
        s->no_switch++;
    }
}

static void sim_issue(struct sim *s, struct sim_node *n) {
    if (n->win < 0) {
        return;
    }
    struct sim_window *w = &s->win[n->win];
    int64_t now = sim_now(s, n);
    /* the generator: above the floor and the last issued, below the ceiling */
    if (now > w->floor_ms && now < w->ceiling_ms && now >= w->hi) {
        w->lo = w->lo < 0 ? now : w->lo;
        w->hi = now;
        s->issued++;
    }
}

/* The session ends: ZooKeeper drops the owner; the node notices unless cut off. */
static void sim_expire(struct sim *s, struct sim_node *n, int noticed) {
    if (n->h.state != ZK_LEASE_NONE && s->zk[n->h.slot].owner == n->session) {
        s->zk[n->h.slot].owner = -1;
    }
    n->session = -1;
    s->expiries++;
    if (noticed) {
        zk_lease_lose(&n->h);
        n->session = s->sessions++;
        sim_claim(s, n);
    }
}

static void sim_stop(struct sim *s, struct sim_node *n, int graceful) {
    if (n->h.state != ZK_LEASE_NONE && s->zk[n->h.slot].owner == n->session) {
        s->zk[n->h.slot].owner = -1; /* graceful: deleted; crash: expired later, same here */
    }
    if (graceful || below(&s->rng, 2)) {
        s->pool_slot = n->cache_slot;
        s->pool_ms = n->cache_ms;
    }
    n->alive = 0;
}

static void sim_start(struct sim *s, struct sim_node *n) {
    memset(n, 0, sizeof(*n));
    n->alive = 1;
    n->session = s->sessions++;
    n->win = -1;
    n->cache_slot = n->cache_ms = -1;
    if (below(&s->rng, 2)) {
        n->cache_slot = s->pool_slot; /* a restart with the same data dir */
        n->cache_ms = s->pool_ms;
    }
    if (!sim_claim(s, n)) {
        n->alive = 0; /* no slot: start-up refused */
    }
}

static void sim_event(struct sim *s, struct sim_node *n) {
    uint64_t r = below(&s->rng, 100);
    if (r < 50) {
        sim_issue(s, n);
    } else if (r < 75) {
        sim_write(s, n);
    } else if (r < 80) {
        sim_step_back(s, n);
    } else if (r < 84) {
        /* a forward step, or NTP setting the clock right again */
        n->offset = below(&s->rng, 2) ? 0 : n->offset + (int64_t)below(&s->rng, 90000);
    } else if (r < 87 && !n->partitioned) {
        n->partitioned = 1;
        if (below(&s->rng, 2)) {
            sim_expire(s, n, 0);
        }
    } else if (r < 90 && n->partitioned) {
        /* Healed. Half the time the glue "forgets" to notice that its
         * session expired and keeps writing with its old version: only the
         * version in the data can stop it. */
        n->partitioned = 0;
        if (n->session < 0 && below(&s->rng, 2)) {
            sim_expire(s, n, 1);
        }
    } else if (r < 93 && !n->partitioned) {
        sim_expire(s, n, 1);
    } else if (r < 96) {
        sim_stop(s, n, 1);
    } else if (r < 98) {
        sim_stop(s, n, 0);
    }
}

/* Every slot's windows (floor, ceiling] are disjoint, and so are the
 * timestamps actually issued; none at or below a leaf_forever timestamp. */
static void sim_verify(const struct sim *s) {
    for (int a = 0; a < s->nwin; a++) {
        const struct sim_window *x = &s->win[a];
        CHECK(x->lo < 0 || (x->lo > x->floor_ms && x->hi < x->ceiling_ms));
        CHECK(x->lo < 0 || x->lo > s->forever[x->slot]);
        for (int b = a + 1; b < s->nwin; b++) {
            const struct sim_window *y = &s->win[b];
            if (x->slot != y->slot || x->ceiling_ms == x->floor_ms ||
                y->ceiling_ms == y->floor_ms) {
                continue;
            }
            CHECK(x->ceiling_ms <= y->floor_ms || y->ceiling_ms <= x->floor_ms);
            CHECK(x->lo < 0 || y->lo < 0 || x->hi < y->lo || y->hi < x->lo);
        }
    }
}

static void sim_run(uint64_t seed) {
    static struct sim s;
    memset(&s, 0, sizeof(s));
    s.rng = seed;
    s.t = SIM_T0;
    s.pool_slot = s.pool_ms = -1;
    for (int i = 0; i < SIM_SLOTS; i++) {
        s.zk[i].owner = -1;
        s.forever[i] = -1;
    }
    /* migration: worker IDs 0..2 ran in forever mode up to a little ahead */
    s.forever[0] = SIM_T0 + 3000;
    s.forever[1] = SIM_T0 + 60000;
    s.forever[2] = SIM_T0 - 1000;
    for (long step = 0; s.claims < SIM_CLAIMS && step < 2000000; step++) {
        s.t += 1 + (int64_t)below(&s.rng, 400);
        struct sim_node *n = &s.node[below(&s.rng, SIM_NODES)];
        if (!n->alive) {
            sim_start(&s, n);
        } else {
            sim_event(&s, n);
        }
    }
    CHECK(s.claims >= SIM_CLAIMS);
    CHECK(s.switches > 0 && s.no_switch > 0 && s.races > 0 && s.fenced > 0 && s.resyncs > 0 &&
          s.rogue > 0);
    sim_verify(&s);
    printf("sim seed %" PRIu64 ": %d claims, %d windows, %d issued, %d switches (%d without a "
           "suitable slot), %d races lost, %d fenced, %d resyncs, %d expiries, %d writes after an "
           "unnoticed expiry\n",
           seed, s.claims, s.nwin, s.issued, s.switches, s.no_switch, s.races, s.fenced, s.resyncs,
           s.expiries, s.rogue);
}

static void test_simulation(void) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
        sim_run(seed * 0x2545f4914f6cdd1dULL);
    }
}

int main(void) {
    TEST(test_data_round_trip);
    TEST(test_data_malformed);
    TEST(test_names);
    TEST(test_choose_cached);
    TEST(test_choose_spread);
    TEST(test_choose_never_used_and_forever);
    TEST(test_choose_exhausted_and_invalid);
    TEST(test_lost_race_order);
    TEST(test_floor);
    TEST(test_begin);
    TEST(test_reservation_writes);
    TEST(test_resync);
    TEST(test_reclaim_after_expiry);
    TEST(test_step_classify);
    TEST(test_switch_choose);
    TEST(test_simulation);
    return unit_done();
}
