#ifndef LEAF_SEGMENT_TAGS_H
#define LEAF_SEGMENT_TAGS_H

/*
 * The tag table: business tag -> its state and double buffer, as pure
 * bookkeeping (a chained hash map and the refresh rules). No libuv or MySQL
 * header; the locks are only carried here, never taken.
 *
 * Locking, done by src/node/segment/segment_service.c:
 * - the map (slots, chains, count, gen) is guarded by the service's rwlock:
 *   read-locked to look a tag up and while using it, write-locked to add or
 *   remove tags and for segment_tags_sync_known();
 * - a tag's fields below `lock` are guarded by that mutex, taken with the
 *   rwlock read-locked; under the write lock no tag lock is needed.
 * So a tag pointer is valid only while the rwlock is held.
 *
 * Refresh: every 30 s the service reads all rows of leaf_alloc into a known
 * set (segment_known.h) with generation g = segment_tags_next_gen();
 * segment_tags_sync_known() activates the tags the set holds, then marks
 * every active tag that the table did not show, and that was not found by a
 * lookup since g was handed out, as absent (its buffers are dropped: a
 * deleted tag stops being served), and frees inactive tags that no request
 * is waiting on (the caller holds the wait lock).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "leaf_wait.h"
#include "segment_buffer.h"
#include "segment_known.h"
#include "validate.h"

enum segment_tag_state {
    SEGMENT_TAG_PENDING, /* never looked up yet; the first lookup is in flight */
    SEGMENT_TAG_ACTIVE,  /* in the table: served */
    SEGMENT_TAG_ABSENT,  /* the last lookup or refresh did not find it */
};

struct segment_tag {
    char name[VALIDATE_TAG_MAX + 1];
    size_t name_len;
    uint64_t hash;
    struct segment_tag *chain; /* guarded by the map's rwlock */

    pthread_mutex_t lock; /* guards everything below */
    enum segment_tag_state state;
    uint64_t epoch;            /* changes when the tag (re)enters or leaves the table */
    uint64_t seen_gen;         /* refresh generation that last showed it */
    int lookup_in_flight;      /* at most one lookup per tag */
    int64_t lookup_started_ms; /* monotonic ms the last lookup was sent */
    int64_t db_failed_ms; /* monotonic ms a fetch or lookup last failed for want of the database */
    struct segment_buffer buf;
    uint64_t fetch_errors;
    /* Requests parked until this tag changes; guarded by the service's wait
     * lock (not by `lock`), so that a closing connection can leave the list
     * without the map's locks. */
    struct leaf_wait_list waiters;
};

struct segment_tags {
    struct segment_tag **slots;
    size_t nslots;
    size_t count;
    uint64_t gen;        /* refresh generation last handed out */
    uint64_t next_epoch; /* epochs are unique across the map's life */
};

leaf_status_t segment_tags_init(struct segment_tags *m);
void segment_tags_free(struct segment_tags *m);

struct segment_tag *segment_tags_find(const struct segment_tags *m, const char *name, size_t len);

/* Finds or adds (state PENDING); NULL only when out of memory. *created says which. */
struct segment_tag *segment_tags_add(struct segment_tags *m, const char *name, size_t len,
                                     int *created);

/* A lookup (or create) found the row: the tag is active with the table's step. */
void segment_tags_activate(struct segment_tags *m, struct segment_tag *t, int64_t step);

/* The tag is not in the table: absent, buffers dropped. */
void segment_tags_deactivate(struct segment_tags *m, struct segment_tag *t);

/* Starts a refresh; returns its generation. */
uint64_t segment_tags_next_gen(struct segment_tags *m);

/*
 * A refresh as a known set (segment_known.h): every tag in the map that the
 * set holds is active with the set's step; then every active tag not seen
 * since the set's gen becomes absent. Returns how many did. Costs the tags
 * in the map, not the rows of the table.
 */
size_t segment_tags_sync_known(struct segment_tags *m, const struct segment_known *k);

/* Unlinks and frees an inactive tag nothing is out or waiting for: 1, else 0 (kept). */
int segment_tags_remove(struct segment_tags *m, struct segment_tag *t);

#endif
