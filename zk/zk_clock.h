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
 * - zk_clock_peers(): a node registering for the first time compares its
 *   clock to the average offset of its live peers (Leaf defect 6).
 */
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
 * Averages n offsets into *avg_ms; REFUSE when |avg| > max_offset_ms. No
 * peers (n == 0): OK, nothing to compare with.
 */
enum zk_clock_verdict zk_clock_peers(const int64_t *offsets, int n, int64_t max_offset_ms,
                                     int64_t *avg_ms);

#endif
