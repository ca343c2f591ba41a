#include "auth_ratelimit.h"

#include "hash.h"

/* The key's hash, never 0 (0 marks a free slot). */
static uint64_t key_hash(const char *key, size_t n) {
    uint64_t h = leaf_hash(key, n);
    return h ? h : 1;
}

int auth_ratelimit_allow(struct auth_ratelimit *r, const char *key, size_t n, int64_t now_ms,
                         uint64_t *suppressed) {
    uint64_t h = key_hash(key, n);
    size_t i = (size_t)(h % AUTH_RATELIMIT_SLOTS);
    if (r->slots[i].key != 0 && now_ms - r->slots[i].last_ms < 1000) {
        r->suppressed++;
        return 0;
    }
    r->slots[i].key = h;
    r->slots[i].last_ms = now_ms;
    *suppressed = r->suppressed;
    r->suppressed = 0;
    return 1;
}
