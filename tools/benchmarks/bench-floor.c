/*
 * The machine's floor for strict keys (tools/bench strict): what N blocking callers can reach on
 * this machine when nothing serves them at all.
 *
 * A strict call may not use an ID fetched before it began (docs/man/leafd_client.3, "STRICT
 * KEYS"), so every call waits for a batch taken after it began and is woken when the batch is
 * answered. Here the "answer" is immediate: one thread takes the batch (all calls waiting) and
 * wakes them with one FUTEX_WAKE, as libleafd-client's leader does, with no server, no socket, no
 * parsing. What is left is the cost of a thread going to sleep and being woken, per call: the
 * most a batching client of blocking callers can do on this machine, whatever the server.
 *
 * usage: bench-floor CALLERS SECONDS
 * Prints one JSON line: ids_per_s, calls, round_trips (batches), cpu_us_per_call.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint32_t gen;    /* the batch generation the callers sleep on */
static _Atomic int64_t waiting; /* calls that joined since the last batch was taken */
static _Atomic int64_t calls, batches;
static _Atomic int stop;

static void futex(_Atomic uint32_t *word, int op, uint32_t val) {
    syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static void *caller(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        uint32_t g = atomic_load(&gen);
        atomic_fetch_add(&waiting, 1);
        while (atomic_load(&gen) == g && !atomic_load(&stop)) {
            futex(&gen, FUTEX_WAIT_PRIVATE, g);
        }
        atomic_fetch_add(&calls, 1);
    }
    return NULL;
}

/* Takes every waiting call as one batch and wakes them all at once. */
static void *leader(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        if (atomic_exchange(&waiting, 0) == 0) {
            sched_yield();
            continue;
        }
        atomic_fetch_add(&gen, 1);
        atomic_fetch_add(&batches, 1);
        futex(&gen, FUTEX_WAKE_PRIVATE, INT32_MAX);
    }
    return NULL;
}

static double seconds_of(struct timeval tv) {
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench-floor CALLERS SECONDS\n");
        return 2;
    }
    int n = atoi(argv[1]);
    double secs = atof(argv[2]);
    if (n < 1 || n > 4096 || secs <= 0) {
        fprintf(stderr, "bench-floor: CALLERS 1..4096, SECONDS > 0\n");
        return 2;
    }
    pthread_t lead, *t = calloc((size_t)n, sizeof(*t));
    if (t == NULL) {
        return 1;
    }
    pthread_create(&lead, NULL, leader, NULL);
    for (int i = 0; i < n; i++) {
        pthread_create(&t[i], NULL, caller, NULL);
    }
    struct timespec warm = {0, 300 * 1000 * 1000}, a, b;
    nanosleep(&warm, NULL);
    struct rusage r0, r1;
    int64_t c0 = atomic_load(&calls), b0 = atomic_load(&batches);
    getrusage(RUSAGE_SELF, &r0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct timespec run = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&run, NULL);
    int64_t c1 = atomic_load(&calls), b1 = atomic_load(&batches);
    getrusage(RUSAGE_SELF, &r1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    double cpu = seconds_of(r1.ru_utime) - seconds_of(r0.ru_utime) + seconds_of(r1.ru_stime) -
                 seconds_of(r0.ru_stime);
    int64_t done = c1 - c0;
    printf("{\"ids_per_s\": %.0f, \"calls\": %lld, \"round_trips\": %lld, \"failed\": 0, "
           "\"p50_us\": 0, \"p99_us\": 0, \"p999_us\": 0, \"cpu_us_per_call\": %.2f}\n",
           (double)done / el, (long long)done, (long long)(b1 - b0),
           done ? cpu * 1e6 / (double)done : 0.0);
    fflush(stdout);
    _exit(0); /* the callers sleep in the kernel; no need to wake and join them */
}
