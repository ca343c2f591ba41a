/*
 * Keyed spaces (docs/keyed-sequences.md): their definitions, /leafd/{leaf.name}/keyed/{space}
 * holding {"step":N} (sequence_record.h), learned into the core (sequence/sequence_keyed.h),
 * and the admin jobs (src/node/common/node_jobs.h) that create a space or list them all:
 *   create  acreate the space's node (EXISTS: LEAF_EEXIST; NONODE: /keyed was removed by
 *           hand, so it is created again, then the space, once);
 *   list    the children of /keyed, then the definitions of those not known here.
 * The views and figures for metrics come from here too.
 * Threads: requests step their jobs under svc->lock; the control thread runs one job at a
 * time (running, list_names).
 * Layer: the node (src/node/sequence), under sequence_service_keyed.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sequence_keyed.h"
#include "sequence_record.h"
#include "sequence_service.h"
#include "sequence_service_state.h"

/* The spaces known here with this node's counters (lock held); how many were written. */
static int keyed_views(const struct sequence_keyed *k, struct sequence_keyed_view *out, int cap) {
    int n = 0;
    for (int i = 0; i < k->nspaces && n < cap; i++) {
        const struct sequence_keyed_space *sp = k->spaces[i];
        struct sequence_keyed_view *v = &out[n++];
        snprintf(v->name, sizeof(v->name), "%s", sp->name);
        v->step = sp->step;
        v->issued = sp->stats.issued;
        v->resident = sp->stats.resident;
        v->writes = sp->stats.writes;
        v->evictions = sp->stats.evictions;
    }
    return n;
}

/* A job's step for the request, lock taken here; a finished list copies the views. */
static leaf_status_t keyed_job_step(struct sequence_service *svc, enum seq_keyed_kind kind,
                                    const char *name, size_t len, int64_t step, int *ticket,
                                    struct leaf_wait *w, struct sequence_keyed_view *out, int cap,
                                    int *n) {
    struct seq_keyed_svc *ks = &svc->keyed;
    struct node_job *j;
    pthread_mutex_lock(&svc->lock);
    int fresh = *ticket < 0;
    leaf_status_t rc = node_jobs_step(&ks->jobs, ticket, w, &j);
    if (fresh && j != NULL) {
        struct seq_keyed_job *s = (struct seq_keyed_job *)j;
        s->kind = kind;
        s->tries = 0;
        s->left = 0;
        s->step = step;
        s->len = len;
        memcpy(s->name, name, len);
        s->name[len] = '\0';
    } else if (rc != LEAF_EAGAIN && j != NULL) {
        if (out != NULL && rc == LEAF_OK) {
            *n = keyed_views(ks->core, out, cap);
        }
        node_jobs_release(&ks->jobs, j);
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

leaf_status_t sequence_service_keyed_create(struct sequence_service *svc, const char *space,
                                            size_t len, int64_t step, int *ticket,
                                            struct leaf_wait *w) {
    if (svc == NULL || !svc->enabled || svc->keyed.core == NULL) {
        return LEAF_EUNAVAIL;
    }
    if (*ticket < 0) {
        if (!sequence_keyed_name_ok(space, len) || step < 1 || step > SEQUENCE_KEYED_MAX_STEP) {
            return LEAF_EINVAL;
        }
        pthread_mutex_lock(&svc->lock);
        int full = svc->keyed.core->nspaces >= SEQUENCE_KEYED_MAX_SPACES;
        pthread_mutex_unlock(&svc->lock);
        if (full) {
            return LEAF_ERANGE;
        }
    }
    return keyed_job_step(svc, SEQ_KEYED_CREATE, space, len, step, ticket, w, NULL, 0, NULL);
}

leaf_status_t sequence_service_keyed_list(struct sequence_service *svc,
                                          struct sequence_keyed_view *out, int cap, int *n,
                                          int *ticket, struct leaf_wait *w) {
    *n = 0;
    if (svc == NULL || !svc->enabled || svc->keyed.core == NULL) {
        return LEAF_EUNAVAIL;
    }
    return keyed_job_step(svc, SEQ_KEYED_LIST, "", 0, 0, ticket, w, out, cap, n);
}

/* ---- the control thread -------------------------------------------------------------------- */

/* Learns a space from its definition's bytes (lock held); LEAF_EINVAL when malformed. */
leaf_status_t sequence_service_keyed_space_learn(struct sequence_service *svc, const char *name,
                                                 const char *data, size_t len) {
    int64_t step = 0;
    int index;
    leaf_status_t rc = sequence_record_parse_int(data, len, "step", &step);
    if (rc == LEAF_OK) {
        rc = sequence_keyed_space_add(svc->keyed.core, name, strlen(name), step, &index);
    }
    if (rc != LEAF_OK && rc != LEAF_EEXIST) {
        log_warn("keyed", "%s/%s: a space definition this node cannot use (%s): %.*s",
                 svc->keyed.dir, name, leaf_strstatus(rc), (int)(len < 80 ? len : 80),
                 data != NULL ? data : "");
        return rc;
    }
    return LEAF_OK;
}

/* Ends the running job with rc. */
static void keyed_job_end(struct sequence_service *svc, leaf_status_t rc) {
    struct seq_keyed_svc *ks = &svc->keyed;
    pthread_mutex_lock(&svc->lock);
    if (ks->running >= 0) {
        node_jobs_finish(&ks->jobs, &ks->slots[ks->running].job, rc);
    }
    ks->running = -1;
    pthread_mutex_unlock(&svc->lock);
}

static void keyed_create_send(struct sequence_service *svc, struct seq_keyed_job *j) {
    char path[SEQ_PATH_MAX], data[SEQUENCE_RECORD_MAX_LEN];
    snprintf(path, sizeof(path), "%s/%s", svc->keyed.dir, j->name);
    size_t len = sequence_record_format_int(data, sizeof(data), "step", j->step);
    j->tries++;
    if (zk_session_acreate2(&svc->zsub, OP_KEYED_CREATE, 0, path, data, len, ZK_MODE_PERSISTENT) !=
        LEAF_OK) {
        log_warn("keyed", "creating %s failed: the request could not be sent", path);
        keyed_job_end(svc, LEAF_EUNAVAIL);
    }
}

void sequence_service_keyed_space_run(struct sequence_service *svc) {
    struct seq_keyed_svc *ks = &svc->keyed;
    if (ks->running != -1) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    ks->running = node_jobs_next(&ks->jobs);
    pthread_mutex_unlock(&svc->lock);
    if (ks->running < 0) {
        return;
    }
    struct seq_keyed_job *j = &ks->slots[ks->running];
    if (j->kind == SEQ_KEYED_CREATE) {
        keyed_create_send(svc, j);
    } else if (zk_session_achildren2(&svc->zsub, OP_KEYED_LIST, 0, ks->dir) != LEAF_OK) {
        keyed_job_end(svc, LEAF_EUNAVAIL);
    }
}

static void keyed_on_create(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_keyed_svc *ks = &svc->keyed;
    struct seq_keyed_job *j = &ks->slots[ks->running];
    if (ev->result == ZK_RESULT_NONODE && j->tries < SEQ_KEYED_CREATE_TRIES) {
        /* /keyed is gone (a tree wiped by hand): create it, then the space again */
        if (zk_session_acreate2(&svc->zsub, OP_KEYED_DIR, 0, ks->dir, "", 0, ZK_MODE_PERSISTENT) !=
            LEAF_OK) {
            keyed_job_end(svc, LEAF_EUNAVAIL);
        }
        return;
    }
    if (ev->result == ZK_RESULT_EXISTS) {
        keyed_job_end(svc, LEAF_EEXIST);
        return;
    }
    if (ev->result != ZK_RESULT_OK) {
        log_warn("keyed", "creating %s/%s failed (%s)", ks->dir, j->name, leaf_strstatus(ev->rc));
        keyed_job_end(svc, LEAF_EUNAVAIL);
        return;
    }
    char data[SEQUENCE_RECORD_MAX_LEN];
    size_t len = sequence_record_format_int(data, sizeof(data), "step", j->step);
    pthread_mutex_lock(&svc->lock);
    (void)sequence_service_keyed_space_learn(svc, j->name, data, len);
    for (int i = 0; i < SEQ_KEYED_LOOKUPS; i++) {
        struct seq_keyed_lookup *l = &ks->lookups[i];
        if (l->state != SEQ_KEYED_FREE && l->len == j->len &&
            memcmp(l->name, j->name, j->len) == 0) {
            l->state = SEQ_KEYED_FREE; /* a cached "absent" is over */
            leaf_wait_wake_all(&l->waiters);
        }
    }
    pthread_mutex_unlock(&svc->lock);
    log_info("keyed", "keyed space %s created (step %" PRId64 ")", j->name, j->step);
    keyed_job_end(svc, LEAF_OK);
}

static void keyed_list_forget(struct seq_keyed_svc *ks) {
    for (int i = 0; i < ks->list_n; i++) {
        free(ks->list_names[i]);
    }
    free((void *)ks->list_names);
    ks->list_names = NULL;
    ks->list_n = 0;
}

/* The children of /keyed: reads the definitions of the spaces not known here (arg: the index
 * of the name in ks->list_names). */
static void keyed_on_list(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_keyed_svc *ks = &svc->keyed;
    struct seq_keyed_job *j = &ks->slots[ks->running];
    if (ev->result == ZK_RESULT_NONODE) {
        keyed_job_end(svc, LEAF_OK); /* no space yet */
        return;
    }
    if (ev->result != ZK_RESULT_OK) {
        log_warn("keyed", "listing %s failed (%s)", ks->dir, leaf_strstatus(ev->rc));
        keyed_job_end(svc, LEAF_EUNAVAIL);
        return;
    }
    keyed_list_forget(ks);
    ks->list_names = calloc(ev->nnames > 0 ? (size_t)ev->nnames : 1, sizeof(char *));
    j->left = 0;
    for (int i = 0; ks->list_names != NULL && i < ev->nnames; i++) {
        const char *name = ev->names[i];
        size_t len = strlen(name);
        pthread_mutex_lock(&svc->lock);
        int known = sequence_keyed_space_find(ks->core, name, len) >= 0;
        pthread_mutex_unlock(&svc->lock);
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", ks->dir, name);
        if (known || !sequence_keyed_name_ok(name, len) ||
            (ks->list_names[ks->list_n] = strdup(name)) == NULL) {
            continue;
        }
        if (zk_session_aget(&svc->zsub, OP_KEYED_LIST_GET, (uint64_t)ks->list_n, path) == LEAF_OK) {
            ks->list_n++;
            j->left++;
        } else {
            free(ks->list_names[ks->list_n]);
        }
    }
    if (j->left == 0) {
        keyed_list_forget(ks); /* every space known here: no read holds the names */
        keyed_job_end(svc, LEAF_OK);
    }
}

static void keyed_on_list_get(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_keyed_svc *ks = &svc->keyed;
    struct seq_keyed_job *j = &ks->slots[ks->running];
    if (ev->result == ZK_RESULT_OK && ev->arg < (uint64_t)ks->list_n) {
        pthread_mutex_lock(&svc->lock);
        (void)sequence_service_keyed_space_learn(svc, ks->list_names[ev->arg], ev->data, ev->len);
        pthread_mutex_unlock(&svc->lock);
    }
    if (--j->left <= 0) {
        keyed_list_forget(ks);
        keyed_job_end(svc, LEAF_OK);
    }
}

void sequence_service_keyed_space_on_zk(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_keyed_svc *ks = &svc->keyed;
    if (ks->running < 0) {
        return; /* a job the session's expiry already ended */
    }
    switch (ev->op) {
    case OP_KEYED_CREATE: keyed_on_create(svc, ev); break;
    case OP_KEYED_DIR:
        if (ev->result == ZK_RESULT_OK || ev->result == ZK_RESULT_EXISTS) {
            keyed_create_send(svc, &ks->slots[ks->running]);
        } else {
            keyed_job_end(svc, LEAF_EUNAVAIL);
        }
        break;
    case OP_KEYED_LIST: keyed_on_list(svc, ev); break;
    case OP_KEYED_LIST_GET: keyed_on_list_get(svc, ev); break;
    default: break;
    }
}

void sequence_service_keyed_space_expired(struct sequence_service *svc) {
    if (svc->keyed.running != -1) {
        keyed_list_forget(&svc->keyed);
        keyed_job_end(svc, LEAF_EUNAVAIL);
    }
}

/* ---- views --------------------------------------------------------------------------------- */

int sequence_service_keyed_views(struct sequence_service *svc, struct sequence_keyed_view *out,
                                 int cap) {
    int n = 0;
    if (svc == NULL || svc->keyed.core == NULL) {
        return 0;
    }
    pthread_mutex_lock(&svc->lock);
    n = keyed_views(svc->keyed.core, out, cap);
    pthread_mutex_unlock(&svc->lock);
    return n;
}

void sequence_service_keyed_stats(struct sequence_service *svc, struct sequence_service_stats *st) {
    const struct sequence_keyed *k = svc->keyed.core;
    if (k == NULL) {
        return;
    }
    st->keyed_spaces = k->nspaces;
    st->keyed_bytes = sequence_keyed_bytes(k);
    for (int i = 0; i < k->nspaces; i++) {
        st->keyed_resident += k->spaces[i]->stats.resident;
        st->keyed_fences += k->spaces[i]->stats.fences;
    }
}
