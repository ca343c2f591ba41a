#include "net_peercount.h"

#include <stdlib.h>

leaf_status_t net_peercount_init(struct net_peercount *pc, size_t max_addresses, int64_t limit,
                                 int64_t reserve) {
    size_t slots = 16;
    while (slots < max_addresses * 2) { /* at most half full: short probe runs */
        slots *= 2;
    }
    pc->slots = calloc(slots, sizeof(*pc->slots));
    if (pc->slots == NULL) {
        return LEAF_ENOMEM;
    }
    pc->mask = slots - 1;
    pc->limit = limit < 1 ? 1 : limit;
    pc->shared = reserve > 0 ? (int64_t)max_addresses - reserve : INT64_MAX;
    pc->total = 0;
    siphash_key_random(&pc->key);
    pthread_mutex_init(&pc->mu, NULL);
    return LEAF_OK;
}

void net_peercount_destroy(struct net_peercount *pc) {
    if (pc->slots != NULL) {
        pthread_mutex_destroy(&pc->mu);
        free(pc->slots);
        pc->slots = NULL;
    }
}

static uint64_t net_peercount_hash(const struct net_peercount *pc, const void *addr, size_t n) {
    uint64_t h = siphash_24(&pc->key, addr, n);
    return h != 0 ? h : 1;
}

/* The slot holding h, or the free slot where it would go; SIZE_MAX when neither (full). Under mu.
 */
static size_t net_peercount_find(const struct net_peercount *pc, uint64_t h) {
    size_t i = (size_t)h & pc->mask;
    for (size_t probes = 0; probes <= pc->mask; probes++, i = (i + 1) & pc->mask) {
        if (pc->slots[i].hash == h || pc->slots[i].hash == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

uint64_t net_peercount_take(struct net_peercount *pc, const void *addr, size_t n) {
    uint64_t h = net_peercount_hash(pc, addr, n);
    pthread_mutex_lock(&pc->mu);
    size_t i = net_peercount_find(pc, h);
    int64_t held = i != SIZE_MAX && pc->slots[i].hash == h ? pc->slots[i].n : 0;
    int ok =
        i != SIZE_MAX && held < pc->limit && (pc->total < pc->shared || held < NET_PEERCOUNT_FEW);
    if (ok) {
        pc->slots[i].hash = h;
        pc->slots[i].n++;
        pc->total++;
    }
    pthread_mutex_unlock(&pc->mu);
    return ok ? h : 0;
}

/* 1 when the entry at j, whose home slot is k, may move back to the hole at i. */
static int net_peercount_may_fill(size_t i, size_t j, size_t k) {
    return i <= j ? (k <= i || k > j) : (k <= i && k > j);
}

/* Empties slot i and moves later entries of its run back, so no lookup meets a hole early. */
static void net_peercount_free_slot(struct net_peercount *pc, size_t i) {
    for (size_t j = (i + 1) & pc->mask; pc->slots[j].hash != 0; j = (j + 1) & pc->mask) {
        if (net_peercount_may_fill(i, j, (size_t)pc->slots[j].hash & pc->mask)) {
            pc->slots[i] = pc->slots[j];
            i = j;
        }
    }
    pc->slots[i] = (struct net_peercount_slot){0, 0};
}

void net_peercount_release(struct net_peercount *pc, uint64_t h) {
    if (h == 0) {
        return;
    }
    pthread_mutex_lock(&pc->mu);
    size_t i = net_peercount_find(pc, h);
    if (i != SIZE_MAX && pc->slots[i].hash == h) {
        pc->total--;
        if (--pc->slots[i].n <= 0) {
            net_peercount_free_slot(pc, i);
        }
    }
    pthread_mutex_unlock(&pc->mu);
}
