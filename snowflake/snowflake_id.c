#include "snowflake_id.h"

int snowflake_id_decode(int64_t id, int64_t epoch, struct snowflake_parts *out) {
    if (id < 0) {
        return -1;
    }
    out->sequence = (int)(id & SNOWFLAKE_MAX_SEQUENCE);
    out->worker_id = (int)((id >> SNOWFLAKE_SEQUENCE_BITS) & SNOWFLAKE_MAX_WORKER);
    out->timestamp_ms = (id >> (SNOWFLAKE_WORKER_BITS + SNOWFLAKE_SEQUENCE_BITS)) + epoch;
    return 0;
}

double snowflake_id_years_left(int64_t epoch, int64_t now_ms) {
    int64_t left_ms = epoch + SNOWFLAKE_MAX_TIMESTAMP - now_ms;
    return (double)left_ms / (365.25 * 24 * 3600 * 1000.0);
}
