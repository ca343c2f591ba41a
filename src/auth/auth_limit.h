#ifndef LEAF_AUTH_LIMIT_H
#define LEAF_AUTH_LIMIT_H

/*
 * Failed authentications, limited per client address (docs/SECURITY.md,
 * "TLS and secrets"): after AUTH_LIMIT_FAILURES failures from one address within
 * AUTH_LIMIT_WINDOW_MS, its further attempts are refused unchecked
 * (HTTP 429, RESP "-ERR too many failed authentications") for
 * AUTH_LIMIT_BLOCK_MS. A failure is presented credentials that are wrong
 * (a wrong password or admin token, an unknown user, a malformed header);
 * sending none is not.
 *
 * Bounded memory, as auth_ratelimit.c: a fixed table; an address
 * hashes to AUTH_LIMIT_WAYS neighbouring slots, and a new address takes a
 * free or expired one, else the oldest that is not blocked. When all of
 * them are blocked the new address is refused as if blocked, rather than
 * forgotten: a flood of addresses cannot unblock one. The hash is keyed
 * (SipHash-2-4, a random key per table), so an attacker cannot choose
 * addresses that share an innocent one's neighbourhood.
 *
 * Pure (libc + pthread), the time is passed in. Thread-safe: every loop
 * shares one table (a mutex, taken only when credentials were presented).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "siphash.h"

#define AUTH_LIMIT_FAILURES 10 /* the default of leafd.auth.failures.max */
#define AUTH_LIMIT_WINDOW_MS 10000
#define AUTH_LIMIT_BLOCK_MS 10000
#define AUTH_LIMIT_SLOTS 4096
#define AUTH_LIMIT_WAYS 8

/* The RESP refusal; the HTTP one is a row of the error table (src/door/door_errors.h). */
#define AUTH_LIMIT_RESP_ERROR "ERR too many failed authentications"

struct auth_limit {
    pthread_mutex_t mu;
    int max_failures;       /* 0: no limit */
    struct siphash_key key; /* random at init */
    struct {
        uint64_t key;            /* hash of the address; 0 = free */
        int64_t window_start_ms; /* first failure of the current window */
        int64_t blocked_until_ms;
        int failures; /* in the current window */
    } slots[AUTH_LIMIT_SLOTS];
};

/* max_failures 0 turns the limit off. */
void auth_limit_init(struct auth_limit *l, int max_failures);
void auth_limit_destroy(struct auth_limit *l);

/*
 * The address part of a peer "ip:port" ("[v6]:port" too): its length in
 * peer (the whole string when there is no port).
 */
size_t auth_limit_addr_len(const char *peer);

/*
 * 1 when attempts from addr (n bytes) are refused unchecked at now_ms
 * (monotonic): addr is blocked, or it is not tracked and every slot of its
 * neighbourhood holds a blocked address.
 */
int auth_limit_blocked(struct auth_limit *l, const char *addr, size_t n, int64_t now_ms);

/* Counts a failed attempt; returns 1 when this failure starts a block. */
int auth_limit_failure(struct auth_limit *l, const char *addr, size_t n, int64_t now_ms);

#endif
