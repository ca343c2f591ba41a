/*
 * The user table: a sorted array. Built once, never changed, so readers on
 * any thread need no lock (see auth_table.h for who frees it).
 */
#include "auth_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct auth_table {
    struct auth_user *users; /* sorted by name, unique */
    size_t n;
};

static int table_cmp(const void *a, const void *b) {
    return strcmp(((const struct auth_user *)a)->name, ((const struct auth_user *)b)->name);
}

/* Drops every user whose name appears more than once; returns how many are left. */
static size_t table_dedupe(struct auth_user *u, size_t n, auth_reject_fn reject, void *arg) {
    size_t kept = 0, i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && strcmp(u[i].name, u[j].name) == 0) {
            j++;
        }
        if (j - i == 1) {
            u[kept++] = u[i];
        } else {
            for (size_t k = i; k < j; k++) {
                if (reject != NULL) {
                    reject(arg, u[k].name, "the user name appears more than once; all left out");
                }
                auth_user_free(&u[k]);
            }
        }
        i = j;
    }
    return kept;
}

/*
 * Builds a table from n parsed users, taking over what each owns (even on
 * failure; the array itself stays the caller's and is cleared). Duplicates
 * as auth_table_build() says, reported with node_name set to the user's name.
 */
static leaf_status_t auth_table_build_users(struct auth_user *users, size_t n,
                                            auth_reject_fn reject, void *arg,
                                            struct auth_table **out) {
    struct auth_table *t = calloc(1, sizeof(*t));
    struct auth_user *copy = n > 0 ? malloc(n * sizeof(*copy)) : NULL;
    if (t == NULL || (n > 0 && copy == NULL)) {
        for (size_t i = 0; i < n; i++) {
            auth_user_free(&users[i]);
        }
        free(copy);
        free(t);
        return LEAF_ENOMEM;
    }
    if (n > 0) {
        memcpy(copy, users, n * sizeof(*copy));
        memset(users, 0, n * sizeof(*users));
        qsort(copy, n, sizeof(*copy), table_cmp);
    }
    t->users = copy;
    t->n = table_dedupe(copy, n, reject, arg);
    *out = t;
    return LEAF_OK;
}

leaf_status_t auth_table_build(const struct auth_record *recs, size_t n, auth_reject_fn reject,
                               void *arg, struct auth_table **out) {
    struct auth_user *users = n > 0 ? calloc(n, sizeof(*users)) : NULL;
    size_t ok = 0;
    char msg[256];
    if (n > 0 && users == NULL) {
        return LEAF_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        leaf_status_t rc = auth_user_parse(recs[i].json, recs[i].len, recs[i].node_name, &users[ok],
                                           msg, sizeof(msg));
        if (rc == LEAF_ENOMEM) {
            for (size_t k = 0; k < ok; k++) {
                auth_user_free(&users[k]);
            }
            free(users);
            return LEAF_ENOMEM;
        }
        if (rc != LEAF_OK) {
            if (reject != NULL) {
                reject(arg, recs[i].node_name, msg);
            }
            continue;
        }
        ok++;
    }
    leaf_status_t rc = auth_table_build_users(users, ok, reject, arg, out);
    free(users);
    return rc;
}

const struct auth_user *auth_table_find(const struct auth_table *t, const char *name, size_t len) {
    /* A name with a NUL in it would compare equal to its first part. */
    if (t == NULL || name == NULL || len == 0 || len > AUTH_USER_NAME_MAX ||
        memchr(name, '\0', len) != NULL) {
        return NULL;
    }
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *m = t->users[mid].name;
        int c = strncmp(m, name, len);
        if (c == 0 && m[len] != '\0') {
            c = 1; /* m is longer, so it sorts after name */
        }
        if (c == 0) {
            return &t->users[mid];
        }
        if (c < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

size_t auth_table_count(const struct auth_table *t) {
    return t != NULL ? t->n : 0;
}

const struct auth_user *auth_table_at(const struct auth_table *t, size_t i) {
    return t != NULL && i < t->n ? &t->users[i] : NULL;
}

void auth_table_free(struct auth_table *t) {
    if (t == NULL) {
        return;
    }
    for (size_t i = 0; i < t->n; i++) {
        auth_user_free(&t->users[i]);
    }
    free(t->users);
    free(t);
}

void auth_session_set(struct auth_session *s, const struct auth_user *u) {
    s->active = 1;
    snprintf(s->name, sizeof(s->name), "%s", u->name);
    memcpy(s->secret_hash, u->secret_hash, sizeof(s->secret_hash));
}

const struct auth_user *auth_session_user(const struct auth_table *t,
                                          const struct auth_session *s) {
    if (!s->active) {
        return NULL;
    }
    const struct auth_user *u = auth_table_find(t, s->name, strlen(s->name));
    /* Both hashes are the server's own (the client proved its secret at
     * AUTH time), so a plain memcmp leaks nothing an attacker can use. */
    if (u == NULL || memcmp(u->secret_hash, s->secret_hash, sizeof(s->secret_hash)) != 0) {
        return NULL;
    }
    return u;
}
