#ifndef CLIENT_BATCH_H
#define CLIENT_BATCH_H

/*
 * The calls of one strict key waiting for IDs, in the order they arrived, and the batches made
 * of them: one round trip asks for the sum of a batch's counts, and its answer, N consecutive
 * IDs, is split over the batch in arrival order (as TiDB's PD client batches TSO requests). The
 * caller that leads a batch takes it from the head of the queue; calls that arrive meanwhile
 * form the next one. Pure: no lock, no clock (client_strict.c holds the key's lock around
 * every call here; tests/unit/test_client.c drives it alone).
 */
#include <stdint.h>

/* One call: its IDs' place and count, and its outcome. Owned by the calling thread (on its
 * stack); linked into its key's queue and written only under the key's lock, except done, which
 * client_batch_finish() writes for the batch it was given. The calling thread reads gen, first,
 * done and lead while it waits, without the lock: they are written and read with atomic builtins
 * (done and lead with release and acquire: they publish rc and the IDs). */
struct client_waiter {
    struct client_waiter *next;
    int64_t *ids; /* where its n IDs go */
    int64_t n;
    int64_t started_ms; /* when the call began (CLOCK_MONOTONIC): its batch's timeout counts */
    int rc;             /* 0 or a LEAFD_CLIENT_E* code */
    int done;           /* its batch was answered: rc set, its IDs written when rc is 0 */
    int lead;           /* it leads the next batch */
    uint32_t gen;       /* the generation it belongs to: the batch it will be in */
    int first;          /* the first of its generation: the one that will lead it */
};

/* The calls waiting for the next batch, all of generation gen (the batches taken so far). */
struct client_batch_queue {
    struct client_waiter *head, *tail;
    uint32_t gen;
};

/* A call joins the queue, last, stamped with the queue's generation (first when it is alone). */
void client_batch_push(struct client_batch_queue *q, struct client_waiter *w);

/* Takes from the head the calls whose counts fit max together (the head always: a call asks for
 * at most max IDs) into *batch, in arrival order: the IDs the batch asks for, 0 when empty. The
 * queue's generation moves on; calls left behind (over max) join it, the new head first. */
int64_t client_batch_take(struct client_batch_queue *q, int64_t max, struct client_waiter **batch);

/* The batch's outcome: rc 0 hands ids (as many as client_batch_take() answered, ascending) to
 * the calls in arrival order, the first call the lowest; else every call fails with rc. Each is
 * marked done last (release): its thread may return at once, so nothing of it is read after. */
void client_batch_finish(struct client_waiter *batch, const int64_t *ids, int rc);

#endif
