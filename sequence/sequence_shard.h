#ifndef LEAF_SEQUENCE_SHARD_H
#define LEAF_SEQUENCE_SHARD_H

/*
 * Sharded sequences (docs/cluster.md, leafd.sequence.sharding): which
 * live sequence node owns which of Redis Cluster's 16384 slots. Pure code
 * (libc only): the assignment is a function of the current one and the live
 * nodes, so the rebalancing rules are unit-tested without ZooKeeper
 * (tests/unit/test_sequence_shard.c).
 *
 * The map: contiguous, non-overlapping slot ranges covering 0..16383, each
 * with an owner (a node's id, the counter of its election node; -1 while
 * unowned), plus an epoch that every change raises. Rebalancing rules:
 * - Balanced: with N live nodes each owns floor(16384/N) or one slot more
 *   (the nodes that own the most now keep the extra slot).
 * - Only what must move moves: the ranges of a node that left go to the
 *   others; a node that joined takes slots only from nodes above their
 *   target (the ones with the most); no slot moves between two nodes that
 *   are both at or below their target. So a join or a leave moves exactly
 *   the slots the joiner gains or the leaver loses (plus at most N slots of
 *   the rounding), never a reshuffle.
 * - Contiguous: a node gives away slots from the high end of its highest
 *   range, and adjacent ranges of one owner are merged, so a node owns a
 *   few ranges, not a scatter of slots.
 *
 * Who runs it: the node the existing election makes primary computes the
 * map from the live line and writes it (versioned) under
 * /leafd/{leaf.name}/shards; every node reads it. A range changes hands
 * with the per-sequence fence (docs/cluster.md, "Sequences"): the old owner stops issuing
 * and writes its givebacks before it releases the range; a new owner reads
 * each sequence's persisted max, fences it with a versioned write and waits
 * out the old owner's lease before its first ID.
 *
 * Text form (the znode's data, readable in zkCli and tools/programs/zk-inspect):
 *   "epoch <e>\n" then one "<start>-<end> <owner>\n" per range.
 */
#include <stddef.h>
#include <stdint.h>

#define SEQUENCE_SHARD_SLOTS 16384
#define SEQUENCE_SHARD_MAX_RANGES 256
#define SEQUENCE_SHARD_MAX_NODES 64
#define SEQUENCE_SHARD_TEXT_MAX (24 + SEQUENCE_SHARD_MAX_RANGES * 36)

struct sequence_shard_range {
    int start, end;  /* inclusive slots */
    long long owner; /* node id; -1: unowned */
};

struct sequence_shard_map {
    uint64_t epoch;
    int n;
    struct sequence_shard_range r[SEQUENCE_SHARD_MAX_RANGES];
};

/* One range 0..16383, unowned, epoch 0. */
void sequence_shard_init(struct sequence_shard_map *m);

/* The owner of slot (0..16383), -1 when unowned or out of range. */
long long sequence_shard_owner(const struct sequence_shard_map *m, int slot);

/*
 * The next map for the live nodes (ids >= 0, any order, no duplicates; at
 * most SEQUENCE_SHARD_MAX_NODES): out = cur rebalanced by the rules above,
 * its epoch cur's + 1 when anything changed, else cur's. nlive 0 leaves
 * every slot unowned. Returns the number of slots that changed owner.
 */
int sequence_shard_rebalance(const struct sequence_shard_map *cur, const long long *live, int nlive,
                             struct sequence_shard_map *out);

/* The text form into buf (at least SEQUENCE_SHARD_TEXT_MAX bytes); returns its length. */
size_t sequence_shard_format(const struct sequence_shard_map *m, char *buf, size_t cap);

/* Parses the text form; 0, or -1 when it is not a map covering 0..16383 exactly. */
int sequence_shard_parse(const char *text, size_t len, struct sequence_shard_map *m);

#endif
