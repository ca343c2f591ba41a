#ifndef LEAF_ZK_LEASE_H
#define LEAF_ZK_LEASE_H

/*
 * Worker-ID leases (docs/cluster.md, "Worker-ID leases"), the decisions only: which slot to
 * claim, the fence arithmetic of a held slot, and the switch on a clock
 * step. Pure code (libc, src/base, cJSON): the caller reads ZooKeeper, passes
 * the snapshot, the clock and a random source in, and carries out the
 * action returned. Unit-tested in tests/unit/test_zk_lease.c.
 *
 * Layout:
 *   {root}/leaf_lease/{NNNNNNNNNN}        PERSISTENT, created lazily, data:
 *       {"reserved":<ms>,"ip":"<ip>","port":<port>,"token":"<16 hex>"}
 *   {root}/leaf_lease/{NNNNNNNNNN}/owner  EPHEMERAL, data: the holder's ip:port
 * The slot number is the worker ID, written with 10 digits whatever the
 * layout: the same width as the leaf_forever suffix (slot 0000000017 is the
 * worker of .../leaf_forever/{ip}:{port}-0000000017), and a slot keeps its
 * name, hence its reservation, if the worker field is widened later.
 *
 * The fence. A slot's "reserved" only ever grows, and it only changes by a
 * versioned set (expected version = the one the writer read or wrote last).
 * The successful writes to a slot therefore form one chain of versions, and
 * each holder owns a contiguous run of it. A holder issues only timestamps
 * in (floor, ceiling): floor is the "reserved" it read when it claimed,
 * ceiling the last "reserved" ZooKeeper acknowledged to it. The next holder
 * reads the slot after that run, so its floor is at least every ceiling
 * acknowledged before; and a run cannot interleave with another, because
 * the first write after someone else's fails with "bad version". No clock,
 * session timeout or lease duration enters the argument: the fence is in
 * the data, and a holder that can no longer write simply stops at its
 * ceiling.
 *
 * Call order for the ZooKeeper glue:
 *  1. Claim: list {lease}, read every slot's data (zk_lease_parse_data) and
 *     whether it has an owner, plus the leaf_forever timestamps by worker ID;
 *     zk_lease_choose() gives candidates. For each in turn: create the slot
 *     if missing (data: zk_lease_format_data with reserved = the candidate's
 *     floor; EEXIST is fine), create owner EPHEMERAL (EEXIST: lost the race,
 *     next candidate), get the slot's data and version, zk_lease_begin().
 *  2. Reservations: from a timer, zk_lease_should_write(); if so
 *     zk_lease_next_reserved(), zk_lease_write_sent(), set with the hold's
 *     version; on the answer zk_lease_write_done(). RAISE_CEILING: set the
 *     generator's ceiling to acked_ms. RESYNC: get the slot's data and
 *     version, zk_lease_resync(). LOST: see 3.
 *  3. Loss (session expired, or LOST above): zk_lease_lose(); the generator
 *     keeps the worker with its ceiling (nothing extends it), and the node
 *     claims again (1). The new claim's floor is above that ceiling, even
 *     for the same slot, so the generator moves to it at once.
 *  4. Clock step: zk_lease_step_classify() on every refusal for a clock
 *     behind; on SWITCH, zk_lease_switch_choose() and claim one of those
 *     (1, with zk_lease_begin() refusing a floor that moved to or above the
 *     clock meanwhile); once its first reservation is acknowledged move the
 *     generator to it, then delete the old slot's owner without writing its
 *     data (its reservation stays). No candidate: 503 until the clock
 *     catches up, as in forever mode.
 *
 * Ownership: a struct zk_lease_hold belongs to the thread that runs the
 * ZooKeeper glue (the control thread); nothing here keeps global state.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "zk_layout.h"

#define ZK_LEASE_SLOT_DIGITS 10
/* A listing of 2^16 ten-digit names (about 900 kB) still fits ZooKeeper's
 * default 1 MB packet; more slots could not be read back in one call. */
#define ZK_LEASE_MAX_SLOTS 65536
/* A claim picks at random among the SPREAD oldest free slots left. */
#define ZK_LEASE_SPREAD 4
/* JSON numbers are read exactly below 2^53; "reserved" must be below it. */
#define ZK_LEASE_MS_LIMIT 9007199254740992LL
#define ZK_LEASE_DATA_MAX 256
#define ZK_LEASE_OWNER "owner"

/* ----- slot data and names ----- */

struct zk_lease_data {
    int64_t reserved; /* ms: no ID at or above it was issued from this slot */
    char ip[64];      /* the last holder ("" when absent) */
    int port;         /* 0 when absent */
    uint64_t token;   /* the claim that wrote it last (0 when absent) */
};

/* Writes the JSON (NUL-terminated); returns its length, or 0 when it does not
 * fit or reserved is outside [0, ZK_LEASE_MS_LIMIT). */
size_t zk_lease_format_data(const struct zk_lease_data *d, char *buf, size_t cap);

/*
 * Parses slot data. LEAF_EINVAL, with *why naming the fault, when it is not a
 * JSON object, "reserved" is missing or not an integer in [0, 2^53), or ip,
 * port or token is present with the wrong type. Such a slot is never
 * claimed: its fence cannot be read.
 */
leaf_status_t zk_lease_parse_data(const char *buf, size_t len, struct zk_lease_data *d,
                                  const char **why);

/* {lease}/{10-digit slot} and {lease}/{10-digit slot}/owner; LEAF_EINVAL
 * when the slot is negative or out of ZK_LEASE_SLOT_DIGITS, or it does not fit. */
leaf_status_t zk_lease_slot_path(const struct zk_layout *l, int64_t slot, char *out, size_t cap);
leaf_status_t zk_lease_owner_path(const struct zk_layout *l, int64_t slot, char *out, size_t cap);

/* The slot of a leaf_lease child name or path: exactly 10 digits, below
 * nslots; LEAF_EINVAL otherwise (a stray child is skipped, not claimed). */
leaf_status_t zk_lease_slot_number(const char *name_or_path, int64_t nslots, int64_t *slot);

/* ----- slot choice ----- */

/* One slot as read from ZooKeeper. Slots not listed were never created and
 * have no leaf_forever node. */
struct zk_lease_slot {
    int64_t slot;
    int exists;         /* the slot's znode exists (and its data parsed) */
    int held;           /* it has an owner child */
    int bad;            /* its data did not parse: never a candidate */
    int64_t reserved;   /* from the data; ignored unless exists */
    int64_t forever_ms; /* timestamp of a leaf_forever node with this worker ID, -1 none */
};

struct zk_lease_choice {
    const struct zk_lease_slot *slots;
    int nslots_listed;
    int64_t nslots;      /* 2^worker_bits, 1..ZK_LEASE_MAX_SLOTS */
    int64_t cache_slot;  /* the slot in the local cache, -1 none */
    int64_t cache_ms;    /* its timestamp there, -1 none */
    int64_t exclude;     /* a slot never to offer (the one being left), -1 none */
    int64_t now_ms;      /* wall clock */
    int64_t max_wait_ms; /* offer only slots usable within this: floor + 1 - now <= max_wait_ms */
    uint64_t (*rand)(void *ctx);
    void *rand_ctx;
};

struct zk_lease_candidate {
    int64_t slot;
    int64_t floor_ms; /* from the snapshot; zk_lease_begin() recomputes from the fresh read */
    int exists;       /* 0: create the slot first */
};

/*
 * Orders the free slots to try, at most cap: the cached slot first if free
 * and usable; then the others oldest floor first, each position drawn at
 * random among the ZK_LEASE_SPREAD oldest left, so that nodes starting
 * together rarely pick the same slot. A slot never created counts as floor
 * 0, unless a leaf_forever node names its worker ID. Returns the number of
 * candidates (0: none free), or LEAF_EINVAL (bad input) / LEAF_ENOMEM.
 */
int zk_lease_choose(const struct zk_lease_choice *c, struct zk_lease_candidate *out, int cap);

/*
 * A mixed forever/lease cluster (docs/IDENTITY.md): 1 when the leaf_forever child `name`
 * keeps its worker ID out of the lease pool for a node of identity own_identity, i.e. when it is
 * another identity's node. Such a forever node may still be serving while cut off from
 * ZooKeeper (its leaf_temporary node gone with its session, its local reservation still
 * extended), so being live is not the test: the caller marks the slot of its worker ID `held`
 * whenever this returns 1. Only the forever identity itself (a node migrating to lease mode with
 * its own ip:port) may take its worker ID as a slot; the identity lock (zk_identity.h) keeps a
 * twin of it out. Replaces snowflake_service_claim.c's forever_live() check.
 */
int zk_lease_forever_blocks(const char *name, const char *own_identity);

/* ----- fence arithmetic ----- */

enum zk_lease_state {
    ZK_LEASE_NONE = 0, /* no slot */
    ZK_LEASE_HELD,     /* owner created; reservations are extended */
    ZK_LEASE_RESYNC,   /* a write's outcome is unknown: read the slot back */
    ZK_LEASE_LOST,     /* fenced or expired: issue below acked_ms only, claim again */
};

/* The claim of one slot. The generator issues timestamps t with
 * floor_ms < t < acked_ms; acked_ms == floor_ms until the first write. */
struct zk_lease_hold {
    enum zk_lease_state state;
    int64_t slot;
    uint64_t token;     /* this claim's, written with every reservation */
    int32_t version;    /* the slot data's version last read or written */
    int64_t floor_ms;   /* nothing at or below */
    int64_t acked_ms;   /* the generator's ceiling: nothing at or above */
    int64_t pending_ms; /* the write in flight, -1 none */
};

/*
 * Starts a hold after the owner node was created and the slot read back
 * (version and data, the data parsed by zk_lease_parse_data). token: fresh
 * per claim and not 0 (a random number or the session id). Returns LEAF_OK;
 * LEAF_ECLOCK, leaving h untouched, when the floor is not below
 * now_ms + max_wait_ms (the caller deletes the owner and tries the next
 * candidate). The floor: the largest of the slot's reserved (read), the
 * leaf_forever timestamp of its worker ID (forever_ms, -1: none; counted
 * even once the slot is used, which costs nothing as reserved has passed
 * it) and what this node knows of the slot (known_ms: local cache or
 * memory, -1: nothing); never below 0.
 */
leaf_status_t zk_lease_begin(struct zk_lease_hold *h, int64_t slot, uint64_t token, int32_t version,
                             const struct zk_lease_data *read, int64_t forever_ms, int64_t known_ms,
                             int64_t now_ms, int64_t max_wait_ms);

/* 1 when a reservation should be written now: held, no write in flight, and
 * none acknowledged yet or less than half of reserve_ms left ahead of now. */
int zk_lease_should_write(const struct zk_lease_hold *h, int64_t now_ms, int64_t reserve_ms);

/* The reservation to write: now + reserve_ms, never below acked_ms. */
int64_t zk_lease_next_reserved(const struct zk_lease_hold *h, int64_t now_ms, int64_t reserve_ms);

/* Records the write in flight (expected version: h->version). */
void zk_lease_write_sent(struct zk_lease_hold *h, int64_t reserved);

enum zk_lease_write_rc {
    ZK_LEASE_WRITE_OK,         /* acknowledged; new_version is the stat's */
    ZK_LEASE_WRITE_BADVERSION, /* someone else wrote the slot */
    ZK_LEASE_WRITE_NONODE,     /* the slot was deleted */
    ZK_LEASE_WRITE_UNKNOWN,    /* connection loss, timeout...: may or may not be applied */
};

enum zk_lease_action {
    ZK_LEASE_KEEP,          /* nothing changes; write again when should_write says so */
    ZK_LEASE_RAISE_CEILING, /* set the generator's ceiling to acked_ms */
    ZK_LEASE_RESYNC_NEEDED, /* get the slot's data and version, then zk_lease_resync() */
    ZK_LEASE_LOST_SLOT,     /* stop extending; keep the ceiling; claim again */
};

enum zk_lease_action zk_lease_write_done(struct zk_lease_hold *h, enum zk_lease_write_rc rc,
                                         int32_t new_version);

/*
 * After an unknown outcome: the slot read back (read NULL: it no longer
 * exists). The same version: the write was not applied (KEEP, it is sent
 * again). One version more carrying this claim's token and the pending
 * value: it was applied (RAISE_CEILING). Anything else: someone else wrote
 * (LOST_SLOT).
 */
enum zk_lease_action zk_lease_resync(struct zk_lease_hold *h, int32_t version,
                                     const struct zk_lease_data *read);

/* Session expired or slot lost: the ceiling stays, nothing extends it. */
void zk_lease_lose(struct zk_lease_hold *h);

/* ----- clock step ----- */

enum zk_lease_step {
    ZK_LEASE_STEP_NONE,   /* the clock is not behind */
    ZK_LEASE_STEP_WAIT,   /* behind by <= SNOWFLAKE_MAX_BACKWARDS_WAIT_MS (5): wait */
    ZK_LEASE_STEP_REFUSE, /* behind by <= switch_after_ms: 503 until caught up */
    ZK_LEASE_STEP_SWITCH, /* behind by more: try to move to another slot */
};

#define ZK_LEASE_STEP_WAIT_MS 5

/* high_ms: the highest of the clock seen, the last timestamp issued and the
 * floor, i.e. what the clock must pass to issue from the current slot. */
enum zk_lease_step zk_lease_step_classify(int64_t now_ms, int64_t high_ms, int64_t switch_after_ms);

/*
 * The switch decision: the classification, and on SWITCH the candidates
 * (free, floor below c->now_ms so they issue at once; c->max_wait_ms is
 * ignored and c->exclude should be the current slot). *n = 0 on SWITCH
 * means no suitable slot: behave as REFUSE. Returns the classification, or
 * LEAF_EINVAL / LEAF_ENOMEM (negative) from zk_lease_choose.
 */
int zk_lease_switch_choose(const struct zk_lease_choice *c, int64_t high_ms,
                           int64_t switch_after_ms, struct zk_lease_candidate *out, int cap,
                           int *n);

#endif
