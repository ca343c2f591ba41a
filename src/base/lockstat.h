#ifndef LEAF_LOCKSTAT_H
#define LEAF_LOCKSTAT_H

/*
 * Contention counters for a hot mutex, compiled in only with the CMake
 * option LEAFD_LOCK_STATS (-DLEAF_LOCK_STATS): how often it was taken, how
 * often it was already held, and the time spent waiting. Without the switch
 * lockstat_lock() is pthread_mutex_lock() and lockstat_log() logs nothing.
 * Used to measure what serialises the event loops (docs/BENCHMARKS.md,
 * "Scaling with cores"); the services log their figures at shutdown.
 * Any thread may take the lock; the counters are relaxed atomics.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "log.h"

struct lockstat {
    atomic_ullong taken;     /* acquisitions */
    atomic_ullong contended; /* acquisitions that found the mutex held */
    atomic_ullong wait_ns;   /* time spent waiting in those */
};

static inline void lockstat_lock(pthread_mutex_t *m, struct lockstat *s) {
#ifdef LEAF_LOCK_STATS
    if (pthread_mutex_trylock(m) != 0) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        pthread_mutex_lock(m);
        clock_gettime(CLOCK_MONOTONIC, &b);
        atomic_fetch_add_explicit(&s->contended, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(
            &s->wait_ns,
            (unsigned long long)((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)),
            memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&s->taken, 1, memory_order_relaxed);
#else
    (void)s;
    pthread_mutex_lock(m);
#endif
}

/* Logs the counters (info, under component) at shutdown: what the lock guards, and its figures. */
static inline void lockstat_log(const char *component, const char *what, struct lockstat *s) {
#ifdef LEAF_LOCK_STATS
    log_info(component, "lock stats: %s: %llu acquisitions, %llu contended, %llu ns waited", what,
             (unsigned long long)atomic_load(&s->taken),
             (unsigned long long)atomic_load(&s->contended),
             (unsigned long long)atomic_load(&s->wait_ns));
#else
    (void)component;
    (void)what;
    (void)s;
#endif
}

#endif
