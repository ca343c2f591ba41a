#ifndef LEAF_SEGMENT_SERVICE_H
#define LEAF_SEGMENT_SERVICE_H

/*
 * Segment IDs, wired together: the tag table (segment/segment_tags.h) with
 * a double buffer per tag, the database thread (segment/segment_db.h), and
 * the control loop that installs what the database returns.
 *
 * Threads and ownership:
 * - HTTP loop threads call segment_service_get() and the admin functions.
 *   They read the tag table under its rwlock (read side) and a tag's state
 *   under the tag's mutex, and queue database jobs; they never wait on the
 *   database: "not yet" is LEAF_EAGAIN, retried by the HTTP layer.
 * - The database thread runs jobs and hands every finished job to the
 *   control loop through a mutex-protected list and uv_async_send.
 * - The control loop (main thread) applies results: installs ranges,
 *   activates and deactivates tags (under the rwlock's write side), completes
 *   admin jobs, and refreshes the tag table every 30 s (contract: a deleted
 *   tag stops being served within 60 s).
 * Times are monotonic milliseconds on libuv's clock, the clock of
 * http_request.first_seen_ms.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "segment_buffer.h"
#include "segment_db.h"
#include "config.h"
#include "status.h"

struct uv_loop_s;

/* Starts the database thread and the control-loop handles (no-op when segment is off). */
leaf_status_t segment_service_start(const struct leaf_config *cfg, struct uv_loop_s *loop);

/* Stops the database thread and frees everything; after the HTTP loops have ended. */
void segment_service_stop(void);

/*
 * Issues count ascending IDs of tag into ids. LEAF_OK; LEAF_EAGAIN (a range
 * or the tag's lookup is in flight: ask again shortly); LEAF_ENOTFOUND (not
 * in leaf_alloc, as looked up after first_seen_ms); LEAF_EUNAVAIL (the
 * database failed after first_seen_ms and nothing is buffered);
 * LEAF_ENOMEM (tag table full or out of memory).
 */
leaf_status_t segment_service_get(const char *tag, size_t len, int count, int64_t *ids,
                                  int64_t first_seen_ms);

/*
 * Admin jobs (create, init cache, set step, list rows), keyed by the HTTP
 * request that waits for them: begin() queues the job and keeps it under
 * `key`; poll() returns LEAF_EAGAIN until the control loop has applied the
 * result, then LEAF_OK and hands the job back (the caller frees it with
 * segment_db_job_free). A key reused by a new request (retries == 0) drops
 * the old, unanswered entry. LEAF_ENOMEM from begin() when too many are
 * waiting.
 */
leaf_status_t segment_service_admin_begin(const void *key, struct segment_db_job *job);
leaf_status_t segment_service_admin_poll(const void *key, struct segment_db_job **job);
/* The waiting request gave up; the job is freed once its result arrives. */
void segment_service_admin_abandon(const void *key);

/* Appends the "segment" member of /ready; returns 1 when segment IDs can be issued now. */
int segment_service_ready(char *buf, size_t cap, size_t *pos);

/* Appends segment metrics (Prometheus text); returns bytes written. */
size_t segment_service_metrics(char *buf, size_t cap);

/* A copy of one tag's state, for monitor pages. */
struct segment_tag_view {
    char name[VALIDATE_TAG_MAX + 1];
    int state; /* enum segment_tag_state */
    struct segment_buffer buf;
    uint64_t fetch_errors;
};

/* Calls fn with a copy of every tag's state (tags read-locked meanwhile). */
void segment_service_each(void (*fn)(const struct segment_tag_view *v, void *arg), void *arg);

/* Monotonic ms on the HTTP loops' clock. */
int64_t segment_service_now_ms(void);

#endif
