#ifndef LEAF_SEQUENCE_STATE_H
#define LEAF_SEQUENCE_STATE_H

/*
 * The sequence primary's decisions, pure code (libc and src/base only). Every
 * decision is a function of the state and its inputs; times are monotonic
 * milliseconds passed in. Every piece of I/O is handed out as a struct
 * sequence_action for the caller (the ZooKeeper glue) to perform, and its
 * result is fed back with sequence_state_done(). Unit-tested in
 * tests/unit/test_sequence.c with an injected clock and a fake store.
 *
 * Two structs:
 * - struct sequence_lease, one per node: the session's liveness window and
 *   whether this node is the elected primary, in which term.
 * - struct sequence_state, one per sequence name: the persisted high-water
 *   mark ("max") acknowledged by ZooKeeper, the last ID issued, the batch.
 *
 * Ownership: the lease and every sequence_state are owned by one thread (the
 * thread that runs the sequence glue and answers sequence requests), or the
 * caller serialises every call with one mutex. ZooKeeper completions reach
 * that thread through the zk_session event queue; they never call in here
 * from a ZooKeeper thread.
 *
 * Clocks. now_ms for sequence_state_issue_from() must be read at the moment of
 * the call (clock_mono_ms(), or uv_now() right after uv_update_time()): a
 * cached loop time is in the past, and the liveness rule needs the present.
 * A request's sent_ms may be any time at or before the request left (a
 * cached loop time is fine there: earlier is safer).
 *
 * The persisted state. /leafd/{leaf.name}/sequences/{name} holds {"max":M}
 * (sequence_record.h). Invariant: every ID ever issued is <= the persisted M.
 * The primary issues only up to the M that ZooKeeper has acknowledged to it,
 * and raises M ahead of use in batches with conditional writes (expected
 * version = the version it read or last wrote). A top-up is asked for when
 * less than half of the current batch is left; at most one request per
 * sequence is in flight. The batch follows the issue rate (>= 200 ms of IDs
 * at the rate measured between two writes, so a busy sequence writes about 5
 * and at most about 10 times a second), never below the configured base and
 * never above SEQUENCE_MAX_BATCH; when the rate falls it halves per write
 * back toward the base. A write sets M to one batch above the last ID
 * issued (plus what a parked request needs), never lower than it was, so the
 * headroom, and what a crash loses, is at most one batch.
 *
 * A new primary reads (M, v) (a missing node is created at start - 1 when
 * the sequence may be created), then writes M + batch with expected version
 * v. Nothing is issued before that write is acknowledged; then IDs start at
 * M + 1. "Bad version" on any write means someone else wrote the node since
 * (an operator, a restore; another primary cannot, see Liveness), "no node"
 * that someone deleted it: the sequence reads the record again and starts
 * over above max(stored max, local floor), as a new primary does; after
 * SEQUENCE_FENCE_LIMIT refusals within SEQUENCE_FENCE_WINDOW_MS it gives up
 * (SEQUENCE_FENCED) and the glue steps down, so another node (or this one in
 * a new term) takes over. Any other failure is
 * retried after SEQUENCE_RETRY_MS while IDs keep being issued below the
 * acknowledged M. A write whose outcome is unknown (connection loss) is
 * settled by reading the node back: the expected version means it did not
 * land, that version + 1 holding the value written means it did, anything
 * else is a fence.
 *
 * Liveness. ZooKeeper expires a session T ms (the NEGOTIATED session timeout)
 * after it last heard from the client; only then does the primary's
 * ephemeral election node vanish and a standby become primary. The lease
 * counts from `answer_ms`: the send time of the latest request that the
 * leader answered (sequence_lease_answer()). The primary issues only while
 *     now_ms - answer_ms < 2/3 T      (exactly: 3 * (now - answer) < 2 * T)
 * connected or not. Because the server heard the request no earlier than it
 * was sent, the session cannot expire before answer_ms + T, and this node
 * has stopped issuing by answer_ms + 2/3 T: the last third absorbs clock-rate
 * differences between this node and the server (the rates must agree to
 * within a third; the wall clock may jump, the monotonic clock is used).
 * Only answers that went through the leader count: the top-up writes and
 * creates (sequence_state_done() records them itself) and the glue's
 * heartbeat, which must be a write too (e.g. setData on its own election
 * node every T/6 ms). A read or a ping is answered by the local server alone,
 * which may be cut off from the leader that decides expiry.
 *
 * Strict order across primaries. Every ID of a new primary is above the M it
 * read after its election, which bounds every ID any older primary could
 * ever issue (they issue only up to what ZooKeeper acknowledged, and the new
 * primary's fencing write makes every later write of theirs fail). A new
 * primary is elected only after the old session expired, i.e. after the old
 * primary stopped issuing. So every ID issued by the new primary is larger,
 * and returned later, than every ID of the old one.
 *
 * Resuming after a lapse (decided: safe, with a check). If the window ran
 * out and answers then arrive again in the SAME session (a reconnect without
 * expiry), the session was never expired: an expired session never comes
 * back. So the election node stayed, no other node was elected, and no other
 * node issued or wrote. The primary may go on from where it stopped, without
 * a gap. It still proves it: after a lapse each sequence writes (max
 * unchanged + batch) with the version it holds before issuing again; a
 * success proves nobody wrote since, "bad version" fences it. A NEW session
 * is a new term: the node must win the election again, and each sequence
 * re-reads and fences as a new primary.
 *
 * Call order for the glue:
 *   start-up      sequence_lease_init(T negotiated); sequence_state_init() per name.
 *   session       sequence_lease_connected() on CONNECTED / CONNECTING;
 *                 on EXPIRED or close: sequence_lease_lose() and
 *                 sequence_state_stop() on every sequence.
 *   election won  sequence_lease_answer(sent time of the write that proved the session,
 *                 e.g. the create of the election node), sequence_lease_win(), then
 *                 sequence_state_start() per sequence (or lazily on its first request).
 *   demote / lost sequence_lease_lose() first (issuing stops at once), then delete the
 *                 election node.
 *   request       sequence_state_issue_from(); LEAF_EAGAIN: park the request; then
 *                 sequence_state_action() and perform what it returns.
 *   completion    sequence_state_done() with the action's token, then retry the parked
 *                 requests of that sequence, then sequence_state_action().
 *   heartbeat     sequence_lease_answer(sent_ms) when the leader answered it.
 *   cron          sequence_state_action() for every sequence (retries after failures);
 *                 parked requests fail with 503/TRYAGAIN after a deadline.
 *   home moved    sequence_state_move() under the lock requests issue under; the next
 *                 action is the mark (docs/regions.md, "Moving a home").
 */
#include <stddef.h>
#include <stdint.h>

#include "sequence_record.h"
#include "status.h"

#define SEQUENCE_DEFAULT_BATCH 10000
#define SEQUENCE_MAX_BATCH (1LL << 40)
#define SEQUENCE_BATCH_WINDOW_MS 200 /* a batch holds at least this long at the measured rate */
#define SEQUENCE_RATE_MIN_MS 10      /* shortest interval a rate is measured over */
#define SEQUENCE_RETRY_MS 100        /* after a failed request */
#define SEQUENCE_RECHECK_MS 1000     /* a missing or corrupt record is read again this often */
#define SEQUENCE_FENCE_LIMIT 3       /* fences within the window before giving the sequence up */
#define SEQUENCE_FENCE_WINDOW_MS 10000

/* Owned by the sequence thread (see above). */
struct sequence_lease {
    int64_t timeout_ms; /* the negotiated session timeout T */
    int64_t answer_ms;  /* send time of the latest request the leader answered; INT64_MIN: none */
    int connected;      /* requests are only started while connected */
    int primary;        /* 1 while this node holds the election in the current term */
    uint64_t term;      /* +1 per election win; a sequence started in an older term is dead */
    uint64_t lapses;    /* windows that ran out while primary (a sequence then revalidates) */
};

void sequence_lease_init(struct sequence_lease *l, int64_t timeout_ms);
void sequence_lease_connected(struct sequence_lease *l, int connected);

/*
 * The leader answered a request sent at sent_ms; now_ms is the time the
 * answer is handled. When the window had already run out at now_ms this is
 * a lapse, and every sequence revalidates before issuing again.
 */
void sequence_lease_answer(struct sequence_lease *l, int64_t sent_ms, int64_t now_ms);

/* This node won the election: a new term. */
void sequence_lease_win(struct sequence_lease *l);

/* Not primary any more (demoted, election node lost, session expired): stops issuing at once. */
void sequence_lease_lose(struct sequence_lease *l);

/* 1 while a primary may issue at now_ms: primary and 3 * (now - answer) < 2 * T. */
int sequence_lease_live(const struct sequence_lease *l, int64_t now_ms);

/* Milliseconds of issuing left at now_ms (0 when not live); for /ready and timers. */
int64_t sequence_lease_left_ms(const struct sequence_lease *l, int64_t now_ms);

enum sequence_phase {
    SEQUENCE_IDLE = 0, /* not started in this term: issue answers LEAF_EUNAVAIL */
    SEQUENCE_READING,  /* a new primary reads (max, version) */
    SEQUENCE_CREATING, /* the node is missing and may be created at start - 1 */
    SEQUENCE_FENCING,  /* the first write (new primary, or after a lapse) is not acknowledged yet */
    SEQUENCE_SERVING,  /* issuing; tops up in the background */
    SEQUENCE_MISSING,  /* the node does not exist and may not be created: LEAF_ENOTFOUND
                        * (read again after SEQUENCE_RECHECK_MS, or at once when created here) */
    SEQUENCE_FENCED,   /* SEQUENCE_FENCE_LIMIT refused writes in a row: the glue steps down */
    SEQUENCE_CORRUPT,  /* the node holds something that is not {"max":n} (read again after
                        * SEQUENCE_RECHECK_MS) */
    SEQUENCE_MOVING,   /* its home moves to another region: issues nothing (requests park)
                        * while the moved mark is written (sequence_state_move()) */
    SEQUENCE_MOVED,    /* the record is marked moved: this region never issues it again, never
                        * writes it, never gives it back (docs/regions.md, "Moving a home") */
};

/* Why the last conditional write was refused (the glue logs it once and clears it). */
enum sequence_fence {
    SEQUENCE_FENCE_NONE = 0,
    SEQUENCE_FENCE_CHANGED, /* bad version: someone wrote the record since */
    SEQUENCE_FENCE_DELETED, /* no node: someone deleted the record */
};

const char *sequence_phase_name(enum sequence_phase p);

enum sequence_op { SEQUENCE_OP_NONE = 0, SEQUENCE_OP_READ, SEQUENCE_OP_CREATE, SEQUENCE_OP_WRITE };

/*
 * One request for the glue to perform on /leafd/{leaf.name}/sequences/{name}:
 *   READ    zoo_aget; feed back the data and stat.version.
 *   CREATE  zoo_acreate, persistent, with data[0..len).
 *   WRITE   zoo_aset of data[0..len) with expected version `version`.
 */
struct sequence_action {
    enum sequence_op op;
    uint64_t token;  /* hand back to sequence_state_done() */
    int64_t sent_ms; /* the now_ms it was handed out at */
    int32_t version; /* WRITE: expected version (never -1, which would not be conditional) */
    int64_t max;     /* CREATE, WRITE: the max written */
    size_t len;
    char data[SEQUENCE_RECORD_MAX_LEN];
};

/*
 * The outcome of a request, from the ZooKeeper return code:
 *   ZOK -> OK, ZBADVERSION -> BADVERSION, ZNONODE -> NONODE,
 *   ZNODEEXISTS -> EXISTS, ZCONNECTIONLOSS, ZOPERATIONTIMEOUT, ZSESSIONEXPIRED,
 *   ZCLOSING -> UNKNOWN (a write may or may not have landed), anything else -> FAILED.
 */
enum sequence_result {
    SEQUENCE_RESULT_OK = 0,
    SEQUENCE_RESULT_BADVERSION,
    SEQUENCE_RESULT_NONODE,
    SEQUENCE_RESULT_EXISTS,
    SEQUENCE_RESULT_UNKNOWN,
    SEQUENCE_RESULT_FAILED,
};

/* Owned by the sequence thread (see above); one per sequence name. */
struct sequence_state {
    enum sequence_phase phase;
    uint64_t term;         /* the lease term it was started in */
    uint64_t lapses_seen;  /* lease lapses already revalidated */
    int64_t create_start;  /* > 0: a missing node is created so that IDs start here */
    int64_t last;          /* the last ID issued (or the max read, before the first) */
    int64_t acked_max;     /* the max ZooKeeper acknowledged; never issue above it */
    int32_t version;       /* znode version of acked_max */
    int64_t need;          /* largest count refused for lack of headroom, 0 when none */
    int64_t base_batch;    /* leafd.sequence.batch */
    int64_t batch;         /* current batch, base_batch..SEQUENCE_MAX_BATCH */
    int64_t room;          /* > 0: the values count in periods of room (a business numbering,
                            * sequence_numbering.h): sequence_state_set_room() */
    int64_t room_end;      /* with room: the last value a write may reserve */
    int64_t retry_at_ms;   /* no request before this (after a failure) */
    int verify;            /* a write's outcome is unknown: read back before anything else */
    int64_t rate_since_ms; /* rate measurement: since when */
    uint64_t rate_mark;    /* rate measurement: issued at rate_since_ms */

    /* The one request in flight; token 0 when none. */
    uint64_t inflight;
    uint64_t first_token; /* tokens below this belong to an older start: results are dropped */
    uint64_t tokens;
    enum sequence_op inflight_op;
    int32_t inflight_version; /* WRITE: the expected version */
    int64_t inflight_max;     /* CREATE, WRITE: the max written */
    int64_t inflight_sent_ms;
    int inflight_mark;      /* WRITE: it is the moved mark */
    int32_t verify_version; /* verify: the expected version of the write in doubt */
    int verify_mark;        /* verify: the write in doubt is the moved mark */
    int64_t verify_max;     /* verify: the max it wrote */

    /* Healing (docs/IDENTITY.md). */
    int64_t phase_since_ms;    /* when MISSING or CORRUPT was entered */
    int64_t fence_window_ms;   /* start of the window fences are counted in */
    int fences_in_window;      /* refused writes since fence_window_ms */
    enum sequence_fence fence; /* why the last write was refused; the glue clears it */

    /* The local floor (sequence_floor.h): the highest max this node saw acknowledged, or
     * lower only by its own giveback. A read below it starts above it instead. */
    int64_t floor;
    int floor_dirty;    /* floor changed since the glue persisted it; the glue clears it */
    int64_t floor_over; /* > 0: the last read found ZooKeeper's max below the floor; the
                         * glue logs (zk_below, floor_over) at warn and clears it */
    int64_t zk_below;   /* that max */

    /* The giveback (a graceful stop writes the record down to the last ID issued). */
    int giveback_ok;          /* stopped while serving: a giveback may be written */
    int32_t giveback_version; /* its expected version */
    int64_t giveback_max;     /* what it writes: the last ID issued */

    /* Moving the home (sequence_state_move()). */
    char moved_to[SEQUENCE_MOVED_MAX]; /* MOVING, MOVED: the new home region */
    int moved_new;   /* MOVED was just entered; the glue logs it once and clears it */
    int move_failed; /* the mark was refused or not written: back to serving (or reading);
                      * the glue answers the move's caller and clears it */

    /* counters, read by metrics */
    uint64_t issued;
    uint64_t writes;         /* writes acknowledged */
    uint64_t write_failures; /* writes failed or unknown */
    uint64_t fence_failures; /* bad version: another primary took over */
    uint64_t short_waits;    /* issue answered LEAF_EAGAIN for lack of headroom */
};

/* Idle; base_batch 1..SEQUENCE_MAX_BATCH (0: SEQUENCE_DEFAULT_BATCH). */
void sequence_state_init(struct sequence_state *s, int64_t base_batch);

/*
 * The values of this sequence count in periods of `room` values (a business
 * numbering of width w: room 10^w, sequence/sequence_numbering.h); 0: none.
 * end is the last value of the period the numbering issues in now
 * (sequence_numbering_end()). Then a write never reserves past end (a
 * batch larger than the room left is clipped, never carried into the next
 * period, whatever a parked request asks), nor more than room / 10 values
 * (at least 1) above what it covers, so a crash or failover costs at most a
 * gap inside the period (docs/id-shapes.md, "Business numbers"). The glue
 * sets it under the sequence's lock on every request, before the action
 * that follows; a write never goes below the acknowledged max.
 */
void sequence_state_set_room(struct sequence_state *s, int64_t room, int64_t end);

/*
 * Starts the sequence as a new primary in the lease's current term: read,
 * (create,) fence. create_start > 0 lets a missing node be created so that
 * the first ID is create_start (autocreate: 1); 0 answers LEAF_ENOTFOUND
 * instead. A request still in flight from an older start is waited for and
 * its result dropped. LEAF_EUNAVAIL when the lease is not primary.
 */
leaf_status_t sequence_state_start(struct sequence_state *s, const struct sequence_lease *l,
                                   int64_t create_start);

/* Back to idle; a request in flight is abandoned (its session is gone) and its result dropped. */
void sequence_state_stop(struct sequence_state *s);

/*
 * Issues n consecutive IDs *first .. *first + n - 1 at now_ms, starting at `start` (0: the
 * last ID + 1), which must be above the last ID: the values between are skipped (a gap, never
 * issued; a business numbering starts a new period so, sequence_numbering.h; the caller
 * computes start from s->last under the same lock). Returns:
 *   LEAF_OK        issued;
 *   LEAF_EAGAIN    nothing issued: starting, revalidating, or the acknowledged headroom
 *                  is short; park the request until the next completion;
 *   LEAF_EUNAVAIL  nothing issued: not primary, not started in this term, fenced, corrupt
 *                  node, or the liveness window ran out;
 *   LEAF_ENOTFOUND the sequence does not exist (and may not be created);
 *   LEAF_ERANGE    the sequence would pass INT64_MAX;
 *   LEAF_EINVAL    n < 1, or start at or below the last ID.
 */
leaf_status_t sequence_state_issue_from(struct sequence_state *s, struct sequence_lease *l,
                                        int64_t now_ms, int64_t n, int64_t start, int64_t *first);

/*
 * The request to perform now, if any: returns 1 and fills *a (the request is
 * then in flight), 0 when there is nothing to do (or it must wait: one in
 * flight, not connected, not primary, backing off after a failure).
 */
int sequence_state_action(struct sequence_state *s, struct sequence_lease *l, int64_t now_ms,
                          struct sequence_action *a);

/*
 * The result of the request with this token. data/len/version: READ with
 * SEQUENCE_RESULT_OK only. A definite answer to a CREATE or WRITE renews the
 * lease (sent at the action's sent_ms). LEAF_EINVAL when the token is not the
 * request in flight (a late or repeated result), which changes nothing.
 */
leaf_status_t sequence_state_done(struct sequence_state *s, struct sequence_lease *l,
                                  uint64_t token, int64_t now_ms, enum sequence_result r,
                                  const char *data, size_t len, int32_t version);

/*
 * A cached "absent" or "unreadable" answer (MISSING, CORRUPT) older than
 * SEQUENCE_RECHECK_MS is dropped: the record is read again (READING) when the
 * lease is primary in the sequence's term. Returns 1 when it moved to READING.
 * sequence_state_issue_from() calls it itself.
 */
int sequence_state_recheck(struct sequence_state *s, const struct sequence_lease *l,
                           int64_t now_ms);

/* The record was just created on this node (admin create): a cached MISSING reads again now. */
void sequence_state_created(struct sequence_state *s);

/*
 * The local floor, read back from the data dir at start: the sequence will
 * never start at or below it. Sets it as is (the file's last line wins, and a
 * giveback may have lowered it); not marked dirty.
 */
void sequence_state_set_floor(struct sequence_state *s, int64_t floor);

/*
 * After sequence_state_stop() of a sequence that was serving: the giveback
 * write for the glue to send before the node leaves the line, so that the
 * next primary starts right after the last ID issued here. A WRITE of the
 * last ID issued, conditional on the version this primary last wrote (or the
 * version its write still in flight would leave: ZooKeeper applies one
 * session's requests in order, and if that write fails the giveback fails
 * too). Never below an issued ID: the lease is lost first, so nothing is
 * issued after stop. Returns 1 and fills *a (token 0), or 0 when there is
 * nothing to give back (nothing above the last ID, a write in doubt, or not
 * serving). At most once per stop.
 */
int sequence_state_giveback(struct sequence_state *s, struct sequence_action *a);

/*
 * The giveback's outcome: on success, while the sequence is still stopped,
 * the record and the floor are the last ID issued (the floor is lowered:
 * nothing above it was issued). Anything else changes nothing.
 */
void sequence_state_giveback_done(struct sequence_state *s, enum sequence_result r);

/*
 * Moves the home to region `to` (docs/regions.md, "Moving a home"): a serving
 * sequence stops issuing at once (MOVING: requests park), waits for a write in
 * flight, then writes {"max":F,"moved":to} with the version it holds, F the
 * acknowledged max, so that every ID this region ever issued is <= F and
 * every later write of an older primary fails. Acknowledged: MOVED, for good.
 * Refused (a newer primary wrote the record) or failed for sure: move_failed
 * is set and the sequence reads again (refused) or serves again (failed).
 * LEAF_OK when moving or already moved to `to`; LEAF_EAGAIN when not serving
 * yet (starting, fencing: ask again); LEAF_EEXIST when moving or moved to
 * another region; LEAF_EUNAVAIL when not primary in this term, or dead
 * (fenced, corrupt, missing: LEAF_ENOTFOUND).
 */
leaf_status_t sequence_state_move(struct sequence_state *s, const struct sequence_lease *l,
                                  const char *to);

/* IDs issuable without a write: acknowledged max - last issued (0 when not serving). */
int64_t sequence_state_headroom(const struct sequence_state *s);

#endif
