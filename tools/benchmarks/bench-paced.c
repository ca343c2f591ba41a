/*
 * An open-loop RESP load at a fixed rate, for tools/bench keyed
 * (tools/benchmarks/bench-keyed.py compiles and runs it; the figures are in
 * docs/BENCHMARKS.md, "Keyed sequences"):
 *
 *   bench-paced PORT RATE SECONDS CONNS KEY [KEYSPACE]
 *
 * CONNS connections on 127.0.0.1:PORT send `INCR KEY` (KEY with %012lld filled by a random
 * number below KEYSPACE when KEYSPACE > 0, as redis-benchmark's __rand_int__) on a schedule:
 * command i is due at start + i / RATE, round robin over the connections, sent when due whether
 * or not earlier answers came back (open loop: a slow answer does not slow the load, so it is
 * not hidden). A command's latency runs from its due time (not its send time) to its answer:
 * a generator that fell behind counts against the server, never for it. The first second is
 * not counted. Prints one JSON line: the rate reached, the answers, the error answers, and
 * p50 / p99 / p99.9 / max in microseconds.
 *
 * cc -O2 -o /tmp/bench-paced tools/benchmarks/bench-paced.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING 65536 /* commands in flight per connection, at most */

struct conn {
    int fd;
    int64_t due[RING]; /* due times of the commands sent and not answered, oldest first */
    unsigned head, tail;
    char in[65536];
    size_t in_len;
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int dial(int port) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        perror("connect");
        exit(2);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* One `INCR` in RESP into out; returns its length. */
static int format_incr(char *out, size_t cap, const char *key, long long keyspace) {
    char k[256];
    if (keyspace > 0)
        snprintf(k, sizeof(k), key, (long long)(next_rand() % (uint64_t)keyspace));
    else
        snprintf(k, sizeof(k), "%s", key);
    return snprintf(out, cap, "*2\r\n$4\r\nINCR\r\n$%zu\r\n%s\r\n", strlen(k), k);
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: bench-paced PORT RATE SECONDS CONNS KEY [KEYSPACE]\n");
        return 2;
    }
    int port = atoi(argv[1]), nconn = atoi(argv[4]);
    double rate = atof(argv[2]), seconds = atof(argv[3]);
    const char *key = argv[5];
    long long keyspace = argc > 6 ? atoll(argv[6]) : 0;
    int64_t total = (int64_t)(rate * seconds), sent = 0, answered = 0, errors = 0, counted = 0;
    int64_t *lat = malloc((size_t)total * sizeof(*lat));
    struct conn *c = calloc((size_t)nconn, sizeof(*c));
    struct pollfd *pfd = calloc((size_t)nconn, sizeof(*pfd));
    for (int i = 0; i < nconn; i++) {
        c[i].fd = pfd[i].fd = dial(port);
        pfd[i].events = POLLIN;
    }
    int64_t start = now_ns(), skip = start + 1000000000LL, gap = (int64_t)(1e9 / rate);
    while (answered < total) {
        int64_t t = now_ns();
        if (t > start + (int64_t)(seconds * 1e9) + 10000000000LL)
            break; /* answers 10 s late: the server is lost, report what came */
        /* Everything due by now, command j on connection j % CONNS: one write each. */
        static char out[1 << 20];
        int64_t due_end = t < start ? 0 : (t - start) / gap + 1;
        due_end = due_end < total ? due_end : total;
        for (int i = 0; i < nconn && sent < due_end; i++) {
            size_t len = 0;
            for (int64_t j = sent + ((i - sent % nconn) + nconn) % nconn; j < due_end; j += nconn) {
                if (c[i].tail - c[i].head == RING || len > sizeof(out) - 512) {
                    fprintf(stderr, "the generator fell too far behind (%d in flight)\n", RING);
                    return 2;
                }
                len += (size_t)format_incr(out + len, sizeof(out) - len, key, keyspace);
                c[i].due[c[i].tail++ % RING] = start + j * gap;
            }
            if (len > 0 && write(c[i].fd, out, len) != (ssize_t)len) {
                perror("write");
                return 2;
            }
        }
        sent = sent > due_end ? sent : due_end;
        int64_t wait = sent < total ? start + sent * gap - now_ns() : 1000000;
        struct timespec ts = {0, wait > 0 ? wait : 0};
        if (ppoll(pfd, (nfds_t)nconn, &ts, NULL) <= 0)
            continue;
        t = now_ns();
        for (int i = 0; i < nconn; i++) {
            if (!(pfd[i].revents & POLLIN))
                continue;
            ssize_t n = read(c[i].fd, c[i].in + c[i].in_len, sizeof(c[i].in) - c[i].in_len);
            if (n <= 0) {
                fprintf(stderr, "connection %d closed\n", i);
                return 2;
            }
            c[i].in_len += (size_t)n;
            /* An answer to INCR is one line (:N or -ERR ...). */
            char *p = c[i].in, *end = c[i].in + c[i].in_len, *nl;
            while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
                int64_t due = c[i].due[c[i].head++ % RING];
                errors += *p != ':';
                if (due >= skip)
                    lat[counted++] = t - due;
                answered++;
                p = nl + 1;
            }
            c[i].in_len = (size_t)(end - p);
            memmove(c[i].in, p, c[i].in_len);
        }
    }
    double took = (double)(now_ns() - start) / 1e9;
    qsort(lat, (size_t)counted, sizeof(*lat), cmp);
    int64_t n = counted > 0 ? counted : 1;
    lat[0] = counted > 0 ? lat[0] : 0;
    printf("{\"rate\":%.0f,\"sent\":%" PRId64 ",\"answered\":%" PRId64 ",\"errors\":%" PRId64
           ",\"counted\":%" PRId64 ",\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
           "\"max_us\":%.1f}\n",
           (double)answered / took, sent, answered, errors, counted, lat[n / 2] / 1e3,
           lat[n * 99 / 100] / 1e3, lat[n * 999 / 1000] / 1e3, lat[n - 1] / 1e3);
    return errors > 0 || answered < total;
}
