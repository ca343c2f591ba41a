/*
 * The segment service: tags, buffers, the database threads and the waiters
 * (segment_service.h).
 * Layer: the node (src/node/segment), over the segment domain's pure core and
 * database thread (segment/).
 */
#include "segment_service.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "clock.h"
#include "lockstat.h"
#include "log.h"
#include "segment_known.h"
#include "segment_negcache.h"
#include "segment_region.h"
#include "segment_service_zero_waste.h"
#include "segment_tags.h"

/* Leaf refreshes every 60 s; half that keeps "a deleted tag stops being served
 * within 60 s" true even counting the refresh's own round trip. */
#define SEGMENT_REFRESH_MS 30000
#define SEGMENT_MAX_TAGS 65536 /* tags in the map at most, counting only unknown ones' lookups */
/* Unknown tags: remembered 2 s (at most 16384), and at most 500 lookups a second for tags that
 * are neither known from the last refresh nor remembered (segment_negcache.h). */
#define SEGMENT_NEG_CAP 16384
#define SEGMENT_NEG_TTL_MS 2000
#define SEGMENT_LOOKUPS_PER_S 500.0
#define SEGMENT_MAX_ADMIN 64 /* admin requests waiting at once */

/* Fetch latency histogram bounds in ms; the last bucket is +Inf. */
static const int64_t latency_bounds_ms[] = {1, 2, 5, 10, 50, 100, 500, 1000, 5000};
#define LATENCY_N ((int)(sizeof(latency_bounds_ms) / sizeof(latency_bounds_ms[0])))

/*
 * The service. Locks, in the order they may be taken:
 * tags_lock (the map, see segment_tags.h) -> a tag's lock -> wait_lock (every
 * tag's waiters) or neg_lock (unknown tags) ; admin_lock (admin jobs' done flags and waits) and
 * done_lock (database thread -> control loop) are taken alone.
 * Counters: relaxed atomics written by the control loop or the database
 * thread, read by any thread. Handles: control loop only.
 */
struct segment_service {
    const struct leaf_config *cfg;
    int enabled;
    struct segment_region region; /* this node's residue class (docs/regions.md); set at create */
    /* Three connections, so that nothing queues behind what it must not wait for: `db` runs
     * only range fetches, `db_lookup` only the lookups of tags not known from the last refresh
     * (budgeted: segment_negcache.h), `db_bg` refreshes (100,000 rows) and admin jobs. */
    struct segment_db *db;
    struct segment_db *db_lookup;
    struct segment_db *db_bg;
    pthread_rwlock_t tags_lock;
    struct lockstat tag_lock_stat; /* the tags' locks on the ID path (LEAFD_LOCK_STATS) */
    struct segment_tags tags;
    struct segment_known *known; /* the last refresh's rows; swapped under the write lock */
    pthread_mutex_t wait_lock;
    pthread_mutex_t neg_lock; /* guards neg; taken alone or innermost */
    struct segment_negcache neg;

    pthread_mutex_t done_lock;
    struct segment_db_job *done_head, *done_tail;
    uv_async_t async;
    uv_timer_t refresh;
    uv_loop_t *loop;

    pthread_mutex_t admin_lock;
    int admin_waiting; /* admin jobs out (guarded by admin_lock) */

    atomic_ullong fetches, fetch_failures, lookups, refreshes;
    atomic_ullong latency_buckets[LATENCY_N + 1];
    atomic_ullong latency_sum_us;
    atomic_int loaded; /* the first refresh succeeded */
};

int64_t segment_service_now_ms(void) {
    return clock_mono_ms();
}

/* ---- database thread -> control loop --------------------------------------- */

static void on_db_done(struct segment_db_job *job, void *arg) {
    struct segment_service *svc = arg;
    pthread_mutex_lock(&svc->done_lock);
    if (svc->done_tail != NULL) {
        svc->done_tail->next = job;
    } else {
        svc->done_head = job;
    }
    svc->done_tail = job;
    pthread_mutex_unlock(&svc->done_lock);
    uv_async_send(&svc->async);
}

/* Queues a job for the database thread; on allocation failure nothing is queued. */
static leaf_status_t submit(struct segment_service *svc, enum segment_db_op op,
                            const struct segment_tag *t, int64_t step) {
    struct segment_db_job *job = segment_db_job_new(op, t->name, t->name_len);
    if (job == NULL) {
        log_error("segment", "out of memory queueing a database job for tag '%s'", t->name);
        return LEAF_ENOMEM;
    }
    job->step = step;
    job->cookie = t->epoch;
    segment_db_submit(op == SEGMENT_DB_FETCH    ? svc->db
                      : op == SEGMENT_DB_LOOKUP ? svc->db_lookup
                                                : svc->db_bg,
                      job);
    return LEAF_OK;
}

/*
 * Whether a tag nobody knows may be looked up. 404 when it was found
 * unknown since the request arrived (its own lookup, or one it shared).
 * Else LEAF_OK within the lookup budget (so that a tag added to the table
 * is served on its first request); beyond it, without a query, 404 when
 * the negative cache remembers the tag as unknown, else 503 (LEAF_EBUSY).
 * Tags lock held.
 */
static leaf_status_t admit_lookup(struct segment_service *svc, const char *tag, size_t len,
                                  int64_t first_seen, int64_t now) {
    pthread_mutex_lock(&svc->neg_lock);
    int64_t found = segment_negcache_found(&svc->neg, tag, len, now);
    /* Until the first refresh is in, every tag is unknown: no budget then. */
    int free_pass = !atomic_load(&svc->loaded);
    leaf_status_t rc = found >= first_seen                                   ? LEAF_ENOTFOUND
                       : free_pass || segment_negcache_admit(&svc->neg, now) ? LEAF_OK
                       : found >= 0                                          ? LEAF_ENOTFOUND
                                                                             : LEAF_EBUSY;
    pthread_mutex_unlock(&svc->neg_lock);
    return rc;
}

/* Starts the tag's lookup unless one is in flight. Tag lock held. */
static void start_lookup(struct segment_service *svc, struct segment_tag *t, int64_t now) {
    if (t->lookup_in_flight) {
        return;
    }
    if (submit(svc, SEGMENT_DB_LOOKUP, t, 0) == LEAF_OK) {
        t->lookup_in_flight = 1;
        t->lookup_started_ms = now;
        atomic_fetch_add_explicit(&svc->lookups, 1, memory_order_relaxed);
    }
}

/* Starts a range fetch when the double buffer wants one. Tag lock held. */
static void maybe_fetch(struct segment_service *svc, struct segment_tag *t, int64_t now) {
    if (!segment_buffer_need_fetch(&t->buf)) {
        return;
    }
    int64_t size = segment_buffer_begin_fetch(&t->buf, now);
    if (submit(svc, SEGMENT_DB_FETCH, t, size) != LEAF_OK) {
        segment_buffer_fetch_failed(&t->buf);
    }
}

/*
 * The circuit breaker: once the tag's last fetch failed (db_failed_ms is
 * reset by the next success), one request waits for the retry the request
 * path started, and every other request with nothing buffered is answered
 * at once instead of waiting leafd.segment.wait.ms for the same outcome.
 * Tag lock held.
 */
static int breaker_open(struct segment_service *svc, const struct segment_tag *t) {
    if (t->db_failed_ms < 0) {
        return 0;
    }
    pthread_mutex_lock(&svc->wait_lock);
    int waited_on = t->waiters.head != NULL;
    pthread_mutex_unlock(&svc->wait_lock);
    return waited_on;
}

static leaf_status_t get_locked(struct segment_service *svc, struct segment_tag *t, int count,
                                int dense, int64_t *ids, int64_t first_seen, int64_t now) {
    if (t->state == SEGMENT_TAG_ACTIVE) {
        leaf_status_t rc = dense ? segment_buffer_take_dense(&t->buf, count, ids)
                                 : segment_buffer_take(&t->buf, count, ids);
        maybe_fetch(svc, t, now);
        if (rc == LEAF_OK) {
            return LEAF_OK;
        }
        if (t->db_failed_ms >= first_seen || breaker_open(svc, t)) {
            return LEAF_EUNAVAIL;
        }
        return LEAF_EAGAIN;
    }
    if (t->lookup_in_flight) {
        return LEAF_EAGAIN;
    }
    if (t->db_failed_ms >= first_seen) {
        return LEAF_EUNAVAIL;
    }
    if (t->state == SEGMENT_TAG_ABSENT && t->lookup_started_ms >= first_seen) {
        return LEAF_ENOTFOUND;
    }
    leaf_status_t rc = admit_lookup(svc, t->name, t->name_len, first_seen, now);
    if (rc != LEAF_OK) {
        return rc;
    }
    start_lookup(svc, t, now);
    return LEAF_EAGAIN;
}

/* The request's wait leaves its tag's list (idempotent; the loop thread). */
static void wait_cancel(struct leaf_wait *w) {
    struct segment_service *svc = w->data;
    pthread_mutex_lock(&svc->wait_lock);
    leaf_wait_unlink(w);
    pthread_mutex_unlock(&svc->wait_lock);
}

/* Parks the request on the tag (tag lock held or write lock held). */
static void wait_on(struct segment_service *svc, struct segment_tag *t, struct leaf_wait *w) {
    if (w == NULL) {
        return;
    }
    pthread_mutex_lock(&svc->wait_lock);
    leaf_wait_link(&t->waiters, w);
    w->data = svc;
    w->cancel = wait_cancel;
    pthread_mutex_unlock(&svc->wait_lock);
}

/*
 * A tag not in the map yet (write lock). Known from the last refresh: it
 * enters the map active, and its first range is fetched. Else (admitted
 * by admit_lookup() already) it enters pending and is looked up. NULL
 * with *rc set when it does not enter.
 */
static struct segment_tag *admit_new(struct segment_service *svc, const char *tag, size_t len,
                                     int64_t now, leaf_status_t *rc) {
    int created;
    int64_t step;
    struct segment_tag *t;
    if (segment_known_find(svc->known, tag, len, &step)) {
        t = segment_tags_add(&svc->tags, tag, len, &created);
        if (t != NULL && created) {
            segment_tags_activate(&svc->tags, t, step);
            t->seen_gen = segment_known_gen(svc->known);
        }
        *rc = LEAF_ENOMEM;
        return t;
    }
    if (svc->tags.count >= SEGMENT_MAX_TAGS) {
        *rc = LEAF_ENOMEM; /* too many unknown tags being looked up */
        return NULL;
    }
    t = segment_tags_add(&svc->tags, tag, len, &created);
    if (t != NULL && created) {
        start_lookup(svc, t, now);
    }
    *rc = LEAF_ENOMEM;
    return t;
}

static leaf_status_t get_new(struct segment_service *svc, const char *tag, size_t len, int count,
                             int dense, int64_t *ids, int64_t first_seen, int64_t now,
                             struct leaf_wait *w) {
    leaf_status_t rc;
    pthread_rwlock_wrlock(&svc->tags_lock);
    struct segment_tag *t = segment_tags_find(&svc->tags, tag, len);
    if (t == NULL) {
        t = admit_new(svc, tag, len, now, &rc);
    }
    if (t != NULL) {
        rc = get_locked(svc, t, count, dense, ids, first_seen, now); /* the write lock suffices */
        if (rc == LEAF_EAGAIN) {
            wait_on(svc, t, w);
        }
    }
    pthread_rwlock_unlock(&svc->tags_lock);
    return rc;
}

leaf_status_t segment_service_get(struct segment_service *svc, const char *tag, size_t len,
                                  int count, int dense, int64_t *ids, int64_t first_seen_ms,
                                  struct leaf_wait *w) {
    int64_t now = segment_service_now_ms();
    if (w != NULL) {
        leaf_wait_cancel(w); /* a resumed request: leave whatever list it was on */
    }
    pthread_rwlock_rdlock(&svc->tags_lock);
    struct segment_tag *t = segment_tags_find(&svc->tags, tag, len);
    if (t == NULL) {
        /* Neither in the map nor known: a flood of such tags is refused here, on the read
         * lock, beyond the lookup budget. */
        leaf_status_t rc = segment_known_find(svc->known, tag, len, NULL)
                               ? LEAF_OK
                               : admit_lookup(svc, tag, len, first_seen_ms, now);
        pthread_rwlock_unlock(&svc->tags_lock);
        if (rc == LEAF_OK) {
            rc = get_new(svc, tag, len, count, dense, ids, first_seen_ms, now, w);
        }
        return rc == LEAF_OK ? segment_region_apply(&svc->region, ids, dense ? 1 : count) : rc;
    }
    lockstat_lock(&t->lock, &svc->tag_lock_stat);
    leaf_status_t rc = get_locked(svc, t, count, dense, ids, first_seen_ms, now);
    if (rc == LEAF_EAGAIN) {
        wait_on(svc, t, w);
    }
    pthread_mutex_unlock(&t->lock);
    pthread_rwlock_unlock(&svc->tags_lock);
    return rc == LEAF_OK ? segment_region_apply(&svc->region, ids, dense ? 1 : count) : rc;
}

leaf_status_t segment_service_prefetch(struct segment_service *svc, const char *tag, size_t len,
                                       int64_t first_seen_ms, struct leaf_wait *w, int64_t *max_id,
                                       int64_t *step) {
    int64_t now = segment_service_now_ms();
    if (w != NULL) {
        leaf_wait_cancel(w); /* a resumed request: leave whatever list it was on */
    }
    leaf_status_t rc = LEAF_ENOTFOUND;
    pthread_rwlock_rdlock(&svc->tags_lock);
    struct segment_tag *t = segment_tags_find(&svc->tags, tag, len);
    if (t != NULL) {
        pthread_mutex_lock(&t->lock);
        if (t->state != SEGMENT_TAG_ACTIVE) {
            rc = LEAF_ENOTFOUND;
        } else if (t->buf.available > 0) {
            *max_id = t->buf.high; /* what leaf_alloc.max_id became with the fetch */
            *step = t->buf.min_step;
            rc = LEAF_OK;
        } else {
            maybe_fetch(svc, t, now);
            rc = t->db_failed_ms >= first_seen_ms ? LEAF_EUNAVAIL : LEAF_EAGAIN;
            if (rc == LEAF_EAGAIN) {
                wait_on(svc, t, w);
            }
        }
        pthread_mutex_unlock(&t->lock);
    }
    pthread_rwlock_unlock(&svc->tags_lock);
    return rc;
}

/* ---- applying results (control loop, tags write-locked) -------------------- */

static void note_latency(struct segment_service *svc, int64_t us) {
    int i = 0;
    while (i < LATENCY_N && us > latency_bounds_ms[i] * 1000) {
        i++;
    }
    atomic_fetch_add_explicit(&svc->latency_buckets[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&svc->latency_sum_us, (unsigned long long)us, memory_order_relaxed);
}

static void neg_put(struct segment_service *svc, const char *tag, int64_t now) {
    pthread_mutex_lock(&svc->neg_lock);
    segment_negcache_put(&svc->neg, tag, strlen(tag), now);
    pthread_mutex_unlock(&svc->neg_lock);
}

static void neg_forget(struct segment_service *svc, const char *tag) {
    pthread_mutex_lock(&svc->neg_lock);
    segment_negcache_forget(&svc->neg, tag, strlen(tag));
    pthread_mutex_unlock(&svc->neg_lock);
}

static void wake_tag(struct segment_service *svc, const struct segment_db_job *job);

static void apply_fetch(struct segment_service *svc, struct segment_db_job *job, int64_t now) {
    struct segment_tag *t = segment_tags_find(&svc->tags, job->tag, strlen(job->tag));
    if (t == NULL) {
        return; /* swept while its fetch was out: the range is simply skipped */
    }
    if (job->cookie != t->epoch || t->state != SEGMENT_TAG_ACTIVE) {
        segment_buffer_fetch_failed(&t->buf); /* stale: the tag left or re-entered the table */
        return;
    }
    if (job->rc == LEAF_OK) {
        note_latency(svc, job->latency_us);
        atomic_fetch_add_explicit(&svc->fetches, 1, memory_order_relaxed);
        t->db_failed_ms = -1;
        if (segment_buffer_install(&t->buf, job->new_max, job->step, now) != LEAF_OK) {
            log_error("segment",
                      "range [%" PRId64 ", %" PRId64 ") of tag '%s' discarded: "
                      "max_id is not above the ranges this node already holds",
                      job->new_max - job->step, job->new_max, t->name);
        }
        return;
    }
    segment_buffer_fetch_failed(&t->buf);
    if (job->rc == LEAF_ENOTFOUND) {
        log_info("segment", "tag '%s' is no longer in leaf_alloc; stopped serving it", t->name);
        segment_tags_deactivate(&svc->tags, t);
        neg_put(svc, t->name, now);
        return;
    }
    t->db_failed_ms = now;
    t->fetch_errors++;
    atomic_fetch_add_explicit(&svc->fetch_failures, 1, memory_order_relaxed);
}

static void apply_lookup(struct segment_service *svc, struct segment_db_job *job, int64_t now) {
    int created;
    struct segment_tag *t = segment_tags_find(&svc->tags, job->tag, strlen(job->tag));
    if (t == NULL && job->admin && job->rc == LEAF_OK) {
        t = segment_tags_add(&svc->tags, job->tag, strlen(job->tag), &created);
    }
    if (t == NULL) {
        return;
    }
    if (!job->admin) {
        t->lookup_in_flight = 0;
    }
    if (job->rc == LEAF_OK) {
        neg_forget(svc, job->tag);
        segment_tags_activate(&svc->tags, t, job->row_step);
    } else if (job->rc == LEAF_ENOTFOUND) {
        segment_tags_deactivate(&svc->tags, t);
        neg_put(svc, job->tag, now);
        /* Its waiters learn it from the negative cache; the entry goes at once, so that a
         * flood of unknown tags holds no memory beyond that cache. */
        wake_tag(svc, job);
        segment_tags_remove(&svc->tags, t);
    } else {
        t->db_failed_ms = now;
    }
}

/* A refresh's rows become the known set; the tags in the map follow it (write lock). Returns
 * the set replaced, for the caller to free outside the lock. */
static struct segment_known *apply_load(struct segment_service *svc, struct segment_db_job *job,
                                        struct segment_known *known) {
    if (job->rc != LEAF_OK || known == NULL) {
        return known;
    }
    struct segment_known *old = svc->known;
    svc->known = known;
    size_t gone = segment_tags_sync_known(&svc->tags, known);
    if (gone > 0) {
        log_info("segment", "%zu tag(s) left leaf_alloc; stopped serving them", gone);
    }
    if (!atomic_exchange(&svc->loaded, 1)) {
        log_info("segment", "loaded %zu tag(s) from leaf_alloc (%zu KB)", job->nrows,
                 segment_known_bytes(known) / 1024);
    }
    atomic_fetch_add_explicit(&svc->refreshes, 1, memory_order_relaxed);
    return old;
}

/* Builds a refresh's known set, before the write lock is taken (100,000 rows: a few ms). */
static struct segment_known *build_known(struct segment_db_job *job) {
    struct segment_known *known = NULL;
    if (job->op != SEGMENT_DB_LOAD || job->rc != LEAF_OK) {
        return NULL;
    }
    if (segment_known_build(&known, &job->packed, job->cookie) != LEAF_OK) {
        log_error("segment", "out of memory building the set of %zu tags", job->nrows);
        return NULL;
    }
    return known;
}

static void apply_admin_effect(struct segment_service *svc, struct segment_db_job *job) {
    int created;
    struct segment_tag *t;
    if (job->op == SEGMENT_DB_CREATE && job->rc == LEAF_OK) {
        neg_forget(svc, job->tag);
        t = segment_tags_add(&svc->tags, job->tag, strlen(job->tag), &created);
        if (t != NULL) {
            segment_tags_activate(&svc->tags, t, job->step);
        }
    } else if (job->op == SEGMENT_DB_SET_STEP && job->rc == LEAF_OK) {
        t = segment_tags_find(&svc->tags, job->tag, strlen(job->tag));
        if (t != NULL && t->state == SEGMENT_TAG_ACTIVE) {
            segment_buffer_set_min_step(&t->buf, job->step);
        }
    }
}

/* Resumes the requests parked on the job's tag (write lock held). */
static void wake_tag(struct segment_service *svc, const struct segment_db_job *job) {
    if (job->tag[0] == '\0') {
        return;
    }
    struct segment_tag *t = segment_tags_find(&svc->tags, job->tag, strlen(job->tag));
    if (t != NULL) {
        pthread_mutex_lock(&svc->wait_lock);
        leaf_wait_wake_all(&t->waiters);
        pthread_mutex_unlock(&svc->wait_lock);
    }
}

static void apply(struct segment_service *svc, struct segment_db_job *job) {
    struct segment_known *known = build_known(job);
    int64_t now = segment_service_now_ms();
    pthread_rwlock_wrlock(&svc->tags_lock);
    switch (job->op) {
    case SEGMENT_DB_FETCH: apply_fetch(svc, job, now); break;
    case SEGMENT_DB_LOOKUP: apply_lookup(svc, job, now); break;
    case SEGMENT_DB_LOAD:
        pthread_mutex_lock(&svc->wait_lock); /* the sweep reads the wait lists */
        known = apply_load(svc, job, known);
        pthread_mutex_unlock(&svc->wait_lock);
        break;
    default: apply_admin_effect(svc, job); break;
    }
    if (job->op != SEGMENT_DB_LOAD) {
        wake_tag(svc, job);
    }
    pthread_rwlock_unlock(&svc->tags_lock);
    segment_known_free(known); /* the set replaced (or unused) */
}

/* ---- admin jobs --------------------------------------------------------------- */

/* Control loop: the result is in; wake its request, or free it when nobody waits. */
static void admin_complete(struct segment_service *svc, struct segment_db_job *job) {
    pthread_mutex_lock(&svc->admin_lock);
    struct leaf_wait *w = job->owner;
    job->done = 1;
    if (w == NULL) {
        segment_db_job_free(job); /* abandoned */
        svc->admin_waiting--;
    } else if (w->wake != NULL) {
        w->wake(w);
    }
    pthread_mutex_unlock(&svc->admin_lock);
}

/* The request gave up or its connection closed (loop thread). */
static void admin_cancel(struct leaf_wait *w) {
    struct segment_db_job *job = w->data;
    struct segment_service *svc = job->admin_svc;
    pthread_mutex_lock(&svc->admin_lock);
    if (job->done) {
        segment_db_job_free(job);
        svc->admin_waiting--;
    } else {
        job->owner = NULL; /* freed when it comes back */
    }
    pthread_mutex_unlock(&svc->admin_lock);
}

leaf_status_t segment_service_admin_begin(struct segment_service *svc, struct segment_db_job *job,
                                          struct leaf_wait *w) {
    pthread_mutex_lock(&svc->admin_lock);
    int ok = svc->admin_waiting < SEGMENT_MAX_ADMIN;
    if (ok) {
        svc->admin_waiting++;
    }
    pthread_mutex_unlock(&svc->admin_lock);
    if (!ok) {
        log_warn("segment", "too many admin requests waiting for the database");
        return LEAF_ENOMEM;
    }
    job->admin = 1;
    job->admin_svc = svc;
    job->owner = w;
    w->data = job;
    w->cancel = admin_cancel;
    segment_db_submit(svc->db_bg, job);
    return LEAF_OK;
}

leaf_status_t segment_service_admin_take(struct segment_service *svc, struct leaf_wait *w,
                                         struct segment_db_job **out) {
    struct segment_db_job *job = w->data;
    if (job == NULL) {
        return LEAF_ENOTFOUND;
    }
    pthread_mutex_lock(&svc->admin_lock);
    int done = job->done;
    if (done) {
        svc->admin_waiting--;
    }
    pthread_mutex_unlock(&svc->admin_lock);
    if (!done) {
        return LEAF_EAGAIN;
    }
    w->data = NULL;
    w->cancel = NULL;
    *out = job;
    return LEAF_OK;
}

/* ---- control loop ------------------------------------------------------------- */

static struct segment_db_job *take_done(struct segment_service *svc) {
    pthread_mutex_lock(&svc->done_lock);
    struct segment_db_job *list = svc->done_head;
    svc->done_head = svc->done_tail = NULL;
    pthread_mutex_unlock(&svc->done_lock);
    return list;
}

static void on_async(uv_async_t *a) {
    struct segment_service *svc = a->data;
    struct segment_db_job *job = take_done(svc);
    while (job != NULL) {
        struct segment_db_job *next = job->next;
        apply(svc, job);
        if (job->admin) {
            admin_complete(svc, job);
        } else {
            segment_db_job_free(job);
        }
        job = next;
    }
}

static void refresh_tags(struct segment_service *svc) {
    struct segment_db_job *job = segment_db_job_new(SEGMENT_DB_LOAD, NULL, 0);
    if (job == NULL) {
        log_error("segment", "out of memory starting the tag refresh");
        return;
    }
    pthread_rwlock_wrlock(&svc->tags_lock);
    job->cookie = segment_tags_next_gen(&svc->tags);
    pthread_rwlock_unlock(&svc->tags_lock);
    segment_db_submit(svc->db_bg, job);
}

static void on_refresh(uv_timer_t *t) {
    refresh_tags(t->data);
}

/* ---- start and stop (main thread) ------------------------------------------ */

leaf_status_t segment_service_create(struct segment_service **out, const struct leaf_config *cfg,
                                     struct uv_loop_s *loop) {
    struct segment_service *svc = calloc(1, sizeof(*svc));
    if (svc == NULL) {
        log_error("segment", "calloc(segment service) failed");
        return LEAF_ENOMEM;
    }
    svc->cfg = cfg;
    svc->loop = loop;
    segment_region_init(&svc->region, cfg->region_id, cfg->region_count);
    *out = svc;
    return LEAF_OK;
}

leaf_status_t segment_service_start(struct segment_service *svc) {
    const struct leaf_config *cfg = svc->cfg;
    if (!cfg->segment_enable) {
        return LEAF_OK;
    }
    pthread_rwlock_init(&svc->tags_lock, NULL);
    pthread_mutex_init(&svc->wait_lock, NULL);
    pthread_mutex_init(&svc->done_lock, NULL);
    pthread_mutex_init(&svc->admin_lock, NULL);
    pthread_mutex_init(&svc->neg_lock, NULL);
    svc->enabled = 1;
    /* The handles do not keep the control loop alive: it ends with the signals. */
    uv_async_init(svc->loop, &svc->async, on_async);
    svc->async.data = svc;
    uv_unref((uv_handle_t *)&svc->async);
    uv_timer_init(svc->loop, &svc->refresh);
    svc->refresh.data = svc;
    uv_unref((uv_handle_t *)&svc->refresh);
    if (segment_tags_init(&svc->tags) != LEAF_OK ||
        segment_negcache_init(&svc->neg, SEGMENT_NEG_CAP, SEGMENT_NEG_TTL_MS,
                              SEGMENT_LOOKUPS_PER_S) != LEAF_OK) {
        log_error("segment", "out of memory creating the tag table");
        segment_service_stop(svc); /* undoes the above, so that a stop after this is a no-op */
        return LEAF_ENOMEM;
    }
    struct segment_db_hostport hosts[CONFIG_DB_HOSTS_MAX];
    for (int i = 0; i < cfg->db_nhosts && i < CONFIG_DB_HOSTS_MAX; i++) {
        hosts[i] = (struct segment_db_hostport){cfg->db_hosts[i].host, cfg->db_hosts[i].port};
    }
    struct segment_db_options o = {.host = cfg->db_host,
                                   .port = cfg->db_port,
                                   .hosts = hosts,
                                   .nhosts = cfg->db_nhosts,
                                   .user = cfg->jdbc_username,
                                   .password = cfg->jdbc_password,
                                   .database = cfg->db_name,
                                   .timeout_ms = cfg->db_timeout_ms,
                                   .tls = (enum segment_db_tls)cfg->db_tls,
                                   .tls_ca_file = cfg->db_tls_ca_file};
    leaf_status_t rc = segment_db_start(&svc->db, &o, on_db_done, svc);
    if (rc == LEAF_OK) {
        rc = segment_db_start(&svc->db_lookup, &o, on_db_done, svc);
    }
    if (rc == LEAF_OK) {
        rc = segment_db_start(&svc->db_bg, &o, on_db_done, svc);
    }
    if (rc != LEAF_OK) {
        segment_service_stop(svc); /* undoes the above; a database not started is NULL */
        return rc;
    }
    refresh_tags(svc);
    uv_timer_start(&svc->refresh, on_refresh, SEGMENT_REFRESH_MS, SEGMENT_REFRESH_MS);
    log_info("segment", "segment IDs from %s:%d/%s (tags refreshed every %d s)", cfg->db_host,
             cfg->db_port, cfg->db_name, SEGMENT_REFRESH_MS / 1000);
    return LEAF_OK;
}

/* Whether a tag's fetch is still out; tags lock held. */
static int any_fetching(const struct segment_tags *tags) {
    for (size_t i = 0; i < tags->nslots; i++) {
        for (const struct segment_tag *t = tags->slots[i]; t != NULL; t = t->chain) {
            if (t->buf.fetching) {
                return 1;
            }
        }
    }
    return 0;
}

/*
 * Before the give-back: a range this node's own fetch reserved is this node's to give back, so
 * the fetches still out are waited for (bounded by leafd.db.timeout.ms) and their ranges
 * installed. Otherwise max_id would already be past the ranges the give-back knows, and it would
 * keep everything as if another node had reserved since (docs/id-shapes.md, "Zero waste"). The
 * event loops are gone: nobody waits on these tags, so nothing is woken.
 */
static void settle_fetches(struct segment_service *svc, int64_t deadline) {
    for (;;) {
        struct segment_db_job *job = take_done(svc);
        pthread_rwlock_wrlock(&svc->tags_lock);
        while (job != NULL) {
            struct segment_db_job *next = job->next;
            if (job->op == SEGMENT_DB_FETCH) {
                apply_fetch(svc, job, segment_service_now_ms());
            }
            segment_db_job_free(job); /* the others are abandoned, as in the stop's clean-up */
            job = next;
        }
        int out = any_fetching(&svc->tags);
        pthread_rwlock_unlock(&svc->tags_lock);
        if (!out || clock_mono_ms() >= deadline) {
            return;
        }
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Zero waste: the unused rest of every tag's ranges goes back to leaf_alloc (logs only). */
static void give_back(struct segment_service *svc) {
    /* One bound for both steps: the stop waits at most leafd.db.timeout.ms for the database. */
    int64_t deadline = clock_mono_ms() + svc->cfg->db_timeout_ms;
    settle_fetches(svc, deadline);
    int64_t left = deadline - clock_mono_ms();
    struct segment_service_zero_waste_result r;
    segment_service_zero_waste_run(svc->db, &svc->tags, &svc->tags_lock, left > 1 ? left : 1, &r);
    if (r.tags > 0) {
        /* what was neither given back nor kept failed or ran out of time */
        log_info("segment",
                 "zero waste: gave back %" PRId64 " unused IDs of %d tag(s); %d kept (another "
                 "node reserved since), %d failed%s",
                 r.ids, r.given, r.kept, r.tags - r.given - r.kept,
                 r.timed_out ? " or out of time" : "");
    }
}

void segment_service_stop(struct segment_service *svc) {
    if (svc == NULL || !svc->enabled) {
        return;
    }
    if (svc->db != NULL) {
        give_back(svc); /* the event loops are gone: nothing is issued any more */
    }
    segment_db_stop(svc->db); /* queued jobs come back failed through on_db_done */
    segment_db_stop(svc->db_lookup);
    segment_db_stop(svc->db_bg);
    svc->db = svc->db_lookup = svc->db_bg = NULL;
    /* The event loops are gone: every admin job left is abandoned. */
    struct segment_db_job *job = take_done(svc);
    while (job != NULL) {
        struct segment_db_job *next = job->next;
        segment_db_job_free(job);
        job = next;
    }
    uv_close((uv_handle_t *)&svc->async, NULL);
    uv_close((uv_handle_t *)&svc->refresh, NULL);
    uv_run(svc->loop, UV_RUN_NOWAIT);
    lockstat_log("segment", "tag locks", &svc->tag_lock_stat);
    segment_tags_free(&svc->tags);
    segment_known_free(svc->known);
    svc->known = NULL;
    segment_negcache_free(&svc->neg);
    pthread_rwlock_destroy(&svc->tags_lock);
    pthread_mutex_destroy(&svc->neg_lock);
    pthread_mutex_destroy(&svc->wait_lock);
    pthread_mutex_destroy(&svc->done_lock);
    pthread_mutex_destroy(&svc->admin_lock);
    svc->enabled = 0;
}

void segment_service_free(struct segment_service *svc) {
    free(svc);
}

/* ---- views: /ready, /metrics, pages (any thread) ------------------------- */

void segment_service_each(struct segment_service *svc,
                          void (*fn)(const struct segment_tag_view *v, void *arg), void *arg) {
    if (!svc->enabled) {
        return;
    }
    pthread_rwlock_rdlock(&svc->tags_lock);
    for (size_t i = 0; i < svc->tags.nslots; i++) {
        for (struct segment_tag *t = svc->tags.slots[i]; t != NULL; t = t->chain) {
            struct segment_tag_view v;
            memcpy(v.name, t->name, sizeof(v.name));
            pthread_mutex_lock(&t->lock);
            v.state = (int)t->state;
            v.buf = t->buf;
            v.fetch_errors = t->fetch_errors;
            pthread_mutex_unlock(&t->lock);
            fn(&v, arg);
        }
    }
    pthread_rwlock_unlock(&svc->tags_lock);
}

size_t segment_service_known(struct segment_service *svc) {
    if (!svc->enabled) {
        return 0;
    }
    pthread_rwlock_rdlock(&svc->tags_lock);
    size_t n = segment_known_count(svc->known);
    pthread_rwlock_unlock(&svc->tags_lock);
    return n;
}

static void count_tag(const struct segment_tag_view *v, void *arg) {
    struct segment_service_stats *st = arg;
    st->tags_by_state[v->state]++;
    st->buffered += v->state == SEGMENT_TAG_ACTIVE && v->buf.available > 0;
}

void segment_service_stats(struct segment_service *svc, struct segment_service_stats *st) {
    *st = (struct segment_service_stats){.enabled = svc->enabled};
    if (!svc->enabled) {
        return;
    }
    segment_service_each(svc, count_tag, st);
    st->db_up = segment_db_connected(svc->db);
    segment_db_hosts(svc->db, &st->db_hosts);
    st->db_errors = segment_db_errors(svc->db) + segment_db_errors(svc->db_lookup) +
                    segment_db_errors(svc->db_bg);
    st->lookups = atomic_load(&svc->lookups);
    st->fetches = atomic_load(&svc->fetches);
    st->fetch_failures = atomic_load(&svc->fetch_failures);
    st->refreshes = atomic_load(&svc->refreshes);
    pthread_mutex_lock(&svc->neg_lock);
    st->lookups_refused = svc->neg.refused;
    pthread_mutex_unlock(&svc->neg_lock);
    for (int i = 0; i <= LATENCY_N && i < SEGMENT_LATENCY_BUCKETS + 1; i++) {
        st->latency_buckets[i] = atomic_load(&svc->latency_buckets[i]);
        st->latency_bounds_ms[i] = i < LATENCY_N ? latency_bounds_ms[i] : 0;
    }
    st->latency_sum_us = atomic_load(&svc->latency_sum_us);
    st->ready = st->db_up || st->buffered > 0;
}
