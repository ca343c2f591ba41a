#ifndef CLIENT_STRICT_H
#define CLIENT_STRICT_H

/*
 * Strict keys (sequence:<name>, keyed:<space>:<key>; client_kind.h): nothing is fetched ahead.
 * Every call joins its key's queue (client_batch.h); the first caller with no batch in flight
 * leads: it waits up to strict.wait.us for others to join (0: not at all), asks the key's
 * primary for the sum of the batch's counts in one request (?count=N), checks the answer and
 * splits it over the batch in arrival order; the calls that arrived meanwhile form the next
 * batch, which it asks for too (up to 8 in a row), then the first of the calls waiting leads. So
 * every ID is issued after its call began, and a call that
 * returned before another began holds the smaller ID (docs/reference/guarantees.md, "The client
 * library").
 *
 * The leader follows a redirect (307 Location) to the primary or the slot's owner and remembers
 * it for the key; through a failover (503 no_primary, a connection refused or reset, a timeout)
 * it tries again with a backoff, the remembered node forgotten and the listed nodes in turn,
 * until the first call of the batch has waited timeout.ms. The key's last ID handed out is
 * kept: an answer not above it is refused (LEAFD_CLIENT_EORDER), logged once per key, and
 * never handed out.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "client_batch.h"
#include "client_http.h"
#include "client_options.h"

/* The most IDs of one request, and so of one strict call: leafd's ?count= limit
 * (VALIDATE_COUNT_MAX of src/base/validate.h). */
#define CLIENT_STRICT_MAX 10000

/* A strict key's state. lock guards the queue, leading, last and warned; where and has_where
 * are the leader's own (one leader at a time, handed on under lock). The waiting calls sleep on
 * word[gen & 1] of their generation (a futex: one system call wakes a whole batch); a leader
 * bumps it, without the lock, when it hands the lead on or the batch out. */
struct client_strict {
    pthread_mutex_t lock;
    struct client_batch_queue q;
    _Atomic uint32_t word[2];
    int leading;  /* a batch is gathering or in flight */
    int64_t last; /* the highest ID handed out for the key by this handle */
    int warned;   /* an answer out of order was logged */
    int has_where;
    struct client_endpoint where; /* the primary or owner a redirect named */
};

/* A connection of the pool, to one node. */
struct client_pooled {
    struct client_pooled *next;
    struct client_endpoint ep;
    struct client_conn conn;
};

/* The handle's connections for strict batches: a leader takes one to the node it asks and puts
 * it back after. lock guards idle and n_idle; node (the listed node asked when a key has no
 * remembered one) is read and moved on by any leader. */
struct client_strict_pool {
    pthread_mutex_t lock;
    struct client_pooled *idle;
    int n_idle;
    _Atomic int node;
};

struct leafd_client;
struct leafd_client_key;

void client_strict_key_init(struct client_strict *s);
void client_strict_key_free(struct client_strict *s);
void client_strict_pool_init(struct client_strict_pool *p);
void client_strict_pool_free(struct client_strict_pool *p);

/* In a child of fork(), before any other use: the keys' locks and queues fresh (the parent's
 * callers are not here), the pool's connections let go (the parent's, as client_http_forget). */
void client_strict_renew(struct leafd_client *c);

/* n IDs (1 to CLIENT_STRICT_MAX) of strict key k into ids, ascending: 0 or LEAFD_CLIENT_E*. */
int client_strict_next(struct leafd_client *c, struct leafd_client_key *k, int64_t *ids, size_t n);

#endif
