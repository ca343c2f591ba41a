/*
 * libleafd-client's handle: the callers' doors, the keys, open and close
 * (src/client/include/leafd/client.h; the manual page docs/man/leafd_client.3). The refill
 * thread is client_refill.c; what both share, and which thread owns what, client_handle.h.
 *
 * Fork. A child of fork() has one thread and a copy of its parent's buffers,
 * which the parent hands out itself. Every call first compares the handle's
 * fork generation with the process's (client_fork.h: two loads, no lock, no
 * system call); in a child they differ, and the first call renews the handle
 * (renew(), client_refill_renew()): its buffers dropped (a gap), its locks,
 * connections and node set fresh, its own refill thread started.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client_clock.h"
#include "client_fork.h"
#include "client_handle.h"
#include "client_lastkey.h"

/* The generations of handles: each open takes the next (client_lastkey.h). */
static _Atomic uint64_t client_generations;

/* Each thread's last key looked up by name (client_lastkey.h): the by-name path's shortcut. */
static _Thread_local struct client_lastkey client_last;

/* The text of each code, from the one table of <leafd/client.h>. */
const char *leafd_client_strerror(int code) {
    switch (code) {
    case 0: return "ok";
#define CLIENT_ERRNO_TEXT(name, value, text)                                                       \
    case LEAFD_CLIENT_##name: return text;
        LEAFD_CLIENT_ERRNO_MAP(CLIENT_ERRNO_TEXT)
#undef CLIENT_ERRNO_TEXT
    default: return "unknown error";
    }
}

/* The text of this thread's last failed call (leafd_client_error()): the handle it was made on,
 * by address and generation, as client_lastkey.h names a handle. Owned by the thread. */
struct client_error_text {
    const void *handle;
    uint64_t gen;
    char text[CLIENT_DETAIL_MAX + CLIENT_KEY_MAX + 64];
};

static _Thread_local struct client_error_text client_error_text;

/* A call on k failed with rc: its text is the key, the code's and the refill's last failure. */
static int call_failed(struct leafd_client *c, struct leafd_client_key *k, int rc) {
    struct client_error_text *t = &client_error_text;
    t->handle = c;
    t->gen = c->gen;
    pthread_mutex_lock(&c->lock);
    snprintf(t->text, sizeof(t->text), "%s: %s%s%s", k->name, leafd_client_strerror(rc),
             k->detail[0] ? ": " : "", k->detail);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* A call on c refused before any key (an argument): rc, with its text. */
static int arg_failed(struct leafd_client *c, int rc, const char *fmt, ...) {
    struct client_error_text *t = &client_error_text;
    t->handle = c;
    t->gen = c->gen;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->text, sizeof(t->text), fmt, ap);
    va_end(ap);
    return rc;
}

const char *leafd_client_error(const leafd_client *c) {
    const struct client_error_text *t = &client_error_text;
    return c != NULL && t->handle == c && t->gen == c->gen ? t->text : "";
}

void leafd_client_set_log(leafd_client *c, leafd_client_log_fn fn, void *arg) {
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&c->lock);
    c->log_fn = fn;
    c->log_arg = arg;
    pthread_mutex_unlock(&c->lock);
}

/* ---- keys ------------------------------------------------------------------------------- */

/* A hash of the key, 8 bytes at a step (a lookup is on every leafd_client_next()). */
static uint64_t hash_key(const char *s, size_t len) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ len, w;
    for (; len >= 8; s += 8, len -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
    }
    w = 0;
    memcpy(&w, s, len);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
}

static struct leafd_client_key *lookup(struct leafd_client *c, const char *key) {
    size_t len = strlen(key);
    if (len >= CLIENT_KEY_MAX) {
        return NULL;
    }
    for (size_t i = hash_key(key, len) & c->table_mask;; i = (i + 1) & c->table_mask) {
        struct leafd_client_key *k = atomic_load_explicit(&c->table[i], memory_order_acquire);
        if (k == NULL || memcmp(k->name, key, len + 1) == 0) {
            return k;
        }
    }
}

static struct leafd_client_key *key_new(const struct leafd_client *c, const char *key,
                                        enum client_kind kind, size_t prefix) {
    struct leafd_client_key *k = aligned_alloc(64, (sizeof(*k) + 63) / 64 * 64);
    if (k == NULL) {
        return NULL;
    }
    memset(k, 0, sizeof(*k));
    if (client_chain_init(&k->chain, client_kind_info(kind)->serve == CLIENT_SERVE_LIST) != 0) {
        free(k);
        return NULL;
    }
    snprintf(k->name, sizeof(k->name), "%s", key);
    k->c = (struct leafd_client *)c;
    k->kind = kind;
    k->is_strict = client_kind_info(kind)->serve == CLIENT_SERVE_STRICT;
    k->tag = k->name + prefix;
    client_strict_key_init(&k->strict);
    atomic_init(&k->hungry, 0);
    atomic_init(&k->waits, 0);
    atomic_init(&k->err, 0);
    client_prefetch_init(&k->pf, c->opt.prefetch_min, c->opt.prefetch_max,
                         c->opt.prefetch_window_ms, client_clock_ms());
    return k;
}

/* The key's state, created on its first use (under the handle's lock). */
static int key_get(struct leafd_client *c, const char *key, struct leafd_client_key **out) {
    enum client_kind kind;
    size_t prefix;
    /* The key as leafd takes it: the daemon's own rule (src/ids/ids_mode.c, compiled into the
     * library), so the library refuses exactly the keys a node would. */
    if (client_kind_parse(key, &kind, &prefix) != 0) {
        return LEAFD_CLIENT_EINVAL;
    }
    pthread_mutex_lock(&c->lock);
    int rc = 0;
    struct leafd_client_key *k = lookup(c, key);
    if (k == NULL) {
        int n = atomic_load_explicit(&c->n_keys, memory_order_relaxed);
        k = n < c->opt.keys_max ? key_new(c, key, kind, prefix) : NULL;
        if (k == NULL) {
            rc = LEAFD_CLIENT_ENOMEM;
        } else {
            size_t i = hash_key(key, strlen(key)) & c->table_mask;
            while (atomic_load_explicit(&c->table[i], memory_order_relaxed) != NULL) {
                i = (i + 1) & c->table_mask;
            }
            c->keys[n] = k;
            atomic_store_explicit(&c->n_keys, n + 1, memory_order_release);
            atomic_store_explicit(&c->table[i], k, memory_order_release);
            /* A strict key is nothing of the refill's: no kick. */
            c->kick |= !k->is_strict;
            pthread_cond_signal(&c->wake);
        }
    }
    pthread_mutex_unlock(&c->lock);
    *out = k;
    return rc;
}

/* ---- callers -------------------------------------------------------------------------------- */

/* A caller with an empty chain wakes the refill and waits for its next round, until deadline. */
static void wait_round(struct leafd_client *c, struct leafd_client_key *k, int64_t deadline) {
    pthread_mutex_lock(&c->lock);
    atomic_fetch_add_explicit(&k->hungry, 1, memory_order_release);
    c->kick = 1;
    pthread_cond_signal(&c->wake);
    uint64_t round = c->round;
    /* Two rounds: the one under way may have looked at the key before this caller came. */
    while (c->round < round + 2 && !c->stop) {
        struct timespec ts = {.tv_sec = deadline / 1000, .tv_nsec = (deadline % 1000) * 1000000};
        if (pthread_cond_timedwait(&c->filled, &c->lock, &ts) == ETIMEDOUT) {
            break;
        }
    }
    pthread_mutex_unlock(&c->lock);
}

/* The slow path: the chain ran dry with n IDs still wanted. */
static int next_slow(struct leafd_client *c, struct leafd_client_key *k, int64_t *ids, size_t n) {
    int64_t deadline = client_clock_ms() + c->opt.wait_ms;
    int waited = 0;
    for (;;) {
        size_t got = client_chain_take(&k->chain, ids, n);
        ids += got;
        n -= got;
        if (n == 0) {
            return 0;
        }
        /* The refill's last try failed (every node down, the key refused): answer now
         * rather than make every caller wait, after one more round for a node back. */
        int err = atomic_load_explicit(&k->err, memory_order_acquire);
        if (client_clock_ms() >= deadline) {
            return call_failed(c, k, err != 0 ? err : LEAFD_CLIENT_EUNAVAILABLE);
        }
        /* Counted once per call, only here: the path served from the buffer adds nothing. */
        if (!waited) {
            atomic_fetch_add_explicit(&k->waits, 1, memory_order_relaxed);
            waited = 1;
        }
        wait_round(c, k, deadline);
        if (err != 0 && atomic_load_explicit(&k->err, memory_order_acquire) != 0 &&
            client_chain_ahead(&k->chain) == 0) {
            return call_failed(c, k, atomic_load_explicit(&k->err, memory_order_acquire));
        }
    }
}

/* ---- fork ---------------------------------------------------------------------------------- */

/* 1 when the handle's buffers and refill thread are another process's: this is a child of fork()
 * and the handle was opened before it. Two loads; no lock, no system call. */
static inline int forked(struct leafd_client *c) {
    return __builtin_expect(
               client_fork_now() != atomic_load_explicit(&c->forks, memory_order_acquire), 0) != 0;
}

/* The first call of a child of fork() on a handle renews it, once (client_fork_lock() keeps
 * two threads of the child from doing it twice). 0, or LEAFD_CLIENT_EUNAVAILABLE. */
__attribute__((noinline)) static int renew(struct leafd_client *c) {
    client_fork_lock();
    uint64_t gen = client_fork_now();
    int rc = 0;
    if (atomic_load_explicit(&c->forks, memory_order_relaxed) != gen) {
        rc = client_refill_renew(c);
        if (rc == 0) {
            atomic_store_explicit(&c->forks, gen, memory_order_release);
        } else {
            arg_failed(c, rc, "a child of fork() could not start its refill thread");
        }
    }
    client_fork_unlock();
    return rc;
}

/* ---- the doors ------------------------------------------------------------------------------ */

/* A count the library serves: 1 to LEAFD_CLIENT_MANY_MAX (<leafd/client.h>). A larger one, such
 * as a negative int passed as size_t, is refused before it becomes arithmetic on a counter. */
static inline int count_ok(size_t n) {
    return n >= 1 && n <= LEAFD_CLIENT_MANY_MAX;
}

__attribute__((noinline)) static int count_refused(struct leafd_client *c, size_t n) {
    return arg_failed(c, LEAFD_CLIENT_EINVAL, "count %zu: from 1 to %d (LEAFD_CLIENT_MANY_MAX)", n,
                      LEAFD_CLIENT_MANY_MAX);
}

int leafd_client_key_get(leafd_client *c, const char *key, leafd_client_key **out) {
    if (c == NULL || key == NULL || out == NULL) {
        return LEAFD_CLIENT_EINVAL;
    }
    int rc = forked(c) ? renew(c) : 0;
    if (rc != 0) {
        return rc;
    }
    *out = lookup(c, key);
    return *out != NULL ? 0 : key_get(c, key, out);
}

/* A strict key's call (client_strict.c): n up to CLIENT_STRICT_MAX, one round trip's. */
__attribute__((noinline)) static int take_strict(struct leafd_client_key *k, int64_t *ids,
                                                 size_t n) {
    if (n > CLIENT_STRICT_MAX) {
        return arg_failed(k->c, LEAFD_CLIENT_EINVAL,
                          "%s: count %zu: a strict key serves 1 to %d IDs a call (one request's)",
                          k->name, n, CLIENT_STRICT_MAX);
    }
    int rc = client_strict_next(k->c, k, ids, n);
    return rc == 0 || rc == LEAFD_CLIENT_EINVAL ? rc : call_failed(k->c, k, rc);
}

/* The calls on a key, shared by the by-name and the by-handle doors (a call between two exported
 * functions of a shared library goes through its PLT: these are inlined into both). */
static inline int take_many(struct leafd_client_key *k, int64_t *ids, size_t n) {
    if (k->is_strict) {
        return take_strict(k, ids, n);
    }
    size_t got = client_chain_take(&k->chain, ids, n);
    if (got == n) {
        return 0;
    }
    return next_slow(k->c, k, ids + got, n - got);
}

/* take_one() past the head's block: out of line, so that the path served from the block saves no
 * register and stores nothing but the ID around its atomic step. */
__attribute__((noinline)) static int take_one_past(struct leafd_client_key *k, int64_t *id) {
    if (k->is_strict) {
        return take_strict(k, id, 1);
    }
    if (client_chain_take(&k->chain, id, 1) == 1) {
        return 0;
    }
    return next_slow(k->c, k, id, 1);
}

static inline int take_one(struct leafd_client_key *k, int64_t *id) {
    return client_chain_take1(&k->chain, id) == 1 ? 0 : take_one_past(k, id);
}

int leafd_client_key_next_many(leafd_client_key *k, int64_t *ids, size_t n) {
    if (k == NULL || ids == NULL) {
        return LEAFD_CLIENT_EINVAL;
    }
    if (!count_ok(n)) {
        return count_refused(k->c, n);
    }
    int rc = forked(k->c) ? renew(k->c) : 0;
    return rc != 0 ? rc : take_many(k, ids, n);
}

int leafd_client_key_next(leafd_client_key *k, int64_t *id) {
    if (k == NULL || id == NULL) {
        return LEAFD_CLIENT_EINVAL;
    }
    int rc = forked(k->c) ? renew(k->c) : 0;
    return rc != 0 ? rc : take_one(k, id);
}

uint64_t leafd_client_key_waits(const leafd_client_key *k) {
    return k != NULL ? atomic_load_explicit(&k->waits, memory_order_relaxed) : 0;
}

/* The key of a name, not this thread's last one of c: the table's (no lock) or a new one
 * (key_get), which becomes the thread's last. NULL with the error code in *rc. */
static struct leafd_client_key *key_named(leafd_client *c, const char *key, int *rc) {
    struct leafd_client_key *k = lookup(c, key);
    *rc = k != NULL ? 0 : key_get(c, key, &k);
    if (*rc == LEAFD_CLIENT_EINVAL) {
        arg_failed(c, *rc,
                   "key \"%.160s\": not segment:<tag>, snowflake:<key>, sequence:<name> (a tag: 1 "
                   "to 128 of [A-Za-z0-9._:-]) or keyed:<space>:<key>",
                   key);
    } else if (*rc != 0) {
        arg_failed(c, *rc, "key \"%.160s\": out of memory, or keys.max (%lld) keys already", key,
                   (long long)c->opt.keys_max);
    }
    if (*rc != 0) {
        return NULL;
    }
    client_lastkey_put(&client_last, c, c->gen, k->name, k);
    return k;
}

/* The by-name calls whose name is not the thread's last: out of line (as take_one_past). */
__attribute__((noinline)) static int next_many_named(leafd_client *c, const char *key, int64_t *ids,
                                                     size_t n) {
    int rc;
    struct leafd_client_key *k = key_named(c, key, &rc);
    return k != NULL ? take_many(k, ids, n) : rc;
}

__attribute__((noinline)) static int next_named(leafd_client *c, const char *key, int64_t *id) {
    int rc;
    struct leafd_client_key *k = key_named(c, key, &rc);
    return k != NULL ? take_one(k, id) : rc;
}

int leafd_client_next_many(leafd_client *c, const char *key, int64_t *ids, size_t n) {
    if (c == NULL || key == NULL || ids == NULL) {
        return LEAFD_CLIENT_EINVAL;
    }
    if (!count_ok(n)) {
        return count_refused(c, n);
    }
    int rc = forked(c) ? renew(c) : 0;
    if (rc != 0) {
        return rc;
    }
    struct leafd_client_key *k = client_lastkey_find(&client_last, c, c->gen, key);
    return k != NULL ? take_many(k, ids, n) : next_many_named(c, key, ids, n);
}

int leafd_client_next(leafd_client *c, const char *key, int64_t *id) {
    if (c == NULL || key == NULL || id == NULL) {
        return LEAFD_CLIENT_EINVAL;
    }
    int rc = forked(c) ? renew(c) : 0;
    if (rc != 0) {
        return rc;
    }
    struct leafd_client_key *k = client_lastkey_find(&client_last, c, c->gen, key);
    return k != NULL ? take_one(k, id) : next_named(c, key, id);
}

/* ---- open and close ------------------------------------------------------------------------ */

/* The Authorization line of the options: Basic for user=/secret=, Bearer for token=. */
static void auth_line(struct leafd_client *c) {
    const struct client_options *o = &c->opt;
    c->auth[0] = '\0';
    if (o->token[0] != '\0') {
        snprintf(c->auth, sizeof(c->auth), "Authorization: Bearer %s\r\n", o->token);
    } else if (o->user[0] != '\0') {
        char plain[CLIENT_AUTH_PLAIN];
        unsigned char b64[CLIENT_AUTH_B64];
        /* user= and secret= hold at most CLIENT_SECRET_MAX - 1 bytes each: the two and the
         * colon fit plain, and their base64 fits b64 and c->auth whole. */
        int n = snprintf(plain, sizeof(plain), "%s:%s", o->user, o->secret);
        EVP_EncodeBlock(b64, (const unsigned char *)plain, n);
        snprintf(c->auth, sizeof(c->auth), "Authorization: Basic %s\r\n", (const char *)b64);
    }
}

/* secret.file=: the secret is the file's content, one trailing newline dropped, so that a ';' in
 * it needs no escape. The error names the file, never what it holds. 0 or -1. */
static int read_secret(struct client_options *o, char *err, size_t errlen) {
    if (o->secret_file[0] == '\0') {
        return 0;
    }
    FILE *f = fopen(o->secret_file, "re");
    if (f == NULL) {
        snprintf(err, errlen, "secret.file %s: %s", o->secret_file, strerror(errno));
        return -1;
    }
    size_t n = fread(o->secret, 1, sizeof(o->secret), f);
    int bad = ferror(f);
    fclose(f);
    if (n > 0 && o->secret[n - 1] == '\n') {
        n--;
    }
    if (n > 0 && o->secret[n - 1] == '\r') {
        n--;
    }
    int ctl = 0;
    for (size_t i = 0; i < n; i++) {
        ctl |= (unsigned char)o->secret[i] < 0x20 || o->secret[i] == 0x7f;
    }
    if (bad || n == 0 || n >= sizeof(o->secret) || ctl) {
        snprintf(err, errlen, "secret.file %s: %s", o->secret_file,
                 bad      ? "read failed"
                 : n == 0 ? "empty"
                 : ctl    ? "holds a control character (CR, LF, ...) besides a last newline"
                          : "longer than 511 bytes");
        memset(o->secret, 0, sizeof(o->secret));
        return -1;
    }
    o->secret[n] = '\0';
    return 0;
}

static void client_free(struct leafd_client *c) {
    int n = atomic_load_explicit(&c->n_keys, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        client_chain_free(&c->keys[i]->chain);
        client_strict_key_free(&c->keys[i]->strict);
        free(c->keys[i]);
    }
    client_strict_pool_free(&c->pool);
    for (int i = 0; i < CLIENT_NODES_MAX; i++) {
        client_http_free(&c->conns[i]);
    }
    if (c->tls != NULL) {
        SSL_CTX_free(c->tls);
    }
    free(c->keys);
    free((void *)c->table);
    free(c);
}

leafd_client *leafd_client_open(const char *endpoints, const char *options, char *err,
                                size_t errlen) {
    char scratch[256];
    if (err == NULL || errlen == 0) {
        err = scratch;
        errlen = sizeof(scratch);
    }
    err[0] = '\0';
    struct leafd_client *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->gen = atomic_fetch_add_explicit(&client_generations, 1, memory_order_relaxed) + 1;
    if (client_fork_watch() != 0) {
        snprintf(err, errlen, "pthread_atfork() failed");
        free(c);
        return NULL;
    }
    atomic_init(&c->forks, client_fork_now());
    for (int i = 0; i < CLIENT_NODES_MAX; i++) {
        client_http_init(&c->conns[i]);
    }
    client_strict_pool_init(&c->pool);
    if (client_options_parse(&c->opt, endpoints, options, err, errlen) != 0 ||
        read_secret(&c->opt, err, errlen) != 0) {
        client_free(c);
        return NULL;
    }
    size_t cap = 2;
    while (cap < 2 * (size_t)c->opt.keys_max) {
        cap *= 2;
    }
    c->table_mask = cap - 1;
    c->table = calloc(cap, sizeof(*c->table));
    c->keys = calloc((size_t)c->opt.keys_max, sizeof(struct leafd_client_key *));
    if (c->table == NULL || c->keys == NULL) {
        snprintf(err, errlen, "out of memory");
        client_free(c);
        return NULL;
    }
    c->tls = client_http_tls(&c->opt, err, errlen);
    if (c->tls == NULL && err[0] != '\0') {
        client_free(c);
        return NULL;
    }
    auth_line(c);
    client_node_init(&c->nodes, c->opt.n_nodes, c->opt.retry_min_ms, c->opt.retry_max_ms);
    client_refill_sync_init(c);
    if (client_refill_start(c) != 0) {
        snprintf(err, errlen, "pthread_create(refill) failed");
        pthread_cond_destroy(&c->wake);
        pthread_cond_destroy(&c->filled);
        pthread_mutex_destroy(&c->lock);
        client_free(c);
        return NULL;
    }
    return c;
}

void leafd_client_close(leafd_client *c) {
    if (c == NULL) {
        return;
    }
    if (forked(c)) {
        /* A child of fork() that never used the handle: its refill thread is the parent's (none
         * here to stop), its locks and connections are as the fork left them
         * (client_refill_renew()). */
        for (int i = 0; i < CLIENT_NODES_MAX; i++) {
            client_http_forget(&c->conns[i]);
        }
        client_strict_renew(c);
        client_free(c);
        return;
    }
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_signal(&c->wake);
    pthread_cond_broadcast(&c->filled);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_cond_destroy(&c->filled);
    pthread_mutex_destroy(&c->lock);
    client_free(c);
}
