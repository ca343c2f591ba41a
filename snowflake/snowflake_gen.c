#include "snowflake_gen.h"

/* A new tick's random start is drawn from at most 1/40 (2.5%) of the sequence space. */
#define SNOWFLAKE_START_SHARE 40
/* Up to this many sequence bits a tick always starts at 0. */
#define SNOWFLAKE_FIXED_START_BITS 8

void snowflake_gen_init(struct snowflake_gen *g, int64_t epoch, uint64_t seed) {
    struct snowflake_layout l;
    snowflake_layout_default(&l);
    snowflake_gen_init_layout(g, &l, epoch, seed);
}

/*
 * How many values a new tick's random sequence start is drawn from, for a
 * sequence of sequence_bits: 1 (always 0) up to 8 bits, where every value
 * counts and Sonyflake and Baidu start at 0; above, 2.5% of the sequence
 * space, capped at Leaf's 100 (reached at 12 bits: 0..99 as today). The
 * start spreads `id % n` at low traffic when the sequence is the low field;
 * more than 100 values would only cost capacity.
 */
static int gen_start_span(int sequence_bits) {
    if (sequence_bits <= SNOWFLAKE_FIXED_START_BITS) {
        return 1;
    }
    int64_t span = (INT64_C(1) << sequence_bits) / SNOWFLAKE_START_SHARE;
    return span > SNOWFLAKE_RANDOM_START ? SNOWFLAKE_RANDOM_START : (int)span;
}

void snowflake_gen_init_layout(struct snowflake_gen *g, const struct snowflake_layout *layout,
                               int64_t epoch, uint64_t seed) {
    *g = (struct snowflake_gen){
        .layout = *layout,
        .epoch = epoch,
        .worker_id = -1,
        .last_ms = -1,
        .start_span = gen_start_span(layout->bits[SNOWFLAKE_SEQUENCE]),
        .max_seen_ms = -1,
        .floor_ms = -1,
        .ceiling_ms = INT64_MAX,
        .borrow_ms = SNOWFLAKE_DEFAULT_BORROW_MS,
        .lead_wall_ms = -1,
        .rng = seed ? seed : 0x9E3779B97F4A7C15ULL,
        .fast = SNOWFLAKE_FAST_CLOSED,
        .fast_layout = layout->unit_ms == 1 && layout->shift[SNOWFLAKE_SEQUENCE] == 0,
    };
}

void snowflake_gen_fold(struct snowflake_gen *g) {
    uint64_t w = atomic_exchange_explicit(&g->fast, SNOWFLAKE_FAST_CLOSED, memory_order_acq_rel);
    if (w == SNOWFLAKE_FAST_CLOSED) {
        return;
    }
    int seq = (int)(w & (uint64_t)snowflake_layout_max(&g->layout, SNOWFLAKE_SEQUENCE));
    g->issued += (uint64_t)(seq - g->fast_from);
    g->sequence = seq;
}

int snowflake_gen_fast(struct snowflake_gen *g, int64_t now_ms, int64_t *out, int n) {
    if (!g->fast_layout || n < 1) {
        return 0;
    }
    uint64_t seq_max = (uint64_t)snowflake_layout_max(&g->layout, SNOWFLAKE_SEQUENCE);
    uint64_t time_max = (uint64_t)snowflake_layout_max(&g->layout, SNOWFLAKE_TIME);
    int shift = g->layout.shift[SNOWFLAKE_TIME];
    uint64_t w = atomic_load_explicit(&g->fast, memory_order_acquire);
    for (;;) {
        /* unit 1 ms: the tick is the ms since the epoch */
        if (w == SNOWFLAKE_FAST_CLOSED || (int64_t)((w >> shift) & time_max) != now_ms - g->epoch ||
            (w & seq_max) + (uint64_t)n > seq_max) {
            return 0;
        }
        /* the sequence is the lowest field and does not overflow: w + n is the n-th next ID */
        if (atomic_compare_exchange_weak_explicit(&g->fast, &w, w + (uint64_t)n,
                                                  memory_order_acq_rel, memory_order_acquire)) {
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        out[i] = (int64_t)(w + 1 + (uint64_t)i);
    }
    return 1;
}

void snowflake_gen_set_worker(struct snowflake_gen *g, int worker_id) {
    snowflake_gen_fold(g);
    g->worker_id = worker_id;
}

void snowflake_gen_set_floor(struct snowflake_gen *g, int64_t floor_ms) {
    snowflake_gen_fold(g);
    if (floor_ms > g->floor_ms) {
        g->floor_ms = floor_ms;
    }
}

void snowflake_gen_set_ceiling(struct snowflake_gen *g, int64_t ceiling_ms) {
    snowflake_gen_fold(g);
    g->ceiling_ms = ceiling_ms;
}

void snowflake_gen_set_max_lead(struct snowflake_gen *g, int64_t max_lead_ms) {
    snowflake_gen_fold(g);
    g->max_lead_ms = max_lead_ms > 0 ? max_lead_ms : 0;
}

void snowflake_gen_move(struct snowflake_gen *g, int worker_id, int64_t floor_ms,
                        int64_t ceiling_ms) {
    snowflake_gen_fold(g);
    g->worker_id = worker_id;
    g->floor_ms = floor_ms;
    g->ceiling_ms = ceiling_ms;
    g->last_ms = -1;
    g->sequence = 0;
    g->max_seen_ms = -1;
    g->lead_wall_ms = -1;
}

static int random_start(struct snowflake_gen *g) {
    if (g->start_span <= 1) {
        return 0;
    }
    /* xorshift64: cheap, and only has to spread sequence starts (as Leaf). */
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return (int)(g->rng % (uint64_t)g->start_span);
}

/* IDs a fresh tick always holds, whatever its random start. */
static int64_t per_tick_min(const struct snowflake_gen *g) {
    return snowflake_layout_max(&g->layout, SNOWFLAKE_SEQUENCE) + 1 - (g->start_span - 1);
}

/* Tick (since the epoch) of an absolute ms at or after the epoch. */
static int64_t tick_of(const struct snowflake_gen *g, int64_t ms) {
    return (ms - g->epoch) / g->layout.unit_ms;
}

static int64_t tick_start(const struct snowflake_gen *g, int64_t tick) {
    return g->epoch + tick * g->layout.unit_ms;
}

/*
 * How far the clock is behind what this generator has seen or must stay
 * above; 0 when it is not behind. Above the floor means in a tick that
 * starts after floor_ms.
 */
int64_t snowflake_gen_behind(const struct snowflake_gen *g, int64_t now_ms) {
    int64_t behind = 0;
    if (now_ms < g->max_seen_ms) {
        behind = g->max_seen_ms - now_ms;
    }
    if (g->floor_ms >= g->epoch) {
        int64_t first_ok = tick_start(g, tick_of(g, g->floor_ms) + 1);
        if (now_ms < first_ok && first_ok - now_ms > behind) {
            behind = first_ok - now_ms;
        }
    }
    return behind;
}

/* The tick of the last issued ID, -1 before the first. */
static int64_t last_tick(const struct snowflake_gen *g) {
    return g->last_ms < 0 ? -1 : tick_of(g, g->last_ms);
}

/* A lower bound of the IDs that can be issued in ticks <= limit. */
static int64_t capacity(const struct snowflake_gen *g, int64_t now_tick, int64_t limit) {
    int64_t cap = 0, first_fresh = now_tick, last = last_tick(g);
    if (last >= now_tick) {
        cap =
            last <= limit ? snowflake_layout_max(&g->layout, SNOWFLAKE_SEQUENCE) - g->sequence : 0;
        first_fresh = last + 1;
    }
    if (limit >= first_fresh) {
        cap += (limit - first_fresh + 1) * per_tick_min(g);
    }
    return cap;
}

static void issue(struct snowflake_gen *g, int64_t now_tick, int64_t *out, int n) {
    int64_t tick = last_tick(g), seq_max = snowflake_layout_max(&g->layout, SNOWFLAKE_SEQUENCE);
    int seq = g->sequence;
    for (int i = 0; i < n; i++) {
        if (tick < now_tick) {
            tick = now_tick;
            seq = random_start(g);
        } else if (seq < seq_max) {
            seq++;
        } else {
            /* Sequence used up: borrow the next tick (capacity() has
             * checked it is within the borrow limit and below the ceiling). */
            tick++;
            seq = random_start(g);
            g->exhaustions++;
        }
        out[i] = snowflake_layout_make(&g->layout, tick, g->worker_id, seq);
    }
    g->last_ms = tick_start(g, tick);
    g->sequence = seq;
    g->issued += (uint64_t)n;
}

/* Ticks exhaustion may borrow ahead of the clock: max(1 tick, borrow_ms). */
static int64_t borrow_ticks(const struct snowflake_gen *g) {
    int64_t ahead = g->borrow_ms / g->layout.unit_ms;
    return ahead < 1 ? 1 : ahead;
}

int64_t snowflake_gen_lead(const struct snowflake_gen *g, int64_t now_ms) {
    int64_t lead = snowflake_gen_behind(g, now_ms);
    if (g->last_ms >= 0 && g->last_ms - now_ms > lead) {
        lead = g->last_ms - now_ms;
    }
    return lead;
}

int64_t snowflake_gen_high(const struct snowflake_gen *g) {
    return g->max_seen_ms > g->last_ms ? g->max_seen_ms : g->last_ms;
}

/*
 * How far (ms) the clock is beyond the lead bound: behind the highest
 * reading or the floor by more than max_lead_ms, or behind the last tick
 * issued by more than the bound or the borrow window (whichever is wider;
 * the last tick can be that far ahead only after a lead).
 */
static int64_t lead_excess(const struct snowflake_gen *g, int64_t now_ms, int64_t behind) {
    int64_t over = behind - g->max_lead_ms;
    int64_t window = borrow_ticks(g) * g->layout.unit_ms;
    if (g->max_lead_ms > window) {
        window = g->max_lead_ms;
    }
    if (g->last_ms >= 0 && g->last_ms - now_ms - window > over) {
        over = g->last_ms - now_ms - window;
    }
    return over;
}

/*
 * In the lead, the logical time advances at the rate of the clock from where
 * the lead began (the wall clock still measures elapsed time after a step),
 * so exhaustion borrows borrow_ms ahead of that and no further: the lead is
 * no extra throughput, and it does not run up to the ceiling under load.
 * Under a load below the layout's limit the last tick lags this clock and
 * the wall clock catches up. Returns that clock's ms; tracks the start.
 */
static int64_t lead_clock(struct snowflake_gen *g, int64_t now_ms, int in_lead) {
    if (!in_lead) {
        g->lead_wall_ms = -1;
        return now_ms;
    }
    if (g->lead_wall_ms < 0 || now_ms < g->lead_wall_ms) { /* a lead begins, or a new step */
        g->lead_wall_ms = now_ms;
        g->lead_from_ms = now_ms + snowflake_gen_lead(g, now_ms);
    }
    return g->lead_from_ms + (now_ms - g->lead_wall_ms);
}

/*
 * The last tick issuing may reach at clock now_ms; *capped when the ceiling
 * set it. Exhaustion borrows borrow_ms ahead of the clock, or in the lead
 * ahead of the lead's clock (lead_clock), never past the tick holding
 * now_ms + max_lead_ms.
 */
static int64_t borrow_limit(const struct snowflake_gen *g, int64_t now_ms, int64_t lead_ms,
                            int *capped) {
    int64_t wall_tick = tick_of(g, now_ms);
    int64_t limit = wall_tick + borrow_ticks(g);
    if (lead_ms > now_ms) {
        int64_t led = tick_of(g, lead_ms) + borrow_ticks(g);
        int64_t bound = tick_of(g, now_ms + g->max_lead_ms);
        led = led < bound ? led : bound;
        limit = led > limit ? led : limit;
    }
    int64_t horizon = snowflake_layout_max(&g->layout, SNOWFLAKE_TIME);
    /* the last tick starting below the ceiling */
    int64_t below = g->ceiling_ms <= g->epoch ? -1 : tick_of(g, g->ceiling_ms - 1);
    *capped = 0;
    if (limit > horizon) {
        limit = horizon;
    }
    if (limit > below) {
        limit = below;
        *capped = 1;
    }
    return limit;
}

int snowflake_gen_max_batch(const struct snowflake_gen *g) {
    int64_t most = (borrow_ticks(g) + 1) * per_tick_min(g);
    return most > SNOWFLAKE_MAX_BATCH ? SNOWFLAKE_MAX_BATCH : (int)most;
}

leaf_status_t snowflake_gen_next(struct snowflake_gen *g, int64_t now_ms, int64_t *out, int n,
                                 int64_t *wait_ms) {
    *wait_ms = 0;
    snowflake_gen_fold(g);
    if (n < 1 || n > snowflake_gen_max_batch(g)) {
        return LEAF_EINVAL;
    }
    if (g->worker_id < 0 || g->worker_id > snowflake_layout_max(&g->layout, SNOWFLAKE_WORKER)) {
        return LEAF_EUNAVAIL;
    }
    if (now_ms < g->epoch ||
        tick_of(g, now_ms) > snowflake_layout_max(&g->layout, SNOWFLAKE_TIME)) {
        return LEAF_ERANGE;
    }
    int64_t behind = snowflake_gen_behind(g, now_ms);
    int64_t over = lead_excess(g, now_ms, behind);
    if (over > 0) {
        *wait_ms = over;
        if (*wait_ms <= SNOWFLAKE_MAX_BACKWARDS_WAIT_MS) {
            g->backwards_waits++;
            return LEAF_EAGAIN;
        }
        g->backwards_errors++;
        return LEAF_ECLOCK;
    }
    if (now_ms > g->max_seen_ms) {
        g->max_seen_ms = now_ms;
    }
    /* The logical now: the clock, or the first tick above the floor. */
    int64_t now_tick = tick_of(g, now_ms);
    if (g->floor_ms >= g->epoch && now_tick <= tick_of(g, g->floor_ms)) {
        now_tick = tick_of(g, g->floor_ms) + 1;
    }
    int in_lead = behind > 0 || last_tick(g) > tick_of(g, now_ms) + borrow_ticks(g);
    int capped;
    int64_t limit = borrow_limit(g, now_ms, lead_clock(g, now_ms, in_lead), &capped);
    int64_t cap = capacity(g, now_tick, limit);
    if (cap < n) {
        if (capped) {
            return LEAF_EUNAVAIL;
        }
        /* until the limit has moved up past the ticks still needed (it moves
         * with the clock, a tick per tick) */
        int64_t per = per_tick_min(g), ticks = (n - cap + per - 1) / per;
        int64_t first_fresh = last_tick(g) >= now_tick ? last_tick(g) + 1 : now_tick;
        if (first_fresh - 1 > limit) {
            ticks += first_fresh - 1 - limit;
        }
        *wait_ms = tick_start(g, tick_of(g, now_ms) + ticks) - now_ms;
        return LEAF_EAGAIN;
    }
    if (behind > 0) {
        g->lead_issues++;
    }
    issue(g, now_tick, out, n);
    if (g->fast_layout && !in_lead && last_tick(g) == tick_of(g, now_ms)) {
        /* More IDs of this tick at this clock reading are what this call would
         * issue next: open the window at the last one (ms == tick, unit 1). */
        g->fast_from = g->sequence;
        atomic_store_explicit(&g->fast, (uint64_t)out[n - 1], memory_order_release);
    }
    return LEAF_OK;
}
