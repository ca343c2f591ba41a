#ifndef LEAF_LEAFD_H
#define LEAF_LEAFD_H

/*
 * The process-wide state, one instance (`leafd`), as early Redis's `server`.
 *
 * Ownership: main() fills it before the HTTP threads start. After that:
 * - cfg is read-only;
 * - gen is shared by every event loop and guarded by gen_lock;
 * - the atomics are written by the control thread (main) and read anywhere.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "snowflake_gen.h"
#include "config.h"

#define LEAFD_VERSION "0.1.0"

struct http_server;

struct leafd {
    struct leaf_config cfg;
    struct http_server *http;
    int64_t started_ms; /* CLOCK_REALTIME at start */

    pthread_mutex_t gen_lock;
    struct snowflake_gen gen; /* guarded by gen_lock */
    atomic_int snowflake_ready; /* worker held and clock checked */
    int snowflake_static;       /* static worker mode: not coordinated */
};

extern struct leafd leafd;

/*
 * The control loop, run by the main thread: signals, the once-a-second cron,
 * and the asyncs through which the ZooKeeper and database threads hand
 * results back. Subsystems add their handles to it during start-up.
 */
struct uv_loop_s *leafd_control_loop(void);

/* Wall-clock ms (CLOCK_REALTIME): what ID timestamps are made of. */
int64_t leafd_wall_ms(void);

#endif
