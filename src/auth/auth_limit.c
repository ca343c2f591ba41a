#include "auth_limit.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void auth_limit_init(struct auth_limit *l, int max_failures) {
    memset(l->slots, 0, sizeof(l->slots));
    l->max_failures = max_failures;
    uint64_t k[2];
    if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k)) {
        /* No entropy source: a key that still differs per process and start. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        k[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
        k[1] = (uint64_t)ts.tv_sec * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)(uintptr_t)l;
    }
    l->k0 = k[0];
    l->k1 = k[1];
    pthread_mutex_init(&l->mu, NULL);
}

void auth_limit_destroy(struct auth_limit *l) {
    pthread_mutex_destroy(&l->mu);
}

size_t auth_limit_addr_len(const char *peer) {
    const char *colon = strrchr(peer, ':');
    if (peer[0] == '[') {
        const char *close = strchr(peer, ']');
        return close != NULL ? (size_t)(close - peer) + 1 : strlen(peer);
    }
    /* IPv4 "a.b.c.d:port": one colon; a bare IPv6 address has several. */
    if (colon == NULL || strchr(peer, ':') != colon) {
        return strlen(peer);
    }
    return (size_t)(colon - peer);
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);                                  \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                                                     \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                                                     \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);                                  \
    } while (0)

/* SipHash-2-4 of in[0..n) under (k0, k1). */
static uint64_t siphash(uint64_t k0, uint64_t k1, const unsigned char *in, size_t n) {
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    uint64_t b = (uint64_t)n << 56;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t m = 0;
        for (int j = 7; j >= 0; j--) {
            m = m << 8 | in[i + (size_t)j];
        }
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    for (int j = (int)(n - i) - 1; j >= 0; j--) {
        b |= (uint64_t)in[i + (size_t)j] << (8 * j);
    }
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t limit_hash(const struct auth_limit *l, const char *addr, size_t n) {
    uint64_t h = siphash(l->k0, l->k1, (const unsigned char *)addr, n);
    return h ? h : 1;
}

uint64_t auth_limit_slot(const struct auth_limit *l, const char *addr, size_t n) {
    return limit_hash(l, addr, n) % AUTH_LIMIT_SLOTS;
}

/* A slot that remembers nothing current at now_ms. */
static int slot_stale(const struct auth_limit *l, size_t i, int64_t now_ms) {
    return l->slots[i].key == 0 || (now_ms >= l->slots[i].blocked_until_ms &&
                                    now_ms - l->slots[i].window_start_ms >= AUTH_LIMIT_WINDOW_MS);
}

/* The slot of key, or (take = 1) a new one for it; -1 when none. Under mu. */
static long limit_find(struct auth_limit *l, uint64_t key, int64_t now_ms, int take) {
    size_t base = (size_t)(key % AUTH_LIMIT_SLOTS);
    long spare = -1;
    for (size_t w = 0; w < AUTH_LIMIT_WAYS; w++) {
        size_t i = (base + w) % AUTH_LIMIT_SLOTS;
        if (l->slots[i].key == key) {
            return (long)i;
        }
        if (!take) {
            continue;
        }
        if (slot_stale(l, i, now_ms)) {
            if (spare < 0 || !slot_stale(l, (size_t)spare, now_ms)) {
                spare = (long)i;
            }
        } else if (now_ms >= l->slots[i].blocked_until_ms &&
                   (spare < 0 ||
                    (!slot_stale(l, (size_t)spare, now_ms) &&
                     l->slots[i].window_start_ms < l->slots[(size_t)spare].window_start_ms))) {
            spare = (long)i; /* the oldest window that is not blocked */
        }
    }
    if (spare >= 0) {
        memset(&l->slots[spare], 0, sizeof(l->slots[spare]));
        l->slots[spare].key = key;
    }
    return spare;
}

/* 1 when every slot of key's neighbourhood holds an address blocked at now_ms. Under mu. */
static int limit_full(const struct auth_limit *l, uint64_t key, int64_t now_ms) {
    size_t base = (size_t)(key % AUTH_LIMIT_SLOTS);
    for (size_t w = 0; w < AUTH_LIMIT_WAYS; w++) {
        size_t i = (base + w) % AUTH_LIMIT_SLOTS;
        if (l->slots[i].key == 0 || now_ms >= l->slots[i].blocked_until_ms) {
            return 0;
        }
    }
    return 1;
}

int auth_limit_blocked(struct auth_limit *l, const char *addr, size_t n, int64_t now_ms) {
    if (l->max_failures <= 0) {
        return 0;
    }
    uint64_t key = limit_hash(l, addr, n);
    pthread_mutex_lock(&l->mu);
    long i = limit_find(l, key, now_ms, 0);
    int blocked = i >= 0 ? now_ms < l->slots[i].blocked_until_ms : limit_full(l, key, now_ms);
    pthread_mutex_unlock(&l->mu);
    return blocked;
}

int auth_limit_failure(struct auth_limit *l, const char *addr, size_t n, int64_t now_ms) {
    uint64_t key = limit_hash(l, addr, n);
    int starts = 0;
    if (l->max_failures <= 0) {
        return 0;
    }
    pthread_mutex_lock(&l->mu);
    long i = limit_find(l, key, now_ms, 1);
    if (i >= 0) {
        if (l->slots[i].failures == 0 ||
            now_ms - l->slots[i].window_start_ms >= AUTH_LIMIT_WINDOW_MS) {
            l->slots[i].window_start_ms = now_ms;
            l->slots[i].failures = 0;
        }
        if (++l->slots[i].failures >= l->max_failures && now_ms >= l->slots[i].blocked_until_ms) {
            l->slots[i].blocked_until_ms = now_ms + AUTH_LIMIT_BLOCK_MS;
            l->slots[i].failures = 0; /* a new window after the block */
            starts = 1;
        }
    }
    pthread_mutex_unlock(&l->mu);
    return starts;
}
