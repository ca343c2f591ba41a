/*
 * The give-back of unused segment IDs at a graceful stop
 * (segment_service_zero_waste.h).
 * Layer: the node (src/node/segment), below segment_service.c; over
 * segment/segment_db.c and segment/segment_giveback.c.
 */
#include "segment_service_zero_waste.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "segment_giveback.h"

/*
 * The round's shared state: the caller waits on it, the database thread
 * updates it as jobs finish. It lives on the heap because the caller may
 * stop waiting (deadline) before the last job came back: whoever is last,
 * the caller or the final job, frees it. Guarded by mu.
 */
struct zero_waste_round {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending;
    int abandoned; /* the caller left; the last job frees the round */
    struct segment_service_zero_waste_result r;
};

static void round_free(struct zero_waste_round *z) {
    pthread_cond_destroy(&z->cv);
    pthread_mutex_destroy(&z->mu);
    free(z);
}

static void log_outcome(const struct segment_db_job *job) {
    int64_t ids = job->expected_max - job->max_id;
    if (job->rc == LEAF_OK) {
        log_info("segment",
                 "gave back %" PRId64 " unused IDs of tag '%s': max_id %" PRId64 " -> %" PRId64,
                 ids, job->tag, job->expected_max, job->max_id);
    } else if (job->rc == LEAF_ENOTFOUND) {
        log_info("segment",
                 "kept %" PRId64 " unused IDs of tag '%s': max_id is no longer %" PRId64
                 " (another node reserved a range since)",
                 ids, job->tag, job->expected_max);
    } else {
        log_warn("segment", "could not give back %" PRId64 " unused IDs of tag '%s': %s", ids,
                 job->tag, job->error[0] ? job->error : leaf_strstatus(job->rc));
    }
}

/* Database thread: one UPDATE came back. */
static void on_giveback_done(struct segment_db_job *job, void *arg) {
    struct zero_waste_round *z = arg;
    log_outcome(job);
    pthread_mutex_lock(&z->mu);
    if (job->rc == LEAF_OK) {
        z->r.given++;
        z->r.ids += job->expected_max - job->max_id;
    } else if (job->rc == LEAF_ENOTFOUND) {
        z->r.kept++;
    } else {
        z->r.failed++;
    }
    int last = --z->pending == 0;
    int abandoned = z->abandoned;
    pthread_cond_signal(&z->cv);
    pthread_mutex_unlock(&z->mu);
    segment_db_job_free(job);
    if (last && abandoned) {
        round_free(z);
    }
}

/* Builds one tag's UPDATE and clears its buffer; NULL when there is nothing to give back. */
static struct segment_db_job *tag_job(struct segment_tag *t, int64_t deadline,
                                      struct zero_waste_round *z) {
    struct segment_giveback gb;
    if (t->state != SEGMENT_TAG_ACTIVE ||
        segment_giveback_build(&t->buf, t->name, t->name_len, &gb) != LEAF_OK) {
        return NULL;
    }
    struct segment_db_job *job = segment_db_job_new(SEGMENT_DB_GIVEBACK, t->name, t->name_len);
    if (job == NULL) {
        log_error("segment", "out of memory building the give-back of tag '%s'", t->name);
        return NULL;
    }
    segment_buffer_clear(&t->buf); /* nothing more is issued from what goes back */
    job->max_id = gb.new_max;
    job->expected_max = gb.expected_max;
    job->deadline_ms = deadline;
    job->own_done = on_giveback_done;
    job->own_done_arg = z;
    return job;
}

/* Collects every tag's job into a list (tags write-locked); returns how many. */
static int collect(struct segment_tags *tags, pthread_rwlock_t *lock, int64_t deadline,
                   struct zero_waste_round *z, struct segment_db_job **head) {
    int n = 0;
    pthread_rwlock_wrlock(lock);
    for (size_t i = 0; i < tags->nslots; i++) {
        for (struct segment_tag *t = tags->slots[i]; t != NULL; t = t->chain) {
            struct segment_db_job *job = tag_job(t, deadline, z);
            if (job != NULL) {
                job->next = *head;
                *head = job;
                n++;
            }
        }
    }
    pthread_rwlock_unlock(lock);
    return n;
}

/* Waits until every job is back or the monotonic deadline; mu held. 1 when all are back. */
static int wait_all(struct zero_waste_round *z, int64_t deadline) {
    struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000L};
    while (z->pending > 0) {
        if (pthread_cond_timedwait(&z->cv, &z->mu, &ts) == ETIMEDOUT) {
            break;
        }
    }
    return z->pending == 0;
}

static struct zero_waste_round *round_new(void) {
    struct zero_waste_round *z = calloc(1, sizeof(*z));
    if (z == NULL) {
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->cv, &ca);
    pthread_condattr_destroy(&ca);
    return z;
}

void segment_service_zero_waste_run(struct segment_db *db, struct segment_tags *tags,
                                    pthread_rwlock_t *tags_lock, int64_t timeout_ms,
                                    struct segment_service_zero_waste_result *out) {
    memset(out, 0, sizeof(*out));
    struct zero_waste_round *z = round_new();
    if (z == NULL) {
        log_error("segment", "out of memory starting the give-back of unused IDs");
        return;
    }
    int64_t deadline = clock_mono_ms() + timeout_ms;
    struct segment_db_job *head = NULL;
    int n = collect(tags, tags_lock, deadline, z, &head);
    z->pending = n;
    while (head != NULL) {
        struct segment_db_job *next = head->next;
        segment_db_submit(db, head);
        head = next;
    }
    pthread_mutex_lock(&z->mu);
    int all = wait_all(z, deadline);
    if (!all) {
        /* abort the statement in progress; the others fail at once past the deadline */
        segment_db_cancel(db);
        log_warn("segment",
                 "give-back of unused IDs: %d of %d UPDATEs still out after "
                 "leafd.db.timeout.ms = %" PRId64 " ms; not waiting for them",
                 z->pending, n, timeout_ms);
        z->abandoned = 1;
    }
    *out = z->r;
    out->tags = n;
    out->timed_out = !all;
    pthread_mutex_unlock(&z->mu);
    if (all) {
        round_free(z);
    }
}
