#include "snowflake_gen.h"

/* IDs a fresh millisecond always holds, whatever its random start. */
#define SNOWFLAKE_PER_MS_MIN (SNOWFLAKE_MAX_SEQUENCE + 1 - (SNOWFLAKE_RANDOM_START - 1))

void snowflake_gen_init(struct snowflake_gen *g, int64_t epoch, uint64_t seed) {
    *g = (struct snowflake_gen){
        .epoch = epoch,
        .worker_id = -1,
        .last_ms = -1,
        .max_seen_ms = -1,
        .floor_ms = -1,
        .ceiling_ms = INT64_MAX,
        .borrow_ms = SNOWFLAKE_DEFAULT_BORROW_MS,
        .rng = seed ? seed : 0x9E3779B97F4A7C15ULL,
    };
}

void snowflake_gen_set_worker(struct snowflake_gen *g, int worker_id) {
    g->worker_id = worker_id;
}

void snowflake_gen_set_floor(struct snowflake_gen *g, int64_t floor_ms) {
    if (floor_ms > g->floor_ms) {
        g->floor_ms = floor_ms;
    }
}

void snowflake_gen_set_ceiling(struct snowflake_gen *g, int64_t ceiling_ms) {
    g->ceiling_ms = ceiling_ms;
}

static int random_start(struct snowflake_gen *g) {
    /* xorshift64: cheap, and only has to spread sequence starts (as Leaf). */
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return (int)(g->rng % SNOWFLAKE_RANDOM_START);
}

/*
 * How far the clock is behind what this generator has seen or must stay
 * above; 0 when it is not behind.
 */
int64_t snowflake_gen_behind(const struct snowflake_gen *g, int64_t now_ms) {
    int64_t behind = 0;
    if (now_ms < g->max_seen_ms) {
        behind = g->max_seen_ms - now_ms;
    }
    if (now_ms <= g->floor_ms && g->floor_ms + 1 - now_ms > behind) {
        behind = g->floor_ms + 1 - now_ms;
    }
    return behind;
}

/* A lower bound of the IDs that can be issued with a timestamp <= limit_ms. */
static int64_t capacity(const struct snowflake_gen *g, int64_t now_ms, int64_t limit_ms) {
    int64_t cap = 0, first_fresh = now_ms;
    if (g->last_ms >= now_ms) {
        cap = g->last_ms <= limit_ms ? SNOWFLAKE_MAX_SEQUENCE - g->sequence : 0;
        first_fresh = g->last_ms + 1;
    }
    if (limit_ms >= first_fresh) {
        cap += (limit_ms - first_fresh + 1) * SNOWFLAKE_PER_MS_MIN;
    }
    return cap;
}

static void issue(struct snowflake_gen *g, int64_t now_ms, int64_t *out, int n) {
    for (int i = 0; i < n; i++) {
        if (g->last_ms < now_ms) {
            g->last_ms = now_ms;
            g->sequence = random_start(g);
        } else if (g->sequence < SNOWFLAKE_MAX_SEQUENCE) {
            g->sequence++;
        } else {
            /* Sequence used up: borrow the next millisecond (capacity() has
             * checked it is within borrow_ms and below the ceiling). */
            g->last_ms++;
            g->sequence = random_start(g);
            g->exhaustions++;
        }
        out[i] = snowflake_id_make(g->last_ms - g->epoch, g->worker_id, g->sequence);
    }
    g->issued += (uint64_t)n;
}

leaf_status_t snowflake_gen_next(struct snowflake_gen *g, int64_t now_ms, int64_t *out, int n,
                                 int64_t *wait_ms) {
    *wait_ms = 0;
    if (n < 1 || n > SNOWFLAKE_MAX_BATCH) {
        return LEAF_EINVAL;
    }
    if (g->worker_id < 0) {
        return LEAF_EUNAVAIL;
    }
    int64_t horizon = g->epoch + SNOWFLAKE_MAX_TIMESTAMP;
    if (now_ms < g->epoch || now_ms > horizon) {
        return LEAF_ERANGE;
    }
    int64_t behind = snowflake_gen_behind(g, now_ms);
    if (behind > 0) {
        *wait_ms = behind;
        if (behind <= SNOWFLAKE_MAX_BACKWARDS_WAIT_MS) {
            g->backwards_waits++;
            return LEAF_EAGAIN;
        }
        g->backwards_errors++;
        return LEAF_ECLOCK;
    }
    g->max_seen_ms = now_ms;

    int64_t limit = now_ms + g->borrow_ms;
    int capped = 0;
    if (limit > horizon) {
        limit = horizon;
    }
    if (limit >= g->ceiling_ms) {
        limit = g->ceiling_ms - 1;
        capped = 1;
    }
    int64_t cap = capacity(g, now_ms, limit);
    if (cap < n) {
        if (capped) {
            return LEAF_EUNAVAIL;
        }
        *wait_ms = (n - cap + SNOWFLAKE_PER_MS_MIN - 1) / SNOWFLAKE_PER_MS_MIN;
        return LEAF_EAGAIN;
    }
    issue(g, now_ms, out, n);
    return LEAF_OK;
}
