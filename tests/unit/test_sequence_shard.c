/*
 * Unit tests of the sharded sequences' slot assignment (sequence/sequence_shard.c):
 * balance, only the slots that must move move on a join or a leave, contiguity,
 * owner lookup, the text form in ZooKeeper, and the key slot that places a sequence
 * (sequence/sequence_keyslot.c).
 */
#include <stdlib.h>

#include "sequence_keyslot.h"
#include "sequence_shard.h"
#include "unit.h"

#define S SEQUENCE_SHARD_SLOTS

/* The slots node owns in m. */
static int owned(const struct sequence_shard_map *m, long long node) {
    int c = 0;
    for (int i = 0; i < m->n; i++) {
        c += m->r[i].owner == node ? m->r[i].end - m->r[i].start + 1 : 0;
    }
    return c;
}

/* Every slot owned by one of live, each node within one slot of S/N. */
static int balanced(const struct sequence_shard_map *m, const long long *live, int n) {
    int total = 0;
    for (int i = 0; i < n; i++) {
        int c = owned(m, live[i]);
        if (c != S / n && c != S / n + 1) {
            return 0;
        }
        total += c;
    }
    return total == S;
}

static void test_first_assignment(void) {
    struct sequence_shard_map a, b;
    sequence_shard_init(&a);
    CHECK_EQ_INT(sequence_shard_owner(&a, 0), -1);
    long long live[3] = {12, 7, 30};
    CHECK_EQ_INT(sequence_shard_rebalance(&a, live, 3, &b), S);
    CHECK(balanced(&b, live, 3));
    CHECK_EQ_INT(b.n, 3); /* one contiguous range each */
    CHECK_EQ_INT(b.epoch, 1);
    CHECK_EQ_INT(sequence_shard_owner(&b, 0), 7); /* lowest id first */
    CHECK_EQ_INT(sequence_shard_owner(&b, S - 1), 30);
    CHECK_EQ_INT(sequence_shard_owner(&b, S), -1);
    /* nothing changed: same map, same epoch */
    struct sequence_shard_map c;
    CHECK_EQ_INT(sequence_shard_rebalance(&b, live, 3, &c), 0);
    CHECK_EQ_INT(c.epoch, 1);
    CHECK_EQ_INT(c.n, 3);
}

static void test_balanced_for_any_n(void) {
    long long live[SEQUENCE_SHARD_MAX_NODES];
    for (int n = 1; n <= 16; n++) {
        struct sequence_shard_map a, b;
        sequence_shard_init(&a);
        for (int i = 0; i < n; i++) {
            live[i] = 100 + i;
        }
        sequence_shard_rebalance(&a, live, n, &b);
        CHECK(balanced(&b, live, n));
        CHECK_EQ_INT(b.n, n);
    }
}

static void test_join_takes_only_from_the_richest(void) {
    struct sequence_shard_map a, b, c;
    sequence_shard_init(&a);
    long long two[2] = {1, 2}, three[3] = {1, 2, 3};
    sequence_shard_rebalance(&a, two, 2, &b);
    int moved = sequence_shard_rebalance(&b, three, 3, &c);
    CHECK(balanced(&c, three, 3));
    /* exactly what node 3 gains moves, nothing between 1 and 2 */
    CHECK_EQ_INT(moved, owned(&c, 3));
    for (int s = 0; s < S; s++) {
        long long was = sequence_shard_owner(&b, s), now = sequence_shard_owner(&c, s);
        if (was != now && now != 3) {
            CHECK(0);
            break;
        }
    }
    /* a fourth joins a balanced three: takes about a quarter, one from each */
    long long four[4] = {1, 2, 3, 4};
    struct sequence_shard_map d;
    moved = sequence_shard_rebalance(&c, four, 4, &d);
    CHECK(balanced(&d, four, 4));
    CHECK_EQ_INT(moved, owned(&d, 4));
    CHECK(d.n <= 8);
}

static void test_leave_hands_only_the_leavers_slots(void) {
    struct sequence_shard_map a, b, c;
    sequence_shard_init(&a);
    long long three[3] = {1, 2, 3}, two[2] = {1, 3};
    sequence_shard_rebalance(&a, three, 3, &b);
    int had = owned(&b, 2);
    int moved = sequence_shard_rebalance(&b, two, 2, &c);
    CHECK(balanced(&c, two, 2));
    CHECK_EQ_INT(moved, had);
    CHECK_EQ_INT(owned(&c, 2), 0);
    for (int s = 0; s < S; s++) {
        long long was = sequence_shard_owner(&b, s), now = sequence_shard_owner(&c, s);
        if (was != 2 && was != now) {
            CHECK(0);
            break;
        }
    }
    /* everyone gone: all unowned */
    struct sequence_shard_map d;
    CHECK_EQ_INT(sequence_shard_rebalance(&c, NULL, 0, &d), S);
    CHECK_EQ_INT(sequence_shard_owner(&d, 5), -1);
}

static void test_churn_stays_bounded(void) {
    struct sequence_shard_map m, next;
    sequence_shard_init(&m);
    long long live[16];
    unsigned seed = 7;
    int n = 3;
    for (int i = 0; i < 16; i++) {
        live[i] = i + 1;
    }
    long long next_id = 17;
    for (int round = 0; round < 300; round++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 2 == 0 && n < 16) {
            live[n++] = next_id++;
        } else if (n > 1) {
            int k = (int)((seed >> 8) % (unsigned)n);
            live[k] = live[--n];
        }
        sequence_shard_rebalance(&m, live, n, &next);
        if (!balanced(&next, live, n)) {
            CHECK(0);
            break;
        }
        m = next;
    }
    CHECK(m.n <= SEQUENCE_SHARD_MAX_RANGES);
}

static void test_text_round_trip(void) {
    struct sequence_shard_map a, b, c;
    sequence_shard_init(&a);
    long long live[3] = {4, 5, 6};
    sequence_shard_rebalance(&a, live, 3, &b);
    char buf[SEQUENCE_SHARD_TEXT_MAX];
    size_t len = sequence_shard_format(&b, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "epoch 1\n0-5461 4\n5462-10922 5\n10923-16383 6\n");
    CHECK_EQ_INT(sequence_shard_parse(buf, len, &c), 0);
    CHECK_EQ_INT(c.n, 3);
    CHECK_EQ_INT(c.epoch, 1);
    CHECK_EQ_INT(sequence_shard_owner(&c, 10922), 5);
    const char *bad[] = {"",
                         "epoch 1\n",
                         "epoch 1\n0-100 4\n",
                         "epoch 1\n1-16383 4\n",
                         "epoch 1\n0-10 4\n12-16383 5\n",
                         "epoch 1\n0-16384 4\n",
                         "epoch x\n0-16383 4\n",
                         "epoch 1\n0-16383 -2\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(sequence_shard_parse(bad[i], strlen(bad[i]), &c), -1);
    }
    CHECK_EQ_INT(sequence_shard_parse("epoch 9\n0-16383 -1\n", 20, &c), 0);
}

/* The key slot (sequence/sequence_keyslot.c): Redis's CLUSTER KEYSLOT answers, hash tags included.
 */
static void test_key_slot(void) {
    CHECK_EQ_INT(sequence_keyslot("123456789", 9), 0x31C3 & 16383);
    CHECK_EQ_INT(sequence_keyslot("foo", 3), 12182);
    CHECK_EQ_INT(sequence_keyslot("somekey", 7), 11058);
    CHECK_EQ_INT(sequence_keyslot("{foo}.bar", 9), 12182);
    CHECK_EQ_INT(sequence_keyslot("x{foo}", 6), 12182);
    CHECK(sequence_keyslot("{}foo", 5) != sequence_keyslot("foo", 3)); /* an empty tag is no tag */
}

/* CRC16 XMODEM bit by bit: what the table-driven one in sequence_keyslot.c must equal. */
static unsigned crc16_bitwise(const unsigned char *p, size_t n) {
    unsigned crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (unsigned)p[i] << 8;
        for (int b = 0; b < 8; b++) {
            crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
        }
    }
    return crc;
}

/* Every byte value at every position of keys up to 64 bytes (no '{': no hash tag). */
static void test_key_slot_every_byte(void) {
    unsigned char key[64];
    uint32_t x = 12345;
    for (size_t len = 1; len <= sizeof(key); len++) {
        for (int v = 0; v < 256; v++) {
            for (size_t i = 0; i < len; i++) {
                x = x * 1103515245u + 12345u;
                key[i] = (unsigned char)(x >> 16);
                key[i] = key[i] == '{' ? 'a' : key[i];
            }
            key[v % len] = (unsigned char)(v == '{' ? 'b' : v);
            CHECK_EQ_INT(sequence_keyslot((const char *)key, len),
                         crc16_bitwise(key, len) & (SEQUENCE_KEYSLOTS - 1));
        }
    }
}

int main(void) {
    TEST(test_first_assignment);
    TEST(test_key_slot_every_byte);
    TEST(test_balanced_for_any_n);
    TEST(test_join_takes_only_from_the_richest);
    TEST(test_leave_hands_only_the_leavers_slots);
    TEST(test_churn_stays_bounded);
    TEST(test_text_round_trip);
    TEST(test_key_slot);
    return unit_done();
}
