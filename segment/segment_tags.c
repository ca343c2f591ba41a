#include "segment_tags.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define SEGMENT_TAGS_INITIAL_SLOTS 64

leaf_status_t segment_tags_init(struct segment_tags *m) {
    memset(m, 0, sizeof(*m));
    m->slots = calloc(
        SEGMENT_TAGS_INITIAL_SLOTS,
        sizeof(
            struct segment_tag *)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    if (m->slots == NULL) {
        return LEAF_ENOMEM;
    }
    m->nslots = SEGMENT_TAGS_INITIAL_SLOTS;
    return LEAF_OK;
}

static void tag_free(struct segment_tag *t) {
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void segment_tags_free(struct segment_tags *m) {
    for (size_t i = 0; i < m->nslots; i++) {
        struct segment_tag *t = m->slots[i];
        while (t != NULL) {
            struct segment_tag *next = t->chain;
            tag_free(t);
            t = next;
        }
    }
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

struct segment_tag *segment_tags_find(const struct segment_tags *m, const char *name, size_t len) {
    uint64_t h = leaf_hash(name, len);
    for (struct segment_tag *t = m->slots[h % m->nslots]; t != NULL; t = t->chain) {
        if (t->hash == h && t->name_len == len && memcmp(t->name, name, len) == 0) {
            return t;
        }
    }
    return NULL;
}

/* Doubles the slot array once the chains get long; failure only keeps them long. */
static void tags_grow(struct segment_tags *m) {
    size_t n = m->nslots * 2;
    struct segment_tag **slots = calloc(
        n,
        sizeof(
            struct segment_tag *)); /* NOLINT(bugprone-sizeof-expression): an array of pointers */
    if (slots == NULL) {
        return;
    }
    for (size_t i = 0; i < m->nslots; i++) {
        struct segment_tag *t = m->slots[i];
        while (t != NULL) {
            struct segment_tag *next = t->chain;
            t->chain = slots[t->hash % n];
            slots[t->hash % n] = t;
            t = next;
        }
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = n;
}

struct segment_tag *segment_tags_add(struct segment_tags *m, const char *name, size_t len,
                                     int *created) {
    *created = 0;
    if (len == 0 || len > VALIDATE_TAG_MAX) {
        return NULL;
    }
    struct segment_tag *t = segment_tags_find(m, name, len);
    if (t != NULL) {
        return t;
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL || pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    memcpy(t->name, name, len);
    t->name_len = len;
    t->hash = leaf_hash(name, len);
    t->state = SEGMENT_TAG_PENDING;
    t->epoch = ++m->next_epoch;
    t->db_failed_ms = -1;
    segment_buffer_init(&t->buf, 1);
    if (m->count >= m->nslots) {
        tags_grow(m);
    }
    t->chain = m->slots[t->hash % m->nslots];
    m->slots[t->hash % m->nslots] = t;
    m->count++;
    *created = 1;
    return t;
}

void segment_tags_activate(struct segment_tags *m, struct segment_tag *t, int64_t step) {
    if (t->state != SEGMENT_TAG_ACTIVE) {
        t->state = SEGMENT_TAG_ACTIVE;
        t->epoch = ++m->next_epoch;
        int fetching = t->buf.fetching; /* a stale fetch may still be in flight */
        segment_buffer_init(&t->buf, step);
        t->buf.fetching = fetching;
        t->db_failed_ms = -1; /* the row was just read: no circuit breaker from before */
    } else {
        segment_buffer_set_min_step(&t->buf, step);
    }
    t->seen_gen = m->gen;
}

void segment_tags_deactivate(struct segment_tags *m, struct segment_tag *t) {
    if (t->state != SEGMENT_TAG_ABSENT) {
        t->epoch = ++m->next_epoch;
    }
    t->state = SEGMENT_TAG_ABSENT;
    segment_buffer_clear(&t->buf);
}

uint64_t segment_tags_next_gen(struct segment_tags *m) {
    return ++m->gen;
}

static int tags_removable(const struct segment_tag *t) {
    return t->state != SEGMENT_TAG_ACTIVE && !t->lookup_in_flight && !t->buf.fetching &&
           t->waiters.head == NULL;
}

int segment_tags_remove(struct segment_tags *m, struct segment_tag *t) {
    if (!tags_removable(t)) {
        return 0;
    }
    for (struct segment_tag **pp = &m->slots[t->hash % m->nslots]; *pp != NULL;
         pp = &(*pp)->chain) {
        if (*pp == t) {
            *pp = t->chain;
            tag_free(t);
            m->count--;
            return 1;
        }
    }
    return 0;
}

/* Unlinks and frees every inactive tag no lookup or fetch is out for; returns how many. */
static size_t tags_sweep(struct segment_tags *m) {
    size_t freed = 0;
    for (size_t i = 0; i < m->nslots; i++) {
        struct segment_tag **pp = &m->slots[i];
        while (*pp != NULL) {
            struct segment_tag *t = *pp;
            if (tags_removable(t)) {
                *pp = t->chain;
                tag_free(t);
                m->count--;
                freed++;
            } else {
                pp = &t->chain;
            }
        }
    }
    return freed;
}

/* Ends refresh gen: every active tag not seen since gen becomes absent; returns how many. */
static size_t tags_sync_end(struct segment_tags *m, uint64_t gen) {
    size_t gone = 0;
    for (size_t i = 0; i < m->nslots; i++) {
        for (struct segment_tag *t = m->slots[i]; t != NULL; t = t->chain) {
            if (t->state == SEGMENT_TAG_ACTIVE && t->seen_gen < gen) {
                segment_tags_deactivate(m, t);
                gone++;
            }
        }
    }
    tags_sweep(m);
    return gone;
}

size_t segment_tags_sync_known(struct segment_tags *m, const struct segment_known *k) {
    uint64_t gen = segment_known_gen(k);
    for (size_t i = 0; i < m->nslots; i++) {
        for (struct segment_tag *t = m->slots[i]; t != NULL; t = t->chain) {
            int64_t step;
            if (segment_known_find(k, t->name, t->name_len, &step)) {
                segment_tags_activate(m, t, step);
                if (t->seen_gen < gen) {
                    t->seen_gen = gen;
                }
            }
        }
    }
    return tags_sync_end(m, gen);
}
