/*
 * Sequences, the floor every other sequence file stands on: the table of
 * sequences (find, add, grow), the dirty list the control thread works
 * through and waking every waiter. Calls nothing above it.
 * Everything here runs with the service's lock held.
 * Layer: the node (src/node/sequence), the floor of the sequence room.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "sequence_keyslot.h"
#include "sequence_service_state.h"

/* The Redis Cluster slot of the RESP key "sequence:<name>" (docs/cluster.md). */
int sequence_service_table_slot(const char *name, size_t len) {
    char key[VALIDATE_TAG_MAX + 16];
    int n = snprintf(key, sizeof(key), "sequence:%.*s",
                     (int)(len > VALIDATE_TAG_MAX ? VALIDATE_TAG_MAX : len), name);
    return (int)sequence_keyslot(key, n > 0 ? (size_t)n : 0);
}

/* ---- the table of sequences (lock held) ---------------------------------- */

static struct seq_entry *entry_find(struct sequence_service *svc, const char *name, size_t len) {
    struct seq_entry *e = svc->slots[leaf_hash(name, len) & (svc->nslots - 1)];
    while (e != NULL && !(e->len == len && memcmp(e->name, name, len) == 0)) {
        e = e->next;
    }
    return e;
}

static void table_grow(struct sequence_service *svc) {
    size_t n = svc->nslots * 2;
    struct seq_entry **slots = calloc(n, sizeof(struct seq_entry *)); /* NOLINT: pointer array */
    if (slots == NULL) {
        return; /* longer chains, still correct */
    }
    for (size_t i = 0; i < svc->nslots; i++) {
        struct seq_entry *e = svc->slots[i];
        while (e != NULL) {
            struct seq_entry *next = e->next;
            size_t j = leaf_hash(e->name, e->len) & (n - 1);
            e->next = slots[j];
            slots[j] = e;
            e = next;
        }
    }
    free(svc->slots);
    svc->slots = slots;
    svc->nslots = n;
}

static struct seq_entry *entry_add(struct sequence_service *svc, const char *name, size_t len) {
    if (svc->count >= SEQ_MAX_NAMES || len > VALIDATE_TAG_MAX) {
        return NULL;
    }
    if (svc->count == svc->idx_cap) {
        size_t cap = svc->idx_cap ? svc->idx_cap * 2 : 64;
        struct seq_entry **a = realloc(
            svc->by_idx,
            cap * sizeof(struct seq_entry *)); /* NOLINT(bugprone-sizeof-expression): pointers */
        if (a == NULL) {
            return NULL;
        }
        svc->by_idx = a;
        svc->idx_cap = cap;
    }
    struct seq_entry *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return NULL;
    }
    memcpy(e->name, name, len);
    e->len = len;
    e->idx = (uint32_t)svc->count;
    e->slot = sequence_service_table_slot(name, len);
    sequence_state_init(&e->st, svc->cfg->sequence_batch);
    svc->by_idx[svc->count++] = e;
    size_t j = leaf_hash(name, len) & (svc->nslots - 1);
    e->next = svc->slots[j];
    svc->slots[j] = e;
    if (svc->count > svc->nslots) {
        table_grow(svc);
    }
    return e;
}

struct seq_entry *sequence_service_table_find(struct sequence_service *svc, const char *name,
                                              size_t len) {
    return entry_find(svc, name, len);
}

struct seq_entry *sequence_service_table_get(struct sequence_service *svc, const char *name,
                                             size_t len) {
    struct seq_entry *e = entry_find(svc, name, len);
    return e != NULL ? e : entry_add(svc, name, len);
}

/* Asks the control thread to look at e (lock held). */
void sequence_service_table_mark_dirty(struct sequence_service *svc, struct seq_entry *e) {
    if (e->dirty) {
        return;
    }
    if (svc->ndirty == svc->dirty_cap) {
        size_t cap = svc->dirty_cap ? svc->dirty_cap * 2 : 64;
        struct seq_entry **a = realloc(
            svc->dirty,
            cap * sizeof(struct seq_entry *)); /* NOLINT(bugprone-sizeof-expression): pointers */
        if (a == NULL) {
            return; /* the cron's next pass over waiting entries picks it up */
        }
        svc->dirty = a;
        svc->dirty_cap = cap;
    }
    svc->dirty[svc->ndirty++] = e;
    e->dirty = 1;
}

void sequence_service_table_wake_all(struct sequence_service *svc) {
    for (size_t i = 0; i < svc->count; i++) {
        leaf_wait_wake_all(&svc->by_idx[i]->waiters);
    }
    /* and keyed requests: a lost or won term, slots moved (sequence_service_keyed.c) */
    for (int i = 0; svc->keyed.core != NULL && i < svc->keyed.core->nspaces; i++) {
        leaf_wait_wake_all(&svc->keyed.waiters[i]);
    }
}

enum sequence_result sequence_service_table_result(enum zk_result r) {
    switch (r) {
    case ZK_RESULT_OK: return SEQUENCE_RESULT_OK;
    case ZK_RESULT_BADVERSION: return SEQUENCE_RESULT_BADVERSION;
    case ZK_RESULT_NONODE: return SEQUENCE_RESULT_NONODE;
    case ZK_RESULT_EXISTS: return SEQUENCE_RESULT_EXISTS;
    case ZK_RESULT_UNKNOWN: return SEQUENCE_RESULT_UNKNOWN;
    default: return SEQUENCE_RESULT_FAILED;
    }
}
