/*
 * Users and permissions, the daemon side: the published table and the
 * checks the event loops make. The life cycle and the ZooKeeper side
 * (reloads, the local copy, admin changes) are in user_service_zk.c, which builds
 * on this file (never the other way round).
 * Layer: the node (src/node/users), over the pure rules of src/auth.
 */
#include "user_service_state.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_secret.h"
#include "clock.h"
#include "log.h"

static const char *const failure_names[USER_FAIL_COUNT] = {
#define USER_FAILURE_NAME(e, name) name,
    USER_FAILURES(USER_FAILURE_NAME)
#undef USER_FAILURE_NAME
};

const char *user_failure_name(enum user_failure f) {
    return f < USER_FAIL_COUNT ? failure_names[f] : "unknown";
}

int user_service_enabled(const struct user_service *svc) {
    return svc != NULL && svc->enabled;
}

/* ---- the published table (control thread writes, loops read) --------------- */

void user_service_publish(struct user_service *svc, struct auth_table *t, int from_local) {
    pthread_rwlock_wrlock(&svc->table_lock);
    struct auth_table *old = svc->table;
    svc->table = t;
    pthread_rwlock_unlock(&svc->table_lock);
    /* No reader can hold old any more: each held the read lock while using it. */
    auth_table_free(old);
    atomic_store_explicit(&svc->n_users, auth_table_count(t), memory_order_relaxed);
    atomic_store_explicit(&svc->loaded_ms, clock_wall_ms(), memory_order_relaxed);
    atomic_store_explicit(&svc->from_local, from_local, memory_order_relaxed);
}

static void count_failure(struct user_service *svc, enum user_failure f, enum user_failure *why) {
    atomic_fetch_add_explicit(&svc->failures[f], 1, memory_order_relaxed);
    if (why != NULL) {
        *why = f;
    }
}

static enum auth_verdict count_verdict(struct user_service *svc, enum auth_verdict v,
                                       enum auth_need need) {
    if (v == AUTH_FORBIDDEN && need >= AUTH_NEED_IDS && need <= AUTH_NEED_ADMIN) {
        atomic_fetch_add_explicit(&svc->denied[need - AUTH_NEED_IDS], 1, memory_order_relaxed);
    }
    return v;
}

/* A Bearer token: the root user when it equals leafd.admin.token. */
static const struct auth_user *bearer_user(struct user_service *svc, const struct user_creds *creds,
                                           enum user_failure *why) {
    const char *token = svc->cfg->admin_token;
    if (token[0] != '\0' &&
        auth_secret_equal(creds->secret, creds->secret_len, token, strlen(token))) {
        return auth_user_root();
    }
    count_failure(svc, USER_FAIL_WRONG_TOKEN, why);
    return NULL;
}

/* With the read lock held: who presented creds (NULL: *cred says why). */
static const struct auth_user *identify(struct user_service *svc, const struct user_creds *creds,
                                        enum auth_cred *cred, enum user_failure *why) {
    const struct auth_user *user = NULL;
    *cred = AUTH_CRED_BAD;
    switch (creds->kind) {
    case USER_CREDS_NONE: *cred = AUTH_CRED_NONE; return NULL;
    case USER_CREDS_MALFORMED: count_failure(svc, USER_FAIL_MALFORMED, why); return NULL;
    case USER_CREDS_BEARER: user = bearer_user(svc, creds, why); break;
    case USER_CREDS_BASIC: {
        leaf_status_t rc = auth_secret_authenticate(svc->table, creds->user, creds->user_len,
                                                    creds->secret, creds->secret_len, &user);
        if (rc != LEAF_OK) {
            count_failure(
                svc, rc == LEAF_ENOTFOUND ? USER_FAIL_UNKNOWN_USER : USER_FAIL_WRONG_SECRET, why);
            user = NULL;
        }
        break;
    }
    }
    if (user != NULL) {
        *cred = AUTH_CRED_OK;
    }
    return user;
}

/* The verdict once the identity is known; key NULL with a user: identity only. */
static enum auth_verdict decide(struct user_service *svc, enum auth_cred cred,
                                const struct auth_user *user, enum auth_need need,
                                const struct auth_key *key, enum user_failure *why) {
    if (cred == AUTH_CRED_NONE && need != AUTH_NEED_NONE) {
        count_failure(svc, USER_FAIL_MISSING, why);
    }
    if (key == NULL && (need == AUTH_NEED_IDS || need == AUTH_NEED_CREATE)) {
        /* Identity only: the handler decides on the key it reads from the body. */
        if (cred == AUTH_CRED_OK) {
            return AUTH_ALLOW;
        }
        return cred == AUTH_CRED_NONE ? AUTH_NOAUTH : AUTH_WRONGPASS;
    }
    return count_verdict(svc, auth_decide(cred, user, need, key), need);
}

enum auth_verdict user_service_check(struct user_service *svc, const struct user_creds *creds,
                                     enum auth_need need, const struct auth_key *key,
                                     enum user_failure *why) {
    if (need == AUTH_NEED_NONE) {
        return AUTH_ALLOW;
    }
    pthread_rwlock_rdlock(&svc->table_lock);
    enum auth_cred cred;
    const struct auth_user *user = identify(svc, creds, &cred, why);
    enum auth_verdict v = decide(svc, cred, user, need, key, why);
    pthread_rwlock_unlock(&svc->table_lock);
    return v;
}

leaf_status_t user_service_login(struct user_service *svc, const char *user, size_t user_len,
                                 const char *secret, size_t secret_len, struct auth_session *s,
                                 enum user_failure *why) {
    memset(s, 0, sizeof(*s));
    const struct auth_user *u = NULL;
    pthread_rwlock_rdlock(&svc->table_lock);
    leaf_status_t rc = auth_secret_authenticate(svc->table, user, user_len, secret, secret_len, &u);
    if (rc == LEAF_OK) {
        auth_session_set(s, u);
    }
    pthread_rwlock_unlock(&svc->table_lock);
    if (rc != LEAF_OK) {
        count_failure(svc, rc == LEAF_ENOTFOUND ? USER_FAIL_UNKNOWN_USER : USER_FAIL_WRONG_SECRET,
                      why);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

enum auth_verdict user_service_session_check(struct user_service *svc, const struct auth_session *s,
                                             enum auth_need need, const struct auth_key *key,
                                             enum user_failure *why) {
    if (need == AUTH_NEED_NONE) {
        return AUTH_ALLOW;
    }
    pthread_rwlock_rdlock(&svc->table_lock);
    const struct auth_user *user = auth_session_user(svc->table, s);
    enum auth_cred cred = user != NULL ? AUTH_CRED_OK : AUTH_CRED_NONE;
    if (user == NULL && s->active) {
        count_failure(svc, USER_FAIL_LAPSED, why);
    }
    enum auth_verdict v = decide(svc, cred, user, need, key, why);
    pthread_rwlock_unlock(&svc->table_lock);
    return v;
}

/* ---- the list (any thread) ---------------------------------------------------- */

static void list_user(const struct auth_user *u, struct sbuf *b) {
    sbuf_printf(b, "{\"name\":\"%s\",\"admin\":%s,\"grants\":[", u->name,
                u->admin ? "true" : "false");
    for (size_t i = 0; i < u->ngrants; i++) {
        char spec[AUTH_GRANT_SPEC_MAX + 1];
        auth_grant_spec_format(&u->grants[i], spec);
        sbuf_printf(b, "%s\"%s\"", i ? "," : "", spec);
    }
    sbuf_printf(b, "],\"created_ms\":\"%lld\"}", (long long)u->created_ms);
}

leaf_status_t user_service_list(struct user_service *svc, const char *name, struct sbuf *b) {
    leaf_status_t rc = LEAF_OK;
    pthread_rwlock_rdlock(&svc->table_lock);
    if (name != NULL) {
        const struct auth_user *u = auth_table_find(svc->table, name, strlen(name));
        if (u == NULL) {
            rc = LEAF_ENOTFOUND;
        } else {
            list_user(u, b);
        }
    } else {
        sbuf_puts(b, "{\"users\":[");
        size_t n = auth_table_count(svc->table);
        for (size_t i = 0; i < n; i++) {
            if (i > 0) {
                sbuf_putc(b, ',');
            }
            list_user(auth_table_at(svc->table, i), b);
        }
        sbuf_puts(b, "]}");
    }
    pthread_rwlock_unlock(&svc->table_lock);
    return rc;
}

int user_service_known(struct user_service *svc, const char *name, size_t len) {
    if (!user_service_enabled(svc)) {
        return 0;
    }
    pthread_rwlock_rdlock(&svc->table_lock);
    int known = auth_table_find(svc->table, name, len) != NULL;
    pthread_rwlock_unlock(&svc->table_lock);
    return known;
}

void user_service_stats(struct user_service *svc, struct user_service_stats *out) {
    memset(out, 0, sizeof(*out));
    if (!user_service_enabled(svc)) {
        return;
    }
    out->enabled = 1;
    out->connected = atomic_load_explicit(&svc->connected, memory_order_relaxed);
    out->users = atomic_load_explicit(&svc->n_users, memory_order_relaxed);
    out->reloads = atomic_load_explicit(&svc->reloads, memory_order_relaxed);
    out->reload_failures = atomic_load_explicit(&svc->reload_failures, memory_order_relaxed);
    out->rejected = atomic_load_explicit(&svc->rejected, memory_order_relaxed);
    out->changes = atomic_load_explicit(&svc->changes, memory_order_relaxed);
    for (int i = 0; i < USER_FAIL_COUNT; i++) {
        out->failures[i] = atomic_load_explicit(&svc->failures[i], memory_order_relaxed);
    }
    for (int i = 0; i < 3; i++) {
        out->denied[i] = atomic_load_explicit(&svc->denied[i], memory_order_relaxed);
    }
    out->loaded_ms = atomic_load_explicit(&svc->loaded_ms, memory_order_relaxed);
    out->from_local = atomic_load_explicit(&svc->from_local, memory_order_relaxed);
}

int user_service_log_allowed(struct user_service *svc, const char *peer, uint64_t *suppressed) {
    const char *colon = peer != NULL ? strrchr(peer, ':') : NULL;
    size_t n = peer == NULL ? 0 : colon != NULL ? (size_t)(colon - peer) : strlen(peer);
    pthread_mutex_lock(&svc->lock);
    int ok =
        auth_ratelimit_allow(&svc->log_limit, peer ? peer : "", n, clock_mono_ms(), suppressed);
    pthread_mutex_unlock(&svc->lock);
    return ok;
}
