#ifndef CLIENT_PREFETCH_H
#define CLIENT_PREFETCH_H

/*
 * How far ahead of its callers a key's buffer is kept: the prefetch distance,
 * in IDs, as CosId's SegmentChainId does it and one step further. The
 * distance doubles when a caller found the buffer empty (it went hungry),
 * doubles when the callers took more than the distance in one window (so a
 * steady rate never meets an empty buffer), and halves when they took less
 * than a quarter of it in a window (idle). Pure: the refill thread passes in
 * the time, so the unit tests drive it with an injected clock.
 *
 * Owned by the refill thread of the handle (client.c); no other thread
 * touches it.
 */
#include <stdint.h>

struct client_prefetch {
    int64_t distance;     /* IDs to keep ahead now */
    int64_t min, max;     /* its bounds (prefetch.min, prefetch.max) */
    int64_t window_ms;    /* the rate is measured over windows this long */
    int64_t window_start; /* ms: when the current window began */
    int64_t taken;        /* IDs the callers took in the current window */
};

void client_prefetch_init(struct client_prefetch *p, int64_t min, int64_t max, int64_t window_ms,
                          int64_t now_ms);

/* Records that the callers took `taken` IDs since the last call and went hungry `hungry`
 * times; adapts the distance. */
void client_prefetch_observe(struct client_prefetch *p, int64_t now_ms, int64_t taken,
                             uint64_t hungry);

/* How many IDs to ask for when `ahead` are buffered: 0 while at least half the distance is
 * there, else enough to reach the distance, at most batch_max. */
int64_t client_prefetch_want(const struct client_prefetch *p, int64_t ahead, int64_t batch_max);

#endif
