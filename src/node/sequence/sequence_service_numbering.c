/*
 * Business numbers' definitions and time zones (docs/id-shapes.md, "Business
 * numbers"). The definitions are one znode, /leafd/{leaf.name}/numberings,
 * holding one line per numbering (sequence/sequence_numbering.h); each
 * numbering counts in a sequence of its own, "numbering:<name>", issued by
 * the sequence primary (sequence_service_number in sequence_service.c).
 *
 * Threads: event loops find definitions in the cache (svc->lock) and park
 * on a read when a name is unknown; creates and lists are parked jobs
 * (src/base/jobs.h). The control thread runs one job or refresh at a time:
 *   create  acreate the sequence ({"max":0}; there already: fine), aget the
 *           table, aset_version it with the new line (acreate when missing);
 *           a lost race (bad version, exists) reads and writes again;
 *   read    aget the table into the cache.
 * Time zones are read from Debian's tzdata files (/usr/share/zoneinfo) on
 * first use by an event loop and kept for the process's life (zlock).
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
#include "sequence_tz.h"

#define ZONEINFO_DIR "/usr/share/zoneinfo/"
#define ZONE_FILE_MAX (1 << 17)

/* A time zone read from its file; a list, never freed while the service runs. */
struct seq_zone {
    struct seq_zone *next;
    char name[SEQUENCE_NUMBERING_TZ_MAX];
    int ok; /* 0: no readable file (remembered, so a bad name costs one read) */
    struct sequence_tz tz;
};

void sequence_service_numbering_init(struct sequence_service *svc) {
    struct seq_numberings *t = &svc->numberings;
    t->read_ms = -1;
    t->running = -1;
    t->version = -1;
    t->jobs =
        (struct leaf_jobs){&svc->lock, t->slots, SEQ_NUMBERING_JOBS, sizeof(t->slots[0]), NULL};
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
        log_warn("numbering", "open(%s) failed: %s", path, strerror(errno));
        return;
    }
    uint8_t *buf = malloc(ZONE_FILE_MAX);
    size_t n = buf ? fread(buf, 1, ZONE_FILE_MAX, f) : 0;
    fclose(f);
    z->ok = n > 0 && sequence_tz_parse(&z->tz, buf, n) == LEAF_OK;
    if (!z->ok) {
        log_warn("numbering", "%s is not a TZif file of version 2 or later", path);
    } else {
        int32_t off = sequence_tz_offset(&z->tz, clock_wall_ms() / 1000);
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
    struct seq_zone *z = t->zones;
    while (z != NULL && strcmp(z->name, d->time_zone) != 0) {
        z = z->next;
    }
    if (z == NULL && (z = calloc(1, sizeof(*z))) != NULL) {
        snprintf(z->name, sizeof(z->name), "%s", d->time_zone);
        zone_read(z); /* a few KB of a local file, once per zone and process */
        z->next = t->zones;
        t->zones = z;
    }
    int ok = z != NULL && z->ok;
    if (ok) {
        *day = sequence_tz_local_day(&z->tz, wall_ms);
        *period = sequence_numbering_period_of(d, *day);
    }
    pthread_mutex_unlock(&t->zlock);
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
    return rc;
}

/* A job's step for the request (create or list), lock taken here. */
static leaf_status_t job_step(struct sequence_service *svc, const struct sequence_numbering *d,
                              int *ticket, struct leaf_wait *w, struct sequence_numbering *out,
                              int cap, int *n) {
    struct seq_numberings *t = &svc->numberings;
    struct leaf_job *j;
    pthread_mutex_lock(&svc->lock);
    int fresh = *ticket < 0;
    leaf_status_t rc = leaf_jobs_step(&t->jobs, ticket, w, &j);
    if (fresh && j != NULL) {
        struct seq_numbering_job *s = (struct seq_numbering_job *)j;
        s->create = d != NULL;
        s->tries = 0;
        if (d != NULL) {
            s->def = *d;
        }
    } else if (rc != LEAF_EAGAIN && j != NULL) {
        if (out != NULL && rc == LEAF_OK) {
            *n = t->n < cap ? t->n : cap;
            memcpy(out, t->defs, (size_t)*n * sizeof(*out));
        }
        leaf_jobs_release(&t->jobs, j);
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
    return job_step(svc, d, ticket, w, NULL, 0, NULL);
}

leaf_status_t sequence_service_numbering_list(struct sequence_service *svc,
                                              struct sequence_numbering *out, int cap, int *n,
                                              int *ticket, struct leaf_wait *w) {
    *n = 0;
    return job_step(svc, NULL, ticket, w, out, cap, n);
}

/* ---- the control thread ------------------------------------------------------------------- */

/* Ends the running job (or refresh) with rc; wakes the readers waiting for the table. */
static void job_end(struct sequence_service *svc, leaf_status_t rc) {
    struct seq_numberings *t = &svc->numberings;
    pthread_mutex_lock(&svc->lock);
    if (t->running >= 0) {
        leaf_jobs_finish(&t->jobs, &t->slots[t->running].job, rc);
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
    char path[SEQ_PATH_MAX], data[SEQUENCE_RECORD_MAX_LEN];
    if (t->running != -1) {
        return;
    }
    pthread_mutex_lock(&svc->lock);
    int i = leaf_jobs_next(&t->jobs);
    int refresh = i < 0 && t->refresh;
    t->refresh = 0;
    t->running = i >= 0 ? i : refresh ? -2 : -1;
    int create = i >= 0 && t->slots[i].create;
    if (create) {
        snprintf(path, sizeof(path), "%s/" SEQ_NUMBERING_SEQ_PREFIX "%s", svc->dir_seqs,
                 t->slots[i].def.name);
    }
    pthread_mutex_unlock(&svc->lock);
    if (create) {
        size_t len = sequence_record_format_max(data, sizeof(data), 0);
        if (zk_session_acreate2(&svc->zsub, OP_NUMBERING_SEQ, 0, path, data, len,
                                ZK_MODE_PERSISTENT) != LEAF_OK) {
            job_end(svc, LEAF_EUNAVAIL);
        }
    } else if (t->running != -1) {
        read_table(svc);
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

/* A create: the table with the new line, written conditionally (or created). */
static void write_table(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    struct seq_numbering_job *j = &t->slots[t->running];
    char line[SEQUENCE_NUMBERING_LINE_MAX];
    if (find_def(t, j->def.name, strlen(j->def.name)) != NULL) {
        job_end(svc, LEAF_EEXIST);
        return;
    }
    size_t add = sequence_numbering_format_line(&j->def, line, sizeof(line));
    size_t old = ev->result == ZK_RESULT_OK ? ev->len : 0;
    char *data = malloc(old + add);
    if (data == NULL || add == 0 || t->n >= SEQ_NUMBERINGS_MAX) {
        free(data);
        job_end(svc, LEAF_ENOMEM);
        return;
    }
    if (old > 0) {
        memcpy(data, ev->data, old);
    }
    memcpy(data + old, line, add);
    leaf_status_t rc = t->version >= 0
                           ? zk_session_aset_version(&svc->zsub, OP_NUMBERING_WRITE, 0, t->path,
                                                     data, old + add, t->version)
                           : zk_session_acreate2(&svc->zsub, OP_NUMBERING_WRITE, 0, t->path, data,
                                                 old + add, ZK_MODE_PERSISTENT);
    free(data);
    if (rc != LEAF_OK) {
        job_end(svc, LEAF_EUNAVAIL);
    }
}

void sequence_service_numbering_on_zk(struct sequence_service *svc, const struct zk_event *ev) {
    struct seq_numberings *t = &svc->numberings;
    if (t->running == -1) {
        return; /* a job the session's expiry already ended */
    }
    int create = t->running >= 0 && t->slots[t->running].create;
    switch (ev->op) {
    case OP_NUMBERING_SEQ:
        if (ev->result != ZK_RESULT_OK && ev->result != ZK_RESULT_EXISTS) {
            log_warn("numbering", "creating the sequence of numbering %s failed (%s)",
                     t->slots[t->running].def.name, leaf_strstatus(ev->rc));
            job_end(svc, LEAF_EUNAVAIL);
            return;
        }
        read_table(svc);
        return;
    case OP_NUMBERING_READ:
        if (!take_table(svc, ev)) {
            job_end(svc, LEAF_EUNAVAIL);
        } else if (create) {
            write_table(svc, ev);
        } else {
            job_end(svc, LEAF_OK);
        }
        return;
    case OP_NUMBERING_WRITE:
        if (ev->result == ZK_RESULT_OK) {
            job_end(svc, LEAF_OK);
            pthread_mutex_lock(&svc->lock);
            t->refresh = 1; /* the cache learns the new line from ZooKeeper */
            pthread_mutex_unlock(&svc->lock);
        } else if ((ev->result == ZK_RESULT_BADVERSION || ev->result == ZK_RESULT_EXISTS) &&
                   ++t->slots[t->running].tries < SEQ_NUMBERING_TRIES) {
            read_table(svc); /* another node wrote the table first: again on its version */
        } else {
            log_warn("numbering", "writing %s failed (%s)", t->path, leaf_strstatus(ev->rc));
            job_end(svc, LEAF_EUNAVAIL);
        }
        return;
    default: return;
    }
}

void sequence_service_numbering_expired(struct sequence_service *svc) {
    if (svc->numberings.running != -1) {
        job_end(svc, LEAF_EUNAVAIL);
    }
}
