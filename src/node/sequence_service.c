#include "sequence_service.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "clock.h"
#include "log.h"
#include "node_ip.h"
#include "sequence_elect.h"
#include "sequence_record.h"
#include "sequence_state.h"
#include "validate.h"
#include "zk_session.h"

#define SEQ_MAX_NAMES 1000000 /* sequences one node keeps state for */
#define SEQ_CRON_MS 50        /* retries, heartbeats, the view */
#define SEQ_VIEW_MS 1000      /* standbys and the primary re-read the line this often */
#define SEQ_MAX_CREATES 64    /* admin creates in flight */
#define SEQ_DIR_MAX 192       /* /leafd/{leaf.name}/sequences */
#define SEQ_PATH_MAX 512

/* Tags of the ZooKeeper calls (zk_event.op). */
enum {
    OP_ELECT_CREATE = 1,
    OP_ELECT_LIST,
    OP_ELECT_WATCH,
    OP_HEARTBEAT,
    OP_ELECT_DELETE,
    OP_ORPHAN_DELETE,
    OP_PEER_GET,
    OP_SEQ,
    OP_ADMIN_CREATE,
};

/* One sequence; guarded by svc->lock. Never freed while the service runs. */
struct seq_entry {
    struct seq_entry *next; /* hash chain */
    uint32_t idx;
    int dirty; /* on the dirty list */
    struct sequence_state st;
    struct leaf_wait_list waiters;
    size_t len;
    char name[VALIDATE_TAG_MAX + 1];
};

/* An admin create; guarded by svc->lock. */
struct seq_create {
    int used, queued, done, abandoned;
    leaf_status_t rc;
    int64_t start;
    struct leaf_wait *wait;
    char name[VALIDATE_TAG_MAX + 1];
};

struct sequence_service {
    const struct leaf_config *cfg;
    uv_loop_t *loop;
    int enabled, started;

    /* control thread */
    struct zk_session zk;
    int zk_open;
    uv_async_t async;
    uv_timer_t cron;
    char dir_primary[SEQ_DIR_MAX], dir_seqs[SEQ_DIR_MAX];
    char self_data[2 * SEQUENCE_PEER_ADDR + 16];
    struct sequence_where self;
    char mine[SEQ_PATH_MAX]; /* my election node's full path, "" when none */
    int creating, listing, heartbeat_inflight, deleting, stepping_down;
    int64_t create_sent_ms, heartbeat_sent_ms, last_heartbeat_ms, last_view_ms;
    int connected_once;
    char **line; /* the last list of children (view), owned here */
    int nline;
    int peer_reads_left; /* OP_PEER_GET answers still to come for the view being built */

    /* guarded by lock */
    pthread_mutex_t lock;
    struct sequence_lease lease;
    int connected;
    struct seq_entry **slots;
    size_t nslots, count;
    struct seq_entry **by_idx;
    size_t idx_cap;
    struct seq_entry **dirty;
    size_t ndirty, dirty_cap;
    int demote_requested;
    struct seq_create creates[SEQ_MAX_CREATES];
    struct sequence_where where;
    struct sequence_peer peers[SEQUENCE_MAX_PEERS], next_peers[SEQUENCE_MAX_PEERS];
    size_t npeers, next_npeers;
    uint64_t elections, demotions;
};

static int64_t now_ms(void) {
    return clock_mono_ms();
}

/* ---- the table of sequences (lock held) ---------------------------------- */

static uint64_t name_hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    }
    return h;
}

static struct seq_entry *entry_find(struct sequence_service *svc, const char *name, size_t len) {
    struct seq_entry *e = svc->slots[name_hash(name, len) & (svc->nslots - 1)];
    while (e != NULL && !(e->len == len && memcmp(e->name, name, len) == 0)) {
        e = e->next;
    }
    return e;
}

static void table_grow(struct sequence_service *svc) {
    size_t n = svc->nslots * 2;
    struct seq_entry **slots = calloc(n, sizeof(struct seq_entry *)); /* NOLINT: pointer array */
    if (slots == NULL) {
        return; /* longer chains, still correct */
    }
    for (size_t i = 0; i < svc->nslots; i++) {
        struct seq_entry *e = svc->slots[i];
        while (e != NULL) {
            struct seq_entry *next = e->next;
            size_t j = name_hash(e->name, e->len) & (n - 1);
            e->next = slots[j];
            slots[j] = e;
            e = next;
        }
    }
    free(svc->slots);
    svc->slots = slots;
    svc->nslots = n;
}

static struct seq_entry *entry_add(struct sequence_service *svc, const char *name, size_t len) {
    if (svc->count >= SEQ_MAX_NAMES || len > VALIDATE_TAG_MAX) {
        return NULL;
    }
    if (svc->count == svc->idx_cap) {
        size_t cap = svc->idx_cap ? svc->idx_cap * 2 : 64;
        struct seq_entry **a = realloc(svc->by_idx, cap * sizeof(*a));
        if (a == NULL) {
            return NULL;
        }
        svc->by_idx = a;
        svc->idx_cap = cap;
    }
    struct seq_entry *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return NULL;
    }
    memcpy(e->name, name, len);
    e->len = len;
    e->idx = (uint32_t)svc->count;
    sequence_state_init(&e->st, svc->cfg->sequence_batch);
    svc->by_idx[svc->count++] = e;
    size_t j = name_hash(name, len) & (svc->nslots - 1);
    e->next = svc->slots[j];
    svc->slots[j] = e;
    if (svc->count > svc->nslots) {
        table_grow(svc);
    }
    return e;
}

/* Asks the control thread to look at e (lock held). */
static void mark_dirty(struct sequence_service *svc, struct seq_entry *e) {
    if (e->dirty) {
        return;
    }
    if (svc->ndirty == svc->dirty_cap) {
        size_t cap = svc->dirty_cap ? svc->dirty_cap * 2 : 64;
        struct seq_entry **a = realloc(svc->dirty, cap * sizeof(*a));
        if (a == NULL) {
            return; /* the cron's next pass over waiting entries picks it up */
        }
        svc->dirty = a;
        svc->dirty_cap = cap;
    }
    svc->dirty[svc->ndirty++] = e;
    e->dirty = 1;
}

static void wake_all_entries(struct sequence_service *svc) {
    for (size_t i = 0; i < svc->count; i++) {
        leaf_wait_wake_all(&svc->by_idx[i]->waiters);
    }
}

/* ---- waiters --------------------------------------------------------------- */

static void wait_cancel(struct leaf_wait *w) {
    struct sequence_service *svc = w->data;
    pthread_mutex_lock(&svc->lock);
    leaf_wait_unlink(w);
    pthread_mutex_unlock(&svc->lock);
}

static void wait_on(struct sequence_service *svc, struct seq_entry *e, struct leaf_wait *w) {
    if (w != NULL) {
        leaf_wait_link(&e->waiters, w);
        w->data = svc;
        w->cancel = wait_cancel;
    }
}

/* ---- the request path (event-loop threads) --------------------------------- */

static void where_now(struct sequence_service *svc, struct sequence_where *where) {
    if (where != NULL) {
        *where = svc->lease.primary ? (struct sequence_where){0} : svc->where;
    }
}

/* The entry to issue from, started in this term; NULL with *rc set otherwise (lock held). */
static struct seq_entry *entry_for_issue(struct sequence_service *svc, const char *name, size_t len,
                                         leaf_status_t *rc) {
    if (!svc->lease.primary) {
        *rc = LEAF_EUNAVAIL;
        return NULL;
    }
    struct seq_entry *e = entry_find(svc, name, len);
    if (e == NULL && (e = entry_add(svc, name, len)) == NULL) {
        *rc = LEAF_ENOMEM;
        return NULL;
    }
    if (e->st.phase == SEQUENCE_IDLE || e->st.term != svc->lease.term) {
        leaf_status_t st =
            sequence_state_start(&e->st, &svc->lease, svc->cfg->sequence_autocreate ? 1 : 0);
        if (st != LEAF_OK) {
            *rc = st;
            return NULL;
        }
        mark_dirty(svc, e);
    }
    return e;
}

leaf_status_t sequence_service_next(struct sequence_service *svc, const char *name, size_t len,
                                    int64_t n, int64_t *first, struct leaf_wait *w,
                                    struct sequence_where *where) {
    leaf_status_t rc = LEAF_OK;
    int kick = 0;
    if (w != NULL) {
        leaf_wait_cancel(w); /* a resumed request: leave whatever list it was on */
    }
    pthread_mutex_lock(&svc->lock);
    struct seq_entry *e = entry_for_issue(svc, name, len, &rc);
    if (e != NULL) {
        rc = sequence_state_issue(&e->st, &svc->lease, now_ms(), n, first);
        if (rc == LEAF_EAGAIN) {
            wait_on(svc, e, w);
        }
        /* A top-up is due below half a batch; the control thread sends it. */
        if (rc == LEAF_EAGAIN || (rc == LEAF_OK && e->st.inflight == 0 &&
                                  sequence_state_headroom(&e->st) * 2 < e->st.batch)) {
            kick = !e->dirty;
            mark_dirty(svc, e);
        }
    }
    if (rc == LEAF_EUNAVAIL) {
        where_now(svc, where);
    }
    if (e != NULL && e->dirty) {
        kick = 1;
    }
    pthread_mutex_unlock(&svc->lock);
    if (kick) {
        uv_async_send(&svc->async);
    }
    return rc;
}

leaf_status_t sequence_service_last(struct sequence_service *svc, const char *name, size_t len,
                                    int64_t *last, struct leaf_wait *w,
                                    struct sequence_where *where) {
    leaf_status_t rc = LEAF_OK;
    if (w != NULL) {
        leaf_wait_cancel(w);
    }
    pthread_mutex_lock(&svc->lock);
    struct seq_entry *e = entry_for_issue(svc, name, len, &rc);
    if (e != NULL) {
        int64_t now = now_ms();
        if (!sequence_lease_live(&svc->lease, now)) {
            rc = LEAF_EUNAVAIL;
        } else if (e->st.phase == SEQUENCE_SERVING) {
            *last = e->st.last;
        } else if (e->st.phase == SEQUENCE_MISSING) {
            rc = LEAF_ENOTFOUND;
        } else if (e->st.phase == SEQUENCE_FENCED || e->st.phase == SEQUENCE_CORRUPT) {
            rc = LEAF_EUNAVAIL;
        } else {
            rc = LEAF_EAGAIN;
            wait_on(svc, e, w);
        }
    }
    if (rc == LEAF_EUNAVAIL) {
        where_now(svc, where);
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

static void create_cancel(struct leaf_wait *w) {
    struct sequence_service *svc = w->data;
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < SEQ_MAX_CREATES; i++) {
        struct seq_create *c = &svc->creates[i];
        if (c->used && c->wait == w) {
            c->wait = NULL;
            c->abandoned = 1;
            if (c->done) {
                c->used = 0;
            }
        }
    }
    pthread_mutex_unlock(&svc->lock);
}

leaf_status_t sequence_service_create_seq(struct sequence_service *svc, const char *name,
                                          size_t len, int64_t start, int *ticket,
                                          struct leaf_wait *w) {
    leaf_status_t rc = LEAF_EAGAIN;
    pthread_mutex_lock(&svc->lock);
    if (*ticket < 0) {
        int i = 0;
        while (i < SEQ_MAX_CREATES && svc->creates[i].used) {
            i++;
        }
        if (i == SEQ_MAX_CREATES || len > VALIDATE_TAG_MAX) {
            rc = LEAF_ENOMEM;
        } else {
            struct seq_create *c = &svc->creates[i];
            memset(c, 0, sizeof(*c));
            c->used = c->queued = 1;
            c->start = start;
            memcpy(c->name, name, len);
            c->wait = w;
            *ticket = i;
        }
    } else if (*ticket < SEQ_MAX_CREATES && svc->creates[*ticket].used) {
        struct seq_create *c = &svc->creates[*ticket];
        if (c->done) {
            rc = c->rc;
            c->used = 0;
            c->wait = NULL;
            *ticket = -1;
        } else {
            c->wait = w;
        }
    } else {
        rc = LEAF_EINVAL;
    }
    if (rc == LEAF_EAGAIN && w != NULL) {
        w->data = svc;
        w->cancel = create_cancel;
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

leaf_status_t sequence_service_demote(struct sequence_service *svc) {
    if (svc == NULL || !svc->enabled) {
        return LEAF_EUNAVAIL;
    }
    pthread_mutex_lock(&svc->lock);
    svc->demote_requested = 1;
    pthread_mutex_unlock(&svc->lock);
    uv_async_send(&svc->async);
    return LEAF_OK;
}

/* ---- the election (control thread) ----------------------------------------- */

static void lose_primary(struct sequence_service *svc, const char *why) {
    pthread_mutex_lock(&svc->lock);
    int was = svc->lease.primary;
    sequence_lease_lose(&svc->lease);
    for (size_t i = 0; i < svc->count; i++) {
        sequence_state_stop(&svc->by_idx[i]->st);
    }
    svc->where.known = 0;
    wake_all_entries(svc);
    pthread_mutex_unlock(&svc->lock);
    if (was) {
        log_warn("sequence", "no longer the sequence primary: %s", why);
    }
}

static void elect_create(struct sequence_service *svc) {
    if (svc->creating || svc->mine[0] || svc->stepping_down) {
        return;
    }
    char path[SEQ_PATH_MAX];
    snprintf(path, sizeof(path), "%s/n_", svc->dir_primary);
    svc->create_sent_ms = now_ms();
    if (zk_session_acreate2(&svc->zk, OP_ELECT_CREATE, 0, path, svc->self_data,
                            strlen(svc->self_data), ZK_MODE_EPHEMERAL_SEQUENTIAL) == LEAF_OK) {
        svc->creating = 1;
    }
}

static void elect_list(struct sequence_service *svc) {
    if (svc->listing) {
        return;
    }
    if (zk_session_achildren2(&svc->zk, OP_ELECT_LIST, 0, svc->dir_primary) == LEAF_OK) {
        svc->listing = 1;
    }
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Reads every child's address for the view (CLUSTER SLOTS, redirects). */
static void view_read(struct sequence_service *svc, char **names, int n) {
    zk_names_free(svc->line, svc->nline);
    svc->line = names;
    svc->nline = n;
    pthread_mutex_lock(&svc->lock);
    svc->next_npeers = 0;
    pthread_mutex_unlock(&svc->lock);
    svc->peer_reads_left = 0;
    for (int i = 0; i < n && i < 64; i++) {
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%.200s", svc->dir_primary, names[i]);
        if (sequence_elect_seq(names[i]) >= 0 &&
            zk_session_aget(&svc->zk, OP_PEER_GET, (uint64_t)i, path) == LEAF_OK) {
            svc->peer_reads_left++;
        }
    }
    svc->last_view_ms = now_ms();
}

static int peer_cmp(const void *a, const void *b) {
    long long x = ((const struct sequence_peer *)a)->seq,
              y = ((const struct sequence_peer *)b)->seq;
    return x < y ? -1 : x > y;
}

/* An address read for the view: kept, and the view published once all are in. */
static void on_peer(struct sequence_service *svc, const struct zk_event *ev) {
    int i = (int)ev->arg;
    struct sequence_node_addr a;
    pthread_mutex_lock(&svc->lock);
    if (ev->result == ZK_RESULT_OK && i < svc->nline && ev->data != NULL &&
        sequence_record_parse_node(ev->data, ev->len, &a) == LEAF_OK &&
        svc->next_npeers < SEQUENCE_MAX_PEERS) {
        struct sequence_peer *p = &svc->next_peers[svc->next_npeers++];
        memset(p, 0, sizeof(*p));
        p->seq = sequence_elect_seq(svc->line[i]);
        p->self = svc->mine[0] && strcmp(base_name(svc->mine), svc->line[i]) == 0;
        snprintf(p->http, sizeof(p->http), "%s", a.http);
        snprintf(p->resp, sizeof(p->resp), "%s", a.resp);
    }
    if (--svc->peer_reads_left <= 0) {
        qsort(svc->next_peers, svc->next_npeers, sizeof(svc->next_peers[0]), peer_cmp);
        if (svc->next_npeers > 0) {
            svc->next_peers[0].primary = 1;
        }
        memcpy(svc->peers, svc->next_peers, sizeof(svc->peers));
        svc->npeers = svc->next_npeers;
        if (svc->npeers > 0 && !svc->peers[0].self) {
            svc->where.known = 1;
            snprintf(svc->where.http, sizeof(svc->where.http), "%s", svc->peers[0].http);
            snprintf(svc->where.resp, sizeof(svc->where.resp), "%s", svc->peers[0].resp);
        } else if (svc->npeers == 0) {
            svc->where.known = 0;
        }
    }
    pthread_mutex_unlock(&svc->lock);
}

static void become_primary(struct sequence_service *svc) {
    pthread_mutex_lock(&svc->lock);
    int was = svc->lease.primary;
    if (!was) {
        sequence_lease_win(&svc->lease);
        svc->elections++;
        svc->where.known = 0;
        wake_all_entries(svc); /* parked requests start their sequences in the new term */
    }
    uint64_t term = svc->lease.term;
    pthread_mutex_unlock(&svc->lock);
    if (!was) {
        log_info("sequence", "elected sequence primary (term %" PRIu64 ", %s)", term,
                 base_name(svc->mine));
    }
}

static void on_list(struct sequence_service *svc, struct zk_event *ev) {
    svc->listing = 0;
    if (ev->result != ZK_RESULT_OK || svc->mine[0] == '\0') {
        return; /* retried by the cron */
    }
    struct sequence_elect d;
    const char *const *names = (const char *const *)ev->names;
    if (sequence_elect_decide(names, ev->nnames, svc->mine, &d) != LEAF_OK) {
        log_error("sequence", "my election node %s has no counter", svc->mine);
        return;
    }
    if (d.verdict == SEQUENCE_ELECT_MISSING) {
        lose_primary(svc, "my election node is gone");
        svc->mine[0] = '\0';
        elect_create(svc);
    } else if (d.verdict == SEQUENCE_ELECT_PRIMARY) {
        become_primary(svc);
    } else {
        char path[SEQ_PATH_MAX];
        snprintf(path, sizeof(path), "%s/%.200s", svc->dir_primary, ev->names[d.watch]);
        zk_session_aexists_watch(&svc->zk, OP_ELECT_WATCH, 0, path);
    }
    /* The names move to the view, which reads every address. */
    char **taken = ev->names;
    int n = ev->nnames;
    ev->names = NULL;
    ev->nnames = 0;
    view_read(svc, taken, n);
}

static void on_elect_create(struct sequence_service *svc, const struct zk_event *ev) {
    svc->creating = 0;
    if (ev->result != ZK_RESULT_OK || ev->data == NULL) {
        return; /* the cron creates again while connected */
    }
    snprintf(svc->mine, sizeof(svc->mine), "%s", ev->data);
    pthread_mutex_lock(&svc->lock);
    sequence_lease_answer(&svc->lease, svc->create_sent_ms, now_ms());
    pthread_mutex_unlock(&svc->lock);
    log_info("sequence", "in line for sequence primary as %s", base_name(svc->mine));
    elect_list(svc);
}

static void on_heartbeat(struct sequence_service *svc, const struct zk_event *ev) {
    svc->heartbeat_inflight = 0;
    if (ev->result == ZK_RESULT_OK) {
        pthread_mutex_lock(&svc->lock);
        sequence_lease_answer(&svc->lease, svc->heartbeat_sent_ms, now_ms());
        pthread_mutex_unlock(&svc->lock);
    } else if (ev->result == ZK_RESULT_NONODE) {
        lose_primary(svc, "my election node was deleted");
        svc->mine[0] = '\0';
        elect_create(svc);
    }
}

static void heartbeat(struct sequence_service *svc, int64_t now) {
    int64_t every = svc->lease.timeout_ms / 6;
    if (svc->mine[0] == '\0' || svc->heartbeat_inflight || now - svc->last_heartbeat_ms < every) {
        return;
    }
    svc->last_heartbeat_ms = now;
    svc->heartbeat_sent_ms = now;
    if (zk_session_aset_version(&svc->zk, OP_HEARTBEAT, 0, svc->mine, svc->self_data,
                                strlen(svc->self_data), -1) == LEAF_OK) {
        svc->heartbeat_inflight = 1;
    }
}

/* ---- sequences: perform what the state machine asks (control thread) ------- */

static void seq_perform(struct sequence_service *svc, struct seq_entry *e,
                        const struct sequence_action *a) {
    char path[SEQ_PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", svc->dir_seqs, e->name);
    uint64_t arg = ((uint64_t)a->token << 24) | e->idx;
    leaf_status_t rc = LEAF_ERR;
    switch (a->op) {
    case SEQUENCE_OP_READ: rc = zk_session_aget(&svc->zk, OP_SEQ, arg, path); break;
    case SEQUENCE_OP_CREATE:
        rc = zk_session_acreate2(&svc->zk, OP_SEQ, arg, path, a->data, a->len, ZK_MODE_PERSISTENT);
        break;
    case SEQUENCE_OP_WRITE:
        rc = zk_session_aset_version(&svc->zk, OP_SEQ, arg, path, a->data, a->len, a->version);
        break;
    default: return;
    }
    if (rc != LEAF_OK) {
        /* Not sent at all: it cannot have landed. */
        pthread_mutex_lock(&svc->lock);
        sequence_state_done(&e->st, &svc->lease, a->token, now_ms(), SEQUENCE_RESULT_FAILED, NULL,
                            0, 0);
        mark_dirty(svc, e);
        pthread_mutex_unlock(&svc->lock);
    }
}

/* Wants the control thread to look again later (lock held). */
static int entry_wants(const struct seq_entry *e) {
    return e->waiters.head != NULL || e->st.need > 0 ||
           (e->st.inflight == 0 &&
            (e->st.phase == SEQUENCE_READING || e->st.phase == SEQUENCE_CREATING ||
             e->st.phase == SEQUENCE_FENCING || e->st.verify));
}

static void run_dirty(struct sequence_service *svc) {
    pthread_mutex_lock(&svc->lock);
    size_t n = svc->ndirty;
    struct seq_entry **list = svc->dirty;
    svc->dirty = NULL;
    svc->ndirty = svc->dirty_cap = 0;
    for (size_t i = 0; i < n; i++) {
        list[i]->dirty = 0;
    }
    pthread_mutex_unlock(&svc->lock);
    for (size_t i = 0; i < n; i++) {
        struct seq_entry *e = list[i];
        struct sequence_action a;
        pthread_mutex_lock(&svc->lock);
        int act = svc->connected && sequence_state_action(&e->st, &svc->lease, now_ms(), &a);
        if (!act && entry_wants(e)) {
            mark_dirty(svc, e); /* backing off, or waiting to be connected: the cron retries */
        }
        pthread_mutex_unlock(&svc->lock);
        if (act) {
            seq_perform(svc, e, &a);
        }
    }
    free(list);
}

static enum sequence_result seq_result(enum zk_result r) {
    switch (r) {
    case ZK_RESULT_OK: return SEQUENCE_RESULT_OK;
    case ZK_RESULT_BADVERSION: return SEQUENCE_RESULT_BADVERSION;
    case ZK_RESULT_NONODE: return SEQUENCE_RESULT_NONODE;
    case ZK_RESULT_EXISTS: return SEQUENCE_RESULT_EXISTS;
    case ZK_RESULT_UNKNOWN: return SEQUENCE_RESULT_UNKNOWN;
    default: return SEQUENCE_RESULT_FAILED;
    }
}

static void on_seq(struct sequence_service *svc, const struct zk_event *ev) {
    uint32_t idx = (uint32_t)(ev->arg & 0xffffff);
    uint64_t token = ev->arg >> 24;
    pthread_mutex_lock(&svc->lock);
    if (idx < svc->count) {
        struct seq_entry *e = svc->by_idx[idx];
        enum sequence_phase before = e->st.phase;
        sequence_state_done(&e->st, &svc->lease, token, now_ms(), seq_result(ev->result), ev->data,
                            ev->len, ev->version);
        if (e->st.phase == SEQUENCE_FENCED && before != SEQUENCE_FENCED) {
            log_error("sequence",
                      "sequence '%s' was fenced: another primary wrote it since; "
                      "not issuing it until this node is elected again",
                      e->name);
        }
        leaf_wait_wake_all(&e->waiters);
        mark_dirty(svc, e);
    }
    pthread_mutex_unlock(&svc->lock);
}

/* ---- admin creates (control thread) ---------------------------------------- */

static void run_creates(struct sequence_service *svc) {
    for (int i = 0; i < SEQ_MAX_CREATES; i++) {
        pthread_mutex_lock(&svc->lock);
        struct seq_create *c = &svc->creates[i];
        int go = c->used && c->queued;
        char path[SEQ_PATH_MAX], data[SEQUENCE_RECORD_MAX_LEN];
        size_t len = 0;
        if (go) {
            c->queued = 0;
            snprintf(path, sizeof(path), "%s/%s", svc->dir_seqs, c->name);
            len = sequence_record_format_max(data, sizeof(data), c->start - 1);
        }
        pthread_mutex_unlock(&svc->lock);
        if (go && zk_session_acreate2(&svc->zk, OP_ADMIN_CREATE, (uint64_t)i, path, data, len,
                                      ZK_MODE_PERSISTENT) != LEAF_OK) {
            pthread_mutex_lock(&svc->lock);
            c->done = 1;
            c->rc = LEAF_EUNAVAIL;
            if (c->wait != NULL) {
                c->wait->wake(c->wait);
            }
            pthread_mutex_unlock(&svc->lock);
        }
    }
}

static void on_admin_create(struct sequence_service *svc, const struct zk_event *ev) {
    int i = (int)ev->arg;
    if (i < 0 || i >= SEQ_MAX_CREATES) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    struct seq_create *c = &svc->creates[i];
    c->done = 1;
    c->rc = ev->result == ZK_RESULT_OK       ? LEAF_OK
            : ev->result == ZK_RESULT_EXISTS ? LEAF_EEXIST
                                             : LEAF_EUNAVAIL;
    if (c->abandoned) {
        c->used = 0;
    } else if (c->wait != NULL) {
        c->wait->wake(c->wait);
    }
    pthread_mutex_unlock(&svc->lock);
}

/* ---- session events, demotion, the cron (control thread) ------------------- */

static void on_state(struct sequence_service *svc, int state) {
    pthread_mutex_lock(&svc->lock);
    svc->connected = state == ZK_STATE_CONNECTED;
    sequence_lease_connected(&svc->lease, svc->connected);
    if (svc->connected) {
        int t = zk_session_negotiated_timeout_ms(&svc->zk);
        if (t > 0) {
            svc->lease.timeout_ms = t;
        }
    }
    pthread_mutex_unlock(&svc->lock);
    if (state == ZK_STATE_EXPIRED) {
        lose_primary(svc, "the ZooKeeper session expired");
        svc->mine[0] = '\0';
        svc->creating = svc->listing = svc->heartbeat_inflight = svc->deleting = 0;
        log_warn("sequence", "ZooKeeper session expired: starting a new one and getting in line "
                             "again");
        zk_session_reopen(&svc->zk);
    } else if (state == ZK_STATE_CONNECTED) {
        svc->connected_once = 1;
        if (svc->mine[0] == '\0') {
            elect_create(svc);
        } else {
            elect_list(svc);
        }
    }
}

static void on_delete_done(struct sequence_service *svc, const struct zk_event *ev) {
    svc->deleting = 0;
    if (ev->result == ZK_RESULT_OK || ev->result == ZK_RESULT_NONODE) {
        svc->mine[0] = '\0';
        elect_create(svc); /* back in line, behind every other node */
    }
}

static void demote(struct sequence_service *svc) {
    pthread_mutex_lock(&svc->lock);
    int was = svc->lease.primary;
    if (was) {
        svc->demotions++;
    }
    pthread_mutex_unlock(&svc->lock);
    lose_primary(svc, "demoted");
    if (svc->mine[0] && !svc->deleting &&
        zk_session_adelete(&svc->zk, OP_ELECT_DELETE, 0, svc->mine, -1) == LEAF_OK) {
        svc->deleting = 1;
    }
}

static void handle_event(struct sequence_service *svc, struct zk_event *ev) {
    if (ev->gen != svc->zk.gen) {
        return; /* from a handle replaced after an expiry */
    }
    if (ev->kind == ZK_EVENT_STATE) {
        on_state(svc, ev->state);
        return;
    }
    if (ev->kind == ZK_EVENT_WATCH) {
        elect_list(svc); /* the predecessor changed or went */
        return;
    }
    switch (ev->op) {
    case OP_ELECT_CREATE: on_elect_create(svc, ev); break;
    case OP_ELECT_LIST: on_list(svc, ev); break;
    case OP_ELECT_WATCH:
        if (ev->result == ZK_RESULT_NONODE) {
            elect_list(svc); /* gone before the watch was set */
        }
        break;
    case OP_HEARTBEAT: on_heartbeat(svc, ev); break;
    case OP_ELECT_DELETE: on_delete_done(svc, ev); break;
    case OP_PEER_GET: on_peer(svc, ev); break;
    case OP_SEQ: on_seq(svc, ev); break;
    case OP_ADMIN_CREATE: on_admin_create(svc, ev); break;
    default: break;
    }
}

static void on_async(uv_async_t *h) {
    struct sequence_service *svc = h->data;
    struct zk_event *ev = zk_session_take(&svc->zk);
    while (ev != NULL) {
        struct zk_event *next = ev->next;
        ev->next = NULL;
        if (!svc->stepping_down) {
            handle_event(svc, ev);
        }
        zk_event_free(ev);
        ev = next;
    }
    if (svc->stepping_down) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    int dem = svc->demote_requested;
    svc->demote_requested = 0;
    pthread_mutex_unlock(&svc->lock);
    if (dem) {
        demote(svc);
    }
    run_creates(svc);
    run_dirty(svc);
}

static void on_cron(uv_timer_t *t) {
    struct sequence_service *svc = t->data;
    int64_t now = now_ms();
    if (svc->stepping_down || !svc->connected) {
        return;
    }
    heartbeat(svc, now);
    if (svc->mine[0] == '\0') {
        elect_create(svc);
    } else if (now - svc->last_view_ms >= SEQ_VIEW_MS) {
        elect_list(svc);
    }
    run_dirty(svc);
}

static void notify(void *arg) {
    uv_async_send(arg);
}

/* ---- life cycle ------------------------------------------------------------- */

leaf_status_t sequence_service_create(struct sequence_service **out, const struct leaf_config *cfg,
                                      struct uv_loop_s *control_loop) {
    struct sequence_service *svc = calloc(1, sizeof(*svc));
    if (svc == NULL) {
        log_error("sequence", "out of memory creating the sequence service");
        return LEAF_ENOMEM;
    }
    svc->cfg = cfg;
    svc->loop = control_loop;
    svc->enabled = cfg->sequence_enable;
    pthread_mutex_init(&svc->lock, NULL);
    sequence_lease_init(&svc->lease, cfg->zk_session_timeout_ms);
    svc->nslots = 64;
    svc->slots = calloc(svc->nslots, sizeof(struct seq_entry *)); /* NOLINT: pointer array */
    if (svc->slots == NULL) {
        free(svc);
        log_error("sequence", "out of memory creating the sequence service");
        return LEAF_ENOMEM;
    }
    *out = svc;
    return LEAF_OK;
}

int sequence_service_enabled(const struct sequence_service *svc) {
    return svc != NULL && svc->enabled;
}

/* Creates the persistent parents once, synchronously, at start-up. */
static leaf_status_t ensure_parents(struct sequence_service *svc) {
    char path[SEQ_PATH_MAX];
    const char *parts[] = {"/leafd", NULL, svc->dir_primary, svc->dir_seqs};
    snprintf(path, sizeof(path), "/leafd/%s", svc->cfg->name);
    parts[1] = path;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        leaf_status_t st =
            zk_session_create(&svc->zk, parts[i], "", 0, ZK_MODE_PERSISTENT, NULL, 0);
        if (st != LEAF_OK && st != LEAF_EEXIST) {
            log_error("sequence", "cannot create %s in ZooKeeper (%s)", parts[i],
                      leaf_strstatus(st));
            return st;
        }
    }
    return LEAF_OK;
}

leaf_status_t sequence_service_start(struct sequence_service *svc) {
    const struct leaf_config *cfg = svc->cfg;
    if (!svc->enabled) {
        return LEAF_OK;
    }
    char ip[40];
    if (node_advertise_ip(cfg, ip, sizeof(ip)) != LEAF_OK) {
        return LEAF_ERR;
    }
    snprintf(svc->self.http, sizeof(svc->self.http), "%s:%d", ip, cfg->listen_port);
    if (cfg->resp_port != 0) {
        snprintf(svc->self.resp, sizeof(svc->self.resp), "%s:%d", ip, cfg->resp_port);
    }
    sequence_record_format_node(svc->self_data, sizeof(svc->self_data), svc->self.http,
                                svc->self.resp[0] ? svc->self.resp : NULL);
    snprintf(svc->dir_primary, sizeof(svc->dir_primary), "/leafd/%s/primary", cfg->name);
    snprintf(svc->dir_seqs, sizeof(svc->dir_seqs), "/leafd/%s/sequences", cfg->name);
    uv_async_init(svc->loop, &svc->async, on_async);
    svc->async.data = svc;
    uv_timer_init(svc->loop, &svc->cron);
    svc->cron.data = svc;
    svc->started = 1;
    if (zk_session_open(&svc->zk, cfg->zk_address, (int)cfg->zk_session_timeout_ms, notify,
                        &svc->async) != LEAF_OK) {
        return LEAF_ERR;
    }
    svc->zk_open = 1;
    if (zk_session_wait_connected(&svc->zk, (int)cfg->zk_session_timeout_ms) != LEAF_OK) {
        log_error("sequence", "cannot reach ZooKeeper at %s within %lld ms", cfg->zk_address,
                  (long long)cfg->zk_session_timeout_ms);
        return LEAF_EUNAVAIL;
    }
    if (ensure_parents(svc) != LEAF_OK) {
        return LEAF_ERR;
    }
    /* Neither handle keeps the control loop alive: it ends with the signals. */
    uv_unref((uv_handle_t *)&svc->async);
    uv_timer_start(&svc->cron, on_cron, SEQ_CRON_MS, SEQ_CRON_MS);
    uv_unref((uv_handle_t *)&svc->cron);
    uv_async_send(&svc->async); /* the CONNECTED event is queued: get in line */
    log_info("sequence", "sequences on, advertised as %s; electing a primary under %s",
             svc->self_data, svc->dir_primary);
    return LEAF_OK;
}

void sequence_service_step_down(struct sequence_service *svc) {
    if (!svc->enabled || !svc->started || svc->stepping_down) {
        return;
    }
    lose_primary(svc, "stopping");
    svc->stepping_down = 1;
    if (svc->zk_open) {
        zk_session_close(&svc->zk); /* the election node goes with the session, at once */
        svc->zk_open = 0;
    }
    uv_timer_stop(&svc->cron);
}

void sequence_service_free(struct sequence_service *svc) {
    if (svc == NULL) {
        return;
    }
    if (svc->zk_open) {
        zk_session_close(&svc->zk);
    }
    zk_names_free(svc->line, svc->nline);
    for (size_t i = 0; i < svc->count; i++) {
        free(svc->by_idx[i]);
    }
    free(svc->by_idx);
    free(svc->slots);
    free(svc->dirty);
    pthread_mutex_destroy(&svc->lock);
    free(svc);
}

/* ---- views (any thread) ------------------------------------------------------ */

size_t sequence_service_peers(struct sequence_service *svc, struct sequence_peer *out, size_t cap) {
    if (svc == NULL || !svc->enabled) {
        return 0;
    }
    pthread_mutex_lock(&svc->lock);
    size_t n = svc->npeers < cap ? svc->npeers : cap;
    memcpy(out, svc->peers, n * sizeof(*out));
    pthread_mutex_unlock(&svc->lock);
    return n;
}

void sequence_service_stats(struct sequence_service *svc, struct sequence_service_stats *st) {
    memset(st, 0, sizeof(*st));
    st->min_headroom = -1;
    if (svc == NULL || !svc->enabled) {
        return;
    }
    st->enabled = 1;
    int64_t now = now_ms();
    pthread_mutex_lock(&svc->lock);
    st->primary = svc->lease.primary;
    st->live = sequence_lease_live(&svc->lease, now);
    st->lease_left_ms = sequence_lease_left_ms(&svc->lease, now);
    st->connected = svc->connected;
    st->where = svc->lease.primary ? svc->self : svc->where;
    st->where.known = svc->lease.primary || svc->where.known;
    st->elections = svc->elections;
    st->demotions = svc->demotions;
    st->sequences = svc->count;
    for (size_t i = 0; i < svc->count; i++) {
        const struct sequence_state *s = &svc->by_idx[i]->st;
        st->fence_failures += s->fence_failures;
        st->writes += s->writes;
        st->write_failures += s->write_failures;
        st->issued += s->issued;
        if (s->phase == SEQUENCE_SERVING) {
            int64_t h = sequence_state_headroom(s);
            if (st->min_headroom < 0 || h < st->min_headroom) {
                st->min_headroom = h;
            }
        }
    }
    pthread_mutex_unlock(&svc->lock);
}

void sequence_service_each(struct sequence_service *svc,
                           void (*fn)(const char *name, int64_t acked_max, int64_t last,
                                      int64_t headroom, const char *phase, void *arg),
                           void *arg) {
    if (svc == NULL || !svc->enabled) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    for (size_t i = 0; i < svc->count; i++) {
        const struct seq_entry *e = svc->by_idx[i];
        fn(e->name, e->st.acked_max, e->st.last, sequence_state_headroom(&e->st),
           sequence_phase_name(e->st.phase), arg);
    }
    pthread_mutex_unlock(&svc->lock);
}
