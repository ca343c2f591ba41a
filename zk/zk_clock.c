#include "zk_clock.h"

struct zk_clock_decision zk_clock_startup(int64_t now_ms, int64_t zk_ms, int64_t cache_ms,
                                          int64_t max_wait_ms) {
    struct zk_clock_decision d = {ZK_CLOCK_OK, zk_ms > cache_ms ? zk_ms : cache_ms, 0};
    if (d.floor_ms < 0) {
        d.floor_ms = -1;
    }
    if (now_ms > d.floor_ms) {
        return d;
    }
    /* IDs may be issued from floor + 1 on. */
    d.wait_ms = d.floor_ms + 1 - now_ms;
    d.verdict = d.wait_ms <= max_wait_ms ? ZK_CLOCK_WAIT : ZK_CLOCK_REFUSE;
    return d;
}

int64_t zk_clock_offset(int64_t sent_ms, int64_t peer_ms, int64_t recv_ms) {
    return peer_ms - (sent_ms + (recv_ms - sent_ms) / 2);
}

enum zk_clock_verdict zk_clock_peers(const int64_t *offsets, int n, int64_t max_offset_ms,
                                     int64_t *avg_ms) {
    *avg_ms = 0;
    if (n <= 0) {
        return ZK_CLOCK_OK;
    }
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        sum += offsets[i];
    }
    *avg_ms = sum / n;
    int64_t mag = *avg_ms < 0 ? -*avg_ms : *avg_ms;
    return mag > max_offset_ms ? ZK_CLOCK_REFUSE : ZK_CLOCK_OK;
}
