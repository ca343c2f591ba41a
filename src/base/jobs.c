/*
 * Parked jobs: see jobs.h.
 */
#include "jobs.h"

#include <string.h>

/* The slot with ticket i. */
static struct leaf_job *leaf_jobs_at(const struct leaf_jobs *js, int i) {
    return (struct leaf_job *)((char *)js->slots + (size_t)i * js->size);
}

void leaf_jobs_release(struct leaf_jobs *js, struct leaf_job *j) {
    if (js->release != NULL) {
        js->release(j);
    }
    memset(j, 0, js->size);
}

/* Any thread, when a parked request stops waiting for good; w->data is the table. */
static void jobs_cancel(struct leaf_wait *w) {
    struct leaf_jobs *js = w->data;
    pthread_mutex_lock(js->lock);
    for (size_t i = 0; i < js->n; i++) {
        struct leaf_job *j = leaf_jobs_at(js, (int)i);
        if (!j->used || j->wait != w) {
            continue;
        }
        j->wait = NULL;
        j->abandoned = 1;
        if (j->done || (j->queued && !j->running)) {
            leaf_jobs_release(js, j);
        }
    }
    pthread_mutex_unlock(js->lock);
}

static int jobs_take(struct leaf_jobs *js) {
    for (size_t i = 0; i < js->n; i++) {
        struct leaf_job *j = leaf_jobs_at(js, (int)i);
        if (!j->used) {
            memset(j, 0, js->size);
            j->used = j->queued = 1;
            return (int)i;
        }
    }
    return -1;
}

leaf_status_t leaf_jobs_step(struct leaf_jobs *js, int *ticket, struct leaf_wait *w,
                             struct leaf_job **job) {
    struct leaf_job *j = NULL;
    *job = NULL;
    if (*ticket < 0) {
        *ticket = jobs_take(js);
        if (*ticket < 0) {
            return LEAF_ENOMEM;
        }
        j = *job = leaf_jobs_at(js, *ticket);
    } else if ((size_t)*ticket < js->n && leaf_jobs_at(js, *ticket)->used) {
        j = leaf_jobs_at(js, *ticket);
        if (j->done) {
            *job = j;
            *ticket = -1;
            return j->rc;
        }
    } else {
        return LEAF_EINVAL;
    }
    j->wait = w;
    if (w != NULL) {
        w->data = js;
        w->cancel = jobs_cancel;
    }
    return LEAF_EAGAIN;
}

int leaf_jobs_next(struct leaf_jobs *js) {
    for (size_t i = 0; i < js->n; i++) {
        struct leaf_job *j = leaf_jobs_at(js, (int)i);
        if (j->used && j->queued && !j->running && !j->done) {
            j->queued = 0;
            j->running = 1;
            return (int)i;
        }
    }
    return -1;
}

void leaf_jobs_finish(struct leaf_jobs *js, struct leaf_job *j, leaf_status_t rc) {
    j->done = 1;
    j->running = 0;
    j->rc = rc;
    if (j->abandoned) {
        leaf_jobs_release(js, j);
    } else if (j->wait != NULL) {
        j->wait->wake(j->wait);
    }
}
