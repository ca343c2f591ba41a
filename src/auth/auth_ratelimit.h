#ifndef LEAF_AUTH_RATELIMIT_H
#define LEAF_AUTH_RATELIMIT_H

/*
 * "At most one log line a second per key" (a client address), in bounded
 * memory: a fixed table of slots chosen by a hash of the key. A slot held by
 * another key within the last second suppresses too, so no key ever gets
 * more than one line a second, whatever the collisions; the lines suppressed
 * are counted so the next line can say how many. Pure: the caller passes the
 * time and holds whatever lock guards the table.
 */
#include <stddef.h>
#include <stdint.h>

#define AUTH_RATELIMIT_SLOTS 1024

struct auth_ratelimit {
    struct {
        uint64_t key; /* hash of the key; 0 = free */
        int64_t last_ms;
    } slots[AUTH_RATELIMIT_SLOTS];
    uint64_t suppressed; /* lines suppressed since the last one allowed */
};

/*
 * 1 when a line for key (n bytes) may be written at now_ms (monotonic), and
 * then *suppressed is how many were suppressed since the previous allowed
 * line (of any key); 0 when it must not (counted).
 */
int auth_ratelimit_allow(struct auth_ratelimit *r, const char *key, size_t n, int64_t now_ms,
                         uint64_t *suppressed);

#endif
