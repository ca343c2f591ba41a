#include "auth_limit.h"

#include <string.h>

#include "siphash.h"

void auth_limit_init(struct auth_limit *l, int max_failures) {
    memset(l->slots, 0, sizeof(l->slots));
    l->max_failures = max_failures;
    siphash_key_random(&l->key);
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

static uint64_t limit_hash(const struct auth_limit *l, const char *addr, size_t n) {
    uint64_t h = siphash_24(&l->key, addr, n);
    return h ? h : 1;
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
