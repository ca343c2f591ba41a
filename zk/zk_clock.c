#include "zk_clock.h"

#include <inttypes.h>
#include <stdio.h>

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

#define WITNESS_MAX 1025 /* 1024 peers and ZooKeeper */

static int64_t abs64(int64_t v) {
    return v < 0 ? -v : v;
}

/* Insertion sort: at most a few dozen live peers in practice. */
static void sort64(int64_t *v, int n) {
    for (int i = 1; i < n; i++) {
        int64_t x = v[i];
        int j = i - 1;
        for (; j >= 0 && v[j] > x; j--) {
            v[j + 1] = v[j];
        }
        v[j + 1] = x;
    }
}

struct zk_clock_witness_decision zk_clock_witness(const struct zk_clock_witnesses *w) {
    struct zk_clock_witness_decision d = {ZK_CLOCK_OK, 0, 0};
    int64_t v[WITNESS_MAX];
    int n = 0;
    for (int i = 0; i < w->n_peers && n < WITNESS_MAX - 1; i++) {
        v[n++] = w->peer_offsets[i];
    }
    if (w->zk_known) {
        v[n++] = w->zk_offset_ms;
    }
    d.witnesses = n;
    if (n == 0) {
        return d;
    }
    sort64(v, n);
    if (n % 2 == 1) {
        d.median_ms = v[n / 2];
    } else {
        int64_t lo = v[n / 2 - 1], hi = v[n / 2];
        int64_t ref = w->zk_known ? w->zk_offset_ms : 0;
        d.median_ms = abs64(lo - ref) <= abs64(hi - ref) ? lo : hi;
    }
    d.verdict = abs64(d.median_ms) > w->max_offset_ms ? ZK_CLOCK_REFUSE : ZK_CLOCK_OK;
    return d;
}

size_t zk_clock_witness_message(const struct zk_clock_witness_decision *d,
                                const struct zk_clock_witnesses *w, const char *temporary_path,
                                char *buf, size_t cap) {
    char zk[64] = "";
    if (w->zk_known) {
        snprintf(zk, sizeof(zk), " and ZooKeeper's clock, offset %" PRId64 " ms", w->zk_offset_ms);
    }
    int64_t mag = abs64(d->median_ms);
    int n = snprintf(
        buf, cap,
        "%s: this node's clock is %" PRId64 " ms %s the median of %d witness(es) (%d "
        "live peer(s) under %s%s) (leafd.snowflake.peer.max.offset.ms = %" PRId64 ")%s",
        d->verdict == ZK_CLOCK_OK ? "peer time check passed" : "refusing to start", mag,
        d->median_ms > 0 ? "behind" : "ahead of", d->witnesses, w->n_peers, temporary_path, zk,
        w->max_offset_ms, d->verdict == ZK_CLOCK_OK ? "" : ": correct this node's clock (NTP)");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}
