/*
 * Strict IDs from threads, for tools/bench strict (tools/benchmarks/bench-strict.py) and the
 * strict integration tests (tests/integration/test_client_strict_*.py):
 *
 *   bench-strict ENDPOINTS OPTIONS THREADS SECONDS KEY [--keys N] [--http]
 *                [--history DIR --process NAME]
 *
 * Each thread calls for SECONDS: leafd_client_next(KEY) through libleafd-client (strict mode:
 * docs/man/leafd_client.3, "STRICT KEYS"), or with --http one GET of one ID per call over a
 * keep-alive connection of its own, 307s followed (today's one-call-per-ID HTTP path, the
 * baseline). --keys N: KEY is a prefix, and each call names KEY<i> for a random i < N (a keyed
 * space's keys: KEY "keyed:space:k"). --history: every call is written as the order checker
 * reads it (tests/lib/ordercheck.py: [key, start_ns, end_ns, first, 1, who] or a failure),
 * DIR/NAME-t<thread>.jsonl, each file headed {"process": NAME, "pid": ..}.
 *
 * At the end one JSON line: calls, failed (and the first error), seconds, ids_per_s, the call
 * latency's p50/p99/p99.9/max in microseconds, round_trips (the library's, summed over the keys:
 * leafd_client_key_waits) and batch_mean (calls per round trip).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <leafd/client.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LAT_MAX 200000 /* latencies kept per thread */
#define KEY_MAX 300

static leafd_client *client;
static const char *endpoints, *key_base, *hist_dir, *process = "p";
static int n_keys, use_http;
static double seconds;
static int64_t t_end;
static char first_error[256];
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
    int i;
    pthread_t t;
    int64_t calls, failed;
    int64_t *lat; /* ns */
    int64_t n_lat;
    FILE *hist;
    unsigned seed;
    int fd, fd_port; /* --http: the connection, and the port it is to */
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void note_error(const char *fmt, const char *a, const char *b) {
    pthread_mutex_lock(&error_lock);
    if (first_error[0] == '\0') {
        snprintf(first_error, sizeof(first_error), fmt, a, b);
        /* Printed inside a JSON string at the end: no quote, no backslash, no control byte. */
        for (char *p = first_error; *p != '\0'; p++) {
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) {
                *p = '\'';
            }
        }
    }
    pthread_mutex_unlock(&error_lock);
}

/* ---- --http: one GET per ID --------------------------------------------------------------- */

static int http_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* One answer on fd into buf: its status, *body and *location (NUL-terminated in buf); -1. */
static int http_read(int fd, char *buf, size_t cap, char **body, char **location) {
    size_t got = 0;
    char *end = NULL;
    while (end == NULL) {
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
        buf[got] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    const char *cl = strstr(buf, "Content-Length:");
    size_t want = (size_t)(end - buf) + 4 + (cl ? strtoul(cl + 15, NULL, 10) : 0);
    while (got < want && got < cap - 1) {
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0) {
            return -1;
        }
        got += (size_t)n;
    }
    buf[got] = '\0';
    *location = strstr(buf, "Location: ");
    *body = end + 4;
    return atoi(buf + 9);
}

/* One ID of key over HTTP, following 307 (to another port of 127.0.0.1): 0, or -1. */
static int http_next(struct worker *w, const char *key, int64_t *id) {
    char path[3 * KEY_MAX], req[4 * KEY_MAX], buf[8192];
    const char *colon = strchr(key, ':');
    if (strncmp(key, "keyed:", 6) == 0) {
        const char *k = strchr(key + 6, ':');
        snprintf(path, sizeof(path), "/api/keyed/get/%.*s/%s", (int)(k - key - 6), key + 6, k + 1);
    } else {
        snprintf(path, sizeof(path), "/api/sequence/get/%s", colon + 1);
    }
    int len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    for (int hop = 0; hop < 4; hop++) {
        if (w->fd < 0 && (w->fd = http_connect(w->fd_port)) < 0) {
            return -1;
        }
        char *body, *location;
        int st = -1;
        if (send(w->fd, req, (size_t)len, MSG_NOSIGNAL) == len) {
            st = http_read(w->fd, buf, sizeof(buf), &body, &location);
        }
        if (st == 200) {
            *id = strtoll(body, NULL, 10);
            return 0;
        }
        close(w->fd);
        w->fd = -1;
        if (st != 307 || location == NULL || strstr(location, "://") == NULL) {
            return -1;
        }
        const char *port = strchr(strstr(location, "://") + 3, ':');
        w->fd_port = port != NULL ? atoi(port + 1) : w->fd_port;
    }
    return -1;
}

/* ---- the threads -------------------------------------------------------------------------- */

static void record(struct worker *w, const char *key, int64_t start, int64_t end, int rc,
                   int64_t id) {
    if (w->hist == NULL) {
        return;
    }
    if (rc == 0) {
        fprintf(w->hist, "[\"%s\",%" PRId64 ",%" PRId64 ",%" PRId64 ",1,\"t%d\"]\n", key, start,
                end, id, w->i);
    } else {
        fprintf(w->hist, "[\"%s\",%" PRId64 ",%" PRId64 ",null,\"%s\",\"t%d\"]\n", key, start, end,
                use_http ? "http" : leafd_client_strerror(rc), w->i);
    }
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    char key[KEY_MAX];
    snprintf(key, sizeof(key), "%s", key_base);
    size_t base_len = strlen(key_base);
    while (now_ns() < t_end) {
        if (n_keys > 0) {
            snprintf(key + base_len, sizeof(key) - base_len, "%d", rand_r(&w->seed) % n_keys);
        }
        int64_t id = 0, start = now_ns();
        int rc = use_http ? http_next(w, key, &id) : leafd_client_next(client, key, &id);
        int64_t end = now_ns();
        w->calls++;
        if (rc != 0) {
            w->failed++;
            note_error("%s%s", use_http ? key : "",
                       use_http ? ": HTTP call failed" : leafd_client_error(client));
        }
        if (w->n_lat < LAT_MAX) {
            w->lat[w->n_lat++] = end - start;
        }
        record(w, key, start, end, rc, id);
    }
    return NULL;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct_us(const int64_t *v, int64_t n, double p) {
    return n > 0 ? (double)v[(int64_t)((double)(n - 1) * p)] / 1000.0 : 0;
}

/* The library's round trips over the keys used (leafd_client_key_waits of each). */
static uint64_t round_trips(void) {
    uint64_t sum = 0;
    char key[KEY_MAX];
    for (int i = 0; i < (n_keys > 0 ? n_keys : 1); i++) {
        snprintf(key, sizeof(key), n_keys > 0 ? "%s%d" : "%s", key_base, i);
        leafd_client_key *k;
        if (leafd_client_key_get(client, key, &k) == 0) {
            sum += leafd_client_key_waits(k);
        }
    }
    return sum;
}

static int open_history(struct worker *w) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s-t%d.jsonl", hist_dir, process, w->i);
    w->hist = fopen(path, "w");
    if (w->hist == NULL) {
        perror(path);
        return -1;
    }
    setvbuf(w->hist, NULL, _IOFBF, 1 << 16);
    fprintf(w->hist, "{\"process\": \"%s\", \"pid\": %d}\n", process, (int)getpid());
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr,
                "usage: %s ENDPOINTS OPTIONS THREADS SECONDS KEY [--keys N] [--http] "
                "[--history DIR --process NAME]\n",
                argv[0]);
        return 2;
    }
    endpoints = argv[1];
    int threads = atoi(argv[3]);
    seconds = atof(argv[4]);
    key_base = argv[5];
    for (int i = 6; i < argc; i++) {
        if (strcmp(argv[i], "--keys") == 0 && i + 1 < argc) {
            n_keys = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--http") == 0) {
            use_http = 1;
        } else if (strcmp(argv[i], "--history") == 0 && i + 1 < argc) {
            hist_dir = argv[++i];
        } else if (strcmp(argv[i], "--process") == 0 && i + 1 < argc) {
            process = argv[++i];
        }
    }
    char err[256];
    client = leafd_client_open(endpoints, argv[2], err, sizeof(err));
    if (client == NULL) {
        fprintf(stderr, "leafd_client_open: %s\n", err);
        return 1;
    }
    const char *port = strrchr(endpoints, ':');
    struct worker *w = calloc((size_t)threads, sizeof(*w));
    for (int i = 0; i < threads; i++) {
        w[i].i = i;
        w[i].seed = (unsigned)(i * 7919 + getpid());
        w[i].lat = malloc(LAT_MAX * sizeof(int64_t));
        w[i].fd = -1;
        w[i].fd_port = port ? atoi(port + 1) : 0;
        if (hist_dir != NULL && open_history(&w[i]) != 0) {
            free(w);
            return 1;
        }
    }
    int64_t t0 = now_ns();
    t_end = t0 + (int64_t)(seconds * 1e9);
    for (int i = 0; i < threads; i++) {
        pthread_create(&w[i].t, NULL, worker_main, &w[i]);
    }
    int64_t calls = 0, failed = 0, n_lat = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(w[i].t, NULL);
        calls += w[i].calls;
        failed += w[i].failed;
        n_lat += w[i].n_lat;
        if (w[i].hist != NULL) {
            fclose(w[i].hist);
        }
    }
    double took = (double)(now_ns() - t0) / 1e9;
    int64_t *lat = malloc((size_t)(n_lat > 0 ? n_lat : 1) * sizeof(int64_t)), at = 0;
    for (int i = 0; i < threads; i++) {
        memcpy(lat + at, w[i].lat, (size_t)w[i].n_lat * sizeof(int64_t));
        at += w[i].n_lat;
        free(w[i].lat);
        if (w[i].fd >= 0) {
            close(w[i].fd);
        }
    }
    qsort(lat, (size_t)n_lat, sizeof(int64_t), cmp_i64);
    uint64_t trips = use_http ? (uint64_t)calls : round_trips();
    printf("{\"calls\": %" PRId64 ", \"failed\": %" PRId64 ", \"first_error\": \"%s\", "
           "\"seconds\": %.3f, \"ids_per_s\": %.0f, \"p50_us\": %.1f, \"p99_us\": %.1f, "
           "\"p999_us\": %.1f, \"max_us\": %.1f, \"round_trips\": %" PRIu64
           ", \"batch_mean\": %.2f}\n",
           calls, failed, first_error, took, (double)(calls - failed) / took,
           pct_us(lat, n_lat, 0.5), pct_us(lat, n_lat, 0.99), pct_us(lat, n_lat, 0.999),
           pct_us(lat, n_lat, 1.0), trips, trips ? (double)calls / (double)trips : 0.0);
    free(lat);
    free(w);
    leafd_client_close(client);
    return 0;
}
