/*
 * libleafd-client's strict keys (sequence:<name>, keyed:<space>:<key>; docs/man/leafd_client.3,
 * "STRICT KEYS"; docs/reference/guarantees.md, "The client library"):
 * - pure: a batch takes the queued calls from the head and splits its answer over them in
 *   arrival order (client_batch.h); a key's path (client_kind.h); a redirect's Location is read
 *   from the head of an answer (client_head.h);
 * - the real library against a fake sequence node (a thread of this test on a loopback port):
 *   concurrent calls share round trips and keep real-time order, calls that arrive while a
 *   request is in flight form the next batch in arrival order, strict.wait.us gathers for as
 *   long as it says, an answer below what the handle handed out is refused (EORDER) and never
 *   returned, a 307 is followed and remembered, a 503 is ridden out within timeout.ms.
 */
#include <arpa/inet.h>
#include <leafd/client.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client_batch.h"
#include "client_head.h"
#include "client_kind.h"
#include "unit.h"

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- pure ---------------------------------------------------------------------------------- */

static void test_batch_splits_in_arrival_order(void) {
    struct client_batch_queue q = {0};
    int64_t a[1], b[3], c[2], d[6];
    struct client_waiter wa = {.ids = a, .n = 1}, wb = {.ids = b, .n = 3}, wc = {.ids = c, .n = 2},
                         wd = {.ids = d, .n = 6};
    client_batch_push(&q, &wa);
    client_batch_push(&q, &wb);
    client_batch_push(&q, &wc);
    client_batch_push(&q, &wd);
    struct client_waiter *batch;
    /* The first three fit 10 together; the fourth would not: the next batch. */
    CHECK_EQ_INT(client_batch_take(&q, 10, &batch), 6);
    CHECK(batch == &wa && wa.next == &wb && wb.next == &wc && wc.next == NULL);
    CHECK(q.head == &wd && q.tail == &wd);
    const int64_t ids[] = {100, 101, 102, 103, 104, 105};
    client_batch_finish(batch, ids, 0);
    CHECK_EQ_INT(a[0], 100);
    CHECK_EQ_INT(b[0], 101);
    CHECK_EQ_INT(b[2], 103);
    CHECK_EQ_INT(c[0], 104);
    CHECK_EQ_INT(c[1], 105);
    CHECK(wa.done && wb.done && wc.done && !wd.done);
    CHECK_EQ_INT(wa.rc + wb.rc + wc.rc, 0);
    /* The head goes alone when it is all the room, and a failure writes no ID. */
    d[0] = -1;
    CHECK_EQ_INT(client_batch_take(&q, 6, &batch), 6);
    CHECK(batch == &wd && q.head == NULL && q.tail == NULL);
    client_batch_finish(batch, NULL, -2);
    CHECK(wd.done && wd.rc == -2 && d[0] == -1);
    CHECK_EQ_INT(client_batch_take(&q, 6, &batch), 0);
}

static void test_kind_paths(void) {
    enum client_kind kind;
    size_t prefix;
    char path[1024];
    CHECK_EQ_INT(client_kind_parse("sequence:orders", &kind, &prefix), 0);
    CHECK(kind == CLIENT_SEQUENCE && prefix == 9);
    CHECK(client_kind_path(kind, "orders", 7, path, sizeof(path)) > 0);
    CHECK_EQ_STR(path, "/api/sequence/get/orders?count=7");
    CHECK_EQ_INT(client_kind_parse("keyed:chat:a/b c%", &kind, &prefix), 0);
    CHECK(kind == CLIENT_KEYED && client_kind_info(kind)->serve == CLIENT_SERVE_STRICT);
    CHECK(client_kind_path(kind, "chat:a/b c%", 1, path, sizeof(path)) > 0);
    CHECK_EQ_STR(path, "/api/keyed/get/chat/a%2Fb%20c%25?count=1");
    CHECK_EQ_INT(client_kind_parse("segment:t", &kind, &prefix), 0);
    CHECK(client_kind_info(kind)->serve == CLIENT_SERVE_RANGE);
    CHECK(client_kind_path(kind, "t", 10, path, sizeof(path)) > 0);
    CHECK_EQ_STR(path, "/api/segment/range/t?count=10");
    /* Too long for the room: 0, never a cut path. */
    CHECK_EQ_INT(client_kind_path(CLIENT_KEYED, "chat:////////", 1, path, 30), 0);
    CHECK_EQ_INT(client_kind_parse("keyed:chat", &kind, &prefix), -1);
    CHECK_EQ_INT(client_kind_parse("uuid:x", &kind, &prefix), -1);
}

static void test_head_location(void) {
    const char head[] = "HTTP/1.1 307 Temporary Redirect\r\nContent-Length: 0\r\n"
                        "Location:  http://127.0.0.1:9/api/sequence/get/s?count=2 \r\n";
    struct client_head h;
    CHECK_EQ_INT(client_head_parse(head, sizeof(head) - 1, 100, &h), 0);
    CHECK_EQ_INT(h.status, 307);
    CHECK_EQ_INT(h.location_len, strlen("http://127.0.0.1:9/api/sequence/get/s?count=2"));
    CHECK(memcmp(head + h.location_off, "http://127.0.0.1:9/", 19) == 0);
    const char plain[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n";
    CHECK_EQ_INT(client_head_parse(plain, sizeof(plain) - 1, 100, &h), 0);
    CHECK_EQ_INT(h.location_len, 0);
}

/* ---- a fake sequence node -------------------------------------------------------------------- */

/* What the node answers; set by the tests between handles, read by its threads. */
enum fake_mode { FAKE_HONEST, FAKE_LOWER_ONCE, FAKE_REDIRECT, FAKE_503 };

struct fake {
    char endpoint[64];
    _Atomic int mode;
    _Atomic int delay_us;    /* before each answer: a round trip */
    _Atomic int busy_left;   /* FAKE_503: answers of 503 before serving */
    _Atomic int requests;    /* requests answered */
    _Atomic int64_t counted; /* IDs asked for in all */
    const char *redirect_to; /* FAKE_REDIRECT: the endpoint named by Location */
};

static struct fake fake_a, fake_b;
static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t seq_next = 5000; /* the sequence's counter: both nodes issue from it */

/* The answer to one request line of f into out. */
static size_t fake_answer(struct fake *f, const char *req, char *out, size_t cap) {
    const char *p = strstr(req, "count=");
    int64_t n = p != NULL ? strtoll(p + 6, NULL, 10) : 1;
    atomic_fetch_add(&f->requests, 1);
    atomic_fetch_add(&f->counted, n);
    int mode = atomic_load(&f->mode);
    if (mode == FAKE_REDIRECT) {
        const char *path = strchr(req, ' ');
        return (size_t)snprintf(out, cap,
                                "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s%.*s\r\n"
                                "Content-Length: 0\r\n\r\n",
                                f->redirect_to, (int)strcspn(path + 1, " "), path + 1);
    }
    if (mode == FAKE_503 && atomic_fetch_sub(&f->busy_left, 1) > 0) {
        const char body[] = "{\"code\":\"no_primary\"}";
        return (size_t)snprintf(out, cap,
                                "HTTP/1.1 503 Unavailable\r\nContent-Length: %zu\r\n\r\n%s",
                                sizeof(body) - 1, body);
    }
    pthread_mutex_lock(&seq_lock);
    int64_t first = seq_next;
    if (mode == FAKE_LOWER_ONCE) {
        first = seq_next - 1000; /* a node that broke its promise: IDs issued before */
        atomic_store(&f->mode, FAKE_HONEST);
    } else {
        seq_next += n;
    }
    pthread_mutex_unlock(&seq_lock);
    char body[65536];
    size_t len = 0;
    for (int64_t i = 0; i < n && len + 24 < sizeof(body); i++) {
        len += (size_t)snprintf(body + len, sizeof(body) - len, "%s%lld", i ? "\n" : "",
                                (long long)first + i);
    }
    return (size_t)snprintf(out, cap, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%.*s", len,
                            (int)len, body);
}

struct fake_conn {
    struct fake *f;
    int fd;
};

static void *fake_serve(void *arg) {
    struct fake_conn fc = *(struct fake_conn *)arg;
    free(arg);
    static _Thread_local char req[4096], out[70000];
    for (;;) {
        size_t got = 0;
        req[0] = '\0';
        while (strstr(req, "\r\n\r\n") == NULL && got < sizeof(req) - 1) {
            ssize_t n = recv(fc.fd, req + got, sizeof(req) - 1 - got, 0);
            if (n <= 0) {
                close(fc.fd);
                return NULL;
            }
            got += (size_t)n;
            req[got] = '\0';
        }
        int delay = atomic_load(&fc.f->delay_us);
        if (delay > 0) {
            usleep((useconds_t)delay);
        }
        size_t len = fake_answer(fc.f, req, out, sizeof(out));
        if (send(fc.fd, out, len, MSG_NOSIGNAL) != (ssize_t)len) {
            close(fc.fd);
            return NULL;
        }
    }
}

static void *fake_accept(void *arg) {
    struct fake_conn *l = arg;
    for (;;) {
        int fd = accept(l->fd, NULL, NULL);
        if (fd < 0) {
            continue;
        }
        struct fake_conn *fc = malloc(sizeof(*fc));
        fc->f = l->f;
        fc->fd = fd;
        pthread_t t;
        pthread_create(&t, NULL, fake_serve, fc);
        pthread_detach(t);
    }
    return NULL;
}

static void fake_start(struct fake *f) {
    static struct fake_conn listeners[2];
    static int n;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 128) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &alen) == 0);
    snprintf(f->endpoint, sizeof(f->endpoint), "http://127.0.0.1:%d", ntohs(a.sin_port));
    listeners[n] = (struct fake_conn){.f = f, .fd = fd};
    pthread_t t;
    pthread_create(&t, NULL, fake_accept, &listeners[n++]);
    pthread_detach(t);
}

static void fake_reset(struct fake *f, int mode, int delay_us) {
    atomic_store(&f->mode, mode);
    atomic_store(&f->delay_us, delay_us);
    atomic_store(&f->requests, 0);
    atomic_store(&f->counted, 0);
}

static leafd_client *open_on(const char *endpoints, const char *options) {
    char err[256];
    leafd_client *c = leafd_client_open(endpoints, options, err, sizeof(err));
    if (c == NULL) {
        fprintf(stderr, "leafd_client_open: %s\n", err);
    }
    CHECK(c != NULL);
    return c;
}

/* ---- the real library against it ------------------------------------------------------------ */

#define RT_THREADS 16
#define RT_CALLS 25

struct rt_call {
    int64_t start, end, id;
};

struct rt_thread {
    leafd_client *c;
    const char *key;
    struct rt_call calls[RT_CALLS];
    int failed;
    pthread_t t;
};

static void *rt_caller(void *arg) {
    struct rt_thread *t = arg;
    for (int i = 0; i < RT_CALLS; i++) {
        struct rt_call *call = &t->calls[i];
        call->start = now_us();
        t->failed += leafd_client_next(t->c, t->key, &call->id) != 0;
        call->end = now_us();
    }
    return NULL;
}

/* Many threads on one key: every call served, fewer round trips than calls, and real-time order
 * (a call that ended before another began holds the smaller ID), checked pair by pair. */
static void test_concurrent_calls_share_round_trips_in_real_time_order(void) {
    fake_reset(&fake_a, FAKE_HONEST, 2000);
    leafd_client *c = open_on(fake_a.endpoint, "log=0;timeout.ms=10000");
    static struct rt_thread th[RT_THREADS];
    for (int i = 0; i < RT_THREADS; i++) {
        th[i] = (struct rt_thread){.c = c, .key = "sequence:s"};
        pthread_create(&th[i].t, NULL, rt_caller, &th[i]);
    }
    int failed = 0, disorder = 0;
    for (int i = 0; i < RT_THREADS; i++) {
        pthread_join(th[i].t, NULL);
        failed += th[i].failed;
    }
    for (int i = 0; i < RT_THREADS * RT_CALLS; i++) {
        const struct rt_call *a = &th[i / RT_CALLS].calls[i % RT_CALLS];
        for (int j = 0; j < RT_THREADS * RT_CALLS; j++) {
            const struct rt_call *b = &th[j / RT_CALLS].calls[j % RT_CALLS];
            disorder += i != j && (a->id == b->id || (a->end < b->start && a->id >= b->id));
        }
    }
    int requests = atomic_load(&fake_a.requests);
    printf("  %d calls in %d round trips, %d failed, %d pairs out of order\n",
           RT_THREADS * RT_CALLS, requests, failed, disorder);
    CHECK_EQ_INT(failed, 0);
    CHECK_EQ_INT(disorder, 0);
    CHECK_EQ_INT(atomic_load(&fake_a.counted), RT_THREADS * RT_CALLS);
    CHECK(requests * 2 < RT_THREADS * RT_CALLS);
    leafd_client_key *k = NULL;
    CHECK_EQ_INT(leafd_client_key_get(c, "sequence:s", &k), 0);
    CHECK_EQ_INT(leafd_client_key_waits(k), requests);
    leafd_client_close(c);
}

struct one_call {
    leafd_client *c;
    int64_t after_us; /* starts this long after the test's t0 */
    int64_t t0, id, took_us;
    int rc;
    pthread_t t;
};

static void *one_caller(void *arg) {
    struct one_call *o = arg;
    while (now_us() < o->t0 + o->after_us) {
        usleep(200);
    }
    int64_t start = now_us();
    o->rc = leafd_client_next(o->c, "sequence:s", &o->id);
    o->took_us = now_us() - start;
    return NULL;
}

/* n calls, the i-th starting at after[i] microseconds: each call's outcome in o[i]. */
static void calls_at(leafd_client *c, const int64_t *after, struct one_call *o, int n) {
    int64_t t0 = now_us() + 2000;
    for (int i = 0; i < n; i++) {
        o[i] = (struct one_call){.c = c, .after_us = after[i], .t0 = t0};
        pthread_create(&o[i].t, NULL, one_caller, &o[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(o[i].t, NULL);
    }
}

/* A call leads; two arrive in turn while its request is in flight: they are the next batch, one
 * round trip, and the one that arrived first holds the lower ID (by one: one answer split). */
static void test_next_batch_in_arrival_order(void) {
    fake_reset(&fake_a, FAKE_HONEST, 150000);
    leafd_client *c = open_on(fake_a.endpoint, "log=0;timeout.ms=10000");
    const int64_t after[] = {0, 30000, 80000};
    struct one_call o[3];
    calls_at(c, after, o, 3);
    CHECK_EQ_INT(o[0].rc + o[1].rc + o[2].rc, 0);
    CHECK_EQ_INT(atomic_load(&fake_a.requests), 2);
    CHECK(o[0].id < o[1].id);
    CHECK_EQ_INT(o[2].id, o[1].id + 1);
    /* One call behind the leader: the leader asks for it too (it leads on while calls queue),
     * and wakes it though the batch holds no one else. */
    fake_reset(&fake_a, FAKE_HONEST, 100000);
    const int64_t lone_follower[] = {0, 30000};
    calls_at(c, lone_follower, o, 2);
    CHECK_EQ_INT(o[0].rc + o[1].rc, 0);
    CHECK(o[0].id < o[1].id);
    CHECK_EQ_INT(atomic_load(&fake_a.requests), 2);
    leafd_client_close(c);
}

/* strict.wait.us: a lone call waits that long before its request; calls that start within it
 * join the leader's batch: one round trip for all. */
static void test_strict_wait_gathers(void) {
    fake_reset(&fake_a, FAKE_HONEST, 0);
    leafd_client *c = open_on(fake_a.endpoint, "log=0;timeout.ms=10000;strict.wait.us=250000");
    const int64_t lone[] = {0};
    struct one_call o[6];
    calls_at(c, lone, o, 1);
    CHECK_EQ_INT(o[0].rc, 0);
    CHECK(o[0].took_us >= 250000);
    fake_reset(&fake_a, FAKE_HONEST, 0);
    const int64_t within[] = {0, 5000, 10000, 15000, 20000, 25000};
    calls_at(c, within, o, 6);
    /* One answer split: six consecutive IDs (in the order the calls took the lock, which a
     * loaded machine may make another than the order they were started in). */
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(o[i].rc, 0);
        lo = o[i].id < lo ? o[i].id : lo;
        hi = o[i].id > hi ? o[i].id : hi;
    }
    CHECK_EQ_INT(hi - lo, 5);
    printf("  a lone call took %lld us (strict.wait.us=250000); 6 calls in %d round trips\n",
           (long long)o[0].took_us, atomic_load(&fake_a.requests));
    CHECK_EQ_INT(atomic_load(&fake_a.requests), 1);
    leafd_client_close(c);
}

static char logged[512];
static int n_logged;

static void log_line(void *arg, const char *line) {
    (void)arg;
    n_logged++;
    snprintf(logged, sizeof(logged), "%s", line);
}

/* A node that answers below what the handle handed out: the call fails with EORDER, the lower
 * IDs never come out, one line names both values, and the next honest answer serves. */
static void test_lower_answer_refused(void) {
    fake_reset(&fake_a, FAKE_HONEST, 0);
    leafd_client *c = open_on(fake_a.endpoint, "timeout.ms=10000");
    leafd_client_set_log(c, log_line, NULL);
    int64_t before = 0, ids[4] = {0};
    CHECK_EQ_INT(leafd_client_next(c, "sequence:s", &before), 0);
    for (int round = 0; round < 2; round++) {
        atomic_store(&fake_a.mode, FAKE_LOWER_ONCE);
        CHECK_EQ_INT(leafd_client_next_many(c, "sequence:s", ids, 4), LEAFD_CLIENT_EORDER);
        CHECK(strstr(leafd_client_error(c), "sequence:s") != NULL);
    }
    CHECK_EQ_INT(n_logged, 1);
    char want[64];
    snprintf(want, sizeof(want), "%lld", (long long)before);
    printf("  logged: %s\n", logged);
    CHECK(strstr(logged, want) != NULL && strstr(logged, "sequence:s") != NULL);
    int64_t after = 0;
    CHECK_EQ_INT(leafd_client_next(c, "sequence:s", &after), 0);
    CHECK(after > before);
    leafd_client_close(c);
}

/* A standby's 307 is followed, and remembered: the next call goes to the primary at once. */
static void test_redirect_followed_and_remembered(void) {
    fake_reset(&fake_a, FAKE_REDIRECT, 0);
    fake_reset(&fake_b, FAKE_HONEST, 0);
    fake_a.redirect_to = fake_b.endpoint;
    leafd_client *c = open_on(fake_a.endpoint, "log=0;timeout.ms=10000");
    int64_t ids[3];
    int rc = leafd_client_next_many(c, "keyed:chat:room/1", ids, 3);
    if (rc != 0) {
        fprintf(stderr, "  %s\n", leafd_client_error(c));
    }
    CHECK_EQ_INT(rc, 0);
    CHECK(ids[1] == ids[0] + 1 && ids[2] == ids[1] + 1);
    CHECK_EQ_INT(leafd_client_next(c, "keyed:chat:room/1", &ids[0]), 0);
    CHECK_EQ_INT(atomic_load(&fake_a.requests), 1);
    CHECK_EQ_INT(atomic_load(&fake_b.requests), 2);
    leafd_client_close(c);
}

/* 503 no_primary (an election) is ridden out within timeout.ms; past it, EUNAVAILABLE. */
static void test_503_ridden_out_within_timeout(void) {
    fake_reset(&fake_a, FAKE_503, 0);
    atomic_store(&fake_a.busy_left, 3);
    leafd_client *c = open_on(fake_a.endpoint, "log=0;timeout.ms=10000");
    int64_t id;
    CHECK_EQ_INT(leafd_client_next(c, "sequence:s", &id), 0);
    CHECK_EQ_INT(atomic_load(&fake_a.requests), 4);
    leafd_client_close(c);
    atomic_store(&fake_a.busy_left, 1000000);
    c = open_on(fake_a.endpoint, "log=0;timeout.ms=150");
    int64_t start = now_us();
    CHECK_EQ_INT(leafd_client_next(c, "sequence:s", &id), LEAFD_CLIENT_EUNAVAILABLE);
    int64_t took = now_us() - start;
    printf("  503 for ever: failed after %lld ms (timeout.ms=150): %s\n", (long long)took / 1000,
           leafd_client_error(c));
    CHECK(took >= 140000 && took < 5000000);
    CHECK(strstr(leafd_client_error(c), "503") != NULL);
    /* A count above one request's is refused before any request. */
    int64_t *many = calloc(10001, sizeof(int64_t));
    CHECK_EQ_INT(leafd_client_next_many(c, "sequence:s", many, 10001), LEAFD_CLIENT_EINVAL);
    free(many);
    leafd_client_close(c);
}

int main(void) {
    TEST(test_batch_splits_in_arrival_order);
    TEST(test_kind_paths);
    TEST(test_head_location);
    fake_start(&fake_a);
    fake_start(&fake_b);
    TEST(test_concurrent_calls_share_round_trips_in_real_time_order);
    TEST(test_next_batch_in_arrival_order);
    TEST(test_strict_wait_gathers);
    TEST(test_lower_answer_refused);
    TEST(test_redirect_followed_and_remembered);
    TEST(test_503_ridden_out_within_timeout);
    return unit_done();
}
