/*
 * The users' ZooKeeper side, on the control thread: reloading
 * /leafd/{leaf.name}/users/ (the children and each record, with watches)
 * whenever it changes or the session (re)connects, the local copy in the
 * data dir, the admin changes the event loops queue, and the service's life
 * cycle (create, start, stop, free).
 * Layer: the node (src/node/users), over user_service.c and zk/zk_session.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth_user.h"
#include "clock.h"
#include "file.h"
#include "log.h"
#include "user_service_state.h"

enum {
    OP_LIST = 1,  /* the children of the users' directory, watched */
    OP_GET,       /* one record, watched; arg = reload id << 32 | index */
    OP_MKDIR,     /* a parent of the users' directory */
    OP_CH_GET,    /* a change reads the record; arg = slot */
    OP_CH_SET,    /* a change writes it back (versioned) */
    OP_CH_CREATE, /* ADD */
    OP_CH_DELETE, /* DEL */
};

#define USER_LOCAL_MAX ((size_t)64 << 20)
#define USER_CHANGE_ATTEMPTS 5

static void reload(struct user_service *svc);
static void run_changes(struct user_service *svc);

/* ---- the local copy ----------------------------------------------------------- */

static void reject_record(void *arg, const char *node_name, const char *msg) {
    (void)arg;
    char safe[AUTH_USER_NAME_MAX + 1];
    size_t i = log_safe(node_name, node_name ? strlen(node_name) : 0, safe, sizeof(safe));
    log_warn("auth", "user record '%s' ignored (the other users are applied): %s",
             i ? safe : "(local copy)", msg);
}

/* Loads the local copy into a table; LEAF_ENOTFOUND when there is none. */
static leaf_status_t local_load(struct user_service *svc) {
    char *text;
    size_t len;
    leaf_status_t rc = file_read_all("auth", svc->local_path, USER_LOCAL_MAX, &text, &len);
    if (rc != LEAF_OK) {
        return rc;
    }
    size_t n = 0, cap = 16;
    struct auth_record *recs = malloc(cap * sizeof(*recs));
    for (char *p = text; recs != NULL && p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        if (l > 0 && n == cap) {
            struct auth_record *more = realloc(recs, 2 * cap * sizeof(*recs));
            if (more == NULL) {
                free(recs);
                recs = NULL;
                break;
            }
            recs = more;
            cap *= 2;
        }
        if (l > 0) {
            recs[n++] = (struct auth_record){NULL, p, l};
        }
        p += l + 1;
    }
    struct auth_table *t = NULL;
    rc = recs == NULL ? LEAF_ENOMEM : auth_table_build(recs, n, reject_record, svc, &t);
    free(recs);
    free(text);
    if (rc != LEAF_OK) {
        log_error("auth", "cannot load the local copy of the users %s", svc->local_path);
        return rc;
    }
    log_info("auth", "%zu users loaded from the local copy %s", auth_table_count(t),
             svc->local_path);
    user_service_publish(svc, t, 1);
    return LEAF_OK;
}

/* Writes the published users to the local copy (mode 0600), when they changed. */
static void local_save(struct user_service *svc, const struct auth_table *t) {
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < auth_table_count(t); i++) {
        auth_user_format(auth_table_at(t, i), &b);
        sbuf_putc(&b, '\n');
    }
    if (b.failed) {
        log_error("auth", "out of memory writing the local copy of the users");
    } else if (file_write_atomic("auth", svc->local_path, b.data ? b.data : "", b.len, 0600) !=
               LEAF_OK) {
        log_error("auth", "the local copy of the users %s was not updated", svc->local_path);
    }
    sbuf_free(&b);
}

/* ---- reloads ------------------------------------------------------------------ */

/* Frees what a reload in flight holds; control thread. */
static void user_read_reset(struct user_service *svc) {
    for (int i = 0; i < svc->nnames; i++) {
        free(svc->datas ? svc->datas[i] : NULL);
    }
    zk_names_free(svc->names, svc->nnames);
    free(svc->datas);
    free(svc->lens);
    svc->names = NULL;
    svc->datas = NULL;
    svc->lens = NULL;
    svc->nnames = svc->reads_left = svc->read_failed = 0;
}

static void reload_done(struct user_service *svc, int ok) {
    svc->reloading = 0;
    user_read_reset(svc);
    if (!ok) {
        atomic_fetch_add_explicit(&svc->reload_failures, 1, memory_order_relaxed);
        svc->reload_failed = 1; /* the cron tries again while connected */
        return;
    }
    atomic_fetch_add_explicit(&svc->reloads, 1, memory_order_relaxed);
    if (svc->reload_again) {
        svc->reload_again = 0;
        reload(svc);
    }
}

/* Every record is in: build, publish, save. */
static void reload_finish(struct user_service *svc) {
    if (svc->read_failed) {
        log_warn("auth",
                 "reading the users under %s failed; keeping the %" PRIu64
                 " users applied, retrying",
                 svc->dir, (uint64_t)atomic_load(&svc->n_users));
        reload_done(svc, 0);
        return;
    }
    if (!zk_session_acl_is_closed(svc->zsub.s)) {
        /* Users are a feature of closed trees (docs/reference/zookeeper.md, "ACLs"):
         * while anyone may write the records, none is trusted. */
        if (!svc->warned_open) {
            log_warn("auth", "users are not applied while the cluster's trees are open (they "
                             "close once every live node runs leafd.zk.auth and 1.0 or later; "
                             "`leafctl acl status` names who holds them back): user logins are "
                             "refused, the admin token works");
        }
        svc->warned_open = 1;
        struct auth_table *none = NULL;
        if (atomic_load(&svc->n_users) != 0 &&
            auth_table_build(NULL, 0, NULL, NULL, &none) == LEAF_OK) {
            user_service_publish(svc, none, 0);
        }
        reload_done(svc, 0);
        return;
    }
    svc->warned_open = 0;
    struct auth_record *recs = calloc((size_t)svc->nnames + 1, sizeof(*recs));
    size_t n = 0;
    for (int i = 0; recs != NULL && i < svc->nnames; i++) {
        if (svc->datas[i] != NULL) {
            recs[n++] = (struct auth_record){svc->names[i], svc->datas[i], svc->lens[i]};
        }
    }
    struct auth_table *t = NULL;
    if (recs == NULL || auth_table_build(recs, n, reject_record, svc, &t) != LEAF_OK) {
        free(recs);
        log_error("auth", "out of memory building the user table; keeping the one applied");
        reload_done(svc, 0);
        return;
    }
    free(recs);
    size_t applied = auth_table_count(t);
    atomic_store_explicit(&svc->rejected, n - applied, memory_order_relaxed);
    log_info("auth", "users applied from ZooKeeper: %zu (%zu records ignored)", applied,
             n - applied);
    local_save(svc, t);
    user_service_publish(svc, t, 0);
    reload_done(svc, 1);
}

/* Creates /leafd, /leafd/{name} and the users' directory (requests run in order). */
static void make_dirs(struct user_service *svc) {
    char path[sizeof(svc->dir)];
    for (char *p = svc->dir + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            snprintf(path, sizeof(path), "%.*s", (int)(p - svc->dir), svc->dir);
            zk_session_acreate2(&svc->zsub, OP_MKDIR, 0, path, "", 0, ZK_MODE_PERSISTENT);
        }
        if (*p == '\0') {
            break;
        }
    }
    svc->dir_made = 1;
}

static void reload(struct user_service *svc) {
    if (!atomic_load(&svc->connected) || svc->stopping) {
        svc->reload_failed = 1;
        return;
    }
    if (svc->reloading) {
        svc->reload_again = 1;
        return;
    }
    svc->reloading = 1;
    svc->reload_id++;
    if (zk_session_achildren_watch(&svc->zsub, OP_LIST, svc->reload_id, svc->dir) != LEAF_OK) {
        reload_done(svc, 0);
    }
}

static void on_list(struct user_service *svc, struct zk_event *ev) {
    if (!svc->reloading || ev->arg != svc->reload_id) {
        return;
    }
    if (ev->result == ZK_RESULT_NONODE) {
        if (!svc->dir_made) {
            make_dirs(svc); /* then list again: the requests run in order */
            svc->reloading = 0;
            reload(svc);
            return;
        }
        svc->dir_made = 0; /* made and gone again: make it on the next try */
    }
    if (ev->result != ZK_RESULT_OK) {
        log_warn("auth", "listing the users under %s failed", svc->dir);
        reload_done(svc, 0);
        return;
    }
    int n = ev->nnames < USER_MAX_USERS ? ev->nnames : USER_MAX_USERS;
    if (ev->nnames > USER_MAX_USERS) {
        log_error("auth", "%d users under %s: only the first %d are read", ev->nnames, svc->dir,
                  USER_MAX_USERS);
    }
    svc->names = ev->names;
    svc->nnames = ev->nnames;
    ev->names = NULL;
    ev->nnames = 0;
    svc->datas = calloc((size_t)svc->nnames + 1, sizeof(*svc->datas));
    svc->lens = calloc((size_t)svc->nnames + 1, sizeof(*svc->lens));
    if (svc->datas == NULL || svc->lens == NULL) {
        reload_done(svc, 0);
        return;
    }
    svc->reads_left = n;
    for (int i = 0; i < n; i++) {
        char path[sizeof(svc->dir) + 300];
        snprintf(path, sizeof(path), "%s/%.256s", svc->dir, svc->names[i]);
        uint64_t arg = (uint64_t)svc->reload_id << 32 | (uint64_t)i;
        if (zk_session_aget_watch(&svc->zsub, OP_GET, arg, path) != LEAF_OK) {
            svc->read_failed = 1;
            svc->reads_left--;
        }
    }
    if (svc->reads_left == 0) {
        reload_finish(svc);
    }
}

static void on_get(struct user_service *svc, struct zk_event *ev) {
    unsigned id = (unsigned)(ev->arg >> 32);
    int i = (int)(ev->arg & 0xffffffffu);
    if (!svc->reloading || id != svc->reload_id || i >= svc->nnames) {
        return;
    }
    if (ev->result == ZK_RESULT_OK && ev->data != NULL) {
        svc->datas[i] = ev->data;
        svc->lens[i] = ev->len;
        ev->data = NULL;
    } else if (ev->result != ZK_RESULT_NONODE) { /* gone since the list: the watch says so */
        svc->read_failed = 1;
    }
    if (--svc->reads_left == 0) {
        reload_finish(svc);
    }
}

/* ---- admin changes ------------------------------------------------------------ */

static void change_path(const struct user_service *svc, const struct user_change_slot *slot,
                        char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", svc->dir, slot->c.name);
}

/* The change is over: record the outcome and wake its request. Control thread. */
static void change_done(struct user_service *svc, int i, leaf_status_t rc) {
    pthread_mutex_lock(&svc->lock);
    node_jobs_finish(&svc->jobs, &svc->changes_q[i].job, rc);
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_OK) {
        /* No reload here: the watch on the directory or the record fires for this write too. */
        atomic_fetch_add_explicit(&svc->changes, 1, memory_order_relaxed);
    }
}

static leaf_status_t change_create(struct user_service *svc, int i) {
    struct user_change_slot *slot = &svc->changes_q[i];
    struct auth_user u = {0};
    snprintf(u.name, sizeof(u.name), "%s", slot->c.name);
    memcpy(u.secret_hash, slot->c.hash, AUTH_HASH_LEN);
    u.admin = slot->c.admin > 0;
    u.created_ms = clock_wall_ms();
    u.grants = slot->grants;
    u.ngrants = slot->c.ngrants;
    struct sbuf b = SBUF_INIT;
    auth_user_format(&u, &b);
    char path[sizeof(svc->dir) + AUTH_USER_NAME_MAX + 2];
    change_path(svc, slot, path, sizeof(path));
    leaf_status_t rc = b.failed ? LEAF_ENOMEM
                                : zk_session_acreate2(&svc->zsub, OP_CH_CREATE, (uint64_t)i, path,
                                                      b.data, b.len, ZK_MODE_PERSISTENT);
    sbuf_free(&b);
    return rc;
}

static void change_start(struct user_service *svc, int i) {
    struct user_change_slot *slot = &svc->changes_q[i];
    char path[sizeof(svc->dir) + AUTH_USER_NAME_MAX + 2];
    change_path(svc, slot, path, sizeof(path));
    leaf_status_t rc;
    slot->step = 0;
    switch (slot->c.kind) {
    case USER_CHANGE_ADD: rc = change_create(svc, i); break;
    case USER_CHANGE_DEL:
        rc = zk_session_adelete(&svc->zsub, OP_CH_DELETE, (uint64_t)i, path, -1);
        break;
    default: rc = zk_session_aget(&svc->zsub, OP_CH_GET, (uint64_t)i, path); break;
    }
    if (rc != LEAF_OK) {
        change_done(svc, i, LEAF_EUNAVAIL);
    }
}

static void run_changes(struct user_service *svc) {
    if (!atomic_load(&svc->connected) || svc->stopping) {
        return;
    }
    for (;;) {
        pthread_mutex_lock(&svc->lock);
        int i = node_jobs_next(&svc->jobs);
        pthread_mutex_unlock(&svc->lock);
        if (i < 0) {
            break;
        }
        change_start(svc, i);
    }
}

/* Applies the change to the record read; LEAF_OK, or why not. */
static leaf_status_t change_apply(struct user_change_slot *slot, struct auth_user *u) {
    const struct user_change *c = &slot->c;
    if (c->kind == USER_CHANGE_ROTATE) {
        memcpy(u->secret_hash, c->hash, AUTH_HASH_LEN);
        return LEAF_OK;
    }
    for (size_t g = 0; g < c->ngrants; g++) {
        if (c->kind == USER_CHANGE_GRANT) {
            leaf_status_t rc = auth_user_grant(u, &slot->grants[g]);
            if (rc != LEAF_OK) {
                return rc;
            }
        } else {
            auth_user_revoke(u, &slot->grants[g]);
        }
    }
    if (c->admin >= 0) {
        u->admin = c->admin;
    }
    return LEAF_OK;
}

static void on_change_get(struct user_service *svc, int i, const struct zk_event *ev) {
    struct user_change_slot *slot = &svc->changes_q[i];
    if (ev->result != ZK_RESULT_OK) {
        change_done(svc, i, ev->result == ZK_RESULT_NONODE ? LEAF_ENOTFOUND : LEAF_EUNAVAIL);
        return;
    }
    struct auth_user u;
    char msg[256];
    leaf_status_t rc =
        auth_user_parse(ev->data ? ev->data : "", ev->len, slot->c.name, &u, msg, sizeof(msg));
    if (rc != LEAF_OK) {
        log_error("auth", "cannot change user '%s': its record in ZooKeeper is malformed: %s",
                  slot->c.name, msg);
        change_done(svc, i, LEAF_EINVAL);
        return;
    }
    rc = change_apply(slot, &u);
    struct sbuf b = SBUF_INIT;
    if (rc == LEAF_OK) {
        auth_user_format(&u, &b);
        rc = b.failed ? LEAF_ENOMEM : LEAF_OK;
    }
    auth_user_free(&u);
    char path[sizeof(svc->dir) + AUTH_USER_NAME_MAX + 2];
    change_path(svc, slot, path, sizeof(path));
    if (rc == LEAF_OK) {
        slot->step = 1;
        rc = zk_session_aset_version(&svc->zsub, OP_CH_SET, (uint64_t)i, path, b.data, b.len,
                                     ev->version);
        rc = rc == LEAF_OK ? LEAF_OK : LEAF_EUNAVAIL;
    }
    sbuf_free(&b);
    if (rc != LEAF_OK) {
        change_done(svc, i, rc == LEAF_ENOMEM ? LEAF_EUNAVAIL : rc);
    }
}

static void on_change(struct user_service *svc, int op, int i, const struct zk_event *ev) {
    struct user_change_slot *slot = &svc->changes_q[i];
    if (!slot->job.running) {
        return;
    }
    switch (op) {
    case OP_CH_GET: on_change_get(svc, i, ev); return;
    case OP_CH_SET:
        if (ev->result == ZK_RESULT_BADVERSION && ++slot->attempts < USER_CHANGE_ATTEMPTS) {
            change_start(svc, i); /* someone changed it since the read: read it again */
            return;
        }
        break;
    case OP_CH_CREATE:
        if (ev->result == ZK_RESULT_NONODE && ++slot->attempts < USER_CHANGE_ATTEMPTS) {
            make_dirs(svc);
            change_start(svc, i);
            return;
        }
        break;
    default: break;
    }
    leaf_status_t rc = ev->result == ZK_RESULT_OK       ? LEAF_OK
                       : ev->result == ZK_RESULT_EXISTS ? LEAF_EEXIST
                       : ev->result == ZK_RESULT_NONODE ? LEAF_ENOTFOUND
                                                        : LEAF_EUNAVAIL;
    change_done(svc, i, rc);
}

/* A session ended: its changes in flight will never hear back. */
static void fail_running(struct user_service *svc) {
    for (int i = 0; i < USER_MAX_CHANGES; i++) {
        if (svc->changes_q[i].job.running) {
            change_done(svc, i, LEAF_EUNAVAIL);
        }
    }
}

/* Frees a slot's copy of the grants (node_jobs release). */
static void change_release(struct node_job *j) {
    struct user_change_slot *slot = (struct user_change_slot *)j;
    free(slot->grants);
    slot->grants = NULL;
}

/* Fills a slot just taken for c; LEAF_ENOMEM (slot freed) when the grants cannot be copied. */
static leaf_status_t change_fill(struct user_service *svc, struct user_change_slot *slot,
                                 const struct user_change *c) {
    if (c->ngrants > 0) {
        slot->grants = malloc(c->ngrants * sizeof(*slot->grants));
        if (slot->grants == NULL) {
            node_jobs_release(&svc->jobs, &slot->job);
            return LEAF_ENOMEM;
        }
        memcpy(slot->grants, c->grants, c->ngrants * sizeof(*slot->grants));
    }
    slot->c = *c;
    slot->c.grants = slot->grants;
    slot->queued_ms = clock_mono_ms();
    return LEAF_EAGAIN;
}

leaf_status_t user_service_change(struct user_service *svc, const struct user_change *c,
                                  int *ticket, struct leaf_wait *w, struct user_change *done) {
    struct node_job *j;
    pthread_mutex_lock(&svc->lock);
    int fresh = *ticket < 0;
    leaf_status_t rc = node_jobs_step(&svc->jobs, ticket, w, &j);
    if (fresh && j != NULL) {
        rc = change_fill(svc, (struct user_change_slot *)j, c);
        *ticket = rc == LEAF_ENOMEM ? -1 : *ticket;
    } else if (rc != LEAF_EAGAIN && j != NULL) {
        *done = ((struct user_change_slot *)j)->c;
        done->grants = NULL;
        done->ngrants = 0;
        node_jobs_release(&svc->jobs, j);
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

/* ---- events and the cron ------------------------------------------------------ */

static void on_state(struct user_service *svc, int state) {
    atomic_store(&svc->connected, state == ZK_STATE_CONNECTED);
    if (state == ZK_STATE_CONNECTED) {
        reload(svc); /* watches survive a reconnect, but changes made meanwhile do not wait */
        run_changes(svc);
    } else if (state == ZK_STATE_EXPIRED) {
        log_warn("auth",
                 "the ZooKeeper session expired; keeping the %" PRIu64
                 " users applied and reloading them on the new one",
                 (uint64_t)atomic_load(&svc->n_users));
        svc->reloading = 0;
        user_read_reset(svc);
        fail_running(svc);
        svc->dir_made = 0;
    }
}

/* Control thread: one event of this service's on the session (node_zk). */
static void user_service_zk_on_event(void *arg, struct zk_event *ev) {
    struct user_service *svc = arg;
    if (!svc->zk_open || svc->stopping) {
        return;
    }
    if (ev->kind == ZK_EVENT_STATE) {
        on_state(svc, ev->state);
    } else if (ev->kind == ZK_EVENT_WATCH) {
        reload(svc);
    } else if (ev->op == OP_LIST) {
        on_list(svc, ev);
    } else if (ev->op == OP_GET) {
        on_get(svc, ev);
    } else if (ev->op >= OP_CH_GET && ev->op <= OP_CH_DELETE && ev->arg < USER_MAX_CHANGES) {
        on_change(svc, ev->op, (int)ev->arg, ev);
    }
}

/* Control thread: after a batch of ZooKeeper events, or woken by an event loop. */
static void user_service_zk_on_idle(void *arg) {
    struct user_service *svc = arg;
    if (svc->zk_open && !svc->stopping) {
        run_changes(svc);
    }
}

static void on_async(uv_async_t *h) {
    user_service_zk_on_idle(h->data);
}

static void on_cron(uv_timer_t *t) {
    struct user_service *svc = t->data;
    if (svc->reload_failed && atomic_load(&svc->connected) && !svc->reloading) {
        svc->reload_failed = 0;
        reload(svc);
    }
    run_changes(svc);
}

leaf_status_t user_service_start(struct user_service *svc) {
    if (!user_service_enabled(svc)) {
        return LEAF_OK;
    }
    leaf_status_t rc = local_load(svc);
    if (rc != LEAF_OK && rc != LEAF_ENOTFOUND) {
        return rc; /* a damaged copy is logged; refusing beats serving without users */
    }
    uv_async_init(svc->loop, &svc->async, on_async);
    svc->async.data = svc;
    uv_timer_init(svc->loop, &svc->cron);
    svc->cron.data = svc;
    svc->started = 1;
    svc->zk_open = svc->zk != NULL;
    if (svc->zk_open) {
        zk_session_activate(&svc->zsub);
    }
    uv_unref((uv_handle_t *)&svc->async);
    uv_timer_start(&svc->cron, on_cron, USER_CRON_MS, USER_CRON_MS);
    uv_unref((uv_handle_t *)&svc->cron);
    log_info("auth", "authentication on: users from ZooKeeper %s (local copy %s)", svc->dir,
             svc->local_path);
    return LEAF_OK;
}

void user_service_stop(struct user_service *svc) {
    if (!user_service_enabled(svc) || !svc->started) {
        return;
    }
    svc->stopping = 1; /* the session is main()'s: closed after every service stopped */
    uv_timer_stop(&svc->cron);
}

/* ---- life cycle --------------------------------------------------------------- */

leaf_status_t user_service_create(struct user_service **out, const struct leaf_config *cfg,
                                  struct uv_loop_s *control_loop, struct zk_session *zk) {
    struct user_service *svc = calloc(1, sizeof(*svc));
    if (svc == NULL) {
        log_error("auth", "out of memory creating the user service");
        return LEAF_ENOMEM;
    }
    svc->cfg = cfg;
    svc->enabled = cfg->auth_enable;
    svc->loop = control_loop;
    pthread_rwlock_init(&svc->table_lock, NULL);
    pthread_mutex_init(&svc->lock, NULL);
    svc->jobs = (struct node_jobs){&svc->lock, svc->changes_q, USER_MAX_CHANGES,
                                   sizeof(svc->changes_q[0]), change_release};
    int n1 = snprintf(svc->dir, sizeof(svc->dir), "/leafd/%s/users", cfg->name);
    int n2 = snprintf(svc->local_path, sizeof(svc->local_path), "%s/%s/%d/users.jsonl",
                      cfg->data_dir, cfg->name, cfg->identity_port);
    if (n1 < 0 || (size_t)n1 >= sizeof(svc->dir) || n2 < 0 ||
        (size_t)n2 >= sizeof(svc->local_path)) {
        log_error("auth", "leafd.data.dir or leaf.name is too long for the users' paths");
        user_service_free(svc);
        return LEAF_EINVAL;
    }
    if (svc->enabled && zk != NULL) {
        svc->zk = zk;
        svc->zsub = (struct zk_sub){
            "users", user_service_zk_on_event, user_service_zk_on_idle, svc, NULL, 0};
        if (zk_session_subscribe(zk, &svc->zsub) != LEAF_OK) {
            user_service_free(svc);
            return LEAF_ERR;
        }
    }
    *out = svc;
    return LEAF_OK;
}

void user_service_free(struct user_service *svc) {
    if (svc == NULL) {
        return;
    }
    user_read_reset(svc);
    for (int i = 0; i < USER_MAX_CHANGES; i++) {
        change_release(&svc->changes_q[i].job);
    }
    auth_table_free(svc->table);
    pthread_rwlock_destroy(&svc->table_lock);
    pthread_mutex_destroy(&svc->lock);
    free(svc);
}
