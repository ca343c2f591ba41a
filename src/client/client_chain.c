/* The lock-free chain of ranges (client_chain.h). */
#include "client_chain.h"

#include <stdlib.h>

int client_chain_init(struct client_chain *ch, int listed) {
    atomic_init(&ch->head, 0);
    atomic_init(&ch->tail, 0);
    for (int i = 0; i < CLIENT_CHAIN_SLOTS; i++) {
        struct client_block *b = &ch->slot[i];
        /* Slot i first holds block i, so "seq != head" reads as empty until it is pushed. */
        atomic_init(&b->seq, CLIENT_CHAIN_WRITING);
        atomic_init(&b->taken, 0);
        atomic_init(&b->count, 0);
        atomic_init(&b->start, 0);
        atomic_init(&b->ids, NULL);
        b->cap = 0;
    }
    ch->listed = listed;
    ch->n_retired = 0;
    return 0;
}

void client_chain_free(struct client_chain *ch) {
    for (int i = 0; i < CLIENT_CHAIN_SLOTS; i++) {
        free((void *)atomic_load_explicit(&ch->slot[i].ids, memory_order_relaxed));
        atomic_store_explicit(&ch->slot[i].ids, NULL, memory_order_relaxed);
        ch->slot[i].cap = 0;
    }
    for (int i = 0; i < ch->n_retired; i++) {
        free((void *)ch->retired[i]);
    }
    ch->n_retired = 0;
}

/* A listed slot's array, made to hold count IDs (the slot is marked WRITING): 0 or -1. */
static int slot_fit(struct client_chain *ch, struct client_block *b, int64_t count) {
    if (count <= b->cap) {
        return 0;
    }
    int64_t cap = b->cap ? b->cap : CLIENT_CHAIN_LIST_FIRST;
    while (cap < count) {
        cap *= 2;
    }
    if (cap > CLIENT_CHAIN_LIST_MAX) {
        cap = CLIENT_CHAIN_LIST_MAX;
    }
    _Atomic int64_t *old = atomic_load_explicit(&b->ids, memory_order_relaxed);
    if (count > cap || (old != NULL && ch->n_retired == CLIENT_CHAIN_RETIRED_MAX)) {
        return -1;
    }
    _Atomic int64_t *list = calloc((size_t)cap, sizeof(*list));
    if (list == NULL) {
        return -1;
    }
    if (old != NULL) {
        ch->retired[ch->n_retired++] = old;
    }
    atomic_store_explicit(&b->ids, list, memory_order_release);
    b->cap = cap;
    return 0;
}

void client_chain_drop(struct client_chain *ch) {
    uint64_t tail = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    for (int i = 0; i < CLIENT_CHAIN_SLOTS; i++) {
        atomic_store_explicit(&ch->slot[i].seq, CLIENT_CHAIN_WRITING, memory_order_relaxed);
        atomic_store_explicit(&ch->slot[i].count, 0, memory_order_relaxed);
        atomic_store_explicit(&ch->slot[i].taken, 0, memory_order_relaxed);
    }
    /* Block tail is the next pushed: its slot reads as empty (WRITING) until then. */
    atomic_store_explicit(&ch->head, tail, memory_order_release);
}

int client_chain_room(const struct client_chain *ch) {
    uint64_t tail = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&ch->head, memory_order_acquire);
    /* Slot tail % SLOTS last held block tail - SLOTS; it is free once the head is past
     * that block and the one after (a caller may still be moving the head off it). */
    return tail - head < CLIENT_CHAIN_SLOTS - 1;
}

int client_chain_push(struct client_chain *ch, int64_t start, const int64_t *ids, int64_t count) {
    uint64_t tail = atomic_load_explicit(&ch->tail, memory_order_relaxed);
    struct client_block *b = &ch->slot[tail % CLIENT_CHAIN_SLOTS];
    /* The seqlock's writer: mark the slot, then every field with release, so a reader that
     * loads (acquire) any new field sees the mark; publish the block number last. */
    atomic_store_explicit(&b->seq, CLIENT_CHAIN_WRITING, memory_order_relaxed);
    if (ids != NULL && slot_fit(ch, b, count) != 0) {
        return -1; /* the slot stays marked: read as empty until a push succeeds */
    }
    atomic_store_explicit(&b->count, count, memory_order_release);
    atomic_store_explicit(&b->start, start, memory_order_release);
    _Atomic int64_t *list = atomic_load_explicit(&b->ids, memory_order_relaxed);
    if (ids != NULL) {
        for (int64_t i = 0; i < count; i++) {
            atomic_store_explicit(&list[i], ids[i], memory_order_release);
        }
    }
    atomic_store_explicit(&b->taken, 0, memory_order_release);
    atomic_store_explicit(&b->seq, tail, memory_order_release);
    atomic_store_explicit(&ch->tail, tail + 1, memory_order_release);
    return 0;
}

int64_t client_chain_ahead(const struct client_chain *ch) {
    uint64_t head = atomic_load_explicit(&ch->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&ch->tail, memory_order_acquire);
    int64_t sum = 0;
    for (uint64_t h = head; h < tail; h++) {
        const struct client_block *b = &ch->slot[h % CLIENT_CHAIN_SLOTS];
        int64_t count = atomic_load_explicit(&b->count, memory_order_relaxed);
        int64_t left = count;
        if (h == head) {
            int64_t taken = atomic_load_explicit(&b->taken, memory_order_relaxed);
            left = taken >= count ? 0 : count - taken;
        }
        sum += left;
    }
    return sum;
}

/* Moves the head off block h (used up) when block h+1 is published; 0 when it is not. */
static int advance(struct client_chain *ch, uint64_t h) {
    const struct client_block *next = &ch->slot[(h + 1) % CLIENT_CHAIN_SLOTS];
    if (atomic_load_explicit(&next->seq, memory_order_acquire) != h + 1) {
        return 0;
    }
    atomic_compare_exchange_strong_explicit(&ch->head, &h, h + 1, memory_order_acq_rel,
                                            memory_order_acquire);
    return 1;
}

size_t client_chain_take(struct client_chain *ch, int64_t *out, size_t n) {
    size_t got = 0;
    while (got < n) {
        uint64_t h = atomic_load_explicit(&ch->head, memory_order_acquire);
        struct client_block *b = &ch->slot[h % CLIENT_CHAIN_SLOTS];
        if (atomic_load_explicit(&b->seq, memory_order_acquire) != h) {
            if (atomic_load_explicit(&ch->head, memory_order_acquire) != h) {
                continue; /* this caller's head was old: read it again */
            }
            break; /* nothing published: empty */
        }
        /* Bounded before it becomes a signed step of the block's counter. */
        int64_t want =
            n - got > (size_t)CLIENT_CHAIN_TAKE_MAX ? CLIENT_CHAIN_TAKE_MAX : (int64_t)(n - got);
        int64_t i = atomic_fetch_add_explicit(&b->taken, want, memory_order_acq_rel);
        int64_t count = atomic_load_explicit(&b->count, memory_order_acquire);
        int64_t avail = i >= count ? 0 : count - i;
        if (avail > want) {
            avail = want;
        }
        int64_t start = atomic_load_explicit(&b->start, memory_order_acquire);
        _Atomic int64_t *list = atomic_load_explicit(&b->ids, memory_order_acquire);
        for (int64_t k = 0; k < avail; k++) {
            out[got + (size_t)k] =
                list ? atomic_load_explicit(&list[i + k], memory_order_acquire) : start + i + k;
        }
        /* The seqlock's reader: if the slot was rewritten meanwhile, what was read is not
         * block h's; the indexes taken are dropped (a gap, never a repeat). */
        if (atomic_load_explicit(&b->seq, memory_order_relaxed) != h) {
            continue;
        }
        got += (size_t)avail;
        if (avail < want && !advance(ch, h)) {
            break;
        }
    }
    return got;
}
