#ifndef LEAF_API_ADMIN_H
#define LEAF_API_ADMIN_H

/*
 * Admin requests wait for one database job (api_admin.c): start() queues
 * it and parks the request (LEAF_EAGAIN); wait(), on every later call,
 * answers through `answer` once the job is back, or 503 after
 * leafd.db.timeout.ms + 1 s.
 */
#include <stdint.h>

#include "http_proto.h"
#include "segment_service.h"

typedef void (*api_admin_answer_fn)(struct http_request *req, struct segment_db_job *job);
leaf_status_t api_admin_start(struct http_request *req, struct segment_db_job *job);
/* The same with extra_ms instead of 1 s on top of leafd.db.timeout.ms (a long read: /db). */
leaf_status_t api_admin_wait_for(struct http_request *req, api_admin_answer_fn answer,
                                 int64_t extra_ms);

#endif
