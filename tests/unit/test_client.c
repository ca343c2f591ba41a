/*
 * Unit tests of libleafd-client's pure parts (src/client): the options and
 * endpoints, the adaptive prefetch rule and the node failover rule under an
 * injected clock, the answers' parsing (63-bit IDs as integers), and the
 * chain of ranges: order, recycling of slots, and four threads taking while
 * one pushes (every index handed out once). No network.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "client_chain.h"
#include "client_head.h"
#include "client_lastkey.h"
#include "client_node.h"
#include "client_options.h"
#include "client_prefetch.h"
#include "client_reply.h"
#include "unit.h"

static void test_options_defaults_and_keys(void) {
    struct client_options o;
    char err[256];
    CHECK_EQ_INT(client_options_parse(&o, "http://127.0.0.1:8080", NULL, err, sizeof(err)), 0);
    CHECK_EQ_INT(o.n_nodes, 1);
    CHECK_EQ_INT(o.nodes[0].port, 8080);
    CHECK_EQ_INT(o.nodes[0].tls, 0);
    CHECK_EQ_INT(o.timeout_ms, 300);
    CHECK_EQ_INT(o.prefetch_min, 1000);
    CHECK_EQ_INT(client_options_parse(&o, " http://a:1 , https://[::1]:8443/,https://b.example",
                                      "user=app; secret=s3;timeout.ms=50;prefetch.max=5000;"
                                      "ca=/etc/ca.pem;log=0",
                                      err, sizeof(err)),
                 0);
    CHECK_EQ_INT(o.n_nodes, 3);
    CHECK_EQ_STR(o.nodes[1].host, "::1");
    CHECK_EQ_INT(o.nodes[1].port, 8443);
    CHECK_EQ_INT(o.nodes[1].tls, 1);
    CHECK_EQ_INT(o.nodes[2].port, 443);
    CHECK_EQ_STR(o.user, "app");
    CHECK_EQ_STR(o.secret, "s3");
    CHECK_EQ_STR(o.ca_file, "/etc/ca.pem");
    CHECK_EQ_INT(o.timeout_ms, 50);
    CHECK_EQ_INT(o.prefetch_max, 5000);
    CHECK_EQ_INT(o.log, 0);
}

static void test_options_refusals(void) {
    struct client_options o;
    char err[256];
    const char *bad[][2] = {
        {"", NULL},
        {"ftp://a:1", NULL},
        {"http://a:0", NULL},
        {"http://a:1/path", NULL},
        {"http://:1", NULL},
        {"http://a:1", "nokey"},
        {"http://a:1", "color=blue"},
        {"http://a:1", "timeout.ms=0"},
        {"http://a:1", "timeout.ms=12x"},
        {"http://a:1", "user=u"},
        {"http://a:1", "user=u;secret=s;token=t"},
        {"http://a:1", "prefetch.min=10;prefetch.max=5"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CHECK_EQ_INT(client_options_parse(&o, bad[i][0], bad[i][1], err, sizeof(err)), -1);
        CHECK(err[0] != '\0');
    }
    CHECK_EQ_INT(client_options_parse(&o, "http://a:1", "color=blue", err, sizeof(err)), -1);
    CHECK_EQ_STR(err, "unknown option \"color\"");
}

static void test_prefetch_doubles_when_hungry(void) {
    struct client_prefetch p;
    client_prefetch_init(&p, 1000, 64000, 100, 0);
    CHECK_EQ_INT(p.distance, 1000);
    client_prefetch_observe(&p, 10, 500, 1);
    CHECK_EQ_INT(p.distance, 2000);
    client_prefetch_observe(&p, 20, 500, 3);
    CHECK_EQ_INT(p.distance, 4000);
    for (int i = 0; i < 10; i++) {
        client_prefetch_observe(&p, 30 + i, 0, 1);
    }
    CHECK_EQ_INT(p.distance, 64000); /* capped at prefetch.max */
}

static void test_prefetch_follows_the_rate(void) {
    struct client_prefetch p;
    client_prefetch_init(&p, 1000, 1000000, 100, 0);
    /* Within a window nothing changes. */
    client_prefetch_observe(&p, 50, 5000, 0);
    CHECK_EQ_INT(p.distance, 1000);
    /* A window that took more than the distance doubles it: a steady rate is met ahead. */
    client_prefetch_observe(&p, 100, 0, 0);
    CHECK_EQ_INT(p.distance, 2000);
    client_prefetch_observe(&p, 200, 3000, 0);
    CHECK_EQ_INT(p.distance, 4000);
    /* Between a quarter and all of it: kept. */
    client_prefetch_observe(&p, 300, 2000, 0);
    CHECK_EQ_INT(p.distance, 4000);
    /* Idle windows halve it, down to the floor. */
    client_prefetch_observe(&p, 400, 0, 0);
    CHECK_EQ_INT(p.distance, 2000);
    client_prefetch_observe(&p, 500, 0, 0);
    CHECK_EQ_INT(p.distance, 1000);
    client_prefetch_observe(&p, 600, 0, 0);
    CHECK_EQ_INT(p.distance, 1000);
}

static void test_prefetch_want(void) {
    struct client_prefetch p;
    client_prefetch_init(&p, 1000, 1000000, 100, 0);
    CHECK_EQ_INT(client_prefetch_want(&p, 0, 1000000), 1000);
    CHECK_EQ_INT(client_prefetch_want(&p, 499, 1000000), 501);
    CHECK_EQ_INT(client_prefetch_want(&p, 500, 1000000), 0);
    CHECK_EQ_INT(client_prefetch_want(&p, 0, 300), 300);
}

/*
 * The refill thread's loop over the rule (client.c, refill_key), on an injected clock in 1 ms
 * steps: callers take `rate` IDs a millisecond; a refill round observes what they took and
 * whether they found the buffer empty, then fetches what client_prefetch_want() asks, the IDs
 * arriving `latency` ms later (the thread blocks on the fetch, so no round meanwhile). Returns
 * the milliseconds after the first second (the ramp from prefetch.min) in which callers found
 * the buffer empty, that is waited for the network; *ramp: those within the first second.
 */
static int64_t prefetch_dry_ms(int64_t rate, int64_t latency, int64_t *ramp) {
    struct client_prefetch p;
    client_prefetch_init(&p, 1000, 10000000, 100, 0);
    int64_t ahead = 0, taken = 0, hungry = 0, inflight = 0, arrive = 0, dry = 0;
    *ramp = 0;
    for (int64_t t = 0; t < 10000; t++) {
        if (inflight > 0 && t >= arrive) {
            ahead += inflight;
            inflight = 0;
        }
        int64_t take = rate < ahead ? rate : ahead;
        if (take < rate) {
            hungry++;
            *ramp += t < 1000;
            dry += t >= 1000;
        }
        ahead -= take;
        taken += take;
        if (inflight > 0) {
            continue;
        }
        client_prefetch_observe(&p, t, taken, (uint64_t)hungry);
        taken = hungry = 0;
        inflight = client_prefetch_want(&p, ahead, 1000000);
        arrive = t + latency;
    }
    return dry;
}

static void test_prefetch_steady_rate_never_waits(void) {
    /* From 1,000 IDs/s to 100M/s (the bench's one thread takes up to about 150M/s), each fetch
     * answered in 1 ms (loopback) or 10 ms (a far node): after the ramp, never empty. */
    const int64_t rates[] = {1, 10, 100, 1000, 10000, 100000};
    int64_t ramp;
    for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
        CHECK_EQ_INT(prefetch_dry_ms(rates[i], 1, &ramp), 0);
        CHECK_EQ_INT(prefetch_dry_ms(rates[i], 10, &ramp), 0);
    }
    /* The ramp does go hungry: the distance starts at prefetch.min, 1,000 IDs, 10 us of 100M/s. */
    CHECK_EQ_INT(prefetch_dry_ms(100000, 1, &ramp), 0);
    CHECK(ramp > 0);
    /* And the model sees a wait when there is one: a node that takes 20 ms per 1,000,000-ID
     * range (batch.max) serves 50M IDs/s, below a rate of 100M/s, whatever the distance. */
    CHECK(prefetch_dry_ms(100000, 20, &ramp) > 1000);
}

/* The thread's last key by name (client_lastkey.h), with made-up handles and keys. */
static void test_lastkey(void) {
    struct client_lastkey m = {0};
    char h1[1] = {0}, h2[1] = {0}; /* two handles: only their addresses count */
    int k1a = 0, k1b = 0, k2a = 0; /* keys: only their addresses count */
    const char *a = "segment:a", *b = "segment:b";
    CHECK(client_lastkey_find(&m, h1, 1, a) == NULL); /* empty */
    client_lastkey_put(&m, h1, 1, a, &k1a);
    CHECK(client_lastkey_find(&m, h1, 1, a) == &k1a);
    char copy[16];
    snprintf(copy, sizeof(copy), "%s", a); /* the same name in another buffer */
    CHECK(client_lastkey_find(&m, h1, 1, copy) == &k1a);
    snprintf(copy, sizeof(copy), "%s", b); /* another name in the same buffer */
    CHECK(client_lastkey_find(&m, h1, 1, copy) == NULL);
    CHECK(client_lastkey_find(&m, h1, 1, "segment:") == NULL);   /* a prefix of it */
    CHECK(client_lastkey_find(&m, h1, 1, "segment:aa") == NULL); /* longer */
    CHECK(client_lastkey_find(&m, h2, 2, a) == NULL);            /* another handle */
    /* Two keys of one handle alternating, then two handles alternating: each miss is looked
     * up (client.c) and put; every hit is the key of that handle and name. */
    for (int i = 0; i < 4; i++) {
        const char *name = i % 2 ? b : a;
        int *want = i % 2 ? &k1b : &k1a;
        if (client_lastkey_find(&m, h1, 1, name) == NULL) {
            client_lastkey_put(&m, h1, 1, name, want);
        }
        CHECK(client_lastkey_find(&m, h1, 1, name) == want);
        void *other = i % 2 ? (void *)&k2a : (void *)&k1a;
        void *h = i % 2 ? (void *)h2 : (void *)h1;
        uint64_t gen = i % 2 ? 2 : 1;
        if (client_lastkey_find(&m, h, gen, a) == NULL) {
            client_lastkey_put(&m, h, gen, a, other);
        }
        CHECK(client_lastkey_find(&m, h, gen, a) == other);
    }
    /* Handle 1 closed, another opened at the same address: a new generation, no match. */
    client_lastkey_put(&m, h1, 1, a, &k1a);
    CHECK(client_lastkey_find(&m, h1, 3, a) == NULL);
    CHECK(client_lastkey_find(&m, NULL, 0, a) == NULL);
}

static void test_node_failover_and_backoff(void) {
    struct client_node_set s;
    int64_t wait = 0;
    client_node_init(&s, 2, 100, 1000);
    CHECK_EQ_INT(client_node_pick(&s, 0, &wait), 0);
    client_node_failed(&s, 0, 0);
    CHECK_EQ_INT(client_node_pick(&s, 1, &wait), 1); /* skipped for 100 ms */
    client_node_failed(&s, 1, 1);
    CHECK_EQ_INT(client_node_pick(&s, 2, &wait), -1);
    CHECK_EQ_INT(wait, 98);
    CHECK_EQ_INT(client_node_pick(&s, 100, &wait), 0); /* node 0 is asked again */
    client_node_failed(&s, 0, 100);                    /* second failure: 200 ms */
    CHECK_EQ_INT(client_node_pick(&s, 299, &wait), 1);
    CHECK_EQ_INT(client_node_pick(&s, 300, &wait), 1); /* the current one is kept */
    client_node_served(&s, 1, 1);
    for (int i = 0; i < 10; i++) {
        client_node_failed(&s, 0, 1000);
    }
    CHECK_EQ_INT(s.retry_at[0], 2000); /* capped at retry.max.ms */
}

static void test_reply_parsing(void) {
    int64_t a, b, ids[4];
    const char *r = "{\"biz_tag\":\"t\",\"start\":\"9223372036854775000\",\"end\":"
                    "\"9223372036854775807\"}";
    CHECK_EQ_INT(client_reply_range(r, strlen(r), 808, &a, &b), 0);
    CHECK(a == 9223372036854775000LL && b == INT64_MAX);
    const char *bad = "{\"start\":1,\"end\":\"2\"}";
    CHECK_EQ_INT(client_reply_range(bad, strlen(bad), 10, &a, &b), -1);
    const char *over = "{\"start\":\"9223372036854775808\",\"end\":\"9223372036854775809\"}";
    CHECK_EQ_INT(client_reply_range(over, strlen(over), 10, &a, &b), -1);
    const char *list = "1\n22\r\n9007199254740993\n";
    CHECK_EQ_INT(client_reply_list(list, strlen(list), ids, 4), 3);
    CHECK(ids[2] == 9007199254740993LL); /* 2^53 + 1: a double would round it */
    CHECK_EQ_INT(client_reply_list("1\nx\n", 4, ids, 4), -1);
}

/* An answer is checked whole before any of its IDs is used (client_reply.h). */
static void test_reply_shapes_refused(void) {
    int64_t a, b, ids[4];
    const char *r = "{\"biz_tag\":\"t\",\"start\":\"5\",\"end\":\"9\"}";
    CHECK_EQ_INT(client_reply_range(r, strlen(r), 5, &a, &b), 0);
    CHECK_EQ_INT(client_reply_range(r, strlen(r), 4, &a, &b), -1);     /* larger than asked */
    CHECK_EQ_INT(client_reply_range(r, strlen(r) - 1, 5, &a, &b), -1); /* cut: no closing } */
    const char *zero = "{\"start\":\"0\",\"end\":\"3\"}";
    CHECK_EQ_INT(client_reply_range(zero, strlen(zero), 5, &a, &b), -1);
    const char *good[] = {"7\n8\n9", "7\n8\n9\n", "7\r\n8\r\n"};
    for (size_t i = 0; i < 3; i++) {
        CHECK(client_reply_list(good[i], strlen(good[i]), ids, 4) >= 2);
    }
    const char *badl[] = {"",     "7\n8\n9\n10\n11", "7\n9\n8", "7\n7", "7\n\n8", "0\n1", "-1",
                          "7 \n8"};
    for (size_t i = 0; i < sizeof(badl) / sizeof(badl[0]); i++) {
        CHECK_EQ_INT(client_reply_list(badl[i], strlen(badl[i]), ids, 4), -1);
    }
}

/* The head of an answer (client_head.h, read by client_http.c): lengths are digits only,
 * bounded, never wrapped. */
static void test_http_head(void) {
    struct client_head h;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length:  42 \r\n";
    CHECK_EQ_INT(client_head_parse(ok, strlen(ok), 65536, &h), 0);
    CHECK_EQ_INT(h.status, 200);
    CHECK_EQ_INT(h.body_len, 42);
    CHECK_EQ_INT(h.close_after, 0);
    const char *c10 = "HTTP/1.0 503 Busy\r\nContent-Length: 0\r\n";
    CHECK_EQ_INT(client_head_parse(c10, strlen(c10), 10, &h), 0);
    CHECK(h.status == 503 && h.body_len == 0 && h.close_after == 1);
    const char *cl = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n";
    CHECK_EQ_INT(client_head_parse(cl, strlen(cl), 10, &h), 0);
    CHECK_EQ_INT(h.close_after, 1);
    static const char *bad[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: -8\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +8\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 65537\r\n", /* over max_body */
        "HTTP/1.1 200 OK\r\nContent-Length: 8 8\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length:\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 5\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n",
        "HTTP/1.1 200 OK\r\n",
        "HTTP/1.1 2000 OK\r\nContent-Length: 1\r\n",
        "HTTP/1.1 099 OK\r\nContent-Length: 1\r\n",
        "HTTP/2.0 200 OK\r\nContent-Length: 1\r\n",
        "HTTP/1.1 -20 OK\r\nContent-Length: 1\r\n",
        "HTTP/1.1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (client_head_parse(bad[i], strlen(bad[i]), 65536, &h) != -1) {
            fprintf(stderr, "  taken: %s\n", bad[i]);
        }
        CHECK_EQ_INT(client_head_parse(bad[i], strlen(bad[i]), 65536, &h), -1);
    }
    /* A bound below one digit (found by tests/fuzz/fuzz_client_reply.c: max - digit wrapped). */
    const char *six = "HTTP/1.0 200 OK\r\nContent-Length: 6\r\n";
    CHECK_EQ_INT(client_head_parse(six, strlen(six), 3, &h), -1);
    CHECK_EQ_INT(client_head_parse(six, strlen(six), 6, &h), 0);
    /* The same length twice is one length. */
    const char *twice = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 4\r\n";
    CHECK_EQ_INT(client_head_parse(twice, strlen(twice), 65536, &h), 0);
    CHECK_EQ_INT(h.body_len, 4);
    /* max_body SIZE_MAX: the longest length is 19 digits, and the bound still holds. */
    const char *big = "HTTP/1.1 200 OK\r\nContent-Length: 9999999999999999999\r\n";
    CHECK_EQ_INT(client_head_parse(big, strlen(big), SIZE_MAX, &h), 0);
}

/* An error about the options never quotes a value: "secret=ab;cd" leaves a piece "cd" that is
 * part of the secret. */
static void test_options_errors_quote_no_value(void) {
    struct client_options o;
    char err[256];
    CHECK_EQ_INT(
        client_options_parse(&o, "http://a:1", "user=u;secret=ab;cd5ecret", err, sizeof(err)), -1);
    CHECK(err[0] != '\0' && strstr(err, "cd5ecret") == NULL);
    CHECK_EQ_INT(
        client_options_parse(&o, "http://a:1", "user=u;secret.file=/run/s", err, sizeof(err)), 0);
    CHECK_EQ_STR(o.secret_file, "/run/s");
    CHECK_EQ_INT(client_options_parse(&o, "http://a:1", "user=u;secret=s;secret.file=/run/s", err,
                                      sizeof(err)),
                 -1);
    CHECK_EQ_INT(client_options_parse(&o, "http://a:1", "secret.file=/run/s", err, sizeof(err)),
                 -1);
}

static void test_options_control_characters(void) {
    struct client_options o;
    char err[256];
    const char *bad[] = {"token=a\r\nX-Injected: 1", "user=u\n;secret=s", "user=u;secret=s\x7f",
                         "ca=/tmp/x\r"};
    for (size_t i = 0; i < 4; i++) {
        err[0] = '\0';
        CHECK_EQ_INT(client_options_parse(&o, "http://a:1", bad[i], err, sizeof(err)), -1);
        CHECK(strstr(err, "control character") != NULL && strstr(err, "X-") == NULL);
    }
    char code[32];
    const char *e = "{\"code\":\"unknown_tag\",\"message\":\"no\"}";
    client_reply_code(e, strlen(e), code, sizeof(code));
    CHECK_EQ_STR(code, "unknown_tag");
}

static void test_chain_order_and_slots(void) {
    struct client_chain ch;
    int64_t out[8];
    CHECK_EQ_INT(client_chain_init(&ch, 0), 0);
    CHECK_EQ_INT(client_chain_take(&ch, out, 1), 0);
    CHECK_EQ_INT(client_chain_ahead(&ch), 0);
    client_chain_push(&ch, 10, NULL, 3);
    client_chain_push(&ch, 100, NULL, 2);
    CHECK_EQ_INT(client_chain_ahead(&ch), 5);
    CHECK_EQ_INT(client_chain_take(&ch, out, 4), 4);
    CHECK(out[0] == 10 && out[2] == 12 && out[3] == 100);
    CHECK_EQ_INT(client_chain_take(&ch, out, 4), 1);
    CHECK(out[0] == 101);
    CHECK_EQ_INT(client_chain_take(&ch, out, 1), 0);
    /* Many blocks through the ring: every slot is reused several times. */
    int64_t next = 1000, expect = 1000;
    for (int round = 0; round < 100; round++) {
        while (client_chain_room(&ch)) {
            client_chain_push(&ch, next, NULL, 5);
            next += 5;
        }
        int64_t id;
        while (client_chain_take(&ch, &id, 1) == 1) {
            CHECK_EQ_INT(id, expect++);
        }
    }
    CHECK_EQ_INT(expect, next);
    client_chain_free(&ch);
}

/* The heap in use now: the sanitizer's count in the sanitized build, else glibc's. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t heap_bytes(void) {
    if (__sanitizer_get_current_allocated_bytes != NULL) {
        return __sanitizer_get_current_allocated_bytes();
    }
    return mallinfo2().uordblks;
}

/* A snowflake key's chain holds what its batches need, not 16 batches of the largest size: an
 * idle key (batches of prefetch.min, 1000) costs 16 x 1024 IDs at most, 128 KiB. */
static void test_chain_list_memory(void) {
    static struct client_chain ch;
    int64_t list[1000], out[1000];
    for (int i = 0; i < 1000; i++) {
        list[i] = 100 + i;
    }
    size_t before = heap_bytes();
    CHECK_EQ_INT(client_chain_init(&ch, 1), 0);
    for (int round = 0; round < 40; round++) {
        CHECK_EQ_INT(client_chain_push(&ch, 0, list, 1000), 0);
        CHECK_EQ_INT(client_chain_take(&ch, out, 1000), 1000);
    }
    size_t used = heap_bytes() - before;
    printf("  a listed chain after 40 batches of 1000: %zu bytes\n", used);
    CHECK(used <= 16 * 1024 * sizeof(int64_t));
    /* A batch larger than its slot holds grows the slot; what callers took stays whole. */
    int64_t big[10000], got[10000];
    for (int i = 0; i < 10000; i++) {
        big[i] = 5000000 + i;
    }
    CHECK_EQ_INT(client_chain_push(&ch, 0, big, 10000), 0);
    CHECK_EQ_INT(client_chain_take(&ch, got, 10000), 10000);
    CHECK(got[0] == 5000000 && got[9999] == 5009999);
    client_chain_free(&ch);
}

static void test_chain_lists(void) {
    struct client_chain ch;
    int64_t out[4], list[3] = {7, 9, 30};
    CHECK_EQ_INT(client_chain_init(&ch, 1), 0);
    client_chain_push(&ch, 0, list, 3);
    CHECK_EQ_INT(client_chain_take(&ch, out, 4), 3);
    CHECK(out[0] == 7 && out[1] == 9 && out[2] == 30);
    client_chain_free(&ch);
}

/* Four callers against one pusher: every ID comes out once, ascending per caller. */
#define RACE_THREADS 4
#define RACE_BLOCKS 20000
#define RACE_BLOCK 50
struct race {
    struct client_chain ch;
    _Atomic int done;
    int64_t *seen; /* per ID: how many callers got it */
    int64_t got[RACE_THREADS], bad_order[RACE_THREADS];
};

struct racer {
    struct race *r;
    int i;
};

static void *race_take(void *arg) {
    struct racer *me = arg;
    struct race *r = me->r;
    int64_t last = -1, ids[7];
    for (;;) {
        size_t want = 1 + (size_t)(me->i % 7), n = client_chain_take(&r->ch, ids, want);
        for (size_t k = 0; k < n; k++) {
            __atomic_fetch_add(&r->seen[ids[k]], 1, __ATOMIC_RELAXED);
            r->bad_order[me->i] += ids[k] <= last;
            last = ids[k];
        }
        r->got[me->i] += (int64_t)n;
        if (n == 0 && atomic_load(&r->done) && client_chain_ahead(&r->ch) == 0) {
            return NULL;
        }
    }
}

static void test_chain_threads(void) {
    static struct race r;
    pthread_t t[RACE_THREADS];
    struct racer who[RACE_THREADS];
    CHECK_EQ_INT(client_chain_init(&r.ch, 0), 0);
    r.seen = calloc((size_t)RACE_BLOCKS * RACE_BLOCK, sizeof(*r.seen));
    atomic_init(&r.done, 0);
    for (int i = 0; i < RACE_THREADS; i++) {
        who[i] = (struct racer){&r, i};
        pthread_create(&t[i], NULL, race_take, &who[i]);
    }
    for (int64_t b = 0; b < RACE_BLOCKS; b++) {
        while (!client_chain_room(&r.ch)) {
            ;
        }
        client_chain_push(&r.ch, b * RACE_BLOCK, NULL, RACE_BLOCK);
    }
    atomic_store(&r.done, 1);
    int64_t total = 0, twice = 0;
    for (int i = 0; i < RACE_THREADS; i++) {
        pthread_join(t[i], NULL);
        total += r.got[i];
        CHECK_EQ_INT(r.bad_order[i], 0);
    }
    for (int64_t i = 0; i < (int64_t)RACE_BLOCKS * RACE_BLOCK; i++) {
        twice += r.seen[i] > 1;
    }
    CHECK_EQ_INT(twice, 0);
    /* Nothing lost either, here: no caller is ever held between a load and its add long
     * enough for its slot to come round again, so every index is taken. */
    CHECK(total <= (int64_t)RACE_BLOCKS * RACE_BLOCK);
    CHECK(total > (int64_t)RACE_BLOCKS * RACE_BLOCK * 9 / 10);
    free(r.seen);
    client_chain_free(&r.ch);
}

int main(void) {
    TEST(test_options_defaults_and_keys);
    TEST(test_options_refusals);
    TEST(test_prefetch_doubles_when_hungry);
    TEST(test_prefetch_follows_the_rate);
    TEST(test_prefetch_want);
    TEST(test_prefetch_steady_rate_never_waits);
    TEST(test_lastkey);
    TEST(test_node_failover_and_backoff);
    TEST(test_reply_parsing);
    TEST(test_reply_shapes_refused);
    TEST(test_http_head);
    TEST(test_options_control_characters);
    TEST(test_options_errors_quote_no_value);
    TEST(test_chain_order_and_slots);
    TEST(test_chain_lists);
    TEST(test_chain_list_memory);
    TEST(test_chain_threads);
    return unit_done();
}
