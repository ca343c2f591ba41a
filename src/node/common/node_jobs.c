/*
 * Parked jobs: see jobs.h.
 */
#include "node_jobs.h"

#include <string.h>

/* The slot with ticket i. */
static struct node_job *node_jobs_at(const struct node_jobs *js, int i) {
    return (struct node_job *)((char *)js->slots + (size_t)i * js->size);
}

void node_jobs_release(struct node_jobs *js, struct node_job *j) {
    if (js->release != NULL) {
        js->release(j);
    }
    memset(j, 0, js->size);
}

/* Any thread, when a parked request stops waiting for good; w->data is the table. */
static void jobs_cancel(struct leaf_wait *w) {
    struct node_jobs *js = w->data;
    pthread_mutex_lock(js->lock);
    for (size_t i = 0; i < js->n; i++) {
        struct node_job *j = node_jobs_at(js, (int)i);
        if (!j->used || j->wait != w) {
            continue;
        }
        j->wait = NULL;
        j->abandoned = 1;
        if (j->done || (j->queued && !j->running)) {
            node_jobs_release(js, j);
        }
    }
    pthread_mutex_unlock(js->lock);
}

static int jobs_take(struct node_jobs *js) {
    for (size_t i = 0; i < js->n; i++) {
        struct node_job *j = node_jobs_at(js, (int)i);
        if (!j->used) {
            memset(j, 0, js->size);
            j->used = j->queued = 1;
            return (int)i;
        }
    }
    return -1;
}

leaf_status_t node_jobs_step(struct node_jobs *js, int *ticket, struct leaf_wait *w,
                             struct node_job **job) {
    struct node_job *j = NULL;
    *job = NULL;
    if (*ticket < 0) {
        *ticket = jobs_take(js);
        if (*ticket < 0) {
            return LEAF_ENOMEM;
        }
        j = *job = node_jobs_at(js, *ticket);
    } else if ((size_t)*ticket < js->n && node_jobs_at(js, *ticket)->used) {
        j = node_jobs_at(js, *ticket);
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

int node_jobs_next(struct node_jobs *js) {
    for (size_t i = 0; i < js->n; i++) {
        struct node_job *j = node_jobs_at(js, (int)i);
        if (j->used && j->queued && !j->running && !j->done) {
            j->queued = 0;
            j->running = 1;
            return (int)i;
        }
    }
    return -1;
}

void node_jobs_finish(struct node_jobs *js, struct node_job *j, leaf_status_t rc) {
    j->done = 1;
    j->running = 0;
    j->rc = rc;
    if (j->abandoned) {
        node_jobs_release(js, j);
    } else if (j->wait != NULL) {
        j->wait->wake(j->wait);
    }
}
