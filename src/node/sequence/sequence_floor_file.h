#ifndef LEAF_SEQUENCE_FLOOR_FILE_H
#define LEAF_SEQUENCE_FLOOR_FILE_H

/*
 * The local floors' file of the sequence service: its state (embedded in
 * struct sequence_service) and its calls, private to src/node/sequence.
 * Layer: the node (src/node/sequence), the file I/O over the pure format of
 * sequence/sequence_floor.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "status.h"

struct sequence_service;
struct seq_entry;

#define SEQ_FLOOR_FLUSH_MS 200 /* changed floors are appended this often */

/*
 * The local floors' file (sequence_floor_file.c, sequence/sequence_floor.h).
 * The list is guarded by svc->lock; everything else belongs to the control
 * thread.
 */
struct seq_floors {
    int fd;           /* the log, open for appending; -1 when none */
    int need_compact; /* rewrite it whole at the next flush (new, foreign, torn or failed) */
    int timer_on;
    uint64_t lines; /* lines in the file */
    int64_t error_logged_ms;
    uv_timer_t timer;
    char path[600];
    struct seq_entry **list; /* guarded by lock: entries whose floor changed */
    size_t n, cap;
};

/* sequence_floor_file.c (control thread, except mark: lock held) */
leaf_status_t sequence_floor_file_load(struct sequence_service *svc);
void sequence_floor_file_start(struct sequence_service *svc);
void sequence_floor_file_mark(struct sequence_service *svc, struct seq_entry *e);
void sequence_floor_file_stop(struct sequence_service *svc);
void sequence_floor_file_free(struct sequence_service *svc);

#endif
