#ifndef LEAF_CLOCK_H
#define LEAF_CLOCK_H

/*
 * The two clocks of leafd, one helper each (libc only).
 *
 * - Wall clock (CLOCK_REALTIME): what ID timestamps are made of. It may step
 *   backwards or forwards; the snowflake clock policy deals with that.
 * - Monotonic clock (CLOCK_MONOTONIC): leases, timeouts, latencies. It never
 *   steps, so a wait measured on it is a real wait. libuv's uv_now() and
 *   uv_hrtime() read the same clock, so values compare with loop times.
 *
 * Any thread may call these.
 */
#include <stdint.h>

/* Milliseconds since 1970 on the wall clock. */
int64_t clock_wall_ms(void);

/* Monotonic milliseconds and nanoseconds (same origin as uv_hrtime()). */
int64_t clock_mono_ms(void);
int64_t clock_mono_ns(void);

/* An injected clock for pure code under test: returns milliseconds. */
typedef int64_t (*clock_fn)(void);

#endif
