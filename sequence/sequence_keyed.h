#ifndef LEAF_SEQUENCE_KEYED_H
#define LEAF_SEQUENCE_KEYED_H

/*
 * Keyed sequences, the pure core (docs/keyed-sequences.md): a keyed space is
 * a family of sequences created on first use, one strictly increasing
 * sequence per key, for millions of keys. Pure code (libc and src/base only):
 * every decision is a function of the state and its inputs, times are passed
 * in, and every piece of I/O is handed out as a struct sequence_keyed_action
 * for the glue to perform and feed back with sequence_keyed_done(), as
 * sequence_state.h does for sequences. Unit-tested in
 * tests/unit/test_sequence_keyed.c with a fake store that loses writes.
 *
 * The promise (docs/keyed-sequences.md, "The promise"): per key, an ID
 * returned after another of the same key was returned, to anyone by any node,
 * is larger; gaps allowed, repeats never. A key's first ID is >= 1.
 *
 * Sections. A key's section is the Redis Cluster slot (sequence_keyslot.h)
 * of its RESP key "keyed:<space>:<key>" divided by 64: SEQUENCE_KEYED_SECTIONS
 * (256) sections per space, each 64 whole slots, so hash tags keep keys in one
 * section and a section never splits a slot. The keys of a section share one
 * persisted max, /leafd/{leaf.name}/keyed/{space}/{section} holding
 * {"max":M} (sequence_record.h): every ID ever issued to a key of the section
 * is <= M. ZooKeeper holds no node per key. Why 256: a cold start (a new
 * owner, a million keys arriving at once) costs one write per section touched,
 * at most 256 per space, under the 1,000 the promise allows; more sections
 * would cost more writes at every takeover, fewer would make more hot keys
 * share a max with a slow key, whose jump at failover is the section's
 * spread (below).
 *
 * Per section this owner keeps (struct sequence_keyed_section):
 *   acked  the max ZooKeeper acknowledged to this owner: read at its start, or
 *          written by it since; nothing above it is issued;
 *   floor  every key of the section that is NOT resident here (never seen, or
 *          evicted) has last value <= floor: at takeover the max read, on an
 *          eviction max(floor, the key's last), on any later read max(floor,
 *          the max read);
 *   base   the max read at the section's latest start: a resident key's next
 *          value is max(last, base) + 1, so a key this owner knew before the
 *          section left and came back starts above whatever another owner
 *          issued meanwhile (the glue need not scan the table at takeover);
 *   high   the largest value issued in the section by this owner.
 * Issuing for key k, count n: next = max(k's last, base) + 1 when k is
 * resident, else floor + 1 (and k becomes resident); the IDs next .. next+n-1
 * are issued only when next + n - 1 <= acked, else the caller parks and the
 * section asks a raise to max(high, floor, needed) + step. A raise is also
 * asked ahead when acked - max(high, floor) falls under step / 2, once the
 * section issued since its start (a start alone writes nothing, so a takeover
 * writes only the sections asked for). New keys cost no write: a million new
 * keys of one section all start at floor + 1.
 *
 * Writes are conditional (the version read or last written), at most one in
 * flight per section. A refused write (bad version, no node), or one whose
 * outcome is unknown, reads the section again and applies
 * sequence_keyed_judge(): a stored max at or above acked is adopted (another
 * owner of the same section raised it, or our own write landed): its version
 * is taken and the floor raised to it, so the next raise starts above it; a
 * stored max BELOW acked means someone lowered it (an operator restore): the
 * section is fenced and issues nothing until the glue starts it again, which
 * starts above max(stored, high, floor).
 *
 * Straddling owners: shard ranges (sequence_shard.h) are arbitrary, so two
 * owners may each own slots of one section and raise the same node. That is
 * safe because the persisted max only goes up, each owner issues only its
 * own keys from its own resident values and floor, and two rules hold:
 * - an owner issues only up to a max ITS OWN write made (acked is not raised
 *   to an adopted max), because the other owner may give its raise back;
 * - every read raises the reader's floor to the stored max, and a giveback
 *   writes at least the floor, so a giveback never goes under a max another
 *   owner wrote before it (conditional writes make every owner read the
 *   other's writes before its own next one), hence never under a value that
 *   owner may have issued.
 *
 * Takeover. A section is started (sequence_keyed_section_start()) when this
 * owner gains it, or gains any slot of it while serving others of it: it
 * reads (M, version) and serves from base = floor = max(M, high, floor),
 * after its first raise is acknowledged. The glue starts a section only after
 * the previous owner's lease ran out (docs/cluster.md, "Sequences"), as it
 * does for sequences.
 *
 * Failover cost: a new owner reads a section's M and starts every key of it
 * at M + 1, so a key whose last value was c jumps by M + 1 - c. The last raise
 * asked max(high, floor, needed) + step, so M is at most `step` (plus the count
 * of a request parked then) past its section's highest key, or past the max
 * the previous owner started from when it issued nothing in the section:
 * each takeover in a row without an ID in between adds at most one step.
 *
 * Eviction (sequence_keyed_table.h, CLOCK): the table holds at most max_keys
 * resident keys (every space together); past it the coldest leave, each
 * raising its section's floor to its last value. It costs no write (a key's
 * last <= acked, so the floor it leaves does not pass acked). A key that
 * comes back starts at floor + 1, above its old value; the cost is the jump:
 * a returning key starts past the largest value of any key of its section
 * evicted before it.
 *
 * Giveback (sequence_keyed_giveback()): at a graceful hand-over of a whole
 * section the owner stops it and writes the max back down to max(high, floor)
 * (never lower than any value issued, here or, by the floor rule, by a
 * straddling owner), conditional on its version, so the next owner's keys
 * jump less, as sequences give back their unused batch. A section that keeps
 * some of its slots here is not given back: it goes on serving them.
 *
 * Liveness: issuing checks the lease as sequence_state.h does (primary, the
 * section started in the current term, sequence_lease_live()); after a lapse
 * in the same session each section proves itself with a write before it
 * issues again, and a definite answer to a write renews the lease.
 *
 * Memory: a resident key of up to 16 bytes takes one 32-byte entry in a
 * table that stays 3/8 to 3/4 full: 43 to 86 bytes a key, empty slots
 * included (measured: 67 bytes at a million keys, 54 at ten million); a
 * longer key adds its length and malloc's overhead. A space takes
 * SEQUENCE_KEYED_SECTIONS sections (about 27 KB), so SEQUENCE_KEYED_MAX_SPACES
 * (1024) spaces take at most about 27 MB and 262,144 ZooKeeper nodes when
 * every section was written: the bound keeps the tree and the per-space
 * metrics small while leaving room for one space per application.
 *
 * Ownership: a struct sequence_keyed, its table, spaces and sections, are
 * owned by the sequence service and every call is made under its one mutex,
 * as sequence_state.h says for sequences, but for sequence_keyed_space_find()
 * and sequence_keyed_prepare(), which read only what never changes once
 * published (each says why); ZooKeeper completions reach it through the
 * zk_session event queue.
 *
 * Call order for the glue:
 *   start-up      sequence_keyed_new(); sequence_keyed_space_add() per space definition.
 *   gained        sequence_keyed_section_start() for each section with a slot gained
 *                 (the lease's term must be current): at once for a section serving
 *                 here (its resident keys must not outrun the new slots' past), at once
 *                 or lazily at its first request for a section not started here.
 *   lost          sequence_keyed_section_stop(), or sequence_keyed_giveback() and perform
 *                 its write, for a section whose slots all left; nothing for a section
 *                 that keeps some slots here (requests for the lost slots are redirected).
 *   request       sequence_keyed_prepare() (before the mutex), sequence_keyed_issue();
 *                 LEAF_EAGAIN: park the request, then
 *                 sequence_keyed_action() until it returns 0, performing each.
 *   completion    sequence_keyed_done(), retry the parked requests, sequence_keyed_action().
 *   cron          sequence_keyed_action() until 0 (retries after failures).
 */
#include <stddef.h>
#include <stdint.h>

#include "sequence_keyed_table.h"
#include "sequence_state.h"
#include "siphash.h"
#include "status.h"

#define SEQUENCE_KEYED_SECTIONS 256
#define SEQUENCE_KEYED_SLOTS_PER_SECTION 64 /* SEQUENCE_KEYSLOTS / SEQUENCE_KEYED_SECTIONS */
#define SEQUENCE_KEYED_MAX_SPACES 1024
#define SEQUENCE_KEYED_NAME_MAX 64 /* a space's name: 1-64 bytes of [A-Za-z0-9._-] */
#define SEQUENCE_KEYED_KEY_MAX SEQUENCE_KEYED_TABLE_KEY_MAX /* a key: 1-200 bytes, any byte */
#define SEQUENCE_KEYED_DEFAULT_STEP 10000
#define SEQUENCE_KEYED_MAX_STEP (1LL << 40)

enum sequence_keyed_phase {
    SEQUENCE_KEYED_UNKNOWN = 0, /* not started here: issue answers LEAF_EUNAVAIL */
    SEQUENCE_KEYED_READING,     /* started: reading (max, version) */
    SEQUENCE_KEYED_SERVING,     /* issuing below acked (after the first raise) */
    SEQUENCE_KEYED_FENCED,      /* the stored max went down: stopped until started again */
};

/* A test seam until the sequence service (src/node/sequence/) calls it. */
const char *sequence_keyed_phase_name(enum sequence_keyed_phase p);

/* Under the service's mutex (above); one per section of a space. */
struct sequence_keyed_section {
    int64_t acked;        /* the max ZooKeeper acknowledged */
    int64_t floor;        /* every non-resident key's last is <= floor */
    int64_t base;         /* the max read at the latest start */
    int64_t high;         /* the largest value issued here */
    int64_t need;         /* the largest end value a parked request needs, 0 when none
                           * (while reading: the largest count parked) */
    int32_t version;      /* of acked; -1: the node does not exist (the first write creates it) */
    uint8_t phase;        /* enum sequence_keyed_phase */
    uint8_t reread;       /* a write was refused or is in doubt: read before anything else */
    uint8_t prove;        /* the lease lapsed: a write must succeed before issuing again */
    uint8_t want;         /* sequence_keyed_action() should look at it */
    uint64_t term;        /* the lease term it was started in */
    uint64_t lapses_seen; /* lease lapses already proven */
    uint64_t inflight;    /* token of the request in flight, 0 when none */
    enum sequence_op inflight_op;
    int64_t inflight_max; /* CREATE, WRITE: the max written */
    int64_t inflight_sent_ms;
    int64_t retry_at_ms; /* no request before this (after a failure) */
};

/* Counters per space, read by metrics (under the mutex). */
struct sequence_keyed_stats {
    uint64_t issued;      /* IDs issued */
    uint64_t resident;    /* keys resident now */
    uint64_t writes;      /* section writes asked (CREATE and WRITE actions handed out) */
    uint64_t evictions;   /* keys that left memory */
    uint64_t fences;      /* sections fenced (stored max went down) */
    uint64_t short_waits; /* issue answered LEAF_EAGAIN for lack of headroom */
};

/* Under the mutex; one per space definition. name and len never change once added. */
struct sequence_keyed_space {
    char name[SEQUENCE_KEYED_NAME_MAX + 1];
    size_t len;
    unsigned
        slot_crc; /* CRC16 of "keyed:<name>:", a key's slot goes on from (sequence_keyslot.h) */
    int64_t step;
    struct sequence_keyed_stats stats;
    size_t wanting; /* sections with want set */
    struct sequence_keyed_section sections[SEQUENCE_KEYED_SECTIONS];
};

/* Under the mutex: the whole keyed state of this node. */
struct sequence_keyed {
    struct sequence_keyed_table table;
    struct sequence_keyed_space *spaces[SEQUENCE_KEYED_MAX_SPACES];
    int nspaces;     /* written under the mutex with a release store (sequence_keyed_space_find) */
    uint64_t tokens; /* requests handed out */
};

/*
 * One request for the glue to perform on /leafd/{leaf.name}/keyed/{space}/{section}
 * (the section in decimal): io as sequence_state.h's actions (READ, CREATE of
 * io.data, WRITE of io.data with expected version io.version).
 */
struct sequence_keyed_action {
    int space;   /* index: sequence_keyed_space_name() */
    int section; /* 0..255 */
    struct sequence_action io;
};

/*
 * A core for at most max_keys (>= 1) resident keys (leafd.keyed.max.keys);
 * hash_key NULL draws a random one (tests inject one). NULL when out of memory.
 */
struct sequence_keyed *sequence_keyed_new(size_t max_keys, const struct siphash_key *hash_key);
void sequence_keyed_free(struct sequence_keyed *k);

/*
 * 1 when name is 1-64 bytes of [A-Za-z0-9._-] and not "." or "..", else 0.
 */
int sequence_keyed_name_ok(const char *name, size_t len);

/*
 * Adds a space from its definition (step 0: SEQUENCE_KEYED_DEFAULT_STEP); *index
 * is its index. LEAF_EEXIST (and *index) when it exists, LEAF_EINVAL for a bad
 * name or step, LEAF_ERANGE past SEQUENCE_KEYED_MAX_SPACES, LEAF_ENOMEM.
 */
leaf_status_t sequence_keyed_space_add(struct sequence_keyed *k, const char *name, size_t len,
                                       int64_t step, int *index);

/*
 * The index of a space, or -1. May be called without the service's mutex
 * (the sequence service does, before it takes it): spaces are only ever
 * added, never removed until sequence_keyed_free(), a space's name never
 * changes, and sequence_keyed_space_add() publishes a new space by a release
 * store of nspaces after the space is complete.
 */
int sequence_keyed_space_find(const struct sequence_keyed *k, const char *name, size_t len);

/* The section, as sequence_keyed_done() and the glue see it; NULL for a bad index. */
struct sequence_keyed_section *sequence_keyed_section(struct sequence_keyed *k, int space,
                                                      int section);

/*
 * This owner gained the section (or a slot of it) in the lease's current term:
 * it reads the stored max again and serves above everything it knew.
 * A request in flight is abandoned (its result is refused by done).
 * LEAF_EUNAVAIL when the lease is not primary, LEAF_EINVAL for a bad index.
 */
leaf_status_t sequence_keyed_section_start(struct sequence_keyed *k, const struct sequence_lease *l,
                                           int space, int section);

/* The section left this owner: it issues nothing more; a request in flight is abandoned. */
void sequence_keyed_section_stop(struct sequence_keyed *k, int space, int section);

/*
 * A key made ready to issue: its space, its slot (the key slot, 0..16383, of
 * the RESP key "keyed:<space>:<key>"; section = slot / 64) and its hash in the table of resident
 * keys (sequence_keyed_table_hash()). The key bytes are the caller's.
 */
struct sequence_keyed_ref {
    int space;
    unsigned slot;
    uint64_t hash;
    const char *key;
    size_t len;
};

/*
 * Fills *ref for key[0..len) of the space (an index sequence_keyed_space_find()
 * returned) and starts loading the key's place in the table into the cache
 * (sequence_keyed_table_prefetch()), so the lookup under the mutex does not
 * wait for memory. May be called without the service's mutex, as
 * sequence_keyed_space_find(): it reads only the space's name, the table's
 * hash key (set at sequence_keyed_new(), never changed) and the table's slot
 * array for a prefetch, which never faults. The sequence service calls it
 * before it takes its mutex, and the RESP door for the keys of a pipelined
 * batch before their turn (docs/keyed-sequences.md, "In the service").
 * LEAF_EINVAL for a bad index (a key over SEQUENCE_KEYED_KEY_MAX bytes is
 * refused by sequence_keyed_issue()).
 */
leaf_status_t sequence_keyed_prepare(const struct sequence_keyed *k, int space, const char *key,
                                     size_t len, struct sequence_keyed_ref *ref);

/*
 * Only the prefetch of sequence_keyed_prepare(), for a key whose issue comes a
 * little later (a pipelined command behind the current one): the hash, not the
 * slot. Needs no mutex, as sequence_keyed_prepare(); nothing for a bad index.
 */
void sequence_keyed_prefetch(const struct sequence_keyed *k, int space, const char *key,
                             size_t len);

/*
 * Issues n (>= 1) consecutive IDs *first .. *first + n - 1 to the key of ref
 * (sequence_keyed_prepare()) at now_ms (read at the call, as sequence_state.h
 * says). Returns:
 *   LEAF_OK        issued;
 *   LEAF_EAGAIN    nothing issued: the section is starting, proving itself after a
 *                  lapse, or its acknowledged headroom is short; park the request;
 *   LEAF_EUNAVAIL  nothing issued: not primary, the window ran out, the section is
 *                  not started here (or in an older term), or fenced;
 *   LEAF_ERANGE    the key would pass INT64_MAX;
 *   LEAF_ENOMEM    the key could not be made resident;
 *   LEAF_EINVAL    n < 1, a bad space index, a slot over 16383, a key of 0 or over 200 bytes.
 */
leaf_status_t sequence_keyed_issue(struct sequence_keyed *k, struct sequence_lease *l,
                                   int64_t now_ms, const struct sequence_keyed_ref *ref, int64_t n,
                                   int64_t *first);

/*
 * The next request to perform now, if any: returns 1 and fills *a (it is then
 * in flight), 0 when no section has anything to do now.
 */
int sequence_keyed_action(struct sequence_keyed *k, struct sequence_lease *l, int64_t now_ms,
                          struct sequence_keyed_action *a);

/*
 * The result of the request with this token (results map as in
 * sequence_state.h; a section node that does not exist reads as NONODE).
 * data/len/version: READ with SEQUENCE_RESULT_OK only; data the node's bytes
 * ({"max":M}, sequence_record.h); a node that holds anything else is read
 * again after SEQUENCE_RECHECK_MS (the glue logs what it found). A definite
 * answer to a CREATE or WRITE renews the lease. LEAF_EINVAL when the token is not the section's
 * request in flight (late, repeated, or abandoned), which changes nothing.
 */
leaf_status_t sequence_keyed_done(struct sequence_keyed *k, struct sequence_lease *l,
                                  uint64_t token, int64_t now_ms, enum sequence_result r,
                                  const char *data, size_t len, int32_t version);

enum sequence_keyed_verdict {
    SEQUENCE_KEYED_ADOPT = 0, /* stored >= acked: go on from the stored max */
    SEQUENCE_KEYED_FENCE,     /* stored < acked: someone lowered it; stop the section */
};

/*
 * The rule for a max read while serving (after a refused or doubtful write):
 * acked is this owner's acknowledged max, stored the max read (-1: no node).
 * A test seam until the sequence service (src/node/sequence/) calls it.
 */
enum sequence_keyed_verdict sequence_keyed_judge(int64_t acked, int64_t stored);

/*
 * A graceful hand-over of a whole section: stops it and, when it was serving
 * with nothing in flight or in doubt and max(high, floor) < acked, returns 1
 * and fills *a (token 0: no result is expected back) with the conditional
 * write of max(high, floor). Call after the lease for these slots is given up
 * (nothing is issued after it). 0 when there is nothing to give back.
 */
int sequence_keyed_giveback(struct sequence_keyed *k, int space, int section,
                            struct sequence_keyed_action *a);

/*
 * The space's name (NUL-terminated) and counters; NULL for a bad index.
 */
const char *sequence_keyed_space_name(const struct sequence_keyed *k, int space);
const struct sequence_keyed_stats *sequence_keyed_stats(const struct sequence_keyed *k, int space);

/*
 * Bytes held for resident keys (the table and long keys), for the memory figure.
 */
size_t sequence_keyed_bytes(const struct sequence_keyed *k);

#endif
