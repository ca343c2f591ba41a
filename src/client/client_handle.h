#ifndef CLIENT_HANDLE_H
#define CLIENT_HANDLE_H

/*
 * A handle's insides, shared by its files: client.c (the callers' doors, the keys, open and
 * close), client_refill.c (the refill thread) and client_strict.c (the strict keys' batches, led
 * by callers). Private to the library.
 *
 * Threads. Callers (any number) look a key up lock-free (first in their own thread's last key by
 * name, client_lastkey.h), take IDs from its chain lock-free (client_chain.h) and, only when the
 * chain is empty, take the handle's lock to create a key or to wait for the refill. The refill
 * thread (one per handle) owns the fields marked so below. Each field says who writes it.
 */
#include <leafd/client.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "client_chain.h"
#include "client_http.h"
#include "client_kind.h"
#include "client_node.h"
#include "client_options.h"
#include "client_prefetch.h"
#include "client_strict.h"
/* The text of a key's last failure (leafd_client_error()). */
#define CLIENT_DETAIL_MAX 384

/* One key of a handle. Created by a caller under the handle's lock, freed at close. */
struct leafd_client_key {
    struct client_chain chain; /* callers take, the refill pushes (client_chain.h) */
    struct leafd_client *c;    /* its handle */
    char name[CLIENT_KEY_MAX]; /* immutable after creation */
    enum client_kind kind;     /* a row of CLIENT_KINDS (client_kind.h) */
    int is_strict;             /* its row serves it strictly: client_strict.c, not the refill */
    const char *tag;           /* into name, after the prefix */
    _Atomic uint64_t hungry;   /* refill rounds callers waited for (callers add, under lock) */
    /* Calls that waited for the refill; for a strict key, its round trips (both
     * leafd_client_key_waits()). */
    _Atomic uint64_t waits;
    struct client_strict strict; /* a strict key's queue and last ID (client_strict.h) */
    _Atomic int err;             /* the refill's last outcome for the key: 0 or LEAFD_CLIENT_E* */
    /* The refill thread's own: */
    struct client_prefetch pf;
    uint64_t hungry_seen;
    int64_t pushed, taken_seen;     /* IDs pushed; pushed - ahead at the last look */
    int64_t high;                   /* segment: the highest ID pushed (ranges are clipped above) */
    int64_t retry_at;               /* ms: a key the nodes refused is not asked before */
    char detail[CLIENT_DETAIL_MAX]; /* the refill's last failure for the key; under the lock */
};

/* The Authorization line: "Authorization: Basic " and the base64 of "user:secret", each up to
 * CLIENT_SECRET_MAX - 1 bytes (4 bytes out for every 3 in), or of "Bearer " and a token. */
#define CLIENT_AUTH_PLAIN (2 * CLIENT_SECRET_MAX)
#define CLIENT_AUTH_B64 (4 * ((CLIENT_AUTH_PLAIN + 2) / 3) + 1)
#define CLIENT_AUTH_MAX (CLIENT_AUTH_B64 + 64)

struct leafd_client {
    /* The process's fork generation this handle's buffers and refill thread belong to
     * (client_fork.h): read by every call, written once per fork by renew() in the child. */
    _Atomic uint64_t forks;
    struct client_options opt;                 /* read-only after open */
    uint64_t gen;                              /* read-only after open: unique in the process */
    SSL_CTX *tls;                              /* read-only after open (NULL: no https endpoint) */
    char auth[CLIENT_AUTH_MAX];                /* the Authorization line, or "" */
    size_t table_mask;                         /* the lookup table: open addressing, pow2 */
    _Atomic(struct leafd_client_key *) *table; /* set once per key under lock, read lock-free */
    struct leafd_client_key **keys;            /* creation order, for the refill */
    _Atomic int n_keys;
    pthread_mutex_t lock;       /* guards creating keys, stop, kick, round, log_fn, keys' detail */
    leafd_client_log_fn log_fn; /* leafd_client_set_log(); NULL: stderr */
    void *log_arg;
    pthread_cond_t wake;   /* the refill sleeps on it; hungry callers signal */
    pthread_cond_t filled; /* callers waiting for a refill round sleep on it */
    int stop, kick;
    uint64_t round;
    pthread_t thread;
    struct client_strict_pool pool; /* strict batches' connections (client_strict.h) */
    /* The refill thread's own: */
    struct client_conn conns[CLIENT_NODES_MAX];
    struct client_node_set nodes;
    int node_down[CLIENT_NODES_MAX]; /* for the log: a line when a node fails or comes back */
    int others_next; /* the key the next round's look at the not-serving keys starts from */
    int64_t list[CLIENT_CHAIN_LIST_MAX];
};

/* The refill thread of c, started with every signal blocked: 0, or pthread_create()'s error. */
int client_refill_start(struct leafd_client *c);
/* The handle's lock and conditions, fresh (at open, and in a child of fork()). */
void client_refill_sync_init(struct leafd_client *c);
/* In a child of fork(), the first call's renewal of c (client.c holds client_fork_lock()): 0, or
 * LEAFD_CLIENT_EUNAVAILABLE when the child's refill thread cannot start. */
int client_refill_renew(struct leafd_client *c);

#endif
