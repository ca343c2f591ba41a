/*
 * libleafd-client from the inside, for tools/bench client
 * (tools/benchmarks/bench-client.py builds and runs it against real nodes;
 * the figures are in docs/BENCHMARKS.md):
 *
 *   bench-client ENDPOINTS OPTIONS KEY THREADS SECONDS [key] [latency N | many N | steady W [R]]
 *
 * Default: THREADS threads call leafd_client_next() back to back for SECONDS; prints the IDs
 * per second of all of them and the calls that failed. "many N": leafd_client_next_many() of N
 * at a time. "latency N": one thread, N calls of next(), each timed (CLOCK_MONOTONIC, the vDSO:
 * about 20 ns of it is the clock itself), refills included; prints p50, p99, p99.9, p99.99 and
 * the largest, in ns. "key": through a key looked up once (leafd_client_key_next()).
 *
 * "steady W": the steady state. THREADS threads call next() back to back, each call timed, for
 * SECONDS from the key's first use; the first W seconds (the prefetch distance ramping up from
 * prefetch.min) are taken but not counted. Of the rest: the calls, the largest latency, the
 * calls over 100 us, 1 ms and 10 ms, and the decisive figure, the calls that waited for the
 * refill thread (leafd_client_key_waits(), the library's own count). A slow call during which
 * that count did not move did not wait for the network: it was preempted (with one thread the
 * attribution is exact; with more, another thread's wait may land in a call's window).
 * "steady W R": each thread paced at R calls a second (a steady rate below the most), a thread
 * that fell behind (preempted) carrying on from now rather than catching up in a burst.
 */
#include <inttypes.h>
#include <leafd/client.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static leafd_client *client;
static const char *key;
static double seconds;
static int64_t many;
static leafd_client_key *handle;  /* "key": the key looked up once (leafd_client_key_get) */
static leafd_client_key *counted; /* the same key, for leafd_client_key_waits() */
static _Atomic int go, stop;
static double key_born, warmup; /* steady: the key's first use; seconds not counted after it */
static double pace;             /* steady: calls a second per thread (0: back to back) */

struct worker {
    pthread_t t;
    int64_t ids, failed, sink;
    /* steady: */
    int64_t calls, max_ns, max_waited_ns, max_unwaited_ns, over_100us, over_1ms, over_10ms;
    int64_t waited_calls; /* calls during which the count of waits moved */
    int64_t ramp_max_ns;  /* the largest latency in the warm-up, not counted */
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *work(void *arg) {
    struct worker *w = arg;
    int64_t buf[4096], id = 0;
    while (!atomic_load_explicit(&go, memory_order_acquire))
        ;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        /* Checks the clock only every 4096 calls: the loop is the call. */
        for (int i = 0; i < 4096; i++) {
            if (many > 0) {
                if ((handle != NULL ? leafd_client_key_next_many(handle, buf, (size_t)many)
                                    : leafd_client_next_many(client, key, buf, (size_t)many)) != 0)
                    w->failed++;
                else
                    w->ids += many;
            } else if (handle != NULL ? leafd_client_key_next(handle, &id) != 0
                                      : leafd_client_next(client, key, &id) != 0) {
                w->failed++;
            } else {
                w->ids++;
                w->sink ^= id;
            }
        }
    }
    return NULL;
}

static int run_throughput(int threads) {
    struct worker *w = calloc((size_t)threads, sizeof(*w));
    for (int i = 0; i < threads; i++)
        pthread_create(&w[i].t, NULL, work, &w[i]);
    double t0 = now_s();
    atomic_store(&go, 1);
    while (now_s() - t0 < seconds) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&stop, 1);
    int64_t ids = 0, failed = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].t, NULL);
        ids += w[i].ids;
        failed += w[i].failed;
    }
    double secs = now_s() - t0;
    printf("{\"threads\":%d,\"many\":%" PRId64 ",\"ids\":%" PRId64 ",\"failed\":%" PRId64
           ",\"seconds\":%.3f,\"ids_per_s\":%.0f}\n",
           threads, many, ids, failed, secs, ids / secs);
    free(w);
    return failed ? 1 : 0;
}

static int64_t elapsed_ns(const struct timespec *a, const struct timespec *b) {
    return (b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

static int take_one(int64_t *id) {
    return handle != NULL ? leafd_client_key_next(handle, id) : leafd_client_next(client, key, id);
}

/* Records one counted call of the steady state. */
static void steady_note(struct worker *w, int64_t ns, int waited) {
    w->calls++;
    w->max_ns = ns > w->max_ns ? ns : w->max_ns;
    w->over_100us += ns > 100000;
    w->over_1ms += ns > 1000000;
    w->over_10ms += ns > 10000000;
    if (waited) {
        w->waited_calls++;
        w->max_waited_ns = ns > w->max_waited_ns ? ns : w->max_waited_ns;
    } else if (ns > w->max_unwaited_ns) {
        w->max_unwaited_ns = ns;
    }
}

static void *steady_work(void *arg) {
    struct worker *w = arg;
    int64_t id;
    struct timespec a, b;
    double start = key_born + warmup, end = key_born + seconds, due = 0;
    while (!atomic_load_explicit(&go, memory_order_acquire))
        ;
    for (;;) {
        if (pace > 0) {
            double t = now_s();
            if (due < t - 0.001)
                due = t; /* fell behind: no burst to catch up */
            while (t < due)
                t = now_s();
            due += 1 / pace;
        }
        uint64_t before = leafd_client_key_waits(counted);
        clock_gettime(CLOCK_MONOTONIC, &a);
        int rc = take_one(&id);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double t = b.tv_sec + b.tv_nsec / 1e9;
        if (t >= end)
            break;
        w->sink ^= id;
        if (t < start) {
            int64_t ns = elapsed_ns(&a, &b);
            w->ramp_max_ns = ns > w->ramp_max_ns ? ns : w->ramp_max_ns;
            continue;
        }
        w->failed += rc != 0;
        steady_note(w, elapsed_ns(&a, &b), leafd_client_key_waits(counted) != before);
    }
    return NULL;
}

static int run_steady(int threads) {
    struct worker *w = calloc((size_t)threads, sizeof(*w)), all = {0};
    for (int i = 0; i < threads; i++)
        pthread_create(&w[i].t, NULL, steady_work, &w[i]);
    /* The waits of the counted part: from the end of the warm-up to the end of the run. */
    atomic_store(&go, 1);
    while (now_s() < key_born + warmup) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    uint64_t waits0 = leafd_client_key_waits(counted);
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].t, NULL);
        all.calls += w[i].calls;
        all.failed += w[i].failed;
        all.over_100us += w[i].over_100us;
        all.over_1ms += w[i].over_1ms;
        all.over_10ms += w[i].over_10ms;
        all.waited_calls += w[i].waited_calls;
        all.max_ns = w[i].max_ns > all.max_ns ? w[i].max_ns : all.max_ns;
        all.ramp_max_ns = w[i].ramp_max_ns > all.ramp_max_ns ? w[i].ramp_max_ns : all.ramp_max_ns;
        all.max_waited_ns =
            w[i].max_waited_ns > all.max_waited_ns ? w[i].max_waited_ns : all.max_waited_ns;
        all.max_unwaited_ns =
            w[i].max_unwaited_ns > all.max_unwaited_ns ? w[i].max_unwaited_ns : all.max_unwaited_ns;
    }
    uint64_t waits = leafd_client_key_waits(counted) - waits0;
    /* The warm-up's own figures, for the ramp: its waits include the key's first call's. */
    printf("{\"threads\":%d,\"pace\":%.0f,\"warmup_s\":%.1f,\"ramp_waits\":%" PRIu64
           ",\"ramp_max_ns\":%" PRId64 ",\"counted_s\":%.1f,\"calls\":%" PRId64
           ",\"failed\":%" PRId64 ",\"max_ns\":%" PRId64 ",\"over_100us\":%" PRId64
           ",\"over_1ms\":%" PRId64 ",\"over_10ms\":%" PRId64 ",\"waits\":%" PRIu64
           ",\"waited_calls\":%" PRId64 ",\"max_waited_ns\":%" PRId64
           ",\"max_unwaited_ns\":%" PRId64 "}\n",
           threads, pace, warmup, waits0, all.ramp_max_ns, seconds - warmup, all.calls, all.failed,
           all.max_ns, all.over_100us, all.over_1ms, all.over_10ms, waits, all.waited_calls,
           all.max_waited_ns, all.max_unwaited_ns);
    free(w);
    return all.failed ? 1 : 0;
}

static int cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_latency(int64_t n) {
    int64_t *ns = malloc((size_t)n * sizeof(*ns)), id, failed = 0;
    struct timespec a, b;
    for (int64_t i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        failed += take_one(&id) != 0;
        clock_gettime(CLOCK_MONOTONIC, &b);
        ns[i] = elapsed_ns(&a, &b);
    }
    qsort(ns, (size_t)n, sizeof(*ns), cmp);
    printf("{\"calls\":%" PRId64 ",\"failed\":%" PRId64 ",\"p50_ns\":%" PRId64
           ",\"p99_ns\":%" PRId64 ",\"p999_ns\":%" PRId64 ",\"p9999_ns\":%" PRId64
           ",\"max_ns\":%" PRId64 "}\n",
           n, failed, ns[n / 2], ns[n * 99 / 100], ns[n * 999 / 1000], ns[n * 9999 / 10000],
           ns[n - 1]);
    free(ns);
    return failed ? 1 : 0;
}

static void log_line(void *arg, const char *line) {
    (void)arg;
    fprintf(stderr, "bench-client: %.3f s: %s\n", now_s() - key_born, line);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: bench-client ENDPOINTS OPTIONS KEY THREADS SECONDS "
                        "[key] [latency N | many N | steady W [R]]\n");
        return 2;
    }
    char err[256];
    key = argv[3];
    seconds = atof(argv[5]);
    client = leafd_client_open(argv[1], argv[2], err, sizeof(err));
    if (client == NULL) {
        fprintf(stderr, "leafd_client_open: %s\n", err);
        return 2;
    }
    /* The library's lines (a node fails or comes back) marked as the run's, with its time. */
    leafd_client_set_log(client, log_line, NULL);
    /* Warm: the key exists and its first range is in before the clock starts. */
    int64_t id;
    key_born = now_s();
    int first = leafd_client_next(client, key, &id);
    if (first != 0) {
        fprintf(stderr, "first ID of %s: %s (%s)\n", key, leafd_client_strerror(first),
                leafd_client_error(client));
        return 1;
    }
    if (leafd_client_key_get(client, key, &counted) != 0)
        return 1;
    int rc, arg = 6;
    if (argc > arg && strcmp(argv[arg], "key") == 0) {
        arg++;
        if (leafd_client_key_get(client, key, &handle) != 0)
            return 1;
    }
    if (argc > arg + 1 && strcmp(argv[arg], "latency") == 0) {
        rc = run_latency(atoll(argv[arg + 1]));
    } else if (argc > arg + 1 && strcmp(argv[arg], "steady") == 0) {
        warmup = atof(argv[arg + 1]);
        pace = argc > arg + 2 ? atof(argv[arg + 2]) : 0;
        rc = run_steady(atoi(argv[4]));
    } else {
        if (argc > arg + 1 && strcmp(argv[arg], "many") == 0)
            many = atoll(argv[arg + 1]);
        rc = run_throughput(atoi(argv[4]));
    }
    leafd_client_close(client);
    return rc;
}
