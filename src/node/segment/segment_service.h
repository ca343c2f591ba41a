#ifndef LEAF_SEGMENT_SERVICE_H
#define LEAF_SEGMENT_SERVICE_H

/*
 * Segment IDs, wired together: the tag table (segment/segment_tags.h) with
 * a double buffer per tag, the database thread (segment/segment_db.h), and
 * the control loop that installs what the database returns.
 *
 * Threads and ownership:
 * - Event-loop threads call segment_service_get() and the admin functions.
 *   They read the tag table under its rwlock (read side) and a tag's state
 *   under the tag's mutex, and queue database jobs; they never wait on the
 *   database: "not yet" is LEAF_EAGAIN, and the request's wait is parked on
 *   the tag (or the admin job) until the answer arrives.
 * - The database thread runs jobs and hands every finished job to the
 *   control loop through a mutex-protected list and uv_async_send.
 * - The control loop (main thread) applies results: installs ranges,
 *   activates and deactivates tags (under the rwlock's write side), wakes
 *   exactly the requests parked on the tag or job it applied, and refreshes
 *   the tag table every 30 s (a deleted tag stops being served within 60 s).
 * Times are monotonic milliseconds (clock_mono_ms, libuv's clock).
 * The service outlives the event loops (main stops it after joining them),
 * as a producer of wake-ups must (leaf_wait.h).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "leaf_wait.h"
#include "segment_buffer.h"
#include "segment_db.h"
#include "segment_hosts.h"
#include "status.h"

struct uv_loop_s;
struct segment_service;

leaf_status_t segment_service_create(struct segment_service **out, const struct leaf_config *cfg,
                                     struct uv_loop_s *control_loop);
/* Starts the database thread and the control-loop handles (no-op when segment is off). */
leaf_status_t segment_service_start(struct segment_service *svc);
/* Stops the database thread and frees the tags; after the event loops have ended. A no-op
 * when segment is off, stopped already, or its start failed (which undoes itself). */
void segment_service_stop(struct segment_service *svc);
void segment_service_free(struct segment_service *svc);

/*
 * Issues count ascending IDs of tag into ids. LEAF_OK; LEAF_EAGAIN (a range
 * or the tag's lookup is in flight: w, when given, is parked on the tag and
 * woken when it changes); LEAF_ENOTFOUND (not in leaf_alloc, as looked up
 * after first_seen_ms); LEAF_EUNAVAIL (the database failed after
 * first_seen_ms and nothing is buffered); LEAF_ENOMEM (tag table full or out
 * of memory). A resumed request passes the same w again.
 * dense = 1: count consecutive IDs from one range (segment_buffer_take_dense);
 * only ids[0] is written, with the highest of them.
 * With several regions the IDs are the region's (segment_region.h: value *
 * count + region ID), so a dense block of more than one is not consecutive:
 * the caller refuses those. LEAF_ERANGE: an ID would pass INT64_MAX.
 */
leaf_status_t segment_service_get(struct segment_service *svc, const char *tag, size_t len,
                                  int count, int dense, int64_t *ids, int64_t first_seen_ms,
                                  struct leaf_wait *w);

/*
 * Admin jobs (create, init cache, set step, list rows): begin() queues the
 * job and parks w on it (LEAF_ENOMEM when too many are waiting; the job is
 * then still the caller's). When the result is in, w is woken; take()
 * returns LEAF_EAGAIN until then, then LEAF_OK and hands the job back (the
 * caller frees it with segment_db_job_free). A request that gives up, or
 * whose connection closes, cancels w (leaf_wait_cancel): the job is freed
 * when it comes back.
 */
/*
 * PUT /api/leaf/init/cache, after the tag's row was looked up: fetches the
 * tag's first range unless one is buffered. LEAF_OK with *max_id (the end of
 * the highest range reserved) once IDs are buffered; LEAF_EAGAIN while the
 * fetch runs (w is woken when it lands); LEAF_EUNAVAIL when a fetch failed
 * since first_seen_ms; LEAF_ENOTFOUND when the tag is not active. Any
 * event-loop thread.
 */
leaf_status_t segment_service_prefetch(struct segment_service *svc, const char *tag, size_t len,
                                       int64_t first_seen_ms, struct leaf_wait *w, int64_t *max_id,
                                       int64_t *step);

leaf_status_t segment_service_admin_begin(struct segment_service *svc, struct segment_db_job *job,
                                          struct leaf_wait *w);
leaf_status_t segment_service_admin_take(struct segment_service *svc, struct leaf_wait *w,
                                         struct segment_db_job **job);

/* A copy of one tag's state, for pages and metrics. */
struct segment_tag_view {
    char name[VALIDATE_TAG_MAX + 1];
    int state; /* enum segment_tag_state */
    struct segment_buffer buf;
    uint64_t fetch_errors;
};

/* Tags in leaf_alloc at the last refresh (the known set); only those requests used are in the
 * map that segment_service_each() walks (any thread). */
size_t segment_service_known(struct segment_service *svc);

/* Calls fn with a copy of every tag's state (tags read-locked meanwhile). */
void segment_service_each(struct segment_service *svc,
                          void (*fn)(const struct segment_tag_view *v, void *arg), void *arg);

#define SEGMENT_LATENCY_BUCKETS 9

/* Counters and state for /ready and /metrics (any thread). */
struct segment_service_stats {
    int enabled, ready, db_up;
    size_t tags_by_state[3]; /* pending, active, absent */
    size_t buffered;         /* active tags with IDs in memory */
    uint64_t db_errors, lookups, fetches, fetch_failures, refreshes;
    uint64_t lookups_refused; /* unknown tags over the lookup budget: 404 from cache or 503 */
    uint64_t latency_buckets[SEGMENT_LATENCY_BUCKETS + 1]; /* last: +Inf; not cumulative */
    int64_t latency_bounds_ms[SEGMENT_LATENCY_BUCKETS + 1];
    uint64_t latency_sum_us;
    struct segment_hosts db_hosts; /* the range connection's hosts: states, the one in use */
};
void segment_service_stats(struct segment_service *svc, struct segment_service_stats *st);

/* Monotonic ms (libuv's clock). */
int64_t segment_service_now_ms(void);

#endif
