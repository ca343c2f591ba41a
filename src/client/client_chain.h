#ifndef CLIENT_CHAIN_H
#define CLIENT_CHAIN_H

/*
 * One key's chain of ranges: a ring of blocks that the callers take IDs
 * from and the refill thread fills ahead of them. A block is a range of
 * consecutive IDs (segment) or a list (a snowflake batch).
 *
 * Threads: any number of callers take (client_chain_take*), lock-free; one
 * refill thread pushes (client_chain_push) and reads the level. A caller's
 * take is one atomic add on the current block's counter (plus a load of the
 * head and of the block's sequence number); a caller that finds the block
 * used up moves the head to the next published block with one compare-and-
 * swap. Nothing is freed while the chain lives: a slot is rewritten only for
 * the block SLOTS numbers later, and a caller that read an old head sees the
 * slot's sequence number changed (a seqlock) and drops what it took, a gap.
 * So an index is handed out once, never twice. The seqlock is written without
 * fences (which ThreadSanitizer cannot follow): the writer marks the slot, then
 * stores each field with release; the reader loads each field with acquire,
 * then the sequence number again. On x86 both are plain moves.
 *
 * A listed block's array is allocated at its first push, as large as that batch (at least
 * CLIENT_CHAIN_LIST_FIRST), and replaced by a larger one when a later batch does not fit: a key
 * of small batches holds small arrays (an idle snowflake key 16 x 1024 IDs, 128 KiB, not 16 x
 * 10000). A replaced array is kept until the chain is freed, since a caller that read the old
 * pointer may still read it (and then drops what it read: the slot's sequence number changed).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CLIENT_CHAIN_SLOTS 16
/* The most IDs of a listed block (leafd's largest batch: ?count= up to 10000). */
#define CLIENT_CHAIN_LIST_MAX 10000
/* A listed block's first array, in IDs; it doubles (up to LIST_MAX) when a batch needs more. */
#define CLIENT_CHAIN_LIST_FIRST 256
/* Arrays replaced over a chain's life: at most 7 growths per slot (256 -> ... -> 10000). */
#define CLIENT_CHAIN_RETIRED_MAX (CLIENT_CHAIN_SLOTS * 8)
/* The most IDs one take asks a block for: a count is never a negative step of a counter. */
#define CLIENT_CHAIN_TAKE_MAX ((int64_t)1 << 30)
/* A slot being rewritten holds this sequence number. */
#define CLIENT_CHAIN_WRITING UINT64_MAX

struct client_block {
    _Atomic uint64_t seq;  /* the block number held (or CLIENT_CHAIN_WRITING) */
    _Atomic int64_t taken; /* indexes handed out (may run past count) */
    _Atomic int64_t count; /* IDs in the block */
    _Atomic int64_t start; /* a range: its first ID */
    /* A list (NULL for ranges, and for a listed slot before its first push): replaced only by
     * the refill while the slot is marked WRITING; the old array stays allocated. */
    _Atomic int64_t *_Atomic ids;
    int64_t cap;       /* IDs the array holds; the refill's own */
    char pad[64 - 48]; /* one cache line per slot: callers of two blocks never share one */
};

struct client_chain {
    _Atomic uint64_t head; /* the block callers take from; written by callers (CAS) */
    char pad1[56];
    _Atomic uint64_t tail; /* the next block number to publish; written by the refill */
    char pad2[56];
    struct client_block slot[CLIENT_CHAIN_SLOTS];
    /* The refill's own: */
    int listed;
    int n_retired;
    _Atomic int64_t *retired[CLIENT_CHAIN_RETIRED_MAX]; /* replaced arrays, freed with the chain */
};

/* listed: blocks are lists of up to CLIENT_CHAIN_LIST_MAX IDs (allocated as pushed). 0. */
int client_chain_init(struct client_chain *ch, int listed);
void client_chain_free(struct client_chain *ch);

/* Drops every published block (their IDs are a gap) and whatever push was under way: a child of
 * fork() does it before anything else touches the chain (client.c), so no thread takes or pushes
 * meanwhile. */
void client_chain_drop(struct client_chain *ch);

/* Refill side: 1 when a block can be pushed (a slot is free). */
int client_chain_room(const struct client_chain *ch);

/* Refill side: publishes a range start..start+count-1 (ids NULL) or a list of 1 to
 * CLIENT_CHAIN_LIST_MAX IDs. 0, or -1 when the list's array cannot be allocated (nothing
 * published). */
int client_chain_push(struct client_chain *ch, int64_t start, const int64_t *ids, int64_t count);

/* Refill side: the IDs published and not yet taken. */
int64_t client_chain_ahead(const struct client_chain *ch);

/* Caller side: up to n IDs into out (ascending for ranges); the number taken, 0 when the chain
 * is empty. Lock-free; no system call, no allocation. */
size_t client_chain_take(struct client_chain *ch, int64_t *out, size_t n);

/* Caller side: one ID from the head's block, inlined into the caller: the block has it in nearly
 * every call. 1, or 0 when it does not (used up, being rewritten, the chain empty): then
 * client_chain_take(), kept out of the caller's fast path, moves on or answers empty. */
static inline size_t client_chain_take1(struct client_chain *ch, int64_t *out) {
    uint64_t h = atomic_load_explicit(&ch->head, memory_order_acquire);
    struct client_block *b = &ch->slot[h % CLIENT_CHAIN_SLOTS];
    if (atomic_load_explicit(&b->seq, memory_order_acquire) == h) {
        int64_t i = atomic_fetch_add_explicit(&b->taken, 1, memory_order_acq_rel);
        if (i < atomic_load_explicit(&b->count, memory_order_acquire)) {
            _Atomic int64_t *list = atomic_load_explicit(&b->ids, memory_order_acquire);
            int64_t id = list ? atomic_load_explicit(&list[i], memory_order_acquire)
                              : atomic_load_explicit(&b->start, memory_order_acquire) + i;
            if (atomic_load_explicit(&b->seq, memory_order_relaxed) == h) {
                *out = id;
                return 1;
            }
        }
    }
    return 0;
}

#endif
