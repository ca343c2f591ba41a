#ifndef LEAF_LEAF_WAIT_H
#define LEAF_LEAF_WAIT_H

/*
 * How a parked request is woken, from any thread: the server layer (src/net) sets wake, and
 * whatever produces the answer (a service, a job, a tag's range) keeps the request's wait on a
 * list and wakes it. libc only.
 *
 * A parked request's wake-up handle. A handler that cannot answer yet (a
 * segment range or an admin result is on its way) puts the request's wait
 * on the list of whatever will produce the answer and returns LEAF_EAGAIN.
 * When the answer arrives, that producer calls wake() from its own thread;
 * the server then resumes exactly that request on its loop.
 *
 * - wake is set by the server and is thread-safe.
 * - cancel and data are set by whoever holds the wait (the producer's
 *   registration). cancel() is called on the loop thread when the request
 *   stops waiting for good (its connection closed, or its handler gave up);
 *   it unlinks the wait under the producer's own lock and releases data.
 *   It must be idempotent, and the producer must outlive every connection
 *   (the services do: they stop after the event loops).
 * - prev/next/list belong to the producer and are guarded by its lock.
 */
struct leaf_wait_list;
struct leaf_wait {
    struct leaf_wait *prev, *next;
    struct leaf_wait_list *list; /* the list it is on, NULL when none */
    void (*wake)(struct leaf_wait *w);
    void (*cancel)(struct leaf_wait *w);
    void *data;
};

/* A producer's list of waits; the producer guards it with its own lock. */
struct leaf_wait_list {
    struct leaf_wait *head;
};

/* The list functions are called with the producer's lock held. */
void leaf_wait_link(struct leaf_wait_list *l, struct leaf_wait *w);
/* Leaves whatever list w is on (no-op when none). */
void leaf_wait_unlink(struct leaf_wait *w);
/* Unlinks every wait on l and wakes it. */
void leaf_wait_wake_all(struct leaf_wait_list *l);

/* The request no longer waits: calls cancel() once if a producer holds it. */
void leaf_wait_cancel(struct leaf_wait *w);

#endif
