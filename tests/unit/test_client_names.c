/*
 * libleafd-client's by-name calls on the real library (src/client/client.c, its thread's last key
 * by name: client_lastkey.h), against a node that refuses every connection. Which key a call by
 * name lands on is seen through leafd_client_key_waits(): a call on a key with nothing buffered
 * waits for the refill once, counted on that key. Two handles with the same two keys, called
 * alternately by name, from a literal and from one buffer rewritten with the other name, from
 * two threads at once; then a handle closed and another opened (at the same address when the
 * allocator hands it back, which the unit test of client_lastkey.h forces: a stale hit here would
 * be a use after free, which the ASan build reports).
 */
#include <arpa/inet.h>
#include <leafd/client.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "unit.h"

/* wait.ms: long enough that every call waits (it returns after a refill round anyway). */
#define OPTIONS "log=0;wait.ms=5000"

static char endpoint[64];

/* A loopback port bound but not listening: every connection to it is refused at once. */
static int refusing_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        return -1;
    }
    snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", ntohs(a.sin_port));
    return fd;
}

static leafd_client_key *key_of(leafd_client *c, const char *name) {
    leafd_client_key *k = NULL;
    CHECK_EQ_INT(leafd_client_key_get(c, name, &k), 0);
    return k;
}

/* One call by name on a node that refuses: no ID, after one wait. */
static void next_by_name(leafd_client *c, const char *name) {
    int64_t id, ids[3];
    static _Thread_local int many;
    int rc =
        many++ % 3 == 0 ? leafd_client_next_many(c, name, ids, 3) : leafd_client_next(c, name, &id);
    CHECK_EQ_INT(rc, LEAFD_CLIENT_EUNAVAILABLE);
}

static void test_two_handles_two_keys(void) {
    char err[256];
    leafd_client *c1 = leafd_client_open(endpoint, OPTIONS, err, sizeof(err));
    leafd_client *c2 = leafd_client_open(endpoint, OPTIONS, err, sizeof(err));
    CHECK(c1 != NULL && c2 != NULL);
    leafd_client_key *k[2][2] = {{key_of(c1, "segment:a"), key_of(c1, "segment:b")},
                                 {key_of(c2, "segment:a"), key_of(c2, "segment:b")}};
    leafd_client *c[2] = {c1, c2};
    uint64_t want[2][2] = {{0}};
    char buf[32];
    for (int i = 0; i < 12; i++) {
        int h = i % 2, n = (i / 2) % 2;
        next_by_name(c[h], n ? "segment:b" : "segment:a");
        want[h][n]++;
        /* The same buffer, rewritten with the other name each time. */
        snprintf(buf, sizeof(buf), "segment:%c", n ? 'a' : 'b');
        next_by_name(c[h], buf);
        want[h][!n]++;
    }
    for (int h = 0; h < 2; h++) {
        for (int n = 0; n < 2; n++) {
            CHECK_EQ_INT(leafd_client_key_waits(k[h][n]), want[h][n]);
        }
    }
    /* A key created by its first call by name lands in the table too. */
    next_by_name(c2, "snowflake:x");
    CHECK_EQ_INT(leafd_client_key_waits(key_of(c2, "snowflake:x")), 1);
    CHECK_EQ_INT(leafd_client_key_waits(key_of(c1, "snowflake:x")), 0);
    leafd_client_close(c1);
    leafd_client_close(c2);
}

struct taker {
    leafd_client *c;
    const char *name;
    int calls;
};

static void *take(void *arg) {
    struct taker *t = arg;
    for (int i = 0; i < t->calls; i++) {
        next_by_name(t->c, t->name);
    }
    return NULL;
}

static void test_threads_and_reopen(void) {
    char err[256];
    leafd_client *c1 = leafd_client_open(endpoint, OPTIONS, err, sizeof(err));
    CHECK(c1 != NULL);
    /* Two threads, each its own last key: a, b on one handle, at once. */
    struct taker ta = {c1, "segment:a", 10}, tb = {c1, "segment:b", 7};
    pthread_t t;
    pthread_create(&t, NULL, take, &tb);
    take(&ta);
    pthread_join(t, NULL);
    CHECK_EQ_INT(leafd_client_key_waits(key_of(c1, "segment:a")), 10);
    CHECK_EQ_INT(leafd_client_key_waits(key_of(c1, "segment:b")), 7);
    /* This thread's last key is c1's "segment:a"; c1 closed, c3 opened: its own key. */
    next_by_name(c1, "segment:a");
    uintptr_t old = (uintptr_t)c1;
    leafd_client_close(c1);
    leafd_client *c3 = leafd_client_open(endpoint, OPTIONS, err, sizeof(err));
    CHECK(c3 != NULL);
    printf("  the handle reopened %s address\n",
           (uintptr_t)c3 == old ? "at the same" : "at another");
    next_by_name(c3, "segment:a");
    next_by_name(c3, "segment:a");
    CHECK_EQ_INT(leafd_client_key_waits(key_of(c3, "segment:a")), 2);
    leafd_client_close(c3);
}

int main(void) {
    int fd = refusing_port();
    CHECK(fd >= 0);
    TEST(test_two_handles_two_keys);
    TEST(test_threads_and_reopen);
    close(fd);
    return unit_done();
}
