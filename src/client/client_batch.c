/* The waiting calls of a strict key and their batches (client_batch.h). */
#include "client_batch.h"

#include <stddef.h>
#include <string.h>

void client_batch_push(struct client_batch_queue *q, struct client_waiter *w) {
    w->next = NULL;
    __atomic_store_n(&w->gen, q->gen, __ATOMIC_RELAXED);
    __atomic_store_n(&w->first, q->head == NULL, __ATOMIC_RELAXED);
    if (q->tail != NULL) {
        q->tail->next = w;
    } else {
        q->head = w;
    }
    q->tail = w;
}

int64_t client_batch_take(struct client_batch_queue *q, int64_t max, struct client_waiter **batch) {
    struct client_waiter *w = q->head, *last = NULL;
    int64_t sum = 0;
    /* The head always goes: it asks for at most max (client_strict.c refuses more). */
    while (w != NULL && (last == NULL || sum + w->n <= max)) {
        sum += w->n;
        last = w;
        w = w->next;
    }
    *batch = q->head;
    if (last != NULL) {
        last->next = NULL;
    }
    q->head = w;
    if (w == NULL) {
        q->tail = NULL;
    }
    q->gen++;
    for (struct client_waiter *left = w; left != NULL; left = left->next) {
        __atomic_store_n(&left->gen, q->gen, __ATOMIC_RELAXED);
        __atomic_store_n(&left->first, left == w, __ATOMIC_RELAXED);
    }
    return sum;
}

void client_batch_finish(struct client_waiter *batch, const int64_t *ids, int rc) {
    for (struct client_waiter *w = batch, *next; w != NULL; w = next) {
        next = w->next;
        if (rc == 0) {
            memcpy(w->ids, ids, (size_t)w->n * sizeof(*ids));
            ids += w->n;
        }
        w->rc = rc;
        __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    }
}
