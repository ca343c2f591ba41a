#ifndef LEAF_SEGMENT_SERVICE_ZERO_WASTE_H
#define LEAF_SEGMENT_SERVICE_ZERO_WASTE_H

/*
 * Zero waste on a graceful stop (docs/id-shapes.md): every tag's unused
 * IDs go back to leaf_alloc, one conditional UPDATE per tag
 * (segment/segment_giveback.h), when no other node reserved a range of the
 * tag since. Called by segment_service_stop() after the event loops ended
 * and before the database thread stops.
 *
 * The bound: leafd.db.timeout.ms overall. The jobs carry that deadline (one
 * not started by then fails at once); at the deadline a statement still
 * running is aborted (segment_db_cancel). Failures only log: a tag whose
 * IDs were not given back has lost them, as every restart did before.
 *
 * What is not given back: a tag with a range fetch in flight at the stop
 * (its UPDATE ran first, so max_id has moved on and the condition fails),
 * and whatever was skipped or handed out already.
 *
 * Threads: the calling (main) thread, with no event loop running; the
 * database thread completes the jobs and wakes the caller.
 */
#include <pthread.h>
#include <stdint.h>

#include "segment_db.h"
#include "segment_tags.h"

struct segment_service_zero_waste_result {
    int tags;      /* tags with unused IDs: UPDATEs sent */
    int given;     /* matched: the IDs went back */
    int kept;      /* another node reserved since: nothing to give back */
    int failed;    /* database error, no connection, or out of time */
    int64_t ids;   /* IDs given back in all */
    int timed_out; /* the deadline passed with UPDATEs outstanding */
};

/*
 * Builds the UPDATEs from every active tag (tags_lock write-locked while
 * reading the buffers, which are then cleared), submits them and waits at
 * most timeout_ms for the answers.
 */
void segment_service_zero_waste_run(struct segment_db *db, struct segment_tags *tags,
                                    pthread_rwlock_t *tags_lock, int64_t timeout_ms,
                                    struct segment_service_zero_waste_result *out);

#endif
