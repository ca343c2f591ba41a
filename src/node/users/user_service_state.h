#ifndef LEAF_USER_SERVICE_STATE_H
#define LEAF_USER_SERVICE_STATE_H

/*
 * What user_service.c (the table and the checks) and user_service_zk.c (ZooKeeper,
 * the local copy, admin changes) share. Private to src/node.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <uv.h>

#include "auth_ratelimit.h"
#include "node_jobs.h"
#include "user_service.h"
#include "zk_session.h"

#define USER_MAX_CHANGES 16 /* admin changes in flight at once */
#define USER_MAX_USERS 100000
#define USER_CRON_MS 1000

/* One queued admin change. Guarded by svc->lock, except what the control
 * thread alone uses while the change runs (step, version). */
struct user_change_slot {
    struct node_job job;  /* first: the slot is one of jobs' (src/node/common/node_jobs.h) */
    struct user_change c; /* c.grants points at grants */
    struct auth_grant *grants;
    int64_t queued_ms;
    /* control thread only */
    int step; /* 0: get the record, 1: written back */
    int attempts;
};

struct user_service {
    /* Set at create, read-only afterwards. */
    const struct leaf_config *cfg;
    int enabled;
    uv_loop_t *loop; /* the control loop */
    char dir[192];   /* /leafd/{leaf.name}/users */
    char local_path[1024];

    /* Control thread only. */
    struct zk_session *zk; /* the process's one session (node_zk) */
    struct zk_sub zsub;    /* this service's calls and events on it */
    int zk_open, started, stopping;
    uv_async_t async; /* woken by the event loops (admin changes) */
    uv_timer_t cron;
    int reloading, reload_again, reload_failed; /* a reload is in flight / wanted / to retry */
    int warned_open;    /* the open-trees warning was logged (once per stage) */
    unsigned reload_id; /* tags a reload's reads */
    char **names;       /* the children being read */
    int nnames, reads_left, read_failed;
    char **datas; /* per child: its record (NULL: gone or unread) */
    size_t *lens;
    int dir_made;

    /* The published table: written by the control thread under the write
     * lock, read by the loops under the read lock (held while they use it). */
    pthread_rwlock_t table_lock;
    struct auth_table *table;

    /* Admin changes: guarded by lock. */
    pthread_mutex_t lock;
    struct user_change_slot changes_q[USER_MAX_CHANGES];
    struct node_jobs jobs;           /* changes_q as parked jobs, under lock */
    struct auth_ratelimit log_limit; /* failed authentications' warn lines, per client address */

    /* Counters, any thread (relaxed atomics). */
    atomic_int connected, from_local;
    atomic_uint_fast64_t n_users, reloads, reload_failures, rejected, changes;
    atomic_uint_fast64_t failures[USER_FAIL_COUNT];
    atomic_uint_fast64_t denied[3];
    atomic_int_fast64_t loaded_ms;
};

/* Publishes t (taking it over) and frees the table it replaces; control thread. */
void user_service_publish(struct user_service *svc, struct auth_table *t, int from_local);

#endif
