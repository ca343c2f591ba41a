/*
 * The refill thread of a handle (client_handle.h): it owns the connections, the node set, each
 * key's prefetch state and every push; it wakes every few milliseconds, or at once when a caller
 * goes hungry, and asks the nodes for what each key's prefetch distance wants. Its lines go to
 * the program's log callback or to standard error (leafd_client_set_log, docs/man/leafd_client.3);
 * each key's last failure is kept for the callers' leafd_client_error(). In a child of fork() the
 * first call renews the handle here (client_refill_renew): buffers dropped, a thread of its own.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_clock.h"
#include "client_handle.h"
#include "client_log.h"
#include "client_reply.h"

/* How long the refill sleeps at most while nothing moves, and at least while IDs flow. */
#define CLIENT_POLL_MIN_MS 1
#define CLIENT_POLL_MAX_MS 256
/* Fetches of one key per refill round: a round never dwells on one key. */
#define CLIENT_FETCHES_PER_ROUND 4
/* A round's time for the keys not yet served or failing (new keys, unknown tags): the keys that
 * serve are refilled first, and a flood of the others waits for the next rounds. */
#define CLIENT_OTHERS_MS 20

/* ---- the refill thread -------------------------------------------------------------------- */

/* What take_answer() says besides 0 (pushed) and a LEAFD_CLIENT_E* refusal of the key. */
#define ANSWER_NODE_FAILED 1 /* no answer a node gives: malformed, a redirect; the node is down */
#define ANSWER_KEY_BUSY 2    /* a 5xx about this key (a locked row, not ready): the node is up */

/* One answer of node `node` for key k: 0 (pushed, or a range below what is held: dropped), a
 * LEAFD_CLIENT_E* the key gets, ANSWER_KEY_BUSY or ANSWER_NODE_FAILED. */
static int take_answer(struct leafd_client *c, struct leafd_client_key *k, int node, int64_t want,
                       const struct client_answer *a) {
    const struct client_endpoint *e = &c->opt.nodes[node];
    char code[64];
    client_reply_code(a->body, a->body_len, code, sizeof(code));
    if (a->status >= 500) {
        client_log_key(c, k, atomic_load_explicit(&k->err, memory_order_relaxed) == 0,
                       "%s:%d answered %d %s for %s; asking the next node", e->host, e->port,
                       a->status, code, k->name);
        return ANSWER_KEY_BUSY;
    }
    if (a->status >= 300 && a->status < 400) {
        client_log_key(c, k, !c->node_down[node],
                       "%s:%d answered %d for %s; skipping it for a while", e->host, e->port,
                       a->status, k->name);
        return ANSWER_NODE_FAILED;
    }
    if (a->status != 200) {
        int rc = a->status == 401 || a->status == 403 ? LEAFD_CLIENT_EAUTH
                 : a->status == 404                   ? LEAFD_CLIENT_ENOTFOUND
                                                      : LEAFD_CLIENT_EREFUSED;
        /* Logged once per change: a refused key is asked again every retry.max.ms. */
        client_log_key(c, k, atomic_load_explicit(&k->err, memory_order_relaxed) != rc,
                       "%s:%d refused %s: %d %s", e->host, e->port, k->name, a->status, code);
        return rc;
    }
    if (k->kind == CLIENT_SNOWFLAKE) {
        int64_t n = client_reply_list(a->body, a->body_len, c->list, want);
        if (n <= 0) {
            goto malformed;
        }
        if (client_chain_push(&k->chain, 0, c->list, n) != 0) {
            client_log_key(c, k, 1, "out of memory for a batch of %lld IDs of %s", (long long)n,
                           k->name);
            return ANSWER_KEY_BUSY;
        }
        k->pushed += n;
        return 0;
    }
    int64_t start, end;
    if (client_reply_range(a->body, a->body_len, want, &start, &end) != 0) {
        goto malformed;
    }
    /* Segment IDs ascend per handle and key: a range from another node that starts at or
     * below what this handle already holds is clipped (or dropped whole), never handed out. */
    if (end <= k->high) {
        return 0;
    }
    if (start <= k->high) {
        start = k->high + 1;
    }
    client_chain_push(&k->chain, start, NULL, end - start + 1);
    k->pushed += end - start + 1;
    k->high = end;
    return 0;
malformed:
    client_log_key(c, k, !c->node_down[node],
                   "%s:%d answered %d with something that is not IDs for %s", e->host, e->port,
                   a->status, k->name);
    return ANSWER_NODE_FAILED;
}

/* Asks node `node` for the IDs of path: take_answer()'s outcome, the node marked up or down. */
static int ask_node(struct leafd_client *c, struct leafd_client_key *k, int node, const char *path,
                    int64_t want) {
    const struct client_endpoint *e = &c->opt.nodes[node];
    struct client_answer a;
    char err[512];
    int rc = ANSWER_NODE_FAILED;
    if (client_http_get(&c->conns[node], c->tls, e, path, c->auth, c->opt.timeout_ms, &a, err,
                        sizeof(err)) == 0) {
        rc = take_answer(c, k, node, want, &a);
    } else {
        client_log_key(c, k, !c->node_down[node], "%s; skipping %s:%d for a while", err, e->host,
                       e->port);
    }
    if (rc == ANSWER_NODE_FAILED) {
        c->node_down[node] = 1;
        client_node_failed(&c->nodes, node, client_clock_ms());
        return rc;
    }
    /* It answered: up, whatever it said about this key. */
    if (c->node_down[node]) {
        client_log_say(c, "%s:%d serves again", e->host, e->port);
    }
    c->node_down[node] = 0;
    client_node_served(&c->nodes, node, rc == 0);
    return rc;
}

/*
 * Asks the nodes, in turn from the one that served last, for `want` IDs of k: 0 when one served.
 * A refusal (404 from a stale endpoint, 401 from a node with other credentials) or a 503 about
 * this key from one node sends the request on to the next, and marks no node down for the other
 * keys. The key's error when none served: a refusal when a node that answered refused it (a
 * node down may not know the key either), else EUNAVAILABLE.
 */
static int fetch(struct leafd_client *c, struct leafd_client_key *k, int64_t want) {
    char path[CLIENT_KEY_MAX + 64];
    if (k->kind == CLIENT_SNOWFLAKE && want > CLIENT_CHAIN_LIST_MAX) {
        want = CLIENT_CHAIN_LIST_MAX;
    }
    client_kind_path(k->kind, k->tag, want, path, sizeof(path));
    int64_t wait;
    int first = client_node_pick(&c->nodes, client_clock_ms(), &wait), refused = 0;
    for (int t = 0; first >= 0 && t < c->nodes.n; t++) {
        int node = (first + t) % c->nodes.n;
        if (!client_node_up(&c->nodes, node, client_clock_ms())) {
            continue;
        }
        int rc = ask_node(c, k, node, path, want);
        if (rc == 0) {
            return 0;
        }
        if (rc < 0 && refused == 0) {
            refused = rc;
        }
    }
    return refused != 0 ? refused : LEAFD_CLIENT_EUNAVAILABLE;
}

/* Tops k up to its prefetch distance; 1 when the callers took IDs since the last look. */
static int refill_key(struct leafd_client *c, struct leafd_client_key *k, int64_t now) {
    int64_t ahead = client_chain_ahead(&k->chain);
    int64_t taken = k->pushed - ahead - k->taken_seen;
    uint64_t hungry = atomic_load_explicit(&k->hungry, memory_order_acquire);
    k->taken_seen += taken;
    client_prefetch_observe(&k->pf, now, taken, hungry - k->hungry_seen);
    int moved = taken > 0 || hungry != k->hungry_seen;
    k->hungry_seen = hungry;
    if (k->retry_at > now) {
        return moved;
    }
    int64_t max = k->kind == CLIENT_SNOWFLAKE ? CLIENT_CHAIN_LIST_MAX : c->opt.batch_max;
    for (int i = 0; i < CLIENT_FETCHES_PER_ROUND && client_chain_room(&k->chain); i++) {
        int64_t want = client_prefetch_want(&k->pf, ahead, max);
        if (want == 0) {
            break;
        }
        int64_t before = k->pushed;
        int rc = fetch(c, k, want);
        atomic_store_explicit(&k->err, rc, memory_order_release);
        if (rc != 0) {
            /* Every node down: asked again soon (the node set spaces the tries). A key the
             * nodes refused (credentials, an unknown tag): not before retry.max.ms, so a
             * wrong secret does not run into the nodes' limit on failed authentications. */
            k->retry_at =
                now + (rc == LEAFD_CLIENT_EUNAVAILABLE ? c->opt.retry_min_ms : c->opt.retry_max_ms);
            break;
        }
        ahead += k->pushed - before;
    }
    return moved;
}

/* A key that served and whose last fetch succeeded: refilled first in every round. */
static int serving(const struct leafd_client_key *k) {
    return k->pushed > 0 && atomic_load_explicit(&k->err, memory_order_relaxed) == 0;
}

/* One round: the serving keys, then the others from where the last round stopped, for at most
 * CLIENT_OTHERS_MS. 1 when the callers took IDs since the last look. */
static int refill_round(struct leafd_client *c) {
    int64_t now = client_clock_ms();
    int n = atomic_load_explicit(&c->n_keys, memory_order_acquire), moved = 0;
    for (int i = 0; i < n; i++) {
        if (serving(c->keys[i]) && !c->keys[i]->is_strict) {
            moved |= refill_key(c, c->keys[i], now);
        }
    }
    int64_t end = client_clock_ms() + CLIENT_OTHERS_MS;
    int start = n > 0 ? c->others_next % n : 0, i = 0;
    for (; i < n && client_clock_ms() < end; i++) {
        struct leafd_client_key *k = c->keys[(start + i) % n];
        if (!serving(k) && !k->is_strict) {
            moved |= refill_key(c, k, client_clock_ms());
        }
    }
    c->others_next = n > 0 ? (start + i) % n : 0;
    return moved;
}

static void *refill_main(void *arg) {
    struct leafd_client *c = arg;
    int64_t poll = CLIENT_POLL_MIN_MS;
    pthread_mutex_lock(&c->lock);
    while (!c->stop) {
        pthread_mutex_unlock(&c->lock);
        int moved = refill_round(c);
        /* IDs flowing: look again soon; nothing moving: sleep longer, up to the cap. */
        poll = moved                           ? CLIENT_POLL_MIN_MS
               : poll * 2 > CLIENT_POLL_MAX_MS ? CLIENT_POLL_MAX_MS
                                               : poll * 2;
        pthread_mutex_lock(&c->lock);
        c->round++;
        pthread_cond_broadcast(&c->filled);
        if (!c->stop && !c->kick) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += poll * 1000000;
            ts.tv_sec += ts.tv_nsec / 1000000000;
            ts.tv_nsec %= 1000000000;
            pthread_cond_timedwait(&c->wake, &c->lock, &ts);
        }
        c->kick = 0;
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Starts the refill thread with every signal blocked: a library's thread takes none of the
 * program's signals, and a write to a closed connection is an error, not a SIGPIPE. */
int client_refill_start(struct leafd_client *c) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&c->thread, NULL, refill_main, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* The handle's lock and conditions, fresh (at open, and in a child of fork()). */
void client_refill_sync_init(struct leafd_client *c) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &ca);
    pthread_cond_init(&c->filled, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&c->lock, NULL);
}

/* In a child of fork(), before any other use of the handle: every key's buffer dropped (the
 * parent hands those IDs out; here they are a gap), fresh locks (a thread of the parent may have
 * held one at the fork), connections and node set, and a refill thread of the child's own. The
 * parent's connections are let go, not freed: its refill thread may have been inside OpenSSL or
 * a realloc() of the buffer at the fork, so what they point to is not known to be whole. */
int client_refill_renew(struct leafd_client *c) {
    client_refill_sync_init(c);
    int n = atomic_load_explicit(&c->n_keys, memory_order_acquire);
    int64_t now = client_clock_ms();
    for (int i = 0; i < n; i++) {
        struct leafd_client_key *k = c->keys[i];
        client_chain_drop(&k->chain);
        k->pushed = k->taken_seen = 0;
        k->hungry_seen = atomic_load_explicit(&k->hungry, memory_order_relaxed);
        k->retry_at = 0;
        atomic_store_explicit(&k->err, 0, memory_order_relaxed);
        client_prefetch_init(&k->pf, c->opt.prefetch_min, c->opt.prefetch_max,
                             c->opt.prefetch_window_ms, now);
    }
    for (int i = 0; i < CLIENT_NODES_MAX; i++) {
        client_http_forget(&c->conns[i]);
    }
    client_strict_renew(c);
    client_node_init(&c->nodes, c->opt.n_nodes, c->opt.retry_min_ms, c->opt.retry_max_ms);
    memset(c->node_down, 0, sizeof(c->node_down));
    c->stop = c->kick = 0;
    if (client_refill_start(c) != 0) {
        client_log_say(c, "pthread_create(refill) failed in a child of fork(); its calls fail");
        return LEAFD_CLIENT_EUNAVAILABLE;
    }
    return 0;
}
