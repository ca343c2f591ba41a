#ifndef LEAF_SEGMENT_STEP_H
#define LEAF_SEGMENT_STEP_H

/*
 * Leaf's dynamic step (double under 15 min, halve over 30 min), as a pure function of the time
 * between two range fetches. The caller passes monotonic milliseconds, so
 * tests drive it with any clock they like.
 *
 * Rule (Leaf's SegmentIDGenImpl.updateSegmentFromDb, with two deliberate
 * tightenings, both documented in the README):
 * - the previous range lasted under 15 min: double the step, capped at
 *   SEGMENT_STEP_MAX (Leaf refuses to double past the cap and so can stop
 *   at 512000; we stop at the cap itself);
 * - 15 to 30 min: keep it;
 * - 30 min or more: halve it, but never below the table's step (Leaf keeps
 *   the old step when half of it would be below the table's step; we clamp
 *   to the table's step).
 * The table's step is always the floor, even above the cap.
 */
#include <stdint.h>

#define SEGMENT_STEP_MAX 1000000
#define SEGMENT_STEP_DURATION_MS (15LL * 60 * 1000)

/* The step for the next fetch; min_step is the table's step (>= 1). */
int64_t segment_step_next(int64_t step, int64_t min_step, int64_t since_last_ms);

#endif
