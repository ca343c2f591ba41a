/*
 * The local floors' file, {leafd.data.dir}/sequence-floors (the format and
 * its cost: sequence/sequence_floor.h). Loaded at start, before the
 * election; changed floors are appended by a timer of the control loop every
 * SEQ_FLOOR_FLUSH_MS (one write and one fdatasync per flush, never on a
 * request's path) and at a graceful stop. A crash loses at most the last
 * SEQ_FLOOR_FLUSH_MS of changes, which only matters if ZooKeeper is also
 * restored to an older copy in that moment.
 * Control thread; the list of changed entries is guarded by svc->lock.
 * Layer: the node (src/node/sequence), the file I/O over the pure format of
 * sequence/sequence_floor.c.
 */
#include "sequence_service_floor.h"

#include "sequence_service_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "file.h"
#include "log.h"
#include "sbuf.h"
#include "sequence_floor.h"

#define FLOOR_FILE_MAX (1024LL * 1024 * 1024)
#define FLOOR_ERROR_EVERY_MS 10000

static void floors_error(struct sequence_service *svc, const char *op, int err) {
    int64_t now = clock_mono_ms();
    if (svc->floors.error_logged_ms == 0 ||
        now - svc->floors.error_logged_ms >= FLOOR_ERROR_EVERY_MS) {
        svc->floors.error_logged_ms = now;
        log_error("sequence",
                  "%s(%s) failed: %s; the sequence floors are kept in memory and "
                  "written again later",
                  op, svc->floors.path, strerror(err));
    }
}

static void floors_open(struct sequence_service *svc) {
    if (svc->floors.fd < 0) {
        svc->floors.fd = open(svc->floors.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (svc->floors.fd < 0) {
            floors_error(svc, "open", errno);
            svc->floors.need_compact = 1;
        }
    }
}

/* Applies the file's lines to the table (the last line of a name wins). */
static void floors_apply(struct sequence_service *svc, const char *buf, size_t len) {
    size_t i = 0, bad = 0;
    char name[VALIDATE_TAG_MAX + 1];
    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t nlen;
        int64_t floor;
        if (i > 0 || !sequence_floor_header_ok(buf, end, svc->cfg->name)) {
            if (sequence_floor_parse(buf + i, end - i, name, &nlen, &floor) == LEAF_OK) {
                pthread_mutex_lock(&svc->lock);
                struct seq_entry *e = sequence_service_table_get(svc, name, nlen);
                if (e != NULL) {
                    sequence_state_set_floor(&e->st, floor);
                }
                pthread_mutex_unlock(&svc->lock);
            } else {
                bad++;
            }
        }
        svc->floors.lines++;
        i = end + 1;
    }
    if (bad > 0) {
        log_warn("sequence", "%s: %zu unreadable lines skipped (a write torn by a crash?)",
                 svc->floors.path, bad);
        svc->floors.need_compact = 1;
    }
}

leaf_status_t sequence_service_floor_load(struct sequence_service *svc) {
    struct seq_floors *f = &svc->floors;
    f->fd = -1;
    snprintf(f->path, sizeof(f->path), "%s/%s", svc->cfg->data_dir, SEQUENCE_FLOOR_FILE);
    char *buf = NULL;
    size_t len = 0;
    leaf_status_t rc = file_read_all("sequence", f->path, (size_t)FLOOR_FILE_MAX, &buf, &len);
    if (rc == LEAF_ENOTFOUND) {
        f->need_compact = 1; /* writes the header */
        return LEAF_OK;
    }
    if (rc != LEAF_OK) {
        return rc;
    }
    const char *nl = memchr(buf, '\n', len);
    if (!sequence_floor_header_ok(buf, nl ? (size_t)(nl - buf) : len, svc->cfg->name)) {
        log_warn("sequence", "%s is not this cluster's (%s) file of sequence floors; not using it",
                 f->path, svc->cfg->name);
        f->need_compact = 1;
    } else {
        floors_apply(svc, buf, len);
        if (len > 0 && buf[len - 1] != '\n') {
            f->need_compact = 1; /* a torn last line: appending after it would tear the next */
        }
        pthread_mutex_lock(&svc->lock);
        size_t n = svc->count;
        pthread_mutex_unlock(&svc->lock);
        log_info("sequence", "%s: floors of %zu sequences loaded", f->path, n);
    }
    free(buf);
    return LEAF_OK;
}

void sequence_service_floor_mark(struct sequence_service *svc, struct seq_entry *e) {
    struct seq_floors *f = &svc->floors;
    e->st.floor_dirty = 0;
    if (e->floor_queued) {
        return;
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        struct seq_entry **a =
            realloc(f->list, cap * sizeof(struct seq_entry *)); /* NOLINT: pointer array */
        if (a == NULL) {
            f->need_compact = 1; /* the next flush writes every floor */
            return;
        }
        f->list = a;
        f->cap = cap;
    }
    f->list[f->n++] = e;
    e->floor_queued = 1;
}

/* Rewrites the file whole: the header and one line per sequence with a floor. */
static void floors_compact(struct sequence_service *svc) {
    struct seq_floors *f = &svc->floors;
    struct sbuf b = SBUF_INIT;
    char line[SEQUENCE_FLOOR_LINE_MAX];
    size_t n = sequence_floor_header(line, sizeof(line), svc->cfg->name);
    sbuf_append(&b, line, n);
    uint64_t lines = 1;
    pthread_mutex_lock(&svc->lock);
    for (size_t i = 0; i < svc->count; i++) {
        struct seq_entry *e = svc->by_idx[i];
        if (e->st.floor > 0) {
            n = sequence_floor_format(line, sizeof(line), e->name, e->len, e->st.floor);
            sbuf_append(&b, line, n);
            lines++;
        }
    }
    pthread_mutex_unlock(&svc->lock);
    char err[256];
    if (b.failed) {
        log_error("sequence", "out of memory writing %s; the sequence floors are kept in memory",
                  f->path);
    } else if (file_write_atomic_err(f->path, b.data, b.len, 0644, err, sizeof(err)) != LEAF_OK) {
        int64_t now = clock_mono_ms();
        if (f->error_logged_ms == 0 || now - f->error_logged_ms >= FLOOR_ERROR_EVERY_MS) {
            f->error_logged_ms = now;
            log_error("sequence",
                      "%s; the sequence floors are kept in memory and written again "
                      "later",
                      err);
        }
    } else {
        if (f->fd >= 0) {
            close(f->fd);
            f->fd = -1;
        }
        f->need_compact = 0;
        f->lines = lines;
        floors_open(svc);
    }
    sbuf_free(&b);
}

static void floor_file_flush(struct sequence_service *svc) {
    struct seq_floors *f = &svc->floors;
    if (f->path[0] == '\0') {
        return;
    }
    struct sbuf b = SBUF_INIT;
    char line[SEQUENCE_FLOOR_LINE_MAX];
    uint64_t k = 0;
    pthread_mutex_lock(&svc->lock);
    for (size_t i = 0; i < f->n; i++) {
        struct seq_entry *e = f->list[i];
        e->floor_queued = 0;
        size_t n = sequence_floor_format(line, sizeof(line), e->name, e->len, e->st.floor);
        sbuf_append(&b, line, n);
        k++;
    }
    f->n = 0;
    size_t live = svc->count;
    pthread_mutex_unlock(&svc->lock);
    if (f->need_compact || b.failed || sequence_floor_should_compact(f->lines + k, live)) {
        floors_compact(svc);
    } else if (k > 0) {
        floors_open(svc);
        if (f->fd >= 0) {
            ssize_t w = write(f->fd, b.data, b.len);
            if (w != (ssize_t)b.len || fdatasync(f->fd) != 0) {
                floors_error(svc, w != (ssize_t)b.len ? "write" : "fdatasync", errno);
                f->need_compact = 1; /* a short write may have torn a line: rewrite */
            } else {
                f->lines += k;
            }
        }
    }
    sbuf_free(&b);
}

static void floors_on_timer(uv_timer_t *t) {
    floor_file_flush(t->data);
}

void sequence_service_floor_start(struct sequence_service *svc) {
    uv_timer_init(svc->loop, &svc->floors.timer);
    svc->floors.timer.data = svc;
    uv_unref((uv_handle_t *)&svc->floors.timer);
    uv_timer_start(&svc->floors.timer, floors_on_timer, SEQ_FLOOR_FLUSH_MS, SEQ_FLOOR_FLUSH_MS);
    svc->floors.timer_on = 1;
}

void sequence_service_floor_stop(struct sequence_service *svc) {
    if (svc->floors.timer_on) {
        uv_timer_stop(&svc->floors.timer);
        svc->floors.timer_on = 0;
    }
    floor_file_flush(svc);
}

void sequence_service_floor_free(struct sequence_service *svc) {
    if (svc->floors.fd >= 0) {
        close(svc->floors.fd);
        svc->floors.fd = -1;
    }
    free(svc->floors.list);
    svc->floors.list = NULL;
}
