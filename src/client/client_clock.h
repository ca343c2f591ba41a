#ifndef CLIENT_CLOCK_H
#define CLIENT_CLOCK_H

/*
 * The library's clock for timeouts, backoffs and the prefetch window: CLOCK_MONOTONIC in
 * milliseconds (a wall clock step moves no deadline). One definition for every file of the
 * handle; the pure parts take the time as an argument instead (client_node.h, client_prefetch.h).
 */
#include <stdint.h>
#include <time.h>

static inline int64_t client_clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif
