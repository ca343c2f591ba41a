/*
 * Unit tests of the count of connections per client address (src/net/net_peercount.c): each
 * address on its own, freed slots reused, runs closed up, and the reserve for addresses with few
 * connections.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net_peercount.h"
#include "unit.h"

/* The connections counted for addr: the slots holding its keyed hash (one, or none). */
static int64_t net_peercount_of(const struct net_peercount *pc, const void *addr, size_t n) {
    uint64_t h = siphash_24(&pc->key, addr, n);
    h = h != 0 ? h : 1;
    int64_t count = 0;
    for (size_t i = 0; i <= pc->mask; i++) {
        count += pc->slots[i].hash == h ? pc->slots[i].n : 0;
    }
    return count;
}

/* A limit per address: each address on its own, freed slots reused, runs closed up. */
static void test_peercount(void) {
    struct net_peercount pc;
    CHECK(net_peercount_init(&pc, 100, 3, 0) == LEAF_OK);
    uint64_t a[3], b;
    for (int i = 0; i < 3; i++) {
        a[i] = net_peercount_take(&pc, "\x7f\0\0\x01", 4);
        CHECK(a[i] != 0);
    }
    CHECK(net_peercount_take(&pc, "\x7f\0\0\x01", 4) == 0); /* the fourth: refused, not counted */
    CHECK_EQ_INT(net_peercount_of(&pc, "\x7f\0\0\x01", 4), 3);
    b = net_peercount_take(&pc, "\x7f\0\0\x02", 4); /* another address has its own share */
    CHECK(b != 0);
    net_peercount_release(&pc, a[0]);
    CHECK(net_peercount_take(&pc, "\x7f\0\0\x01", 4) != 0);
    net_peercount_release(&pc, b);
    CHECK_EQ_INT(net_peercount_of(&pc, "\x7f\0\0\x02", 4), 0);
    /* 100 addresses in and out many times: every count stays exact (no tombstone, no loss). */
    uint64_t h[100][2];
    for (int round = 0; round < 50; round++) {
        for (uint32_t i = 0; i < 100; i++) {
            uint32_t addr = i * 2654435761u + (uint32_t)round;
            h[i][0] = net_peercount_take(&pc, &addr, 4);
            h[i][1] = net_peercount_take(&pc, &addr, 4);
            CHECK(h[i][0] != 0 && h[i][1] != 0 && net_peercount_of(&pc, &addr, 4) == 2);
        }
        for (uint32_t i = 0; i < 100; i += 2) {
            net_peercount_release(&pc, h[i][0]);
            net_peercount_release(&pc, h[i][1]);
        }
        for (uint32_t i = 1; i < 100; i += 2) {
            uint32_t addr = i * 2654435761u + (uint32_t)round;
            CHECK(net_peercount_of(&pc, &addr, 4) == 2);
            net_peercount_release(&pc, h[i][0]);
            net_peercount_release(&pc, h[i][1]);
            CHECK(net_peercount_of(&pc, &addr, 4) == 0);
        }
    }
    CHECK_EQ_INT(net_peercount_of(&pc, "\x7f\0\0\x01", 4), 3);
    net_peercount_destroy(&pc);
}

/*
 * The reserve (docs/OPERATIONS.md, "Connection slots"): 40 connections, half per address, the
 * last 5 for addresses holding fewer than NET_PEERCOUNT_FEW. Two addresses get 20 and 15; then four
 * from a third and one from a fourth; nothing more for any of them.
 */
static void test_peercount_reserve(void) {
    struct net_peercount pc;
    CHECK(net_peercount_init(&pc, 40, 20, 5) == LEAF_OK);
    int got[4] = {0, 0, 0, 0};
    const char *addr[4] = {"\x7f\0\0\x01", "\x7f\0\0\x02", "\x7f\0\0\x03", "\x7f\0\0\x04"};
    for (int a = 0; a < 4; a++) {
        for (int i = 0; i < 40 && pc.total < 40; i++) { /* 40: the node's limit (net.c) */
            got[a] += net_peercount_take(&pc, addr[a], 4) != 0;
        }
    }
    CHECK_EQ_INT(got[0], 20);
    CHECK_EQ_INT(got[1], 15);
    CHECK_EQ_INT(got[2], NET_PEERCOUNT_FEW);
    CHECK_EQ_INT(got[3], 1);
    CHECK_EQ_INT(pc.total, 40);
    CHECK(net_peercount_take(&pc, addr[1], 4) == 0); /* 15 held: the reserve is not for it */
    CHECK(net_peercount_take(&pc, addr[2], 4) == 0); /* NET_PEERCOUNT_FEW held: nor for it */
    net_peercount_destroy(&pc);
}

int main(void) {
    TEST(test_peercount);
    TEST(test_peercount_reserve);
    return unit_done();
}
