#include "siphash.h"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void siphash_key_random(struct siphash_key *key) {
    uint64_t k[2];
    if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        k[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
        k[1] = (uint64_t)ts.tv_sec * 0xbf58476d1ce4e5b9ULL ^ (uint64_t)(uintptr_t)key;
    }
    key->k0 = k[0];
    key->k1 = k[1];
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1, v1 = ROTL(v1, 13), v1 ^= v0, v0 = ROTL(v0, 32);                                  \
        v2 += v3, v3 = ROTL(v3, 16), v3 ^= v2;                                                     \
        v0 += v3, v3 = ROTL(v3, 21), v3 ^= v0;                                                     \
        v2 += v1, v1 = ROTL(v1, 17), v1 ^= v2, v2 = ROTL(v2, 32);                                  \
    } while (0)

uint64_t siphash_24(const struct siphash_key *key, const void *data, size_t n) {
    const unsigned char *in = data;
    uint64_t v0 = 0x736f6d6570736575ULL ^ key->k0, v1 = 0x646f72616e646f6dULL ^ key->k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ key->k0, v3 = 0x7465646279746573ULL ^ key->k1;
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
