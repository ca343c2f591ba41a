#ifndef LEAF_SEGMENT_BUFFER_H
#define LEAF_SEGMENT_BUFFER_H

/*
 * The double buffer of one business tag, as pure arithmetic: no locks, no
 * clock, no database. The caller (src/node/segment/segment_service.c) holds the tag's
 * mutex around every call and passes monotonic milliseconds in.
 *
 * Ranges come from `UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(max_id + n)`:
 * the new max_id M reserves [M - n, M), as Leaf's SegmentIDGenImpl (value =
 * maxId - step, max = maxId). Ranges are kept in a small ring: ranges[head]
 * is the current one, the next is what Leaf calls the other buffer. The ring
 * has room for more than two so that a batch bigger than both buffers can
 * be met by one extra, larger reservation instead of never being met.
 *
 * Rules, all here and nowhere else:
 * - take() is all-or-nothing: a request for more IDs than are buffered
 *   consumes nothing, records the demand and gets LEAF_EAGAIN;
 * - a fetch is wanted when nothing is buffered, when a refused demand
 *   exceeds what is buffered, or when only one range is left and 10% of it
 *   is used (Leaf's idle < 90% of step);
 * - at most one fetch is in flight (begin_fetch() .. install()/fetch_failed());
 * - the first two fetches use the table's step (as Leaf); later ones the
 *   dynamic step of segment_step.h, timed from the previous install.
 */
#include <stdint.h>

#include "status.h"

#define SEGMENT_MAX_RANGES 4

struct segment_range {
    int64_t start; /* first ID of the range as reserved */
    int64_t next;  /* next ID to issue */
    int64_t end;   /* one past the last ID */
};

struct segment_buffer {
    struct segment_range ranges[SEGMENT_MAX_RANGES]; /* ring; ranges[head] is current */
    int head;
    int nranges;
    int64_t available;        /* sum of end - next over the ring */
    int fetching;             /* a fetch is in flight */
    int64_t fetch_step;       /* dynamic step chosen for the fetch in flight */
    int64_t step;             /* step of the last fetch (Leaf's buffer.step) */
    int64_t min_step;         /* the table's step */
    int64_t last_fetch_ms;    /* monotonic ms of the last install, -1 = none */
    int64_t demand;           /* largest count refused since the last install */
    int64_t high;             /* end of the highest range installed: later ranges start above */
    uint64_t fetches;         /* successful fetches */
    uint64_t issued;          /* IDs handed out */
    uint64_t skipped;         /* IDs passed over by take_dense(), never issued */
    uint64_t issued_at_fetch; /* issued at the last install (rate estimate) */
    double last_rate;         /* IDs/s between the last two installs */
};

void segment_buffer_init(struct segment_buffer *b, int64_t min_step);

/* The table's step changed (or was read again): a new value resets the dynamic step. */
void segment_buffer_set_min_step(struct segment_buffer *b, int64_t min_step);

/* Drops every buffered range (the tag left the table); a fetch in flight stays in flight. */
void segment_buffer_clear(struct segment_buffer *b);

/* Writes count ascending IDs to ids: LEAF_OK, or LEAF_EAGAIN and nothing consumed. */
leaf_status_t segment_buffer_take(struct segment_buffer *b, int count, int64_t *ids);

/*
 * Takes count consecutive IDs from one range (RESP INCRBY): *last is the
 * highest, the caller owns *last - count + 1 .. *last. A range with fewer
 * than count IDs left is skipped to the next range that holds count; the
 * IDs skipped are never issued (counted in skipped). LEAF_EAGAIN when no
 * buffered range holds count: nothing is consumed or skipped, and the
 * demand makes the next fetch at least count IDs long.
 */
leaf_status_t segment_buffer_take_dense(struct segment_buffer *b, int count, int64_t *last);

/* 1 when a fetch should start now (see the rules above). */
int segment_buffer_need_fetch(const struct segment_buffer *b);

/* Marks a fetch in flight and returns how many IDs to reserve (>= 1). */
int64_t segment_buffer_begin_fetch(struct segment_buffer *b, int64_t now_ms);

/*
 * Installs the range [new_max - size, new_max) reserved by the fetch in
 * flight. IDs below 1, and IDs at or below a range installed before (max_id
 * lowered by hand), are never issued: the range is clipped. LEAF_EINVAL when
 * no fetch was in flight or nothing is left of the range (nothing
 * installed; the fetch ends anyway).
 */
leaf_status_t segment_buffer_install(struct segment_buffer *b, int64_t new_max, int64_t size,
                                     int64_t now_ms);

/* The fetch in flight failed; the next request may start another. */
void segment_buffer_fetch_failed(struct segment_buffer *b);

/*
 * IDs per second recently handed out: since the last install when that is at
 * least a second ago, else over the interval between the last two installs.
 */
double segment_buffer_rate(const struct segment_buffer *b, int64_t now_ms);

/*
 * The unused IDs this node could give back to leaf_alloc (zero waste):
 * [*first_unused, *last_end), where last_end is the end of the last range
 * installed (what max_id still is if no one reserved since) and
 * first_unused is where the unused tail of the buffered ranges begins: the
 * next ID of the current range, extended over every later range that
 * follows the one before it without a gap. When another node reserved a
 * range between two of ours, only the ranges above that gap count (the
 * IDs below it cannot be handed back through max_id). Returns 1, or 0 and
 * nothing set when nothing is buffered. A fetch in flight does not matter
 * here: if its UPDATE ran, max_id is no longer *last_end.
 */
int segment_buffer_unused_tail(const struct segment_buffer *b, int64_t *first_unused,
                               int64_t *last_end);

#endif
