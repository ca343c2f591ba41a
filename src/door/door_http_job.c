/*
 * An HTTP request that waits for one database job (door_http_job.h): the
 * admin API's and the /db page's.
 */
#include "door_http_job.h"

#include "door_ctx.h"
#include "door_http.h"

leaf_status_t door_http_job_wait(struct http_request *req, door_http_job_answer_fn answer,
                                 int64_t extra_ms) {
    const struct door_ctx *ctx = door_ctx(req);
    struct segment_db_job *job = NULL;
    leaf_status_t rc = segment_service_admin_take(ctx->segment, req->wait, &job);
    if (rc == LEAF_OK) {
        answer(req, job);
        segment_db_job_free(job);
        return LEAF_OK;
    }
    int64_t left =
        ctx->cfg->db_timeout_ms + extra_ms - (http_request_now(req) - req->first_seen_ms);
    if (rc == LEAF_EAGAIN && left > 0) {
        req->retry_ms = left; /* woken sooner when the result is in */
        return LEAF_EAGAIN;
    }
    leaf_wait_cancel(req->wait);
    door_http_error(req, IDS_E_DATABASE_UNAVAILABLE, "the database did not answer in time");
    return LEAF_OK;
}

/* First call: queues the job for this request and parks it. */
leaf_status_t door_http_job_start(struct http_request *req, struct segment_db_job *job) {
    const struct door_ctx *ctx = door_ctx(req);
    if (job == NULL) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory");
        return LEAF_OK;
    }
    if (segment_service_admin_begin(ctx->segment, job, req->wait) != LEAF_OK) {
        segment_db_job_free(job);
        door_http_error(req, DOOR_E_BUSY, "too many admin requests in flight");
        return LEAF_OK;
    }
    req->retry_ms = ctx->cfg->db_timeout_ms + DOOR_HTTP_JOB_EXTRA_MS;
    return LEAF_EAGAIN;
}
