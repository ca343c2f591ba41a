#ifndef LEAF_SEQUENCE_SERVICE_STATE_H
#define LEAF_SEQUENCE_SERVICE_STATE_H

/*
 * What the files of src/node/sequence share, each calling only the ones
 * below it: sequence_service.c (the request path, the life cycle, the views)
 * over sequence_service_zk.c (the election and the ZooKeeper calls), over
 * sequence_service_lease.c (the lease node: taking over, the primary's heartbeat),
 * over sequence_service_keyed.c (keyed sequences) and sequence_service_keyed_space.c (their
 * spaces), over sequence_service_shard.c (sharding), over sequence_service_heal.c (healing, the
 * give-back), over sequence_service_keyed_give.c (keyed sections given back), over
 * sequence_service_floor.c (the local floors' file), over sequence_service_table.c (the table).
 * Each file's functions carry its name. The floors' file's calls have their own header
 * (sequence_service_floor.h), included only by the files above it. Private to this folder; the
 * public interface is sequence_service.h, which only sequence_service.c includes here. Layer: the
 * node (src/node/sequence), the floor of the sequence room.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <uv.h>

#include "config.h"
#include "leaf_wait.h"
#include "lockstat.h"
#include "node_jobs.h"
#include "sequence_keyed.h"
#include "sequence_numbering.h"
#include "sequence_record.h"
#include "sequence_shard.h"
#include "sequence_state.h"
#include "status.h"
#include "validate.h"
#include "zk_session.h"

#define SEQ_MAX_NAMES 1000000 /* sequences one node keeps state for */
#define SEQ_CRON_MS 50        /* retries, heartbeats, the view */
#define SEQ_VIEW_MS 1000      /* standbys and the primary re-read the line this often */
#define SEQ_MAX_CREATES 64    /* admin creates in flight */
#define SEQ_DIR_MAX 192       /* /leafd/{leaf.name}/sequences */
#define SEQ_PATH_MAX 512

/* Tags of the ZooKeeper calls (zk_event.op). */
enum {
    OP_ELECT_CREATE = 1,
    OP_ELECT_LIST,
    OP_ELECT_WATCH,
    OP_HEARTBEAT,
    OP_LEASE_READ,
    OP_LEASE_CLAIM,
    OP_LEASE_RELEASE,
    OP_ELECT_DELETE,
    OP_ORPHAN_DELETE,
    OP_PEER_GET,
    OP_SEQ,
    OP_ADMIN_CREATE,
    OP_SEQ_GIVEBACK,      /* sequence_service_heal.c */
    OP_PARENT_CREATE,     /* sequence_service_heal.c; the answer is not needed */
    OP_NUMBERING_SEQ,     /* sequence_service_numbering.c: a new numbering's sequence */
    OP_NUMBERING_READ,    /* the table of definitions */
    OP_NUMBERING_WRITE,   /* the table with a line added, changed or removed */
    OP_NUMBERING_SEQ_DEL, /* a deleted numbering's sequence */
    OP_SHARD_READ,        /* sequence_service_shard.c: the map */
    OP_SHARD_WRITE,       /* the coordinator's new map */
    OP_SHARD_HB,          /* this node's owner node: heartbeat and applied epoch */
    OP_SHARD_HB_LIST,     /* the owner nodes, for the barrier */
    OP_SHARD_HB_GET,
    OP_SHARD_HB_DELETE,
    OP_SHARD_GATE_MEMBERS, /* the gate: the member records' names */
    OP_SHARD_GATE_MEMBER,  /* one member record */
    OP_SHARD_GATE_OWNERS,  /* the owner nodes' names */
    OP_SHARD_LAST = OP_SHARD_GATE_OWNERS,
    OP_KEYED_SPACE,      /* sequence_service_keyed.c: a space's definition (arg: the lookup) */
    OP_KEYED_SECTION,    /* a section's read or write (arg: sequence_service_keyed_arg) */
    OP_KEYED_CREATE,     /* an admin create of a space */
    OP_KEYED_DIR,        /* /leafd/{leaf.name}/keyed, created again for a create */
    OP_KEYED_LIST,       /* the children of /keyed */
    OP_KEYED_LIST_GET,   /* a listed space's definition */
    OP_KEYED_GIVEBACK,   /* sequence_service_keyed_give.c: a section written back down */
    OP_KEYED_AUTO,       /* sequence_service_keyed.c: a space created on first use (arg: lookup) */
    OP_KEYED_AUTO_DIR,   /* /keyed created again for it (arg: the lookup) */
    OP_ADMIN_ADOPT_READ, /* an adopt's create found the record: is it the one it would write? */
};

/* One sequence; guarded by svc->lock. Never freed while the service runs. */
struct seq_entry {
    struct seq_entry *next; /* hash chain */
    uint32_t idx;
    int dirty;        /* on the dirty list */
    int floor_queued; /* on the floors' list (sequence_service_floor.c) */
    struct sequence_state st;
    struct leaf_wait_list waiters;
    int slot;     /* Redis Cluster slot of "sequence:<name>" (sharding) */
    uint32_t gen; /* sharding: svc->shards.gen[slot] it was started under */
    size_t len;
    char name[VALIDATE_TAG_MAX + 1];
};

#define SEQ_FLOOR_FLUSH_MS 200    /* changed floors are appended this often */
#define SEQ_GIVEBACK_WAIT_MS 2000 /* a stop waits this long at most for its givebacks' answers */

/*
 * The local floors' file (sequence_service_floor.c, sequence/sequence_floor.h).
 * The list is guarded by svc->lock; everything else belongs to the control
 * thread.
 */
struct seq_floors {
    int fd;           /* the log, open for appending; -1 when none */
    int need_compact; /* rewrite it whole at the next flush (new, foreign, torn or failed) */
    int timer_on;
    uint64_t lines; /* lines in the file */
    int64_t error_logged_ms;
    uv_timer_t timer;
    char path[600];
    struct seq_entry **list; /* guarded by lock: entries whose floor changed */
    size_t n, cap;
};

/* Business numbers (sequence_service_numbering.c). */
#define SEQ_NUMBERING_SEQ_PREFIX                                                                   \
    "@" /* + name: the numbering's sequence (VALIDATE_NUMBERING_MARK) */
#define SEQ_NUMBERING_SEQ_MAX (sizeof(SEQ_NUMBERING_SEQ_PREFIX) + SEQUENCE_NUMBERING_NAME_MAX)
#define SEQ_NUMBERINGS_MAX 256
#define SEQ_NUMBERING_JOBS 16
#define SEQ_NUMBERING_FRESH_MS 2000 /* an older cache is read again in the background */
#define SEQ_NUMBERING_TRIES 5       /* a create whose write lost a race reads and writes again */

enum seq_numbering_kind {
    SEQ_NUMBERING_LIST,
    SEQ_NUMBERING_CREATE,
    SEQ_NUMBERING_UPDATE,
    SEQ_NUMBERING_DELETE
};

/* A parked numbering job: a create, update or delete (its definition) or a read of the table. */
struct seq_numbering_job {
    struct node_job job; /* first: the slot is one of jobs' (src/node/common/node_jobs.h) */
    enum seq_numbering_kind kind;
    int tries;
    int seq_done;                  /* a create: its sequence exists */
    struct sequence_numbering def; /* a delete: the name only */
};

struct seq_zone;

/*
 * The numberings. defs, n, read_ms, refresh, waiters and the jobs are guarded by svc->lock;
 * running and version belong to the control thread; zones has its own lock (zlock), taken
 * alone.
 */
struct seq_numberings {
    struct sequence_numbering defs[SEQ_NUMBERINGS_MAX];
    int n;
    int64_t read_ms; /* monotonic ms of the last read answered; -1 none */
    int refresh;     /* an event loop asks for a read (a name not known) */
    struct leaf_wait_list waiters;
    struct seq_numbering_job slots[SEQ_NUMBERING_JOBS];
    struct node_jobs jobs;
    int running;     /* the job being run (one at a time), -1 none; -2 the refresh */
    int32_t version; /* of the table read; -1 when it does not exist */
    char path[SEQ_DIR_MAX];
    pthread_mutex_t zlock;
    struct seq_zone *zones;
    int nzones; /* zones kept (zlock): SEQ_ZONES_MAX at most */
};

/* An admin create; guarded by svc->lock. */
struct seq_create {
    struct node_job job; /* first: the slot is one of jobs' (src/node/common/node_jobs.h) */
    int repaired;        /* the parents were created again once for it */
    int adopt;           /* a moved home's create: a record of exactly start - 1 counts as made */
    int64_t start;
    char name[VALIDATE_TAG_MAX + 1];
};

/*
 * Sharded sequences (sequence_service_shard.c, sequence/sequence_shard.h). The
 * map, own and gen are guarded by the service's lock; the rest belongs to
 * the control thread.
 *
 * ZooKeeper: /leafd/{leaf.name}/shards holds the map (written by the node
 * the election makes primary: the coordinator); /leafd/{leaf.name}/owners/
 * n_<counter> is each node's owner node, persistent, written every T/6 with
 * "applied <epoch>" (the heartbeat that renews its lease, and the promise
 * that it issues no slot the map of that epoch gives to another) and
 * "released" when it stops. A node issues a slot it gained in map E only
 * after every other owner node says released, or applied >= E, or belongs
 * to a node out of the line whose last heartbeat is over T old on the
 * server's clock (times 4/3 on ours): then nobody else can issue it.
 */
#define SEQ_GATE_MEMBERS 64 /* member records the gate reads */

/*
 * The gate (sequence/sequence_shard_gate.h, docs/UPGRADING.md): a node
 * configured with leafd.sequence.sharding runs the ordinary election until a
 * slot map exists; the coordinator writes the first one only once every node
 * of the line takes part, after it stopped issuing as the ordinary primary and
 * its owner node is written. A map, once there, is never dropped.
 */
struct seq_gate_member {
    char http[64], version[24];
    int sharding;
};

struct seq_shards {
    int conf; /* leafd.sequence.sharding */
    int on;   /* sharded now (a map exists); written under lock, read by the views unlocked */
    char path_map[SEQ_DIR_MAX], dir_owners[SEQ_DIR_MAX];
    char hb_path[SEQ_PATH_MAX]; /* my owner node, "" until in line */
    long long self_id;          /* my election node's counter, -1 until in line */
    /* control thread */
    int reading, writing, hb_inflight, hb_again, hb_listing, hb_reads_left, barrier_bad;
    int released;    /* "released" written on hb_path: never heartbeat it again */
    uint64_t hb_gen; /* +1 per owner node: answers for an older one are ignored */
    int map_exists, coordinator;
    int32_t map_version;
    long long live[SEQUENCE_SHARD_MAX_NODES];
    int nlive;
    uint64_t applied;       /* the epoch whose losses are stopped and given back */
    uint64_t barrier_epoch; /* gains of this epoch wait for the barrier; 0: none */
    uint64_t round_epoch;   /* the barrier_epoch the owner nodes being read are judged against */
    int64_t hb_sent_ms, last_hb_ms, last_read_ms, last_barrier_ms;
    int64_t hb_mtime, hb_answer_ms; /* the server's time of my last heartbeat, and ours */
    int hb_confirmed;               /* my owner node answered a write (this name) */
    uint64_t list_gen, absent_gen;  /* lists seen; the list after which the map was absent */
    int read_again;
    /* the gate (control thread) */
    uint64_t gate_round;
    int gate_members_left, gate_owners_left, gate_bad, gate_done;
    int64_t last_gate_ms;
    struct seq_gate_member gate_m[SEQ_GATE_MEMBERS];
    int gate_nm;
    char **gate_owners;
    int gate_nowners;
    long long part[SEQUENCE_SHARD_MAX_NODES]; /* line nodes that take part (last round) */
    int npart;
    char held[512]; /* guarded by lock: who holds sharding back, "" nobody */
    /* guarded by lock */
    struct sequence_shard_map map;
    uint8_t *own;  /* [16384]: 1 when this node issues the slot */
    uint32_t *gen; /* [16384]: +1 each time a slot becomes mine */
    uint64_t moves_in, moves_out;
};

/*
 * Keyed sequences (docs/keyed-sequences.md): sequence_service_keyed.c performs what
 * sequence/sequence_keyed.h decides; sequence_service_keyed_give.c gives sections back.
 * A space not known here is read from ZooKeeper by a lookup (requests park on it); a
 * space found absent answers "not found" for SEQ_KEYED_ABSENT_MS, as numberings cache, or
 * with leafd.sequence.autocreate is created by the lookup (step SEQUENCE_KEYED_DEFAULT_STEP).
 */
#define SEQ_KEYED_LOOKUPS 64     /* unknown spaces read at once */
#define SEQ_KEYED_JOBS 16        /* admin creates and lists in flight */
#define SEQ_KEYED_ABSENT_MS 2000 /* a space found absent is not read again before this */
#define SEQ_KEYED_FAILED_MS 500  /* nor one whose read failed (503 meanwhile) */
#define SEQ_KEYED_CREATE_TRIES 2 /* a create whose parent was gone creates it once */

enum seq_keyed_lookup_state {
    SEQ_KEYED_FREE = 0,
    SEQ_KEYED_QUEUED, /* to be read by the control thread */
    SEQ_KEYED_SENT,   /* read (or, autocreate, created), answer awaited */
    SEQ_KEYED_ABSENT, /* no such space, until until_ms */
    SEQ_KEYED_FAILED, /* the read failed, until until_ms */
};

/* A space being looked up; guarded by svc->lock. */
struct seq_keyed_lookup {
    enum seq_keyed_lookup_state state;
    int create; /* leafd.sequence.autocreate and a waiter who may create: absent -> created */
    int tries;  /* creates sent (SEQ_KEYED_CREATE_TRIES) */
    int64_t until_ms;
    size_t len;
    char name[SEQUENCE_KEYED_NAME_MAX + 1];
    struct leaf_wait_list waiters;
};

enum seq_keyed_kind { SEQ_KEYED_CREATE, SEQ_KEYED_LIST };

/* A parked admin job: a create (name, step) or a list. */
struct seq_keyed_job {
    struct node_job job; /* first: the slot is one of jobs' (src/node/common/node_jobs.h) */
    enum seq_keyed_kind kind;
    int tries; /* a create: sent so often */
    int left;  /* a list: definitions still to be read (control thread) */
    int64_t step;
    size_t len;
    char name[SEQUENCE_KEYED_NAME_MAX + 1];
};

/* core, gensum, waiters, lookups and the jobs' slots are guarded by svc->lock; running and dir
 * belong to the control thread (dir is written once at start-up). */
struct seq_keyed_svc {
    struct sequence_keyed *core; /* NULL: leafd.keyed.max.keys is 0, or sequences are off */
    /* [space * SEQUENCE_KEYED_SECTIONS + section], sharded: the sum of svc->shards.gen over
     * the section's slots when it was started; another sum means a slot arrived since */
    uint32_t *gensum;
    struct leaf_wait_list waiters[SEQUENCE_KEYED_MAX_SPACES]; /* parked requests, per space */
    struct seq_keyed_lookup lookups[SEQ_KEYED_LOOKUPS];
    struct seq_keyed_job slots[SEQ_KEYED_JOBS];
    struct node_jobs jobs;
    int running;       /* the job being run, -1 none */
    char **list_names; /* a list: the spaces whose definitions are being read */
    int list_n;
    char dir[SEQ_DIR_MAX];
};

struct sequence_service {
    const struct leaf_config *cfg;
    uv_loop_t *loop;
    int enabled, started;

    /* control thread */
    struct zk_session *zk; /* the process's one session (node_zk) */
    struct zk_sub zsub;    /* this service's calls and events on it */
    int zk_open;           /* subscribed and started: ZooKeeper calls may be made */
    uv_async_t async;      /* woken by the event loops (creates, dirty records, demotion) */
    uv_timer_t cron;
    char dir_primary[SEQ_DIR_MAX], dir_seqs[SEQ_DIR_MAX];
    char self_data[2 * SEQUENCE_PEER_ADDR + 16];
    struct sequence_where self;
    char mine[SEQ_PATH_MAX]; /* my election node's full path, "" when none */
    int64_t
        recorded_sid; /* the session written to sequence-session (sequence_service_previous.c) */
    int creating, listing, heartbeat_inflight, deleting, stopping;
    /* 1 from a demotion until its election node's delete is answered (or the session
     * expired): the election's answers are ignored (sequence_service_zk.c, leave_line()). */
    int leaving;
    /* Taking over (see sequence_service_lease.c, "the lease node"): 0 no, 1 reading the
     * lease node, 2 claiming it, 3 waiting out the previous primary's lease. */
    int taking_over;
    int lease_released; /* the previous primary released the lease node */
    int64_t lease_old_mtime, takeover_sent_ms, takeover_at_ms;
    uint64_t fenced_term; /* the last term whose first fenced sequence was logged (on_seq()) */
    char lease_path[SEQ_DIR_MAX]; /* /leafd/{leaf.name}/lease */
    int64_t create_sent_ms, heartbeat_sent_ms, last_heartbeat_ms, last_view_ms;
    int connected_once;
    char **line; /* the last list of children (view), owned here */
    int nline;
    int peer_reads_left; /* OP_PEER_GET answers still to come for the view being built */

    /* guarded by lock */
    pthread_mutex_t lock;
    struct lockstat lock_stat; /* lock's contention on the ID path (LEAFD_LOCK_STATS) */
    struct sequence_lease lease;
    int connected;
    struct seq_entry **slots;
    size_t nslots, count;
    struct seq_entry **by_idx;
    size_t idx_cap;
    struct seq_entry **dirty;
    size_t ndirty, dirty_cap;
    int demote_requested;
    int demote_was_primary; /* the demote request stopped issuing (sequence_service_demote) */
    struct seq_create creates[SEQ_MAX_CREATES];
    struct node_jobs jobs; /* creates as parked jobs */
    struct sequence_where where;
    /* First in line and taking over, with no lease to wait out (sequence_service_zk.c,
     * on_list()): requests park until the election lands rather than being told no_primary. */
    int takeover_park;
    struct sequence_peer peers[SEQUENCE_MAX_PEERS], next_peers[SEQUENCE_MAX_PEERS];
    size_t npeers, next_npeers;
    uint64_t elections, demotions;

    /* sequence_service_heal.c, sequence_service_floor.c */
    struct seq_floors floors;
    size_t giveback_pending;     /* control thread */
    int64_t parents_repaired_ms; /* control thread */
    uint64_t giveback_ok, giveback_refused;

    struct seq_shards shards;
    struct seq_numberings numberings;
    struct seq_keyed_svc keyed;
};

/* sequence_service_table.c, the floor every other sequence file stands on; lock held.
 * find: NULL when unknown; get: adds it (NULL: out of memory or full). */
void sequence_service_table_mark_dirty(struct sequence_service *svc, struct seq_entry *e);
void sequence_service_table_wake_all(struct sequence_service *svc);
struct seq_entry *sequence_service_table_find(struct sequence_service *svc, const char *name,
                                              size_t len);
struct seq_entry *sequence_service_table_get(struct sequence_service *svc, const char *name,
                                             size_t len);
/* A ZooKeeper answer as the state machines read it (sequence_state.h). */
enum sequence_result sequence_service_table_result(enum zk_result r);
/* The Redis Cluster slot of the RESP key "sequence:<name>" (docs/cluster.md). */
int sequence_service_table_slot(const char *name, size_t len);

/* sequence_service_numbering.c: set-up and teardown (create, free), the control thread's
 * work (run: the next job; on_zk: an OP_NUMBERING_* answer; expired: the session's jobs
 * fail). */
void sequence_service_numbering_init(struct sequence_service *svc);
void sequence_service_numbering_free(struct sequence_service *svc);
void sequence_service_numbering_run(struct sequence_service *svc);
void sequence_service_numbering_on_zk(struct sequence_service *svc, const struct zk_event *ev);
void sequence_service_numbering_expired(struct sequence_service *svc);

/* sequence_service_heal.c: after sequence_state_done() on e (lock held): logs refused writes and a
 * ZooKeeper max below the floor, queues the floor, asks for a step-down when e gave up. */
void sequence_service_heal_after_done(struct sequence_service *svc, struct seq_entry *e);
/* The cluster's tree is gone (a list or create answered "no node"): create the parents again
 * (at most once per SEQ_VIEW_MS; control). */
void sequence_service_heal_parents(struct sequence_service *svc);
/* An admin create of name landed here: a cached "missing" is read again at once (control). */
void sequence_service_heal_created(struct sequence_service *svc, const char *name);
/* After sequence_service_zk_lose_primary(): sends every sequence's giveback write; returns how many
 * (control). */
size_t sequence_service_heal_giveback_send(struct sequence_service *svc);
/* A giveback write's answer (OP_SEQ_GIVEBACK; control). */
void sequence_service_heal_on_giveback(struct sequence_service *svc, const struct zk_event *ev);
/* At a stop: waits (at most SEQ_GIVEBACK_WAIT_MS) for the answers to the givebacks sent and
 * applies them; the session's other events go to their subscribers (this service, stopping,
 * drops its own) (control). */
void sequence_service_heal_giveback_drain(struct sequence_service *svc);

/* sequence_service_keyed.c, between sequence_service_zk.c and sequence_service_shard.c:
 * init/free at create/free; the rest on the control thread (run: lookups, jobs and section
 * actions; on_zk: an OP_KEYED_* answer but the giveback's; expired: the session's jobs fail). */
leaf_status_t sequence_service_keyed_init(struct sequence_service *svc);
void sequence_service_keyed_free(struct sequence_service *svc);
void sequence_service_keyed_run(struct sequence_service *svc);
void sequence_service_keyed_on_zk(struct sequence_service *svc, const struct zk_event *ev);
void sequence_service_keyed_expired(struct sequence_service *svc);
/* The keyed figures of sequence_service_stats() (lock held). */
struct sequence_service_stats;
void sequence_service_keyed_stats(struct sequence_service *svc, struct sequence_service_stats *st);

/* sequence_service_keyed_space.c, under sequence_service_keyed.c: learn (lock held): a space
 * from its definition's bytes, LEAF_EINVAL when malformed; run: the next admin job; on_zk: an
 * answer of a job's (OP_KEYED_CREATE, _DIR, _LIST, _LIST_GET); expired: the running job fails
 * (control thread). */
leaf_status_t sequence_service_keyed_space_learn(struct sequence_service *svc, const char *name,
                                                 const char *data, size_t len);
void sequence_service_keyed_space_run(struct sequence_service *svc);
void sequence_service_keyed_space_on_zk(struct sequence_service *svc, const struct zk_event *ev);
void sequence_service_keyed_space_expired(struct sequence_service *svc);

/* sequence_service_keyed_give.c, under sequence_service_heal.c: gives back every started
 * section none of whose slots this node may issue now (sequence_keyed_giveback), adding the
 * writes sent to svc->giveback_pending; returns how many (control). on_giveback: an
 * OP_KEYED_GIVEBACK answer. */
size_t sequence_service_keyed_give_send(struct sequence_service *svc);
void sequence_service_keyed_give_on_zk(struct sequence_service *svc, const struct zk_event *ev);
/* 1 when this node may issue slot now (lock held): primary, and sharded the slot is its own. */
int sequence_service_keyed_give_issuable(const struct sequence_service *svc, unsigned slot);

/* sequence_service_shard.c. init/free at create/free; the rest on the control thread, except
 * where (lock held). */
leaf_status_t sequence_service_shard_init(struct sequence_service *svc);
void sequence_service_shard_free(struct sequence_service *svc);
void sequence_service_shard_paths(struct sequence_service *svc);
void sequence_service_shard_on_list(struct sequence_service *svc, char **names, int n,
                                    int coordinator);
void sequence_service_shard_on_zk(struct sequence_service *svc, struct zk_event *ev);
int sequence_service_shard_watch(struct sequence_service *svc, const struct zk_event *ev);
void sequence_service_shard_cron(struct sequence_service *svc, int64_t now);
void sequence_service_shard_lost_all(struct sequence_service *svc); /* lock held */
/* Configured but not sharded yet: 1 when this node may win the ordinary election now (the map
 * was absent after its latest list, so no sharded node issues). */
int sequence_service_shard_may_lead(const struct sequence_service *svc);
void sequence_service_shard_release(
    struct sequence_service *svc); /* before "released" is written */
/* The sequence's slot owner as a redirect (lock held); known = 0 when none can issue. */
void sequence_service_shard_where(struct sequence_service *svc, int slot,
                                  struct sequence_where *where);

/* sequence_service_lease.c; control thread */
/* First in line: take over (read and claim the lease node), or become primary once a lease the
 * previous primary may still hold has run out. */
void sequence_service_lease_become_primary(struct sequence_service *svc);
void sequence_service_lease_on_read(struct sequence_service *svc, const struct zk_event *ev);
void sequence_service_lease_on_claim(struct sequence_service *svc, const struct zk_event *ev);
void sequence_service_lease_heartbeat(struct sequence_service *svc, int64_t now);
void sequence_service_lease_on_heartbeat(struct sequence_service *svc, const struct zk_event *ev);

/* The last component of a ZooKeeper path ("/leafd/x/primary/n_0000000012" -> "n_0000000012"). */
static inline const char *seq_base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* sequence_service_zk.c; control thread */
void sequence_service_zk_lose_primary(struct sequence_service *svc, const char *why);
void sequence_service_zk_on_event(void *arg, struct zk_event *ev);
void sequence_service_zk_on_idle(void *arg);
void sequence_service_zk_on_async(uv_async_t *h);
void sequence_service_zk_on_cron(uv_timer_t *t);

#endif
