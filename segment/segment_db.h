#ifndef LEAF_SEGMENT_DB_H
#define LEAF_SEGMENT_DB_H

/*
 * The database thread: one thread owning one MySQL/MariaDB connection
 * (Connector/C allows one thread per connection at a time) and its
 * prepared statements. Jobs reach it through a mutex-protected queue; each
 * finished job is handed to the `done` callback, on the database thread,
 * which passes it on to the control loop (src/node/segment/segment_service.c). The
 * thread never touches any other state.
 *
 * Connection policy: connect/read/write timeouts from leafd.db.timeout.ms;
 * the driver's auto-reconnect is off. A lost connection is closed and
 * re-opened in the background, on the first host of leaf.jdbc.url out of
 * its backoff (segment_hosts.h: 100 ms .. 5 s per host); jobs that arrive
 * while every host is down fail at once with LEAF_EUNAVAIL instead of
 * waiting, so no request hangs on a dead database. With several hosts a
 * job whose host goes away, turns read-only or leaves Galera's primary
 * component runs again on the next host, and one Galera refused for now
 * (1213, 1047) runs again on the same host.
 *
 * A range reservation is one statement,
 *   UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(max_id + ?) WHERE biz_tag = ?
 * atomic under any number of nodes (and next to Leaf servers doing
 * UPDATE max_id = max_id + step). Failed reservations are never retried
 * here; one whose answer was lost is simply a skipped range.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "sbuf.h"
#include "status.h"
#include "validate.h"

enum segment_db_op {
    SEGMENT_DB_FETCH,    /* reserve `step` IDs: new_max */
    SEGMENT_DB_LOOKUP,   /* the tag's row: row_step */
    SEGMENT_DB_LOAD,     /* every row's biz_tag and step (tag refresh), packed */
    SEGMENT_DB_LIST,     /* every row, all columns (/db page) */
    SEGMENT_DB_CREATE,   /* INSERT a row (tag, max_id, step, description) */
    SEGMENT_DB_SET_STEP, /* UPDATE a row's step */
    SEGMENT_DB_GIVEBACK, /* zero waste: max_id = job max_id if it is still expected_max */
};

#define SEGMENT_DB_DESC_MAX 256
#define SEGMENT_DB_MAX_ROWS 100000
#define SEGMENT_DB_MAX_LOAD_ROWS 4000000 /* LOAD rows are ~30 bytes each (segment_known.h) */

struct segment_db_row {
    char biz_tag[VALIDATE_TAG_MAX * 4 + 1]; /* varchar(128) may hold multi-byte characters */
    int64_t max_id;
    int64_t step;
    char description[SEGMENT_DB_DESC_MAX * 4 + 1];
    char update_time[32];
};

struct segment_db_job;
/* A job's own completion callback (on the database thread); see own_done below. */
typedef void (*segment_db_done_fn_own)(struct segment_db_job *job, void *arg);

/*
 * One unit of work. The submitter fills the request part; the database
 * thread owns the job from segment_db_submit() until it calls `done`, and
 * writes the result part; then the job belongs to whoever `done` gives it to.
 */
struct segment_db_job {
    enum segment_db_op op;
    char tag[VALIDATE_TAG_MAX + 1];
    int64_t step;
    int64_t max_id;
    char description[SEGMENT_DB_DESC_MAX * 4 + 1];
    int has_description;
    uint64_t cookie; /* submitter's (tag epoch, refresh generation) */
    void *owner;     /* submitter's (the admin request's wait), or NULL */
    int admin;       /* an admin job: handed back to its request */
    void *admin_svc; /* admin: the service that waits for it */
    int done;        /* admin: the result is in (guarded by the service's admin lock) */

    leaf_status_t rc;            /* OK, ENOTFOUND, EEXIST, EUNAVAIL (no connection), ERANGE (a value
                                  * the column cannot store: charset or size), ERR */
    int folded;                  /* CREATE, EEXIST: no row is this tag byte for byte; the key
                                  * matched another one (a collation that ignores case) */
    int64_t new_max;             /* FETCH: max_id after the reservation */
    int64_t row_step;            /* LOOKUP, SET_STEP: the row's step */
    struct segment_db_row *rows; /* LOAD, LIST: malloc'd, freed by segment_db_job_free() */
    size_t nrows;
    struct sbuf packed; /* LOAD: (step, name) rows, segment_known_pack()'s format */
    int64_t latency_us;
    char error[256];
    struct segment_db_job *next; /* queue link */

    /* GIVEBACK (segment_giveback.h): request and completion. */
    int64_t expected_max;            /* parameter 3; max_id (above) is parameter 1 */
    int64_t deadline_ms;             /* clock_mono_ms(): not started after it (0: none) */
    segment_db_done_fn_own own_done; /* when set, called instead of the thread's `done` */
    void *own_done_arg;
};

/*
 * TLS to the database, as MySQL Connector/J's sslMode names the modes (the
 * same order as src/config's enum config_db_tls). From REQUIRED on, a
 * connection is TLS or none: nothing, not even the login, is sent in plain
 * text, and a failure at start-up is a configuration error.
 */
enum segment_db_tls {
    SEGMENT_DB_TLS_DISABLED,
    SEGMENT_DB_TLS_PREFERRED,       /* TLS when the server offers it, unchecked */
    SEGMENT_DB_TLS_REQUIRED,        /* TLS, certificate unchecked */
    SEGMENT_DB_TLS_VERIFY_CA,       /* TLS, certificate chains to tls_ca_file */
    SEGMENT_DB_TLS_VERIFY_IDENTITY, /* and names the host connected to */
};

/* One member of a database cluster (leaf.jdbc.url lists them in order). */
struct segment_db_hostport {
    const char *host;
    int port;
};

struct segment_db_options {
    const char *host; /* used when nhosts is 0 */
    int port;
    const struct segment_db_hostport *hosts; /* tried in order (segment_hosts.h) */
    int nhosts;
    const char *user;
    const char *password;
    const char *database;
    int64_t timeout_ms;
    enum segment_db_tls tls;
    const char *tls_ca_file; /* PEM; used from VERIFY_CA on */
};

/* Called on the database thread with each finished job. */
typedef void (*segment_db_done_fn)(struct segment_db_job *job, void *arg);

struct segment_db;

/*
 * Connects once on the calling thread, then starts the database thread.
 * LEAF_EINVAL (logged) when the server refused the credentials or the
 * database name: a configuration error. An unreachable server is not: the
 * thread keeps retrying in the background.
 */
leaf_status_t segment_db_start(struct segment_db **out, const struct segment_db_options *o,
                               segment_db_done_fn done, void *arg);

/* Queues a job (any thread). After segment_db_stop() began, fails it at once. */
void segment_db_submit(struct segment_db *db, struct segment_db_job *job);

/* 1 while the connection is up (any thread). */
int segment_db_connected(const struct segment_db *db);

/* Errors seen (statements and connects), for metrics (any thread). */
uint64_t segment_db_errors(const struct segment_db *db);

/* A copy of the hosts, their states and the one in use (any thread). */
struct segment_hosts;
void segment_db_hosts(const struct segment_db *db, struct segment_hosts *out);

/*
 * Aborts the statement in progress, if any (mariadb_cancel: the socket is
 * shut down, the statement fails at once and the connection is dropped and
 * reopened later). Any thread; used to keep a shutdown within its time bound.
 */
void segment_db_cancel(struct segment_db *db);

/*
 * Fails every queued job through `done`, aborts a statement in progress
 * (segment_db_cancel), joins the thread, frees it.
 */
void segment_db_stop(struct segment_db *db);

struct segment_db_job *segment_db_job_new(enum segment_db_op op, const char *tag, size_t tag_len);
void segment_db_job_free(struct segment_db_job *job);

#endif
