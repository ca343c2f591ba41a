/*
 * Unit tests of the sharding gate (sequence/sequence_shard_gate.c): which
 * nodes of the sequence line take part in sharding (may own slots), and who
 * holds the first slot map back, in the mixed clusters of a rollout.
 */
#include <string.h>

#include "sequence_shard_gate.h"
#include "unit.h"

static const struct sequence_gate_member members[] = {
    {"127.0.0.1:8001", "1.0.0", 1},  /* sharding configured */
    {"127.0.0.1:8002", "1.0.0", 0},  /* sharding off */
    {"127.0.0.1:8003", "1.0.0", -1}, /* a record that does not say */
};

static void test_all_sharded(void) {
    struct sequence_gate_node line[] = {{3, "127.0.0.1:8001", 0}, {5, "127.0.0.1:9009", 1}};
    int part[2] = {-1, -1};
    char held[256];
    CHECK_EQ_INT(sequence_gate_judge(line, 2, members, 3, part, held, sizeof(held)), 0);
    CHECK_EQ_INT(part[0], 1); /* its record says so (not active yet: no owner node) */
    CHECK_EQ_INT(part[1], 1); /* an owner node: it ran sharded (0.2.0 has no record) */
    CHECK_EQ_STR(held, "");
    /* an empty line holds nothing back */
    CHECK_EQ_INT(sequence_gate_judge(line, 0, members, 3, part, held, sizeof(held)), 0);
}

static void test_old_and_unsharded_hold_back(void) {
    struct sequence_gate_node line[] = {
        {1, "127.0.0.1:7000", 0}, /* no record, no owner node: 0.1.0 (or 0.2.0 unsharded) */
        {2, "127.0.0.1:8001", 0}, {3, "127.0.0.1:8002", 0},
        {4, "127.0.0.1:8003", 0}, {5, "", 0}, /* address not read yet */
    };
    int part[5];
    char held[512];
    CHECK_EQ_INT(sequence_gate_judge(line, 5, members, 3, part, held, sizeof(held)), 4);
    CHECK_EQ_INT(part[0], 0);
    CHECK_EQ_INT(part[1], 1);
    CHECK_EQ_INT(part[2], 0);
    CHECK_EQ_INT(part[3], 0);
    CHECK_EQ_INT(part[4], 0);
    CHECK_EQ_STR(held, "127.0.0.1:7000 (0.2.0 or older without sharding), "
                       "127.0.0.1:8002 (1.0.0, leafd.sequence.sharding off), "
                       "127.0.0.1:8003 (1.0.0, does not say it shards), "
                       "n_0000000005 (0.2.0 or older without sharding)");
    /* an owner node outweighs a record that says off (it ran sharded under that name) */
    line[2].owner_node = 1;
    CHECK_EQ_INT(sequence_gate_judge(line, 5, members, 3, part, held, sizeof(held)), 3);
    CHECK_EQ_INT(part[2], 1);
}

static void test_held_is_cut_not_overrun(void) {
    struct sequence_gate_node line[] = {{1, "127.0.0.1:7000", 0}, {2, "127.0.0.1:7001", 0}};
    int part[2];
    char held[20];
    memset(held, 'x', sizeof(held));
    CHECK_EQ_INT(sequence_gate_judge(line, 2, members, 3, part, held, sizeof(held)), 2);
    CHECK(strlen(held) < sizeof(held));
    CHECK(strncmp(held, "127.0.0.1:7000", 14) == 0);
    /* no member records at all: everyone without an owner node holds back */
    CHECK_EQ_INT(sequence_gate_judge(line, 2, NULL, 0, part, held, sizeof(held)), 2);
}

int main(void) {
    TEST(test_all_sharded);
    TEST(test_old_and_unsharded_hold_back);
    TEST(test_held_is_cut_not_overrun);
    return unit_done();
}
