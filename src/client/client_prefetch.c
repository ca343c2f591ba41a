/* The adaptive prefetch distance (client_prefetch.h). */
#include "client_prefetch.h"

void client_prefetch_init(struct client_prefetch *p, int64_t min, int64_t max, int64_t window_ms,
                          int64_t now_ms) {
    p->distance = min;
    p->min = min;
    p->max = max;
    p->window_ms = window_ms;
    p->window_start = now_ms;
    p->taken = 0;
}

static void grow(struct client_prefetch *p) {
    p->distance = p->distance > p->max / 2 ? p->max : p->distance * 2;
}

void client_prefetch_observe(struct client_prefetch *p, int64_t now_ms, int64_t taken,
                             uint64_t hungry) {
    p->taken += taken;
    if (hungry > 0) {
        /* A caller waited for the network: the distance was too short for this rate. */
        grow(p);
        p->window_start = now_ms;
        p->taken = 0;
        return;
    }
    if (now_ms - p->window_start < p->window_ms) {
        return;
    }
    if (p->taken > p->distance) {
        grow(p);
    } else if (p->taken < p->distance / 4 && p->distance / 2 >= p->min) {
        p->distance /= 2;
    } else if (p->taken < p->distance / 4) {
        p->distance = p->min;
    }
    p->window_start = now_ms;
    p->taken = 0;
}

int64_t client_prefetch_want(const struct client_prefetch *p, int64_t ahead, int64_t batch_max) {
    if (ahead >= p->distance / 2 && ahead > 0) {
        return 0;
    }
    int64_t want = p->distance - ahead;
    if (want < 1) {
        want = 1;
    }
    return want > batch_max ? batch_max : want;
}
