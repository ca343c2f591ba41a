#include "segment_step.h"

int64_t segment_step_next(int64_t step, int64_t min_step, int64_t since_last_ms) {
    if (min_step < 1) {
        min_step = 1;
    }
    if (step < min_step) {
        step = min_step;
    }
    int64_t next = step;
    if (since_last_ms < SEGMENT_STEP_DURATION_MS) {
        next = step * 2;
    } else if (since_last_ms >= 2 * SEGMENT_STEP_DURATION_MS) {
        next = step / 2;
    }
    if (next > SEGMENT_STEP_MAX) {
        next = SEGMENT_STEP_MAX;
    }
    return next < min_step ? min_step : next;
}
