#ifndef LEAF_NET_PEERCOUNT_H
#define LEAF_NET_PEERCOUNT_H

/*
 * Open connections per client address, for a limit per address as nginx's
 * limit_conn sets one (docs/reference/configuration.md,
 * leafd.http.max.connections.per.address): one client cannot hold every
 * connection the node allows, so others (health checks, operators) keep
 * room.
 *
 * And a few addresses cannot either, whatever their number: the last `reserve` of the
 * connections the node allows are only for addresses that hold fewer than NET_PEERCOUNT_FEW
 * (docs/OPERATIONS.md, "Connection slots"). Two clients at their limit of half each leave that
 * reserve to everyone else, as nginx's limit_conn leaves a server's own reserve.
 *
 * A fixed open-addressing table, sized at init for the most addresses that
 * can be counted at once (every connection from another address), so it
 * never fills. An address is known by its SipHash under a random key: a
 * client cannot choose addresses that pile onto another's run of slots.
 * Freed slots are closed up (backward shift), so the table holds no
 * tombstones however long the node runs.
 *
 * Pure (libc + pthread). Thread-safe: every loop shares one table (a mutex
 * held for one probe, at accept and at close).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "siphash.h"
#include "status.h"

struct net_peercount_slot {
    uint64_t hash; /* of the address; 0 = free */
    int64_t n;     /* its open connections */
};

/* An address holding fewer connections than this may use the reserve. */
#define NET_PEERCOUNT_FEW 4

struct net_peercount {
    pthread_mutex_t mu;
    struct siphash_key key;
    int64_t limit;  /* connections one address may hold */
    int64_t shared; /* counted in all beyond this, only addresses under NET_PEERCOUNT_FEW get one */
    int64_t total;  /* counted now, every address (under mu) */
    size_t mask;    /* slots - 1 (a power of two) */
    struct net_peercount_slot *slots;
};

/*
 * Room for max_addresses addresses at once (the connections the node allows), each with at most
 * limit connections (>= 1), the last reserve of them (0: none) for addresses that hold fewer than
 * NET_PEERCOUNT_FEW.
 */
leaf_status_t net_peercount_init(struct net_peercount *pc, size_t max_addresses, int64_t limit,
                                 int64_t reserve);
void net_peercount_destroy(struct net_peercount *pc);

/*
 * Counts a connection from addr (n bytes: the address, no port). Returns the
 * handle to release it with (never 0), or 0 when addr holds limit
 * connections already, or the reserve is all that is left and addr holds NET_PEERCOUNT_FEW or more:
 * then nothing is counted.
 */
uint64_t net_peercount_take(struct net_peercount *pc, const void *addr, size_t n);

/* Un-counts a connection that net_peercount_take() counted; h is what it returned. */
void net_peercount_release(struct net_peercount *pc, uint64_t h);

#endif
