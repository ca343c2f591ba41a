#ifndef LEAF_SEQUENCE_KEYED_TABLE_H
#define LEAF_SEQUENCE_KEYED_TABLE_H

/*
 * The resident keys of keyed sequences (docs/keyed-sequences.md, "Memory"):
 * one open-addressing table for every space, of fixed 32-byte entries, each
 * a key's last issued value, its space, its section and its key bytes. Pure
 * code (libc and src/base only), used by sequence_keyed.c.
 *
 * Layout. Linear probing over a power-of-two array, at most 3/4 full; a
 * removed entry is closed by backward shifting (no tombstones), so a lookup
 * only ever walks the run of its own neighbours. An entry keeps the low 32
 * bits of the key's hash: they give its home slot (so a rehash needs no new
 * hash, up to 2^32 slots) and filter comparisons. A key of up to 16 bytes
 * lives inline; a longer one (up to SEQUENCE_KEYED_TABLE_KEY_MAX bytes) is one
 * malloc of its own length, counted in long_bytes.
 *
 * Memory per resident key of up to 16 bytes: 32 bytes / load; the load stays
 * between 3/8 (just after a doubling) and 3/4, so 43 to 86 bytes a key, all
 * empty slots included. A doubling rehashes every entry at once, under the
 * sequence service's mutex (docs/keyed-sequences.md, "Memory", has the
 * measured figures).
 *
 * Hash flooding. The hash is SipHash-2-4 (src/base/siphash.h) of the key
 * under a per-process random key, the space mixed in after it, so a client
 * cannot choose keys that share a home slot: the expected probe run at load 3/4 is about 8.5
 * slots for a miss and 2.5 for a hit, whatever keys arrive (the longest run
 * measured: 176 slots at a million keys, 239 at ten million). Without the
 * hash key nothing better than random keys can be sent.
 *
 * Eviction (CLOCK, second chance): every lookup that issues sets the entry's
 * reference bit; when the table holds max_keys entries and a new key comes,
 * a hand walks the slots, clearing set bits, and the first entry found clear
 * leaves. One eviction costs O(1) amortised (each bit the hand clears was
 * set by one issue) and at most one sweep of the table in the worst case.
 * The table hands each evicted entry's space, section and last value to the
 * caller's evict function, which raises that section's floor
 * (sequence_keyed.h).
 *
 * Ownership: owned by its struct sequence_keyed, under the sequence
 * service's one mutex (sequence/sequence_keyed.h), but for two reads that
 * need no mutex: sequence_keyed_table_hash() reads only the hash key, set at
 * init and never changed, and sequence_keyed_table_prefetch() reads slots and
 * mask (stored atomically by a doubling) only to prefetch, which never faults.
 */
#include <stddef.h>
#include <stdint.h>

#include "siphash.h"
#include "status.h"

#define SEQUENCE_KEYED_TABLE_KEY_MAX 200
#define SEQUENCE_KEYED_TABLE_INLINE 16
#define SEQUENCE_KEYED_TABLE_SPACES 32768 /* space indexes 0..32767 (15 bits) */

/* One resident key; last == 0 marks an empty slot (a resident key's first ID is >= 1). */
struct sequence_keyed_entry {
    int64_t last;       /* the last value issued to this key */
    uint32_t hash;      /* the low 32 bits of the key's hash: its home slot */
    uint16_t space_ref; /* space index << 1 | the CLOCK reference bit */
    uint8_t section;    /* 0..255 (sequence_keyed.h) */
    uint8_t len;        /* key bytes, 1..SEQUENCE_KEYED_TABLE_KEY_MAX */
    union {
        char bytes[SEQUENCE_KEYED_TABLE_INLINE]; /* len <= 16 */
        char *ptr;                               /* len > 16: malloc'd, len bytes */
    } key;
};

/* Called for each entry that leaves by eviction, before it is removed. */
typedef void (*sequence_keyed_evict_fn)(void *ctx, unsigned space, unsigned section, int64_t last);

/* Owned as said above. */
struct sequence_keyed_table {
    struct sequence_keyed_entry *slots; /* stored atomically (sequence_keyed_table_prefetch) */
    size_t mask;                        /* slots - 1; stored as slots is */
    size_t count;                       /* entries in use */
    size_t max_keys;                    /* at most this many entries; then CLOCK evicts */
    size_t hand;                        /* the CLOCK hand */
    size_t long_bytes;                  /* bytes malloc'd for keys over 16 bytes */
    struct siphash_key key;
    sequence_keyed_evict_fn evict;
    void *evict_ctx;
    uint64_t evictions;
    uint64_t probe_max; /* the longest probe run a lookup walked (slots) */
};

/*
 * An empty table of at most max_keys (>= 1) entries; key NULL draws a random
 * hash key (tests inject one). LEAF_ENOMEM, LEAF_EINVAL.
 */
leaf_status_t sequence_keyed_table_init(struct sequence_keyed_table *t, size_t max_keys,
                                        const struct siphash_key *key,
                                        sequence_keyed_evict_fn evict, void *evict_ctx);
void sequence_keyed_table_free(struct sequence_keyed_table *t);

/* The hash of (space, key) under the table's key; needs no mutex (above). */
uint64_t sequence_keyed_table_hash(const struct sequence_keyed_table *t, unsigned space,
                                   const char *key, size_t len);

/*
 * Starts loading the home slot of this hash and the slot after it into the
 * cache, so a lookup that follows finds them there: at a million keys the
 * table is 64 MB and a lookup is a cache miss. Needs no mutex (above): a
 * doubling in between makes it load a slot that is no longer the home slot
 * (or memory since freed, which a prefetch may name), never anything wrong.
 */
void sequence_keyed_table_prefetch(const struct sequence_keyed_table *t, uint64_t hash);

/* The entry of (space, key) with this hash, or NULL. The pointer lives until the next insert. */
struct sequence_keyed_entry *sequence_keyed_table_find(struct sequence_keyed_table *t,
                                                       uint64_t hash, unsigned space,
                                                       const char *key, size_t len);

/*
 * Adds (space, key) with this hash, which must not be resident, with last
 * value `last` (>= 1) and its reference bit set; when the table is full an
 * older entry is evicted first (through the evict function). *out: the new
 * entry. LEAF_ENOMEM leaves the table as it was (an eviction may have
 * happened), LEAF_EINVAL for a bad argument.
 */
leaf_status_t sequence_keyed_table_insert(struct sequence_keyed_table *t, uint64_t hash,
                                          unsigned space, unsigned section, const char *key,
                                          size_t len, int64_t last,
                                          struct sequence_keyed_entry **out);

/* Bytes the table holds: its slots and its long keys. */
size_t sequence_keyed_table_bytes(const struct sequence_keyed_table *t);

#endif
