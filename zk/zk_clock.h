#ifndef LEAF_ZK_CLOCK_H
#define LEAF_ZK_CLOCK_H

/*
 * The clock decisions of a snowflake node at start-up, pure code with the
 * clock passed in (unit-tested in tests/unit/test_zk_core.c).
 *
 * - zk_clock_startup(): the clock must be above everything this worker may
 *   have issued before: the larger of the timestamp stored in ZooKeeper and
 *   the one in the local cache. A clock behind that by at most max_wait_ms
 *   is waited out; further behind is refused. Both sources go into the same
 *   decision, so a refusal can never be turned into a start from the cache
 *   (Leaf defect 1).
 * - zk_clock_witness(): at every start and every new session, the node's
 *   clock is compared to the median offset of its live peers and of
 *   ZooKeeper's own clock (Leaf defect 6).
 */
#include <stddef.h>
#include <stdint.h>

enum zk_clock_verdict {
    ZK_CLOCK_OK = 0, /* the clock is above the floor: go */
    ZK_CLOCK_WAIT,   /* a little behind: wait wait_ms, then decide again */
    ZK_CLOCK_REFUSE, /* too far behind (or too far off the peers): do not start */
};

struct zk_clock_decision {
    enum zk_clock_verdict verdict;
    int64_t floor_ms; /* max(zk_ms, cache_ms), or -1 when neither is known */
    int64_t wait_ms;  /* how long until the clock passes the floor (0 for OK) */
};

/* zk_ms / cache_ms are -1 when unknown. */
struct zk_clock_decision zk_clock_startup(int64_t now_ms, int64_t zk_ms, int64_t cache_ms,
                                          int64_t max_wait_ms);

/*
 * A peer's offset from a request sent at sent_ms and answered at recv_ms
 * (own clock) with the peer's time peer_ms: peer time minus own time at the
 * midpoint of the round trip.
 */
int64_t zk_clock_offset(int64_t sent_ms, int64_t peer_ms, int64_t recv_ms);

/*
 * The peer clock check of docs/IDENTITY.md: run at EVERY start and every new session, not only
 * the first registration (an average of the peers' offsets at the first registration, Leaf's
 * check, let one wrong peer lock a node out and a node with no peers start unchecked). The
 * witnesses are the live peers' offsets (zk_clock_offset() of each GET /api/snowflake/time) and, as
 * one more independent witness, ZooKeeper's own clock: the mtime of a znode this node just wrote
 * (its leaf_temporary node, or the marker), as zk_clock_offset(sent_ms, mtime, acked_ms) around
 * that write.
 *
 * Rule: the median of all witnesses must be within max_offset_ms. An even count takes, of the
 * two middle values, the one nearer ZooKeeper's offset (nearer 0 when ZooKeeper's is unknown).
 * So one peer with a wrong clock cannot lock a correct node out (ZooKeeper sides with the
 * node), and a node with a wrong clock cannot start unnoticed when it has no peers (ZooKeeper
 * alone is the witness). No witness at all: OK, nothing to compare with.
 */
struct zk_clock_witnesses {
    const int64_t *peer_offsets; /* n_peers offsets, peer minus own (ms) */
    int n_peers;
    int zk_known;         /* 1 when zk_offset_ms was measured */
    int64_t zk_offset_ms; /* ZooKeeper's mtime minus own time at the write's midpoint */
    int64_t max_offset_ms;
};

struct zk_clock_witness_decision {
    enum zk_clock_verdict verdict; /* OK or REFUSE */
    int64_t median_ms;             /* the offset the verdict is on (0 with no witness) */
    int witnesses;                 /* peers + (zk_known ? 1 : 0) */
};

/* Never fails; more than 1024 peers are decided on the first 1024. */
struct zk_clock_witness_decision zk_clock_witness(const struct zk_clock_witnesses *w);

/*
 * The line for a REFUSE (exit 1), or the info line for an OK, e.g.
 *   refusing to start: this node's clock is 86400012 ms behind the median of 3 witness(es)
 *   (2 live peer(s) under /snowflake/it/leaf_temporary and ZooKeeper's clock, offset
 *   86400020 ms) (leafd.snowflake.peer.max.offset.ms = 5000)
 * Returns the length written (cut to cap).
 */
size_t zk_clock_witness_message(const struct zk_clock_witness_decision *d,
                                const struct zk_clock_witnesses *w, const char *temporary_path,
                                char *buf, size_t cap);

#endif
