/*
 * The generator's batch throughput against the layout's limit, with and
 * without the bounded lead: count=1000 batches back to back on the real
 * clock for a few seconds, EAGAIN answered by waiting for the next clock
 * millisecond (as the HTTP layer's timer does). Pure code, no server: what
 * the lead could change is the generator, not the HTTP path.
 *
 * cc -O2 -Isnowflake -Isrc/base -o /tmp/bench-gen tools/benchmarks/bench-gen.c \
 *    snowflake/snowflake_gen.c snowflake/snowflake_id.c src/base/num.c && /tmp/bench-gen 5
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snowflake_gen.h"

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double run(int64_t lead_ms, int seconds) {
    static int64_t ids[1000];
    struct snowflake_gen g;
    snowflake_gen_init(&g, SNOWFLAKE_DEFAULT_EPOCH, 1);
    snowflake_gen_set_worker(&g, 1);
    snowflake_gen_set_max_lead(&g, lead_ms);
    int64_t start = wall_ms(), end = start + seconds * 1000, issued = 0, wait, now;
    while ((now = wall_ms()) < end) {
        if (snowflake_gen_next(&g, now, ids, 1000, &wait) == LEAF_OK) {
            issued += 1000;
        } else {
            while (wall_ms() < now + (wait > 0 ? wait : 1)) {
            }
        }
    }
    return (double)issued / (double)(wall_ms() - start) * 1000.0;
}

int main(int argc, char **argv) {
    int seconds = argc > 1 ? atoi(argv[1]) : 5;
    double limit = 4096000.0;
    /* alternating, so that a noisy neighbour hurts both alike */
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 2; k++) {
            int64_t lead = (round + k) % 2 ? 0 : 5000;
            double r = run(lead, seconds);
            printf("count=1000, %d s, max.lead.ms %-4lld: %.0f IDs/s (%.1f%% of 4.096M)\n", seconds,
                   (long long)lead, r, 100.0 * r / limit);
        }
    }
    return 0;
}
