#ifndef LEAF_SEQUENCE_SHARD_GATE_H
#define LEAF_SEQUENCE_SHARD_GATE_H

/*
 * Whether sequence sharding may be turned on, and which nodes of the
 * sequence line may own slots (docs/UPGRADING.md, "Sequence sharding in a
 * mixed cluster"; docs/reference/zookeeper.md, "shards"). Pure (libc only),
 * unit-tested in tests/unit/test_sequence_shard_gate.c; sequence_service_shard.c
 * reads ZooKeeper and hands the nodes in.
 *
 * A node of the line takes part in sharding when it is known to serve the
 * slot map:
 *   - it has an owner node /leafd/{leaf.name}/owners/n_<counter> for its
 *     election node (it ran sharded under that name: 0.2.0 or later), or
 *   - its member record (matched by HTTP address) says "sharding":true.
 * Every other node does not: no member record and no owner node (0.1.0, or
 * 0.2.0 without leafd.sequence.sharding: an older release cannot be told
 * apart), a record that says "sharding":false, or one that does not say.
 *
 * The coordinator writes the first map (turning sharding on) only when every
 * node of the line takes part; once a map exists it stays, and only the nodes
 * that take part are given slots.
 */
#include <stddef.h>

struct sequence_gate_node {
    long long id;     /* its election node's counter */
    const char *http; /* its HTTP address from its election node; "" unknown */
    int owner_node;   /* an owner node with its election node's name exists */
};

struct sequence_gate_member {
    const char *http;    /* ip:port of its HTTP listener */
    const char *version; /* "1.0.0" */
    int sharding;        /* 1 configured on, 0 off, -1 the record does not say */
};

/*
 * Judges each of the n line nodes: takes_part[i] = 1 when line[i] takes part.
 * held gets "addr (why), ..." for the others (cut to cap; addr is the HTTP
 * address, or n_<counter> when unknown). Returns how many do not take part.
 */
int sequence_gate_judge(const struct sequence_gate_node *line, int n,
                        const struct sequence_gate_member *members, int nmembers, int *takes_part,
                        char *held, size_t cap);

#endif
