#ifndef LEAF_NODE_JOBS_H
#define LEAF_NODE_JOBS_H

/*
 * Parked jobs: a request that needs work done on the control thread (an
 * admin change written to ZooKeeper, say) takes a slot and parks its
 * connection (struct leaf_wait, leaf_wait.h). The control thread picks queued
 * slots up (node_jobs_next), runs them and finishes them (node_jobs_finish),
 * which wakes the request; the request, resumed, calls node_jobs_step again
 * with its ticket, reads the outcome and the slot is freed. A request whose
 * connection closes abandons its slot: a job not yet started is dropped
 * (never run: nobody would hear of it), a running one is freed when it
 * finishes.
 *
 * The owner keeps an array of its own slot structs, each beginning with a
 * struct node_job, and its own lock; every function here is called with
 * that lock held, except the cancel callback, which takes it.
 */
#include <pthread.h>
#include <stddef.h>

#include "leaf_wait.h"
#include "status.h"

struct node_job {
    int used, queued, running, done, abandoned;
    leaf_status_t rc;
    struct leaf_wait *wait;
};

struct node_jobs {
    pthread_mutex_t *lock; /* the owner's: guards the slots */
    void *slots;           /* n elements of size bytes, each beginning with struct node_job */
    size_t n, size;
    /* Frees what the owner's part of a slot holds before the slot is
     * cleared (may be NULL). */
    void (*release)(struct node_job *j);
};

/*
 * A request's step, lock held. *ticket < 0: takes a free slot, queues it
 * and returns LEAF_EAGAIN with *job set for the caller to fill and *ticket
 * set (LEAF_ENOMEM when every slot is taken). A finished job: returns its
 * rc with *job set (read it, then node_jobs_release) and *ticket reset to
 * -1. Otherwise LEAF_EAGAIN with *job NULL. Whenever the answer is
 * LEAF_EAGAIN, w is parked on the slot (woken when it finishes).
 */
leaf_status_t node_jobs_step(struct node_jobs *js, int *ticket, struct leaf_wait *w,
                             struct node_job **job);

/* Frees a slot whose outcome the request has read; lock held. */
void node_jobs_release(struct node_jobs *js, struct node_job *j);

/* Control thread, lock held: the next queued slot (now running), or -1. */
int node_jobs_next(struct node_jobs *js);

/* Control thread, lock held: j is over; wakes its request, frees it if abandoned. */
void node_jobs_finish(struct node_jobs *js, struct node_job *j, leaf_status_t rc);

#endif
