/* Connecting: the hosts, TLS, the session limits and failing over (segment_db.h). */
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
_Static_assert(sizeof(db_sql) / sizeof(db_sql[0]) == DB_NSTMT, "one statement per operation");

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
void segment_db_conn_log(struct segment_db *db, int level, const char *fmt, ...) {
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

/* Connected again: what segment_db_conn_log held back since its last summary, and a fresh outage
 * next. */
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
void segment_db_conn_close(struct segment_db *db) {
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

/* Makes host i the one segment_db_conn_open() connects to. */
void segment_db_conn_use_host(struct segment_db *db, int i) {
    db->cur = i;
    memcpy(db->host, db->hosts.host[i].name, sizeof(db->host)); /* both 256, terminated */
    db->port = db->hosts.host[i].port;
}

/*
 * Drops a connection that failed, marks its host (fail_state, then back to
 * DOWN) and schedules the next attempt: at once when another host is out of
 * its backoff, else when the first one is.
 */
void segment_db_conn_disconnect(struct segment_db *db) {
    segment_db_conn_close(db);
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

static _Thread_local int
    db_gate_require_tls; /* set by segment_db_conn_open around mysql_real_connect */
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
 * falls back to plain text on a server without TLS (segment_db_conn_open checks).
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
MYSQL *segment_db_conn_open(struct segment_db *db, const char **why_key) {
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
            segment_db_conn_log(db, LEAF_LOG_ERROR, "connect(%s:%d/%s) refused: %s (check %s)",
                                db->host, db->port, db->database, mysql_error(m), *why_key);
        } else {
            segment_db_conn_log(db, LEAF_LOG_WARN, "connect(%s:%d/%s) failed: %s", db->host,
                                db->port, db->database, mysql_error(m));
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
    segment_db_conn_log(db, LEAF_LOG_WARN, "%s on %s:%d failed: %s", sql, db->host, db->port,
                        mysql_error(m));
    return LEAF_ERR;
}

/*
 * Connects to the first host out of its backoff, then the next, until one
 * answers healthy: LEAF_OK, LEAF_EUNAVAIL (none), or LEAF_EINVAL (a host
 * refused the credentials or the database: a configuration error).
 */
leaf_status_t segment_db_conn_connect_any(struct segment_db *db) {
    leaf_status_t rc = LEAF_EUNAVAIL;
    for (int tries = 0; tries < db->hosts.n; tries++) {
        int64_t now = clock_mono_ms(), wait = 0;
        int i = segment_hosts_pick(&db->hosts, now, &wait);
        if (i < 0) {
            db->next_connect_ms = now + wait;
            break;
        }
        segment_db_conn_use_host(db, i);
        rc = segment_db_conn_connect(db);
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
leaf_status_t segment_db_conn_connect(struct segment_db *db) {
    const char *why_key;
    db_set_conn(db, segment_db_conn_open(db, &why_key));
    if (db->conn == NULL || db_session_limits(db, db->conn) != LEAF_OK ||
        (db->fail_state = segment_db_health(db->conn, db->host, db->port)) != SEGMENT_HOST_UP) {
        atomic_fetch_add(&db->errors, 1);
        segment_db_conn_disconnect(db);
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
            segment_db_conn_disconnect(db);
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
