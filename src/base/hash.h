#ifndef LEAF_HASH_H
#define LEAF_HASH_H

/* FNV-1a over bytes: the hash of the tag maps and sets (not for anything adversarial to
 * collide: a chain or probe run gets long, nothing breaks). */
#include <stddef.h>
#include <stdint.h>

static inline uint64_t leaf_hash(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

#endif
