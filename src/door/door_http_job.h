#ifndef LEAF_DOOR_HTTP_JOB_H
#define LEAF_DOOR_HTTP_JOB_H

/*
 * An HTTP request that waits for one database job (door_http_job.c): the
 * admin API's (src/api/api_admin.c) and the /db page's
 * (src/pages/page_segment.c). start() queues the job and parks the request
 * (LEAF_EAGAIN); wait(), on every later call, answers through `answer` once
 * the job is back, or 503 after leafd.db.timeout.ms + extra_ms.
 */
#include <stdint.h>

#include "http_conn.h"
#include "segment_service.h"

/* The wait on top of leafd.db.timeout.ms that the admin API allows. */
#define DOOR_HTTP_JOB_EXTRA_MS 1000

typedef void (*door_http_job_answer_fn)(struct http_request *req, struct segment_db_job *job);
leaf_status_t door_http_job_start(struct http_request *req, struct segment_db_job *job);
leaf_status_t door_http_job_wait(struct http_request *req, door_http_job_answer_fn answer,
                                 int64_t extra_ms);

#endif
