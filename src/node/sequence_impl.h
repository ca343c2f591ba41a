#ifndef LEAF_SEQUENCE_IMPL_H
#define LEAF_SEQUENCE_IMPL_H

/*
 * What sequence_service.c (the table, the request path, the life cycle) and
 * sequence_zk.c (the election, heartbeats and the ZooKeeper calls) share.
 * Private to src/node; the public interface is sequence_service.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <uv.h>

#include "jobs.h"
#include "sequence_service.h"
#include "sequence_state.h"
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
    OP_SEQ_GIVEBACK,  /* sequence_heal.c */
    OP_PARENT_CREATE, /* sequence_heal.c; the answer is not needed */
};

#define SEQ_FLOOR_FLUSH_MS 200 /* changed floors are appended this often */

/* One sequence; guarded by svc->lock. Never freed while the service runs. */
struct seq_entry {
    struct seq_entry *next; /* hash chain */
    uint32_t idx;
    int dirty;        /* on the dirty list */
    int floor_queued; /* on the floors' list (sequence_floor_file.c) */
    struct sequence_state st;
    struct leaf_wait_list waiters;
    size_t len;
    char name[VALIDATE_TAG_MAX + 1];
};

/* An admin create; guarded by svc->lock. */
struct seq_create {
    struct leaf_job job; /* first: the slot is one of jobs' (src/base/jobs.h) */
    int repaired;        /* the parents were created again once for it */
    int64_t start;
    char name[VALIDATE_TAG_MAX + 1];
};

/*
 * The local floors' file (sequence_floor_file.c, sequence/sequence_floor.h).
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
    int creating, listing, heartbeat_inflight, deleting, stepping_down;
    /* Taking over (see sequence_zk.c, "the lease node"): 0 no, 1 reading the
     * lease node, 2 claiming it, 3 waiting out the previous primary's lease. */
    int taking_over;
    int lease_released; /* the previous primary released the lease node */
    int64_t lease_old_mtime, takeover_sent_ms, takeover_at_ms;
    char lease_path[SEQ_DIR_MAX]; /* /leafd/{leaf.name}/lease */
    int64_t create_sent_ms, heartbeat_sent_ms, last_heartbeat_ms, last_view_ms;
    int connected_once;
    char **line; /* the last list of children (view), owned here */
    int nline;
    int peer_reads_left; /* OP_PEER_GET answers still to come for the view being built */

    /* guarded by lock */
    pthread_mutex_t lock;
    struct sequence_lease lease;
    int connected;
    struct seq_entry **slots;
    size_t nslots, count;
    struct seq_entry **by_idx;
    size_t idx_cap;
    struct seq_entry **dirty;
    size_t ndirty, dirty_cap;
    int demote_requested;
    struct seq_create creates[SEQ_MAX_CREATES];
    struct leaf_jobs jobs; /* creates as parked jobs */
    struct sequence_where where;
    struct sequence_peer peers[SEQUENCE_MAX_PEERS], next_peers[SEQUENCE_MAX_PEERS];
    size_t npeers, next_npeers;
    uint64_t elections, demotions;

    /* sequence_heal.c, sequence_floor_file.c */
    struct seq_floors floors;
    size_t giveback_pending;     /* control thread */
    int64_t parents_repaired_ms; /* control thread */
    uint64_t giveback_ok, giveback_refused;
};

/* sequence_zk.c, the floor sequence_service.c stands on; lock held */
int64_t seq_now_ms(void);
void seq_mark_dirty(struct sequence_service *svc, struct seq_entry *e);
void seq_wake_all(struct sequence_service *svc);

/* sequence_service.c; lock held. find: NULL when unknown; get: adds it (NULL: out of memory). */
struct seq_entry *seq_entry_find(struct sequence_service *svc, const char *name, size_t len);
struct seq_entry *seq_entry_get(struct sequence_service *svc, const char *name, size_t len);

/* sequence_heal.c: after sequence_state_done() on e (lock held): logs refused writes and a
 * ZooKeeper max below the floor, queues the floor, asks for a step-down when e gave up. */
void seq_after_done(struct sequence_service *svc, struct seq_entry *e);
/* The cluster's tree is gone (a list or create answered "no node"): create the parents again
 * (at most once per SEQ_VIEW_MS; control). */
void seq_parents_repair(struct sequence_service *svc);
/* An admin create of name landed here: a cached "missing" is read again at once (control). */
void seq_created(struct sequence_service *svc, const char *name);
/* After seq_lose_primary(): sends every sequence's giveback write; returns how many (control). */
size_t seq_giveback_send(struct sequence_service *svc);
/* A giveback write's answer (OP_SEQ_GIVEBACK; control). */
void seq_on_giveback(struct sequence_service *svc, const struct zk_event *ev);
/* At a stop, after a synchronous call that followed the givebacks on the session: applies
 * their answers, now all queued; other events are dropped (control). */
void seq_giveback_drain(struct sequence_service *svc);

/* sequence_floor_file.c (control thread, except mark: lock held) */
leaf_status_t seq_floors_load(struct sequence_service *svc);
void seq_floors_start(struct sequence_service *svc);
void seq_floors_mark(struct sequence_service *svc, struct seq_entry *e);
void seq_floors_flush(struct sequence_service *svc);
void seq_floors_stop(struct sequence_service *svc);
void seq_floors_free(struct sequence_service *svc);

/* sequence_zk.c; control thread */
void seq_lose_primary(struct sequence_service *svc, const char *why);
void seq_on_zk(void *arg, struct zk_event *ev);
void seq_on_idle(void *arg);
void seq_on_async(uv_async_t *h);
void seq_on_cron(uv_timer_t *t);

#endif
