#ifndef LEAF_SEGMENT_DB_STATE_H
#define LEAF_SEGMENT_DB_STATE_H

/*
 * The database thread's private half, shared by its files and by nothing outside segment/:
 * segment_db.c (the thread, its queue and the public calls), segment_db_conn.c (connecting,
 * TLS, the hosts and failing over) and segment_db_ops.c (the statements of each operation).
 * segment_db.h says what the thread does.
 */
#include <mysql.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "segment_db.h"
#include "segment_hosts.h"

/* The prepared statements, one per operation (enum segment_db_op; segment_db_conn.c). */
#define DB_NSTMT ((int)SEGMENT_DB_GIVEBACK + 1)

/*
 * Owned by the database thread, except: the queue, `stopping` are guarded by
 * `mu`; `connected` and `errors` are atomics read by any thread; the options
 * are read-only after start; `hosts` is written by the database thread under
 * `hosts_mu` and read by others as a copy (segment_db_hosts).
 */
struct segment_db {
    char host[256], user[256], password[256], database[129]; /* host, port: hosts.host[cur] */
    int port;
    enum segment_db_tls tls;
    char tls_ca_file[512];
    pthread_mutex_t hosts_mu;
    struct segment_hosts hosts; /* leaf.jdbc.url's hosts and their states (segment_hosts.h) */
    int cur;                    /* the host connected or being tried */
    enum segment_host_state
        fail_state; /* what segment_db_conn_disconnect() marks the host (default DOWN) */
    enum segment_hosts_action action; /* after a failed statement: db_fail()'s verdict */
    int retries;                      /* same-host retries of the job in progress */
    unsigned int timeout_s;
    int64_t timeout_ms;
    segment_db_done_fn done;
    void *done_arg;
    pthread_t thread;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct segment_db_job *head, *tail;
    int stopping;

    atomic_int connected;
    atomic_ullong errors;

    pthread_mutex_t conn_mu; /* guards conn and cancel_fd against segment_db_cancel() */
    MYSQL *conn;             /* database thread only, but see conn_mu */
    /* A dup() of conn's socket (-1: none), for segment_db_cancel(): shutting it
     * down aborts a statement in progress, and it stays valid while the
     * database thread's libmariadb closes and frees its own end (a failed
     * statement does, so mariadb_cancel() could read a freed handle). */
    int cancel_fd;
    MYSQL_STMT *stmt[DB_NSTMT];
    int64_t next_connect_ms; /* monotonic; no connect attempt before */
};

/* segment_db_conn.c */
void segment_db_conn_log(struct segment_db *db, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
MYSQL *segment_db_conn_open(struct segment_db *db, const char **why_key);
void segment_db_conn_close(struct segment_db *db);
void segment_db_conn_use_host(struct segment_db *db, int i);
void segment_db_conn_disconnect(struct segment_db *db);
leaf_status_t segment_db_conn_connect(struct segment_db *db);
leaf_status_t segment_db_conn_connect_any(struct segment_db *db);

/* segment_db_ops.c */
leaf_status_t segment_db_ops_run(struct segment_db *db, struct segment_db_job *job);

#endif
