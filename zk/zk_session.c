#include "zk_session.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

#include "clock.h"
#include "log.h"
#include "zk_session_state.h"

/* The server answered (its answer may be a refusal): it received the request. */
int zk_session_op_answered(int rc) {
    return rc == ZOK || rc == ZNONODE || rc == ZNODEEXISTS || rc == ZBADVERSION || rc == ZNOAUTH ||
           rc == ZNOTEMPTY || rc == ZNOCHILDRENFOREPHEMERALS;
}

const char *zk_state_name(int state) {
    static const char *const names[] = {"connecting", "connected", "expired", "closed"};
    return state >= 0 && state <= ZK_STATE_CLOSED ? names[state] : "unknown";
}

/* Maps a ZooKeeper return code onto the one status convention. */
static leaf_status_t zk_status(int rc) {
    if (rc == ZOK) {
        return LEAF_OK;
    }
    if (rc == ZNODEEXISTS) {
        return LEAF_EEXIST;
    }
    if (rc == ZNONODE) {
        return LEAF_ENOTFOUND;
    }
    if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
        rc == ZCLOSING || rc == ZINVALIDSTATE || rc == ZSESSIONMOVED) {
        return LEAF_EUNAVAIL;
    }
    return LEAF_ERR;
}

int zk_session_mode_flags(enum zk_mode m) {
    if (m == ZK_MODE_EPHEMERAL) {
        return ZOO_EPHEMERAL;
    }
    if (m == ZK_MODE_EPHEMERAL_SEQUENTIAL) {
        return ZOO_EPHEMERAL_SEQUENTIAL;
    }
    return m == ZK_MODE_PERSISTENT_SEQUENTIAL ? ZOO_PERSISTENT_SEQUENTIAL : ZOO_PERSISTENT;
}

static enum zk_result zk_session_result_of(int rc) {
    if (rc == ZOK) {
        return ZK_RESULT_OK;
    }
    if (rc == ZBADVERSION) {
        return ZK_RESULT_BADVERSION;
    }
    if (rc == ZNONODE) {
        return ZK_RESULT_NONODE;
    }
    if (rc == ZNODEEXISTS) {
        return ZK_RESULT_EXISTS;
    }
    if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
        rc == ZCLOSING || rc == ZINVALIDSTATE || rc == ZSESSIONMOVED) {
        return ZK_RESULT_UNKNOWN;
    }
    return rc == ZNOAUTH ? ZK_RESULT_NOAUTH : ZK_RESULT_FAILED;
}

/* Logs an operation's failure, except the outcomes callers expect and handle. */
leaf_status_t zk_session_check(int rc, const char *op, const char *path) {
    leaf_status_t st = zk_status(rc);
    if (st != LEAF_OK && st != LEAF_EEXIST && st != LEAF_ENOTFOUND) {
        log_warn("zk", "%s(%s) failed: %s", op, path, zerror(rc));
    }
    return st;
}

/*
 * The library's log lines look like
 *   2026-11-22 08:00:00,123:1234(0x7f..):ZOO_ERROR@handle_socket_error_msg@1290: Socket ...
 * Keep the level and "function@line: message". Warnings and errors go
 * through log_quiet (the first of an outage, then a summary every 30 s).
 */
/* The client's log: one quieting state for all handles (its callback has no context). */
static struct log_quiet zk_log_quiet;
static pthread_mutex_t zk_log_mu = PTHREAD_MUTEX_INITIALIZER;

static void zk_log_line(const char *message) {
    int level = LEAF_LOG_INFO;
    const char *p = strstr(message, ":ZOO_");
    if (p != NULL) {
        level = strncmp(p, ":ZOO_ERROR", 10) == 0   ? LEAF_LOG_ERROR
                : strncmp(p, ":ZOO_WARN", 9) == 0   ? LEAF_LOG_WARN
                : strncmp(p, ":ZOO_DEBUG", 10) == 0 ? LEAF_LOG_DEBUG
                                                    : LEAF_LOG_INFO;
        const char *at = strchr(p, '@');
        message = at ? at + 1 : p + 1;
    }
    int len = (int)strcspn(message, "\n");
    if (level < LEAF_LOG_WARN) {
        /* Only asked for at leafd.log.level = debug (zk_session_open). */
        log_write(LEAF_LOG_DEBUG, "zookeeper", "%.*s", len, message);
        return;
    }
    uint64_t n = 0;
    char last[sizeof(zk_log_quiet.last)];
    pthread_mutex_lock(&zk_log_mu);
    enum log_quiet_action a = log_quiet_line(&zk_log_quiet, clock_mono_ms(), message, &n);
    memcpy(last, zk_log_quiet.last, sizeof(last));
    pthread_mutex_unlock(&zk_log_mu);
    if (a == LOG_QUIET_PASS) {
        log_write(level, "zookeeper", "%.*s (more such lines: a summary every %d s)", len, message,
                  LOG_QUIET_SUMMARY_MS / 1000);
    } else if (a == LOG_QUIET_SUMMARY) {
        log_write(level, "zookeeper", "%llu more client lines in the last %d s, the last: %s",
                  (unsigned long long)n, LOG_QUIET_SUMMARY_MS / 1000, last);
    }
}

/* A session (re)connected: report what the client's log held back, and start afresh. */
static void zk_log_connected(void) {
    pthread_mutex_lock(&zk_log_mu);
    uint64_t n = log_quiet_reset(&zk_log_quiet);
    pthread_mutex_unlock(&zk_log_mu);
    if (n > 0) {
        log_info("zookeeper", "%llu client lines held back while disconnected",
                 (unsigned long long)n);
    }
}

static void zk_event_free(struct zk_event *ev);

void zk_session_push_event(struct zk_session *s, struct zk_event *ev) {
    pthread_mutex_lock(&s->mu);
    if (s->tail) {
        s->tail->next = ev;
    } else {
        s->head = ev;
    }
    s->tail = ev;
    if (!s->notify_off) {
        s->notify(s->notify_arg);
    }
    pthread_cond_broadcast(&s->cv); /* zk_session_wait_event */
    pthread_mutex_unlock(&s->mu);
}

static int map_state(int state) {
    if (state == ZOO_CONNECTED_STATE) {
        return ZK_STATE_CONNECTED;
    }
    return state == ZOO_EXPIRED_SESSION_STATE ? ZK_STATE_EXPIRED : ZK_STATE_CONNECTING;
}

/* Runs on a ZooKeeper thread: record the state, queue it, wake the owner. */
static void zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    struct zk_handle_ctx *h = ctx;
    if (h == NULL) {
        return;
    }
    if (type != ZOO_SESSION_EVENT) {
        return; /* every watch is set with its subscriber's watcher (zk_session_sub_watcher) */
    }
    struct zk_session *s = h->s;
    int st = map_state(state);
    struct zk_event *ev = calloc(1, sizeof(*ev));
    pthread_mutex_lock(&s->mu);
    int was = s->state;
    s->state = st;
    if (st == ZK_STATE_CONNECTED) {
        s->session_id = zoo_client_id(zh)->client_id;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (st == ZK_STATE_CONNECTED) {
        zk_log_connected();
        int negotiated = zoo_recv_timeout(zh);
        log_info("zk", "ZooKeeper session 0x%llx established (%s), timeout %d ms",
                 (unsigned long long)zoo_client_id(zh)->client_id, s->hosts, negotiated);
        if (was != ZK_STATE_CONNECTED && negotiated != s->timeout_ms) {
            /* The server clamps the timeout asked for into its [minSessionTimeout,
             * maxSessionTimeout] (by default 2 and 20 ticks), and the failover of a killed
             * node waits for the timeout it chose (docs/cluster.md, "Sequences"). */
            log_warn("zk",
                     "ZooKeeper (%s) gave session 0x%llx a %d ms timeout, not the %d ms of "
                     "leafd.zk.session.timeout.ms (its minSessionTimeout/maxSessionTimeout, by "
                     "default 2 and 20 times its tickTime): a crashed node's ZooKeeper nodes "
                     "and roles go after %d ms",
                     s->hosts, (unsigned long long)zoo_client_id(zh)->client_id, negotiated,
                     s->timeout_ms, negotiated);
        }
    } else if (st == ZK_STATE_CONNECTING && was == ZK_STATE_CONNECTED) {
        log_warn("zk", "ZooKeeper connection lost (%s); reconnecting, the session lasts %d ms",
                 s->hosts, s->timeout_ms);
    } else if (st == ZK_STATE_EXPIRED) {
        log_warn("zk", "ZooKeeper session expired (%s)", s->hosts);
    }
    if (ev == NULL) {
        return; /* out of memory: the state above is still recorded */
    }
    *ev = (struct zk_event){.kind = ZK_EVENT_STATE, .gen = h->gen, .state = st};
    zk_session_push_event(s, ev);
}

/*
 * Runs on a ZooKeeper thread: a watch a subscriber set fired. ctx is the
 * subscriber; the handle's own context says which generation set it.
 * Session events reach every watcher too: the handle's watcher reports them.
 */
void zk_session_sub_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx) {
    const struct zk_handle_ctx *h = zoo_get_context(zh);
    struct zk_sub *sub = ctx;
    if (type == ZOO_SESSION_EVENT || h == NULL || sub == NULL) {
        return;
    }
    struct zk_event *w = calloc(1, sizeof(*w));
    if (w == NULL) {
        log_error("zk", "out of memory queueing a watch of %s for %s", path ? path : "?",
                  sub->name);
        return;
    }
    *w = (struct zk_event){.kind = ZK_EVENT_WATCH, .gen = h->gen, .sub = sub};
    w->data = path != NULL ? strdup(path) : NULL;
    w->len = w->data != NULL ? strlen(w->data) : 0;
    zk_session_push_event(h->s, w);
}

static leaf_status_t open_handle(struct zk_session *s) {
    struct zk_handle_ctx *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        return LEAF_ENOMEM;
    }
    h->s = s;
    pthread_mutex_lock(&s->mu); /* s->gen is read under it by the ZooKeeper threads */
    h->gen = ++s->gen;
    s->state = ZK_STATE_CONNECTING;
    pthread_mutex_unlock(&s->mu);
    clientid_t cid, *adopt = NULL;
    if (s->adopt.id != 0) {
        cid.client_id = s->adopt.id;
        memcpy(cid.passwd, s->adopt.passwd, sizeof(cid.passwd));
        adopt = &cid;
        s->adopt.id = 0; /* once: an expired session is not resumed again */
    }
    zhandle_t *zh = zookeeper_init2(s->hosts, zk_watcher, s->timeout_ms, adopt, h, 0, zk_log_line);
    memset(&cid, 0, sizeof(cid));
    if (zh == NULL) {
        log_error("zk", "zookeeper_init(%s) failed: %s", s->hosts, strerror(errno));
        free(h);
        return LEAF_ERR;
    }
    zk_session_add_auth(s, zh); /* before any request of this handle */
    pthread_rwlock_wrlock(&s->zh_lock);
    s->zh = zh;
    pthread_rwlock_unlock(&s->zh_lock);
    s->hctx = h;
    return LEAF_OK;
}

leaf_status_t zk_session_open(struct zk_session *s, const char *hosts, int timeout_ms,
                              zk_notify_fn notify, void *notify_arg) {
    return zk_session_open_adopt(s, hosts, timeout_ms, notify, notify_arg, NULL);
}

leaf_status_t zk_session_client_id(struct zk_session *s, struct zk_client_id *out) {
    leaf_status_t rc = LEAF_EUNAVAIL;
    memset(out, 0, sizeof(*out));
    pthread_rwlock_rdlock(&s->zh_lock);
    if (s->zh != NULL) {
        const clientid_t *c = zoo_client_id(s->zh);
        if (c != NULL && c->client_id != 0) {
            out->id = c->client_id;
            memcpy(out->passwd, c->passwd, sizeof(out->passwd));
            rc = LEAF_OK;
        }
    }
    pthread_rwlock_unlock(&s->zh_lock);
    return rc;
}

leaf_status_t zk_session_open_adopt(struct zk_session *s, const char *hosts, int timeout_ms,
                                    zk_notify_fn notify, void *notify_arg,
                                    const struct zk_client_id *adopt) {
    memset(s, 0, sizeof(*s));
    if (adopt != NULL) {
        s->adopt = *adopt;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_rwlock_init(&s->zh_lock, NULL);
    snprintf(s->hosts, sizeof(s->hosts), "%s", hosts);
    s->timeout_ms = timeout_ms;
    s->notify = notify;
    s->notify_arg = notify_arg;
    zoo_set_debug_level(log_enabled(LEAF_LOG_DEBUG) ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_WARN);
    return open_handle(s);
}

/* timeout_ms from now on CLOCK_REALTIME, the condvar's clock. */
static struct timespec deadline_in(int timeout_ms) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    return dl;
}

leaf_status_t zk_session_wait_event(struct zk_session *s, int timeout_ms) {
    struct timespec dl = deadline_in(timeout_ms);
    pthread_mutex_lock(&s->mu);
    while (s->head == NULL && pthread_cond_timedwait(&s->cv, &s->mu, &dl) != ETIMEDOUT) {
    }
    int queued = s->head != NULL;
    pthread_mutex_unlock(&s->mu);
    return queued ? LEAF_OK : LEAF_EAGAIN;
}

leaf_status_t zk_session_wait_connected(struct zk_session *s, int timeout_ms) {
    struct timespec dl = deadline_in(timeout_ms);
    pthread_mutex_lock(&s->mu);
    /* The deadline is on CLOCK_REALTIME (the condvar's clock); a clock step
     * only makes this wait shorter or longer, never unsafe. */
    while (s->state == ZK_STATE_CONNECTING &&
           pthread_cond_timedwait(&s->cv, &s->mu, &dl) != ETIMEDOUT) {
    }
    int st = s->state;
    pthread_mutex_unlock(&s->mu);
    return st == ZK_STATE_CONNECTED ? LEAF_OK : LEAF_EUNAVAIL;
}

int zk_session_state(struct zk_session *s) {
    pthread_mutex_lock(&s->mu);
    int st = s->state;
    pthread_mutex_unlock(&s->mu);
    return st;
}

int64_t zk_session_id(struct zk_session *s) {
    pthread_mutex_lock(&s->mu);
    int64_t id = s->session_id;
    pthread_mutex_unlock(&s->mu);
    return id;
}

/* How long a close waits for the calls in flight to complete (drain_inflight). */
#define CLOSE_DRAIN_MS 500

/*
 * Owner thread, before zookeeper_close: waits (at most CLOSE_DRAIN_MS) until every call in
 * flight on the handle has completed. The client library answers a closed handle's pending
 * calls with ZCLOSING on its completion thread, but one it queues for that thread while the
 * thread is already on its way out is never run, and its memory (the library's completion entry
 * and the call's context) is never freed: seen in a chaos run as a LeakSanitizer report after a
 * handle was replaced on "session expired". A dead session's calls fail within moments (the
 * library fails them all when the connection drops), so this wait is short; it is bounded for a
 * server that stopped answering.
 */
static void drain_inflight(struct zk_session *s) {
    struct timespec dl = deadline_in(CLOSE_DRAIN_MS);
    pthread_mutex_lock(&s->mu);
    while (s->inflight != NULL && pthread_cond_timedwait(&s->cv, &s->mu, &dl) != ETIMEDOUT) {
    }
    pthread_mutex_unlock(&s->mu);
}

/*
 * Owner thread, right after zookeeper_close (the handle's threads have ended): the calls still
 * in flight (drain_inflight gave up on them) will never complete. Each gets the answer the
 * library meant to give: ZCLOSING, queued as its event, and its context is freed.
 */
static void answer_abandoned(struct zk_session *s) {
    pthread_mutex_lock(&s->mu);
    struct zk_op_ctx *c = s->inflight;
    s->inflight = NULL;
    pthread_mutex_unlock(&s->mu);
    int n = 0;
    while (c != NULL) {
        struct zk_op_ctx *next = c->next;
        struct zk_event *ev = zk_session_op_event(c, ZCLOSING, "a call on the closed handle");
        if (ev != NULL) {
            ev->version = -1;
            zk_session_push_event(s, ev);
        }
        free(c);
        c = next;
        n++;
    }
    if (n > 0) {
        log_info("zk",
                 "%d call(s) on the closed ZooKeeper handle were never answered by the client "
                 "library: answered as closed",
                 n);
    }
}

static void close_handle(struct zk_session *s) {
    /* Waits for another thread's synchronous call on the handle to return. */
    pthread_rwlock_wrlock(&s->zh_lock);
    if (s->zh != NULL) {
        drain_inflight(s);
        /* Pending completions run now with ZCLOSING; they only queue events. */
        zookeeper_close(s->zh);
        s->zh = NULL;
        answer_abandoned(s);
    }
    pthread_rwlock_unlock(&s->zh_lock);
    free(s->hctx);
    s->hctx = NULL;
}

leaf_status_t zk_session_subscribe(struct zk_session *s, struct zk_sub *sub) {
    if (s->nsubs == ZK_MAX_SUBS) {
        log_error("zk", "cannot subscribe %s to the ZooKeeper session: %d subscribers already",
                  sub->name, ZK_MAX_SUBS);
        return LEAF_ERR;
    }
    sub->s = s;
    s->subs[s->nsubs++] = sub;
    return LEAF_OK;
}

static struct zk_event *session_take(struct zk_session *s) {
    pthread_mutex_lock(&s->mu);
    struct zk_event *ev = s->head;
    s->head = s->tail = NULL;
    pthread_mutex_unlock(&s->mu);
    return ev;
}

/* A state change: counted here, then every subscriber sees it. */
static void dispatch_state(struct zk_session *s, struct zk_event *ev) {
    if (ev->state == ZK_STATE_CONNECTED) {
        atomic_fetch_add(&s->connects, 1);
    } else if (ev->state == ZK_STATE_EXPIRED) {
        atomic_fetch_add(&s->expirations, 1);
    }
    for (int i = 0; i < s->nsubs; i++) {
        if (s->subs[i]->active) {
            s->subs[i]->on_event(s->subs[i]->arg, ev);
        }
    }
}

void zk_session_activate(struct zk_sub *sub) {
    struct zk_session *s = sub->s;
    sub->active = 1;
    if (zk_session_state(s) != ZK_STATE_CONNECTED) {
        return; /* the CONNECTED event is still to come, for everyone */
    }
    struct zk_event *ev = calloc(1, sizeof(*ev));
    if (ev == NULL) {
        log_error("zk", "out of memory telling %s the session's state", sub->name);
        return;
    }
    *ev = (struct zk_event){
        .kind = ZK_EVENT_STATE, .gen = s->gen, .sub = sub, .state = ZK_STATE_CONNECTED};
    zk_session_push_event(s, ev);
}

void zk_session_dispatch(struct zk_session *s) {
    struct zk_event *list = session_take(s);
    int expired = 0;
    for (struct zk_event *ev = list; ev != NULL && !expired; ev = ev->next) {
        if (ev->gen != s->gen) {
            continue; /* from a handle replaced after an expiry */
        }
        if (ev->kind == ZK_EVENT_STATE && ev->sub != NULL) {
            /* The current state, for a subscriber just activated: not counted. */
            ev->sub->on_event(ev->sub->arg, ev);
            continue;
        }
        if (ev->kind == ZK_EVENT_STATE) {
            dispatch_state(s, ev);
            /* What the dead handle queued after this answers for a session
             * that is gone: dropped, as the new handle's generation would. */
            expired = ev->state == ZK_STATE_EXPIRED;
        } else if (ev->sub != NULL && ev->sub->active) {
            ev->sub->on_event(ev->sub->arg, ev);
        }
    }
    zk_event_free(list);
    if (expired) {
        /* Every subscriber has let go of the dead session: one new one for all. */
        close_handle(s);
        if (open_handle(s) == LEAF_OK) {
            log_info("zk", "opened a new ZooKeeper session after expiry (%s)", s->hosts);
        }
    }
    for (int i = 0; i < s->nsubs; i++) {
        if (s->subs[i]->on_idle != NULL) {
            s->subs[i]->on_idle(s->subs[i]->arg);
        }
    }
}

void zk_session_close(struct zk_session *s) {
    pthread_mutex_lock(&s->mu);
    s->notify_off = 1;
    pthread_mutex_unlock(&s->mu);
    close_handle(s);
    pthread_mutex_lock(&s->mu);
    s->state = ZK_STATE_CLOSED;
    struct zk_event *ev = s->head;
    s->head = s->tail = NULL;
    pthread_mutex_unlock(&s->mu);
    zk_event_free(ev);
}

static void zk_event_free(struct zk_event *ev) {
    while (ev != NULL) {
        struct zk_event *next = ev->next;
        zk_names_free(ev->names, ev->nnames);
        free(ev->data);
        free(ev);
        ev = next;
    }
}

void zk_names_free(char **names, int n) {
    for (int i = 0; i < n && names; i++) {
        free(names[i]);
    }
    free(names);
}

/* Copies a String_vector into a malloc'd array; 0 on success. */
int zk_session_copy_names(const struct String_vector *v, char ***names, int *n) {
    *names = NULL;
    *n = 0;
    if (v == NULL || v->count <= 0) {
        return 0;
    }
    char **out = calloc((size_t)v->count, sizeof(*out));
    if (out == NULL) {
        return -1;
    }
    for (int i = 0; i < v->count; i++) {
        out[i] = strdup(v->data[i]);
        if (out[i] == NULL) {
            zk_names_free(out, i);
            return -1;
        }
    }
    *names = out;
    *n = v->count;
    return 0;
}

/*
 * Another thread's synchronous call holds the handle alive (close_handle waits).
 * NULL between an expired handle's close and its replacement, or when the
 * replacement could not be made: every caller then fails the call as a lost
 * connection (ZCONNECTIONLOSS) instead of passing NULL to the client library,
 * which dereferences it.
 */
zhandle_t *zk_session_hold(struct zk_session *s) {
    pthread_rwlock_rdlock(&s->zh_lock);
    return s->zh;
}

void zk_session_release(struct zk_session *s) {
    pthread_rwlock_unlock(&s->zh_lock);
}

/* ---- what every call shares: credentials, an answer's event, expiry -------- */

static void auth_done(int rc, const void *data) {
    const struct zk_session *s = data;
    if (rc != ZOK) {
        log_error("zk", "ZooKeeper refused the credentials of leafd.zk.auth (%s): %s", s->hosts,
                  zerror(rc));
    }
}

/* Owner thread, for each new handle: authenticate it before its first request. */
void zk_session_add_auth(struct zk_session *s, zhandle_t *zh) {
    if (s->auth[0] != '\0') {
        int rc = zoo_add_auth(zh, "digest", s->auth, (int)strlen(s->auth), auth_done, s);
        if (rc != ZOK) {
            log_error("zk", "zoo_add_auth(digest) failed: %s", zerror(rc));
        }
    }
}

/*
 * Runs on a ZooKeeper thread: a request was answered "session expired". The
 * server no longer has the session (its ephemerals are gone), so it is
 * expired, whatever the handle's state says: the client library does not
 * always say so itself. A chaos run (seed 7, tools/checks/chaos --lease) saw a
 * handle stay "connected" after a zk_expire raced the client's reconnect
 * in a three-server ensemble, with every request answered "session expired"
 * for 40 s: the node never claimed a slot again. Queued once per handle, as
 * the watcher's own expiry is; owners replace the handle on it, and drop
 * what the old generation queues after.
 */
void zk_session_op_expired(struct zk_session *s, unsigned gen, int rc) {
    if (rc != ZSESSIONEXPIRED) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    int was = s->state;
    /* Only for the current handle: a request of a handle already replaced
     * (its answers can come after the new one connected) says nothing about
     * the new session. */
    int current = gen == s->gen;
    if (current && was != ZK_STATE_EXPIRED && was != ZK_STATE_CLOSED) {
        s->state = ZK_STATE_EXPIRED;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    if (!current || was == ZK_STATE_EXPIRED || was == ZK_STATE_CLOSED) {
        return;
    }
    log_warn("zk",
             "ZooKeeper answered a request with \"session expired\" while the session "
             "looked %s: taking it as expired (%s)",
             zk_state_name(was), s->hosts);
    struct zk_event *ev = calloc(1, sizeof(*ev));
    if (ev != NULL) {
        *ev = (struct zk_event){.kind = ZK_EVENT_STATE, .gen = gen, .state = ZK_STATE_EXPIRED};
        zk_session_push_event(s, ev);
    }
}

/* Runs on a ZooKeeper thread (or in zookeeper_close): queue the result. */
struct zk_event *zk_session_op_event(const struct zk_op_ctx *c, int rc, const char *what) {
    zk_session_op_expired(c->s, c->gen, rc);
    struct zk_event *ev = calloc(1, sizeof(*ev));
    if (ev == NULL) {
        log_error("zk", "out of memory queueing the result of %s(%s)", what, c->path);
        return NULL;
    }
    *ev = (struct zk_event){
        .kind = ZK_EVENT_DONE, .gen = c->gen, .sub = c->sub, .op = c->op, .arg = c->arg};
    ev->answered_sent_mono_ms = zk_session_op_answered(rc) ? c->sent_mono_ms : -1;
    ev->rc = rc == ZCLOSING ? LEAF_EUNAVAIL : zk_session_check(rc, what, c->path);
    ev->result = zk_session_result_of(rc);
    return ev;
}
