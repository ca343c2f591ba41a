#ifndef LEAF_SIPHASH_H
#define LEAF_SIPHASH_H

/*
 * SipHash-2-4, a keyed hash for tables whose keys a client chooses (its
 * address): with a random key per table, nobody outside can pick keys that
 * collide. The failed-login limiter (src/auth/auth_limit.c) and the
 * per-address connection count (src/net/net_peercount.c) use it. Pure (libc).
 */
#include <stddef.h>
#include <stdint.h>

struct siphash_key {
    uint64_t k0, k1;
};

/* A random key (getrandom; without entropy, one that still differs per process and start). */
void siphash_key_random(struct siphash_key *key);

/* SipHash-2-4 of in[0..n) under key. */
uint64_t siphash_24(const struct siphash_key *key, const void *in, size_t n);

#endif
