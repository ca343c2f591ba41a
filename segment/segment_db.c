#include "segment_db.h"

#include <errmsg.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <mysql.h>
#include <mysql/plugin_auth.h>
#include <mysqld_error.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "segment_db_health.h"
#include "segment_db_state.h"
#include "segment_giveback.h"
#include "segment_hosts.h"
#include "segment_known.h"

/* How long the idle thread sleeps before checking the connection with a ping. */
#define DB_IDLE_PING_MS 5000

static void db_deadline(struct timespec *ts, int64_t ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

/*
 * Idle work, called without the lock when the queue has been empty for a
 * while: reconnect once the backoff has passed, or ping a quiet connection
 * so that /ready notices a dead database without waiting for a request.
 */
static void db_idle(struct segment_db *db) {
    if (db->conn == NULL) {
        if (clock_mono_ms() >= db->next_connect_ms) {
            segment_db_conn_connect_any(db);
        }
    } else if ((db->fail_state = segment_db_health(db->conn, db->host, db->port)) !=
               SEGMENT_HOST_UP) {
        /* A Galera node that left the primary component still answers a ping. */
        atomic_fetch_add(&db->errors, 1);
        segment_db_conn_disconnect(db);
    }
}

/*
 * Fail-back: while a host earlier in the list than the one in use is out of
 * its backoff, a probe connection asks it whether it takes writes; only when
 * it does is the connection in use closed and the host used again.
 * Otherwise it is marked and backs off (up to 5 s), and the connection in
 * use is untouched. Run between jobs, so a node under steady load comes back
 * too. A host that refuses at once costs a refused connect; one that hangs
 * costs up to the connect timeout, at most every 5 s.
 */
static void db_failback(struct segment_db *db) {
    int j = db->conn != NULL ? segment_hosts_failback(&db->hosts, clock_mono_ms()) : -1;
    if (j < 0) {
        return;
    }
    int was = db->cur;
    char was_host[sizeof(db->host) + 8];
    snprintf(was_host, sizeof(was_host), "%s:%d", db->host, db->port);
    const char *why_key;
    segment_db_conn_use_host(db,
                             j); /* segment_db_conn_open() and its messages name the probed host */
    MYSQL *probe = segment_db_conn_open(db, &why_key);
    enum segment_host_state st =
        probe != NULL ? segment_db_health(probe, db->host, db->port) : SEGMENT_HOST_DOWN;
    if (probe != NULL) {
        mysql_close(probe);
    }
    if (st != SEGMENT_HOST_UP) {
        pthread_mutex_lock(&db->hosts_mu);
        segment_hosts_fail(&db->hosts, j, st, clock_mono_ms());
        pthread_mutex_unlock(&db->hosts_mu);
        segment_db_conn_use_host(db, was);
        return;
    }
    atomic_store(&db->connected, 0); /* a planned switch, not a loss */
    segment_db_conn_use_host(db, was);
    segment_db_conn_close(db);
    segment_db_conn_use_host(db, j);
    if (segment_db_conn_connect(db) == LEAF_OK) {
        log_info("segment", "database: back on %s:%d (was %s)", db->host, db->port, was_host);
        return;
    }
    segment_db_conn_connect_any(db);
}

/* Waits for a job; returns NULL when stopping with an empty queue. Called with mu held. */
static struct segment_db_job *db_next_job(struct segment_db *db) {
    while (db->head == NULL && !db->stopping) {
        int64_t wait = DB_IDLE_PING_MS;
        if (db->conn == NULL) {
            wait = db->next_connect_ms - clock_mono_ms();
            wait = wait < 1 ? 1 : wait;
        }
        struct timespec ts;
        db_deadline(&ts, wait);
        if (pthread_cond_timedwait(&db->cv, &db->mu, &ts) == ETIMEDOUT && db->head == NULL &&
            !db->stopping) {
            pthread_mutex_unlock(&db->mu);
            db_idle(db);
            db_failback(db);
            pthread_mutex_lock(&db->mu);
        }
    }
    struct segment_db_job *job = db->head;
    if (job != NULL) {
        db->head = job->next;
        if (db->head == NULL) {
            db->tail = NULL;
        }
        job->next = NULL;
    }
    return job;
}

static void *db_main(void *arg) {
    struct segment_db *db = arg;
    /* segment_db_start() made the first attempt; a failed one is retried by db_idle(). */
    pthread_mutex_lock(&db->mu);
    struct segment_db_job *job;
    while ((job = db_next_job(db)) != NULL) {
        int stopping = db->stopping;
        pthread_mutex_unlock(&db->mu);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        job->rc = stopping ? LEAF_EUNAVAIL : segment_db_ops_run(db, job);
        clock_gettime(CLOCK_MONOTONIC, &b);
        job->latency_us = (int64_t)(b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000;
        if (job->own_done != NULL) {
            job->own_done(job, job->own_done_arg);
        } else {
            db->done(job, db->done_arg);
        }
        if (!stopping) {
            db_failback(db);
        }
        pthread_mutex_lock(&db->mu);
    }
    pthread_mutex_unlock(&db->mu);
    segment_db_conn_close(db); /* a clean stop: no "lost" warning */
    return NULL;
}

static void db_copy(char *dst, size_t cap, const char *src) {
    snprintf(dst, cap, "%s", src ? src : "");
}

leaf_status_t segment_db_start(struct segment_db **out, const struct segment_db_options *o,
                               segment_db_done_fn done, void *arg) {
    struct segment_db *db = calloc(1, sizeof(*db));
    if (db == NULL) {
        return LEAF_ENOMEM;
    }
    db->cancel_fd = -1;
    segment_hosts_init(&db->hosts);
    for (int i = 0; i < o->nhosts; i++) {
        segment_hosts_add(&db->hosts, o->hosts[i].host, o->hosts[i].port);
    }
    if (db->hosts.n == 0) {
        segment_hosts_add(&db->hosts, o->host ? o->host : "", o->port);
    }
    segment_db_conn_use_host(db, 0);
    db_copy(db->user, sizeof(db->user), o->user);
    db_copy(db->password, sizeof(db->password), o->password);
    db_copy(db->database, sizeof(db->database), o->database);
    db->tls = o->tls;
    db_copy(db->tls_ca_file, sizeof(db->tls_ca_file), o->tls_ca_file);
    db->timeout_s = (unsigned int)((o->timeout_ms + 999) / 1000);
    db->timeout_ms = o->timeout_ms;
    db->done = done;
    db->done_arg = arg;
    db->fail_state = SEGMENT_HOST_DOWN;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&db->mu, NULL);
    pthread_mutex_init(&db->conn_mu, NULL);
    pthread_mutex_init(&db->hosts_mu, NULL);
    pthread_cond_init(&db->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* The first connect happens here, on the caller's thread, so that a
     * refused password or database stops start-up; an unreachable server
     * does not (the thread keeps trying). The thread takes the connection
     * over through pthread_create, which orders the two. */
    leaf_status_t rc = segment_db_conn_connect_any(db);
    int err = rc == LEAF_EINVAL ? 0 : pthread_create(&db->thread, NULL, db_main, db);
    if (rc == LEAF_EINVAL || err != 0) {
        if (err != 0) {
            log_error("segment", "pthread_create(database thread) failed: %s", strerror(err));
        }
        segment_db_conn_close(db);
        pthread_cond_destroy(&db->cv);
        pthread_mutex_destroy(&db->hosts_mu);
        pthread_mutex_destroy(&db->conn_mu);
        pthread_mutex_destroy(&db->mu);
        free(db);
        return rc == LEAF_EINVAL ? LEAF_EINVAL : LEAF_ERR;
    }
    *out = db;
    return LEAF_OK;
}

void segment_db_submit(struct segment_db *db, struct segment_db_job *job) {
    job->next = NULL;
    pthread_mutex_lock(&db->mu);
    if (db->tail != NULL) {
        db->tail->next = job;
    } else {
        db->head = job;
    }
    db->tail = job;
    pthread_cond_signal(&db->cv);
    pthread_mutex_unlock(&db->mu);
}

int segment_db_connected(const struct segment_db *db) {
    return atomic_load(&((struct segment_db *)db)->connected);
}

uint64_t segment_db_errors(const struct segment_db *db) {
    return atomic_load(&((struct segment_db *)db)->errors);
}

void segment_db_hosts(const struct segment_db *db, struct segment_hosts *out) {
    struct segment_db *d = (struct segment_db *)db;
    pthread_mutex_lock(&d->hosts_mu);
    *out = d->hosts;
    pthread_mutex_unlock(&d->hosts_mu);
}

void segment_db_stop(struct segment_db *db) {
    if (db == NULL) {
        return;
    }
    pthread_mutex_lock(&db->mu);
    db->stopping = 1;
    pthread_cond_signal(&db->cv);
    pthread_mutex_unlock(&db->mu);
    /* Nobody waits for a result any more: a statement or ping in progress on a
     * hanging server is aborted, so the join (and the exit) does not wait for
     * the read timeout. */
    segment_db_cancel(db);
    pthread_join(db->thread, NULL);
    pthread_cond_destroy(&db->cv);
    pthread_mutex_destroy(&db->hosts_mu);
    pthread_mutex_destroy(&db->conn_mu);
    pthread_mutex_destroy(&db->mu);
    free(db);
}

void segment_db_cancel(struct segment_db *db) {
    pthread_mutex_lock(&db->conn_mu);
    if (db->cancel_fd >= 0) {
        shutdown(db->cancel_fd, SHUT_RDWR);
    }
    pthread_mutex_unlock(&db->conn_mu);
}

struct segment_db_job *segment_db_job_new(enum segment_db_op op, const char *tag, size_t tag_len) {
    struct segment_db_job *job = calloc(1, sizeof(*job));
    if (job == NULL) {
        return NULL;
    }
    job->op = op;
    if (tag_len > VALIDATE_TAG_MAX) {
        tag_len = VALIDATE_TAG_MAX;
    }
    if (tag != NULL) {
        memcpy(job->tag, tag, tag_len);
    }
    return job;
}

void segment_db_job_free(struct segment_db_job *job) {
    if (job != NULL) {
        free(job->rows);
        sbuf_free(&job->packed);
        free(job);
    }
}
