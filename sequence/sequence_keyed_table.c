/* The resident keys of keyed sequences: see sequence_keyed_table.h. */
#include "sequence_keyed_table.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TABLE_MIN_SLOTS 1024
#define TABLE_HUGE ((size_t)2 << 20) /* a huge page on x86-64 and arm64 (4K base pages) */

/*
 * Zeroed room for n slots. From TABLE_HUGE bytes on, its own mapping aligned to
 * TABLE_HUGE and marked for transparent huge pages (MADV_HUGEPAGE), so a
 * lookup of a random key among millions costs one cache miss and not a page
 * walk too (docs/keyed-sequences.md, "Memory"); a kernel that gives none
 * serves it with small pages, as before. NULL when out of memory.
 */
static struct sequence_keyed_entry *table_slots_alloc(size_t n) {
    size_t bytes = n * sizeof(struct sequence_keyed_entry);
    if (bytes < TABLE_HUGE) {
        return calloc(n, sizeof(struct sequence_keyed_entry));
    }
    char *map =
        mmap(NULL, bytes + TABLE_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        return NULL;
    }
    size_t head = (TABLE_HUGE - (uintptr_t)map % TABLE_HUGE) % TABLE_HUGE;
    if (head > 0) {
        munmap(map, head);
    }
    munmap(map + head + bytes, TABLE_HUGE - head);
#ifdef MADV_HUGEPAGE
    (void)madvise(map + head, bytes, MADV_HUGEPAGE); /* a hint: small pages work as well */
#endif
    return (struct sequence_keyed_entry *)(void *)(map + head);
}

static void table_slots_free(struct sequence_keyed_entry *slots, size_t n) {
    size_t bytes = n * sizeof(struct sequence_keyed_entry);
    if (bytes < TABLE_HUGE) {
        free(slots);
    } else if (slots != NULL) {
        munmap(slots, bytes);
    }
}

static const char *entry_key(const struct sequence_keyed_entry *e) {
    return e->len > SEQUENCE_KEYED_TABLE_INLINE ? e->key.ptr : e->key.bytes;
}

static unsigned entry_space(const struct sequence_keyed_entry *e) {
    return e->space_ref >> 1;
}

leaf_status_t sequence_keyed_table_init(struct sequence_keyed_table *t, size_t max_keys,
                                        const struct siphash_key *key,
                                        sequence_keyed_evict_fn evict, void *evict_ctx) {
    memset(t, 0, sizeof(*t));
    if (max_keys < 1) {
        return LEAF_EINVAL;
    }
    t->slots = table_slots_alloc(TABLE_MIN_SLOTS);
    if (t->slots == NULL) {
        return LEAF_ENOMEM;
    }
    t->mask = TABLE_MIN_SLOTS - 1;
    t->max_keys = max_keys;
    t->evict = evict;
    t->evict_ctx = evict_ctx;
    if (key != NULL) {
        t->key = *key;
    } else {
        siphash_key_random(&t->key);
    }
    return LEAF_OK;
}

void sequence_keyed_table_free(struct sequence_keyed_table *t) {
    if (t->slots != NULL) {
        for (size_t i = 0; i <= t->mask; i++) {
            if (t->slots[i].last != 0 && t->slots[i].len > SEQUENCE_KEYED_TABLE_INLINE) {
                free(t->slots[i].key.ptr);
            }
        }
    }
    table_slots_free(t->slots, t->slots != NULL ? t->mask + 1 : 0);
    memset(t, 0, sizeof(*t));
}

uint64_t sequence_keyed_table_hash(const struct sequence_keyed_table *t, unsigned space,
                                   const char *key, size_t len) {
    if (len > SEQUENCE_KEYED_TABLE_KEY_MAX) {
        len = SEQUENCE_KEYED_TABLE_KEY_MAX; /* refused by insert anyway */
    }
    /* The key's bytes where they lie (no copy with the space before them: reading words over
     * bytes just written stalls), then the space mixed in by an odd multiplier, a bijection on
     * every low-bit range, so one key in 1024 spaces takes 1024 home slots. */
    return siphash_24(&t->key, key, len) ^ ((uint64_t)space * 0x9e3779b97f4a7c15ULL);
}

void sequence_keyed_table_prefetch(const struct sequence_keyed_table *t, uint64_t hash) {
    /* Relaxed loads: the two may come from either side of a doubling, and any pair is harmless
     * to prefetch (sequence_keyed_table.h); a lookup reads them again under the mutex. */
    const struct sequence_keyed_entry *slots = __atomic_load_n(&t->slots, __ATOMIC_RELAXED);
    size_t mask = __atomic_load_n(&t->mask, __ATOMIC_RELAXED);
    size_t i = (uint32_t)hash & mask;
    __builtin_prefetch(&slots[i]);
    __builtin_prefetch(&slots[(i + 1) & mask]);
}

struct sequence_keyed_entry *sequence_keyed_table_find(struct sequence_keyed_table *t,
                                                       uint64_t hash, unsigned space,
                                                       const char *key, size_t len) {
    uint32_t h = (uint32_t)hash;
    size_t i = h & t->mask;
    uint64_t run = 1;
    for (struct sequence_keyed_entry *e = &t->slots[i]; e->last != 0;
         i = (i + 1) & t->mask, e = &t->slots[i], run++) {
        if (e->hash == h && e->len == len && entry_space(e) == space &&
            memcmp(entry_key(e), key, len) == 0) {
            t->probe_max = run > t->probe_max ? run : t->probe_max;
            return e;
        }
    }
    t->probe_max = run > t->probe_max ? run : t->probe_max;
    return NULL;
}

/* The first empty slot of h's run (the table is never full). */
static size_t table_free_slot(const struct sequence_keyed_table *t, uint32_t h) {
    size_t i = h & t->mask;
    while (t->slots[i].last != 0) {
        i = (i + 1) & t->mask;
    }
    return i;
}

static leaf_status_t table_grow(struct sequence_keyed_table *t) {
    size_t old_slots = t->mask + 1;
    struct sequence_keyed_entry *old = t->slots;
    struct sequence_keyed_entry *fresh = table_slots_alloc(old_slots * 2);
    if (fresh == NULL) {
        return LEAF_ENOMEM;
    }
    /* Atomic: sequence_keyed_table_prefetch() reads both without the mutex. */
    __atomic_store_n(&t->slots, fresh, __ATOMIC_RELAXED);
    __atomic_store_n(&t->mask, old_slots * 2 - 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < old_slots; i++) {
        if (old[i].last != 0) {
            t->slots[table_free_slot(t, old[i].hash)] = old[i];
        }
    }
    table_slots_free(old, old_slots);
    t->hand = 0;
    return LEAF_OK;
}

/* Empties slot i and shifts the rest of its run back, so no run has a hole (Knuth 6.4, R). */
static void table_remove_at(struct sequence_keyed_table *t, size_t i) {
    if (t->slots[i].len > SEQUENCE_KEYED_TABLE_INLINE) {
        t->long_bytes -= t->slots[i].len;
        free(t->slots[i].key.ptr);
    }
    size_t j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        if (t->slots[j].last == 0) {
            break;
        }
        size_t home = t->slots[j].hash & t->mask;
        /* j's entry may fill the hole at i unless its home lies cyclically in (i, j]. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    memset(&t->slots[i], 0, sizeof(t->slots[i]));
    t->count--;
}

/* CLOCK: the first entry past the hand whose reference bit is clear leaves. */
static void table_evict_one(struct sequence_keyed_table *t) {
    for (;;) {
        struct sequence_keyed_entry *e = &t->slots[t->hand];
        if (e->last != 0) {
            if ((e->space_ref & 1) == 0) {
                if (t->evict != NULL) {
                    t->evict(t->evict_ctx, entry_space(e), e->section, e->last);
                }
                t->evictions++;
                table_remove_at(t, t->hand); /* the hand looks at what shifted in next */
                return;
            }
            e->space_ref &= (uint16_t)~1u;
        }
        t->hand = (t->hand + 1) & t->mask;
    }
}

leaf_status_t sequence_keyed_table_insert(struct sequence_keyed_table *t, uint64_t hash,
                                          unsigned space, unsigned section, const char *key,
                                          size_t len, int64_t last,
                                          struct sequence_keyed_entry **out) {
    if (len < 1 || len > SEQUENCE_KEYED_TABLE_KEY_MAX || space >= SEQUENCE_KEYED_TABLE_SPACES ||
        section > 255 || last < 1) {
        return LEAF_EINVAL;
    }
    if (t->count >= t->max_keys) {
        table_evict_one(t);
    }
    if ((t->mask + 1) / 4 * 3 < t->count + 1 && table_grow(t) != LEAF_OK) {
        return LEAF_ENOMEM;
    }
    struct sequence_keyed_entry e = {
        .last = last,
        .hash = (uint32_t)hash,
        .space_ref = (uint16_t)(space << 1 | 1u),
        .section = (uint8_t)section,
        .len = (uint8_t)len,
    };
    if (len > SEQUENCE_KEYED_TABLE_INLINE) {
        e.key.ptr = malloc(len);
        if (e.key.ptr == NULL) {
            return LEAF_ENOMEM;
        }
        memcpy(e.key.ptr, key, len);
        t->long_bytes += len;
    } else {
        memcpy(e.key.bytes, key, len);
    }
    size_t i = table_free_slot(t, e.hash);
    t->slots[i] = e;
    t->count++;
    *out = &t->slots[i];
    return LEAF_OK;
}

size_t sequence_keyed_table_bytes(const struct sequence_keyed_table *t) {
    return (t->mask + 1) * sizeof(*t->slots) + t->long_bytes;
}
