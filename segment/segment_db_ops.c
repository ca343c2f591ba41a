/* The statements of each operation, run on the database thread (segment_db.h). */
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
    segment_db_conn_log(db, LEAF_LOG_WARN, "statement for tag '%s' on %s:%d failed: %u %s",
                        job->tag, db->host, db->port, err, job->error);
    /* Gone, read-only or not primary: the next host (segment_hosts_classify); 1213 and Galera's
     * "not yet prepared": the same statement again (segment_db_ops_run). */
    db->action = segment_hosts_classify(err, db->retries, db->hosts.n, &db->fail_state);
    if (db->action == SEGMENT_HOSTS_MOVE) {
        segment_db_conn_disconnect(db);
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
leaf_status_t segment_db_ops_run(struct segment_db *db, struct segment_db_job *job) {
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
            (clock_mono_ms() < db->next_connect_ms || segment_db_conn_connect_any(db) != LEAF_OK)) {
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
