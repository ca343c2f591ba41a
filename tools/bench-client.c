/*
 * libleafd-client from the inside, for tools/bench client (tools/bench-client.py builds and
 * runs it against real nodes; the figures are in docs/BENCHMARKS.md):
 *
 *   bench-client ENDPOINTS OPTIONS KEY THREADS SECONDS [key] [latency N | many N]
 *
 * Default: THREADS threads call leafd_client_next() back to back for SECONDS; prints the IDs
 * per second of all of them and the calls that failed. "many N": leafd_client_next_many() of N
 * at a time. "latency N": one thread, N calls of next(), each timed (CLOCK_MONOTONIC, the vDSO:
 * about 20 ns of it is the clock itself), refills included; prints p50, p99, p99.9, p99.99 and
 * the largest, in ns. "key": through a key looked up once (leafd_client_key_next()).
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
static leafd_client_key *handle; /* "key": the key looked up once (leafd_client_key_get) */
static _Atomic int go, stop;

struct worker {
    pthread_t t;
    int64_t ids, failed, sink;
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

static int cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_latency(int64_t n) {
    int64_t *ns = malloc((size_t)n * sizeof(*ns)), id, failed = 0;
    struct timespec a, b;
    for (int64_t i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        failed += (handle != NULL ? leafd_client_key_next(handle, &id)
                                  : leafd_client_next(client, key, &id)) != 0;
        clock_gettime(CLOCK_MONOTONIC, &b);
        ns[i] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
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

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: bench-client ENDPOINTS OPTIONS KEY THREADS SECONDS "
                        "[key] [latency N | many N]\n");
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
    /* Warm: the key exists and its first range is in before the clock starts. */
    int64_t id;
    if (leafd_client_next(client, key, &id) != 0) {
        fprintf(stderr, "first ID of %s: %s\n", key, leafd_client_strerror(-2));
        return 1;
    }
    int rc, arg = 6;
    if (argc > arg && strcmp(argv[arg], "key") == 0) {
        arg++;
        if (leafd_client_key_get(client, key, &handle) != 0)
            return 1;
    }
    if (argc > arg + 1 && strcmp(argv[arg], "latency") == 0) {
        rc = run_latency(atoll(argv[arg + 1]));
    } else {
        if (argc > arg + 1 && strcmp(argv[arg], "many") == 0)
            many = atoll(argv[arg + 1]);
        rc = run_throughput(atoi(argv[4]));
    }
    leafd_client_close(client);
    return rc;
}
