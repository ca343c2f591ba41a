/*
 * The admin API (POST /api/leaf, PUT /api/leaf/init/cache, PUT /api/leaf/step)
 * and the /db monitor page, all behind the admin rule, which the route table checks
 * (src/door/door_http_auth.c).
 *
 * Each needs one database round trip: the first call checks the request and
 * queues a job (segment_service_admin_begin), parking the request on it;
 * when the result is in, the request is woken and answered. Tags are checked
 * before anything reaches the database.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "door_http.h"
#include "door_http_job.h"
#include "log.h"
#include "segment_request.h"

static int admin_segment_enabled(struct http_request *req) {
    if (!door_ctx(req)->cfg->segment_enable) {
        door_http_error(req, IDS_E_SEGMENT_DISABLED, "segment mode is disabled on this node");
        return 0;
    }
    return 1;
}

static void admin_db_error(struct http_request *req, struct segment_db_job *job) {
    if (job->rc == LEAF_EUNAVAIL) {
        door_http_error(req, IDS_E_DATABASE_UNAVAILABLE, "the database is unavailable");
    } else if (job->rc == LEAF_ENOTFOUND) {
        door_http_error(req, IDS_E_UNKNOWN_TAG, "no such biz_tag in leaf_alloc");
    } else if (job->rc == LEAF_ERANGE) {
        /* The value, not the database: biz_tag is checked before, so in an INSERT the
         * only free text is the description (a latin1 table cannot hold "订单"). */
        log_debug("segment", "leaf_alloc cannot store a value for tag '%s': %s", job->tag,
                  job->error);
        door_http_error(req, DOOR_E_BAD_DESCRIPTION,
                        "description: the leaf_alloc table cannot store this text (its "
                        "character set or size; create the table utf8mb4 as "
                        "conf/leaf_alloc.sql does)");
    } else {
        log_error("segment", "admin operation on tag '%s' failed: %s", job->tag, job->error);
        door_http_error(req, DOOR_E_DATABASE_ERROR, "the database refused the operation");
    }
}

/* Later calls: answers once the job is back, or 503 when it takes too long. */
static leaf_status_t admin_wait(struct http_request *req, door_http_job_answer_fn answer) {
    return door_http_job_wait(req, answer, DOOR_HTTP_JOB_EXTRA_MS);
}

/* Checks the caller and parses the body; NULL when an error response was written. */
static struct segment_db_job *admin_job(struct http_request *req, enum segment_request_kind kind,
                                        enum segment_db_op op, struct segment_request *r) {
    const char *code;
    char msg[160];
    if (!admin_segment_enabled(req)) {
        return NULL;
    }
    if (segment_request_parse(kind, req->body, req->body_len, r, &code, msg, sizeof(msg)) !=
        LEAF_OK) {
        door_http_error_code(req, code, msg);
        return NULL;
    }
    /* The route table checked the route's need; a create's key is in the body. */
    if (kind == SEGMENT_REQ_CREATE &&
        !door_http_auth_key(req, AUTH_NEED_CREATE, IDS_SEGMENT, r->biz_tag, strlen(r->biz_tag))) {
        return NULL;
    }
    struct segment_db_job *job = segment_db_job_new(op, r->biz_tag, strlen(r->biz_tag));
    if (job == NULL) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    job->step = r->step;
    job->max_id = r->max_id;
    job->has_description = r->has_description;
    snprintf(job->description, sizeof(job->description), "%s", r->description);
    return job;
}

static void answer_create(struct http_request *req, struct segment_db_job *job) {
    if (job->rc == LEAF_EEXIST && job->folded) {
        /* Not tag_exists: this tag does not. Which tag the collation matched is not said
         * (another tenant's, perhaps); docs/SECURITY.md, "Tenants". */
        door_http_error(req, DOOR_E_TAG_CONFLICT,
                        "biz_tag cannot be created: leaf_alloc's biz_tag collation ignores "
                        "case and matches another tag (give the column a binary collation)");
        return;
    }
    if (job->rc == LEAF_EEXIST) {
        door_http_error(req, DOOR_E_TAG_EXISTS, "biz_tag already exists in leaf_alloc");
        return;
    }
    if (job->rc != LEAF_OK) {
        admin_db_error(req, job);
        return;
    }
    struct sbuf b = SBUF_INIT;
    sbuf_printf(
        &b, "{\"biz_tag\":\"%s\",\"max_id\":\"%" PRId64 "\",\"step\":%" PRId64 ",\"description\":",
        job->tag, job->max_id, job->step);
    if (job->has_description) {
        sbuf_json_str(&b, job->description, strlen(job->description));
    } else {
        sbuf_puts(&b, "null");
    }
    sbuf_putc(&b, '}');
    door_http_respond_sbuf(req, 201, "application/json", &b);
    sbuf_free(&b);
}

/*
 * The shape of every admin endpoint: parse, check and queue the database job
 * on the first call; on later calls (LEAF_EAGAIN retries) answer once it is done.
 */
static leaf_status_t admin_handle(struct http_request *req, enum segment_request_kind kind,
                                  enum segment_db_op op, door_http_job_answer_fn answer) {
    struct segment_request r;
    if (req->retries > 0) {
        return admin_wait(req, answer);
    }
    struct segment_db_job *job = admin_job(req, kind, op, &r);
    return job == NULL ? LEAF_OK : door_http_job_start(req, job);
}

leaf_status_t api_admin_create(struct http_request *req, enum ids_mode mode) {
    return admin_handle(req, SEGMENT_REQ_CREATE, SEGMENT_DB_CREATE, answer_create);
}

static void answer_init_cache(struct http_request *req, struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        admin_db_error(req, job);
        return;
    }
    req->ticket = 1; /* found: api_admin_init_cache() goes on to fetch the first range */
}

/*
 * The tag's row is known: fetch its first range before answering, so that
 * the first ID does not wait for the database (docs/IDENTITY.md).
 */
static leaf_status_t init_cache_prefetch(struct http_request *req) {
    const struct door_ctx *ctx = door_ctx(req);
    struct segment_request r;
    const char *code;
    char msg[160];
    if (segment_request_parse(SEGMENT_REQ_TAG, req->body, req->body_len, &r, &code, msg,
                              sizeof(msg)) != LEAF_OK) {
        door_http_error_code(req, code, msg);
        return LEAF_OK;
    }
    int64_t max_id = 0, step = 0;
    leaf_status_t rc = segment_service_prefetch(ctx->segment, r.biz_tag, strlen(r.biz_tag),
                                                req->first_seen_ms, req->wait, &max_id, &step);
    int64_t left = ctx->cfg->db_timeout_ms + DOOR_HTTP_JOB_EXTRA_MS -
                   (http_request_now(req) - req->first_seen_ms);
    if (rc == LEAF_EAGAIN && left > 0) {
        req->retry_ms = left; /* woken sooner when the range is in */
        return LEAF_EAGAIN;
    }
    if (rc == LEAF_ENOTFOUND) {
        door_http_error(req, IDS_E_UNKNOWN_TAG, "biz_tag is not in leaf_alloc");
        return LEAF_OK;
    }
    if (rc != LEAF_OK) {
        leaf_wait_cancel(req->wait);
        door_http_error(req, IDS_E_DATABASE_UNAVAILABLE,
                        "the first range of the tag could not be fetched in time");
        return LEAF_OK;
    }
    struct sbuf b = SBUF_INIT;
    sbuf_printf(
        &b, "{\"biz_tag\":\"%s\",\"step\":%" PRId64 ",\"max_id\":\"%" PRId64 "\",\"loaded\":true}",
        r.biz_tag, step, max_id);
    door_http_respond_sbuf(req, 200, "application/json", &b);
    sbuf_free(&b);
    return LEAF_OK;
}

leaf_status_t api_admin_init_cache(struct http_request *req, enum ids_mode mode) {
    if (req->ticket != 1) {
        leaf_status_t rc = admin_handle(req, SEGMENT_REQ_TAG, SEGMENT_DB_LOOKUP, answer_init_cache);
        if (rc != LEAF_OK || req->ticket != 1) {
            return rc;
        }
    }
    return init_cache_prefetch(req);
}

static void answer_step(struct http_request *req, struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        admin_db_error(req, job);
        return;
    }
    char body[512];
    int n = snprintf(body, sizeof(body), "{\"biz_tag\":\"%s\",\"step\":%" PRId64 "}", job->tag,
                     job->step);
    http_respond(req, 200, "application/json", body, (size_t)n);
}

leaf_status_t api_admin_step(struct http_request *req, enum ids_mode mode) {
    return admin_handle(req, SEGMENT_REQ_STEP, SEGMENT_DB_SET_STEP, answer_step);
}
