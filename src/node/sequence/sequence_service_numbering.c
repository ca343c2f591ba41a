/*
 * Business numbers' definitions and time zones (docs/id-shapes.md, "Business
 * numbers"). The definitions are one znode, /leafd/{leaf.name}/numberings,
 * holding one line per numbering (sequence/sequence_numbering.h); each
 * numbering counts in a sequence of its own, "@<name>" (a name the sequence
 * routes refuse, validate.h), issued by
 * the sequence primary (sequence_service_number in sequence_service.c).
 *
 * Threads: event loops find definitions in the cache (svc->lock) and park
 * on a read when a name is unknown (and ask for one, without waiting, when
 * the cache is older than SEQ_NUMBERING_FRESH_MS: another node's update or
 * delete reaches the primary so); creates, updates, deletes and lists are
 * parked jobs (src/node/common/node_jobs.h). The control thread runs one job or refresh
 * at a time, each from an aget of the table:
 *   create  the name taken: EEXIST; SEQ_NUMBERINGS_MAX lines: ERANGE (nothing
 *           created); else acreate the sequence "@<name>" ({"max":0}; there
 *           already: fine, only numberings can name it), aget the table again
 *           and aset_version it with the new line (acreate when missing);
 *   update  the line replaced (the width and period never change: EINVAL);
 *   delete  the line removed, then the sequence "@<name>" deleted;
 *           a lost race (bad version, exists) reads and writes again;
 *   read    aget the table into the cache.
 * Time zones are read from Debian's tzdata files (/usr/share/zoneinfo) on
 * first use by an event loop and kept for the process's life (zlock): only
 * zones that were read, and at most SEQ_ZONES_MAX of them (a zone past that
 * is read for the call and freed), so names posted that are no zone cost a
 * failed open each and never memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "sequence_record.h"
#include "sequence_service.h"
#include "sequence_service_state.h"
#include "tzdata.h"

#define ZONEINFO_DIR "/usr/share/zoneinfo/"
#define ZONE_FILE_MAX (1 << 17)

#define SEQ_ZONES_MAX SEQ_NUMBERINGS_MAX /* one per numbering at most: about 6 MB */

/* A time zone read from its file; a list, never freed while the service runs. */
struct seq_zone {
    struct seq_zone *next;
    char name[SEQUENCE_NUMBERING_TZ_MAX];
    int ok; /* 1: read and parsed (only such zones are kept) */
    struct tzdata tz;
};

void sequence_service_numbering_init(struct sequence_service *svc) {
    struct seq_numberings *t = &svc->numberings;
    t->read_ms = -1;
    t->running = -1;
    t->version = -1;
    t->jobs =
        (struct node_jobs){&svc->lock, t->slots, SEQ_NUMBERING_JOBS, sizeof(t->slots[0]), NULL};
    snprintf(t->path, sizeof(t->path), "/leafd/%s/numberings", svc->cfg->name);
    pthread_mutex_init(&t->zlock, NULL);
}

void sequence_service_numbering_free(struct sequence_service *svc) {
    struct seq_zone *z = svc->numberings.zones;
    while (z != NULL) {
        struct seq_zone *next = z->next;
        free(z);
        z = next;
    }
    pthread_mutex_destroy(&svc->numberings.zlock);
}

/* ---- time zones (event loops) ------------------------------------------------------------- */

static void zone_read(struct seq_zone *z) {
    char path[sizeof(ZONEINFO_DIR) + SEQUENCE_NUMBERING_TZ_MAX];
    snprintf(path, sizeof(path), ZONEINFO_DIR "%s", z->name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        log_debug("numbering", "open(%s) failed: %s", path, strerror(errno));
        return;
    }
    uint8_t *buf = malloc(ZONE_FILE_MAX);
    size_t n = buf ? fread(buf, 1, ZONE_FILE_MAX, f) : 0;
    fclose(f);
    z->ok = n > 0 && tzdata_parse(&z->tz, buf, n) == LEAF_OK;
    if (!z->ok) {
        log_warn("numbering", "%s is not a TZif file of version 2 or later", path);
    } else {
        int32_t off = tzdata_offset(&z->tz, clock_wall_ms() / 1000);
        log_info("numbering", "time zone %s read from %s: UTC%c%02d:%02d now", z->name, path,
                 off < 0 ? '-' : '+', (off < 0 ? -off : off) / 3600,
                 (off < 0 ? -off : off) / 60 % 60);
    }
    free(buf);
}

leaf_status_t sequence_service_numbering_period(struct sequence_service *svc,
                                                const struct sequence_numbering *d, int64_t wall_ms,
                                                int64_t *period, int64_t *day) {
    struct seq_numberings *t = &svc->numberings;
    pthread_mutex_lock(&t->zlock);
    struct seq_zone *z = t->zones, *fresh = NULL;
    while (z != NULL && strcmp(z->name, d->time_zone) != 0) {
        z = z->next;
    }
    if (z == NULL && (z = fresh = calloc(1, sizeof(*z))) != NULL) {
        snprintf(z->name, sizeof(z->name), "%s", d->time_zone);
        zone_read(z); /* a few KB of a local file, once per zone and process */
        if (z->ok && t->nzones < SEQ_ZONES_MAX) {
            z->next = t->zones;
            t->zones = z;
            t->nzones++;
            fresh = NULL; /* kept */
        }
    }
    int ok = z != NULL && z->ok;
    if (ok) {
        *day = tzdata_local_day(&z->tz, wall_ms);
        *period = sequence_numbering_period_of(d, *day);
    }
    pthread_mutex_unlock(&t->zlock);
    free(fresh);
    return ok ? LEAF_OK : LEAF_ENOTFOUND;
}

/* ---- the request side (event loops) ------------------------------------------------------- */

static void wait_cancel(struct leaf_wait *w) {
    struct sequence_service *svc = w->data;
    pthread_mutex_lock(&svc->lock);
    leaf_wait_unlink(w);
    pthread_mutex_unlock(&svc->lock);
}

static const struct sequence_numbering *find_def(const struct seq_numberings *t, const char *name,
                                                 size_t len) {
    for (int i = 0; i < t->n; i++) {
        if (strlen(t->defs[i].name) == len && memcmp(t->defs[i].name, name, len) == 0) {
            return &t->defs[i];
        }
    }
    return NULL;
}

leaf_status_t sequence_service_numbering_find(struct sequence_service *svc, const char *name,
                                              size_t len, int64_t since_ms,
                                              struct sequence_numbering *d, struct leaf_wait *w) {
    struct seq_numberings *t = &svc->numberings;
    leaf_status_t rc = LEAF_OK;
    if (w != NULL) {
        leaf_wait_cancel(w);
    }
    pthread_mutex_lock(&svc->lock);
    const struct sequence_numbering *found = find_def(t, name, len);
    if (found != NULL) {
        *d = *found;
        if (clock_mono_ms() - t->read_ms > SEQ_NUMBERING_FRESH_MS && !t->refresh) {
            t->refresh = 1; /* read again in the background; this answer uses the cache */
            rc = LEAF_EAGAIN;
        }
    } else if (t->read_ms >= since_ms) {
        rc = LEAF_ENOTFOUND;
    } else {
        t->refresh = 1;
        if (w != NULL) {
            leaf_wait_link(&t->waiters, w);
            w->data = svc;
            w->cancel = wait_cancel;
        }
        rc = LEAF_EAGAIN;
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return found != NULL ? LEAF_OK : rc;
}

/* A job's step for the request, lock taken here: d (create, update, delete), or a list into out. */
static leaf_status_t job_step(struct sequence_service *svc, enum seq_numbering_kind kind,
                              const struct sequence_numbering *d, int *ticket, struct leaf_wait *w,
                              struct sequence_numbering *out, int cap, int *n) {
    struct seq_numberings *t = &svc->numberings;
    struct node_job *j;
    pthread_mutex_lock(&svc->lock);
    int fresh = *ticket < 0;
    leaf_status_t rc = node_jobs_step(&t->jobs, ticket, w, &j);
    if (fresh && j != NULL) {
        struct seq_numbering_job *s = (struct seq_numbering_job *)j;
        s->kind = kind;
        s->tries = 0;
        s->seq_done = 0;
        if (d != NULL) {
            s->def = *d;
        }
    } else if (rc != LEAF_EAGAIN && j != NULL) {
        if (out != NULL && rc == LEAF_OK) {
            *n = t->n < cap ? t->n : cap;
            memcpy(out, t->defs, (size_t)*n * sizeof(*out));
        }
        node_jobs_release(&t->jobs, j);
    }
    pthread_mutex_unlock(&svc->lock);
    if (rc == LEAF_EAGAIN) {
        uv_async_send(&svc->async);
    }
    return rc;
}

leaf_status_t sequence_service_numbering_create(struct sequence_service *svc,
                                                const struct sequence_numbering *d, int *ticket,
                                                struct leaf_wait *w) {
    return job_step(svc, SEQ_NUMBERING_CREATE, d, ticket, w, NULL, 0, NULL);
}

leaf_status_t sequence_service_numbering_update(struct sequence_service *svc,
                                                const struct sequence_numbering *d, int *ticket,
                                                struct leaf_wait *w) {
    return job_step(svc, SEQ_NUMBERING_UPDATE, d, ticket, w, NULL, 0, NULL);
}

leaf_status_t sequence_service_numbering_delete(struct sequence_service *svc, const char *name,
                                                int *ticket, struct leaf_wait *w) {
    struct sequence_numbering d;
    memset(&d, 0, sizeof(d));
    snprintf(d.name, sizeof(d.name), "%s", name);
    return job_step(svc, SEQ_NUMBERING_DELETE, &d, ticket, w, NULL, 0, NULL);
}

leaf_status_t sequence_service_numbering_list(struct sequence_service *svc,
                                              struct sequence_numbering *out, int cap, int *n,
                                              int *ticket, struct leaf_wait *w) {
    *n = 0;
    return job_step(svc, SEQ_NUMBERING_LIST, NULL, ticket, w, out, cap, n);
}

/* ---- the control thread ------------------------------------------------------------------- */

/* Ends the running job (or refresh) with rc; wakes the readers waiting for the table. */
static void job_end(struct sequence_service *svc, leaf_status_t rc) {
    struct seq_numberings *t = &svc->numberings;
    pthread_mutex_lock(&svc->lock);
    if (t->running >= 0) {
        node_jobs_finish(&t->jobs, &t->slots[t->running].job, rc);
    }
    t->running = -1;
    leaf_wait_wake_all(&t->waiters);
    pthread_mutex_unlock(&svc->lock);
}

static void read_table(struct sequence_service *svc) {
    struct seq_numberings *t = &svc->numberings;
    if (zk_session_aget(&svc->zsub, OP_NUMBERING_READ, 0, t->path) != LEAF_OK) {
        job_end(svc, LEAF_EUNAVAIL);
    }
}

void sequence_service_numbering_run(struct sequence_service *svc) {
    struct seq_numberings *t = &svc->numberings;
    if (t->running != -1) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    int i = node_jobs_next(&t->jobs);
    int refresh = i < 0 && t->refresh;
    t->refresh = 0;
    t->running = i >= 0 ? i : refresh ? -2 : -1;
    pthread_mutex_unlock(&svc->lock);
    if (t->running != -1) {
        read_table(svc); /* every job starts from the table: a refused create creates nothing */
    }
}

/* The numbering's sequence: op OP_NUMBERING_SEQ creates it ({"max":0}), OP_NUMBERING_SEQ_DEL
 * deletes it. */
static void seq_node(struct sequence_service *svc, int op, const char *name) {
    char path[SEQ_PATH_MAX], data[SEQUENCE_RECORD_MAX_LEN];
    snprintf(path, sizeof(path), "%s/" SEQ_NUMBERING_SEQ_PREFIX "%s", svc->dir_seqs, name);
    size_t len = sequence_record_format_max(data, sizeof(data), 0);
    leaf_status_t rc = op == OP_NUMBERING_SEQ ? zk_session_acreate2(&svc->zsub, op, 0, path, data,
                                                                    len, ZK_MODE_PERSISTENT)
                                              : zk_session_adelete(&svc->zsub, op, 0, path, -1);
    if (rc != LEAF_OK) {
        log_warn("numbering", "%s %s failed: the request could not be sent",
                 op == OP_NUMBERING_SEQ ? "creating" : "deleting", path);
        job_end(svc, LEAF_EUNAVAIL);
    }
}

/* The table read: into the cache. Returns 1 when it could be read (or does not exist). */
static int take_table(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    if (ev->result != ZK_RESULT_OK && ev->result != ZK_RESULT_NONODE) {
        log_warn("numbering", "reading %s failed (%s)", t->path, leaf_strstatus(ev->rc));
        return 0;
    }
    t->version = ev->result == ZK_RESULT_OK ? ev->version : -1;
    pthread_mutex_lock(&svc->lock);
    t->n = 0;
    for (size_t i = 0; ev->result == ZK_RESULT_OK && i < ev->len && t->n < SEQ_NUMBERINGS_MAX;) {
        const char *nl = memchr(ev->data + i, '\n', ev->len - i);
        size_t n = nl ? (size_t)(nl - (ev->data + i)) : ev->len - i;
        if (n > 0 && sequence_numbering_parse_line(ev->data + i, n, &t->defs[t->n]) == LEAF_OK) {
            t->n++;
        } else if (n > 0) {
            log_warn("numbering", "%s: a line that is not a numbering is skipped: %.*s", t->path,
                     (int)(n < 120 ? n : 120), ev->data + i);
        }
        i += n + 1;
    }
    t->read_ms = clock_mono_ms();
    pthread_mutex_unlock(&svc->lock);
    return 1;
}

/* Copies the table's lines (len bytes) into out, less the line of numbering `name`: the
 * length. A line this node cannot read (a newer node's) is kept as it is. */
static size_t lines_without(const char *data, size_t len, const char *name, char *out) {
    struct sequence_numbering d;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (data + i)) : len - i;
        int drop = n > 0 && sequence_numbering_parse_line(data + i, n, &d) == LEAF_OK &&
                   strcmp(d.name, name) == 0;
        if (n > 0 && !drop) {
            memcpy(out + o, data + i, n);
            out[o + n] = '\n';
            o += n + 1;
        }
        i += n + 1;
    }
    return o;
}

/* The table with the job's line added, replaced or removed, written conditionally (or
 * created). */
static void write_table(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    struct seq_numbering_job *j = &t->slots[t->running];
    char line[SEQUENCE_NUMBERING_LINE_MAX];
    size_t add = 0, old = ev->result == ZK_RESULT_OK ? ev->len : 0;
    if (j->kind != SEQ_NUMBERING_DELETE &&
        (add = sequence_numbering_format_line(&j->def, line, sizeof(line))) == 0) {
        job_end(svc, LEAF_EINVAL);
        return;
    }
    char *data = malloc(old + 1 + add);
    if (data == NULL) {
        log_error("numbering", "writing %s failed: out of memory", t->path);
        job_end(svc, LEAF_ENOMEM);
        return;
    }
    size_t len = lines_without(ev->result == ZK_RESULT_OK ? ev->data : "", old, j->def.name, data);
    memcpy(data + len, line, add);
    len += add;
    leaf_status_t rc = t->version >= 0
                           ? zk_session_aset_version(&svc->zsub, OP_NUMBERING_WRITE, 0, t->path,
                                                     data, len, t->version)
                           : zk_session_acreate2(&svc->zsub, OP_NUMBERING_WRITE, 0, t->path, data,
                                                 len, ZK_MODE_PERSISTENT);
    free(data);
    if (rc != LEAF_OK) {
        log_warn("numbering", "writing %s failed: the request could not be sent", t->path);
        job_end(svc, LEAF_EUNAVAIL);
    }
}

/*
 * A create, update or delete after a read of the table: refused (EEXIST, ERANGE: the table
 * is full, ENOTFOUND, EINVAL: an update of the width or period), the create's sequence
 * created first, or the table written.
 */
static void change_step(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    struct seq_numbering_job *j = &t->slots[t->running];
    const struct sequence_numbering *old = find_def(t, j->def.name, strlen(j->def.name));
    if (j->kind == SEQ_NUMBERING_CREATE && old != NULL) {
        job_end(svc, LEAF_EEXIST);
    } else if (j->kind != SEQ_NUMBERING_CREATE && old == NULL) {
        job_end(svc, LEAF_ENOTFOUND);
    } else if (j->kind == SEQ_NUMBERING_UPDATE &&
               (old->width != j->def.width || old->period != j->def.period)) {
        job_end(svc, LEAF_EINVAL); /* the counter's values would mean other numbers */
    } else if (j->kind == SEQ_NUMBERING_CREATE && t->n >= SEQ_NUMBERINGS_MAX) {
        log_warn("numbering", "numbering %s refused: %s holds %d numberings, the most", j->def.name,
                 t->path, SEQ_NUMBERINGS_MAX);
        job_end(svc, LEAF_ERANGE);
    } else if (j->kind == SEQ_NUMBERING_CREATE && !j->seq_done) {
        seq_node(svc, OP_NUMBERING_SEQ, j->def.name);
    } else {
        write_table(svc, ev);
    }
}

/* The cache after the job's write landed (lock held): this node answers from it at once. */
static void cache_apply(struct seq_numberings *t, const struct seq_numbering_job *j) {
    for (int i = 0; i < t->n; i++) {
        if (strcmp(t->defs[i].name, j->def.name) != 0) {
            continue;
        }
        if (j->kind == SEQ_NUMBERING_DELETE) {
            t->defs[i] = t->defs[--t->n];
        } else {
            t->defs[i] = j->def;
        }
        return;
    }
    if (j->kind == SEQ_NUMBERING_CREATE && t->n < SEQ_NUMBERINGS_MAX) {
        t->defs[t->n++] = j->def;
    }
}

/* The table written: a delete then deletes the numbering's sequence. */
static void table_written(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    struct seq_numbering_job *j = &t->slots[t->running];
    if (ev->result == ZK_RESULT_OK) {
        pthread_mutex_lock(&svc->lock);
        cache_apply(t, j);
        t->refresh = 1; /* and learns the whole table from ZooKeeper */
        pthread_mutex_unlock(&svc->lock);
        if (j->kind == SEQ_NUMBERING_DELETE) {
            seq_node(svc, OP_NUMBERING_SEQ_DEL, j->def.name);
        } else {
            job_end(svc, LEAF_OK);
        }
    } else if ((ev->result == ZK_RESULT_BADVERSION || ev->result == ZK_RESULT_EXISTS) &&
               ++j->tries < SEQ_NUMBERING_TRIES) {
        read_table(svc); /* another node wrote the table first: again on its version */
    } else {
        log_warn("numbering", "writing %s failed (%s)", t->path, leaf_strstatus(ev->rc));
        job_end(svc, LEAF_EUNAVAIL);
    }
}

void sequence_service_numbering_on_zk(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    if (t->running == -1) {
        return; /* a job the session's expiry already ended */
    }
    int change = t->running >= 0 && t->slots[t->running].kind != SEQ_NUMBERING_LIST;
    switch (ev->op) {
    case OP_NUMBERING_SEQ:
        if (ev->result != ZK_RESULT_OK && ev->result != ZK_RESULT_EXISTS) {
            log_warn("numbering", "creating the sequence of numbering %s failed (%s)",
                     t->slots[t->running].def.name, leaf_strstatus(ev->rc));
            job_end(svc, LEAF_EUNAVAIL);
            return;
        }
        t->slots[t->running].seq_done = 1;
        read_table(svc);
        return;
    case OP_NUMBERING_READ:
        if (!take_table(svc, ev)) {
            job_end(svc, LEAF_EUNAVAIL);
        } else if (change) {
            change_step(svc, ev);
        } else {
            job_end(svc, LEAF_OK);
        }
        return;
    case OP_NUMBERING_WRITE: table_written(svc, ev); return;
    case OP_NUMBERING_SEQ_DEL:
        if (ev->result != ZK_RESULT_OK && ev->result != ZK_RESULT_NONODE) {
            log_warn("numbering",
                     "deleting the sequence of numbering %s failed (%s): left "
                     "behind",
                     t->slots[t->running].def.name, leaf_strstatus(ev->rc));
        }
        job_end(svc, LEAF_OK); /* the definition is gone either way */
        return;
    default: return;
    }
}

void sequence_service_numbering_expired(struct sequence_service *svc) {
    if (svc->numberings.running != -1) {
        job_end(svc, LEAF_EUNAVAIL);
    }
}
