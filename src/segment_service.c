#include "segment_service.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "segment_tags.h"
#include "log.h"

/* Leaf refreshes every 60 s; half that keeps "a deleted tag stops within 60 s" true
 * even counting the refresh's own round trip. */
#define SEGMENT_REFRESH_MS 30000
#define SEGMENT_MAX_TAGS 65536   /* unknown tags are kept until the next refresh */
#define SEGMENT_ADMIN_SLOTS 64   /* admin requests waiting at once */
#define SEGMENT_ADMIN_KEEP_MS 60000

/* An admin job and the request waiting for it. Guarded by service.admin_lock. */
struct admin_slot {
    const void *key;            /* the waiting request, NULL = free slot */
    struct segment_db_job *job; /* owned by the database/control loop until done */
    int done;
    int abandoned;
    int64_t created_ms;
};

/* Fetch latency histogram bounds in ms; the last bucket is +Inf. */
static const int64_t latency_bounds_ms[] = {1, 2, 5, 10, 50, 100, 500, 1000, 5000};
#define LATENCY_N ((int)(sizeof(latency_bounds_ms) / sizeof(latency_bounds_ms[0])))

/*
 * The one instance. tags: see segment_tags.h (guarded by tags_lock);
 * done list: guarded by done_lock (database thread -> control loop);
 * admin slots: guarded by admin_lock; counters: written by the control loop
 * (relaxed atomics), read by any thread; handles: control loop only.
 */
static struct {
    int enabled;
    int64_t started_ms;
    struct segment_db *db;
    pthread_rwlock_t tags_lock;
    struct segment_tags tags;

    pthread_mutex_t done_lock;
    struct segment_db_job *done_head, *done_tail;
    uv_async_t async;
    uv_timer_t refresh;
    uv_loop_t *loop;

    pthread_mutex_t admin_lock;
    struct admin_slot admin[SEGMENT_ADMIN_SLOTS];

    atomic_ullong fetches, fetch_failures, lookups, refreshes;
    atomic_ullong latency_buckets[LATENCY_N + 1];
    atomic_ullong latency_sum_us;
    atomic_int loaded; /* the first refresh succeeded */
} svc;

int64_t segment_service_now_ms(void) {
    return (int64_t)(uv_hrtime() / 1000000);
}

/* ---- database thread -> control loop --------------------------------------- */

static void on_db_done(struct segment_db_job *job, void *arg) {
    pthread_mutex_lock(&svc.done_lock);
    if (svc.done_tail != NULL) {
        svc.done_tail->next = job;
    } else {
        svc.done_head = job;
    }
    svc.done_tail = job;
    pthread_mutex_unlock(&svc.done_lock);
    uv_async_send(&svc.async);
}

/* Queues a job for the database thread; on allocation failure nothing is queued. */
static leaf_status_t submit(enum segment_db_op op, const struct segment_tag *t, int64_t step) {
    struct segment_db_job *job = segment_db_job_new(op, t->name, t->name_len);
    if (job == NULL) {
        log_error("segment", "out of memory queueing a database job for tag '%s'", t->name);
        return LEAF_ENOMEM;
    }
    job->step = step;
    job->cookie = t->epoch;
    segment_db_submit(svc.db, job);
    return LEAF_OK;
}

/* ---- the request path (HTTP loop threads) ---------------------------------- */

/* Starts the tag's lookup unless one is in flight. Tag lock held. */
static void start_lookup(struct segment_tag *t, int64_t now) {
    if (t->lookup_in_flight) {
        return;
    }
    if (submit(SEGMENT_DB_LOOKUP, t, 0) == LEAF_OK) {
        t->lookup_in_flight = 1;
        t->lookup_started_ms = now;
        atomic_fetch_add_explicit(&svc.lookups, 1, memory_order_relaxed);
    }
}

/* Starts a range fetch when the double buffer wants one. Tag lock held. */
static void maybe_fetch(struct segment_tag *t, int64_t now) {
    if (!segment_buffer_need_fetch(&t->buf)) {
        return;
    }
    int64_t size = segment_buffer_begin_fetch(&t->buf, now);
    if (submit(SEGMENT_DB_FETCH, t, size) != LEAF_OK) {
        segment_buffer_fetch_failed(&t->buf);
    }
}

static leaf_status_t get_locked(struct segment_tag *t, int count, int64_t *ids, int64_t first_seen,
                                int64_t now) {
    if (t->state == SEGMENT_TAG_ACTIVE) {
        leaf_status_t rc = segment_buffer_take(&t->buf, count, ids);
        maybe_fetch(t, now);
        if (rc == LEAF_OK) {
            return LEAF_OK;
        }
        return t->db_failed_ms >= first_seen ? LEAF_EUNAVAIL : LEAF_EAGAIN;
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
    start_lookup(t, now);
    return LEAF_EAGAIN;
}

/* A tag not in the table yet: add it and look it up (write lock). */
static leaf_status_t get_new(const char *tag, size_t len, int64_t now) {
    leaf_status_t rc = LEAF_EAGAIN;
    pthread_rwlock_wrlock(&svc.tags_lock);
    int created = 0;
    struct segment_tag *t = segment_tags_find(&svc.tags, tag, len);
    if (t == NULL && svc.tags.count >= SEGMENT_MAX_TAGS) {
        rc = LEAF_ENOMEM;
    } else if (t == NULL && (t = segment_tags_add(&svc.tags, tag, len, &created)) == NULL) {
        rc = LEAF_ENOMEM;
    } else if (created) {
        start_lookup(t, now);
    }
    pthread_rwlock_unlock(&svc.tags_lock);
    return rc;
}

leaf_status_t segment_service_get(const char *tag, size_t len, int count, int64_t *ids,
                                  int64_t first_seen_ms) {
    int64_t now = segment_service_now_ms();
    pthread_rwlock_rdlock(&svc.tags_lock);
    struct segment_tag *t = segment_tags_find(&svc.tags, tag, len);
    if (t == NULL) {
        pthread_rwlock_unlock(&svc.tags_lock);
        return get_new(tag, len, now);
    }
    pthread_mutex_lock(&t->lock);
    leaf_status_t rc = get_locked(t, count, ids, first_seen_ms, now);
    pthread_mutex_unlock(&t->lock);
    pthread_rwlock_unlock(&svc.tags_lock);
    return rc;
}

/* ---- applying results (control loop, tags write-locked) -------------------- */

static void note_latency(int64_t us) {
    int i = 0;
    while (i < LATENCY_N && us > latency_bounds_ms[i] * 1000) {
        i++;
    }
    atomic_fetch_add_explicit(&svc.latency_buckets[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&svc.latency_sum_us, (unsigned long long)us, memory_order_relaxed);
}

static void apply_fetch(struct segment_db_job *job, int64_t now) {
    struct segment_tag *t = segment_tags_find(&svc.tags, job->tag, strlen(job->tag));
    if (t == NULL) {
        return; /* swept while its fetch was out: the range is simply skipped */
    }
    if (job->cookie != t->epoch || t->state != SEGMENT_TAG_ACTIVE) {
        segment_buffer_fetch_failed(&t->buf); /* stale: the tag left or re-entered the table */
        return;
    }
    if (job->rc == LEAF_OK) {
        note_latency(job->latency_us);
        atomic_fetch_add_explicit(&svc.fetches, 1, memory_order_relaxed);
        t->db_failed_ms = -1;
        if (segment_buffer_install(&t->buf, job->new_max, job->step, now) != LEAF_OK) {
            log_error("segment", "range [%" PRId64 ", %" PRId64 ") of tag '%s' discarded: "
                      "max_id is not above the ranges this node already holds",
                      job->new_max - job->step, job->new_max, t->name);
        }
        return;
    }
    segment_buffer_fetch_failed(&t->buf);
    if (job->rc == LEAF_ENOTFOUND) {
        log_info("segment", "tag '%s' is no longer in leaf_alloc; stopped serving it", t->name);
        segment_tags_deactivate(&svc.tags, t);
        return;
    }
    t->db_failed_ms = now;
    t->fetch_errors++;
    atomic_fetch_add_explicit(&svc.fetch_failures, 1, memory_order_relaxed);
}

static void apply_lookup(struct segment_db_job *job, int64_t now) {
    int created;
    struct segment_tag *t = segment_tags_find(&svc.tags, job->tag, strlen(job->tag));
    if (t == NULL && job->owner != NULL && job->rc == LEAF_OK) {
        t = segment_tags_add(&svc.tags, job->tag, strlen(job->tag), &created);
    }
    if (t == NULL) {
        return;
    }
    if (job->owner == NULL) {
        t->lookup_in_flight = 0;
    }
    if (job->rc == LEAF_OK) {
        segment_tags_activate(&svc.tags, t, job->row_step);
    } else if (job->rc == LEAF_ENOTFOUND) {
        segment_tags_deactivate(&svc.tags, t);
    } else {
        t->db_failed_ms = now;
    }
}

static void apply_load(struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        return;
    }
    for (size_t i = 0; i < job->nrows; i++) {
        const char *name = job->rows[i].biz_tag;
        size_t len = strlen(name);
        if (!validate_tag(name, len)) {
            log_debug("segment", "leaf_alloc row '%s' is not a valid tag; not served", name);
            continue;
        }
        if (segment_tags_sync_row(&svc.tags, name, len, job->rows[i].step, job->cookie) == NULL) {
            log_error("segment", "out of memory loading tag '%s'", name);
        }
    }
    size_t gone = segment_tags_sync_end(&svc.tags, job->cookie);
    if (gone > 0) {
        log_info("segment", "%zu tag(s) left leaf_alloc; stopped serving them", gone);
    }
    if (!atomic_exchange(&svc.loaded, 1)) {
        log_info("segment", "loaded %zu tag(s) from leaf_alloc", job->nrows);
    }
    atomic_fetch_add_explicit(&svc.refreshes, 1, memory_order_relaxed);
}

static void apply_admin_effect(struct segment_db_job *job) {
    int created;
    struct segment_tag *t;
    if (job->op == SEGMENT_DB_CREATE && job->rc == LEAF_OK) {
        t = segment_tags_add(&svc.tags, job->tag, strlen(job->tag), &created);
        if (t != NULL) {
            segment_tags_activate(&svc.tags, t, job->step);
        }
    } else if (job->op == SEGMENT_DB_SET_STEP && job->rc == LEAF_OK) {
        t = segment_tags_find(&svc.tags, job->tag, strlen(job->tag));
        if (t != NULL && t->state == SEGMENT_TAG_ACTIVE) {
            segment_buffer_set_min_step(&t->buf, job->step);
        }
    }
}

static void apply(struct segment_db_job *job) {
    int64_t now = segment_service_now_ms();
    pthread_rwlock_wrlock(&svc.tags_lock);
    switch (job->op) {
    case SEGMENT_DB_FETCH:
        apply_fetch(job, now);
        break;
    case SEGMENT_DB_LOOKUP:
        apply_lookup(job, now);
        break;
    case SEGMENT_DB_LOAD:
        apply_load(job);
        break;
    default:
        apply_admin_effect(job);
        break;
    }
    pthread_rwlock_unlock(&svc.tags_lock);
}

/* Hands an admin job back to its slot, or frees it when nobody waits any more. */
static void admin_complete(struct segment_db_job *job) {
    struct admin_slot *s = job->owner;
    pthread_mutex_lock(&svc.admin_lock);
    if (s->abandoned) {
        *s = (struct admin_slot){0};
        segment_db_job_free(job);
    } else {
        s->done = 1;
    }
    pthread_mutex_unlock(&svc.admin_lock);
}

static struct segment_db_job *take_done(void) {
    pthread_mutex_lock(&svc.done_lock);
    struct segment_db_job *list = svc.done_head;
    svc.done_head = svc.done_tail = NULL;
    pthread_mutex_unlock(&svc.done_lock);
    return list;
}

static void on_async(uv_async_t *a) {
    struct segment_db_job *job = take_done();
    while (job != NULL) {
        struct segment_db_job *next = job->next;
        apply(job);
        if (job->owner != NULL) {
            admin_complete(job);
        } else {
            segment_db_job_free(job);
        }
        job = next;
    }
}

static void refresh_tags(void) {
    struct segment_db_job *job = segment_db_job_new(SEGMENT_DB_LOAD, NULL, 0);
    if (job == NULL) {
        log_error("segment", "out of memory starting the tag refresh");
        return;
    }
    pthread_rwlock_wrlock(&svc.tags_lock);
    job->cookie = segment_tags_next_gen(&svc.tags);
    pthread_rwlock_unlock(&svc.tags_lock);
    segment_db_submit(svc.db, job);
}

static void on_refresh(uv_timer_t *t) {
    refresh_tags();
}

/* ---- admin jobs (HTTP loop threads) ---------------------------------------- */

static struct admin_slot *admin_find(const void *key) {
    for (int i = 0; i < SEGMENT_ADMIN_SLOTS; i++) {
        if (svc.admin[i].key == key && !svc.admin[i].abandoned) {
            return &svc.admin[i];
        }
    }
    return NULL;
}

/* Gives up on a slot: freed now when its job is back, else when it comes back. */
static void admin_drop(struct admin_slot *s) {
    if (s->done) {
        segment_db_job_free(s->job);
        *s = (struct admin_slot){0};
    } else {
        s->abandoned = 1;
    }
}

/* A free slot, after dropping answers nobody came back for. admin_lock held. */
static struct admin_slot *admin_free_slot(int64_t now) {
    struct admin_slot *free_slot = NULL;
    for (int i = 0; i < SEGMENT_ADMIN_SLOTS; i++) {
        struct admin_slot *s = &svc.admin[i];
        if (s->key != NULL && s->done && now - s->created_ms > SEGMENT_ADMIN_KEEP_MS) {
            admin_drop(s);
        }
        if (s->key == NULL && free_slot == NULL) {
            free_slot = s;
        }
    }
    return free_slot;
}

leaf_status_t segment_service_admin_begin(const void *key, struct segment_db_job *job) {
    pthread_mutex_lock(&svc.admin_lock);
    struct admin_slot *old = admin_find(key);
    if (old != NULL) {
        admin_drop(old); /* an earlier request on the same connection slot, never answered */
    }
    struct admin_slot *s = admin_free_slot(segment_service_now_ms());
    if (s != NULL) {
        *s = (struct admin_slot){.key = key, .job = job, .created_ms = segment_service_now_ms()};
        job->owner = s;
    }
    pthread_mutex_unlock(&svc.admin_lock);
    if (s == NULL) {
        log_warn("segment", "too many admin requests waiting for the database");
        return LEAF_ENOMEM;
    }
    segment_db_submit(svc.db, job);
    return LEAF_OK;
}

leaf_status_t segment_service_admin_poll(const void *key, struct segment_db_job **job) {
    leaf_status_t rc = LEAF_ENOTFOUND;
    pthread_mutex_lock(&svc.admin_lock);
    struct admin_slot *s = admin_find(key);
    if (s != NULL && !s->done) {
        rc = LEAF_EAGAIN;
    } else if (s != NULL) {
        *job = s->job;
        *s = (struct admin_slot){0};
        rc = LEAF_OK;
    }
    pthread_mutex_unlock(&svc.admin_lock);
    return rc;
}

void segment_service_admin_abandon(const void *key) {
    pthread_mutex_lock(&svc.admin_lock);
    struct admin_slot *s = admin_find(key);
    if (s != NULL) {
        admin_drop(s);
    }
    pthread_mutex_unlock(&svc.admin_lock);
}

/* ---- start and stop (main thread) ------------------------------------------ */

leaf_status_t segment_service_start(const struct leaf_config *cfg, struct uv_loop_s *loop) {
    if (!cfg->segment_enable) {
        return LEAF_OK;
    }
    svc.enabled = 1;
    svc.loop = loop;
    svc.started_ms = segment_service_now_ms();
    pthread_rwlock_init(&svc.tags_lock, NULL);
    pthread_mutex_init(&svc.done_lock, NULL);
    pthread_mutex_init(&svc.admin_lock, NULL);
    if (segment_tags_init(&svc.tags) != LEAF_OK) {
        log_error("segment", "out of memory creating the tag table");
        return LEAF_ENOMEM;
    }
    /* The handles do not keep the control loop alive: it ends with the signals. */
    uv_async_init(loop, &svc.async, on_async);
    uv_unref((uv_handle_t *)&svc.async);
    uv_timer_init(loop, &svc.refresh);
    uv_unref((uv_handle_t *)&svc.refresh);
    struct segment_db_options o = {cfg->db_host, cfg->db_port, cfg->jdbc_username,
                                   cfg->jdbc_password, cfg->db_name, cfg->db_timeout_ms};
    if (segment_db_start(&svc.db, &o, on_db_done, NULL) != LEAF_OK) {
        return LEAF_ERR;
    }
    refresh_tags();
    uv_timer_start(&svc.refresh, on_refresh, SEGMENT_REFRESH_MS, SEGMENT_REFRESH_MS);
    log_info("segment", "segment IDs from %s:%d/%s (tags refreshed every %d s)", cfg->db_host,
             cfg->db_port, cfg->db_name, SEGMENT_REFRESH_MS / 1000);
    return LEAF_OK;
}

void segment_service_stop(void) {
    if (!svc.enabled) {
        return;
    }
    segment_db_stop(svc.db); /* queued jobs come back failed through on_db_done */
    svc.db = NULL;
    struct segment_db_job *job = take_done();
    while (job != NULL) {
        struct segment_db_job *next = job->next;
        if (job->owner != NULL) {
            ((struct admin_slot *)job->owner)->done = 1;
        } else {
            segment_db_job_free(job);
        }
        job = next;
    }
    for (int i = 0; i < SEGMENT_ADMIN_SLOTS; i++) {
        if (svc.admin[i].key != NULL && svc.admin[i].done) {
            segment_db_job_free(svc.admin[i].job);
        }
        svc.admin[i] = (struct admin_slot){0};
    }
    uv_close((uv_handle_t *)&svc.async, NULL);
    uv_close((uv_handle_t *)&svc.refresh, NULL);
    uv_run(svc.loop, UV_RUN_NOWAIT);
    segment_tags_free(&svc.tags);
    pthread_rwlock_destroy(&svc.tags_lock);
    pthread_mutex_destroy(&svc.done_lock);
    pthread_mutex_destroy(&svc.admin_lock);
    svc.enabled = 0;
}

/* ---- views: /ready, /metrics, /cache (any thread) ------------------------- */

void segment_service_each(void (*fn)(const struct segment_tag_view *v, void *arg), void *arg) {
    if (!svc.enabled) {
        return;
    }
    pthread_rwlock_rdlock(&svc.tags_lock);
    for (size_t i = 0; i < svc.tags.nslots; i++) {
        for (struct segment_tag *t = svc.tags.slots[i]; t != NULL; t = t->chain) {
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
    pthread_rwlock_unlock(&svc.tags_lock);
}

struct ready_count {
    size_t active, buffered;
};

static void count_ready(const struct segment_tag_view *v, void *arg) {
    struct ready_count *c = arg;
    c->active += v->state == SEGMENT_TAG_ACTIVE;
    c->buffered += v->state == SEGMENT_TAG_ACTIVE && v->buf.available > 0;
}

int segment_service_ready(char *buf, size_t cap, size_t *pos) {
    if (!svc.enabled) {
        *pos += (size_t)snprintf(buf + *pos, cap - *pos, "\"segment\":{\"enabled\":false}");
        return 1;
    }
    struct ready_count c = {0, 0};
    segment_service_each(count_ready, &c);
    int up = segment_db_connected(svc.db);
    int ok = up || c.buffered > 0;
    *pos += (size_t)snprintf(buf + *pos, cap - *pos,
                             "\"segment\":{\"enabled\":true,\"ready\":%s,\"database\":\"%s\","
                             "\"tags\":%zu,\"tags_buffered\":%zu%s}",
                             ok ? "true" : "false", up ? "up" : "down", c.active, c.buffered,
                             ok ? ""
                                : ",\"reason\":\"database unreachable and no tag has a "
                                  "buffered range\"");
    return ok;
}

struct metrics_out {
    char *buf;
    size_t cap, pos;
    int pass; /* which per-tag family is being written */
};

static void metrics_printf(struct metrics_out *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void metrics_printf(struct metrics_out *m, const char *fmt, ...) {
    if (m->pos >= m->cap) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(m->buf + m->pos, m->cap - m->pos, fmt, ap);
    va_end(ap);
    m->pos = n < 0 ? m->pos : (m->pos + (size_t)n > m->cap ? m->cap : m->pos + (size_t)n);
}

/* Per-tag families: name, type, help, value (X-macro, one row each). */
#define SEGMENT_TAG_METRICS(X)                                                              \
    X("leafd_segment_remaining_ids", "gauge", "IDs buffered in memory for the tag.",         \
      v->buf.available)                                                                     \
    X("leafd_segment_step", "gauge", "Step of the tag's last range (dynamic).", v->buf.step) \
    X("leafd_segment_issued_total", "counter", "Segment IDs issued for the tag.",            \
      (int64_t)v->buf.issued)                                                               \
    X("leafd_segment_range_fetches_total", "counter", "Ranges reserved from leaf_alloc.",    \
      (int64_t)v->buf.fetches)                                                              \
    X("leafd_segment_fetch_errors_total", "counter",                                        \
      "Range fetches that failed for want of the database.", (int64_t)v->fetch_errors)

static void metrics_tag(const struct segment_tag_view *v, void *arg) {
    struct metrics_out *m = arg;
    int i = 0;
    if (v->state != SEGMENT_TAG_ACTIVE) {
        return;
    }
#define SEGMENT_TAG_ROW(mname, mtype, mhelp, value)                                        \
    if (i++ == m->pass) {                                                                  \
        metrics_printf(m, mname "{tag=\"%s\"} %" PRId64 "\n", v->name, (int64_t)(value)); \
    }
    SEGMENT_TAG_METRICS(SEGMENT_TAG_ROW)
#undef SEGMENT_TAG_ROW
}

/* Seconds the buffered IDs last at the tag's recent rate (+Inf when idle). */
static void metrics_runway(const struct segment_tag_view *v, void *arg) {
    struct metrics_out *m = arg;
    if (v->state != SEGMENT_TAG_ACTIVE) {
        return;
    }
    double rate = segment_buffer_rate(&v->buf, segment_service_now_ms());
    if (rate <= 0.0) {
        metrics_printf(m, "leafd_segment_runway_seconds{tag=\"%s\"} +Inf\n", v->name);
    } else {
        metrics_printf(m, "leafd_segment_runway_seconds{tag=\"%s\"} %.3f\n", v->name,
                       (double)v->buf.available / rate);
    }
}

static void metrics_latency(struct metrics_out *m) {
    metrics_printf(m, "# HELP leafd_segment_fetch_latency_seconds Time a range reservation "
                      "took on the database.\n"
                      "# TYPE leafd_segment_fetch_latency_seconds histogram\n");
    unsigned long long cum = 0;
    for (int i = 0; i <= LATENCY_N; i++) {
        cum += atomic_load_explicit(&svc.latency_buckets[i], memory_order_relaxed);
        if (i < LATENCY_N) {
            metrics_printf(m, "leafd_segment_fetch_latency_seconds_bucket{le=\"%g\"} %llu\n",
                           (double)latency_bounds_ms[i] / 1000.0, cum);
        } else {
            metrics_printf(m, "leafd_segment_fetch_latency_seconds_bucket{le=\"+Inf\"} %llu\n",
                           cum);
        }
    }
    metrics_printf(m, "leafd_segment_fetch_latency_seconds_sum %.6f\n"
                      "leafd_segment_fetch_latency_seconds_count %llu\n",
                   (double)atomic_load(&svc.latency_sum_us) / 1e6, cum);
}

size_t segment_service_metrics(char *buf, size_t cap) {
    struct metrics_out m = {buf, cap, 0, 0};
    if (!svc.enabled) {
        return 0;
    }
#define SEGMENT_TAG_FAMILY(name, type, help, value)                    \
    metrics_printf(&m, "# HELP " name " " help "\n# TYPE " name " " type "\n"); \
    segment_service_each(metrics_tag, &m);                             \
    m.pass++;
    SEGMENT_TAG_METRICS(SEGMENT_TAG_FAMILY)
#undef SEGMENT_TAG_FAMILY
    metrics_printf(&m, "# HELP leafd_segment_runway_seconds Seconds the buffered IDs last at "
                       "the tag's recent rate.\n# TYPE leafd_segment_runway_seconds gauge\n");
    segment_service_each(metrics_runway, &m);
    metrics_latency(&m);
    metrics_printf(&m,
                   "# HELP leafd_segment_db_errors_total Database errors (connects and "
                   "statements).\n# TYPE leafd_segment_db_errors_total counter\n"
                   "leafd_segment_db_errors_total %llu\n"
                   "# HELP leafd_segment_db_up Whether the database connection is up.\n"
                   "# TYPE leafd_segment_db_up gauge\nleafd_segment_db_up %d\n"
                   "# HELP leafd_segment_lookups_total Tag lookups sent to the database.\n"
                   "# TYPE leafd_segment_lookups_total counter\nleafd_segment_lookups_total %llu\n",
                   (unsigned long long)segment_db_errors(svc.db), segment_db_connected(svc.db),
                   (unsigned long long)atomic_load(&svc.lookups));
    return m.pos;
}
