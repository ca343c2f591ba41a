#ifndef LEAF_SNOWFLAKE_GEN_H
#define LEAF_SNOWFLAKE_GEN_H

/*
 * The snowflake generator and its clock policy. Pure code: the caller passes
 * the wall-clock time (CLOCK_REALTIME in ms) into every call, so tests drive
 * it with any clock they like.
 *
 * Rules, all enforced here and nowhere else. They follow the layout
 * (snowflake_id.h) and its time unit: a tick is unit_ms milliseconds, and
 * the default layout ticks every millisecond, as Leaf.
 * - IDs are strictly increasing; no ID whose decoded timestamp (the start
 *   of its tick) is at or below floor_ms (what this worker may have issued
 *   before a restart) or at or above ceiling_ms (beyond what has been
 *   persisted as reserved) is ever issued. So the tick holding floor_ms is
 *   never used, and an ID's timestamp persisted as the next floor keeps
 *   every later ID above it.
 * - A new tick starts its sequence at a random value 0..start_span-1
 *   (snowflake_gen.c says how it is sized): 0..99 for the default 12-bit
 *   sequence (as Leaf), always 0 for 8 bits or fewer (as Sonyflake and Baidu).
 * - When a tick's sequence is used up, the generator borrows the next tick,
 *   up to max(1 tick, borrow_ms) ahead of the clock, instead of spinning
 *   (with a unit of 10 ms or more that is exactly one tick, so an ID may
 *   carry a time up to one unit ahead of the clock). Batches are
 *   all-or-nothing: a batch that does not fit is refused with LEAF_EAGAIN
 *   and the time to wait, and nothing is issued.
 * - The bounded lead (docs/reference/guarantees.md, "The bounded lead"). The generator's time is
 *   max(clock, last tick issued, the tick after floor_ms): when the clock is
 *   behind what was issued (a step back) or behind the floor (a restart
 *   above the stored reservation), IDs keep coming from that logical time,
 *   as long as it is at most max_lead_ms ahead of the clock. The sequence
 *   goes on in the last tick and then borrows later ticks, borrow_ms
 *   ahead of a clock that runs from the logical time where the lead began
 *   at the rate of the wall clock, and never past the tick holding
 *   clock + max_lead_ms (and always below the ceiling). So the time
 *   field of an ID may run up to max_lead_ms into the future, and IDs stay
 *   strictly increasing. Outside a step back, sequence exhaustion borrows
 *   only borrow_ms ahead, as before: the lead is for clock steps and
 *   restarts, not extra throughput.
 * - Clock behind by more than max_lead_ms: the excess (behind - max_lead_ms)
 *   of at most SNOWFLAKE_MAX_BACKWARDS_WAIT_MS gives LEAF_EAGAIN, wait that
 *   long; more gives LEAF_ECLOCK until the clock is back within the bound.
 *   Never a busy wait. These are milliseconds whatever the unit; with a
 *   coarse unit the floor's tick makes the wait up to one unit longer.
 *   max_lead_ms 0 (the default of a fresh generator) is the waiting
 *   behaviour of docs/reference/guarantees.md.
 *
 * Ownership: one struct per process, shared by the event loops. The caller
 * serialises every call (src/node/snowflake/snowflake_service.c holds a mutex around
 * each) except snowflake_gen_fast(), which any thread may call at any time
 * without the lock: see there.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "snowflake_id.h"
#include "status.h"

#define SNOWFLAKE_MAX_BACKWARDS_WAIT_MS 5
#define SNOWFLAKE_RANDOM_START 100 /* the most starts a tick picks from: 0..99, as Leaf */
#define SNOWFLAKE_MAX_BATCH 10000
#define SNOWFLAKE_DEFAULT_BORROW_MS 8
#define SNOWFLAKE_FAST_CLOSED UINT64_MAX /* the fast window is closed */

struct snowflake_gen {
    struct snowflake_layout layout;
    int64_t epoch;        /* ms since 1970 */
    int worker_id;        /* 0..2^worker bits - 1, or -1 while no worker ID is held */
    int64_t last_ms;      /* decoded timestamp (start of the tick) of the last ID, -1 before */
    int sequence;         /* sequence of the last issued ID */
    int start_span;       /* a new tick starts its sequence at 0..start_span-1 */
    int64_t max_seen_ms;  /* highest clock reading seen */
    int64_t floor_ms;     /* never issue at or below this (persisted history) */
    int64_t ceiling_ms;   /* never issue at or above this (persisted reservation) */
    int64_t borrow_ms;    /* how far ahead of the clock sequence exhaustion may go */
    int64_t max_lead_ms;  /* how far the logical time may run ahead of the clock (0: wait) */
    int64_t lead_wall_ms; /* clock reading when the current lead began, -1 none */
    int64_t lead_from_ms; /* the logical time then; it advances with the clock */
    uint64_t rng;         /* xorshift64 state for the random sequence start */

    /* The fast window (snowflake_gen_fast): the last ID issued in the tick
     * of the clock, while every rule above holds for more IDs of that tick
     * at that clock reading; SNOWFLAKE_FAST_CLOSED otherwise. While it is
     * open, sequence is stale and the window's ID carries the true one. */
    _Atomic uint64_t fast;
    int fast_layout; /* the layout allows a window: unit 1 ms, sequence the lowest field */
    int fast_from;   /* the sequence when the window opened (issued counts the rest at fold) */

    /* counters, read by metrics */
    uint64_t issued;
    uint64_t backwards_waits;  /* small step back: answered after a wait */
    uint64_t backwards_errors; /* large step back: refused */
    uint64_t exhaustions;      /* a tick's sequence ran out */
    uint64_t lead_issues;      /* calls answered from the lead while the clock was behind */
};

/* A generator of the default layout with no worker yet (worker_id -1), no floor and no ceiling. */
void snowflake_gen_init(struct snowflake_gen *g, int64_t epoch, uint64_t seed);

/* The same for any valid layout (snowflake_layout_parse and _set_unit); the layout is copied. */
void snowflake_gen_init_layout(struct snowflake_gen *g, const struct snowflake_layout *layout,
                               int64_t epoch, uint64_t seed);

/*
 * The largest batch snowflake_gen_next() can ever issue at once: what a
 * fresh tick and the borrowed ones hold ((max(1 tick, borrow_ms) + 1 tick)
 * x the IDs a tick surely holds), at most SNOWFLAKE_MAX_BATCH. 10000 in the
 * default layout; 512 for Sonyflake's 8-bit sequence at 10 ms.
 */
int snowflake_gen_max_batch(const struct snowflake_gen *g);

/*
 * The lock-free path: issues n ascending IDs into out at clock now_ms when
 * the fast window is open, now_ms is the window's tick and n more IDs fit
 * in its sequence; one compare-and-swap, no lock. Returns 1 when written,
 * 0 when nothing was written and the caller must take the lock and call
 * snowflake_gen_next(), which reads the clock again. Safe against every
 * other call: each call that changes the worker, floor, ceiling or lead
 * bound, or issues under the lock, closes the window first (fold), so an ID
 * from here is one that snowflake_gen_next() would have issued at that
 * moment: the same tick as the clock (no lead, no borrowed tick), above the
 * last ID, below the ceiling.
 */
int snowflake_gen_fast(struct snowflake_gen *g, int64_t now_ms, int64_t *out, int n);

/*
 * Closes the fast window and takes its last ID back into the generator's
 * state (sequence, issued). Under the caller's lock; every setter and
 * snowflake_gen_next() call it themselves. Call it before reading the
 * struct's fields directly (counters, the last sequence).
 */
void snowflake_gen_fold(struct snowflake_gen *g);

/* Sets the worker ID (0..2^worker bits - 1) or -1 to stop issuing. */
void snowflake_gen_set_worker(struct snowflake_gen *g, int worker_id);

/* Raises the floor (never lowers it). */
void snowflake_gen_set_floor(struct snowflake_gen *g, int64_t floor_ms);

/* Sets the ceiling: the first ms that is not reserved yet (INT64_MAX: none). */
void snowflake_gen_set_ceiling(struct snowflake_gen *g, int64_t ceiling_ms);

/*
 * Moves the generator to another worker ID (lease mode: a new slot after a
 * lost session or a clock step), in one call so that no caller sees a
 * half-moved state: worker, floor and ceiling are the new worker's, and
 * everything learnt from the old one (the last tick, the sequence, the
 * highest clock reading) is forgotten, since its IDs cannot collide with
 * the new worker's. Only the new floor keeps the new worker above its own
 * history. So IDs issued after a move may be below those issued before it:
 * a node is strictly increasing per worker ID, not across a switch.
 */
void snowflake_gen_move(struct snowflake_gen *g, int worker_id, int64_t floor_ms,
                        int64_t ceiling_ms);

/* Sets the bound of the lead (ms, >= 0; 0: wait for the clock instead). */
void snowflake_gen_set_max_lead(struct snowflake_gen *g, int64_t max_lead_ms);

/*
 * How far (ms) the clock now_ms is behind the highest reading seen or the
 * floor; 0 when IDs can be issued at this clock without a lead.
 */
int64_t snowflake_gen_behind(const struct snowflake_gen *g, int64_t now_ms);

/*
 * The lead: how far (ms) the generator's logical time (the last tick issued,
 * the first tick above the floor, the highest clock reading) is ahead of
 * now_ms; 0 when it is not. /ready and /metrics show it, and the node
 * persists its reservations from now_ms + lead.
 */
int64_t snowflake_gen_lead(const struct snowflake_gen *g, int64_t now_ms);

/* The highest time the generator has issued at or seen on the clock: a lease
 * switch must find a slot whose reservation starts above it. */
int64_t snowflake_gen_high(const struct snowflake_gen *g);

/*
 * Issues n (1..snowflake_gen_max_batch()) ascending IDs into out at clock
 * now_ms. Returns:
 *   LEAF_EINVAL    n out of range: above the max batch no wait would help;
 *   LEAF_OK        all n written;
 *   LEAF_EAGAIN    nothing written; retry after *wait_ms (clock a little
 *                  beyond the lead bound, or the batch does not fit in
 *                  borrow_ms or under the lead bound);
 *   LEAF_ECLOCK    nothing written; the clock is behind by more than
 *                  max_lead_ms + 5 ms; *wait_ms until it is back within
 *                  the bound;
 *   LEAF_EUNAVAIL  nothing written; no worker ID held (or one too wide for
 *                  the layout), or the reservation (ceiling) is used up;
 *   LEAF_ERANGE    nothing written; the clock is before the epoch or past
 *                  the time field's horizon.
 */
leaf_status_t snowflake_gen_next(struct snowflake_gen *g, int64_t now_ms, int64_t *out, int n,
                                 int64_t *wait_ms);

#endif
