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
#include "log_quiet.h"
#include "segment_db_health.h"
#include "segment_giveback.h"
#include "segment_hosts.h"
#include "segment_known.h"

/* The prepared statements, one per operation (indexed by enum segment_db_op). */
static const char *const db_sql[] = {
    [SEGMENT_DB_FETCH] = "UPDATE leaf_alloc SET max_id = LAST_INSERT_ID(max_id + ?) "
                         "WHERE biz_tag = ?",
    /* Tags are case-sensitive whatever the column's collation: ORDERS.EU is not orders.eu
     * (the value side BINARY, so the index on biz_tag still serves). */
    [SEGMENT_DB_LOOKUP] = "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = BINARY ?",
    [SEGMENT_DB_LOAD] = "SELECT biz_tag, max_id, step FROM leaf_alloc",
    [SEGMENT_DB_LIST] = "SELECT biz_tag, max_id, step, IFNULL(description, ''), "
                        "DATE_FORMAT(update_time, '%Y-%m-%d %H:%i:%s') FROM leaf_alloc "
                        "ORDER BY biz_tag",
    [SEGMENT_DB_CREATE] = "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) "
                          "VALUES (?, ?, ?, ?)",
    [SEGMENT_DB_SET_STEP] = "UPDATE leaf_alloc SET step = ? WHERE biz_tag = ?",
    [SEGMENT_DB_GIVEBACK] = SEGMENT_GIVEBACK_SQL,
};
#define DB_NSTMT ((int)(sizeof(db_sql) / sizeof(db_sql[0])))

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
    enum segment_host_state fail_state; /* what db_disconnect() marks the host (default DOWN) */
    enum segment_hosts_action action;   /* after a failed statement: db_fail()'s verdict */
    int retries;                        /* same-host retries of the job in progress */
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

/*
 * The database threads' error lines: one per outage, then a summary every
 * 30 s (log_quiet's policy, the same as the ZooKeeper client's). One state
 * for all the connections of the process (a segment service runs three on
 * the same database, which fail together), guarded by db_quiet_mu.
 */
static struct log_quiet db_quiet;
static pthread_mutex_t db_quiet_mu = PTHREAD_MUTEX_INITIALIZER;

/* Sets the connection (and its cancel_fd) under conn_mu, so that
 * segment_db_cancel() never sees a closed one. */
static void db_set_conn(struct segment_db *db, MYSQL *conn) {
    pthread_mutex_lock(&db->conn_mu);
    if (db->cancel_fd >= 0) {
        close(db->cancel_fd);
        db->cancel_fd = -1;
    }
    db->conn = conn;
    if (conn != NULL) {
        int fd = (int)mysql_get_socket(conn);
        db->cancel_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    }
    pthread_mutex_unlock(&db->conn_mu);
}

/*
 * A failing connect, ping or statement, on the database thread: while the
 * database is away the reconnects would log one line every 2 s or less, so
 * the first line of an outage passes and the rest are counted, with a
 * summary at most every LOG_QUIET_SUMMARY_MS (db_quiet_reset at a connect).
 */
__attribute__((format(printf, 3, 4))) static void db_log(struct segment_db *db, int level,
                                                         const char *fmt, ...) {
    char line[sizeof(db_quiet.last)], last[sizeof(db_quiet.last)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    uint64_t n = 0;
    pthread_mutex_lock(&db_quiet_mu);
    enum log_quiet_action a = log_quiet_line(&db_quiet, clock_mono_ms(), line, &n);
    memcpy(last, db_quiet.last, sizeof(last));
    pthread_mutex_unlock(&db_quiet_mu);
    if (a == LOG_QUIET_PASS) {
        log_write(level, "segment", "%s (more such lines: a summary every %d s)", line,
                  LOG_QUIET_SUMMARY_MS / 1000);
    } else if (a == LOG_QUIET_SUMMARY) {
        log_write(level, "segment", "%llu more database errors in the last %d s, the last: %s",
                  (unsigned long long)n, LOG_QUIET_SUMMARY_MS / 1000, last);
    }
}

/* Connected again: what db_log held back since its last summary, and a fresh outage next. */
static void db_quiet_reset(struct segment_db *db) {
    pthread_mutex_lock(&db_quiet_mu);
    uint64_t n = log_quiet_reset(&db_quiet);
    pthread_mutex_unlock(&db_quiet_mu);
    if (n > 0) {
        log_info("segment", "%llu database error lines held back while it was away",
                 (unsigned long long)n);
    }
}

/* Closes the statements and the connection, silently (also at a clean stop). */
static void db_close(struct segment_db *db) {
    for (int i = 0; i < DB_NSTMT; i++) {
        if (db->stmt[i] != NULL) {
            mysql_stmt_close(db->stmt[i]);
            db->stmt[i] = NULL;
        }
    }
    if (db->conn != NULL) {
        MYSQL *conn = db->conn;
        db_set_conn(db, NULL);
        mysql_close(conn);
    }
}

/* Makes host i the one db_open() connects to. */
static void db_use_host(struct segment_db *db, int i) {
    db->cur = i;
    memcpy(db->host, db->hosts.host[i].name, sizeof(db->host)); /* both 256, terminated */
    db->port = db->hosts.host[i].port;
}

/*
 * Drops a connection that failed, marks its host (fail_state, then back to
 * DOWN) and schedules the next attempt: at once when another host is out of
 * its backoff, else when the first one is.
 */
static void db_disconnect(struct segment_db *db) {
    db_close(db);
    if (atomic_exchange(&db->connected, 0)) {
        log_warn("segment",
                 "database connection to %s:%d/%s lost (%s); reconnecting in the "
                 "background",
                 db->host, db->port, db->database, segment_host_state_name(db->fail_state));
    }
    int64_t now = clock_mono_ms(), wait = 0;
    pthread_mutex_lock(&db->hosts_mu);
    segment_hosts_fail(&db->hosts, db->cur, db->fail_state, now);
    pthread_mutex_unlock(&db->hosts_mu);
    db->fail_state = SEGMENT_HOST_DOWN;
    db->next_connect_ms = segment_hosts_pick(&db->hosts, now, &wait) >= 0 ? now : now + wait;
}

/*
 * Errors that waiting will not fix: the server answered, and refused the
 * credentials or the database name. At start they are configuration errors.
 */
static const char *db_config_error_key(unsigned int err) {
    switch (err) {
    case ER_ACCESS_DENIED_ERROR:
    case 1698: /* ER_ACCESS_DENIED_NO_PASSWORD_ERROR (MariaDB: unix_socket root) */
        return "leaf.jdbc.username / leaf.jdbc.password";
    case ER_DBACCESS_DENIED_ERROR: /* also what a user sees for a database that does not exist */
        return "the database name in leaf.jdbc.url, and leaf.jdbc.username's grants on it";
    case ER_BAD_DB_ERROR: return "the database name in leaf.jdbc.url";
    default: return NULL;
    }
}

static const char *const db_tls_names[] = {
    [SEGMENT_DB_TLS_DISABLED] = "DISABLED",
    [SEGMENT_DB_TLS_PREFERRED] = "PREFERRED",
    [SEGMENT_DB_TLS_REQUIRED] = "REQUIRED",
    [SEGMENT_DB_TLS_VERIFY_CA] = "VERIFY_CA",
    [SEGMENT_DB_TLS_VERIFY_IDENTITY] = "VERIFY_IDENTITY",
};

/* What a start-up TLS failure names: the settings that decide it. */
#define DB_TLS_KEYS "leaf.jdbc.url's sslMode and leafd.db.tls.ca.file"

/*
 * The TLS gate: the client plug-in every connection starts its login with
 * when TLS is on. Connector/C 3.3 runs it after reading the server's greeting
 * on the very connection that carries the login, and before anything leaves:
 * when the greeting offers no TLS and sslMode requires it, it refuses, so
 * nothing (no user name, no scramble) is sent in clear; Connector/C would
 * otherwise fall back to plain text with MYSQL_OPT_SSL_ENFORCE and a CA.
 * Otherwise it sends an empty answer (in TLS where the server offers it):
 * the server does not know the plug-in and switches to the user's own, which
 * MARIADB_OPT_RESTRICTED_AUTH restricts (db_tls_options).
 */
#define DB_TLS_GATE "leafd_tls_gate"

static _Thread_local int db_gate_require_tls; /* set by db_open around mysql_real_connect */
static _Thread_local int db_gate_refused;

static int db_tls_gate_auth(MYSQL_PLUGIN_VIO *vio, MYSQL *m) {
    if (db_gate_require_tls && (m->server_capabilities & CLIENT_SSL) == 0) {
        db_gate_refused = 1;
        return CR_ERROR;
    }
    return vio->write_packet(vio, (const unsigned char *)"", 0) != 0 ? CR_ERROR : CR_OK;
}

/*
 * An authentication client plug-in as mysql/client_plugin.h lays it out
 * (that header includes one the Debian package does not ship).
 */
struct db_auth_plugin {
    int type;
    unsigned int interface_version;
    const char *name, *author, *desc;
    unsigned int version[3];
    const char *license;
    void *mysql_api;
    int (*init)(char *, size_t, int, va_list);
    int (*deinit)(void);
    int (*options)(const char *option, const void *);
    int (*authenticate_user)(MYSQL_PLUGIN_VIO *vio, MYSQL *mysql);
};

static struct db_auth_plugin db_tls_gate = {
    2,      /* MYSQL_CLIENT_AUTHENTICATION_PLUGIN */
    0x0100, /* MYSQL_CLIENT_AUTHENTICATION_PLUGIN_INTERFACE_VERSION */
    DB_TLS_GATE,
    "leafd",
    "refuses a login without TLS when sslMode requires it",
    {1, 0, 0},
    "BSD",
    NULL,
    NULL,
    NULL,
    NULL,
    db_tls_gate_auth,
};

static pthread_once_t db_tls_gate_once = PTHREAD_ONCE_INIT;
static int db_tls_gate_ok;

static void db_tls_gate_register(void) {
    MYSQL *m = mysql_init(NULL);
    db_tls_gate_ok = m != NULL && mysql_client_register_plugin(
                                      m, (struct st_mysql_client_plugin *)&db_tls_gate) != NULL;
    if (m != NULL) {
        mysql_close(m);
    }
}

/*
 * The login plug-ins a connection accepts. Without TLS guaranteed on the
 * connection none that sends the password in clear (mysql_clear_password,
 * dialog): a server, or a man in the middle, that asks for it is refused.
 */
#define DB_AUTH_HASHED "mysql_native_password,client_ed25519,caching_sha2_password,sha256_password"

/*
 * The TLS options of the handle. Connector/C verifies the chain whenever a
 * CA is given, and the host name with VERIFY_SERVER_CERT; without that it
 * falls back to plain text on a server without TLS (db_open checks).
 */
static void db_tls_options(const struct segment_db *db, MYSQL *m) {
    my_bool on = 1;
    if (db->tls == SEGMENT_DB_TLS_DISABLED) {
        mysql_optionsv(m, MARIADB_OPT_RESTRICTED_AUTH, DB_AUTH_HASHED);
        return;
    }
    mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on); /* "use TLS" (not "require" in 3.x) */
    /* The gate first (it refuses a login without TLS where sslMode requires it), then the
     * user's plug-in; the ones that send the password in clear only where TLS is certain. */
    mysql_optionsv(m, MYSQL_DEFAULT_AUTH, DB_TLS_GATE);
    mysql_optionsv(m, MARIADB_OPT_RESTRICTED_AUTH,
                   db->tls >= SEGMENT_DB_TLS_REQUIRED ? DB_TLS_GATE "," DB_AUTH_HASHED
                                                                    ",mysql_clear_password,dialog"
                                                      : DB_TLS_GATE "," DB_AUTH_HASHED);
    if (db->tls >= SEGMENT_DB_TLS_VERIFY_CA) {
        mysql_optionsv(m, MYSQL_OPT_SSL_CA, db->tls_ca_file);
    }
    if (db->tls == SEGMENT_DB_TLS_VERIFY_IDENTITY) {
        mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    }
}

/* A connected handle, or NULL with *why_key set when the error is a configuration error. */
static MYSQL *db_open(struct segment_db *db, const char **why_key) {
    *why_key = NULL;
    pthread_once(&db_tls_gate_once, db_tls_gate_register);
    if (db->tls != SEGMENT_DB_TLS_DISABLED && !db_tls_gate_ok) {
        log_error("segment", "connect(%s:%d/%s): the TLS gate plug-in could not be registered",
                  db->host, db->port, db->database);
        return NULL;
    }
    MYSQL *m = mysql_init(NULL);
    if (m == NULL) {
        return NULL;
    }
    db_tls_options(db, m);
    my_bool reconnect = 0;
    unsigned int proto = MYSQL_PROTOCOL_TCP;
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &db->timeout_s);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &db->timeout_s);
    mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &db->timeout_s);
    mysql_options(m, MYSQL_OPT_RECONNECT, &reconnect);
    mysql_options(m, MYSQL_OPT_PROTOCOL, &proto);
    /* The connection's character set: descriptions are UTF-8 (checked by the API). */
    mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    /* CLIENT_FOUND_ROWS: an UPDATE reports matched rows, so 0 means "no such tag". */
    db_gate_require_tls = db->tls >= SEGMENT_DB_TLS_REQUIRED;
    db_gate_refused = 0;
    MYSQL *ok = mysql_real_connect(m, db->host, db->user, db->password, db->database,
                                   (unsigned int)db->port, NULL, CLIENT_FOUND_ROWS);
    db_gate_require_tls = 0;
    if (ok == NULL && db_gate_refused) {
        log_error("segment",
                  "connect(%s:%d/%s) refused by leafd before the login: the server offers no TLS, "
                  "and sslMode=%s requires it (check " DB_TLS_KEYS ")",
                  db->host, db->port, db->database, db_tls_names[db->tls]);
        *why_key = DB_TLS_KEYS;
        mysql_close(m);
        return NULL;
    }
    if (ok == NULL) {
        *why_key = db_config_error_key(mysql_errno(m));
        if (mysql_errno(m) == CR_SSL_CONNECTION_ERROR && db->tls != SEGMENT_DB_TLS_DISABLED) {
            *why_key = DB_TLS_KEYS; /* a handshake that fails now fails on every retry */
        }
        if (*why_key != NULL) {
            db_log(db, LEAF_LOG_ERROR, "connect(%s:%d/%s) refused: %s (check %s)", db->host,
                   db->port, db->database, mysql_error(m), *why_key);
        } else {
            db_log(db, LEAF_LOG_WARN, "connect(%s:%d/%s) failed: %s", db->host, db->port,
                   db->database, mysql_error(m));
        }
        mysql_close(m);
        return NULL;
    }
    if (db->tls >= SEGMENT_DB_TLS_REQUIRED && mysql_get_ssl_cipher(m) == NULL) {
        /* Not reached: the TLS gate refuses a login without TLS. */
        log_error("segment", "connect(%s:%d/%s) is not encrypted, and sslMode=%s requires it",
                  db->host, db->port, db->database, db_tls_names[db->tls]);
        *why_key = DB_TLS_KEYS;
        mysql_close(m);
        return NULL;
    }
    return m;
}

/*
 * Gives every statement a limit on the server, below leafd's own timeout: a
 * statement leafd gave up on (a range UPDATE behind a row lock or a global
 * read lock) then dies on the server too, instead of committing, unseen,
 * when the lock goes. MariaDB has max_statement_time; MySQL only the lock
 * waits, which are what hangs an UPDATE.
 */
static leaf_status_t db_session_limits(struct segment_db *db, MYSQL *m) {
    int64_t limit_ms = db->timeout_ms / 2 > 100 ? db->timeout_ms / 2 : 100;
    int64_t lock_s = limit_ms / 1000 > 1 ? limit_ms / 1000 : 1;
    char sql[160];
    snprintf(sql, sizeof(sql),
             "SET SESSION max_statement_time = %" PRId64 ".%03" PRId64
             ", innodb_lock_wait_timeout = %" PRId64 ", lock_wait_timeout = %" PRId64,
             limit_ms / 1000, limit_ms % 1000, lock_s, lock_s);
    if (mysql_query(m, sql) == 0) {
        return LEAF_OK;
    }
    if (mysql_errno(m) == ER_UNKNOWN_SYSTEM_VARIABLE) { /* MySQL */
        snprintf(sql, sizeof(sql),
                 "SET SESSION innodb_lock_wait_timeout = %" PRId64 ", lock_wait_timeout = %" PRId64,
                 lock_s, lock_s);
        if (mysql_query(m, sql) == 0) {
            return LEAF_OK;
        }
    }
    db_log(db, LEAF_LOG_WARN, "%s on %s:%d failed: %s", sql, db->host, db->port, mysql_error(m));
    return LEAF_ERR;
}

/*
 * Connects to the first host out of its backoff, then the next, until one
 * answers healthy: LEAF_OK, LEAF_EUNAVAIL (none), or LEAF_EINVAL (a host
 * refused the credentials or the database: a configuration error).
 */
static leaf_status_t db_connect(struct segment_db *db);
static leaf_status_t db_connect_any(struct segment_db *db) {
    leaf_status_t rc = LEAF_EUNAVAIL;
    for (int tries = 0; tries < db->hosts.n; tries++) {
        int64_t now = clock_mono_ms(), wait = 0;
        int i = segment_hosts_pick(&db->hosts, now, &wait);
        if (i < 0) {
            db->next_connect_ms = now + wait;
            break;
        }
        db_use_host(db, i);
        rc = db_connect(db);
        if (rc == LEAF_OK || rc == LEAF_EINVAL) {
            return rc;
        }
    }
    return rc;
}

/*
 * Opens the connection and prepares every statement: LEAF_OK, LEAF_EUNAVAIL,
 * or LEAF_EINVAL when the server refused the credentials or the database.
 */
static leaf_status_t db_connect(struct segment_db *db) {
    const char *why_key;
    db_set_conn(db, db_open(db, &why_key));
    if (db->conn == NULL || db_session_limits(db, db->conn) != LEAF_OK ||
        (db->fail_state = segment_db_health(db->conn, db->host, db->port)) != SEGMENT_HOST_UP) {
        atomic_fetch_add(&db->errors, 1);
        db_disconnect(db);
        return why_key != NULL ? LEAF_EINVAL : LEAF_EUNAVAIL;
    }
    for (int i = 0; i < DB_NSTMT; i++) {
        db->stmt[i] = mysql_stmt_init(db->conn);
        if (db->stmt[i] == NULL ||
            mysql_stmt_prepare(db->stmt[i], db_sql[i], (unsigned long)strlen(db_sql[i])) != 0) {
            log_error("segment", "prepare(%s) on %s:%d/%s failed: %s", db_sql[i], db->host,
                      db->port, db->database,
                      db->stmt[i] ? mysql_stmt_error(db->stmt[i]) : mysql_error(db->conn));
            atomic_fetch_add(&db->errors, 1);
            db_disconnect(db);
            return LEAF_EUNAVAIL;
        }
    }
    pthread_mutex_lock(&db->hosts_mu);
    segment_hosts_up(&db->hosts, db->cur);
    pthread_mutex_unlock(&db->hosts_mu);
    atomic_store(&db->connected, 1);
    const char *cipher = mysql_get_ssl_cipher(db->conn);
    log_info("segment", "connected to database %s:%d/%s (%s%s, host %d of %d)", db->host, db->port,
             db->database, cipher != NULL ? "TLS " : "plain text", cipher != NULL ? cipher : "",
             db->cur + 1, db->hosts.n);
    db_quiet_reset(db);
    return LEAF_OK;
}

/* Records a statement error on the job; drops the connection when it is gone. */
static leaf_status_t db_fail(struct segment_db *db, struct segment_db_job *job, MYSQL_STMT *st) {
    unsigned int err = mysql_stmt_errno(st);
    snprintf(job->error, sizeof(job->error), "%s", mysql_stmt_error(st));
    atomic_fetch_add(&db->errors, 1);
    if (err == ER_DUP_ENTRY) {
        return LEAF_EEXIST;
    }
    if (err == ER_TRUNCATED_WRONG_VALUE_FOR_FIELD || err == ER_DATA_TOO_LONG ||
        err == ER_INVALID_CHARACTER_STRING) {
        /* The value, not the database: the column's character set or size cannot hold it. */
        return LEAF_ERANGE;
    }
    db_log(db, LEAF_LOG_WARN, "statement for tag '%s' on %s:%d failed: %u %s", job->tag, db->host,
           db->port, err, job->error);
    /* Gone, read-only or not primary: the next host (segment_hosts_classify); 1213 and Galera's
     * "not yet prepared": the same statement again (db_run). */
    db->action = segment_hosts_classify(err, db->retries, db->hosts.n, &db->fail_state);
    if (db->action == SEGMENT_HOSTS_MOVE) {
        db_disconnect(db);
        return LEAF_EUNAVAIL;
    }
    db->fail_state = SEGMENT_HOST_DOWN;
    return LEAF_ERR;
}

static void db_bind_str(MYSQL_BIND *b, char *s, unsigned long *len) {
    *len = (unsigned long)strlen(s);
    b->buffer_type = MYSQL_TYPE_STRING;
    b->buffer = s;
    b->buffer_length = *len;
    b->length = len;
}

static void db_bind_i64(MYSQL_BIND *b, int64_t *v) {
    b->buffer_type = MYSQL_TYPE_LONGLONG;
    b->buffer = v;
}

/* Binds params and executes; the statement's result (if any) is left to the caller. */
static leaf_status_t db_exec(struct segment_db *db, struct segment_db_job *job, MYSQL_STMT *st,
                             MYSQL_BIND *params) {
    if ((params != NULL && mysql_stmt_bind_param(st, params) != 0) || mysql_stmt_execute(st) != 0) {
        return db_fail(db, job, st);
    }
    return LEAF_OK;
}

/* Runs an UPDATE whose parameters are (step, biz_tag); LEAF_ENOTFOUND when no row matched. */
static leaf_status_t db_update_step_tag(struct segment_db *db, struct segment_db_job *job,
                                        MYSQL_STMT *st) {
    MYSQL_BIND p[2];
    unsigned long tag_len;
    memset(p, 0, sizeof(p));
    db_bind_i64(&p[0], &job->step);
    db_bind_str(&p[1], job->tag, &tag_len);
    leaf_status_t rc = db_exec(db, job, st, p);
    if (rc == LEAF_OK && mysql_stmt_affected_rows(st) == 0) {
        return LEAF_ENOTFOUND;
    }
    return rc;
}

static leaf_status_t db_fetch(struct segment_db *db, struct segment_db_job *job) {
    MYSQL_STMT *st = db->stmt[SEGMENT_DB_FETCH];
    leaf_status_t rc = db_update_step_tag(db, job, st);
    if (rc == LEAF_OK) {
        job->new_max = (int64_t)mysql_stmt_insert_id(st);
    }
    return rc;
}

/* Result columns, in the order of the SELECTs above. */
struct db_cols {
    struct segment_db_row row;
    MYSQL_BIND bind[5];
    unsigned long len[5];
    my_bool is_null[5];
    my_bool err[5];
};

static void db_bind_out_str(struct db_cols *c, int i, char *buf, size_t cap) {
    c->bind[i].buffer_type = MYSQL_TYPE_STRING;
    c->bind[i].buffer = buf;
    c->bind[i].buffer_length = (unsigned long)(cap - 1);
}

static void db_cols_bind(struct db_cols *c) {
    memset(c, 0, sizeof(*c));
    db_bind_out_str(c, 0, c->row.biz_tag, sizeof(c->row.biz_tag));
    db_bind_i64(&c->bind[1], &c->row.max_id);
    db_bind_i64(&c->bind[2], &c->row.step);
    db_bind_out_str(c, 3, c->row.description, sizeof(c->row.description));
    db_bind_out_str(c, 4, c->row.update_time, sizeof(c->row.update_time));
    for (int i = 0; i < 5; i++) {
        c->bind[i].length = &c->len[i];
        c->bind[i].is_null = &c->is_null[i];
        c->bind[i].error = &c->err[i];
    }
}

/* Terminates the string columns (a truncated value keeps what fit). */
static void db_cols_terminate(struct db_cols *c) {
    char *s[5] = {c->row.biz_tag, NULL, NULL, c->row.description, c->row.update_time};
    for (int i = 0; i < 5; i++) {
        if (s[i] != NULL) {
            size_t n = c->is_null[i] ? 0 : c->len[i];
            size_t cap = c->bind[i].buffer_length;
            s[i][n < cap ? n : cap] = '\0';
        }
    }
}

static leaf_status_t db_append_row(struct segment_db_job *job, const struct segment_db_row *row,
                                   size_t *cap) {
    if (job->nrows == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        struct segment_db_row *rows = realloc(job->rows, n * sizeof(*rows));
        if (rows == NULL) {
            snprintf(job->error, sizeof(job->error), "out of memory reading rows");
            return LEAF_ENOMEM;
        }
        job->rows = rows;
        *cap = n;
    }
    job->rows[job->nrows++] = *row;
    return LEAF_OK;
}

/* Runs a SELECT and collects its rows into job->rows. */
static leaf_status_t db_select(struct segment_db *db, struct segment_db_job *job, MYSQL_STMT *st,
                               MYSQL_BIND *params) {
    leaf_status_t rc = db_exec(db, job, st, params);
    if (rc != LEAF_OK) {
        return rc;
    }
    struct db_cols c;
    db_cols_bind(&c);
    if (mysql_stmt_bind_result(st, c.bind) != 0) {
        return db_fail(db, job, st);
    }
    size_t cap = 0;
    for (;;) {
        int f = mysql_stmt_fetch(st);
        if (f == MYSQL_NO_DATA) {
            break;
        }
        if (f == 1) {
            return db_fail(db, job, st);
        }
        db_cols_terminate(&c);
        if (job->op == SEGMENT_DB_LOAD) { /* a refresh: only names and steps, compactly */
            if (job->nrows < SEGMENT_DB_MAX_LOAD_ROWS) {
                segment_known_pack(&job->packed, c.row.biz_tag, strlen(c.row.biz_tag), c.row.step);
                job->nrows++;
            }
        } else if (job->nrows < SEGMENT_DB_MAX_ROWS &&
                   (rc = db_append_row(job, &c.row, &cap)) != LEAF_OK) {
            break;
        }
    }
    mysql_stmt_free_result(st);
    if (rc == LEAF_OK && job->packed.failed) {
        snprintf(job->error, sizeof(job->error), "out of memory reading rows");
        rc = LEAF_ENOMEM;
    }
    return rc;
}

static leaf_status_t db_lookup(struct segment_db *db, struct segment_db_job *job) {
    MYSQL_BIND p[1];
    unsigned long tag_len;
    memset(p, 0, sizeof(p));
    db_bind_str(&p[0], job->tag, &tag_len);
    leaf_status_t rc = db_select(db, job, db->stmt[SEGMENT_DB_LOOKUP], p);
    if (rc == LEAF_OK && job->nrows == 0) {
        return LEAF_ENOTFOUND;
    }
    if (rc == LEAF_OK) {
        job->row_step = job->rows[0].step;
    }
    return rc;
}

/*
 * A duplicate key on INSERT is this tag, or with a collation that ignores case
 * (MariaDB's default) another one, ORDERS beside orders: tags are
 * case-sensitive everywhere else, so the lookup (biz_tag = BINARY ?) tells
 * which, and the answer never claims that a tag exists when it does not.
 */
static leaf_status_t db_create(struct segment_db *db, struct segment_db_job *job) {
    MYSQL_BIND p[4];
    unsigned long tag_len, desc_len;
    my_bool desc_null = (my_bool)(job->has_description ? 0 : 1);
    memset(p, 0, sizeof(p));
    db_bind_str(&p[0], job->tag, &tag_len);
    db_bind_i64(&p[1], &job->max_id);
    db_bind_i64(&p[2], &job->step);
    db_bind_str(&p[3], job->description, &desc_len);
    p[3].is_null = &desc_null;
    leaf_status_t rc = db_exec(db, job, db->stmt[SEGMENT_DB_CREATE], p);
    job->folded = rc == LEAF_EEXIST && db_lookup(db, job) == LEAF_ENOTFOUND;
    return rc;
}

static leaf_status_t db_set_step(struct segment_db *db, struct segment_db_job *job) {
    leaf_status_t rc = db_update_step_tag(db, job, db->stmt[SEGMENT_DB_SET_STEP]);
    job->row_step = job->step;
    return rc;
}

/*
 * Zero waste: gives back [max_id, expected_max) if max_id is still
 * expected_max. LEAF_OK when it matched, LEAF_ENOTFOUND when not (someone
 * reserved since, or the row is gone).
 */
static leaf_status_t db_giveback(struct segment_db *db, struct segment_db_job *job) {
    MYSQL_BIND p[3];
    unsigned long tag_len;
    MYSQL_STMT *st = db->stmt[SEGMENT_DB_GIVEBACK];
    memset(p, 0, sizeof(p));
    db_bind_i64(&p[0], &job->max_id);
    db_bind_str(&p[1], job->tag, &tag_len);
    db_bind_i64(&p[2], &job->expected_max);
    leaf_status_t rc = db_exec(db, job, st, p);
    if (rc == LEAF_OK && mysql_stmt_affected_rows(st) == 0) {
        return LEAF_ENOTFOUND;
    }
    return rc;
}

static leaf_status_t db_op(struct segment_db *db, struct segment_db_job *job) {
    switch (job->op) {
    case SEGMENT_DB_FETCH: return db_fetch(db, job);
    case SEGMENT_DB_LOOKUP: return db_lookup(db, job);
    case SEGMENT_DB_LOAD:
    case SEGMENT_DB_LIST: return db_select(db, job, db->stmt[job->op], NULL);
    case SEGMENT_DB_CREATE: return db_create(db, job);
    case SEGMENT_DB_SET_STEP: return db_set_step(db, job);
    case SEGMENT_DB_GIVEBACK: return db_giveback(db, job);
    }
    return LEAF_EINVAL;
}

/* Forgets what a failed attempt of a job read, before it runs again. */
static void db_job_reset(struct segment_db_job *job) {
    job->nrows = 0;
    sbuf_reset(&job->packed);
    job->packed.failed = 0;
    job->error[0] = '\0';
}

/*
 * Runs a job, on the next host when its host goes away under it (at most
 * once per host) and again on the same host when Galera refused it for now
 * (1213, 1047: SEGMENT_HOSTS_RETRIES times, pausing 20, 40, 80 ms). A range
 * reservation whose answer was lost and that runs again elsewhere is a
 * skipped range, never a range given twice: the UPDATE is one statement,
 * certified cluster-wide.
 */
static leaf_status_t db_run(struct segment_db *db, struct segment_db_job *job) {
    leaf_status_t rc = LEAF_EUNAVAIL;
    db->retries = 0;
    for (int moves = 0; moves < db->hosts.n;) {
        if (job->deadline_ms > 0 && clock_mono_ms() >= job->deadline_ms) {
            snprintf(job->error, sizeof(job->error), "deadline passed before it ran");
            return LEAF_EAGAIN;
        }
        if (job->op == SEGMENT_DB_GIVEBACK && db->conn == NULL) {
            /* a stop does not wait for a reconnect */
            snprintf(job->error, sizeof(job->error), "no database connection");
            return LEAF_EUNAVAIL;
        }
        if (db->conn == NULL &&
            (clock_mono_ms() < db->next_connect_ms || db_connect_any(db) != LEAF_OK)) {
            snprintf(job->error, sizeof(job->error), "database unreachable");
            return LEAF_EUNAVAIL;
        }
        db_job_reset(job);
        db->action = SEGMENT_HOSTS_FAIL;
        rc = db_op(db, job);
        if (rc == LEAF_OK || db->action == SEGMENT_HOSTS_FAIL) {
            return rc;
        }
        if (db->action == SEGMENT_HOSTS_RETRY) {
            usleep((useconds_t)(SEGMENT_HOSTS_RETRY_PAUSE_MS * 1000) << db->retries);
            db->retries++;
            continue;
        }
        moves++;
    }
    return rc;
}

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
            db_connect_any(db);
        }
    } else if ((db->fail_state = segment_db_health(db->conn, db->host, db->port)) !=
               SEGMENT_HOST_UP) {
        /* A Galera node that left the primary component still answers a ping. */
        atomic_fetch_add(&db->errors, 1);
        db_disconnect(db);
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
    db_use_host(db, j); /* db_open() and its messages name the probed host */
    MYSQL *probe = db_open(db, &why_key);
    enum segment_host_state st =
        probe != NULL ? segment_db_health(probe, db->host, db->port) : SEGMENT_HOST_DOWN;
    if (probe != NULL) {
        mysql_close(probe);
    }
    if (st != SEGMENT_HOST_UP) {
        pthread_mutex_lock(&db->hosts_mu);
        segment_hosts_fail(&db->hosts, j, st, clock_mono_ms());
        pthread_mutex_unlock(&db->hosts_mu);
        db_use_host(db, was);
        return;
    }
    atomic_store(&db->connected, 0); /* a planned switch, not a loss */
    db_use_host(db, was);
    db_close(db);
    db_use_host(db, j);
    if (db_connect(db) == LEAF_OK) {
        log_info("segment", "database: back on %s:%d (was %s)", db->host, db->port, was_host);
        return;
    }
    db_connect_any(db);
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
        job->rc = stopping ? LEAF_EUNAVAIL : db_run(db, job);
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
    db_close(db); /* a clean stop: no "lost" warning */
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
    db_use_host(db, 0);
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
    leaf_status_t rc = db_connect_any(db);
    int err = rc == LEAF_EINVAL ? 0 : pthread_create(&db->thread, NULL, db_main, db);
    if (rc == LEAF_EINVAL || err != 0) {
        if (err != 0) {
            log_error("segment", "pthread_create(database thread) failed: %s", strerror(err));
        }
        db_close(db);
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
