/*
 * Sequences, the node side: the waiters, the request path (event-loop
 * threads), the life cycle and the views; the table itself is
 * sequence_service_table.c's.
 * Layer: the node (src/node/sequence), the top of the sequence room
 * (sequence_service.h is its interface).
 */
#include "sequence_service.h"

#include "sequence_service_previous.h"
#include "sequence_service_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "hash.h"
#include "lockstat.h"
#include "log.h"
#include "node_ip.h"
#include "sequence_elect.h"
#include "sequence_keyslot.h"
#include "sequence_numbering.h"
#include "sequence_record.h"
#include "sequence_service_floor.h"

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
                                         int may_create, leaf_status_t *rc) {
    if (!svc->lease.primary) {
        *rc = LEAF_EUNAVAIL;
        return NULL;
    }
    if (svc->shards.on && !svc->shards.own[sequence_service_table_slot(name, len)]) {
        *rc = LEAF_EUNAVAIL; /* another node's slot, or not taken over yet */
        return NULL;
    }
    struct seq_entry *e = sequence_service_table_find(svc, name, len);
    if (e == NULL && (e = sequence_service_table_get(svc, name, len)) == NULL) {
        *rc = LEAF_ENOMEM;
        return NULL;
    }
    if (svc->shards.on && e->gen != svc->shards.gen[e->slot]) {
        /* The slot became this node's again since the sequence last ran here: start afresh
         * (read, fence), as a new primary does. */
        if (e->st.phase != SEQUENCE_IDLE) {
            sequence_state_stop(&e->st);
        }
        e->gen = svc->shards.gen[e->slot];
        e->st.term = 0;
    }
    int create = svc->cfg->sequence_autocreate && may_create;
    if (e->st.phase == SEQUENCE_IDLE || e->st.term != svc->lease.term ||
        (e->st.phase == SEQUENCE_MISSING && create)) {
        /* (A caller who may create it, after one who may not found it missing.) */
        leaf_status_t st = sequence_state_start(&e->st, &svc->lease, create);
        if (st != LEAF_OK) {
            *rc = st;
            return NULL;
        }
        sequence_service_table_mark_dirty(svc, e);
    }
    return e;
}

/*
 * A request that reached the node taking over (first in line, claiming the lease: a few
 * round trips, docs/cluster.md, "Failover after a crash") parks on its sequence; the win
 * wakes it (sequence_service_table_wake_all()), and the door answers no_primary if the wait
 * runs past its bound. 1 when parked (lock held).
 */
static int park_for_takeover(struct sequence_service *svc, const char *name, size_t len,
                             struct leaf_wait *w) {
    if (w == NULL || !svc->takeover_park || svc->lease.primary || svc->shards.on) {
        return 0;
    }
    struct seq_entry *e = sequence_service_table_find(svc, name, len);
    if (e == NULL && (e = sequence_service_table_get(svc, name, len)) == NULL) {
        return 0;
    }
    wait_on(svc, e, w);
    return 1;
}

/*
 * The request path of sequence_service_next() and sequence_service_number(): with a
 * numbering, the values start where sequence_numbering_range() says after the last one
 * (LEAF_ERANGE: the period's counter is used up), else after the last one.
 */
static leaf_status_t issue(struct sequence_service *svc, const char *name, size_t len, int64_t n,
                           int64_t *first, int may_create, struct leaf_wait *w,
                           struct sequence_where *where, const struct sequence_numbering *d,
                           int64_t period) {
    leaf_status_t rc = LEAF_OK;
    int kick = 0;
    if (w != NULL) {
        leaf_wait_cancel(w); /* a resumed request: leave whatever list it was on */
    }
    lockstat_lock(&svc->lock, &svc->lock_stat);
    struct seq_entry *e = entry_for_issue(svc, name, len, may_create, &rc);
    if (e != NULL) {
        int64_t start = 0;
        if (d != NULL) {
            /* before the control thread's next write: a batch stays inside the period */
            sequence_state_set_room(&e->st, sequence_numbering_room(d),
                                    sequence_numbering_end(d, e->st.last, period));
        }
        if (d != NULL && e->st.phase == SEQUENCE_SERVING) {
            rc = sequence_numbering_range(d, e->st.last, period, n, &start);
        }
        if (rc == LEAF_OK) {
            rc = sequence_state_issue_from(&e->st, &svc->lease, clock_mono_ms(), n, start, first);
        }
        if (rc == LEAF_EAGAIN) {
            wait_on(svc, e, w);
        }
        /* A top-up is due below half a batch; the control thread sends it. */
        if (rc == LEAF_EAGAIN || (rc == LEAF_OK && e->st.inflight == 0 &&
                                  sequence_state_headroom(&e->st) * 2 < e->st.batch)) {
            kick = !e->dirty;
            sequence_service_table_mark_dirty(svc, e);
        }
    }
    if (rc == LEAF_EUNAVAIL && park_for_takeover(svc, name, len, w)) {
        rc = LEAF_EAGAIN;
    } else if (rc == LEAF_EUNAVAIL) {
        if (svc->shards.on && where != NULL) {
            sequence_service_shard_where(svc, sequence_service_table_slot(name, len), where);
        } else {
            where_now(svc, where);
        }
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

leaf_status_t sequence_service_next(struct sequence_service *svc, const char *name, size_t len,
                                    int64_t n, int64_t *first, int may_create, struct leaf_wait *w,
                                    struct sequence_where *where) {
    return issue(svc, name, len, n, first, may_create, w, where, NULL, 0);
}

leaf_status_t sequence_service_number(struct sequence_service *svc,
                                      const struct sequence_numbering *d, int64_t period, int64_t n,
                                      int64_t *first, struct leaf_wait *w,
                                      struct sequence_where *where) {
    char name[SEQ_NUMBERING_SEQ_MAX];
    int len = snprintf(name, sizeof(name), SEQ_NUMBERING_SEQ_PREFIX "%s", d->name);
    return issue(svc, name, (size_t)len, n, first, 0, w, where, d, period);
}

leaf_status_t sequence_service_last(struct sequence_service *svc, const char *name, size_t len,
                                    int64_t *last, struct leaf_wait *w,
                                    struct sequence_where *where) {
    leaf_status_t rc = LEAF_OK;
    if (w != NULL) {
        leaf_wait_cancel(w);
    }
    pthread_mutex_lock(&svc->lock);
    struct seq_entry *e = entry_for_issue(svc, name, len, 0, &rc); /* a read creates nothing */
    if (e != NULL) {
        int64_t now = clock_mono_ms();
        if (sequence_state_recheck(&e->st, &svc->lease, now)) {
            sequence_service_table_mark_dirty(svc, e); /* a cached "missing": read it again */
        }
        int dead = e->st.phase == SEQUENCE_FENCED || e->st.phase == SEQUENCE_CORRUPT ||
                   e->st.phase == SEQUENCE_MOVED;
        if (dead || !sequence_lease_live(&svc->lease, now)) {
            rc = LEAF_EUNAVAIL;
        } else if (e->st.phase == SEQUENCE_SERVING) {
            *last = e->st.last;
        } else if (e->st.phase == SEQUENCE_MISSING) {
            rc = LEAF_ENOTFOUND;
        } else {
            rc = LEAF_EAGAIN;
            wait_on(svc, e, w);
        }
    }
    if (rc == LEAF_EUNAVAIL) {
        if (svc->shards.on && where != NULL) {
            sequence_service_shard_where(svc, sequence_service_table_slot(name, len), where);
        } else {
            where_now(svc, where);
        }
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

leaf_status_t sequence_service_move(struct sequence_service *svc, const char *name, size_t len,
                                    const char *to, int64_t *max, struct leaf_wait *w,
                                    struct sequence_where *where) {
    leaf_status_t rc = LEAF_OK;
    int kick = 0;
    if (w != NULL) {
        leaf_wait_cancel(w);
    }
    if (svc->shards.on) {
        return LEAF_EINVAL; /* a sharded sequence's home is many nodes: not moved */
    }
    pthread_mutex_lock(&svc->lock);
    struct seq_entry *e = entry_for_issue(svc, name, len, 0, &rc);
    if (e != NULL) {
        /* Under the lock the request path issues under: from here on nothing is issued. */
        rc = sequence_state_move(&e->st, &svc->lease, to);
        if (rc == LEAF_OK && e->st.phase == SEQUENCE_MOVED) {
            *max = e->st.acked_max;
        } else if (rc == LEAF_OK || rc == LEAF_EAGAIN) {
            rc = LEAF_EAGAIN; /* the mark is written (or the sequence still starts): wait */
            wait_on(svc, e, w);
            sequence_service_table_mark_dirty(svc, e);
            kick = 1;
        }
    }
    if (rc == LEAF_EUNAVAIL) {
        where_now(svc, where);
    }
    pthread_mutex_unlock(&svc->lock);
    if (kick) {
        uv_async_send(&svc->async);
    }
    return rc;
}

/* An admin create of a sequence's record (adopt: a moved home's, sequence_service_adopt()). */
static leaf_status_t create_seq(struct sequence_service *svc, const char *name, size_t len,
                                int64_t start, int adopt, int *ticket, struct leaf_wait *w) {
    struct node_job *j;
    if (*ticket < 0 && len > VALIDATE_TAG_MAX) {
        return LEAF_ENOMEM;
    }
    pthread_mutex_lock(&svc->lock);
    int fresh = *ticket < 0;
    leaf_status_t rc = node_jobs_step(&svc->jobs, ticket, w, &j);
    if (fresh && j != NULL) {
        struct seq_create *c = (struct seq_create *)j;
        c->start = start;
        c->adopt = adopt;
        memcpy(c->name, name, len);
    } else if (rc != LEAF_EAGAIN && j != NULL) {
        node_jobs_release(&svc->jobs, j);
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

leaf_status_t sequence_service_create_seq(struct sequence_service *svc, const char *name,
                                          size_t len, int64_t start, int *ticket,
                                          struct leaf_wait *w) {
    return create_seq(svc, name, len, start, 0, ticket, w);
}

leaf_status_t sequence_service_adopt(struct sequence_service *svc, const char *name, size_t len,
                                     int64_t max, int *ticket, struct leaf_wait *w) {
    return create_seq(svc, name, len, max + 1, 1, ticket, w);
}

void sequence_service_adopted(struct sequence_service *svc, const char *name, size_t len) {
    char buf[VALIDATE_TAG_MAX + 1];
    if (len < sizeof(buf)) {
        memcpy(buf, name, len);
        buf[len] = '\0';
        sequence_service_heal_created(svc, buf);
    }
}

leaf_status_t sequence_service_demote(struct sequence_service *svc) {
    if (svc == NULL || !svc->enabled) {
        return LEAF_EUNAVAIL;
    }
    /* Issuing stops before the answer (docs/cluster.md, "Handover": no ID comes from
     * a demoted node once the demote is answered); the control thread then gives back,
     * releases the lease and leaves the line (sequence_service_zk.c, demote()). */
    pthread_mutex_lock(&svc->lock);
    svc->demote_requested = 1;
    if (svc->lease.primary) {
        svc->demote_was_primary = 1;
        sequence_lease_lose(&svc->lease);
        svc->where.known = 0;
    }
    pthread_mutex_unlock(&svc->lock);
    uv_async_send(&svc->async);
    return LEAF_OK;
}

/* ---- life cycle ------------------------------------------------------------- */

leaf_status_t sequence_service_create(struct sequence_service **out, const struct leaf_config *cfg,
                                      struct uv_loop_s *control_loop, struct zk_session *zk) {
    struct sequence_service *svc = calloc(1, sizeof(*svc));
    if (svc == NULL) {
        log_error("sequence", "out of memory creating the sequence service");
        return LEAF_ENOMEM;
    }
    svc->cfg = cfg;
    svc->loop = control_loop;
    svc->enabled = cfg->sequence_enable;
    pthread_mutex_init(&svc->lock, NULL);
    svc->jobs = (struct node_jobs){&svc->lock, svc->creates, SEQ_MAX_CREATES,
                                   sizeof(svc->creates[0]), NULL};
    sequence_lease_init(&svc->lease, cfg->zk_session_timeout_ms);
    svc->floors.fd = -1;
    sequence_service_numbering_init(svc);
    if (sequence_service_shard_init(svc) != LEAF_OK ||
        sequence_service_keyed_init(svc) != LEAF_OK) {
        sequence_service_keyed_free(svc);
        sequence_service_shard_free(svc);
        free(svc);
        log_error("sequence", "out of memory creating the sequence service");
        return LEAF_ENOMEM;
    }
    svc->nslots = 64;
    svc->slots = calloc(svc->nslots, sizeof(struct seq_entry *)); /* NOLINT: pointer array */
    if (svc->slots == NULL) {
        free(svc);
        log_error("sequence", "out of memory creating the sequence service");
        return LEAF_ENOMEM;
    }
    *out = svc;
    svc->zk = zk; /* disabled: only to leave a line an in-place upgrade handed over */
    if (svc->enabled && zk != NULL) {
        svc->zsub = (struct zk_sub){
            "sequence", sequence_service_zk_on_event, sequence_service_zk_on_idle, svc, NULL, 0};
        return zk_session_subscribe(zk, &svc->zsub);
    }
    return LEAF_OK;
}

int sequence_service_enabled(const struct sequence_service *svc) {
    return svc != NULL && svc->enabled;
}

/*
 * Creates the persistent parents once, synchronously, at start-up. A
 * connection lost meanwhile (the server the session is on dies: the chaos
 * run's zk_one, seed 32, made such a start exit 1) is retried on the
 * session's next connection, for up to one session timeout; a create that
 * was applied before the loss answers "exists" on the retry.
 */
static leaf_status_t ensure_parents(struct sequence_service *svc) {
    char path[SEQ_PATH_MAX];
    const char *parts[] = {"/leafd",         NULL,
                           svc->dir_primary, svc->dir_seqs,
                           svc->keyed.dir,   svc->shards.conf ? svc->shards.dir_owners : NULL};
    snprintf(path, sizeof(path), "/leafd/%s", svc->cfg->name);
    parts[1] = path;
    int64_t until = clock_mono_ms() + svc->cfg->zk_session_timeout_ms;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && parts[i] != NULL; i++) {
        leaf_status_t st = zk_session_create(svc->zk, parts[i], "", 0, ZK_MODE_PERSISTENT, NULL, 0);
        while (st == LEAF_EUNAVAIL && clock_mono_ms() < until) {
            struct timespec pause = {0, 100 * 1000000L};
            nanosleep(&pause, NULL);
            (void)zk_session_wait_connected(svc->zk, SEQ_CRON_MS);
            st = zk_session_create(svc->zk, parts[i], "", 0, ZK_MODE_PERSISTENT, NULL, 0);
        }
        if (st != LEAF_OK && st != LEAF_EEXIST) {
            log_error("sequence", "cannot create %s in ZooKeeper (%s)", parts[i],
                      leaf_strstatus(st));
            return st;
        }
    }
    return LEAF_OK;
}

/*
 * A session adopted from the previous process of an in-place upgrade still
 * has that process's election node (docs/UPGRADING.md, "In place, without a
 * restart"): the ephemeral node under dir whose owner is this session. The
 * first becomes this process's place in line, so a primary stays primary
 * (its lease was released after it stopped issuing: the takeover does not
 * wait). Sharded (docs/cluster.md, "Sharded sequences"), the owner node of the
 * same name goes with it: the slot map names nodes by the election node's
 * counter, so this process owns the same slots, and it takes them only past
 * the barrier, each sequence read and fenced afresh (sequence_service_shard.c).
 * (Its first map is read after ensure_parents' creates, writes that pass the
 * leader even when refused: the server answers no older map than the previous
 * process applied.)
 * When this process cannot use it (sequences now off, or sharding off) it is
 * deleted, or it would stay in line with nobody serving behind it (or, first
 * in line, run the ordinary election beside sharded nodes); its owner node,
 * if any, says "released" first (the previous process stopped issuing before
 * the hand-over), so the others take its slots without waiting. A new session
 * owns none. Start-up only (synchronous).
 */
static void find_own_node(struct sequence_service *svc, const char *dir, int keep) {
    int64_t sid = zk_session_id(svc->zk);
    char **names = NULL;
    int n = 0;
    if (sid == 0 || zk_session_children(svc->zk, dir, &names, &n) != LEAF_OK) {
        return;
    }
    for (int i = 0; i < n; i++) {
        char path[SEQ_PATH_MAX];
        struct zk_stat st;
        snprintf(path, sizeof(path), "%s/%.200s", dir, names[i]);
        if (sequence_elect_seq(names[i]) < 0 || zk_session_stat(svc->zk, path, &st) != LEAF_OK ||
            st.owner != sid) {
            continue;
        }
        char owner[SEQ_PATH_MAX];
        snprintf(owner, sizeof(owner), "/leafd/%s/owners/%.200s", svc->cfg->name, names[i]);
        int sharded = zk_session_stat(svc->zk, owner, &st) == LEAF_OK;
        if (keep && svc->mine[0] == '\0' && (!sharded || svc->shards.conf)) {
            snprintf(svc->mine, sizeof(svc->mine), "%s", path);
            log_info("sequence",
                     "kept my place in line for sequence primary as %s (the election node of "
                     "the adopted ZooKeeper session 0x%llx%s)",
                     names[i], (unsigned long long)sid,
                     sharded ? ", with its owner node and its slots" : "");
        } else {
            if (sharded) {
                (void)zk_session_set(svc->zk, owner, "released", 8);
            }
            (void)zk_session_delete(svc->zk, path, -1);
            log_info("sequence",
                     "left the line: deleted %s, the previous process's election node%s", path,
                     sharded ? " (its owner node released)" : "");
        }
    }
    zk_names_free(names, n);
}

leaf_status_t sequence_service_start(struct sequence_service *svc) {
    const struct leaf_config *cfg = svc->cfg;
    if (!svc->enabled) {
        if (svc->zk != NULL && zk_session_state(svc->zk) == ZK_STATE_CONNECTED) {
            /* Sequences were on before an in-place upgrade: out of line. */
            char dir[SEQ_DIR_MAX];
            snprintf(dir, sizeof(dir), "/leafd/%s/primary", cfg->name);
            find_own_node(svc, dir, 0);
        }
        return LEAF_OK;
    }
    char ip[40];
    if (node_advertise_ip(cfg, ip, sizeof(ip)) != LEAF_OK) {
        return LEAF_ERR;
    }
    if (!cfg->snowflake_enable) { /* else the snowflake node checked the same address */
        node_advertise_check(cfg, ip, cfg->listen_port);
    }
    snprintf(svc->self.http, sizeof(svc->self.http), "%s:%d", ip, cfg->listen_port);
    if (cfg->resp_port != 0) {
        snprintf(svc->self.resp, sizeof(svc->self.resp), "%s:%d", ip, cfg->resp_port);
    }
    sequence_record_format_node(svc->self_data, sizeof(svc->self_data), svc->self.http,
                                svc->self.resp[0] ? svc->self.resp : NULL);
    snprintf(svc->dir_primary, sizeof(svc->dir_primary), "/leafd/%s/primary", cfg->name);
    snprintf(svc->dir_seqs, sizeof(svc->dir_seqs), "/leafd/%s/sequences", cfg->name);
    snprintf(svc->lease_path, sizeof(svc->lease_path), "/leafd/%s/lease", cfg->name);
    sequence_service_shard_paths(svc);
    /* Neither handle keeps the control loop alive: it ends with the signals.
     * Unreferenced at once, so that a start failing below (ZooKeeper
     * unreachable) does not leave the shutdown's uv_run() waiting forever. */
    uv_async_init(svc->loop, &svc->async, sequence_service_zk_on_async);
    svc->async.data = svc;
    uv_unref((uv_handle_t *)&svc->async);
    uv_timer_init(svc->loop, &svc->cron);
    svc->cron.data = svc;
    uv_unref((uv_handle_t *)&svc->cron);
    svc->started = 1;
    if (sequence_service_floor_load(svc) != LEAF_OK) {
        return LEAF_ERR;
    }
    sequence_service_floor_start(svc);
    svc->zk_open = 1;
    zk_session_activate(&svc->zsub);
    if (zk_session_wait_connected(svc->zk, (int)cfg->zk_session_timeout_ms) != LEAF_OK) {
        log_error("sequence", "cannot reach ZooKeeper at %s within %lld ms", cfg->zk_address,
                  (long long)cfg->zk_session_timeout_ms);
        return LEAF_EUNAVAIL;
    }
    if (ensure_parents(svc) != LEAF_OK) {
        return LEAF_ERR;
    }
    sequence_service_previous_forget(svc);
    find_own_node(svc, svc->dir_primary, 1);
    uv_timer_start(&svc->cron, sequence_service_zk_on_cron, SEQ_CRON_MS, SEQ_CRON_MS);
    /* The CONNECTED event is queued on the session: the control loop's
     * first dispatch puts this node in line. */
    log_info("sequence", "sequences on, advertised as %s; electing a primary under %s",
             svc->self_data, svc->dir_primary);
    return LEAF_OK;
}

static void service_stop(struct sequence_service *svc, int keep_line);

void sequence_service_stop(struct sequence_service *svc) {
    service_stop(svc, 0);
}

void sequence_service_stop_handover(struct sequence_service *svc) {
    service_stop(svc, 1);
}

static void service_stop(struct sequence_service *svc, int keep_line) {
    if (!svc->enabled || !svc->started || svc->stopping) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    int was = svc->lease.primary;
    pthread_mutex_unlock(&svc->lock);
    sequence_service_zk_lose_primary(svc, "stopping");
    svc->stopping = 1;
    /* An in-place upgrade hands the session on: the line and, sharded, the owner
     * node go with it (find_own_node), so the slots stay here. */
    int handing = keep_line && svc->mine[0] != '\0';
    if (was && svc->zk_open && zk_session_state(svc->zk) == ZK_STATE_CONNECTED) {
        /* Issuing has stopped: write the records back down to the last IDs issued
         * (the session applies its requests in order, so they land before the
         * release below answers), and the next primary need not wait out this lease.
         * Sharded and handing over, the owner node keeps "applied <epoch>": this
         * process issues no more, and the next one issues only past its own barrier. */
        (void)sequence_service_heal_giveback_send(svc);
        if (svc->shards.on) {
            sequence_service_shard_release(svc);
        }
        const char *release = svc->shards.on ? svc->shards.hb_path : svc->lease_path;
        if (release[0] != '\0' && !(handing && svc->shards.on)) {
            zk_session_set(svc->zk, release, "released", 8);
        }
    }
    if (svc->giveback_pending > 0 && svc->zk_open) {
        /* Givebacks unanswered (these, or a sharded node's from losing slots): their answers
         * lower the floors, which are written next. */
        sequence_service_heal_giveback_drain(svc);
    }
    sequence_service_floor_stop(svc);
    if (handing) {
        /* The session goes on in the next process, which finds this node in line
         * (find_own_node): the primary stays primary, a sharded node keeps its slots. */
        log_info("sequence", "handing the election node %s%s to the next process", svc->mine,
                 svc->shards.on ? " and its owner node" : "");
    } else if (svc->zk_open && svc->mine[0] != '\0' &&
               zk_session_state(svc->zk) == ZK_STATE_CONNECTED) {
        /* Out of line at once: the next node need not wait for this
         * process's session to close. (An election node still being
         * created is deleted when its answer comes: sequence_service_zk_on_event.) */
        (void)zk_session_delete(svc->zk, svc->mine, -1);
        svc->mine[0] = '\0';
    }
    uv_timer_stop(&svc->cron);
}

void sequence_service_free(struct sequence_service *svc) {
    if (svc == NULL) {
        return;
    }
    zk_names_free(svc->line, svc->nline);
    sequence_service_numbering_free(svc);
    sequence_service_keyed_free(svc);
    sequence_service_floor_free(svc);
    sequence_service_shard_free(svc);
    for (size_t i = 0; i < svc->count; i++) {
        free(svc->by_idx[i]);
    }
    free(svc->by_idx);
    free(svc->slots);
    free(svc->dirty);
    lockstat_log("sequence", "service lock", &svc->lock_stat);
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
    int64_t now = clock_mono_ms();
    pthread_mutex_lock(&svc->lock);
    st->primary = svc->lease.primary;
    st->sharded = svc->shards.on;
    st->sharding_conf = svc->shards.conf;
    snprintf(st->sharding_held, sizeof(st->sharding_held), "%s", svc->shards.held);
    if (svc->shards.on) {
        st->slots = 0;
        for (int s = 0; s < SEQUENCE_SHARD_SLOTS; s++) {
            st->slots += svc->shards.own[s];
        }
        st->primary = st->slots > 0;
        st->shard_epoch = svc->shards.map.epoch;
        st->slots_in = svc->shards.moves_in;
        st->slots_out = svc->shards.moves_out;
    }
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
    sequence_service_keyed_stats(svc, st);
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

size_t sequence_service_shards(struct sequence_service *svc, struct sequence_peer *peers,
                               size_t *npeers, struct sequence_shard_view *out, size_t cap) {
    size_t n = 0;
    *npeers = 0;
    if (svc == NULL || !svc->enabled || !__atomic_load_n(&svc->shards.on, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    pthread_mutex_lock(&svc->lock);
    *npeers = svc->npeers;
    memcpy(peers, svc->peers, svc->npeers * sizeof(*peers));
    for (int i = 0; i < svc->shards.map.n && n < cap; i++) {
        const struct sequence_shard_range *r = &svc->shards.map.r[i];
        int owner = -1;
        for (size_t k = 0; k < svc->npeers; k++) {
            if (svc->peers[k].seq == r->owner) {
                owner = (int)k;
            }
        }
        out[n++] = (struct sequence_shard_view){r->start, r->end, owner};
    }
    pthread_mutex_unlock(&svc->lock);
    return n;
}

int sequence_service_sharded(const struct sequence_service *svc) {
    return svc != NULL && svc->enabled && __atomic_load_n(&svc->shards.on, __ATOMIC_ACQUIRE);
}
