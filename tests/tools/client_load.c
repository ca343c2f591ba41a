/*
 * Takes IDs from libleafd-client in threads and checks them, for the client's
 * integration tests (tests/integration/test_client_*.py):
 *
 *   client_load ENDPOINTS OPTIONS KEY THREADS COUNT [--batch N] [--pace N US] [--out PREFIX]
 *               [--progress] [--outage] [--flush N] [--fork MS]
 *
 * Each thread takes COUNT IDs (one per call, or N per call with --batch), sleeping US
 * microseconds after every N IDs with --pace, and writes them as it goes to PREFIX.<thread>
 * (8-byte IDs, one write per 4096) with --out. --progress prints "progress <ids>" at every
 * tenth. At the end one JSON line: ids, failed calls (and the first error), IDs repeated across
 * all threads, IDs not above the thread's previous one, seconds.
 *
 * --outage (one thread): takes IDs until stdin says "stopped" (the test stopped every node),
 * then until the first error, printing "error <code> served <ids since stopped>"; then tries
 * every 20 ms until stdin says "started" and a call succeeds: "recovered <ms>". Bounded: 90 s.
 *
 * --flush N writes the IDs every N instead of 4096 (a process killed with -9 loses fewer).
 * --fork MS: MS milliseconds in, a thread forks while the workers take IDs; the child goes on
 * with the parent's handle (docs/man/leafd_client.3, "FORK") in THREADS workers of its own,
 * writing to PREFIX.child<pid>.<thread>, and the parent waits for it at the end. The chaos test
 * (tests/chaos/chaos_client_lib.py) kills both with -9 at random and checks every ID written.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <leafd/client.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static leafd_client *client;
static const char *key, *out_prefix;
static int64_t count, batch = 1, pace_every, pace_us, progress_step, flush_every = 4096;
static int fork_threads;
static _Atomic pid_t forked_child;
static _Atomic int64_t total;
static _Atomic int stopped, started;

struct worker {
    int i;
    pthread_t t;
    int64_t *ids, n, failed, disorder;
    int first_error;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void flush_ids(int fd, const int64_t *ids, int64_t n) {
    if (fd >= 0 && n > 0 && write(fd, ids, (size_t)n * sizeof(*ids)) < 0) {
        perror("write");
    }
}

static void *work(void *arg) {
    struct worker *w = arg;
    int fd = -1;
    int64_t flushed = 0, last = INT64_MIN, since_pace = 0;
    if (out_prefix != NULL) {
        char path[512];
        snprintf(path, sizeof(path), "%s.%d", out_prefix, w->i);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    }
    while (w->n < count) {
        int64_t want = batch < count - w->n ? batch : count - w->n;
        int rc = want == 1 ? leafd_client_next(client, key, &w->ids[w->n])
                           : leafd_client_next_many(client, key, &w->ids[w->n], (size_t)want);
        if (rc != 0) {
            if (w->failed++ == 0) {
                w->first_error = rc;
            }
            usleep(10000);
            if (w->failed > 1000) {
                break;
            }
            continue;
        }
        for (int64_t k = 0; k < want; k++) {
            w->disorder += w->ids[w->n + k] <= last;
            last = w->ids[w->n + k];
        }
        w->n += want;
        int64_t t = atomic_fetch_add(&total, want) + want;
        if (progress_step > 0 && t / progress_step != (t - want) / progress_step) {
            printf("progress %" PRId64 "\n", t);
            fflush(stdout);
        }
        if (w->n - flushed >= flush_every) {
            flush_ids(fd, w->ids + flushed, w->n - flushed);
            flushed = w->n;
        }
        if (pace_every > 0 && (since_pace += want) >= pace_every) {
            since_pace = 0;
            usleep((useconds_t)pace_us);
        }
    }
    flush_ids(fd, w->ids + flushed, w->n - flushed);
    if (fd >= 0) {
        close(fd);
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_load(int threads) {
    struct worker *w = calloc((size_t)threads, sizeof(*w));
    double t0 = now_s();
    for (int i = 0; i < threads; i++) {
        w[i].i = i;
        w[i].ids = malloc((size_t)count * sizeof(int64_t));
        pthread_create(&w[i].t, NULL, work, &w[i]);
    }
    int64_t n = 0, failed = 0, disorder = 0, dups = 0;
    int first_error = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].t, NULL);
        n += w[i].n;
        failed += w[i].failed;
        disorder += w[i].disorder;
        if (first_error == 0) {
            first_error = w[i].first_error;
        }
    }
    double secs = now_s() - t0;
    int64_t *all = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t)), k = 0;
    for (int i = 0; i < threads; i++) {
        memcpy(all + k, w[i].ids, (size_t)w[i].n * sizeof(int64_t));
        k += w[i].n;
        free(w[i].ids);
    }
    qsort(all, (size_t)n, sizeof(*all), cmp);
    for (int64_t i = 1; i < n; i++) {
        dups += all[i] == all[i - 1];
    }
    printf("{\"ids\":%" PRId64 ",\"failed\":%" PRId64 ",\"first_error\":%d,\"dups\":%" PRId64
           ",\"disorder\":%" PRId64 ",\"seconds\":%.3f,\"min\":%" PRId64 ",\"max\":%" PRId64 "}\n",
           n, failed, first_error, dups, disorder, secs, n ? all[0] : 0, n ? all[n - 1] : 0);
    free(all);
    free(w);
    return 0;
}

static void *read_stdin(void *arg) {
    char line[64];
    while (fgets(line, sizeof(line), stdin) != NULL) {
        if (strncmp(line, "stopped", 7) == 0) {
            atomic_store(&stopped, 1);
        }
        if (strncmp(line, "started", 7) == 0) {
            atomic_store(&started, 1);
        }
    }
    return NULL;
}

static int run_outage(void) {
    pthread_t t;
    pthread_create(&t, NULL, read_stdin, NULL);
    pthread_detach(t);
    int64_t id, served = 0, paced = 0, last = INT64_MIN, disorder = 0;
    double end = now_s() + 90, t_err = 0;
    int rc = 0, phase = 0; /* 0 serving, 1 nodes stopped, 2 failed, 3 recovered */
    while (phase < 3 && now_s() < end) {
        int was_stopped = atomic_load(&stopped);
        rc = leafd_client_next(client, key, &id);
        if (rc == 0) {
            disorder += id <= last;
            last = id;
            if (phase == 1 || (phase == 0 && was_stopped)) {
                phase = 1;
                served++;
            } else if (phase == 2 && atomic_load(&started)) {
                printf("recovered %.0f\n", (now_s() - t_err) * 1000);
                phase = 3;
            }
            /* Paced while the nodes serve; the buffer is drained at full speed once they
             * are stopped (a sleep per ID stretches to milliseconds on a loaded machine). */
            if (phase == 0 && ++paced % 10 == 0) {
                usleep(100);
            }
        } else if (phase == 1 || (phase == 0 && was_stopped)) {
            printf("error %d served %" PRId64 "\n", rc, served);
            fflush(stdout);
            t_err = now_s();
            phase = 2;
        } else if (phase == 0) {
            printf("early error %d\n", rc);
            usleep(20000);
        } else {
            usleep(20000);
        }
        fflush(stdout);
    }
    printf("{\"phase\":%d,\"last_rc\":%d,\"disorder\":%" PRId64 "}\n", phase, rc, disorder);
    return phase == 3 ? 0 : 1;
}

/* --fork: the child's workers on the parent's handle, writing under a prefix of their own. */
static void *fork_after(void *arg) {
    usleep((useconds_t)(intptr_t)arg * 1000);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return NULL;
    }
    if (pid > 0) {
        atomic_store(&forked_child, pid);
        return NULL;
    }
    static char prefix[512];
    snprintf(prefix, sizeof(prefix), "%s.child%d", out_prefix ? out_prefix : "ids", (int)getpid());
    out_prefix = prefix;
    atomic_store(&total, 0);
    run_load(fork_threads);
    fflush(stdout);
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: client_load ENDPOINTS OPTIONS KEY THREADS COUNT [flags]\n");
        return 2;
    }
    int threads = atoi(argv[4]), outage = 0, fork_ms = 0;
    key = argv[3];
    count = atoll(argv[5]);
    for (int i = 6; i < argc; i++) {
        if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            batch = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--pace") == 0 && i + 2 < argc) {
            pace_every = atoll(argv[++i]);
            pace_us = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_prefix = argv[++i];
        } else if (strcmp(argv[i], "--progress") == 0) {
            progress_step = count * threads / 10;
        } else if (strcmp(argv[i], "--outage") == 0) {
            outage = 1;
        } else if (strcmp(argv[i], "--flush") == 0 && i + 1 < argc) {
            flush_every = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--fork") == 0 && i + 1 < argc) {
            fork_ms = atoi(argv[++i]);
        }
    }
    char err[256];
    client = leafd_client_open(argv[1], argv[2], err, sizeof(err));
    if (client == NULL) {
        fprintf(stderr, "leafd_client_open failed: %s\n", err);
        return 2;
    }
    fork_threads = threads;
    pthread_t ft;
    if (fork_ms > 0 && pthread_create(&ft, NULL, fork_after, (void *)(intptr_t)fork_ms) == 0) {
        pthread_detach(ft);
    }
    int rc = outage ? run_outage() : run_load(threads);
    pid_t child = atomic_load(&forked_child);
    int status;
    if (child > 0 && waitpid(child, &status, 0) == child &&
        !(WIFEXITED(status) && !WEXITSTATUS(status))) {
        rc = 1;
    }
    leafd_client_close(client);
    return rc;
}
