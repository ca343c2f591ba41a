#ifndef LEAF_SNOWFLAKE_ID_H
#define LEAF_SNOWFLAKE_ID_H

/*
 * The snowflake bit layout, as Leaf and Twitter:
 *   1 sign bit (0) | 41 bits ms since the epoch | 10 bits worker | 12 bits sequence
 * Pure code: no I/O, no clock.
 */
#include <stdint.h>

#define SNOWFLAKE_TIMESTAMP_BITS 41
#define SNOWFLAKE_WORKER_BITS 10
#define SNOWFLAKE_SEQUENCE_BITS 12
#define SNOWFLAKE_MAX_TIMESTAMP ((INT64_C(1) << SNOWFLAKE_TIMESTAMP_BITS) - 1)
#define SNOWFLAKE_MAX_WORKER ((1 << SNOWFLAKE_WORKER_BITS) - 1)
#define SNOWFLAKE_MAX_SEQUENCE ((1 << SNOWFLAKE_SEQUENCE_BITS) - 1)
#define SNOWFLAKE_DEFAULT_EPOCH INT64_C(1288834974657)

struct snowflake_parts {
    int64_t timestamp_ms; /* absolute: ms since 1970 (epoch added back) */
    int worker_id;
    int sequence;
};

/* Builds an ID from a timestamp relative to the epoch (0..2^41-1). */
static inline int64_t snowflake_id_make(int64_t rel_ms, int worker_id, int sequence) {
    return (rel_ms << (SNOWFLAKE_WORKER_BITS + SNOWFLAKE_SEQUENCE_BITS)) |
           ((int64_t)worker_id << SNOWFLAKE_SEQUENCE_BITS) | (int64_t)sequence;
}

/* Splits an ID; returns 0, or -1 for a negative ID (never issued). */
int snowflake_id_decode(int64_t id, int64_t epoch, struct snowflake_parts *out);

/* Years left before the 41-bit timestamp runs out, at clock now_ms. */
double snowflake_id_years_left(int64_t epoch, int64_t now_ms);

#endif
