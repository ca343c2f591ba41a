#ifndef LEAF_SEQUENCE_SERVICE_H
#define LEAF_SEQUENCE_SERVICE_H

/*
 * Cluster-wide strictly increasing sequences, wired together: the pure
 * state machine of sequence/ (lease, per-sequence state, election decision,
 * znode payloads) with a ZooKeeper session of its own, driven by the
 * control loop.
 *
 * Election: the node creates an EPHEMERAL_SEQUENTIAL child of
 * /leafd/{leaf.name}/primary holding its HTTP and RESP addresses; the lowest
 * child is the primary; every other node watches only its predecessor.
 * Liveness: the primary rewrites its own child every T/6 (T: the negotiated
 * session timeout); the leader's answers renew the lease, and the primary
 * issues only while less than 2/3 T passed since the send time of the last
 * answered write (sequence_state.h says why that is safe).
 *
 * Threads and ownership:
 * - The lease, every sequence's state and waiters, and the cluster view are
 *   guarded by one mutex (lock); event-loop threads take it to issue, the
 *   control thread to apply ZooKeeper results.
 * - The ZooKeeper handle, the election bookkeeping and the timers belong to
 *   the control thread. Event-loop threads ask it for work (a sequence that
 *   needs a write, a demotion, an admin create) through a flag or list under
 *   the lock and uv_async_send.
 * - The service outlives the event loops (a producer of wake-ups must):
 *   sequence_service_stop() leaves ZooKeeper at a graceful stop, and
 *   sequence_service_free() runs after the loops have been joined.
 * Times are monotonic milliseconds read at the moment of use.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "leaf_wait.h"
#include "sequence_numbering.h"
#include "sequence_record.h"
#include "status.h"

struct uv_loop_s;
struct zk_session;
struct sequence_service;

/* Subscribes to zk, the process's ZooKeeper session (NULL without ZooKeeper). */
leaf_status_t sequence_service_create(struct sequence_service **out, const struct leaf_config *cfg,
                                      struct uv_loop_s *control_loop, struct zk_session *zk);
/* Waits for the session and starts the election (no-op when sequences are off). */
leaf_status_t sequence_service_start(struct sequence_service *svc);
/* Stops issuing and leaves ZooKeeper at once, so the next node takes over; control thread. */
void sequence_service_stop(struct sequence_service *svc);
/*
 * The same, for an in-place upgrade that hands the ZooKeeper session to a new
 * process: stops issuing, writes the records back down and releases the lease
 * (unsharded), but keeps this node's election node in line and, sharded, its
 * owner node as it is (so its slots); the new process finds them by their owner,
 * the adopted session (docs/UPGRADING.md, "In place, without a restart").
 * Control thread.
 */
void sequence_service_stop_handover(struct sequence_service *svc);
/* After the event loops have ended. */
void sequence_service_free(struct sequence_service *svc);
int sequence_service_enabled(const struct sequence_service *svc);

/*
 * Issues n consecutive IDs *first .. *first + n - 1 of the sequence name.
 * LEAF_OK; LEAF_EAGAIN: parked (w is woken when the sequence changes);
 * LEAF_EUNAVAIL: this node cannot issue: *where says where the primary is
 * (known = 0: none elected, or this primary's window ran out); LEAF_ENOTFOUND:
 * no such sequence (and leafd.sequence.autocreate is off); LEAF_ERANGE: past
 * INT64_MAX; LEAF_ENOMEM: too many sequences. Any event-loop thread.
 */
leaf_status_t sequence_service_next(struct sequence_service *svc, const char *name, size_t len,
                                    int64_t n, int64_t *first, int may_create, struct leaf_wait *w,
                                    struct sequence_where *where);

/*
 * Business numbers (docs/id-shapes.md, "Business numbers"): n values of the numbering d's
 * sequence ("@<name>", out of the sequence routes' reach) at the primary's clock's period
 * (sequence_service_numbering_ period), the period kept in the values
 * (sequence/sequence_numbering.h). As sequence_service_next(), and LEAF_ERANGE when the period's
 * counter would pass its width.
 */
leaf_status_t sequence_service_number(struct sequence_service *svc,
                                      const struct sequence_numbering *d, int64_t period, int64_t n,
                                      int64_t *first, struct leaf_wait *w,
                                      struct sequence_where *where);

/*
 * The numberings' definitions, the table /leafd/{leaf.name}/numberings
 * (sequence_service_numbering.c). Any event-loop thread.
 * find: d's definition when known; else, unless the table was read after since_ms
 * (monotonic), a read is asked for and w parked (LEAF_EAGAIN); LEAF_ENOTFOUND when the
 * table read since then has no such name.
 * create: adds d (its sequence at 0, then its line) as a parked job (ticket as
 * sequence_service_create_seq): LEAF_OK, LEAF_EEXIST, LEAF_EUNAVAIL, LEAF_ENOMEM.
 * update: d replaces the definition of d->name, parked as create: LEAF_OK, LEAF_ENOTFOUND,
 * LEAF_EINVAL (the width or the period differ: its counter's values would mean other
 * numbers), LEAF_EUNAVAIL. delete: removes the definition, then its sequence: LEAF_OK,
 * LEAF_ENOTFOUND, LEAF_EUNAVAIL. A create into a full table (SEQ_NUMBERINGS_MAX, 256):
 * LEAF_ERANGE, nothing created.
 * list: the table read now, as a parked job; *n definitions into out (room for cap).
 * period: the period index and the local day of the wall clock wall_ms in d's time zone
 * (its tzdata file read once per process); LEAF_ENOTFOUND when the zone has no readable file.
 */
leaf_status_t sequence_service_numbering_find(struct sequence_service *svc, const char *name,
                                              size_t len, int64_t since_ms,
                                              struct sequence_numbering *d, struct leaf_wait *w);
leaf_status_t sequence_service_numbering_create(struct sequence_service *svc,
                                                const struct sequence_numbering *d, int *ticket,
                                                struct leaf_wait *w);
leaf_status_t sequence_service_numbering_update(struct sequence_service *svc,
                                                const struct sequence_numbering *d, int *ticket,
                                                struct leaf_wait *w);
leaf_status_t sequence_service_numbering_delete(struct sequence_service *svc, const char *name,
                                                int *ticket, struct leaf_wait *w);
leaf_status_t sequence_service_numbering_list(struct sequence_service *svc,
                                              struct sequence_numbering *out, int cap, int *n,
                                              int *ticket, struct leaf_wait *w);
leaf_status_t sequence_service_numbering_period(struct sequence_service *svc,
                                                const struct sequence_numbering *d, int64_t wall_ms,
                                                int64_t *period, int64_t *day);

/*
 * The last ID issued of the sequence (GET sequence:<name>), answered by the
 * primary: LEAF_OK with *last (0: none yet), else as sequence_service_next().
 */
leaf_status_t sequence_service_last(struct sequence_service *svc, const char *name, size_t len,
                                    int64_t *last, struct leaf_wait *w,
                                    struct sequence_where *where);

/*
 * Creates the sequence so that its first ID is start (admin). The first call
 * queues the create and returns LEAF_EAGAIN with *ticket set; later calls
 * with the ticket return LEAF_EAGAIN until ZooKeeper answered, then LEAF_OK,
 * LEAF_EEXIST or LEAF_EUNAVAIL (the ticket is then spent). w is woken when
 * the answer arrives; cancelling w abandons the ticket.
 */
leaf_status_t sequence_service_create_seq(struct sequence_service *svc, const char *name,
                                          size_t len, int64_t start, int *ticket,
                                          struct leaf_wait *w);

/*
 * Keyed sequences (docs/keyed-sequences.md): one strictly increasing sequence per key of a
 * space, the keys sharing persisted maxima by section (sequence/sequence_keyed.h decides,
 * sequence_service_keyed.c performs). A key is owned as a sequence is: by the primary, or
 * sharded by the owner of the slot of the RESP key "keyed:<space>:<key>".
 *
 * next: n consecutive IDs *first .. *first + n - 1 of key (1-200 bytes, any byte) in space.
 * As sequence_service_next(): LEAF_OK; LEAF_EAGAIN (parked, w woken); LEAF_EUNAVAIL (*where
 * says where the owner is; known = 0: none now); LEAF_ENOTFOUND: no such space (the space
 * table is read again when a name is not known, as numberings are; with
 * leafd.sequence.autocreate and may_create, the caller's 'create' right, an absent space is
 * created, step SEQUENCE_KEYED_DEFAULT_STEP, and the call goes on); LEAF_ERANGE: past
 * INT64_MAX; LEAF_ENOMEM. Any event-loop thread.
 * create: a space with its step (1 .. SEQUENCE_KEYED_MAX_STEP), a parked job with a ticket as
 * sequence_service_create_seq: LEAF_OK, LEAF_EEXIST, LEAF_EINVAL (name or step),
 * LEAF_ERANGE (SEQUENCE_KEYED_MAX_SPACES), LEAF_EUNAVAIL.
 * list: the spaces as this node knows them (read now, a parked job as create); *n views into
 * out (room for cap).
 * prefetch: starts loading key's place in the table of resident keys into the cache, for a
 * next of the same key soon after (the keys of a pipelined batch, before their turn); takes
 * no lock and changes nothing; nothing for a space not known here. Any event-loop thread.
 */
struct sequence_keyed_view {
    char name[65];
    int64_t step;
    uint64_t issued, resident, writes, evictions; /* this node's, since it started */
};
leaf_status_t sequence_service_keyed_next(struct sequence_service *svc, const char *space,
                                          size_t space_len, const char *key, size_t key_len,
                                          int64_t n, int may_create, int64_t *first,
                                          struct leaf_wait *w, struct sequence_where *where);
void sequence_service_keyed_prefetch(struct sequence_service *svc, const char *space,
                                     size_t space_len, const char *key, size_t key_len);
leaf_status_t sequence_service_keyed_create(struct sequence_service *svc, const char *space,
                                            size_t len, int64_t step, int *ticket,
                                            struct leaf_wait *w);
leaf_status_t sequence_service_keyed_list(struct sequence_service *svc,
                                          struct sequence_keyed_view *out, int cap, int *n,
                                          int *ticket, struct leaf_wait *w);

/* The keyed spaces this node knows now, with its counters (for metrics; no ZooKeeper call):
 * how many views were written into out (room for cap). Any thread. */
int sequence_service_keyed_views(struct sequence_service *svc, struct sequence_keyed_view *out,
                                 int cap);

/*
 * Moves the home of sequence `name` to region `to` (POST /api/region/move, docs/regions.md,
 * "Moving a home"): the primary stops issuing it at once and marks its record
 * {"max":F,"moved":to} with a conditional write. LEAF_OK with *max = F once marked (every ID
 * this region ever issued of it is <= F; asked again, the same answer); LEAF_EAGAIN: parked
 * on w until the mark is answered; LEAF_EUNAVAIL with *where: not the primary (redirect);
 * LEAF_ENOTFOUND; LEAF_EEXIST: moving or moved to another region; LEAF_EINVAL: sharded
 * sequences do not move. Event-loop threads.
 */
leaf_status_t sequence_service_move(struct sequence_service *svc, const char *name, size_t len,
                                    const char *to, int64_t *max, struct leaf_wait *w,
                                    struct sequence_where *where);

/*
 * A moved home's record in this region (POST /api/region/adopt): creates {"max":max}, as
 * sequence_service_create_seq() with start max + 1, and counts a record that holds exactly
 * that, unmarked, as created (a retried move); any other record: LEAF_EEXIST.
 */
leaf_status_t sequence_service_adopt(struct sequence_service *svc, const char *name, size_t len,
                                     int64_t max, int *ticket, struct leaf_wait *w);
/* The home is this region's now: a request that found the sequence missing here reads it again
 * at once (rather than after SEQUENCE_RECHECK_MS). Any thread. */
void sequence_service_adopted(struct sequence_service *svc, const char *name, size_t len);

/* Steps down and gets back in line behind the others (POST /api/cluster/demote). Any thread. */
leaf_status_t sequence_service_demote(struct sequence_service *svc);

/* The nodes in line, lowest first; returns how many were written (at most cap). */
size_t sequence_service_peers(struct sequence_service *svc, struct sequence_peer *out, size_t cap);

struct sequence_service_stats {
    int enabled, primary, live, connected;
    int sharded;             /* sharding on (a slot map exists): primary = owns slots */
    int sharding_conf;       /* leafd.sequence.sharding */
    char sharding_held[512]; /* the line's nodes that do not shard ("" none; docs/UPGRADING.md) */
    int slots;               /* sharded: slots this node issues */
    uint64_t shard_epoch, slots_in, slots_out;
    struct sequence_where where; /* the primary as this node knows it */
    int64_t lease_left_ms;
    uint64_t elections, demotions, fence_failures, writes, write_failures, issued;
    size_t sequences;
    int64_t min_headroom; /* least headroom of any serving sequence; -1 when none */
    /* keyed sequences (docs/keyed-sequences.md): the spaces known here, their resident keys
     * and the bytes those take, sections fenced since the start */
    int keyed_spaces;
    uint64_t keyed_resident, keyed_fences;
    size_t keyed_bytes;
};
void sequence_service_stats(struct sequence_service *svc, struct sequence_service_stats *st);

/* Sharded (leafd.sequence.sharding): the slot map's ranges, each with the index of its owner
 * in peers (-1: no live owner known). peers gets the nodes in line (SEQUENCE_MAX_PEERS). */
struct sequence_shard_view {
    int start, end;
    int owner;
};
#define SEQUENCE_SHARD_VIEW_MAX 256
size_t sequence_service_shards(struct sequence_service *svc, struct sequence_peer *peers,
                               size_t *npeers, struct sequence_shard_view *out, size_t cap);
int sequence_service_sharded(const struct sequence_service *svc);
/* 1 while a node configured to shard has not yet read the slot map, or waits for the
 * barrier before it issues the slots the map gives it (an in-place upgrade's new
 * process waits for this before it accepts). Control thread. */
int sequence_service_shard_settling(const struct sequence_service *svc);

/* Calls fn for every sequence (name, persisted max, last issued, headroom, phase name). */
void sequence_service_each(struct sequence_service *svc,
                           void (*fn)(const char *name, int64_t acked_max, int64_t last,
                                      int64_t headroom, const char *phase, void *arg),
                           void *arg);

#endif
