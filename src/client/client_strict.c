/* Strict keys: the callers' batches and their round trips (client_strict.h). */
#include "client_strict.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "client_clock.h"
#include "client_handle.h"
#include "client_kind.h"
#include "client_log.h"
#include "client_reply.h"

/* A failover's backoff: the first pause, doubling up to the last. */
#define STRICT_BACKOFF_MIN_MS 5
#define STRICT_BACKOFF_MAX_MS 200
/* Redirects in a row before the leader pauses (two nodes naming each other mid-election). */
#define STRICT_HOPS_MAX 4
/* Idle connections kept in a handle's pool; more are closed when put back. */
#define STRICT_POOL_IDLE_MAX 256
/* Batches one leader asks for in a row while calls are queued, before it hands the lead on. */
#define STRICT_LEAD_ROUNDS 8
/* A batch's IDs on the leader's stack up to this many; a larger one is allocated. */
#define STRICT_STACK_IDS 256

static void sleep_us(int64_t us) {
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void client_strict_key_init(struct client_strict *s) {
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->lock, NULL);
}

void client_strict_key_free(struct client_strict *s) {
    pthread_mutex_destroy(&s->lock);
}

void client_strict_pool_init(struct client_strict_pool *p) {
    p->idle = NULL;
    p->n_idle = 0;
    atomic_init(&p->node, 0);
    pthread_mutex_init(&p->lock, NULL);
}

void client_strict_pool_free(struct client_strict_pool *p) {
    for (struct client_pooled *e = p->idle, *next; e != NULL; e = next) {
        next = e->next;
        client_http_free(&e->conn);
        free(e);
    }
    p->idle = NULL;
    p->n_idle = 0;
    pthread_mutex_destroy(&p->lock);
}

void client_strict_renew(struct leafd_client *c) {
    int n = atomic_load_explicit(&c->n_keys, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        struct leafd_client_key *k = c->keys[i];
        if (client_kind_info(k->kind)->serve == CLIENT_SERVE_STRICT) {
            int64_t last = k->strict.last;
            client_strict_key_init(&k->strict);
            k->strict.last = last;
        }
    }
    /* The parent's connections: closed here, their TLS state and buffers let go. */
    for (struct client_pooled *e = c->pool.idle; e != NULL; e = e->next) {
        client_http_forget(&e->conn);
    }
    c->pool.idle = NULL;
    c->pool.n_idle = 0;
    pthread_mutex_init(&c->pool.lock, NULL);
}

/* ---- the pool ----------------------------------------------------------------------------- */

static int same_node(const struct client_endpoint *a, const struct client_endpoint *b) {
    return a->port == b->port && a->tls == b->tls && strcmp(a->host, b->host) == 0;
}

/* An idle connection to ep, or a new one (closed: the first request connects). NULL: no memory. */
static struct client_pooled *pool_get(struct client_strict_pool *p,
                                      const struct client_endpoint *ep) {
    pthread_mutex_lock(&p->lock);
    for (struct client_pooled **e = &p->idle; *e != NULL; e = &(*e)->next) {
        if (same_node(&(*e)->ep, ep)) {
            struct client_pooled *got = *e;
            *e = got->next;
            p->n_idle--;
            pthread_mutex_unlock(&p->lock);
            return got;
        }
    }
    pthread_mutex_unlock(&p->lock);
    struct client_pooled *got = malloc(sizeof(*got));
    if (got != NULL) {
        got->ep = *ep;
        client_http_init(&got->conn);
    }
    return got;
}

static void pool_put(struct client_strict_pool *p, struct client_pooled *e) {
    pthread_mutex_lock(&p->lock);
    if (p->n_idle < STRICT_POOL_IDLE_MAX) {
        e->next = p->idle;
        p->idle = e;
        p->n_idle++;
        e = NULL;
    }
    pthread_mutex_unlock(&p->lock);
    if (e != NULL) {
        client_http_free(&e->conn);
        free(e);
    }
}

/* ---- one round trip ------------------------------------------------------------------------ */

/* What one answer means for the batch. */
enum strict_verdict {
    STRICT_SERVED,   /* the IDs are in */
    STRICT_REFUSED,  /* a refusal of the key: the batch fails with it */
    STRICT_REDIRECT, /* the key's primary or owner is elsewhere: asked at once */
    STRICT_NODE,     /* the node failed (no answer, not IDs, a 5xx): another, after a pause */
    STRICT_AGAIN     /* 503: no primary yet (an election): the same, after a pause */
};

/* A 307's Location: the node it names becomes the key's, with the scheme of the node that
 * answered (leafd names its peers by ip:port; docs/man/leafd_client.3). 0, or -1. */
static int strict_follow(struct client_strict *s, const struct client_endpoint *from,
                         const struct client_answer *a) {
    const char *v = a->location, *scheme = memmem(v, a->location_len, "://", 3);
    if (a->location_len == 0 || scheme == NULL) {
        return -1;
    }
    const char *host = scheme + 3, *end = v + a->location_len;
    const char *slash = memchr(host, '/', (size_t)(end - host));
    char url[CLIENT_HOST_MAX + 16];
    int n = snprintf(url, sizeof(url), "http://%.*s", (int)((slash ? slash : end) - host), host);
    struct client_endpoint e;
    if (n < 0 || (size_t)n >= sizeof(url) ||
        client_options_endpoint(&e, url, (size_t)n, NULL, 0) != 0) {
        return -1;
    }
    e.tls = from->tls;
    s->where = e;
    s->has_where = 1;
    return 0;
}

static enum strict_verdict strict_answer(struct leafd_client *c, struct leafd_client_key *k,
                                         const struct client_endpoint *e,
                                         const struct client_answer *a, int64_t total, int64_t *ids,
                                         int *rc) {
    char code[64];
    client_reply_code(a->body, a->body_len, code, sizeof(code));
    if (a->status == 200) {
        if (client_reply_list(a->body, a->body_len, ids, total) == total) {
            return STRICT_SERVED;
        }
        client_log_key(c, k, 0, "%s:%d answered %s with something that is not %lld IDs", e->host,
                       e->port, k->name, (long long)total);
        return STRICT_NODE;
    }
    if (a->status == 307 || a->status == 308) {
        if (strict_follow(&k->strict, e, a) == 0) {
            return STRICT_REDIRECT;
        }
        client_log_key(c, k, 0, "%s:%d answered %d for %s without a Location to follow", e->host,
                       e->port, a->status, k->name);
        return STRICT_NODE;
    }
    if (a->status >= 500 || a->status == 429) {
        client_log_key(c, k, 0, "%s:%d answered %d %s for %s", e->host, e->port, a->status, code,
                       k->name);
        return a->status == 503 ? STRICT_AGAIN : STRICT_NODE;
    }
    *rc = a->status == 401 || a->status == 403 ? LEAFD_CLIENT_EAUTH
          : a->status == 404                   ? LEAFD_CLIENT_ENOTFOUND
                                               : LEAFD_CLIENT_EREFUSED;
    client_log_key(c, k, 0, "%s:%d refused %s: %d %s", e->host, e->port, k->name, a->status, code);
    return STRICT_REFUSED;
}

/* The node to ask for k: the one a redirect named, else the listed node in turn. */
static struct client_endpoint *strict_pick(struct leafd_client *c, struct leafd_client_key *k,
                                           int *listed) {
    if (k->strict.has_where) {
        *listed = -1;
        return &k->strict.where;
    }
    int i = atomic_load_explicit(&c->pool.node, memory_order_relaxed) % c->opt.n_nodes;
    *listed = i;
    return &c->opt.nodes[i];
}

/* One request to ep: its verdict (ids filled when served). */
static enum strict_verdict strict_ask(struct leafd_client *c, struct leafd_client_key *k,
                                      const struct client_endpoint *ep, const char *path,
                                      int64_t total, int64_t *ids, int64_t left, int *rc) {
    struct client_pooled *conn = pool_get(&c->pool, ep);
    if (conn == NULL) {
        *rc = LEAFD_CLIENT_ENOMEM;
        return STRICT_REFUSED;
    }
    struct client_answer a;
    char err[512];
    enum strict_verdict v = STRICT_NODE;
    int64_t timeout = left < c->opt.timeout_ms ? left : c->opt.timeout_ms;
    if (client_http_get(&conn->conn, c->tls, ep, path, c->auth, timeout, &a, err, sizeof(err)) ==
        0) {
        v = strict_answer(c, k, ep, &a, total, ids, rc);
    } else {
        client_log_key(c, k, 0, "%s", err);
    }
    pool_put(&c->pool, conn);
    return v;
}

/* total IDs of k into ids, asked of its primary, until deadline (ms): 0 or LEAFD_CLIENT_E*. */
static int strict_fetch(struct leafd_client *c, struct leafd_client_key *k, int64_t total,
                        int64_t *ids, int64_t deadline) {
    char path[3 * CLIENT_KEY_MAX + 64];
    if (client_kind_path(k->kind, k->tag, total, path, sizeof(path)) == 0) {
        return LEAFD_CLIENT_EINVAL;
    }
    int64_t backoff = STRICT_BACKOFF_MIN_MS;
    int hops = 0;
    for (;;) {
        int64_t left = deadline - client_clock_ms();
        if (left <= 0) {
            return LEAFD_CLIENT_EUNAVAILABLE;
        }
        int listed, rc = 0;
        const struct client_endpoint *ep = strict_pick(c, k, &listed);
        enum strict_verdict v = strict_ask(c, k, ep, path, total, ids, left, &rc);
        if (v == STRICT_SERVED) {
            return 0;
        }
        if (v == STRICT_REFUSED) {
            return rc;
        }
        if (v == STRICT_REDIRECT && ++hops <= STRICT_HOPS_MAX) {
            continue;
        }
        if (v == STRICT_NODE) {
            /* The remembered node is gone (killed, deposed): back to the list, the next one. */
            k->strict.has_where = 0;
            if (listed >= 0) {
                atomic_compare_exchange_strong(&c->pool.node, &listed, listed + 1);
            }
        }
        hops = 0;
        left = deadline - client_clock_ms();
        sleep_us(1000 * (backoff < left ? backoff : left > 0 ? left : 0));
        backoff = backoff * 2 > STRICT_BACKOFF_MAX_MS ? STRICT_BACKOFF_MAX_MS : backoff * 2;
    }
}

/* ---- the batch ------------------------------------------------------------------------------ */

/* The answer of a batch against the key's last ID handed out (under the key's lock): 0, or
 * LEAFD_CLIENT_EORDER when its first ID is not above it (logged once per key). */
static int strict_check(struct leafd_client *c, struct leafd_client_key *k, const int64_t *ids,
                        int64_t total) {
    struct client_strict *s = &k->strict;
    if (ids[0] > s->last) {
        s->last = ids[total - 1];
        return 0;
    }
    client_log_key(c, k, !s->warned,
                   "a node answered %lld for %s, not above %lld handed out before; refused",
                   (long long)ids[0], k->name, (long long)s->last);
    s->warned = 1;
    return LEAFD_CLIENT_EORDER;
}

/* The waiting calls of a generation sleep on its word with one of these bits: the first (the
 * next leader) can be woken alone when the lead is handed on, the rest with the batch. */
#define STRICT_BIT_FIRST 1u
#define STRICT_BIT_REST 2u

/* Wakes up to n sleepers of word among bits, after moving the word on (a sleeper that read it
 * before sleeps no more: its futex wait finds another value). */
static void strict_wake(_Atomic uint32_t *word, int n, uint32_t bits) {
    atomic_fetch_add(word, 1);
    syscall(SYS_futex, word, FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG, n, NULL, NULL, bits);
}

/* A call waits until its batch is answered (done) or it is told to lead. Without the key's lock:
 * the word is read before done and lead, so a wake between the two is never missed. */
static void strict_sleep(struct client_strict *s, struct client_waiter *w) {
    for (;;) {
        uint32_t gen = __atomic_load_n(&w->gen, __ATOMIC_RELAXED);
        uint32_t bits =
            __atomic_load_n(&w->first, __ATOMIC_RELAXED) ? STRICT_BIT_FIRST : STRICT_BIT_REST;
        _Atomic uint32_t *word = &s->word[gen & 1];
        uint32_t v = atomic_load(word);
        if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&w->lead, __ATOMIC_ACQUIRE)) {
            return;
        }
        syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, v, NULL, NULL, bits);
    }
}

/* The leader takes the next batch (under the lock; returned without it), after gathering for
 * strict.wait.us, and asks for it: 0 or LEAFD_CLIENT_E*, the IDs in *ids (*ids is stack, or
 * allocated when the batch is larger). */
static int strict_batch(struct leafd_client *c, struct leafd_client_key *k,
                        struct client_waiter **batch, uint32_t *gen, int64_t *total, int64_t **ids,
                        int64_t *stack, int *several) {
    struct client_strict *s = &k->strict;
    if (c->opt.strict_wait_us > 0) {
        /* The lock open to joiners for the whole wait. */
        pthread_mutex_unlock(&s->lock);
        sleep_us(c->opt.strict_wait_us);
        pthread_mutex_lock(&s->lock);
    }
    *gen = s->q.gen;
    (void)client_batch_take(&s->q, CLIENT_STRICT_MAX, batch);
    pthread_mutex_unlock(&s->lock);
    *several = (*batch)->next != NULL;
    /* Calls past their timeout.ms already (they queued behind a failover) fail now, without a
     * round trip; the rest are asked for until the newest one's timeout.ms, so a call that
     * began after a failover never fails for an older call's deadline (docs/man/leafd_client.3,
     * "STRICT KEYS"). The batch is the leader's alone here: no lock. */
    int64_t now = client_clock_ms(), newest = 0;
    struct client_waiter *expired = NULL, **expired_tail = &expired, **live = batch;
    *total = 0;
    for (struct client_waiter *w = *batch; w != NULL;) {
        struct client_waiter *next = w->next;
        if (w->started_ms + c->opt.timeout_ms <= now) {
            *live = next;
            w->next = NULL;
            *expired_tail = w;
            expired_tail = &w->next;
        } else {
            *total += w->n;
            newest = w->started_ms > newest ? w->started_ms : newest;
            live = &w->next;
        }
        w = next;
    }
    if (expired != NULL) {
        client_batch_finish(expired, NULL, LEAFD_CLIENT_EUNAVAILABLE);
        /* Told now, not after the round trip; the others of the batch sleep on. */
        strict_wake(&s->word[*gen & 1], INT_MAX, STRICT_BIT_FIRST | STRICT_BIT_REST);
    }
    if (*total == 0) {
        *ids = stack;
        return LEAFD_CLIENT_EUNAVAILABLE;
    }
    *ids = *total <= STRICT_STACK_IDS ? stack : malloc((size_t)*total * sizeof(int64_t));
    int rc = *ids != NULL ? strict_fetch(c, k, *total, *ids, newest + c->opt.timeout_ms)
                          : LEAFD_CLIENT_ENOMEM;
    atomic_fetch_add_explicit(&k->waits, 1, memory_order_relaxed);
    return rc;
}

/* Tells next (the queue's head) to lead; under the lock. Its word and bits to wake it by. */
static void strict_hand_on(struct client_waiter *next, uint32_t *gen, uint32_t *bits) {
    *gen = __atomic_load_n(&next->gen, __ATOMIC_RELAXED);
    *bits = __atomic_load_n(&next->first, __ATOMIC_RELAXED) ? STRICT_BIT_FIRST
                                                            : STRICT_BIT_FIRST | STRICT_BIT_REST;
    __atomic_store_n(&next->lead, 1, __ATOMIC_RELEASE);
}

/*
 * The leader (the calling thread, the queue's head) asks for its batch, then, while calls are
 * queued and its batches serve, for up to STRICT_LEAD_ROUNDS batches in a row: the next request
 * goes out at once, not after a sleeping thread is scheduled (on a busy machine, the longest
 * part of a cycle); its own call waits that much longer. Then it hands the lead on. A batch is
 * handed out outside the lock (it is the leader's alone); its IDs are below the next batch's.
 * Called under the key's lock; returns without it.
 */
static void strict_lead(struct leafd_client *c, struct leafd_client_key *k) {
    struct client_strict *s = &k->strict;
    for (int round = 1;; round++) {
        struct client_waiter *batch;
        uint32_t gen, next_gen = 0, next_bits = 0;
        int64_t total, stack[STRICT_STACK_IDS], *ids;
        int several = 0;
        int rc = strict_batch(c, k, &batch, &gen, &total, &ids, stack, &several);
        pthread_mutex_lock(&s->lock);
        if (rc == 0) {
            rc = strict_check(c, k, ids, total);
        }
        struct client_waiter *next = s->q.head;
        int more = next != NULL && rc == 0 && round < STRICT_LEAD_ROUNDS;
        s->leading = next != NULL;
        if (next != NULL && !more) {
            strict_hand_on(next, &next_gen, &next_bits);
        }
        pthread_mutex_unlock(&s->lock);
        if (next != NULL && !more) {
            strict_wake(&s->word[next_gen & 1], INT_MAX, next_bits);
        }
        /* Someone to wake: in the first round the batch's head is the leader itself. */
        int others = round > 1 || several;
        client_batch_finish(batch, ids, rc);
        if (others) {
            strict_wake(&s->word[gen & 1], INT_MAX, STRICT_BIT_FIRST | STRICT_BIT_REST);
        }
        if (ids != stack) {
            free(ids);
        }
        if (!more) {
            return;
        }
        pthread_mutex_lock(&s->lock);
    }
}

int client_strict_next(struct leafd_client *c, struct leafd_client_key *k, int64_t *ids, size_t n) {
    struct client_waiter me;
    memset(&me, 0, sizeof(me));
    me.ids = ids;
    me.n = (int64_t)n;
    me.started_ms = client_clock_ms();
    struct client_strict *s = &k->strict;
    pthread_mutex_lock(&s->lock);
    client_batch_push(&s->q, &me);
    int lead = !s->leading;
    s->leading = 1;
    if (!lead) {
        pthread_mutex_unlock(&s->lock);
        strict_sleep(s, &me);
        if (!__atomic_load_n(&me.done, __ATOMIC_ACQUIRE)) {
            pthread_mutex_lock(&s->lock);
        }
    }
    if (!__atomic_load_n(&me.done, __ATOMIC_ACQUIRE)) {
        strict_lead(c, k);
    }
    return me.rc;
}
